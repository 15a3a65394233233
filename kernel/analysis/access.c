/* kernel/analysis/access.c — the accesses of one statement instance
 * (buffer, read/write, indices, guard, inner loop variables, reduction
 * updates), with loads of buffers written elsewhere havocked so that an
 * obligation built from them stays sound. */
#include "kernel/analysis/access.h"

#include "kernel/analysis/affine.h"

#include <stdlib.h>
#include <string.h>

typedef struct Collector {
	Arena *arena;
	AccessList *out;
	int nsub, capsub;
	Var **from;
	Expr **to;
	int nvol;
	Buffer **vol;
	int nlocal;
	Buffer *local[AN_MAX_DEPTH]; /* allocated inside the instance */
	int nscope;
	Var *scope[AN_MAX_DEPTH]; /* fresh loop/let variables around */
} Collector;

static void snapshot_scope(Collector *k, Access *x)
{
	x->nscope = k->nscope;
	x->scope = arena_alloc(k->arena, sizeof(Var *) * (size_t)(k->nscope + 1));
	if (k->nscope)
		memcpy(x->scope, k->scope, sizeof(Var *) * (size_t)k->nscope);
}

static void push_sub(Collector *k, Var *v, Expr *e)
{
	if (k->nsub == k->capsub) {
		int cap = k->capsub ? k->capsub * 2 : 16;
		Var **f = arena_alloc(k->arena, sizeof(Var *) * (size_t)cap);
		Expr **t = arena_alloc(k->arena, sizeof(Expr *) * (size_t)cap);
		if (k->nsub) {
			memcpy(f, k->from, sizeof(Var *) * (size_t)k->nsub);
			memcpy(t, k->to, sizeof(Expr *) * (size_t)k->nsub);
		}
		k->from = f;
		k->to = t;
		k->capsub = cap;
	}
	k->from[k->nsub] = v;
	k->to[k->nsub] = e;
	k->nsub++;
}

static bool is_volatile(const Collector *k, const Buffer *b)
{
	for (int i = 0; i < k->nvol; i++)
		if (k->vol[i] == b)
			return true;
	return false;
}

static bool is_local(const Collector *k, const Buffer *b)
{
	for (int i = 0; i < k->nlocal; i++)
		if (k->local[i] == b)
			return true;
	return false;
}

/* Loads of buffers written in the region read a state we do not model:
 * replace them by fresh unconstrained values. */
static Expr *unvolatile(Collector *k, Expr *e);

static Expr *unvolatile_child(void *k, Expr *e)
{
	return unvolatile(k, e);
}

static Expr *unvolatile(Collector *k, Expr *e)
{
	if (e->kind == EX_LOAD && (is_volatile(k, e->u.load.buf) || is_local(k, e->u.load.buf)))
		return ir_undef(k->arena, e->dtype, e->span);
	/* an opaque call's value is unknown, whatever its arguments */
	if (e->kind == EX_OPAQUE)
		return ir_undef(k->arena, e->dtype, e->span);
	return expr_map_children(k->arena, e, unvolatile_child, k);
}

static Expr *inst(Collector *k, Expr *e)
{
	return unvolatile(k, ir_subst_expr(k->arena, e, k->nsub, k->from, k->to));
}

static Access *push_access(Collector *k)
{
	AccessList *l = k->out;
	VEC_RESERVE(k->arena, l->items, l->n, l->cap);
	Access *x = &l->items[l->n++];
	memset(x, 0, sizeof *x);
	return x;
}

static void push_hyp(Collector *k, Expr *h)
{
	AccessList *l = k->out;
	Expr **hyps = arena_alloc(k->arena, sizeof(Expr *) * (size_t)(l->nhyps + 1));
	if (l->nhyps)
		memcpy(hyps, l->hyps, sizeof(Expr *) * (size_t)l->nhyps);
	hyps[l->nhyps++] = h;
	l->hyps = hyps;
}

static void push_var(Collector *k, Var *v)
{
	AccessList *l = k->out;
	Var **vars = arena_alloc(k->arena, sizeof(Var *) * (size_t)(l->nvars + 1));
	if (l->nvars)
		memcpy(vars, l->vars, sizeof(Var *) * (size_t)l->nvars);
	vars[l->nvars++] = v;
	l->vars = vars;
}

