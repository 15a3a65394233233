/* kernel/block.c — TensorIR blocks with iter vars: building the desugared
 * body from a block's parts and reading the parts back (ir.h, "TensorIR
 * blocks"). The parser builds with block_assemble; the printer and the
 * block primitives read with block_view. */
#include "kernel/ir.h"

#include <string.h>

const char *iter_type_name(IterType t)
{
	switch (t) {
	case ITER_SPATIAL: return "spatial";
	case ITER_REDUCE: return "reduce";
	case ITER_SCAN: return "scan";
	case ITER_OPAQUE: return "opaque";
	}
	return "?";
}

Stmt *ir_block_info(Arena *a, const char *name, const BlockInfo *info,
		    Stmt *body, Span sp)
{
	Stmt *s = ir_block(a, name, body, sp);
	s->u.block.info = info;
	return s;
}

Stmt *ir_block_with(Arena *a, const Stmt *old, Stmt *body)
{
	if (body == old->u.block.body)
		return (Stmt *)old;
	return ir_block_info(a, old->u.block.name, old->u.block.info, body,
			     old->span);
}

Expr *block_init_cond(Arena *a, const BlockInfo *info)
{
	Expr *c = NULL;
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		if (it->type != ITER_REDUCE)
			continue;
		Expr *eq = ir_bin(a, OP_EQ, ir_varref(a, it->var, it->var->span),
				  it->dom_min, it->var->span);
		c = c ? ir_bin(a, OP_AND, c, eq, it->var->span) : eq;
	}
	return c ? c : ir_bool(a, true);
}

Stmt *block_assemble(Arena *a, const char *name, const BlockInfo *info,
		     Expr **bindings, Expr *where, Stmt *init, Stmt *inner, Span sp)
{
	Stmt *body = inner;
	if (init) {
		Stmt *items[2] = {ir_if(a, block_init_cond(a, info), init, NULL, init->span),
				  inner};
		body = ir_seq(a, 2, items, init->span);
	}
	if (where)
		body = ir_if(a, where, body, NULL, where->span);
	for (int k = info->niters - 1; k >= 0; k--)
		body = ir_letstmt(a, info->iters[k].var, bindings[k], body,
				  info->iters[k].var->span);
	return ir_block_info(a, name, info, body, sp);
}

bool block_view(Arena *a, const Stmt *block, BlockView *v)
{
	memset(v, 0, sizeof *v);
	const BlockInfo *info = block->u.block.info;
	if (block->kind != ST_BLOCK || !info)
		return false;
	const Stmt *s = block->u.block.body;
	v->niters = info->niters;
	v->bindings = arena_alloc(a, sizeof(Expr *) * (size_t)(info->niters + 1));
	for (int k = 0; k < info->niters; k++) {
		if (s->kind != ST_LET || s->u.let.var != info->iters[k].var)
			return false;
		v->bindings[k] = s->u.let.value;
		s = s->u.let.body;
	}
	if (info->has_where) {
		if (s->kind != ST_IF || s->u.cond.else_s)
			return false;
		v->where = s->u.cond.cond;
		s = s->u.cond.then_s;
	}
	if (info->has_init) {
		if (s->kind != ST_SEQ || s->u.seq.n < 2)
			return false;
		const Stmt *ii = s->u.seq.items[0];
		if (ii->kind != ST_IF || ii->u.cond.else_s ||
		    !ir_expr_equal(ii->u.cond.cond, block_init_cond(a, info)))
			return false;
		v->init = ii->u.cond.then_s;
		v->inner = s->u.seq.n == 2 ? s->u.seq.items[1]
					   : ir_seq(a, s->u.seq.n - 1, s->u.seq.items + 1,
						    s->u.seq.items[1]->span);
		return true;
	}
	v->inner = s;
	return true;
}
