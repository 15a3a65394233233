/* backend/cg_expr.c — LLVM IR for expressions, value for value what the
 * reference interpreter computes (kernel/interp.c): integers wrap to
 * their dtype in two's complement (nsw only where the range analysis
 * shows no wrap), `//` and `%` are floor division and modulo with the
 * interpreter's INT_MIN // -1 wrap, float32 arithmetic rounds like the
 * interpreter's double-then-round (float16: in float, then rounded to
 * half, see below), comparisons mix dtypes through int64
 * or float64, and `and`, `or`, T.if_then_else only evaluate what the
 * interpreter evaluates unless evaluating more cannot be undefined. */
#include "backend/cg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/half.h"

/* ---------- types ---------- */

LLVMTypeRef cg_type(Cg *cg, DType t)
{
	switch (t) {
	case DT_BOOL: return LLVMInt1TypeInContext(cg->ctx);
	case DT_INT8: case DT_UINT8: return LLVMInt8TypeInContext(cg->ctx);
	case DT_INT16: return LLVMInt16TypeInContext(cg->ctx);
	case DT_INT32: return LLVMInt32TypeInContext(cg->ctx);
	case DT_INT64: case DT_HANDLE: return LLVMInt64TypeInContext(cg->ctx);
	case DT_FLOAT16: return LLVMHalfTypeInContext(cg->ctx);
	case DT_FLOAT32: return LLVMFloatTypeInContext(cg->ctx);
	case DT_FLOAT64: return LLVMDoubleTypeInContext(cg->ctx);
	case DT_VOID: case DT_COUNT: break;
	}
	return LLVMInt32TypeInContext(cg->ctx);
}

LLVMTypeRef cg_mem_type(Cg *cg, DType t)
{
	return t == DT_BOOL ? LLVMInt8TypeInContext(cg->ctx) : cg_type(cg, t);
}

static bool is_int_like(DType t) { return dtype_is_int(t) || t == DT_BOOL; }

/* A result's range: the computed one when it fits t, else t's own (every
 * value of t, unbounded for a float). */
static Interval clamp_range(Interval r, DType t)
{
	return iv_fits(r, t) ? r : iv_dtype(t);
}

/* ---------- environment ---------- */

bool cg_fail(Cg *cg, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!cg->failed)
		diag_vadd(cg->d, DIAG_ERROR, sp, fmt, ap);
	va_end(ap);
	cg->failed = true;
	return false;
}

void cg_bind(Cg *cg, const Var *v, LLVMValueRef x, Interval r)
{
	if (cg->nvars == cg->capvars) {
		int cap = cg->capvars ? 2 * cg->capvars : 32;
		CgVar *vars = realloc(cg->vars, sizeof *vars * (size_t)cap);
		if (!vars) {
			cg_fail(cg, v->span, "out of memory");
			return;
		}
		cg->vars = vars;
		cg->capvars = cap;
	}
	cg->vars[cg->nvars++] = (CgVar){v, x, r};
}

void cg_unbind(Cg *cg, int mark) { cg->nvars = mark; }

CgVar *cg_lookup(Cg *cg, const Var *v)
{
	for (int i = cg->nvars - 1; i >= 0; i--)
		if (cg->vars[i].var == v)
			return &cg->vars[i];
	return NULL;
}

CgBuf *cg_push_buffer(Cg *cg, const Buffer *b, LLVMValueRef ptr)
{
	if (cg->nbufs == cg->capbufs) {
		int cap = cg->capbufs ? 2 * cg->capbufs : 16;
		CgBuf *bufs = realloc(cg->bufs, sizeof *bufs * (size_t)cap);
		if (!bufs) {
			cg_fail(cg, b->span, "out of memory");
			return NULL;
		}
		cg->bufs = bufs;
		cg->capbufs = cap;
	}
	CgBuf *cb = &cg->bufs[cg->nbufs++];
	memset(cb, 0, sizeof *cb);
	cb->buf = b;
	cb->ptr = ptr;
	cb->ngroups = b->ndim ? b->ndim : 1;
	cb->freeze = cg->lf && bufset_has(&cg->lf->undef_bufs, b);
	return cb;
}

CgBuf *cg_find_buffer(Cg *cg, const Buffer *b)
{
	for (int i = cg->nbufs - 1; i >= 0; i--)
		if (cg->bufs[i].buf == b)
			return &cg->bufs[i];
	return NULL;
}

