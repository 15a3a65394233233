/* rewrites/schedule/handles.c — loop and block handles of schedule
 * scripts: binding, resolution to the names the primitives take, their
 * survival across committed calls, and the queries that make them
 * (get_loops, get_child_blocks, get_producers / get_consumers, the loops
 * and blocks a call created). */
#include "rewrites/schedule/handles.h"

#include <string.h>

#include "kernel/analysis/stmt_ctx.h"
#include "rewrites/layout.h"

static Value *new_value(HandleEnv *e, ValKind kind, const char *func)
{
	Value *v = arena_alloc(e->arena, sizeof *v);
	v->kind = kind;
	v->func = func;
	if (kind != VAL_LIST)
		VEC_PUSH(e->arena, e->vals, e->nvals, e->capvals, v);
	return v;
}

Value *hv_loop(HandleEnv *e, const char *func, Var *var)
{
	Value *v = new_value(e, VAL_LOOP, func);
	v->loop = var;
	return v;
}

Value *hv_block(HandleEnv *e, const char *func, const char *name)
{
	Value *v = new_value(e, VAL_BLOCK, func);
	v->block = name;
	return v;
}

Value *hv_list(HandleEnv *e, int n, Value **items)
{
	Value *v = new_value(e, VAL_LIST, NULL);
	v->n = n;
	v->items = arena_alloc(e->arena, sizeof(Value *) * (size_t)(n + 1));
	if (n)
		memcpy(v->items, items, sizeof(Value *) * (size_t)n);
	return v;
}

Value *hv_lookup(const HandleEnv *e, const char *name)
{
	for (int i = e->nbinds - 1; i >= 0; i--)
		if (strcmp(e->binds[i].name, name) == 0)
			return e->binds[i].v;
	return NULL;
}

void hv_bind(HandleEnv *e, const char *name, Value *v)
{
	HandleBinding b = {name, v};
	VEC_PUSH(e->arena, e->binds, e->nbinds, e->capbinds, b);
}

/* ---------- loops of a function ---------- */

typedef struct LoopRef {
	const Var *v;
	int hits, index, same; /* loops of v; v's rank among loops named like it; loops so named */
	Stmt *loop;
} LoopRef;

static void ref_visit(void *ud, Stmt *s, const StmtCtx *ctx)
{
	LoopRef *r = ud;
	(void)ctx;
	if (s->kind != ST_FOR || strcmp(s->u.loop.var->name, r->v->name) != 0)
		return;
	r->same++;
	if (s->u.loop.var == r->v) {
		r->hits++;
		r->index = r->same;
		r->loop = s;
	}
}

const char *hv_loop_ref(Arena *a, const Func *f, const Var *v, const char **why)
{
	LoopRef r = {v, 0, 0, 0, NULL};
	an_walk(a, f, ref_visit, &r);
	if (r.hits != 1) {
		*why = r.hits ? arena_printf(a, "%d loops of function '%s' share its variable", r.hits, f->name)
			      : arena_printf(a, "function '%s' has no such loop", f->name);
		return NULL;
	}
	return r.same == 1 ? v->name : arena_printf(a, "%s#%d", v->name, r.index);
}

Stmt *hv_find_loop(Arena *a, const Func *f, const Var *v)
{
	LoopRef r = {v, 0, 0, 0, NULL};
	an_walk(a, f, ref_visit, &r);
	return r.hits == 1 ? r.loop : NULL;
}

typedef struct Collect {
	Arena *a;
	int n, cap;
	void **items;
	StmtKind kind;
} Collect;

static void collect_visit(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Collect *c = ud;
	(void)ctx;
	if (s->kind == c->kind)
		VEC_PUSH(c->a, c->items, c->n, c->cap, c->kind == ST_FOR ? (void *)s->u.loop.var : (void *)s);
}

/* Loop variables (ST_FOR) or block statements (ST_BLOCK) of f. */
static int collect(Arena *a, const Func *f, StmtKind kind, void ***out)
{
	Collect c = {a, 0, 0, NULL, kind};
	an_walk(a, f, collect_visit, &c);
	*out = c.items;
	return c.n;
}

