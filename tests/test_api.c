/* tests/test_api.c — the public C API (include/vsched.h) as a C user sees
 * it: every function, its status codes (VS_OK / VS_REJECTED /
 * VS_BAD_INPUT), the diagnostics of bad input (file:line:col where there
 * is a position), the report accessors of committed and rejected steps,
 * limits that make a step unproven, proof logs, and the example programs
 * under examples/ (built by `make examples`, run here). Only vsched.h and
 * the interpreter check of tests/testutil.h are used. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"
#include "vsched.h"

static vs_context *ctx;
static char tmpdir[64];

static void setup(void)
{
	ctx = vs_context_new();
	ck_assert_ptr_nonnull(ctx);
	snprintf(tmpdir, sizeof tmpdir, "/tmp/vsched-api-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	vs_context_free(ctx);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_api: could not remove %s\n", tmpdir);
}

static const char scale14[] = "api/scale14.tir";

static const char wavefront[] = "api/wavefront.tir";

static const char two_funcs[] = "api/two_funcs.tir";

static vs_module *parse(const char *name, const char *text)
{
	vs_module *m = vs_parse_string(ctx, name, text);
	ck_assert_msg(m != NULL, "parse failed: %s", vs_last_error(ctx));
	return m;
}

static char *path_in_tmp(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The result of a schedule against the module it started from, with the
 * reference interpreter (the round trip through text keeps this test on
 * the public API's side). */
static void assert_result_equivalent(const vs_module *before, const vs_schedule *s)
{
	char *after = vs_module_print(vs_schedule_result(s));
	vs_module *m = parse("after.tir", after);
	free(after);
	char *report = NULL;
	vs_status st = vs_equiv(ctx, before, m, NULL, 8, 3, &report);
	ck_assert_msg(st == VS_OK, "result differs: %s", report ? report : "?");
	free(report);
}

/* ---------- kernels ---------- */

START_TEST(parse_print_and_functions)
{
	ck_assert_str_eq(vs_last_error(ctx), "");
	vs_module *m = parse("m.tir", tu_fixture(two_funcs));
	ck_assert_int_eq(vs_module_num_funcs(m), 2);
	ck_assert_str_eq(vs_module_func_name(m, 0), "f");
	ck_assert_str_eq(vs_module_func_name(m, 1), "g");
	ck_assert_ptr_null(vs_module_func_name(m, 2));
	ck_assert_ptr_null(vs_module_func_name(m, -1));
	char *text = vs_module_print(m);
	vs_module *again = parse("again.tir", text);
	char *text2 = vs_module_print(again);
	ck_assert_str_eq(text, text2);
	free(text);
	free(text2);
	/* from a file */
	write_file(path_in_tmp("k.tir"), tu_fixture(scale14));
	vs_module *f = vs_parse_file(ctx, path_in_tmp("k.tir"));
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(vs_module_func_name(f, 0), "scale");
}
END_TEST

START_TEST(parse_errors_name_file_line_and_column)
{
	const char *bad = tu_fixture("api/parse_errors_name_file_line_and_column.tir");
	ck_assert_ptr_null(vs_parse_string(ctx, "bad.tir", bad));
	const char *e = vs_last_error(ctx);
	ck_assert_msg(strstr(e, "bad.tir:3:25: error: expected ':' after for header"), "%s", e);
	ck_assert_msg(strstr(e, "    for i in T.serial(4)\n"), "quotes the line: %s", e);
	ck_assert_msg(strstr(e, "^"), "caret: %s", e);
	/* the same through a file keeps the path */
	write_file(path_in_tmp("bad.tir"), bad);
	ck_assert_ptr_null(vs_parse_file(ctx, path_in_tmp("bad.tir")));
	char want[300];
	snprintf(want, sizeof want, "%s:3:25: error:", path_in_tmp("bad.tir"));
	ck_assert_msg(strstr(vs_last_error(ctx), want), "%s", vs_last_error(ctx));
	/* unreadable file */
	ck_assert_ptr_null(vs_parse_file(ctx, path_in_tmp("missing.tir")));
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "missing.tir"));
}
END_TEST

/* ---------- scheduling: committed steps and reports ---------- */

START_TEST(primitives_commit_with_proven_reports)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(vs_num_reports(s), 0);
	ck_assert_ptr_null(vs_last_report(s));
	ck_assert_int_eq(vs_split(s, "i", 4, NULL, "io", "ii"), VS_OK);
	ck_assert_int_eq(vs_parallel(s, "io"), VS_OK);
	ck_assert_int_eq(vs_vectorize(s, "ii"), VS_OK);
	ck_assert_int_eq(vs_num_reports(s), 3);
	const vs_report *r = vs_last_report(s);
	ck_assert_ptr_eq(r, vs_report_at(s, 2));
	ck_assert_ptr_null(vs_report_at(s, 3));
	ck_assert_ptr_null(vs_report_at(s, -1));
	ck_assert_int_eq(vs_report_status(r), VS_OK);
	ck_assert_str_eq(vs_report_step(r), "vectorize(\"ii\")");
	ck_assert_ptr_null(vs_report_reason(r));
	ck_assert_ptr_null(vs_report_counterexample(r));
	ck_assert_str_eq(vs_report_replay(r), "none");
	ck_assert_int_ge(vs_report_num_obligations(r), 1);
	const char *kind = NULL, *statement = NULL, *verdict = NULL;
	double seconds = -1;
	vs_report_obligation(r, 0, &kind, &statement, &verdict, &seconds);
	ck_assert_str_eq(kind, "vectorize.no_race");
	ck_assert_str_eq(verdict, "proven");
	ck_assert_ptr_nonnull(strstr(statement, "race"));
	ck_assert(seconds >= 0);
	/* out of range: outputs are cleared, nothing crashes */
	vs_report_obligation(r, 99, &kind, &statement, &verdict, &seconds);
	ck_assert_ptr_null(kind);
	ck_assert_ptr_null(verdict);
	char *text = vs_report_text(r);
	ck_assert_ptr_nonnull(strstr(text, "vectorize(\"ii\") on scale: committed"));
	free(text);
	/* the result is the scheduled kernel and agrees with the original */
	char *ir = vs_module_print(vs_schedule_result(s));
	ck_assert_ptr_nonnull(strstr(ir, "T.parallel(4)"));
	ck_assert_ptr_nonnull(strstr(ir, "T.vectorized(4)"));
	free(ir);
	assert_result_equivalent(m, s);
	vs_schedule_free(s);
}
END_TEST

