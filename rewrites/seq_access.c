/* rewrites/seq_access.c — sequential_buffer_access(block, buffer) (seed
 * 000, "Reorder Loops According to Buffer"): rewrite the loop nests that
 * access a buffer so they walk it in physical order, as a sequence of
 * steps each proven on its own:
 *   split (the i // c, i % c digits of an index; tile with an offset when
 *     the index is (i + b) // c: obligations tile.cover, tile.exact),
 *   fission (the statements a two-variable index does not involve move to
 *     their own loop: fission.no_conflict, for i > j: A(i), B(j) commute),
 *   reorder to the buffer's dimension order (reorder.no_conflict),
 *   simplify of the nest's indices (simplify.equal).
 * An index that needs a skew of two loops is not supported yet and
 * rejects after its fissions are proven (seed 000's conv1d_cumsum is
 * rejected by the fission's refuted obligation). */
#include "rewrites/seq_access.h"
#include "rewrites/merge.h"

#include <string.h>

#include "kernel/analysis/arith.h"
#include "rewrites/attach.h"
#include "rewrites/layout.h"

#define MAX_DIMS SEQ_MAX_DIMS

static Span nospan(void) { return (Span){0}; }

/* ---------- naming loops ---------- */

typedef struct Count {
	const Stmt *target;
	const char *name;
	int k, found;
} Count;

static void count_loop(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Count *c = ud;
	(void)ctx;
	if (s->kind != ST_FOR || strcmp(s->u.loop.var->name, c->name) != 0)
		return;
	c->k++;
	if (s == c->target)
		c->found = c->k;
}

/* "x#k" for loop statement `loop` of f. */
static const char *loop_ref(Arena *a, const Func *f, const Stmt *loop)
{
	Count c = {loop, loop->u.loop.var->name, 0, 0};
	an_walk(a, f, count_loop, &c);
	return arena_printf(a, "%s#%d", c.name, c.found);
}

/* ---------- the reference access ---------- */

typedef struct Ref {
	int nidx;
	Expr *idx[MAX_DIMS];
	bool found;
} Ref;

static bool find_load(const Expr *e, const Buffer *b, Ref *r)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return false;
	case EX_LOAD:
		if (e->u.load.buf == b && e->u.load.nidx <= MAX_DIMS) {
			r->nidx = e->u.load.nidx;
			for (int i = 0; i < r->nidx; i++)
				r->idx[i] = e->u.load.idx[i];
			r->found = true;
			return true;
		}
		for (int i = 0; i < e->u.load.nidx; i++)
			if (find_load(e->u.load.idx[i], b, r))
				return true;
		return false;
	case EX_BIN: return find_load(e->u.bin.a, b, r) || find_load(e->u.bin.b, b, r);
	case EX_NOT: case EX_NEG: case EX_CAST: return find_load(e->u.un.a, b, r);
	case EX_SELECT:
		return find_load(e->u.sel.cond, b, r) || find_load(e->u.sel.a, b, r) ||
		       find_load(e->u.sel.b, b, r);
	case EX_LET: return find_load(e->u.let.value, b, r) || find_load(e->u.let.body, b, r);
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (find_load(e->u.call.args[i], b, r))
				return true;
		return false;
	case EX_OPAQUE:
		for (int i = 0; i < e->u.opq.nargs; i++)
			if (find_load(e->u.opq.args[i], b, r))
				return true;
		return false;
	case EX_COUNT: return false;
	}
	return false;
}

/* The first store to b in s (stores first: the written buffer decides),
 * else the first load; let variables on the way are substituted. */
typedef struct RefSearch {
	const Buffer *buf;
	bool want_store;
	Ref ref;
	int nlets;
	Var *let_vars[64];
	Expr *let_vals[64];
	Arena *a;
} RefSearch;

static void set_ref(RefSearch *rs, int n, Expr **idx)
{
	rs->ref.nidx = n;
	for (int i = 0; i < n; i++)
		rs->ref.idx[i] = ir_subst_expr(rs->a, idx[i], rs->nlets, rs->let_vars, rs->let_vals);
	rs->ref.found = true;
}

