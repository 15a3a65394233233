/* rewrites/rewrite.h — what every primitive shares: the rewrite context
 * (input function, arguments, output function and its obligations), loop
 * lookup by name ("i#2"), the facts and path conditions that hold at a
 * loop, replacement of a statement along a path, access collection, and
 * the commutation obligations of semantics.md section 4. A rewrite is a
 * pure function: it never modifies its input and never calls a solver. */
#ifndef VS_REWRITES_REWRITE_H
#define VS_REWRITES_REWRITE_H

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

/* ---------- locating loops (rewrites/context.c) ---------- */

#define RW_MAX_DEPTH 64

/* Everything known at a statement: the path from the function body to it,
 * the loops, conditions and lets around it. */
typedef struct StmtCtx {
	Stmt *stmt;
	int depth;
	int path[RW_MAX_DEPTH]; /* child index at each level */
	int nloops;
	Stmt *loops[RW_MAX_DEPTH]; /* enclosing ST_FOR, outermost first */
	int nconds;
	Expr *conds[RW_MAX_DEPTH]; /* path conditions (negated for else) */
	int nlets;
	Stmt *lets[RW_MAX_DEPTH]; /* enclosing ST_LET statements */
} StmtCtx;

/* A loop nest that holds only T.assume statements (a fact loop). */
bool rw_is_fact_loop(const Stmt *s);

/* Find loop "i" or "i#k" (k-th loop named i in program order, 1-based; a
 * plain name shared with fact loops means the one other loop).
 * RW_BAD_INPUT with a diagnostic listing the loops when it is absent or
 * ambiguous ("i" when two loops are named i is ambiguous). */
RwStatus rw_find_loop(RwCtx *c, const char *name, StmtCtx *out);

/* Call fn on every statement of f in program order (pre-order), with its
 * context (ctx->stmt is the statement). */
typedef void (*StmtVisitor)(void *ud, Stmt *s, const StmtCtx *ctx);
void rw_walk(Arena *a, const Func *f, StmtVisitor fn, void *ud);
/* The statement reached from root by the first `depth` steps of path. */
Stmt *rw_stmt_at(Stmt *root, const int *path, int depth);

/* The context of statement `target` (found by identity) in fn. */
bool rw_find_stmt(Arena *a, const Func *fn, const Stmt *target, StmtCtx *out);

/* Rebuild the function body with the statement at ctx->path replaced. */
Stmt *rw_replace_at(Arena *a, Stmt *root, const int *path, int depth,
		    Stmt *replacement);
Func *rw_with_body(Arena *a, const Func *f, Stmt *body);

/* Hypotheses that hold at the statement: ranges of enclosing loops, path
 * conditions that do not read buffers, let equations, the entry T.assume
 * facts that mention only scalar parameters, and the dtype ranges of
 * scalar parameters. Appended to o->hyps; variables added to o->vars. */
void rw_add_context_hyps(RwCtx *c, Obligation *o, const StmtCtx *sc);

/* The range hypothesis `min <= v < min + extent`. It describes every
 * iteration only when min + extent does not wrap; every step proves that
 * (rw_loop_wrap_obligations). */
Expr *rw_loop_range(Arena *a, const Stmt *loop, Expr *var_value);

/* Obligations loop.no_wrap (on c->obs, and on c->fallback_obs when there
 * is a fallback): no loop of the input or of the output (c->out, the
 * changed functions of c->out_module, c->fallback) has a range whose
 * min + extent passes its dtype's largest value. Called by the schedule
 * for every step that built an output. */
void rw_loop_wrap_obligations(RwCtx *c);

/* True if evaluating this node (not its operands) converts a float to an
 * integer type: a cast, or an operand converted to an integer operation's
 * dtype. Out of range, that is undefined behaviour in the interpreter
 * ("cast of 2.5e13 to int32 is out of range"), so it can fault like a
 * division by zero. */
bool rw_converts_float_to_int(const Expr *e);

/* True if the expression reads any buffer. */
bool rw_expr_has_load(const Expr *e);

/* A fresh variable named like v (same dtype). */
Var *rw_fresh_var(Arena *a, const Var *v, const char *suffix);

/* Fold constants in a small integer expression (extent arithmetic) so the
 * printed IR stays readable; semantics-preserving by construction. */
Expr *rw_fold(Arena *a, Expr *e);
bool rw_const_int(const Expr *e, int64_t *out);

