/* rewrites/cache.c — cache_read / cache_write (seed 000; semantics.md 4):
 * stage a box of a buffer through a new allocation around one block, with
 * copy-in before it (cache_read, and cache_write when needed) and copy-out
 * after it (cache_write). Obligations cache.covers, cache.readable and the
 * race check of labelled loops around the block (proofs/cache.md). */
#include "rewrites/block_nest.h"
#include "rewrites/cache.h"

#include <string.h>

#include "kernel/analysis/arith.h"
#include "kernel/analysis/facts.h"
#include "kernel/analysis/index_map.h"
#include "kernel/analysis/region.h"
#include "rewrites/layout.h"
#include "rewrites/merge.h"

static Span nospan(void) { return (Span){0}; }

/* ---------- buffers and names ---------- */

static const char *unique_block_name(Arena *a, const Func *f, const char *base)
{
	const char *name = base;
	for (int k = 1; rw_find_block(f, name); k++)
		name = arena_printf(a, "%s_%d", base, k);
	return name;
}

static bool scope_from_name(const char *s, BufferScope *out)
{
	if (strcmp(s, "global") == 0)
		*out = SCOPE_GLOBAL;
	else if (strcmp(s, "local") == 0)
		*out = SCOPE_LOCAL;
	else if (strcmp(s, "shared") == 0)
		*out = SCOPE_SHARED;
	else
		return false;
	return true;
}

static const char *scope_name(BufferScope s)
{
	switch (s) {
	case SCOPE_GLOBAL: return "global";
	case SCOPE_LOCAL: return "local";
	case SCOPE_SHARED: return "shared";
	}
	return "global";
}

/* ---------- reads of a buffer ---------- */

static int count_stores(const Stmt *s, const Buffer *b)
{
	int n = 0;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			n += count_stores(s->u.seq.items[i], b);
		return n;
	case ST_FOR: return count_stores(s->u.loop.body, b);
	case ST_IF:
		return count_stores(s->u.cond.then_s, b) +
		       (s->u.cond.else_s ? count_stores(s->u.cond.else_s, b) : 0);
	case ST_STORE: return s->u.store.buf == b;
	case ST_ALLOC: return count_stores(s->u.alloc.body, b);
	case ST_BLOCK: return count_stores(s->u.block.body, b);
	case ST_LET: return count_stores(s->u.let.body, b);
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT: return 0;
	}
	return 0;
}

/* ---------- the cached region: a box [lo_k, lo_k + extent_k) ---------- */

typedef struct Box {
	int n;
	Expr **lo, **extent;
} Box;

/* A proposal from interval arithmetic over the accesses (untrusted: the
 * obligations check it). Dimensions without constant bounds take the
 * whole extent of the shape; constant bounds are clipped to a constant
 * shape so the copy never leaves the buffer. */
typedef struct BoxWalk {
	const Buffer *buf;
	int n;
	bool bounded[AN_MAX_DEPTH];
	int64_t lo[AN_MAX_DEPTH], hi[AN_MAX_DEPTH]; /* inclusive */
	bool seen;
} BoxWalk;

static void box_expr(BoxWalk *w, const Expr *e, const Bounds *b);

static void box_access(BoxWalk *w, int nidx, Expr **idx, const Bounds *b)
{
	for (int k = 0; k < nidx && k < w->n; k++) {
		int64_t lo, hi;
		if (!w->bounded[k])
			continue;
		if (!arith_range(b, idx[k], &lo, &hi)) {
			w->bounded[k] = false;
			continue;
		}
		if (!w->seen || lo < w->lo[k])
			w->lo[k] = lo;
		if (!w->seen || hi > w->hi[k])
			w->hi[k] = hi;
	}
	/* `seen` turns on after the first access has set every dimension */
	w->seen = true;
}

static void box_opaque_buf(Buffer *buf, void *ud)
{
	BoxWalk *w = ud;
	if (buf != w->buf)
		return;
	/* an opaque call may touch any cell: no bound */
	for (int k = 0; k < w->n; k++)
		w->bounded[k] = false;
	w->seen = true;
}

static void box_expr(BoxWalk *w, const Expr *e, const Bounds *b)
{
	switch (e->kind) {
	case EX_OPAQUE:
		ir_expr_opaque_buffers(e, box_opaque_buf, w);
		for (int i = 0; i < e->u.opq.nargs; i++)
			box_expr(w, e->u.opq.args[i], b);
		return;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			box_expr(w, e->u.load.idx[i], b);
		if (e->u.load.buf == w->buf)
			box_access(w, e->u.load.nidx, e->u.load.idx, b);
		return;
	case EX_BIN: box_expr(w, e->u.bin.a, b); box_expr(w, e->u.bin.b, b); return;
	case EX_NOT: case EX_NEG: case EX_CAST: box_expr(w, e->u.un.a, b); return;
	case EX_SELECT: {
		/* only the picked arm runs: its accesses are bounded under the
		 * condition (or its negation), as in a branch */
		box_expr(w, e->u.sel.cond, b);
		Bounds inner = *b;
		arith_bounds_assume(&inner, e->u.sel.cond);
		box_expr(w, e->u.sel.a, &inner);
		Arena scratch;
		arena_init(&scratch);
		inner = *b;
		arith_bounds_assume(&inner, ir_not(&scratch, e->u.sel.cond, nospan()));
		arena_free(&scratch);
		box_expr(w, e->u.sel.b, &inner);
		return;
	}
	case EX_LET: box_expr(w, e->u.let.value, b); box_expr(w, e->u.let.body, b); return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			box_expr(w, e->u.call.args[i], b);
		return;
	case EX_COUNT: return;
	}
}

