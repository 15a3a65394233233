/* kernel/equal.c — structural equality and hashing of IR. Bound names
 * (loop and let variables, alloc'ed buffers) are compared up to renaming
 * through a stack of pairs kept on the C stack. Free variables and
 * buffers are only themselves (ir_expr_equal, ir_stmt_equal: within one
 * program); comparing two functions (ir_func_equal, ir_module_equal)
 * matches free variables by name and dtype and free buffers (parameters)
 * by name, dtype and shape. Spans are ignored; float literals
 * are compared and hashed by their bits (so -0.0 != 0.0, NaN == same NaN). */
#include "kernel/ir.h"

#include <string.h>

/* One binder pair: x (left side) is bound where y (right side) is. */
typedef struct Pairing {
	const void *x, *y;
	const struct Pairing *next;
} Pairing;

typedef enum { BOUND_SAME, BOUND_DIFFERENT, FREE } BindState;

/* The bottom of the stack when two separately built functions are
 * compared (a module and its printed and re-parsed form): free variables
 * then match by name and dtype. Without it they match only themselves:
 * inside one program, two variables that share a name (a loop `i_o` and
 * the outer loop of a split `i`, a skew's new `z` and an old one) are
 * different variables, and a rewrite that took them for one changed what
 * the kernel computes. */
static const Pairing BY_NAME = {NULL, NULL, NULL};

static BindState bound_state(const Pairing *env, const void *x, const void *y)
{
	for (const Pairing *p = env; p; p = p->next)
		if (p != &BY_NAME && (p->x == x || p->y == y))
			return p->x == x && p->y == y ? BOUND_SAME : BOUND_DIFFERENT;
	return FREE;
}

static bool by_name(const Pairing *env)
{
	for (const Pairing *p = env; p; p = p->next)
		if (p == &BY_NAME)
			return true;
	return false;
}

static bool expr_eq(const Pairing *env, const Expr *x, const Expr *y);

static bool expr_list_eq(const Pairing *env, int n, Expr *const *xs,
			 Expr *const *ys)
{
	for (int i = 0; i < n; i++)
		if (!expr_eq(env, xs[i], ys[i]))
			return false;
	return true;
}

static bool var_eq(const Pairing *env, const Var *x, const Var *y)
{
	switch (bound_state(env, x, y)) {
	case BOUND_SAME: return true;
	case BOUND_DIFFERENT: return false;
	case FREE: break;
	}
	return x == y || (by_name(env) && x->dtype == y->dtype && strcmp(x->name, y->name) == 0);
}

static bool buffer_type_eq(const Pairing *env, const Buffer *x, const Buffer *y)
{
	if (x->dtype != y->dtype || x->ndim != y->ndim || x->scope != y->scope ||
	    x->naxis_separators != y->naxis_separators)
		return false;
	for (int i = 0; i < x->naxis_separators; i++)
		if (x->axis_separators[i] != y->axis_separators[i])
			return false;
	return expr_list_eq(env, x->ndim, x->shape, y->shape);
}

static bool buffer_eq(const Pairing *env, const Buffer *x, const Buffer *y)
{
	switch (bound_state(env, x, y)) {
	case BOUND_SAME: return true;
	case BOUND_DIFFERENT: return false;
	case FREE: break;
	}
	if (x == y)
		return true;
	return by_name(env) && strcmp(x->name, y->name) == 0 && buffer_type_eq(env, x, y);
}

