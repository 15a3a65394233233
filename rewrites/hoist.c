/* rewrites/hoist.c — hoist_expression (seed 000, "New Transform - Hoist
 * Expression") and reduce_loop_extents.
 *   TVM's hoisting (rw_hoist_find, rw_hoist_condition, rw_hoist_let): an
 *     `if` condition, `T.if_then_else` condition, `and`/`or` operand or
 *     let value invariant in the loops around it (mentions no variable
 *     bound in them and reads no buffer they write) is evaluated before
 *     the outermost of them, each copy of the loop with its value
 *     decided; hoist.nonempty when evaluating it could fault,
 *     hoist.decided for the comparisons its value decides.
 *   with loop= (seed 000's boolean_expression): the values of a loop variable are
 *     grouped by which branch conditions in the body they decide, and the
 *     body is case-split on those groups (`if v < a: S elif v < b: S else:
 *     S`): every branch holds the same S, so this needs no obligation;
 *     simplify then removes what each group decides (seed 000's io == 0 /
 *     io == 2 / interior split).
 *   reduce_loop_extents: `for v in R: if c: S` -> `for v in R': if c: S`
 *     with R' from the comparisons of v in c; reduce.skipped (every v in R
 *     with c(v) lies in R') and reduce.within (R' inside R). */
#include "rewrites/hoist.h"

#include <stdint.h>
#include <string.h>

#include "kernel/analysis/arith.h"
#include "kernel/analysis/index_map.h"
#include "rewrites/layout.h"

static Span nospan(void) { return (Span){0}; }

/* ---------- invariance ---------- */

typedef struct Bound {
	int n;
	bool overflow; /* more than 256: the list is not all of them */
	const Var *vars[256];
} Bound;

static void bound_add(Bound *b, const Var *v)
{
	if (b->n < 256)
		b->vars[b->n++] = v;
	else
		b->overflow = true;
}

static void bound_vars(const Stmt *s, Bound *b)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			bound_vars(s->u.seq.items[i], b);
		return;
	case ST_FOR:
		bound_add(b, s->u.loop.var);
		bound_vars(s->u.loop.body, b);
		return;
	case ST_IF:
		bound_vars(s->u.cond.then_s, b);
		if (s->u.cond.else_s)
			bound_vars(s->u.cond.else_s, b);
		return;
	case ST_LET:
		bound_add(b, s->u.let.var);
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
	if (b.overflow)
		return false;
	for (int i = 0; i < b.n; i++)
		if (ir_expr_uses_var(c, b.vars[i]))
			return false;
	Buffer **w;
	int nw = an_written_buffers(a, l, &w);
	return !an_expr_reads_any(c, nw, w);
}

/* When evaluating e cannot fault: its loads inside their buffers' shapes
 * (parameter buffers without padding: every cell is an input) and its
 * divisors not zero. NULL when that cannot be stated here. (Also
 * lift_alloc's, for a shape evaluated where the allocation did not run.) */
Expr *rw_safe_to_eval(Arena *a, const Func *f, const Expr *e)
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
			Expr *s = rw_safe_to_eval(a, f, e->u.load.idx[i]);
			all = s ? ir_and(a, all, s) : NULL;
		}
		return all;
	}
	case EX_BIN:
		x = rw_safe_to_eval(a, f, e->u.bin.a);
		y = rw_safe_to_eval(a, f, e->u.bin.b);
		if (!x || !y)
			return NULL;
		x = ir_and(a, x, y);
		if ((e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD ||
		     (e->u.bin.op == OP_DIV && !dtype_is_float(e->dtype))) &&
		    !(an_const_int(e->u.bin.b, &k) && k != 0))
			x = ir_and(a, x, ir_bin(a, OP_NE, e->u.bin.b, ir_int(a, 0, e->u.bin.b->dtype, nospan()),
						 nospan()));
		if ((e->u.bin.op == OP_SHL || e->u.bin.op == OP_SHR) &&
		    !(an_const_int(e->u.bin.b, &k) && k >= 0 && k < dtype_bits(e->dtype))) {
			DType bt = e->u.bin.b->dtype;
			x = ir_and(a, x, ir_bin(a, OP_LE, ir_int(a, 0, bt, nospan()), e->u.bin.b, nospan()));
			x = ir_and(a, x, ir_bin(a, OP_LT, e->u.bin.b,
						 ir_int(a, dtype_bits(e->dtype), bt, nospan()), nospan()));
		}
		return x;
	case EX_NOT: case EX_NEG: case EX_CAST:
		return rw_safe_to_eval(a, f, e->u.un.a);
	case EX_SELECT:
		x = rw_safe_to_eval(a, f, e->u.sel.cond);
		y = rw_safe_to_eval(a, f, e->u.sel.a);
		Expr *z = rw_safe_to_eval(a, f, e->u.sel.b);
		return x && y && z ? ir_and(a, x, ir_and(a, y, z)) : NULL;
	case EX_LET:
		return NULL;
	case EX_CALL: /* a math call itself never faults (NaN is a value) */
		x = ir_bool(a, true);
		for (int i = 0; i < e->u.call.nargs && x; i++) {
			y = rw_safe_to_eval(a, f, e->u.call.args[i]);
			x = y ? ir_and(a, x, y) : NULL;
		}
		return x;
	}
	return NULL;
}

