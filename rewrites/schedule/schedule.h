/* rewrites/schedule/schedule.h — the schedule: the current module, the function
 * being worked on, the float mode, and the steps taken. A step runs a
 * primitive (a pure function), sends its obligations to the solver, and
 * commits the new IR only if every obligation is proven; otherwise the
 * previous IR stays and the step's report says why, with a counterexample
 * and its replay when the solver refuted an obligation. */
#ifndef VS_REWRITES_SCHEDULE_H
#define VS_REWRITES_SCHEDULE_H

#include "rewrites/rewrite.h"
#include "rewrites/schedule/script.h"
#include "smt/replay.h"
#include "smt/smt.h"

typedef enum {
	STEP_COMMITTED,
	STEP_REJECTED,	/* an obligation refuted or not proven, or a
			   precondition of the primitive fails */
	STEP_BAD_INPUT, /* unknown name, bad argument */
} StepStatus;

typedef struct StepReport {
	const char *desc; /* "split(i, factor=4, tail=perfect)" */
	const char *func; /* the function it applied to */
	Span span;	  /* the script call */
	StepStatus status;
	const char *reason; /* one line, for rejections */
	const char *note;   /* e.g. a kept guard */
	int nobs;
	Obligation **obs;
	ObligationResult *results;
	int failed; /* index of the first obligation not proven, or -1 */
	char *counterexample; /* text: values, source lines (arena) */
	ReplayStatus replay;
	char *replay_text;
	/* a rejected step's code before and after, as a short diff of the
	 * printed function around the lines that changed (NULL if none) */
	char *code_diff;
	DiagList diags;
	const Func *result; /* the current function after the step */
} StepReport;

typedef struct Schedule {
	Arena *arena;
	Module *mod;
	int func_index; /* current function (sch.work_on) */
	FloatMode float_mode;
	SmtOptions smt;
	Solver *solver;
	ProofLog *log; /* optional */
	int nsteps, capsteps;
	StepReport **steps;
	unsigned replay_seed;
	/* names the scripts bound on the left of '=' (loop and block
	 * handles, rewrites/schedule/handles.h): they stay bound from one
	 * script run on this schedule to the next */
	struct HandleEnv *handles;
	/* loop.no_wrap obligations proven so far by any step, by structure
	 * (kind, goal, hypotheses, float mode): an identical one is not
	 * stated again, so an unchanged loop's fact is proven once per
	 * schedule (and logged once, at its proof) */
	struct FactMemo *wrap_memo;
	/* told when a script step starts and ends (vs_options.progress) */
	void (*progress)(void *ud, int line, const char *step, int done);
	void *progress_ud;
} Schedule;

/* The schedule takes the module as it is (not copied: the IR is
 * immutable); the arena must outlive the schedule. */
Schedule *sched_new(Arena *a, Module *m, const SmtOptions *opt);
void sched_free(Schedule *s); /* releases the solver and closes the log */
Func *sched_func(const Schedule *s);

/* Prepare a rewrite context on the current function. */
void sched_begin(Schedule *s, RwCtx *c, const char *desc, Span call_span,
		 DiagList *d);
/* Discharge c's obligations and commit or reject; returns the report
 * (also kept in s->steps). */
StepReport *sched_finish(Schedule *s, RwCtx *c, RwStatus st);

/* ---------- compound calls ----------
 * A call made of several sub-rewrites (simplify's replacements, the
 * candidates of overcompute removal, the split/fuse/reorder steps of
 * sequential_buffer_access). Each sub-rewrite is proven on the function
 * the previous ones produced and becomes the compound's current state; the
 * call ends committed (the last state, with notes on what was skipped) or
 * rejected (the module as it was before the call, with the counterexample
 * of the failure that decided it). Every obligation discharged goes into
 * the call's one report and the proof log. */
