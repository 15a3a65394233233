/* tests/test_log.c — proof logs: index.jsonl and ob-NNNN.smt2 written,
 * `log show` (summary and JSON), `log check` with the z3 and cvc5
 * binaries agreeing, a corrupted verdict caught, unreadable logs; named
 * assertions and stated statuses, the sources a log records (meta.json,
 * copies, SHA-256), and `log check --rebuild` finding a forged query. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smt/sha256.h"
#include "smt/smt.h"
#include "testutil.h"
#include "vsched.h"

static Arena arena;
static Solver *solver;
static char dir[64];
static const Span no_span;

static void setup(void)
{
	arena_init(&arena);
	solver = smt_solver_new(NULL);
	strcpy(dir, "/tmp/vsched-log-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *p = NULL;
		if (asprintf(&p, "%s/%s", path, e->d_name) >= 0) {
			unlink(p);
			free(p);
		}
	}
	closedir(d);
	rmdir(path);
}

static void teardown(void)
{
	remove_dir(dir);
	smt_solver_free(solver);
	arena_free(&arena);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

static void spill(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *in_dir(const char *file)
{
	char *p = NULL;
	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, file), 0);
	return p;
}

/* The text of a file in the log directory, or NULL. */
static char *read_in(const char *file)
{
	char *p = in_dir(file);
	char *text = slurp(p);
	free(p);
	return text;
}

static Expr *lit(int64_t v) { return ir_int32(&arena, v); }
static Expr *ref(Var *v) { return ir_varref(&arena, v, no_span); }

/* One rewrite with three obligations: n % 4 == 0 under n % 8 == 0
 * (proven), A[i] == A[j] (refuted, with a model), and one that cannot be
 * encoded (not proven). The statement of the second needs escaping. */
static void replace_in(const char *file, const char *from, const char *to);

/* The lines of JSON output (in place), each checked to be one JSON value. */
static int json_lines(char *out, char **line, int max)
{
	int n = 0;
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		ck_assert_msg(tu_json_valid(l), "not JSON: %s", l);
		ck_assert_int_lt(n, max);
		line[n++] = l;
	}
	return n;
}

/* A record's "type" (it opens every record). */
static const char *json_type(const char *line)
{
	static char type[32];
	ck_assert_int_eq(sscanf(line, "{\"type\":\"%31[a-z]\"", type), 1);
	return type;
}

static void write_sample_log(void)
{
	DiagList d;
	diag_init(&d, &arena);
	ProofLog *log = proof_log_open(dir, &d);
	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(d.nerrors, 0);

	Source src = {"k.tir", "x\n"};
	Var *n = ir_var(&arena, "n", DT_INT32, no_span);
	Expr *hyp = ir_bin(&arena, OP_EQ, ir_bin(&arena, OP_FLOORMOD, ref(n), lit(8), no_span), lit(0),
			   no_span);
	Expr *goal = ir_bin(&arena, OP_EQ, ir_bin(&arena, OP_FLOORMOD, ref(n), lit(4), no_span), lit(0),
			    no_span);
	Obligation *o1 = obligation_new(&arena, "split.divisible", "n % 4 == 0", 1, &n, 1, &hyp, goal,
					(Span){&src, 3, 5, 1});
	o1->rewrite = "split(i, factor=4, tail=perfect)";

	Expr *shape[1] = {lit(16)};
	Buffer *A = ir_buffer(&arena, "A", DT_FLOAT32, 1, shape, no_span);
	Var *i = ir_var(&arena, "i", DT_INT32, no_span), *j = ir_var(&arena, "j", DT_INT32, no_span);
	Expr *ii[1] = {ref(i)}, *jj[1] = {ref(j)};
	Var *vs[2] = {i, j};
	Obligation *o2 = obligation_new(
		&arena, "reorder.no_conflict", "A[i] == A[j] \"quoted\"\tand\nnewline \x01", 2, vs, 0,
		NULL,
		ir_bin(&arena, OP_EQ, ir_load(&arena, A, 1, ii, no_span), ir_load(&arena, A, 1, jj, no_span),
		       no_span),
		(Span){&src, 7, 9, 2});
	o2->rewrite = "reorder(j, i)";
	obligation_add_related(&arena, o2, (Span){&src, 8, 3, 1});

	Var *h = ir_var(&arena, "h", DT_HANDLE, no_span);
	Obligation *o3 = obligation_new(&arena, "weird", "handles", 0, NULL, 0, NULL,
					ir_bin(&arena, OP_EQ, ref(h), ref(h), no_span), no_span);
	o3->rewrite = "reorder(j, i)";

	Obligation *obs[3] = {o1, o2, o3};
	ObligationResult rs[3];
	smt_discharge_all(solver, &arena, 3, obs, FLOAT_IEEE, rs);
	ck_assert_int_eq(rs[0].verdict, VERDICT_PROVEN);
	ck_assert_int_eq(rs[1].verdict, VERDICT_REFUTED);
	ck_assert_int_eq(rs[2].verdict, VERDICT_UNKNOWN);
	proof_log_obligation(log, o1, &rs[0], FLOAT_IEEE);
	proof_log_rewrite(log, "split(i, factor=4, tail=perfect)", "main", "committed", NULL);
	proof_log_obligation(log, o2, &rs[1], FLOAT_IEEE);
	proof_log_obligation(log, o3, &rs[2], FLOAT_IEEE);
	proof_log_rewrite(log, "reorder(j, i)", "main", "rejected", "refuted: reorder.no_conflict");
	proof_log_close(log);
}

