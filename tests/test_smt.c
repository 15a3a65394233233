/* tests/test_smt.c — smt/: encoding (floor division for every sign,
 * buffers as uninterpreted functions, real vs IEEE floats, casts, lets,
 * undef, integers wrapping to their dtype like the interpreter, interval
 * ranges that leave wraps out), verdicts and models, limits, unsupported
 * constructs, the query text re-checked by the z3 and cvc5 binaries, the
 * cache, threads, and a differential test against the interpreter. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/half.h"
#include "kernel/interp.h"
#include "smt/range.h"
#include "smt/smt.h"

static Arena arena;
static Solver *solver;
static const Span no_span;

static void setup(void)
{
	arena_init(&arena);
	/* the limit is wall-clock time: on a loaded machine (the suites run
	 * side by side) 10 s turned a float refutation into unknown; the
	 * tests of limits make solvers of their own. The tests read smt2. */
	SmtOptions generous = {.timeout_ms = 120000, .want_text = true};
	solver = smt_solver_new(&generous);
}

static void teardown(void)
{
	smt_solver_free(solver);
	arena_free(&arena);
}

/* ---------- building obligations ---------- */

static Var *var(const char *name, DType t) { return ir_var(&arena, name, t, no_span); }
static Expr *ref(Var *v) { return ir_varref(&arena, v, no_span); }
static Expr *lit(int64_t v) { return ir_int32(&arena, v); }
static Expr *flit(double v, DType t) { return ir_float(&arena, v, t, no_span); }
static Expr *bin(BinOp op, Expr *x, Expr *y) { return ir_bin(&arena, op, x, y, no_span); }
static Expr *eq(Expr *x, Expr *y) { return bin(OP_EQ, x, y); }
/* x >= -inf: false only for NaN (an ordering is a plain IEEE comparison) */
static Expr *not_nan(Var *x) { return bin(OP_GE, ref(x), flit(-INFINITY, x->dtype)); }

static Obligation *ob(int nhyps, Expr **hyps, Expr *goal)
{
	return obligation_new(&arena, "test", "a test obligation", 0, NULL,
			      nhyps, hyps, goal, no_span);
}

static ObligationResult check_in(Obligation *o, FloatMode fm)
{
	ObligationResult r;
	smt_discharge(solver, &arena, o, fm, &r);
	return r;
}

static Verdict verdict_of(Obligation *o, FloatMode fm)
{
	return check_in(o, fm).verdict;
}

static const ModelVar *model_var(const ObligationResult *r, const Var *v)
{
	ck_assert_ptr_nonnull(r->model);
	for (int i = 0; i < r->model->nvars; i++)
		if (r->model->vars[i].var == v)
			return &r->model->vars[i];
	ck_abort_msg("no value for %s in the model", v->name);
	return NULL;
}

/* Python's // and % */
static int64_t py_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static int64_t py_mod(int64_t a, int64_t b) { return a - b * py_div(a, b); }

/* ---------- floor division and modulo ---------- */

START_TEST(floor_division_literals_follow_the_brief)
{
	Expr *m7 = lit(-7), *p7 = lit(7), *two = lit(2), *mtwo = lit(-2);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(bin(OP_FLOORDIV, m7, two), lit(-4))), FLOAT_REAL),
			 VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(bin(OP_FLOORMOD, m7, two), lit(1))), FLOAT_REAL),
			 VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(bin(OP_FLOORMOD, p7, mtwo), lit(-1))), FLOAT_REAL),
			 VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(bin(OP_FLOORDIV, m7, two), lit(-3))), FLOAT_REAL),
			 VERDICT_REFUTED);
}
END_TEST

/* Every sign combination, three ways: literal operands, a variable
 * numerator over a constant divisor, and a variable divisor (the ite
 * encoding). */
START_TEST(floor_division_matches_python_for_every_sign)
{
	static const int64_t as[] = {-13, -7, -6, -1, 0, 1, 6, 7, 13};
	static const int64_t bs[] = {-5, -3, -2, -1, 1, 2, 3, 5};
	Var *x = var("x", DT_INT32), *y = var("y", DT_INT32);
	for (size_t i = 0; i < sizeof as / sizeof *as; i++)
		for (size_t j = 0; j < sizeof bs / sizeof *bs; j++) {
			int64_t a = as[i], b = bs[j];
			Expr *want_q = lit(py_div(a, b)), *want_r = lit(py_mod(a, b));
			Expr *lits = ir_and(&arena, eq(bin(OP_FLOORDIV, lit(a), lit(b)), want_q),
					    eq(bin(OP_FLOORMOD, lit(a), lit(b)), want_r));
			Expr *hx = eq(ref(x), lit(a)), *hy = eq(ref(y), lit(b));
			Expr *num = ir_and(&arena, eq(bin(OP_FLOORDIV, ref(x), lit(b)), want_q),
					   eq(bin(OP_FLOORMOD, ref(x), lit(b)), want_r));
			Expr *both = ir_and(&arena, eq(bin(OP_FLOORDIV, ref(x), ref(y)), want_q),
					    eq(bin(OP_FLOORMOD, ref(x), ref(y)), want_r));
			Expr *hyps[2] = {hx, hy};
			ck_assert_msg(verdict_of(ob(0, NULL, lits), FLOAT_REAL) == VERDICT_PROVEN,
				      "literals %lld, %lld", (long long)a, (long long)b);
			ck_assert_msg(verdict_of(ob(1, hyps, num), FLOAT_REAL) == VERDICT_PROVEN,
				      "x // %lld with x = %lld", (long long)b, (long long)a);
			ck_assert_msg(verdict_of(ob(2, hyps, both), FLOAT_REAL) == VERDICT_PROVEN,
				      "x // y with x = %lld, y = %lld", (long long)a, (long long)b);
		}
}
END_TEST

/* For all x: c*(x//c) + x%c == x and x%c lies between 0 and c. */
START_TEST(floor_division_by_constants_is_exact_for_all_values)
{
	static const int64_t cs[] = {4, -4, 1, -1, 7};
	Var *x = var("x", DT_INT64);
	for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
		int64_t c = cs[i];
		Expr *q = bin(OP_FLOORDIV, ref(x), lit(c)), *r = bin(OP_FLOORMOD, ref(x), lit(c));
		Expr *recon = eq(ir_add(&arena, ir_mul(&arena, lit(c), q), r), ref(x));
		Expr *range = c > 0 ? ir_and(&arena, bin(OP_LE, lit(0), r), bin(OP_LT, r, lit(c)))
				    : ir_and(&arena, bin(OP_LT, lit(c), r), bin(OP_LE, r, lit(0)));
		ck_assert_int_eq(verdict_of(ob(0, NULL, ir_and(&arena, recon, range)), FLOAT_REAL),
				 VERDICT_PROVEN);
	}
}
END_TEST

/* lo <= v <= hi */
static Expr *within(Var *v, int64_t lo, int64_t hi)
{
	return ir_and(&arena, bin(OP_LE, lit(lo), ref(v)), bin(OP_LE, ref(v), lit(hi)));
}

/* Bounded so that nothing wraps (the ranges prove it): the floor
 * semantics alone, on each side of zero. */
START_TEST(floor_division_by_a_variable_reconstructs_the_dividend)
{
	Var *x = var("x", DT_INT32), *y = var("y", DT_INT32);
	Expr *q = bin(OP_FLOORDIV, ref(x), ref(y)), *r = bin(OP_FLOORMOD, ref(x), ref(y));
	Expr *goal = eq(ir_add(&arena, ir_mul(&arena, ref(y), q), r), ref(x));
	Expr *pos[2] = {within(x, -1000, 1000), within(y, 1, 1000)};
	Expr *neg[2] = {within(x, -1000, 1000), within(y, -1000, -1)};
	ck_assert_int_eq(verdict_of(ob(2, pos, goal), FLOAT_REAL), VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(2, neg, goal), FLOAT_REAL), VERDICT_PROVEN);
	/* the remainder takes the divisor's sign */
	Expr *hneg = bin(OP_LT, ref(y), lit(0));
	Expr *sign = ir_and(&arena, bin(OP_LT, ref(y), r), bin(OP_LE, r, lit(0)));
	ck_assert_int_eq(verdict_of(ob(1, &hneg, sign), FLOAT_REAL), VERDICT_PROVEN);
}
END_TEST

/* Division by a constant stays linear: no ite, a positive divisor. */
START_TEST(constant_divisor_gives_linear_text)
{
	Var *x = var("x", DT_INT32);
	const char *why = NULL;
	const char *t = smt_query_text(&arena, ob(0, NULL, eq(bin(OP_FLOORDIV, ref(x), lit(4)), lit(0))),
				       FLOAT_REAL, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t, "(div x_0 4)"));
	ck_assert_ptr_null(strstr(t, "ite"));
	t = smt_query_text(&arena, ob(0, NULL, eq(bin(OP_FLOORMOD, ref(x), lit(-4)), lit(0))),
			   FLOAT_REAL, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t, "(mod (- x_0) 4)"));
	ck_assert_ptr_null(strstr(t, "ite"));
}
END_TEST

START_TEST(divisibility_needs_its_hypothesis)
{
	Var *n = var("n", DT_INT32);
	Expr *goal = eq(bin(OP_FLOORMOD, ref(n), lit(4)), lit(0));
	Expr *hyp = eq(bin(OP_FLOORMOD, ref(n), lit(8)), lit(0));
	Obligation *with = obligation_new(&arena, "split.divisible", "n % 4 == 0", 1, &n, 1, &hyp,
					  goal, no_span);
	Obligation *without = obligation_new(&arena, "split.divisible", "n % 4 == 0", 1, &n, 0, NULL,
					     goal, no_span);
	ck_assert_int_eq(verdict_of(with, FLOAT_REAL), VERDICT_PROVEN);
	ObligationResult r = check_in(without, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	const ModelVar *mv = model_var(&r, n);
	ck_assert(!mv->val.is_float);
	ck_assert_int_ne(py_mod(mv->val.ival, 4), 0);
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)mv->val.ival);
	ck_assert_str_eq(mv->val.text, buf);
}
END_TEST

/* ---------- buffers ---------- */

