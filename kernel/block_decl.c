/* kernel/block_decl.c — a block's T.reads / T.writes against what it
 * really accesses. At parse time every access of a buffer the block
 * declares must lie in one of its declared regions of that buffer: shown
 * with affine bounds over the ranges of the variables involved, an error
 * when some access is shown outside, a warning when neither can be shown
 * (declarations are information: no proof trusts them). After a rewrite
 * changed the block's statements, the printer declares the accesses again
 * from the statements themselves (block_access_points). */
#include "kernel/ir.h"

#include <string.h>

#define MAX_TERMS 16
#define MAX_RANGES 128

/* const + sum coef[i] * var[i] */
typedef struct Aff {
	int64_t c;
	int n;
	const Var *var[MAX_TERMS];
	int64_t coef[MAX_TERMS];
} Aff;

static bool aff_add_term(Aff *a, const Var *v, int64_t k)
{
	for (int i = 0; i < a->n; i++)
		if (a->var[i] == v) {
			if (__builtin_add_overflow(a->coef[i], k, &a->coef[i]))
				return false;
			return true;
		}
	if (a->n == MAX_TERMS)
		return false;
	a->var[a->n] = v;
	a->coef[a->n++] = k;
	return true;
}

/* a += k * b */
static bool aff_axpy(Aff *a, int64_t k, const Aff *b)
{
	int64_t t;
	if (__builtin_mul_overflow(k, b->c, &t) || __builtin_add_overflow(a->c, t, &a->c))
		return false;
	for (int i = 0; i < b->n; i++)
		if (__builtin_mul_overflow(k, b->coef[i], &t) || !aff_add_term(a, b->var[i], t))
			return false;
	return true;
}

