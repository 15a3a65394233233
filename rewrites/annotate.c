/* rewrites/annotate.c — parallel, vectorize and unroll: change a loop's
 * kind. Obligations for parallel and vectorize: for all i != j in the
 * loop's range, S(i) and S(j) commute, reductions included (a parallel
 * reduction races). vectorize and unroll need a constant extent: a
 * literal, or an extent whose bounds give a largest value K and that is
 * proven to equal K (unroll.constant_extent, vectorize.constant_extent);
 * the loop then gets the literal K. The race
 * check is shared with reorder, which re-proves it for a labelled loop
 * that moves to a place with other loops around it (proofs/parallel.md). */
#include "rewrites/rewrite.h"
#include "kernel/analysis/arith.h"
#include "kernel/print.h"

#include <stdlib.h>
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
	obligation_copy_hyp_names(a, base, base_in);
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
	/* vectorize: two updates X[e] = X[e] op v of one cell may be
	 * reassociated (the vector code keeps partial results per lane and
	 * reduces them at the end) when op is exact on the dtype in the
	 * float mode: KIND.reassociate. parallel: no (a parallel
	 * reduction races; the pool has no per-thread partials). */
	if (strncmp(kind, "vectorize", 9) == 0)
		rw_commute_reassociating(c, kind, "two different iterations run at once without a race", base,
					 &p, &q);
	else
		rw_commute_obligations(c, kind, "two different iterations run at once without a race",
				       base, &p, &q, false);
}

/* The constant an extent always equals, if it is one: the extent itself
 * simplified to a literal, or an arm of T.min(p, q) - x (of a tile's
 * clamp, T.min(jo * 4 + 4, n) - jo * 4) that simplifies to a literal
 * (p - x or q - x), or the largest value the bounds allow. Only a
 * candidate: the caller proves extent == K. */
static bool extent_candidate(Simplifier *simp, Expr *e, int64_t *k)
{
	Arena *a = simp->a;
	Expr *se = arith_simplify(simp, e);
	if (an_const_int(se, k))
		return true;
	Expr *m = e, *x = NULL;
	if (e->kind == EX_BIN && e->u.bin.op == OP_SUB) {
		m = e->u.bin.a;
		x = e->u.bin.b;
	}
	if (m->kind == EX_BIN && m->u.bin.op == OP_MIN) {
		Expr *arms[2] = {m->u.bin.a, m->u.bin.b};
		for (int i = 0; i < 2; i++) {
			Expr *d = x ? ir_bin(a, OP_SUB, arms[i], x, (Span){0}) : arms[i];
			if (an_const_int(arith_simplify(simp, d), k) && *k >= 1)
				return true;
		}
	}
	/* past this, a largest value is no sign of a constant extent */
	int64_t lo;
	return arith_range(simp->bounds, se, &lo, k) && *k >= 1 && *k <= (1 << 16);
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
	Expr *extent = l->u.loop.extent;
	if (need_const && !an_const_int(extent, &ext)) {
		/* an extent that only looks symbolic (T.min(jo * 4 + 4, n) - jo * 4
		 * when n is a multiple of 4): a candidate, proven to be its only
		 * value */
		Bounds b;
		arith_bounds_at(c->func, &sc, &b);
		int64_t hi;
		Simplifier simp = {.a = a, .bounds = &b, .fm = c->float_mode};
		if (an_expr_has_load(extent) || !extent_candidate(&simp, extent, &hi))
			return rw_fail(c, RW_PRECONDITION, l->span,
				       "%s: loop '%s' needs a constant extent (split it first)",
				       for_kind_name(kind), l->u.loop.var->name);
		Expr *k = ir_int(a, hi, extent->dtype, (Span){0});
		const char *kind_name = kind == FOR_UNROLLED ? "unroll.constant_extent"
							     : "vectorize.constant_extent";
		char *et = print_expr(extent);
		rw_obligation_at(c, &c->obs, &sc, kind_name,
				 arena_printf(a, "the extent %s of loop '%s' is always %lld", et,
					      l->u.loop.var->name, (long long)hi),
				 ir_bin(a, OP_EQ, extent, k, (Span){0}));
		free(et);
		extent = k;
	}
	if (check_races) {
		Obligation *base = obligation_new(a, "parallel.no_race", "", 0, NULL, 0, NULL,
						  ir_bool(a, true), l->span);
		rw_add_context_hyps(c, base, &sc);
		rw_race_obligations(c, kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race",
				    base, l);
	}
	Stmt *nl = ir_for(a, l->u.loop.var, l->u.loop.min, extent, kind, l->u.loop.body, l->span);
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
