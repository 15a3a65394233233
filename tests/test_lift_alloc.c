/* tests/test_lift_alloc.c — lift_alloc(buffer, n_lifts) (Exo's
 * lift_alloc): Exo's tests/test_schedules.py cases ported as behaviour
 * (simple, simple2, simple3, empty body, a shape using the loop left, a
 * lift level past the loops there are); the obligations: no value
 * carried across iterations (accepted when each iteration writes what it
 * reads, refuted with a replay where a read would find an earlier
 * iteration's value), a parallel loop crossed (a shared cell races, a
 * cell per iteration passes); the script reader and the C API. Every
 * accepted step is checked against the original with the interpreter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/randkernel.h"
#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static TsRun accept(const char *fixture, const char *script)
{
	return ts_accept(&arena, tu_fixture(fixture), script, 6);
}

/* ---------- Exo's tests ---------- */

START_TEST(exo_simple_lifts_out_of_two_loops)
{
	TsRun t = accept("lift_alloc/simple.tir", "sch.lift_alloc(\"tmp_a\", n_lifts=2)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	/* the allocation comes before both loops (Exo's golden output) */
	ck_assert_ptr_nonnull(strstr(ir, "tmp_a = T.alloc_buffer"));
	ck_assert(strstr(ir, "tmp_a = T.alloc_buffer") < strstr(ir, "for i, j in T.grid(n, n)"));
	ts_has(t.r->note, "tmp_a allocated out of 2 loops or ifs; loops crossed: i, j");
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	sched_free(t.s);
}
END_TEST

START_TEST(exo_simple2_lifts_the_first_allocation)
{
	TsRun t = accept("lift_alloc/simple2.tir", "sch.lift_alloc(\"tmp_a\", n_lifts=2)");
	const Stmt *b = ts_func(&t, NULL)->body;
	/* the first nest is inside the lifted allocation, the second keeps its own */
	ck_assert_int_eq(ts_count_kind(b, ST_ALLOC), 2);
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	char *first = strstr(ir, "alloc_buffer"), *grid = strstr(ir, "T.grid");
	ck_assert(first < grid);
	ck_assert(strstr(grid + 1, "alloc_buffer") > strstr(grid + 1, "T.grid"));
	sched_free(t.s);
}
END_TEST

START_TEST(exo_simple3_lifts_out_of_three_loops_and_proves_each_read)
{
	TsRun t = accept("lift_alloc/simple3.tir", "sch.lift_alloc(\"tmp_a\", n_lifts=3)");
	ck_assert(ts_has_obligation(t.r, "lift_alloc.no_carry", VERDICT_PROVEN));
	ts_has(t.r->note, "loops crossed: k, i, j");
	const Stmt *b = ts_func(&t, NULL)->body;
	ck_assert_int_eq(b->kind, ST_ALLOC);
	sched_free(t.s);
}
END_TEST

START_TEST(exo_empty_body_leaves_an_empty_loop)
{
	TsRun t = accept("lift_alloc/empty_body.tir", "sch.lift_alloc(\"tmp\")");
	ck_assert_int_eq(ts_count_obligations(t.r, "lift_alloc.no_carry"), 0);
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ck_assert(strstr(ir, "tmp = T.alloc_buffer") < strstr(ir, "for i in"));
	sched_free(t.s);
}
END_TEST

START_TEST(exo_errors_shape_uses_the_loop_and_lift_level_too_high)
{
	/* Exo: "Cannot lift allocation statement" */
	StepReport *r = ts_rejected(&arena, tu_fixture("lift_alloc/shape_uses_loop.tir"),
				    "sch.lift_alloc(\"tmp_a\", n_lifts=3)",
				    "cannot lift the allocation of tmp_a: its shape uses 'k'");
	ck_assert_int_eq(r->nobs, 0);
	/* two loops lift, the third does not: the shape is fine */
	sched_free(accept("lift_alloc/shape_uses_loop.tir", "sch.lift_alloc(\"tmp_a\", n_lifts=2)").s);
	/* Exo: "specified lift level 3 is ..." */
	ts_rejected(&arena, tu_fixture("lift_alloc/simple.tir"), "sch.lift_alloc(\"tmp_a\", n_lifts=3)",
		    "the specified lift level 3 is more than the 2 loops or ifs around the allocation of tmp_a");
}
END_TEST

/* ---------- no value carried across iterations ---------- */

START_TEST(rows_written_before_read_are_lifted)
{
	TsRun t = accept("lift_alloc/rows.tir", "sch.lift_alloc(\"tmp\")");
	ck_assert(ts_has_obligation(t.r, "lift_alloc.no_carry", VERDICT_PROVEN));
	sched_free(t.s);
	t = accept("lift_alloc/under_if.tir", "sch.lift_alloc(\"tmp\", n_lifts=2)");
	ck_assert_int_eq(ts_count_obligations(t.r, "lift_alloc.no_carry"), 3);
	ts_has(t.r->note, "out of 2 loops or ifs; loops crossed: i");
	sched_free(t.s);
}
END_TEST

START_TEST(value_carried_across_iterations_is_refuted_with_replay)
{
	StepReport *r = ts_refuted(&arena, tu_fixture("lift_alloc/carry.tir"), "sch.lift_alloc(\"acc\")",
				   "lift_alloc.no_carry");
	ts_has(r->reason, "the read of acc at 7:20 finds its cell written earlier in the same iteration of i");
	ts_has(r->counterexample, "i = ");
	ts_has(r->replay_text, "read of uninitialised acc[0]");
	ts_has(r->replay_text, "the value an earlier iteration left there");
	r = ts_refuted(&arena, tu_fixture("lift_alloc/carry_row.tir"), "sch.lift_alloc(\"tmp\")",
		       "lift_alloc.no_carry");
	ts_has(r->counterexample, "j = 15");
	ts_has(r->replay_text, "read of uninitialised tmp[15]");
}
END_TEST

/* ---------- parallel loops ---------- */

START_TEST(parallel_loop_crossed_races_unless_expanded)
{
	StepReport *r = ts_rejected(&arena, tu_fixture("lift_alloc/parallel_shared.tir"),
				    "sch.lift_alloc(\"tmp\")", "parallel.no_race refuted");
	ts_has(r->counterexample, "both touch tmp[0]");
	ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
	TsRun t = accept("lift_alloc/parallel_expanded.tir", "sch.lift_alloc(\"tmp\")");
	ck_assert(ts_has_obligation(t.r, "parallel.no_race", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* ---------- property: random writes and reads of a scratch row ----------
 * Each kernel allocates tmp in the loop over rows (serial or parallel,
 * one row or a row per iteration), writes some of its cells (an offset,
 * a shorter range, a guard) and reads others; lift_alloc must commit only
 * where the interpreter agrees, and both verdicts must occur. */
static char *gen_scratch(bool *parallel)
{
	StrBuf b = {0};
	unsigned w = 6 + rnd(3), wr = w - rnd(3), rd = w - rnd(3), o = rnd(2), p = rnd(2);
	bool per_iter = rnd(3) == 0;
	*parallel = rnd(3) == 0;
	sb_puts(&b, "@T.prim_func\ndef scratch(A: T.Buffer[(6, 8), \"int32\"], B: T.Buffer[(6, 8), \"int32\"]):\n");
	sb_printf(&b, "    for i in T.%s(6):\n", *parallel ? "parallel" : "serial");
	const char *row = per_iter ? "i, " : "";
	sb_printf(&b, "        tmp = T.alloc_buffer((%s%u,), \"int32\")\n", per_iter ? "6, " : "", w + 1);
	sb_printf(&b, "        for j in T.serial(%u):\n", wr);
	const char *ind = "            ";
	if (rnd(4) == 0) {
		sb_printf(&b, "            if i > 0 or j < %u:\n", wr - 1);
		ind = "                ";
	}
	sb_printf(&b, "%stmp[%sj + %u] = A[i, j] + %u\n", ind, row, o, rnd(5));
	sb_printf(&b, "        for j in T.serial(%u):\n", rd);
	sb_printf(&b, "            B[i, j] = tmp[%sj + %u] * 2\n", row, p);
	return sb_take(&b);
}

START_TEST(random_scratch_rows_commit_only_when_equivalent)
{
	rng_state = 0x7F4A7C159E3779B9ull;
	int committed = 0, rejected = 0;
	for (int t = 0; t < 40; t++) {
		bool parallel;
		char *text = gen_scratch(&parallel);
		Module *m = tu_parse(&arena, "scratch.tir", text);
		Schedule *s = tu_schedule(&arena, m);
		StepStatus st = tu_run(s, "sch.lift_alloc(\"tmp\")");
		if (st == STEP_COMMITTED) {
			committed++;
			char *report = NULL;
			ck_assert_msg(tu_equiv(m->funcs[0], sched_func(s), 4, &report),
				      "lift_alloc committed a wrong rewrite:\n%s\n%s", text, report ? report : "");
			free(report);
		} else {
			ck_assert_int_eq(st, STEP_REJECTED);
			ck_assert_ptr_nonnull(tu_last(s)->reason);
			rejected++;
		}
		sched_free(s);
		free(text);
	}
	printf("lift_alloc property: 40 kernels, %d committed (each agreeing with the interpreter), %d rejected\n",
	       committed, rejected);
	ck_assert_int_gt(committed, 0);
	ck_assert_int_gt(rejected, 0);
}
END_TEST

/* ---------- the script reader and the API ---------- */

START_TEST(script_and_api)
{
	ts_bad_input(&arena, tu_fixture("lift_alloc/rows.tir"), "sch.lift_alloc(\"nope\")",
		     "no allocation (T.alloc_buffer) of 'nope'");
	ts_bad_input(&arena, tu_fixture("lift_alloc/rows.tir"), "sch.lift_alloc(\"tmp\", n_lifts=0)",
		     "n_lifts must be an integer from 1");
	ts_bad_input(&arena, tu_fixture("lift_alloc/rows.tir"), "sch.lift_alloc(buffer=\"tmp\", n_lift=1)",
		     "n_lift");
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "rows.tir", tu_fixture("lift_alloc/rows.tir"));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_lift_alloc(s, "tmp", 1), VS_OK);
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 4, 1, NULL), VS_OK);
	/* now outside every loop: nothing left to lift out of */
	ck_assert_int_eq(vs_lift_alloc(s, "tmp", 1), VS_REJECTED);
	const char *why = vs_report_reason(vs_report_at(s, vs_num_reports(s) - 1));
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "the specified lift level 1 is more than the 0 loops"));
	ck_assert_int_eq(vs_lift_alloc(s, NULL, 1), VS_BAD_INPUT);
	vs_schedule_free(s);
	vs_context_free(ctx);
}
END_TEST

