/* kernel/analysis/arith.c — the untrusted simplifier (see arith.h). Integer
 * expressions are put in linear form (affine.h: constant coefficients over
 * atoms); (Q*c + R) // c and % c fold when R's interval (interval.h) fits
 * one period; comparisons fold when an interval decides them. Every
 * result is only a proposal: simplify proves old == new before using it. */
#include "kernel/analysis/arith.h"

#include <string.h>

#include "kernel/analysis/affine.h"
#include "kernel/analysis/index_map.h"

#define MAX_TERMS 32
#define BIG ((int64_t)1 << 40) /* intervals beyond this are "unbounded" */

static Span nospan(void) { return (Span){0}; }

/* ---------- bounds ---------- */

static int bound_index(Bounds *b, const Var *v, bool add)
{
	for (int i = 0; i < b->n; i++)
		if (b->vars[i] == v)
			return i;
	if (!add || b->n == ARITH_MAX_VARS)
		return -1;
	b->vars[b->n] = v;
	b->range[b->n] = iv_unbounded();
	return b->n++;
}

/* v op r holds (op a comparison; = with a range intersects) */
static void tighten(Bounds *b, const Var *v, BinOp op, Interval r)
{
	int i = bound_index(b, v, true);
	if (i >= 0)
		b->range[i] = iv_narrow(b->range[i], op, r);
}

/* var op const, or const op var */
static void assume_compare(Bounds *b, BinOp op, const Expr *x, const Expr *y, bool negated)
{
	int64_t c;
	const Expr *v = x;
	if (x->kind == EX_VAR && an_const_int(y, &c)) {
		v = x;
	} else if (y->kind == EX_VAR && an_const_int(x, &c)) {
		v = y;
		op = binop_mirror(op); /* c op v  ==  v op' c */
	} else {
		return;
	}
	if (negated)
		op = iv_negate(op);
	if (c <= -BIG || c >= BIG || op == OP_NE)
		return;
	tighten(b, v->u.var, op, iv_point(c));
}

static void assume_rec(Bounds *b, const Expr *e, bool negated)
{
	if (e->kind == EX_NOT) {
		assume_rec(b, e->u.un.a, !negated);
		return;
	}
	if (e->kind != EX_BIN)
		return;
	BinOp op = e->u.bin.op;
	if ((op == OP_AND && !negated) || (op == OP_OR && negated)) {
		assume_rec(b, e->u.bin.a, negated);
		assume_rec(b, e->u.bin.b, negated);
		return;
	}
	if (binop_is_compare(op))
		assume_compare(b, op, e->u.bin.a, e->u.bin.b, negated);
}

void arith_bounds_assume(Bounds *b, const Expr *cond) { assume_rec(b, cond, false); }

void arith_bounds_at(const Func *f, const StmtCtx *sc, Bounds *b)
{
	memset(b, 0, sizeof *b);
	for (int i = 0; i < f->nparams; i++) {
		const Var *v = f->params[i].var;
		if (f->params[i].kind != PARAM_SCALAR || !dtype_is_int(v->dtype))
			continue;
		if (dtype_bits(v->dtype) < 40)
			tighten(b, v, OP_EQ, iv_dtype(v->dtype));
	}
	/* entry facts over scalars (top level only) */
	const Stmt *s = f->body;
	while (s) {
		if (s->kind == ST_SEQ) {
			for (int i = 0; i < s->u.seq.n; i++)
				if (s->u.seq.items[i]->kind == ST_ASSUME &&
				    !an_expr_has_load(s->u.seq.items[i]->u.expr))
					arith_bounds_assume(b, s->u.seq.items[i]->u.expr);
			s = NULL;
		} else if (s->kind == ST_ASSUME) {
			if (!an_expr_has_load(s->u.expr))
				arith_bounds_assume(b, s->u.expr);
			s = NULL;
		} else {
			s = NULL;
		}
	}
	for (int i = 0; i < sc->nloops; i++) {
		const Stmt *l = sc->loops[i];
		int64_t mlo, mhi, elo, ehi;
		if (arith_range(b, l->u.loop.min, &mlo, &mhi) &&
		    arith_range(b, l->u.loop.extent, &elo, &ehi))
			tighten(b, l->u.loop.var, OP_EQ, iv_make(mlo, mhi + ehi - 1));
	}
	for (int i = 0; i < sc->nconds; i++)
		arith_bounds_assume(b, sc->conds[i]);
}

