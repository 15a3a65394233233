/* kernel/analysis/stmt_ctx.c — statements with their context (path,
 * enclosing loops, path conditions, lets): the walk that visits every
 * statement, lookup of a statement or of a loop by name, replacement of a
 * statement along its path, nesting depth. */
#include "kernel/analysis/stmt_ctx.h"

#include <stdlib.h>
#include <string.h>


bool an_is_fact_loop(const Stmt *s)
{
	switch (s->kind) {
	case ST_FOR: return an_is_fact_loop(s->u.loop.body);
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (!an_is_fact_loop(s->u.seq.items[i]))
				return false;
		return true;
	case ST_IF:
		return an_is_fact_loop(s->u.cond.then_s) &&
		       (!s->u.cond.else_s || an_is_fact_loop(s->u.cond.else_s));
	case ST_ASSUME: case ST_PASS: return true;
	case ST_STORE: case ST_EVAL: case ST_ALLOC: case ST_BLOCK: case ST_LET: case ST_COUNT:
		return false;
	}
	return false;
}

/* ---------- visiting every statement with its context ---------- */

/* The visitor returns true to stop the walk. */
typedef bool (*StopVisitor)(void *ud, Stmt *s, const StmtCtx *ctx);

typedef struct Walker {
	Arena *arena;
	StopVisitor fn;
	void *ud;
	bool stopped;
	StmtCtx cur;
} Walker;

static void walk_stmt(Walker *w, Stmt *s);

static void walk_child(Walker *w, Stmt *s, int index)
{
	StmtCtx *c = &w->cur;
	if (c->depth >= AN_MAX_DEPTH || w->stopped)
		return;
	c->path[c->depth++] = index;
	walk_stmt(w, s);
	c->depth--;
}

