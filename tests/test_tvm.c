/* tests/test_tvm.c — TVM v0.21's own schedule and transform tests, ported
 * as case folders under tests/data/tvm/<case>/ (the conformance format:
 * before.tir pasted verbatim from TVM's test, schedule.sched in TVM's
 * Python style, expect with TVM's verdict, after.tir with TVM's expected
 * result; see tests/data/tvm/README). Every case runs through
 * ts_case_check, the runner of the conformance suite, in a child process
 * of its own, so that a crash or a hang in one case is that case's failure.
 *
 * tests/data/tvm/PENDING lists the cases that do not pass yet, one per
 * line as `name  # reason`. A case not listed must pass; a listed case
 * must still fail, so that a case that starts passing is taken off the
 * list, and a listed name must be a case. VS_TVM_ONLY=prefix runs only the
 * cases whose names start with prefix; VS_TVM_ALL=1 runs every case (by default
 * make test runs every case and ASan one in four, for CI's time
 * budget); VS_TVM_VERBOSE=1 prints every case
 * with its time and the gist of every pending case's failure. Under ASan
 * only the cases not pending run. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/testsched.h"

#if defined(__SANITIZE_ADDRESS__)
#define VS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VS_ASAN 1
#endif
#endif
#ifndef VS_ASAN
#define VS_ASAN 0
#endif

#define TVM_ROOT "tests/data/tvm"
#define CASE_SECONDS 300
#define CASE_BYTES (6L << 30) /* address space of one case: TVM's 128^4 buffers do not fit the interpreter */

/* The case names of PENDING (malloc'ed), or 0 names if there is none. */
static int read_pending(char ***out)
{
	char *text = tu_read_file(TVM_ROOT "/PENDING");
	*out = NULL;
	if (!text)
		return 0;
	int n = 0, cap = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		size_t len = strcspn(line, " \t#");
		if (len == 0)
			continue; /* blank or comment line */
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = realloc(*out, sizeof **out * (size_t)cap);
			ck_assert_ptr_nonnull(*out);
		}
		(*out)[n++] = strndup(line, len);
	}
	free(text);
	return n;
}

