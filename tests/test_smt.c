/* tests/test_smt.c — smt/: encoding (floor division for every sign,
 * buffers as uninterpreted functions, real vs IEEE floats, casts, lets,
 * undef, math calls), verdicts and models, limits, unsupported constructs,
 * the cache and threads. The query text re-checked by the z3 and cvc5
 * binaries and integers wrapping like the interpreter are in
 * test_smt_wrap.c, the differential test in test_smt_diff.c; the helpers
 * test_smt.c and test_smt_wrap.c share in test_smt_int.h. */
#include "tests/test_smt_int.h"

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

	suite_add_tcase(s, smt_query_text_tcase());

	suite_add_tcase(s, smt_wrap_around_tcase());

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
