/* rewrites/commute.c — the commutation obligations between two statement
 * instances (semantics.md section 4: "S(p) and S(q) commute"), including
 * the reduction exemption of real mode, and race freedom of a loop. */
#include "rewrites/rewrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- commutation ---------- */

/* allow: 1 exempts reduction pairs where the float mode makes the
 * operator exact; 2 exempts every reduction pair (the caller proves the
 * reassociation: rw_reassociate_obligation) */
static bool reduction_exempt(const RwCtx *c, const Access *x, const Access *y,
			     int allow)
{
	if (!allow || !x->in_reduction || !y->in_reduction || x->red_op != y->red_op)
		return false;
	if (allow == 2) {
		/* only updates of one cell whatever the iteration (its index
		 * uses neither instance's variables): updates of cells that
		 * depend on the iteration keep their race obligation, which
		 * needs no reassociation when they never meet */
		if (x->nidx != y->nidx)
			return false;
		for (int d = 0; d < x->nidx; d++)
			if (!ir_expr_equal(x->idx[d], y->idx[d]))
				return false;
		return true;
	}
	/* Floats re-associate only in real mode (semantics.md section 1). */
	if (dtype_is_float(x->buf->dtype) && c->float_mode == FLOAT_IEEE)
		return false;
	if (dtype_is_float(x->buf->dtype) && (x->red_op == OP_MIN || x->red_op == OP_MAX))
		return c->float_mode == FLOAT_REAL;
	return true;
}

/* "vectorize.no_race" -> "vectorize" */
static const char *kind_prefix(Arena *a, const char *kind)
{
	const char *dot = strchr(kind, '.');
	return dot ? arena_strndup(a, kind, (size_t)(dot - kind)) : kind;
}

static char *access_text(Arena *a, const Access *x)
{
	return arena_printf(a, "%s of %s at %d:%d", x->is_write ? "write" : "read",
			    x->buf->name, x->span.line, x->span.col);
}

