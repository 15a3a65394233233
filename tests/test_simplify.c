/* tests/test_simplify.c — simplify (semantics.md 4, seed 000 "Enhancement
 * - Simplify"): the simplifier is untrusted, so every replacement e -> e'
 * is the obligation simplify.equal. Index arithmetic and scalar facts are
 * proven; a wrong candidate sent through the same machinery is refuted and
 * never applied; facts replace loads only while no write in between can
 * change them; T.assume is never simplified; structural clean-ups keep
 * behaviour. Every accepted step is compared by the interpreter. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"
#include "rewrites/schedule/steps.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static TsRun accept(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6);
}

/* The fixture after sch.simplify() (committed, and compared with the
 * original by the interpreter), printed; *r, if asked for, is the step's
 * report (both live in the arena; the schedule is freed). */
static char *simplified(const char *fixture, StepReport **r)
{
	TsRun t = accept(tu_fixture(fixture), "sch.simplify()");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	if (r)
		*r = t.r;
	sched_free(t.s);
	return text;
}

/* ---------- index arithmetic ---------- */

START_TEST(digits_of_a_split_index_simplify_to_the_loop_variables)
{
	StepReport *r;
	char *text = simplified("simplify/digits_of_a_split_index_simplify_to_the_loop_variables.tir", &r);
	ts_has(text, "B[io, ii] = A[4 * io + ii]");
	ck_assert_int_eq(ts_count_obligations(r, "simplify.equal"), 3);
	for (int i = 0; i < r->nobs; i++)
		ck_assert_int_eq(r->results[i].verdict, VERDICT_PROVEN);
}
END_TEST

START_TEST(negative_offsets_use_floor_division)
{
	/* (4 * io + ii - 4) // 4 is io - 1 for every ii in [0, 4), also at
	 * io = 0 where the numerator is negative (floor, not truncation) */
	ts_has(simplified("simplify/negative_offsets_use_floor_division.tir", NULL),
	       "B[io, ii] = A[io, ii]");
}
END_TEST

START_TEST(conditions_decided_by_loop_ranges_are_folded_away)
{
	StepReport *r;
	char *text = simplified("simplify/conditions_decided_by_loop_ranges_are_folded_away.tir", &r);
	ts_lacks(text, "if");
	ts_lacks(text, "= 7");
	ts_has(r->note, "structural clean-up");
}
END_TEST

/* ---------- the same machinery refuses wrong candidates ---------- */

static const char shifted[] = "simplify/shifted.tir";

/* Propose `e'` for the load index of the store in `shifted`. */
static bool propose(Schedule *s, Expr *(*make)(Arena *, Var *), bool *unchanged)
{
	DiagList d;
	diag_init(&d, &arena);
	Compound k;
	sched_compound_begin(s, &k, "simplify(proposed)", (Span){0}, &d);
	Func *f = sched_compound_func(&k);
	Stmt *store = f->body->u.loop.body;
	ck_assert_int_eq(store->kind, ST_STORE);
	StmtCtx ctx;
	ck_assert(an_find_stmt(&arena, f, store, &ctx));
	/* slot 1: the stored value A[...]; replace the whole load */
	Expr *old = store->u.store.value;
	Expr *idx = make(&arena, f->body->u.loop.var);
	Expr *new = ir_load(&arena, old->u.load.buf, 1, &idx, (Span){0});
	bool ok = sched_simplify_replace(&k, "simplify(proposed)", &ctx, 1, old, new, NULL);
	sched_compound_end(&k, STEP_COMMITTED, NULL);
	*unchanged = sched_func(s) == f;
	return ok;
}

static Expr *right_index(Arena *a, Var *i) /* i + 1 */
{
	return ir_add(a, ir_varref(a, i, (Span){0}), ir_int32(a, 1));
}

static Expr *off_by_one_index(Arena *a, Var *i) /* i */
{
	return ir_varref(a, i, (Span){0});
}

static Expr *truncating_index(Arena *a, Var *i) /* (i - 3) // 4 * 4 + 4 */
{
	Expr *x = ir_sub(a, ir_varref(a, i, (Span){0}), ir_int32(a, 3));
	Expr *q = ir_bin(a, OP_FLOORDIV, x, ir_int32(a, 4), (Span){0});
	return ir_add(a, ir_mul(a, q, ir_int32(a, 4)), ir_int32(a, 4));
}

