/* rewrites/schedule/schedule.c — applying a primitive: discharge its obligations,
 * commit only if all are proven (semantics.md section 2), otherwise keep
 * the previous IR and explain. The guard-dropping split tries a candidate
 * and falls back to the guarded version, which is committed only when its
 * own obligations (index arithmetic within the dtype) are proven too. */
#include "rewrites/schedule/schedule.h"
#include "kernel/print.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/verify.h"
#include "smt/replay.h"

static void free_facts(Schedule *s);

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
	free_facts(s);
}

Func *sched_func(const Schedule *s) { return s->mod->funcs[s->func_index]; }

void sched_begin(Schedule *s, RwCtx *c, const char *desc, Span call_span, DiagList *d)
{
	memset(c, 0, sizeof *c);
	c->arena = s->arena;
	c->func = sched_func(s);
	c->module = s->mod;
	c->float_mode = s->float_mode;
	c->diag = d;
	c->call_span = call_span;
	c->desc = arena_strdup(s->arena, desc);
}

static void push_step(Schedule *s, StepReport *r)
{
	VEC_PUSH(s->arena, s->steps, s->nsteps, s->capsteps, r);
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
	const Diag *last = NULL;
	for (const Diag *g = d->first; g; g = g->next)
		if (g->level == DIAG_ERROR || !last)
			last = g;
	return last && last->message ? arena_strdup(a, last->message) : "";
}

/* ---------- proven facts remembered across steps ----------
 * An obligation is a closed formula: once proven it stays true, so an
 * identical one (same kind, goal, hypotheses and float mode, compared by
 * structure) need not be stated again. Only loop.no_wrap is remembered:
 * every step re-issues it for every loop of its input and result. Facts
 * are kept per proof log, so that every fact a commit depends on is in the
 * log the commit is in (log check re-checks it there). Open addressing on
 * a structural hash: lookups are O(1) in the number of facts. */

typedef struct FactEntry {
	uint64_t hash;
	const Obligation *o; /* NULL: empty slot */
	FloatMode fm;
	const ProofLog *log;
} FactEntry;

typedef struct FactMemo {
	size_t n, cap; /* cap a power of two */
	FactEntry *slots;
} FactMemo;

static const char *const remembered_kind = "loop.no_wrap";

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t fact_hash(const Obligation *o, FloatMode fm)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = o->kind; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = mix(h, (uint64_t)fm);
	h = mix(h, (uint64_t)o->same_value);
	h = mix(h, ir_expr_hash(o->goal));
	h = mix(h, (uint64_t)o->nhyps);
	for (int i = 0; i < o->nhyps; i++)
		h = mix(h, ir_expr_hash(o->hyps[i]));
	return h;
}

static bool same_fact(const FactEntry *e, uint64_t h, const Obligation *o, FloatMode fm,
		      const ProofLog *log)
{
	const Obligation *x = e->o;
	if (e->hash != h || e->fm != fm || e->log != log || x->nhyps != o->nhyps ||
	    x->same_value != o->same_value || strcmp(x->kind, o->kind) != 0 ||
	    !ir_expr_equal(x->goal, o->goal))
		return false;
	for (int i = 0; i < o->nhyps; i++)
		if (!ir_expr_equal(x->hyps[i], o->hyps[i]))
			return false;
	return true;
}

/* The slot of o: its entry, or the empty slot where it would go. */
static FactEntry *fact_slot(FactMemo *m, uint64_t h, const Obligation *o, FloatMode fm,
			    const ProofLog *log)
{
	size_t i = (size_t)h & (m->cap - 1);
	while (m->slots[i].o && !same_fact(&m->slots[i], h, o, fm, log))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static bool fact_known(const Schedule *s, const Obligation *o)
{
	FactMemo *m = s->wrap_memo;
	if (!m || !m->n || strcmp(o->kind, remembered_kind) != 0)
		return false;
	return fact_slot(m, fact_hash(o, s->float_mode), o, s->float_mode, s->log)->o != NULL;
}

static void fact_grow(FactMemo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	FactEntry *slots = calloc(cap, sizeof *slots);
	if (!slots)
		abort();
	FactEntry *old = m->slots;
	size_t oldcap = m->cap;
	m->slots = slots;
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].o)
			*fact_slot(m, old[i].hash, old[i].o, old[i].fm, old[i].log) = old[i];
	free(old);
}

