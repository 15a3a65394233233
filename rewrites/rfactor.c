/* rewrites/rfactor.c — rfactor(loop, factor_axis), as TVM defines it: the
 * reduction block X under `loop` (a loop of its own perfect nest) becomes
 * the rfactor block X_rf, which reduces into a new buffer X_rf with the
 * extent of `loop` inserted at `factor_axis`, in copies of every loop of
 * the nest, and the write-back block X, which reduces X_rf into X over
 * the nest's spatial loops and `loop`. Obligations (semantics.md section
 * 9, "Reductions"; the iter types and the declared regions are not
 * trusted):
 *   rfactor.reassociate   op is associative and commutative on the dtype
 *                         in the float mode (refuted for float + and * in
 *                         ieee mode, with values whose roundings differ);
 *   rfactor.identity      the init value is op's identity;
 *   rfactor.reduction_loops  the updated cell does not change along the
 *                         reduction loops (`loop` among them): proven
 *                         from the accesses, not from the iter types;
 *   rfactor.cells_distinct   different spatial points update different
 *                         cells;
 *   rfactor.init_first    the init runs exactly at the first iteration of
 *                         the reduction loops (reduction loops non-empty);
 *   rfactor.rf_init       the init of X_rf runs exactly at the first
 *                         iteration of the reduction loops other than
 *                         `loop`;
 *   rfactor.no_self_read  v never reads a cell of X the block updates.
 * Together: for each spatial point the original folds op over v at every
 * reduction point in loop order, from the identity; X_rf folds the points
 * of each value of `loop`, and the write-back folds those partials: the
 * same multiset of values of v, which read nothing the nest writes. */
#include "rewrites/rewrite.h"
#include "rewrites/layout.h" /* rw_find_block */

#include <string.h>


static Span nospan(void) { return (Span){0}; }

typedef struct Rf {
	Stmt *block;
	const BlockInfo *info;
	BlockView view;
	StmtCtx bctx;	  /* of the block */
	int top;	  /* first loop of the block's own nest in bctx.loops */
	int n;		  /* loops in the nest */
	Stmt **loops;	  /* the nest, outermost first */
	Var **vars;	  /* their variables */
	bool *reduce;	  /* a reduce binding uses the loop */
	int rf;		  /* index of the factored loop in the nest */
	Buffer *x;	  /* the reduced buffer */
	int nidx;
	Expr **idx;	  /* its cell (over iter vars) */
	BinOp op;
	bool x_left;	  /* X[I] op v (else v op X[I]) */
	Expr *v;	  /* the value folded in (over iter vars) */
	Expr *init;	  /* the init value */
	StmtCtx top_ctx;  /* of the nest's outermost loop */
} Rf;