/* A variable of e that is not a scalar parameter of f (bound inside the
 * function), or NULL. */
static const Var *inner_var(const Func *f, const Expr *e)
{
	const Var *v = NULL;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_UNDEF:
		return NULL;
	case EX_VAR:
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i].kind == PARAM_SCALAR && f->params[i].var == e->u.var)
				return NULL;
		return e->u.var;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx && !v; i++)
			v = inner_var(f, e->u.load.idx[i]);
		return v;
	case EX_BIN:
		v = inner_var(f, e->u.bin.a);
		return v ? v : inner_var(f, e->u.bin.b);
	case EX_NOT: case EX_NEG: case EX_CAST:
		return inner_var(f, e->u.un.a);
	case EX_SELECT:
		v = inner_var(f, e->u.sel.cond);
		v = v ? v : inner_var(f, e->u.sel.a);
		return v ? v : inner_var(f, e->u.sel.b);
	case EX_LET:
		return e->u.let.var; /* bound here: not taken apart */
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs && !v; i++)
			v = inner_var(f, e->u.call.args[i]);
		return v;
	case EX_OPAQUE: case EX_COUNT:
		break;
	}
	return NULL;
}

bool rw_entry_shape_obligation(RwCtx *c, const char *kind, const Buffer *b, Span origin)
{
	Arena *a = c->arena;
	Expr *goal = NULL;
	for (int d = 0; d < b->ndim; d++) {
		Expr *e = b->shape[d];
		int64_t v;
		if (an_const_int(e, &v) && v >= 0)
			continue;
		const Var *iv = inner_var(c->func, e);
		Expr *safe = an_expr_may_fault(e, true) ? rw_safe_to_eval(a, c->func, e) : ir_bool(a, true);
		if (iv || !safe) {
			rw_fail(c, RW_UNSUPPORTED, origin,
				iv ? "the shape of %s uses '%s', bound inside the function, and %s is allocated for the whole function"
				   : "the shape of %s may fault (it reads a buffer that is not a parameter)%s, and %s is allocated for the whole function",
				b->name, iv ? iv->name : "", b->name);
			return false;
		}
		goal = ir_and(a, goal, ir_and(a, safe, ir_bin(a, OP_LE, ir_int(a, 0, e->dtype, nospan()), e, nospan())));
	}
	if (!goal)
		return true;
	StmtCtx tc;
	if (!an_find_stmt(a, c->func, c->func->body, &tc)) {
		rw_fail(c, RW_UNSUPPORTED, origin, "the function body is not found");
		return false;
	}
	rw_obligation_at(c, &c->obs, &tc, kind,
			 arena_printf(a, "the shape of %s is not negative and cannot fault at the function's entry, where %s is allocated",
				      b->name, b->name),
			 goal);
	return true;
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
			return rw_fail(c, RW_BAD_INPUT, c->call_span, "no block '%s' in function '%s'%s",
				       block, c->func->name, rw_block_hint(c->arena, c->func, block));
	}
	loops_in(scope, out);
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
		case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
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
	case OP_SHL: case OP_SHR: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
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

