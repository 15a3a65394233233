/* tests/test_backend_codegen.c — the backend suite's code generation cases
 * (suite_backend in test_backend.c adds them): every construct and dtype
 * compared with the reference interpreter through the JIT, loops and
 * buffers (parallel, vectorized, unrolled, local), math calls, float16,
 * and emission (an example C driver linked with an emitted object, the C
 * header). */
#include "tests/test_backend_int.h"

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

/* A vectorized integer reduction into one cell across serial loops keeps
 * one vector of partial results for the whole nest and reduces it once
 * (register_reduction): on odd extents, + * min max, int8 to int64 and
 * uint8, values that wrap, the cell on either side of the operator, it
 * computes exactly what the interpreter does. A cell per lane, or a float
 * sum, stays LLVM's own vectorization. */
START_TEST(vectorized_integer_reduction_stays_in_registers)
{
	Built b = build(tu_fixture("backend/register_reduction.tir"), NULL);
	ck_assert_int_eq(backend_stats(b.p)->lower.nserialized, 0);
	ck_assert_int_eq(backend_stats(b.p)->nvectorized_loops, 10);
	ck_assert_int_eq(backend_stats(b.p)->nparallel_loops, 1);
	ck_assert_int_eq(backend_stats(b.p)->nregister_reductions, 8);
	DiagList d;
	diag_init(&d, &arena);
	char *ir = backend_emit_string(b.p, EMIT_LLVM, &d);
	ck_assert_ptr_nonnull(ir);
	assert_contains(ir, "llvm.vector.reduce.mul");
	assert_contains(ir, "llvm.vector.reduce.smin");
	assert_contains(ir, "llvm.vector.reduce.umax");
	free(ir);
	assert_jit_agrees(b.p, 6, 0.0);
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
	/* the code takes the buffers noalias: the header states the contract
	 * that justifies it (red team, issue 14) */
	assert_contains(h, "must not overlap");
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

/* ---------- the target CPU (BackendOptions.cpu, .features) ---------- */

/* The assembly of the vectorized 64 x 64 loop for a target. */
static char *vector_asm(const BackendOptions *opt, Built *out)
{
	*out = build_opts(tu_fixture("backend/vectorized_loop_gives_vector_code.tir"),
			  "sch.vectorize(\"j\")", opt);
	DiagList d;
	diag_init(&d, &arena);
	char *as = backend_emit_string(out->p, EMIT_ASM, &d);
	ck_assert_msg(as != NULL, "%s", diag_render(&d));
	return as;
}

/* Restricted to an AVX2 CPU (x86-64-v3, haswell, or the host without
 * AVX-512), a vectorized loop uses ymm registers and never a zmm one,
 * on an AVX-512 host too; where the host can run it, the code agrees
 * with the interpreter. */
START_TEST(avx2_target_emits_no_avx512_and_agrees)
{
	static const struct {
		const char *cpu, *features;
	} targets[] = {{"x86-64-v3", NULL}, {"haswell", NULL}, {NULL, "-avx512f"}, {"host", "-avx512f"}};
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		/* the host's target does use zmm: the check below can fail */
		Built b;
		char *as = vector_asm(NULL, &b);
		assert_contains(as, "zmm");
		free(as);
		built_free(&b);
	}
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
		BackendOptions opt = {.cpu = targets[i].cpu, .features = targets[i].features};
		opt.flatten.allow_int64 = true;
		Built b;
		char *as = vector_asm(&opt, &b);
		ck_assert_msg(!strstr(as, "zmm"), "%s %s: zmm in the assembly", targets[i].cpu,
			      targets[i].features);
		/* the host's CPU without AVX-512 has ymm only if it has AVX2 */
		bool named = targets[i].cpu && strcmp(targets[i].cpu, "host") != 0;
		ck_assert_msg(strstr(as, "ymm") || !(named || __builtin_cpu_supports("avx2")),
			      "%s %s: no ymm in the assembly", targets[i].cpu, targets[i].features);
		free(as);
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			assert_jit_agrees(b.p, 4, 0);
		built_free(&b);
	}
}
END_TEST

/* x86-64 without AVX (x86-64-v2): the same loop in xmm registers. */
START_TEST(sse_target_emits_xmm_only)
{
	BackendOptions opt = {.cpu = "x86-64-v2"};
	opt.flatten.allow_int64 = true;
	Built b;
	char *as = vector_asm(&opt, &b);
	ck_assert(!strstr(as, "ymm") && !strstr(as, "zmm"));
	assert_contains(as, "xmm");
	free(as);
	assert_jit_agrees(b.p, 4, 0);
	built_free(&b);
}
END_TEST

/* An unknown CPU name, an unknown feature or a malformed feature list is
 * an error naming it; LLVM alone would warn on stderr and fall back. */
