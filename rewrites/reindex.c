/* rewrites/reindex.c — reindex, reindex_cache_read, reindex_cache_write
 * (TVM's primitives; proofs/reindex.md).
 *
 * Block B, with iter vars v, accesses buffer X at one index list e(v):
 * every load and store of X in B has the same indices, and they use only
 * B's iter vars and size parameters ("a single point"). A new buffer Y
 * indexed by g(v) takes X's place in B: reindex indexes Y by the iter vars
 * e uses (Y's shape their domains), reindex_cache_* by the script's index
 * map (Y's shape the map's image). A copy block with B's bindings moves
 * the cells, Y[g(v)] = X[e(v)] before B (read) or X[e(v)] = Y[g(v)] after
 * it (write).
 *
 * The site T is the outermost loop around B inside which nothing but B
 * accesses X (B itself when there is none): the copy goes right before
 * (read) or after (write) T, over the loops between T and B that B's
 * bindings use (fresh copies), and Y is allocated there. So between the
 * copy and B's instances only B touches X or Y, and every obligation is
 * about one execution of T:
 *   reindex.in_bounds  every copy instance indexes Y inside its shape;
 *   reindex.injective  read: two instances with the same g have the same
 *                      e (the copy never overwrites a cell B reads with
 *                      another cell of X); write: same g iff same e (Y's
 *                      cells stand for X's one to one);
 *   reindex.readable   read: every cell of X the copy reads lies in X's
 *                      shape and is initialised at T (the copy may run
 *                      instances B's guards skip).
 * The write side needs no copy-in: B either never reads X, or is a
 * reduction whose T.init writes the cell before any read of it within T
 * (checked on its structure: each reduction iter var is bound to a loop
 * between T and B that starts at its domain minimum, and e uses none).
 * Every instance of B writes its cell (a store at the top of its body, no
 * T.where, only loops between T and B), so the copy-out reads only cells
 * B wrote. */
#include "rewrites/reindex.h"

#include <string.h>

#include "kernel/analysis/expr_query.h"
#include "kernel/analysis/facts.h"
#include "kernel/analysis/index_map.h"
#include "kernel/print.h"
#include "rewrites/cache.h"
#include "rewrites/layout.h"

static Span nospan(void) { return (Span){0}; }

static const char *prim(const ReindexArgs *r)
{
	return !r->scope ? "reindex" : r->write ? "reindex_cache_write" : "reindex_cache_read";
}

/* ---------- the accesses of X in B ---------- */

typedef struct Pattern {
	Arena *a;
	const Buffer *buf;
	int nidx;
	Expr **idx;	 /* the indices of the first access */
	const char *why; /* the accesses are not one point: why */
	int nbound, cap;
	Var **bound; /* variables an index may not use */
	bool reads, writes;
	bool nested; /* a loop or block inside B */
} Pattern;

static void bind(Pattern *p, Var *v)
{
	if (p->nbound == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		Var **nv = arena_alloc(p->a, sizeof(Var *) * (size_t)cap);
		if (p->nbound)
			memcpy(nv, p->bound, sizeof(Var *) * (size_t)p->nbound);
		p->bound = nv;
		p->cap = cap;
	}
	p->bound[p->nbound++] = v;
}

static char *index_text(Arena *a, const Buffer *b, int n, Expr **idx)
{
	StrBuf sb = {0};
	sb_printf(&sb, "%s[", b->name);
	for (int k = 0; k < n; k++) {
		if (k)
			sb_printf(&sb, ", ");
		print_expr_to(&sb, idx[k]);
	}
	sb_printf(&sb, "]");
	char *s = sb_take(&sb);
	char *r = arena_printf(a, "%s", s);
	free(s);
	return r;
}

static void pat_access(Pattern *p, int n, Expr **idx)
{
	if (p->why)
		return;
	for (int k = 0; k < n && !p->why; k++)
		for (int i = 0; i < p->nbound && !p->why; i++)
			if (ir_expr_uses_var(idx[k], p->bound[i]))
				p->why = arena_printf(p->a, "the index %s uses %s, which is not an iter var of the block",
						      index_text(p->a, p->buf, n, idx), p->bound[i]->name);
	if (p->why)
		return;
	if (!p->idx) {
		p->idx = idx;
		p->nidx = n;
		return;
	}
	bool same = n == p->nidx;
	for (int k = 0; k < n && same; k++)
		same = ir_expr_equal(idx[k], p->idx[k]);
	if (!same)
		p->why = arena_printf(p->a, "it is accessed at %s and at %s",
				      index_text(p->a, p->buf, p->nidx, p->idx), index_text(p->a, p->buf, n, idx));
}

