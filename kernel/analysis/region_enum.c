/* kernel/analysis/region_enum.c — the concrete side of bound inference
 * (region.h): evaluating integer expressions on given variable values,
 * the largest value of extents over a small attach path (to size a
 * shrunk buffer), and the exactness and tightness of a box for the
 * report, by enumerating every iteration within a budget. */
#include "kernel/analysis/region.h"

#include <stdlib.h>
#include <string.h>

#define RG_BIG AFFINE_BIG /* values beyond are not enumerated (no int64 overflow) */

static bool small(int64_t v) { return v > -RG_BIG && v < RG_BIG; }

/* (int64 wraps only for INT64_MIN // -1, which small() then refuses) */
static int64_t fdiv(int64_t a, int64_t b) { return (int64_t)iv_fdiv(a, b); }
static int64_t fmod64(int64_t a, int64_t b) { return (int64_t)iv_fmod(a, b); }

/* ---------- evaluation ---------- */

#define EV_MAX 128

typedef struct EvEnv {
	int n;
	Var *vars[EV_MAX];
	int64_t vals[EV_MAX];
} EvEnv;

static bool ev(const EvEnv *v, const Expr *x, int64_t *out);

static bool ev_bin(const EvEnv *v, const Expr *x, int64_t *out)
{
	int64_t a, b;
	if (!ev(v, x->u.bin.a, &a))
		return false;
	/* short-circuit logic as the interpreter does */
	if (x->u.bin.op == OP_AND && !a) { *out = 0; return true; }
	if (x->u.bin.op == OP_OR && a) { *out = 1; return true; }
	if (!ev(v, x->u.bin.b, &b))
		return false;
	switch (x->u.bin.op) {
	case OP_ADD: *out = a + b; break;
	case OP_SUB: *out = a - b; break;
	case OP_MUL:
		if (llabs(a) > RG_BIG || llabs(b) > RG_BIG || (a && llabs(b) > RG_BIG / llabs(a)))
			return false;
		*out = a * b;
		break;
	case OP_FLOORDIV: if (!b) return false; *out = fdiv(a, b); break;
	case OP_FLOORMOD: if (!b) return false; *out = fmod64(a, b); break;
	case OP_MIN: *out = a < b ? a : b; break;
	case OP_MAX: *out = a > b ? a : b; break;
	case OP_EQ: *out = a == b; break;
	case OP_NE: *out = a != b; break;
	case OP_LT: *out = a < b; break;
	case OP_LE: *out = a <= b; break;
	case OP_GT: *out = a > b; break;
	case OP_GE: *out = a >= b; break;
	case OP_AND: *out = a && b; break;
	case OP_OR: *out = a || b; break;
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_COUNT: return false;
	}
	return small(*out);
}

static bool ev(const EvEnv *v, const Expr *x, int64_t *out)
{
	if (!dtype_is_int(x->dtype) && x->dtype != DT_BOOL)
		return false;
	int64_t a;
	switch (x->kind) {
	case EX_INT:
		*out = x->u.ival;
		return small(*out);
	case EX_VAR:
		for (int i = v->n - 1; i >= 0; i--)
			if (v->vars[i] == x->u.var) {
				*out = v->vals[i];
				return true;
			}
		return false;
	case EX_BIN:
		return ev_bin(v, x, out);
	case EX_NOT:
		if (!ev(v, x->u.un.a, &a))
			return false;
		*out = !a;
		return true;
	case EX_NEG:
		if (!ev(v, x->u.un.a, &a))
			return false;
		*out = -a;
		return true;
	case EX_SELECT:
		if (!ev(v, x->u.sel.cond, &a))
			return false;
		return ev(v, a ? x->u.sel.a : x->u.sel.b, out);
	case EX_CAST:
		if (!dtype_is_int(x->u.un.a->dtype) ||
		    dtype_bits(x->u.un.a->dtype) > dtype_bits(x->dtype))
			return false;
		return ev(v, x->u.un.a, out);
	case EX_FLOAT: case EX_LOAD: case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE:
		return false;
	case EX_COUNT:
		break;
	}
	abort();
}

bool rg_eval(const Expr *x, int n, Var *const *vars, const int64_t *vals, int64_t *out)
{
	EvEnv v;
	if (n > EV_MAX)
		return false;
	v.n = n;
	for (int i = 0; i < n; i++) {
		v.vars[i] = vars[i];
		v.vals[i] = vals[i];
	}
	return ev(&v, x, out);
}

