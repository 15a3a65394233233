/* rewrites/merge.h — adjacent loops: merge_adjacent_loops and its reverse
 * fission (semantics.md section 4), with the commutation obligation they
 * share, and the search for the next adjacent pair of loops that the call
 * without loop names (rewrites/schedule/step_merge.c) merges. */
#ifndef VS_REWRITES_MERGE_H
#define VS_REWRITES_MERGE_H

#include "rewrites/rewrite.h"

/* `sch.merge_adjacent_loops("i#1", "i#2")`: loop l2 must directly follow
 * loop l1 in one sequence. */
RwStatus rw_merge_adjacent_loops(RwCtx *c, const char *l1, const char *l2);
/* The same on two loops found by context (sc2 right after sc1). */
RwStatus rw_merge_loops_at(RwCtx *c, const StmtCtx *sc1, const StmtCtx *sc2);

/* `sch.fission("i", after=K)`: the body's statements 0..K stay in loop i,
 * the rest go to a new loop over the same range right after it. */
RwStatus rw_fission(RwCtx *c, const char *loop, int64_t after);
/* The same on the loop found at `at`; *second_loop (if not NULL) gets the
 * new second loop. */
RwStatus rw_fission_at(RwCtx *c, const StmtCtx *at, int64_t after, Stmt **second_loop);

/* `kind` obligations: for all i in the range of l1 and j in that of l2
 * with i > j, S1(i) (s1 with l1's variable := i) and S2(j) commute. `at`
 * gives the context hypotheses (l1's statement context). */
void rw_adjacent_commute_obligations(RwCtx *c, const char *kind, const StmtCtx *at,
				     const Stmt *l1, const Stmt *s1, const Stmt *l2,
				     const Stmt *s2);

/* s1 followed by s2 as one flat sequence; when s1 ends in an allocation
 * or a let (whose body is the rest of its sequence), s2 goes inside it, as
 * the parser reads the printed text. */
Stmt *rw_append_stmt(Arena *a, Stmt *s1, Stmt *s2);

/* The first loop of f (in program order) whose next sibling is a loop of
 * the same kind and the same range expressions, the first loop not among
 * tried[0..ntried): true with both loops' contexts, else false. */
bool rw_merge_find_pair(Arena *a, const Func *f, const Stmt *const *tried, int ntried,
			StmtCtx *first, StmtCtx *second);

#endif