static void search(RefSearch *rs, const Stmt *s)
{
	if (rs->ref.found)
		return;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			search(rs, s->u.seq.items[i]);
		return;
	case ST_FOR: search(rs, s->u.loop.body); return;
	case ST_IF:
		if (!rs->want_store) {
			Ref r = {0};
			if (find_load(s->u.cond.cond, rs->buf, &r)) {
				set_ref(rs, r.nidx, r.idx);
				return;
			}
		}
		search(rs, s->u.cond.then_s);
		if (s->u.cond.else_s)
			search(rs, s->u.cond.else_s);
		return;
	case ST_STORE: {
		if (rs->want_store && s->u.store.buf == rs->buf && s->u.store.nidx <= MAX_DIMS) {
			set_ref(rs, s->u.store.nidx, s->u.store.idx);
			return;
		}
		if (rs->want_store)
			return;
		Ref r = {0};
		for (int i = 0; i < s->u.store.nidx && !r.found; i++)
			find_load(s->u.store.idx[i], rs->buf, &r);
		if (!r.found)
			find_load(s->u.store.value, rs->buf, &r);
		if (r.found)
			set_ref(rs, r.nidx, r.idx);
		return;
	}
	case ST_LET:
		if (rs->nlets < 64) {
			rs->let_vars[rs->nlets] = s->u.let.var;
			rs->let_vals[rs->nlets] = ir_subst_expr(rs->a, s->u.let.value, rs->nlets,
								rs->let_vars, rs->let_vals);
			rs->nlets++;
			search(rs, s->u.let.body);
			rs->nlets--;
		}
		return;
	case ST_ALLOC: search(rs, s->u.alloc.body); return;
	case ST_BLOCK: search(rs, s->u.block.body); return;
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

static bool reference_access(Arena *a, const Stmt *nest, const Buffer *b, Ref *out)
{
	for (int pass = 0; pass < 2; pass++) {
		RefSearch rs;
		memset(&rs, 0, sizeof rs);
		rs.buf = b;
		rs.want_store = pass == 0;
		rs.a = a;
		search(&rs, nest);
		if (rs.ref.found) {
			*out = rs.ref;
			return true;
		}
	}
	return false;
}

/* ---------- index structure ---------- */

typedef enum { DIM_CONST, DIM_VAR, DIM_DIV, DIM_MOD, DIM_MULTI, DIM_OTHER } DimKind;

typedef struct Dim {
	DimKind kind;
	Var *var;      /* DIM_VAR, DIM_DIV, DIM_MOD */
	int64_t off;   /* (var + off) // c, % c */
	int64_t c;
} Dim;

/* var + const, or var, or const. */
static bool var_plus(const Expr *e, Var **v, int64_t *off)
{
	int64_t k;
	if (e->kind == EX_VAR) {
		*v = e->u.var;
		*off = 0;
		return true;
	}
	if (e->kind == EX_BIN && (e->u.bin.op == OP_ADD || e->u.bin.op == OP_SUB) &&
	    e->u.bin.a->kind == EX_VAR && an_const_int(e->u.bin.b, &k)) {
		*v = e->u.bin.a->u.var;
		*off = e->u.bin.op == OP_ADD ? k : -k;
		return true;
	}
	if (e->kind == EX_BIN && e->u.bin.op == OP_ADD && e->u.bin.b->kind == EX_VAR &&
	    an_const_int(e->u.bin.a, &k)) {
		*v = e->u.bin.b->u.var;
		*off = k;
		return true;
	}
	return false;
}

static int count_vars(const Expr *e, Var **loopvars, int nloops, Var **first)
{
	int n = 0;
	for (int i = 0; i < nloops; i++)
		if (ir_expr_uses_var(e, loopvars[i])) {
			if (!n)
				*first = loopvars[i];
			n++;
		}
	return n;
}

static Dim classify(const Expr *e, Var **loopvars, int nloops)
{
	Dim d = {DIM_OTHER, NULL, 0, 0};
	Var *first = NULL;
	int nv = count_vars(e, loopvars, nloops, &first);
	if (nv == 0) {
		d.kind = DIM_CONST;
		return d;
	}
	if (nv > 1) {
		d.kind = DIM_MULTI;
		return d;
	}
	int64_t c;
	if (var_plus(e, &d.var, &d.off) && d.off == 0) {
		d.kind = DIM_VAR;
		return d;
	}
	if (e->kind == EX_BIN && (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD) &&
	    an_const_int(e->u.bin.b, &c) && c > 1 && var_plus(e->u.bin.a, &d.var, &d.off)) {
		d.kind = e->u.bin.op == OP_FLOORDIV ? DIM_DIV : DIM_MOD;
		d.c = c;
		return d;
	}
	return d;
}

/* ---------- the loops of a nest ---------- */

typedef struct NestLoops {
	int n;
	Stmt *loops[AN_MAX_DEPTH];
	Var *vars[AN_MAX_DEPTH];
} NestLoops;

static void gather_loops(Stmt *s, NestLoops *nl)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			gather_loops(s->u.seq.items[i], nl);
		return;
	case ST_FOR:
		if (nl->n < AN_MAX_DEPTH) {
			nl->loops[nl->n] = s;
			nl->vars[nl->n++] = s->u.loop.var;
		}
		gather_loops(s->u.loop.body, nl);
		return;
	case ST_IF:
		gather_loops(s->u.cond.then_s, nl);
		if (s->u.cond.else_s)
			gather_loops(s->u.cond.else_s, nl);
		return;
	case ST_ALLOC: gather_loops(s->u.alloc.body, nl); return;
	case ST_BLOCK: gather_loops(s->u.block.body, nl); return;
	case ST_LET: gather_loops(s->u.let.body, nl); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

static Stmt *loop_of(const NestLoops *nl, const Var *v)
{
	for (int i = 0; i < nl->n; i++)
		if (nl->vars[i] == v)
			return nl->loops[i];
	return NULL;
}

/* ---------- tile with an offset ---------- */

/* for x in [lo, lo+N): S(x) -> for xo in [lo_o, hi_o): for xi in [0, c):
 * [if lo <= c*xo + xi - b < lo + N:] S(c*xo + xi - b). The map (xo, xi)
 * -> c*xo + xi - b with 0 <= xi < c is increasing in (xo, xi) order, so
 * the iterations that pass the guard are the old ones in the old order;
 * tile.cover proves every old iteration has its (xo, xi), tile.exact that
 * a dropped guard always held. */
static RwStatus rw_tile(RwCtx *c, Stmt *loop, int64_t b, int64_t f, const char *on,
			const char *in)
{
	Arena *a = c->arena;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, loop, &sc))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "tile: loop not found");
	int64_t lo, n;
	if (!an_const_int(loop->u.loop.min, &lo) || !an_const_int(loop->u.loop.extent, &n))
		return rw_fail(c, RW_UNSUPPORTED, loop->span,
			       "sequential_buffer_access: an index with an offset needs constant loop bounds");
	Var *x = loop->u.loop.var;
	DType t = x->dtype;
	int bits = dtype_bits(t);
	int64_t tmax = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
	int64_t hi_pos, top;
	/* every value the new loops compute must fit the loop's dtype */
	if (__builtin_add_overflow(lo, n, &hi_pos) || __builtin_add_overflow(hi_pos, b, &top) ||
	    __builtin_add_overflow(top, f, &top) || top > tmax || lo + b < -tmax)
		return rw_fail(c, RW_PRECONDITION, loop->span,
			       "sequential_buffer_access: tiling loop %s by %lld would overflow %s",
			       x->name, (long long)f, dtype_name(t));
	int64_t olo = (lo + b) >= 0 ? (lo + b) / f : -((-(lo + b) + f - 1) / f);
	int64_t last = lo + n - 1 + b;
	int64_t ohi = (last >= 0 ? last / f : -((-last + f - 1) / f)) + 1;
	if (n <= 0)
		ohi = olo;
	bool exact = (lo + b - olo * f) == 0 && (lo + n + b - ohi * f) == 0;
	Var *xo = ir_var(a, on, t, loop->span), *xi = ir_var(a, in, t, loop->span);
	Expr *rel = ir_add(a, ir_mul(a, ir_int(a, f, t, nospan()), ir_varref(a, xo, nospan())),
			   ir_varref(a, xi, nospan()));
	Expr *xval = b ? ir_bin(a, b > 0 ? OP_SUB : OP_ADD, rel, ir_int(a, b > 0 ? b : -b, t, nospan()),
				nospan())
		       : rel;
	Var *from[1] = {x};
	Expr *to[1] = {xval};
	Stmt *body = ir_subst_stmt(a, loop->u.loop.body, 1, from, to);
	Expr *guard = ir_and(a, ir_bin(a, OP_LE, ir_int(a, lo, t, nospan()), xval, nospan()),
			     ir_bin(a, OP_LT, xval, ir_int(a, lo + n, t, nospan()), nospan()));
	if (!exact)
		body = ir_if(a, guard, body, NULL, loop->span);
	Stmt *inner = ir_for(a, xi, ir_int(a, 0, t, nospan()), ir_int(a, f, t, nospan()),
			     FOR_SERIAL, body, loop->span);
	Stmt *outer = ir_for(a, xo, ir_int(a, olo, t, nospan()), ir_int(a, ohi - olo, t, nospan()),
			     loop->u.loop.kind == FOR_PARALLEL ? FOR_PARALLEL : FOR_SERIAL, inner,
			     loop->span);
	/* tile.cover: olo <= (x + b) // f < ohi for every old x */
	Expr *xr = ir_varref(a, x, nospan());
	Expr *q = ir_bin(a, OP_FLOORDIV, ir_add(a, xr, ir_int(a, b, t, nospan())),
			 ir_int(a, f, t, nospan()), nospan());
	Obligation *o = obligation_new(a, "tile.cover",
				       arena_printf(a, "every iteration of %s has its place in the tiles of %s, %s", x->name,
						    on, in),
				       0, NULL, 0, NULL,
				       ir_and(a, ir_bin(a, OP_LE, ir_int(a, olo, t, nospan()), q, nospan()),
					      ir_bin(a, OP_LT, q, ir_int(a, ohi, t, nospan()), nospan())),
				       loop->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, &sc);
	obligation_add_var(a, o, x);
	obligation_add_hyp(a, o, an_loop_range(a, loop, xr));
	oblist_push(a, &c->obs, o);
	if (exact) {
		/* tile.exact: the dropped guard holds on the whole tile range */
		o = obligation_new(a, "tile.exact",
				   arena_printf(a, "the tiles of %s cover exactly its range", x->name), 0,
				   NULL, 0, NULL, guard, loop->span);
		o->rewrite = c->desc;
		rw_add_context_hyps(c, o, &sc);
		obligation_add_var(a, o, xo);
		obligation_add_var(a, o, xi);
		obligation_add_hyp(a, o, an_loop_range(a, outer, ir_varref(a, xo, nospan())));
		obligation_add_hyp(a, o, an_loop_range(a, inner, ir_varref(a, xi, nospan())));
		oblist_push(a, &c->obs, o);
	}
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, outer));
	return RW_OK;
}

