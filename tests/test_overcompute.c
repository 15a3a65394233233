/* tests/test_overcompute.c — remove_branching_through_overcompute and
 * remove_overcompute_through_branching (semantics.md section 5, seed 000):
 * extra instances accepted as no-ops (int, float in real mode) or as dead
 * stores overwritten by a pad or T.undef() stage; rejected when a no-op
 * does not hold (T.undef() padding, -0.0 in ieee mode), when a dead cell
 * is read, touched by a real instance, outside the shape, in forbidden
 * padding or uninitialised; strict / non-strict, loop= / block= scope.
 * Accepted steps are compared with the original by the interpreter;
 * rejections check the failing obligation and the replay. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static TsRun accept(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6);
}

static int store_ifs(const TsRun *t, const char *func)
{
	return ts_store_ifs(ts_func(t, func)->body);
}

/* ---------- no-op extra instances (seed 000 "Overcompute vs Branching") ---------- */

static const char row_sum_fmt[] =
	"@T.prim_func\n"
	"def row_summation(a: T.handle, b: T.handle):\n"
	"    A = T.match_buffer(a, (16, 14), \"%s\")\n"
	"    B = T.match_buffer(b, (16,), \"%s\")\n"
	"    for i in T.serial(16):\n"
	"        B[i] = %s\n"
	"        for j in T.serial(14):\n"
	"            B[i] = B[i] + A[i, j]\n";

static const char *row_sum(const char *dtype)
{
	bool f = strcmp(dtype, "float32") == 0;
	return arena_printf(&arena, row_sum_fmt, dtype, dtype, f ? "0.0" : "0");
}

static const char *row_sum_script(const char *mode, const char *pad)
{
	return arena_printf(&arena,
			    "sch.float_mode(\"%s\")\n"
			    "sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i, j // 4, j %% 4], pad_value=%s)\n"
			    "jo, ji = sch.split(\"j\", factor=4)\n"
			    "sch.simplify()\n"
			    "sch.remove_branching_through_overcompute(loop=\"ji\", strict=True)",
			    mode, pad);
}

START_TEST(row_sum_int32_with_zero_padding_drops_the_branch)
{
	TsRun t = accept(row_sum("int32"), row_sum_script("real", "0"));
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	ck_assert(ts_has_obligation(t.r, "overcompute.no_op", VERDICT_PROVEN));
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "B[i] = B[i] + A[i, jo, ji]");
	sched_free(t.s);
}
END_TEST

START_TEST(row_sum_float32_with_zero_padding_drops_the_branch_in_real_mode)
{
	TsRun t = accept(row_sum("float32"), row_sum_script("real", "0.0"));
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	sched_free(t.s);
}
END_TEST

START_TEST(row_sum_float32_in_ieee_mode_is_refuted_by_negative_zero)
{
	TsRun t = ts_reject(&arena, row_sum("float32"), row_sum_script("ieee", "0.0"), "overcompute.no_op");
	ck_assert_int_eq(t.r->results[t.r->failed].verdict, VERDICT_REFUTED);
	ts_has(t.r->counterexample, "B[0] = -0.0");
	/* B[i] starts at +0.0 and stays off -0.0, so the counterexample
	 * state cannot be reached from an input: the report says so */
	ck_assert_int_eq(t.r->replay, REPLAY_IMPOSSIBLE);
	ts_has(t.r->replay_text, "a value the program computes");
	sched_free(t.s);
}
END_TEST

START_TEST(row_sum_with_undef_padding_is_refuted_with_confirmed_replay)
{
	ts_refuted(&arena, row_sum("int32"), row_sum_script("real", "T.undef()"),
		   "overcompute.no_op");
}
END_TEST

START_TEST(row_sum_without_pad_value_may_not_read_the_padding)
{
	StepReport *r = ts_refuted(&arena, row_sum("int32"), row_sum_script("real", "None"),
				   "overcompute.not_forbidden");
	ts_has(r->replay_text, "touches padding of A, which has no pad_value");
}
END_TEST

/* Seed 000 "Points of Communication": an internal buffer whose producer
 * writes zeros into the padding; the consumer's branch goes. */