static void box_stmt(BoxWalk *w, const Stmt *s, const Bounds *b)
{
	Bounds inner;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			box_stmt(w, s->u.seq.items[i], b);
		return;
	case ST_FOR: {
		box_expr(w, s->u.loop.min, b);
		box_expr(w, s->u.loop.extent, b);
		inner = *b;
		int64_t mlo, mhi, elo, ehi;
		if (arith_range(b, s->u.loop.min, &mlo, &mhi) &&
		    arith_range(b, s->u.loop.extent, &elo, &ehi)) {
			Arena scratch;
			arena_init(&scratch);
			Expr *v = ir_varref(&scratch, s->u.loop.var, nospan());
			Expr *r = ir_and(&scratch, ir_bin(&scratch, OP_GE, v, ir_int(&scratch, mlo, DT_INT64, nospan()), nospan()),
					 ir_bin(&scratch, OP_LE, v, ir_int(&scratch, mhi + ehi - 1, DT_INT64, nospan()), nospan()));
			arith_bounds_assume(&inner, r);
			arena_free(&scratch);
		}
		box_stmt(w, s->u.loop.body, &inner);
		return;
	}
	case ST_IF:
		box_expr(w, s->u.cond.cond, b);
		inner = *b;
		arith_bounds_assume(&inner, s->u.cond.cond);
		box_stmt(w, s->u.cond.then_s, &inner);
		if (s->u.cond.else_s) {
			Arena scratch;
			arena_init(&scratch);
			inner = *b;
			arith_bounds_assume(&inner, ir_not(&scratch, s->u.cond.cond, nospan()));
			arena_free(&scratch);
			box_stmt(w, s->u.cond.else_s, &inner);
		}
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			box_expr(w, s->u.store.idx[i], b);
		box_expr(w, s->u.store.value, b);
		if (s->u.store.buf == w->buf)
			box_access(w, s->u.store.nidx, s->u.store.idx, b);
		return;
	case ST_ASSUME: case ST_EVAL:
		box_expr(w, s->u.expr, b);
		return;
	case ST_ALLOC:
		for (int i = 0; i < s->u.alloc.buf->ndim; i++)
			box_expr(w, s->u.alloc.buf->shape[i], b);
		box_stmt(w, s->u.alloc.body, b);
		return;
	case ST_BLOCK: box_stmt(w, s->u.block.body, b); return;
	case ST_LET:
		box_expr(w, s->u.let.value, b);
		box_stmt(w, s->u.let.body, b);
		return;
	case ST_PASS: case ST_COUNT:
		return;
	}
}

static void bounds_box(Arena *a, const Func *f, const StmtCtx *sc, const Stmt *target,
		       const Buffer *buf, Box *box)
{
	Bounds b;
	arith_bounds_at(f, sc, &b);
	BoxWalk w;
	memset(&w, 0, sizeof w);
	w.buf = buf;
	w.n = buf->ndim < AN_MAX_DEPTH ? buf->ndim : AN_MAX_DEPTH;
	for (int k = 0; k < w.n; k++)
		w.bounded[k] = true;
	box_stmt(&w, target, &b);
	box->n = buf->ndim;
	box->lo = arena_alloc(a, sizeof(Expr *) * (size_t)(buf->ndim + 1));
	box->extent = arena_alloc(a, sizeof(Expr *) * (size_t)(buf->ndim + 1));
	for (int k = 0; k < buf->ndim; k++) {
		Expr *shape = buf->shape[k];
		DType t = shape->dtype == DT_INT64 ? DT_INT64 : DT_INT32;
		int64_t s;
		if (k < w.n && w.bounded[k] && w.seen && an_const_int(shape, &s)) {
			int64_t lo = w.lo[k] < 0 ? 0 : w.lo[k];
			int64_t hi = w.hi[k] >= s ? s - 1 : w.hi[k];
			if (lo <= hi) {
				box->lo[k] = ir_int(a, lo, t, nospan());
				box->extent[k] = ir_int(a, hi - lo + 1, t, nospan());
				continue;
			}
		}
		box->lo[k] = ir_int(a, 0, t, nospan());
		box->extent[k] = shape;
	}
}

/* The region the block itself uses (TVM's choice): the box of its
 * accesses with its own loops and lets relaxed and the loops, lets and
 * conditions around it fixed (rg_access_box), so a block inside a tile
 * loop stages that tile (A[i * 16 : i * 16 + 16]), not the box of every
 * iteration. A dimension takes it when its extent is a positive constant
 * and its numeric bounds lie in a constant shape; the others keep the
 * interval proposal (`box`). Untrusted like it: cache.covers proves the
 * accesses inside, cache.in_bounds the copies inside the buffer.
 * Returns whether any dimension changed (symbolic[k]: dimension k did). */
