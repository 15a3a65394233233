/* rewrites/overcompute.c — remove_branching_through_overcompute:
 * `if c: S` -> `S` (semantics.md section 5), one candidate branch at a
 * time. The extra instances S(p), not c(p), must be harmless:
 *   overcompute.in_bounds / .not_forbidden / .readable — every access of
 *     an extra instance is inside the physical shape, off padding without
 *     a pad value, and reads an initialised cell (a parameter's logical
 *     cell, a cell a fact covers, or one the instance wrote before);
 *   per store X[e] = v, either
 *   overcompute.no_op — v == X[e] in any state satisfying the usable facts,
 *   or overcompute.dead_* — X[e] is overwritten later by a stage W whose
 *     guard holds there (dead_overwritten), nothing between reads it
 *     (dead_unread), and no real instance of the nest touches it
 *     (dead_untouched); what runs after the extra instance reads the
 *     buffers written since then as unknown values;
 *   overcompute.no_race — parallel and vectorized loops around the branch
 *     or in its body stay free of races with the extra instances.
 * remove_overcompute_through_branching puts `if not pad(e):` around the
 * stores to padded buffers under the same per-store obligations. */
#include "rewrites/overcompute.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/arith.h"
#include "rewrites/attach.h"
#include "kernel/analysis/facts.h"
#include "kernel/analysis/index_map.h"
#include "rewrites/layout.h"

static Span nospan(void) { return (Span){0}; }

/* ---------- statement properties ---------- */

/* Why the extra instances of s cannot be checked by this file, or NULL. */
static const char *unsupported_in(const Stmt *s)
{
	const char *why;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if ((why = unsupported_in(s->u.seq.items[i])))
				return why;
		return NULL;
	case ST_FOR:
		if (an_expr_may_fault(s->u.loop.min, false) || an_expr_may_fault(s->u.loop.extent, false))
			return "a division by a non-constant or a float-to-integer conversion (either can fault)";
		return unsupported_in(s->u.loop.body);
	case ST_IF:
		if (an_expr_may_fault(s->u.cond.cond, false))
			return "a division by a non-constant or a float-to-integer conversion (either can fault)";
		if ((why = unsupported_in(s->u.cond.then_s)))
			return why;
		return s->u.cond.else_s ? unsupported_in(s->u.cond.else_s) : NULL;
	case ST_STORE:
		/* a float stored into an integer buffer is converted */
		if (dtype_is_float(s->u.store.value->dtype) && !dtype_is_float(s->u.store.buf->dtype))
			return "a division by a non-constant or a float-to-integer conversion (either can fault)";
		for (int i = 0; i < s->u.store.nidx; i++)
			if (an_expr_may_fault(s->u.store.idx[i], false))
				return "a division by a non-constant or a float-to-integer conversion (either can fault)";
		return an_expr_may_fault(s->u.store.value, false) ? "a division by a non-constant or a float-to-integer conversion (either can fault)" : NULL;
	case ST_ASSUME:
		return "a T.assume (it would have to hold in the extra instances)";
	case ST_EVAL:
		return an_expr_may_fault(s->u.expr, false) ? "a division by a non-constant or a float-to-integer conversion (either can fault)" : NULL;
	case ST_ALLOC:
		return "an allocation";
	case ST_BLOCK:
		return unsupported_in(s->u.block.body);
	case ST_LET:
		if (an_expr_may_fault(s->u.let.value, false))
			return "a division by a non-constant or a float-to-integer conversion (either can fault)";
		return unsupported_in(s->u.let.body);
	case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

static bool has_store(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (has_store(s->u.seq.items[i]))
				return true;
		return false;
	case ST_FOR: return has_store(s->u.loop.body);
	case ST_IF:
		return has_store(s->u.cond.then_s) || (s->u.cond.else_s && has_store(s->u.cond.else_s));
	case ST_STORE: return true;
	case ST_ALLOC: return has_store(s->u.alloc.body);
	case ST_BLOCK: return has_store(s->u.block.body);
	case ST_LET: return has_store(s->u.let.body);
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return false;
	}
	return false;
}

/* ---------- obligations shared by every store ---------- */

typedef struct Instance {
	RwCtx *c;
	const StmtCtx *sc;
	Obligation *base; /* context, not c, the accesses' variables */
	AccessList acc;
	FactSet values, readable;
	const char *where; /* "the branch at line 7" */
	const char *instances; /* "extra instances", "instances" */
	bool every_instance; /* remove_no_op: every instance of the store is skipped */
} Instance;

static Obligation *derive(Instance *in, const char *kind, const char *stmt, Expr *goal,
			  Span origin)
{
	Arena *a = in->c->arena;
	Obligation *o = obligation_new(a, kind, stmt, in->base->nvars, in->base->vars,
				       in->base->nhyps, in->base->hyps, goal, origin);
	obligation_copy_hyp_names(a, o, in->base);
	o->rewrite = in->c->desc;
	obligation_add_related(a, o, in->sc->stmt->span);
	return o;
}

static Expr *implies(Arena *a, Expr *p, Expr *q)
{
	return p ? ir_or(a, ir_not(a, p, nospan()), q) : q;
}

static Expr *same_cell(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *all = NULL;
	for (int k = 0; k < n; k++)
		all = ir_and(a, all, ir_bin(a, OP_EQ, x[k], y[k], nospan()));
	return all ? all : ir_bool(a, true);
}

/* w is executed before r in the same instance: a write earlier in the
 * access order, in the same loops as r or in loops around them. */
static bool writes_before(const Access *w, const Access *r)
{
	if (w->nscope > r->nscope)
		return false;
	for (int i = 0; i < w->nscope; i++)
		if (w->scope[i] != r->scope[i])
			return false;
	return true;
}