LLVMValueRef cg_int64(Cg *cg, int64_t v)
{
	return LLVMConstInt(LLVMInt64TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

static LLVMValueRef const_int(Cg *cg, DType t, int64_t v)
{
	return LLVMConstInt(cg_type(cg, t), (unsigned long long)v, dtype_is_signed(t));
}

static CgVal int_val(Cg *cg, DType t, int64_t v)
{
	int64_t w = dtype_wrap_int(v, t);
	return (CgVal){const_int(cg, t, w), iv_point(w)};
}

static LLVMValueRef float_const(Cg *cg, DType t, double v)
{
	if (t == DT_FLOAT32)
		v = (double)(float)v;
	else if (t == DT_FLOAT16)
		v = vs_f16_round(v); /* then exact in `half` */
	return LLVMConstReal(cg_type(cg, t), v);
}

/* ---------- intrinsics ---------- */

LLVMValueRef cg_call_intrinsic(Cg *cg, const char *name, LLVMTypeRef overload,
			       LLVMValueRef *args, unsigned nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, &overload, 1);
	LLVMTypeRef fty = LLVMIntrinsicGetType(cg->ctx, id, &overload, 1);
	return LLVMBuildCall2(cg->b, fty, fn, args, nargs, "");
}

/* ---------- float16 ----------
 *
 * float16 values are LLVM `half`, but no arithmetic is done in `half`:
 * operands are extended to float (exact), the operation is done in
 * float and the result truncated to half once, which is exactly IEEE half
 * arithmetic for + - * / sqrt (kernel/half.h says why) and what the
 * interpreter computes. Only fpext half -> float and fptrunc float -> half
 * are emitted: with F16C they are vcvtph2ps / vcvtps2ph, without it LLVM
 * 14 calls __gnu_h2f_ieee / __gnu_f2h_ieee, which the JIT gets from
 * program.c. A double is never truncated to half directly
 * (that needs __truncdfhf2): see half_from_double. */

static LLVMTypeRef float_ty(Cg *cg) { return LLVMFloatTypeInContext(cg->ctx); }

static LLVMValueRef half_to_float(Cg *cg, LLVMValueRef x)
{
	return LLVMBuildFPExt(cg->b, x, float_ty(cg), "");
}

static LLVMValueRef half_from_float(Cg *cg, LLVMValueRef x)
{
	return LLVMBuildFPTrunc(cg->b, x, LLVMHalfTypeInContext(cg->ctx), "");
}

/* A double rounded to half correctly in two steps: first to float with
 * round-to-odd (the float nearest to x with an odd last bit when x is not
 * a float), then to half to nearest even. Round-to-odd at >= p + 2 bits
 * (24 >= 11 + 2) followed by round-to-nearest at p bits is one
 * round-to-nearest (Boldo and Melquiond, "When double rounding is odd",
 * 2005); a plain double -> float -> half would round twice. Round-to-odd
 * from the RNE float f: keep f if exact or odd, else step its bits one
 * unit toward x (x and f have the same sign; inf steps down to FLT_MAX,
 * which still rounds to inf in half; NaN compares unordered, kept). */
static LLVMValueRef half_from_double(Cg *cg, LLVMValueRef x)
{
	LLVMBuilderRef b = cg->b;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), dbl = LLVMDoubleTypeInContext(cg->ctx);
	LLVMValueRef f = LLVMBuildFPTrunc(b, x, float_ty(cg), "");
	LLVMValueRef back = LLVMBuildFPExt(b, f, dbl, "");
	LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, x, "");
	LLVMValueRef bits = LLVMBuildBitCast(b, f, i32, "");
	LLVMValueRef one = LLVMConstInt(i32, 1, 0);
	LLVMValueRef even = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, bits, one, ""),
					  LLVMConstNull(i32), "");
	LLVMValueRef fb = cg_call_intrinsic(cg, "llvm.fabs", dbl, &back, 1);
	LLVMValueRef fx = cg_call_intrinsic(cg, "llvm.fabs", dbl, &x, 1);
	LLVMValueRef above = LLVMBuildFCmp(b, LLVMRealOGT, fb, fx, "");
	LLVMValueRef step = LLVMBuildSelect(b, above, LLVMConstInt(i32, (unsigned long long)-1, 1),
					    one, "");
	LLVMValueRef fix = LLVMBuildAnd(b, inexact, even, "");
	LLVMValueRef odd = LLVMBuildSelect(b, fix, LLVMBuildAdd(b, bits, step, ""), bits, "");
	return half_from_float(cg, LLVMBuildBitCast(b, odd, float_ty(cg), ""));
}

/* ---------- conversions (the interpreter's `convert`) ---------- */

CgVal cg_convert(Cg *cg, CgVal x, DType from, DType to)
{
	LLVMBuilderRef b = cg->b;
	if (from == to)
		return x;
	LLVMTypeRef ty = cg_type(cg, to);
	if (from == DT_FLOAT16) { /* exact in float; then as from float32 */
		x.v = half_to_float(cg, x.v);
		from = DT_FLOAT32;
		if (to == DT_FLOAT32)
			return x;
	}
	if (to == DT_FLOAT16) {
		CgVal r = {NULL, iv_unbounded()};
		if (from == DT_FLOAT64)
			r.v = half_from_double(cg, x.v);
		else if (from == DT_FLOAT32)
			r.v = half_from_float(cg, x.v);
		else /* the float is exact below 2^24, and any |i| >= 65520 gives inf either way */
			r.v = half_from_float(cg, dtype_is_signed(from)
							  ? LLVMBuildSIToFP(b, x.v, float_ty(cg), "")
							  : LLVMBuildUIToFP(b, x.v, float_ty(cg), ""));
		return r;
	}
	if (dtype_is_float(to)) {
		CgVal r = {NULL, iv_unbounded()};
		if (dtype_is_float(from))
			r.v = to == DT_FLOAT32 ? LLVMBuildFPTrunc(b, x.v, ty, "")
					       : LLVMBuildFPExt(b, x.v, ty, "");
		else if (dtype_is_signed(from))
			r.v = LLVMBuildSIToFP(b, x.v, ty, ""); /* one rounding, as (float)i */
		else
			r.v = LLVMBuildUIToFP(b, x.v, ty, "");
		return r;
	}
	if (to == DT_BOOL) {
		LLVMValueRef v = dtype_is_float(from)
					 ? LLVMBuildFCmp(b, LLVMRealUNE, x.v, LLVMConstReal(LLVMTypeOf(x.v), 0), "")
					 : LLVMBuildICmp(b, LLVMIntNE, x.v, LLVMConstNull(LLVMTypeOf(x.v)), "");
		IvTruth nz = iv_compare(OP_NE, x.r, iv_point(0));
		Interval r = nz == IV_TRUE ? iv_point(1) : nz == IV_FALSE ? iv_point(0) : iv_make(0, 1);
		return (CgVal){v, r};
	}
	if (dtype_is_float(from)) {
		/* out of range is undefined in the source: poison is fine */
		LLVMValueRef v = to == DT_UINT8 ? LLVMBuildFPToUI(b, x.v, ty, "")
						: LLVMBuildFPToSI(b, x.v, ty, "");
		return (CgVal){v, iv_dtype(to)};
	}
	int fb = from == DT_BOOL ? 1 : dtype_bits(from), tb = dtype_bits(to);
	LLVMValueRef v = x.v;
	if (tb > fb)
		v = dtype_is_signed(from) && from != DT_BOOL ? LLVMBuildSExt(b, v, ty, "")
							     : LLVMBuildZExt(b, v, ty, "");
	else if (tb < fb)
		v = LLVMBuildTrunc(b, v, ty, "");
	return (CgVal){v, clamp_range(x.r, to)};
}

