/* backend/lower.c — the statement-level lowering passes of semantics.md
 * section 7 that run before flattening: RemoveAssume (assumptions are
 * hypotheses of the proofs, never run-time checks), RemoveStoreUndef (a
 * store of T.undef() leaves the location unconstrained, so not writing it
 * is one of its allowed outcomes) and the clean-up of statements that
 * became empty; lower_func chains them with flattening. */
#include "backend/backend.h"
#include "rewrites/rewrite.h"

#include <stdlib.h>
#include <string.h>

/* ---------- buffer sets ---------- */

/* ---------- a statement map ---------- */

/* Rewrites a statement tree bottom-up: `leaf` is asked about every store,
 * assume, eval and pass and returns the replacement (or the statement
 * itself). Unchanged subtrees are shared. */
typedef struct StmtMap {
	Arena *a;
	Stmt *(*leaf)(struct StmtMap *m, Stmt *s);
	BufSet *undef_bufs;
	/* loops compiled serially (annotation not proven); may be NULL */
	const Stmt *const *serial;
	int nserial;
	bool all_serial; /* every parallel and vectorized loop */
} StmtMap;

static bool made_serial(const StmtMap *m, const Stmt *loop)
{
	if (m->all_serial)
		return loop->u.loop.kind == FOR_PARALLEL || loop->u.loop.kind == FOR_VECTORIZED;
	for (int i = 0; i < m->nserial; i++)
		if (m->serial[i] == loop)
			return true;
	return false;
}

static Stmt *map_stmt(StmtMap *m, Stmt *s);

static Stmt *map_seq(StmtMap *m, Stmt *s)
{
	int n = s->u.seq.n;
	Stmt **items = arena_alloc(m->a, sizeof(Stmt *) * (size_t)(n ? n : 1));
	bool changed = false;
	for (int i = 0; i < n; i++) {
		items[i] = map_stmt(m, s->u.seq.items[i]);
		changed |= items[i] != s->u.seq.items[i];
	}
	return changed ? ir_seq(m->a, n, items, s->span) : s;
}

static Stmt *map_stmt(StmtMap *m, Stmt *s)
{
	Stmt *x, *y;
	switch (s->kind) {
	case ST_SEQ:
		return map_seq(m, s);
	case ST_FOR:
		x = map_stmt(m, s->u.loop.body);
		if (made_serial(m, s))
			return ir_for(m->a, s->u.loop.var, s->u.loop.min, s->u.loop.extent,
				      FOR_SERIAL, x, s->span);
		return x == s->u.loop.body ? s
					   : ir_for(m->a, s->u.loop.var, s->u.loop.min,
						    s->u.loop.extent, s->u.loop.kind, x, s->span);
	case ST_IF:
		x = map_stmt(m, s->u.cond.then_s);
		y = s->u.cond.else_s ? map_stmt(m, s->u.cond.else_s) : NULL;
		return x == s->u.cond.then_s && y == s->u.cond.else_s
			       ? s
			       : ir_if(m->a, s->u.cond.cond, x, y, s->span);
	case ST_ALLOC:
		if (!s->u.alloc.body)
			return s;
		x = map_stmt(m, s->u.alloc.body);
		return x == s->u.alloc.body ? s : ir_alloc(m->a, s->u.alloc.buf, x, s->span);
	case ST_BLOCK:
		x = map_stmt(m, s->u.block.body);
		return x == s->u.block.body ? s : ir_block(m->a, s->u.block.name, x, s->span);
	case ST_LET:
		x = map_stmt(m, s->u.let.body);
		return x == s->u.let.body ? s
					  : ir_letstmt(m->a, s->u.let.var, s->u.let.value, x, s->span);
	case ST_STORE:
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
		return m->leaf(m, s);
	case ST_COUNT:
		break;
	}
	return s;
}

/* ---------- RemoveAssume ---------- */

static Stmt *keep_leaf(StmtMap *m, Stmt *s)
{
	(void)m;
	return s;
}

/* ---------- annotations ---------- */

typedef struct Annotated {
	Arena *a;
	int n, cap;
	Stmt **loops;
	StmtCtx *ctx;
} Annotated;

