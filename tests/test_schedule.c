/* tests/test_schedule.c — the schedule object: commit only when every
 * obligation is proven, keep the previous IR otherwise, unknown and
 * timeouts reject, unimplemented primitives reject, loop addressing with
 * "i#2", work_on in modules. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static const char two_loops[] = "schedule/two_loops.tir";

START_TEST(ambiguous_loop_name_needs_index)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(two_loops));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.split(\"i\", factor=4)"), STEP_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "ambiguous"));
	ck_assert_int_eq(tu_run(s, "io, ii = sch.split(\"i#2\", factor=4)"), STEP_COMMITTED);
	const Stmt *b = sched_func(s)->body;
	ck_assert_str_eq(b->u.seq.items[0]->u.loop.var->name, "i");
	ck_assert_str_eq(b->u.seq.items[1]->u.loop.var->name, "io");
	ck_assert_int_eq(tu_run(s, "sch.split(\"i#3\", factor=4)"), STEP_BAD_INPUT);
	tu_assert_equiv(m->funcs[0], sched_func(s), 4);
	sched_free(s);
}
END_TEST

START_TEST(rejected_step_keeps_previous_ir_and_later_steps_do_not_run)
{
	const char *k = tu_fixture("schedule/rejected_step_keeps_previous_ir_and_later_steps_do_not_run.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "io, ii = sch.split(\"i\", factor=2, tail=\"perfect\")"), STEP_COMMITTED);
	Func *after_first = sched_func(s);
	ck_assert_int_eq(tu_run(s, "a, b = sch.split(\"ii\", factor=4, tail=\"perfect\")\nsch.parallel(\"io\")"),
			 STEP_REJECTED);
	ck_assert_ptr_eq(sched_func(s), after_first);
	ck_assert_int_eq(s->nsteps, 2); /* parallel never ran */
	sched_free(s);
}
END_TEST

START_TEST(unknown_verdict_rejects)
{
	const char *k = tu_fixture("schedule/unknown_verdict_rejects.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	SmtOptions opt = {0};
	opt.rlimit = 1; /* the solver gives up at once: unknown */
	Schedule *s = sched_new(&arena, m, &opt);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_REJECTED);
	StepReport *r = tu_last(s);
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_UNKNOWN);
	ck_assert_ptr_nonnull(strstr(r->reason, "not proven"));
	ck_assert_ptr_eq(sched_func(s), m->funcs[0]);
	sched_free(s);
	/* the same step with a normal budget is proven */
	s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_COMMITTED);
	tu_assert_equiv(m->funcs[0], sched_func(s), 4);
	sched_free(s);
}
END_TEST

/* A shape a primitive does not handle rejects "not supported": it never
 * accepts unchecked. */
START_TEST(unimplemented_primitive_rejects_not_supported)
{
	const char *k = tu_fixture("schedule/unimplemented_primitive_rejects_not_supported.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.remove_branching_through_overcompute(strict=True)"),
			 STEP_REJECTED);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "not supported"));
	ck_assert(ir_func_equal(sched_func(s), m->funcs[0]));
	ck_assert_int_eq(tu_run(s, "sch.frobnicate(\"i\")"), STEP_BAD_INPUT);
	sched_free(s);
}
END_TEST

START_TEST(work_on_selects_module_function)
{
	const char *k = tu_fixture("schedule/work_on_selects_module_function.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.split(\"j\", factor=2)"), STEP_BAD_INPUT);
	ck_assert_int_eq(tu_run(s, "sch.work_on(\"g\")\njo, ji = sch.split(\"j\", factor=2)"), STEP_COMMITTED);
	ck_assert_ptr_eq(s->mod->funcs[0], m->funcs[0]);
	ck_assert_ptr_ne(s->mod->funcs[1], m->funcs[1]);
	tu_assert_equiv(m->funcs[1], s->mod->funcs[1], 3);
	ck_assert_int_eq(tu_run(s, "sch.work_on(\"h\")"), STEP_BAD_INPUT);
	sched_free(s);
}
END_TEST

/* ---------- limits through the schedule (closure branch) ----------
 * Every primitive that has obligations rejects a step whose obligations
 * are not proven within the limits; the fallback of split's guard tail is
 * committed only when its own obligations are proven. */

/* A true obligation no solver proves quickly: the hypotheses say
 * x^3 + y^3 == z^3 for positive integers (no solution), so every goal
 * holds, but only a proof of Fermat's n = 3 case shows it. */
static const char fermat[] = "schedule/fermat.tir";

static StepReport *limited_step(const char *kernel, const char *script, unsigned timeout_ms,
				unsigned rlimit, StepStatus want, Module **mod, Schedule **out)
{
	Module *m = tu_parse(&arena, "k.tir", kernel);
	SmtOptions opt = {0};
	opt.timeout_ms = timeout_ms;
	opt.rlimit = rlimit;
	Schedule *s = sched_new(&arena, m, &opt);
	StepStatus st = tu_run(s, script);
	StepReport *r = tu_last(s);
	if (st != want) {
		char *t = sched_report_text(r);
		ck_abort_msg("%s: status %d, expected %d\n%s", script, st, want, t);
	}
	if (mod)
		*mod = m;
	if (out)
		*out = s;
	else
		sched_free(s);
	return r;
}