START_TEST(fuse_reorder_unroll_and_work_on)
{
	vs_module *m = parse("m.tir", tu_fixture(two_funcs));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_work_on(s, "g"), VS_OK);
	ck_assert_int_eq(vs_split(s, "j", 2, "perfect", "jo", "ji"), VS_OK);
	const char *order[] = {"ji", "jo"};
	ck_assert_int_eq(vs_reorder(s, 2, order), VS_OK);
	ck_assert_int_eq(vs_fuse(s, "ji", "jo", "k"), VS_OK);
	ck_assert_int_eq(vs_unroll(s, "k"), VS_OK);
	char *ir = vs_module_print(vs_schedule_result(s));
	ck_assert_ptr_nonnull(strstr(ir, "for k in T.unroll(8)"));
	ck_assert_ptr_nonnull(strstr(ir, "for i in T.serial(8)")); /* f untouched */
	free(ir);
	char *report = NULL;
	char *after = vs_module_print(vs_schedule_result(s));
	vs_module *am = parse("after.tir", after);
	free(after);
	ck_assert_int_eq(vs_equiv(ctx, m, am, "g", 6, 1, &report), VS_OK);
	free(report);
	/* the float mode switches */
	ck_assert_int_eq(vs_float_mode(s, "ieee"), VS_OK);
	ck_assert_int_eq(vs_float_mode(s, "real"), VS_OK);
	vs_schedule_free(s);
}
END_TEST

/* ---------- rejected steps ---------- */

START_TEST(refuted_step_is_rejected_with_counterexample_and_replay)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_split(s, "i", 4, "perfect", NULL, NULL), VS_REJECTED);
	const vs_report *r = vs_last_report(s);
	ck_assert_int_eq(vs_report_status(r), VS_REJECTED);
	ck_assert_str_eq(vs_report_step(r), "split(\"i\", factor=4, tail=\"perfect\")");
	ck_assert_ptr_nonnull(strstr(vs_report_reason(r), "split.divisible refuted"));
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "split.divisible"));
	ck_assert_int_eq(vs_report_num_obligations(r), 1);
	const char *verdict;
	vs_report_obligation(r, 0, NULL, NULL, &verdict, NULL);
	ck_assert_str_eq(verdict, "refuted");
	ck_assert_ptr_nonnull(vs_report_counterexample(r));
	ck_assert_str_eq(vs_report_replay(r), "confirmed");
	char *text = vs_report_text(r);
	ck_assert_ptr_nonnull(strstr(text, "REJECTED"));
	ck_assert_ptr_nonnull(strstr(text, "k.tir:3:5:"));
	ck_assert_ptr_nonnull(strstr(text, "replay: confirmed"));
	free(text);
	/* the previous IR stays */
	char *a = vs_module_print(m), *b = vs_module_print(vs_schedule_result(s));
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	vs_schedule_free(s);

	/* a dependence: reorder refuted, replayed */
	vs_module *w = parse("w.tir", tu_fixture(wavefront));
	s = vs_schedule_new(ctx, w, NULL);
	const char *order[] = {"j", "i"};
	ck_assert_int_eq(vs_reorder(s, 2, order), VS_REJECTED);
	r = vs_last_report(s);
	ck_assert_str_eq(vs_report_replay(r), "confirmed");
	ck_assert_ptr_nonnull(vs_report_replay_text(r));
	/* the counterexample, structured: values, cells, source positions */
	ck_assert_str_eq(vs_report_cex_obligation(r), "reorder.no_conflict");
	ck_assert_int_gt(vs_report_cex_num_values(r), 0);
	const char *name, *value;
	vs_report_cex_value(r, 0, &name, &value);
	ck_assert_ptr_nonnull(name);
	ck_assert_ptr_nonnull(value);
	ck_assert_ptr_nonnull(strstr(vs_report_counterexample(r), name));
	ck_assert_int_gt(vs_report_cex_num_spans(r), 1);
	const char *file;
	int line, col;
	vs_report_cex_span(r, 0, &file, &line, &col);
	ck_assert_str_eq(file, "w.tir");
	ck_assert_int_gt(line, 0);
	ck_assert_int_gt(col, 0);
	for (int i = 0; i < vs_report_cex_num_cells(r); i++) {
		const char *buf, *v;
		int n;
		const long long *idx;
		vs_report_cex_cell(r, i, &buf, &n, &idx, &v);
		ck_assert_ptr_nonnull(buf);
		ck_assert_int_gt(n, 0);
		ck_assert_ptr_nonnull(idx);
	}
	/* out of range: cleared, never left unset */
	vs_report_cex_value(r, 999, &name, &value);
	ck_assert_ptr_null(name);
	vs_report_cex_span(r, -1, &file, &line, &col);
	ck_assert_ptr_null(file);
	ck_assert_int_eq(line, 0);
	/* a race: refuted, replay impossible (the interpreter is serial) */
	ck_assert_int_eq(vs_parallel(s, "i"), VS_REJECTED);
	ck_assert_str_eq(vs_report_replay(vs_last_report(s)), "impossible");
	/* a committed step has no counterexample */
	ck_assert_int_eq(vs_split(s, "i", 1, NULL, NULL, NULL), VS_OK);
	ck_assert_ptr_null(vs_report_cex_obligation(vs_last_report(s)));
	ck_assert_int_eq(vs_report_cex_num_values(vs_last_report(s)), 0);
	ck_assert_ptr_null(vs_report_replay_text(vs_last_report(s)));
	vs_schedule_free(s);
}
END_TEST

START_TEST(precondition_failures_are_rejected_not_bad_input)
{
	const char *symbolic = tu_fixture("api/precondition_failures_are_rejected_not_bad_input.tir");
	vs_module *m = parse("k.tir", symbolic);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_vectorize(s, "i"), VS_REJECTED);
	ck_assert_ptr_nonnull(strstr(vs_report_reason(vs_last_report(s)), "constant extent"));
	ck_assert_int_eq(vs_unroll(s, "i"), VS_REJECTED);
	ck_assert_int_eq(vs_fuse(s, "i", "i", NULL), VS_REJECTED);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "perfectly nested"));
	vs_schedule_free(s);
}
END_TEST

