/* kernel/ir.c — dtypes, IR node constructors, variable substitution and
 * buffer replacement. Constructors type their results but never simplify:
 * the IR says exactly what the user or a rewrite wrote. */
#include "kernel/ir.h"

#include <stdlib.h>
#include <string.h>

/* ---------- dtypes ---------- */

static const struct {
	const char *name;
	int bits, is_signed, is_float;
} dtype_info[DT_COUNT] = {
#define X(e, n, b, s, f) [e] = {n, b, s, f},
	VS_DTYPES(X)
#undef X
};

const char *dtype_name(DType t) { return dtype_info[t].name; }

int dtype_bits(DType t) { return dtype_info[t].bits; }
bool dtype_is_float(DType t) { return dtype_info[t].is_float; }
bool dtype_is_signed(DType t) { return dtype_info[t].is_signed; }

bool dtype_is_int(DType t)
{
	return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 ||
	       t == DT_INT64 || t == DT_UINT8;
}

bool dtype_from_name(const char *name, DType *out)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (strcmp(dtype_info[i].name, name) == 0) {
			*out = (DType)i;
			return true;
		}
	return false;
}

const char *for_kind_name(ForKind k)
{
	switch (k) {
	case FOR_SERIAL: return "serial";
	case FOR_PARALLEL: return "parallel";
	case FOR_VECTORIZED: return "vectorized";
	case FOR_UNROLLED: return "unroll";
	}
	return "serial";
}

const char *binop_symbol(BinOp op)
{
	static const char *const sym[OP_COUNT] = {
		[OP_ADD] = "+",	      [OP_SUB] = "-",	   [OP_MUL] = "*",
		[OP_DIV] = "/",	      [OP_FLOORDIV] = "//", [OP_FLOORMOD] = "%",
		[OP_MIN] = "min",     [OP_MAX] = "max",	   [OP_SHL] = "<<",
		[OP_SHR] = ">>",	   [OP_EQ] = "==",
		[OP_NE] = "!=",	      [OP_LT] = "<",	   [OP_LE] = "<=",
		[OP_GT] = ">",	      [OP_GE] = ">=",	   [OP_AND] = "and",
		[OP_OR] = "or",
	};
	return sym[op];
}

bool binop_is_compare(BinOp op) { return op >= OP_EQ && op <= OP_GE; }
bool binop_is_logical(BinOp op) { return op == OP_AND || op == OP_OR; }

BinOp binop_mirror(BinOp op)
{
	switch (op) {
	case OP_LT: return OP_GT;
	case OP_LE: return OP_GE;
	case OP_GT: return OP_LT;
	case OP_GE: return OP_LE;
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
	case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND:
	case OP_OR: case OP_COUNT:
		return op;
	}
	return op;
}

static const struct { const char *name; int arity; } math_fns[MF_COUNT] = {
#define X(e, n, k) [e] = {n, k},
	VS_MATH_FNS(X)
#undef X
};

const char *mathfn_name(MathFn f) { return math_fns[f].name; }
int mathfn_arity(MathFn f) { return math_fns[f].arity; }

bool mathfn_from_name(const char *name, MathFn *out)
{
	for (int i = 0; i < MF_COUNT; i++)
		if (strcmp(math_fns[i].name, name) == 0) {
			*out = (MathFn)i;
			return true;
		}
	if (strcmp(name, "truncate") == 0) {
		*out = MF_TRUNC;
		return true;
	}
	return false;
}

/* ---------- constructors ---------- */

static const Span no_span;

Var *ir_var(Arena *a, const char *name, DType t, Span sp)
{
	Var *v = arena_alloc(a, sizeof *v);
	v->name = arena_strdup(a, name);
	v->dtype = t;
	v->id = a->next_var_id++;
	v->span = sp;
	return v;
}

