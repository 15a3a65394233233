/* kernel/analysis/affine.h — THE affine (linear) form: sum coef[i] *
 * atom[i] + k over opaque integer terms (variables, loads, x // 4, ...)
 * with int64 coefficients, kept small (|value| < 2^40) so that no sum or
 * product of forms overflows; add, scale, substitute, interval of a form,
 * and the Expr it stands for. The simplifiers (arith, region) build their
 * normal forms on it; nothing here is trusted (their callers prove). */
#ifndef VS_ANALYSIS_AFFINE_H
#define VS_ANALYSIS_AFFINE_H

#include "kernel/analysis/interval.h"

#define AFFINE_MAX_TERMS 32
#define AFFINE_BIG (INT64_C(1) << 40) /* coefficients and constants stay below */

typedef bool (*AffineSame)(const Expr *x, const Expr *y);

/* Atoms with a zero coefficient are dropped; two atoms are one term when
 * `same` says so (affine_same_atom when NULL). `bad`: the form outgrew
 * its limits (more than `cap` terms, a number beyond AFFINE_BIG) and
 * stands for nothing. */
typedef struct Affine {
	int n, cap;
	Expr *atom[AFFINE_MAX_TERMS];
	int64_t coef[AFFINE_MAX_TERMS];
	int64_t k;
	bool bad;
	AffineSame same;
} Affine;

/* Structural equality, dtypes included, with variables compared by
 * identity; two occurrences of T.undef() are never equal (they are two
 * values), the same node is equal to itself. */
bool affine_same_atom(const Expr *x, const Expr *y);

/* k alone, holding at most cap (<= AFFINE_MAX_TERMS) terms */
Affine affine_const(int64_t k, int cap);
Affine affine_atom(Expr *atom, int cap);
void affine_add_term(Affine *l, Expr *atom, int64_t coef);
/* x + sign * y */
Affine affine_combine(Affine x, const Affine *y, int64_t sign);
Affine affine_scale(Affine x, int64_t c);
/* l with term i replaced by coef[i] * by */
Affine affine_substitute(Affine l, int i, const Affine *by);
bool affine_is_const(const Affine *l, int64_t *k);
/* The number of terms with a non-zero coefficient, the constant counted
 * when it is not 0. */
int affine_nterms(const Affine *l);

/* The interval of l with each atom in atom_range(ctx, atom) (on
 * mathematical integers), sides beyond AFFINE_BIG unbounded. */
typedef Interval (*AffineAtomRange)(void *ctx, const Expr *atom);
Interval affine_range(const Affine *l, AffineAtomRange atom_range, void *ctx);

/* l += k * x, x read as a form: + - and negation, products with a
 * constant factor; every other subterm is an atom. false when a number
 * or the term count outgrows the limits. *nsyntax (if not NULL) counts
 * the atoms and constants as written, to tell whether normalising
 * helped. */
bool affine_add_expr(Affine *l, Expr *x, int64_t k, int *nsyntax);

/* The expression of l at dtype t, in one of two renderings (each client's
 * output is pinned by its golden tests):
 * - in order: terms as they came, `c * x`, coefficients and constant
 *   wrapped to t (a literal always fits its dtype);
 * - sorted: positive terms first, `x * c`, then the constant. */
Expr *affine_expr_in_order(Arena *a, const Affine *l, DType t);
Expr *affine_expr_sorted(Arena *a, const Affine *l, DType t);

#endif