static bool consumer_box(Arena *a, const StmtCtx *sc, const Stmt *target, const Buffer *buf,
			 bool write, Box *box, bool *symbolic)
{
	RgEnv env;
	rg_env_init(&env, a);
	for (int k = 0; k < sc->nloops; k++) {
		const Stmt *l = sc->loops[k];
		rg_push_loop(&env, l->u.loop.var, l->u.loop.min, l->u.loop.extent, false);
	}
	for (int k = 0; k < sc->nlets; k++)
		rg_push_let(&env, sc->lets[k]->u.let.var, sc->lets[k]->u.let.value, false);
	for (int k = 0; k < sc->nconds; k++)
		rg_push_guard(&env, sc->conds[k], false);
	RgBox rb, wb;
	rg_access_box(&env, target, buf, false, &rb);
	if (write) {
		rg_access_box(&env, target, buf, true, &wb);
		if (rb.naccesses == 0) {
			rb = wb;
		} else if (wb.naccesses > 0) {
			for (int k = 0; k < buf->ndim; k++) {
				bool both = rb.lo[k] && rb.hi[k] && wb.lo[k] && wb.hi[k];
				rb.lo[k] = both ? rg_min(&env, rb.lo[k], wb.lo[k]) : NULL;
				rb.hi[k] = both ? rg_max(&env, rb.hi[k], wb.hi[k]) : NULL;
			}
		}
	}
	if (rb.naccesses == 0)
		return false;
	bool changed = false;
	for (int k = 0; k < buf->ndim; k++) {
		symbolic[k] = false;
		if (!rb.lo[k] || !rb.hi[k])
			continue;
		int64_t ext, shape, lo_lo, lo_hi, hi_lo, hi_hi;
		Expr *e = rg_simplify(&env, ir_add(a, ir_sub(a, rb.hi[k], rb.lo[k]),
						   ir_int(a, 1, rb.lo[k]->dtype, nospan())));
		if (!an_const_int(e, &ext) || ext <= 0 || !an_const_int(buf->shape[k], &shape) ||
		    !rg_num_bounds(&env, rb.lo[k], &lo_lo, &lo_hi) ||
		    !rg_num_bounds(&env, rb.hi[k], &hi_lo, &hi_hi) || lo_lo < 0 || hi_hi >= shape)
			continue;
		int64_t old_ext;
		bool old_const = an_const_int(box->extent[k], &old_ext);
		if (old_const && old_ext <= ext)
			continue; /* no tighter */
		DType t = buf->shape[k]->dtype == DT_INT64 ? DT_INT64 : DT_INT32;
		Expr *lo = rb.lo[k];
		if (lo->dtype != t)
			lo = ir_cast(a, t, lo, nospan());
		int64_t clo;
		bool is_const = an_const_int(lo, &clo);
		/* a constant range is checked here; a moving one is proven */
		if (is_const && (clo < 0 || clo + ext > shape))
			continue;
		box->lo[k] = lo;
		box->extent[k] = ir_int(a, ext, t, nospan());
		symbolic[k] = !is_const;
		changed = true;
	}
	return changed;
}

/* cache.in_bounds, for each dimension whose staged range moves with the
 * loops around the block: lo >= 0 and lo + extent <= shape there (the
 * copies then stay in the buffer). */
static void in_bounds_obligations(RwCtx *c, const StmtCtx *sc, const Buffer *buf, const Box *box,
				  const bool *symbolic)
{
	Arena *a = c->arena;
	for (int k = 0; k < box->n; k++) {
		if (!symbolic[k])
			continue;
		Expr *zero = ir_int(a, 0, box->lo[k]->dtype, nospan());
		Expr *goal = ir_and(a, ir_bin(a, OP_LE, zero, box->lo[k], nospan()),
				    ir_bin(a, OP_LE, ir_add(a, box->lo[k], box->extent[k]), buf->shape[k],
					   nospan()));
		Obligation *o = rw_obligation_at(
			c, &c->obs, sc, "cache.in_bounds",
			arena_printf(a, "the staged range of %s in dimension %d lies in its shape", buf->name, k),
			goal);
		obligation_add_related(a, o, buf->span);
	}
}

/* ---------- cache_write without copy-in ---------- */

/* When the block never reads the buffer and its one store to it is
 * B[v_1 + e_1, ..., v_n + e_n] directly under the n loops v_1 .. v_n of
 * the block (in any order; no branch or let between; ranges and offsets
 * free of those loops and of loads), the block writes every cell of the
 * box [min_k + e_k, min_k + extent_k + e_k) before the copy-out reads it:
 * no copy-in is needed. The box is the image of the store, so the
 * cache.covers obligation for that store checks this construction. */
typedef struct Witness {
	int nloops;
	const Stmt *loops[AN_MAX_DEPTH];
	const Stmt *store;
} Witness;

static bool mentions_loops(const Expr *e, const Witness *w)
{
	if (an_expr_has_load(e))
		return true;
	for (int i = 0; i < w->nloops; i++)
		if (ir_expr_uses_var(e, w->loops[i]->u.loop.var))
			return true;
	return false;
}

static void find_witness(Witness *w, const Stmt *s, const Buffer *b, int depth)
{
	if (w->store)
		return;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n && !w->store; i++)
			find_witness(w, s->u.seq.items[i], b, depth);
		return;
	case ST_FOR:
		if (depth >= AN_MAX_DEPTH)
			return;
		w->loops[depth] = s;
		find_witness(w, s->u.loop.body, b, depth + 1);
		return;
	case ST_STORE:
		if (s->u.store.buf == b) {
			w->store = s;
			w->nloops = depth;
		}
		return;
	case ST_ALLOC: find_witness(w, s->u.alloc.body, b, depth); return;
	case ST_BLOCK: find_witness(w, s->u.block.body, b, depth); return;
	/* a branch or a let between: the store may not run everywhere */
	case ST_IF: case ST_LET: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* idx == v + e (or e + v, v - e, v) for a loop variable v of w; the
 * lowest cell written is then min(v) + e (or min(v) - e). */
static bool split_index(Arena *a, const Witness *w, const Expr *idx, int *loop, Expr **lo)
{
	for (int m = 0; m < w->nloops; m++) {
		const Stmt *l = w->loops[m];
		Var *v = l->u.loop.var;
		if (idx->kind == EX_VAR && idx->u.var == v) {
			*loop = m;
			*lo = l->u.loop.min;
			return true;
		}
		if (idx->kind != EX_BIN || (idx->u.bin.op != OP_ADD && idx->u.bin.op != OP_SUB))
			continue;
		const Expr *x = idx->u.bin.a, *y = idx->u.bin.b, *rest = NULL;
		if (x->kind == EX_VAR && x->u.var == v)
			rest = y;
		else if (idx->u.bin.op == OP_ADD && y->kind == EX_VAR && y->u.var == v)
			rest = x;
		if (!rest || mentions_loops(rest, w))
			continue;
		*loop = m;
		*lo = an_fold(a, ir_bin(a, idx->u.bin.op, l->u.loop.min, (Expr *)rest, nospan()));
		return true;
	}
	return false;
}