Buffer *ir_buffer(Arena *a, const char *name, DType t, int ndim, Expr **shape,
		  Span sp)
{
	Buffer *b = arena_alloc(a, sizeof *b);
	b->name = arena_strdup(a, name);
	b->dtype = t;
	b->ndim = ndim;
	b->shape = arena_alloc(a, sizeof(Expr *) * (size_t)(ndim ? ndim : 1));
	for (int i = 0; i < ndim; i++)
		b->shape[i] = shape[i];
	b->id = a->next_var_id++;
	b->span = sp;
	return b;
}

Buffer *ir_buffer_copy(Arena *a, const Buffer *src)
{
	Buffer *b = arena_alloc(a, sizeof *b);
	*b = *src;
	b->id = a->next_var_id++;
	return b;
}

static Expr *new_expr(Arena *a, ExprKind k, DType t, Span sp)
{
	Expr *e = arena_alloc(a, sizeof *e);
	e->kind = k;
	e->dtype = t;
	e->span = sp;
	return e;
}

Expr *ir_int(Arena *a, int64_t v, DType t, Span sp)
{
	Expr *e = new_expr(a, EX_INT, t, sp);
	e->u.ival = v;
	return e;
}

Expr *ir_int32(Arena *a, int64_t v) { return ir_int(a, v, DT_INT32, no_span); }
Expr *ir_bool(Arena *a, bool v) { return ir_int(a, v, DT_BOOL, no_span); }

Expr *ir_float(Arena *a, double v, DType t, Span sp)
{
	Expr *e = new_expr(a, EX_FLOAT, t, sp);
	e->u.fval = v;
	return e;
}

Expr *ir_varref(Arena *a, Var *v, Span sp)
{
	Expr *e = new_expr(a, EX_VAR, v->dtype, sp);
	e->u.var = v;
	return e;
}

/* The dtype of an arithmetic result: an integer literal adapts to the
 * other operand; otherwise the wider of two integer types, float wins. */
static DType arith_dtype(const Expr *x, const Expr *y)
{
	if (x->dtype == y->dtype)
		return x->dtype;
	if (x->kind == EX_INT && x->dtype != DT_BOOL)
		return y->dtype;
	if (y->kind == EX_INT && y->dtype != DT_BOOL)
		return x->dtype;
	if (dtype_is_float(x->dtype) != dtype_is_float(y->dtype))
		return dtype_is_float(x->dtype) ? x->dtype : y->dtype;
	return dtype_bits(x->dtype) >= dtype_bits(y->dtype) ? x->dtype
							    : y->dtype;
}

Expr *ir_bin(Arena *a, BinOp op, Expr *x, Expr *y, Span sp)
{
	DType t = binop_is_compare(op) || binop_is_logical(op)
			  ? DT_BOOL
			  : arith_dtype(x, y);
	Expr *e = new_expr(a, EX_BIN, t, sp);
	e->u.bin.op = op;
	e->u.bin.a = x;
	e->u.bin.b = y;
	return e;
}

Expr *ir_not(Arena *a, Expr *x, Span sp)
{
	Expr *e = new_expr(a, EX_NOT, DT_BOOL, sp);
	e->u.un.a = x;
	return e;
}

Expr *ir_neg(Arena *a, Expr *x, Span sp)
{
	Expr *e = new_expr(a, EX_NEG, x->dtype, sp);
	e->u.un.a = x;
	return e;
}

Expr *ir_select(Arena *a, Expr *c, Expr *x, Expr *y, Span sp)
{
	Expr *e = new_expr(a, EX_SELECT, arith_dtype(x, y), sp);
	e->u.sel.cond = c;
	e->u.sel.a = x;
	e->u.sel.b = y;
	return e;
}

Expr *ir_cast(Arena *a, DType t, Expr *x, Span sp)
{
	Expr *e = new_expr(a, EX_CAST, t, sp);
	e->u.un.a = x;
	return e;
}

Expr *ir_load(Arena *a, Buffer *b, int nidx, Expr **idx, Span sp)
{
	Expr *e = new_expr(a, EX_LOAD, b->dtype, sp);
	e->u.load.buf = b;
	e->u.load.nidx = nidx;
	e->u.load.idx = arena_alloc(a, sizeof(Expr *) * (size_t)(nidx + 1));
	for (int i = 0; i < nidx; i++)
		e->u.load.idx[i] = idx[i];
	return e;
}

