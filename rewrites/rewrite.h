/* rewrites/rewrite.h — what every primitive shares: the rewrite context
 * (input function, arguments, output function and its obligations), loop
 * lookup by name ("i#2") with its diagnostics, the hypotheses that hold at
 * a statement, and the obligations several primitives build alike
 * (loop.no_wrap, commutation of semantics.md section 4, race freedom).
 * The analyses they ask are in kernel/analysis/. A rewrite is a
 * pure function: it never modifies its input and never calls a solver. */
#ifndef VS_REWRITES_REWRITE_H
#define VS_REWRITES_REWRITE_H

#include "kernel/analysis/access.h"
#include "kernel/obligation.h"

typedef enum {
	RW_OK,           /* output built; obligations must still be proven */
	RW_BAD_INPUT,    /* unknown loop/buffer, bad argument: exit 2 */
	RW_PRECONDITION, /* the primitive does not apply to this program */
	RW_UNSUPPORTED,  /* not implemented for this shape: rejects */
} RwStatus;

typedef struct RwCtx {
	Arena *arena;
	const Func *func; /* input: never modified */
	const Module *module; /* the module func belongs to (never modified) */
	FloatMode float_mode;
	DiagList *diag;	   /* error messages for non-OK statuses */
	Span call_span;	   /* the schedule-script call, for diagnostics */
	const char *desc;  /* "split(i, factor=4, tail=guard)" */
	ObligationList obs; /* filled by the primitive */
	Func *out;	   /* the rewritten function on RW_OK */
	/* Split with tail=guard asks for two candidate results: the schedule
	 * commits `out` if every obligation is proven, else `fallback` (which
	 * needs no obligation). NULL when there is no fallback. */
	Func *fallback;
	const char *fallback_note;
	/* A rewrite that changes several functions of the module (a layout
	 * change of a parameter the functions share) sets out_module; out is
	 * then the current function's new version. */
	Module *out_module;
	/* A precondition reported only once every obligation is proven: the
	 * step then rejects with this reason ("not supported: ..."). Used
	 * where a refutation, if there is one, tells the user more (a layout
	 * map without a derivable inverse is first checked for injectivity). */
	const char *reject_after;
	/* A note for the report of a committed step. */
	const char *note;
	/* Set by the rewrites whose soundness does not depend on what the
	 * statements read and write (split, fuse, unroll: the statement
	 * instances keep their order). Every other rewrite is refused on a
	 * function with an opaque call (sched_opaque_refusal). */
	bool opaque_ok;
	/* What the fallback itself needs proven (split's guarded form: its
	 * index arithmetic stays below the dtype maximum). The fallback is
	 * committed only when every one of these is proven. */
	ObligationList fallback_obs;
	/* Facts per statement, kept by a step that asks for the facts at
	 * many points (NULL: none); it must not outlive the arena. */
	struct FactCache *facts;
} RwCtx;