/* ---------- fission ---------- */

/* for x: s_0 ... s_k | s_k+1 ... -> for x: s_0 ... s_k; for x: s_k+1 ...
 * (rewrites/fission.c, fission.no_conflict) */
static RwStatus rw_fission_after(RwCtx *c, Stmt *loop, int k, Stmt **second_loop)
{
	StmtCtx sc;
	if (!an_find_stmt(c->arena, c->func, loop, &sc))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "fission: loop not found");
	return rw_fission_at(c, &sc, k, second_loop);
}

/* ---------- pure integer lets, inlined ---------- */

/* `x = e; S` -> S[x := e] for integer e without loads: e has no effect and
 * reads no state, so every use of x sees the same value either way (this
 * needs no obligation; it is what a let means). */
static Stmt *inline_lets(Arena *a, Stmt *s, int *count)
{
	switch (s->kind) {
	case ST_SEQ: {
		Stmt **items = NULL;
		for (int i = 0; i < s->u.seq.n; i++) {
			Stmt *x = inline_lets(a, s->u.seq.items[i], count);
			if (x != s->u.seq.items[i] && !items) {
				items = arena_alloc(a, sizeof(Stmt *) * (size_t)s->u.seq.n);
				memcpy(items, s->u.seq.items, sizeof(Stmt *) * (size_t)i);
			}
			if (items)
				items[i] = x;
		}
		return items ? ir_seq(a, s->u.seq.n, items, s->span) : s;
	}
	case ST_FOR: {
		Stmt *b = inline_lets(a, s->u.loop.body, count);
		return b == s->u.loop.body ? s
					   : ir_for(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent,
						    s->u.loop.kind, b, s->span);
	}
	case ST_IF: {
		Stmt *t = inline_lets(a, s->u.cond.then_s, count);
		Stmt *e = s->u.cond.else_s ? inline_lets(a, s->u.cond.else_s, count) : NULL;
		return t == s->u.cond.then_s && e == s->u.cond.else_s ? s
								       : ir_if(a, s->u.cond.cond, t, e, s->span);
	}
	case ST_LET: {
		Stmt *b = inline_lets(a, s->u.let.body, count);
		/* each use of an inlined T.undef() would be its own value */
		if (dtype_is_int(s->u.let.var->dtype) && !an_expr_has_load(s->u.let.value) &&
		    !an_expr_has_undef(s->u.let.value)) {
			(*count)++;
			Var *v = s->u.let.var;
			Expr *val = s->u.let.value;
			return ir_subst_stmt(a, b, 1, &v, &val);
		}
		return b == s->u.let.body ? s : ir_letstmt(a, s->u.let.var, s->u.let.value, b, s->span);
	}
	case ST_BLOCK: {
		Stmt *b = inline_lets(a, s->u.block.body, count);
		return ir_block_with(a, s, b);
	}
	case ST_ALLOC: case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return s;
	}
	return s;
}

