/* rewrites/context.c — finding loops by name ("i#2"), the context that
 * holds at a statement (enclosing loop ranges, path conditions, lets, entry
 * facts over scalar parameters), replacing a statement along its path, and
 * small integer folding for readable extents. */
#include "rewrite.h"
#include "kernel/print.h"

#include <stdlib.h>
#include <string.h>

RwStatus rw_fail(RwCtx *c, RwStatus st, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(c->diag, DIAG_ERROR, sp.src ? sp : c->call_span, fmt, ap);
	va_end(ap);
	return st;
}

/* ---------- walking to a loop ---------- */

typedef struct Finder {
	const Stmt *target; /* find this statement instead of a loop name */
	const char *name;
	int want; /* k-th occurrence, 1-based; 0 = the only one */
	int seen;
	int seen_compute;  /* non-fact loops with the name */
	StmtCtx hit_compute; /* the last of them */
	bool found;
	StmtCtx cur, hit;
	StrBuf names; /* every loop name, for the error message */
	Arena *arena;
} Finder;

static void find_walk(Finder *f, Stmt *s);

static void find_child(Finder *f, Stmt *s, int index)
{
	StmtCtx *c = &f->cur;
	if (c->depth >= RW_MAX_DEPTH)
		return;
	c->path[c->depth++] = index;
	find_walk(f, s);
	c->depth--;
}