static bool witness_box(Arena *a, const Stmt *target, const Buffer *b, Box *box)
{
	if (an_stmt_reads(target, b) || count_stores(target, b) != 1)
		return false;
	Witness w;
	memset(&w, 0, sizeof w);
	find_witness(&w, target, b, 0);
	if (!w.store || w.nloops != b->ndim || b->ndim == 0)
		return false;
	for (int m = 0; m < w.nloops; m++)
		if (mentions_loops(w.loops[m]->u.loop.min, &w) ||
		    mentions_loops(w.loops[m]->u.loop.extent, &w))
			return false;
	bool used[AN_MAX_DEPTH] = {false};
	box->n = b->ndim;
	box->lo = arena_alloc(a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	box->extent = arena_alloc(a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	for (int k = 0; k < b->ndim; k++) {
		int m;
		Expr *lo;
		if (!split_index(a, &w, w.store->u.store.idx[k], &m, &lo) || used[m])
			return false;
		used[m] = true;
		box->lo[k] = lo;
		box->extent[k] = w.loops[m]->u.loop.extent;
	}
	return true;
}

/* ---------- stages ---------- */

/* Loop variables ax0, ax1, ... for a copy stage, with names no loop of f
 * (nor of the stage made before, `avoid`) has. */
static Var **copy_vars(Arena *a, const Func *f, const Box *box, Var **avoid)
{
	Var **vs = arena_alloc(a, sizeof(Var *) * (size_t)(box->n + 1));
	for (int k = 0; k < box->n; k++) {
		const char *name = arena_printf(a, "ax%d", k);
		for (int n = 1;; n++) {
			bool clash = an_has_loop_named(f->body, name);
			for (int j = 0; avoid && j < box->n && !clash; j++)
				clash = strcmp(avoid[j]->name, name) == 0;
			if (!clash)
				break;
			name = arena_printf(a, "ax%d_%d", k, n);
		}
		DType t = box->extent[k]->dtype == DT_INT64 ? DT_INT64 : DT_INT32;
		vs[k] = ir_var(a, name, t, nospan());
	}
	return vs;
}

/* with T.block(name): for ax in box: dst[ax] = src[ax] */
static Stmt *copy_stage(Arena *a, const char *name, const Box *box, Var **vs, Buffer *dst,
			Buffer *src, Span sp)
{
	Expr **t = arena_alloc(a, sizeof(Expr *) * (size_t)(box->n + 1));
	for (int k = 0; k < box->n; k++)
		t[k] = ir_varref(a, vs[k], nospan());
	Stmt *s = ir_store(a, dst, box->n, t, ir_load(a, src, box->n, t, nospan()), sp);
	for (int k = box->n - 1; k >= 0; k--)
		s = ir_for(a, vs[k], box->lo[k], box->extent[k], FOR_SERIAL, s, sp);
	return ir_block(a, name, s, sp);
}

static Expr *in_box(Arena *a, const Box *box, int n, Expr **idx)
{
	Expr *all = NULL;
	for (int k = 0; k < n && k < box->n; k++) {
		Expr *hi = an_fold(a, ir_add(a, box->lo[k], box->extent[k]));
		all = ir_and(a, all, ir_and(a, ir_bin(a, OP_LE, box->lo[k], idx[k], nospan()),
					    ir_bin(a, OP_LT, idx[k], hi, nospan())));
	}
	return all ? all : ir_bool(a, true);
}

/* ---------- obligations ---------- */

/* cache.covers, one per access X[idx] of the block (inner loop variables
 * fresh, with their ranges):
 *     guard and 0 <= idx < shape  ->  lo <= idx < lo + extent
 * The redirected access then reads or writes a cell the copy stages move.
 * An access outside the shape is undefined behaviour of the original, so
 * runs that make one are outside the claim (semantics.md section 1). */
static void cover_obligations(RwCtx *c, const StmtCtx *sc, const Stmt *target, Buffer *buf,
			      const Box *box, const char *cache)
{
	Arena *a = c->arena;
	Buffer **vol;
	int nvol = an_written_buffers(a, target, &vol);
	AccessList acc;
	memset(&acc, 0, sizeof acc);
	an_collect_accesses(c->arena, target, 0, NULL, NULL, nvol, vol, &acc);
	for (int i = 0; i < acc.n; i++) {
		const Access *x = &acc.items[i];
		if (x->buf != buf)
			continue;
		Expr *happens = ir_and(a, x->guard, imap_in_box(a, x->nidx, x->idx, buf->shape));
		Expr *goal = ir_or(a, ir_not(a, happens, nospan()), in_box(a, box, x->nidx, x->idx));
		Obligation *o = rw_obligation_at(
			c, &c->obs, sc, "cache.covers",
			arena_printf(a, "the region staged in %s covers the %s of %s at %d:%d", cache,
				     x->is_write ? "write" : "read", buf->name, x->span.line, x->span.col),
			goal);
		for (int v = 0; v < acc.nvars; v++)
			obligation_add_var(a, o, acc.vars[v]);
		for (int h = 0; h < acc.nhyps; h++)
			obligation_add_hyp(a, o, acc.hyps[h]);
		obligation_add_related(a, o, x->span);
	}
}

/* cache.readable: the copy-in reads buf[t] for every t in the box, cells
 * the original may never have read:
 *     forall t in box: readable(buf[t]) and not forbidden(buf[t])
 * (a parameter's logical cells, cells a fact or earlier stage covers; no
 * padding without a pad value). Skipped when it holds syntactically. */
static void readable_obligation(RwCtx *c, const StmtCtx *sc, Buffer *buf, const Box *box,
				Var **vs)
{
	Arena *a = c->arena;
	FactSet fs;
	memset(&fs, 0, sizeof fs);
	an_facts_at(a, c->func, sc, false, NULL, &fs);
	Var **tv = arena_alloc(a, sizeof(Var *) * (size_t)(box->n + 1));
	Expr **t = arena_alloc(a, sizeof(Expr *) * (size_t)(box->n + 1));
	for (int k = 0; k < box->n; k++) {
		tv[k] = an_fresh_var(a, vs[k], "");
		t[k] = ir_varref(a, tv[k], nospan());
	}
	Expr *goal = an_readable(a, c->func, &fs, buf, box->n, t);
	const Layout *lay = buf->layout;
	Expr *forb = lay ? (lay->forbidden ? lay->forbidden
			    : lay->pad_kind == PAD_NONE_GIVEN ? lay->pad_predicate : NULL)
			 : NULL;
	if (forb && lay->inv_vars)
		goal = ir_and(a, goal, ir_not(a, ir_subst_expr(a, forb, box->n, lay->inv_vars, t), nospan()));
	if (goal->kind == EX_INT && goal->u.ival)
		return;
	Obligation *o = rw_obligation_at(c, &c->obs, sc, "cache.readable",
					 arena_printf(a, "every cell of %s that the copy-in reads is initialised",
						      buf->name),
					 goal);
	for (int k = 0; k < box->n; k++)
		obligation_add_var(a, o, tv[k]);
	obligation_add_hyp(a, o, in_box(a, box, box->n, t));
	obligation_add_related(a, o, buf->span);
}

/* cache.written (cache_write without copy-in, by facts): every cell the
 * copy-out moves back is written by the block first,
 *     forall t in box: some instance of a store of the block writes t
 * (an_store_facts: its guard held and its index is t). */
static void written_obligation(RwCtx *c, const StmtCtx *sc, Buffer *buf, const Box *box, Var **vs,
			       const FactSet *own, const char *where)
{
	Arena *a = c->arena;
	Var **tv = arena_alloc(a, sizeof(Var *) * (size_t)(box->n + 1));
	Expr **t = arena_alloc(a, sizeof(Expr *) * (size_t)(box->n + 1));
	for (int k = 0; k < box->n; k++) {
		tv[k] = an_fresh_var(a, vs[k], "");
		t[k] = ir_varref(a, tv[k], nospan());
	}
	Expr *goal = an_written(a, own, buf, box->n, t);
	Obligation *o = rw_obligation_at(
		c, &c->obs, sc, "cache.written",
		arena_printf(a, "%s writes every cell of %s that the copy-out moves (no copy-in)", where,
			     buf->name),
		goal);
	for (int k = 0; k < box->n; k++)
		obligation_add_var(a, o, tv[k]);
	obligation_add_hyp(a, o, in_box(a, box, box->n, t));
	obligation_add_related(a, o, buf->span);
}

/* The copies run for every iteration of the loops around the block and
 * touch the whole region, which the original iteration may not have: a
 * parallel or vectorized loop around it is checked again (parallel.md). */
static void race_rechecks(RwCtx *c, const StmtCtx *sc, const Func *out)
{
	Arena *a = c->arena;
	for (int i = 0; i < sc->nloops; i++) {
		const Stmt *l = sc->loops[i];
		if (l->u.loop.kind != FOR_PARALLEL && l->u.loop.kind != FOR_VECTORIZED)
			continue;
		StmtCtx lc;
		if (!an_find_stmt(a, c->func, l, &lc))
			continue;
		const Stmt *nl = an_stmt_at(out->body, lc.path, lc.depth);
		if (!nl || nl->kind != ST_FOR)
			continue;
		const char *kind = l->u.loop.kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race";
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), l->span);
		rw_add_context_hyps(c, base, &lc);
		rw_race_obligations(c, kind, base, nl);
	}
}