/* ---------- skew ---------- */

/* for x in [xlo, xlo+nx): for y in [ylo, ylo+ny): S(x, y)  ->
 *   for z in [0, ze): for y in [ylo, ylo+ny):
 *     if xlo <= X(z, y) < xlo + nx: S(X(z, y), y)
 * with z = ax*x + ay*y + b - lo_e, ax = +-1, so X(z, y) = ax*(z + lo_e -
 * b - ay*y) and (x, y) <-> (z, y) is a bijection. The order of iterations
 * changes from (x, y) to (z, y): skew.no_conflict asks, as reorder does,
 * that every pair whose order flips commutes (reductions re-associate only
 * in real mode); skew.cover that every old iteration has its z. */
/* goal over the old loops x, y of the nest xl { yl { ... } } */
static void skew_obligation(RwCtx *c, const StmtCtx *sc, const char *kind, const char *statement,
			    Expr *goal, const Stmt *xl, const Stmt *yl)
{
	Arena *a = c->arena;
	Obligation *o = obligation_new(a, kind, statement, 0, NULL, 0, NULL, goal, xl->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, sc);
	const Stmt *loops[2] = {xl, yl};
	for (int i = 0; i < 2; i++) {
		Var *v = loops[i]->u.loop.var;
		obligation_add_var(a, o, v);
		obligation_add_hyp(a, o, an_loop_range(a, loops[i], ir_varref(a, v, nospan())));
	}
	oblist_push(a, &c->obs, o);
}

