/* smt/replay.h — turning a refuted obligation into a report a person can
 * act on (semantics.md section 6): the model's values of loop variables,
 * parameters and buffer cells, the source lines involved, and a replay:
 * inputs built from the model on which the reference interpreter runs the
 * program before and after the rewrite and shows the first difference or
 * the undefined behaviour the rewrite introduces. */
#ifndef VS_SMT_REPLAY_H
#define VS_SMT_REPLAY_H

#include "kernel/obligation.h"

typedef enum {
	REPLAY_NONE,	    /* nothing to replay (no refutation) */
	REPLAY_CONFIRMED,   /* the interpreter shows the difference or UB */
	REPLAY_UNCONFIRMED, /* tried, no difference observed */
	REPLAY_IMPOSSIBLE,  /* cannot be replayed; the text says why */
} ReplayStatus;

typedef struct ReplayOutcome {
	ReplayStatus status;
	char *text; /* arena-owned */
} ReplayOutcome;

/* The counterexample text (arena-owned) and the replay outcome. `after`
 * is the rewritten function that was not committed. */
char *replay_explain(Arena *a, const Obligation *o, const ObligationResult *r,
		     const Func *before, const Func *after, FloatMode fm,
		     unsigned seed, ReplayOutcome *out);

const char *replay_status_name(ReplayStatus s);

#endif