static bool linearize(const Expr *e, Aff *out)
{
	memset(out, 0, sizeof *out);
	Aff x, y;
	switch (e->kind) {
	case EX_INT:
		out->c = e->u.ival;
		return e->dtype != DT_BOOL;
	case EX_VAR: return aff_add_term(out, e->u.var, 1);
	case EX_NEG: return linearize(e->u.un.a, &x) && aff_axpy(out, -1, &x);
	case EX_CAST:
		return dtype_is_int(e->dtype) && dtype_is_int(e->u.un.a->dtype) &&
		       dtype_bits(e->dtype) >= dtype_bits(e->u.un.a->dtype) &&
		       linearize(e->u.un.a, out);
	case EX_BIN:
		if (!linearize(e->u.bin.a, &x) || !linearize(e->u.bin.b, &y))
			return false;
		switch (e->u.bin.op) {
		case OP_ADD: return aff_axpy(out, 1, &x) && aff_axpy(out, 1, &y);
		case OP_SUB: return aff_axpy(out, 1, &x) && aff_axpy(out, -1, &y);
		case OP_MUL:
			if (x.n == 0)
				return aff_axpy(out, x.c, &y);
			if (y.n == 0)
				return aff_axpy(out, y.c, &x);
			return false;
		case OP_SHL: case OP_SHR: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX:
		case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		case OP_AND: case OP_OR: case OP_COUNT:
			return false;
		}
		return false;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_LOAD: case EX_UNDEF:
	case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	return false;
}

/* The integer range [lo, hi] of a variable, as expressions. */
typedef struct Ranges {
	int n;
	const Var *var[MAX_RANGES];
	const Expr *lo[MAX_RANGES], *hi_excl[MAX_RANGES]; /* v in [lo, hi_excl) */
} Ranges;

static void ranges_push(Ranges *r, const Var *v, const Expr *lo, const Expr *hi_excl)
{
	if (r->n < MAX_RANGES) {
		r->var[r->n] = v;
		r->lo[r->n] = lo;
		r->hi_excl[r->n++] = hi_excl;
	}
}

/* 1: a >= 0 for every value of its variables in their ranges; 0: not
 * shown. Each ranged variable is replaced by its bound on the side that
 * makes a smallest (its min for a positive coefficient, max - 1 for a
 * negative one); what is left must be a constant. */
static bool aff_nonneg(Aff a, const Ranges *r)
{
	for (int round = 0; round < 32; round++) {
		int k = -1;
		for (int i = 0; i < a.n && k < 0; i++)
			if (a.coef[i] != 0)
				k = i;
		if (k < 0)
			return a.c >= 0;
		int j = r->n - 1;
		while (j >= 0 && r->var[j] != a.var[k])
			j--;
		if (j < 0)
			return false;
		int64_t coef = a.coef[k];
		a.coef[k] = 0;
		Aff b;
		if (coef > 0) {
			if (!linearize(r->lo[j], &b) || !aff_axpy(&a, coef, &b))
				return false;
		} else {
			if (!linearize(r->hi_excl[j], &b) || !aff_axpy(&a, coef, &b))
				return false;
			if (__builtin_add_overflow(a.c, -coef, &a.c)) /* hi_excl - 1 */
				return false;
		}
	}
	return false;
}

/* 1 covered, 0 not shown either way, -1 shown outside (a point index
 * differs by a nonzero constant, or the index lies past a bound for every
 * value). */
static int dim_covered(const Expr *e, const Expr *lo, const Expr *hi, const Ranges *r)
{
	if (!hi && ir_expr_equal(e, lo))
		return 1;
	Aff ae, al, d;
	if (!linearize(e, &ae) || !linearize(lo, &al))
		return 0;
	memset(&d, 0, sizeof d);
	if (!aff_axpy(&d, 1, &ae) || !aff_axpy(&d, -1, &al))
		return 0;
	if (!hi) {
		bool zero = true;
		for (int i = 0; i < d.n; i++)
			zero = zero && d.coef[i] == 0;
		if (zero)
			return d.c == 0 ? 1 : -1;
		return 0;
	}
	Aff ah, u, below, above;
	if (!linearize(hi, &ah))
		return 0;
	memset(&u, 0, sizeof u); /* hi - 1 - e */
	if (!aff_axpy(&u, 1, &ah) || !aff_axpy(&u, -1, &ae) || __builtin_sub_overflow(u.c, 1, &u.c))
		return 0;
	if (aff_nonneg(d, r) && aff_nonneg(u, r))
		return 1;
	/* outside for every value: e - lo <= -1, or e - hi >= 0 */
	memset(&below, 0, sizeof below);
	memset(&above, 0, sizeof above);
	if (aff_axpy(&below, -1, &d) && !__builtin_sub_overflow(below.c, 1, &below.c) &&
	    aff_nonneg(below, r))
		return -1;
	if (aff_axpy(&above, -1, &u) && !__builtin_sub_overflow(above.c, 1, &above.c) &&
	    aff_nonneg(above, r))
		return -1;
	return 0;
}

/* ---------- accesses ---------- */

typedef struct Walk {
	Arena *a;
	const BlockInfo *info;
	DiagList *d;
	Ranges r;
	const Buffer *local[64];
	int nlocal;
	bool ok;
} Walk;

static bool is_local(const Walk *w, const Buffer *b)
{
	for (int i = 0; i < w->nlocal; i++)
		if (w->local[i] == b)
			return true;
	return false;
}

static void check_access(Walk *w, const Buffer *buf, int nidx, Expr *const *idx, Span sp,
			 bool write)
{
	const BlockInfo *info = w->info;
	if (is_local(w, buf) || !(write ? info->has_writes : info->has_reads))
		return;
	int nr = write ? info->nwrites : info->nreads;
	const BufRegion *rs = write ? info->writes : info->reads;
	int declared = 0, best = -1;
	const BufRegion *first = NULL;
	for (int i = 0; i < nr; i++) {
		const BufRegion *g = &rs[i];
		if (g->buf != buf || g->ndim != nidx)
			continue;
		declared++;
		if (!first)
			first = g;
		int v = 1;
		for (int k = 0; k < nidx && v != -1; k++) {
			int c = dim_covered(idx[k], g->lo[k], g->hi[k], &w->r);
			v = c < v ? c : v;
		}
		best = v > best ? v : best;
	}
	if (!declared || best == 1)
		return;
	const char *what = write ? "T.writes" : "T.reads";
	if (best == -1) {
		diag_add(w->d, DIAG_ERROR, sp, "%s declares %s at line %d but misses this %s of "
			 "%s", what, buf->name, first->span.line, write ? "write" : "read",
			 buf->name);
		w->ok = false;
		return;
	}
	diag_add(w->d, DIAG_WARNING, sp, "cannot show that %s (line %d) covers this %s of %s; "
		 "the declaration is kept as information only", what, first->span.line,
		 write ? "write" : "read", buf->name);
}

static void walk_expr(Walk *w, const Expr *e)
{
	if (e->kind == EX_LOAD)
		check_access(w, e->u.load.buf, e->u.load.nidx, e->u.load.idx, e->span, false);
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		walk_expr(w, expr_child(e, i));
}

static void walk_stmt(Walk *w, const Stmt *s)
{
	if (!s)
		return;
	int mark = w->r.n, lmark = w->nlocal;
	int ne = stmt_nexprs(s);
	for (int i = 0; i < ne; i++)
		walk_expr(w, stmt_expr(s, i));
	switch (s->kind) {
	case ST_STORE:
		check_access(w, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->span, true);
		break;
	case ST_FOR:
		ranges_push(&w->r, s->u.loop.var, s->u.loop.min,
			    ir_bin(w->a, OP_ADD, s->u.loop.min, s->u.loop.extent, s->span));
		break;
	case ST_ALLOC:
		if (w->nlocal < 64)
			w->local[w->nlocal++] = s->u.alloc.buf;
		break;
	case ST_SEQ: case ST_IF: case ST_ASSUME: case ST_EVAL: case ST_BLOCK: case ST_LET:
	case ST_PASS: case ST_COUNT:
		break;
	}
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		walk_stmt(w, stmt_child(s, i));
	w->r.n = mark;
	w->nlocal = lmark;
}

bool block_check_decls(Arena *a, const Stmt *block, int nouter, Var *const *outer_vars,
		       Expr *const *outer_min, Expr *const *outer_ext, DiagList *d)
{
	const BlockInfo *info = block->u.block.info;
	BlockView v;
	if (!info || !(info->has_reads || info->has_writes) || !block_view(a, block, &v))
		return true;
	Walk w;
	memset(&w, 0, sizeof w);
	w.a = a;
	w.info = info;
	w.d = d;
	w.ok = true;
	for (int i = 0; i < nouter; i++)
		ranges_push(&w.r, outer_vars[i], outer_min[i],
			    ir_bin(a, OP_ADD, outer_min[i], outer_ext[i], (Span){0}));
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		ranges_push(&w.r, it->var, it->dom_min,
			    ir_bin(a, OP_ADD, it->dom_min, it->dom_extent, (Span){0}));
	}
	walk_stmt(&w, v.init);
	walk_stmt(&w, v.inner);
	return w.ok;
}

