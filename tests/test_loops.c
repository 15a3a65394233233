/* tests/test_loops.c — the loop primitives through the schedule: split
 * (four tails), fuse, reorder, parallel / vectorize / unroll. Every
 * accepted step is checked against the original with the interpreter;
 * every rejection checks its reason and, where a model exists, that the
 * replay confirms it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "tests/testsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static const char scale14[] = "loops/scale14.tir";

static const char scale16[] = "loops/scale16.tir";

static const char scale_n[] =
	"@T.prim_func\n"
	"def scale(a: T.handle, b: T.handle, n: T.int32):\n"
	"    A = T.match_buffer(a, (n,), \"int32\")\n"
	"    B = T.match_buffer(b, (n,), \"int32\")\n"
	"    T.assume(%s)\n"
	"    for i in T.serial(n):\n"
	"        B[i] = 2 * A[i]\n";

static const char wavefront[] = "loops/wavefront.tir";

static const char total_f32[] = "loops/total_f32.tir";

/* Apply `script`, expect commit, check with the interpreter (six trials). */
static Schedule *accept(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6).s;
}

/* Apply `script`, expect rejection whose reason mentions `why`; the
 * previous IR is kept. */
static StepReport *reject(const char *kernel, const char *script, const char *why)
{
	return ts_rejected(&arena, kernel, script, why);
}

/* ---------- split ---------- */

START_TEST(split_perfect_rejects_non_divisible_extent)
{
	StepReport *r = reject(tu_fixture(scale14),
			       "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")",
			       "split.divisible");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	ck_assert_ptr_nonnull(strstr(r->replay_text, "B["));
}
END_TEST

START_TEST(split_perfect_accepts_divisible_extent)
{
	Schedule *s = accept(tu_fixture(scale16),
			     "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 0);
	ck_assert_int_eq(tu_last(s)->nobs, 1);
	ck_assert_int_eq(tu_last(s)->results[0].verdict, VERDICT_PROVEN);
	sched_free(s);
}
END_TEST

START_TEST(split_guard_keeps_guard_when_not_divisible)
{
	Schedule *s = accept(tu_fixture(scale14), "io, ii = sch.split(\"i\", factor=4)");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	sched_free(s);
}
END_TEST

START_TEST(split_guard_drops_guard_when_divisibility_is_proven)
{
	char k[1024];
	snprintf(k, sizeof k, scale_n, "n % 8 == 0 and n >= 0");
	Schedule *s = accept(k, "io, ii = sch.split(\"i\", factor=4)");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 0);
	sched_free(s);
	/* the kept guard computes io*4 + ii up to n + 2: n needs an upper
	 * bound (split.no_overflow) */
	snprintf(k, sizeof k, scale_n, "n >= 0 and n <= 4096");
	s = accept(k, "io, ii = sch.split(\"i\", factor=4)");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	ck_assert_ptr_nonnull(tu_last(s)->note);
	sched_free(s);
}
END_TEST

START_TEST(split_perfect_symbolic_needs_assumption)
{
	char k[1024];
	snprintf(k, sizeof k, scale_n, "n % 8 == 0 and n >= 0");
	sched_free(accept(k, "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")"));
	snprintf(k, sizeof k, scale_n, "n >= 0");
	StepReport *r = reject(k, "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")",
			       "split.divisible");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "n = "));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

START_TEST(split_cut_makes_tail_loop_without_branches)
{
	Schedule *s = accept(tu_fixture(scale14),
			     "io, ii = sch.split(\"i\", factor=4, tail=\"cut\")");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 0);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_FOR), 3);
	sched_free(s);
	s = accept(tu_fixture(scale14),
		   "io, ii = sch.split(\"i\", factor=4, tail=\"cut_and_guard\")");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	sched_free(s);
}
END_TEST

START_TEST(split_cut_symbolic_needs_nonnegative_extent)
{
	char k[1024];
	snprintf(k, sizeof k, scale_n, "n < 100");
	StepReport *r = reject(k, "io, ii = sch.split(\"i\", factor=4, tail=\"cut\")",
			       "split.nonneg_extent");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	snprintf(k, sizeof k, scale_n, "n >= 0");
	sched_free(accept(k, "io, ii = sch.split(\"i\", factor=4, tail=\"cut\")"));
}
END_TEST

START_TEST(split_loop_with_nonzero_min_keeps_offsets)
{
	const char *k = tu_fixture("loops/split_loop_with_nonzero_min_keeps_offsets.tir");
	sched_free(accept(k, "io, ii = sch.split(\"i\", factor=4)"));
	sched_free(accept(k, "io, ii = sch.split(\"i\", factor=5, tail=\"cut\")"));
}
END_TEST

START_TEST(split_bad_arguments_are_bad_input)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(scale14));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.split(\"i\", factor=0)"), STEP_BAD_INPUT);
	ck_assert_int_eq(tu_run(s, "sch.split(\"q\", factor=2)"), STEP_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "no loop 'q'"));
	ck_assert_int_eq(tu_run(s, "sch.split(\"i\", factor=2, tail=\"sideways\")"), STEP_BAD_INPUT);
	sched_free(s);
}
END_TEST

/* ---------- tails that do not block tiling (issue 14) ---------- */

static const char tail_colsum[] = "loops/tail_colsum.tir";

/* The cut tail, named by the split's third result, is lifted out of two
 * loops (each lift a proven fission); then the main nest and the tail
 * nest are each reordered, vectorized and unrolled: every step checked
 * against the original by the interpreter. */
START_TEST(split_cut_tail_lifted_and_both_nests_scheduled)
{
	TsRun t = ts_accept(&arena, tu_fixture(tail_colsum),
			    "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n"
			    "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
			    "tio, tii, tj, tk = sch.fission(io, before=jt)\n"
			    "sch.reorder(jo, io, ii, ji)\n"
			    "sch.vectorize(ji)\n"
			    "sch.reorder(tj, tio, tii)\n"
			    "sch.unroll(tii)",
			    6);
	const Stmt *body = sched_func(t.s)->body;
	ck_assert_int_eq(body->kind, ST_SEQ);
	ck_assert_int_eq(body->u.seq.n, 2); /* two nests */
	ck_assert_int_eq(ts_count_kind(body, ST_IF), 0);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "for jo, io, ii in T.grid(3, 2, 4):");
	ts_has(text, "for ji in T.vectorized(4):");
	ts_has(text, "for jt, io in T.grid(2, 2):");
	ts_has(text, "for ii in T.unroll(4):");
	sched_free(t.s);
	/* the lift's obligations are proven one level at a time, inner first */
	t = ts_accept(&arena, tu_fixture(tail_colsum),
		      "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n"
		      "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
		      "tail = sch.fission(io, before=jt)", 6);
	ck_assert(ts_has_obligation(t.r, "fission.no_conflict", VERDICT_PROVEN));
	ts_has(ts_report(&arena, t.r), "iteration ii_1 of the first loop");
	ts_has(ts_report(&arena, t.r), "iteration io_1 of the first loop");
	ts_has(t.r->note, "2 loops lifted; the second nest's loops: io#2, ii#2, jt, k#2");
	sched_free(t.s);
}
END_TEST