Expr *ir_undef(Arena *a, DType t, Span sp) { return new_expr(a, EX_UNDEF, t, sp); }

Expr *ir_let(Arena *a, Var *v, Expr *value, Expr *body, Span sp)
{
	Expr *e = new_expr(a, EX_LET, body->dtype, sp);
	e->u.let.var = v;
	e->u.let.value = value;
	e->u.let.body = body;
	return e;
}

Expr *ir_call(Arena *a, MathFn f, Expr *const *args, Span sp)
{
	Expr *e = new_expr(a, EX_CALL, args[0]->dtype, sp);
	e->u.call.fn = f;
	e->u.call.nargs = mathfn_arity(f);
	for (int i = 0; i < e->u.call.nargs; i++)
		e->u.call.args[i] = args[i];
	return e;
}

Expr *ir_opaque(Arena *a, const char *name, DType t, int nitems, const OpqItem *items,
		int nargs, Expr *const *args, Span sp)
{
	Expr *e = new_expr(a, EX_OPAQUE, t, sp);
	e->u.opq.name = name;
	e->u.opq.nitems = nitems;
	e->u.opq.items = arena_alloc(a, sizeof(OpqItem) * (size_t)(nitems + 1));
	if (nitems)
		memcpy(e->u.opq.items, items, sizeof(OpqItem) * (size_t)nitems);
	e->u.opq.nargs = nargs;
	e->u.opq.args = arena_alloc(a, sizeof(Expr *) * (size_t)(nargs + 1));
	if (nargs)
		memcpy(e->u.opq.args, args, sizeof(Expr *) * (size_t)nargs);
	return e;
}

static bool is_opaque(const Expr *e, void *ud)
{
	const Expr **found = ud;
	if (e->kind != EX_OPAQUE)
		return false;
	*found = e;
	return true;
}

const Expr *ir_expr_find_opaque(const Expr *e)
{
	const Expr *found = NULL;
	return expr_any(e, is_opaque, (void *)&found) ? found : NULL;
}

const Expr *ir_stmt_find_opaque(const Stmt *s)
{
	const Expr *found = NULL;
	return stmt_any_expr(s, is_opaque, (void *)&found) ? found : NULL;
}

static void loaded_buffers(const Expr *e, void (*fn)(Buffer *b, void *ud), void *ud)
{
	if (e->kind == EX_LOAD)
		fn(e->u.load.buf, ud);
	for (int i = 0; i < expr_nchildren(e); i++)
		loaded_buffers(expr_child(e, i), fn, ud);
}

void ir_expr_opaque_buffers(const Expr *e, void (*fn)(Buffer *b, void *ud), void *ud)
{
	if (e->kind == EX_OPAQUE) {
		for (int i = 0; i < e->u.opq.nitems; i++)
			if (e->u.opq.items[i].buf)
				fn(e->u.opq.items[i].buf, ud);
		for (int i = 0; i < e->u.opq.nargs; i++)
			loaded_buffers(e->u.opq.args[i], fn, ud);
	}
	for (int i = 0; i < expr_nchildren(e); i++)
		ir_expr_opaque_buffers(expr_child(e, i), fn, ud);
}

void ir_stmt_opaque_buffers(const Stmt *s, void (*fn)(Buffer *b, void *ud), void *ud)
{
	int n = stmt_nexprs(s);
	for (int i = 0; i < n; i++)
		ir_expr_opaque_buffers(stmt_expr(s, i), fn, ud);
}

typedef struct NamesBuf {
	const Buffer *b;
	bool found;
} NamesBuf;

static void names_buf(Buffer *b, void *ud)
{
	NamesBuf *n = ud;
	n->found |= b == n->b;
}

