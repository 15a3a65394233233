/* kernel/analysis/index_map.c — the physical shape of an index map
 * (symbolic intervals), a derived candidate left inverse (mixed-radix
 * digits of affine terms, then a rational solve), and the padding
 * predicate. transform_layout proves every one of these claims; this
 * file only proposes them. */
#include "kernel/analysis/index_map.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/access.h"
#include "kernel/analysis/affine.h"
#include "kernel/obligation.h"

#define MAX_IN 16
#define INF_RADIX 0 /* m == 0: no modulo (the top digit) */

static Expr *lit(Arena *a, int64_t v) { return ir_int32(a, v); }

static Expr *fold(Arena *a, Expr *e) { return an_fold(a, e); }

/* ---------- symbolic intervals ---------- */

/* Bounds that are expressions (the logical extents may be parameters);
 * where both are constants the numbers come from interval.h. */
typedef struct SymRange {
	Expr *lo, *hi; /* inclusive */
} SymRange;

static bool const_of(const Expr *e, int64_t *v) { return an_const_int(e, v); }

static int var_index(const IndexMap *m, const Var *v)
{
	for (int i = 0; i < m->nin; i++)
		if (m->in[i] == v)
			return i;
	return -1;
}

static bool interval(Arena *a, const IndexMap *m, const Expr *e, SymRange *out,
		     const char **why)
{
	SymRange x, y;
	int64_t c;
	switch (e->kind) {
	case EX_INT:
		out->lo = out->hi = (Expr *)e;
		return true;
	case EX_VAR: {
		int i = var_index(m, e->u.var);
		if (i < 0) { /* a scalar parameter: one value per run */
			out->lo = out->hi = (Expr *)e;
			return true;
		}
		out->lo = lit(a, 0);
		out->hi = fold(a, ir_sub(a, m->in_extent[i], lit(a, 1)));
		return true;
	}
	case EX_NEG:
		if (!interval(a, m, e->u.un.a, &x, why))
			return false;
		out->lo = fold(a, ir_sub(a, lit(a, 0), x.hi));
		out->hi = fold(a, ir_sub(a, lit(a, 0), x.lo));
		return true;
	case EX_BIN:
		break;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		*why = "an index map output may use only + - * // % min max of indices and constants";
		return false;
	}
	BinOp op = e->u.bin.op;
	if (op == OP_MUL) {
		const Expr *k = e->u.bin.a, *other = e->u.bin.b;
		if (!const_of(k, &c)) {
			k = e->u.bin.b;
			other = e->u.bin.a;
		}
		if (!const_of(k, &c)) {
			*why = "an index map output multiplies two non-constants";
			return false;
		}
		if (!interval(a, m, other, &x, why))
			return false;
		Expr *l = fold(a, ir_mul(a, x.lo, (Expr *)k)), *h = fold(a, ir_mul(a, x.hi, (Expr *)k));
		out->lo = c >= 0 ? l : h;
		out->hi = c >= 0 ? h : l;
		return true;
	}
	if (!interval(a, m, e->u.bin.a, &x, why))
		return false;
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MIN: case OP_MAX:
		if (!interval(a, m, e->u.bin.b, &y, why))
			return false;
		break;
	case OP_FLOORDIV: case OP_FLOORMOD:
		if (!const_of(e->u.bin.b, &c) || c <= 0) {
			*why = "an index map output divides by something other than a positive constant";
			return false;
		}
		break;
	case OP_SHL: case OP_SHR: case OP_MUL: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE:
	case OP_GT: case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		*why = "an index map output may use only + - * // % min max of indices and constants";
		return false;
	}
	switch (op) {
	case OP_ADD:
		out->lo = fold(a, ir_add(a, x.lo, y.lo));
		out->hi = fold(a, ir_add(a, x.hi, y.hi));
		return true;
	case OP_SUB:
		out->lo = fold(a, ir_sub(a, x.lo, y.hi));
		out->hi = fold(a, ir_sub(a, x.hi, y.lo));
		return true;
	case OP_MIN:
	case OP_MAX:
		out->lo = fold(a, ir_bin(a, op, x.lo, y.lo, (Span){0}));
		out->hi = fold(a, ir_bin(a, op, x.hi, y.hi, (Span){0}));
		return true;
	case OP_FLOORDIV:
		out->lo = fold(a, ir_bin(a, OP_FLOORDIV, x.lo, e->u.bin.b, (Span){0}));
		out->hi = fold(a, ir_bin(a, OP_FLOORDIV, x.hi, e->u.bin.b, (Span){0}));
		return true;
	case OP_FLOORMOD: {
		int64_t lo, hi;
		Interval r = iv_make(0, c - 1);
		if (const_of(x.lo, &lo) && const_of(x.hi, &hi) && lo <= hi)
			r = iv_floormod(iv_make(lo, hi), iv_point(c));
		out->lo = lit(a, (int64_t)r.lo);
		out->hi = lit(a, (int64_t)r.hi);
		return true;
	}
	case OP_SHL: case OP_SHR: case OP_MUL: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE:
	case OP_GT: case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return false;
}

