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

int sched_simplify_in(Compound *k, const char *desc, bool use_facts, bool cleanups,
		      const int *prefix, int prefix_depth)
{
	Schedule *s = k->s;
	Arena *a = s->arena;
	Func *f = sched_compound_func(k);
	SimplifyCandidates col;
	rw_simplify_candidates(a, f, s->float_mode, use_facts, prefix, prefix_depth, &col);
	int applied = 0, kept = 0;
	for (int i = 0; i < col.n; i++) {
		const SimplifyCandidate *cand = &col.items[i];
		FactSet fs;
		memset(&fs, 0, sizeof fs);
		if (use_facts)
			an_facts_for(a, f, &cand->ctx, true, NULL, col.facts, cand->ctx.stmt, &fs);
		if (replace_logged(k, desc, cand, &fs))
			applied++;
		else
			kept++;
	}
	an_fact_cache_free(col.facts);
	int cleaned = 0;
	while (cleanups && cleaned < 10000) {
		Func *out = rw_simplify_cleanup(a, sched_compound_func(k));
		if (!out)
			break;
		sched_compound_set(k, out);
		cleaned++;
	}
	/* a pass inside another step that found nothing says nothing */
	if (applied || kept || cleaned)
		sched_compound_note(k, "simplify: %d replacement%s proven and applied, %d not proven (kept), %d structural clean-up%s",
				    applied, applied == 1 ? "" : "s", kept, cleaned, cleaned == 1 ? "" : "s");
	k->fail = -1; /* unproven candidates are skipped, not failures */
	return applied + kept + cleaned;
}

int sched_simplify(Schedule *s, const char *desc, Span span, DiagList *d, bool use_facts,
		   bool cleanups)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	if (!sched_simplify_in(&k, desc, use_facts, cleanups, NULL, 0))
		sched_compound_note(&k, "simplify: nothing to simplify");
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