/* ---------- enumeration of an attach path ---------- */

typedef struct Enum {
	int nloops;
	Stmt *const *loops;
	EvEnv env;
	long budget;
	bool failed;
	void (*visit)(struct Enum *, void *);
	void *arg;
} Enum;

static void enum_loops(Enum *en, int k)
{
	if (en->failed)
		return;
	if (k == en->nloops) {
		en->visit(en, en->arg);
		return;
	}
	const Stmt *l = en->loops[k];
	int64_t lo, ext;
	if (!ev(&en->env, l->u.loop.min, &lo) || !ev(&en->env, l->u.loop.extent, &ext) ||
	    en->env.n >= EV_MAX) {
		en->failed = true;
		return;
	}
	int slot = en->env.n++;
	en->env.vars[slot] = l->u.loop.var;
	for (int64_t i = 0; i < ext && !en->failed; i++) {
		if (--en->budget < 0) {
			en->failed = true;
			break;
		}
		en->env.vals[slot] = lo + i;
		enum_loops(en, k + 1);
	}
	en->env.n = slot;
}

/* ---------- counting before enumerating ---------- */

static const EvEnv no_vars; /* constants only */

static long sat_mul(long x, long y, long cap)
{
	if (x == 0 || y == 0)
		return 0;
	return x > cap / y ? cap + 1 : x * y;
}

static long sat_add(long x, long y, long cap) { return x > cap - y ? cap + 1 : x + y; }

/* A lower bound on the loop iterations that enumerating s counts against
 * the budget, saturated just past cap: loops whose range is not a
 * constant count 0, and an `if` counts its smaller branch. */
static long body_iterations(const Stmt *s, long cap)
{
	if (!s)
		return 0;
	int64_t ext;
	switch (s->kind) {
	case ST_SEQ: {
		long n = 0;
		for (int i = 0; i < s->u.seq.n && n <= cap; i++)
			n = sat_add(n, body_iterations(s->u.seq.items[i], cap), cap);
		return n;
	}
	case ST_FOR:
		if (!ev(&no_vars, s->u.loop.extent, &ext) || ext <= 0)
			return 0;
		return sat_mul((long)(ext > cap ? cap + 1 : ext),
			       sat_add(1, body_iterations(s->u.loop.body, cap), cap), cap);
	case ST_IF: {
		long t = body_iterations(s->u.cond.then_s, cap);
		long e = body_iterations(s->u.cond.else_s, cap);
		return t < e ? t : e;
	}
	case ST_ALLOC:
		return body_iterations(s->u.alloc.body, cap);
	case ST_BLOCK:
		return body_iterations(s->u.block.body, cap);
	case ST_LET:
		return body_iterations(s->u.let.body, cap);
	case ST_STORE:
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
		return 0;
	case ST_COUNT:
		break;
	}
	abort();
}

/* Whether enumerating the loops (and s in each iteration) surely costs
 * more than `budget` iterations, judged from the constant extents alone:
 * then the enumeration would fail anyway, and is not started. */
static bool surely_over_budget(int nloops, Stmt *const *loops, const Stmt *s, long budget)
{
	long outer = 1;
	for (int k = 0; k < nloops; k++) {
		int64_t ext;
		if (!ev(&no_vars, loops[k]->u.loop.extent, &ext))
			continue; /* counts at least once per outer iteration */
		if (ext <= 0)
			return false;
		outer = sat_mul(outer, (long)(ext > budget ? budget + 1 : ext), budget);
	}
	/* each innermost outer iteration is counted once, then s's loops */
	long inner = sat_mul(outer, body_iterations(s, budget), budget);
	return sat_add(nloops ? outer : 0, inner, budget) > budget;
}

typedef struct MaxArg {
	int n;
	Expr *const *exprs;
	int64_t *max;
} MaxArg;

static void visit_max(Enum *en, void *arg)
{
	MaxArg *m = arg;
	for (int i = 0; i < m->n; i++) {
		int64_t v;
		if (!ev(&en->env, m->exprs[i], &v)) {
			en->failed = true;
			return;
		}
		if (v > m->max[i])
			m->max[i] = v;
	}
}

