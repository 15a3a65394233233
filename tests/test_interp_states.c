/* tests/test_interp_states.c — the interp suite's cases on whole states
 * (suite_interp in test_interp.c adds them): state comparison and
 * rendering, admissible input generation for the conformance fact shapes,
 * the differential check, and every conformance kernel run on generated
 * inputs. */
#include "tests/test_interp_int.h"

/* ---------- state comparison and rendering ---------- */

static State *two_buffers(Func **fo)
{
	Buffer *B = buf1("B", DT_INT32, 4);
	int64_t shape[2] = {2, 2};
	Buffer *C = buf("C", DT_FLOAT32, 2, shape);
	Func *f = func2(B, C, ir_pass(&arena, S0));
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, NULL, &d);
	for (int i = 0; i < 4; i++) {
		st->bufs[0].data[i].i = i;
		st->bufs[0].cell[i] = CELL_INIT;
		st->bufs[1].data[i].f = i * 0.5;
		st->bufs[1].cell[i] = CELL_INIT;
	}
	if (fo)
		*fo = f;
	return st;
}

START_TEST(state_equal_reports_first_difference)
{
	State *a = two_buffers(NULL), *b = state_clone(&arena, a);
	char *diff = NULL;
	ck_assert(state_equal(a, b, false, 0, &diff));
	ck_assert_ptr_null(diff);
	a->bufs[0].data[3].i = 7;
	b->bufs[0].data[3].i = 9;
	ck_assert(!state_equal(a, b, false, 0, &diff));
	ck_assert_str_eq(diff, "B[3]: 7 vs 9");
	free(diff);
	b->bufs[0].data[3].i = 7;
	b->bufs[1].data[3].f = 2.0;
	ck_assert(!state_equal(a, b, false, 0, &diff));
	ck_assert_str_eq(diff, "C[1, 1]: 1.5 vs 2.0");
	free(diff);
	ck_assert(state_equal(a, b, false, 0.5, NULL)); /* within rel_tol */
}
END_TEST

START_TEST(state_equal_ignores_undef_cells_of_before)
{
	State *a = two_buffers(NULL), *b = state_clone(&arena, a);
	a->bufs[0].cell[2] = CELL_UNDEF;
	b->bufs[0].data[2].i = 1234;
	ck_assert(state_equal(a, b, false, 0, NULL));
	b->bufs[0].cell[2] = CELL_UNINIT;
	ck_assert(state_equal(a, b, false, 0, NULL));
	a->bufs[0].cell[1] = CELL_UNINIT; /* never written in before */
	b->bufs[0].data[1].i = 55;
	ck_assert(state_equal(a, b, false, 0, NULL));
	/* but after may not make a defined cell undefined */
	char *diff = NULL;
	b->bufs[0].cell[0] = CELL_UNDEF;
	ck_assert(!state_equal(a, b, false, 0, &diff));
	ck_assert_str_eq(diff, "B[0]: 0 vs undef");
	free(diff);
}
END_TEST

START_TEST(state_equal_ieee_signed_zero)
{
	State *a = two_buffers(NULL), *b = state_clone(&arena, a);
	b->bufs[1].data[0].f = -0.0;
	ck_assert(state_equal(a, b, false, 0, NULL));
	char *diff = NULL;
	ck_assert(!state_equal(a, b, true, 0, &diff));
	ck_assert_str_eq(diff, "C[0, 0]: 0.0 vs -0.0");
	free(diff);
}
END_TEST

START_TEST(state_format_nested_lists)
{
	Var *n = var("n");
	Buffer *B = buf1("B", DT_INT32, 3);
	int64_t shape[2] = {2, 2};
	Buffer *C = buf("C", DT_FLOAT32, 2, shape);
	Param p[3] = {pscalar(n), pbuf(B), pbuf(C)};
	Func *f = ir_func(&arena, "f", 3, p, ir_pass(&arena, S0), S0);
	int64_t sc = 5;
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, &sc, &d);
	st->bufs[0].cell[0] = CELL_INIT;
	st->bufs[0].data[0].i = -3;
	st->bufs[0].cell[1] = CELL_UNDEF;
	for (int i = 0; i < 4; i++) {
		st->bufs[1].cell[i] = CELL_INIT;
		st->bufs[1].data[i].f = i * 0.25;
	}
	char *text = state_format(st);
	ck_assert_str_eq(text, "n = 5\nB = [-3, undef, ?]\nC = [[0.0, 0.25], [0.5, 0.75]]\n");
	free(text);
}
END_TEST

