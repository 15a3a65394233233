/* kernel/analysis/region.c — bound inference (region.h): the linear
 * simplifier (over affine.h forms), numeric (interval.h) and symbolic
 * bounds with the floor-division and modulo rules that make
 * fuse-then-split regions tight (seed 002, Ex. 6), and boxes of the
 * accesses of a buffer. Enumeration is in region_enum.c. */
#include "kernel/analysis/region.h"

#include <stdlib.h>
#include <string.h>

/* Numbers beyond this are not reasoned about (no overflow in int64). */
#define RG_BIG AFFINE_BIG
#define LIN_MAX 12 /* terms of a linear form */

static const Span no_span;

static int64_t fdiv(int64_t a, int64_t b) { return (int64_t)iv_fdiv(a, b); }
static int64_t fmod64(int64_t a, int64_t b) { return (int64_t)iv_fmod(a, b); }

/* ---------- environment ---------- */

void rg_env_init(RgEnv *e, Arena *a)
{
	memset(e, 0, sizeof *e);
	e->a = a;
}

static RgVar *push_var(RgEnv *e)
{
	if (e->nvars == e->capvars) {
		int cap = e->capvars ? e->capvars * 2 : 16;
		RgVar *v = arena_alloc(e->a, sizeof(RgVar) * (size_t)cap);
		if (e->nvars)
			memcpy(v, e->vars, sizeof(RgVar) * (size_t)e->nvars);
		e->vars = v;
		e->capvars = cap;
	}
	RgVar *v = &e->vars[e->nvars++];
	memset(v, 0, sizeof *v);
	return v;
}

void rg_push_loop(RgEnv *e, Var *v, Expr *min, Expr *extent, bool relaxed)
{
	RgVar *x = push_var(e);
	x->var = v;
	x->relaxed = relaxed;
	x->min = min;
	x->extent = extent;
}

void rg_push_let(RgEnv *e, Var *v, Expr *value, bool relaxed)
{
	RgVar *x = push_var(e);
	x->var = v;
	x->relaxed = relaxed;
	x->value = value;
}

static void push_guard_expr(RgEnv *e, Expr *g)
{
	if (e->nguards == e->capguards) {
		int cap = e->capguards ? e->capguards * 2 : 16;
		Expr **gs = arena_alloc(e->a, sizeof(Expr *) * (size_t)cap);
		if (e->nguards)
			memcpy(gs, e->guards, sizeof(Expr *) * (size_t)e->nguards);
		e->guards = gs;
		e->capguards = cap;
	}
	e->guards[e->nguards++] = g;
}

static BinOp negate_compare(BinOp op)
{
	switch (op) {
	case OP_LT: return OP_GE;
	case OP_LE: return OP_GT;
	case OP_GT: return OP_LE;
	case OP_GE: return OP_LT;
	case OP_EQ: return OP_NE;
	case OP_NE: return OP_EQ;
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
	case OP_COUNT:
		break;
	}
	return OP_COUNT;
}

void rg_push_guard(RgEnv *e, Expr *cond, bool negate)
{
	if (cond->kind == EX_NOT) {
		rg_push_guard(e, cond->u.un.a, !negate);
		return;
	}
	if (cond->kind != EX_BIN)
		return;
	BinOp op = cond->u.bin.op;
	if ((op == OP_AND && !negate) || (op == OP_OR && negate)) {
		rg_push_guard(e, cond->u.bin.a, negate);
		rg_push_guard(e, cond->u.bin.b, negate);
		return;
	}
	/* a comparison reading a buffer: its state is not named here */
	if (!binop_is_compare(op) || !dtype_is_int(cond->u.bin.a->dtype) || an_expr_has_load(cond))
		return;
	if (negate) {
		BinOp n = negate_compare(op);
		if (n == OP_COUNT || n == OP_NE)
			return;
		push_guard_expr(e, ir_bin(e->a, n, cond->u.bin.a, cond->u.bin.b, no_span));
		return;
	}
	if (op != OP_NE)
		push_guard_expr(e, cond);
}

void rg_pop(RgEnv *e, int nvars, int nguards)
{
	e->nvars = nvars;
	e->nguards = nguards;
}

const RgVar *rg_lookup(const RgEnv *e, const Var *v)
{
	for (int i = e->nvars - 1; i >= 0; i--)
		if (e->vars[i].var == v)
			return &e->vars[i];
	return NULL;
}

