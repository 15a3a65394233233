/* rewrites/schedule/steps.h — the compound steps: calls made of several
 * sub-rewrites, each proven on its own through the schedule's Compound
 * (schedule.h). One file each, rewrites/schedule/step_<name>.c; the pure
 * rewrites they drive are the rw_* functions of rewrites/<primitive>.h.
 * Every sched_* call here returns a StepStatus. */
#ifndef VS_REWRITES_SCHEDULE_STEPS_H
#define VS_REWRITES_SCHEDULE_STEPS_H

#include "rewrites/schedule/schedule.h"

/* `sch.merge_adjacent_loops()` (step_merge.c): every pair of adjacent
 * loops with the same range expressions, repeatedly (nests merge level by
 * level); each merge proven on its own. Rejects when nothing could be
 * merged and some pair failed. */
int sched_merge_all_loops(Schedule *s, const char *desc, Span span, DiagList *d);

/* `sch.fission(outer, before=L)` (step_fission.c): Exo's fission with
 * lifts. Every loop from `outer` down to the loop whose body holds loop L
 * is fissioned just before the statement that holds L, innermost first,
 * each fission proven on its own (fission.no_conflict): the statements
 * from L on end up in a nest of their own after the first, with copies of
 * the lifted loops around them; the first nest keeps the loops. The
 * report's note names the second nest's loops; on commit, when loops is
 * not NULL, *loops gets them (the copies of the lifted loops, outermost
 * first, then L and the loops perfectly nested in it), *nloops their
 * number. */
int sched_fission_before(Schedule *s, const char *desc, Span span, DiagList *d, const char *outer,
			 const char *before, Var ***loops, int *nloops);

/* `sch.merge_conditionals(block=, strict=)` (step_merge_conditionals.c):
 * every adjacent pair of ifs in `block` (NULL: the function), repeatedly,
 * each merge proven on its own. Rejects when some pair could not be
 * merged and none could (or, with strict, when any could not). */
int sched_merge_conditionals(Schedule *s, const char *desc, Span span, DiagList *d,
			     const char *block, bool strict);

/* `sch.hoist_expression` (step_hoist.c). */
typedef struct HoistArgs {
	const char *block, *loop;
	bool if_else_stmt;	 /* hoist invariant `if` statements out of loops */
	bool if_else_expr;	 /* hoist invariant `T.if_then_else` conditions */
	/* hoist invariant operands of `and` / `or`; with loop=, also case-split
	 * that loop on the values that decide its conditions (seed 000) */
	bool boolean_expression;
	bool let_stmt;	   /* hoist let statements with an invariant value */
	bool let_required; /* only those an `if` condition in their body uses */
} HoistArgs;

int sched_hoist_expression(Schedule *s, const char *desc, Span span, DiagList *d,
			   const HoistArgs *args);
/* `sch.reduce_loop_extents(block)` (step_hoist.c): every loop in scope
 * whose body is one guarded statement, narrowed once. */
int sched_reduce_loop_extents(Schedule *s, const char *desc, Span span, DiagList *d,
			      const char *block);

/* What `sch.simplify` may use, after TVM's tir.Simplify options.
 * Without any option given, everything vsched can prove (and no and-of-
 * ors normal form, which is a choice of form, not a simplification). */
typedef struct SimplifyOptions {
	bool knowns_expressions; /* loads replaced by the values facts give */
	bool knowns_conditions;	 /* facts (T.assume, earlier stores) decide conditions */
	bool transitive;	 /* every context fact decides; else only facts over the
				  * decided comparison's own variables */
	bool branch_constraints; /* the other operands of and/or decide an operand */
	bool and_of_ors;	 /* rewrite booleans as an and of ors */
} SimplifyOptions;

/* sch.simplify with options: the proven replacements of sched_simplify,
 * then every boolean subterm its context decides replaced by True or
 * False (simplify.decide), then the clean-ups. */
int sched_simplify_with(Schedule *s, const char *desc, Span span, DiagList *d,
			const SimplifyOptions *o);

/* The same inside another compound call (sequential_buffer_access tidies
 * the indices it changed; only statements under the path prefix);
 * unproven replacements are skipped. Returns how many candidates and
 * clean-ups it found; it notes them only if there were any. */
int sched_simplify_in(Compound *k, const char *desc, bool use_facts, bool cleanups,
		      const int *prefix, int prefix_depth);

struct FactSet;
/* One replacement e -> e' of expression `slot` of the statement at ctx
 * (slots as in SimplifyCandidate, rewrites/simplify.h): the obligation
 * simplify.equal (e == e' under the statement's context and the facts
 * fs, which may be NULL) is proven, then the replacement is made in the
 * compound's current function. False when it is not proven (nothing
 * changes). sched_simplify_in sends every candidate of arith.c through
 * the same path; tests send wrong ones. */
bool sched_simplify_replace(Compound *k, const char *desc, const StmtCtx *ctx, int slot,
			    Expr *old, Expr *new, const struct FactSet *fs);

/* The overcompute calls (step_overcompute.c): every candidate in turn,
 * each committed once proven; strict makes any unproven candidate reject
 * the call. */
typedef struct OcArgs {
	const char *block, *loop;
	bool strict;
	bool add_branches;  /* remove_overcompute_through_branching */
	bool remove_stores; /* remove_no_op */
	/* remove_no_op(use_dataflow_analysis=False), as TVM's option: no store
	 * is removed as dead (overwritten later), only as a no-op */
	bool no_dataflow;
} OcArgs;

int sched_overcompute(Schedule *s, const char *desc, Span span, DiagList *d,
		      const OcArgs *args);

/* `sch.sequential_buffer_access(block, buffer)` (step_seq_access.c);
 * block may be NULL: every nest of the function that accesses the
 * buffer. */
int sched_sequential_buffer_access(Schedule *s, const char *desc, Span span, DiagList *d,
				   const char *block, const char *buffer);

#endif
