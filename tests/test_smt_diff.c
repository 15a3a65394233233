/* tests/test_smt_diff.c — the `encoder_diff` case of the smt suite
 * (suite_smt in test_smt.c adds it): smt/encode.c against the reference
 * interpreter on random well-typed expressions over scalar variables of
 * every dtype (bool, int8, int16, int32, int64, uint8, float16, float32,
 * float64):
 * + - * / // % min max, negation, select, comparisons, and/or/not, casts
 * between any two dtypes, lets, and literals at the edges (INT_MIN, -1,
 * 0, max, -0.0, inf, NaN, subnormals).
 *
 * For each expression e and random values of the variables, the
 * interpreter computes R[0] = e (cases it reports as UB are skipped: the
 * encoder exposes no definedness condition, it leaves division by zero
 * and out-of-range float-to-int conversions unconstrained). Then:
 *
 * - evaluation: the obligation `pins => e == value` (same_value: floats
 *   compare as IEEE data, NaN equal to NaN, -0.0 not 0.0) is encoded, and
 *   every assertion is evaluated in the Z3 model that maps each variable
 *   to its value: the range facts and the pins must hold, the negated
 *   goal must not. Pins are random: none, `v == c`, `v + 0 == c` (which
 *   the range analysis cannot read) and bounds around c, so wraps are both
 *   written and left out.
 * - proof, for a sample: with every variable pinned, the solver must prove
 *   e == value and refute e != value (and the z3 binary agree on the
 *   query text, for a sample of those).
 *
 * Expressions with floats are encoded in ieee mode. Real mode (floats as
 * reals) is compared only where no rounding happens: every float
 * subterm, as the interpreter computes it, is an integer below 2^11
 * (float16), 2^24 (float32) or 2^53 (float64), with no true division, inf
 * or NaN.
 * Integer-only expressions alternate between the modes.
 *
 * Deterministic: the seed is VS_SOUNDNESS_SEED when set, else fixed (no
 * two draws in one call's arguments, whose order C leaves open: gcc and
 * clang builds see the same cases).
 * For local sweeps, VS_ENCODER_DIFF_CASES sets the number of cases and
 * VS_ENCODER_DIFF_KEEP_GOING prints every disagreement instead of
 * stopping at the first. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/half.h"
#include "kernel/interp.h"
#include "kernel/print.h"
#include "smt/encode.h"
#include "smt/qhash.h"
#include "smt/range.h"
#include "smt/smt.h"

TCase *smt_encoder_diff_tcase(void);

static Arena arena;
static Solver *solver;
static const Span no_span;

static void setup(void)
{
	arena_init(&arena);
	solver = smt_solver_new(&(SmtOptions){.want_text = true}); /* the tests read smt2 */
}

static void teardown(void)
{
	smt_solver_free(solver);
	arena_free(&arena);
}

/* ---------- random source ---------- */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned pick(unsigned n) { return (unsigned)(next() % n); }
static bool one_in(unsigned n) { return pick(n) == 0; }

static void seed_rng(uint64_t fixed)
{
	const char *s = getenv("VS_SOUNDNESS_SEED");
	rng = s && *s ? (strtoull(s, NULL, 0) * 0x9E3779B97F4A7C15ull) ^ fixed : fixed;
	if (!rng)
		rng = 1;
	for (int i = 0; i < 4; i++)
		next();
}

static int cases_wanted(int fixed)
{
	const char *s = getenv("VS_ENCODER_DIFF_CASES");
	return s && *s ? atoi(s) : fixed;
}

/* ---------- the variables ---------- */

enum { NVARS = 12, NFLOATVARS = 3 }; /* the floats come last */
static const DType var_dtypes[NVARS] = {DT_BOOL,  DT_INT8,    DT_INT16,   DT_INT32,
					DT_INT32, DT_INT64,   DT_UINT8,   DT_UINT8,
					DT_INT8,  DT_FLOAT32, DT_FLOAT64, DT_FLOAT16};
static const char *const var_names[NVARS] = {"p", "a", "s", "x", "y", "l", "u", "w", "b", "f", "d", "h"};

static const DType int_dtypes[] = {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8};
static const DType all_dtypes[] = {DT_BOOL,  DT_INT8,    DT_INT16,   DT_INT32,  DT_INT64,
				   DT_UINT8, DT_FLOAT16, DT_FLOAT32, DT_FLOAT64};
#define COUNT(a) ((unsigned)(sizeof(a) / sizeof *(a)))

/* What the generator may use. */
typedef struct Mode {
	bool floats;   /* float subterms at all */
	bool inexact;  /* true division, inf, NaN, values that round */
	bool lets;
	bool retype;   /* nodes whose operands have other dtypes */
} Mode;

typedef struct Gen {
	Mode m;
	Var *vars[NVARS];
	Value vals[NVARS];
	int nlets;
	Var *lets[8];
	int nfresh;
} Gen;

static int64_t int_edge(DType t)
{
	static const int64_t edges[] = {0,     1,      -1,        2,         -2,        127,
					128,   -128,   -129,      255,       256,       32767,
					-32768, 65535, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
					65536, 1 << 20, 3,        -7,        100,       1000000007,
					16777217, -16777217, (INT64_C(1) << 53) + 1, INT64_MIN + 1};
	switch (pick(5)) {
	case 0: return (int64_t)pick(33) - 16;
	case 1: return dtype_wrap_int((int64_t)next(), t);
	default: return edges[pick(COUNT(edges))];
	}
}

/* A value of integer dtype t, mostly at its edges. */
static int64_t int_value(DType t)
{
	Interval r;
	if (t == DT_BOOL)
		return pick(2);
	if (iv_of_dtype(t, &r) && one_in(4)) {
		Wide v = pick(2) ? r.lo : r.hi;
		v += pick(2) ? 0 : pick(2) ? 1 : -1;
		return iv_wrap_value(v, t);
	}
	return dtype_wrap_int(int_edge(t), t);
}