static RwStatus rw_skew(RwCtx *c, Stmt *xl, int64_t ax, int64_t ay, int64_t b, const char *zname)
{
	Arena *a = c->arena;
	StmtCtx sc;
	if (!an_find_stmt(a, c->func, xl, &sc))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "skew: loop not found");
	Stmt *yl = xl->u.loop.body;
	int64_t xlo, nx, ylo, ny;
	if (yl->kind != ST_FOR || !an_const_int(xl->u.loop.min, &xlo) ||
	    !an_const_int(xl->u.loop.extent, &nx) || !an_const_int(yl->u.loop.min, &ylo) ||
	    !an_const_int(yl->u.loop.extent, &ny) || nx <= 0 || ny <= 0 || (ax != 1 && ax != -1))
		return rw_fail(c, RW_UNSUPPORTED, xl->span,
			       "sequential_buffer_access: skewing loops %s and %s needs a perfect nest with constant bounds and a unit coefficient",
			       xl->u.loop.var->name, yl->kind == ST_FOR ? yl->u.loop.var->name : "?");
	Var *x = xl->u.loop.var, *y = yl->u.loop.var;
	DType t = x->dtype;
	int64_t corners[4] = {ax * xlo + ay * ylo, ax * xlo + ay * (ylo + ny - 1),
			      ax * (xlo + nx - 1) + ay * ylo, ax * (xlo + nx - 1) + ay * (ylo + ny - 1)};
	int64_t lo_e = corners[0], hi_e = corners[0];
	for (int i = 1; i < 4; i++) {
		if (corners[i] < lo_e) lo_e = corners[i];
		if (corners[i] > hi_e) hi_e = corners[i];
	}
	int64_t ze = hi_e - lo_e + 1;
	int bits = dtype_bits(t);
	int64_t tmax = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
	if (ze > tmax / 4 || lo_e < -tmax / 4 || hi_e > tmax / 4)
		return rw_fail(c, RW_PRECONDITION, xl->span, "skew: the new range would overflow %s",
			       dtype_name(t));
	lo_e += b; /* of e = ax*x + ay*y + b */
	Var *z = ir_var(a, zname, t, xl->span);
	Expr *zr = ir_varref(a, z, nospan()), *yr = ir_varref(a, y, nospan());
	/* X(z, y) = ax * (z + lo_e - b - ay*y) */
	Expr *inner = ir_add(a, zr, ir_int(a, lo_e - b, t, nospan()));
	inner = ir_sub(a, inner, ir_mul(a, ir_int(a, ay, t, nospan()), yr));
	Expr *xval = ax == 1 ? inner : ir_sub(a, ir_int(a, 0, t, nospan()), inner);
	Simplifier simp = {a, NULL, NULL, c->float_mode, false, NULL};
	Bounds none;
	memset(&none, 0, sizeof none);
	simp.bounds = &none;
	xval = arith_simplify(&simp, xval);
	Var *from[1] = {x};
	Expr *to[1] = {xval};
	Stmt *body = ir_subst_stmt(a, yl->u.loop.body, 1, from, to);
	Expr *guard = ir_and(a, ir_bin(a, OP_LE, ir_int(a, xlo, t, nospan()), xval, nospan()),
			     ir_bin(a, OP_LT, xval, ir_int(a, xlo + nx, t, nospan()), nospan()));
	Stmt *ny_loop = ir_for(a, y, yl->u.loop.min, yl->u.loop.extent, FOR_SERIAL,
			       ir_if(a, guard, body, NULL, xl->span), yl->span);
	Stmt *nz_loop = ir_for(a, z, ir_int(a, 0, t, nospan()), ir_int(a, ze, t, nospan()),
			       FOR_SERIAL, ny_loop, xl->span);
	/* skew.cover: 0 <= ax*x + ay*y + b - lo_e < ze on the old domain */
	Expr *xr = ir_varref(a, x, nospan());
	Expr *zv = ir_sub(a, ir_add(a, ir_add(a, ir_mul(a, ir_int(a, ax, t, nospan()), xr),
					      ir_mul(a, ir_int(a, ay, t, nospan()), yr)),
				    ir_int(a, b, t, nospan())),
			  ir_int(a, lo_e, t, nospan()));
	skew_obligation(c, &sc, "skew.cover",
			arena_printf(a, "every iteration of loops %s, %s has its place in the skewed loop %s",
				     x->name, y->name, zname),
			ir_and(a, ir_bin(a, OP_LE, ir_int(a, 0, t, nospan()), zv, nospan()),
			       ir_bin(a, OP_LT, zv, ir_int(a, ze, t, nospan()), nospan())),
			xl, yl);
	/* skew.inverse: the body's x, rewritten by the (untrusted) simplifier
	 * as xval(z, y), is x again at the place of (x, y) */
	Var *zfrom[1] = {z};
	Expr *zto[1] = {zv};
	skew_obligation(c, &sc, "skew.inverse",
			arena_printf(a, "the skewed body recovers %s from %s and %s", x->name, zname, y->name),
			ir_bin(a, OP_EQ, ir_subst_expr(a, xval, 1, zfrom, zto), xr, nospan()), xl, yl);
	/* skew.no_conflict: p before q in (x, y) order and after it in (z, y)
	 * order must commute */
	Var *x1 = an_fresh_var(a, x, "_p"), *y1 = an_fresh_var(a, y, "_p");
	Var *x2 = an_fresh_var(a, x, "_q"), *y2 = an_fresh_var(a, y, "_q");
	Expr *X1 = ir_varref(a, x1, nospan()), *Y1 = ir_varref(a, y1, nospan());
	Expr *X2 = ir_varref(a, x2, nospan()), *Y2 = ir_varref(a, y2, nospan());
	Obligation *base = obligation_new(a, "skew.no_conflict", "", 0, NULL, 0, NULL,
					  ir_bool(a, true), xl->span);
	rw_add_context_hyps(c, base, &sc);
	Var *vs[4] = {x1, y1, x2, y2};
	for (int i = 0; i < 4; i++)
		obligation_add_var(a, base, vs[i]);
	obligation_add_hyp(a, base, an_loop_range(a, xl, X1));
	obligation_add_hyp(a, base, an_loop_range(a, xl, X2));
	obligation_add_hyp(a, base, an_loop_range(a, yl, Y1));
	obligation_add_hyp(a, base, an_loop_range(a, yl, Y2));
	Expr *old_lt = ir_or(a, ir_bin(a, OP_LT, X1, X2, nospan()),
			     ir_and(a, ir_bin(a, OP_EQ, X1, X2, nospan()), ir_bin(a, OP_LT, Y1, Y2, nospan())));
	Expr *z1 = ir_add(a, ir_mul(a, ir_int(a, ax, t, nospan()), X1), ir_mul(a, ir_int(a, ay, t, nospan()), Y1));
	Expr *z2 = ir_add(a, ir_mul(a, ir_int(a, ax, t, nospan()), X2), ir_mul(a, ir_int(a, ay, t, nospan()), Y2));
	Expr *new_gt = ir_or(a, ir_bin(a, OP_LT, z2, z1, nospan()),
			     ir_and(a, ir_bin(a, OP_EQ, z2, z1, nospan()), ir_bin(a, OP_LT, Y2, Y1, nospan())));
	obligation_add_hyp(a, base, old_lt);
	obligation_add_hyp(a, base, new_gt);
	Buffer **vol;
	int nvol = an_written_buffers(a, xl, &vol);
	Var *orig[2] = {x, y};
	Expr *p[2] = {X1, Y1}, *q[2] = {X2, Y2};
	AccessList ap, aq;
	memset(&ap, 0, sizeof ap);
	memset(&aq, 0, sizeof aq);
	an_collect_accesses(c->arena, yl->u.loop.body, 2, orig, p, nvol, vol, &ap);
	an_collect_accesses(c->arena, yl->u.loop.body, 2, orig, q, nvol, vol, &aq);
	rw_commute_obligations(c, "skew.no_conflict",
			       "iterations whose order the skew swaps commute", base, &ap, &aq, true);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, nz_loop));
	return RW_OK;
}