static void pat_expr(Pattern *p, const Expr *e)
{
	if (e->kind == EX_LOAD && e->u.load.buf == p->buf) {
		p->reads = true;
		pat_access(p, e->u.load.nidx, e->u.load.idx);
	}
	if (e->kind == EX_LET)
		bind(p, e->u.let.var);
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		pat_expr(p, expr_child(e, i));
}

static void pat_stmt(Pattern *p, const Stmt *s)
{
	switch (s->kind) {
	case ST_FOR: p->nested = true; bind(p, s->u.loop.var); break;
	case ST_LET: bind(p, s->u.let.var); break;
	case ST_BLOCK: p->nested = true; break;
	case ST_STORE:
		if (s->u.store.buf == p->buf) {
			p->writes = true;
			pat_access(p, s->u.store.nidx, s->u.store.idx);
		}
		break;
	case ST_SEQ: case ST_IF: case ST_ASSUME: case ST_EVAL: case ST_ALLOC: case ST_PASS: case ST_COUNT:
		break;
	}
	int n = stmt_nexprs(s);
	for (int i = 0; i < n; i++)
		pat_expr(p, stmt_expr(s, i));
	n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		pat_stmt(p, stmt_child(s, i));
}

/* ---------- the site ---------- */

static bool load_of(const Expr *e, void *ud)
{
	return e->kind == EX_LOAD && e->u.load.buf == ud;
}

/* Whether s accesses x anywhere but inside blk. */
static bool touches_outside(const Stmt *s, const Stmt *blk, const Buffer *x)
{
	if (s == blk || !rw_stmt_accesses(s, x, false))
		return false;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (touches_outside(s->u.seq.items[i], blk, x))
				return true;
		return false;
	case ST_FOR:
		return expr_any(s->u.loop.min, load_of, (void *)x) || expr_any(s->u.loop.extent, load_of, (void *)x) ||
		       touches_outside(s->u.loop.body, blk, x);
	case ST_ALLOC:
		return s->u.alloc.buf == x || !s->u.alloc.body || touches_outside(s->u.alloc.body, blk, x);
	case ST_IF: case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_BLOCK: case ST_LET: case ST_PASS:
	case ST_COUNT:
		return true;
	}
	return true;
}

/* The store to x at the top of s (not under a branch or loop). */
static bool top_store(const Stmt *s, const Buffer *x)
{
	if (s->kind == ST_STORE)
		return s->u.store.buf == x;
	if (s->kind == ST_SEQ)
		for (int i = 0; i < s->u.seq.n; i++)
			if (top_store(s->u.seq.items[i], x))
				return true;
	return false;
}

typedef struct Reindex {
	Arena *a;
	const ReindexArgs *r;
	Stmt *blk;
	BlockView v;
	const BlockInfo *info;
	Buffer *x, *y;
	Pattern p;
	int nu;
	int *used; /* iter var positions e uses, in order */
	int ny;
	Expr **g, **shape;
	int nb;
	Stmt *bl[AN_MAX_DEPTH]; /* the loops between T and B, outermost first */
	bool inc[AN_MAX_DEPTH]; /* copied by the copy block */
} Reindex;

static bool binding_uses(const Reindex *ri, const Var *lv, int except)
{
	for (int k = 0; k < ri->info->niters; k++)
		if (k != except && ir_expr_uses_var(ri->v.bindings[k], lv))
			return true;
	return false;
}

/* Why a write-side block that reads X would need a copy-in (NULL: its
 * T.init writes each cell before any read of it within T). */