START_TEST(timeout_rejects_split_perfect)
{
	StepReport *r = limited_step(tu_fixture(fermat),
				     "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")",
				     200, 0, STEP_REJECTED, NULL, NULL);
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_UNKNOWN);
	ck_assert_str_eq(r->results[r->failed].reason, "timeout");
	ck_assert_ptr_nonnull(strstr(r->reason, "not proven (timeout)"));
	ck_assert_ptr_null(r->counterexample);
	ck_assert_int_eq(r->replay, REPLAY_NONE);
}
END_TEST

START_TEST(resource_limit_rejects_every_primitive_with_obligations)
{
	const char *nest = tu_fixture("schedule/resource_limit_rejects_every_primitive_with_obligations.tir");
	static const char *const scripts[] = {
		"io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")",
		"io, ii = sch.split(\"i\", factor=4, tail=\"cut\")",
		"k = sch.fuse(\"i\", \"j\")",
		"sch.reorder(\"j\", \"i\")",
		"sch.parallel(\"i\")",
	};
	for (size_t k = 0; k < sizeof scripts / sizeof *scripts; k++) {
		Module *m;
		Schedule *s;
		StepReport *r = limited_step(nest, scripts[k], 10000, 1, STEP_REJECTED, &m, &s);
		ck_assert_msg(r->failed >= 0 && r->results[r->failed].verdict == VERDICT_UNKNOWN,
			      "%s: %s", scripts[k], r->reason);
		ck_assert_ptr_nonnull(strstr(r->reason, "not proven (resource limit)"));
		ck_assert_ptr_eq(sched_func(s), m->funcs[0]);
		sched_free(s);
	}
}
END_TEST

/* split's guard tail: an unproven divisibility keeps the guard (the
 * fallback), but an unproven fallback obligation rejects the step. */
START_TEST(unproven_guard_split_falls_back_only_when_the_fallback_is_proven)
{
	const char *scale_n = tu_fixture("schedule/unproven_guard_split_falls_back_only_when_the_fallback_is_proven.tir");
	const char *k = scale_n;
	/* resource limit: divisibility and the fallback's bound unproven */
	StepReport *r = limited_step(k, "io, ii = sch.split(\"i\", factor=4)", 10000, 1,
				     STEP_REJECTED, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(r->reason, "split.no_overflow not proven"));
	ck_assert_int_eq(r->nobs, 2);
	ck_assert_str_eq(r->obs[0]->kind, "split.divisible");
	ck_assert_int_eq(r->results[0].verdict, VERDICT_UNKNOWN);
	/* with a normal budget the guard is dropped */
	Module *m;
	Schedule *s;
	r = limited_step(k, "io, ii = sch.split(\"i\", factor=4)", 10000, 0, STEP_COMMITTED, &m, &s);
	ck_assert_ptr_null(r->note);
	tu_assert_equiv(m->funcs[0], sched_func(s), 4);
	sched_free(s);
	/* a constant extent in a context no solver decides: the guard stays,
	 * and nothing needs the solver (the kernel has no admissible input,
	 * so there is nothing to compare with the interpreter) */
	r = limited_step(tu_fixture(fermat),
			 "io, ii = sch.split(\"i\", factor=4)", 200, 0, STEP_COMMITTED, NULL, NULL);
	ck_assert_int_eq(r->nobs, 0);
}
END_TEST

static TCase *limits_tcase(void)
{
	TCase *tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, timeout_rejects_split_perfect);
	tcase_add_test(tc, resource_limit_rejects_every_primitive_with_obligations);
	tcase_add_test(tc, unproven_guard_split_falls_back_only_when_the_fallback_is_proven);
	return tc;
}

/* ---------- loops whose range wraps ----------
 * The interpreter wraps a loop variable past its dtype's maximum; the
 * range hypotheses of the proofs would then be empty for those iterations,
 * so every step proves loop.no_wrap for the loops it reasons about. */

static const char wrap_compute_at[] = "schedule/wrap_compute_at.tir";

static const char wrap_guard[] = "schedule/wrap_guard.tir";

START_TEST(compute_at_under_a_wrapping_loop_is_refuted)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(wrap_compute_at),
				   "sch.compute_at(block=\"B\", loop=\"j\")",
				   "loop.no_wrap");
	ts_has(ts_report(&arena, r), "k.tir:9:13");
}
END_TEST

START_TEST(simplify_keeps_the_guard_of_a_wrapping_loop)
{
	/* k >= 0 holds only while k has not wrapped */
	TsRun t = ts_accept(&arena, tu_fixture(wrap_guard), "sch.simplify()", 8);
	ts_has(ts_print(&arena, sched_func(t.s)), "if k >= 0:");
	ck_assert(ts_has_obligation(t.r, "loop.no_wrap", VERDICT_REFUTED));
	sched_free(t.s);
}
END_TEST

START_TEST(overcompute_over_a_wrapping_loop_is_refuted)
{
	ts_refuted(&arena, tu_fixture(wrap_guard),
		   "sch.remove_branching_through_overcompute(loop=\"k\", strict=True)",
		   "loop.no_wrap");
}
END_TEST

