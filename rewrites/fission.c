/* rewrites/fission.c — fission: the reverse of merge_adjacent_loops.
 * `for i: S1; S2` (S1 = the body's statements 0..K) -> `for i: S1;
 * for i': S2(i')`, both loops over the same range and of the same kind.
 * Obligation fission.no_conflict, the merge condition read backwards: for
 * all i > j in the range, S1(i) and S2(j) commute (proofs/merge.md). */
#include "rewrites/merge.h"

#include <stdlib.h>
#include <string.h>

static Span nospan(void) { return (Span){0}; }

static Stmt *items_stmt(Arena *a, int n, Stmt **items, Span sp)
{
	return n == 1 ? items[0] : ir_seq(a, n, items, sp);
}

RwStatus rw_fission(RwCtx *c, const char *loop, int64_t after)
{
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return st;
	return rw_fission_at(c, &sc, after, NULL);
}

RwStatus rw_fission_at(RwCtx *c, const StmtCtx *at, int64_t after, Stmt **second_loop)
{
	Arena *a = c->arena;
	StmtCtx sc = *at;
	Stmt *l = sc.stmt, *body = l->u.loop.body;
	const char *loop = l->u.loop.var->name;
	int n = body->kind == ST_SEQ ? body->u.seq.n : 1;
	if (n < 2)
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "fission: the body of loop '%s' is a single statement (an allocation or let holds the rest of its sequence)",
			       loop);
	if (after < 0 || after > n - 2)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "fission: after=%lld is not a statement of loop '%s' that has another after it (0 .. %d)",
			       (long long)after, loop, n - 2);
	/* the new loop reads the range again, after the first loop ran */
	if (an_range_reads_written(a, l, l))
		return rw_fail(c, RW_UNSUPPORTED, l->span,
			       "fission: the range of loop '%s' reads a buffer that the loop writes", loop);
	int k = (int)after + 1;
	Stmt *s1 = items_stmt(a, k, body->u.seq.items, body->span);
	Stmt *s2 = items_stmt(a, n - k, body->u.seq.items + k, body->span);
	/* fission.no_conflict: forall i, j in D: i > j -> S1(i) and S2(j)
	 * commute (the original is the merged form of the result). A
	 * parallel or vectorized label stays valid on both loops: each new
	 * instance's accesses are a subset of an old instance's. */
	rw_adjacent_commute_obligations(c, "fission.no_conflict", &sc, l, s1, l, s2);
	Var *v = l->u.loop.var, *v2 = an_fresh_var(a, v, "");
	Expr *v2ref = ir_varref(a, v2, nospan());
	/* loops of S2 that share their Var with a loop of S1 (copies that
	 * another rewrite made) get their own, so that loop handles stay
	 * unambiguous: a renaming, the program is the same */
	Stmt *s2own = rw_fresh_loop_vars(a, ir_subst_stmt(a, s2, 1, &v, &v2ref), s1, NULL);
	Stmt *pair[2] = {
		ir_for(a, v, l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s1, l->span),
		ir_for(a, v2, l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s2own, l->span),
	};
	if (second_loop)
		*second_loop = pair[1];
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth,
							 ir_seq(a, 2, pair, l->span)));
	return RW_OK;
}

/* ---------- fresh loop variables for a copy ---------- */

/* Whether a loop of s binds v. */
static bool binds_loop_var(const Stmt *s, const Var *v)
{
	if (!s)
		return false;
	if (s->kind == ST_FOR && s->u.loop.var == v)
		return true;
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		if (binds_loop_var(stmt_child(s, i), v))
			return true;
	return false;
}

/* "C_tail", or "C_tail_2", ...: a name `taken` says no block (or
 * buffer) of `root` has */
static const char *tail_name(Arena *a, const char *name, const Stmt *root,
			     bool (*taken)(const Stmt *root, const char *name))
{
	const char *n = arena_printf(a, "%s_tail", name);
	for (int k = 2; taken(root, n); k++)
		n = arena_printf(a, "%s_tail_%d", name, k);
	return n;
}

static bool block_taken(const Stmt *root, const char *name)
{
	return stmt_find_block(root, name) != NULL;
}

static bool loads_named(const Expr *e, void *name)
{
	return e->kind == EX_LOAD && strcmp(e->u.load.buf->name, name) == 0;
}