START_TEST(log_files_are_written)
{
	write_sample_log();
	char *index = read_in("index.jsonl");
	ck_assert_ptr_nonnull(index);
	int lines = 0;
	for (const char *p = index; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 5);
	ck_assert_ptr_nonnull(strstr(index, "\"type\":\"obligation\",\"id\":1,\"kind\":\"split.divisible\""));
	ck_assert_ptr_nonnull(strstr(index, "\"origin\":\"k.tir:3:5\""));
	ck_assert_ptr_nonnull(strstr(index, "\"related\":[\"k.tir:8:3\"]"));
	ck_assert_ptr_nonnull(strstr(index, "\"float_mode\":\"ieee\""));
	ck_assert_ptr_nonnull(strstr(index, "\"solver\":\"z3\",\"solver_version\":\"4."));
	ck_assert_ptr_nonnull(strstr(index, "A[i] == A[j] \\\"quoted\\\"\\tand\\nnewline \\u0001"));
	ck_assert_ptr_nonnull(strstr(index, "\"model\":{\"vars\":[{\"name\":\"i\",\"value\":"));
	ck_assert_ptr_nonnull(strstr(index, "\"cells\":[{\"buffer\":\"A\",\"index\":["));
	ck_assert_ptr_nonnull(strstr(index, "\"smt2\":\"ob-0001.smt2\""));
	ck_assert_ptr_nonnull(strstr(index, "\"verdict\":\"not proven\""));
	ck_assert_ptr_nonnull(strstr(index, "\"smt2\":null"));
	free(index);
	char *q1 = read_in("ob-0001.smt2");
	ck_assert_ptr_nonnull(q1);
	ck_assert(strncmp(q1, "; vsched proof obligation ob-0001\n; kind: split.divisible\n", 58) == 0);
	ck_assert_ptr_nonnull(strstr(q1, "; verdict: proven\n"));
	ck_assert_ptr_nonnull(strstr(q1, "(set-logic ALL)\n"));
	ck_assert_ptr_nonnull(strstr(q1, "(check-sat)\n"));
	free(q1);
	char *q2 = read_in("ob-0002.smt2");
	ck_assert_ptr_nonnull(q2);
	/* the newline of the statement does not end the comment */
	ck_assert_ptr_nonnull(strstr(q2, "; statement: A[i] == A[j] \"quoted\"\tand newline"));
	ck_assert_ptr_nonnull(strstr(q2, "; model: i = "));
	free(q2);
	ck_assert_ptr_null(read_in("ob-0003.smt2"));
}
END_TEST

START_TEST(log_show_summarises_and_prints_json)
{
	write_sample_log();
	char *out = NULL;
	ck_assert_int_eq(proof_log_show(dir, false, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "obligations of split(i, factor=4, tail=perfect):"));
	ck_assert_ptr_nonnull(strstr(out, "ob-0001 proven"));
	ck_assert_ptr_nonnull(strstr(out, "split.divisible"));
	ck_assert_ptr_nonnull(strstr(out, "ob-0002 refuted"));
	ck_assert_ptr_nonnull(strstr(out, "A[i] == A[j] \"quoted\"\tand\nnewline"));
	ck_assert_ptr_nonnull(strstr(out, "model: i = "));
	ck_assert_ptr_nonnull(strstr(out, "at k.tir:7:9"));
	ck_assert_ptr_nonnull(strstr(out, "rewrite reorder(j, i) [main] -> rejected (refuted: reorder.no_conflict)"));
	ck_assert_ptr_nonnull(strstr(out, "reason: unsupported:"));
	ck_assert_ptr_nonnull(strstr(out, "total: 2 rewrites, 3 obligations: 1 proven, 1 refuted, 1 not proven"));
	free(out);
	/* --json: the records of run --json (README, "JSON output") */
	ck_assert_int_eq(proof_log_show(dir, true, &out), 0);
	char *line[8];
	int n = json_lines(out, line, 8);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(json_type(line[0]), "step");
	ck_assert_ptr_nonnull(strstr(line[0], "\"index\":1,\"step\":\"split(i, factor=4, tail=perfect)\",\"function\":\"main\",\"status\":\"committed\""));
	ck_assert_ptr_nonnull(strstr(line[0], "\"kind\":\"split.divisible\",\"statement\":\"n % 4 == 0\",\"verdict\":\"proven\""));
	ck_assert_ptr_nonnull(strstr(line[0], "\"counterexample\":null,\"replay\":{\"status\":\"none\",\"text\":null}"));
	ck_assert_str_eq(json_type(line[1]), "step");
	ck_assert_ptr_nonnull(strstr(line[1], "\"status\":\"rejected\",\"reason\":\"refuted: reorder.no_conflict\",\"note\":null"));
	/* the structured counterexample of the refuted obligation */
	ck_assert_ptr_nonnull(strstr(line[1], "\"counterexample\":{\"obligation\":\"reorder.no_conflict\",\"values\":[{\"name\":\"i\",\"value\":"));
	ck_assert_ptr_nonnull(strstr(line[1], "\"source\":[{\"file\":\"k.tir\",\"line\":7,\"col\":9},{\"file\":\"k.tir\",\"line\":8,\"col\":3}]"));
	ck_assert_str_eq(json_type(line[2]), "summary");
	ck_assert_ptr_nonnull(strstr(line[2], "\"obligations\":3,\"proven\":1,\"refuted\":1,\"not_proven\":1"));
	ck_assert_str_eq(json_type(line[3]), "result");
	free(out);
}
END_TEST

