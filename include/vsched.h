/* vsched.h — the whole public API of libvsched: parse kernels, schedule
 * them with primitives whose safety conditions are proven by Z3, inspect
 * each step's report (obligations, verdicts, counterexample, replay), and
 * check kernels against each other with the reference interpreter.
 * Handles are opaque; strings returned as `char *` are malloc'ed and the
 * caller frees them; `const char *` strings belong to the context. */
#ifndef VSCHED_H
#define VSCHED_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ----
 * The version of this header; vs_version() gives the library's, so a
 * program can tell when it runs against another one. The shared library's
 * soname carries the major version (libvsched.so.0). */
#define VS_VERSION_MAJOR 0
#define VS_VERSION_MINOR 1
#define VS_VERSION_PATCH 0
#define VS_VERSION_STRING "0.1.0"
/* "0.1.0": the library's version (VS_VERSION_STRING when it was built). */
const char *vs_version(void);

/* The schedule primitives as a markdown table (the README's): each one's
 * script form with its defaults, its C API function, what it proves.
 * malloc'ed. `vsched help primitives` prints it. */
char *vs_primitives_doc(void);

typedef struct vs_context vs_context;
typedef struct vs_module vs_module;
typedef struct vs_schedule vs_schedule;
typedef struct vs_report vs_report;

/* Exit-status-like results: 0 ok, 1 rejected (a rewrite or check did not
 * hold), 2 unusable input (syntax, unknown name, bad argument, I/O). */
typedef enum { VS_OK = 0, VS_REJECTED = 1, VS_BAD_INPUT = 2 } vs_status;

vs_context *vs_context_new(void);
void vs_context_free(vs_context *ctx); /* frees every module and schedule */

/* Diagnostics of the last failing call, clang style ("k.tir:3:5: error:
 * ...", the line, a caret). Empty string if none. */
const char *vs_last_error(const vs_context *ctx);

/* ---- kernels ---- */
vs_module *vs_parse_file(vs_context *ctx, const char *path);
vs_module *vs_parse_string(vs_context *ctx, const char *name, const char *text);
char *vs_module_print(const vs_module *m);
int vs_module_num_funcs(const vs_module *m);
const char *vs_module_func_name(const vs_module *m, int i);

/* ---- scheduling ---- */
typedef struct vs_options {
	unsigned timeout_ms; /* per solver query; 0 = 10000 */
	unsigned rlimit;     /* Z3 resource limit per query; 0 = default */
	int threads;         /* solver threads; 0 = 1 */
	const char *log_dir; /* write a proof log here; NULL = none */
	bool float_ieee;     /* start in ieee float mode (default real) */
	/* Appended: a persistent proof cache (an SQLite database in this
	 * directory, made if missing) shared by runs and processes: proven
	 * and refuted verdicts keyed by a hash of the query and the solver's
	 * version. NULL: the environment variable VSCHED_CACHE if set and
	 * not empty, else none. A corrupted cache is reported
	 * (vs_schedule_cache_stats), set aside and rebuilt, never fatal. */
	const char *cache_dir;
	/* Appended: called from the scheduling thread when a script step
	 * starts (done = 0) and when it ends (done = 1): its line in the
	 * script and its call as written. NULL: none. The CLI uses it to show
	 * progress on a terminal for steps that run longer than a second. */
	void (*progress)(void *ud, int line, const char *step, int done);
	void *progress_ud;
} vs_options;

vs_schedule *vs_schedule_new(vs_context *ctx, const vs_module *m, const vs_options *opt);
void vs_schedule_free(vs_schedule *s);

vs_status vs_work_on(vs_schedule *s, const char *func);
vs_status vs_float_mode(vs_schedule *s, const char *mode); /* "real" | "ieee" */
/* tail: "guard" (default when NULL), "perfect", "cut", "cut_and_guard";
 * outer/inner name the new loops (NULL: i_o, i_i). */
vs_status vs_split(vs_schedule *s, const char *loop, long factor, const char *tail,
		   const char *outer, const char *inner);
/* vs_split naming the tail loop, as `io, ii, it = sch.split(..., tail="cut")`:
 * tail "cut" (NULL) or "cut_and_guard"; tail_loop (required) names the
 * tail loop, whose copy of the body gets loops, blocks ("C_tail") and
 * allocations ("tmp_tail") of its own, so that it can be scheduled apart
 * from the main part (vs_fission_before). Bad input when the extent is
 * a constant the factor divides: there is no tail to name. */
vs_status vs_split_tail(vs_schedule *s, const char *loop, long factor, const char *tail,
			const char *outer, const char *inner, const char *tail_loop);
