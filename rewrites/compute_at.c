/* rewrites/compute_at.c — compute_at(block, loop): the producer block
 * moves to the start of the body of a loop of a later statement and, per
 * iteration, computes only the box of its buffer that the body reads
 * (bound inference, region.h); the intermediate buffer shrinks to the box.
 * Obligations (proofs/compute_at.md): compute_at.cover, .within, .fit,
 * .inputs_unchanged, .index. */
#include "rewrites/attach.h"
#include "rewrites/block_nest.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/expr_query.h"
#include "kernel/print.h"

/* The producer: `with T.block(name): for p1..pk: [if g:] B[..] = v` with
 * the store indexing B by one loop variable per dimension plus an offset
 * free of the loop variables. */
/* Loop iterations the report-only exactness note may enumerate. */
#define NOTE_ENUM_BUDGET (1L << 14)

typedef struct Producer {
	Stmt *block;
	int nloops;
	Stmt *loops[AN_MAX_DEPTH];
	int nguards;
	Expr *guards[AN_MAX_DEPTH];
	Span guard_spans[AN_MAX_DEPTH];
	Stmt *store;
	Stmt *init;	  /* TVM's T.init(): `if init_cond: B[f] = v0` before the store */
	Expr *init_cond;
	Span init_span;
	Buffer *buf;
	int loop_of_dim[AN_MAX_DEPTH]; /* store index d = var(loops[k]) + offset[d], */
	Expr *offset[AN_MAX_DEPTH];    /* or offset[d] - var(loops[k]) when reversed[d] */
	bool reversed[AN_MAX_DEPTH];
	/* general: store index d = sum coef[k] * var(loops[k]) over the loops
	 * k of dimension d (dim_of_loop) + offset[d], several loops per
	 * dimension (a tiled or blockized producer) */
	bool general;
	int64_t coef[AN_MAX_DEPTH];
	int dim_of_loop[AN_MAX_DEPTH];
	/* the general form over a transformed layout (transform_layout's
	 * [j // c, ..., j % c]): dim_of_loop and offset then name logical
	 * dimensions, each one store index, or a pair `u // c` at dimension
	 * ldiv and `u % c` at lmod (lmod >= 0) whose cell x gives u = c *
	 * x[ldiv] + x[lmod] */
	int nlogical;
	int ldiv[AN_MAX_DEPTH], lmod[AN_MAX_DEPTH];
	int64_t lc[AN_MAX_DEPTH];
} Producer;

/* The rewritten producer's ranges and the shrunk buffer. */
typedef struct Plan {
	Expr *lo[AN_MAX_DEPTH], *ext[AN_MAX_DEPTH]; /* per producer loop */
	Expr *end[AN_MAX_DEPTH];		    /* lo + ext, for reports */
	Expr *cell_lo[AN_MAX_DEPTH], *cell_end[AN_MAX_DEPTH]; /* per dim, for reports */
	Buffer *to;			/* B' (== B when nothing shrinks) */
	Expr *base[AN_MAX_DEPTH];	/* per dim; NULL when not shrunk */
	int64_t shape[AN_MAX_DEPTH];	/* shrunk extents */
	bool any_shrunk;
	bool demoted; /* a vectorized or unrolled producer loop became serial */
} Plan;

static Stmt *skip_single_seq(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

static bool uses_loop_vars(const Producer *p, const Expr *e)
{
	for (int k = 0; k < p->nloops; k++)
		if (ir_expr_uses_var(e, p->loops[k]->u.loop.var))
			return true;
	return false;
}

/* an offset free of the producer's loop variables and of loads */
static bool producer_offset(const Expr *y, void *p)
{
	return !uses_loop_vars(p, y) && !an_expr_has_load(y);
}

/* idx = var + offset, or offset - var (*reversed: TVM's Y[9 - vi]), with
 * offset free of loop variables and loads */
static bool match_index(Arena *a, const Producer *p, Expr *idx, int *k, Expr **offset,
			bool *reversed)
{
	*reversed = false;
	if (attach_match_index(a, p->loops, p->nloops, idx, producer_offset, (void *)p, k, offset))
		return true;
	if (idx->kind != EX_BIN || idx->u.bin.op != OP_SUB ||
	    (*k = attach_loop_index(p->loops, p->nloops, idx->u.bin.b)) < 0 ||
	    !producer_offset(idx->u.bin.a, (void *)p))
		return false;
	*offset = idx->u.bin.a;
	*reversed = true;
	return true;
}

/* The producer loop value that stores cell x of dimension d. */
static Expr *loop_value(Arena *a, const Producer *p, int d, Expr *x)
{
	return p->reversed[d] ? ir_sub(a, p->offset[d], x) : ir_sub(a, x, p->offset[d]);
}

static RwStatus parse_index(RwCtx *c, Producer *p)
{
	const Stmt *s = p->store;
	const char *name = p->block->u.block.name;
	for (int k = 0; k < p->nloops; k++)
		p->dim_of_loop[k] = -1;
	for (int d = 0; d < p->buf->ndim; d++) {
		int k;
		if (!match_index(c->arena, p, s->u.store.idx[d], &k, &p->offset[d], &p->reversed[d]) ||
		    p->dim_of_loop[k] >= 0)
			return rw_fail(c, RW_UNSUPPORTED, s->span,
				       "index %d of the store of block \"%s\" must be a loop variable of its own plus an offset",
				       d, name);
		p->loop_of_dim[d] = k;
		p->dim_of_loop[k] = d;
	}
	return RW_OK;
}

/* Every load of buf in e has exactly the indices idx. */
static bool loads_at(const Expr *e, const Buffer *buf, int n, Expr *const *idx)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return true;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			if (!loads_at(e->u.load.idx[i], buf, n, idx))
				return false;
		if (e->u.load.buf != buf)
			return true;
		for (int i = 0; i < n; i++)
			if (!rg_same(e->u.load.idx[i], idx[i]))
				return false;
		return true;
	case EX_BIN:
		return loads_at(e->u.bin.a, buf, n, idx) && loads_at(e->u.bin.b, buf, n, idx);
	case EX_NOT: case EX_NEG: case EX_CAST:
		return loads_at(e->u.un.a, buf, n, idx);
	case EX_SELECT:
		return loads_at(e->u.sel.cond, buf, n, idx) && loads_at(e->u.sel.a, buf, n, idx) &&
		       loads_at(e->u.sel.b, buf, n, idx);
	case EX_LET:
		return loads_at(e->u.let.value, buf, n, idx) && loads_at(e->u.let.body, buf, n, idx);
	case EX_OPAQUE: /* what it reads is unknown */
		return false;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!loads_at(e->u.call.args[i], buf, n, idx))
				return false;
		return true;
	case EX_COUNT:
		break;
	}
	abort();
}

/* A reduction producer (TVM's T.init): the loops in the store index are
 * its spatial loops (one per dimension), the others its reduction loops;
 * the init and the update store the same cell, the update reads the
 * buffer only at that cell and the init not at all. Each spatial point
 * then computes its cell from scratch (compute_at.init_first proves the
 * init runs first), so recomputing it gives the same value. */
static RwStatus parse_reduction(RwCtx *c, Producer *p)
{
	const Stmt *s = p->store, *in = p->init;
	const char *name = p->block->u.block.name;
	int nd = p->buf->ndim;
	if (in->u.store.buf != p->buf || nd > p->nloops || nd == 0)
		return rw_fail(c, RW_UNSUPPORTED, in->span,
			       "the init of block \"%s\" must store the cell of %s its update stores",
			       name, p->buf->name);
	for (int d = 0; d < nd; d++)
		if (!rg_same(in->u.store.idx[d], s->u.store.idx[d]))
			return rw_fail(c, RW_UNSUPPORTED, in->span,
				       "the init of block \"%s\" must store the cell of %s its update stores",
				       name, p->buf->name);
	RwStatus st = parse_index(c, p);
	if (st != RW_OK)
		return st;
	if (an_expr_reads(in->u.store.value, p->buf) || an_expr_has_undef(in->u.store.value) ||
	    an_expr_has_load(p->init_cond) || an_expr_has_undef(p->init_cond))
		return rw_fail(c, RW_UNSUPPORTED, in->span,
			       "the init of block \"%s\" must not read %s or buffers in its condition, nor store T.undef()",
			       name, p->buf->name);
	if (!loads_at(s->u.store.value, p->buf, nd, s->u.store.idx) || an_expr_has_undef(s->u.store.value))
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "the update of block \"%s\" must read %s only at the cell it stores",
			       name, p->buf->name);
	for (int k = 0; k < p->nloops; k++) {
		const Stmt *l = p->loops[k];
		if (uses_loop_vars(p, l->u.loop.min) || uses_loop_vars(p, l->u.loop.extent) ||
		    an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "the range of loop '%s' of block \"%s\" must not depend on other loops of the block or on buffer contents",
				       l->u.loop.var->name, name);
		if (p->dim_of_loop[k] >= 0)
			continue;
		for (int g = 0; g < p->nguards; g++)
			if (ir_expr_uses_var(p->guards[g], l->u.loop.var))
				return rw_fail(c, RW_UNSUPPORTED, p->guard_spans[g],
					       "the condition of block \"%s\" must not use its reduction loop '%s'",
					       name, l->u.loop.var->name);
	}
	for (int g = 0; g < p->nguards; g++)
		if (an_expr_has_load(p->guards[g]) || an_expr_has_undef(p->guards[g]))
			return rw_fail(c, RW_UNSUPPORTED, p->guard_spans[g],
				       "the condition of block \"%s\" must not read buffers", name);
	return RW_OK;
}