/* log check --json: the same records, each obligation with its re-check */
START_TEST(log_check_json_records)
{
	write_sample_log();
	char *out = NULL;
	ck_assert_msg(proof_log_check_json(dir, "z3", true, &out) == 0, "%s", out);
	char *line[8];
	ck_assert_int_eq(json_lines(out, line, 8), 4);
	ck_assert_str_eq(json_type(line[0]), "step");
	ck_assert_ptr_nonnull(strstr(line[0], "\"recheck\":{\"solver\":\"z3\",\"answer\":\"unsat\",\"result\":\"ok\",\"detail\":null}"));
	ck_assert_ptr_nonnull(strstr(line[1], "\"recheck\":{\"solver\":\"z3\",\"answer\":\"sat\",\"result\":\"ok\""));
	ck_assert_ptr_nonnull(strstr(line[1], "\"result\":\"skipped\""));
	ck_assert_ptr_nonnull(strstr(line[1], "\"counterexample\":{\"obligation\":\"reorder.no_conflict\""));
	ck_assert_str_eq(json_type(line[2]), "summary");
	ck_assert_ptr_nonnull(strstr(line[2], "\"obligations\":3,\"agree\":2,\"disagree\":0,\"unanswered\":0,\"malformed\":0,\"skipped\":1,\"problems\":[]"));
	ck_assert_str_eq(json_type(line[3]), "result");
	ck_assert_ptr_nonnull(strstr(line[3], "\"status\":\"ok\""));
	free(out);
	/* a query edited out of its entry: a problem of the log, status rejected */
	replace_in("index.jsonl", "\"smt2\":\"ob-0002.smt2\"", "\"smt2\":\"ob-0001.smt2\"");
	ck_assert_int_eq(proof_log_check_json(dir, "z3", true, &out), 1);
	ck_assert_int_eq(json_lines(out, line, 8), 4);
	ck_assert_ptr_nonnull(strstr(line[1], "\"result\":\"malformed\",\"detail\":\"ob-0001.smt2 is the query of an earlier entry\""));
	ck_assert_ptr_nonnull(strstr(line[2], "\"problems\":[\"ob-0002.smt2: no entry of index.jsonl names this query\"]"));
	ck_assert_ptr_nonnull(strstr(line[3], "\"status\":\"rejected\""));
	free(out);
}
END_TEST

START_TEST(log_check_agrees_with_z3_and_cvc5)
{
	write_sample_log();
	char *out = NULL;
	ck_assert_msg(proof_log_check(dir, "z3", &out) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "summary: 2 agree, 0 disagree, 0 without an answer, 0 malformed, 1 skipped"));
	free(out);
	ck_assert_msg(proof_log_check(dir, "cvc5", &out) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "summary: 2 agree"));
	free(out);
	ck_assert_int_eq(proof_log_check(dir, NULL, &out), 0); /* z3 by default */
	free(out);
}
END_TEST

static void replace_in(const char *file, const char *from, const char *to)
{
	char *path = in_dir(file), *text = slurp(path), *at = strstr(text, from), *out = NULL;
	ck_assert_msg(at != NULL, "%s lacks %s", file, from);
	ck_assert_int_ge(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)), 0);
	spill(path, out);
	free(out);
	free(text);
	free(path);
}

