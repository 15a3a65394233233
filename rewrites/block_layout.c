/* rewrites/block_layout.c — transform_block_layout(block, index_map), as
 * TVM defines it: the block's iteration space D (the box of its iter
 * domains) is remapped by f onto a new box S; the block gets new loops
 * ax_k over S, new iter vars v_k bound to them, and its old iter vars are
 * rebound through the inverse g (x := g(v)). TVM's preconditions: the
 * block has iter vars, bound trivially (iter k = loop k, loops from 0 over
 * the iter domains), and is the only statement of its loop nest; an
 * output of the map may not mix iter types. The map's shape and inverse
 * are proposals (kernel/analysis/index_map.h); obligations
 * (semantics.md 4, 9; the iter types are not trusted):
 *   layout.in_bounds      x in D -> 0 <= f_k(x) < S_k
 *   layout.injective      x, y in D, f(x) == f(y) -> x == y
 *   layout.left_inverse   x in D -> g(f(x)) == x
 *   layout.onto           t in S -> g(t) in D and f(g(t)) == t
 *   block_layout.init     x in D -> (old init condition at x <-> every
 *                         new reduction iter var f_k(x) is 0)
 *   block_layout.order    x, y in D, x <lex y, f(y) <lex f(x) -> the
 *                         instances at x and y commute
 * so the new nest runs exactly the block's instances, each once, with
 * its init where it was, and the instances whose order changes commute.
 * (proofs/transform_block_layout.md) */
#include "rewrites/layout.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/expr_query.h"
#include "kernel/analysis/index_map.h"
#include "kernel/parse.h"
#include "kernel/print.h"

#define MAX_ITERS 16
#define MAX_FACTORS 8

static Span nospan(void) { return (Span){0}; }

static Expr *ref(Arena *a, Var *v) { return ir_varref(a, v, nospan()); }

/* ---------- the block and its nest ---------- */

typedef struct BlockFind {
	const char *name;
	Stmt *hit;
	int seen;
} BlockFind;

static void find_visit(void *ud, Stmt *s, const StmtCtx *c)
{
	(void)c;
	BlockFind *f = ud;
	if (s->kind == ST_BLOCK && strcmp(s->u.block.name, f->name) == 0 && !f->seen++)
		f->hit = s;
}

static Stmt *skip_single(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

/* A product of an integer and size variables (free of the indices). */
typedef struct Mono {
	int64_t c;
	int nv;
	Var *v[MAX_FACTORS];
} Mono;

typedef struct Tbl {
	Stmt *block;
	const BlockInfo *info;
	BlockView view;
	StmtCtx bctx;  /* of the block */
	StmtCtx top;   /* of the outermost loop of the nest */
	int n;         /* iter vars == loops of the nest */
	Stmt **chain;  /* the nest, outermost first */
	IndexMap m;
	Lambda *l;
	Mono *shape_mono; /* the fused shapes as products (NULL: imap_shape's) */
} Tbl;

/* The loops between the innermost block around `block` (or the function
 * body) and it: TVM's GetLoops. They must nest perfectly down to the
 * block (TVM: the outermost has the block as its single child). */
static RwStatus find_nest(RwCtx *c, const char *name, Tbl *t)
{
	Arena *a = c->arena;
	BlockFind f = {.name = name};
	an_walk(a, c->func, find_visit, &f);
	if (!f.seen)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "transform_block_layout: no block '%s' in function '%s'",
			       name, c->func->name);
	if (f.seen > 1)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "transform_block_layout: %d blocks are named '%s' in function '%s'", f.seen, name,
			       c->func->name);
	t->block = f.hit;
	t->info = f.hit->u.block.info;
	if (!t->info || t->info->niters == 0)
		return rw_fail(c, RW_PRECONDITION, f.hit->span,
			       "transform_block_layout: block '%s' has no iter vars to remap", name);
	if (!block_view(a, f.hit, &t->view))
		return rw_fail(c, RW_UNSUPPORTED, f.hit->span,
			       "transform_block_layout: block '%s' no longer has the shape of its declaration (iter vars, T.where, T.init)",
			       name);
	if (!an_find_stmt(a, c->func, f.hit, &t->bctx))
		return rw_fail(c, RW_UNSUPPORTED, f.hit->span, "transform_block_layout: block '%s' not found", name);
	/* the loops below the innermost enclosing block */
	t->chain = arena_alloc(a, sizeof(Stmt *) * (size_t)(t->bctx.nloops + 1));
	t->n = 0;
	for (int d = 0; d < t->bctx.depth; d++) {
		Stmt *s = an_stmt_at(c->func->body, t->bctx.path, d);
		if (s->kind == ST_BLOCK)
			t->n = 0;
		else if (s->kind == ST_FOR)
			t->chain[t->n++] = s;
	}
	if (t->n == 0)
		return rw_fail(c, RW_UNSUPPORTED, f.hit->span,
			       "transform_block_layout: block '%s' has no loops of its own (not supported)", name);
	for (int i = 0; i < t->n; i++) {
		Stmt *next = i + 1 < t->n ? t->chain[i + 1] : f.hit;
		if (skip_single(t->chain[i]->u.loop.body) != next)
			return rw_fail(c, RW_PRECONDITION, t->chain[i]->span,
				       "transform_block_layout: block '%s' is not the only statement of its loop nest (loop '%s' holds more)",
				       name, t->chain[i]->u.loop.var->name);
	}
	an_find_stmt(a, c->func, t->chain[0], &t->top);
	return RW_OK;
}