static void find_annotated(void *ud, Stmt *s, const StmtCtx *sc)
{
	Annotated *w = ud;
	if (s->kind != ST_FOR || (s->u.loop.kind != FOR_PARALLEL && s->u.loop.kind != FOR_VECTORIZED))
		return;
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 8;
		Stmt **loops = arena_alloc(w->a, sizeof *loops * (size_t)cap);
		StmtCtx *ctx = arena_alloc(w->a, sizeof *ctx * (size_t)cap);
		if (w->n) {
			memcpy(loops, w->loops, sizeof *loops * (size_t)w->n);
			memcpy(ctx, w->ctx, sizeof *ctx * (size_t)w->n);
		}
		w->loops = loops;
		w->ctx = ctx;
		w->cap = cap;
	}
	w->loops[w->n] = s;
	w->ctx[w->n++] = *sc;
}

const Func *lower_prove_annotations(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
				    const Func *f, LowerStats *stats, DiagList *d)
{
	Annotated w = {.a = a};
	RwCtx whole = {.arena = a, .func = f, .float_mode = fm};
	const char *deep = rw_nesting_too_deep(&whole);
	if (deep) {
		/* the walks that find the loops and build their race
		 * obligations would stop early: nothing is proven */
		StmtMap all = {.a = a, .leaf = keep_leaf, .all_serial = true};
		Stmt *body = map_stmt(&all, f->body);
		if (body == f->body)
			return f;
		diag_add(d, DIAG_WARNING, f->span,
			 "parallel and vectorized loops of '%s' are compiled as serial loops: %s",
			 f->name, deep);
		stats->nserialized++;
		return ir_func(a, f->name, f->nparams, f->params, body, f->span);
	}
	an_walk(a, f, find_annotated, &w);
	if (w.n == 0)
		return f;
	const Stmt **serial = arena_alloc(a, sizeof *serial * (size_t)w.n);
	int nserial = 0;
	for (int i = 0; i < w.n; i++) {
		const Stmt *l = w.loops[i];
		bool par = l->u.loop.kind == FOR_PARALLEL;
		const char *kind = par ? "parallel.no_race" : "vectorize.no_race";
		DiagList scratch;
		diag_init(&scratch, a);
		RwCtx c = {.arena = a, .func = f, .float_mode = fm, .diag = &scratch,
			   .desc = arena_printf(a, "build: %s loop '%s'", par ? "parallel" : "vectorized",
						l->u.loop.var->name)};
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true),
						  l->span);
		rw_add_context_hyps(&c, base, &w.ctx[i]);
		rw_race_obligations(&c, kind, base, l);
		int n = c.obs.n;
		ObligationResult *res = arena_alloc(a, sizeof *res * (size_t)(n ? n : 1));
		smt_discharge_all(solver, a, n, c.obs.items, fm, res);
		int failed = -1;
		for (int k = 0; k < n; k++) {
			if (log)
				proof_log_obligation(log, c.obs.items[k], &res[k], fm);
			stats->nobligations++;
			stats->solver_seconds += res[k].seconds;
			if (res[k].verdict == VERDICT_PROVEN)
				stats->nproven++;
			else if (failed < 0)
				failed = k;
		}
		if (failed < 0)
			continue;
		const Obligation *o = c.obs.items[failed];
		const char *why = res[failed].verdict == VERDICT_REFUTED
					  ? "refuted"
					  : arena_printf(a, "not proven: %s",
							 res[failed].reason ? res[failed].reason : "unknown");
		diag_add(d, DIAG_WARNING, l->span,
			 "%s loop '%s' is compiled as a serial loop: obligation %s %s (%s)",
			 par ? "parallel" : "vectorized", l->u.loop.var->name, o->kind, why,
			 o->statement);
		serial[nserial++] = l;
		stats->nserialized++;
	}
	if (nserial == 0)
		return f;
	StmtMap m = {.a = a, .leaf = keep_leaf, .serial = serial, .nserial = nserial};
	return ir_func(a, f->name, f->nparams, f->params, map_stmt(&m, f->body), f->span);
}

static Stmt *drop_assume(StmtMap *m, Stmt *s)
{
	return s->kind == ST_ASSUME ? ir_pass(m->a, s->span) : s;
}

Stmt *lower_remove_assume(Arena *a, Stmt *s)
{
	StmtMap m = {.a = a, .leaf = drop_assume};
	return map_stmt(&m, s);
}

/* ---------- RemoveStoreUndef ---------- */

/* T.undef(), possibly converted: the stored value is unconstrained. A
 * value that merely contains T.undef() (0 * T.undef() is 0) is kept. */
static bool is_undef_value(const Expr *e)
{
	while (e->kind == EX_CAST)
		e = e->u.un.a;
	return e->kind == EX_UNDEF;
}

