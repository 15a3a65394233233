/* tests/test_schedule.c — the schedule object: commit only when every
 * obligation is proven, keep the previous IR otherwise, unknown and
 * timeouts reject, unimplemented primitives reject, loop addressing with
 * "i#2", work_on in modules. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static const char two_loops[] =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(16,), \"int32\"]):\n"
	"    for i in T.serial(16):\n"
	"        A[i] = i\n"
	"    for i in T.serial(16):\n"
	"        B[i] = A[i] + 1\n";

START_TEST(ambiguous_loop_name_needs_index)
{
	Module *m = tu_parse(&arena, "k.tir", two_loops);
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
	static const char k[] =
		"@T.prim_func\n"
		"def f(A: T.Buffer[(14,), \"int32\"]):\n"
		"    for i in T.serial(14):\n"
		"        A[i] = i\n";
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
	static const char k[] =
		"@T.prim_func\n"
		"def f(A: T.Buffer[(8, 9), \"int32\"]):\n"
		"    for i, j in T.grid(7, 8):\n"
		"        A[i + 1, j] = A[i, j] + 1\n";
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

START_TEST(unimplemented_primitive_rejects_not_supported)
{
	Module *m = tu_parse(&arena, "k.tir", two_loops);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.merge_adjacent_loops(\"i#1\", \"i#2\")"), STEP_REJECTED);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "not supported"));
	ck_assert_int_eq(tu_run(s, "sch.frobnicate(\"i\")"), STEP_BAD_INPUT);
	sched_free(s);
}
END_TEST

START_TEST(work_on_selects_module_function)
{
	static const char k[] =
		"@I.ir_module\n"
		"class M:\n"
		"    @T.prim_func\n"
		"    def f(A: T.Buffer[(8,), \"int32\"]):\n"
		"        for i in T.serial(8):\n"
		"            A[i] = 1\n"
		"    @T.prim_func\n"
		"    def g(A: T.Buffer[(8,), \"int32\"]):\n"
		"        for j in T.serial(8):\n"
		"            A[j] = 2\n";
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
	suite_add_tcase(s, tc);
	return s;
}
