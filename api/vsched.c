/* api/vsched.c — the public API of include/vsched.h over the internal
 * modules: a context owns one arena for every module, schedule and report
 * it hands out, and the rendered diagnostics of the last failing call. */
#include "vsched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/interp.h"
#include "kernel/parse.h"
#include "kernel/print.h"
#include "rewrites/schedule/schedule.h"
#include "rewrites/schedule/primitives.h"
#include "rewrites/schedule/steps.h"
/* merge, fission, merge_conditionals, caches */
#include "rewrites/cache.h"
#include "rewrites/layout.h"
#include "rewrites/reindex.h"
#include "rewrites/merge.h"
#include "smt/sha256.h"
#include "smt/smt.h"

struct vs_module {
	Module *m;
};

struct vs_schedule {
	vs_context *ctx;
	Schedule *s;
	/* for the proof log's meta.json: steps taken by scripts, and steps
	 * (or settings) outside scripts already counted there */
	int script_steps, api_steps_noted;
	vs_schedule *next_live;
	vs_module result;
};

struct vs_report {
	StepReport r;
};

struct vs_context {
	Arena arena;
	char *error;
	vs_schedule *live; /* schedules not yet freed */
};

vs_context *vs_context_new(void)
{
	vs_context *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	arena_init(&c->arena);
	return c;
}

void vs_context_free(vs_context *c)
{
	if (!c)
		return;
	while (c->live)
		vs_schedule_free(c->live);
	free(c->error);
	arena_free(&c->arena);
	free(c);
}

const char *vs_last_error(const vs_context *c) { return c->error ? c->error : ""; }

static void set_error(vs_context *c, const DiagList *d)
{
	free(c->error);
	c->error = diag_render(d);
}

static void set_error_text(vs_context *c, const char *text)
{
	free(c->error);
	c->error = strdup(text);
}

/* ---- argument checks: a NULL name is bad input, never a crash ---- */

static bool null_arg(vs_context *c, const char *what, const void *arg)
{
	if (arg)
		return false;
	char msg[128];
	snprintf(msg, sizeof msg, "%s: missing (NULL) argument", what);
	set_error_text(c, msg);
	return true;
}

/* ---- a primitive's string arguments, against its row of the primitive
 * table (rewrites/schedule/primitives.h) that the script reader checks
 * too: a required one given (not NULL), a name a name (so no string can
 * read as more than one), a word one of the row's words. The pairs are
 * name, value, ..., NULL; a name the row lacks is an internal error. ---- */

#include <stdarg.h>

static bool api_check(vs_context *c, PrimId id, ...)
{
	const PrimSpec *p = prim_spec(id);
	va_list ap;
	va_start(ap, id);
	bool ok = true;
	for (const char *name; ok && (name = va_arg(ap, const char *));) {
		const char *value = va_arg(ap, const char *);
		const PrimArg *arg = prim_arg(p, name);
		char msg[200];
		if (!arg) {
			snprintf(msg, sizeof msg, "%s: internal error: the primitive table has no argument '%s'",
				 p->name, name);
			set_error_text(c, msg);
			ok = false;
		} else if (!value && !arg->def && !(arg->flags & PA_ALIAS)) {
			snprintf(msg, sizeof msg, "%s: %s: missing (NULL) argument", p->name, name);
			set_error_text(c, msg);
			ok = false;
		} else if (value) {
			char *why = prim_check_string(p, arg, value);
			if (why) {
				set_error_text(c, why);
				free(why);
				ok = false;
			}
		}
	}
	va_end(ap);
	return ok;
}

char *vs_primitives_doc(void) { return prim_doc_markdown(); }

/* ---- kernels ---- */

static vs_module *wrap_module(vs_context *c, Module *m)
{
	vs_module *vm = arena_alloc(&c->arena, sizeof *vm);
	vm->m = m;
	return vm;
}

static vs_module *parse_source(vs_context *c, Source *src, DiagList *d)
{
	Module *m = src ? parse_module(&c->arena, src, d) : NULL;
	if (!m) {
		set_error(c, d);
		return NULL;
	}
	return wrap_module(c, m);
}

vs_module *vs_parse_file(vs_context *c, const char *path)
{
	DiagList d;
	diag_init(&d, &c->arena);
	return parse_source(c, source_read_file(&c->arena, path, &d), &d);
}

vs_module *vs_parse_string(vs_context *c, const char *name, const char *text)
{
	DiagList d;
	diag_init(&d, &c->arena);
	return parse_source(c, source_from_string(&c->arena, name, text), &d);
}

char *vs_module_print(const vs_module *m) { return print_module(m->m); }
int vs_module_num_funcs(const vs_module *m) { return m->m->nfuncs; }

const char *vs_module_func_name(const vs_module *m, int i)
{
	return i >= 0 && i < m->m->nfuncs ? m->m->funcs[i]->name : NULL;
}

/* ---- scheduling ---- */

vs_schedule *vs_schedule_new(vs_context *c, const vs_module *m, const vs_options *opt)
{
	SmtOptions so = {0};
	vs_options o = {0};
	if (opt)
		o = *opt;
	so.timeout_ms = o.timeout_ms;
	so.rlimit = o.rlimit;
	so.threads = o.threads;
	so.cache_dir = o.cache_dir;
	if (!so.cache_dir) {
		const char *env = getenv("VSCHED_CACHE");
		so.cache_dir = env && *env ? env : NULL;
	}
	vs_schedule *vs = calloc(1, sizeof *vs);
	if (!vs)
		return NULL;
	vs->ctx = c;
	vs->s = sched_new(&c->arena, m->m, &so);
	if (o.float_ieee)
		vs->s->float_mode = FLOAT_IEEE;
	vs->s->progress = o.progress;
	vs->s->progress_ud = o.progress_ud;
	if (o.log_dir) {
		DiagList d;
		diag_init(&d, &c->arena);
		vs->s->log = proof_log_open(o.log_dir, &d);
		if (!vs->s->log) {
			set_error(c, &d);
			sched_free(vs->s);
			free(vs);
			return NULL;
		}
		/* the log stands alone: the kernel's text, the versions and
		 * the limits, so `log check --rebuild` can run it all again */
		const Source *src = m->m->span.src;
		for (int i = 0; !src && i < m->m->nfuncs; i++)
			src = m->m->funcs[i]->span.src;
		proof_log_set_meta(vs->s->log,
				   &(ProofLogMeta){.vsched_version = VS_VERSION_STRING,
						   .kernel_name = src ? src->name : NULL,
						   .kernel_text = src ? src->text : NULL,
						   .float_mode = vs->s->float_mode,
						   .timeout_ms = o.timeout_ms,
						   .rlimit = o.rlimit});
	}
	vs->next_live = c->live;
	c->live = vs;
	return vs;
}

