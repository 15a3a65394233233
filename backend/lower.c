/* backend/lower.c — the statement-level lowering passes of semantics.md
 * section 7 that run before flattening: RemoveAssume (assumptions are
 * hypotheses of the proofs, never run-time checks), RemoveStoreUndef (a
 * store of T.undef() leaves the location unconstrained, so not writing it
 * is one of its allowed outcomes) and the clean-up of statements that
 * became empty; lower_func chains them with flattening. The parallel and
 * vectorize annotations were proven before (sched_prove_annotations). */
#include "backend/backend.h"
#include "kernel/analysis/stmt_map.h"

#include <stdlib.h>
#include <string.h>

/* ---------- RemoveAssume ---------- */

static Stmt *drop_assume(StmtMap *m, Stmt *s)
{
	return s->kind == ST_ASSUME ? ir_pass(m->a, s->span) : s;
}

Stmt *lower_remove_assume(Arena *a, Stmt *s)
{
	StmtMap m = {.a = a, .leaf = drop_assume};
	return an_map_stmt(&m, s);
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
	if (m->ud)
		bufset_add(m->a, m->ud, s->u.store.buf);
	return ir_pass(m->a, s->span);
}

Stmt *lower_remove_undef_stores(Arena *a, Stmt *s, BufSet *bufs)
{
	StmtMap m = {.a = a, .leaf = drop_undef_store, .ud = bufs};
	return an_map_stmt(&m, s);
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
		return ir_block_with(a, s, x);
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
	/* an opaque call (T.call_extern ...) is not compiled: emitting it
	 * would need its calling convention and a model of what it touches,
	 * which vsched does not have (semantics.md 9) */
	const Expr *opq = ir_stmt_find_opaque(f->body);
	if (opq) {
		diag_add(d, DIAG_ERROR, opq->span, "not supported: the opaque call T.%s in '%s' "
			 "cannot be compiled (what it reads and writes is unknown)",
			 opq->u.opq.name, f->name);
		return false;
	}
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
