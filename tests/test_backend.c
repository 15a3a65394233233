/* tests/test_backend.c — the backend: lowering passes (RemoveAssume,
 * RemoveStoreUndef, flattening with the seed 001 examples and the proven
 * index widths), code generation of every construct and dtype compared
 * with the reference interpreter through the JIT, the accepted
 * conformance cases and the random kernels and steps of the soundness
 * property test through the JIT, emission (an example C driver linked
 * with an emitted object), the C header, and the pthread runtime. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/runtime.h"
#include "rewrites/schedule/schedule.h"
#include "tests/randkernel.h"
#include "tests/testutil.h"
#include "vsched.h"

/* What vs_build does: the schedule's proven module, then the backend. */
static Program *build_proven(Schedule *s, const BackendOptions *opt, DiagList *d)
{
	ProvenModule pm;
	sched_proven_module(s, &pm);
	return backend_build(&pm, opt, d);
}

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* ---------- helpers ---------- */

/* A schedule and the program built from it, freed together. */
typedef struct Built {
	Schedule *s;
	Program *p;
} Built;

static Built build_opts(const char *text, const char *script, const BackendOptions *opt)
{
	Built b = {0};
	Module *m = tu_parse(&arena, "k.tir", text);
	b.s = tu_schedule(&arena, m);
	if (script)
		ck_assert_msg(tu_run(b.s, script) == STEP_COMMITTED, "schedule rejected:\n%s",
			      sched_report_text(tu_last(b.s)));
	DiagList d;
	diag_init(&d, &arena);
	b.p = build_proven(b.s, opt, &d);
	ck_assert_msg(b.p != NULL, "build failed:\n%s", diag_render(&d));
	return b;
}

static Built build(const char *text, const char *script)
{
	return build_opts(text, script, NULL);
}

static void built_free(Built *b)
{
	backend_free(b->p);
	sched_free(b->s);
}

/* JIT vs interpreter on every function of the program. */
static void assert_jit_agrees(Program *p, int trials, double tol)
{
	for (int i = 0; i < backend_num_funcs(p); i++) {
		const char *name = backend_lowered(p, i)->func->name;
		char *report = NULL;
		int rc = backend_check(p, name, trials, 11, tol, &report);
		ck_assert_msg(rc == 0, "JIT disagrees on %s:\n%s\nlowered:\n%s", name, report,
			      print_func(backend_lowered(p, i)->func));
		free(report);
	}
}

static void jit_agrees(const char *text, const char *script)
{
	Built b = build(text, script);
	assert_jit_agrees(b.p, 6, 0.0);
	built_free(&b);
}

/* The lowered function printed (malloc'ed). */
static char *lowered_text(Program *p, int i)
{
	return print_func(backend_lowered(p, i)->func);
}

static void assert_contains(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

static void assert_lacks(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) == NULL, "did not expect \"%s\" in:\n%s", needle, text);
}

static Buffer *param_buffer(Module *m, const char *name)
{
	Func *f = m->funcs[0];
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && strcmp(f->params[i].buf->name, name) == 0)
			return f->params[i].buf;
	ck_abort_msg("no buffer %s", name);
	return NULL;
}

/* The test stands in for transform_layout: axis separators set on a
 * parsed physical buffer. */
static void set_separators(Buffer *b, int n, const int *seps)
{
	b->naxis_separators = n;
	b->axis_separators = arena_alloc(&arena, sizeof(int) * (size_t)(n ? n : 1));
	memcpy(b->axis_separators, seps, sizeof(int) * (size_t)n);
}

static Built build_module(Module *m, const BackendOptions *opt, DiagList *d)
{
	Built b = {0};
	b.s = tu_schedule(&arena, m);
	b.p = build_proven(b.s, opt, d);
	return b;
}

/* Lowered vs scheduled function in the interpreter: the same input cells
 * (flat data is the same row-major data), the same results. */
static void assert_lowered_equiv(const LoweredFunc *lf, uint64_t seed)
{
	DiagList d;
	diag_init(&d, &arena);
	State *in = interp_gen_input(&arena, lf->source, seed, &d);
	ck_assert_msg(in != NULL, "no input: %s", diag_render(&d));
	State *ref = state_clone(&arena, in);
	InterpResult r;
	ck_assert_int_eq(interp_run(lf->source, ref, 0, &r), RUN_OK);
	int64_t scalars[16] = {0};
	for (int i = 0; i < in->nscalars && i < 16; i++)
		scalars[i] = in->scalars[i].i;
	State *low = state_new(&arena, lf->func, scalars, &d);
	ck_assert_msg(low != NULL, "no lowered state: %s", diag_render(&d));
	for (int i = 0; i < in->nbufs; i++) {
		ck_assert_int_eq(low->bufs[i].size, in->bufs[i].size);
		memcpy(low->bufs[i].data, in->bufs[i].data, sizeof(Value) * (size_t)in->bufs[i].size);
		memcpy(low->bufs[i].cell, in->bufs[i].cell, (size_t)in->bufs[i].size);
	}
	ck_assert_msg(interp_run(lf->func, low, 0, &r) == RUN_OK, "lowered run: %s", r.message);
	for (int i = 0; i < ref->nbufs; i++)
		for (int64_t k = 0; k < ref->bufs[i].size; k++) {
			if (ref->bufs[i].cell[k] != CELL_INIT)
				continue;
			ck_assert_int_eq(low->bufs[i].cell[k], CELL_INIT);
			ck_assert_msg(memcmp(&low->bufs[i].data[k], &ref->bufs[i].data[k], sizeof(Value)) == 0,
				      "%s cell %lld differs", ref->bufs[i].buf->name, (long long)k);
		}
}

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

/* ---------- code generation: dtypes and operators ---------- */

/* Kernels whose every line exercises one semantic corner; the JIT must
 * compute what the interpreter computes (ieee mode: floats exactly). */