static const char single_func[] =
	"@T.prim_func\n"
	"def single_func(A: T.Buffer[14, \"int32\"], C: T.Buffer[1, \"int32\"]):\n"
	"    with T.block(\"transform\"):\n"
	"        B = T.alloc_buffer([4, 4], \"int32\")\n"
	"        for io, ii in T.grid(4, 4):\n"
	"            if 4 * io + ii < 14:\n"
	"                B[io, ii] = A[4 * io + ii]\n"
	"        for io, ii in T.grid(4, 4):\n"
	"            if 4 * io + ii >= 14:\n"
	"                B[io, ii] = %s\n"
	"        with T.block(\"compute\"):\n"
	"            C[0] = 0\n"
	"            for io, ii in T.grid(4, 4):\n"
	"                if 4 * io + ii < 14:\n"
	"                    C[0] = C[0] + B[io, ii]\n";

START_TEST(producer_stage_values_make_the_consumer_branch_a_no_op)
{
	TsRun t = accept(arena_printf(&arena, single_func, "0"),
			 "sch.remove_branching_through_overcompute(block=\"compute\", strict=True)");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "        for io, ii in T.grid(4, 4):\n"
						     "                C[0] = C[0] + B[io, ii]");
	sched_free(t.s);
	/* a producer that writes 1 there gives no no-op */
	t = ts_reject(&arena, arena_printf(&arena, single_func, "1"),
		      "sch.remove_branching_through_overcompute(block=\"compute\", strict=True)",
		      "overcompute.no_op");
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	sched_free(t.s);
}
END_TEST

static const char consumer_fmt[] =
	"@T.prim_func\n"
	"def compute_C(B: T.Buffer[(4, 4), \"int32\"], C: T.Buffer[1, \"int32\"]):\n"
	"    for io, ii in T.grid(4, 4):\n"
	"        T.assume(4 * io + ii < 14 or B[io, ii] == %s)\n"
	"    C[0] = 0\n"
	"    for io, ii in T.grid(4, 4):\n"
	"        if 4 * io + ii < 14:\n"
	"            C[0] = C[0] + B[io, ii]\n";

START_TEST(consumer_assumption_decides_the_no_op)
{
	TsRun t = accept(arena_printf(&arena, consumer_fmt, "0"),
			 "sch.remove_branching_through_overcompute(strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	sched_free(t.s);
	t = ts_reject(&arena, arena_printf(&arena, consumer_fmt, "T.undef()"),
		      "sch.remove_branching_through_overcompute(strict=True)", "overcompute.no_op");
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	sched_free(t.s);
}
END_TEST

START_TEST(a_fact_invalidated_by_a_later_write_is_not_used)
{
	/* the assumption says B[3, 2] == 0, but the loop before the branch
	 * overwrites B: the no-op cannot use it */
	const char *k = tu_fixture("overcompute/a_fact_invalidated_by_a_later_write_is_not_used.tir");
	ts_refuted(&arena, k, "sch.remove_branching_through_overcompute(loop=\"ii#3\", strict=True)",
		   "overcompute.no_op");
}
END_TEST

/* ---------- dead extra stores ---------- */

START_TEST(elementwise_with_undef_padding_overwrites_the_extra_stores)
{
	const char *k = tu_fixture("overcompute/elementwise_with_undef_padding_overwrites_the_extra_stores.tir");
	TsRun t = accept(k, "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
			    "sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
			    "sch.sequential_buffer_access(block=\"compute\", buffer=\"B\")\n"
			    "sch.remove_branching_through_overcompute(block=\"compute\", strict=True)");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_untouched", VERDICT_PROVEN));
	ck_assert_int_eq(store_ifs(&t, NULL), 1); /* only the pad stage branches */
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "    for io, ii in T.grid(4, 4):\n"
						     "            B[io, ii] = 2 * A[io, ii]");
	sched_free(t.s);
}
END_TEST

/* Seed 000 "Remove Branching Through Overcompute": the conv1d output with
 * zero padding; A has a spare row so the extra reads stay in bounds. */
static const char conv1d_padded[] = "overcompute/conv1d_padded.tir";

