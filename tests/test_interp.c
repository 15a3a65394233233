/* tests/test_interp.c — the reference interpreter: arithmetic and
 * wrapping, UB detection with messages and spans, T.undef() tracking,
 * shifts, allocate_const, let expressions, math calls, float16, and the
 * compiled form against the tree walk. States, input generation, the
 * differential check and the conformance kernels are in
 * test_interp_states.c; the helpers both use in test_interp_int.h. */
#include "tests/test_interp_int.h"

/* Run `R[0] = e` with R of dtype t; the stored value in *out. */
static RunStatus run_expr(Expr *e, DType t, Value *out, InterpResult *r)
{
	Buffer *R = buf1("R", t, 1);
	Func *f = func1(R, store(R, i32(0), e));
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, NULL, &d);
	ck_assert_ptr_nonnull(st);
	RunStatus s = interp_run(f, st, 0, r);
	*out = st->bufs[0].data[0];
	return s;
}

static int64_t int_result(Expr *e, DType t)
{
	Value v;
	InterpResult r;
	RunStatus s = run_expr(e, t, &v, &r);
	ck_assert_msg(s == RUN_OK, "run failed: %s", r.message ? r.message : "?");
	return v.i;
}

static double float_result(Expr *e)
{
	Value v;
	InterpResult r;
	ck_assert_int_eq(run_expr(e, DT_FLOAT32, &v, &r), RUN_OK);
	return v.f;
}

static RunStatus run_fresh(Func *f, const int64_t *scalars, InterpResult *r, State **out);

/* ---------- arithmetic ---------- */

static const struct {
	BinOp op;
	DType t;
	int64_t a, b, want;
} int_cases[] = {
	{OP_FLOORDIV, DT_INT32, -7, 2, -4},
	{OP_FLOORMOD, DT_INT32, -7, 2, 1},
	{OP_FLOORDIV, DT_INT32, 7, -2, -4},
	{OP_FLOORMOD, DT_INT32, 7, -2, -1},
	{OP_FLOORDIV, DT_INT32, -7, -2, 3},
	{OP_FLOORMOD, DT_INT32, -7, -2, -1},
	{OP_FLOORDIV, DT_INT32, -8, 2, -4},
	{OP_FLOORMOD, DT_INT32, -8, 2, 0},
	{OP_FLOORDIV, DT_INT32, 7, 2, 3},
	{OP_FLOORMOD, DT_INT32, -1, 16, 15},
	{OP_DIV, DT_INT32, -7, 2, -3}, /* `/` on ints truncates (TVM Div) */
	{OP_ADD, DT_INT32, 2147483647, 1, -2147483648LL},
	{OP_SUB, DT_INT32, -2147483648LL, 1, 2147483647},
	{OP_MUL, DT_INT32, 65536, 65536, 0},
	{OP_MUL, DT_INT32, 65537, 65537, 131073},
	{OP_ADD, DT_INT8, 127, 1, -128},
	{OP_MUL, DT_INT16, 300, 300, 24464},
	{OP_ADD, DT_UINT8, 200, 100, 44},
	{OP_SUB, DT_UINT8, 0, 1, 255},
	{OP_ADD, DT_INT64, INT64_MAX, 1, INT64_MIN},
	{OP_FLOORDIV, DT_INT64, INT64_MIN, -1, INT64_MIN},
	{OP_FLOORMOD, DT_INT64, INT64_MIN, -1, 0},
	{OP_FLOORDIV, DT_INT32, -2147483648LL, -1, -2147483648LL},
	{OP_MIN, DT_INT32, -3, 2, -3},
	{OP_MAX, DT_INT32, -3, 2, 2},
	{OP_LT, DT_INT32, -3, 2, 1},
	{OP_GE, DT_INT32, -3, 2, 0},
	{OP_EQ, DT_UINT8, 255, 255, 1},
	{OP_NE, DT_INT32, 4, 4, 0},
};

START_TEST(int_ops_floor_and_wrap)
{
	for (size_t i = 0; i < sizeof int_cases / sizeof *int_cases; i++) {
		DType t = int_cases[i].t;
		Expr *e = bin(int_cases[i].op, lit(int_cases[i].a, t), lit(int_cases[i].b, t));
		DType rt = binop_is_compare(int_cases[i].op) ? DT_INT32 : t;
		int64_t got = int_result(e, rt);
		ck_assert_msg(got == int_cases[i].want, "case %zu: %lld %s %lld (%s) = %lld, want %lld",
			      i, (long long)int_cases[i].a, binop_symbol(int_cases[i].op),
			      (long long)int_cases[i].b, dtype_name(t), (long long)got,
			      (long long)int_cases[i].want);
	}
}
END_TEST

START_TEST(float32_results_are_rounded)
{
	ck_assert(float_result(bin(OP_ADD, flt(0.1), flt(0.2))) == (double)(0.1f + 0.2f));
	ck_assert(float_result(bin(OP_ADD, flt(16777216.0), flt(1.0))) == 16777216.0);
	ck_assert(float_result(bin(OP_FLOORDIV, flt(-7.0), flt(2.0))) == -4.0);
	ck_assert(float_result(bin(OP_FLOORMOD, flt(-7.0), flt(2.0))) == 1.0);
	ck_assert(float_result(bin(OP_DIV, flt(1.0), flt(3.0))) == (double)(1.0f / 3.0f));
	double z = float_result(ir_neg(&arena, flt(0.0), S0));
	ck_assert(z == 0 && signbit(z));
	/* an int literal beside a float adapts */
	ck_assert(float_result(bin(OP_MUL, i32(2), flt(1.25))) == 2.5);
}
END_TEST

START_TEST(casts_truncate_and_wrap)
{
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_INT32, flt(-2.75), S0), DT_INT32), -2);
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_INT32, flt(2.75), S0), DT_INT32), 2);
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_INT8, i32(300), S0), DT_INT8), 44);
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_UINT8, i32(-1), S0), DT_UINT8), 255);
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_BOOL, i32(7), S0), DT_INT32), 1);
	ck_assert(float_result(ir_cast(&arena, DT_FLOAT32, i32(16777217), S0)) == 16777216.0);
	Value v;
	InterpResult r;
	Expr *big = ir_cast(&arena, DT_INT32, ir_float(&arena, 3e9, DT_FLOAT64, S0), at(9));
	ck_assert_int_eq(run_expr(big, DT_INT32, &v, &r), RUN_UB);
	ck_assert_ptr_nonnull(strstr(r.message, "out of range"));
	ck_assert_int_eq(r.span.line, 9);
}
END_TEST

