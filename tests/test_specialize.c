/* tests/test_specialize.c — specialize(var, value) (TVM's
 * PrimFunc.specialize on one size): the value replaces the size in
 * shapes, bounds, block domains, declared regions and expressions, with
 * the arithmetic folded; the parameter stays, pinned by an entry
 * T.assume; later steps are proven on the constants. Rejections: a fact
 * that contradicts the value (refuted, replay not possible by design), a
 * value outside the dtype, a name that is no size, a negative shape; bad
 * input: no such parameter. The contract: the interpreter refuses another
 * value, the compiled kernel returns VS_KERNEL_ASSUME_FAILED before
 * writing anything. TVM's test_tir_specialize cases are in
 * tests/data/tvm/specialize_* (suite tvm). Every accepted step is checked
 * against the original by the interpreter at the specialized value. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static TsRun accept(const char *fixture, const char *script)
{
	return ts_accept(&arena, tu_fixture(fixture), script, 6);
}

/* ---------- accepted ---------- */

START_TEST(size_is_substituted_and_pinned)
{
	TsRun t = accept("specialize/matmul.tir", "sch.specialize(var=\"n\", value=16)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_has(ir, "A = T.match_buffer(a, (m, 16), \"float32\")");
	ts_has(ir, "for i, j, k in T.grid(m, m, 16):");
	ts_has(ir, "T.assume(n == 16)");
	/* the fact on n is proven at 16 and goes: the new one implies it */
	ts_lacks(ir, "n % 8");
	ck_assert(ts_has_obligation(t.r, "specialize.facts", VERDICT_PROVEN));
	ts_has(t.r->note, "n = 16: 4 uses replaced, 2 buffer shapes, 1 fact on n dropped");
	/* the parameter stays: the calling convention does not change */
	ck_assert_int_eq(ts_func(&t, NULL)->nparams, t.before->funcs[0]->nparams);
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	sched_free(t.s);
}
END_TEST

START_TEST(arithmetic_on_the_size_is_folded)
{
	/* TVM's test_specialize_with_const_folding */
	TsRun t = accept("specialize/const_fold.tir", "sch.specialize(var=\"n\", value=16)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_has(ir, "A = T.match_buffer(a, (2, 8), \"int32\")");
	ts_has(ir, "B = T.match_buffer(b, (16,), \"int32\")");
	ts_has(ir, "for i in T.serial(15):");
	ts_has(ir, "+ 714");
	ts_lacks(ir, "n - 1");
	/* no fact on n: nothing to prove */
	ck_assert_int_eq(ts_count_obligations(t.r, "specialize.facts"), 0);
	sched_free(t.s);
}
END_TEST

START_TEST(allocations_regions_and_inner_facts_follow)
{
	TsRun t = accept("specialize/scale.tir", "sch.specialize(var=\"n\", value=8)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_has(ir, "B = T.alloc_buffer([8]");
	ts_has(ir, "T.reads(A[0:8])");
	/* a fact under a loop names a loop variable: substituted, kept */
	ts_has(ir, "T.assume(i < 8)");
	ts_has(ir, "if i < 7:");
	ts_lacks(ir, "(n,");
	ts_lacks(ir, "n - 1");
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	sched_free(t.s);
}
END_TEST

START_TEST(later_steps_are_proven_on_the_constants)
{
	/* m is symbolic: vectorize needs a constant extent */
	ts_rejected(&arena, tu_fixture("specialize/matmul.tir"), "b = sch.get_block(\"update\")\n"
		    "i, j, k = sch.get_loops(b)\nsch.vectorize(j)", "needs a constant extent");
	TsRun t = accept("specialize/matmul.tir", "sch.specialize(var=\"n\", value=16)\n"
			 "sch.specialize(var=\"m\", value=8)\n"
			 "b = sch.get_block(\"update\")\n"
			 "i, j, k = sch.get_loops(b)\n"
			 "ko, ki = sch.split(k, factors=[None, 8], tail=\"perfect\")\n"
			 "sch.vectorize(j)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_has(ir, "for j in T.vectorized(8):");
	ts_has(ir, "for ko, ki in T.grid(2, 8):");
	const StepReport *split = t.s->steps[t.s->nsteps - 2];
	ck_assert(ts_has_obligation(split, "split.divisible", VERDICT_PROVEN));
	/* the compiled result agrees with the interpreter */
	ProvenModule pm;
	sched_proven_module(t.s, &pm);
	DiagList d;
	diag_init(&d, &arena);
	Program *p = backend_build(&pm, NULL, &d);
	ck_assert_ptr_nonnull(p);
	char *report = NULL;
	ck_assert_msg(backend_check(p, "matmul", 3, 5, 1e-5, &report) == 0, "%s", report ? report : "?");
	free(report);
	backend_free(p);
	sched_free(t.s);
}
END_TEST

START_TEST(the_same_value_again_changes_nothing)
{
	TsRun t = accept("specialize/matmul.tir", "sch.specialize(var=\"n\", value=16)\n"
			 "sch.specialize(var=\"n\", value=16)");
	ck_assert(ts_has_obligation(t.r, "specialize.facts", VERDICT_PROVEN));
	ck_assert(ir_func_equal(ts_func(&t, NULL), t.prev->funcs[0]));
	sched_free(t.s);
}
END_TEST

START_TEST(a_shape_with_another_size_is_proven_non_negative)
{
	TsRun t = accept("specialize/shapes.tir", "sch.specialize(var=\"n\", value=8)");
	ck_assert(ts_has_obligation(t.r, "specialize.shape", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "specialize.facts", VERDICT_PROVEN));
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_has(ir, "A = T.match_buffer(a, (4,), \"int32\")");
	ts_has(ir, "B = T.match_buffer(b, (m + 8,), \"int32\")");
	/* the facts on n alone go, those on m stay */
	ts_lacks(ir, "4 <= n");
	ts_has(ir, "T.assume(m < 1000)");
	sched_free(t.s);
}
END_TEST

START_TEST(facts_in_the_root_block_go_too)
{
	TsRun t = accept("specialize/root.tir", "sch.specialize(var=\"n\", value=8)");
	char *ir = ts_print(&arena, ts_func(&t, NULL));
	ts_lacks(ir, "% 4");
	ts_lacks(ir, "T.assume(0 == 0)");
	ts_has(ir, "with T.block(\"root\"):");
	ts_has(t.r->note, "1 fact on n dropped");
	sched_free(t.s);
}
END_TEST

/* every value: committed exactly where the fact n % 8 == 0 holds, and
 * then equal to the original there (ts_accept runs the interpreter) */
START_TEST(commits_exactly_where_the_facts_hold)
{
	for (int v = 0; v <= 40; v += 4) {
		char script[64];
		snprintf(script, sizeof script, "sch.specialize(var=\"n\", value=%d)", v);
		if (v % 8 == 0)
			sched_free(accept("specialize/matmul.tir", script).s);
		else
			ts_rejected(&arena, tu_fixture("specialize/matmul.tir"), script,
				    "obligation specialize.facts refuted");
	}
}
END_TEST

/* ---------- rejected ---------- */

START_TEST(a_contradicting_fact_is_refuted)
{
	StepReport *r = ts_rejected(&arena, tu_fixture("specialize/matmul.tir"),
				    "sch.specialize(var=\"n\", value=12)",
				    "obligation specialize.facts refuted: the T.assume fact on n (line 7: n % 8 == 0) "
				    "holds at n = 12");
	/* the two functions agree wherever both run: a replay cannot show it */
	ck_assert_int_eq(r->replay, REPLAY_IMPOSSIBLE);
	ts_has(r->replay_text, "which running the two functions cannot show");
	/* an earlier specialization is such a fact */
	ts_rejected(&arena, tu_fixture("specialize/matmul.tir"),
		    "sch.specialize(var=\"n\", value=16)\nsch.specialize(var=\"n\", value=8)",
		    "the T.assume fact on n (n == 16) holds at n = 8");
	/* a fact that ties n to another size holds for every admissible m
	 * only at a value no m exceeds: refused (specialize m first) */
	r = ts_rejected(&arena, tu_fixture("specialize/coupled.tir"), "sch.specialize(var=\"n\", value=16)",
			"(line 4: m <= n) holds at n = 16 for every admissible value of the other parameters");
	ts_has(r->counterexample, "m = ");
}
END_TEST

START_TEST(values_outside_the_dtype_are_refused)
{
	ts_rejected(&arena, tu_fixture("specialize/kinds.tir"), "sch.specialize(var=\"n\", value=200)",
		    "200 is outside the range of n's dtype int8 [-128, 127]");
	ts_rejected(&arena, tu_fixture("specialize/matmul.tir"), "sch.specialize(var=\"n\", value=2147483648)",
		    "2147483648 is outside the range of n's dtype int32 [-2147483648, 2147483647]");
	/* the smallest int8 is fine (the shape then is negative: refused) */
	ts_rejected(&arena, tu_fixture("specialize/kinds.tir"), "sch.specialize(var=\"n\", value=-128)",
		    "extent 0 of A's shape is -128: a shape is not negative");
}
END_TEST

START_TEST(names_that_are_no_size_are_refused)
{
	const char *k = tu_fixture("specialize/kinds.tir");
	ts_rejected(&arena, k, "sch.specialize(var=\"x\", value=2)", "'x' is a float32 parameter, not a size");
	ts_rejected(&arena, k, "sch.specialize(var=\"flag\", value=1)", "'flag' is a bool parameter, not a size");
	ts_rejected(&arena, k, "sch.specialize(var=\"A\", value=1)", "'A' is a buffer, not a size");
	ts_rejected(&arena, k, "sch.specialize(var=\"a\", value=1)", "'a' is a handle parameter, not a size");
	ts_rejected(&arena, k, "sch.specialize(var=\"i\", value=1)", "'i' is a loop variable, not a parameter");
	ts_bad_input(&arena, k, "sch.specialize(var=\"q\", value=1)",
		     "no scalar parameter 'q' in function 'kinds' (scalar parameters: n, x, flag)");
}
END_TEST

START_TEST(a_negative_shape_is_refused)
{
	ts_rejected(&arena, tu_fixture("specialize/shapes.tir"), "sch.specialize(var=\"n\", value=2)",
		    "at n = 2, extent 0 of A's shape is -2: a shape is not negative");
}
END_TEST

START_TEST(script_arguments)
{
	const char *k = tu_fixture("specialize/matmul.tir");
	ts_bad_input(&arena, k, "sch.specialize(var=\"n\", value=\"16\")", "value must be an integer");
	ts_bad_input(&arena, k, "sch.specialize(value=16)", "expected a scalar parameter");
	ts_bad_input(&arena, k, "x = sch.specialize(var=\"n\", value=16)", "creates nothing to name");
}
END_TEST

/* ---------- the caller's contract ---------- */

START_TEST(the_interpreter_refuses_another_value)
{
	TsRun t = accept("specialize/matmul.tir", "sch.specialize(var=\"n\", value=16)");
	const Func *g = ts_func(&t, NULL);
	/* scalars in parameter order: n, then the free size m */
	int64_t good[] = {16, 4}, bad[] = {8, 4};
	InterpResult r;
	ck_assert(interp_scalar_facts_hold(g, good, &arena, &r));
	ck_assert(!interp_scalar_facts_hold(g, bad, &arena, &r));
	ts_has(r.message, "n == 16");
	DiagList d;
	diag_init(&d, &arena);
	ck_assert_ptr_null(interp_gen_input_scalars(&arena, g, 1, bad, &d));
	char *msg = diag_render(&d);
	ts_has(msg, "the given scalar values are not admissible");
	free(msg);
	/* the original admits n = 8 */
	ck_assert(interp_scalar_facts_hold(t.before->funcs[0], bad, &arena, &r));
	sched_free(t.s);
}
END_TEST

typedef int32_t (*ScaleFn)(float *a, float *c, int32_t n, float x);

START_TEST(the_compiled_kernel_checks_the_value)
{
	TsRun t = accept("specialize/scale.tir", "sch.specialize(var=\"n\", value=8)");
	ProvenModule pm;
	sched_proven_module(t.s, &pm);
	DiagList d;
	diag_init(&d, &arena);
	Program *p = backend_build(&pm, NULL, &d);
	ck_assert_ptr_nonnull(p);
	ScaleFn fn = (ScaleFn)backend_lookup(p, "scale", &d);
	ck_assert_ptr_nonnull(fn);
	float a[8], c[8];
	for (int i = 0; i < 8; i++) {
		a[i] = (float)i;
		c[i] = -1.0f;
	}
	/* another n: refused at entry, nothing written */
	ck_assert_int_eq(fn(a, c, 5, 2.0f), VS_KERNEL_ASSUME_FAILED);
	for (int i = 0; i < 8; i++)
		ck_assert(c[i] == -1.0f);
	ck_assert_int_eq(fn(a, c, 8, 2.0f), 0);
	for (int i = 0; i < 7; i++)
		ck_assert(c[i] == 2.0f * (float)i + 2.0f * (float)(i + 1));
	ck_assert(c[7] == 14.0f);
	/* the interpreter check of the build runs at the value */
	char *report = NULL;
	ck_assert_msg(backend_check(p, "scale", 3, 5, 0, &report) == 0, "%s", report ? report : "?");
	free(report);
	/* the header says what 2 means */
	char *h = backend_header_text(p, NULL);
	ts_has(h, "2 when a T.assume");
	ts_has(h, " *   requires: n == 8\n");
	free(h);
	backend_free(p);
	sched_free(t.s);
}
END_TEST

START_TEST(c_api)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "matmul.tir", tu_fixture("specialize/matmul.tir"));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_specialize(s, "n", 12), VS_REJECTED);
	ts_has(vs_report_reason(vs_report_at(s, vs_num_reports(s) - 1)), "specialize.facts refuted");
	ck_assert_int_eq(vs_specialize(s, "q", 16), VS_BAD_INPUT);
	ck_assert_int_eq(vs_specialize(s, NULL, 16), VS_BAD_INPUT);
	ck_assert_int_eq(vs_specialize(s, "n", 16), VS_OK);
	char *eq = NULL;
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 4, 1, &eq), VS_OK);
	ts_has(eq, "inputs drawn from the second function: its entry facts fix a size the first leaves free");
	free(eq);
	char *out = vs_module_print(vs_schedule_result(s));
	ts_has(out, "T.assume(n == 16)");
	free(out);
	vs_schedule_free(s);
	vs_context_free(ctx);
}
END_TEST