/* ---------- red team: shapes, guards, cells, scopes ---------- */

/* The shape is evaluated once where the allocation lands: a shape that
 * reads a buffer the statements left write (or allocate) is not lifted.
 * Before this check, shape_reads_written committed and wrote tmp[1] past
 * a buffer of shape (1,); shape_written_before committed out of an if
 * and read N before the store that sets it. */
START_TEST(shape_reading_what_the_statement_left_writes_is_not_lifted)
{
	const char *why = "its shape reads a buffer written in the statement it would leave";
	ck_assert_int_eq(ts_rejected(&arena, tu_fixture("lift_alloc/shape_reads_written.tir"),
				     "sch.lift_alloc(\"tmp\")", why)->nobs, 0);
	ts_rejected(&arena, tu_fixture("lift_alloc/shape_written_before.tir"), "sch.lift_alloc(\"tmp\")", why);
	ts_rejected(&arena, tu_fixture("lift_alloc/shape_reads_local.tir"), "sch.lift_alloc(\"tmp\")",
		    "its shape reads sz, allocated in the statement it would leave");
	/* a shape reading a buffer nothing there writes still lifts */
	sched_free(accept("lift_alloc/shape_reads_unwritten.tir", "sch.lift_alloc(\"tmp\")").s);
}
END_TEST