/* ---------- intervals ---------- */

static int64_t fdiv(int64_t x, int64_t y) { return (int64_t)iv_fdiv(x, y); }

/* The values of e (wrapped to its dtype at every node, as the IR
 * computes) over the bounds: + - * min max, negation, // and % by a
 * positive constant, dtype ranges of loads; unbounded otherwise. */
static Interval expr_range(const Bounds *b, const Expr *e, int depth)
{
	int64_t c;
	if (depth > 64 || !dtype_is_int(e->dtype))
		return iv_unbounded();
	switch (e->kind) {
	case EX_INT: return iv_point(e->u.ival);
	case EX_VAR:
		for (int i = 0; i < b->n; i++)
			if (b->vars[i] == e->u.var)
				return b->range[i];
		return iv_unbounded();
	case EX_NEG: return iv_wrap(iv_neg(expr_range(b, e->u.un.a, depth + 1)), e->dtype);
	case EX_LOAD: case EX_CALL: case EX_OPAQUE: return iv_dtype(e->dtype);
	case EX_BIN: break;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_CAST: case EX_UNDEF:
	case EX_LET: case EX_COUNT:
		return iv_unbounded();
	}
	BinOp op = e->u.bin.op;
	Interval a = expr_range(b, e->u.bin.a, depth + 1), r;
	switch (op) {
	case OP_FLOORDIV: case OP_FLOORMOD:
		if (!an_const_int(e->u.bin.b, &c) || c <= 0)
			return iv_unbounded();
		r = iv_arith(op, a, iv_point(c));
		break;
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_MIN: case OP_MAX:
		r = iv_arith(op, a, expr_range(b, e->u.bin.b, depth + 1));
		break;
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return iv_unbounded();
	}
	return iv_wrap(r, e->dtype);
}

bool arith_range(const Bounds *b, const Expr *e, int64_t *lo, int64_t *hi)
{
	Interval r = expr_range(b, e, 0);
	if (!iv_within(r, BIG))
		return false;
	*lo = (int64_t)r.lo;
	*hi = (int64_t)r.hi;
	return true;
}

/* ---------- linear forms ---------- */

/* A linear form (affine.h) and how many terms it had as written, to
 * tell whether normalising helped. */
typedef struct LinF {
	Affine f;
	int nsyntax;
} LinF;

/* arith's forms hold up to MAX_TERMS terms and merge atoms equal by
 * ir_expr_equal, under which two T.undef() of one dtype are equal: x - x
 * folds to 0 for an undef x. The candidate is wrong and the check refutes
 * it (tests/test_simplify.c pins that refusal); affine_same_atom would
 * not propose it. */
static Affine arith_form(int64_t k)
{
	Affine f = affine_const(k, MAX_TERMS);
	f.same = ir_expr_equal;
	return f;
}

static LinF lin_empty(void) { return (LinF){arith_form(0), 0}; }

/* l += k * e */
static bool lin_acc(LinF *l, Expr *e, int64_t k)
{
	return affine_add_expr(&l->f, e, k, &l->nsyntax);
}

static bool lin_of(Expr *e, LinF *l)
{
	*l = lin_empty();
	return dtype_is_int(e->dtype) && lin_acc(l, e, 1);
}

static Interval atom_range(void *b, const Expr *atom) { return expr_range(b, atom, 0); }

/* The interval of a linear form, each atom over its own interval (on
 * mathematical integers: the form is already exact); unbounded when an
 * atom or the sum leaves (-2^40, 2^40). */
static Interval lin_range(const Bounds *b, const Affine *l)
{
	return affine_range(l, atom_range, (void *)b);
}

/* ---------- rules ---------- */