/* TVM's trivial binding: iter k bound to loop k, which runs from 0 over
 * the iter's domain [0, extent). */
static RwStatus check_binding(RwCtx *c, Tbl *t)
{
	const char *bn = t->block->u.block.name;
	const BlockInfo *info = t->info;
	if (info->niters != t->n)
		return rw_fail(c, RW_PRECONDITION, t->block->span,
			       "transform_block_layout: block '%s' has %d iter vars under %d loops: its binding is not trivial",
			       bn, info->niters, t->n);
	if (info->niters > MAX_ITERS)
		return rw_fail(c, RW_UNSUPPORTED, t->block->span, "transform_block_layout: too many iter vars");
	for (int k = 0; k < t->n; k++) {
		const BlockIter *it = &info->iters[k];
		const Stmt *l = t->chain[k];
		const Expr *b = t->view.bindings[k];
		if (b->kind != EX_VAR || b->u.var != l->u.loop.var)
			return rw_fail(c, RW_PRECONDITION, it->var->span,
				       "transform_block_layout: iter var '%s' of block '%s' is not bound to loop '%s': the binding is not trivial",
				       it->var->name, bn, l->u.loop.var->name);
		int64_t lo, lm;
		if (!an_const_int(it->dom_min, &lo) || lo != 0 || !an_const_int(l->u.loop.min, &lm) || lm != 0)
			return rw_fail(c, RW_PRECONDITION, l->span,
				       "transform_block_layout: loop '%s' or the domain of iter var '%s' does not start at 0",
				       l->u.loop.var->name, it->var->name);
		int64_t e1, e2;
		bool same = ir_expr_equal(it->dom_extent, l->u.loop.extent) ||
			    (an_const_int(it->dom_extent, &e1) && an_const_int(l->u.loop.extent, &e2) && e1 == e2);
		if (!same)
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "transform_block_layout: loop '%s' does not run over the whole domain of iter var '%s' (not supported)",
				       l->u.loop.var->name, it->var->name);
		if (an_expr_has_load(it->dom_extent))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "transform_block_layout: the domain of iter var '%s' reads memory (not supported)",
				       it->var->name);
	}
	if (t->view.where)
		return rw_fail(c, RW_UNSUPPORTED, t->view.where->span,
			       "transform_block_layout: block '%s' has a T.where (not supported)", bn);
	return RW_OK;
}

/* ---------- a fused mixed radix: sum_j C_j * x_j with C_{j+1} = C_j * E_j ---------- */

static bool mono_mul(Mono *x, const Mono *y)
{
	if (__builtin_mul_overflow(x->c, y->c, &x->c) || x->nv + y->nv > MAX_FACTORS)
		return false;
	for (int i = 0; i < y->nv; i++)
		x->v[x->nv++] = y->v[i];
	return true;
}

