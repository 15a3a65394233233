/* kernel/analysis/interval.c — the one interval engine (interval.h):
 * saturating bounds over __int128, corner rules for * // / (monotone on
 * each side of a divisor that excludes 0), the one-period rule for %,
 * dtype ranges and wrap-around as kernel/interp.c wraps, and comparisons
 * decided by intervals. Sound by construction: every result holds every
 * value the operation can take on operands in the operand intervals. */
#include "kernel/analysis/interval.h"

/* ---------- bounds ---------- */

static Wide wmin(Wide a, Wide b) { return a < b ? a : b; }
static Wide wmax(Wide a, Wide b) { return a > b ? a : b; }

/* A lower bound: one too large to represent is dropped (sound: a lower
 * bound may only move down). */
static Wide sat_lo(Wide v) { return v <= IV_NEG_INF || v >= IV_POS_INF ? IV_NEG_INF : v; }
static Wide sat_hi(Wide v) { return v >= IV_POS_INF || v <= IV_NEG_INF ? IV_POS_INF : v; }

Interval iv_make(Wide lo, Wide hi) { return (Interval){sat_lo(lo), sat_hi(hi)}; }
Interval iv_point(Wide v) { return iv_make(v, v); }
Interval iv_unbounded(void) { return (Interval){IV_NEG_INF, IV_POS_INF}; }
Interval iv_empty(void) { return (Interval){1, 0}; }
bool iv_is_empty(Interval r) { return r.lo > r.hi; }
bool iv_has_lo(Interval r) { return r.lo > IV_NEG_INF; }
bool iv_has_hi(Interval r) { return r.hi < IV_POS_INF; }

bool iv_is_bounded(Interval r)
{
	return !iv_is_empty(r) && iv_has_lo(r) && iv_has_hi(r);
}

bool iv_is_point(Interval r, Wide *v)
{
	if (!iv_is_bounded(r) || r.lo != r.hi)
		return false;
	*v = r.lo;
	return true;
}

bool iv_within(Interval r, Wide limit)
{
	return iv_is_bounded(r) && r.lo > -limit && r.hi < limit;
}

Interval iv_clip(Interval r, Wide limit)
{
	if (iv_is_empty(r))
		return r;
	if (r.lo <= -limit || r.lo >= limit)
		r.lo = IV_NEG_INF;
	if (r.hi >= limit || r.hi <= -limit)
		r.hi = IV_POS_INF;
	return r;
}

/* ---------- dtypes ---------- */

bool iv_of_dtype(DType t, Interval *out)
{
	switch (t) {
	case DT_BOOL: *out = iv_make(0, 1); return true;
	case DT_INT8: *out = iv_make(INT8_MIN, INT8_MAX); return true;
	case DT_INT16: *out = iv_make(INT16_MIN, INT16_MAX); return true;
	case DT_INT32: *out = iv_make(INT32_MIN, INT32_MAX); return true;
	case DT_INT64: *out = iv_make(INT64_MIN, INT64_MAX); return true;
	case DT_UINT8: *out = iv_make(0, UINT8_MAX); return true;
	case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_HANDLE: case DT_VOID:
	case DT_COUNT: break;
	}
	return false;
}

Interval iv_dtype(DType t)
{
	Interval r;
	return iv_of_dtype(t, &r) ? r : iv_unbounded();
}

bool iv_fits(Interval r, DType t)
{
	Interval d;
	return iv_of_dtype(t, &d) && r.lo >= d.lo && r.hi <= d.hi;
}

int64_t iv_wrap_value(Wide v, DType t)
{
	switch (t) {
	case DT_BOOL: return v != 0;
	case DT_INT8: return (int8_t)(uint8_t)v;
	case DT_INT16: return (int16_t)(uint16_t)v;
	case DT_INT32: return (int32_t)(uint32_t)v;
	case DT_UINT8: return (uint8_t)v;
	case DT_INT64: return (int64_t)(uint64_t)v;
	case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_HANDLE: case DT_VOID:
	case DT_COUNT: break;
	}
	return (int64_t)v;
}

Interval iv_wrap(Interval r, DType t)
{
	Wide v;
	Interval d;
	if (!iv_of_dtype(t, &d))
		return iv_unbounded();
	if (iv_fits(r, t))
		return r;
	if (iv_is_point(r, &v))
		return iv_point(iv_wrap_value(v, t));
	return d;
}