/* ---------- the nests in scope ---------- */

static void outer_loops(Stmt *s, const Buffer *b, SeqNests *out)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			outer_loops(s->u.seq.items[i], b, out);
		return;
	case ST_FOR:
		if (!an_is_fact_loop(s) && rw_stmt_accesses(s, b, false) && out->n < 64)
			out->items[out->n++] = s;
		return;
	case ST_IF:
		outer_loops(s->u.cond.then_s, b, out);
		if (s->u.cond.else_s)
			outer_loops(s->u.cond.else_s, b, out);
		return;
	case ST_ALLOC: outer_loops(s->u.alloc.body, b, out); return;
	case ST_BLOCK: outer_loops(s->u.block.body, b, out); return;
	case ST_LET: outer_loops(s->u.let.body, b, out); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

Buffer *rw_seq_buffer(const Func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && strcmp(f->params[i].buf->name, name) == 0)
			return f->params[i].buf;
	Buffer *found = NULL;
	const Stmt *stack[256];
	int top = 0;
	stack[top++] = f->body;
	while (top && !found) {
		const Stmt *s = stack[--top];
		switch (s->kind) {
		case ST_SEQ:
			for (int i = 0; i < s->u.seq.n && top < 256; i++)
				stack[top++] = s->u.seq.items[i];
			break;
		case ST_FOR: stack[top++] = s->u.loop.body; break;
		case ST_IF:
			stack[top++] = s->u.cond.then_s;
			if (s->u.cond.else_s && top < 256)
				stack[top++] = s->u.cond.else_s;
			break;
		case ST_ALLOC:
			if (strcmp(s->u.alloc.buf->name, name) == 0)
				found = s->u.alloc.buf;
			stack[top++] = s->u.alloc.body;
			break;
		case ST_BLOCK: stack[top++] = s->u.block.body; break;
		case ST_LET: stack[top++] = s->u.let.body; break;
		case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
			break;
		}
	}
	return found;
}

