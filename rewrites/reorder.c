/* rewrites/reorder.c — reorder: permute loops of a perfect nest.
 * Preconditions: the named loops lie on one perfectly nested chain, no
 * loop moves above a loop whose variable its range mentions, and no range
 * of the chain reads a buffer the nest writes. Obligations
 * reorder.no_conflict: for all iterations p != q of the chain with
 * p <_old q and q <_new p, S(p) and S(q) commute (reduction updates with
 * the same associative-commutative operator commute in real mode). A
 * parallel or vectorized loop of the chain whose set of enclosing chain
 * loops changes gets its race check again where it lands
 * (parallel.no_race / vectorize.no_race; proofs/reorder.md). A range
 * that may fault and moves outside a loop that was around it is proven
 * safe to evaluate there (reorder.range_safe). */
#include "rewrites/rewrite.h"

#include <string.h>

#include "kernel/analysis/expr_query.h"

/* (x1, ..., xn) < (y1, ..., yn) lexicographically, in the given order */
static Expr *lex_less(Arena *a, int n, const int *order, Expr **x, Expr **y)
{
	Expr *result = NULL;
	for (int k = n - 1; k >= 0; k--) {
		int d = order[k];
		Expr *lt = ir_bin(a, OP_LT, x[d], y[d], (Span){0});
		if (!result) {
			result = lt;
			continue;
		}
		Expr *eq = ir_bin(a, OP_EQ, x[d], y[d], (Span){0});
		result = ir_or(a, lt, ir_and(a, eq, result));
	}
	return result;
}

/* One copy of the chain's iteration: fresh variables, their ranges. */
static void chain_copy(Arena *a, int n, Stmt **chain, const char *suffix,
		       Var **vars, Expr **refs, Obligation *base)
{
	Var *orig[AN_MAX_DEPTH];
	for (int d = 0; d < n; d++) {
		orig[d] = chain[d]->u.loop.var;
		vars[d] = an_fresh_var(a, orig[d], suffix);
		refs[d] = ir_varref(a, vars[d], (Span){0});
	}
	for (int d = 0; d < n; d++) {
		/* a range may mention outer chain variables: use this copy's */
		Expr *lo = ir_subst_expr(a, chain[d]->u.loop.min, d, orig, refs);
		Expr *ext = ir_subst_expr(a, chain[d]->u.loop.extent, d, orig, refs);
		obligation_add_var(a, base, vars[d]);
		/* named for the proof log: hyp_loop_i0_p, loop i0's copy p */
		const char *name = arena_printf(a, "hyp_loop_%s%s", orig[d]->name, suffix);
		obligation_add_named_hyp(a, base,
					 ir_and(a, ir_bin(a, OP_LE, lo, refs[d], (Span){0}),
						ir_bin(a, OP_LT, refs[d], ir_add(a, lo, ext), (Span){0})),
					 name);
	}
}

/* A parallel or vectorized label was proven for the loops around it: its
 * instances are "everything below it, for fixed values of the loops
 * above". If the chain loops above it at new depth d are the same set as
 * before, its instances are the same sets of iterations, merely run in
 * another order, and they still commute. Otherwise (a loop moved across
 * it) the race check is made again on the new nest. */
static void recheck_label(RwCtx *c, const StmtCtx *top, Stmt *const *chain,
			  const int *newpos, Stmt *const *nest, int d)
{
	Arena *a = c->arena;
	const Stmt *l = nest[d];
	if (l->u.loop.kind != FOR_PARALLEL && l->u.loop.kind != FOR_VECTORIZED)
		return;
	bool same_outer = newpos[d] == d;
	for (int e = 0; e < d && same_outer; e++)
		same_outer = newpos[e] < d;
	if (same_outer)
		return;
	const char *kind = l->u.loop.kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race";
	Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), l->span);
	rw_add_context_hyps(c, base, top);
	for (int e = 0; e < d; e++) {
		const Stmt *outer = chain[newpos[e]];
		obligation_add_var(a, base, outer->u.loop.var);
		obligation_add_hyp(a, base, an_loop_range(a, outer, ir_varref(a, outer->u.loop.var, (Span){0})));
	}
	rw_race_obligations(c, kind, base, l);
}