vs_status vs_fuse(vs_schedule *s, const char *outer, const char *inner, const char *fused);
vs_status vs_reorder(vs_schedule *s, int nloops, const char *const *loops);
vs_status vs_parallel(vs_schedule *s, const char *loop);
vs_status vs_vectorize(vs_schedule *s, const char *loop);
vs_status vs_unroll(vs_schedule *s, const char *loop);
/* ---- adjacent loops, conditionals, caches (proofs/merge.md,
 * proofs/merge_conditionals.md, proofs/cache.md) ---- */
/* Merge loop l2 into loop l1 right before it ("i#1", "i#2"); both NULL:
 * every adjacent pair of loops of the same kind and range, level by level. */
vs_status vs_merge_adjacent_loops(vs_schedule *s, const char *l1, const char *l2);
/* Split loop's body after its statement `after` (0-based) into two loops. */
vs_status vs_fission(vs_schedule *s, const char *loop, long after);
/* Exo's fission with lifts, `sch.fission(loop, before=L)`: every loop from
 * `loop` down to the one whose body holds loop `before` is fissioned just
 * before the statement holding it, innermost first, each fission proven;
 * the statements from `before` on get a nest of their own (a cut tail
 * becomes a nest apart from the main part). The report's note names the
 * second nest's loops ("i#2, jt"). */
vs_status vs_fission_before(vs_schedule *s, const char *loop, const char *before);
/* Merge adjacent if statements with identical or complementary conditions
 * in block (NULL: the whole function); strict: any pair left apart rejects. */
vs_status vs_merge_conditionals(vs_schedule *s, const char *block, bool strict);
/* Stage `buffer` through a new buffer `name` (NULL: BUFFER_SCOPE) of scope
 * "global" | "local" | "shared" (NULL: the buffer's) around `block` (NULL:
 * the function body). */
vs_status vs_cache_read(vs_schedule *s, const char *block, const char *buffer, const char *scope,
			const char *name);
vs_status vs_cache_write(vs_schedule *s, const char *block, const char *buffer, const char *scope,
			 const char *name);

/* ---- compute_at / reverse_compute_at ----
 * compute_at: move producer block `block` to the start of the body of
 * `loop` (in a later statement), computing per iteration only the region
 * the body reads (inferred and proven), and shrink the intermediate buffer
 * to it. reverse_compute_at: move consumer block `block` to the end of the
 * body of `loop` (in an earlier statement). The report's note gives the
 * attach path and the region. */
vs_status vs_compute_at(vs_schedule *s, const char *block, const char *loop);
vs_status vs_reverse_compute_at(vs_schedule *s, const char *block, const char *loop);
/* Run a .sched script (interfaces.md); stops at the first step that is not
 * committed. */
vs_status vs_run_script_file(vs_schedule *s, const char *path);
vs_status vs_run_script_string(vs_schedule *s, const char *name, const char *text);

/* The current result: every committed step proven. Owned by the context. */
const vs_module *vs_schedule_result(const vs_schedule *s);
/* Where the obligations so far (lowering's included) got their verdicts:
 * solved by the solver, answered from the in-memory cache (an identical
 * query earlier in this schedule), answered from the persistent cache.
 * warnings: the persistent cache's problems, one "vsched: warning: ..."
 * line each, or NULL; valid until the next call. Any output may be NULL. */
void vs_schedule_cache_stats(vs_schedule *s, int *solved, int *memory_hits, int *disk_hits,
			     const char **warnings);

/* ---- reports: one per step taken ---- */
int vs_num_reports(const vs_schedule *s);
const vs_report *vs_report_at(const vs_schedule *s, int i);
const vs_report *vs_last_report(const vs_schedule *s); /* NULL if none */
vs_status vs_report_status(const vs_report *r);
const char *vs_report_step(const vs_report *r);   /* "split(\"i\", factor=4)" */
const char *vs_report_reason(const vs_report *r); /* NULL when committed */
/* A remark on the step (compute_at: attach path, region, exactness), or
 * NULL. */
const char *vs_report_note(const vs_report *r);
int vs_report_num_obligations(const vs_report *r);
/* verdict: "proven", "refuted" or "not proven"; any output pointer may be
 * NULL; for i out of range the outputs are set to NULL (seconds to 0). */
void vs_report_obligation(const vs_report *r, int i, const char **kind,
			  const char **statement, const char **verdict, double *seconds);
const char *vs_report_counterexample(const vs_report *r); /* NULL if none */
/* "none", "confirmed", "unconfirmed", "impossible" or "skipped" (over the
 * replay budget: the report says how much work it would have been) */
const char *vs_report_replay(const vs_report *r);
/* The replay's account (the first difference it found, or why it could
 * not run), or NULL when there was no replay. */
const char *vs_report_replay_text(const vs_report *r);
char *vs_report_text(const vs_report *r);