bool ir_stmt_opaque_names(const Stmt *s, const Buffer *b)
{
	NamesBuf n = {b, false};
	ir_stmt_opaque_buffers(s, names_buf, &n);
	return n.found;
}

Expr *ir_add(Arena *a, Expr *x, Expr *y) { return ir_bin(a, OP_ADD, x, y, no_span); }
Expr *ir_sub(Arena *a, Expr *x, Expr *y) { return ir_bin(a, OP_SUB, x, y, no_span); }
Expr *ir_mul(Arena *a, Expr *x, Expr *y) { return ir_bin(a, OP_MUL, x, y, no_span); }

Expr *ir_and(Arena *a, Expr *x, Expr *y)
{
	if (!x)
		return y;
	if (!y)
		return x;
	return ir_bin(a, OP_AND, x, y, no_span);
}

Expr *ir_or(Arena *a, Expr *x, Expr *y) { return ir_bin(a, OP_OR, x, y, no_span); }

static Stmt *new_stmt(Arena *a, StmtKind k, Span sp)
{
	Stmt *s = arena_alloc(a, sizeof *s);
	s->kind = k;
	s->span = sp;
	return s;
}

Stmt *ir_seq(Arena *a, int n, Stmt **items, Span sp)
{
	Stmt *s = new_stmt(a, ST_SEQ, sp);
	s->u.seq.n = n;
	s->u.seq.items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		s->u.seq.items[i] = items[i];
	return s;
}

Stmt *ir_for(Arena *a, Var *v, Expr *min, Expr *extent, ForKind k, Stmt *body,
	     Span sp)
{
	Stmt *s = new_stmt(a, ST_FOR, sp);
	s->u.loop.var = v;
	s->u.loop.min = min;
	s->u.loop.extent = extent;
	s->u.loop.kind = k;
	s->u.loop.body = body;
	return s;
}

Stmt *ir_if(Arena *a, Expr *c, Stmt *then_s, Stmt *else_s, Span sp)
{
	Stmt *s = new_stmt(a, ST_IF, sp);
	s->u.cond.cond = c;
	s->u.cond.then_s = then_s;
	s->u.cond.else_s = else_s;
	return s;
}

Stmt *ir_store(Arena *a, Buffer *b, int nidx, Expr **idx, Expr *value, Span sp)
{
	Stmt *s = new_stmt(a, ST_STORE, sp);
	s->u.store.buf = b;
	s->u.store.nidx = nidx;
	s->u.store.idx = arena_alloc(a, sizeof(Expr *) * (size_t)(nidx + 1));
	for (int i = 0; i < nidx; i++)
		s->u.store.idx[i] = idx[i];
	s->u.store.value = value;
	return s;
}

Stmt *ir_assume(Arena *a, Expr *fact, Span sp)
{
	Stmt *s = new_stmt(a, ST_ASSUME, sp);
	s->u.expr = fact;
	return s;
}

Stmt *ir_eval(Arena *a, Expr *e, Span sp)
{
	Stmt *s = new_stmt(a, ST_EVAL, sp);
	s->u.expr = e;
	return s;
}

Stmt *ir_alloc(Arena *a, Buffer *b, Stmt *body, Span sp)
{
	Stmt *s = new_stmt(a, ST_ALLOC, sp);
	s->u.alloc.buf = b;
	s->u.alloc.body = body;
	return s;
}

Stmt *ir_block(Arena *a, const char *name, Stmt *body, Span sp)
{
	Stmt *s = new_stmt(a, ST_BLOCK, sp);
	s->u.block.name = arena_strdup(a, name);
	s->u.block.body = body;
	return s;
}

Stmt *ir_letstmt(Arena *a, Var *v, Expr *value, Stmt *body, Span sp)
{
	Stmt *s = new_stmt(a, ST_LET, sp);
	s->u.let.var = v;
	s->u.let.value = value;
	s->u.let.body = body;
	return s;
}

Stmt *ir_pass(Arena *a, Span sp) { return new_stmt(a, ST_PASS, sp); }

