/* tests/test_analysis.c — the analysis suite: the one interval engine
 * (kernel/analysis/interval.h), the one affine form (affine.h), and
 * conditional reads (a read in an arm of T.if_then_else happens only
 * where the arm is picked: access guards, region boxes, exactness).
 * Table-driven edge cases (negative floor division and modulo, int64
 * extremes, overflow to the wide type, empty and unbounded intervals,
 * divisors holding 0, unsigned and bool dtypes; cancelled terms, term
 * caps, coefficient overflow, undef atoms), and property tests: random
 * operands and random expressions over bounded variables, whose every
 * value (computed with the IR's floor division and dtype wrap) must lie
 * in the interval the engine and each client (the encoder's ranges,
 * arith, region) compute; affine forms read off random expressions
 * render back to expressions of the same value.
 * Deterministic: the seed is VS_SOUNDNESS_SEED when set, else fixed;
 * VS_ANALYSIS_CASES sets the number of random cases. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/affine.h"
#include "kernel/analysis/arith.h"
#include "kernel/analysis/facts.h"
#include "kernel/analysis/interval.h"
#include "kernel/analysis/region.h"
#include "kernel/print.h"
#include "smt/range.h"
#include "tests/testutil.h"

static Arena arena;
static const Span no_span;

static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* ---------- deterministic randomness ---------- */

static uint64_t rng_state;

static void rng_seed(void)
{
	const char *s = getenv("VS_SOUNDNESS_SEED");
	rng_state = s ? strtoull(s, NULL, 0) : 0x5eed16u;
}

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] (hi - lo < 2^64) */
static Wide rng_in(Wide lo, Wide hi)
{
	unsigned __int128 span = (unsigned __int128)(hi - lo) + 1;
	if (span == 0)
		return lo + (Wide)rng_next();
	return lo + (Wide)(rng_next() % span);
}

/* A value of the kind that breaks interval code: 0, +-1, small, the
 * edges of int8 / int32 / int64, random. */
static Wide rng_edge(void)
{
	static const Wide edges[] = {0, 1, -1, 2, -2, 7, -7, 127, -128, 255,
				     INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
				     (Wide)INT64_MAX + 1, (Wide)INT64_MIN - 1};
	switch (rng_next() % 4) {
	case 0: return edges[rng_next() % (sizeof edges / sizeof edges[0])];
	case 1: return rng_in(-20, 20);
	case 2: return rng_in(-100000, 100000);
	default: return (Wide)(int64_t)rng_next();
	}
}

static Interval rng_interval(void)
{
	Wide a = rng_edge(), b = rng_edge();
	if (rng_next() % 3 == 0)
		b = a + rng_in(0, 5);
	return a <= b ? iv_make(a, b) : iv_make(b, a);
}

/* ---------- exact semantics ---------- */



/* a op b on mathematical integers; false on division by zero */
static bool exact(BinOp op, Wide a, Wide b, Wide *out)
{
	if ((op == OP_FLOORDIV || op == OP_FLOORMOD || op == OP_DIV) && b == 0)
		return false;
	switch (op) {
	case OP_ADD: *out = a + b; return true;
	case OP_SUB: *out = a - b; return true;
	case OP_MUL: *out = a * b; return true;
	case OP_DIV: *out = a / b; return true;
	case OP_FLOORDIV: *out = iv_fdiv(a, b); return true;
	case OP_FLOORMOD: *out = a - b * iv_fdiv(a, b); return true;
	case OP_MIN: *out = a < b ? a : b; return true;
	case OP_MAX: *out = a > b ? a : b; return true;
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT: break;
	}
	return false;
}

static const BinOp arith_ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV,
				  OP_FLOORMOD, OP_MIN, OP_MAX};
#define NOPS ((int)(sizeof arith_ops / sizeof arith_ops[0]))