START_TEST(state_transfer_checks_shapes)
{
	Func *f;
	State *a = two_buffers(&f);
	Buffer *B = buf1("B", DT_INT32, 4);
	int64_t shape[2] = {2, 2};
	Buffer *C = buf("C", DT_FLOAT32, 2, shape);
	Func *g = func2(C, B, ir_pass(&arena, S0)); /* other order, same names */
	DiagList d;
	diag_init(&d, &arena);
	State *t = state_transfer(&arena, a, g, &d);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->bufs[1].buf->name, "B");
	ck_assert_int_eq(t->bufs[1].data[3].i, 3);
	ck_assert(state_equal(a, t, true, 0, NULL));
	Buffer *B16 = buf1("B", DT_INT32, 16);
	Func *h = func2(B16, C, ir_pass(&arena, S0));
	ck_assert_ptr_null(state_transfer(&arena, a, h, &d));
	ck_assert_ptr_nonnull(strstr(d.last->message, "buffer B is int32 (16,) there but int32 (4,)"));
}
END_TEST

/* ---------- input generation ---------- */

START_TEST(gen_scalars_satisfy_entry_facts)
{
	Var *n = var("n");
	Buffer *A = buf1("A", DT_INT32, 1), *B = buf1("B", DT_INT32, 1);
	A->shape[0] = ref(n);
	B->shape[0] = ref(n);
	Var *i = var("i");
	Expr *fact = bin(OP_AND, bin(OP_EQ, bin(OP_FLOORMOD, ref(n), i32(8)), i32(0)),
			 bin(OP_GE, ref(n), i32(0)));
	Stmt *body = seq2(ir_assume(&arena, fact, S0),
			  loop(i, 0, store(B, ref(i), bin(OP_MUL, i32(2), ld(A, ref(i))))));
	body->u.seq.items[1]->u.loop.extent = ref(n);
	Param p[3] = {pbuf(A), pbuf(B), pscalar(n)};
	Func *f = ir_func(&arena, "scale", 3, p, body, S0);
	bool nonzero = false;
	for (uint64_t seed = 0; seed < 20; seed++) {
		DiagList d;
		diag_init(&d, &arena);
		State *st = interp_gen_input(&arena, f, seed, &d);
		ck_assert_ptr_nonnull(st);
		int64_t nv = st->scalars[0].i;
		ck_assert_int_eq(nv % 8, 0);
		ck_assert_int_ge(nv, 0);
		ck_assert_int_eq(st->bufs[0].size, nv);
		nonzero |= nv > 0;
		InterpResult r;
		ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
		for (int64_t k = 0; k < nv; k++)
			ck_assert_int_eq(st->bufs[1].data[k].i, 2 * st->bufs[0].data[k].i);
	}
	ck_assert(nonzero);
}
END_TEST

/* for io, ii in grid(4, 4): T.assume(4 * io + ii < 14 or A[io, ii] == v) */
static Func *padded_fact(Expr *v, Expr *extra_guard)
{
	int64_t shape[2] = {4, 4};
	Buffer *A = buf("A", DT_INT32, 2, shape), *S = buf1("S", DT_INT32, 1);
	Var *io = var("io"), *ii = var("ii"), *jo = var("jo"), *ji = var("ji");
	Expr *flat = bin(OP_ADD, bin(OP_MUL, i32(4), ref(io)), ref(ii));
	Expr *fact = bin(OP_OR, bin(OP_LT, flat, i32(14)), bin(OP_EQ, ld2(A, ref(io), ref(ii)), v));
	Stmt *as = ir_assume(&arena, fact, at(2));
	if (extra_guard)
		as = ir_if(&arena, extra_guard, as, NULL, S0);
	Stmt *facts = loop(io, 4, loop(ii, 4, as));
	Stmt *sum = loop(jo, 4, loop(ji, 4, store(S, i32(0), bin(OP_ADD, ld(S, i32(0)),
								 ld2(A, ref(jo), ref(ji))))));
	return func2(A, S, seq3(facts, store(S, i32(0), i32(0)), sum));
}