/* The tail's loops are copies with Vars of their own: a handle bound
 * before the cut keeps naming the main part's loop. */
START_TEST(split_cut_handles_keep_naming_the_main_part)
{
	TsRun t = ts_accept(&arena, tu_fixture(tail_colsum),
			    "ko, ki = sch.split(\"k\", factor=3, tail=\"perfect\")\n"
			    "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
			    "sch.unroll(ki)",
			    6);
	char *text = ts_print(&arena, sched_func(t.s));
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_FOR), 8);
	/* one unrolled ki (the main part's), the tail's stays serial */
	ts_has(text, "for ki in T.unroll(3):");
	ts_has(text, "for jt, ko, ki in T.grid(2, 1, 3):");
	sched_free(t.s);
	/* the tail loop is named by the third name */
	t = ts_accept(&arena, tu_fixture(tail_colsum), "a, b, edge = sch.split(\"j\", factor=4, tail=\"cut\")\nsch.unroll(edge)", 6);
	ts_has(ts_print(&arena, sched_func(t.s)), "for edge in T.unroll(2):");
	sched_free(t.s);
}
END_TEST

/* In TVM's style: the tail's copy of a block gets a name of its own
 * ("C_tail"), so get_block and get_loops reach the tail nest too. */
START_TEST(split_cut_tail_of_a_block_is_a_block_of_its_own)
{
	TsRun t = ts_accept(&arena, tu_fixture("loops/tail_block_matmul.tir"),
			    "b = sch.get_block(\"C\")\n"
			    "i, j, k = sch.get_loops(b)\n"
			    "j0, j1, jt = sch.split(j, factor=8, tail=\"cut\")\n"
			    "ti, tj, tk = sch.fission(i, before=jt)\n"
			    "sch.reorder(j0, k, i, j1)\n"
			    "sch.vectorize(j1)\n"
			    "x, y, z = sch.get_loops(sch.get_block(\"C_tail\"))\n"
			    "sch.reorder(z, x, y)\n"
			    "sch.vectorize(y)",
			    4);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "with T.block(\"C\"):");
	ts_has(text, "with T.block(\"C_tail\"):");
	ts_has(text, "for jt in T.vectorized(4):");
	ts_assert_reparses(&arena, sched_func(t.s));
	sched_free(t.s);
}
END_TEST

/* A reorder that is right on the main part and wrong on the tail: only
 * the tail's columns read their neighbour one row up. */
START_TEST(reorder_wrong_only_in_the_tail_is_refuted_there)
{
	const char *k = tu_fixture("loops/tail_skewed_edge.tir");
	const char *lift = "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
			   "ti, tj = sch.fission(\"i\", before=jt)\n";
	sched_free(accept(k, arena_printf(&arena, "%ssch.reorder(jo, \"i#1\", ji)", lift)));
	StepReport *r = ts_refuted(&arena, k, arena_printf(&arena, "%ssch.reorder(tj, ti)", lift),
				   "reorder.no_conflict");
	ts_has(r->reason, "read of A at 11:27");
}
END_TEST

/* Lifting the tail over a loop that carries a dependence between the
 * main part and the tail is refuted (fission.no_conflict), replayed. */
START_TEST(lifting_a_tail_across_a_dependence_is_refuted)
{
	StepReport *r = ts_refuted(&arena, tu_fixture("loops/tail_mirror.tir"),
				   "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
				   "ti, tj = sch.fission(\"i\", before=jt)",
				   "fission.no_conflict");
	/* the shared cell is whichever the model picks: a row i - 1 cell
	 * written by the tail and read by the main part of row i */
	ts_has(r->counterexample, "both touch A[");
}
END_TEST

/* Red team: the tail of row i reads what the main part of row i + 1
 * writes later (refuted); a float sum's tail lifted reorders its adds
 * (refuted in ieee mode, accepted over the reals). */
START_TEST(tail_lifts_across_later_rows_and_float_sums)
{
	const char *cut = "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
			  "ti, tj = sch.fission(\"i\", before=jt)";
	StepReport *r = ts_refuted(&arena, tu_fixture("loops/tail_reads_later_row.tir"), cut,
				   "fission.no_conflict");
	ts_has(r->reason, "read of A at 6:23");
	/* (the replay's small integer-valued floats add exactly: unconfirmed) */
	ts_rejected(&arena, tu_fixture("loops/tail_float_sum.tir"),
		    arena_printf(&arena, "sch.float_mode(\"ieee\")\n%s", cut),
		    "obligation fission.no_conflict refuted");
	sched_free(accept(tu_fixture("loops/tail_float_sum.tir"), cut));
}
END_TEST

/* The tail's copy of an allocation in the split loop's body is a buffer
 * of its own ("tmp_tail", named like the copies of blocks): the main
 * part's scratch buffer and the tail's are each lifted and their loops
 * vectorized on their own. (With one buffer shared by both copies,
 * lifting the main part's out of i was an IR verifier error.) */