static bool float_bits_eq(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static bool expr_eq(const Pairing *env, const Expr *x, const Expr *y)
{
	if (x == y && !env)
		return true;
	if (!x || !y)
		return x == y;
	if (x->kind != y->kind || x->dtype != y->dtype)
		return false;
	switch (x->kind) {
	case EX_INT: return x->u.ival == y->u.ival;
	case EX_FLOAT: return float_bits_eq(x->u.fval, y->u.fval);
	case EX_VAR: return var_eq(env, x->u.var, y->u.var);
	case EX_BIN:
		return x->u.bin.op == y->u.bin.op &&
		       expr_eq(env, x->u.bin.a, y->u.bin.a) &&
		       expr_eq(env, x->u.bin.b, y->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return expr_eq(env, x->u.un.a, y->u.un.a);
	case EX_SELECT:
		return expr_eq(env, x->u.sel.cond, y->u.sel.cond) &&
		       expr_eq(env, x->u.sel.a, y->u.sel.a) &&
		       expr_eq(env, x->u.sel.b, y->u.sel.b);
	case EX_LOAD:
		return x->u.load.nidx == y->u.load.nidx &&
		       buffer_eq(env, x->u.load.buf, y->u.load.buf) &&
		       expr_list_eq(env, x->u.load.nidx, x->u.load.idx,
				    y->u.load.idx);
	case EX_UNDEF: return true;
	case EX_CALL:
		return x->u.call.fn == y->u.call.fn &&
		       expr_list_eq(env, x->u.call.nargs, x->u.call.args,
				    y->u.call.args);
	case EX_OPAQUE:
		if (strcmp(x->u.opq.name, y->u.opq.name) != 0 ||
		    x->u.opq.nitems != y->u.opq.nitems || x->u.opq.nargs != y->u.opq.nargs)
			return false;
		for (int i = 0; i < x->u.opq.nitems; i++) {
			const OpqItem *a = &x->u.opq.items[i], *b = &y->u.opq.items[i];
			if (a->kind != b->kind)
				return false;
			switch (a->kind) {
			case OPQ_EXPR:
				if (a->expr != b->expr)
					return false;
				break;
			case OPQ_BUFFER: case OPQ_BUFFER_DATA:
				if (!buffer_eq(env, a->buf, b->buf))
					return false;
				break;
			case OPQ_STRING:
				if (strcmp(a->str, b->str) != 0)
					return false;
				break;
			}
		}
		return expr_list_eq(env, x->u.opq.nargs, x->u.opq.args, y->u.opq.args);
	case EX_COUNT: break;
	case EX_LET: {
		if (x->u.let.var->dtype != y->u.let.var->dtype ||
		    !expr_eq(env, x->u.let.value, y->u.let.value))
			return false;
		Pairing inner = {x->u.let.var, y->u.let.var, env};
		return expr_eq(&inner, x->u.let.body, y->u.let.body);
	}
	}
	return false;
}

/* Iter types and domains (over the enclosing scope); the declared regions
 * are declarations, not meaning, and the body carries the rest. */
static bool block_info_eq(const Pairing *env, const BlockInfo *x, const BlockInfo *y)
{
	if (!x || !y)
		return x == y;
	if (x->niters != y->niters || x->anonymous != y->anonymous ||
	    x->has_where != y->has_where || x->has_init != y->has_init)
		return false;
	for (int k = 0; k < x->niters; k++) {
		const BlockIter *a = &x->iters[k], *b = &y->iters[k];
		if (a->type != b->type || !expr_eq(env, a->dom_min, b->dom_min) ||
		    !expr_eq(env, a->dom_extent, b->dom_extent))
			return false;
	}
	return true;
}

/* A sequence of one statement means that statement. */
static const Stmt *unwrap_single(const Stmt *s)
{
	while (s && s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

static bool stmt_eq(const Pairing *env, const Stmt *x, const Stmt *y)
{
	x = unwrap_single(x);
	y = unwrap_single(y);
	/* an elif chain is walked in a loop, not by recursion */
	while (x && y && x->kind == ST_IF && y->kind == ST_IF && (x != y || env)) {
		if (!expr_eq(env, x->u.cond.cond, y->u.cond.cond) ||
		    !stmt_eq(env, x->u.cond.then_s, y->u.cond.then_s))
			return false;
		x = x->u.cond.else_s;
		y = y->u.cond.else_s;
	}
	if (x == y && !env)
		return true;
	if (!x || !y)
		return x == y;
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case ST_SEQ:
		if (x->u.seq.n != y->u.seq.n)
			return false;
		for (int i = 0; i < x->u.seq.n; i++)
			if (!stmt_eq(env, x->u.seq.items[i], y->u.seq.items[i]))
				return false;
		return true;
	case ST_FOR: {
		const Var *vx = x->u.loop.var, *vy = y->u.loop.var;
		if (x->u.loop.kind != y->u.loop.kind || vx->dtype != vy->dtype ||
		    !expr_eq(env, x->u.loop.min, y->u.loop.min) ||
		    !expr_eq(env, x->u.loop.extent, y->u.loop.extent))
			return false;
		Pairing inner = {vx, vy, env};
		return stmt_eq(&inner, x->u.loop.body, y->u.loop.body);
	}
	case ST_IF: /* only when x == y outside binders: handled above */
		return expr_eq(env, x->u.cond.cond, y->u.cond.cond) &&
		       stmt_eq(env, x->u.cond.then_s, y->u.cond.then_s) &&
		       stmt_eq(env, x->u.cond.else_s, y->u.cond.else_s);
	case ST_STORE:
		return x->u.store.nidx == y->u.store.nidx &&
		       buffer_eq(env, x->u.store.buf, y->u.store.buf) &&
		       expr_list_eq(env, x->u.store.nidx, x->u.store.idx,
				    y->u.store.idx) &&
		       expr_eq(env, x->u.store.value, y->u.store.value);
	case ST_ASSUME:
	case ST_EVAL: return expr_eq(env, x->u.expr, y->u.expr);
	case ST_ALLOC: {
		const Buffer *bx = x->u.alloc.buf, *by = y->u.alloc.buf;
		if (!buffer_type_eq(env, bx, by))
			return false;
		Pairing inner = {bx, by, env};
		return stmt_eq(&inner, x->u.alloc.body, y->u.alloc.body);
	}
	case ST_BLOCK:
		return strcmp(x->u.block.name, y->u.block.name) == 0 &&
		       block_info_eq(env, x->u.block.info, y->u.block.info) &&
		       stmt_eq(env, x->u.block.body, y->u.block.body);
	case ST_LET: {
		if (x->u.let.var->dtype != y->u.let.var->dtype ||
		    !expr_eq(env, x->u.let.value, y->u.let.value))
			return false;
		Pairing inner = {x->u.let.var, y->u.let.var, env};
		return stmt_eq(&inner, x->u.let.body, y->u.let.body);
	}
	case ST_PASS: return true;
	case ST_COUNT: break;
	}
	return false;
}

bool ir_expr_equal(const Expr *x, const Expr *y) { return expr_eq(NULL, x, y); }
bool ir_stmt_equal(const Stmt *x, const Stmt *y) { return stmt_eq(NULL, x, y); }

static bool param_eq(const Param *x, const Param *y)
{
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case PARAM_BUFFER: return buffer_eq(&BY_NAME, x->buf, y->buf);
	case PARAM_SCALAR: return var_eq(&BY_NAME, x->var, y->var);
	case PARAM_HANDLE:
		return var_eq(&BY_NAME, x->var, y->var) &&
		       (x->buf && y->buf ? buffer_eq(&BY_NAME, x->buf, y->buf)
					 : x->buf == y->buf);
	}
	return false;
}

bool ir_func_equal(const Func *x, const Func *y)
{
	if (x == y)
		return true;
	if (!x || !y || strcmp(x->name, y->name) != 0 || x->nparams != y->nparams)
		return false;
	for (int i = 0; i < x->nparams; i++)
		if (!param_eq(&x->params[i], &y->params[i]))
			return false;
	return stmt_eq(&BY_NAME, x->body, y->body);
}

bool ir_module_equal(const Module *x, const Module *y)
{
	if (x == y)
		return true;
	if (!x || !y || x->nfuncs != y->nfuncs)
		return false;
	if ((x->name == NULL) != (y->name == NULL) ||
	    (x->name && strcmp(x->name, y->name) != 0))
		return false;
	for (int i = 0; i < x->nfuncs; i++)
		if (!ir_func_equal(x->funcs[i], y->funcs[i]))
			return false;
	return true;
}

/* ---------- hashing ----------
 * Consistent with equality: a bound name hashes as its depth in the binder
 * stack (de Bruijn index), a free one by name and dtype. */

typedef struct Binders {
	const void *node;
	const struct Binders *next;
} Binders;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* 1-based depth of a bound node, 0 if free. */
static uint64_t binder_index(const Binders *env, const void *node)
{
	uint64_t k = 1;
	for (const Binders *b = env; b; b = b->next, k++)
		if (b->node == node)
			return k;
	return 0;
}

static uint64_t expr_hash(const Binders *env, const Expr *e);

static uint64_t var_hash(const Binders *env, const Var *v)
{
	uint64_t k = binder_index(env, v);
	if (k)
		return mix(0xb0, k);
	return mix(hash_str(v->name), (uint64_t)v->dtype);
}

static uint64_t buffer_type_hash(const Binders *env, const Buffer *b)
{
	uint64_t h = mix((uint64_t)b->dtype, (uint64_t)b->ndim);
	h = mix(h, (uint64_t)b->scope);
	for (int i = 0; i < b->ndim; i++)
		h = mix(h, expr_hash(env, b->shape[i]));
	return h;
}

static uint64_t buffer_hash(const Binders *env, const Buffer *b)
{
	uint64_t k = binder_index(env, b);
	if (k)
		return mix(0xbb, k);
	return mix(hash_str(b->name), buffer_type_hash(env, b));
}

static uint64_t expr_hash(const Binders *env, const Expr *e)
{
	if (!e)
		return 0x5eed;
	uint64_t h = mix((uint64_t)e->kind + 1, (uint64_t)e->dtype);
	switch (e->kind) {
	case EX_INT: return mix(h, (uint64_t)e->u.ival);
	case EX_FLOAT: {
		uint64_t bits;
		memcpy(&bits, &e->u.fval, sizeof bits);
		return mix(h, bits);
	}
	case EX_VAR: return mix(h, var_hash(env, e->u.var));
	case EX_BIN:
		h = mix(h, (uint64_t)e->u.bin.op);
		h = mix(h, expr_hash(env, e->u.bin.a));
		return mix(h, expr_hash(env, e->u.bin.b));
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return mix(h, expr_hash(env, e->u.un.a));
	case EX_SELECT:
		h = mix(h, expr_hash(env, e->u.sel.cond));
		h = mix(h, expr_hash(env, e->u.sel.a));
		return mix(h, expr_hash(env, e->u.sel.b));
	case EX_LOAD:
		h = mix(h, buffer_hash(env, e->u.load.buf));
		for (int i = 0; i < e->u.load.nidx; i++)
			h = mix(h, expr_hash(env, e->u.load.idx[i]));
		return h;
	case EX_UNDEF: return h;
	case EX_CALL:
		h = mix(h, (uint64_t)e->u.call.fn);
		for (int i = 0; i < e->u.call.nargs; i++)
			h = mix(h, expr_hash(env, e->u.call.args[i]));
		return h;
	case EX_OPAQUE:
		h = mix(h, hash_str(e->u.opq.name));
		for (int i = 0; i < e->u.opq.nitems; i++) {
			const OpqItem *it = &e->u.opq.items[i];
			h = mix(h, (uint64_t)it->kind);
			if (it->buf)
				h = mix(h, buffer_hash(env, it->buf));
			if (it->str)
				h = mix(h, hash_str(it->str));
		}
		for (int i = 0; i < e->u.opq.nargs; i++)
			h = mix(h, expr_hash(env, e->u.opq.args[i]));
		return h;
	case EX_COUNT: break;
	case EX_LET: {
		h = mix(h, expr_hash(env, e->u.let.value));
		h = mix(h, (uint64_t)e->u.let.var->dtype);
		Binders inner = {e->u.let.var, env};
		return mix(h, expr_hash(&inner, e->u.let.body));
	}
	}
	return h;
}

static uint64_t stmt_hash(const Binders *env, const Stmt *s)
{
	s = unwrap_single(s);
	uint64_t h = 0x1f;
	/* an elif chain is walked in a loop, not by recursion */
	while (s && s->kind == ST_IF) {
		h = mix(h, 0x57 + (uint64_t)ST_IF);
		h = mix(h, expr_hash(env, s->u.cond.cond));
		h = mix(h, stmt_hash(env, s->u.cond.then_s));
		s = s->u.cond.else_s;
	}
	if (!s)
		return mix(h, 0x5eed5);
	h = mix(h, 0x57 + (uint64_t)s->kind);
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			h = mix(h, stmt_hash(env, s->u.seq.items[i]));
		return mix(h, (uint64_t)s->u.seq.n);
	case ST_FOR: {
		h = mix(h, (uint64_t)s->u.loop.kind);
		h = mix(h, (uint64_t)s->u.loop.var->dtype);
		h = mix(h, expr_hash(env, s->u.loop.min));
		h = mix(h, expr_hash(env, s->u.loop.extent));
		Binders inner = {s->u.loop.var, env};
		return mix(h, stmt_hash(&inner, s->u.loop.body));
	}
	case ST_IF: return h; /* handled by the loop above */
	case ST_STORE:
		h = mix(h, buffer_hash(env, s->u.store.buf));
		for (int i = 0; i < s->u.store.nidx; i++)
			h = mix(h, expr_hash(env, s->u.store.idx[i]));
		return mix(h, expr_hash(env, s->u.store.value));
	case ST_ASSUME:
	case ST_EVAL: return mix(h, expr_hash(env, s->u.expr));
	case ST_ALLOC: {
		h = mix(h, buffer_type_hash(env, s->u.alloc.buf));
		Binders inner = {s->u.alloc.buf, env};
		return mix(h, stmt_hash(&inner, s->u.alloc.body));
	}
	case ST_BLOCK:
		h = mix(h, hash_str(s->u.block.name));
		return mix(h, stmt_hash(env, s->u.block.body));
	case ST_LET: {
		h = mix(h, expr_hash(env, s->u.let.value));
		h = mix(h, (uint64_t)s->u.let.var->dtype);
		Binders inner = {s->u.let.var, env};
		return mix(h, stmt_hash(&inner, s->u.let.body));
	}
	case ST_PASS: return h;
	case ST_COUNT: break;
	}
	return h;
}

uint64_t ir_expr_hash(const Expr *e) { return expr_hash(NULL, e); }
uint64_t ir_stmt_hash(const Stmt *s) { return stmt_hash(NULL, s); }