/* vsched jit times the kernel as written at the sizes of the scheduled
 * one: with a specialized schedule, at the specialized value */
START_TEST(as_written_is_timed_at_the_specialized_sizes)
{
	vs_context *ctx = vs_context_new();
	const char *text = tu_fixture("specialize/scale.tir");
	vs_module *m = vs_parse_string(ctx, "scale.tir", text);
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL), *us = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_specialize(s, "n", 8), VS_OK);
	vs_program *p = vs_build(s, NULL), *up = vs_build(us, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(up);
	double t = 0;
	ck_assert_int_eq(vs_program_time_like(up, "scale", p, 3, 1, &t), VS_OK);
	/* a kernel as written that admits no n = 8: the sizes came from p */
	char *small = strdup(text), *at = strstr(small, "    B = T.alloc_buffer");
	ck_assert_ptr_nonnull(at);
	char *k2 = NULL;
	ck_assert_int_gt(asprintf(&k2, "%.*s    T.assume(n < 4)\n%s", (int)(at - small), small, at), 0);
	vs_module *m2 = vs_parse_string(ctx, "scale2.tir", k2);
	ck_assert_ptr_nonnull(m2);
	vs_schedule *s2 = vs_schedule_new(ctx, m2, NULL);
	vs_program *p2 = vs_build(s2, NULL);
	ck_assert_ptr_nonnull(p2);
	ck_assert_int_eq(vs_program_time_like(p2, "scale", p, 3, 1, &t), VS_REJECTED);
	ck_assert_int_eq(vs_program_time(p2, "scale", 3, 1, &t), VS_OK);
	free(small);
	free(k2);
	vs_program_free(p);
	vs_program_free(up);
	vs_program_free(p2);
	vs_schedule_free(s);
	vs_schedule_free(us);
	vs_schedule_free(s2);
	vs_context_free(ctx);
}
END_TEST

Suite *suite_specialize(void)
{
	Suite *s = suite_create("specialize");
	struct {
		const char *name;
		const TTest *tests[8];
	} cases[] = {
		{"accept", {size_is_substituted_and_pinned, arithmetic_on_the_size_is_folded,
			    allocations_regions_and_inner_facts_follow, later_steps_are_proven_on_the_constants,
			    the_same_value_again_changes_nothing, a_shape_with_another_size_is_proven_non_negative,
			    facts_in_the_root_block_go_too}},
		{"property", {commits_exactly_where_the_facts_hold}},
		{"reject", {a_contradicting_fact_is_refuted, values_outside_the_dtype_are_refused,
			    names_that_are_no_size_are_refused, a_negative_shape_is_refused}},
		{"script_and_api", {script_arguments, c_api}},
		{"contract", {the_interpreter_refuses_another_value, the_compiled_kernel_checks_the_value,
			      as_written_is_timed_at_the_specialized_sizes}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 8 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
