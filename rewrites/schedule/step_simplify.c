/* rewrites/schedule/step_simplify.c — `sch.simplify` as a compound call,
 * and the same pass inside other compound calls: every candidate
 * replacement of rw_simplify_candidates proven (simplify.equal) and
 * applied one by one, unproven ones kept; then the structural clean-ups
 * (rw_simplify_cleanup), which need no obligation. */
#include "rewrites/schedule/steps.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/facts.h"
#include "rewrites/simplify.h"
#include "smt/smt.h"

/* The candidate's rewrites (its log) proven, then applied. */
static bool replace_logged(Compound *k, const char *desc, const SimplifyCandidate *cand,
			   const FactSet *fs)
{
	Arena *a = k->s->arena;
	RwCtx c;
	sched_sub_begin(k, &c, desc);
	FactSet none;
	memset(&none, 0, sizeof none);
	ObligationList obs = {0};
	oblist_push(a, &obs, rw_simplify_equal_obligation(&c, cand, fs ? fs : &none));
	/* replace in the current function */
	Func *cur = sched_compound_func(k);
	Func *out = rw_simplify_replaced(a, cur, &cand->ctx, cand->slot, cand->new);
	if (!out)
		return false;
	if (!sched_prove(k, &obs, cur, out))
		return false;
	sched_compound_set(k, out);
	return true;
}

bool sched_simplify_replace(Compound *k, const char *desc, const StmtCtx *ctx, int slot,
			    Expr *old, Expr *new, const FactSet *fs)
{
	/* no log: the whole old == new is the obligation */
	SimplifyCandidate cand = {*ctx, slot, old, new, {0}};
	return replace_logged(k, desc, &cand, fs);
}

/* The structural clean-ups, until none applies; how many. */
static int cleanup_all(Compound *k)
{
	int n = 0;
	while (n < 10000) {
		Func *out = rw_simplify_cleanup(k->s->arena, sched_compound_func(k));
		if (!out)
			break;
		sched_compound_set(k, out);
		n++;
	}
	return n;
}

typedef struct PassCount {
	int applied, kept, cleaned;
} PassCount;

/* The candidates of the simplifier proven and applied, then (with
 * cleanups) the clean-ups; counted, not noted. */
static void simplify_pass(Compound *k, const char *desc, bool use_facts, bool cleanups,
			  const int *prefix, int prefix_depth, PassCount *pc)
{
	Schedule *s = k->s;
	Arena *a = s->arena;
	Func *f = sched_compound_func(k);
	SimplifyCandidates col;
	rw_simplify_candidates(a, f, s->float_mode, use_facts, prefix, prefix_depth, &col);
	memset(pc, 0, sizeof *pc);
	for (int i = 0; i < col.n; i++) {
		const SimplifyCandidate *cand = &col.items[i];
		FactSet fs;
		memset(&fs, 0, sizeof fs);
		if (use_facts)
			an_facts_for(a, f, &cand->ctx, true,
				     cand->ctx.nloops == 0 ? cand->ctx.stmt : NULL, col.facts,
				     cand->ctx.stmt, &fs);
		if (replace_logged(k, desc, cand, &fs))
			pc->applied++;
		else
			pc->kept++;
	}
	an_fact_cache_free(col.facts);
	if (cleanups)
		pc->cleaned = cleanup_all(k);
	k->fail = -1; /* unproven candidates are skipped, not failures */
}

static void note_pass(Compound *k, const PassCount *pc)
{
	sched_compound_note(k, "simplify: %d replacement%s proven and applied, %d not proven (kept), %d structural clean-up%s",
			    pc->applied, pc->applied == 1 ? "" : "s", pc->kept, pc->cleaned,
			    pc->cleaned == 1 ? "" : "s");
}

int sched_simplify_in(Compound *k, const char *desc, bool use_facts, bool cleanups,
		      const int *prefix, int prefix_depth)
{
	PassCount pc;
	simplify_pass(k, desc, use_facts, cleanups, prefix, prefix_depth, &pc);
	/* a pass inside another step that found nothing says nothing */
	if (pc.applied || pc.kept || pc.cleaned)
		note_pass(k, &pc);
	return pc.applied + pc.kept + pc.cleaned;
}

/* ---------- decisions ---------- */

/* Proposed decisions per call at most: each is one small query, but a
 * function of thousands of conditions should not cost thousands. */
#define DECIDE_BUDGET 600
/* Subterms of one expression tried at most. */
#define DECIDE_PER_SLOT 24