/* The counterexample, structured: the first obligation not proven (its
 * kind, or NULL when the step has none), the values of its variables, the
 * buffer cells it involves and the source positions involved (the
 * obligation's origin first, then the accesses). For i out of range the
 * outputs are set to NULL / 0. */
const char *vs_report_cex_obligation(const vs_report *r);
int vs_report_cex_num_values(const vs_report *r);
void vs_report_cex_value(const vs_report *r, int i, const char **name, const char **value);
int vs_report_cex_num_cells(const vs_report *r);
void vs_report_cex_cell(const vs_report *r, int i, const char **buffer, int *nindices,
			const long long **indices, const char **value);
int vs_report_cex_num_spans(const vs_report *r);
void vs_report_cex_span(const vs_report *r, int i, const char **file, int *line, int *col);

/* ---- the reference interpreter ---- */
/* Run `func` (NULL: the first) on a random admissible input from seed;
 * *out gets inputs and outputs as text. */
vs_status vs_interp(vs_context *ctx, const vs_module *m, const char *func,
		    unsigned long seed, char **out);
/* Differential check on `trials` admissible inputs; VS_OK if all agree,
 * VS_REJECTED on a difference, VS_BAD_INPUT without a verdict (no input
 * can be made, a kernel reaches the interpreter's step limit): then
 * vs_last_error is the report's first line, which says why. report may
 * be NULL. */
vs_status vs_equiv(vs_context *ctx, const vs_module *a, const vs_module *b,
		   const char *func, int trials, unsigned long seed, char **report);

/* ---- proof logs ---- */
vs_status vs_log_show(const char *dir, bool json, char **out);
vs_status vs_log_check(const char *dir, const char *solver, char **out); /* "z3" | "cvc5" */
/* vs_log_check, its account as the JSON records of `run --json` (README,
 * "JSON output"): a step per logged rewrite, each obligation with its
 * re-check {solver, answer, result, detail}, a summary, a result. */
vs_status vs_log_check_json(const char *dir, const char *solver, char **out);
/* vs_log_check after re-running the schedule the log records (its
 * meta.json and copies of the kernel and scripts): every logged query must
 * be byte for byte the one vsched builds now (times aside), so a query
 * forged consistently in all its headers is found. VS_REJECTED on any
 * difference or disagreement, VS_BAD_INPUT when the log cannot be read or
 * holds steps taken through the API outside a script. */
vs_status vs_log_rebuild(const char *dir, const char *solver, char **out);

/* ---- code generation (backend/): lower, compile with LLVM, run ----
 * A program is built from a schedule's current result, which holds only
 * committed steps, each proven (a schedule with no step compiles the
 * kernel as written). Lowering proves every flattened index fits its
 * index type; those obligations join the proof log. Free a program before
 * its schedule and context. */
typedef struct vs_program vs_program;

typedef struct vs_build_options {
	int opt_level;         /* 0..3; 0 means the default, 3 */
	bool generic_cpu;      /* generic x86-64 instead of the host's CPU */
	bool no_int64_widening; /* reject an index that may not fit int32 */
	/* real float mode only: fuse x * y + z (fused multiply-add). Faster
	 * on FMA hardware; results then differ from the interpreter's by
	 * rounding, and a comparison or integer conversion of such a value
	 * can differ outright (x * c - x * c is no longer 0). Off by default. */
	bool contract_fma;
	/* The CPU to generate code for: NULL or "host" (the host's CPU and
	 * its features), an x86-64 level ("x86-64-v3": AVX2, FMA, no
	 * AVX-512) or a CPU name LLVM knows ("haswell", "znver3"); and
	 * features added to that CPU's, "+f,-g" ("-avx512f": the host's CPU
	 * without AVX-512). Unknown names fail the build (vs_check_target).
	 * Code for a CPU whose features the host may lack can be emitted but
	 * not run here: vs_program_lookup/check/time then fail with the
	 * feature missing (the JIT runs host, x86-64, x86-64-v2..v4, haswell,
	 * skylake-avx512, znver2, znver3 when the host has their features). */
	const char *cpu, *features;
} vs_build_options;

/* VS_OK when cpu and features (either may be NULL) name a CPU and
 * features LLVM knows; VS_BAD_INPUT + vs_last_error otherwise. */
vs_status vs_check_target(vs_context *ctx, const char *cpu, const char *features);

vs_program *vs_build(vs_schedule *s, const vs_build_options *opt); /* NULL + vs_last_error */
void vs_program_free(vs_program *p);
/* kind: "llvm", "asm", "obj" or "header"; path NULL writes text to stdout */
vs_status vs_program_emit(vs_program *p, const char *kind, const char *path);
/* The JIT-compiled kernel (ORC LLJIT): `int32_t f(T *buf..., scalars...)`
 * as declared by the "header" emission. NULL + vs_last_error. Each buffer
 * argument must be memory of its own that no other buffer argument
 * overlaps (the kernel language's buffers are distinct; the code is
 * compiled with the pointers `noalias`, the header declares them
 * `restrict`): passing overlapping arrays, or one array twice, is
 * undefined behaviour, as it is for the emitted object file. */