static bool mono_equal(const Mono *x, const Mono *y)
{
	if (x->c != y->c || x->nv != y->nv)
		return false;
	bool used[MAX_FACTORS] = {false};
	for (int i = 0; i < x->nv; i++) {
		bool hit = false;
		for (int j = 0; j < y->nv && !hit; j++)
			if (!used[j] && x->v[i] == y->v[j])
				hit = used[j] = true;
		if (!hit)
			return false;
	}
	return true;
}

static int index_of(const IndexMap *m, const Var *v)
{
	for (int i = 0; i < m->nin; i++)
		if (m->in[i] == v)
			return i;
	return -1;
}

/* e as a product: its monomial and at most one index variable (*idx, -1
 * if none). */
static bool product_of(const IndexMap *m, const Expr *e, Mono *mono, int *idx)
{
	int64_t c;
	if (an_const_int(e, &c)) {
		mono->c = c;
		mono->nv = 0;
		*idx = -1;
		return true;
	}
	if (e->kind == EX_VAR) {
		int i = index_of(m, e->u.var);
		mono->c = 1;
		mono->nv = 0;
		*idx = i;
		if (i < 0)
			mono->v[mono->nv++] = e->u.var;
		return true;
	}
	if (e->kind == EX_CAST && dtype_is_int(e->dtype) && e->u.un.a->kind == EX_VAR &&
	    index_of(m, e->u.un.a->u.var) < 0) {
		mono->c = 1;
		mono->nv = 1;
		mono->v[0] = e->u.un.a->u.var;
		*idx = -1;
		return true;
	}
	if (e->kind != EX_BIN || e->u.bin.op != OP_MUL)
		return false;
	Mono y;
	int i1, i2;
	if (!product_of(m, e->u.bin.a, mono, &i1) || !product_of(m, e->u.bin.b, &y, &i2) ||
	    (i1 >= 0 && i2 >= 0) || !mono_mul(mono, &y))
		return false;
	*idx = i1 >= 0 ? i1 : i2;
	return true;
}

typedef struct Term {
	Mono coef;
	int idx;
} Term;

/* e as a sum of products */
static bool terms_of(const IndexMap *m, const Expr *e, Term *out, int *n, int max)
{
	if (e->kind == EX_BIN && e->u.bin.op == OP_ADD)
		return terms_of(m, e->u.bin.a, out, n, max) && terms_of(m, e->u.bin.b, out, n, max);
	if (*n >= max)
		return false;
	Term *t = &out[*n];
	if (!product_of(m, e, &t->coef, &t->idx))
		return false;
	(*n)++;
	return true;
}

static Expr *mono_expr(Arena *a, const Mono *x, DType t)
{
	Expr *e = x->c != 1 || !x->nv ? ir_int(a, x->c, t, nospan()) : NULL;
	for (int i = 0; i < x->nv; i++) {
		Expr *v = ref(a, x->v[i]);
		if (v->dtype != t)
			v = ir_cast(a, t, v, nospan());
		e = e ? ir_mul(a, v, e) : v;
	}
	return e;
}

/* Shape and inverse when every output is a fused mixed radix of its own
 * indices (a permutation, a fuse, TVM's NHWC fusions, a symbolic radix):
 * indices of extent 1 are 0 on D; every other index is a digit of one
 * output, x_j = (t_k // C_j) % E_j. False when the map is not of this
 * form. */
