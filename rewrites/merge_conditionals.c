/* rewrites/merge_conditionals.c — two adjacent ifs with identical or
 * complementary conditions become one (seed 000, "Enhancement -
 * Simplify"). The second condition is compared in the state after the
 * first if (rw_cond_after, a weakest precondition through its stores):
 * obligations merge_conditionals.identical / .complementary
 * (proofs/merge_conditionals.md). */
#include "rewrites/merge_conditionals.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/facts.h"
#include "kernel/print.h"
#include "rewrites/merge.h"

static Span nospan(void) { return (Span){0}; }

/* ---------- the condition in the state after a statement ---------- */

/* Larger conditions are not supported: each store can double the loads. */
#define MAX_AFTER_NODES 20000

typedef struct After {
	Arena *a;
	const char *why;
} After;

static int expr_nodes(const Expr *e)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return 1;
	case EX_LOAD: {
		int n = 1;
		for (int i = 0; i < e->u.load.nidx; i++)
			n += expr_nodes(e->u.load.idx[i]);
		return n;
	}
	case EX_BIN: return 1 + expr_nodes(e->u.bin.a) + expr_nodes(e->u.bin.b);
	case EX_NOT: case EX_NEG: case EX_CAST: return 1 + expr_nodes(e->u.un.a);
	case EX_SELECT:
		return 1 + expr_nodes(e->u.sel.cond) + expr_nodes(e->u.sel.a) + expr_nodes(e->u.sel.b);
	case EX_LET: return 1 + expr_nodes(e->u.let.value) + expr_nodes(e->u.let.body);
	case EX_CALL: {
		int n = 1;
		for (int i = 0; i < e->u.call.nargs; i++)
			n += expr_nodes(e->u.call.args[i]);
		return n;
	}
	case EX_OPAQUE: {
		int n = 1;
		for (int i = 0; i < e->u.opq.nargs; i++)
			n += expr_nodes(e->u.opq.args[i]);
		return n;
	}
	case EX_COUNT: break;
	}
	return 1;
}

/* e read after the store st, over the state before it: every load
 * X[idx] of the stored buffer becomes T.if_then_else(idx == e', v, X[idx])
 * with the load's own indices rewritten first (they are read after the
 * store too). The store's indices e' and value v are read before it. */
typedef struct Through {
	After *w;
	const Stmt *st;
} Through;

static Expr *through_store(After *w, Expr *e, const Stmt *st);

static Expr *through_child(void *ud, Expr *e)
{
	Through *t = ud;
	return through_store(t->w, e, t->st);
}

static Expr *through_store(After *w, Expr *e, const Stmt *st)
{
	Arena *a = w->a;
	Through t = {w, st};
	Expr *m = expr_map_children(a, e, through_child, &t);
	if (e->kind != EX_LOAD || e->u.load.buf != st->u.store.buf)
		return m;
	Expr *same = NULL;
	for (int i = 0; i < e->u.load.nidx && i < st->u.store.nidx; i++)
		same = ir_and(a, same, ir_bin(a, OP_EQ, m->u.load.idx[i], st->u.store.idx[i], nospan()));
	Expr *x = ir_select(a, same ? same : ir_bool(a, true), st->u.store.value, m, e->span);
	x->dtype = e->dtype;
	return x;
}

/* The weakest precondition of "e" over s, backwards through s. */
static Expr *after_stmt(After *w, const Stmt *s, Expr *e)
{
	Arena *a = w->a;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = s->u.seq.n - 1; i >= 0 && e; i--)
			e = after_stmt(w, s->u.seq.items[i], e);
		return e;
	case ST_STORE:
		e = through_store(w, e, s);
		if (expr_nodes(e) > MAX_AFTER_NODES) {
			w->why = "the second condition grows too large through the stores of the first if";
			return NULL;
		}
		return e;
	case ST_IF: {
		/* the branch condition is read before the branch: same state */
		Expr *t = after_stmt(w, s->u.cond.then_s, e);
		Expr *f = t && s->u.cond.else_s ? after_stmt(w, s->u.cond.else_s, e) : e;
		if (!t || !f)
			return NULL;
		if (t == e && f == e)
			return e;
		Expr *x = ir_select(a, s->u.cond.cond, t, f, s->span);
		x->dtype = e->dtype;
		return x;
	}
	case ST_FOR: {
		Buffer **bufs;
		int n = an_written_buffers(a, s, &bufs);
		if (an_expr_reads_any(e, n, bufs)) {
			w->why = arena_printf(a, "loop '%s' at line %d writes a buffer the second condition reads; the state after a loop is not modelled",
					      s->u.loop.var->name, s->span.line);
			return NULL;
		}
		return e;
	}
	case ST_LET: {
		/* the let's value is read before its body runs */
		Expr *b = after_stmt(w, s->u.let.body, e);
		if (!b || b == e)
			return b;
		Var *v = s->u.let.var;
		Expr *value = s->u.let.value;
		return ir_subst_expr(a, b, 1, &v, &value);
	}
	case ST_ALLOC: return after_stmt(w, s->u.alloc.body, e);
	case ST_BLOCK: return after_stmt(w, s->u.block.body, e);
	case ST_ASSUME: case ST_EVAL: case ST_PASS:
		return e;
	case ST_COUNT:
		break;
	}
	return e;
}

