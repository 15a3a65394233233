/* tests/test_backend.c — the backend suite: lowering passes (RemoveAssume,
 * RemoveStoreUndef, flattening with the seed 001 examples and the proven
 * index widths), the accepted conformance cases and the random kernels and
 * steps of the soundness property test through the JIT, the public API and
 * the command line, the safety warnings, the bench's schedules and the
 * pthread runtime. Code generation and emission are in
 * test_backend_codegen.c; the helpers both use in test_backend_int.h. */
#include "tests/test_backend_int.h"

/* ---------- lowering: assume and undef ---------- */

START_TEST(remove_assume_drops_facts_and_their_loops)
{
	Built b = build(tu_fixture("backend/remove_assume_drops_facts_and_their_loops.tir"), NULL);
	char *text = lowered_text(b.p, 0);
	assert_lacks(text, "T.assume");
	const char *first = strstr(text, "for i");
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(strstr(first + 1, "for i") == NULL, "the loop of facts stayed:\n%s", text);
	free(text);
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

START_TEST(remove_store_undef_keeps_zero_times_undef)
{
	Built b = build(tu_fixture("backend/remove_store_undef_keeps_zero_times_undef.tir"), NULL);
	char *text = lowered_text(b.p, 0);
	assert_lacks(text, "T.assume");
	assert_lacks(text, "if 4 * io");   /* the undef stage is gone entirely */
	assert_contains(text, "0 * T.undef()"); /* a defined 0, kept */
	free(text);
	const LoweredFunc *lf = backend_lowered(b.p, 0);
	ck_assert_int_eq(lf->undef_bufs.n, 1);
	ck_assert_str_eq(lf->undef_bufs.items[0]->name, "B");
	assert_jit_agrees(b.p, 6, 0);
	built_free(&b);
}
END_TEST

START_TEST(local_buffer_with_removed_undef_store_is_frozen)
{
	Built b = build(tu_fixture("backend/local_buffer_with_removed_undef_store_is_frozen.tir"),
			NULL);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	free(ir);
	const LoweredFunc *lf = backend_lowered(b.p, 0);
	ck_assert_int_eq(lf->undef_bufs.n, 1);
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

/* ---------- flattening: seed 001 ---------- */

/* "x = Buffer(shape=[64,128]); BufferLoad(x, [10, 15]); BufferStore(x, 7,
 * [20, 23])" -> x[10*128 + 15], x[20*128 + 23], Allocate(shape=[64*128]). */
START_TEST(flatten_default_row_major_seed001)
{
	Built b = build(tu_fixture("backend/flatten_default_row_major_seed001.tir"), NULL);
	char *text = lowered_text(b.p, 0);
	assert_contains(text, "T.alloc_buffer([8192]");
	assert_contains(text, "x[1295]"); /* 10 * 128 + 15 */
	assert_contains(text, "x[2583]"); /* 20 * 128 + 23 */
	free(text);
	const LoweredFunc *lf = backend_lowered(b.p, 0);
	ck_assert_int_eq(lf->nbufs, 2);
	ck_assert_int_eq(lf->bufs[1].ngroups, 1);
	ck_assert_int_eq(lf->bufs[1].index_dtype[0], DT_INT32);
	assert_lowered_equiv(lf, 3);
	assert_jit_agrees(b.p, 2, 0);
	built_free(&b);
}
END_TEST

/* The transposed layout lambda i, j: [j, i]: physical shape [128, 64],
 * x[15, 10] -> x[15*64 + 10]. */
START_TEST(flatten_transposed_physical_seed001)
{
	Built b = build(tu_fixture("backend/flatten_transposed_physical_seed001.tir"), NULL);
	char *text = lowered_text(b.p, 0);
	assert_contains(text, "x[970]");  /* 15 * 64 + 10 */
	assert_contains(text, "x[1492]"); /* 23 * 64 + 20 */
	free(text);
	assert_lowered_equiv(backend_lowered(b.p, 0), 1);
	built_free(&b);
}
END_TEST

static const char nchwc_kernel[] = "backend/nchwc_kernel.tir"; /* c = 101: c // 4 = 25, c % 4 = 1 */

/* NHWC -> NCHWc, lambda n, h, w, c: [n, c // 4, h, w, c % 4], flattened
 * to 1-d: the RFC's index (128/4)*64*64*4*11 + 64*64*4*floor(101/4) +
 * 64*4*37 + 4*23 + 101%4. */
START_TEST(flatten_nhwc_to_nchwc_1d_seed001)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(nchwc_kernel));
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	long long rfc = 32LL * 64 * 64 * 4 * 11 + 64LL * 64 * 4 * (101 / 4) + 64LL * 4 * 37 + 4 * 23 + 101 % 4;
	char want[64];
	snprintf(want, sizeof want, "x[%lld]", rfc);
	char *text = lowered_text(b.p, 0);
	assert_contains(text, want);
	free(text);
	const FlatBuffer *fb = &backend_lowered(b.p, 0)->bufs[0];
	ck_assert_int_eq(fb->flat->ndim, 1);
	ck_assert_int_eq(fb->flat->shape[0]->u.ival, 16LL * 32 * 64 * 64 * 4);
	ck_assert_int_eq(fb->flat->naxis_separators, 0);
	built_free(&b);
}
END_TEST