static void find_walk(Finder *f, Stmt *s)
{
	StmtCtx *c = &f->cur;
	if (f->target) {
		if (f->found)
			return;
		if (s == f->target) {
			f->hit = *c;
			f->hit.stmt = s;
			f->found = true;
			return;
		}
	}
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			find_child(f, s->u.seq.items[i], i);
		return;
	case ST_FOR:
		if (!f->target)
			sb_printf(&f->names, "%s%s", f->names.n ? ", " : "",
				  s->u.loop.var->name);
		if (!f->target && strcmp(s->u.loop.var->name, f->name) == 0) {
			if (!rw_is_fact_loop(s)) {
				f->seen_compute++;
				f->hit_compute = *c;
				f->hit_compute.stmt = s;
			}
			f->seen++;
			if (f->seen == f->want || f->want == 0) {
				f->hit = *c;
				f->hit.stmt = s;
				f->found = true;
			}
		}
		if (c->nloops >= RW_MAX_DEPTH)
			return;
		c->loops[c->nloops++] = s;
		find_child(f, s->u.loop.body, 0);
		c->nloops--;
		return;
	case ST_IF:
		if (c->nconds >= RW_MAX_DEPTH)
			return;
		c->conds[c->nconds++] = s->u.cond.cond;
		find_child(f, s->u.cond.then_s, 0);
		if (s->u.cond.else_s) {
			c->conds[c->nconds - 1] =
				ir_not(f->arena, s->u.cond.cond, s->u.cond.cond->span);
			find_child(f, s->u.cond.else_s, 1);
		}
		c->nconds--;
		return;
	case ST_ALLOC:
		find_child(f, s->u.alloc.body, 0);
		return;
	case ST_BLOCK:
		find_child(f, s->u.block.body, 0);
		return;
	case ST_LET:
		if (c->nlets >= RW_MAX_DEPTH)
			return;
		c->lets[c->nlets++] = s;
		find_child(f, s->u.let.body, 0);
		c->nlets--;
		return;
	case ST_STORE:
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

bool rw_is_fact_loop(const Stmt *s)
{
	switch (s->kind) {
	case ST_FOR: return rw_is_fact_loop(s->u.loop.body);
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (!rw_is_fact_loop(s->u.seq.items[i]))
				return false;
		return true;
	case ST_IF:
		return rw_is_fact_loop(s->u.cond.then_s) &&
		       (!s->u.cond.else_s || rw_is_fact_loop(s->u.cond.else_s));
	case ST_ASSUME: case ST_PASS: return true;
	case ST_STORE: case ST_EVAL: case ST_ALLOC: case ST_BLOCK: case ST_LET: case ST_COUNT:
		return false;
	}
	return false;
}

/* A plain name shared by several loops means the one that is not a fact
 * loop (loops holding only T.assume statements, e.g. the padding facts
 * transform_layout adds) when there is exactly one such: `ji` is the loop
 * that computes. "ji#k" counts every loop in program order. */
RwStatus rw_find_loop(RwCtx *c, const char *name, StmtCtx *out)
{
	Finder f;
	memset(&f, 0, sizeof f);
	f.arena = c->arena;
	const char *hash = strchr(name, '#');
	if (hash) {
		char *end;
		long k = strtol(hash + 1, &end, 10);
		if (*end || k < 1)
			return rw_fail(c, RW_BAD_INPUT, c->call_span,
				       "bad loop name '%s': expected NAME or NAME#K with K >= 1",
				       name);
		f.name = arena_strndup(c->arena, name, (size_t)(hash - name));
		f.want = (int)k;
	} else {
		f.name = name;
	}
	find_walk(&f, c->func->body);
	if (!hash && f.seen > 1 && f.seen_compute == 1) {
		f.seen = 1;
		f.hit = f.hit_compute;
	}
	char *names = sb_take(&f.names);
	RwStatus st = RW_OK;
	if (!f.found) {
		st = rw_fail(c, RW_BAD_INPUT, c->call_span,
			     "no loop '%s' in function '%s' (loops: %s)", name,
			     c->func->name, *names ? names : "none");
	} else if (!hash && f.seen > 1) {
		st = rw_fail(c, RW_BAD_INPUT, c->call_span,
			     "loop name '%s' is ambiguous in function '%s': %d loops have it; write '%s#1' ... '%s#%d'",
			     name, c->func->name, f.seen, name, name, f.seen);
	} else {
		*out = f.hit;
	}
	free(names);
	return st;
}

/* ---------- visiting every statement with its context ---------- */

typedef struct Walker {
	Arena *arena;
	StmtVisitor fn;
	void *ud;
	StmtCtx cur;
} Walker;

static void walk_stmt(Walker *w, Stmt *s);

static void walk_child(Walker *w, Stmt *s, int index)
{
	StmtCtx *c = &w->cur;
	if (c->depth >= RW_MAX_DEPTH)
		return;
	c->path[c->depth++] = index;
	walk_stmt(w, s);
	c->depth--;
}

static void walk_stmt(Walker *w, Stmt *s)
{
	StmtCtx *c = &w->cur;
	c->stmt = s;
	w->fn(w->ud, s, c);
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			walk_child(w, s->u.seq.items[i], i);
		return;
	case ST_FOR:
		if (c->nloops >= RW_MAX_DEPTH)
			return;
		c->loops[c->nloops++] = s;
		walk_child(w, s->u.loop.body, 0);
		c->nloops--;
		return;
	case ST_IF:
		if (c->nconds >= RW_MAX_DEPTH)
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
		if (c->nlets >= RW_MAX_DEPTH)
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

void rw_walk(Arena *a, const Func *f, StmtVisitor fn, void *ud)
{
	Walker w;
	memset(&w, 0, sizeof w);
	w.arena = a;
	w.fn = fn;
	w.ud = ud;
	walk_stmt(&w, f->body);
}

Stmt *rw_stmt_at(Stmt *root, const int *path, int depth)
{
	Stmt *cur = root;
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

bool rw_find_stmt(Arena *a, const Func *fn, const Stmt *target, StmtCtx *out)
{
	Finder f;
	memset(&f, 0, sizeof f);
	f.arena = a;
	f.target = target;
	find_walk(&f, fn->body);
	free(sb_take(&f.names));
	if (f.found)
		*out = f.hit;
	return f.found;
}

/* ---------- replacing along a path ---------- */

Stmt *rw_replace_at(Arena *a, Stmt *root, const int *path, int depth,
		    Stmt *replacement)
{
	if (depth == 0)
		return replacement;
	int k = path[0];
	Stmt *child;
	switch (root->kind) {
	case ST_SEQ: {
		int n = root->u.seq.n;
		Stmt *r = rw_replace_at(a, root->u.seq.items[k], path + 1, depth - 1, replacement);
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
		child = rw_replace_at(a, root->u.loop.body, path + 1, depth - 1,
				      replacement);
		return ir_for(a, root->u.loop.var, root->u.loop.min,
			      root->u.loop.extent, root->u.loop.kind, child,
			      root->span);
	case ST_IF:
		if (k == 0)
			return ir_if(a, root->u.cond.cond,
				     rw_replace_at(a, root->u.cond.then_s, path + 1,
						   depth - 1, replacement),
				     root->u.cond.else_s, root->span);
		return ir_if(a, root->u.cond.cond, root->u.cond.then_s,
			     rw_replace_at(a, root->u.cond.else_s, path + 1,
					   depth - 1, replacement),
			     root->span);
	case ST_ALLOC:
		child = rw_replace_at(a, root->u.alloc.body, path + 1, depth - 1,
				      replacement);
		return ir_alloc(a, root->u.alloc.buf, child, root->span);
	case ST_BLOCK:
		child = rw_replace_at(a, root->u.block.body, path + 1, depth - 1,
				      replacement);
		return ir_block(a, root->u.block.name, child, root->span);
	case ST_LET:
		child = rw_replace_at(a, root->u.let.body, path + 1, depth - 1,
				      replacement);
		return ir_letstmt(a, root->u.let.var, root->u.let.value, child,
				  root->span);
	case ST_STORE:
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
	case ST_COUNT:
		break;
	}
	abort(); /* a path never goes through a leaf */
}

Func *rw_with_body(Arena *a, const Func *f, Stmt *body)
{
	return ir_func(a, f->name, f->nparams, f->params, body, f->span);
}

/* ---------- context hypotheses ---------- */

Expr *rw_loop_range(Arena *a, const Stmt *loop, Expr *v)
{
	Expr *lo = ir_bin(a, OP_LE, loop->u.loop.min, v, (Span){0});
	Expr *hi = ir_bin(a, OP_LT, v,
			  ir_add(a, loop->u.loop.min, loop->u.loop.extent),
			  (Span){0});
	return ir_and(a, lo, hi);
}

bool rw_expr_has_load(const Expr *e)
{
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
	case EX_VAR:
	case EX_UNDEF:
		return false;
	case EX_LOAD:
		return true;
	case EX_BIN:
		return rw_expr_has_load(e->u.bin.a) || rw_expr_has_load(e->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return rw_expr_has_load(e->u.un.a);
	case EX_SELECT:
		return rw_expr_has_load(e->u.sel.cond) ||
		       rw_expr_has_load(e->u.sel.a) || rw_expr_has_load(e->u.sel.b);
	case EX_LET:
		return rw_expr_has_load(e->u.let.value) ||
		       rw_expr_has_load(e->u.let.body);
	case EX_COUNT:
		break;
	}
	abort();
}

static bool is_scalar_param(const Func *f, const Var *v)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR && f->params[i].var == v)
			return true;
	return false;
}

/* Only scalar parameters (no loop vars, no loads, no undef). */
static bool scalar_only(const Func *f, const Expr *e)
{
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
		return true;
	case EX_VAR:
		return is_scalar_param(f, e->u.var);
	case EX_LOAD:
	case EX_UNDEF:
	case EX_LET:
		return false;
	case EX_BIN:
		return scalar_only(f, e->u.bin.a) && scalar_only(f, e->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return scalar_only(f, e->u.un.a);
	case EX_SELECT:
		return scalar_only(f, e->u.sel.cond) && scalar_only(f, e->u.sel.a) &&
		       scalar_only(f, e->u.sel.b);
	case EX_COUNT:
		break;
	}
	abort();
}

/* T.assume facts over scalar parameters that every execution reaches
 * (not under a loop or a branch). Scalars never change, so a fact that
 * must hold where it stands holds everywhere; an input that breaks it
 * gives P undefined behaviour, and such inputs are outside the claim. */
static void add_scalar_facts(RwCtx *c, Obligation *o, const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			add_scalar_facts(c, o, s->u.seq.items[i]);
		return;
	case ST_ASSUME:
		if (scalar_only(c->func, s->u.expr))
			obligation_add_hyp(c->arena, o, s->u.expr);
		return;
	case ST_ALLOC:
		add_scalar_facts(c, o, s->u.alloc.body);
		return;
	case ST_BLOCK:
		add_scalar_facts(c, o, s->u.block.body);
		return;
	case ST_LET:
		add_scalar_facts(c, o, s->u.let.body);
		return;
	case ST_FOR:
	case ST_IF:
	case ST_STORE:
	case ST_EVAL:
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

static void add_param_ranges(RwCtx *c, Obligation *o)
{
	Arena *a = c->arena;
	for (int i = 0; i < c->func->nparams; i++) {
		const Param *p = &c->func->params[i];
		if (p->kind != PARAM_SCALAR || !dtype_is_int(p->var->dtype))
			continue;
		/* -MAX - 1, not -(1 << 63): that shift is undefined for int64 */
		int64_t hi = rw_dtype_max(p->var->dtype);
		int64_t lo = dtype_is_signed(p->var->dtype) ? -hi - 1 : 0;
		Expr *v = ir_varref(a, p->var, (Span){0});
		Expr *r = ir_and(a, ir_bin(a, OP_LE, ir_int(a, lo, DT_INT64, (Span){0}), v, (Span){0}),
				 ir_bin(a, OP_LE, v, ir_int(a, hi, DT_INT64, (Span){0}), (Span){0}));
		obligation_add_hyp(a, o, r);
		obligation_add_var(a, o, p->var);
	}
}

/* `min <= v < min + extent` of an enclosing loop. Its bounds were read
 * when that loop started; a bound that reads a buffer may have changed
 * since (the loop body may write it before the statement at hand), and
 * loads in an obligation read the state *at* that statement, so such a
 * bound is left out (weaker hypotheses: sound). */
static void add_loop_range(RwCtx *c, Obligation *o, const Stmt *l)
{
	Arena *a = c->arena;
	Expr *v = ir_varref(a, l->u.loop.var, (Span){0});
	bool min_ok = !rw_expr_has_load(l->u.loop.min);
	bool ext_ok = !rw_expr_has_load(l->u.loop.extent);
	if (min_ok && ext_ok) {
		obligation_add_hyp(a, o, rw_loop_range(a, l, v));
		return;
	}
	if (min_ok)
		obligation_add_hyp(a, o, ir_bin(a, OP_LE, l->u.loop.min, v, (Span){0}));
}

void rw_add_context_hyps(RwCtx *c, Obligation *o, const StmtCtx *sc)
{
	Arena *a = c->arena;
	add_param_ranges(c, o);
	add_scalar_facts(c, o, c->func->body);
	for (int i = 0; i < sc->nloops; i++) {
		const Stmt *l = sc->loops[i];
		obligation_add_var(a, o, l->u.loop.var);
		add_loop_range(c, o, l);
	}
	/* A condition that reads a buffer would need the state at that point;
	 * leaving it out only weakens the hypotheses (sound). */
	for (int i = 0; i < sc->nconds; i++)
		if (!rw_expr_has_load(sc->conds[i]))
			obligation_add_hyp(a, o, sc->conds[i]);
	for (int i = 0; i < sc->nlets; i++) {
		const Stmt *l = sc->lets[i];
		obligation_add_var(a, o, l->u.let.var);
		if (!rw_expr_has_load(l->u.let.value) && dtype_is_int(l->u.let.var->dtype))
			obligation_add_hyp(a, o, ir_bin(a, OP_EQ, ir_varref(a, l->u.let.var, (Span){0}),
							l->u.let.value, (Span){0}));
	}
}

Var *rw_fresh_var(Arena *a, const Var *v, const char *suffix)
{
	return ir_var(a, arena_printf(a, "%s%s", v->name, suffix), v->dtype, v->span);
}

/* ---------- conversions that can fault ---------- */

static bool float_to_int(const Expr *from, DType to)
{
	return dtype_is_float(from->dtype) && !dtype_is_float(to);
}

bool rw_converts_float_to_int(const Expr *e)
{
	switch (e->kind) {
	case EX_CAST: case EX_NEG: return float_to_int(e->u.un.a, e->dtype);
	case EX_BIN:
		return !binop_is_compare(e->u.bin.op) && !binop_is_logical(e->u.bin.op) &&
		       (float_to_int(e->u.bin.a, e->dtype) || float_to_int(e->u.bin.b, e->dtype));
	case EX_SELECT: return float_to_int(e->u.sel.a, e->dtype) || float_to_int(e->u.sel.b, e->dtype);
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_LOAD: case EX_NOT:
	case EX_LET: case EX_COUNT:
		return false;
	}
	return true;
}

/* ---------- loops whose range wraps ---------- */

/* The interpreter runs `extent` iterations with the variable min + k
 * wrapped to its dtype, so when min + extent passes the dtype's largest
 * value the variable wraps to negative values and the hypothesis
 * `min <= v < min + extent` (rw_loop_range, and the ranges the primitives
 * build themselves) describes none of those iterations: every obligation
 * about them would be proven vacuously. Rather than a wrapped range in
 * every hypothesis, every step proves that no loop of its input or output
 * wraps (kind loop.no_wrap); then those hypotheses describe every
 * iteration exactly. A loop from 0, or with constant bounds that fit,
 * needs no proof. */
static bool range_cannot_wrap(const Stmt *l)
{
	int64_t lo, ext;
	DType t = l->u.loop.var->dtype;
	if (l->u.loop.min->dtype != t || l->u.loop.extent->dtype != t)
		return false;
	if (!rw_const_int(l->u.loop.min, &lo))
		return false;
	if (lo == 0)
		return true; /* 0 + extent never passes the largest value */
	if (!rw_const_int(l->u.loop.extent, &ext))
		return false;
	return ext <= 0 || lo <= rw_dtype_max(t) - ext;
}

typedef struct WrapWalk {
	RwCtx *c;
	ObligationList *list;
	const Func *func;
	/* loops of the input already given an obligation, with their context */
	int n, cap;
	const Stmt **done;
	Stmt **done_outer; /* innermost enclosing loop (NULL at top) */
} WrapWalk;

static bool wrap_done(const WrapWalk *w, const Stmt *l, const StmtCtx *sc)
{
	const Stmt *outer = sc->nloops ? sc->loops[sc->nloops - 1] : NULL;
	for (int i = 0; i < w->n; i++)
		if (w->done[i] == l && w->done_outer[i] == outer)
			return true;
	return false;
}

static void wrap_visit(void *ud, Stmt *s, const StmtCtx *sc)
{
	WrapWalk *w = ud;
	if (s->kind != ST_FOR || range_cannot_wrap(s) || wrap_done(w, s, sc))
		return;
	Arena *a = w->c->arena;
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 8;
		const Stmt **done = arena_alloc(a, sizeof *done * (size_t)cap);
		Stmt **outer = arena_alloc(a, sizeof *outer * (size_t)cap);
		if (w->n) {
			memcpy(done, w->done, sizeof *done * (size_t)w->n);
			memcpy(outer, w->done_outer, sizeof *outer * (size_t)w->n);
		}
		w->done = done;
		w->done_outer = outer;
		w->cap = cap;
	}
	w->done[w->n] = s;
	w->done_outer[w->n++] = sc->nloops ? sc->loops[sc->nloops - 1] : NULL;
	Expr *lo = s->u.loop.min, *ext = s->u.loop.extent;
	DType t = s->u.loop.var->dtype;
	Expr *goal;
	const char *what;
	if (lo->dtype != t || ext->dtype != t) {
		/* bounds of another dtype than the variable: not handled */
		goal = ir_bool(a, false);
		what = "has bounds of another dtype than its variable (not supported)";
	} else {
		/* extent > 0 and min + extent wrapped below min: it wrapped */
		goal = ir_or(a, ir_bin(a, OP_LE, ext, ir_int(a, 0, t, (Span){0}), (Span){0}),
			     ir_bin(a, OP_LE, lo, ir_add(a, lo, ext), (Span){0}));
		what = arena_printf(a, "runs without its variable wrapping past the %s maximum",
				    dtype_name(t));
	}
	char *lo_s = print_expr(lo), *ext_s = print_expr(ext);
	const char *stmt = arena_printf(a, "loop %s (from %s, %s iterations) %s",
					s->u.loop.var->name, lo_s, ext_s, what);
	free(lo_s);
	free(ext_s);
	RwCtx fc = *w->c;
	fc.func = w->func;
	rw_obligation_at(&fc, w->list, sc, "loop.no_wrap", stmt, goal);
}

void rw_loop_wrap_obligations(RwCtx *c)
{
	if (!c->out)
		return;
	WrapWalk w = {.c = c, .list = &c->obs, .func = c->func};
	rw_walk(c->arena, c->func, wrap_visit, &w);
	w.func = c->out;
	rw_walk(c->arena, c->out, wrap_visit, &w);
	if (c->out_module)
		for (int i = 0; i < c->out_module->nfuncs; i++) {
			const Func *g = c->out_module->funcs[i];
			const Func *g0 = c->module ? module_find_func(c->module, g->name) : NULL;
			if (g == c->out || g == g0 || strcmp(g->name, c->func->name) == 0)
				continue;
			if (g0) {
				w.func = g0;
				rw_walk(c->arena, g0, wrap_visit, &w);
			}
			w.func = g;
			rw_walk(c->arena, g, wrap_visit, &w);
		}
	if (c->fallback) {
		/* the fallback is committed on its own obligations: the input's
		 * loops and its own */
		WrapWalk f = {.c = c, .list = &c->fallback_obs, .func = c->func};
		rw_walk(c->arena, c->func, wrap_visit, &f);
		f.func = c->fallback;
		rw_walk(c->arena, c->fallback, wrap_visit, &f);
	}
}

/* ---------- folding ---------- */

bool rw_const_int(const Expr *e, int64_t *out)
{
	if (e->kind != EX_INT || e->dtype == DT_BOOL)
		return false;
	*out = e->u.ival;
	return true;
}

static int64_t floordiv64(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* A folded literal must hold its value in its dtype: otherwise the
 * interpreter (and generated code) would wrap it, and the fold would
 * change the program. Such expressions are left unfolded. */
static bool fits_dtype(int64_t v, DType t)
{
	if (!dtype_is_int(t))
		return false;
	int bits = dtype_bits(t);
	if (bits >= 64)
		return true;
	if (!dtype_is_signed(t))
		return v >= 0 && v <= rw_dtype_max(t);
	return v >= -rw_dtype_max(t) - 1 && v <= rw_dtype_max(t);
}

static Expr *folded(Arena *a, Expr *e, int64_t v)
{
	return fits_dtype(v, e->dtype) ? ir_int(a, v, e->dtype, e->span) : NULL;
}

Expr *rw_fold(Arena *a, Expr *e)
{
	if (e->kind != EX_BIN)
		return e;
	Expr *x = rw_fold(a, e->u.bin.a), *y = rw_fold(a, e->u.bin.b);
	int64_t p = 0, q = 0;
	bool cx = rw_const_int(x, &p), cy = rw_const_int(y, &q);
	/* stay far from overflow: fold only small constants */
	bool small = cx && cy && p > -(INT64_C(1) << 30) && p < (INT64_C(1) << 30) &&
		     q > -(INT64_C(1) << 30) && q < (INT64_C(1) << 30);
	Expr *r = NULL;
	switch (e->u.bin.op) {
	case OP_ADD:
		if (small && (r = folded(a, e, p + q))) return r;
		if (cx && p == 0) return y;
		if (cy && q == 0) return x;
		break;
	case OP_SUB:
		if (small && (r = folded(a, e, p - q))) return r;
		if (cy && q == 0) return x;
		break;
	case OP_MUL:
		if (small && (r = folded(a, e, p * q))) return r;
		if (cx && p == 1) return y;
		if (cy && q == 1) return x;
		break;
	case OP_FLOORDIV:
		if (small && q != 0 && (r = folded(a, e, floordiv64(p, q)))) return r;
		if (cy && q == 1) return x;
		break;
	case OP_FLOORMOD:
		if (small && q != 0 && (r = folded(a, e, p - q * floordiv64(p, q)))) return r;
		break;
	case OP_DIV: case OP_MIN: case OP_MAX: case OP_EQ: case OP_NE:
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_AND:
	case OP_OR: case OP_COUNT:
		break;
	}
	if (x == e->u.bin.a && y == e->u.bin.b)
		return e;
	r = ir_bin(a, e->u.bin.op, x, y, e->span);
	r->dtype = e->dtype;
	return r;
}

/* ---------- loop ranges and index arithmetic ---------- */

int64_t rw_dtype_max(DType t)
{
	int bits = dtype_bits(t);
	if (bits >= 64)
		return INT64_MAX;
	return dtype_is_signed(t) ? (INT64_C(1) << (bits - 1)) - 1 : (INT64_C(1) << bits) - 1;
}

static bool reads_any(const Expr *e, int n, Buffer **bufs)
{
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
	case EX_VAR:
	case EX_UNDEF:
		return false;
	case EX_LOAD:
		for (int i = 0; i < n; i++)
			if (bufs[i] == e->u.load.buf)
				return true;
		for (int i = 0; i < e->u.load.nidx; i++)
			if (reads_any(e->u.load.idx[i], n, bufs))
				return true;
		return false;
	case EX_BIN:
		return reads_any(e->u.bin.a, n, bufs) || reads_any(e->u.bin.b, n, bufs);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return reads_any(e->u.un.a, n, bufs);
	case EX_SELECT:
		return reads_any(e->u.sel.cond, n, bufs) || reads_any(e->u.sel.a, n, bufs) ||
		       reads_any(e->u.sel.b, n, bufs);
	case EX_LET:
		return reads_any(e->u.let.value, n, bufs) || reads_any(e->u.let.body, n, bufs);
	case EX_COUNT:
		break;
	}
	abort();
}

bool rw_expr_reads_written(Arena *a, const Expr *e, const Stmt *region)
{
	if (!rw_expr_has_load(e))
		return false;
	Buffer **bufs;
	int n = rw_written_buffers(a, region, &bufs);
	return reads_any(e, n, bufs);
}

bool rw_range_reads_written(Arena *a, const Stmt *loop, const Stmt *region)
{
	if (!rw_expr_has_load(loop->u.loop.min) && !rw_expr_has_load(loop->u.loop.extent))
		return false;
	Buffer **bufs;
	int n = rw_written_buffers(a, region, &bufs);
	return reads_any(loop->u.loop.min, n, bufs) || reads_any(loop->u.loop.extent, n, bufs);
}

static int nesting(const Stmt *s)
{
	int d = 0;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			int x = nesting(s->u.seq.items[i]);
			d = x > d ? x : d;
		}
		break;
	case ST_FOR: d = nesting(s->u.loop.body); break;
	case ST_IF:
		d = nesting(s->u.cond.then_s);
		if (s->u.cond.else_s) {
			int x = nesting(s->u.cond.else_s);
			d = x > d ? x : d;
		}
		break;
	case ST_ALLOC: d = nesting(s->u.alloc.body); break;
	case ST_BLOCK: d = nesting(s->u.block.body); break;
	case ST_LET: d = nesting(s->u.let.body); break;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return 0;
	}
	return d + 1;
}

