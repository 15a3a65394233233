/* tests/test_report.c — counterexample reports (semantics.md section 6):
 * the refuted obligation in words, the values of loop variables,
 * parameters and buffer cells from the model, the source lines of the
 * accesses, and the replay with its verdict (confirmed, unconfirmed, not
 * possible); unproven steps name their reason. Replay keeps to its
 * budget: a counterexample too long to run is skipped (or stopped), or
 * replayed on a smaller model of the same query. `vsched run --json` and
 * `vsched log show --json` print valid JSON lines with those fields. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;
static char dir[64];
static void setup(void)
{
	arena_init(&arena);
	tu_tmpdir(dir, sizeof dir);
}
static void teardown(void)
{
	arena_free(&arena);
	tu_rmdir(dir);
}

/* the guard reads C, so the model has buffer cells as well as the two
 * iterations */
static const char wave[] = "report/wave.tir";

static const char scale_n[] = "report/scale_n.tir";

static const char total[] = "report/total.tir";

/* Run `script` on `kernel` (file name k.tir); the rejected step's text. */
static char *rejected_text(const char *kernel, const char *script, const SmtOptions *opt,
			   StepReport **out)
{
	Module *m = tu_parse(&arena, "k.tir", kernel);
	Schedule *s = opt ? sched_new(&arena, m, opt) : tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, script), STEP_REJECTED);
	StepReport *r = tu_last(s);
	if (out)
		*out = r;
	char *text = sched_report_text(r);
	sched_free(s);
	return text;
}

START_TEST(counterexample_has_iterations_cells_source_lines_and_replay)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture(wave), "sch.reorder(\"j\", \"i\")", NULL, &r);
	/* the obligation in words, once (in the reason), and the violation
	 * said plainly with the cell the two instances share */
	ts_has(t, "reason: obligation reorder.no_conflict refuted: iterations p before q in the old order");
	ts_has(t, "counterexample (reorder.no_conflict):\n");
	ts_has(t, "violation: the write of A at 5:13 (first instance) and the read at 5:27 (second instance) both touch A[");
	const char *said = "iterations p before q in the old order and q before p in the new order "
			   "commute: write of A at 5:13 (first instance) and read of A at 5:27 (second "
			   "instance) never touch the same cell of A";
	const char *first = strstr(t, said);
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_null(strstr(first + 1, said));
	/* a hint at the fix */
	ts_has(t, "hint: a dependence crosses the new order");
	/* the two iterations, by loop variable */
	ts_has(t, "values: i_p = ");
	ts_has(t, "j_p = ");
	ts_has(t, "i_q = ");
	ts_has(t, "j_q = ");
	/* the buffer cells the guard reads */
	ts_has(t, "cells: C[");
	/* the source lines of the loop and the accesses */
	ts_has(t, "k.tir:3:5:     for i, j in T.grid(7, 8):");
	ts_has(t, "k.tir:5:13:             A[i + 1, j] = A[i, j + 1] + 1");
	/* the replay and its verdict, with the first difference */
	ts_has(t, "replay: confirmed");
	ts_has(t, "first difference (before vs after): A[");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	free(t);
}
END_TEST

START_TEST(scalar_parameters_appear_in_the_counterexample)
{
	char *t = rejected_text(tu_fixture(scale_n),
				"io, ii = sch.split(\"i\", factor=4, tail=\"perfect\")", NULL,
				NULL);
	ts_has(t, "reason: obligation split.divisible refuted: the extent of loop i is a multiple of 4");
	ts_has(t, "counterexample (split.divisible):\n");
	ts_has(t, "hint: keep a guard (tail=\"guard\", the default)");
	ts_has(t, "values: n = ");
	ts_has(t, "k.tir:6:5:     for i in T.serial(n):");
	ts_has(t, "replay: confirmed");
	ts_has(t, "input scalars: n = ");
	free(t);
}
END_TEST

/* A guard kept on a committed step is a decision, not a refutation: the
 * note says so and no obligation line says "refuted"; the accepted split
 * still computes what the kernel did. */
START_TEST(kept_guard_is_reported_as_a_decision)
{
	TsRun run = ts_accept(&arena, tu_fixture(scale_n), "io, ii = sch.split(\"i\", factor=4)", 8);
	char *t = sched_report_text(run.r);
	ts_has(t, "kept: divisibility not proven");
	ts_has(t, "split.divisible        decided: no");
	ck_assert_ptr_null(strstr(t, "refuted"));
	ck_assert_ptr_null(strstr(t, "hint:"));
	free(t);
	sched_free(run.s);
}
END_TEST

