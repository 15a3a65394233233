/* kernel/analysis/index_map.h — index maps of transform_layout (seed 000, seed
 * 001): the physical shape a map needs, a candidate left inverse derived
 * from the map's structure, and the domain / padding predicates built
 * from them. Nothing here is trusted: transform_layout turns every claim
 * (indices in the shape, injectivity, g(f(x)) == x) into an obligation. */
#ifndef VS_REWRITES_INDEX_MAP_H
#define VS_REWRITES_INDEX_MAP_H

#include "kernel/ir.h"

typedef struct IndexMap {
	int nin;
	Var **in;	  /* logical index variables (the lambda's parameters) */
	Expr **in_extent; /* the logical shape */
	int nout;
	Expr **out;   /* physical index k as an expression of `in` */
	Expr **shape; /* the physical shape (imap_shape) */
	Var **phys;   /* physical index variables, nout of them */
	Expr **inverse; /* logical index j over `phys` (nin), or NULL */
} IndexMap;

/* The physical shape: one past the largest value of each output over the
 * logical domain, by interval arithmetic over + - * (by constants), // and
 * % (by positive constants), min, max; exact for the usual maps
 * ([i // 4, i % 4], [(i + 2) // 8, (i + 2) % 8], NHWC -> NCHWc). False with
 * *why when an output is outside that fragment. */
bool imap_shape(Arena *a, IndexMap *m, const char **why);

/* Physical index variables named after the outputs (i // 4 -> io, i % 4 ->
 * ii, a plain j -> j), unique among themselves and the logical names. */
void imap_name_phys(Arena *a, IndexMap *m);

/* Derive a candidate left inverse: outputs that are digits (e // d) % m of
 * the same affine e in a mixed radix give e back; the affine equations are
 * then solved for the logical variables. False with *why if the map's
 * structure does not determine the logical indices this way. */
bool imap_derive_inverse(Arena *a, IndexMap *m, const char **why);

/* 0 <= idx_k < extent_k for all k (NULL when n == 0: true). */
Expr *imap_in_box(Arena *a, int n, Expr **idx, Expr **extent);

/* The padding predicate over m->phys: not (g(t) in D and f(g(t)) == t).
 * Conjuncts that hold on the whole physical box for structural reasons
 * (an exact mixed-radix digit of an in-range index, a bound implied by
 * non-negative indices) are dropped; *simplified says whether any was, in
 * which case the caller proves the two forms equal on the box. The full
 * form is returned in *full. */
Expr *imap_pad_predicate(Arena *a, const IndexMap *m, Expr **full, bool *simplified);

/* not e, pushed inward exactly (De Morgan, integer comparisons flipped). */
Expr *imap_negate(Arena *a, Expr *e);

#endif
