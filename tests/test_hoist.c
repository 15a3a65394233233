/* tests/test_hoist.c — suite hoist: hoist_expression (invariant branches,
 * case splits), reduce_loop_extents and remove_no_op (seed 000's
 * examples), each accepted step checked with the interpreter, each
 * rejection with its reason. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;

static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* Run script on kernel; check the result with the interpreter when
 * committed. */
static Schedule *run(const char *kernel, const char *script, StepStatus want, Module **m_out)
{
	Module *m = tu_parse(&arena, "k.tir", kernel);
	Schedule *s = tu_schedule(&arena, m);
	StepStatus st = tu_run(s, script);
	ck_assert_msg(st == want, "status %d, want %d:\n%s", st, want, sched_report_text(tu_last(s)));
	if (st == STEP_COMMITTED)
		tu_assert_equiv(m->funcs[0], sched_func(s), 8);
	if (m_out)
		*m_out = m;
	return s;
}

static const char *invariant_if = "hoist/invariant_if.tir";

START_TEST(invariant_branch_moves_out_of_the_loop)
{
	Schedule *s = run(tu_fixture(invariant_if),
			  "sch.hoist_expression(conditionals=\"if_else_stmt\")\n",
			  STEP_COMMITTED, NULL);
	const Stmt *b = sched_func(s)->body;
	while (b->kind == ST_SEQ)
		b = b->u.seq.items[b->u.seq.n - 1];
	ck_assert_int_eq(b->kind, ST_IF); /* the if now holds the loops */
	ck_assert_int_eq(b->u.cond.then_s->kind, ST_FOR);
	ck_assert_ptr_nonnull(b->u.cond.else_s);
	ck_assert_int_eq(tu_last(s)->nobs, 0); /* a pure condition needs no proof */
	sched_free(s);
}
END_TEST

static const char *loop_variant_if = "hoist/loop_variant_if.tir";

START_TEST(branch_reading_a_buffer_the_loop_writes_stays)
{
	Schedule *s = run(tu_fixture(loop_variant_if),
			  "sch.hoist_expression(conditionals=\"if_else_stmt\")\n",
			  STEP_COMMITTED, NULL);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "nothing to hoist"));
	sched_free(s);
}
END_TEST

static const char *faulting_if = "hoist/faulting_if.tir";

START_TEST(hoisting_a_faulting_condition_needs_a_nonempty_loop)
{
	/* with n == 0 the original never reads B[k]; hoisted, it would */
	Schedule *s = run(tu_fixture(faulting_if),
			  "sch.hoist_expression(conditionals=\"if_else_stmt\")\n",
			  STEP_REJECTED, NULL);
	StepReport *r = tu_last(s);
	ck_assert_ptr_nonnull(strstr(r->reason, "hoist.nonempty refuted"));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	sched_free(s);
}
END_TEST

static const char *border_tiles = "hoist/border_tiles.tir";

START_TEST(case_split_lets_simplify_clear_the_interior)
{
	Schedule *s = run(tu_fixture(border_tiles),
			  "sch.hoist_expression(conditionals=\"boolean_expression\", loop=\"io\")\n"
			  "sch.simplify()\n",
			  STEP_COMMITTED, NULL);
	const Func *out = sched_func(s);
	/* io < 1, io < 2, else: the middle case has no branch left */
	const Stmt *l = out->body;
	ck_assert_int_eq(l->kind, ST_FOR);
	const Stmt *chain = l->u.loop.body;
	ck_assert_int_eq(chain->kind, ST_IF);
	const Stmt *mid = chain->u.cond.else_s;
	ck_assert_ptr_nonnull(mid);
	ck_assert_int_eq(mid->kind, ST_IF);
	ck_assert_int_eq(ts_count_kind(mid->u.cond.then_s, ST_IF), 0);
	sched_free(s);
}
END_TEST

/* TVM's TestHoistIfElse: the loop is split into its cases once; it used
 * to split again and again on the same condition, doubling the body each
 * time (out of memory on TestHoistMultiIf). */
