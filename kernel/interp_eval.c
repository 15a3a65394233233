/* kernel/interp_eval.c — the reference interpreter's expressions
 * (semantics.md 1 and 3): values wrapped to their dtype, conversions, floor
 * division, T.undef() taint, and checked buffer accesses (rank, bounds,
 * padding without a pad value) with UB reported at the expression's span. */
#include "kernel/interp_int.h"

/* ---------- values ---------- */

static bool is_zero(TVal x, DType t)
{
	return !x.undef && !truth(x.v, t);
}

/* The value of a T.undef(): arbitrary but deterministic. */
Value in_undef_value(Interp *in, DType t)
{
	uint64_t x = in->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	in->rng = x;
	Value v;
	if (in_is_float(t))
		v.f = (double)((int64_t)(x % 65) - 32) / 4.0;
	else if (t == DT_BOOL)
		v.i = (int64_t)(x & 1);
	else
		v.i = wrap_int((int64_t)(x % 17) - 8, t);
	return v;
}

/* ---------- expressions ---------- */

bool in_eval_int(Interp *in, const Expr *e, int64_t *out, const char *what)
{
	TVal x;
	return in_eval(in, e, &x) && in_int_value(in, e, x, out, what);
}

bool in_int_value(Interp *in, const Expr *e, TVal x, int64_t *out, const char *what)
{
	if (x.undef)
		return in_fail(in, RUN_UB, e->span, "T.undef() used in %s", what);
	if (in_is_float(e->dtype))
		return in_fail(in, RUN_UB, e->span, "float value used as %s", what);
	*out = x.v.i;
	return true;
}

/* Bind the index variables vars[0, n) (at most MAX_DIMS of them) to
 * x[0, n); returns how many were bound before a binding failed, for
 * in_unbind_index_vars. */
int in_bind_index_vars(Interp *in, Var *const *vars, int n,
		       const int64_t *x, SavedVar *saved)
{
	int bound = 0;
	while (bound < n && bound < MAX_DIMS &&
	       in_bind_var(in, vars[bound], (Value){.i = x[bound]}, &saved[bound]))
		bound++;
	return bound;
}

void in_unbind_index_vars(Interp *in, Var *const *vars, int bound,
			  const SavedVar *saved)
{
	while (bound-- > 0)
		in_unbind_var(in, vars[bound], &saved[bound]);
}

/* Whether predicate `pred` of the layout (over its physical index
 * variables) holds at the physical index ix (n dimensions). */
bool in_is_padding(Interp *in, const Layout *lay, const Expr *pred, int n,
		   const int64_t *ix, bool *pad)
{
	SavedVar saved[MAX_DIMS];
	TVal p;
	*pad = false;
	int bound = in_bind_index_vars(in, lay->inv_vars, n, ix, saved);
	bool ok = bound == (n < MAX_DIMS ? n : MAX_DIMS);
	if (ok && (ok = in_eval(in, pred, &p)))
		*pad = truth(p.v, pred->dtype);
	in_unbind_index_vars(in, lay->inv_vars, bound, saved);
	return ok;
}

/* Evaluate the indices of an access to b and check them: rank, bounds,
 * padding without a pad value. Returns the buffer state and offset. */
BufState *in_access_buffer(Interp *in, const Buffer *b, int nidx,
			   const char *what, Span sp)
{
	BufState *bs = in_lookup_buffer(in, b);
	if (!bs) {
		in_fail(in, RUN_UB, sp, "%s of buffer %s, which is not in scope",
			what, b->name);
		return NULL;
	}
	if (nidx != bs->ndim || nidx > MAX_DIMS) {
		in_fail(in, RUN_UB, sp, "%s %s with %d indices, buffer has %d dimensions",
			what, b->name, nidx, bs->ndim);
		return NULL;
	}
	return bs;
}

