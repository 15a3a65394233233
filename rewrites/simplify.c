/* rewrites/simplify.c — simplify with translation validation (semantics.md
 * section 4): the simplifier (arith.c) is untrusted, so every replaced
 * expression e -> e' becomes the obligation simplify.equal, e == e' under
 * the statement's context (loop ranges, path conditions, lets, entry
 * facts, and the facts instantiated at its loads). Only proven
 * replacements are applied. Then purely structural clean-ups, which
 * change no observable behaviour: `if True/False`, stores of a cell's own
 * value (X[e] = X[e]), branches and loops whose body is `pass`. T.assume
 * statements are never simplified (they would prove themselves). */
#include "rewrites/simplify.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/arith.h"
#include "kernel/analysis/facts.h"
#include "kernel/print.h"

static Span nospan(void) { return (Span){0}; }

static char *print_expr_text(Arena *a, const Expr *e)
{
	char *s = print_expr(e);
	char *r = arena_strdup(a, s);
	free(s);
	return r;
}

/* ---------- candidates ---------- */

typedef struct Collect {
	Arena *a;
	const Func *f;
	FloatMode fm;
	bool use_facts;
	const int *prefix; /* only statements under this path */
	int prefix_depth;
	int n, cap;
	SimplifyCandidate *items;
	FactCache *facts; /* per-statement facts, shared by all the queries */
} Collect;

static void push(Collect *k, const StmtCtx *ctx, int slot, Expr *old, Expr *new,
		 const ArithLog *log)
{
	VEC_RESERVE(k->a, k->items, k->n, k->cap);
	SimplifyCandidate *c = &k->items[k->n++];
	c->ctx = *ctx;
	c->slot = slot;
	c->old = old;
	c->new = new;
	c->log = *log;
}

static void try_expr(Collect *k, const StmtCtx *ctx, const Bounds *b, const FactSet *fs,
		     int slot, Expr *e)
{
	ArithLog log = {0};
	Simplifier s = {k->a, b, fs, k->fm, false, &log};
	Expr *n = arith_simplify(&s, e);
	if (s.changed && n != e && !ir_expr_equal(n, e))
		push(k, ctx, slot, e, n, &log);
}