START_TEST(split_cut_tail_allocates_a_buffer_of_its_own)
{
	const char *k = tu_fixture("loops/tail_scratch.tir");
	const char *cut = "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n";
	TsRun t = ts_accept(&arena, k, cut, 6);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "tmp_tail = T.alloc_buffer");
	ts_has(text, "tmp_tail[k] = A[i, 12 + jt] * k");
	ts_lacks(text, "tmp_1");
	sched_free(t.s);
	t = ts_accept(&arena, k,
		      arena_printf(&arena,
				   "%ssch.lift_alloc(\"tmp\", 3)\n"
				   "sch.lift_alloc(\"tmp_tail\", 2)\n"
				   "sch.vectorize(\"k#1\")\n"
				   "sch.vectorize(\"k#2\")",
				   cut),
		      6);
	text = ts_print(&arena, sched_func(t.s));
	/* both allocations now stand before the nest, each part vectorized */
	ck_assert_int_eq(sched_func(t.s)->body->kind, ST_ALLOC);
	ck_assert_int_eq(sched_func(t.s)->body->u.alloc.body->kind, ST_ALLOC);
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_FOR), 6);
	ts_has(text, "for k in T.vectorized(4):\n                tmp[k]");
	ts_has(text, "for k in T.vectorized(4):\n                tmp_tail[k]");
	ts_assert_reparses(&arena, sched_func(t.s));
	sched_free(t.s);
	/* the tail's buffer lifted out of i alone: the main part's stays */
	t = ts_accept(&arena, k, arena_printf(&arena, "%ssch.lift_alloc(\"tmp_tail\", 2)", cut), 6);
	ts_has(ts_print(&arena, sched_func(t.s)), "            tmp = T.alloc_buffer");
	sched_free(t.s);
}
END_TEST

START_TEST(tail_forms_that_are_not_supported_say_why)
{
	const char *k = tu_fixture(tail_colsum);
	/* a third name needs a cut tail, and a tail to name */
	ts_bad_input(&arena, k, "a, b, c = sch.split(\"j\", factor=4)", "only tail=\"cut\"");
	ts_bad_input(&arena, k, "a, b, c = sch.split(\"j\", factor=7, tail=\"cut\")",
		     "is a multiple of 7: there is no tail loop");
	/* before= names a loop inside the loop, with something before it */
	reject(k, "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\nsch.fission(jt, before=\"i\")",
	       "loop 'i' is not inside loop 'jt'");
	reject(k, "sch.fission(\"i\", before=\"j\")", "nothing stands before loop 'j'");
	ts_bad_input(&arena, k, "sch.fission(\"i\", after=0, before=\"j\")",
		     "without after=");
	/* an if between the loops is not lifted */
	reject(tu_fixture("loops/tail_guarded_body.tir"),
	       "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\nsch.fission(\"i\", before=jt)",
	       "not supported: only loops and statement sequences");
}
END_TEST

/* ---------- fuse ---------- */

static const char add_one[] = "loops/add_one.tir";

START_TEST(fuse_perfect_nest_is_equivalent)
{
	Schedule *s = accept(tu_fixture(add_one), "k = sch.fuse(\"i\", \"j\")");
	const Stmt *b = sched_func(s)->body;
	ck_assert_int_eq(ts_count_kind(b, ST_FOR), 1);
	sched_free(s);
	/* split then fuse back */
	sched_free(accept(tu_fixture(add_one),
			  "jo, ji = sch.split(\"j\", factor=3)\nk = sch.fuse(\"jo\", \"ji\")"));
}
END_TEST

START_TEST(fuse_rejects_imperfect_and_dependent_nests)
{
	const char *imperfect = tu_fixture("loops/fuse_rejects_imperfect_and_dependent_nests-imperfect.tir");
	reject(imperfect, "sch.fuse(\"i\", \"j\")", "perfectly nested");
	const char *tri = tu_fixture("loops/fuse_rejects_imperfect_and_dependent_nests-tri.tir");
	reject(tri, "sch.fuse(\"i\", \"j\")", "depends on 'i'");
}
END_TEST

START_TEST(fuse_symbolic_extents_must_not_both_be_negative)
{
	static const char k[] =
		"@T.prim_func\n"
		"def f(a: T.handle, n: T.int32, m: T.int32):\n"
		"    A = T.match_buffer(a, (64,), \"int32\")\n"
		"    T.assume(%s)\n"
		"    for i in T.serial(n):\n"
		"        for j in T.serial(m):\n"
		"            A[0] = A[0] + 1\n";
	char buf[1024];
	/* both negative: the nest runs nothing, the fused loop n * m > 0
	 * times (the replay shows it) */
	snprintf(buf, sizeof buf, k, "n < 8 and m < 8");
	ts_refuted(&arena, buf, "sch.fuse(\"i\", \"j\")", "fuse.nonneg_extents");
	snprintf(buf, sizeof buf, k, "0 <= n and n < 8 and 0 <= m and m < 8");
	sched_free(accept(buf, "sch.fuse(\"i\", \"j\")"));
	/* one of them not negative is enough: nothing runs on either side
	 * when the other one is */
	snprintf(buf, sizeof buf, k, "0 <= n and n < 8 and -8 < m and m < 8");
	sched_free(accept(buf, "sch.fuse(\"i\", \"j\")"));
}
END_TEST

/* ---------- reorder ---------- */

START_TEST(reorder_independent_nest_is_accepted)
{
	const char *k = tu_fixture("loops/reorder_independent_nest_is_accepted.tir");
	Schedule *s = accept(k, "sch.reorder(\"j\", \"i\")");
	ck_assert_str_eq(sched_func(s)->body->u.loop.var->name, "j");
	sched_free(s);
}
END_TEST

START_TEST(reorder_rejects_wavefront_dependence_with_confirmed_replay)
{
	StepReport *r = reject(tu_fixture(wavefront),
			       "sch.reorder(\"j\", \"i\")", "reorder.no_conflict");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_ptr_nonnull(strstr(r->counterexample, "i_p"));
	ck_assert_ptr_nonnull(strstr(r->counterexample, "A[i + 1, j]"));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

START_TEST(reorder_float_reduction_depends_on_float_mode)
{
	sched_free(accept(tu_fixture(total_f32), "sch.reorder(\"j\", \"i\")"));
	StepReport *r = reject(tu_fixture(total_f32),
			       "sch.float_mode(\"ieee\")\nsch.reorder(\"j\", \"i\")",
			       "reorder.no_conflict");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* float16: split and reorder of an elementwise kernel commit in ieee
 * mode (no value is recomputed); the reduction's reorder commits in real
 * mode (sums of the k/4 inputs are exact in half, so the interpreter
 * agrees before and after) and is refuted in ieee mode, the replay
 * computing in half confirming the different sum. */
START_TEST(float16_split_and_reorder_follow_the_float_mode)
{
	sched_free(accept(tu_fixture("loops/scale_f16.tir"),
			  "sch.float_mode(\"ieee\")\njo, ji = sch.split(\"j\", factor=4)\n"
			  "sch.reorder(\"jo\", \"i\")"));
	sched_free(accept(tu_fixture("loops/total_f16.tir"),
			  "jo, ji = sch.split(\"j\", factor=4)\nsch.reorder(\"jo\", \"i\")"));
	StepReport *r = ts_refuted(&arena, tu_fixture("loops/total_f16.tir"),
				   "sch.float_mode(\"ieee\")\nsch.reorder(\"j\", \"i\")",
				   "reorder.no_conflict");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "A["));
}
END_TEST