bool in_cell_offset(Interp *in, const Buffer *b, BufState *bs, int nidx,
		    const int64_t *ix, const char *what, Span sp, int64_t *off)
{
	*off = bufstate_offset(bs, ix);
	if (*off < 0)
		return in_fail(in, RUN_UB, sp, "%s %s out of bounds of shape %s", what,
			       in_cell_name(in, b, nidx, ix), in_shape_text(in, bs));
	const Layout *lay = bs->buf->layout;
	const Expr *forbidden = !lay ? NULL
				: lay->forbidden ? lay->forbidden
				: lay->pad_kind == PAD_NONE_GIVEN ? lay->pad_predicate : NULL;
	if (!forbidden || !lay->inv_vars)
		return true;
	/* padding without a pad value may not be touched (semantics.md 1) */
	bool pad;
	if (!in_is_padding(in, lay, forbidden, nidx, ix, &pad))
		return false;
	if (pad)
		return in_fail(in, RUN_UB, sp, "%s %s touches padding of %s, which has no pad_value",
			       what, in_cell_name(in, b, nidx, ix), b->name);
	return true;
}

/* Evaluate the indices of an access to b and check them: rank, bounds,
 * padding without a pad value. Returns the buffer state and offset. */
BufState *in_access_cell(Interp *in, const Buffer *b, int nidx,
			 Expr *const *idx, const char *what, Span sp,
			 int64_t *ix, int64_t *off)
{
	BufState *bs = in_access_buffer(in, b, nidx, what, sp);
	if (!bs)
		return NULL;
	for (int k = 0; k < nidx; k++)
		if (!in_eval_int(in, idx[k], &ix[k], "an index"))
			return NULL;
	return in_cell_offset(in, b, bs, nidx, ix, what, sp, off) ? bs : NULL;
}

static bool eval_load(Interp *in, const Expr *e, TVal *out)
{
	int64_t ix[MAX_DIMS], off;
	if (in->probe) {
		in->not_scalar = true;
		return in_fail(in, RUN_UB, e->span, "load in a scalar fact");
	}
	const Buffer *b = e->u.load.buf;
	BufState *bs = in_access_cell(in, b, e->u.load.nidx, e->u.load.idx, "load",
				      e->span, ix, &off);
	if (!bs)
		return false;
	return in_load_cell(in, e, bs, off, ix, out);
}

bool in_load_cell(Interp *in, const Expr *e, BufState *bs, int64_t off,
		  const int64_t *ix, TVal *out)
{
	const Buffer *b = e->u.load.buf;
	in->counts.loads++;
	switch ((CellState)bs->cell[off]) {
	case CELL_UNINIT:
		if (in->in_assume)
			return in_fail(in, RUN_ASSUME_FAILED, e->span,
				       "T.assume reads uninitialised %s",
				       in_cell_name(in, b, e->u.load.nidx, ix));
		return in_fail(in, RUN_UB, e->span, "read of uninitialised %s",
			       in_cell_name(in, b, e->u.load.nidx, ix));
	case CELL_INIT:
		out->undef = false;
		break;
	case CELL_UNDEF:
		out->undef = true;
		break;
	}
	return in_convert(bs->data[off], bs->buf->dtype, e->dtype, &out->v) ||
	       in_fail(in, RUN_UB, e->span, "value of %s out of range of %s",
		       in_cell_name(in, b, e->u.load.nidx, ix), dtype_name(e->dtype));
}

/* `X[t] == T.undef()` inside T.assume: X[t] is readable, nothing more. */
const Expr *in_undef_compare_load(const Expr *e)
{
	if (e->kind != EX_BIN || e->u.bin.op != OP_EQ)
		return NULL;
	const Expr *a = e->u.bin.a, *b = e->u.bin.b;
	if (a->kind == EX_LOAD && b->kind == EX_UNDEF)
		return a;
	if (b->kind == EX_LOAD && a->kind == EX_UNDEF)
		return b;
	return NULL;
}

static bool eval_readable(Interp *in, const Expr *load, TVal *out)
{
	int64_t ix[MAX_DIMS], off;
	BufState *bs = in_access_cell(in, load->u.load.buf, load->u.load.nidx,
				      load->u.load.idx, "load", load->span, ix, &off);
	if (!bs)
		return false;
	in->counts.loads++;
	out->undef = false;
	out->v.i = bs->cell[off] != CELL_UNINIT;
	return true;
}