/* Each store index an affine form of the producer loops with positive
 * coefficients plus an offset free of them and of loads, each loop in
 * exactly one dimension (TVM's tiled and blockized producers:
 * B[i_o * 16 + i_i, ...]); or, over a transformed layout, a pair of
 * dimensions `u // c` and `u % c` of one such form u (transform_layout's
 * split of an axis), which counts as one logical dimension. */
static bool split_pair(Expr *e, Expr **u, int64_t *cc, BinOp op)
{
	return e->kind == EX_BIN && e->u.bin.op == op && an_const_int(e->u.bin.b, cc) && *cc > 0 &&
	       (*u = e->u.bin.a) != NULL;
}

static bool parse_general_index(RwCtx *c, Producer *p)
{
	RgEnv env;
	rg_env_init(&env, c->arena);
	Var *vars[AN_MAX_DEPTH];
	for (int k = 0; k < p->nloops; k++) {
		vars[k] = p->loops[k]->u.loop.var;
		rg_push_loop(&env, vars[k], p->loops[k]->u.loop.min, p->loops[k]->u.loop.extent, true);
		p->dim_of_loop[k] = -1;
	}
	bool paired[AN_MAX_DEPTH] = {false};
	p->nlogical = 0;
	for (int d = 0; d < p->buf->ndim; d++) {
		if (paired[d])
			continue;
		Expr **idx = p->store->u.store.idx, *u = idx[d], *v;
		int64_t cc = 0, cm;
		int m = -1;
		if (split_pair(idx[d], &u, &cc, OP_FLOORDIV)) {
			for (int e = 0; e < p->buf->ndim && m < 0; e++)
				if (e != d && !paired[e] && split_pair(idx[e], &v, &cm, OP_FLOORMOD) && cm == cc &&
				    rg_same(u, v))
					m = e;
			if (m < 0)
				return false;
			paired[m] = true;
		}
		int l = p->nlogical++;
		p->ldiv[l] = d;
		p->lmod[l] = m;
		p->lc[l] = cc;
		int64_t coef[AN_MAX_DEPTH];
		Expr *rest;
		if (!rg_linear(&env, u, p->nloops, vars, coef, &rest) || uses_loop_vars(p, rest) ||
		    an_expr_has_load(rest))
			return false;
		p->offset[l] = rest;
		p->reversed[l] = false;
		p->loop_of_dim[l] = -1;
		for (int k = 0; k < p->nloops; k++) {
			if (!coef[k])
				continue;
			if (coef[k] < 0 || p->dim_of_loop[k] >= 0)
				return false;
			p->dim_of_loop[k] = l;
			p->coef[k] = coef[k];
		}
	}
	for (int k = 0; k < p->nloops; k++)
		if (p->dim_of_loop[k] < 0)
			return false; /* a loop that rewrites the same cells */
	p->general = true;
	return true;
}

static RwStatus parse_producer(RwCtx *c, Stmt *block, Producer *p)
{
	memset(p, 0, sizeof *p);
	p->block = block;
	const char *shape_msg = "the producer block \"%s\" must be a perfect loop nest around one store (under `if`s without `else`)";
	Stmt *s = skip_single_seq(block->u.block.body);
	for (;;) {
		if (s->kind == ST_FOR && p->nloops < AN_MAX_DEPTH) {
			p->loops[p->nloops++] = s;
			s = skip_single_seq(s->u.loop.body);
		} else if (s->kind == ST_BLOCK && p->nloops > 0) {
			/* an inner block (TVM's blockized B_outer / B_inner):
			 * transparent, its iter vars are lets */
			s = skip_single_seq(s->u.block.body);
		} else if (s->kind == ST_LET && p->nloops > 0 && !an_expr_has_load(s->u.let.value) &&
			   dtype_is_int(s->u.let.var->dtype)) {
			Var *v = s->u.let.var;
			Expr *val = s->u.let.value;
			s = skip_single_seq(ir_subst_stmt(c->arena, s->u.let.body, 1, &v, &val));
		} else {
			break;
		}
	}
	while (s->kind == ST_IF && !s->u.cond.else_s && p->nguards < AN_MAX_DEPTH) {
		p->guard_spans[p->nguards] = s->span;
		p->guards[p->nguards++] = s->u.cond.cond;
		s = skip_single_seq(s->u.cond.then_s);
	}
	if (s->kind == ST_SEQ && s->u.seq.n == 2 && s->u.seq.items[0]->kind == ST_IF &&
	    !s->u.seq.items[0]->u.cond.else_s) {
		/* a reduction: `if init_cond: B[f] = v0` then `B[f] = v(B[f])` */
		Stmt *g = s->u.seq.items[0];
		Stmt *init = skip_single_seq(g->u.cond.then_s);
		if (init->kind != ST_STORE)
			return rw_fail(c, RW_UNSUPPORTED, block->span, shape_msg, block->u.block.name);
		p->init = init;
		p->init_cond = g->u.cond.cond;
		p->init_span = g->span;
		s = skip_single_seq(s->u.seq.items[1]);
	}
	if (s->kind != ST_STORE || p->nloops == 0)
		return rw_fail(c, RW_UNSUPPORTED, block->span, shape_msg, block->u.block.name);
	p->store = s;
	p->buf = s->u.store.buf;
	const char *name = block->u.block.name;
	if (p->init)
		return parse_reduction(c, p);
	bool general = p->buf->ndim != p->nloops && parse_general_index(c, p);
	if ((p->buf->ndim != p->nloops && !general) || p->nloops > AN_MAX_DEPTH)
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "the store of block \"%s\" must index %s by one loop variable per dimension, or by sums of its loops times positive constants, each loop in one dimension (%d loops, %d dimensions)",
			       name, p->buf->name, p->nloops, p->buf->ndim);
	RwStatus st = general ? RW_OK : parse_index(c, p);
	if (st != RW_OK)
		return st;
	for (int k = 0; k < p->nloops; k++) {
		const Stmt *l = p->loops[k];
		if (uses_loop_vars(p, l->u.loop.min) || uses_loop_vars(p, l->u.loop.extent) ||
		    an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "the range of loop '%s' of block \"%s\" must not depend on other loops of the block or on buffer contents",
				       l->u.loop.var->name, name);
	}
	for (int g = 0; g < p->nguards; g++)
		if (an_expr_has_load(p->guards[g]) || an_expr_has_undef(p->guards[g]))
			return rw_fail(c, RW_UNSUPPORTED, p->guard_spans[g],
				       "the condition of block \"%s\" must not read buffers", name);
	if (an_expr_reads(s->u.store.value, p->buf))
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "block \"%s\" reads the buffer %s it produces (reductions are not supported)",
			       name, p->buf->name);
	if (an_expr_has_undef(s->u.store.value))
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "block \"%s\" stores T.undef(); recomputing it would not give the same value",
			       name);
	return RW_OK;
}

/* Depth of the allocation of buf on the path to the sequence, or -1. */
static int find_alloc(const RwCtx *c, const AttachSite *s, const Buffer *buf)
{
	Stmt *n = c->func->body;
	for (int d = 0; d <= s->seq_depth; d++) {
		if (n->kind == ST_ALLOC && n->u.alloc.buf == buf)
			return d;
		if (d < s->seq_depth)
			n = attach_stmt_at(n, s->block.path + d, 1);
	}
	return -1;
}

/* The function body with the block and the attach loop's body replaced
 * by `pass`: what remains reads B only where the moved producer no longer
 * serves it. */
static Stmt *body_without(RwCtx *c, const AttachSite *s)
{
	Arena *a = c->arena;
	const Stmt *l = s->loop.stmt;
	Stmt *hollow = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
			      ir_pass(a, l->span), l->span);
	Stmt *b = an_replace_at(a, c->func->body, s->loop.path, s->loop.depth, hollow);
	return an_replace_at(a, b, s->block.path, s->block.depth, ir_pass(a, s->block.stmt->span));
}