static int node_count(const Expr *e)
{
	switch (e->kind) {
	case EX_BIN: return 1 + node_count(e->u.bin.a) + node_count(e->u.bin.b);
	case EX_NOT: case EX_NEG: case EX_CAST: return 1 + node_count(e->u.un.a);
	case EX_SELECT:
		return 1 + node_count(e->u.sel.cond) + node_count(e->u.sel.a) + node_count(e->u.sel.b);
	case EX_LOAD: {
		int n = 1;
		for (int i = 0; i < e->u.load.nidx; i++)
			n += node_count(e->u.load.idx[i]);
		return n;
	}
	case EX_LET: return 1 + node_count(e->u.let.value) + node_count(e->u.let.body);
	case EX_CALL: {
		int n = 1;
		for (int i = 0; i < e->u.call.nargs; i++)
			n += node_count(e->u.call.args[i]);
		return n;
	}
	case EX_OPAQUE: {
		int n = 1;
		for (int i = 0; i < e->u.opq.nargs; i++)
			n += node_count(e->u.opq.args[i]);
		return n;
	}
	case EX_INT: return e->u.ival < 0 ? 2 : 1; /* -2 reads as a negation */
	case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_COUNT:
		return 1;
	}
	return 1;
}

/* A rule fired: `from` (its operands already simplified) became `to`.
 * The pair is logged so a caller can prove each rewrite on its own. */
static Expr *mark(Simplifier *s, Expr *from, Expr *to)
{
	s->changed = true;
	if (s->log) {
		ArithLog *l = s->log;
		if (l->n == l->cap) {
			int cap = l->cap ? l->cap * 2 : 16;
			Expr **f = arena_alloc(s->a, sizeof(Expr *) * (size_t)cap);
			Expr **t = arena_alloc(s->a, sizeof(Expr *) * (size_t)cap);
			if (l->n) {
				memcpy(f, l->from, sizeof(Expr *) * (size_t)l->n);
				memcpy(t, l->to, sizeof(Expr *) * (size_t)l->n);
			}
			l->from = f;
			l->to = t;
			l->cap = cap;
		}
		l->from[l->n] = from;
		l->to[l->n++] = to;
	}
	return to;
}

/* (Q*c + R) // c and % c */
static Expr *divmod_rule(Simplifier *s, Expr *e, Expr *num, int64_t c)
{
	LinF lf;
	if (!lin_of(num, &lf))
		return e;
	const Affine *l = &lf.f;
	/* whole multiples of c leave the constant, keeping its sign:
	 * (8*io + ii - 2) // 8 -> io + (ii - 2) // 8 */
	int64_t k0 = l->k / c;
	Affine q = arith_form(k0), r = arith_form(l->k - k0 * c);
	for (int i = 0; i < l->n; i++) {
		if (l->coef[i] % c == 0)
			affine_add_term(&q, l->atom[i], l->coef[i] / c);
		else
			affine_add_term(&r, l->atom[i], l->coef[i]);
	}
	Interval rr = lin_range(s->bounds, &r);
	bool is_div = e->u.bin.op == OP_FLOORDIV;
	if (iv_is_bounded(rr) && iv_fdiv(rr.lo, c) == iv_fdiv(rr.hi, c)) {
		int64_t k = fdiv((int64_t)rr.lo, c);
		if (is_div) {
			q.k += k;
			return mark(s, e, affine_expr_in_order(s->a, &q, e->dtype));
		}
		r.k -= k * c;
		return mark(s, e, affine_expr_in_order(s->a, &r, e->dtype));
	}
	if (affine_nterms(&q) == 0 || (q.k != 0 && affine_nterms(&q) == 1 && r.n == l->n))
		return e; /* nothing to take out */
	Expr *rest = affine_expr_in_order(s->a, &r, e->dtype);
	Expr *cc = ir_int(s->a, c, e->dtype, nospan());
	Expr *inner = ir_bin(s->a, e->u.bin.op, rest, cc, nospan());
	inner->dtype = e->dtype;
	if (!is_div)
		return mark(s, e, inner);
	Affine out = q;
	affine_add_term(&out, inner, 1);
	return mark(s, e, affine_expr_in_order(s->a, &out, e->dtype));
}

static Expr *bool_lit(Simplifier *s, Expr *e, bool v) { return mark(s, e, ir_bool(s->a, v)); }