bool in_logical_short(const Expr *e, TVal x, TVal *out)
{
	bool is_and = e->u.bin.op == OP_AND;
	bool xa = truth(x.v, e->u.bin.a->dtype);
	if (x.undef || xa == is_and)
		return false;
	out->undef = false; /* short circuit */
	out->v.i = xa;
	return true;
}

void in_logical_join(const Expr *e, TVal x, TVal y, TVal *out)
{
	bool is_and = e->u.bin.op == OP_AND;
	bool xa = truth(x.v, e->u.bin.a->dtype);
	bool yb = truth(y.v, e->u.bin.b->dtype);
	out->v.i = is_and ? (xa && yb) : (xa || yb);
	/* a defined operand that decides the result hides the other's taint */
	out->undef = (x.undef || y.undef) && !(!y.undef && yb != is_and);
}

static bool eval_logical(Interp *in, const Expr *e, TVal *out)
{
	TVal x, y;
	if (!in_eval(in, e->u.bin.a, &x))
		return false;
	if (in_logical_short(e, x, out))
		return true;
	if (!in_eval(in, e->u.bin.b, &y))
		return false;
	in_logical_join(e, x, y, out);
	return true;
}

/* -1, 0, 1 for less, equal, greater; 2 when unordered (NaN). */
static int order(TVal x, DType tx, TVal y, DType ty)
{
	if (in_is_float(tx) || in_is_float(ty)) {
		Value a, b;
		in_convert(x.v, tx, DT_FLOAT64, &a);
		in_convert(y.v, ty, DT_FLOAT64, &b);
		return a.f < b.f ? -1 : a.f > b.f ? 1 : a.f == b.f ? 0 : 2;
	}
	return x.v.i < y.v.i ? -1 : x.v.i > y.v.i ? 1 : 0;
}

static bool compare(BinOp op, int ord)
{
	switch (op) {
	case OP_EQ: return ord == 0;
	case OP_NE: return ord != 0;
	case OP_LT: return ord == -1;
	case OP_LE: return ord == -1 || ord == 0;
	case OP_GT: return ord == 1;
	case OP_GE: return ord == 1 || ord == 0;
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
	case OP_COUNT:
		return false; /* not a comparison: eval_bin never passes one */
	}
	return false;
}

/* Integer arithmetic in 64 bits (unsigned where C would overflow), then
 * wrapped to t: two's complement at every width. */
static bool int_arith(Interp *in, const Expr *e, int64_t a, int64_t b,
		      int64_t *out)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	int64_t r = 0;
	BinOp op = e->u.bin.op;
	if ((op == OP_FLOORDIV || op == OP_FLOORMOD || op == OP_DIV) && b == 0)
		return in_fail(in, RUN_UB, e->span, "integer %s by zero (%lld %s 0)",
			       op == OP_FLOORMOD ? "modulo" : "division",
			       (long long)a, binop_symbol(op));
	if ((op == OP_SHL || op == OP_SHR) && (b < 0 || b >= dtype_bits(e->dtype)))
		return in_fail(in, RUN_UB, e->span, "shift amount %lld outside [0, %d) of %s "
			       "(%lld %s %lld)", (long long)b, dtype_bits(e->dtype),
			       dtype_name(e->dtype), (long long)a, binop_symbol(op), (long long)b);
	switch (op) {
	case OP_ADD: r = (int64_t)(ua + ub); break;
	case OP_SUB: r = (int64_t)(ua - ub); break;
	case OP_MUL: r = (int64_t)(ua * ub); break;
	case OP_DIV: r = trunc_div(a, b); break; /* TVM Div on ints */
	case OP_FLOORDIV: r = floor_div(a, b); break;
	case OP_FLOORMOD: r = floor_mod(a, b); break;
	case OP_MIN: r = a < b ? a : b; break;
	case OP_MAX: r = a > b ? a : b; break;
	case OP_SHL: r = (int64_t)(ua << b); break; /* wraps, as LLVM's shl */
	case OP_SHR: /* arithmetic on signed dtypes (LLVM ashr), logical on unsigned */
		r = !dtype_is_signed(e->dtype) ? (int64_t)(ua >> b)
		    : a >= 0		       ? (int64_t)(ua >> b)
					       : (int64_t)~(~ua >> b);
		break;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return in_fail(in, RUN_UB, e->span,
			       "internal: operator %d is not arithmetic", (int)op);
	}
	*out = wrap_int(r, e->dtype);
	return true;
}