/* the walks stop at RW_MAX_DEPTH levels; keep a margin for the levels a
 * walk counts around the body */
#define NESTING_LIMIT (RW_MAX_DEPTH - 4)

static const char *too_deep(Arena *a, const Func *f, const char *what)
{
	if (!f || nesting(f->body) <= NESTING_LIMIT)
		return NULL;
	return arena_printf(a, "%s '%s' nests statements more than %d levels deep; deeper nests are not supported",
			    what, f->name, NESTING_LIMIT);
}

const char *rw_nesting_too_deep(const RwCtx *c)
{
	const char *why = too_deep(c->arena, c->func, "function");
	if (!why)
		why = too_deep(c->arena, c->out, "the result of");
	if (!why)
		why = too_deep(c->arena, c->fallback, "the result of");
	for (int i = 0; !why && c->out_module && i < c->out_module->nfuncs; i++)
		why = too_deep(c->arena, c->out_module->funcs[i], "the result of");
	return why;
}

Obligation *rw_obligation_at(RwCtx *c, ObligationList *list, const StmtCtx *sc,
			     const char *kind, const char *statement, Expr *goal)
{
	Obligation *o = obligation_new(c->arena, kind, statement, 0, NULL, 0, NULL, goal,
				       sc->stmt->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, sc);
	oblist_push(c->arena, list, o);
	return o;
}
