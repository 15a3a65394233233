/* smt/range.h — internal to smt/: intervals of integer expressions
 * (range.c), so the encoder writes a wrap-around only where the
 * mathematical result can leave its dtype. Bounds come from literals,
 * dtype ranges (every int32 value is an int32), and hypotheses that bound
 * a variable (loop ranges, T.assume facts). The intervals and their
 * arithmetic are kernel/analysis/interval.h's. No Z3 here. */
#ifndef VS_SMT_RANGE_H
#define VS_SMT_RANGE_H

#include "kernel/analysis/interval.h"

typedef struct RangeInfo RangeInfo;

/* stated_only: learn only from comparisons with constants, the bounds
 * every model of the query satisfies without any range fact. */
RangeInfo *ranges_new(bool stated_only);
void ranges_free(RangeInfo *r);
/* Learn variable bounds from the query hyps AND NOT goal: from every
 * comparison `v op e` / `e op v` (v a variable, possibly under casts
 * that keep its values) that the query asserts through and/or/not,
 * iterated to a fixed point (a few passes). false: out of memory. */
bool ranges_learn(RangeInfo *r, int nhyps, Expr *const *hyps,
		  const Expr *goal);
/* The bound of a free variable: its dtype's range narrowed by what was
 * learnt. Only meaningful for integer variables. */
Interval ranges_var(RangeInfo *r, const Var *v);
/* Whether the query states v's bound itself: comparisons of v with
 * constants that it asserts already confine v to ranges_var(v), so a
 * range fact about v would be redundant. */
bool ranges_var_stated(RangeInfo *r, const Var *v);
/* The range of v's own value here: its innermost let binding, else
 * ranges_var. */
Interval ranges_binding(RangeInfo *r, const Var *v);
/* The range of x's value at x->dtype, exactly as smt/encode.c encodes it
 * (wrapped wherever the unwrapped result does not provably fit). x must
 * be of integer or bool dtype. false: out of memory. */
bool ranges_value(RangeInfo *r, const Expr *x, Interval *out);
/* Let bindings, innermost last, mirroring the encoder's environment. */
bool ranges_push_let(RangeInfo *r, const Var *v, const Expr *value);
void ranges_pop_let(RangeInfo *r);

#endif