Func *ir_func(Arena *a, const char *name, int nparams, Param *params,
	      Stmt *body, Span sp)
{
	Func *f = arena_alloc(a, sizeof *f);
	f->name = arena_strdup(a, name);
	f->nparams = nparams;
	f->params = arena_alloc(a, sizeof(Param) * (size_t)(nparams + 1));
	for (int i = 0; i < nparams; i++)
		f->params[i] = params[i];
	f->body = body;
	f->span = sp;
	return f;
}

Module *ir_module(Arena *a, const char *name, int nfuncs, Func **funcs, Span sp)
{
	Module *m = arena_alloc(a, sizeof *m);
	m->name = name ? arena_strdup(a, name) : NULL;
	m->nfuncs = nfuncs;
	m->funcs = arena_alloc(a, sizeof(Func *) * (size_t)(nfuncs + 1));
	for (int i = 0; i < nfuncs; i++)
		m->funcs[i] = funcs[i];
	m->span = sp;
	return m;
}

Func *module_find_func(const Module *m, const char *name)
{
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, name) == 0)
			return m->funcs[i];
	return NULL;
}

/* ---------- substitution ---------- */

typedef struct Subst {
	Arena *a;
	int n;
	Var **from;
	Expr **to;
	const Buffer *buf_from; /* buffer replacement, or NULL */
	Buffer *buf_to;
	/* with buf_from: the new indices are map[k](vars := old indices) */
	int map_nvars, map_nout;
	Var **map_vars;
	Expr **map;
} Subst;

/* The indices of an access to buf_from after the buffer replacement. */
static Expr **remap_indices(const Subst *s, int *nidx, Expr **idx)
{
	if (!s->map)
		return idx;
	Expr **out = arena_alloc(s->a, sizeof(Expr *) * (size_t)(s->map_nout + 1));
	for (int k = 0; k < s->map_nout; k++)
		out[k] = ir_subst_expr(s->a, s->map[k], s->map_nvars, s->map_vars, idx);
	*nidx = s->map_nout;
	return out;
}

static Expr *subst_e(const Subst *s, Expr *e);

static Expr **subst_list(const Subst *s, int n, Expr **xs, bool *changed)
{
	Expr **out = NULL;
	for (int i = 0; i < n; i++) {
		Expr *y = subst_e(s, xs[i]);
		if (y != xs[i] && !out) {
			out = arena_alloc(s->a, sizeof(Expr *) * (size_t)(n + 1));
			memcpy(out, xs, sizeof(Expr *) * (size_t)i);
		}
		if (out)
			out[i] = y;
	}
	*changed = out != NULL;
	return out ? out : xs;
}