START_TEST(case_split_happens_once_per_loop)
{
	Schedule *s = run(tu_fixture("hoist/tvm_hoist_if_else.tir"), "sch.hoist_expression()\n",
			  STEP_COMMITTED, NULL);
	const Func *out = sched_func(s);
	ck_assert_int_le(ts_count_kind(out->body, ST_IF), 4);
	ck_assert_int_le(ts_count_kind(out->body, ST_FOR), 5);
	tu_assert_equiv(ts_parse_func(&arena, tu_fixture("hoist/tvm_hoist_if_else.tir")), out, 4);
	sched_free(s);
}
END_TEST

static const char *seed_reduce = "hoist/seed_reduce.tir";

START_TEST(reduce_loop_extents_follows_seed_000)
{
	/* hoist the i condition out of j, then narrow both loops */
	Schedule *s = run(tu_fixture(seed_reduce),
			  "sch.hoist_expression(conditionals=\"boolean_expression\")\n"
			  "sch.simplify()\n"
			  "sch.reduce_loop_extents()\n",
			  STEP_COMMITTED, NULL);
	StepReport *r = tu_last(s);
	ck_assert_int_gt(r->nobs, 0);
	for (int i = 0; i < r->nobs; i++)
		ck_assert_int_eq(r->results[i].verdict, VERDICT_PROVEN);
	char *text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, "T.serial(2)") || strstr(text, "T.serial(0, 2)"),
		      "j not narrowed to 2:\n%s", text);
	free(text);
	sched_free(s);
}
END_TEST

static const char *reduce_simple = "hoist/reduce_simple.tir";

START_TEST(reduce_loop_extents_with_a_symbolic_bound)
{
	Schedule *s = run(tu_fixture(reduce_simple),
			  "sch.reduce_loop_extents()\n", STEP_COMMITTED, NULL);
	StepReport *r = tu_last(s);
	ck_assert_int_ge(r->nobs, 2);
	char *text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, "T.serial(3,") != NULL, "min not moved to 3:\n%s", text);
	free(text);
	sched_free(s);
}
END_TEST

static const char *seed_noop = "hoist/seed_noop.tir";

START_TEST(store_of_an_assumed_value_is_removed)
{
	Schedule *s = run(tu_fixture(seed_noop), "sch.remove_no_op()\n", STEP_COMMITTED, NULL);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), 1);
	sched_free(s);
}
END_TEST

static const char *overwritten = "hoist/overwritten.tir";

START_TEST(store_overwritten_before_any_read_is_removed)
{
	Schedule *s = run(tu_fixture(overwritten), "sch.remove_no_op()\n", STEP_COMMITTED, NULL);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), 1);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_FOR), 1);
	sched_free(s);
}
END_TEST

static const char *read_between = "hoist/read_between.tir";

START_TEST(store_read_before_it_is_overwritten_stays)
{
	Schedule *s = run(tu_fixture(read_between), "sch.remove_no_op()\n", STEP_COMMITTED, NULL);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), 3);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "0 no-op or dead stores removed"));
	sched_free(s);
}
END_TEST


/* T.evaluate of an expression without effect, the empty loop and branch
 * it leaves and a let nothing uses are removed; a used let stays */
START_TEST(evaluates_and_what_they_leave_are_removed)
{
	TsRun t = ts_accept(&arena, tu_fixture("hoist/noop_evaluate_let_alloc.tir"),
			    "sch.remove_no_op(use_dataflow_analysis=False)\n", 8);
	const Stmt *b = sched_func(t.s)->body;
	ck_assert_int_eq(ts_count_kind(b, ST_EVAL), 0);
	ck_assert_int_eq(ts_count_kind(b, ST_FOR), 1);
	ck_assert_int_eq(ts_count_kind(b, ST_LET), 1); /* y, used by the store */
	ck_assert_int_eq(ts_count_kind(b, ST_STORE), 2);
	sched_free(t.s);
}
END_TEST

/* a store into an allocated buffer nothing reads after it is removed,
 * dataflow analysis or not; a parameter's store and an allocated cell
 * read in a later iteration stay (near misses) */
START_TEST(store_into_a_temporary_nothing_reads_later_is_removed)
{
	TsRun t = ts_accept(&arena, tu_fixture("hoist/noop_dead_temporary.tir"),
			    "sch.remove_no_op(use_dataflow_analysis=False)\n", 8);
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_STORE), 3);
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_FOR), 2);
	sched_free(t.s);
	t = ts_accept(&arena, tu_fixture("hoist/noop_temporary_read_next_iteration.tir"),
		      "sch.remove_no_op(use_dataflow_analysis=False)\n", 8);
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_STORE), 4);
	sched_free(t.s);
}
END_TEST