START_TEST(buffer_loads_are_uninterpreted_functions)
{
	Expr *shape[1] = {lit(16)};
	Buffer *A = ir_buffer(&arena, "A", DT_INT32, 1, shape, no_span);
	Var *i = var("i", DT_INT32), *j = var("j", DT_INT32);
	Expr *ii[1] = {ref(i)}, *jj[1] = {ref(j)};
	Expr *goal = eq(ir_load(&arena, A, 1, ii, no_span), ir_load(&arena, A, 1, jj, no_span));
	Expr *hyp = eq(ref(i), ref(j));
	Var *vs[2] = {i, j};
	Obligation *with = obligation_new(&arena, "t", "A[i] == A[j]", 2, vs, 1, &hyp, goal, no_span);
	Obligation *without = obligation_new(&arena, "t", "A[i] == A[j]", 2, vs, 0, NULL, goal, no_span);
	ck_assert_int_eq(verdict_of(with, FLOAT_REAL), VERDICT_PROVEN);
	ObligationResult r = check_in(without, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	int64_t vi = model_var(&r, i)->val.ival, vj = model_var(&r, j)->val.ival;
	ck_assert_int_ne(vi, vj);
	ck_assert_int_eq(r.model->ncells, 2);
	bool seen_i = false, seen_j = false;
	for (int k = 0; k < r.model->ncells; k++) {
		const ModelCell *c = &r.model->cells[k];
		ck_assert_ptr_eq(c->buf, A);
		ck_assert_int_eq(c->nidx, 1);
		seen_i |= c->idx[0] == vi;
		seen_j |= c->idx[0] == vj;
	}
	ck_assert(seen_i && seen_j);
	ck_assert_int_ne(r.model->cells[0].val.ival, r.model->cells[1].val.ival);
}
END_TEST

START_TEST(two_dimensional_cells_and_distinct_buffers)
{
	Expr *shape[2] = {lit(4), lit(4)};
	Buffer *A = ir_buffer(&arena, "A", DT_FLOAT32, 2, shape, no_span);
	Buffer *B = ir_buffer(&arena, "A", DT_FLOAT32, 2, shape, no_span); /* same name */
	Var *i = var("i", DT_INT32);
	Expr *idx[2] = {ref(i), ir_add(&arena, ref(i), lit(1))};
	Expr *goal = eq(ir_load(&arena, A, 2, idx, no_span), ir_load(&arena, B, 2, idx, no_span));
	ObligationResult r = check_in(ob(0, NULL, goal), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(r.model->ncells, 2);
	ck_assert_ptr_ne(r.model->cells[0].buf, r.model->cells[1].buf);
	int64_t vi = model_var(&r, i)->val.ival;
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(r.model->cells[k].idx[0], vi);
		/* i + 1 is an int32: it wraps at i = 2^31 - 1 */
		ck_assert_int_eq(r.model->cells[k].idx[1], (int32_t)(uint32_t)(vi + 1));
		ck_assert(r.model->cells[k].val.is_float);
	}
}
END_TEST

/* ---------- floats: real vs ieee ---------- */

START_TEST(adding_zero_is_identity_only_in_real_mode)
{
	Var *x = var("x", DT_FLOAT32);
	Expr *goal = eq(ir_add(&arena, ref(x), flit(0.0, DT_FLOAT32)), ref(x));
	Obligation *o = obligation_new(&arena, "t", "x + 0.0 == x", 1, &x, 0, NULL, goal, no_span);
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	/* two counterexamples exist: NaN (NaN != NaN) and -0.0 */
	ObligationResult r = check_in(o, FLOAT_IEEE);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	const ModelVar *mv = model_var(&r, x);
	ck_assert(isnan(mv->val.fval) || (mv->val.fval == 0.0 && signbit(mv->val.fval)));
	/* excluding NaN leaves exactly -0.0 */
	Expr *notnan = not_nan(x);
	o = obligation_new(&arena, "t", "x + 0.0 == x", 1, &x, 1, &notnan, goal, no_span);
	r = check_in(o, FLOAT_IEEE);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	mv = model_var(&r, x);
	ck_assert(mv->val.is_float);
	ck_assert(mv->val.fval == 0.0);
	ck_assert(signbit(mv->val.fval));
	ck_assert_str_eq(mv->val.text, "-0.0");
	/* with -0.0 instead it holds for every x that is not NaN */
	Expr *neg0 = eq(ir_add(&arena, ref(x), flit(-0.0, DT_FLOAT32)), ref(x));
	ck_assert_int_eq(verdict_of(obligation_new(&arena, "t", "x + -0.0 == x", 1, &x, 1, &notnan,
						   neg0, no_span), FLOAT_IEEE),
			 VERDICT_PROVEN);
}
END_TEST

START_TEST(reassociation_holds_only_in_real_mode)
{
	DType ts[2] = {DT_FLOAT32, DT_FLOAT64};
	for (int k = 0; k < 2; k++) {
		Var *a = var("a", ts[k]), *b = var("b", ts[k]), *c = var("c", ts[k]);
		Expr *lhs = ir_add(&arena, ir_add(&arena, ref(a), ref(b)), ref(c));
		Expr *rhs = ir_add(&arena, ref(a), ir_add(&arena, ref(b), ref(c)));
		Obligation *o = ob(0, NULL, eq(lhs, rhs));
		ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
		ObligationResult r = check_in(o, FLOAT_IEEE);
		ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
		/* the counterexample really does not re-associate */
		double va = model_var(&r, a)->val.fval, vb = model_var(&r, b)->val.fval,
		       vc = model_var(&r, c)->val.fval;
		double l, rr;
		if (ts[k] == DT_FLOAT32) {
			volatile float fa = (float)va, fb = (float)vb, fc = (float)vc;
			l = (fa + fb) + fc;
			rr = fa + (fb + fc);
		} else {
			volatile double da = va, db = vb, dc = vc;
			l = (da + db) + dc;
			rr = da + (db + dc);
		}
		ck_assert(!(l == rr) || signbit(l) != signbit(rr));
	}
}
END_TEST

/* Inside terms `==` is IEEE (fp.eq). Between propositions it must hold
 * under the IEEE and the same-value reading alike: asserted (hypothesis)
 * it is the weaker of the two, denied (goal) the stronger. */
START_TEST(ieee_equality_readings)
{
	Var *x = var("x", DT_FLOAT64), *y = var("y", DT_FLOAT64);
	Expr *z = flit(0.0, DT_FLOAT64), *mz = flit(-0.0, DT_FLOAT64);
	Expr *nan = flit(NAN, DT_FLOAT64), *one = flit(1.0, DT_FLOAT64);
	Expr *sel1 = ir_select(&arena, eq(mz, z), lit(1), lit(0), no_span);
	Expr *sel2 = ir_select(&arena, bin(OP_NE, nan, nan), lit(1), lit(0), no_span);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(sel1, lit(1))), FLOAT_IEEE), VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(sel2, lit(1))), FLOAT_IEEE), VERDICT_PROVEN);
	/* a goal -0.0 == 0.0 may mean "the same value": not proven */
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(mz, z)), FLOAT_IEEE), VERDICT_REFUTED);
	/* a goal x == x fails for NaN under the IEEE reading */
	ObligationResult r = check_in(ob(0, NULL, eq(ref(x), ref(x))), FLOAT_IEEE);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert(isnan(model_var(&r, x)->val.fval));
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(ref(x), ref(x))), FLOAT_REAL), VERDICT_PROVEN);
	/* hypothesis y == 0.0 admits both zeros: y + 1 == 1 holds, y == 0.0
	 * as a goal does not (y may be -0.0) */
	Expr *hy = eq(ref(y), z);
	ck_assert_int_eq(verdict_of(ob(1, &hy, eq(ir_add(&arena, ref(y), one), one)), FLOAT_IEEE),
			 VERDICT_PROVEN);
	r = check_in(ob(1, &hy, eq(ref(y), z)), FLOAT_IEEE);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert(signbit(model_var(&r, y)->val.fval));
	/* 1/0 is +inf */
	Expr *inf = bin(OP_DIV, one, z);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(inf, flit(INFINITY, DT_FLOAT64))), FLOAT_IEEE),
			 VERDICT_PROVEN);
	/* x != x as a goal: not proven (the same-value reading says false) */
	ck_assert_int_eq(verdict_of(ob(0, NULL, bin(OP_NE, nan, nan)), FLOAT_IEEE), VERDICT_REFUTED);
}
END_TEST

/* A literal denotes exactly its value: the model of x == lit gives the
 * same bits back (subnormals, extremes, negative values). */
START_TEST(ieee_literals_round_trip_bit_exactly)
{
	static const double d64[] = {0.1, -1e300, 5e-324, DBL_MAX, -3.25, 1.0 / 3.0};
	static const float f32[] = {0.1f, 1e-40f, FLT_MAX, -3.25f, FLT_TRUE_MIN, 16777217.0f};
	for (int k = 0; k < 12; k++) {
		bool single = k >= 6;
		DType t = single ? DT_FLOAT32 : DT_FLOAT64;
		double v = single ? (double)f32[k - 6] : d64[k];
		Var *x = var("x", t);
		Obligation *o = obligation_new(&arena, "t", "x != lit", 1, &x, 0, NULL,
					       bin(OP_NE, ref(x), flit(v, t)), no_span);
		ObligationResult r = check_in(o, FLOAT_IEEE);
		ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
		double got = model_var(&r, x)->val.fval;
		ck_assert_msg(memcmp(&got, &v, sizeof v) == 0, "%a decoded as %a", v, got);
	}
}
END_TEST

/* ---------- float16: (_ FloatingPoint 5 11) in ieee mode ---------- */

/* (a + b) + c == a + (b + c) holds for reals, not for float16: the
 * counterexample does not re-associate when computed in half. */
START_TEST(float16_reassociation_is_refuted_in_ieee_mode)
{
	Var *a = var("a", DT_FLOAT16), *b = var("b", DT_FLOAT16), *c = var("c", DT_FLOAT16);
	Expr *lhs = ir_add(&arena, ir_add(&arena, ref(a), ref(b)), ref(c));
	Expr *rhs = ir_add(&arena, ref(a), ir_add(&arena, ref(b), ref(c)));
	Obligation *o = ob(0, NULL, eq(lhs, rhs));
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	ObligationResult r = check_in(o, FLOAT_IEEE);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	double va = model_var(&r, a)->val.fval, vb = model_var(&r, b)->val.fval,
	       vc = model_var(&r, c)->val.fval;
	/* the model's values are float16 values */
	ck_assert(isnan(va) || vs_f16_round(va) == va);
	ck_assert(isnan(vb) || vs_f16_round(vb) == vb);
	ck_assert(isnan(vc) || vs_f16_round(vc) == vc);
	double l = vs_f16_round(vs_f16_round(va + vb) + vc);
	double rr = vs_f16_round(va + vs_f16_round(vb + vc));
	ck_assert(!(l == rr) || signbit(l) != signbit(rr));
}
END_TEST

/* Literals round to the nearest half, ties to even, overflowing to inf;
 * casts round the same way; halves decode from the model bit-exactly. */
