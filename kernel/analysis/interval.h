/* kernel/analysis/interval.h — THE interval type: a closed set of
 * mathematical integers [lo, hi] over a wide integer, with explicit empty
 * and unbounded sides, the interval arithmetic of the IR's integer
 * operators (floor // and %), dtype ranges and wrap-around, and
 * comparisons decided by intervals. Every client (smt/range.c, the
 * backend's nsw ranges, arith, region) asks here. No IR walking. */
#ifndef VS_ANALYSIS_INTERVAL_H
#define VS_ANALYSIS_INTERVAL_H

#include "kernel/ir.h"

/* Wide enough for any sum or product of two int64 values. */
__extension__ typedef __int128 Wide;

/* lo > hi: empty (no value: contradictory hypotheses, a loop that never
 * runs). lo == IV_NEG_INF: no lower bound; hi == IV_POS_INF: no upper
 * bound. Finite bounds lie strictly between the two (every product of
 * two int64 values does); a result that overflows the wide type
 * saturates to the unbounded side. */
typedef struct Interval {
	Wide lo, hi;
} Interval;

#define IV_POS_INF ((Wide)(((unsigned __int128)1 << 127) - 1))
#define IV_NEG_INF (-IV_POS_INF)

Interval iv_make(Wide lo, Wide hi); /* bounds saturated to the infinities */
Interval iv_point(Wide v);
Interval iv_unbounded(void);
Interval iv_empty(void);
bool iv_is_empty(Interval r);
bool iv_has_lo(Interval r);
bool iv_has_hi(Interval r);
bool iv_is_bounded(Interval r); /* both sides finite (and not empty) */
bool iv_is_point(Interval r, Wide *v);
/* Both sides finite and strictly inside (-limit, limit): what a client
 * that reasons in int64 without overflow accepts. */
bool iv_within(Interval r, Wide limit);
/* r with each side beyond (-limit, limit) made unbounded. */
Interval iv_clip(Interval r, Wide limit);

/* ---- dtypes ---- */
/* The values of an integer dtype or bool ([0, 1]); false otherwise. */
bool iv_of_dtype(DType t, Interval *out);
/* iv_of_dtype, or unbounded for a dtype without integer values. */
Interval iv_dtype(DType t);
bool iv_fits(Interval r, DType t); /* false for non-integer dtypes */
/* v wrapped to t (two's complement at every width, bool: v != 0), as
 * kernel/interp.c wraps. */
int64_t iv_wrap_value(Wide v, DType t);
/* The values of an exact result r once wrapped to t: r when it fits (no
 * wrap happens), the wrapped value of a point, else all of t. */
Interval iv_wrap(Interval r, DType t);
/* A value in r of dtype `from` converted to `to` (the interpreter's
 * convert): wrapped when both are integer or bool; from a float, any
 * value of `to` (unbounded when `to` has no integer values). */
Interval iv_convert(Interval r, DType from, DType to);

/* ---- arithmetic on mathematical integers (no wrap) ---- */
Interval iv_add(Interval a, Interval b);
Interval iv_sub(Interval a, Interval b);
Interval iv_neg(Interval a);
Interval iv_mul(Interval a, Interval b);
/* floor division; unbounded when b holds 0 (the IR's UB aside, a zero
 * divisor has no bound) or is unbounded on a side */
Interval iv_floordiv(Interval a, Interval b);
/* floor modulo: takes b's sign ([0, b.hi - 1] for b > 0); a itself when
 * a already lies in [0, b.lo); for a constant b, a within one period
 * [q*b, q*b + b) gives [a.lo - q*b, a.hi - q*b]. Unbounded when b holds 0. */
Interval iv_floormod(Interval a, Interval b);
/* truncating division (the IR's `/` on integers) */
Interval iv_truncdiv(Interval a, Interval b);
Interval iv_min(Interval a, Interval b);
Interval iv_max(Interval a, Interval b);
/* The result of `a op b` for an arithmetic op (+ - * / // % min max);
 * unbounded for any other op. */
Interval iv_arith(BinOp op, Interval a, Interval b);

/* ---- sets ---- */
Interval iv_union(Interval a, Interval b); /* the hull */
Interval iv_intersect(Interval a, Interval b);
bool iv_contains(Interval r, Wide v);
bool iv_subset(Interval a, Interval b); /* every value of a is in b */

/* ---- comparisons ---- */
typedef enum IvTruth {
	IV_UNKNOWN, /* the intervals do not decide */
	IV_TRUE,
	IV_FALSE,
} IvTruth;

/* `x op y` for every x in a and y in b (op a comparison). */
IvTruth iv_compare(BinOp op, Interval a, Interval b);
/* The values of v that `v op y` (y in other) leaves, within cur; cur
 * itself when op says nothing (!=, a non-comparison). */
Interval iv_narrow(Interval cur, BinOp op, Interval other);
/* not (a op b) on integers; OP_COUNT for a non-comparison */
BinOp iv_negate(BinOp op);

/* floor division and modulo of wide integers (b != 0) */
Wide iv_fdiv(Wide a, Wide b);
Wide iv_fmod(Wide a, Wide b);

#endif
