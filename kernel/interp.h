/* kernel/interp.h — the reference interpreter: it defines what a kernel
 * computes (semantics.md section 1). It runs a function on concrete
 * buffers, detects undefined behaviour, tracks which cells were last
 * written with T.undef(), generates random admissible inputs, and compares
 * final states. */
#ifndef VS_KERNEL_INTERP_H
#define VS_KERNEL_INTERP_H

#include "kernel/ir.h"

/* Integer and bool values in i (wrapped to the dtype's width and
 * sign-extended); floats in f (float32 values rounded to float). */
typedef union Value {
	int64_t i;
	double f;
} Value;

typedef enum {
	CELL_UNINIT = 0, /* never written, not an input: reading it is UB */
	CELL_INIT,       /* holds a value */
	CELL_UNDEF,      /* last write was T.undef(): readable, value arbitrary,
			    excluded from output comparison */
} CellState;

typedef struct BufState {
	const Buffer *buf;
	int ndim;
	int64_t *shape; /* concrete extents */
	int64_t size;   /* product of shape */
	Value *data;    /* row-major */
	uint8_t *cell;  /* CellState per element */
} BufState;

typedef struct State {
	const Func *func;
	int nscalars;
	Var **scalar_vars; /* PARAM_SCALAR vars in parameter order */
	Value *scalars;
	int nbufs;
	BufState *bufs; /* one per buffer parameter, in parameter order */
	Arena *arena;   /* owns everything above */
} State;

/* The most cells one buffer of a run may have. */
#define INTERP_MAX_CELLS ((int64_t)1 << 22)

/* A state for f with the given scalar values (in parameter order); every
 * buffer cell CELL_UNINIT with value 0. NULL + diagnostic if a shape is
 * negative or too large (more than INTERP_MAX_CELLS). */
State *state_new(Arena *a, const Func *f, const int64_t *scalars, DiagList *d);
State *state_clone(Arena *a, const State *s);
BufState *state_buffer(State *s, const char *name); /* by buffer name */
int64_t bufstate_offset(const BufState *b, const int64_t *idx); /* -1 if OOB */

typedef enum {
	RUN_OK,
	RUN_UB,            /* undefined behaviour: message and span say what */
	RUN_ASSUME_FAILED, /* a T.assume was false: input not admissible */
	RUN_LIMIT,         /* step limit reached */
	RUN_UNSUPPORTED,   /* an opaque call (T.call_extern ...): its effect is
			      unknown, so the interpreter cannot run it */
} RunStatus;

typedef struct InterpCounts {
	uint64_t loads, stores, branches, iterations;
} InterpCounts;

typedef struct InterpResult {
	RunStatus status;
	const char *message; /* arena-owned, for RUN_UB / RUN_ASSUME_FAILED */
	Span span;
	InterpCounts counts;
	uint64_t steps; /* statements executed plus loop iterations: what
			   step_limit bounds */
} InterpResult;

/* Run f on st (modified in place). step_limit 0 = default
 * (INTERP_DEFAULT_STEP_LIMIT); past it the run stops with RUN_LIMIT. */
#define INTERP_DEFAULT_STEP_LIMIT 100000000ull
RunStatus interp_run(const Func *f, State *st, uint64_t step_limit,
		     InterpResult *r);

/* The two forms of the interpreter. The tree walk is the reference text
 * of the semantics; the compiled form (kernel/interp_compile.c: the IR
 * compiled once per run into a tree of closures with the operands'
 * types resolved) runs the same statements with the same steps, counts,
 * values, cell states and messages, many times faster on loop nests.
 * interp_run uses the compiled form unless the environment variable
 * VS_INTERP is "tree". */
typedef enum { INTERP_COMPILED, INTERP_TREE } InterpEngine;
RunStatus interp_run_engine(const Func *f, State *st, uint64_t step_limit,
			    InterpEngine engine, InterpResult *r);

/* A random admissible input for f from seed: scalar params chosen small
 * (0..64) satisfying the entry T.assume facts (a param an entry fact pins,
 * `T.assume(n == 128)`, takes that value), every cell of every buffer
 * parameter initialised with a small random value (floats are small
 * dyadic rationals so re-associated sums stay exact), then cells repaired
 * to satisfy facts of the shapes `cond or X[t] == v` and `X[t] ==
 * T.undef()`. Returns NULL + diagnostic when no admissible input is found
 * (the diagnostic names the fact). */
State *interp_gen_input(Arena *a, const Func *f, uint64_t seed, DiagList *d);

/* Like interp_gen_input, but with the scalar parameters fixed (values in
 * parameter order of the PARAM_SCALAR params); used to replay a
 * counterexample. NULL + diagnostic if the entry facts reject them. */
State *interp_gen_input_scalars(Arena *a, const Func *f, uint64_t seed,
				const int64_t *scalars, DiagList *d);

/* Copy the input cells of `from` into a state for g (same parameter
 * names, same shapes). NULL + diagnostic when they do not match. */
State *state_transfer(Arena *a, const State *from, const Func *g, DiagList *d);
/* The same, except that cells a layout maps outside g's shape are left
 * out instead of failing: the replay of a refuted layout.in_bounds runs g
 * on the rest, where g's access outside the shape shows. */
State *state_transfer_partial(Arena *a, const State *from, const Func *g, DiagList *d);

/* Compare the final states of P (before) and P' (after): every cell of
 * every buffer parameter, except cells P marks CELL_UNDEF. Returns true if
 * equal; otherwise *diff (malloc'ed) names the first differing location,
 * e.g. "B[3, 1]: 7 vs 9". Float comparison is exact (bitwise for -0.0 vs
 * 0.0 when ieee is true), or within rel_tol when rel_tol > 0. */
bool state_equal(const State *before, const State *after, bool ieee,
		 double rel_tol, char **diff);

/* Differential check: `trials` random admissible inputs of a, transferred
 * to b, both run, compared. When b is a restriction of a (its entry facts
 * pin a scalar param that a's leave free: specialize), the inputs are b's,
 * transferred to a: the claim holds on b's inputs only. Returns 0 if all agree, 1 on a difference or
 * UB in b (report says which and the input), 2 if inputs cannot be made
 * or transferred (report says why). report is malloc'ed. */
int interp_equiv(const Func *a, const Func *b, int trials, uint64_t seed,
		 char **report);

/* Layout chains (transform_layout, possibly applied several times): true
 * if `logical` is phys or a buffer phys was transformed from; then
 * layout_chain_apply computes the physical index t of logical index x,
 * with the scalar parameters of env (may be NULL) bound for maps that
 * name them. */
bool layout_chain_has(const Buffer *phys, const Buffer *logical);
bool layout_chain_apply(const Buffer *phys, const Buffer *logical, const int64_t *x,
			int64_t *t, const State *env);

/* Render a state's buffers (for `vsched interp`), malloc'ed. */
char *state_format(const State *s);



/* Make st's buffers admissible for f: padding cells of transformed
 * buffers uninitialised, then the entry T.assume facts (those before the
 * first store, under loops and ifs too) of the shapes `c or X[t] == v`
 * made true by writing cells, then all entry facts checked. RUN_OK, or
 * RUN_ASSUME_FAILED naming the fact that could not be satisfied. */
RunStatus interp_prepare_input(const Func *f, State *st, InterpResult *r);

/* Whether the top-level entry facts that mention only scalar params hold
 * for these scalar values (parameter order); r (messages in a) names a
 * failing fact. */
bool interp_scalar_facts_hold(const Func *f, const int64_t *scalars,
			      Arena *a, InterpResult *r);

#endif
