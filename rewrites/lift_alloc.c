/* rewrites/lift_alloc.c — lift_alloc(buffer, n_lifts=1) (Exo's lift_alloc):
 * the allocation of an intermediate buffer moves out of the n loops or
 * `if`s around it, `for i: X = alloc; S` -> `X = alloc; for i: S`.
 * One allocation then serves every iteration, so a value one iteration
 * leaves in X could reach the next. Obligations (proofs/lift_alloc.md):
 *   lift_alloc.no_carry — with a loop crossed: in the kernel as written,
 *     every read of X reads a cell written earlier in the same allocation,
 *     i.e. in the same iteration (the initialisation analysis of
 *     facts.h: a read of a cell no fact covers is refuted, and the
 *     replay shows the read of an uninitialised cell);
 *   parallel.no_race / vectorize.no_race — a parallel or vectorized loop
 *     crossed is checked again with X shared by its iterations (an X the
 *     iterations index apart, already expanded by the loop, passes);
 *   lift_alloc.shape — a shape that is not a literal is non-negative
 *     where it is now evaluated, even when the loop runs no iteration;
 *   lift_alloc.shape_safe — evaluating it there cannot fault (its loads
 *     inside their buffers, its divisors not zero); a shape whose safety
 *     cannot be stated (a load of an allocated buffer) is not supported.
 * The shape must not use a variable of a loop or let it leaves
 * (RW_PRECONDITION), as Exo's "Cannot lift allocation statement". */
#include "rewrites/rewrite.h"

#include <string.h>

#include "kernel/analysis/expr_query.h"
#include "kernel/analysis/facts.h"
#include "kernel/analysis/stmt_ctx.h"

typedef struct Find {
	const char *name;
	Stmt *alloc;
	StmtCtx sc;
} Find;

static void find_alloc(void *ud, Stmt *s, const StmtCtx *ctx)
{
	Find *f = ud;
	if (!f->alloc && s->kind == ST_ALLOC && strcmp(s->u.alloc.buf->name, f->name) == 0) {
		f->alloc = s;
		f->sc = *ctx;
	}
}

/* ---------- no_carry: every read of X in the allocation's scope ---------- */

typedef struct Reads {
	RwCtx *c;
	const StmtCtx *alloc; /* the allocation, in c->func */
	Buffer *buf;
	const char *loops; /* "i, j": the loops crossed, for the statement */
} Reads;

static bool inside(const StmtCtx *outer, const StmtCtx *sc)
{
	if (sc->depth <= outer->depth)
		return false;
	for (int d = 0; d < outer->depth; d++)
		if (sc->path[d] != outer->path[d])
			return false;
	return true;
}

/* Cells of X the straight-line stores before sc write, in the same
 * iteration: a store that is an earlier item of a sequence around sc
 * (inside the allocation) has run, at the same values of the loops
 * around that sequence; with load-free indices they name the same cells
 * now. A disjunct of the goal beside the facts, which leave out a store
 * whose value reads X (tmp[1] = tmp[0] * 3). */
static Expr *stored_before(Reads *r, const StmtCtx *sc, int nidx, Expr **idx)
{
	Arena *a = r->c->arena;
	Expr *any = NULL;
	for (int L = r->alloc->depth + 1; L < sc->depth; L++) {
		const Stmt *seq = an_stmt_at(r->c->func->body, sc->path, L);
		if (seq->kind != ST_SEQ)
			continue;
		for (int i = 0; i < sc->path[L] && i < seq->u.seq.n; i++) {
			const Stmt *st = seq->u.seq.items[i];
			if (st->kind != ST_STORE || st->u.store.buf != r->buf || st->u.store.nidx != nidx)
				continue;
			Expr *same = NULL;
			bool plain = true;
			for (int d = 0; d < nidx && plain; d++) {
				plain = !an_expr_has_load(st->u.store.idx[d]);
				same = ir_and(a, same, ir_bin(a, OP_EQ, st->u.store.idx[d], idx[d], (Span){0}));
			}
			if (plain && same)
				any = any ? ir_or(a, any, same) : same;
		}
	}
	return any;
}

static void read_obligations(Reads *r, const StmtCtx *sc, Stmt *probe)
{
	RwCtx *c = r->c;
	Arena *a = c->arena;
	if (!an_stmt_reads(probe, r->buf))
		return;
	FactSet fs;
	an_facts_at(a, c->func, sc, false, NULL, &fs);
	AccessList acc;
	memset(&acc, 0, sizeof acc);
	an_collect_accesses(a, probe, 0, NULL, NULL, 0, NULL, &acc);
	for (int i = 0; i < acc.n; i++) {
		const Access *x = &acc.items[i];
		if (x->buf != r->buf || x->is_write)
			continue;
		Expr *goal = an_readable(a, c->func, &fs, r->buf, x->nidx, x->idx);
		Expr *before = stored_before(r, sc, x->nidx, x->idx);
		if (before)
			goal = ir_or(a, goal, before);
		if (x->guard)
			goal = ir_or(a, ir_not(a, x->guard, (Span){0}), goal);
		Obligation *o = rw_obligation_at(
			c, &c->obs, sc, "lift_alloc.no_carry",
			arena_printf(a, "the read of %s at %d:%d finds its cell written earlier in the same iteration of %s",
				     r->buf->name, x->span.line, x->span.col, r->loops),
			goal);
		for (int v = 0; v < acc.nvars; v++)
			obligation_add_var(a, o, acc.vars[v]);
		for (int h = 0; h < acc.nhyps; h++)
			obligation_add_hyp(a, o, acc.hyps[h]);
		obligation_add_related(a, o, x->span);
	}
}