/* v as a value of float dtype t */
static double round_to(double v, DType t)
{
	return t == DT_FLOAT16 ? vs_f16_round(v) : t == DT_FLOAT32 ? (double)(float)v : v;
}

static double float_value(const Mode *m, DType t)
{
	static const double specials[] = {
		0.0,	  -0.0,	   1.0,		-1.0,	      0.5,	  -2.5,	       INFINITY,
		-INFINITY, NAN,	   FLT_MAX,	-FLT_MAX,     FLT_MIN,	  FLT_TRUE_MIN, DBL_MAX,
		DBL_MIN,   DBL_TRUE_MIN, 16777216.0, 16777217.0, 0x1p53 + 1, 2147483648.0, -2147483649.0,
		0x1p63,	  -0x1p63, 127.5,	-128.75,      255.99,	  0.1,	       1e10,
		-3.0,	  65504.0, 16777216.0, 0x1p53, -0x1p53, 0x1p-126 * 0.75, 1e300, 2147483647.5, -2147483648.75,
		0x1p63 - 1024, -0.99, 255.5, 32767.5, -32768.5, 0x1p24 + 2, 0x1p53 - 1};
	double v;
	if (!m->inexact)
		v = (double)((int)pick(41) - 20);
	else if (pick(3))
		v = specials[pick(COUNT(specials))];
	else if (pick(2)) {
		double mant = (double)((int64_t)pick(2001) - 1000);
		v = ldexp(mant, (int)pick(40) - 20);
	} else {
		uint64_t bits = next();
		memcpy(&v, &bits, sizeof v);
	}
	return round_to(v, t);
}

static Expr *ref(Var *v) { return ir_varref(&arena, v, no_span); }
static Expr *bin(BinOp op, Expr *x, Expr *y) { return ir_bin(&arena, op, x, y, no_span); }
static Expr *cast(DType t, Expr *x) { return ir_cast(&arena, t, x, no_span); }

static Expr *literal(const Mode *m, DType t)
{
	if (t == DT_BOOL)
		return ir_bool(&arena, pick(2));
	if (dtype_is_float(t)) {
		if (one_in(8)) /* an integer literal of float dtype */
			return ir_int(&arena, m->inexact && pick(2) ? int_edge(DT_INT64) : (int64_t)pick(21) - 10,
				      t, no_span);
		double v = float_value(m, t);
		if (t != DT_FLOAT64 && m->inexact && one_in(4)) /* a float64 value, rounded */
			v = float_value(m, DT_FLOAT64);
		return ir_float(&arena, v, t, no_span);
	}
	int64_t v = int_value(t);
	if (one_in(8)) /* unwrapped: the literal wraps to its dtype */
		v = int_edge(DT_INT64);
	return ir_int(&arena, v, t, no_span);
}

static Expr *gen(Gen *g, DType t, int depth);

static DType any_dtype(Gen *g)
{
	for (;;) {
		DType t = all_dtypes[pick(COUNT(all_dtypes))];
		if (g->m.floats || !dtype_is_float(t))
			return t;
	}
}

/* A node of dtype t over operands of other dtypes, as substitution leaves
 * it in rewritten IR (ir_subst_expr keeps a node's dtype when an operand
 * changes): the operands are converted to t. */
static Expr *retyped(DType t, Expr *e)
{
	e->dtype = t;
	return e;
}

static Expr *leaf(Gen *g, DType t)
{
	if (g->m.retype && one_in(12)) { /* a variable read at another dtype */
		Var *v = g->vars[pick(NVARS)];
		if (g->m.floats || !dtype_is_float(v->dtype))
			return retyped(t, ref(v));
	}
	if (pick(3)) {
		Var *cands[NVARS + 8];
		int n = 0;
		for (int k = 0; k < NVARS; k++)
			if (g->vars[k]->dtype == t)
				cands[n++] = g->vars[k];
		for (int k = 0; k < g->nlets; k++)
			if (g->lets[k]->dtype == t)
				cands[n++] = g->lets[k];
		if (n)
			return ref(cands[pick((unsigned)n)]);
	}
	return literal(&g->m, t);
}

/* An arithmetic operand for a result of dtype t: mostly t, sometimes an
 * adapting int32 literal, or another dtype (ir_bin then picks the result
 * dtype; the caller casts back to t). */
static Expr *operand(Gen *g, DType t, int depth)
{
	/* integers at the edge of a float's precision, around 2^24 and 2^53 */
	static const int64_t precision[] = {16777216,	   16777217,	  -16777217,
					    33554433,	   INT64_C(1) << 53, (INT64_C(1) << 53) + 1,
					    -(INT64_C(1) << 53) - 1};
	if (dtype_is_float(t) && g->m.inexact && one_in(16)) {
		int64_t v = precision[pick(COUNT(precision))];
		return ir_int(&arena, v, v == (int32_t)v ? DT_INT32 : DT_INT64, no_span);
	}
	switch (pick(8)) {
	case 0: return ir_int32(&arena, int_edge(DT_INT32));
	case 1: {
		DType o = dtype_is_float(t) ? any_dtype(g) : int_dtypes[pick(COUNT(int_dtypes))];
		if (o == DT_BOOL)
			o = t;
		return gen(g, o, depth);
	}
	default: return gen(g, t, depth);
	}
}

static Expr *to_dtype(DType t, Expr *e) { return e->dtype == t ? e : cast(t, e); }

