/* tests/test_interp_int.h — private to the interp suite (test_interp.c,
 * test_interp_states.c): building IR by hand, parsing a text, and the
 * table-driven TCases both files register. Each file that includes it gets
 * its own arena and fixture (the helpers are static inline and use them). */
#ifndef VS_TESTS_TEST_INTERP_INT_H
#define VS_TESTS_TEST_INTERP_INT_H

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/half.h"
#include "kernel/interp.h"
#include "kernel/parse.h"
#include "tests/randkernel.h"
#include "tests/testutil.h"

static Arena arena;
static const Span S0;
static inline void setup(void) { arena_init(&arena); }
static inline void teardown(void) { arena_free(&arena); }

/* ---------- building IR by hand ---------- */

static inline Span at(int line) { return (Span){NULL, line, 1, 1}; }
static inline Expr *lit(int64_t v, DType t) { return ir_int(&arena, v, t, S0); }
static inline Expr *i32(int64_t v) { return ir_int32(&arena, v); }
static inline Expr *flt(double v) { return ir_float(&arena, v, DT_FLOAT32, S0); }
static inline Expr *ref(Var *v) { return ir_varref(&arena, v, S0); }
static inline Expr *bin(BinOp op, Expr *x, Expr *y) { return ir_bin(&arena, op, x, y, S0); }
static inline Var *var(const char *name) { return ir_var(&arena, name, DT_INT32, S0); }

static inline Buffer *buf(const char *name, DType t, int ndim, const int64_t *shape)
{
	Expr *ext[8];
	for (int k = 0; k < ndim; k++)
		ext[k] = i32(shape[k]);
	return ir_buffer(&arena, name, t, ndim, ext, S0);
}

static inline Buffer *buf1(const char *name, DType t, int64_t n)
{
	return buf(name, t, 1, &n);
}

static inline Expr *ld(Buffer *b, Expr *i) { return ir_load(&arena, b, 1, &i, S0); }

static inline Expr *ld2(Buffer *b, Expr *i, Expr *j)
{
	Expr *ix[2] = {i, j};
	return ir_load(&arena, b, 2, ix, S0);
}

static inline Stmt *store(Buffer *b, Expr *i, Expr *v) { return ir_store(&arena, b, 1, &i, v, S0); }

static inline Stmt *loop(Var *v, int64_t n, Stmt *body)
{
	return ir_for(&arena, v, i32(0), i32(n), FOR_SERIAL, body, S0);
}

static inline Stmt *seq2(Stmt *a, Stmt *b)
{
	Stmt *items[2] = {a, b};
	return ir_seq(&arena, 2, items, S0);
}

static inline Stmt *seq3(Stmt *a, Stmt *b, Stmt *c)
{
	Stmt *items[3] = {a, b, c};
	return ir_seq(&arena, 3, items, S0);
}

static inline Param pbuf(Buffer *b) { return (Param){PARAM_BUFFER, NULL, b}; }
static inline Param pscalar(Var *v) { return (Param){PARAM_SCALAR, v, NULL}; }

static inline Func *func1(Buffer *b, Stmt *body)
{
	Param p = pbuf(b);
	return ir_func(&arena, "f", 1, &p, body, S0);
}

static inline Func *func2(Buffer *a, Buffer *b, Stmt *body)
{
	Param p[2] = {pbuf(a), pbuf(b)};
	return ir_func(&arena, "f", 2, p, body, S0);
}

static inline Module *parse_text(const char *name, const char *text)
{
	DiagList d;
	diag_init(&d, &arena);
	Module *m = parse_module(&arena, source_from_string(&arena, name, text), &d);
	if (!m) {
		char *msg = diag_render(&d);
		ck_abort_msg("%s: parse failed:\n%s", name, msg);
	}
	return m;
}

/* One TCase of the suite's table: its name and up to 12 tests. */
typedef struct InterpCase {
	const char *name;
	const TTest *tests[12];
} InterpCase;

/* Add each case as a TCase with this file's fixture. */
static inline void interp_add_cases(Suite *s, const InterpCase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		/* the compiled form's sweep runs every fixture several times */
		tcase_set_timeout(tc, strcmp(cases[i].name, "compiled_form") == 0 ? 300 : 60);
		for (int k = 0; k < 12 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
}

/* test_interp_states.c: the states, generation, equiv and conformance
 * TCases. */
void interp_states_add_cases(Suite *s);

#endif