START_TEST(float16_literals_and_casts_round_to_nearest_even)
{
	const struct {
		double lit, want;
	} cases[] = {
		{0.1, 0.0999755859375},       {65504.0, 65504.0},
		{65519.0, 65504.0},           {65520.0, INFINITY},
		{-1e9, -INFINITY},            {2049.0, 2048.0},
		{2051.0, 2052.0},             {0x1p-24, 0x1p-24},
		{0x1p-25, 0.0},               {0x1.8p-24, 0x1p-23},
		{0x1.0000000001p-25, 0x1p-24}, {6.103515625e-05, 6.103515625e-05},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		Expr *goal = eq(flit(cases[k].lit, DT_FLOAT16), flit(cases[k].want, DT_FLOAT64));
		ck_assert_msg(verdict_of(ob(0, NULL, goal), FLOAT_IEEE) == VERDICT_PROVEN, "case %zu", k);
		/* the same through a cast from float64 */
		Expr *cast = ir_cast(&arena, DT_FLOAT16, flit(cases[k].lit, DT_FLOAT64), no_span);
		goal = eq(cast, flit(cases[k].want, DT_FLOAT16));
		ck_assert_msg(verdict_of(ob(0, NULL, goal), FLOAT_IEEE) == VERDICT_PROVEN,
			      "cast case %zu", k);
		if (!isfinite(cases[k].want) || cases[k].want == 0)
			continue;
		Var *x = var("x", DT_FLOAT16);
		ObligationResult r = check_in(ob(0, NULL, bin(OP_NE, ref(x), flit(cases[k].lit, DT_FLOAT16))),
					      FLOAT_IEEE);
		ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
		double got = model_var(&r, x)->val.fval;
		ck_assert_msg(got == cases[k].want, "case %zu: %a decoded as %a", k, cases[k].want, got);
	}
	/* int -> float16 rounds (2049 is a tie), float16 -> int truncates */
	Expr *ci = ir_cast(&arena, DT_FLOAT16, lit(2049), no_span);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(ci, flit(2048.0, DT_FLOAT16))), FLOAT_IEEE),
			 VERDICT_PROVEN);
	Expr *ct = ir_cast(&arena, DT_INT32, flit(-2.75, DT_FLOAT16), no_span);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(ct, lit(-2))), FLOAT_IEEE), VERDICT_PROVEN);
	/* the largest half doubled overflows to inf */
	Var *y = var("y", DT_FLOAT16);
	Expr *hy = eq(ref(y), flit(65504.0, DT_FLOAT16));
	Expr *dbl = ir_add(&arena, ref(y), ref(y));
	ck_assert_int_eq(verdict_of(ob(1, &hy, eq(dbl, flit(INFINITY, DT_FLOAT16))), FLOAT_IEEE),
			 VERDICT_PROVEN);
}
END_TEST

START_TEST(real_literals_are_exact_rationals)
{
	Var *x = var("x", DT_FLOAT64);
	Obligation *o = obligation_new(&arena, "t", "x != 0.1", 1, &x, 0, NULL,
				       bin(OP_NE, ref(x), flit(0.1, DT_FLOAT64)), no_span);
	ObligationResult r = check_in(o, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	const ModelVar *mv = model_var(&r, x);
	ck_assert_str_eq(mv->val.text, "3602879701896397/36028797018963968");
	ck_assert(mv->val.fval == 0.1);
	/* the smallest subnormal and a large power of two, exactly */
	Obligation *tiny = obligation_new(&arena, "t", "x != -2^-1074", 1, &x, 0, NULL,
					  bin(OP_NE, ref(x), flit(-0x1p-1074, DT_FLOAT64)), no_span);
	r = check_in(tiny, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_str_eq(model_var(&r, x)->val.text,
			 "-1/202402253307310618352495346718917307049556649764142118356901358027430339567995346891960383701437124495187077864316811911389808737385793476867013399940738509921517424276566361364466907742093216341239767678472745068562007483424692698618103355649159556340810056512358769552333414615230502532186327508646006263307707741093494784");
	const char *why = NULL;
	const char *t = smt_query_text(&arena, ob(0, NULL, eq(ref(x), flit(0x1p+60, DT_FLOAT64))),
				       FLOAT_REAL, &why);
	ck_assert_ptr_nonnull(strstr(t, "1152921504606846976"));
}
END_TEST

START_TEST(casts_truncate_and_convert)
{
	/* float -> int truncates toward zero in both modes */
	for (int m = 0; m < 2; m++) {
		FloatMode fm = m ? FLOAT_IEEE : FLOAT_REAL;
		Expr *c1 = ir_cast(&arena, DT_INT32, flit(-2.5, DT_FLOAT32), no_span);
		Expr *c2 = ir_cast(&arena, DT_INT32, flit(2.75, DT_FLOAT64), no_span);
		ck_assert_int_eq(verdict_of(ob(0, NULL, ir_and(&arena, eq(c1, lit(-2)), eq(c2, lit(2)))), fm),
				 VERDICT_PROVEN);
		/* int -> float -> int is the identity on small integers (a
		 * range is too hard for z3 in ieee mode: int/fp conversions of
		 * symbolic values time out, so a concrete value here) */
		Var *i = var("i", DT_INT32);
		Expr *h = m ? eq(ref(i), lit(-77))
			    : ir_and(&arena, bin(OP_LE, lit(-100), ref(i)), bin(OP_LE, ref(i), lit(100)));
		Expr *back = eq(ir_cast(&arena, DT_INT32, ir_cast(&arena, DT_FLOAT32, ref(i), no_span), no_span),
				ref(i));
		ObligationResult rb = check_in(ob(1, &h, back), fm);
		ck_assert_msg(rb.verdict == VERDICT_PROVEN, "%s: %s\n%s", float_mode_name(fm), rb.reason, rb.smt2);
	}
	/* float32 rounding of a large integer: 2^24 + 1 is not a float32 */
	Var *i = var("i", DT_INT32);
	Expr *h = eq(ref(i), lit(16777217));
	Expr *back = eq(ir_cast(&arena, DT_INT32, ir_cast(&arena, DT_FLOAT32, ref(i), no_span), no_span),
			ref(i));
	ck_assert_int_eq(verdict_of(ob(1, &h, back), FLOAT_IEEE), VERDICT_REFUTED);
	ck_assert_int_eq(verdict_of(ob(1, &h, back), FLOAT_REAL), VERDICT_PROVEN);
	/* a comparison of an integer with a float is in float64, as in the
	 * interpreter: 2^24 + 1 stays above the float32 2^24 */
	Var *f = var("f", DT_FLOAT32);
	Expr *hf = eq(ref(f), flit(16777216.0, DT_FLOAT32));
	for (int m = 0; m < 2; m++) {
		FloatMode fm = m ? FLOAT_IEEE : FLOAT_REAL;
		ck_assert_int_eq(verdict_of(ob(1, &hf, bin(OP_LT, ref(f), lit(16777217))), fm), VERDICT_PROVEN);
		Expr *hfi[2] = {hf, h};
		ck_assert_int_eq(verdict_of(ob(2, hfi, bin(OP_LT, ref(f), ref(i))), fm), VERDICT_PROVEN);
		/* an int8 literal 200 is -56 there too */
		ck_assert_int_eq(verdict_of(ob(1, &hf, bin(OP_GT, ref(f), ir_int(&arena, 200, DT_INT8, no_span))), fm),
				 VERDICT_PROVEN);
		ck_assert_int_eq(verdict_of(ob(0, NULL, eq(ir_add(&arena, flit(0.5, DT_FLOAT32),
								   ir_int(&arena, 200, DT_INT8, no_span)),
							   flit(-55.5, DT_FLOAT32))), fm),
				 VERDICT_PROVEN);
	}
	/* an integer literal next to a float adapts to the float */
	Var *x = var("x", DT_FLOAT32);
	Expr *g = eq(ir_mul(&arena, ref(x), lit(2)), ir_add(&arena, ref(x), ref(x)));
	Expr *hx = not_nan(x);
	ck_assert_int_eq(verdict_of(ob(1, &hx, g), FLOAT_IEEE), VERDICT_PROVEN);
	/* integers wrap to their dtype, as in the interpreter */
	Var *b = var("b", DT_UINT8);
	Expr *hb = eq(ref(b), lit(255));
	ck_assert_int_eq(verdict_of(ob(1, &hb, eq(ir_add(&arena, ref(b), lit(1)), lit(256))), FLOAT_REAL),
			 VERDICT_REFUTED);
	ck_assert_int_eq(verdict_of(ob(1, &hb, eq(ir_add(&arena, ref(b), lit(1)), lit(0))), FLOAT_REAL),
			 VERDICT_PROVEN);
}
END_TEST

/* ---------- other constructs ---------- */

START_TEST(select_min_max_let_bool)
{
	Var *i = var("i", DT_INT32), *j = var("j", DT_INT32), *t = var("t", DT_INT32);
	Var *p = var("p", DT_BOOL);
	Expr *mn = bin(OP_MIN, ref(i), ref(j)), *mx = bin(OP_MAX, ref(i), ref(j));
	Expr *g1 = eq(ir_add(&arena, mn, mx), ir_add(&arena, ref(i), ref(j)));
	ck_assert_int_eq(verdict_of(ob(0, NULL, g1), FLOAT_REAL), VERDICT_PROVEN);
	Expr *sel = ir_select(&arena, bin(OP_LT, ref(i), ref(j)), ref(i), ref(j), no_span);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(sel, mn)), FLOAT_REAL), VERDICT_PROVEN);
	/* let t = i + 1 in t * t >= 0 ... and the let variable is not free */
	Expr *let = ir_let(&arena, t, ir_add(&arena, ref(i), lit(1)),
			   eq(ir_sub(&arena, ref(t), lit(1)), ref(i)), no_span);
	ObligationResult r = check_in(ob(0, NULL, let), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_PROVEN);
	ck_assert_ptr_null(strstr(r.smt2, "t_"));
	Expr *excluded = ir_or(&arena, ref(p), ir_not(&arena, ref(p), no_span));
	ck_assert_int_eq(verdict_of(ob(0, NULL, excluded), FLOAT_REAL), VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, ref(p)), FLOAT_REAL), VERDICT_REFUTED);
	/* float min/max in ieee mode */
	Var *x = var("x", DT_FLOAT32);
	Expr *fm = bin(OP_MAX, ref(x), flit(1.0, DT_FLOAT32));
	ck_assert_int_eq(verdict_of(ob(0, NULL, bin(OP_GE, fm, flit(1.0, DT_FLOAT32))), FLOAT_IEEE),
			 VERDICT_PROVEN);
}
END_TEST

START_TEST(every_undef_is_a_fresh_value)
{
	Expr *u = ir_undef(&arena, DT_INT32, no_span);
	/* the same node twice is still two occurrences */
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(u, u)), FLOAT_REAL), VERDICT_REFUTED);
	ck_assert_int_eq(verdict_of(ob(0, NULL, eq(ir_mul(&arena, lit(0), u), lit(0))), FLOAT_REAL),
			 VERDICT_PROVEN);
}
END_TEST

/* ---------- limits and unsupported constructs ---------- */

/* x^3 + y^3 != z^3 for positive integers: true, and far beyond a 1 ms or
 * tiny resource budget. Never proven. The bound 2^20 keeps the cubes
 * and their sum inside int64 (no wrap: the ranges prove it), so this is
 * Fermat's problem and not one modulo 2^64. */
static Obligation *fermat_cubes(void)
{
	Var *x = var("x", DT_INT64), *y = var("y", DT_INT64), *z = var("z", DT_INT64);
	Expr *cube[3];
	Var *vs[3] = {x, y, z};
	Expr *hyps[3];
	for (int k = 0; k < 3; k++) {
		cube[k] = ir_mul(&arena, ir_mul(&arena, ref(vs[k]), ref(vs[k])), ref(vs[k]));
		hyps[k] = within(vs[k], 1, 1 << 20);
	}
	return obligation_new(&arena, "t", "Fermat n=3", 3, vs, 3, hyps,
			      bin(OP_NE, ir_add(&arena, cube[0], cube[1]), cube[2]), no_span);
}

