/* tests/test_merge.c — merge_adjacent_loops, fission and merge_conditionals
 * through the schedule and the C API. Every accepted step is checked
 * against the original with the interpreter; every rejection checks its
 * reason and, where the solver refuted an obligation, that the replay
 * confirms it (seed 000: the stencil merge and the data-dependent
 * conditional merge must be rejected with a counterexample). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* The suite's checks over the shared ones (testsched.h): eight trials,
 * and every accepted result must print and parse back. */
static Schedule *accept(const char *kernel, const char *script)
{
	TsRun t = ts_accept(&arena, kernel, script, 8);
	ts_assert_reparses(&arena, sched_func(t.s));
	return t.s;
}

/* Rejected with `why` in the reason; the previous IR stays. */
static StepReport *reject(const char *kernel, const char *script, const char *why)
{
	return ts_rejected(&arena, kernel, script, why);
}

/* A rejection by a refuted obligation whose replay shows the difference. */
static StepReport *refuted(const char *kernel, const char *script, const char *kind)
{
	return ts_refuted(&arena, kernel, script, kind);
}

/* Bad input (exit 2): the diagnostics mention `why`. */
static void bad_input(const char *kernel, const char *script, const char *why)
{
	ts_bad_input(&arena, kernel, script, why);
}

/* ---------- merge_adjacent_loops ---------- */

static const char elementwise[] = "merge/elementwise.tir";

static const char stencil[] = "merge/stencil.tir";

START_TEST(merge_elementwise_loops_is_accepted)
{
	Schedule *s = accept(tu_fixture(elementwise), "sch.merge_adjacent_loops(\"i#1\", \"i#2\")");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_FOR), 1);
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_STORE), 2);
	sched_free(s);
}
END_TEST

START_TEST(merge_second_loop_reading_earlier_iterations_is_accepted)
{
	const char *k = tu_fixture("merge/merge_second_loop_reading_earlier_iterations_is_accepted.tir");
	sched_free(accept(k, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")"));
}
END_TEST

START_TEST(merge_stencil_is_rejected_with_confirmed_replay)
{
	StepReport *r = refuted(tu_fixture(stencil), "sch.merge_adjacent_loops(\"i#1\", \"i#2\")",
				"merge.no_conflict");
	/* the two iterations: i of the first loop after j = i - 1 of the second */
	ck_assert_ptr_nonnull(strstr(r->counterexample, "i_1 = "));
	ck_assert_ptr_nonnull(strstr(r->counterexample, "i_2 = "));
	ck_assert_ptr_nonnull(strstr(r->reason, "read of A at 7:38"));
}
END_TEST

START_TEST(merge_symbolic_domains_need_a_proof)
{
	static const char k[] =
		"@T.prim_func\n"
		"def f(a: T.handle, b: T.handle, n: T.int32, m: T.int32):\n"
		"    A = T.match_buffer(a, (64,), \"int32\")\n"
		"    B = T.match_buffer(b, (64,), \"int32\")\n"
		"    T.assume(0 <= n and n <= 64 and 0 <= m and m <= 64%s)\n"
		"    for i in T.serial(n):\n"
		"        A[i] = i\n"
		"    for j in T.serial(m):\n"
		"        B[j] = 2 * j\n";
	char text[1024];
	snprintf(text, sizeof text, k, " and n == m");
	Schedule *s = accept(text, "sch.merge_adjacent_loops(\"i\", \"j\")");
	ck_assert_str_eq(tu_last(s)->obs[0]->kind, "merge.same_domain");
	ck_assert_int_eq(tu_last(s)->results[0].verdict, VERDICT_PROVEN);
	sched_free(s);
	snprintf(text, sizeof text, k, "");
	refuted(text, "sch.merge_adjacent_loops(\"i\", \"j\")", "merge.same_domain");
}
END_TEST

