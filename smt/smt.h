/* smt/smt.h — discharging obligations with Z3 (the only module that
 * includes z3.h), SMT-LIB2 text of every query, and proof logs.
 * Verdicts follow semantics.md section 2: unsat -> proven, sat -> refuted
 * with a model, anything else (unknown, timeout, resource limit,
 * unsupported construct) -> not proven. */
#ifndef VS_SMT_SMT_H
#define VS_SMT_SMT_H

#include "kernel/obligation.h"

typedef struct SmtOptions {
	unsigned timeout_ms; /* per query; 0 = default 10000 */
	unsigned rlimit;     /* Z3 resource limit per query; 0 = default */
	int threads;         /* solve independent obligations in parallel */
	/* Appended: fill ObligationResult.smt2 (printing costs as much as
	 * solving a small query; the proof log prints its own copy on
	 * demand, so only callers that read smt2 themselves set this). */
	bool want_text;
	/* Appended: the persistent proof cache's directory (pcache.h), or
	 * NULL; read by smt_solver_new only. */
	const char *cache_dir;
} SmtOptions;

/* Where a Solver's verdicts came from, and the persistent cache's
 * warnings (corrupted entries or file, set aside and rebuilt), or NULL. */
typedef struct SmtStats {
	int solved, memory_hits, disk_hits;
	const char *warnings; /* owned by the Solver; valid until the next call */
} SmtStats;

typedef struct Solver Solver;

Solver *smt_solver_new(const SmtOptions *opt);
void smt_solver_free(Solver *s);
const char *smt_solver_version(void); /* "z3 4.8.12" */
void smt_solver_stats(Solver *s, SmtStats *out);

/* Discharge one obligation: hyps AND NOT goal. Fills *out; the smt2 text,
 * reason and model are allocated in a. Never proves on unknown. */
void smt_discharge(Solver *s, Arena *a, const Obligation *o, FloatMode fm,
		   ObligationResult *out);

/* Discharge n obligations (independent), possibly on several threads.
 * outs has n entries. */
void smt_discharge_all(Solver *s, Arena *a, int n, Obligation *const *obs,
		       FloatMode fm, ObligationResult *outs);

/* A model of o's query (hyps AND NOT goal) in which each of `vars`
 * lies in [-cap, cap]: the same query with bounds added, checked once
 * under its own time limit (time_ms) and not cached. NULL when there is
 * none, when the check does not finish, or when no var occurs in the
 * query. Replay asks for it when the solver's first model would run
 * the interpreter too long (smt/replay.c). */
Model *smt_model_within(Solver *s, Arena *a, const Obligation *o, FloatMode fm,
			int nvars, Var *const *vars, int64_t cap, unsigned time_ms);

/* The self-contained SMT-LIB2 query of an obligation: declarations,
 * the hypotheses, (assert (not goal)), (check-sat). Running `z3 FILE` or
 * `cvc5 FILE` on it prints sat/unsat. NULL + *why if a construct cannot
 * be encoded. */
const char *smt_query_text(Arena *a, const Obligation *o, FloatMode fm,
			   const char **why);
/* The same, malloc'ed (*why too). */
char *smt_query_text_dup(const Obligation *o, FloatMode fm, char **why);

/* ---------- proof logs (smt/log.c) ----------
 * DIR/index.jsonl: one JSON object per line, {"type":"rewrite",...} or
 * {"type":"obligation",...}; DIR/ob-NNNN.smt2: one query per obligation
 * with a comment header (kind, statement, solver, float mode, verdict,
 * time, model). */
typedef struct ProofLog ProofLog;

ProofLog *proof_log_open(const char *dir, DiagList *d);
void proof_log_rewrite(ProofLog *l, const char *primitive, const char *args,
		       const char *result, const char *reason);
void proof_log_obligation(ProofLog *l, const Obligation *o,
			  const ObligationResult *r, FloatMode fm);
void proof_log_close(ProofLog *l);

/* `vsched log show`: summary (or JSON lines) to a malloc'ed string. */
int proof_log_show(const char *dir, bool json, char **out);
/* `vsched log check`: re-run every logged query with the `z3` or `cvc5`
 * binary; 0 if every verdict agrees (proven stays unsat, refuted stays
 * sat), 1 on any disagreement, 2 if the log cannot be read. */
int proof_log_check(const char *dir, const char *solver, char **out);
/* proof_log_check; json: the records of run --json (README, "JSON
 * output"): a step per logged rewrite, each obligation with its re-check,
 * a summary and a result, instead of the text. */
