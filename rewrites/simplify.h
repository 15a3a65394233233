/* rewrites/simplify.h — simplify: untrusted simplification validated per
 * replacement (simplify.equal), then structural clean-ups. The pieces
 * here are pure; rewrites/schedule/step_simplify.c proves and applies
 * them one by one. */
#ifndef VS_REWRITES_SIMPLIFY_H
#define VS_REWRITES_SIMPLIFY_H

#include "kernel/analysis/arith.h"
#include "rewrites/rewrite.h"

struct FactSet;
struct FactCache;

/* One replacement e -> e' the simplifier proposes for expression `slot`
 * of the statement at ctx (slots: a loop's min 0 and extent 1, a
 * condition 0, a store's indices 0.. and its value last, a let's value
 * 0, an evaluated expression 0). */
typedef struct SimplifyCandidate {
	StmtCtx ctx;
	int slot;
	Expr *old, *new;
	ArithLog log; /* the rewrites that took old to new */
} SimplifyCandidate;

typedef struct SimplifyCandidates {
	int n, cap;
	SimplifyCandidate *items;
	/* with use_facts: the facts per statement the search asked for, to
	 * ask again per candidate; the caller frees it (an_fact_cache_free) */
	struct FactCache *facts;
} SimplifyCandidates;

/* Every candidate of f, in program order, under the path prefix
 * (prefix_depth 0: everywhere). use_facts: loads may be replaced by the
 * values usable facts give. T.assume statements are never candidates. */
void rw_simplify_candidates(Arena *a, const Func *f, FloatMode fm, bool use_facts,
			    const int *prefix, int prefix_depth, SimplifyCandidates *out);

/* simplify.equal for one candidate: an equality per logged rewrite (or
 * old == new when nothing was logged) under the statement's context and
 * the facts fs instantiated at its loads. */
Obligation *rw_simplify_equal_obligation(RwCtx *c, const SimplifyCandidate *k,
					 const struct FactSet *fs);

/* f with expression `slot` of the statement at ctx replaced by `new`;
 * NULL when ctx's path no longer leads to a statement of its kind. */
Func *rw_simplify_replaced(Arena *a, const Func *f, const StmtCtx *ctx, int slot, Expr *new);

/* f with its first structural clean-up made (`if True/False`, a store of
 * a cell's own value, empty branches and loops, pass statements), or NULL
 * when there is none. They change no observable behaviour. */
Func *rw_simplify_cleanup(Arena *a, const Func *f);
/* The same, where `T.evaluate(e)` of an e without effects (TVM's
 * `T.evaluate(0)`), an allocation or let around nothing, and a store
 * into an allocated buffer that nothing after it reads also count as
 * nothing (remove_no_op). */
Func *rw_noop_cleanup(Arena *a, const Func *f);

#endif