static Stmt *skip_single(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

/* ---------- recognising the reduction ---------- */

static bool op_is_reduction(BinOp op, DType t)
{
	switch (op) {
	case OP_ADD: case OP_MUL: case OP_MIN: case OP_MAX:
		return t != DT_BOOL;
	case OP_AND: case OP_OR:
		return t == DT_BOOL;
	case OP_SUB: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_EQ: case OP_NE:
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_SHL: case OP_SHR: case OP_COUNT:
		break;
	}
	return false;
}

static bool same_cell(int n, Expr *const *x, int m, Expr *const *y)
{
	if (n != m)
		return false;
	for (int i = 0; i < n; i++)
		if (!ir_expr_equal(x[i], y[i]))
			return false;
	return true;
}

/* The update `X[I] = X[I] op v` (a let before it is substituted in:
 * TVM's `v_C = C[..] + ..; C[..] = v_C`). */
static RwStatus read_update(RwCtx *c, Rf *r)
{
	Arena *a = c->arena;
	const char *bn = r->block->u.block.name;
	Stmt *s = skip_single((Stmt *)r->view.inner);
	int nlet = 0;
	Var *lv[8];
	Expr *le[8];
	while (s->kind == ST_LET && nlet < 8) {
		lv[nlet] = s->u.let.var;
		le[nlet++] = s->u.let.value;
		s = skip_single(s->u.let.body);
	}
	if (s->kind != ST_STORE)
		return rw_fail(c, RW_PRECONDITION, r->block->span,
			       "rfactor: block '%s' is not a reduction: its update is not one store `X[...] = X[...] op v`",
			       bn);
	Expr *val = s->u.store.value;
	for (int k = nlet - 1; k >= 0; k--)
		val = ir_subst_expr(a, val, 1, &lv[k], &le[k]);
	r->x = s->u.store.buf;
	r->nidx = s->u.store.nidx;
	r->idx = arena_alloc(a, sizeof(Expr *) * (size_t)(r->nidx + 1));
	for (int k = 0; k < r->nidx; k++) {
		r->idx[k] = s->u.store.idx[k];
		for (int j = nlet - 1; j >= 0; j--)
			r->idx[k] = ir_subst_expr(a, r->idx[k], 1, &lv[j], &le[j]);
	}
	if (val->kind != EX_BIN || !op_is_reduction(val->u.bin.op, val->dtype))
		return rw_fail(c, RW_PRECONDITION, s->span,
			       "rfactor: the update of block '%s' is not `X[...] = X[...] op v` with op one of + * min max "
			       "(and, or on bool)", bn);
	/* X[I] op v, v op X[I], or a chain ((X[I] op a) op b) ... of one
	 * operator, read as X[I] op (a op b ...): the step is exact by the
	 * associativity rfactor.reassociate proves */
	BinOp op = val->u.bin.op;
	Expr *rest = NULL;
	for (Expr *e = val; e->kind == EX_BIN && e->u.bin.op == op && !r->v;) {
		Expr *x = NULL;
		for (int side = 0; side < 2 && !x; side++) {
			Expr *y = side ? e->u.bin.b : e->u.bin.a;
			if (y->kind == EX_LOAD && y->u.load.buf == r->x &&
			    same_cell(y->u.load.nidx, y->u.load.idx, r->nidx, r->idx)) {
				x = y;
				r->x_left = side == 0;
				Expr *other = side ? e->u.bin.a : e->u.bin.b;
				r->v = rest ? ir_bin(a, op, other, rest, other->span) : other;
			}
		}
		if (x)
			break;
		/* descend into the operand that holds the load of X */
		Expr *l = e->u.bin.a, *rr = e->u.bin.b;
		bool in_l = an_expr_reads(l, r->x), in_r = an_expr_reads(rr, r->x);
		if (in_l == in_r)
			break;
		Expr *other = in_l ? rr : l;
		rest = rest ? ir_bin(a, op, other, rest, other->span) : other;
		e = in_l ? l : rr;
	}
	r->op = op;
	if (!r->v)
		return rw_fail(c, RW_PRECONDITION, s->span,
			       "rfactor: the update of block '%s' does not read %s at the cell it stores (`X[...] = X[...] op v`)",
			       bn, r->x->name);
	for (int k = 0; k < r->nidx; k++)
		if (an_expr_has_load(r->idx[k]))
			return rw_fail(c, RW_UNSUPPORTED, s->span,
				       "rfactor: not supported: an index of the updated cell of %s reads memory", r->x->name);
	/* the init: one store to the same cell */
	Stmt *in = r->view.init ? skip_single((Stmt *)r->view.init) : NULL;
	if (!in || in->kind != ST_STORE || in->u.store.buf != r->x ||
	    !same_cell(in->u.store.nidx, in->u.store.idx, r->nidx, r->idx))
		return rw_fail(c, RW_PRECONDITION, r->block->span,
			       "rfactor: the T.init of block '%s' is not one store to the cell its update reduces into", bn);
	r->init = in->u.store.value;
	if (an_expr_has_load(r->init) || an_expr_has_undef(r->init))
		return rw_fail(c, RW_UNSUPPORTED, in->span,
			       "rfactor: not supported: the init value of block '%s' reads memory", bn);
	for (int k = 0; k < r->info->niters; k++)
		if (ir_expr_uses_var(r->init, r->info->iters[k].var))
			return rw_fail(c, RW_UNSUPPORTED, in->span,
				       "rfactor: not supported: the init value of block '%s' depends on iter var '%s'", bn,
				       r->info->iters[k].var->name);
	return RW_OK;
}

/* ---------- the block and its nest ---------- */

static RwStatus find_parts(RwCtx *c, const char *loop, Rf *r)
{
	Arena *a = c->arena;
	StmtCtx lctx;
	RwStatus st = rw_find_loop(c, loop, &lctx);
	if (st != RW_OK)
		return st;
	/* the loop's body down to one block, through loops only */
	Stmt *s = skip_single(lctx.stmt->u.loop.body);
	while (s->kind == ST_FOR)
		s = skip_single(s->u.loop.body);
	if (s->kind != ST_BLOCK || !s->u.block.info)
		return rw_fail(c, RW_PRECONDITION, lctx.stmt->span,
			       "rfactor: loop '%s' does not hold exactly one block with iter vars (only loops between "
			       "it and the block)", loop);
	r->block = s;
	r->info = s->u.block.info;
	if (!an_find_stmt(a, c->func, s, &r->bctx))
		return rw_fail(c, RW_UNSUPPORTED, s->span, "rfactor: block not found");
	const char *bn = s->u.block.name;
	if (!r->info->has_init)
		return rw_fail(c, RW_PRECONDITION, s->span, "rfactor: block '%s' is not a reduction block (no T.init())",
			       bn);
	if (!block_view(a, s, &r->view) || !r->view.init)
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "rfactor: block '%s' no longer has the shape of its declaration (iter vars, T.init)", bn);
	if (r->view.where)
		return rw_fail(c, RW_UNSUPPORTED, r->view.where->span,
			       "rfactor: not supported: block '%s' has a T.where predicate", bn);
	/* the block's own nest: the loops each holding only the next one */
	int nl = r->bctx.nloops;
	r->top = nl;
	for (int i = nl - 1; i >= 0; i--) {
		Stmt *inner = i == nl - 1 ? s : r->bctx.loops[i + 1];
		if (skip_single(r->bctx.loops[i]->u.loop.body) != inner)
			break;
		r->top = i;
	}
	r->n = nl - r->top;
	r->loops = r->bctx.loops + r->top;
	r->rf = -1;
	for (int i = 0; i < r->n; i++)
		if (r->loops[i] == lctx.stmt)
			r->rf = i;
	if (r->rf < 0)
		return rw_fail(c, RW_PRECONDITION, lctx.stmt->span,
			       "rfactor: loop '%s' is not a loop of block '%s''s own nest", loop, bn);
	if (!an_find_stmt(a, c->func, r->loops[0], &r->top_ctx))
		return rw_fail(c, RW_UNSUPPORTED, s->span, "rfactor: loop nest not found");
	return RW_OK;
}