/* Remember the proven loop.no_wrap obligations among obs[0..n). */
static void remember_facts(Schedule *s, int n, Obligation *const *obs,
			   const ObligationResult *res)
{
	for (int i = 0; i < n; i++) {
		if (res[i].verdict != VERDICT_PROVEN || strcmp(obs[i]->kind, remembered_kind) != 0)
			continue;
		if (!s->wrap_memo) {
			s->wrap_memo = calloc(1, sizeof *s->wrap_memo);
			if (!s->wrap_memo)
				abort();
		}
		FactMemo *m = s->wrap_memo;
		if (2 * (m->n + 1) > m->cap)
			fact_grow(m);
		uint64_t h = fact_hash(obs[i], s->float_mode);
		FactEntry *e = fact_slot(m, h, obs[i], s->float_mode, s->log);
		if (e->o)
			continue;
		*e = (FactEntry){h, obs[i], s->float_mode, s->log};
		m->n++;
	}
}

static void free_facts(Schedule *s)
{
	if (s->wrap_memo)
		free(s->wrap_memo->slots);
	free(s->wrap_memo);
	s->wrap_memo = NULL;
}

/* Leave out of l the obligations already proven by an earlier step. */
static void drop_known_facts(const Schedule *s, ObligationList *l)
{
	int kept = 0;
	Obligation **items = l->items;
	for (int i = 0; i < l->n; i++)
		if (!fact_known(s, items[i]))
			items[kept++] = items[i];
	l->n = kept;
}

/* Discharge every obligation of `obs` and append them with their results
 * to the report; index (in the report) of the first not proven, or -1. */
static int discharge(Schedule *s, StepReport *r, const ObligationList *obs)
{
	int base = r->nobs, n = base + obs->n;
	Obligation **all = arena_alloc(s->arena, sizeof(Obligation *) * (size_t)(n + 1));
	ObligationResult *res = arena_alloc(s->arena, sizeof(ObligationResult) * (size_t)(n + 1));
	if (base) {
		memcpy(all, r->obs, sizeof(Obligation *) * (size_t)base);
		memcpy(res, r->results, sizeof(ObligationResult) * (size_t)base);
	}
	if (obs->n) {
		memcpy(all + base, obs->items, sizeof(Obligation *) * (size_t)obs->n);
		smt_discharge_all(s->solver, s->arena, obs->n, obs->items, s->float_mode,
				  res + base);
		remember_facts(s, obs->n, all + base, res + base);
	}
	r->nobs = n;
	r->obs = all;
	r->results = res;
	int failed = -1;
	for (int i = base; i < n; i++) {
		if (s->log)
			proof_log_obligation(s->log, all[i], &res[i], s->float_mode);
		if (failed < 0 && res[i].verdict != VERDICT_PROVEN)
			failed = i;
	}
	return failed;
}

static void log_step(Schedule *s, StepReport *r)
{
	r->result = sched_func(s);
	if (!s->log)
		return;
	const char *result = r->status == STEP_COMMITTED ? "committed"
			     : r->status == STEP_REJECTED ? "rejected" : "bad input";
	proof_log_rewrite(s->log, r->desc, r->func, result, r->reason ? r->reason : r->note);
}

/* Style rule 14: the IR verifier on the functions a commit changed. A
 * malformed result is a bug, never committed: the module goes back to
 * `before` and the step is rejected with the verifier's message. */