/* The texture-style 2-d grouping: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4]
 * -> shape [16 * (128/4) * 64, 64 * 4], index [(128/4)*64*11 + 64*25 + 37,
 * 4*23 + 101%4], axis_separators [1] (seed 001 writes [0] in its own
 * convention: a flattened 2-d buffer differs from an unflattened one). */
START_TEST(flatten_nchwc_2d_grouping_seed001)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(nchwc_kernel));
	set_separators(param_buffer(m, "x"), 1, (int[]){3});
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	char want[64];
	snprintf(want, sizeof want, "x[%d, %d]", 32 * 64 * 11 + 64 * 25 + 37, 4 * 23 + 101 % 4);
	char *text = lowered_text(b.p, 0);
	assert_contains(text, want);
	free(text);
	const FlatBuffer *fb = &backend_lowered(b.p, 0)->bufs[0];
	ck_assert_int_eq(fb->ngroups, 2);
	ck_assert_int_eq(fb->flat->shape[0]->u.ival, 16 * 32 * 64);
	ck_assert_int_eq(fb->flat->shape[1]->u.ival, 64 * 4);
	ck_assert_int_eq(fb->flat->naxis_separators, 1);
	ck_assert_int_eq(fb->flat->axis_separators[0], 1);
	built_free(&b);
}
END_TEST

/* [m, AXIS_SEPARATOR, n, p, AXIS_SEPARATOR, q] gives (M, N*P, Q); the
 * lowered program computes what the scheduled one does, and the JIT too. */
START_TEST(flatten_three_groups_and_runs)
{
	Module *m = tu_parse(&arena, "k.tir",
			     tu_fixture("backend/flatten_three_groups_and_runs.tir"));
	set_separators(param_buffer(m, "X"), 2, (int[]){1, 3});
	set_separators(param_buffer(m, "Y"), 1, (int[]){2});
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	const LoweredFunc *lf = backend_lowered(b.p, 0);
	const FlatBuffer *x = &lf->bufs[0], *y = &lf->bufs[1];
	ck_assert_int_eq(x->ngroups, 3);
	ck_assert_int_eq(x->flat->shape[0]->u.ival, 2);
	ck_assert_int_eq(x->flat->shape[1]->u.ival, 12);
	ck_assert_int_eq(x->flat->shape[2]->u.ival, 5);
	ck_assert_int_eq(y->ngroups, 2);
	ck_assert_int_eq(y->flat->shape[0]->u.ival, 6);
	ck_assert_int_eq(y->flat->shape[1]->u.ival, 20);
	assert_lowered_equiv(lf, 5);
	assert_jit_agrees(b.p, 4, 0);
	/* three obligations for X's groups, two for Y's, one offset each */
	ck_assert_int_eq(backend_stats(b.p)->lower.nproven, 7);
	built_free(&b);
}
END_TEST

/* Flattening a flattened buffer changes nothing (seed 001's reason for
 * keeping N-1 separators). */
START_TEST(flatten_is_idempotent)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture("backend/flatten_is_idempotent.tir"));
	set_separators(param_buffer(m, "X"), 1, (int[]){1});
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	const LoweredFunc *lf = backend_lowered(b.p, 0);
	char *before = print_func(lf->source), *after = print_func(lf->func);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	built_free(&b);
}
END_TEST

/* ---------- flattening: index widths ---------- */

static const char symbolic_kernel[] =
	"@T.prim_func\n"
	"def f(a: T.handle, n: T.%s, m: T.%s):\n"
	"    A = T.match_buffer(a, (n, m), \"int32\")\n"
	"%s"
	"    for i, j in T.grid(n, m):\n"
	"        A[i, j] = A[i, j] + 1\n";

static Module *symbolic(const char *dtype, const char *facts)
{
	char text[1024];
	snprintf(text, sizeof text, symbolic_kernel, dtype, dtype, facts);
	return tu_parse(&arena, "k.tir", text);
}

START_TEST(flatten_index_int32_when_facts_bound_the_product)
{
	Module *m = symbolic("int32", "    T.assume(0 <= n and n <= 1000 and 0 <= m and m <= 1000)\n");
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	ck_assert_int_eq(backend_lowered(b.p, 0)->bufs[0].index_dtype[0], DT_INT32);
	ck_assert_int_eq(backend_stats(b.p)->lower.nwidened, 0);
	assert_jit_agrees(b.p, 6, 0);
	built_free(&b);
}
END_TEST