START_TEST(select_and_logic_evaluate_lazily)
{
	Expr *div0 = bin(OP_FLOORDIV, i32(1), i32(0));
	Expr *sel = ir_select(&arena, ir_bool(&arena, true), i32(5), div0, S0);
	ck_assert_int_eq(int_result(sel, DT_INT32), 5);
	Expr *c_or = bin(OP_OR, bin(OP_LT, i32(0), i32(1)), bin(OP_EQ, div0, i32(0)));
	ck_assert_int_eq(int_result(c_or, DT_INT32), 1);
	Expr *c_and = bin(OP_AND, bin(OP_GT, i32(0), i32(1)), bin(OP_EQ, div0, i32(0)));
	ck_assert_int_eq(int_result(c_and, DT_INT32), 0);
	/* a guard in front of an out-of-bounds load */
	Buffer *A = buf1("A", DT_INT32, 3), *R = buf1("R", DT_INT32, 1);
	Var *i = var("i");
	Expr *guard = bin(OP_AND, bin(OP_LT, ref(i), i32(3)), bin(OP_GT, ld(A, ref(i)), i32(-100)));
	Stmt *body = seq2(store(R, i32(0), i32(0)),
			  loop(i, 5, ir_if(&arena, guard,
					   store(R, i32(0), bin(OP_ADD, ld(R, i32(0)), i32(1))),
					   NULL, S0)));
	Func *f = func2(A, R, body);
	DiagList d;
	diag_init(&d, &arena);
	State *st = interp_gen_input(&arena, f, 1, &d);
	ck_assert_ptr_nonnull(st);
	InterpResult r;
	ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
	ck_assert_int_eq(st->bufs[1].data[0].i, 3);
	ck_assert_uint_eq(r.counts.branches, 5);
	ck_assert_uint_eq(r.counts.iterations, 5);
	ck_assert_uint_eq(r.counts.stores, 4);
	ck_assert_uint_eq(r.counts.loads, 6); /* 3 guarded A loads, 3 R loads */
}
END_TEST

START_TEST(let_and_scalars)
{
	Var *x = var("x");
	Expr *e = ir_let(&arena, x, i32(3), bin(OP_MUL, ref(x), ref(x)), S0);
	ck_assert_int_eq(int_result(e, DT_INT32), 9);
	/* scalar params are wrapped to their dtype */
	Var *s = ir_var(&arena, "s", DT_INT8, S0);
	Buffer *R = buf1("R", DT_INT32, 1);
	Param p[2] = {pscalar(s), pbuf(R)};
	Func *f = ir_func(&arena, "f", 2, p,
			  store(R, i32(0), ir_cast(&arena, DT_INT32, ref(s), S0)), S0);
	int64_t sv = 300;
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, &sv, &d);
	ck_assert_int_eq(st->scalars[0].i, 44);
	InterpResult r;
	ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
	ck_assert_int_eq(st->bufs[0].data[0].i, 44);
}
END_TEST

START_TEST(vars_from_two_arenas_with_equal_ids)
{
	/* ids are unique per arena only: a loop variable made in another
	 * arena may share the id of a scalar parameter */
	Var *n = var("n");
	Arena other;
	arena_init(&other);
	Var *i = ir_var(&other, "i", DT_INT32, S0);
	i->id = n->id;
	Buffer *R = buf1("R", DT_INT32, 1);
	Param p[2] = {pscalar(n), pbuf(R)};
	Stmt *body = seq2(store(R, i32(0), i32(0)),
			  loop(i, 3, store(R, i32(0), bin(OP_ADD, ld(R, i32(0)),
							  bin(OP_ADD, ref(n), ref(i))))));
	Func *f = ir_func(&arena, "f", 2, p, body, S0);
	int64_t sc = 10;
	InterpResult r;
	State *st;
	ck_assert_int_eq(run_fresh(f, &sc, &r, &st), RUN_OK);
	ck_assert_int_eq(st->bufs[0].data[0].i, 33); /* (10+0) + (10+1) + (10+2) */
	arena_free(&other);
}
END_TEST

START_TEST(unbound_buffer_is_reported)
{
	Buffer *R = buf1("R", DT_INT32, 1), *X = buf1("X", DT_INT32, 1);
	Func *f = func1(R, store(R, i32(0), ld(X, i32(0))));
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, NULL, &r, NULL), RUN_UB);
	ck_assert_str_eq(r.message, "load of buffer X, which is not in scope");
}
END_TEST

/* ---------- undefined behaviour ---------- */

static RunStatus run_fresh(Func *f, const int64_t *scalars, InterpResult *r, State **out)
{
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, scalars, &d);
	ck_assert_ptr_nonnull(st);
	for (int i = 0; i < st->nbufs; i++)
		for (int64_t k = 0; k < st->bufs[i].size; k++)
			st->bufs[i].cell[k] = CELL_INIT;
	if (out)
		*out = st;
	return interp_run(f, st, 0, r);
}

START_TEST(ub_out_of_bounds_load)
{
	int64_t shape[2] = {3, 4};
	Buffer *A = buf("A", DT_INT32, 2, shape), *R = buf1("R", DT_INT32, 1);
	Expr *bad = ld2(A, i32(3), i32(4));
	bad->span = at(42);
	Func *f = func2(A, R, store(R, i32(0), bad));
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, NULL, &r, NULL), RUN_UB);
	ck_assert_str_eq(r.message, "load A[3, 4] out of bounds of shape (3, 4)");
	ck_assert_int_eq(r.span.line, 42);
	/* negative indices are out of bounds too */
	f = func2(A, R, store(R, i32(0), ld2(A, i32(0), i32(-1))));
	ck_assert_int_eq(run_fresh(f, NULL, &r, NULL), RUN_UB);
	ck_assert_str_eq(r.message, "load A[0, -1] out of bounds of shape (3, 4)");
}
END_TEST

START_TEST(ub_out_of_bounds_store)
{
	Buffer *B = buf1("B", DT_INT32, 14);
	Var *i = var("i");
	Stmt *s = store(B, ref(i), i32(0));
	s->span = at(7);
	Func *f = func1(B, loop(i, 15, s));
	InterpResult r;
	State *st;
	ck_assert_int_eq(run_fresh(f, NULL, &r, &st), RUN_UB);
	ck_assert_str_eq(r.message, "store B[14] out of bounds of shape (14,)");
	ck_assert_int_eq(r.span.line, 7);
	ck_assert_uint_eq(r.counts.stores, 14);
}
END_TEST

