/* tests/test_smt_int.h — private to the smt suite's test_smt.c and
 * test_smt_wrap.c: the fixture (an arena and a solver), building
 * obligations, and running an independent solver binary on a query text.
 * Each file that includes it gets its own arena, solver and fixture (the
 * helpers are static inline and use them). */
#ifndef VS_TESTS_TEST_SMT_INT_H
#define VS_TESTS_TEST_SMT_INT_H

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/half.h"
#include "kernel/interp.h"
#include "smt/range.h"
#include "smt/smt.h"

static Arena arena;
static Solver *solver;
static const Span no_span;

static inline void setup(void)
{
	arena_init(&arena);
	/* the limit is wall-clock time: on a loaded machine (the suites run
	 * side by side) 10 s turned a float refutation into unknown; the
	 * tests of limits make solvers of their own. The tests read smt2. */
	SmtOptions generous = {.timeout_ms = 120000, .want_text = true};
	solver = smt_solver_new(&generous);
}

static inline void teardown(void)
{
	smt_solver_free(solver);
	arena_free(&arena);
}

/* ---------- building obligations ---------- */

static inline Var *var(const char *name, DType t) { return ir_var(&arena, name, t, no_span); }
static inline Expr *ref(Var *v) { return ir_varref(&arena, v, no_span); }
static inline Expr *lit(int64_t v) { return ir_int32(&arena, v); }
static inline Expr *flit(double v, DType t) { return ir_float(&arena, v, t, no_span); }
static inline Expr *bin(BinOp op, Expr *x, Expr *y) { return ir_bin(&arena, op, x, y, no_span); }
static inline Expr *eq(Expr *x, Expr *y) { return bin(OP_EQ, x, y); }
/* x >= -inf: false only for NaN (an ordering is a plain IEEE comparison) */
static inline Expr *not_nan(Var *x) { return bin(OP_GE, ref(x), flit(-INFINITY, x->dtype)); }

static inline Obligation *ob(int nhyps, Expr **hyps, Expr *goal)
{
	return obligation_new(&arena, "test", "a test obligation", 0, NULL,
			      nhyps, hyps, goal, no_span);
}

static inline ObligationResult check_in(Obligation *o, FloatMode fm)
{
	ObligationResult r;
	smt_discharge(solver, &arena, o, fm, &r);
	return r;
}

static inline Verdict verdict_of(Obligation *o, FloatMode fm)
{
	return check_in(o, fm).verdict;
}

static inline const ModelVar *model_var(const ObligationResult *r, const Var *v)
{
	ck_assert_ptr_nonnull(r->model);
	for (int i = 0; i < r->model->nvars; i++)
		if (r->model->vars[i].var == v)
			return &r->model->vars[i];
	ck_abort_msg("no value for %s in the model", v->name);
	return NULL;
}

/* Python's // and % */
static inline int64_t py_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static inline int64_t py_mod(int64_t a, int64_t b) { return a - b * py_div(a, b); }

/* lo <= v <= hi */
static inline Expr *within(Var *v, int64_t lo, int64_t hi)
{
	return ir_and(&arena, bin(OP_LE, lit(lo), ref(v)), bin(OP_LE, ref(v), lit(hi)));
}
/* "sat", "unsat", or whatever else the binary printed first */
static inline char *run_solver(const char *cmd, const char *text)
{
	char path[] = "/tmp/vsched-smt-XXXXXX.smt2";
	int fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char line[256] = "";
	char *command = NULL;
	ck_assert_int_ge(asprintf(&command, "%s %s 2>&1", cmd, path), 0);
	FILE *p = popen(command, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(line, sizeof line, p))
		line[0] = '\0';
	char rest[256];
	while (fgets(rest, sizeof rest, p))
		;
	pclose(p);
	free(command);
	unlink(path);
	line[strcspn(line, "\r\n")] = '\0';
	return strdup(line);
}

/* The TCases suite_smt adds from test_smt_wrap.c. */
TCase *smt_query_text_tcase(void);
TCase *smt_wrap_around_tcase(void);

#endif