static Expr *subst_e(const Subst *s, Expr *e)
{
	Expr *x, *y, *z;
	bool ch;
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
	case EX_UNDEF:
		return e;
	case EX_VAR:
		for (int i = 0; i < s->n; i++)
			if (s->from[i] == e->u.var)
				return s->to[i];
		return e;
	case EX_BIN:
		x = subst_e(s, e->u.bin.a);
		y = subst_e(s, e->u.bin.b);
		if (x == e->u.bin.a && y == e->u.bin.b)
			return e;
		z = ir_bin(s->a, e->u.bin.op, x, y, e->span);
		z->dtype = e->dtype;
		return z;
	case EX_NOT:
		x = subst_e(s, e->u.un.a);
		return x == e->u.un.a ? e : ir_not(s->a, x, e->span);
	case EX_NEG:
		x = subst_e(s, e->u.un.a);
		return x == e->u.un.a ? e : ir_neg(s->a, x, e->span);
	case EX_CAST:
		x = subst_e(s, e->u.un.a);
		return x == e->u.un.a ? e : ir_cast(s->a, e->dtype, x, e->span);
	case EX_SELECT:
		x = subst_e(s, e->u.sel.cond);
		y = subst_e(s, e->u.sel.a);
		z = subst_e(s, e->u.sel.b);
		if (x == e->u.sel.cond && y == e->u.sel.a && z == e->u.sel.b)
			return e;
		x = ir_select(s->a, x, y, z, e->span);
		x->dtype = e->dtype;
		return x;
	case EX_LOAD: {
		Expr **idx = subst_list(s, e->u.load.nidx, e->u.load.idx, &ch);
		bool rebuf = s->buf_from && e->u.load.buf == s->buf_from;
		if (!ch && !rebuf)
			return e;
		int n = e->u.load.nidx;
		if (rebuf)
			idx = remap_indices(s, &n, idx);
		return ir_load(s->a, rebuf ? s->buf_to : e->u.load.buf, n, idx,
			       e->span);
	}
	case EX_LET:
		x = subst_e(s, e->u.let.value);
		y = subst_e(s, e->u.let.body);
		if (x == e->u.let.value && y == e->u.let.body)
			return e;
		return ir_let(s->a, e->u.let.var, x, y, e->span);
	case EX_CALL: {
		Expr *args[MATH_MAX_ARGS];
		bool changed = false;
		for (int i = 0; i < e->u.call.nargs; i++) {
			args[i] = subst_e(s, e->u.call.args[i]);
			changed |= args[i] != e->u.call.args[i];
		}
		if (!changed)
			return e;
		x = ir_call(s->a, e->u.call.fn, args, e->span);
		x->dtype = e->dtype;
		return x;
	}
	case EX_OPAQUE: {
		/* the expression arguments take the substitution; a buffer the
		 * call names is renamed with the buffer (an index map cannot
		 * apply to a pointer: the schedule refuses layout changes of a
		 * function with an opaque call before they get here) */
		Expr **args = subst_list(s, e->u.opq.nargs, e->u.opq.args, &ch);
		bool rebuf = false;
		for (int i = 0; i < e->u.opq.nitems; i++)
			rebuf |= s->buf_from && e->u.opq.items[i].buf == s->buf_from;
		if (!ch && !rebuf)
			return e;
		x = ir_opaque(s->a, e->u.opq.name, e->dtype, e->u.opq.nitems, e->u.opq.items,
			      e->u.opq.nargs, args, e->span);
		for (int i = 0; rebuf && i < x->u.opq.nitems; i++)
			if (x->u.opq.items[i].buf == s->buf_from)
				x->u.opq.items[i].buf = s->buf_to;
		return x;
	}
	case EX_COUNT:
		break;
	}
	abort();
}