static void safety_obligations(Instance *in, ObligationList *out)
{
	RwCtx *c = in->c;
	Arena *a = c->arena;
	for (int i = 0; i < in->acc.n; i++) {
		const Access *x = &in->acc.items[i];
		const char *what = x->is_write ? "write" : "read";
		/* in bounds of the physical shape */
		Expr *inside = imap_in_box(a, x->nidx, x->idx, x->buf->shape);
		if (inside) {
			Obligation *o = derive(in, "overcompute.in_bounds",
					       arena_printf(a, "the extra instances of %s %s %s inside its shape",
							    in->where, what, x->buf->name),
					       implies(a, x->guard, inside), x->span);
			oblist_push(a, out, o);
		}
		const Layout *lay = x->buf->layout;
		Expr *forb = lay ? (lay->forbidden ? lay->forbidden
				    : lay->pad_kind == PAD_NONE_GIVEN ? lay->pad_predicate : NULL)
				 : NULL;
		if (forb && lay->inv_vars) {
			Expr *hit = ir_subst_expr(a, forb, x->nidx, lay->inv_vars, x->idx);
			Obligation *o = derive(in, "overcompute.not_forbidden",
					       arena_printf(a, "the extra instances of %s do not touch padding of %s, which has no pad_value",
							    in->where, x->buf->name),
					       implies(a, x->guard, ir_not(a, hit, nospan())), x->span);
			oblist_push(a, out, o);
		}
		if (x->is_write)
			continue;
		Expr *ok = an_readable(a, c->func, &in->readable, x->buf, x->nidx, x->idx);
		if (ok->kind == EX_INT && ok->u.ival)
			continue; /* every cell of it is readable */
		for (int j = 0; j < i; j++) {
			const Access *w = &in->acc.items[j];
			if (!w->is_write || w->buf != x->buf || !writes_before(w, x))
				continue;
			ok = ir_or(a, ok, ir_and(a, w->guard, same_cell(a, x->nidx, w->idx, x->idx)));
		}
		Obligation *o = derive(in, "overcompute.readable",
				       arena_printf(a, "the extra instances of %s read only initialised cells of %s",
						    in->where, x->buf->name),
				       implies(a, x->guard, ok), x->span);
		oblist_push(a, out, o);
	}
}

/* ---------- no-op stores ---------- */

static void noop_obligation(Instance *in, const Access *w, ObligationList *out)
{
	Arena *a = in->c->arena;
	Expr *cell = ir_load(a, w->buf, w->nidx, w->idx, w->span);
	Expr *goal = ir_bin(a, OP_EQ, w->value, cell, nospan());
	Obligation *o = derive(in, "overcompute.no_op",
			       arena_printf(a, "the %s of %s store into %s the value already there",
					    in->instances, in->where, w->buf->name),
			       goal, w->span);
	o->same_value = true;
	ObligationStore *st = arena_alloc(a, sizeof *st);
	*st = (ObligationStore){w->buf, w->nidx, w->idx, w->value, w->span};
	o->store = st;
	if (w->guard)
		obligation_add_hyp(a, o, w->guard);
	an_facts_instantiate(a, &in->values, goal, o);
	oblist_push(a, out, o);
}

/* ---------- dead stores ---------- */

/* A stage `for t: [if p(t):] X[idx(t)] = v(t)` (possibly in a block)
 * writing X: its single store, loops and guard. */
typedef struct Stage {
	const Stmt *store;
	int nloops;
	const Stmt *loops[16];
	Expr *guard;
} Stage;

static bool as_stage(const Stmt *s, const Buffer *x, Stage *st)
{
	memset(st, 0, sizeof *st);
	while (s->kind == ST_BLOCK || s->kind == ST_FOR) {
		if (s->kind == ST_BLOCK) {
			s = s->u.block.body;
			continue;
		}
		if (st->nloops == 16)
			return false;
		st->loops[st->nloops++] = s;
		s = s->u.loop.body;
	}
	if (s->kind == ST_IF && !s->u.cond.else_s) {
		st->guard = s->u.cond.cond;
		s = s->u.cond.then_s;
	}
	if (s->kind != ST_STORE || s->u.store.buf != x)
		return false;
	st->store = s;
	return true;
}

typedef struct Overwriter {
	Stage stage;
	const Stmt *stage_stmt;
	int nbetween;
	const Stmt *between[64];
	int branch_depth; /* path prefix of the statement holding the candidate
			     at W's level */
} Overwriter;

/* The (skip+1)-th later stage writing x, searching outward from the
 * candidate; the statements passed on the way (earlier stages among them)
 * are `between`. */
/* Whether the stage st can write the cell `cell` at all: false when, in
 * some dimension, its index names none of its own loops and differs from
 * the cell's by a constant (the variables it names are bound around both
 * and hold the same values). Such a stage is no overwriter; indexing the
 * search by the cell keeps a long run of stores to other cells from
 * being tried one query each. */
static bool stage_may_write(const Stage *st, int nidx, Expr *const *cell)
{
	const Stmt *store = st->store;
	if (store->u.store.nidx != nidx)
		return true;
	for (int k = 0; k < nidx; k++) {
		Expr *e = store->u.store.idx[k];
		bool own = false;
		for (int i = 0; i < st->nloops && !own; i++)
			own = ir_expr_uses_var(e, st->loops[i]->u.loop.var);
		if (!own && an_cells_distinct(1, &e, &cell[k]))
			return false;
	}
	return true;
}

static bool find_overwriter(const Func *f, const StmtCtx *sc, const Access *w, int skip,
			    Overwriter *ow)
{
	const Buffer *x = w->buf;
	const Stmt *levels[AN_MAX_DEPTH];
	int n = 0;
	for (int d = 0; d < sc->depth; d++) {
		const Stmt *cur = an_stmt_at(f->body, sc->path, d);
		if (!cur)
			break;
		levels[n++] = cur;
	}
	memset(ow, 0, sizeof *ow);
	for (int d = n - 1; d >= 0; d--) {
		/* other iterations of loops around the candidate run between
		 * the dead write and W: dead_untouched covers them, as they
		 * are part of the branch statement at W's level */
		const Stmt *s = levels[d];
		if (s->kind != ST_SEQ)
			continue;
		int k = sc->path[d];
		for (int i = k + 1; i < s->u.seq.n; i++) {
			const Stmt *item = s->u.seq.items[i];
			if (as_stage(item, x, &ow->stage) &&
			    stage_may_write(&ow->stage, w->nidx, w->idx) && skip-- == 0) {
				ow->stage_stmt = item;
				ow->branch_depth = d + 1;
				return true;
			}
			if (ow->nbetween == 64)
				return false;
			ow->between[ow->nbetween++] = item;
		}
	}
	return false;
}

/* The stage's loop variables solved from the cell it should overwrite
 * (sidx: the stage's store indices). */