START_TEST(symbolic_loop_start_is_proven_not_to_wrap)
{
	TsRun t = ts_accept(&arena,
			    tu_fixture("schedule/symbolic_loop_start_is_proven_not_to_wrap-with_fact.tir"),
			    "io, ii = sch.split(\"i\", factor=4)", 8);
	ck_assert(ts_has_obligation(t.r, "loop.no_wrap", VERDICT_PROVEN));
	sched_free(t.s);
	/* without the fact, lo near the maximum wraps: rejected, replayed */
	t = ts_reject(&arena,
		      tu_fixture("schedule/symbolic_loop_start_is_proven_not_to_wrap-without_fact.tir"),
		      "sch.parallel(\"i\")", "loop.no_wrap");
	ck_assert_int_eq(t.r->results[t.r->failed].verdict, VERDICT_REFUTED);
	sched_free(t.s);
}
END_TEST

static int no_wrap_of_loop(const StepReport *r, const char *loop)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "loop %s (", loop);
	int n = 0;
	for (int i = 0; i < r->nobs; i++)
		n += strcmp(r->obs[i]->kind, "loop.no_wrap") == 0 &&
		     strncmp(r->obs[i]->statement, prefix, strlen(prefix)) == 0;
	return n;
}

/* Loop i (from lo, which needs the assume not to wrap) is left alone by
 * every step: its loop.no_wrap fact is proven by the first step and not
 * stated again by the later ones; a new schedule proves it again, and a
 * proof log holds it once, where it was proven, and re-checks. */
START_TEST(an_unchanged_loops_no_wrap_is_proven_once_per_schedule)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture("schedule/no_wrap_remembered.tir"));
	char dir[256];
	tu_tmpdir(dir, sizeof dir);
	for (int logged = 0; logged < 2; logged++) {
		Schedule *s = tu_schedule(&arena, m);
		DiagList d;
		diag_init(&d, &arena);
		if (logged) {
			s->log = proof_log_open(dir, &d);
			ck_assert_ptr_nonnull(s->log);
		}
		const char *steps[] = {"jo, ji = sch.split(\"j\", factor=4, tail=\"perfect\")",
				       "sch.unroll(\"ji\")", "sch.parallel(\"jo\")"};
		for (int k = 0; k < 3; k++) {
			ck_assert_int_eq(tu_run(s, steps[k]), STEP_COMMITTED);
			ck_assert_int_eq(no_wrap_of_loop(tu_last(s), "i"), k == 0);
			ck_assert(ts_has_obligation(tu_last(s), "loop.no_wrap", VERDICT_PROVEN) ||
				  k > 0);
		}
		tu_assert_equiv(m->funcs[0], sched_func(s), 8);
		sched_free(s);
	}
	char cmd[512], *out, *err;
	snprintf(cmd, sizeof cmd, "grep -c 'loop i (from lo' %s/index.jsonl", dir);
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 0);
	ck_assert_str_eq(out, "1\n");
	free(out);
	free(err);
	snprintf(cmd, sizeof cmd, "%s log check %s", tu_vsched_bin(), dir);
	int rc = tu_sh(cmd, &out, &err);
	ck_assert_msg(rc == 0, "%s%s", out, err);
	ts_has(out, "0 disagree");
	free(out);
	free(err);
	tu_rmdir(dir);
}
END_TEST

START_TEST(folded_constants_fit_their_dtype)
{
	/* 2147483647 + 2 wraps in int32: the folded literal is -2147483647 */
	TsRun t = ts_accept(&arena,
			    tu_fixture("schedule/folded_constants_fit_their_dtype.tir"),
			    "sch.simplify()", 8);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "B[i] - 2147483647");
	Module *back = tu_parse(&arena, "printed.tir", text);
	ck_assert(ir_func_equal(back->funcs[0], sched_func(t.s)));
	sched_free(t.s);
}
END_TEST

/* A misspelt keyword, an extra argument or a parameter given twice is
 * bad input with file:line:col, never silently ignored. */