START_TEST(ub_read_of_uninitialised_local)
{
	Buffer *L = buf1("L", DT_INT32, 4), *R = buf1("R", DT_INT32, 1);
	Expr *rd = ld(L, i32(2));
	rd->span = at(5);
	Stmt *body = ir_alloc(&arena, L,
			      seq2(store(L, i32(1), i32(3)), store(R, i32(0), rd)), S0);
	Func *f = func1(R, body);
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, NULL, &r, NULL), RUN_UB);
	ck_assert_str_eq(r.message, "read of uninitialised L[2]");
	ck_assert_int_eq(r.span.line, 5);
	/* the written cell reads fine */
	f = func1(R, ir_alloc(&arena, L, seq2(store(L, i32(1), i32(3)),
					      store(R, i32(0), ld(L, i32(1)))), S0));
	State *st;
	ck_assert_int_eq(run_fresh(f, NULL, &r, &st), RUN_OK);
	ck_assert_int_eq(st->bufs[0].data[0].i, 3);
}
END_TEST

START_TEST(ub_division_and_modulo_by_zero)
{
	Var *x = var("x"), *y = var("y");
	Buffer *R = buf1("R", DT_INT32, 1);
	BinOp ops[2] = {OP_FLOORDIV, OP_FLOORMOD};
	for (int k = 0; k < 2; k++) {
		Expr *e = ir_bin(&arena, ops[k], ref(x), ref(y), at(11 + k));
		Param p[3] = {pscalar(x), pscalar(y), pbuf(R)};
		Func *f = ir_func(&arena, "f", 3, p, store(R, i32(0), e), S0);
		int64_t sc[2] = {7, 0};
		InterpResult r;
		ck_assert_int_eq(run_fresh(f, sc, &r, NULL), RUN_UB);
		ck_assert_ptr_nonnull(strstr(r.message, k ? "modulo by zero" : "division by zero"));
		ck_assert_int_eq(r.span.line, 11 + k);
		sc[1] = -2;
		State *st;
		ck_assert_int_eq(run_fresh(f, sc, &r, &st), RUN_OK);
		ck_assert_int_eq(st->bufs[0].data[0].i, k ? -1 : -4);
	}
}
END_TEST

START_TEST(failed_assume_is_not_ub)
{
	Var *n = var("n");
	Buffer *R = buf1("R", DT_INT32, 1);
	Stmt *as = ir_assume(&arena, bin(OP_GT, ref(n), i32(100)), at(3));
	Param p[2] = {pscalar(n), pbuf(R)};
	Func *f = ir_func(&arena, "f", 2, p, seq2(as, store(R, i32(0), ref(n))), S0);
	int64_t sc = 3;
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, &sc, &r, NULL), RUN_ASSUME_FAILED);
	ck_assert_ptr_nonnull(strstr(r.message, "n > 100"));
	ck_assert_ptr_nonnull(strstr(r.message, "does not hold"));
	ck_assert_int_eq(r.span.line, 3);
	sc = 101;
	ck_assert_int_eq(run_fresh(f, &sc, &r, NULL), RUN_OK);
}
END_TEST

START_TEST(undef_in_index_is_ub)
{
	Buffer *A = buf1("A", DT_INT32, 4);
	Func *f = func1(A, store(A, ir_undef(&arena, DT_INT32, S0), i32(1)));
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, NULL, &r, NULL), RUN_UB);
	ck_assert_ptr_nonnull(strstr(r.message, "T.undef() used in an index"));
}
END_TEST

START_TEST(step_limit_stops_the_run)
{
	Buffer *A = buf1("A", DT_INT32, 1);
	Var *i = var("i");
	Func *f = func1(A, loop(i, 1000, store(A, i32(0), ref(i))));
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, NULL, &d);
	InterpResult r;
	ck_assert_int_eq(interp_run(f, st, 100, &r), RUN_LIMIT);
	ck_assert_ptr_nonnull(strstr(r.message, "step limit"));
	ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
	ck_assert_int_eq(st->bufs[0].data[0].i, 999);
}
END_TEST

/* ---------- T.undef() ---------- */

START_TEST(undef_store_marks_cell)
{
	Buffer *B = buf1("B", DT_INT32, 5);
	Expr *u = ir_undef(&arena, DT_INT32, S0);
	Stmt *items[5] = {
		store(B, i32(0), ir_undef(&arena, DT_INT32, S0)),
		store(B, i32(1), bin(OP_MUL, i32(0), u)),              /* 0 * undef */
		store(B, i32(2), bin(OP_ADD, ir_undef(&arena, DT_INT32, S0), i32(1))),
		store(B, i32(3), bin(OP_MUL, ld(B, i32(0)), i32(2))), /* reads undef */
		store(B, i32(4), bin(OP_MUL, ld(B, i32(0)), i32(0))), /* undef * 0 */
	};
	Func *f = func1(B, ir_seq(&arena, 5, items, S0));
	InterpResult r;
	State *st;
	ck_assert_int_eq(run_fresh(f, NULL, &r, &st), RUN_OK);
	const uint8_t *c = st->bufs[0].cell;
	ck_assert_int_eq(c[0], CELL_UNDEF);
	ck_assert_int_eq(c[1], CELL_INIT);
	ck_assert_int_eq(st->bufs[0].data[1].i, 0);
	ck_assert_int_eq(c[2], CELL_UNDEF);
	ck_assert_int_eq(c[3], CELL_UNDEF);
	ck_assert_int_eq(c[4], CELL_INIT);
	ck_assert_int_eq(st->bufs[0].data[4].i, 0);
	/* a let variable bound to T.undef() carries it to the store */
	Var *x = var("x");
	Stmt *let = ir_letstmt(&arena, x, ir_undef(&arena, DT_INT32, S0),
			       seq2(store(B, i32(0), ref(x)), store(B, i32(1), i32(4))), S0);
	f = func1(B, let);
	ck_assert_int_eq(run_fresh(f, NULL, &r, &st), RUN_OK);
	ck_assert_int_eq(st->bufs[0].cell[0], CELL_UNDEF);
	ck_assert_int_eq(st->bufs[0].cell[1], CELL_INIT);
}
END_TEST

/* for t in 0..4: T.assume(cond(t) or L[t] == T.undef()) after writing
 * L[0] and L[1] of a local buffer L. */