START_TEST(reads_the_iteration_did_not_write_are_refuted)
{
	/* written under an if, read unconditionally */
	ts_refuted(&arena, tu_fixture("lift_alloc/write_under_if.tir"), "sch.lift_alloc(\"tmp\")",
		   "lift_alloc.no_carry");
	/* tmp[(i + 1) % 2]: the other cell than the one written (the
	 * replay does not confirm these two: rejected all the same) */
	ts_rejected(&arena, tu_fixture("lift_alloc/shifted_cell.tir"), "sch.lift_alloc(\"tmp\")",
		    "obligation lift_alloc.no_carry refuted");
	/* half the row written, all read */
	StepReport *r = ts_rejected(&arena, tu_fixture("lift_alloc/partial_row.tir"), "sch.lift_alloc(\"tmp\")",
				    "obligation lift_alloc.no_carry refuted");
	ts_has(r->reason, "the read of tmp at 9:23");
	/* a read through if_then_else under a narrower guard than the write's */
	TsRun t = accept("lift_alloc/guarded_read.tir", "sch.lift_alloc(\"tmp\")");
	ck_assert(ts_has_obligation(t.r, "lift_alloc.no_carry", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(blocks_and_names)
{
	ts_rejected(&arena, tu_fixture("lift_alloc/in_block.tir"), "sch.lift_alloc(\"tmp\")",
		    "not supported: lift_alloc: the allocation of tmp belongs to block \"b\"");
	/* lifted above a read of the parameter of the same name: renamed */
	TsRun t = accept("lift_alloc/shadow_param.tir", "sch.lift_alloc(\"tmp\", n_lifts=2)");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "tmp_1 = T.alloc_buffer");
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	sched_free(t.s);
}
END_TEST

/* Red team (unsound accept before the fix): the shape is evaluated where
 * the allocation lands, also where it did not run before. T.max(N[i], 1)
 * lifted out of `if i < 4` read N[4] out of bounds, and T.max(100 // m, 1)
 * lifted out of a loop of T.min(m, 8) iterations divided by zero at m ==
 * 0: both committed (lift_alloc.shape holds, the max is at least 1) and
 * `vsched equiv` found the UB. Now lift_alloc.shape_safe is refuted, the
 * replay shows the fault; under `if m > 0` the same shape lifts. */
START_TEST(shape_that_faults_where_it_lands_is_refuted)
{
	StepReport *r = ts_refuted(&arena, tu_fixture("lift_alloc/shape_divides_out_of_loop.tir"),
				   "sch.lift_alloc(\"tmp\")", "lift_alloc.shape_safe");
	ts_has(r->replay_text, "division by zero");
	ts_has(r->replay_text, "before: runs without undefined behaviour");
	r = ts_rejected(&arena, tu_fixture("lift_alloc/shape_faults_out_of_if.tir"), "sch.lift_alloc(\"tmp\")",
			"obligation lift_alloc.shape_safe refuted");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	TsRun t = accept("lift_alloc/shape_divides_guarded.tir", "sch.lift_alloc(\"tmp\")");
	ck_assert(ts_has_obligation(t.r, "lift_alloc.shape_safe", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* Red team: loops that run iterations at once, crossed. One cell shared
 * by the lanes of a vectorized loop races (vectorize.no_race refuted); a
 * cell per lane lifts; an unrolled loop runs its iterations in order and
 * lifts; out of the serial loop inside a parallel one the buffer stays
 * per thread (lifted), out of both it is
 * shared by the threads and races. */
START_TEST(loops_running_iterations_at_once_are_checked_again)
{
	const char *k = tu_fixture("lift_alloc/vectorized_and_parallel.tir");
	ts_rejected(&arena, k, "sch.work_on(\"vec_shared\")\nsch.lift_alloc(\"tmp\")",
		    "obligation vectorize.no_race refuted");
	sched_free(ts_accept(&arena, k, "sch.work_on(\"vec_lanes\")\nsch.lift_alloc(\"tmp\")", 6).s);
	sched_free(ts_accept(&arena, k, "sch.work_on(\"unrolled\")\nsch.lift_alloc(\"tmp\")", 6).s);
	sched_free(ts_accept(&arena, k, "sch.work_on(\"par_in_serial\")\nsch.lift_alloc(\"tmp\")", 6).s);
	ts_rejected(&arena, k, "sch.work_on(\"par_in_serial\")\nsch.lift_alloc(\"tmp\", n_lifts=2)",
		    "obligation parallel.no_race refuted");
}
END_TEST

Suite *suite_lift_alloc(void)
{
	Suite *s = suite_create("lift_alloc");
	struct {
		const char *name;
		const TTest *tests[6];
	} cases[] = {
		{"exo_ports", {exo_simple_lifts_out_of_two_loops, exo_simple2_lifts_the_first_allocation,
			       exo_simple3_lifts_out_of_three_loops_and_proves_each_read,
			       exo_empty_body_leaves_an_empty_loop,
			       exo_errors_shape_uses_the_loop_and_lift_level_too_high}},
		{"no_carry", {rows_written_before_read_are_lifted,
			      value_carried_across_iterations_is_refuted_with_replay}},
		{"parallel", {parallel_loop_crossed_races_unless_expanded}},
		{"property", {random_scratch_rows_commit_only_when_equivalent}},
		{"script_and_api", {script_and_api}},
		{"red_team", {shape_reading_what_the_statement_left_writes_is_not_lifted,
			      reads_the_iteration_did_not_write_are_refuted, blocks_and_names,
			      shape_that_faults_where_it_lands_is_refuted,
			      loops_running_iterations_at_once_are_checked_again}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 6 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
