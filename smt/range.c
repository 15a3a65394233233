/* smt/range.c — intervals of integer expressions for the encoder: the
 * range of every integer value as encode.c encodes it (wrapped to its
 * dtype unless the unwrapped result provably fits), with variable bounds
 * learnt from the hypotheses. Sound by construction: every range holds
 * for every state that satisfies the hypotheses (see encode.c's head). */
#include "smt/range.h"

#include <stdlib.h>
#include <string.h>

/* ---------- intervals ---------- */

static Wide wmin(Wide a, Wide b) { return a < b ? a : b; }
static Wide wmax(Wide a, Wide b) { return a > b ? a : b; }

bool range_of_dtype(DType t, IntRange *out)
{
	switch (t) {
	case DT_BOOL: *out = (IntRange){0, 1}; return true;
	case DT_INT8: *out = (IntRange){INT8_MIN, INT8_MAX}; return true;
	case DT_INT16: *out = (IntRange){INT16_MIN, INT16_MAX}; return true;
	case DT_INT32: *out = (IntRange){INT32_MIN, INT32_MAX}; return true;
	case DT_INT64: *out = (IntRange){INT64_MIN, INT64_MAX}; return true;
	case DT_UINT8: *out = (IntRange){0, UINT8_MAX}; return true;
	case DT_FLOAT32:
	case DT_FLOAT64:
	case DT_HANDLE:
	case DT_VOID:
	case DT_COUNT: break;
	}
	return false;
}

/* The range of t, or the empty range for a dtype without one. */
static IntRange dtype_range(DType t)
{
	IntRange r;
	return range_of_dtype(t, &r) ? r : (IntRange){1, 0};
}

bool range_fits(IntRange r, DType t)
{
	IntRange d;
	return range_of_dtype(t, &d) && r.lo >= d.lo && r.hi <= d.hi;
}

int64_t range_wrap_value(Wide v, DType t)
{
	switch (t) {
	case DT_BOOL: return v != 0;
	case DT_INT8: return (int8_t)(uint8_t)v;
	case DT_INT16: return (int16_t)(uint16_t)v;
	case DT_INT32: return (int32_t)(uint32_t)v;
	case DT_UINT8: return (uint8_t)v;
	case DT_INT64: return (int64_t)(uint64_t)v;
	case DT_FLOAT32:
	case DT_FLOAT64:
	case DT_HANDLE:
	case DT_VOID:
	case DT_COUNT: break;
	}
	return (int64_t)v;
}