static const char *reduction_gap(const Reindex *ri)
{
	Arena *a = ri->a;
	const Stmt *init = ri->v.init;
	if (!init || init->kind != ST_STORE || init->u.store.buf != ri->x)
		return "its T.init is not one store to the buffer";
	if (an_expr_reads(init->u.store.value, ri->x))
		return "its T.init reads the buffer";
	for (int k = 0; k < ri->info->niters; k++) {
		const BlockIter *it = &ri->info->iters[k];
		if (it->type != ITER_REDUCE)
			continue;
		for (int d = 0; d < ri->p.nidx; d++)
			if (ir_expr_uses_var(ri->p.idx[d], it->var))
				return arena_printf(a, "the reduction iter var %s indexes the buffer", it->var->name);
		const Expr *b = ri->v.bindings[k];
		int m = -1;
		for (int i = 0; i < ri->nb && b->kind == EX_VAR; i++)
			if (ri->bl[i]->u.loop.var == b->u.var)
				m = i;
		if (m < 0)
			return arena_printf(a, "the reduction iter var %s is not bound to a loop inside the stage's site",
					    it->var->name);
		const Stmt *l = ri->bl[m];
		Expr *lo = an_fold(a, l->u.loop.min), *dmin = an_fold(a, it->dom_min);
		if (!ir_expr_equal(lo, dmin) &&
		    !(lo->kind == EX_INT && dmin->kind == EX_INT && lo->u.ival == dmin->u.ival))
			return arena_printf(a, "loop %s does not start at the domain minimum of %s", l->u.loop.var->name,
					    it->var->name);
		if (binding_uses(ri, l->u.loop.var, k))
			return arena_printf(a, "loop %s binds another iter var too", l->u.loop.var->name);
		for (int i = 0; i < ri->nb; i++)
			if (i != m && (ir_expr_uses_var(ri->bl[i]->u.loop.min, l->u.loop.var) ||
				       ir_expr_uses_var(ri->bl[i]->u.loop.extent, l->u.loop.var)))
				return arena_printf(a, "the range of loop %s depends on loop %s", ri->bl[i]->u.loop.var->name,
						    l->u.loop.var->name);
	}
	return NULL;
}

/* ---------- instances of the copy ---------- */

typedef struct Inst {
	Var *lv[AN_MAX_DEPTH];
	Expr *range; /* the copied loops' ranges */
	Expr **e, **g;
} Inst;

/* One instance of the copy with fresh loop variables (suffix). */
static void instance(const Reindex *ri, const char *suffix, Inst *in)
{
	Arena *a = ri->a;
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	int n = 0;
	in->range = NULL;
	for (int i = 0; i < ri->nb; i++) {
		if (!ri->inc[i])
			continue;
		const Stmt *l = ri->bl[i];
		in->lv[i] = an_fresh_var(a, l->u.loop.var, suffix);
		Expr *lo = ir_subst_expr(a, l->u.loop.min, n, from, to);
		Expr *ext = ir_subst_expr(a, l->u.loop.extent, n, from, to);
		Expr *ref = ir_varref(a, in->lv[i], nospan());
		in->range = ir_and(a, in->range,
				   ir_and(a, ir_bin(a, OP_LE, lo, ref, nospan()),
					  ir_bin(a, OP_LT, ref, ir_add(a, lo, ext), nospan())));
		from[n] = l->u.loop.var;
		to[n++] = ref;
	}
	int ni = ri->info->niters;
	Var **iv = arena_alloc(a, sizeof(Var *) * (size_t)(ni + 1));
	Expr **val = arena_alloc(a, sizeof(Expr *) * (size_t)(ni + 1));
	for (int k = 0; k < ni; k++) {
		iv[k] = ri->info->iters[k].var;
		val[k] = ir_subst_expr(a, ri->v.bindings[k], n, from, to);
	}
	in->e = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->p.nidx + 1));
	in->g = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->ny + 1));
	for (int d = 0; d < ri->p.nidx; d++)
		in->e[d] = ir_subst_expr(a, ri->p.idx[d], ni, iv, val);
	for (int d = 0; d < ri->ny; d++)
		in->g[d] = ir_subst_expr(a, ri->g[d], ni, iv, val);
	if (!in->range)
		in->range = ir_bool(a, true);
}

static Obligation *inst_obligation(RwCtx *c, const StmtCtx *tsc, const Reindex *ri, const char *kind,
				   const char *what, Expr *goal, Inst *p, Inst *q)
{
	Obligation *o = rw_obligation_at(c, &c->obs, tsc, kind, what, goal);
	for (Inst *in = p; in; in = in == q ? NULL : q) {
		for (int i = 0; i < ri->nb; i++)
			if (ri->inc[i])
				obligation_add_var(c->arena, o, in->lv[i]);
		obligation_add_hyp(c->arena, o, in->range);
	}
	obligation_add_related(c->arena, o, ri->blk->span);
	return o;
}