/* Steps taken outside any script since the last count go into the
 * proof log's meta.json (a rebuild replays scripts only). */
static void note_api_steps(vs_schedule *vs, int settings)
{
	int n = vs->s->nsteps - vs->script_steps - vs->api_steps_noted + settings;
	if (n > 0 && vs->s->log) {
		proof_log_note_api_steps(vs->s->log, n);
		vs->api_steps_noted += n;
	}
}

void vs_schedule_free(vs_schedule *vs)
{
	if (!vs)
		return;
	note_api_steps(vs, 0);
	vs_schedule **p = &vs->ctx->live;
	while (*p && *p != vs)
		p = &(*p)->next_live;
	if (*p)
		*p = vs->next_live;
	sched_free(vs->s);
	free(vs);
}

static vs_status step_status(StepStatus st)
{
	switch (st) {
	case STEP_COMMITTED: return VS_OK;
	case STEP_REJECTED: return VS_REJECTED;
	case STEP_BAD_INPUT: return VS_BAD_INPUT;
	}
	return VS_BAD_INPUT;
}

vs_status vs_work_on(vs_schedule *vs, const char *func)
{
	if (!api_check(vs->ctx, PRIM_WORK_ON, "func", func, NULL))
		return VS_BAD_INPUT;
	Module *m = vs->s->mod;
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, func) == 0) {
			vs->s->func_index = i;
			note_api_steps(vs, 1);
			return VS_OK;
		}
	char msg[300];
	snprintf(msg, sizeof msg, "work_on: no function '%.200s' in the module", func);
	set_error_text(vs->ctx, msg);
	return VS_BAD_INPUT;
}

vs_status vs_float_mode(vs_schedule *vs, const char *mode)
{
	if (!api_check(vs->ctx, PRIM_FLOAT_MODE, "mode", mode, NULL))
		return VS_BAD_INPUT;
	if (mode && strcmp(mode, "real") == 0)
		vs->s->float_mode = FLOAT_REAL;
	else if (mode && strcmp(mode, "ieee") == 0)
		vs->s->float_mode = FLOAT_IEEE;
	else {
		set_error_text(vs->ctx, "float_mode: expected \"real\" or \"ieee\"");
		return VS_BAD_INPUT;
	}
	note_api_steps(vs, 1);
	return VS_OK;
}

/* Begin a step, run the primitive, finish it, keep its diagnostics. */
#define API_STEP(vs, descr, call)                                              \
	do {                                                                   \
		RwCtx c_;                                                      \
		DiagList d_;                                                   \
		diag_init(&d_, &(vs)->ctx->arena);                             \
		sched_begin((vs)->s, &c_, (descr), (Span){0}, &d_);            \
		RwCtx *c = &c_;                                                \
		StepReport *r_ = sched_finish((vs)->s, c, (call));             \
		if (r_->status != STEP_COMMITTED) {                            \
			if (d_.first)                                          \
				set_error((vs)->ctx, &d_);                     \
			else                                                   \
				set_error_text((vs)->ctx, r_->reason ? r_->reason : "rejected"); \
		}                                                              \
		return step_status(r_->status);                                \
	} while (0)

vs_status vs_split(vs_schedule *vs, const char *loop, long factor, const char *tail,
		   const char *outer, const char *inner)
{
	SplitTail t = TAIL_GUARD;
	if (!api_check(vs->ctx, PRIM_SPLIT, "loop", loop, "tail", tail, "outer", outer, "inner", inner,
		       NULL))
		return VS_BAD_INPUT;
	if (tail && !split_tail_from_name(tail, &t)) {
		set_error_text(vs->ctx, "split: tail must be guard, perfect, cut or cut_and_guard");
		return VS_BAD_INPUT;
	}
	const char *desc = arena_printf(&vs->ctx->arena, "split(\"%s\", factor=%ld, tail=\"%s\")",
					loop, factor, split_tail_name(t));
	API_STEP(vs, desc, rw_split(c, loop, factor, t, outer, inner));
}

vs_status vs_split_tail(vs_schedule *vs, const char *loop, long factor, const char *tail,
			const char *outer, const char *inner, const char *tail_loop)
{
	SplitTail t = TAIL_CUT;
	if (!api_check(vs->ctx, PRIM_SPLIT, "loop", loop, "tail", tail, "outer", outer, "inner", inner,
		       "tail_loop", tail_loop, NULL))
		return VS_BAD_INPUT;
	/* a word of the row (api_check); guard and perfect make no tail:
	 * rw_split_tail says so */
	if (tail)
		split_tail_from_name(tail, &t);
	const char *desc = arena_printf(&vs->ctx->arena, "split(\"%s\", factor=%ld, tail=\"%s\", tail_loop=\"%s\")",
					loop, factor, split_tail_name(t), tail_loop);
	API_STEP(vs, desc, rw_split_tail(c, loop, factor, t, outer, inner, tail_loop));
}

vs_status vs_fuse(vs_schedule *vs, const char *outer, const char *inner, const char *fused)
{
	if (!api_check(vs->ctx, PRIM_FUSE, "loops", outer, "loops", inner, "fused", fused, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "fuse(\"%s\", \"%s\")", outer, inner);
	API_STEP(vs, desc, rw_fuse(c, outer, inner, fused));
}

vs_status vs_reorder(vs_schedule *vs, int n, const char *const *loops)
{
	if (n > 0 && null_arg(vs->ctx, "reorder", loops))
		return VS_BAD_INPUT;
	for (int i = 0; i < n; i++)
		if (!api_check(vs->ctx, PRIM_REORDER, "loops", loops[i], NULL))
			return VS_BAD_INPUT;
	StrBuf b = {0};
	sb_puts(&b, "reorder(");
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%s\"%s\"", i ? ", " : "", loops[i]);
	sb_puts(&b, ")");
	char *tmp = sb_take(&b);
	const char *desc = arena_strdup(&vs->ctx->arena, tmp);
	free(tmp);
	API_STEP(vs, desc, rw_reorder(c, n, loops));
}

vs_status vs_parallel(vs_schedule *vs, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_PARALLEL, "loop", loop, NULL))
		return VS_BAD_INPUT;
	API_STEP(vs, arena_printf(&vs->ctx->arena, "parallel(\"%s\")", loop), rw_parallel(c, loop));
}

