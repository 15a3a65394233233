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
		/* outside every loop, a statement's expressions are evaluated
		 * before its own writes: those do not count */
		an_facts_for(k->a, k->f, ctx, true, ctx->nloops == 0 ? s : NULL, k->facts, s, &fs);
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
	case EX_OPAQUE: /* an extern or packed call: its effects are unknown */
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
	case EX_OPAQUE: /* may reach any buffer it names, through its data */
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

/* ---------- decisions ---------- */

Expr *rw_simplify_slot(const Stmt *s, int slot)
{
	switch (s->kind) {
	case ST_FOR:
		return slot == 0 ? s->u.loop.min : slot == 1 ? s->u.loop.extent : NULL;
	case ST_IF:
		return slot == 0 ? s->u.cond.cond : NULL;
	case ST_STORE:
		if (slot < s->u.store.nidx)
			return s->u.store.idx[slot];
		return slot == s->u.store.nidx ? s->u.store.value : NULL;
	case ST_EVAL:
		return slot == 0 ? s->u.expr : NULL;
	case ST_LET:
		return slot == 0 ? s->u.let.value : NULL;
	case ST_SEQ: case ST_ASSUME: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

static bool decidable(const Expr *e)
{
	if (e->kind == EX_BIN && (e->u.bin.op == OP_MIN || e->u.bin.op == OP_MAX))
		return dtype_is_int(e->dtype);
	return e->dtype == DT_BOOL && e->kind != EX_INT && e->kind != EX_UNDEF;
}

Expr *rw_decision_value(Arena *a, const Expr *sub, int choice)
{
	if (sub->kind == EX_BIN && (sub->u.bin.op == OP_MIN || sub->u.bin.op == OP_MAX))
		return choice ? sub->u.bin.a : sub->u.bin.b;
	return ir_bool(a, choice != 0);
}

/* The k-th decidable subterm of e in pre-order (*k counts down), or NULL. */
static Expr *nth_bool(Expr *e, int *k)
{
	if (decidable(e) && (*k)-- == 0)
		return e;
	for (int i = 0; i < expr_nchildren(e); i++) {
		Expr *r = nth_bool(expr_child(e, i), k);
		if (r)
			return r;
	}
	return NULL;
}

int rw_bool_subterm_count(const Expr *e)
{
	int n = decidable(e);
	for (int i = 0; i < expr_nchildren(e); i++)
		n += rw_bool_subterm_count(expr_child(e, i));
	return n;
}

Expr *rw_bool_subterm(Expr *e, int k) { return nth_bool(e, &k); }

/* e with its k-th decidable subterm (pre-order, *k counting down)
 * replaced by `with`, and *arms the conditions of the if_then_else arms
 * on the way down to it; by position, not by pointer: equal subterms
 * may be one shared node, and only this occurrence is decided. */
static Expr *replace_nth(Arena *a, Expr *e, int *k, Expr *with, Expr **sub, Expr **arms)
{
	if (*k < 0)
		return e;
	if (decidable(e) && (*k)-- == 0) {
		*sub = e;
		return with ? with : e;
	}
	int n = expr_nchildren(e);
	for (int i = 0; i < n && *k >= 0; i++) {
		Expr *c = expr_child(e, i);
		Expr *r = replace_nth(a, c, k, with, sub, arms);
		if (*k >= 0)
			continue;
		/* found below child i */
		if (e->kind == EX_SELECT && i == 1)
			*arms = ir_and(a, e->u.sel.cond, *arms);
		else if (e->kind == EX_SELECT && i == 2)
			*arms = ir_and(a, ir_not(a, e->u.sel.cond, nospan()), *arms);
		if (r == c)
			return e;
		Expr *x = arena_alloc(a, sizeof *x);
		*x = *e;
		switch (e->kind) {
		case EX_BIN: if (i == 0) x->u.bin.a = r; else x->u.bin.b = r; break;
		case EX_NOT: case EX_NEG: case EX_CAST: x->u.un.a = r; break;
		case EX_SELECT:
			if (i == 0) x->u.sel.cond = r;
			else if (i == 1) x->u.sel.a = r;
			else x->u.sel.b = r;
			break;
		case EX_LOAD: {
			Expr **idx = arena_alloc(a, sizeof *idx * (size_t)n);
			for (int j = 0; j < n; j++)
				idx[j] = j == i ? r : e->u.load.idx[j];
			x->u.load.idx = idx;
			break;
		}
		case EX_LET: if (i == 0) x->u.let.value = r; else x->u.let.body = r; break;
		case EX_CALL: x->u.call.args[i] = r; break;
		case EX_OPAQUE: { /* an argument decided; the call itself stays */
			Expr **args = arena_alloc(a, sizeof *args * (size_t)n);
			for (int j = 0; j < n; j++)
				args[j] = j == i ? r : e->u.opq.args[j];
			x->u.opq.args = args;
			break;
		}
		case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_COUNT: abort();
		}
		return x;
	}
	return e;
}

Expr *rw_bool_subterm_decided(Arena *a, Expr *e, int k, int choice, FloatMode fm, ArithLog *log)
{
	Expr *sub = rw_bool_subterm(e, k);
	if (!sub)
		return NULL;
	Expr *arms = NULL, *found = NULL;
	Expr *r = replace_nth(a, e, &k, rw_decision_value(a, sub, choice), &found, &arms);
	if (!r)
		return NULL;
	Bounds none = {0};
	Simplifier s = {a, &none, NULL, fm, false, log};
	return arith_simplify(&s, r);
}

/* The conditions of the if_then_else arms above the k-th subterm of e. */
static Expr *arms_of(Arena *a, Expr *e, int k)
{
	Expr *arms = NULL, *found = NULL;
	replace_nth(a, e, &k, NULL, &found, &arms);
	return arms;
}

static void vars_of(const Expr *e, int *n, const Var **vs, int cap, bool *over)
{
	if (e->kind == EX_VAR) {
		for (int i = 0; i < *n; i++)
			if (vs[i] == e->u.var)
				return;
		if (*n == cap) {
			*over = true;
			return;
		}
		vs[(*n)++] = e->u.var;
		return;
	}
	for (int i = 0; i < expr_nchildren(e); i++)
		vars_of(expr_child(e, i), n, vs, cap, over);
}

/* Every conjunct of h (not (x or y) is not x and not y) whose variables
 * are all among vs, into out. */
static void keep_local(Arena *a, Expr *h, int n, const Var **vs, Expr ***out, int *nout, int *cap)
{
	if (h->kind == EX_BIN && h->u.bin.op == OP_AND) {
		keep_local(a, h->u.bin.a, n, vs, out, nout, cap);
		keep_local(a, h->u.bin.b, n, vs, out, nout, cap);
		return;
	}
	if (h->kind == EX_NOT && h->u.un.a->kind == EX_BIN && h->u.un.a->u.bin.op == OP_OR) {
		keep_local(a, ir_not(a, h->u.un.a->u.bin.a, nospan()), n, vs, out, nout, cap);
		keep_local(a, ir_not(a, h->u.un.a->u.bin.b, nospan()), n, vs, out, nout, cap);
		return;
	}
	if (h->kind == EX_NOT && h->u.un.a->kind == EX_NOT) {
		keep_local(a, h->u.un.a->u.un.a, n, vs, out, nout, cap);
		return;
	}
	const Var *hv[64];
	int m = 0;
	bool over = false;
	vars_of(h, &m, hv, 64, &over);
	if (over)
		return;
	for (int i = 0; i < m; i++) {
		int j = 0;
		while (j < n && vs[j] != hv[i])
			j++;
		if (j == n)
			return;
	}
	VEC_RESERVE(a, *out, *nout, *cap);
	(*out)[(*nout)++] = h;
}

Obligation *rw_simplify_decide_obligation(RwCtx *c, const StmtCtx *ctx, Expr *old, Expr *new,
					  int k, int choice, const ArithLog *fold, bool whole,
					  bool transitive, const FactSet *fs)
{
	Arena *a = c->arena;
	Expr *sub = rw_bool_subterm(old, k);
	Expr *val = rw_decision_value(a, sub, choice);
	Expr *goal = whole ? ir_bin(a, OP_EQ, old, new, nospan())
			   : ir_bin(a, OP_EQ, sub, val, nospan());
	/* the arms of the if_then_else around sub: its value matters only
	 * where their conditions select it */
	Expr *arms = whole ? NULL : arms_of(a, old, k);
	if (arms)
		goal = ir_bin(a, OP_OR, ir_not(a, arms, nospan()), goal, nospan());
	/* the folds anywhere in the expression: under no arm */
	for (int i = 0; !whole && fold && i < fold->n; i++)
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, fold->from[i], fold->to[i], nospan()));
	char *p = print_expr_text(a, sub), *q = print_expr_text(a, val);
	Obligation *o = obligation_new(a, "simplify.decide",
				       arena_printf(a, "line %d: %s is %s here", ctx->stmt->span.line, p, q),
				       0, NULL, 0, NULL, goal, ctx->stmt->span);
	o->rewrite = c->desc;
	o->same_value = true;
	rw_add_context_hyps(c, o, ctx);
	an_facts_instantiate(a, fs, goal, o);
	/* a store that runs writes inside its buffer: otherwise the input
	 * has UB, and a correct rewrite owes it nothing (semantics.md 1) */
	const Stmt *st = ctx->stmt;
	if (st->kind == ST_STORE && !st->u.store.buf->layout && st->u.store.buf->ndim == st->u.store.nidx)
		for (int d = 0; d < st->u.store.nidx; d++) {
			Expr *x = st->u.store.idx[d];
			obligation_add_hyp(a, o, ir_and(a, ir_bin(a, OP_LE, ir_int(a, 0, x->dtype, nospan()), x, nospan()),
							ir_bin(a, OP_LT, x, st->u.store.buf->shape[d], nospan())));
		}
	if (!transitive) {
		const Var *vs[64];
		int n = 0;
		bool over = false;
		vars_of(goal, &n, vs, 64, &over);
		/* an if's whole condition is proven as TVM proves one: through
		 * the values of the let variables it names */
		if (ctx->stmt->kind == ST_IF && k == 0)
			for (int i = ctx->nlets - 1; i >= 0; i--)
				for (int j = 0; j < n; j++)
					if (vs[j] == ctx->lets[i]->u.let.var) {
						vars_of(ctx->lets[i]->u.let.value, &n, vs, 64, &over);
						break;
					}
		Expr **kept = NULL;
		int nk = 0, cap = 0;
		for (int i = 0; i < o->nhyps && !over; i++)
			keep_local(a, o->hyps[i], n, vs, &kept, &nk, &cap);
		o->hyps = kept;
		o->nhyps = nk;
	}
	return o;
}