int proof_log_check_json(const char *dir, const char *solver, bool json, char **out);

/* Appended (smt/ owner): the first write failure of an open log ("proof
 * log: cannot write ob-0003.smt2 in DIR: No space left on device"), or
 * NULL while every write succeeded. proof_log_open reports only its own
 * failure to d and keeps no pointer to it; check this before closing.
 * proof_log_check also returns 2 when the solver is neither "z3" nor
 * "cvc5" (NULL means z3) or its binary cannot be run. */
const char *proof_log_error(const ProofLog *l);

/* Appended (issue 13, logs that stand alone): where a log came from.
 * proof_log_set_meta writes DIR/kernel.tir (the kernel's text) and
 * DIR/meta.json: {"type":"meta","vsched":..., "z3":..., "float_mode":...,
 * "timeout_ms":..., "rlimit":..., "hash":"sha256", "kernel":{"name",
 * "file","sha256"}, "schedules":[{"name","file","sha256"}...],
 * "api_steps":N}. Each script run on the schedule is copied to
 * DIR/schedule.sched (the second to schedule-2.sched, ...) and listed;
 * steps taken through the C API outside a script are counted, since a
 * rebuild replays scripts only. */
typedef struct ProofLogMeta {
	const char *vsched_version; /* vs_version() */
	const char *kernel_name;    /* the kernel's file name as given */
	const char *kernel_text;
	FloatMode float_mode;
	unsigned timeout_ms, rlimit; /* the solver's limits, 0 = defaults */
} ProofLogMeta;

void proof_log_set_meta(ProofLog *l, const ProofLogMeta *m);
void proof_log_add_schedule(ProofLog *l, const char *name, const char *text);
void proof_log_note_api_steps(ProofLog *l, int n);
/* A build of the schedule's result (its obligations follow in the log):
 * listed in meta.json as {"after_schedules":N,"int64_widening":B}, the
 * one build option that changes what is proven. */
void proof_log_add_build(ProofLog *l, bool int64_widening);

/* A log that writes nothing and keeps its index lines and query files in
 * memory: what `log check --rebuild` compares a log with. Closed with
 * proof_log_close. */
ProofLog *proof_log_capture(void);

/* The sources a log records, read back: the copies are checked against
 * the hashes meta.json gives. 0; 1 with *why (malloc'ed) when a copy
 * does not match its hash or cannot be read; 2 with *why when there is
 * no readable meta.json. */
typedef struct ProofLogSource {
	char *vsched_version, *z3_version;
	FloatMode float_mode;
	unsigned timeout_ms, rlimit;
	int api_steps;
	char *kernel_name, *kernel_text;
	int nschedules;
	char **schedule_names, **schedule_texts;
	int nbuilds;
	int *build_after; /* the number of schedules run before each build */
	bool *build_int64;
} ProofLogSource;

int proof_log_read_source(const char *dir, ProofLogSource *s, char **why);
void proof_log_source_free(ProofLogSource *s);

/* Compare the log in dir with `built` (a capture of the same schedule run
 * again): every index entry field for field (times aside) and every query
 * file byte for byte (its `; seconds:` line aside). One line per
 * obligation into *out; 0 if all are the same, 1 otherwise, 2 if the log
 * cannot be read. */
int proof_log_rebuild_compare(const char *dir, const ProofLog *built, char **out);

/* ---------- what the backend compiles ---------- */

/* The proofs of a build's parallel and vectorize annotations. */
typedef struct AnnotationStats {
	int nobligations, nproven;
	int nserialized; /* annotated loops compiled serially */
	double solver_seconds;
} AnnotationStats;

/* The build's check of the scheduled module for out-of-bounds accesses
 * and division by zero (sched_prove_safety). */
typedef struct SafetyStats {
	int nobligations, nproven;
	int nunchecked; /* functions not (or not wholly) checked */
	double solver_seconds;
} SafetyStats;

/* A module every rewrite of which was proven, with the solver and proof
 * log that proved it (lowering proves its own obligations with them), and
 * its annotations proven again: a loop whose race freedom is not proven is
 * serial in `mod`, and `warnings` names it. Only the schedule makes one
 * (sched_proven_module); backend_build takes nothing else. */
typedef struct ProvenModule {
	const Module *mod;
	FloatMode float_mode;
	Solver *solver;
	ProofLog *log;
	AnnotationStats annotations;
	SafetyStats safety;
	DiagList warnings;
} ProvenModule;

#endif