/* ---------- declarations again after a rewrite ---------- */

typedef struct Points {
	Arena *a;
	const Var *bound[64]; /* variables bound inside the block's statements */
	int nbound;
	const Buffer *local[64];
	int nlocal;
	bool ok;
	BufRegion *rs[2]; /* reads, writes */
	int n[2], cap[2];
} Points;

static bool uses_bound(const Points *pt, const Expr *e)
{
	for (int i = 0; i < pt->nbound; i++)
		if (ir_expr_uses_var(e, pt->bound[i]))
			return true;
	return false;
}

static void point(Points *pt, Buffer *buf, int nidx, Expr **idx, Span sp, int w)
{
	for (int i = 0; i < pt->nlocal; i++)
		if (pt->local[i] == buf)
			return;
	for (int k = 0; k < nidx; k++)
		if (uses_bound(pt, idx[k])) {
			pt->ok = false;
			return;
		}
	for (int i = 0; i < pt->n[w]; i++) {
		const BufRegion *g = &pt->rs[w][i];
		bool same = g->buf == buf;
		for (int k = 0; same && k < nidx; k++)
			same = ir_expr_equal(g->lo[k], idx[k]);
		if (same)
			return;
	}
	Expr **his = arena_alloc(pt->a, sizeof(Expr *) * (size_t)(nidx + 1));
	BufRegion g = {buf, nidx, idx, his, sp};
	VEC_PUSH(pt->a, pt->rs[w], pt->n[w], pt->cap[w], g);
}

static void points_expr(Points *pt, const Expr *e)
{
	if (e->kind == EX_LOAD)
		point(pt, e->u.load.buf, e->u.load.nidx, e->u.load.idx, e->span, 0);
	if (e->kind == EX_OPAQUE)
		pt->ok = false; /* it may access any cell: no point says it */
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		points_expr(pt, expr_child(e, i));
}