START_TEST(conv1d_output_stores_overwritten_by_the_pad_stage_are_dead)
{
	TsRun t = accept(tu_fixture(conv1d_padded),
			 "sch.remove_branching_through_overcompute(loop=\"ii#1\", strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 1);
	ck_assert_int_ge(ts_count_obligations(t.r, "overcompute.dead_overwritten"), 2);
	sched_free(t.s);
}
END_TEST

START_TEST(dead_store_read_before_the_overwrite_is_rejected)
{
	const char *k = tu_fixture("overcompute/dead_store_read_before_the_overwrite_is_rejected.tir");
	TsRun t = ts_reject(&arena, k, "sch.remove_branching_through_overcompute(loop=\"ii#1\", strict=True)",
			    "overcompute.no_op");
	/* the dead-store proof failed on the read in between ... */
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_unread", VERDICT_REFUTED));
	/* ... and the no-op fallback too; C[3, 2] shows the difference */
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	ts_has(t.r->replay_text, "C[3, ");
	sched_free(t.s);
}
END_TEST

START_TEST(dead_store_touched_by_a_real_instance_is_rejected)
{
	const char *k = tu_fixture("overcompute/dead_store_touched_by_a_real_instance_is_rejected.tir");
	TsRun t = ts_reject(&arena, k, "sch.remove_branching_through_overcompute(loop=\"ii#1\", strict=True)",
			    "overcompute.no_op");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_untouched", VERDICT_REFUTED));
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	sched_free(t.s);
}
END_TEST

START_TEST(overwriting_stage_that_reads_the_cell_does_not_make_it_dead)
{
	const char *k = tu_fixture("overcompute/overwriting_stage_that_reads_the_cell_does_not_make_it_dead.tir");
	TsRun t = ts_reject(&arena, k, "sch.remove_branching_through_overcompute(loop=\"ii#1\", strict=True)",
			    "overcompute.no_op");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_unread", VERDICT_REFUTED));
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	sched_free(t.s);
}
END_TEST

/* The overwriting stage's guard reads Flag, which a statement between the
 * dead write and the stage sets to 0: the guard must be read in the
 * stage's own state (there Flag may hold anything), not in the state of
 * the extra instance, where the extra write's own guard says Flag > 0. */
static const char overwriter_guard_fmt[] =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(16,), \"int32\"], X: T.Buffer[(16,), \"int32\"], Flag: T.Buffer[(1,), \"int32\"]):\n"
	"    for j in T.serial(16):\n"
	"        if j < 14:\n"
	"            if Flag[0] > 0:\n"
	"                X[j] = A[j]\n"
	"%s"
	"    for t in T.serial(16):\n"
	"        if Flag[0] > 0 and t >= 14:\n"
	"            X[t] = 0\n";

START_TEST(overwriter_guard_reading_data_written_in_between_does_not_make_it_dead)
{
	TsRun t = ts_reject(&arena, arena_printf(&arena, overwriter_guard_fmt, "    Flag[0] = 0\n"),
			    "sch.remove_branching_through_overcompute(loop=\"j\", strict=True)",
			    "overcompute.no_op");
	/* the outer branch (line 4) fails, not only the inner one after it */
	ts_has(t.r->reason, "the branch at k.tir:4 store into X");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_REFUTED));
	ck_assert(!ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_PROVEN));
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	ts_has(t.r->replay_text, "X[14]");
	sched_free(t.s);
	/* nothing in between writes Flag: the stage's guard holds where the
	 * extra write's does, and the store is dead */
	t = accept(arena_printf(&arena, overwriter_guard_fmt, ""),
		   "sch.remove_branching_through_overcompute(loop=\"j\")");
	ts_has(t.r->note, "1 branches removed");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* The loop moves P between the dead write (iteration 1) and the reads of
 * other iterations: their indices read P in their own state, so the read
 * of iteration 1, after P[0] += 1, hits the cell the extra instance
 * wrote. */
static const char index_state_fmt[] =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(1,), \"int32\"], X: T.Buffer[(32,), \"int32\"], P: T.Buffer[(1,), \"int32\"], Y: T.Buffer[(2,), \"int32\"]):\n"
	"    for j in T.serial(2):\n"
	"        if j == 0:\n"
	"            X[P[0] %% 8 + 8 * j] = A[0]\n"
	"%s"
	"        Y[j] = X[P[0] %% 8 + 7]\n"
	"    for t in T.serial(32):\n"
	"        X[t] = 0\n";