static void push_fixed_env(const AttachSite *s, RgEnv *env)
{
	for (int k = 0; k < s->loop.nloops; k++) {
		Stmt *l = s->loop.loops[k];
		rg_push_loop(env, l->u.loop.var, l->u.loop.min, l->u.loop.extent, false);
	}
	for (int k = 0; k < s->loop.nlets; k++) {
		Stmt *l = s->loop.lets[k];
		rg_push_let(env, l->u.let.var, l->u.let.value, false);
	}
	Stmt *l = s->loop.stmt;
	rg_push_loop(env, l->u.loop.var, l->u.loop.min, l->u.loop.extent, false);
}

/* ---------- the plan: restricted ranges and the shrunk buffer ---------- */

/* The lowest cell of dimension d that the restricted producer writes. */
static Expr *cell_lo(Arena *a, const Producer *p, const Plan *pl, int d)
{
	if (p->general)
		return pl->cell_lo[d];
	int k = p->loop_of_dim[d];
	if (!p->reversed[d])
		return ir_add(a, pl->lo[k], p->offset[d]);
	return ir_sub(a, p->offset[d],
		      ir_sub(a, pl->end[k], ir_int(a, 1, pl->end[k]->dtype, (Span){0})));
}

/* The general form: each producer loop (outermost first) keeps the values
 * whose store index can land in the box, with the outer loops fixed at
 * their new ranges and the inner ones relaxed over their old ones
 * (attach_invert_index); whole tiles at worst. The cells one iteration
 * writes are bounded over the new ranges. */
static bool plan_general_ranges(RgEnv *env, const Producer *p, const RgBox *box, Plan *pl)
{
	Arena *a = env->a;
	int nv = env->nvars, ng = env->nguards;
	bool ok = true;
	for (int k = 0; k < p->nloops && ok; k++) {
		const Stmt *l = p->loops[k];
		int mark = env->nvars, gmark = env->nguards;
		for (int j = k + 1; j < p->nloops; j++)
			rg_push_loop(env, p->loops[j]->u.loop.var, p->loops[j]->u.loop.min,
				     p->loops[j]->u.loop.extent, true);
		Expr *lo = l->u.loop.min;
		Expr *end = rg_simplify(env, ir_add(a, l->u.loop.min, l->u.loop.extent));
		/* every store index that uses the loop narrows it (both halves
		 * of a split pair: `u % c` only where the box is not the whole
		 * remainder range) */
		for (int d = 0; d < p->buf->ndim && ok; d++) {
			Expr *idx = p->store->u.store.idx[d], *vlo, *vhi;
			if (!ir_expr_uses_var(idx, l->u.loop.var) || !box->lo[d] || !box->hi[d])
				continue;
			if (!attach_invert_index(env, idx, l->u.loop.var, box->lo[d], box->hi[d], &vlo, &vhi)) {
				ok = false;
				for (int q = 0; q < p->nlogical; q++)
					ok |= p->lmod[q] == d; /* a pair's `%`: no narrowing */
				continue;
			}
			if (vlo) {
				lo = rg_max(env, rg_simplify(env, vlo), lo);
				end = rg_min(env, rg_simplify(env, ir_add(a, vhi, ir_int(a, 1, vhi->dtype, (Span){0}))), end);
			}
		}
		rg_pop(env, mark, gmark);
		pl->lo[k] = lo;
		pl->end[k] = end;
		pl->ext[k] = rg_simplify(env, ir_sub(a, end, lo));
		rg_push_loop(env, l->u.loop.var, pl->lo[k], pl->ext[k], true);
	}
	for (int d = 0; d < p->buf->ndim && ok; d++) {
		Expr *clo, *chi;
		if (!rg_sym_bounds(env, p->store->u.store.idx[d], &clo, &chi)) {
			clo = box->lo[d]; /* a guess: fit decides */
			chi = box->hi[d];
		}
		if (!clo || !chi) {
			ok = false;
			break;
		}
		pl->cell_lo[d] = rg_simplify(env, clo);
		pl->cell_end[d] = rg_simplify(env, ir_add(a, chi, ir_int(a, 1, chi->dtype, (Span){0})));
	}
	rg_pop(env, nv, ng);
	return ok;
}

static void plan_ranges(RgEnv *env, const Producer *p, const RgBox *box, Plan *pl)
{
	Arena *a = env->a;
	for (int k = 0; k < p->nloops; k++) /* reduction loops keep their range */
		if (p->dim_of_loop[k] < 0) {
			const Stmt *l = p->loops[k];
			pl->lo[k] = l->u.loop.min;
			pl->ext[k] = l->u.loop.extent;
			pl->end[k] = rg_simplify(env, ir_add(a, l->u.loop.min, l->u.loop.extent));
		}
	for (int d = 0; d < p->buf->ndim; d++) {
		int k = p->loop_of_dim[d];
		const Stmt *l = p->loops[k];
		Expr *pmin = l->u.loop.min, *pend = ir_add(a, l->u.loop.min, l->u.loop.extent);
		Expr *lo = pmin, *end = pend;
		if (box->lo[d] && box->hi[d]) {
			/* a reversed index maps the box's top to the lowest loop value */
			Expr *first = p->reversed[d] ? box->hi[d] : box->lo[d];
			Expr *last = p->reversed[d] ? box->lo[d] : box->hi[d];
			lo = rg_simplify(env, loop_value(a, p, d, first));
			end = rg_simplify(env, ir_add(a, loop_value(a, p, d, last),
						      ir_int(a, 1, last->dtype, (Span){0})));
			/* never outside the producer's own range: the simplifier
			 * drops the clamp where the bounds show it is not needed */
			lo = rg_max(env, lo, pmin);
			end = rg_min(env, end, rg_simplify(env, pend));
		}
		pl->lo[k] = lo;
		pl->end[k] = end;
		pl->ext[k] = rg_simplify(env, ir_sub(a, end, lo));
		pl->cell_lo[d] = rg_simplify(env, cell_lo(a, p, pl, d));
		pl->cell_end[d] = rg_simplify(env, ir_add(a, pl->cell_lo[d], pl->ext[k]));
		if (!p->reversed[d]) /* as the loop's end prints */
			pl->cell_end[d] = an_fold(a, ir_add(a, pl->end[k], p->offset[d]));
	}
}

static bool reads_outside(RwCtx *c, const AttachSite *s, const Buffer *buf)
{
	return an_stmt_reads(body_without(c, s), buf);
}

/* Size of each dimension of B': the largest extent over the attach path
 * (by enumeration), else its numeric bound; the fit obligation proves it. */
static void plan_shrink(RwCtx *c, RgEnv *env, const AttachSite *s, const Producer *p, Plan *pl)
{
	Arena *a = c->arena;
	int nd = p->buf->ndim;
	Stmt *loops[AN_MAX_DEPTH + 1];
	int nl = 0;
	for (int k = 0; k < s->loop.nloops; k++)
		loops[nl++] = s->loop.loops[k];
	loops[nl++] = s->loop.stmt;
	Expr *exts[AN_MAX_DEPTH];
	int64_t maxext[AN_MAX_DEPTH];
	bool known[AN_MAX_DEPTH];
	for (int d = 0; d < nd; d++)
		exts[d] = p->general ? rg_simplify(env, ir_sub(a, pl->cell_end[d], pl->cell_lo[d]))
				     : pl->ext[p->loop_of_dim[d]];
	bool enumerated = rg_max_over_loops(nl, loops, nd, exts, 1L << 20, maxext);
	for (int d = 0; d < nd; d++) {
		int64_t hi;
		known[d] = enumerated;
		if (!enumerated && rg_upper_bound(env, exts[d], &hi)) {
			maxext[d] = hi;
			known[d] = true;
		}
	}
	pl->to = p->buf;
	if (reads_outside(c, s, p->buf))
		return; /* the cover obligation for those reads decides */
	Expr **shape = arena_alloc(a, sizeof(Expr *) * (size_t)(nd + 1));
	for (int d = 0; d < nd; d++) {
		shape[d] = p->buf->shape[d];
		int64_t orig;
		if (!known[d] || (an_const_int(p->buf->shape[d], &orig) && maxext[d] >= orig))
			continue;
		pl->shape[d] = maxext[d] < 1 ? 1 : maxext[d];
		shape[d] = ir_int(a, pl->shape[d], p->buf->shape[d]->dtype, (Span){0});
		pl->base[d] = rg_simplify(env, cell_lo(a, p, pl, d));
		pl->any_shrunk = true;
	}
	if (!pl->any_shrunk)
		return;
	Buffer *b = ir_buffer_copy(a, p->buf);
	b->shape = shape;
	b->layout = NULL; /* a fresh allocation: the history named the old shape (unpadded: check_buffer) */
	pl->to = b;
}

/* ---------- obligations over the producer ---------- */