START_TEST(flatten_index_widened_to_int64_when_int32_is_refuted)
{
	Module *m = symbolic("int32", "");
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	ck_assert_int_eq(backend_lowered(b.p, 0)->bufs[0].index_dtype[0], DT_INT64);
	ck_assert_int_eq(backend_stats(b.p)->lower.nwidened, 1);
	char *text = lowered_text(b.p, 0);
	assert_contains(text, "\"int64\")"); /* the cast of the flat index */
	free(text);
	assert_jit_agrees(b.p, 6, 0);
	built_free(&b);
}
END_TEST

START_TEST(flatten_rejects_product_beyond_int64_naming_buffer_and_shape)
{
	Module *m = symbolic("int64", "");
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_ptr_null(b.p);
	char *msg = diag_render(&d);
	assert_contains(msg, "cannot flatten buffer A");
	assert_contains(msg, "(n, m)");
	assert_contains(msg, "int64");
	assert_contains(msg, "counterexample");
	free(msg);
	sched_free(b.s);
}
END_TEST

START_TEST(flatten_rejects_when_widening_is_disabled)
{
	Module *m = symbolic("int32", "");
	DiagList d;
	diag_init(&d, &arena);
	BackendOptions o = {0};
	o.flatten.allow_int64 = false;
	Built b = build_module(m, &o, &d);
	ck_assert_ptr_null(b.p);
	char *msg = diag_render(&d);
	assert_contains(msg, "cannot flatten buffer A");
	assert_contains(msg, "widening to int64 is disabled");
	free(msg);
	sched_free(b.s);
}
END_TEST

