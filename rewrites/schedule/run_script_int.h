/* rewrites/schedule/run_script_int.h — private to the script runner
 * (run_script.c: argument checks, handles, the call loop; run_prims.c: the
 * per-primitive handlers): one call being run, and the helpers both use.
 * Shared helpers carry the rs_ prefix. What the rest of the project sees is
 * sched_run_script in rewrites/schedule/schedule.h. */
#ifndef VS_REWRITES_SCHEDULE_RUN_SCRIPT_INT_H
#define VS_REWRITES_SCHEDULE_RUN_SCRIPT_INT_H

#include "rewrites/schedule/schedule.h"
#include "rewrites/schedule/handles.h"
#include "rewrites/schedule/primitives.h"
#include "rewrites/schedule/steps.h"

typedef struct Call {
	Schedule *s;
	const Script *sc;
	const ScriptCall *call; /* handles resolved to names, stars unpacked */
	const ScriptCall *orig; /* as written */
	Value **argv;		/* per argument of call: the handle it named, or NULL */
	HandleEnv *env;
	Value *result; /* what the call returns (bound on the left of '=') */
	DiagList *d;
} Call;

/* A diagnostic at arg (or the call); returns STEP_BAD_INPUT. */
StepStatus rs_bad(Call *k, const ScriptArg *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A loop or buffer name: "i", "i#2", or a name bound by an earlier
 * left-hand side (io). */
const char *rs_arg_name(Call *k, int pos, const char *kw);
/* The i-th name on the left, to name what the call creates: NULL for `_`,
 * past the end, or when a starred name makes positions uncertain. */
const char *rs_lhs(const Call *k, int i);
/* The handle argument `a` of the resolved call named, or NULL. */
Value *rs_arg_value(const Call *k, const ScriptArg *a);
/* "split(\"i\", factor=4)": the call as the user wrote it */
const char *rs_describe(Call *k);
/* Whether the names on the left can take a call's `count` results. */
bool rs_unpack_ok(const Call *k, int count);
/* Commit or reject the step begun on c; finish_loops and finish_block
 * also bind the call's result to the loops or the block it created. */
StepStatus rs_finish(Call *k, RwCtx *c, RwStatus st);
StepStatus rs_finish_loops(Call *k, RwCtx *c, RwStatus st, int want);
StepStatus rs_finish_block(Call *k, RwCtx *c, RwStatus st, bool last);

/* run_prims.c: the handler of a single rewrite (a step begun on c), and of
 * handle queries, settings and compound calls (their own steps; false for
 * a single rewrite). */
StepStatus rs_run_rewrite(Call *k, const PrimSpec *sig, RwCtx *c);
bool rs_run_other(Call *k, const PrimSpec *sig, StepStatus *st);

#endif
