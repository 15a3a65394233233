/* smt/encode.h — internal to smt/: an Obligation as Z3 terms (encode.c).
 * Symbols get canonical names (sanitised source name + "_" + position of
 * first occurrence), so structurally identical obligations give identical
 * terms and query text: the terms' structural hash is the cache key
 * (qhash.h), the text is what the proof log records.
 * Every Z3 object here lives in a reference-counted context and is owned
 * by the SmtEncoding that made it (released by smt_encoding_free). */
#ifndef VS_SMT_ENCODE_H
#define VS_SMT_ENCODE_H

#include <z3.h>

#include "kernel/obligation.h"

typedef enum {
	SYM_VAR,    /* a free variable: var, value */
	SYM_BUFFER, /* a buffer's contents: buf, arity, decl (Int^arity -> elem) */
	SYM_UNDEF,  /* one occurrence of T.undef(): value */
	SYM_FUNC,   /* a math function on one dtype, uninterpreted: fn, dtype,
		     * arity, decl (semantics.md 9) */
} SymKind;

typedef struct SmtSym {
	SymKind kind;
	Var *var;
	Buffer *buf;
	int arity;
	DType dtype;	   /* the value's dtype (a buffer's element dtype) */
	MathFn fn;	   /* SYM_FUNC */
	bool occurs;	   /* SYM_VAR: referenced by a hypothesis or the goal */
	Z3_func_decl decl; /* every kind: the declared function or constant */
	Z3_ast value;	   /* SYM_VAR, SYM_UNDEF: the constant */
} SmtSym;

/* One distinct buffer read (after let substitution): the model reports
 * the cell it reads. */
typedef struct SmtLoad {
	int sym; /* index of the SYM_BUFFER */
	int nidx;
	Z3_ast *idx;
	Z3_ast app;
} SmtLoad;

typedef struct EncodeState EncodeState;

typedef struct SmtEncoding {
	Z3_context ctx;
	FloatMode fm;
	int nsyms;
	SmtSym *syms; /* vars of o->vars first, then by first occurrence */
	int nasserts;
	Z3_ast *asserts; /* range facts, the hypotheses, then (not goal) */
	int nloads;
	SmtLoad *loads;
	bool uses_fp;	/* IEEE floating-point terms */
	bool nonlinear; /* a product, division or modulo of two non-constants */
	int wraps;	/* wrap-arounds written: the ranges could not rule them out */
	int nranges;	/* asserts[0 .. nranges) are the range facts */
	char *error;	/* malloc'ed "unsupported: ..." when encoding failed */
	EncodeState *st;
	const Obligation *ob; /* the obligation encoded: the text names its hypotheses */
} SmtEncoding;

/* A reference-counted context whose error handler only records (into
 * thread-local state read by smt_z3_error), printing in SMT-LIB2 syntax. */
Z3_context smt_context_new(void);

/* The first Z3 error recorded on this thread since the last clear. */
bool smt_z3_error(const char **msg);
void smt_z3_error_clear(void);

/* Forget the terms enc holds in its context, for a context that is
 * deleted elsewhere (smt_encoding_free then frees only enc's memory). */
void smt_encoding_disown(SmtEncoding *e);

/* Encode o; false with enc->error set if a construct cannot be encoded.
 * Call smt_encoding_free in both cases. */
bool smt_encode(Z3_context c, const Obligation *o, FloatMode fm,
		SmtEncoding *enc);

/* The self-contained SMT-LIB2 query: (set-logic ALL), a declaration per
 * symbol, one assert per entry of asserts, (check-sat). malloc'ed; NULL
 * with enc->error set if Z3 failed to print. */
char *smt_encoding_text(SmtEncoding *enc);

void smt_encoding_free(SmtEncoding *enc);

/* Exact decimal fraction of a finite double, "p" or "p/q" (malloc'ed). */
char *smt_double_to_rational(double v);

#endif