void rw_seq_nests(Stmt *scope, const Buffer *b, SeqNests *out)
{
	memset(out, 0, sizeof *out);
	outer_loops(scope, b, out);
}

/* ---------- the next step on one nest ---------- */

/* Step 1 for index i of two loop variables: isolate the statement that
 * holds the access in its own copy of the index's outermost loop, or, in
 * a perfect nest x { y { S } }, skew to (z, y) with z following the
 * index. */
static SeqStepKind plan_skew(Arena *a, const Ref *ref, int i, Stmt *outer, const Buffer *buf,
			     SeqStep *out)
{
	Stmt *inner = outer->u.loop.body;
	Var *xy[2] = {outer->u.loop.var, inner->kind == ST_FOR ? inner->u.loop.var : NULL};
	Expr *e = ref->idx[i];
	Expr *lin = e->kind == EX_BIN && (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD)
			    ? e->u.bin.a : e;
	if (!xy[1] || !arith_linear(lin, 2, xy, out->coef, &out->off) || !out->coef[0] ||
	    !out->coef[1]) {
		out->why = arena_printf(a, "walking %s sequentially needs index %d to be linear in two perfectly nested loops",
					buf->name, i);
		return out->kind = SEQ_STEP_UNSUPPORTED;
	}
	const char *zname = buf->layout && buf->layout->nvars == ref->nidx - 1
				    ? buf->layout->vars[0]->name : "z";
	if (buf->layout && buf->layout->nvars >= 1) {
		/* name the walk after the logical index it follows */
		const Layout *l0 = buf->layout;
		while (l0->logical->layout)
			l0 = l0->logical->layout;
		zname = l0->vars[0]->name;
	}
	out->name = zname;
	return out->kind = SEQ_STEP_SKEW;
}

static SeqStepKind plan_multi(Arena *a, const Ref *ref, int i, const NestLoops *nl,
			      const Buffer *buf, SeqStep *out)
{
	/* the outermost loop of the index and its body */
	Stmt *outer = NULL;
	for (int j = 0; j < nl->n && !outer; j++)
		if (ir_expr_uses_var(ref->idx[i], nl->vars[j]))
			outer = nl->loops[j];
	Stmt *body = outer->u.loop.body;
	int holder = -1;
	if (body->kind == ST_SEQ)
		for (int j = 0; j < body->u.seq.n && holder < 0; j++)
			if (rw_stmt_accesses(body->u.seq.items[j], buf, false))
				holder = j;
	out->loop = outer;
	if (holder > 0) {
		/* continue with the second loop, which holds the access */
		out->after = holder - 1;
		out->follow_second = true;
		return out->kind = SEQ_STEP_FISSION;
	}
	if (body->kind == ST_SEQ && holder >= 0 && holder < body->u.seq.n - 1) {
		out->after = holder; /* the first loop holds it */
		return out->kind = SEQ_STEP_FISSION;
	}
	return plan_skew(a, ref, i, outer, buf, out);
}

/* Step 2 for index i, (x + b) // c: split (or tile) loop x by c; its
 * digit (x + b) % c must be an index too. */