/* reorder.range_safe: the range of the loop placed at new depth d is
 * evaluated wherever its new outer loops run, also where a loop that was
 * outside it (and now is inside) runs no iteration, where the nest as
 * written never evaluated it. A range that may fault (a load, a divisor
 * that is not a non-zero literal) must be safe to evaluate there, or
 * those loops must run (red team: `for i in T.serial(T.min(m, 8)): for j
 * in T.serial(T.min(100 // m, 8))` reordered divided by zero at m = 0).
 * False (c's failure set) when neither can be stated. */
static bool range_safe_obligation(RwCtx *c, const StmtCtx *top, Stmt *const *chain, const int *newpos,
				  int n, int d)
{
	Arena *a = c->arena;
	const Stmt *l = chain[newpos[d]];
	Expr *runs = NULL;
	bool moved_in = false, runs_ok = true;
	for (int e = d + 1; e < n; e++) {
		const Stmt *x = chain[newpos[e]];
		if (newpos[e] > newpos[d])
			continue; /* inside it before too */
		moved_in = true;
		for (int k = 0; k < n; k++)
			runs_ok &= !ir_expr_uses_var(x->u.loop.extent, chain[k]->u.loop.var);
		runs = ir_and(a, runs, ir_bin(a, OP_GT, x->u.loop.extent,
					      ir_int(a, 0, x->u.loop.extent->dtype, (Span){0}), (Span){0}));
	}
	if (!moved_in || (!an_expr_may_fault(l->u.loop.min, true) && !an_expr_may_fault(l->u.loop.extent, true)))
		return true;
	Expr *lo = rw_safe_to_eval(a, c->func, l->u.loop.min);
	Expr *ext = rw_safe_to_eval(a, c->func, l->u.loop.extent);
	Expr *goal = lo && ext ? ir_and(a, lo, ext) : NULL;
	if (runs_ok)
		goal = goal ? ir_or(a, runs, goal) : runs;
	if (!goal) {
		rw_fail(c, RW_UNSUPPORTED, l->span,
			"reorder: not supported: the range of loop '%s' may fault (it reads a buffer that is not a parameter) and would be evaluated where a loop now inside it runs no iteration",
			l->u.loop.var->name);
		return false;
	}
	Obligation *o = obligation_new(a, "reorder.range_safe",
				       arena_printf(a, "the range of loop %s cannot fault where it now starts (reads inside their buffers, divisors not zero), or the loops moved inside it run",
						    l->u.loop.var->name),
				       0, NULL, 0, NULL, goal, l->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, top);
	for (int e = 0; e < d; e++) {
		const Stmt *outer = chain[newpos[e]];
		obligation_add_var(a, o, outer->u.loop.var);
		obligation_add_hyp(a, o, an_loop_range(a, outer, ir_varref(a, outer->u.loop.var, (Span){0})));
	}
	obligation_add_related(a, o, l->span);
	oblist_push(a, &c->obs, o);
	return true;
}

