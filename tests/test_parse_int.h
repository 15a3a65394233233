/* tests/test_parse_int.h — private to the parse suite (test_parse.c,
 * test_parse_forms.c): parsing a text or the conformance case files, and
 * the table-driven TCases both files register. Each file that includes it
 * gets its own arena and fixture (the helpers are static inline and use
 * them). */
#ifndef VS_TESTS_TEST_PARSE_INT_H
#define VS_TESTS_TEST_PARSE_INT_H

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/parse.h"
#include "tests/testutil.h"

static Arena arena;
static DiagList diags;

static inline void setup(void)
{
	arena_init(&arena);
	diag_init(&diags, &arena);
}

static inline void teardown(void) { arena_free(&arena); }

static inline Module *parse_text(const char *text)
{
	diag_init(&diags, &arena);
	Source *src = source_from_string(&arena, "k.tir", text);
	return parse_module(&arena, src, &diags);
}

/* Parse or fail the test with the rendered diagnostics. */
static inline Module *parse_ok(const char *text)
{
	Module *m = parse_text(text);
	if (!m) {
		char *r = diag_render(&diags);
		ck_abort_msg("parse failed:\n%s\nfor:\n%s", r, text);
	}
	ck_assert_int_eq(diags.nerrors, 0);
	return m;
}

static inline Func *func_ok(const char *text) { return parse_ok(text)->funcs[0]; }

#define HDR                                                                    \
	"@T.prim_func\n"                                                       \
	"def f(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(4, 4), \"float32\"], " \
	"C: T.Buffer[(2,), \"float64\"], n: T.int32):\n"

/* The body of f for HDR + lines. */
static inline Stmt *body_ok(const char *lines)
{
	char *text = arena_printf(&arena, "%s%s", HDR, lines);
	return func_ok(text)->body;
}

/* The value stored by a body that is one store statement. */
static inline Expr *stored_value(const char *lines)
{
	Stmt *s = body_ok(lines);
	ck_assert_int_eq(s->kind, ST_STORE);
	return s->u.store.value;
}

static const char *shared_dir(void)
{
	const char *env = getenv("VS_SHARED");
	return env && *env ? env : "../shared";
}
/* Calls fn(path) for every conformance case file `name`; returns count. */
static inline int for_each_case_file(const char *name, void (*fn)(const char *path))
{
	char *dir = arena_printf(&arena, "%s/conformance", shared_dir());
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s (set VS_SHARED)", dir);
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = arena_printf(&arena, "%s/%s/%s", dir, e->d_name, name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		fclose(f);
		fn(path);
		count++;
	}
	closedir(d);
	return count;
}

/* One TCase of the suite's table: its name and up to 12 tests. */
typedef struct ParseCase {
	const char *name;
	const TTest *tests[12];
} ParseCase;

/* Add each case as a TCase with this file's fixture. */
static inline void parse_add_cases(Suite *s, const ParseCase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 60);
		for (int k = 0; k < 12 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
}

/* test_parse_forms.c: its TCases, after test_parse.c's. */
void parse_forms_add_cases(Suite *s);

#endif
