/* rewrites/hoist.h — hoist_expression and reduce_loop_extents (seed 000). */
#ifndef VS_REWRITES_HOIST_H
#define VS_REWRITES_HOIST_H

#include "rewrites/rewrite.h"

typedef struct HoistArgs {
	const char *block, *loop;
	bool if_else_stmt;	 /* hoist invariant `if` statements out of loops */
	bool boolean_expression; /* case-split loops on the conditions they decide */
} HoistArgs;

struct Schedule;
/* Both return a StepStatus. */
int sched_hoist_expression(struct Schedule *s, const char *desc, Span span, DiagList *d,
			   const HoistArgs *args);
int sched_reduce_loop_extents(struct Schedule *s, const char *desc, Span span, DiagList *d,
			      const char *block);

#endif
