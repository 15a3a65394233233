/* backend/backend.h — the internal header of backend/: lowering of a
 * proven schedule result (remove T.assume, remove stores of T.undef(),
 * flatten buffers by axis_separators with proven index widths), LLVM-C
 * code generation, the O3 pipeline, object / assembly / LLVM IR / C header
 * emission and ORC JIT execution. Only backend/ includes llvm-c headers;
 * this header does not, so callers stay free of LLVM. */
#ifndef VS_BACKEND_BACKEND_H
#define VS_BACKEND_BACKEND_H

#include "kernel/analysis/expr_query.h"
#include "kernel/interp.h"
#include "smt/smt.h"

/* What a compiled kernel returns: 0, or one of these. */
#define VS_KERNEL_ALLOC_FAILED 1  /* a local buffer could not be allocated */
#define VS_KERNEL_ASSUME_FAILED 2 /* a T.assume on the scalar parameters does not hold */

/* ---------- lowering (lower.c, flatten.c) ---------- */

/* RemoveAssume: every T.assume is dropped (assumptions are hypotheses of
 * the proofs, never checked at run time); statements left empty go too. */
Stmt *lower_remove_assume(Arena *a, Stmt *s);

/* RemoveStoreUndef: every store whose value is T.undef() is dropped (the
 * location's final value is unconstrained, semantics.md 3). Buffers that
 * lost such a store are added to *bufs (for the code generator, which
 * freezes loads of allocated buffers that may read such a cell). */
Stmt *lower_remove_undef_stores(Arena *a, Stmt *s, BufSet *bufs);

/* Drop ST_PASS, empty sequences, loops and ifs with nothing left inside. */
Stmt *lower_drop_empty(Arena *a, Stmt *s);

/* One flattened buffer: the physical buffer of the scheduled IR and the
 * lowered one, whose axis g is the row-major combination of the physical
 * axes of group g (groups are delimited by axis_separators, seed 001). */
typedef struct FlatBuffer {
	const Buffer *physical; /* as scheduled: physical shape, layout history */
	Buffer *flat;           /* lowered: ngroups axes, plain memory */
	int ngroups;
	int *group_first;       /* first physical axis of group g */
	DType *index_dtype;     /* per group: DT_INT32 or DT_INT64, proven */
	bool is_param;
} FlatBuffer;

typedef struct FlattenOptions {
	bool allow_int64;    /* widen an index that may not fit int32 (default) */
	DType prefer;        /* DT_INT32 (default) or DT_INT64 */
} FlattenOptions;

/* Statistics of the proofs lowering discharged. */
typedef struct LowerStats {
	int nobligations, nproven, nwidened;
	int nserialized; /* parallel/vectorized loops compiled serially */
	double solver_seconds;
} LowerStats;

/* One access of the lowered function with the physical index of each
 * axis it had before flattening. The code generator uses them to form
 * the address as one multi-index GEP over the group's nested array type
 * when the inner extents are constants: the same offset as the flat
 * index, in a form LLVM's alias analysis can take apart (tiles then stay
 * in registers). */
typedef struct FlatAccess {
	const void *node; /* the lowered EX_LOAD expression or ST_STORE statement */
	int buf;          /* index into LoweredFunc.bufs */
	Expr **axis;      /* physical index per axis (lowered) */
} FlatAccess;

/* A function after lowering. */
typedef struct LoweredFunc {
	const Func *source; /* the scheduled function (proven) */
	Func *func;         /* lowered: buffers flat, no assume, no undef store */
	int nbufs;
	FlatBuffer *bufs;   /* parameters first (parameter order), then allocations */
	BufSet undef_bufs; /* flat buffers that lost a T.undef() store */
	int naccesses;
	FlatAccess *accesses;
} LoweredFunc;

/* Flatten every buffer of f (parameters and allocations). Each group's
 * flat index gets the obligation "prod(extents of the group) <= 2^31"
 * (kind flatten.index_fits_int32); when it is not proven, the group is
 * widened to int64 under "prod <= 2^63" (flatten.index_fits_int64), and
 * if that is not proven either the build fails naming the buffer and its
 * shape. Buffers of several groups also need the whole buffer to be
 * addressable with int64 (flatten.offset_fits_int64). Obligations are
 * discharged with `solver` and written to `log` when it is not NULL.
 * The hypotheses include the entry facts of `source` (the function before
 * RemoveAssume; f itself when NULL). */
bool lower_flatten(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
		   const FlattenOptions *opt, const Func *source, const Func *f,
		   LoweredFunc *out, LowerStats *stats, DiagList *d);

/* The whole pipeline on one function: remove assume, remove undef
 * stores, flatten, drop empty statements. */
bool lower_func(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
		const FlattenOptions *opt, const Func *f, LoweredFunc *out,
		LowerStats *stats, DiagList *d);

/* ---------- the compiled program (build.c, codegen*.c, target.c, jit.c) ---------- */

typedef enum { EMIT_LLVM, EMIT_ASM, EMIT_OBJ, EMIT_HEADER } EmitKind;

bool emit_kind_from_name(const char *name, EmitKind *out);

