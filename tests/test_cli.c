/* tests/test_cli.c — the `vsched` program (binary in VS_BIN): the exit
 * codes of interfaces.md for run, interp, equiv, log show and log check
 * (0 success, 1 rejected or a failed check, 2 unusable input), what each
 * prints where, `vsched equiv` on every conformance case's before.tir
 * against itself and on two kernels that differ in one store, and a
 * timeout that rejects a step. */
#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testsched.h"

static char dir[64];
static void setup(void) { tu_tmpdir(dir, sizeof dir); }
static void teardown(void) { tu_rmdir(dir); }

static const char scale14[] = "cli/scale14.tir";

/* dir/name with `text` in it; returns the path (static, one of 8). */
static const char *put(const char *name, const char *text)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* Run `vsched ARGS`, check the exit status, return stdout and stderr. */
static void vsched(int want, char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void vsched(int want, char **out, char **err, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "'%s' %s", tu_vsched_bin(), args);
	char *o, *e;
	int rc = tu_sh(cmd, &o, &e);
	ck_assert_msg(rc == want, "vsched %s: exit %d, expected %d\nstdout:\n%s\nstderr:\n%s", args,
		      rc, want, o, e);
	if (out)
		*out = o;
	else
		free(o);
	if (err)
		*err = e;
	else
		free(e);
}

/* ---------- vsched run ---------- */

START_TEST(run_exit_codes)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	char *out, *err;
	/* 0: no schedule prints the kernel; an accepted schedule the result */
	vsched(0, &out, NULL, "run '%s'", k);
	ts_has(out, "for i in T.serial(14):");
	free(out);
	const char *ok = put("ok.sched", "io, ii = sch.split(\"i\", factor=2, tail=\"perfect\")\n");
	vsched(0, &out, &err, "run '%s' --schedule '%s'", k, ok);
	ts_has(out, "T.grid(7, 2)");
	ts_has(err, "committed");
	free(out);
	free(err);
	vsched(0, NULL, NULL, "run '%s' --schedule '%s' -o '%s/out.tir'", k, ok, dir);
	char path[300];
	snprintf(path, sizeof path, "%s/out.tir", dir);
	char *written = tu_read_file(path);
	ck_assert_ptr_nonnull(written);
	ts_has(written, "T.grid(7, 2)");
	free(written);
	/* 1: a rejected step; the report goes to stderr */
	const char *bad = put("bad.sched", "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n");
	vsched(1, &out, &err, "run '%s' --schedule '%s'", k, bad);
	ts_has(err, "REJECTED");
	ts_has(err, "replay: confirmed");
	ts_has(err, "the IR before it is kept");
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	/* 2: unusable input of every kind */
	vsched(2, NULL, &err, "run '%s/missing.tir'", dir);
	ts_has(err, "missing.tir");
	free(err);
	vsched(2, NULL, &err, "run tests/data/cli/syntax_error.tir");
	ts_has(err, "syntax_error.tir:3:12: error:");
	free(err);
	const char *unknown = put("unknown.sched", "sch.split(\"q\", factor=2)\n");
	vsched(2, NULL, &err, "run '%s' --schedule '%s'", k, unknown);
	ts_has(err, "unknown.sched:1:1: error: no loop 'q'");
	free(err);
	const char *ssyn = put("ssyn.sched", "sch.split(\"i\", factor=4\n");
	vsched(2, NULL, &err, "run '%s' --schedule '%s'", k, ssyn);
	ts_has(err, "ssyn.sched:1:10: error:");
	free(err);
	vsched(2, NULL, NULL, "run '%s' --schedule '%s/none.sched'", k, dir);
	vsched(2, NULL, NULL, "run '%s' --float fast", k);
	vsched(2, NULL, NULL, "run '%s' --bogus", k);
	vsched(2, NULL, NULL, "run");
	vsched(2, NULL, NULL, "run '%s' --timeout-ms", k);
	vsched(2, NULL, NULL, "run '%s' --log '%s/k.tir/log'", k, dir);
}
END_TEST