static const char *wtoa(Wide v, char *buf)
{
	char tmp[64];
	int n = 0;
	bool neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
	do {
		tmp[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	int k = 0;
	if (neg)
		buf[k++] = '-';
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = 0;
	return buf;
}

#define ck_assert_in(v, r)                                                     \
	do {                                                                   \
		char b0[64], b1[64], b2[64];                                   \
		ck_assert_msg(iv_contains((r), (v)), "%s not in [%s, %s]",    \
			      wtoa((v), b0), wtoa((r).lo, b1), wtoa((r).hi, b2)); \
	} while (0)

/* ---------- table-driven edge cases ---------- */

typedef struct OpCase {
	BinOp op;
	Wide alo, ahi, blo, bhi;
	bool bounded;  /* the result has both bounds */
	Wide lo, hi;   /* when bounded */
} OpCase;

static const OpCase op_cases[] = {
	/* negative floor division rounds down, modulo takes b's sign */
	{OP_FLOORDIV, -7, -7, 2, 2, true, -4, -4},
	{OP_FLOORMOD, -7, -7, 2, 2, true, 1, 1},
	{OP_FLOORDIV, 7, 7, -2, -2, true, -4, -4},
	{OP_FLOORMOD, 7, 7, -2, -2, true, -1, -1},
	{OP_FLOORMOD, -9, -1, 4, 4, true, 0, 3},
	{OP_FLOORMOD, 10, 12, 8, 8, true, 2, 4},    /* one period */
	{OP_FLOORMOD, 3, 5, 8, 16, true, 3, 5},     /* already reduced */
	{OP_FLOORMOD, -5, -3, -8, -8, true, -5, -3},
	{OP_FLOORMOD, 0, 100, -8, -2, true, -7, 0},
	{OP_DIV, -7, -7, 2, 2, true, -3, -3},       /* truncation */
	{OP_FLOORDIV, -10, 10, 3, 5, true, -4, 3},
	/* a divisor holding 0 has no bound */
	{OP_FLOORDIV, 1, 10, -1, 1, false, 0, 0},
	{OP_FLOORMOD, 1, 10, 0, 4, false, 0, 0},
	{OP_DIV, 1, 10, 0, 0, false, 0, 0},
	/* int64 extremes leave int64 exactly (the wide type holds them) */
	{OP_ADD, INT64_MAX, INT64_MAX, 1, 1, true, (Wide)INT64_MAX + 1, (Wide)INT64_MAX + 1},
	{OP_MUL, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, true,
	 (Wide)INT64_MIN * INT64_MIN, (Wide)INT64_MIN * INT64_MIN},
	{OP_FLOORDIV, INT64_MIN, INT64_MIN, -1, -1, true, -(Wide)INT64_MIN, -(Wide)INT64_MIN},
	{OP_SUB, INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX, true,
	 (Wide)INT64_MIN - INT64_MAX, (Wide)INT64_MIN - INT64_MAX},
	/* products too large for the wide type saturate to unbounded */
	{OP_MUL, (Wide)1 << 100, (Wide)1 << 100, 1 << 30, 1 << 30, false, 0, 0},
	{OP_MIN, -5, 5, 0, 2, true, -5, 2},
	{OP_MAX, -5, 5, 0, 2, true, 0, 5},
};

START_TEST(interval_ops_edge_cases)
{
	for (size_t i = 0; i < sizeof op_cases / sizeof op_cases[0]; i++) {
		const OpCase *c = &op_cases[i];
		Interval r = iv_arith(c->op, iv_make(c->alo, c->ahi), iv_make(c->blo, c->bhi));
		ck_assert_msg(iv_is_bounded(r) == c->bounded, "case %zu: bounded", i);
		if (c->bounded)
			ck_assert_msg(r.lo == c->lo && r.hi == c->hi, "case %zu: bounds", i);
	}
}
END_TEST

START_TEST(interval_empty_and_unbounded)
{
	Interval e = iv_empty(), u = iv_unbounded(), p = iv_point(3);
	ck_assert(iv_is_empty(e) && !iv_is_empty(u) && !iv_is_bounded(u));
	for (int k = 0; k < NOPS; k++) {
		ck_assert(iv_is_empty(iv_arith(arith_ops[k], e, p)));
		ck_assert(iv_is_empty(iv_arith(arith_ops[k], p, e)));
	}
	ck_assert(!iv_has_hi(iv_add(u, p)) && !iv_has_lo(iv_add(u, p)));
	/* 0 * unbounded is 0: an infinite side is no value */
	Interval z = iv_mul(iv_point(0), u);
	ck_assert(z.lo == 0 && z.hi == 0);
	/* one-sided: [1, inf) * 2 is [2, inf) */
	Interval h = iv_mul(iv_make(1, IV_POS_INF), iv_point(2));
	ck_assert(h.lo == 2 && !iv_has_hi(h));
	Interval q = iv_floordiv(iv_make(IV_NEG_INF, 9), iv_point(4));
	ck_assert(!iv_has_lo(q) && q.hi == 2);
	ck_assert(iv_is_empty(iv_intersect(iv_make(0, 3), iv_make(5, 9))));
	Interval un = iv_union(e, p);
	ck_assert(un.lo == 3 && un.hi == 3);
	ck_assert_int_eq(iv_compare(OP_LT, e, p), IV_UNKNOWN);
	ck_assert_int_eq(iv_compare(OP_LT, iv_make(0, 2), iv_make(3, 5)), IV_TRUE);
	ck_assert_int_eq(iv_compare(OP_GE, iv_make(0, 2), iv_make(3, 5)), IV_FALSE);
	ck_assert_int_eq(iv_compare(OP_EQ, p, p), IV_TRUE);
	ck_assert_int_eq(iv_compare(OP_NE, iv_make(0, 2), iv_make(2, 5)), IV_UNKNOWN);
	ck_assert_int_eq(iv_compare(OP_LE, iv_make(IV_NEG_INF, 2), iv_make(2, 5)), IV_TRUE);
}
END_TEST

typedef struct WrapCase {
	DType t;
	Wide v;
	int64_t want;
} WrapCase;

static const WrapCase wrap_cases[] = {
	{DT_INT8, 128, -128}, {DT_INT8, -129, 127}, {DT_UINT8, -1, 255},
	{DT_UINT8, 256, 0}, {DT_BOOL, 2, 1}, {DT_BOOL, 0, 0},
	{DT_INT32, (Wide)INT32_MAX + 1, INT32_MIN},
	{DT_INT64, (Wide)INT64_MAX + 1, INT64_MIN},
	{DT_INT64, -(Wide)INT64_MIN, INT64_MIN},
	{DT_INT16, 40000, 40000 - 65536},
};

START_TEST(interval_dtypes_and_wrap)
{
	for (size_t i = 0; i < sizeof wrap_cases / sizeof wrap_cases[0]; i++)
		ck_assert_msg(iv_wrap_value(wrap_cases[i].v, wrap_cases[i].t) == wrap_cases[i].want,
			      "wrap case %zu", i);
	Interval d;
	ck_assert(iv_of_dtype(DT_UINT8, &d) && d.lo == 0 && d.hi == 255);
	ck_assert(iv_of_dtype(DT_BOOL, &d) && d.lo == 0 && d.hi == 1);
	ck_assert(!iv_of_dtype(DT_FLOAT32, &d));
	ck_assert(iv_fits(iv_make(0, 255), DT_UINT8) && !iv_fits(iv_make(-1, 0), DT_UINT8));
	ck_assert(!iv_fits(iv_make(0, 1), DT_FLOAT64));
	/* a wrapped point stays a point; a wrapped range becomes the dtype */
	Interval w = iv_wrap(iv_point(300), DT_UINT8);
	ck_assert(w.lo == 44 && w.hi == 44);
	w = iv_wrap(iv_make(250, 260), DT_UINT8);
	ck_assert(w.lo == 0 && w.hi == 255);
	w = iv_wrap(iv_make(-3, 3), DT_INT8);
	ck_assert(w.lo == -3 && w.hi == 3);
	Interval n = iv_narrow(iv_dtype(DT_INT32), OP_LT, iv_make(0, 10));
	ck_assert(n.lo == INT32_MIN && n.hi == 9);
	n = iv_narrow(iv_dtype(DT_INT32), OP_NE, iv_point(4));
	ck_assert(n.lo == INT32_MIN && n.hi == INT32_MAX);
}
END_TEST

/* ---------- property: random operands ---------- */

static int ncases(int dflt)
{
	const char *s = getenv("VS_ANALYSIS_CASES");
	return s ? atoi(s) : dflt;
}

/* every value of a op b, for random a in A and b in B, lies in the
 * computed interval (corners and random points). */
static void check_op_sound(BinOp op, Interval A, Interval B, Interval R)
{
	for (int k = 0; k < 24; k++) {
		Wide a = k < 2 ? (k ? A.hi : A.lo) : rng_in(A.lo, A.hi);
		Wide b = k % 3 == 0 ? B.lo : k % 3 == 1 ? B.hi : rng_in(B.lo, B.hi);
		Wide v;
		if (!exact(op, a, b, &v))
			continue;
		ck_assert_in(v, R);
	}
}

START_TEST(interval_ops_sound_on_random_operands)
{
	rng_seed();
	int n = ncases(20000);
	for (int i = 0; i < n; i++) {
		BinOp op = arith_ops[rng_next() % NOPS];
		Interval A = rng_interval(), B = rng_interval();
		Interval R = iv_arith(op, A, B);
		check_op_sound(op, A, B, R);
	}
}
END_TEST

/* ---------- property: random expressions ---------- */

#define NVARS 3

typedef struct ExprGen {
	DType t;
	Var *vars[NVARS];
	Wide lo[NVARS], hi[NVARS];
	bool small; /* magnitudes that never wrap int64 */
} ExprGen;

static Expr *gen_lit(ExprGen *g)
{
	Wide v = g->small ? rng_in(-9, 9) : rng_edge();
	return ir_int(&arena, iv_wrap_value(v, g->t), g->t, no_span);
}

static Expr *gen_expr(ExprGen *g, int depth)
{
	if (depth == 0 || rng_next() % 4 == 0)
		return rng_next() % 3 ? ir_varref(&arena, g->vars[rng_next() % NVARS], no_span)
				      : gen_lit(g);
	if (rng_next() % 10 == 0)
		return ir_neg(&arena, gen_expr(g, depth - 1), no_span);
	BinOp op = arith_ops[rng_next() % NOPS];
	if (op == OP_DIV)
		op = OP_FLOORDIV; /* the simplifiers know floor division only */
	Expr *a = gen_expr(g, depth - 1);
	Expr *b = (op == OP_FLOORDIV || op == OP_FLOORMOD) && rng_next() % 2
			  ? gen_lit(g) : gen_expr(g, depth - 1);
	Expr *x = ir_bin(&arena, op, a, b, no_span);
	x->dtype = g->t;
	return x;
}

/* x's value with the variables at vals, wrapped at every node as the
 * interpreter wraps; false on division by zero. */
static bool eval_expr(const ExprGen *g, const Expr *x, const Wide *vals, Wide *out)
{
	Wide a, b;
	switch (x->kind) {
	case EX_INT: *out = x->u.ival; return true;
	case EX_VAR:
		for (int i = 0; i < NVARS; i++)
			if (g->vars[i] == x->u.var) {
				*out = vals[i];
				return true;
			}
		return false;
	case EX_NEG:
		if (!eval_expr(g, x->u.un.a, vals, &a))
			return false;
		*out = iv_wrap_value(-a, x->dtype);
		return true;
	case EX_BIN:
		if (!eval_expr(g, x->u.bin.a, vals, &a) || !eval_expr(g, x->u.bin.b, vals, &b) ||
		    !exact(x->u.bin.op, a, b, out))
			return false;
		*out = iv_wrap_value(*out, x->dtype);
		return true;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT: break;
	}
	return false;
}

static void gen_vars(ExprGen *g)
{
	static const DType types[] = {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8};
	g->t = g->small ? DT_INT64 : types[rng_next() % 5];
	Interval d = iv_dtype(g->t);
	for (int i = 0; i < NVARS; i++) {
		g->vars[i] = ir_var(&arena, i == 0 ? "x" : i == 1 ? "y" : "z", g->t, no_span);
		Wide a = g->small ? rng_in(-30, 30) : rng_in(d.lo, d.hi);
		Wide b = g->small ? a + rng_in(0, 12) : rng_next() % 2 ? a + rng_in(0, 12) : rng_in(d.lo, d.hi);
		b = b > d.hi ? d.hi : b;
		g->lo[i] = a < b ? a : b;
		g->hi[i] = a < b ? b : a;
	}
}

static Expr *lit_of(const ExprGen *g, Wide v) { return ir_int(&arena, (int64_t)v, g->t, no_span); }

/* The hypotheses lo <= v and v <= hi, for the encoder's range analysis. */
static Interval smt_value(const ExprGen *g, const Expr *x)
{
	Expr *hyps[2 * NVARS];
	for (int i = 0; i < NVARS; i++) {
		Expr *v = ir_varref(&arena, g->vars[i], no_span);
		hyps[2 * i] = ir_bin(&arena, OP_GE, v, lit_of(g, g->lo[i]), no_span);
		hyps[2 * i + 1] = ir_bin(&arena, OP_LE, v, lit_of(g, g->hi[i]), no_span);
	}
	RangeInfo *r = ranges_new(false);
	ck_assert(r && ranges_learn(r, 2 * NVARS, hyps, NULL));
	Interval out;
	ck_assert(ranges_value(r, x, &out));
	ranges_free(r);
	return out;
}

static bool arith_value(const ExprGen *g, const Expr *x, Interval *out)
{
	Bounds b;
	memset(&b, 0, sizeof b);
	for (int i = 0; i < NVARS; i++) {
		b.vars[i] = g->vars[i];
		b.range[i] = iv_make(g->lo[i], g->hi[i]);
	}
	b.n = NVARS;
	int64_t lo, hi;
	if (!arith_range(&b, x, &lo, &hi))
		return false;
	*out = iv_make(lo, hi);
	return true;
}

static bool region_value(const ExprGen *g, const Expr *x, Interval *out)
{
	RgEnv env;
	rg_env_init(&env, &arena);
	for (int i = 0; i < NVARS; i++)
		rg_push_loop(&env, g->vars[i], lit_of(g, g->lo[i]),
			     lit_of(g, g->hi[i] - g->lo[i] + 1), false);
	int64_t lo, hi;
	if (!rg_num_bounds(&env, x, &lo, &hi))
		return false;
	*out = iv_make(lo, hi);
	return true;
}

/* random points of the variables' box (its corners first) */
static void random_point(const ExprGen *g, int k, Wide *vals)
{
	for (int i = 0; i < NVARS; i++)
		vals[i] = k < 2 ? (k ? g->hi[i] : g->lo[i]) : rng_in(g->lo[i], g->hi[i]);
}

static void check_expr_sound(const ExprGen *g, const Expr *x, const Interval *rs, int nrs)
{
	for (int k = 0; k < 16; k++) {
		Wide vals[NVARS], v;
		random_point(g, k, vals);
		if (!eval_expr(g, x, vals, &v))
			continue;
		for (int j = 0; j < nrs; j++)
			ck_assert_in(v, rs[j]);
	}
}

/* The one engine applied node by node (the IR wraps at every node):
 * the reference the old engines are compared with. */
static Interval new_value(const ExprGen *g, const Expr *x)
{
	switch (x->kind) {
	case EX_INT: return iv_point(x->u.ival);
	case EX_VAR:
		for (int i = 0; i < NVARS; i++)
			if (g->vars[i] == x->u.var)
				return iv_make(g->lo[i], g->hi[i]);
		return iv_dtype(x->dtype);
	case EX_NEG: return iv_wrap(iv_neg(new_value(g, x->u.un.a)), x->dtype);
	case EX_BIN:
		return iv_wrap(iv_arith(x->u.bin.op, new_value(g, x->u.bin.a),
					new_value(g, x->u.bin.b)), x->dtype);
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT: break;
	}
	return iv_dtype(x->dtype);
}

#define ck_assert_within(n, o, what)                                           \
	do {                                                                   \
		char b0[64], b1[64], b2[64], b3[64];                           \
		ck_assert_msg(iv_subset((n), (o)), "%s: new [%s, %s] looser than old [%s, %s]", \
			      (what), wtoa((n).lo, b0), wtoa((n).hi, b1), wtoa((o).lo, b2), \
			      wtoa((o).hi, b3));                               \
	} while (0)

/* The clients lose nothing against the engine: the encoder's ranges and
 * arith's bounds are as tight as the engine applied node by node (before
 * the merge this compared the old engines; region adds rules of its own
 * on top, gcd steps of % and min/max arms, so only soundness is compared
 * there). */
START_TEST(interval_clients_as_tight_as_the_engine)
{
	rng_seed();
	int n = ncases(3000);
	for (int i = 0; i < n; i++) {
		ExprGen g = {.small = i % 2 == 0};
		gen_vars(&g);
		Expr *x = gen_expr(&g, 3);
		Interval nv = new_value(&g, x), old;
		check_expr_sound(&g, x, &nv, 1);
		old = smt_value(&g, x);
		ck_assert_within(nv, old, "smt");
		if (g.small && arith_value(&g, x, &old))
			ck_assert_within(nv, old, "arith");
	}
}
END_TEST

/* The encoder's ranges and arith's bounds (both wrap-aware) on every
 * integer dtype, values at the dtypes' edges included. */
START_TEST(interval_wrapping_clients_sound_on_every_dtype)
{
	rng_seed();
	int n = ncases(3000);
	for (int i = 0; i < n; i++) {
		ExprGen g = {.small = false};
		gen_vars(&g);
		Expr *x = gen_expr(&g, 3);
		Interval rs[2] = {smt_value(&g, x)};
		int nrs = 1 + arith_value(&g, x, &rs[1]);
		check_expr_sound(&g, x, rs, nrs);
	}
}
END_TEST

/* The simplifiers' numeric bounds (arith, region): int64 values small
 * enough that nothing wraps, where they reason on mathematical integers. */
START_TEST(interval_simplifier_bounds_sound_on_random_expressions)
{
	rng_seed();
	int n = ncases(3000);
	for (int i = 0; i < n; i++) {
		ExprGen g = {.small = true};
		gen_vars(&g);
		Expr *x = gen_expr(&g, 3);
		Interval rs[2];
		int nrs = 0;
		if (arith_value(&g, x, &rs[nrs]))
			nrs++;
		if (region_value(&g, x, &rs[nrs]))
			nrs++;
		check_expr_sound(&g, x, rs, nrs);
	}
}
END_TEST

/* ---------- affine forms ---------- */

static Expr *var_ref(Var *v) { return ir_varref(&arena, v, no_span); }

START_TEST(affine_forms_edge_cases)
{
	Var *x = ir_var(&arena, "x", DT_INT32, no_span), *y = ir_var(&arena, "y", DT_INT32, no_span);
	Expr *ex = var_ref(x), *ey = var_ref(y);
	/* x + 2x - 3x cancels: the term is dropped, not kept at 0 */
	Affine l = affine_const(0, 8);
	affine_add_term(&l, ex, 1);
	affine_add_term(&l, ex, 2);
	affine_add_term(&l, ex, -3);
	ck_assert(!l.bad && l.n == 0 && affine_nterms(&l) == 0);
	/* the cap makes a form bad, not silently shorter */
	Affine c = affine_const(0, 2);
	for (int i = 0; i < 3; i++)
		affine_add_term(&c, var_ref(ir_var(&arena, "t", DT_INT32, no_span)), 1);
	ck_assert(c.bad);
	/* numbers beyond 2^40 make a form bad, without overflowing int64 */
	ck_assert(affine_const(AFFINE_BIG, 8).bad);
	ck_assert(!affine_const(AFFINE_BIG - 1, 8).bad);
	Affine big = affine_scale(affine_scale(affine_atom(ex, 8), INT64_C(1) << 30), INT64_C(1) << 30);
	ck_assert(big.bad);
	Affine huge = affine_combine(affine_atom(ex, 8), &l, INT64_MAX);
	ck_assert(!huge.bad); /* l is 0: nothing to multiply */
	Affine one = affine_const(1, 8);
	ck_assert(affine_combine(affine_atom(ex, 8), &one, INT64_MAX).bad);
	/* (2x + y + 1)[x := y - 3] == 3y - 5 */
	Affine f = affine_const(1, 8), by = affine_const(-3, 8);
	affine_add_term(&f, ex, 2);
	affine_add_term(&f, ey, 1);
	affine_add_term(&by, ey, 1);
	Affine g = affine_substitute(f, 0, &by);
	ck_assert(!g.bad && g.n == 1 && g.atom[0] == ey && g.coef[0] == 3 && g.k == -5);
	int64_t k;
	ck_assert(!affine_is_const(&g, &k));
	ck_assert(affine_is_const(&l, &k) && k == 0);
	/* 3 * (x - x) + 4 reads as the constant 4 */
	Affine r = affine_const(0, 8);
	ck_assert(affine_add_expr(&r, ir_add(&arena, ir_mul(&arena, ir_int32(&arena, 3),
								 ir_sub(&arena, ex, ex)),
						ir_int32(&arena, 4)), 1, NULL));
	ck_assert(r.n == 0 && r.k == 4);
	/* the renderings */
	Affine h = affine_const(-2, 8);
	affine_add_term(&h, ey, -1);
	affine_add_term(&h, ex, 3);
	char *in_order = print_expr(affine_expr_in_order(&arena, &h, DT_INT32));
	char *sorted = print_expr(affine_expr_sorted(&arena, &h, DT_INT32));
	ck_assert_str_eq(in_order, "-1 * y + 3 * x - 2");
	ck_assert_str_eq(sorted, "x * 3 - y - 2");
	free(in_order);
	free(sorted);
}
END_TEST

START_TEST(affine_atoms_compare_with_dtypes_and_undef_never)
{
	Var *x = ir_var(&arena, "x", DT_INT32, no_span);
	Expr *u1 = ir_undef(&arena, DT_INT32, no_span), *u2 = ir_undef(&arena, DT_INT32, no_span);
	ck_assert(!affine_same_atom(u1, u2)); /* two undefs are two values */
	ck_assert(affine_same_atom(var_ref(x), var_ref(x)));
	ck_assert(!affine_same_atom(var_ref(x), var_ref(ir_var(&arena, "x", DT_INT32, no_span))));
	ck_assert(!affine_same_atom(ir_int(&arena, 1, DT_INT32, no_span),
				    ir_int(&arena, 1, DT_INT64, no_span)));
	/* undef - undef is not 0 */
	Affine l = affine_const(0, 8);
	affine_add_term(&l, u1, 1);
	affine_add_term(&l, u2, -1);
	ck_assert(l.n == 2);
}
END_TEST

static Interval atom_value_range(void *g, const Expr *atom) { return new_value(g, atom); }

/* Random expressions read as forms: both renderings evaluate to the
 * expression's value, and the form's interval holds it. */
START_TEST(affine_forms_render_to_equal_expressions)
{
	rng_seed();
	int n = ncases(3000);
	for (int i = 0; i < n; i++) {
		ExprGen g = {.small = true};
		gen_vars(&g);
		Expr *x = gen_expr(&g, 3);
		Affine l = affine_const(0, AFFINE_MAX_TERMS);
		if (!affine_add_expr(&l, x, 1, NULL))
			continue;
		Expr *forms[2] = {affine_expr_in_order(&arena, &l, g.t),
				  affine_expr_sorted(&arena, &l, g.t)};
		Interval r = affine_range(&l, atom_value_range, &g);
		for (int k = 0; k < 8; k++) {
			Wide vals[NVARS], v, w;
			random_point(&g, k, vals);
			if (!eval_expr(&g, x, vals, &v))
				continue;
			ck_assert_in(v, r);
			for (int j = 0; j < 2; j++) {
				ck_assert(eval_expr(&g, forms[j], vals, &w));
				ck_assert_msg(v == w, "case %d rendering %d differs", i, j);
			}
		}
	}
}
END_TEST

/* ---------- conditional reads ---------- */

/* The statement `with T.block(name)` in s, or NULL. */
static const Stmt *block_named(const Stmt *s, const char *name)
{
	switch (s->kind) {
	case ST_BLOCK:
		if (strcmp(s->u.block.name, name) == 0)
			return s;
		return block_named(s->u.block.body, name);
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			const Stmt *b = block_named(s->u.seq.items[i], name);
			if (b)
				return b;
		}
		return NULL;
	case ST_ALLOC: return block_named(s->u.alloc.body, name);
	case ST_FOR: return block_named(s->u.loop.body, name);
	case ST_LET: return block_named(s->u.let.body, name);
	case ST_IF: {
		const Stmt *b = block_named(s->u.cond.then_s, name);
		return b || !s->u.cond.else_s ? b : block_named(s->u.cond.else_s, name);
	}
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

static const Buffer *buffer_named(const Stmt *s, const char *name)
{
	while (s->kind == ST_ALLOC) {
		if (strcmp(s->u.alloc.buf->name, name) == 0)
			return s->u.alloc.buf;
		s = s->u.alloc.body;
	}
	ck_abort_msg("no allocation of %s", name);
	return NULL;
}

/* The box of the reads of `buf` in block `block` of the fixture, every
 * loop relaxed: constant bounds lo, hi (inclusive) of dimension 0. */
static void read_box(const char *fixture, const char *block, const char *buf, int64_t *lo,
		     int64_t *hi)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(fixture));
	const Func *f = m->funcs[0];
	const Stmt *b = block_named(f->body, block);
	ck_assert_ptr_nonnull(b);
	RgEnv env;
	rg_env_init(&env, &arena);
	RgBox box;
	rg_access_box(&env, b, buffer_named(f->body, buf), false, &box);
	ck_assert_int_eq(box.naccesses, 1);
	ck_assert_ptr_nonnull(box.lo[0]);
	ck_assert_msg(an_const_int(box.lo[0], lo) && an_const_int(box.hi[0], hi),
		      "%s: the box of %s is not constant", fixture, buf);
}

/* concat: C[i] = T.if_then_else(i < 64, A[i], B[i - 64]) for i in [0,
 * 128) reads A[0:64] and B[0:64], not B[-64:64]; the padded read
 * T.if_then_else(1 <= i and i < 17, pad_in[i - 1], 0.0) for i in [0, 18)
 * reads pad_in[0:16]. */
START_TEST(select_arms_bound_the_region)
{
	int64_t lo, hi;
	read_box("analysis/concat.tir", "C", "A", &lo, &hi);
	ck_assert(lo == 0 && hi == 63);
	read_box("analysis/concat.tir", "C", "B", &lo, &hi);
	ck_assert(lo == 0 && hi == 63);
	read_box("analysis/padded.tir", "out", "pad_in", &lo, &hi);
	ck_assert(lo == 0 && hi == 15);
}
END_TEST

/* A condition the bounds cannot use is dropped, never trusted: with
 * `M[i] > 0 and i < 64` the first arm keeps the clamp of `i < 64`, and
 * the second (`not (M[i] > 0 and i < 64)`, a disjunction) is bounded as
 * if always taken. */
START_TEST(unrepresentable_conditions_over_approximate)
{
	int64_t lo, hi;
	read_box("analysis/concat-load_cond.tir", "C", "A", &lo, &hi);
	ck_assert(lo == 0 && hi == 63);
	read_box("analysis/concat-load_cond.tir", "C", "B", &lo, &hi);
	ck_assert(lo == -64 && hi == 63);
}
END_TEST

/* The reads of one instance: the read of A happens where i < 64, the
 * read of B where it does not (their guards evaluated at i = 10, 100). */
START_TEST(select_arms_guard_the_accesses)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture("analysis/concat.tir"));
	const Func *f = m->funcs[0];
	const Stmt *b = block_named(f->body, "C");
	AccessList acc;
	memset(&acc, 0, sizeof acc);
	an_collect_accesses(&arena, b, 0, NULL, NULL, 0, NULL, &acc);
	ck_assert_int_eq(acc.nvars, 1); /* i' */
	int seen = 0;
	for (int k = 0; k < acc.n; k++) {
		const Access *x = &acc.items[k];
		if (x->is_write)
			continue;
		bool is_a = strcmp(x->buf->name, "A") == 0;
		ck_assert(is_a || strcmp(x->buf->name, "B") == 0);
		int64_t at10, at100, iv[2] = {10, 100};
		ck_assert(rg_eval(x->guard, 1, acc.vars, &iv[0], &at10));
		ck_assert(rg_eval(x->guard, 1, acc.vars, &iv[1], &at100));
		ck_assert_int_eq(at10, is_a);
		ck_assert_int_eq(at100, !is_a);
		seen++;
	}
	ck_assert_int_eq(seen, 2);
}
END_TEST