START_TEST(bad_names_and_arguments_are_bad_input)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_split(s, "q", 4, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "no loop 'q' in function 'scale' (loops: i)"));
	ck_assert_int_eq(vs_report_status(vs_last_report(s)), VS_BAD_INPUT);
	/* a misspelled name gets the closest loop; a one-letter one never does */
	ck_assert_int_eq(vs_split(s, "ii", 4, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx),
				     "no loop 'ii' in function 'scale'; did you mean 'i'? (loops: i)"));
	ck_assert_int_eq(vs_split(s, "i", 0, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "factor must be >= 1"));
	ck_assert_int_eq(vs_split(s, "i", 4, "sideways", NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "tail must be"));
	ck_assert_int_eq(vs_split(s, "i#2", 4, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_split(s, "i#x", 4, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "NAME#K"));
	ck_assert_int_eq(vs_fuse(s, "i", "nope", NULL), VS_BAD_INPUT);
	const char *twice[] = {"i", "i"};
	ck_assert_int_eq(vs_reorder(s, 2, twice), VS_BAD_INPUT);
	ck_assert_int_eq(vs_reorder(s, 0, twice), VS_BAD_INPUT);
	ck_assert_int_eq(vs_parallel(s, "k"), VS_BAD_INPUT);
	ck_assert_int_eq(vs_vectorize(s, "k"), VS_BAD_INPUT);
	ck_assert_int_eq(vs_unroll(s, "k"), VS_BAD_INPUT);
	ck_assert_int_eq(vs_work_on(s, "nope"), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "'nope'"));
	ck_assert_int_eq(vs_float_mode(s, "fast"), VS_BAD_INPUT);
	ck_assert_int_eq(vs_float_mode(s, NULL), VS_BAD_INPUT);
	/* NULL names are bad input, not a crash */
	ck_assert_int_eq(vs_split(s, NULL, 4, NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_fuse(s, NULL, "i", NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_reorder(s, 2, NULL), VS_BAD_INPUT);
	const char *with_null[] = {"i", NULL};
	ck_assert_int_eq(vs_reorder(s, 2, with_null), VS_BAD_INPUT);
	ck_assert_int_eq(vs_parallel(s, NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_work_on(s, NULL), VS_BAD_INPUT);
	/* nothing was committed */
	char *a = vs_module_print(m), *b = vs_module_print(vs_schedule_result(s));
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	vs_schedule_free(s);
}
END_TEST

/* ---------- scripts ---------- */

START_TEST(scripts_run_and_report_positions)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_run_script_string(s, "ok.sched",
					      "io, ii = sch.split(\"i\", factor=2, tail=\"perfect\")\n"
					      "sch.parallel(\"io\")\n"),
			 VS_OK);
	ck_assert_int_eq(vs_num_reports(s), 2);
	/* unknown loop: the script position */
	ck_assert_int_eq(vs_run_script_string(s, "bad.sched", "\nsch.split(\"q\", factor=2)\n"),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "bad.sched:2:1: error: no loop 'q'"), "%s",
		      vs_last_error(ctx));
	/* syntax error */
	ck_assert_int_eq(vs_run_script_string(s, "syn.sched", "sch.split(\"i\", factor=4\n"),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "syn.sched:1:10: error: '(' was never closed"),
		      "%s", vs_last_error(ctx));
	/* bad argument kind */
	ck_assert_int_eq(vs_run_script_string(s, "arg.sched", "sch.split(\"ii\", factor=\"x\")\n"),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "arg.sched:1:24: error: split: factor must be an integer literal"),
		      "%s", vs_last_error(ctx));
	/* a rejected step stops the script; later steps do not run */
	int before = vs_num_reports(s);
	ck_assert_int_eq(vs_run_script_string(s, "rej.sched",
					      "a, b = sch.split(\"ii\", factor=4, tail=\"perfect\")\n"
					      "sch.unroll(\"io\")\n"),
			 VS_REJECTED);
	ck_assert_int_eq(vs_num_reports(s), before + 1);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "split.divisible"));
	/* from files */
	write_file(path_in_tmp("s.sched"), "sch.unroll(\"ii\")\n");
	ck_assert_int_eq(vs_run_script_file(s, path_in_tmp("s.sched")), VS_OK);
	ck_assert_int_eq(vs_run_script_file(s, path_in_tmp("missing.sched")), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "missing.sched"));
	assert_result_equivalent(m, s);
	vs_schedule_free(s);
}
END_TEST

/* ---------- limits ---------- */

START_TEST(tiny_resource_limit_rejects_as_not_proven)
{
	vs_module *m = parse("w.tir", tu_fixture(wavefront));
	vs_options opt = {0};
	opt.rlimit = 1;
	vs_schedule *s = vs_schedule_new(ctx, m, &opt);
	const char *order[] = {"j", "i"};
	ck_assert_int_eq(vs_reorder(s, 2, order), VS_REJECTED);
	const vs_report *r = vs_last_report(s);
	ck_assert_ptr_nonnull(strstr(vs_report_reason(r), "not proven (resource limit)"));
	const char *verdict;
	int n = vs_report_num_obligations(r), unproven = 0;
	for (int i = 0; i < n; i++) {
		vs_report_obligation(r, i, NULL, NULL, &verdict, NULL);
		unproven += strcmp(verdict, "not proven") == 0;
	}
	ck_assert_int_ge(unproven, 1);
	ck_assert_ptr_null(vs_report_counterexample(r));
	ck_assert_str_eq(vs_report_replay(r), "none");
	vs_schedule_free(s);
}
END_TEST

/* ---------- interpreter ---------- */

START_TEST(interp_and_equiv)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	char *out = NULL;
	ck_assert_int_eq(vs_interp(ctx, m, NULL, 3, &out), VS_OK);
	ck_assert_ptr_nonnull(strstr(out, "function scale, seed 3"));
	ck_assert_ptr_nonnull(strstr(out, "outputs:"));
	free(out);
	ck_assert_int_eq(vs_interp(ctx, m, "nope", 3, &out), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "no function 'nope'"));
	free(out);
	const char *oob = tu_fixture("api/interp_and_equiv.tir");
	vs_module *u = parse("oob.tir", oob);
	ck_assert_int_eq(vs_interp(ctx, u, NULL, 1, &out), VS_REJECTED);
	ck_assert_ptr_nonnull(strstr(out, "out of bounds"));
	free(out);

	ck_assert_int_eq(vs_equiv(ctx, m, m, NULL, 5, 1, &out), VS_OK);
	free(out);
	char *other = strdup(tu_fixture(scale14));
	*strstr(other, "2 * A[i]") = '3';
	vs_module *m3 = parse("k3.tir", other);
	free(other);
	ck_assert_int_eq(vs_equiv(ctx, m, m3, NULL, 5, 1, &out), VS_REJECTED);
	ck_assert_ptr_nonnull(strstr(out, "B["));
	free(out);
	ck_assert_int_eq(vs_equiv(ctx, m, m3, "nope", 5, 1, &out), VS_BAD_INPUT);
	free(out);
}
END_TEST

/* ---------- proof logs ---------- */

START_TEST(proof_log_written_shown_and_checked)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_options opt = {0};
	opt.log_dir = path_in_tmp("log");
	vs_schedule *s = vs_schedule_new(ctx, m, &opt);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(vs_split(s, "i", 2, "perfect", "io", "ii"), VS_OK);
	ck_assert_int_eq(vs_split(s, "io", 4, "perfect", NULL, NULL), VS_REJECTED);
	vs_schedule_free(s); /* closes the log */
	char *out = NULL;
	ck_assert_int_eq(vs_log_show(opt.log_dir, false, &out), VS_OK);
	ck_assert_ptr_nonnull(strstr(out, "1 proven, 1 refuted"));
	free(out);
	ck_assert_int_eq(vs_log_show(opt.log_dir, true, &out), VS_OK);
	ck_assert_ptr_nonnull(strstr(out, "\"type\""));
	free(out);
	ck_assert_int_eq(vs_log_check(opt.log_dir, "z3", &out), VS_OK);
	ck_assert_ptr_nonnull(strstr(out, "0 disagree"));
	free(out);
	ck_assert_int_eq(vs_log_check(opt.log_dir, "cvc5", &out), VS_OK);
	free(out);
	ck_assert_int_eq(vs_log_check(opt.log_dir, "yices", &out), VS_BAD_INPUT);
	free(out);
	ck_assert_int_eq(vs_log_show(path_in_tmp("nolog"), false, &out), VS_BAD_INPUT);
	free(out);
	ck_assert_int_eq(vs_log_check(path_in_tmp("nolog"), "z3", &out), VS_BAD_INPUT);
	free(out);
	/* a log directory that cannot be made */
	write_file(path_in_tmp("file"), "x");
	opt.log_dir = path_in_tmp("file/log");
	ck_assert_ptr_null(vs_schedule_new(ctx, m, &opt));
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "proof log"));
}
END_TEST

