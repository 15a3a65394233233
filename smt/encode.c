/* smt/encode.c — an Obligation as Z3 terms: integers are Z3 Ints holding
 * exactly the interpreter's values: +, -, *, negation, `//`, integer
 * conversions and literals wrap to their dtype (two's complement, as
 * kernel/interp.c) unless range.c proves the exact result fits; `//` and
 * `%` are floor; bool is Bool; floats are Real (real mode) or IEEE
 * binary32/64 with round-to-nearest-even (ieee mode); each buffer is an
 * uninterpreted function of its index tuple; every T.undef() is a fresh
 * constant; a float == between propositions holds under both IEEE and
 * same-value readings. Anything else fails "unsupported: ...". */
#include "smt/encode.h"
#include "smt/range.h"
#include "kernel/half.h"
#include "kernel/ptrmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- Z3 errors: recorded, never fatal ----------
 * Z3 resets its error code at the start of most calls, so the code read
 * after a sequence of calls says little; the handler keeps the first
 * error of the thread until the caller clears it. A failed call returns
 * NULL, which every constructor below checks before going on. */

static _Thread_local Z3_error_code z3_error_code = Z3_OK;
static _Thread_local char z3_error_msg[256];

static void record_z3_error(Z3_context c, Z3_error_code e)
{
	if (z3_error_code != Z3_OK)
		return;
	z3_error_code = e;
	snprintf(z3_error_msg, sizeof z3_error_msg, "%s",
		 Z3_get_error_msg(c, e));
}

bool smt_z3_error(const char **msg)
{
	if (z3_error_code == Z3_OK)
		return false;
	if (msg)
		*msg = z3_error_msg;
	return true;
}

void smt_z3_error_clear(void)
{
	z3_error_code = Z3_OK;
	z3_error_msg[0] = '\0';
}

Z3_context smt_context_new(void)
{
	Z3_config cfg = Z3_mk_config();
	if (!cfg)
		return NULL;
	Z3_set_param_value(cfg, "model", "true");
	Z3_context c = Z3_mk_context_rc(cfg);
	Z3_del_config(cfg);
	if (!c)
		return NULL;
	Z3_set_error_handler(c, record_z3_error);
	Z3_set_ast_print_mode(c, Z3_PRINT_SMTLIB2_COMPLIANT);
	return c;
}

/* ---------- exact rationals of doubles ---------- */

/* m * 2^p in decimal, with base-1e9 limbs (each holds at least 29 bits). */
static char *big_decimal(uint64_t m, int p)
{
	size_t cap = (size_t)p / 29 + 4, n = 0;
	uint32_t *limb = calloc(cap, sizeof *limb);
	char *out = malloc(cap * 9 + 2);
	if (!limb || !out) {
		free(limb);
		free(out);
		return NULL;
	}
	do {
		limb[n++] = (uint32_t)(m % 1000000000u);
		m /= 1000000000u;
	} while (m);
	for (int i = 0; i < p; i++) {
		uint64_t carry = 0;
		for (size_t j = 0; j < n; j++) {
			uint64_t t = (uint64_t)limb[j] * 2 + carry;
			limb[j] = (uint32_t)(t % 1000000000u);
			carry = t / 1000000000u;
		}
		if (carry)
			limb[n++] = (uint32_t)carry;
	}
	int len = sprintf(out, "%u", limb[n - 1]);
	for (size_t j = n - 1; j-- > 0;)
		len += sprintf(out + len, "%09u", limb[j]);
	free(limb);
	return out;
}

char *smt_double_to_rational(double v)
{
	bool neg = signbit(v);
	v = fabs(v);
	if (v == 0 || !isfinite(v))
		return strdup("0");
	/* v = m * 2^k exactly, m odd and below 2^53 */
	int k;
	double f = frexp(v, &k);
	uint64_t m = (uint64_t)ldexp(f, 53);
	k -= 53;
	while (!(m & 1)) {
		m >>= 1;
		k++;
	}
	char *num = big_decimal(m, k > 0 ? k : 0);
	char *den = big_decimal(1, k < 0 ? -k : 0);
	char *out = NULL;
	if (num && den) {
		size_t len = strlen(num) + strlen(den) + 3;
		out = malloc(len);
		if (out && k >= 0)
			snprintf(out, len, "%s%s", neg ? "-" : "", num);
		else if (out)
			snprintf(out, len, "%s%s/%s", neg ? "-" : "", num, den);
	}
	free(num);
	free(den);
	return out;
}

/* ---------- encoder state ---------- */

typedef struct Binding {
	const Var *var;
	Z3_ast value;
} Binding;

struct EncodeState {
	size_t nowned, capowned;
	Z3_ast *owned; /* every Z3 object made here, inc_ref'ed once */
	PtrMap vars;   /* Var* -> sym index */
	PtrMap bufs;   /* Buffer* -> sym index */
	PtrMap memo;   /* Expr* -> Z3_ast, outside lets and undef-free */
	PtrMap loadset; /* load application -> 1 */
	int nenv, capenv;
	Binding *env; /* let bindings, innermost last */
	bool saw_undef;
	bool same_value_goal; /* encoding the goal of a same_value obligation */
	RangeInfo *ranges; /* intervals: where a wrap-around can be left out */
	RangeInfo *stated; /* the same from the bounds the query states */
	bool uses_learnt;  /* a left-out wrap needs more than `stated` */
	int capsyms, caploads;
	int fsym[MF_COUNT][DT_COUNT]; /* SYM_FUNC index + 1, 0 if none yet */
	int shsym[2][DT_COUNT]; /* the out-of-range shift functions, the same */
	int napps, capapps;
	struct { Z3_ast app; DType t; } *int_apps; /* integer calls: a range fact each */
	Z3_sort s_bool, s_int, s_real, s_f16, s_f32, s_f64;
	Z3_ast rne;
};

typedef enum { CL_BOOL, CL_INT, CL_FLOAT, CL_NONE } ValueClass;

static ValueClass class_of(DType t)
{
	switch (t) {
	case DT_BOOL: return CL_BOOL;
	case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
	case DT_UINT8: return CL_INT;
	case DT_FLOAT16:
	case DT_FLOAT32:
	case DT_FLOAT64: return CL_FLOAT;
	case DT_HANDLE:
	case DT_VOID:
	case DT_COUNT: return CL_NONE;
	}
	return CL_NONE;
}

static const char *dtype_text(DType t)
{
	return t >= 0 && t < DT_COUNT ? dtype_name(t) : "<invalid dtype>";
}

static void *fail(SmtEncoding *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void *fail(SmtEncoding *e, const char *fmt, ...)
{
	if (e->error)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&e->error, fmt, ap) < 0)
		e->error = NULL;
	va_end(ap);
	if (!e->error)
		e->error = strdup("out of memory");
	return NULL;
}

/* Take a reference to a fresh Z3 result (or fail on a recorded error). */
static Z3_ast own(SmtEncoding *e, Z3_ast a)
{
	const char *msg = NULL;
	if (smt_z3_error(&msg) || !a)
		return fail(e, "internal: z3 error: %s",
			    msg ? msg : "no term returned");
	EncodeState *st = e->st;
	if (st->nowned == st->capowned) {
		size_t cap = st->capowned ? st->capowned * 2 : 256;
		Z3_ast *p = realloc(st->owned, cap * sizeof *p);
		if (!p)
			return fail(e, "out of memory");
		st->owned = p;
		st->capowned = cap;
	}
	Z3_inc_ref(e->ctx, a);
	st->owned[st->nowned++] = a;
	return a;
}

static Z3_sort own_sort(SmtEncoding *e, Z3_sort s)
{
	if (!s || smt_z3_error(NULL))
		return fail(e, "internal: z3 error: cannot make a sort");
	return own(e, Z3_sort_to_ast(e->ctx, s)) ? s : NULL;
}

static bool make_sorts(SmtEncoding *e)
{
	Z3_context c = e->ctx;
	EncodeState *st = e->st;
	st->s_bool = own_sort(e, Z3_mk_bool_sort(c));
	st->s_int = own_sort(e, Z3_mk_int_sort(c));
	st->s_real = own_sort(e, Z3_mk_real_sort(c));
	st->s_f16 = own_sort(e, Z3_mk_fpa_sort(c, 5, 11));
	st->s_f32 = own_sort(e, Z3_mk_fpa_sort(c, 8, 24));
	st->s_f64 = own_sort(e, Z3_mk_fpa_sort(c, 11, 53));
	st->rne = own(e, Z3_mk_fpa_rne(c));
	return !e->error;
}

