/* kernel/visit.c — child iteration over the IR: the operands of each
 * expression kind and the sub-statements and expressions of each
 * statement kind, in evaluation order. Every switch names every kind, so
 * a new kind fails to compile (-Wswitch-enum) until it is added here. */
#include "kernel/ir.h"

#include <stdlib.h>
#include <string.h>

int expr_nchildren(const Expr *e)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: return 0;
	case EX_BIN: return 2;
	case EX_NOT: case EX_NEG: case EX_CAST: return 1;
	case EX_SELECT: return 3;
	case EX_LOAD: return e->u.load.nidx;
	case EX_LET: return 2;
	case EX_CALL: return e->u.call.nargs;
	case EX_OPAQUE: return e->u.opq.nargs;
	case EX_COUNT: break;
	}
	abort();
}

Expr *expr_child(const Expr *e, int i)
{
	switch (e->kind) {
	case EX_BIN: return i == 0 ? e->u.bin.a : e->u.bin.b;
	case EX_NOT: case EX_NEG: case EX_CAST: return e->u.un.a;
	case EX_SELECT: return i == 0 ? e->u.sel.cond : i == 1 ? e->u.sel.a : e->u.sel.b;
	case EX_LOAD: return e->u.load.idx[i];
	case EX_LET: return i == 0 ? e->u.let.value : e->u.let.body;
	case EX_CALL: return e->u.call.args[i];
	case EX_OPAQUE: return e->u.opq.args[i];
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_COUNT: break;
	}
	abort();
}

int stmt_nexprs(const Stmt *s)
{
	switch (s->kind) {
	case ST_FOR: return 2;
	case ST_IF: return 1;
	case ST_STORE: return s->u.store.nidx + 1;
	case ST_ASSUME: case ST_EVAL: return 1;
	case ST_LET: return 1;
	case ST_SEQ: case ST_ALLOC: case ST_BLOCK: case ST_PASS: return 0;
	case ST_COUNT: break;
	}
	abort();
}

Expr *stmt_expr(const Stmt *s, int i)
{
	switch (s->kind) {
	case ST_FOR: return i == 0 ? s->u.loop.min : s->u.loop.extent;
	case ST_IF: return s->u.cond.cond;
	case ST_STORE: return i < s->u.store.nidx ? s->u.store.idx[i] : s->u.store.value;
	case ST_ASSUME: case ST_EVAL: return s->u.expr;
	case ST_LET: return s->u.let.value;
	case ST_SEQ: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT: break;
	}
	abort();
}

bool expr_any(const Expr *e, bool (*pred)(const Expr *e, void *ud), void *ud)
{
	if (pred(e, ud))
		return true;
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		if (expr_any(expr_child(e, i), pred, ud))
			return true;
	return false;
}

bool stmt_any_expr(const Stmt *s, bool (*pred)(const Expr *e, void *ud), void *ud)
{
	int n = stmt_nexprs(s);
	for (int i = 0; i < n; i++)
		if (expr_any(stmt_expr(s, i), pred, ud))
			return true;
	if (s->kind == ST_ALLOC)
		for (int i = 0; i < s->u.alloc.buf->ndim; i++)
			if (expr_any(s->u.alloc.buf->shape[i], pred, ud))
				return true;
	n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		if (stmt_any_expr(stmt_child(s, i), pred, ud))
			return true;
	return false;
}

Expr *expr_map_children(Arena *a, Expr *e, Expr *(*fn)(void *ud, Expr *x), void *ud)
{
	int n = expr_nchildren(e);
	if (n == 0)
		return e;
	Expr *kids[3];
	Expr **k = e->kind == EX_LOAD || e->kind == EX_OPAQUE ? arena_alloc(a, sizeof *k * (size_t)n) : kids;
	bool changed = false;
	for (int i = 0; i < n; i++) {
		k[i] = fn(ud, expr_child(e, i));
		changed |= k[i] != expr_child(e, i);
	}
	if (!changed)
		return e;
	Expr *x = arena_alloc(a, sizeof *x);
	*x = *e;
	switch (e->kind) {
	case EX_BIN: x->u.bin.a = k[0]; x->u.bin.b = k[1]; break;
	case EX_NOT: case EX_NEG: case EX_CAST: x->u.un.a = k[0]; break;
	case EX_SELECT: x->u.sel.cond = k[0]; x->u.sel.a = k[1]; x->u.sel.b = k[2]; break;
	case EX_LOAD: x->u.load.idx = k; break;
	case EX_LET: x->u.let.value = k[0]; x->u.let.body = k[1]; break;
	case EX_CALL:
		for (int i = 0; i < n; i++)
			x->u.call.args[i] = k[i];
		break;
	case EX_OPAQUE: x->u.opq.args = k; break;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_COUNT: abort();
	}
	return x;
}

const Stmt *stmt_find(const Stmt *s, bool (*pred)(const Stmt *s, void *ud), void *ud)
{
	if (pred(s, ud))
		return s;
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++) {
		const Stmt *hit = stmt_find(stmt_child(s, i), pred, ud);
		if (hit)
			return hit;
	}
	return NULL;
}

static bool allocs_named(const Stmt *s, void *name)
{
	return s->kind == ST_ALLOC && strcmp(s->u.alloc.buf->name, name) == 0;
}

Buffer *stmt_find_alloc(const Stmt *s, const char *name)
{
	const Stmt *a = s ? stmt_find(s, allocs_named, (void *)name) : NULL;
	return a ? a->u.alloc.buf : NULL;
}

static bool block_named(const Stmt *s, void *name)
{
	return s->kind == ST_BLOCK && strcmp(s->u.block.name, name) == 0;
}

Stmt *stmt_find_block(const Stmt *s, const char *name)
{
	/* the IR is immutable: the caller's const is only its intent */
	return (Stmt *)stmt_find(s, block_named, (void *)name);
}

void expr_each_post(const Expr *e, void (*fn)(const Expr *e, void *ud), void *ud)
{
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		expr_each_post(expr_child(e, i), fn, ud);
	fn(e, ud);
}

/* ---------- the depth limits ---------- */

/* Each node is visited once, and the recursion stops at `left` levels. */
static bool expr_deeper(const Expr *e, int left, Span *where)
{
	if (left <= 0) {
		*where = e->span;
		return true;
	}
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		if (expr_deeper(expr_child(e, i), left - 1, where)) {
			if (!where->src)
				*where = e->span;
			return true;
		}
	return false;
}

static const char *stmt_deeper(const Stmt *s, int left, Span *where)
{
	if (left <= 0) {
		*where = s->span;
		return "statements nested more than " IR_DEPTH_TEXT(IR_MAX_STMT_DEPTH)
		       " levels deep (each assignment nests the statements after it)";
	}
	int ne = stmt_nexprs(s);
	for (int i = 0; i < ne; i++) {
		const Expr *e = stmt_expr(s, i);
		if (e && expr_deeper(e, IR_MAX_EXPR_DEPTH, where)) {
			if (!where->src)
				*where = s->span;
			return "an expression nested more than " IR_DEPTH_TEXT(IR_MAX_EXPR_DEPTH)
			       " levels deep (a chain of operators counts one level per operator)";
		}
	}
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++) {
		const Stmt *c = stmt_child(s, i);
		const char *why = c ? stmt_deeper(c, left - 1, where) : NULL;
		if (why) {
			if (!where->src)
				*where = s->span;
			return why;
		}
	}
	return NULL;
}

const char *ir_func_too_deep(const Func *f, Span *where)
{
	*where = (Span){0};
	return f && f->body ? stmt_deeper(f->body, IR_MAX_STMT_DEPTH, where) : NULL;
}