static Wide floor_div_wide(Wide a, Wide b)
{
	Wide q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Every operand range here lies within a dtype (int64 at most), so sums
 * and products stay far inside Wide; anything wider is refused. */
static bool modest(IntRange r)
{
	const Wide limit = (Wide)1 << 65;
	return r.lo > -limit && r.lo < limit && r.hi > -limit && r.hi < limit;
}

static IntRange corners(Wide (*f)(Wide, Wide), IntRange a, IntRange b)
{
	Wide c[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
	IntRange r = {c[0], c[0]};
	for (int i = 1; i < 4; i++) {
		r.lo = wmin(r.lo, c[i]);
		r.hi = wmax(r.hi, c[i]);
	}
	return r;
}

static Wide mul_wide(Wide a, Wide b) { return a * b; }

/* floor(a / b) is monotone in a, and in b on either side of 0: its
 * extremes over a box that excludes b = 0 are at the corners. */
static bool floor_div_range(IntRange a, IntRange b, IntRange *out)
{
	if (b.lo > b.hi || (b.lo <= 0 && b.hi >= 0))
		return false;
	*out = corners(floor_div_wide, a, b);
	return true;
}

/* a % b takes b's sign: [0, b-1] or [b+1, 0]; a itself when a already
 * lies there. */
static bool floor_mod_range(IntRange a, IntRange b, IntRange *out)
{
	if (b.lo > b.hi || (b.lo <= 0 && b.hi >= 0))
		return false;
	if (b.lo > 0)
		*out = a.lo >= 0 && a.hi < b.lo ? a : (IntRange){0, b.hi - 1};
	else
		*out = a.hi <= 0 && a.lo > b.hi ? a : (IntRange){b.lo + 1, 0};
	return true;
}

bool range_arith(BinOp op, IntRange a, IntRange b, IntRange *out)
{
	if (!modest(a) || !modest(b))
		return false;
	switch (op) {
	case OP_ADD: *out = (IntRange){a.lo + b.lo, a.hi + b.hi}; return true;
	case OP_SUB: *out = (IntRange){a.lo - b.hi, a.hi - b.lo}; return true;
	case OP_MUL: *out = corners(mul_wide, a, b); return true;
	case OP_FLOORDIV: return floor_div_range(a, b, out);
	case OP_FLOORMOD: return floor_mod_range(a, b, out);
	case OP_MIN:
		*out = (IntRange){wmin(a.lo, b.lo), wmin(a.hi, b.hi)};
		return true;
	case OP_MAX:
		*out = (IntRange){wmax(a.lo, b.lo), wmax(a.hi, b.hi)};
		return true;
	case OP_DIV:
	case OP_EQ:
	case OP_NE:
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE:
	case OP_AND:
	case OP_OR:
	case OP_COUNT: break;
	}
	return false;
}

/* The range of an exact result r once the encoder has fitted it to t:
 * r itself when it fits (no wrap), the wrapped value of a constant, else
 * all of t. */
static IntRange fitted(IntRange r, DType t)
{
	if (range_fits(r, t))
		return r;
	if (r.lo == r.hi) {
		Wide w = range_wrap_value(r.lo, t);
		return (IntRange){w, w};
	}
	return dtype_range(t);
}

IntRange range_convert(IntRange r, DType from, DType to)
{
	if (to == DT_BOOL)
		return (IntRange){0, 1};
	IntRange f;
	if (!range_of_dtype(from, &f))
		return dtype_range(to); /* float -> int: wrapped (encode.c) */
	return fitted(r, to);
}

/* ---------- maps keyed by (pointer, let environment) ---------- */

typedef struct RangeKey {
	const void *p;
	uint32_t env;
} RangeKey;

typedef struct RangeMap {
	size_t cap, n;
	RangeKey *keys;
	IntRange *vals;
} RangeMap;

static size_t key_hash(RangeKey k)
{
	uint64_t x = (uint64_t)(uintptr_t)k.p ^ ((uint64_t)k.env << 40);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static bool map_get(const RangeMap *m, RangeKey k, IntRange *v)
{
	if (!m->cap)
		return false;
	for (size_t i = key_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i].p)
			return false;
		if (m->keys[i].p == k.p && m->keys[i].env == k.env) {
			*v = m->vals[i];
			return true;
		}
	}
}

static bool map_put(RangeMap *m, RangeKey k, IntRange v);

static bool map_grow(RangeMap *m)
{
	RangeMap big = {m->cap ? m->cap * 2 : 64, 0, NULL, NULL};
	big.keys = calloc(big.cap, sizeof *big.keys);
	big.vals = calloc(big.cap, sizeof *big.vals);
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i].p)
			map_put(&big, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = big;
	return true;
}

static bool map_put(RangeMap *m, RangeKey k, IntRange v)
{
	if ((m->n + 1) * 2 > m->cap && !map_grow(m))
		return false;
	size_t i = key_hash(k) & (m->cap - 1);
	while (m->keys[i].p && !(m->keys[i].p == k.p && m->keys[i].env == k.env))
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i].p)
		m->n++;
	m->keys[i] = k;
	m->vals[i] = v;
	return true;
}

static void map_clear(RangeMap *m)
{
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof *m->keys);
	m->n = 0;
}