static bool eval_bin(Interp *in, const Expr *e, TVal *out)
{
	BinOp op = e->u.bin.op;
	if (binop_is_logical(op))
		return eval_logical(in, e, out);
	const Expr *load = in->in_assume ? in_undef_compare_load(e) : NULL;
	if (load)
		return eval_readable(in, load, out);
	TVal x, y;
	return in_eval(in, e->u.bin.a, &x) && in_eval(in, e->u.bin.b, &y) &&
	       in_bin_values(in, e, x, y, out);
}

bool in_bin_values(Interp *in, const Expr *e, TVal x, TVal y, TVal *out)
{
	BinOp op = e->u.bin.op;
	DType ta = e->u.bin.a->dtype, tb = e->u.bin.b->dtype;
	out->undef = x.undef || y.undef;
	if (binop_is_compare(op)) {
		out->v.i = compare(op, order(x, ta, y, tb));
		return true;
	}
	DType t = e->dtype;
	if (op == OP_MUL && (is_zero(x, ta) || is_zero(y, tb)))
		out->undef = false; /* 0 * undef is 0 */
	Value a, b;
	if (!in_convert(x.v, ta, t, &a) || !in_convert(y.v, tb, t, &b))
		return in_fail(in, RUN_UB, e->span, "operand out of range of %s",
			       dtype_name(t));
	if (in_is_float(t))
		return float_arith(op, a.f, b.f, t, &out->v.f) ||
		       in_fail(in, RUN_UB, e->span,
			       "internal: operator %d is not arithmetic", (int)op);
	return int_arith(in, e, a.i, b.i, &out->v.i);
}

static bool eval_var(Interp *in, const Expr *e, TVal *out)
{
	const Var *v = e->u.var;
	const Slot *slot = in_var_slot(in, v);
	if (slot) {
		out->undef = slot->undef;
		return in_convert(slot->v, v->dtype, e->dtype, &out->v) ||
		       in_fail(in, RUN_UB, e->span, "value of %s out of range of %s",
			       v->name, dtype_name(e->dtype));
	}
	if (in->probe)
		in->not_scalar = true;
	return in_fail(in, RUN_UB, e->span, "internal: variable %s is not bound",
		       v->name);
}

/* Bind a let variable to x converted to its dtype, keeping x's taint. */
bool in_bind_let(Interp *in, const Var *v, const Expr *value, TVal x,
		 Span sp, SavedVar *old)
{
	Value val;
	if (!in_convert(x.v, value->dtype, v->dtype, &val))
		return in_fail(in, RUN_UB, sp, "value of %s out of range of %s",
			       v->name, dtype_name(v->dtype));
	if (!in_bind_var(in, v, val, old))
		return false;
	in_var_slot(in, v)->undef = x.undef;
	return true;
}

/* Evaluate a let's value and bind v to it; in_unbind_var(in, v, old) ends
 * the scope. */
bool in_enter_let(Interp *in, const Var *v, const Expr *value, Span sp,
		  SavedVar *old)
{
	TVal x;
	return in_eval(in, value, &x) && in_bind_let(in, v, value, x, sp, old);
}

static bool eval_let(Interp *in, const Expr *e, TVal *out)
{
	SavedVar old;
	const Var *v = e->u.let.var;
	if (!in_enter_let(in, v, e->u.let.value, e->span, &old))
		return false;
	bool ok = in_eval(in, e->u.let.body, out);
	in_unbind_var(in, v, &old);
	return ok;
}