static void assert_check_fails(const char *with, const char *why)
{
	char *out = NULL;
	ck_assert_int_eq(proof_log_check(dir, with, &out), 1);
	ck_assert_msg(strstr(out, why) != NULL, "expected '%s':\n%s", why, out);
	free(out);
}

START_TEST(log_check_catches_a_corrupted_verdict)
{
	write_sample_log();
	replace_in("index.jsonl", "\"verdict\":\"proven\"", "\"verdict\":\"refuted\"");
	/* the query file's header still says proven */
	assert_check_fails("z3", "MALFORMED (ob-0001.smt2: its header names another verdict)");
	/* the header changed too: the stated status still says unsat */
	replace_in("ob-0001.smt2", "; verdict: proven", "; verdict: refuted");
	assert_check_fails("z3", "MALFORMED (ob-0001.smt2: its (set-info :status ...) names another verdict)");
	/* all changed: the solver disagrees */
	replace_in("ob-0001.smt2", "(set-info :status unsat)", "(set-info :status sat)");
	assert_check_fails("z3", "DISAGREES");
	assert_check_fails("cvc5", "DISAGREES");
	/* a query file that went missing is reported too */
	char *q = in_dir("ob-0002.smt2");
	unlink(q);
	free(q);
	assert_check_fails("z3", "MALFORMED (ob-0002.smt2: cannot be read: No such file or directory)");
}
END_TEST

/* Found by a red-team audit: a refuted obligation relabelled "proven"
 * passed the re-check when its query printed "unsat" itself, pointed at
 * another obligation's query, or was dropped from the index. */
START_TEST(log_check_catches_tampered_queries_and_entries)
{
	/* ob-0002 is refuted: relabel it proven in the index and its header */
	write_sample_log();
	char *path = in_dir("index.jsonl"), *index = slurp(path);
	char *second = strstr(index, "\"id\":2");
	ck_assert_ptr_nonnull(second);
	char *v = strstr(second, "\"verdict\":\"refuted\"");
	ck_assert_ptr_nonnull(v);
	memcpy(v, "\"verdict\":\"proven\" ", strlen("\"verdict\":\"refuted\""));
	spill(path, index);
	replace_in("ob-0002.smt2", "; verdict: refuted", "; verdict: proven");
	replace_in("ob-0002.smt2", "(set-info :status sat)", "(set-info :status unsat)");
	assert_check_fails("z3", "DISAGREES");
	/* a query that prints its own answer */
	replace_in("ob-0002.smt2", "(check-sat)", "(echo \"unsat\")\n(check-sat)");
	assert_check_fails("z3", "MALFORMED (ob-0002.smt2: a command other than");
	replace_in("ob-0002.smt2", "(echo \"unsat\")\n(check-sat)", "(push)\n(assert false)\n(check-sat)\n(pop)\n(check-sat)");
	assert_check_fails("cvc5", "MALFORMED (ob-0002.smt2: a command other than");
	replace_in("ob-0002.smt2", "(push)\n(assert false)\n(check-sat)\n(pop)\n(check-sat)", "(check-sat)\n(check-sat)");
	assert_check_fails("z3", "MALFORMED (ob-0002.smt2: a command after check-sat)");
	replace_in("ob-0002.smt2", "(check-sat)\n(check-sat)", "(check-sat)");
	/* the entry points at the proven query of ob-0001 */
	replace_in("index.jsonl", "\"smt2\":\"ob-0002.smt2\"", "\"smt2\":\"ob-0001.smt2\"");
	assert_check_fails("z3", "MALFORMED (ob-0001.smt2 is the query of an earlier entry)");
	assert_check_fails("z3", "ob-0002.smt2: MALFORMED (no entry of index.jsonl names this query)");
	free(index);
	free(path);
}
END_TEST

START_TEST(log_check_catches_a_dropped_entry)
{
	write_sample_log();
	char *path = in_dir("index.jsonl"), *index = slurp(path);
	char *second = strstr(index, "{\"type\":\"obligation\",\"id\":2");
	ck_assert_ptr_nonnull(second);
	char *end = strchr(second, '\n');
	memmove(second, end + 1, strlen(end + 1) + 1);
	spill(path, index);
	assert_check_fails("z3", "MALFORMED (obligation id 3, expected 2");
	assert_check_fails("z3", "ob-0002.smt2: MALFORMED (no entry of index.jsonl names this query)");
	free(index);
	free(path);
}
END_TEST

/* A second run into the folder of an older, longer log: the older query
 * files go, and the new log checks clean. */
START_TEST(a_new_log_replaces_an_older_one)
{
	write_sample_log();
	char *stale = in_dir("ob-0007.smt2");
	spill(stale, "; vsched proof obligation ob-0007\n(check-sat)\n");
	char *other = in_dir("notes.txt");
	spill(other, "kept\n");
	write_sample_log();
	ck_assert_int_ne(access(stale, F_OK), 0);
	ck_assert_int_eq(access(other, F_OK), 0); /* not a query file: kept */
	char *out = NULL;
	ck_assert_int_eq(proof_log_check(dir, "z3", &out), 0);
	free(out);
	unlink(other);
	free(other);
	free(stale);
}
END_TEST