/* Exactness is decided as the interpreter runs: only the picked arm's
 * cells count, so B[0:64] is exactly what concat reads of B (the untaken
 * arm's B[-64:0] would lie outside it). */
START_TEST(exactness_counts_only_the_picked_arm)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture("analysis/concat.tir"));
	const Func *f = m->funcs[0];
	const Stmt *b = block_named(f->body, "C");
	Expr *lo = ir_int32(&arena, 0), *hi = ir_int32(&arena, 63);
	bool exact = false, tight = false;
	char *witness = NULL;
	ck_assert(rg_box_exact(&arena, 0, NULL, b, buffer_named(f->body, "B"), false, &lo, &hi,
			       1L << 16, &exact, &tight, &witness));
	ck_assert_msg(exact && tight, "%s", witness ? witness : "");
	/* the budget counts loop iterations: C's loop runs 128 times, so 128
	 * is enough and 127 is refused up front (the note is not worth more) */
	ck_assert(rg_box_exact(&arena, 0, NULL, b, buffer_named(f->body, "B"), false, &lo, &hi,
			       128, &exact, &tight, &witness));
	ck_assert(!rg_box_exact(&arena, 0, NULL, b, buffer_named(f->body, "B"), false, &lo, &hi,
				127, &exact, &tight, &witness));
	/* a condition that reads a buffer cannot be enumerated: undecided */
	Module *m2 = tu_parse(&arena, "k2.tir", tu_fixture("analysis/concat-load_cond.tir"));
	const Func *f2 = m2->funcs[0];
	ck_assert(!rg_box_exact(&arena, 0, NULL, block_named(f2->body, "C"),
				buffer_named(f2->body, "B"), false, &lo, &hi, 1L << 16, &exact,
				&tight, &witness));
}
END_TEST


