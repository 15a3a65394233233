/* kernel/obligation.c — construction of obligation records and the names
 * of verdicts and float modes. The meaning is in kernel/obligation.h. */
#include "kernel/obligation.h"

#include <string.h>

const char *float_mode_name(FloatMode m)
{
	return m == FLOAT_IEEE ? "ieee" : "real";
}

const char *verdict_name(Verdict v)
{
	switch (v) {
	case VERDICT_PROVEN: return "proven";
	case VERDICT_REFUTED: return "refuted";
	case VERDICT_UNKNOWN: return "not proven";
	}
	return "not proven";
}

static void *grow(Arena *a, void *old, int n, size_t elem)
{
	/* arrays in obligations are short; copy-on-grow keeps it simple */
	void *p = arena_alloc(a, elem * (size_t)(n + 1));
	if (old && n)
		memcpy(p, old, elem * (size_t)n);
	return p;
}

void oblist_push(Arena *a, ObligationList *l, Obligation *o)
{
	VEC_PUSH(a, l->items, l->n, l->cap, o);
}

Obligation *obligation_new(Arena *a, const char *kind, const char *statement,
			   int nvars, Var **vars, int nhyps, Expr **hyps,
			   Expr *goal, Span origin)
{
	Obligation *o = arena_alloc(a, sizeof *o);
	o->kind = arena_strdup(a, kind);
	o->statement = arena_strdup(a, statement);
	o->vars = grow(a, vars, nvars, sizeof(Var *));
	o->nvars = nvars;
	o->hyps = grow(a, hyps, nhyps, sizeof(Expr *));
	o->nhyps = nhyps;
	o->goal = goal;
	o->origin = origin;
	o->red_op = OP_COUNT;
	return o;
}

void obligation_add_hyp(Arena *a, Obligation *o, Expr *h)
{
	o->hyps = grow(a, o->hyps, o->nhyps, sizeof(Expr *));
	o->hyps[o->nhyps++] = h;
}

void obligation_add_var(Arena *a, Obligation *o, Var *v)
{
	for (int i = 0; i < o->nvars; i++)
		if (o->vars[i] == v)
			return;
	o->vars = grow(a, o->vars, o->nvars, sizeof(Var *));
	o->vars[o->nvars++] = v;
}

void obligation_add_related(Arena *a, Obligation *o, Span sp)
{
	o->related = grow(a, o->related, o->nrelated, sizeof(Span));
	o->related[o->nrelated++] = sp;
}

void obligation_add_named_hyp(Arena *a, Obligation *o, Expr *h, const char *name)
{
	obligation_add_hyp(a, o, h);
	if (!name || obligation_hyp_name(o, h))
		return;
	o->hypname_of = grow(a, o->hypname_of, o->nhypnames, sizeof(Expr *));
	o->hypnames = grow(a, o->hypnames, o->nhypnames, sizeof(char *));
	o->hypname_of[o->nhypnames] = h;
	o->hypnames[o->nhypnames++] = arena_strdup(a, name);
}

const char *obligation_hyp_name(const Obligation *o, const Expr *h)
{
	for (int i = 0; i < o->nhypnames; i++)
		if (o->hypname_of[i] == h)
			return o->hypnames[i];
	return NULL;
}

void obligation_copy_hyp_names(Arena *a, Obligation *dst, const Obligation *src)
{
	if (dst == src)
		return;
	for (int i = 0; i < src->nhypnames; i++) {
		if (obligation_hyp_name(dst, src->hypname_of[i]))
			continue;
		dst->hypname_of = grow(a, dst->hypname_of, dst->nhypnames, sizeof(Expr *));
		dst->hypnames = grow(a, dst->hypnames, dst->nhypnames, sizeof(char *));
		dst->hypname_of[dst->nhypnames] = src->hypname_of[i];
		dst->hypnames[dst->nhypnames++] = src->hypnames[i];
	}
}