static Expr **stage_at(Arena *a, const Stage *st, Expr **sidx, int nidx, Expr **cell)
{
	IndexMap m;
	memset(&m, 0, sizeof m);
	m.nin = st->nloops;
	m.in = arena_alloc(a, sizeof(Var *) * (size_t)(st->nloops + 1));
	for (int i = 0; i < st->nloops; i++)
		m.in[i] = st->loops[i]->u.loop.var;
	m.nout = nidx;
	m.out = sidx;
	m.phys = arena_alloc(a, sizeof(Var *) * (size_t)(nidx + 1));
	for (int k = 0; k < nidx; k++)
		m.phys[k] = ir_var(a, "t", DT_INT32, nospan());
	const char *why;
	if (st->nloops && !imap_derive_inverse(a, &m, &why))
		return NULL;
	Expr **t0 = arena_alloc(a, sizeof(Expr *) * (size_t)(st->nloops + 1));
	for (int i = 0; i < st->nloops; i++)
		t0[i] = ir_subst_expr(a, m.inverse[i], nidx, m.phys, cell);
	return t0;
}

/* Accesses of x anywhere in s (all loops of s fresh), as obligations "none
 * of them touches the cell w writes". s runs after the dead write, in a
 * later state: its loads of the buffers in vol (written between) are
 * fresh values in its indices and guards. */
static void untouched(Instance *in, const Access *w, const Stmt *s, int nvol, Buffer **vol,
		      bool reads_only, const char *kind, const char *why, ObligationList *out)
{
	RwCtx *c = in->c;
	Arena *a = c->arena;
	AccessList l;
	memset(&l, 0, sizeof l);
	an_collect_accesses(c->arena, s, 0, NULL, NULL, nvol, vol, &l);
	for (int i = 0; i < l.n; i++) {
		const Access *r = &l.items[i];
		if (r->buf != w->buf || (reads_only && r->is_write))
			continue;
		Expr *hit = ir_and(a, r->guard, same_cell(a, w->nidx, r->idx, w->idx));
		Obligation *o = derive(in, kind,
				       arena_printf(a, "%s: the %s of %s at %d:%d never touches the cell the skipped write writes",
						    why, r->is_write ? "write" : "read", r->buf->name,
						    r->span.line, r->span.col),
				       ir_not(a, hit, nospan()), w->span);
		if (w->guard)
			obligation_add_hyp(a, o, w->guard);
		for (int v = 0; v < l.nvars; v++)
			obligation_add_var(a, o, l.vars[v]);
		for (int h = 0; h < l.nhyps; h++)
			obligation_add_hyp(a, o, l.hyps[h]);
		obligation_add_related(a, o, r->span);
		oblist_push(a, out, o);
	}
}

/* The buffers s writes added to the set (*set, n entries); the new count. */
static int add_written(Arena *a, const Stmt *s, int n, Buffer ***set)
{
	Buffer **ws;
	int nw = an_written_buffers(a, s, &ws);
	Buffer **out = arena_alloc(a, sizeof(Buffer *) * (size_t)(n + nw + 1));
	if (n)
		memcpy(out, *set, sizeof(Buffer *) * (size_t)n);
	for (int i = 0; i < nw; i++) {
		bool seen = false;
		for (int j = 0; j < n && !seen; j++)
			seen = out[j] == ws[i];
		if (!seen)
			out[n++] = ws[i];
	}
	*set = out;
	return n;
}

/* `real` is the function whose instances of the candidate are exactly the
 * ones that run in the original program (before removing a branch, after
 * adding one); NULL for remove_no_op: the function without the store. */
static bool dead_obligations(Instance *in, const Access *w, const Func *real, int skip,
			     ObligationList *out)
{
	RwCtx *c = in->c;
	Arena *a = c->arena;
	Overwriter ow;
	if (!find_overwriter(c->func, in->sc, w, skip, &ow))
		return false;
	const Stage *st = &ow.stage;
	/* the statement at W's level that holds the candidate, as it was;
	 * real NULL (remove_no_op): as it is with the store removed, built
	 * for that statement alone */
	const Stmt *branch_now = an_stmt_at(c->func->body, in->sc->path, ow.branch_depth);
	const Stmt *branch = !real ? (branch_now ? an_replace_at(a, (Stmt *)branch_now,
								  in->sc->path + ow.branch_depth,
								  in->sc->depth - ow.branch_depth,
								  ir_pass(a, in->sc->stmt->span))
						 : NULL)
				   : an_stmt_at(real->body, in->sc->path, ow.branch_depth);
	if (!branch || !branch_now)
		return false;
	/* The obligations' loads read the state of the extra instance. Between
	 * its write and W's write of the cell run the rest of that statement
	 * (other iterations of the loops around the candidate included), the
	 * statements between and W's earlier iterations: a buffer any of them
	 * writes may hold anything by then, so W's ranges, guard and index,
	 * and the accesses dead_unread and dead_untouched look at, read it as
	 * a fresh value (W's own state, over-approximated). */
	Buffer **vol = NULL;
	int nvol = 0;
	nvol = add_written(a, branch, nvol, &vol);
	nvol = add_written(a, branch_now, nvol, &vol);
	for (int i = 0; i < ow.nbetween; i++)
		nvol = add_written(a, ow.between[i], nvol, &vol);
	nvol = add_written(a, ow.stage_stmt, nvol, &vol);
	Expr **sidx = arena_alloc(a, sizeof(Expr *) * (size_t)(w->nidx + 1));
	for (int k = 0; k < w->nidx; k++)
		sidx[k] = an_havoc_loads(c->arena, st->store->u.store.idx[k], nvol, vol);
	Expr **t0 = stage_at(a, st, sidx, w->nidx, w->idx);
	if (!t0)
		return false;
	/* dead_overwritten: W writes the cell: its ranges and guard hold */
	Var **sv = arena_alloc(a, sizeof(Var *) * (size_t)(st->nloops + 1));
	for (int i = 0; i < st->nloops; i++)
		sv[i] = st->loops[i]->u.loop.var;
	Expr *covers = NULL;
	for (int i = 0; i < st->nloops; i++) {
		Expr *lo = ir_subst_expr(a, an_havoc_loads(c->arena, st->loops[i]->u.loop.min, nvol, vol),
					 st->nloops, sv, t0);
		Expr *ext = ir_subst_expr(a, an_havoc_loads(c->arena, st->loops[i]->u.loop.extent, nvol, vol),
					  st->nloops, sv, t0);
		covers = ir_and(a, covers, ir_and(a, ir_bin(a, OP_LE, lo, t0[i], nospan()),
						  ir_bin(a, OP_LT, t0[i], ir_add(a, lo, ext), nospan())));
	}
	if (st->guard)
		covers = ir_and(a, covers, ir_subst_expr(a, an_havoc_loads(c->arena, st->guard, nvol, vol),
							 st->nloops, sv, t0));
	Expr **widx = arena_alloc(a, sizeof(Expr *) * (size_t)(w->nidx + 1));
	for (int k = 0; k < w->nidx; k++)
		widx[k] = ir_subst_expr(a, sidx[k], st->nloops, sv, t0);
	covers = ir_and(a, covers, same_cell(a, w->nidx, widx, w->idx));
	Obligation *o = derive(in, "overcompute.dead_overwritten",
			       arena_printf(a, "the cell of %s the %s of %s write is overwritten later by the stage at line %d",
					    w->buf->name, in->instances, in->where, ow.stage_stmt->span.line),
			       covers, w->span);
	if (w->guard)
		obligation_add_hyp(a, o, w->guard);
	obligation_add_related(a, o, ow.stage_stmt->span);
	oblist_push(a, out, o);
	/* dead_unread: nothing between, nor the stage itself, reads it */
	for (int i = 0; i < ow.nbetween; i++)
		untouched(in, w, ow.between[i], nvol, vol, true, "overcompute.dead_unread",
			  "nothing reads it before it is overwritten", out);
	untouched(in, w, ow.stage_stmt, nvol, vol, true, "overcompute.dead_unread",
		  "the overwriting stage does not read it", out);
	/* dead_untouched: no real instance of the nest reads or writes it
	 * (the candidate's own accesses count only where its condition holds,
	 * as the nest is taken before the rewrite) */
	untouched(in, w, branch, nvol, vol, false, "overcompute.dead_untouched",
		  "the iterations that run in the original never touch it", out);
	return true;
}