static Obligation *producer_obligation(RwCtx *c, const AttachSite *s, const Producer *p,
				       const Plan *pl, const char *kind, const char *stmt,
				       Expr *goal, bool with_guards)
{
	Arena *a = c->arena;
	Obligation *o = attach_base(c, s, kind, stmt, goal, p->block->span);
	for (int k = 0; k < p->nloops; k++) {
		Var *v = p->loops[k]->u.loop.var;
		Expr *r = ir_varref(a, v, (Span){0});
		obligation_add_var(a, o, v);
		obligation_add_hyp(a, o, ir_and(a, ir_bin(a, OP_LE, pl->lo[k], r, (Span){0}),
						ir_bin(a, OP_LT, r, ir_add(a, pl->lo[k], pl->ext[k]), (Span){0})));
	}
	for (int g = 0; with_guards && g < p->nguards; g++)
		obligation_add_hyp(a, o, p->guards[g]);
	obligation_add_related(a, o, p->store->span);
	return o;
}

/* within: every instance of the moved producer is an instance of the
 * original one: for all p in the restricted ranges, pmin <= p < pmin+pext. */
static void within_obligation(RwCtx *c, const AttachSite *s, const Producer *p, const Plan *pl)
{
	Arena *a = c->arena;
	Expr *goal = NULL;
	for (int k = 0; k < p->nloops; k++)
		goal = ir_and(a, goal, an_loop_range(a, p->loops[k],
						     ir_varref(a, p->loops[k]->u.loop.var, (Span){0})));
	char *stmt = arena_printf(a, "every instance of block \"%s\" run in an iteration of %s is an instance of the original block",
				  p->block->u.block.name, s->loop.stmt->u.loop.var->name);
	oblist_push(a, &c->obs, producer_obligation(c, s, p, pl, "compute_at.within", stmt, goal, false));
}

/* fit: the shrunk buffer holds what one iteration writes:
 * for all p in the restricted ranges with g(p): 0 <= f_d(p) - base_d < S'_d. */
static void fit_obligation(RwCtx *c, const AttachSite *s, const Producer *p, const Plan *pl)
{
	Arena *a = c->arena;
	Expr *goal = NULL;
	for (int d = 0; d < p->buf->ndim; d++) {
		if (!pl->base[d])
			continue;
		Expr *x = ir_sub(a, p->store->u.store.idx[d], pl->base[d]);
		goal = ir_and(a, goal, ir_and(a, ir_bin(a, OP_LE, ir_int32(a, 0), x, (Span){0}),
					      ir_bin(a, OP_LT, x, pl->to->shape[d], (Span){0})));
	}
	char *stmt = arena_printf(a, "the shrunk buffer %s holds every cell that one iteration of %s writes",
				  p->buf->name, s->loop.stmt->u.loop.var->name);
	oblist_push(a, &c->obs, producer_obligation(c, s, p, pl, "compute_at.fit", stmt, goal, true));
}

/* injective (the general form): no two instances of the original
 * producer store the same cell, so the instance cover names is the
 * cell's only writer and every recomputation stores its value. */
static void injective_obligation(RwCtx *c, const AttachSite *s, const Producer *p)
{
	Arena *a = c->arena;
	int n = p->nloops;
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	Expr *same_cell = NULL, *same_inst = NULL;
	char *stmt = arena_printf(a, "no two instances of block \"%s\" store the same cell of %s",
				  p->block->u.block.name, p->buf->name);
	Obligation *o = attach_base(c, s, "compute_at.injective", stmt, ir_bool(a, true), p->block->span);
	for (int k = 0; k < n; k++) {
		Var *v = p->loops[k]->u.loop.var;
		from[k] = v;
		Var *v2 = an_fresh_var(a, v, "_2");
		to[k] = ir_varref(a, v2, (Span){0});
		Expr *r = ir_varref(a, v, (Span){0});
		obligation_add_var(a, o, v);
		obligation_add_var(a, o, v2);
		obligation_add_hyp(a, o, an_loop_range(a, p->loops[k], r));
		obligation_add_hyp(a, o, an_loop_range(a, p->loops[k], to[k]));
		same_inst = ir_and(a, same_inst, ir_bin(a, OP_EQ, r, to[k], (Span){0}));
	}
	for (int g = 0; g < p->nguards; g++) {
		obligation_add_hyp(a, o, p->guards[g]);
		obligation_add_hyp(a, o, ir_subst_expr(a, p->guards[g], n, from, to));
	}
	for (int d = 0; d < p->buf->ndim; d++)
		same_cell = ir_and(a, same_cell, ir_bin(a, OP_EQ, p->store->u.store.idx[d],
						    ir_subst_expr(a, p->store->u.store.idx[d], n, from, to),
						    (Span){0}));
	o->goal = ir_or(a, ir_not(a, same_cell, (Span){0}), same_inst);
	obligation_add_related(a, o, p->store->span);
	oblist_push(a, &c->obs, o);
}

/* range_safe: the moved producer runs at the start of every iteration of
 * the attach loop, and its new ranges (and the base of the shrunk
 * buffer, in its store and in the rebased reads) come from the
 * consumer's indices: evaluated there, they must not fault, even in an
 * iteration where the consumer's read did not run (red team: a read
 * Bp[ko * 4 // m] under `if m != 0` gave the producer the range
 * ko * 4 // m, evaluated at m = 0). Loop k's range is evaluated for the
 * values of the loops outside it, whatever the loops inside it do. False
 * (c's failure set) when the safety of an expression cannot be stated. */
static bool range_safe_obligations(RwCtx *c, const AttachSite *s, const Producer *p, const Plan *pl)
{
	Arena *a = c->arena;
	const char *name = p->block->u.block.name;
	for (int k = 0; k <= p->nloops; k++) {
		Expr *e[AN_MAX_DEPTH + 2];
		int ne = 0;
		if (k < p->nloops) {
			e[ne++] = pl->lo[k];
			e[ne++] = pl->ext[k];
		} else {
			for (int d = 0; d < p->buf->ndim; d++)
				if (pl->base[d])
					e[ne++] = pl->base[d];
		}
		Expr *goal = NULL;
		for (int i = 0; i < ne; i++) {
			if (!an_expr_may_fault(e[i], true))
				continue;
			Expr *ok = rw_safe_to_eval(a, c->func, e[i]);
			if (!ok) {
				rw_fail(c, RW_UNSUPPORTED, p->block->span,
					"compute_at: not supported: the new range of block \"%s\" may fault (it reads a buffer that is not a parameter) and would be evaluated in every iteration of '%s'",
					name, s->loop.stmt->u.loop.var->name);
				return false;
			}
			goal = ir_and(a, goal, ok);
		}
		if (!goal)
			continue;
		char *stmt = k < p->nloops
			? arena_printf(a, "the new range of loop %s of block \"%s\" cannot fault where it is evaluated (reads inside their buffers, divisors not zero)",
				       p->loops[k]->u.loop.var->name, name)
			: arena_printf(a, "the base of the region of %s cannot fault in any iteration of %s", p->buf->name,
				       s->loop.stmt->u.loop.var->name);
		Obligation *o = attach_base(c, s, "compute_at.range_safe", stmt, goal, p->block->span);
		for (int j = 0; j < k && j < p->nloops; j++) {
			Var *v = p->loops[j]->u.loop.var;
			Expr *r = ir_varref(a, v, (Span){0});
			obligation_add_var(a, o, v);
			obligation_add_hyp(a, o, ir_and(a, ir_bin(a, OP_LE, pl->lo[j], r, (Span){0}),
							ir_bin(a, OP_LT, r, ir_add(a, pl->lo[j], pl->ext[j]), (Span){0})));
		}
		oblist_push(a, &c->obs, o);
	}
	return true;
}

/* ---------- the moved producer ---------- */

/* v with its loads of B (all at the stored cell: parse) reading B' at idx. */
static Expr *rebase_value(Arena *a, const Producer *p, const Plan *pl, Expr **idx, Expr *v)
{
	int nd = p->buf->ndim;
	Expr *x, *y, *z;
	switch (v->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return v;
	case EX_LOAD: {
		if (v->u.load.buf == p->buf)
			return ir_load(a, pl->to, nd, idx, v->span);
		int n = v->u.load.nidx;
		Expr **ix = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			ix[i] = rebase_value(a, p, pl, idx, v->u.load.idx[i]);
		return ir_load(a, v->u.load.buf, n, ix, v->span);
	}
	case EX_BIN:
		x = ir_bin(a, v->u.bin.op, rebase_value(a, p, pl, idx, v->u.bin.a),
			   rebase_value(a, p, pl, idx, v->u.bin.b), v->span);
		x->dtype = v->dtype;
		return x;
	case EX_NOT:
		return ir_not(a, rebase_value(a, p, pl, idx, v->u.un.a), v->span);
	case EX_NEG:
		return ir_neg(a, rebase_value(a, p, pl, idx, v->u.un.a), v->span);
	case EX_CAST:
		return ir_cast(a, v->dtype, rebase_value(a, p, pl, idx, v->u.un.a), v->span);
	case EX_SELECT:
		x = rebase_value(a, p, pl, idx, v->u.sel.cond);
		y = rebase_value(a, p, pl, idx, v->u.sel.a);
		z = rebase_value(a, p, pl, idx, v->u.sel.b);
		x = ir_select(a, x, y, z, v->span);
		x->dtype = v->dtype;
		return x;
	case EX_LET:
		return ir_let(a, v->u.let.var, rebase_value(a, p, pl, idx, v->u.let.value),
			      rebase_value(a, p, pl, idx, v->u.let.body), v->span);
	case EX_OPAQUE:
		/* not reached: parse_producer refuses a value holding an opaque
		 * call (loads_at), and the schedule refuses the function */
		return v;
	case EX_CALL: {
		Expr *args[MATH_MAX_ARGS];
		for (int i = 0; i < v->u.call.nargs; i++)
			args[i] = rebase_value(a, p, pl, idx, v->u.call.args[i]);
		x = ir_call(a, v->u.call.fn, args, v->span);
		x->dtype = v->dtype;
		return x;
	}
	case EX_COUNT:
		break;
	}
	abort();
}