START_TEST(merge_reductions_commute_except_ieee_floats)
{
	const char *ints = tu_fixture("merge/merge_reductions_commute_except_ieee_floats-ints.tir");
	sched_free(accept(ints, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")"));
	const char *floats = tu_fixture("merge/merge_reductions_commute_except_ieee_floats-floats.tir");
	sched_free(accept(floats, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")"));
	StepReport *r = reject(floats, "sch.float_mode(\"ieee\")\nsch.merge_adjacent_loops(\"i#1\", \"i#2\")",
			       "merge.no_conflict");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	/* a reduction update and a plain read of the same cell still conflict */
	const char *mixed = tu_fixture("merge/merge_reductions_commute_except_ieee_floats-mixed.tir");
	refuted(mixed, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")", "merge.no_conflict");
}
END_TEST

START_TEST(merge_of_parallel_loops_proves_the_label_again)
{
	const char *ok = tu_fixture("merge/merge_of_parallel_loops_proves_the_label_again-ok.tir");
	Schedule *s = accept(ok, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")");
	const Stmt *l = sched_func(s)->body;
	ck_assert_int_eq(l->kind, ST_FOR);
	ck_assert_int_eq(l->u.loop.kind, FOR_PARALLEL);
	sched_free(s);
	/* merged, iteration i reads A[i - 1], which iteration i - 1 writes:
	 * serially fine, but a race once parallel */
	const char *racy = tu_fixture("merge/merge_of_parallel_loops_proves_the_label_again-racy.tir");
	StepReport *r = reject(racy, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")", "parallel.no_race");
	ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
}
END_TEST

/* A serial and a parallel loop merge into a serial loop (the label is
 * dropped, never extended to the other body without a proof). */
START_TEST(merge_of_different_kinds_is_serial)
{
	const char *kinds = tu_fixture("merge/merge_of_different_kinds_is_serial.tir");
	Schedule *s = accept(kinds, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")");
	const Stmt *l = sched_func(s)->body;
	ck_assert_int_eq(l->kind, ST_FOR);
	ck_assert_int_eq(l->u.loop.kind, FOR_SERIAL);
	sched_free(s);
	/* parallel then vectorized: serial too */
	const char *pv = tu_fixture("merge/merge_of_different_kinds_is_serial-par_first.tir");
	s = accept(pv, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")");
	ck_assert_int_eq(sched_func(s)->body->u.loop.kind, FOR_SERIAL);
	sched_free(s);
}
END_TEST

START_TEST(merge_preconditions_and_bad_names)
{
	const char *apart = tu_fixture("merge/merge_preconditions_and_bad_names-apart.tir");
	reject(apart, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")", "does not directly follow");
	/* the order matters: the second loop follows the first */
	reject(tu_fixture(elementwise),
	       "sch.merge_adjacent_loops(\"i#2\", \"i#1\")", "does not directly follow");
	const char *ranged = tu_fixture("merge/merge_preconditions_and_bad_names-ranged.tir");
	reject(ranged, "sch.merge_adjacent_loops(\"i\", \"j\")", "not supported");
	/* entry facts (a layout's padding contract) stay entry facts */
	const char *facts = tu_fixture("merge/merge_preconditions_and_bad_names-facts.tir");
	reject(facts, "sch.merge_adjacent_loops(\"t\", \"i\")", "loop 't' holds only T.assume facts");
	/* the merged body would use the first loop's int32 variable for j */
	const char *dtypes = tu_fixture("merge/merge_preconditions_and_bad_names-dtypes.tir");
	reject(dtypes, "sch.merge_adjacent_loops(\"i\", \"j\")", "have different dtypes");
	bad_input(tu_fixture(elementwise),
		  "sch.merge_adjacent_loops(\"i#1\", \"i#1\")", "same loop");
	bad_input(tu_fixture(elementwise),
		  "sch.merge_adjacent_loops(\"i#1\", \"k\")", "no loop 'k'");
	bad_input(tu_fixture(elementwise),
		  "sch.merge_adjacent_loops(\"i#1\")", "expected two adjacent loops");
}
END_TEST

/* S1 ends in a let: the merged body puts S2 inside it, as the printed text
 * reads (the reparse check in accept). */
START_TEST(merge_after_a_let_keeps_the_printed_form)
{
	const char *k = tu_fixture("merge/merge_after_a_let_keeps_the_printed_form.tir");
	sched_free(accept(k, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")"));
}
END_TEST

/* Seed 000, "Explicitly write next operator's desired default": the
 * producer's two nests merge level by level, then the branches. */