/* ---------- the rewrite ---------- */

/* Where the stages go: a block, or the function body after its leading
 * T.assume statements and fact loops. */
typedef struct Site {
	Stmt *target;
	StmtCtx sc;   /* of the target (or of its first statement) */
	bool whole;   /* the function body */
	int nlead;    /* whole: leading fact statements kept in front */
} Site;

static RwStatus find_site(RwCtx *c, const CacheArgs *args, Site *site)
{
	Arena *a = c->arena;
	const Func *f = c->func;
	memset(site, 0, sizeof *site);
	if (args->block) {
		Stmt *blk = rw_find_block(f, args->block);
		if (!blk)
			return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: no block '%s' in function '%s'%s",
				       args->write ? "cache_write" : "cache_read", args->block, f->name,
				       rw_block_hint(a, f, args->block));
		if (!an_find_stmt(a, f, blk, &site->sc))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span, "block '%s' is nested too deeply",
				       args->block);
		site->target = blk;
		return RW_OK;
	}
	site->whole = true;
	Stmt *body = f->body;
	if (body->kind != ST_SEQ) {
		site->target = body;
		site->sc.stmt = body;
		return RW_OK;
	}
	int n = body->u.seq.n, k = 0;
	while (k < n && (body->u.seq.items[k]->kind == ST_ASSUME ||
			 (body->u.seq.items[k]->kind == ST_FOR && an_is_fact_loop(body->u.seq.items[k]))))
		k++;
	site->nlead = k;
	if (k == n)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: function '%s' holds only facts",
			       args->write ? "cache_write" : "cache_read", f->name);
	site->target = n - k == 1 ? body->u.seq.items[k] : ir_seq(a, n - k, body->u.seq.items + k, body->span);
	site->sc.stmt = body->u.seq.items[k];
	site->sc.path[0] = k;
	site->sc.depth = 1;
	return RW_OK;
}

static Stmt *seq_of(Arena *a, int n, Stmt **items, Span sp)
{
	return n == 1 ? items[0] : ir_seq(a, n, items, sp);
}