static Expr *gen_let(Gen *g, DType t, int depth)
{
	char name[16];
	snprintf(name, sizeof name, "t%d", g->nfresh++);
	Var *v = ir_var(&arena, name, any_dtype(g), no_span);
	Expr *value = gen(g, pick(2) ? v->dtype : any_dtype(g), depth - 1);
	g->lets[g->nlets++] = v;
	Expr *body = gen(g, t, depth - 1);
	g->nlets--;
	Expr *e = ir_let(&arena, v, value, body, no_span);
	return to_dtype(t, e);
}

static Expr *gen(Gen *g, DType t, int depth)
{
	if (depth <= 0 || one_in(6))
		return leaf(g, t);
	if (g->m.lets && g->nlets < 8 && one_in(12))
		return gen_let(g, t, depth);
	switch (pick(9)) {
	case 0: { /* select */
		Expr *c = gen(g, pick(4) ? DT_BOOL : any_dtype(g), depth - 1);
		Expr *a = operand(g, t, depth - 1), *b = operand(g, t, depth - 1);
		Expr *e = ir_select(&arena, c, a, b, no_span);
		return g->m.retype && one_in(4) ? retyped(t, e) : to_dtype(t, e);
	}
	case 1: /* a cast from any dtype */
		return to_dtype(t, gen(g, any_dtype(g), depth - 1));
	default: break;
	}
	if (t == DT_BOOL) {
		switch (pick(4)) {
		case 0: return ir_not(&arena, gen(g, DT_BOOL, depth - 1), no_span);
		case 1: {
			Expr *a = gen(g, pick(4) ? DT_BOOL : any_dtype(g), depth - 1);
			Expr *b = gen(g, pick(4) ? DT_BOOL : any_dtype(g), depth - 1);
			return bin(pick(2) ? OP_AND : OP_OR, a, b);
		}
		default: {
			static const BinOp cmps[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
			DType o = any_dtype(g);
			Expr *a = gen(g, o, depth - 1);
			Expr *b = o == DT_BOOL ? gen(g, o, depth - 1) : operand(g, o, depth - 1);
			/* ordering two bools is not encoded (unsupported) */
			bool bools = a->dtype == DT_BOOL && b->dtype == DT_BOOL;
			return bin(cmps[pick(bools ? 2 : 6)], a, b);
		}
		}
	}
	if (!pick(6)) {
		Expr *a = gen(g, t, depth - 1);
		if (g->m.retype && one_in(4) && t != DT_BOOL)
			return retyped(t, ir_neg(&arena, gen(g, any_dtype(g), depth - 1), no_span));
		return ir_neg(&arena, a, no_span);
	}
	static const BinOp int_ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_FLOORMOD, OP_MIN, OP_MAX};
	static const BinOp float_ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_FLOORMOD, OP_MIN, OP_MAX};
	BinOp op;
	if (dtype_is_float(t)) {
		do
			op = float_ops[pick(COUNT(float_ops))];
		while (op == OP_DIV && !g->m.inexact);
	} else
		op = int_ops[pick(COUNT(int_ops))];
	Expr *a = operand(g, t, depth - 1), *b = operand(g, t, depth - 1);
	if (g->m.retype && one_in(6)) {
		DType ta = any_dtype(g), tb = pick(2) ? ta : any_dtype(g);
		a = gen(g, ta, depth - 1);
		b = gen(g, tb, depth - 1);
		if (op == OP_DIV && !dtype_is_float(t))
			op = OP_FLOORDIV;
		return retyped(t, bin(op, a, b));
	}
	Expr *r = bin(op, a, b);
	/* bool arithmetic and `/` on integers are not encoded (unsupported);
	 * an integer literal of float dtype adapts to an integer operand */
	if (r->dtype == DT_BOOL || (op == OP_DIV && !dtype_is_float(r->dtype)))
		r = bin(op, to_dtype(t, a), to_dtype(t, b));
	return to_dtype(t, r);
}

/* The literals of e, as doubles (up to cap). */
static int literals_of(const Expr *e, double *out, int n, int cap)
{
	if (!e || n >= cap)
		return n;
	switch (e->kind) {
	case EX_INT: out[n++] = (double)e->u.ival; return n;
	case EX_FLOAT: out[n++] = e->u.fval; return n;
	case EX_BIN: return literals_of(e->u.bin.b, out, literals_of(e->u.bin.a, out, n, cap), cap);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return literals_of(e->u.un.a, out, n, cap);
	case EX_SELECT:
		n = literals_of(e->u.sel.cond, out, n, cap);
		return literals_of(e->u.sel.b, out, literals_of(e->u.sel.a, out, n, cap), cap);
	case EX_LET: return literals_of(e->u.let.body, out, literals_of(e->u.let.value, out, n, cap), cap);
	default: return n;
	}
}

/* The float16 value next to the float16 v, up or down (NaN stays). */
static double next_half(double v, bool up)
{
	if (isnan(v))
		return v;
	uint16_t h = vs_f16_from_double(v);
	if ((h & 0x7fff) == 0) /* either zero: the least subnormal of the wanted sign */
		return up ? 0x1p-24 : -0x1p-24;
	bool away = up == !(h & 0x8000); /* magnitude grows */
	if (away && (h & 0x7fff) == 0x7c00)
		return v; /* inf */
	return vs_f16_to_double((uint16_t)(away ? h + 1 : h - 1));
}

/* Random values; a third of them at or next to a literal of e, where
 * comparisons and conversions change their outcome. */