/* A FIFO or a device in the log folder neither blocks `log check` nor is
 * read without end: only regular files are read. */
START_TEST(log_files_must_be_regular)
{
	write_sample_log();
	char *q = in_dir("ob-0001.smt2");
	unlink(q);
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	char *out = NULL;
	ck_assert_int_eq(proof_log_check(dir, "z3", &out), 1);
	ck_assert_ptr_nonnull(strstr(out, "cannot be read: not a regular file"));
	free(out);
	unlink(q);
	free(q);
	char *index = in_dir("index.jsonl");
	unlink(index);
	ck_assert_int_eq(symlink("/dev/zero", index), 0);
	ck_assert_int_eq(proof_log_show(dir, false, &out), 2);
	ck_assert_ptr_nonnull(strstr(out, "not a regular file"));
	free(out);
	ck_assert_int_eq(proof_log_check(dir, "z3", &out), 2);
	free(out);
	unlink(index);
	free(index);
}
END_TEST

START_TEST(unreadable_logs_and_bad_solvers_give_2)
{
	char *out = NULL;
	ck_assert_int_eq(proof_log_show("/nonexistent/vsched-log", false, &out), 2);
	ck_assert_ptr_nonnull(strstr(out, "cannot read"));
	free(out);
	ck_assert_int_eq(proof_log_check("/nonexistent/vsched-log", "z3", &out), 2);
	free(out);
	ck_assert_int_eq(proof_log_check(dir, "yices", &out), 2);
	ck_assert_ptr_nonnull(strstr(out, "unknown solver"));
	free(out);
	char *path = in_dir("index.jsonl");
	spill(path, "{\"type\":\"rewrite\"}\n{\"type\": oops}\n");
	ck_assert_int_eq(proof_log_show(dir, false, &out), 2);
	ck_assert_ptr_nonnull(strstr(out, ":2: malformed"));
	free(out);
	free(path);
	/* a directory that cannot be created */
	DiagList d;
	diag_init(&d, &arena);
	ck_assert_ptr_null(proof_log_open("/proc/vsched-no/log", &d));
	ck_assert_int_eq(d.nerrors, 1);
}
END_TEST

START_TEST(empty_log_shows_zero_totals)
{
	DiagList d;
	diag_init(&d, &arena);
	char *sub = in_dir("a/b");
	ProofLog *log = proof_log_open(sub, &d); /* nested directories made */
	ck_assert_ptr_nonnull(log);
	proof_log_close(log);
	char *out = NULL;
	ck_assert_int_eq(proof_log_show(sub, false, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "total: 0 rewrites, 0 obligations"));
	free(out);
	ck_assert_int_eq(proof_log_check(sub, "z3", &out), 0);
	free(out);
	char *idx = NULL;
	ck_assert_int_ge(asprintf(&idx, "%s/index.jsonl", sub), 0);
	unlink(idx);
	free(idx);
	rmdir(sub);
	char *a = in_dir("a");
	rmdir(a);
	free(a);
	free(sub);
}
END_TEST

START_TEST(write_failures_are_kept_for_the_caller)
{
	DiagList d;
	diag_init(&d, &arena);
	ProofLog *log = proof_log_open(dir, &d);
	ck_assert_ptr_nonnull(log);
	ck_assert_ptr_null(proof_log_error(log));
	/* the directory disappears under the open log */
	char *idx = in_dir("index.jsonl");
	unlink(idx);
	free(idx);
	rmdir(dir);
	Var *n = ir_var(&arena, "n", DT_INT32, no_span);
	Obligation *o = obligation_new(&arena, "k", "s", 1, &n, 0, NULL,
				       ir_bin(&arena, OP_GE, ref(n), ref(n), no_span), no_span);
	ObligationResult r;
	smt_discharge(solver, &arena, o, FLOAT_REAL, &r);
	proof_log_obligation(log, o, &r, FLOAT_REAL);
	ck_assert_ptr_nonnull(proof_log_error(log));
	ck_assert_ptr_nonnull(strstr(proof_log_error(log), "ob-0001.smt2"));
	proof_log_close(log);
	ck_assert_int_eq(d.nerrors, 0);
}
END_TEST

/* ---------- logs that stand alone (issue 13) ---------- */

static const char kernel_fixture[] = "log/scale2d.tir";
static const char script_fixture[] = "log/split_then_refuted.sched";

/* The fixture kernel scheduled by the fixture script with a log in dir:
 * split j (proven: n % 8 == 0 is assumed) is committed, split i by 16 is
 * refuted. The committed result runs as the kernel does. With `build`,
 * the result is then compiled (its obligations join the log). */