static const char *const expr_kernels[] = {
	/* int32 wraps (A in -8..8), floor division and modulo by negatives */
	"def f(A: T.Buffer[(16,), \"int32\"], C: T.Buffer[(16,), \"int32\"], B: T.Buffer[(16, 8), \"int32\"]):\n"
	"    for i in T.serial(16):\n"
	"        d = T.if_then_else(C[i] == 0, -1, C[i])\n"
	"        B[i, 0] = A[i] * 268435456 + 7\n"
	"        B[i, 1] = A[i] // d\n"
	"        B[i, 2] = A[i] % d\n"
	"        B[i, 3] = (A[i] * 0 - 2147483647 - 1) // -1\n"
	"        B[i, 4] = (A[i] - 2147483647 - 1) % d\n"
	"        B[i, 5] = T.min(A[i], C[i]) - T.max(A[i] * 3, -C[i])\n"
	"        B[i, 6] = -(A[i] * 536870912)\n"
	"        B[i, 7] = (i - 8) // 3 + (i - 8) % 3 + (i - 8) // -3 + (i - 8) % -3\n",
	/* int8 and int16 wrap, extend, divide */
	"def f(A: T.Buffer[(16,), \"int8\"], C: T.Buffer[(16,), \"int16\"], B: T.Buffer[(16, 6), \"int8\"], D: T.Buffer[(16, 3), \"int16\"]):\n"
	"    for i in T.serial(16):\n"
	"        B[i, 0] = A[i] * 20 + 100\n"
	"        B[i, 1] = A[i] // 3 + A[i] % -3\n"
	"        B[i, 2] = T.max(A[i] * 17, A[i] - 120)\n"
	"        B[i, 3] = T.cast(C[i] * 1000, \"int8\")\n"
	"        B[i, 4] = -A[i] * 16\n"
	"        B[i, 5] = T.cast(A[i], \"int8\") // T.if_then_else(A[i] == 0, -1, A[i])\n"
	"        D[i, 0] = C[i] * 4096 + T.cast(A[i], \"int16\")\n"
	"        D[i, 1] = C[i] // 5 - C[i] % 5\n"
	"        D[i, 2] = T.cast(A[i] * 100, \"int16\")\n",
	/* int64 wraps and mixes with int32 */
	"def f(A: T.Buffer[(16,), \"int64\"], C: T.Buffer[(16,), \"int32\"], B: T.Buffer[(16, 5), \"int64\"]):\n"
	"    for i in T.serial(16):\n"
	"        B[i, 0] = A[i] * 1152921504606846976 + 3\n"
	"        B[i, 1] = A[i] + T.cast(C[i] * 268435456, \"int64\")\n"
	"        B[i, 2] = (A[i] * 0 - 9223372036854775807 - 1) // -1\n"
	"        B[i, 3] = T.if_then_else(T.cast(C[i], \"int64\") < A[i], 1, 0)\n"
	"        B[i, 4] = A[i] // T.if_then_else(A[i] == 0, 7, A[i] - 1)\n",
	/* uint8: wrap modulo 256, unsigned order, division */
	"def f(A: T.Buffer[(16,), \"uint8\"], B: T.Buffer[(16, 5), \"uint8\"], D: T.Buffer[(16, 2), \"int32\"]):\n"
	"    for i in T.serial(16):\n"
	"        B[i, 0] = A[i] * 20 - 100\n"
	"        B[i, 1] = T.max(A[i] * 16, 100)\n"
	"        B[i, 2] = T.min(A[i] * 16, 100) // 3\n"
	"        B[i, 3] = (A[i] * 16) % 7\n"
	"        B[i, 4] = T.cast(-T.cast(A[i], \"int32\"), \"uint8\")\n"
	"        D[i, 0] = T.cast(A[i] * 16, \"int32\") - 128\n"
	"        D[i, 1] = T.if_then_else(A[i] * 16 > 100, 1, 0)\n",
	/* bool values, buffers and logic with short circuits */
	"def f(A: T.Buffer[(16,), \"int32\"], M: T.Buffer[(16,), \"bool\"], B: T.Buffer[(16, 4), \"int32\"]):\n"
	"    for i in T.serial(16):\n"
	"        M[i] = A[i] > 2 or A[i] < -5\n"
	"        B[i, 0] = T.if_then_else(M[i], 1, 2)\n"
	"        B[i, 1] = T.if_then_else(not M[i] and A[i] != 0, 3, 4)\n"
	"        B[i, 2] = T.cast(M[i], \"int32\") + T.cast(A[i] > 0, \"int32\") * 10\n"
	"        B[i, 3] = T.if_then_else(i < 15 and A[i + 1] > 0, A[i + 1], -1)\n",
	/* float32: floor division and modulo with negatives, min/max, casts */
	"def f(F: T.Buffer[(16,), \"float32\"], A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(16, 8), \"float32\"], D: T.Buffer[(16, 3), \"int32\"]):\n"
	"    for i in T.serial(16):\n"
	"        B[i, 0] = F[i] // 0.75\n"
	"        B[i, 1] = F[i] % -1.5\n"
	"        B[i, 2] = T.min(F[i], 0.5) * T.max(F[i], -0.25)\n"
	"        B[i, 3] = -F[i] / 3.0 + F[i] * 0.1\n"
	"        B[i, 4] = T.cast(A[i] * 16777217, \"float32\")\n"
	"        B[i, 5] = T.cast(T.cast(F[i], \"float64\") / 7.0, \"float32\")\n"
	"        B[i, 6] = T.if_then_else(A[i] < F[i], 1.0, 2.0)\n"
	"        B[i, 7] = F[i] / T.cast(A[i], \"float32\")\n"
	"        D[i, 0] = T.cast(F[i], \"int32\")\n"
	"        D[i, 1] = T.cast(T.cast(F[i], \"bool\"), \"int32\")\n"
	"        D[i, 2] = T.cast(F[i] * 4.0, \"int8\")\n",
	/* float64 */
	"def f(F: T.Buffer[(16,), \"float64\"], B: T.Buffer[(16, 4), \"float64\"]):\n"
	"    for i in T.serial(16):\n"
	"        B[i, 0] = F[i] // -0.375 + F[i] % 0.625\n"
	"        B[i, 1] = F[i] * 0.1 + F[i] / 3.0\n"
	"        B[i, 2] = T.max(F[i], F[15 - i]) - T.min(-F[i], 1.0)\n"
	"        B[i, 3] = T.cast(T.cast(F[i] * 1000.0, \"float32\"), \"float64\") / 7.0\n",
	/* lets, guarded loads, loops that start elsewhere */
	"def f(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(18,), \"int32\"]):\n"
	"    for Bi in T.serial(18):\n"
	"        B[Bi] = 0\n"
	"        for fi in T.serial(3):\n"
	"            Ai = Bi - fi + 2\n"
	"            if 0 <= Ai < 16:\n"
	"                B[Bi] = B[Bi] + A[Ai] * (fi + 1)\n"
	"    for i in T.serial(3, 9):\n"
	"        B[i] = B[i] + i\n",
};