static bool stores_named(const Stmt *s, void *name)
{
	return s->kind == ST_STORE && strcmp(s->u.store.buf->name, name) == 0;
}

/* a buffer of that name is allocated or accessed in root (a parameter
 * the body never touches cannot be confused with the new buffer) */
static bool buffer_taken(const Stmt *root, const char *name)
{
	return stmt_find_alloc(root, name) || stmt_find(root, stores_named, (void *)name) ||
	       stmt_any_expr(root, loads_named, (void *)name);
}

/* An allocation of the copy, with blocks_of: a buffer of its own
 * ("tmp_tail"), the copy's accesses moved to it. The original and the
 * copy sharing one Buffer would be one buffer allocated twice: lifting
 * either allocation over the other breaks scoping. */
static Stmt *fresh_alloc(Arena *a, Stmt *s, const Stmt *shared_with, const Stmt *blocks_of)
{
	Buffer *buf = s->u.alloc.buf;
	Stmt *body = s->u.alloc.body;
	if (blocks_of) {
		buf = ir_buffer_copy(a, buf);
		buf->name = tail_name(a, buf->name, blocks_of, buffer_taken);
		if (body)
			body = ir_replace_buffer(a, body, s->u.alloc.buf, buf);
	}
	Stmt *b = rw_fresh_loop_vars(a, body, shared_with, blocks_of);
	return b == s->u.alloc.body && buf == s->u.alloc.buf ? s : ir_alloc(a, buf, b, s->span);
}

/* A renaming of bound variables: the program is the same. A loop of a
 * copy that shares its Var with a loop of the original would make a loop
 * handle (which names a loop by its Var) ambiguous; the copy's loops get
 * their own Vars (same names) and the handles keep the original's. */
Stmt *rw_fresh_loop_vars(Arena *a, Stmt *s, const Stmt *shared_with, const Stmt *blocks_of)
{
	if (!s)
		return NULL;
	switch (s->kind) {
	case ST_SEQ: {
		int n = s->u.seq.n;
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + 1));
		bool changed = false;
		for (int i = 0; i < n; i++) {
			items[i] = rw_fresh_loop_vars(a, s->u.seq.items[i], shared_with, blocks_of);
			changed |= items[i] != s->u.seq.items[i];
		}
		return changed ? ir_seq(a, n, items, s->span) : s;
	}
	case ST_FOR: {
		Var *v = s->u.loop.var;
		Stmt *body = s->u.loop.body;
		if (!shared_with || binds_loop_var(shared_with, v)) {
			Var *nv = an_fresh_var(a, v, "");
			Expr *ref = ir_varref(a, nv, v->span);
			body = ir_subst_stmt(a, body, 1, &v, &ref);
			v = nv;
		}
		Stmt *nb = rw_fresh_loop_vars(a, body, shared_with, blocks_of);
		if (v == s->u.loop.var && nb == s->u.loop.body)
			return s;
		return ir_for(a, v, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, nb, s->span);
	}
	case ST_IF: {
		Stmt *t = rw_fresh_loop_vars(a, s->u.cond.then_s, shared_with, blocks_of);
		Stmt *e = rw_fresh_loop_vars(a, s->u.cond.else_s, shared_with, blocks_of);
		if (t == s->u.cond.then_s && e == s->u.cond.else_s)
			return s;
		return ir_if(a, s->u.cond.cond, t, e, s->span);
	}
	case ST_ALLOC:
		return fresh_alloc(a, s, shared_with, blocks_of);
	case ST_BLOCK: {
		Stmt *b = rw_fresh_loop_vars(a, s->u.block.body, shared_with, blocks_of);
		if (!blocks_of)
			return ir_block_with(a, s, b);
		return ir_block_info(a, tail_name(a, s->u.block.name, blocks_of, block_taken), s->u.block.info, b,
				     s->span);
	}
	case ST_LET: {
		Stmt *b = rw_fresh_loop_vars(a, s->u.let.body, shared_with, blocks_of);
		return b == s->u.let.body ? s : ir_letstmt(a, s->u.let.var, s->u.let.value, b, s->span);
	}
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS:
		return s;
	case ST_COUNT:
		break;
	}
	abort();
}