vs_status vs_vectorize(vs_schedule *vs, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_VECTORIZE, "loop", loop, NULL))
		return VS_BAD_INPUT;
	API_STEP(vs, arena_printf(&vs->ctx->arena, "vectorize(\"%s\")", loop), rw_vectorize(c, loop));
}

vs_status vs_unroll(vs_schedule *vs, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_UNROLL, "loop", loop, NULL))
		return VS_BAD_INPUT;
	API_STEP(vs, arena_printf(&vs->ctx->arena, "unroll(\"%s\")", loop), rw_unroll(c, loop));
}

/* ---------- adjacent loops, conditionals, caches ---------- */

/* A call made of proven sub-steps (schedule.h, compound calls). */
static vs_status compound_status(vs_schedule *vs, DiagList *d, int st)
{
	if (st != STEP_COMMITTED) {
		const StepReport *r = vs->s->nsteps ? vs->s->steps[vs->s->nsteps - 1] : NULL;
		if (d->first)
			set_error(vs->ctx, d);
		else
			set_error_text(vs->ctx, r && r->reason ? r->reason : "rejected");
	}
	return step_status((StepStatus)st);
}

vs_status vs_merge_adjacent_loops(vs_schedule *vs, const char *l1, const char *l2)
{
	if (!api_check(vs->ctx, PRIM_MERGE_ADJACENT_LOOPS, "l1", l1, "l2", l2, NULL))
		return VS_BAD_INPUT;
	if (!l1 && !l2) {
		DiagList d;
		diag_init(&d, &vs->ctx->arena);
		return compound_status(vs, &d, sched_merge_all_loops(vs->s, "merge_adjacent_loops()",
								     (Span){0}, &d));
	}
	if (null_arg(vs->ctx, "merge_adjacent_loops", l1) ||
	    null_arg(vs->ctx, "merge_adjacent_loops", l2))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "merge_adjacent_loops(\"%s\", \"%s\")", l1, l2);
	API_STEP(vs, desc, rw_merge_adjacent_loops(c, l1, l2));
}

vs_status vs_fission(vs_schedule *vs, const char *loop, long after)
{
	if (!api_check(vs->ctx, PRIM_FISSION, "loop", loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "fission(\"%s\", after=%ld)", loop, after);
	API_STEP(vs, desc, rw_fission(c, loop, after));
}

vs_status vs_fission_before(vs_schedule *vs, const char *loop, const char *before)
{
	if (!api_check(vs->ctx, PRIM_FISSION, "loop", loop, "before", before, NULL) ||
	    null_arg(vs->ctx, "fission: before", before))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "fission(\"%s\", before=\"%s\")", loop, before);
	DiagList d;
	diag_init(&d, &vs->ctx->arena);
	return compound_status(vs, &d, sched_fission_before(vs->s, desc, (Span){0}, &d, loop, before,
								 NULL, NULL));
}

vs_status vs_merge_conditionals(vs_schedule *vs, const char *block, bool strict)
{
	if (!api_check(vs->ctx, PRIM_MERGE_CONDITIONALS, "block", block, NULL))
		return VS_BAD_INPUT;
	DiagList d;
	diag_init(&d, &vs->ctx->arena);
	const char *desc = block ? arena_printf(&vs->ctx->arena, "merge_conditionals(block=\"%s\"%s)",
						block, strict ? ", strict=True" : "")
				 : strict ? "merge_conditionals(strict=True)" : "merge_conditionals()";
	return compound_status(vs, &d, sched_merge_conditionals(vs->s, desc, (Span){0}, &d, block,
								 strict));
}

static vs_status cache_step(vs_schedule *vs, bool write, const char *block, const char *buffer,
			    const char *scope, const char *name)
{
	const char *what = write ? "cache_write" : "cache_read";
	if (!api_check(vs->ctx, write ? PRIM_CACHE_WRITE : PRIM_CACHE_READ, "block", block, "buffer",
		       buffer, "scope", scope, "name", name, NULL))
		return VS_BAD_INPUT;
	CacheArgs args = {buffer, block, scope, name, write, 0, NULL};
	StrBuf b = {0};
	sb_printf(&b, "%s(", what);
	if (block)
		sb_printf(&b, "block=\"%s\", ", block);
	sb_printf(&b, "buffer=\"%s\"", buffer);
	if (scope)
		sb_printf(&b, ", scope=\"%s\"", scope);
	sb_puts(&b, ")");
	char *tmp = sb_take(&b);
	const char *desc = arena_strdup(&vs->ctx->arena, tmp);
	free(tmp);
	API_STEP(vs, desc, rw_cache(c, &args));
}

vs_status vs_cache_read(vs_schedule *vs, const char *block, const char *buffer, const char *scope,
			const char *name)
{
	return cache_step(vs, false, block, buffer, scope, name);
}

vs_status vs_cache_write(vs_schedule *vs, const char *block, const char *buffer, const char *scope,
			 const char *name)
{
	return cache_step(vs, true, block, buffer, scope, name);
}

/* ---- compute_at / reverse_compute_at ---- */

vs_status vs_compute_at(vs_schedule *vs, const char *block, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_COMPUTE_AT, "block", block, "loop", loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "compute_at(block=\"%s\", loop=\"%s\")",
					block, loop);
	API_STEP(vs, desc, rw_compute_at(c, block, loop));
}

vs_status vs_reverse_compute_at(vs_schedule *vs, const char *block, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_REVERSE_COMPUTE_AT, "block", block, "loop", loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena,
					"reverse_compute_at(block=\"%s\", loop=\"%s\")", block, loop);
	API_STEP(vs, desc, rw_reverse_compute_at(c, block, loop));
}

const char *vs_report_note(const vs_report *r) { return r->r.note; }

static vs_status run_script(vs_schedule *vs, Source *src, DiagList *d)
{
	if (!src) {
		set_error(vs->ctx, d);
		return VS_BAD_INPUT;
	}
	Script *sc = script_parse(&vs->ctx->arena, src, d);
	if (!sc) {
		set_error(vs->ctx, d);
		return VS_BAD_INPUT;
	}
	/* the script goes into the proof log, after any step taken before it */
	note_api_steps(vs, 0);
	proof_log_add_schedule(vs->s->log, src->name, src->text);
	int before = vs->s->nsteps;
	StepStatus st = sched_run_script(vs->s, sc, d);
	vs->script_steps += vs->s->nsteps - before;
	if (st != STEP_COMMITTED) {
		if (d->first)
			set_error(vs->ctx, d);
		else if (vs->s->nsteps && vs->s->steps[vs->s->nsteps - 1]->reason)
			set_error_text(vs->ctx, vs->s->steps[vs->s->nsteps - 1]->reason);
	}
	return step_status(st);
}