START_TEST(limits_give_unknown_never_proven)
{
	SmtOptions tiny_time = {.timeout_ms = 1};
	Solver *s = smt_solver_new(&tiny_time);
	ObligationResult r;
	smt_discharge(s, &arena, fermat_cubes(), FLOAT_REAL, &r);
	smt_solver_free(s);
	ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
	ck_assert_str_eq(r.reason, "timeout");
	ck_assert_ptr_null(r.model);

	SmtOptions tiny_budget = {.rlimit = 1};
	s = smt_solver_new(&tiny_budget);
	smt_discharge(s, &arena, fermat_cubes(), FLOAT_REAL, &r);
	ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
	ck_assert_str_eq(r.reason, "resource limit");
	smt_solver_free(s);
}
END_TEST

/* Z3 4.8.12's own timer can deadlock once it expires (it hung forever
 * on this query with 5 and 50 ms); our watchdog must stop every one. */
START_TEST(short_timeouts_always_return)
{
	static const unsigned ms[] = {2, 5, 13, 50, 120};
	for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) {
		SmtOptions opt = {.timeout_ms = ms[k]};
		Solver *s = smt_solver_new(&opt);
		for (int round = 0; round < 3; round++) {
			ObligationResult r;
			smt_discharge(s, &arena, fermat_cubes(), FLOAT_REAL, &r);
			ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
			ck_assert_str_eq(r.reason, "timeout");
			ck_assert(r.seconds < 5.0);
		}
		smt_solver_free(s);
	}
}
END_TEST

/* Z3 does not poll for the interrupt everywhere (a 1000 ms limit once
 * returned after 2.1 s): the caller waits at most 1.25 times the limit
 * plus 250 ms, then gives the query up as a timeout. A generous bound
 * here, 10 times the limit, for a loaded machine; both alone and in a
 * batch on two threads, and queries after a lost one still work. */
static double wall_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

START_TEST(time_limits_bound_the_wait)
{
	enum { LIMIT_MS = 250, N = 4 };
	SmtOptions opt = {.timeout_ms = LIMIT_MS, .threads = 2};
	Solver *s = smt_solver_new(&opt);
	for (int round = 0; round < 4; round++) {
		ObligationResult r;
		double t0 = wall_now();
		smt_discharge(s, &arena, fermat_cubes(), FLOAT_REAL, &r);
		double t = wall_now() - t0;
		ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
		ck_assert_str_eq(r.reason, "timeout");
		ck_assert_msg(t < 10 * LIMIT_MS / 1000.0, "%.3f s for a %d ms limit", t, LIMIT_MS);
	}
	Obligation *obs[N];
	ObligationResult outs[N];
	for (int k = 0; k < N; k++)
		obs[k] = fermat_cubes();
	double t0 = wall_now();
	smt_discharge_all(s, &arena, N, obs, FLOAT_REAL, outs);
	double t = wall_now() - t0;
	for (int k = 0; k < N; k++) {
		ck_assert_int_eq(outs[k].verdict, VERDICT_UNKNOWN);
		ck_assert_str_eq(outs[k].reason, "timeout");
	}
	/* two threads, two queries each */
	ck_assert_msg(t < 2 * 10 * LIMIT_MS / 1000.0, "%.3f s for %d queries", t, N);
	/* the workers after the limits (the process's pool) still prove and
	 * refute, under a limit a loaded machine cannot turn into a timeout */
	smt_solver_free(s);
	s = smt_solver_new(&(SmtOptions){.timeout_ms = 60000, .threads = 2});
	Var *x = var("x", DT_INT32);
	Expr *h[1] = {within(x, 0, 10)};
	ObligationResult r;
	smt_discharge(s, &arena, ob(1, h, bin(OP_LE, ref(x), lit(10))), FLOAT_REAL, &r);
	ck_assert_msg(r.verdict == VERDICT_PROVEN, "%d %s", r.verdict, r.reason ? r.reason : "");
	smt_discharge(s, &arena, ob(1, h, bin(OP_LE, ref(x), lit(9))), FLOAT_REAL, &r);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	smt_solver_free(s);
}
END_TEST

START_TEST(unsupported_constructs_are_not_proven)
{
	Var *h = var("h", DT_HANDLE);
	ObligationResult r = check_in(ob(0, NULL, eq(ref(h), ref(h))), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
	ck_assert_msg(strncmp(r.reason, "unsupported:", 12) == 0, "%s", r.reason);
	ck_assert_ptr_null(r.smt2);

	Var *i = var("i", DT_INT32);
	r = check_in(ob(0, NULL, eq(bin(OP_DIV, ref(i), lit(2)), ref(i))), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(r.reason, "unsupported: true division"));

	/* infinity has no real value; in ieee mode it is fine */
	Var *x = var("x", DT_FLOAT32);
	Obligation *o = ob(0, NULL, bin(OP_LE, ref(x), flit(INFINITY, DT_FLOAT32)));
	r = check_in(o, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(r.reason, "unsupported"));
	ck_assert_int_eq(verdict_of(o, FLOAT_IEEE), VERDICT_REFUTED); /* NaN */

	const char *why = NULL;
	ck_assert_ptr_null(smt_query_text(&arena, ob(0, NULL, eq(ref(h), ref(h))), FLOAT_REAL, &why));
	ck_assert_ptr_nonnull(why);
	ck_assert(strncmp(why, "unsupported:", 12) == 0);
}
END_TEST

/* ---------- the query text and independent solvers ---------- */

/* "sat", "unsat", or whatever else the binary printed first */
static char *run_solver(const char *cmd, const char *text)
{
	char path[] = "/tmp/vsched-smt-XXXXXX.smt2";
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char line[256] = "";
	char *command = NULL;
	ck_assert_int_ge(asprintf(&command, "%s %s 2>&1", cmd, path), 0);
	FILE *p = popen(command, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(line, sizeof line, p))
		line[0] = '\0';
	char rest[256];
	while (fgets(rest, sizeof rest, p))
		;
	pclose(p);
	free(command);
	unlink(path);
	line[strcspn(line, "\r\n")] = '\0';
	return strdup(line);
}

START_TEST(query_text_agrees_with_z3_and_cvc5)
{
	Var *n = var("n", DT_INT32), *m = var("m", DT_INT32), *x = var("x", DT_FLOAT32);
	Var *d = var("d", DT_FLOAT64), *p = var("p", DT_BOOL);
	Expr *shape[1] = {lit(8)};
	Buffer *A = ir_buffer(&arena, "A", DT_FLOAT32, 1, shape, no_span);
	Expr *nn[1] = {ref(n)}, *mm[1] = {ref(m)};
	Expr *h8 = eq(bin(OP_FLOORMOD, ref(n), lit(8)), lit(0));
	Expr *hnm = eq(ref(n), ref(m));
	Expr *notnan = not_nan(x);
	struct {
		Obligation *o;
		FloatMode fm;
	} cases[] = {
		{ob(1, &h8, eq(bin(OP_FLOORMOD, ref(n), lit(4)), lit(0))), FLOAT_REAL},
		{ob(0, NULL, eq(bin(OP_FLOORMOD, ref(n), lit(4)), lit(0))), FLOAT_REAL},
		{ob(0, NULL, eq(bin(OP_FLOORDIV, lit(-7), lit(2)), lit(-4))), FLOAT_REAL},
		{ob(0, NULL, eq(bin(OP_FLOORMOD, ref(n), lit(-3)), bin(OP_FLOORMOD, ir_add(&arena, ref(n), lit(3)), lit(-3)))), FLOAT_REAL},
		{ob(1, &hnm, eq(ir_load(&arena, A, 1, nn, no_span), ir_load(&arena, A, 1, mm, no_span))), FLOAT_IEEE},
		{ob(0, NULL, eq(ir_load(&arena, A, 1, nn, no_span), ir_load(&arena, A, 1, mm, no_span))), FLOAT_REAL},
		{ob(0, NULL, eq(ir_add(&arena, ref(x), flit(0.0, DT_FLOAT32)), ref(x))), FLOAT_IEEE},
		{ob(1, &notnan, eq(ir_add(&arena, ref(x), flit(-0.0, DT_FLOAT32)), ref(x))), FLOAT_IEEE},
		{ob(0, NULL, eq(ir_add(&arena, ref(x), flit(0.0, DT_FLOAT32)), ref(x))), FLOAT_REAL},
		{ob(0, NULL, bin(OP_GE, bin(OP_MAX, ref(d), flit(0.5, DT_FLOAT64)), flit(0.5, DT_FLOAT64))), FLOAT_IEEE},
		{ob(0, NULL, eq(ir_cast(&arena, DT_FLOAT64, ir_cast(&arena, DT_FLOAT32, ref(d), no_span), no_span), ref(d))), FLOAT_IEEE},
		{ob(0, NULL, ir_or(&arena, ref(p), eq(ir_select(&arena, ref(p), lit(1), lit(2), no_span), lit(2)))), FLOAT_REAL},
		{ob(0, NULL, eq(ir_cast(&arena, DT_INT32, flit(-2.5, DT_FLOAT32), no_span), lit(-2))), FLOAT_IEEE},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		ObligationResult r = check_in(cases[k].o, cases[k].fm);
		ck_assert_msg(r.verdict != VERDICT_UNKNOWN, "case %zu: %s", k, r.reason);
		const char *want = r.verdict == VERDICT_PROVEN ? "unsat" : "sat";
		const char *why = NULL;
		const char *text = smt_query_text(&arena, cases[k].o, cases[k].fm, &why);
		ck_assert_ptr_nonnull(text);
		ck_assert_str_eq(text, r.smt2);
		ck_assert(strncmp(text, "(set-logic ALL)\n", 16) == 0);
		ck_assert_ptr_nonnull(strstr(text, "(check-sat)"));
		char *z = run_solver("z3 -T:30", text);
		char *c = run_solver("cvc5 --tlimit=30000", text);
		ck_assert_msg(strcmp(z, want) == 0, "case %zu: z3 says %s, want %s\n%s", k, z, want, text);
		ck_assert_msg(strcmp(c, want) == 0, "case %zu: cvc5 says %s, want %s\n%s", k, c, want, text);
		free(z);
		free(c);
	}
}
END_TEST

/* Division by a variable is nonlinear: cvc5 may answer unknown, which is
 * acceptable as long as it never contradicts the verdict. */
START_TEST(nonlinear_text_never_contradicts)
{
	Var *x = var("x", DT_INT32), *y = var("y", DT_INT32);
	Expr *q = bin(OP_FLOORDIV, ref(x), ref(y)), *r = bin(OP_FLOORMOD, ref(x), ref(y));
	Expr *hyps[2] = {within(x, -1000, 1000), within(y, 1, 1000)};
	Expr *goal = eq(ir_add(&arena, ir_mul(&arena, ref(y), q), r), ref(x));
	Obligation *cases[2] = {ob(2, hyps, goal), ob(0, NULL, bin(OP_LT, r, ref(y)))};
	for (int k = 0; k < 2; k++) {
		ObligationResult res = check_in(cases[k], FLOAT_REAL);
		ck_assert_int_ne(res.verdict, VERDICT_UNKNOWN);
		const char *want = res.verdict == VERDICT_PROVEN ? "unsat" : "sat";
		char *z = run_solver("z3 -T:30", res.smt2);
		char *c = run_solver("cvc5 --tlimit=30000", res.smt2);
		ck_assert_str_eq(z, want);
		ck_assert_msg(strcmp(c, want) == 0 || strcmp(c, "unknown") == 0, "cvc5: %s", c);
		free(z);
		free(c);
	}
}
END_TEST

START_TEST(query_text_is_deterministic_and_canonical)
{
	/* two obligations of the same shape over different Var objects */
	Obligation *o[2];
	for (int k = 0; k < 2; k++) {
		Var *i = var("i", DT_INT32);
		Expr *u = ir_add(&arena, ref(i), lit(1));
		Expr *g = eq(ir_mul(&arena, u, u), ir_add(&arena, ir_mul(&arena, u, u), lit(0)));
		o[k] = obligation_new(&arena, "t", "s", 1, &i, 0, NULL, g, no_span);
	}
	const char *why;
	const char *t0 = smt_query_text(&arena, o[0], FLOAT_REAL, &why);
	const char *t1 = smt_query_text(&arena, o[1], FLOAT_REAL, &why);
	ck_assert_str_eq(t0, t1);
	/* the same as what a reused solver context prints, after other work */
	Var *n = var("n", DT_INT32);
	check_in(ob(0, NULL, eq(bin(OP_FLOORMOD, ref(n), lit(4)), lit(0))), FLOAT_REAL);
	ObligationResult r = check_in(o[1], FLOAT_REAL);
	ck_assert_str_eq(r.smt2, t0);
	ck_assert_ptr_nonnull(strstr(t0, "(declare-fun i_0 () Int)"));
}
END_TEST

/* ---------- integers wrap like the interpreter ---------- */

static Expr *typed(int64_t v, DType t) { return ir_int(&arena, v, t, no_span); }
static Expr *lit64(int64_t v) { return ir_int(&arena, v, DT_INT64, no_span); }
static Expr *cast(DType t, Expr *x) { return ir_cast(&arena, t, x, no_span); }
static Expr *neg(Expr *x) { return ir_neg(&arena, x, no_span); }

/* Proven with the hypothesis v == value (NULL: no hypothesis). */
static Verdict verdict_at(Var *v, int64_t value, Expr *goal)
{
	Expr *h = v ? eq(ref(v), lit64(value)) : NULL;
	return verdict_of(ob(v ? 1 : 0, &h, goal), FLOAT_REAL);
}

/* Identities of mathematical integers that overflow breaks are refuted,
 * each with the value where the interpreter's arithmetic wraps. */
START_TEST(overflow_refutes_mathematical_identities)
{
	Var *x = var("x", DT_INT32), *b = var("b", DT_INT8), *l = var("l", DT_INT64);
	ObligationResult r = check_in(ob(0, NULL, bin(OP_GT, ir_add(&arena, ref(x), lit(1)), ref(x))),
				      FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&r, x)->val.ival, INT32_MAX);
	r = check_in(ob(0, NULL, bin(OP_GT, ir_add(&arena, ref(b), lit(1)), ref(b))), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&r, b)->val.ival, INT8_MAX);
	r = check_in(ob(0, NULL, bin(OP_GT, ir_add(&arena, ref(l), lit(1)), ref(l))), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&r, l)->val.ival, INT64_MAX);
	/* the no-op proof X[i] == (X[i] * 2) // 2 */
	Expr *shape[1] = {lit(16)};
	Buffer *X = ir_buffer(&arena, "X", DT_INT32, 1, shape, no_span);
	Var *i = var("i", DT_INT32);
	Expr *ii[1] = {ref(i)};
	Expr *cell = ir_load(&arena, X, 1, ii, no_span);
	Expr *h = within(i, 0, 15);
	r = check_in(ob(1, &h, eq(cell, bin(OP_FLOORDIV, ir_mul(&arena, cell, lit(2)), lit(2)))),
		     FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(r.model->ncells, 1);
	int64_t v = r.model->cells[0].val.ival;
	ck_assert_msg(v >= INT32_MIN && v <= INT32_MAX, "X[i] = %lld is no int32", (long long)v);
	ck_assert_msg(2 * v > INT32_MAX || 2 * v < INT32_MIN, "X[i] = %lld does not overflow",
		      (long long)v);
	/* split(i, 100) of an int8 loop of 120: the index io*100 + ii
	 * wraps past 127 while i never did (guard true at B[-128]) */
	Var *io = var("io", DT_INT8), *in = var("ii", DT_INT8);
	Expr *split_index = ir_add(&arena, ir_mul(&arena, ref(io), lit(100)), ref(in));
	Expr *tile[3] = {within(io, 0, 1), within(in, 0, 99), bin(OP_LT, split_index, lit(120))};
	r = check_in(ob(3, tile, bin(OP_LE, lit(0), split_index)), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&r, io)->val.ival, 1);
	ck_assert_int_ge(model_var(&r, in)->val.ival, 28);
	/* where the ranges rule overflow out, the identity is proven */
	Expr *small = within(x, -(1 << 29), 1 << 29);
	ck_assert_int_eq(verdict_of(ob(1, &small, eq(bin(OP_FLOORDIV, ir_mul(&arena, ref(x), lit(2)),
							  lit(2)), ref(x))), FLOAT_REAL),
			 VERDICT_PROVEN);
	Var *n = var("n", DT_INT32);
	Expr *below[1] = {bin(OP_LT, ref(x), ref(n))};
	ck_assert_int_eq(verdict_of(ob(1, below, bin(OP_GT, ir_add(&arena, ref(x), lit(1)), ref(x))),
				    FLOAT_REAL),
			 VERDICT_PROVEN);
}
END_TEST