START_TEST(gen_repairs_padding_facts)
{
	Func *f = padded_fact(i32(0), NULL);
	bool some_nonzero = false;
	for (uint64_t seed = 0; seed < 10; seed++) {
		DiagList d;
		diag_init(&d, &arena);
		State *st = interp_gen_input(&arena, f, seed, &d);
		ck_assert_ptr_nonnull(st);
		for (int k = 14; k < 16; k++)
			ck_assert_int_eq(st->bufs[0].data[k].i, 0);
		for (int k = 0; k < 14; k++)
			some_nonzero |= st->bufs[0].data[k].i != 0;
		InterpResult r;
		ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
	}
	ck_assert(some_nonzero);
	/* `== T.undef()` only keeps the cells readable: values stay random */
	f = padded_fact(ir_undef(&arena, DT_INT32, S0), NULL);
	DiagList d;
	diag_init(&d, &arena);
	ck_assert_ptr_nonnull(interp_gen_input(&arena, f, 3, &d));
}
END_TEST

START_TEST(gen_repairs_inequalities)
{
	Buffer *A = buf1("A", DT_INT32, 8), *F = buf1("F", DT_FLOAT32, 8);
	Var *i = var("i"), *j = var("j");
	Stmt *facts = seq3(loop(i, 8, ir_assume(&arena, bin(OP_GT, ld(A, ref(i)), i32(5)), S0)),
			   loop(j, 8, ir_assume(&arena, bin(OP_GT, flt(-10.0), ld(F, ref(j))), S0)),
			   store(A, i32(0), ld(A, i32(0))));
	Func *f = func2(A, F, facts);
	DiagList d;
	diag_init(&d, &arena);
	State *st = interp_gen_input(&arena, f, 4, &d);
	ck_assert_ptr_nonnull(st);
	for (int k = 0; k < 8; k++) {
		ck_assert_int_gt(st->bufs[0].data[k].i, 5);
		ck_assert(st->bufs[1].data[k].f < -10.0);
	}
}
END_TEST

START_TEST(gen_is_deterministic)
{
	Func *f = padded_fact(i32(1), NULL);
	DiagList d;
	diag_init(&d, &arena);
	char *x = state_format(interp_gen_input(&arena, f, 5, &d));
	char *y = state_format(interp_gen_input(&arena, f, 5, &d));
	char *z = state_format(interp_gen_input(&arena, f, 6, &d));
	ck_assert_str_eq(x, y);
	ck_assert_str_ne(x, z);
	free(x);
	free(y);
	free(z);
}
END_TEST

START_TEST(gen_reports_unsatisfiable_fact)
{
	/* the padding must be 0 and 1 at once */
	Func *f = padded_fact(i32(0), NULL);
	Stmt *body = f->body;
	Func *g = padded_fact(i32(1), NULL);
	Stmt *items[2] = {body->u.seq.items[0], g->body};
	Stmt *both = ir_seq(&arena, 2, items, S0);
	Func *h = func2(f->params[0].buf, f->params[1].buf, both);
	/* g's buffers are other objects: rebind them to f's */
	h->body = ir_replace_buffer(&arena, both, g->params[0].buf, f->params[0].buf);
	h->body = ir_replace_buffer(&arena, h->body, g->params[1].buf, f->params[1].buf);
	DiagList d;
	diag_init(&d, &arena);
	ck_assert_ptr_null(interp_gen_input(&arena, h, 1, &d));
	ck_assert_int_eq(d.nerrors, 1);
	ck_assert_ptr_nonnull(strstr(d.first->message, "does not hold"));
	ck_assert_ptr_nonnull(strstr(d.first->message, "A[io, ii] =="));
	ck_assert_int_eq(d.first->span.line, 2);
}
END_TEST

START_TEST(gen_fixed_scalars)
{
	Var *n = var("n");
	Buffer *R = buf1("R", DT_INT32, 1);
	Param p[2] = {pscalar(n), pbuf(R)};
	Stmt *as = ir_assume(&arena, bin(OP_LT, ref(n), i32(10)), S0);
	Func *f = ir_func(&arena, "f", 2, p, seq2(as, store(R, i32(0), ref(n))), S0);
	int64_t good = 4, bad = 12;
	DiagList d;
	diag_init(&d, &arena);
	State *st = interp_gen_input_scalars(&arena, f, 1, &good, &d);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(st->scalars[0].i, 4);
	ck_assert_ptr_null(interp_gen_input_scalars(&arena, f, 1, &bad, &d));
	ck_assert_ptr_nonnull(strstr(d.first->message, "n < 10"));
}
END_TEST