/* ---------- and of ors ---------- */

#define CNF_MAX_CLAUSES 16
#define CNF_MAX_LITS 8

typedef struct Clause {
	int n;
	Expr *lit[CNF_MAX_LITS];
} Clause;

typedef struct Cnf {
	int n;
	Clause c[CNF_MAX_CLAUSES];
} Cnf;

static bool same_clause(const Clause *x, const Clause *y)
{
	if (x->n != y->n)
		return false;
	for (int i = 0; i < x->n; i++) {
		bool hit = false;
		for (int j = 0; j < y->n && !hit; j++)
			hit = ir_expr_equal(x->lit[i], y->lit[j]);
		if (!hit)
			return false;
	}
	return true;
}

static bool cnf_push(Cnf *f, const Clause *c)
{
	for (int i = 0; i < f->n; i++)
		if (same_clause(&f->c[i], c))
			return true; /* the same clause again */
	if (f->n == CNF_MAX_CLAUSES)
		return false;
	f->c[f->n++] = *c;
	return true;
}

/* e as clauses, in the order distribution gives them; false if too big. */
static bool cnf_of(const Expr *e, Cnf *out)
{
	out->n = 0;
	if (e->kind == EX_BIN && e->u.bin.op == OP_AND) {
		Cnf x, y;
		if (!cnf_of(e->u.bin.a, &x) || !cnf_of(e->u.bin.b, &y))
			return false;
		*out = x;
		for (int i = 0; i < y.n; i++)
			if (!cnf_push(out, &y.c[i]))
				return false;
		return true;
	}
	if (e->kind == EX_BIN && e->u.bin.op == OP_OR) {
		Cnf x, y;
		if (!cnf_of(e->u.bin.a, &x) || !cnf_of(e->u.bin.b, &y))
			return false;
		for (int i = 0; i < x.n; i++)
			for (int j = 0; j < y.n; j++) {
				Clause c = x.c[i];
				for (int k = 0; k < y.c[j].n; k++) {
					bool dup = false;
					for (int m = 0; m < c.n && !dup; m++)
						dup = ir_expr_equal(c.lit[m], y.c[j].lit[k]);
					if (dup)
						continue;
					if (c.n == CNF_MAX_LITS)
						return false;
					c.lit[c.n++] = y.c[j].lit[k];
				}
				if (!cnf_push(out, &c))
					return false;
			}
		return true;
	}
	out->n = 1;
	out->c[0].n = 1;
	out->c[0].lit[0] = (Expr *)e;
	return true;
}

