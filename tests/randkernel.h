/* tests/randkernel.h — the random kernel and schedule-step generator of
 * the soundness property test, shared with the backend suite (which runs
 * the same kernels and steps through the JIT). Deterministic from
 * rng_state. */
#ifndef VS_TESTS_RANDKERNEL_H
#define VS_TESTS_RANDKERNEL_H

#include "tests/testutil.h"

extern uint64_t rng_state;
/* A seed as a state: distinct seeds give distinct sweeps, never 0. */
uint64_t rng_seed_state(uint64_t seed);
unsigned rnd(unsigned n); /* xorshift, in [0, n) */

/* A random small int32 kernel: several nests, affine reads at offsets, math
 * calls (T.abs, T.max),
 * guards, reductions, no-op updates, sometimes entry facts and a scratch
 * allocation (malloc'ed text). */
char *gen_kernel(void);

typedef struct LoopRef {
	const Stmt *loop;
	char name[64]; /* "i0" or "i0#2" */
} LoopRef;

void collect_loops(const Stmt *s, LoopRef *out, int *n, int cap);
/* The name of loop statement `child` among loops, or NULL. */
const char *child_name(const LoopRef *loops, int n, const Stmt *child);
/* One random loop primitive (split, fuse, reorder, parallel, vectorize,
 * unroll, merge_adjacent_loops, fission) on a random loop; desc names it. */
RwStatus random_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn);

#endif