/* ---------- races ---------- */

/* Race obligations (kind overcompute.no_race) of loop l of `out`, as
 * parallel/vectorize states them, moved to `into`. */
static void loop_races(RwCtx *c, const Func *out, const Stmt *l, ObligationList *into)
{
	Arena *a = c->arena;
	StmtCtx lc;
	if (!an_find_stmt(a, out, l, &lc))
		return;
	Obligation *base = obligation_new(a, "overcompute.no_race", "", 0, NULL, 0, NULL,
					  ir_bool(a, true), l->span);
	rw_add_context_hyps(c, base, &lc);
	int from = c->obs.n;
	rw_race_obligations(c, "overcompute.no_race", base, l);
	for (int i = from; i < c->obs.n; i++)
		oblist_push(a, into, c->obs.items[i]);
	c->obs.n = from;
}

static bool runs_at_once(const Stmt *s)
{
	return s->kind == ST_FOR &&
	       (s->u.loop.kind == FOR_PARALLEL || s->u.loop.kind == FOR_VECTORIZED);
}

static void inner_races(RwCtx *c, const Func *out, const Stmt *s, ObligationList *into)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			inner_races(c, out, s->u.seq.items[i], into);
		return;
	case ST_FOR:
		if (runs_at_once(s))
			loop_races(c, out, s, into);
		inner_races(c, out, s->u.loop.body, into);
		return;
	case ST_IF:
		inner_races(c, out, s->u.cond.then_s, into);
		if (s->u.cond.else_s)
			inner_races(c, out, s->u.cond.else_s, into);
		return;
	case ST_ALLOC: inner_races(c, out, s->u.alloc.body, into); return;
	case ST_BLOCK: inner_races(c, out, s->u.block.body, into); return;
	case ST_LET: inner_races(c, out, s->u.let.body, into); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* overcompute.no_race: the extra instances run inside the parallel and
 * vectorized loops around the branch, and the loops of its body run in
 * new contexts (the branch condition no longer holds there): every such
 * loop of the result must still be free of races (semantics.md 4,
 * parallel / vectorize), as it was proven before. */
static void race_obligations(RwCtx *c, const StmtCtx *sc, const Func *out, ObligationList *into)
{
	const Stmt *cur = out->body;
	for (int d = 0; d < sc->depth && cur; d++) {
		if (runs_at_once(cur))
			loop_races(c, out, cur, into);
		cur = an_stmt_at(cur, &sc->path[d], 1);
	}
	if (cur)
		inner_races(c, out, cur, into);
}

/* ---------- one candidate ---------- */

/* Build the extra-instance context for `if c: S` at sc. */
static RwStatus make_instance(RwCtx *c, const StmtCtx *sc, Stmt *body, Expr *skip_cond,
			      const Stmt *all_skipped, Instance *in)
{
	Arena *a = c->arena;
	memset(in, 0, sizeof *in);
	in->c = c;
	in->sc = sc;
	in->instances = skip_cond ? "extra instances" : "skipped instances";
	in->every_instance = all_skipped != NULL;
	/* name the file too: a padding stage's span is its script call */
	const char *at = sc->stmt->span.src && sc->stmt->span.src->name
				 ? arena_printf(a, "%s:%d", sc->stmt->span.src->name, sc->stmt->span.line)
				 : arena_printf(a, "line %d", sc->stmt->span.line);
	in->where = all_skipped ? arena_printf(a, "the store at %s", at)
		    : skip_cond ? arena_printf(a, "the branch at %s", at)
				: arena_printf(a, "the store at %s on padding", at);
	const char *why = unsupported_in(body);
	if (why)
		return rw_fail(c, RW_UNSUPPORTED, sc->stmt->span,
			       "overcompute: the branch body holds %s", why);
	Obligation *base = obligation_new(a, "overcompute", "", 0, NULL, 0, NULL,
					  ir_bool(a, true), sc->stmt->span);
	rw_add_context_hyps(c, base, sc);
	/* the extra instances are those where the condition is false; a
	 * condition that reads buffers is left out (weaker, still sound) */
	if (skip_cond && !an_expr_has_load(skip_cond))
		obligation_add_hyp(a, base, skip_cond);
	Buffer **vol;
	int nvol = an_written_buffers(a, body, &vol);
	an_collect_accesses(c->arena, body, 0, NULL, NULL, nvol, vol, &in->acc);
	for (int v = 0; v < in->acc.nvars; v++)
		obligation_add_var(a, base, in->acc.vars[v]);
	for (int h = 0; h < in->acc.nhyps; h++)
		obligation_add_hyp(a, base, in->acc.hyps[h]);
	in->base = base;
	an_facts_for(a, c->func, sc, true, all_skipped, c->facts, NULL, &in->values);
	/* the readable cells only matter for the reads of extra instances
	 * (safety_obligations); remove_no_op's skipped instances run nowhere */
	if (!all_skipped)
		an_facts_for(a, c->func, sc, false, NULL, c->facts, NULL, &in->readable);
	return RW_OK;
}