START_TEST(gen_leaves_padding_of_layout_uninitialised)
{
	Func *f = padded_fact(i32(0), NULL);
	Buffer *A = f->params[0].buf;
	/* A as the physical buffer of a [14] -> [4, 4] transform */
	Layout *lay = arena_alloc(&arena, sizeof *lay);
	Var *inv[2] = {var("p0"), var("p1")};
	lay->inv_vars = inv;
	lay->pad_kind = PAD_VALUE;
	lay->pad_predicate = bin(OP_GE, bin(OP_ADD, bin(OP_MUL, i32(4), ref(inv[0])), ref(inv[1])),
				 i32(14));
	A->layout = lay;
	DiagList d;
	diag_init(&d, &arena);
	State *st = interp_gen_input(&arena, f, 2, &d);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(st->bufs[0].cell[15], CELL_INIT); /* by the fact */
	ck_assert_int_eq(st->bufs[0].data[15].i, 0);
	/* without the fact, the padding is uninitialised */
	Param p[1] = {pbuf(A)};
	Func *g = ir_func(&arena, "g", 1, p, ir_pass(&arena, S0), S0);
	st = interp_gen_input(&arena, g, 2, &d);
	ck_assert_int_eq(st->bufs[0].cell[13], CELL_INIT);
	ck_assert_int_eq(st->bufs[0].cell[14], CELL_UNINIT);
	ck_assert_int_eq(st->bufs[0].cell[15], CELL_UNINIT);
	/* without a pad value, touching the padding at all is UB */
	lay->pad_kind = PAD_NONE_GIVEN;
	Buffer *R = buf1("R", DT_INT32, 1);
	Func *h = func2(A, R, seq2(store(R, i32(0), ld2(A, i32(3), i32(1))),
				   store(R, i32(0), ld2(A, i32(3), i32(3)))));
	st = interp_gen_input(&arena, h, 2, &d);
	ck_assert_ptr_nonnull(st);
	InterpResult r;
	ck_assert_int_eq(interp_run(h, st, 0, &r), RUN_UB);
	ck_assert_str_eq(r.message, "load A[3, 3] touches padding of A, which has no pad_value");
	A->layout = NULL;
}
END_TEST

/* ---------- differential check ---------- */

/* B[i] = 2 * A[i] for i < 14, then `extra` (may be NULL). */
static Func *scale(Stmt *(*extra)(Buffer *A, Buffer *B, Var *i))
{
	Buffer *A = buf1("A", DT_INT32, 14), *B = buf1("B", DT_INT32, 14);
	Var *i = var("i");
	Stmt *body = store(B, ref(i), bin(OP_MUL, i32(2), ld(A, ref(i))));
	if (extra)
		body = seq2(body, extra(A, B, i));
	return func2(A, B, loop(i, 14, body));
}

static Stmt *bump_b3(Buffer *A, Buffer *B, Var *i)
{
	return ir_if(&arena, bin(OP_EQ, ref(i), i32(3)),
		     store(B, ref(i), bin(OP_ADD, ld(B, ref(i)), i32(1))), NULL, S0);
}

static Stmt *read_ahead(Buffer *A, Buffer *B, Var *i)
{
	return store(B, ref(i), bin(OP_ADD, ld(A, bin(OP_ADD, ref(i), i32(1))), i32(0)));
}

static Stmt *undef_b3(Buffer *A, Buffer *B, Var *i)
{
	return ir_if(&arena, bin(OP_EQ, ref(i), i32(3)),
		     store(B, ref(i), ir_undef(&arena, DT_INT32, S0)), NULL, S0);
}

START_TEST(equiv_agrees_on_same_kernel)
{
	char *rep = NULL;
	ck_assert_int_eq(interp_equiv(scale(NULL), scale(NULL), 5, 1, &rep), 0);
	ck_assert_ptr_nonnull(strstr(rep, "5 trials agree"));
	free(rep);
}
END_TEST

START_TEST(equiv_detects_one_store_difference)
{
	char *rep = NULL;
	ck_assert_int_eq(interp_equiv(scale(NULL), scale(bump_b3), 5, 1, &rep), 1);
	ck_assert_ptr_nonnull(strstr(rep, "outputs differ"));
	ck_assert_ptr_nonnull(strstr(rep, "B[3]: "));
	free(rep);
}
END_TEST