/* ---------- TVM's hoisting: an invariant condition out of loops ---------- */

#define HF_MAX 256

typedef struct HoistFind {
	Arena *a;
	const Func *f;
	HoistFlags flags;
	const HoistLoops *scope; /* destinations allowed; NULL: any */
	Stmt *loops[HF_MAX];	 /* the loops around the statement visited */
	bool seq[HF_MAX];	 /* a sequence of statements reached in it, not in a loop in it */
	int n, floor;		 /* loops below floor: across an allocation or block */
	const Var *vars[HF_MAX]; /* statement-bound variables in scope */
	int level[HF_MAX];	 /* each one's: how many loops are around its binding */
	int nvars;
	const Stmt *stmt; /* the statement whose expressions are visited */
	/* the answer */
	Stmt *loop;
	const Expr *cond;
	Stmt *let; /* or the let statement to hoist */
} HoistFind;

static bool is_param_var(const Func *f, const Var *v)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR && f->params[i].var == v)
			return true;
	return false;
}

typedef struct VarLevel {
	const HoistFind *h;
	int max; /* the deepest level of a variable used; HF_MAX: unknown */
} VarLevel;

static void var_level(const Expr *e, void *ud)
{
	VarLevel *vl = ud;
	if (e->kind != EX_VAR || is_param_var(vl->h->f, e->u.var))
		return;
	for (int i = vl->h->nvars - 1; i >= 0; i--)
		if (vl->h->vars[i] == e->u.var) {
			if (vl->h->level[i] > vl->max)
				vl->max = vl->h->level[i];
			return;
		}
	vl->max = HF_MAX; /* bound inside an expression, or unknown */
}

static bool bool_lit(const Expr *e, bool *v)
{
	if (e->kind != EX_INT || e->dtype != DT_BOOL)
		return false;
	if (v)
		*v = e->u.ival != 0;
	return true;
}

static bool in_scope(const HoistLoops *s, const Stmt *l)
{
	if (!s)
		return true;
	for (int i = 0; i < s->n; i++)
		if (s->items[i] == l)
			return true;
	return false;
}

/* TVM's destination for an expression e: out of the loops around,
 * innermost first, while e stays invariant and no loop has reached a
 * sequence; the outermost such loop in scope, or NULL. */
static Stmt *destination(HoistFind *h, const Expr *e)
{
	VarLevel vl = {h, 0};
	expr_each_post(e, var_level, &vl);
	Stmt *dest = NULL;
	for (int k = h->n - 1; k >= h->floor; k--) {
		/* variables bound inside loop k: level > k */
		if (h->seq[k] || vl.max > k || !invariant_in(h->a, e, h->loops[k]))
			break;
		if (in_scope(h->scope, h->loops[k]))
			dest = h->loops[k];
	}
	return dest;
}

static void attempt(HoistFind *h, const Expr *cond, bool whole_if)
{
	if (h->loop || bool_lit(cond, NULL) || cond->dtype != DT_BOOL)
		return;
	Stmt *dest = destination(h, cond);
	if (!dest)
		return;
	if (an_expr_may_fault(cond, true) && !whole_if && !rw_safe_to_eval(h->a, h->f, cond))
		return; /* nothing says it may be evaluated before the loop */
	h->loop = dest;
	h->cond = cond;
}

/* A let statement whose value is invariant: hoisted as a condition is
 * (TVM's HoistedLetBindings); with let_required only when a condition
 * in its body uses its variable. */
static bool is_cond_use(const Stmt *s, void *v);

static void attempt_let(HoistFind *h, Stmt *s)
{
	if (h->loop || !(h->flags.let_stmt || h->flags.let_required))
		return;
	if (!h->flags.let_stmt && !stmt_find(s->u.let.body, is_cond_use, s->u.let.var))
		return;
	Stmt *dest = destination(h, s->u.let.value);
	if (!dest)
		return;
	h->loop = dest;
	h->let = s;
}

static bool is_cond_use(const Stmt *s, void *v)
{
	return s->kind == ST_IF && ir_expr_uses_var(s->u.cond.cond, v);
}

static void visit_expr(HoistFind *h, const Expr *e);

static Expr *visit_child(void *ud, Expr *x)
{
	visit_expr(ud, x);
	return x;
}