static Func *assume_readable(bool guard_low)
{
	Buffer *L = buf1("L", DT_INT32, 4), *R = buf1("R", DT_INT32, 1);
	Var *t = var("t");
	Expr *cond = guard_low ? bin(OP_GE, ref(t), i32(2)) : bin(OP_LT, ref(t), i32(2));
	Expr *fact = bin(OP_OR, cond, bin(OP_EQ, ld(L, ref(t)), ir_undef(&arena, DT_INT32, S0)));
	Stmt *body = seq3(store(L, i32(0), i32(1)), store(L, i32(1), i32(2)),
			  seq2(loop(t, 4, ir_assume(&arena, fact, at(8))),
			       store(R, i32(0), ld(L, i32(1)))));
	return func1(R, ir_alloc(&arena, L, body, S0));
}

START_TEST(assume_undef_means_readable)
{
	InterpResult r;
	State *st;
	ck_assert_int_eq(run_fresh(assume_readable(true), NULL, &r, &st), RUN_OK);
	ck_assert_int_eq(st->bufs[0].data[0].i, 2);
	ck_assert_int_eq(run_fresh(assume_readable(false), NULL, &r, &st), RUN_ASSUME_FAILED);
	ck_assert_ptr_nonnull(strstr(r.message, "at t=2"));
	ck_assert_int_eq(r.span.line, 8);
}
END_TEST

/* ---------- math calls ---------- */

static Expr *mcall(MathFn f, Expr *x, Expr *y, Expr *z)
{
	Expr *args[3] = {x, y, z};
	return ir_call(&arena, f, args, S0);
}

static Expr *f64(double v) { return ir_float(&arena, v, DT_FLOAT64, S0); }

static double f64_result(Expr *e)
{
	Value v;
	InterpResult r;
	ck_assert_int_eq(run_expr(e, DT_FLOAT64, &v, &r), RUN_OK);
	return v.f;
}

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

START_TEST(math_calls_compute_what_libm_computes)
{
	/* float32 through the float functions, each result float32 */
	static const float xs[] = {0.3f, -1.7f, 2.5f, -0.5f, 11.0f, 1e-3f};
	for (size_t k = 0; k < sizeof xs / sizeof *xs; k++) {
		float x = xs[k];
		ck_assert(same_bits(float_result(mcall(MF_EXP, flt(x), NULL, NULL)), expf(x)));
		ck_assert(same_bits(float_result(mcall(MF_TANH, flt(x), NULL, NULL)), tanhf(x)));
		ck_assert(same_bits(float_result(mcall(MF_ERF, flt(x), NULL, NULL)), erff(x)));
		ck_assert(same_bits(float_result(mcall(MF_POW, flt(fabsf(x)), flt(x), NULL)),
				    powf(fabsf(x), x)));
		float t = expf(-x), d = 1.0f + t;
		ck_assert(same_bits(float_result(mcall(MF_SIGMOID, flt(x), NULL, NULL)), 1.0f / d));
		ck_assert(same_bits(f64_result(mcall(MF_EXP, f64(x), NULL, NULL)), exp(x)));
		ck_assert(same_bits(f64_result(mcall(MF_LOG, f64(fabs(x)), NULL, NULL)), log(fabs(x))));
	}
	/* fma rounds once: 0.1f * 10 - 1 is 0 in two roundings, not in one */
	float fx = 0.1f;
	ck_assert(same_bits(float_result(mcall(MF_FMA, flt(fx), flt(10.0), flt(-1.0))),
			    fmaf(fx, 10.0f, -1.0f)));
	ck_assert(float_result(mcall(MF_FMA, flt(fx), flt(10.0), flt(-1.0))) != 0.0);
	/* round: to nearest, ties to even (TVM, numpy) */
	ck_assert(float_result(mcall(MF_ROUND, flt(2.5), NULL, NULL)) == 2.0);
	ck_assert(float_result(mcall(MF_ROUND, flt(3.5), NULL, NULL)) == 4.0);
	double z = float_result(mcall(MF_ROUND, flt(-0.5), NULL, NULL));
	ck_assert(z == 0.0 && signbit(z));
	ck_assert(float_result(mcall(MF_TRUNC, flt(-2.75), NULL, NULL)) == -2.0);
	ck_assert(float_result(mcall(MF_FLOOR, flt(-2.25), NULL, NULL)) == -3.0);
	ck_assert(float_result(mcall(MF_CEIL, flt(-2.25), NULL, NULL)) == -2.0);
	ck_assert(float_result(mcall(MF_RSQRT, flt(4.0), NULL, NULL)) == 0.5);
	ck_assert(float_result(mcall(MF_ABS, flt(-0.0), NULL, NULL)) == 0.0);
	/* out of the domain is NaN, a value, not undefined behaviour */
	ck_assert(isnan(float_result(mcall(MF_LOG, flt(-1.0), NULL, NULL))));
	ck_assert(isnan(f64_result(mcall(MF_SQRT, f64(-1.0), NULL, NULL))));
	ck_assert(float_result(mcall(MF_SIGMOID, flt(-200.0), NULL, NULL)) == 0.0);
}
END_TEST

START_TEST(integer_abs_wraps_at_the_minimum)
{
	ck_assert_int_eq(int_result(mcall(MF_ABS, i32(-5), NULL, NULL), DT_INT32), 5);
	ck_assert_int_eq(int_result(mcall(MF_ABS, i32(7), NULL, NULL), DT_INT32), 7);
	ck_assert_int_eq(int_result(mcall(MF_ABS, lit(INT32_MIN, DT_INT32), NULL, NULL), DT_INT32),
			 INT32_MIN);
	ck_assert_int_eq(int_result(mcall(MF_ABS, lit(-128, DT_INT8), NULL, NULL), DT_INT8), -128);
	ck_assert(int_result(mcall(MF_ABS, lit(INT64_MIN, DT_INT64), NULL, NULL), DT_INT64) ==
		  INT64_MIN);
	ck_assert_int_eq(int_result(mcall(MF_ABS, lit(200, DT_UINT8), NULL, NULL), DT_UINT8), 200);
}
END_TEST

/* ---------- float16 ---------- */

static Expr *h16(double v) { return ir_float(&arena, v, DT_FLOAT16, S0); }

static double half_result(Expr *e)
{
	Value v;
	InterpResult r;
	ck_assert_int_eq(run_expr(e, DT_FLOAT16, &v, &r), RUN_OK);
	return v.f;
}

/* The software conversion (kernel/half.h): every binary16 value survives
 * the round trip; rounding is to nearest, ties to even, through the
 * subnormals and up to overflow; NaN stays NaN. With _Float16 (gcc on
 * x86-64) it also agrees with the compiler's conversion on many doubles. */
