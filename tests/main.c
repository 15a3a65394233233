/* tests/main.c — the one check runner. Each tests/test_<module>.c defines
 * `Suite *suite_<module>(void)` and VS_SUITES lists every one of them, so
 * a renamed or missing suite is a link error and a new suite is one line
 * here (scripts/suites.sh checks the list against the definitions).
 * CK_RUN_SUITE / CK_RUN_CASE select a subset; naming a suite or case that
 * does not exist fails instead of running nothing. VS_TEST_JOBS=N runs the
 * suites in N worker processes (each takes the next suite not yet taken,
 * the slow ones first), so `make test` uses every core; each suite's
 * summary line carries its time. */
#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VS_SUITES(X)                                                          \
	X(ir) X(parse) X(print) X(interp) X(smt) X(schedule) X(split)          \
	X(fuse) X(reorder) X(parallel) X(script) X(report) X(log) X(api)       \
	X(cli) X(conformance) X(soundness) X(layout) X(overcompute)            \
	X(backend) X(compute_at) X(examples) X(hoist) X(merge) X(cache)        \
	X(simplify) X(seq_access) X(layering) X(verify) X(tvm) \
	X(analysis) X(tensorir) X(pcache) X(scale) X(reindex) \
	X(lift_alloc) X(specialize)

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

/* ---------- a time limit without fork ----------
 * make asan runs CK_FORK=no, where check enforces no time limit at all:
 * every test then gets one of its own, VS_TEST_TIME_LIMIT seconds (900 by
 * default), armed by a fixture that the link adds to every test case
 * (-Wl,--wrap=tcase_create) on a POSIX timer. Past it the worker stops
 * with a message and its suite is reported unfinished. */
TCase *__real_tcase_create(const char *name);
TCase *__wrap_tcase_create(const char *name);

static unsigned nofork_limit; /* seconds; 0 = fork mode, check's own limits */
static timer_t limit_timer;
static bool limit_timer_made;

/* Not SIGALRM: check's own handler for it (meant for fork mode) kills the
 * whole process group when it fires without fork. The timer runs this
 * on a thread of its own. */
static void on_limit(union sigval v)
{
	(void)v;
	static const char m[] = "run_tests: a test ran past VS_TEST_TIME_LIMIT "
				"(CK_FORK=no); this worker stops\n";
	ssize_t w = write(STDERR_FILENO, m, sizeof m - 1);
	(void)w;
	_exit(3);
}

static void set_limit(unsigned seconds)
{
	if (!limit_timer_made)
		return;
	struct itimerspec t = {.it_value = {.tv_sec = seconds}};
	timer_settime(limit_timer, 0, &t, NULL);
}

static void arm_limit(void) { set_limit(nofork_limit); }
static void disarm_limit(void) { set_limit(0); }

/* A process's timer: made in each worker (timers are not inherited). */
static void make_limit_timer(void)
{
	if (!nofork_limit)
		return;
	struct sigevent ev = {.sigev_notify = SIGEV_THREAD,
			      .sigev_notify_function = on_limit};
	limit_timer_made = timer_create(CLOCK_MONOTONIC, &ev, &limit_timer) == 0;
	if (!limit_timer_made)
		perror("run_tests: timer_create (no per-test time limit)");
}

TCase *__wrap_tcase_create(const char *name)
{
	TCase *tc = __real_tcase_create(name);
	tcase_add_checked_fixture(tc, arm_limit, disarm_limit);
	return tc;
}

/* The suites known to be slow start first, so the workers end together. */
static const char *const slow_first[] = {
	"tvm", "soundness", "conformance", "backend", "examples", "smt",
	"tensorir", "cli", "api", "overcompute", "layout", "compute_at",
};

typedef struct SuiteResult {
	int ran, failed;
	double seconds;
	int done;
} SuiteResult;

typedef struct Board {
	atomic_int next;
	SuiteResult res[];
} Board;

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Run one suite with a runner of its own (which frees it). */
static void run_one(NamedSuite *ns, SuiteResult *r)
{
	double t0 = now_seconds();
	SRunner *sr = srunner_create(ns->suite);
	ns->suite = NULL;
	srunner_run_all(sr, CK_NORMAL);
	r->failed = srunner_ntests_failed(sr);
	r->ran = srunner_ntests_run(sr);
	srunner_free(sr);
	r->seconds = now_seconds() - t0;
	r->done = 1;
	printf("suite %s: %d checks, %d failed, %.1f s\n", ns->name, r->ran,
	       r->failed, r->seconds);
	fflush(stdout);
}

/* Free the suites this process did not run (a runner owns and frees its
 * suites; check has no other way). */