START_TEST(merge_without_names_merges_nests_level_by_level)
{
	const char *k = tu_fixture("merge/merge_without_names_merges_nests_level_by_level.tir");
	Schedule *s = accept(k, "sch.merge_adjacent_loops()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_FOR), 2);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "2 pairs of loops merged"));
	sched_free(s);
	s = accept(k, "sch.merge_adjacent_loops()\nsch.merge_conditionals()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	sched_free(s);
	/* nothing to merge but a failing pair: rejected with its reason */
	refuted(tu_fixture(stencil), "sch.merge_adjacent_loops()", "merge.no_conflict");
}
END_TEST

/* ---------- fission ---------- */

static const char three[] = "merge/three.tir";

START_TEST(fission_of_independent_parts_is_accepted)
{
	for (int k = 0; k < 2; k++) {
		char script[64];
		snprintf(script, sizeof script, "sch.fission(\"i\", after=%d)", k);
		Schedule *s = accept(tu_fixture(three), script);
		ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_FOR), 2);
		sched_free(s);
	}
	/* reading ahead of the writes is fine too: the reads see inputs both ways */
	const char *ahead = tu_fixture("merge/fission_of_independent_parts_is_accepted.tir");
	sched_free(accept(ahead, "sch.fission(\"i\", after=0)"));
}
END_TEST

START_TEST(fission_rejects_a_read_of_an_earlier_iterations_write)
{
	const char *k = tu_fixture("merge/fission_rejects_a_read_of_an_earlier_iterations_write.tir");
	StepReport *r = refuted(k, "sch.fission(\"i\", after=0)", "fission.no_conflict");
	ck_assert_ptr_nonnull(strstr(r->reason, "read of A at 4:16"));
}
END_TEST

START_TEST(fission_then_merge_gives_the_original_back)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(three));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.fission(\"i\", after=0)\nsch.merge_adjacent_loops(\"i#1\", \"i#2\")"),
			 STEP_COMMITTED);
	ck_assert(ir_func_equal(sched_func(s), m->funcs[0]));
	sched_free(s);
}
END_TEST

START_TEST(fission_keeps_loop_kinds_and_checks_arguments)
{
	const char *par = tu_fixture("merge/fission_keeps_loop_kinds_and_checks_arguments-par.tir");
	Schedule *s = accept(par, "sch.fission(\"i\", after=0)");
	const Stmt *b = sched_func(s)->body;
	ck_assert_int_eq(b->kind, ST_SEQ);
	ck_assert_int_eq(b->u.seq.items[0]->u.loop.kind, FOR_PARALLEL);
	ck_assert_int_eq(b->u.seq.items[1]->u.loop.kind, FOR_PARALLEL);
	sched_free(s);
	bad_input(tu_fixture(three), "sch.fission(\"i\", after=2)", "after=2");
	bad_input(tu_fixture(three), "sch.fission(\"i\", after=-1)", "after=-1");
	bad_input(tu_fixture(three), "sch.fission(\"i\")", "after=K");
	const char *one = tu_fixture("merge/fission_keeps_loop_kinds_and_checks_arguments-one.tir");
	reject(one, "sch.fission(\"i\", after=0)", "single statement");
	const char *ranged = tu_fixture("merge/fission_keeps_loop_kinds_and_checks_arguments-ranged.tir");
	reject(ranged, "sch.fission(\"i\", after=0)", "not supported");
}
END_TEST

/* ---------- merge_conditionals ---------- */