bool imap_shape(Arena *a, IndexMap *m, const char **why)
{
	m->shape = arena_alloc(a, sizeof(Expr *) * (size_t)(m->nout + 1));
	for (int k = 0; k < m->nout; k++) {
		SymRange iv;
		if (!interval(a, m, m->out[k], &iv, why))
			return false;
		m->shape[k] = fold(a, ir_add(a, iv.hi, lit(a, 1)));
		/* in the indices' dtype (the physical loops' variables have it,
		 * imap_name_phys), whatever the literals of the map */
		DType t = m->nin ? m->in[0]->dtype : DT_INT32;
		int64_t v;
		if (m->shape[k]->dtype != t)
			m->shape[k] = const_of(m->shape[k], &v) ? ir_int(a, v, t, (Span){0})
								: ir_cast(a, t, m->shape[k], (Span){0});
	}
	return true;
}

/* ---------- quasi-affine outputs: (e // d) % m with e affine ---------- */

/* sum coef_i * in_i + c (an affine form whose atoms are the index
 * variables) + sym, the part free of the indices (scalar parameters;
 * NULL: 0), kept as written: the inverse is rendered from it. */
typedef struct Lin {
	Affine f;
	Expr *sym;
} Lin;

/* The coefficient of logical index i. */
static int64_t lin_coef(const IndexMap *m, const Lin *l, int i)
{
	for (int t = 0; t < l->f.n; t++)
		if (l->f.atom[t]->u.var == m->in[i])
			return l->f.coef[t];
	return 0;
}

static bool uses_index(const IndexMap *m, const Expr *e)
{
	for (int i = 0; i < m->nin; i++)
		if (ir_expr_uses_var(e, m->in[i]))
			return true;
	return false;
}

static Expr *sym_add(Arena *a, Expr *x, Expr *y, int64_t s)
{
	if (!y)
		return x;
	if (s != 1)
		y = ir_mul(a, lit(a, s), y);
	return x ? ir_add(a, x, y) : y;
}