LLVMValueRef cg_truth(Cg *cg, CgVal x, DType t)
{
	return cg_convert(cg, x, t, DT_BOOL).v;
}

CgVal cg_expr_as(Cg *cg, const Expr *e, DType t)
{
	return cg_convert(cg, cg_expr(cg, e), e->dtype, t);
}

/* ---------- speculation ---------- */

bool cg_speculatable(const Expr *e)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return true;
	case EX_LOAD: case EX_OPAQUE:
		return false;
	case EX_BIN: {
		BinOp op = e->u.bin.op;
		bool div = op == OP_DIV || op == OP_FLOORDIV || op == OP_FLOORMOD;
		if (div && !dtype_is_float(e->dtype)) {
			const Expr *d = e->u.bin.b;
			if (d->kind != EX_INT || d->u.ival == 0)
				return false;
		}
		if (op == OP_SHL || op == OP_SHR) { /* an amount out of range is UB */
			const Expr *d = e->u.bin.b;
			if (d->kind != EX_INT || d->u.ival < 0 || d->u.ival >= dtype_bits(e->dtype))
				return false;
		}
		return cg_speculatable(e->u.bin.a) && cg_speculatable(e->u.bin.b);
	}
	case EX_NOT: case EX_NEG: case EX_CAST:
		return cg_speculatable(e->u.un.a);
	case EX_SELECT:
		return cg_speculatable(e->u.sel.cond) && cg_speculatable(e->u.sel.a) &&
		       cg_speculatable(e->u.sel.b);
	case EX_LET:
		return cg_speculatable(e->u.let.value) && cg_speculatable(e->u.let.body);
	case EX_CALL: /* a math call has no undefined behaviour */
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!cg_speculatable(e->u.call.args[i]))
				return false;
		return true;
	case EX_COUNT:
		break;
	}
	return false;
}

/* ---------- integer arithmetic ---------- */

static bool positive(Interval r) { return r.lo > 0; }
static bool nonneg(Interval r) { return r.lo >= 0; }

/* `nsw` (signed) or `nuw` (uint8) add/sub/mul when the result cannot wrap. */
static LLVMValueRef build_wrapping(Cg *cg, BinOp op, DType t, LLVMValueRef x, LLVMValueRef y,
				   bool no_wrap)
{
	LLVMBuilderRef b = cg->b;
	bool sw = no_wrap && dtype_is_signed(t), uw = no_wrap && !dtype_is_signed(t);
	switch (op) {
	case OP_ADD:
		return sw ? LLVMBuildNSWAdd(b, x, y, "") : uw ? LLVMBuildNUWAdd(b, x, y, "")
							       : LLVMBuildAdd(b, x, y, "");
	case OP_SUB:
		return sw ? LLVMBuildNSWSub(b, x, y, "") : uw ? LLVMBuildNUWSub(b, x, y, "")
							       : LLVMBuildSub(b, x, y, "");
	case OP_MUL:
		return sw ? LLVMBuildNSWMul(b, x, y, "") : uw ? LLVMBuildNUWMul(b, x, y, "")
							       : LLVMBuildMul(b, x, y, "");
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return x;
}

/* The divisor with -1 replaced by 1 (sdiv INT_MIN, -1 is undefined in
 * LLVM but wraps in the interpreter), and whether it was -1. */
static LLVMValueRef safe_divisor(Cg *cg, LLVMValueRef d, Interval dr, LLVMValueRef *is_m1)
{
	*is_m1 = NULL;
	if (!iv_contains(dr, -1))
		return d;
	LLVMTypeRef ty = LLVMTypeOf(d);
	*is_m1 = LLVMBuildICmp(cg->b, LLVMIntEQ, d, LLVMConstAllOnes(ty), "");
	return LLVMBuildSelect(cg->b, *is_m1, LLVMConstInt(ty, 1, 0), d, "");
}

/* q, or 0 - a where the divisor was -1. */
static LLVMValueRef fix_m1_quotient(Cg *cg, LLVMValueRef is_m1, LLVMValueRef a, LLVMValueRef q)
{
	if (!is_m1)
		return q;
	LLVMValueRef neg = LLVMBuildSub(cg->b, LLVMConstNull(LLVMTypeOf(a)), a, "");
	return LLVMBuildSelect(cg->b, is_m1, neg, q, "");
}

/* Whether the truncated remainder r needs the floor correction: r != 0
 * and r, d of different signs. */
static LLVMValueRef needs_floor_fix(Cg *cg, LLVMValueRef r, LLVMValueRef d)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(r));
	LLVMValueRef nz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
	LLVMValueRef sign = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, d, ""), zero, "");
	return LLVMBuildAnd(b, nz, sign, "");
}

