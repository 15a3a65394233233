/* tests/test_soundness.c — property test: random small int32 kernels
 * (several nests, affine reads at offsets, guards, reductions) and random
 * sequences of primitives; every committed step is compared with the
 * original kernel by the interpreter on random admissible inputs. Also
 * shows the comparison can fail: deliberately wrong variants of split and
 * reorder (no obligations discharged) are caught, and the real primitives
 * reject the same cases. VS_SOUNDNESS_STEPS overrides the step count. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "randkernel.h"
#include "testutil.h"

typedef struct Tally {
	int steps, committed, rejected, disagreements;
	char first_failure[4096];
} Tally;

static void run_kernel(Arena *a, Tally *t, int nsteps, unsigned seed)
{
	char *text = gen_kernel();
	Module *m = tu_parse(a, "random.tir", text);
	Schedule *s = tu_schedule(a, m);
	for (int k = 0; k < nsteps; k++) {
		LoopRef loops[64];
		int n = 0;
		collect_loops(sched_func(s)->body, loops, &n, 64);
		if (n == 0)
			break;
		RwCtx c;
		DiagList d;
		diag_init(&d, a);
		char desc[256];
		sched_begin(s, &c, "random", (Span){0}, &d);
		RwStatus st = random_step(&c, loops, n, desc, sizeof desc);
		c.desc = arena_strdup(a, desc);
		StepReport *r = sched_finish(s, &c, st);
		t->steps++;
		if (r->status != STEP_COMMITTED) {
			t->rejected++;
			continue;
		}
		t->committed++;
		char *report = NULL;
		if (interp_equiv(m->funcs[0], sched_func(s), 2, seed + (unsigned)k, &report) != 0) {
			if (!t->disagreements++) {
				char *after = print_func(sched_func(s));
				snprintf(t->first_failure, sizeof t->first_failure,
					 "step %s\n%s\nkernel:\n%s\nafter:\n%s", desc,
					 report ? report : "", text, after);
				free(after);
			}
		}
		free(report);
	}
	sched_free(s);
	free(text);
}

START_TEST(random_schedules_agree_with_interpreter)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) : 2000;
	Tally t;
	memset(&t, 0, sizeof t);
	rng_state = 0x2545F4914F6CDD1Dull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_kernel(&a, &t, 8, kernel * 131u + 1);
		arena_free(&a);
	}
	fprintf(stderr, "soundness: %d steps, %d committed, %d rejected, %d disagreements\n",
		t.steps, t.committed, t.rejected, t.disagreements);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* both outcomes must be exercised, or the test proves nothing */
	ck_assert_int_gt(t.committed, t.steps / 5);
	ck_assert_int_gt(t.rejected, t.steps / 20);
}
END_TEST

/* ---------- the check can fail ---------- */

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* A primitive's output taken without its obligations (a buggy variant
 * that trusts instead of proving). */
static Func *unchecked(Module *m, RwStatus (*apply)(RwCtx *, void *), void *arg)
{
	Schedule *s = tu_schedule(&arena, m);
	RwCtx c;
	DiagList d;
	diag_init(&d, &arena);
	sched_begin(s, &c, "unchecked", (Span){0}, &d);
	ck_assert_int_eq(apply(&c, arg), RW_OK);
	ck_assert_int_gt(c.obs.n, 0); /* the real primitive has something to prove */
	sched_free(s);
	return c.out;
}

static RwStatus split_perfect_4(RwCtx *c, void *arg)
{
	return rw_split(c, (const char *)arg, 4, TAIL_PERFECT, NULL, NULL);
}

static RwStatus reorder_ji(RwCtx *c, void *arg)
{
	(void)arg;
	const char *order[2] = {"j", "i"};
	return rw_reorder(c, 2, order);
}

START_TEST(wrong_split_variant_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir",
			     "@T.prim_func\n"
			     "def f(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
			     "    for i in T.serial(14):\n"
			     "        B[i] = A[i] + 1\n");
	/* off by one tile: 14 // 4 tiles drop the last two elements */
	Func *bad = unchecked(m, split_perfect_4, "i");
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	ck_assert_ptr_nonnull(report);
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.split(\"i\", factor=4, tail=\"perfect\")"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

START_TEST(reorder_without_dependence_check_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir",
			     "@T.prim_func\n"
			     "def w(A: T.Buffer[(8, 9), \"int32\"]):\n"
			     "    for i, j in T.grid(7, 8):\n"
			     "        A[i + 1, j] = A[i, j + 1] + 1\n");
	Func *bad = unchecked(m, reorder_ji, NULL);
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

Suite *suite_soundness(void)
{
	Suite *s = suite_create("soundness");
	TCase *tc = tcase_create("random_schedules");
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, random_schedules_agree_with_interpreter);
	suite_add_tcase(s, tc);
	tc = tcase_create("checks_can_fail");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wrong_split_variant_is_caught);
	tcase_add_test(tc, reorder_without_dependence_check_is_caught);
	suite_add_tcase(s, tc);
	return s;
}