static Stmt *subst_s(const Subst *s, Stmt *st)
{
	Expr *x, *y;
	Stmt *b, *c;
	bool ch;
	switch (st->kind) {
	case ST_SEQ: {
		Stmt **items = NULL;
		int n = st->u.seq.n;
		for (int i = 0; i < n; i++) {
			Stmt *t = subst_s(s, st->u.seq.items[i]);
			if (t != st->u.seq.items[i] && !items) {
				items = arena_alloc(s->a, sizeof(Stmt *) * (size_t)(n + 1));
				memcpy(items, st->u.seq.items, sizeof(Stmt *) * (size_t)i);
			}
			if (items)
				items[i] = t;
		}
		return items ? ir_seq(s->a, n, items, st->span) : st;
	}
	case ST_FOR:
		x = subst_e(s, st->u.loop.min);
		y = subst_e(s, st->u.loop.extent);
		b = subst_s(s, st->u.loop.body);
		if (x == st->u.loop.min && y == st->u.loop.extent &&
		    b == st->u.loop.body)
			return st;
		return ir_for(s->a, st->u.loop.var, x, y, st->u.loop.kind, b,
			      st->span);
	case ST_IF:
		x = subst_e(s, st->u.cond.cond);
		b = subst_s(s, st->u.cond.then_s);
		c = st->u.cond.else_s ? subst_s(s, st->u.cond.else_s) : NULL;
		if (x == st->u.cond.cond && b == st->u.cond.then_s &&
		    c == st->u.cond.else_s)
			return st;
		return ir_if(s->a, x, b, c, st->span);
	case ST_STORE: {
		Expr **idx = subst_list(s, st->u.store.nidx, st->u.store.idx, &ch);
		x = subst_e(s, st->u.store.value);
		bool rebuf = s->buf_from && st->u.store.buf == s->buf_from;
		if (!ch && !rebuf && x == st->u.store.value)
			return st;
		int n = st->u.store.nidx;
		if (rebuf)
			idx = remap_indices(s, &n, idx);
		return ir_store(s->a, rebuf ? s->buf_to : st->u.store.buf, n, idx,
				x, st->span);
	}
	case ST_ASSUME:
		x = subst_e(s, st->u.expr);
		return x == st->u.expr ? st : ir_assume(s->a, x, st->span);
	case ST_EVAL:
		x = subst_e(s, st->u.expr);
		return x == st->u.expr ? st : ir_eval(s->a, x, st->span);
	case ST_ALLOC: {
		b = subst_s(s, st->u.alloc.body);
		if (s->buf_from && st->u.alloc.buf == s->buf_from)
			return ir_alloc(s->a, s->buf_to, b, st->span);
		/* the shape may mention a substituted variable (an allocation
		 * inside a loop that is split or fused): a new buffer with the
		 * new shape, and the body's accesses moved to it */
		const Buffer *old = st->u.alloc.buf;
		Expr **shape = subst_list(s, old->ndim, old->shape, &ch);
		if (ch) {
			Buffer *nb = ir_buffer_copy(s->a, old);
			nb->shape = shape;
			return ir_alloc(s->a, nb, ir_replace_buffer(s->a, b, old, nb), st->span);
		}
		return b == st->u.alloc.body ? st
					     : ir_alloc(s->a, st->u.alloc.buf, b, st->span);
	}
	case ST_BLOCK:
		b = subst_s(s, st->u.block.body);
		return ir_block_with(s->a, st, b);
	case ST_LET:
		x = subst_e(s, st->u.let.value);
		b = subst_s(s, st->u.let.body);
		if (x == st->u.let.value && b == st->u.let.body)
			return st;
		return ir_letstmt(s->a, st->u.let.var, x, b, st->span);
	case ST_PASS:
		return st;
	case ST_COUNT:
		break;
	}
	abort();
}

Expr *ir_subst_expr(Arena *a, Expr *e, int n, Var **from, Expr **to)
{
	Subst s = {.a = a, .n = n, .from = from, .to = to};
	return subst_e(&s, e);
}

Stmt *ir_subst_stmt(Arena *a, Stmt *st, int n, Var **from, Expr **to)
{
	Subst s = {.a = a, .n = n, .from = from, .to = to};
	return subst_s(&s, st);
}

Stmt *ir_replace_buffer(Arena *a, Stmt *st, const Buffer *from, Buffer *to)
{
	Subst s = {.a = a, .buf_from = from, .buf_to = to};
	return subst_s(&s, st);
}

Stmt *ir_remap_buffer(Arena *a, Stmt *st, const Buffer *from, Buffer *to,
		      int nvars, Var **vars, int nout, Expr **map)
{
	Subst s = {.a = a, .buf_from = from, .buf_to = to, .map_nvars = nvars,
		   .map_nout = nout, .map_vars = vars, .map = map};
	return subst_s(&s, st);
}

Expr *ir_remap_buffer_expr(Arena *a, Expr *e, const Buffer *from, Buffer *to,
			   int nvars, Var **vars, int nout, Expr **map)
{
	Subst s = {.a = a, .buf_from = from, .buf_to = to, .map_nvars = nvars,
		   .map_nout = nout, .map_vars = vars, .map = map};
	return subst_e(&s, e);
}

static bool is_var(const Expr *e, void *v)
{
	return e->kind == EX_VAR && e->u.var == v;
}

bool ir_expr_uses_var(const Expr *e, const Var *v)
{
	return expr_any(e, is_var, (void *)v);
}

bool ir_stmt_uses_var(const Stmt *s, const Var *v)
{
	return stmt_any_expr(s, is_var, (void *)v);
}
