/* rewrites/simplify.h — simplify: untrusted simplification validated per
 * replacement (simplify.equal), then structural clean-ups. */
#ifndef VS_REWRITES_SIMPLIFY_H
#define VS_REWRITES_SIMPLIFY_H

#include "rewrite.h"

struct Schedule;
/* The whole call; returns a StepStatus. use_facts: replace loads by the
 * values usable facts give. cleanups: the structural clean-ups. */
int sched_simplify(struct Schedule *s, const char *desc, Span span, DiagList *d, bool use_facts,
		   bool cleanups);

struct Compound;
/* The same inside another compound call (sequential_buffer_access tidies
 * the indices it changed; only statements under the path prefix);
 * unproven replacements are skipped. */
void simplify_in(struct Compound *k, const char *desc, bool use_facts, bool cleanups,
		 const int *prefix, int prefix_depth);

#endif