static bool uses_any(const Expr *e, int n, Var *const *vars)
{
	for (int i = 0; i < n; i++)
		if (ir_expr_uses_var(e, vars[i]))
			return true;
	return false;
}

static RwStatus classify(RwCtx *c, Rf *r)
{
	Arena *a = c->arena;
	const char *bn = r->block->u.block.name;
	r->vars = arena_alloc(a, sizeof(Var *) * (size_t)(r->n + 1));
	r->reduce = arena_alloc(a, sizeof(bool) * (size_t)(r->n + 1));
	bool *spatial = arena_alloc(a, sizeof(bool) * (size_t)(r->n + 1));
	for (int i = 0; i < r->n; i++) {
		const Stmt *l = r->loops[i];
		r->vars[i] = l->u.loop.var;
		if (l->u.loop.kind != FOR_SERIAL)
			return rw_fail(c, RW_PRECONDITION, l->span,
				       "rfactor: loop '%s' of the nest of block '%s' is %s (rfactor takes serial loops)",
				       l->u.loop.var->name, bn, for_kind_name(l->u.loop.kind));
	}
	for (int i = 0; i < r->n; i++) {
		const Stmt *l = r->loops[i];
		if (an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent) ||
		    uses_any(l->u.loop.min, r->n, r->vars) || uses_any(l->u.loop.extent, r->n, r->vars))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "rfactor: not supported: the range of loop '%s' reads memory or another loop of the nest",
				       l->u.loop.var->name);
	}
	for (int k = 0; k < r->info->niters; k++) {
		const BlockIter *it = &r->info->iters[k];
		if (it->type != ITER_SPATIAL && it->type != ITER_REDUCE)
			return rw_fail(c, RW_UNSUPPORTED, it->var->span,
				       "rfactor: not supported: iter var '%s' is of type %s", it->var->name,
				       iter_type_name(it->type));
		if (an_expr_has_load(r->view.bindings[k]))
			return rw_fail(c, RW_UNSUPPORTED, it->var->span,
				       "rfactor: not supported: the binding of iter var '%s' reads memory", it->var->name);
		for (int i = 0; i < r->n; i++)
			if (ir_expr_uses_var(r->view.bindings[k], r->vars[i])) {
				if (it->type == ITER_REDUCE)
					r->reduce[i] = true;
				else
					spatial[i] = true;
			}
	}
	for (int i = 0; i < r->n; i++)
		if (r->reduce[i] && spatial[i])
			return rw_fail(c, RW_PRECONDITION, r->loops[i]->span,
				       "rfactor: loop '%s' is bound to both a spatial and a reduce iter var of block '%s'",
				       r->vars[i]->name, bn);
	/* a loop no iter var is bound to repeats the whole reduction: as the
	 * factored loop it is a reduction loop, and rfactor.init_first is
	 * refuted unless it runs once */
	if (!r->reduce[r->rf] && !spatial[r->rf])
		r->reduce[r->rf] = true;
	if (!r->reduce[r->rf])
		return rw_fail(c, RW_PRECONDITION, r->loops[r->rf]->span,
			       "rfactor: loop '%s' is not a reduction loop of block '%s' (no reduce iter var is bound to it)",
			       r->vars[r->rf]->name, bn);
	return RW_OK;
}

