/* rewrites/schedule/annotations.c — annotations reach LLVM only proven
 * (semantics.md 7): before a build, every parallel and vectorized loop of
 * the scheduled module, whether a schedule step or the kernel's own text
 * put it there, is proven free of races again (parallel.no_race,
 * vectorize.no_race); a loop whose proof fails is compiled serially, as
 * the reference interpreter runs it, with a warning. */
#include "rewrites/schedule/schedule.h"
#include "kernel/analysis/stmt_map.h"

#include <string.h>

/* loops to compile serially: the listed ones, or every annotated one */
typedef struct Serial {
	const Stmt *const *loops;
	int n;
	bool all;
} Serial;

typedef struct AnnotatedLoop {
	Stmt *loop;
	StmtCtx ctx;
} AnnotatedLoop;

typedef struct Annotated {
	Arena *a;
	int n, cap;
	AnnotatedLoop *items;
} Annotated;

static void find_annotated(void *ud, Stmt *s, const StmtCtx *sc)
{
	Annotated *w = ud;
	if (s->kind != ST_FOR || (s->u.loop.kind != FOR_PARALLEL && s->u.loop.kind != FOR_VECTORIZED))
		return;
	VEC_PUSH(w->a, w->items, w->n, w->cap, ((AnnotatedLoop){s, *sc}));
}

static ForKind serial_kind(StmtMap *m, const Stmt *loop)
{
	const Serial *sl = m->ud;
	bool annotated = loop->u.loop.kind == FOR_PARALLEL || loop->u.loop.kind == FOR_VECTORIZED;
	if (sl->all && annotated)
		return FOR_SERIAL;
	for (int i = 0; i < sl->n; i++)
		if (sl->loops[i] == loop)
			return FOR_SERIAL;
	return loop->u.loop.kind;
}

static Func *with_serial(Arena *a, Func *f, Serial *sl)
{
	StmtMap m = {.a = a, .loop_kind = serial_kind, .ud = sl};
	Stmt *body = an_map_stmt(&m, f->body);
	return body == f->body ? f : ir_func(a, f->name, f->nparams, f->params, body, f->span);
}

Func *sched_prove_annotations(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
			      Func *f, AnnotationStats *stats, DiagList *d)
{
	Annotated w = {.a = a};
	RwCtx whole = {.arena = a, .func = f, .float_mode = fm};
	const char *deep = rw_nesting_too_deep(&whole);
	if (deep) {
		/* the walks that find the loops and build their race
		 * obligations would stop early: nothing is proven */
		Serial all = {.all = true};
		Func *g = with_serial(a, f, &all);
		if (g == f)
			return f;
		diag_add(d, DIAG_WARNING, f->span,
			 "parallel and vectorized loops of '%s' are compiled as serial loops: %s",
			 f->name, deep);
		stats->nserialized++;
		return g;
	}
	an_walk(a, f, find_annotated, &w);
	if (w.n == 0)
		return f;
	const Stmt **serial = arena_alloc(a, sizeof *serial * (size_t)w.n);
	int nserial = 0;
	for (int i = 0; i < w.n; i++) {
		const Stmt *l = w.items[i].loop;
		bool par = l->u.loop.kind == FOR_PARALLEL;
		const char *kind = par ? "parallel.no_race" : "vectorize.no_race";
		const Expr *opq = ir_stmt_find_opaque(l);
		if (opq) { /* effects unknown: no race proof */
			diag_add(d, DIAG_WARNING, l->span, "%s loop '%s' is compiled as a serial "
				 "loop: the opaque call T.%s at line %d has unknown effects",
				 par ? "parallel" : "vectorized", l->u.loop.var->name,
				 opq->u.opq.name, opq->span.line);
			serial[nserial++] = l;
			stats->nserialized++;
			continue;
		}
		DiagList scratch;
		diag_init(&scratch, a);
		RwCtx c = {.arena = a, .func = f, .float_mode = fm, .diag = &scratch,
			   .desc = arena_printf(a, "build: %s loop '%s'", par ? "parallel" : "vectorized",
						l->u.loop.var->name)};
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true),
						  l->span);
		rw_add_context_hyps(&c, base, &w.items[i].ctx);
		rw_race_obligations(&c, kind, base, l);
		int n = c.obs.n;
		ObligationResult *res = arena_alloc(a, sizeof *res * (size_t)(n ? n : 1));
		smt_discharge_all(solver, a, n, c.obs.items, fm, res);
		int failed = -1;
		for (int k = 0; k < n; k++) {
			if (log)
				proof_log_obligation(log, c.obs.items[k], &res[k], fm);
			stats->nobligations++;
			stats->solver_seconds += res[k].seconds;
			if (res[k].verdict == VERDICT_PROVEN)
				stats->nproven++;
			else if (failed < 0)
				failed = k;
		}
		if (failed < 0)
			continue;
		const Obligation *o = c.obs.items[failed];
		const char *why = res[failed].verdict == VERDICT_REFUTED
					  ? "refuted"
					  : arena_printf(a, "not proven: %s",
							 res[failed].reason ? res[failed].reason : "unknown");
		diag_add(d, DIAG_WARNING, l->span,
			 "%s loop '%s' is compiled as a serial loop: obligation %s %s (%s)",
			 par ? "parallel" : "vectorized", l->u.loop.var->name, o->kind, why,
			 o->statement);
		serial[nserial++] = l;
		stats->nserialized++;
	}
	if (nserial == 0)
		return f;
	Serial sl = {.loops = serial, .n = nserial};
	return with_serial(a, f, &sl);
}

void sched_proven_module(Schedule *s, ProvenModule *out)
{
	memset(out, 0, sizeof *out);
	out->float_mode = s->float_mode;
	out->solver = s->solver;
	out->log = s->log;
	diag_init(&out->warnings, s->arena);
	const Module *m = s->mod;
	if (!m || m->nfuncs == 0) {
		out->mod = m;
		return;
	}
	Func **funcs = arena_alloc(s->arena, sizeof *funcs * (size_t)m->nfuncs);
	bool changed = false;
	for (int i = 0; i < m->nfuncs; i++) {
		funcs[i] = sched_prove_annotations(s->arena, s->solver, s->float_mode, s->log,
						   m->funcs[i], &out->annotations, &out->warnings);
		sched_prove_safety(s->arena, s->solver, s->float_mode, s->log, funcs[i],
				   &out->safety, &out->warnings);
		changed |= funcs[i] != m->funcs[i];
	}
	out->mod = changed ? ir_module(s->arena, m->name, m->nfuncs, funcs, m->span) : m;
}
