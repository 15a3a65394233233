/* kernel/analysis/region.h — bound inference for compute_at and
 * reverse_compute_at (seed 002): the box of a buffer that one iteration
 * of an attach loop accesses, as symbolic bounds in the loop variables
 * that stay fixed, from interval reasoning on the index expressions plus
 * the floor-division and modulo structure of split and fused loops; a
 * small linear simplifier; numeric bounds; enumeration of small spaces
 * (region_enum.c).
 * Nothing here is trusted: every bound it produces reaches the output only
 * through loop ranges and indices that the primitives' obligations prove. */
#ifndef VS_REWRITES_REGION_H
#define VS_REWRITES_REGION_H

#include "kernel/analysis/access.h"
#include "kernel/analysis/affine.h"
#include "kernel/obligation.h"

/* A variable the analysis knows: a loop (min, extent) or a let (value).
 * Fixed variables stay symbolic in bounds; relaxed ones range over their
 * domain (the inner loops of one attach-loop iteration). */
typedef struct RgVar {
	Var *var;
	bool relaxed;
	Expr *min, *extent; /* loops */
	Expr *value;	    /* lets (min == NULL) */
} RgVar;

typedef struct RgEnv {
	Arena *a;
	int nvars, capvars;
	RgVar *vars;
	int nguards, capguards;
	Expr **guards; /* comparison conjuncts in force (no loads) */
} RgEnv;

void rg_env_init(RgEnv *e, Arena *a);
void rg_push_loop(RgEnv *e, Var *v, Expr *min, Expr *extent, bool relaxed);
void rg_push_let(RgEnv *e, Var *v, Expr *value, bool relaxed);
/* Conjuncts of cond (or of `not cond`) that are comparisons without
 * loads; the rest (a conjunct reading a buffer, a disjunction) is
 * dropped, which only loses precision. */
void rg_push_guard(RgEnv *e, Expr *cond, bool negate);
void rg_pop(RgEnv *e, int nvars, int nguards);
const RgVar *rg_lookup(const RgEnv *e, const Var *v);

/* Exact algebraic rewriting to a linear normal form (terms over atoms
 * plus a constant) using the numeric ranges of the variables in env for
 * (c*q + r) // c = q and (c*q + r) % c = r when 0 <= r < c. The result
 * equals x wherever the variables lie in their ranges. */
Expr *rg_simplify(RgEnv *e, Expr *x);
Expr *rg_min(RgEnv *e, Expr *x, Expr *y); /* simplified T.min */
Expr *rg_max(RgEnv *e, Expr *x, Expr *y);
/* Structural equality with variables compared by identity
 * (affine_same_atom). */
bool rg_same(const Expr *x, const Expr *y);
/* True if x - y simplifies to the constant 0. */
bool rg_equal(RgEnv *e, Expr *x, Expr *y);

/* x = sum coef[i] * vars[i] + rest with rest free of vars (after
 * simplification); false when x is not of that form. */
bool rg_linear(RgEnv *e, Expr *x, int n, Var *const *vars, int64_t *coef, Expr **rest);

/* Numeric interval of an integer expression over the ranges of every
 * variable in env (fixed ones included); false when unknown. */
bool rg_num_bounds(RgEnv *e, const Expr *x, int64_t *lo, int64_t *hi);
/* An upper bound alone (enough for a size). */
bool rg_upper_bound(RgEnv *e, const Expr *x, int64_t *hi);

/* Symbolic inclusive bounds of x over the relaxed variables, in terms of
 * the fixed ones; guards of the form `E < K` clamp E. false when x has a
 * load or a construct without a rule. */
bool rg_sym_bounds(RgEnv *e, Expr *x, Expr **lo, Expr **hi);

/* True if x mentions a relaxed variable of env. */
bool rg_has_relaxed(const RgEnv *e, const Expr *x);

/* ---------- boxes of accesses ---------- */

typedef struct RgBox {
	int ndim;
	Expr **lo, **hi; /* inclusive; NULL in a dimension without a bound */
	int naccesses;
	bool approximate; /* a union of accesses with different bounds */
} RgBox;

/* The box of the accesses of `buf` in s (reads, or stores when `writes`)
 * with s's loops and lets relaxed; env's variables stay fixed. env is
 * restored on return. */
void rg_access_box(RgEnv *env, const Stmt *s, const Buffer *buf, bool writes,
		   RgBox *out);

/* ---------- enumeration of small iteration spaces ---------- */

/* Integer value of x with the variables given (n pairs); false on a load,
 * an unknown variable, division by zero or overflow. */
bool rg_eval(const Expr *x, int n, Var *const *vars, const int64_t *vals,
	     int64_t *out);

/* The maximum of exprs[k] over every iteration of the loops (outermost
 * first, ranges may use outer loops) with each iteration counted; false
 * if a range cannot be evaluated or there are more than `budget`
 * iterations. max_out has nexprs entries; an empty space gives 0. */
bool rg_max_over_loops(int nloops, Stmt *const *loops, int nexprs,
		       Expr *const *exprs, long budget, int64_t *max_out);

/* Exactness of a box (for the report note), by enumeration: for every
 * iteration of the loops, the distinct cells of `buf` that s reads (or
 * writes) against the box whose bounds are given (lo, hi inclusive, in
 * terms of the loops). *exact: they are the box everywhere. *tight: the
 * box is the bounding box of the cells everywhere (the tightest box).
 * *witness names the first iteration where the stronger property fails
 * that does not hold ("xo=1: the box holds 8 cells, 3 are read"), or
 * NULL. false when it cannot be decided within budget. */
bool rg_box_exact(Arena *a, int nloops, Stmt *const *loops, const Stmt *s,
		  const Buffer *buf, bool writes, Expr *const *lo,
		  Expr *const *hi, long budget, bool *exact, bool *tight,
		  char **witness);

#endif