static void free_unrun(NamedSuite *all, size_t n)
{
	SRunner *sr = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!all[i].suite)
			continue;
		if (!sr)
			sr = srunner_create(all[i].suite);
		else
			srunner_add_suite(sr, all[i].suite);
		all[i].suite = NULL;
	}
	if (sr)
		srunner_free(sr);
}

static void work(NamedSuite *all, const size_t *order, size_t norder,
		 Board *b)
{
	for (int k; (k = atomic_fetch_add(&b->next, 1)) < (int)norder;)
		run_one(&all[order[k]], &b->res[order[k]]);
}

int main(void)
{
	NamedSuite all[] = {
#define X(name) {#name, suite_##name()},
		VS_SUITES(X)
#undef X
	};
	size_t n = sizeof all / sizeof all[0];
	if (!selection_exists(all, n)) {
		free_unrun(all, n);
		return EXIT_FAILURE;
	}
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode && strcmp(fork_mode, "no") == 0) {
		const char *lv = selection("VS_TEST_TIME_LIMIT");
		long lim = lv ? strtol(lv, NULL, 10) : 900;
		nofork_limit = lim > 0 ? (unsigned)lim : 0;
	}
	/* the order: the selected suites, the known slow ones first */
	const char *only = selection("CK_RUN_SUITE");
	size_t order[sizeof all / sizeof all[0]], norder = 0;
	bool taken[sizeof all / sizeof all[0]] = {false};
	for (size_t h = 0; h < sizeof slow_first / sizeof slow_first[0]; h++)
		for (size_t i = 0; i < n; i++)
			if (!taken[i] && strcmp(all[i].name, slow_first[h]) == 0) {
				taken[i] = true;
				order[norder++] = i;
			}
	for (size_t i = 0; i < n; i++)
		if (!taken[i])
			order[norder++] = i;
	if (only) {
		size_t m = 0;
		for (size_t k = 0; k < norder; k++)
			if (strcmp(all[order[k]].name, only) == 0)
				order[m++] = order[k];
		norder = m;
	}

	const char *jv = selection("VS_TEST_JOBS");
	long jobs = jv ? strtol(jv, NULL, 10) : 1;
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > norder)
		jobs = (long)(norder ? norder : 1);
	size_t bytes = sizeof(Board) + sizeof(SuiteResult) * n;
	Board *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		perror("run_tests: mmap");
		free_unrun(all, n);
		return EXIT_FAILURE;
	}
	memset(b, 0, bytes);
	atomic_init(&b->next, 0);
	/* lines, not blocks: a forked test must not inherit unwritten
	 * output, and two workers' lines must not interleave mid-line */
	setvbuf(stdout, NULL, _IOLBF, 0);
	double t0 = now_seconds();
	bool worker_died = false;
	if (jobs == 1) {
		make_limit_timer();
		work(all, order, norder, b);
	} else {
		pid_t pids[jobs];
		for (long w = 0; w < jobs; w++) {
			pids[w] = fork();
			if (pids[w] == 0) {
				make_limit_timer();
				work(all, order, norder, b);
				free_unrun(all, n);
				fflush(stdout);
				exit(EXIT_SUCCESS);
			}
			if (pids[w] < 0) {
				perror("run_tests: fork");
				worker_died = true;
			}
		}
		for (long w = 0; w < jobs; w++) {
			int st;
			if (pids[w] > 0 &&
			    (waitpid(pids[w], &st, 0) < 0 || !WIFEXITED(st) ||
			     WEXITSTATUS(st) != 0)) {
				fprintf(stderr, "run_tests: worker %ld ended abnormally\n", w);
				worker_died = true;
			}
		}
	}
	free_unrun(all, n);
	int ran = 0, failed = 0;
	for (size_t k = 0; k < norder; k++) {
		SuiteResult *r = &b->res[order[k]];
		if (!r->done) {
			fprintf(stderr, "run_tests: suite %s did not finish\n",
				all[order[k]].name);
			worker_died = true;
		}
		ran += r->ran;
		failed += r->failed;
	}
	printf("run_tests: %d checks in %zu suites, %d failed, %.1f s with %ld "
	       "worker%s\n", ran, norder, failed, now_seconds() - t0, jobs,
	       jobs == 1 ? "" : "s");
	for (size_t k = 0; k < norder; k++)
		if (b->res[order[k]].failed)
			printf("  failed in suite %s: %d\n", all[order[k]].name,
			       b->res[order[k]].failed);
	munmap(b, bytes);
	if (ran == 0) {
		fprintf(stderr, "no tests ran\n");
		return EXIT_FAILURE;
	}
	return failed == 0 && !worker_died ? EXIT_SUCCESS : EXIT_FAILURE;
}
