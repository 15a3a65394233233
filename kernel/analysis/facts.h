/* kernel/analysis/facts.h — what is known at a program point (semantics.md
 * section 3): T.assume facts and the values written by earlier producer
 * stages (`for t: [if p(t):] X[idx(t)] = v(t)`), each usable while nothing
 * in between can write the buffers it mentions. Facts are instantiated by
 * the project at the loads an obligation needs, so queries stay
 * quantifier-free; the readable (initialised) cells of a buffer come from
 * the same facts. */
#ifndef VS_REWRITES_FACTS_H
#define VS_REWRITES_FACTS_H

#include "kernel/analysis/access.h"
#include "kernel/obligation.h"

typedef struct Fact {
	const Stmt *stmt; /* the T.assume or the producer's store */
	int nvars;
	Var **vars;  /* bound: the loops (and lets) around it */
	Expr *guard; /* when it was established: loop ranges, conditions (NULL = true) */
	Expr *body;  /* what holds */
	/* The cells the fact makes readable: buf[idx(vars)] wherever guard
	 * holds and `unless` does not (assume `c or X[idx] == v`, or a
	 * producer store). NULL buf: the fact says nothing of that kind. */
	Buffer *buf;
	int nidx;
	Expr **idx;
	Expr *unless;
	bool from_store;
	/* A store fact whose cells the index map of the whole-index rule does
	 * not invert (i * 16 + j, a loop the index does not name): vars[j]
	 * == inv[j] with the cell's indices for cell[0..nidx). NULL: solved
	 * by the index map's inverse. Only a candidate: a use checks
	 * idx(inv) == cell and the guard there. */
	Var **cell;
	Expr **inv;
} Fact;

typedef struct FactSet {
	int n, cap;
	const Fact **items; /* in the arena, as the facts */
} FactSet;

/* The facts usable at the statement sc->stmt of f (sc from the walk that
 * found it): those established before it in program order whose buffers
 * are not written between them and it, including anywhere in the loops
 * around it and in the statement itself. With for_values false, a fact
 * is kept even when its cells are written later (a cell once initialised
 * stays readable: readability only, never values), but not when its
 * guard or indices read a buffer written since (they would name other
 * cells in the later state). The writes
 * of `exclude` (NULL, or the target sc->stmt itself) do not count:
 * remove_no_op proves every instance of that store a no-op, so by
 * induction they change nothing. It is left out by its position, so a
 * shared copy of the same statement elsewhere still counts. */
void an_facts_at(Arena *a, const Func *f, const StmtCtx *sc, bool for_values,
		 const Stmt *exclude, FactSet *out);

/* Per-statement facts kept across the queries of one step: a step that
 * asks for the facts at many points of one function (simplify,
 * remove_no_op) walks each statement once. Only for statements of the
 * given arena; it must not outlive them. */
typedef struct FactCache FactCache;
FactCache *an_fact_cache_new(Arena *a);
void an_fact_cache_free(FactCache *fc);

/* an_facts_at with a cache (NULL: none) and, when `loads_of` is given,
 * only the facts that can matter for the loads in that statement's
 * expressions: those naming or reading one of their buffers, and one
 * round further, as an_facts_instantiate goes. Leaving facts out only
 * weakens hypotheses. */
void an_facts_for(Arena *a, const Func *f, const StmtCtx *sc, bool for_values,
		  const Stmt *exclude, FactCache *cache, const Stmt *loads_of, FactSet *out);

/* Add to o, for every load in e (and in the hypotheses this adds, one more
 * round), the facts instantiated at that load's indices:
 * guard(t0) -> body(t0) with t0 the fact's variables solved from the load.
 * Facts whose value is T.undef() add nothing (they carry no value). */
void an_facts_instantiate(Arena *a, const FactSet *fs, const Expr *e, Obligation *o);

/* Whether the cell buf[idx] is readable (initialised) at the point the
 * facts were collected for: a logical cell of a parameter, or a cell some
 * fact covers. `written` is an extra disjunct (earlier writes of the same
 * instance), may be NULL. */
Expr *an_readable(Arena *a, const Func *f, const FactSet *fs, Buffer *buf, int nidx,
		  Expr **idx);

/* The store facts statement s itself establishes (s as one item, loops
 * and lets inside it bound; those around it free), without the facts
 * whose guard or cell indices read a buffer (they could name other cells
 * once s has written). Each says the cells it names are written by some
 * instance of s. */
void an_store_facts(Arena *a, const Stmt *s, FactSet *out);

/* Whether some fact of fs writes buf[idx] (an_readable without the
 * parameter's cells). */
Expr *an_written(Arena *a, const FactSet *fs, Buffer *buf, int nidx, Expr **idx);

/* Whether buf is a parameter of f. */
bool an_is_param(const Func *f, const Buffer *buf);

#endif