START_TEST(flatten_obligations_go_to_the_proof_log_and_recheck)
{
	char dir[] = "/tmp/vsched-flatlog-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	Module *m = symbolic("int32", "");
	Schedule *s = tu_schedule(&arena, m);
	DiagList d;
	diag_init(&d, &arena);
	s->log = proof_log_open(dir, &d);
	ck_assert_ptr_nonnull(s->log);
	Program *p = build_proven(s, NULL, &d);
	ck_assert_ptr_nonnull(p);
	backend_free(p);
	sched_free(s); /* closes the log */
	char *out = NULL;
	ck_assert_int_eq(proof_log_show(dir, false, &out), 0);
	assert_contains(out, "flatten.index_fits_int32");
	assert_contains(out, "flatten.index_fits_int64");
	free(out);
	/* the refuted int32 query stays sat, the int64 one unsat */
	ck_assert_int_eq(proof_log_check(dir, "z3", &out), 0);
	free(out);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---------- conformance cases through the JIT ---------- */

/* Compile m after `script` (NULL: as written) and compare with the
 * interpreter. Returns whether the schedule was accepted. */
static bool jit_case(Module *m, const char *script_path, const char *name)
{
	Schedule *s = tu_schedule(&arena, m);
	DiagList d;
	diag_init(&d, &arena);
	bool accepted = true;
	if (script_path) {
		Source *src = source_read_file(&arena, script_path, &d);
		Script *sc = src ? script_parse(&arena, src, &d) : NULL;
		ck_assert_msg(sc != NULL, "%s: script", name);
		accepted = sched_run_script(s, sc, &d) == STEP_COMMITTED;
	}
	if (accepted) {
		Program *p = build_proven(s, NULL, &d);
		ck_assert_msg(p != NULL, "%s: build failed:\n%s", name, diag_render(&d));
		for (int i = 0; i < backend_num_funcs(p); i++) {
			char *report = NULL;
			const char *f = backend_lowered(p, i)->func->name;
			int rc = backend_check(p, f, 6, 5, 0.0, &report);
			ck_assert_msg(rc == 0, "%s (%s): JIT disagrees:\n%s", name, f, report);
			free(report);
		}
		backend_free(p);
	}
	sched_free(s);
	return accepted;
}

START_TEST(conformance_cases_jit_agrees_with_interpreter)
{
	const char *shared = tu_shared_dir();
	if (!shared) {
		fprintf(stderr, "backend: shared folder not found, conformance skipped\n");
		return;
	}
	char root[4096];
	tu_join(root, sizeof root, shared, "conformance");
	DIR *dir = opendir(root);
	ck_assert_ptr_nonnull(dir);
	int scheduled = 0, kernels = 0;
	for (struct dirent *de; (de = readdir(dir));) {
		if (de->d_name[0] == '.')
			continue;
		char dirpath[4096], path[4096], sched[4096];
		tu_join(dirpath, sizeof dirpath, root, de->d_name);
		tu_join(path, sizeof path, dirpath, "before.tir");
		if (access(path, R_OK) != 0)
			continue;
		tu_join(sched, sizeof sched, dirpath, "schedule.sched");
		/* the kernel as written (an empty schedule), then scheduled */
		jit_case(parse_file(path), NULL, de->d_name);
		kernels++;
		scheduled += jit_case(parse_file(path), sched, de->d_name);
		tu_join(path, sizeof path, dirpath, "after.tir");
		if (access(path, R_OK) == 0) {
			jit_case(parse_file(path), NULL, de->d_name);
			kernels++;
		}
	}
	closedir(dir);
	fprintf(stderr, "backend: %d conformance kernels as written and %d accepted schedules "
		"agree with the interpreter through the JIT\n", kernels, scheduled);
	ck_assert_int_gt(scheduled, 0);
}
END_TEST

/* ---------- the soundness property test's kernels through the JIT ---------- */

START_TEST(random_schedules_jit_agrees_with_interpreter)
{
	const char *env = getenv("VS_BACKEND_STEPS");
	int target = env ? atoi(env) : 240, steps = 0, committed = 0, checked = 0;
	rng_state = 0x9E3779B97F4A7C15ull;
	for (unsigned kernel = 0; steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		char *text = gen_kernel();
		Module *m = tu_parse(&a, "random.tir", text);
		Schedule *s = tu_schedule(&a, m);
		for (int k = 0; k < 6 && steps < target; k++) {
			LoopRef loops[64];
			int n = 0;
			collect_loops(sched_func(s)->body, loops, &n, 64);
			if (n == 0)
				break;
			RwCtx c;
			DiagList d;
			diag_init(&d, &a);
			char desc[256];
			sched_begin(s, &c, "random", (Span){0}, &d);
			RwStatus st = random_step(&c, loops, n, desc, sizeof desc);
			c.desc = arena_strdup(&a, desc);
			StepReport *r = sched_finish(s, &c, st);
			steps++;
			if (r->status != STEP_COMMITTED)
				continue;
			committed++;
			/* every committed step compiled and run */
			Program *p = build_proven(s, NULL, &d);
			ck_assert_msg(p != NULL, "build failed after %s:\n%s\n%s", desc, diag_render(&d), text);
			char *report = NULL;
			int rc = backend_check(p, sched_func(s)->name, 2, kernel * 7u + (unsigned)k, 0.0, &report);
			if (rc != 0) {
				char *after = print_func(sched_func(s));
				ck_abort_msg("JIT disagrees after %s:\n%s\nkernel:\n%s\nafter:\n%s", desc, report,
					     text, after);
			}
			free(report);
			backend_free(p);
			checked++;
		}
		sched_free(s);
		free(text);
		arena_free(&a);
	}
	fprintf(stderr, "backend: %d random steps, %d committed, %d compiled and checked\n", steps,
		committed, checked);
	ck_assert_int_gt(checked, target / 5);
}
END_TEST

/* ---------- the runtime ---------- */

typedef struct Chunks {
	int64_t seen[1024];
	pthread_t who[1024];
	int fail_at;
} Chunks;

static int32_t record_chunk(void *ctx, int64_t begin, int64_t end)
{
	Chunks *c = ctx;
	for (int64_t k = begin; k < end; k++) {
		c->seen[k]++;
		c->who[k] = pthread_self();
	}
	return begin <= c->fail_at && c->fail_at < end ? 7 : 0;
}

static int32_t nested_body(void *ctx, int64_t begin, int64_t end)
{
	int32_t st = 0;
	for (int64_t k = begin; k < end && !st; k++)
		st = vs_rt_parallel_for(record_chunk, (Chunks *)ctx + k, 100);
	return st;
}

START_TEST(runtime_covers_every_iteration_once_and_reports_failure)
{
	static Chunks c;
	memset(&c, 0, sizeof c);
	c.fail_at = -1;
	ck_assert_int_eq(vs_rt_parallel_for(record_chunk, &c, 1000), 0);
	bool several = false;
	for (int k = 0; k < 1000; k++) {
		ck_assert_int_eq(c.seen[k], 1);
		several |= !pthread_equal(c.who[k], c.who[0]);
	}
	if (vs_rt_num_threads() > 1)
		ck_assert_msg(several, "all chunks ran on one thread");
	ck_assert_int_eq(vs_rt_parallel_for(record_chunk, &c, 0), 0);
	c.fail_at = 999;
	ck_assert_int_eq(vs_rt_parallel_for(record_chunk, &c, 1000), 7);
	static Chunks inner[4];
	memset(inner, 0, sizeof inner);
	for (int i = 0; i < 4; i++)
		inner[i].fail_at = -1;
	ck_assert_int_eq(vs_rt_parallel_for(nested_body, inner, 4), 0);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 100; k++)
			ck_assert_int_eq(inner[i].seen[k], 1);
}
END_TEST

/* ---------- the public API and the command line ---------- */