vs_status vs_run_script_file(vs_schedule *vs, const char *path)
{
	DiagList d;
	diag_init(&d, &vs->ctx->arena);
	return run_script(vs, source_read_file(&vs->ctx->arena, path, &d), &d);
}

vs_status vs_run_script_string(vs_schedule *vs, const char *name, const char *text)
{
	DiagList d;
	diag_init(&d, &vs->ctx->arena);
	return run_script(vs, source_from_string(&vs->ctx->arena, name, text), &d);
}

const vs_module *vs_schedule_result(const vs_schedule *vs)
{
	vs_schedule *m = (vs_schedule *)vs;
	m->result.m = vs->s->mod;
	return &m->result;
}

void vs_schedule_cache_stats(vs_schedule *vs, int *solved, int *memory_hits, int *disk_hits,
			     const char **warnings)
{
	SmtStats st;
	smt_solver_stats(vs ? vs->s->solver : NULL, &st);
	if (solved)
		*solved = st.solved;
	if (memory_hits)
		*memory_hits = st.memory_hits;
	if (disk_hits)
		*disk_hits = st.disk_hits;
	if (warnings)
		*warnings = st.warnings;
}

/* ---- reports ---- */

int vs_num_reports(const vs_schedule *vs) { return vs->s->nsteps; }

const vs_report *vs_report_at(const vs_schedule *vs, int i)
{
	if (i < 0 || i >= vs->s->nsteps)
		return NULL;
	return (const vs_report *)vs->s->steps[i];
}

const vs_report *vs_last_report(const vs_schedule *vs)
{
	return vs_report_at(vs, vs->s->nsteps - 1);
}

vs_status vs_report_status(const vs_report *r) { return step_status(r->r.status); }
const char *vs_report_step(const vs_report *r) { return r->r.desc; }
const char *vs_report_reason(const vs_report *r) { return r->r.reason; }
int vs_report_num_obligations(const vs_report *r) { return r->r.nobs; }

void vs_report_obligation(const vs_report *r, int i, const char **kind,
			  const char **statement, const char **verdict, double *seconds)
{
	if (i < 0 || i >= r->r.nobs) {
		/* nothing to report: clear the outputs, never leave them unset */
		if (kind)
			*kind = NULL;
		if (statement)
			*statement = NULL;
		if (verdict)
			*verdict = NULL;
		if (seconds)
			*seconds = 0;
		return;
	}
	if (kind)
		*kind = r->r.obs[i]->kind;
	if (statement)
		*statement = r->r.obs[i]->statement;
	if (verdict)
		*verdict = verdict_name(r->r.results[i].verdict);
	if (seconds)
		*seconds = r->r.results[i].seconds;
}

const char *vs_report_counterexample(const vs_report *r) { return r->r.counterexample; }

const char *vs_report_replay(const vs_report *r)
{
	switch (r->r.replay) {
	case REPLAY_NONE: return "none";
	case REPLAY_CONFIRMED: return "confirmed";
	case REPLAY_UNCONFIRMED: return "unconfirmed";
	case REPLAY_IMPOSSIBLE: return "impossible";
	case REPLAY_SKIPPED: return "skipped";
	}
	return "none";
}

char *vs_report_text(const vs_report *r) { return sched_report_text(&r->r); }

const char *vs_report_replay_text(const vs_report *r)
{
	return r->r.replay == REPLAY_NONE ? NULL : r->r.replay_text;
}

/* The first obligation not proven and its model (either may be NULL). */
static const Obligation *cex_ob(const vs_report *r, const Model **m)
{
	*m = NULL;
	if (r->r.failed < 0 || r->r.failed >= r->r.nobs)
		return NULL;
	*m = r->r.results[r->r.failed].model;
	return r->r.obs[r->r.failed];
}

const char *vs_report_cex_obligation(const vs_report *r)
{
	const Model *m;
	const Obligation *o = cex_ob(r, &m);
	return o ? o->kind : NULL;
}

int vs_report_cex_num_values(const vs_report *r)
{
	const Model *m;
	cex_ob(r, &m);
	return m ? m->nvars : 0;
}

void vs_report_cex_value(const vs_report *r, int i, const char **name, const char **value)
{
	const Model *m;
	cex_ob(r, &m);
	bool ok = m && i >= 0 && i < m->nvars;
	if (name)
		*name = ok ? m->vars[i].var->name : NULL;
	if (value)
		*value = ok ? m->vars[i].val.text : NULL;
}

int vs_report_cex_num_cells(const vs_report *r)
{
	const Model *m;
	cex_ob(r, &m);
	return m ? m->ncells : 0;
}

void vs_report_cex_cell(const vs_report *r, int i, const char **buffer, int *nindices,
			const long long **indices, const char **value)
{
	const Model *m;
	cex_ob(r, &m);
	bool ok = m && i >= 0 && i < m->ncells;
	_Static_assert(sizeof(long long) == sizeof(int64_t), "cell indices are 64-bit");
	if (buffer)
		*buffer = ok ? m->cells[i].buf->name : NULL;
	if (nindices)
		*nindices = ok ? m->cells[i].nidx : 0;
	if (indices)
		*indices = ok ? (const long long *)m->cells[i].idx : NULL;
	if (value)
		*value = ok ? m->cells[i].val.text : NULL;
}

int vs_report_cex_num_spans(const vs_report *r)
{
	const Model *m;
	const Obligation *o = cex_ob(r, &m);
	return o ? 1 + o->nrelated : 0;
}

void vs_report_cex_span(const vs_report *r, int i, const char **file, int *line, int *col)
{
	const Model *m;
	const Obligation *o = cex_ob(r, &m);
	const Span *sp = NULL;
	if (o && i == 0)
		sp = &o->origin;
	else if (o && i > 0 && i <= o->nrelated)
		sp = &o->related[i - 1];
	if (file)
		*file = sp && sp->src ? sp->src->name : NULL;
	if (line)
		*line = sp ? sp->line : 0;
	if (col)
		*col = sp ? sp->col : 0;
}

/* ---- interpreter ---- */