static Expr *compare_rule(Simplifier *s, Expr *e)
{
	Expr *x = e->u.bin.a, *y = e->u.bin.b;
	if (!dtype_is_int(x->dtype) || !dtype_is_int(y->dtype))
		return e;
	LinF d = lin_empty();
	if (!lin_acc(&d, y, 1) || !lin_acc(&d, x, -1))
		return e;
	/* x op y  ==  0 op (y - x) */
	IvTruth t = iv_compare(e->u.bin.op, iv_point(0), lin_range(s->bounds, &d.f));
	if (t == IV_UNKNOWN)
		return e;
	return bool_lit(s, e, t == IV_TRUE);
}

static bool is_bool_lit(const Expr *e, bool *v)
{
	if (e->kind != EX_INT || e->dtype != DT_BOOL)
		return false;
	*v = e->u.ival != 0;
	return true;
}

static bool is_float_lit(const Expr *e, double v)
{
	return e->kind == EX_FLOAT && e->u.fval == v;
}

static Expr *rebuild_bin(Simplifier *s, Expr *e, Expr *x, Expr *y)
{
	if (x == e->u.bin.a && y == e->u.bin.b)
		return e;
	Expr *r = ir_bin(s->a, e->u.bin.op, x, y, e->span);
	r->dtype = e->dtype;
	return r;
}

static Expr *simp_bin(Simplifier *s, Expr *e)
{
	Expr *x = arith_simplify(s, e->u.bin.a), *y = arith_simplify(s, e->u.bin.b);
	e = rebuild_bin(s, e, x, y);
	BinOp op = e->u.bin.op;
	bool bx, by;
	int64_t c;
	switch (op) {
	case OP_AND:
		if (is_bool_lit(x, &bx)) return mark(s, e, bx ? y : x);
		if (is_bool_lit(y, &by)) return mark(s, e, by ? x : y);
		return e;
	case OP_OR:
		if (is_bool_lit(x, &bx)) return mark(s, e, bx ? x : y);
		if (is_bool_lit(y, &by)) return mark(s, e, by ? y : x);
		return e;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		return compare_rule(s, e);
	case OP_FLOORDIV: case OP_FLOORMOD:
		if (dtype_is_int(e->dtype) && an_const_int(y, &c) && c > 0)
			return divmod_rule(s, e, x, c);
		return e;
	case OP_ADD: case OP_SUB: case OP_MUL:
		if (dtype_is_float(e->dtype)) {
			/* two literals: the result rounded to the dtype (the
			 * proof checks it in either float mode) */
			if (x->kind == EX_FLOAT && y->kind == EX_FLOAT &&
			    (e->dtype == DT_FLOAT32 || e->dtype == DT_FLOAT64)) {
				double r = op == OP_ADD ? x->u.fval + y->u.fval
					 : op == OP_SUB ? x->u.fval - y->u.fval : x->u.fval * y->u.fval;
				if (e->dtype == DT_FLOAT32)
					r = (double)(float)r;
				return mark(s, e, ir_float(s->a, r, e->dtype, nospan()));
			}
			if (s->fm != FLOAT_REAL)
				return e; /* IEEE identities are not ours to assume */
			if (op == OP_ADD && is_float_lit(y, 0.0)) return mark(s, e, x);
			if (op == OP_ADD && is_float_lit(x, 0.0)) return mark(s, e, y);
			if (op == OP_SUB && is_float_lit(y, 0.0)) return mark(s, e, x);
			if (op == OP_MUL && is_float_lit(y, 1.0)) return mark(s, e, x);
			if (op == OP_MUL && is_float_lit(x, 1.0)) return mark(s, e, y);
			if (op == OP_MUL && (is_float_lit(x, 0.0) || is_float_lit(y, 0.0)))
				return mark(s, e, ir_float(s->a, 0.0, e->dtype, nospan()));
			return e;
		}
		if (dtype_is_int(e->dtype)) {
			LinF l;
			if (!lin_of(e, &l))
				return e;
			Expr *n = affine_expr_in_order(s->a, &l.f, e->dtype);
			if (affine_nterms(&l.f) < l.nsyntax || node_count(n) < node_count(e))
				return mark(s, e, n);
		}
		return e;
	case OP_MIN: case OP_MAX: {
		Interval rx = iv_clip(expr_range(s->bounds, x, 0), BIG);
		Interval ry = iv_clip(expr_range(s->bounds, y, 0), BIG);
		BinOp keeps_x = op == OP_MIN ? OP_LE : OP_GE; /* min(x, y) == x iff x <= y */
		if (iv_compare(keeps_x, rx, ry) == IV_TRUE) return mark(s, e, x);
		if (iv_compare(keeps_x, ry, rx) == IV_TRUE) return mark(s, e, y);
		return e;
	}
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_COUNT:
		return e;
	}
	return e;
}

