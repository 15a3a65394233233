/* rewrites/safety.c — the undefined behaviour a kernel can have as written
 * (semantics.md 1): every buffer access stays inside the buffer's physical
 * shape, and every integer division or modulo has a non-zero divisor.
 * One obligation per access and per division, at its statement with the
 * statement's context (loop ranges, path conditions, lets, entry facts)
 * and the guard under which the expression is evaluated: the taken arm of
 * a T.if_then_else, the right operand of `and`/`or` only when the left one
 * does not decide (the interpreter evaluates exactly these). The build
 * proves them and warns about each one not proven; they never change a
 * verdict of a schedule step. */
#include "rewrites/rewrite.h"
#include "kernel/analysis/index_map.h"
#include "kernel/print.h"

#include <stdlib.h>

static Span nospan(void) { return (Span){0}; }

typedef struct Safety {
	RwCtx *c;
	const StmtCtx *sc;
	int budget;   /* obligations still allowed */
	int skipped;  /* obligations not stated for the budget */
	int nshape_hyps, cap_shape_hyps;
	Expr **shape_hyps;
} Safety;

/* The largest extent of a buffer that exists: no address space holds
 * more than 2^48 cells. */
#define SAFETY_MAX_EXTENT ((int64_t)1 << 48)

/* A buffer parameter is memory the caller passes, so its extents are at
 * most SAFETY_MAX_EXTENT, and so is every size variable its shape uses
 * (`n` in `(8, n * 32)`). Without these, the counterexamples of these
 * obligations are sizes no caller can pass, whose index arithmetic
 * wraps. They are hypotheses of the warnings only: no rewrite uses them. */
static void shape_hyps(Safety *w)
{
	Arena *a = w->c->arena;
	const Func *f = w->c->func;
	Expr *max = ir_int(a, SAFETY_MAX_EXTENT, DT_INT64, nospan());
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR) {
			if (!dtype_is_int(p->var->dtype))
				continue;
			bool in_shape = false;
			for (int j = 0; j < f->nparams && !in_shape; j++)
				if (f->params[j].kind != PARAM_SCALAR && f->params[j].buf)
					for (int k = 0; k < f->params[j].buf->ndim; k++)
						in_shape |= ir_expr_uses_var(f->params[j].buf->shape[k], p->var);
			if (in_shape)
				VEC_PUSH(a, w->shape_hyps, w->nshape_hyps, w->cap_shape_hyps,
					 ir_bin(a, OP_LE, ir_varref(a, p->var, nospan()), max, nospan()));
			continue;
		}
		for (int k = 0; p->buf && k < p->buf->ndim; k++) {
			Expr *e = p->buf->shape[k];
			Expr *zero = ir_int(a, 0, e->dtype, nospan());
			VEC_PUSH(a, w->shape_hyps, w->nshape_hyps, w->cap_shape_hyps,
				 ir_and(a, ir_bin(a, OP_LE, zero, e, nospan()),
					ir_bin(a, OP_LE, e, max, nospan())));
		}
	}
}