/* ---------- facts of producer stores (kernel/analysis/facts.c) ---------- */

static bool is_store_to_b(const Stmt *s, void *ud)
{
	(void)ud;
	return s->kind == ST_STORE && strcmp(s->u.store.buf->name, "B") == 0;
}

/* The facts at the consumer `B[k] = X[k]` of a fixture, and X. */
static Func *facts_fixture(const char *name, bool for_values, FactSet *fs, Buffer **x)
{
	Module *m = tu_parse(&arena, name, tu_fixture(name));
	ck_assert_ptr_nonnull(m);
	Func *f = m->funcs[0];
	const Stmt *use = stmt_find(f->body, is_store_to_b, NULL);
	ck_assert_ptr_nonnull(use);
	StmtCtx sc;
	ck_assert(an_find_stmt(&arena, f, use, &sc));
	an_facts_at(&arena, f, &sc, for_values, NULL, fs);
	*x = use->u.store.value->u.load.buf;
	return f;
}

/* Whether cell X[c] is readable there: the condition is closed once
 * the cell is a constant. */
static int readable_cell(Func *f, const FactSet *fs, Buffer *x, int64_t c)
{
	Expr *idx = ir_int(&arena, c, DT_INT32, no_span);
	int64_t v;
	ck_assert_msg(rg_eval(an_readable(&arena, f, fs, x, 1, &idx), 0, NULL, NULL, &v),
		      "readable(X[%lld]) is not a closed condition", (long long)c);
	return v != 0;
}