static bool fused_inverse(Arena *a, IndexMap *m, Mono *shape_mono)
{
	int nin = m->nin;
	Mono ext[MAX_ITERS];
	bool unit[MAX_ITERS], placed[MAX_ITERS] = {false};
	DType dt = nin ? m->in[0]->dtype : DT_INT32;
	for (int i = 0; i < nin; i++) {
		int idx;
		if (!product_of(m, m->in_extent[i], &ext[i], &idx) || idx >= 0 || ext[i].c <= 0)
			return false;
		unit[i] = ext[i].c == 1 && ext[i].nv == 0;
	}
	Expr **shape = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nout + 1));
	Expr **inv = arena_alloc(a, sizeof(Expr *) * (size_t)(nin + 1));
	for (int k = 0; k < m->nout; k++) {
		Term terms[2 * MAX_ITERS];
		int nt = 0;
		if (!terms_of(m, m->out[k], terms, &nt, 2 * MAX_ITERS))
			return false;
		/* drop the terms that are 0 on D: of a unit index, or 0 */
		int live = 0;
		for (int j = 0; j < nt; j++) {
			if (terms[j].coef.c == 0)
				continue;
			if (terms[j].idx < 0)
				return false; /* an offset: not onto a box from 0 */
			if (unit[terms[j].idx])
				continue;
			terms[live++] = terms[j];
		}
		/* an output that is one index of extent 1 keeps it (TVM: (j, i)
		 * with i of extent 1 reads v1, not 0) */
		if (live == 0 && nt == 1 && terms[0].idx >= 0 && terms[0].coef.c == 1 && !terms[0].coef.nv)
			live = 1;
		Mono cur = {.c = 1};
		bool used[2 * MAX_ITERS] = {false};
		Expr *t = ref(a, m->phys[k]);
		for (int done = 0; done < live; done++) {
			int hit = -1;
			for (int j = 0; j < live && hit < 0; j++)
				if (!used[j] && mono_equal(&terms[j].coef, &cur))
					hit = j;
			if (hit < 0)
				return false;
			used[hit] = true;
			int i = terms[hit].idx;
			if (placed[i])
				return false;
			placed[i] = true;
			/* TVM's digits: t % E (lowest), t % (C * E) // C, t // C (top) */
			bool lowest = cur.c == 1 && !cur.nv, top = done + 1 == live;
			Mono ce = cur;
			if (!mono_mul(&ce, &ext[i]))
				return false;
			Expr *g = t;
			if (!top)
				g = ir_bin(a, OP_FLOORMOD, g, mono_expr(a, &ce, dt), nospan());
			if (!lowest)
				g = ir_bin(a, OP_FLOORDIV, g, mono_expr(a, &cur, dt), nospan());
			inv[i] = g;
			cur = ce;
		}
		shape[k] = mono_expr(a, &cur, dt);
		shape_mono[k] = cur;
	}
	for (int i = 0; i < nin; i++) {
		if (placed[i])
			continue;
		if (!unit[i])
			return false;
		inv[i] = ir_int(a, 0, dt, nospan());
	}
	m->shape = shape;
	m->inverse = inv;
	return true;
}

/* ---------- the block's indices over the new iter vars ---------- */

/* v // K -> 0 and v % K -> v for a new iter var v of constant extent
 * E <= K (exact: v = ax in [0, E)), then constants folded (an_fold), as
 * TVM's BlockBufferAccessSimplifier gives `v2 % 3` for
 * `v1 // 64 * 3 + v2 % 3` with v1 in [0, 64). Integer arithmetic only. */
static Expr *simp(Arena *a, const IndexMap *m, Expr *e)
{
	switch (e->kind) {
	case EX_BIN: {
		Expr *x = simp(a, m, e->u.bin.a), *y = simp(a, m, e->u.bin.b);
		int64_t kk, ext;
		BinOp op = e->u.bin.op;
		if ((op == OP_FLOORDIV || op == OP_FLOORMOD) && x->kind == EX_VAR && an_const_int(y, &kk)) {
			for (int k = 0; k < m->nout; k++)
				if (m->phys[k] == x->u.var && an_const_int(m->shape[k], &ext) && ext > 0 && ext <= kk)
					return op == OP_FLOORDIV ? ir_int(a, 0, e->dtype, e->span) : x;
		}
		Expr *r = e;
		if (x != e->u.bin.a || y != e->u.bin.b) {
			r = ir_bin(a, op, x, y, e->span);
			r->dtype = e->dtype;
		}
		return dtype_is_int(r->dtype) ? an_fold(a, r) : r;
	}
	case EX_LOAD: {
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(e->u.load.nidx + 1));
		bool changed = false;
		for (int i = 0; i < e->u.load.nidx; i++) {
			idx[i] = simp(a, m, e->u.load.idx[i]);
			changed |= idx[i] != e->u.load.idx[i];
		}
		return changed ? ir_load(a, e->u.load.buf, e->u.load.nidx, idx, e->span) : e;
	}
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_NOT: case EX_NEG: case EX_SELECT: case EX_CAST:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		break;
	}
	return e;
}

/* simp over the indices and values of the stores of s (other statements
 * as they are) */