START_TEST(race_report_says_replay_is_not_possible)
{
	char *t = rejected_text(tu_fixture(total), "sch.parallel(\"i\")", NULL, NULL);
	ts_has(t, "counterexample (parallel.no_race)");
	/* the cell two iterations share, named */
	ts_has(t, "both touch C[0]");
	/* the step's code before and after */
	ts_has(t, "  code (- before, + after the step):\n");
	ts_has(t, "    -    for i in T.serial(64):\n    +    for i in T.parallel(64):\n");
	ts_has(t, "i_1 = ");
	ts_has(t, "i_2 = ");
	ts_has(t, ":         C[0] = C[0] + A[i]");
	ts_has(t, "k.tir:5:");
	ts_has(t, "replay: not possible: the interpreter runs parallel and vector loops one iteration at a time");
	free(t);
}
END_TEST

/* A write-write conflict whose last writer is the same in both orders:
 * refuted, but no input shows a difference; the report says so. */
START_TEST(unconfirmed_replay_is_reported_as_such)
{
	const char *k = tu_fixture("report/unconfirmed_replay_is_reported_as_such.tir");
	StepReport *r;
	char *t = rejected_text(k, "sch.reorder(\"j\", \"i\")", NULL, &r);
	ts_has(t, "replay: unconfirmed");
	ts_has(t, "the obligation is still refuted");
	ck_assert_int_eq(r->replay, REPLAY_UNCONFIRMED);
	free(t);
}
END_TEST

START_TEST(unproven_step_names_its_reason_and_has_no_counterexample)
{
	SmtOptions opt = {0};
	opt.rlimit = 1;
	StepReport *r;
	char *t = rejected_text(tu_fixture(wave), "sch.reorder(\"j\", \"i\")", &opt, &r);
	ts_has(t, "REJECTED");
	ts_has(t, "not proven (resource limit)");
	ck_assert_ptr_null(strstr(t, "counterexample ("));
	ck_assert_int_eq(r->replay, REPLAY_NONE);
	free(t);
}
END_TEST

/* ---------- the replay budget ---------- */

/* The value of scalar `name` in the solver's model of the failed
 * obligation. */
static int64_t model_value(const StepReport *r, const char *name)
{
	ck_assert_int_ge(r->failed, 0);
	const Model *m = r->results[r->failed].model;
	ck_assert_ptr_nonnull(m);
	for (int i = 0; i < m->nvars; i++)
		if (strcmp(m->vars[i].var->name, name) == 0)
			return m->vars[i].val.ival;
	ck_abort_msg("no %s in the model", name);
	return 0;
}

/* split over an unbounded T.serial(n) overflows only for n near 2^31: the
 * counterexample is a 2^31-iteration run, which replay does not start
 * (unbudgeted, it ran each of 32 inputs to the interpreter's 10^8-step
 * limit: minutes). The rejection is the solver's, unchanged: its verdict,
 * reason and values. */
START_TEST(replay_over_2_31_iterations_is_skipped)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture("report/count_n.tir"), "sch.split(\"i\", factor=3)",
				NULL, &r);
	ts_has(t, "reason: obligation split.no_overflow refuted: io*3 + ii stays within int32");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	int64_t n = model_value(r, "n");
	ck_assert_int_ge(n, 2147483646);
	char want[64];
	snprintf(want, sizeof want, "values: n = %lld\n", (long long)n);
	ts_has(t, want);
	/* n up to 2^31 - 1, before and after: about 2.1 billion */
	ts_has(t, "replay: skipped (about 2.1 billion iterations, over the replay budget of 8.4 million; no smaller counterexample of the query fits it)");
	ck_assert_int_eq(r->replay, REPLAY_SKIPPED);
	free(t);
}
END_TEST

/* fuse of a 65536 x 32768 nest: the fused extent 2^31 overflows int32.
 * The sizes are constants, so no smaller counterexample exists; the
 * 2^31-iteration replay is skipped. */
START_TEST(fuse_of_a_2_31_nest_is_rejected_without_a_long_replay)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture("report/fuse_2_31.tir"), "sch.fuse(\"i\", \"j\")", NULL,
				&r);
	ts_has(t, "reason: obligation fuse.no_overflow refuted: the fused extent (extent of i) * (extent of j) fits int32");
	ts_has(t, "replay: skipped (about 2.1 billion iterations, over the replay budget of 8.4 million; its sizes are constants)");
	ck_assert_int_eq(r->replay, REPLAY_SKIPPED);
	free(t);
}
END_TEST