static CgVal int_division(Cg *cg, BinOp op, DType t, CgVal a, CgVal c)
{
	LLVMBuilderRef b = cg->b;
	if (!dtype_is_signed(t) || (nonneg(a.r) && positive(c.r))) {
		/* both operands non-negative: floor and truncation agree */
		Interval r = iv_unbounded();
		if (op != OP_FLOORMOD && nonneg(a.r) && positive(c.r))
			r = iv_truncdiv(a.r, c.r);
		else if (op == OP_FLOORMOD && positive(c.r))
			r = iv_floormod(a.r, c.r);
		LLVMValueRef v = op == OP_FLOORMOD ? LLVMBuildURem(b, a.v, c.v, "")
						   : LLVMBuildUDiv(b, a.v, c.v, "");
		return (CgVal){v, clamp_range(r, t)};
	}
	LLVMValueRef is_m1, d = safe_divisor(cg, c.v, c.r, &is_m1);
	if (op == OP_DIV) {
		LLVMValueRef q = fix_m1_quotient(cg, is_m1, a.v, LLVMBuildSDiv(b, a.v, d, ""));
		Interval r = positive(c.r) ? iv_truncdiv(a.r, c.r) : iv_unbounded();
		return (CgVal){q, clamp_range(r, t)};
	}
	LLVMValueRef rem = LLVMBuildSRem(b, a.v, d, "");
	LLVMValueRef fix = needs_floor_fix(cg, rem, d);
	if (op == OP_FLOORMOD) {
		LLVMValueRef add = LLVMBuildSelect(b, fix, d, LLVMConstNull(LLVMTypeOf(d)), "");
		Interval r = positive(c.r) ? iv_floormod(a.r, c.r) : iv_unbounded();
		return (CgVal){LLVMBuildAdd(b, rem, add, ""), clamp_range(r, t)};
	}
	LLVMValueRef q = LLVMBuildSDiv(b, a.v, d, "");
	q = LLVMBuildSub(b, q, LLVMBuildZExt(b, fix, LLVMTypeOf(q), ""), "");
	Interval r = positive(c.r) ? iv_floordiv(a.r, c.r) : iv_unbounded();
	return (CgVal){fix_m1_quotient(cg, is_m1, a.v, q), clamp_range(r, t)};
}

static CgVal int_minmax(Cg *cg, BinOp op, DType t, CgVal a, CgVal c)
{
	bool s = dtype_is_signed(t);
	LLVMIntPredicate p = op == OP_MIN ? (s ? LLVMIntSLT : LLVMIntULT) : (s ? LLVMIntSGT : LLVMIntUGT);
	LLVMValueRef cmp = LLVMBuildICmp(cg->b, p, a.v, c.v, "");
	Interval r = op == OP_MIN ? iv_min(a.r, c.r) : iv_max(a.r, c.r);
	return (CgVal){LLVMBuildSelect(cg->b, cmp, a.v, c.v, ""), clamp_range(r, t)};
}

static CgVal int_arith(Cg *cg, BinOp op, DType t, CgVal a, CgVal c)
{
	if (t == DT_BOOL) {
		/* bool arithmetic: in int64, then != 0 (the interpreter's wrap) */
		CgVal x = cg_convert(cg, a, DT_BOOL, DT_INT64), y = cg_convert(cg, c, DT_BOOL, DT_INT64);
		return cg_convert(cg, int_arith(cg, op, DT_INT64, x, y), DT_INT64, DT_BOOL);
	}
	Interval r = iv_unbounded();
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: r = iv_arith(op, a.r, c.r); break;
	case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD:
		return int_division(cg, op, t, a, c);
	case OP_MIN: case OP_MAX:
		return int_minmax(cg, op, t, a, c);
	case OP_SHL: /* wraps, as the interpreter; an amount outside [0, bits) is UB */
		return (CgVal){LLVMBuildShl(cg->b, a.v, c.v, ""), iv_dtype(t)};
	case OP_SHR: /* arithmetic on signed dtypes, logical on unsigned */
		return (CgVal){dtype_is_signed(t) ? LLVMBuildAShr(cg->b, a.v, c.v, "")
						  : LLVMBuildLShr(cg->b, a.v, c.v, ""),
			       iv_dtype(t)};
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return a;
	}
	bool fits = iv_fits(r, t);
	return (CgVal){build_wrapping(cg, op, t, a.v, c.v, fits), fits ? r : iv_dtype(t)};
}

/* ---------- float arithmetic ---------- */

static LLVMValueRef to_double(Cg *cg, LLVMValueRef x, DType t)
{
	if (t == DT_FLOAT16)
		x = half_to_float(cg, x);
	return t != DT_FLOAT64 ? LLVMBuildFPExt(cg->b, x, LLVMDoubleTypeInContext(cg->ctx), "") : x;
}

static LLVMValueRef from_double(Cg *cg, LLVMValueRef x, DType t)
{
	if (t == DT_FLOAT16)
		return half_from_double(cg, x);
	return t == DT_FLOAT32 ? LLVMBuildFPTrunc(cg->b, x, cg_type(cg, t), "") : x;
}

/* floor(a / b) and a - floor(a / b) * b are computed in double and
 * rounded once, like the interpreter (a float32 quotient could round up
 * to an integer and change the floor). */
static LLVMValueRef float_floor_op(Cg *cg, BinOp op, DType t, LLVMValueRef a, LLVMValueRef c)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef x = to_double(cg, a, t), y = to_double(cg, c, t);
	LLVMValueRef q = LLVMBuildFDiv(b, x, y, "");
	LLVMValueRef f = cg_call_intrinsic(cg, "llvm.floor", LLVMDoubleTypeInContext(cg->ctx), &q, 1);
	if (op == OP_FLOORMOD)
		f = LLVMBuildFSub(b, x, LLVMBuildFMul(b, f, y, ""), "");
	return from_double(cg, f, t);
}