static Stmt *simp_stmt(Arena *a, const IndexMap *m, Stmt *s)
{
	switch (s->kind) {
	case ST_STORE: {
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(s->u.store.nidx + 1));
		for (int i = 0; i < s->u.store.nidx; i++)
			idx[i] = simp(a, m, s->u.store.idx[i]);
		return ir_store(a, s->u.store.buf, s->u.store.nidx, idx, simp(a, m, s->u.store.value), s->span);
	}
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(s->u.seq.n + 1));
		for (int i = 0; i < s->u.seq.n; i++)
			items[i] = simp_stmt(a, m, s->u.seq.items[i]);
		return ir_seq(a, s->u.seq.n, items, s->span);
	}
	case ST_FOR: case ST_IF: case ST_ASSUME: case ST_EVAL: case ST_ALLOC: case ST_BLOCK: case ST_LET:
	case ST_PASS: case ST_COUNT:
		break;
	}
	return s;
}

/* ---------- obligations ---------- */

static Obligation *ob_at(RwCtx *c, const Tbl *t, const char *kind, const char *stmt, Expr *goal)
{
	Obligation *o = rw_obligation_at(c, &c->obs, &t->top, kind, stmt, goal);
	obligation_add_related(c->arena, o, t->block->span);
	return o;
}

/* A symbolic new extent (n * 32) is refused. Nothing bounds a size
 * variable unless a T.assume does, and then n * 32 passes the dtype's
 * maximum for large n (for n >= 2^58 in int64), where the new loop would
 * run where the nest did not; with a bound, the obligations of a
 * symbolic radix (y * n + w, t // n, t % n) are nonlinear, which the
 * solver does not decide in its time limit. */
static RwStatus symbolic_extent(RwCtx *c, const Tbl *t)
{
	for (int k = 0; t->shape_mono && k < t->m.nout; k++) {
		const Mono *x = &t->shape_mono[k];
		if (!x->nv)
			continue;
		char *txt = print_expr(t->m.shape[k]);
		const char *shape = arena_strdup(c->arena, txt);
		free(txt);
		for (int i = 0; i < x->nv; i++)
			if (!rw_assumed(c->func->body, x->v[i]))
				return rw_fail(c, RW_UNSUPPORTED, t->l->span,
					       "transform_block_layout: the new extent %s of block '%s' may pass the %s maximum: nothing bounds %s",
					       shape, t->block->u.block.name, dtype_name(t->m.phys[k]->dtype),
					       x->v[i]->name);
		return rw_fail(c, RW_UNSUPPORTED, t->l->span,
			       "transform_block_layout: the new extent %s of block '%s' is symbolic: the obligations of a symbolic radix are nonlinear (not supported)",
			       shape, t->block->u.block.name);
	}
	return RW_OK;
}

static void add_box(Arena *a, Obligation *o, int n, Var **vs, Expr **extent)
{
	Expr **r = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		obligation_add_var(a, o, vs[i]);
		r[i] = ref(a, vs[i]);
	}
	Expr *box = imap_in_box(a, n, r, extent);
	if (box)
		obligation_add_hyp(a, o, box);
}

/* (x1, ..., xn) < (y1, ..., yn) lexicographically */
static Expr *lex_less(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *less = ir_bool(a, false), *equal = NULL;
	for (int i = 0; i < n; i++) {
		less = ir_or(a, less, ir_and(a, equal, ir_bin(a, OP_LT, x[i], y[i], nospan())));
		equal = ir_and(a, equal, ir_bin(a, OP_EQ, x[i], y[i], nospan()));
	}
	return less;
}

