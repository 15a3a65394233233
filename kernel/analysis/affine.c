/* kernel/analysis/affine.c — the one affine form (affine.h): terms over
 * atoms with small int64 coefficients, the arithmetic of forms (every
 * product checked, a form that outgrows its limits is `bad`), reading a
 * form off an expression, its interval, and its two renderings. */
#include "kernel/analysis/affine.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/expr_query.h"

static const Span no_span;

static bool small(int64_t v) { return v > -AFFINE_BIG && v < AFFINE_BIG; }

/* a * b when it is small; false otherwise (no overflow on the way) */
static bool small_product(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out) && small(*out);
}

/* ---------- atoms ---------- */

static bool same_loads(const Expr *x, const Expr *y)
{
	if (x->u.load.buf != y->u.load.buf || x->u.load.nidx != y->u.load.nidx)
		return false;
	for (int i = 0; i < x->u.load.nidx; i++)
		if (!affine_same_atom(x->u.load.idx[i], y->u.load.idx[i]))
			return false;
	return true;
}

bool affine_same_atom(const Expr *x, const Expr *y)
{
	if (x == y)
		return true;
	if (x->kind != y->kind || x->dtype != y->dtype)
		return false; /* int32 i + 1 and int64 i + 1 differ once i + 1 wraps */
	switch (x->kind) {
	case EX_INT:
		return x->u.ival == y->u.ival;
	case EX_FLOAT:
		return memcmp(&x->u.fval, &y->u.fval, sizeof(double)) == 0;
	case EX_VAR:
		return x->u.var == y->u.var;
	case EX_BIN:
		return x->u.bin.op == y->u.bin.op && affine_same_atom(x->u.bin.a, y->u.bin.a) &&
		       affine_same_atom(x->u.bin.b, y->u.bin.b);
	case EX_NOT:
	case EX_NEG:
		return affine_same_atom(x->u.un.a, y->u.un.a);
	case EX_CAST:
		return affine_same_atom(x->u.un.a, y->u.un.a);
	case EX_SELECT:
		return affine_same_atom(x->u.sel.cond, y->u.sel.cond) &&
		       affine_same_atom(x->u.sel.a, y->u.sel.a) &&
		       affine_same_atom(x->u.sel.b, y->u.sel.b);
	case EX_LOAD:
		return same_loads(x, y);
	case EX_UNDEF:
		return false; /* two occurrences are different values */
	case EX_LET:
		return x->u.let.var == y->u.let.var &&
		       affine_same_atom(x->u.let.value, y->u.let.value) &&
		       affine_same_atom(x->u.let.body, y->u.let.body);
	case EX_CALL:
		if (x->u.call.fn != y->u.call.fn)
			return false;
		for (int i = 0; i < x->u.call.nargs; i++)
			if (!affine_same_atom(x->u.call.args[i], y->u.call.args[i]))
				return false;
		return true;
	case EX_OPAQUE:
		return false; /* two calls may return different values */
	case EX_COUNT:
		break;
	}
	abort();
}

/* ---------- arithmetic of forms ---------- */

Affine affine_const(int64_t k, int cap)
{
	Affine l;
	memset(&l, 0, sizeof l);
	l.cap = cap < AFFINE_MAX_TERMS ? cap : AFFINE_MAX_TERMS;
	l.k = k;
	l.bad = !small(k);
	return l;
}

Affine affine_atom(Expr *atom, int cap)
{
	Affine l = affine_const(0, cap);
	affine_add_term(&l, atom, 1);
	return l;
}

static void drop_term(Affine *l, int i)
{
	memmove(&l->atom[i], &l->atom[i + 1], sizeof(Expr *) * (size_t)(l->n - i - 1));
	memmove(&l->coef[i], &l->coef[i + 1], sizeof(int64_t) * (size_t)(l->n - i - 1));
	l->n--;
}

void affine_add_term(Affine *l, Expr *atom, int64_t coef)
{
	if (coef == 0)
		return;
	if (!small(coef))
		l->bad = true;
	AffineSame same = l->same ? l->same : affine_same_atom;
	for (int i = 0; i < l->n; i++)
		if (same(l->atom[i], atom)) {
			l->coef[i] += coef;
			if (!small(l->coef[i]))
				l->bad = true;
			if (l->coef[i] == 0)
				drop_term(l, i);
			return;
		}
	if (l->n == l->cap) {
		l->bad = true;
		return;
	}
	l->atom[l->n] = atom;
	l->coef[l->n] = coef;
	l->n++;
}

Affine affine_combine(Affine x, const Affine *y, int64_t sign)
{
	int64_t p;
	x.bad |= y->bad;
	if (small_product(sign, y->k, &p) && small(x.k + p))
		x.k += p;
	else
		x.bad = true;
	for (int i = 0; i < y->n && !x.bad; i++) {
		if (small_product(sign, y->coef[i], &p))
			affine_add_term(&x, y->atom[i], p);
		else
			x.bad = true;
	}
	return x;
}

Affine affine_scale(Affine x, int64_t c)
{
	if (c == 0) {
		Affine z = affine_const(0, x.cap);
		z.same = x.same;
		return z;
	}
	int64_t p;
	if (small(c) && small_product(x.k, c, &p))
		x.k = p;
	else
		x.bad = true;
	for (int i = 0; i < x.n; i++) {
		if (small(c) && small_product(x.coef[i], c, &p))
			x.coef[i] = p;
		else
			x.bad = true;
	}
	return x;
}

