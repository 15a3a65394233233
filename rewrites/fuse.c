/* rewrites/fuse.c — fuse: for i in N: for j in M: S  ->  for k in N*M:
 * S[i := min_i + k // M, j := min_j + k % M]. Preconditions: the loops
 * are perfectly nested and M and min_j do not mention i. Obligation
 * fuse.nonneg_extents: N >= 0 and M >= 0 (with both negative, N*M would
 * be positive where the original runs nothing). */
#include "rewrite.h"

RwStatus rw_fuse(RwCtx *c, const char *outer, const char *inner, const char *fused_name)
{
	Arena *a = c->arena;
	StmtCtx so, si;
	RwStatus st = rw_find_loop(c, outer, &so);
	if (st == RW_OK)
		st = rw_find_loop(c, inner, &si);
	if (st != RW_OK)
		return st;
	Stmt *lo = so.stmt, *li = si.stmt;
	if (lo->u.loop.body != li)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "fuse: loop '%s' is not the only statement in the body of loop '%s' (the loops must be perfectly nested, outer first)",
			       inner, outer);
	Var *i = lo->u.loop.var, *j = li->u.loop.var;
	if (ir_expr_uses_var(li->u.loop.extent, i) || ir_expr_uses_var(li->u.loop.min, i))
		return rw_fail(c, RW_PRECONDITION, li->span,
			       "fuse: the range of loop '%s' depends on '%s'", j->name, i->name);
	Expr *n = lo->u.loop.extent, *m = li->u.loop.extent;
	int64_t nv, mv;
	if (!(rw_const_int(n, &nv) && nv >= 0 && rw_const_int(m, &mv) && mv >= 0)) {
		Expr *goal = ir_and(a, ir_bin(a, OP_GE, n, ir_int32(a, 0), (Span){0}),
				    ir_bin(a, OP_GE, m, ir_int32(a, 0), (Span){0}));
		Obligation *o = obligation_new(a, "fuse.nonneg_extents",
					       arena_printf(a, "the extents of loops %s and %s are not negative",
							    i->name, j->name),
					       0, NULL, 0, NULL, goal, lo->span);
		o->rewrite = c->desc;
		rw_add_context_hyps(c, o, &so);
		oblist_push(a, &c->obs, o);
	}
	Var *k = ir_var(a, fused_name ? fused_name : arena_printf(a, "%s_%s_fused", i->name, j->name),
			i->dtype, lo->span);
	Expr *kr = ir_varref(a, k, (Span){0});
	Var *from[2] = {i, j};
	Expr *to[2] = {
		rw_fold(a, ir_add(a, lo->u.loop.min, ir_bin(a, OP_FLOORDIV, kr, m, (Span){0}))),
		rw_fold(a, ir_add(a, li->u.loop.min, ir_bin(a, OP_FLOORMOD, kr, m, (Span){0}))),
	};
	Stmt *body = ir_subst_stmt(a, li->u.loop.body, 2, from, to);
	ForKind kind = lo->u.loop.kind == FOR_PARALLEL && li->u.loop.kind == FOR_PARALLEL
			       ? FOR_PARALLEL : FOR_SERIAL;
	Stmt *fused = ir_for(a, k, ir_int(a, 0, i->dtype, (Span){0}), rw_fold(a, ir_mul(a, n, m)),
			     kind, body, lo->span);
	c->out = rw_with_body(a, c->func, rw_replace_at(a, c->func->body, so.path, so.depth, fused));
	return RW_OK;
}