static void write_log_of(bool build)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "scale2d.tir", tu_fixture(kernel_fixture));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, &(vs_options){.log_dir = dir});
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(vs_run_script_string(s, "split_then_refuted.sched", tu_fixture(script_fixture)),
			 VS_REJECTED);
	ck_assert_int_eq(vs_num_reports(s), 2);
	ck_assert_int_eq(vs_report_status(vs_report_at(s, 0)), VS_OK);
	char *after = vs_module_print(vs_schedule_result(s));
	vs_module *am = vs_parse_string(ctx, "after.tir", after);
	free(after);
	char *report = NULL;
	ck_assert_msg(vs_equiv(ctx, m, am, NULL, 8, 3, &report) == VS_OK, "%s", report ? report : "?");
	free(report);
	if (build) {
		vs_program *p = vs_build(s, NULL);
		ck_assert_msg(p != NULL, "%s", vs_last_error(ctx));
		vs_program_free(p);
	}
	vs_schedule_free(s);
	vs_context_free(ctx);
}

static void write_scheduled_log(void) { write_log_of(false); }

/* `cmd` on a file of the log: its exit status and output. */
static int run_on(const char *cmd, const char *file, char **out)
{
	char *path = in_dir(file), *line = NULL, *err = NULL;
	ck_assert_int_ge(asprintf(&line, "%s %s", cmd, path), 0);
	int rc = tu_sh(line, out, &err);
	free(err);
	free(line);
	free(path);
	return rc;
}

START_TEST(queries_name_their_assertions_and_state_their_status)
{
	write_scheduled_log();
	char *q1 = read_in("ob-0001.smt2");
	ck_assert_ptr_nonnull(q1);
	/* the hypotheses by origin: the parameter's dtype range, the
	 * T.assume at 5:5, the loop at 6:5, the path condition at 7:12 */
	const char *names[] = {":named hyp_param_n))\n", ":named hyp_assume_5_5))\n",
			       ":named hyp_loop_6_5))\n", ":named hyp_cond_7_12))\n",
			       "(assert (! (not (= (mod n_0 8) 0)) :named goal))\n"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		ck_assert_msg(strstr(q1, names[i]) != NULL, "no %s in\n%s", names[i], q1);
	ck_assert_ptr_nonnull(strstr(q1, "(set-info :status unsat)\n(set-logic ALL)\n"));
	ck_assert_ptr_null(strstr(q1, "get-model"));
	ck_assert_ptr_null(strstr(q1, "produce-models"));
	free(q1);
	/* the refuted query sets produce-models first and asks for the model */
	char *q2 = read_in("ob-0002.smt2");
	ck_assert_ptr_nonnull(strstr(q2, "(set-option :produce-models true)\n(set-info :status sat)\n(set-logic ALL)\n"));
	size_t len = strlen(q2);
	ck_assert_str_eq(q2 + len - strlen("(check-sat)\n(get-model)\n"), "(check-sat)\n(get-model)\n");
	free(q2);
	/* both binaries read the files as they are */
	char *out = NULL;
	ck_assert_int_eq(run_on("z3", "ob-0001.smt2", &out), 0);
	ck_assert_str_eq(out, "unsat\n");
	free(out);
	ck_assert_int_eq(run_on("cvc5", "ob-0001.smt2", &out), 0);
	ck_assert_str_eq(out, "unsat\n");
	free(out);
	ck_assert_int_eq(run_on("z3", "ob-0002.smt2", &out), 0);
	ck_assert_msg(strncmp(out, "sat\n", 4) == 0 && strstr(out, "(define-fun n_0 () Int"), "%s", out);
	free(out);
	ck_assert_int_eq(run_on("cvc5", "ob-0002.smt2", &out), 0);
	ck_assert_msg(strncmp(out, "sat\n", 4) == 0 && strstr(out, "(define-fun n_0 () Int"), "%s", out);
	free(out);
	ck_assert_msg(proof_log_check(dir, "z3", &out) == 0, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "summary: 2 agree, 0 disagree"));
	free(out);
	ck_assert_msg(proof_log_check(dir, "cvc5", &out) == 0, "%s", out);
	free(out);
	/* a second get-model, or one before check-sat, is refused */
	replace_in("ob-0002.smt2", "(get-model)\n", "(get-model)\n(get-model)\n");
	assert_check_fails("z3", "MALFORMED (ob-0002.smt2: a command other than");
	replace_in("ob-0002.smt2", "(check-sat)\n(get-model)\n(get-model)\n", "(get-model)\n(check-sat)\n");
	assert_check_fails("z3", "MALFORMED (ob-0002.smt2: a command other than");
}
END_TEST