bool rg_max_over_loops(int nloops, Stmt *const *loops, int nexprs, Expr *const *exprs,
		       long budget, int64_t *max_out)
{
	for (int i = 0; i < nexprs; i++)
		max_out[i] = 0;
	if (surely_over_budget(nloops, loops, NULL, budget))
		return false;
	MaxArg m = {nexprs, exprs, max_out};
	Enum en;
	memset(&en, 0, sizeof en);
	en.nloops = nloops;
	en.loops = loops;
	en.budget = budget;
	en.visit = visit_max;
	en.arg = &m;
	enum_loops(&en, 0);
	return !en.failed;
}

/* ---------- exactness of a box ---------- */

typedef struct ExactArg {
	Arena *a;
	const Stmt *s;
	const Buffer *buf;
	bool writes;
	Expr *const *lo, *const *hi;
	int nfixed;
	bool exact, tight;
	char *witness, *tight_witness;
	/* per iteration */
	int64_t rmin[8], rmax[8];
	int64_t blo[8], bext[8];
	uint8_t *seen;
	int64_t volume, distinct, cells;
	bool outside;
} ExactArg;

static void exact_cell(Enum *en, ExactArg *x, int nidx, Expr *const *idx)
{
	int64_t off = 0;
	bool inside = true;
	for (int d = 0; d < nidx; d++) {
		int64_t v;
		if (!ev(&en->env, idx[d], &v)) {
			en->failed = true;
			return;
		}
		if (!x->cells) {
			x->rmin[d] = x->rmax[d] = v;
		} else {
			x->rmin[d] = v < x->rmin[d] ? v : x->rmin[d];
			x->rmax[d] = v > x->rmax[d] ? v : x->rmax[d];
		}
		v -= x->blo[d];
		if (v < 0 || v >= x->bext[d])
			inside = false;
		else
			off = off * x->bext[d] + v;
	}
	x->cells++;
	if (!inside) {
		x->outside = true;
		return;
	}
	if (!x->seen[off]) {
		x->seen[off] = 1;
		x->distinct++;
	}
}

static void exact_expr(Enum *en, ExactArg *x, const Expr *e)
{
	if (en->failed)
		return;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			exact_expr(en, x, e->u.load.idx[i]);
		if (!x->writes && e->u.load.buf == x->buf)
			exact_cell(en, x, e->u.load.nidx, e->u.load.idx);
		return;
	case EX_BIN:
		exact_expr(en, x, e->u.bin.a);
		exact_expr(en, x, e->u.bin.b);
		return;
	case EX_NOT: case EX_NEG: case EX_CAST:
		exact_expr(en, x, e->u.un.a);
		return;
	case EX_SELECT: {
		/* as the interpreter: the condition, then the arm it picks */
		exact_expr(en, x, e->u.sel.cond);
		int64_t v;
		if (!ev(&en->env, e->u.sel.cond, &v)) {
			en->failed = true;
			return;
		}
		exact_expr(en, x, v ? e->u.sel.a : e->u.sel.b);
		return;
	}
	case EX_LET:
		en->failed = true;
		return;
	case EX_OPAQUE: /* may access any cell of what it names: not enumerable */
		en->failed = true;
		return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			exact_expr(en, x, e->u.call.args[i]);
		return;
	case EX_COUNT:
		break;
	}
	abort();
}

