/* rewrites/merge.c — merge_adjacent_loops: `for i: S1; for j: S2` ->
 * `for i: S1(i); S2(i)` (seed 000, "Utility - Merge Adjacent Loops").
 * Obligations merge.same_domain and merge.no_conflict: for all i > j,
 * S1(i) and S2(j) commute (proofs/merge.md). Also the commutation check
 * fission shares, and the search for the next pair of adjacent loops. */
#include "rewrites/merge.h"

#include <string.h>

static Span nospan(void) { return (Span){0}; }

/* ---------- the shared obligation ---------- */

/* In the merged loop S1(i) runs before S2(j) exactly when i <= j; the
 * original ran every S1 first. The pairs that change order are i > j,
 * and the rewrite is correct when each such pair commutes:
 *     forall i in D1, j in D2: i > j -> S1(i) and S2(j) commute
 * i.e. accesses to one cell, at least one a write, never meet. Two
 * reduction updates X[e] = X[e] op v with the same associative and
 * commutative op commute as state transformers (x op a op b == x op b op
 * a), so they are exempt exactly as in reorder: integers always, floats
 * in real mode only (semantics.md sections 1 and 4). Loads of buffers
 * either body writes are unknown values inside indices and guards (the
 * state in between is not modelled: an over-approximation). */
void rw_adjacent_commute_obligations(RwCtx *c, const char *kind, const StmtCtx *at,
				     const Stmt *l1, const Stmt *s1, const Stmt *l2,
				     const Stmt *s2)
{
	Arena *a = c->arena;
	Var *v1 = l1->u.loop.var, *v2 = l2->u.loop.var;
	Var *i = an_fresh_var(a, v1, "_1"), *j = an_fresh_var(a, v2, "_2");
	Expr *ir = ir_varref(a, i, nospan()), *jr = ir_varref(a, j, nospan());
	Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), l1->span);
	rw_add_context_hyps(c, base, at);
	obligation_add_var(a, base, i);
	obligation_add_var(a, base, j);
	obligation_add_hyp(a, base, an_loop_range(a, l1, ir));
	obligation_add_hyp(a, base, an_loop_range(a, l2, jr));
	obligation_add_hyp(a, base, ir_bin(a, OP_GT, ir, jr, nospan()));
	Stmt *both[2] = {(Stmt *)s1, (Stmt *)s2};
	Buffer **vol;
	int nvol = an_written_buffers(a, ir_seq(a, 2, both, nospan()), &vol);
	AccessList p, q;
	memset(&p, 0, sizeof p);
	memset(&q, 0, sizeof q);
	an_collect_accesses(c->arena, s1, 1, &v1, &ir, nvol, vol, &p);
	an_collect_accesses(c->arena, s2, 1, &v2, &jr, nvol, vol, &q);
	an_name_instance(a, &p, "_1");
	an_name_instance(a, &q, "_2");
	rw_commute_obligations(c, kind,
			       arena_printf(a, "iteration %s of the first loop and an earlier iteration %s of the second loop commute",
					    i->name, j->name),
			       base, &p, &q, true);
}

/* ---------- building the merged body ---------- */

/* s1 followed by s2, as one flat sequence. When s1 ends in an allocation
 * or a let (whose body is the rest of the sequence), s2 goes inside it,
 * as the parser would read the printed text. */
Stmt *rw_append_stmt(Arena *a, Stmt *s1, Stmt *s2)
{
	Stmt **x1 = s1->kind == ST_SEQ ? s1->u.seq.items : &s1;
	int n1 = s1->kind == ST_SEQ ? s1->u.seq.n : 1;
	Stmt *last = n1 ? x1[n1 - 1] : NULL;
	if (last && (last->kind == ST_ALLOC || last->kind == ST_LET)) {
		Stmt *inner = last->kind == ST_ALLOC
				      ? ir_alloc(a, last->u.alloc.buf, rw_append_stmt(a, last->u.alloc.body, s2),
						 last->span)
				      : ir_letstmt(a, last->u.let.var, last->u.let.value,
						   rw_append_stmt(a, last->u.let.body, s2), last->span);
		if (n1 == 1)
			return inner;
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)n1);
		memcpy(items, x1, sizeof(Stmt *) * (size_t)(n1 - 1));
		items[n1 - 1] = inner;
		return ir_seq(a, n1, items, s1->span);
	}
	Stmt **x2 = s2->kind == ST_SEQ ? s2->u.seq.items : &s2;
	int n2 = s2->kind == ST_SEQ ? s2->u.seq.n : 1;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n1 + n2 + 1));
	memcpy(items, x1, sizeof(Stmt *) * (size_t)n1);
	memcpy(items + n1, x2, sizeof(Stmt *) * (size_t)n2);
	return ir_seq(a, n1 + n2, items, s1->span);
}