START_TEST(reorder_rejects_triangular_and_non_chain)
{
	const char *tri = tu_fixture("loops/reorder_rejects_triangular_and_non_chain-tri.tir");
	reject(tri, "sch.reorder(\"j\", \"i\")", "depends on");
	const char *two = tu_fixture("loops/reorder_rejects_triangular_and_non_chain-two.tir");
	reject(two, "sch.reorder(\"j\", \"i\")", "chain");
}
END_TEST

START_TEST(reorder_three_loops_keeps_unnamed_loop_in_place)
{
	const char *k = tu_fixture("loops/reorder_three_loops_keeps_unnamed_loop_in_place.tir");
	Schedule *s = accept(k, "sch.reorder(\"l\", \"i\")");
	const Stmt *b = sched_func(s)->body;
	ck_assert_str_eq(b->u.loop.var->name, "l");
	ck_assert_str_eq(b->u.loop.body->u.loop.var->name, "j");
	sched_free(s);
}
END_TEST

START_TEST(reorder_integer_reduction_commutes_in_ieee_mode)
{
	const char *k = tu_fixture("loops/reorder_integer_reduction_commutes_in_ieee_mode.tir");
	sched_free(accept(k, "sch.float_mode(\"ieee\")\nsch.reorder(\"j\", \"i\")"));
}
END_TEST

/* ---------- parallel, vectorize, unroll ---------- */

START_TEST(parallel_accepts_independent_rows)
{
	const char *k = tu_fixture("loops/parallel_accepts_independent_rows.tir");
	Schedule *s = accept(k, "sch.parallel(\"i\")");
	ck_assert_int_eq(sched_func(s)->body->u.loop.kind, FOR_PARALLEL);
	sched_free(s);
}
END_TEST

START_TEST(parallel_rejects_reduction_race_without_replay)
{
	const char *k = tu_fixture("loops/parallel_rejects_reduction_race_without_replay.tir");
	StepReport *r = reject(k, "sch.parallel(\"i\")", "parallel.no_race");
	ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
	ck_assert_ptr_nonnull(strstr(r->counterexample, "i_1"));
}
END_TEST

START_TEST(vectorize_and_unroll_need_constant_extent)
{
	char k[1024];
	snprintf(k, sizeof k, scale_n, "n >= 0");
	reject(k, "sch.vectorize(\"i\")", "constant extent");
	reject(k, "sch.unroll(\"i\")", "constant extent");
	Schedule *s = accept(tu_fixture(scale16),
			     "io, ii = sch.split(\"i\", factor=4)\nsch.vectorize(\"ii\")\nsch.unroll(\"io\")");
	ck_assert_int_eq(sched_func(s)->body->u.loop.kind, FOR_UNROLLED);
	sched_free(s);
}
END_TEST

/* An extent that is constant only by the facts: after compute_at into
 * tiles of 4 of a size the entry facts make a multiple of 4, the copy
 * loop's extent T.min(jo * 4 + 4, n) - jo * 4 is proven to be 4 and the
 * loop unrolls (and vectorizes) with the literal. Where n may not be a
 * multiple, T.min(4, n) is refuted with a replayed counterexample. */
START_TEST(extent_proven_constant_unrolls)
{
	const char *k = tu_fixture("loops/constant_extent_tiles.tir");
	const char *split = "jo, ji = sch.split(\"j\", factor=4)\n"
			    "sch.compute_at(block=\"B\", loop=\"jo\")\n";
	for (int v = 0; v < 2; v++) {
		char script[256];
		snprintf(script, sizeof script, "%ssch.%s(\"i\")", split, v ? "vectorize" : "unroll");
		TsRun t = ts_accept(&arena, k, script, 6);
		ck_assert(ts_has_obligation(tu_last(t.s), v ? "vectorize.constant_extent"
							   : "unroll.constant_extent",
					    VERDICT_PROVEN));
		char *text = print_func(sched_func(t.s));
		ts_has(text, v ? "for i in T.vectorized(jo * 4, jo * 4 + 4)"
			       : "for i in T.unroll(jo * 4, jo * 4 + 4)");
		free(text);
		sched_free(t.s);
	}
	StepReport *r = ts_refuted(&arena, tu_fixture("loops/constant_extent_clamp.tir"),
				   "sch.unroll(\"i\")", "unroll.constant_extent");
	ts_has(r->reason, "is always 4");
}
END_TEST

/* ---------- soundness holes found in review (closure branch) ----------
 * Each case was accepted before its fix and produced a kernel that the
 * interpreter tells apart from the original (or that has new undefined
 * behaviour). They must stay rejected. */

/* int8 loop variables make the dtype maximum reachable in a test. */
static const char i8_const127[] = "loops/i8_const127.tir";

static const char i8_symbolic[] =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(127,), \"int32\"], n: T.int8):\n"
	"    T.assume(%s)\n"
	"    for i in T.serial(n):\n"
	"        A[i] = 1\n";

START_TEST(split_guard_rejects_index_overflow_near_dtype_max)
{
	/* io*3 + ii reaches 128, which wraps to -128 in int8: the guard
	 * io*3 + ii < 127 holds and A[-128] is written */
	StepReport *r = reject(tu_fixture(i8_const127), "io, ii = sch.split(\"i\", factor=3)",
			       "split.no_overflow");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	/* factor 4 tiles 127 exactly up to 127 = 31*4 + 3: no overflow */
	sched_free(accept(tu_fixture(i8_const127), "io, ii = sch.split(\"i\", factor=4)"));
}
END_TEST

START_TEST(split_guard_symbolic_extent_needs_room_below_dtype_max)
{
	char k[1024];
	/* (n + 2) // 3 wraps for n >= 126: the tiled loop runs no iteration */
	snprintf(k, sizeof k, i8_symbolic, "0 <= n");
	StepReport *r = reject(k, "io, ii = sch.split(\"i\", factor=3)", "split.no_overflow");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_ptr_nonnull(strstr(r->counterexample, "n = "));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	snprintf(k, sizeof k, i8_symbolic, "0 <= n and n <= 100");
	Schedule *s = accept(k, "io, ii = sch.split(\"i\", factor=3)");
	ck_assert_ptr_nonnull(tu_last(s)->note); /* the guard was kept */
	sched_free(s);
}
END_TEST