START_TEST(codegen_matches_interpreter_on_every_dtype)
{
	const char *text = expr_kernels[_i];
	char *full = malloc(strlen(text) + 64);
	sprintf(full, "@T.prim_func\n%s", text);
	Module *m = tu_parse(&arena, "k.tir", full);
	Schedule *s = tu_schedule(&arena, m);
	s->float_mode = FLOAT_IEEE; /* no contraction: floats compare exactly */
	DiagList d;
	diag_init(&d, &arena);
	Program *p = build_proven(s, NULL, &d);
	ck_assert_msg(p != NULL, "%s", diag_render(&d));
	assert_jit_agrees(p, 8, 0.0);
	backend_free(p);
	sched_free(s);
	free(full);
}
END_TEST

START_TEST(codegen_unoptimised_matches_interpreter)
{
	const char *text = expr_kernels[_i];
	char *full = malloc(strlen(text) + 64);
	sprintf(full, "@T.prim_func\n%s", text);
	Module *m = tu_parse(&arena, "k.tir", full);
	Schedule *s = tu_schedule(&arena, m);
	s->float_mode = FLOAT_IEEE;
	DiagList d;
	diag_init(&d, &arena);
	BackendOptions o = {.opt_level = -1, .flatten.allow_int64 = true};
	Program *p = build_proven(s, &o, &d);
	ck_assert_msg(p != NULL, "%s", diag_render(&d));
	assert_jit_agrees(p, 4, 0.0);
	backend_free(p);
	sched_free(s);
	free(full);
}
END_TEST

/* real mode: x * y + z is fused only when the build asks for it. */
START_TEST(real_mode_contracts_to_fmuladd_only_when_asked)
{
	const char *k = tu_fixture("backend/real_mode_contracts_to_fmuladd_only_when_asked.tir");
	DiagList d;
	diag_init(&d, &arena);
	Built b = build(k, NULL);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	ck_assert_msg(!strstr(ir, "fmuladd") && !strstr(ir, "llvm.fma"), "fused by default:\n%s", ir);
	free(ir);
	assert_jit_agrees(b.p, 4, 0.0); /* the interpreter's roundings, exactly */
	built_free(&b);
	BackendOptions o = {.contract_fma = true, .flatten.allow_int64 = true};
	b = build_opts(k, NULL, &o);
	ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	ck_assert_msg(strstr(ir, "fmuladd") || strstr(ir, "llvm.fma"), "no fused multiply-add:\n%s", ir);
	free(ir);
	assert_jit_agrees(b.p, 4, BACKEND_REAL_TOLERANCE);
	built_free(&b);
}
END_TEST

/* Found by a red-team audit: with x * y + z fused by default, one of two
 * equal products was fused and x * c - x * c came out as the rounding
 * error of x * c, which the comparison turned into a different integer. */
START_TEST(real_mode_keeps_equal_products_equal)
{
	Built b = build(tu_fixture("backend/real_mode_keeps_equal_products_equal.tir"), NULL);
	assert_jit_agrees(b.p, 8, 0.0);
	built_free(&b);
}
END_TEST

START_TEST(scalar_parameters_of_every_dtype)
{
	Built b = build(tu_fixture("backend/scalar_parameters_of_every_dtype.tir"), NULL);
	assert_jit_agrees(b.p, 8, 0);
	built_free(&b);
}
END_TEST

/* ---------- loops and buffers ---------- */

START_TEST(symbolic_and_empty_loops)
{
	jit_agrees(tu_fixture("backend/symbolic_and_empty_loops.tir"), NULL);
}
END_TEST

START_TEST(parallel_loop_runs_on_the_pool_and_agrees)
{
	const char *k = tu_fixture("backend/parallel_loop_runs_on_the_pool_and_agrees.tir");
	Built b = build(k, "sch.parallel(\"i\")");
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 1);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	assert_contains(ir, "vs_rt_parallel_for");
	free(ir);
	assert_jit_agrees(b.p, 6, 0);
	built_free(&b);
}
END_TEST

/* An annotation written in the kernel text reaches LLVM only proven:
 * a racy T.parallel (every iteration adds into A[0]) and a racy
 * T.vectorized are compiled serially with a warning naming the loop and
 * the obligation; a race-free T.parallel stays parallel. */
