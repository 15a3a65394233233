/* rewrites/reverse_compute_at.c — placeholder until implemented. */
#include "attach.h"

RwStatus rw_reverse_compute_at(RwCtx *c, const char *block, const char *loop)
{
	(void)block;
	(void)loop;
	return rw_fail(c, RW_UNSUPPORTED, c->call_span, "reverse_compute_at is not implemented yet");
}