static Expr *all_equal(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *all = NULL;
	for (int k = 0; k < n; k++)
		all = ir_and(a, all, ir_bin(a, OP_EQ, x[k], y[k], nospan()));
	return all ? all : ir_bool(a, true);
}

static void obligations(RwCtx *c, const StmtCtx *tsc, const Reindex *ri)
{
	Arena *a = c->arena;
	const ReindexArgs *r = ri->r;
	Inst p;
	instance(ri, "", &p);
	for (int d = 0; d < ri->ny; d++) {
		Expr *zero = ir_int(a, 0, p.g[d]->dtype, nospan());
		Expr *goal = ir_and(a, ir_bin(a, OP_LE, zero, p.g[d], nospan()),
				    ir_bin(a, OP_LT, p.g[d], ri->shape[d], nospan()));
		inst_obligation(c, tsc, ri, "reindex.in_bounds",
				arena_printf(a, "index %d of %s stays inside its shape for every instance of block '%s'", d,
					     ri->y->name, ri->blk->u.block.name),
				goal, &p, NULL);
	}
	/* reindex read: g is the iter vars e uses, so the same g gives the same e */
	if (r->write || r->scope) {
		Inst q;
		instance(ri, "'", &q);
		Expr *same_g = all_equal(a, ri->ny, p.g, q.g), *same_e = all_equal(a, ri->p.nidx, p.e, q.e);
		Expr *goal = ir_or(a, ir_not(a, same_g, nospan()), same_e);
		if (r->write)
			goal = ir_and(a, goal, ir_or(a, ir_not(a, same_e, nospan()), same_g));
		inst_obligation(c, tsc, ri, "reindex.injective",
				arena_printf(a, r->write ? "two instances of block '%s' write the same cell of %s iff they write the same cell of %s"
							 : "two instances of block '%s' that share a cell of %s read the same cell of %s",
					     ri->blk->u.block.name, ri->y->name, ri->x->name),
				goal, &p, &q);
	}
	if (!r->write) {
		FactSet fs;
		memset(&fs, 0, sizeof fs);
		an_facts_at(a, c->func, tsc, false, NULL, &fs);
		/* a parameter's cells count as readable: the copy's index must
		 * also lie in the shape (B's guards may have kept it there) */
		Expr *goal = ir_and(a, imap_in_box(a, ri->p.nidx, p.e, ri->x->shape),
				    an_readable(a, c->func, &fs, ri->x, ri->p.nidx, p.e));
		if (!(goal->kind == EX_INT && goal->u.ival))
			inst_obligation(c, tsc, ri, "reindex.readable",
					arena_printf(a, "every cell of %s the copy into %s reads lies in its shape and is initialised", ri->x->name,
						     ri->y->name),
					goal, &p, NULL);
	}
}

/* ---------- the copy block ---------- */

static Stmt *copy_stage(const Reindex *ri, const char *name, Span sp)
{
	Arena *a = ri->a;
	Var *from[AN_MAX_DEPTH], *nv[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	int n = 0;
	for (int i = 0; i < ri->nb; i++) {
		if (!ri->inc[i])
			continue;
		nv[i] = an_fresh_var(a, ri->bl[i]->u.loop.var, "");
		from[n] = ri->bl[i]->u.loop.var;
		to[n++] = ir_varref(a, nv[i], nospan());
	}
	BlockInfo *ni = arena_alloc(a, sizeof *ni);
	memset(ni, 0, sizeof *ni);
	ni->niters = ri->nu;
	ni->iters = arena_alloc(a, sizeof(BlockIter) * (size_t)(ri->nu + 1));
	Expr **bindings = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->nu + 1));
	Var **oldv = arena_alloc(a, sizeof(Var *) * (size_t)(ri->nu + 1));
	Expr **newv = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->nu + 1));
	for (int j = 0; j < ri->nu; j++) {
		const BlockIter *it = &ri->info->iters[ri->used[j]];
		ni->iters[j] = *it;
		ni->iters[j].var = an_fresh_var(a, it->var, "");
		ni->iters[j].type = ITER_SPATIAL;
		bindings[j] = ir_subst_expr(a, ri->v.bindings[ri->used[j]], n, from, to);
		oldv[j] = it->var;
		newv[j] = ir_varref(a, ni->iters[j].var, nospan());
	}
	Expr **e = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->p.nidx + 1));
	Expr **g = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->ny + 1));
	for (int d = 0; d < ri->p.nidx; d++)
		e[d] = ir_subst_expr(a, ri->p.idx[d], ri->nu, oldv, newv);
	for (int d = 0; d < ri->ny; d++)
		g[d] = ir_subst_expr(a, ri->g[d], ri->nu, oldv, newv);
	Stmt *inner = ri->r->write ? ir_store(a, ri->x, ri->p.nidx, e, ir_load(a, ri->y, ri->ny, g, sp), sp)
				   : ir_store(a, ri->y, ri->ny, g, ir_load(a, ri->x, ri->p.nidx, e, sp), sp);
	Stmt *s = block_assemble(a, name, ni, bindings, NULL, NULL, inner, sp);
	int m = n;
	for (int i = ri->nb - 1; i >= 0; i--) {
		if (!ri->inc[i])
			continue;
		m--;
		const Stmt *l = ri->bl[i];
		s = ir_for(a, nv[i], ir_subst_expr(a, l->u.loop.min, m, from, to),
			   ir_subst_expr(a, l->u.loop.extent, m, from, to), FOR_SERIAL, s, sp);
	}
	return s;
}

