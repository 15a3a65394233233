/* rewrites/seq_access.h — sequential_buffer_access: loop nests rewritten
 * to walk a buffer in physical order through proven split / tile /
 * fission / reorder / simplify steps. */
#ifndef VS_REWRITES_SEQ_ACCESS_H
#define VS_REWRITES_SEQ_ACCESS_H

#include "rewrites/rewrite.h"

struct Schedule;
/* The whole call (block may be NULL: every nest of the function that
 * accesses the buffer); returns a StepStatus. */
int sched_sequential_buffer_access(struct Schedule *s, const char *desc, Span span, DiagList *d,
				   const char *block, const char *buffer);

#endif