START_TEST(split_cut_and_guard_tail_needs_room_below_dtype_max)
{
	StepReport *r = reject(tu_fixture(i8_const127),
			       "io, ii = sch.split(\"i\", factor=3, tail=\"cut_and_guard\")",
			       "split.no_overflow");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	/* the unguarded tail stops at the extent: nothing to overflow */
	sched_free(accept(tu_fixture(i8_const127),
			  "io, ii = sch.split(\"i\", factor=3, tail=\"cut\")"));
	sched_free(accept(tu_fixture(i8_const127),
			  "io, ii = sch.split(\"i\", factor=127, tail=\"perfect\")"));
}
END_TEST

START_TEST(split_factor_must_fit_the_loop_dtype)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(i8_const127));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "io, ii = sch.split(\"i\", factor=300)"), STEP_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "int8"));
	sched_free(s);
}
END_TEST

/* The extent is read once when the loop starts; the split loop would read
 * it again in the guard after the body changed it. */
static const char extent_from_buffer[] = "loops/extent_from_buffer.tir";

START_TEST(split_rejects_extent_read_from_a_buffer_the_loop_writes)
{
	reject(tu_fixture(extent_from_buffer),
	       "io, ii = sch.split(\"i\", factor=4)", "not supported");
	reject(tu_fixture(extent_from_buffer), "io, ii = sch.split(\"i\", factor=4, tail=\"cut\")",
	       "not supported");
	/* a buffer the loop does not write is fine */
	const char *k = tu_fixture("loops/split_rejects_extent_read_from_a_buffer_the_loop_writes.tir");
	sched_free(accept(k, "io, ii = sch.split(\"i\", factor=4)"));
}
END_TEST

/* `t < A[0]` holds when loop t starts, not after `A[0] = 0`: it must not
 * be a hypothesis at loop i (it made max(min(A[0], 1) * 4, 1) look like
 * a multiple of 4, when it is 1 there). */
START_TEST(split_does_not_assume_a_stale_enclosing_loop_range)
{
	const char *k = tu_fixture("loops/split_does_not_assume_a_stale_enclosing_loop_range.tir");
	StepReport *r = reject(k, "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")",
			       "split.divisible");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
}
END_TEST

START_TEST(split_keeps_loop_kinds_where_they_stay_valid)
{
	static const char k[] =
		"@T.prim_func\n"
		"def f(A: T.Buffer[(16,), \"int32\"]):\n"
		"    for i in T.%s(16):\n"
		"        A[i] = i\n";
	static const struct { const char *kind; ForKind outer, inner; } cases[] = {
		{"parallel", FOR_PARALLEL, FOR_SERIAL},
		{"vectorized", FOR_SERIAL, FOR_VECTORIZED},
		{"unroll", FOR_SERIAL, FOR_UNROLLED},
		{"serial", FOR_SERIAL, FOR_SERIAL},
	};
	for (size_t n = 0; n < sizeof cases / sizeof *cases; n++) {
		char buf[512];
		snprintf(buf, sizeof buf, k, cases[n].kind);
		Schedule *s = accept(buf, "io, ii = sch.split(\"i\", factor=4)");
		const Stmt *o = sched_func(s)->body;
		ck_assert_int_eq(o->u.loop.kind, cases[n].outer);
		ck_assert_int_eq(o->u.loop.body->u.loop.kind, cases[n].inner);
		sched_free(s);
	}
}
END_TEST

/* An allocation whose shape mentions the split (or fused) loop variable:
 * the shape must follow the substitution, or the result refers to a
 * variable that no longer exists. */
static const char alloc_in_loop[] = "loops/alloc_in_loop.tir";

START_TEST(split_and_fuse_substitute_into_allocation_shapes)
{
	static const char *const scripts[] = {
		"io, ii = sch.split(\"i\", factor=4)",
		"io, ii = sch.split(\"i\", factor=3, tail=\"cut\")",
		"io, ii = sch.split(\"i\", factor=4)\nk = sch.fuse(\"io\", \"ii\")",
	};
	for (size_t n = 0; n < sizeof scripts / sizeof *scripts; n++) {
		Schedule *s = accept(tu_fixture(alloc_in_loop), scripts[n]);
		/* the printed result parses again (no dangling 'i') */
		char *text = print_func(sched_func(s));
		DiagList d;
		diag_init(&d, &arena);
		Module *again = parse_module(&arena, source_from_string(&arena, "again.tir", text), &d);
		char *msg = again ? NULL : diag_render(&d);
		ck_assert_msg(again != NULL, "%s\n%s", text, msg ? msg : "");
		free(text);
		sched_free(s);
	}
}
END_TEST

static const char i8_nest[] =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(16, 16), \"int32\"]):\n"
	"    for i in T.serial(T.int8(%d)):\n"
	"        for j in T.serial(T.int8(%d)):\n"
	"            A[i, j] = 1\n";

START_TEST(fuse_rejects_an_extent_product_beyond_the_dtype)
{
	char k[512];
	snprintf(k, sizeof k, i8_nest, 16, 16); /* 256 does not fit int8 */
	StepReport *r = reject(k, "k = sch.fuse(\"i\", \"j\")", "fuse.no_overflow");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	snprintf(k, sizeof k, i8_nest, 8, 15);
	sched_free(accept(k, "k = sch.fuse(\"i\", \"j\")"));
}
END_TEST

START_TEST(fuse_symbolic_extent_product_must_fit)
{
	static const char k[] =
		"@T.prim_func\n"
		"def f(a: T.handle, n: T.int8, m: T.int8):\n"
		"    A = T.match_buffer(a, (16, 16), \"int32\")\n"
		"    T.assume(%s)\n"
		"    for i in T.serial(n):\n"
		"        for j in T.serial(m):\n"
		"            A[i, j] = 1\n";
	char buf[1024];
	snprintf(buf, sizeof buf, k, "0 <= n and n <= 16 and 0 <= m and m <= 16");
	StepReport *r = reject(buf, "sch.fuse(\"i\", \"j\")", "fuse.no_overflow");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	snprintf(buf, sizeof buf, k, "0 <= n and n <= 11 and 0 <= m and m <= 11");
	sched_free(accept(buf, "sch.fuse(\"i\", \"j\")"));
}
END_TEST

