/* rewrites/hoist.c — hoist_expression (seed 000, "New Transform - Hoist
 * Expression") and reduce_loop_extents.
 *   conditionals="if_else_stmt": `for v: if c: S else: T` -> `if c: for v:
 *     S else: for v: T` when c is invariant in the loop (mentions no
 *     variable bound in it and reads no buffer it writes); hoist.nonempty
 *     (the loop runs at least once) when evaluating c could fault.
 *   conditionals="boolean_expression": the values of a loop variable are
 *     grouped by which branch conditions in the body they decide, and the
 *     body is case-split on those groups (`if v < a: S elif v < b: S else:
 *     S`): every branch holds the same S, so this needs no obligation;
 *     simplify then removes what each group decides (seed 000's io == 0 /
 *     io == 2 / interior split).
 *   reduce_loop_extents: `for v in R: if c: S` -> `for v in R': if c: S`
 *     with R' from the comparisons of v in c; reduce.skipped (every v in R
 *     with c(v) lies in R') and reduce.within (R' inside R). */
#include "rewrites/hoist.h"

#include <string.h>

#include "kernel/analysis/arith.h"
#include "kernel/analysis/index_map.h"
#include "rewrites/layout.h"

static Span nospan(void) { return (Span){0}; }

/* ---------- invariance ---------- */

typedef struct Bound {
	int n;
	const Var *vars[256];
} Bound;

static void bound_vars(const Stmt *s, Bound *b)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			bound_vars(s->u.seq.items[i], b);
		return;
	case ST_FOR:
		if (b->n < 256)
			b->vars[b->n++] = s->u.loop.var;
		bound_vars(s->u.loop.body, b);
		return;
	case ST_IF:
		bound_vars(s->u.cond.then_s, b);
		if (s->u.cond.else_s)
			bound_vars(s->u.cond.else_s, b);
		return;
	case ST_LET:
		if (b->n < 256)
			b->vars[b->n++] = s->u.let.var;
		bound_vars(s->u.let.body, b);
		return;
	case ST_ALLOC: bound_vars(s->u.alloc.body, b); return;
	case ST_BLOCK: bound_vars(s->u.block.body, b); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* c has the same value in every iteration of loop l */
static bool invariant_in(Arena *a, const Expr *c, const Stmt *l)
{
	Bound b = {0};
	bound_vars(l, &b);
	for (int i = 0; i < b.n; i++)
		if (ir_expr_uses_var(c, b.vars[i]))
			return false;
	Buffer **w;
	int nw = an_written_buffers(a, l, &w);
	return !an_expr_reads_any(c, nw, w);
}

bool rw_hoist_if_applies(Arena *a, const Stmt *l)
{
	const Stmt *b = l->u.loop.body;
	return b->kind == ST_IF && invariant_in(a, b->u.cond.cond, l);
}

/* When evaluating e cannot fault: its loads inside their buffers' shapes
 * (parameter buffers without padding: every cell is an input) and its
 * divisors not zero. NULL when that cannot be stated here. */