START_TEST(dead_store_reads_of_other_iterations_index_their_own_state)
{
	TsRun t = ts_reject(&arena, arena_printf(&arena, index_state_fmt, "        P[0] = P[0] + 1\n"),
			    "sch.remove_branching_through_overcompute(loop=\"j\", strict=True)",
			    "overcompute.no_op");
	ts_has(t.r->reason, "the branch at k.tir:4 store into X");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_untouched", VERDICT_REFUTED));
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_unread", VERDICT_REFUTED));
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	ts_has(t.r->replay_text, "Y[1]");
	sched_free(t.s);
	/* P unchanged by the loop: the same index in every state, never the
	 * dead cell */
	t = accept(arena_printf(&arena, index_state_fmt, ""),
		   "sch.remove_branching_through_overcompute(loop=\"j\", strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_untouched", VERDICT_PROVEN));
	ck_assert(!ts_has_obligation(t.r, "overcompute.dead_untouched", VERDICT_REFUTED));
	sched_free(t.s);
}
END_TEST

/* ---------- safety of the extra instances ---------- */

START_TEST(extra_instances_outside_the_shape_are_rejected)
{
	const char *k = tu_fixture("overcompute/extra_instances_outside_the_shape_are_rejected.tir");
	StepReport *r = ts_refuted(&arena, k, "sch.remove_branching_through_overcompute(strict=True)",
				   "overcompute.in_bounds");
	ts_has(r->counterexample, "i = 1");
	ts_has(r->replay_text, "out of bounds");
}
END_TEST