/* A load of the cell `w` writes, or of a cell that may be it. */
static bool loads_cell_of(const Expr *e, void *ud)
{
	const Access *w = ud;
	return e->kind == EX_LOAD && e->u.load.buf == w->buf &&
	       !(e->u.load.nidx == w->nidx && an_cells_distinct(w->nidx, e->u.load.idx, w->idx));
}

/* The store w certainly cannot be proven a no-op: neither its value nor a
 * hypothesis of its obligation o (the facts instantiated at its loads,
 * the context) reads its cell, so the cell may hold any value but the
 * stored one. Contradictory hypotheses would prove anything, so the
 * context must be plainly satisfiable; contradictory facts (two
 * T.assume of one cell with different values) are not looked for: such
 * a store is kept, a lost removal, never a wrong one. */
static bool noop_hopeless(const StmtCtx *sc, const Access *w, const Obligation *o)
{
	/* only where the context is plainly satisfiable: no path condition
	 * (a case split leaves branches that run nowhere, whose stores are
	 * removed as vacuous no-ops) and loops of constant positive extent */
	if (sc->nconds || (w->guard && !(w->guard->kind == EX_INT && w->guard->u.ival)))
		return false;
	for (int i = 0; i < sc->nloops; i++) {
		int64_t ext;
		if (!an_const_int(sc->loops[i]->u.loop.extent, &ext) || ext <= 0)
			return false;
	}
	if (expr_any(w->value, loads_cell_of, (void *)w))
		return false;
	for (int i = 0; i < o->nhyps; i++)
		if (expr_any(o->hyps[i], loads_cell_of, (void *)w))
			return false;
	return true;
}

static RwStatus plan_stores(Instance *in, OcPlan *plan, const Func *real)
{
	Arena *a = in->c->arena;
	int nw = 0;
	for (int i = 0; i < in->acc.n; i++)
		nw += in->acc.items[i].is_write;
	plan->stores = arena_alloc(a, sizeof(OcStorePlan) * (size_t)(nw + 1));
	for (int i = 0; i < in->acc.n; i++) {
		const Access *w = &in->acc.items[i];
		if (!w->is_write)
			continue;
		OcStorePlan *sp = &plan->stores[plan->nstores++];
		sp->span = w->span;
		while (sp->ndead < OC_MAX_OVERWRITERS &&
		       dead_obligations(in, w, real, sp->ndead, &sp->dead[sp->ndead]))
			sp->ndead++;
		noop_obligation(in, w, &sp->noop);
		/* every instance skipped (remove_no_op): the store itself */
		sp->noop_hopeless = in->every_instance && noop_hopeless(in->sc, w, sp->noop.items[0]);
	}
	return RW_OK;
}

/* ---------- two branches: the kept one does what the other did ---------- */

/* Walk the kept branch k and the dropped branch d in step; where their
 * expressions differ, the obligation overcompute.same_effect says they are
 * equal in the dropped branch's cases (loads in one arbitrary state, which
 * both read alike: the stores before them wrote equal values to the same
 * cells). Loops and lets of d are renamed to k's. False when the shapes
 * differ (not supported).
 * The conditions and loop ranges passed on the way are hypotheses about
 * the state they were evaluated in; one that reads a buffer says nothing
 * of the current state once that buffer may have been written since: it
 * is dropped (NULL) after a store to it, and on entry to a loop whose body
 * writes it (a later iteration runs after that store). */
typedef struct Align {
	Instance *in;
	ObligationList *out;
	int nhyps;
	Expr *hyps[AN_MAX_DEPTH];
	int nvars;
	Var *vars[AN_MAX_DEPTH];
} Align;

static void same_pair(Align *al, Expr *x, Expr *y, Span sp)
{
	if (ir_expr_equal(x, y))
		return;
	Arena *a = al->in->c->arena;
	Obligation *o = derive(al->in, "overcompute.same_effect",
			       arena_printf(a, "in the cases of the dropped branch, the kept branch of %s computes what the dropped one did",
					    al->in->where),
			       ir_bin(a, OP_EQ, x, y, nospan()), sp);
	o->same_value = true;
	for (int i = 0; i < al->nvars; i++)
		obligation_add_var(a, o, al->vars[i]);
	for (int i = 0; i < al->nhyps; i++)
		if (al->hyps[i])
			obligation_add_hyp(a, o, al->hyps[i]);
	an_facts_instantiate(a, &al->in->values, o->goal, o);
	oblist_push(a, al->out, o);
}

static bool push_hyp_al(Align *al, Expr *h)
{
	if (al->nhyps == AN_MAX_DEPTH)
		return false;
	al->hyps[al->nhyps++] = h;
	return true;
}

/* The hypotheses that read a buffer in bufs no longer hold. */
static void drop_hyps_reading(Align *al, int nbufs, Buffer **bufs)
{
	for (int i = 0; i < al->nhyps; i++)
		for (int b = 0; b < nbufs && al->hyps[i]; b++)
			if (an_expr_reads(al->hyps[i], bufs[b]))
				al->hyps[i] = NULL;
}