static Z3_sort sort_of(SmtEncoding *e, DType t)
{
	EncodeState *st = e->st;
	switch (class_of(t)) {
	case CL_BOOL: return st->s_bool;
	case CL_INT: return st->s_int;
	case CL_FLOAT:
		if (e->fm == FLOAT_REAL)
			return st->s_real;
		e->uses_fp = true;
		return t == DT_FLOAT16 ? st->s_f16 : t == DT_FLOAT32 ? st->s_f32 : st->s_f64;
	case CL_NONE: break;
	}
	return fail(e, "unsupported: values of dtype %s", dtype_text(t));
}

/* ---------- symbols ---------- */

/* A valid SMT-LIB simple symbol: [A-Za-z0-9_] from the source name, then
 * "_<index>"; the trailing index alone makes names unique. */
static char *symbol_name(const char *base, int index)
{
	char clean[72];
	size_t n = 0;
	for (const char *p = base ? base : ""; *p && n < 64; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_';
		clean[n++] = ok ? ch : '_';
	}
	clean[n] = '\0';
	char *out = NULL;
	bool digit_first = clean[0] >= '0' && clean[0] <= '9';
	if (asprintf(&out, "%s%s_%d", n == 0 || digit_first ? "v" : "", clean,
		     index) < 0)
		return NULL;
	return out;
}

static int add_sym(SmtEncoding *e, SymKind kind, DType dtype, const char *base,
		   int arity, Z3_sort *domain, Z3_sort range)
{
	EncodeState *st = e->st;
	if (e->nsyms == st->capsyms) {
		int cap = st->capsyms ? st->capsyms * 2 : 16;
		SmtSym *p = realloc(e->syms, (size_t)cap * sizeof *p);
		if (!p)
			return fail(e, "out of memory"), -1;
		e->syms = p;
		st->capsyms = cap;
	}
	char *name = symbol_name(base, e->nsyms);
	if (!name)
		return fail(e, "out of memory"), -1;
	Z3_context c = e->ctx;
	Z3_func_decl d = Z3_mk_func_decl(c, Z3_mk_string_symbol(c, name),
					 (unsigned)arity, domain, range);
	free(name);
	if (!d || !own(e, Z3_func_decl_to_ast(c, d)))
		return fail(e, "internal: cannot declare %s", base), -1;
	SmtSym *s = &e->syms[e->nsyms];
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->dtype = dtype;
	s->arity = arity;
	s->decl = d;
	if (arity == 0 && kind != SYM_BUFFER &&
	    !(s->value = own(e, Z3_mk_app(c, d, 0, NULL))))
		return -1;
	return e->nsyms++;
}

static int var_sym(SmtEncoding *e, Var *v)
{
	uintptr_t idx;
	if (ptrmap_get(&e->st->vars, v, &idx))
		return (int)idx;
	Z3_sort s = sort_of(e, v->dtype);
	if (!s)
		return -1;
	int k = add_sym(e, SYM_VAR, v->dtype, v->name, 0, NULL, s);
	if (k < 0)
		return -1;
	e->syms[k].var = v;
	if (!ptrmap_put(&e->st->vars, v, (uintptr_t)k))
		return fail(e, "out of memory"), -1;
	return k;
}

static int buffer_sym(SmtEncoding *e, Buffer *b, int arity)
{
	uintptr_t idx;
	if (ptrmap_get(&e->st->bufs, b, &idx)) {
		if (e->syms[idx].arity != arity)
			return fail(e,
				    "unsupported: buffer %s read with %d and "
				    "with %d indices",
				    b->name, e->syms[idx].arity, arity),
			       -1;
		return (int)idx;
	}
	Z3_sort range = sort_of(e, b->dtype);
	if (!range)
		return -1;
	Z3_sort dom[arity > 0 ? arity : 1];
	for (int i = 0; i < arity; i++)
		dom[i] = e->st->s_int;
	int k = add_sym(e, SYM_BUFFER, b->dtype, b->name, arity, dom, range);
	if (k < 0)
		return -1;
	e->syms[k].buf = b;
	if (!ptrmap_put(&e->st->bufs, b, (uintptr_t)k))
		return fail(e, "out of memory"), -1;
	return k;
}

/* ---------- literals and conversions ---------- */

static Z3_ast mk_int(SmtEncoding *e, int64_t v)
{
	return own(e, Z3_mk_int64(e->ctx, v, e->st->s_int));
}

static Z3_ast mk_bool(SmtEncoding *e, bool v)
{
	return own(e, v ? Z3_mk_true(e->ctx) : Z3_mk_false(e->ctx));
}

/* A float literal, exactly: in real mode the rational value of the
 * double; in ieee mode the nearest value of the dtype (a float32 literal
 * or float16 literal is rounded to nearest even, as a C compiler would), with -0.0, inf and
 * NaN made by their own constructors so their sign and kind survive. */
static Z3_ast mk_float(SmtEncoding *e, double v, DType t)
{
	Z3_context c = e->ctx;
	if (e->fm == FLOAT_REAL) {
		if (!isfinite(v))
			return fail(e,
				    "unsupported: %s float literal in real "
				    "float mode",
				    isnan(v) ? "NaN" : "infinite");
		char *q = smt_double_to_rational(v);
		if (!q)
			return fail(e, "out of memory");
		Z3_ast r = own(e, Z3_mk_numeral(c, q, e->st->s_real));
		free(q);
		return r;
	}
	Z3_sort s = sort_of(e, t);
	if (!s)
		return NULL;
	if (t == DT_FLOAT32)
		v = (double)(float)v;
	else if (t == DT_FLOAT16)
		v = vs_f16_round(v);
	if (isnan(v))
		return own(e, Z3_mk_fpa_nan(c, s));
	if (isinf(v))
		return own(e, Z3_mk_fpa_inf(c, s, v < 0));
	if (v == 0)
		return own(e, Z3_mk_fpa_zero(c, s, signbit(v)));
	if (t == DT_FLOAT32)
		return own(e, Z3_mk_fpa_numeral_float(c, (float)v, s));
	if (t == DT_FLOAT16) { /* from its bits: z3's double numeral loses half subnormals */
		Z3_sort bv16 = own_sort(e, Z3_mk_bv_sort(c, 16));
		if (!bv16)
			return NULL;
		Z3_ast bits = own(e, Z3_mk_unsigned_int(c, vs_f16_from_double(v), bv16));
		return bits ? own(e, Z3_mk_fpa_to_fp_bv(c, bits, s)) : NULL;
	}
	return own(e, Z3_mk_fpa_numeral_double(c, v, s));
}

static Z3_ast mk_not(SmtEncoding *e, Z3_ast a)
{
	return a ? own(e, Z3_mk_not(e->ctx, a)) : NULL;
}

static Z3_ast mk_ite(SmtEncoding *e, Z3_ast c, Z3_ast a, Z3_ast b)
{
	return c && a && b ? own(e, Z3_mk_ite(e->ctx, c, a, b)) : NULL;
}

static Z3_ast mk_neg(SmtEncoding *e, Z3_ast a)
{
	return a ? own(e, Z3_mk_unary_minus(e->ctx, a)) : NULL;
}

typedef Z3_ast (*Z3Binary)(Z3_context, Z3_ast, Z3_ast);
typedef Z3_ast (*Z3Nary)(Z3_context, unsigned, Z3_ast const[]);
typedef Z3_ast (*Z3Rounded)(Z3_context, Z3_ast, Z3_ast, Z3_ast);

static Z3_ast mk2(SmtEncoding *e, Z3Binary f, Z3_ast a, Z3_ast b)
{
	return a && b ? own(e, f(e->ctx, a, b)) : NULL;
}

static Z3_ast mkn(SmtEncoding *e, Z3Nary f, Z3_ast a, Z3_ast b)
{
	Z3_ast args[2] = {a, b};
	return a && b ? own(e, f(e->ctx, 2, args)) : NULL;
}

static Z3_ast mkr(SmtEncoding *e, Z3Rounded f, Z3_ast a, Z3_ast b)
{
	return a && b ? own(e, f(e->ctx, e->st->rne, a, b)) : NULL;
}