typedef struct BackendOptions {
	int opt_level;       /* 1..3; 0 means the default, 3; < 0: no optimisation */
	bool no_host_cpu;    /* generic x86-64 instead of the host's CPU */
	/* the target CPU (NULL or "host": the host's) and features added to
	 * the CPU's ("-avx512f", "+avx2,-fma"), both checked by
	 * target_check_spec; ignored with no_host_cpu */
	const char *cpu, *features;
	/* real mode only: let the target fuse x * y + z (llvm.fmuladd). Off by
	 * default: a fused and an unfused copy of one product differ by a
	 * rounding the interpreter never makes (x * c - x * c != 0), which a
	 * comparison or a conversion to an integer turns into another result */
	bool contract_fma;
	FlattenOptions flatten;
} BackendOptions;

typedef struct BackendStats {
	LowerStats lower;
	double lower_seconds, codegen_seconds, optimize_seconds;
	int nfuncs;
	int nparallel_loops, nvectorized_loops, nunrolled_loops;
	/* vectorized integer reductions whose per-lane partial results stay
	 * in one vector accumulator across the serial loops around them */
	int nregister_reductions;
	int nllvm_warnings; /* e.g. a vectorize annotation LLVM did not carry out */
} BackendStats;

typedef struct Program Program;

/* cpu.c: a CPU name LLVM knows for x86-64 (or NULL, "host", "native") and
 * a feature list "+f,-g" of features LLVM detects; false + diagnostic. */
bool target_check_spec(const char *cpu, const char *features, DiagList *d);
bool target_cpu_is_host(const char *cpu);

/* Compile a schedule's proven result (sched_proven_module): every
 * committed step was proven and every parallel or vectorized loop proven
 * race-free, and this is the only way into code generation, so unproven
 * IR cannot reach LLVM. A schedule with no step compiles the kernel as
 * written (an empty schedule is trivially proven). The module (and the
 * schedule's arena) must outlive the program; its warnings are copied to
 * d. NULL + diagnostics when lowering or code generation fails. */
Program *backend_build(const ProvenModule *pm, const BackendOptions *opt,
		       DiagList *d);
void backend_free(Program *p);

const BackendStats *backend_stats(const Program *p);
/* The symbol a kernel is emitted under: its name, or `NAME_kernel` for a
 * name C reserves (`main`, which TVM gives every kernel by default, and
 * the C keywords), so an emitted object links with any C driver. */
void backend_symbol(const char *func, char *out, size_t n);
/* The build's warnings (NULL if none), one rendered diagnostic per line
 * group: annotated loops compiled serially, obligations on undefined
 * behaviour of the kernel not proven (sched_prove_safety), and the first
 * warning LLVM reported ("LLVM: ..."); LLVM never prints. */
const char *backend_warnings(const Program *p);
int backend_num_funcs(const Program *p);
const LoweredFunc *backend_lowered(const Program *p, int i);
const LoweredFunc *backend_find(const Program *p, const char *func);

/* Write the optimised module as LLVM IR text, assembly or an object file;
 * or the C header (EMIT_HEADER). false + diagnostic on failure. */
bool backend_emit(Program *p, EmitKind kind, const char *path, DiagList *d);
char *backend_emit_string(Program *p, EmitKind kind, DiagList *d); /* malloc'ed */

/* The C header text (malloc'ed): a declaration per kernel with each
 * buffer's logical, physical and flattened shape. */
char *backend_header_text(const Program *p, const char *guard_name);

/* JIT: compile the module with ORC LLJIT (once; later calls reuse it). */
bool backend_jit(Program *p, DiagList *d);
/* The address of kernel `func` (JIT compiled on first use); NULL + diag. */
void *backend_lookup(Program *p, const char *func, DiagList *d);

/* Run kernel `func` on st (in place), through its JIT entry wrapper:
 * the buffers are copied to typed arrays, the kernel runs `repeat` times
 * (>= 1; only the first run's result is kept in st) and *seconds gets the
 * median run time when not NULL. Every cell of every buffer is marked
 * initialised afterwards (the machine code has no T.undef tracking).
 * false + diagnostic when the kernel returns nonzero. */
bool backend_run(Program *p, const char *func, State *st, int repeat,
		 double *seconds, DiagList *d);

/* Differential check of the JIT against the reference interpreter on
 * `trials` admissible inputs of the scheduled function: 0 all agree, 1 a
 * difference (report says where and on which input), 2 no input could be
 * generated or the JIT failed. Floats compare exactly when rel_tol is 0;
 * rel_tol < 0 picks the float mode's default: exact in `ieee` mode, 1e-5
 * relative in `real` mode, where floats are reals and the code may
 * contract x * y + z to a fused multiply-add or reassociate a reduction
 * in a vectorized loop (BACKEND_REAL_TOLERANCE). */
#define BACKEND_REAL_TOLERANCE 1e-5
/* The interpreter's step budget for all trials of one check together
 * (statements plus loop iterations, as InterpResult.steps counts them;
 * the three trials of a 512^3 matmul, 3 x 290M steps, a few seconds of
 * the compiled interpreter's f32 update, 10 to 20 s of its general
 * closures):
 * each trial runs on what the earlier ones left, and a trial that the
 * earlier ones' steps say would not fit is not started. Either way the
 * report says so and names the budget: the trials that finished count,
 * and with none finished the check fails (2) instead of running on. */
#define BACKEND_CHECK_STEPS 1000000000ull
int backend_check(Program *p, const char *func, int trials, uint64_t seed,
		  double rel_tol, char **report);
/* The same with another budget (tests). */
int backend_check_budget(Program *p, const char *func, int trials, uint64_t seed,
			 double rel_tol, uint64_t budget_steps, char **report);

#endif