static bool align(Align *al, const Stmt *k, const Stmt *d)
{
	Arena *a = al->in->c->arena;
	if (k->kind != d->kind)
		return false;
	int nh = al->nhyps, nv = al->nvars;
	bool ok = true;
	switch (k->kind) {
	case ST_SEQ:
		if (k->u.seq.n != d->u.seq.n)
			return false;
		for (int i = 0; i < k->u.seq.n && ok; i++)
			ok = align(al, k->u.seq.items[i], d->u.seq.items[i]);
		return ok;
	case ST_FOR: {
		if (k->u.loop.kind != d->u.loop.kind || al->nvars == AN_MAX_DEPTH)
			return false;
		same_pair(al, k->u.loop.min, d->u.loop.min, k->span);
		same_pair(al, k->u.loop.extent, d->u.loop.extent, k->span);
		Var *dv = d->u.loop.var;
		Expr *kv = ir_varref(a, k->u.loop.var, nospan());
		Stmt *dbody = ir_subst_stmt(a, d->u.loop.body, 1, &dv, &kv);
		al->vars[al->nvars++] = k->u.loop.var;
		ok = push_hyp_al(al, an_loop_range(a, k, kv));
		if (ok) {
			/* every iteration but the first runs after the body's stores */
			Buffer **ws;
			int nw = an_written_buffers(a, k->u.loop.body, &ws);
			drop_hyps_reading(al, nw, ws);
			nw = an_written_buffers(a, dbody, &ws);
			drop_hyps_reading(al, nw, ws);
			ok = align(al, k->u.loop.body, dbody);
		}
		break;
	}
	case ST_IF:
		if (!k->u.cond.else_s != !d->u.cond.else_s)
			return false;
		same_pair(al, k->u.cond.cond, d->u.cond.cond, k->span);
		ok = push_hyp_al(al, k->u.cond.cond) && align(al, k->u.cond.then_s, d->u.cond.then_s);
		al->nhyps = nh;
		if (ok && k->u.cond.else_s)
			ok = push_hyp_al(al, ir_not(a, k->u.cond.cond, nospan())) &&
			     align(al, k->u.cond.else_s, d->u.cond.else_s);
		break;
	case ST_STORE:
		if (k->u.store.buf != d->u.store.buf || k->u.store.nidx != d->u.store.nidx)
			return false;
		for (int i = 0; i < k->u.store.nidx; i++)
			same_pair(al, k->u.store.idx[i], d->u.store.idx[i], k->span);
		same_pair(al, k->u.store.value, d->u.store.value, k->span);
		{
			Buffer *b = k->u.store.buf;
			drop_hyps_reading(al, 1, &b);
		}
		return true;
	case ST_LET: {
		if (al->nvars == AN_MAX_DEPTH)
			return false;
		same_pair(al, k->u.let.value, d->u.let.value, k->span);
		Var *dv = d->u.let.var;
		Expr *kv = ir_varref(a, k->u.let.var, nospan());
		Stmt *dbody = ir_subst_stmt(a, d->u.let.body, 1, &dv, &kv);
		al->vars[al->nvars++] = k->u.let.var;
		ok = (an_expr_has_load(k->u.let.value) ||
		      push_hyp_al(al, ir_bin(a, OP_EQ, kv, k->u.let.value, nospan()))) &&
		     align(al, k->u.let.body, dbody);
		break;
	}
	case ST_ASSUME: case ST_EVAL:
		same_pair(al, k->u.expr, d->u.expr, k->span);
		return true;
	case ST_BLOCK:
		return align(al, k->u.block.body, d->u.block.body);
	case ST_PASS:
		return true;
	case ST_ALLOC: case ST_COUNT:
		return false;
	}
	al->nhyps = nh;
	al->nvars = nv;
	return ok;
}

/* `if c: S1 else: S2` -> the branch kept, S1 (keep_then) or S2. */
static RwStatus two_branch_plan(RwCtx *c, const Stmt *target, StmtCtx *scp, bool keep_then,
				OcPlan *plan)
{
	Arena *a = c->arena;
	Stmt *kept = keep_then ? target->u.cond.then_s : target->u.cond.else_s;
	Stmt *dropped = keep_then ? target->u.cond.else_s : target->u.cond.then_s;
	Expr *cond = target->u.cond.cond;
	Expr *skip = keep_then ? ir_not(a, cond, nospan()) : cond;
	Instance *in = arena_alloc(a, sizeof *in);
	RwStatus st = make_instance(c, scp, kept, skip, NULL, in);
	if (st != RW_OK)
		return st;
	plan->instance = in;
	plan->sc = scp;
	Align al;
	memset(&al, 0, sizeof al);
	al.in = in;
	al.out = &plan->safety;
	if (!align(&al, kept, dropped))
		return rw_fail(c, RW_UNSUPPORTED, target->span,
			       "overcompute: the two branches differ in shape (only branches that differ in expressions can be merged)");
	/* the kept branch also runs safely there */
	safety_obligations(in, &plan->safety);
	plan->nstores = 0;
	plan->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, scp->path, scp->depth,
							   kept));
	return RW_OK;
}

static RwStatus plan_for(RwCtx *c, const Stmt *target, OcPlan *plan, bool remove,
			 bool every_instance);

RwStatus rw_overcompute_plan(RwCtx *c, const Stmt *target, OcPlan *plan, bool remove)
{
	return plan_for(c, target, plan, remove, false);
}

/* every_instance: all instances of target are skipped (remove_no_op) */
static RwStatus plan_for(RwCtx *c, const Stmt *target, OcPlan *plan, bool remove,
			 bool every_instance)
{
	Arena *a = c->arena;
	memset(plan, 0, sizeof *plan);
	/* in the arena, not on this stack frame: the Instance keeps a pointer
	 * to it, and rw_branch_plan finishes the plan after this returns */
	StmtCtx *scp = arena_alloc(a, sizeof *scp);
	if (!an_find_stmt(a, c->func, target, scp))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "overcompute: candidate not found");
	const StmtCtx sc = *scp;
	plan->line = target->span.line;
	Stmt *body;
	Expr *skip;
	if (remove) {
		if (target->kind != ST_IF)
			return rw_fail(c, RW_BAD_INPUT, target->span, "overcompute: not a branch");
		if (target->u.cond.else_s) {
			/* keep the then part, else the else part */
			OcPlan first;
			memset(&first, 0, sizeof first);
			first.line = plan->line;
			RwStatus st = two_branch_plan(c, target, scp, true, &first);
			if (st == RW_OK) {
				*plan = first;
				plan->alternative = arena_alloc(a, sizeof(OcPlan));
				memset(plan->alternative, 0, sizeof(OcPlan));
				plan->alternative->line = plan->line;
				if (two_branch_plan(c, target, scp, false, plan->alternative) != RW_OK)
					plan->alternative = NULL;
			}
			return st;
		}
		body = target->u.cond.then_s;
		skip = ir_not(a, target->u.cond.cond, nospan());
	} else {
		body = (Stmt *)target;
		skip = NULL;
	}
	Instance *in = arena_alloc(a, sizeof *in);
	RwStatus st = make_instance(c, scp, body, skip, every_instance ? target : NULL, in);
	if (st != RW_OK)
		return st;
	plan->instance = in;
	plan->sc = scp;
	if (!remove)
		return RW_OK; /* rw_branch_plan finishes it */
	safety_obligations(in, &plan->safety);
	plan->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, body));
	race_obligations(c, scp, plan->out, &plan->safety);
	return plan_stores(in, plan, c->func);
}