/* How many hypotheses the facts give for the value of X[c]. */
static int value_hyps(const FactSet *fs, Buffer *x, int64_t c)
{
	Expr *idx = ir_int(&arena, c, DT_INT32, no_span);
	Expr *load = ir_load(&arena, x, 1, &idx, no_span);
	Obligation *o = obligation_new(&arena, "t", "", 0, NULL, 0, NULL, ir_bool(&arena, true), no_span);
	an_facts_instantiate(&arena, fs, load, o);
	return o->nhyps;
}

/* X[i * 8 + j] (j < 8) under `if i * 8 + j < 30`: the index is injective
 * (mixed radix), so the store is a fact, and its cells are readable
 * exactly where the guard held for the instance that writes them. */
START_TEST(affine_store_under_a_guard_is_a_conditional_fact)
{
	FactSet fs;
	Buffer *x;
	Func *f = facts_fixture("analysis/facts_affine_guarded_store.tir", false, &fs, &x);
	for (int c = 0; c < 32; c++)
		ck_assert_int_eq(readable_cell(f, &fs, x, c), c < 30);
	f = facts_fixture("analysis/facts_affine_guarded_store.tir", true, &fs, &x);
	ck_assert_int_gt(value_hyps(&fs, x, 13), 0);
}
END_TEST