START_TEST(source_annotations_are_proven_before_code_generation)
{
	Built b = build(tu_fixture("backend/source_annotations_are_proven_before_code_generation-racy.tir"),
			NULL);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 0);
	ck_assert_int_eq(backend_stats(b.p)->nvectorized_loops, 0);
	ck_assert_int_eq(backend_stats(b.p)->lower.nserialized, 2);
	const char *w = backend_warnings(b.p);
	ck_assert_ptr_nonnull(w);
	assert_contains(w, "k.tir:3:5: warning: parallel loop 'i' is compiled as a serial loop");
	assert_contains(w, "parallel.no_race refuted");
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	assert_lacks(ir, "vs_rt_parallel_for");
	free(ir);
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);

	b = build(tu_fixture("backend/source_annotations_are_proven_before_code_generation-race_free.tir"),
		  NULL);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 1);
	ck_assert_int_eq(backend_stats(b.p)->lower.nserialized, 0);
	ck_assert_ptr_null(backend_warnings(b.p));
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);

	/* nested deeper than the walks that prove them follow: serial */
	StrBuf t = {0};
	sb_puts(&t, "@T.prim_func\ndef f(A: T.Buffer[(4,), \"int32\"]):\n");
	int ind = 4;
	for (int k = 0; k < 62; k++, ind += 4)
		sb_printf(&t, "%*sfor d%d in T.serial(1):\n", ind, "", k);
	sb_printf(&t, "%*sfor i in T.parallel(4):\n%*sA[i] = A[i] + 1\n", ind, "", ind + 4, "");
	char *text = sb_take(&t);
	b = build(text, NULL);
	free(text);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 0);
	assert_contains(backend_warnings(b.p), "compiled as serial loops");
	assert_contains(backend_warnings(b.p), "more than 60 levels deep");
	assert_jit_agrees(b.p, 2, 0);
	built_free(&b);
}
END_TEST

START_TEST(nested_parallel_and_local_buffers_in_parallel_bodies)
{
	jit_agrees(tu_fixture("backend/nested_parallel_and_local_buffers_in_parallel_bodies.tir"),
		   "sch.parallel(\"i\")\nsch.parallel(\"j\")");
}
END_TEST

/* The bench's parallel matmul (8 x 16 tiles held across a k block, the
 * loop over row panels parallel inside the reduction loop ko) agrees with
 * the interpreter, and the parallel body is vectorized without a scalar
 * fallback: its buffer pointers carry noalias as the kernel's do (loaded
 * from the context struct they did not, and LLVM vectorized behind
 * run-time overlap checks with a scalar loop beside: 8x slower). Making
 * the reduction loop parallel instead is refused with its reason. */
START_TEST(parallel_tiled_matmul_agrees_and_stays_vector_code)
{
	const char *k = tu_fixture("backend/parallel_tiled_matmul.tir");
	const char *tiles = "io, ii = sch.split(\"i#2\", factor=8, tail=\"perfect\")\n"
			    "jo, ji = sch.split(\"j#2\", factor=16, tail=\"perfect\")\n"
			    "ko, ki = sch.split(\"k\", factor=8, tail=\"perfect\")\n"
			    "sch.reorder(\"ko\", \"io\", \"jo\", \"ki\", \"ii\", \"ji\")\n";
	char script[1024];
	snprintf(script, sizeof script, "%ssch.unroll(\"ii\")\nsch.vectorize(\"ji\")\nsch.parallel(\"io\")\n", tiles);
	BackendOptions o = {.contract_fma = true};
	Built b = build_opts(k, script, &o);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 1);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	assert_contains(ir, "vs_rt_parallel_for");
	assert_contains(ir, "@llvm.fmuladd.v16f32");
	assert_lacks(ir, "@llvm.fmuladd.f32(");
	free(ir);
	assert_jit_agrees(b.p, 3, BACKEND_REAL_TOLERANCE);
	built_free(&b);

	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, tiles), STEP_COMMITTED);
	ck_assert_int_eq(tu_run(s, "sch.parallel(\"ko\")"), STEP_REJECTED);
	char *why = sched_report_text(tu_last(s));
	assert_contains(why, "parallel.no_race");
	assert_contains(why, "refuted");
	assert_contains(why, "a parallel reduction is refused");
	free(why);
	sched_free(s);
}
END_TEST

/* A reduction on all cores: per-thread partial results by rfactor, the
 * factored loop parallel (bench/dot_par.sched), agree with the
 * interpreter; the reduction loop made parallel as it is is refused. */
START_TEST(parallel_dot_with_rfactor_partials_agrees)
{
	const char *k = tu_fixture("backend/parallel_dot_with_partials.tir");
	const char *split = "C = sch.get_block(\"C\")\n"
			    "(k,) = sch.get_loops(C)\n"
			    "ko, kio, kiu, kii = sch.split(k, factors=[16, None, 4, 8])\n";
	char script[1024];
	snprintf(script, sizeof script,
		 "%srf1 = sch.rfactor(kii, 0)\n"
		 "ko1, kio1, kiu1, kii1 = sch.get_loops(rf1)\n"
		 "rf2 = sch.rfactor(kiu1, 0)\n"
		 "ko2, kio2, kiu2, kii2 = sch.get_loops(rf2)\n"
		 "rf3 = sch.rfactor(ko2, 0)\n"
		 "ko3, kio3, kiu3, kii3 = sch.get_loops(rf3)\n"
		 "sch.parallel(ko3)\n"
		 "sch.decompose_reduction(rf3, kio3)\n"
		 "sch.unroll(kiu3)\n"
		 "sch.vectorize(kii3)\n",
		 split);
	Built b = build(k, script);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 1);
	assert_jit_agrees(b.p, 3, BACKEND_REAL_TOLERANCE);
	built_free(&b);

	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, split), STEP_COMMITTED);
	ck_assert_int_eq(tu_run(s, "sch.parallel(ko)"), STEP_REJECTED);
	char *why = sched_report_text(tu_last(s));
	assert_contains(why, "parallel.no_race");
	assert_contains(why, "refuted");
	assert_contains(why, "a parallel reduction is refused");
	free(why);
	sched_free(s);
}
END_TEST