static void map_free(RangeMap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---------- the analysis ---------- */

typedef struct LetRange {
	const Var *var;
	IntRange r;
	uint32_t env; /* a fresh id per binding: names this environment */
} LetRange;

struct RangeInfo {
	RangeMap bounds; /* (Var*, 0) -> learnt bound of a free variable */
	RangeMap direct; /* (Var*, 0) -> bound stated against constants */
	RangeMap memo;	 /* (Expr*, environment) -> range of its value */
	int nenv, capenv;
	LetRange *env;
	uint32_t next_env;
	bool stated_only; /* learn only bounds the query states (see .h) */
};

RangeInfo *ranges_new(bool stated_only)
{
	RangeInfo *r = calloc(1, sizeof(RangeInfo));
	if (r)
		r->stated_only = stated_only;
	return r;
}

void ranges_free(RangeInfo *r)
{
	if (!r)
		return;
	map_free(&r->bounds);
	map_free(&r->direct);
	map_free(&r->memo);
	free(r->env);
	free(r);
}

static uint32_t current_env(const RangeInfo *r)
{
	return r->nenv ? r->env[r->nenv - 1].env : 0;
}

IntRange ranges_var(RangeInfo *r, const Var *v)
{
	IntRange b;
	if (map_get(&r->bounds, (RangeKey){v, 0}, &b))
		return b;
	return dtype_range(v->dtype);
}

static bool value_range(RangeInfo *r, const Expr *x, IntRange *out);

/* x converted to `to` (an integer dtype or bool), as enc_as does. */
static bool range_as(RangeInfo *r, const Expr *x, DType to, IntRange *out)
{
	IntRange v;
	if (!range_of_dtype(x->dtype, &v)) { /* float (wrapped) or unsupported */
		*out = dtype_range(to);
		return true;
	}
	if (!value_range(r, x, &v))
		return false;
	*out = range_convert(v, x->dtype, to);
	return true;
}

IntRange ranges_binding(RangeInfo *r, const Var *v)
{
	for (int i = r->nenv; i-- > 0;)
		if (r->env[i].var == v)
			return r->env[i].r;
	return ranges_var(r, v);
}

static bool var_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	const Var *v = x->u.var;
	*out = range_convert(ranges_binding(r, v), v->dtype, x->dtype);
	return true;
}

/* The arithmetic rule of encode.c: operands converted to the node's
 * dtype, the exact result, wrapped unless it provably fits. */
static bool bin_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	BinOp op = x->u.bin.op;
	DType t = x->dtype;
	IntRange a, b, m;
	if (binop_is_compare(op) || binop_is_logical(op) || t == DT_BOOL) {
		*out = (IntRange){0, 1};
		return true;
	}
	if (!range_as(r, x->u.bin.a, t, &a) || !range_as(r, x->u.bin.b, t, &b))
		return false;
	*out = range_arith(op, a, b, &m) ? fitted(m, t) : dtype_range(t);
	return true;
}

static bool neg_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	IntRange a;
	if (!range_as(r, x->u.un.a, x->dtype, &a))
		return false;
	IntRange m = {-a.hi, -a.lo};
	*out = modest(a) ? fitted(m, x->dtype) : dtype_range(x->dtype);
	return true;
}

static bool select_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	IntRange a, b;
	if (!range_as(r, x->u.sel.a, x->dtype, &a) ||
	    !range_as(r, x->u.sel.b, x->dtype, &b))
		return false;
	*out = (IntRange){wmin(a.lo, b.lo), wmax(a.hi, b.hi)};
	return true;
}

static bool let_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	if (!ranges_push_let(r, x->u.let.var, x->u.let.value))
		return false;
	bool ok = range_as(r, x->u.let.body, x->dtype, out);
	ranges_pop_let(r);
	return ok;
}

static bool kind_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	switch (x->kind) {
	case EX_INT:
		*out = (IntRange){range_wrap_value(x->u.ival, x->dtype),
				  range_wrap_value(x->u.ival, x->dtype)};
		return true;
	case EX_VAR: return var_range(r, x, out);
	case EX_BIN: return bin_range(r, x, out);
	case EX_NOT: *out = (IntRange){0, 1}; return true;
	case EX_NEG: return neg_range(r, x, out);
	case EX_SELECT: return select_range(r, x, out);
	case EX_CAST: return range_as(r, x->u.un.a, x->dtype, out);
	case EX_LOAD:
		*out = range_convert(dtype_range(x->u.load.buf->dtype),
				     x->u.load.buf->dtype, x->dtype);
		return true;
	case EX_FLOAT: /* an integer-typed float literal is not encoded */
	case EX_UNDEF: *out = dtype_range(x->dtype); return true;
	case EX_LET: return let_range(r, x, out);
	case EX_COUNT: break;
	}
	*out = dtype_range(x->dtype);
	return true;
}