static Stmt *drop_undef_store(StmtMap *m, Stmt *s)
{
	if (s->kind != ST_STORE || !is_undef_value(s->u.store.value))
		return s;
	if (m->undef_bufs)
		bufset_add(m->a, m->undef_bufs, s->u.store.buf);
	return ir_pass(m->a, s->span);
}

Stmt *lower_remove_undef_stores(Arena *a, Stmt *s, BufSet *bufs)
{
	StmtMap m = {.a = a, .leaf = drop_undef_store, .undef_bufs = bufs};
	return map_stmt(&m, s);
}

/* ---------- dropping empty statements ---------- */

static bool is_pass(const Stmt *s) { return !s || s->kind == ST_PASS; }

static Stmt *drop_seq(Arena *a, Stmt *s)
{
	int n = s->u.seq.n, k = 0;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n ? n : 1));
	bool changed = false;
	for (int i = 0; i < n; i++) {
		Stmt *x = lower_drop_empty(a, s->u.seq.items[i]);
		changed |= x != s->u.seq.items[i];
		if (is_pass(x)) {
			changed = true;
			continue;
		}
		items[k++] = x;
	}
	if (k == 0)
		return ir_pass(a, s->span);
	if (k == 1)
		return items[0];
	return changed ? ir_seq(a, k, items, s->span) : s;
}

Stmt *lower_drop_empty(Arena *a, Stmt *s)
{
	Stmt *x, *y;
	switch (s->kind) {
	case ST_SEQ:
		return drop_seq(a, s);
	case ST_FOR:
		x = lower_drop_empty(a, s->u.loop.body);
		if (is_pass(x)) /* a loop has no effect of its own */
			return ir_pass(a, s->span);
		return x == s->u.loop.body ? s
					   : ir_for(a, s->u.loop.var, s->u.loop.min,
						    s->u.loop.extent, s->u.loop.kind, x, s->span);
	case ST_IF:
		x = lower_drop_empty(a, s->u.cond.then_s);
		y = s->u.cond.else_s ? lower_drop_empty(a, s->u.cond.else_s) : NULL;
		if (y && is_pass(y))
			y = NULL;
		if (is_pass(x) && !y) /* conditions are pure */
			return ir_pass(a, s->span);
		return x == s->u.cond.then_s && y == s->u.cond.else_s
			       ? s
			       : ir_if(a, s->u.cond.cond, x, y, s->span);
	case ST_ALLOC:
		x = s->u.alloc.body ? lower_drop_empty(a, s->u.alloc.body) : NULL;
		if (is_pass(x))
			return ir_pass(a, s->span);
		return x == s->u.alloc.body ? s : ir_alloc(a, s->u.alloc.buf, x, s->span);
	case ST_BLOCK:
		x = lower_drop_empty(a, s->u.block.body);
		if (is_pass(x))
			return ir_pass(a, s->span);
		return x == s->u.block.body ? s : ir_block(a, s->u.block.name, x, s->span);
	case ST_LET:
		x = lower_drop_empty(a, s->u.let.body);
		if (is_pass(x))
			return ir_pass(a, s->span);
		return x == s->u.let.body ? s
					  : ir_letstmt(a, s->u.let.var, s->u.let.value, x, s->span);
	case ST_EVAL: /* expressions are pure: evaluating one has no effect */
		return ir_pass(a, s->span);
	case ST_STORE:
	case ST_ASSUME:
	case ST_PASS:
		return s;
	case ST_COUNT:
		break;
	}
	return s;
}

/* ---------- the pipeline ---------- */

bool lower_func(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
		const FlattenOptions *opt, const Func *f, LoweredFunc *out,
		LowerStats *stats, DiagList *d)
{
	BufSet undef_bufs = {0};
	Stmt *body = lower_remove_assume(a, f->body);
	body = lower_remove_undef_stores(a, body, &undef_bufs);
	body = lower_drop_empty(a, body);
	Func *g = ir_func(a, f->name, f->nparams, f->params, body, f->span);
	if (!lower_flatten(a, solver, fm, log, opt, f, g, out, stats, d))
		return false;
	/* the undef set names scheduled buffers: map it to the flat ones */
	for (int i = 0; i < undef_bufs.n; i++)
		for (int k = 0; k < out->nbufs; k++)
			if (out->bufs[k].physical == undef_bufs.items[i])
				bufset_add(a, &out->undef_bufs, out->bufs[k].flat);
	return true;
}
