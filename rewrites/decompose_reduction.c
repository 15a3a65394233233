/* rewrites/decompose_reduction.c — decompose_reduction is not implemented
 * yet: the call rejects "not supported" and never accepts. The schedule
 * script already reads sch.decompose_reduction(block, loop) and routes it
 * here; the implementation replaces this file. */
#include "rewrites/rewrite.h"

RwStatus rw_decompose_reduction(RwCtx *c, const char *block, const char *loop)
{
	return rw_fail(c, RW_UNSUPPORTED, c->call_span,
		       "decompose_reduction of block '%s' at loop '%s' is not supported yet", block, loop);
}