RwStatus rw_reorder(RwCtx *c, int nloops, const char *const *loops)
{
	Arena *a = c->arena;
	if (nloops < 1)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "reorder: name at least one loop");
	StmtCtx ctx[AN_MAX_DEPTH];
	if (nloops > AN_MAX_DEPTH)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "reorder: too many loops");
	int top = 0;
	for (int k = 0; k < nloops; k++) {
		RwStatus st = rw_find_loop(c, loops[k], &ctx[k]);
		if (st != RW_OK)
			return st;
		for (int m = 0; m < k; m++)
			if (ctx[m].stmt == ctx[k].stmt)
				return rw_fail(c, RW_BAD_INPUT, c->call_span,
					       "reorder: loop '%s' is named twice", loops[k]);
		if (ctx[k].depth < ctx[top].depth)
			top = k;
	}
	/* the perfect chain from the outermost named loop down */
	Stmt *chain[AN_MAX_DEPTH];
	int n = 0, found = 0, last = 0;
	for (Stmt *s = ctx[top].stmt; s->kind == ST_FOR && n < AN_MAX_DEPTH; s = s->u.loop.body) {
		chain[n] = s;
		for (int k = 0; k < nloops; k++)
			if (ctx[k].stmt == s) {
				found++;
				last = n;
			}
		n++;
	}
	if (found != nloops)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "reorder: the loops must form one perfectly nested chain under '%s' (a loop body holds more than one statement or a loop is elsewhere)",
			       loops[top]);
	n = last + 1;
	/* new[d] = index in chain of the loop placed at depth d */
	int newpos[AN_MAX_DEPTH], next = 0;
	for (int d = 0; d < n; d++) {
		newpos[d] = d;
		for (int k = 0; k < nloops; k++)
			if (ctx[k].stmt == chain[d]) {
				/* this slot holds the next named loop in the user's order */
				for (int m = 0; m < n; m++)
					if (chain[m] == ctx[next].stmt)
						newpos[d] = m;
				next++;
			}
	}
	for (int d = 0; d < n; d++)
		for (int e = d + 1; e < n; e++) {
			const Stmt *outer = chain[newpos[d]], *inner = chain[newpos[e]];
			Var *v = inner->u.loop.var;
			if (ir_expr_uses_var(outer->u.loop.extent, v) || ir_expr_uses_var(outer->u.loop.min, v))
				return rw_fail(c, RW_PRECONDITION, outer->span,
					       "reorder: the range of loop '%s' depends on '%s', which would move inside it",
					       outer->u.loop.var->name, v->name);
		}
	/* a range is read when its loop starts: moved, it would be read at
	 * other times, between other writes of the nest */
	for (int d = 0; d < n; d++)
		if (an_range_reads_written(a, chain[d], chain[0]))
			return rw_fail(c, RW_UNSUPPORTED, chain[d]->span,
				       "reorder: the range of loop '%s' reads a buffer that the nest writes",
				       chain[d]->u.loop.var->name);
	for (int d = 0; d < n; d++)
		if (!range_safe_obligation(c, &ctx[top], chain, newpos, n, d))
			return RW_UNSUPPORTED;
	/* obligation: swapped pairs of iterations commute */
	Obligation *base = obligation_new(a, "reorder.no_conflict", "", 0, NULL, 0, NULL,
					  ir_bool(a, true), chain[0]->span);
	rw_add_context_hyps(c, base, &ctx[top]);
	Var *pv[AN_MAX_DEPTH], *qv[AN_MAX_DEPTH];
	Expr *pr[AN_MAX_DEPTH], *qr[AN_MAX_DEPTH];
	chain_copy(a, n, chain, "_p", pv, pr, base);
	chain_copy(a, n, chain, "_q", qv, qr, base);
	int oldorder[AN_MAX_DEPTH];
	for (int d = 0; d < n; d++)
		oldorder[d] = d;
	obligation_add_named_hyp(a, base, lex_less(a, n, oldorder, pr, qr), "hyp_old_order_p_before_q");
	obligation_add_named_hyp(a, base, lex_less(a, n, newpos, qr, pr), "hyp_new_order_q_before_p");
	Stmt *body = chain[n - 1]->u.loop.body;
	Buffer **vol;
	int nvol = an_written_buffers(a, chain[0], &vol);
	Var *orig[AN_MAX_DEPTH];
	for (int d = 0; d < n; d++)
		orig[d] = chain[d]->u.loop.var;
	AccessList ap, aq;
	memset(&ap, 0, sizeof ap);
	memset(&aq, 0, sizeof aq);
	an_collect_accesses(c->arena, body, n, orig, pr, nvol, vol, &ap);
	an_collect_accesses(c->arena, body, n, orig, qr, nvol, vol, &aq);
	an_name_instance(a, &ap, "_p");
	an_name_instance(a, &aq, "_q");
	rw_commute_obligations(c, "reorder.no_conflict",
			       "iterations p before q in the old order and q before p in the new order commute",
			       base, &ap, &aq, true);
	/* the new nest, innermost first */
	Stmt *s = body, *nest[AN_MAX_DEPTH];
	for (int d = n - 1; d >= 0; d--) {
		const Stmt *l = chain[newpos[d]];
		s = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s,
			   l->span);
		nest[d] = s;
	}
	for (int d = 0; d < n; d++)
		recheck_label(c, &ctx[top], chain, newpos, nest, d);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, ctx[top].path,
							ctx[top].depth, s));
	return RW_OK;
}