Interval iv_convert(Interval r, DType from, DType to)
{
	Interval f;
	if (!iv_of_dtype(from, &f))
		return iv_dtype(to);
	return iv_wrap(r, to);
}

/* ---------- arithmetic ---------- */

Wide iv_fdiv(Wide a, Wide b)
{
	Wide q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

Wide iv_fmod(Wide a, Wide b) { return a - b * iv_fdiv(a, b); }

static bool is_inf(Wide v) { return v <= IV_NEG_INF || v >= IV_POS_INF; }

Interval iv_add(Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	Wide lo = IV_NEG_INF, hi = IV_POS_INF;
	if (iv_has_lo(a) && iv_has_lo(b) && __builtin_add_overflow(a.lo, b.lo, &lo))
		lo = IV_NEG_INF;
	if (iv_has_hi(a) && iv_has_hi(b) && __builtin_add_overflow(a.hi, b.hi, &hi))
		hi = IV_POS_INF;
	return iv_make(lo, hi);
}

Interval iv_neg(Interval a)
{
	if (iv_is_empty(a))
		return iv_empty();
	return (Interval){-a.hi, -a.lo};
}

Interval iv_sub(Interval a, Interval b) { return iv_add(a, iv_neg(b)); }

/* x * y over the extended integers (0 * inf = 0: an infinite side is no
 * value, only the absence of a bound). */
static Wide mul_ext(Wide x, Wide y)
{
	if (x == 0 || y == 0)
		return 0;
	bool neg = (x < 0) != (y < 0);
	Wide p;
	if (is_inf(x) || is_inf(y) || __builtin_mul_overflow(x, y, &p))
		return neg ? IV_NEG_INF : IV_POS_INF;
	return p;
}

/* floor or truncated x / y, y finite and non-zero, x possibly infinite */
static Wide fdiv_ext(Wide x, Wide y)
{
	if (is_inf(x))
		return (x < 0) != (y < 0) ? IV_NEG_INF : IV_POS_INF;
	return iv_fdiv(x, y);
}

static Wide tdiv_ext(Wide x, Wide y)
{
	if (is_inf(x))
		return (x < 0) != (y < 0) ? IV_NEG_INF : IV_POS_INF;
	return x / y;
}

/* The hull of f at the four corners: exact for a function monotone in
 * each argument over the box (products; quotients by one-signed b). */
static Interval corners(Wide (*f)(Wide, Wide), Interval a, Interval b)
{
	Wide c[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
	Wide lo = c[0], hi = c[0];
	for (int i = 1; i < 4; i++) {
		lo = wmin(lo, c[i]);
		hi = wmax(hi, c[i]);
	}
	return iv_make(lo, hi);
}

Interval iv_mul(Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	return corners(mul_ext, a, b);
}

/* A divisor the corner rule accepts: finite, one-signed (no 0). */
static bool divisor_ok(Interval b)
{
	return iv_is_bounded(b) && (b.lo > 0 || b.hi < 0);
}

/* a / b rounded by div (floor or truncation), from the corners */
static Interval divide(Interval a, Interval b, Wide (*div)(Wide, Wide))
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	if (!divisor_ok(b))
		return iv_unbounded();
	return corners(div, a, b);
}

Interval iv_floordiv(Interval a, Interval b) { return divide(a, b, fdiv_ext); }
Interval iv_truncdiv(Interval a, Interval b) { return divide(a, b, tdiv_ext); }

/* a % b with b > 0 lies in [0, b.hi - 1]; a itself when a lies in
 * [0, b.lo); for a constant b, a within one period [k*b, k*b + b) maps
 * to [a.lo - k*b, a.hi - k*b]. Negative b mirrors: [b.lo + 1, 0]. */
Interval iv_floormod(Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	if (!divisor_ok(b))
		return iv_unbounded();
	const Wide modest = (Wide)1 << 125; /* a - b * (a // b) cannot overflow */
	if (iv_within(a, modest) && iv_within(b, modest) && b.lo == b.hi &&
	    iv_fdiv(a.lo, b.lo) == iv_fdiv(a.hi, b.lo))
		return iv_make(iv_fmod(a.lo, b.lo), iv_fmod(a.hi, b.lo));
	if (b.lo > 0)
		return a.lo >= 0 && a.hi < b.lo ? a : iv_make(0, b.hi - 1);
	return a.hi <= 0 && a.lo > b.hi ? a : iv_make(b.lo + 1, 0);
}

Interval iv_min(Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	return (Interval){wmin(a.lo, b.lo), wmin(a.hi, b.hi)};
}

Interval iv_max(Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return iv_empty();
	return (Interval){wmax(a.lo, b.lo), wmax(a.hi, b.hi)};
}

Interval iv_arith(BinOp op, Interval a, Interval b)
{
	switch (op) {
	case OP_ADD: return iv_add(a, b);
	case OP_SUB: return iv_sub(a, b);
	case OP_MUL: return iv_mul(a, b);
	case OP_DIV: return iv_truncdiv(a, b);
	case OP_FLOORDIV: return iv_floordiv(a, b);
	case OP_FLOORMOD: return iv_floormod(a, b);
	case OP_MIN: return iv_min(a, b);
	case OP_MAX: return iv_max(a, b);
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return iv_unbounded();
}

/* ---------- sets ---------- */

Interval iv_union(Interval a, Interval b)
{
	if (iv_is_empty(a))
		return b;
	if (iv_is_empty(b))
		return a;
	return (Interval){wmin(a.lo, b.lo), wmax(a.hi, b.hi)};
}

Interval iv_intersect(Interval a, Interval b)
{
	Interval r = {wmax(a.lo, b.lo), wmin(a.hi, b.hi)};
	return iv_is_empty(r) ? iv_empty() : r;
}

bool iv_contains(Interval r, Wide v) { return r.lo <= v && v <= r.hi; }

bool iv_subset(Interval a, Interval b)
{
	return iv_is_empty(a) || (b.lo <= a.lo && a.hi <= b.hi);
}

/* ---------- comparisons ---------- */

static IvTruth truth(bool yes, bool no)
{
	return yes ? IV_TRUE : no ? IV_FALSE : IV_UNKNOWN;
}

IvTruth iv_compare(BinOp op, Interval a, Interval b)
{
	if (iv_is_empty(a) || iv_is_empty(b))
		return IV_UNKNOWN; /* vacuous: decide nothing from no values */
	switch (op) {
	case OP_LT: return truth(a.hi < b.lo, a.lo >= b.hi);
	case OP_LE: return truth(a.hi <= b.lo, a.lo > b.hi);
	case OP_GT: return truth(a.lo > b.hi, a.hi <= b.lo);
	case OP_GE: return truth(a.lo >= b.hi, a.hi < b.lo);
	case OP_EQ:
		return truth(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo && iv_is_bounded(a),
			     a.hi < b.lo || b.hi < a.lo);
	case OP_NE:
		return truth(a.hi < b.lo || b.hi < a.lo,
			     a.lo == a.hi && b.lo == b.hi && a.lo == b.lo && iv_is_bounded(a));
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return IV_UNKNOWN;
}

Interval iv_narrow(Interval cur, BinOp op, Interval other)
{
	Interval nb = cur;
	switch (op) {
	case OP_EQ: nb = (Interval){wmax(cur.lo, other.lo), wmin(cur.hi, other.hi)}; break;
	case OP_LT: nb.hi = wmin(cur.hi, sat_hi(other.hi - 1)); break;
	case OP_LE: nb.hi = wmin(cur.hi, other.hi); break;
	case OP_GT: nb.lo = wmax(cur.lo, sat_lo(other.lo + 1)); break;
	case OP_GE: nb.lo = wmax(cur.lo, other.lo); break;
	case OP_SHL: case OP_SHR: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
	case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND:
	case OP_OR:
	case OP_COUNT: break;
	}
	return nb;
}

BinOp iv_negate(BinOp op)
{
	switch (op) {
	case OP_EQ: return OP_NE;
	case OP_NE: return OP_EQ;
	case OP_LT: return OP_GE;
	case OP_LE: return OP_GT;
	case OP_GT: return OP_LE;
	case OP_GE: return OP_LT;
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return OP_COUNT;
}