/* A load whose value a usable fact states at this point. */
static Expr *known_load(Simplifier *s, Expr *e)
{
	if (!s->facts)
		return e;
	for (int j = 0; j < s->facts->n; j++) {
		const Fact *f = s->facts->items[j];
		if (f->buf != e->u.load.buf || f->nidx != e->u.load.nidx)
			continue;
		/* the value side of `unless or X[idx] == v` / `X[idx] = v` */
		Expr *eq = f->unless ? f->body->u.bin.b : f->body;
		if (eq->kind != EX_BIN || eq->u.bin.op != OP_EQ)
			continue;
		Expr *v = eq->u.bin.a->kind == EX_LOAD && eq->u.bin.a->u.load.buf == f->buf
				  ? eq->u.bin.b : eq->u.bin.a;
		if (v->kind == EX_UNDEF || an_expr_has_load(v))
			continue;
		IndexMap m;
		memset(&m, 0, sizeof m);
		m.nin = f->nvars;
		m.in = f->vars;
		m.nout = f->nidx;
		m.out = f->idx;
		m.phys = arena_alloc(s->a, sizeof(Var *) * (size_t)(f->nidx + 1));
		for (int k = 0; k < f->nidx; k++)
			m.phys[k] = ir_var(s->a, "t", DT_INT32, nospan());
		const char *why;
		if (f->nvars && !imap_derive_inverse(s->a, &m, &why))
			continue;
		Expr **t0 = arena_alloc(s->a, sizeof(Expr *) * (size_t)(f->nvars + 1));
		for (int i = 0; i < f->nvars; i++)
			t0[i] = ir_subst_expr(s->a, m.inverse[i], f->nidx, m.phys, e->u.load.idx);
		/* the fact must apply here: its guard true, `unless` false, and
		 * its cell this one */
		Simplifier sub = *s;
		sub.facts = NULL;
		sub.changed = false;
		sub.log = NULL; /* deciding applicability rewrites nothing */
		Expr *ok = f->guard ? ir_subst_expr(s->a, f->guard, f->nvars, f->vars, t0) : NULL;
		if (f->unless)
			ok = ir_and(s->a, ok, ir_not(s->a, ir_subst_expr(s->a, f->unless, f->nvars, f->vars, t0),
						     nospan()));
		for (int k = 0; k < f->nidx; k++)
			ok = ir_and(s->a, ok, ir_bin(s->a, OP_EQ,
						     ir_subst_expr(s->a, f->idx[k], f->nvars, f->vars, t0),
						     e->u.load.idx[k], nospan()));
		bool holds;
		if (!ok || !is_bool_lit(arith_simplify(&sub, ok), &holds) || !holds)
			continue;
		Expr *val = ir_subst_expr(s->a, v, f->nvars, f->vars, t0);
		if (val->dtype != e->dtype)
			continue;
		return mark(s, e, val);
	}
	return e;
}

static Expr *simplify_child(void *s, Expr *x) { return arith_simplify(s, x); }