static void visit(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Collect *k = ud;
	if (ctx->depth < k->prefix_depth)
		return;
	for (int i = 0; i < k->prefix_depth; i++)
		if (ctx->path[i] != k->prefix[i])
			return;
	Bounds b;
	FactSet fs;
	memset(&fs, 0, sizeof fs);
	switch (s->kind) {
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_LET:
		break;
	case ST_SEQ: case ST_ASSUME: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT:
		return;
	}
	arith_bounds_at(k->f, ctx, &b);
	if (k->use_facts)
		an_facts_for(k->a, k->f, ctx, true, NULL, k->facts, s, &fs);
	switch (s->kind) {
	case ST_FOR:
		try_expr(k, ctx, &b, &fs, 0, s->u.loop.min);
		try_expr(k, ctx, &b, &fs, 1, s->u.loop.extent);
		return;
	case ST_IF:
		try_expr(k, ctx, &b, &fs, 0, s->u.cond.cond);
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			try_expr(k, ctx, &b, &fs, i, s->u.store.idx[i]);
		try_expr(k, ctx, &b, &fs, s->u.store.nidx, s->u.store.value);
		return;
	case ST_EVAL:
		try_expr(k, ctx, &b, &fs, 0, s->u.expr);
		return;
	case ST_LET:
		try_expr(k, ctx, &b, &fs, 0, s->u.let.value);
		return;
	case ST_SEQ: case ST_ASSUME: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* s with expression `slot` replaced. */
static Stmt *with_slot(Arena *a, Stmt *s, int slot, Expr *e)
{
	switch (s->kind) {
	case ST_FOR:
		return ir_for(a, s->u.loop.var, slot == 0 ? e : s->u.loop.min,
			      slot == 1 ? e : s->u.loop.extent, s->u.loop.kind, s->u.loop.body, s->span);
	case ST_IF:
		return ir_if(a, e, s->u.cond.then_s, s->u.cond.else_s, s->span);
	case ST_STORE: {
		int n = s->u.store.nidx;
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		memcpy(idx, s->u.store.idx, sizeof(Expr *) * (size_t)n);
		if (slot < n)
			idx[slot] = e;
		return ir_store(a, s->u.store.buf, n, idx, slot == n ? e : s->u.store.value, s->span);
	}
	case ST_EVAL:
		return ir_eval(a, e, s->span);
	case ST_LET:
		return ir_letstmt(a, s->u.let.var, e, s->u.let.body, s->span);
	case ST_SEQ: case ST_ASSUME: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT:
		break;
	}
	return s;
}

Obligation *rw_simplify_equal_obligation(RwCtx *c, const SimplifyCandidate *k, const FactSet *fs)
{
	Arena *a = c->arena;
	/* one equality per rewrite the simplifier made: each is small (an
	 * index, a decided comparison), and together, by congruence and
	 * transitivity, they make old equal to new */
	StrBuf text = {0};
	Expr *goal = NULL;
	for (int i = 0; i < k->log.n; i++) {
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, k->log.from[i], k->log.to[i], nospan()));
		if (i < 3) {
			char *p = print_expr_text(a, k->log.from[i]), *q = print_expr_text(a, k->log.to[i]);
			sb_printf(&text, "%s%s -> %s", i ? "; " : "", p, q);
		} else if (i == 3) {
			sb_printf(&text, "; ... (%d rewrites)", k->log.n);
		}
	}
	if (!goal) /* nothing logged: state the whole equality */
		goal = ir_bin(a, OP_EQ, k->old, k->new, nospan());
	char *diffs = sb_take(&text);
	char *what = arena_strdup(a, diffs);
	free(diffs);
	Obligation *o = obligation_new(a, "simplify.equal",
				       arena_printf(a, "line %d: %s", k->ctx.stmt->span.line, what),
				       0, NULL, 0, NULL, goal, k->ctx.stmt->span);
	o->rewrite = c->desc;
	o->same_value = true;
	rw_add_context_hyps(c, o, &k->ctx);
	an_facts_instantiate(a, fs, goal, o);
	return o;
}

/* ---------- structural clean-ups ---------- */

static bool is_pass(const Stmt *s)
{
	if (s->kind == ST_PASS)
		return true;
	if (s->kind != ST_SEQ)
		return false;
	for (int i = 0; i < s->u.seq.n; i++)
		if (!is_pass(s->u.seq.items[i]))
			return false;
	return true;
}

static bool bool_const(const Expr *e, bool *v)
{
	if (e->kind != EX_INT || e->dtype != DT_BOOL)
		return false;
	*v = e->u.ival != 0;
	return true;
}

/* A statement that does nothing observable, or its simpler equal; NULL if
 * nothing applies. */
