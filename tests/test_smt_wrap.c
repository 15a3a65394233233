/* tests/test_smt_wrap.c — the smt suite's query_text and wrap_around cases
 * (suite_smt in test_smt.c adds them): the query text re-checked by the z3
 * and cvc5 binaries and deterministic, integers wrapping to their dtype like
 * the interpreter, interval ranges that leave wraps out, and random
 * expressions and counterexamples against the interpreter. */
#include "tests/test_smt_int.h"

/* ---------- the query text and independent solvers ---------- */

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

TCase *smt_query_text_tcase(void)
{
	TCase *tc = tcase_create("query_text");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, query_text_agrees_with_z3_and_cvc5);
	tcase_add_test(tc, nonlinear_text_never_contradicts);
	tcase_add_test(tc, query_text_is_deterministic_and_canonical);
	return tc;
}

TCase *smt_wrap_around_tcase(void)
{
	TCase *tc = tcase_create("wrap_around");
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
	return tc;
}