/* ---------- instances as points of the nest ---------- */

/* e over iter vars -> over loop variables, then the nest's variables
 * replaced by `pt` (NULL: kept). */
static Expr *at_point(Arena *a, const Rf *r, Expr *e, Expr **pt)
{
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(r->info->niters + 1));
	for (int k = 0; k < r->info->niters; k++)
		from[k] = r->info->iters[k].var;
	e = ir_subst_expr(a, e, r->info->niters, from, r->view.bindings);
	return pt ? ir_subst_expr(a, e, r->n, r->vars, pt) : e;
}

/* fresh variables for the nest loops (reduce loops only when
 * only_reduce; the others are `base`'s), with their ranges on o */
static Expr **point(Arena *a, const Rf *r, Obligation *o, const char *suffix, Expr **base, bool only_reduce)
{
	Expr **pt = arena_alloc(a, sizeof(Expr *) * (size_t)(r->n + 1));
	for (int i = 0; i < r->n; i++) {
		if (only_reduce && !r->reduce[i]) {
			pt[i] = base[i];
			continue;
		}
		Var *v = an_fresh_var(a, r->vars[i], suffix);
		pt[i] = ir_varref(a, v, nospan());
		obligation_add_var(a, o, v);
		obligation_add_hyp(a, o, an_loop_range(a, r->loops[i], pt[i]));
	}
	return pt;
}

static Expr *cells_equal(Arena *a, const Rf *r, Expr **p, Expr **q)
{
	Expr *eq = NULL;
	for (int k = 0; k < r->nidx; k++)
		eq = ir_and(a, eq, ir_bin(a, OP_EQ, at_point(a, r, r->idx[k], p), at_point(a, r, r->idx[k], q), nospan()));
	return eq ? eq : ir_bool(a, true);
}

static Obligation *ob(RwCtx *c, const Rf *r, const char *kind, const char *stmt)
{
	Obligation *o = rw_obligation_at(c, &c->obs, &r->top_ctx, kind, stmt, ir_bool(c->arena, true));
	obligation_add_related(c->arena, o, r->block->span);
	return o;
}

/* the reduction loops (all but `skip`, -1 for none) at their minimum */
static Expr *reduce_at_min(Arena *a, const Rf *r, Expr **pt, int skip)
{
	Expr *e = NULL;
	for (int i = 0; i < r->n; i++)
		if (r->reduce[i] && i != skip)
			e = ir_and(a, e, ir_bin(a, OP_EQ, pt[i], r->loops[i]->u.loop.min, nospan()));
	return e ? e : ir_bool(a, true);
}

static Expr *combine(Arena *a, const Rf *r, Expr *x, Expr *y)
{
	return ir_bin(a, r->op, x, y, nospan());
}

static void algebra_obligations(RwCtx *c, const Rf *r)
{
	Arena *a = c->arena;
	DType t = r->x->dtype;
	Var *va = ir_var(a, "a", t, nospan());
	Expr *x = ir_varref(a, va, nospan());
	const char *sym = binop_symbol(r->op);
	rw_reassociate_obligation(c, "rfactor", r->op, t, r->block->span);
	Obligation *id = ob(c, r, "rfactor.identity",
			    arena_printf(a, "the init value of block '%s' is the identity of %s on %s (every partial "
					    "result starts from it)", r->block->u.block.name, sym, dtype_name(t)));
	obligation_add_var(a, id, va);
	id->same_value = true;
	id->goal = ir_bin(a, OP_EQ, combine(a, r, r->init, x), x, nospan());
}

