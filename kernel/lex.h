/* kernel/lex.h — the tokenizer shared by the kernel-language parser and the
 * schedule-script reader: Python-style layout (NEWLINE, INDENT, DEDENT),
 * comments, bracket joining, numbers, strings and operators. Every token
 * carries its Span and its byte range in the Source. Internal to kernel/
 * and rewrites/script.c. */
#ifndef VS_KERNEL_LEX_H
#define VS_KERNEL_LEX_H

#include "kernel/ir.h"

typedef enum {
	TK_EOF,
	TK_NEWLINE, /* end of a logical line (outside brackets) */
	TK_INDENT,
	TK_DEDENT,
	TK_NAME,   /* text: identifier or keyword */
	TK_INT,    /* uval, int_overflow */
	TK_FLOAT,  /* fval */
	TK_STRING, /* str: decoded contents */
	TK_OP,     /* text: "+", "//", "(", "->", ... */
} TokKind;

typedef enum {
	LEX_FILE,  /* NEWLINE + INDENT/DEDENT: a .tir file */
	LEX_LINES, /* NEWLINE only, leading whitespace ignored: a .sched file */
	LEX_EXPR,  /* no layout tokens at all: a lone expression */
} LexMode;

typedef struct Token {
	TokKind kind;
	int start, len; /* byte range in src->text */
	Span span;
	const char *text; /* TK_NAME, TK_OP, TK_INT, TK_FLOAT: the spelling */
	uint64_t uval;
	bool int_overflow; /* TK_INT: the value does not fit 64 bits */
	double fval;
	const char *str; /* TK_STRING */
} Token;

typedef struct TokenList {
	int n; /* the last token is always TK_EOF */
	Token *toks;
} TokenList;

/* Tokenize src->text[start, end). Returns false (and reports one error)
 * on a malformed input or a range that is not inside the text; never
 * reads outside [start, end). */
bool lex_range(Arena *a, const Source *src, int start, int end, LexMode mode,
	       DiagList *d, TokenList *out);

/* True if t is an operator or name spelled exactly s. */
bool tok_is(const Token *t, const char *s);

/* A short description for "expected X, found Y" messages. */
const char *tok_describe(Arena *a, const Token *t);

/* A Python keyword that cannot name a variable or buffer. */
bool lex_is_keyword(const char *name);

#endif
