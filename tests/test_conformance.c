/* tests/test_conformance.c — every case of ../shared/conformance through
 * the library: the verdict, the reason of every rejection (a refutation's
 * replay must be confirmed unless the report says it cannot be), the
 * interpreter check of every accepted result against before.tir and
 * after.tir, max_store_ifs, and an independent re-check of the proof log
 * with cvc5 and the z3 binary. A case expected to be accepted that is
 * rejected for any reason, "not supported" included, fails. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testsched.h"

typedef struct Expect {
	bool accept;
	char equiv[256];
	int max_store_ifs; /* -1 if absent */
} Expect;

static bool read_expect(const char *dir, Expect *e)
{
	char path[4096];
	tu_join(path, sizeof path, dir, "expect");
	char *text = tu_read_file(path);
	if (!text)
		return false;
	memset(e, 0, sizeof *e);
	e->max_store_ifs = -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "verdict:", 8) == 0)
			e->accept = strstr(line, "accept") != NULL;
		else if (strncmp(line, "equiv:", 6) == 0)
			sscanf(line + 6, " %255s", e->equiv);
		else if (strncmp(line, "max_store_ifs:", 14) == 0)
			e->max_store_ifs = atoi(line + 14);
	}
	free(text);
	return true;
}

typedef struct Tally {
	int passed;
} Tally;

static Module *parse_path(Arena *a, const char *path)
{
	DiagList d;
	diag_init(&d, a);
	Source *src = source_read_file(a, path, &d);
	Module *m = src ? parse_module(a, src, &d) : NULL;
	if (!m) {
		char *msg = diag_render(&d);
		ck_abort_msg("%s does not parse:\n%s", path, msg);
	}
	return m;
}

static void run_case(const char *dir, const char *name, const char *logroot, Tally *t)
{
	Expect e;
	if (!read_expect(dir, &e))
		return;
	Arena a;
	arena_init(&a);
	char path[4096];
	tu_join(path, sizeof path, dir, "before.tir");
	Module *m = parse_path(&a, path);
	SmtOptions opt = {0};
	opt.timeout_ms = 20000;
	Schedule *s = sched_new(&a, m, &opt);
	tu_join(path, sizeof path, logroot, name);
	DiagList d;
	diag_init(&d, &a);
	s->log = proof_log_open(path, &d);
	ck_assert_msg(s->log != NULL, "cannot open log %s", path);
	tu_join(path, sizeof path, dir, "schedule.sched");
	Source *src = source_read_file(&a, path, &d);
	Script *sc = src ? script_parse(&a, src, &d) : NULL;
	ck_assert_msg(sc != NULL, "%s: schedule does not parse", name);
	StepStatus st = sched_run_script(s, sc, &d);
	ck_assert_msg(st != STEP_BAD_INPUT, "%s: bad input: %s", name, diag_render(&d));
	StepReport *last = s->nsteps ? s->steps[s->nsteps - 1] : NULL;
	if (!e.accept) {
		ck_assert_msg(st == STEP_REJECTED, "%s: expected reject, got commit", name);
		ck_assert_msg(last->reason && *last->reason, "%s: rejection without reason", name);
		if (last->failed >= 0 && last->results[last->failed].verdict == VERDICT_REFUTED)
			ck_assert_msg(last->replay == REPLAY_CONFIRMED || last->replay == REPLAY_IMPOSSIBLE,
				      "%s: replay %d not confirmed:\n%s", name, last->replay,
				      sched_report_text(last));
	} else {
		ck_assert_msg(st == STEP_COMMITTED, "%s: expected accept:\n%s", name,
			      last ? sched_report_text(last) : "no step");
		Func *out = sched_func(s);
		Func *orig = module_find_func(m, out->name);
		tu_assert_equiv(orig, out, 6);
		if (e.equiv[0]) {
			tu_join(path, sizeof path, dir, e.equiv);
			Module *want = parse_path(&a, path);
			tu_assert_equiv(out, module_find_func(want, out->name) ? module_find_func(want, out->name)
									      : want->funcs[0], 6);
		}
		if (e.max_store_ifs >= 0)
			ck_assert_msg(ts_store_ifs(out->body) <= e.max_store_ifs,
				      "%s: %d store-guarding ifs, want at most %d", name,
				      ts_store_ifs(out->body), e.max_store_ifs);
	}
	t->passed++;
	sched_free(s);
	arena_free(&a);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

START_TEST(conformance_cases_give_expected_verdicts)
{
	const char *shared = tu_shared_dir();
	if (!shared) {
		fprintf(stderr, "conformance: shared folder not found, skipped\n");
		return;
	}
	char logroot[] = "/tmp/vsched-conf-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(logroot));
	Tally t;
	memset(&t, 0, sizeof t);
	/* the cases, and those written as TVM writes TensorIR */
	static const char *const folders[] = {"conformance", "conformance-tensorir"};
	for (int f = 0; f < 2; f++) {
		char root[4096];
		tu_join(root, sizeof root, shared, folders[f]);
		DIR *dir = opendir(root);
		ck_assert_ptr_nonnull(dir);
		char *names[256];
		int n = 0;
		for (struct dirent *de; (de = readdir(dir)) && n < 256;)
			if (de->d_name[0] != '.' && strcmp(de->d_name, "README.md") != 0)
				names[n++] = strdup(de->d_name);
		closedir(dir);
		qsort(names, (size_t)n, sizeof *names, cmp_str);
		for (int i = 0; i < n; i++) {
			char path[4096];
			tu_join(path, sizeof path, root, names[i]);
			run_case(path, names[i], logroot, &t);
			free(names[i]);
		}
	}
	fprintf(stderr, "conformance: %d passed\n", t.passed);
	ck_assert_int_gt(t.passed, 0);
	/* every logged obligation re-checked by independent solvers */
	DIR *logs = opendir(logroot);
	ck_assert_ptr_nonnull(logs);
	for (struct dirent *de; (de = readdir(logs));) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		tu_join(path, sizeof path, logroot, de->d_name);
		for (int k = 0; k < 2; k++) {
			char *out = NULL;
			int rc = proof_log_check(path, k ? "z3" : "cvc5", &out);
			ck_assert_msg(rc == 0, "log check (%s) of %s failed:\n%s", k ? "z3" : "cvc5",
				      de->d_name, out ? out : "");
			free(out);
		}
	}
	closedir(logs);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", logroot);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_conformance(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("cases");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, conformance_cases_give_expected_verdicts);
	suite_add_tcase(s, tc);
	return s;
}