/* The body with the block at sc replaced by `staged` (an allocation).
 * An allocation's body is the rest of its sequence, so the statements
 * after the block move into it: the printed text parses back the same. */
static Stmt *place_staged(Arena *a, Stmt *root, const StmtCtx *sc, Stmt *staged)
{
	int d = sc->depth;
	Stmt *parent = d > 0 ? an_stmt_at(root, sc->path, d - 1) : NULL;
	if (!parent || parent->kind != ST_SEQ)
		return an_replace_at(a, root, sc->path, d, staged);
	int n = parent->u.seq.n, k = sc->path[d - 1];
	Stmt *inner = staged->u.alloc.body;
	if (k + 1 < n) {
		Stmt *rest = seq_of(a, n - k - 1, parent->u.seq.items + k + 1, parent->span);
		inner = rw_append_stmt(a, inner, rest);
	}
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(k + 1));
	memcpy(items, parent->u.seq.items, sizeof(Stmt *) * (size_t)k);
	items[k] = ir_alloc(a, staged->u.alloc.buf, inner, staged->span);
	return an_replace_at(a, root, sc->path, d - 1, seq_of(a, k + 1, items, parent->span));
}

/* What a stage made, for the consumers that read the cache after it. */
typedef struct Staged {
	Buffer *buf, *cache;
	Box box;
	int nstage; /* items of the allocation's body that the stage made */
	const char *out_block; /* cache_write: the copy-out block */
} Staged;

static RwStatus cache_main(RwCtx *c, const CacheArgs *args, Staged *out);

static bool writes_either(const Stmt *s, const Buffer *x, const Buffer *y)
{
	return rw_stmt_accesses(s, x, true) || rw_stmt_accesses(s, y, true);
}

static bool is_alloc_of(const Stmt *s, void *buf)
{
	return s->kind == ST_ALLOC && s->u.alloc.buf == buf;
}

/* s with the allocation at path (depth steps) replaced by its body,
 * spliced into the sequence around it (one flat sequence). */
static Stmt *unwrap_alloc(Arena *a, Stmt *root, const StmtCtx *sc)
{
	Stmt *al = an_stmt_at(root, sc->path, sc->depth);
	Stmt *body = al->u.alloc.body;
	int d = sc->depth;
	Stmt *parent = d > 0 ? an_stmt_at(root, sc->path, d - 1) : NULL;
	if (!parent || parent->kind != ST_SEQ || body->kind != ST_SEQ)
		return an_replace_at(a, root, sc->path, d, body);
	int n = parent->u.seq.n, k = sc->path[d - 1], nb = body->u.seq.n;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + nb));
	memcpy(items, parent->u.seq.items, sizeof(Stmt *) * (size_t)k);
	memcpy(items + k, body->u.seq.items, sizeof(Stmt *) * (size_t)nb);
	memcpy(items + k + nb, parent->u.seq.items + k + 1, sizeof(Stmt *) * (size_t)(n - k - 1));
	return an_replace_at(a, root, sc->path, d - 1, ir_seq(a, n - 1 + nb, items, parent->span));
}

/* cache_write, consumer_blocks: block `name` runs outside the loops that
 * hold the stage (TVM keeps its cache for the whole function). The
 * cache's allocation moves to the function (a longer lifetime only
 * initialises more cells: every proof made for the stage still holds).
 * When every store to the buffer in the function is the stage's
 * copy-out, each cell the cache holds equals the buffer's after every
 * stage instance (the copy-out copies the whole box, which holds every
 * cell the block writes: cache.covers), and nothing else changes either.
 * So a read of the cache equals the buffer's wherever the cell is
 * initialised in the cache: cache.consumer_readable, proven from the
 * stage's store facts at the block. */
static RwStatus serve_later_consumer(RwCtx *c, const Staged *st, const char *what, const char *name)
{
	Arena *a = c->arena;
	Func *out = c->out;
	if (!st->out_block)
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: consumer_blocks: block '%s' is outside the loops that hold the stage (only cache_write serves such a block)",
			       what, name);
	const Stmt *copy = rw_find_block(out, st->out_block);
	if (!copy || count_stores(out->body, st->buf) != count_stores(copy, st->buf))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: consumer_blocks: block '%s' is outside the loops that hold the stage, and %s is written outside the stage",
			       what, name, st->buf->name);
	const Stmt *al = stmt_find(out->body, is_alloc_of, st->cache);
	StmtCtx asc;
	if (!al || !an_find_stmt(a, out, al, &asc))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: consumer_blocks: the cache's allocation is not found",
			       what);
	Stmt *body = ir_alloc(a, st->cache, unwrap_alloc(a, out->body, &asc), c->call_span);
	out = an_with_body(a, out, body);
	Stmt *blk = rw_find_block(out, name);
	StmtCtx sc;
	if (!blk || !an_find_stmt(a, out, blk, &sc))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: consumer_blocks: no block '%s'", what, name);
	for (int i = 0; i < sc.nloops; i++)
		if (sc.loops[i]->u.loop.kind == FOR_PARALLEL || sc.loops[i]->u.loop.kind == FOR_VECTORIZED)
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: consumer_blocks: block '%s' is inside a parallel or vectorized loop", what,
				       name);
	if (rw_stmt_accesses(blk, st->buf, true) || !rw_stmt_accesses(blk, st->buf, false))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: consumer_blocks: block '%s' must read %s and not write it", what, name,
			       st->buf->name);
	FactSet fs;
	an_facts_at(a, out, &sc, false, NULL, &fs);
	AccessList acc;
	memset(&acc, 0, sizeof acc);
	an_collect_accesses(a, blk, 0, NULL, NULL, 0, NULL, &acc);
	for (int i = 0; i < acc.n; i++) {
		const Access *x = &acc.items[i];
		if (x->buf != st->buf)
			continue;
		Expr *happens = ir_and(a, x->guard, imap_in_box(a, x->nidx, x->idx, st->buf->shape));
		Expr *goal = ir_or(a, ir_not(a, happens, nospan()),
				   an_readable(a, out, &fs, st->cache, x->nidx, x->idx));
		Obligation *o = rw_obligation_at(
			c, &c->obs, &sc, "cache.consumer_readable",
			arena_printf(a, "the read of %s at %d:%d by block '%s' finds its cell written in %s", st->buf->name,
				     x->span.line, x->span.col, name, st->cache->name),
			goal);
		for (int v = 0; v < acc.nvars; v++)
			obligation_add_var(a, o, acc.vars[v]);
		for (int h = 0; h < acc.nhyps; h++)
			obligation_add_hyp(a, o, acc.hyps[h]);
		obligation_add_related(a, o, x->span);
	}
	Stmt *nb = ir_replace_buffer(a, blk, st->buf, st->cache);
	c->out = an_with_body(a, out, an_replace_at(a, out->body, sc.path, sc.depth, nb));
	return RW_OK;
}