START_TEST(float16_conversion_is_exact_to_nearest_even)
{
	for (uint32_t h = 0; h < 0x10000; h++) {
		double d = vs_f16_to_double((uint16_t)h);
		bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
		ck_assert(nan == (bool)isnan(d));
		if (!nan)
			ck_assert_msg(vs_f16_from_double(d) == h, "%#x -> %a", h, d);
	}
	const struct {
		double x, want;
	} cases[] = {
		{65504.0, 65504.0},	  /* the largest half */
		{65519.99, 65504.0},	  /* below the midpoint to 2^16 */
		{65520.0, INFINITY},	  /* the midpoint: ties to even = 2^16, overflow */
		{-1e10, -INFINITY},	  {INFINITY, INFINITY},
		{2049.0, 2048.0},	  /* tie, down to even */
		{2051.0, 2052.0},	  /* tie, up to even */
		{2049.0000001, 2050.0},	  /* just above the tie */
		{1.0 + 0x1p-11, 1.0},	  {1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-10},
		{0x1p-24, 0x1p-24},	  /* the least subnormal */
		{0x1p-25, 0.0},		  /* half of it: tie to even zero */
		{0x1.0000001p-25, 0x1p-24}, {0x1.8p-24, 0x1p-23}, /* tie, up to even 2 * 2^-24 */
		{0x1.4p-23, 0x1p-23},	  /* 2.5 * 2^-24: tie, down to even */
		{0x1.ffcp-15, 0x1p-14},	  /* the largest subnormal rounds up to the least normal */
		{6.103515625e-05, 6.103515625e-05}, {0.1, 0.0999755859375},
		{-0.0, -0.0},		  {1e-300, 0.0},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		double got = vs_f16_round(cases[k].x);
		ck_assert_msg(got == cases[k].want && signbit(got) == signbit(cases[k].want),
			      "case %zu: %a -> %a, want %a", k, cases[k].x, got, cases[k].want);
	}
	ck_assert(isnan(vs_f16_round(NAN)));
#ifdef __FLT16_MAX__
	uint64_t x = 88172645463325252ull;
	for (int k = 0; k < 200000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t bits = x;
		if (k & 1) /* exponents around the half range */
			bits = (bits & 0x800fffffffffffffull) | ((uint64_t)(1023 - 30 + (int)(x % 50)) << 52);
		double d;
		memcpy(&d, &bits, sizeof d);
		if (isnan(d))
			continue;
		_Float16 ref = (_Float16)d;
		uint16_t rb;
		memcpy(&rb, &ref, sizeof rb);
		ck_assert_msg(vs_f16_from_double(d) == rb, "%a: %#x, the compiler %#x", d,
			      vs_f16_from_double(d), rb);
	}
#endif
}
END_TEST

/* The interpreter rounds every float16 result to half: literals, the
 * arithmetic operators (one rounding of the exact result), casts from
 * every dtype, math calls (the float32 function, then rounded). */
START_TEST(float16_results_are_rounded_to_half)
{
	ck_assert(half_result(h16(0.1)) == 0.0999755859375);
	ck_assert(half_result(bin(OP_ADD, h16(2048.0), h16(1.0))) == 2048.0); /* tie: even */
	ck_assert(half_result(bin(OP_ADD, h16(2048.0), h16(3.0))) == 2052.0);
	ck_assert(half_result(bin(OP_MUL, h16(65504.0), h16(2.0))) == INFINITY);
	ck_assert(half_result(bin(OP_ADD, h16(65504.0), h16(16.0))) == INFINITY);
	ck_assert(half_result(bin(OP_ADD, h16(65504.0), h16(15.0))) == 65504.0);
	ck_assert(half_result(bin(OP_MUL, h16(0x1p-14), h16(0.25))) == 0x1p-16); /* subnormal */
	ck_assert(half_result(bin(OP_MUL, h16(0x1p-24), h16(0.5))) == 0.0);
	ck_assert(half_result(bin(OP_DIV, h16(1.0), h16(3.0))) == vs_f16_round(1.0 / 3.0));
	double z = half_result(ir_neg(&arena, h16(0.0), S0));
	ck_assert(z == 0 && signbit(z));
	ck_assert(half_result(ir_cast(&arena, DT_FLOAT16, i32(2049), S0)) == 2048.0);
	ck_assert(half_result(ir_cast(&arena, DT_FLOAT16, lit(INT64_MAX, DT_INT64), S0)) == INFINITY);
	ck_assert(half_result(ir_cast(&arena, DT_FLOAT16, flt(65519.0), S0)) == 65504.0);
	/* one rounding from float64: a double rounding through float32 would
	 * land on the tie 1 + 2^-11 and give 1.0 */
	Expr *d = ir_float(&arena, 1.0 + 0x1p-11 + 0x1p-40, DT_FLOAT64, S0);
	ck_assert(half_result(ir_cast(&arena, DT_FLOAT16, d, S0)) == 1.0 + 0x1p-10);
	ck_assert_int_eq(int_result(ir_cast(&arena, DT_INT32, h16(-2.75), S0), DT_INT32), -2);
	ck_assert(float_result(ir_cast(&arena, DT_FLOAT32, h16(0.1), S0)) == 0.0999755859375);
	Expr *arg = h16(0.5);
	Expr *e = ir_call(&arena, MF_EXP, &arg, S0);
	ck_assert(half_result(e) == vs_f16_round(expf(0.5f)));
	/* a comparison sees the rounded value */
	ck_assert_int_eq(int_result(bin(OP_EQ, h16(0.1), ir_float(&arena, 0.1, DT_FLOAT64, S0)),
				    DT_INT32), 0);
}
END_TEST

/* ---------- the compiled form against the tree walk ---------- */

/* Both forms run f on copies of `input` with the step limit `limit`: the
 * same verdict, message, span, counts, steps and final cells (values
 * bitwise, cell states). Returns whether the tree walk ran to the end. */