RwStatus rw_fail(RwCtx *c, RwStatus st, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---------- locating loops, context hypotheses (rewrites/context.c) ---------- */

/* Find loop "i" or "i#k" (k-th loop named i in program order, 1-based; a
 * plain name shared with fact loops means the one other loop).
 * RW_BAD_INPUT with a diagnostic listing the loops when it is absent or
 * ambiguous ("i" when two loops are named i is ambiguous). */
RwStatus rw_find_loop(RwCtx *c, const char *name, StmtCtx *out);
/* For "no block 'x'" / "no buffer 'x'" errors: "; did you mean 'y'?" when
 * a name of f is close (edit distance at most 2), then the names f has,
 * " (blocks: a, b)" / " (buffers: A, B)". */
const char *rw_block_hint(Arena *a, const Func *f, const char *name);
const char *rw_buffer_hint(Arena *a, const Func *f, const char *name);

/* Hypotheses that hold at the statement: ranges of enclosing loops, path
 * conditions that do not read buffers, let equations, the entry T.assume
 * facts that mention only scalar parameters, and the dtype ranges of
 * scalar parameters. Appended to o->hyps; variables added to o->vars. */
void rw_add_context_hyps(RwCtx *c, Obligation *o, const StmtCtx *sc);

/* Obligations loop.no_wrap (on c->obs, and on c->fallback_obs when there
 * is a fallback): no loop of the input or of the output (c->out, the
 * changed functions of c->out_module, c->fallback) has a range whose
 * min + extent passes its dtype's largest value. Called by the schedule
 * for every step that built an output. */
void rw_loop_wrap_obligations(RwCtx *c);

/* Statement nesting (the levels of a StmtCtx path) beyond what the walks
 * follow (AN_MAX_DEPTH): a message naming the function, or NULL. Every
 * function a step reads or produces is checked (c->func, c->out, the
 * fallback and the functions of out_module), so no obligation is ever
 * built from a walk that stopped early. */
const char *rw_nesting_too_deep(const RwCtx *c);

/* An obligation "goal" at the statement sc, with its context hypotheses,
 * pushed on `list` (c->obs or c->fallback_obs). */
Obligation *rw_obligation_at(RwCtx *c, ObligationList *list, const StmtCtx *sc,
			     const char *kind, const char *statement, Expr *goal);

/* ---------- the kernel as written (rewrites/safety.c) ---------- */

/* Obligations that c->func has no undefined behaviour of two kinds
 * (semantics.md 1): safety.in_bounds for every access (inside the
 * buffer's physical shape) and safety.nonzero_divisor for every integer
 * division or modulo whose divisor is not a non-zero literal, each under
 * the guard the interpreter evaluates it under, and with the hypothesis
 * that every parameter buffer fits in memory (each extent, and each size
 * variable of a shape, at most 2^48). At most `budget` are
 * stated (in program order); returns how many were left out. */
int rw_safety_obligations(RwCtx *c, int budget);

/* ---------- commutation (rewrites/commute.c, rewrites/annotate.c) ---------- */

/* Emit obligations "S(p) and S(q) commute" for two access lists of two
 * instances: for every pair (one from each) on the same buffer with at
 * least one write, "not (guards hold and indices equal)" under `base`
 * hypotheses (copied in). With allow_reductions, two reduction accesses
 * with the same associative-commutative operator are exempt (real mode
 * for floats; always for integers). */
void rw_commute_obligations(RwCtx *c, const char *kind, const char *what,
			    const Obligation *base, const AccessList *p,
			    const AccessList *q, bool allow_reductions);

/* The same, exempting every pair of reduction accesses with the same
 * operator (`X[e] = X[e] op v`) and emitting, once per operator and
 * dtype, the obligation KIND-prefix.reassociate instead (vectorize of a
 * reduction loop). */
void rw_commute_reassociating(RwCtx *c, const char *kind, const char *what, const Obligation *base,
			      const AccessList *p, const AccessList *q);

/* PREFIX.reassociate on c->obs (semantics.md 9): op is associative and
 * commutative on dtype t in the float mode, bit for bit. In ieee mode,
 * float + and * are asked at values whose roundings differ (refuted);
 * integer * is not asked (a ring fact bit-vector solvers time out on:
 * c->note says so) and false is returned. Once per prefix, op and t. */
bool rw_reassociate_obligation(RwCtx *c, const char *prefix, BinOp op, DType t, Span origin);

/* Race freedom of `loop` as it stands (semantics.md section 4, parallel /
 * vectorize): for two iterations v1 < v2 of its range, no access of one
 * touches a cell the other writes; reductions included. `base` holds the
 * hypotheses of the loop's context (copied, not changed). Used by
 * parallel/vectorize and by reorder when a labelled loop moves. */
void rw_race_obligations(RwCtx *c, const char *kind, const Obligation *base,
			 const Stmt *loop);

/* ---------- the primitives (one file each) ----------
 * Each fills c->out (and c->obs) or returns a failure status with a
 * diagnostic in c->diag. Names of created loops come from the script's
 * left-hand side; NULL gives defaults (i -> i_o, i_i; fused i_j_fused). */

typedef enum { TAIL_GUARD, TAIL_PERFECT, TAIL_CUT, TAIL_CUT_AND_GUARD } SplitTail;
bool split_tail_from_name(const char *name, SplitTail *out);
const char *split_tail_name(SplitTail t);

RwStatus rw_split(RwCtx *c, const char *loop, int64_t factor, SplitTail tail,
		  const char *outer_name, const char *inner_name);
/* rw_split, naming the tail loop of cut / cut_and_guard (NULL: the inner
 * name + "_tail"). The tail's inner loops get Vars of their own (same
 * names), so that loop handles keep naming the main part's loops. */
RwStatus rw_split_tail(RwCtx *c, const char *loop, int64_t factor, SplitTail tail,
		       const char *outer_name, const char *inner_name, const char *tail_name);
/* Why a split of `loop` by factor with `tail` makes no tail loop to name
 * (a tail other than cut / cut_and_guard, or a constant extent that the
 * factor divides), or NULL. rw_split_tail given a tail name is bad input
 * then. */
const char *rw_split_no_tail(Arena *a, const Stmt *loop, int64_t factor, SplitTail tail);
/* A copy of s whose loops binding a Var that a loop of `shared_with` binds
 * (NULL: every loop) bind fresh Vars of the same names instead: the same
 * program (rewrites/fission.c). With blocks_of, every block of the copy
 * is renamed "NAME_tail" (with a number if a block of blocks_of has it),
 * and every buffer it allocates is a new buffer "NAME_tail" (the same
 * rule over the buffers blocks_of allocates or accesses): a copy's
 * blocks must not share the names of the original's, nor its
 * allocations the original's buffers. */
Stmt *rw_fresh_loop_vars(Arena *a, Stmt *s, const Stmt *shared_with, const Stmt *blocks_of);
/* TVM's factors=[outer, None] on a symbolic extent N: `outer` tiles of
 * (N + outer - 1) // outer iterations, guarded (proofs/split.md). */
RwStatus rw_split_outer(RwCtx *c, const char *loop, int64_t outer, const char *outer_name,
			const char *inner_name);
RwStatus rw_fuse(RwCtx *c, const char *outer, const char *inner,
		 const char *fused_name);
RwStatus rw_reorder(RwCtx *c, int nloops, const char *const *loops);
/* add_unit_loop: block `target` (is_block) or loop `target` inside a new
 * loop of one iteration named `name` (NULL: "u"); no obligation. */
RwStatus rw_add_unit_loop(RwCtx *c, const char *target, bool is_block, const char *name);
/* lift_alloc (Exo's): the allocation of `buffer` (the first in program
 * order) out of the n_lifts loops or ifs around it
 * (rewrites/lift_alloc.c). */
RwStatus rw_lift_alloc(RwCtx *c, const char *buffer, int n_lifts);
/* When evaluating e cannot fault (rewrites/hoist.c): its loads inside
 * their buffers' shapes (parameter buffers without a layout: every cell
 * is an input), its divisors not zero, its shift amounts in range. NULL
 * when that cannot be stated (a load of an allocated buffer, a let, an
 * opaque call, a float-to-integer conversion). */
Expr *rw_safe_to_eval(Arena *a, const Func *f, const Expr *e);
/* KIND, at the function's entry, for a new buffer b allocated for the
 * whole function (rfactor's, reindex's): every dimension of its shape
 * that is not a non-negative literal uses only scalar parameters, is not
 * negative and cannot fault there (the nest it serves may never evaluate
 * it: under an `if`, in a loop of no iteration). False (c's failure set,
 * RW_UNSUPPORTED) when that cannot be stated. */
bool rw_entry_shape_obligation(RwCtx *c, const char *kind, const Buffer *b, Span origin);
RwStatus rw_parallel(RwCtx *c, const char *loop);
RwStatus rw_vectorize(RwCtx *c, const char *loop);
RwStatus rw_unroll(RwCtx *c, const char *loop);

/* ---------- compute_at and reverse_compute_at ----------
 * rewrites/compute_at.c: move producer block `block` to the start of the
 * body of `loop` (in a later statement), computing per iteration only the
 * region that body reads, and shrink the intermediate buffer to it.
 * rewrites/reverse_compute_at.c: move consumer block `block` to the end of
 * the body of `loop` (in an earlier statement), computing per iteration
 * the consumer instances whose input that iteration produced. */
RwStatus rw_compute_at(RwCtx *c, const char *block, const char *loop);
RwStatus rw_reverse_compute_at(RwCtx *c, const char *block, const char *loop);
/* ... inserted before item `index` of the loop body's sequence (TVM's
 * index >= 0; index == number of items is the end, as above). */
RwStatus rw_reverse_compute_at_index(RwCtx *c, const char *block, const char *loop, int index);

/* ---------- decompose_reduction (rewrites/decompose_reduction.c) ----------
 * TVM's decompose_reduction: the T.init of reduction block X becomes its
 * own block X_init right before `loop` (an ancestor of X), inside copies
 * of the loops between `loop` and X that its spatial bindings use; X is
 * renamed X_update and keeps only the update. Handled: only loops and
 * guards from `loop` down to X; spatial and reduce iter vars; bindings,
 * ranges, guards and T.where free of loads. Obligations
 * decompose.init_instances,
 * decompose.init_reached, decompose.commute (and the race freedom of a
 * copied parallel or vectorized loop). */
RwStatus rw_decompose_reduction(RwCtx *c, const char *block, const char *loop);

/* ---------- rfactor (rewrites/rfactor.c) ----------
 * TVM's rfactor(loop, factor_axis) on the reduction block under `loop` (a
 * loop of the block's own perfect nest): the block X_rf reduces into a
 * new buffer with loop's extent at factor_axis, the write-back block X
 * reduces that into X. Obligations rfactor.reassociate, .identity,
 * .reduction_loops, .cells_distinct, .init_first, .reduce_nonempty,
 * .rf_init, .no_self_read (semantics.md 9, "Reductions"). */
RwStatus rw_rfactor(RwCtx *c, const char *loop, int64_t factor_axis);

#endif