START_TEST(vectorized_loop_gives_vector_code)
{
	Built b = build(tu_fixture("backend/vectorized_loop_gives_vector_code.tir"),
			"sch.vectorize(\"j\")");
	ck_assert_int_eq(backend_stats(b.p)->nvectorized_loops, 1);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_msg(strstr(ir, "x float>"), "no vector code:\n%s", ir);
	free(ir);
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

START_TEST(unrolled_loop_is_replicated)
{
	const char *k = tu_fixture("backend/unrolled_loop_is_replicated.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.unroll(\"j\")"), STEP_COMMITTED);
	DiagList d;
	diag_init(&d, &arena);
	BackendOptions o = {.opt_level = -1, .flatten.allow_int64 = true};
	Program *p = build_proven(s, &o, &d);
	ck_assert_ptr_nonnull(p);
	char *ir = backend_emit_string(p, EMIT_LLVM, &d);
	/* one loop left (i): the unrolled j has no loop (no phi) of its own */
	const char *first = strstr(ir, " phi ");
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(strstr(first + 1, " phi ") == NULL, "j is still a loop:\n%s", ir);
	free(ir);
	assert_jit_agrees(p, 4, 0);
	backend_free(p);
	sched_free(s);
}
END_TEST

/* Found by a red-team audit: unroll of 20000 iterations asked LLVM for
 * a full unroll, and the build ran for minutes; past 1024 iterations
 * the loop is unrolled by a few instead. */
START_TEST(long_unrolled_loop_is_unrolled_partially)
{
	Built b = build(tu_fixture("backend/long_unrolled_loop_is_unrolled_partially.tir"),
			"sch.unroll(\"i\")");
	ck_assert_int_eq(backend_stats(b.p)->nunrolled_loops, 1);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	ck_assert_ptr_nonnull(strstr(ir, " phi ")); /* still a loop */
	free(ir);
	assert_jit_agrees(b.p, 2, 0);
	built_free(&b);
}
END_TEST

START_TEST(large_and_symbolic_local_buffers_use_the_heap)
{
	jit_agrees(tu_fixture("backend/large_and_symbolic_local_buffers_use_the_heap.tir"), NULL);
}
END_TEST

/* ---------- only proven IR reaches the backend ---------- */