/* init_first: in every spatial point the first reduction iteration (each
 * reduction loop at its minimum) runs the init, so the point computes its
 * cell from scratch wherever it runs. */
static void init_first_obligation(RwCtx *c, const AttachSite *s, const Producer *p, const Plan *pl)
{
	Arena *a = c->arena;
	Expr *first = NULL;
	for (int k = 0; k < p->nloops; k++)
		if (p->dim_of_loop[k] < 0)
			first = ir_and(a, first, ir_bin(a, OP_EQ, ir_varref(a, p->loops[k]->u.loop.var, (Span){0}),
						       p->loops[k]->u.loop.min, (Span){0}));
	Expr *goal = first ? ir_or(a, ir_not(a, first, (Span){0}), p->init_cond) : p->init_cond;
	char *stmt = arena_printf(a, "the first reduction iteration of block \"%s\" at each cell runs its init",
				  p->block->u.block.name);
	Obligation *o = producer_obligation(c, s, p, pl, "compute_at.init_first", stmt, goal, true);
	obligation_add_related(a, o, p->init_span);
	oblist_push(a, &c->obs, o);
}

static Stmt *moved_producer(RwCtx *c, const AttachSite *s, RgEnv *env, const Producer *p,
			    Plan *pl)
{
	Arena *a = c->arena;
	const Stmt *st = p->store;
	int nd = p->buf->ndim;
	Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(nd + 1));
	Expr *same = NULL;
	int nv = env->nvars, ng = env->nguards;
	for (int k = 0; k < p->nloops; k++)
		rg_push_loop(env, p->loops[k]->u.loop.var, pl->lo[k], pl->ext[k], true);
	for (int d = 0; d < nd; d++) {
		idx[d] = st->u.store.idx[d];
		if (!pl->base[d])
			continue;
		Expr *raw = ir_sub(a, idx[d], pl->base[d]);
		idx[d] = rg_simplify(env, raw);
		same = ir_and(a, same, ir_bin(a, OP_EQ, idx[d], raw, (Span){0}));
		same = ir_and(a, same, attach_no_overflow(a, idx[d]));
	}
	rg_pop(env, nv, ng);
	if (same) {
		/* index: the simplified store index is the rebased one */
		char *stmt = arena_printf(a, "the store of block \"%s\" writes the cell of %s it wrote before, moved by the base of the region, without overflow",
					  p->block->u.block.name, p->buf->name);
		oblist_push(a, &c->obs, producer_obligation(c, s, p, pl, "compute_at.index", stmt, same, true));
	}
	Stmt *body = ir_store(a, pl->to, nd, idx, rebase_value(a, p, pl, idx, st->u.store.value),
			      st->span);
	if (p->init) {
		/* the init stores and the update reads the same cell (parse) */
		Stmt *in = ir_store(a, pl->to, nd, idx, p->init->u.store.value, p->init->span);
		Stmt *items[2] = {ir_if(a, p->init_cond, in, NULL, p->init_span), body};
		body = ir_seq(a, 2, items, st->span);
	}
	for (int g = p->nguards - 1; g >= 0; g--)
		body = ir_if(a, p->guards[g], body, NULL, p->guard_spans[g]);
	for (int k = p->nloops - 1; k >= 0; k--) {
		const Stmt *l = p->loops[k];
		ForKind kind = l->u.loop.kind;
		if (kind == FOR_VECTORIZED || kind == FOR_UNROLLED) {
			kind = FOR_SERIAL; /* their extents are no longer constant */
			pl->demoted = true;
		}
		body = ir_for(a, l->u.loop.var, pl->lo[k], pl->ext[k], kind, body, l->span);
	}
	return ir_block_with(a, p->block, body);
}

/* ---------- the consumer: cover and rebased reads ---------- */

typedef struct ConsWalk {
	RwCtx *c;
	const AttachSite *site;
	const Producer *p;
	const Plan *pl;
	RgEnv *env;
	int nconds;
	Expr *conds[AN_MAX_DEPTH * 2]; /* full load-free conditions in force */
} ConsWalk;

static Obligation *read_obligation(ConsWalk *w, const char *kind, const char *stmt, Expr *goal,
				   Span sp)
{
	RwCtx *c = w->c;
	Arena *a = c->arena;
	Obligation *o = attach_base(c, w->site, kind, stmt, goal, sp);
	for (int i = 0; i < w->env->nvars; i++) {
		const RgVar *v = &w->env->vars[i];
		if (!v->relaxed)
			continue;
		Expr *r = ir_varref(a, v->var, (Span){0});
		obligation_add_var(a, o, v->var);
		if (v->min) {
			/* a range that reads a buffer the function writes read
			 * it when its loop started, in a state the obligation
			 * does not name: no hypothesis (weaker) */
			if (!an_expr_reads_written(a, v->min, c->func->body) &&
			    !an_expr_reads_written(a, v->extent, c->func->body))
				obligation_add_hyp(a, o, ir_and(a, ir_bin(a, OP_LE, v->min, r, (Span){0}),
								ir_bin(a, OP_LT, r, ir_add(a, v->min, v->extent), (Span){0})));
		} else if (!an_expr_has_load(v->value) && dtype_is_int(v->var->dtype))
			obligation_add_hyp(a, o, ir_bin(a, OP_EQ, r, v->value, (Span){0}));
	}
	for (int i = 0; i < w->nconds; i++)
		obligation_add_hyp(a, o, w->conds[i]);
	obligation_add_related(a, o, w->p->store->span);
	return o;
}

/* cover: the cell x read in this iteration is written by the moved
 * producer in this iteration: p = x - offset lies in the restricted
 * ranges and the producer's condition holds there. */
/* The general form: the instance that writes x, guessed in mixed radix
 * per dimension (the loops of d by decreasing coefficient), and the goal
 * that it runs in this iteration (the new ranges, nested), its condition
 * holds and it stores x. */
static void cover_general(ConsWalk *w, const Expr *load)
{
	Arena *a = w->c->arena;
	const Producer *p = w->p;
	const Plan *pl = w->pl;
	int n = p->nloops;
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	for (int k = 0; k < n; k++)
		from[k] = p->loops[k]->u.loop.var;
	for (int d = 0; d < p->nlogical; d++) {
		/* the logical index of the cell: u = c * x[ldiv] + x[lmod] for a pair */
		Expr *x = load->u.load.idx[p->ldiv[d]];
		if (p->lmod[d] >= 0)
			x = ir_add(a, ir_mul(a, ir_int(a, p->lc[d], x->dtype, (Span){0}), x),
				   load->u.load.idx[p->lmod[d]]);
		Expr *t = ir_sub(a, x, p->offset[d]);
		for (int k = 0; k < n; k++)
			if (p->dim_of_loop[k] == d)
				t = ir_sub(a, t, ir_mul(a, ir_int(a, p->coef[k], x->dtype, (Span){0}),
							p->loops[k]->u.loop.min));
		bool used[AN_MAX_DEPTH] = {false};
		int64_t prev = 0;
		for (;;) {
			int best = -1;
			for (int k = 0; k < n; k++)
				if (p->dim_of_loop[k] == d && !used[k] &&
				    (best < 0 || p->coef[k] > p->coef[best]))
					best = k;
			if (best < 0)
				break;
			used[best] = true;
			Expr *q = prev ? ir_bin(a, OP_FLOORMOD, t, ir_int(a, prev, x->dtype, (Span){0}), (Span){0}) : t;
			to[best] = ir_add(a, p->loops[best]->u.loop.min,
					  ir_bin(a, OP_FLOORDIV, q, ir_int(a, p->coef[best], x->dtype, (Span){0}), (Span){0}));
			prev = p->coef[best];
		}
	}
	Expr *goal = NULL;
	for (int k = 0; k < n; k++) {
		Expr *lo = ir_subst_expr(a, pl->lo[k], n, from, to);
		Expr *end = ir_subst_expr(a, ir_add(a, pl->lo[k], pl->ext[k]), n, from, to);
		goal = ir_and(a, goal, ir_and(a, ir_bin(a, OP_LE, lo, to[k], (Span){0}),
					      ir_bin(a, OP_LT, to[k], end, (Span){0})));
	}
	for (int g = 0; g < p->nguards; g++)
		goal = ir_and(a, goal, ir_subst_expr(a, p->guards[g], n, from, to));
	for (int d = 0; d < p->buf->ndim; d++)
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, ir_subst_expr(a, p->store->u.store.idx[d], n, from, to),
					      load->u.load.idx[d], (Span){0}));
	char *stmt = arena_printf(a, "the cell of %s read at line %d is computed in the same iteration of %s, before the read",
				  p->buf->name, load->span.line, w->site->loop.stmt->u.loop.var->name);
	oblist_push(a, &w->c->obs, read_obligation(w, "compute_at.cover", stmt, goal, load->span));
}