START_TEST(api_builds_and_calls_the_jit_kernel)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "k.tir",
				       tu_fixture("backend/api_builds_and_calls_the_jit_kernel.tir"));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_run_script_string(s, "s.sched", "io, ii = sch.split(\"i\", factor=16, tail=\"perfect\")\n"
							   "sch.vectorize(\"ii\")\n"),
			 VS_OK);
	vs_program *p = vs_build(s, NULL);
	ck_assert_msg(p != NULL, "%s", vs_last_error(ctx));
	typedef int32_t (*Axpy)(float *, float *, float);
	Axpy f = (Axpy)vs_program_lookup(p, "axpy");
	ck_assert_ptr_nonnull(f);
	float x[64], y[64];
	for (int i = 0; i < 64; i++) {
		x[i] = (float)i;
		y[i] = 1.0f;
	}
	ck_assert_int_eq(f(x, y, 0.5f), 0);
	for (int i = 0; i < 64; i++)
		ck_assert(y[i] == 0.5f * (float)i + 1.0f);
	char *report = NULL;
	ck_assert_int_eq(vs_program_check(p, "axpy", 3, 1, &report), VS_OK);
	free(report);
	double t = -1;
	ck_assert_int_eq(vs_program_time(p, "axpy", 1, 3, &t), VS_OK);
	ck_assert(t >= 0);
	int nobs = 0;
	vs_program_stats(p, &nobs, NULL, NULL, NULL);
	/* two flattened buffers, three race obligations of the vectorized loop */
	ck_assert_int_eq(nobs, 5);
	ck_assert_int_eq(vs_program_emit(p, "bogus", NULL), VS_BAD_INPUT);
	ck_assert_ptr_null(vs_program_lookup(p, "nope"));
	assert_contains(vs_last_error(ctx), "no kernel named nope");
	vs_program_free(p);
	/* the target CPU: checked names, an AVX2 build that runs here when
	 * the host has AVX2 and FMA, a foreign CPU built but not run */
	ck_assert_int_eq(vs_check_target(ctx, "x86-64-v3", "-fma"), VS_OK);
	ck_assert_int_eq(vs_check_target(ctx, "x86-64-v9", NULL), VS_BAD_INPUT);
	assert_contains(vs_last_error(ctx), "unknown CPU 'x86-64-v9'");
	vs_build_options bad = {.cpu = "k7"};
	ck_assert_ptr_null(vs_build(s, &bad));
	assert_contains(vs_last_error(ctx), "unknown CPU 'k7'");
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		vs_build_options avx2 = {.cpu = "x86-64-v3"};
		p = vs_build(s, &avx2);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(vs_program_check(p, "axpy", 2, 1, &report), VS_OK);
		free(report);
		vs_program_free(p);
	}
	vs_build_options foreign = {.cpu = "cannonlake"};
	p = vs_build(s, &foreign);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(vs_program_lookup(p, "axpy"));
	assert_contains(vs_last_error(ctx), "does not know which instructions CPU 'cannonlake' has");
	vs_program_free(p);
	vs_schedule_free(s);
	vs_context_free(ctx);
}
END_TEST

static int run_cli(const char *args, char **out)
{
	const char *bin = getenv("VS_BIN") ? getenv("VS_BIN") : "./vsched";
	char path[] = "/tmp/vsched-cli-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "%s %s >%s 2>&1", bin, args, path);
	int rc = system(cmd);
	*out = tu_read_file(path);
	unlink(path);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(cli_build_and_jit_exit_statuses)
{
	char *out = NULL;
	if (access(getenv("VS_BIN") ? getenv("VS_BIN") : "./vsched", X_OK) != 0) {
		fprintf(stderr, "backend: no vsched binary, CLI test skipped\n");
		return;
	}
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --schedule examples/backend/rowsum.sched "
				 "--emit llvm -o /dev/null", &out), 0);
	free(out);
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --emit header", &out), 0);
	assert_contains(out, "int32_t rowsum(int32_t *restrict A, int32_t *restrict B);");
	free(out);
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --emit wat -o /dev/null", &out), 2);
	assert_contains(out, "kind must be llvm, asm, obj or header");
	free(out);
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --emit obj", &out), 2);
	free(out);
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir", &out), 2);
	free(out);
	ck_assert_int_eq(run_cli("jit examples/backend/rowsum.tir --schedule examples/backend/rowsum.sched "
				 "--trials 2 --repeat 3", &out), 0);
	assert_contains(out, "agrees with the interpreter");
	assert_contains(out, "10 obligations proven (flattening, annotations");
	free(out);
	/* a rejected schedule compiles nothing: exit 1 */
	ck_assert_int_eq(run_cli("jit examples/row_sum/row_sum.tir --schedule examples/row_sum/row_sum_undef.sched", &out), 1);
	assert_contains(out, "nothing is compiled");
	free(out);
	/* a syntax error: file:line:col, exit 2 */
	ck_assert_int_eq(run_cli("build tests/data/backend/syntax_error.tir --emit llvm", &out), 2);
	assert_contains(out, "syntax_error.tir:3:");
	free(out);
	/* --cpu / --cpu-features: an unknown name is unusable input (exit 2,
	 * before any scheduling); an AVX2 target builds, and runs here when
	 * the host has AVX2 */
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --emit asm --cpu pentium9", &out), 2);
	assert_contains(out, "error: unknown CPU 'pentium9'");
	free(out);
	ck_assert_int_eq(run_cli("jit examples/backend/rowsum.tir --cpu-features=avx2", &out), 2);
	assert_contains(out, "expected a comma-separated list of +feature or -feature");
	free(out);
	ck_assert_int_eq(run_cli("build examples/backend/rowsum.tir --emit asm -o /dev/null --cpu haswell "
				 "--cpu-features=-fma",
				 &out),
			 0);
	free(out);
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		ck_assert_int_eq(run_cli("jit examples/backend/rowsum.tir --schedule examples/backend/rowsum.sched "
					 "--trials 2 --repeat 1 --cpu x86-64-v3",
					 &out),
				 0);
		assert_contains(out, "agrees with the interpreter");
		free(out);
	}
	/* code the host may not run: built, not run (exit 2, the reason) */
	ck_assert_int_eq(run_cli("jit examples/backend/rowsum.tir --trials 1 --cpu sapphirerapids", &out), 2);
	assert_contains(out, "cannot run code compiled for CPU sapphirerapids in this process");
	free(out);
}
END_TEST

