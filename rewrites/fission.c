/* rewrites/fission.c — fission: the reverse of merge_adjacent_loops.
 * `for i: S1; S2` (S1 = the body's statements 0..K) -> `for i: S1;
 * for i': S2(i')`, both loops over the same range and of the same kind.
 * Obligation fission.no_conflict, the merge condition read backwards: for
 * all i > j in the range, S1(i) and S2(j) commute (proofs/merge.md). */
#include "rewrites/merge.h"

#include <string.h>

static Span nospan(void) { return (Span){0}; }

static Stmt *items_stmt(Arena *a, int n, Stmt **items, Span sp)
{
	return n == 1 ? items[0] : ir_seq(a, n, items, sp);
}

RwStatus rw_fission(RwCtx *c, const char *loop, int64_t after)
{
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return st;
	return rw_fission_at(c, &sc, after, NULL);
}

RwStatus rw_fission_at(RwCtx *c, const StmtCtx *at, int64_t after, Stmt **second_loop)
{
	Arena *a = c->arena;
	StmtCtx sc = *at;
	Stmt *l = sc.stmt, *body = l->u.loop.body;
	const char *loop = l->u.loop.var->name;
	int n = body->kind == ST_SEQ ? body->u.seq.n : 1;
	if (n < 2)
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "fission: the body of loop '%s' is a single statement (an allocation or let holds the rest of its sequence)",
			       loop);
	if (after < 0 || after > n - 2)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "fission: after=%lld is not a statement of loop '%s' that has another after it (0 .. %d)",
			       (long long)after, loop, n - 2);
	/* the new loop reads the range again, after the first loop ran */
	if (an_range_reads_written(a, l, l))
		return rw_fail(c, RW_UNSUPPORTED, l->span,
			       "fission: the range of loop '%s' reads a buffer that the loop writes", loop);
	int k = (int)after + 1;
	Stmt *s1 = items_stmt(a, k, body->u.seq.items, body->span);
	Stmt *s2 = items_stmt(a, n - k, body->u.seq.items + k, body->span);
	/* fission.no_conflict: forall i, j in D: i > j -> S1(i) and S2(j)
	 * commute (the original is the merged form of the result). A
	 * parallel or vectorized label stays valid on both loops: each new
	 * instance's accesses are a subset of an old instance's. */
	rw_adjacent_commute_obligations(c, "fission.no_conflict", &sc, l, s1, l, s2);
	Var *v = l->u.loop.var, *v2 = an_fresh_var(a, v, "");
	Expr *v2ref = ir_varref(a, v2, nospan());
	Stmt *pair[2] = {
		ir_for(a, v, l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s1, l->span),
		ir_for(a, v2, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
		       ir_subst_stmt(a, s2, 1, &v, &v2ref), l->span),
	};
	if (second_loop)
		*second_loop = pair[1];
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth,
							 ir_seq(a, 2, pair, l->span)));
	return RW_OK;
}