static void map_obligations(RwCtx *c, const Tbl *t)
{
	Arena *a = c->arena;
	const IndexMap *m = &t->m;
	const char *bn = t->block->u.block.name;
	Expr **x = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nin + 1));
	for (int i = 0; i < m->nin; i++)
		x[i] = ref(a, m->in[i]);
	for (int k = 0; k < m->nout; k++) {
		Obligation *o = ob_at(c, t, "layout.in_bounds",
				      arena_printf(a, "output %d of the index map of block '%s' stays inside the new iteration space",
						   k, bn),
				      imap_in_box(a, 1, &m->out[k], &m->shape[k]));
		add_box(a, o, m->nin, m->in, m->in_extent);
	}
	Var **y = arena_alloc(a, sizeof(Var *) * (size_t)(m->nin + 1));
	Expr **yr = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nin + 1));
	for (int i = 0; i < m->nin; i++) {
		y[i] = an_fresh_var(a, m->in[i], "_2");
		yr[i] = ref(a, y[i]);
	}
	Expr *same_out = NULL, *same_in = NULL;
	for (int k = 0; k < m->nout; k++)
		same_out = ir_and(a, same_out, ir_bin(a, OP_EQ, m->out[k],
						      ir_subst_expr(a, m->out[k], m->nin, m->in, yr), nospan()));
	for (int i = 0; i < m->nin; i++)
		same_in = ir_and(a, same_in, ir_bin(a, OP_EQ, x[i], yr[i], nospan()));
	Obligation *o = ob_at(c, t, "layout.injective",
			      arena_printf(a, "the index map sends different instances of block '%s' to different points",
					   bn),
			      same_in ? same_in : ir_bool(a, true));
	add_box(a, o, m->nin, m->in, m->in_extent);
	add_box(a, o, m->nin, y, m->in_extent);
	if (same_out)
		obligation_add_hyp(a, o, same_out);
	Expr *goal = NULL;
	for (int j = 0; j < m->nin; j++)
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, ir_subst_expr(a, m->inverse[j], m->nout, m->phys, m->out),
					      x[j], nospan()));
	o = ob_at(c, t, "layout.left_inverse",
		  arena_printf(a, "the inverse map recovers every instance of block '%s'", bn),
		  goal ? goal : ir_bool(a, true));
	add_box(a, o, m->nin, m->in, m->in_extent);
	/* layout.onto: the new box holds nothing else (TVM: a bijection) */
	goal = imap_in_box(a, m->nin, m->inverse, m->in_extent);
	for (int k = 0; k < m->nout; k++)
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, ir_subst_expr(a, m->out[k], m->nin, m->in, m->inverse),
					      ref(a, m->phys[k]), nospan()));
	o = ob_at(c, t, "layout.onto",
		  arena_printf(a, "every point of the new iteration space of block '%s' is the image of one of its instances (no padding)",
			       bn),
		  goal ? goal : ir_bool(a, true));
	add_box(a, o, m->nout, m->phys, m->shape);
}

/* block_layout.init: the init runs at the same instances */
static void init_obligation(RwCtx *c, const Tbl *t, const BlockInfo *ni)
{
	Arena *a = c->arena;
	const IndexMap *m = &t->m;
	Var **old = arena_alloc(a, sizeof(Var *) * (size_t)(m->nin + 1));
	Expr **x = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nin + 1));
	for (int i = 0; i < m->nin; i++) {
		old[i] = t->info->iters[i].var;
		x[i] = ref(a, m->in[i]);
	}
	Expr *before = ir_subst_expr(a, block_init_cond(a, t->info), m->nin, old, x);
	Expr *after = ir_subst_expr(a, block_init_cond(a, ni), m->nout, m->phys, m->out);
	Obligation *o = ob_at(c, t, "block_layout.init",
			      arena_printf(a, "the T.init of block '%s' runs at the same instances (its reduction iter vars at 0 before and after)",
					   t->block->u.block.name),
			      ir_bin(a, OP_EQ, before, after, nospan()));
	add_box(a, o, m->nin, m->in, m->in_extent);
}

/* block_layout.order: instances whose order the new nest swaps commute
 * (reduction updates with one associative operator commute in real
 * mode, as for reorder). */