static SeqStepKind plan_split(Arena *a, const Func *f, const Ref *ref, const Dim *dims, int i,
			      const NestLoops *nl, const Buffer *buf, SeqStep *out)
{
	bool paired = false;
	for (int j = 0; j < ref->nidx; j++)
		paired |= dims[j].kind == DIM_MOD && dims[j].var == dims[i].var &&
			  dims[j].c == dims[i].c && dims[j].off == dims[i].off;
	if (!paired) {
		out->why = arena_printf(a, "index %d of %s divides loop %s without the matching %% digit",
					i, buf->name, dims[i].var->name);
		return out->kind = SEQ_STEP_UNSUPPORTED;
	}
	Stmt *loop = loop_of(nl, dims[i].var);
	int64_t lo;
	out->loop = loop;
	out->factor = dims[i].c;
	out->off = dims[i].off;
	out->name = arena_printf(a, "%so", dims[i].var->name);
	out->inner_name = arena_printf(a, "%si", dims[i].var->name);
	if (dims[i].off == 0 && an_const_int(loop->u.loop.min, &lo) && lo == 0)
		out->loop_ref = loop_ref(a, f, loop);
	return out->kind = SEQ_STEP_SPLIT;
}

/* Step 3: the loops of the indices in the buffer's dimension order. */
static SeqStepKind plan_order(Arena *a, const Func *f, const Ref *ref, const Dim *dims,
			      const NestLoops *nl, SeqStep *out)
{
	int pos[MAX_DIMS];
	out->norder = 0;
	for (int i = 0; i < ref->nidx; i++) {
		if (dims[i].kind != DIM_VAR)
			continue;
		Stmt *l = loop_of(nl, dims[i].var);
		int p = 0;
		while (nl->loops[p] != l)
			p++;
		pos[out->norder] = p;
		out->order[out->norder++] = loop_ref(a, f, l);
	}
	bool sorted = true;
	for (int i = 1; i < out->norder; i++)
		sorted &= pos[i] > pos[i - 1];
	return out->kind = sorted ? SEQ_STEP_TIDY : SEQ_STEP_REORDER;
}

SeqStepKind rw_seq_next_step(Arena *a, const Func *f, Stmt *nest, const char *buffer,
			     SeqStep *out)
{
	memset(out, 0, sizeof *out);
	Buffer *buf = rw_seq_buffer(f, buffer);
	Ref ref;
	if (!nest || !buf || !reference_access(a, nest, buf, &ref))
		return out->kind = SEQ_STEP_NONE;
	NestLoops nl = {0};
	gather_loops(nest, &nl);
	Dim dims[MAX_DIMS];
	for (int i = 0; i < ref.nidx; i++)
		dims[i] = classify(ref.idx[i], nl.vars, nl.n);
	for (int i = 0; i < ref.nidx; i++)
		if (dims[i].kind == DIM_MULTI)
			return plan_multi(a, &ref, i, &nl, buf, out);
	for (int i = 0; i < ref.nidx; i++)
		if (dims[i].kind == DIM_DIV)
			return plan_split(a, f, &ref, dims, i, &nl, buf, out);
	return plan_order(a, f, &ref, dims, &nl, out);
}

const char *rw_seq_step_desc(Arena *a, const char *desc, const SeqStep *st)
{
	switch (st->kind) {
	case SEQ_STEP_FISSION:
		return arena_printf(a, "%s: fission of loop %s", desc, st->loop->u.loop.var->name);
	case SEQ_STEP_SKEW:
		return arena_printf(a, "%s: skew of loops %s, %s", desc, st->loop->u.loop.var->name,
				    st->loop->u.loop.body->u.loop.var->name);
	case SEQ_STEP_SPLIT:
		return arena_printf(a, "%s: split %s by %lld", desc, st->loop->u.loop.var->name,
				    (long long)st->factor);
	case SEQ_STEP_REORDER:
		return arena_printf(a, "%s: reorder", desc);
	case SEQ_STEP_NONE: case SEQ_STEP_UNSUPPORTED: case SEQ_STEP_TIDY:
		break;
	}
	return desc;
}

RwStatus rw_seq_apply(RwCtx *c, const SeqStep *st, Stmt **second_loop)
{
	switch (st->kind) {
	case SEQ_STEP_FISSION:
		return rw_fission_after(c, st->loop, st->after, second_loop);
	case SEQ_STEP_SKEW:
		return rw_skew(c, st->loop, st->coef[0], st->coef[1], st->off, st->name);
	case SEQ_STEP_SPLIT:
		if (st->loop_ref)
			return rw_split(c, st->loop_ref, st->factor, TAIL_GUARD, st->name, st->inner_name);
		return rw_tile(c, st->loop, st->off, st->factor, st->name, st->inner_name);
	case SEQ_STEP_REORDER:
		return rw_reorder(c, st->norder, st->order);
	case SEQ_STEP_NONE: case SEQ_STEP_UNSUPPORTED: case SEQ_STEP_TIDY:
		break;
	}
	return rw_fail(c, RW_BAD_INPUT, c->call_span, "sequential_buffer_access: no rewrite for this step");
}

Stmt *rw_seq_inline_lets(Arena *a, Stmt *s, int *count) { return inline_lets(a, s, count); }