/* What the interpreter computes at the edges, dtype by dtype. */
START_TEST(wrapped_values_are_proven_as_the_interpreter_computes_them)
{
	Var *b = var("b", DT_INT8), *s = var("s", DT_INT16), *x = var("x", DT_INT32);
	Var *l = var("l", DT_INT64), *u = var("u", DT_UINT8);
	struct {
		Var *v;
		int64_t value;
		Expr *goal;
	} cases[] = {
		{NULL, 0, eq(ir_add(&arena, typed(127, DT_INT8), typed(1, DT_INT8)), lit(-128))},
		{NULL, 0, eq(typed(200, DT_INT8), lit(-56))}, /* a literal wraps too */
		{b, 127, eq(ir_add(&arena, ref(b), lit(1)), lit(-128))},
		{b, -128, eq(neg(ref(b)), lit(-128))},
		{b, -128, eq(ir_sub(&arena, ref(b), lit(1)), lit(127))},
		{b, 100, eq(ir_mul(&arena, ref(b), lit(3)), lit(44))},
		{s, 32767, eq(ir_add(&arena, ref(s), lit(1)), lit(-32768))},
		{x, INT32_MAX, eq(ir_add(&arena, ref(x), lit(1)), lit(INT32_MIN))},
		{x, INT32_MIN, eq(neg(ref(x)), lit(INT32_MIN))},
		{x, INT32_MIN, eq(bin(OP_FLOORDIV, ref(x), lit(-1)), lit(INT32_MIN))},
		{x, INT32_MIN, eq(bin(OP_FLOORMOD, ref(x), lit(-1)), lit(0))},
		{x, 65536, eq(ir_mul(&arena, ref(x), ref(x)), lit(0))},
		{x, 300, eq(cast(DT_INT8, ref(x)), lit(44))},
		{x, -1, eq(cast(DT_UINT8, ref(x)), lit(255))},
		{x, 256, eq(cast(DT_BOOL, ref(x)), ir_bool(&arena, true))},
		{x, 256, eq(cast(DT_BOOL, cast(DT_INT8, ref(x))), ir_bool(&arena, false))},
		{x, -5, eq(cast(DT_INT64, ref(x)), lit(-5))},
		{l, INT64_MAX, eq(ir_add(&arena, ref(l), lit(1)), lit64(INT64_MIN))},
		{l, INT64_MIN, eq(bin(OP_FLOORDIV, ref(l), lit(-1)), lit64(INT64_MIN))},
		{l, INT64_C(1) << 40, eq(ir_mul(&arena, ref(l), ref(l)), lit64(0))},
		{l, (INT64_C(1) << 32) + 7, eq(cast(DT_INT32, ref(l)), lit(7))},
		{u, 0, eq(ir_sub(&arena, ref(u), lit(1)), lit(255))},
		{u, 255, eq(ir_add(&arena, ref(u), lit(1)), lit(0))},
		{u, 200, eq(cast(DT_INT8, ref(u)), lit(-56))},
		{u, 16, eq(ir_mul(&arena, ref(u), lit(16)), lit(0))},
		/* comparisons compare values, each at its own dtype */
		{b, -1, bin(OP_NE, ref(b), cast(DT_UINT8, ref(b)))},
		{b, 0, bin(OP_LT, ref(b), lit(200))},
		/* ring identities hold for every value */
		{NULL, 0, eq(ir_sub(&arena, ir_add(&arena, ref(x), lit(1)), lit(1)), ref(x))},
		{NULL, 0, eq(ir_add(&arena, ir_sub(&arena, ref(u), ref(b)), ref(b)), ref(u))},
		{NULL, 0, bin(OP_LT, ref(b), lit(200))},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		Expr *h = cases[k].v ? eq(ref(cases[k].v), lit64(cases[k].value)) : NULL;
		ObligationResult r = check_in(ob(cases[k].v ? 1 : 0, &h, cases[k].goal), FLOAT_REAL);
		ck_assert_msg(r.verdict == VERDICT_PROVEN, "case %zu: %s %s\n%s", k,
			      verdict_name(r.verdict), r.reason ? r.reason : "", r.smt2);
	}
	/* and the unwrapped value is refuted */
	ck_assert_int_eq(verdict_at(b, 127, eq(ir_add(&arena, ref(b), lit(1)), lit(128))),
			 VERDICT_REFUTED);
	ck_assert_int_eq(verdict_at(x, 300, eq(cast(DT_INT8, ref(x)), lit(300))), VERDICT_REFUTED);
}
END_TEST

static const char *text_of(Obligation *o)
{
	const char *why = NULL;
	const char *t = smt_query_text(&arena, o, FLOAT_REAL, &why);
	ck_assert_msg(t != NULL, "%s", why ? why : "?");
	return t;
}

/* Index arithmetic under its loop ranges (and a T.assume bound on a
 * symbolic extent) is provably inside int32: no wrap, no mod, linear. */