/* ---------- the example programs ---------- */

/* build/run_tests -> build/examples/NAME (VS_EXAMPLES overrides the
 * folder). */
static void example_path(char *out, size_t n, const char *name)
{
	const char *env = getenv("VS_EXAMPLES");
	if (env && *env) {
		snprintf(out, n, "%s/%s", env, name);
		return;
	}
	char self[4096];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	ck_assert_msg(k > 0, "cannot find the test binary");
	self[k] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	snprintf(out, n, "%s/examples/%s", self, name);
}

START_TEST(example_api_split_runs)
{
	char bin[4200], cmd[4600];
	example_path(bin, sizeof bin, "api_split");
	struct stat st;
	ck_assert_msg(stat(bin, &st) == 0, "%s is missing: run `make examples`", bin);
	char *log = strdup(path_in_tmp("example-log"));
	char *outp = strdup(path_in_tmp("example.out"));
	snprintf(cmd, sizeof cmd, "'%s' '%s' > '%s' 2>&1", bin, log, outp);
	int rc = system(cmd);
	char *out = tu_read_file(outp);
	free(outp);
	free(log);
	ck_assert_msg(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "example failed:\n%s",
		      out ? out : "");
	ck_assert_ptr_nonnull(strstr(out, "replay: confirmed"));
	ck_assert_ptr_nonnull(strstr(out, "for io in T.parallel(4):"));
	ck_assert_ptr_nonnull(strstr(out, "0 disagree"));
	free(out);
}
END_TEST

/* The output of a shell command (exit status in *rc), or fail. */
static char *run_cmd(const char *cmd, int *rc)
{
	char *outp = strdup(path_in_tmp("cmd.out"));
	char full[8192];
	snprintf(full, sizeof full, "(%s) > '%s' 2>&1", cmd, outp);
	int st = system(full);
	*rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	char *out = tu_read_file(outp);
	free(outp);
	return out ? out : strdup("");
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VS_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define VS_TEST_UNDER_ASAN 1
#endif

/* make install into a staging folder; a program outside the tree built
 * with `pkg-config --cflags --libs vsched` alone links against the shared
 * library, runs, and finds the version its header names; the shared
 * library exports only vs_* symbols; the installed CLI knows its version;
 * the header compiles as C++. (Under ASan the test binary is not what
 * `make install` builds: the check runs with make test.) */
START_TEST(installs_and_links_with_pkg_config)
{
#ifdef VS_TEST_UNDER_ASAN
	fprintf(stderr, "api: install test skipped under ASan (make test runs it)\n");
	return;
#endif
	char stage[300], cmd[4096];
	snprintf(stage, sizeof stage, "%s", path_in_tmp("stage"));
	int rc;
	snprintf(cmd, sizeof cmd, "make --no-print-directory -s install DESTDIR='%s' PREFIX=/opt/vs",
		 stage);
	char *out = run_cmd(cmd, &rc);
	ck_assert_msg(rc == 0, "make install failed:\n%s", out);
	free(out);
	const char *lib = "/opt/vs/lib";
	const char *needed[] = {"/opt/vs/bin/vsched", "/opt/vs/include/vsched.h",
				"/opt/vs/lib/libvsched.a", "/opt/vs/lib/libvsched_rt.a",
				"/opt/vs/lib/libvsched.so", "/opt/vs/lib/libvsched.so.0",
				"/opt/vs/lib/pkgconfig/vsched.pc"};
	for (size_t i = 0; i < sizeof needed / sizeof *needed; i++) {
		char p[600];
		snprintf(p, sizeof p, "%s%s", stage, needed[i]);
		struct stat st;
		ck_assert_msg(stat(p, &st) == 0, "%s was not installed", needed[i]);
	}
	snprintf(cmd, sizeof cmd,
		 "export PKG_CONFIG_PATH='%s%s/pkgconfig' PKG_CONFIG_SYSROOT_DIR='%s'; "
		 "cc -std=c11 tests/data/api/install_user.c $(pkg-config --cflags --libs vsched) "
		 "-o '%s/user' && LD_LIBRARY_PATH='%s%s' '%s/user'",
		 stage, lib, stage, stage, stage, lib, stage);
	out = run_cmd(cmd, &rc);
	ck_assert_msg(rc == 0, "the installed library did not build or run a program:\n%s", out);
	ck_assert_msg(strstr(out, "vsched " VS_VERSION_STRING "\n") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "for io, ii in T.grid(4, 4):") != NULL, "%s", out);
	free(out);
	/* only the API and the runtime are exported, and the soname has the
	 * major version */
	snprintf(cmd, sizeof cmd,
		 "nm -D --defined-only '%s%s/libvsched.so' | awk '{print $3}' | grep -v '^vs_' ; "
		 "readelf -d '%s%s/libvsched.so' | grep SONAME",
		 stage, lib, stage, lib);
	out = run_cmd(cmd, &rc);
	ck_assert_msg(strstr(out, "[libvsched.so.0]") != NULL, "%s", out);
	/* the symbol list (first) is empty: the output starts with readelf's */
	ck_assert_msg(strncmp(out, " 0x", 3) == 0, "symbols other than vs_* are exported:\n%s", out);
	free(out);
	snprintf(cmd, sizeof cmd, "'%s/opt/vs/bin/vsched' --version", stage);
	out = run_cmd(cmd, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out, "vsched " VS_VERSION_STRING "\n");
	free(out);
	/* C++: the declarations sit in extern "C" */
	snprintf(cmd, sizeof cmd,
		 "command -v clang >/dev/null || exit 0; printf '#include <vsched.h>\\n"
		 "int main() { return vs_version() ? 0 : 1; }\\n' | "
		 "clang -x c++ -fsyntax-only -I'%s/opt/vs/include' -", stage);
	out = run_cmd(cmd, &rc);
	ck_assert_msg(rc == 0, "vsched.h does not compile as C++:\n%s", out);
	free(out);
}
END_TEST

static const char row_sum_text[] = "api/row_sum_text.tir";

