/* kernel/analysis/access.h — the accesses of one statement instance:
 * buffer, read or write, indices and guard in terms of fresh variables,
 * reduction updates; what the commutation, race and staging obligations
 * of the rewrites are built from. */
#ifndef VS_ANALYSIS_ACCESS_H
#define VS_ANALYSIS_ACCESS_H

#include "kernel/analysis/expr_query.h"
#include "kernel/analysis/stmt_ctx.h"

typedef struct Access {
	Buffer *buf;
	bool is_write;
	int nidx;
	Expr **idx;    /* in terms of the instance's (fresh) variables */
	Expr *guard;   /* conjunction of conditions under which it happens */
	Span span;
	const Expr *load;  /* the original load node (reads) */
	const Stmt *store; /* the store it belongs to (writes, and the loads
			      of a store's value/indices) */
	bool in_reduction; /* access to X of a reduction update X[e] op= v */
	BinOp red_op;
	Expr *value;	   /* writes: the stored value, instantiated (loads kept) */
	int nscope;
	Var **scope;	   /* fresh variables of the loops and lets around it,
			      outermost first */
} Access;

typedef struct AccessList {
	int n, cap;
	Access *items;
	int nvars;
	Var **vars; /* fresh inner-loop and let variables introduced */
	int nhyps;
	Expr **hyps; /* their ranges and let equations */
} AccessList;

/* Collect the accesses of one instance of s, after substituting `n`
 * variables (the instance's loop vars) by the given expressions. Inner
 * loops get fresh variables (recorded with their ranges). Loads from the
 * buffers in `volatile_bufs` (written somewhere in the region) are read in
 * an unknown state, so inside indices and guards they are replaced by
 * fresh unconstrained values: an over-approximation that keeps the check
 * sound. */
void an_collect_accesses(Arena *a, const Stmt *s, int n, Var **from,
			 Expr **to, int nvolatile, Buffer **volatile_bufs,
			 AccessList *out);

/* e with every load of a buffer in `bufs` (inside indices too) replaced
 * by a fresh unconstrained value: e read in a state where those buffers
 * may hold anything (written between the point the obligation's loads
 * describe and the point e is evaluated). NULL stays NULL. */
Expr *an_havoc_loads(Arena *a, Expr *e, int nbufs, Buffer **bufs);

/* Name the fresh inner-loop and let variables of one instance after the
 * instance ("k'" -> "k_p"), so a counterexample tells the two instances'
 * values apart. */
void an_name_instance(Arena *a, AccessList *l, const char *suffix);

/* Whether the cells x and y (n indices each) are different cells for
 * certain: in some dimension both indices have one integer dtype, read no
 * buffer, and differ by a non-zero constant smaller than half the dtype's
 * range (x - y as an affine form; wrapping keeps the difference modulo
 * 2^bits, so such indices never meet). False means "may be the same"
 * (nothing is decided); callers use it only to skip a search or a query
 * that could not succeed for those cells. */
bool an_cells_distinct(int n, Expr *const *x, Expr *const *y);

#endif
