/* examples/api_split.c — scheduling a kernel through the public C API
 * (include/vsched.h only): parse, split/parallel/vectorize with every step
 * proven by Z3, print the report of a rejected step with its
 * counterexample and replay, write a proof log and re-check it with the z3
 * binary. Usage: api_split [LOG_DIR]. Exit 0 when every step behaves as
 * the comments say, 1 otherwise. Built by `make examples`; the `api` test
 * suite runs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vsched.h"

static const char kernel[] =
	"@T.prim_func\n"
	"def scale(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
	"    for i in T.serial(14):\n"
	"        B[i] = 2 * A[i]\n";

static int failed(const char *what, vs_context *ctx)
{
	fprintf(stderr, "api_split: %s\n%s", what, vs_last_error(ctx));
	return 1;
}

/* Print every obligation of the last step, one line each. */
static void print_obligations(const vs_schedule *s)
{
	const vs_report *r = vs_last_report(s);
	for (int i = 0; i < vs_report_num_obligations(r); i++) {
		const char *kind, *statement, *verdict;
		double seconds;
		vs_report_obligation(r, i, &kind, &statement, &verdict, &seconds);
		printf("  %-20s %-10s %s\n", kind, verdict, statement);
	}
}

static int schedule(vs_context *ctx, vs_module *m, const char *log_dir)
{
	vs_options opt = {0};
	opt.timeout_ms = 10000;
	opt.log_dir = log_dir;
	vs_schedule *s = vs_schedule_new(ctx, m, &opt);
	if (!s)
		return failed("cannot create the schedule", ctx);

	/* 14 is not a multiple of 4: tail="perfect" is refuted, the IR stays */
	if (vs_split(s, "i", 4, "perfect", "io", "ii") != VS_REJECTED)
		return failed("split perfect should be rejected", ctx);
	const vs_report *r = vs_last_report(s);
	char *text = vs_report_text(r);
	printf("== rejected step (replay %s):\n%s", vs_report_replay(r), text);
	free(text);

	/* the default tail keeps a guard; nothing needs divisibility */
	if (vs_split(s, "i", 4, NULL, "io", "ii") != VS_OK)
		return failed("split with a guard should be committed", ctx);
	printf("== %s: committed\n", vs_report_step(vs_last_report(s)));
	print_obligations(s);

	if (vs_parallel(s, "io") != VS_OK || vs_vectorize(s, "ii") != VS_OK)
		return failed("parallel / vectorize should be committed", ctx);
	printf("== %s: committed\n", vs_report_step(vs_last_report(s)));
	print_obligations(s);

	char *ir = vs_module_print(vs_schedule_result(s));
	printf("== result:\n%s", ir);
	free(ir);
	vs_schedule_free(s); /* closes the proof log */
	return 0;
}

static int check_log(const char *log_dir)
{
	char *out = NULL;
	vs_status st = vs_log_show(log_dir, false, &out);
	printf("== proof log:\n%s", out ? out : "");
	free(out);
	if (st != VS_OK)
		return 1;
	st = vs_log_check(log_dir, "z3", &out);
	printf("== re-checked with the z3 binary:\n%s", out ? out : "");
	free(out);
	return st == VS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *log_dir = argc > 1 ? argv[1] : NULL;
	vs_context *ctx = vs_context_new();
	if (!ctx)
		return 1;
	vs_module *m = vs_parse_string(ctx, "scale.tir", kernel);
	int rc = m ? schedule(ctx, m, log_dir) : failed("cannot parse the kernel", ctx);
	vs_context_free(ctx);
	if (rc == 0 && log_dir)
		rc = check_log(log_dir);
	return rc;
}