/* Math calls (semantics.md 9): float32 through the float functions of
 * libm (expf ...), float64 through the double ones, each step rounded to
 * the dtype, so that compiled code calling the same functions agrees bit
 * for bit. sigmoid is 1 / (1 + exp(-x)) and rsqrt 1 / sqrt(x), step by
 * step; round is to nearest, ties to even (rint in the default mode).
 * float16 is the float32 computation rounded to half at the end. */
static float math_f32(MathFn f, float x, float y, float z)
{
	switch (f) {
	case MF_EXP: return expf(x);
	case MF_EXP2: return exp2f(x);
	case MF_LOG: return logf(x);
	case MF_LOG2: return log2f(x);
	case MF_LOG10: return log10f(x);
	case MF_SQRT: return sqrtf(x);
	case MF_RSQRT: return 1.0f / sqrtf(x);
	case MF_ABS: return fabsf(x);
	case MF_TANH: return tanhf(x);
	case MF_SIGMOID: {
		float t = expf(-x);
		float d = 1.0f + t;
		return 1.0f / d;
	}
	case MF_ERF: return erff(x);
	case MF_SIN: return sinf(x);
	case MF_COS: return cosf(x);
	case MF_FLOOR: return floorf(x);
	case MF_CEIL: return ceilf(x);
	case MF_ROUND: return rintf(x);
	case MF_TRUNC: return truncf(x);
	case MF_POW: return powf(x, y);
	case MF_FMA: return fmaf(x, y, z);
	case MF_COUNT: break;
	}
	return NAN;
}

static double math_f64(MathFn f, double x, double y, double z)
{
	switch (f) {
	case MF_EXP: return exp(x);
	case MF_EXP2: return exp2(x);
	case MF_LOG: return log(x);
	case MF_LOG2: return log2(x);
	case MF_LOG10: return log10(x);
	case MF_SQRT: return sqrt(x);
	case MF_RSQRT: return 1.0 / sqrt(x);
	case MF_ABS: return fabs(x);
	case MF_TANH: return tanh(x);
	case MF_SIGMOID: {
		double t = exp(-x);
		double d = 1.0 + t;
		return 1.0 / d;
	}
	case MF_ERF: return erf(x);
	case MF_SIN: return sin(x);
	case MF_COS: return cos(x);
	case MF_FLOOR: return floor(x);
	case MF_CEIL: return ceil(x);
	case MF_ROUND: return rint(x);
	case MF_TRUNC: return trunc(x);
	case MF_POW: return pow(x, y);
	case MF_FMA: return fma(x, y, z);
	case MF_COUNT: break;
	}
	return NAN;
}

static bool eval_call(Interp *in, const Expr *e, TVal *out)
{
	Value v[MATH_MAX_ARGS] = {{0}};
	out->undef = false;
	for (int i = 0; i < e->u.call.nargs; i++) {
		TVal x;
		const Expr *a = e->u.call.args[i];
		if (!in_eval(in, a, &x))
			return false;
		out->undef |= x.undef;
		if (!in_convert(x.v, a->dtype, e->dtype, &v[i]))
			return in_fail(in, RUN_UB, e->span, "operand out of range of %s",
				       dtype_name(e->dtype));
	}
	return in_call_values(in, e, v, out);
}

bool in_call_values(Interp *in, const Expr *e, const Value *v, TVal *out)
{
	MathFn f = e->u.call.fn;
	if (e->dtype == DT_FLOAT32)
		out->v.f = math_f32(f, (float)v[0].f, (float)v[1].f, (float)v[2].f);
	else if (e->dtype == DT_FLOAT16) /* the float32 function, rounded to half (kernel/half.h) */
		out->v.f = vs_f16_round(math_f32(f, (float)v[0].f, (float)v[1].f, (float)v[2].f));
	else if (e->dtype == DT_FLOAT64)
		out->v.f = math_f64(f, v[0].f, v[1].f, v[2].f);
	else if (f == MF_ABS && dtype_is_int(e->dtype))
		out->v.i = v[0].i < 0 ? wrap_int((int64_t)(0 - (uint64_t)v[0].i), e->dtype)
				      : v[0].i;
	else
		return in_fail(in, RUN_UB, e->span, "internal: T.%s on %s",
			       mathfn_name(f), dtype_name(e->dtype));
	return true;
}

