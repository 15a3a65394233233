/* tests/testutil.c — helpers shared by the check suites (see testutil.h). */
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

Module *tu_parse(Arena *a, const char *name, const char *text)
{
	DiagList d;
	diag_init(&d, a);
	Module *m = parse_module(a, source_from_string(a, name, text), &d);
	if (!m) {
		char *msg = diag_render(&d);
		ck_abort_msg("parse failed:\n%s", msg);
	}
	return m;
}

Schedule *tu_schedule(Arena *a, Module *m)
{
	SmtOptions opt = {0};
	opt.timeout_ms = 10000;
	return sched_new(a, m, &opt);
}

StepStatus tu_run(Schedule *s, const char *script)
{
	DiagList d;
	diag_init(&d, s->arena);
	Script *sc = script_parse(s->arena, source_from_string(s->arena, "test.sched", script), &d);
	if (!sc) {
		char *msg = diag_render(&d);
		ck_abort_msg("script parse failed:\n%s", msg);
	}
	return sched_run_script(s, sc, &d);
}

StepReport *tu_last(Schedule *s)
{
	ck_assert_int_gt(s->nsteps, 0);
	return s->steps[s->nsteps - 1];
}

bool tu_equiv(const Func *before, const Func *after, int trials, char **report)
{
	*report = NULL;
	return interp_equiv(before, after, trials, 7, report) == 0;
}

void tu_assert_equiv(const Func *before, const Func *after, int trials)
{
	char *report = NULL;
	if (!tu_equiv(before, after, trials, &report)) {
		char *a = print_func(before), *b = print_func(after);
		ck_abort_msg("not equivalent: %s\nbefore:\n%s\nafter:\n%s", report ? report : "?", a, b);
	}
	free(report);
}

const char *tu_shared_dir(void)
{
	const char *env = getenv("VS_SHARED");
	const char *dir = env && *env ? env : "../shared";
	struct stat st;
	char path[4096];
	snprintf(path, sizeof path, "%s/conformance", dir);
	return stat(path, &st) == 0 ? dir : NULL;
}

char *tu_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	fclose(f);
	return s;
}

char *tu_join(char *out, size_t n, const char *a, const char *b)
{
	int len = snprintf(out, n, "%s/%s", a, b);
	ck_assert_msg(len >= 0 && (size_t)len < n, "path too long: %s/%s", a, b);
	return out;
}