/* C truncation toward zero of a real r: ite(r >= 0, to_int r, -to_int(-r)),
 * since to_int is floor. */
static Z3_ast real_trunc(SmtEncoding *e, Z3_ast r)
{
	Z3_context c = e->ctx;
	Z3_ast zero = own(e, Z3_mk_numeral(c, "0", e->st->s_real));
	Z3_ast nonneg = mk2(e, Z3_mk_ge, r, zero);
	Z3_ast down = r ? own(e, Z3_mk_real2int(c, r)) : NULL;
	Z3_ast negr = mk_neg(e, r);
	Z3_ast up = negr ? mk_neg(e, own(e, Z3_mk_real2int(c, negr))) : NULL;
	return mk_ite(e, nonneg, down, up);
}

/* ---------- two's complement ----------
 * The interpreter wraps every integer result to its dtype, and so does
 * this encoding. A wrap is left out where range.c's intervals prove the
 * exact result inside the dtype (typical index arithmetic such as i*4 + ii
 * under its loop ranges), which keeps those queries linear and free of
 * mod. That is sound: the intervals hold in every state the interpreter
 * can reach that satisfies the query (hypotheses, negated goal), where a
 * left-out wrap is the identity. It is also exact: the bounds a left-out
 * wrap rests on are stated by the query or asserted by add_range_facts,
 * so they hold in every model too, and the query has the same models as
 * with every wrap written. */

/* 2^bits as an Int numeral, bits <= 64. */
static Z3_ast power_of_two(SmtEncoding *e, int bits)
{
	char text[24];
	if (bits >= 64)
		snprintf(text, sizeof text, "18446744073709551616");
	else
		snprintf(text, sizeof text, "%llu", 1ULL << bits);
	return own(e, Z3_mk_numeral(e->ctx, text, e->st->s_int));
}

/* x wrapped into integer dtype t exactly as kernel/interp.c's wrap_int:
 * ((x + 2^(b-1)) mod 2^b) - 2^(b-1) when signed, x mod 2^b when not.
 * SMT-LIB mod by a positive constant is floor modulo and stays linear
 * (z3 and cvc5 give it a bounded quotient). */
static Z3_ast wrap(SmtEncoding *e, Z3_ast x, DType t)
{
	if (!x)
		return NULL;
	int bits = dtype_bits(t);
	Z3_ast modulus = power_of_two(e, bits);
	e->wraps++;
	if (!dtype_is_signed(t))
		return mk2(e, Z3_mk_mod, x, modulus);
	Z3_ast half = power_of_two(e, bits - 1);
	Z3_ast shifted = mkn(e, Z3_mk_add, x, half);
	return mkn(e, Z3_mk_sub, mk2(e, Z3_mk_mod, shifted, modulus), half);
}

/* Convert a term of dtype `from` to dtype `to`, as kernel/interp.c's
 * convert does. Between integer dtypes the value wraps to `to` unless
 * `fits` (the ranges prove a already in `to`); bool is 0/1; float -> int
 * truncates and then wraps (out of range is UB in the interpreter: any
 * value of `to`). */
static Z3_ast convert(SmtEncoding *e, Z3_ast a, DType from, DType to,
		      bool fits)
{
	if (!a)
		return NULL;
	if (from == to)
		return a;
	Z3_context c = e->ctx;
	ValueClass cf = class_of(from), ct = class_of(to);
	bool ieee = e->fm == FLOAT_IEEE;
	if (cf == CL_NONE || ct == CL_NONE)
		return fail(e, "unsupported: conversion from %s to %s",
			    dtype_text(from), dtype_text(to));
	if (cf == CL_BOOL && ct == CL_BOOL)
		return a;
	if (cf == CL_INT && ct == CL_INT)
		return fits ? a : wrap(e, a, to);
	if (cf == CL_FLOAT && ct == CL_FLOAT) /* float32 <-> float64 */
		return ieee ? own(e, Z3_mk_fpa_to_fp_float(c, e->st->rne, a,
							   sort_of(e, to)))
			    : a;
	if (cf == CL_BOOL) /* true -> 1, false -> 0 */
		return ct == CL_INT
			       ? mk_ite(e, a, mk_int(e, 1), mk_int(e, 0))
			       : mk_ite(e, a, mk_float(e, 1.0, to),
					mk_float(e, 0.0, to));
	if (ct == CL_BOOL) { /* x != 0; a NaN converts to true */
		if (cf == CL_FLOAT && ieee)
			return mk_not(e, own(e, Z3_mk_fpa_is_zero(c, a)));
		Z3_ast zero = cf == CL_INT ? mk_int(e, 0) : mk_float(e, 0.0, from);
		return mk_not(e, mk2(e, Z3_mk_eq, a, zero));
	}
	if (cf == CL_INT) { /* int -> float, rounded to nearest even */
		Z3_ast r = own(e, Z3_mk_int2real(c, a));
		if (!ieee || !r)
			return r;
		return own(e, Z3_mk_fpa_to_fp_real(c, e->st->rne, r,
						   sort_of(e, to)));
	}
	/* float -> int truncates toward zero; inf and NaN give an
	 * unconstrained value (fp.to_real is unspecified there; C: UB) */
	Z3_ast r = ieee ? own(e, Z3_mk_fpa_to_real(c, a)) : a;
	return r ? wrap(e, real_trunc(e, r), to) : NULL;
}

/* ---------- expressions ---------- */

static Z3_ast enc(SmtEncoding *e, const Expr *x);

typedef enum {
	FIT_VALUE,  /* x's value converted to another dtype */
	FIT_RESULT, /* the exact result of x (integer arithmetic, negation) */
} FitWhat;

static bool leave_out_wrap(SmtEncoding *e, const Expr *x, FitWhat what,
			   DType t, bool *fits);

/* Encode x as a value of dtype `to`. An integer literal in a float
 * context denotes the float of that value (ir.c lets literals adapt). */
static Z3_ast enc_as(SmtEncoding *e, const Expr *x, DType to)
{
	if (!x)
		return fail(e, "internal: missing expression");
	int64_t lit = x->kind == EX_INT ? iv_wrap_value(x->u.ival, x->dtype) : 0;
	if (x->kind == EX_INT && class_of(x->dtype) == CL_INT &&
	    class_of(to) == CL_FLOAT && lit >= -(1LL << 53) && lit <= (1LL << 53))
		return mk_float(e, (double)lit, to);
	bool fits = false;
	if (class_of(x->dtype) == CL_INT && class_of(to) == CL_INT &&
	    x->dtype != to && !leave_out_wrap(e, x, FIT_VALUE, to, &fits))
		return NULL;
	return convert(e, enc(e, x), x->dtype, to, fits);
}

/* The range of x's value (as encoded) by r, converted to integer `to`. */
static bool range_by(SmtEncoding *e, RangeInfo *r, const Expr *x, DType to,
		     Interval *out)
{
	Interval v;
	if (!ranges_value(r, x, &v))
		return fail(e, "out of memory"), false;
	*out = iv_convert(v, x->dtype, to);
	return true;
}

/* Whether r's bounds prove the exact value `what` of x inside t. */
static bool fits_by(SmtEncoding *e, RangeInfo *r, const Expr *x, FitWhat what,
		    DType t, bool *fits)
{
	Interval a, b;
	if (what == FIT_VALUE) {
		if (!range_by(e, r, x, x->dtype, &a))
			return false;
		*fits = iv_fits(a, t);
		return true;
	}
	if (x->kind == EX_NEG) {
		if (!range_by(e, r, x->u.un.a, t, &a))
			return false;
		*fits = iv_fits(iv_neg(a), t);
		return true;
	}
	if (x->kind != EX_BIN)
		return fail(e, "internal: no exact result to fit"), false;
	if (!range_by(e, r, x->u.bin.a, t, &a) || !range_by(e, r, x->u.bin.b, t, &b))
		return false;
	*fits = iv_fits(iv_arith(x->u.bin.op, a, b), t);
	return true;
}

/* Whether the wrap of x to t can be left out (the ranges prove it the
 * identity). When only bounds learnt beyond what the query states prove
 * it, add_range_facts must assert those: uses_learnt. */