START_TEST(ranges_keep_index_arithmetic_wrap_free)
{
	Var *i = var("i", DT_INT32), *ii = var("ii", DT_INT32), *n = var("n", DT_INT32);
	Expr *idx = ir_add(&arena, ir_mul(&arena, ref(i), lit(4)), ref(ii));
	Expr *loops[2] = {within(i, 0, 15), ir_and(&arena, bin(OP_LE, lit(0), ref(ii)),
						    bin(OP_LT, ref(ii), lit(4)))};
	Obligation *o = ob(2, loops, bin(OP_LT, idx, lit(64)));
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	ck_assert_ptr_null(strstr(text_of(o), "mod"));
	/* the hypotheses state those bounds: no range fact repeats them, nor
	 * one that i < ii implies but no left-out wrap needs */
	Expr *ordered[3] = {loops[0], loops[1], bin(OP_LT, ref(i), ref(ii))};
	const char *t = text_of(ob(3, ordered, bin(OP_LT, idx, lit(64))));
	ck_assert_msg(strstr(t, "value ranges") == NULL, "%s", t);
	/* symbolic extent: 0 <= i < n, n <= 1024 (an assumption) */
	Expr *sym[3] = {ir_and(&arena, bin(OP_LE, lit(0), ref(i)), bin(OP_LT, ref(i), ref(n))),
			loops[1], bin(OP_LE, ref(n), lit(1024))};
	Expr *goal = bin(OP_LT, idx, ir_mul(&arena, ref(n), lit(4)));
	o = ob(3, sym, goal);
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	t = text_of(o);
	ck_assert_msg(strstr(t, "mod") == NULL, "%s", t);
	/* the bound n < 1024 narrows i, and the query says so */
	ck_assert_ptr_nonnull(strstr(t, "(<= i_0 1023)"));
	/* without the assumption n*4 can wrap: refuted, and the text wraps */
	o = ob(2, sym, goal);
	ObligationResult r = check_in(o, FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_gt(model_var(&r, n)->val.ival, INT32_MAX / 4);
	ck_assert_ptr_nonnull(strstr(r.smt2, "4294967296"));
	/* bounds from the negated goal count too: not (0 <= j < 8 and ...) */
	Var *j = var("j", DT_INT32);
	Expr *conflict = ir_and(&arena, within(j, 0, 7), eq(ir_add(&arena, ir_mul(&arena, ref(j), lit(8)), lit(1)),
							    lit(0)));
	o = ob(0, NULL, ir_not(&arena, conflict, no_span));
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	ck_assert_ptr_null(strstr(text_of(o), "mod"));
}
END_TEST

/* Every integer variable holds a value of its dtype (a range fact unless
 * the hypotheses state it), so a counterexample is a reachable state. */
START_TEST(variables_stay_inside_their_dtype)
{
	Var *b = var("b", DT_INT8), *u = var("u", DT_UINT8);
	/* with mathematical integers b = 1000 would refute this */
	ck_assert_int_eq(verdict_of(ob(0, NULL, bin(OP_LE, cast(DT_INT32, ref(b)), lit(127))), FLOAT_REAL),
			 VERDICT_PROVEN);
	ObligationResult r = check_in(ob(0, NULL, bin(OP_LT, ref(u), lit(255))), FLOAT_REAL);
	ck_assert_int_eq(r.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&r, u)->val.ival, 255);
	const char *t = text_of(ob(0, NULL, bin(OP_NE, ir_add(&arena, ref(u), ref(u)), lit(7))));
	ck_assert_msg(strstr(t, "(assert (! (and (<= 0 u_0) (<= u_0 255)) :named range_1))") != NULL, "%s", t);
	/* a bound stated against constants is not repeated */
	Var *i = var("i", DT_INT32);
	Expr *h = within(i, 0, 9);
	t = text_of(ob(1, &h, bin(OP_LT, ref(i), lit(10))));
	ck_assert_ptr_null(strstr(t, "2147483647"));
	/* cells and T.undef() of integer dtype too */
	Expr *shape[1] = {lit(4)};
	Buffer *B = ir_buffer(&arena, "B", DT_UINT8, 1, shape, no_span);
	Expr *zero[1] = {lit(0)};
	ck_assert_int_eq(verdict_of(ob(0, NULL, bin(OP_GE, ir_load(&arena, B, 1, zero, no_span), lit(0))),
				    FLOAT_REAL),
			 VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(ob(0, NULL, bin(OP_LE, ir_undef(&arena, DT_INT8, no_span), lit(127))),
				    FLOAT_REAL),
			 VERDICT_PROVEN);
}
END_TEST

START_TEST(wrapping_text_agrees_with_z3_and_cvc5)
{
	Var *x = var("x", DT_INT32), *b = var("b", DT_INT8), *l = var("l", DT_INT64);
	Var *u = var("u", DT_UINT8), *n = var("n", DT_INT32), *i = var("i", DT_INT32);
	Expr *hn = eq(ref(x), lit(INT32_MIN));
	Expr *sym[2] = {ir_and(&arena, bin(OP_LE, lit(0), ref(i)), bin(OP_LT, ref(i), ref(n))),
			bin(OP_LE, ref(n), lit(1024))};
	Obligation *cases[] = {
		ob(0, NULL, bin(OP_GT, ir_add(&arena, ref(x), lit(1)), ref(x))),
		ob(0, NULL, eq(bin(OP_FLOORDIV, ir_mul(&arena, ref(x), lit(2)), lit(2)), ref(x))),
		ob(0, NULL, eq(ir_add(&arena, typed(127, DT_INT8), typed(1, DT_INT8)), lit(-128))),
		ob(0, NULL, eq(ir_sub(&arena, ir_add(&arena, ref(x), lit(1)), lit(1)), ref(x))),
		ob(1, &hn, eq(bin(OP_FLOORDIV, ref(x), lit(-1)), ref(x))),
		ob(0, NULL, bin(OP_LE, cast(DT_INT32, ref(b)), lit(127))),
		ob(0, NULL, bin(OP_GT, ir_add(&arena, ref(l), lit(1)), ref(l))),
		ob(0, NULL, eq(ir_add(&arena, ir_sub(&arena, ref(u), ref(b)), ref(b)), ref(u))),
		ob(0, NULL, eq(cast(DT_INT8, cast(DT_UINT8, ref(b))), ref(b))),
		ob(2, sym, bin(OP_LT, ir_add(&arena, ir_mul(&arena, ref(i), lit(4)), lit(3)),
			       ir_mul(&arena, ref(n), lit(4)))),
		ob(1, sym, bin(OP_LT, ir_add(&arena, ir_mul(&arena, ref(i), lit(4)), lit(3)),
			       ir_mul(&arena, ref(n), lit(4)))),
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		ObligationResult r = check_in(cases[k], FLOAT_REAL);
		ck_assert_msg(r.verdict != VERDICT_UNKNOWN, "case %zu: %s", k, r.reason);
		const char *want = r.verdict == VERDICT_PROVEN ? "unsat" : "sat";
		char *z = run_solver("z3 -T:30", r.smt2);
		char *c = run_solver("cvc5 --tlimit=30000", r.smt2);
		ck_assert_msg(strcmp(z, want) == 0, "case %zu: z3 says %s, want %s\n%s", k, z, want, r.smt2);
		ck_assert_msg(strcmp(c, want) == 0, "case %zu: cvc5 says %s, want %s\n%s", k, c, want, r.smt2);
		free(z);
		free(c);
	}
}
END_TEST

/* ---------- differential: the encoding against the interpreter ----------
 * Random small integer expressions over int8, int16, int32, int64 and
 * uint8 variables, built with the IR constructors (so literals adapt and
 * operands of mixed dtypes meet, as in rewritten IR). The interpreter
 * evaluates `R[0] = e` on random values; Z3 must prove e == that value
 * and refute e != it, with each variable pinned through a term the range
 * analysis cannot read (v + 0 == value) and bounded by a random interval
 * around its value (so wraps are both written and left out). */

typedef struct DiffGen {
	uint64_t rng;
	int nvars;
	Var **vars;
} DiffGen;

static uint64_t diff_next(DiffGen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static unsigned diff_pick(DiffGen *g, unsigned n) { return (unsigned)(diff_next(g) % n); }

static const DType int_dtypes[] = {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8};

/* v as a value of t (C's conversions: two's complement) */
static int64_t value_of(int64_t v, DType t)
{
	switch (t) {
	case DT_INT8: return (int8_t)v;
	case DT_INT16: return (int16_t)v;
	case DT_INT32: return (int32_t)v;
	case DT_UINT8: return (uint8_t)v;
	default: return v;
	}
}

/* Mostly values near the edges of some dtype, where wraps happen. */
static int64_t diff_value(DiffGen *g)
{
	static const int64_t edges[] = {0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, -32768,
					INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 65536, 1 << 20};
	switch (diff_pick(g, 4)) {
	case 0: return (int64_t)diff_pick(g, 41) - 20;
	case 1: return (int64_t)diff_next(g);
	default: return edges[diff_pick(g, sizeof edges / sizeof *edges)];
	}
}

static Expr *diff_expr(DiffGen *g, int depth)
{
	if (depth == 0 || diff_pick(g, 5) == 0) {
		if (diff_pick(g, 3))
			return ref(g->vars[diff_pick(g, (unsigned)g->nvars)]);
		DType t = diff_pick(g, 2) ? DT_INT32 : int_dtypes[diff_pick(g, 5)];
		int64_t v = diff_value(g);
		return typed(t == DT_INT64 ? v : value_of(v, t), t);
	}
	static const BinOp ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_FLOORMOD, OP_MIN, OP_MAX};
	switch (diff_pick(g, 10)) {
	case 0: return neg(diff_expr(g, depth - 1));
	case 1: return cast(int_dtypes[diff_pick(g, 5)], diff_expr(g, depth - 1));
	case 2: {
		static const BinOp cmps[] = {OP_LT, OP_LE, OP_EQ, OP_NE, OP_GT, OP_GE};
		Expr *c = bin(cmps[diff_pick(g, 6)], diff_expr(g, depth - 1), diff_expr(g, depth - 1));
		return ir_select(&arena, c, diff_expr(g, depth - 1), diff_expr(g, depth - 1), no_span);
	}
	default:
		return bin(ops[diff_pick(g, 7)], diff_expr(g, depth - 1), diff_expr(g, depth - 1));
	}
}

/* R[0] = e in a function of the variables: the interpreter's value of e,
 * or false on UB (a division by zero). */
static bool interp_value(DiffGen *g, Expr *e, const int64_t *values, int64_t *out)
{
	Expr *shape[1] = {lit(1)}, *zero[1] = {lit(0)};
	Buffer *R = ir_buffer(&arena, "R", e->dtype, 1, shape, no_span);
	Param params[8];
	params[0] = (Param){PARAM_BUFFER, NULL, R};
	for (int k = 0; k < g->nvars; k++)
		params[k + 1] = (Param){PARAM_SCALAR, g->vars[k], NULL};
	Func *f = ir_func(&arena, "f", g->nvars + 1, params,
			  ir_store(&arena, R, 1, zero, e, no_span), no_span);
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, values, &d);
	ck_assert_ptr_nonnull(st);
	InterpResult r;
	RunStatus s = interp_run(f, st, 0, &r);
	if (s == RUN_UB)
		return false;
	ck_assert_msg(s == RUN_OK, "%s", r.message);
	*out = st->bufs[0].data[0].i;
	return true;
}

/* iv_arith and iv_convert contain every exact result of points
 * taken from their operand ranges (floor // and %, two's complement). */
