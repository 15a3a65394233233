/* kernel/analysis/expr_query.c — small questions about expressions and
 * statements (reads memory? converts a float to an integer? constant?),
 * the buffers a statement writes, buffer sets, and constant folding of
 * small integer expressions. */
#include "kernel/analysis/expr_query.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/interval.h"


static bool is_load(const Expr *e, void *ud)
{
	(void)ud;
	return e->kind == EX_LOAD || e->kind == EX_OPAQUE; /* an opaque call may read memory */
}

bool an_expr_has_load(const Expr *e)
{
	return expr_any(e, is_load, NULL);
}

/* ---------- conversions that can fault ---------- */

static bool float_to_int(const Expr *from, DType to)
{
	return dtype_is_float(from->dtype) && !dtype_is_float(to);
}

bool an_converts_float_to_int(const Expr *e)
{
	switch (e->kind) {
	case EX_CAST: case EX_NEG: return float_to_int(e->u.un.a, e->dtype);
	case EX_BIN:
		return !binop_is_compare(e->u.bin.op) && !binop_is_logical(e->u.bin.op) &&
		       (float_to_int(e->u.bin.a, e->dtype) || float_to_int(e->u.bin.b, e->dtype));
	case EX_SELECT: return float_to_int(e->u.sel.a, e->dtype) || float_to_int(e->u.sel.b, e->dtype);
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_LOAD: case EX_NOT:
	case EX_LET: case EX_CALL: /* operands have the call's dtype */
	case EX_OPAQUE: /* faults, if at all, as a whole: an_expr_may_fault */
	case EX_COUNT:
		return false;
	}
	return true;
}

/* ---------- folding ---------- */

bool an_const_int(const Expr *e, int64_t *out)
{
	if (e->kind != EX_INT || e->dtype == DT_BOOL)
		return false;
	*out = e->u.ival;
	return true;
}

static int64_t floordiv64(int64_t a, int64_t b) { return (int64_t)iv_fdiv(a, b); }

/* A folded literal must hold its value in its dtype: otherwise the
 * interpreter (and generated code) would wrap it, and the fold would
 * change the program. Such expressions are left unfolded. */
static bool fits_dtype(int64_t v, DType t)
{
	return dtype_is_int(t) && iv_fits(iv_point(v), t);
}

static Expr *folded(Arena *a, Expr *e, int64_t v)
{
	return fits_dtype(v, e->dtype) ? ir_int(a, v, e->dtype, e->span) : NULL;
}