Affine affine_substitute(Affine l, int i, const Affine *by)
{
	int64_t c = l.coef[i];
	drop_term(&l, i);
	Affine t = affine_scale(*by, c);
	return affine_combine(l, &t, 1);
}

bool affine_is_const(const Affine *l, int64_t *k)
{
	if (l->bad || l->n)
		return false;
	*k = l->k;
	return true;
}

int affine_nterms(const Affine *l)
{
	int n = l->k != 0;
	for (int i = 0; i < l->n; i++)
		n += l->coef[i] != 0;
	return n;
}

Interval affine_range(const Affine *l, AffineAtomRange atom_range, void *ctx)
{
	Interval sum = iv_clip(iv_point(l->k), AFFINE_BIG);
	for (int i = 0; i < l->n; i++) {
		Interval at = iv_clip(atom_range(ctx, l->atom[i]), AFFINE_BIG);
		Interval t = iv_clip(iv_mul(at, iv_point(l->coef[i])), AFFINE_BIG);
		sum = iv_clip(iv_add(sum, t), AFFINE_BIG);
	}
	return sum;
}

/* ---------- from expressions ---------- */

static bool add_expr(Affine *l, Expr *e, int64_t k, int *nsyntax, int depth)
{
	int64_t c, kc;
	if (depth > 64)
		return false;
	if (an_const_int(e, &c)) {
		if (!small(c) || !small_product(k, c, &kc))
			return false;
		l->k += kc;
		if (nsyntax)
			(*nsyntax)++;
		return small(l->k);
	}
	if (e->kind == EX_NEG)
		return add_expr(l, e->u.un.a, -k, nsyntax, depth + 1);
	if (e->kind == EX_BIN && (e->u.bin.op == OP_ADD || e->u.bin.op == OP_SUB))
		return add_expr(l, e->u.bin.a, k, nsyntax, depth + 1) &&
		       add_expr(l, e->u.bin.b, e->u.bin.op == OP_ADD ? k : -k, nsyntax, depth + 1);
	if (e->kind == EX_BIN && e->u.bin.op == OP_MUL) {
		if (an_const_int(e->u.bin.a, &c) && small(c))
			return small_product(k, c, &kc) && add_expr(l, e->u.bin.b, kc, nsyntax, depth + 1);
		if (an_const_int(e->u.bin.b, &c) && small(c))
			return small_product(k, c, &kc) && add_expr(l, e->u.bin.a, kc, nsyntax, depth + 1);
	}
	if (nsyntax)
		(*nsyntax)++;
	affine_add_term(l, e, k);
	return !l->bad;
}

bool affine_add_expr(Affine *l, Expr *x, int64_t k, int *nsyntax)
{
	return !l->bad && add_expr(l, x, k, nsyntax, 0);
}

/* ---------- to expressions ---------- */

Expr *affine_expr_in_order(Arena *a, const Affine *l, DType t)
{
	Expr *sum = NULL;
	for (int i = 0; i < l->n; i++) {
		int64_t k = dtype_wrap_int(l->coef[i], t);
		if (!k)
			continue;
		Expr *x = l->atom[i];
		bool neg = k < 0 && k != INT64_MIN && sum && dtype_wrap_int(-k, t) == -k;
		int64_t m = neg ? -k : k;
		Expr *term = m == 1 ? x : ir_bin(a, OP_MUL, ir_int(a, m, t, no_span), x, no_span);
		if (m != 1)
			term->dtype = t;
		if (!sum)
			sum = term;
		else {
			sum = ir_bin(a, neg ? OP_SUB : OP_ADD, sum, term, no_span);
			sum->dtype = t;
		}
	}
	int64_t c = dtype_wrap_int(l->k, t);
	if (!sum)
		return ir_int(a, c, t, no_span);
	if (c) {
		bool neg = c < 0 && c != INT64_MIN && dtype_wrap_int(-c, t) == -c;
		sum = ir_bin(a, neg ? OP_SUB : OP_ADD, sum, ir_int(a, neg ? -c : c, t, no_span),
			     no_span);
		sum->dtype = t;
	}
	return sum;
}

static Expr *lit(Arena *a, int64_t v, DType t)
{
	return ir_int(a, v, dtype_is_int(t) ? t : DT_INT32, no_span);
}

Expr *affine_expr_sorted(Arena *a, const Affine *l, DType t)
{
	Expr *acc = NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < l->n; i++) {
			int64_t c = l->coef[i];
			if ((pass == 0) != (c > 0))
				continue;
			int64_t m = c < 0 ? -c : c;
			Expr *term = m == 1 ? l->atom[i] : ir_mul(a, l->atom[i], lit(a, m, t));
			if (!acc)
				acc = c > 0 ? term : ir_neg(a, term, no_span);
			else
				acc = c > 0 ? ir_add(a, acc, term) : ir_sub(a, acc, term);
		}
	if (!acc)
		return lit(a, l->k, t);
	if (l->k > 0)
		acc = ir_add(a, acc, lit(a, l->k, t));
	else if (l->k < 0)
		acc = ir_sub(a, acc, lit(a, -l->k, t));
	return acc;
}