static void cover_obligation(ConsWalk *w, const Expr *load)
{
	Arena *a = w->c->arena;
	const Producer *p = w->p;
	if (p->general) {
		cover_general(w, load);
		return;
	}
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	Expr *goal = NULL;
	for (int d = 0; d < p->buf->ndim; d++) {
		int k = p->loop_of_dim[d];
		Expr *pv = loop_value(a, p, d, load->u.load.idx[d]);
		from[d] = p->loops[k]->u.loop.var;
		to[d] = pv;
		goal = ir_and(a, goal, ir_and(a, ir_bin(a, OP_LE, w->pl->lo[k], pv, (Span){0}),
					      ir_bin(a, OP_LT, pv, ir_add(a, w->pl->lo[k], w->pl->ext[k]),
						     (Span){0})));
	}
	for (int g = 0; g < p->nguards; g++)
		goal = ir_and(a, goal, ir_subst_expr(a, p->guards[g], p->buf->ndim, from, to));
	char *stmt = arena_printf(a, "the cell of %s read at line %d is computed in the same iteration of %s, before the read",
				  p->buf->name, load->span.line, w->site->loop.stmt->u.loop.var->name);
	Obligation *o = read_obligation(w, "compute_at.cover", stmt, goal, load->span);
	oblist_push(a, &w->c->obs, o);
}

static Expr *cons_expr(ConsWalk *w, Expr *e);
static void push_cond(ConsWalk *w, Expr *cond, bool negate);

static Expr *rebase_load(ConsWalk *w, Expr *e, Expr **idx)
{
	Arena *a = w->c->arena;
	const Plan *pl = w->pl;
	int nd = e->u.load.nidx;
	Expr **out = arena_alloc(a, sizeof(Expr *) * (size_t)(nd + 1));
	Expr *same = NULL;
	for (int d = 0; d < nd; d++) {
		out[d] = idx[d];
		if (!pl->base[d])
			continue;
		Expr *raw = ir_sub(a, e->u.load.idx[d], pl->base[d]);
		out[d] = rg_simplify(w->env, ir_sub(a, idx[d], pl->base[d]));
		same = ir_and(a, same, ir_bin(a, OP_EQ, out[d], raw, (Span){0}));
		same = ir_and(a, same, attach_no_overflow(a, out[d]));
	}
	if (same) {
		char *stmt = arena_printf(a, "the read of %s at line %d reads the same cell, moved by the base of the region, without overflow",
					  w->p->buf->name, e->span.line);
		oblist_push(a, &w->c->obs, read_obligation(w, "compute_at.index", stmt, same, e->span));
	}
	return ir_load(a, pl->to, nd, out, e->span);
}

static Expr *cons_expr(ConsWalk *w, Expr *e)
{
	Arena *a = w->c->arena;
	Expr *x, *y, *z;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return e;
	case EX_LOAD: {
		int n = e->u.load.nidx;
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			idx[i] = cons_expr(w, e->u.load.idx[i]);
		if (e->u.load.buf != w->p->buf)
			return ir_load(a, e->u.load.buf, n, idx, e->span);
		cover_obligation(w, e);
		return rebase_load(w, e, idx);
	}
	case EX_BIN:
		x = ir_bin(a, e->u.bin.op, cons_expr(w, e->u.bin.a), cons_expr(w, e->u.bin.b), e->span);
		x->dtype = e->dtype;
		return x;
	case EX_NOT:
		return ir_not(a, cons_expr(w, e->u.un.a), e->span);
	case EX_NEG:
		return ir_neg(a, cons_expr(w, e->u.un.a), e->span);
	case EX_CAST:
		return ir_cast(a, e->dtype, cons_expr(w, e->u.un.a), e->span);
	case EX_SELECT: {
		/* only the picked arm runs: its reads are obligations under the
		 * condition (or its negation), as in a branch */
		int nv = w->env->nvars, ng = w->env->nguards, nc = w->nconds;
		x = cons_expr(w, e->u.sel.cond);
		push_cond(w, e->u.sel.cond, false);
		y = cons_expr(w, e->u.sel.a);
		rg_pop(w->env, nv, ng);
		w->nconds = nc;
		push_cond(w, e->u.sel.cond, true);
		z = cons_expr(w, e->u.sel.b);
		rg_pop(w->env, nv, ng);
		w->nconds = nc;
		x = ir_select(a, x, y, z, e->span);
		x->dtype = e->dtype;
		return x;
	}
	case EX_OPAQUE:
		/* what it reads of the producer's buffer is unknown: no
		 * region covers it (the schedule refuses it before this) */
		w->c->reject_after = arena_printf(a, "opaque access: T.%s at line %d may read "
						  "any cell", e->u.opq.name, e->span.line);
		return e;
	case EX_LET: {
		x = cons_expr(w, e->u.let.value);
		int nv = w->env->nvars, ng = w->env->nguards;
		rg_push_let(w->env, e->u.let.var, e->u.let.value, true);
		y = cons_expr(w, e->u.let.body);
		rg_pop(w->env, nv, ng);
		return ir_let(a, e->u.let.var, x, y, e->span);
	}
	case EX_CALL: {
		Expr *args[MATH_MAX_ARGS];
		for (int i = 0; i < e->u.call.nargs; i++)
			args[i] = cons_expr(w, e->u.call.args[i]);
		x = ir_call(a, e->u.call.fn, args, e->span);
		x->dtype = e->dtype;
		return x;
	}
	case EX_COUNT:
		break;
	}
	abort();
}

/* The conjuncts of cond (negate: of `not cond`) that read no buffer
 * become hypotheses of the reads under it; the others are dropped (a
 * weaker hypothesis), as rg_push_guard drops them from the bounds. */
static void push_hyp_conds(ConsWalk *w, Expr *cond, bool negate)
{
	if (cond->kind == EX_NOT) {
		push_hyp_conds(w, cond->u.un.a, !negate);
		return;
	}
	if (cond->kind == EX_BIN && ((cond->u.bin.op == OP_AND && !negate) ||
				     (cond->u.bin.op == OP_OR && negate))) {
		push_hyp_conds(w, cond->u.bin.a, negate);
		push_hyp_conds(w, cond->u.bin.b, negate);
		return;
	}
	if (!an_expr_has_load(cond) && w->nconds < AN_MAX_DEPTH * 2)
		w->conds[w->nconds++] = negate ? ir_not(w->c->arena, cond, cond->span) : cond;
}

static void push_cond(ConsWalk *w, Expr *cond, bool negate)
{
	rg_push_guard(w->env, cond, negate);
	push_hyp_conds(w, cond, negate);
}