START_TEST(extra_instances_reading_uninitialised_cells_are_rejected)
{
	const char *k = tu_fixture("overcompute/extra_instances_reading_uninitialised_cells_are_rejected.tir");
	TsRun t = ts_reject(&arena, k, "sch.remove_branching_through_overcompute(loop=\"i#2\", strict=True)",
			    "overcompute.readable");
	ts_assert_refuted_confirmed(t.r, "overcompute.readable");
	ts_has(t.r->replay_text, "uninitialised");
	sched_free(t.s);
	/* the cells the producer wrote are readable: i < 15 is fine */
	const char *k2 = tu_fixture("overcompute/extra_instances_reading_uninitialised_cells_are_rejected-times_zero.tir");
	t = accept(k2, "sch.remove_branching_through_overcompute(loop=\"i#2\", strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	sched_free(t.s);
}
END_TEST

START_TEST(a_producer_guard_that_read_changed_data_does_not_make_cells_readable)
{
	/* X[i] was written where A[i] > 0 held at the time; A changes after,
	 * so the guard says nothing now about which cells were written */
	const char *k = tu_fixture("overcompute/a_producer_guard_that_read_changed_data_does_not_make_cells_readable.tir");
	ts_refuted(&arena, k, "sch.remove_branching_through_overcompute(loop=\"i#3\", strict=True)",
		   "overcompute.readable");
}
END_TEST

START_TEST(extra_instances_must_not_race_in_a_parallel_loop)
{
	/* every iteration's extra B[0] = B[0] races with iteration 0's
	 * update of B[0]: a no-op in sequence, a lost update in parallel */
	const char *k = tu_fixture("overcompute/extra_instances_must_not_race_in_a_parallel_loop.tir");
	TsRun t = ts_reject(&arena, k, "sch.parallel(\"i\")\n"
				       "sch.remove_branching_through_overcompute(strict=True)",
			    "overcompute.no_race refuted");
	ck_assert_int_eq(t.r->replay, REPLAY_IMPOSSIBLE);
	ts_has(t.r->replay_text, "a race cannot show");
	ts_has(t.r->counterexample, "i_1 = ");
	sched_free(t.s);
	/* serial, the same removal is fine */
	t = accept(k, "sch.remove_branching_through_overcompute(strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 0);
	sched_free(t.s);
	/* extra instances on cells of their own iteration do not race */
	const char *own = tu_fixture("overcompute/extra_instances_must_not_race_in_a_parallel_loop-own.tir");
	t = accept(own, "sch.parallel(\"i\")\nsch.remove_branching_through_overcompute(strict=True)");
	ck_assert(ts_has_obligation(t.r, "overcompute.no_race", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(parallel_loop_inside_the_branch_must_stay_race_free)
{
	/* j * (2 - i) is injective in j only where i < 2 holds */
	const char *k = tu_fixture("overcompute/parallel_loop_inside_the_branch_must_stay_race_free.tir");
	TsRun t = ts_reject(&arena, k, "sch.parallel(\"j\")\n"
				       "sch.remove_branching_through_overcompute(strict=True)",
			    "overcompute.no_race refuted");
	ck_assert_int_eq(t.r->replay, REPLAY_IMPOSSIBLE);
	ts_has(t.r->replay_text, "a race cannot show");
	sched_free(t.s);
}
END_TEST

START_TEST(unsupported_branch_bodies_reject_as_not_supported)
{
	static const char fmt[] =
		"@T.prim_func\n"
		"def func(A: T.Buffer[(16,), \"int32\"], n: T.int32):\n"
		"    for i in T.serial(16):\n"
		"        if i < 14:\n"
		"%s";
	static const char *const bodies[][2] = {
		{"            T.assume(A[i] == 0)\n            A[i] = A[i]\n", "T.assume"},
		{"            A[i] = A[i] // n\n", "division by a non-constant"},
		{"            X = T.alloc_buffer([1], \"int32\")\n            X[0] = 1\n            A[i] = A[i]\n",
		 "allocation"},
		{"            A[i] = A[i]\n        else:\n            for j in T.serial(2):\n                A[i] = A[i]\n",
		 "differ in shape"},
	};
	for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
		TsRun t = ts_reject(&arena, arena_printf(&arena, fmt, bodies[i][0]),
				    "sch.remove_branching_through_overcompute(strict=True)", "not supported");
		ts_has(t.r->reason, bodies[i][1]);
		sched_free(t.s);
	}
}
END_TEST

/* if/else: the kept branch must compute what the dropped one did in its
 * cases (overcompute.same_effect) and run safely there. */
START_TEST(branches_that_agree_in_each_others_cases_are_merged)
{
	const char *k = tu_fixture("overcompute/branches_that_agree_in_each_others_cases_are_merged.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.remove_branching_through_overcompute(strict=True)"),
			 STEP_COMMITTED);
	tu_assert_equiv(m->funcs[0], sched_func(s), 8);
	char *text = print_func(sched_func(s));
	ck_assert_ptr_null(strstr(text, "if "));
	free(text);
	sched_free(s);
}
END_TEST

START_TEST(branches_that_differ_are_kept_with_a_replayed_counterexample)
{
	/* seed 000: `B = A[4*io + ii] else B = 0` cannot lose either side */
	const char *k = tu_fixture("overcompute/branches_that_differ_are_kept_with_a_replayed_counterexample.tir");
	TsRun t = ts_reject(&arena, k, "sch.remove_branching_through_overcompute(strict=True)",
			    "overcompute.same_effect refuted");
	ck_assert_int_eq(t.r->replay, REPLAY_CONFIRMED);
	sched_free(t.s);
}
END_TEST

/* A condition that reads X is a hypothesis about the state it was read
 * in: after the branch writes X (or in a loop that writes it, from the
 * second iteration on) it says nothing, and the select reads 7, not 5. */
static const char cond_state_fmt[] =
	"@T.prim_func\n"
	"def f(X: T.Buffer[(16,), \"int32\"], Y: T.Buffer[(32,), \"int32\"]):\n"
	"    for j in T.serial(16):\n"
	"        if j < 14:\n"
	"            if X[j] == 5:\n"
	"%s"
	"        else:\n"
	"            if X[j] == 5:\n"
	"%s";

START_TEST(a_branch_condition_is_no_hypothesis_after_a_write_to_what_it_read)
{
	static const char *const cases[][2] = {
		{"                X[j] = 7\n"
		 "                Y[j] = T.if_then_else(X[j] == 5, 1, 2)\n",
		 "                X[j] = 7\n"
		 "                Y[j] = 1\n"},
		{"                for k in T.serial(2):\n"
		 "                    Y[2 * j + k] = T.if_then_else(X[j] == 5, 1, 2)\n"
		 "                    X[j] = 7\n",
		 "                for k in T.serial(2):\n"
		 "                    Y[2 * j + k] = 1\n"
		 "                    X[j] = 7\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TsRun t = ts_reject(&arena, arena_printf(&arena, cond_state_fmt, cases[i][0], cases[i][1]),
				    "sch.remove_branching_through_overcompute(loop=\"j\", strict=True)",
				    "overcompute.same_effect refuted");
		ck_assert(!ts_has_obligation(t.r, "overcompute.same_effect", VERDICT_PROVEN));
		ts_assert_refuted_confirmed(t.r, "overcompute.same_effect");
		sched_free(t.s);
	}
	/* read before the write, the condition still holds */
	TsRun t = accept(arena_printf(&arena, cond_state_fmt,
				      "                Y[j] = T.if_then_else(X[j] == 5, 1, 2)\n"
				      "                X[j] = 7\n",
				      "                Y[j] = 1\n"
				      "                X[j] = 7\n"),
			 "sch.remove_branching_through_overcompute(loop=\"j\")");
	ts_has(t.r->note, "1 branches removed");
	ck_assert(ts_has_obligation(t.r, "overcompute.same_effect", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* ---------- scope: strict, loop=, block= ---------- */

static const char two_nests[] = "overcompute/two_nests.tir";

START_TEST(non_strict_call_keeps_unproven_branches_with_a_note)
{
	TsRun t = accept(tu_fixture(two_nests), "sch.remove_branching_through_overcompute()");
	ck_assert_int_eq(store_ifs(&t, NULL), 1);
	ts_has(t.r->note, "branch at line 9 kept: obligation overcompute.no_op refuted");
	ts_has(t.r->note, "1 branches removed");
	sched_free(t.s);
	t = ts_reject(&arena, tu_fixture(two_nests),
		      "sch.remove_branching_through_overcompute(strict=True)",
		      "overcompute.no_op");
	ts_assert_refuted_confirmed(t.r, "overcompute.no_op");
	sched_free(t.s);
}
END_TEST

START_TEST(loop_and_block_arguments_narrow_the_candidates)
{
	TsRun t = accept(tu_fixture(two_nests),
			 "sch.remove_branching_through_overcompute(block=\"first\", strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 1);
	ts_lacks(ts_print(&arena, ts_func(&t, NULL)), "if i < 14");
	sched_free(t.s);
	t = accept(tu_fixture(two_nests),
		   "sch.remove_branching_through_overcompute(loop=\"i\", strict=True)");
	ck_assert_int_eq(store_ifs(&t, NULL), 1);
	sched_free(t.s);
	/* the unprovable branch is out of scope: nothing to reject */
	t = accept(tu_fixture(two_nests), "sch.remove_branching_through_overcompute(loop=\"j\")");
	ck_assert_int_eq(store_ifs(&t, NULL), 2);
	sched_free(t.s);
	t = accept(tu_fixture(two_nests),
		   "sch.remove_branching_through_overcompute(block=\"second\")");
	ck_assert_int_eq(store_ifs(&t, NULL), 2);
	sched_free(t.s);
}
END_TEST

START_TEST(loop_argument_takes_only_branches_directly_inside)
{
	const char *k = tu_fixture("overcompute/loop_argument_takes_only_branches_directly_inside.tir");
	TsRun t = accept(k, "sch.remove_branching_through_overcompute(loop=\"i\")");
	ts_has(t.r->note, "no candidate");
	ck_assert_int_eq(store_ifs(&t, NULL), 1);
	sched_free(t.s);
}
END_TEST

START_TEST(bad_scope_arguments_are_bad_input)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(two_nests));
	static const char *const scripts[] = {
		"sch.remove_branching_through_overcompute(block=\"nope\")",
		"sch.remove_branching_through_overcompute(loop=\"nope\")",
		"sch.remove_branching_through_overcompute(strict=1)",
		"sch.remove_branching_through_overcompute(depth=2)",
		"sch.remove_overcompute_through_branching(loop=\"i\")",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
		Schedule *s = tu_schedule(&arena, m);
		ck_assert_msg(tu_run(s, scripts[i]) == STEP_BAD_INPUT, "%s is not bad input", scripts[i]);
		ck_assert_ptr_eq(s->mod, m);
		sched_free(s);
	}
}
END_TEST

/* ---------- remove_overcompute_through_branching ---------- */

static const char elementwise[] = "overcompute/elementwise.tir";

static const char elementwise_overcompute[] =
	"sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
	"sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
	"sch.sequential_buffer_access(block=\"compute\", buffer=\"B\")\n"
	"sch.remove_branching_through_overcompute(block=\"compute\", strict=True)\n";

START_TEST(branching_back_guards_a_store_whose_padding_is_overwritten)
{
	TsRun t = accept(tu_fixture(elementwise),
			 arena_printf(&arena, "%s%s", elementwise_overcompute,
						   "sch.remove_overcompute_through_branching(block=\"compute\", strict=True)"));
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_PROVEN));
	ts_has(t.r->note, "1 stores guarded");
	ck_assert_int_eq(store_ifs(&t, NULL), 2);
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "if 4 * io + ii < 14:\n"
		     "                B[io, ii] = 2 * A[io, ii]");
	sched_free(t.s);
}
END_TEST

/* The pad stage's own store writes only padding: guarding it by "not
 * padding" would drop the pad value, so it is no candidate; neither is a
 * store already guarded (sequential_buffer_access leaves the copy under
 * `io * 4 + ii < 14`, the pad test up to term order). */
static const char copy_then_pad[] = "overcompute/copy_then_pad.tir";

START_TEST(branching_back_leaves_the_pad_stage_and_guarded_stores)
{
	static const char script[] =
		"sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
		"sch.sequential_buffer_access(buffer=\"B\")\n"
		"sch.remove_overcompute_through_branching(strict=True)";
	TsRun t = accept(tu_fixture(copy_then_pad), script);
	ts_has(t.r->note, "2 stores already under their pad test left as they are");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_lacks(text, "if 4 * io + ii < 14:");
	ts_has(text, "B[io, ii] = 0");
	sched_free(t.s);
	/* after one guard, a second call has nothing left to guard */
	t = accept(tu_fixture(elementwise),
		   arena_printf(&arena, "%s%s\n%s", elementwise_overcompute,
					     "sch.remove_overcompute_through_branching(block=\"compute\", strict=True)",
					     "sch.remove_overcompute_through_branching(strict=True)"));
	ts_has(t.r->note, "no candidate store to a padded buffer in scope");
	ck_assert_int_eq(store_ifs(&t, NULL), 2);
	sched_free(t.s);
}
END_TEST

/* A producer, an in-place update and X's pad stage: the producer's extra
 * instances are dead through the pad stage (the second later writer; the
 * update between only writes the cell once it is overcomputed too). Then
 * guarding the producer again is refuted: the overcomputed update reads
 * the padding the guard leaves uninitialised. */
static const char produce_update[] = "overcompute/produce_update.tir";

static const char produce_update_script[] =
	"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
	"sch.transform_layout(buffer=\"X\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
	"sch.sequential_buffer_access(block=\"producer\", buffer=\"X\")\n"
	"sch.sequential_buffer_access(block=\"update\", buffer=\"X\")\n"
	"sch.remove_branching_through_overcompute(block=\"producer\", strict=True)\n";

START_TEST(dead_through_a_later_overwriter_than_the_next)
{
	TsRun t = accept(tu_fixture(produce_update), produce_update_script);
	ts_has(t.r->note, "1 branches removed");
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_REFUTED));
	ck_assert(ts_has_obligation(t.r, "overcompute.dead_overwritten", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(branching_back_refused_when_an_overcomputed_reader_needs_the_padding)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(produce_update),
				   arena_printf(&arena, "%s%s", produce_update_script,
						"sch.remove_branching_through_overcompute(block=\"update\", strict=True)\n"
						"sch.remove_overcompute_through_branching(block=\"producer\", strict=True)"),
				   "overcompute.no_op");
	ts_has(r->replay_text, "read of uninitialised X[3, 2]");
}
END_TEST

/* ieee mode computes what the program computes: T.min(x, NaN) is NaN
 * (a < b ? a : b, not fp.min), and float32 `//` is done in double and
 * rounded once. */
START_TEST(ieee_min_with_nan_and_float32_floor_follow_the_program)
{
	TsRun t = ts_reject(&arena,
			    tu_fixture("overcompute/ieee_min_with_nan_and_float32_floor_follow_the_program-min_nan.tir"),
			    "sch.float_mode(\"ieee\")\n"
			    "sch.remove_branching_through_overcompute(loop=\"i\", strict=True)",
			    "overcompute.no_op refuted");
	sched_free(t.s);
	t = ts_reject(&arena,
		      tu_fixture("overcompute/ieee_min_with_nan_and_float32_floor_follow_the_program-floor.tir"),
		      "sch.float_mode(\"ieee\")\n"
		      "sch.remove_branching_through_overcompute(loop=\"i\", strict=True)",
		      "overcompute.no_op refuted");
	sched_free(t.s);
}
END_TEST

/* A producer's guard read A, which was overwritten since: the cells it
 * made readable are not those the guard names now. */
START_TEST(a_readability_fact_whose_guard_read_changed_data_is_not_used)
{
	TsRun t = ts_reject(&arena,
			    tu_fixture("overcompute/a_readability_fact_whose_guard_read_changed_data_is_not_used.tir"),
			    "sch.remove_branching_through_overcompute(loop=\"i#3\", strict=True)",
			    "overcompute.readable refuted");
	sched_free(t.s);
}
END_TEST

/* An out-of-range float-to-int conversion is undefined behaviour, so the
 * extra instances may not evaluate one. */
START_TEST(float_to_int_conversions_in_extra_instances_are_not_supported)
{
	TsRun t = ts_reject(&arena,
			    tu_fixture("overcompute/float_to_int_conversions_in_extra_instances_are_not_supported.tir"),
			    "sch.remove_branching_through_overcompute(loop=\"i\", strict=True)",
			    "float-to-integer conversion");
	sched_free(t.s);
}
END_TEST

Suite *suite_overcompute(void)
{
	Suite *s = suite_create("overcompute");
	struct {
		const char *name;
		const TTest *tests[12];
	} cases[] = {
		{"no_op",
		 {row_sum_int32_with_zero_padding_drops_the_branch,
		  row_sum_float32_with_zero_padding_drops_the_branch_in_real_mode,
		  row_sum_float32_in_ieee_mode_is_refuted_by_negative_zero,
		  row_sum_with_undef_padding_is_refuted_with_confirmed_replay,
		  row_sum_without_pad_value_may_not_read_the_padding,
		  producer_stage_values_make_the_consumer_branch_a_no_op,
		  consumer_assumption_decides_the_no_op, a_fact_invalidated_by_a_later_write_is_not_used,
		  ieee_min_with_nan_and_float32_floor_follow_the_program}},
		{"dead_stores",
		 {elementwise_with_undef_padding_overwrites_the_extra_stores,
		  conv1d_output_stores_overwritten_by_the_pad_stage_are_dead,
		  dead_store_read_before_the_overwrite_is_rejected,
		  dead_store_touched_by_a_real_instance_is_rejected,
		  overwriting_stage_that_reads_the_cell_does_not_make_it_dead,
		  dead_through_a_later_overwriter_than_the_next,
		  overwriter_guard_reading_data_written_in_between_does_not_make_it_dead,
		  dead_store_reads_of_other_iterations_index_their_own_state}},
		{"safety",
		 {extra_instances_outside_the_shape_are_rejected,
		  extra_instances_reading_uninitialised_cells_are_rejected,
		  a_producer_guard_that_read_changed_data_does_not_make_cells_readable,
		  extra_instances_must_not_race_in_a_parallel_loop,
		  parallel_loop_inside_the_branch_must_stay_race_free,
		  unsupported_branch_bodies_reject_as_not_supported,
		  branches_that_agree_in_each_others_cases_are_merged,
		  branches_that_differ_are_kept_with_a_replayed_counterexample,
		  a_branch_condition_is_no_hypothesis_after_a_write_to_what_it_read,
		  a_readability_fact_whose_guard_read_changed_data_is_not_used,
		  float_to_int_conversions_in_extra_instances_are_not_supported}},
		{"scope",
		 {non_strict_call_keeps_unproven_branches_with_a_note,
		  loop_and_block_arguments_narrow_the_candidates,
		  loop_argument_takes_only_branches_directly_inside, bad_scope_arguments_are_bad_input}},
		{"branching_back",
		 {branching_back_guards_a_store_whose_padding_is_overwritten,
		  branching_back_leaves_the_pad_stage_and_guarded_stores,
		  branching_back_refused_when_an_overcomputed_reader_needs_the_padding}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 12 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
