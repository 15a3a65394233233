/* smt/replay.h — turning a refuted obligation into a report a person can
 * act on (semantics.md section 6): the model's values of loop variables,
 * parameters and buffer cells, the source lines involved, and a replay:
 * inputs built from the model on which the reference interpreter runs the
 * program before and after the rewrite and shows the first difference or
 * the undefined behaviour the rewrite introduces. */
#ifndef VS_SMT_REPLAY_H
#define VS_SMT_REPLAY_H

#include "kernel/obligation.h"
#include "smt/smt.h"

typedef enum {
	REPLAY_NONE,	    /* nothing to replay (no refutation) */
	REPLAY_CONFIRMED,   /* the interpreter shows the difference or UB */
	REPLAY_UNCONFIRMED, /* tried, no difference observed */
	REPLAY_IMPOSSIBLE,  /* cannot be replayed; the text says why */
	REPLAY_SKIPPED,	    /* over the replay budget: not run ("skipped
			     * (about N iterations) ...") or stopped
			     * ("stopped after N steps ...") */
} ReplayStatus;

typedef struct ReplayOutcome {
	ReplayStatus status;
	char *text; /* arena-owned */
} ReplayOutcome;

/* The counterexample text (arena-owned) and the replay outcome. `after`
 * is the rewritten function that was not committed.
 *
 * Replay has a budget, so a report follows its verdict within a fraction
 * of a second: before running, the loop iterations of before and after
 * under the model's scalar values are estimated (conservatively, with
 * intervals); past REPLAY_MAX_ITERATIONS the replay does not run. Then,
 * when the solver is given (may be NULL), a smaller model of the same
 * query is asked for, with the scalar parameters that size loops and
 * buffers bounded by a few growing caps, each check under a short time
 * limit; replay runs on it when it fits the budget (the report names its
 * values). The interpreter runs under REPLAY_MAX_STEPS steps in all. The
 * counterexample text always shows the solver's own model: the rejection
 * is never changed by its replay. */
#define REPLAY_MAX_ITERATIONS ((int64_t)1 << 23)
#define REPLAY_MAX_STEPS ((uint64_t)20000000)
char *replay_explain(Arena *a, Solver *solver, const Obligation *o,
		     const ObligationResult *r, const Func *before, const Func *after,
		     FloatMode fm, unsigned seed, ReplayOutcome *out);

const char *replay_status_name(ReplayStatus s);

#endif