static Stmt *cons_stmt(ConsWalk *w, Stmt *s)
{
	Arena *a = w->c->arena;
	RgEnv *env = w->env;
	int nv = env->nvars, ng = env->nguards, nc = w->nconds;
	Stmt *x, *y;
	switch (s->kind) {
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(s->u.seq.n + 1));
		for (int i = 0; i < s->u.seq.n; i++)
			items[i] = cons_stmt(w, s->u.seq.items[i]);
		return ir_seq(a, s->u.seq.n, items, s->span);
	}
	case ST_FOR: {
		Expr *lo = cons_expr(w, s->u.loop.min), *ext = cons_expr(w, s->u.loop.extent);
		rg_push_loop(env, s->u.loop.var, s->u.loop.min, s->u.loop.extent, true);
		x = cons_stmt(w, s->u.loop.body);
		rg_pop(env, nv, ng);
		return ir_for(a, s->u.loop.var, lo, ext, s->u.loop.kind, x, s->span);
	}
	case ST_IF: {
		Expr *cond = cons_expr(w, s->u.cond.cond);
		push_cond(w, s->u.cond.cond, false);
		x = cons_stmt(w, s->u.cond.then_s);
		rg_pop(env, nv, ng);
		w->nconds = nc;
		y = NULL;
		if (s->u.cond.else_s) {
			push_cond(w, s->u.cond.cond, true);
			y = cons_stmt(w, s->u.cond.else_s);
			rg_pop(env, nv, ng);
			w->nconds = nc;
		}
		return ir_if(a, cond, x, y, s->span);
	}
	case ST_STORE: {
		int n = s->u.store.nidx;
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		for (int i = 0; i < n; i++)
			idx[i] = cons_expr(w, s->u.store.idx[i]);
		return ir_store(a, s->u.store.buf, n, idx, cons_expr(w, s->u.store.value), s->span);
	}
	case ST_ASSUME:
		return ir_assume(a, cons_expr(w, s->u.expr), s->span);
	case ST_EVAL:
		return ir_eval(a, cons_expr(w, s->u.expr), s->span);
	case ST_ALLOC:
		return ir_alloc(a, s->u.alloc.buf, cons_stmt(w, s->u.alloc.body), s->span);
	case ST_BLOCK:
		return ir_block_with(a, s, cons_stmt(w, s->u.block.body));
	case ST_LET: {
		Expr *v = cons_expr(w, s->u.let.value);
		rg_push_let(env, s->u.let.var, s->u.let.value, true);
		x = cons_stmt(w, s->u.let.body);
		rg_pop(env, nv, ng);
		return ir_letstmt(a, s->u.let.var, v, x, s->span);
	}
	case ST_PASS:
		return s;
	case ST_COUNT:
		break;
	}
	abort();
}

/* ---------- reads elsewhere, inputs ---------- */

/* A load of buf in e outside every T.if_then_else arm, or NULL. */
static const Expr *sure_load(const Expr *e, const Buffer *buf)
{
	const Expr *r = NULL;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return NULL;
	case EX_LOAD:
		if (e->u.load.buf == buf)
			return e;
		for (int i = 0; i < e->u.load.nidx && !r; i++)
			r = sure_load(e->u.load.idx[i], buf);
		return r;
	case EX_BIN:
		r = sure_load(e->u.bin.a, buf);
		return r ? r : sure_load(e->u.bin.b, buf);
	case EX_NOT: case EX_NEG: case EX_CAST:
		return sure_load(e->u.un.a, buf);
	case EX_SELECT:
		return sure_load(e->u.sel.cond, buf);
	case EX_LET:
		r = sure_load(e->u.let.value, buf);
		return r ? r : sure_load(e->u.let.body, buf);
	case EX_OPAQUE: /* may read any buffer it names: counted as a read */
		return e;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs && !r; i++)
			r = sure_load(e->u.call.args[i], buf);
		return r;
	case EX_COUNT:
		break;
	}
	abort();
}

/* A read of buf in s that surely runs: under no `if`, in loops whose
 * extents are constant and positive; or NULL. */
static const Expr *sure_read(const Stmt *s, const Buffer *buf)
{
	const Expr *r = NULL;
	int64_t n;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n && !r; i++)
			r = sure_read(s->u.seq.items[i], buf);
		return r;
	case ST_FOR:
		r = sure_load(s->u.loop.min, buf);
		if (!r)
			r = sure_load(s->u.loop.extent, buf);
		if (!r && an_const_int(s->u.loop.extent, &n) && n > 0)
			r = sure_read(s->u.loop.body, buf);
		return r;
	case ST_IF:
		return sure_load(s->u.cond.cond, buf);
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx && !r; i++)
			r = sure_load(s->u.store.idx[i], buf);
		return r ? r : sure_load(s->u.store.value, buf);
	case ST_ASSUME: case ST_EVAL:
		return sure_load(s->u.expr, buf);
	case ST_ALLOC:
		return sure_read(s->u.alloc.body, buf);
	case ST_BLOCK:
		return sure_read(s->u.block.body, buf);
	case ST_LET:
		r = sure_load(s->u.let.value, buf);
		return r ? r : sure_read(s->u.let.body, buf);
	case ST_PASS:
		return NULL;
	case ST_COUNT:
		break;
	}
	abort();
}

/* A read of B outside the attach loop's body is no longer served: it
 * must never run (goal: not its guard). This is how a consumer that reads
 * the producer before the attach point is rejected. */
static RwStatus outside_obligations(RwCtx *c, const AttachSite *s, const Producer *p,
				    int alloc_depth)
{
	Arena *a = c->arena;
	if (!reads_outside(c, s, p->buf))
		return RW_OK;
	/* A read after the statement of the attach loop, under no condition,
	 * in loops of constant positive extent, surely runs: its obligation
	 * below is refuted. The move may still be
	 * sound (the attach loop can compute all of B before a later read:
	 * TVM's fail_all_consumers_under_loop), but a refutation there has no
	 * counterexample to replay, and this primitive proves only reads
	 * served in the same iteration. TVM's rule: every consumer under the
	 * loop. */
	const Expr *sure = NULL;
	for (int i = s->other_index + 1; i < s->seq->u.seq.n && !sure; i++)
		sure = sure_read(s->seq->u.seq.items[i], p->buf);
	if (sure)
		return rw_fail(c, RW_UNSUPPORTED, sure->span,
			       "the read of %s at line %d is not under loop '%s': compute_at needs every consumer of block \"%s\" under the attach loop",
			       p->buf->name, sure->span.line, s->loop.stmt->u.loop.var->name,
			       p->block->u.block.name);
	Buffer **vol;
	int nvol = attach_written_buffers(c, &vol);
	AccessList acc;
	memset(&acc, 0, sizeof acc);
	/* from inside the allocation: accesses to buffers allocated in the
	 * collected statement are not collected */
	StmtCtx top;
	attach_ctx_at(c, &s->block, alloc_depth, &top);
	Stmt *al = attach_stmt_at(body_without(c, s), s->block.path, alloc_depth);
	an_collect_accesses(c->arena, al->u.alloc.body, 0, NULL, NULL, nvol, vol, &acc);
	an_name_instance(a, &acc, "");
	for (int i = 0; i < acc.n; i++) {
		const Access *x = &acc.items[i];
		if (x->is_write || x->buf != p->buf)
			continue;
		char *stmt = arena_printf(a, "the read of %s at line %d lies outside loop %s, where block \"%s\" no longer computes it first",
					  p->buf->name, x->span.line, s->loop.stmt->u.loop.var->name,
					  p->block->u.block.name);
		Obligation *o = obligation_new(a, "compute_at.cover", stmt, acc.nvars, acc.vars, acc.nhyps,
					       acc.hyps, ir_not(a, x->guard, (Span){0}), x->span);
		o->rewrite = c->desc;
		rw_add_context_hyps(c, o, &top);
		obligation_add_related(a, o, x->span);
		oblist_push(a, &c->obs, o);
	}
	return RW_OK;
}

/* inputs_unchanged: nothing that now runs before the moved producer
 * writes a cell it reads — the statements between the block and the
 * loop's statement, the parts of that statement before the attach point,
 * and earlier iterations of the attach loop's body. */
static void inputs_obligations(RwCtx *c, const AttachSite *s, const Producer *p, Stmt *moved)
{
	Arena *a = c->arena;
	Buffer **vol;
	int nvol = attach_written_buffers(c, &vol);
	AccessList all, reads, between, writes;
	memset(&all, 0, sizeof all);
	memset(&between, 0, sizeof between);
	an_collect_accesses(c->arena, moved, 0, NULL, NULL, nvol, vol, &all);
	an_name_instance(a, &all, "");
	attach_filter(a, &all, false, &reads);
	const char *kind = "compute_at.inputs_unchanged";
	char *what = arena_printf(a, "block \"%s\" reads its inputs unchanged at its new place", p->block->u.block.name);
	Obligation *base = attach_base(c, s, kind, what, ir_bool(a, true), p->block->span);
	attach_between_accesses(c, s, &between);
	attach_filter(a, &between, true, &writes);
	rw_commute_obligations(c, kind, what, base, &reads, &writes, false);
	OrderGroup *groups;
	int n = attach_order_groups(c, s, ORDER_BEFORE_START, &groups);
	for (int i = 0; i < n; i++) {
		attach_filter(a, &groups[i].acc, true, &writes);
		rw_commute_obligations(c, kind, what, attach_with_group(c, base, &groups[i]), &reads,
				       &writes, false);
	}
}

/* ---------- the report note ---------- */

