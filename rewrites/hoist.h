/* rewrites/hoist.h — hoist_expression and reduce_loop_extents (seed 000):
 * the loops in scope and, per loop, one hoist, case split or narrowing
 * with its obligations; rewrites/schedule/step_hoist.c drives the calls. */
#ifndef VS_REWRITES_HOIST_H
#define VS_REWRITES_HOIST_H

#include "rewrites/rewrite.h"

typedef struct HoistLoops {
	int n;
	Stmt *items[256];
} HoistLoops;

/* The loops in scope (fact loops left out): loop `loop` alone, or every
 * loop in block `block`, or in the whole function, in program order. */
RwStatus rw_hoist_scope_loops(RwCtx *c, const char *block, const char *loop, HoistLoops *out);
/* The loops of c->func whose variable is v, in program order: what a
 * hoist made of the loop `loop=` named (both branches' loops keep its
 * variable, and its name is then ambiguous). */
void rw_hoist_loops_of_var(RwCtx *c, const Var *v, HoistLoops *out);

/* Loop l's body case-split on the groups of its values that decide the
 * conditions in it alike (no obligation). *changed false when there is
 * nothing to split; else c->out, c->note and the new loop in *made. */
RwStatus rw_hoist_case_split(RwCtx *c, Stmt *l, bool *changed, Stmt **made);

/* Which conditions TVM's hoisting takes: `if` conditions, `T.if_then_else`
 * conditions, operands of `and` / `or`. */
typedef struct HoistFlags {
	bool if_else_stmt, if_else_expr, boolean_expression;
	/* let statements with an invariant value: every one, or those a
	 * condition in their body uses */
	bool let_stmt, let_required;
} HoistFlags;

/* The first condition (program order) TVM's HoistExpression would hoist
 * and the loop it would wrap: the outermost loop around it (in scope,
 * NULL: any) such that no loop between holds a sequence of statements
 * (TVM's reached_sequential_node) and the condition is invariant in
 * each (no variable bound in it, no buffer it writes); never across an
 * allocation or a block. Or (*cond NULL) a let statement whose value
 * is invariant, by the same rule. False when there is none. */
bool rw_hoist_find(RwCtx *c, const HoistLoops *scope, HoistFlags flags, Stmt **loop,
		   const Expr **cond, Stmt **let);
/* `L` -> `if c: L[c := True] else: L'[c := False]` for loop l of c->func
 * (L' with a fresh loop variable), each copy with the branches the
 * value decides taken and what is left empty dropped (an empty else
 * part, or `if not c` for an empty then part). Sound because c has the
 * same value at every occurrence in L as before it (invariant); when
 * evaluating c could fault, hoist.nonempty: it cannot, or l's nest is
 * one `if c` that every run evaluates. */
RwStatus rw_hoist_condition(RwCtx *c, Stmt *l, const Expr *cond);
/* `L` (holding the statement `let x = v: B`) -> `let x = v: L[B]`: sound
 * because v is invariant in L and x is bound once; hoist.nonempty as
 * above for v. */
RwStatus rw_hoist_let(RwCtx *c, Stmt *l, Stmt *let);

/* `for v in R: if c: S` -> `for v in R': if c: S` with R' from the
 * comparisons of v in c; reduce.skipped and reduce.within. *changed false
 * when the range does not shrink; else c->out and the new loop in *made. */
RwStatus rw_reduce_loop_extent(RwCtx *c, Stmt *l, bool *changed, Stmt **made);

#endif