/* ---------- the index map ---------- */

static RwStatus index_map(RwCtx *c, Reindex *ri)
{
	Arena *a = c->arena;
	const ReindexArgs *r = ri->r;
	const char *what = prim(r);
	int ni = ri->info->niters;
	if (!r->scope) {
		ri->ny = ri->nu;
		ri->g = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->nu + 1));
		ri->shape = arena_alloc(a, sizeof(Expr *) * (size_t)(ri->nu + 1));
		for (int j = 0; j < ri->nu; j++) {
			const BlockIter *it = &ri->info->iters[ri->used[j]];
			ri->g[j] = ir_varref(a, it->var, nospan());
			ri->shape[j] = an_fold(a, ir_add(a, it->dom_min, it->dom_extent));
		}
		return RW_OK;
	}
	DiagList d;
	diag_init(&d, a);
	DType *pdt = arena_alloc(a, sizeof(DType) * (size_t)(ni + 1));
	for (int k = 0; k < ni; k++)
		pdt[k] = ri->info->iters[k].var->dtype;
	ParseScope scope = {.func = c->func, .nparam_dtypes = ni, .param_dtypes = pdt};
	Lambda *l = r->map_end > r->map_start
			    ? parse_lambda_range(a, r->src, r->map_start, r->map_end, &scope, &d)
			    : NULL;
	if (!l) {
		for (Diag *g = d.first; g; g = g->next)
			diag_add(c->diag, g->level, g->span, "%s", g->message);
		if (!d.first)
			return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: expected index_map=lambda ...: [...]", what);
		return RW_BAD_INPUT;
	}
	if (l->nparams != ni)
		return rw_fail(c, RW_BAD_INPUT, l->span, "%s: the index map takes %d indices but block '%s' has %d iter vars",
			       what, l->nparams, ri->blk->u.block.name, ni);
	if (l->nbody < 1)
		return rw_fail(c, RW_BAD_INPUT, l->span, "%s: the index map returns no index", what);
	Var **iv = arena_alloc(a, sizeof(Var *) * (size_t)(ni + 1));
	Expr **ivr = arena_alloc(a, sizeof(Expr *) * (size_t)(ni + 1));
	Expr **ext = arena_alloc(a, sizeof(Expr *) * (size_t)(ni + 1));
	for (int k = 0; k < ni; k++) {
		iv[k] = ri->info->iters[k].var;
		ivr[k] = ir_varref(a, iv[k], nospan());
		ext[k] = an_fold(a, ir_add(a, ri->info->iters[k].dom_min, ri->info->iters[k].dom_extent));
	}
	ri->ny = l->nbody;
	ri->g = arena_alloc(a, sizeof(Expr *) * (size_t)(l->nbody + 1));
	for (int j = 0; j < l->nbody; j++)
		ri->g[j] = ir_subst_expr(a, l->body[j], l->nparams, l->params, ivr);
	/* TVM: an iter var in the access but not in the map, or the other way */
	for (int k = 0; k < ni; k++) {
		bool in_e = false, in_g = false;
		for (int j = 0; j < ri->p.nidx; j++)
			in_e = in_e || ir_expr_uses_var(ri->p.idx[j], iv[k]);
		for (int j = 0; j < ri->ny; j++)
			in_g = in_g || ir_expr_uses_var(ri->g[j], iv[k]);
		if (in_e != in_g)
			return rw_fail(c, RW_PRECONDITION, c->call_span,
				       "%s: the block iter var %s appears in %s but not in %s: the index map does not match the block iter vars",
				       what, iv[k]->name,
				       in_e ? index_text(a, ri->x, ri->p.nidx, ri->p.idx) : "the index map",
				       in_e ? "the index map" : index_text(a, ri->x, ri->p.nidx, ri->p.idx));
	}
	IndexMap m;
	memset(&m, 0, sizeof m);
	m.nin = ni;
	m.in = l->params;
	m.in_extent = ext;
	m.nout = l->nbody;
	m.out = l->body;
	const char *why = NULL;
	if (!imap_shape(a, &m, &why))
		return rw_fail(c, RW_UNSUPPORTED, l->span, "%s: cannot compute the shape of the new buffer: %s",
			       what, why);
	ri->shape = m.shape;
	return RW_OK;
}