static Expr *safe_to_eval(Arena *a, const Func *f, const Expr *e)
{
	int64_t k;
	Expr *x, *y;
	if (an_converts_float_to_int(e))
		return NULL;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR:
		return ir_bool(a, true);
	case EX_UNDEF: case EX_COUNT:
	case EX_OPAQUE: /* may fault, and has effects */
		return NULL;
	case EX_LOAD: {
		const Buffer *b = e->u.load.buf;
		bool param = false;
		for (int i = 0; i < f->nparams; i++)
			param |= f->params[i].buf == b;
		if (!param || b->layout)
			return NULL;
		Expr *all = imap_in_box(a, e->u.load.nidx, e->u.load.idx, b->shape);
		for (int i = 0; i < e->u.load.nidx && all; i++) {
			Expr *s = safe_to_eval(a, f, e->u.load.idx[i]);
			all = s ? ir_and(a, all, s) : NULL;
		}
		return all;
	}
	case EX_BIN:
		x = safe_to_eval(a, f, e->u.bin.a);
		y = safe_to_eval(a, f, e->u.bin.b);
		if (!x || !y)
			return NULL;
		x = ir_and(a, x, y);
		if ((e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD ||
		     (e->u.bin.op == OP_DIV && !dtype_is_float(e->dtype))) &&
		    !(an_const_int(e->u.bin.b, &k) && k != 0))
			x = ir_and(a, x, ir_bin(a, OP_NE, e->u.bin.b, ir_int(a, 0, e->u.bin.b->dtype, nospan()),
						 nospan()));
		return x;
	case EX_NOT: case EX_NEG: case EX_CAST:
		return safe_to_eval(a, f, e->u.un.a);
	case EX_SELECT:
		x = safe_to_eval(a, f, e->u.sel.cond);
		y = safe_to_eval(a, f, e->u.sel.a);
		Expr *z = safe_to_eval(a, f, e->u.sel.b);
		return x && y && z ? ir_and(a, x, ir_and(a, y, z)) : NULL;
	case EX_LET:
		return NULL;
	case EX_CALL: /* a math call itself never faults (NaN is a value) */
		x = ir_bool(a, true);
		for (int i = 0; i < e->u.call.nargs && x; i++) {
			y = safe_to_eval(a, f, e->u.call.args[i]);
			x = y ? ir_and(a, x, y) : NULL;
		}
		return x;
	}
	return NULL;
}

/* ---------- loops in scope ---------- */

static void loops_in(Stmt *s, HoistLoops *l)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			loops_in(s->u.seq.items[i], l);
		return;
	case ST_FOR:
		if (!an_is_fact_loop(s) && l->n < 256)
			l->items[l->n++] = s;
		loops_in(s->u.loop.body, l);
		return;
	case ST_IF:
		loops_in(s->u.cond.then_s, l);
		if (s->u.cond.else_s)
			loops_in(s->u.cond.else_s, l);
		return;
	case ST_ALLOC: loops_in(s->u.alloc.body, l); return;
	case ST_BLOCK: loops_in(s->u.block.body, l); return;
	case ST_LET: loops_in(s->u.let.body, l); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

void rw_hoist_loops_of_var(RwCtx *c, const Var *v, HoistLoops *out)
{
	HoistLoops all;
	memset(&all, 0, sizeof all);
	memset(out, 0, sizeof *out);
	loops_in(c->func->body, &all);
	for (int i = 0; i < all.n; i++)
		if (all.items[i]->u.loop.var == v)
			out->items[out->n++] = all.items[i];
}

RwStatus rw_hoist_scope_loops(RwCtx *c, const char *block, const char *loop, HoistLoops *out)
{
	memset(out, 0, sizeof *out);
	if (loop) {
		StmtCtx sc;
		RwStatus st = rw_find_loop(c, loop, &sc);
		if (st != RW_OK)
			return st;
		out->items[out->n++] = sc.stmt;
		return RW_OK;
	}
	Stmt *scope = c->func->body;
	if (block) {
		scope = rw_find_block(c->func, block);
		if (!scope)
			return rw_fail(c, RW_BAD_INPUT, c->call_span, "no block '%s' in function '%s'",
				       block, c->func->name);
	}
	loops_in(scope, out);
	return RW_OK;
}

/* ---------- if_else_stmt ---------- */