static void visit_expr(HoistFind *h, const Expr *e)
{
	if (h->loop)
		return;
	if (e->kind == EX_BIN && (e->u.bin.op == OP_AND || e->u.bin.op == OP_OR) &&
	    h->flags.boolean_expression) {
		attempt(h, e->u.bin.a, false);
		attempt(h, e->u.bin.b, false);
	}
	if (e->kind == EX_SELECT && h->flags.if_else_expr)
		attempt(h, e->u.sel.cond, false);
	expr_map_children(h->a, (Expr *)e, visit_child, h);
}

static void push_var(HoistFind *h, const Var *v)
{
	if (h->nvars < HF_MAX) {
		h->vars[h->nvars] = v;
		h->level[h->nvars++] = h->n;
	}
}

static void find_walk(HoistFind *h, Stmt *s)
{
	if (h->loop)
		return;
	int nv = h->nvars, fl = h->floor;
	switch (s->kind) {
	case ST_SEQ: {
		/* as TVM: a sequence marks the innermost loop around it when it
		 * is reached, so conditions before it may still leave that loop */
		int k = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			k += s->u.seq.items[i]->kind != ST_PASS;
		if (k > 1 && h->n > 0)
			h->seq[h->n - 1] = true;
		for (int i = 0; i < s->u.seq.n; i++)
			find_walk(h, s->u.seq.items[i]);
		return;
	}
	case ST_FOR:
		if (an_is_fact_loop(s) || h->n >= HF_MAX)
			return;
		h->seq[h->n] = false;
		h->loops[h->n++] = s;
		push_var(h, s->u.loop.var);
		find_walk(h, s->u.loop.body);
		h->n--;
		h->nvars = nv;
		return;
	case ST_IF:
		if (h->flags.if_else_stmt)
			attempt(h, s->u.cond.cond, true);
		visit_expr(h, s->u.cond.cond);
		find_walk(h, s->u.cond.then_s);
		if (s->u.cond.else_s)
			find_walk(h, s->u.cond.else_s);
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			visit_expr(h, s->u.store.idx[i]);
		visit_expr(h, s->u.store.value);
		return;
	case ST_EVAL:
		visit_expr(h, s->u.expr);
		return;
	case ST_LET:
		attempt_let(h, s);
		visit_expr(h, s->u.let.value);
		push_var(h, s->u.let.var);
		find_walk(h, s->u.let.body);
		h->nvars = nv;
		return;
	case ST_ALLOC:
		h->floor = h->n;
		find_walk(h, s->u.alloc.body);
		h->floor = fl;
		return;
	case ST_BLOCK:
		h->floor = h->n;
		find_walk(h, s->u.block.body);
		h->floor = fl;
		h->nvars = nv;
		return;
	case ST_ASSUME: case ST_PASS: case ST_COUNT:
		return;
	}
}

bool rw_hoist_find(RwCtx *c, const HoistLoops *scope, HoistFlags flags, Stmt **loop,
		   const Expr **cond, Stmt **let)
{
	HoistFind *h = arena_alloc(c->arena, sizeof *h);
	memset(h, 0, sizeof *h);
	h->a = c->arena;
	h->f = c->func;
	h->flags = flags;
	h->scope = scope;
	find_walk(h, c->func->body);
	*loop = h->loop;
	*cond = h->cond;
	*let = h->let;
	return h->loop != NULL;
}

/* ---- the copy of a loop with the hoisted condition decided ---- */

/* `v op k` (either order, k an integer literal, op not !=) as the
 * interval lo <= v <= hi of the values where it holds. */
typedef struct VarRange {
	const Var *v;
	int64_t lo, hi;
} VarRange;