START_TEST(equiv_detects_ub_in_second)
{
	char *rep = NULL;
	ck_assert_int_eq(interp_equiv(scale(NULL), scale(read_ahead), 3, 1, &rep), 1);
	ck_assert_ptr_nonnull(strstr(rep, "load A[14] out of bounds of shape (14,)"));
	free(rep);
	/* UB in the first kernel on every input: no usable trial */
	ck_assert_int_eq(interp_equiv(scale(read_ahead), scale(NULL), 3, 1, &rep), 2);
	ck_assert_ptr_nonnull(strstr(rep, "no usable trial"));
	free(rep);
}
END_TEST

START_TEST(equiv_undef_in_first_is_anything)
{
	char *rep = NULL;
	/* before leaves B[3] undefined: after may put anything there */
	ck_assert_int_eq(interp_equiv(scale(undef_b3), scale(bump_b3), 3, 1, &rep), 0);
	free(rep);
	/* but not the other way round */
	ck_assert_int_eq(interp_equiv(scale(bump_b3), scale(undef_b3), 3, 1, &rep), 1);
	ck_assert_ptr_nonnull(strstr(rep, "vs undef"));
	free(rep);
}
END_TEST

START_TEST(equiv_reports_input_scalars)
{
	Var *n = var("n");
	Buffer *R = buf1("R", DT_INT32, 1);
	Param p[2] = {pscalar(n), pbuf(R)};
	Stmt *as = ir_assume(&arena, bin(OP_EQ, ref(n), i32(24)), S0);
	Func *f = ir_func(&arena, "f", 2, p, seq2(as, store(R, i32(0), ref(n))), S0);
	Func *g = ir_func(&arena, "g", 2, p, store(R, i32(0), bin(OP_ADD, ref(n), i32(1))), S0);
	char *rep = NULL;
	ck_assert_int_eq(interp_equiv(f, g, 2, 1, &rep), 1);
	ck_assert_ptr_nonnull(strstr(rep, "R[0]: 24 vs 25"));
	ck_assert_ptr_nonnull(strstr(rep, "input scalars: n = 24"));
	free(rep);
}
END_TEST

/* ---------- conformance kernels ---------- */

static char *read_text(const char *path)
{
	char *s = tu_read_file(path);
	char *r = s ? arena_strdup(&arena, s) : NULL;
	free(s);
	return r;
}

/* The before.tir paths of the conformance cases (arena strings). */
static char **case_dirs(int *n)
{
	*n = 0;
	const char *shared = tu_shared_dir();
	if (!shared)
		return NULL;
	char *path = arena_printf(&arena, "%s/conformance", shared);
	DIR *dir = opendir(path);
	if (!dir)
		return NULL;
	char **out = NULL;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = arena_printf(&arena, "%s/%s/before.tir", path, e->d_name);
		FILE *fp = fopen(p, "r");
		if (!fp)
			continue;
		fclose(fp);
		out = realloc(out, sizeof(char *) * (size_t)(*n + 1));
		out[(*n)++] = p;
	}
	closedir(dir);
	return out;
}

static Module *parse_file(const char *path)
{
	char *text = read_text(path);
	return text ? parse_text(path, text) : NULL;
}

/* .../case/before.tir -> .../case/after.tir */
static char *after_path(const char *before)
{
	const char *slash = strrchr(before, '/');
	return arena_printf(&arena, "%.*safter.tir", (int)(slash + 1 - before), before);
}

static void run_on_inputs(const Func *f, const char *path)
{
	for (uint64_t seed = 1; seed <= 3; seed++) {
		DiagList d;
		diag_init(&d, &arena);
		State *in = interp_gen_input(&arena, f, seed, &d);
		if (!in) {
			char *msg = diag_render(&d);
			ck_abort_msg("%s/%s: no input: %s", path, f->name, msg);
		}
		InterpResult r;
		RunStatus s = interp_run(f, in, 0, &r);
		ck_assert_msg(s == RUN_OK, "%s/%s (seed %llu): %s", path, f->name,
			      (unsigned long long)seed, r.message ? r.message : "?");
	}
}