START_TEST(wrong_candidates_are_refuted_and_never_applied)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(shifted));
	Expr *(*wrong[])(Arena *, Var *) = {off_by_one_index, truncating_index};
	for (size_t w = 0; w < sizeof wrong / sizeof *wrong; w++) {
		Schedule *s = tu_schedule(&arena, m);
		bool unchanged;
		ck_assert(!propose(s, wrong[w], &unchanged));
		ck_assert(unchanged);
		StepReport *r = tu_last(s);
		ck_assert(ts_has_obligation(r, "simplify.equal", VERDICT_REFUTED));
		/* the same replacement taken without its proof is caught by
		 * the interpreter: the check can fail */
		Func *f = m->funcs[0];
		Stmt *store = f->body->u.loop.body;
		Expr *idx = wrong[w](&arena, f->body->u.loop.var);
		Stmt *bad = ir_store(&arena, store->u.store.buf, store->u.store.nidx, store->u.store.idx,
				     ir_load(&arena, store->u.store.value->u.load.buf, 1, &idx, (Span){0}),
				     store->span);
		Func *g = an_with_body(&arena, f, ir_for(&arena, f->body->u.loop.var, f->body->u.loop.min,
							 f->body->u.loop.extent, FOR_SERIAL, bad,
							 f->body->span));
		char *report = NULL;
		ck_assert(!tu_equiv(f, g, 4, &report));
		free(report);
		sched_free(s);
	}
	Schedule *s = tu_schedule(&arena, m);
	bool unchanged;
	ck_assert(propose(s, right_index, &unchanged));
	ck_assert(!unchanged);
	ts_has(ts_print(&arena, sched_func(s)), "B[i] = A[i + 1]");
	tu_assert_equiv(m->funcs[0], sched_func(s), 6);
	sched_free(s);
}
END_TEST

START_TEST(the_simplifiers_own_wrong_candidates_are_refuted)
{
	/* arith.c folds x - x to 0 even when x is T.undef(): two undefs are
	 * two values, the check refuses it; 0 * undef is 0 and goes through */
	StepReport *r;
	char *text = simplified("simplify/the_simplifiers_own_wrong_candidates_are_refuted.tir", &r);
	ck_assert(ts_has_obligation(r, "simplify.equal", VERDICT_REFUTED));
	ts_has(text, "T.undef(dtype=\"int32\") - T.undef(dtype=\"int32\") + A[i]");
	ts_has(text, "A[i] = 1\n");
	ts_has(r->note, "1 not proven (kept)");
}
END_TEST

/* ---------- facts ---------- */

START_TEST(scalar_assumption_simplifies_a_division)
{
	char *text = simplified("simplify/scalar_assumption_simplifies_a_division.tir", NULL);
	ts_has(text, "A[i] = 0");
	ts_has(text, "T.assume(n >= 0 and n < 8)");
	/* without the assumption nothing is proven */
	ts_has(simplified("simplify/scalar_assumption_simplifies_a_division-without_assumption.tir", NULL),
	       "A[i] = n // 8");
}
END_TEST

START_TEST(assumption_on_a_cell_is_used_until_the_cell_is_written)
{
	char *text = simplified("simplify/assumption_on_a_cell_is_used_until_the_cell_is_written.tir", NULL);
	ts_has(text, "C[0] = A[0]\n");
	/* after the write, B[0] is what the store wrote, not the assumption */
	ts_has(text, "C[1] = 6\n");
}
END_TEST

START_TEST(seed_example_loads_after_a_write_keep_their_value)
{
	char *text = simplified("simplify/seed_example_loads_after_a_write_keep_their_value.tir", NULL);
	/* B[0] inside the loop was overwritten since the assumption */
	ts_has(text, "B[0] = B[0] + A[i]");
	ts_has(text, "T.assume(B[0] == 0)");
}
END_TEST

START_TEST(a_fact_from_a_later_iteration_is_not_used)
{
	/* Z[0] is 0 when the loop starts, but the loop writes it */
	ts_has(simplified("simplify/a_fact_from_a_later_iteration_is_not_used.tir", NULL),
	       "C[i] = Z[0] + 1");
}
END_TEST

START_TEST(producer_values_replace_loads_of_their_cells)
{
	ts_has(simplified("simplify/producer_values_replace_loads_of_their_cells.tir", NULL),
	       "C[i] = 3 + A[i]");
}
END_TEST

START_TEST(assumptions_are_never_simplified)
{
	char *text = simplified("simplify/assumptions_are_never_simplified.tir", NULL);
	ts_has(text, "T.assume(n >= 0 and n < 8 and n // 8 == 0 and 1 + 1 == 2)");
	ts_has(text, "T.assume(A[i] == A[i] + 0)");
}
END_TEST