static const Func *pick_func(vs_context *c, const Module *m, const char *name)
{
	if (!name)
		return m->nfuncs ? m->funcs[0] : NULL;
	const Func *f = module_find_func(m, name);
	if (!f) {
		char msg[256];
		snprintf(msg, sizeof msg, "no function '%s' in the module", name);
		set_error_text(c, msg);
	}
	return f;
}

vs_status vs_interp(vs_context *c, const vs_module *m, const char *func,
		    unsigned long seed, char **out)
{
	*out = NULL;
	const Func *f = pick_func(c, m->m, func);
	if (!f)
		return VS_BAD_INPUT;
	DiagList d;
	diag_init(&d, &c->arena);
	Arena a;
	arena_init(&a);
	vs_status st = VS_OK;
	State *in = interp_gen_input(&a, f, seed, &d);
	if (!in) {
		set_error(c, &d);
		arena_free(&a);
		return VS_BAD_INPUT;
	}
	State *run = state_clone(&a, in);
	InterpResult r;
	interp_run(f, run, 0, &r);
	StrBuf b = {0};
	char *text = state_format(in);
	sb_printf(&b, "function %s, seed %lu\ninputs:\n%s", f->name, seed, text);
	free(text);
	if (r.status == RUN_OK) {
		text = state_format(run);
		sb_printf(&b, "outputs:\n%s", text);
		free(text);
	} else {
		sb_printf(&b, "run stopped: %s\n", r.message ? r.message : "error");
		st = VS_REJECTED;
	}
	sb_printf(&b, "counts: %llu loads, %llu stores, %llu branches, %llu iterations\n",
		  (unsigned long long)r.counts.loads, (unsigned long long)r.counts.stores,
		  (unsigned long long)r.counts.branches, (unsigned long long)r.counts.iterations);
	*out = sb_take(&b);
	arena_free(&a);
	return st;
}