Expr *rw_cond_after(Arena *a, const Stmt *s, Expr *cond, const char **why)
{
	After w = {a, NULL};
	Expr *e = after_stmt(&w, s, cond);
	if (!e)
		*why = w.why;
	return e;
}

/* ---------- one pair ---------- */

static char *expr_text(Arena *a, const Expr *e)
{
	char *s = print_expr(e);
	char *r = arena_strdup(a, s);
	free(s);
	return r;
}

static Expr *implies(Arena *a, Expr *p, Expr *q)
{
	return ir_or(a, ir_not(a, p, nospan()), q);
}

static void pair_obligation(RwCtx *c, const StmtCtx *sc, const FactSet *fs, const char *kind,
			    const char *statement, Expr *goal, const Stmt *if2)
{
	Obligation *o = rw_obligation_at(c, &c->obs, sc, kind, statement, goal);
	an_facts_instantiate(c->arena, fs, goal, o);
	obligation_add_related(c->arena, o, if2->span);
}

/* The merged statement of the pair, with its obligations in c->obs. */
static RwStatus merge_pair(RwCtx *c, const StmtCtx *sc, const Stmt *if1, const Stmt *if2,
			   MergeCondKind mk, Stmt **out)
{
	Arena *a = c->arena;
	Expr *c1 = if1->u.cond.cond, *c2 = if2->u.cond.cond;
	const char *why = NULL;
	Expr *p = rw_cond_after(a, if1->u.cond.then_s, c2, &why);
	Expr *q = p && if1->u.cond.else_s ? rw_cond_after(a, if1->u.cond.else_s, c2, &why) : c2;
	if (!p || !q)
		return rw_fail(c, RW_UNSUPPORTED, if1->span, "merge_conditionals: %s", why);
	FactSet fs;
	memset(&fs, 0, sizeof fs);
	an_facts_at(a, c->func, sc, true, NULL, &fs);
	const char *t1 = expr_text(a, c1), *t2 = expr_text(a, c2);
	int l1 = if1->span.line, l2 = if2->span.line;
	Stmt *then_s, *else_s;
	Stmt *e1 = if1->u.cond.else_s, *e2 = if2->u.cond.else_s;
	if (mk == MERGE_IDENTICAL) {
		/* c1 -> P: where the first branch is taken, so is the second */
		pair_obligation(c, sc, &fs, "merge_conditionals.identical",
				arena_printf(a, "where %s (line %d) holds, %s (line %d) holds after the then part of the first if",
					     t1, l1, t2, l2),
				implies(a, c1, p), if2);
		/* not c1 -> not Q */
		pair_obligation(c, sc, &fs, "merge_conditionals.identical",
				arena_printf(a, "where %s (line %d) fails, %s (line %d) fails after the else part of the first if",
					     t1, l1, t2, l2),
				implies(a, ir_not(a, c1, nospan()), ir_not(a, q, nospan())), if2);
		then_s = rw_append_stmt(a, if1->u.cond.then_s, if2->u.cond.then_s);
		else_s = !e1 ? e2 : !e2 ? e1 : rw_append_stmt(a, e1, e2);
	} else {
		/* c1 -> not P */
		pair_obligation(c, sc, &fs, "merge_conditionals.complementary",
				arena_printf(a, "where %s (line %d) holds, %s (line %d) fails after the then part of the first if",
					     t1, l1, t2, l2),
				implies(a, c1, ir_not(a, p, nospan())), if2);
		/* not c1 -> Q */
		pair_obligation(c, sc, &fs, "merge_conditionals.complementary",
				arena_printf(a, "where %s (line %d) fails, %s (line %d) holds after the else part of the first if",
					     t1, l1, t2, l2),
				implies(a, ir_not(a, c1, nospan()), q), if2);
		then_s = e2 ? rw_append_stmt(a, if1->u.cond.then_s, e2) : if1->u.cond.then_s;
		else_s = !e1 ? if2->u.cond.then_s : rw_append_stmt(a, e1, if2->u.cond.then_s);
	}
	*out = ir_if(a, c1, then_s, else_s, if1->span);
	return RW_OK;
}