static Expr **inst_list(Collector *k, int n, Expr **xs)
{
	Expr **out = arena_alloc(k->arena, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		out[i] = inst(k, xs[i]);
	return out;
}

/* An opaque call names buffer b (semantics.md 9): it may read and write
 * any cell of it, with any value. Recorded as a read and a write of one
 * cell whose indices are fresh unconstrained variables: any cell, so
 * every query that asks whether it meets another access finds that it
 * may. (What it does to the other cells is no part of this list: the
 * schedule refuses every primitive that reasons about accesses on a
 * function with an opaque call, see sched_opaque_refusal.) */
static void opaque_access(Collector *k, const Expr *call, Buffer *b, Expr *guard,
			  const Stmt *store)
{
	if (is_local(k, b))
		return;
	for (int w = 0; w < 2; w++) {
		Expr **idx = arena_alloc(k->arena, sizeof(Expr *) * (size_t)(b->ndim + 1));
		for (int d = 0; d < b->ndim; d++) {
			Var *v = ir_var(k->arena, arena_printf(k->arena, "%s_any%d", b->name, d),
					b->ndim && b->shape[d] ? b->shape[d]->dtype : DT_INT32, call->span);
			push_var(k, v);
			idx[d] = ir_varref(k->arena, v, call->span);
		}
		Access *x = push_access(k);
		x->buf = b;
		x->is_write = w;
		x->nidx = b->ndim;
		x->idx = idx;
		x->guard = guard;
		x->span = call->span;
		x->store = store;
		if (w)
			x->value = ir_undef(k->arena, b->dtype, call->span);
		snapshot_scope(k, x);
	}
}

static void opaque_loaded(Collector *k, const Expr *call, const Expr *e, Expr *guard,
			  const Stmt *store)
{
	if (e->kind == EX_LOAD)
		opaque_access(k, call, e->u.load.buf, guard, store);
	for (int i = 0; i < expr_nchildren(e); i++)
		opaque_loaded(k, call, expr_child(e, i), guard, store);
}

/* Reads in an expression (original, uninstantiated), under guard. */
static void reads_of(Collector *k, Expr *e, Expr *guard, const Stmt *store)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD: {
		for (int i = 0; i < e->u.load.nidx; i++)
			reads_of(k, e->u.load.idx[i], guard, store);
		if (is_local(k, e->u.load.buf))
			return;
		Access *x = push_access(k);
		x->buf = e->u.load.buf;
		x->is_write = false;
		x->nidx = e->u.load.nidx;
		x->idx = inst_list(k, e->u.load.nidx, e->u.load.idx);
		x->guard = guard;
		x->span = e->span;
		x->load = e;
		x->store = store;
		snapshot_scope(k, x);
		return;
	}
	case EX_BIN:
		reads_of(k, e->u.bin.a, guard, store);
		reads_of(k, e->u.bin.b, guard, store);
		return;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		reads_of(k, e->u.un.a, guard, store);
		return;
	case EX_SELECT: {
		/* the interpreter evaluates the condition, then only the arm it
		 * picks (semantics.md section 1): a read in the first arm happens
		 * only where the condition holds, one in the second only where it
		 * does not. The condition is instantiated like every guard (loads
		 * of volatile buffers become fresh values: the read may happen
		 * for either truth value, an over-approximation). */
		reads_of(k, e->u.sel.cond, guard, store);
		Expr *cnd = inst(k, e->u.sel.cond);
		reads_of(k, e->u.sel.a, ir_and(k->arena, guard, cnd), store);
		reads_of(k, e->u.sel.b, ir_and(k->arena, guard, ir_not(k->arena, cnd, (Span){0})),
			 store);
		return;
	}
	case EX_LET:
		reads_of(k, e->u.let.value, guard, store);
		reads_of(k, e->u.let.body, guard, store);
		return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			reads_of(k, e->u.call.args[i], guard, store);
		return;
	case EX_OPAQUE:
		/* its arguments are evaluated; every buffer it names, by
		 * pointer or through a load in an argument (T.address_of(B[i])),
		 * may be read and written anywhere */
		for (int i = 0; i < e->u.opq.nargs; i++)
			reads_of(k, e->u.opq.args[i], guard, store);
		for (int i = 0; i < e->u.opq.nitems; i++)
			if (e->u.opq.items[i].buf)
				opaque_access(k, e, e->u.opq.items[i].buf, guard, store);
		for (int i = 0; i < e->u.opq.nargs; i++)
			opaque_loaded(k, e, e->u.opq.args[i], guard, store);
		return;
	case EX_COUNT:
		break;
	}
	abort();
}