static bool value_range(RangeInfo *r, const Expr *x, IntRange *out)
{
	RangeKey k = {x, current_env(r)};
	if (map_get(&r->memo, k, out))
		return true;
	if (!kind_range(r, x, out))
		return false;
	return map_put(&r->memo, k, *out);
}

bool ranges_value(RangeInfo *r, const Expr *x, IntRange *out)
{
	return range_as(r, x, x->dtype, out);
}

bool ranges_push_let(RangeInfo *r, const Var *v, const Expr *value)
{
	IntRange b = {0, 0};
	if (range_of_dtype(v->dtype, &b) && !range_as(r, value, v->dtype, &b))
		return false;
	if (r->nenv == r->capenv) {
		int cap = r->capenv ? r->capenv * 2 : 8;
		LetRange *p = realloc(r->env, (size_t)cap * sizeof *p);
		if (!p)
			return false;
		r->env = p;
		r->capenv = cap;
	}
	r->env[r->nenv++] = (LetRange){v, b, ++r->next_env};
	return true;
}

void ranges_pop_let(RangeInfo *r)
{
	if (r->nenv > 0)
		r->nenv--;
}

/* ---------- bounds from hypotheses ---------- */

/* x is the value of a free integer variable: a reference, possibly under
 * casts that keep every value of the variable. */
static const Var *bounded_var(const Expr *x)
{
	while (x->kind == EX_CAST && range_fits(dtype_range(x->u.un.a->dtype), x->dtype))
		x = x->u.un.a;
	if (x->kind != EX_VAR || !dtype_is_int(x->u.var->dtype) ||
	    !range_fits(dtype_range(x->u.var->dtype), x->dtype))
		return NULL;
	return x->u.var;
}

static BinOp mirror(BinOp op)
{
	switch (op) {
	case OP_LT: return OP_GT;
	case OP_LE: return OP_GE;
	case OP_GT: return OP_LT;
	case OP_GE: return OP_LE;
	case OP_EQ:
	case OP_NE:
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_FLOORDIV:
	case OP_FLOORMOD:
	case OP_MIN:
	case OP_MAX:
	case OP_AND:
	case OP_OR:
	case OP_COUNT: break;
	}
	return op;
}

/* not (a op b) on integers (no NaN here) */
static BinOp negated(BinOp op)
{
	switch (op) {
	case OP_EQ: return OP_NE;
	case OP_NE: return OP_EQ;
	case OP_LT: return OP_GE;
	case OP_LE: return OP_GT;
	case OP_GT: return OP_LE;
	case OP_GE: return OP_LT;
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_FLOORDIV:
	case OP_FLOORMOD:
	case OP_MIN:
	case OP_MAX:
	case OP_AND:
	case OP_OR:
	case OP_COUNT: break;
	}
	return op;
}

/* The bound `v op other` puts on v, intersected with cur; false if op
 * says nothing (!=). */
static bool narrowed(IntRange cur, BinOp op, IntRange other, IntRange *out)
{
	IntRange nb = cur;
	switch (op) {
	case OP_EQ: nb = (IntRange){wmax(cur.lo, other.lo), wmin(cur.hi, other.hi)}; break;
	case OP_LT: nb.hi = wmin(cur.hi, other.hi - 1); break;
	case OP_LE: nb.hi = wmin(cur.hi, other.hi); break;
	case OP_GT: nb.lo = wmax(cur.lo, other.lo + 1); break;
	case OP_GE: nb.lo = wmax(cur.lo, other.lo); break;
	case OP_NE:
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_FLOORDIV:
	case OP_FLOORMOD:
	case OP_MIN:
	case OP_MAX:
	case OP_AND:
	case OP_OR:
	case OP_COUNT: return false;
	}
	*out = nb;
	return true;
}

/* No variable, load or undef: its encoding is a constant, exact in every
 * model, so a comparison with it is itself a bound the query states. */