static bool listed(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static bool is_case(const char *name)
{
	char dir[4096], expect[4096];
	tu_join(dir, sizeof dir, TVM_ROOT, name);
	tu_join(expect, sizeof expect, dir, "expect");
	return access(expect, R_OK) == 0;
}

/* Run one case in a child; returns NULL if it passed, else why not
 * (malloc'ed): the runner's message, a crash or a timeout. */
static char *run_isolated(const char *name)
{
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		/* check's SIGALRM handler is inherited, and it kills the
		 * whole process group (the test with it): the default
		 * action ends only this case */
		signal(SIGALRM, SIG_DFL);
		alarm(CASE_SECONDS);
		struct rlimit lim = {CASE_BYTES, CASE_BYTES};
		if (!VS_ASAN) /* ASan maps terabytes of shadow up front */
			setrlimit(RLIMIT_AS, &lim);
		char dir[4096];
		tu_join(dir, sizeof dir, TVM_ROOT, name);
		char *why = ts_case_check(dir, name, NULL);
		if (why) {
			size_t len = strlen(why), off = 0;
			while (off < len) {
				ssize_t w = write(fd[1], why + off, len - off);
				if (w <= 0)
					break;
				off += (size_t)w;
			}
		}
		_exit(why ? 1 : 0);
	}
	close(fd[1]);
	StrBuf msg = {0};
	char buf[4096];
	for (ssize_t r; (r = read(fd[0], buf, sizeof buf)) > 0;)
		sb_put(&msg, buf, (size_t)r);
	close(fd[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		free(sb_take(&msg));
		return NULL;
	}
	if (WIFSIGNALED(status))
		sb_printf(&msg, "%scrashed: signal %d%s", msg.n ? "\n" : "", WTERMSIG(status),
			  WTERMSIG(status) == SIGALRM ? " (over the time limit)" : "");
	if (!msg.n)
		sb_puts(&msg, "failed without a message");
	return sb_take(&msg);
}

/* What a failure comes down to, in one line of at most 200 bytes
 * (static): a heading line ending in ':' ("replay 2 not confirmed:",
 * "expected accept:") with the first error of a diagnostic (its position
 * dropped), else the rejection's reason, else the next line. */
static const char *gist(const char *s)
{
	static char line[201];
	size_t n = strcspn(s, "\n");
	bool heading = n && s[n - 1] == ':' && s[n] == '\n';
	const char *at = strstr(s, "error: ");
	if (!at)
		at = strstr(s, "reason: ");
	if (!at)
		at = heading ? s + n + 1 : s;
	int head = heading && at != s ? (int)n : 0;
	snprintf(line, sizeof line, "%.*s%s%.*s", head, s, head ? " " : "", (int)strcspn(at, "\n"), at);
	return line;
}

START_TEST(tvm_cases_give_tvm_verdicts_or_are_pending)
{
	char **names, **pending;
	int n = tu_list_dir(TVM_ROOT, &names);
	ck_assert_int_gt(n, 0);
	int np = read_pending(&pending);
	for (int i = 0; i < np; i++)
		ck_assert_msg(is_case(pending[i]), "PENDING lists %s, which is not a case folder", pending[i]);
	int cases = 0, passed = 0, still_pending = 0;
	StrBuf bad = {0};
	for (int i = 0; i < n; i++) {
		if (!is_case(names[i]))
			continue; /* README, PENDING */
		const char *only = getenv("VS_TVM_ONLY");
		if (only && *only && strncmp(names[i], only, strlen(only)) != 0)
			continue;
		cases++;
		/* CI's time budget (20 minutes on 2 cores for test, asan and fuzz):
		 * make test runs every case (about 2 minutes), ASan one in four;
		 * VS_TVM_ALL=1 runs them all under ASan too */
		const char *all = getenv("VS_TVM_ALL");
		int stride = all && *all == '1' ? 1 : VS_ASAN ? 4 : 1;
		if ((cases - 1) % stride != 0)
			continue;
		if (VS_ASAN && listed(pending, np, names[i])) {
			/* under ASan there is no address-space limit, and one
			 * pending case (hoist_expression's blow-up) eats memory
			 * until the machine has none; pending cases only have to
			 * fail, so ASan runs the passing ones */
			still_pending++;
			continue;
		}
		time_t t0 = time(NULL);
		char *why = run_isolated(names[i]);
		if (getenv("VS_TVM_VERBOSE"))
			fprintf(stderr, "tvm: %s %s (%lds)\n", names[i], why ? "fails" : "passes",
				(long)(time(NULL) - t0));
		bool pend = listed(pending, np, names[i]);
		if (!why)
			passed++;
		else if (pend)
			still_pending++;
		if (!why && pend)
			sb_printf(&bad, "%s passes now: take it off tests/data/tvm/PENDING\n", names[i]);
		else if (why && !pend) {
			sb_printf(&bad, "%s: %s\n", names[i], gist(why));
			fprintf(stderr, "tvm: %s fails:\n%s\n", names[i], why);
		}
		else if (why && getenv("VS_TVM_VERBOSE"))
			fprintf(stderr, "tvm: pending %s  # %s\n", names[i], gist(why));
		free(why);
	}
	fprintf(stderr, "tvm: %d cases, %d pass, %d pending\n", cases, passed, still_pending);
	char *msg = sb_take(&bad);
	if (msg[0])
		fprintf(stderr, "tvm: wrong results:\n%s", msg);
	ck_assert_msg(msg[0] == '\0', "%.3000s", msg);
	free(msg);
	for (int i = 0; i < np; i++)
		free(pending[i]);
	free(pending);
	tu_free_list(names, n);
}
END_TEST

Suite *suite_tvm(void)
{
	Suite *s = suite_create("tvm");
	TCase *tc = tcase_create("cases");
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, tvm_cases_give_tvm_verdicts_or_are_pending);
	suite_add_tcase(s, tc);
	return s;
}
