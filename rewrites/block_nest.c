/* rewrites/block_nest.c — block primitives on blocks as TVM places them.
 * TVM puts `with T.block(...)` with its iter vars inside its loop nest;
 * the block primitives (compute_at, cache_read, ...) were written for a
 * plain block around its nest. A block is transparent (it runs its body),
 * so the two forms mean the same: the primitive runs on the function with
 * the block's own loops (the loops whose body is only the next loop or the
 * block) wrapped in a plain block of the same name, the iter vars replaced
 * by their bindings, and its result is turned back into TVM's form: the
 * block with its iter vars right inside the innermost loop of its (new)
 * nest. Neither step changes what the program computes; every obligation is
 * the primitive's own, built on the wrapped function. */
#include "rewrites/block_nest.h"

#include <string.h>

typedef struct Found {
	const char *name;
	Stmt *hit;
	StmtCtx ctx;
	int seen;
} Found;

static void find_visit(void *ud, Stmt *s, const StmtCtx *c)
{
	Found *f = ud;
	if (s->kind != ST_BLOCK || strcmp(s->u.block.name, f->name) != 0)
		return;
	if (!f->seen++) {
		f->hit = s;
		f->ctx = *c;
	}
}

/* The first statement below s that is not a single-item sequence. */
static Stmt *skip_single(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

bool rw_nest_wrap(RwCtx *c, const char *block, NestWrap *w)
{
	memset(w, 0, sizeof *w);
	if (!block)
		return false;
	Arena *a = c->arena;
	Found f = {.name = block};
	an_walk(a, c->func, find_visit, &f);
	if (f.seen != 1 || !f.hit->u.block.info)
		return false;
	const BlockInfo *info = f.hit->u.block.info;
	BlockView v;
	if (!block_view(a, f.hit, &v))
		return false;
	/* the block's own loops: parents that hold only the next level */
	int top = f.ctx.depth; /* depth of the outermost own loop (or the block) */
	int nloops = 0;
	while (top > 0) {
		Stmt *parent = an_stmt_at(c->func->body, f.ctx.path, top - 1);
		Stmt *child = an_stmt_at(c->func->body, f.ctx.path, top);
		if (parent->kind == ST_SEQ && parent->u.seq.n == 1) {
			top--;
			continue;
		}
		if (parent->kind != ST_FOR || skip_single(parent->u.loop.body) != child)
			break;
		top--;
		nloops++;
	}
	if (nloops == 0)
		return false;
	/* the body after the iter lets, iter vars replaced by their bindings */
	Stmt *s = f.hit->u.block.body;
	Var **vars = arena_alloc(a, sizeof(Var *) * (size_t)(info->niters + 1));
	for (int k = 0; k < info->niters; k++) {
		vars[k] = s->u.let.var;
		s = s->u.let.body;
	}
	Stmt *inner = ir_subst_stmt(a, s, info->niters, vars, v.bindings);
	/* the own loops again, over the inlined body, inside a plain block */
	Stmt *outer = an_stmt_at(c->func->body, f.ctx.path, top);
	Stmt *loops[AN_MAX_DEPTH];
	int n = 0;
	for (Stmt *l = skip_single(outer); l->kind == ST_FOR && n < nloops;
	     l = skip_single(l->u.loop.body))
		loops[n++] = l;
	Stmt *body = inner;
	for (int k = n - 1; k >= 0; k--)
		body = ir_for(a, loops[k]->u.loop.var, loops[k]->u.loop.min,
			      loops[k]->u.loop.extent, loops[k]->u.loop.kind, body,
			      loops[k]->span);
	Stmt *plain = ir_block(a, block, body, f.hit->span);
	w->nown = n;
	w->own = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	for (int k = 0; k < n; k++)
		w->own[k] = loops[k]->u.loop.var;
	w->active = true;
	w->name = f.hit->u.block.name;
	w->info = info;
	w->span = f.hit->span;
	w->niters = info->niters;
	w->vars = vars;
	w->bindings = v.bindings;
	w->orig = c->func;
	c->func = an_with_body(a, c->func,
			       an_replace_at(a, c->func->body, f.ctx.path, top, plain));
	return true;
}

/* The plain block `name` in s turned back into loops around the block
 * with its iter vars. */
typedef struct Unwrap {
	Arena *a;
	const NestWrap *w;
	bool done;
	const Var *seen[64]; /* loops descended through */
	int nseen;
} Unwrap;

/* Every own loop variable a binding names is a loop around the new
 * block: the primitive kept it (compute_at moves loops with their
 * variables). Otherwise the bindings cannot be restored. */
static bool bindings_in_scope(const Unwrap *u)
{
	const NestWrap *w = u->w;
	for (int k = 0; k < w->niters; k++)
		for (int j = 0; j < w->nown; j++) {
			if (!ir_expr_uses_var(w->bindings[k], w->own[j]))
				continue;
			bool ok = false;
			for (int i = 0; i < u->nseen && !ok; i++)
				ok = u->seen[i] == w->own[j];
			if (!ok)
				return false;
		}
	return true;
}

static Stmt *rebuild_inner(Unwrap *u, Stmt *s)
{
	const NestWrap *w = u->w;
	Arena *a = u->a;
	if (s->kind == ST_FOR && u->nseen < 64) {
		u->seen[u->nseen++] = s->u.loop.var;
		return ir_for(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent,
			      s->u.loop.kind, rebuild_inner(u, s->u.loop.body), s->span);
	}
	if (s->kind == ST_SEQ && s->u.seq.n == 1)
		return rebuild_inner(u, s->u.seq.items[0]);
	if (!bindings_in_scope(u)) /* the plain block over the inlined body */
		return ir_block(a, w->name, s, w->span);
	/* a binding that is a bare variable reads back as its iter var */
	Var *from[64];
	Expr *to[64];
	int n = 0;
	for (int k = 0; k < w->niters && n < 64; k++)
		if (w->bindings[k]->kind == EX_VAR) {
			from[n] = w->bindings[k]->u.var;
			to[n++] = ir_varref(a, w->vars[k], w->vars[k]->span);
		}
	Stmt *body = ir_subst_stmt(a, s, n, from, to);
	for (int k = w->niters - 1; k >= 0; k--)
		body = ir_letstmt(a, w->vars[k], w->bindings[k], body, w->vars[k]->span);
	return ir_block_info(a, w->name, w->info, body, w->span);
}

static Stmt *unwrap_stmt(Unwrap *u, Stmt *s)
{
	if (u->done)
		return s;
	if (s->kind == ST_BLOCK && !s->u.block.info && strcmp(s->u.block.name, u->w->name) == 0) {
		u->done = true;
		return rebuild_inner(u, s->u.block.body);
	}
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++) {
		Stmt *ch = stmt_child(s, i);
		Stmt *nc = unwrap_stmt(u, ch);
		if (nc == ch)
			continue;
		int path[1] = {i};
		return an_replace_at(u->a, s, path, 1, nc);
	}
	return s;
}

static Func *unwrap_func(Arena *a, const NestWrap *w, Func *f)
{
	if (!f)
		return f;
	Unwrap u;
	memset(&u, 0, sizeof u);
	u.a = a;
	u.w = w;
	Stmt *body = unwrap_stmt(&u, f->body);
	return body == f->body ? f : an_with_body(a, f, body);
}

void rw_nest_unwrap(RwCtx *c, const NestWrap *w)
{
	if (!w->active)
		return;
	Arena *a = c->arena;
	c->out = unwrap_func(a, w, c->out);
	c->fallback = unwrap_func(a, w, c->fallback);
	if (c->out_module)
		for (int i = 0; i < c->out_module->nfuncs; i++)
			if (strcmp(c->out_module->funcs[i]->name, c->func->name) == 0)
				c->out_module->funcs[i] = c->out;
	c->func = w->orig;
}