static LLVMValueRef float_arith(Cg *cg, BinOp op, DType t, LLVMValueRef a, LLVMValueRef c)
{
	LLVMBuilderRef b = cg->b;
	if (t == DT_FLOAT16 && op != OP_FLOORDIV && op != OP_FLOORMOD) /* in float, one rounding */
		return half_from_float(cg, float_arith(cg, op, DT_FLOAT32, half_to_float(cg, a),
						       half_to_float(cg, c)));
	switch (op) {
	case OP_ADD: return LLVMBuildFAdd(b, a, c, "");
	case OP_SUB: return LLVMBuildFSub(b, a, c, "");
	case OP_MUL: return LLVMBuildFMul(b, a, c, "");
	case OP_DIV: return LLVMBuildFDiv(b, a, c, "");
	case OP_FLOORDIV:
	case OP_FLOORMOD:
		return float_floor_op(cg, op, t, a, c);
	case OP_MIN:
		return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, a, c, ""), a, c, "");
	case OP_MAX:
		return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, a, c, ""), a, c, "");
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return a;
}

/* In `real` mode floats are reals (semantics.md 1), so x * y + z may be
 * contracted when the build asks for it (contract_fma): llvm.fmuladd lets
 * the target fuse it. By default, and always in `ieee`, the two roundings
 * are kept, as the interpreter makes them. */
static bool is_float_mul(const Expr *e, DType t)
{
	return e->kind == EX_BIN && e->u.bin.op == OP_MUL && e->dtype == t;
}

static bool contract_fma(Cg *cg, const Expr *e, CgVal *out)
{
	DType t = e->dtype;
	BinOp op = e->u.bin.op;
	if (cg->fm != FLOAT_REAL || !cg->contract_fma || (op != OP_ADD && op != OP_SUB) ||
	    t == DT_FLOAT16) /* no half arithmetic in LLVM (see float16 above) */
		return false;
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	bool left = is_float_mul(x, t);
	if (!left && !is_float_mul(y, t))
		return false;
	const Expr *mul = left ? x : y, *other = left ? y : x;
	LLVMValueRef args[3];
	args[0] = cg_expr_as(cg, mul->u.bin.a, t).v;
	args[1] = cg_expr_as(cg, mul->u.bin.b, t).v;
	args[2] = cg_expr_as(cg, other, t).v;
	if (op == OP_SUB && left) /* a*b - c */
		args[2] = LLVMBuildFNeg(cg->b, args[2], "");
	else if (op == OP_SUB) /* c - a*b */
		args[0] = LLVMBuildFNeg(cg->b, args[0], "");
	out->v = cg_call_intrinsic(cg, "llvm.fmuladd", cg_type(cg, t), args, 3);
	out->r = iv_unbounded();
	return true;
}

/* ---------- comparisons and logic ---------- */

static LLVMValueRef compare(Cg *cg, BinOp op, CgVal a, DType ta, CgVal c, DType tc)
{
	LLVMBuilderRef b = cg->b;
	if (dtype_is_float(ta) || dtype_is_float(tc)) {
		DType t = ta == tc ? ta : DT_FLOAT64;
		if (t == DT_FLOAT16) /* exact in float */
			t = DT_FLOAT32;
		LLVMValueRef x = cg_convert(cg, a, ta, t).v, y = cg_convert(cg, c, tc, t).v;
		LLVMRealPredicate p = op == OP_EQ ? LLVMRealOEQ : op == OP_NE ? LLVMRealUNE
				    : op == OP_LT ? LLVMRealOLT : op == OP_LE ? LLVMRealOLE
				    : op == OP_GT ? LLVMRealOGT : LLVMRealOGE;
		return LLVMBuildFCmp(b, p, x, y, "");
	}
	bool s = true;
	if (ta == tc) {
		s = dtype_is_signed(ta) && ta != DT_BOOL;
	} else { /* values compare as int64, each extended from its dtype */
		a = cg_convert(cg, a, ta, DT_INT64);
		c = cg_convert(cg, c, tc, DT_INT64);
	}
	LLVMIntPredicate p = op == OP_EQ ? LLVMIntEQ : op == OP_NE ? LLVMIntNE
			   : op == OP_LT ? (s ? LLVMIntSLT : LLVMIntULT)
			   : op == OP_LE ? (s ? LLVMIntSLE : LLVMIntULE)
			   : op == OP_GT ? (s ? LLVMIntSGT : LLVMIntUGT)
				         : (s ? LLVMIntSGE : LLVMIntUGE);
	return LLVMBuildICmp(b, p, a.v, c.v, "");
}

static LLVMBasicBlockRef new_block(Cg *cg, const char *name)
{
	return LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, name);
}

/* `a and b`, `a or b`: b is evaluated only when a does not decide, unless
 * evaluating it cannot be undefined. */
static CgVal logical(Cg *cg, const Expr *e)
{
	bool is_and = e->u.bin.op == OP_AND;
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	LLVMValueRef a = cg_truth(cg, cg_expr(cg, x), x->dtype);
	LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx);
	Interval r = iv_make(0, 1);
	if (cg_speculatable(y)) {
		LLVMValueRef c = cg_truth(cg, cg_expr(cg, y), y->dtype);
		/* select, not and/or: a poison b must not leak when a decides */
		LLVMValueRef v = is_and ? LLVMBuildSelect(cg->b, a, c, LLVMConstInt(i1, 0, 0), "")
					: LLVMBuildSelect(cg->b, a, LLVMConstInt(i1, 1, 0), c, "");
		return (CgVal){v, r};
	}
	LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef more = new_block(cg, is_and ? "and.rhs" : "or.rhs");
	LLVMBasicBlockRef done = new_block(cg, is_and ? "and.end" : "or.end");
	if (is_and)
		LLVMBuildCondBr(cg->b, a, more, done);
	else
		LLVMBuildCondBr(cg->b, a, done, more);
	LLVMPositionBuilderAtEnd(cg->b, more);
	LLVMValueRef c = cg_truth(cg, cg_expr(cg, y), y->dtype);
	LLVMBasicBlockRef more_end = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
	LLVMValueRef phi = LLVMBuildPhi(cg->b, i1, "");
	LLVMValueRef vals[2] = {LLVMConstInt(i1, is_and ? 0 : 1, 0), c};
	LLVMBasicBlockRef blocks[2] = {from, more_end};
	LLVMAddIncoming(phi, vals, blocks, 2);
	return (CgVal){phi, r};
}

