/* kernel/obligation.h — proof obligations as data (semantics.md section 2),
 * their verdicts and counterexample models. Rewrites build Obligations in
 * the IR's own expression language; smt/ encodes and discharges them.
 * Neither side of this header talks to a solver. */
#ifndef VS_KERNEL_OBLIGATION_H
#define VS_KERNEL_OBLIGATION_H

#include "kernel/ir.h"

typedef enum { FLOAT_REAL, FLOAT_IEEE } FloatMode;

const char *float_mode_name(FloatMode m); /* "real" / "ieee" */

/* "for all vars with hyps: goal". Loads in hyps/goal read one arbitrary
 * state: each buffer's contents are an uninterpreted function of the index
 * tuple (buffers are told apart by Buffer identity). Every EX_UNDEF is a
 * fresh unconstrained value. Ranges of vars are ordinary hypotheses.
 * Scalar params and other free variables that occur in hyps/goal but are
 * not listed in vars are treated as universally quantified too. */
typedef struct Obligation {
	const char *kind;      /* "split.divisible", "reorder.no_conflict", ... */
	const char *statement; /* one line, for people */
	const char *rewrite;   /* "split(i, factor=4, tail=perfect)" */
	int nvars;
	Var **vars;
	int nhyps;
	Expr **hyps;
	Expr *goal;
	/* The goal's float equalities mean "the same value" (SMT `=`: -0.0
	 * and 0.0 differ, NaN equals NaN) rather than the program's IEEE
	 * `==`: set by no-op and simplification goals, where a store or a
	 * replacement must leave exactly the value that was there. */
	bool same_value;
	/* a reassociation obligation (*.reassociate): the operator and the
	 * dtype it is about (OP_COUNT otherwise) */
	BinOp red_op;
	DType red_dtype;
	Span origin;  /* the statement or loop the obligation comes from */
	int nrelated; /* accesses involved, for reports */
	Span *related;
	/* For reports only (never read by a proof): the two accesses whose
	 * meeting the goal rules out (commutation and race obligations), so
	 * a counterexample can name the cell they share. NULL if none. */
	struct ObligationClash *clash;
	/* Appended, for reports only (never read by a proof): the store a
	 * no-op goal is about (overcompute.no_op: the value it writes must
	 * be the one already there), so a counterexample can say what it
	 * would write, into which cell, over which value. NULL if none. */
	struct ObligationStore *store;
	/* Appended: names of hypotheses by origin ("hyp_assume_3_5"), for the
	 * proof log's named assertions. Keyed by the hypothesis itself (not
	 * its index), so filtering or reordering hyps keeps them right; a
	 * hypothesis without one is printed as hyp_K. */
	int nhypnames;
	const Expr **hypname_of;
	const char **hypnames;
} Obligation;

typedef struct ObligationClash {
	const Buffer *buf;
	int nidx;
	Expr **first, **second; /* index expressions of each instance */
	bool first_write, second_write;
	Span first_span, second_span;
} ObligationClash;

typedef struct ObligationStore {
	const Buffer *buf;
	int nidx;
	Expr **idx;   /* the cell, in the obligation's variables */
	Expr *value;  /* the value stored */
	Span span;
} ObligationStore;

typedef struct ObligationList {
	int n, cap;
	Obligation **items;
} ObligationList;

void oblist_push(Arena *a, ObligationList *l, Obligation *o);

/* Build an obligation; vars/hyps are copied. */
Obligation *obligation_new(Arena *a, const char *kind, const char *statement,
			   int nvars, Var **vars, int nhyps, Expr **hyps,
			   Expr *goal, Span origin);
void obligation_add_hyp(Arena *a, Obligation *o, Expr *h);
void obligation_add_var(Arena *a, Obligation *o, Var *v);
void obligation_add_related(Arena *a, Obligation *o, Span sp);
/* A hypothesis with its name (see hypnames); the name is copied. */
void obligation_add_named_hyp(Arena *a, Obligation *o, Expr *h, const char *name);
/* The name given to hypothesis h, or NULL. */
const char *obligation_hyp_name(const Obligation *o, const Expr *h);
/* dst takes src's hypothesis names (after obligation_new copied src's
 * hyps): a copy keeps saying where each hypothesis comes from. */
void obligation_copy_hyp_names(Arena *a, Obligation *dst, const Obligation *src);

typedef enum {
	VERDICT_PROVEN,	 /* hyps and not goal: unsat */
	VERDICT_REFUTED, /* sat: model is a counterexample */
	VERDICT_UNKNOWN, /* unknown, timeout, resource limit, unsupported */
} Verdict;

const char *verdict_name(Verdict v); /* "proven", "refuted", "not proven" */

/* One value in a model. Integers and bools in ival; floats in fval (for
 * ieee mode the exact value, -0.0 and NaN included); text is the value as
 * the solver printed it. */
typedef struct ModelValue {
	bool is_float;
	int64_t ival;
	double fval;
	const char *text;
} ModelValue;

typedef struct ModelVar {
	Var *var;
	ModelValue val;
} ModelVar;

typedef struct ModelCell {
	Buffer *buf;
	int nidx;
	int64_t *idx;
	ModelValue val;
} ModelCell;

typedef struct Model {
	int nvars;
	ModelVar *vars;
	int ncells;
	ModelCell *cells;
} Model;

typedef struct ObligationResult {
	Verdict verdict;
	const char *reason; /* for VERDICT_UNKNOWN: "timeout", "unsupported: ..." */
	double seconds;
	const char *smt2;   /* the self-contained SMT-LIB2 query, when the
			     * solver was asked for it (SmtOptions.want_text);
			     * the proof log prints it on demand otherwise */
	Model *model;       /* VERDICT_REFUTED only */
	bool cached;        /* answered from a cache of identical queries */
	bool from_disk;     /* ... the persistent one (SmtOptions.cache_dir) */
} ObligationResult;

#endif