typedef struct Loads {
	const Buffer *x;
	Arena *a;
	int n, cap;
	const Expr **hit;
} Loads;

static void note_load(const Expr *e, void *ud)
{
	Loads *l = ud;
	if (e->kind == EX_LOAD && e->u.load.buf == l->x)
		VEC_PUSH(l->a, l->hit, l->n, l->cap, e);
}

static void nest_obligations(RwCtx *c, const Rf *r, const Stmt *rf_block, Expr **rf_bindings)
{
	Arena *a = c->arena;
	const char *bn = r->block->u.block.name;
	/* the updated cell depends on the spatial loops only */
	Obligation *o = ob(c, r, "rfactor.reduction_loops",
			   arena_printf(a, "block '%s' updates the same cell of %s along its reduction loops (loop '%s' "
					   "among them)", bn, r->x->name, r->vars[r->rf]->name));
	Expr **p = point(a, r, o, "_p", NULL, false);
	Expr **q = point(a, r, o, "_q", p, true);
	o->goal = cells_equal(a, r, p, q);

	bool any_spatial = false;
	for (int i = 0; i < r->n; i++)
		any_spatial |= !r->reduce[i];
	if (any_spatial) {
		o = ob(c, r, "rfactor.cells_distinct",
		       arena_printf(a, "block '%s' updates different cells of %s at different points of its spatial loops",
				    bn, r->x->name));
		p = point(a, r, o, "_p", NULL, false);
		q = point(a, r, o, "_q", NULL, false);
		Expr *differ = ir_bool(a, false);
		for (int i = 0; i < r->n; i++)
			if (!r->reduce[i])
				differ = ir_or(a, differ, ir_bin(a, OP_NE, p[i], q[i], nospan()));
		obligation_add_hyp(a, o, differ);
		o->goal = ir_not(a, cells_equal(a, r, p, q), nospan());
	}

	/* the init runs exactly at the first reduction point */
	o = ob(c, r, "rfactor.init_first",
	       arena_printf(a, "the init of block '%s' runs exactly where every reduction loop is at its minimum", bn));
	p = point(a, r, o, "", NULL, false);
	Expr *n0 = at_point(a, r, block_init_cond(a, r->info), p);
	o->goal = ir_bin(a, OP_EQ, n0, reduce_at_min(a, r, p, -1), nospan());

	o = ob(c, r, "rfactor.reduce_nonempty",
	       arena_printf(a, "every reduction loop of block '%s' runs at least once (the partial results are read)", bn));
	Expr *ne = NULL;
	for (int i = 0; i < r->n; i++)
		if (r->reduce[i])
			ne = ir_and(a, ne, ir_bin(a, OP_GT, r->loops[i]->u.loop.extent,
						  ir_int(a, 0, r->loops[i]->u.loop.extent->dtype, nospan()), nospan()));
	o->goal = ne;

	/* the init of the rfactor block: over its own iter vars, bound to
	 * the nest's variables */
	o = ob(c, r, "rfactor.rf_init",
	       arena_printf(a, "the init of block '%s_rf' runs exactly where every reduction loop but '%s' is at its minimum",
			    bn, r->vars[r->rf]->name));
	p = point(a, r, o, "", NULL, false);
	const BlockInfo *ri = rf_block->u.block.info;
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(ri->niters + 1));
	for (int k = 0; k < ri->niters; k++)
		from[k] = ri->iters[k].var;
	Expr *nrf = ir_subst_expr(a, block_init_cond(a, ri), ri->niters, from, rf_bindings);
	nrf = ir_subst_expr(a, nrf, r->n, r->vars, p);
	o->goal = ir_bin(a, OP_EQ, nrf, reduce_at_min(a, r, p, r->rf), nospan());

	/* v reads no cell the block updates */
	Loads ld = {.x = r->x, .a = a};
	expr_each_post(r->v, note_load, &ld);
	for (int k = 0; k < ld.n; k++) {
		const Expr *l = ld.hit[k];
		o = ob(c, r, "rfactor.no_self_read",
		       arena_printf(a, "the value block '%s' folds in reads %s at %d:%d only at cells the block never updates",
				    bn, r->x->name, l->span.line, l->span.col));
		obligation_add_related(a, o, l->span);
		p = point(a, r, o, "_p", NULL, false);
		q = point(a, r, o, "_q", NULL, false);
		Expr *eq = NULL;
		for (int d = 0; d < r->nidx && d < l->u.load.nidx; d++)
			eq = ir_and(a, eq, ir_bin(a, OP_EQ, at_point(a, r, l->u.load.idx[d], p),
						  at_point(a, r, r->idx[d], q), nospan()));
		o->goal = ir_not(a, eq ? eq : ir_bool(a, true), nospan());
	}
}