/* use_dataflow_analysis=False: a store overwritten later is not removed
 * as dead (TVM's option; the same kernel loses it with the analysis) */
START_TEST(without_dataflow_an_overwritten_store_stays)
{
	Schedule *s = run(tu_fixture(overwritten), "sch.remove_no_op(use_dataflow_analysis=False)\n",
			  STEP_COMMITTED, NULL);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), 2);
	sched_free(s);
}
END_TEST

static const char *assume_then_write = "hoist/assume_then_write.tir";

START_TEST(a_fact_invalidated_by_a_write_is_not_used)
{
	/* B[0] = 0 after B[0] = A[3] is not a no-op: the assumption about
	 * B[0] no longer holds there (seed 000's lifetime rule) */
	Schedule *s = run(tu_fixture(assume_then_write),
			  "sch.remove_no_op()\n", STEP_COMMITTED, NULL);
	char *text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, "B[0] = 0\n") != NULL, "B[0] = 0 was removed:\n%s", text);
	free(text);
	sched_free(s);
}
END_TEST

/* A case split puts one body in every case (shared subtrees): the store
 * left out of the "does it change the fact" check must be the one at the
 * target's position, not every copy of it. */
START_TEST(a_store_copied_by_a_case_split_still_invalidates_facts)
{
	TsRun t = ts_accept(&arena,
			    tu_fixture("hoist/a_store_copied_by_a_case_split_still_invalidates_facts.tir"),
			    "sch.hoist_expression(conditionals=\"boolean_expression\", loop=\"i\")\n"
			    "sch.remove_no_op()\n", 12);
	ts_has(ts_print(&arena, sched_func(t.s)), "            X[0] = 0\n");
	ck_assert(ts_has_obligation(t.r, "overcompute.no_op", VERDICT_REFUTED));
	sched_free(t.s);
}
END_TEST

/* A float converted to an integer type faults when out of range: such a
 * condition is not evaluated where the loop would not run. */
START_TEST(hoisting_a_float_to_int_cast_needs_a_nonempty_loop)
{
	TsRun t = ts_reject(&arena,
			    tu_fixture("hoist/hoisting_a_float_to_int_cast_needs_a_nonempty_loop.tir"),
			    "sch.hoist_expression(conditionals=\"if_else_stmt\", loop=\"i\")",
			    "hoist.nonempty");
	sched_free(t.s);
}
END_TEST

/* TVM's TestHoistMultiIfElseDifferentBranches: a 4 x 4 x 4 nest with
 * three levels of if (it once ran for minutes) */
/* loop= names the loop once: the first hoist makes two loops of that
 * name, and the next rounds work on those (the name was looked up again
 * and was ambiguous, issue 12 item 1). */
START_TEST(named_loop_is_followed_through_its_copies)
{
	Schedule *s = run(tu_fixture("hoist/named_loop_if_else.tir"),
			  "sch.hoist_expression(conditionals=\"if_else_stmt\", loop=\"j\")\n",
			  STEP_COMMITTED, NULL);
	char *text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, "    for i in T.serial(4):\n        if i < 2:\n            for j in"),
		      "%s", text);
	free(text);
	sched_free(s);
	/* nested: both conditions leave j, i's loop is not touched */
	s = run(tu_fixture("hoist/named_loop_nested_ifs.tir"),
		"sch.hoist_expression(conditionals=\"if_else_stmt\", loop=\"j\")\n",
		STEP_COMMITTED, NULL);
	text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, "if n > 3:\n                for j in"), "%s", text);
	ck_assert_msg(strstr(text, "    for i in T.serial(4):\n        if i < 2:"), "%s", text);
	free(text);
	sched_free(s);
}
END_TEST

START_TEST(three_deep_if_nest_is_hoisted)
{
	Schedule *s = run(tu_fixture("hoist/three_deep_if_nest.tir"), "sch.hoist_expression()\n",
			  STEP_COMMITTED, NULL);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE) > 0, 1);
	sched_free(s);
}
END_TEST

/* 40 conditions on one loop: the split into 41 cases would copy the
 * 81-statement body into each; past the output budget the call is
 * rejected, nothing built further */
