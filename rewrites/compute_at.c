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
	Buffer *buf;
	int loop_of_dim[AN_MAX_DEPTH]; /* store index d = var(loops[k]) + offset[d] */
	Expr *offset[AN_MAX_DEPTH];
	int dim_of_loop[AN_MAX_DEPTH];
} Producer;

/* The rewritten producer's ranges and the shrunk buffer. */
typedef struct Plan {
	Expr *lo[AN_MAX_DEPTH], *ext[AN_MAX_DEPTH]; /* per producer loop */
	Expr *end[AN_MAX_DEPTH];		    /* lo + ext, for reports */
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

/* idx = var + offset with offset free of loop variables and loads */
static bool match_index(Arena *a, const Producer *p, Expr *idx, int *k, Expr **offset)
{
	return attach_match_index(a, p->loops, p->nloops, idx, producer_offset, (void *)p, k, offset);
}

static RwStatus parse_producer(RwCtx *c, Stmt *block, Producer *p)
{
	memset(p, 0, sizeof *p);
	p->block = block;
	const char *shape_msg = "the producer block \"%s\" must be a perfect loop nest around one store (under `if`s without `else`)";
	Stmt *s = skip_single_seq(block->u.block.body);
	while (s->kind == ST_FOR && p->nloops < AN_MAX_DEPTH) {
		p->loops[p->nloops++] = s;
		s = skip_single_seq(s->u.loop.body);
	}
	while (s->kind == ST_IF && !s->u.cond.else_s && p->nguards < AN_MAX_DEPTH) {
		p->guard_spans[p->nguards] = s->span;
		p->guards[p->nguards++] = s->u.cond.cond;
		s = skip_single_seq(s->u.cond.then_s);
	}
	if (s->kind != ST_STORE || p->nloops == 0)
		return rw_fail(c, RW_UNSUPPORTED, block->span, shape_msg, block->u.block.name);
	p->store = s;
	p->buf = s->u.store.buf;
	const char *name = block->u.block.name;
	if (p->buf->ndim != p->nloops || p->nloops > AN_MAX_DEPTH)
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "the store of block \"%s\" must index %s by one loop variable per dimension (%d loops, %d dimensions)",
			       name, p->buf->name, p->nloops, p->buf->ndim);
	for (int k = 0; k < p->nloops; k++)
		p->dim_of_loop[k] = -1;
	for (int d = 0; d < p->buf->ndim; d++) {
		int k;
		if (!match_index(c->arena, p, s->u.store.idx[d], &k, &p->offset[d]) ||
		    p->dim_of_loop[k] >= 0)
			return rw_fail(c, RW_UNSUPPORTED, s->span,
				       "index %d of the store of block \"%s\" must be a loop variable of its own plus an offset",
				       d, name);
		p->loop_of_dim[d] = k;
		p->dim_of_loop[k] = d;
	}
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

static void plan_ranges(RgEnv *env, const Producer *p, const RgBox *box, Plan *pl)
{
	Arena *a = env->a;
	for (int d = 0; d < p->buf->ndim; d++) {
		int k = p->loop_of_dim[d];
		const Stmt *l = p->loops[k];
		Expr *pmin = l->u.loop.min, *pend = ir_add(a, l->u.loop.min, l->u.loop.extent);
		Expr *lo = pmin, *end = pend;
		if (box->lo[d] && box->hi[d]) {
			lo = rg_simplify(env, ir_sub(a, box->lo[d], p->offset[d]));
			end = rg_simplify(env, ir_add(a, ir_sub(a, box->hi[d], p->offset[d]),
						      ir_int(a, 1, box->hi[d]->dtype, (Span){0})));
			/* never outside the producer's own range: the simplifier
			 * drops the clamp where the bounds show it is not needed */
			lo = rg_max(env, lo, pmin);
			end = rg_min(env, end, rg_simplify(env, pend));
		}
		pl->lo[k] = lo;
		pl->end[k] = end;
		pl->ext[k] = rg_simplify(env, ir_sub(a, end, lo));
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
		exts[d] = pl->ext[p->loop_of_dim[d]];
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
		int k = p->loop_of_dim[d];
		pl->base[d] = rg_simplify(env, ir_add(a, pl->lo[k], p->offset[d]));
		pl->any_shrunk = true;
	}
	if (!pl->any_shrunk)
		return;
	Buffer *b = ir_buffer_copy(a, p->buf);
	b->shape = shape;
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

/* ---------- the moved producer ---------- */

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
	Stmt *body = ir_store(a, pl->to, nd, idx, st->u.store.value, st->span);
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
static void cover_obligation(ConsWalk *w, const Expr *load)
{
	Arena *a = w->c->arena;
	const Producer *p = w->p;
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	Expr *goal = NULL;
	for (int d = 0; d < p->buf->ndim; d++) {
		int k = p->loop_of_dim[d];
		Expr *pv = ir_sub(a, load->u.load.idx[d], p->offset[d]);
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

/* A read of B outside the attach loop's body is no longer served: it
 * must never run (goal: not its guard). This is how a consumer that reads
 * the producer before the attach point is rejected. */
static void outside_obligations(RwCtx *c, const AttachSite *s, const Producer *p,
				int alloc_depth)
{
	Arena *a = c->arena;
	if (!reads_outside(c, s, p->buf))
		return;
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
		int k = p->loop_of_dim[d];
		lo[d] = an_fold(a, ir_add(a, pl->lo[k], p->offset[d]));
		Expr *end = an_fold(a, ir_add(a, pl->end[k], p->offset[d]));
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

static RwStatus check_buffer(RwCtx *c, const AttachSite *s, const Producer *p, int *alloc_depth)
{
	if (p->buf->layout)
		return rw_fail(c, RW_UNSUPPORTED, p->store->span,
			       "%s has a transformed layout; apply compute_at before transform_layout",
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
	plan_ranges(&env, &p, &box, &pl);
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
	within_obligation(c, &s, &p, &pl);
	attach_bounds_overflow(c, &s, p.nloops, p.loops, pl.lo, pl.ext, block,
			       "compute_at.no_overflow", p.block->span);
	if (pl.any_shrunk)
		fit_obligation(c, &s, &p, &pl);
	outside_obligations(c, &s, &p, alloc_depth);
	inputs_obligations(c, &s, &p, moved);
	c->note = region_note(c, &s, &p, &pl, &box);
	c->out = an_with_body(a, c->func, rebuild_body(c, &s, new_loop, &pl, alloc_depth));
	return RW_OK;
}