static bool cmp_range(const Expr *e, VarRange *r)
{
	if (e->kind != EX_BIN || !binop_is_compare(e->u.bin.op) || e->u.bin.op == OP_NE)
		return false;
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	BinOp op = e->u.bin.op;
	if (x->kind != EX_VAR) {
		const Expr *t = x;
		x = y;
		y = t;
		op = binop_mirror(op);
	}
	if (x->kind != EX_VAR || y->kind != EX_INT || dtype_is_float(x->dtype))
		return false;
	int64_t k = y->u.ival;
	r->v = x->u.var;
	r->lo = INT64_MIN;
	r->hi = INT64_MAX;
	switch (op) {
	case OP_LT: if (k == INT64_MIN) return false; r->hi = k - 1; return true;
	case OP_LE: r->hi = k; return true;
	case OP_GT: if (k == INT64_MAX) return false; r->lo = k + 1; return true;
	case OP_GE: r->lo = k; return true;
	case OP_EQ: r->lo = r->hi = k; return true;
	case OP_SHL: case OP_SHR: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	return false;
}

typedef struct Decide {
	RwCtx *c;
	Arena *a;
	const Expr *cond;
	bool val;
	bool known; /* the values of a variable the hoisted value implies */
	VarRange k;
	const Span *span;
} Decide;

/* Another comparison of the same variable that the hoisted value decides
 * (TVM's simplifier: i < 2 false makes i < 1 false). Integer interval
 * reasoning, checked again by the obligation hoist.decided. */
static bool implied(Decide *d, const Expr *e, bool *v)
{
	VarRange r;
	if (!d->known || !cmp_range(e, &r) || r.v != d->k.v)
		return false;
	if (r.lo <= d->k.lo && d->k.hi <= r.hi)
		*v = true;
	else if (d->k.hi < r.lo || r.hi < d->k.lo)
		*v = false;
	else
		return false;
	Arena *a = d->a;
	Expr *fact = d->val ? (Expr *)d->cond : ir_not(a, (Expr *)d->cond, nospan());
	Expr *goal = ir_or(a, ir_not(a, fact, nospan()), *v ? (Expr *)e : ir_not(a, (Expr *)e, nospan()));
	Obligation *o = obligation_new(a, "hoist.decided",
				       arena_printf(a, "where the hoisted condition is %s, another comparison of %s is %s",
						    d->val ? "true" : "false", d->k.v->name, *v ? "true" : "false"),
				       0, NULL, 0, NULL, goal, *d->span);
	o->rewrite = d->c->desc;
	oblist_push(a, &d->c->obs, o);
	return true;
}

static Expr *decide_e(void *ud, Expr *e)
{
	Decide *d = ud;
	bool iv;
	if (ir_expr_equal(e, d->cond))
		return ir_bool(d->a, d->val);
	if (implied(d, e, &iv))
		return ir_bool(d->a, iv);
	if (e->kind == EX_LET && ir_expr_uses_var(d->cond, e->u.let.var))
		return e; /* the condition's variable means another value in there */
	Expr *r = expr_map_children(d->a, e, decide_e, d);
	bool x, y;
	switch (r->kind) {
	case EX_BIN:
		if (r->u.bin.op != OP_AND && r->u.bin.op != OP_OR)
			return r;
		bool isand = r->u.bin.op == OP_AND;
		/* x and False / x or True: x's evaluation dropped, which only
		 * drops UB */
		if (bool_lit(r->u.bin.a, &x))
			return x == isand ? r->u.bin.b : r->u.bin.a;
		if (bool_lit(r->u.bin.b, &y))
			return y == isand ? r->u.bin.a : r->u.bin.b;
		return r;
	case EX_NOT:
		return bool_lit(r->u.un.a, &x) ? ir_bool(d->a, !x) : r;
	case EX_SELECT:
		if (bool_lit(r->u.sel.cond, &x))
			return x ? r->u.sel.a : r->u.sel.b;
		return r;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_NEG: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return r;
	}
	return r;
}

static bool empty(const Stmt *s) { return s->kind == ST_PASS; }

/* s with every occurrence of the condition replaced by its value, the
 * branches it decides taken, and what is left empty dropped. */
static Stmt *decide_s(Decide *d, Stmt *s)
{
	Arena *a = d->a;
	Expr *x;
	Stmt *b, *e;
	bool v;
	switch (s->kind) {
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)s->u.seq.n);
		int n = 0;
		for (int i = 0; i < s->u.seq.n; i++) {
			b = decide_s(d, s->u.seq.items[i]);
			if (!empty(b))
				items[n++] = b;
		}
		return n == 0 ? ir_pass(a, s->span) : n == 1 ? items[0] : ir_seq(a, n, items, s->span);
	}
	case ST_FOR:
		b = decide_s(d, s->u.loop.body);
		if (empty(b))
			return ir_pass(a, s->span);
		return ir_for(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, b, s->span);
	case ST_IF:
		x = decide_e(d, s->u.cond.cond);
		b = decide_s(d, s->u.cond.then_s);
		e = s->u.cond.else_s ? decide_s(d, s->u.cond.else_s) : NULL;
		if (e && empty(e))
			e = NULL;
		if (bool_lit(x, &v))
			return v ? b : e ? e : ir_pass(a, s->span);
		if (empty(b))
			return e ? ir_if(a, ir_not(a, x, x->span), e, NULL, s->span) : ir_pass(a, s->span);
		return ir_if(a, x, b, e, s->span);
	case ST_STORE: {
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(s->u.store.nidx + 1));
		for (int i = 0; i < s->u.store.nidx; i++)
			idx[i] = decide_e(d, s->u.store.idx[i]);
		return ir_store(a, s->u.store.buf, s->u.store.nidx, idx, decide_e(d, s->u.store.value),
				s->span);
	}
	case ST_EVAL:
		return ir_eval(a, decide_e(d, s->u.expr), s->span);
	case ST_LET:
		b = decide_s(d, s->u.let.body);
		return empty(b) ? b : ir_letstmt(a, s->u.let.var, decide_e(d, s->u.let.value), b, s->span);
	case ST_ALLOC:
		b = decide_s(d, s->u.alloc.body);
		return empty(b) ? b : ir_alloc(a, s->u.alloc.buf, b, s->span);
	case ST_BLOCK:
		return ir_block_with(a, s, decide_s(d, s->u.block.body));
	case ST_ASSUME: case ST_PASS: case ST_COUNT:
		return s;
	}
	return s;
}