bool in_unary_value(Interp *in, const Expr *e, TVal x, TVal *out)
{
	out->undef = x.undef;
	switch (e->kind) {
	case EX_NOT:
		out->v.i = !truth(x.v, e->u.un.a->dtype);
		return true;
	case EX_NEG:
		if (!in_convert(x.v, e->u.un.a->dtype, e->dtype, &out->v))
			return in_fail(in, RUN_UB, e->span, "operand out of range");
		if (in_is_float(e->dtype))
			out->v.f = -out->v.f;
		else
			out->v.i = wrap_int((int64_t)(0 - (uint64_t)out->v.i), e->dtype);
		return true;
	case EX_CAST:
		if (in_convert(x.v, e->u.un.a->dtype, e->dtype, &out->v))
			return true;
		return in_fail(in, RUN_UB, e->span, "cast of %g to %s is out of range",
			       x.v.f, dtype_name(e->dtype));
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_BIN: case EX_SELECT: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		break;
	}
	return in_fail(in, RUN_UB, e->span, "internal: expression kind %d is not unary",
		       (int)e->kind);
}

bool in_eval(Interp *in, const Expr *e, TVal *out)
{
	TVal x;
	out->undef = false;
	switch (e->kind) {
	case EX_INT:
		if (in_is_float(e->dtype))
			out->v.f = round_float((double)e->u.ival, e->dtype);
		else
			out->v.i = wrap_int(e->u.ival, e->dtype);
		return true;
	case EX_FLOAT:
		return in_convert((Value){.f = e->u.fval}, DT_FLOAT64, e->dtype, &out->v) ||
		       in_fail(in, RUN_UB, e->span, "float literal out of range of %s",
			       dtype_name(e->dtype));
	case EX_VAR:
		return eval_var(in, e, out);
	case EX_BIN:
		return eval_bin(in, e, out);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return in_eval(in, e->u.un.a, &x) && in_unary_value(in, e, x, out);
	case EX_SELECT: {
		if (!in_eval(in, e->u.sel.cond, &x))
			return false;
		const Expr *chosen =
			truth(x.v, e->u.sel.cond->dtype) ? e->u.sel.a : e->u.sel.b;
		TVal y;
		if (!in_eval(in, chosen, &y))
			return false;
		out->undef = x.undef || y.undef;
		return in_convert(y.v, chosen->dtype, e->dtype, &out->v) ||
		       in_fail(in, RUN_UB, e->span, "value out of range of %s",
			       dtype_name(e->dtype));
	}
	case EX_LOAD:
		return eval_load(in, e, out);
	case EX_UNDEF:
		if (in->probe) {
			in->not_scalar = true;
			return in_fail(in, RUN_UB, e->span, "T.undef() in a scalar fact");
		}
		out->v = in_undef_value(in, e->dtype);
		out->undef = true;
		return true;
	case EX_LET:
		return eval_let(in, e, out);
	case EX_CALL:
		return eval_call(in, e, out);
	case EX_OPAQUE:
		return in_fail(in, RUN_UNSUPPORTED, e->span,
			       "the interpreter cannot run the opaque call T.%s: what it "
			       "reads and writes is unknown", e->u.opq.name);
	case EX_COUNT:
		break;
	}
	return in_fail(in, RUN_UB, e->span, "internal: unknown expression kind %d",
		       (int)e->kind);
}

/* e evaluated as (part of) a T.assume fact: an uninitialised read makes
 * the fact false (RUN_ASSUME_FAILED) instead of UB. */
bool in_eval_in_assume(Interp *in, const Expr *e, TVal *x)
{
	in->in_assume++;
	bool ok = in_eval(in, e, x);
	in->in_assume--;
	return ok;
}

bool in_eval_fact(Interp *in, const Expr *e, bool *holds)
{
	TVal x;
	bool ok = in_eval_in_assume(in, e, &x);
	if (ok)
		*holds = truth(x.v, e->dtype);
	return ok;
}