static CgVal binary(Cg *cg, const Expr *e)
{
	BinOp op = e->u.bin.op;
	if (binop_is_logical(op))
		return logical(cg, e);
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	if (binop_is_compare(op)) {
		CgVal a = cg_expr(cg, x), c = cg_expr(cg, y);
		return (CgVal){compare(cg, op, a, x->dtype, c, y->dtype), iv_make(0, 1)};
	}
	DType t = e->dtype;
	CgVal out;
	if (dtype_is_float(t) && contract_fma(cg, e, &out))
		return out;
	CgVal a = cg_expr_as(cg, x, t), c = cg_expr_as(cg, y, t);
	if (dtype_is_float(t))
		return (CgVal){float_arith(cg, op, t, a.v, c.v), iv_unbounded()};
	return int_arith(cg, op, t, a, c);
}

/* T.if_then_else: only the chosen side is evaluated, unless both sides
 * are speculatable (then a select). */
static CgVal select_expr(Cg *cg, const Expr *e)
{
	DType t = e->dtype;
	LLVMValueRef c = cg_truth(cg, cg_expr(cg, e->u.sel.cond), e->u.sel.cond->dtype);
	if (cg_speculatable(e->u.sel.a) && cg_speculatable(e->u.sel.b)) {
		CgVal a = cg_expr_as(cg, e->u.sel.a, t), b = cg_expr_as(cg, e->u.sel.b, t);
		return (CgVal){LLVMBuildSelect(cg->b, c, a.v, b.v, ""), iv_union(a.r, b.r)};
	}
	LLVMBasicBlockRef then_b = new_block(cg, "sel.then"), else_b = new_block(cg, "sel.else");
	LLVMBasicBlockRef done = new_block(cg, "sel.end");
	LLVMBuildCondBr(cg->b, c, then_b, else_b);
	LLVMPositionBuilderAtEnd(cg->b, then_b);
	CgVal a = cg_expr_as(cg, e->u.sel.a, t);
	LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, else_b);
	CgVal b = cg_expr_as(cg, e->u.sel.b, t);
	LLVMBasicBlockRef else_end = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
	LLVMValueRef phi = LLVMBuildPhi(cg->b, cg_type(cg, t), "");
	LLVMValueRef vals[2] = {a.v, b.v};
	LLVMBasicBlockRef blocks[2] = {then_end, else_end};
	LLVMAddIncoming(phi, vals, blocks, 2);
	return (CgVal){phi, iv_union(a.r, b.r)};
}

/* ---------- memory ---------- */

void cg_map_accesses(Cg *cg, const LoweredFunc *lf)
{
	ptrmap_free(&cg->access_map);
	for (int i = 0; i < lf->naccesses; i++)
		if (!ptrmap_put(&cg->access_map, lf->accesses[i].node, (uintptr_t)&lf->accesses[i])) {
			ptrmap_free(&cg->access_map); /* no map: every access is looked up as unknown */
			return;
		}
}

static const FlatAccess *find_access(Cg *cg, const void *node)
{
	uintptr_t v;
	return ptrmap_get(&cg->access_map, node, &v) ? (const FlatAccess *)v : NULL;
}

/* The nested array type [S1 x [S2 x ... T]] of a one-group buffer whose
 * axes after the first have literal extents; NULL otherwise. */
static LLVMTypeRef nested_array_type(Cg *cg, const Buffer *phys)
{
	LLVMTypeRef t = cg_mem_type(cg, phys->dtype);
	if (phys->naxis_separators || phys->ndim < 2)
		return NULL;
	for (int k = phys->ndim - 1; k >= 1; k--) {
		const Expr *e = phys->shape[k];
		if (e->kind != EX_INT || e->u.ival < 1 || e->u.ival > (1 << 30))
			return NULL;
		t = LLVMArrayType(t, (unsigned)e->u.ival);
	}
	return t;
}

/* base + x0 * S1 * ... + x1 * S2 * ... + ... as one GEP: the flat index
 * of the group, with each physical axis index in range in a program
 * without undefined behaviour (so `inbounds` holds). */
static LLVMValueRef nested_address(Cg *cg, CgBuf *cb, const FlatAccess *acc)
{
	const Buffer *phys = cg->lf->bufs[acc->buf].physical;
	LLVMTypeRef at = nested_array_type(cg, phys);
	if (!at)
		return NULL;
	LLVMValueRef idx[16];
	if (phys->ndim > 16)
		return NULL;
	for (int k = 0; k < phys->ndim; k++)
		idx[k] = cg_expr_as(cg, acc->axis[k], DT_INT64).v;
	LLVMValueRef base = LLVMBuildPointerCast(cg->b, cb->ptr, LLVMPointerType(at, 0), "");
	return LLVMBuildInBoundsGEP2(cg->b, at, base, idx, (unsigned)phys->ndim, "");
}