START_TEST(identical_conditions_are_merged)
{
	const char *k = tu_fixture("merge/identical_conditions_are_merged.tir");
	Schedule *s = accept(k, "sch.merge_conditionals()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	ck_assert_str_eq(tu_last(s)->obs[0]->kind, "merge_conditionals.identical");
	sched_free(s);
}
END_TEST

START_TEST(complementary_conditions_are_merged)
{
	const char *k = tu_fixture("merge/complementary_conditions_are_merged.tir");
	Schedule *s = accept(k, "sch.merge_conditionals()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	/* the then part of the merged if holds the second if's else part */
	const Stmt *loop = sched_func(s)->body->u.loop.body;
	const Stmt *merged = loop->u.loop.body;
	ck_assert_int_eq(merged->kind, ST_IF);
	const Stmt *second = merged->u.cond.then_s->u.seq.items[1];
	ck_assert_double_eq(second->u.store.value->u.fval, 3.0);
	sched_free(s);
	/* `c` then `not c`, no else parts: then and else parts swap in */
	const char *neg = tu_fixture("merge/complementary_conditions_are_merged-neg.tir");
	s = accept(neg, "sch.merge_conditionals()");
	ck_assert_int_eq(tu_last(s)->nobs, 2);
	ck_assert_str_eq(tu_last(s)->obs[0]->kind, "merge_conditionals.complementary");
	sched_free(s);
}
END_TEST

/* Seed 000: "Data-dependent conditional, may not be merged". */
START_TEST(data_dependent_conditions_are_rejected_with_confirmed_replay)
{
	const char *k = tu_fixture("merge/data_dependent_conditions_are_rejected_with_confirmed_replay.tir");
	StepReport *r = refuted(k, "sch.merge_conditionals()", "merge_conditionals.identical");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "cells: A["));
	ck_assert_ptr_nonnull(strstr(r->reason, "after the then part of the first if"));
	/* in ieee mode too */
	refuted(k, "sch.float_mode(\"ieee\")\nsch.merge_conditionals()", "merge_conditionals.identical");
}
END_TEST

/* The condition reads a buffer the first if writes, but the write keeps
 * it true: proven in the state after the first if. */
START_TEST(condition_preserved_by_the_first_if_is_merged)
{
	const char *k = tu_fixture("merge/condition_preserved_by_the_first_if_is_merged.tir");
	/* the second store hits A[i] when i == 15 - i: never for integers */
	Schedule *s = accept(k, "sch.merge_conditionals()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	sched_free(s);
	/* a let and a nested branch on the way (float32 in real mode: with
	 * int32, A[i] + 1 and A[i] * 2 wrap and can turn the sign) */
	const char *let = tu_fixture("merge/condition_preserved_by_the_first_if_is_merged-let.tir");
	sched_free(accept(let, "sch.merge_conditionals()"));
	/* the same with a store that can make the condition false */
	const char *breaks = tu_fixture("merge/condition_preserved_by_the_first_if_is_merged-breaks.tir");
	refuted(breaks, "sch.merge_conditionals()", "merge_conditionals.identical");
	/* and integers that wrap: A[i] > 0 does not keep A[i] + 1 > 0 */
	const char *wraps = tu_fixture("merge/condition_preserved_by_the_first_if_is_merged-wraps.tir");
	StepReport *r = refuted(wraps, "sch.merge_conditionals()", "merge_conditionals.identical");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "2147483647"));
}
END_TEST

START_TEST(loop_writing_the_condition_is_not_supported)
{
	const char *k = tu_fixture("merge/loop_writing_the_condition_is_not_supported.tir");
	/* the first pair merges (the condition reads no buffer); the merged
	 * if and the third stay apart: the loop writes A, which it reads */
	Schedule *s = accept(k, "sch.merge_conditionals()");
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "not supported"));
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 2);
	sched_free(s);
	reject(k, "sch.merge_conditionals(strict=True)", "not supported");
	const char *only = tu_fixture("merge/loop_writing_the_condition_is_not_supported-only.tir");
	reject(only, "sch.merge_conditionals()", "the state after a loop is not modelled");
	/* a loop that writes other buffers is fine */
	const char *other = tu_fixture("merge/loop_writing_the_condition_is_not_supported-other.tir");
	sched_free(accept(other, "sch.merge_conditionals()"));
}
END_TEST

START_TEST(merge_conditionals_scope_and_arguments)
{
	const char *k = tu_fixture("merge/merge_conditionals_scope_and_arguments.tir");
	Schedule *s = accept(k, "sch.merge_conditionals(block=\"b\")");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 3);
	sched_free(s);
	s = accept(k, "sch.merge_conditionals()");
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 2);
	sched_free(s);
	const char *none = tu_fixture("merge/merge_conditionals_scope_and_arguments-none.tir");
	s = accept(none, "sch.merge_conditionals()");
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "no adjacent if statements"));
	sched_free(s);
	bad_input(k, "sch.merge_conditionals(block=\"nope\")", "no block 'nope'");
	bad_input(k, "sch.merge_conditionals(\"b\")", "too many arguments (it takes 0 by position)");
	bad_input(k, "sch.merge_conditionals(strict=1)", "True or False");
}
END_TEST