/* seed 000's row summation through the layout and overcompute functions */
START_TEST(layout_and_overcompute_functions_schedule_the_row_sum)
{
	vs_module *m = vs_parse_string(ctx, "row_sum.tir", tu_fixture(row_sum_text));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j // 4, j % 4]", "0", NULL, NULL),
			 VS_OK);
	ck_assert_int_eq(vs_split(s, "j", 4, NULL, "jo", "ji"), VS_OK);
	ck_assert_int_eq(vs_simplify(s), VS_OK);
	ck_assert_int_eq(vs_remove_branching_through_overcompute(s, NULL, "ji", true), VS_OK);
	char *text = vs_module_print(vs_schedule_result(s));
	ck_assert_ptr_nonnull(strstr(text, "B[i] = B[i] + A[i, jo, ji]"));
	ck_assert_ptr_null(strstr(text, "if "));
	free(text);
	/* compared through the layout map with the module it started from */
	char *report = NULL;
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 4, 1, &report), VS_OK);
	free(report);
	ck_assert_int_eq(vs_hoist_expression(s, "if_else_stmt", NULL, NULL), VS_OK);
	ck_assert_int_eq(vs_reduce_loop_extents(s, NULL), VS_OK);
	ck_assert_int_eq(vs_remove_no_op(s, NULL), VS_OK);
	vs_schedule_free(s);
	/* padding with 1, not the identity of +: refused, the violation said
	 * plainly from the model (what the store writes over what, and why) */
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j // 4, j % 4]", "1", NULL, NULL),
			 VS_OK);
	ck_assert_int_eq(vs_split(s, "j", 4, NULL, "jo", "ji"), VS_OK);
	ck_assert_int_eq(vs_simplify(s), VS_OK);
	ck_assert_int_eq(vs_remove_branching_through_overcompute(s, NULL, "ji", true), VS_REJECTED);
	char *why = vs_report_text(vs_last_report(s));
	ck_assert_msg(strstr(why, "    violation: the store at 6:13 writes ") &&
			      strstr(why, ": not a no-op; A[") &&
			      strstr(why, "is padding of A, holding its pad value 1\n"),
		      "%s", why);
	free(why);
	vs_schedule_free(s);
	/* with T.undef() padding the last step is refused, with a replay */
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j // 4, j % 4]", "T.undef()", NULL,
					     NULL),
			 VS_OK);
	ck_assert_int_eq(vs_sequential_buffer_access(s, "A", NULL), VS_OK);
	ck_assert_int_eq(vs_remove_branching_through_overcompute(s, NULL, NULL, true), VS_REJECTED);
	ck_assert_str_eq(vs_report_replay(vs_last_report(s)), "confirmed");
	ck_assert_int_eq(vs_remove_overcompute_through_branching(s, NULL, false), VS_OK);
	/* bad text is bad input with a position */
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i j: [i]", NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "index_map:1:"));
	ck_assert_int_eq(vs_transform_layout(s, NULL, "lambda i: [i]", NULL, NULL, NULL), VS_BAD_INPUT);
	vs_schedule_free(s);
}
END_TEST

/* No string argument is ever read as schedule-script text: text that would
 * close a call and start another is a bad-input error positioned in the
 * string passed, and no step runs but the one called. */
START_TEST(string_arguments_cannot_inject_steps)
{
	vs_module *m = vs_parse_string(ctx, "row_sum.tir", tu_fixture(row_sum_text));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	const char *inj = "\") ; sch.simplify(\"";
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j // 4, j % 4]",
					     "0.0) ; sch.simplify(", NULL, NULL),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "pad_value:1:") != NULL, "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j]) ; sch.simplify(", NULL, NULL,
					     NULL),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "index_map:1:") != NULL, "%s", vs_last_error(ctx));
	/* every other string argument: every_string_argument_is_checked */
	(void)inj;
	/* nothing ran: no report names simplify, the kernel is as parsed */
	for (int i = 0; i < vs_num_reports(s); i++) {
		ck_assert_int_ne(vs_report_status(vs_report_at(s, i)), VS_OK);
		ck_assert_int_ne(strncmp(vs_report_step(vs_report_at(s, i)), "simplify", 8), 0);
	}
	char *a = vs_module_print(m), *b = vs_module_print(vs_schedule_result(s));
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	/* a pad value is one number, None, T.undef(), an expression or a lambda */
	ck_assert_int_eq(vs_transform_layout(s, "A", "lambda i, j: [i, j // 4, j % 4]", " -0 ", NULL, NULL),
			 VS_OK);
	vs_schedule_free(s);
}
END_TEST

/* Every string argument of every typed primitive, given text that would
 * close a script call and start another, is bad input with its reason: a
 * name is not a name, a word not one of the words, a map or a pad value a
 * parse error positioned in the string passed; no step commits. */
#define INJECTED(call, why)                                                           \
	do {                                                                          \
		ck_assert_int_eq((call), VS_BAD_INPUT);                               \
		ck_assert_msg(strstr(vs_last_error(ctx), (why)) != NULL, "%s: %s", #call, \
			      vs_last_error(ctx));                                    \
	} while (0)