typedef struct Decider {
	Compound *k;
	const char *desc;
	const SimplifyOptions *o;
	int budget, applied;
} Decider;

static bool proven_quietly(Compound *k, Obligation *o)
{
	ObligationResult probe;
	smt_discharge_all(k->s->solver, k->s->arena, 1, &o, k->s->float_mode, &probe);
	return probe.verdict == VERDICT_PROVEN;
}

/* The facts that hold when the outermost loop around ctx's statement
 * starts, its own writes left out (they are simplify.unwritten's), with
 * fs; false if none is new. */
static bool facts_at_loop_start(Arena *a, const Func *f, const StmtCtx *ctx, const Stmt *at,
				const FactSet *fs, FactSet *out)
{
	const Stmt *L = ctx->loops[0];
	int lo = rw_loop_depth(f->body, ctx, L);
	if (lo < 0)
		return false;
	StmtCtx lc;
	memset(&lc, 0, sizeof lc);
	lc.stmt = (Stmt *)L;
	lc.depth = lo;
	memcpy(lc.path, ctx->path, sizeof(int) * (size_t)lo);
	FactSet fl;
	an_facts_for(a, f, &lc, true, L, NULL, at, &fl);
	*out = *fs;
	out->items = NULL;
	out->n = out->cap = 0;
	for (int i = 0; i < fs->n; i++) {
		VEC_RESERVE(a, out->items, out->n, out->cap);
		out->items[out->n++] = fs->items[i];
	}
	bool fresh = false;
	for (int i = 0; i < fl.n; i++) {
		bool seen = false;
		for (int j = 0; j < fs->n && !seen; j++)
			seen = fs->items[j] == fl.items[i];
		if (seen)
			continue;
		VEC_RESERVE(a, out->items, out->n, out->cap);
		out->items[out->n++] = fl.items[i];
		fresh = true;
	}
	return fresh;
}

/* sub -> its choice v in expression `slot` of the statement at path,
 * proven and applied: with the facts usable at the statement, or else,
 * inside a loop, with those at the loop's start and simplify.unwritten. */
static bool try_decision(Decider *dc, const int *path, int depth, int slot, int idx, int v)
{
	Compound *k = dc->k;
	Arena *a = k->s->arena;
	Func *cur = sched_compound_func(k);
	Stmt *at = an_stmt_at(cur->body, path, depth);
	StmtCtx ctx;
	if (!at || !an_find_stmt(a, cur, at, &ctx))
		return false;
	Expr *old = rw_simplify_slot(at, slot);
	Expr *sub = old ? rw_bool_subterm(old, idx) : NULL;
	if (!sub)
		return false;
	ArithLog fold = {0};
	Expr *new = rw_bool_subterm_decided(a, old, idx, v, k->s->float_mode, &fold);
	if (!new)
		return false;
	FactSet fs;
	memset(&fs, 0, sizeof fs);
	if (dc->o->knowns_conditions)
		/* outside every loop, the statement's expressions are
		 * evaluated before its own writes: those do not count */
		an_facts_for(a, cur, &ctx, true, ctx.nloops == 0 ? at : NULL, NULL, at, &fs);
	Func *out = rw_simplify_replaced(a, cur, &ctx, slot, new);
	if (!out)
		return false;
	RwCtx c;
	sched_sub_begin(k, &c, dc->desc);
	bool whole = dc->o->branch_constraints || dc->o->and_of_ors;
	ObligationList obs = {0};
	Obligation *o = rw_simplify_decide_obligation(&c, &ctx, old, new, idx, v, &fold, whole,
						      dc->o->transitive, &fs);
	/* most proposals are wrong (each subterm is offered both ways): ask
	 * quietly first, so that the report lists the decisions made */
	if (proven_quietly(k, o)) {
		oblist_push(a, &obs, o);
	} else {
		FactSet both;
		if (!dc->o->knowns_conditions || ctx.nloops == 0 ||
		    !facts_at_loop_start(a, cur, &ctx, at, &fs, &both))
			return false;
		o = rw_simplify_decide_obligation(&c, &ctx, old, new, idx, v, &fold, whole,
						  dc->o->transitive, &both);
		Obligation *u = rw_simplify_unwritten_obligation(&c, &ctx, o);
		if (!u || !proven_quietly(k, o) || !proven_quietly(k, u))
			return false;
		oblist_push(a, &obs, o);
		oblist_push(a, &obs, u);
	}
	if (!sched_prove(k, &obs, cur, out))
		return false;
	sched_compound_set(k, out);
	return true;
}