/* ---------- building the two blocks ---------- */

static bool buffer_name_taken(const Func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && strcmp(f->params[i].buf->name, name) == 0)
			return true;
	return stmt_find_alloc(f->body, name) != NULL;
}

static Expr **insert_index(Arena *a, const Rf *r, Expr **idx, int axis, Expr *e)
{
	Expr **out = arena_alloc(a, sizeof(Expr *) * (size_t)(r->nidx + 2));
	for (int k = 0, j = 0; k <= r->nidx; k++)
		out[k] = k == axis ? e : idx[j++];
	return out;
}

static Stmt *update_store(Arena *a, const Rf *r, Buffer *b, int n, Expr **idx, Expr *v, Span sp)
{
	Expr *cur = ir_load(a, b, n, idx, sp);
	Expr *val = r->x_left ? ir_bin(a, r->op, cur, v, sp) : ir_bin(a, r->op, v, cur, sp);
	return ir_store(a, b, n, idx, val, sp);
}

static BlockIter iter_from_loop(Arena *a, const Stmt *l, IterType t)
{
	BlockIter it;
	it.var = ir_var(a, arena_printf(a, "v%s", l->u.loop.var->name), l->u.loop.var->dtype, l->u.loop.var->span);
	it.dom_min = l->u.loop.min;
	it.dom_extent = l->u.loop.extent;
	it.type = t;
	return it;
}

/* The rfactor block (bindings over the nest's own variables). */
static Stmt *build_rf_block(Arena *a, const Rf *r, Buffer *rfb, int axis, Expr ***bindings_out)
{
	const BlockInfo *info = r->info;
	int cap = info->niters + r->n + 2;
	BlockInfo *ni = arena_alloc(a, sizeof *ni);
	ni->iters = arena_alloc(a, sizeof(BlockIter) * (size_t)cap);
	Expr **bind = arena_alloc(a, sizeof(Expr *) * (size_t)cap);
	ni->has_init = true;
	/* loop variable -> the new iter var bound to it */
	Var **lfrom = arena_alloc(a, sizeof(Var *) * (size_t)(r->n + 1));
	Expr **lto = arena_alloc(a, sizeof(Expr *) * (size_t)(r->n + 1));
	int nl = 0;
	BlockIter add = iter_from_loop(a, r->loops[r->rf], ITER_SPATIAL);
	ni->iters[ni->niters] = add;
	bind[ni->niters++] = ir_varref(a, r->vars[r->rf], nospan());
	lfrom[nl] = r->vars[r->rf];
	lto[nl++] = ir_varref(a, add.var, nospan());
	Var **ofrom = arena_alloc(a, sizeof(Var *) * (size_t)(info->niters + 1));
	Expr **oto = arena_alloc(a, sizeof(Expr *) * (size_t)(info->niters + 1));
	int no = 0;
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		Expr *b = r->view.bindings[k];
		if (it->type == ITER_SPATIAL || !ir_expr_uses_var(b, r->vars[r->rf])) {
			ni->iters[ni->niters] = *it;
			bind[ni->niters++] = b;
			continue;
		}
		for (int i = 0; i < r->n; i++) {
			if (!ir_expr_uses_var(b, r->vars[i]))
				continue;
			bool have = false;
			for (int j = 0; j < nl; j++)
				have |= lfrom[j] == r->vars[i];
			if (have)
				continue;
			BlockIter nit = iter_from_loop(a, r->loops[i], ITER_REDUCE);
			ni->iters[ni->niters] = nit;
			bind[ni->niters++] = ir_varref(a, r->vars[i], nospan());
			lfrom[nl] = r->vars[i];
			lto[nl++] = ir_varref(a, nit.var, nospan());
		}
		ofrom[no] = it->var;
		oto[no++] = ir_subst_expr(a, b, nl, lfrom, lto);
	}
	Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(r->nidx + 1));
	for (int k = 0; k < r->nidx; k++)
		idx[k] = ir_subst_expr(a, r->idx[k], no, ofrom, oto);
	Expr **ridx = insert_index(a, r, idx, axis, ir_varref(a, add.var, nospan()));
	Span sp = r->block->span;
	Stmt *init = ir_store(a, rfb, r->nidx + 1, ridx, r->init, sp);
	Stmt *upd = update_store(a, r, rfb, r->nidx + 1, ridx, ir_subst_expr(a, r->v, no, ofrom, oto), sp);
	*bindings_out = bind;
	return block_assemble(a, arena_printf(a, "%s_rf", r->block->u.block.name), ni, bind, NULL, init, upd, sp);
}