/* Within the estimate's budget, runs that show no difference go on only
 * until the replay's step budget is spent: a million iterations per
 * input would otherwise run on each of 32 inputs. */
START_TEST(replay_stops_at_its_step_budget)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture("report/same_last_writer_long.tir"),
				"sch.reorder(\"j\", \"i\")", NULL, &r);
	ts_has(t, "reason: obligation reorder.no_conflict refuted");
	ts_has(t, "replay: stopped after 20 million steps (the replay budget), ");
	ts_has(t, " tried without a difference (the obligation is still refuted");
	ck_assert_int_eq(r->replay, REPLAY_SKIPPED);
	free(t);
}
END_TEST

/* ---------- a smaller counterexample for the replay ---------- */

/* The fact admits n = 100000 (10^10 iterations) or small n of the form
 * 97k + 5; the solver answers with one of them. A large one is replayed
 * on a smaller model of the same query, which shows the difference; the
 * report keeps the solver's values. */
START_TEST(replay_runs_on_a_smaller_model_of_the_same_query)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture("report/wave_large_or_small.tir"),
				"sch.reorder(\"j\", \"i\")", NULL, &r);
	ts_has(t, "counterexample (reorder.no_conflict)");
	int64_t n = model_value(r, "n");
	char want[64];
	snprintf(want, sizeof want, "values: n = %lld,", (long long)n);
	ts_has(t, want);
	ts_has(t, "replay: confirmed");
	ts_has(t, "first difference (before vs after): A[");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	if (n >= 100000) {
		ts_has(t, "on a smaller counterexample of the same query (the solver's first runs about 20 billion iterations): n = ");
		/* the smaller model: n = 97k + 5 within the first cap */
		const char *in = strstr(t, "input scalars: n = ");
		ck_assert_ptr_nonnull(in);
		long long small = atoll(in + strlen("input scalars: n = "));
		ck_assert_int_eq(small % 97, 5);
		ck_assert_int_le(small, 65536);
	}
	free(t);
}
END_TEST

/* n = 10^8 makes A 10^16 cells, more than the interpreter holds, though
 * the loops are 2 x 2: the replay runs on a smaller model of the query
 * (n = 97k + 3) rather than on inputs of unrelated sizes. */
START_TEST(replay_of_buffers_too_large_runs_on_a_smaller_model)
{
	StepReport *r;
	char *t = rejected_text(tu_fixture("report/wave_wide_or_small.tir"),
				"sch.reorder(\"j\", \"i\")", NULL, &r);
	int64_t n = model_value(r, "n");
	char want[64];
	snprintf(want, sizeof want, "values: n = %lld,", (long long)n);
	ts_has(t, want);
	ts_has(t, "replay: confirmed");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	if (n >= 100000000) {
		ts_has(t, "on a smaller counterexample of the same query (the solver's first has buffers too large to run): n = ");
		const char *in = strstr(t, "input scalars: n = ");
		ck_assert_ptr_nonnull(in);
		ck_assert_int_eq(atoll(in + strlen("input scalars: n = ")) % 97, 3);
	}
	free(t);
}
END_TEST

/* ---------- JSON lines ---------- */

static char *run_json(int want, const char *kernel, const char *script)
{
	char k[128], s[128], cmd[1024];
	snprintf(k, sizeof k, "%s/k.tir", dir);
	snprintf(s, sizeof s, "%s/s.sched", dir);
	FILE *f = fopen(k, "w");
	fputs(kernel, f);
	fclose(f);
	f = fopen(s, "w");
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s' run '%s' --schedule '%s' --json --log '%s/log'",
		 tu_vsched_bin(), k, s, dir);
	char *out, *err;
	int rc = tu_sh(cmd, &out, &err);
	ck_assert_msg(rc == want, "exit %d, expected %d:\n%s", rc, want, err);
	free(err);
	return out;
}

static int check_json_lines(char *out)
{
	int n = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), n++)
		ck_assert_msg(tu_json_valid(line), "not a JSON line: %s", line);
	return n;
}

