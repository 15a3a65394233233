/* tests/testutil.c — helpers shared by the check suites (see testutil.h). */
#include "tests/testutil.h"

#include <check.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Fixture texts read so far: a test may ask for the same file many times
 * (a table-driven case, a shared kernel), and with CK_FORK=no (make asan)
 * every test shares the process, so each file is read once and all are
 * freed at exit, before the leak check. */
typedef struct Fixture {
	struct Fixture *next;
	char *relpath;
	char *text;
} Fixture;

static Fixture *fixtures;
static bool fixtures_registered;

static void fixtures_free(void)
{
	while (fixtures) {
		Fixture *f = fixtures;
		fixtures = f->next;
		free(f->relpath);
		free(f->text);
		free(f);
	}
}

const char *tu_fixture(const char *relpath)
{
	for (Fixture *f = fixtures; f; f = f->next)
		if (strcmp(f->relpath, relpath) == 0)
			return f->text;
	char path[4096];
	int len = snprintf(path, sizeof path, "tests/data/%s", relpath);
	ck_assert_msg(len >= 0 && (size_t)len < sizeof path, "fixture path too long: %s", relpath);
	char *text = tu_read_file(path);
	ck_assert_msg(text != NULL, "cannot read fixture %s: %s (the suites run from the top of the tree)",
		      path, strerror(errno));
	Fixture *f = malloc(sizeof *f);
	ck_assert_ptr_nonnull(f);
	if (!fixtures_registered)
		fixtures_registered = atexit(fixtures_free) == 0;
	*f = (Fixture){fixtures, strdup(relpath), text};
	ck_assert_ptr_nonnull(f->relpath);
	fixtures = f;
	return text;
}

char *tu_join(char *out, size_t n, const char *a, const char *b)
{
	int len = snprintf(out, n, "%s/%s", a, b);
	ck_assert_msg(len >= 0 && (size_t)len < n, "path too long: %s/%s", a, b);
	return out;
}

/* ---------- running the vsched program ---------- */

const char *tu_vsched_bin(void)
{
	const char *env = getenv("VS_BIN");
	return env && *env ? env : "./vsched";
}

void tu_tmpdir(char *out, size_t n)
{
	snprintf(out, n, "/tmp/vsched-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(out));
}

void tu_rmdir(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tests: could not remove %s\n", dir);
}

int tu_sh(const char *cmd, char **out, char **err)
{
	char dir[64];
	tu_tmpdir(dir, sizeof dir);
	char *full = NULL;
	ck_assert_int_ge(asprintf(&full, "(%s) > '%s/out' 2> '%s/err' < /dev/null", cmd, dir, dir), 0);
	int rc = system(full);
	free(full);
	char path[128];
	snprintf(path, sizeof path, "%s/out", dir);
	char *o = tu_read_file(path);
	snprintf(path, sizeof path, "%s/err", dir);
	char *e = tu_read_file(path);
	tu_rmdir(dir);
	if (out)
		*out = o ? o : strdup("");
	else
		free(o);
	if (err)
		*err = e ? e : strdup("");
	else
		free(e);
	return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A small recursive-descent JSON checker: enough to say that --json
 * output is well-formed, not a parser. */
typedef struct JsonIn {
	const char *p;
	int depth;
} JsonIn;

static bool json_value(JsonIn *j);

static void json_ws(JsonIn *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static bool json_string(JsonIn *j)
{
	if (*j->p != '"')
		return false;
	for (j->p++; *j->p != '"'; j->p++) {
		unsigned char ch = (unsigned char)*j->p;
		if (ch < 0x20)
			return false;
		if (ch != '\\')
			continue;
		j->p++;
		if (*j->p == 'u') {
			for (int k = 1; k <= 4; k++)
				if (!strchr("0123456789abcdefABCDEF", j->p[k]) || !j->p[k])
					return false;
			j->p += 4;
		} else if (!*j->p || !strchr("\"\\/bfnrt", *j->p)) {
			return false;
		}
	}
	j->p++;
	return true;
}

static bool json_number(JsonIn *j)
{
	const char *s = j->p;
	if (*j->p == '-')
		j->p++;
	if (*j->p == '0')
		j->p++;
	else if (*j->p >= '1' && *j->p <= '9')
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	else
		return false;
	if (*j->p == '.') {
		j->p++;
		if (!(*j->p >= '0' && *j->p <= '9'))
			return false;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		if (!(*j->p >= '0' && *j->p <= '9'))
			return false;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	return j->p > s;
}

static bool json_list(JsonIn *j, char close, bool members)
{
	j->p++;
	json_ws(j);
	if (*j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		json_ws(j);
		if (members) {
			if (!json_string(j))
				return false;
			json_ws(j);
			if (*j->p++ != ':')
				return false;
		}
		if (!json_value(j))
			return false;
		json_ws(j);
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool json_value(JsonIn *j)
{
	if (++j->depth > 200)
		return false;
	json_ws(j);
	bool ok;
	switch (*j->p) {
	case '{': ok = json_list(j, '}', true); break;
	case '[': ok = json_list(j, ']', false); break;
	case '"': ok = json_string(j); break;
	case 't': ok = strncmp(j->p, "true", 4) == 0 && (j->p += 4); break;
	case 'f': ok = strncmp(j->p, "false", 5) == 0 && (j->p += 5); break;
	case 'n': ok = strncmp(j->p, "null", 4) == 0 && (j->p += 4); break;
	default: ok = json_number(j); break;
	}
	j->depth--;
	return ok;
}

bool tu_json_valid(const char *text)
{
	JsonIn j = {text, 0};
	if (!json_value(&j))
		return false;
	json_ws(&j);
	return *j.p == 0;
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sorted entries of dir (malloc'ed names), without dot files. */
int tu_list_dir(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	*out = NULL;
	if (!d)
		return 0;
	int n = 0, cap = 0;
	char **names = NULL;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, sizeof(char *) * (size_t)cap);
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), cmp_names);
	*out = names;
	return n;
}

void tu_free_list(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