START_TEST(sha256_matches_the_standard_vectors)
{
	char h[65];
	sha256_hex("", 0, h);
	ck_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, h);
	ck_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 56 bytes: the padding takes a second block */
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(two, strlen(two), h);
	ck_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
END_TEST

/* `"key":"value"` is in text */
static void assert_has_field(const char *text, const char *key, const char *value)
{
	char *want = NULL;
	ck_assert_int_ge(asprintf(&want, "\"%s\":\"%s\"", key, value), 0);
	ck_assert_msg(strstr(text, want) != NULL, "no %s in %s", want, text);
	free(want);
}

START_TEST(log_records_versions_and_copies)
{
	write_scheduled_log();
	char *meta = read_in("meta.json");
	ck_assert_ptr_nonnull(meta);
	ck_assert(tu_json_valid(meta));
	assert_has_field(meta, "vsched", vs_version());
	const char *z3 = smt_solver_version(); /* "z3 4.8.12" */
	assert_has_field(meta, "z3", strchr(z3, ' ') + 1);
	assert_has_field(meta, "float_mode", "real");
	assert_has_field(meta, "hash", "sha256");
	char h[65];
	const char *k = tu_fixture(kernel_fixture), *sc = tu_fixture(script_fixture);
	sha256_hex(k, strlen(k), h);
	ck_assert_ptr_nonnull(strstr(meta, "\"kernel\":{\"name\":\"scale2d.tir\",\"file\":\"kernel.tir\""));
	assert_has_field(meta, "sha256", h);
	sha256_hex(sc, strlen(sc), h);
	ck_assert_ptr_nonnull(strstr(meta, "\"schedules\":[{\"name\":\"split_then_refuted.sched\",\"file\":\"schedule.sched\""));
	assert_has_field(meta, "sha256", h);
	ck_assert_ptr_nonnull(strstr(meta, "\"builds\":[],\"api_steps\":0}"));
	free(meta);
	char *copy = read_in("kernel.tir");
	ck_assert_str_eq(copy, k);
	free(copy);
	copy = read_in("schedule.sched");
	ck_assert_str_eq(copy, sc);
	free(copy);
}
END_TEST

/* Steps through the C API outside a script are counted: a rebuild
 * replays scripts only, so it refuses such a log. */
START_TEST(api_steps_are_recorded_and_not_rebuilt)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "scale2d.tir", tu_fixture(kernel_fixture));
	vs_schedule *s = vs_schedule_new(ctx, m, &(vs_options){.log_dir = dir});
	ck_assert_int_eq(vs_split(s, "j", 8, "perfect", NULL, NULL), VS_OK);
	vs_schedule_free(s);
	vs_context_free(ctx);
	char *meta = read_in("meta.json");
	ck_assert_ptr_nonnull(strstr(meta, "\"schedules\":[],\"builds\":[],\"api_steps\":1}"));
	free(meta);
	char *out = NULL;
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(out, "cannot rebuild: 1 step or setting went through the C API"));
	free(out);
}
END_TEST

START_TEST(rebuild_passes_on_an_honest_log)
{
	write_scheduled_log();
	char *out = NULL;
	ck_assert_msg(vs_log_rebuild(dir, "z3", &out) == VS_OK, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "ob-0001  split.divisible              same\n"));
	ck_assert_ptr_nonnull(strstr(out, "ob-0002  split.divisible              same\n"));
	ck_assert_ptr_nonnull(strstr(out, "rebuild: 2 obligations identical to the ones vsched builds, 0 differences"));
	ck_assert_ptr_nonnull(strstr(out, "summary: 2 agree, 0 disagree")); /* it re-solves too */
	free(out);
	ck_assert_int_eq(vs_log_rebuild(dir, "cvc5", &out), VS_OK);
	free(out);
	/* the command line */
	char *cmd = NULL, *err = NULL;
	ck_assert_int_ge(asprintf(&cmd, "%s log check %s --rebuild", tu_vsched_bin(), dir), 0);
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "0 differences"));
	free(out);
	free(err);
	free(cmd);
}
END_TEST

/* A build's obligations (flattening, annotations, safety) are rebuilt
 * too: the build is listed in meta.json and run again. */
START_TEST(rebuild_covers_a_build)
{
	write_log_of(true);
	char *meta = read_in("meta.json");
	ck_assert_ptr_nonnull(strstr(meta, "\"builds\":[{\"after_schedules\":1,\"int64_widening\":true}]"));
	free(meta);
	char *out = NULL;
	ck_assert_msg(vs_log_rebuild(dir, "z3", &out) == VS_OK, "%s", out);
	ck_assert_ptr_nonnull(strstr(out, ", 1 schedule, 1 build, real float mode"));
	ck_assert_ptr_nonnull(strstr(out, "ob-0003  "));
	ck_assert_ptr_nonnull(strstr(out, " 0 differences\n"));
	free(out);
}
END_TEST