static bool same_range(const Stmt *l1, const Stmt *l2)
{
	return ir_expr_equal(l1->u.loop.min, l2->u.loop.min) &&
	       ir_expr_equal(l1->u.loop.extent, l2->u.loop.extent);
}

/* merge.same_domain: the two ranges are the same set of integers,
 *     (ext1 <= 0 and ext2 <= 0) or (min1 == min2 and ext1 == ext2)
 * under the context at the first loop. */
static void same_domain_obligation(RwCtx *c, const StmtCtx *sc1, const Stmt *l1, const Stmt *l2)
{
	Arena *a = c->arena;
	Expr *zero = ir_int32(a, 0);
	Expr *empty = ir_and(a, ir_bin(a, OP_LE, l1->u.loop.extent, zero, nospan()),
			     ir_bin(a, OP_LE, l2->u.loop.extent, zero, nospan()));
	Expr *equal = ir_and(a, ir_bin(a, OP_EQ, l1->u.loop.min, l2->u.loop.min, nospan()),
			     ir_bin(a, OP_EQ, l1->u.loop.extent, l2->u.loop.extent, nospan()));
	Obligation *o = rw_obligation_at(c, &c->obs, sc1, "merge.same_domain",
					 arena_printf(a, "loops %s and %s run over the same range",
						      l1->u.loop.var->name, l2->u.loop.var->name),
					 ir_or(a, empty, equal));
	obligation_add_related(a, o, l2->span);
}

static bool adjacent(const Func *f, const StmtCtx *sc1, const StmtCtx *sc2)
{
	int d = sc1->depth;
	if (d < 1 || sc2->depth != d || sc2->path[d - 1] != sc1->path[d - 1] + 1)
		return false;
	for (int k = 0; k < d - 1; k++)
		if (sc1->path[k] != sc2->path[k])
			return false;
	Stmt *parent = an_stmt_at(f->body, sc1->path, d - 1);
	return parent && parent->kind == ST_SEQ;
}

RwStatus rw_merge_loops_at(RwCtx *c, const StmtCtx *sc1, const StmtCtx *sc2)
{
	Arena *a = c->arena;
	Stmt *l1 = sc1->stmt, *l2 = sc2->stmt;
	const char *n1 = l1->u.loop.var->name, *n2 = l2->u.loop.var->name;
	if (!adjacent(c->func, sc1, sc2))
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "merge_adjacent_loops: loop '%s' does not directly follow loop '%s' in one sequence of statements",
			       n2, n1);
	/* a loop of T.assume facts states the function's entry contract
	 * (admissible inputs, a layout's padding): merged into computing
	 * code it would no longer be an entry fact */
	if (an_is_fact_loop(l1) != an_is_fact_loop(l2))
		return rw_fail(c, RW_PRECONDITION, (an_is_fact_loop(l1) ? l1 : l2)->span,
			       "merge_adjacent_loops: loop '%s' holds only T.assume facts (the function's entry contract); it is not merged with a computing loop",
			       (an_is_fact_loop(l1) ? l1 : l2)->u.loop.var->name);
	/* the merged body uses l1's variable in l2's statements */
	if (l1->u.loop.var->dtype != l2->u.loop.var->dtype)
		return rw_fail(c, RW_PRECONDITION, l2->span,
			       "merge_adjacent_loops: loop variables '%s' (%s) and '%s' (%s) have different dtypes",
			       n1, dtype_name(l1->u.loop.var->dtype), n2, dtype_name(l2->u.loop.var->dtype));
	/* loops of different kinds merge into a serial loop: every kind
	 * means what the serial loop does (a label is a proven property, not
	 * a different semantics), so dropping a label is always correct */
	ForKind mkind = l1->u.loop.kind == l2->u.loop.kind ? l1->u.loop.kind : FOR_SERIAL;
	/* l2's range was read after l1 ran; the merged loop reads only l1's */
	if (an_range_reads_written(a, l2, l1) || an_range_reads_written(a, l1, l1))
		return rw_fail(c, RW_UNSUPPORTED, l2->span,
			       "merge_adjacent_loops: a loop range reads a buffer that the first loop writes");
	if (!same_range(l1, l2))
		same_domain_obligation(c, sc1, l1, l2);
	rw_adjacent_commute_obligations(c, "merge.no_conflict", sc1, l1, l1->u.loop.body, l2,
					l2->u.loop.body);
	Var *v2 = l2->u.loop.var;
	Expr *iref = ir_varref(a, l1->u.loop.var, nospan());
	Stmt *s2 = ir_subst_stmt(a, l2->u.loop.body, 1, &v2, &iref);
	Stmt *merged = ir_for(a, l1->u.loop.var, l1->u.loop.min, l1->u.loop.extent, mkind,
			      rw_append_stmt(a, l1->u.loop.body, s2), l1->span);
	/* a labelled loop's iterations now hold both bodies: prove the label
	 * again on the merged loop (parallel.md) */
	if (merged->u.loop.kind == FOR_PARALLEL || merged->u.loop.kind == FOR_VECTORIZED) {
		const char *kind = merged->u.loop.kind == FOR_PARALLEL ? "parallel.no_race"
									: "vectorize.no_race";
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true),
						  l1->span);
		rw_add_context_hyps(c, base, sc1);
		rw_race_obligations(c, kind, base, merged);
	}
	/* the parent sequence without l2, with the merged loop for l1 */
	int d = sc1->depth;
	Stmt *parent = an_stmt_at(c->func->body, sc1->path, d - 1);
	int n = parent->u.seq.n, k = sc1->path[d - 1];
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)n);
	memcpy(items, parent->u.seq.items, sizeof(Stmt *) * (size_t)k);
	items[k] = merged;
	memcpy(items + k + 1, parent->u.seq.items + k + 2, sizeof(Stmt *) * (size_t)(n - k - 2));
	Stmt *np = n - 1 == 1 ? items[0] : ir_seq(a, n - 1, items, parent->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc1->path, d - 1, np));
	return RW_OK;
}