static Stmt *cleanup(Arena *a, Stmt *s, const char **what)
{
	bool v;
	switch (s->kind) {
	case ST_IF:
		if (bool_const(s->u.cond.cond, &v)) {
			*what = "a branch on a constant condition";
			Stmt *kept = v ? s->u.cond.then_s : s->u.cond.else_s;
			return kept ? kept : ir_pass(a, s->span);
		}
		if (is_pass(s->u.cond.then_s) && (!s->u.cond.else_s || is_pass(s->u.cond.else_s))) {
			*what = "a branch with empty bodies";
			return ir_pass(a, s->span);
		}
		if (s->u.cond.else_s && is_pass(s->u.cond.else_s)) {
			*what = "an empty else part";
			return ir_if(a, s->u.cond.cond, s->u.cond.then_s, NULL, s->span);
		}
		if (s->u.cond.else_s && is_pass(s->u.cond.then_s)) {
			*what = "an empty then part";
			return ir_if(a, ir_not(a, s->u.cond.cond, s->u.cond.cond->span), s->u.cond.else_s,
				     NULL, s->span);
		}
		return NULL;
	case ST_FOR:
		if (is_pass(s->u.loop.body)) {
			*what = "a loop with an empty body";
			return ir_pass(a, s->span);
		}
		return NULL;
	case ST_STORE: {
		const Expr *v2 = s->u.store.value;
		if (v2->kind != EX_LOAD || v2->u.load.buf != s->u.store.buf ||
		    v2->u.load.nidx != s->u.store.nidx)
			return NULL;
		for (int i = 0; i < v2->u.load.nidx; i++)
			if (!ir_expr_equal(v2->u.load.idx[i], s->u.store.idx[i]))
				return NULL;
		*what = "a store of the cell's own value";
		return ir_pass(a, s->span);
	}
	case ST_SEQ: {
		int keep = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			keep += s->u.seq.items[i]->kind != ST_PASS;
		if (keep == s->u.seq.n || s->u.seq.n == 0)
			return NULL;
		*what = "pass statements";
		if (keep == 0)
			return ir_pass(a, s->span);
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)keep);
		int j = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			if (s->u.seq.items[i]->kind != ST_PASS)
				items[j++] = s->u.seq.items[i];
		return keep == 1 ? items[0] : ir_seq(a, keep, items, s->span);
	}
	case ST_ASSUME: case ST_EVAL: case ST_ALLOC: case ST_BLOCK: case ST_LET: case ST_PASS:
	case ST_COUNT:
		return NULL;
	}
	return NULL;
}

/* Evaluating e has no effect but its value (and its UB, which a removal
 * may drop: semantics.md 1 asks nothing of a run with UB). Every kind is
 * listed: a call kind with an effect must answer false here. */
static bool effect_free(const Expr *e)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return true;
	case EX_BIN:
		return effect_free(e->u.bin.a) && effect_free(e->u.bin.b);
	case EX_NOT: case EX_NEG: case EX_CAST:
		return effect_free(e->u.un.a);
	case EX_SELECT:
		return effect_free(e->u.sel.cond) && effect_free(e->u.sel.a) &&
		       effect_free(e->u.sel.b);
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			if (!effect_free(e->u.load.idx[i]))
				return false;
		return true;
	case EX_LET:
		return effect_free(e->u.let.value) && effect_free(e->u.let.body);
	case EX_CALL: /* the math functions (VS_MATH_FNS) are pure */
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!effect_free(e->u.call.args[i]))
				return false;
		return true;
	case EX_COUNT:
		return false;
	}
	return false;
}

/* remove_no_op's clean-ups beyond cleanup(): `T.evaluate(e)` of an
 * effect-free e, an allocation or a let around nothing, a let whose
 * variable nothing uses (and, in
 * find_cleanup, a store store_never_read shows dead). */
