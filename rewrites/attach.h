/* rewrites/attach.h — what compute_at and reverse_compute_at share: the
 * attach site (a block and a loop in a sibling statement of one sequence,
 * the attach path between them), the accesses that run before or after a
 * point at the start or end of one attach-loop iteration (each group with
 * fresh copies of the path variables and the order constraint), and small
 * helpers over statements. No obligation is decided here. */
#ifndef VS_REWRITES_ATTACH_H
#define VS_REWRITES_ATTACH_H

#include "rewrites/rewrite.h"
#include "kernel/analysis/region.h"

typedef struct AttachSite {
	StmtCtx block; /* the block that moves */
	StmtCtx loop;  /* the attach loop (loop.stmt) */
	Stmt *seq;     /* the sequence holding both */
	int seq_depth; /* its depth (the block is at seq_depth + 1) */
	int block_index, other_index; /* items of seq: the block, and the
					  statement holding the loop */
	int npath;     /* loops from that statement down to the attach loop,
			  inclusive (outermost first) */
	Stmt *path[AN_MAX_DEPTH];
} AttachSite;

/* The unique ST_BLOCK called `name`; RW_BAD_INPUT listing the blocks. */
RwStatus attach_find_block(RwCtx *c, const char *name, StmtCtx *out);

/* Locate block and loop; the loop must lie in a later sibling of the
 * block (loop_after) or an earlier one. Checks that the path between is
 * free of lets and of parallel or vectorized loops (not supported). */
RwStatus attach_site(RwCtx *c, const char *block, const char *loop, bool loop_after,
		     AttachSite *out);

/* The context of the statement at `depth` on the path of `deep` (a
 * prefix of it: enclosing loops, conditions and lets). */
void attach_ctx_at(RwCtx *c, const StmtCtx *deep, int depth, StmtCtx *out);

/* The statement at a path from root. */
Stmt *attach_stmt_at(Stmt *root, const int *path, int depth);

/* "xo, i" (innermost first): TVM's attach path of a stage placed in the
 * attach loop: every loop around it, up to the function body. */
char *attach_path_text(Arena *a, const AttachSite *s);

/* A group of statement instances relative to the current iteration of
 * the attach path: accesses with fresh copies of the path variables, the
 * copies' ranges and the order constraint as hypotheses. */
typedef struct OrderGroup {
	AccessList acc;
	int nvars;
	Var **vars;
	int nhyps;
	Expr **hyps;
} OrderGroup;

typedef enum {
	ORDER_BEFORE_START, /* run before the start of the current iteration
			       of the attach loop's body (compute_at) */
	ORDER_AFTER_END,    /* run after its end (reverse_compute_at) */
} OrderSide;

/* The instances of the statement that holds the attach loop (other than
 * the current iteration of its body) that run on `side` of the point;
 * groups are appended to *out (arena array), their number returned. */
int attach_order_groups(RwCtx *c, const AttachSite *s, OrderSide side, OrderGroup **out);

/* Accesses of the statements strictly between the block and the loop's
 * statement in the sequence (every instance). */
void attach_between_accesses(RwCtx *c, const AttachSite *s, AccessList *out);

/* Buffers written anywhere in the function (the volatile set for access
 * collection). */
int attach_written_buffers(RwCtx *c, Buffer ***out);

/* An obligation with the context of the attach loop's body: the
 * enclosing hypotheses and the attach loop's own range. Not pushed. */
Obligation *attach_base(RwCtx *c, const AttachSite *s, const char *kind,
			const char *statement, Expr *goal, Span origin);
/* Copy of base with a group's variables and hypotheses added. */
Obligation *attach_with_group(RwCtx *c, const Obligation *base, const OrderGroup *g);

/* Keep only the reads (want_writes false) or the writes of a list. */
void attach_filter(Arena *a, const AccessList *in, bool want_writes, AccessList *out);

/* The k with loops[k]'s variable being e, or -1. */
int attach_loop_index(Stmt *const *loops, int nloops, const Expr *e);
/* idx = var(loops[k]) + offset or var(loops[k]) - offset, with the offset
 * accepted by offset_ok(offset, ud): k and the offset (negated for `-`). */
bool attach_match_index(Arena *a, Stmt *const *loops, int nloops, Expr *idx,
			bool (*offset_ok)(const Expr *offset, void *ud), void *ud, int *k,
			Expr **offset);

/* True if s stores to buf somewhere; *where gets the first store. */
bool attach_stmt_writes(const Stmt *s, const Buffer *buf, const Stmt **where);
/* Every integer sum, difference, product and negation inside e (e
 * included), recomputed exactly in int64 from its operands, lies in its
 * dtype's range: the generated bounds never wrap (proofs wrap like the
 * program, so the loop-range hypotheses stay what the loops run); in an
 * arm of T.if_then_else, only where the condition picks that arm. NULL
 * when e has no such subterm of a dtype narrower than int64. */
Expr *attach_no_overflow(Arena *a, const Expr *e);

/* Obligation `kind`: the n new loops' bounds (lo[k], ext[k] and their
 * sum, computed in the loop variable's dtype) do not overflow, in the
 * context of the attach loop's body. Nothing when there is no arithmetic. */
void attach_bounds_overflow(RwCtx *c, const AttachSite *s, int n, Stmt *const *loops,
			    Expr *const *lo, Expr *const *ext, const char *block, const char *kind,
			    Span origin);

/* The same for loops whose ranges may use the outer ones among them: the
 * bounds of loop i assume the new ranges of loops 0..i-1 (and `guard`,
 * or NULL); one obligation per loop. */
void attach_nested_bounds_overflow(RwCtx *c, const AttachSite *s, int n, Stmt *const *loops,
				   Expr *const *lo, Expr *const *ext, Expr *guard,
				   const char *block, const char *kind, Span origin);

/* Bounds [*lo, *hi] (inclusive) of variable v for which the index e lies
 * in [L, H], inverting e rule by rule (v + r, v - r, r - v, K * v, v // K,
 * v % K over its whole period: no bound, *lo = *hi = NULL); the other
 * variables of e range over env. A guess that may over-approximate: the
 * caller's obligations decide. false when e has no rule. */
bool attach_invert_index(RgEnv *env, Expr *e, const Var *v, Expr *L, Expr *H, Expr **lo,
			 Expr **hi);

/* (x1..xn) <lex (y1..yn); x == y when n == 0 is false. */
Expr *attach_lex_less(Arena *a, int n, Expr **x, Expr **y);

#endif