static bool engines_agree(const char *what, const Func *f, const State *input, uint64_t limit)
{
	Arena a;
	arena_init(&a);
	State *st = state_clone(&a, input), *sc = state_clone(&a, input);
	InterpResult rt, rc;
	RunStatus t = interp_run_engine(f, st, limit, INTERP_TREE, &rt);
	RunStatus c = interp_run_engine(f, sc, limit, INTERP_COMPILED, &rc);
	ck_assert_msg(t == c && rt.status == rc.status, "%s: verdict %d (tree) vs %d (compiled): %s",
		      what, (int)t, (int)c, rc.message ? rc.message : "");
	ck_assert_msg((!rt.message && !rc.message) ||
		      (rt.message && rc.message && strcmp(rt.message, rc.message) == 0),
		      "%s: message '%s' (tree) vs '%s' (compiled)", what,
		      rt.message ? rt.message : "(none)", rc.message ? rc.message : "(none)");
	ck_assert_msg(rt.span.line == rc.span.line && rt.span.col == rc.span.col &&
		      rt.span.len == rc.span.len, "%s: span %d:%d vs %d:%d", what, rt.span.line,
		      rt.span.col, rc.span.line, rc.span.col);
	ck_assert_msg(rt.steps == rc.steps, "%s: %llu steps (tree) vs %llu (compiled)", what,
		      (unsigned long long)rt.steps, (unsigned long long)rc.steps);
	ck_assert_msg(memcmp(&rt.counts, &rc.counts, sizeof rt.counts) == 0, "%s: counts differ", what);
	for (int i = 0; i < st->nbufs; i++) {
		const BufState *x = &st->bufs[i], *y = &sc->bufs[i];
		ck_assert_int_eq(x->size, y->size);
		ck_assert_msg(memcmp(x->cell, y->cell, (size_t)x->size) == 0 &&
			      memcmp(x->data, y->data, sizeof(Value) * (size_t)x->size) == 0,
			      "%s: buffer %s differs", what, x->buf->name);
	}
	arena_free(&a);
	return t == RUN_OK;
}

/* Every way of running f that the suites' kernels reach: a generated
 * input run to the end and stopped early, the same with some input cells
 * T.undef() (taint) or uninitialised (UB), and an all-uninitialised
 * state. */
static int engines_agree_on(const char *name, const Func *f, uint64_t limit)
{
	Arena a;
	arena_init(&a);
	DiagList d;
	diag_init(&d, &a);
	int runs = 0;
	for (uint64_t seed = 1; seed <= 2; seed++) {
		State *in = interp_gen_input(&a, f, seed, &d);
		int64_t cells = 0;
		for (int i = 0; in && i < in->nbufs; i++)
			cells += in->bufs[i].size;
		if (!in || cells > 100000) /* the big ones: the bench's line */
			break;
		char what[512];
		snprintf(what, sizeof what, "%s seed %llu", name, (unsigned long long)seed);
		engines_agree(what, f, in, limit);
		engines_agree(what, f, in, 1 + seed * 17); /* stops early */
		uint64_t x = seed * 0x9E3779B97F4A7C15ull;
		for (int i = 0; i < in->nbufs; i++)
			for (int64_t k = 0; k < in->bufs[i].size; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				if (x % 97 == 0)
					in->bufs[i].cell[k] = CELL_UNDEF;
				else if (x % 211 == 0)
					in->bufs[i].cell[k] = CELL_UNINIT;
			}
		snprintf(what, sizeof what, "%s seed %llu, some cells undef or uninitialised", name,
			 (unsigned long long)seed);
		engines_agree(what, f, in, limit);
		runs += 3;
	}
	State *empty = runs ? state_new(&a, f, NULL, &d) : NULL;
	if (empty) {
		char what[512];
		snprintf(what, sizeof what, "%s, no input", name);
		engines_agree(what, f, empty, limit);
		runs++;
	}
	arena_free(&a);
	return runs;
}

static int engines_agree_in_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	int runs = 0;
	struct dirent *de;
	while (dp && (de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat sb;
		if (stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			runs += engines_agree_in_dir(path);
			continue;
		}
		size_t n = strlen(path);
		if (n < 4 || strcmp(path + n - 4, ".tir") != 0)
			continue;
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		Source *src = source_read_file(&a, path, &d);
		Module *m = src ? parse_module(&a, src, &d) : NULL;
		for (int i = 0; m && d.nerrors == 0 && i < m->nfuncs; i++)
			runs += engines_agree_on(path, m->funcs[i], 200000);
		arena_free(&a);
	}
	if (dp)
		closedir(dp);
	return runs;
}

START_TEST(compiled_form_agrees_on_every_fixture)
{
	int runs = engines_agree_in_dir("tests/data");
	ck_assert_msg(runs > 1000, "only %d runs", runs);
}
END_TEST

START_TEST(compiled_form_agrees_on_random_kernels)
{
	rng_state = 0x5DEECE66Dull;
	for (int k = 0; k < 150; k++) {
		Arena a;
		arena_init(&a);
		char *text = gen_kernel();
		Module *m = tu_parse(&a, "random.tir", text);
		char name[64];
		snprintf(name, sizeof name, "random kernel %d", k);
		engines_agree_on(name, m->funcs[0], 1000000);
		free(text);
		arena_free(&a);
	}
}
END_TEST

/* LLVM's shl / ashr / lshr: shl wraps, >> is arithmetic on signed dtypes,
 * logical on unsigned; an amount outside [0, bits) is UB. */
START_TEST(shifts_compute_as_llvm_and_stop_out_of_range)
{
	ck_assert_int_eq(int_result(bin(OP_SHL, i32(31), i32(15)), DT_INT32), 1015808);
	ck_assert_int_eq(int_result(bin(OP_SHL, i32(-3), i32(4)), DT_INT32), -48);
	ck_assert_int_eq(int_result(bin(OP_SHL, i32(3), i32(31)), DT_INT32), INT32_MIN);
	ck_assert_int_eq(int_result(bin(OP_SHR, i32(-17), i32(2)), DT_INT32), -5);
	ck_assert_int_eq(int_result(bin(OP_SHR, i32(17), i32(2)), DT_INT32), 4);
	ck_assert_int_eq(int_result(bin(OP_SHR, lit(200, DT_UINT8), lit(3, DT_UINT8)), DT_UINT8), 25);
	ck_assert_int_eq(int_result(bin(OP_SHL, lit(1, DT_INT64), lit(40, DT_INT64)), DT_INT64),
			 INT64_C(1) << 40);
	Var *x = var("x"), *y = var("y");
	Buffer *R = buf1("R", DT_INT32, 1);
	BinOp ops[2] = {OP_SHL, OP_SHR};
	for (int k = 0; k < 2; k++) {
		Expr *e = ir_bin(&arena, ops[k], ref(x), ref(y), at(21 + k));
		Param p[3] = {pscalar(x), pscalar(y), pbuf(R)};
		Func *f = ir_func(&arena, "f", 3, p, store(R, i32(0), e), S0);
		static const int64_t bad[] = {-1, 32, 40};
		for (int j = 0; j < 3; j++) {
			int64_t sc[2] = {7, bad[j]};
			InterpResult r;
			ck_assert_int_eq(run_fresh(f, sc, &r, NULL), RUN_UB);
			ck_assert_ptr_nonnull(strstr(r.message, "shift amount"));
			ck_assert_ptr_nonnull(strstr(r.message, "outside [0, 32)"));
			ck_assert_int_eq(r.span.line, 21 + k);
		}
		int64_t sc[2] = {7, 31};
		InterpResult r;
		ck_assert_int_eq(run_fresh(f, sc, &r, NULL), RUN_OK);
	}
}
END_TEST