RwStatus rw_hoist_if(RwCtx *c, Stmt *l)
{
	Arena *a = c->arena;
	Stmt *s = l->u.loop.body;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, l, &sc))
		return rw_fail(c, RW_BAD_INPUT, l->span, "hoist: loop not found");
	Expr *cond = s->u.cond.cond;
	if (an_expr_may_fault(cond, true)) {
		/* hoist.nonempty: the loop evaluates c at least once already, or
		 * evaluating c cannot fault */
		Expr *goal = ir_bin(a, OP_GT, l->u.loop.extent, ir_int32(a, 0), nospan());
		Expr *safe = safe_to_eval(a, c->func, cond);
		if (safe)
			goal = ir_or(a, goal, safe);
		Obligation *o = obligation_new(a, "hoist.nonempty",
					       arena_printf(a, "loop %s runs at least once, or evaluating the hoisted condition cannot fault",
							    l->u.loop.var->name),
					       0, NULL, 0, NULL, goal, l->span);
		o->rewrite = c->desc;
		rw_add_context_hyps(c, o, &sc);
		oblist_push(a, &c->obs, o);
	}
	Stmt *then_l = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
			      s->u.cond.then_s, l->span);
	Stmt *else_l = NULL;
	if (s->u.cond.else_s) {
		Var *v2 = an_fresh_var(a, l->u.loop.var, "");
		Expr *r = ir_varref(a, v2, nospan());
		else_l = ir_for(a, v2, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
				ir_subst_stmt(a, s->u.cond.else_s, 1, &l->u.loop.var, &r), l->span);
	}
	Stmt *hoisted = ir_if(a, cond, then_l, else_l, s->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, hoisted));
	return RW_OK;
}

/* ---------- boolean_expression: case split ---------- */

typedef struct Conds {
	int n;
	const Expr *items[64];
	Stmt *owner[64];
} Conds;

static void conds_in(Stmt *s, Conds *cs)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			conds_in(s->u.seq.items[i], cs);
		return;
	case ST_FOR: conds_in(s->u.loop.body, cs); return;
	case ST_IF:
		if (cs->n < 64) {
			cs->owner[cs->n] = s;
			cs->items[cs->n++] = s->u.cond.cond;
		}
		conds_in(s->u.cond.then_s, cs);
		if (s->u.cond.else_s)
			conds_in(s->u.cond.else_s, cs);
		return;
	case ST_ALLOC: conds_in(s->u.alloc.body, cs); return;
	case ST_BLOCK: conds_in(s->u.block.body, cs); return;
	case ST_LET: conds_in(s->u.let.body, cs); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* The bounds of the loops between l and the condition's statement. */
static void inner_bounds(Arena *a, const Func *f, Stmt *owner, Bounds *b)
{
	StmtCtx sc;
	if (an_find_stmt(a, f, owner, &sc))
		arith_bounds_at(f, &sc, b);
}

/* -1: false, 1: true, 0: undecided */
static int decide(Arena *a, const Expr *cond, const Bounds *b, FloatMode fm)
{
	Simplifier s = {a, b, NULL, fm, false, NULL};
	Expr *r = arith_simplify(&s, (Expr *)cond);
	if (r->kind == EX_INT && r->dtype == DT_BOOL)
		return r->u.ival ? 1 : -1;
	return 0;
}