/* ---------- structural clean-ups ---------- */

START_TEST(clean_ups_remove_only_what_does_nothing)
{
	char *text = simplified("simplify/clean_ups_remove_only_what_does_nothing.tir", NULL);
	ts_lacks(text, "B[i] = B[i]");
	ts_lacks(text, "A[i] = 2");
	ts_lacks(text, "for j");
	ts_has(text, "B[i] = 3"); /* a real else part stays */
}
END_TEST

/* X[X[0]] = 1 moves X[0] itself: X[X[0]] afterwards names another cell,
 * so the store gives no fact for it. */
START_TEST(a_store_whose_index_reads_its_buffer_gives_no_fact)
{
	TsRun t = ts_accept(&arena,
			    tu_fixture("simplify/a_store_whose_index_reads_its_buffer_gives_no_fact.tir"),
			    "sch.simplify()", 40);
	ts_has(ts_print(&arena, sched_func(t.s)), "B[0] = X[X[0]]");
	sched_free(t.s);
}
END_TEST

/* ---------- decisions (simplify.decide) ---------- */

/* The fixture after `script`, printed (committed and compared with the
 * original by the interpreter); *r the step's report. */
static char *after_script(const char *fixture, const char *script, StepReport **r)
{
	TsRun t = accept(tu_fixture(fixture), script);
	char *text = ts_print(&arena, ts_func(&t, NULL));
	if (r)
		*r = t.r;
	sched_free(t.s);
	return text;
}

/* TVM's tir.Simplify with its default options (all off). */
static const char tvm_defaults[] =
	"sch.simplify(transitively_prove_inequalities=False, convert_boolean_to_and_of_ors=False, "
	"apply_constraints_to_boolean_branches=False, propagate_knowns_to_prove_conditional=False, "
	"propagate_knowns_to_simplify_expressions=False)";

static int proven_decisions(const StepReport *r)
{
	int n = 0;
	for (int i = 0; i < r->nobs; i++)
		n += strcmp(r->obs[i]->kind, "simplify.decide") == 0 && r->results[i].verdict == VERDICT_PROVEN;
	return n;
}

START_TEST(an_enclosing_if_decides_a_repeated_or_negated_condition)
{
	StepReport *r;
	char *text = simplified("simplify/an_enclosing_if_decides_a_repeated_condition.tir", &r);
	ts_has(text, "        if i == n:\n            A[i] = 0\n");
	ts_lacks(text, "A[i] = 1");
	ts_has(text, "if i == m:\n                A[i] = 2"); /* i == n says nothing of m */
	ck_assert_int_eq(proven_decisions(r), 2);
	/* TVM's defaults decide them too: the literal constraint is over the
	 * condition's own variables */
	text = after_script("simplify/an_enclosing_if_decides_a_repeated_condition.tir", tvm_defaults, NULL);
	ts_lacks(text, "A[i] = 1");
	ts_has(text, "if i == m:");
}
END_TEST

START_TEST(an_operand_of_and_is_decided_by_the_other)
{
	char *text = simplified("simplify/an_operand_decided_by_the_other.tir", NULL);
	ts_has(text, "A[0] = n < 5\n");
	ts_has(text, "A[1] = n < 5 and n > 2\n"); /* neither decides the other */
	/* apply_constraints_to_boolean_branches=False: no operand is context */
	ts_has(after_script("simplify/an_operand_decided_by_the_other.tir", tvm_defaults, NULL),
	       "A[0] = n < 5 and n < 10\n");
}
END_TEST

START_TEST(transitive_facts_decide_only_when_allowed)
{
	ts_has(simplified("simplify/a_transitive_comparison.tir", NULL), "A[0] = True");
	ts_has(after_script("simplify/a_transitive_comparison.tir", tvm_defaults, NULL), "A[0] = i < k");
}
END_TEST

START_TEST(a_comparison_whose_sum_may_wrap_is_kept)
{
	StepReport *r;
	char *text = simplified("simplify/a_comparison_that_wraps.tir", &r);
	/* j + 1 wraps at j = 2^31 - 1: i < j does not give i < j + 1 */
	ts_has(text, "A[0] = i < j + 1");
	/* with j < 100 it cannot wrap */
	ts_has(text, "A[1] = True");
	/* the one decision made is A[1]'s; the refuted proposal for A[0]
	 * was asked quietly and is not in the report */
	ck_assert_int_eq(proven_decisions(r), 1);
	ck_assert_int_eq(ts_count_obligations(r, "simplify.decide"), 1);
}
END_TEST