static bool leave_out_wrap(SmtEncoding *e, const Expr *x, FitWhat what,
			   DType t, bool *fits)
{
	EncodeState *st = e->st;
	if (!fits_by(e, st->ranges, x, what, t, fits))
		return false;
	bool stated = true;
	if (*fits && !st->uses_learnt &&
	    !fits_by(e, st->stated, x, what, t, &stated))
		return false;
	st->uses_learnt |= !stated;
	return true;
}

/* The dtype a comparison with a float meets at: kernel/interp.c compares
 * in float64 (exact for float32 and for integers up to 2^53), so an int32
 * 16777217 stays above a float32 16777216.0. Two float32 values, or a
 * float and an integer literal its dtype holds exactly, compare the same
 * at the float's own dtype. Integers compare by value (enc_comparison). */
static DType operand_dtype(const Expr *x, const Expr *y)
{
	if (x->dtype == y->dtype)
		return x->dtype;
	bool fx = dtype_is_float(x->dtype), fy = dtype_is_float(y->dtype);
	if (!fx && !fy)
		return dtype_bits(x->dtype) >= dtype_bits(y->dtype) ? x->dtype
								    : y->dtype;
	if (fx && fy)
		return DT_FLOAT64;
	const Expr *f = fx ? x : y, *i = fx ? y : x;
	int64_t exact = f->dtype == DT_FLOAT16   ? INT64_C(1) << 11
			: f->dtype == DT_FLOAT32 ? INT64_C(1) << 24
						 : INT64_C(1) << 53;
	int64_t v = i->kind == EX_INT ? iv_wrap_value(i->u.ival, i->dtype) : 0;
	if (i->kind == EX_INT && i->dtype != DT_BOOL && v >= -exact && v <= exact)
		return f->dtype;
	return DT_FLOAT64;
}

/* The divisor as a constant, when it is one (possibly after Z3's
 * simplifier folds it): division by a constant stays linear. */
static bool constant_divisor(SmtEncoding *e, Z3_ast b, int64_t *value)
{
	Z3_context c = e->ctx;
	if (!Z3_is_numeral_ast(c, b)) {
		b = own(e, Z3_simplify(c, b));
		if (!b || !Z3_is_numeral_ast(c, b))
			return false;
	}
	return Z3_get_numeral_int64(c, b, value) && !smt_z3_error(NULL);
}

/* Floor division and modulo on integers, for every sign. SMT-LIB's div
 * and mod are Euclidean (0 <= mod < |b|), which is floor for b > 0; for
 * b < 0, floor(a/b) = floor(-a/-b) = div(-a, -b) and
 * floormod(a, b) = a - b*div(-a,-b) = -mod(-a, -b). A constant divisor
 * picks its branch here (linear for both z3 and cvc5); otherwise
 * ite(b >= 0, ...) does. b = 0 is left to SMT-LIB's total, unspecified
 * div/mod by zero: a UB obligation is the rewrites' job. */
static Z3_ast floor_divmod(SmtEncoding *e, bool want_mod, Z3_ast a, Z3_ast b)
{
	if (!a || !b)
		return NULL;
	Z3Binary f = want_mod ? Z3_mk_mod : Z3_mk_div;
	int64_t k;
	if (constant_divisor(e, b, &k) && k != INT64_MIN) {
		if (k >= 0)
			return mk2(e, f, a, mk_int(e, k));
		Z3_ast r = mk2(e, f, mk_neg(e, a), mk_int(e, -k));
		return want_mod ? mk_neg(e, r) : r;
	}
	smt_z3_error_clear(); /* a non-constant divisor is not an error */
	e->nonlinear = true;
	Z3_ast pos = mk2(e, f, a, b);
	Z3_ast neg = mk2(e, f, mk_neg(e, a), mk_neg(e, b));
	if (want_mod)
		neg = mk_neg(e, neg);
	return mk_ite(e, mk2(e, Z3_mk_ge, b, mk_int(e, 0)), pos, neg);
}

/* Linear arithmetic is decided quickly by the incremental solver;
 * products of two non-constants need Z3's nonlinear tactics (solve.c). */
static Z3_ast note_product(SmtEncoding *e, Z3_ast a, Z3_ast b)
{
	if (a && b && !Z3_is_numeral_ast(e->ctx, a) &&
	    !Z3_is_numeral_ast(e->ctx, b))
		e->nonlinear = true;
	return mkn(e, Z3_mk_mul, a, b);
}

/* x << n as x * 2^n and x >> n as floor(x / 2^n) (arithmetic shift; an
 * unsigned x is never negative), exact before the caller's wrap, for n in
 * [0, bits). An amount outside it is UB (safety.shift_amount): the result
 * is then an uninterpreted function of x and n, so that nothing is proven
 * from it. */
static Z3_ast enc_shift(SmtEncoding *e, BinOp op, Z3_ast a, Z3_ast b, DType t)
{
	int bits = dtype_bits(t);
	int64_t k;
	if (!a || !b)
		return NULL;
	if (constant_divisor(e, b, &k) && k >= 0 && k < bits) {
		Z3_ast p = power_of_two(e, (int)k);
		return op == OP_SHL ? mkn(e, Z3_mk_mul, a, p) : floor_divmod(e, false, a, p);
	}
	smt_z3_error_clear();
	EncodeState *st = e->st;
	int side = op == OP_SHL ? 0 : 1;
	int s = st->shsym[side][t] - 1;
	if (s < 0) {
		Z3_sort dom[2] = {st->s_int, st->s_int};
		char name[40];
		snprintf(name, sizeof name, "%s_oob_%s", side ? "shr" : "shl", dtype_name(t));
		if ((s = add_sym(e, SYM_FUNC, t, name, 2, dom, st->s_int)) < 0)
			return NULL;
		e->syms[s].fn = MF_COUNT;
		st->shsym[side][t] = s + 1;
	}
	Z3_ast args[2] = {a, b};
	Z3_ast r = own(e, Z3_mk_app(e->ctx, e->syms[s].decl, 2, args));
	/* 2^n as a chain over the amounts in range */
	Z3_ast p = power_of_two(e, bits - 1);
	for (int i = bits - 2; i >= 0; i--)
		p = mk_ite(e, mk2(e, Z3_mk_eq, b, mk_int(e, i)), power_of_two(e, i), p);
	e->nonlinear |= !Z3_is_numeral_ast(e->ctx, a);
	Z3_ast v = op == OP_SHL ? note_product(e, a, p) : floor_divmod(e, false, a, p);
	Z3_ast in = mkn(e, Z3_mk_and, mk2(e, Z3_mk_le, mk_int(e, 0), b),
			mk2(e, Z3_mk_lt, b, mk_int(e, bits)));
	return mk_ite(e, in, v, r);
}