/* e = sum coef_i * in_i + c + sym, with sym free of the indices */
static bool lin_of(Arena *a, const IndexMap *m, const Expr *e, Lin *out)
{
	Lin x, y;
	int64_t c;
	out->f = affine_const(0, MAX_IN);
	out->sym = NULL;
	if (!dtype_is_int(e->dtype))
		return false;
	if (ir_expr_find_opaque(e))
		return false; /* not one value per run */
	if (e->kind != EX_INT && !uses_index(m, e)) {
		out->sym = (Expr *)e; /* n, n * 2, n // 4: one value per run */
		return true;
	}
	switch (e->kind) {
	case EX_INT:
		out->f = affine_const(e->u.ival, MAX_IN);
		return !out->f.bad;
	case EX_VAR:
		if (var_index(m, e->u.var) < 0)
			return false;
		out->f = affine_atom((Expr *)e, MAX_IN);
		return true;
	case EX_NEG:
		if (!lin_of(a, m, e->u.un.a, &x))
			return false;
		out->f = affine_scale(x.f, -1);
		out->sym = x.sym ? ir_neg(a, x.sym, (Span){0}) : NULL;
		return !out->f.bad;
	case EX_BIN:
		break;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	switch (e->u.bin.op) {
	case OP_ADD:
	case OP_SUB: {
		if (!lin_of(a, m, e->u.bin.a, &x) || !lin_of(a, m, e->u.bin.b, &y))
			return false;
		int64_t s = e->u.bin.op == OP_ADD ? 1 : -1;
		out->f = affine_combine(x.f, &y.f, s);
		out->sym = sym_add(a, x.sym, y.sym, s);
		return !out->f.bad;
	}
	case OP_MUL: {
		const Expr *k = e->u.bin.a, *other = e->u.bin.b;
		if (!const_of(k, &c)) {
			k = e->u.bin.b;
			other = e->u.bin.a;
		}
		if (!const_of(k, &c) || !lin_of(a, m, other, &x))
			return false;
		out->f = affine_scale(x.f, c);
		out->sym = x.sym ? ir_mul(a, lit(a, c), x.sym) : NULL;
		return !out->f.bad;
	}
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	return false;
}

typedef struct Digit {
	Lin e;
	int64_t d, m; /* (e // d) % m; m == INF_RADIX: no modulo */
	Expr *off;    /* the output is off + sign * digit (NULL: 0) */
	int sign;
} Digit;

static bool is_divmod(const Expr *e)
{
	return e->kind == EX_BIN && (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD);
}

/* Classify an output as a digit of an affine expression, possibly
 * reversed or moved: 3 - i // 4, i // 4 + n. */
static bool digit_of(Arena *a, const IndexMap *m, const Expr *out, Digit *dg)
{
	int64_t c;
	dg->d = 1;
	dg->m = INF_RADIX;
	dg->off = NULL;
	dg->sign = 1;
	const Expr *x = out;
	if (x->kind == EX_NEG && is_divmod(x->u.un.a)) {
		dg->sign = -1;
		x = x->u.un.a;
	} else if (x->kind == EX_BIN && (x->u.bin.op == OP_ADD || x->u.bin.op == OP_SUB)) {
		const Expr *l = x->u.bin.a, *r = x->u.bin.b;
		if (is_divmod(l) && !uses_index(m, r)) {
			dg->off = x->u.bin.op == OP_ADD ? (Expr *)r : ir_neg(a, (Expr *)r, (Span){0});
			x = l;
		} else if (is_divmod(r) && !uses_index(m, l)) {
			dg->off = (Expr *)l;
			dg->sign = x->u.bin.op == OP_ADD ? 1 : -1;
			x = r;
		}
	}
	if (x->kind == EX_BIN && x->u.bin.op == OP_FLOORMOD && const_of(x->u.bin.b, &c) && c > 0) {
		dg->m = c;
		x = x->u.bin.a;
	}
	/* (y % M) // d with d | M is the digit (y // d) % (M / d) */
	if (dg->m == INF_RADIX && x->kind == EX_BIN && x->u.bin.op == OP_FLOORDIV &&
	    const_of(x->u.bin.b, &c) && c > 0 && x->u.bin.a->kind == EX_BIN &&
	    x->u.bin.a->u.bin.op == OP_FLOORMOD) {
		int64_t big;
		const Expr *inner = x->u.bin.a;
		if (const_of(inner->u.bin.b, &big) && big > 0 && big % c == 0) {
			dg->d = c;
			dg->m = big / c;
			return lin_of(a, m, inner->u.bin.a, &dg->e);
		}
	}
	while (x->kind == EX_BIN && x->u.bin.op == OP_FLOORDIV && const_of(x->u.bin.b, &c) && c > 0) {
		dg->d *= c;
		x = x->u.bin.a;
	}
	return lin_of(a, m, x, &dg->e);
}

/* the digit's value from its physical variable t: sign * (t - off) */
static Expr *digit_value(Arena *a, const Digit *dg, Expr *t)
{
	if (dg->off)
		t = dg->sign > 0 ? ir_sub(a, t, dg->off) : ir_sub(a, dg->off, t);
	else if (dg->sign < 0)
		t = ir_neg(a, t, (Span){0});
	return t;
}

static bool lin_equal(Arena *a, const IndexMap *m, const Lin *x, const Lin *y)
{
	if (x->f.k != y->f.k)
		return false;
	for (int i = 0; i < m->nin; i++)
		if (lin_coef(m, x, i) != lin_coef(m, y, i))
			return false;
	if (!x->sym || !y->sym)
		return !x->sym && !y->sym;
	return ir_expr_equal(fold(a, x->sym), fold(a, y->sym));
}

/* ---------- names ---------- */

static int single_var(const IndexMap *m, const Lin *e)
{
	int found = -1;
	for (int i = 0; i < m->nin; i++)
		if (lin_coef(m, e, i)) {
			if (found >= 0)
				return -1;
			found = i;
		}
	return found;
}

/* Physical variables live in their own scope (the padding loops, the
 * predicate): they need only be distinct among themselves. */
static bool name_taken(const IndexMap *m, int upto, const char *name)
{
	for (int k = 0; k < upto; k++)
		if (strcmp(m->phys[k]->name, name) == 0)
			return true;
	return false;
}

void imap_name_phys(Arena *a, IndexMap *m)
{
	m->phys = arena_alloc(a, sizeof(Var *) * (size_t)(m->nout + 1));
	for (int k = 0; k < m->nout; k++) {
		Digit dg;
		const char *name = NULL;
		if (digit_of(a, m, m->out[k], &dg)) {
			int v = single_var(m, &dg.e);
			if (v >= 0) {
				const char *base = m->in[v]->name;
				const char *suffix = dg.d > 1 && dg.m != INF_RADIX ? "m"
						     : dg.d > 1		       ? "o"
						     : dg.m != INF_RADIX	       ? "i"
										       : "";
				name = arena_printf(a, "%s%s", base, suffix);
			}
		}
		if (!name)
			name = arena_printf(a, "t%d", k);
		if (name_taken(m, k, name))
			name = arena_printf(a, "%s_%d", name, k);
		DType t = m->in_extent && m->nin ? m->in[0]->dtype : DT_INT32;
		m->phys[k] = ir_var(a, name, t, (Span){0});
	}
}

/* ---------- the inverse ---------- */

typedef struct Frac {
	int64_t n, d; /* d > 0 */
} Frac;

static int64_t gcd64(int64_t x, int64_t y)
{
	if (x < 0)
		x = -x;
	if (y < 0)
		y = -y;
	while (y) {
		int64_t t = x % y;
		x = y;
		y = t;
	}
	return x ? x : 1;
}

static Frac frac(int64_t n, int64_t d)
{
	if (d < 0) {
		n = -n;
		d = -d;
	}
	int64_t g = gcd64(n, d);
	return (Frac){n / g, d / g};
}

static Frac fsub(Frac x, Frac y) { return frac(x.n * y.d - y.n * x.d, x.d * y.d); }
static Frac fmul(Frac x, Frac y) { return frac(x.n * y.n, x.d * y.d); }
static Frac fdiv(Frac x, Frac y) { return frac(x.n * y.d, x.d * y.n); }

/* the numbers stay small for real index maps; refuse anything else */
static bool frac_small(Frac x) { return x.n > -(1 << 20) && x.n < (1 << 20) && x.d < (1 << 20); }

typedef struct Group {
	Lin e;
	Expr *value;	 /* e(x) as an expression of the physical variables */
	int64_t modulus; /* 0, or value is e(x) only modulo this (a swizzle's
			  * (i + j) % 4: the top digit wraps) */
	bool used;	 /* a pivot row of the solve */
} Group;

/* Groups of digits of one affine e in a mixed radix: e = sum d_k * t_k. */
static int make_groups(Arena *a, const IndexMap *m, Group *groups, const char **why)
{
	Digit dg[64];
	bool done[64] = {false};
	int ng = 0;
	if (m->nout > 64) {
		*why = "too many outputs";
		return -1;
	}
	for (int k = 0; k < m->nout; k++)
		if (!digit_of(a, m, m->out[k], &dg[k])) {
			*why = "an output is not a digit (e // d) % m of an affine expression of the indices";
			return -1;
		}
	for (int k = 0; k < m->nout; k++) {
		if (done[k])
			continue;
		int members[64], n = 0;
		for (int j = k; j < m->nout; j++)
			if (!done[j] && lin_equal(a, m, &dg[j].e, &dg[k].e)) {
				members[n++] = j;
				done[j] = true;
			}
		/* sort by divisor */
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && dg[members[j]].d < dg[members[j - 1]].d; j--) {
				int t = members[j];
				members[j] = members[j - 1];
				members[j - 1] = t;
			}
		int64_t expect = 1, modulus = 0;
		for (int i = 0; i < n; i++) {
			const Digit *x = &dg[members[i]];
			bool last = i == n - 1;
			if (last && x->m != INF_RADIX &&
			    __builtin_mul_overflow(x->d, x->m, &modulus))
				modulus = -1;
			if (x->d != expect || (!last && x->m == INF_RADIX) || modulus < 0) {
				*why = "the outputs that use one index expression are not the digits of a mixed radix (e // d, e % d, ...)";
				return -1;
			}
			if (!last)
				expect = x->d * x->m;
		}
		/* e = sum d_k * t_k, the top digit first as people write it */
		Expr *value = NULL;
		for (int i = n - 1; i >= 0; i--) {
			const Digit *x = &dg[members[i]];
			Expr *t = digit_value(a, x, ir_varref(a, m->phys[members[i]], (Span){0}));
			Expr *term = x->d == 1 ? t : ir_mul(a, lit(a, x->d), t);
			value = value ? ir_add(a, value, term) : term;
		}
		groups[ng].e = dg[k].e;
		groups[ng].value = fold(a, value);
		groups[ng].modulus = modulus;
		groups[ng].used = false;
		ng++;
	}
	return ng;
}

bool imap_derive_inverse(Arena *a, IndexMap *m, const char **why)
{
	m->inverse = NULL;
	if (m->nin > MAX_IN) {
		*why = "too many logical dimensions";
		return false;
	}
	Group groups[64];
	int ng = make_groups(a, m, groups, why);
	if (ng < 0)
		return false;
	/* Solve A x = r (r_g = value_g - c_g) by Gauss-Jordan elimination on
	 * the augmented matrix [A | I] over the rationals: row g of the
	 * result expresses a combination of the r's. */
	int n = m->nin;
	Frac A[64][MAX_IN], T[64][64];
	for (int g = 0; g < ng; g++) {
		for (int j = 0; j < n; j++)
			A[g][j] = frac(lin_coef(m, &groups[g].e, j), 1);
		for (int h = 0; h < ng; h++)
			T[g][h] = frac(g == h, 1);
	}
	int pivot_row[MAX_IN];
	int row = 0;
	for (int j = 0; j < n; j++) {
		int p = -1;
		for (int g = row; g < ng && p < 0; g++)
			if (A[g][j].n)
				p = g;
		if (p < 0) {
			*why = arena_printf(a, "the map does not determine logical index %s", m->in[j]->name);
			return false;
		}
		for (int x = 0; x < n; x++) {
			Frac t = A[p][x];
			A[p][x] = A[row][x];
			A[row][x] = t;
		}
		for (int x = 0; x < ng; x++) {
			Frac t = T[p][x];
			T[p][x] = T[row][x];
			T[row][x] = t;
		}
		Frac piv = A[row][j];
		for (int x = 0; x < n; x++)
			A[row][x] = fdiv(A[row][x], piv);
		for (int x = 0; x < ng; x++)
			T[row][x] = fdiv(T[row][x], piv);
		for (int g = 0; g < ng; g++) {
			if (g == row || !A[g][j].n)
				continue;
			Frac f = A[g][j];
			for (int x = 0; x < n; x++)
				A[g][x] = fsub(A[g][x], fmul(f, A[row][x]));
			for (int x = 0; x < ng; x++)
				T[g][x] = fsub(T[g][x], fmul(f, T[row][x]));
		}
		pivot_row[j] = row++;
	}
	m->inverse = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	for (int j = 0; j < n; j++) {
		const Frac *q = T[pivot_row[j]];
		int64_t den = 1;
		for (int g = 0; g < ng; g++) {
			if (!frac_small(q[g])) {
				*why = "the map's coefficients are too large";
				m->inverse = NULL;
				return false;
			}
			den = den / gcd64(den, q[g].d) * q[g].d;
		}
		Expr *sum = NULL;
		/* a group known only modulo M determines x_j modulo M when its
		 * coefficients are integers; with x_j in [0, E) and E | M that
		 * is x_j = sum % E (the left-inverse obligation checks it) */
		bool wraps = false, wrap_ok = den == 1;
		int64_t ext = 0;
		wrap_ok = wrap_ok && m->in_extent && const_of(m->in_extent[j], &ext) && ext > 0;
		for (int g = 0; g < ng; g++) {
			if (!q[g].n || !groups[g].modulus)
				continue;
			wraps = true;
			wrap_ok = wrap_ok && groups[g].modulus % ext == 0;
		}
		for (int g = 0; g < ng; g++) {
			if (!q[g].n)
				continue;
			groups[g].used = true;
			int64_t coef = q[g].n * (den / q[g].d);
			Expr *r = fold(a, ir_sub(a, groups[g].value, lit(a, groups[g].e.f.k)));
			if (groups[g].e.sym)
				r = fold(a, ir_sub(a, r, groups[g].e.sym));
			Expr *term = fold(a, ir_mul(a, lit(a, coef), r));
			if (coef == -1)
				term = fold(a, ir_sub(a, lit(a, 0), r));
			sum = sum ? fold(a, ir_add(a, sum, term)) : term;
		}
		if (!sum)
			sum = lit(a, 0);
		if (den != 1)
			sum = ir_bin(a, OP_FLOORDIV, sum, lit(a, den), (Span){0});
		if (wraps && wrap_ok)
			sum = ir_bin(a, OP_FLOORMOD, sum, lit(a, ext), (Span){0});
		m->inverse[j] = sum;
	}
	return true;
}

/* ---------- predicates ---------- */

Expr *imap_in_box(Arena *a, int n, Expr **idx, Expr **extent)
{
	Expr *all = NULL;
	for (int k = 0; k < n; k++) {
		Expr *lo = ir_bin(a, OP_LE, lit(a, 0), idx[k], (Span){0});
		Expr *hi = ir_bin(a, OP_LT, idx[k], extent[k], (Span){0});
		all = ir_and(a, all, ir_and(a, lo, hi));
	}
	return all;
}

/* e is a sum of non-negative multiples of physical variables plus a
 * non-negative constant: it is >= 0 on the physical box. */
static bool nonneg_on_box(const Expr *e)
{
	int64_t c;
	if (const_of(e, &c))
		return c >= 0;
	switch (e->kind) {
	case EX_VAR:
		return true;
	case EX_BIN:
		if (e->u.bin.op == OP_ADD)
			return nonneg_on_box(e->u.bin.a) && nonneg_on_box(e->u.bin.b);
		if (e->u.bin.op == OP_MUL)
			return nonneg_on_box(e->u.bin.a) && nonneg_on_box(e->u.bin.b);
		if (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD)
			return nonneg_on_box(e->u.bin.a) && const_of(e->u.bin.b, &c) && c > 0;
		return false;
	case EX_INT: case EX_FLOAT: case EX_NOT: case EX_NEG: case EX_SELECT:
	case EX_CAST: case EX_LOAD: case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	return false;
}

/* The inverse is exact: no division, so A g(t) + c == value(t) for the
 * pivot rows, and every output belongs to a pivot row. */
static bool inverse_is_exact(Arena *a, const IndexMap *m)
{
	for (int j = 0; j < m->nin; j++) {
		const Expr *g = m->inverse[j];
		if (g->kind == EX_BIN && g->u.bin.op == OP_FLOORDIV)
			return false;
	}
	/* a moved or reversed inner digit (1 + i % 4) does not cover the
	 * physical box [0, 4) exactly; the top digit may be moved */
	for (int k = 0; k < m->nout; k++) {
		Digit dg;
		if (!digit_of(a, m, m->out[k], &dg))
			return false;
		if (dg.m != INF_RADIX && (dg.off || dg.sign != 1))
			return false;
	}
	const char *why;
	Group groups[64];
	int ng = make_groups(a, m, groups, &why);
	return ng == m->nin; /* square: every group is a pivot row */
}

/* g_j stays below `extent` on the physical box (constant intervals). */
static bool below_on_box(Arena *a, const IndexMap *m, Expr *g, Expr *extent)
{
	IndexMap box;
	memset(&box, 0, sizeof box);
	box.nin = m->nout;
	box.in = m->phys;
	box.in_extent = m->shape;
	SymRange iv;
	const char *why;
	int64_t hi, ext;
	return interval(a, &box, g, &iv, &why) && const_of(iv.hi, &hi) && const_of(extent, &ext) &&
	       hi < ext;
}

/* not e, pushed inward (De Morgan; an integer comparison flips): exact,
 * so `if 4 * io + ii >= 14` reads as in seed 000 */
Expr *imap_negate(Arena *a, Expr *e)
{
	if (e->kind == EX_NOT)
		return e->u.un.a;
	if (e->kind == EX_INT && e->dtype == DT_BOOL)
		return ir_bool(a, !e->u.ival);
	if (e->kind != EX_BIN)
		return ir_not(a, e, (Span){0});
	BinOp op = e->u.bin.op, inv = op;
	if (op == OP_AND || op == OP_OR)
		return ir_bin(a, op == OP_AND ? OP_OR : OP_AND, imap_negate(a, e->u.bin.a),
			      imap_negate(a, e->u.bin.b), (Span){0});
	if (!binop_is_compare(op) || !dtype_is_int(e->u.bin.a->dtype) ||
	    !dtype_is_int(e->u.bin.b->dtype))
		return ir_not(a, e, (Span){0});
	switch (op) {
	case OP_LT: inv = OP_GE; break;
	case OP_LE: inv = OP_GT; break;
	case OP_GT: inv = OP_LE; break;
	case OP_GE: inv = OP_LT; break;
	case OP_EQ: inv = OP_NE; break;
	case OP_NE: inv = OP_EQ; break;
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD:
	case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return ir_bin(a, inv, e->u.bin.a, e->u.bin.b, (Span){0});
}

Expr *imap_pad_predicate(Arena *a, const IndexMap *m, Expr **full, bool *simplified)
{
	Expr **g = m->inverse;
	Var **from = m->in;
	Expr *inside_full = NULL, *inside = NULL;
	*simplified = false;
	for (int j = 0; j < m->nin; j++) {
		Expr *lo = ir_bin(a, OP_LE, lit(a, 0), g[j], (Span){0});
		Expr *hi = ir_bin(a, OP_LT, g[j], m->in_extent[j], (Span){0});
		inside_full = ir_and(a, inside_full, ir_and(a, lo, hi));
		if (nonneg_on_box(g[j]))
			*simplified = true;
		else
			inside = ir_and(a, inside, lo);
		if (below_on_box(a, m, g[j], m->in_extent[j]))
			*simplified = true;
		else
			inside = ir_and(a, inside, hi);
	}
	bool exact = inverse_is_exact(a, m);
	for (int k = 0; k < m->nout; k++) {
		Expr *fg = fold(a, ir_subst_expr(a, m->out[k], m->nin, from, g));
		Expr *eq = ir_bin(a, OP_EQ, fg, ir_varref(a, m->phys[k], (Span){0}), (Span){0});
		inside_full = ir_and(a, inside_full, eq);
		if (exact)
			*simplified = true;
		else
			inside = ir_and(a, inside, eq);
	}
	*full = imap_negate(a, inside_full ? inside_full : ir_bool(a, true));
	return imap_negate(a, inside ? inside : ir_bool(a, true));
}