START_TEST(unknown_cpu_or_feature_is_refused)
{
	static const struct {
		const char *cpu, *features, *why;
	} bad[] = {
		{"pentium9", NULL, "unknown CPU 'pentium9'"},
		{"", "-avx512q", "unknown CPU feature 'avx512q'"},
		{"haswell", "avx2", "expected a comma-separated list of +feature or -feature"},
		{NULL, "+avx2,,-fma", "found ''"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		Module *m = tu_parse(&arena, "k.tir",
				     tu_fixture("backend/vectorized_loop_gives_vector_code.tir"));
		Schedule *s = tu_schedule(&arena, m);
		BackendOptions opt = {.cpu = bad[i].cpu, .features = bad[i].features};
		DiagList d;
		diag_init(&d, &arena);
		Program *p = build_proven(s, &opt, &d);
		ck_assert_msg(p == NULL, "%s %s accepted", bad[i].cpu, bad[i].features);
		char *msg = diag_render(&d);
		assert_contains(msg, bad[i].why);
		free(msg);
		sched_free(s);
	}
}
END_TEST

/* Code for a CPU whose features vsched does not know, or whose features
 * the host lacks, is emitted but the JIT refuses to run it (it could
 * stop on an illegal instruction), naming why. */
START_TEST(jit_refuses_code_the_host_may_not_run)
{
	static const struct {
		const char *cpu, *features, *why;
	} foreign[] = {
		{"sapphirerapids", NULL, "does not know which instructions CPU 'sapphirerapids' has"},
		{"x86-64-v3", "+fma4", "the host does not have fma4"},
	};
	__builtin_cpu_init();
	for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
		/* the first feature missing is named: fma4 only where the host
		 * has the rest of x86-64-v3 */
		if (i == 1 && (__builtin_cpu_supports("fma4") || !__builtin_cpu_supports("avx2") ||
			       !__builtin_cpu_supports("fma")))
			continue;
		BackendOptions opt = {.cpu = foreign[i].cpu, .features = foreign[i].features};
		opt.flatten.allow_int64 = true;
		Built b;
		char *as = vector_asm(&opt, &b);
		assert_contains(as, "f:");
		free(as);
		DiagList d;
		diag_init(&d, &arena);
		ck_assert_ptr_null(backend_lookup(b.p, "f", &d));
		char *msg = diag_render(&d);
		assert_contains(msg, foreign[i].why);
		free(msg);
		built_free(&b);
	}
	/* a later -feature wins over the CPU's +feature: runnable */
	BackendOptions opt = {.cpu = "x86-64-v3", .features = "+fma4,-fma4"};
	opt.flatten.allow_int64 = true;
	Built b = build_opts(tu_fixture("backend/vectorized_loop_gives_vector_code.tir"), NULL, &opt);
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		assert_jit_agrees(b.p, 2, 0);
	built_free(&b);
}
END_TEST

TCase *backend_target_cpu_tcase(void)
{
	TCase *tc = tcase_create("target_cpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, avx2_target_emits_no_avx512_and_agrees);
	tcase_add_test(tc, sse_target_emits_xmm_only);
	tcase_add_test(tc, unknown_cpu_or_feature_is_refused);
	tcase_add_test(tc, jit_refuses_code_the_host_may_not_run);
	return tc;
}

TCase *backend_codegen_tcase(void)
{
	TCase *tc = tcase_create("codegen");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	int n = (int)(sizeof expr_kernels / sizeof *expr_kernels);
	tcase_add_loop_test(tc, codegen_matches_interpreter_on_every_dtype, 0, n);
	tcase_add_loop_test(tc, codegen_unoptimised_matches_interpreter, 0, n);
	tcase_add_test(tc, real_mode_contracts_to_fmuladd_only_when_asked);
	tcase_add_test(tc, real_mode_keeps_equal_products_equal);
	tcase_add_test(tc, scalar_parameters_of_every_dtype);
	return tc;
}

TCase *backend_float16_tcase(void)
{
	TCase *tc = tcase_create("float16");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, float16_kernel_matches_the_interpreter_bit_for_bit);
	tcase_add_test(tc, float16_lowers_to_float_arithmetic_and_uint16_abi);
	return tc;
}

TCase *backend_math_calls_tcase(void)
{
	TCase *tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, math_calls_match_the_interpreter_bit_for_bit);
	tcase_add_test(tc, math_calls_lower_to_libm_calls_and_exact_intrinsics);
	return tc;
}

TCase *backend_loops_tcase(void)
{
	TCase *tc = tcase_create("loops");
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
	tcase_add_test(tc, vectorized_integer_reduction_stays_in_registers);
	tcase_add_test(tc, unrolled_loop_is_replicated);
	tcase_add_test(tc, long_unrolled_loop_is_unrolled_partially);
	tcase_add_test(tc, huge_allocation_fails_instead_of_wrapping);
	tcase_add_test(tc, large_and_symbolic_local_buffers_use_the_heap);
	tcase_add_test(tc, rejected_step_is_not_compiled);
	return tc;
}

TCase *backend_emission_tcase(void)
{
	TCase *tc = tcase_create("emission");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, emits_llvm_assembly_object_and_header);
	tcase_add_test(tc, header_documents_logical_physical_and_flat_shapes);
	tcase_add_test(tc, example_driver_links_emitted_object_and_runs);
	tcase_add_test(tc, kernel_named_main_gets_a_symbol_that_links);
	return tc;
}
