/* rewrites/schedule.h — the schedule: the current module, the function
 * being worked on, the float mode, and the steps taken. A step runs a
 * primitive (a pure function), sends its obligations to the solver, and
 * commits the new IR only if every obligation is proven; otherwise the
 * previous IR stays and the step's report says why, with a counterexample
 * and its replay when the solver refuted an obligation. */
#ifndef VS_REWRITES_SCHEDULE_H
#define VS_REWRITES_SCHEDULE_H

#include "rewrite.h"
#include "script.h"
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
	DiagList diags;
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

/* Run a whole schedule script; stops at the first step that is not
 * committed. Returns that step's status (STEP_COMMITTED if all were). */
StepStatus sched_run_script(Schedule *s, const Script *sc, DiagList *d);

/* Render a step report for people (malloc'ed). */
char *sched_report_text(const StepReport *r);

#endif