/* ---------- placing the stage ---------- */

/* body with y allocated for the whole function, after the function's own
 * allocations (as TVM declares it among the root block's buffers). Y's
 * cells are written in each execution of the site before they are read,
 * so a longer lifetime changes nothing. */
static Stmt *alloc_at_root(Arena *a, Stmt *s, Buffer *y, Span sp)
{
	if (s->kind == ST_ALLOC && s->u.alloc.body)
		return ir_alloc(a, s->u.alloc.buf, alloc_at_root(a, s->u.alloc.body, y, sp), s->span);
	return ir_alloc(a, y, s, sp);
}

/* The copy runs in every iteration of the loops around the site and
 * touches cells B's guards may skip, and Y is shared by those
 * iterations: every parallel or vectorized loop around the copy is
 * checked again, as it stands in c->out (parallel.md). */
static void race_rechecks(RwCtx *c, const Stmt *copy)
{
	Arena *a = c->arena;
	StmtCtx sc;
	if (!an_find_stmt(a, c->out, copy, &sc))
		return;
	for (int i = 0; i < sc.nloops; i++) {
		const Stmt *l = sc.loops[i];
		if (l->u.loop.kind != FOR_PARALLEL && l->u.loop.kind != FOR_VECTORIZED)
			continue;
		StmtCtx lc;
		if (!an_find_stmt(a, c->out, l, &lc))
			continue;
		const char *kind = l->u.loop.kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race";
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), l->span);
		rw_add_context_hyps(c, base, &lc);
		rw_race_obligations(c, kind, base, l);
	}
}

/* ---------- the rewrite ---------- */