START_TEST(run_json_prints_valid_json_lines)
{
	char *out = run_json(1, tu_fixture(wave),
			     "io, ii = sch.split(\"i\", factor=7)\nsch.reorder(\"j\", \"io\")\n");
	ts_has(out, "\"status\":\"committed\"");
	ts_has(out, "\"status\":\"rejected\"");
	ts_has(out, "\"kind\":\"reorder.no_conflict\"");
	ts_has(out, "\"verdict\":\"refuted\"");
	ts_has(out, "\"replay\":{\"status\":\"confirmed\"");
	ts_has(out, "\"type\":\"step\"");
	/* the counterexample, structured: its obligation, values and cells */
	ts_has(out, "\"counterexample\":{\"obligation\":\"reorder.no_conflict\",\"values\":[{\"name\":");
	ts_has(out, "\"cells\":[{\"buffer\":\"C\",\"indices\":[");
	ts_has(out, "\"source\":[{\"file\":");
	ts_has(out, "values: i");  /* the counterexample text, escaped */
	ts_has(out, "\\n    cells: C[");
	/* two steps, the summary, the result: rejected, no IR */
	ts_has(out, "{\"type\":\"result\",\"status\":\"rejected\",\"ir\":null}");
	ck_assert_int_eq(check_json_lines(out), 4);
	free(out);
	/* quotes, backslashes and control characters in names stay escaped */
	out = run_json(0, tu_fixture(wave),
		       "io, ii = sch.split(\"i\", factor=7)  # \"quoted\" \\ \t\n");
	ts_has(out, "{\"type\":\"result\",\"status\":\"ok\",\"ir\":\"");  /* the kernel after the schedule */
	ck_assert_int_eq(check_json_lines(out), 3); /* the step, the summary, the result */
	free(out);
	/* log show --json */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "'%s' log show '%s/log' --json", tu_vsched_bin(), dir);
	char *err;
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 0);
	ts_has(out, "\"type\"");
	ck_assert_int_ge(check_json_lines(out), 1);
	free(out);
	free(err);
}
END_TEST

START_TEST(json_checker_rejects_what_is_not_json)
{
	ck_assert(tu_json_valid("{\"a\":[1,2.5e-3,true,null,\"x\\n\\u00e9\"]}"));
	ck_assert(!tu_json_valid("{\"a\":1,}"));
	ck_assert(!tu_json_valid("{\"a\":\"tab\there\"}"));
	ck_assert(!tu_json_valid("{\"a\":01}"));
	ck_assert(!tu_json_valid("{\"a\":1} x"));
	ck_assert(!tu_json_valid("{'a':1}"));
	ck_assert(!tu_json_valid("{\"a\":\"\\q\"}"));
}
END_TEST

/* ---------- proofs/ pages: their examples still give what they show ---------- */

typedef struct PageExample {
	char name[64];
	int exit;
	StrBuf kernel, schedule, err, out;
} PageExample;

/* "0.013s" -> "N.NNNs", " (cached)" removed: times and cache hits vary */
static char *normalise(const char *line)
{
	StrBuf b = {0};
	for (const char *p = line; *p;) {
		if (strncmp(p, " (cached)", 9) == 0) {
			p += 9;
			continue;
		}
		const char *q = p;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q > p && q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] >= '0' && q[2] <= '9' &&
		    q[3] >= '0' && q[3] <= '9' && q[4] == 's') {
			sb_puts(&b, "N.NNNs");
			p = q + 5;
			continue;
		}
		sb_put(&b, p, 1);
		p++;
	}
	return sb_take(&b);
}

/* The first line of `want` (malloc'ed) that does not appear in `got`
 * after the lines before it, or NULL when all do ("..." lines skip). */
static char *missing_line(const char *want, const char *got)
{
	char *w = strdup(want), *g = normalise(got), *missing = NULL;
	const char *pos = g;
	char *save = NULL;
	for (char *line = strtok_r(w, "\n", &save); line && !missing;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, "...") == 0)
			continue;
		char *nl = normalise(line);
		size_t n = strlen(nl);
		const char *hit = pos;
		/* a whole line: it starts a line and ends one */
		while ((hit = strstr(hit, nl)) &&
		       !((hit == g || hit[-1] == '\n') && (hit[n] == '\n' || hit[n] == 0)))
			hit++;
		if (hit)
			pos = hit + n;
		else
			missing = strdup(line);
		free(nl);
	}
	free(w);
	free(g);
	return missing;
}