LLVMValueRef cg_address(Cg *cg, const Buffer *b, int nidx, Expr *const *idx, Span sp,
			const void *node)
{
	CgBuf *cb = cg_find_buffer(cg, b);
	if (!cb) {
		cg_fail(cg, sp, "internal: buffer %s is not in scope in the code generator", b->name);
		return NULL;
	}
	if (cg->red.acc && node && (node == cg->red.load || node == cg->red.store)) {
		CgVar *lv = cg_lookup(cg, cg->red.lane);
		if (!lv) {
			cg_fail(cg, sp, "internal: the reduction lane is not bound");
			return NULL;
		}
		CgVal k = cg_convert(cg, (CgVal){lv->v, lv->r}, cg->red.lane->dtype, DT_INT64);
		LLVMValueRef off = LLVMBuildSub(cg->b, k.v, cg_int64(cg, cg->red.lane_lo), "");
		return LLVMBuildInBoundsGEP2(cg->b, cg_mem_type(cg, b->dtype), cg->red.acc, &off, 1, "");
	}
	const FlatAccess *acc = find_access(cg, node);
	LLVMValueRef nested = acc ? nested_address(cg, cb, acc) : NULL;
	if (nested) {
		LLVMTypeRef et = cg_mem_type(cg, b->dtype);
		return LLVMBuildPointerCast(cg->b, nested, LLVMPointerType(et, 0), "");
	}
	LLVMValueRef off = NULL;
	if (b->ndim == 0 || nidx == 0)
		off = cg_int64(cg, 0);
	/* flat axis g has a proven index type; the offset over several axes
	 * is proven to fit int64 (flatten.offset_fits_int64), and in-bounds
	 * accesses are the only ones a program without UB makes */
	for (int g = 0; g < nidx; g++) {
		CgVal x = cg_expr_as(cg, idx[g], DT_INT64);
		off = off ? LLVMBuildNSWAdd(cg->b, LLVMBuildNSWMul(cg->b, off, cb->ext[g], ""), x.v, "")
			  : x.v;
	}
	LLVMTypeRef et = cg_mem_type(cg, b->dtype);
	return LLVMBuildInBoundsGEP2(cg->b, et, cb->ptr, &off, 1, "");
}

static CgVal load(Cg *cg, const Expr *e)
{
	const Buffer *b = e->u.load.buf;
	LLVMValueRef p = cg_address(cg, b, e->u.load.nidx, e->u.load.idx, e->span, e);
	if (!p)
		return (CgVal){LLVMGetUndef(cg_type(cg, e->dtype)), iv_dtype(e->dtype)};
	LLVMValueRef v = LLVMBuildLoad2(cg->b, cg_mem_type(cg, b->dtype), p, "");
	CgBuf *cb = cg_find_buffer(cg, b);
	if (cb->freeze) /* a removed T.undef() store may leave this cell unwritten */
		v = LLVMBuildFreeze(cg->b, v, "");
	if (b->dtype == DT_BOOL)
		v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	return cg_convert(cg, (CgVal){v, iv_dtype(b->dtype)}, b->dtype, e->dtype);
}

/* ---------- expressions ---------- */

static CgVal literal_float(Cg *cg, const Expr *e)
{
	DType t = e->dtype;
	if (dtype_is_float(t))
		return (CgVal){float_const(cg, t, e->u.fval), iv_unbounded()};
	double x = trunc(e->u.fval);
	Interval d = iv_dtype(t);
	if (isnan(x) || x < (double)d.lo || x >= -(double)INT64_MIN ||
	    (t != DT_INT64 && x > (double)d.hi))
		return (CgVal){LLVMConstNull(cg_type(cg, t)), iv_point(0)}; /* UB in the source */
	return int_val(cg, t, (int64_t)x);
}

static CgVal let_expr(Cg *cg, const Expr *e)
{
	const Var *v = e->u.let.var;
	CgVal x = cg_expr_as(cg, e->u.let.value, v->dtype);
	int mark = cg->nvars;
	cg_bind(cg, v, x.v, x.r);
	CgVal r = cg_expr(cg, e->u.let.body);
	cg_unbind(cg, mark);
	return r;
}

/* ---------- math calls ---------- */

/* A call of the libm function `name` (expf, tanh ...) marked `nobuiltin`:
 * LLVM neither folds it (its folding computes float functions in double
 * and rounds, which can differ from expf) nor replaces it, so compiled
 * code calls the very function the interpreter calls. */
static LLVMValueRef libm_call(Cg *cg, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
			      unsigned n)
{
	LLVMTypeRef params[MATH_MAX_ARGS] = {ty, ty, ty};
	LLVMTypeRef fty = LLVMFunctionType(ty, params, n, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, fty);
	LLVMValueRef call = LLVMBuildCall2(cg->b, fty, fn, args, n, "");
	unsigned k = LLVMGetEnumAttributeKindForName("nobuiltin", 9);
	LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
				 LLVMCreateEnumAttribute(cg->ctx, k, 0));
	return call;
}

/* T.exp(x) ...: what kernel/interp_eval.c computes. Correctly rounded
 * operations (sqrt, fabs, floor, ceil, rint, trunc, fma) are LLVM
 * intrinsics, whose folding is exact; the others call libm by name. */