/* ---------- loop ranges and index arithmetic (rewrites/context.c) ----------
 * Soundness guards shared by the loop primitives (see proofs/). */

/* The largest value of an integer dtype (INT64_MAX for int64). */
int64_t rw_dtype_max(DType t);

/* True if loop's min or extent reads a buffer that `region` writes: the
 * range is read once when the loop starts, so a rewrite that reads it
 * again (a guard, a tail loop, a moved loop) would see another value. */
bool rw_range_reads_written(Arena *a, const Stmt *loop, const Stmt *region);
/* True if e reads a buffer that `region` writes. */
bool rw_expr_reads_written(Arena *a, const Expr *e, const Stmt *region);

/* Statement nesting (the levels of a StmtCtx path) beyond what the walks
 * follow (RW_MAX_DEPTH): a message naming the function, or NULL. Every
 * function a step reads or produces is checked (c->func, c->out, the
 * fallback and the functions of out_module), so no obligation is ever
 * built from a walk that stopped early. */
const char *rw_nesting_too_deep(const RwCtx *c);

/* An obligation "goal" at the statement sc, with its context hypotheses,
 * pushed on `list` (c->obs or c->fallback_obs). */
Obligation *rw_obligation_at(RwCtx *c, ObligationList *list, const StmtCtx *sc,
			     const char *kind, const char *statement, Expr *goal);

/* ---------- accesses and commutation (rewrites/access.c) ---------- */

typedef struct Access {
	Buffer *buf;
	bool is_write;
	int nidx;
	Expr **idx;    /* in terms of the instance's (fresh) variables */
	Expr *guard;   /* conjunction of conditions under which it happens */
	Span span;
	const Expr *load;  /* the original load node (reads) */
	const Stmt *store; /* the store it belongs to (writes, and the loads
			      of a store's value/indices) */
	bool in_reduction; /* access to X of a reduction update X[e] op= v */
	BinOp red_op;
	Expr *value;	   /* writes: the stored value, instantiated (loads kept) */
	int nscope;
	Var **scope;	   /* fresh variables of the loops and lets around it,
			      outermost first */
} Access;

typedef struct AccessList {
	int n, cap;
	Access *items;
	int nvars;
	Var **vars; /* fresh inner-loop and let variables introduced */
	int nhyps;
	Expr **hyps; /* their ranges and let equations */
} AccessList;

/* Collect the accesses of one instance of s, after substituting `n`
 * variables (the instance's loop vars) by the given expressions. Inner
 * loops get fresh variables (recorded with their ranges). Loads from the
 * buffers in `volatile_bufs` (written somewhere in the region) are read in
 * an unknown state, so inside indices and guards they are replaced by
 * fresh unconstrained values: an over-approximation that keeps the check
 * sound. */
void rw_collect_accesses(RwCtx *c, const Stmt *s, int n, Var **from,
			 Expr **to, int nvolatile, Buffer **volatile_bufs,
			 AccessList *out);

/* e with every load of a buffer in `bufs` (inside indices too) replaced
 * by a fresh unconstrained value: e read in a state where those buffers
 * may hold anything (written between the point the obligation's loads
 * describe and the point e is evaluated). NULL stays NULL. */
Expr *rw_havoc_loads(RwCtx *c, Expr *e, int nbufs, Buffer **bufs);

/* Name the fresh inner-loop and let variables of one instance after the
 * instance ("k'" -> "k_p"), so a counterexample tells the two instances'
 * values apart. */
void rw_name_instance(Arena *a, AccessList *l, const char *suffix);

/* Buffers written anywhere in s. */
int rw_written_buffers(Arena *a, const Stmt *s, Buffer ***out);

/* Emit obligations "S(p) and S(q) commute" for two access lists of two
 * instances: for every pair (one from each) on the same buffer with at
 * least one write, "not (guards hold and indices equal)" under `base`
 * hypotheses (copied in). With allow_reductions, two reduction accesses
 * with the same associative-commutative operator are exempt (real mode
 * for floats; always for integers). */
void rw_commute_obligations(RwCtx *c, const char *kind, const char *what,
			    const Obligation *base, const AccessList *p,
			    const AccessList *q, bool allow_reductions);

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
RwStatus rw_fuse(RwCtx *c, const char *outer, const char *inner,
		 const char *fused_name);
RwStatus rw_reorder(RwCtx *c, int nloops, const char *const *loops);
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

#endif