vs_status vs_equiv(vs_context *c, const vs_module *a, const vs_module *b,
		   const char *func, int trials, unsigned long seed, char **report)
{
	if (report)
		*report = NULL;
	const Func *fa = pick_func(c, a->m, func);
	if (!fa)
		return VS_BAD_INPUT;
	/* without a name, the only function of b stands for a's under any
	 * name (looked up without recording an error that no longer holds) */
	const Func *fb = !func && b->m->nfuncs == 1 ? module_find_func(b->m, fa->name)
						     : pick_func(c, b->m, func ? func : fa->name);
	if (!fb && !func && b->m->nfuncs == 1)
		fb = b->m->funcs[0];
	if (!fb) {
		set_error_text(c, "the second kernel has no function of that name");
		return VS_BAD_INPUT;
	}
	char *text = NULL;
	int rc = interp_equiv(fa, fb, trials, seed, &text);
	if (rc == 2) {
		/* the reason (a step limit, inputs that cannot be made) is
		 * the report's first line */
		size_t n = text ? strcspn(text, "\n") : 0;
		char *line = n ? strndup(text, n) : NULL;
		set_error_text(c, line ? line : "equiv: no verdict");
		free(line);
	}
	if (report)
		*report = text;
	else
		free(text);
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

/* ---- logs ---- */

vs_status vs_log_show(const char *dir, bool json, char **out)
{
	int rc = proof_log_show(dir, json, out);
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

vs_status vs_log_check_json(const char *dir, const char *solver, char **out)
{
	int rc = proof_log_check_json(dir, solver, true, out);
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

vs_status vs_log_check(const char *dir, const char *solver, char **out)
{
	int rc = proof_log_check(dir, solver, out);
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

/* Re-run the schedule a log records (meta.json, kernel.tir, the
 * schedule copies) with the same float mode and limits into a capture,
 * compare every entry and query with the logged ones, then re-solve as
 * vs_log_check does. */
vs_status vs_log_rebuild(const char *dir, const char *solver, char **out)
{
	*out = NULL;
	ProofLogSource src;
	char *why = NULL;
	int rc = proof_log_read_source(dir, &src, &why);
	if (rc != 0) {
		*out = why ? why : strdup("cannot read the proof log's sources\n");
		proof_log_source_free(&src);
		return rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
	}
	StrBuf b = {0};
	char sha[65];
	sha256_hex(src.kernel_text, strlen(src.kernel_text), sha);
	sb_printf(&b, "rebuilding %s: kernel %s (sha256 %s), %d schedule%s, %d build%s, %s float mode "
		      "(logged by vsched %s with z3 %s)\n",
		  dir, src.kernel_name, sha, src.nschedules, src.nschedules == 1 ? "" : "s", src.nbuilds,
		  src.nbuilds == 1 ? "" : "s", float_mode_name(src.float_mode), src.vsched_version,
		  src.z3_version);
	const char *z3 = smt_solver_version();
	const char *space = strchr(z3, ' ');
	if (strcmp(space ? space + 1 : z3, src.z3_version) != 0 ||
	    strcmp(src.vsched_version, VS_VERSION_STRING) != 0)
		sb_printf(&b, "note: this is vsched %s with %s: its queries may differ from the logged ones\n",
			  VS_VERSION_STRING, z3);
	if (src.api_steps) {
		sb_printf(&b, "cannot rebuild: %d step%s or setting%s went through the C API outside a script; "
			      "a rebuild replays scripts only\n",
			  src.api_steps, src.api_steps == 1 ? "" : "s", src.api_steps == 1 ? "" : "s");
		*out = sb_take(&b);
		proof_log_source_free(&src);
		return VS_BAD_INPUT;
	}
	vs_context *ctx = vs_context_new();
	vs_module *m = ctx ? vs_parse_string(ctx, src.kernel_name, src.kernel_text) : NULL;
	vs_schedule *s = NULL;
	if (m) {
		vs_options opt = {.timeout_ms = src.timeout_ms, .rlimit = src.rlimit,
				  .float_ieee = src.float_mode == FLOAT_IEEE};
		s = vs_schedule_new(ctx, m, &opt);
	}
	if (!s) {
		sb_printf(&b, "cannot rebuild: the kernel copy does not %s:\n%s\n", m ? "schedule" : "parse",
			  ctx ? vs_last_error(ctx) : "out of memory");
		*out = sb_take(&b);
		vs_context_free(ctx);
		proof_log_source_free(&src);
		return VS_REJECTED;
	}
	s->s->log = proof_log_capture();
	/* the scripts and builds in their order; a rejected script stops only
	 * itself, and a build that fails proves what it proved, as logged */
	for (int i = 0; i <= src.nschedules; i++) {
		for (int k = 0; k < src.nbuilds; k++)
			if (src.build_after[k] == i)
				vs_program_free(vs_build(s, &(vs_build_options){
								 .no_int64_widening = !src.build_int64[k]}));
		if (i < src.nschedules)
			vs_run_script_string(s, src.schedule_names[i], src.schedule_texts[i]);
	}
	char *cmp = NULL, *chk = NULL;
	int crc = proof_log_rebuild_compare(dir, s->s->log, &cmp);
	vs_schedule_free(s);
	vs_context_free(ctx);
	proof_log_source_free(&src);
	sb_puts(&b, cmp ? cmp : "");
	free(cmp);
	int krc = proof_log_check(dir, solver, &chk);
	sb_puts(&b, chk ? chk : "");
	free(chk);
	*out = sb_take(&b);
	rc = crc == 2 || krc == 2 ? 2 : crc || krc ? 1 : 0;
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

/* ---- code generation (backend/) ---- */

#include "backend/backend.h"

struct vs_program {
	vs_context *ctx;
	Program *p;
};

vs_status vs_check_target(vs_context *ctx, const char *cpu, const char *features)
{
	DiagList d;
	diag_init(&d, &ctx->arena);
	if (target_check_spec(cpu, features, &d))
		return VS_OK;
	set_error(ctx, &d);
	return VS_BAD_INPUT;
}

vs_program *vs_build(vs_schedule *vs, const vs_build_options *opt)
{
	BackendOptions bo = {0};
	bo.flatten.allow_int64 = true;
	if (opt) {
		bo.opt_level = opt->opt_level;
		bo.no_host_cpu = opt->generic_cpu;
		bo.contract_fma = opt->contract_fma;
		bo.flatten.allow_int64 = !opt->no_int64_widening;
		bo.cpu = opt->cpu;
		bo.features = opt->features;
	}
	DiagList d;
	diag_init(&d, &vs->ctx->arena);
	/* the schedule's module: every committed step proven */
	ProvenModule pm;
	note_api_steps(vs, 0);
	proof_log_add_build(vs->s->log, bo.flatten.allow_int64);
	sched_proven_module(vs->s, &pm);
	Program *p = backend_build(&pm, &bo, &d);
	if (!p) {
		set_error(vs->ctx, &d);
		return NULL;
	}
	vs_program *vp = calloc(1, sizeof *vp);
	if (!vp) {
		backend_free(p);
		return NULL;
	}
	vp->ctx = vs->ctx;
	vp->p = p;
	return vp;
}

void vs_program_free(vs_program *vp)
{
	if (!vp)
		return;
	backend_free(vp->p);
	free(vp);
}

vs_status vs_program_emit(vs_program *vp, const char *kind, const char *path)
{
	EmitKind k;
	if (!emit_kind_from_name(kind, &k)) {
		set_error_text(vp->ctx, "emit: kind must be llvm, asm, obj or header");
		return VS_BAD_INPUT;
	}
	DiagList d;
	diag_init(&d, &vp->ctx->arena);
	if (path) {
		if (backend_emit(vp->p, k, path, &d))
			return VS_OK;
		set_error(vp->ctx, &d);
		return VS_BAD_INPUT;
	}
	char *text = backend_emit_string(vp->p, k, &d);
	if (!text) {
		set_error(vp->ctx, &d);
		return VS_BAD_INPUT;
	}
	fputs(text, stdout);
	free(text);
	return VS_OK;
}

void *vs_program_lookup(vs_program *vp, const char *func)
{
	DiagList d;
	diag_init(&d, &vp->ctx->arena);
	void *f = backend_lookup(vp->p, func, &d);
	if (!f)
		set_error(vp->ctx, &d);
	return f;
}

vs_status vs_program_check(vs_program *vp, const char *func, int trials,
			   unsigned long seed, char **report)
{
	int rc = backend_check(vp->p, func, trials, seed, -1.0, report);
	if (rc == 2)
		set_error_text(vp->ctx, *report ? *report : "check failed");
	return rc == 0 ? VS_OK : rc == 1 ? VS_REJECTED : VS_BAD_INPUT;
}

vs_status vs_program_time(vs_program *vp, const char *func, unsigned long seed,
			  int repeat, double *seconds)
{
	const LoweredFunc *lf = backend_find(vp->p, func);
	if (!lf) {
		set_error_text(vp->ctx, "no such kernel in the program");
		return VS_BAD_INPUT;
	}
	Arena a;
	arena_init(&a);
	DiagList d;
	diag_init(&d, &vp->ctx->arena);
	State *in = interp_gen_input(&a, lf->source, seed, &d);
	bool ok = in && backend_run(vp->p, lf->func->name, in, repeat, seconds, &d);
	if (!ok)
		set_error(vp->ctx, &d);
	arena_free(&a);
	return ok ? VS_OK : VS_REJECTED;
}

void vs_program_stats(const vs_program *vp, int *obligations, int *widened,
		      double *solver_seconds, double *compile_seconds)
{
	const BackendStats *st = backend_stats(vp->p);
	if (obligations)
		*obligations = st->lower.nproven;
	if (widened)
		*widened = st->lower.nwidened;
	if (solver_seconds)
		*solver_seconds = st->lower.solver_seconds;
	if (compile_seconds)
		*compile_seconds = st->lower_seconds + st->codegen_seconds + st->optimize_seconds;
}

const char *vs_version(void) { return VS_VERSION_STRING; }

const char *vs_program_warning(const vs_program *vp) { return backend_warnings(vp->p); }

/* ---------- layout, overcompute and clean-up primitives ----------
 * Direct calls into the scheduler, as the script reader makes them. Names
 * are only looked up, never read as script text; an index map or a pad
 * value is parsed by the kernel-language parser from the caller's string
 * alone (its own Source, so errors are positioned in that string and the
 * whole string must be one lambda or one expression). */

/* A copy of a caller's string as a Source named `what`, e.g. "index_map". */
static Source *arg_source(vs_schedule *vs, const char *what, const char *text)
{
	return source_from_string(&vs->ctx->arena, what, text);
}

/* A compound step (a sched_* call) with its diagnostics kept. */
#define API_COMPOUND(vs, call)                                                 \
	do {                                                                   \
		DiagList d_;                                                   \
		diag_init(&d_, &(vs)->ctx->arena);                             \
		DiagList *d = &d_;                                             \
		return compound_status((vs), d, (call));                       \
	} while (0)

static bool all_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return false;
	return true;
}

/* A decimal integer or float literal (optional sign), the whole string;
 * nothing else (no "inf", "nan" or hex floats, which the script reader
 * does not take either). */
static bool number_literal(const char *s, bool *is_float)
{
	const char *p = s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '+' || *p == '-')
		p++;
	int digits = 0;
	*is_float = false;
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.') {
		*is_float = true;
		p++;
		while (*p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		*is_float = true;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return all_space(p, p + strlen(p));
}

static bool starts_with_word(const char *s, const char *w)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	size_t n = strlen(w);
	return strncmp(s, w, n) == 0 && !(s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') ||
					  (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9'));
}

/* pad_value text into args: a number, None, or an expression or lambda
 * parsed later (per function) from its own Source. */
static vs_status api_pad(vs_schedule *vs, const char *pad, LayoutArgs *args)
{
	args->pad_kind = LAYOUT_PAD_NONE;
	if (!pad)
		return VS_OK;
	Source *src = arg_source(vs, "pad_value", pad);
	int len = (int)strlen(pad);
	args->pad_src = src;
	args->pad_start = 0;
	args->pad_end = len;
	args->pad_span = (Span){src, 1, 1, len};
	bool is_float;
	if (all_space(pad, pad + len)) {
		set_error_text(vs->ctx, "pad_value:1:1: error: transform_layout: pad_value is empty (pass NULL for no pad value)");
		return VS_BAD_INPUT;
	}
	if (starts_with_word(pad, "None") && all_space(strstr(pad, "None") + 4, pad + len))
		return VS_OK;
	if (number_literal(pad, &is_float)) {
		char *end;
		errno = 0;
		if (is_float) {
			args->pad_kind = LAYOUT_PAD_FLOAT;
			args->pad_float = strtod(pad, &end);
		} else {
			args->pad_kind = LAYOUT_PAD_INT;
			args->pad_int = strtoll(pad, &end, 10);
		}
		if (errno == ERANGE) {
			set_error_text(vs->ctx, "pad_value:1:1: error: transform_layout: pad_value is out of range");
			return VS_BAD_INPUT;
		}
		return VS_OK;
	}
	args->pad_kind = starts_with_word(pad, "lambda") ? LAYOUT_PAD_LAMBDA : LAYOUT_PAD_EXPR;
	return VS_OK;
}

vs_status vs_transform_layout(vs_schedule *vs, const char *buffer, const char *index_map,
			      const char *pad_value, const char *block, const char *func)
{
	if (!api_check(vs->ctx, PRIM_TRANSFORM_LAYOUT, "buffer", buffer, "index_map", index_map,
		       "pad_value", pad_value, "block", block, "func", func, NULL))
		return VS_BAD_INPUT;
	LayoutArgs args;
	memset(&args, 0, sizeof args);
	args.buffer = buffer;
	args.block = block;
	args.func = func;
	args.src = arg_source(vs, "index_map", index_map);
	args.map_start = 0;
	args.map_end = (int)strlen(index_map);
	vs_status ps = api_pad(vs, pad_value, &args);
	if (ps != VS_OK)
		return ps;
	const char *desc = arena_printf(&vs->ctx->arena,
					"transform_layout(buffer=\"%s\", index_map=%s%s%s)", buffer,
					index_map, pad_value ? ", pad_value=" : "",
					pad_value ? pad_value : "");
	API_STEP(vs, desc, rw_transform_layout(c, &args));
}

vs_status vs_sequential_buffer_access(vs_schedule *vs, const char *buffer, const char *block)
{
	if (!api_check(vs->ctx, PRIM_SEQUENTIAL_BUFFER_ACCESS, "buffer", buffer, "block", block, NULL))
		return VS_BAD_INPUT;
	const char *desc = block ? arena_printf(&vs->ctx->arena,
						"sequential_buffer_access(block=\"%s\", buffer=\"%s\")",
						block, buffer)
				 : arena_printf(&vs->ctx->arena,
						"sequential_buffer_access(buffer=\"%s\")", buffer);
	API_COMPOUND(vs, sched_sequential_buffer_access(vs->s, desc, (Span){0}, d, block, buffer));
}

static vs_status overcompute_call(vs_schedule *vs, const char *name, const char *block,
				  const char *loop, bool strict, bool add_branches,
				  bool remove_stores)
{
	PrimId id = remove_stores ? PRIM_REMOVE_NO_OP
			: add_branches ? PRIM_REMOVE_OVERCOMPUTE_THROUGH_BRANCHING
				       : PRIM_REMOVE_BRANCHING_THROUGH_OVERCOMPUTE;
	if (!api_check(vs->ctx, id, "block", block, remove_stores ? NULL : "loop", loop, NULL))
		return VS_BAD_INPUT;
	OcArgs args = {0};
	args.block = block;
	args.loop = loop;
	args.strict = strict;
	args.add_branches = add_branches;
	args.remove_stores = remove_stores;
	StrBuf b = {0};
	bool first = true;
	sb_printf(&b, "%s(", name);
	if (block)
		sb_printf(&b, "%sblock=\"%s\"", first ? "" : ", ", block), first = false;
	if (loop)
		sb_printf(&b, "%sloop=\"%s\"", first ? "" : ", ", loop), first = false;
	if (strict)
		sb_printf(&b, "%sstrict=True", first ? "" : ", "), first = false;
	sb_puts(&b, ")");
	char *tmp = sb_take(&b);
	const char *desc = arena_strdup(&vs->ctx->arena, tmp);
	free(tmp);
	API_COMPOUND(vs, sched_overcompute(vs->s, desc, (Span){0}, d, &args));
}

vs_status vs_remove_branching_through_overcompute(vs_schedule *vs, const char *block,
						  const char *loop, bool strict)
{
	return overcompute_call(vs, "remove_branching_through_overcompute", block, loop, strict,
				false, false);
}

vs_status vs_remove_overcompute_through_branching(vs_schedule *vs, const char *block, bool strict)
{
	return overcompute_call(vs, "remove_overcompute_through_branching", block, NULL, strict,
				true, false);
}

vs_status vs_remove_no_op(vs_schedule *vs, const char *block)
{
	return overcompute_call(vs, "remove_no_op", block, NULL, false, false, true);
}

vs_status vs_simplify(vs_schedule *vs)
{
	/* TVM's tir.Simplify defaults, as sch.simplify() */
	SimplifyOptions o = {0};
	o.transitive = true;
	o.branch_constraints = true;
	o.knowns_conditions = true;
	o.knowns_expressions = true;
	API_COMPOUND(vs, sched_simplify_with(vs->s, "simplify()", (Span){0}, d, &o));
}

/* "a|b|c" against the allowed words; each found sets its flag. */
static bool bar_words(const char *text, int n, const char *const *words, bool **flags)
{
	for (const char *p = text; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		bool found = false;
		for (int i = 0; i < n; i++)
			if (strlen(words[i]) == len && strncmp(p, words[i], len) == 0) {
				if (flags[i])
					*flags[i] = true;
				found = true;
			}
		if (!found)
			return false;
		p += len + (bar != NULL);
	}
	return true;
}

vs_status vs_hoist_expression(vs_schedule *vs, const char *conditionals, const char *block,
			      const char *loop)
{
	if (!api_check(vs->ctx, PRIM_HOIST_EXPRESSION, "conditionals", conditionals, "block", block,
		       "loop", loop, NULL))
		return VS_BAD_INPUT;
	HoistArgs args = {0};
	args.block = block;
	args.loop = loop;
	args.let_stmt = true; /* let_bindings="all", as the script's default */
	static const char *const words[] = {"if_else_stmt", "if_else_expr", "boolean_expression",
					    "none"};
	bool *flags[] = {&args.if_else_stmt, &args.if_else_expr, &args.boolean_expression, NULL};
	if (!bar_words(conditionals ? conditionals : "if_else_stmt|if_else_expr|boolean_expression",
		       4, words, flags)) {
		set_error_text(vs->ctx, "hoist_expression: conditionals must be \"none\", \"if_else_stmt\", \"if_else_expr\" or \"boolean_expression\" (joined with |)");
		return VS_BAD_INPUT;
	}
	StrBuf b = {0};
	sb_puts(&b, "hoist_expression(");
	bool first = true;
	if (conditionals)
		sb_printf(&b, "conditionals=\"%s\"", conditionals), first = false;
	if (block)
		sb_printf(&b, "%sblock=\"%s\"", first ? "" : ", ", block), first = false;
	if (loop)
		sb_printf(&b, "%sloop=\"%s\"", first ? "" : ", ", loop), first = false;
	sb_puts(&b, ")");
	char *tmp = sb_take(&b);
	const char *desc = arena_strdup(&vs->ctx->arena, tmp);
	free(tmp);
	API_COMPOUND(vs, sched_hoist_expression(vs->s, desc, (Span){0}, d, &args));
}

/* ---------- block primitives of TVM's API ---------- */

vs_status vs_decompose_reduction(vs_schedule *vs, const char *block, const char *loop)
{
	if (!api_check(vs->ctx, PRIM_DECOMPOSE_REDUCTION, "block", block, "loop", loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "decompose_reduction(\"%s\", \"%s\")", block,
					loop);
	API_STEP(vs, desc, rw_decompose_reduction(c, block, loop));
}

vs_status vs_rfactor(vs_schedule *vs, const char *loop, long factor_axis)
{
	if (!api_check(vs->ctx, PRIM_RFACTOR, "loop", loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "rfactor(\"%s\", %ld)", loop, factor_axis);
	API_STEP(vs, desc, rw_rfactor(c, loop, factor_axis));
}

vs_status vs_add_unit_loop(vs_schedule *vs, const char *block_or_loop)
{
	if (!api_check(vs->ctx, PRIM_ADD_UNIT_LOOP, "block_or_loop", block_or_loop, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "add_unit_loop(\"%s\")", block_or_loop);
	bool is_block = rw_find_block(sched_func(vs->s), block_or_loop) != NULL;
	API_STEP(vs, desc, rw_add_unit_loop(c, block_or_loop, is_block, NULL));
}

vs_status vs_lift_alloc(vs_schedule *vs, const char *buffer, int n_lifts)
{
	if (!api_check(vs->ctx, PRIM_LIFT_ALLOC, "buffer", buffer, NULL))
		return VS_BAD_INPUT;
	const char *desc = arena_printf(&vs->ctx->arena, "lift_alloc(\"%s\", n_lifts=%d)", buffer, n_lifts);
	API_STEP(vs, desc, rw_lift_alloc(c, buffer, n_lifts));
}

vs_status vs_transform_block_layout(vs_schedule *vs, const char *block, const char *index_map)
{
	if (!api_check(vs->ctx, PRIM_TRANSFORM_BLOCK_LAYOUT, "block", block, "index_map", index_map,
		       NULL))
		return VS_BAD_INPUT;
	Source *src = arg_source(vs, "index_map", index_map);
	const char *desc = arena_printf(&vs->ctx->arena, "transform_block_layout(\"%s\", %s)", block,
					index_map);
	API_STEP(vs, desc, rw_transform_block_layout(c, block, src, 0, (int)strlen(index_map)));
}

vs_status vs_reindex(vs_schedule *vs, const char *block, const char *buffer, bool write,
		     const char *scope, const char *index_map)
{
	PrimId id = !scope ? PRIM_REINDEX : write ? PRIM_REINDEX_CACHE_WRITE : PRIM_REINDEX_CACHE_READ;
	if (!api_check(vs->ctx, id, "block", block, "buffer", buffer, NULL) ||
	    (scope && !api_check(vs->ctx, id, "scope", scope, NULL)))
		return VS_BAD_INPUT;
	if ((scope == NULL) != (index_map == NULL)) {
		set_error_text(vs->ctx, "reindex: scope and index_map go together (both NULL: reindex; both given: reindex_cache_read/write)");
		return VS_BAD_INPUT;
	}
	ReindexArgs args = {block, buffer, write, scope, NULL, 0, 0};
	if (index_map) {
		args.src = arg_source(vs, "index_map", index_map);
		args.map_end = (int)strlen(index_map);
	}
	const char *desc =
		scope ? arena_printf(&vs->ctx->arena, "reindex_cache_%s(\"%s\", \"%s\", \"%s\", %s)",
				     write ? "write" : "read", block, buffer, scope, index_map)
		      : arena_printf(&vs->ctx->arena, "reindex(\"%s\", (\"%s\", \"%s\"))", block,
				     write ? "write" : "read", buffer);
	API_STEP(vs, desc, rw_reindex(c, &args));
}

vs_status vs_reduce_loop_extents(vs_schedule *vs, const char *block)
{
	if (!api_check(vs->ctx, PRIM_REDUCE_LOOP_EXTENTS, "block", block, NULL))
		return VS_BAD_INPUT;
	const char *desc = block ? arena_printf(&vs->ctx->arena, "reduce_loop_extents(block=\"%s\")",
						block)
				 : "reduce_loop_extents()";
	API_COMPOUND(vs, sched_reduce_loop_extents(vs->s, desc, (Span){0}, d, block));
}