RwStatus rw_reindex(RwCtx *c, const ReindexArgs *r)
{
	Arena *a = c->arena;
	const Func *f = c->func;
	const char *what = prim(r);
	Reindex ri;
	memset(&ri, 0, sizeof ri);
	ri.a = a;
	ri.r = r;
	ri.blk = rw_find_block(f, r->block);
	if (!ri.blk)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: no block '%s' in function '%s'", what, r->block,
			       f->name);
	ri.info = ri.blk->u.block.info;
	if (!ri.info || ri.info->niters == 0 || !block_view(a, ri.blk, &ri.v))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: block '%s' has no iter vars (a block as TVM writes it, with T.axis bindings)",
			       what, r->block);
	bool is_param;
	ri.x = rw_find_buffer(f, r->buffer, &is_param);
	if (!ri.x)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: no buffer '%s' in function '%s'", what, r->buffer,
			       f->name);
	BufferScope scope = ri.x->scope;
	if (r->scope && !rw_scope_from_name(r->scope, &scope))
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "%s: storage_scope must be \"global\", \"local\" or \"shared\", not \"%s\"", what, r->scope);
	if (ri.x->layout)
		return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: buffer '%s' has a transformed layout",
			       what, ri.x->name);
	StmtCtx sc;
	if (!an_find_stmt(a, f, ri.blk, &sc))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: block '%s' is nested too deeply", what,
			       r->block);
	if (an_allocates(ri.blk, ri.x))
		return rw_fail(c, RW_PRECONDITION, c->call_span, "%s: buffer '%s' is allocated inside block '%s'", what,
			       ri.x->name, r->block);

	/* one point of the iter vars */
	Pattern *p = &ri.p;
	p->a = a;
	p->buf = ri.x;
	for (int i = 0; i < sc.nloops; i++)
		bind(p, sc.loops[i]->u.loop.var);
	for (int i = 0; i < sc.nlets; i++)
		bind(p, sc.lets[i]->u.let.var);
	for (int k = 0; k < ri.info->niters; k++)
		pat_expr(p, ri.v.bindings[k]);
	if (ri.v.where)
		pat_expr(p, ri.v.where);
	if (ri.v.init)
		pat_stmt(p, ri.v.init);
	pat_stmt(p, ri.v.inner);
	if (!p->idx && !p->why)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s: block '%s' does not access buffer '%s'", what,
			       r->block, ri.x->name);
	if (p->why)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "%s: the access of %s in block '%s' is not a single point of its iter vars: %s", what,
			       ri.x->name, r->block, p->why);
	if (p->nested)
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: block '%s' holds loops or blocks (not a leaf block)", what, r->block);
	if (!r->write && p->writes)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "%s: block '%s' writes %s, so a copy made before it goes stale (stage its write)", what,
			       r->block, ri.x->name);
	if (r->write && !p->writes)
		return rw_fail(c, RW_PRECONDITION, c->call_span, "%s: block '%s' does not write %s", what, r->block,
			       ri.x->name);

	/* the iter vars the access uses */
	ri.used = arena_alloc(a, sizeof(int) * (size_t)(ri.info->niters + 1));
	for (int k = 0; k < ri.info->niters; k++) {
		bool in_e = false;
		for (int j = 0; j < p->nidx; j++)
			in_e = in_e || ir_expr_uses_var(p->idx[j], ri.info->iters[k].var);
		if (in_e)
			ri.used[ri.nu++] = k;
	}
	if (ri.nu == 0)
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "%s: the access %s uses no iter var of block '%s'", what,
			       index_text(a, ri.x, p->nidx, p->idx), r->block);
	RwStatus st = index_map(c, &ri);
	if (st != RW_OK)
		return st;
	for (int d = 0; d < ri.ny; d++)
		for (int i = 0; i < sc.nloops; i++)
			if (ir_expr_uses_var(ri.shape[d], sc.loops[i]->u.loop.var))
				return rw_fail(c, RW_UNSUPPORTED, c->call_span,
					       "%s: the new buffer's extent %d depends on loop %s", what, d,
					       sc.loops[i]->u.loop.var->name);

	/* the site T: the outermost loop inside which only B accesses X */
	int dt = sc.depth;
	for (int d = sc.depth - 1; d >= 0; d--) {
		Stmt *s = an_stmt_at(f->body, sc.path, d);
		/* an allocation (of another buffer) holds the rest of its
		 * sequence: as transparent as the sequence */
		if (s->kind == ST_SEQ || (s->kind == ST_ALLOC && s->u.alloc.buf != ri.x))
			continue;
		if (s->kind != ST_FOR || touches_outside(s, ri.blk, ri.x))
			break;
		dt = d;
	}
	Stmt *T = an_stmt_at(f->body, sc.path, dt);
	for (int d = dt; d < sc.depth; d++) {
		Stmt *s = an_stmt_at(f->body, sc.path, d);
		if (s->kind == ST_FOR)
			ri.bl[ri.nb++] = s;
	}
	StmtCtx tsc;
	if (!an_find_stmt(a, f, T, &tsc))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: the stage's site is not found", what);

	if (r->write) {
		if (ri.v.where)
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: block '%s' has a T.where, so the copy-out would read cells it skips",
				       what, r->block);
		if (!top_store(ri.v.inner, ri.x))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: block '%s' writes %s under a branch, so the copy-out may read cells it skips",
				       what, r->block, ri.x->name);
		const char *gap = p->reads ? reduction_gap(&ri) : NULL;
		if (gap)
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: block '%s' reads %s and %s: its first access of a cell may be a read, which would need a copy-in",
				       what, r->block, ri.x->name, gap);
	}

	/* the copied loops: those B's bindings (or a copied loop's range) use;
	 * on the write side also every loop that may run no iteration */
	for (int i = ri.nb - 1; i >= 0; i--) {
		const Stmt *l = ri.bl[i];
		Var *lv = l->u.loop.var;
		bool use = false;
		for (int j = 0; j < ri.nu && !use; j++)
			use = ir_expr_uses_var(ri.v.bindings[ri.used[j]], lv);
		for (int j = i + 1; j < ri.nb && !use; j++)
			use = ri.inc[j] && (ir_expr_uses_var(ri.bl[j]->u.loop.min, lv) ||
					    ir_expr_uses_var(ri.bl[j]->u.loop.extent, lv));
		if (!use && r->write) {
			const Expr *ext = an_fold(a, l->u.loop.extent);
			use = !(ext->kind == EX_INT && ext->u.ival >= 1);
		}
		ri.inc[i] = use;
	}

	/* the copy evaluates the bindings and loop ranges it copies where the
	 * site is, outside allocations between the site and the block */
	for (int j = 0; j < ri.nu; j++)
		if (an_expr_has_load(ri.v.bindings[ri.used[j]]))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: the binding of %s reads a buffer", what,
				       ri.info->iters[ri.used[j]].var->name);
	for (int i = 0; i < ri.nb; i++)
		if (ri.inc[i] && (an_expr_has_load(ri.bl[i]->u.loop.min) || an_expr_has_load(ri.bl[i]->u.loop.extent)))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span, "%s: the range of loop %s reads a buffer", what,
				       ri.bl[i]->u.loop.var->name);

	/* the new buffer, named as TVM names it */
	const char *base = r->scope ? arena_printf(a, "%s_%s", ri.x->name, rw_scope_name(scope))
				    : arena_printf(a, "%s_reindex", ri.x->name);
	const char *name = base;
	for (int k = 1; rw_find_buffer(f, name, &is_param); k++)
		name = arena_printf(a, "%s_%d", base, k);
	ri.y = ir_buffer(a, name, ri.x->dtype, ri.ny, ri.shape, c->call_span);
	ri.y->scope = scope;
	/* reindex.shape: Y is allocated for the whole function, its shape
	 * (the iter domains) evaluated at entry, also where the block's loops
	 * run nothing (red team: a domain T.min(m - 5, 16) gave a negative
	 * extent at m = 4, T.max(T.min(100 // m, 16), 1) under `if m != 0`
	 * divided by zero at m = 0; both committed). The copy evaluates the
	 * ranges of the loops it copies where the site is: one that may fault
	 * is not supported. */
	if (!rw_entry_shape_obligation(c, "reindex.shape", ri.y, c->call_span))
		return RW_UNSUPPORTED;
	for (int i = 0; i < ri.nb; i++)
		if (ri.inc[i] && (an_expr_may_fault(ri.bl[i]->u.loop.min, true) ||
				  an_expr_may_fault(ri.bl[i]->u.loop.extent, true)))
			return rw_fail(c, RW_UNSUPPORTED, c->call_span,
				       "%s: the range of loop %s may fault (a division by a non-constant), and the copy evaluates it where it is placed",
				       what, ri.bl[i]->u.loop.var->name);

	obligations(c, &tsc, &ri);

	Var **dummy = arena_alloc(a, sizeof(Var *) * (size_t)(ri.x->ndim + 1));
	for (int k = 0; k < ri.x->ndim; k++)
		dummy[k] = ir_var(a, arena_printf(a, "_d%d", k), DT_INT32, nospan());
	Stmt *nb = ir_remap_buffer(a, ri.blk, ri.x, ri.y, ri.x->ndim, dummy, ri.ny, ri.g);
	Stmt *nt = dt == sc.depth ? nb : an_replace_at(a, T, sc.path + dt, sc.depth - dt, nb);
	Stmt *copy = copy_stage(&ri, rw_unique_block_name(a, f, name), c->call_span);
	Stmt *body;
	Stmt *parent = dt > 0 ? an_stmt_at(f->body, sc.path, dt - 1) : NULL;
	if (parent && parent->kind == ST_SEQ) {
		int n = parent->u.seq.n, at = sc.path[dt - 1];
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + 1));
		int m = 0;
		for (int i = 0; i < n; i++) {
			if (i == at && !r->write)
				items[m++] = copy;
			items[m++] = i == at ? nt : parent->u.seq.items[i];
			if (i == at && r->write)
				items[m++] = copy;
		}
		body = an_replace_at(a, f->body, sc.path, dt - 1, ir_seq(a, n + 1, items, parent->span));
	} else {
		Stmt *items[2] = {r->write ? nt : copy, r->write ? copy : nt};
		body = an_replace_at(a, f->body, sc.path, dt, ir_seq(a, 2, items, c->call_span));
	}
	c->out = an_with_body(a, f, alloc_at_root(a, body, ri.y, c->call_span));
	race_rechecks(c, copy);
	return RW_OK;
}