START_TEST(every_string_argument_is_checked)
{
	vs_module *m = vs_parse_file(ctx, "examples/tvm_matmul/matmul.tir");
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	const char *x = "k\") ; sch.simplify(\"";
	const char *name = "is not a name";
	const char *inj_list[] = {"i", x};
	INJECTED(vs_work_on(s, x), name);
	INJECTED(vs_float_mode(s, x), "float_mode: mode must be one of real, ieee");
	INJECTED(vs_split(s, x, 4, NULL, NULL, NULL), "split: loop \"k\") ; sch.simplify(\"\" is not a name");
	INJECTED(vs_split(s, "k", 4, x, NULL, NULL), "split: tail must be one of guard, perfect, cut, cut_and_guard");
	INJECTED(vs_split(s, "k", 4, NULL, x, NULL), name);
	INJECTED(vs_split(s, "k", 4, NULL, NULL, x), name);
	INJECTED(vs_split_tail(s, x, 4, NULL, NULL, NULL, "kt"), name);
	INJECTED(vs_split_tail(s, "k", 4, x, NULL, NULL, "kt"), "split: tail must be one of guard, perfect, cut, cut_and_guard");
	INJECTED(vs_split_tail(s, "k", 4, NULL, x, NULL, "kt"), name);
	INJECTED(vs_split_tail(s, "k", 4, NULL, NULL, x, "kt"), name);
	INJECTED(vs_split_tail(s, "k", 4, NULL, NULL, NULL, x), name);
	INJECTED(vs_fuse(s, x, "j", NULL), name);
	INJECTED(vs_fuse(s, "i", x, NULL), name);
	INJECTED(vs_fuse(s, "i", "j", x), name);
	INJECTED(vs_reorder(s, 2, inj_list), name);
	INJECTED(vs_parallel(s, x), name);
	INJECTED(vs_vectorize(s, x), name);
	INJECTED(vs_unroll(s, x), name);
	INJECTED(vs_merge_adjacent_loops(s, x, "j"), name);
	INJECTED(vs_merge_adjacent_loops(s, "i", x), name);
	INJECTED(vs_fission(s, x, 0), name);
	INJECTED(vs_fission_before(s, x, "k"), name);
	INJECTED(vs_fission_before(s, "i", x), name);
	INJECTED(vs_merge_conditionals(s, x, false), name);
	INJECTED(vs_cache_read(s, x, "A", NULL, NULL), name);
	INJECTED(vs_cache_read(s, NULL, x, NULL, NULL), name);
	INJECTED(vs_cache_read(s, NULL, "A", x, NULL), name);
	INJECTED(vs_cache_read(s, NULL, "A", NULL, x), name);
	INJECTED(vs_cache_write(s, x, "C", NULL, NULL), name);
	INJECTED(vs_cache_write(s, NULL, x, NULL, NULL), name);
	INJECTED(vs_cache_write(s, NULL, "C", x, NULL), name);
	INJECTED(vs_cache_write(s, NULL, "C", NULL, x), name);
	INJECTED(vs_compute_at(s, x, "i"), name);
	INJECTED(vs_compute_at(s, "C", x), name);
	INJECTED(vs_reverse_compute_at(s, x, "i"), name);
	INJECTED(vs_reverse_compute_at(s, "C", x), name);
	INJECTED(vs_transform_layout(s, x, "lambda i, j: [j, i]", NULL, NULL, NULL), name);
	INJECTED(vs_transform_layout(s, "A", "lambda i, j: [j, i]) ; sch.simplify(", NULL, NULL, NULL),
		 "index_map:1:");
	INJECTED(vs_transform_layout(s, "A", "lambda i, j: [j, i]", "0.0) ; sch.simplify(", NULL, NULL),
		 "pad_value:1:");
	INJECTED(vs_transform_layout(s, "A", "lambda i, j: [j, i]", NULL, x, NULL), name);
	INJECTED(vs_transform_layout(s, "A", "lambda i, j: [j, i]", NULL, NULL, x), name);
	INJECTED(vs_sequential_buffer_access(s, x, NULL), name);
	INJECTED(vs_sequential_buffer_access(s, "A", x), name);
	INJECTED(vs_remove_branching_through_overcompute(s, x, NULL, false), name);
	INJECTED(vs_remove_branching_through_overcompute(s, NULL, x, false), name);
	INJECTED(vs_remove_overcompute_through_branching(s, x, false), name);
	INJECTED(vs_remove_no_op(s, x), name);
	INJECTED(vs_hoist_expression(s, "if_else_stmt) ; sch.simplify(", NULL, NULL),
		 "hoist_expression: conditionals must be one of none, if_else_stmt, if_else_expr, boolean_expression (joined with |)");
	INJECTED(vs_hoist_expression(s, NULL, x, NULL), name);
	INJECTED(vs_hoist_expression(s, NULL, NULL, x), name);
	INJECTED(vs_reduce_loop_extents(s, x), name);
	INJECTED(vs_decompose_reduction(s, x, "k"), name);
	INJECTED(vs_decompose_reduction(s, "C", x), name);
	INJECTED(vs_rfactor(s, x, 0), name);
	INJECTED(vs_add_unit_loop(s, x), name);
	INJECTED(vs_lift_alloc(s, x, 1), name);
	INJECTED(vs_transform_block_layout(s, x, "lambda i, j, k: (i, j, k)"), name);
	INJECTED(vs_transform_block_layout(s, "C", "lambda i, j, k: (i, j, k)) ; sch.simplify("),
		 "index_map:1:");
	INJECTED(vs_reindex(s, x, "A", false, NULL, NULL), name);
	INJECTED(vs_reindex(s, "C", x, false, NULL, NULL), name);
	INJECTED(vs_reindex(s, "C", "A", false, x, "lambda i, k: (i, k)"), name);
	INJECTED(vs_reindex(s, "C", "A", false, "local", "lambda i, k: (i, k)) ; sch.simplify("),
		 "index_map:1:");
	/* a missing (NULL) required string is bad input too, named */
	INJECTED(vs_compute_at(s, NULL, "i"), "compute_at: block: missing (NULL) argument");
	INJECTED(vs_reindex(s, "C", NULL, false, NULL, NULL), "reindex: buffer: missing (NULL) argument");
	/* nothing committed: the kernel is as parsed */
	for (int i = 0; i < vs_num_reports(s); i++)
		ck_assert_int_ne(vs_report_status(vs_report_at(s, i)), VS_OK);
	char *a = vs_module_print(m), *b = vs_module_print(vs_schedule_result(s));
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	vs_schedule_free(s);
}
END_TEST

/* The primitive table (vs_primitives_doc) is the README's; each C API
 * function it names is declared in vsched.h and called for what it does
 * by a test (tests/test_*.c, injection attempts aside); each primitive it
 * names is one the script reader knows. */
START_TEST(primitive_table_drives_readme_api_and_scripts)
{
	char *doc = vs_primitives_doc();
	char *readme = tu_read_file("README.md");
	ck_assert_ptr_nonnull(readme);
	ck_assert_msg(strstr(readme, doc) != NULL,
		      "README.md's table of primitives is not `vsched help primitives`:\n%s", doc);
	char *header = tu_read_file("include/vsched.h");
	ck_assert_ptr_nonnull(header);
	/* every test file's lines, but the injection attempts: a typed test
	 * calls the function for what it does */
	glob_t g;
	ck_assert_int_eq(glob("tests/test_*.c", 0, NULL, &g), 0);
	size_t cap = 1;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *t = tu_read_file(g.gl_pathv[i]);
		ck_assert_ptr_nonnull(t);
		cap += strlen(t) + 1;
		free(t);
	}
	char *tests = calloc(cap, 1);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *t = tu_read_file(g.gl_pathv[i]), *save = NULL;
		for (char *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (!strstr(l, "INJECTED("))
				strcat(strcat(tests, l), "\n");
		free(t);
	}
	globfree(&g);
	vs_module *m = vs_parse_file(ctx, "examples/tvm_matmul/matmul.tir");
	ck_assert_ptr_nonnull(m);
	int rows = 0, apis = 0;
	for (char *line = strstr(doc, "\n| `"); line; line = strstr(line + 1, "\n| `")) {
		rows++;
		/* the primitive: "| `split(" */
		char prim[64], fn[64], call[80];
		const char *p = line + 4;
		size_t n = strcspn(p, "(");
		ck_assert_uint_lt(n, sizeof prim);
		memcpy(prim, p, n);
		prim[n] = 0;
		vs_schedule *s = vs_schedule_new(ctx, m, NULL);
		snprintf(call, sizeof call, "sch.%s()\n", prim);
		vs_run_script_string(s, "t.sched", call);
		ck_assert_msg(strstr(vs_last_error(ctx), "unknown schedule primitive") == NULL, "%s: %s", prim,
			      vs_last_error(ctx));
		vs_schedule_free(s);
		/* its C API functions: "| `vs_split`, `vs_split_tail` |" */
		const char *api = strstr(p, " | `vs_");
		const char *eol = strchr(p, '\n');
		if (!api || (eol && api > eol))
			continue;
		const char *cell_end = strstr(api + 3, " | ");
		for (const char *q = strstr(api, "`vs_"); q && q < cell_end; q = strstr(q + 1, "`vs_")) {
			apis++;
			n = strcspn(q + 1, "`");
			ck_assert_uint_lt(n, sizeof fn - 1);
			memcpy(fn, q + 1, n);
			fn[n] = '(';
			fn[n + 1] = 0;
			ck_assert_msg(strstr(header, fn) != NULL, "%s is not declared in vsched.h", fn);
			snprintf(call, sizeof call, "%ss", fn);
			ck_assert_msg(strstr(tests, call) != NULL, "%s has no typed test in tests/test_*.c", fn);
		}
	}
	ck_assert_int_ge(rows, 30);
	ck_assert_int_ge(apis, 25);
	free(doc);
	free(readme);
	free(header);
	free(tests);
}
END_TEST