/* A forger weakens the proven goal n % 8 == 0 to n % 4 == 0 (still
 * unsat, so the re-solve agrees), first in the query alone (the index has
 * no hash of it), then in its statement too, header and index alike:
 * `log check` passes, only the rebuild tells, naming ob-0001. */
START_TEST(rebuild_finds_a_forged_query)
{
	write_scheduled_log();
	replace_in("ob-0001.smt2", "(assert (! (not (= (mod n_0 8) 0)) :named goal))",
		   "(assert (! (not (= (mod n_0 4) 0)) :named goal))");
	char *out = NULL;
	ck_assert_msg(proof_log_check(dir, "z3", &out) == 0, "%s", out);
	free(out);
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_REJECTED);
	ck_assert_msg(strstr(out, "ob-0001  split.divisible              DIFFERS (ob-0001.smt2 line ") != NULL,
		      "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "ob-0002  split.divisible              same\n"));
	ck_assert_ptr_nonnull(strstr(out, "1 difference\n"));
	free(out);
	replace_in("ob-0001.smt2", "a multiple of 8", "a multiple of 4");
	replace_in("index.jsonl", "a multiple of 8", "a multiple of 4");
	ck_assert_msg(proof_log_check(dir, "cvc5", &out) == 0, "%s", out);
	free(out);
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_REJECTED);
	ck_assert_msg(strstr(out, "ob-0001  split.divisible              DIFFERS (index.jsonl: its \"statement\"") != NULL,
		      "%s", out);
	free(out);
	char *cmd = NULL, *err = NULL;
	ck_assert_int_ge(asprintf(&cmd, "%s log check --rebuild %s", tu_vsched_bin(), dir), 0);
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 1);
	ck_assert_ptr_nonnull(strstr(err, "ob-0001  split.divisible              DIFFERS"));
	free(out);
	free(err);
	free(cmd);
}
END_TEST

/* The copies are checked against their hashes; copies forged with their
 * hashes give other queries than the logged ones; no meta.json, no
 * rebuild. */
START_TEST(rebuild_checks_the_copies)
{
	write_scheduled_log();
	replace_in("kernel.tir", "if i < 40:", "if i < 41:");
	char *out = NULL;
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_REJECTED);
	ck_assert_msg(strstr(out, "kernel.tir: MALFORMED (its sha256 is ") != NULL, "%s", out);
	free(out);
	char h[65], *k = read_in("kernel.tir");
	sha256_hex(k, strlen(k), h);
	free(k);
	char *meta = read_in("meta.json"), *at = strstr(meta, "\"file\":\"kernel.tir\",\"sha256\":\"");
	ck_assert_ptr_nonnull(at);
	memcpy(at + strlen("\"file\":\"kernel.tir\",\"sha256\":\""), h, 64);
	char *path = in_dir("meta.json");
	spill(path, meta);
	free(meta);
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_REJECTED);
	ck_assert_msg(strstr(out, "ob-0001  split.divisible              DIFFERS (ob-0001.smt2 line ") != NULL,
		      "%s", out);
	free(out);
	unlink(path);
	free(path);
	ck_assert_int_eq(vs_log_rebuild(dir, "z3", &out), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(out, "meta.json"));
	free(out);
}
END_TEST

Suite *suite_log(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("write");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, log_files_are_written);
	tcase_add_test(tc, log_show_summarises_and_prints_json);
	tcase_add_test(tc, log_check_json_records);
	tcase_add_test(tc, empty_log_shows_zero_totals);
	tcase_add_test(tc, write_failures_are_kept_for_the_caller);
	suite_add_tcase(s, tc);
	tc = tcase_create("check");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, log_check_agrees_with_z3_and_cvc5);
	tcase_add_test(tc, log_check_catches_a_corrupted_verdict);
	tcase_add_test(tc, log_check_catches_tampered_queries_and_entries);
	tcase_add_test(tc, log_check_catches_a_dropped_entry);
	tcase_add_test(tc, unreadable_logs_and_bad_solvers_give_2);
	tcase_add_test(tc, a_new_log_replaces_an_older_one);
	tcase_add_test(tc, log_files_must_be_regular);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, queries_name_their_assertions_and_state_their_status);
	suite_add_tcase(s, tc);
	tc = tcase_create("meta");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sha256_matches_the_standard_vectors);
	tcase_add_test(tc, log_records_versions_and_copies);
	tcase_add_test(tc, api_steps_are_recorded_and_not_rebuilt);
	suite_add_tcase(s, tc);
	tc = tcase_create("rebuild");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, rebuild_passes_on_an_honest_log);
	tcase_add_test(tc, rebuild_finds_a_forged_query);
	tcase_add_test(tc, rebuild_covers_a_build);
	tcase_add_test(tc, rebuild_checks_the_copies);
	suite_add_tcase(s, tc);
	return s;
}
