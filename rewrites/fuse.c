/* rewrites/fuse.c — fuse: for i in N: for j in M: S  ->  for k in N*M:
 * S[i := min_i + k // M, j := min_j + k % M]. Preconditions: the loops
 * are perfectly nested, M and min_j do not mention i, and neither range
 * reads a buffer the nest writes. Obligations (proofs/fuse.md):
 * fuse.nonneg_extents: N >= 0 or M >= 0 (with both negative, N*M would
 * be positive where the original runs nothing; a literal extent >= 0
 * discharges it); fuse.no_overflow: N*M
 * fits the loop variable's dtype. */
#include "rewrites/rewrite.h"

#include "kernel/analysis/expr_query.h"

/* A fused loop keeps a label only when both loops had it: parallel or
 * vectorized pairs (i, j) != (i', j') commute because either i != i'
 * (outer label) or j != j' (inner label); a vectorized or unrolled loop
 * also needs its constant extent. */
static ForKind fused_kind(const Stmt *lo, const Stmt *li, Expr *extent)
{
	ForKind k = lo->u.loop.kind;
	int64_t n;
	if (k != li->u.loop.kind)
		return FOR_SERIAL;
	switch (k) {
	case FOR_SERIAL:
	case FOR_PARALLEL: return k;
	case FOR_VECTORIZED:
	case FOR_UNROLLED: return an_const_int(extent, &n) ? k : FOR_SERIAL;
	}
	return FOR_SERIAL;
}

/* fuse.no_overflow: k runs up to N*M - 1 and the extent N*M is computed
 * in the loop variable's dtype, where the nest computed neither. Written
 * M <= 0 or N <= MAX // M, which no integer encoding can overflow. */
static void no_overflow_obligation(RwCtx *c, const StmtCtx *so, Var *i, Var *j,
				   Expr *n, Expr *m)
{
	Arena *a = c->arena;
	DType t = i->dtype;
	int64_t max = an_dtype_max(t), nv, mv;
	if (an_const_int(n, &nv) && an_const_int(m, &mv) && (mv <= 0 || nv <= max / mv))
		return;
	Expr *lim = ir_int(a, max, t, (Span){0});
	Expr *goal = ir_or(a, ir_bin(a, OP_LE, m, ir_int(a, 0, t, (Span){0}), (Span){0}),
			   ir_bin(a, OP_LE, n, ir_bin(a, OP_FLOORDIV, lim, m, (Span){0}), (Span){0}));
	rw_obligation_at(c, &c->obs, so, "fuse.no_overflow",
			 arena_printf(a, "the fused extent (extent of %s) * (extent of %s) fits %s (at most %lld)",
				      i->name, j->name, dtype_name(t), (long long)max),
			 goal);
}

RwStatus rw_fuse(RwCtx *c, const char *outer, const char *inner, const char *fused_name)
{
	Arena *a = c->arena;
	c->opaque_ok = true; /* the instances keep their order */
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
	/* j's range is read again at every i; the fused loop reads it once
	 * for its extent and again at every k */
	if (an_range_reads_written(a, lo, lo) || an_range_reads_written(a, li, lo))
		return rw_fail(c, RW_UNSUPPORTED, lo->span,
			       "fuse: the range of loop '%s' or '%s' reads a buffer that the nest writes",
			       i->name, j->name);
	Expr *n = lo->u.loop.extent, *m = li->u.loop.extent;
	int64_t nv, mv;
	/* the nest runs nothing when N <= 0 or M <= 0, and so does the
	 * fused loop unless N * M > 0 there: only both negative breaks it */
	bool n_nonneg = an_const_int(n, &nv) && nv >= 0, m_nonneg = an_const_int(m, &mv) && mv >= 0;
	if (!n_nonneg && !m_nonneg) {
		Expr *goal = ir_or(a, ir_bin(a, OP_GE, n, ir_int(a, 0, n->dtype, (Span){0}), (Span){0}),
				   ir_bin(a, OP_GE, m, ir_int(a, 0, m->dtype, (Span){0}), (Span){0}));
		rw_obligation_at(c, &c->obs, &so, "fuse.nonneg_extents",
				 arena_printf(a, "the extents of loops %s and %s are not both negative",
					      i->name, j->name),
				 goal);
	}
	no_overflow_obligation(c, &so, i, j, n, m);
	/* fuse.extent_safe: the fused extent N * M evaluates M where the
	 * outer loop starts, also when it runs no iteration and the nest as
	 * written never evaluated M (red team: M = T.min(100 // m, 8) under
	 * N = T.min(m, 8) divided by zero at m = 0) */
	if (an_expr_may_fault(m, true)) {
		Expr *safe = rw_safe_to_eval(a, c->func, m);
		Expr *runs = ir_bin(a, OP_GT, n, ir_int(a, 0, n->dtype, (Span){0}), (Span){0});
		rw_obligation_at(c, &c->obs, &so, "fuse.extent_safe",
				 arena_printf(a, "loop %s runs, or evaluating the extent of %s before it cannot fault (reads inside their buffers, divisors not zero)",
					      i->name, j->name),
				 safe ? ir_or(a, runs, safe) : runs);
	}
	Var *k = ir_var(a, fused_name ? fused_name : arena_printf(a, "%s_%s_fused", i->name, j->name),
			i->dtype, lo->span);
	Expr *kr = ir_varref(a, k, (Span){0});
	Var *from[2] = {i, j};
	Expr *to[2] = {
		an_fold(a, ir_add(a, lo->u.loop.min, ir_bin(a, OP_FLOORDIV, kr, m, (Span){0}))),
		an_fold(a, ir_add(a, li->u.loop.min, ir_bin(a, OP_FLOORMOD, kr, m, (Span){0}))),
	};
	Stmt *body = ir_subst_stmt(a, li->u.loop.body, 2, from, to);
	Expr *extent = an_fold(a, ir_mul(a, n, m));
	Stmt *fused = ir_for(a, k, ir_int(a, 0, i->dtype, (Span){0}), extent,
			     fused_kind(lo, li, extent), body, lo->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, so.path, so.depth, fused));
	return RW_OK;
}
