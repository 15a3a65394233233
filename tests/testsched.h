/* tests/testsched.h — helpers for the suites that run schedule scripts
 * (layout, overcompute, simplify, seq_access, merge, cache, loops,
 * compute_at, ...): a script that must commit, checked function by function
 * against the original with the interpreter; a script whose last step must
 * be rejected, with its reason, failing obligation and replay; a script
 * refused as bad input; and small queries on reports and IR. One set, so
 * that a fix to a check reaches every suite. */
#ifndef VS_TESTS_TESTSCHED_H
#define VS_TESTS_TESTSCHED_H

#include "tests/testutil.h"

typedef struct TsRun {
	Module *before; /* the parsed module */
	Module *prev;	/* the module before the last step */
	Schedule *s;
	StepReport *r; /* the last step */
	StepStatus last; /* how the script's last call ended */
} TsRun;

/* Parse `kernel` (one function or a module), run `script` (one call per
 * line). Every step must commit; then every function of the result is
 * compared with the original function of the same name on `trials` random
 * admissible inputs (inputs come from the transformed function after a
 * layout change). The caller frees t.s with sched_free. */
TsRun ts_accept(Arena *a, const char *kernel, const char *script, int trials);

/* ts_accept for a kernel with an opaque call (T.call_extern ...), which
 * the interpreter cannot run: every step must commit, and every changed
 * function must print and parse back to itself; the caller checks the
 * result's shape. */
TsRun ts_accept_opaque(Arena *a, const char *kernel, const char *script);

/* The same, but the script's last step must be rejected (the earlier ones
 * committed), its reason must contain `why`, and the module must be the
 * one before that step. */
TsRun ts_reject(Arena *a, const char *kernel, const char *script, const char *why);

/* ts_reject for callers that keep only the report: the schedule is freed
 * (the report lives in the arena). */
StepReport *ts_rejected(Arena *a, const char *kernel, const char *script, const char *why);
/* ts_rejected, on a refuted obligation of `kind` (also the reason's
 * needle) whose replay confirmed the counterexample. */
StepReport *ts_refuted(Arena *a, const char *kernel, const char *script, const char *kind);

/* The script must stop at bad input (exit 2): its diagnostics mention
 * `why`, and so does the failing step's reason when a rewrite got as far
 * as a report; the module is the parsed one. Frees the schedule; returns
 * that report, or NULL when the script reader refused the call before any
 * rewrite ran. */
StepReport *ts_bad_input(Arena *a, const char *kernel, const char *script, const char *why);

/* The printed function parses back to the same function. */
void ts_assert_reparses(Arena *a, const Func *f);

/* The rejected step failed on an obligation of `kind` that the solver
 * refuted, and the replay confirmed the counterexample. */
void ts_assert_refuted_confirmed(const StepReport *r, const char *kind);

/* Some obligation of `kind` in r has verdict v. */
bool ts_has_obligation(const StepReport *r, const char *kind, Verdict v);
/* How many obligations of `kind` r holds (any verdict). */
int ts_count_obligations(const StepReport *r, const char *kind);

/* The current function named `name` (NULL: the current one). */
Func *ts_func(const TsRun *t, const char *name);
/* The function printed (arena copy). */
char *ts_print(Arena *a, const Func *f);
/* The report text (arena copy). */
char *ts_report(Arena *a, const StepReport *r);
/* text contains / lacks needle, else the test fails showing text (a NULL
 * text, e.g. a report without a note, contains nothing). */
void ts_has(const char *text, const char *needle);
void ts_lacks(const char *text, const char *needle);

/* Statements of kind k in s, s included. */
int ts_count_kind(const Stmt *s, StmtKind k);

/* `if` statements whose bodies store to a buffer (branches around
 * computation; ifs that hold only T.assume do not count). */
int ts_store_ifs(const Stmt *s);

/* Run f on a random admissible input (seed) and list the cells of buffer
 * `buf` whose final state is `state`, as "[1, 6] [1, 7]" (arena copy).
 * The run must succeed. */
char *ts_cells_in_state(Arena *a, const Func *f, const char *buf, CellState state,
			uint64_t seed);

/* Parse one function; the result of ir_module's single function. */
Func *ts_parse_func(Arena *a, const char *kernel);

/* ---------- case folders (../shared/conformance, tests/data/tvm) ---------- */

/* Run one case folder: before.tir, schedule.sched and expect, as the
 * shared conformance README describes them, plus these expect lines:
 *   bad_input: yes    the script must stop at bad input (exit 2), not a
 *                     rejected rewrite (with verdict: reject);
 *   shape: F.tir      the loops, ifs and stores of the result nest as in
 *                     F (the other statements ignored);
 *   build: yes        the proven result must build (lowering, flattening,
 *                     LLVM) and the compiled code agree with the reference
 *                     interpreter; build: reject — the schedule commits
 *                     and lowering refuses the result (with reason:);
 *   reason: TEXT      the rejection's reason contains TEXT;
 *   why: TEXT         where the verdict differs from TVM's: not read.
 * Every accepted result is compared with before.tir by the interpreter.
 * Proof queries go to a log under logdir (NULL: no log). Returns NULL when
 * the case gives what expect asks, else what went wrong (malloc'ed). Never
 * aborts the test itself, so a caller can expect a failure. */
char *ts_case_check(const char *dir, const char *name, const char *logdir);

#endif