RwStatus rw_hoist_case_split(RwCtx *c, Stmt *l, bool *changed, Stmt **made)
{
	Arena *a = c->arena;
	*changed = false;
	int64_t lo, n;
	if (!an_const_int(l->u.loop.min, &lo) || !an_const_int(l->u.loop.extent, &n) || n < 2 || n > 256)
		return RW_OK;
	Var *v = l->u.loop.var;
	/* a body that already is a case chain on v (this split, or one hoisted
	 * since) is not split again: each split doubles the body */
	const Stmt *top = l->u.loop.body;
	if (top->kind == ST_IF && top->u.cond.cond->kind == EX_BIN &&
	    top->u.cond.cond->u.bin.op == OP_LT && top->u.cond.cond->u.bin.a->kind == EX_VAR &&
	    top->u.cond.cond->u.bin.a->u.var == v && top->u.cond.cond->u.bin.b->kind == EX_INT)
		return RW_OK;
	Conds cs = {0};
	conds_in(l->u.loop.body, &cs);
	if (!cs.n)
		return RW_OK;
	signed char dec[256][64];
	/* the bounds around each condition are found once (a walk of the
	 * function each), then v pinned to each value */
	Bounds *around = arena_alloc(a, sizeof(Bounds) * (size_t)cs.n);
	memset(around, 0, sizeof(Bounds) * (size_t)cs.n);
	for (int i = 0; i < cs.n; i++)
		inner_bounds(a, c->func, cs.owner[i], &around[i]);
	for (int64_t x = 0; x < n; x++)
		for (int i = 0; i < cs.n; i++) {
			Bounds b = around[i];
			/* pin v */
			int j = 0;
			while (j < b.n && b.vars[j] != v)
				j++;
			if (j == b.n && b.n < ARITH_MAX_VARS)
				b.vars[b.n++] = v;
			if (j < ARITH_MAX_VARS)
				b.range[j] = iv_point(lo + x);
			dec[x][i] = (signed char)decide(a, cs.items[i], &b, c->float_mode);
		}
	/* groups of consecutive values deciding alike */
	int64_t starts[256];
	int ng = 0;
	for (int64_t x = 0; x < n; x++)
		if (x == 0 || memcmp(dec[x], dec[x - 1], (size_t)cs.n) != 0)
			starts[ng++] = x;
	if (ng < 2)
		return RW_OK;
	/* only worth it if some group decides a condition the whole range
	 * does not */
	Stmt *body = l->u.loop.body;
	Stmt *chain = body;
	for (int g = ng - 1; g >= 1; g--) {
		Expr *below = ir_bin(a, OP_LT, ir_varref(a, v, nospan()),
				     ir_int(a, lo + starts[g], v->dtype, nospan()), nospan());
		chain = ir_if(a, below, body, chain, body->span);
	}
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, l, &sc))
		return rw_fail(c, RW_BAD_INPUT, l->span, "hoist: loop not found");
	Stmt *nl = ir_for(a, v, l->u.loop.min, l->u.loop.extent, l->u.loop.kind, chain, l->span);
	*made = nl;
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, nl));
	c->note = arena_printf(a, "loop %s split into %d cases by the conditions they decide",
			       v->name, ng);
	*changed = true;
	return RW_OK;
}

/* ---------- reduce_loop_extents ---------- */

typedef struct RangeCut {
	Expr *lo, *hi; /* lo <= v < hi, NULL when absent */
} RangeCut;

static Expr *emax(Arena *a, Expr *x, Expr *y)
{
	return x ? ir_bin(a, OP_MAX, x, y, nospan()) : y;
}

static Expr *emin(Arena *a, Expr *x, Expr *y)
{
	return x ? ir_bin(a, OP_MIN, x, y, nospan()) : y;
}

/* Conjuncts `v op e` with e free of v and of loads. */
static void cuts(Arena *a, const Expr *c, const Var *v, RangeCut *r)
{
	if (c->kind == EX_BIN && c->u.bin.op == OP_AND) {
		cuts(a, c->u.bin.a, v, r);
		cuts(a, c->u.bin.b, v, r);
		return;
	}
	if (c->kind != EX_BIN || !binop_is_compare(c->u.bin.op))
		return;
	Expr *x = c->u.bin.a, *y = c->u.bin.b;
	BinOp op = c->u.bin.op;
	if (!(x->kind == EX_VAR && x->u.var == v)) {
		if (!(y->kind == EX_VAR && y->u.var == v))
			return;
		Expr *t = x;
		x = y;
		y = t;
		switch (op) {
		case OP_LT: op = OP_GT; break;
		case OP_LE: op = OP_GE; break;
		case OP_GT: op = OP_LT; break;
		case OP_GE: op = OP_LE; break;
		case OP_EQ: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
		case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND:
		case OP_OR: case OP_COUNT:
			break;
		}
	}
	if (ir_expr_uses_var(y, v) || an_expr_has_load(y) || an_expr_may_fault(y, true))
		return;
	Expr *one = ir_int(a, 1, y->dtype, nospan());
	switch (op) {
	case OP_LT: r->hi = emin(a, r->hi, y); return;
	case OP_LE: r->hi = emin(a, r->hi, an_fold(a, ir_add(a, y, one))); return;
	case OP_GT: r->lo = emax(a, r->lo, an_fold(a, ir_add(a, y, one))); return;
	case OP_GE: r->lo = emax(a, r->lo, y); return;
	case OP_EQ:
		r->lo = emax(a, r->lo, y);
		r->hi = emin(a, r->hi, an_fold(a, ir_add(a, y, one)));
		return;
	case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_COUNT:
		return;
	}
}

