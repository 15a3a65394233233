/* rewrites/schedule/safety_check.c — before a build, the scheduled module
 * is proven free of out-of-bounds accesses and divisions by zero
 * (rewrites/safety.c states the obligations). Proven rewrites keep a
 * kernel without undefined behaviour so, so an obligation not proven here
 * points at the kernel as written: each one is a warning with the
 * statement, the refuted obligation and the counterexample's values, run
 * through the interpreter: "has undefined behaviour" when the run stops on
 * it, "may have" otherwise. It never changes what is built. */
#include "rewrites/schedule/schedule.h"
#include "kernel/analysis/expr_query.h"
#include "kernel/interp.h"

#include <string.h>

/* obligations stated per function, and warnings printed per function */
#define SAFETY_BUDGET 512
#define SAFETY_MAX_WARNINGS 16
/* counterexamples run through the interpreter per function */
#define SAFETY_MAX_REPLAYS 4

static const char *model_text(Arena *a, const Model *m)
{
	if (!m || m->nvars == 0)
		return NULL;
	StrBuf b = {0};
	for (int i = 0; i < m->nvars && i < 8; i++) {
		const ModelValue *v = &m->vars[i].val;
		if (v->text)
			sb_printf(&b, "%s%s = %s", i ? ", " : "", m->vars[i].var->name, v->text);
		else if (v->is_float)
			sb_printf(&b, "%s%s = %g", i ? ", " : "", m->vars[i].var->name, v->fval);
		else
			sb_printf(&b, "%s%s = %lld", i ? ", " : "", m->vars[i].var->name,
				  (long long)v->ival);
	}
	char *t = sb_take(&b);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

/* Run f on an input with the counterexample's scalar values (the other
 * cells random): the interpreter's message when it stops on undefined
 * behaviour at the obligation's access or division, else NULL (the counterexample may rest on buffer contents or
 * a math call the proof did not interpret). Budgeted like a replay. */
static const char *confirm(Arena *a, const Func *f, const Obligation *o, const Model *m)
{
	int n = 0;
	for (int i = 0; i < f->nparams; i++)
		n += f->params[i].kind == PARAM_SCALAR;
	int64_t *scalars = arena_alloc(a, sizeof *scalars * (size_t)(n ? n : 1));
	for (int i = 0, k = 0; i < f->nparams; i++) {
		if (f->params[i].kind != PARAM_SCALAR)
			continue;
		scalars[k] = 0;
		for (int j = 0; m && j < m->nvars; j++)
			if (m->vars[j].var == f->params[i].var && !m->vars[j].val.is_float)
				scalars[k] = m->vars[j].val.ival;
		k++;
	}
	DiagList d;
	diag_init(&d, a);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		State *st = interp_gen_input_scalars(a, f, seed, scalars, &d);
		if (!st)
			return NULL;
		InterpResult r;
		if (interp_run(f, st, REPLAY_MAX_STEPS, &r) == RUN_UB &&
		    r.span.line == o->origin.line && r.span.col == o->origin.col)
			return arena_printf(a, "%s at line %d", r.message ? r.message : "undefined behaviour",
					    r.span.line);
	}
	return NULL;
}

void sched_prove_safety(Arena *a, Solver *solver, FloatMode fm, ProofLog *log, const Func *f,
			SafetyStats *stats, DiagList *d)
{
	DiagList scratch;
	diag_init(&scratch, a);
	RwCtx c = {.arena = a, .func = f, .float_mode = fm, .diag = &scratch,
		   .desc = arena_printf(a, "build: safety of '%s'", f->name)};
	const char *deep = rw_nesting_too_deep(&c);
	if (deep) {
		diag_add(d, DIAG_WARNING, f->span,
			 "'%s' is not checked for out-of-bounds accesses and division by zero: %s",
			 f->name, deep);
		stats->nunchecked++;
		return;
	}
	int skipped = rw_safety_obligations(&c, SAFETY_BUDGET);
	int n = c.obs.n;
	ObligationResult *res = arena_alloc(a, sizeof *res * (size_t)(n ? n : 1));
	smt_discharge_all(solver, a, n, c.obs.items, fm, res);
	int warned = 0, unwarned = 0, replays = 0;
	for (int k = 0; k < n; k++) {
		const Obligation *o = c.obs.items[k];
		if (log)
			proof_log_obligation(log, o, &res[k], fm);
		stats->nobligations++;
		stats->solver_seconds += res[k].seconds;
		if (res[k].verdict == VERDICT_PROVEN) {
			stats->nproven++;
			continue;
		}
		if (warned == SAFETY_MAX_WARNINGS) {
			unwarned++;
			continue;
		}
		warned++;
		bool refuted = res[k].verdict == VERDICT_REFUTED;
		const char *ex = refuted ? model_text(a, res[k].model) : NULL;
		const char *seen = NULL;
		if (refuted && replays < SAFETY_MAX_REPLAYS) {
			replays++;
			seen = confirm(a, f, o, res[k].model);
		}
		const char *why = refuted ? "refuted"
					  : arena_printf(a, "not proven: %s",
							 res[k].reason ? res[k].reason : "unknown");
		diag_add(d, DIAG_WARNING, o->origin, "%s: obligation %s %s (%s)%s%s%s%s",
			 seen ? "the kernel has undefined behaviour on some inputs"
			      : "the kernel may have undefined behaviour",
			 o->kind, why, o->statement, ex ? "; for example " : "", ex ? ex : "",
			 seen ? "; the interpreter stops there: " : "", seen ? seen : "");
	}
	if (unwarned)
		diag_add(d, DIAG_WARNING, f->span,
			 "%d more obligations on undefined behaviour of '%s' are not proven", unwarned,
			 f->name);
	if (skipped) {
		diag_add(d, DIAG_WARNING, f->span,
			 "%d accesses and divisions of '%s' are not checked for undefined behaviour (budget of %d obligations)",
			 skipped, f->name, SAFETY_BUDGET);
		stats->nunchecked++;
	}
}
