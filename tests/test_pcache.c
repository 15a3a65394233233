/* tests/test_pcache.c — the persistent proof cache (smt/pcache.c) and the
 * structural cache key (smt/qhash.c), through the `vsched` program
 * (binary in VS_BIN) and its --json summary: a warm second run solves
 * nothing, a schedule sharing a prefix solves only its new obligations,
 * two processes on one cache agree, a corrupted row or file is detected,
 * ignored and rebuilt with the same verdicts, a refuted verdict from the
 * cache still gives its counterexample and replay, `log check` re-checks
 * every obligation of a warm run; and keys are equal exactly when the
 * query texts are. */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smt/encode.h"
#include "smt/qhash.h"
#include "smt/smt.h"
#include "tests/testsched.h"

static char dir[64];
static char cache[128];
static void setup(void)
{
	tu_tmpdir(dir, sizeof dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	unsetenv("VSCHED_CACHE"); /* the runs without --cache have none */
}
static void teardown(void) { tu_rmdir(dir); }

static const char matmul[] = "pcache/matmul.tir", prefix[] = "pcache/prefix.sched",
		  tiled[] = "pcache/tiled.sched", wave[] = "pcache/wave.tir",
		  refuted[] = "pcache/refuted.sched";

/* tests/data/NAME copied into dir (the CLI reads files). */
static const char *fixture_file(const char *name)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 256, "%s/%s", dir, strrchr(name, '/') + 1);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(tu_fixture(name), f);
	fclose(f);
	return p;
}

typedef struct Run {
	char *out, *err;
	int solved, memory, disk;
} Run;

static int field(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	ck_assert_msg(p != NULL, "no %s in:\n%s", key, s);
	return atoi(p + strlen(key));
}

/* `vsched run KERNEL --schedule S --json [extra]` with the exit status
 * wanted; its summary line read. */
static Run run(int want, const char *kernel, const char *sched, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static Run run(int want, const char *kernel, const char *sched, const char *fmt, ...)
{
	char extra[1024], cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(extra, sizeof extra, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "'%s' run '%s' --schedule '%s' --json %s", tu_vsched_bin(),
		 fixture_file(kernel), fixture_file(sched), extra);
	Run r;
	int rc = tu_sh(cmd, &r.out, &r.err);
	ck_assert_msg(rc == want, "%s: exit %d, expected %d\n%s%s", cmd, rc, want, r.out, r.err);
	const char *sum = strstr(r.out, "{\"type\":\"summary\"");
	ck_assert_msg(sum != NULL, "no summary:\n%s", r.out);
	r.solved = field(sum, "\"solved\":");
	r.memory = field(sum, "\"memory_cache_hits\":");
	r.disk = field(sum, "\"persistent_cache_hits\":");
	ck_assert_int_eq(field(sum, "\"obligations\":"), r.solved + r.memory + r.disk);
	return r;
}

static void run_free(Run *r)
{
	free(r->out);
	free(r->err);
}

/* The report lines without their times and without the summary: what
 * must not depend on the cache. */
static char *verdicts(const char *out)
{
	char *v = strdup(out), *w = v;
	const char *end = strstr(out, "{\"type\":\"summary\"");
	for (const char *p = out; p < end;) {
		if (strncmp(p, "\"seconds\":", 10) == 0) {
			p += 10;
			while (*p == '.' || (*p >= '0' && *p <= '9'))
				p++;
			continue;
		}
		*w++ = *p++;
	}
	*w = 0;
	return v;
}

static void same_verdicts(const Run *a, const Run *b)
{
	char *x = verdicts(a->out), *y = verdicts(b->out);
	ck_assert_str_eq(x, y);
	free(x);
	free(y);
}

static char *db_path(void)
{
	static char p[256];
	snprintf(p, sizeof p, "%s/proofs.sqlite3", cache);
	return p;
}

/* ---------- a warm cache ---------- */

START_TEST(warm_second_run_solves_nothing)
{
	Run cold = run(0, matmul, tiled, "--cache '%s'", cache);
	ck_assert_int_gt(cold.solved, 0);
	ck_assert_int_eq(cold.disk, 0);
	ck_assert_ptr_null(strstr(cold.err, "warning"));
	Run warm = run(0, matmul, tiled, "--cache '%s'", cache);
	ck_assert_int_eq(warm.solved, 0);
	ck_assert_int_eq(warm.disk, cold.solved);
	ck_assert_int_eq(warm.memory, cold.memory);
	same_verdicts(&cold, &warm);
	/* VSCHED_CACHE names the same cache; --cache wins over it */
	char env[300];
	snprintf(env, sizeof env, "VSCHED_CACHE='%s'", cache);
	Run byenv = run(0, matmul, tiled, "%s", "");
	ck_assert_int_eq(byenv.disk, 0); /* no cache at all */
	run_free(&byenv);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s '%s' run '%s' --schedule '%s' --json", env, tu_vsched_bin(),
		 fixture_file(matmul), fixture_file(tiled));
	char *out, *err;
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 0);
	ts_has(out, "\"solved\":0,");
	free(out);
	free(err);
	run_free(&cold);
	run_free(&warm);
}
END_TEST

