/* rewrites/merge_conditionals.h — merge_conditionals: two adjacent `if`
 * statements whose conditions are proven identical or complementary
 * become one (seed 000, "Enhancement - Simplify"; semantics.md section 4). */
#ifndef VS_REWRITES_MERGE_CONDITIONALS_H
#define VS_REWRITES_MERGE_CONDITIONALS_H

#include "rewrites/rewrite.h"

/* The second condition as evaluated after `s` runs, in terms of the state
 * before it (a store X[e'] = v turns a later load X[e] into
 * T.if_then_else(e == e', v, X[e])). NULL with *why when s holds a loop
 * that writes a buffer the condition reads. */
Expr *rw_cond_after(Arena *a, const Stmt *s, Expr *cond, const char **why);

struct Schedule;
/* The whole call: every adjacent pair in `block` (NULL: the function),
 * repeatedly, each merge proven on its own. Rejects when some pair could
 * not be merged and none could (or, with strict, when any could not).
 * Returns a StepStatus. */
int sched_merge_conditionals(struct Schedule *s, const char *desc, Span span, DiagList *d,
			     const char *block, bool strict);

#endif
