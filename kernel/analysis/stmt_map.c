/* kernel/analysis/stmt_map.c — bottom-up rebuilding of a statement tree
 * with leaves and loop kinds mapped by callbacks; a subtree whose children
 * did not change is returned as it is. */
#include "kernel/analysis/stmt_map.h"

static Stmt *map_seq(StmtMap *m, Stmt *s)
{
	int n = s->u.seq.n;
	Stmt **items = arena_alloc(m->a, sizeof(Stmt *) * (size_t)(n ? n : 1));
	bool changed = false;
	for (int i = 0; i < n; i++) {
		items[i] = an_map_stmt(m, s->u.seq.items[i]);
		changed |= items[i] != s->u.seq.items[i];
	}
	return changed ? ir_seq(m->a, n, items, s->span) : s;
}

static Stmt *map_loop(StmtMap *m, Stmt *s)
{
	Stmt *body = an_map_stmt(m, s->u.loop.body);
	ForKind kind = m->loop_kind ? m->loop_kind(m, s) : s->u.loop.kind;
	if (body == s->u.loop.body && kind == s->u.loop.kind)
		return s;
	return ir_for(m->a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, kind, body, s->span);
}

Stmt *an_map_stmt(StmtMap *m, Stmt *s)
{
	Stmt *x, *y;
	switch (s->kind) {
	case ST_SEQ:
		return map_seq(m, s);
	case ST_FOR:
		return map_loop(m, s);
	case ST_IF:
		x = an_map_stmt(m, s->u.cond.then_s);
		y = s->u.cond.else_s ? an_map_stmt(m, s->u.cond.else_s) : NULL;
		return x == s->u.cond.then_s && y == s->u.cond.else_s
			       ? s
			       : ir_if(m->a, s->u.cond.cond, x, y, s->span);
	case ST_ALLOC:
		if (!s->u.alloc.body)
			return s;
		x = an_map_stmt(m, s->u.alloc.body);
		return x == s->u.alloc.body ? s : ir_alloc(m->a, s->u.alloc.buf, x, s->span);
	case ST_BLOCK:
		x = an_map_stmt(m, s->u.block.body);
		return ir_block_with(m->a, s, x);
	case ST_LET:
		x = an_map_stmt(m, s->u.let.body);
		return x == s->u.let.body ? s
					  : ir_letstmt(m->a, s->u.let.var, s->u.let.value, x, s->span);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS:
		return m->leaf ? m->leaf(m, s) : s;
	case ST_COUNT:
		break;
	}
	return s;
}