START_TEST(shared_prefix_solves_only_new_obligations)
{
	char other[200];
	snprintf(other, sizeof other, "%s/other", dir);
	Run a = run(0, matmul, prefix, "--cache '%s'", other);
	Run b = run(0, matmul, tiled, "--cache '%s/fresh'", dir);
	Run ab = run(0, matmul, tiled, "--cache '%s'", other);
	ck_assert_int_gt(b.solved, a.solved);
	ck_assert_int_eq(ab.solved, b.solved - a.solved);
	ck_assert_int_eq(ab.disk, a.solved);
	same_verdicts(&b, &ab);
	run_free(&a);
	run_free(&b);
	run_free(&ab);
}
END_TEST

/* ---------- two processes at once ---------- */

START_TEST(two_processes_share_one_cache)
{
	Run ref = run(0, matmul, tiled, "%s", "");
	const char *k = fixture_file(matmul), *s = fixture_file(tiled);
	for (int round = 0; round < 2; round++) { /* cold, then warm */
		char cmd[8192];
		snprintf(cmd, sizeof cmd,
			 "'%1$s' run '%2$s' --schedule '%3$s' --json --cache '%4$s' > '%5$s/o1' 2> '%5$s/e1' &"
			 "'%1$s' run '%2$s' --schedule '%3$s' --json --cache '%4$s' > '%5$s/o2' 2> '%5$s/e2' &"
			 "wait %%1 && wait %%2",
			 tu_vsched_bin(), k, s, cache, dir);
		ck_assert_int_eq(tu_sh(cmd, NULL, NULL), 0);
		for (int i = 1; i <= 2; i++) {
			char p[256];
			snprintf(p, sizeof p, "%s/o%d", dir, i);
			Run r = {tu_read_file(p), NULL, 0, 0, 0};
			snprintf(p, sizeof p, "%s/e%d", dir, i);
			r.err = tu_read_file(p);
			ck_assert_ptr_nonnull(r.out);
			ck_assert_msg(!strstr(r.err, "warning") && !strstr(r.err, "error"), "%s", r.err);
			same_verdicts(&ref, &r);
			if (round == 1)
				ts_has(r.out, "\"solved\":0,");
			run_free(&r);
		}
	}
	run_free(&ref);
}
END_TEST

/* ---------- corruption ---------- */

static void exec_sql(const char *sql)
{
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(db_path(), &db), SQLITE_OK);
	char *msg = NULL;
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s", msg ? msg : "");
	ck_assert_int_gt(sqlite3_changes(db), 0);
	sqlite3_close(db);
}

static void flip_bytes_at_end_of_page(int page)
{
	FILE *f = fopen(db_path(), "r+b");
	ck_assert_ptr_nonnull(f);
	/* a leaf page keeps its cells at its end, the last column (the
	 * checksum) last */
	long at = (long)page * 4096 - 6;
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(fseek(f, at + i, SEEK_SET), 0);
		int c = fgetc(f);
		ck_assert_int_ne(c, EOF);
		ck_assert_int_eq(fseek(f, at + i, SEEK_SET), 0);
		fputc(c ^ 0x5a, f);
	}
	fclose(f);
}