static Z3_ast enc_int_arith(SmtEncoding *e, BinOp op, Z3_ast a, Z3_ast b,
			    DType t)
{
	switch (op) {
	case OP_ADD: return mkn(e, Z3_mk_add, a, b);
	case OP_SUB: return mkn(e, Z3_mk_sub, a, b);
	case OP_MUL: return note_product(e, a, b);
	case OP_DIV:
		return fail(e, "unsupported: true division '/' on %s",
			    dtype_text(t));
	case OP_FLOORDIV: return floor_divmod(e, false, a, b);
	case OP_FLOORMOD: return floor_divmod(e, true, a, b);
	case OP_MIN: return mk_ite(e, mk2(e, Z3_mk_le, a, b), a, b);
	case OP_MAX: return mk_ite(e, mk2(e, Z3_mk_ge, a, b), a, b);
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return fail(e, "internal: %s is not arithmetic", binop_symbol(op));
}

/* Real mode: floats are reals. floor(a/b) for `//` (to_int is floor). */
static Z3_ast enc_real_arith(SmtEncoding *e, BinOp op, Z3_ast a, Z3_ast b)
{
	Z3_context c = e->ctx;
	switch (op) {
	case OP_ADD: return mkn(e, Z3_mk_add, a, b);
	case OP_SUB: return mkn(e, Z3_mk_sub, a, b);
	case OP_MUL: return note_product(e, a, b);
	case OP_DIV:
		e->nonlinear |= b && !Z3_is_numeral_ast(e->ctx, b);
		return mk2(e, Z3_mk_div, a, b);
	case OP_FLOORDIV:
	case OP_FLOORMOD: {
		e->nonlinear |= b && !Z3_is_numeral_ast(e->ctx, b);
		Z3_ast q = mk2(e, Z3_mk_div, a, b);
		Z3_ast fl = q ? own(e, Z3_mk_real2int(c, q)) : NULL;
		fl = fl ? own(e, Z3_mk_int2real(c, fl)) : NULL;
		if (op == OP_FLOORDIV)
			return fl;
		return mkn(e, Z3_mk_sub, a, note_product(e, b, fl));
	}
	case OP_MIN: return mk_ite(e, mk2(e, Z3_mk_le, a, b), a, b);
	case OP_MAX: return mk_ite(e, mk2(e, Z3_mk_ge, a, b), a, b);
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return fail(e, "internal: %s is not arithmetic", binop_symbol(op));
}

/* x converted to sort s (round to nearest even; exact when widening). */
static Z3_ast fp_convert(SmtEncoding *e, Z3_ast x, Z3_sort s)
{
	return x ? own(e, Z3_mk_fpa_to_fp_float(e->ctx, e->st->rne, x, s)) : NULL;
}

/* IEEE mode, as the interpreter and the generated code compute:
 * round-to-nearest-even; `//` and `%` in double precision, rounded once
 * to the dtype at the end (floor(a / b), a - floor(a / b) * b, each step
 * of which rounds in double); min and max are `a < b ? a : b` and
 * `a > b ? a : b`, so a NaN operand or a pair of zeros gives b (Z3's
 * fp.min would return the other operand for a NaN). */
static Z3_ast enc_ieee_arith(SmtEncoding *e, BinOp op, Z3_ast a, Z3_ast b)
{
	Z3_context c = e->ctx;
	switch (op) {
	case OP_ADD: return mkr(e, Z3_mk_fpa_add, a, b);
	case OP_SUB: return mkr(e, Z3_mk_fpa_sub, a, b);
	case OP_MUL: return mkr(e, Z3_mk_fpa_mul, a, b);
	case OP_DIV: return mkr(e, Z3_mk_fpa_div, a, b);
	case OP_FLOORDIV:
	case OP_FLOORMOD: {
		if (!a || !b)
			return NULL;
		Z3_sort s = Z3_get_sort(c, a);
		bool narrow = Z3_fpa_get_ebits(c, s) != 11;
		Z3_ast a64 = narrow ? fp_convert(e, a, e->st->s_f64) : a;
		Z3_ast b64 = narrow ? fp_convert(e, b, e->st->s_f64) : b;
		Z3_ast q = mkr(e, Z3_mk_fpa_div, a64, b64);
		Z3_ast rtn = own(e, Z3_mk_fpa_rtn(c));
		Z3_ast fl = q && rtn ? own(e, Z3_mk_fpa_round_to_integral(
						      c, rtn, q))
				     : NULL;
		Z3_ast r = op == OP_FLOORDIV ? fl
					     : mkr(e, Z3_mk_fpa_sub, a64, mkr(e, Z3_mk_fpa_mul, fl, b64));
		return narrow ? fp_convert(e, r, s) : r;
	}
	case OP_MIN: return mk_ite(e, mk2(e, Z3_mk_fpa_lt, a, b), a, b);
	case OP_MAX: return mk_ite(e, mk2(e, Z3_mk_fpa_gt, a, b), a, b);
	case OP_SHL: case OP_SHR: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return fail(e, "internal: %s is not arithmetic", binop_symbol(op));
}

/* Comparisons; IEEE `==` is fp.eq (-0.0 == 0.0, NaN != NaN) and `!=` its
 * negation. */
static Z3_ast enc_compare(SmtEncoding *e, BinOp op, Z3_ast a, Z3_ast b,
			  DType t)
{
	ValueClass cl = class_of(t);
	bool fp = cl == CL_FLOAT && e->fm == FLOAT_IEEE;
	if (cl == CL_BOOL && op != OP_EQ && op != OP_NE)
		return fail(e, "unsupported: ordering comparison '%s' on bool",
			    binop_symbol(op));
	switch (op) {
	case OP_EQ: return mk2(e, fp ? Z3_mk_fpa_eq : Z3_mk_eq, a, b);
	case OP_NE:
		return mk_not(e, mk2(e, fp ? Z3_mk_fpa_eq : Z3_mk_eq, a, b));
	case OP_LT: return mk2(e, fp ? Z3_mk_fpa_lt : Z3_mk_lt, a, b);
	case OP_LE: return mk2(e, fp ? Z3_mk_fpa_leq : Z3_mk_le, a, b);
	case OP_GT: return mk2(e, fp ? Z3_mk_fpa_gt : Z3_mk_gt, a, b);
	case OP_GE: return mk2(e, fp ? Z3_mk_fpa_geq : Z3_mk_ge, a, b);
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
	case OP_COUNT: break;
	}
	return fail(e, "internal: %s is not a comparison", binop_symbol(op));
}

/* kernel/interp.c compares integers and bools by value, each at its own
 * dtype and without converting one to the other's: int8 -1 < uint8 255,
 * and `x < 200` for an int8 x does not wrap the int32 200. Two bools
 * compare as Bool; anything with a float at the common float dtype. */
static Z3_ast enc_comparison(SmtEncoding *e, BinOp op, const Expr *l,
			     const Expr *r)
{
	ValueClass cl = class_of(l->dtype), cr = class_of(r->dtype);
	bool by_value = (cl == CL_INT || cl == CL_BOOL) &&
			(cr == CL_INT || cr == CL_BOOL) &&
			!(cl == CL_BOOL && cr == CL_BOOL);
	if (!by_value) {
		DType t = operand_dtype(l, r);
		return enc_compare(e, op, enc_as(e, l, t), enc_as(e, r, t), t);
	}
	Z3_ast a = enc_as(e, l, cl == CL_BOOL ? DT_INT64 : l->dtype);
	Z3_ast b = enc_as(e, r, cr == CL_BOOL ? DT_INT64 : r->dtype);
	return enc_compare(e, op, a, b, DT_INT64);
}

static Z3_ast enc_bin(SmtEncoding *e, const Expr *x)
{
	BinOp op = x->u.bin.op;
	const Expr *l = x->u.bin.a, *r = x->u.bin.b;
	if (!l || !r)
		return fail(e, "internal: missing operand");
	if (op < 0 || op >= OP_COUNT)
		return fail(e, "internal: invalid binary operator");
	if (binop_is_logical(op)) {
		/* operands in order (not as arguments: C leaves their order
		 * open, and the order of declarations changes Z3's models) */
		Z3_ast la = enc_as(e, l, DT_BOOL);
		Z3_ast ra = enc_as(e, r, DT_BOOL);
		return mkn(e, op == OP_AND ? Z3_mk_and : Z3_mk_or, la, ra);
	}
	if (binop_is_compare(op))
		return enc_comparison(e, op, l, r);
	DType t = x->dtype;
	Z3_ast a = enc_as(e, l, t), b = enc_as(e, r, t);
	if (!a || !b)
		return NULL;
	switch (class_of(t)) {
	case CL_INT: {
		/* the exact result, wrapped unless the ranges prove it fits */
		bool fits;
		if (!leave_out_wrap(e, x, FIT_RESULT, t, &fits))
			return NULL;
		Z3_ast exact = op == OP_SHL || op == OP_SHR ? enc_shift(e, op, a, b, t)
							    : enc_int_arith(e, op, a, b, t);
		return fits ? exact : wrap(e, exact, t);
	}
	case CL_FLOAT:
		return e->fm == FLOAT_IEEE ? enc_ieee_arith(e, op, a, b)
					   : enc_real_arith(e, op, a, b);
	case CL_BOOL:
	case CL_NONE: break;
	}
	return fail(e, "unsupported: arithmetic '%s' on %s", binop_symbol(op),
		    dtype_text(t));
}

static Z3_ast enc_neg(SmtEncoding *e, const Expr *x)
{
	Z3_ast a = enc_as(e, x->u.un.a, x->dtype);
	bool fits;
	switch (class_of(x->dtype)) {
	case CL_INT: /* -INT_MIN wraps to INT_MIN */
		if (!leave_out_wrap(e, x, FIT_RESULT, x->dtype, &fits))
			return NULL;
		return fits ? mk_neg(e, a) : wrap(e, mk_neg(e, a), x->dtype);
	case CL_FLOAT:
		if (e->fm == FLOAT_REAL)
			return mk_neg(e, a);
		return a ? own(e, Z3_mk_fpa_neg(e->ctx, a)) : NULL;
	case CL_BOOL:
	case CL_NONE: break;
	}
	return fail(e, "unsupported: negation of %s", dtype_text(x->dtype));
}

static bool note_load(SmtEncoding *e, int k, int n, Z3_ast *args, Z3_ast app);

static Z3_ast enc_load(SmtEncoding *e, const Expr *x)
{
	int n = x->u.load.nidx;
	Buffer *b = x->u.load.buf;
	if (!b || n < 0)
		return fail(e, "internal: malformed load");
	Z3_ast args[n > 0 ? n : 1];
	for (int i = 0; i < n; i++) {
		const Expr *ix = x->u.load.idx[i];
		if (!ix || class_of(ix->dtype) != CL_INT)
			return fail(e,
				    "unsupported: index %d of %s is not an "
				    "integer",
				    i, b->name);
		if (!(args[i] = enc(e, ix)))
			return NULL;
	}
	int k = buffer_sym(e, b, n);
	if (k < 0)
		return NULL;
	Z3_ast app = own(e, Z3_mk_app(e->ctx, e->syms[k].decl, (unsigned)n,
				      args));
	if (!app || !note_load(e, k, n, args, app))
		return NULL;
	Interval cell = {0, 0};
	bool fits = iv_of_dtype(b->dtype, &cell) && iv_fits(cell, x->dtype);
	return x->dtype == b->dtype ? app
				    : convert(e, app, b->dtype, x->dtype, fits);
}

/* Record a distinct load application for the model and the range facts. */
static bool note_load(SmtEncoding *e, int k, int n, Z3_ast *args, Z3_ast app)
{
	uintptr_t seen;
	if (ptrmap_get(&e->st->loadset, app, &seen))
		return true;
	EncodeState *st = e->st;
	if (e->nloads == st->caploads) {
		int cap = st->caploads ? st->caploads * 2 : 16;
		SmtLoad *p = realloc(e->loads, (size_t)cap * sizeof *p);
		if (!p)
			return fail(e, "out of memory"), false;
		e->loads = p;
		st->caploads = cap;
	}
	SmtLoad *ld = &e->loads[e->nloads];
	ld->idx = malloc(sizeof(Z3_ast) * (size_t)(n > 0 ? n : 1));
	if (!ld->idx || !ptrmap_put(&st->loadset, app, 1)) {
		free(ld->idx);
		return fail(e, "out of memory"), false;
	}
	ld->sym = k;
	ld->nidx = n;
	memcpy(ld->idx, args, sizeof(Z3_ast) * (size_t)n);
	ld->app = app;
	e->nloads++;
	return true;
}

/* Bind a let variable for the encoding of its body (innermost last). */
static bool bind(SmtEncoding *e, const Var *v, Z3_ast value)
{
	EncodeState *st = e->st;
	if (!value)
		return false;
	if (st->nenv == st->capenv) {
		int cap = st->capenv ? st->capenv * 2 : 8;
		Binding *p = realloc(st->env, (size_t)cap * sizeof *p);
		if (!p)
			return fail(e, "out of memory"), false;
		st->env = p;
		st->capenv = cap;
	}
	st->env[st->nenv++] = (Binding){v, value};
	return true;
}

/* Bind a let variable in both environments: its term and its range. */
static bool bind_let(SmtEncoding *e, const Expr *x)
{
	if (!bind(e, x->u.let.var, enc_as(e, x->u.let.value, x->u.let.var->dtype)))
		return false;
	EncodeState *st = e->st;
	if (!ranges_push_let(st->ranges, x->u.let.var, x->u.let.value)) {
		st->nenv--;
		return fail(e, "out of memory"), false;
	}
	if (!ranges_push_let(st->stated, x->u.let.var, x->u.let.value)) {
		st->nenv--;
		ranges_pop_let(st->ranges);
		return fail(e, "out of memory"), false;
	}
	return true;
}

static void unbind_let(SmtEncoding *e)
{
	e->st->nenv--;
	ranges_pop_let(e->st->ranges);
	ranges_pop_let(e->st->stated);
}

static Z3_ast enc_let(SmtEncoding *e, const Expr *x)
{
	if (!bind_let(e, x))
		return NULL;
	Z3_ast body = enc_as(e, x->u.let.body, x->dtype);
	unbind_let(e);
	return body;
}

static Z3_ast enc_var(SmtEncoding *e, const Expr *x)
{
	EncodeState *st = e->st;
	Var *v = x->u.var;
	Z3_ast value = NULL;
	for (int i = st->nenv; i-- > 0 && !value;)
		if (st->env[i].var == v)
			value = st->env[i].value;
	int k = value ? 0 : var_sym(e, v);
	if (!value && k >= 0) {
		value = e->syms[k].value;
		e->syms[k].occurs = true;
	}
	if (!value || x->dtype == v->dtype)
		return value;
	bool fits = iv_fits(ranges_binding(st->ranges, v), x->dtype);
	st->uses_learnt |= fits && !iv_fits(ranges_binding(st->stated, v), x->dtype);
	return convert(e, value, v->dtype, x->dtype, fits);
}

static Z3_ast enc_undef(SmtEncoding *e, const Expr *x)
{
	Z3_sort s = sort_of(e, x->dtype);
	if (!s)
		return NULL;
	e->st->saw_undef = true;
	int k = add_sym(e, SYM_UNDEF, x->dtype, "undef", 0, NULL, s);
	return k < 0 ? NULL : e->syms[k].value;
}

static Z3_ast enc_literal(SmtEncoding *e, const Expr *x)
{
	ValueClass cl = class_of(x->dtype);
	if (x->kind == EX_FLOAT)
		return cl == CL_FLOAT
			       ? mk_float(e, x->u.fval, x->dtype)
			       : fail(e, "unsupported: float literal of dtype %s",
				      dtype_text(x->dtype));
	switch (cl) {
	case CL_BOOL: return mk_bool(e, x->u.ival != 0);
	case CL_INT: return mk_int(e, iv_wrap_value(x->u.ival, x->dtype));
	case CL_FLOAT: return mk_float(e, (double)x->u.ival, x->dtype);
	case CL_NONE: break;
	}
	return fail(e, "unsupported: literal of dtype %s", dtype_text(x->dtype));
}

/* T.exp(x) ...: an application of the uninterpreted function of that
 * name and dtype, in both float modes (semantics.md 9): a rewrite that
 * moves or duplicates a call is provable, one that needs a property of
 * the function is not. */
static Z3_ast enc_call(SmtEncoding *e, const Expr *x)
{
	EncodeState *st = e->st;
	MathFn f = x->u.call.fn;
	int n = x->u.call.nargs;
	if ((unsigned)f >= MF_COUNT || n != mathfn_arity(f) || (unsigned)x->dtype >= DT_COUNT)
		return fail(e, "internal: malformed math call");
	Z3_sort s = sort_of(e, x->dtype);
	if (!s)
		return NULL;
	Z3_ast args[MATH_MAX_ARGS];
	for (int i = 0; i < n; i++)
		if (!(args[i] = enc_as(e, x->u.call.args[i], x->dtype)))
			return NULL;
	int k = st->fsym[f][x->dtype] - 1;
	if (k < 0) {
		Z3_sort dom[MATH_MAX_ARGS] = {s, s, s};
		const char *base = dtype_is_float(x->dtype)
					   ? (x->dtype == DT_FLOAT16   ? "f16"
					      : x->dtype == DT_FLOAT32 ? "f32"
								       : "f64")
					   : dtype_name(x->dtype);
		char name[40];
		snprintf(name, sizeof name, "%s_%s", mathfn_name(f), base);
		if ((k = add_sym(e, SYM_FUNC, x->dtype, name, n, dom, s)) < 0)
			return NULL;
		e->syms[k].fn = f;
		st->fsym[f][x->dtype] = k + 1;
	}
	Z3_ast app = own(e, Z3_mk_app(e->ctx, e->syms[k].decl, (unsigned)n, args));
	uintptr_t seen;
	if (!app || class_of(x->dtype) != CL_INT || ptrmap_get(&st->loadset, app, &seen))
		return app;
	if (st->napps == st->capapps) {
		int cap = st->capapps ? st->capapps * 2 : 8;
		void *p = realloc(st->int_apps, (size_t)cap * sizeof *st->int_apps);
		if (!p)
			return fail(e, "out of memory");
		st->int_apps = p;
		st->capapps = cap;
	}
	if (!ptrmap_put(&st->loadset, app, 1))
		return fail(e, "out of memory");
	st->int_apps[st->napps].app = app;
	st->int_apps[st->napps++].t = x->dtype;
	return app;
}

static Z3_ast enc_kind(SmtEncoding *e, const Expr *x)
{
	switch (x->kind) {
	case EX_INT:
	case EX_FLOAT: return enc_literal(e, x);
	case EX_VAR: return enc_var(e, x);
	case EX_BIN: return enc_bin(e, x);
	case EX_NOT: return mk_not(e, enc_as(e, x->u.un.a, DT_BOOL));
	case EX_NEG: return enc_neg(e, x);
	case EX_SELECT: {
		Z3_ast c = enc_as(e, x->u.sel.cond, DT_BOOL);
		Z3_ast a = enc_as(e, x->u.sel.a, x->dtype);
		Z3_ast b = enc_as(e, x->u.sel.b, x->dtype);
		return mk_ite(e, c, a, b);
	}
	case EX_CAST: return enc_as(e, x->u.un.a, x->dtype);
	case EX_LOAD: return enc_load(e, x);
	case EX_UNDEF: return enc_undef(e, x);
	case EX_LET: return enc_let(e, x);
	case EX_CALL: return enc_call(e, x);
	case EX_OPAQUE: /* no model of what it returns or does: no proof uses it */
		return fail(e, "not supported: the opaque call T.%s (what it reads, writes "
			    "and returns is unknown)", x->u.opq.name);
	case EX_COUNT: break;
	}
	return fail(e, "internal: invalid expression kind %d", (int)x->kind);
}

/* Memoised on the node outside lets (the environment is empty there)
 * and only for subtrees without T.undef(): each occurrence of undef is a
 * fresh value even when the IR shares the node. */
static Z3_ast enc(SmtEncoding *e, const Expr *x)
{
	if (!x)
		return fail(e, "internal: missing expression");
	if (e->error)
		return NULL;
	EncodeState *st = e->st;
	bool memo_ok = st->nenv == 0;
	uintptr_t hit;
	if (memo_ok && ptrmap_get(&st->memo, x, &hit))
		return (Z3_ast)hit;
	bool outer_undef = st->saw_undef;
	st->saw_undef = false;
	Z3_ast r = enc_kind(e, x);
	bool mine = st->saw_undef;
	st->saw_undef = outer_undef || mine;
	if (r && memo_ok && !mine && !ptrmap_put(&st->memo, x, (uintptr_t)r))
		return fail(e, "out of memory");
	return r;
}

/* ---------- the propositional level of hyps and goal ----------
 * In ieee mode a float `==` means two different things in obligations:
 * a program comparison (IEEE: -0.0 == 0.0, NaN != NaN; path conditions,
 * T.assume facts) or "the same value" (SMT `=`: the no-op and simplify
 * goals and producer facts of semantics.md, under which x + 0.0 == x
 * fails at x = -0.0). The IR has one operator for both, so an equality
 * reached from the root through and/or/not/let/select branches is
 * encoded to hold under either reading: where the assertion states it
 * (a hypothesis), as the weaker `fp.eq or =`; where the assertion denies
 * it (the goal, under (not goal)), as the stronger `fp.eq and =`. A
 * proof therefore holds whichever reading the rewrite meant; the price
 * is that NaN == NaN no longer excludes NaN in a hypothesis, and a goal
 * equality also needs both sides non-NaN. Comparisons inside terms (a
 * select's condition, under a bool ==) are program comparisons: fp.eq. */

typedef enum {
	POL_ASSERTED, /* weakest encoding is sound */
	POL_DENIED,   /* strongest encoding is sound */
} Polarity;

static Polarity flip(Polarity p)
{
	return p == POL_ASSERTED ? POL_DENIED : POL_ASSERTED;
}

static Z3_ast enc_prop(SmtEncoding *e, const Expr *x, Polarity pol);

static bool is_ieee_equality(const SmtEncoding *e, const Expr *x)
{
	if (e->fm != FLOAT_IEEE || x->kind != EX_BIN ||
	    (x->u.bin.op != OP_EQ && x->u.bin.op != OP_NE) || !x->u.bin.a ||
	    !x->u.bin.b)
		return false;
	return class_of(operand_dtype(x->u.bin.a, x->u.bin.b)) == CL_FLOAT;
}

static Z3_ast enc_value_equality(SmtEncoding *e, const Expr *x, Polarity pol)
{
	DType t = operand_dtype(x->u.bin.a, x->u.bin.b);
	Z3_ast a = enc_as(e, x->u.bin.a, t), b = enc_as(e, x->u.bin.b, t);
	if (x->u.bin.op == OP_NE) /* a != b is not (a == b) */
		pol = flip(pol);
	Z3_ast ieee = mk2(e, Z3_mk_fpa_eq, a, b), same = mk2(e, Z3_mk_eq, a, b);
	if (e->st->same_value_goal) /* the obligation says which reading */
		return x->u.bin.op == OP_NE ? mk_not(e, same) : same;
	Z3_ast r = mkn(e, pol == POL_ASSERTED ? Z3_mk_or : Z3_mk_and, ieee, same);
	return x->u.bin.op == OP_NE ? mk_not(e, r) : r;
}

static Z3_ast enc_prop_let(SmtEncoding *e, const Expr *x, Polarity pol)
{
	if (!bind_let(e, x))
		return NULL;
	Z3_ast body = enc_prop(e, x->u.let.body, pol);
	unbind_let(e);
	return body;
}

static Z3_ast enc_prop(SmtEncoding *e, const Expr *x, Polarity pol)
{
	if (!x)
		return fail(e, "internal: missing expression");
	if (x->dtype != DT_BOOL)
		return enc_as(e, x, DT_BOOL);
	if (is_ieee_equality(e, x))
		return enc_value_equality(e, x, pol);
	if (x->kind == EX_BIN && binop_is_logical(x->u.bin.op)) {
		Z3_ast a = enc_prop(e, x->u.bin.a, pol);
		Z3_ast b = enc_prop(e, x->u.bin.b, pol);
		return mkn(e, x->u.bin.op == OP_AND ? Z3_mk_and : Z3_mk_or, a, b);
	}
	if (x->kind == EX_NOT)
		return mk_not(e, enc_prop(e, x->u.un.a, flip(pol)));
	if (x->kind == EX_SELECT) {
		Z3_ast c = enc_as(e, x->u.sel.cond, DT_BOOL);
		Z3_ast a = enc_prop(e, x->u.sel.a, pol);
		Z3_ast b = enc_prop(e, x->u.sel.b, pol);
		return mk_ite(e, c, a, b);
	}
	if (x->kind == EX_LET)
		return enc_prop_let(e, x, pol);
	return enc_as(e, x, DT_BOOL);
}

/* ---------- obligations ---------- */

static Z3_ast in_range(SmtEncoding *e, Z3_ast x, Interval r)
{
	Z3_ast lo = mk_int(e, (int64_t)r.lo), hi = mk_int(e, (int64_t)r.hi);
	return mkn(e, Z3_mk_and, mk2(e, Z3_mk_le, lo, x), mk2(e, Z3_mk_le, x, hi));
}

/* The range facts, first in asserts (then `more` entries follow): every
 * integer T.undef() and buffer cell read holds a value of its dtype, and
 * every variable that occurs lies within its dtype and, when a left-out
 * wrap rests on them (uses_learnt), the bounds ranges_learn derived from
 * the query; a fact the query states itself is left out. Each fact
 * follows from the dtypes and the query, so it removes no state the
 * interpreter can reach. Proofs are sound without them; they make every
 * model a reachable state: counterexamples are real. */
static bool add_range_facts(SmtEncoding *e, int more)
{
	int n = 0;
	for (int i = 0; i < e->nsyms; i++)
		n += e->syms[i].kind != SYM_BUFFER;
	e->asserts = calloc((size_t)(n + e->nloads + e->st->napps + more),
			    sizeof *e->asserts);
	if (!e->asserts)
		return fail(e, "out of memory"), false;
	/* the bounds some left-out wrap rests on */
	RangeInfo *basis = e->st->uses_learnt ? e->st->ranges : e->st->stated;
	for (int i = 0; i < e->nsyms; i++) {
		const SmtSym *s = &e->syms[i];
		Interval r;
		if (s->kind == SYM_BUFFER || s->kind == SYM_FUNC ||
		    class_of(s->dtype) != CL_INT || !iv_of_dtype(s->dtype, &r))
			continue;
		/* a variable that occurs nowhere can take any value */
		if (s->kind == SYM_VAR &&
		    (!s->occurs || ranges_var_stated(basis, s->var)))
			continue;
		if (s->kind == SYM_VAR)
			r = ranges_var(basis, s->var);
		if (!(e->asserts[e->nasserts++] = in_range(e, s->value, r)))
			return false;
	}
	for (int i = 0; i < e->nloads; i++) {
		Interval r;
		DType t = e->syms[e->loads[i].sym].dtype;
		if (class_of(t) != CL_INT || !iv_of_dtype(t, &r))
			continue;
		if (!(e->asserts[e->nasserts++] = in_range(e, e->loads[i].app, r)))
			return false;
	}
	/* an integer math call (T.abs) gives a value of its dtype */
	for (int i = 0; i < e->st->napps; i++) {
		Interval r;
		if (!iv_of_dtype(e->st->int_apps[i].t, &r))
			continue;
		if (!(e->asserts[e->nasserts++] = in_range(e, e->st->int_apps[i].app, r)))
			return false;
	}
	e->nranges = e->nasserts;
	return true;
}

/* The hypotheses, then (not goal): o->nhyps + 1 entries of props. */
static bool encode_props(SmtEncoding *e, const Obligation *o, Z3_ast *props)
{
	for (int i = 0; i < o->nhyps; i++)
		if (!(props[i] = enc_prop(e, o->hyps[i], POL_ASSERTED)))
			return false;
	e->st->same_value_goal = o->same_value;
	props[o->nhyps] = mk_not(e, enc_prop(e, o->goal, POL_DENIED));
	e->st->same_value_goal = false;
	return props[o->nhyps] != NULL;
}

bool smt_encode(Z3_context c, const Obligation *o, FloatMode fm,
		SmtEncoding *e)
{
	memset(e, 0, sizeof *e);
	e->ctx = c;
	e->fm = fm;
	e->ob = o;
	smt_z3_error_clear();
	e->st = calloc(1, sizeof *e->st);
	if (!e->st)
		return fail(e, "out of memory"), false;
	if (!c)
		return fail(e, "internal: no z3 context"), false;
	if (!o || !o->goal)
		return fail(e, "internal: obligation without a goal"), false;
	if (!make_sorts(e))
		return false;
	EncodeState *st = e->st;
	if (!(st->ranges = ranges_new(false)) || !(st->stated = ranges_new(true)) ||
	    !ranges_learn(st->ranges, o->nhyps, o->hyps, o->goal) ||
	    !ranges_learn(st->stated, o->nhyps, o->hyps, o->goal))
		return fail(e, "out of memory"), false;
	for (int i = 0; i < o->nvars; i++)
		if (o->vars[i] && var_sym(e, o->vars[i]) < 0)
			return false;
	Z3_ast *props = calloc((size_t)o->nhyps + 1, sizeof *props);
	if (!props)
		return fail(e, "out of memory"), false;
	/* the range facts go first but are known only once all is encoded */
	bool ok = encode_props(e, o, props) && add_range_facts(e, o->nhyps + 1);
	for (int i = 0; ok && i <= o->nhyps; i++)
		e->asserts[e->nasserts++] = props[i];
	free(props);
	return ok && !e->error;
}

/* The names of the assertions: range_K for the range facts, the
 * obligation's names for its hypotheses (hyp_K for one without), goal for
 * the negated goal. Each is a plain SMT-LIB symbol ([A-Za-z0-9_], not
 * starting with a digit), told apart from each other and from every
 * declared symbol by a suffix _2, _3, ... */
static bool name_taken(char **names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return true;
	return false;
}

static char **assertion_names(SmtEncoding *e)
{
	Z3_context c = e->ctx;
	int ntaken = e->nsyms, n = e->nasserts;
	char **taken = calloc((size_t)(ntaken + n) + 1, sizeof *taken);
	if (!taken)
		return NULL;
	for (int i = 0; i < e->nsyms; i++) {
		const char *s = Z3_get_symbol_string(c, Z3_get_decl_name(c, e->syms[i].decl));
		taken[i] = strdup(s ? s : "");
	}
	char **names = taken + ntaken;
	int nhyps = e->ob ? e->ob->nhyps : 0;
	for (int i = 0; i < n; i++) {
		int h = i - e->nranges; /* the hypothesis, when 0 <= h < nhyps */
		const char *given = h >= 0 && h < nhyps ? obligation_hyp_name(e->ob, e->ob->hyps[h]) : NULL;
		StrBuf b = {0};
		if (i < e->nranges)
			sb_printf(&b, "range_%d", i + 1);
		else if (i == n - 1)
			sb_puts(&b, "goal");
		else if (!given)
			sb_printf(&b, "hyp_%d", h + 1);
		for (const char *p = given; p && *p; p++) {
			char ch = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
						  (*p >= '0' && *p <= '9')
					  ? *p
					  : '_';
			if (b.n == 0 && ch >= '0' && ch <= '9')
				sb_puts(&b, "h_");
			sb_put(&b, &ch, 1);
		}
		char *base = sb_take(&b), *name = strdup(base);
		for (int k = 2; name && name_taken(taken, ntaken + i, name); k++) {
			free(name);
			name = NULL;
			if (asprintf(&name, "%s_%d", base, k) < 0)
				name = NULL;
		}
		free(base);
		names[i] = name;
	}
	return taken;
}

static void names_free(char **taken, int n)
{
	for (int i = 0; taken && i < n; i++)
		free(taken[i]);
	free(taken);
}

char *smt_encoding_text(SmtEncoding *e)
{
	Z3_context c = e->ctx;
	StrBuf b = {0};
	const char *msg = NULL;
	char **taken = assertion_names(e);
	if (!taken) {
		fail(e, "out of memory");
		return NULL;
	}
	char **names = taken + e->nsyms;
	sb_puts(&b, "(set-logic ALL)\n");
	for (int i = 0; i < e->nsyms; i++) {
		const char *d = Z3_func_decl_to_string(c, e->syms[i].decl);
		if (!d || smt_z3_error(&msg))
			goto failed;
		sb_puts(&b, d);
		sb_puts(&b, "\n");
	}
	for (int i = 0; i < e->nasserts; i++) {
		if (i == 0 && e->nranges > 0)
			sb_puts(&b, "; value ranges: dtypes, and bounds that the "
				    "assertions below imply\n");
		if (i == e->nranges)
			sb_puts(&b, "; hypotheses, then the negated goal\n");
		const char *t = Z3_ast_to_string(c, e->asserts[i]);
		if (!t || smt_z3_error(&msg))
			goto failed;
		if (!names[i])
			goto failed;
		sb_puts(&b, "(assert (! ");
		sb_puts(&b, t);
		sb_printf(&b, " :named %s))\n", names[i]);
	}
	sb_puts(&b, "(check-sat)\n");
	names_free(taken, e->nsyms + e->nasserts);
	return sb_take(&b);
failed:
	names_free(taken, e->nsyms + e->nasserts);
	free(sb_take(&b));
	fail(e, "internal: z3 error while printing: %s", msg ? msg : "?");
	return NULL;
}

void smt_encoding_disown(SmtEncoding *e)
{
	if (e->st)
		e->st->nowned = 0;
}

void smt_encoding_free(SmtEncoding *e)
{
	EncodeState *st = e->st;
	if (st) {
		for (size_t i = 0; i < st->nowned; i++)
			Z3_dec_ref(e->ctx, st->owned[i]);
		free(st->owned);
		ptrmap_free(&st->vars);
		ptrmap_free(&st->bufs);
		ptrmap_free(&st->memo);
		ptrmap_free(&st->loadset);
		ranges_free(st->ranges);
		ranges_free(st->stated);
		free(st->env);
		free(st->int_apps);
		free(st);
	}
	for (int i = 0; i < e->nloads; i++)
		free(e->loads[i].idx);
	free(e->loads);
	free(e->syms);
	free(e->asserts);
	free(e->error);
	memset(e, 0, sizeof *e);
}