typedef struct Compound {
	Schedule *s;
	StepReport *r;
	Module *start;	 /* restored on rejection */
	int cap;	 /* of r->obs / r->results */
	int fail;	 /* the tentative failure: obligation index, or -1 */
	const Func *fail_before, *fail_after;
	const char *fail_reason; /* "obligation X refuted: ..." */
	StrBuf notes;
	DiagList *diag;
	int nsub; /* sub-rewrites committed */
	int nverified; /* sub-rewrite results the IR verifier checked */
	/* the last (before, after) pair of sched_prove whose loop.no_wrap
	 * obligations were proven */
	const Func *wrap_before, *wrap_after;
	/* every sub-rewrite keeps the order of the statement instances
	 * (multi-factor split, fuse of several loops): allowed on a function
	 * with an opaque call (RwCtx.opaque_ok) */
	bool opaque_ok;
} Compound;

/* NULL, or why a step that needs to know what the statements of f read
 * and write cannot run on it: f holds an opaque call (T.call_extern,
 * T.tvm_access_ptr ...), whose effects are unknown (semantics.md 9). */
const char *sched_opaque_refusal(Arena *a, const Func *f, const char *desc);

void sched_compound_begin(Schedule *s, Compound *k, const char *desc, Span call_span,
			  DiagList *d);
/* A rewrite context on the compound's current function. */
void sched_sub_begin(Compound *k, RwCtx *c, const char *desc);
/* Discharge obs, and loop.no_wrap for the loops of before and after
 * (rw_loop_wrap_obligations); true when all are proven. after may be
 * NULL while the result is not built yet: then the caller proves again
 * with the result (an empty obs) before committing it. Otherwise the
 * first obligation not proven becomes the tentative failure (replayed on
 * before/after if it ends up deciding the call). */
bool sched_prove(Compound *k, const ObligationList *obs, const Func *before,
		 const Func *after);
/* A sub-rewrite's result: on RW_OK its obligations are proven and c->out
 * (or c->out_module) becomes current. Returns the status; RW_OK with false
 * in *proven when an obligation failed. Non-OK statuses record their
 * diagnostic as the tentative failure reason. */
RwStatus sched_sub_finish(Compound *k, RwCtx *c, RwStatus st, bool *proven);
/* Make f the compound's current function: its obligations were proven
 * with sched_prove. */
void sched_compound_set(Compound *k, Func *f);
void sched_compound_note(Compound *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The current function of the compound. */
Func *sched_compound_func(const Compound *k);
/* End the call: committed, or rejected with `reason` (NULL: the tentative
 * failure's reason) and, when the tentative failure is an obligation, its
 * counterexample and replay; a rejected call restores the module. */
StepReport *sched_compound_end(Compound *k, StepStatus st, const char *reason);

/* Run a whole schedule script; stops at the first step that is not
 * committed. Returns that step's status (STEP_COMMITTED if all were). */
StepStatus sched_run_script(Schedule *s, const Script *sc, DiagList *d);

/* Render a step report for people (malloc'ed). */
char *sched_report_text(const StepReport *r);

/* ---------- building (rewrites/schedule/annotations.c) ---------- */

/* The schedule's current module for the backend: every committed step
 * was proven (sched_finish commits nothing else), and every parallel or
 * vectorized loop is proven race-free again (a kernel's own text may
 * carry them) or made serial with a warning. Allocates in s's arena. */
void sched_proven_module(Schedule *s, ProvenModule *out);

/* The annotation proofs of one function (kinds parallel.no_race,
 * vectorize.no_race), discharged with solver and logged to log when not
 * NULL. Returns f itself when every annotation is proven. */
Func *sched_prove_annotations(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
			      Func *f, AnnotationStats *stats, DiagList *d);

/* Prove f free of out-of-bounds accesses and division by zero
 * (rw_safety_obligations), logged to log when not NULL; a warning in d
 * for each obligation not proven, with its counterexample. */
void sched_prove_safety(Arena *a, Solver *solver, FloatMode fm, ProofLog *log, const Func *f,
			SafetyStats *stats, DiagList *d);

#endif
