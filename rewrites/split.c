/* rewrites/split.c — split: i -> io*c + ii with four tail strategies.
 * Obligations (semantics.md section 4, proofs/split.md): perfect:
 * N % c == 0; guard: none, the guard is dropped only if N % c == 0 is
 * proven (the schedule tries the guard-free candidate and falls back);
 * cut / cut_and_guard: N >= 0, because the tail loop's extent N % c is
 * positive for negative N. Guarded forms also need split.no_overflow:
 * io*c + ii runs up to N + c - 2 in the loop variable's dtype. The cut
 * tail's loop may be named (rw_split_tail); the loops of its copy of the
 * body get Vars of their own, its blocks names of their own ("C_tail") and
 * its allocations buffers of their own ("tmp_tail"),
 * so that handles keep naming the main part and fission(outer,
 * before=tail) can lift the tail into its own nest. */
#include "rewrites/rewrite.h"
#include "kernel/print.h"

#include <string.h>

bool split_tail_from_name(const char *name, SplitTail *out)
{
	static const char *const names[] = {"guard", "perfect", "cut", "cut_and_guard"};
	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (SplitTail)i;
			return true;
		}
	return false;
}

const char *split_tail_name(SplitTail t)
{
	switch (t) {
	case TAIL_GUARD: return "guard";
	case TAIL_PERFECT: return "perfect";
	case TAIL_CUT: return "cut";
	case TAIL_CUT_AND_GUARD: return "cut_and_guard";
	}
	return "guard";
}

typedef struct SplitParts {
	Stmt *loop;
	Var *i, *io, *ii;
	Expr *min, *n, *c;
	ForKind outer_kind, inner_kind;
} SplitParts;

static Expr *lit(Arena *a, int64_t v, DType t) { return ir_int(a, v, t, (Span){0}); }

/* min + base + ii, folded */
static Expr *index_of(Arena *a, const SplitParts *p, Expr *base, Var *ii)
{
	Expr *e = ir_add(a, base, ir_varref(a, ii, (Span){0}));
	return an_fold(a, ir_add(a, p->min, e));
}

static Stmt *body_at(Arena *a, const SplitParts *p, Expr *index)
{
	Var *from[1] = {p->i};
	Expr *to[1] = {index};
	return ir_subst_stmt(a, p->loop->u.loop.body, 1, from, to);
}

static Expr *io_times_c(Arena *a, const SplitParts *p)
{
	return an_fold(a, ir_mul(a, ir_varref(a, p->io, (Span){0}), p->c));
}

/* for io in range(outer): for ii in range(c): [if io*c + ii < N:] S */
static Stmt *tiled(Arena *a, const SplitParts *p, Expr *outer_extent, bool guard)
{
	Span sp = p->loop->span;
	Expr *rel = ir_add(a, io_times_c(a, p), ir_varref(a, p->ii, (Span){0}));
	Stmt *body = body_at(a, p, index_of(a, p, io_times_c(a, p), p->ii));
	if (guard)
		body = ir_if(a, ir_bin(a, OP_LT, an_fold(a, rel), p->n, sp), body, NULL, sp);
	Stmt *inner = ir_for(a, p->ii, lit(a, 0, p->i->dtype), p->c, p->inner_kind, body, sp);
	return ir_for(a, p->io, lit(a, 0, p->i->dtype), an_fold(a, outer_extent),
		      p->outer_kind, inner, sp);
}