/* Two stores to X (an if and its else): each makes its cells readable,
 * but neither gives values (a cell's value depends on which ran). */
START_TEST(two_stores_to_a_buffer_give_readable_cells_no_values)
{
	FactSet fs;
	Buffer *x;
	Func *f = facts_fixture("analysis/facts_two_stores_are_readable_only.tir", false, &fs, &x);
	for (int c = 0; c < 16; c++)
		ck_assert_int_eq(readable_cell(f, &fs, x, c), 1);
	f = facts_fixture("analysis/facts_two_stores_are_readable_only.tir", true, &fs, &x);
	ck_assert_int_eq(value_hyps(&fs, x, 3), 0);
	ck_assert_int_eq(value_hyps(&fs, x, 12), 0);
}
END_TEST

/* X[i * 4 + j] with j < 5: instances (1, 0) and (0, 4) write the same
 * cell, so the store must give no value; nothing claims more cells than
 * an instance writes (red team of the mixed-radix rule). */
START_TEST(overlapping_radix_gives_no_value)
{
	FactSet fs;
	Buffer *x;
	Func *f = facts_fixture("analysis/facts_overlapping_radix_is_not_a_value.tir", true, &fs, &x);
	for (int c = 0; c < 16; c++)
		ck_assert_int_eq(value_hyps(&fs, x, c), 0);
	f = facts_fixture("analysis/facts_overlapping_radix_is_not_a_value.tir", false, &fs, &x);
	ck_assert_int_eq(readable_cell(f, &fs, x, 0), 1);
	ck_assert_int_eq(readable_cell(f, &fs, x, 15), 0); /* never written */
}
END_TEST