typedef struct SlotRef {
	int path[AN_MAX_DEPTH];
	int depth, nslots;
} SlotRef;

typedef struct SlotList {
	Arena *a;
	int n, cap;
	SlotRef *items;
} SlotList;

static void list_slots(void *ud, Stmt *s, const StmtCtx *ctx)
{
	SlotList *l = ud;
	int n = 0;
	while (rw_simplify_slot(s, n))
		n++;
	if (!n || s->kind == ST_ASSUME)
		return;
	VEC_RESERVE(l->a, l->items, l->n, l->cap);
	SlotRef *r = &l->items[l->n++];
	memcpy(r->path, ctx->path, sizeof(int) * (size_t)ctx->depth);
	r->depth = ctx->depth;
	r->nslots = n;
}

/* Every decidable subterm of one expression, outermost first, each
 * once: after a decision the (smaller) expression goes on from the same
 * position, which now holds what came after the decided subterm. */
static void decide_slot(Decider *dc, const SlotRef *r, int slot)
{
	int tried = 0;
	for (int idx = 0; tried < DECIDE_PER_SLOT && dc->budget > 0;) {
		Stmt *at = an_stmt_at(sched_compound_func(dc->k)->body, r->path, r->depth);
		Expr *e = at ? rw_simplify_slot(at, slot) : NULL;
		if (!e || !rw_bool_subterm(e, idx))
			return;
		tried++;
		bool done = false;
		for (int v = 1; v >= 0 && !done && dc->budget > 0; v--) {
			dc->budget--;
			done = try_decision(dc, r->path, r->depth, slot, idx, v);
		}
		if (done)
			dc->applied++;
		else
			idx++;
	}
}

static int decide_all(Compound *k, const char *desc, const SimplifyOptions *o)
{
	Arena *a = k->s->arena;
	SlotList l = {a, 0, 0, NULL};
	an_walk(a, sched_compound_func(k), list_slots, &l);
	Decider dc = {k, desc, o, DECIDE_BUDGET, 0};
	for (int i = 0; i < l.n && dc.budget > 0; i++)
		for (int slot = 0; slot < l.items[i].nslots; slot++)
			decide_slot(&dc, &l.items[i], slot);
	return dc.applied;
}

/* Every boolean expression as an and of ors, each proven equal. */
static int and_of_ors_all(Compound *k, const char *desc)
{
	Arena *a = k->s->arena;
	SlotList l = {a, 0, 0, NULL};
	an_walk(a, sched_compound_func(k), list_slots, &l);
	int n = 0;
	for (int i = 0; i < l.n; i++)
		for (int slot = 0; slot < l.items[i].nslots; slot++) {
			Func *cur = sched_compound_func(k);
			Stmt *at = an_stmt_at(cur->body, l.items[i].path, l.items[i].depth);
			Expr *e = at ? rw_simplify_slot(at, slot) : NULL;
			Expr *r = e ? rw_and_of_ors(a, e) : NULL;
			StmtCtx ctx;
			if (r && an_find_stmt(a, cur, at, &ctx))
				n += sched_simplify_replace(k, desc, &ctx, slot, e, r, NULL);
		}
	return n;
}

int sched_simplify_with(Schedule *s, const char *desc, Span span, DiagList *d,
			const SimplifyOptions *o)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	PassCount pc, again;
	simplify_pass(&k, desc, o->knowns_expressions, false, NULL, 0, &pc);
	int decided = decide_all(&k, desc, o), normal = 0;
	if (o->and_of_ors)
		normal = and_of_ors_all(&k, desc);
	if (decided || normal) {
		/* what the decisions left foldable (the candidates not proven
		 * before are tried again: count them once) */
		simplify_pass(&k, desc, o->knowns_expressions, false, NULL, 0, &again);
		pc.applied += again.applied;
		pc.kept = again.kept;
	}
	pc.cleaned = cleanup_all(&k);
	if (pc.applied || pc.kept || pc.cleaned)
		note_pass(&k, &pc);
	if (decided)
		sched_compound_note(&k, "simplify: %d subterm%s decided by %s context (simplify.decide)",
				    decided, decided == 1 ? "" : "s", decided == 1 ? "its" : "their");
	if (normal)
		sched_compound_note(&k, "simplify: %d boolean%s rewritten as an and of ors", normal,
				    normal == 1 ? "" : "s");
	if (!pc.applied && !pc.kept && !pc.cleaned && !decided && !normal)
		sched_compound_note(&k, "simplify: nothing to simplify");
	k.fail = -1;
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
