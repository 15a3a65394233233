/* kernel/analysis/stmt_ctx.h — statements with their context: the path
 * from a function body to a statement, and the loops, path conditions and
 * lets around it; visiting every statement with its context, finding a
 * statement or a loop by name, and rebuilding a body with one statement
 * replaced along its path. */
#ifndef VS_ANALYSIS_STMT_CTX_H
#define VS_ANALYSIS_STMT_CTX_H

#include "kernel/ir.h"

#define AN_MAX_DEPTH 64

/* Everything known at a statement: the path from the function body to it,
 * the loops, conditions and lets around it. */
typedef struct StmtCtx {
	Stmt *stmt;
	int depth;
	int path[AN_MAX_DEPTH]; /* child index at each level */
	int nloops;
	Stmt *loops[AN_MAX_DEPTH]; /* enclosing ST_FOR, outermost first */
	int nconds;
	Expr *conds[AN_MAX_DEPTH]; /* path conditions (negated for else) */
	int nlets;
	Stmt *lets[AN_MAX_DEPTH]; /* enclosing ST_LET statements */
} StmtCtx;

/* Call fn on every statement of f in program order (pre-order), with its
 * context (ctx->stmt is the statement). */
typedef void (*StmtVisitor)(void *ud, Stmt *s, const StmtCtx *ctx);
void an_walk(Arena *a, const Func *f, StmtVisitor fn, void *ud);

/* The statement reached from root by the first `depth` steps of path. */
Stmt *an_stmt_at(const Stmt *root, const int *path, int depth);

/* The context of statement `target` (found by identity) in fn. */
bool an_find_stmt(Arena *a, const Func *fn, const Stmt *target, StmtCtx *out);

/* The loops of f named `name`: the want-th in program order (1-based), or
 * with want == 0 the only one, where a plain name shared with fact loops
 * means the one loop that is not a fact loop. */
typedef struct LoopLookup {
	bool found;
	int seen;     /* loops with the name (1 when a fact-loop tie resolved) */
	StmtCtx hit;
	char *names;  /* every loop name, ", "-separated (malloc'd) */
} LoopLookup;
void an_lookup_loop(Arena *a, const Func *f, const char *name, int want,
		    LoopLookup *out);

/* A loop nest that holds only T.assume statements (a fact loop). */
bool an_is_fact_loop(const Stmt *s);

/* Rebuild the body with the statement at path replaced (a replacement
 * sequence is spliced into its parent sequence). */
Stmt *an_replace_at(Arena *a, Stmt *root, const int *path, int depth,
		    Stmt *replacement);
Func *an_with_body(Arena *a, const Func *f, Stmt *body);

/* The number of statement levels below and including s. */
int an_nesting(const Stmt *s);

/* The range hypothesis `min <= v < min + extent` of a loop. It describes
 * every iteration only when min + extent does not wrap (loop.no_wrap). */
Expr *an_loop_range(Arena *a, const Stmt *loop, Expr *var_value);

/* A fresh variable named like v (same dtype). */
Var *an_fresh_var(Arena *a, const Var *v, const char *suffix);

#endif