static char *text(Arena *a, const Expr *e)
{
	char *t = print_expr(e);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

static Expr *implies(Arena *a, Expr *p, Expr *q)
{
	return p ? ir_or(a, ir_not(a, p, nospan()), q) : q;
}

static void state(Safety *w, const char *kind, const char *statement, Expr *guard, Expr *goal,
		  Span sp)
{
	if (w->budget <= 0) {
		w->skipped++;
		return;
	}
	w->budget--;
	Obligation *o = rw_obligation_at(w->c, &w->c->obs, w->sc, kind, statement,
					 implies(w->c->arena, guard, goal));
	if (sp.src)
		o->origin = sp;
	for (int k = 0; k < w->nshape_hyps; k++)
		obligation_add_hyp(w->c->arena, o, w->shape_hyps[k]);
}

static void access(Safety *w, Buffer *b, int nidx, Expr **idx, bool is_write, Expr *guard,
		   Span sp)
{
	Arena *a = w->c->arena;
	Expr *inside = imap_in_box(a, nidx, idx, b->shape);
	if (!inside)
		return;
	StrBuf shape = {0};
	for (int k = 0; k < b->ndim; k++)
		sb_printf(&shape, "%s%s", k ? ", " : "", text(a, b->shape[k]));
	char *sh = sb_take(&shape);
	state(w, "safety.in_bounds",
	      arena_printf(a, "the %s of %s at line %d stays inside its shape [%s]",
			   is_write ? "write" : "read", b->name, sp.line, sh),
	      guard, inside, sp);
	free(sh);
}

/* e evaluated when `guard` holds (NULL: always) */
static void walk(Safety *w, Expr *e, Expr *guard)
{
	if (!e)
		return;
	Arena *a = w->c->arena;
	if (e->kind == EX_SELECT) {
		walk(w, e->u.sel.cond, guard);
		walk(w, e->u.sel.a, ir_and(a, guard, e->u.sel.cond));
		walk(w, e->u.sel.b, ir_and(a, guard, ir_not(a, e->u.sel.cond, nospan())));
		return;
	}
	if (e->kind == EX_LET) {
		walk(w, e->u.let.value, guard);
		Var *v = e->u.let.var;
		Expr *val = e->u.let.value;
		walk(w, ir_subst_expr(a, e->u.let.body, 1, &v, &val), guard);
		return;
	}
	if (e->kind == EX_BIN && binop_is_logical(e->u.bin.op)) {
		Expr *l = e->u.bin.a;
		walk(w, l, guard);
		/* `a and b` evaluates b only when a holds; `a or b` when it fails */
		Expr *cond = e->u.bin.op == OP_AND ? l : ir_not(a, l, nospan());
		walk(w, e->u.bin.b, ir_and(a, guard, cond));
		return;
	}
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		walk(w, expr_child(e, i), guard);
	if (e->kind == EX_LOAD) {
		access(w, e->u.load.buf, e->u.load.nidx, e->u.load.idx, false, guard, e->span);
	} else if (e->kind == EX_BIN && dtype_is_int(e->dtype) &&
		   (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD ||
		    e->u.bin.op == OP_DIV)) {
		Expr *d = e->u.bin.b;
		if (d->kind == EX_INT && d->u.ival != 0)
			return;
		Expr *zero = ir_int(a, 0, d->dtype, nospan());
		state(w, "safety.nonzero_divisor",
		      arena_printf(a, "the divisor %s at line %d is never 0",
				   text(a, d), e->span.line),
		      guard, ir_bin(a, OP_NE, d, zero, nospan()), e->span);
	} else if (e->kind == EX_BIN && (e->u.bin.op == OP_SHL || e->u.bin.op == OP_SHR)) {
		Expr *amt = e->u.bin.b;
		int bits = dtype_bits(e->dtype);
		if (amt->kind == EX_INT && amt->u.ival >= 0 && amt->u.ival < bits)
			return;
		Expr *in = ir_and(a, ir_bin(a, OP_LE, ir_int(a, 0, amt->dtype, nospan()), amt, nospan()),
				  ir_bin(a, OP_LT, amt, ir_int(a, bits, amt->dtype, nospan()), nospan()));
		state(w, "safety.shift_amount",
		      arena_printf(a, "the shift amount %s at line %d is in [0, %d)",
				   text(a, amt), e->span.line, bits),
		      guard, in, e->span);
	}
}

static void visit(void *ud, Stmt *s, const StmtCtx *sc)
{
	Safety *w = ud;
	w->sc = sc;
	switch (s->kind) {
	case ST_STORE:
		for (int k = 0; k < s->u.store.nidx; k++)
			walk(w, s->u.store.idx[k], NULL);
		walk(w, s->u.store.value, NULL);
		access(w, s->u.store.buf, s->u.store.nidx, s->u.store.idx, true, NULL, s->span);
		break;
	case ST_FOR:
	case ST_IF:
	case ST_EVAL:
	case ST_LET: {
		int n = stmt_nexprs(s);
		for (int k = 0; k < n; k++)
			walk(w, stmt_expr(s, k), NULL);
		break;
	}
	case ST_ASSUME: /* a hypothesis, not evaluated (semantics.md 1) */
	case ST_SEQ:
	case ST_ALLOC:
	case ST_BLOCK:
	case ST_PASS:
	case ST_COUNT:
		break;
	}
}

int rw_safety_obligations(RwCtx *c, int budget)
{
	Safety w = {.c = c, .budget = budget};
	shape_hyps(&w);
	an_walk(c->arena, c->func, visit, &w);
	return w.skipped;
}