static void order_obligations(RwCtx *c, const Tbl *t)
{
	Arena *a = c->arena;
	const IndexMap *m = &t->m;
	int n = m->nin;
	Obligation *base = obligation_new(a, "block_layout.order", "", 0, NULL, 0, NULL, ir_bool(a, true),
					  t->chain[0]->span);
	rw_add_context_hyps(c, base, &t->top);
	Var **pv = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	Var **qv = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	Var **loops = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	Expr **pr = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	Expr **qr = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		loops[i] = t->chain[i]->u.loop.var;
		pv[i] = an_fresh_var(a, loops[i], "_p");
		qv[i] = an_fresh_var(a, loops[i], "_q");
		pr[i] = ref(a, pv[i]);
		qr[i] = ref(a, qv[i]);
	}
	add_box(a, base, n, pv, m->in_extent);
	add_box(a, base, n, qv, m->in_extent);
	Expr **fp = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nout + 1));
	Expr **fq = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nout + 1));
	for (int k = 0; k < m->nout; k++) {
		fp[k] = ir_subst_expr(a, m->out[k], n, m->in, pr);
		fq[k] = ir_subst_expr(a, m->out[k], n, m->in, qr);
	}
	obligation_add_hyp(a, base, lex_less(a, n, pr, qr));
	obligation_add_hyp(a, base, lex_less(a, m->nout, fq, fp));
	Buffer **vol;
	int nvol = an_written_buffers(a, t->chain[0], &vol);
	AccessList ap, aq;
	memset(&ap, 0, sizeof ap);
	memset(&aq, 0, sizeof aq);
	an_collect_accesses(a, t->block, n, loops, pr, nvol, vol, &ap);
	an_collect_accesses(a, t->block, n, loops, qr, nvol, vol, &aq);
	an_name_instance(a, &ap, "_p");
	an_name_instance(a, &aq, "_q");
	rw_commute_obligations(c, "block_layout.order",
			       arena_printf(a, "instances p before q of block '%s' that run q first in the new nest commute",
					    t->block->u.block.name),
			       base, &ap, &aq, true);
}

/* ---------- the primitive ---------- */

/* The new iter type of output k: the one type of the iter vars it uses
 * (TVM's DetectNewBlockIterType); spatial for an extent of 1. */
static RwStatus new_iter_type(RwCtx *c, const Tbl *t, int k, IterType *out)
{
	const IndexMap *m = &t->m;
	int64_t e;
	if (an_const_int(m->shape[k], &e) && e == 1) {
		*out = ITER_SPATIAL;
		return RW_OK;
	}
	bool found = false;
	for (int i = 0; i < m->nin; i++) {
		if (!ir_expr_uses_var(m->out[k], m->in[i]))
			continue;
		IterType ty = t->info->iters[i].type;
		if (found && ty != *out) {
			char *txt = print_expr(m->out[k]);
			RwStatus st = rw_fail(c, RW_PRECONDITION, t->l->span,
					      "transform_block_layout: output %d of the index map (%s) mixes %s and %s iter vars of block '%s': its iter type cannot be determined",
					      k, txt, iter_type_name(*out), iter_type_name(ty), t->block->u.block.name);
			free(txt);
			return st;
		}
		found = true;
		*out = ty;
	}
	if (!found)
		return rw_fail(c, RW_PRECONDITION, t->l->span,
			       "transform_block_layout: output %d of the index map uses no iter var but its extent is not 1: its iter type cannot be determined",
			       k);
	return RW_OK;
}

static RwStatus read_map(RwCtx *c, Tbl *t, const Source *src, int start, int end)
{
	Arena *a = c->arena;
	int n = t->info->niters;
	DType *pdt = arena_alloc(a, sizeof(DType) * (size_t)(n + 1));
	Expr **ext = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		pdt[i] = t->info->iters[i].var->dtype;
		ext[i] = t->info->iters[i].dom_extent;
	}
	ParseScope scope = {.func = c->func, .nparam_dtypes = n, .param_dtypes = pdt};
	DiagList d;
	diag_init(&d, a);
	Lambda *l = parse_lambda_range(a, src, start, end, &scope, &d);
	if (!l) {
		for (Diag *g = d.first; g; g = g->next)
			diag_add(c->diag, g->level, g->span, "%s", g->message);
		return RW_BAD_INPUT;
	}
	if (l->nparams != n)
		return rw_fail(c, RW_BAD_INPUT, l->span,
			       "transform_block_layout: the index map takes %d indices but block '%s' has %d iter vars",
			       l->nparams, t->block->u.block.name, n);
	if (l->nbody < 1 || l->nseps)
		return rw_fail(c, RW_BAD_INPUT, l->span,
			       "transform_block_layout: the index map must return at least one index (and no axis separator)");
	t->l = l;
	IndexMap *m = &t->m;
	memset(m, 0, sizeof *m);
	m->nin = n;
	m->in = l->params;
	m->in_extent = ext;
	m->nout = l->nbody;
	m->out = l->body;
	m->phys = arena_alloc(a, sizeof(Var *) * (size_t)(m->nout + 1));
	DType dt = n ? l->params[0]->dtype : DT_INT32;
	for (int k = 0; k < m->nout; k++)
		m->phys[k] = ir_var(a, arena_printf(a, "v%d", k), dt, nospan());
	t->shape_mono = arena_alloc(a, sizeof(Mono) * (size_t)(m->nout + 1));
	if (fused_inverse(a, m, t->shape_mono))
		return RW_OK;
	t->shape_mono = NULL;
	const char *why = NULL;
	if (!imap_shape(a, m, &why))
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "transform_block_layout: the index map is not bijective affine (%s)", why);
	if (!imap_derive_inverse(a, m, &why))
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "transform_block_layout: the index map is not bijective affine (no inverse: %s)", why);
	return RW_OK;
}