Expr *arith_simplify(Simplifier *s, Expr *e)
{
	Expr *x;
	bool b;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_UNDEF:
		return e;
	case EX_OPAQUE: /* left as written: its arguments are what it is given */
		return e;
	case EX_VAR:
		return e;
	case EX_BIN:
		return simp_bin(s, e);
	case EX_NOT: {
		x = arith_simplify(s, e->u.un.a);
		Expr *from = x == e->u.un.a ? e : ir_not(s->a, x, e->span);
		if (is_bool_lit(x, &b))
			return mark(s, from, ir_bool(s->a, !b));
		if (x->kind == EX_NOT)
			return mark(s, from, x->u.un.a);
		/* not (a < b) -> a >= b on integers (floats: NaN breaks it) */
		if (x->kind == EX_BIN && binop_is_compare(x->u.bin.op) &&
		    dtype_is_int(x->u.bin.a->dtype) && dtype_is_int(x->u.bin.b->dtype)) {
			BinOp inv = x->u.bin.op;
			switch (x->u.bin.op) {
			case OP_LT: inv = OP_GE; break;
			case OP_LE: inv = OP_GT; break;
			case OP_GT: inv = OP_LE; break;
			case OP_GE: inv = OP_LT; break;
			case OP_EQ: inv = OP_NE; break;
			case OP_NE: inv = OP_EQ; break;
			case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
			case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_AND: case OP_OR:
			case OP_COUNT:
				break;
			}
			return mark(s, from, ir_bin(s->a, inv, x->u.bin.a, x->u.bin.b, e->span));
		}
		return from;
	}
	case EX_NEG:
		x = arith_simplify(s, e->u.un.a);
		return x == e->u.un.a ? e : ir_neg(s->a, x, e->span);
	case EX_CAST:
		x = arith_simplify(s, e->u.un.a);
		return x == e->u.un.a ? e : ir_cast(s->a, e->dtype, x, e->span);
	case EX_SELECT: {
		Expr *c = arith_simplify(s, e->u.sel.cond);
		if (is_bool_lit(c, &b)) {
			Expr *from = ir_select(s->a, c, e->u.sel.a, e->u.sel.b, e->span);
			from->dtype = e->dtype;
			mark(s, from, b ? e->u.sel.a : e->u.sel.b);
			return arith_simplify(s, b ? e->u.sel.a : e->u.sel.b);
		}
		Expr *p = arith_simplify(s, e->u.sel.a), *q = arith_simplify(s, e->u.sel.b);
		if (c == e->u.sel.cond && p == e->u.sel.a && q == e->u.sel.b)
			return e;
		x = ir_select(s->a, c, p, q, e->span);
		x->dtype = e->dtype;
		return x;
	}
	case EX_LOAD: {
		Expr **idx = NULL;
		for (int i = 0; i < e->u.load.nidx; i++) {
			Expr *y = arith_simplify(s, e->u.load.idx[i]);
			if (y != e->u.load.idx[i] && !idx) {
				idx = arena_alloc(s->a, sizeof(Expr *) * (size_t)(e->u.load.nidx + 1));
				memcpy(idx, e->u.load.idx, sizeof(Expr *) * (size_t)i);
			}
			if (idx)
				idx[i] = y;
		}
		Expr *l = idx ? ir_load(s->a, e->u.load.buf, e->u.load.nidx, idx, e->span) : e;
		return known_load(s, l);
	}
	case EX_LET: {
		Expr *v = arith_simplify(s, e->u.let.value), *body = arith_simplify(s, e->u.let.body);
		if (v == e->u.let.value && body == e->u.let.body)
			return e;
		return ir_let(s->a, e->u.let.var, v, body, e->span);
	}
	case EX_CALL: /* the operands only: no property of the function is known */
		return expr_map_children(s->a, e, simplify_child, s);
	case EX_COUNT:
		break;
	}
	return e;
}

bool arith_linear(Expr *e, int nvars, Var *const *vars, int64_t *coef, int64_t *c)
{
	LinF lf;
	if (!lin_of(e, &lf))
		return false;
	const Affine *l = &lf.f;
	for (int j = 0; j < nvars; j++)
		coef[j] = 0;
	for (int i = 0; i < l->n; i++) {
		int j = 0;
		while (j < nvars && !(l->atom[i]->kind == EX_VAR && l->atom[i]->u.var == vars[j]))
			j++;
		if (j == nvars)
			return false; /* another term */
		coef[j] = l->coef[i];
	}
	*c = l->k;
	return true;
}