static void new_values(Gen *g, const Expr *e)
{
	double lits[32];
	int nlits = literals_of(e, lits, 0, 32);
	for (int k = 0; k < NVARS; k++) {
		DType t = var_dtypes[k];
		bool near = nlits > 0 && one_in(3);
		double c = near ? lits[pick((unsigned)nlits)] : 0;
		if (dtype_is_float(t)) {
			double v = float_value(&g->m, t);
			if (near && (g->m.inexact || (c == trunc(c) && fabs(c) <= 20))) {
				v = round_to(c, t);
				if (g->m.inexact && one_in(2))
					v = t == DT_FLOAT16 ? next_half(v, pick(2))
					    : t == DT_FLOAT32 ? (double)nextafterf((float)v, pick(2) ? INFINITY : -INFINITY)
							      : nextafter(v, pick(2) ? INFINITY : -INFINITY);
			}
			g->vals[k].f = v;
		} else if (near && t != DT_BOOL && isfinite(c) && fabs(c) < 0x1p62) {
			g->vals[k].i = dtype_wrap_int((int64_t)c + (int64_t)pick(3) - 1, t);
		} else
			g->vals[k].i = int_value(t);
	}
}

/* ---------- the interpreter's value ---------- */

/* R[0] = e in a function of the variables (floats set in the state
 * directly: state_new takes integers). false: UB. */
static bool interp_value(Gen *g, Expr *e, Value *out)
{
	Expr *shape[1] = {ir_int32(&arena, 1)}, *zero[1] = {ir_int32(&arena, 0)};
	Buffer *R = ir_buffer(&arena, "R", e->dtype, 1, shape, no_span);
	Param params[NVARS + 1];
	params[0] = (Param){PARAM_BUFFER, NULL, R};
	int64_t ints[NVARS];
	for (int k = 0; k < NVARS; k++) {
		params[k + 1] = (Param){PARAM_SCALAR, g->vars[k], NULL};
		ints[k] = dtype_is_float(var_dtypes[k]) ? 0 : g->vals[k].i;
	}
	Func *f = ir_func(&arena, "f", NVARS + 1, params, ir_store(&arena, R, 1, zero, e, no_span),
			  no_span);
	DiagList d;
	diag_init(&d, &arena);
	State *st = state_new(&arena, f, ints, &d);
	ck_assert_ptr_nonnull(st);
	for (int k = 0; k < NVARS; k++)
		if (dtype_is_float(var_dtypes[k]))
			st->scalars[k].f = g->vals[k].f;
	InterpResult r;
	RunStatus s = interp_run(f, st, 0, &r);
	if (s == RUN_UB)
		return false;
	ck_assert_msg(s == RUN_OK, "%s", r.message);
	*out = st->bufs[0].data[0];
	return true;
}

/* Integers up to this magnitude are exact in float dtype t. */
static double exact_limit(DType t)
{
	return t == DT_FLOAT16 ? 0x1p11 : t == DT_FLOAT32 ? 0x1p24 : 0x1p53;
}

/* Whether the interpreter's value of e converts to float dtype t
 * exactly: |v| <= 2^11 for float16, 2^24 for float32, 2^53 for float64
 * (a float subterm is an integer, checked on its own; a narrower float
 * always converts exactly). */
static bool converts_exactly(Gen *g, Expr *e, DType t)
{
	Value v;
	if (e->dtype == t || (dtype_is_float(e->dtype) && dtype_bits(e->dtype) < dtype_bits(t)))
		return true;
	if (!interp_value(g, e, &v))
		return false;
	if (dtype_is_float(e->dtype))
		return fabs(v.f) <= exact_limit(t);
	/* in integers: (double)v.i rounds, and 2^53 + 1 passed as exact */
	int64_t lim = (int64_t)exact_limit(t);
	return v.i >= -lim && v.i <= lim;
}

/* Real mode compares floats only where the interpreter rounds nowhere:
 * every float subterm an integer below 2^11 (float16), 2^24 (float32) or 2^53, every
 * integer operand converted to a float dtype (arithmetic, comparisons
 * at float64) representable there, and every subterm computed without UB
 * (a select evaluates only one branch). */
static bool exact_everywhere(Gen *g, Expr *e)
{
	if (dtype_is_float(e->dtype)) {
		Value v;
		if (!interp_value(g, e, &v))
			return false;
		double lim = exact_limit(e->dtype);
		if (!(fabs(v.f) < lim) || v.f != trunc(v.f))
			return false;
	}
	switch (e->kind) {
	case EX_BIN: {
		Expr *a = e->u.bin.a, *b = e->u.bin.b;
		DType t = e->dtype;
		if (binop_is_compare(e->u.bin.op))
			t = dtype_is_float(a->dtype) || dtype_is_float(b->dtype) ? DT_FLOAT64 : DT_INT64;
		if (dtype_is_float(t) && (!converts_exactly(g, a, t) || !converts_exactly(g, b, t)))
			return false;
		return exact_everywhere(g, a) && exact_everywhere(g, b);
	}
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return exact_everywhere(g, e->u.un.a);
	case EX_SELECT:
		if (dtype_is_float(e->dtype) &&
		    (!converts_exactly(g, e->u.sel.a, e->dtype) || !converts_exactly(g, e->u.sel.b, e->dtype)))
			return false;
		return exact_everywhere(g, e->u.sel.cond) && exact_everywhere(g, e->u.sel.a) &&
		       exact_everywhere(g, e->u.sel.b);
	case EX_LET: return false; /* lets are not generated for real mode */
	default: return true;
	}
}

/* ---------- obligations ---------- */

static Expr *value_literal(DType t, Value v)
{
	if (dtype_is_float(t))
		return ir_float(&arena, v.f, t, no_span);
	if (t == DT_BOOL)
		return ir_bool(&arena, v.i != 0);
	return ir_int(&arena, v.i, t, no_span);
}