static char *region_note(RwCtx *c, const AttachSite *s, const Producer *p, const Plan *pl,
			 const RgBox *box)
{
	Arena *a = c->arena;
	int nd = p->buf->ndim;
	StrBuf b = {0};
	sb_printf(&b, "attach path: %s; region of %s per iteration: [", attach_path_text(a, s),
		  p->buf->name);
	Expr *lo[AN_MAX_DEPTH], *hi[AN_MAX_DEPTH];
	for (int d = 0; d < nd; d++) {
		lo[d] = pl->cell_lo[d];
		Expr *end = pl->cell_end[d];
		hi[d] = an_fold(a, ir_sub(a, end, ir_int(a, 1, end->dtype, (Span){0})));
		char *x = print_expr(lo[d]), *y = print_expr(end);
		sb_printf(&b, "%s%s:%s", d ? ", " : "", x, y);
		free(x);
		free(y);
	}
	sb_puts(&b, "]");
	if (pl->any_shrunk) {
		sb_printf(&b, "; %s shrunk from [", p->buf->name);
		int64_t cells = 1;
		for (int d = 0; d < nd; d++) {
			char *x = print_expr(p->buf->shape[d]);
			sb_printf(&b, "%s%s", d ? ", " : "", x);
			free(x);
		}
		sb_puts(&b, "] to [");
		for (int d = 0; d < nd; d++) {
			char *x = print_expr(pl->to->shape[d]);
			int64_t v;
			cells = an_const_int(pl->to->shape[d], &v) && cells > 0 ? cells * v : -1;
			sb_printf(&b, "%s%s", d ? ", " : "", x);
			free(x);
		}
		sb_puts(&b, "]");
		if (cells > 0)
			sb_printf(&b, " (%lld cell%s)", (long long)cells, cells == 1 ? "" : "s");
	} else {
		sb_printf(&b, "; %s keeps its shape", p->buf->name);
	}
	Stmt *loops[AN_MAX_DEPTH + 1];
	int nl = 0;
	for (int k = 0; k < s->loop.nloops; k++)
		loops[nl++] = s->loop.loops[k];
	loops[nl++] = s->loop.stmt;
	bool exact = false, tight = false;
	char *witness = NULL;
	/* Only this note depends on the enumeration, never the verdict: it
	 * gets a small budget (a few ms at most; an iteration space that is
	 * surely larger is not enumerated at all). */
	if (!rg_box_exact(a, nl, loops, s->loop.stmt->u.loop.body, p->buf, false, lo, hi,
			  NOTE_ENUM_BUDGET, &exact, &tight, &witness))
		sb_printf(&b, "; exactness not checked (the iteration space is not constant or has more than %ld iterations)",
			  NOTE_ENUM_BUDGET);
	else if (exact)
		sb_puts(&b, "; the cells read are exactly this box");
	else if (tight)
		sb_printf(&b, "; the cells read are not a box: this is the tightest box around them (%s)",
			  witness);
	else
		sb_printf(&b, "; the box is larger than the cells read (%s)", witness);
	if (box->approximate)
		sb_puts(&b, "; union of reads with different bounds");
	if (pl->demoted)
		sb_puts(&b, "; vectorized/unrolled loops of the block are now serial");
	char *t = sb_take(&b);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

/* ---------- the primitive ---------- */

/* Whether a step of the layout history names padding cells (their
 * predicates are over the physical shape, which shrinking would change). */
static bool nonfalse(const Expr *e) { return e && !(e->kind == EX_INT && e->u.ival == 0); }

static bool layout_padded(const Layout *l)
{
	for (; l; l = l->logical ? l->logical->layout : NULL)
		if (nonfalse(l->pad_predicate) || nonfalse(l->all_padding) || nonfalse(l->forbidden))
			return true;
	return false;
}

static RwStatus check_buffer(RwCtx *c, const AttachSite *s, const Producer *p, int *alloc_depth)
{
	/* a transformed layout without padding is only a history: the store
	 * and reads already use the physical indices (a split pair is read
	 * as one logical dimension, parse_general_index) */
	if (p->buf->layout && layout_padded(p->buf->layout))
		return rw_fail(c, RW_UNSUPPORTED, p->store->span,
			       "%s has a padded transformed layout; apply compute_at before transform_layout",
			       p->buf->name);
	*alloc_depth = find_alloc(c, s, p->buf);
	if (*alloc_depth < 0)
		return rw_fail(c, RW_UNSUPPORTED, p->store->span,
			       "%s is not an intermediate buffer allocated (T.alloc_buffer) around blocks \"%s\" and its consumer",
			       p->buf->name, p->block->u.block.name);
	const Stmt *where = NULL;
	Stmt *rest = an_replace_at(c->arena, c->func->body, s->block.path, s->block.depth,
				   ir_pass(c->arena, s->block.stmt->span));
	if (attach_stmt_writes(rest, p->buf, &where))
		return rw_fail(c, RW_UNSUPPORTED, where->span,
			       "%s is also written outside block \"%s\" (line %d)", p->buf->name,
			       p->block->u.block.name, where->span.line);
	return RW_OK;
}

static Stmt *rebuild_body(RwCtx *c, const AttachSite *s, Stmt *new_loop, const Plan *pl,
			  int alloc_depth)
{
	Arena *a = c->arena;
	Stmt *body = an_replace_at(a, c->func->body, s->loop.path, s->loop.depth, new_loop);
	/* the block goes: an empty sequence splices to nothing */
	body = an_replace_at(a, body, s->block.path, s->block.depth, ir_seq(a, 0, NULL, s->block.stmt->span));
	if (pl->any_shrunk) {
		Stmt *al = attach_stmt_at(body, s->block.path, alloc_depth);
		body = an_replace_at(a, body, s->block.path, alloc_depth,
				     ir_alloc(a, pl->to, al->u.alloc.body, al->span));
	}
	return body;
}

static RwStatus compute_at(RwCtx *c, const char *block, const char *loop);

RwStatus rw_compute_at(RwCtx *c, const char *block, const char *loop)
{
	NestWrap w;
	rw_nest_wrap(c, block, &w);
	RwStatus st = compute_at(c, block, loop);
	rw_nest_unwrap(c, &w);
	return st;
}

static RwStatus compute_at(RwCtx *c, const char *block, const char *loop)
{
	Arena *a = c->arena;
	AttachSite s;
	RwStatus st = attach_site(c, block, loop, true, &s);
	if (st != RW_OK)
		return st;
	Producer p;
	if ((st = parse_producer(c, s.block.stmt, &p)) != RW_OK)
		return st;
	int alloc_depth = -1;
	if ((st = check_buffer(c, &s, &p, &alloc_depth)) != RW_OK)
		return st;
	Stmt *l = s.loop.stmt;
	RgEnv env;
	rg_env_init(&env, a);
	push_fixed_env(&s, &env);
	RgBox box;
	rg_access_box(&env, l->u.loop.body, p.buf, false, &box);
	if (box.naccesses == 0)
		return rw_fail(c, RW_PRECONDITION, l->span, "the body of loop '%s' does not read %s",
			       loop, p.buf->name);
	Plan pl;
	memset(&pl, 0, sizeof pl);
	if (!p.general)
		plan_ranges(&env, &p, &box, &pl);
	else if (!plan_general_ranges(&env, &p, &box, &pl))
		return rw_fail(c, RW_UNSUPPORTED, p.store->span,
			       "the instances of block \"%s\" that write the cells of %s read in one iteration of '%s' cannot be bounded from its store",
			       block, p.buf->name, loop);
	plan_shrink(c, &env, &s, &p, &pl);
	Stmt *moved = moved_producer(c, &s, &env, &p, &pl);
	ConsWalk w;
	memset(&w, 0, sizeof w);
	w.c = c;
	w.site = &s;
	w.p = &p;
	w.pl = &pl;
	w.env = &env;
	Stmt *body = cons_stmt(&w, l->u.loop.body);
	/* the producer first, in a flat sequence as the parser builds it */
	int nb = body->kind == ST_SEQ ? body->u.seq.n : 1;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(nb + 1));
	items[0] = moved;
	if (body->kind == ST_SEQ)
		memcpy(items + 1, body->u.seq.items, sizeof(Stmt *) * (size_t)nb);
	else
		items[1] = body;
	Stmt *new_loop = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
				ir_seq(a, nb + 1, items, l->span), l->span);
	/* index and cover obligations came with the rewritten code above */
	if (!range_safe_obligations(c, &s, &p, &pl))
		return RW_UNSUPPORTED;
	within_obligation(c, &s, &p, &pl);
	if (p.init)
		init_first_obligation(c, &s, &p, &pl);
	if (p.general)
		injective_obligation(c, &s, &p);
	if (!p.general)
		attach_bounds_overflow(c, &s, p.nloops, p.loops, pl.lo, pl.ext, block,
				       "compute_at.no_overflow", p.block->span);
	else
		attach_nested_bounds_overflow(c, &s, p.nloops, p.loops, pl.lo, pl.ext, NULL, block,
					      "compute_at.no_overflow", p.block->span);
	if (pl.any_shrunk)
		fit_obligation(c, &s, &p, &pl);
	if ((st = outside_obligations(c, &s, &p, alloc_depth)) != RW_OK)
		return st;
	inputs_obligations(c, &s, &p, moved);
	c->note = region_note(c, &s, &p, &pl, &box);
	c->out = an_with_body(a, c->func, rebuild_body(c, &s, new_loop, &pl, alloc_depth));
	return RW_OK;
}