static void walk_stmt(Walker *w, Stmt *s)
{
	StmtCtx *c = &w->cur;
	c->stmt = s;
	if (w->fn(w->ud, s, c)) {
		w->stopped = true;
		return;
	}
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			walk_child(w, s->u.seq.items[i], i);
		return;
	case ST_FOR:
		if (c->nloops >= AN_MAX_DEPTH)
			return;
		c->loops[c->nloops++] = s;
		walk_child(w, s->u.loop.body, 0);
		c->nloops--;
		return;
	case ST_IF:
		if (c->nconds >= AN_MAX_DEPTH)
			return;
		c->conds[c->nconds++] = s->u.cond.cond;
		walk_child(w, s->u.cond.then_s, 0);
		if (s->u.cond.else_s) {
			c->conds[c->nconds - 1] = ir_not(w->arena, s->u.cond.cond, s->u.cond.cond->span);
			walk_child(w, s->u.cond.else_s, 1);
		}
		c->nconds--;
		return;
	case ST_ALLOC: walk_child(w, s->u.alloc.body, 0); return;
	case ST_BLOCK: walk_child(w, s->u.block.body, 0); return;
	case ST_LET:
		if (c->nlets >= AN_MAX_DEPTH)
			return;
		c->lets[c->nlets++] = s;
		walk_child(w, s->u.let.body, 0);
		c->nlets--;
		return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

static void walk_until(Arena *a, const Func *f, StopVisitor fn, void *ud)
{
	Walker w;
	memset(&w, 0, sizeof w);
	w.arena = a;
	w.fn = fn;
	w.ud = ud;
	walk_stmt(&w, f->body);
}

typedef struct Visit {
	StmtVisitor fn;
	void *ud;
} Visit;

static bool visit_all(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Visit *v = ud;
	v->fn(v->ud, s, ctx);
	return false;
}

void an_walk(Arena *a, const Func *f, StmtVisitor fn, void *ud)
{
	Visit v = {fn, ud};
	walk_until(a, f, visit_all, &v);
}

/* ---------- finding a statement or a loop ---------- */

typedef struct Finder {
	const Stmt *target;
	const char *name;
	int want; /* k-th loop with the name, 1-based; 0 = the only one */
	int seen;
	int seen_compute;    /* non-fact loops with the name */
	StmtCtx hit_compute; /* the last of them */
	bool found;
	StmtCtx hit;
	StrBuf names; /* every loop name, for the error message */
} Finder;

static bool find_target(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Finder *f = ud;
	if (s != f->target)
		return false;
	f->hit = *ctx;
	f->found = true;
	return true;
}

static bool find_loop(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Finder *f = ud;
	if (s->kind != ST_FOR)
		return false;
	const char *name = s->u.loop.var->name;
	sb_printf(&f->names, "%s%s", f->names.n ? ", " : "", name);
	if (strcmp(name, f->name) != 0)
		return false;
	if (!an_is_fact_loop(s)) {
		f->seen_compute++;
		f->hit_compute = *ctx;
	}
	f->seen++;
	if (f->seen == f->want || f->want == 0) {
		f->hit = *ctx;
		f->found = true;
	}
	return false;
}

bool an_find_stmt(Arena *a, const Func *fn, const Stmt *target, StmtCtx *out)
{
	Finder f;
	memset(&f, 0, sizeof f);
	f.target = target;
	walk_until(a, fn, find_target, &f);
	if (f.found)
		*out = f.hit;
	return f.found;
}

/* A plain name shared by several loops means the one that is not a fact
 * loop (loops holding only T.assume statements, e.g. the padding facts
 * transform_layout adds) when there is exactly one such: `ji` is the loop
 * that computes. "ji#k" counts every loop in program order. */
void an_lookup_loop(Arena *a, const Func *fn, const char *name, int want,
		    LoopLookup *out)
{
	Finder f;
	memset(&f, 0, sizeof f);
	f.name = name;
	f.want = want;
	walk_until(a, fn, find_loop, &f);
	if (want == 0 && f.seen > 1 && f.seen_compute == 1) {
		f.seen = 1;
		f.hit = f.hit_compute;
	}
	out->found = f.found;
	out->seen = f.seen;
	out->hit = f.hit;
	out->names = sb_take(&f.names);
}

Stmt *an_stmt_at(const Stmt *root, const int *path, int depth)
{
	Stmt *cur = (Stmt *)root; /* the IR is immutable: const only guards the caller's intent */
	for (int d = 0; d < depth && cur; d++) {
		int k = path[d];
		switch (cur->kind) {
		case ST_SEQ: cur = k < cur->u.seq.n ? cur->u.seq.items[k] : NULL; break;
		case ST_FOR: cur = cur->u.loop.body; break;
		case ST_IF: cur = k == 0 ? cur->u.cond.then_s : cur->u.cond.else_s; break;
		case ST_ALLOC: cur = cur->u.alloc.body; break;
		case ST_BLOCK: cur = cur->u.block.body; break;
		case ST_LET: cur = cur->u.let.body; break;
		case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
			return NULL;
		}
	}
	return cur;
}

Stmt *an_replace_at(Arena *a, Stmt *root, const int *path, int depth,
		    Stmt *replacement)
{
	if (depth == 0)
		return replacement;
	int k = path[0];
	Stmt *child;
	switch (root->kind) {
	case ST_SEQ: {
		int n = root->u.seq.n;
		Stmt *r = an_replace_at(a, root->u.seq.items[k], path + 1, depth - 1, replacement);
		/* splice a replacement sequence into its parent so the IR
		 * stays flat, as the parser would build it (only the
		 * replacement itself: flattening a rebuilt inner sequence
		 * would move the paths of statements below it) */
		bool splice = r->kind == ST_SEQ && depth == 1;
		int m = splice ? r->u.seq.n : 1;
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + m));
		memcpy(items, root->u.seq.items, sizeof(Stmt *) * (size_t)k);
		if (splice)
			memcpy(items + k, r->u.seq.items, sizeof(Stmt *) * (size_t)m);
		else
			items[k] = r;
		memcpy(items + k + m, root->u.seq.items + k + 1, sizeof(Stmt *) * (size_t)(n - k - 1));
		return ir_seq(a, n - 1 + m, items, root->span);
	}
	case ST_FOR:
		child = an_replace_at(a, root->u.loop.body, path + 1, depth - 1,
				      replacement);
		return ir_for(a, root->u.loop.var, root->u.loop.min,
			      root->u.loop.extent, root->u.loop.kind, child,
			      root->span);
	case ST_IF:
		if (k == 0)
			return ir_if(a, root->u.cond.cond,
				     an_replace_at(a, root->u.cond.then_s, path + 1,
						   depth - 1, replacement),
				     root->u.cond.else_s, root->span);
		return ir_if(a, root->u.cond.cond, root->u.cond.then_s,
			     an_replace_at(a, root->u.cond.else_s, path + 1,
					   depth - 1, replacement),
			     root->span);
	case ST_ALLOC:
		child = an_replace_at(a, root->u.alloc.body, path + 1, depth - 1,
				      replacement);
		return ir_alloc(a, root->u.alloc.buf, child, root->span);
	case ST_BLOCK:
		child = an_replace_at(a, root->u.block.body, path + 1, depth - 1,
				      replacement);
		return ir_block_with(a, root, child);
	case ST_LET:
		child = an_replace_at(a, root->u.let.body, path + 1, depth - 1,
				      replacement);
		return ir_letstmt(a, root->u.let.var, root->u.let.value, child,
				  root->span);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		break;
	}
	abort(); /* a path never goes through a leaf */
}

Func *an_with_body(Arena *a, const Func *f, Stmt *body)
{
	return ir_func(a, f->name, f->nparams, f->params, body, f->span);
}

/* ---------- context hypotheses ---------- */

Expr *an_loop_range(Arena *a, const Stmt *loop, Expr *v)
{
	Expr *lo = ir_bin(a, OP_LE, loop->u.loop.min, v, (Span){0});
	Expr *hi = ir_bin(a, OP_LT, v,
			  ir_add(a, loop->u.loop.min, loop->u.loop.extent),
			  (Span){0});
	return ir_and(a, lo, hi);
}

Var *an_fresh_var(Arena *a, const Var *v, const char *suffix)
{
	return ir_var(a, arena_printf(a, "%s%s", v->name, suffix), v->dtype, v->span);
}

int an_nesting(const Stmt *s)
{
	switch (s->kind) {
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return 0;
	case ST_SEQ: case ST_FOR: case ST_IF: case ST_ALLOC: case ST_BLOCK: case ST_LET:
		break;
	}
	int d = 0, n = stmt_nchildren(s);
	for (int i = 0; i < n; i++) {
		int x = an_nesting(stmt_child(s, i));
		d = x > d ? x : d;
	}
	return d + 1;
}
