/* tests/test_examples.c — the seed 000 examples under examples/: each
 * schedule runs with every step proven, the result agrees with the
 * original on admissible inputs (through the layout maps), and the branch
 * counts the interpreter reports before and after are printed, so the
 * test log shows what overcompute buys. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;

static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static Module *load(const char *path)
{
	DiagList d;
	diag_init(&d, &arena);
	Source *src = source_read_file(&arena, path, &d);
	Module *m = src ? parse_module(&arena, src, &d) : NULL;
	if (!m)
		ck_abort_msg("%s: %s", path, diag_render(&d));
	return m;
}

static Schedule *schedule_file(Module *m, const char *path, StepStatus *st)
{
	DiagList d;
	diag_init(&d, &arena);
	Schedule *s = tu_schedule(&arena, m);
	Source *src = source_read_file(&arena, path, &d);
	Script *sc = src ? script_parse(&arena, src, &d) : NULL;
	ck_assert_msg(sc != NULL, "%s: %s", path, diag_render(&d));
	*st = sched_run_script(s, sc, &d);
	return s;
}

/* Branches executed on one admissible input of f. */
static InterpCounts counts_of(const Func *f)
{
	DiagList d;
	diag_init(&d, &arena);
	State *in = interp_gen_input(&arena, f, 11, &d);
	ck_assert_msg(in != NULL, "no input for %s: %s", f->name, diag_render(&d));
	InterpResult r;
	ck_assert_int_eq(interp_run(f, in, 0, &r), RUN_OK);
	return r.counts;
}

static void print_counts(const char *name, const Func *before, const Func *after)
{
	InterpCounts b = counts_of(before), a = counts_of(after);
	fprintf(stderr, "examples: %s: branches %llu -> %llu, loads %llu -> %llu, stores %llu -> %llu\n",
		name, (unsigned long long)b.branches, (unsigned long long)a.branches,
		(unsigned long long)b.loads, (unsigned long long)a.loads,
		(unsigned long long)b.stores, (unsigned long long)a.stores);
}

START_TEST(row_sum_pads_with_zero_and_drops_the_guard)
{
	Module *m = load("examples/row_sum/row_sum.tir");
	StepStatus st;
	Schedule *s = schedule_file(m, "examples/row_sum/row_sum.sched", &st);
	ck_assert_msg(st == STEP_COMMITTED, "%s", sched_report_text(tu_last(s)));
	Func *out = sched_func(s);
	tu_assert_equiv(m->funcs[0], out, 8);
	/* only the fact loop's assume remains: no branch in the compute */
	ck_assert_int_eq(ts_count_kind(out->body, ST_IF), 0);
	InterpCounts after = counts_of(out);
	ck_assert_int_eq((int)after.branches, 0);
	/* the branchy form: after the split, before overcompute removal */
	const Func *branchy = s->steps[s->nsteps - 2]->result;
	ck_assert_int_gt((int)counts_of(branchy).branches, 0);
	print_counts("row_sum (guarded split -> overcompute)", branchy, out);
	sched_free(s);
}
END_TEST

START_TEST(row_sum_with_undef_padding_is_rejected_with_a_replayed_counterexample)
{
	Module *m = load("examples/row_sum/row_sum.tir");
	StepStatus st;
	Schedule *s = schedule_file(m, "examples/row_sum/row_sum_undef.sched", &st);
	ck_assert_int_eq(st, STEP_REJECTED);
	StepReport *r = tu_last(s);
	ck_assert_ptr_nonnull(strstr(r->reason, "overcompute.no_op refuted"));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	/* the steps before it stay committed; the rejected one changed nothing */
	ck_assert_int_eq(ts_count_kind(sched_func(s)->body, ST_IF), 1);
	sched_free(s);
}
END_TEST

/* The `elif io < 2` case of the hoisted nest: the interior tiles. */
static const Stmt *interior_case(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			const Stmt *r = interior_case(s->u.seq.items[i]);
			if (r)
				return r;
		}
		return NULL;
	case ST_FOR: return interior_case(s->u.loop.body);
	case ST_IF: {
		const Stmt *e = s->u.cond.else_s;
		if (e && e->kind == ST_IF && e->u.cond.else_s)
			return e->u.cond.then_s; /* if io < 1: ... elif io < 2: HERE else: ... */
		return NULL;
	}
	case ST_BLOCK: return interior_case(s->u.block.body);
	case ST_ALLOC: return interior_case(s->u.alloc.body);
	case ST_LET: return interior_case(s->u.let.body);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

START_TEST(conv1d_with_padding_reaches_branch_free_interior_tiles)
{
	Module *m = load("examples/conv1d/conv1d.tir");
	StepStatus st;
	Schedule *s = schedule_file(m, "examples/conv1d/conv1d.sched", &st);
	ck_assert_msg(st == STEP_COMMITTED, "%s", sched_report_text(tu_last(s)));
	for (int i = 0; i < s->nsteps; i++)
		ck_assert_int_eq(s->steps[i]->status, STEP_COMMITTED);
	Func *out = sched_func(s);
	tu_assert_equiv(m->funcs[0], out, 8);
	const Stmt *interior = interior_case(out->body);
	ck_assert_msg(interior != NULL, "no interior case:\n%s", print_func(out));
	ck_assert_int_eq(interior->kind, ST_FOR);
	ck_assert_int_eq(ts_count_kind(interior, ST_IF), 0);
	/* the branchy form: after sequential_buffer_access */
	print_counts("conv1d (sequential access -> hoist + simplify)", s->steps[2]->result, out);
	sched_free(s);
}
END_TEST

/* The README's TVM walk-through: every step commits, the result prints the
 * block in TVM's style and computes what the kernel as written computes. */
START_TEST(tvm_matmul_in_tvm_style_commits_and_agrees)
{
	Module *m = load("examples/tvm_matmul/matmul.tir");
	StepStatus st;
	Schedule *s = schedule_file(m, "examples/tvm_matmul/matmul.sched", &st);
	ck_assert_int_eq(st, STEP_COMMITTED);
	const Func *after = sched_func(s);
	char *text = print_func(after);
	ck_assert_msg(strstr(text, "vi = T.axis.spatial(128, i0 * 32 + i1)") &&
			      strstr(text, "for i0 in T.parallel(4):") &&
			      strstr(text, "with T.init():"), "%s", text);
	free(text);
	tu_assert_equiv(m->funcs[0], after, 2);
	sched_free(s);
}
END_TEST

Suite *suite_examples(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = tcase_create("seed000");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, row_sum_pads_with_zero_and_drops_the_guard);
	tcase_add_test(tc, row_sum_with_undef_padding_is_rejected_with_a_replayed_counterexample);
	tcase_add_test(tc, conv1d_with_padding_reaches_branch_free_interior_tiles);
	tcase_add_test(tc, tvm_matmul_in_tvm_style_commits_and_agrees);
	suite_add_tcase(s, tc);
	return s;
}