START_TEST(arguments_outside_the_signature_are_bad_input)
{
	static const struct {
		const char *script, *why;
	} cases[] = {
		{"io, ii = sch.split(\"i\", factor=4, tial=\"perfect\")",
		 "t.sched:1:40: error: sch.split: unexpected keyword argument 'tial' (it takes loop=, factor=, tail=)"},
		{"sch.parallel(\"i#1\", \"i#2\")", "t.sched:1:21: error: sch.parallel: too many arguments (it takes 1 by position)"},
		{"sch.unroll(\"i#1\", bar=1)", "sch.unroll: unexpected keyword argument 'bar'"},
		{"sch.parallel(\"i#1\", loop=\"i#1\")", "sch.parallel: argument 'loop' given twice"},
		{"sch.simplify(x=1)", "sch.simplify: unexpected keyword argument 'x' (it takes transitively_prove_inequalities="},
		{"sch.transform_layout(\"A\", lambda i: [i], pad_valu=0)",
		 "sch.transform_layout: unexpected keyword argument 'pad_valu'"},
		{"k = sch.fuse(\"i#1\")", "fuse: expected two loops"},
		{"sch.transform_layout(\"A\", lambda i: [], pad_value=0)",
		 "transform_layout: the index map returns no index"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ts_bad_input(&arena, tu_fixture(two_loops), cases[i].script, cases[i].why);
}
END_TEST

/* i, j, then `depth` loops of extent 1, then a loop k that wraps:
 * found by a red-team audit, the walks stopped at 64 levels, k got no
 * loop.no_wrap obligation and reorder was proven vacuously */
static char *deep_nest(int depth, bool wrap)
{
	StrBuf b = {0};
	sb_puts(&b, "@T.prim_func\ndef f(B: T.Buffer[(1,), \"int32\"]):\n"
		    "    for i in T.serial(2):\n        for j in T.serial(2):\n");
	int ind = 12;
	for (int d = 0; d < depth; d++, ind += 4)
		sb_printf(&b, "%*sfor d%d in T.serial(1):\n", ind, "", d);
	sb_printf(&b, "%*sfor k in T.serial(%s):\n", ind, "", wrap ? "2147483647, 2147483647 + 2" : "2");
	sb_printf(&b, "%*sB[0] = B[0] * 2 + i\n", ind + 4, "");
	char *t = sb_take(&b);
	char *r = arena_strdup(&arena, t);
	free(t);
	return r;
}

START_TEST(nests_deeper_than_the_walks_reject_not_supported)
{
	/* shallow enough: the wrap is found */
	TsRun t = ts_reject(&arena, deep_nest(40, true), "sch.reorder(\"j\", \"i\")", "loop.no_wrap");
	sched_free(t.s);
	t = ts_reject(&arena, deep_nest(63, true), "sch.reorder(\"j\", \"i\")",
		      "not supported: function 'f' nests statements more than");
	sched_free(t.s);
	/* steps that search the whole function for candidates too */
	const char *whole[] = {"sch.simplify()", "sch.remove_no_op()",
			       "sch.remove_branching_through_overcompute()"};
	for (int i = 0; i < 3; i++) {
		t = ts_reject(&arena, deep_nest(63, false), whole[i],
			      "not supported: function 'f' nests statements more than");
		sched_free(t.s);
	}
	/* a step whose result would nest too deep rejects too */
	t = ts_reject(&arena, deep_nest(54, false), "sch.split(\"d0\", factor=1)\n"
						    "sch.split(\"d1\", factor=1)\n"
						    "sch.split(\"d2\", factor=1)",
		      "not supported: the result of 'f' nests statements more than");
	sched_free(t.s);
}
END_TEST

/* ---------- variables that share a name ----------
 * Found by an audit (soundness sweep with loops named like the ones the
 * rewrites create): structural equality took two different variables
 * with one name for the same one, inside one program. */

START_TEST(skew_keeps_a_new_z_apart_from_an_old_z)
{
	TsRun t = ts_accept(&arena,
			    tu_fixture("schedule/skew_keeps_a_new_z_apart_from_an_old_z.tir"),
			    "sch.sequential_buffer_access(buffer=\"B\")", 8);
	ck_assert(ts_has_obligation(t.r, "skew.inverse", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(split_outer_loop_is_not_an_outer_loop_of_the_same_name)
{
	/* split makes an i_o inside the outer i_o: X[i_o] = X[i_o'] is no
	 * store of the cell's own value (simplify removed the whole nest) */
	TsRun t = ts_accept(&arena,
			    tu_fixture("schedule/split_outer_loop_is_not_an_outer_loop_of_the_same_name-store.tir"),
			    "sch.split(\"i\", factor=4)\nsch.simplify()", 8);
	ts_has(ts_print(&arena, sched_func(t.s)), "X[i_o] = X[");
	sched_free(t.s);
	/* the two branches store different cells' values: not one effect */
	t = ts_accept(&arena,
		      tu_fixture("schedule/split_outer_loop_is_not_an_outer_loop_of_the_same_name-branches.tir"),
		      "sch.split(\"i\", factor=4)\nsch.simplify()\n"
		      "sch.remove_branching_through_overcompute()", 8);
	sched_free(t.s);
}
END_TEST

/* ---------- handles (TVM's BlockRV / LoopRV) ---------- */

static const char nest[] = "schedule/handles_nest.tir";
static const char two_blocks[] = "schedule/handles_two_blocks.tir";

/* The loops of s, outermost first: "i0:4 i1:2 ..." (-1: not constant) */
static void loops_text(const Stmt *s, StrBuf *b)
{
	if (s->kind == ST_FOR) {
		int64_t e = -1;
		an_const_int(s->u.loop.extent, &e);
		sb_printf(b, "%s%s:%lld", b->n ? " " : "", s->u.loop.var->name, (long long)e);
	}
	for (int i = 0; i < stmt_nchildren(s); i++)
		if (stmt_child(s, i))
			loops_text(stmt_child(s, i), b);
}

static char *loops_of(const Func *f)
{
	StrBuf b = {0};
	loops_text(f->body, &b);
	char *t = sb_take(&b);
	char *r = arena_strdup(&arena, t);
	free(t);
	return r;
}

START_TEST(handles_name_loops_and_survive_a_reorder)
{
	TsRun t = ts_accept(&arena, tu_fixture(nest),
			    "b = sch.get_block(\"update\")\n"
			    "i, j, k = sch.get_loops(b)\n"
			    "sch.reorder(k, j)\n"
			    "sch.parallel(i)\n"
			    "sch.unroll(j)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i:30 k:16 j:16");
	ts_has(ts_print(&arena, sched_func(t.s)), "i in T.parallel(30)");
	ts_has(ts_print(&arena, sched_func(t.s)), "j in T.unroll(16)");
	sched_free(t.s);
	/* a list with an index, a negative index, *unpacking, `_`, a starred
	 * name, get_block(func_name=), a block named by its string */
	t = ts_accept(&arena, tu_fixture(nest),
		      "b = sch.get_block(\"update\", func_name=\"mm\")\n"
		      "loops = sch.get_loops(b)\n"
		      "sch.reorder(loops[0], loops[-1], loops[1])\n"
		      "_, *rest = sch.get_loops(\"update\")\n"
		      "sch.reorder(*rest)\n"
		      "_, _, last = sch.get_loops(b)\n"
		      "sch.vectorize(last)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i:30 k:16 j:16");
	ts_has(ts_print(&arena, sched_func(t.s)), "j in T.vectorized(16)");
	sched_free(t.s);
}
END_TEST

/* The script runs up to a call that is bad input, whose diagnostics
 * hold `why`; the steps before it are committed. */
static void stops_at_bad_input(const char *script, const char *why)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(nest));
	Schedule *s = tu_schedule(&arena, m);
	DiagList d;
	diag_init(&d, &arena);
	Script *sc = script_parse(&arena, source_from_string(&arena, "t.sched", script), &d);
	ck_assert_ptr_nonnull(sc);
	StepStatus st = sched_run_script(s, sc, &d);
	char *text = diag_render(&d);
	ck_assert_msg(st == STEP_BAD_INPUT && strstr(text, why), "%s:\n%d %s", script, st, text);
	free(text);
	tu_assert_equiv(m->funcs[0], sched_func(s), 2);
	sched_free(s);
}

START_TEST(a_removed_loop_handle_is_an_error)
{
	/* a nested call names what it returns; a loop handle is not a block */
	ts_bad_input(&arena, tu_fixture(nest),
		     "i, j, k = sch.get_loops(sch.get_loops(sch.get_block(\"update\"))[0])",
		     "get_loops: no block 'i'");
	stops_at_bad_input(
			   "b = sch.get_block(\"update\")\n"
		     "i, j, k = sch.get_loops(b)\n"
		     "io, ii = sch.split(i, factors=[None, 8])\n"
		     "sch.parallel(i)",
		     "t.sched:4:14: error: loop handle 'i' no longer exists: it was split at line 3");
	stops_at_bad_input(
			   "b = sch.get_block(\"update\")\n"
		     "i, j, k = sch.get_loops(b)\n"
		     "f = sch.fuse(j, k)\n"
		     "sch.reorder(k, i)",
		     "loop handle 'k' no longer exists: it was fused at line 3");
	/* bad handles and unpacking */
	static const struct {
		const char *script, *why;
	} cases[] = {
		{"b = sch.get_block(\"nope\")", "t.sched:1:19: error: get_block: no block 'nope' in function 'mm' (blocks: update)"},
		{"i, j = sch.get_loops(\"update\")", "sch.get_loops returned 3 handles; 2 names are on the left of '='"},
		{"l = sch.get_loops(\"update\")\nsch.parallel(l[3])", "t.sched:2:14: error: index 3 is out of range: 'l' holds 3 handles"},
		{"l = sch.get_loops(\"update\")\nsch.parallel(l)", "'l' is a list of 3 handles: write l[K] or *l"},
		{"b = sch.get_block(\"update\")\nsch.parallel(*b)", "'b' is not a list of handles"},
		{"b = sch.get_block(\"update\")\na, b = sch.split(\"i\", factors=[None, 2, 3])", "split: makes 3 loops, but 2 names are on the left"},
		{"sch.split(\"i\", factors=[None, None])", "t.sched:1:31: error: split: at most one factor may be None"},
		{"sch.split(\"i\", factors=[0, 8])", "split: a factor must be a positive integer literal or None"},
		{"sch.split(\"i\", [8])", "split: factors must be a list of two or more integers"},
		{"sch.split(\"i\", factors=[2, 15], disable_predication=1)", "split: disable_predication must be True or False"},
		{"sch.split(\"i\", factors=[2, 15], factor=3)", "sch.split: unexpected keyword argument 'factor'"},
		{"sch.get_loops(\"update\", 1)", "sch.get_loops: too many arguments"},
		{"sch.compute_at(\"update\", \"i\", idx=0)", "sch.compute_at: unexpected keyword argument 'idx'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ts_bad_input(&arena, tu_fixture(nest), cases[i].script, cases[i].why);
}
END_TEST

START_TEST(split_into_three_with_one_none_keeps_a_guard)
{
	/* 30 = ceil(30 / 8) * 2 * 4 - 2: the first split keeps its guard */
	TsRun t = ts_accept(&arena, tu_fixture(nest),
			    "b = sch.get_block(\"update\")\n"
			    "i, j, k = sch.get_loops(b)\n"
			    "i0, i1, i2 = sch.split(i, factors=[None, 2, 4])\n"
			    "sch.reorder(i1, i0)\n"
			    "sch.unroll(i2)\n", 6);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i1:2 i0:4 i2:4 j:16 k:16");
	ck_assert_int_eq(ts_store_ifs(sched_func(t.s)->body), 1);
	sched_free(t.s);
	/* None in the middle is inferred from a constant extent; positional
	 * factors; no names on the left: i_0, i_1, i_2 */
	t = ts_accept(&arena, tu_fixture(nest), "sch.split(\"i\", [2, None, 4])", 6);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i_0:2 i_1:4 i_2:4 j:16 k:16");
	sched_free(t.s);
	/* 5 * 2 * 4 covers 30 with 4 tiles of 8: the outer loop runs 4 times */
	t = ts_accept(&arena, tu_fixture(nest), "sch.split(\"i\", [5, None, 4])", 6);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i_0:4 i_1:2 i_2:4 j:16 k:16");
	ts_has(ts_report(&arena, t.r), "the outer loop runs 4 times");
	sched_free(t.s);
	/* the two-factor form, and disable_predication asking for a proof */
	t = ts_accept(&arena, tu_fixture(nest), "jo, ji = sch.split(\"j\", factors=[4, None], disable_predication=True)", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i:30 jo:4 ji:4 k:16");
	sched_free(t.s);
	TsRun r = ts_reject(&arena, tu_fixture(nest), "sch.split(\"i\", factors=[None, 8], disable_predication=True)",
			    "split.divisible");
	sched_free(r.s);
}
END_TEST

START_TEST(split_factors_must_cover_the_extent)
{
	TsRun t = ts_reject(&arena, tu_fixture(nest), "sch.split(\"i\", factors=[2, 4, 3])",
			    "precondition: split: the factors [2, 4, 3] cover 24 iterations, fewer than the extent 30 of loop 'i'");
	sched_free(t.s);
	/* a symbolic extent: covered only when a fact bounds it */
	t = ts_accept(&arena, tu_fixture("schedule/handles_symbolic-bounded.tir"),
		      "io, ii = sch.split(\"i\", factors=[8, 8])", 8);
	ck_assert(ts_has_obligation(t.r, "split.factors_cover", VERDICT_PROVEN));
	sched_free(t.s);
	t = ts_accept(&arena, tu_fixture("schedule/handles_symbolic-bounded.tir"),
		      "a, b, c = sch.split(\"i\", factors=[2, 4, 8])", 8);
	ck_assert(ts_has_obligation(t.r, "split.factors_cover", VERDICT_PROVEN));
	sched_free(t.s);
	/* n <= 1000 is not enough for 8 * 8 */
	StepReport *r = ts_rejected(&arena, tu_fixture("schedule/handles_symbolic-unbounded.tir"),
				    "io, ii = sch.split(\"i\", factors=[8, 8])",
				    "obligation split.factors_cover refuted: the factors [8, 8] cover the extent of loop i (at most 64)");
	ck_assert_ptr_nonnull(r->counterexample);
	/* [f, None] on a symbolic extent (TVM's split_symbolic): f tiles of
	 * (n + f - 1) // f, guarded, once n + f - 1 is shown to fit int32 */
	t = ts_accept(&arena, tu_fixture("schedule/handles_symbolic-bounded.tir"),
		      "io, ii = sch.split(\"i\", factors=[8, None])", 8);
	ck_assert(ts_has_obligation(t.r, "split.no_overflow", VERDICT_PROVEN));
	ts_has(ts_print(&arena, sched_func(t.s)), "for io, ii in T.grid(8, (n + 7) // 8):");
	ts_has(ts_print(&arena, sched_func(t.s)), "if io * ((n + 7) // 8) + ii < n:");
	sched_free(t.s);
	/* nothing bounds n: (n + 7) // 8 wraps for n near 2^31 */
	ts_rejected(&arena, tu_fixture("schedule/handles_symbolic-free.tir"), "sch.split(\"i\", factors=[8, None])",
		    "obligation split.no_overflow refuted: io*((N + 7) // 8) + ii stays within int32");
	/* a None after the first of three or more still needs a constant extent */
	ts_rejected(&arena, tu_fixture("schedule/handles_symbolic-bounded.tir"),
		    "sch.split(\"i\", factors=[2, None, 4])",
		    "not supported: split: a None factor after the first of three or more needs a constant extent");
}
END_TEST

/* add_unit_loop (TVM): a loop of one iteration around a block or a
 * loop; it returns the new loop, which later calls can use */
START_TEST(add_unit_loop_above_a_block_or_a_loop)
{
	TsRun t = ts_accept(&arena, tu_fixture(nest),
			    "u = sch.add_unit_loop(sch.get_block(\"update\"))\n"
			    "sch.unroll(u)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "u:1 i:30 j:16 k:16");
	ts_has(ts_print(&arena, sched_func(t.s)), "for u in T.unroll(1):\n        with T.block(\"update\"):");
	sched_free(t.s);
	t = ts_accept(&arena, tu_fixture(nest), "i, j, k = sch.get_loops(\"update\")\nv = sch.add_unit_loop(j)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i:30 v:1 j:16 k:16");
	sched_free(t.s);
	ts_bad_input(&arena, tu_fixture(nest), "sch.add_unit_loop(\"nope\")", "no loop 'nope'");
}
END_TEST

START_TEST(fuse_of_three_loops)
{
	TsRun t = ts_accept(&arena, tu_fixture(nest),
			    "i, j, k = sch.get_loops(\"update\")\n"
			    "f = sch.fuse(i, j, k, preserve_unit_iters=True)\n"
			    "fo, fi = sch.split(f, factors=[None, 16])\n"
			    "sch.parallel(fo)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "fo:480 fi:16");
	ts_has(ts_print(&arena, sched_func(t.s)), "fo in T.parallel(480)");
	sched_free(t.s);
	/* the loops must be perfectly nested: the second two-way fuse fails
	 * and the call leaves the function as it was */
	t = ts_reject(&arena, tu_fixture(nest),
		      "i, j, k = sch.get_loops(\"update\")\n"
		      "sch.reorder(k, j)\n"
		      "f = sch.fuse(i, j, k)", "precondition: fuse");
	sched_free(t.s);
}
END_TEST

START_TEST(tvm_forms_of_cache_compute_at_and_layout)
{
	TsRun t = ts_accept(&arena, tu_fixture(two_blocks),
			    "b = sch.get_block(\"B\")\n"
			    "cs = sch.get_consumers(b)\n"
			    "ps = sch.get_producers(cs[0])\n"
			    "i, j = sch.get_loops(cs[0])\n"
			    "A_local = sch.cache_read(b, 0, \"local\")\n"
			    "l = sch.get_loops(A_local)\n"
			    "sch.parallel(l[0])\n"
			    "sch.compute_at(ps[0], i, preserve_unit_loops=True, index=-1)\n"
			    "sch.transform_layout(b, (\"read\", 0), lambda i, j: [i, j // 4, j % 4], pad_value=0.0)\n",
			    4);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "with T.block(\"A_local\")");
	ts_has(text, "ax0 in T.parallel(16)");
	ts_has(text, "A_local = T.alloc_buffer([16, 4, 4]");
	sched_free(t.s);
	/* cache_write by index returns the block that writes back */
	t = ts_accept(&arena, tu_fixture(two_blocks),
		      "c = sch.get_block(\"C\")\n"
		      "C_local = sch.cache_write(c, 0, \"local\")\n"
		      "ax0, ax1 = sch.get_loops(C_local)\n"
		      "sch.parallel(ax0)\n", 4);
	ts_has(ts_print(&arena, sched_func(t.s)), "with T.block(\"C_local_out\")");
	sched_free(t.s);
	/* the children of a block */
	t = ts_accept(&arena, tu_fixture(two_blocks),
		      "b = sch.get_block(\"B\")\n"
		      "i, j = sch.get_loops(\"C\")\n"
		      "sch.compute_at(b, i)\n"
		      "kids = sch.get_child_blocks(\"C\")\n"
		      "in_i = sch.get_child_blocks(i)\n"
		      "x, y, z = sch.get_loops(kids[0])\n"
		      "_, _, w = sch.get_loops(in_i[0])\n"
		      "sch.reorder(z, y)\n"
		      "sch.unroll(w)\n", 4);
	ck_assert_str_eq(loops_of(sched_func(t.s)), "i:16 j:16 i:1 j:16");
	ts_has(ts_print(&arena, sched_func(t.s)), "j in T.unroll(16)");
	sched_free(t.s);
	ts_bad_input(&arena, tu_fixture(two_blocks), "sch.cache_read(\"B\", 1, \"local\")",
		     "cache_read: block 'B' reads 1 buffer (A): index 1 is out of range");
	ts_bad_input(&arena, tu_fixture(two_blocks), "sch.transform_layout(\"C\", (\"load\", 0), lambda i, j: [j, i])",
		     "transform_layout: buffer must be (\"read\", K), (\"write\", K) or a buffer name");
	ts_bad_input(&arena, tu_fixture(two_blocks), "sch.cache_read(\"C\", 0, \"local\", consumer_blocks=[\"D\"])",
		     "cache_read: consumer_blocks: no block 'D' in function 'f'");
	ts_rejected(&arena, tu_fixture(two_blocks), "i, j = sch.get_loops(\"C\")\nsch.compute_at(\"B\", i, index=0)",
		    "not supported: compute_at: index=0");
}
END_TEST

/* decompose_reduction is read and routed; vsched's plain block around its
 * nest has no T.init to decompose (tests/test_tensorir.c has the rest) */
START_TEST(decompose_reduction_of_a_block_without_init_is_a_precondition)
{
	StepReport *r = ts_rejected(&arena, tu_fixture(nest),
				    "b = sch.get_block(\"update\")\n"
				    "i, j, k = sch.get_loops(b)\n"
				    "init = sch.decompose_reduction(b, k)",
				    "precondition: decompose_reduction: block 'update' has no T.init() to decompose");
	ck_assert_int_eq(r->status, STEP_REJECTED);
}
END_TEST

static TCase *handles_tcase(void)
{
	TCase *tc = tcase_create("handles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, handles_name_loops_and_survive_a_reorder);
	tcase_add_test(tc, a_removed_loop_handle_is_an_error);
	tcase_add_test(tc, split_into_three_with_one_none_keeps_a_guard);
	tcase_add_test(tc, split_factors_must_cover_the_extent);
	tcase_add_test(tc, fuse_of_three_loops);
	tcase_add_test(tc, add_unit_loop_above_a_block_or_a_loop);
	tcase_add_test(tc, tvm_forms_of_cache_compute_at_and_layout);
	tcase_add_test(tc, decompose_reduction_of_a_block_without_init_is_a_precondition);
	return tc;
}

static TCase *wrap_tcase(void)
{
	TCase *tc = tcase_create("loop_wrap");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, compute_at_under_a_wrapping_loop_is_refuted);
	tcase_add_test(tc, simplify_keeps_the_guard_of_a_wrapping_loop);
	tcase_add_test(tc, overcompute_over_a_wrapping_loop_is_refuted);
	tcase_add_test(tc, symbolic_loop_start_is_proven_not_to_wrap);
	tcase_add_test(tc, an_unchanged_loops_no_wrap_is_proven_once_per_schedule);
	tcase_add_test(tc, folded_constants_fit_their_dtype);
	tcase_add_test(tc, nests_deeper_than_the_walks_reject_not_supported);
	tcase_add_test(tc, skew_keeps_a_new_z_apart_from_an_old_z);
	tcase_add_test(tc, split_outer_loop_is_not_an_outer_loop_of_the_same_name);
	return tc;
}

/* ---------- math calls (semantics.md 9) ----------
 * A rewrite that only moves or duplicates T.exp is proven; one that needs
 * a property of it is not, and rejects. */

static const char pad_split_overcompute[] =
	"sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i, j // 4, j % 4], pad_value=0.0)\n"
	"jo, ji = sch.split(\"j\", factor=4)\n"
	"sch.simplify()\n"
	"sch.remove_branching_through_overcompute(loop=\"ji\", strict=True)";

START_TEST(split_and_reorder_over_math_calls_are_accepted)
{
	TsRun t = ts_accept(&arena, tu_fixture("schedule/math_exp_tile.tir"),
			    "jo, ji = sch.split(\"j\", factor=4)\nsch.reorder(\"ji\", \"i\")", 8);
	char *text = ts_print(&arena, sched_func(t.s));
	ts_has(text, "for ji, jo, i in T.grid(4, 4, 8):");
	ts_has(text, "T.exp(A[i, jo * 4 + ji])");
	ts_has(text, "T.sigmoid(A[i, jo * 4 + ji] * 0.5)");
	ck_assert(ts_has_obligation(t.r, "reorder.no_conflict", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(overcompute_that_moves_exp_past_padding_is_accepted_in_real_mode)
{
	/* the padding adds 0.0 * exp(0.0): 0 in real mode whatever exp gives */
	TsRun t = ts_accept(&arena, tu_fixture("schedule/math_exp_weighted.tir"),
			    pad_split_overcompute, 8);
	ck_assert_int_eq(ts_store_ifs(sched_func(t.s)->body), 0);
	ck_assert(ts_has_obligation(t.r, "overcompute.no_op", VERDICT_PROVEN));
	sched_free(t.s);
	/* in ieee mode exp(0.0) might be inf, and 0.0 * inf is NaN */
	char *ieee = arena_printf(&arena, "sch.float_mode(\"ieee\")\n%s", pad_split_overcompute);
	StepReport *r = ts_rejected(&arena, tu_fixture("schedule/math_exp_weighted.tir"), ieee,
				    "overcompute.no_op");
	ck_assert(ts_has_obligation(r, "overcompute.no_op", VERDICT_REFUTED));
}
END_TEST

START_TEST(overcompute_needing_exp_of_zero_is_rejected)
{
	/* B[i] * exp(0.0) == B[i] needs exp(0.0) == 1.0: a property of exp */
	StepReport *r = ts_rejected(&arena, tu_fixture("schedule/math_exp_product.tir"),
				    pad_split_overcompute, "overcompute.no_op");
	ck_assert(ts_has_obligation(r, "overcompute.no_op", VERDICT_REFUTED));
	char *text = ts_report(&arena, r);
	ts_has(text, "T.exp is an unknown function in proofs");
	/* libm's exp(0.0) is 1.0: the interpreter finds no difference */
	ck_assert_int_ne(r->replay, REPLAY_CONFIRMED);
}
END_TEST

START_TEST(guard_on_exp_being_positive_is_kept)
{
	/* simplify knows nothing of exp: the guard stays */
	TsRun t = ts_accept(&arena, tu_fixture("schedule/math_exp_positive_guard.tir"),
			    "sch.simplify()", 8);
	ck_assert_int_eq(ts_store_ifs(sched_func(t.s)->body), 1);
	ts_has(ts_print(&arena, sched_func(t.s)), "if T.exp(A[i]) > 0.0:");
	sched_free(t.s);
	/* and dropping it is wrong: expf underflows to 0.0, as the replay shows */
	ts_refuted(&arena, tu_fixture("schedule/math_exp_positive_guard.tir"),
		   "sch.remove_branching_through_overcompute(loop=\"i\", strict=True)",
		   "overcompute.no_op");
}
END_TEST

Suite *suite_schedule(void)
{
	Suite *s = suite_create("schedule");
	TCase *tc = tcase_create("commit");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rejected_step_keeps_previous_ir_and_later_steps_do_not_run);
	tcase_add_test(tc, unknown_verdict_rejects);
	tcase_add_test(tc, unimplemented_primitive_rejects_not_supported);
	suite_add_tcase(s, tc);
	tc = tcase_create("addressing");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ambiguous_loop_name_needs_index);
	tcase_add_test(tc, work_on_selects_module_function);
	tcase_add_test(tc, arguments_outside_the_signature_are_bad_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, split_and_reorder_over_math_calls_are_accepted);
	tcase_add_test(tc, overcompute_that_moves_exp_past_padding_is_accepted_in_real_mode);
	tcase_add_test(tc, overcompute_needing_exp_of_zero_is_rejected);
	tcase_add_test(tc, guard_on_exp_being_positive_is_kept);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, limits_tcase());
	suite_add_tcase(s, handles_tcase());
	suite_add_tcase(s, wrap_tcase());
	return s;
}