/* A true obligation far beyond a short time limit: the hypotheses
 * include x^3 + y^3 == z^3 for positive integers, which has no solution,
 * but no solver proves that in 300 ms. Not proven rejects. */
START_TEST(run_timeout_rejects)
{
	const char *k = "tests/data/cli/fermat.tir";
	const char *s = put("p.sched", "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n");
	char *err;
	vsched(1, NULL, &err, "run '%s' --schedule '%s' --timeout-ms 300", k, s);
	ts_has(err, "not proven (timeout)");
	free(err);
}
END_TEST

/* ---------- vsched interp ---------- */

START_TEST(interp_exit_codes)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	char *out, *err;
	vsched(0, &out, NULL, "interp '%s' --seed 4", k);
	ts_has(out, "seed 4");
	ts_has(out, "outputs:");
	free(out);
	const char *oob = "tests/data/cli/out_of_bounds.tir";
	vsched(1, &out, NULL, "interp '%s'", oob);
	ts_has(out, "out of bounds");
	free(out);
	vsched(2, NULL, &err, "interp '%s' --func nope", k);
	ts_has(err, "no function 'nope'");
	free(err);
	vsched(2, NULL, NULL, "interp '%s/missing.tir'", dir);
	vsched(2, NULL, NULL, "interp '%s' --seed x", k);
}
END_TEST

/* ---------- vsched equiv ---------- */

START_TEST(equiv_every_conformance_kernel_with_itself)
{
	const char *shared = tu_shared_dir();
	if (!shared) {
		fprintf(stderr, "cli: shared folder not found, skipped\n");
		return;
	}
	char cdir[4096];
	snprintf(cdir, sizeof cdir, "%s/conformance", shared);
	DIR *d = opendir(cdir);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char k[4400];
		snprintf(k, sizeof k, "%s/%s/before.tir", cdir, e->d_name);
		FILE *f = fopen(k, "r");
		if (!f)
			continue;
		fclose(f);
		vsched(0, NULL, NULL, "equiv '%s' '%s' --trials 5", k, k);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 20);
}
END_TEST

START_TEST(equiv_finds_one_changed_store)
{
	const char *a = put("a.tir", tu_fixture(scale14));
	char *changed = strdup(tu_fixture(scale14));
	*strstr(changed, "2 * A[i]") = '3'; /* B[i] = 3 * A[i] */
	const char *b = put("b.tir", changed);
	free(changed);
	char *err;
	vsched(1, NULL, &err, "equiv '%s' '%s'", a, b);
	ts_has(err, "outputs differ");
	ts_has(err, "B[");
	free(err);
	/* a store that moves to another cell */
	const char *c = "tests/data/cli/mirrored_store.tir";
	vsched(1, NULL, NULL, "equiv '%s' '%s' --trials 3 --seed 9", a, c);
	vsched(2, NULL, NULL, "equiv '%s'", a);
	vsched(2, NULL, NULL, "equiv '%s' '%s/missing.tir'", a, dir);
	vsched(2, NULL, NULL, "equiv '%s' '%s' --func nope", a, b);
}
END_TEST

/* A kernel that runs past the interpreter's step limit gives no verdict
 * (exit 2), and the message says so and names the limit, whichever of
 * the two kernels it is, and whatever the other function's name. */
START_TEST(equiv_at_the_step_limit_says_so)
{
	const char *shortk = "tests/data/cli/two_steps.tir";
	const char *longk = "tests/data/cli/past_step_limit.tir";
	char *err;
	vsched(2, NULL, &err, "equiv '%s' '%s' --trials 1", shortk, longk);
	ts_has(err, "no verdict: longrun reached the interpreter's step limit of 100000000 steps, where short ran in ");
	ts_lacks(err, "no function");
	free(err);
	vsched(2, NULL, &err, "equiv '%s' '%s' --trials 1", longk, shortk);
	ts_has(err, "no verdict: longrun reached the interpreter's step limit of 100000000 steps");
	ts_lacks(err, "no function");
	free(err);
}
END_TEST

