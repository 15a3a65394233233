/* smt/range.c — intervals of integer expressions for the encoder: the
 * range of every integer value as encode.c encodes it (wrapped to its
 * dtype unless the unwrapped result provably fits), with variable bounds
 * learnt from the hypotheses. Sound by construction: every range holds
 * for every state that satisfies the hypotheses (see encode.c's head). */
#include "smt/range.h"

#include <stdlib.h>
#include <string.h>

/* The range of t, or the empty range for a dtype without one. */
static Interval dtype_range(DType t)
{
	Interval r;
	return iv_of_dtype(t, &r) ? r : iv_empty();
}

/* ---------- maps keyed by (pointer, let environment) ---------- */

typedef struct RangeKey {
	const void *p;
	uint32_t env;
} RangeKey;

typedef struct RangeMap {
	size_t cap, n;
	RangeKey *keys;
	Interval *vals;
} RangeMap;

static size_t key_hash(RangeKey k)
{
	uint64_t x = (uint64_t)(uintptr_t)k.p ^ ((uint64_t)k.env << 40);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static bool map_get(const RangeMap *m, RangeKey k, Interval *v)
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

static bool map_put(RangeMap *m, RangeKey k, Interval v);

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

static bool map_put(RangeMap *m, RangeKey k, Interval v)
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
	Interval r;
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

Interval ranges_var(RangeInfo *r, const Var *v)
{
	Interval b;
	if (map_get(&r->bounds, (RangeKey){v, 0}, &b))
		return b;
	return dtype_range(v->dtype);
}

static bool value_range(RangeInfo *r, const Expr *x, Interval *out);

/* x converted to `to` (an integer dtype or bool), as enc_as does. */
static bool range_as(RangeInfo *r, const Expr *x, DType to, Interval *out)
{
	Interval v;
	if (!iv_of_dtype(x->dtype, &v)) { /* float (wrapped) or unsupported */
		*out = dtype_range(to);
		return true;
	}
	if (!value_range(r, x, &v))
		return false;
	*out = iv_convert(v, x->dtype, to);
	return true;
}

Interval ranges_binding(RangeInfo *r, const Var *v)
{
	for (int i = r->nenv; i-- > 0;)
		if (r->env[i].var == v)
			return r->env[i].r;
	return ranges_var(r, v);
}

static bool var_range(RangeInfo *r, const Expr *x, Interval *out)
{
	const Var *v = x->u.var;
	*out = iv_convert(ranges_binding(r, v), v->dtype, x->dtype);
	return true;
}

/* The arithmetic rule of encode.c: operands converted to the node's
 * dtype, the exact result, wrapped unless it provably fits. */
static bool bin_range(RangeInfo *r, const Expr *x, Interval *out)
{
	BinOp op = x->u.bin.op;
	DType t = x->dtype;
	Interval a, b;
	if (binop_is_compare(op) || binop_is_logical(op) || t == DT_BOOL) {
		*out = iv_make(0, 1);
		return true;
	}
	if (!range_as(r, x->u.bin.a, t, &a) || !range_as(r, x->u.bin.b, t, &b))
		return false;
	*out = iv_wrap(iv_arith(op, a, b), t);
	return true;
}

static bool neg_range(RangeInfo *r, const Expr *x, Interval *out)
{
	Interval a;
	if (!range_as(r, x->u.un.a, x->dtype, &a))
		return false;
	*out = iv_wrap(iv_neg(a), x->dtype);
	return true;
}

static bool select_range(RangeInfo *r, const Expr *x, Interval *out)
{
	Interval a, b;
	if (!range_as(r, x->u.sel.a, x->dtype, &a) ||
	    !range_as(r, x->u.sel.b, x->dtype, &b))
		return false;
	*out = iv_union(a, b);
	return true;
}

static bool let_range(RangeInfo *r, const Expr *x, Interval *out)
{
	if (!ranges_push_let(r, x->u.let.var, x->u.let.value))
		return false;
	bool ok = range_as(r, x->u.let.body, x->dtype, out);
	ranges_pop_let(r);
	return ok;
}

static bool kind_range(RangeInfo *r, const Expr *x, Interval *out)
{
	switch (x->kind) {
	case EX_INT:
		*out = iv_point(iv_wrap_value(x->u.ival, x->dtype));
		return true;
	case EX_VAR: return var_range(r, x, out);
	case EX_BIN: return bin_range(r, x, out);
	case EX_NOT: *out = iv_make(0, 1); return true;
	case EX_NEG: return neg_range(r, x, out);
	case EX_SELECT: return select_range(r, x, out);
	case EX_CAST: return range_as(r, x->u.un.a, x->dtype, out);
	case EX_LOAD:
		*out = iv_convert(dtype_range(x->u.load.buf->dtype),
				     x->u.load.buf->dtype, x->dtype);
		return true;
	case EX_FLOAT: /* an integer-typed float literal is not encoded */
	case EX_UNDEF:
	case EX_CALL: /* uninterpreted: any value of the dtype (a range fact) */
	case EX_OPAQUE:
		*out = dtype_range(x->dtype);
		return true;
	case EX_LET: return let_range(r, x, out);
	case EX_COUNT: break;
	}
	*out = dtype_range(x->dtype);
	return true;
}

static bool value_range(RangeInfo *r, const Expr *x, Interval *out)
{
	RangeKey k = {x, current_env(r)};
	if (map_get(&r->memo, k, out))
		return true;
	if (!kind_range(r, x, out))
		return false;
	return map_put(&r->memo, k, *out);
}

bool ranges_value(RangeInfo *r, const Expr *x, Interval *out)
{
	return range_as(r, x, x->dtype, out);
}

bool ranges_push_let(RangeInfo *r, const Var *v, const Expr *value)
{
	Interval b = {0, 0};
	if (iv_of_dtype(v->dtype, &b) && !range_as(r, value, v->dtype, &b))
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
	while (x->kind == EX_CAST && iv_fits(dtype_range(x->u.un.a->dtype), x->dtype))
		x = x->u.un.a;
	if (x->kind != EX_VAR || !dtype_is_int(x->u.var->dtype) ||
	    !iv_fits(dtype_range(x->u.var->dtype), x->dtype))
		return NULL;
	return x->u.var;
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
	case EX_VAR: case EX_LOAD: case EX_UNDEF: case EX_LET:
	case EX_CALL: /* an uninterpreted function's value differs by model */
	case EX_OPAQUE:
	case EX_COUNT: break;
	}
	return false;
}

