/* rewrites/block_nest.h — running a block primitive on a block as TVM
 * places it (inside its loop nest): see block_nest.c. */
#ifndef VS_REWRITES_BLOCK_NEST_H
#define VS_REWRITES_BLOCK_NEST_H

#include "rewrites/rewrite.h"

typedef struct NestWrap {
	bool active;
	const char *name;
	const BlockInfo *info;
	Span span;
	int niters;
	Var **vars;      /* the iter vars */
	Expr **bindings; /* their bindings over the block's own loops */
	int nown;
	Var **own;       /* the variables of the block's own loops */
	const Func *orig;
} NestWrap;

/* When `block` names one block with iter vars that sits inside loops of
 * its own, c->func becomes the same function with those loops wrapped in
 * a plain block of that name (iter vars replaced by their bindings), and
 * true is returned; otherwise nothing changes. */
bool rw_nest_wrap(RwCtx *c, const char *block, NestWrap *w);
/* After the primitive: c->out (and the fallback, and the current function
 * in c->out_module) back in TVM's form, c->func the original again. */
void rw_nest_unwrap(RwCtx *c, const NestWrap *w);

#endif
