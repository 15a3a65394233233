/* tests/test_scale.c — Exo's AVX-512 SGEMM and x86 conv schedules as
 * ported to vsched (bench/scale/, measured by `make bench`): at their
 * benchmark sizes every step commits; on small copies of the kernels
 * (the conv with the very same schedule, the SGEMM with its L1 blocks
 * scaled down and every other call the same) every step commits too and
 * the result agrees with the original under the interpreter. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;

static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static Module *load(const char *name, const char *text)
{
	return tu_parse(&arena, name, text);
}

/* Run the schedule file on m; every step must commit. Returns the
 * schedule (the caller frees it); *nsteps the steps taken. */
static Schedule *run_all(Module *m, const char *sched_path, int *nsteps)
{
	DiagList d;
	diag_init(&d, &arena);
	Schedule *s = tu_schedule(&arena, m);
	Source *src = source_read_file(&arena, sched_path, &d);
	Script *sc = src ? script_parse(&arena, src, &d) : NULL;
	ck_assert_msg(sc != NULL, "%s: %s", sched_path, diag_render(&d));
	StepStatus st = sched_run_script(s, sc, &d);
	for (int i = 0; i < s->nsteps; i++)
		ck_assert_msg(s->steps[i]->status == STEP_COMMITTED, "%s: %s", sched_path,
			      sched_report_text(s->steps[i]));
	ck_assert_msg(st == STEP_COMMITTED, "%s: %s", sched_path, diag_render(&d));
	*nsteps = s->nsteps;
	return s;
}

static Module *load_file(const char *path)
{
	char *text = tu_read_file(path);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	Module *m = load(path, arena_strdup(&arena, text));
	free(text);
	return m;
}

START_TEST(sgemm_port_commits_every_step)
{
	int n;
	Schedule *s = run_all(load_file("bench/scale/sgemm.tir"), "bench/scale/sgemm.sched", &n);
	ck_assert_int_eq(n, 23);
	char *text = ts_print(&arena, sched_func(s));
	/* B and A staged per L1 block, C's register tile written back per
	 * 6 x 64 tile, 16 lanes vectorized */
	ts_has(text, "B_cache = T.alloc_buffer([512, 64]");
	ts_has(text, "A_cache = T.alloc_buffer([264, 512]");
	ts_has(text, "for jii in T.vectorized(16):");
	sched_free(s);
}
END_TEST

START_TEST(conv_port_commits_every_step)
{
	int n;
	Schedule *s = run_all(load_file("bench/scale/conv.tir"), "bench/scale/conv.sched", &n);
	ck_assert_int_eq(n, 41);
	char *text = ts_print(&arena, sched_func(s));
	ts_has(text, "wt_vec = T.alloc_buffer([1, 1, 1, 16]");
	ts_has(text, "for ky, kx, kc_o, kc_i, ox_i, oc_u in T.grid(3, 3, 64, 2, 5, 4):");
	sched_free(s);
}
END_TEST

START_TEST(conv_schedule_on_a_small_conv_agrees_with_the_original)
{
	Module *m = load("conv_small.tir", tu_fixture("scale/conv_small.tir"));
	int n;
	Schedule *s = run_all(m, "bench/scale/conv.sched", &n);
	ck_assert_int_eq(n, 41);
	tu_assert_equiv(m->funcs[0], sched_func(s), 3);
	sched_free(s);
}
END_TEST

/* The calls of a script with comments and blank lines left out and every
 * number replaced by '#'. */
static char *calls_without_numbers(const char *text)
{
	StrBuf b = {0};
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (*line != '#' && end > line)
			for (const char *p = line; p < end; p++) {
				if (isdigit((unsigned char)*p)) {
					while (p + 1 < end && isdigit((unsigned char)p[1]))
						p++;
					sb_puts(&b, "#");
				} else {
					sb_printf(&b, "%c", *p);
				}
			}
		if (*line != '#' && end > line)
			sb_puts(&b, "\n");
		line = *end ? end + 1 : end;
	}
	char *t = sb_take(&b);
	char *r = arena_strdup(&arena, t ? t : "");
	free(t);
	return r;
}

START_TEST(sgemm_schedule_on_a_small_sgemm_agrees_with_the_original)
{
	/* the small script is the benchmark's, but for its block sizes */
	char *big = tu_read_file("bench/scale/sgemm.sched");
	ck_assert_ptr_nonnull(big);
	ck_assert_str_eq(calls_without_numbers(tu_fixture("scale/sgemm_small.sched")),
			 calls_without_numbers(big));
	free(big);
	Module *m = load("sgemm_small.tir", tu_fixture("scale/sgemm_small.tir"));
	int n;
	Schedule *s = run_all(m, "tests/data/scale/sgemm_small.sched", &n);
	ck_assert_int_eq(n, 23);
	tu_assert_equiv(m->funcs[0], sched_func(s), 4);
	sched_free(s);
}
END_TEST

Suite *suite_scale(void)
{
	Suite *s = suite_create("scale");
	TCase *tc = tcase_create("exo_ports");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120); /* about 1 s each; slow under asan */
	tcase_add_test(tc, sgemm_port_commits_every_step);
	tcase_add_test(tc, conv_port_commits_every_step);
	tcase_add_test(tc, conv_schedule_on_a_small_conv_agrees_with_the_original);
	tcase_add_test(tc, sgemm_schedule_on_a_small_sgemm_agrees_with_the_original);
	suite_add_tcase(s, tc);
	return s;
}