START_TEST(compiled_form_reports_ub_as_the_tree_does)
{
	/* each stops with UB or at a fact: the message and span are the tree's */
	static const char *const kernels[] = {
		"@T.prim_func\ndef f(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\")):\n"
		"    for i in T.serial(5):\n        B[i] = A[i] // (3 - i)\n",
		"@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"int8\")):\n"
		"    for i in T.serial(4):\n        B[i] = T.Cast(\"int8\", A[i] * 1000.0)\n",
		"@T.prim_func\ndef f(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\")):\n"
		"    X = T.alloc_buffer((4,), \"int32\")\n"
		"    for i in T.serial(4):\n        B[i] = X[i] + A[i]\n",
		"@T.prim_func\ndef f(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\")):\n"
		"    for i in T.serial(4):\n        T.assume(A[i] < 100)\n        B[i] = A[i] + T.undef(dtype=\"int32\") * 0\n",
		"@T.prim_func\ndef f(A: T.Buffer((4,), \"int32\"), B: T.Buffer((4,), \"int32\")):\n"
		"    for i in T.serial(4):\n        B[i] = T.if_then_else(i < 2, A[i], T.undef(dtype=\"int32\"))\n"
		"    for i in T.serial(4):\n        B[i] = B[i] * 0 + B[A[i] % 4 + 4 * (i // 3)]\n",
	};
	for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
		Arena a;
		arena_init(&a);
		Module *m = tu_parse(&a, "ub.tir", kernels[k]);
		char name[64];
		snprintf(name, sizeof name, "kernel %zu", k);
		ck_assert_int_gt(engines_agree_on(name, m->funcs[0], 100000), 0);
		arena_free(&a);
	}
}
END_TEST

/* The compiled form's fast paths (the f32 update X[a] = X[a] + Y[b] *
 * Z[c] inline, and its loop whose accesses are lines checked once at the
 * loop's entry) against the tree walk: in bounds and not, cells
 * uninitialised or T.undef(), indices through lets (blocks), scalar
 * parameters, local buffers, wrapping loop variables, either order of
 * the sum, stopping at the step limit (engines_agree_on). */
START_TEST(compiled_update_fast_paths_agree_with_the_tree)
{
	static const char *const kernels[] = {
		/* the loop fast path: k runs one past A's and B's extent */
		"@T.prim_func\ndef f(A: T.Buffer((8, 8), \"float32\"), B: T.Buffer((8, 8), \"float32\"),"
		" C: T.Buffer((8, 8), \"float32\")):\n"
		"    for i, j in T.grid(8, 8):\n        C[i, j] = T.float32(0)\n"
		"    for i, j in T.grid(8, 8):\n        for k in T.serial(9):\n"
		"            C[i, j] = C[i, j] + A[i, k] * B[k, j]\n",
		/* product first, negative coefficients, a scalar in the indices */
		"@T.prim_func\ndef f(n: T.int32, A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\"),"
		" C: T.Buffer((4, 4), \"float32\")):\n"
		"    for i, j in T.grid(4, 4):\n        for k in T.serial(4):\n"
		"            C[3 - i, j] = A[n + 4 * i - k + 3] * B[k * 4 + j] + C[3 - i, j]\n",
		/* a local accumulator never initialised for j == 3 */
		"@T.prim_func\ndef f(A: T.Buffer((4, 4), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
		"    X = T.alloc_buffer((4,), \"float32\")\n"
		"    for j in T.serial(3):\n        X[j] = T.float32(1)\n"
		"    for j in T.serial(4):\n        for k in T.serial(4):\n"
		"            X[j] = X[j] + A[j, k] * A[k, j]\n"
		"    for j in T.serial(4):\n        B[j] = X[j]\n",
		/* an operand T.undef(): the cell is tainted, the store marks it */
		"@T.prim_func\ndef f(A: T.Buffer((4, 4), \"float32\"), C: T.Buffer((4,), \"float32\")):\n"
		"    for i in T.serial(4):\n        C[i] = T.float32(0)\n"
		"    A[1, 2] = T.undef(dtype=\"float32\")\n"
		"    for i in T.serial(4):\n        for k in T.serial(4):\n"
		"            C[i] = C[i] + A[i, k] * A[k, i]\n",
		/* blocks: indices through lets, the init under an if */
		"@T.prim_func\ndef f(A: T.Buffer((6, 6), \"float32\"), B: T.Buffer((6, 6), \"float32\"),"
		" C: T.Buffer((6, 6), \"float32\")):\n"
		"    for i, j, k in T.grid(6, 6, 6):\n"
		"        with T.block(\"C\"):\n"
		"            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
		"            with T.init():\n"
		"                C[vi, vj] = T.float32(0)\n"
		"            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
		/* an int32 loop variable that wraps: the loop checks each access */
		"@T.prim_func\ndef f(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
		"    for k in T.serial(2147483644, 2147483652):\n"
		"        C[k - 2147483644] = C[k - 2147483644] + A[k - 2147483644] * A[k - 2147483644]\n",
		/* the same cell loaded and stored through two names of one buffer */
		"@T.prim_func\ndef f(A: T.Buffer((8,), \"float32\")):\n"
		"    for k in T.serial(7):\n        A[k + 1] = A[k + 1] + A[k] * A[k]\n",
		/* the other dtypes and the one-load sum: int32 wraps (big values
		 * from the squares), int64, float64; a row past the end */
		"@T.prim_func\ndef f(A: T.Buffer((5, 6), \"int32\"), B: T.Buffer((5,), \"int32\"),"
		" C: T.Buffer((5,), \"int64\"), D: T.Buffer((5, 6), \"int64\")):\n"
		"    for i in T.serial(5):\n        B[i] = 0\n        C[i] = T.int64(0)\n"
		"        for j in T.serial(6):\n            B[i] = B[i] + A[i, j]\n"
		"        for j in T.serial(6):\n            B[i] = A[i, j] * A[i, j] * 65536 * 8191 + B[i]\n"
		"        for j in T.serial(6):\n            C[i] = D[i, j] * D[i, j] + C[i]\n"
		"        for j in T.serial(7):\n            C[i] = C[i] + D[i, j]\n",
		"@T.prim_func\ndef f(A: T.Buffer((4, 4), \"float64\"), B: T.Buffer((4,), \"float64\"),"
		" E: T.Buffer((4, 4), \"int32\"), F: T.Buffer((4,), \"int32\")):\n"
		"    for i in T.serial(4):\n        B[i] = T.float64(0)\n"
		"        for j in T.serial(4):\n            B[i] = A[i, j] + B[i]\n"
		"        for j in T.serial(4):\n            B[i] = B[i] + A[j, i] * A[i, j]\n"
		"        for j in T.serial(4):\n            F[i] = F[i] + E[i, j] * E[j, i]\n",
	};
	for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
		Arena a;
		arena_init(&a);
		Module *m = tu_parse(&a, "ub.tir", kernels[k]);
		char name[64];
		snprintf(name, sizeof name, "kernel %zu", k);
		ck_assert_int_gt(engines_agree_on(name, m->funcs[0], 100000), 0);
		arena_free(&a);
	}
}
END_TEST