static bool closed(const Expr *x)
{
	switch (x->kind) {
	case EX_INT:
	case EX_FLOAT: return true;
	case EX_BIN: return closed(x->u.bin.a) && closed(x->u.bin.b);
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: return closed(x->u.un.a);
	case EX_SELECT:
		return closed(x->u.sel.cond) && closed(x->u.sel.a) &&
		       closed(x->u.sel.b);
	case EX_VAR:
	case EX_LOAD:
	case EX_UNDEF:
	case EX_LET:
	case EX_COUNT: break;
	}
	return false;
}

static IntRange direct_bound(RangeInfo *r, const Var *v)
{
	const Wide far = (Wide)1 << 100;
	IntRange b;
	return map_get(&r->direct, (RangeKey){v, 0}, &b) ? b : (IntRange){-far, far};
}

bool ranges_var_stated(RangeInfo *r, const Var *v)
{
	IntRange d = direct_bound(r, v), l = ranges_var(r, v);
	return d.lo >= l.lo && d.hi <= l.hi;
}

/* v op e holds with e in `other`: narrow v's bound; also its direct
 * bound when e is closed. */
static bool tighten(RangeInfo *r, const Var *v, BinOp op, const Expr *e,
		    IntRange other, bool *changed)
{
	IntRange cur = ranges_var(r, v), d = dtype_range(v->dtype), nb, db;
	if ((r->stated_only && !closed(e)) || !narrowed(cur, op, other, &nb))
		return true;
	if (closed(e) && narrowed(direct_bound(r, v), op, other, &db) &&
	    !map_put(&r->direct, (RangeKey){v, 0}, db))
		return false;
	/* stay inside the dtype, so that later arithmetic on an empty
	 * (contradictory) bound stays small */
	nb.lo = wmin(wmax(nb.lo, d.lo), d.hi);
	nb.hi = wmin(wmax(nb.hi, d.lo), d.hi);
	if (nb.lo == cur.lo && nb.hi == cur.hi)
		return true;
	*changed = true;
	map_clear(&r->memo); /* every memoised range may depend on v */
	return map_put(&r->bounds, (RangeKey){v, 0}, nb);
}

/* h is asserted (holds) or, with `denied`, its negation holds: learn
 * from every comparison that then holds: the conjuncts of an asserted
 * `and`, the disjuncts of a denied `or`, through `not`. */
static bool learn_from(RangeInfo *r, const Expr *h, bool denied, bool *changed)
{
	if (!h)
		return true;
	if (h->kind == EX_NOT)
		return learn_from(r, h->u.un.a, !denied, changed);
	if (h->kind == EX_BIN && h->u.bin.op == (denied ? OP_OR : OP_AND))
		return learn_from(r, h->u.bin.a, denied, changed) &&
		       learn_from(r, h->u.bin.b, denied, changed);
	if (h->kind != EX_BIN || !binop_is_compare(h->u.bin.op))
		return true;
	const Expr *a = h->u.bin.a, *b = h->u.bin.b;
	IntRange ra, rb;
	/* integer (or bool) operands only: compared as plain values */
	if (!a || !b || !range_of_dtype(a->dtype, &ra) || !range_of_dtype(b->dtype, &rb))
		return true;
	BinOp op = denied ? negated(h->u.bin.op) : h->u.bin.op;
	const Var *va = bounded_var(a), *vb = bounded_var(b);
	if (va && (!value_range(r, b, &rb) || !tighten(r, va, op, b, rb, changed)))
		return false;
	if (vb && (!value_range(r, a, &ra) || !tighten(r, vb, mirror(op), a, ra, changed)))
		return false;
	return true;
}

bool ranges_learn(RangeInfo *r, int nhyps, Expr *const *hyps,
		  const Expr *goal)
{
	enum { MAX_PASSES = 6 };
	for (int pass = 0; pass < MAX_PASSES; pass++) {
		bool changed = false;
		for (int i = 0; i < nhyps; i++)
			if (!learn_from(r, hyps[i], false, &changed))
				return false;
		if (!learn_from(r, goal, true, &changed))
			return false;
		if (!changed)
			break;
	}
	return true;
}