START_TEST(a_case_split_past_the_size_budget_is_too_large)
{
	TsRun t = ts_reject(&arena, tu_fixture("hoist/a_case_split_past_the_size_budget_is_too_large.tir"),
			    "sch.hoist_expression(conditionals=\"boolean_expression\", loop=\"i\")",
			    "too large");
	ts_has(t.r->reason, "statements as printed");
	sched_free(t.s);
}
END_TEST

/* TVM's hoisting: an invariant condition leaves every loop it is
 * invariant in, and the value it has in each copy decides the other
 * comparisons of its variable (hoist.decided); i < 3 is not decided
 * where i < 2 is false, so it is hoisted in turn */
START_TEST(hoisted_value_decides_the_comparisons_it_implies)
{
	TsRun t = ts_accept(&arena, tu_fixture("hoist/hoist_decided_comparisons.tir"),
			    "sch.hoist_expression()\n", 8);
	ck_assert(ts_has_obligation(t.r, "hoist.decided", VERDICT_PROVEN));
	const char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "        if i < 2:\n            for j in T.serial(4):\n                A[i, j] = 0.0\n");
	ts_has(text, "        elif i < 3:\n            for j in T.serial(4):\n                A[i, j] = 2.0\n");
	ck_assert_int_eq(ts_count_kind(sched_func(t.s)->body, ST_STORE), 3);
	sched_free(t.s);
}
END_TEST

/* near miss: the loop j reaches a sequence before the `if` (TVM's
 * reached_sequential_node), so i < 2 stays inside j */
START_TEST(a_condition_after_a_sequence_stays_in_its_loop)
{
	TsRun t = ts_accept(&arena, tu_fixture("hoist/hoist_past_a_sequence.tir"),
			    "sch.hoist_expression()\n", 4);
	ts_has(t.r->note, "nothing to hoist");
	sched_free(t.s);
}
END_TEST

/* a let with an invariant value leaves the loop (x = i * n out of j);
 * y = x + j uses j and stays; let_bindings="none" hoists neither */
START_TEST(invariant_let_is_hoisted_and_a_variant_one_stays)
{
	TsRun t = ts_accept(&arena, tu_fixture("hoist/hoist_lets.tir"), "sch.hoist_expression()\n", 8);
	ts_has(ts_print(&arena, sched_func(t.s)),
	       "        x = i * n\n        for j in T.serial(4):\n            y = x + j\n");
	sched_free(t.s);
	t = ts_accept(&arena, tu_fixture("hoist/hoist_lets.tir"),
		      "sch.hoist_expression(let_bindings=\"none\")\n", 4);
	ts_has(t.r->note, "nothing to hoist");
	sched_free(t.s);
}
END_TEST

/* a condition that may fault, under an `if` that may never hold: hoisted
 * it would be evaluated where the original never does (k = -1, m = 0);
 * with k assumed in bounds it is hoisted */
START_TEST(a_nested_faulting_condition_needs_a_safe_evaluation)
{
	TsRun t = ts_reject(&arena, tu_fixture("hoist/hoist_nested_faulting_condition.tir"),
			    "sch.hoist_expression()", "hoist.nonempty refuted");
	ts_has(t.r->reason, "before loop i cannot fault");
	ck_assert_int_eq(t.r->replay, REPLAY_CONFIRMED);
	sched_free(t.s);
	t = ts_accept(&arena, tu_fixture("hoist/hoist_nested_safe_condition.tir"),
		      "sch.hoist_expression()\n", 8);
	ts_has(ts_print(&arena, sched_func(t.s)), "    if B[k] > 0:\n        for i in T.serial(4):\n");
	sched_free(t.s);
}
END_TEST

/* ---------- at scale: kernels of n statements, generated ---------- */

/* n stores B[k, 0] = A[k, 0] + k % 7; loops: each in its own loop over
 * the row; noops: each followed by the no-op B[k, 0] = B[k, 0] */