/* the tail after N // c full tiles: extent N % c, or c with a guard */
static Stmt *tail_loop(Arena *a, const SplitParts *p, bool guard, const char *name, const Stmt *root)
{
	Span sp = p->loop->span;
	Var *it = name ? ir_var(a, name, p->i->dtype, p->loop->span) : an_fresh_var(a, p->ii, "_tail");
	Expr *done = an_fold(a, ir_mul(a, ir_bin(a, OP_FLOORDIV, p->n, p->c, sp), p->c));
	/* the main part keeps the loops' Vars, the tail gets its own */
	Stmt *body = rw_fresh_loop_vars(a, body_at(a, p, index_of(a, p, done, it)), NULL, root);
	Expr *extent = an_fold(a, ir_bin(a, OP_FLOORMOD, p->n, p->c, sp));
	if (guard) {
		Expr *rel = an_fold(a, ir_add(a, done, ir_varref(a, it, (Span){0})));
		body = ir_if(a, ir_bin(a, OP_LT, rel, p->n, sp), body, NULL, sp);
		extent = p->c;
	}
	return ir_for(a, it, lit(a, 0, p->i->dtype), extent, FOR_SERIAL, body, sp);
}

static void obligation_at(RwCtx *c, const StmtCtx *sc, const char *kind,
			  const char *stmt, Expr *goal)
{
	rw_obligation_at(c, &c->obs, sc, kind, stmt, goal);
}

/* Loop kinds that stay valid (proofs/split.md): a parallel loop's
 * iterations commute pairwise, so do the tiles of io (unions of them);
 * a vectorized or unrolled loop's label moves to ii, whose extent c is
 * constant and whose iterations are some of the original ones. The tail
 * loop of cut is serial. */
static void split_kinds(ForKind k, ForKind *outer, ForKind *inner)
{
	*outer = FOR_SERIAL;
	*inner = FOR_SERIAL;
	switch (k) {
	case FOR_SERIAL: return;
	case FOR_PARALLEL: *outer = FOR_PARALLEL; return;
	case FOR_VECTORIZED:
	case FOR_UNROLLED: *inner = k; return;
	}
}

/* split.no_overflow, for the guarded forms: the guard computes
 * io*c + ii (and the guarded tail (N // c)*c + t) up to N + c - 2 in the
 * loop variable's dtype, and the tile count (N + c - 1) // c adds c - 1
 * to N; the original loop never computes more than its last index. So
 * N + (c - 1) must fit: N <= MAX - (c - 1), with the bound a literal so
 * the goal itself cannot overflow under any integer encoding. Pushed on
 * `list`; nothing when N is a constant that fits. */
static void no_overflow_obligation(RwCtx *c, ObligationList *list, const StmtCtx *sc,
				   const SplitParts *p, int64_t factor)
{
	Arena *a = c->arena;
	DType t = p->i->dtype;
	int64_t bound = an_dtype_max(t) - (factor - 1);
	int64_t nval;
	Expr *goal = ir_bin(a, OP_LE, p->n, lit(a, bound, t), (Span){0});
	if (an_const_int(p->n, &nval)) {
		/* a constant tile count is computed here, not at run time: the
		 * largest guard value is N - N % c + c - 1 (when N % c != 0) */
		int64_t r = nval > 0 ? nval % factor : 0;
		if (r == 0 || nval - r <= bound)
			return;
		goal = ir_bin(a, OP_LE, lit(a, nval - r, t), lit(a, bound, t), (Span){0});
	}
	rw_obligation_at(c, list, sc, "split.no_overflow",
			 arena_printf(a, "io*%lld + ii stays within %s: the extent of loop %s is at most %lld",
				      (long long)factor, dtype_name(t), p->i->name, (long long)bound),
			 goal);
}

const char *rw_split_no_tail(Arena *a, const Stmt *loop, int64_t factor, SplitTail tail)
{
	if (tail != TAIL_CUT && tail != TAIL_CUT_AND_GUARD)
		return "split: only tail=\"cut\" or \"cut_and_guard\" makes a tail loop to name";
	int64_t n;
	if (factor >= 1 && an_const_int(loop->u.loop.extent, &n) && n >= 0 && n % factor == 0)
		return arena_printf(a, "split: the extent %lld of loop '%s' is a multiple of %lld: there is no tail loop to name",
				    (long long)n, loop->u.loop.var->name, (long long)factor);
	return NULL;
}

RwStatus rw_split(RwCtx *c, const char *loop, int64_t factor, SplitTail tail,
		  const char *outer_name, const char *inner_name)
{
	return rw_split_tail(c, loop, factor, tail, outer_name, inner_name, NULL);
}

