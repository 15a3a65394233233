/* rewrites/overcompute.h — trading branches for overcompute and back
 * (semantics.md section 5): candidate enumeration and, per candidate, the
 * rewritten function with its obligations grouped so the caller
 * (rewrites/schedule/step_overcompute.c) can prove each store either dead
 * or a no-op. */
#ifndef VS_REWRITES_OVERCOMPUTE_H
#define VS_REWRITES_OVERCOMPUTE_H

#include "rewrites/rewrite.h"

typedef struct OcCandidates {
	int n, cap;
	const Stmt **items;
	int guarded; /* padded stores left out: already under their pad test */
} OcCandidates;

#define OC_MAX_OVERWRITERS 4

typedef struct OcStorePlan {
	Span span;
	/* overcompute.dead_*, one set for each of the first later stages
	 * that write the buffer (the cell is dead if one set holds) */
	int ndead;
	ObligationList dead[OC_MAX_OVERWRITERS];
	ObligationList noop; /* overcompute.no_op */
	/* remove_no_op: no fact names the cell (noop_hopeless), so the no_op
	 * obligation cannot be proven and is not tried */
	bool noop_hopeless;
} OcStorePlan;

struct Instance;

typedef struct OcPlan {
	Func *out;
	int line;		 /* of the candidate */
	ObligationList safety;	 /* all must be proven */
	int nstores;
	OcStorePlan *stores;	 /* each: dead or no-op proven */
	struct Instance *instance;
	StmtCtx *sc;
	struct OcPlan *alternative; /* if/else: keeping the other branch */
	/* remove_no_op: the store cannot be shown a no-op or dead (no fact
	 * names its cell, no later stage may overwrite it); nothing else of
	 * the plan is built and there is nothing to prove */
	bool hopeless;
} OcPlan;

/* Branches in scope that guard stores: those directly in loop `loop`, or
 * anywhere in block `block`, or in the whole function. */
RwStatus rw_overcompute_candidates(RwCtx *c, const char *block, const char *loop,
				   OcCandidates *out);
/* `if c: S` -> `S` (remove) for the candidate `target` of c->func. */
RwStatus rw_overcompute_plan(RwCtx *c, const Stmt *target, OcPlan *plan, bool remove);

/* Stores to buffers with padding, in block (or the whole function). */
RwStatus rw_padded_store_candidates(RwCtx *c, const char *block, OcCandidates *out);
/* `X[e] = v` -> `if not pad(e): X[e] = v`. */
RwStatus rw_branch_plan(RwCtx *c, const Stmt *store, OcPlan *plan);

/* Every store in block (or the function), and `X[e] = v` -> nothing
 * (remove_no_op: each instance a no-op or dead). */
RwStatus rw_store_candidates(RwCtx *c, const char *block, OcCandidates *out);
RwStatus rw_remove_store_plan(RwCtx *c, const Stmt *store, OcPlan *plan);
/* Its plan leaves `out` NULL (most candidates are not proven): the
 * function without the store, built once the plan is. */
Func *rw_remove_store_result(RwCtx *c, const OcPlan *plan);

#endif