Expr *rw_and_of_ors(Arena *a, Expr *e)
{
	if (e->dtype != DT_BOOL || e->kind != EX_BIN || !binop_is_logical(e->u.bin.op))
		return NULL;
	Cnf f;
	if (!cnf_of(e, &f))
		return NULL;
	Expr *r = NULL;
	for (int i = 0; i < f.n; i++) {
		Expr *c = NULL;
		for (int k = 0; k < f.c[i].n; k++)
			c = c ? ir_bin(a, OP_OR, c, f.c[i].lit[k], nospan()) : f.c[i].lit[k];
		r = r ? ir_bin(a, OP_AND, r, c, nospan()) : c;
	}
	return r && !ir_expr_equal(r, e) ? r : NULL;
}

/* ---------- cells a loop has not written yet ---------- */

typedef struct Unwritten {
	Arena *a;
	const Stmt *root; /* the function's body */
	const StmtCtx *at; /* the statement whose loads are checked */
	int lo;		   /* depth of the loop L in at->path */
	int nloads;
	Expr **loads;
	Expr *goal;
	Obligation *o;
	bool bad; /* a store whose index cannot be stated */
	/* the walk: the path to the current statement, the loops on it */
	int path[AN_MAX_DEPTH];
	int nloops;
	const Stmt *loops[AN_MAX_DEPTH];
	int loop_depth[AN_MAX_DEPTH];
	int nlets;
	const Var *lets[AN_MAX_DEPTH];
} Unwritten;

