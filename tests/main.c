/* tests/main.c — the one check runner. Each tests/test_<module>.c defines
 * `Suite *suite_<module>(void)` and VS_SUITES lists every one of them, so
 * a renamed or missing suite is a link error and a new suite is one line
 * here (scripts/suites.sh checks the list against the definitions).
 * CK_RUN_SUITE / CK_RUN_CASE select a subset; naming a suite or case that
 * does not exist fails instead of running nothing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VS_SUITES(X)                                                          \
	X(ir) X(parse) X(print) X(interp) X(smt) X(schedule) X(split)          \
	X(fuse) X(reorder) X(parallel) X(script) X(report) X(log) X(api)       \
	X(cli) X(conformance) X(soundness) X(layout) X(overcompute)            \
	X(backend) X(compute_at) X(examples) X(hoist) X(merge) X(cache)        \
	X(simplify) X(seq_access) X(layering) X(verify) X(tvm) \
	X(analysis) X(tensorir) X(pcache)

#define X(name) Suite *suite_##name(void);
VS_SUITES(X)
#undef X

typedef struct NamedSuite {
	const char *name; /* the name suite_<name> gives suite_create */
	Suite *suite;
} NamedSuite;

/* The environment variable `var`, or NULL when unset or empty (check
 * treats an empty selection as no selection). */
static const char *selection(const char *var)
{
	const char *v = getenv(var);
	return v && *v ? v : NULL;
}

/* CK_RUN_SUITE / CK_RUN_CASE must name something that exists: check
 * itself would quietly run nothing. Returns whether the selection is
 * valid, printing why not. */
static int selection_exists(const NamedSuite *all, size_t n)
{
	const char *suite = selection("CK_RUN_SUITE"), *tcase = selection("CK_RUN_CASE");
	int suite_found = 0, case_found = 0;
	for (size_t i = 0; i < n; i++) {
		if (suite && strcmp(suite, all[i].name) != 0)
			continue;
		suite_found = 1;
		if (tcase && suite_tcase(all[i].suite, tcase))
			case_found = 1;
	}
	if (suite && !suite_found) {
		fprintf(stderr, "CK_RUN_SUITE=%s: no such suite; the suites are:", suite);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %s", all[i].name);
		fprintf(stderr, "\n");
		return 0;
	}
	if (tcase && !case_found) {
		fprintf(stderr, "CK_RUN_CASE=%s: no such test case in %s%s\n", tcase,
			suite ? "suite " : "any suite", suite ? suite : "");
		return 0;
	}
	return 1;
}

int main(void)
{
	NamedSuite all[] = {
#define X(name) {#name, suite_##name()},
		VS_SUITES(X)
#undef X
	};
	size_t n = sizeof all / sizeof all[0];
	SRunner *sr = srunner_create(all[0].suite); /* owns the suites */
	for (size_t i = 1; i < n; i++)
		srunner_add_suite(sr, all[i].suite);
	if (!selection_exists(all, n)) {
		srunner_free(sr);
		return EXIT_FAILURE;
	}
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	int ran = srunner_ntests_run(sr);
	srunner_free(sr);
	if (ran == 0) {
		fprintf(stderr, "no tests ran\n");
		return EXIT_FAILURE;
	}
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
