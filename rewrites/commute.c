/* rewrites/commute.c — the commutation obligations between two statement
 * instances (semantics.md section 4: "S(p) and S(q) commute"), including
 * the reduction exemption of real mode, and race freedom of a loop. */
#include "rewrites/rewrite.h"

#include <stdlib.h>
#include <string.h>

/* ---------- commutation ---------- */

static bool reduction_exempt(const RwCtx *c, const Access *x, const Access *y,
			     bool allow)
{
	if (!allow || !x->in_reduction || !y->in_reduction || x->red_op != y->red_op)
		return false;
	/* Floats re-associate only in real mode (semantics.md section 1). */
	if (dtype_is_float(x->buf->dtype) && c->float_mode == FLOAT_IEEE)
		return false;
	if (dtype_is_float(x->buf->dtype) && (x->red_op == OP_MIN || x->red_op == OP_MAX))
		return c->float_mode == FLOAT_REAL;
	return true;
}

static char *access_text(Arena *a, const Access *x)
{
	return arena_printf(a, "%s of %s at %d:%d", x->is_write ? "write" : "read",
			    x->buf->name, x->span.line, x->span.col);
}

void rw_commute_obligations(RwCtx *c, const char *kind, const char *what,
			    const Obligation *base, const AccessList *p,
			    const AccessList *q, bool allow_reductions)
{
	Arena *a = c->arena;
	for (int i = 0; i < p->n; i++) {
		const Access *x = &p->items[i];
		for (int j = 0; j < q->n; j++) {
			const Access *y = &q->items[j];
			if (x->buf != y->buf || (!x->is_write && !y->is_write))
				continue;
			if (reduction_exempt(c, x, y, allow_reductions))
				continue;
			/* goal: not (both happen and touch the same cell). Index
			 * lists of different lengths (never for one buffer today)
			 * cannot be compared: assume they may meet. */
			Expr *same = NULL;
			for (int d = 0; d < x->nidx && x->nidx == y->nidx; d++)
				same = ir_and(a, same, ir_bin(a, OP_EQ, x->idx[d], y->idx[d], (Span){0}));
			if (!same)
				same = ir_bool(a, true);
			Expr *goal = ir_not(a, ir_and(a, ir_and(a, x->guard, y->guard), same), (Span){0});
			char *stmt = arena_printf(a, "%s: %s (first instance) and %s (second instance) never touch the same cell of %s",
						  what, access_text(a, x), access_text(a, y), x->buf->name);
			Obligation *o = obligation_new(a, kind, stmt, base->nvars, base->vars,
						       base->nhyps, base->hyps, goal, base->origin);
			o->rewrite = c->desc;
			for (int v = 0; v < p->nvars; v++)
				obligation_add_var(a, o, p->vars[v]);
			for (int v = 0; v < q->nvars; v++)
				obligation_add_var(a, o, q->vars[v]);
			for (int h = 0; h < p->nhyps; h++)
				obligation_add_hyp(a, o, p->hyps[h]);
			for (int h = 0; h < q->nhyps; h++)
				obligation_add_hyp(a, o, q->hyps[h]);
			obligation_add_related(a, o, x->span);
			obligation_add_related(a, o, y->span);
			if (x->nidx == y->nidx) {
				ObligationClash *cl = arena_alloc(a, sizeof *cl);
				*cl = (ObligationClash){x->buf, x->nidx, x->idx, y->idx, x->is_write,
						       y->is_write, x->span, y->span};
				o->clash = cl;
			}
			oblist_push(a, &c->obs, o);
		}
	}
}
