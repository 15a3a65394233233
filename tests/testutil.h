/* tests/testutil.h — shared helpers for the check suites: parsing kernels
 * from strings, running a schedule script, and checking a committed
 * result against the original with the reference interpreter. */
#ifndef VS_TESTS_TESTUTIL_H
#define VS_TESTS_TESTUTIL_H

#include "kernel/interp.h"
#include "kernel/parse.h"
#include "kernel/print.h"
#include "rewrites/schedule/schedule.h"

/* Parse or fail the test with the rendered diagnostics. */
Module *tu_parse(Arena *a, const char *name, const char *text);
/* A schedule on m with default options (timeout 10 s). */
Schedule *tu_schedule(Arena *a, Module *m);
/* Run a script text on s; returns the status of the last step. */
StepStatus tu_run(Schedule *s, const char *script);
/* The last step's report. */
StepReport *tu_last(Schedule *s);
/* Interpreter check: `trials` random admissible inputs of `before`, run
 * both; returns 0 when all agree, else fails the test with the report. */
void tu_assert_equiv(const Func *before, const Func *after, int trials);
/* Like tu_assert_equiv but returns whether they agree (no assertion). */
bool tu_equiv(const Func *before, const Func *after, int trials, char **report);
/* The shared folder (VS_SHARED or ../shared), or NULL if absent. */
const char *tu_shared_dir(void);
/* "a/b" into out (n bytes); fails the test if it does not fit. */
char *tu_join(char *out, size_t n, const char *a, const char *b);
/* Read a whole file (malloc'ed) or NULL. */
char *tu_read_file(const char *path);
/* The file names of dir, dot files left out (sorted, malloc'ed; free with
 * tu_free_list); 0 if it cannot be read. */
int tu_list_dir(const char *dir, char ***out);
void tu_free_list(char **names, int n);
/* The text of the fixture tests/data/<relpath> (the suites run from the
 * top), e.g. tu_fixture("loops/scale14.tir"); failing to read it fails the
 * test, naming the path. The text is read once per process and freed at
 * exit, so the caller neither frees it nor leaks it. */
const char *tu_fixture(const char *relpath);

/* ---------- running the vsched program (suites cli, report, proofs) ---------- */

/* The vsched binary: VS_BIN, else ./vsched (tests run from the top). */
const char *tu_vsched_bin(void);
/* Run `sh -c cmd` with stdout and stderr captured (malloc'ed, never
 * NULL; the caller frees); returns the exit status, or -1 if the command
 * did not exit normally. */
int tu_sh(const char *cmd, char **out, char **err);
/* A fresh directory under /tmp (static buffer of the caller's). */
void tu_tmpdir(char *out, size_t n);
void tu_rmdir(const char *dir);
/* True if `text` is valid JSON (one value, RFC 8259; surrounding
 * whitespace allowed). */
bool tu_json_valid(const char *text);

#endif