static void points_stmt(Points *pt, const Stmt *s)
{
	if (!s || !pt->ok)
		return;
	int bmark = pt->nbound, lmark = pt->nlocal;
	int ne = stmt_nexprs(s);
	for (int i = 0; i < ne; i++)
		points_expr(pt, stmt_expr(s, i));
	const Var *binds = s->kind == ST_FOR ? s->u.loop.var : s->kind == ST_LET ? s->u.let.var : NULL;
	if (binds) {
		if (pt->nbound == 64) {
			pt->ok = false;
			return;
		}
		pt->bound[pt->nbound++] = binds;
	}
	if (s->kind == ST_ALLOC && pt->nlocal < 64)
		pt->local[pt->nlocal++] = s->u.alloc.buf;
	if (s->kind == ST_STORE)
		point(pt, s->u.store.buf, s->u.store.nidx, s->u.store.idx, s->span, 1);
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		points_stmt(pt, stmt_child(s, i));
	pt->nbound = bmark;
	pt->nlocal = lmark;
}

bool block_access_points(Arena *a, const BlockView *v, int *nreads, BufRegion **reads,
			 int *nwrites, BufRegion **writes)
{
	Points pt;
	memset(&pt, 0, sizeof pt);
	pt.a = a;
	pt.ok = true;
	if (v->where)
		points_expr(&pt, v->where);
	points_stmt(&pt, v->init);
	points_stmt(&pt, v->inner);
	*nreads = pt.n[0];
	*reads = pt.rs[0];
	*nwrites = pt.n[1];
	*writes = pt.rs[1];
	return pt.ok;
}

/* ---------- iter var bindings inside their domains ---------- */

/* The exact range [lo, hi] of an affine expression over variables whose
 * ranges are literal (a box: every corner is reached). */
static bool aff_exact_range(const Aff *a, const Ranges *r, int64_t *lo, int64_t *hi)
{
	int64_t l = a->c, h = a->c;
	for (int i = 0; i < a->n; i++) {
		if (a->coef[i] == 0)
			continue;
		int j = r->n - 1;
		while (j >= 0 && r->var[j] != a->var[i])
			j--;
		if (j < 0 || r->lo[j]->kind != EX_INT || r->hi_excl[j]->kind != EX_BIN)
			return false;
		const Expr *ext = r->hi_excl[j]->u.bin.b; /* lo + extent, as pushed */
		if (ext->kind != EX_INT || ext->u.ival < 1)
			return false;
		int64_t vlo = r->lo[j]->u.ival, vhi, x, y;
		if (__builtin_add_overflow(vlo, ext->u.ival - 1, &vhi) ||
		    __builtin_mul_overflow(a->coef[i], vlo, &x) ||
		    __builtin_mul_overflow(a->coef[i], vhi, &y))
			return false;
		if (__builtin_add_overflow(l, x < y ? x : y, &l) ||
		    __builtin_add_overflow(h, x < y ? y : x, &h))
			return false;
	}
	*lo = l;
	*hi = h;
	return true;
}

bool block_check_bindings(Arena *a, const Stmt *block, int nouter, Var *const *outer_vars,
			  Expr *const *outer_min, Expr *const *outer_ext, DiagList *d)
{
	const BlockInfo *info = block->u.block.info;
	BlockView v;
	if (!info || info->has_where || !block_view(a, block, &v))
		return true; /* under T.where a binding may leave its domain where it is false */
	Ranges r;
	memset(&r, 0, sizeof r);
	for (int i = 0; i < nouter; i++)
		ranges_push(&r, outer_vars[i], outer_min[i],
			    ir_bin(a, OP_ADD, outer_min[i], outer_ext[i], (Span){0}));
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		Aff e;
		int64_t lo, hi;
		if (it->dom_min->kind != EX_INT || it->dom_extent->kind != EX_INT ||
		    !linearize(v.bindings[k], &e) || !aff_exact_range(&e, &r, &lo, &hi))
			continue;
		int64_t dlo = it->dom_min->u.ival, dhi = dlo + it->dom_extent->u.ival;
		if (lo >= dlo && hi < dhi)
			continue;
		diag_add(d, DIAG_ERROR, v.bindings[k]->span.src ? v.bindings[k]->span : it->var->span,
			 "the binding of iter var '%s' reaches %lld, outside its domain [%lld, %lld)",
			 it->var->name, (long long)(lo < dlo ? lo : hi), (long long)dlo, (long long)dhi);
		return false;
	}
	return true;
}
