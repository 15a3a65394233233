/* tests/test_backend_int.h — private to the backend suite (test_backend.c,
 * test_backend_codegen.c): building a schedule's program and comparing the
 * JIT with the interpreter. Each file that includes it gets its own arena
 * and fixture (the helpers are static inline and use that arena). */
#ifndef VS_TESTS_TEST_BACKEND_INT_H
#define VS_TESTS_TEST_BACKEND_INT_H

#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/runtime.h"
#include "rewrites/schedule/schedule.h"
#include "tests/randkernel.h"
#include "tests/testutil.h"
#include "vsched.h"

/* What vs_build does: the schedule's proven module, then the backend. */
static inline Program *build_proven(Schedule *s, const BackendOptions *opt, DiagList *d)
{
	ProvenModule pm;
	sched_proven_module(s, &pm);
	return backend_build(&pm, opt, d);
}

static Arena arena;
static inline void setup(void) { arena_init(&arena); }
static inline void teardown(void) { arena_free(&arena); }

/* ---------- helpers ---------- */

/* A schedule and the program built from it, freed together. */
typedef struct Built {
	Schedule *s;
	Program *p;
} Built;

static inline Built build_opts(const char *text, const char *script, const BackendOptions *opt)
{
	Built b = {0};
	Module *m = tu_parse(&arena, "k.tir", text);
	b.s = tu_schedule(&arena, m);
	if (script)
		ck_assert_msg(tu_run(b.s, script) == STEP_COMMITTED, "schedule rejected:\n%s",
			      sched_report_text(tu_last(b.s)));
	DiagList d;
	diag_init(&d, &arena);
	b.p = build_proven(b.s, opt, &d);
	ck_assert_msg(b.p != NULL, "build failed:\n%s", diag_render(&d));
	return b;
}

static inline Built build(const char *text, const char *script)
{
	return build_opts(text, script, NULL);
}

static inline void built_free(Built *b)
{
	backend_free(b->p);
	sched_free(b->s);
}

/* JIT vs interpreter on every function of the program. */
static inline void assert_jit_agrees(Program *p, int trials, double tol)
{
	for (int i = 0; i < backend_num_funcs(p); i++) {
		const char *name = backend_lowered(p, i)->func->name;
		char *report = NULL;
		int rc = backend_check(p, name, trials, 11, tol, &report);
		ck_assert_msg(rc == 0, "JIT disagrees on %s:\n%s\nlowered:\n%s", name, report,
			      print_func(backend_lowered(p, i)->func));
		free(report);
	}
}

static inline void jit_agrees(const char *text, const char *script)
{
	Built b = build(text, script);
	assert_jit_agrees(b.p, 6, 0.0);
	built_free(&b);
}

/* The lowered function printed (malloc'ed). */
static inline char *lowered_text(Program *p, int i)
{
	return print_func(backend_lowered(p, i)->func);
}

static inline void assert_contains(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

static inline void assert_lacks(const char *text, const char *needle)
{
	ck_assert_msg(strstr(text, needle) == NULL, "did not expect \"%s\" in:\n%s", needle, text);
}

static inline Buffer *param_buffer(Module *m, const char *name)
{
	Func *f = m->funcs[0];
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && strcmp(f->params[i].buf->name, name) == 0)
			return f->params[i].buf;
	ck_abort_msg("no buffer %s", name);
	return NULL;
}

/* The test stands in for transform_layout: axis separators set on a
 * parsed physical buffer. */
static inline void set_separators(Buffer *b, int n, const int *seps)
{
	b->naxis_separators = n;
	b->axis_separators = arena_alloc(&arena, sizeof(int) * (size_t)(n ? n : 1));
	memcpy(b->axis_separators, seps, sizeof(int) * (size_t)n);
}

static inline Built build_module(Module *m, const BackendOptions *opt, DiagList *d)
{
	Built b = {0};
	b.s = tu_schedule(&arena, m);
	b.p = build_proven(b.s, opt, d);
	return b;
}

/* Lowered vs scheduled function in the interpreter: the same input cells
 * (flat data is the same row-major data), the same results. */
static inline void assert_lowered_equiv(const LoweredFunc *lf, uint64_t seed)
{
	DiagList d;
	diag_init(&d, &arena);
	State *in = interp_gen_input(&arena, lf->source, seed, &d);
	ck_assert_msg(in != NULL, "no input: %s", diag_render(&d));
	State *ref = state_clone(&arena, in);
	InterpResult r;
	ck_assert_int_eq(interp_run(lf->source, ref, 0, &r), RUN_OK);
	int64_t scalars[16] = {0};
	for (int i = 0; i < in->nscalars && i < 16; i++)
		scalars[i] = in->scalars[i].i;
	State *low = state_new(&arena, lf->func, scalars, &d);
	ck_assert_msg(low != NULL, "no lowered state: %s", diag_render(&d));
	for (int i = 0; i < in->nbufs; i++) {
		ck_assert_int_eq(low->bufs[i].size, in->bufs[i].size);
		memcpy(low->bufs[i].data, in->bufs[i].data, sizeof(Value) * (size_t)in->bufs[i].size);
		memcpy(low->bufs[i].cell, in->bufs[i].cell, (size_t)in->bufs[i].size);
	}
	ck_assert_msg(interp_run(lf->func, low, 0, &r) == RUN_OK, "lowered run: %s", r.message);
	for (int i = 0; i < ref->nbufs; i++)
		for (int64_t k = 0; k < ref->bufs[i].size; k++) {
			if (ref->bufs[i].cell[k] != CELL_INIT)
				continue;
			ck_assert_int_eq(low->bufs[i].cell[k], CELL_INIT);
			ck_assert_msg(memcmp(&low->bufs[i].data[k], &ref->bufs[i].data[k], sizeof(Value)) == 0,
				      "%s cell %lld differs", ref->bufs[i].buf->name, (long long)k);
		}
}
static inline Module *parse_file(const char *path)
{
	DiagList d;
	diag_init(&d, &arena);
	Source *src = source_read_file(&arena, path, &d);
	Module *m = src ? parse_module(&arena, src, &d) : NULL;
	ck_assert_msg(m != NULL, "%s: %s", path, diag_render(&d));
	return m;
}

/* The TCases suite_backend adds from test_backend_codegen.c. */
TCase *backend_codegen_tcase(void);
TCase *backend_float16_tcase(void);
TCase *backend_math_calls_tcase(void);
TCase *backend_loops_tcase(void);
TCase *backend_emission_tcase(void);
TCase *backend_target_cpu_tcase(void);

#endif
