/* kernel/parse.h — the kernel-language front end (interfaces.md): a lexer
 * with Python-style INDENT/DEDENT, a parser for `.tir` files (one
 * @T.prim_func or one @I.ir_module class), and entry points for parsing a
 * lone expression or lambda against a function's scope (used by the
 * schedule-script reader). Errors go to a DiagList with file:line:col. */
#ifndef VS_KERNEL_PARSE_H
#define VS_KERNEL_PARSE_H

#include "kernel/ir.h"

/* Parse a whole file. A single prim_func gives a Module with name NULL and
 * one function. Returns NULL when any error was reported. */
Module *parse_module(Arena *a, const Source *src, DiagList *d);

/* Read a whole file into an arena-owned Source; NULL + diagnostic if it
 * cannot be read. */
Source *source_read_file(Arena *a, const char *path, DiagList *d);
Source *source_from_string(Arena *a, const char *name, const char *text);

/* Names visible to a standalone expression: `nvars` extra variables (lambda
 * parameters) first, then the scalar/handle params and buffers of `func`
 * (parameters, match_buffer'ed and T.alloc_buffer'ed buffers); `func` may
 * be NULL. */
typedef struct ParseScope {
	const Func *func;
	int nvars;
	Var **vars;
	/* Buffers that shadow the function's buffers of the same name (e.g. a
	 * buffer under transformation, seen with its physical shape). */
	int nbufs;
	Buffer **bufs;
	/* The dtypes of a lambda's parameters, by position (an index map of
	 * a buffer with int64 extents takes int64 indices); int32 past
	 * nparam_dtypes. */
	int nparam_dtypes;
	const DType *param_dtypes;
} ParseScope;

/* Parse the expression in src->text[start, end) (spans stay relative to
 * the whole source, so diagnostics point into the original file). */
Expr *parse_expr_range(Arena *a, const Source *src, int start, int end,
		       const ParseScope *scope, DiagList *d);

/* A parsed `lambda p1, p2: [e1, e2, T.axis_separator, e3]` (or a lambda
 * whose body is a single expression: nbody = 1, bracketed = false). The
 * parameters are fresh int32 Vars. seps[k] is the number of body
 * expressions before the k-th T.axis_separator. */
typedef struct Lambda {
	int nparams;
	Var **params;
	int nbody;
	Expr **body;
	bool bracketed;
	int nseps;
	int *seps;
	Span span;
} Lambda;

Lambda *parse_lambda_range(Arena *a, const Source *src, int start, int end,
			   const ParseScope *scope, DiagList *d);

#endif