/* The script reader checks a call's strings by the same table: a word
 * one of its words, a name a name, a keyword one of the row's, positioned
 * at the argument. */
START_TEST(scripts_check_strings_by_the_same_table)
{
	static const struct {
		const char *script, *why;
	} cases[] = {
		{"sch.float_mode(\"fast\")\n", "t.sched:1:16: error: sch.float_mode: mode must be one of real, ieee, not \"fast\""},
		{"sch.split(\"i\", factor=4, tail=\"sideways\")\n",
		 "t.sched:1:31: error: sch.split: tail must be one of guard, perfect, cut, cut_and_guard"},
		{"sch.hoist_expression(conditionals=\"if_else_stmt|bogus\")\n",
		 "sch.hoist_expression: conditionals must be one of none, if_else_stmt, if_else_expr, boolean_expression (joined with |)"},
		{"sch.parallel(\"i j\")\n", "t.sched:1:14: error: sch.parallel: loop \"i j\" is not a name"},
		{"sch.split(\"i\", factor=4, outer=\"io\")\n",
		 "sch.split: unexpected keyword argument 'outer' (it takes loop=, factor=, tail=)"},
		{"sch.merge_adjacent_loops(l1=\"i\")\n",
		 "sch.merge_adjacent_loops: unexpected keyword argument 'l1' (it takes no keyword arguments)"},
	};
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		vs_schedule *s = vs_schedule_new(ctx, m, NULL);
		ck_assert_int_eq(vs_run_script_string(s, "t.sched", cases[i].script), VS_BAD_INPUT);
		ck_assert_msg(strstr(vs_last_error(ctx), cases[i].why), "%s: %s", cases[i].script,
			      vs_last_error(ctx));
		ck_assert_int_eq(vs_num_reports(s), 0);
		vs_schedule_free(s);
	}
}
END_TEST

/* A misspelled block or buffer gets the closest name, then the names the
 * function has; a name far from all of them gets only the list. */
START_TEST(misspelled_blocks_and_buffers_get_did_you_mean)
{
	vs_module *m = parse("k.tir", tu_fixture(scale14));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_cache_read(s, NULL, "AA", "local", NULL), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "no buffer 'AA' in function 'scale'; did you mean 'A'? (buffers: A, B)"),
		      "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_transform_layout(s, "Zebra", "lambda i: [i]", NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "no buffer 'Zebra' in function 'scale' (buffers: A, B)"),
		      "%s", vs_last_error(ctx));
	vs_schedule_free(s);
	m = vs_parse_file(ctx, "examples/tvm_matmul/matmul.tir");
	ck_assert_ptr_nonnull(m);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_run_script_string(s, "s.sched", "b = sch.get_block(\"CC\")\n"), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "no block 'CC' in function 'matmul'; did you mean 'C'? (blocks: C)"),
		      "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_compute_at(s, "Cx", "i"), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "did you mean 'C'?"), "%s", vs_last_error(ctx));
	vs_schedule_free(s);
}
END_TEST

/* The block primitives of TVM's API as typed calls: each commits with its
 * obligations proven and computes what the kernel did (vs_equiv on random
 * inputs), or is rejected or bad input with its reason. */
static void assert_same(vs_module *before, vs_schedule *s, const char *func)
{
	char *report = NULL;
	vs_status st = vs_equiv(ctx, before, vs_schedule_result(s), func, 3, 1, &report);
	ck_assert_msg(st == VS_OK, "%s", report ? report : vs_last_error(ctx));
	free(report);
}

START_TEST(block_primitives_are_typed_calls)
{
	/* rfactor: exact for int32 +, refuted for float32 + in ieee mode */
	vs_module *m = vs_parse_file(ctx, "tests/data/tensorir/rfactor_ops.tir");
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_work_on(s, "sum_i32"), VS_OK);
	ck_assert_int_eq(vs_rfactor(s, "ki", 0), VS_OK);
	ck_assert_str_eq(vs_report_step(vs_last_report(s)), "rfactor(\"ki\", 0)");
	assert_same(m, s, "sum_i32");
	vs_schedule_free(s);
	s = vs_schedule_new(ctx, m, &(vs_options){.float_ieee = true});
	ck_assert_int_eq(vs_work_on(s, "sum_f32"), VS_OK);
	ck_assert_int_eq(vs_rfactor(s, "ki", 0), VS_REJECTED);
	ck_assert_str_eq(vs_report_cex_obligation(vs_last_report(s)), "rfactor.reassociate");
	ck_assert_int_eq(vs_rfactor(s, "ki", 7), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "factor_axis 7 is out of range"), "%s", vs_last_error(ctx));
	vs_schedule_free(s);

	/* decompose_reduction and add_unit_loop on TVM's matmul */
	m = vs_parse_file(ctx, "examples/tvm_matmul/matmul.tir");
	ck_assert_ptr_nonnull(m);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_decompose_reduction(s, "C", "k"), VS_OK);
	ck_assert_int_eq(vs_add_unit_loop(s, "C_update"), VS_OK);
	assert_same(m, s, "matmul");
	ck_assert_int_eq(vs_decompose_reduction(s, "nope", "k"), VS_BAD_INPUT);
	vs_schedule_free(s);

	/* transform_block_layout: a map parsed alone, positioned in its string */
	m = vs_parse_file(ctx, "tests/data/layout/tbl_elementwise.tir");
	ck_assert_ptr_nonnull(m);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_transform_block_layout(s, "B", "lambda i, j: (j, i)"), VS_OK);
	assert_same(m, s, NULL);
	ck_assert_int_eq(vs_transform_block_layout(s, "B", "lambda i, j: (i, j)) ; sch.simplify("),
			 VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "index_map:1:"), "%s", vs_last_error(ctx));
	vs_schedule_free(s);

	/* reindex and reindex_cache_read */
	m = vs_parse_file(ctx, "tests/data/reindex/transpose.tir");
	ck_assert_ptr_nonnull(m);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_reindex(s, "B", "A", false, NULL, NULL), VS_OK);
	assert_same(m, s, NULL);
	vs_schedule_free(s);
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_reindex(s, "B", "A", false, "local", "lambda i, j: (j // 4, j % 4, i)"), VS_OK);
	assert_same(m, s, NULL);
	ck_assert_int_eq(vs_reindex(s, "B", "A", false, "local", NULL), VS_BAD_INPUT);
	vs_schedule_free(s);
}
END_TEST

/* A schedule of the kernel at path (*m) whose loop j is split by 4 with a
 * cut tail named jt. */
static vs_schedule *cut_tail_of_j(const char *path, vs_module **m)
{
	*m = vs_parse_file(ctx, path);
	ck_assert_ptr_nonnull(*m);
	vs_schedule *s = vs_schedule_new(ctx, *m, NULL);
	ck_assert_int_eq(vs_split_tail(s, "j", 4, NULL, NULL, NULL, "jt"), VS_OK);
	return s;
}