/* ---------- vsched log show / check ---------- */

static void make_log(const char *log)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	const char *s = put("s.sched",
			    "io, ii = sch.split(\"i\", factor=2, tail=\"perfect\")\nsch.parallel(\"io\")\n");
	vsched(0, NULL, NULL, "run '%s' --schedule '%s' --log '%s' -o /dev/null", k, s, log);
}

/* jit --json: the same step and summary records as run --json, then
 * build, check, time and result records (README, "JSON output") */
START_TEST(jit_json_records)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	const char *ok = put("ok.sched", "io, ii = sch.split(\"i\", factor=2, tail=\"perfect\")\n");
	char *out;
	vsched(0, &out, NULL, "jit '%s' --schedule '%s' --json --trials 2 --repeat 1", k, ok);
	static const char *const types[] = {"step", "summary", "build", "check", "time", "result"};
	int seen[6] = {0}, n = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), n++) {
		ck_assert_msg(tu_json_valid(line), "not JSON: %s", line);
		for (int i = 0; i < 6; i++) {
			char want[64];
			snprintf(want, sizeof want, "{\"type\":\"%s\"", types[i]);
			seen[i] += strncmp(line, want, strlen(want)) == 0;
		}
	}
	for (int i = 0; i < 6; i++)
		ck_assert_msg(seen[i] == 1, "%d %s records", seen[i], types[i]);
	ck_assert_int_eq(n, 6);
	free(out);
	/* a rejected schedule: exit 1, the report on stderr, nothing compiled */
	const char *bad = put("bad.sched", "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n");
	char *err;
	vsched(1, NULL, &err, "jit '%s' --schedule '%s' --json", k, bad);
	ts_has(err, "nothing is compiled");
	free(err);
}
END_TEST

/* Colour on stderr only on a terminal and never with NO_COLOR; a pipe (as
 * here) gets none; VSCHED_COLOR=always|never overrides. */
START_TEST(colour_only_on_a_terminal_and_never_with_no_color)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	const char *bad = put("bad.sched", "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n");
	char *err;
	vsched(1, NULL, &err, "run '%s' --schedule '%s'", k, bad);
	ck_assert_ptr_null(strchr(err, '\033'));
	free(err);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "env -u NO_COLOR VSCHED_COLOR=always '%s' run '%s' --schedule '%s'", tu_vsched_bin(), k, bad);
	char *out;
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 1);
	ts_has(err, "\033[1;31mREJECTED\033[0m");
	free(out);
	free(err);
	/* on a terminal (util-linux `script` gives one): colour, unless NO_COLOR */
	if (system("command -v script >/dev/null 2>&1") != 0)
		return;
	snprintf(cmd, sizeof cmd, "env -u NO_COLOR -u VSCHED_COLOR TERM=xterm script -qec \"'%s' run '%s' --schedule '%s'\" /dev/null",
		 tu_vsched_bin(), k, bad);
	tu_sh(cmd, &out, &err);
	ts_has(out, "\033[1;31mREJECTED");
	free(out);
	free(err);
	snprintf(cmd, sizeof cmd, "env -u VSCHED_COLOR NO_COLOR=1 TERM=xterm script -qec \"'%s' run '%s' --schedule '%s'\" /dev/null", tu_vsched_bin(), k, bad);
	tu_sh(cmd, &out, &err);
	ts_has(out, "REJECTED");
	ck_assert_ptr_null(strchr(out, '\033'));
	free(out);
	free(err);
}
END_TEST

/* A step's progress line goes to stderr only on a terminal (here after 0
 * ms instead of a second), and is cleared when the step ends. */