Expr *an_fold(Arena *a, Expr *e)
{
	if (e->kind != EX_BIN)
		return e;
	Expr *x = an_fold(a, e->u.bin.a), *y = an_fold(a, e->u.bin.b);
	int64_t p = 0, q = 0;
	bool cx = an_const_int(x, &p), cy = an_const_int(y, &q);
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
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_MIN: case OP_MAX: case OP_EQ: case OP_NE:
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

int64_t an_dtype_max(DType t)
{
	int bits = dtype_bits(t);
	if (bits >= 64)
		return INT64_MAX;
	return dtype_is_signed(t) ? (INT64_C(1) << (bits - 1)) - 1 : (INT64_C(1) << bits) - 1;
}

/* a load of b, or an opaque call naming b (it may read it) */
static bool loads_buffer(const Expr *e, void *ud)
{
	for (int i = 0; e->kind == EX_OPAQUE && i < e->u.opq.nitems; i++)
		if (e->u.opq.items[i].buf == ud)
			return true;
	return e->kind == EX_LOAD && e->u.load.buf == ud;
}

bool an_expr_reads(const Expr *e, const Buffer *b)
{
	return expr_any(e, loads_buffer, (void *)b);
}

bool an_stmt_reads(const Stmt *s, const Buffer *b)
{
	return stmt_any_expr(s, loads_buffer, (void *)b);
}

/* a store to b, or an opaque call naming b (it may write it) */
static bool stores_to(const Stmt *s, void *b)
{
	return (s->kind == ST_STORE && s->u.store.buf == b) || ir_stmt_opaque_names(s, b);
}

const Stmt *an_first_store(const Stmt *s, const Buffer *b)
{
	return stmt_find(s, stores_to, (void *)b);
}

static bool allocates(const Stmt *s, void *b)
{
	return s->kind == ST_ALLOC && s->u.alloc.buf == b;
}

bool an_allocates(const Stmt *s, const Buffer *b)
{
	return stmt_find(s, allocates, (void *)b) != NULL;
}

static bool loop_named(const Stmt *s, void *name)
{
	return s->kind == ST_FOR && strcmp(s->u.loop.var->name, name) == 0;
}

bool an_has_loop_named(const Stmt *s, const char *name)
{
	return stmt_find(s, loop_named, (void *)name) != NULL;
}

static bool is_undef(const Expr *e, void *ud)
{
	(void)ud;
	return e->kind == EX_UNDEF;
}

bool an_expr_has_undef(const Expr *e)
{
	return expr_any(e, is_undef, NULL);
}

typedef struct BufList {
	int n;
	Buffer *const *bufs;
} BufList;

static bool loads_listed(const Expr *e, void *ud)
{
	const BufList *l = ud;
	if (e->kind != EX_LOAD)
		return false;
	for (int i = 0; i < l->n; i++)
		if (l->bufs[i] == e->u.load.buf)
			return true;
	return false;
}

bool an_expr_reads_any(const Expr *e, int n, Buffer *const *bufs)
{
	BufList l = {n, bufs};
	return expr_any(e, loads_listed, &l);
}

bool an_expr_reads_written(Arena *a, const Expr *e, const Stmt *region)
{
	if (!an_expr_has_load(e))
		return false;
	Buffer **bufs;
	int n = an_written_buffers(a, region, &bufs);
	return an_expr_reads_any(e, n, bufs);
}

bool an_range_reads_written(Arena *a, const Stmt *loop, const Stmt *region)
{
	if (!an_expr_has_load(loop->u.loop.min) && !an_expr_has_load(loop->u.loop.extent))
		return false;
	Buffer **bufs;
	int n = an_written_buffers(a, region, &bufs);
	return an_expr_reads_any(loop->u.loop.min, n, bufs) || an_expr_reads_any(loop->u.loop.extent, n, bufs);
}

/* ---------- written buffers ---------- */

bool bufset_has(const BufSet *s, const Buffer *b)
{
	for (int i = 0; i < s->n; i++)
		if (s->items[i] == b)
			return true;
	return false;
}

void bufset_add(Arena *a, BufSet *s, Buffer *b)
{
	if (bufset_has(s, b))
		return;
	VEC_PUSH(a, s->items, s->n, s->cap, b);
}

typedef struct OpqSet {
	Arena *a;
	BufSet *set;
} OpqSet;

static void add_opaque(Buffer *b, void *ud)
{
	OpqSet *o = ud;
	bufset_add(o->a, o->set, b);
}

static void written(Arena *a, BufSet *set, const Stmt *s)
{
	if (s->kind == ST_STORE)
		bufset_add(a, set, s->u.store.buf);
	/* an opaque call may write every buffer it names */
	OpqSet o = {a, set};
	ir_stmt_opaque_buffers(s, add_opaque, &o);
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		written(a, set, stmt_child(s, i));
}

int an_written_buffers(Arena *a, const Stmt *s, Buffer ***out)
{
	BufSet set = {0};
	written(a, &set, s);
	*out = set.items;
	return set.n;
}

bool an_is_scalar_param(const Func *f, const Var *v)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR && f->params[i].var == v)
			return true;
	return false;
}

/* Only scalar parameters (no loop vars, no loads, no undef). */
bool an_scalar_only(const Func *f, const Expr *e)
{
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
		return true;
	case EX_VAR:
		return an_is_scalar_param(f, e->u.var);
	case EX_LOAD:
	case EX_UNDEF:
	case EX_LET:
	case EX_OPAQUE:
		return false;
	case EX_BIN:
		return an_scalar_only(f, e->u.bin.a) && an_scalar_only(f, e->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return an_scalar_only(f, e->u.un.a);
	case EX_SELECT:
		return an_scalar_only(f, e->u.sel.cond) && an_scalar_only(f, e->u.sel.a) &&
		       an_scalar_only(f, e->u.sel.b);
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!an_scalar_only(f, e->u.call.args[i]))
				return false;
		return true;
	case EX_COUNT:
		break;
	}
	abort();
}

static bool node_may_fault(const Expr *e, void *reads_fault)
{
	int64_t k;
	if (an_converts_float_to_int(e) || e->kind == EX_OPAQUE) /* unknown effects */
		return true;
	if ((e->kind == EX_LOAD || e->kind == EX_UNDEF) && *(bool *)reads_fault)
		return true;
	if (e->kind != EX_BIN)
		return false;
	BinOp op = e->u.bin.op;
	if (op == OP_SHL || op == OP_SHR) /* an amount outside [0, bits) is UB */
		return !(an_const_int(e->u.bin.b, &k) && k >= 0 && k < dtype_bits(e->dtype));
	bool divides = op == OP_FLOORDIV || op == OP_FLOORMOD || (op == OP_DIV && !dtype_is_float(e->dtype));
	return divides && !(an_const_int(e->u.bin.b, &k) && k != 0);
}

bool an_expr_may_fault(const Expr *e, bool reads_fault)
{
	return expr_any(e, node_may_fault, &reads_fault);
}