/* consumer_blocks: block `name` of c->out, after the stage in the body
 * of the cache's allocation, reads the cache instead of the buffer.
 * Right after the stage (cache_read: after the staged block; cache_write:
 * after the copy-out) the cache holds the buffer's values on the box;
 * nothing from there to the block and nothing in its item writes either
 * (checked here), so each read of the block sees the same value in both
 * wherever it lies in the box (cache.covers, proven at the block). */
static RwStatus serve_consumer(RwCtx *c, const Staged *st, const char *what, const char *name)
{
	Arena *a = c->arena;
	const Func *out = c->out;
	Stmt *blk = rw_find_block(out, name);
	StmtCtx sc;
	if (!blk || !an_find_stmt(a, out, blk, &sc))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: consumer_blocks: no block '%s'", what, name);
	int d_alloc = -1;
	for (int d = 0; d < sc.depth; d++) {
		const Stmt *s = an_stmt_at(out->body, sc.path, d);
		if (s->kind == ST_ALLOC && s->u.alloc.buf == st->cache)
			d_alloc = d;
	}
	if (d_alloc < 0)
		return serve_later_consumer(c, st, what, name);
	const Stmt *alloc = d_alloc >= 0 ? an_stmt_at(out->body, sc.path, d_alloc) : NULL;
	const Stmt *body = alloc ? alloc->u.alloc.body : NULL;
	if (!body || body->kind != ST_SEQ || d_alloc + 1 >= sc.depth ||
	    sc.path[d_alloc + 1] < st->nstage)
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: consumer_blocks: block '%s' does not follow the stage in the same sequence",
			       what, name);
	for (int i = 0; i < sc.nloops; i++)
		if (sc.loops[i]->u.loop.kind == FOR_PARALLEL || sc.loops[i]->u.loop.kind == FOR_VECTORIZED)
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: consumer_blocks: block '%s' is inside a parallel or vectorized loop", what,
				       name);
	int j = sc.path[d_alloc + 1];
	for (int i = st->nstage; i <= j; i++)
		if (writes_either(body->u.seq.items[i], st->buf, st->cache))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       i == j ? "%s: consumer_blocks: block '%s' (or its loops) writes %s"
					      : "%s: consumer_blocks: a statement before block '%s' writes %s or its cache",
				       what, name, st->buf->name);
	if (!rw_stmt_accesses(blk, st->buf, false))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: consumer_blocks: block '%s' does not read %s",
			       what, name, st->buf->name);
	cover_obligations(c, &sc, blk, st->buf, &st->box, st->cache->name);
	Stmt *nb = ir_replace_buffer(a, blk, st->buf, st->cache);
	c->out = an_with_body(a, out, an_replace_at(a, out->body, sc.path, sc.depth, nb));
	return RW_OK;
}

RwStatus rw_cache(RwCtx *c, const CacheArgs *args)
{
	CacheArgs own = *args;
	int first = 0;
	if (args->nconsumers > 0 && !args->write) {
		/* the stage serves the first consumer; `block` named the buffer */
		own.block = args->consumers[0];
		first = 1;
	}
	NestWrap w;
	rw_nest_wrap(c, own.block, &w);
	Staged st;
	memset(&st, 0, sizeof st);
	RwStatus r = cache_main(c, &own, &st);
	rw_nest_unwrap(c, &w);
	const char *what = args->write ? "cache_write" : "cache_read";
	for (int i = first; i < args->nconsumers && r == RW_OK; i++) {
		if (args->write && strcmp(args->consumers[i], args->block) == 0)
			continue;
		r = serve_consumer(c, &st, what, args->consumers[i]);
	}
	return r;
}

/* Whether every cell of internal buffer buf is uninitialised whenever
 * the site starts: every store to buf in f is inside the site, and buf is
 * allocated inside every loop around the site (each iteration starts
 * with a fresh allocation, so no earlier iteration's write is seen). */
static bool uninitialised_at_entry(const Func *f, const Site *site, const Buffer *buf)
{
	if (count_stores(f->body, buf) != count_stores(site->target, buf) || site->whole)
		return false;
	int last_loop = -1, alloc = -1;
	for (int d = 0; d < site->sc.depth; d++) {
		const Stmt *s = an_stmt_at(f->body, site->sc.path, d);
		if (s->kind == ST_FOR)
			last_loop = d;
		if (s->kind == ST_ALLOC && s->u.alloc.buf == buf)
			alloc = d;
	}
	return alloc >= 0 && alloc > last_loop;
}