START_TEST(progress_only_on_a_terminal)
{
	const char *k = put("k.tir", tu_fixture(scale14));
	const char *s = put("s.sched", "io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")\n");
	char *out, *err;
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "VSCHED_PROGRESS_AFTER_MS=0 '%s' run '%s' --schedule '%s'",
		 tu_vsched_bin(), k, s);
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 1);
	ck_assert_ptr_null(strstr(err, "vsched: line 1:"));
	free(out);
	free(err);
	if (system("command -v script >/dev/null 2>&1") != 0)
		return;
	snprintf(cmd, sizeof cmd,
		 "VSCHED_PROGRESS_AFTER_MS=0 TERM=xterm script -qec \"'%s' run '%s' --schedule '%s'\" /dev/null",
		 tu_vsched_bin(), k, s);
	/* after 0 ms the line is shown when the step starts, then cleared */
	tu_sh(cmd, &out, &err);
	ts_has(out, "vsched: line 1: split(\"i\", factor=4, tail=\"perfect\") ...");
	ts_has(out, "... 0 s\r\033[K");
	free(out);
	free(err);
}
END_TEST

START_TEST(log_show_and_check_exit_codes)
{
	char log[300];
	snprintf(log, sizeof log, "%s/log", dir);
	make_log(log);
	char *out, *err;
	vsched(0, &out, NULL, "log show '%s'", log);
	ts_has(out, "2 proven");
	free(out);
	vsched(0, &out, NULL, "log show '%s' --json", log);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_msg(tu_json_valid(line), "not JSON: %s", line);
	free(out);
	vsched(0, &out, NULL, "log check '%s'", log);
	ts_has(out, "0 disagree");
	free(out);
	/* log check --json: run's records, each obligation with its re-check */
	vsched(0, &out, NULL, "log check '%s' --json", log);
	ts_has(out, "\"recheck\":{\"solver\":\"z3\",\"answer\":\"unsat\",\"result\":\"ok\"");
	ts_has(out, "{\"type\":\"result\",\"status\":\"ok\",\"ir\":null}");
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_msg(tu_json_valid(line), "not JSON: %s", line);
	free(out);
	vsched(2, NULL, &err, "log check '%s' --json --rebuild", log);
	ts_has(err, "--json does not apply with --rebuild");
	free(err);
	/* the table of primitives */
	vsched(0, &out, NULL, "help primitives");
	ts_has(out, "| `split(loop, factor, tail=\"guard\")` | `vs_split`, `vs_split_tail` |");
	free(out);
	vsched(0, NULL, NULL, "log check '%s' --solver cvc5", log);
	/* a corrupted verdict: the re-check disagrees */
	char path[400];
	snprintf(path, sizeof path, "%s/index.jsonl", log);
	char *index = tu_read_file(path);
	char *v = strstr(index, "\"verdict\":\"proven\"");
	ck_assert_ptr_nonnull(v);
	FILE *f = fopen(path, "w");
	fprintf(f, "%.*s\"verdict\":\"refuted\"%s", (int)(v - index), index,
		v + strlen("\"verdict\":\"proven\""));
	fclose(f);
	free(index);
	/* the query's header still says proven */
	vsched(1, NULL, &err, "log check '%s'", log);
	ts_has(err, "MALFORMED (ob-0001.smt2: its header names another verdict)");
	free(err);
	/* unusable */
	vsched(2, NULL, NULL, "log show '%s/none'", dir);
	vsched(2, NULL, NULL, "log check '%s/none'", dir);
	vsched(2, NULL, NULL, "log check '%s' --solver yices", log);
	vsched(2, NULL, NULL, "log frobnicate '%s'", log);
	vsched(2, NULL, NULL, "log show");
}
END_TEST