/* j's extent is read again at every i; after a fuse or a reorder it is
 * read once (or at different times). */
static const char inner_extent_from_buffer[] = "loops/inner_extent_from_buffer.tir";

START_TEST(fuse_rejects_extent_read_from_a_buffer_the_nest_writes)
{
	reject(tu_fixture(inner_extent_from_buffer), "k = sch.fuse(\"i\", \"j\")", "not supported");
}
END_TEST

START_TEST(reorder_rejects_extent_read_from_a_buffer_the_nest_writes)
{
	reject(tu_fixture(inner_extent_from_buffer), "sch.reorder(\"j\", \"i\")", "not supported");
}
END_TEST

/* Parallel j was proven for a fixed i. Moved outside i, iterations j=0
 * and j=1 both write A[1] (at i=0 and i=1): a race the reorder check
 * does not see, because (0,0) and (1,1) keep their order. */
static const char diagonal[] = "loops/diagonal.tir";

/* `first` commits, then `second` is rejected for `why`; the IR after
 * `first` stays. */
static StepReport *reject_second(const char *kernel, const char *first, const char *second,
				 const char *why)
{
	return reject(kernel, arena_printf(&arena, "%s\n%s", first, second), why);
}

START_TEST(reorder_rechecks_races_of_a_parallel_loop_that_moves)
{
	StepReport *r = reject_second(tu_fixture(diagonal),
				      "sch.parallel(\"j\")", "sch.reorder(\"j\", \"i\")",
				      "parallel.no_race");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_ptr_nonnull(strstr(r->counterexample, "A["));
	/* the same nest without the diagonal write moves with its label */
	const char *k = tu_fixture("loops/reorder_rechecks_races_of_a_parallel_loop_that_moves.tir");
	Schedule *s = accept(k, "sch.parallel(\"j\")\nsch.reorder(\"j\", \"i\")");
	const Stmt *b = sched_func(s)->body;
	ck_assert_str_eq(b->u.loop.var->name, "j");
	ck_assert_int_eq(b->u.loop.kind, FOR_PARALLEL);
	sched_free(s);
	/* vectorized loops are rechecked the same way */
	r = reject_second(tu_fixture(diagonal), "sch.vectorize(\"j\")", "sch.reorder(\"j\", \"i\")",
			  "vectorize.no_race");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
}
END_TEST

START_TEST(reorder_below_a_parallel_loop_needs_no_new_race_check)
{
	const char *k = tu_fixture("loops/reorder_below_a_parallel_loop_needs_no_new_race_check.tir");
	Schedule *s = accept(k, "sch.parallel(\"i\")\nsch.reorder(\"l\", \"j\")");
	StepReport *r = tu_last(s);
	for (int n = 0; n < r->nobs; n++)
		ck_assert_str_eq(r->obs[n]->kind, "reorder.no_conflict");
	ck_assert_int_eq(sched_func(s)->body->u.loop.kind, FOR_PARALLEL);
	sched_free(s);
}
END_TEST

/* The shape of an allocation is read when the allocation runs: a read
 * like any other, which another iteration's write races with. */
static const char alloc_shape_reads[] = "loops/alloc_shape_reads.tir";

START_TEST(allocation_shapes_are_reads_for_races_and_dependences)
{
	StepReport *r = reject(tu_fixture(alloc_shape_reads),
			       "sch.parallel(\"j\")", "parallel.no_race");
	ck_assert_ptr_nonnull(strstr(r->reason, "read of A at 4:"));
	r = reject(tu_fixture(alloc_shape_reads),
		   "sch.reorder(\"j\", \"i\")", "reorder.no_conflict");
	ck_assert_ptr_nonnull(strstr(r->reason, "of A at 4:"));
}
END_TEST

/* A test case with the per-test arena and a 60 s limit (the solver runs). */
static TCase *loops_tcase(const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	return tc;
}

static TCase *split_review_cases(void)
{
	TCase *tc = loops_tcase("review_holes");
	tcase_add_test(tc, split_guard_rejects_index_overflow_near_dtype_max);
	tcase_add_test(tc, split_guard_symbolic_extent_needs_room_below_dtype_max);
	tcase_add_test(tc, split_cut_and_guard_tail_needs_room_below_dtype_max);
	tcase_add_test(tc, split_factor_must_fit_the_loop_dtype);
	tcase_add_test(tc, split_rejects_extent_read_from_a_buffer_the_loop_writes);
	tcase_add_test(tc, split_does_not_assume_a_stale_enclosing_loop_range);
	tcase_add_test(tc, split_keeps_loop_kinds_where_they_stay_valid);
	tcase_add_test(tc, split_and_fuse_substitute_into_allocation_shapes);
	return tc;
}

static TCase *fuse_review_cases(void)
{
	TCase *tc = loops_tcase("review_holes");
	tcase_add_test(tc, fuse_rejects_an_extent_product_beyond_the_dtype);
	tcase_add_test(tc, fuse_symbolic_extent_product_must_fit);
	tcase_add_test(tc, fuse_rejects_extent_read_from_a_buffer_the_nest_writes);
	return tc;
}

static TCase *reorder_review_cases(void)
{
	TCase *tc = loops_tcase("review_holes");
	tcase_add_test(tc, reorder_rejects_extent_read_from_a_buffer_the_nest_writes);
	tcase_add_test(tc, reorder_rechecks_races_of_a_parallel_loop_that_moves);
	tcase_add_test(tc, reorder_below_a_parallel_loop_needs_no_new_race_check);
	tcase_add_test(tc, allocation_shapes_are_reads_for_races_and_dependences);
	return tc;
}

/* ---------- vectorize of a reduction loop (semantics.md 9) ---------- */

static const char vec_red[] = "loops/vectorize_reductions.tir";