static Stmt *noop_cleanup(Arena *a, Stmt *s, const char **what)
{
	switch (s->kind) {
	case ST_EVAL:
		if (!effect_free(s->u.expr))
			return NULL;
		*what = "an evaluated expression without effect";
		return ir_pass(a, s->span);
	case ST_ALLOC:
		if (!is_pass(s->u.alloc.body))
			return NULL;
		*what = "an allocation nothing uses";
		return ir_pass(a, s->span);
	case ST_LET:
		if (!effect_free(s->u.let.value))
			return NULL;
		if (is_pass(s->u.let.body)) {
			*what = "a let around nothing";
			return ir_pass(a, s->span);
		}
		if (ir_stmt_uses_var(s->u.let.body, s->u.let.var))
			return NULL;
		*what = "a let nothing uses";
		return s->u.let.body;
	case ST_SEQ: case ST_FOR: case ST_IF: case ST_STORE: case ST_ASSUME: case ST_BLOCK:
	case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

typedef struct Found {
	StmtCtx ctx;
	Stmt *replacement;
	const char *what;
	bool hit;
	bool evaluates; /* remove_no_op's clean-ups too */
	Arena *a;
	const Func *f;
} Found;

/* e reads buffer b, or might (every kind is listed: one that could
 * reach a buffer some other way must answer true) */
static bool loads_buffer(const Expr *e, void *b)
{
	switch (e->kind) {
	case EX_LOAD:
		return e->u.load.buf == b;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_BIN: case EX_NOT: case EX_NEG:
	case EX_SELECT: case EX_CAST: case EX_UNDEF: case EX_LET: case EX_CALL:
		return false;
	case EX_COUNT:
		return true;
	}
	return true;
}

/* A store into a buffer the function allocates, where nothing that can
 * run after it, up to the end of the allocation, mentions the buffer:
 * the rest of each enclosing sequence, the whole body of each enclosing
 * loop (its later iterations). The cell is never read again, and an
 * allocated buffer is not observable (semantics.md 1), so the store
 * does nothing observable. */
static bool store_never_read(const Func *f, const StmtCtx *ctx)
{
	const Buffer *x = ctx->stmt->u.store.buf;
	for (int d = ctx->depth - 1; d >= 0; d--) {
		const Stmt *anc = an_stmt_at(f->body, ctx->path, d);
		if (!anc)
			return false;
		switch (anc->kind) {
		case ST_ALLOC:
			if (anc->u.alloc.buf == x)
				return true;
			break;
		case ST_FOR:
			if (stmt_any_expr(anc->u.loop.body, loads_buffer, (void *)x))
				return false;
			break;
		case ST_SEQ:
			for (int i = ctx->path[d] + 1; i < anc->u.seq.n; i++)
				if (stmt_any_expr(anc->u.seq.items[i], loads_buffer, (void *)x))
					return false;
			break;
		case ST_IF: case ST_BLOCK: case ST_LET:
			break;
		case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
			return false;
		}
	}
	return false; /* not allocated here: a parameter */
}

static void find_cleanup(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Found *f = ud;
	if (f->hit)
		return;
	const char *what = NULL;
	Stmt *r = f->evaluates ? noop_cleanup(f->a, s, &what) : NULL;
	if (!r && f->evaluates && s->kind == ST_STORE && store_never_read(f->f, ctx)) {
		what = "a store into an allocated buffer nothing reads after it";
		r = ir_pass(f->a, s->span);
	}
	if (!r)
		r = cleanup(f->a, s, &what);
	if (!r)
		return;
	f->hit = true;
	f->ctx = *ctx;
	f->replacement = r;
	f->what = what;
}

/* ---------- the pieces a call is made of ---------- */

void rw_simplify_candidates(Arena *a, const Func *f, FloatMode fm, bool use_facts,
			    const int *prefix, int prefix_depth, SimplifyCandidates *out)
{
	Collect col = {a, f, fm, use_facts, prefix, prefix_depth, 0, 0, NULL, NULL};
	if (use_facts)
		col.facts = an_fact_cache_new(a);
	an_walk(a, f, visit, &col);
	out->n = col.n;
	out->cap = col.cap;
	out->items = col.items;
	out->facts = col.facts;
}

Func *rw_simplify_replaced(Arena *a, const Func *f, const StmtCtx *ctx, int slot, Expr *new)
{
	/* the tree's shape has not changed since ctx was taken, only
	 * expressions, so the path still leads there */
	Stmt *at = an_stmt_at(f->body, ctx->path, ctx->depth);
	if (!at || at->kind != ctx->stmt->kind)
		return NULL;
	Stmt *repl = with_slot(a, at, slot, new);
	return an_with_body(a, f, an_replace_at(a, f->body, ctx->path, ctx->depth, repl));
}

static Func *first_cleanup(Arena *a, const Func *f, bool evaluates)
{
	Found fd;
	memset(&fd, 0, sizeof fd);
	fd.a = a;
	fd.evaluates = evaluates;
	fd.f = f;
	an_walk(a, f, find_cleanup, &fd);
	if (!fd.hit)
		return NULL;
	return an_with_body(a, f, an_replace_at(a, f->body, fd.ctx.path, fd.ctx.depth, fd.replacement));
}

Func *rw_simplify_cleanup(Arena *a, const Func *f) { return first_cleanup(a, f, false); }

Func *rw_noop_cleanup(Arena *a, const Func *f) { return first_cleanup(a, f, true); }