static Interval direct_bound(RangeInfo *r, const Var *v)
{
	Interval b;
	return map_get(&r->direct, (RangeKey){v, 0}, &b) ? b : iv_unbounded();
}

bool ranges_var_stated(RangeInfo *r, const Var *v)
{
	Interval d = direct_bound(r, v), l = ranges_var(r, v);
	return d.lo >= l.lo && d.hi <= l.hi;
}

/* Whether `v op e` bounds v (a comparison other than !=). */
static bool says_something(BinOp op)
{
	return binop_is_compare(op) && op != OP_NE;
}

/* v op e holds with e in `other`: narrow v's bound; also its direct
 * bound when e is closed. */
static bool tighten(RangeInfo *r, const Var *v, BinOp op, const Expr *e,
		    Interval other, bool *changed)
{
	Interval cur = ranges_var(r, v), d = dtype_range(v->dtype);
	if ((r->stated_only && !closed(e)) || !says_something(op))
		return true;
	Interval nb = iv_narrow(cur, op, other);
	if (closed(e) && !map_put(&r->direct, (RangeKey){v, 0},
				  iv_narrow(direct_bound(r, v), op, other)))
		return false;
	/* stay inside the dtype, so that later arithmetic on an empty
	 * (contradictory) bound stays small */
	nb.lo = nb.lo < d.lo ? d.lo : nb.lo > d.hi ? d.hi : nb.lo;
	nb.hi = nb.hi < d.lo ? d.lo : nb.hi > d.hi ? d.hi : nb.hi;
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
	Interval ra, rb;
	/* integer (or bool) operands only: compared as plain values */
	if (!a || !b || !iv_of_dtype(a->dtype, &ra) || !iv_of_dtype(b->dtype, &rb))
		return true;
	BinOp op = denied ? iv_negate(h->u.bin.op) : h->u.bin.op;
	const Var *va = bounded_var(a), *vb = bounded_var(b);
	if (va && (!value_range(r, b, &rb) || !tighten(r, va, op, b, rb, changed)))
		return false;
	if (vb && (!value_range(r, a, &ra) || !tighten(r, vb, binop_mirror(op), a, ra, changed)))
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