START_TEST(vectorize_of_a_reduction_loop_proves_the_reassociation)
{
	static const struct {
		const char *fn, *mode;
	} ok[] = {{"sum_f32", "real"}, {"sum_i32", "ieee"}, {"max_i32", "ieee"}};
	for (int i = 0; i < 3; i++) {
		const char *script = arena_printf(&arena, "sch.work_on(\"%s\")\nsch.float_mode(\"%s\")\nsch.vectorize(\"j\")",
						  ok[i].fn, ok[i].mode);
		TsRun t = ts_accept(&arena, tu_fixture(vec_red), script, 6);
		ck_assert(ts_has_obligation(t.r, "vectorize.reassociate", VERDICT_PROVEN));
		ck_assert_int_eq(ts_count_obligations(t.r, "vectorize.reassociate"), 1);
		ts_has(ts_print(&arena, sched_func(t.s)), "for j in T.vectorized(16):");
		sched_free(t.s);
	}
	/* Y[j] = a * X[j] + Y[j] updates a cell per iteration: its race
	 * obligations stand, no reassociation is asked (ieee mode commits) */
	TsRun t = ts_accept(&arena, tu_fixture(vec_red),
			    "sch.work_on(\"axpy\")\nsch.float_mode(\"ieee\")\nsch.vectorize(\"j\")", 6);
	ck_assert_int_eq(ts_count_obligations(t.r, "vectorize.reassociate"), 0);
	ck_assert(ts_has_obligation(t.r, "vectorize.no_race", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(vectorize_of_a_float_reduction_is_refuted_in_ieee_mode)
{
	StepReport *r = reject(tu_fixture(vec_red),
			       "sch.work_on(\"sum_f32\")\nsch.float_mode(\"ieee\")\nsch.vectorize(\"j\")",
			       "vectorize.reassociate refuted");
	ts_has(r->reason, "at a = 1, b = 33554432, c = -33554432");
	/* the interpreter runs the vector loop in order: the report says why
	 * no replay can show it */
	ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
	ts_has(r->replay_text, "one partial result per lane");
}
END_TEST

START_TEST(parallel_reduction_and_a_scan_stay_races)
{
	/* parallel: no per-thread partial results; the reason says what to do */
	StepReport *r = reject(tu_fixture(vec_red), "sch.work_on(\"sum_i32\")\nsch.parallel(\"j\")",
			       "parallel.no_race");
	ts_has(r->reason, "rfactor the loop");
	/* a scan reads the cell the previous iteration wrote: no reduction */
	reject(tu_fixture(vec_red), "sch.work_on(\"scan_f32\")\nsch.vectorize(\"j\")", "vectorize.no_race");
}
END_TEST

/* ---------- red team (issue 14): faulting ranges, reduction operators ---------- */

static const char range_faults[] = "loops/range_faults_when_moved_out.tir";

/* Unsound accepts before the fix: j's range T.max(T.min(100 // m, 8), 0)
 * (or N[m - 1]) is evaluated only where i runs, i.e. m > 0; reordered
 * (j outside) or fused (extent N * M) it was evaluated at m = 0 too,
 * dividing by zero (reading N[-1]): both committed and `vsched equiv`
 * found the UB. Now reorder.range_safe / fuse.extent_safe are refuted,
 * the replay shows the fault; a range reading N[0], or a nest whose
 * outer loop surely runs (T.assume(m >= 1)), still moves. */
static const char *on_func(const char *fn, const char *step)
{
	return arena_printf(&arena, "sch.work_on(\"%s\")\n%s", fn, step);
}

/* ---------- red team (issue 14): cut tails ---------- */

static const char tail_where[] = "loops/tail_where_block.tir";

/* A block with a T.where predicate, split with a named cut tail and the
 * tail lifted (fission(i, before=jt)): a read of the next row's last
 * column, which that row's tail writes later, is refuted with a replay;
 * a read of its own row is lifted (checked with the interpreter). The
 * tail nest of an integer row sum takes reorder and vectorize in ieee
 * mode; reorder of a tail with the main part (not one chain) is a
 * precondition. A tail named like the outer loop ("i") is renamed in
 * print and reads back as the same program. */
START_TEST(red_team_tails_of_where_blocks_and_reductions)
{
	const char *cut = "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\nsch.fission(\"i\", before=jt)";
	StepReport *r = ts_refuted(&arena, tu_fixture(tail_where), on_func("cross_rows", cut), "fission.no_conflict");
	ts_has(r->reason, "read of B at 13:41");
	sched_free(accept(tu_fixture(tail_where), on_func("own_row", cut)));
	sched_free(accept(tu_fixture(tail_where),
			  on_func("sum_ints", "sch.float_mode(\"ieee\")\njo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\n"
					      "ti, tj = sch.fission(\"i\", before=jt)\nsch.reorder(tj, ti)\nsch.vectorize(ji)")));
	reject(tu_fixture(tail_where),
	       on_func("sum_ints", "jo, ji, jt = sch.split(\"j\", factor=4, tail=\"cut\")\nsch.reorder(jt, jo)"),
	       "must form one perfectly nested chain");
	TsRun t = ts_accept(&arena, tu_fixture(tail_where),
			    on_func("own_row", "jo, ji, i = sch.split(\"j\", factor=4, tail=\"cut\")"), 6);
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "for i_1 in T.serial(2):");
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	sched_free(t.s);
}
END_TEST

START_TEST(reorder_range_that_faults_where_it_lands_is_refuted)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(range_faults), on_func("divides", "sch.reorder(\"j\", \"i\")"),
				   "reorder.range_safe");
	ts_has(r->replay_text, "integer division by zero (100 // 0)");
	r = ts_refuted(&arena, tu_fixture(range_faults), on_func("reads", "sch.reorder(\"j\", \"i\")"),
		       "reorder.range_safe");
	/* the model picks the m: N[m - 1] is read at some negative index */
	ts_has(r->replay_text, "after the rewrite: load N[-");
	ts_has(r->replay_text, "out of bounds");
	sched_free(accept(tu_fixture(range_faults), on_func("reads_param", "sch.reorder(\"j\", \"i\")")));
	TsRun t = ts_accept(&arena, tu_fixture(range_faults), on_func("runs", "sch.reorder(\"j\", \"i\")"), 6);
	ck_assert(ts_has_obligation(t.r, "reorder.range_safe", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(fuse_extent_that_faults_before_the_outer_loop_is_refuted)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(range_faults), on_func("divides", "sch.fuse(\"i\", \"j\")"),
				   "fuse.extent_safe");
	ts_has(r->replay_text, "integer division by zero (100 // 0)");
	ts_refuted(&arena, tu_fixture(range_faults), on_func("reads", "sch.fuse(\"i\", \"j\")"), "fuse.extent_safe");
	sched_free(accept(tu_fixture(range_faults), on_func("reads_param", "sch.fuse(\"i\", \"j\")")));
	TsRun t = ts_accept(&arena, tu_fixture(range_faults), on_func("runs", "sch.fuse(\"i\", \"j\")"), 6);
	ck_assert(ts_has_obligation(t.r, "fuse.extent_safe", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* vectorize of a reduction loop for the operators the first tests leave
 * out (float * min max, float64 +, int * min, bool and/or), in each float
 * mode: exact operators commit in both modes (checked with the
 * interpreter), float ones commit in real mode and are refuted in ieee
 * mode (+ and * at values whose roundings differ; min and max at signed
 * zeros or NaN, where the order of the select decides); parallel of each
 * stays a race. */
START_TEST(vectorize_reduction_each_operator_and_float_mode)
{
	static const struct {
		const char *fn;
		bool exact; /* also in ieee mode */
	} ops[] = {{"prod_f32", false}, {"max_f32", false}, {"min_f32", false}, {"sum_f64", false},
		   {"prod_i32", true},	{"min_i32", true},  {"all_bool", true}, {"any_bool", true}};
	const char *k = tu_fixture("loops/vectorize_reduction_ops.tir");
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		for (int ieee = 0; ieee < 2; ieee++) {
			const char *script = arena_printf(&arena, "sch.work_on(\"%s\")\nsch.float_mode(\"%s\")\nsch.vectorize(\"j\")",
							  ops[i].fn, ieee ? "ieee" : "real");
			if (!ieee || ops[i].exact) {
				sched_free(accept(k, script));
				continue;
			}
			StepReport *r = reject(k, script, "vectorize.reassociate refuted");
			ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
		}
		reject(k, arena_printf(&arena, "sch.work_on(\"%s\")\nsch.parallel(\"j\")", ops[i].fn),
		       "parallel.no_race");
	}
}
END_TEST

Suite *suite_split(void)
{
	Suite *s = suite_create("split");
	TCase *tc = loops_tcase("perfect");
	tcase_add_test(tc, split_perfect_rejects_non_divisible_extent);
	tcase_add_test(tc, split_perfect_accepts_divisible_extent);
	tcase_add_test(tc, split_perfect_symbolic_needs_assumption);
	suite_add_tcase(s, tc);
	tc = loops_tcase("guard");
	tcase_add_test(tc, split_guard_keeps_guard_when_not_divisible);
	tcase_add_test(tc, split_guard_drops_guard_when_divisibility_is_proven);
	tcase_add_test(tc, split_loop_with_nonzero_min_keeps_offsets);
	suite_add_tcase(s, tc);
	tc = loops_tcase("cut");
	tcase_add_test(tc, split_cut_makes_tail_loop_without_branches);
	tcase_add_test(tc, split_cut_symbolic_needs_nonnegative_extent);
	suite_add_tcase(s, tc);
	tc = loops_tcase("tails");
	tcase_add_test(tc, split_cut_tail_lifted_and_both_nests_scheduled);
	tcase_add_test(tc, tail_lifts_across_later_rows_and_float_sums);
	tcase_add_test(tc, split_cut_handles_keep_naming_the_main_part);
	tcase_add_test(tc, split_cut_tail_of_a_block_is_a_block_of_its_own);
	tcase_add_test(tc, reorder_wrong_only_in_the_tail_is_refuted_there);
	tcase_add_test(tc, lifting_a_tail_across_a_dependence_is_refuted);
	tcase_add_test(tc, tail_forms_that_are_not_supported_say_why);
	tcase_add_test(tc, split_cut_tail_allocates_a_buffer_of_its_own);
	suite_add_tcase(s, tc);
	tc = loops_tcase("red_team");
	tcase_add_test(tc, red_team_tails_of_where_blocks_and_reductions);
	suite_add_tcase(s, tc);
	tc = tcase_create("arguments");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, split_bad_arguments_are_bad_input);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, split_review_cases());
	return s;
}

Suite *suite_fuse(void)
{
	Suite *s = suite_create("fuse");
	TCase *tc = loops_tcase("fuse");
	tcase_add_test(tc, fuse_perfect_nest_is_equivalent);
	tcase_add_test(tc, fuse_rejects_imperfect_and_dependent_nests);
	tcase_add_test(tc, fuse_symbolic_extents_must_not_both_be_negative);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, fuse_review_cases());
	tc = loops_tcase("red_team");
	tcase_add_test(tc, fuse_extent_that_faults_before_the_outer_loop_is_refuted);
	suite_add_tcase(s, tc);
	return s;
}