static Wide exact_floor_div(Wide a, Wide b)
{
	Wide q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

START_TEST(interval_arithmetic_contains_every_result)
{
	DiffGen g = {0xD1B54A32D192ED03ull, 0, NULL};
	static const BinOp ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_FLOORMOD, OP_MIN, OP_MAX};
	for (int trial = 0; trial < 20000; trial++) {
		DType t = int_dtypes[diff_pick(&g, 5)];
		Interval a, b, m;
		Wide p[2];
		Interval *rs[2] = {&a, &b};
		for (int k = 0; k < 2; k++) {
			int64_t x = value_of(diff_value(&g), t), y = value_of(diff_value(&g), t);
			if (diff_pick(&g, 2))
				y = value_of((int64_t)((uint64_t)x + diff_pick(&g, 20)), t);
			*rs[k] = (Interval){x < y ? x : y, x < y ? y : x};
			Wide span = rs[k]->hi - rs[k]->lo;
			p[k] = rs[k]->lo + (span ? (Wide)(diff_next(&g) % (uint64_t)(span > (Wide)UINT64_MAX ? UINT64_MAX : span)) : 0);
			if (diff_pick(&g, 4) == 0)
				p[k] = diff_pick(&g, 2) ? rs[k]->lo : rs[k]->hi;
		}
		BinOp op = ops[diff_pick(&g, 7)];
		m = iv_arith(op, a, b);
		if (!iv_is_bounded(m)) {
			ck_assert(op == OP_FLOORDIV || op == OP_FLOORMOD);
			ck_assert(b.lo <= 0 && 0 <= b.hi);
			continue;
		}
		Wide r = 0;
		switch (op) {
		case OP_ADD: r = p[0] + p[1]; break;
		case OP_SUB: r = p[0] - p[1]; break;
		case OP_MUL: r = p[0] * p[1]; break;
		case OP_FLOORDIV: r = exact_floor_div(p[0], p[1]); break;
		case OP_FLOORMOD: r = p[0] - p[1] * exact_floor_div(p[0], p[1]); break;
		case OP_MIN: r = p[0] < p[1] ? p[0] : p[1]; break;
		case OP_MAX: r = p[0] > p[1] ? p[0] : p[1]; break;
		default: ck_abort();
		}
		ck_assert_msg(m.lo <= r && r <= m.hi, "trial %d: %s", trial, binop_symbol(op));
		DType to = int_dtypes[diff_pick(&g, 5)];
		Interval c = iv_convert(a, t, to);
		int64_t cv = value_of((int64_t)p[0], to);
		ck_assert_msg(c.lo <= cv && cv <= c.hi, "trial %d: %s -> %s", trial, dtype_name(t),
			      dtype_name(to));
	}
}
END_TEST

START_TEST(random_expressions_agree_with_the_interpreter)
{
	enum { CASES = 150 };
	DType dts[6] = {DT_INT8, DT_INT8, DT_INT32, DT_INT32, DT_UINT8, DT_INT64};
	const char *names[6] = {"a", "b", "x", "y", "u", "l"};
	Var *vars[6];
	for (int k = 0; k < 6; k++)
		vars[k] = var(names[k], dts[k]);
	DiffGen g = {0x9E3779B97F4A7C15ull, 6, vars};
	int checked = 0, wrapped = 0;
	for (int c = 0; checked < CASES && c < 4 * CASES; c++) {
		Expr *e = diff_expr(&g, 1 + (int)diff_pick(&g, 3));
		int64_t values[6];
		Expr *hyps[12];
		for (int k = 0; k < 6; k++) {
			values[k] = value_of(diff_value(&g), dts[k]);
			/* v + 0 == value pins v; lo <= v <= hi bounds it */
			hyps[2 * k] = eq(ir_add(&arena, ref(vars[k]), lit(0)), lit64(values[k]));
			int64_t lo, hi;
			if (__builtin_sub_overflow(values[k], (int64_t)diff_pick(&g, 3) * 100, &lo))
				lo = INT64_MIN;
			if (__builtin_add_overflow(values[k], (int64_t)diff_pick(&g, 3) * 100, &hi))
				hi = INT64_MAX;
			hyps[2 * k + 1] = ir_and(&arena, bin(OP_LE, lit64(lo), ref(vars[k])),
						 bin(OP_LE, ref(vars[k]), lit64(hi)));
		}
		int64_t want;
		if (!interp_value(&g, e, values, &want))
			continue; /* UB: a division by zero */
		checked++;
		/* the interval of e under the bounds of the hypotheses holds
		 * the interpreter's value */
		RangeInfo *ri = ranges_new(false);
		Interval in;
		ck_assert(ranges_learn(ri, 12, hyps, ir_bool(&arena, true)));
		ck_assert(ranges_value(ri, e, &in));
		ranges_free(ri);
		ck_assert_msg(in.lo <= want && want <= in.hi, "case %d: %lld outside [%lld, %lld]", c,
			      (long long)want, (long long)in.lo, (long long)in.hi);
		Obligation *same = ob(12, hyps, eq(e, lit64(want)));
		Obligation *other = ob(12, hyps, bin(OP_NE, e, lit64(want)));
		ObligationResult r = check_in(same, FLOAT_REAL);
		wrapped += strstr(r.smt2 ? r.smt2 : "", "mod") != NULL;
		ck_assert_msg(r.verdict == VERDICT_PROVEN, "case %d: interpreter says %lld; %s %s\n%s", c,
			      (long long)want, verdict_name(r.verdict), r.reason ? r.reason : "", r.smt2);
		ObligationResult ro = check_in(other, FLOAT_REAL);
		ck_assert_msg(ro.verdict == VERDICT_REFUTED, "case %d: e != %lld is %s\n%s", c,
			      (long long)want, verdict_name(ro.verdict), ro.smt2);
		/* the logged text says the same to z3, for a sample */
		if (checked % 25 == 0) {
			char *z = run_solver("z3 -T:30", r.smt2);
			ck_assert_msg(strcmp(z, "unsat") == 0, "z3 says %s\n%s", z, r.smt2);
			free(z);
		}
	}
	ck_assert_int_eq(checked, CASES);
	ck_assert_int_gt(wrapped, CASES / 10); /* the wraps were exercised */
}
END_TEST

/* A counterexample is a reachable state: for random e and c, when
 * `lo <= v <= hi for each v => e <= c` is refuted, the interpreter at the
 * model's values computes e > c (every variable inside its dtype). */
START_TEST(random_counterexamples_are_interpreter_states)
{
	enum { CASES = 120 };
	DType dts[6] = {DT_INT8, DT_INT8, DT_INT32, DT_INT32, DT_UINT8, DT_INT64};
	const char *names[6] = {"a", "b", "x", "y", "u", "l"};
	Var *vars[6];
	for (int k = 0; k < 6; k++)
		vars[k] = var(names[k], dts[k]);
	DiffGen g = {0x94D049BB133111EBull, 6, vars};
	int refuted = 0, proven = 0;
	for (int c = 0; c < CASES; c++) {
		Expr *e = diff_expr(&g, 1 + (int)diff_pick(&g, 2));
		Expr *hyps[6];
		for (int k = 0; k < 6; k++) {
			int64_t p = value_of(diff_value(&g), dts[k]), q = value_of(diff_value(&g), dts[k]);
			hyps[k] = diff_pick(&g, 2) ? within(vars[k], p < q ? p : q, p < q ? q : p)
						   : bin(OP_GE, ref(vars[k]), lit64(p));
		}
		int64_t bound = diff_value(&g);
		ObligationResult r = check_in(ob(6, hyps, bin(OP_LE, e, lit64(bound))), FLOAT_REAL);
		proven += r.verdict == VERDICT_PROVEN;
		if (r.verdict != VERDICT_REFUTED)
			continue;
		int64_t values[6];
		for (int k = 0; k < 6; k++) {
			const ModelVar *mv = NULL;
			for (int m = 0; m < r.model->nvars; m++)
				if (r.model->vars[m].var == vars[k])
					mv = &r.model->vars[m];
			values[k] = mv ? mv->val.ival : 0; /* absent: unconstrained */
			ck_assert_msg(values[k] == value_of(values[k], dts[k]),
				      "case %d: %s = %lld is no %s\n%s", c, names[k],
				      (long long)values[k], dtype_name(dts[k]), r.smt2);
		}
		int64_t got;
		if (!interp_value(&g, e, values, &got))
			continue; /* the model divides by zero: UB, any value */
		refuted++;
		ck_assert_msg(got > bound, "case %d: the interpreter computes %lld <= %lld\n%s", c,
			      (long long)got, (long long)bound, r.smt2);
	}
	ck_assert_int_gt(refuted, CASES / 5);
	ck_assert_int_gt(proven, CASES / 20);
}
END_TEST

/* ---------- the cache and threads ---------- */