/* x or y, either NULL for none */
static Expr *or_opt(Arena *a, Expr *x, Expr *y)
{
	return !x ? y : !y ? x : ir_or(a, x, y);
}

static bool mentions_any(const Expr *e, int n, const Var *const *vs)
{
	if (e->kind == EX_VAR) {
		for (int i = 0; i < n; i++)
			if (vs[i] == e->u.var)
				return true;
		return false;
	}
	for (int i = 0; i < expr_nchildren(e); i++)
		if (mentions_any(expr_child(e, i), n, vs))
			return true;
	return false;
}

/* The conjunct for store w at depth `depth` (u->path[0..depth)): none of
 * its instances before the statement's evaluation writes a checked load's
 * cell. */
static void unwritten_store(Unwritten *u, const Stmt *w, int depth)
{
	Arena *a = u->a;
	const StmtCtx *sc = u->at;
	bool read = false;
	for (int j = 0; j < u->nloads && !read; j++)
		read = u->loads[j]->u.load.buf == w->u.store.buf;
	if (!read)
		return;
	/* a fresh variable per loop of w inside L */
	Var *from[AN_MAX_DEPTH];
	Expr *to[AN_MAX_DEPTH];
	int n = u->nloops;
	for (int i = 0; i < n; i++) {
		const Var *v = u->loops[i]->u.loop.var;
		from[i] = (Var *)v;
		to[i] = ir_varref(a, ir_var(a, arena_printf(a, "%s_before", v->name), v->dtype, nospan()),
				  nospan());
		obligation_add_var(a, u->o, to[i]->u.var);
	}
	for (int i = 0; i < n; i++) {
		const Stmt *l = u->loops[i];
		if (an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent))
			continue; /* no range: the property for every value, stronger */
		obligation_add_hyp(a, u->o, ir_subst_expr(a, an_loop_range(a, l, to[i]), n, from, to));
	}
	/* the common prefix of the two paths */
	int cp = 0;
	while (cp < depth && cp < sc->depth && u->path[cp] == sc->path[cp])
		cp++;
	/* the shared loops: those of w at a depth within the prefix */
	Expr *equal = NULL, *before = NULL;
	for (int i = 0; i < n; i++) {
		if (u->loop_depth[i] >= cp)
			break;
		Expr *cur = ir_varref(a, from[i], nospan());
		Expr *lt = ir_bin(a, OP_LT, to[i], cur, nospan());
		before = or_opt(a, before, ir_and(a, equal, lt));
		equal = ir_and(a, equal, ir_bin(a, OP_EQ, to[i], cur, nospan()));
	}
	/* the same iterations of the shared loops: w runs first only when the
	 * paths part in a sequence with w's item first */
	bool first = cp < depth && cp < sc->depth && u->path[cp] < sc->path[cp];
	if (first) {
		Stmt *common = an_stmt_at(u->root, u->path, cp);
		first = common && common->kind == ST_SEQ;
	}
	if (first)
		before = or_opt(a, before, equal ? equal : ir_bool(a, true));
	if (!before)
		return; /* no instance of w runs before */
	/* an index that reads a buffer or names a let of the loop means
	 * another cell at each instance: not stated */
	for (int i = 0; i < w->u.store.nidx; i++)
		if (an_expr_has_load(w->u.store.idx[i]) || mentions_any(w->u.store.idx[i], u->nlets, u->lets)) {
			u->bad = true;
			return;
		}
	for (int j = 0; j < u->nloads; j++) {
		const Expr *r = u->loads[j];
		if (r->u.load.buf != w->u.store.buf || r->u.load.nidx != w->u.store.nidx)
			continue;
		Expr *differ = NULL;
		for (int i = 0; i < w->u.store.nidx; i++)
			differ = or_opt(a, differ, ir_bin(a, OP_NE, ir_subst_expr(a, w->u.store.idx[i], n, from, to),
							 r->u.load.idx[i], nospan()));
		u->goal = ir_and(a, u->goal, or_opt(a, ir_not(a, before, nospan()), differ));
	}
}

