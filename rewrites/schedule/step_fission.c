/* rewrites/schedule/step_fission.c — `sch.fission(outer, before=L)`, Exo's
 * fission with lifts: every loop from `outer` down to the loop whose body
 * holds L is fissioned just before the statement that holds L, innermost
 * first, each one a proven fission(X, after=K) (rw_fission_at,
 * fission.no_conflict) as a sub-rewrite of one compound call. The script
 * (run_prims.c) and the C API (vs_fission_before) both call it. */
#include "rewrites/schedule/steps.h"

#include <stdlib.h>

#include "rewrites/merge.h"
#include "rewrites/schedule/handles.h"

/* The loops from `outer` (level lev of lc's loops) down to L's may be
 * separated only by loops and statement sequences; L must have something
 * before it. RW_OK, or the failure recorded on c. */
static RwStatus check_lift(RwCtx *c, const StmtCtx *oc, const StmtCtx *lc, const char *outer,
			   const char *before, int *lev)
{
	*lev = -1;
	for (int i = 0; i < lc->nloops; i++)
		if (lc->loops[i] == oc->stmt)
			*lev = i;
	if (*lev < 0)
		return rw_fail(c, RW_PRECONDITION, c->call_span, "fission: loop '%s' is not inside loop '%s'",
			       before, outer);
	for (int d = oc->depth; d < lc->depth; d++) {
		const Stmt *x = an_stmt_at(c->func->body, lc->path, d);
		if (x->kind != ST_FOR && x->kind != ST_SEQ)
			return rw_fail(c, RW_UNSUPPORTED, x->span,
				       "fission: not supported: only loops and statement sequences may stand between loop '%s' and loop '%s' (a block, allocation, let or if is not lifted)",
				       outer, before);
	}
	const Stmt *parent = an_stmt_at(c->func->body, lc->path, lc->depth - 1);
	if (parent->kind != ST_SEQ || lc->path[lc->depth - 1] < 1)
		return rw_fail(c, RW_PRECONDITION, lc->stmt->span,
			       "fission: nothing stands before loop '%s' in the body around it: there is nothing to separate it from",
			       before);
	return RW_OK;
}

/* Fission the loop of `lifted` just before the statement holding L's loop
 * (Var lvar) in the compound's current function; *copy gets the second
 * loop's Var. STEP_COMMITTED (the sub-rewrite proven) or the call's end. */
static int lift_one(Compound *cp, const char *before, Var *lvar, Var *lifted, Var **copy)
{
	Arena *a = cp->s->arena;
	const Func *cur = sched_compound_func(cp);
	Stmt *ls = hv_find_loop(a, cur, lvar), *xs = hv_find_loop(a, cur, lifted);
	StmtCtx lx, xx;
	const char *why = "a loop to lift is not found once";
	const char *xref = xs ? hv_loop_ref(a, cur, lifted, &why) : NULL;
	if (!ls || !xref || !an_find_stmt(a, cur, ls, &lx) || !an_find_stmt(a, cur, xs, &xx))
		return sched_compound_end(cp, STEP_REJECTED, arena_printf(a, "not supported: %s", why))->status;
	if (lx.depth < xx.depth + 2 || xs->u.loop.body->kind != ST_SEQ)
		return sched_compound_end(cp, STEP_REJECTED,
					  arena_printf(a, "not supported: the body of loop '%s' is not a sequence holding loop '%s'",
						       xref, before))->status;
	int idx = lx.path[xx.depth + 1];
	RwCtx sub;
	sched_sub_begin(cp, &sub, arena_printf(a, "fission(\"%s\", after=%d)", xref, idx - 1));
	Stmt *second = NULL;
	RwStatus st = rw_fission_at(&sub, &xx, idx - 1, &second);
	bool proven;
	sched_sub_finish(cp, &sub, st, &proven);
	if (st != RW_OK || !proven)
		return sched_compound_end(cp, st == RW_BAD_INPUT ? STEP_BAD_INPUT : STEP_REJECTED, NULL)->status;
	*copy = second->u.loop.var;
	return STEP_COMMITTED;
}

int sched_fission_before(Schedule *s, const char *desc, Span span, DiagList *d, const char *outer,
			 const char *before, Var ***loops, int *nloops)
{
	Arena *a = s->arena;
	RwCtx c;
	sched_begin(s, &c, desc, span, d);
	StmtCtx oc, lc;
	int lev = -1;
	RwStatus st = rw_find_loop(&c, outer, &oc);
	if (st == RW_OK)
		st = rw_find_loop(&c, before, &lc);
	if (st == RW_OK)
		st = check_lift(&c, &oc, &lc, outer, before, &lev);
	if (st != RW_OK)
		return sched_finish(s, &c, st)->status;
	Var *lvar = lc.stmt->u.loop.var;
	int nlift = lc.nloops - lev;
	Var **copies = arena_alloc(a, sizeof(Var *) * (size_t)nlift);
	Compound cp;
	sched_compound_begin(s, &cp, desc, span, d);
	for (int j = nlift - 1; j >= 0; j--) {
		int r = lift_one(&cp, before, lvar, lc.loops[lev + j]->u.loop.var, &copies[j]);
		if (r != STEP_COMMITTED)
			return r;
	}
	/* the second nest's loops: the copies, then L's perfect chain */
	const Func *end = sched_compound_func(&cp);
	int n = nlift, cap = nlift + AN_MAX_DEPTH;
	Var **vars = arena_alloc(a, sizeof(Var *) * (size_t)(cap + 1));
	for (int j = 0; j < nlift; j++)
		vars[j] = copies[j];
	for (const Stmt *l = hv_find_loop(a, end, lvar); l && l->kind == ST_FOR && n < cap; l = l->u.loop.body)
		vars[n++] = l->u.loop.var;
	StrBuf names = {0};
	for (int j = 0; j < n; j++) {
		const char *why = NULL, *ref = hv_loop_ref(a, end, vars[j], &why);
		sb_printf(&names, "%s%s", j ? ", " : "", ref ? ref : vars[j]->name);
	}
	char *text = sb_take(&names);
	sched_compound_note(&cp, "%d loop%s lifted; the second nest's loops: %s", nlift, nlift == 1 ? "" : "s", text);
	free(text);
	int r = sched_compound_end(&cp, STEP_COMMITTED, NULL)->status;
	if (r == STEP_COMMITTED && loops) {
		*loops = vars;
		*nloops = n;
	}
	return r;
}