static void exact_stmt(Enum *en, ExactArg *x, const Stmt *s)
{
	if (en->failed)
		return;
	int64_t v, lo, ext;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			exact_stmt(en, x, s->u.seq.items[i]);
		return;
	case ST_FOR: {
		if (!ev(&en->env, s->u.loop.min, &lo) || !ev(&en->env, s->u.loop.extent, &ext) ||
		    en->env.n >= EV_MAX) {
			en->failed = true;
			return;
		}
		int slot = en->env.n++;
		en->env.vars[slot] = s->u.loop.var;
		for (int64_t i = 0; i < ext && !en->failed; i++) {
			if (--en->budget < 0) {
				en->failed = true;
				break;
			}
			en->env.vals[slot] = lo + i;
			exact_stmt(en, x, s->u.loop.body);
		}
		en->env.n = slot;
		return;
	}
	case ST_IF:
		exact_expr(en, x, s->u.cond.cond);
		if (!ev(&en->env, s->u.cond.cond, &v)) {
			en->failed = true;
			return;
		}
		if (v)
			exact_stmt(en, x, s->u.cond.then_s);
		else if (s->u.cond.else_s)
			exact_stmt(en, x, s->u.cond.else_s);
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			exact_expr(en, x, s->u.store.idx[i]);
		exact_expr(en, x, s->u.store.value);
		if (x->writes && s->u.store.buf == x->buf)
			exact_cell(en, x, s->u.store.nidx, s->u.store.idx);
		return;
	case ST_ASSUME:
	case ST_EVAL:
		exact_expr(en, x, s->u.expr);
		return;
	case ST_ALLOC:
		exact_stmt(en, x, s->u.alloc.body);
		return;
	case ST_BLOCK:
		exact_stmt(en, x, s->u.block.body);
		return;
	case ST_LET: {
		exact_expr(en, x, s->u.let.value);
		if (!ev(&en->env, s->u.let.value, &v) || en->env.n >= EV_MAX) {
			en->failed = true;
			return;
		}
		int slot = en->env.n++;
		en->env.vars[slot] = s->u.let.var;
		en->env.vals[slot] = v;
		exact_stmt(en, x, s->u.let.body);
		en->env.n = slot;
		return;
	}
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

static void visit_exact(Enum *en, void *arg)
{
	ExactArg *x = arg;
	int nd = x->buf->ndim;
	x->volume = 1;
	for (int d = 0; d < nd; d++) {
		int64_t lo, hi;
		if (!ev(&en->env, x->lo[d], &lo) || !ev(&en->env, x->hi[d], &hi)) {
			en->failed = true;
			return;
		}
		x->blo[d] = lo;
		x->bext[d] = hi >= lo ? hi - lo + 1 : 0;
		x->volume *= x->bext[d];
		if (x->volume > en->budget) {
			en->failed = true;
			return;
		}
	}
	x->seen = calloc((size_t)(x->volume ? x->volume : 1), 1);
	if (!x->seen) {
		en->failed = true;
		return;
	}
	x->distinct = 0;
	x->cells = 0;
	x->outside = false;
	exact_stmt(en, x, x->s);
	free(x->seen);
	x->seen = NULL;
	if (en->failed)
		return;
	bool tight = true;
	for (int d = 0; d < nd && x->cells; d++)
		tight &= x->rmin[d] == x->blo[d] && x->rmax[d] == x->blo[d] + x->bext[d] - 1;
	if (!x->cells)
		tight = x->volume == 0;
	if (!tight && x->tight) {
		x->tight = false;
		StrBuf b = {0};
		for (int i = 0; i < x->nfixed; i++)
			sb_printf(&b, "%s%s=%lld", i ? ", " : "", en->env.vars[i]->name,
				  (long long)en->env.vals[i]);
		sb_printf(&b, ": the box holds %lld cells, %lld are %s", (long long)x->volume,
			  (long long)x->distinct, x->writes ? "written" : "read");
		char *t = sb_take(&b);
		x->tight_witness = arena_strdup(x->a, t);
		free(t);
	}
	if (!x->exact)
		return;
	if (x->outside || x->distinct != x->volume) {
		x->exact = false;
		StrBuf b = {0};
		for (int i = 0; i < x->nfixed; i++)
			sb_printf(&b, "%s%s=%lld", i ? ", " : "", en->env.vars[i]->name,
				  (long long)en->env.vals[i]);
		if (x->outside)
			sb_printf(&b, ": a cell outside the box is %s", x->writes ? "written" : "read");
		else
			sb_printf(&b, ": the box holds %lld cells, %lld are %s", (long long)x->volume,
				  (long long)x->distinct, x->writes ? "written" : "read");
		char *t = sb_take(&b);
		x->witness = arena_strdup(x->a, t);
		free(t);
	}
}

bool rg_box_exact(Arena *a, int nloops, Stmt *const *loops, const Stmt *s, const Buffer *buf,
		  bool writes, Expr *const *lo, Expr *const *hi, long budget, bool *exact,
		  bool *tight, char **witness)
{
	if (buf->ndim > 8 || surely_over_budget(nloops, loops, s, budget))
		return false;
	ExactArg x;
	memset(&x, 0, sizeof x);
	x.a = a;
	x.s = s;
	x.buf = buf;
	x.writes = writes;
	x.lo = lo;
	x.hi = hi;
	x.nfixed = nloops;
	x.exact = true;
	x.tight = true;
	Enum en;
	memset(&en, 0, sizeof en);
	en.nloops = nloops;
	en.loops = loops;
	en.budget = budget;
	en.visit = visit_exact;
	en.arg = &x;
	enum_loops(&en, 0);
	if (en.failed)
		return false;
	*exact = x.exact;
	*tight = x.tight;
	*witness = x.tight ? x.witness : x.tight_witness;
	return true;
}