/* A cut tail named and lifted into a nest of its own by typed calls, as
 * the script's `jo, ji, jt = sch.split(..., tail="cut")` and
 * `sch.fission(io, before=jt)`: each part then scheduled on its own, the
 * result computing what the kernel did; the calls that cannot name or
 * lift a tail say why. */
START_TEST(split_tail_and_fission_before_are_typed_calls)
{
	vs_module *m = vs_parse_file(ctx, "tests/data/loops/tail_colsum.tir");
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_split(s, "i", 4, "perfect", "io", "ii"), VS_OK);
	ck_assert_int_eq(vs_split_tail(s, "j", 4, NULL, "jo", "ji", "jt"), VS_OK);
	ck_assert_str_eq(vs_report_step(vs_last_report(s)),
			 "split(\"j\", factor=4, tail=\"cut\", tail_loop=\"jt\")");
	assert_same(m, s, NULL);
	ck_assert_int_eq(vs_fission_before(s, "io", "jt"), VS_OK);
	const vs_report *r = vs_last_report(s);
	ck_assert_str_eq(vs_report_step(r), "fission(\"io\", before=\"jt\")");
	ck_assert_msg(strstr(vs_report_note(r), "2 loops lifted; the second nest's loops: io#2, ii#2, jt, k#2"),
		      "%s", vs_report_note(r));
	bool fission_proven = false;
	for (int i = 0; i < vs_report_num_obligations(r); i++) {
		const char *kind, *verdict;
		vs_report_obligation(r, i, &kind, NULL, &verdict, NULL);
		ck_assert_str_eq(verdict, "proven");
		fission_proven |= strcmp(kind, "fission.no_conflict") == 0;
	}
	ck_assert(fission_proven);
	assert_same(m, s, NULL);
	const char *main_order[] = {"jo", "io#1", "ii#1", "ji"}, *tail_order[] = {"jt", "io#2", "ii#2"};
	ck_assert_int_eq(vs_reorder(s, 4, main_order), VS_OK);
	ck_assert_int_eq(vs_vectorize(s, "ji"), VS_OK);
	ck_assert_int_eq(vs_reorder(s, 3, tail_order), VS_OK);
	ck_assert_int_eq(vs_unroll(s, "ii#2"), VS_OK);
	assert_same(m, s, NULL);
	char *text = vs_module_print(vs_schedule_result(s));
	ck_assert_msg(strstr(text, "for jo, io, ii in T.grid(3, 2, 4):") && strstr(text, "for ji in T.vectorized(4):") &&
			      strstr(text, "for jt, io in T.grid(2, 2):") && strstr(text, "for ii in T.unroll(4):"),
		      "%s", text);
	free(text);
	vs_schedule_free(s);

	/* no tail to name, a tail that is not cut, no name: bad input */
	s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_split_tail(s, "j", 7, NULL, NULL, NULL, "jt"), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "the extent 14 of loop 'j' is a multiple of 7: there is no tail loop to name"),
		      "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_split_tail(s, "j", 4, "guard", NULL, NULL, "jt"), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "only tail=\"cut\" or \"cut_and_guard\" makes a tail loop to name"), "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_split_tail(s, "j", 4, "cut", NULL, NULL, NULL), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "split: tail_loop: missing (NULL) argument"), "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_fission_before(s, "i", NULL), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "fission: before: missing (NULL) argument"), "%s", vs_last_error(ctx));
	/* before= must be inside the loop, with something before it */
	ck_assert_int_eq(vs_fission_before(s, "i", "j"), VS_REJECTED);
	ck_assert_msg(strstr(vs_report_reason(vs_last_report(s)), "nothing stands before loop 'j'"), "%s",
		      vs_report_reason(vs_last_report(s)));
	ck_assert_int_eq(vs_split_tail(s, "j", 4, "cut_and_guard", NULL, NULL, "edge"), VS_OK);
	ck_assert_int_eq(vs_fission_before(s, "edge", "i"), VS_REJECTED);
	ck_assert_msg(strstr(vs_last_error(ctx), "loop 'i' is not inside loop 'edge'"), "%s", vs_last_error(ctx));
	ck_assert_int_eq(vs_fission_before(s, "i", "nope"), VS_BAD_INPUT);
	ck_assert_msg(strstr(vs_last_error(ctx), "no loop 'nope'"), "%s", vs_last_error(ctx));
	assert_same(m, s, NULL);
	vs_schedule_free(s);

	/* lifting the tail across a dependence: refuted, replayed */
	s = cut_tail_of_j("tests/data/loops/tail_mirror.tir", &m);
	ck_assert_int_eq(vs_fission_before(s, "i", "jt"), VS_REJECTED);
	r = vs_last_report(s);
	ck_assert_str_eq(vs_report_cex_obligation(r), "fission.no_conflict");
	ck_assert_msg(strstr(vs_report_reason(r), "obligation fission.no_conflict refuted"), "%s", vs_report_reason(r));
	ck_assert_str_eq(vs_report_replay(r), "confirmed");
	assert_same(m, s, NULL);
	vs_schedule_free(s);

	/* the tail's scratch buffer is its own: each part's lifted and vectorized */
	s = cut_tail_of_j("tests/data/loops/tail_scratch.tir", &m);
	ck_assert_int_eq(vs_lift_alloc(s, "tmp", 3), VS_OK);
	ck_assert_int_eq(vs_lift_alloc(s, "tmp_tail", 2), VS_OK);
	ck_assert_int_eq(vs_vectorize(s, "k#1"), VS_OK);
	ck_assert_int_eq(vs_vectorize(s, "k#2"), VS_OK);
	assert_same(m, s, NULL);
	vs_schedule_free(s);
}
END_TEST

Suite *suite_api(void)
{
	Suite *s = suite_create("api");
	struct { const char *name; const TTest *tests[6]; } cases[] = {
		{"kernels", {parse_print_and_functions, parse_errors_name_file_line_and_column}},
		{"steps", {primitives_commit_with_proven_reports, fuse_reorder_unroll_and_work_on,
			   refuted_step_is_rejected_with_counterexample_and_replay,
			   precondition_failures_are_rejected_not_bad_input,
			   bad_names_and_arguments_are_bad_input}},
		{"scripts", {scripts_run_and_report_positions}},
		{"layout", {layout_and_overcompute_functions_schedule_the_row_sum}},
		{"typed", {string_arguments_cannot_inject_steps, every_string_argument_is_checked}},
		{"primitive_table", {primitive_table_drives_readme_api_and_scripts,
				     scripts_check_strings_by_the_same_table}},
		{"names", {misspelled_blocks_and_buffers_get_did_you_mean}},
		{"block_primitives", {block_primitives_are_typed_calls}},
		{"tails", {split_tail_and_fission_before_are_typed_calls}},
		{"limits", {tiny_resource_limit_rejects_as_not_proven}},
		{"interp", {interp_and_equiv}},
		{"logs", {proof_log_written_shown_and_checked}},
		{"examples", {example_api_split_runs}},
		{"install", {installs_and_links_with_pkg_config}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 6 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