START_TEST(corrupted_rows_are_detected_ignored_and_rebuilt)
{
	Run cold = run(0, matmul, tiled, "--cache '%s'", cache);
	/* a forged verdict: proven <-> refuted, the checksum left alone */
	exec_sql("UPDATE proofs SET verdict = 3 - verdict");
	Run forged = run(0, matmul, tiled, "--cache '%s'", cache);
	ts_has(forged.err, "corrupted entries (checksum or content) ignored, deleted and solved again");
	ck_assert_int_eq(forged.solved, cold.solved);
	same_verdicts(&cold, &forged);
	Run again = run(0, matmul, tiled, "--cache '%s'", cache);
	ck_assert_int_eq(again.solved, 0);
	ck_assert_ptr_null(strstr(again.err, "warning"));
	/* bytes flipped in the file, under SQLite */
	flip_bytes_at_end_of_page(2);
	Run flipped = run(0, matmul, tiled, "--cache '%s'", cache);
	ts_has(flipped.err, "vsched: warning: cache");
	ck_assert_int_gt(flipped.solved, 0);
	same_verdicts(&cold, &flipped);
	Run rebuilt = run(0, matmul, tiled, "--cache '%s'", cache);
	ck_assert_int_eq(rebuilt.solved, 0);
	run_free(&cold);
	run_free(&forged);
	run_free(&again);
	run_free(&flipped);
	run_free(&rebuilt);
}
END_TEST

START_TEST(a_garbage_file_is_set_aside_and_rebuilt)
{
	Run cold = run(0, matmul, tiled, "--cache '%s'", cache);
	FILE *f = fopen(db_path(), "wb");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 3000; i++)
		fputs("garbage ", f);
	fclose(f);
	Run bad = run(0, matmul, tiled, "--cache '%s'", cache);
	ts_has(bad.err, "proofs.sqlite3 is corrupted");
	ts_has(bad.err, "moved aside to proofs.sqlite3.corrupt and rebuilt");
	ck_assert_int_eq(bad.solved, cold.solved);
	same_verdicts(&cold, &bad);
	char aside[300];
	snprintf(aside, sizeof aside, "%s.corrupt", db_path());
	char *g = tu_read_file(aside);
	ck_assert_ptr_nonnull(g);
	ck_assert(strncmp(g, "garbage", 7) == 0);
	free(g);
	Run warm = run(0, matmul, tiled, "--cache '%s'", cache);
	ck_assert_int_eq(warm.solved, 0);
	ck_assert_ptr_null(strstr(warm.err, "warning"));
	/* a cache that cannot be a directory: a warning, no cache, same verdicts */
	Run nodir = run(0, matmul, tiled, "--cache '%s/proofs.sqlite3'", cache);
	ts_has(nodir.err, "vsched: warning: cache");
	same_verdicts(&cold, &nodir);
	run_free(&cold);
	run_free(&bad);
	run_free(&warm);
	run_free(&nodir);
}
END_TEST

/* ---------- refutations ---------- */

START_TEST(refuted_from_cache_keeps_counterexample_and_replay)
{
	Run cold = run(1, wave, refuted, "--cache '%s'", cache);
	ts_has(cold.out, "\"verdict\":\"refuted\"");
	ts_has(cold.out, "\"replay\":{\"status\":\"confirmed\"");
	Run warm = run(1, wave, refuted, "--cache '%s'", cache);
	ck_assert_int_eq(warm.solved, 0);
	ck_assert_int_gt(warm.disk, 0);
	ts_has(warm.out, "\"verdict\":\"refuted\"");
	ts_has(warm.out, "values: io_p = ");
	ts_has(warm.out, "\"replay\":{\"status\":\"confirmed\"");
	same_verdicts(&cold, &warm);
	run_free(&cold);
	run_free(&warm);
}
END_TEST

/* ---------- the proof log ---------- */

START_TEST(log_check_rechecks_every_obligation_of_a_warm_run)
{
	Run cold = run(0, matmul, tiled, "--cache '%s'", cache);
	Run warm = run(0, matmul, tiled, "--cache '%s' --log '%s/log'", cache, dir);
	ck_assert_int_eq(warm.solved, 0);
	int n = warm.memory + warm.disk;
	char cmd[600], *out, *err;
	snprintf(cmd, sizeof cmd, "'%s' log check '%s/log'", tu_vsched_bin(), dir);
	ck_assert_int_eq(tu_sh(cmd, &out, &err), 0);
	char want[64];
	snprintf(want, sizeof want, "summary: %d agree, 0 disagree", n);
	ts_has(out, want);
	free(out);
	free(err);
	char path[200];
	snprintf(path, sizeof path, "%s/log/ob-%04d.smt2", dir, n);
	char *q = tu_read_file(path);
	ck_assert_ptr_nonnull(q);
	ts_has(q, "(check-sat)");
	ts_has(q, "; seconds: ");
	ts_has(q, "(cached)");
	free(q);
	run_free(&cold);
	run_free(&warm);
}
END_TEST