/* ---------- the C API ---------- */

START_TEST(api_merge_fission_and_conditionals)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "k.tir", tu_fixture(three));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_fission(s, "i", 0), VS_OK);
	ck_assert_int_eq(vs_merge_adjacent_loops(s, "i#1", "i#2"), VS_OK);
	ck_assert_int_eq(vs_fission(s, "i", 7), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "after=7"));
	ck_assert_int_eq(vs_fission(s, NULL, 0), VS_BAD_INPUT);
	ck_assert_int_eq(vs_merge_adjacent_loops(s, "i", NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_merge_adjacent_loops(s, NULL, NULL), VS_OK); /* nothing to merge */
	ck_assert_int_eq(vs_merge_conditionals(s, NULL, false), VS_OK);
	ck_assert_int_eq(vs_merge_conditionals(s, "nope", false), VS_BAD_INPUT);
	char *report = NULL;
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 8, 5, &report), VS_OK);
	free(report);
	vs_schedule_free(s);

	m = vs_parse_string(ctx, "s.tir", tu_fixture(stencil));
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_merge_adjacent_loops(s, "i#1", "i#2"), VS_REJECTED);
	const vs_report *r = vs_last_report(s);
	ck_assert_str_eq(vs_report_replay(r), "confirmed");
	ck_assert_ptr_nonnull(strstr(vs_report_reason(r), "merge.no_conflict"));
	vs_schedule_free(s);

	const char *dd = tu_fixture("merge/api_merge_fission_and_conditionals.tir");
	m = vs_parse_string(ctx, "d.tir", dd);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_merge_conditionals(s, NULL, true), VS_REJECTED);
	ck_assert_str_eq(vs_report_replay(vs_last_report(s)), "confirmed");
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "merge_conditionals.identical"));
	vs_schedule_free(s);
	vs_context_free(ctx);
}
END_TEST

Suite *suite_merge(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("merge_adjacent_loops");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, merge_elementwise_loops_is_accepted);
	tcase_add_test(tc, merge_second_loop_reading_earlier_iterations_is_accepted);
	tcase_add_test(tc, merge_stencil_is_rejected_with_confirmed_replay);
	tcase_add_test(tc, merge_symbolic_domains_need_a_proof);
	tcase_add_test(tc, merge_reductions_commute_except_ieee_floats);
	tcase_add_test(tc, merge_of_parallel_loops_proves_the_label_again);
	tcase_add_test(tc, merge_preconditions_and_bad_names);
	tcase_add_test(tc, merge_of_different_kinds_is_serial);
	tcase_add_test(tc, merge_after_a_let_keeps_the_printed_form);
	tcase_add_test(tc, merge_without_names_merges_nests_level_by_level);
	suite_add_tcase(s, tc);
	tc = tcase_create("fission");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fission_of_independent_parts_is_accepted);
	tcase_add_test(tc, fission_rejects_a_read_of_an_earlier_iterations_write);
	tcase_add_test(tc, fission_then_merge_gives_the_original_back);
	tcase_add_test(tc, fission_keeps_loop_kinds_and_checks_arguments);
	suite_add_tcase(s, tc);
	tc = tcase_create("merge_conditionals");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, identical_conditions_are_merged);
	tcase_add_test(tc, complementary_conditions_are_merged);
	tcase_add_test(tc, data_dependent_conditions_are_rejected_with_confirmed_replay);
	tcase_add_test(tc, condition_preserved_by_the_first_if_is_merged);
	tcase_add_test(tc, loop_writing_the_condition_is_not_supported);
	tcase_add_test(tc, merge_conditionals_scope_and_arguments);
	suite_add_tcase(s, tc);
	tc = tcase_create("api");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, api_merge_fission_and_conditionals);
	suite_add_tcase(s, tc);
	return s;
}