START_TEST(conformance_before_runs_without_ub)
{
	int n;
	char **dirs = case_dirs(&n);
	if (!dirs)
		return; /* no shared folder here */
	for (int i = 0; i < n; i++) {
		Module *m = parse_file(dirs[i]);
		ck_assert_msg(m != NULL, "cannot read %s", dirs[i]);
		for (int k = 0; k < m->nfuncs; k++) {
			run_on_inputs(m->funcs[k], dirs[i]);
			char *rep = NULL;
			int rc = interp_equiv(m->funcs[k], m->funcs[k], 3, 11, &rep);
			ck_assert_msg(rc == 0, "%s/%s: self-equivalence: %s", dirs[i],
				      m->funcs[k]->name, rep);
			free(rep);
		}
	}
	free(dirs);
}
END_TEST

START_TEST(conformance_after_runs_without_ub)
{
	int n, seen = 0;
	char **dirs = case_dirs(&n);
	if (!dirs)
		return;
	for (int i = 0; i < n; i++) {
		char *path = after_path(dirs[i]);
		FILE *fp = fopen(path, "r");
		if (fp) {
			fclose(fp);
			Module *before = parse_file(dirs[i]);
			Module *after = parse_file(path);
			for (int k = 0; k < after->nfuncs; k++)
				run_on_inputs(after->funcs[k], path);
			/* where the signatures agree, the interpreter agrees too */
			char *rep = NULL;
			int rc = interp_equiv(before->funcs[0], after->funcs[0], 4, 3, &rep);
			ck_assert_msg(rc != 1, "%s: before and after differ: %s", path, rep);
			free(rep);
			seen++;
		}
	}
	free(dirs);
	ck_assert_int_gt(seen, 0);
}
END_TEST

static const char multiple_buffer_after[] = "interp/multiple_buffer_after.tir";

static const char offset_padding_after[] = "interp/offset_padding_after.tir";

START_TEST(gen_conformance_fact_shapes)
{
	Module *m = parse_text("mbs.tir", tu_fixture(multiple_buffer_after));
	const Func *f = m->funcs[0];
	for (uint64_t seed = 0; seed < 4; seed++) {
		DiagList d;
		diag_init(&d, &arena);
		State *st = interp_gen_input(&arena, f, seed, &d);
		ck_assert_ptr_nonnull(st);
		const BufState *A = &st->bufs[0];
		for (int64_t off = 0; off < A->size; off++) {
			int64_t j = off % 64; /* 8 * jo + ji */
			ck_assert_int_ne(A->cell[off], CELL_UNINIT);
			if (j >= 60)
				ck_assert_int_eq(A->data[off].i, 0);
		}
		InterpResult r;
		ck_assert_int_eq(interp_run(f, st, 0, &r), RUN_OK);
		/* rows 14 and 15 end undefined, the others are defined */
		ck_assert_int_eq(st->bufs[1].cell[13], CELL_INIT);
		ck_assert_int_eq(st->bufs[1].cell[14], CELL_UNDEF);
		ck_assert_int_eq(st->bufs[1].cell[15], CELL_UNDEF);
	}
	m = parse_text("off.tir", tu_fixture(offset_padding_after));
	DiagList d;
	diag_init(&d, &arena);
	State *st = interp_gen_input(&arena, m->funcs[0], 9, &d);
	ck_assert_ptr_nonnull(st);
	int zeros_needed[] = {0, 1, 18, 19, 20, 21, 22, 23};
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(st->bufs[0].data[zeros_needed[k]].i, 0);
}
END_TEST

void interp_states_add_cases(Suite *s)
{
	InterpCase cases[] = {
		{"states",
		 {state_equal_reports_first_difference, state_equal_ignores_undef_cells_of_before,
		  state_equal_ieee_signed_zero, state_format_nested_lists,
		  state_transfer_checks_shapes}},
		{"generation",
		 {gen_scalars_satisfy_entry_facts, gen_repairs_padding_facts, gen_repairs_inequalities,
		  gen_is_deterministic,
		  gen_reports_unsatisfiable_fact, gen_fixed_scalars,
		  gen_leaves_padding_of_layout_uninitialised, gen_conformance_fact_shapes}},
		{"equiv",
		 {equiv_agrees_on_same_kernel, equiv_detects_one_store_difference,
		  equiv_detects_ub_in_second, equiv_undef_in_first_is_anything,
		  equiv_reports_input_scalars}},
		{"conformance", {conformance_before_runs_without_ub, conformance_after_runs_without_ub}},
	};
	interp_add_cases(s, cases, sizeof cases / sizeof *cases);
}