/* ---------- candidates ---------- */

static void add_candidate(OcCandidates *cs, Arena *a, const Stmt *s)
{
	VEC_RESERVE(a, cs->items, cs->n, cs->cap);
	cs->items[cs->n++] = s;
}

static void collect_ifs(const Stmt *s, Arena *a, OcCandidates *cs)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			collect_ifs(s->u.seq.items[i], a, cs);
		return;
	case ST_FOR: collect_ifs(s->u.loop.body, a, cs); return;
	case ST_IF:
		if (has_store(s))
			add_candidate(cs, a, s);
		collect_ifs(s->u.cond.then_s, a, cs);
		if (s->u.cond.else_s)
			collect_ifs(s->u.cond.else_s, a, cs);
		return;
	case ST_ALLOC: collect_ifs(s->u.alloc.body, a, cs); return;
	case ST_BLOCK: collect_ifs(s->u.block.body, a, cs); return;
	case ST_LET: collect_ifs(s->u.let.body, a, cs); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

RwStatus rw_overcompute_candidates(RwCtx *c, const char *block, const char *loop,
				   OcCandidates *out)
{
	Arena *a = c->arena;
	memset(out, 0, sizeof *out);
	if (loop) {
		StmtCtx sc;
		RwStatus st = rw_find_loop(c, loop, &sc);
		if (st != RW_OK)
			return st;
		const Stmt *b = sc.stmt->u.loop.body;
		if (b->kind == ST_IF && has_store(b))
			add_candidate(out, a, b);
		if (b->kind == ST_SEQ)
			for (int i = 0; i < b->u.seq.n; i++)
				if (b->u.seq.items[i]->kind == ST_IF && has_store(b->u.seq.items[i]))
					add_candidate(out, a, b->u.seq.items[i]);
		return RW_OK;
	}
	const Stmt *scope = c->func->body;
	if (block) {
		scope = rw_find_block(c->func, block);
		if (!scope)
			return rw_fail(c, RW_BAD_INPUT, c->call_span, "no block '%s' in function '%s'%s",
				       block, c->func->name, rw_block_hint(c->arena, c->func, block));
	}
	collect_ifs(scope, a, out);
	return RW_OK;
}

/* Stores to padded buffers in scope: remove_overcompute_through_branching.
 * A store already under an `if` on its own pad predicate (the pad stage,
 * which writes only padding) or on its negation (a store guarded before)
 * is no candidate: guarding it again would drop every instance or none. */
typedef struct CondFrame {
	const Expr *cond;
	const struct CondFrame *up;
} CondFrame;

/* A comparison of integer linear forms over vs as `sum coef*v + c <= 0`
 * (strict ones shifted by one), or `== 0` / `!= 0` (*rel 1 / 2). */
#define PADTEST_MAX 8
typedef struct LinCmp {
	int rel; /* 0: <= 0, 1: == 0, 2: != 0 */
	int64_t coef[PADTEST_MAX], c;
} LinCmp;

static void collect_int_vars(const Expr *e, int *n, Var **vs)
{
	switch (e->kind) {
	case EX_VAR:
		for (int i = 0; i < *n; i++)
			if (vs[i] == e->u.var)
				return;
		if (*n < PADTEST_MAX)
			vs[(*n)++] = e->u.var;
		return;
	case EX_BIN:
		collect_int_vars(e->u.bin.a, n, vs);
		collect_int_vars(e->u.bin.b, n, vs);
		return;
	case EX_NOT: case EX_NEG: case EX_CAST:
		collect_int_vars(e->u.un.a, n, vs);
		return;
	/* a pad test is linear in loop variables: variables under a select,
	 * a load or a let make it no pad test (lin_cmp fails on them) */
	case EX_INT: case EX_FLOAT: case EX_SELECT: case EX_LOAD: case EX_UNDEF: case EX_LET:
	case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return;
	}
}

static bool lin_cmp(Expr *e, int nv, Var **vs, LinCmp *out)
{
	if (e->kind != EX_BIN)
		return false;
	int64_t ca[PADTEST_MAX], cb[PADTEST_MAX], ka, kb;
	if (!arith_linear(e->u.bin.a, nv, vs, ca, &ka) || !arith_linear(e->u.bin.b, nv, vs, cb, &kb))
		return false;
	int sign = 1, shift = 0;
	switch (e->u.bin.op) {
	case OP_LE: out->rel = 0; break;		       /* a - b <= 0 */
	case OP_LT: out->rel = 0; shift = 1; break;	       /* a - b + 1 <= 0 */
	case OP_GE: out->rel = 0; sign = -1; break;	       /* b - a <= 0 */
	case OP_GT: out->rel = 0; sign = -1; shift = 1; break; /* b - a + 1 <= 0 */
	case OP_EQ: out->rel = 1; break;
	case OP_NE: out->rel = 2; break;
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD:
	case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	for (int j = 0; j < nv; j++)
		out->coef[j] = sign * (ca[j] - cb[j]);
	out->c = sign * (ka - kb) + shift;
	return true;
}

static bool lin_cmp_same(const LinCmp *x, const LinCmp *y, int nv)
{
	if (x->rel != y->rel || x->c != y->c)
		return false;
	for (int j = 0; j < nv; j++)
		if (x->coef[j] != y->coef[j])
			return false;
	return true;
}

/* The condition is the pad test at the store or its negation, up to the
 * order of linear terms (candidate choice only: nothing here needs to be
 * trusted, a store wrongly left out is just not rewritten). */
static bool is_pad_test(Expr *cond, Expr *at, Expr *not_at)
{
	if (ir_expr_equal(cond, at) || ir_expr_equal(cond, not_at))
		return true;
	Var *vs[PADTEST_MAX];
	int nv = 0;
	collect_int_vars(at, &nv, vs);
	LinCmp lc, la, ln;
	if (nv == PADTEST_MAX || !lin_cmp(cond, nv, vs, &lc))
		return false;
	return (lin_cmp(at, nv, vs, &la) && lin_cmp_same(&lc, &la, nv)) ||
	       (lin_cmp(not_at, nv, vs, &ln) && lin_cmp_same(&lc, &ln, nv));
}

static bool under_pad_test(Arena *a, const Stmt *store, const CondFrame *conds)
{
	const Layout *lay = store->u.store.buf->layout;
	Expr *pad = lay->all_padding ? lay->all_padding : lay->pad_predicate;
	Expr *at = ir_subst_expr(a, pad, store->u.store.nidx, lay->inv_vars, store->u.store.idx);
	Expr *not_at = imap_negate(a, at);
	for (const CondFrame *f = conds; f; f = f->up)
		if (is_pad_test((Expr *)f->cond, at, not_at))
			return true;
	return false;
}

/* The statement the candidates come from: block `block`, or the body. */
static RwStatus candidate_scope(RwCtx *c, const char *block, const Stmt **scope)
{
	*scope = block ? rw_find_block(c->func, block) : c->func->body;
	if (!*scope)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "no block '%s' in function '%s'%s",
			       block, c->func->name, rw_block_hint(c->arena, c->func, block));
	return RW_OK;
}

