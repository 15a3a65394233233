/* kernel/verify.h — the IR verifier (style rule 14, as QBE checks its SSA
 * between passes): an internal well-formedness check of a function or a
 * module, run after parsing and after every committed schedule step. It
 * finds compiler bugs, not user errors: every message starts with
 * "internal error: IR verifier: function 'f': " and a failure may only
 * ever turn a result into a rejection. */
#ifndef VS_KERNEL_VERIFY_H
#define VS_KERNEL_VERIFY_H

#include "kernel/ir.h"

/* Scopes (every variable and buffer used is bound by an enclosing loop,
 * let, allocation or parameter; no binder rebinds a variable or buffer
 * already in scope), dtypes (ir.h's operand rules, bool conditions,
 * integer indices and extents, store values of the buffer's dtype),
 * shapes (one index per dimension) and structure (no missing child, no
 * unknown kind). Appends one error per problem found (a few at most) to d
 * and returns true when there were none. */
bool ir_verify_func(const Func *f, DiagList *d);
bool ir_verify_module(const Module *m, DiagList *d);

/* The functions of `after` that `before` does not hold (compared by
 * pointer: the IR is immutable and a rewrite shares what it did not
 * change); `before` may be NULL (all of them). Returns NULL when they are
 * well formed, else the first error's message (allocated in a). */
const char *ir_verify_changed(Arena *a, const Module *after, const Module *before);

#endif
