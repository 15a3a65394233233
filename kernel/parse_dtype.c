/* kernel/parse_dtype.c — dtypes of parsed operands: the two operands of an
 * operator are unified to one dtype (a literal adapts to the other side,
 * otherwise the narrower side is cast), a bare T.undef() takes its dtype
 * from context, and integer and boolean positions are checked. */
#include "kernel/parse_int.h"

#include <math.h>

bool ps_is_literal(const Expr *e)
{
	return (e->kind == EX_INT && e->dtype != DT_BOOL) || e->kind == EX_FLOAT;
}

/* Give an expression of unresolved dtype (built from a bare T.undef())
 * the dtype t, down through the nodes that inherited the placeholder. */
void ps_retype_void(Expr *e, DType t)
{
	/* an opaque call's void dtype is its own (dtype=""), never a placeholder */
	while (e && e->dtype == DT_VOID && e->kind != EX_OPAQUE) {
		e->dtype = t;
		switch (e->kind) {
		case EX_BIN:
			if (!binop_is_compare(e->u.bin.op) &&
			    !binop_is_logical(e->u.bin.op))
				ps_retype_void(e->u.bin.a, t);
			e = e->u.bin.b;
			break;
		case EX_NEG: e = e->u.un.a; break;
		case EX_SELECT:
			ps_retype_void(e->u.sel.a, t);
			e = e->u.sel.b;
			break;
		case EX_LET: e = e->u.let.body; break;
		case EX_INT: case EX_FLOAT: case EX_VAR: case EX_NOT: case EX_CAST:
		case EX_LOAD: case EX_UNDEF: case EX_CALL: case EX_OPAQUE: /* typed when built */
		case EX_COUNT: return;
		}
	}
}

bool ps_int_fits(int64_t v, DType t)
{
	switch (t) {
	case DT_INT8: return v >= -128 && v <= 127;
	case DT_INT16: return v >= -32768 && v <= 32767;
	case DT_INT32: return v >= INT32_MIN && v <= INT32_MAX;
	case DT_UINT8: return v >= 0 && v <= 255;
	case DT_INT64: return true;
	case DT_BOOL: return v == 0 || v == 1;
	case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_HANDLE: case DT_VOID:
	case DT_COUNT: return false;
	}
	return false;
}

/* A literal re-made with dtype t, or NULL if it cannot be (a fractional
 * float to an integer type, an out-of-range integer). */
Expr *ps_literal_as(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (dtype_is_float(t))
		return ir_float(p->a, e->kind == EX_INT ? (double)e->u.ival : e->u.fval,
				t, e->span);
	if (!dtype_is_int(t))
		return NULL;
	if (e->kind == EX_INT)
		return ps_int_fits(e->u.ival, t) ? ir_int(p->a, e->u.ival, t, e->span) : NULL;
	double f = e->u.fval;
	if (!isfinite(f) || f != floor(f) || f < -9.2e18 || f > 9.2e18 ||
	    !ps_int_fits((int64_t)f, t))
		return NULL;
	return ir_int(p->a, (int64_t)f, t, e->span);
}

/* The common dtype of two different non-literal operands: float wins,
 * then the wider type, then the signed one. */
static DType promote(DType x, DType y)
{
	if (dtype_is_float(x) != dtype_is_float(y))
		return dtype_is_float(x) ? x : y;
	if (x == DT_BOOL)
		return y == DT_BOOL ? x : y;
	if (y == DT_BOOL)
		return x;
	if (dtype_bits(x) != dtype_bits(y))
		return dtype_bits(x) > dtype_bits(y) ? x : y;
	return dtype_is_signed(x) ? x : y;
}

Expr *ps_convert(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (ps_is_literal(e)) {
		Expr *l = ps_literal_as(p, e, t);
		if (l)
			return l;
	}
	return ir_cast(p->a, t, e, e->span);
}

bool ps_is_handle(Parser *p, const Expr *e)
{
	if (e->kind == EX_OPAQUE && e->dtype == DT_VOID) {
		ps_error_at(p, e->span, "T.%s with dtype=\"\" returns nothing and cannot be "
			    "used as a value", e->u.opq.name);
		return true;
	}
	if (e->dtype != DT_HANDLE)
		return false;
	ps_error_at(p, e->span, "a handle cannot be used in an expression "
		    "(bind it with T.match_buffer)");
	return true;
}

/* Make *x and *y the same dtype (see the file comment). */
bool ps_unify(Parser *p, Expr **x, Expr **y)
{
	if (ps_is_handle(p, *x) || ps_is_handle(p, *y))
		return false;
	DType tx = (*x)->dtype, ty = (*y)->dtype;
	if (tx == ty) {
		if (tx == DT_VOID) {
			ps_retype_void(*x, DT_INT32);
			ps_retype_void(*y, DT_INT32);
		}
		return true;
	}
	if (tx == DT_VOID) {
		ps_retype_void(*x, ty);
		return true;
	}
	if (ty == DT_VOID) {
		ps_retype_void(*y, tx);
		return true;
	}
	bool lx = ps_is_literal(*x), ly = ps_is_literal(*y);
	if (lx && !ly && ty != DT_BOOL) {
		Expr *l = ps_literal_as(p, *x, ty);
		if (l) {
			*x = l;
			return true;
		}
	}
	if (ly && !lx && tx != DT_BOOL) {
		Expr *l = ps_literal_as(p, *y, tx);
		if (l) {
			*y = l;
			return true;
		}
	}
	DType t = promote(tx, ty);
	*x = ps_convert(p, *x, t);
	*y = ps_convert(p, *y, t);
	return true;
}