static int add_pins(Gen *g, FloatMode fm, bool all, bool *occurs, Expr **hyps)
{
	int n = 0;
	for (int k = 0; k < NVARS; k++) {
		if (!occurs[k] || (!all && one_in(3)))
			continue;
		Var *v = g->vars[k];
		Value x = g->vals[k];
		Expr *c = value_literal(v->dtype, x);
		if (v->dtype == DT_BOOL) {
			hyps[n++] = pick(2) ? bin(OP_EQ, ref(v), c)
					    : x.i ? ref(v) : ir_not(&arena, ref(v), no_span);
			continue;
		}
		if (dtype_is_float(v->dtype)) {
			/* all: the goal binds v instead (float_lets) */
			if (all)
				continue;
			hyps[n++] = bin(OP_EQ, ref(v), c);
			/* IEEE == admits either zero: 1/v says which */
			if (x.f == 0 && fm == FLOAT_IEEE)
				hyps[n++] = bin(signbit(x.f) ? OP_LT : OP_GT,
						bin(OP_DIV, ir_float(&arena, 1.0, v->dtype, no_span), ref(v)),
						ir_float(&arena, 0.0, v->dtype, no_span));
			continue;
		}
		/* v == c, or v + 0 == c (which the range analysis cannot read),
		 * and sometimes bounds around c; all: at least one of the first
		 * two */
		switch (pick(all ? 2 : 3)) {
		case 0: hyps[n++] = bin(OP_EQ, ref(v), c); break;
		case 1: hyps[n++] = bin(OP_EQ, ir_add(&arena, ref(v), ir_int32(&arena, 0)), c); break;
		default: break;
		}
		if (one_in(2)) {
			int64_t lo, hi;
			if (__builtin_sub_overflow(x.i, (int64_t)pick(3) * 100, &lo))
				lo = INT64_MIN;
			if (__builtin_add_overflow(x.i, (int64_t)pick(3) * 100, &hi))
				hi = INT64_MAX;
			hyps[n++] = ir_and(&arena, bin(OP_LE, ir_int(&arena, lo, DT_INT64, no_span), ref(v)),
					   bin(OP_LE, ref(v), ir_int(&arena, hi, DT_INT64, no_span)));
		}
	}
	return n;
}

/* The float variables bound to their values around goal: pinned by
 * hypotheses instead (IEEE `v == c` as a hypothesis is `fp.eq or =`,
 * plus 1/v for the sign of a zero), Z3 would not substitute them and
 * bit-blasts a float64 division for seconds. The evaluation covers free
 * float variables. */
static Expr *float_lets(Gen *g, const bool *occurs, Expr *goal)
{
	for (int k = 0; k < NVARS; k++)
		if (occurs[k] && dtype_is_float(var_dtypes[k]))
			goal = ir_let(&arena, g->vars[k], value_literal(var_dtypes[k], g->vals[k]), goal,
				      no_span);
	return goal;
}

/* A bound on an integer variable that is tight at its value (v < c with
 * c = value + 1, v >= value, ...): off-by-one errors in the bounds that
 * range.c learns show at the edge. */