static void assert_lines_in_order(const char *page, const char *name, const char *what,
				  const char *want, const char *got)
{
	char *line = missing_line(want, got);
	ck_assert_msg(line == NULL,
		      "%s, example %s is stale: %s line\n  %s\nnot found (in order) in the output of vsched:\n%s",
		      page, name, what, line, got);
}

static void run_page_example(const char *page, PageExample *e)
{
	char tmp[64], path[256];
	tu_tmpdir(tmp, sizeof tmp);
	snprintf(path, sizeof path, "%s/%s.tir", tmp, e->name);
	FILE *f = fopen(path, "w");
	fputs(e->kernel.s ? e->kernel.s : "", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/%s.sched", tmp, e->name);
	f = fopen(path, "w");
	fputs(e->schedule.s ? e->schedule.s : "", f);
	fclose(f);
	/* run in the example's folder, so reports name NAME.tir as the page does */
	const char *bin = tu_vsched_bin();
	char *abs = bin[0] == '/' ? strdup(bin) : realpath(bin, NULL);
	ck_assert_msg(abs != NULL, "cannot find %s", bin);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' run %s.tir --schedule %s.sched", tmp, abs, e->name,
		 e->name);
	free(abs);
	char *out, *err;
	int rc = tu_sh(cmd, &out, &err);
	tu_rmdir(tmp);
	ck_assert_msg(rc == e->exit, "%s, example %s is stale: exit %d, the page says %d\n%s",
		      page, e->name, rc, e->exit, err);
	assert_lines_in_order(page, e->name, "stderr", e->err.s ? e->err.s : "", err);
	assert_lines_in_order(page, e->name, "stdout", e->out.s ? e->out.s : "", out);
	free(out);
	free(err);
}

static void free_example(PageExample *e)
{
	free(e->kernel.s);
	free(e->schedule.s);
	free(e->err.s);
	free(e->out.s);
	memset(e, 0, sizeof *e);
}

/* Run every example of one page; returns how many ran with exit 0 and 1,
 * and how many show a refuted obligation. */
static void check_page(const char *page, int *accepted, int *rejected, int *refuted)
{
	char path[256];
	/* a proofs page by its name, or the README */
	snprintf(path, sizeof path, "%s%s", strcmp(page, "README.md") == 0 ? "" : "proofs/", page);
	page = path;
	char *text = tu_read_file(path);
	ck_assert_msg(text != NULL, "cannot read %s (tests run from the top of the tree)", path);
	PageExample e;
	memset(&e, 0, sizeof e);
	bool open = false;
	StrBuf *into = NULL;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		bool marker = line && strncmp(line, "<!-- vsched-example: ", 21) == 0;
		if (!line || marker) {
			if (open) {
				ck_assert_msg(e.kernel.s && e.schedule.s,
					      "%s, example %s: kernel or schedule block missing",
					      page, e.name);
				run_page_example(page, &e);
				*(e.exit == 0 ? accepted : rejected) += 1;
				*refuted += e.err.s && strstr(e.err.s, " refuted ") != NULL;
				free_example(&e);
			}
			if (!line)
				break;
			open = sscanf(line + 21, "%63s exit=%d", e.name, &e.exit) == 2;
			ck_assert_msg(open, "%s: bad example marker: %s", page, line);
			continue;
		}
		if (!open)
			continue;
		if (into) {
			if (strcmp(line, "```") == 0)
				into = NULL;
			else
				sb_printf(into, "%s\n", line);
			continue;
		}
		if (strcmp(line, "```python kernel") == 0)
			into = &e.kernel;
		else if (strcmp(line, "```python schedule") == 0)
			into = &e.schedule;
		else if (strcmp(line, "```text stderr") == 0)
			into = &e.err;
		else if (strcmp(line, "```python stdout") == 0)
			into = &e.out;
	}
	free(text);
}