static CgVal call_expr(Cg *cg, const Expr *e)
{
	/* float16: the float32 function, then rounded to half (as kernel/interp_eval.c) */
	DType t = e->dtype == DT_FLOAT16 ? DT_FLOAT32 : e->dtype;
	LLVMTypeRef ty = cg_type(cg, t);
	LLVMValueRef a[MATH_MAX_ARGS];
	for (int i = 0; i < e->u.call.nargs; i++)
		a[i] = cg_expr_as(cg, e->u.call.args[i], t).v;
	MathFn f = e->u.call.fn;
	if (!dtype_is_float(t)) { /* integer abs, wrapping at the minimum */
		LLVMValueRef zero = LLVMConstNull(ty);
		LLVMValueRef neg = LLVMBuildICmp(cg->b, LLVMIntSLT, a[0], zero, "");
		LLVMValueRef v = f == MF_ABS && dtype_is_signed(t)
					 ? LLVMBuildSelect(cg->b, neg, LLVMBuildSub(cg->b, zero, a[0], ""),
							   a[0], "")
					 : a[0];
		return (CgVal){v, iv_dtype(t)};
	}
	bool f32 = t == DT_FLOAT32;
	const char *libm = NULL, *intr = NULL;
	LLVMValueRef one = LLVMConstReal(ty, 1.0), v = NULL;
	switch (f) {
	case MF_EXP: libm = f32 ? "expf" : "exp"; break;
	case MF_EXP2: libm = f32 ? "exp2f" : "exp2"; break;
	case MF_LOG: libm = f32 ? "logf" : "log"; break;
	case MF_LOG2: libm = f32 ? "log2f" : "log2"; break;
	case MF_LOG10: libm = f32 ? "log10f" : "log10"; break;
	case MF_TANH: libm = f32 ? "tanhf" : "tanh"; break;
	case MF_ERF: libm = f32 ? "erff" : "erf"; break;
	case MF_SIN: libm = f32 ? "sinf" : "sin"; break;
	case MF_COS: libm = f32 ? "cosf" : "cos"; break;
	case MF_POW: libm = f32 ? "powf" : "pow"; break;
	case MF_SQRT: intr = "llvm.sqrt"; break;
	case MF_ABS: intr = "llvm.fabs"; break;
	case MF_FLOOR: intr = "llvm.floor"; break;
	case MF_CEIL: intr = "llvm.ceil"; break;
	case MF_ROUND: intr = "llvm.rint"; break;
	case MF_TRUNC: intr = "llvm.trunc"; break;
	case MF_FMA: intr = "llvm.fma"; break;
	case MF_RSQRT:
		v = cg_call_intrinsic(cg, "llvm.sqrt", ty, a, 1);
		v = LLVMBuildFDiv(cg->b, one, v, "");
		break;
	case MF_SIGMOID: {
		LLVMValueRef m = LLVMBuildFNeg(cg->b, a[0], "");
		v = libm_call(cg, f32 ? "expf" : "exp", ty, &m, 1);
		v = LLVMBuildFAdd(cg->b, one, v, "");
		v = LLVMBuildFDiv(cg->b, one, v, "");
		break;
	}
	case MF_COUNT: break;
	}
	unsigned n = (unsigned)e->u.call.nargs;
	if (libm)
		v = libm_call(cg, libm, ty, a, n);
	else if (intr)
		v = cg_call_intrinsic(cg, intr, ty, a, n);
	if (!v) {
		cg_fail(cg, e->span, "internal: math function %d", (int)f);
		return (CgVal){LLVMGetUndef(cg_type(cg, e->dtype)), iv_unbounded()};
	}
	if (e->dtype == DT_FLOAT16)
		v = half_from_float(cg, v);
	return (CgVal){v, iv_unbounded()};
}

CgVal cg_expr(Cg *cg, const Expr *e)
{
	DType t = e->dtype;
	CgVal x;
	switch (e->kind) {
	case EX_INT:
		if (dtype_is_float(t))
			return (CgVal){float_const(cg, t, (double)e->u.ival), iv_unbounded()};
		return int_val(cg, t, e->u.ival);
	case EX_FLOAT:
		return literal_float(cg, e);
	case EX_VAR: {
		CgVar *v = cg_lookup(cg, e->u.var);
		if (!v) {
			cg_fail(cg, e->span, "variable %s cannot be used in compiled code here",
				e->u.var->name);
			return (CgVal){LLVMGetUndef(cg_type(cg, t)), iv_dtype(t)};
		}
		return cg_convert(cg, (CgVal){v->v, v->r}, e->u.var->dtype, t);
	}
	case EX_BIN:
		return binary(cg, e);
	case EX_NOT:
		x = cg_expr(cg, e->u.un.a);
		return (CgVal){LLVMBuildNot(cg->b, cg_truth(cg, x, e->u.un.a->dtype), ""), iv_make(0, 1)};
	case EX_NEG:
		x = cg_expr_as(cg, e->u.un.a, t);
		if (dtype_is_float(t))
			return (CgVal){LLVMBuildFNeg(cg->b, x.v, ""), iv_unbounded()};
		return int_arith(cg, OP_SUB, t, int_val(cg, t, 0), x);
	case EX_SELECT:
		return select_expr(cg, e);
	case EX_CAST:
		return cg_expr_as(cg, e->u.un.a, t);
	case EX_LOAD:
		return load(cg, e);
	case EX_UNDEF: /* any value will do: a defined one, never LLVM undef */
		return (CgVal){LLVMConstNull(cg_type(cg, t)), is_int_like(t) ? iv_point(0) : iv_unbounded()};
	case EX_LET:
		return let_expr(cg, e);
	case EX_CALL:
		return call_expr(cg, e);
	case EX_OPAQUE: /* lower_func refuses it first */
		cg_fail(cg, e->span, "not supported: the opaque call T.%s cannot be compiled",
			e->u.opq.name);
		return (CgVal){LLVMConstNull(cg_type(cg, t == DT_VOID ? DT_INT32 : t)), iv_dtype(t)};
	case EX_COUNT:
		break;
	}
	cg_fail(cg, e->span, "internal: unknown expression kind %d", (int)e->kind);
	return (CgVal){LLVMGetUndef(cg_type(cg, t)), iv_dtype(t)};
}