static bool expr_reads_buffer(const Expr *e, const Buffer *b)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return false;
	case EX_LOAD:
		if (e->u.load.buf == b)
			return true;
		for (int i = 0; i < e->u.load.nidx; i++)
			if (expr_reads_buffer(e->u.load.idx[i], b))
				return true;
		return false;
	case EX_BIN:
		return expr_reads_buffer(e->u.bin.a, b) || expr_reads_buffer(e->u.bin.b, b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return expr_reads_buffer(e->u.un.a, b);
	case EX_SELECT:
		return expr_reads_buffer(e->u.sel.cond, b) ||
		       expr_reads_buffer(e->u.sel.a, b) || expr_reads_buffer(e->u.sel.b, b);
	case EX_LET:
		return expr_reads_buffer(e->u.let.value, b) ||
		       expr_reads_buffer(e->u.let.body, b);
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (expr_reads_buffer(e->u.call.args[i], b))
				return true;
		return false;
	case EX_OPAQUE:
		/* may read any buffer it names */
		for (int i = 0; i < e->u.opq.nitems; i++)
			if (e->u.opq.items[i].buf == b)
				return true;
		for (int i = 0; i < e->u.opq.nargs; i++)
			if (expr_reads_buffer(e->u.opq.args[i], b))
				return true;
		return false;
	case EX_COUNT:
		break;
	}
	abort();
}

/* X[e] = X[e] op v (or v op X[e]) with op associative and commutative
 * and v not reading X: the load of X[e] in the value, or NULL. */
static const Expr *reduction_load(const Stmt *s, BinOp *op)
{
	const Expr *v = s->u.store.value;
	if (v->kind != EX_BIN)
		return NULL;
	switch (v->u.bin.op) {
	case OP_ADD: case OP_MUL: case OP_MIN: case OP_MAX:
		break;
	case OP_AND: case OP_OR:
		if (v->dtype != DT_BOOL)
			return NULL;
		break;
	case OP_SHL: case OP_SHR: case OP_SUB: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT:
	case OP_GE: case OP_COUNT:
		return NULL;
	}
	for (int side = 0; side < 2; side++) {
		const Expr *x = side ? v->u.bin.b : v->u.bin.a;
		const Expr *rest = side ? v->u.bin.a : v->u.bin.b;
		if (x->kind != EX_LOAD || x->u.load.buf != s->u.store.buf ||
		    x->u.load.nidx != s->u.store.nidx)
			continue;
		bool same = true;
		for (int i = 0; i < x->u.load.nidx && same; i++)
			same = ir_expr_equal(x->u.load.idx[i], s->u.store.idx[i]);
		if (same && !expr_reads_buffer(rest, s->u.store.buf)) {
			*op = v->u.bin.op;
			return x;
		}
	}
	return NULL;
}