static char *generated(int n, bool loops, bool noops)
{
	StrBuf b = {0};
	sb_printf(&b, "@T.prim_func\ndef big(A: T.Buffer[(%d, 8), \"int32\"], B: T.Buffer[(%d, 8), \"int32\"]):\n",
		  n, n);
	for (int k = 0; k < n; k++) {
		if (loops)
			sb_printf(&b, "    for i in T.serial(8):\n        B[%d, i] = A[%d, i] + %d\n", k, k, k % 7);
		else
			sb_printf(&b, "    B[%d, 0] = A[%d, 0] + %d\n", k, k, k % 7);
		if (noops)
			sb_printf(&b, "    B[%d, 0] = B[%d, 0]\n", k, k);
	}
	return sb_take(&b);
}

static void at_scale(int n, bool loops, bool noops, const char *script, int stores_left)
{
	char *text = generated(n, loops, noops);
	Schedule *s = run(text, script, STEP_COMMITTED, NULL);
	free(text);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), stores_left);
	sched_free(s);
}

START_TEST(remove_no_op_on_4000_stores_keeps_each)
{
	at_scale(4000, false, false, "sch.remove_no_op()\n", 4000);
}
END_TEST

START_TEST(remove_no_op_on_4000_loops_keeps_each)
{
	at_scale(4000, true, false, "sch.remove_no_op()\n", 4000);
}
END_TEST

START_TEST(remove_no_op_removes_every_no_op_of_a_long_kernel)
{
	at_scale(500, false, true, "sch.remove_no_op()\n", 500);
}
END_TEST

START_TEST(simplify_on_4000_stores)
{
	at_scale(4000, false, false, "sch.simplify()\n", 4000);
}
END_TEST

START_TEST(simplify_on_4000_loops)
{
	at_scale(4000, true, false, "sch.simplify()\n", 4000);
}
END_TEST

Suite *suite_hoist(void)
{
	Suite *s = suite_create("hoist");
	TCase *tc = tcase_create("hoist_expression");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, invariant_branch_moves_out_of_the_loop);
	tcase_add_test(tc, branch_reading_a_buffer_the_loop_writes_stays);
	tcase_add_test(tc, hoisting_a_faulting_condition_needs_a_nonempty_loop);
	tcase_add_test(tc, case_split_lets_simplify_clear_the_interior);
	tcase_add_test(tc, case_split_happens_once_per_loop);
	tcase_add_test(tc, hoisting_a_float_to_int_cast_needs_a_nonempty_loop);
	tcase_add_test(tc, three_deep_if_nest_is_hoisted);
	tcase_add_test(tc, named_loop_is_followed_through_its_copies);
	tcase_add_test(tc, a_case_split_past_the_size_budget_is_too_large);
	tcase_add_test(tc, hoisted_value_decides_the_comparisons_it_implies);
	tcase_add_test(tc, a_condition_after_a_sequence_stays_in_its_loop);
	tcase_add_test(tc, invariant_let_is_hoisted_and_a_variant_one_stays);
	tcase_add_test(tc, a_nested_faulting_condition_needs_a_safe_evaluation);
	suite_add_tcase(s, tc);
	tc = tcase_create("reduce_loop_extents");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reduce_loop_extents_follows_seed_000);
	tcase_add_test(tc, reduce_loop_extents_with_a_symbolic_bound);
	suite_add_tcase(s, tc);
	tc = tcase_create("remove_no_op");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, store_of_an_assumed_value_is_removed);
	tcase_add_test(tc, store_overwritten_before_any_read_is_removed);
	tcase_add_test(tc, store_read_before_it_is_overwritten_stays);
	tcase_add_test(tc, a_fact_invalidated_by_a_write_is_not_used);
	tcase_add_test(tc, a_store_copied_by_a_case_split_still_invalidates_facts);
	tcase_add_test(tc, evaluates_and_what_they_leave_are_removed);
	tcase_add_test(tc, store_into_a_temporary_nothing_reads_later_is_removed);
	tcase_add_test(tc, without_dataflow_an_overwritten_store_stays);
	suite_add_tcase(s, tc);
	tc = tcase_create("at_scale");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, remove_no_op_on_4000_stores_keeps_each);
	tcase_add_test(tc, remove_no_op_on_4000_loops_keeps_each);
	tcase_add_test(tc, remove_no_op_removes_every_no_op_of_a_long_kernel);
	tcase_add_test(tc, simplify_on_4000_stores);
	tcase_add_test(tc, simplify_on_4000_loops);
	suite_add_tcase(s, tc);
	return s;
}