START_TEST(proofs_pages_examples_still_hold)
{
	static const char *const pages[] = {"split.md", "fuse.md", "reorder.md", "parallel.md",
					    "hoist.md", "merge.md", "merge_conditionals.md", "cache.md",
					    "compute_at.md", "transform_layout.md", "overcompute.md",
					    "simplify.md", "sequential_buffer_access.md", "decompose_reduction.md",
					    "rfactor.md", "reindex.md", "lift_alloc.md", "specialize.md"};
	for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
		int accepted = 0, rejected = 0, refuted = 0;
		check_page(pages[i], &accepted, &rejected, &refuted);
		/* simplify never rejects: its refused replacements are refuted
		 * obligations of a committed step */
		bool never_rejects = strcmp(pages[i], "simplify.md") == 0;
		ck_assert_msg(accepted >= 1 && (rejected >= 1 || (never_rejects && refuted >= 1)),
			      "proofs/%s needs an accepted and a rejected example (%d, %d)", pages[i],
			      accepted, rejected);
	}
	/* the index names every page */
	char *index = tu_read_file("proofs/README.md");
	ck_assert_ptr_nonnull(index);
	for (size_t i = 0; i < sizeof pages / sizeof *pages; i++)
		ts_has(index, pages[i]);
	free(index);
}
END_TEST

/* The README's three rejection reports (race, dependence, overcompute)
 * are real runs: each is re-run, its report compared line by line (times
 * aside), and each says its violation plainly. */
START_TEST(readme_rejection_reports_still_hold)
{
	int accepted = 0, rejected = 0, refuted = 0;
	check_page("README.md", &accepted, &rejected, &refuted);
	ck_assert_int_ge(rejected, 3);
	char *readme = tu_read_file("README.md");
	ck_assert_ptr_nonnull(readme);
	static const char *const names[] = {"race", "dependence", "overcompute"};
	for (int i = 0; i < 3; i++) {
		char marker[64];
		snprintf(marker, sizeof marker, "<!-- vsched-example: %s exit=1 -->", names[i]);
		const char *at = strstr(readme, marker);
		ck_assert_msg(at != NULL, "README.md has no %s report", names[i]);
		const char *end = strstr(at + 1, "<!-- vsched-example: ");
		const char *v = strstr(at, "    violation: ");
		ck_assert_msg(v && (!end || v < end), "README.md's %s report says no violation", names[i]);
		const char *hint = strstr(at, "  hint: ");
		ck_assert_msg(hint && (!end || hint < end), "README.md's %s report gives no hint", names[i]);
	}
	ts_has(readme, "violation: the store at 8:13 writes");
	free(readme);
}
END_TEST

START_TEST(stale_example_is_detected)
{
	const char *got = "step x: committed\n  obligation a proven 0.010s  s\nresult\n";
	char *m = missing_line("step x: committed\n...\n  obligation a proven 9.999s  s\n", got);
	ck_assert_ptr_null(m); /* times are compared as N.NNNs */
	m = missing_line("  obligation a proven 0.010s  s\nstep x: committed\n", got);
	ck_assert_str_eq(m, "step x: committed"); /* order matters */
	free(m);
	m = missing_line("step x: REJECTED\n", got);
	ck_assert_str_eq(m, "step x: REJECTED");
	free(m);
	m = missing_line("resul\n", got); /* whole lines only */
	ck_assert_str_eq(m, "resul");
	free(m);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("counterexamples");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, counterexample_has_iterations_cells_source_lines_and_replay);
	tcase_add_test(tc, scalar_parameters_appear_in_the_counterexample);
	tcase_add_test(tc, race_report_says_replay_is_not_possible);
	tcase_add_test(tc, kept_guard_is_reported_as_a_decision);
	tcase_add_test(tc, unconfirmed_replay_is_reported_as_such);
	tcase_add_test(tc, unproven_step_names_its_reason_and_has_no_counterexample);
	suite_add_tcase(s, tc);
	tc = tcase_create("replay_budget");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, replay_over_2_31_iterations_is_skipped);
	tcase_add_test(tc, fuse_of_a_2_31_nest_is_rejected_without_a_long_replay);
	tcase_add_test(tc, replay_stops_at_its_step_budget);
	suite_add_tcase(s, tc);
	tc = tcase_create("smaller_model");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, replay_runs_on_a_smaller_model_of_the_same_query);
	tcase_add_test(tc, replay_of_buffers_too_large_runs_on_a_smaller_model);
	suite_add_tcase(s, tc);
	tc = tcase_create("json");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, run_json_prints_valid_json_lines);
	tcase_add_test(tc, json_checker_rejects_what_is_not_json);
	suite_add_tcase(s, tc);
	tc = tcase_create("proofs_pages");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, proofs_pages_examples_still_hold);
	tcase_add_test(tc, stale_example_is_detected);
	suite_add_tcase(s, tc);
	tc = tcase_create("readme_reports");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, readme_rejection_reports_still_hold);
	suite_add_tcase(s, tc);
	return s;
}