START_TEST(rejected_step_is_not_compiled)
{
	const char *k = tu_fixture("backend/rejected_step_is_not_compiled.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_REJECTED);
	DiagList d;
	diag_init(&d, &arena);
	Program *p = build_proven(s, NULL, &d);
	ck_assert_ptr_nonnull(p);
	/* what is compiled is the last proven IR: the original order */
	ck_assert(ir_func_equal(backend_lowered(p, 0)->source, m->funcs[0]));
	assert_jit_agrees(p, 4, 0);
	backend_free(p);
	sched_free(s);
}
END_TEST

/* ---------- conformance cases through the JIT ---------- */

static Module *parse_file(const char *path)
{
	DiagList d;
	diag_init(&d, &arena);
	Source *src = source_read_file(&arena, path, &d);
	Module *m = src ? parse_module(&arena, src, &d) : NULL;
	ck_assert_msg(m != NULL, "%s: %s", path, diag_render(&d));
	return m;
}

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

/* ---------- emission ---------- */

START_TEST(emits_llvm_assembly_object_and_header)
{
	Built b = build(tu_fixture("backend/emits_llvm_assembly_object_and_header.tir"),
			"sch.parallel(\"i\")");
	DiagList d;
	diag_init(&d, &arena);
	char *ll = backend_emit_string(b.p, EMIT_LLVM, &d);
	assert_contains(ll, "define i32 @k(");
	assert_contains(ll, "noalias");
	free(ll);
	char *as = backend_emit_string(b.p, EMIT_ASM, &d);
	assert_contains(as, "k:");
	free(as);
	char path[] = "/tmp/vsched-obj-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(backend_emit(b.p, EMIT_OBJ, path, &d));
	FILE *f = fopen(path, "rb");
	unsigned char magic[4] = {0};
	ck_assert_int_eq(fread(magic, 1, 4, f), 4);
	fclose(f);
	ck_assert(magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F');
	unlink(path);
	char *h = backend_header_text(b.p, NULL);
	assert_contains(h, "int32_t k(int32_t *restrict A, int32_t *restrict B);");
	assert_contains(h, "logical shape (16, 14)");
	assert_contains(h, "stored flat as (224,)");
	free(h);
	built_free(&b);
}
END_TEST

/* The header documents a transformed buffer: logical shape, physical
 * shape with its index map and pad value, axis separators, flat shape. */
START_TEST(header_documents_logical_physical_and_flat_shapes)
{
	Module *m = tu_parse(&arena, "k.tir",
			     tu_fixture("backend/header_documents_logical_physical_and_flat_shapes-2d.tir"));
	Module *lm = tu_parse(&arena, "l.tir",
			      tu_fixture("backend/header_documents_logical_physical_and_flat_shapes-1d.tir"));
	Buffer *a = param_buffer(m, "A");
	Layout *lay = arena_alloc(&arena, sizeof *lay);
	lay->logical = param_buffer(lm, "A");
	lay->nvars = 1;
	lay->vars = arena_alloc(&arena, sizeof(Var *));
	lay->vars[0] = ir_var(&arena, "i", DT_INT32, (Span){0});
	lay->map = arena_alloc(&arena, 2 * sizeof(Expr *));
	Expr *i = ir_varref(&arena, lay->vars[0], (Span){0});
	lay->map[0] = ir_bin(&arena, OP_FLOORDIV, i, ir_int32(&arena, 4), (Span){0});
	lay->map[1] = ir_bin(&arena, OP_FLOORMOD, i, ir_int32(&arena, 4), (Span){0});
	lay->pad_kind = PAD_VALUE;
	lay->pad_value = ir_int32(&arena, 0);
	a->layout = lay;
	set_separators(a, 1, (int[]){1});
	DiagList d;
	diag_init(&d, &arena);
	Built b = build_module(m, NULL, &d);
	ck_assert_msg(b.p != NULL, "%s", diag_render(&d));
	char *h = backend_header_text(b.p, "demo");
	assert_contains(h, "#ifndef VSCHED_DEMO_H");
	assert_contains(h, "logical shape (14,)");
	assert_contains(h, "physical shape (4, 4) by lambda i: [i // 4, i % 4], pad_value=0");
	assert_contains(h, "axis_separators [1]");
	assert_contains(h, "stored flat as (4, 4)");
	free(h);
	built_free(&b);
}
END_TEST

/* examples/backend/rowsum_driver.c links an emitted object (and the
 * runtime, for its parallel loop) and checks the result itself. */
START_TEST(example_driver_links_emitted_object_and_runs)
{
	if (system("cc --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "backend: no C compiler, driver test skipped\n");
		return;
	}
	Module *m = parse_file("examples/backend/rowsum.tir");
	Schedule *s = tu_schedule(&arena, m);
	char *script = tu_read_file("examples/backend/rowsum.sched");
	ck_assert_ptr_nonnull(script);
	ck_assert_int_eq(tu_run(s, script), STEP_COMMITTED);
	free(script);
	DiagList d;
	diag_init(&d, &arena);
	Program *p = build_proven(s, NULL, &d);
	ck_assert_msg(p != NULL, "%s", diag_render(&d));
	char dir[] = "/tmp/vsched-driver-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char obj[4200], hdr[4200], exe[4200], cmd[16384];
	snprintf(obj, sizeof obj, "%s/rowsum.o", dir);
	snprintf(hdr, sizeof hdr, "%s/rowsum.h", dir);
	snprintf(exe, sizeof exe, "%s/driver", dir);
	ck_assert(backend_emit(p, EMIT_OBJ, obj, &d));
	ck_assert(backend_emit(p, EMIT_HEADER, hdr, &d));
	/* the runtime from source (what build/libvsched_rt.a holds), so the
	 * test does not depend on which build directory is current */
	snprintf(cmd, sizeof cmd,
		 "cc -std=c11 -D_GNU_SOURCE -O2 -I%s examples/backend/rowsum_driver.c %s backend/runtime.c "
		 "-lpthread -o %s && %s > %s/out.txt 2>&1", dir, obj, exe, exe, dir);
	int rc = system(cmd);
	char out_path[4300];
	snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
	char *out = tu_read_file(out_path);
	ck_assert_msg(rc == 0, "driver failed (%d): %s\n%s", rc, cmd, out ? out : "");
	assert_contains(out, "rowsum: ok");
	free(out);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	backend_free(p);
	sched_free(s);
}
END_TEST

/* TVM names every kernel `main`: it is emitted as main_kernel (and a C
 * keyword as NAME_kernel), the header says so, and a C driver with its
 * own main() links with it and runs it; the JIT finds it under its name. */
START_TEST(kernel_named_main_gets_a_symbol_that_links)
{
	if (system("cc --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "backend: no C compiler, driver test skipped\n");
		return;
	}
	Built b = build(tu_fixture("backend/main_kernel.tir"), NULL);
	DiagList d;
	diag_init(&d, &arena);
	char dir[] = "/tmp/vsched-main-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char obj[200], hdr[200], cmd[2048];
	snprintf(obj, sizeof obj, "%s/main_kernel.o", dir);
	snprintf(hdr, sizeof hdr, "%s/main_kernel.h", dir);
	ck_assert(backend_emit(b.p, EMIT_OBJ, obj, &d));
	ck_assert(backend_emit(b.p, EMIT_HEADER, hdr, &d));
	char *h = tu_read_file(hdr);
	assert_contains(h, "emitted as main_kernel: C reserves the name main");
	assert_contains(h, "int32_t main_kernel(int32_t *restrict A);");
	free(h);
	snprintf(cmd, sizeof cmd,
		 "cc -std=c11 -I%s tests/data/backend/main_kernel_driver.c %s -o %s/driver && "
		 "%s/driver > %s/out.txt 2>&1", dir, obj, dir, dir, dir);
	int rc = system(cmd);
	snprintf(obj, sizeof obj, "%s/out.txt", dir);
	char *out = tu_read_file(obj);
	ck_assert_msg(rc == 0, "driver failed (%d): %s\n%s", rc, cmd, out ? out : "");
	assert_contains(out, "main_kernel: ok");
	free(out);
	assert_jit_agrees(b.p, 3, 0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	built_free(&b);
	char sym[64];
	backend_symbol("double", sym, sizeof sym);
	ck_assert_str_eq(sym, "double_kernel");
	backend_symbol("matmul", sym, sizeof sym);
	ck_assert_str_eq(sym, "matmul");
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

/* Found by a red-team audit: the byte size of a huge allocation wrapped
 * (4611686018427387905 int32 cells = 4 bytes), a stack slot was chosen
 * and the code was wrong. Now the size is computed with overflow checks
 * and such an allocation fails with status 1, as when malloc fails; so
 * does a symbolic extent that is negative or overflows. */
START_TEST(huge_allocation_fails_instead_of_wrapping)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "k.tir",
				       tu_fixture("backend/huge_allocation_fails_instead_of_wrapping.tir"));
	ck_assert_msg(m != NULL, "%s", vs_last_error(ctx));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	vs_program *p = vs_build(s, NULL);
	ck_assert_msg(p != NULL, "%s", vs_last_error(ctx));
	typedef int32_t (*F)(int32_t *);
	typedef int32_t (*G)(int32_t *, int64_t);
	F f = (F)vs_program_lookup(p, "f");
	G g = (G)vs_program_lookup(p, "g");
	int32_t a[4] = {1, 2, 3, 4};
	ck_assert_int_eq(f(a), 1);
	ck_assert_int_eq(a[0], 1); /* nothing ran */
	ck_assert_int_eq(g(a, 4), 0);
	ck_assert_int_eq(a[0], 5);
	ck_assert_int_eq(a[3], 2);
	ck_assert_int_eq(g(a, -4), 1);
	ck_assert_int_eq(g(a, (int64_t)1 << 62), 1); /* 2^64 bytes */
	ck_assert_int_eq(a[0], 5);
	vs_program_free(p);
	vs_schedule_free(s);
	vs_context_free(ctx);
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
}
END_TEST

/* ---------- math calls ---------- */

/* Every math function on float32 and float64 (and integer abs at the
 * minimum): the compiled code computes what the interpreter computes, bit
 * for bit, optimised and not. */
START_TEST(math_calls_match_the_interpreter_bit_for_bit)
{
	for (int level = 0; level < 2; level++) {
		Module *m = tu_parse(&arena, "math_calls.tir", tu_fixture("backend/math_calls.tir"));
		Schedule *s = tu_schedule(&arena, m);
		s->float_mode = FLOAT_IEEE; /* no contraction, exact comparison */
		BackendOptions opt = {.opt_level = level == 0 ? -1 : 0, .flatten.allow_int64 = true};
		DiagList d;
		diag_init(&d, &arena);
		Program *p = build_proven(s, &opt, &d);
		ck_assert_msg(p != NULL, "%s", diag_render(&d));
		assert_jit_agrees(p, 8, 0.0);
		backend_free(p);
		sched_free(s);
	}
}
END_TEST

/* ---------- float16 ---------- */

/* A kernel computing in float16 (overflow to inf, subnormals, ties, casts
 * from float64 one ulp-fraction off a tie, int and float32 conversions,
 * math calls, a float16 scalar parameter): the compiled code agrees with
 * the interpreter bit for bit, optimised or not, on the host CPU (F16C)
 * and on generic x86-64 (half conversions through the runtime). */
START_TEST(float16_kernel_matches_the_interpreter_bit_for_bit)
{
	for (int k = 0; k < 4; k++) {
		Module *m = tu_parse(&arena, "float16.tir", tu_fixture("backend/float16.tir"));
		Schedule *s = tu_schedule(&arena, m);
		s->float_mode = FLOAT_IEEE; /* floats compare exactly */
		BackendOptions opt = {.opt_level = k & 1 ? -1 : 0, .no_host_cpu = k >= 2,
				      .flatten.allow_int64 = true};
		DiagList d;
		diag_init(&d, &arena);
		Program *p = build_proven(s, &opt, &d);
		ck_assert_msg(p != NULL, "%s", diag_render(&d));
		assert_jit_agrees(p, 8, 0.0);
		backend_free(p);
		sched_free(s);
	}
}
END_TEST

/* The code generator does no arithmetic in `half` and never truncates a
 * double to half (that would need __truncdfhf2): float16 is extended,
 * computed in float, truncated. (LLVM's optimiser may narrow such a
 * float operation back to a `half` one where that is exact, which x86
 * computes in float again.) The header passes the binary16 bits as
 * uint16_t. Messages are short: check cannot carry a whole module. */
START_TEST(float16_lowers_to_float_arithmetic_and_uint16_abi)
{
	for (int level = 0; level < 2; level++) {
		BackendOptions opt = {.opt_level = level ? 0 : -1, .flatten.allow_int64 = true};
		Built b = build_opts(tu_fixture("backend/float16.tir"), NULL, &opt);
		DiagList d;
		diag_init(&d, &arena);
		char *ll = backend_emit_string(b.p, EMIT_LLVM, &d);
		ck_assert_ptr_nonnull(ll);
		ck_assert(strstr(ll, "i16 %x") != NULL);
		for (const char *q = ll; (q = strstr(q, "fptrunc double")) != NULL; q++) {
			const char *eol = strchr(q, '\n'), *h = strstr(q, "to half");
			ck_assert_msg(!h || (eol && h > eol), "a double truncated to half");
		}
		ck_assert(strstr(ll, "__truncdfhf2") == NULL);
		if (level == 0) {
			ck_assert(strstr(ll, "fpext half") != NULL);
			ck_assert(strstr(ll, "fptrunc float") != NULL);
			ck_assert(strstr(ll, "fadd half") == NULL);
			ck_assert(strstr(ll, "fmul half") == NULL);
		}
		free(ll);
		built_free(&b);
	}
	Built b = build(tu_fixture("backend/float16.tir"), NULL);
	char *h = backend_header_text(b.p, "f16");
	assert_contains(h, "uint16_t x");
	assert_contains(h, "uint16_t *");
	free(h);
	built_free(&b);
}
END_TEST

/* Transcendental functions are calls of the libm function the interpreter
 * calls, never folded or replaced (nobuiltin); exact operations are LLVM
 * intrinsics. */
START_TEST(math_calls_lower_to_libm_calls_and_exact_intrinsics)
{
	Built b = build(tu_fixture("backend/math_calls.tir"), NULL);
	DiagList d;
	diag_init(&d, &arena);
	char *ll = backend_emit_string(b.p, EMIT_LLVM, &d);
	assert_contains(ll, "call float @expf(");
	assert_contains(ll, "call double @exp(");
	assert_contains(ll, "call float @tanhf(");
	assert_contains(ll, "call double @pow(");
	assert_contains(ll, "nobuiltin");
	assert_contains(ll, "@llvm.sqrt.f32(");
	assert_contains(ll, "@llvm.fma.f64(");
	assert_contains(ll, "@llvm.rint.f32(");
	free(ll);
	built_free(&b);
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

/* A vectorized float reduction (real mode, vectorize.reassociate proven):
 * LLVM keeps partial sums in vector registers and reduces them once at
 * the end; the result agrees with the interpreter's in-order sum within
 * the real-mode tolerance. */
START_TEST(vectorized_reduction_keeps_vector_partial_sums)
{
	const char *k = tu_fixture("backend/vectorized_float_reduction.tir");
	Built b = build(k, "sch.vectorize(\"j\")");
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	assert_contains(ir, "fadd <");
	assert_contains(ir, "llvm.vector.reduce.fadd");
	free(ir);
	assert_jit_agrees(b.p, 4, BACKEND_REAL_TOLERANCE);
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

/* The body of a parallel loop runs in a function of its own, which
 * reads the buffers' pointers from the pool's closure: it keeps the
 * kernel's noalias (on the body's parameters, alias scopes once inlined), so LLVM
 * may keep B[i] in a register across the loads of A (in make bench's
 * parallel conv2d: 28 accumulators across the whole reduction, without
 * which it ran 20x slower). */
START_TEST(parallel_body_keeps_the_buffers_noalias)
{
	Built b = build(tu_fixture("backend/parallel_body_keeps_noalias.tir"), "sch.parallel(\"i\")");
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	assert_contains(ir, "vs_rt_parallel_for");
	assert_contains(ir, "noalias");
	free(ir);
	assert_jit_agrees(b.p, 4, 0.0);
	built_free(&b);
}
END_TEST

/* ---------- the bench's schedules ---------- */

/* make bench's conv2d schedules (bench/conv2d_*.sched, each CPU's, also
 * with the parallel steps the bench adds for all cores) are accepted on
 * the benchmarked kernel and, at the small size, compiled code agrees
 * with the interpreter. */
static void conv2d_schedule_agrees(const char *sched_path, bool par)
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
	BackendOptions o = {.contract_fma = true};
	Built b = build_opts(small, script, &o);
	free(small);
	assert_jit_agrees(b.p, 2, BACKEND_REAL_TOLERANCE);
	built_free(&b);
}

START_TEST(conv2d_bench_schedules_agree_with_the_interpreter)
{
	conv2d_schedule_agrees("bench/conv2d_avx512.sched", false);
	conv2d_schedule_agrees("bench/conv2d_avx2.sched", false);
	conv2d_schedule_agrees("bench/conv2d_avx512.sched", true);
}
END_TEST

/* make bench's row sum schedules, at 16 rows against the interpreter (the
 * overcomputed one reads the zero padding: exact for int32) */
START_TEST(rowsum_bench_schedules_agree_with_the_interpreter)
{
	const char *scheds[] = {"bench/rowsum.sched", "bench/rowsum_branchy.sched"};
	char *k = tu_read_file("bench/rowsum_small.tir");
	for (int i = 0; i < 2; i++) {
		char *script = tu_read_file(scheds[i]);
		Built b = build(k, script);
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

	tc = tcase_create("codegen");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	int n = (int)(sizeof expr_kernels / sizeof *expr_kernels);
	tcase_add_loop_test(tc, codegen_matches_interpreter_on_every_dtype, 0, n);
	tcase_add_loop_test(tc, codegen_unoptimised_matches_interpreter, 0, n);
	tcase_add_test(tc, real_mode_contracts_to_fmuladd_only_when_asked);
	tcase_add_test(tc, real_mode_keeps_equal_products_equal);
	tcase_add_test(tc, scalar_parameters_of_every_dtype);
	suite_add_tcase(s, tc);

	tc = tcase_create("float16");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, float16_kernel_matches_the_interpreter_bit_for_bit);
	tcase_add_test(tc, float16_lowers_to_float_arithmetic_and_uint16_abi);
	suite_add_tcase(s, tc);

	tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, math_calls_match_the_interpreter_bit_for_bit);
	tcase_add_test(tc, math_calls_lower_to_libm_calls_and_exact_intrinsics);
	suite_add_tcase(s, tc);

	tc = tcase_create("loops");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, symbolic_and_empty_loops);
	tcase_add_test(tc, parallel_loop_runs_on_the_pool_and_agrees);
	tcase_add_test(tc, source_annotations_are_proven_before_code_generation);
	tcase_add_test(tc, nested_parallel_and_local_buffers_in_parallel_bodies);
	tcase_add_test(tc, parallel_tiled_matmul_agrees_and_stays_vector_code);
	tcase_add_test(tc, parallel_dot_with_rfactor_partials_agrees);
	tcase_add_test(tc, parallel_body_keeps_the_buffers_noalias);
	tcase_add_test(tc, vectorized_loop_gives_vector_code);
	tcase_add_test(tc, vectorized_reduction_keeps_vector_partial_sums);
	tcase_add_test(tc, unrolled_loop_is_replicated);
	tcase_add_test(tc, long_unrolled_loop_is_unrolled_partially);
	tcase_add_test(tc, huge_allocation_fails_instead_of_wrapping);
	tcase_add_test(tc, large_and_symbolic_local_buffers_use_the_heap);
	tcase_add_test(tc, rejected_step_is_not_compiled);
	suite_add_tcase(s, tc);

	tc = tcase_create("jit_vs_interpreter");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, conformance_cases_jit_agrees_with_interpreter);
	tcase_add_test(tc, random_schedules_jit_agrees_with_interpreter);
	tcase_add_test(tc, jit_check_names_its_step_budget);
	tcase_add_test(tc, jit_check_runs_every_trial_of_a_mid_size_matmul);
	suite_add_tcase(s, tc);

	tc = tcase_create("emission");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, emits_llvm_assembly_object_and_header);
	tcase_add_test(tc, header_documents_logical_physical_and_flat_shapes);
	tcase_add_test(tc, example_driver_links_emitted_object_and_runs);
	tcase_add_test(tc, kernel_named_main_gets_a_symbol_that_links);
	suite_add_tcase(s, tc);

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
	suite_add_tcase(s, tc);

	tc = tcase_create("runtime");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, runtime_covers_every_iteration_once_and_reports_failure);
	suite_add_tcase(s, tc);
	return s;
}
