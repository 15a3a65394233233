/* rewrites/schedule.c — applying a primitive: discharge its obligations,
 * commit only if all are proven (semantics.md section 2), otherwise keep
 * the previous IR and explain. The guard-dropping split tries a candidate
 * and falls back to a version that needs no proof. */
#include "schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smt/replay.h"

Schedule *sched_new(Arena *a, Module *m, const SmtOptions *opt)
{
	Schedule *s = arena_alloc(a, sizeof *s);
	s->arena = a;
	s->mod = m;
	s->float_mode = FLOAT_REAL;
	if (opt)
		s->smt = *opt;
	s->solver = smt_solver_new(&s->smt);
	s->replay_seed = 1;
	return s;
}

void sched_free(Schedule *s)
{
	if (!s)
		return;
	if (s->log)
		proof_log_close(s->log);
	s->log = NULL;
	smt_solver_free(s->solver);
	s->solver = NULL;
}

Func *sched_func(const Schedule *s) { return s->mod->funcs[s->func_index]; }

void sched_begin(Schedule *s, RwCtx *c, const char *desc, Span call_span, DiagList *d)
{
	memset(c, 0, sizeof *c);
	c->arena = s->arena;
	c->func = sched_func(s);
	c->float_mode = s->float_mode;
	c->diag = d;
	c->call_span = call_span;
	c->desc = arena_strdup(s->arena, desc);
}

static void push_step(Schedule *s, StepReport *r)
{
	if (s->nsteps == s->capsteps) {
		int cap = s->capsteps ? s->capsteps * 2 : 16;
		StepReport **st = arena_alloc(s->arena, sizeof(*st) * (size_t)cap);
		if (s->nsteps)
			memcpy(st, s->steps, sizeof(*st) * (size_t)s->nsteps);
		s->steps = st;
		s->capsteps = cap;
	}
	s->steps[s->nsteps++] = r;
}

static void set_func(Schedule *s, Func *f)
{
	Func **funcs = arena_alloc(s->arena, sizeof(Func *) * (size_t)s->mod->nfuncs);
	memcpy(funcs, s->mod->funcs, sizeof(Func *) * (size_t)s->mod->nfuncs);
	funcs[s->func_index] = f;
	s->mod = ir_module(s->arena, s->mod->name, s->mod->nfuncs, funcs, s->mod->span);
}

static const char *diag_text(Arena *a, const DiagList *d)
{
	if (!d->first)
		return "";
	return d->last->message ? arena_strdup(a, d->last->message) : "";
}

/* Discharge every obligation; index of the first not proven, or -1. */
static int discharge(Schedule *s, StepReport *r, const ObligationList *obs)
{
	r->nobs = obs->n;
	r->obs = obs->items;
	r->results = arena_alloc(s->arena, sizeof(ObligationResult) * (size_t)(obs->n + 1));
	if (obs->n)
		smt_discharge_all(s->solver, s->arena, obs->n, obs->items, s->float_mode,
				  r->results);
	int failed = -1;
	for (int i = 0; i < obs->n; i++) {
		if (s->log)
			proof_log_obligation(s->log, obs->items[i], &r->results[i], s->float_mode);
		if (failed < 0 && r->results[i].verdict != VERDICT_PROVEN)
			failed = i;
	}
	return failed;
}

static void log_step(Schedule *s, const StepReport *r)
{
	if (!s->log)
		return;
	const char *result = r->status == STEP_COMMITTED ? "committed"
			     : r->status == STEP_REJECTED ? "rejected" : "bad input";
	proof_log_rewrite(s->log, r->desc, r->func, result, r->reason ? r->reason : r->note);
}

StepReport *sched_finish(Schedule *s, RwCtx *c, RwStatus st)
{
	Arena *a = s->arena;
	StepReport *r = arena_alloc(a, sizeof *r);
	r->desc = c->desc;
	r->func = c->func->name;
	r->span = c->call_span;
	r->failed = -1;
	r->replay = REPLAY_NONE;
	r->note = c->note;
	push_step(s, r);
	switch (st) {
	case RW_OK:
		break;
	case RW_BAD_INPUT:
		r->status = STEP_BAD_INPUT;
		r->reason = diag_text(a, c->diag);
		log_step(s, r);
		return r;
	case RW_PRECONDITION:
		r->status = STEP_REJECTED;
		r->reason = arena_printf(a, "precondition: %s", diag_text(a, c->diag));
		log_step(s, r);
		return r;
	case RW_UNSUPPORTED:
		r->status = STEP_REJECTED;
		r->reason = arena_printf(a, "not supported: %s", diag_text(a, c->diag));
		log_step(s, r);
		return r;
	}
	int failed = discharge(s, r, &c->obs);
	if (failed < 0) {
		set_func(s, c->out);
		r->status = STEP_COMMITTED;
		log_step(s, r);
		return r;
	}
	if (c->fallback) {
		/* the candidate needed a proof it did not get; the fallback needs
		 * none (split with tail=guard keeps its guard) */
		set_func(s, c->fallback);
		r->status = STEP_COMMITTED;
		r->note = c->fallback_note;
		log_step(s, r);
		return r;
	}
	r->status = STEP_REJECTED;
	r->failed = failed;
	const Obligation *o = c->obs.items[failed];
	const ObligationResult *res = &r->results[failed];
	if (res->verdict == VERDICT_REFUTED) {
		r->reason = arena_printf(a, "obligation %s refuted: %s", o->kind, o->statement);
		ReplayOutcome ro;
		r->counterexample = replay_explain(a, o, res, c->func, c->out, s->float_mode,
						   s->replay_seed, &ro);
		r->replay = ro.status;
		r->replay_text = ro.text;
	} else {
		r->reason = arena_printf(a, "obligation %s not proven (%s): %s", o->kind,
					 res->reason ? res->reason : "unknown", o->statement);
	}
	log_step(s, r);
	return r;
}

static const char *status_word(StepStatus st)
{
	switch (st) {
	case STEP_COMMITTED: return "committed";
	case STEP_REJECTED: return "REJECTED";
	case STEP_BAD_INPUT: return "bad input";
	}
	return "?";
}

char *sched_report_text(const StepReport *r)
{
	StrBuf b = {0};
	sb_printf(&b, "step %s on %s: %s\n", r->desc, r->func, status_word(r->status));
	if (r->reason)
		sb_printf(&b, "  reason: %s\n", r->reason);
	if (r->note)
		sb_printf(&b, "  note: %s\n", r->note);
	for (int i = 0; i < r->nobs; i++) {
		const ObligationResult *x = &r->results[i];
		sb_printf(&b, "  obligation %-22s %-10s %.3fs%s  %s\n", r->obs[i]->kind,
			  verdict_name(x->verdict), x->seconds, x->cached ? " (cached)" : "",
			  r->obs[i]->statement);
	}
	if (r->counterexample)
		sb_printf(&b, "%s", r->counterexample);
	switch (r->replay) {
	case REPLAY_NONE:
		break;
	case REPLAY_CONFIRMED:
		sb_printf(&b, "  replay: confirmed\n%s", r->replay_text ? r->replay_text : "");
		break;
	case REPLAY_UNCONFIRMED:
		sb_printf(&b, "  replay: unconfirmed\n%s", r->replay_text ? r->replay_text : "");
		break;
	case REPLAY_IMPOSSIBLE:
		sb_printf(&b, "  replay: not possible: %s\n", r->replay_text ? r->replay_text : "");
		break;
	}
	return sb_take(&b);
}