void *vs_program_lookup(vs_program *p, const char *func);
/* JIT against the reference interpreter on `trials` admissible inputs;
 * VS_OK if all agree (integers exactly; floats exactly in ieee mode, within
 * 1e-5 relative in real mode, where x * y + z may become a fused
 * multiply-add), VS_REJECTED on a difference. */
vs_status vs_program_check(vs_program *p, const char *func, int trials,
			   unsigned long seed, char **report);
/* Median wall time of `repeat` JIT runs on the admissible input of `seed`. */
vs_status vs_program_time(vs_program *p, const char *func, unsigned long seed,
			  int repeat, double *seconds);
/* Lowering's obligations (flattening; freedom from races of every parallel
 * and vectorized loop), the indices widened to int64, their solver
 * time, and the time to lower, generate and optimise. */
void vs_program_stats(const vs_program *p, int *obligations, int *widened,
		      double *solver_seconds, double *compile_seconds);
/* The warnings of the compilation, or NULL; each with file:line:col, one
 * after another on separate lines: a parallel or vectorized loop compiled
 * serially because its freedom from races was not proven (an annotation
 * written in the kernel text, say); an access that may leave its buffer or
 * a division that may divide by zero in the kernel as written (obligations
 * safety.in_bounds, safety.nonzero_divisor not proven, with a
 * counterexample where there is one); the first warning LLVM gave
 * ("LLVM: ...", e.g. a `vectorize` it could not carry out). Compiled code
 * does what the kernel does; where the kernel has undefined behaviour, so
 * may the code. */
const char *vs_program_warning(const vs_program *p);


/* ---- layout, overcompute and clean-up primitives (proofs/transform_layout.md,
 * overcompute.md, simplify.md, sequential_buffer_access.md, hoist.md) ----
 * Each is a direct call into the scheduler; no argument is ever read as
 * schedule-script text. index_map and pad_value are kernel-language text,
 * each parsed alone (errors are positioned in that string, named
 * "index_map" or "pad_value", and the whole string must be one lambda or
 * one expression): index_map "lambda i: [i // 4, i % 4]"; pad_value NULL
 * (no pad value), "0", "0.0", "None", "T.undef()", an expression or a
 * lambda of the physical indices. Names (buffer, block, loop, func) are
 * only looked up. block, loop, func may be NULL. */
vs_status vs_transform_layout(vs_schedule *s, const char *buffer, const char *index_map,
			      const char *pad_value, const char *block, const char *func);
vs_status vs_sequential_buffer_access(vs_schedule *s, const char *buffer, const char *block);
vs_status vs_remove_branching_through_overcompute(vs_schedule *s, const char *block,
						  const char *loop, bool strict);
vs_status vs_remove_overcompute_through_branching(vs_schedule *s, const char *block, bool strict);
vs_status vs_remove_no_op(vs_schedule *s, const char *block);
vs_status vs_simplify(vs_schedule *s);
/* conditionals: "if_else_stmt", "boolean_expression", joined with | (NULL: both) */
vs_status vs_hoist_expression(vs_schedule *s, const char *conditionals, const char *block,
			      const char *loop);
vs_status vs_reduce_loop_extents(vs_schedule *s, const char *block);
/* Exo's lift_alloc: the allocation of `buffer` (the first in program
 * order) out of the n_lifts (>= 1) loops or ifs around it; proven:
 * no value carried across iterations in it, no race where a parallel
 * or vectorized loop is crossed (proofs/lift_alloc.md). */
vs_status vs_lift_alloc(vs_schedule *s, const char *buffer, int n_lifts);

/* ---- block primitives of TVM's API (proofs/decompose_reduction.md,
 * rfactor.md, transform_block_layout.md, reindex.md), by block and loop
 * name; an index_map is a lambda parsed alone, as above ---- */
vs_status vs_decompose_reduction(vs_schedule *s, const char *block, const char *loop);
vs_status vs_rfactor(vs_schedule *s, const char *loop, long factor_axis);
vs_status vs_add_unit_loop(vs_schedule *s, const char *block_or_loop);
vs_status vs_transform_block_layout(vs_schedule *s, const char *block, const char *index_map);
/* reindex (scope and index_map NULL) or reindex_cache_read/write (both
 * given) of the buffer the block reads (write: writes). */
vs_status vs_reindex(vs_schedule *s, const char *block, const char *buffer, bool write,
		     const char *scope, const char *index_map);

#ifdef __cplusplus
}
#endif
#endif