RwStatus rw_transform_block_layout(RwCtx *c, const char *block, const Source *src, int map_start,
				   int map_end)
{
	Arena *a = c->arena;
	Tbl t;
	memset(&t, 0, sizeof t);
	RwStatus st = find_nest(c, block, &t);
	if (st == RW_OK)
		st = check_binding(c, &t);
	if (st == RW_OK)
		st = read_map(c, &t, src, map_start, map_end);
	if (st != RW_OK)
		return st;
	IndexMap *m = &t.m;
	const BlockInfo *info = t.info;
	/* the new iter vars and the loops that bind them */
	BlockInfo *ni = arena_alloc(a, sizeof *ni);
	ni->niters = m->nout;
	ni->iters = arena_alloc(a, sizeof(BlockIter) * (size_t)(m->nout + 1));
	ni->anonymous = info->anonymous;
	ni->has_init = info->has_init;
	Expr **bind = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nout + 1));
	Var **ax = arena_alloc(a, sizeof(Var *) * (size_t)(m->nout + 1));
	for (int k = 0; k < m->nout; k++) {
		BlockIter *it = &ni->iters[k];
		it->var = m->phys[k];
		it->dom_min = ir_int(a, 0, m->phys[k]->dtype, nospan());
		if (m->shape[k]->dtype != m->phys[k]->dtype)
			m->shape[k] = ir_cast(a, m->phys[k]->dtype, m->shape[k], nospan());
		it->dom_extent = m->shape[k];
		st = new_iter_type(c, &t, k, &it->type);
		if (st != RW_OK)
			return st;
		ax[k] = ir_var(a, arena_printf(a, "ax%d", k), m->phys[k]->dtype, t.chain[0]->span);
		bind[k] = ref(a, ax[k]);
	}
	/* the old iter vars through the inverse */
	Var **old = arena_alloc(a, sizeof(Var *) * (size_t)(info->niters + 1));
	for (int i = 0; i < info->niters; i++)
		old[i] = info->iters[i].var;
	Stmt *init = t.view.init ? simp_stmt(a, m, ir_subst_stmt(a, (Stmt *)t.view.init, info->niters, old, m->inverse))
				 : NULL;
	Stmt *inner = simp_stmt(a, m, ir_subst_stmt(a, (Stmt *)t.view.inner, info->niters, old, m->inverse));
	Stmt *nb = block_assemble(a, t.block->u.block.name, ni, bind, NULL, init, inner, t.block->span);
	Stmt *nest = nb;
	for (int k = m->nout - 1; k >= 0; k--)
		nest = ir_for(a, ax[k], ir_int(a, 0, ax[k]->dtype, nospan()), m->shape[k], FOR_SERIAL, nest,
			      t.chain[0]->span);

	st = symbolic_extent(c, &t);
	if (st != RW_OK)
		return st;
	map_obligations(c, &t);
	if (info->has_init)
		init_obligation(c, &t, ni);
	order_obligations(c, &t);

	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, t.top.path, t.top.depth, nest));
	c->note = arena_printf(a, "block '%s' now runs over %d new loop%s", block, m->nout, m->nout == 1 ? "" : "s");
	return RW_OK;
}