START_TEST(identical_queries_are_answered_from_the_cache)
{
	Var *n = var("n", DT_INT32);
	Expr *goal = eq(bin(OP_FLOORMOD, ref(n), lit(4)), lit(0));
	Obligation *o = obligation_new(&arena, "t", "s", 1, &n, 0, NULL, goal, no_span);
	ObligationResult a = check_in(o, FLOAT_REAL), b = check_in(o, FLOAT_REAL);
	ck_assert(!a.cached);
	ck_assert(b.cached);
	ck_assert_int_eq(a.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(b.verdict, VERDICT_REFUTED);
	ck_assert_int_eq(model_var(&b, n)->val.ival, model_var(&a, n)->val.ival);
	/* a structurally equal obligation over a new Var: cached, and the
	 * model speaks about the new Var */
	Var *n2 = var("n", DT_INT32);
	Obligation *o2 = obligation_new(&arena, "t", "s", 1, &n2, 0, NULL,
					eq(bin(OP_FLOORMOD, ref(n2), lit(4)), lit(0)), no_span);
	ObligationResult c = check_in(o2, FLOAT_REAL);
	ck_assert(c.cached);
	ck_assert_int_eq(model_var(&c, n2)->val.ival, model_var(&a, n)->val.ival);
	/* a different float mode with a float in it is a different query */
	Var *x = var("x", DT_FLOAT32);
	Obligation *f = ob(0, NULL, eq(ir_add(&arena, ref(x), flit(0.0, DT_FLOAT32)), ref(x)));
	ObligationResult fr = check_in(f, FLOAT_REAL), fi = check_in(f, FLOAT_IEEE);
	ck_assert(!fi.cached);
	ck_assert_int_ne(fr.verdict, fi.verdict);
}
END_TEST

START_TEST(parallel_discharge_matches_sequential)
{
	enum { N = 24 };
	Obligation *obs[N];
	Verdict want[N];
	for (int k = 0; k < N; k++) {
		Var *n = var("n", DT_INT32);
		Expr *h = eq(bin(OP_FLOORMOD, ref(n), lit(2 * (k % 6 + 1))), lit(0));
		Expr *g = eq(bin(OP_FLOORMOD, ref(n), lit(k % 4 + 1)), lit(0));
		obs[k] = obligation_new(&arena, "t", "s", 1, &n, 1, &h, g, no_span);
		want[k] = (2 * (k % 6 + 1)) % (k % 4 + 1) == 0 ? VERDICT_PROVEN : VERDICT_REFUTED;
	}
	SmtOptions opt = {.threads = 4};
	Solver *s = smt_solver_new(&opt);
	ObligationResult outs[N];
	smt_discharge_all(s, &arena, N, obs, FLOAT_REAL, outs);
	for (int k = 0; k < N; k++) {
		ck_assert_msg(outs[k].verdict == want[k], "obligation %d", k);
		if (want[k] == VERDICT_REFUTED)
			ck_assert_ptr_eq(outs[k].model->vars[0].var, obs[k]->vars[0]);
	}
	/* again: everything from the cache now */
	smt_discharge_all(s, &arena, N, obs, FLOAT_REAL, outs);
	for (int k = 0; k < N; k++) {
		ck_assert(outs[k].cached);
		ck_assert_int_eq(outs[k].verdict, want[k]);
	}
	smt_solver_free(s);
}
END_TEST

START_TEST(solver_version_names_z3)
{
	ck_assert(strncmp(smt_solver_version(), "z3 4.", 5) == 0);
}
END_TEST

/* tests/test_smt_diff.c: the encoder against the interpreter on random
 * expressions of every dtype */
TCase *smt_encoder_diff_tcase(void);

/* ---------- math calls: uninterpreted functions (semantics.md 9) ---------- */

static Expr *mcall(MathFn f, Expr *x, Expr *y)
{
	Expr *args[3] = {x, y, NULL};
	return ir_call(&arena, f, args, no_span);
}

START_TEST(math_calls_that_move_are_proven_in_both_modes)
{
	Expr *shape[1] = {lit(16)};
	Buffer *A = ir_buffer(&arena, "A", DT_FLOAT32, 1, shape, no_span);
	Var *i = var("i", DT_INT32), *j = var("j", DT_INT32);
	Expr *ii[1] = {ref(i)}, *jj[1] = {ref(j)};
	Expr *ai = ir_load(&arena, A, 1, ii, no_span), *aj = ir_load(&arena, A, 1, jj, no_span);
	Expr *hyp = eq(ref(i), ref(j));
	/* the same call on the same cell, reached through equal indices */
	Obligation *o = ob(1, &hyp, eq(mcall(MF_EXP, ai, NULL), mcall(MF_EXP, aj, NULL)));
	o->same_value = true;
	ck_assert_int_eq(verdict_of(o, FLOAT_REAL), VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(o, FLOAT_IEEE), VERDICT_PROVEN);
	/* a two-operand call: congruence in every operand */
	Var *x = var("x", DT_FLOAT64);
	Obligation *p = ob(0, NULL, eq(mcall(MF_POW, ref(x), flit(2.0, DT_FLOAT64)),
				       mcall(MF_POW, ref(x), flit(2.0, DT_FLOAT64))));
	p->same_value = true;
	ck_assert_int_eq(verdict_of(p, FLOAT_IEEE), VERDICT_PROVEN);
	ck_assert_int_eq(verdict_of(p, FLOAT_REAL), VERDICT_PROVEN);
}
END_TEST

START_TEST(math_call_properties_are_not_proven)
{
	Var *x = var("x", DT_FLOAT32), *d = var("d", DT_FLOAT64), *n = var("n", DT_INT32);
	Expr *notnan = not_nan(x);
	struct { Expr *goal; int nhyps; Expr **hyps; } cases[] = {
		/* exp(x) > 0 needs a property of exp */
		{bin(OP_GT, mcall(MF_EXP, ref(x), NULL), flit(0.0, DT_FLOAT32)), 0, NULL},
		{bin(OP_GT, mcall(MF_EXP, ref(x), NULL), flit(0.0, DT_FLOAT32)), 1, &notnan},
		/* sqrt(x) * sqrt(x) == x */
		{eq(bin(OP_MUL, mcall(MF_SQRT, ref(d), NULL), mcall(MF_SQRT, ref(d), NULL)), ref(d)), 0, NULL},
		/* exp in float32 and in float64 are different functions */
		{eq(ir_cast(&arena, DT_FLOAT64, mcall(MF_EXP, ref(x), NULL), no_span),
		    mcall(MF_EXP, ir_cast(&arena, DT_FLOAT64, ref(x), no_span), NULL)), 0, NULL},
		/* different names are different functions */
		{eq(mcall(MF_FLOOR, ref(d), NULL), mcall(MF_TRUNC, ref(d), NULL)), 0, NULL},
		/* integer abs too: abs(n) >= 0 fails at the minimum anyway */
		{bin(OP_GE, mcall(MF_ABS, ref(n), NULL), lit(0)), 0, NULL},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
		for (int m = k == 1 ? 1 : 0; m < 2; m++) { /* -inf: ieee mode only */
			FloatMode fm = m ? FLOAT_IEEE : FLOAT_REAL;
			ObligationResult r = check_in(ob(cases[k].nhyps, cases[k].hyps, cases[k].goal), fm);
			ck_assert_msg(r.verdict == VERDICT_REFUTED, "case %zu (%s mode): %s", k,
				      m ? "ieee" : "real", verdict_name(r.verdict));
			ck_assert_ptr_nonnull(r.model);
			ck_assert_ptr_nonnull(strstr(r.smt2, "(declare-fun"));
		}
}
END_TEST

START_TEST(integer_math_calls_stay_in_their_dtype)
{
	/* the value of an int8 call is an int8: a range fact */
	Var *n = var("n", DT_INT8);
	Expr *a = mcall(MF_ABS, ref(n), NULL);
	Expr *goal = ir_and(&arena, bin(OP_LE, ir_cast(&arena, DT_INT32, a, no_span), lit(127)),
			    bin(OP_GE, ir_cast(&arena, DT_INT32, a, no_span), lit(-128)));
	ck_assert_int_eq(verdict_of(ob(0, NULL, goal), FLOAT_REAL), VERDICT_PROVEN);
	Expr *tight = bin(OP_LE, ir_cast(&arena, DT_INT32, a, no_span), lit(126));
	ck_assert_int_eq(verdict_of(ob(0, NULL, tight), FLOAT_REAL), VERDICT_REFUTED);
}
END_TEST

START_TEST(math_call_text_agrees_with_z3_and_cvc5)
{
	Var *x = var("x", DT_FLOAT32), *d = var("d", DT_FLOAT64), *n = var("n", DT_INT32);
	Expr *eqx = eq(ref(x), ref(x));
	struct { Obligation *o; FloatMode fm; bool same; } cases[] = {
		{ob(0, NULL, eq(mcall(MF_EXP, ref(x), NULL), mcall(MF_EXP, ref(x), NULL))), FLOAT_IEEE, true},
		{ob(0, NULL, eq(mcall(MF_EXP, ref(x), NULL), mcall(MF_EXP, ref(x), NULL))), FLOAT_REAL, false},
		{ob(1, &eqx, bin(OP_GT, mcall(MF_EXP, ref(x), NULL), flit(0.0, DT_FLOAT32))), FLOAT_IEEE, false},
		{ob(0, NULL, bin(OP_GT, mcall(MF_SQRT, ref(d), NULL), flit(-1.0, DT_FLOAT64))), FLOAT_REAL, false},
		{ob(0, NULL, eq(mcall(MF_POW, ref(d), ref(d)), mcall(MF_POW, ref(d), ref(d)))), FLOAT_REAL, false},
		{ob(0, NULL, bin(OP_GE, mcall(MF_ABS, ref(n), NULL), lit(-2147483647 - 1))), FLOAT_REAL, false},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		cases[k].o->same_value = cases[k].same;
		ObligationResult r = check_in(cases[k].o, cases[k].fm);
		ck_assert_msg(r.verdict != VERDICT_UNKNOWN, "case %zu: %s", k, r.reason);
		const char *want = r.verdict == VERDICT_PROVEN ? "unsat" : "sat";
		char *z = run_solver("z3 -T:30", r.smt2);
		char *c = run_solver("cvc5 --tlimit=30000", r.smt2);
		ck_assert_msg(strcmp(z, want) == 0, "case %zu: z3 says %s, want %s\n%s", k, z, want, r.smt2);
		ck_assert_msg(strcmp(c, want) == 0, "case %zu: cvc5 says %s, want %s\n%s", k, c, want, r.smt2);
		free(z);
		free(c);
	}
}
END_TEST

Suite *suite_smt(void)
{
	Suite *s = suite_create("smt");
	TCase *tc = tcase_create("floor_division");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, floor_division_literals_follow_the_brief);
	tcase_add_test(tc, floor_division_matches_python_for_every_sign);
	tcase_add_test(tc, floor_division_by_constants_is_exact_for_all_values);
	tcase_add_test(tc, floor_division_by_a_variable_reconstructs_the_dividend);
	tcase_add_test(tc, constant_divisor_gives_linear_text);
	tcase_add_test(tc, divisibility_needs_its_hypothesis);
	suite_add_tcase(s, tc);

	tc = tcase_create("buffers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, buffer_loads_are_uninterpreted_functions);
	tcase_add_test(tc, two_dimensional_cells_and_distinct_buffers);
	suite_add_tcase(s, tc);

	tc = tcase_create("floats");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, adding_zero_is_identity_only_in_real_mode);
	tcase_add_test(tc, reassociation_holds_only_in_real_mode);
	tcase_add_test(tc, ieee_equality_readings);
	tcase_add_test(tc, ieee_literals_round_trip_bit_exactly);
	tcase_add_test(tc, real_literals_are_exact_rationals);
	tcase_add_test(tc, casts_truncate_and_convert);
	suite_add_tcase(s, tc);

	tc = tcase_create("float16");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, float16_reassociation_is_refuted_in_ieee_mode);
	tcase_add_test(tc, float16_literals_and_casts_round_to_nearest_even);
	suite_add_tcase(s, tc);

	tc = tcase_create("constructs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, select_min_max_let_bool);
	tcase_add_test(tc, every_undef_is_a_fresh_value);
	suite_add_tcase(s, tc);

	tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, math_calls_that_move_are_proven_in_both_modes);
	tcase_add_test(tc, math_call_properties_are_not_proven);
	tcase_add_test(tc, integer_math_calls_stay_in_their_dtype);
	tcase_add_test(tc, math_call_text_agrees_with_z3_and_cvc5);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, limits_give_unknown_never_proven);
	tcase_add_test(tc, short_timeouts_always_return);
	tcase_add_test(tc, time_limits_bound_the_wait);
	tcase_add_test(tc, unsupported_constructs_are_not_proven);
	suite_add_tcase(s, tc);

	tc = tcase_create("query_text");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, query_text_agrees_with_z3_and_cvc5);
	tcase_add_test(tc, nonlinear_text_never_contradicts);
	tcase_add_test(tc, query_text_is_deterministic_and_canonical);
	suite_add_tcase(s, tc);

	tc = tcase_create("wrap_around");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, overflow_refutes_mathematical_identities);
	tcase_add_test(tc, wrapped_values_are_proven_as_the_interpreter_computes_them);
	tcase_add_test(tc, ranges_keep_index_arithmetic_wrap_free);
	tcase_add_test(tc, variables_stay_inside_their_dtype);
	tcase_add_test(tc, wrapping_text_agrees_with_z3_and_cvc5);
	tcase_add_test(tc, interval_arithmetic_contains_every_result);
	tcase_add_test(tc, random_expressions_agree_with_the_interpreter);
	tcase_add_test(tc, random_counterexamples_are_interpreter_states);
	suite_add_tcase(s, tc);

	tc = tcase_create("cache_threads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, identical_queries_are_answered_from_the_cache);
	tcase_add_test(tc, parallel_discharge_matches_sequential);
	tcase_add_test(tc, solver_version_names_z3);
	suite_add_tcase(s, tc);

	suite_add_tcase(s, smt_encoder_diff_tcase());
	return s;
}