/* hoist.nonempty, when evaluating e (the condition of an `if` or the
 * value of the let `at`) before loop l could fault: it cannot, or l's
 * nest is loops down to that statement, so every run of l evaluates e
 * at least once already. False (c's failure set) when neither can be
 * stated. */
static bool nonempty_obligation(RwCtx *c, const StmtCtx *sc, Stmt *l, const Expr *e,
				const Stmt *at)
{
	Arena *a = c->arena;
	if (!an_expr_may_fault(e, true))
		return true;
	Expr *goal = rw_safe_to_eval(a, c->func, e);
	Expr *runs = NULL;
	const Stmt *s = l;
	while (s->kind == ST_FOR && s != at) {
		runs = ir_and(a, runs, ir_bin(a, OP_GT, s->u.loop.extent,
					      ir_int(a, 0, s->u.loop.extent->dtype, nospan()), nospan()));
		s = s->u.loop.body;
	}
	if (s == at || (s->kind == ST_IF && s->u.cond.cond == e)) {
		/* the inner extents must not mention the outer loop vars */
		for (const Stmt *t = l; t->kind == ST_FOR && t != at && runs; t = t->u.loop.body)
			for (const Stmt *u = t->u.loop.body; u->kind == ST_FOR && u != at; u = u->u.loop.body)
				if (ir_expr_uses_var(u->u.loop.extent, t->u.loop.var))
					runs = NULL;
		goal = runs ? (goal ? ir_or(a, runs, goal) : runs) : goal;
	} else {
		runs = NULL; /* not reached on every run */
	}
	if (!goal) {
		rw_fail(c, RW_UNSUPPORTED, l->span,
			"not supported: hoist: the expression may fault and is not evaluated on every run of loop %s",
			l->u.loop.var->name);
		return false;
	}
	const char *what = at ? "let value" : "condition";
	Obligation *o = obligation_new(a, "hoist.nonempty",
				       runs ? arena_printf(a, "loop %s runs at least once, or evaluating the hoisted %s cannot fault",
							   l->u.loop.var->name, what)
					    : arena_printf(a, "evaluating the hoisted %s before loop %s cannot fault",
							   what, l->u.loop.var->name),
				       0, NULL, 0, NULL, goal, l->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, sc);
	oblist_push(a, &c->obs, o);
	return true;
}

