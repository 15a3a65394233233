/* rewrites/simplify.h — simplify: untrusted simplification validated per
 * replacement (simplify.equal), then structural clean-ups. */
#ifndef VS_REWRITES_SIMPLIFY_H
#define VS_REWRITES_SIMPLIFY_H

#include "rewrites/rewrite.h"

struct Schedule;
/* The whole call; returns a StepStatus. use_facts: replace loads by the
 * values usable facts give. cleanups: the structural clean-ups. */
int sched_simplify(struct Schedule *s, const char *desc, Span span, DiagList *d, bool use_facts,
		   bool cleanups);

struct Compound;
/* The same inside another compound call (sequential_buffer_access tidies
 * the indices it changed; only statements under the path prefix);
 * unproven replacements are skipped. Returns how many candidates and
 * clean-ups it found; it notes them only if there were any. */
int simplify_in(struct Compound *k, const char *desc, bool use_facts, bool cleanups,
		const int *prefix, int prefix_depth);

struct FactSet;
/* One replacement e -> e' of expression `slot` of the statement at ctx
 * (slots: a loop's min 0 and extent 1, a condition 0, a store's indices
 * 0.. and its value last, a let's value 0): the obligation simplify.equal
 * (e == e' under the statement's context and the facts fs, which may be
 * NULL) is proven, then the replacement is made in the compound's current
 * function. False when it is not proven (nothing changes). simplify_in
 * sends every candidate of arith.c through it; tests send wrong ones. */
bool simplify_replace(struct Compound *k, const char *desc, const StmtCtx *ctx, int slot,
		      Expr *old, Expr *new, const struct FactSet *fs);

#endif