Expr *ps_make_bin(Parser *p, BinOp op, Expr *x, Expr *y, Span sp)
{
	if (!x || !y || p->failed)
		return NULL;
	if (binop_is_logical(op)) {
		if (x->dtype == DT_VOID)
			ps_retype_void(x, DT_BOOL);
		if (y->dtype == DT_VOID)
			ps_retype_void(y, DT_BOOL);
		const Expr *bad = x->dtype != DT_BOOL ? x : y->dtype != DT_BOOL ? y : NULL;
		if (bad) {
			ps_error_at(p, bad->span, "operand of '%s' must be a boolean, "
				    "not %s", binop_symbol(op), dtype_name(bad->dtype));
			return NULL;
		}
		return ir_bin(p->a, op, x, y, sp);
	}
	if (!ps_unify(p, &x, &y))
		return NULL;
	if (op == OP_DIV && !dtype_is_float(x->dtype)) {
		ps_error_at(p, sp, "integer '/' is ambiguous: use '//' (floor division)");
		return NULL;
	}
	if ((op == OP_SHL || op == OP_SHR) && !dtype_is_int(x->dtype)) {
		ps_error_at(p, sp, "'%s' shifts integers, not %s", op == OP_SHL ? "<<" : ">>",
			    dtype_name(x->dtype));
		return NULL;
	}
	if (!binop_is_compare(op) && x->dtype == DT_BOOL) {
		x = ir_cast(p->a, DT_INT32, x, x->span);
		y = ir_cast(p->a, DT_INT32, y, y->span);
	}
	return ir_bin(p->a, op, x, y, sp);
}

static bool contains_undef(const Expr *e, Span *where)
{
	while (e) {
		switch (e->kind) {
		case EX_UNDEF: *where = e->span; return true;
		case EX_COUNT: return false;
		case EX_INT:
		case EX_FLOAT:
		case EX_VAR: return false;
		case EX_BIN:
			if (contains_undef(e->u.bin.a, where))
				return true;
			e = e->u.bin.b;
			break;
		case EX_NOT:
		case EX_NEG:
		case EX_CAST: e = e->u.un.a; break;
		case EX_SELECT:
			if (contains_undef(e->u.sel.cond, where) ||
			    contains_undef(e->u.sel.a, where))
				return true;
			e = e->u.sel.b;
			break;
		case EX_LOAD:
			for (int i = 0; i < e->u.load.nidx; i++)
				if (contains_undef(e->u.load.idx[i], where))
					return true;
			return false;
		case EX_LET:
			if (contains_undef(e->u.let.value, where))
				return true;
			e = e->u.let.body;
			break;
		case EX_CALL:
			for (int i = 0; i < e->u.call.nargs; i++)
				if (contains_undef(e->u.call.args[i], where))
					return true;
			return false;
		case EX_OPAQUE: /* ps_check_int_expr refuses it on its own */
			return false;
		}
	}
	return false;
}

/* An integer-valued expression with no T.undef(): an index, extent,
 * loop bound or shape. */
bool ps_check_int_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	Span where;
	if (contains_undef(e, &where)) {
		ps_error_at(p, where, "T.undef() cannot be used in %s", what);
		return false;
	}
	const Expr *opq = ir_expr_find_opaque(e);
	if (opq) {
		ps_error_at(p, opq->span, "not supported: the opaque call T.%s in %s (its "
			    "value is unknown)", opq->u.opq.name, what);
		return false;
	}
	if (!dtype_is_int(e->dtype)) {
		ps_error_at(p, e->span, "%s must be an integer expression, not %s",
			    what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

bool ps_check_bool_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	if (e->dtype == DT_VOID)
		ps_retype_void(e, DT_BOOL);
	if (e->dtype != DT_BOOL) {
		ps_error_at(p, e->span, "%s must be a boolean expression, not %s",
			    what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

/* A whole expression is done: a bare T.undef() left defaults to int32. */
Expr *ps_finish_expr(Expr *e)
{
	if (e && e->dtype == DT_VOID)
		ps_retype_void(e, DT_INT32);
	return e;
}

bool ps_dtype_from_string(Parser *p, const char *s, Span sp, DType *out)
{
	if (dtype_from_name(s, out) && *out != DT_VOID && *out != DT_HANDLE)
		return true;
	ps_error_at(p, sp, "unknown dtype '%s'", s);
	return false;
}