/* The reads a statement makes itself (not those of the statements it
 * holds), each as a statement of its own for the access walk. */
static void visit_reads(void *ud, Stmt *s, const StmtCtx *sc)
{
	Reads *r = ud;
	Arena *a = r->c->arena;
	if (!inside(r->alloc, sc))
		return;
	switch (s->kind) {
	case ST_STORE: case ST_EVAL: case ST_ASSUME:
		read_obligations(r, sc, s);
		return;
	case ST_FOR:
		read_obligations(r, sc, ir_eval(a, s->u.loop.min, s->span));
		read_obligations(r, sc, ir_eval(a, s->u.loop.extent, s->span));
		return;
	case ST_IF:
		read_obligations(r, sc, ir_eval(a, s->u.cond.cond, s->span));
		return;
	case ST_LET:
		read_obligations(r, sc, ir_eval(a, s->u.let.value, s->span));
		return;
	case ST_SEQ: case ST_ALLOC: case ST_BLOCK: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* ---------- the rewrite ---------- */

RwStatus rw_lift_alloc(RwCtx *c, const char *buffer, int n_lifts)
{
	Arena *a = c->arena;
	if (n_lifts < 1)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "lift_alloc: n_lifts must be at least 1 (got %d)",
			       n_lifts);
	Find f = {.name = buffer};
	an_walk(a, c->func, find_alloc, &f);
	if (!f.alloc)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "lift_alloc: no allocation (T.alloc_buffer) of '%s' in function '%s'%s", buffer,
			       c->func->name, rw_buffer_hint(a, c->func, buffer));
	Stmt *root = c->func->body, *al = f.alloc;
	Buffer *buf = al->u.alloc.buf;
	const StmtCtx *sc = &f.sc;
	/* walk out: loops and ifs count, sequences, lets and other buffers'
	 * allocations are crossed on the way */
	int lifts = 0, target = sc->depth, ncrossed = 0;
	int crossed[AN_MAX_DEPTH]; /* levels of the loops crossed */
	for (int L = sc->depth - 1; L >= 0 && lifts < n_lifts; L--) {
		Stmt *anc = an_stmt_at(root, sc->path, L);
		const Var *bound = NULL;
		switch (anc->kind) {
		case ST_FOR:
			lifts++;
			target = L;
			crossed[ncrossed++] = L;
			bound = anc->u.loop.var;
			break;
		case ST_IF:
			lifts++;
			target = L;
			break;
		case ST_LET:
			bound = anc->u.let.var;
			break;
		case ST_ALLOC:
			for (int d = 0; d < buf->ndim; d++)
				if (an_expr_reads(buf->shape[d], anc->u.alloc.buf))
					return rw_fail(c, RW_PRECONDITION, al->span,
						       "lift_alloc: cannot lift the allocation of %s: its shape reads %s, allocated in the statement it would leave",
						       buffer, anc->u.alloc.buf->name);
			break;
		case ST_SEQ:
			break;
		case ST_BLOCK:
			return rw_fail(c, RW_UNSUPPORTED, al->span,
				       "lift_alloc: the allocation of %s belongs to block \"%s\"; lifting it out of a block is not supported",
				       buffer, anc->u.block.name);
		case ST_STORE: case ST_EVAL: case ST_ASSUME: case ST_PASS: case ST_COUNT:
			return rw_fail(c, RW_UNSUPPORTED, al->span, "lift_alloc: unexpected statement around %s",
				       buffer);
		}
		for (int d = 0; bound && d < buf->ndim; d++)
			if (ir_expr_uses_var(buf->shape[d], bound))
				return rw_fail(c, RW_PRECONDITION, al->span,
					       "lift_alloc: cannot lift the allocation of %s: its shape uses '%s', bound by the %s it would leave",
					       buffer, bound->name, anc->kind == ST_FOR ? "loop" : "let");
	}
	if (lifts < n_lifts)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "lift_alloc: the specified lift level %d is more than the %d loop%s or if%s around the allocation of %s",
			       n_lifts, lifts, lifts == 1 ? "" : "s", lifts == 1 ? "" : "s", buffer);
	/* The shape is evaluated once where the allocation now is: a buffer
	 * it reads that the statements left write (a later iteration, or an
	 * earlier item of a sequence before the allocation) would give each
	 * run of the allocation another shape than the one lifted. */
	for (int d = 0; d < buf->ndim; d++)
		if (an_expr_reads_written(a, buf->shape[d], an_stmt_at(root, sc->path, target)))
			return rw_fail(c, RW_PRECONDITION, al->span,
				       "lift_alloc: cannot lift the allocation of %s: its shape reads a buffer written in the statement it would leave",
				       buffer);
	/* the allocation's scope stays where it was, the allocation goes
	 * around the outermost statement it leaves */
	Stmt *inner = al->u.alloc.body ? al->u.alloc.body : ir_seq(a, 0, NULL, al->span);
	Stmt *body = an_replace_at(a, root, sc->path, sc->depth, inner);
	Stmt *moved = an_stmt_at(body, sc->path, target);
	body = an_replace_at(a, body, sc->path, target, ir_alloc(a, buf, moved, al->span));
	c->out = an_with_body(a, c->func, body);

	char *names = "";
	for (int k = ncrossed - 1; k >= 0; k--) {
		Stmt *l = an_stmt_at(root, sc->path, crossed[k]);
		names = arena_printf(a, "%s%s%s", names, *names ? ", " : "", l->u.loop.var->name);
	}
	if (ncrossed) {
		Reads r = {.c = c, .alloc = sc, .buf = buf, .loops = names};
		an_walk(a, c->func, visit_reads, &r);
	}
	/* a parallel or vectorized loop crossed: its iterations now share X */
	for (int k = 0; k < ncrossed; k++) {
		Stmt *l = an_stmt_at(root, sc->path, crossed[k]);
		if (l->u.loop.kind != FOR_PARALLEL && l->u.loop.kind != FOR_VECTORIZED)
			continue;
		int np = 0, path[AN_MAX_DEPTH + 1];
		for (int d = 0; d < crossed[k]; d++) {
			if (d == target)
				path[np++] = 0; /* into the allocation */
			path[np++] = sc->path[d];
		}
		if (crossed[k] == target)
			path[np++] = 0;
		Stmt *nl = an_stmt_at(body, path, np);
		StmtCtx lc;
		if (!nl || nl->kind != ST_FOR || !an_find_stmt(a, c->func, l, &lc))
			return rw_fail(c, RW_UNSUPPORTED, l->span, "lift_alloc: loop '%s' not found after the move",
				       l->u.loop.var->name);
		const char *kind = l->u.loop.kind == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race";
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), l->span);
		rw_add_context_hyps(c, base, &lc);
		rw_race_obligations(c, kind, base, nl);
	}
	/* the shape is now evaluated where the outermost statement left
	 * starts, also where the allocation did not run before (an `if`
	 * whose condition is false, a loop of no iteration): there it must
	 * not be negative, and evaluating it must not fault (red team: a
	 * shape T.max(N[i], 1) lifted out of `if i < 4` read N[4] out of
	 * bounds; T.max(100 // m, 1) lifted out of a loop of T.min(m, 8)
	 * iterations divided by zero at m == 0) */
	Expr *nonneg = NULL, *safe = NULL;
	for (int d = 0; d < buf->ndim; d++) {
		int64_t v;
		if (an_const_int(buf->shape[d], &v))
			continue;
		nonneg = ir_and(a, nonneg, ir_bin(a, OP_LE, ir_int(a, 0, buf->shape[d]->dtype, (Span){0}),
						  buf->shape[d], (Span){0}));
		if (!an_expr_may_fault(buf->shape[d], true))
			continue;
		Expr *ok = rw_safe_to_eval(a, c->func, buf->shape[d]);
		if (!ok)
			return rw_fail(c, RW_UNSUPPORTED, al->span,
				       "lift_alloc: not supported: the shape of %s may fault (it reads a buffer that is not a parameter, or converts a float to an integer), and it would be evaluated where the allocation did not run",
				       buffer);
		safe = ir_and(a, safe, ok);
	}
	if (nonneg) {
		StmtCtx tc;
		if (!an_find_stmt(a, c->func, an_stmt_at(root, sc->path, target), &tc))
			return rw_fail(c, RW_UNSUPPORTED, al->span, "lift_alloc: the lifted statement is not found");
		if (safe)
			rw_obligation_at(c, &c->obs, &tc, "lift_alloc.shape_safe",
					 arena_printf(a, "evaluating the shape of %s where it is now allocated cannot fault (reads inside their buffers, divisors not zero)",
						      buffer),
					 safe);
		rw_obligation_at(c, &c->obs, &tc, "lift_alloc.shape",
				 arena_printf(a, "the shape of %s is not negative where it is now allocated", buffer),
				 nonneg);
	}
	c->note = arena_printf(a, "%s allocated out of %d loop%s or if%s%s%s", buffer, lifts,
			       lifts == 1 ? "" : "s", lifts == 1 ? "" : "s", ncrossed ? "; loops crossed: " : "",
			       names);
	return RW_OK;
}