RwStatus rw_reduce_loop_extent(RwCtx *c, Stmt *l, bool *changed, Stmt **made)
{
	Arena *a = c->arena;
	*changed = false;
	Stmt *b = l->u.loop.body;
	if (b->kind != ST_IF || b->u.cond.else_s || l->u.loop.kind == FOR_VECTORIZED)
		return RW_OK;
	RangeCut r = {NULL, NULL};
	cuts(a, b->u.cond.cond, l->u.loop.var, &r);
	if (!r.lo && !r.hi)
		return RW_OK;
	Expr *olo = l->u.loop.min, *ohi = an_fold(a, ir_add(a, olo, l->u.loop.extent));
	Expr *nlo = r.lo ? emax(a, olo, r.lo) : olo;
	Expr *nhi = r.hi ? emin(a, ohi, r.hi) : ohi;
	/* fold constants so the printed loop reads well */
	Bounds none;
	memset(&none, 0, sizeof none);
	Simplifier simp = {a, &none, NULL, c->float_mode, false, NULL};
	nlo = arith_simplify(&simp, nlo);
	nhi = arith_simplify(&simp, nhi);
	Expr *next = arith_simplify(&simp, ir_bin(a, OP_MAX, ir_int(a, 0, l->u.loop.var->dtype, nospan()),
						   ir_sub(a, nhi, nlo), nospan()));
	if (ir_expr_equal(nlo, olo) && ir_expr_equal(next, l->u.loop.extent))
		return RW_OK;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, l, &sc))
		return rw_fail(c, RW_BAD_INPUT, l->span, "reduce_loop_extents: loop not found");
	Var *v = l->u.loop.var;
	Expr *vr = ir_varref(a, v, nospan());
	/* reduce.skipped: every v of the old range where the condition holds
	 * lies in the new range */
	Obligation *o = obligation_new(a, "reduce.skipped",
				       arena_printf(a, "the iterations of %s dropped from the range are those where the branch does not run",
						    v->name),
				       0, NULL, 0, NULL,
				       ir_and(a, ir_bin(a, OP_LE, nlo, vr, nospan()),
					      ir_bin(a, OP_LT, vr, nhi, nospan())),
				       l->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, &sc);
	obligation_add_var(a, o, v);
	obligation_add_hyp(a, o, an_loop_range(a, l, vr));
	if (!an_expr_has_load(b->u.cond.cond))
		obligation_add_hyp(a, o, b->u.cond.cond);
	else
		o->goal = ir_or(a, ir_not(a, b->u.cond.cond, nospan()), o->goal);
	oblist_push(a, &c->obs, o);
	/* reduce.within: the new range adds no iteration */
	o = obligation_new(a, "reduce.within",
			   arena_printf(a, "the new range of %s lies inside the old one", v->name), 0, NULL,
			   0, NULL,
			   ir_or(a, ir_bin(a, OP_LE, next, ir_int(a, 0, v->dtype, nospan()), nospan()),
				 ir_and(a, ir_bin(a, OP_LE, olo, nlo, nospan()),
					ir_bin(a, OP_LE, ir_add(a, nlo, next), ohi, nospan()))),
			   l->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, &sc);
	oblist_push(a, &c->obs, o);
	Stmt *nl = ir_for(a, v, nlo, next, l->u.loop.kind, b, l->span);
	*made = nl;
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, nl));
	*changed = true;
	return RW_OK;
}