START_TEST(usage_and_unknown_commands)
{
	char *out;
	vsched(2, NULL, NULL, "%s", "");
	vsched(0, &out, NULL, "--help");
	ts_has(out, "vsched run KERNEL.tir");
	free(out);
	vsched(2, NULL, NULL, "frobnicate");
	/* numbers: no sign, in range (strtoul alone took -5 as 2^64 - 5) */
	const char *k = put("u.tir", tu_fixture(scale14));
	char *err;
	vsched(2, NULL, &err, "run '%s' --timeout-ms -5", k);
	ts_has(err, "expected a number of milliseconds (1..86400000) after: --timeout-ms");
	free(err);
	vsched(2, NULL, NULL, "equiv '%s' '%s' --trials 0", k, k);
	vsched(2, NULL, NULL, "interp '%s' --seed -1", k);
	/* a plain library error says it is one and ends the line */
	vsched(2, NULL, &err, "interp '%s' --func nope", k);
	ts_has(err, "vsched: error: no function 'nope' in the module\n");
	free(err);
	/* --opt=value, an option the command does not take, help */
	vsched(2, NULL, &err, "interp '%s' --solver cvc5", k);
	ts_has(err, "vsched: argument 2 (--solver): --solver does not apply to `vsched interp`; "
		    "it applies to: log check\n");
	free(err);
	vsched(2, NULL, &err, "run '%s' --json=yes", k);
	ts_has(err, "argument 2 (--json=yes): --json takes no value");
	free(err);
	vsched(0, &out, NULL, "run '%s' --timeout-ms=5000 --float=ieee -o=%s/o.tir", k, dir);
	free(out);
	char path[300];
	snprintf(path, sizeof path, "%s/o.tir", dir);
	char *o1 = tu_read_file(path);
	ck_assert_ptr_nonnull(o1);
	ts_has(o1, "def ");
	free(o1);
	vsched(0, &out, NULL, "run --help");
	ts_has(out, "usage: vsched run KERNEL.tir [options]");
	ts_has(out, "--timeout-ms N");
	ts_lacks(out, "--solver");
	free(out);
	vsched(0, &out, NULL, "help log check");
	ts_has(out, "--solver z3|cvc5");
	free(out);
	vsched(2, NULL, NULL, "help frobnicate");
	vsched(0, &out, NULL, "--version");
	ts_has(out, "vsched 0.");
	free(out);
	/* printed kernels end with a newline */
	vsched(0, &out, NULL, "run '%s'", k);
	ck_assert(out[strlen(out) - 1] == '\n');
	free(out);
}
END_TEST

/* Found by a red-team audit: output that never reached its file (a full
 * disk) exited 0 without a word. /dev/full fails every write. */
START_TEST(write_failures_exit_2)
{
	if (access("/dev/full", W_OK) != 0)
		return; /* not on this system */
	const char *k = put("w.tir", tu_fixture(scale14));
	char *err;
	vsched(2, NULL, &err, "run '%s' -o /dev/full", k);
	ts_has(err, "vsched: error: cannot write /dev/full:");
	free(err);
	vsched(2, NULL, &err, "run '%s' > /dev/full", k);
	ts_has(err, "vsched: error: cannot write the output:");
	free(err);
	vsched(2, NULL, NULL, "interp '%s' > /dev/full", k);
	vsched(2, NULL, NULL, "build '%s' --emit llvm > /dev/full", k);
	/* every open or write failure says why (the errno text) */
	vsched(2, NULL, &err, "run '%s' -o /nonexistent-dir/out.tir", k);
	ts_has(err, "cannot write /nonexistent-dir/out.tir: No such file or directory");
	free(err);
	vsched(2, NULL, &err, "build '%s' --emit obj -o /nonexistent-dir/k.o", k);
	ts_has(err, "cannot write /nonexistent-dir/k.o: No such file or directory");
	free(err);
	vsched(2, NULL, &err, "run /tmp");
	ts_has(err, "cannot read '/tmp': Is a directory");
	free(err);
}
END_TEST

Suite *suite_cli(void)
{
	Suite *s = suite_create("cli");
	struct { const char *name; const TTest *tests[4]; } cases[] = {
		{"run", {run_exit_codes, run_timeout_rejects}},
		{"jit", {jit_json_records}},
		{"colour", {colour_only_on_a_terminal_and_never_with_no_color}},
		{"progress", {progress_only_on_a_terminal}},
		{"interp", {interp_exit_codes}},
		{"equiv", {equiv_every_conformance_kernel_with_itself, equiv_finds_one_changed_store}},
		{"equiv_step_limit", {equiv_at_the_step_limit_says_so}},
		{"log", {log_show_and_check_exit_codes}},
		{"usage", {usage_and_unknown_commands, write_failures_exit_2}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 4 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