static RwStatus cache_main(RwCtx *c, const CacheArgs *args, Staged *so)
{
	Arena *a = c->arena;
	const Func *f = c->func;
	const char *what = args->write ? "cache_write" : "cache_read";
	bool is_param;
	Buffer *buf = rw_find_buffer(f, args->buffer, &is_param);
	if (!buf)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: no buffer '%s' in function '%s'%s", what,
			       args->buffer, f->name, rw_buffer_hint(c->arena, f, args->buffer));
	BufferScope scope = buf->scope;
	if (args->scope && !scope_from_name(args->scope, &scope))
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "%s: scope must be \"global\", \"local\" or \"shared\", not \"%s\"", what,
			       args->scope);
	const char *name = args->name ? args->name
				      : arena_printf(a, "%s_%s", buf->name, scope_name(scope));
	bool taken_param;
	if (rw_find_buffer(f, name, &taken_param))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: function '%s' already has a buffer '%s'",
			       what, f->name, name);
	Site site;
	RwStatus st = find_site(c, args, &site);
	if (st != RW_OK)
		return st;
	const char *where = args->block ? arena_printf(a, "block '%s'", args->block)
					: arena_printf(a, "function '%s'", f->name);
	if (site.whole && !is_param)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "%s: buffer '%s' is allocated inside the function: name the block that uses it (block=)",
			       what, buf->name);
	if (!rw_stmt_accesses(site.target, buf, false))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: %s does not access buffer '%s'", what,
			       where, buf->name);
	if (an_allocates(site.target, buf))
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "%s: buffer '%s' is allocated inside %s; stage it where it is used", what,
			       buf->name, where);
	bool writes = rw_stmt_accesses(site.target, buf, true);
	/* cache_read: no write to the source between copy-in and use. The
	 * copy sits right before the target, so this holds iff the target
	 * itself does not write the source. */
	if (!args->write && writes)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "cache_read: %s writes buffer '%s', so a copy made before it goes stale (use cache_write)",
			       where, buf->name);
	if (args->write && !writes)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "cache_write: %s does not write buffer '%s' (use cache_read)", where, buf->name);
	Buffer *cache = ir_buffer(a, name, buf->dtype, buf->ndim, buf->shape, c->call_span);
	cache->scope = scope;
	Box box;
	bool copy_in = true;
	if (args->write && witness_box(a, site.target, buf, &box))
		copy_in = false;
	else
		bounds_box(a, f, &site.sc, site.target, buf, &box);
	bool symbolic[AN_MAX_DEPTH + 1] = {false};
	if (copy_in && buf->ndim <= AN_MAX_DEPTH &&
	    consumer_box(a, &site.sc, site.target, buf, args->write, &box, symbolic))
		in_bounds_obligations(c, &site.sc, buf, &box, symbolic);
	/* cache_write of an internal buffer where the witness shape does not
	 * apply (a T.where, an index i * 8 + j, a read after the write): no
	 * copy-in when the block's own stores write every staged cell
	 * (cache.written), as TVM assumes, and the block either never reads
	 * the buffer or finds it wholly uninitialised each time it starts:
	 * then each read of a run without undefined behaviour reads a cell
	 * the block wrote before, which the cache holds too */
	FactSet own;
	memset(&own, 0, sizeof own);
	bool by_facts = false;
	if (copy_in && args->write && !is_param &&
	    (!an_stmt_reads(site.target, buf) || uninitialised_at_entry(f, &site, buf))) {
		an_store_facts(a, site.target, &own);
		for (int i = 0; i < own.n && !by_facts; i++)
			by_facts = own.items[i]->buf == buf;
		copy_in = !by_facts;
	}
	Var **vs = copy_vars(a, f, &box, NULL);
	cover_obligations(c, &site.sc, site.target, buf, &box, name);
	if (copy_in)
		readable_obligation(c, &site.sc, buf, &box, vs);
	else if (by_facts)
		written_obligation(c, &site.sc, buf, &box, vs, &own, where);
	/* cache_write: no read of the destination between use and copy-out.
	 * Every access of the target is redirected and the copy-out follows
	 * it directly, so nothing reads buf in between. */
	Stmt *tgt = ir_replace_buffer(a, site.target, buf, cache);
	int ntgt = tgt->kind == ST_SEQ ? tgt->u.seq.n : 1;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(ntgt + 2));
	int n = 0;
	if (copy_in) {
		const char *blk = unique_block_name(a, f, args->write ? arena_printf(a, "%s_in", name) : name);
		items[n++] = copy_stage(a, blk, &box, vs, cache, buf, c->call_span);
	}
	/* one flat sequence, as the parser builds it */
	for (int i = 0; i < ntgt; i++)
		items[n++] = tgt->kind == ST_SEQ ? tgt->u.seq.items[i] : tgt;
	if (args->write) {
		Var **out_vars = copy_in ? copy_vars(a, f, &box, vs) : vs;
		const char *blk = unique_block_name(a, f, arena_printf(a, "%s_out", name));
		items[n++] = copy_stage(a, blk, &box, out_vars, buf, cache, c->call_span);
		so->out_block = blk;
	}
	so->buf = buf;
	so->cache = cache;
	so->box = box;
	so->nstage = n;
	Stmt *staged = ir_alloc(a, cache, seq_of(a, n, items, c->call_span), c->call_span);
	Stmt *body;
	if (!site.whole) {
		body = place_staged(a, f->body, &site.sc, staged);
	} else if (site.nlead == 0) {
		body = staged;
	} else {
		Stmt **lead = arena_alloc(a, sizeof(Stmt *) * (size_t)(site.nlead + 1));
		memcpy(lead, f->body->u.seq.items, sizeof(Stmt *) * (size_t)site.nlead);
		lead[site.nlead] = staged;
		body = ir_seq(a, site.nlead + 1, lead, f->body->span);
	}
	c->out = an_with_body(a, f, body);
	if (!site.whole)
		race_rechecks(c, &site.sc, c->out);
	if (args->write && !copy_in && !by_facts)
		c->note = arena_printf(a, "no copy-in: %s writes every cell of the staged region of %s and reads none",
				       where, buf->name);
	return RW_OK;
}
