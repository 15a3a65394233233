/* rewrites/add_unit_loop.c — add_unit_loop(block or loop): the statement
 * inside a new loop of one iteration, `for u in range(1): S` (TVM's
 * add_unit_loop). The new variable is fresh and S does not read it, so
 * the loop runs S exactly once, as before: no obligation. */
#include "rewrites/attach.h"
#include "rewrites/rewrite.h"

RwStatus rw_add_unit_loop(RwCtx *c, const char *target, bool is_block, const char *name)
{
	Arena *a = c->arena;
	StmtCtx sc;
	RwStatus st = is_block ? attach_find_block(c, target, &sc) : rw_find_loop(c, target, &sc);
	if (st != RW_OK)
		return st;
	DType t = DT_INT32;
	Var *u = ir_var(a, name ? name : "u", t, sc.stmt->span);
	Stmt *loop = ir_for(a, u, ir_int(a, 0, t, (Span){0}), ir_int(a, 1, t, (Span){0}), FOR_SERIAL, sc.stmt,
			    sc.stmt->span);
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, sc.path, sc.depth, loop));
	return RW_OK;
}