/* ---------- undefined behaviour of the kernel as written ---------- */

/* The interpreter on a random admissible input of f with scalar n: the
 * status of the run (a warned undefined behaviour shows up here). */
static RunStatus interp_status(const Func *f, int64_t n, const char **msg)
{
	DiagList d;
	diag_init(&d, &arena);
	State *st = f->nparams > 0 && f->params[f->nparams - 1].buf == NULL
			    ? interp_gen_input_scalars(&arena, f, 5, &n, &d)
			    : interp_gen_input(&arena, f, 5, &d);
	ck_assert_msg(st != NULL, "no input: %s", diag_render(&d));
	InterpResult r;
	RunStatus rs = interp_run(f, st, 0, &r);
	*msg = r.message;
	return rs;
}

/* A store past its buffer and a division by a parameter that may be 0
 * are built with a warning that names the obligation and gives the
 * values; the interpreter, run with those values, stops on the same
 * undefined behaviour. */
START_TEST(undefined_behaviour_of_the_kernel_is_warned_about)
{
	Built b = build(tu_fixture("backend/safety-oob_store.tir"), NULL);
	const char *w = backend_warnings(b.p);
	ck_assert_ptr_nonnull(w);
	assert_contains(w, "k.tir:4:9: warning: the kernel has undefined behaviour on some inputs");
	assert_contains(w, "safety.in_bounds refuted (the write of B at line 4");
	assert_contains(w, "for example i = 1");
	assert_contains(w, "the interpreter stops there: store B[1");
	assert_lacks(w, "the read of A"); /* A[i // 2] stays inside */
	const char *msg;
	ck_assert_int_eq(interp_status(b.s->mod->funcs[0], 0, &msg), RUN_UB);
	assert_contains(msg, "out of bounds");
	built_free(&b);

	b = build(tu_fixture("backend/safety-div_by_param.tir"), NULL);
	w = backend_warnings(b.p);
	ck_assert_ptr_nonnull(w);
	assert_contains(w, "safety.nonzero_divisor refuted (the divisor n at line 4 is never 0)");
	assert_contains(w, "n = 0");
	assert_contains(w, "the kernel has undefined behaviour on some inputs");
	assert_lacks(w, "divisor 3");
	ck_assert_int_eq(interp_status(b.s->mod->funcs[0], 0, &msg), RUN_UB);
	assert_contains(msg, "division by zero");
	built_free(&b);

	/* a shift by a parameter may leave [0, 32) (LLVM's poison, C's UB) */
	b = build(tu_fixture("backend/safety-shift_by_param.tir"), NULL);
	w = backend_warnings(b.p);
	ck_assert_ptr_nonnull(w);
	assert_contains(w, "safety.shift_amount refuted (the shift amount n at line 4 is in [0, 32))");
	assert_lacks(w, "amount 3");
	built_free(&b);
	/* guarded, it is proven; compiled shl / ashr agree with the interpreter */
	b = build(tu_fixture("backend/safety-shift_guarded.tir"), NULL);
	ck_assert_ptr_null(backend_warnings(b.p));
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

/* Proven safe: a divisor the entry facts keep positive, reads guarded by
 * the T.if_then_else arm or the `and`/`or` operand that decides whether
 * they run. No warning, and the code agrees with the interpreter. */
START_TEST(guards_and_facts_prove_the_kernel_safe)
{
	Built b = build(tu_fixture("backend/safety-div_by_assumed.tir"), NULL);
	ck_assert_ptr_null(backend_warnings(b.p));
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);

	b = build(tu_fixture("backend/safety-guarded.tir"), NULL);
	ck_assert_ptr_null(backend_warnings(b.p));
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

/* An index read from a buffer: nothing bounds the values of I, so the
 * read of A is refuted; the warning's run of the interpreter, on random
 * contents of I, stops on it. The read of I itself is proven. */
START_TEST(data_dependent_indices_may_leave_the_buffer)
{
	Built b = build(tu_fixture("backend/safety-data_dependent.tir"), NULL);
	const char *w = backend_warnings(b.p);
	ck_assert_ptr_nonnull(w);
	assert_contains(w, "obligation safety.in_bounds refuted (the read of A at line 4");
	assert_lacks(w, "read of I");
	built_free(&b);
}
END_TEST

/* The check's step budget is shared by its trials; running out is said,
 * with the budget's name, never a silently skipped trial. */
START_TEST(jit_check_names_its_step_budget)
{
	Built b = build(tu_fixture("backend/rowsum64.tir"), NULL);
	char *report = NULL;
	ck_assert_int_eq(backend_check_budget(b.p, "rowsum64", 3, 1, 0.0, 100, &report), 2);
	assert_contains(report, "trial 0: the interpreter stopped at the check's step budget "
				"(BACKEND_CHECK_STEPS, 100 steps");
	assert_contains(report, "no trial finished within the interpreter's step budget: "
				"rowsum64 is not checked");
	free(report);
	/* two runs fit in 20000 steps; the third is not started */
	ck_assert_int_eq(backend_check_budget(b.p, "rowsum64", 3, 1, 0.0, 20000, &report), 0);
	assert_contains(report, "trial 2 not run: the trials so far took up to 8");
	assert_contains(report, "left of the check's step budget (BACKEND_CHECK_STEPS, 20000 steps");
	assert_contains(report, "2 trials: compiled rowsum64 agrees with the interpreter exactly");
	free(report);
	built_free(&b);
}
END_TEST

/* `vsched jit`'s check of a mid-size tiled matmul (bench/matmul_avx2.sched
 * at 256^3): all three trials run within the check's default step budget
 * and agree with the interpreter. */
START_TEST(jit_check_runs_every_trial_of_a_mid_size_matmul)
{
	Built b = build(tu_fixture("backend/matmul256.tir"),
			"io, ii = sch.split(\"i#2\", factor=4, tail=\"perfect\")\n"
			"jo, ji = sch.split(\"j#2\", factor=16, tail=\"perfect\")\n"
			"ko, ki = sch.split(\"k\", factor=128, tail=\"perfect\")\n"
			"sch.reorder(\"ko\", \"io\", \"jo\", \"ki\", \"ii\", \"ji\")\n"
			"sch.unroll(\"ii\")\nsch.vectorize(\"ji\")\n");
	char *report = NULL;
	ck_assert_int_eq(backend_check(b.p, "matmul", 3, 1, -1, &report), 0);
	assert_contains(report, "3 trials: compiled matmul agrees with the interpreter");
	assert_lacks(report, "not run");
	free(report);
	built_free(&b);
}
END_TEST

/* ---------- the bench's schedules ---------- */

/* make bench's conv2d schedules (bench/conv2d_*.sched, each CPU's, also
 * with the parallel steps the bench adds for all cores) are accepted on
 * the benchmarked kernel and, at the small size, compiled code agrees
 * with the interpreter. */
static void conv2d_schedule_agrees(const char *sched_path, bool par, const char *cpu)
{
	char *sched = tu_read_file(sched_path);
	char script[4096];
	snprintf(script, sizeof script, "%s%s", sched, par ? "\nsch.parallel(\"ob#2\")\nsch.parallel(\"ob#1\")\n" : "");
	free(sched);
	char *big = tu_read_file("bench/conv2d.tir");
	Schedule *s = tu_schedule(&arena, tu_parse(&arena, "bench/conv2d.tir", big));
	ck_assert_msg(tu_run(s, script) == STEP_COMMITTED, "%s rejected on bench/conv2d.tir:\n%s", sched_path,
		      sched_report_text(tu_last(s)));
	sched_free(s);
	free(big);
	char *small = tu_read_file("bench/conv2d_small.tir");
	BackendOptions o = {.contract_fma = true, .cpu = cpu};
	Built b = build_opts(small, script, &o);
	free(small);
	assert_jit_agrees(b.p, 2, BACKEND_REAL_TOLERANCE);
	built_free(&b);
}

/* The AVX2 code of the bench's AVX2 section: compiled for x86-64-v3 when
 * this host can run it, else for the host. */
static const char *avx2_cpu(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "x86-64-v3" : NULL;
}

START_TEST(conv2d_bench_schedules_agree_with_the_interpreter)
{
	conv2d_schedule_agrees("bench/conv2d_avx512.sched", false, NULL);
	conv2d_schedule_agrees("bench/conv2d_avx2.sched", false, avx2_cpu());
	conv2d_schedule_agrees("bench/conv2d_avx2.sched", true, avx2_cpu());
	conv2d_schedule_agrees("bench/conv2d_avx512.sched", true, NULL);
}
END_TEST

/* make bench's AVX2 matmul schedules (6 x 16 tiles with row tails; 1024:
 * B packed) at a small size, compiled for AVX2, against the interpreter:
 * 1024's at 128^3 (21 tiles of 6 rows and a 2-row tail), 1000's on the
 * 16 x 40 x 250 kernel with 1000's tails (the bench's own checks). */
START_TEST(avx2_matmul_bench_schedules_agree_with_the_interpreter)
{
	char *big = tu_read_file("bench/matmul1024.tir");
	char *small = malloc(strlen(big) + 1), *o = small;
	for (const char *p = big; *p;)
		if (strncmp(p, "1024", 4) == 0)
			memcpy(o, "128", 3), o += 3, p += 4;
		else
			*o++ = *p++;
	*o = 0;
	BackendOptions opt = {.contract_fma = true, .cpu = avx2_cpu()};
	opt.flatten.allow_int64 = true;
	char *script = tu_read_file("bench/matmul_6x16_avx2.sched");
	Built b = build_opts(small, script, &opt);
	assert_jit_agrees(b.p, 1, BACKEND_REAL_TOLERANCE);
	built_free(&b);
	free(script);
	free(small);
	free(big);
	char *tail = tu_read_file("bench/matmul_tail_check.tir");
	script = tu_read_file("bench/matmul1000_avx2.sched");
	b = build_opts(tail, script, &opt);
	assert_jit_agrees(b.p, 2, BACKEND_REAL_TOLERANCE);
	built_free(&b);
	free(script);
	free(tail);
}
END_TEST

/* make bench's row sum schedules, at 16 rows against the interpreter (the
 * overcomputed one reads the zero padding: exact for int32; its 64-wide
 * vectorized sum keeps its partial sums in registers across the row) */
START_TEST(rowsum_bench_schedules_agree_with_the_interpreter)
{
	const char *scheds[] = {"bench/rowsum.sched", "bench/rowsum_branchy.sched"};
	char *k = tu_read_file("bench/rowsum_small.tir");
	for (int i = 0; i < 2; i++) {
		char *script = tu_read_file(scheds[i]);
		Built b = build(k, script);
		ck_assert_int_eq(backend_stats(b.p)->nregister_reductions, i == 0 ? 1 : 0);
		assert_jit_agrees(b.p, 2, 0.0);
		built_free(&b);
		free(script);
	}
	free(k);
}
END_TEST

Suite *suite_backend(void)
{
	Suite *s = suite_create("backend");
	TCase *tc = tcase_create("lowering");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, remove_assume_drops_facts_and_their_loops);
	tcase_add_test(tc, remove_store_undef_keeps_zero_times_undef);
	tcase_add_test(tc, local_buffer_with_removed_undef_store_is_frozen);
	suite_add_tcase(s, tc);

	tc = tcase_create("flatten");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, flatten_default_row_major_seed001);
	tcase_add_test(tc, flatten_transposed_physical_seed001);
	tcase_add_test(tc, flatten_nhwc_to_nchwc_1d_seed001);
	tcase_add_test(tc, flatten_nchwc_2d_grouping_seed001);
	tcase_add_test(tc, flatten_three_groups_and_runs);
	tcase_add_test(tc, flatten_is_idempotent);
	tcase_add_test(tc, flatten_index_int32_when_facts_bound_the_product);
	tcase_add_test(tc, flatten_index_widened_to_int64_when_int32_is_refuted);
	tcase_add_test(tc, flatten_rejects_product_beyond_int64_naming_buffer_and_shape);
	tcase_add_test(tc, flatten_rejects_when_widening_is_disabled);
	tcase_add_test(tc, flatten_obligations_go_to_the_proof_log_and_recheck);
	suite_add_tcase(s, tc);

	suite_add_tcase(s, backend_codegen_tcase());

	suite_add_tcase(s, backend_float16_tcase());

	suite_add_tcase(s, backend_math_calls_tcase());

	suite_add_tcase(s, backend_loops_tcase());

	tc = tcase_create("jit_vs_interpreter");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, conformance_cases_jit_agrees_with_interpreter);
	tcase_add_test(tc, random_schedules_jit_agrees_with_interpreter);
	tcase_add_test(tc, jit_check_names_its_step_budget);
	tcase_add_test(tc, jit_check_runs_every_trial_of_a_mid_size_matmul);
	suite_add_tcase(s, tc);

	suite_add_tcase(s, backend_emission_tcase());
	suite_add_tcase(s, backend_target_cpu_tcase());

	tc = tcase_create("api_cli");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, api_builds_and_calls_the_jit_kernel);
	tcase_add_test(tc, cli_build_and_jit_exit_statuses);
	suite_add_tcase(s, tc);

	tc = tcase_create("safety");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, undefined_behaviour_of_the_kernel_is_warned_about);
	tcase_add_test(tc, guards_and_facts_prove_the_kernel_safe);
	tcase_add_test(tc, data_dependent_indices_may_leave_the_buffer);
	suite_add_tcase(s, tc);

	tc = tcase_create("bench_schedules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, conv2d_bench_schedules_agree_with_the_interpreter);
	tcase_add_test(tc, rowsum_bench_schedules_agree_with_the_interpreter);
	tcase_add_test(tc, avx2_matmul_bench_schedules_agree_with_the_interpreter);
	suite_add_tcase(s, tc);

	tc = tcase_create("runtime");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, runtime_covers_every_iteration_once_and_reports_failure);
	suite_add_tcase(s, tc);
	return s;
}