RwStatus rw_merge_adjacent_loops(RwCtx *c, const char *l1, const char *l2)
{
	StmtCtx sc1, sc2;
	RwStatus st = rw_find_loop(c, l1, &sc1);
	if (st == RW_OK)
		st = rw_find_loop(c, l2, &sc2);
	if (st != RW_OK)
		return st;
	if (sc1.stmt == sc2.stmt)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "merge_adjacent_loops: '%s' and '%s' name the same loop", l1, l2);
	return rw_merge_loops_at(c, &sc1, &sc2);
}

/* ---------- every adjacent pair ---------- */

typedef struct PairFinder {
	const Stmt *const *tried;
	int ntried;
	bool found;
	StmtCtx first, second;
} PairFinder;

static bool was_tried(const PairFinder *p, const Stmt *s)
{
	for (int i = 0; i < p->ntried; i++)
		if (p->tried[i] == s)
			return true;
	return false;
}

/* The first loop (in program order) whose next sibling is a loop of the
 * same kind and the same range expressions, not tried before. */
static void find_pair(void *ud, Stmt *s, const StmtCtx *ctx)
{
	PairFinder *p = ud;
	if (p->found || s->kind != ST_SEQ)
		return;
	for (int i = 0; i + 1 < s->u.seq.n; i++) {
		Stmt *x = s->u.seq.items[i], *y = s->u.seq.items[i + 1];
		if (x->kind != ST_FOR || y->kind != ST_FOR || was_tried(p, x) ||
		    x->u.loop.kind != y->u.loop.kind || !same_range(x, y) || ctx->depth + 1 >= AN_MAX_DEPTH)
			continue;
		/* a sequence adds no loops or conditions: its items have its
		 * context, one level deeper */
		p->first = *ctx;
		p->first.path[ctx->depth] = i;
		p->first.depth = ctx->depth + 1;
		p->first.stmt = x;
		p->second = p->first;
		p->second.path[ctx->depth] = i + 1;
		p->second.stmt = y;
		p->found = true;
		return;
	}
}

bool rw_merge_find_pair(Arena *a, const Func *f, const Stmt *const *tried, int ntried,
			StmtCtx *first, StmtCtx *second)
{
	PairFinder pf;
	memset(&pf, 0, sizeof pf);
	pf.tried = tried;
	pf.ntried = ntried;
	an_walk(a, f, find_pair, &pf);
	if (!pf.found)
		return false;
	*first = pf.first;
	*second = pf.second;
	return true;
}