static void collect_padded_stores(const Stmt *s, Arena *a, OcCandidates *cs, const CondFrame *conds)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			collect_padded_stores(s->u.seq.items[i], a, cs, conds);
		return;
	case ST_FOR: collect_padded_stores(s->u.loop.body, a, cs, conds); return;
	case ST_IF: {
		CondFrame f = {s->u.cond.cond, conds};
		collect_padded_stores(s->u.cond.then_s, a, cs, &f);
		if (s->u.cond.else_s)
			collect_padded_stores(s->u.cond.else_s, a, cs, &f);
		return;
	}
	case ST_STORE: {
		const Layout *lay = s->u.store.buf->layout;
		if (!lay || !lay->inv_vars || !(lay->all_padding || lay->pad_predicate))
			return;
		if (under_pad_test(a, s, conds))
			cs->guarded++;
		else
			add_candidate(cs, a, s);
		return;
	}
	case ST_ALLOC: collect_padded_stores(s->u.alloc.body, a, cs, conds); return;
	case ST_BLOCK: collect_padded_stores(s->u.block.body, a, cs, conds); return;
	case ST_LET: collect_padded_stores(s->u.let.body, a, cs, conds); return;
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

RwStatus rw_padded_store_candidates(RwCtx *c, const char *block, OcCandidates *out)
{
	memset(out, 0, sizeof *out);
	const Stmt *scope;
	RwStatus st = candidate_scope(c, block, &scope);
	if (st == RW_OK)
		collect_padded_stores(scope, c->arena, out, NULL);
	return st;
}

/* `X[e] = v` -> `if not pad(e): X[e] = v`: the skipped instances (pad(e))
 * must be harmless, exactly as extra instances are. */
RwStatus rw_branch_plan(RwCtx *c, const Stmt *store, OcPlan *plan)
{
	Arena *a = c->arena;
	const Layout *lay = store->u.store.buf->layout;
	Expr *pad = lay->all_padding ? lay->all_padding : lay->pad_predicate;
	Expr *at = ir_subst_expr(a, pad, store->u.store.nidx, lay->inv_vars, store->u.store.idx);
	RwStatus st = rw_overcompute_plan(c, store, plan, false);
	if (st != RW_OK)
		return st;
	/* the skipped instances are those on padding; removing instances
	 * cannot add undefined behaviour, so no safety obligations */
	obligation_add_hyp(a, plan->instance->base, at);
	Stmt *guarded = ir_if(a, imap_negate(a, at), (Stmt *)store, NULL, store->span);
	plan->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, plan->sc->path,
							   plan->sc->depth, guarded));
	return plan_stores(plan->instance, plan, plan->out);
}

/* `X[e] = v` -> nothing (remove_no_op): every instance of the store is
 * skipped, so each must be a no-op or dead, exactly as the extra
 * instances of overcompute; removing instances adds no undefined
 * behaviour, so no safety obligations. */
RwStatus rw_remove_store_plan(RwCtx *c, const Stmt *store, OcPlan *plan)
{
	RwStatus st = plan_for(c, store, plan, false, true);
	if (st != RW_OK)
		return st;
	/* most stores of a long kernel are neither: they are told apart here,
	 * by the cells their facts and later stages name, before the
	 * rewritten function or any query is built */
	Instance *in = plan->instance;
	bool hopeless = true;
	for (int i = 0; i < in->acc.n && hopeless; i++) {
		const Access *w = &in->acc.items[i];
		if (!w->is_write)
			continue;
		ObligationList noop = {0};
		noop_obligation(in, w, &noop);
		Overwriter ow;
		hopeless = noop_hopeless(in->sc, w, noop.items[0]) &&
			   !find_overwriter(c->func, in->sc, w, 0, &ow);
	}
	if (hopeless) {
		plan->hopeless = true;
		return RW_OK;
	}
	/* the rewritten function is built once the plan is proven
	 * (rw_remove_store_result): most candidates are not, and each copy of
	 * a long sequence costs its length */
	return plan_stores(plan->instance, plan, NULL);
}

Func *rw_remove_store_result(RwCtx *c, const OcPlan *plan)
{
	Arena *a = c->arena;
	return an_with_body(a, c->func, an_replace_at(a, c->func->body, plan->sc->path, plan->sc->depth,
						      ir_pass(a, plan->sc->stmt->span)));
}

typedef struct StoreWalk {
	Arena *a;
	OcCandidates *cs;
} StoreWalk;

static bool add_store(const Stmt *s, void *ud)
{
	StoreWalk *w = ud;
	if (s->kind == ST_STORE)
		add_candidate(w->cs, w->a, s);
	return false; /* visit every statement */
}

static void collect_stores(const Stmt *s, Arena *a, OcCandidates *cs)
{
	StoreWalk w = {a, cs};
	stmt_find(s, add_store, &w);
}

RwStatus rw_store_candidates(RwCtx *c, const char *block, OcCandidates *out)
{
	memset(out, 0, sizeof *out);
	const Stmt *scope;
	RwStatus st = candidate_scope(c, block, &scope);
	if (st == RW_OK)
		collect_stores(scope, c->arena, out);
	return st;
}