static bool commit_verified(Schedule *s, StepReport *r, const Module *before)
{
	const char *bad = ir_verify_changed(s->arena, s->mod, before);
	if (!bad)
		return true;
	s->mod = (Module *)before;
	r->status = STEP_REJECTED;
	r->reason = bad;
	r->note = NULL;
	return false;
}

const char *sched_opaque_refusal(Arena *a, const Func *f, const char *desc)
{
	const Expr *o = f ? ir_stmt_find_opaque(f->body) : NULL;
	if (!o)
		return NULL;
	return arena_printf(a, "opaque access: T.%s at line %d may read and write any cell of "
			    "the buffers it names, and %s needs to know what each statement "
			    "reads and writes (only split, fuse and unroll run on a function "
			    "with an opaque call)", o->u.opq.name, o->span.line,
			    desc ? desc : "this step");
}

/* The lines of a malloc'ed text, split in place (at most cap). */
static int split_lines(char *text, char **lines, int cap)
{
	int n = 0;
	for (char *p = text; *p && n < cap;) {
		lines[n++] = p;
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	return n;
}

/* The step's code before and after (issue 13: reports like Alive2's): the
 * printed functions' lines that differ, as "-"/"+" lines, with two lines
 * of context around them; at most 24 lines shown, functions of at most
 * 4096 lines compared. NULL when the candidate is the same text. */
static char *code_diff(Arena *a, const Func *before, const Func *after)
{
	enum { CAP = 4096, SHOW = 24, CONTEXT = 2 };
	if (!before || !after || before == after)
		return NULL;
	char *tb = print_func(before), *ta = print_func(after);
	char **lb = malloc(sizeof(char *) * CAP), **la = malloc(sizeof(char *) * CAP);
	char *res = NULL;
	if (!tb || !ta || !lb || !la)
		goto done;
	int nb = split_lines(tb, lb, CAP), na = split_lines(ta, la, CAP);
	int p = 0, q = 0;
	while (p < nb && p < na && strcmp(lb[p], la[p]) == 0)
		p++;
	while (q < nb - p && q < na - p && strcmp(lb[nb - 1 - q], la[na - 1 - q]) == 0)
		q++;
	if (p == nb && p == na)
		goto done;
	StrBuf b = {0};
	int shown = 0;
	int from = p - CONTEXT < 0 ? 0 : p - CONTEXT;
	for (int i = from; i < p && shown < SHOW; i++, shown++)
		sb_printf(&b, "     %s\n", lb[i]);
	for (int i = p; i < nb - q && shown < SHOW; i++, shown++)
		sb_printf(&b, "    -%s\n", lb[i]);
	for (int i = p; i < na - q && shown < SHOW; i++, shown++)
		sb_printf(&b, "    +%s\n", la[i]);
	for (int i = na - q; i < na && i < na - q + CONTEXT && shown < SHOW; i++, shown++)
		sb_printf(&b, "     %s\n", la[i]);
	if (shown == SHOW)
		sb_puts(&b, "     ...\n");
	char *t = sb_take(&b);
	res = arena_strdup(a, t);
	free(t);
done:
	free(tb);
	free(ta);
	free(lb);
	free(la);
	return res;
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
	const char *deep = rw_nesting_too_deep(c);
	if (deep) {
		r->status = STEP_REJECTED;
		r->reason = arena_printf(a, "not supported: %s", deep);
		log_step(s, r);
		return r;
	}
	const char *opq = c->opaque_ok ? NULL : sched_opaque_refusal(a, c->func, c->desc);
	if (opq) {
		r->status = STEP_REJECTED;
		r->reason = arena_printf(a, "not supported: %s", opq);
		log_step(s, r);
		return r;
	}
	rw_loop_wrap_obligations(c);
	drop_known_facts(s, &c->obs);
	drop_known_facts(s, &c->fallback_obs);
	int failed = discharge(s, r, &c->obs);
	if (failed < 0 && c->reject_after) {
		r->status = STEP_REJECTED;
		r->reason = arena_printf(a, "not supported: %s", c->reject_after);
		log_step(s, r);
		return r;
	}
	if (failed < 0) {
		if (c->out_module)
			s->mod = c->out_module;
		else
			set_func(s, c->out);
		r->status = STEP_COMMITTED;
		r->note = c->note;
		commit_verified(s, r, c->module);
		log_step(s, r);
		return r;
	}
	const Func *rejected = c->out;
	if (c->fallback) {
		/* the candidate needed a proof it did not get; the fallback
		 * (split with tail=guard keeps its guard) is committed when its
		 * own obligations are proven */
		int fb_failed = discharge(s, r, &c->fallback_obs);
		if (fb_failed < 0) {
			set_func(s, c->fallback);
			r->status = STEP_COMMITTED;
			r->note = c->fallback_note;
			commit_verified(s, r, c->module);
			log_step(s, r);
			return r;
		}
		failed = fb_failed;
		rejected = c->fallback;
	}
	r->status = STEP_REJECTED;
	r->failed = failed;
	r->code_diff = code_diff(a, c->func, rejected);
	const Obligation *o = r->obs[failed];
	const ObligationResult *res = &r->results[failed];
	if (res->verdict == VERDICT_REFUTED) {
		r->reason = arena_printf(a, "obligation %s refuted: %s", o->kind, o->statement);
		ReplayOutcome ro;
		r->counterexample = replay_explain(a, s->solver, o, res, c->func, rejected,
						   s->float_mode, s->replay_seed, &ro);
		r->replay = ro.status;
		r->replay_text = ro.text;
	} else {
		r->reason = arena_printf(a, "obligation %s not proven (%s): %s", o->kind,
					 res->reason ? res->reason : "unknown", o->statement);
	}
	log_step(s, r);
	return r;
}

/* ---------- compound calls ---------- */

void sched_compound_begin(Schedule *s, Compound *k, const char *desc, Span call_span,
			  DiagList *d)
{
	memset(k, 0, sizeof *k);
	k->s = s;
	k->start = s->mod;
	k->fail = -1;
	k->diag = d;
	StepReport *r = arena_alloc(s->arena, sizeof *r);
	r->desc = arena_strdup(s->arena, desc);
	r->func = sched_func(s)->name;
	r->span = call_span;
	r->failed = -1;
	r->replay = REPLAY_NONE;
	k->r = r;
	push_step(s, r);
}

void sched_sub_begin(Compound *k, RwCtx *c, const char *desc)
{
	sched_begin(k->s, c, desc, k->r->span, k->diag);
}

Func *sched_compound_func(const Compound *k) { return sched_func(k->s); }

static void reserve_obs(Compound *k, int more)
{
	StepReport *r = k->r;
	if (r->nobs + more <= k->cap)
		return;
	int cap = k->cap ? k->cap * 2 : 16;
	while (cap < r->nobs + more)
		cap *= 2;
	Obligation **obs = arena_alloc(k->s->arena, sizeof(Obligation *) * (size_t)cap);
	ObligationResult *res = arena_alloc(k->s->arena, sizeof(ObligationResult) * (size_t)cap);
	if (r->nobs) {
		memcpy(obs, r->obs, sizeof(Obligation *) * (size_t)r->nobs);
		memcpy(res, r->results, sizeof(ObligationResult) * (size_t)r->nobs);
	}
	r->obs = obs;
	r->results = res;
	k->cap = cap;
}

static bool prove_list(Compound *k, const ObligationList *obs, const Func *before,
		       const Func *after)
{
	Schedule *s = k->s;
	StepReport *r = k->r;
	if (obs->n == 0)
		return true;
	reserve_obs(k, obs->n);
	int base = r->nobs;
	memcpy(r->obs + base, obs->items, sizeof(Obligation *) * (size_t)obs->n);
	smt_discharge_all(s->solver, s->arena, obs->n, obs->items, s->float_mode,
			  r->results + base);
	remember_facts(s, obs->n, r->obs + base, r->results + base);
	r->nobs += obs->n;
	int failed = -1;
	for (int i = 0; i < obs->n; i++) {
		if (s->log)
			proof_log_obligation(s->log, obs->items[i], &r->results[base + i],
					     s->float_mode);
		if (failed < 0 && r->results[base + i].verdict != VERDICT_PROVEN)
			failed = base + i;
	}
	if (failed < 0)
		return true;
	const Obligation *o = r->obs[failed];
	const ObligationResult *res = &r->results[failed];
	k->fail = failed;
	k->fail_before = before;
	k->fail_after = after;
	if (res->verdict == VERDICT_REFUTED)
		k->fail_reason = arena_printf(s->arena, "obligation %s refuted: %s", o->kind,
					      o->statement);
	else
		k->fail_reason = arena_printf(s->arena, "obligation %s not proven (%s): %s",
					      o->kind, res->reason ? res->reason : "unknown",
					      o->statement);
	return false;
}

/* loop.no_wrap of c's input and outputs, less those already proven by
 * this or an earlier step; proven ones are remembered. */
static bool prove_no_wrap(Compound *k, RwCtx *c)
{
	Arena *a = k->s->arena;
	ObligationList all = c->obs, fresh = {0};
	memset(&c->obs, 0, sizeof c->obs);
	ObligationList fb = c->fallback_obs;
	memset(&c->fallback_obs, 0, sizeof c->fallback_obs);
	Func *fallback = c->fallback;
	c->fallback = NULL; /* its own list is proven with it */
	const char *deep = rw_nesting_too_deep(c);
	if (deep) {
		c->obs = all;
		c->fallback_obs = fb;
		c->fallback = fallback;
		k->fail = -1;
		k->fail_reason = arena_printf(a, "not supported: %s", deep);
		return false;
	}
	rw_loop_wrap_obligations(c);
	fresh = c->obs;
	drop_known_facts(k->s, &fresh);
	c->obs = all;
	c->fallback_obs = fb;
	c->fallback = fallback;
	return prove_list(k, &fresh, c->func, c->out);
}

bool sched_prove(Compound *k, const ObligationList *obs, const Func *before,
		 const Func *after)
{
	RwCtx c;
	memset(&c, 0, sizeof c);
	c.arena = k->s->arena;
	c.func = before;
	c.module = k->s->mod;
	c.float_mode = k->s->float_mode;
	c.desc = k->r->desc;
	c.out = (Func *)after;
	/* the sub-rewrite's own obligations first: a candidate that fails
	 * them needs no walk of the whole function for loop.no_wrap; the
	 * loops of one (before, after) pair are looked at once */
	if (!prove_list(k, obs, before, after))
		return false;
	/* after not built yet: its loop.no_wrap comes when it is */
	if (!after || (k->wrap_before == before && k->wrap_after == after))
		return true;
	/* before is the last pair's proven result (the previous commit):
	 * only after's loops are new */
	if (k->wrap_after == before)
		c.func = after;
	if (!prove_no_wrap(k, &c))
		return false;
	k->wrap_before = before;
	k->wrap_after = after;
	return true;
}

/* The first sub-rewrite results of a call are verified one by one (a
 * malformed one is the call's failure, so no later sub-rewrite starts from
 * it); past this many, only the call's result is, at sched_compound_end:
 * verifying each of 4000 sub-rewrites of a 4000-statement function costs
 * as much as their proofs. Every committed call is verified either way. */
#define SUB_VERIFY_BUDGET 64

/* commit_verified for a sub-rewrite */
static bool sub_verified(Compound *k, const RwCtx *c)
{
	if (k->nverified >= SUB_VERIFY_BUDGET)
		return true;
	k->nverified++;
	const char *bad = ir_verify_changed(k->s->arena, k->s->mod, c->module);
	if (!bad)
		return true;
	k->s->mod = (Module *)c->module;
	k->fail = -1;
	k->fail_reason = bad;
	return false;
}

RwStatus sched_sub_finish(Compound *k, RwCtx *c, RwStatus st, bool *proven)
{
	Schedule *s = k->s;
	*proven = false;
	switch (st) {
	case RW_OK:
		break;
	case RW_BAD_INPUT:
		k->fail = -1;
		k->fail_reason = diag_text(s->arena, c->diag);
		return st;
	case RW_PRECONDITION:
		k->fail = -1;
		k->fail_reason = arena_printf(s->arena, "precondition: %s", diag_text(s->arena, c->diag));
		return st;
	case RW_UNSUPPORTED:
		k->fail = -1;
		k->fail_reason = arena_printf(s->arena, "not supported: %s", diag_text(s->arena, c->diag));
		return st;
	}
	const char *opq = c->opaque_ok ? NULL : sched_opaque_refusal(s->arena, c->func, c->desc);
	if (opq) {
		k->fail = -1;
		k->fail_reason = arena_printf(s->arena, "not supported: %s", opq);
		return RW_UNSUPPORTED;
	}
	if (!prove_no_wrap(k, c) || !prove_list(k, &c->obs, c->func, c->out)) {
		/* split with tail=guard: the guarded form needs only its own
		 * proofs (as in sched_finish) */
		if (!c->fallback)
			return st;
		Func *out = c->out;
		c->out = c->fallback;
		bool fb = prove_no_wrap(k, c);
		c->out = out;
		if (!fb || !prove_list(k, &c->fallback_obs, c->func, c->fallback))
			return st;
		set_func(s, c->fallback);
		if (!sub_verified(k, c))
			return st;
		if (c->fallback_note)
			sched_compound_note(k, "%s", c->fallback_note);
		k->nsub++;
		*proven = true;
		return st;
	}
	if (c->reject_after) {
		k->fail = -1;
		k->fail_reason = arena_printf(s->arena, "not supported: %s", c->reject_after);
		return st;
	}
	if (c->out_module)
		s->mod = c->out_module;
	else
		set_func(s, c->out);
	if (!sub_verified(k, c))
		return st;
	if (s->log)
		proof_log_rewrite(s->log, c->desc, c->func->name, "committed", c->note);
	if (c->note)
		sched_compound_note(k, "%s", c->note);
	k->nsub++;
	*proven = true;
	return st;
}

void sched_compound_set(Compound *k, Func *f)
{
	set_func(k->s, f);
	k->nsub++;
}

void sched_compound_note(Compound *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = arena_vprintf(k->s->arena, fmt, ap);
	va_end(ap);
	sb_printf(&k->notes, "%s%s", k->notes.n ? "; " : "", msg);
}

StepReport *sched_compound_end(Compound *k, StepStatus st, const char *reason)
{
	Schedule *s = k->s;
	StepReport *r = k->r;
	Arena *a = s->arena;
	char *notes = k->notes.n ? sb_take(&k->notes) : NULL;
	if (notes) {
		r->note = arena_strdup(a, notes);
		free(notes);
	}
	/* a function nested deeper than the walks follow: the step's search
	 * for candidates stopped early too; not supported, whatever it found */
	RwCtx whole = {.arena = a, .func = module_find_func(k->start, r->func)};
	const char *deep = whole.func ? rw_nesting_too_deep(&whole) : NULL;
	if (deep) {
		st = STEP_REJECTED;
		k->fail = -1;
		reason = arena_printf(a, "not supported: %s", deep);
	}
	/* a step that changed a function with an opaque call: only the
	 * order-preserving ones may (sched_opaque_refusal) */
	if (st == STEP_COMMITTED && s->mod != k->start && !k->opaque_ok) {
		const char *opq = sched_opaque_refusal(a, module_find_func(k->start, r->func), r->desc);
		if (opq) {
			st = STEP_REJECTED;
			k->fail = -1;
			reason = arena_printf(a, "not supported: %s", opq);
		}
	}
	/* steps set without a proof (sched_compound_set) are verified too */
	const char *bad = st == STEP_COMMITTED ? ir_verify_changed(a, s->mod, k->start) : NULL;
	if (bad) {
		st = STEP_REJECTED;
		k->fail = -1;
		reason = bad;
	}
	/* steps set without a proof (structural clean-ups) are covered
	 * too: no loop of the result wraps */
	for (int i = 0; st == STEP_COMMITTED && s->mod != k->start && i < s->mod->nfuncs; i++) {
		const Func *g = s->mod->funcs[i], *g0 = module_find_func(k->start, g->name);
		if (g == g0)
			continue;
		RwCtx c;
		memset(&c, 0, sizeof c);
		c.arena = a;
		c.func = g0 ? g0 : g;
		c.module = s->mod;
		c.float_mode = s->float_mode;
		c.desc = r->desc;
		c.out = (Func *)g;
		if (!prove_no_wrap(k, &c))
			st = STEP_REJECTED;
	}
	r->status = st;
	if (st == STEP_COMMITTED) {
		log_step(s, r);
		return r;
	}
	s->mod = k->start;
	r->reason = reason ? reason : (k->fail_reason ? k->fail_reason : "rejected");
	if (k->fail >= 0 && st == STEP_REJECTED) {
		r->failed = k->fail;
		const ObligationResult *res = &r->results[k->fail];
		if (res->verdict == VERDICT_REFUTED) {
			ReplayOutcome ro;
			r->counterexample = replay_explain(a, s->solver, r->obs[k->fail], res,
							   k->fail_before, k->fail_after,
							   s->float_mode, s->replay_seed, &ro);
			r->code_diff = code_diff(a, k->fail_before, k->fail_after);
			r->replay = ro.status;
			r->replay_text = ro.text;
		}
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

/* One hint per obligation kind (by its primitive or its whole name): what
 * a user can change so the step is provable, or what to do instead. */
static const struct {
	const char *kind; /* "split.divisible", or "parallel." for a family */
	const char *hint;
} fix_hints[] = {
	{"split.divisible", "keep a guard (tail=\"guard\", the default) or cut the remainder (tail=\"cut\"), or state the size with T.assume(n % F == 0)"},
	{"split.factors_cover", "let one factor be None so the product covers the extent"},
	{"parallel.", "keep the loop serial, or give each iteration its own cells (split the reduction out with rfactor, or stage with cache_write)"},
	{"vectorize.", "vectorize a loop whose iterations touch different cells, or keep it serial"},
	{"reorder.", "a dependence crosses the new order: keep this order, or reorder loops the dependence does not cross"},
	{"fission.", "the two parts depend on each other across iterations: split the loop at another statement, or not at all"},
	{"merge.", "the merged loops would run dependent statements in another order: merge loops that are independent"},
	{"skew.", "choose a skew whose map is invertible over the iteration domain"},
	{"fuse.", "fuse loops with non-negative extents whose product fits in the index type (T.assume the bounds)"},
	{"overcompute.", "pad with a value (transform_layout(..., pad_value=...)) so the extra instances are harmless, or keep the branch (strict=False)"},
	{"layout.", "give an index map that is injective and stays in the physical shape, or pass inverse= explicitly"},
	{"compute_at.", "compute at an outer loop, or make the producer cover exactly what each consumer iteration reads"},
	{"reverse_compute_at.", "attach the consumer to an outer loop, or under a loop whose iterations each produce what it reads"},
	{"cache.", "stage a region every consumer iteration reads after the producer wrote it, or cache at another block"},
	{"decompose.", "decompose at a loop above every reduction loop of the block"},
	{"reindex.", "give an index map that keeps the cells the block touches apart, or reindex a block whose guards keep its reads inside the buffer's initialised cells"},
	{"merge_conditionals.", "merge conditions that are identical or complementary where they are evaluated"},
	{"simplify.", "add a T.assume that states the fact the simplification needs"},
	{"hoist.", "hoist out of a loop whose condition does not depend on it"},
	{"unroll.", "unroll or vectorize a loop whose extent is a constant (split it first)"},
	{"vectorize.constant_extent", "split the loop with a constant inner factor first"},
	{"safety.", "state the bound or the nonzero divisor with T.assume, or guard the access"},
	{"loop.", "T.assume bounds that keep the loop variable inside its type"},
	{"tile.", "tile with factors that cover the extents"},
	{"reduce.", "narrow loops whose guard is a bound on the loop variable"},
	{"lift_alloc.", "keep the allocation inside the loop (fewer n_lifts), or have each iteration write every cell it reads before reading it"},
	{"specialize.", "specialize on a value the kernel's T.assume facts admit (specialize a size a fact ties to this one first)"},
};

static const char *fix_hint(const char *kind)
{
	const char *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < sizeof fix_hints / sizeof *fix_hints; i++) {
		size_t n = strlen(fix_hints[i].kind);
		bool family = fix_hints[i].kind[n - 1] == '.';
		if ((family ? strncmp(kind, fix_hints[i].kind, n) == 0
			    : strcmp(kind, fix_hints[i].kind) == 0) &&
		    n > best_len) {
			best = fix_hints[i].hint;
			best_len = n;
		}
	}
	return best;
}

/* A step's report: the verdict and why, the counterexample with the
 * violation said plainly, a hint at the fix, then every obligation once
 * (the refuted one's statement is the reason, not repeated), then the
 * replay. On a committed step a split obligation that is not proven was
 * a question the step asked to decide its form (a kept guard), not a
 * refutation: it is printed as decided (a refused simplify replacement
 * stays "refuted": the candidate was wrong, and the step kept the old
 * expression). */
char *sched_report_text(const StepReport *r)
{
	StrBuf b = {0};
	sb_printf(&b, "step %s on %s: %s\n", r->desc, r->func, status_word(r->status));
	if (r->reason)
		sb_printf(&b, "  reason: %s\n", r->reason);
	if (r->note)
		sb_printf(&b, "  note: %s\n", r->note);
	if (r->counterexample)
		sb_printf(&b, "%s", r->counterexample);
	if (r->code_diff)
		sb_printf(&b, "  code (- before, + after the step):\n%s", r->code_diff);
	bool failed = r->status != STEP_COMMITTED && r->failed >= 0 && r->failed < r->nobs;
	const char *hint = failed ? fix_hint(r->obs[r->failed]->kind) : NULL;
	if (hint)
		sb_printf(&b, "  hint: %s\n", hint);
	for (int i = 0; i < r->nobs; i++) {
		const ObligationResult *x = &r->results[i];
		const char *verdict = verdict_name(x->verdict);
		/* a kept guard: the step asked whether it could drop the guard */
		if (r->status == STEP_COMMITTED && x->verdict != VERDICT_PROVEN &&
		    (strncmp(r->obs[i]->kind, "split.", 6) == 0 || strstr(r->obs[i]->kind, ".decide")))
			verdict = "decided: no";
		const char *stmt = r->obs[i]->statement;
		if (failed && i == r->failed && r->reason && strstr(r->reason, stmt))
			stmt = "(the reason above)";
		sb_printf(&b, "  obligation %-22s %-10s %.3fs%s  %s\n", r->obs[i]->kind, verdict,
			  x->seconds, x->cached ? " (cached)" : "", stmt);
	}
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
	case REPLAY_SKIPPED:
		sb_printf(&b, "  replay: %s\n", r->replay_text ? r->replay_text : "skipped");
		break;
	}
	return sb_take(&b);
}
