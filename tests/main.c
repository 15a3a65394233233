/* tests/main.c — the one check runner. Each tests/test_<module>.c defines
 * `Suite *suite_<module>(void)`; suites not linked in yet are skipped
 * (weak references). CK_RUN_SUITE / CK_RUN_CASE select a subset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define VS_SUITES(X) \
	X(ir) X(parse) X(print) X(interp) X(smt) X(schedule) X(split) \
	X(fuse) X(reorder) X(parallel) X(script) X(report) X(log) X(api) \
	X(cli) X(conformance) X(soundness) X(layout) X(overcompute) \
	X(backend) X(compute_at) X(examples) X(hoist) X(merge) X(cache) \
	X(simplify) X(seq_access) X(analysis)

#define X(name) Suite *suite_##name(void) __attribute__((weak));
VS_SUITES(X)
#undef X

int main(void)
{
	SRunner *sr = NULL;
#define X(name)                                           \
	if (suite_##name) {                               \
		if (!sr)                                  \
			sr = srunner_create(suite_##name()); \
		else                                      \
			srunner_add_suite(sr, suite_##name()); \
	}
	VS_SUITES(X)
#undef X
	if (!sr) {
		fprintf(stderr, "no test suites linked\n");
		return 1;
	}
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
