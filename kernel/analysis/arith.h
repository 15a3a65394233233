/* kernel/analysis/arith.h — the untrusted expression simplifier behind simplify,
 * hoist_expression and sequential_buffer_access: linear forms, floor
 * division and modulo by constants under known bounds, comparisons and
 * logic decided by intervals, float identities in real mode, and loads
 * replaced by the values facts give. It proposes; callers prove e == e'. */
#ifndef VS_REWRITES_ARITH_H
#define VS_REWRITES_ARITH_H

#include "kernel/analysis/facts.h"
#include "kernel/analysis/interval.h"

#define ARITH_MAX_VARS 64

/* Constant bounds of variables at a program point. */
typedef struct Bounds {
	int n;
	const Var *vars[ARITH_MAX_VARS];
	Interval range[ARITH_MAX_VARS];
} Bounds;

/* Bounds from the context of a statement: loop ranges, path conditions
 * and entry facts over scalars that compare a variable with a constant. */
void arith_bounds_at(const Func *f, const StmtCtx *sc, Bounds *b);
/* Tighten with one condition known to hold (conjunctions of var-vs-const
 * comparisons; anything else is ignored). */
void arith_bounds_assume(Bounds *b, const Expr *cond);

/* The rewrites a simplification made, each `from` (its operands already
 * simplified) -> `to`: together, by congruence and transitivity, they
 * make the input equal to the output, one small equality each. */
typedef struct ArithLog {
	int n, cap;
	Expr **from, **to;
} ArithLog;

typedef struct Simplifier {
	Arena *a;
	const Bounds *bounds;
	const FactSet *facts; /* value facts for loads, or NULL */
	FloatMode fm;
	bool changed; /* a rule fired */
	ArithLog *log; /* NULL: not logged */
} Simplifier;

/* The simplified expression (e itself when no rule fired). */
Expr *arith_simplify(Simplifier *s, Expr *e);

/* Constant interval of an integer expression under the bounds (the IR's
 * wrap at every node included); false if unbounded or beyond 2^40. */
bool arith_range(const Bounds *b, const Expr *e, int64_t *lo, int64_t *hi);

/* e == sum coef[j] * vars[j] + c exactly (linear, constant coefficients,
 * no other term)? */
bool arith_linear(Expr *e, int nvars, Var *const *vars, int64_t *coef, int64_t *c);

#endif