/* The function with the pair (items k, k+1 of the sequence at `seq`)
 * replaced by `merged`. */
static Func *with_merged(Arena *a, const Func *f, const StmtCtx *seq, int k, Stmt *merged)
{
	Stmt *parent = seq->stmt;
	int n = parent->u.seq.n;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)n);
	memcpy(items, parent->u.seq.items, sizeof(Stmt *) * (size_t)k);
	items[k] = merged;
	memcpy(items + k + 1, parent->u.seq.items + k + 2, sizeof(Stmt *) * (size_t)(n - k - 2));
	Stmt *np = n - 1 == 1 ? items[0] : ir_seq(a, n - 1, items, parent->span);
	return an_with_body(a, f, an_replace_at(a, f->body, seq->path, seq->depth, np));
}

/* ---------- candidates ---------- */

typedef struct Finder {
	const MergeCondPair *tried;
	int ntried;
	const StmtCtx *scope; /* the block, or NULL */
	bool found;
	StmtCtx seq;  /* the sequence holding the pair */
	int k;        /* the first if's index in it */
} Finder;

static bool inside(const StmtCtx *ctx, const StmtCtx *scope)
{
	if (!scope)
		return true;
	if (ctx->depth < scope->depth)
		return false;
	for (int i = 0; i < scope->depth; i++)
		if (ctx->path[i] != scope->path[i])
			return false;
	return true;
}

static void find_pair(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Finder *f = ud;
	if (f->found || s->kind != ST_SEQ || !inside(ctx, f->scope) || ctx->depth + 1 >= AN_MAX_DEPTH)
		return;
	for (int i = 0; i + 1 < s->u.seq.n; i++) {
		const Stmt *x = s->u.seq.items[i], *y = s->u.seq.items[i + 1];
		if (x->kind != ST_IF || y->kind != ST_IF)
			continue;
		bool seen = false;
		for (int j = 0; j < f->ntried && !seen; j++)
			seen = f->tried[j].first == x && f->tried[j].second == y;
		if (seen)
			continue;
		f->seq = *ctx;
		f->seq.stmt = s;
		f->k = i;
		f->found = true;
		return;
	}
}

int rw_merge_cond_orientations(const Expr *c1, const Expr *c2, MergeCondKind *out)
{
	if (ir_expr_equal(c1, c2)) {
		out[0] = MERGE_IDENTICAL;
		return 1;
	}
	if ((c2->kind == EX_NOT && ir_expr_equal(c2->u.un.a, c1)) ||
	    (c1->kind == EX_NOT && ir_expr_equal(c1->u.un.a, c2))) {
		out[0] = MERGE_COMPLEMENTARY;
		return 1;
	}
	out[0] = MERGE_IDENTICAL;
	out[1] = MERGE_COMPLEMENTARY;
	return 2;
}

bool rw_merge_cond_find_pair(Arena *a, const Func *f, const StmtCtx *scope,
			     const MergeCondPair *tried, int ntried, StmtCtx *seq, int *k)
{
	Finder fd;
	memset(&fd, 0, sizeof fd);
	fd.tried = tried;
	fd.ntried = ntried;
	fd.scope = scope;
	an_walk(a, f, find_pair, &fd);
	if (!fd.found)
		return false;
	*seq = fd.seq;
	*k = fd.k;
	return true;
}

RwStatus rw_merge_cond_pair(RwCtx *c, const StmtCtx *seq, int k, MergeCondKind mk)
{
	const Stmt *if1 = seq->stmt->u.seq.items[k];
	const Stmt *if2 = seq->stmt->u.seq.items[k + 1];
	StmtCtx sc = *seq;
	sc.path[sc.depth++] = k;
	sc.stmt = (Stmt *)if1;
	Stmt *merged = NULL;
	RwStatus st = merge_pair(c, &sc, if1, if2, mk, &merged);
	if (st == RW_OK)
		c->out = with_merged(c->arena, c->func, seq, k, merged);
	return st;
}