Suite *suite_reorder(void)
{
	Suite *s = suite_create("reorder");
	TCase *tc = loops_tcase("dependence");
	tcase_add_test(tc, reorder_independent_nest_is_accepted);
	tcase_add_test(tc, reorder_rejects_wavefront_dependence_with_confirmed_replay);
	tcase_add_test(tc, reorder_three_loops_keeps_unnamed_loop_in_place);
	suite_add_tcase(s, tc);
	tc = loops_tcase("reductions");
	tcase_add_test(tc, reorder_float_reduction_depends_on_float_mode);
	tcase_add_test(tc, reorder_integer_reduction_commutes_in_ieee_mode);
	suite_add_tcase(s, tc);
	tc = loops_tcase("float16");
	tcase_add_test(tc, float16_split_and_reorder_follow_the_float_mode);
	suite_add_tcase(s, tc);
	tc = tcase_create("preconditions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reorder_rejects_triangular_and_non_chain);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, reorder_review_cases());
	tc = loops_tcase("red_team");
	tcase_add_test(tc, reorder_range_that_faults_where_it_lands_is_refuted);
	suite_add_tcase(s, tc);
	return s;
}

Suite *suite_parallel(void)
{
	Suite *s = suite_create("parallel");
	TCase *tc = loops_tcase("races");
	tcase_add_test(tc, parallel_accepts_independent_rows);
	tcase_add_test(tc, parallel_rejects_reduction_race_without_replay);
	suite_add_tcase(s, tc);
	tc = loops_tcase("annotations");
	tcase_add_test(tc, vectorize_and_unroll_need_constant_extent);
	tcase_add_test(tc, extent_proven_constant_unrolls);
	suite_add_tcase(s, tc);
	tc = loops_tcase("reductions");
	tcase_add_test(tc, vectorize_of_a_reduction_loop_proves_the_reassociation);
	tcase_add_test(tc, vectorize_of_a_float_reduction_is_refuted_in_ieee_mode);
	tcase_add_test(tc, parallel_reduction_and_a_scan_stay_races);
	suite_add_tcase(s, tc);
	tc = loops_tcase("red_team");
	tcase_add_test(tc, vectorize_reduction_each_operator_and_float_mode);
	suite_add_tcase(s, tc);
	return s;
}