static bool has_ptr(void **items, int n, const void *p)
{
	for (int i = 0; i < n; i++)
		if (items[i] == p)
			return true;
	return false;
}

static bool has_block_named(Stmt **blocks, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(blocks[i]->u.block.name, name) == 0)
			return true;
	return false;
}

int hv_new_loops(Arena *a, const Func *before, const Func *after, Var ***out)
{
	void **old, **now;
	int nold = collect(a, before, ST_FOR, &old), nnow = collect(a, after, ST_FOR, &now);
	Var **res = arena_alloc(a, sizeof(Var *) * (size_t)(nnow + 1));
	int n = 0;
	for (int i = 0; i < nnow; i++)
		if (!has_ptr(old, nold, now[i]) && !has_ptr((void **)res, n, now[i]))
			res[n++] = now[i];
	*out = res;
	return n;
}

int hv_new_blocks(Arena *a, const Func *before, const Func *after, Stmt ***out)
{
	void **old, **now;
	int nold = collect(a, before, ST_BLOCK, &old), nnow = collect(a, after, ST_BLOCK, &now);
	Stmt **res = arena_alloc(a, sizeof(Stmt *) * (size_t)(nnow + 1));
	int n = 0;
	for (int i = 0; i < nnow; i++) {
		Stmt *b = now[i];
		if (!has_block_named((Stmt **)old, nold, b->u.block.name))
			res[n++] = b;
	}
	*out = res;
	return n;
}

void hv_update(HandleEnv *e, const Module *before, const Module *after, const char *gone)
{
	Arena *a = e->arena;
	for (int i = 0; i < after->nfuncs; i++) {
		const Func *f = after->funcs[i], *f0 = module_find_func(before, f->name);
		if (f == f0)
			continue;
		void **loops, **blocks;
		int nloops = collect(a, f, ST_FOR, &loops), nblocks = collect(a, f, ST_BLOCK, &blocks);
		for (int k = 0; k < e->nvals; k++) {
			Value *v = e->vals[k];
			if (v->gone || strcmp(v->func, f->name) != 0)
				continue;
			bool alive = v->kind == VAL_LOOP ? has_ptr(loops, nloops, v->loop)
					: has_block_named((Stmt **)blocks, nblocks, v->block);
			if (!alive)
				v->gone = gone;
		}
	}
}

/* ---------- blocks and their loops ---------- */

/* TVM's form puts a block with iter vars inside its loop nest; vsched's
 * plain block sits around the nest it names. */
static bool block_in_nest(const Stmt *blk) { return blk->u.block.info != NULL; }

int hv_block_loops(Arena *a, const Func *f, const Stmt *blk, Var ***out)
{
	StmtCtx sc;
	Var **res = arena_alloc(a, sizeof(Var *) * (AN_MAX_DEPTH * 2 + 1));
	int n = 0;
	if (an_find_stmt(a, f, blk, &sc))
		for (int d = 0; d < sc.depth; d++) {
			const Stmt *s = an_stmt_at(f->body, sc.path, d);
			if (s->kind == ST_BLOCK)
				n = 0;
			else if (s->kind == ST_FOR)
				res[n++] = s->u.loop.var;
		}
	for (const Stmt *s = block_in_nest(blk) ? NULL : blk->u.block.body;
	     s && n < AN_MAX_DEPTH * 2;) {
		if (s->kind == ST_FOR) {
			res[n++] = s->u.loop.var;
			s = s->u.loop.body;
		} else if (s->kind == ST_SEQ && s->u.seq.n == 1) {
			s = s->u.seq.items[0];
		} else {
			break;
		}
	}
	*out = res;
	return n;
}

static void children_of(Collect *c, const Stmt *s)
{
	for (int i = 0; i < stmt_nchildren(s); i++) {
		Stmt *x = stmt_child(s, i);
		if (!x)
			continue;
		if (x->kind == ST_BLOCK)
			VEC_PUSH(c->a, c->items, c->n, c->cap, x);
		else
			children_of(c, x);
	}
}