/* The compiled form's nests (perfect nests of constant loops over an
 * update, or over a TensorIR block around one: tests/data/interp/nests/)
 * against the tree walk: each kernel run to the end, on inputs with
 * cells T.undef() or uninitialised and on an empty state
 * (engines_agree_on), and stopped by the step limit at steps all through
 * its nests, where the message names the limit. */
START_TEST(compiled_nests_agree_with_the_tree)
{
	static const char *const names[] = {
		"conv2d", "conv2d_oob", "partial", "int_nest", "block_two_reduce",
		"block_split", "block_alias", "block_init_other", "block_where", "layout_div",
		"prologue", "prologue_first", "map", "map_nest", "div_neg",
	};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		char path[128];
		snprintf(path, sizeof path, "interp/nests/%s.tir", names[k]);
		Module *m = tu_parse(&a, path, tu_fixture(path));
		const Func *f = m->funcs[0];
		ck_assert_int_gt(engines_agree_on(path, f, 1000000), 0);
		State *in = interp_gen_input(&a, f, 7, &d);
		ck_assert_ptr_nonnull(in);
		State *st = state_clone(&a, in);
		InterpResult r;
		interp_run_engine(f, st, 0, INTERP_TREE, &r);
		uint64_t total = r.steps, stride = total / 250 + 1;
		for (uint64_t limit = 1; limit < total; limit += stride + (limit % 3)) {
			char what[256];
			snprintf(what, sizeof what, "%s stopped at %llu steps", path,
				 (unsigned long long)limit);
			ck_assert(!engines_agree(what, f, in, limit));
			st = state_clone(&a, in);
			interp_run_engine(f, st, limit, INTERP_COMPILED, &r);
			char want[64];
			snprintf(want, sizeof want, "step limit of %llu reached",
				 (unsigned long long)limit);
			ck_assert_msg(r.status != RUN_LIMIT || strstr(r.message, want), "%s: %s", what,
				      r.message);
		}
		arena_free(&a);
	}
}
END_TEST

/* T.allocate_const: its cells hold the constants, row-major, and are
 * initialised (reading them is no UB). */
START_TEST(allocate_const_cells_hold_the_constants)
{
	Module *m = parse_text("allocate_const.tir", tu_fixture("interp/allocate_const.tir"));
	ck_assert_ptr_nonnull(m);
	Func *f = m->funcs[0];
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, NULL, &d);
	ck_assert_ptr_nonnull(st);
	for (int i = 0; i < st->nbufs; i++)
		for (int64_t k = 0; k < st->bufs[i].size; k++) {
			st->bufs[i].cell[k] = CELL_INIT;
			st->bufs[i].data[k].f = 1.0;
		}
	InterpResult r;
	ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
	static const double want[6] = {1, 2, 3, 4, 5, 6.5};
	for (int k = 0; k < 6; k++)
		ck_assert(st->bufs[1].data[k].f == want[k]);
}
END_TEST

/* TVM's T.Let(body, where={x: value}) computes body with x = value (its
 * hoist_expression test kernel, pasted). */
START_TEST(let_expression_binds_its_value)
{
	Module *m = parse_text("let.tir", tu_fixture("interp/let_expr.tir"));
	ck_assert_ptr_nonnull(m);
	Func *f = m->funcs[0];
	State *st;
	InterpResult r;
	ck_assert_int_eq(run_fresh(f, NULL, &r, &st), RUN_OK);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			ck_assert(st->bufs[0].data[i * 4 + j].f == 5.0 * (i + 1) + j);
}
END_TEST

Suite *suite_interp(void)
{
	Suite *s = suite_create("interp");
	InterpCase cases[] = {
		{"arithmetic",
		 {int_ops_floor_and_wrap, float32_results_are_rounded, casts_truncate_and_wrap,
		  select_and_logic_evaluate_lazily, let_and_scalars,
		  vars_from_two_arenas_with_equal_ids, unbound_buffer_is_reported}},
		{"undefined_behaviour",
		 {ub_out_of_bounds_load, ub_out_of_bounds_store, ub_read_of_uninitialised_local,
		  ub_division_and_modulo_by_zero, failed_assume_is_not_ub, undef_in_index_is_ub,
		  step_limit_stops_the_run}},
		{"undef", {undef_store_marks_cell, assume_undef_means_readable}},
		{"shifts", {shifts_compute_as_llvm_and_stop_out_of_range}},
		{"allocate_const", {allocate_const_cells_hold_the_constants}},
		{"let_expressions", {let_expression_binds_its_value}},
		{"math_calls", {math_calls_compute_what_libm_computes, integer_abs_wraps_at_the_minimum}},
		{"float16",
		 {float16_conversion_is_exact_to_nearest_even, float16_results_are_rounded_to_half}},
	};
	InterpCase compiled[] = {
		{"compiled_form",
		 {compiled_form_agrees_on_every_fixture, compiled_form_agrees_on_random_kernels,
		  compiled_form_reports_ub_as_the_tree_does,
		  compiled_update_fast_paths_agree_with_the_tree}},
		{"compiled_nests", {compiled_nests_agree_with_the_tree}},
	};
	interp_add_cases(s, cases, sizeof cases / sizeof *cases);
	interp_states_add_cases(s);
	interp_add_cases(s, compiled, sizeof compiled / sizeof *compiled);
	return s;
}