Suite *suite_analysis(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("interval");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60); /* thousands of random cases; slow under asan */
	tcase_add_test(tc, interval_ops_edge_cases);
	tcase_add_test(tc, interval_empty_and_unbounded);
	tcase_add_test(tc, interval_dtypes_and_wrap);
	tcase_add_test(tc, interval_ops_sound_on_random_operands);
	tcase_add_test(tc, interval_wrapping_clients_sound_on_every_dtype);
	tcase_add_test(tc, interval_simplifier_bounds_sound_on_random_expressions);
	tcase_add_test(tc, interval_clients_as_tight_as_the_engine);
	suite_add_tcase(s, tc);
	tc = tcase_create("affine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, affine_forms_edge_cases);
	tcase_add_test(tc, affine_atoms_compare_with_dtypes_and_undef_never);
	tcase_add_test(tc, affine_forms_render_to_equal_expressions);
	suite_add_tcase(s, tc);
	tc = tcase_create("conditional_reads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, select_arms_bound_the_region);
	tcase_add_test(tc, unrepresentable_conditions_over_approximate);
	tcase_add_test(tc, select_arms_guard_the_accesses);
	tcase_add_test(tc, exactness_counts_only_the_picked_arm);
	suite_add_tcase(s, tc);
	tc = tcase_create("facts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, affine_store_under_a_guard_is_a_conditional_fact);
	tcase_add_test(tc, two_stores_to_a_buffer_give_readable_cells_no_values);
	tcase_add_test(tc, overlapping_radix_gives_no_value);
	suite_add_tcase(s, tc);
	return s;
}