/* The write-back block (bindings over the nest's own variables). */
static Stmt *build_wb_block(Arena *a, const Rf *r, Buffer *rfb, int axis)
{
	const BlockInfo *info = r->info;
	BlockInfo *ni = arena_alloc(a, sizeof *ni);
	ni->iters = arena_alloc(a, sizeof(BlockIter) * (size_t)(info->niters + 2));
	Expr **bind = arena_alloc(a, sizeof(Expr *) * (size_t)(info->niters + 2));
	ni->has_init = true;
	BlockIter add = iter_from_loop(a, r->loops[r->rf], ITER_REDUCE);
	ni->iters[ni->niters] = add;
	bind[ni->niters++] = ir_varref(a, r->vars[r->rf], nospan());
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(info->niters + 1));
	Expr **to = arena_alloc(a, sizeof(Expr *) * (size_t)(info->niters + 1));
	int nf = 0;
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		if (it->type != ITER_SPATIAL)
			continue;
		BlockIter nit = *it;
		nit.var = an_fresh_var(a, it->var, "");
		ni->iters[ni->niters] = nit;
		bind[ni->niters++] = r->view.bindings[k];
		from[nf] = it->var;
		to[nf++] = ir_varref(a, nit.var, nospan());
	}
	Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(r->nidx + 1));
	for (int k = 0; k < r->nidx; k++)
		idx[k] = ir_subst_expr(a, r->idx[k], nf, from, to);
	Expr **ridx = insert_index(a, r, idx, axis, ir_varref(a, add.var, nospan()));
	Span sp = r->block->span;
	Stmt *init = ir_store(a, r->x, r->nidx, idx, r->init, sp);
	Stmt *upd = update_store(a, r, r->x, r->nidx, idx, ir_load(a, rfb, r->nidx + 1, ridx, sp), sp);
	return block_assemble(a, r->block->u.block.name, ni, bind, NULL, init, upd, sp);
}

/* Copies (fresh variables) of the nest loops `keep` around block b, whose
 * bindings are over the nest's own variables. */
static Stmt *wrap_nest(Arena *a, const Rf *r, const bool *keep, Stmt *b)
{
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(r->n + 1));
	Expr **to = arena_alloc(a, sizeof(Expr *) * (size_t)(r->n + 1));
	Var **nv = arena_alloc(a, sizeof(Var *) * (size_t)(r->n + 1));
	int nf = 0;
	for (int i = 0; i < r->n; i++)
		if (keep[i]) {
			nv[i] = an_fresh_var(a, r->vars[i], "");
			from[nf] = r->vars[i];
			to[nf++] = ir_varref(a, nv[i], nospan());
		}
	Stmt *s = ir_subst_stmt(a, b, nf, from, to);
	for (int i = r->n - 1; i >= 0; i--)
		if (keep[i]) {
			const Stmt *l = r->loops[i];
			s = ir_for(a, nv[i], l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s, l->span);
		}
	return s;
}

/* The allocation of b placed after the function's leading allocations
 * (where TVM appends it to the root block's alloc_buffers). */
static Stmt *alloc_after_leading(Arena *a, Stmt *body, Buffer *b, Span sp)
{
	Stmt *s = skip_single(body);
	if (s->kind == ST_ALLOC && s->u.alloc.body)
		return ir_alloc(a, s->u.alloc.buf, alloc_after_leading(a, s->u.alloc.body, b, sp), s->span);
	return ir_alloc(a, b, body, sp);
}

