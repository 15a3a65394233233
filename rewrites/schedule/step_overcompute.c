/* rewrites/schedule/step_overcompute.c — the overcompute calls
 * (remove_branching_through_overcompute, remove_overcompute_through_
 * branching, remove_no_op) as compound calls: every candidate of
 * rewrites/overcompute.c in turn, its plan's safety proven, then each
 * store dead or a no-op; a candidate is committed once proven. */
#include "rewrites/schedule/steps.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/facts.h"
#include "kernel/ptrmap.h"
#include "rewrites/overcompute.h"
#include "rewrites/simplify.h"

/* One candidate: safety, then each store dead (where a later stage could
 * overwrite it) or else a no-op. The last failure is the tentative one. */
static bool prove_plan(Compound *k, const Func *before, const OcPlan *plan, bool no_dead)
{
	if (!sched_prove(k, &plan->safety, before, plan->out))
		return false;
	for (int i = 0; i < plan->nstores; i++) {
		const OcStorePlan *sp = &plan->stores[i];
		bool dead = false;
		for (int j = 0; j < sp->ndead && !dead && !no_dead; j++)
			dead = sched_prove(k, &sp->dead[j], before, plan->out);
		if (dead)
			continue;
		if (sp->noop_hopeless)
			return false;
		if (!sched_prove(k, &sp->noop, before, plan->out))
			return false;
	}
	return true;
}

static int overcompute_with(Schedule *s, const char *desc, Span span, DiagList *d,
			    const OcArgs *args, FactCache *facts, PtrMap *tried)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	int done = 0, kept = 0, preguarded = -1;
	/* The candidates are collected again only when a commit changed the
	 * function (never for remove_no_op); while it stays the same, the
	 * next one in the list is taken (a scan of all of them per candidate made the call quadratic
	 * in time and in arena memory). */
	OcCandidates cs;
	memset(&cs, 0, sizeof cs);
	const Func *listed = NULL;
	int cursor = 0;
	for (;;) {
		RwCtx c;
		sched_sub_begin(&k, &c, desc);
		c.facts = facts;
		/* remove_no_op's commits replace one store by `pass` and keep
		 * every other statement: the list stays valid */
		if (listed != c.func && !(listed && args->remove_stores)) {
			RwStatus st = args->remove_stores ? rw_store_candidates(&c, args->block, &cs)
				      : args->add_branches
					      ? rw_padded_store_candidates(&c, args->block, &cs)
					      : rw_overcompute_candidates(&c, args->block, args->loop, &cs);
			if (st != RW_OK) {
				bool proven;
				sched_sub_finish(&k, &c, st, &proven);
				return sched_compound_end(&k, st == RW_BAD_INPUT ? STEP_BAD_INPUT
									 : STEP_REJECTED,
							  NULL)->status;
			}
			listed = c.func;
			cursor = 0;
		}
		if (preguarded < 0)
			preguarded = cs.guarded;
		const Stmt *next = NULL;
		uintptr_t seen;
		for (; cursor < cs.n && !next; cursor++)
			if (!ptrmap_get(tried, cs.items[cursor], &seen))
				next = cs.items[cursor];
		if (!next)
			break;
		RwStatus st;
		if (!ptrmap_put(tried, next, 1))
			abort();
		OcPlan plan;
		st = args->remove_stores  ? rw_remove_store_plan(&c, next, &plan)
		     : args->add_branches ? rw_branch_plan(&c, next, &plan)
					  : rw_overcompute_plan(&c, next, &plan, true);
		bool ok = false;
		if (st == RW_OK && plan.hopeless) {
			ok = false; /* nothing names its cell: no proof can remove it */
		} else if (st == RW_OK) {
			ok = prove_plan(&k, c.func, &plan, args->no_dataflow);
			if (!ok && plan.alternative &&
			    prove_plan(&k, c.func, plan.alternative, args->no_dataflow)) {
				plan = *plan.alternative;
				ok = true;
			}
		} else {
			bool proven;
			sched_sub_finish(&k, &c, st, &proven);
			if (st == RW_BAD_INPUT)
				return sched_compound_end(&k, STEP_BAD_INPUT, NULL)->status;
		}
		if (ok && !plan.out) {
			/* remove_no_op: the result, built now, needs its loops
			 * proven not to wrap as every result does */
			ObligationList none = {0};
			plan.out = rw_remove_store_result(&c, &plan);
			ok = sched_prove(&k, &none, c.func, plan.out);
		}
		if (ok) {
			sched_compound_set(&k, plan.out);
			done++;
			continue;
		}
		if (args->strict)
			return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
		kept++;
		if (!args->remove_stores) /* most stores are not no-ops: no note each */
			sched_compound_note(&k, "%s at line %d kept: %s",
					    args->add_branches ? "store" : "branch", next->span.line,
					    k.fail_reason ? k.fail_reason : "not proven");
	}
	const char *what = args->remove_stores ? "no-op or dead stores removed"
			   : args->add_branches ? "stores guarded" : "branches removed";
	if (preguarded > 0)
		sched_compound_note(&k, "%d store%s already under %s pad test left as %s",
				    preguarded, preguarded == 1 ? "" : "s", preguarded == 1 ? "its" : "their",
				    preguarded == 1 ? "it is" : "they are");
	if (!done && !kept)
		sched_compound_note(&k, "no candidate %s in scope",
				    args->remove_stores ? "store"
				    : args->add_branches ? "store to a padded buffer" : "branch around a store");
	else
		sched_compound_note(&k, "%d %s", done, what);
	k.fail = args->strict ? k.fail : -1;
	int cleaned = 0;
	while (args->remove_stores && cleaned < 10000) {
		/* `T.evaluate(0)`, and the empty branches, loops, allocations
		 * and lets it and the removed stores leave: no observable effect */
		Func *out = rw_noop_cleanup(s->arena, sched_compound_func(&k));
		if (!out)
			break;
		sched_compound_set(&k, out);
		cleaned++;
	}
	if (cleaned)
		sched_compound_note(&k, "%d statement%s without effect removed", cleaned,
				    cleaned == 1 ? "" : "s");
	if (args->remove_stores && done) {
		/* the removed stores leave `pass`, empty branches and loops */
		sched_simplify_in(&k, "remove_no_op: clean-up", false, true, NULL, 0);
	}
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}

int sched_overcompute(Schedule *s, const char *desc, Span span, DiagList *d,
		      const OcArgs *args)
{
	FactCache *facts = an_fact_cache_new(s->arena);
	PtrMap tried = {0}; /* candidates tried: each once */
	int st = overcompute_with(s, desc, span, d, args, facts, &tried);
	ptrmap_free(&tried);
	an_fact_cache_free(facts);
	return st;
}
