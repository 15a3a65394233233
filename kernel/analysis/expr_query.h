/* kernel/analysis/expr_query.h — small questions about expressions and
 * statements: does it read memory, which buffers does a statement write,
 * can it convert a float to an integer, its constant value; and folding of
 * small integer expressions so rewritten extents stay readable. */
#ifndef VS_ANALYSIS_EXPR_QUERY_H
#define VS_ANALYSIS_EXPR_QUERY_H

#include "kernel/ir.h"

/* True if the expression reads any buffer. */
bool an_expr_has_load(const Expr *e);

/* True if e reads buffer b (in an index too); or one of n buffers. */
bool an_expr_reads(const Expr *e, const Buffer *b);
bool an_expr_reads_any(const Expr *e, int n, Buffer *const *bufs);
/* True if some expression of s reads b: bounds, conditions, indices,
 * values, facts, evaluated expressions, let values, allocation shapes. */
bool an_stmt_reads(const Stmt *s, const Buffer *b);
/* The first store to b in s (pre-order), or NULL. */
const Stmt *an_first_store(const Stmt *s, const Buffer *b);
/* True if s allocates b. */
bool an_allocates(const Stmt *s, const Buffer *b);
/* True if some loop of s is named `name`. */
bool an_has_loop_named(const Stmt *s, const char *name);
/* True if v is a scalar parameter of f; if e reads nothing but scalar
 * parameters and constants (no loop variables, loads, T.undef() or lets):
 * a fact about the inputs alone. */
bool an_is_scalar_param(const Func *f, const Var *v);
bool an_scalar_only(const Func *f, const Expr *e);
/* True if e holds a T.undef(). */
bool an_expr_has_undef(const Expr *e);

/* True if evaluating this node (not its operands) converts a float to an
 * integer type: a cast, or an operand converted to an integer operation's
 * dtype. Out of range, that is undefined behaviour in the interpreter
 * ("cast of 2.5e13 to int32 is out of range"), so it can fault like a
 * division by zero. */
bool an_converts_float_to_int(const Expr *e);

/* True if evaluating e may fault: an integer division or modulo by a
 * divisor not known to be nonzero, or a float-to-integer conversion; with
 * reads_fault, also any load (it may read outside its buffer) and any
 * T.undef(). */
bool an_expr_may_fault(const Expr *e, bool reads_fault);

/* Fold constants in a small integer expression (extent arithmetic) so the
 * printed IR stays readable; semantics-preserving by construction. */
Expr *an_fold(Arena *a, Expr *e);
bool an_const_int(const Expr *e, int64_t *out);

/* The largest value of an integer dtype (INT64_MAX for int64). */
int64_t an_dtype_max(DType t);

/* A set of buffers, grown in an arena (zero-initialise it). */
typedef struct BufSet {
	int n, cap;
	Buffer **items;
} BufSet;
bool bufset_has(const BufSet *s, const Buffer *b);
void bufset_add(Arena *a, BufSet *s, Buffer *b);

/* Buffers written anywhere in s (each once, in first-write order). */
int an_written_buffers(Arena *a, const Stmt *s, Buffer ***out);

/* True if e reads a buffer that `region` writes. */
bool an_expr_reads_written(Arena *a, const Expr *e, const Stmt *region);
/* True if loop's min or extent reads a buffer that `region` writes: the
 * range is read once when the loop starts, so a rewrite that reads it
 * again (a guard, a tail loop, a moved loop) would see another value. */
bool an_range_reads_written(Arena *a, const Stmt *loop, const Stmt *region);

#endif