static void commute_impl(RwCtx *c, const char *kind, const char *what, const Obligation *base,
			 const AccessList *p, const AccessList *q, int allow_reductions, Span origin)
{
	Arena *a = c->arena;
	for (int i = 0; i < p->n; i++) {
		const Access *x = &p->items[i];
		for (int j = 0; j < q->n; j++) {
			const Access *y = &q->items[j];
			if (x->buf != y->buf || (!x->is_write && !y->is_write))
				continue;
			if (reduction_exempt(c, x, y, allow_reductions)) {
				if (allow_reductions == 2)
					rw_reassociate_obligation(c, kind_prefix(c->arena, kind), x->red_op,
								  x->buf->dtype, origin);
				continue;
			}
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
			if (strncmp(kind, "parallel.", 9) == 0 && x->in_reduction && y->in_reduction &&
			    x->red_op == y->red_op)
				stmt = arena_printf(a, "%s (a parallel reduction is refused: the thread pool keeps no "
						       "per-thread partial results; rfactor the loop and make a loop of "
						       "the rfactor block parallel)", stmt);
			Obligation *o = obligation_new(a, kind, stmt, base->nvars, base->vars,
						       base->nhyps, base->hyps, goal, base->origin);
			obligation_copy_hyp_names(a, o, base);
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

void rw_commute_obligations(RwCtx *c, const char *kind, const char *what,
			    const Obligation *base, const AccessList *p,
			    const AccessList *q, bool allow_reductions)
{
	commute_impl(c, kind, what, base, p, q, allow_reductions ? 1 : 0, base->origin);
}

void rw_commute_reassociating(RwCtx *c, const char *kind, const char *what, const Obligation *base,
			      const AccessList *p, const AccessList *q)
{
	commute_impl(c, kind, what, base, p, q, 2, base->origin);
}

/* ---------- reassociation (semantics.md 9, "Reductions") ---------- */

/* Values whose roundings differ when float + or * is reassociated, per
 * dtype: 1 + 2^m - 2^m (m past the significand: 1 + 2^m rounds to 2^m)
 * and 2^e * 2^e * 2^-e (the first product overflows to inf). */
static void ieee_witness(DType t, BinOp op, double w[3])
{
	int m = t == DT_FLOAT16 ? 12 : t == DT_FLOAT32 ? 25 : 54;
	int e = t == DT_FLOAT16 ? 10 : t == DT_FLOAT32 ? 100 : 1000;
	if (op == OP_ADD) {
		w[0] = 1.0;
		w[1] = ldexp(1.0, m);
		w[2] = -ldexp(1.0, m);
	} else {
		w[0] = ldexp(1.0, e);
		w[1] = ldexp(1.0, e);
		w[2] = ldexp(1.0, -e);
	}
}

bool rw_reassociate_obligation(RwCtx *c, const char *prefix, BinOp op, DType t, Span origin)
{
	Arena *a = c->arena;
	const char *kind = arena_printf(a, "%s.reassociate", prefix);
	/* once per kind, operator and dtype */
	for (int i = 0; i < c->obs.n; i++) {
		const Obligation *o = c->obs.items[i];
		if (strcmp(o->kind, kind) == 0 && o->red_op == op && o->red_dtype == t)
			return true;
	}
	if (dtype_is_int(t) && op == OP_MUL && c->note && strstr(c->note, "two's complement multiplication"))
		return false;
	Span none = {0};
	Var *va = ir_var(a, "a", t, none), *vb = ir_var(a, "b", t, none), *vc = ir_var(a, "c", t, none);
	Expr *x = ir_varref(a, va, none), *y = ir_varref(a, vb, none), *z = ir_varref(a, vc, none);
	Expr *goal = ir_and(a, ir_bin(a, OP_EQ, ir_bin(a, op, ir_bin(a, op, x, y, none), z, none),
				      ir_bin(a, op, x, ir_bin(a, op, y, z, none), none), none),
			    ir_bin(a, OP_EQ, ir_bin(a, op, x, y, none), ir_bin(a, op, y, x, none), none));
	const char *sym = binop_symbol(op);
	const char *what = arena_printf(a, "%s on %s is associative and commutative in %s mode (the partial results "
					   "are combined in another order)", sym, dtype_name(t),
					float_mode_name(c->float_mode));
	if (dtype_is_int(t) && op == OP_MUL) {
		/* two's complement multiplication is the ring Z/2^n: associative
		 * and commutative (semantics.md 9); bit-vector solvers time out
		 * on the 32- and 64-bit query, so it is not asked */
		const char *n = "int * reassociated: two's complement multiplication is associative and commutative "
				"(semantics.md 9), not asked of the solver";
		c->note = c->note ? arena_printf(a, "%s; %s", c->note, n) : n;
		return false;
	}
	Obligation *o;
	if (dtype_is_float(t) && c->float_mode == FLOAT_IEEE && (op == OP_ADD || op == OP_MUL)) {
		/* refuted at known values: the general query (for all a, b, c)
		 * implies this one, and the values in the goal itself let the
		 * solver fold the ground float operations */
		double w[3];
		ieee_witness(t, op, w);
		Var *vs[3] = {va, vb, vc};
		Expr *ws[3];
		for (int k = 0; k < 3; k++)
			ws[k] = ir_float(a, w[k], t, none);
		o = obligation_new(a, kind,
				   arena_printf(a, "%s, at a = %.17g, b = %.17g, c = %.17g", what, w[0], w[1], w[2]), 0,
				   NULL, 0, NULL, ir_subst_expr(a, goal, 3, vs, ws), origin);
	} else {
		Var *vs[3] = {va, vb, vc};
		o = obligation_new(a, kind, what, 3, vs, 0, NULL, goal, origin);
	}
	o->rewrite = c->desc;
	o->same_value = true;
	o->red_op = op;
	o->red_dtype = t;
	oblist_push(a, &c->obs, o);
	return true;
}
