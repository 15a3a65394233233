/* rewrites/annotate.c — parallel, vectorize and unroll: change a loop's
 * kind. Obligations for parallel and vectorize: for all i != j in the
 * loop's range, S(i) and S(j) commute, reductions included (a parallel
 * reduction races). vectorize and unroll need a constant extent. The race
 * check is shared with reorder, which re-proves it for a labelled loop
 * that moves to a place with other loops around it (proofs/parallel.md). */
#include "rewrites/rewrite.h"

#include <string.h>

void rw_race_obligations(RwCtx *c, const char *kind, const Obligation *base_in,
			 const Stmt *l)
{
	Arena *a = c->arena;
	Var *v = l->u.loop.var;
	Var *v1 = an_fresh_var(a, v, "_1"), *v2 = an_fresh_var(a, v, "_2");
	Expr *r1 = ir_varref(a, v1, (Span){0}), *r2 = ir_varref(a, v2, (Span){0});
	Obligation *base = obligation_new(a, kind, "", base_in->nvars, base_in->vars,
					  base_in->nhyps, base_in->hyps, ir_bool(a, true), l->span);
	obligation_add_var(a, base, v1);
	obligation_add_var(a, base, v2);
	obligation_add_hyp(a, base, an_loop_range(a, l, r1));
	obligation_add_hyp(a, base, an_loop_range(a, l, r2));
	/* each unordered pair once: i1 < i2, accesses of both in every order */
	obligation_add_hyp(a, base, ir_bin(a, OP_LT, r1, r2, (Span){0}));
	Buffer **vol;
	int nvol = an_written_buffers(a, l, &vol);
	AccessList p, q;
	memset(&p, 0, sizeof p);
	memset(&q, 0, sizeof q);
	an_collect_accesses(c->arena, l->u.loop.body, 1, &v, &r1, nvol, vol, &p);
	an_collect_accesses(c->arena, l->u.loop.body, 1, &v, &r2, nvol, vol, &q);
	an_name_instance(a, &p, "_1");
	an_name_instance(a, &q, "_2");
	rw_commute_obligations(c, kind, "two different iterations run at once without a race",
			       base, &p, &q, false);
}

static RwStatus annotate(RwCtx *c, const char *loop, ForKind kind, bool check_races,
			 bool need_const)
{
	Arena *a = c->arena;
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return st;
	Stmt *l = sc.stmt;
	int64_t ext;
	if (need_const && !an_const_int(l->u.loop.extent, &ext))
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "%s: loop '%s' needs a constant extent (split it first)",
			       for_kind_name(kind), l->u.loop.var->name);
	if (check_races) {
		Obligation *base = obligation_new(a, "parallel.no_race", "", 0, NULL, 0, NULL,
						  ir_bool(a, true), l->span);
		rw_add_context_hyps(c, base, &sc);
		rw_race_obligations(c, kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race",
				    base, l);
	}
	Stmt *nl = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, kind,
			  l->u.loop.body, l->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, nl));
	return RW_OK;
}

RwStatus rw_parallel(RwCtx *c, const char *loop)
{
	return annotate(c, loop, FOR_PARALLEL, true, false);
}

RwStatus rw_vectorize(RwCtx *c, const char *loop)
{
	return annotate(c, loop, FOR_VECTORIZED, true, true);
}

RwStatus rw_unroll(RwCtx *c, const char *loop)
{
	c->opaque_ok = true; /* a loop kind that keeps the order */
	return annotate(c, loop, FOR_UNROLLED, false, true);
}