/* ---------- the primitive ---------- */

RwStatus rw_rfactor(RwCtx *c, const char *loop, int64_t factor_axis)
{
	Arena *a = c->arena;
	Rf r;
	memset(&r, 0, sizeof r);
	RwStatus st = find_parts(c, loop, &r);
	if (st == RW_OK)
		st = read_update(c, &r);
	if (st == RW_OK)
		st = classify(c, &r);
	if (st != RW_OK)
		return st;
	const char *bn = r.block->u.block.name;
	int nd = r.nidx;
	if (factor_axis < -(nd + 1) || factor_axis > nd)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "rfactor: factor_axis %lld is out of range: %s has %d dimension%s, so it must be in [%d, %d]",
			       (long long)factor_axis, r.x->name, nd, nd == 1 ? "" : "s", -(nd + 1), nd);
	int axis = (int)(factor_axis < 0 ? factor_axis + nd + 1 : factor_axis);
	for (int k = 0; k < r.info->niters; k++)
		if (r.info->iters[k].type == ITER_REDUCE) {
			for (int d = 0; d < nd; d++)
				if (ir_expr_uses_var(r.idx[d], r.info->iters[k].var))
					return rw_fail(c, RW_UNSUPPORTED, r.block->span,
						       "rfactor: not supported: the updated cell of %s uses reduce iter var '%s'",
						       r.x->name, r.info->iters[k].var->name);
		}
	const char *rf_name = arena_printf(a, "%s_rf", bn);
	if (rw_find_block(c->func, rf_name))
		return rw_fail(c, RW_PRECONDITION, r.block->span, "rfactor: function '%s' already has a block named '%s'",
			       c->func->name, rf_name);
	/* the rfactor buffer: X's shape with the loop's extent at axis */
	const char *bname = arena_printf(a, "%s_rf", r.x->name);
	for (int k = 1; buffer_name_taken(c->func, bname); k++)
		bname = arena_printf(a, "%s_rf_%d", r.x->name, k);
	const Stmt *rl = r.loops[r.rf];
	Expr **shape = arena_alloc(a, sizeof(Expr *) * (size_t)(nd + 2));
	for (int k = 0, j = 0; k <= nd; k++)
		shape[k] = k == axis ? rl->u.loop.extent : r.x->shape[j++];
	Buffer *rfb = ir_buffer(a, bname, r.x->dtype, nd + 1, shape, r.block->span);
	/* rfactor.shape: X_rf is allocated for the whole function, its shape
	 * (the factored loop's extent among X's) evaluated at entry, also on
	 * runs where the nest never evaluates it (red team: under `if m !=
	 * 0`, T.max(T.min(100 // m, 4), 1) divided by zero at m = 0) */
	if (!rw_entry_shape_obligation(c, "rfactor.shape", rfb, rl->span))
		return RW_UNSUPPORTED;

	Expr **rf_bind;
	Stmt *rf_block = build_rf_block(a, &r, rfb, axis, &rf_bind);
	Stmt *wb_block = build_wb_block(a, &r, rfb, axis);
	bool *all = arena_alloc(a, sizeof(bool) * (size_t)(r.n + 1));
	bool *wb = arena_alloc(a, sizeof(bool) * (size_t)(r.n + 1));
	for (int i = 0; i < r.n; i++) {
		all[i] = true;
		wb[i] = !r.reduce[i] || i == r.rf;
	}
	Stmt *pair[2] = {wrap_nest(a, &r, all, rf_block), wrap_nest(a, &r, wb, wb_block)};

	algebra_obligations(c, &r);
	nest_obligations(c, &r, rf_block, rf_bind);

	Stmt *body = an_replace_at(a, c->func->body, r.top_ctx.path, r.top_ctx.depth,
				   ir_seq(a, 2, pair, r.loops[0]->span));
	c->out = an_with_body(a, c->func, alloc_after_leading(a, body, rfb, c->call_span));
	c->note = arena_printf(a, "block '%s' reduces into %s over every loop of the nest; block '%s' reduces %s into %s%s%s",
			       rf_name, bname, bn, bname, r.x->name, c->note ? "; " : "", c->note ? c->note : "");
	return RW_OK;
}
