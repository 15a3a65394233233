/* rewrites/merge_conditionals.h — merge_conditionals: two adjacent `if`
 * statements whose conditions are proven identical or complementary
 * become one (seed 000, "Enhancement - Simplify"; semantics.md section 4):
 * the pair search and one pair's merge; rewrites/schedule/
 * step_merge_conditionals.c drives the whole call. */
#ifndef VS_REWRITES_MERGE_CONDITIONALS_H
#define VS_REWRITES_MERGE_CONDITIONALS_H

#include "rewrites/rewrite.h"

/* The second condition as evaluated after `s` runs, in terms of the state
 * before it (a store X[e'] = v turns a later load X[e] into
 * T.if_then_else(e == e', v, X[e])). NULL with *why when s holds a loop
 * that writes a buffer the condition reads. */
Expr *rw_cond_after(Arena *a, const Stmt *s, Expr *cond, const char **why);

typedef enum { MERGE_IDENTICAL, MERGE_COMPLEMENTARY } MergeCondKind;

/* A pair of adjacent ifs already tried. */
typedef struct MergeCondPair {
	const Stmt *first, *second;
} MergeCondPair;

/* The first sequence of f (inside `scope`, a statement context, or
 * anywhere when NULL) holding two adjacent ifs not among
 * tried[0..ntried): true with the sequence's context in *seq and the
 * first if's index in it in *k. */
bool rw_merge_cond_find_pair(Arena *a, const Func *f, const StmtCtx *scope,
			     const MergeCondPair *tried, int ntried, StmtCtx *seq, int *k);

/* Which merges to try on conditions c1, c2: identical for equal
 * conditions, complementary for `c` and `not c`, otherwise both
 * (identical first). Returns how many (1 or 2) are in out. */
int rw_merge_cond_orientations(const Expr *c1, const Expr *c2, MergeCondKind *out);

/* Merge items k and k+1 (two ifs) of the sequence at `seq` in c->func as
 * `mk`: c->out with the merged if, its obligations
 * merge_conditionals.identical / .complementary in c->obs. */
RwStatus rw_merge_cond_pair(RwCtx *c, const StmtCtx *seq, int k, MergeCondKind mk);

#endif