static Expr *tight_bound(Gen *g)
{
	static const BinOp cmps[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
	int k = 1 + (int)pick(NVARS - 1 - NFLOATVARS);
	int64_t v = g->vals[k].i, c = v;
	BinOp op = cmps[pick(6)];
	if (op == OP_LT && v < INT64_MAX)
		c = v + 1;
	else if (op == OP_GT && v > INT64_MIN)
		c = v - 1;
	else if (op == OP_NE)
		c = v == INT64_MAX ? v - 1 : v + 1;
	else if (op == OP_LT || op == OP_GT)
		op = OP_EQ;
	Expr *x = ref(g->vars[k]), *y = ir_int(&arena, c, DT_INT64, no_span);
	if (one_in(3))
		x = cast(DT_INT64, x);
	return pick(2) ? bin(op, x, y) : bin(op == OP_LT ? OP_GT : op == OP_GT ? OP_LT :
					   op == OP_LE ? OP_GE : op == OP_GE ? OP_LE : op, y, x);
}

/* A random fact about the variables that holds at their values (h or
 * not h, whichever does), mostly comparisons of a variable, possibly
 * under a cast, with an expression: what range.c learns bounds from. */
static Expr *true_fact(Gen *g, bool floats)
{
	static const BinOp cmps[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
	Expr *h;
	if (one_in(3))
		return tight_bound(g);
	Mode m = g->m;
	int nlets = g->nlets;
	/* integers only for the proof (it pins no float variable by a
	 * hypothesis) and in real mode (which would round) */
	g->m.floats &= floats;
	g->nlets = 0;
	for (int tries = 0; tries < 4; tries++) {
		if (one_in(4))
			h = gen(g, DT_BOOL, 2);
		else {
			Var *v = g->vars[1 + pick(NVARS - 1 - NFLOATVARS)]; /* an integer variable */
			Expr *x = ref(v);
			if (one_in(3))
				x = cast(int_dtypes[pick(COUNT(int_dtypes))], x);
			DType ty = int_dtypes[pick(COUNT(int_dtypes))];
			Expr *y = gen(g, ty, (int)pick(3));
			h = pick(2) ? bin(cmps[pick(6)], x, y) : bin(cmps[pick(6)], y, x);
			if (one_in(3)) {
				BinOp op = cmps[pick(6)];
				Var *w = g->vars[1 + pick(NVARS - 1 - NFLOATVARS)];
				Expr *z = bin(op, ref(w), gen(g, int_dtypes[pick(COUNT(int_dtypes))], 1));
				h = bin(pick(2) ? OP_AND : OP_OR, h, z);
			}
		}
		Value v;
		if (interp_value(g, h, &v)) {
			g->m = m;
			g->nlets = nlets;
			return v.i ? h : ir_not(&arena, h, no_span);
		}
	}
	g->m = m;
	g->nlets = nlets;
	return NULL;
}

static Obligation *diff_ob(int nhyps, Expr **hyps, Expr *goal)
{
	Obligation *o = obligation_new(&arena, "test.diff", "the encoding equals the interpreter",
				       0, NULL, nhyps, hyps, goal, no_span);
	o->same_value = true; /* floats as data: NaN is NaN, -0.0 is not 0.0 */
	return o;
}

static void mark_vars(Gen *g, const Expr *e, bool *occurs)
{
	if (!e)
		return;
	switch (e->kind) {
	case EX_VAR:
		for (int k = 0; k < NVARS; k++)
			occurs[k] |= g->vars[k] == e->u.var;
		return;
	case EX_BIN: mark_vars(g, e->u.bin.a, occurs); mark_vars(g, e->u.bin.b, occurs); return;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: mark_vars(g, e->u.un.a, occurs); return;
	case EX_SELECT:
		mark_vars(g, e->u.sel.cond, occurs);
		mark_vars(g, e->u.sel.a, occurs);
		mark_vars(g, e->u.sel.b, occurs);
		return;
	case EX_LET: mark_vars(g, e->u.let.value, occurs); mark_vars(g, e->u.let.body, occurs); return;
	default: return;
	}
}

static bool has_float(const Expr *e)
{
	if (!e)
		return false;
	if (dtype_is_float(e->dtype))
		return true;
	switch (e->kind) {
	case EX_BIN: return has_float(e->u.bin.a) || has_float(e->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return has_float(e->u.un.a);
	case EX_SELECT: return has_float(e->u.sel.cond) || has_float(e->u.sel.a) || has_float(e->u.sel.b);
	case EX_LET: return dtype_is_float(e->u.let.var->dtype) || has_float(e->u.let.value) ||
			    has_float(e->u.let.body);
	default: return false;
	}
}

/* ---------- evaluation in a Z3 model ---------- */

static char *value_text(DType t, Value v)
{
	char *s = NULL;
	if (dtype_is_float(t))
		ck_assert_int_ge(asprintf(&s, "%a (%.17g)", v.f, v.f), 0);
	else
		ck_assert_int_ge(asprintf(&s, "%lld", (long long)v.i), 0);
	return s;
}

static Z3_ast value_ast(Z3_context c, Z3_sort s, DType t, Value v, FloatMode fm)
{
	if (t == DT_BOOL)
		return v.i ? Z3_mk_true(c) : Z3_mk_false(c);
	if (!dtype_is_float(t))
		return Z3_mk_int64(c, v.i, s);
	if (fm == FLOAT_REAL) {
		char *q = smt_double_to_rational(v.f);
		Z3_ast r = Z3_mk_numeral(c, q, s);
		free(q);
		return r;
	}
	if (isnan(v.f))
		return Z3_mk_fpa_nan(c, s);
	if (isinf(v.f))
		return Z3_mk_fpa_inf(c, s, v.f < 0);
	if (v.f == 0)
		return Z3_mk_fpa_zero(c, s, signbit(v.f));
	/* Z3 4.8.12 loses float32 subnormals given as a double (and float16
	 * ones: those go by their bits) */
	if (t == DT_FLOAT32)
		return Z3_mk_fpa_numeral_float(c, (float)v.f, s);
	if (t == DT_FLOAT16) /* simplified to an (fp ...) value, which a model needs */
		return Z3_simplify(c, Z3_mk_fpa_to_fp_bv(c, Z3_mk_unsigned_int(c, vs_f16_from_double(v.f),
									      Z3_mk_bv_sort(c, 16)),
							 s));
	return Z3_mk_fpa_numeral_double(c, v.f, s);
}

typedef struct Outcome {
	bool ok;
	const char *why; /* which assertion failed, arena-owned */
} Outcome;

/* Evaluate every assertion of o's encoding in the model var := value. */
/* The cache key (smt/qhash.c) of every query encoded here, with its
 * text: two keys are equal exactly when the texts are (the cache keys by
 * structure, the log records text; they must never disagree). */
typedef struct Keyed {
	QKey key;
	uint64_t text_hash; /* FNV-1a: only to skip most strcmp calls */
	char *text;
} Keyed;
static Keyed *keyed;
static int nkeyed, capkeyed;

static void check_key(SmtEncoding *enc)
{
	Keyed k;
	ck_assert(smt_encoding_key(enc, &k.key));
	k.text = smt_encoding_text(enc);
	ck_assert_ptr_nonnull(k.text);
	k.text_hash = 1469598103934665603ULL;
	for (const char *p = k.text; *p; p++)
		k.text_hash = (k.text_hash ^ (unsigned char)*p) * 1099511628211ULL;
	for (int i = 0; i < nkeyed; i++) {
		bool same_key = memcmp(&keyed[i].key, &k.key, sizeof k.key) == 0;
		bool same_text = keyed[i].text_hash == k.text_hash && strcmp(keyed[i].text, k.text) == 0;
		ck_assert_msg(same_key == same_text, "keys %s but texts %s:\n%s\n%s",
			      same_key ? "equal" : "differ", same_text ? "equal" : "differ",
			      keyed[i].text, k.text);
		if (same_text) { /* already there */
			free(k.text);
			return;
		}
	}
	if (nkeyed == capkeyed) {
		capkeyed = capkeyed ? 2 * capkeyed : 256;
		keyed = realloc(keyed, sizeof *keyed * (size_t)capkeyed);
		ck_assert_ptr_nonnull(keyed);
	}
	keyed[nkeyed++] = k;
}

static void free_keys(void)
{
	for (int i = 0; i < nkeyed; i++)
		free(keyed[i].text);
	free(keyed);
	keyed = NULL;
	nkeyed = capkeyed = 0;
}

static Outcome evaluate(Z3_context c, Gen *g, Obligation *o, FloatMode fm, bool goal_holds)
{
	SmtEncoding enc;
	Outcome out = {true, NULL};
	bool encoded = smt_encode(c, o, fm, &enc);
	ck_assert_msg(encoded, "cannot encode: %s", enc.error ? enc.error : "?");
	check_key(&enc);
	Z3_model m = Z3_mk_model(c);
	Z3_model_inc_ref(c, m);
	for (int i = 0; i < enc.nsyms; i++) {
		SmtSym *s = &enc.syms[i];
		if (s->kind != SYM_VAR)
			continue;
		int k = 0;
		while (k < NVARS && g->vars[k] != s->var)
			k++;
		ck_assert_int_lt(k, NVARS);
		Z3_ast v = value_ast(c, Z3_get_range(c, s->decl), s->dtype, g->vals[k], fm);
		ck_assert_ptr_nonnull(v);
		Z3_inc_ref(c, v);
		Z3_add_const_interp(c, m, s->decl, v);
		Z3_dec_ref(c, v);
	}
	for (int i = 0; i < enc.nasserts && out.ok; i++) {
		Z3_ast r = NULL;
		bool done = Z3_model_eval(c, m, enc.asserts[i], true, &r);
		ck_assert_msg(done && r, "cannot evaluate assertion %d", i);
		Z3_inc_ref(c, r);
		Z3_lbool b = Z3_get_bool_value(c, r);
		bool last = i == enc.nasserts - 1;
		if (b != (last && goal_holds ? Z3_L_FALSE : Z3_L_TRUE)) {
			out.ok = false;
			const char *what = i < enc.nranges ? "range fact" : last ? "negated goal" : "pin";
			StrBuf sb = {0};
			sb_printf(&sb, "%s %d evaluates to %s: %s", what, i, Z3_ast_to_string(c, r),
				  Z3_ast_to_string(c, enc.asserts[i]));
			/* the encoded expression's value: not (= E W) */
			Z3_ast a = enc.asserts[i];
			if (last && Z3_get_ast_kind(c, a) == Z3_APP_AST &&
			    Z3_get_app_num_args(c, Z3_to_app(c, a)) == 1) {
				Z3_ast eq = Z3_get_app_arg(c, Z3_to_app(c, a), 0);
				if (Z3_get_ast_kind(c, eq) == Z3_APP_AST &&
				    Z3_get_app_num_args(c, Z3_to_app(c, eq)) == 2) {
					Z3_ast lhs = Z3_get_app_arg(c, Z3_to_app(c, eq), 0), val = NULL;
					if (Z3_model_eval(c, m, lhs, true, &val) && val) {
						Z3_inc_ref(c, val);
						sb_printf(&sb, "\n  the encoding's value: %s",
							  Z3_ast_to_string(c, val));
						Z3_dec_ref(c, val);
					}
				}
			}
			char *text = sb_take(&sb);
			out.why = arena_strdup(&arena, text);
			free(text);
		}
		Z3_dec_ref(c, r);
	}
	Z3_model_dec_ref(c, m);
	smt_encoding_free(&enc);
	return out;
}

/* The first line `z3` prints for an SMT-LIB2 text (malloc'ed). */
static char *run_z3(const char *text)
{
	char path[] = "/tmp/vsched-diff-XXXXXX.smt2";
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char *command = NULL, line[256] = "", rest[256];
	ck_assert_int_ge(asprintf(&command, "z3 -T:30 %s 2>&1", path), 0);
	FILE *p = popen(command, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(line, sizeof line, p))
		line[0] = '\0';
	while (fgets(rest, sizeof rest, p))
		;
	pclose(p);
	free(command);
	unlink(path);
	line[strcspn(line, "\r\n")] = '\0';
	return strdup(line);
}

/* ---------- the test ---------- */

typedef struct Tally {
	int generated, ub, compared, proven, inexact_real;
	int by_mode[2], with_float, pinned_nothing;
} Tally;

static char *describe(Gen *g, Expr *e, const bool *occurs, DType t, Value want)
{
	StrBuf sb = {0};
	char *es = print_expr(e);
	sb_printf(&sb, "e = %s  (dtype %s)\n  with", es, dtype_name(e->dtype));
	free(es);
	for (int k = 0; k < NVARS; k++)
		if (occurs[k]) {
			char *v = value_text(var_dtypes[k], g->vals[k]);
			sb_printf(&sb, " %s=%s", var_names[k], v);
			free(v);
		}
	char *w = value_text(t, want);
	sb_printf(&sb, "\n  interpreter: %s", w);
	free(w);
	return sb_take(&sb);
}

/* One random case: false when skipped (UB, or rounding in real mode). */
static bool run_case(Gen *g, Z3_context c, Tally *t, bool prove, char **failure)
{
	bool floats = pick(3) != 0;
	bool real = floats ? one_in(4) : pick(2);
	g->m = (Mode){floats, floats && !real, !real || !floats, one_in(3)};
	g->nlets = 0;
	DType root = floats && pick(2) ? (pick(2) ? DT_FLOAT32 : DT_FLOAT64) : any_dtype(g);
	Expr *e = gen(g, root, 1 + (int)pick(4));
	t->generated++;
	new_values(g, e);
	Value want;
	if (!interp_value(g, e, &want)) {
		t->ub++;
		return false;
	}
	FloatMode fm = real ? FLOAT_REAL : FLOAT_IEEE;
	if (real && has_float(e) && !exact_everywhere(g, e)) {
		t->inexact_real++;
		return false;
	}
	t->compared++;
	t->by_mode[fm]++;
	t->with_float += has_float(e);
	bool occurs[NVARS] = {false};
	mark_vars(g, e, occurs);
	Expr *hyps[3 * NVARS + 4];
	int nhyps = 0;
	for (int k = (int)pick(4); k > 0; k--) {
		Expr *h = true_fact(g, !prove && fm == FLOAT_IEEE);
		if (h) {
			hyps[nhyps++] = h;
			mark_vars(g, h, occurs);
		}
	}
	nhyps += add_pins(g, fm, prove, occurs, hyps + nhyps);
	t->pinned_nothing += nhyps == 0;
	Expr *want_lit = value_literal(e->dtype, want);
	Outcome r = evaluate(c, g, diff_ob(nhyps, hyps, bin(OP_EQ, e, want_lit)), fm, true);
	/* e itself as the goal, where its float equalities are program
	 * comparisons read strictly (fp.eq and =): a false e is refuted */
	if (r.ok && e->dtype == DT_BOOL && !want.i) {
		Obligation *o = diff_ob(nhyps, hyps, e);
		o->same_value = false;
		r = evaluate(c, g, o, fm, false);
	}
	if (!r.ok) {
		char *d = describe(g, e, occurs, e->dtype, want);
		ck_assert_int_ge(asprintf(failure, "%s mode: %s\n  %s", float_mode_name(fm), d, r.why), 0);
		free(d);
		return true;
	}
	if (!prove)
		return true;
	ObligationResult same, other;
	smt_discharge(solver, &arena, diff_ob(nhyps, hyps, float_lets(g, occurs, bin(OP_EQ, e, want_lit))),
		      fm, &same);
	smt_discharge(solver, &arena, diff_ob(nhyps, hyps, float_lets(g, occurs, bin(OP_NE, e, want_lit))),
		      fm, &other);
	if (same.verdict != VERDICT_PROVEN || other.verdict != VERDICT_REFUTED) {
		char *d = describe(g, e, occurs, e->dtype, want);
		ck_assert_int_ge(asprintf(failure, "%s mode: %s\n  e == value is %s (%s), e != value is %s (%s)\n%s",
					  float_mode_name(fm), d, verdict_name(same.verdict),
					  same.reason ? same.reason : "", verdict_name(other.verdict),
					  other.reason ? other.reason : "",
					  same.verdict != VERDICT_PROVEN ? same.smt2 : other.smt2),
				 0);
		free(d);
		return true;
	}
	t->proven++;
	/* the logged text says the same to the z3 binary, for a sample */
	if (t->proven % 25 == 0) {
		char *z = run_z3(same.smt2), *zo = run_z3(other.smt2);
		if (strcmp(z, "unsat") != 0 || strcmp(zo, "sat") != 0) {
			char *d = describe(g, e, occurs, e->dtype, want);
			ck_assert_int_ge(asprintf(failure, "%s mode: %s\n  z3 says %s for e == value, %s for e != value\n%s",
						  float_mode_name(fm), d, z, zo, same.smt2),
					 0);
			free(d);
		}
		free(z);
		free(zo);
	}
	return true;
}

static void make_vars(Gen *g)
{
	memset(g, 0, sizeof *g);
	for (int k = 0; k < NVARS; k++)
		g->vars[k] = ir_var(&arena, var_names[k], var_dtypes[k], no_span);
}

static void print_tally(const char *what, const Tally *t)
{
	fprintf(stderr,
		"encoder_diff (%s): %d expressions, %d compared (%d ieee, %d real; %d with floats; "
		"%d unpinned), %d proven, skipped %d UB and %d rounding in real mode\n",
		what, t->generated, t->compared, t->by_mode[FLOAT_IEEE], t->by_mode[FLOAT_REAL],
		t->with_float, t->pinned_nothing, t->proven, t->ub, t->inexact_real);
}

/* Cases until `want` are compared (at most 4 * want generated); the
 * first disagreement fails, or with VS_ENCODER_DIFF_KEEP_GOING each one
 * is printed and the run goes on. */
static void run_cases(int want, uint64_t seed, bool prove, const char *label, Tally *t)
{
	Gen g;
	make_vars(&g);
	seed_rng(seed);
	Z3_context c = smt_context_new();
	ck_assert_ptr_nonnull(c);
	char *failure = NULL;
	bool keep_going = getenv("VS_ENCODER_DIFF_KEEP_GOING") != NULL;
	int failures = 0;
	while (t->compared < want && t->generated < 4 * want) {
		run_case(&g, c, t, prove, &failure);
		if (failure && keep_going) {
			fprintf(stderr, "DISAGREEMENT %d:\n%s\n\n", ++failures, failure);
			free(failure);
			failure = NULL;
		}
		if (failure)
			break;
	}
	Z3_del_context(c);
	print_tally(label, t);
	fprintf(stderr, "encoder_diff (%s): %d distinct queries, cache keys equal exactly when texts are\n",
		label, nkeyed);
	free_keys();
	ck_assert_msg(!failure, "%s", failure);
}

START_TEST(random_expressions_evaluate_as_the_interpreter_computes)
{
	int want = cases_wanted(3000);
	Tally t = {0};
	run_cases(want, 0xA0761D6478BD642Full, false, "evaluated", &t);
	ck_assert_int_ge(t.compared, want);
	ck_assert_int_gt(t.with_float, want / 3);
	ck_assert_int_gt(t.by_mode[FLOAT_REAL], want / 5);
}
END_TEST

START_TEST(random_expressions_are_proven_as_the_interpreter_computes)
{
	int want = cases_wanted(3000) / 20;
	Tally t = {0};
	run_cases(want, 0xE7037ED1A0B428DBull, true, "proven", &t);
	ck_assert_int_eq(t.proven, want);
}
END_TEST

TCase *smt_encoder_diff_tcase(void)
{
	TCase *tc = tcase_create("encoder_diff");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, random_expressions_evaluate_as_the_interpreter_computes);
	tcase_add_test(tc, random_expressions_are_proven_as_the_interpreter_computes);
	return tc;
}