START_TEST(a_stored_value_decides_a_later_condition_outside_loops)
{
	char *text = simplified("simplify/a_stored_value_decides_a_later_condition.tir", NULL);
	ts_lacks(text, "if");
	ts_has(text, "A[0] = 42");
	/* in a loop, the body's own earlier iterations wrote B[0] */
	ts_has(simplified("simplify/a_value_the_loop_overwrites_decides_nothing.tir", NULL), "if B[0] < 10:");
}
END_TEST

START_TEST(a_value_from_before_a_loop_holds_until_an_iteration_writes_it)
{
	StepReport *r;
	char *text = after_script("simplify/a_pre_loop_value_until_the_loop_writes_it.tir",
				  "sch.simplify(propagate_knowns_to_prove_conditional=True)", &r);
	/* iteration i reads B[i], which only iteration i writes, after */
	ts_lacks(text, "if B[i] < 10");
	ck_assert_int_eq(ts_count_obligations(r, "simplify.unwritten"), 1);
	/* iteration i - 1 wrote C[i] before iteration i reads it */
	ts_has(text, "if C[i] < 10:");
}
END_TEST

START_TEST(a_min_is_replaced_by_the_operand_its_context_selects)
{
	char *text = simplified("simplify/a_min_decided_by_its_context.tir", NULL);
	ts_has(text, "A[i] = 1");
	ts_has(text, "A[T.min(i, n + 20)] = 2"); /* n + 20 may wrap below i */
}
END_TEST

START_TEST(an_if_then_else_arm_knows_its_condition)
{
	/* TVM's defaults: the inner condition in the else arm is False there */
	ts_has(after_script("simplify/an_if_then_else_arm_knows_its_condition.tir", tvm_defaults, NULL),
	       "A[i] = T.if_then_else(i < n, 0, i)");
}
END_TEST

START_TEST(float_literals_fold_and_identities_follow_the_float_mode)
{
	ts_lacks(simplified("simplify/float_literals_fold.tir", NULL), "A[0]");
	/* ieee: 5.0 - 5.0 is still 0.0, but A[0] + 0.0 is not A[0] at -0.0 */
	ts_has(after_script("simplify/float_literals_fold.tir", "sch.float_mode(\"ieee\")\nsch.simplify()", NULL),
	       "A[0] = A[0] + 0.0");
}
END_TEST

START_TEST(tvm_options_are_keywords_with_boolean_values)
{
	ts_bad_input(&arena, tu_fixture("simplify/float_literals_fold.tir"),
		     "sch.simplify(transitively_prove_inequalities=1)",
		     "transitively_prove_inequalities must be True or False");
	ts_bad_input(&arena, tu_fixture("simplify/float_literals_fold.tir"), "sch.simplify(True)",
		     "too many arguments");
}
END_TEST

Suite *suite_simplify(void)
{
	Suite *s = suite_create("simplify");
	struct {
		const char *name;
		const TTest *tests[8];
	} cases[] = {
		{"indices",
		 {digits_of_a_split_index_simplify_to_the_loop_variables, negative_offsets_use_floor_division,
		  conditions_decided_by_loop_ranges_are_folded_away}},
		{"validation",
		 {wrong_candidates_are_refuted_and_never_applied,
		  the_simplifiers_own_wrong_candidates_are_refuted}},
		{"facts",
		 {scalar_assumption_simplifies_a_division, assumption_on_a_cell_is_used_until_the_cell_is_written,
		  seed_example_loads_after_a_write_keep_their_value, a_fact_from_a_later_iteration_is_not_used,
		  producer_values_replace_loads_of_their_cells, assumptions_are_never_simplified,
		  a_store_whose_index_reads_its_buffer_gives_no_fact}},
		{"clean_ups", {clean_ups_remove_only_what_does_nothing}},
		{"decisions",
		 {an_enclosing_if_decides_a_repeated_or_negated_condition, an_operand_of_and_is_decided_by_the_other,
		  transitive_facts_decide_only_when_allowed, a_comparison_whose_sum_may_wrap_is_kept,
		  a_stored_value_decides_a_later_condition_outside_loops,
		  a_min_is_replaced_by_the_operand_its_context_selects,
		  a_value_from_before_a_loop_holds_until_an_iteration_writes_it}},
		{"decision_forms",
		 {an_if_then_else_arm_knows_its_condition, float_literals_fold_and_identities_follow_the_float_mode,
		  tvm_options_are_keywords_with_boolean_values}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 8 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