RwStatus rw_hoist_condition(RwCtx *c, Stmt *l, const Expr *cond)
{
	Arena *a = c->arena;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, l, &sc))
		return rw_fail(c, RW_BAD_INPUT, l->span, "hoist: loop not found");
	if (!nonempty_obligation(c, &sc, l, cond, NULL))
		return RW_UNSUPPORTED;
	Decide dt = {c, a, cond, true, false, {0}, &l->span}, df = {c, a, cond, false, false, {0}, &l->span};
	VarRange k;
	if (cmp_range(cond, &k)) {
		dt.known = true;
		dt.k = k;
		/* false: the complement, when it is one interval */
		if (k.lo == INT64_MIN && k.hi != INT64_MAX) {
			df.known = true;
			df.k = (VarRange){k.v, k.hi + 1, INT64_MAX};
		} else if (k.hi == INT64_MAX && k.lo != INT64_MIN) {
			df.known = true;
			df.k = (VarRange){k.v, INT64_MIN, k.lo - 1};
		}
	}
	Stmt *then_l = decide_s(&dt, l);
	Var *v2 = an_fresh_var(a, l->u.loop.var, "");
	Expr *r = ir_varref(a, v2, nospan());
	Stmt *renamed = ir_for(a, v2, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
			       ir_subst_stmt(a, l->u.loop.body, 1, &l->u.loop.var, &r), l->span);
	Stmt *else_l = decide_s(&df, renamed);
	Stmt *hoisted;
	Expr *hc = (Expr *)cond;
	if (empty(then_l) && empty(else_l))
		hoisted = ir_pass(a, l->span);
	else if (empty(else_l))
		hoisted = ir_if(a, hc, then_l, NULL, l->span);
	else if (empty(then_l))
		hoisted = ir_if(a, ir_not(a, hc, hc->span), else_l, NULL, l->span);
	else
		hoisted = ir_if(a, hc, then_l, else_l, l->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, hoisted));
	return RW_OK;
}

/* ---- a let statement out of its loops ---- */

typedef struct Unlet {
	Arena *a;
	const Stmt *let;
} Unlet;

/* s with the statement u->let replaced by its body (every copy) */
static Stmt *unlet(const Unlet *u, Stmt *s)
{
	Arena *a = u->a;
	Stmt *b, *e;
	if (s == u->let)
		return s->u.let.body;
	switch (s->kind) {
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)s->u.seq.n);
		bool ch = false;
		for (int i = 0; i < s->u.seq.n; i++) {
			items[i] = unlet(u, s->u.seq.items[i]);
			ch |= items[i] != s->u.seq.items[i];
		}
		return ch ? ir_seq(a, s->u.seq.n, items, s->span) : s;
	}
	case ST_FOR:
		b = unlet(u, s->u.loop.body);
		return b == s->u.loop.body ? s
					   : ir_for(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent,
						    s->u.loop.kind, b, s->span);
	case ST_IF:
		b = unlet(u, s->u.cond.then_s);
		e = s->u.cond.else_s ? unlet(u, s->u.cond.else_s) : NULL;
		return b == s->u.cond.then_s && e == s->u.cond.else_s
			       ? s
			       : ir_if(a, s->u.cond.cond, b, e, s->span);
	case ST_LET:
		b = unlet(u, s->u.let.body);
		return b == s->u.let.body ? s : ir_letstmt(a, s->u.let.var, s->u.let.value, b, s->span);
	case ST_ALLOC:
		b = unlet(u, s->u.alloc.body);
		return b == s->u.alloc.body ? s : ir_alloc(a, s->u.alloc.buf, b, s->span);
	case ST_BLOCK:
		b = unlet(u, s->u.block.body);
		return b == s->u.block.body ? s : ir_block_with(a, s, b);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return s;
	}
	return s;
}

RwStatus rw_hoist_let(RwCtx *c, Stmt *l, Stmt *let)
{
	Arena *a = c->arena;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, l, &sc))
		return rw_fail(c, RW_BAD_INPUT, l->span, "hoist: loop not found");
	if (!nonempty_obligation(c, &sc, l, let->u.let.value, let))
		return RW_UNSUPPORTED;
	Unlet u = {a, let};
	Stmt *hoisted = ir_letstmt(a, let->u.let.var, let->u.let.value, unlet(&u, l), let->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, hoisted));
	return RW_OK;
}