RwStatus rw_split_tail(RwCtx *c, const char *loop, int64_t factor, SplitTail tail,
		       const char *outer_name, const char *inner_name, const char *tail_name)
{
	Arena *a = c->arena;
	c->opaque_ok = true; /* the instances keep their order */
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return st;
	if (factor < 1)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "split factor must be >= 1, got %lld", (long long)factor);
	DType it = sc.stmt->u.loop.var->dtype;
	if (!dtype_is_int(it) || factor > an_dtype_max(it))
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "split factor %lld does not fit the %s loop variable '%s'",
			       (long long)factor, dtype_name(it), sc.stmt->u.loop.var->name);
	if (an_range_reads_written(a, sc.stmt, sc.stmt))
		return rw_fail(c, RW_UNSUPPORTED, sc.stmt->span,
			       "split: the range of loop '%s' reads a buffer that the loop writes (the split loop would read it again later)",
			       sc.stmt->u.loop.var->name);
	const char *no_tail = tail_name ? rw_split_no_tail(a, sc.stmt, factor, tail) : NULL;
	if (no_tail)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "%s", no_tail);
	SplitParts p;
	p.loop = sc.stmt;
	p.i = sc.stmt->u.loop.var;
	p.min = sc.stmt->u.loop.min;
	p.n = sc.stmt->u.loop.extent;
	p.c = lit(a, factor, p.i->dtype);
	split_kinds(sc.stmt->u.loop.kind, &p.outer_kind, &p.inner_kind);
	p.io = ir_var(a, outer_name ? outer_name : arena_printf(a, "%s_o", p.i->name),
		      p.i->dtype, sc.stmt->span);
	p.ii = ir_var(a, inner_name ? inner_name : arena_printf(a, "%s_i", p.i->name),
		      p.i->dtype, sc.stmt->span);

	int64_t nval;
	bool nconst = an_const_int(p.n, &nval);
	Expr *divisible = ir_bin(a, OP_EQ, ir_bin(a, OP_FLOORMOD, p.n, p.c, (Span){0}),
				 lit(a, 0, p.i->dtype), (Span){0});
	char *div_stmt = arena_printf(a, "the extent of loop %s is a multiple of %lld",
				      p.i->name, (long long)factor);
	Expr *ceil_tiles = ir_bin(a, OP_FLOORDIV, ir_add(a, p.n, lit(a, factor - 1, p.i->dtype)),
				  p.c, (Span){0});
	if (nconst) /* folded here: N + c - 1 may not fit the dtype */
		ceil_tiles = lit(a, nval >= 0 ? nval / factor + (nval % factor != 0) : 0, p.i->dtype);
	Expr *full_tiles = ir_bin(a, OP_FLOORDIV, p.n, p.c, (Span){0});
	Stmt *guarded = tiled(a, &p, ceil_tiles, true);
	Stmt *exact = tiled(a, &p, full_tiles, false);
	Stmt *result = NULL;

	switch (tail) {
	case TAIL_PERFECT:
		obligation_at(c, &sc, "split.divisible", div_stmt, divisible);
		result = exact;
		break;
	case TAIL_GUARD:
		if (nconst && nval % factor != 0) {
			/* the guard stays; only its arithmetic needs a proof */
			no_overflow_obligation(c, &c->obs, &sc, &p, factor);
			result = guarded;
			break;
		}
		obligation_at(c, &sc, "split.divisible", div_stmt, divisible);
		result = exact;
		c->fallback = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path,
								       sc.depth, guarded));
		{
			char *n = print_expr(p.n);
			c->fallback_note = arena_printf(a, "guard '%s * %lld + %s < %s' kept: divisibility not proven",
							p.io->name, (long long)factor, p.ii->name, n);
			free(n);
		}
		no_overflow_obligation(c, &c->fallback_obs, &sc, &p, factor);
		break;
	case TAIL_CUT:
	case TAIL_CUT_AND_GUARD: {
		if (!(nconst && nval >= 0))
			obligation_at(c, &sc, "split.nonneg_extent",
				      arena_printf(a, "the extent of loop %s is not negative", p.i->name),
				      ir_bin(a, OP_GE, p.n, lit(a, 0, p.i->dtype), (Span){0}));
		if (nconst && nval % factor == 0) {
			result = exact;
			break;
		}
		if (tail == TAIL_CUT_AND_GUARD)
			no_overflow_obligation(c, &c->obs, &sc, &p, factor);
		Stmt *parts[2] = {exact, tail_loop(a, &p, tail == TAIL_CUT_AND_GUARD, tail_name, c->func->body)};
		result = ir_seq(a, 2, parts, sc.stmt->span);
		break;
	}
	}
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, result));
	return RW_OK;
}