int hv_child_blocks(Arena *a, const Stmt *s, Stmt ***out)
{
	Collect c = {a, 0, 0, NULL, ST_BLOCK};
	children_of(&c, s);
	*out = (Stmt **)c.items;
	return c.n;
}

/* ---------- buffers a block accesses ---------- */

typedef struct BufList {
	Arena *a;
	int n, cap;
	Buffer **items;
	bool write;
} BufList;

static void add_buf(BufList *l, Buffer *b)
{
	for (int i = 0; i < l->n; i++)
		if (l->items[i] == b)
			return;
	VEC_PUSH(l->a, l->items, l->n, l->cap, b);
}

static void load_visit(const Expr *e, void *ud)
{
	if (e->kind == EX_LOAD)
		add_buf(ud, e->u.load.buf);
}

static bool stmt_bufs(const Stmt *s, void *ud)
{
	BufList *l = ud;
	if (l->write) {
		if (s->kind == ST_STORE)
			add_buf(l, s->u.store.buf);
		return false;
	}
	for (int i = 0; i < stmt_nexprs(s); i++)
		expr_each_post(stmt_expr(s, i), load_visit, l);
	return false;
}

static bool allocates(const Stmt *s, void *buf)
{
	return s->kind == ST_ALLOC && s->u.alloc.buf == buf;
}

int hv_block_buffers(Arena *a, const Stmt *blk, bool write, Buffer ***out)
{
	BufList l = {a, 0, 0, NULL, write};
	const BlockInfo *info = blk->u.block.info;
	int n = info ? (write ? info->nwrites : info->nreads) : 0;
	const BufRegion *r = info ? (write ? info->writes : info->reads) : NULL;
	/* declarations that a rewrite made stale (cache_write: the block now
	 * writes the stage, not the buffer it declared) are not used */
	bool fresh = info && (write ? info->has_writes : info->has_reads);
	for (int i = 0; fresh && i < n; i++)
		fresh = rw_stmt_accesses(blk->u.block.body, r[i].buf, write);
	if (fresh) {
		/* TVM counts in the order of the declared T.reads / T.writes */
		for (int i = 0; i < n; i++)
			add_buf(&l, r[i].buf);
		*out = l.items;
		return l.n;
	}
	stmt_find(blk->u.block.body, stmt_bufs, &l);
	/* as TVM infers a block's regions: a buffer allocated inside the
	 * block (a cache stage made there) is none of its reads or writes */
	int kept = 0;
	for (int i = 0; i < l.n; i++)
		if (!stmt_find(blk->u.block.body, allocates, l.items[i]))
			l.items[kept++] = l.items[i];
	*out = l.items;
	return kept;
}

static bool is_stmt(const Stmt *s, void *ud) { return s == ud; }

static bool contains(const Stmt *outer, const Stmt *inner)
{
	return stmt_find(outer, is_stmt, (void *)inner) != NULL;
}

static bool shares(Buffer **x, int nx, Buffer **y, int ny)
{
	for (int i = 0; i < nx; i++)
		for (int j = 0; j < ny; j++)
			if (x[i] == y[j])
				return true;
	return false;
}

int hv_neighbours(Arena *a, const Func *f, const Stmt *blk, bool producers, Stmt ***out)
{
	void **blocks;
	int nb = collect(a, f, ST_BLOCK, &blocks), n = 0;
	Stmt **res = arena_alloc(a, sizeof(Stmt *) * (size_t)(nb + 1));
	Buffer **mine;
	int nmine = hv_block_buffers(a, blk, !producers, &mine);
	for (int i = 0; i < nb; i++) {
		Stmt *b = blocks[i];
		if (b == blk || contains(b, blk) || contains(blk, b))
			continue;
		Buffer **theirs;
		int ntheirs = hv_block_buffers(a, b, producers, &theirs);
		if (shares(mine, nmine, theirs, ntheirs))
			res[n++] = b;
	}
	*out = res;
	return n;
}