static void collect(Collector *k, const Stmt *s, Expr *guard)
{
	Arena *a = k->arena;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			collect(k, s->u.seq.items[i], guard);
		return;
	case ST_FOR: {
		reads_of(k, s->u.loop.min, guard, NULL);
		reads_of(k, s->u.loop.extent, guard, NULL);
		Var *v = an_fresh_var(a, s->u.loop.var, "'");
		Expr *lo = inst(k, s->u.loop.min), *ext = inst(k, s->u.loop.extent);
		Expr *vr = ir_varref(a, v, (Span){0});
		push_var(k, v);
		int mark = k->nsub;
		push_sub(k, s->u.loop.var, vr);
		Expr *range = ir_and(a, ir_bin(a, OP_LE, lo, vr, (Span){0}),
				     ir_bin(a, OP_LT, vr, ir_add(a, lo, ext), (Span){0}));
		/* the range is part of the guard: the access happens only for
		 * iterations that exist */
		int depth = k->nscope;
		if (depth < AN_MAX_DEPTH)
			k->scope[k->nscope++] = v;
		collect(k, s->u.loop.body, ir_and(a, guard, range));
		k->nscope = depth;
		k->nsub = mark;
		return;
	}
	case ST_IF: {
		reads_of(k, s->u.cond.cond, guard, NULL);
		Expr *cnd = inst(k, s->u.cond.cond);
		collect(k, s->u.cond.then_s, ir_and(a, guard, cnd));
		if (s->u.cond.else_s)
			collect(k, s->u.cond.else_s,
				ir_and(a, guard, ir_not(a, cnd, (Span){0})));
		return;
	}
	case ST_STORE: {
		int first = k->out->n;
		for (int i = 0; i < s->u.store.nidx; i++)
			reads_of(k, s->u.store.idx[i], guard, s);
		reads_of(k, s->u.store.value, guard, s);
		if (is_local(k, s->u.store.buf))
			return;
		Access *w = push_access(k);
		w->buf = s->u.store.buf;
		w->is_write = true;
		w->nidx = s->u.store.nidx;
		w->idx = inst_list(k, s->u.store.nidx, s->u.store.idx);
		w->guard = guard;
		w->span = s->span;
		w->store = s;
		w->value = ir_subst_expr(k->arena, s->u.store.value, k->nsub, k->from, k->to);
		snapshot_scope(k, w);
		BinOp op;
		const Expr *rl = reduction_load(s, &op);
		if (!rl)
			return;
		w->in_reduction = true;
		w->red_op = op;
		/* the matching load among the reads just collected */
		for (int i = first; i < k->out->n - 1; i++) {
			Access *r = &k->out->items[i];
			if (r->load == rl) {
				r->in_reduction = true;
				r->red_op = op;
			}
		}
		return;
	}
	case ST_ASSUME:
	case ST_EVAL:
		reads_of(k, s->u.expr, guard, NULL);
		return;
	case ST_ALLOC:
		/* the shape is read when the allocation runs, outside its scope */
		for (int i = 0; i < s->u.alloc.buf->ndim; i++)
			reads_of(k, s->u.alloc.buf->shape[i], guard, NULL);
		if (k->nlocal < AN_MAX_DEPTH)
			k->local[k->nlocal++] = s->u.alloc.buf;
		collect(k, s->u.alloc.body, guard);
		return;
	case ST_BLOCK:
		collect(k, s->u.block.body, guard);
		return;
	case ST_LET: {
		reads_of(k, s->u.let.value, guard, NULL);
		Var *v = an_fresh_var(a, s->u.let.var, "'");
		Expr *vr = ir_varref(a, v, (Span){0});
		push_var(k, v);
		push_hyp(k, ir_bin(a, OP_EQ, vr, inst(k, s->u.let.value), (Span){0}));
		int mark = k->nsub;
		push_sub(k, s->u.let.var, vr);
		int depth = k->nscope;
		if (depth < AN_MAX_DEPTH)
			k->scope[k->nscope++] = v;
		collect(k, s->u.let.body, guard);
		k->nscope = depth;
		k->nsub = mark;
		return;
	}
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

void an_collect_accesses(Arena *a, const Stmt *s, int n, Var **from, Expr **to,
			 int nvolatile, Buffer **volatile_bufs, AccessList *out)
{
	Collector k;
	memset(&k, 0, sizeof k);
	k.arena = a;
	k.out = out;
	k.nvol = nvolatile;
	k.vol = volatile_bufs;
	for (int i = 0; i < n; i++)
		push_sub(&k, from[i], to[i]);
	collect(&k, s, ir_bool(a, true));
}

Expr *an_havoc_loads(Arena *a, Expr *e, int nbufs, Buffer **bufs)
{
	if (!e || !nbufs)
		return e;
	Collector k;
	memset(&k, 0, sizeof k);
	k.arena = a;
	k.nvol = nbufs;
	k.vol = bufs;
	return unvolatile(&k, e);
}

void an_name_instance(Arena *a, AccessList *l, const char *suffix)
{
	for (int i = 0; i < l->nvars; i++) {
		const char *name = l->vars[i]->name;
		size_t n = strlen(name);
		if (n && name[n - 1] == '\'')
			n--;
		l->vars[i]->name = arena_printf(a, "%.*s%s", (int)n, name, suffix);
	}
}

/* ---------- distinct cells ---------- */

static bool index_differs(Expr *x, Expr *y)
{
	if (x->dtype != y->dtype || !dtype_is_int(x->dtype) || an_expr_has_load(x) ||
	    an_expr_has_load(y))
		return false;
	Affine d = affine_const(0, AFFINE_MAX_TERMS);
	if (!affine_add_expr(&d, x, 1, NULL) || !affine_add_expr(&d, y, -1, NULL) || d.bad)
		return false;
	int64_t k;
	if (!affine_is_const(&d, &k) || k == 0)
		return false;
	int bits = dtype_bits(x->dtype);
	int64_t half = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1));
	return k > -half && k < half;
}

bool an_cells_distinct(int n, Expr *const *x, Expr *const *y)
{
	for (int k = 0; k < n; k++)
		if (index_differs(x[k], y[k]))
			return true;
	return false;
}