bool rg_has_relaxed(const RgEnv *e, const Expr *x)
{
	switch (x->kind) {
	case EX_INT:
	case EX_FLOAT:
	case EX_UNDEF:
		return false;
	case EX_VAR: {
		const RgVar *v = rg_lookup(e, x->u.var);
		return v && v->relaxed;
	}
	case EX_BIN:
		return rg_has_relaxed(e, x->u.bin.a) || rg_has_relaxed(e, x->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		return rg_has_relaxed(e, x->u.un.a);
	case EX_SELECT:
		return rg_has_relaxed(e, x->u.sel.cond) || rg_has_relaxed(e, x->u.sel.a) ||
		       rg_has_relaxed(e, x->u.sel.b);
	case EX_LOAD:
		for (int i = 0; i < x->u.load.nidx; i++)
			if (rg_has_relaxed(e, x->u.load.idx[i]))
				return true;
		return false;
	case EX_CALL:
		for (int i = 0; i < x->u.call.nargs; i++)
			if (rg_has_relaxed(e, x->u.call.args[i]))
				return true;
		return false;
	case EX_OPAQUE: /* its value is unknown: conservative */
		return true;
	case EX_LET:
		/* the let's own variable is not in env: conservative */
		return true;
	case EX_COUNT:
		break;
	}
	abort();
}

/* ---------- structural identity ---------- */

bool rg_same(const Expr *x, const Expr *y) { return affine_same_atom(x, y); }

/* ---------- numeric bounds ---------- */

/* Numeric bounds are intervals (interval.h) on mathematical integers;
 * either side may be unbounded (a loop whose extent is a parameter still
 * has a lower bound), and a side beyond 2^40 counts as unbounded. */
static Interval rg_clip(Interval r) { return iv_clip(r, RG_BIG); }

static Interval nb_of(RgEnv *e, const Expr *x, int depth);

static Interval nb_var(RgEnv *e, const Var *v, int depth)
{
	const RgVar *r = rg_lookup(e, v);
	if (!r)
		return iv_unbounded();
	if (!r->min)
		return nb_of(e, r->value, depth + 1);
	Interval m = nb_of(e, r->min, depth + 1), x = nb_of(e, r->extent, depth + 1);
	/* a value exists only when the loop runs (extent >= 1) */
	Interval steps = iv_make(0, iv_has_hi(x) ? (x.hi >= 1 ? x.hi : 1) - 1 : IV_POS_INF);
	return rg_clip(iv_add(m, steps));
}

/* The gcd of c and every coefficient and the constant of x's linear
 * form (1 when x is not linear): x is a multiple of it. */
static int64_t mod_step(RgEnv *e, const Expr *x, int64_t c);

/* a % b: the engine's rule, and for a constant b = c a multiple of
 * g (g divides c) modulo c is at most c - g: (4*xo) % 4096 <= 4092. */
static Interval nb_floormod(RgEnv *e, const Expr *x, Interval a, Interval b)
{
	Wide c;
	if (!iv_is_bounded(b) || b.lo <= 0)
		return iv_unbounded();
	bool one_period = iv_is_point(b, &c) && iv_is_bounded(a) &&
			  iv_fdiv(a.lo, c) == iv_fdiv(a.hi, c);
	if (iv_is_point(b, &c) && !one_period) {
		int64_t g = mod_step(e, x->u.bin.a, (int64_t)c);
		if (g > 1)
			return iv_make(0, c - g);
	}
	return iv_floormod(a, b);
}

static Interval nb_bin(RgEnv *e, const Expr *x, int depth)
{
	Interval a = nb_of(e, x->u.bin.a, depth + 1), b = nb_of(e, x->u.bin.b, depth + 1);
	BinOp op = x->u.bin.op;
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_MIN:
	case OP_MAX: return rg_clip(iv_arith(op, a, b));
	case OP_FLOORDIV:
		if (!iv_is_bounded(b) || b.lo <= 0)
			return iv_unbounded();
		return rg_clip(iv_floordiv(a, b));
	case OP_FLOORMOD: return rg_clip(nb_floormod(e, x, a, b));
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT:
	case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return iv_unbounded();
}

static Interval nb_of(RgEnv *e, const Expr *x, int depth)
{
	if (depth > 64 || !dtype_is_int(x->dtype))
		return iv_unbounded();
	switch (x->kind) {
	case EX_INT:
		return rg_clip(iv_point(x->u.ival));
	case EX_VAR:
		return nb_var(e, x->u.var, depth);
	case EX_BIN:
		return nb_bin(e, x, depth);
	case EX_NEG:
		return iv_neg(nb_of(e, x->u.un.a, depth + 1));
	case EX_SELECT:
		return iv_union(nb_of(e, x->u.sel.a, depth + 1), nb_of(e, x->u.sel.b, depth + 1));
	case EX_CAST:
		/* widening integer casts keep the value */
		if (!dtype_is_int(x->u.un.a->dtype) ||
		    dtype_bits(x->u.un.a->dtype) > dtype_bits(x->dtype) ||
		    dtype_is_signed(x->u.un.a->dtype) != dtype_is_signed(x->dtype))
			return iv_unbounded();
		return nb_of(e, x->u.un.a, depth + 1);
	case EX_FLOAT: case EX_NOT: case EX_LOAD: case EX_UNDEF: case EX_LET: case EX_CALL:
	case EX_OPAQUE:
		return iv_unbounded();
	case EX_COUNT:
		break;
	}
	abort();
}

static Interval refine_bounds(RgEnv *e, const Expr *x, Interval r);

bool rg_num_bounds(RgEnv *e, const Expr *x, int64_t *lo, int64_t *hi)
{
	Interval r = refine_bounds(e, x, nb_of(e, x, 0));
	*lo = iv_has_lo(r) ? (int64_t)r.lo : 0;
	*hi = iv_has_hi(r) ? (int64_t)r.hi : 0;
	return iv_has_lo(r) && iv_has_hi(r);
}

bool rg_upper_bound(RgEnv *e, const Expr *x, int64_t *hi)
{
	Interval r = refine_bounds(e, x, nb_of(e, x, 0));
	*hi = iv_has_hi(r) ? (int64_t)r.hi : 0;
	return iv_has_hi(r);
}

/* ---------- linear forms ---------- */

/* Region's forms hold at most LIN_MAX terms (a larger sum stays an
 * atom). */
static Affine lin_const(int64_t k) { return affine_const(k, LIN_MAX); }
static Affine lin_atom(Expr *atom) { return affine_atom(atom, LIN_MAX); }

static Expr *lit(Arena *a, int64_t v, DType t)
{
	return ir_int(a, v, dtype_is_int(t) ? t : DT_INT32, no_span);
}

static Interval atom_nb(void *env, const Expr *atom) { return nb_of(env, atom, 0); }

static Interval lin_nb(RgEnv *e, const Affine *l) { return affine_range(l, atom_nb, e); }

static bool lin_num_bounds(RgEnv *e, const Affine *l, int64_t *lo, int64_t *hi)
{
	Interval r = lin_nb(e, l);
	if (!iv_has_lo(r) || !iv_has_hi(r))
		return false;
	*lo = (int64_t)r.lo;
	*hi = (int64_t)r.hi;
	return true;
}

static Affine lin_of(RgEnv *e, Expr *x);
static Expr *simplify_cond(RgEnv *e, Expr *x);

/* Tighter bounds through min and max in x's linear form: with a positive
 * coefficient min(a, b) is at most a and at most b, so an upper bound of
 * the form with either arm in its place bounds it too (and max gives
 * lower bounds; negative coefficients swap them). The extent of a
 * clamped region, T.min(base + 1, n) - base, is then at most 1. */
static Interval refine_bounds(RgEnv *e, const Expr *x, Interval r)
{
	if (!dtype_is_int(x->dtype))
		return r;
	Affine l = lin_of(e, (Expr *)x);
	if (l.bad)
		return r;
	for (int i = 0; i < l.n; i++) {
		const Expr *at = l.atom[i];
		if (at->kind != EX_BIN || (at->u.bin.op != OP_MIN && at->u.bin.op != OP_MAX))
			continue;
		bool upper = (at->u.bin.op == OP_MIN) == (l.coef[i] > 0);
		Expr *arms[2] = {at->u.bin.a, at->u.bin.b};
		for (int k = 0; k < 2; k++) {
			Affine arm = lin_of(e, arms[k]);
			Affine sub = affine_substitute(l, i, &arm);
			if (sub.bad)
				continue;
			Interval t = lin_nb(e, &sub);
			if (upper && iv_has_hi(t) && t.hi < r.hi)
				r.hi = t.hi;
			if (!upper && iv_has_lo(t) && t.lo > r.lo)
				r.lo = t.lo;
		}
	}
	return r;
}

/* (q*c + r) split: terms whose coefficient c divides go to q, the rest
 * (with the constant's remainder) to r. */
static void lin_split(const Affine *l, int64_t c, Affine *q, Affine *r)
{
	*q = lin_const(fdiv(l->k, c));
	*r = lin_const(fmod64(l->k, c));
	for (int i = 0; i < l->n; i++) {
		if (l->coef[i] % c == 0)
			affine_add_term(q, l->atom[i], l->coef[i] / c);
		else
			affine_add_term(r, l->atom[i], l->coef[i]);
	}
}

static int64_t gcd64(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int64_t mod_step(RgEnv *e, const Expr *x, int64_t c)
{
	Affine l = lin_of(e, (Expr *)x);
	if (l.bad)
		return 1;
	int64_t g = gcd64(l.k, c);
	for (int i = 0; i < l.n; i++)
		g = gcd64(g, l.coef[i]);
	return g;
}

/* r (terms not divisible by c, constant in [0, c)) as a + b where every
 * coefficient of a is a multiple of g, g divides c, and b stays in
 * [0, g): then (a + b) // c == a // c and (a + b) % c == a % c + b, since
 * a % c is a multiple of g at most c - g. This is the fuse-then-split
 * case: (4*xo + ii) // 4096 with ii < 4 is (4*xo) // 4096 for every ii.
 * The largest such g wins; false if there is none (g > 1). */
static bool lin_gcd_split(RgEnv *e, const Affine *r, int64_t c, Affine *a, Affine *b)
{
	int64_t best = 1;
	for (int i = 0; i < r->n; i++) {
		int64_t g = gcd64(r->coef[i], c);
		if (g <= best)
			continue;
		Affine x = lin_const(r->k - r->k % g), y = lin_const(r->k % g);
		for (int j = 0; j < r->n; j++)
			if (r->coef[j] % g == 0)
				affine_add_term(&x, r->atom[j], r->coef[j]);
			else
				affine_add_term(&y, r->atom[j], r->coef[j]);
		int64_t lo, hi;
		if (x.n && lin_num_bounds(e, &y, &lo, &hi) && lo >= 0 && hi < g) {
			best = g;
			*a = x;
			*b = y;
		}
	}
	return best > 1;
}

static Affine lin_floordiv(RgEnv *e, const Affine *l, int64_t c, DType t)
{
	Affine q, r;
	lin_split(l, c, &q, &r);
	int64_t lo, hi;
	if (r.n == 0)
		return q; /* r is the constant remainder in [0, c) */
	if (lin_num_bounds(e, &r, &lo, &hi) && fdiv(lo, c) == fdiv(hi, c)) {
		Affine m = lin_const(fdiv(lo, c));
		return affine_combine(q, &m, 1);
	}
	Affine ga, gb;
	if (lin_gcd_split(e, &r, c, &ga, &gb))
		r = ga;
	Affine d = lin_atom(ir_bin(e->a, OP_FLOORDIV, affine_expr_sorted(e->a, &r, t), lit(e->a, c, t), no_span));
	return affine_combine(q, &d, 1);
}

static Affine lin_floormod(RgEnv *e, const Affine *l, int64_t c, DType t)
{
	Affine q, r;
	lin_split(l, c, &q, &r);
	int64_t lo, hi;
	if (r.n == 0)
		return r;
	if (lin_num_bounds(e, &r, &lo, &hi) && fdiv(lo, c) == fdiv(hi, c)) {
		Affine m = lin_const(-c * fdiv(lo, c));
		return affine_combine(r, &m, 1);
	}
	Affine ga, gb;
	if (lin_gcd_split(e, &r, c, &ga, &gb)) {
		Affine m = lin_atom(ir_bin(e->a, OP_FLOORMOD, affine_expr_sorted(e->a, &ga, t), lit(e->a, c, t), no_span));
		return affine_combine(m, &gb, 1);
	}
	return lin_atom(ir_bin(e->a, OP_FLOORMOD, affine_expr_sorted(e->a, &r, t), lit(e->a, c, t), no_span));
}

/* Upper (or lower) bound of l as a constant after replacing each loop
 * variable by its symbolic last (or first) value once: j + 1 - n <= 0
 * when j runs below n. */
static bool lin_sym_bound(RgEnv *e, const Affine *l, bool upper, int64_t *out)
{
	Affine r = lin_const(l->k);
	for (int i = 0; i < l->n; i++) {
		Expr *a = l->atom[i];
		const RgVar *v = a->kind == EX_VAR ? rg_lookup(e, a->u.var) : NULL;
		if (!v || !v->min || an_expr_has_load(v->min) || an_expr_has_load(v->extent)) {
			affine_add_term(&r, a, l->coef[i]);
			continue;
		}
		bool take_last = (l->coef[i] > 0) == upper;
		Expr *end = take_last ? ir_sub(e->a, ir_add(e->a, v->min, v->extent),
					       ir_int(e->a, 1, a->dtype, no_span))
				      : v->min;
		Affine t = lin_of(e, end);
		r = affine_combine(r, &t, l->coef[i]);
		if (r.bad)
			return false;
	}
	if (r.bad || r.n)
		return false;
	*out = r.k;
	return true;
}

static Affine lin_minmax(RgEnv *e, Expr *x)
{
	Affine la = lin_of(e, x->u.bin.a), lb = lin_of(e, x->u.bin.b);
	if (la.bad || lb.bad)
		return lin_atom(x);
	Affine d = affine_combine(la, &lb, -1);
	bool is_min = x->u.bin.op == OP_MIN;
	if (!d.bad) {
		Interval r = lin_nb(e, &d);
		if (iv_compare(OP_LE, r, iv_point(0)) == IV_TRUE) /* a <= b */
			return is_min ? la : lb;
		if (iv_compare(OP_GE, r, iv_point(0)) == IV_TRUE) /* a >= b */
			return is_min ? lb : la;
		int64_t v;
		if (lin_sym_bound(e, &d, true, &v) && v <= 0)
			return is_min ? la : lb;
		if (lin_sym_bound(e, &d, false, &v) && v >= 0)
			return is_min ? lb : la;
	}
	Expr *r = ir_bin(e->a, x->u.bin.op, affine_expr_sorted(e->a, &la, x->dtype),
			 affine_expr_sorted(e->a, &lb, x->dtype), x->span);
	r->dtype = x->dtype;
	return lin_atom(r);
}

static Affine lin_of(RgEnv *e, Expr *x)
{
	if (!dtype_is_int(x->dtype))
		return lin_atom(x);
	Affine la, lb;
	int64_t c;
	switch (x->kind) {
	case EX_INT:
		return lin_const(x->u.ival);
	case EX_VAR:
		return lin_atom(x);
	case EX_NEG:
		la = lin_of(e, x->u.un.a);
		return la.bad ? lin_atom(x) : affine_scale(la, -1);
	case EX_BIN:
		switch (x->u.bin.op) {
		case OP_ADD:
		case OP_SUB:
			la = lin_of(e, x->u.bin.a);
			lb = lin_of(e, x->u.bin.b);
			la = affine_combine(la, &lb, x->u.bin.op == OP_ADD ? 1 : -1);
			return la.bad ? lin_atom(x) : la;
		case OP_MUL:
			la = lin_of(e, x->u.bin.a);
			lb = lin_of(e, x->u.bin.b);
			if (affine_is_const(&lb, &c))
				la = affine_scale(la, c);
			else if (affine_is_const(&la, &c))
				la = affine_scale(lb, c);
			else
				return lin_atom(ir_mul(e->a, affine_expr_sorted(e->a, &la, x->dtype),
						       affine_expr_sorted(e->a, &lb, x->dtype)));
			return la.bad ? lin_atom(x) : la;
		case OP_FLOORDIV:
		case OP_FLOORMOD:
			la = lin_of(e, x->u.bin.a);
			lb = lin_of(e, x->u.bin.b);
			if (la.bad || lb.bad)
				return lin_atom(x);
			if (affine_is_const(&lb, &c) && c > 0) {
				la = x->u.bin.op == OP_FLOORDIV ? lin_floordiv(e, &la, c, x->dtype)
								: lin_floormod(e, &la, c, x->dtype);
				return la.bad ? lin_atom(x) : la;
			}
			{
				Expr *r = ir_bin(e->a, x->u.bin.op, affine_expr_sorted(e->a, &la, x->dtype),
						 affine_expr_sorted(e->a, &lb, x->dtype), x->span);
				r->dtype = x->dtype;
				return lin_atom(r);
			}
		case OP_MIN:
		case OP_MAX:
			return lin_minmax(e, x);
		case OP_SHL: case OP_SHR: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE:
		case OP_GT: case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
			break;
		}
		return lin_atom(x);
	case EX_SELECT: {
		Expr *cond = simplify_cond(e, x->u.sel.cond);
		if (cond->kind == EX_INT)
			return lin_of(e, cond->u.ival ? x->u.sel.a : x->u.sel.b);
		Expr *r = ir_select(e->a, cond, rg_simplify(e, x->u.sel.a),
				    rg_simplify(e, x->u.sel.b), x->span);
		r->dtype = x->dtype;
		return lin_atom(r);
	}
	case EX_FLOAT: case EX_NOT: case EX_CAST: case EX_LOAD: case EX_UNDEF:
	case EX_LET: case EX_CALL: case EX_OPAQUE:
		return lin_atom(x);
	case EX_COUNT:
		break;
	}
	abort();
}

static Expr *simplify_cond(RgEnv *e, Expr *x)
{
	if (x->kind != EX_BIN || !binop_is_compare(x->u.bin.op) ||
	    !dtype_is_int(x->u.bin.a->dtype) || !dtype_is_int(x->u.bin.b->dtype))
		return x;
	Affine la = lin_of(e, x->u.bin.a), lb = lin_of(e, x->u.bin.b);
	if (la.bad || lb.bad)
		return x;
	Affine d = affine_combine(la, &lb, -1);
	/* a op b  ==  (a - b) op 0 */
	IvTruth v = d.bad ? IV_UNKNOWN : iv_compare(x->u.bin.op, lin_nb(e, &d), iv_point(0));
	if (v != IV_UNKNOWN)
		return ir_bool(e->a, v == IV_TRUE);
	return ir_bin(e->a, x->u.bin.op, affine_expr_sorted(e->a, &la, x->u.bin.a->dtype),
		      affine_expr_sorted(e->a, &lb, x->u.bin.b->dtype), x->span);
}

Expr *rg_simplify(RgEnv *e, Expr *x)
{
	if (x->dtype == DT_BOOL)
		return simplify_cond(e, x);
	if (!dtype_is_int(x->dtype))
		return x;
	Affine l = lin_of(e, x);
	if (l.bad)
		return x;
	Expr *r = affine_expr_sorted(e->a, &l, x->dtype);
	return r;
}

Expr *rg_min(RgEnv *e, Expr *x, Expr *y)
{
	return rg_simplify(e, ir_bin(e->a, OP_MIN, x, y, no_span));
}

Expr *rg_max(RgEnv *e, Expr *x, Expr *y)
{
	return rg_simplify(e, ir_bin(e->a, OP_MAX, x, y, no_span));
}

bool rg_equal(RgEnv *e, Expr *x, Expr *y)
{
	Affine lx = lin_of(e, x), ly = lin_of(e, y);
	if (lx.bad || ly.bad)
		return rg_same(x, y);
	Affine d = affine_combine(lx, &ly, -1);
	return !d.bad && d.n == 0 && d.k == 0;
}

/* ---------- symbolic bounds ---------- */

static bool sym_bounds(RgEnv *e, Expr *x, Expr **lo, Expr **hi, int depth);

/* x % c for x in [lo, hi]: [lo % c, hi % c] when both lie in one period
 * (lo // c == hi // c), else the whole [0, c-1]. When the period test
 * cannot be decided here it is left to run time with T.if_then_else. */
static void mod_bounds(RgEnv *e, Expr *lo, Expr *hi, int64_t c, DType t, Expr **olo,
		       Expr **ohi)
{
	Arena *a = e->a;
	Expr *cc = lit(a, c, t);
	Expr *qlo = rg_simplify(e, ir_bin(a, OP_FLOORDIV, lo, cc, no_span));
	Expr *qhi = rg_simplify(e, ir_bin(a, OP_FLOORDIV, hi, cc, no_span));
	Expr *mlo = rg_simplify(e, ir_bin(a, OP_FLOORMOD, lo, cc, no_span));
	Expr *mhi = rg_simplify(e, ir_bin(a, OP_FLOORMOD, hi, cc, no_span));
	if (rg_equal(e, qlo, qhi)) {
		*olo = mlo;
		*ohi = mhi;
		return;
	}
	int64_t dl, dh;
	if (rg_num_bounds(e, rg_simplify(e, ir_sub(a, hi, lo)), &dl, &dh) && dl >= c - 1) {
		*olo = lit(a, 0, t);
		*ohi = lit(a, c - 1, t);
		return;
	}
	Expr *same = ir_bin(a, OP_EQ, qlo, qhi, no_span);
	*olo = rg_simplify(e, ir_select(a, same, mlo, lit(a, 0, t), no_span));
	*ohi = rg_simplify(e, ir_select(a, same, mhi, lit(a, c - 1, t), no_span));
}

static void clamp_by(RgEnv *e, BinOp op, Expr *bound, int64_t delta, Expr **lo, Expr **hi)
{
	Arena *a = e->a;
	DType t = bound->dtype;
	/* E = x + delta, E op bound */
	Expr *b = rg_simplify(e, ir_sub(a, bound, lit(a, delta, t)));
	switch (op) {
	case OP_LT: *hi = rg_min(e, *hi, rg_simplify(e, ir_sub(a, b, lit(a, 1, t)))); return;
	case OP_LE: *hi = rg_min(e, *hi, b); return;
	case OP_GT: *lo = rg_max(e, *lo, rg_simplify(e, ir_add(a, b, lit(a, 1, t)))); return;
	case OP_GE: *lo = rg_max(e, *lo, b); return;
	case OP_EQ:
		*lo = rg_max(e, *lo, b);
		*hi = rg_min(e, *hi, b);
		return;
	case OP_SHL: case OP_SHR: case OP_NE: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
	case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND:
	case OP_OR: case OP_COUNT:
		return;
	}
}

/* Guards `E op K` where E = x + constant and K has no relaxed variable. */
static void apply_guards(RgEnv *e, Expr *x, Expr **lo, Expr **hi)
{
	if (!e->nguards)
		return;
	Affine lx = lin_of(e, x);
	if (lx.bad)
		return;
	for (int g = 0; g < e->nguards; g++) {
		Expr *c = e->guards[g];
		for (int side = 0; side < 2; side++) {
			Expr *E = side ? c->u.bin.b : c->u.bin.a;
			Expr *K = side ? c->u.bin.a : c->u.bin.b;
			BinOp op = side ? binop_mirror(c->u.bin.op) : c->u.bin.op;
			if (rg_has_relaxed(e, K) || an_expr_has_load(K))
				continue;
			Affine le = lin_of(e, E);
			if (le.bad)
				continue;
			Affine d = affine_combine(le, &lx, -1);
			if (d.bad || d.n)
				continue;
			clamp_by(e, op, K, d.k, lo, hi);
		}
	}
}

static bool sym_bin(RgEnv *e, Expr *x, Expr **lo, Expr **hi, int depth)
{
	Arena *a = e->a;
	Expr *al, *ah, *bl, *bh;
	int64_t c;
	Affine lb;
	switch (x->u.bin.op) {
	case OP_ADD:
	case OP_SUB:
		if (!sym_bounds(e, x->u.bin.a, &al, &ah, depth + 1) ||
		    !sym_bounds(e, x->u.bin.b, &bl, &bh, depth + 1))
			return false;
		if (x->u.bin.op == OP_ADD) {
			*lo = ir_add(a, al, bl);
			*hi = ir_add(a, ah, bh);
		} else {
			*lo = ir_sub(a, al, bh);
			*hi = ir_sub(a, ah, bl);
		}
		return true;
	case OP_MUL: {
		Expr *var = x->u.bin.a, *k = x->u.bin.b;
		lb = lin_of(e, k);
		if (!affine_is_const(&lb, &c)) {
			var = x->u.bin.b;
			k = x->u.bin.a;
			lb = lin_of(e, k);
			if (!affine_is_const(&lb, &c))
				return false;
		}
		if (!sym_bounds(e, var, &al, &ah, depth + 1))
			return false;
		Expr *cc = lit(a, c, x->dtype);
		*lo = ir_mul(a, c >= 0 ? al : ah, cc);
		*hi = ir_mul(a, c >= 0 ? ah : al, cc);
		return true;
	}
	case OP_FLOORDIV:
	case OP_FLOORMOD:
		lb = lin_of(e, x->u.bin.b);
		if (!affine_is_const(&lb, &c) || c <= 0)
			return false;
		if (!sym_bounds(e, x->u.bin.a, &al, &ah, depth + 1))
			return false;
		if (x->u.bin.op == OP_FLOORMOD) {
			mod_bounds(e, al, ah, c, x->dtype, lo, hi);
			return true;
		}
		*lo = ir_bin(a, OP_FLOORDIV, al, lit(a, c, x->dtype), no_span);
		*hi = ir_bin(a, OP_FLOORDIV, ah, lit(a, c, x->dtype), no_span);
		return true;
	case OP_MIN:
	case OP_MAX:
		if (!sym_bounds(e, x->u.bin.a, &al, &ah, depth + 1) ||
		    !sym_bounds(e, x->u.bin.b, &bl, &bh, depth + 1))
			return false;
		if (x->u.bin.op == OP_MIN) {
			*lo = rg_min(e, al, bl);
			*hi = rg_min(e, ah, bh);
		} else {
			*lo = rg_max(e, al, bl);
			*hi = rg_max(e, ah, bh);
		}
		return true;
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT:
	case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return false;
}

static bool sym_var(RgEnv *e, Expr *x, Expr **lo, Expr **hi, int depth)
{
	const RgVar *r = rg_lookup(e, x->u.var);
	if (!r->min)
		return sym_bounds(e, r->value, lo, hi, depth + 1);
	Expr *last = ir_sub(e->a, ir_add(e->a, r->min, r->extent), lit(e->a, 1, x->dtype));
	Expr *dummy;
	return sym_bounds(e, r->min, lo, &dummy, depth + 1) &&
	       sym_bounds(e, last, &dummy, hi, depth + 1);
}

static bool sym_bounds(RgEnv *e, Expr *x, Expr **lo, Expr **hi, int depth)
{
	if (depth > 64 || !dtype_is_int(x->dtype) || an_expr_has_load(x))
		return false;
	bool ok = false;
	if (!rg_has_relaxed(e, x)) {
		*lo = *hi = x;
		ok = true;
	} else {
		switch (x->kind) {
		case EX_VAR:
			ok = sym_var(e, x, lo, hi, depth);
			break;
		case EX_BIN:
			ok = sym_bin(e, x, lo, hi, depth);
			break;
		case EX_NEG: {
			Expr *al, *ah;
			ok = sym_bounds(e, x->u.un.a, &al, &ah, depth + 1);
			if (ok) {
				*lo = ir_neg(e->a, ah, no_span);
				*hi = ir_neg(e->a, al, no_span);
			}
			break;
		}
		case EX_SELECT: {
			Expr *al, *ah, *bl, *bh;
			ok = sym_bounds(e, x->u.sel.a, &al, &ah, depth + 1) &&
			     sym_bounds(e, x->u.sel.b, &bl, &bh, depth + 1);
			if (ok) {
				*lo = rg_min(e, al, bl);
				*hi = rg_max(e, ah, bh);
			}
			break;
		}
		case EX_CAST:
			ok = dtype_is_int(x->u.un.a->dtype) &&
			     dtype_bits(x->u.un.a->dtype) <= dtype_bits(x->dtype) &&
			     dtype_is_signed(x->u.un.a->dtype) == dtype_is_signed(x->dtype) &&
			     sym_bounds(e, x->u.un.a, lo, hi, depth + 1);
			break;
		case EX_INT: case EX_FLOAT: case EX_NOT: case EX_LOAD: case EX_UNDEF:
		case EX_LET: case EX_CALL: case EX_OPAQUE:
			ok = false;
			break;
		case EX_COUNT:
			abort();
		}
	}
	if (!ok)
		return false;
	apply_guards(e, x, lo, hi);
	*lo = rg_simplify(e, *lo);
	*hi = rg_simplify(e, *hi);
	return true;
}

bool rg_sym_bounds(RgEnv *e, Expr *x, Expr **lo, Expr **hi)
{
	return sym_bounds(e, x, lo, hi, 0);
}

/* ---------- boxes of accesses ---------- */

typedef struct BoxWalk {
	RgEnv *env;
	const Buffer *buf;
	bool writes;
	RgBox *box;
} BoxWalk;

static void box_add(BoxWalk *w, int nidx, Expr **idx)
{
	RgBox *b = w->box;
	RgEnv *e = w->env;
	for (int d = 0; d < nidx && d < b->ndim; d++) {
		Expr *lo = NULL, *hi = NULL;
		if (!rg_sym_bounds(e, idx[d], &lo, &hi))
			lo = hi = NULL;
		if (b->naccesses == 0) {
			b->lo[d] = lo;
			b->hi[d] = hi;
			continue;
		}
		if (!lo || !b->lo[d] || !rg_equal(e, lo, b->lo[d]) || !rg_equal(e, hi, b->hi[d]))
			b->approximate = true;
		b->lo[d] = lo && b->lo[d] ? rg_min(e, b->lo[d], lo) : NULL;
		b->hi[d] = hi && b->hi[d] ? rg_max(e, b->hi[d], hi) : NULL;
	}
	b->naccesses++;
}

/* An opaque call naming the buffer may access any cell of it: the box
 * grows to the whole buffer (its first and its last cell). */
static void box_add_whole(BoxWalk *w, const Buffer *b)
{
	Expr **lo = arena_alloc(w->env->a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	Expr **hi = arena_alloc(w->env->a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	for (int d = 0; d < b->ndim; d++) {
		lo[d] = ir_int(w->env->a, 0, b->shape[d]->dtype, no_span);
		hi[d] = ir_sub(w->env->a, b->shape[d], ir_int(w->env->a, 1, b->shape[d]->dtype, no_span));
	}
	box_add(w, b->ndim, lo);
	box_add(w, b->ndim, hi);
	w->box->approximate = true;
}

typedef struct BoxOpq {
	BoxWalk *w;
	bool hit;
} BoxOpq;

static void box_opq_buf(Buffer *b, void *ud)
{
	BoxOpq *o = ud;
	o->hit |= b == o->w->buf;
}

static void box_expr(BoxWalk *w, Expr *x)
{
	if (x->kind == EX_OPAQUE) {
		/* reads and writes, whichever the walk collects */
		BoxOpq o = {w, false};
		ir_expr_opaque_buffers(x, box_opq_buf, &o);
		if (o.hit)
			box_add_whole(w, w->buf);
		for (int i = 0; i < x->u.opq.nargs; i++)
			box_expr(w, x->u.opq.args[i]);
		return;
	}
	switch (x->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD:
		for (int i = 0; i < x->u.load.nidx; i++)
			box_expr(w, x->u.load.idx[i]);
		if (!w->writes && x->u.load.buf == w->buf)
			box_add(w, x->u.load.nidx, x->u.load.idx);
		return;
	case EX_BIN:
		box_expr(w, x->u.bin.a);
		box_expr(w, x->u.bin.b);
		return;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		box_expr(w, x->u.un.a);
		return;
	case EX_SELECT: {
		/* only the arm the condition picks runs: its reads are bounded
		 * under the condition (or its negation) like a branch's; a
		 * condition rg_push_guard cannot use is dropped (no clamp) */
		box_expr(w, x->u.sel.cond);
		int nv = w->env->nvars, ng = w->env->nguards;
		rg_push_guard(w->env, x->u.sel.cond, false);
		box_expr(w, x->u.sel.a);
		rg_pop(w->env, nv, ng);
		rg_push_guard(w->env, x->u.sel.cond, true);
		box_expr(w, x->u.sel.b);
		rg_pop(w->env, nv, ng);
		return;
	}
	case EX_LET: {
		box_expr(w, x->u.let.value);
		int nv = w->env->nvars, ng = w->env->nguards;
		rg_push_let(w->env, x->u.let.var, x->u.let.value, true);
		box_expr(w, x->u.let.body);
		rg_pop(w->env, nv, ng);
		return;
	}
	case EX_CALL:
		for (int i = 0; i < x->u.call.nargs; i++)
			box_expr(w, x->u.call.args[i]);
		return;
	case EX_OPAQUE: /* above */
	case EX_COUNT:
		break;
	}
	abort();
}

static void box_stmt(BoxWalk *w, const Stmt *s)
{
	RgEnv *e = w->env;
	int nv = e->nvars, ng = e->nguards;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			box_stmt(w, s->u.seq.items[i]);
		return;
	case ST_FOR:
		box_expr(w, s->u.loop.min);
		box_expr(w, s->u.loop.extent);
		rg_push_loop(e, s->u.loop.var, s->u.loop.min, s->u.loop.extent, true);
		box_stmt(w, s->u.loop.body);
		rg_pop(e, nv, ng);
		return;
	case ST_IF:
		box_expr(w, s->u.cond.cond);
		rg_push_guard(e, s->u.cond.cond, false);
		box_stmt(w, s->u.cond.then_s);
		rg_pop(e, nv, ng);
		if (s->u.cond.else_s) {
			rg_push_guard(e, s->u.cond.cond, true);
			box_stmt(w, s->u.cond.else_s);
			rg_pop(e, nv, ng);
		}
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			box_expr(w, s->u.store.idx[i]);
		box_expr(w, s->u.store.value);
		if (w->writes && s->u.store.buf == w->buf)
			box_add(w, s->u.store.nidx, s->u.store.idx);
		return;
	case ST_ASSUME:
	case ST_EVAL:
		box_expr(w, s->u.expr);
		return;
	case ST_ALLOC:
		box_stmt(w, s->u.alloc.body);
		return;
	case ST_BLOCK:
		box_stmt(w, s->u.block.body);
		return;
	case ST_LET:
		box_expr(w, s->u.let.value);
		rg_push_let(e, s->u.let.var, s->u.let.value, true);
		box_stmt(w, s->u.let.body);
		rg_pop(e, nv, ng);
		return;
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

void rg_access_box(RgEnv *env, const Stmt *s, const Buffer *buf, bool writes, RgBox *out)
{
	memset(out, 0, sizeof *out);
	out->ndim = buf->ndim;
	out->lo = arena_alloc(env->a, sizeof(Expr *) * (size_t)(buf->ndim + 1));
	out->hi = arena_alloc(env->a, sizeof(Expr *) * (size_t)(buf->ndim + 1));
	BoxWalk w = {env, buf, writes, out};
	int nv = env->nvars, ng = env->nguards;
	box_stmt(&w, s);
	rg_pop(env, nv, ng);
}

bool rg_linear(RgEnv *e, Expr *x, int n, Var *const *vars, int64_t *coef, Expr **rest)
{
	Affine l = lin_of(e, x);
	if (l.bad)
		return false;
	Affine r = lin_const(l.k);
	for (int i = 0; i < n; i++)
		coef[i] = 0;
	for (int t = 0; t < l.n; t++) {
		int hit = -1;
		for (int i = 0; i < n && hit < 0; i++)
			if (l.atom[t]->kind == EX_VAR && l.atom[t]->u.var == vars[i])
				hit = i;
		if (hit >= 0) {
			coef[hit] += l.coef[t];
			continue;
		}
		for (int i = 0; i < n; i++)
			if (ir_expr_uses_var(l.atom[t], vars[i]))
				return false;
		affine_add_term(&r, l.atom[t], l.coef[t]);
	}
	*rest = affine_expr_sorted(e->a, &r, x->dtype);
	return true;
}
