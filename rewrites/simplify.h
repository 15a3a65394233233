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

/* ---------- decisions ----------
 * A boolean subterm (a comparison, a logical operation, a boolean
 * variable or load; not a literal) that its context decides is replaced
 * by True or False, an integer min/max by the operand it equals there:
 * the caller proposes each choice (1: True or the first operand; 0:
 * False or the second) and proves it (simplify.decide). Subterms are
 * counted in pre-order, outermost first. */

/* The expressions of a statement, by slot as in SimplifyCandidate; NULL
 * past the last (and for statements with none). */
Expr *rw_simplify_slot(const Stmt *s, int slot);
int rw_bool_subterm_count(const Expr *e);
Expr *rw_bool_subterm(Expr *e, int k);
/* e with its k-th subterm replaced by its choice, then the literal folded
 * away by the simplifier (logged in log). */
Expr *rw_bool_subterm_decided(Arena *a, Expr *e, int k, int choice, FloatMode fm, ArithLog *log);
/* What choice replaces sub by. */
Expr *rw_decision_value(Arena *a, const Expr *sub, int choice);

/* simplify.decide: with whole, old == new under the statement's context
 * (the other operands of an and/or and the condition of an
 * if_then_else are context for the decided subterm); otherwise the k-th subterm sub == its choice
 * alone, where the if_then_else arms above it select it, (no boolean operand as context) and each rewrite of `fold` (the
 * log of rw_bool_subterm_decided). With !transitive, only the
 * context facts over the variables of the goal stay hypotheses (one
 * comparison is decided by facts about its own terms, as TVM's
 * non-transitive prover does); dropping hypotheses only weakens them. */
Obligation *rw_simplify_decide_obligation(RwCtx *c, const StmtCtx *ctx, Expr *old, Expr *new,
					  int k, int choice, const ArithLog *fold, bool whole,
					  bool transitive, const struct FactSet *fs);

/* A boolean and/or as an and of ors (TVM's convert_boolean_to_and_of_ors):
 * or distributed over and, clauses in the order that gives, a clause
 * already there (as a set) dropped; NULL when e is no and/or, the form is
 * too big, or nothing changes. The caller proves e == result. */
Expr *rw_and_of_ors(Arena *a, Expr *e);

/* The depth of `loop` on ctx's path (-1: not around it). */
int rw_loop_depth(const Stmt *root, const StmtCtx *ctx, const Stmt *loop);

/* simplify.unwritten: facts that hold when the outermost loop around the
 * statement at ctx starts still hold at the statement for the cells the
 * obligation `uses` reads, if no instance of a store inside that loop
 * that runs before the statement is evaluated writes one of them: every
 * instance in earlier iterations of the loops shared with the statement,
 * and in the same iterations the stores earlier in a sequence (the
 * statement's own writes come after its expressions are evaluated; the
 * other arm of an if does not run). Store instances are quantified over
 * fresh copies of their loop variables within the loops' ranges. NULL
 * when it cannot be stated: a load whose index reads a buffer, a store
 * whose index names a let or block variable of the loop. */
Obligation *rw_simplify_unwritten_obligation(RwCtx *c, const StmtCtx *ctx, const Obligation *uses);

#endif