static void unwritten_walk(Unwritten *u, const Stmt *s, int depth)
{
	if (u->bad)
		return;
	switch (s->kind) {
	case ST_STORE:
		unwritten_store(u, s, depth);
		return;
	case ST_FOR:
		u->loops[u->nloops] = s;
		u->loop_depth[u->nloops++] = depth;
		break;
	case ST_LET:
		u->lets[u->nlets++] = s->u.let.var;
		break;
	case ST_BLOCK: case ST_ALLOC:
		/* block iter vars are lets in the body; an allocation inside L
		 * is a buffer no load outside names */
		break;
	case ST_SEQ: case ST_IF: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		break;
	}
	if (depth >= AN_MAX_DEPTH - 1) {
		u->bad = true;
		return;
	}
	for (int i = 0; i < stmt_nchildren(s); i++) {
		u->path[depth] = i;
		unwritten_walk(u, stmt_child(s, i), depth + 1);
	}
	if (s->kind == ST_FOR)
		u->nloops--;
	if (s->kind == ST_LET)
		u->nlets--;
}

static bool collect_loads(const Expr *e, Arena *a, Expr ***out, int *n, int *cap)
{
	if (e->kind == EX_LOAD) {
		for (int i = 0; i < e->u.load.nidx; i++)
			if (an_expr_has_load(e->u.load.idx[i]))
				return false; /* an index read in a state we do not track */
		VEC_RESERVE(a, *out, *n, *cap);
		(*out)[(*n)++] = (Expr *)e;
		return true;
	}
	for (int i = 0; i < expr_nchildren(e); i++)
		if (!collect_loads(expr_child(e, i), a, out, n, cap))
			return false;
	return true;
}

int rw_loop_depth(const Stmt *root, const StmtCtx *ctx, const Stmt *loop)
{
	for (int d = 0; d < ctx->depth; d++)
		if (an_stmt_at(root, ctx->path, d) == loop)
			return d;
	return -1;
}

Obligation *rw_simplify_unwritten_obligation(RwCtx *c, const StmtCtx *ctx, const Obligation *uses)
{
	Arena *a = c->arena;
	const Stmt *root = c->func->body, *L = ctx->nloops ? ctx->loops[0] : NULL;
	int lo = L ? rw_loop_depth(root, ctx, L) : -1;
	if (lo < 0)
		return NULL;
	Unwritten u;
	memset(&u, 0, sizeof u);
	u.a = a;
	u.root = root;
	u.at = ctx;
	u.lo = lo;
	int cap = 0;
	if (!collect_loads(uses->goal, a, &u.loads, &u.nloads, &cap))
		return NULL;
	for (int i = 0; i < uses->nhyps; i++)
		if (!collect_loads(uses->hyps[i], a, &u.loads, &u.nloads, &cap))
			return NULL;
	u.o = obligation_new(a, "simplify.unwritten",
			     arena_printf(a, "line %d: no earlier instance of a store in the loop at line %d writes a cell the decision reads",
					  ctx->stmt->span.line, L->span.line),
			     0, NULL, 0, NULL, ir_bool(a, true), ctx->stmt->span);
	u.o->rewrite = c->desc;
	rw_add_context_hyps(c, u.o, ctx);
	memcpy(u.path, ctx->path, sizeof(int) * (size_t)lo);
	unwritten_walk(&u, L, lo);
	if (u.bad)
		return NULL;
	if (u.goal)
		u.o->goal = u.goal;
	return u.o;
}