/* ---------- the structural key ---------- */

static Arena arena;
static const Span no_span;

static Expr *lit(int64_t v, DType t) { return ir_int(&arena, v, t, no_span); }

static Expr *ref(Var *v) { return ir_varref(&arena, v, no_span); }

/* Obligations that differ in one detail each (a literal, a dtype, an
 * operator, a float literal's last bit, the float mode) or in nothing. */
START_TEST(keys_are_equal_exactly_when_texts_are)
{
	arena_init(&arena);
	enum { N = 16 };
	Obligation *o[N];
	FloatMode fm[N];
	int n = 0;
	for (int k = 0; k < 2; k++) { /* each shape twice: identical pairs */
		Var *x = ir_var(&arena, "x", DT_INT32, no_span);
		Var *y = ir_var(&arena, "y", DT_INT64, no_span);
		Var *f = ir_var(&arena, "f", DT_FLOAT32, no_span);
		Expr *g1 = ir_bin(&arena, OP_LT, ref(x), lit(100, DT_INT32), no_span);
		Expr *g2 = ir_bin(&arena, OP_LT, ref(x), lit(101, DT_INT32), no_span);
		Expr *g3 = ir_bin(&arena, OP_LE, ref(x), lit(100, DT_INT32), no_span);
		Expr *g4 = ir_bin(&arena, OP_LT, ref(y), lit(100, DT_INT64), no_span);
		Expr *g5 = ir_bin(&arena, OP_LT, ref(f), ir_float(&arena, 0.1, DT_FLOAT32, no_span), no_span);
		Expr *g6 = ir_bin(&arena, OP_LT, ref(f), ir_float(&arena, nextafterf(0.1f, 1.0f), DT_FLOAT32, no_span), no_span);
		Expr *gs[] = {g1, g2, g3, g4, g5, g6, g5};
		for (int i = 0; i < 7; i++) {
			Var *vs[] = {x, y, f};
			o[n] = obligation_new(&arena, "t", "s", 3, vs, 0, NULL, gs[i], no_span);
			fm[n++] = i == 6 ? FLOAT_IEEE : FLOAT_REAL;
		}
	}
	Z3_context c = smt_context_new();
	char *text[N];
	QKey key[N];
	for (int i = 0; i < n; i++) {
		SmtEncoding e;
		ck_assert(smt_encode(c, o[i], fm[i], &e));
		text[i] = smt_encoding_text(&e);
		ck_assert_ptr_nonnull(text[i]);
		ck_assert(smt_encoding_key(&e, &key[i]));
		smt_encoding_free(&e);
	}
	int equal = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			bool same_text = strcmp(text[i], text[j]) == 0;
			bool same_key = memcmp(&key[i], &key[j], sizeof key[i]) == 0;
			ck_assert_msg(same_text == same_key, "%d vs %d:\n%s\n%s", i, j, text[i], text[j]);
			equal += same_key && i != j;
		}
	ck_assert_int_eq(equal, 2 * 7); /* each of the 7 with its twin */
	for (int i = 0; i < n; i++)
		free(text[i]);
	Z3_del_context(c);
	arena_free(&arena);
}
END_TEST

Suite *suite_pcache(void)
{
	Suite *s = suite_create("pcache");
	struct {
		const char *name;
		const TTest *test;
	} cases[] = {
		{"warm", warm_second_run_solves_nothing},
		{"prefix", shared_prefix_solves_only_new_obligations},
		{"two_processes", two_processes_share_one_cache},
		{"corrupted_rows", corrupted_rows_are_detected_ignored_and_rebuilt},
		{"garbage_file", a_garbage_file_is_set_aside_and_rebuilt},
		{"refuted", refuted_from_cache_keeps_counterexample_and_replay},
		{"log_check", log_check_rechecks_every_obligation_of_a_warm_run},
		{"key", keys_are_equal_exactly_when_texts_are},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, cases[i].test);
		suite_add_tcase(s, tc);
	}
	return s;
}