/* TVM's factors=[f, None] on a loop of symbolic extent N: f tiles of
 * q = (N + f - 1) // f iterations each, guarded (proofs/split.md, "A
 * given outer factor"):
 *   for io in range(f): for ii in range(q): if io*q + ii < N: S(lo + io*q + ii)
 * For N <= 0, q <= 0 and nothing runs, as before; for N > 0, f*q >= N
 * and (io, ii) in order run io*q + ii = 0, 1, ..., f*q - 1, of which the
 * guard keeps 0 .. N - 1. Its arithmetic reaches N + f - 1, hence the
 * same split.no_overflow as a guarded split by f. The inner extent is
 * symbolic, so a vectorized or unrolled loop (whose label would move to
 * it) is not supported. */
RwStatus rw_split_outer(RwCtx *c, const char *loop, int64_t outer, const char *outer_name,
			const char *inner_name)
{
	Arena *a = c->arena;
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return st;
	DType it = sc.stmt->u.loop.var->dtype;
	if (outer < 1 || !dtype_is_int(it) || outer > an_dtype_max(it))
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "split factor %lld does not fit the %s loop variable '%s'", (long long)outer,
			       dtype_name(it), sc.stmt->u.loop.var->name);
	if (an_range_reads_written(a, sc.stmt, sc.stmt))
		return rw_fail(c, RW_UNSUPPORTED, sc.stmt->span,
			       "split: the range of loop '%s' reads a buffer that the loop writes (the split loop would read it again later)",
			       sc.stmt->u.loop.var->name);
	SplitParts p;
	p.loop = sc.stmt;
	p.i = sc.stmt->u.loop.var;
	p.min = sc.stmt->u.loop.min;
	p.n = sc.stmt->u.loop.extent;
	split_kinds(sc.stmt->u.loop.kind, &p.outer_kind, &p.inner_kind);
	if (p.inner_kind != FOR_SERIAL)
		return rw_fail(c, RW_UNSUPPORTED, sc.stmt->span,
			       "split: loop '%s' is %s and its label would move to an inner loop of symbolic extent",
			       p.i->name, for_kind_name(sc.stmt->u.loop.kind));
	p.c = ir_bin(a, OP_FLOORDIV, ir_add(a, p.n, lit(a, outer - 1, it)), lit(a, outer, it), (Span){0});
	p.io = ir_var(a, outer_name ? outer_name : arena_printf(a, "%s_o", p.i->name), it, sc.stmt->span);
	p.ii = ir_var(a, inner_name ? inner_name : arena_printf(a, "%s_i", p.i->name), it, sc.stmt->span);
	int64_t bound = an_dtype_max(it) - (outer - 1);
	rw_obligation_at(c, &c->obs, &sc, "split.no_overflow",
			 arena_printf(a, "io*((N + %lld) // %lld) + ii stays within %s: the extent N of loop %s is at most %lld",
				      (long long)(outer - 1), (long long)outer, dtype_name(it), p.i->name,
				      (long long)bound),
			 ir_bin(a, OP_LE, p.n, lit(a, bound, it), (Span){0}));
	Stmt *result = tiled(a, &p, lit(a, outer, it), true);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, result));
	return RW_OK;
}
