/* tests/test_print.c — the printer: expression precedence and literal
 * spelling (table-driven), golden files under tests/data/print/ for
 * hand-built IR, capture-free renaming, and the round trip
 * parse -> print -> parse (structurally equal, printing idempotent) over
 * every conformance kernel, the golden files and the fuzz regressions. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ir.h"
#include "kernel/parse.h"
#include "kernel/print.h"
#include "tests/testutil.h"

static Arena arena;
static const Span nosp;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* ---------- small IR builders ---------- */

static Var *var(const char *name) { return ir_var(&arena, name, DT_INT32, nosp); }
static Var *var_t(const char *name, DType t) { return ir_var(&arena, name, t, nosp); }
static Expr *ref(Var *v) { return ir_varref(&arena, v, nosp); }
static Expr *lit(int64_t v) { return ir_int32(&arena, v); }
static Expr *lit_t(int64_t v, DType t) { return ir_int(&arena, v, t, nosp); }
static Expr *flt(double v) { return ir_float(&arena, v, DT_FLOAT32, nosp); }
static Expr *bin(BinOp op, Expr *x, Expr *y) { return ir_bin(&arena, op, x, y, nosp); }
static Expr *neg(Expr *x) { return ir_neg(&arena, x, nosp); }
static Expr *not_(Expr *x) { return ir_not(&arena, x, nosp); }

static Buffer *buffer(const char *name, DType t, int ndim, ...)
{
	Expr *shape[8];
	va_list ap;
	va_start(ap, ndim);
	for (int i = 0; i < ndim; i++)
		shape[i] = va_arg(ap, Expr *);
	va_end(ap);
	return ir_buffer(&arena, name, t, ndim, shape, nosp);
}

static Expr *load1(Buffer *b, Expr *i) { return ir_load(&arena, b, 1, &i, nosp); }

static Expr *load2(Buffer *b, Expr *i, Expr *j)
{
	Expr *idx[2] = {i, j};
	return ir_load(&arena, b, 2, idx, nosp);
}

static Stmt *store1(Buffer *b, Expr *i, Expr *v) { return ir_store(&arena, b, 1, &i, v, nosp); }

static Stmt *store2(Buffer *b, Expr *i, Expr *j, Expr *v)
{
	Expr *idx[2] = {i, j};
	return ir_store(&arena, b, 2, idx, v, nosp);
}

static Stmt *loop(Var *v, Expr *extent, ForKind k, Stmt *body)
{
	return ir_for(&arena, v, ir_int(&arena, 0, extent->dtype, nosp), extent,
		      k, body, nosp);
}

static Stmt *seq(int n, ...)
{
	Stmt *items[32];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		items[i] = va_arg(ap, Stmt *);
	va_end(ap);
	return ir_seq(&arena, n, items, nosp);
}

static Param pbuf(Buffer *b) { return (Param){PARAM_BUFFER, NULL, b}; }
static Param pscalar(Var *v) { return (Param){PARAM_SCALAR, v, NULL}; }

/* ---------- files ---------- */

/* Compare printed text with a golden file; VS_UPDATE_GOLDEN=1 rewrites
 * the file instead. */
static void assert_golden(const char *path, const char *text)
{
	if (getenv("VS_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");
		ck_assert_msg(f != NULL, "cannot write %s", path);
		fputs(text, f);
		fclose(f);
		return;
	}
	char *want = tu_read_file(path);
	ck_assert_msg(want != NULL, "missing golden file %s", path);
	ck_assert_msg(strcmp(want, text) == 0, "%s differs; printed:\n%s", path,
		      text);
	free(want);
}

static Module *parse_text(const char *name, const char *text, char **errors)
{
	Source *src = source_from_string(&arena, name, text);
	DiagList d;
	diag_init(&d, &arena);
	Module *m = parse_module(&arena, src, &d);
	*errors = diag_render(&d);
	return m;
}

/* parse(text) = m0; print(m0) parses to a module equal to m0 and prints
 * identically. Returns m0 (or NULL when text itself does not parse and
 * must_parse is false). */
static Module *assert_round_trip(const char *name, const char *text,
				 bool must_parse)
{
	char *errors;
	Module *m0 = parse_text(name, text, &errors);
	ck_assert_msg(m0 || !must_parse, "%s does not parse:\n%s", name, errors);
	free(errors);
	if (!m0)
		return NULL;
	char *p1 = print_module(m0);
	Module *m1 = parse_text("printed", p1, &errors);
	ck_assert_msg(m1 != NULL, "%s: printed text does not parse:\n%s\n%s",
		      name, errors, p1);
	free(errors);
	ck_assert_msg(ir_module_equal(m0, m1),
		      "%s: printed text parses to a different module:\n%s",
		      name, p1);
	char *p2 = print_module(m1);
	ck_assert_msg(strcmp(p1, p2) == 0,
		      "%s: printing is not idempotent:\n%s\n---\n%s", name, p1, p2);
	free(p1);
	free(p2);
	return m0;
}

/* ---------- expressions ---------- */

typedef struct ExprCase {
	Expr *e;
	const char *want;
} ExprCase;

static void check_cases(const ExprCase *cases, int n)
{
	for (int i = 0; i < n; i++) {
		char *got = print_expr(cases[i].e);
		ck_assert_msg(strcmp(got, cases[i].want) == 0,
			      "case %d: got '%s', want '%s'", i, got,
			      cases[i].want);
		free(got);
	}
}

START_TEST(expr_parentheses_follow_python_precedence)
{
	Expr *a = ref(var("a")), *b = ref(var("b")), *c = ref(var("c"));
	Var *pv = var_t("p", DT_BOOL), *qv = var_t("q", DT_BOOL);
	Expr *p = ref(pv), *q = ref(qv), *r = ref(var_t("r", DT_BOOL));
	const ExprCase cases[] = {
		{bin(OP_MUL, bin(OP_ADD, a, b), c), "(a + b) * c"},
		{bin(OP_ADD, a, bin(OP_MUL, b, c)), "a + b * c"},
		{bin(OP_SUB, bin(OP_SUB, a, b), c), "a - b - c"},
		{bin(OP_SUB, a, bin(OP_SUB, b, c)), "a - (b - c)"},
		{bin(OP_SUB, a, bin(OP_ADD, b, c)), "a - (b + c)"},
		{bin(OP_FLOORDIV, a, bin(OP_MUL, b, c)), "a // (b * c)"},
		{bin(OP_FLOORMOD, bin(OP_ADD, a, lit(2)), lit(8)), "(a + 2) % 8"},
		{bin(OP_MUL, bin(OP_FLOORDIV, a, lit(4)), lit(4)), "a // 4 * 4"},
		{bin(OP_LT, bin(OP_ADD, a, b), c), "a + b < c"},
		{bin(OP_EQ, bin(OP_LT, a, b), p), "(a < b) == p"},
		{bin(OP_EQ, p, bin(OP_LT, a, b)), "p == (a < b)"},
		{bin(OP_AND, bin(OP_LE, lit(0), a), bin(OP_LT, a, lit(16))),
		 "0 <= a and a < 16"},
		{bin(OP_OR, p, bin(OP_AND, q, r)), "p or q and r"},
		{bin(OP_AND, bin(OP_OR, p, q), r), "(p or q) and r"},
		{bin(OP_AND, p, bin(OP_AND, q, r)), "p and (q and r)"},
		{bin(OP_AND, bin(OP_AND, p, q), r), "p and q and r"},
		{not_(bin(OP_AND, p, q)), "not (p and q)"},
		{bin(OP_AND, not_(p), q), "not p and q"},
		{not_(bin(OP_EQ, a, b)), "not a == b"},
		{bin(OP_EQ, p, not_(q)), "p == (not q)"},
		{not_(not_(p)), "not not p"},
		{neg(bin(OP_ADD, a, b)), "-(a + b)"},
		{neg(bin(OP_MUL, a, b)), "-(a * b)"},
		{bin(OP_MUL, neg(a), b), "-a * b"},
		{neg(neg(a)), "- -a"},
		{neg(lit(5)), "-(5)"},
		{neg(lit(-5)), "-(-5)"},
		{neg(flt(1.5)), "-(1.5)"},
		{bin(OP_SUB, a, lit(-5)), "a - -5"},
		{bin(OP_MUL, lit(-1), a), "-1 * a"},
		{bin(OP_SUB, a, neg(b)), "a - -b"},
		{bin(OP_MIN, bin(OP_ADD, a, b), c), "T.min(a + b, c)"},
		{bin(OP_MAX, a, lit(0)), "T.max(a, 0)"},
		{ir_select(&arena, bin(OP_LT, a, b), a, b, nosp),
		 "T.if_then_else(a < b, a, b)"},
		{ir_cast(&arena, DT_FLOAT32, bin(OP_ADD, a, b), nosp),
		 "T.cast(a + b, \"float32\")"},
	};
	check_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}
END_TEST

START_TEST(expr_literals_read_back_exactly)
{
	Expr *n64 = ref(var_t("n", DT_INT64));
	Expr *x64 = ref(var_t("x", DT_FLOAT64));
	Expr *x = ref(var_t("y", DT_FLOAT32));
	const ExprCase cases[] = {
		{lit(0), "0"},
		{lit(-7), "-7"},
		{ir_bool(&arena, true), "True"},
		{ir_bool(&arena, false), "False"},
		{lit_t(5, DT_INT64), "T.int64(5)"},
		{lit_t(-5, DT_INT64), "T.int64(-5)"},
		{lit_t(200, DT_UINT8), "T.uint8(200)"},
		{lit_t(INT64_MIN, DT_INT64), "T.int64(-9223372036854775808)"},
		{flt(1.0), "1.0"},
		{flt(0.5), "0.5"},
		{flt(0.1), "0.1"},
		{flt(1e-3), "0.001"},
		{flt(1e-7), "1e-7"},
		{flt(1e20), "1e20"},
		{flt(123456.0), "123456.0"},
		{flt(1.0 / 3.0), "0.3333333333333333"},
		{flt(-2.5), "-2.5"},
		{flt(-0.0), "-0.0"},
		{flt(0.0), "0.0"},
		{flt(INFINITY), "T.float32(\"inf\")"},
		{flt(-INFINITY), "T.float32(\"-inf\")"},
		{flt(NAN), "T.float32(\"nan\")"},
		{ir_float(&arena, 1.5, DT_FLOAT64, nosp), "T.float64(1.5)"},
		{ir_float(&arena, -INFINITY, DT_FLOAT64, nosp),
		 "T.float64(\"-inf\")"},
		/* a literal beside a non-literal adapts: no constructor needed */
		{bin(OP_ADD, n64, lit_t(1, DT_INT64)), "n + 1"},
		{bin(OP_LT, lit_t(0, DT_INT64), n64), "0 < n"},
		{bin(OP_MUL, x64, ir_float(&arena, 0.5, DT_FLOAT64, nosp)),
		 "x * 0.5"},
		{bin(OP_ADD, lit_t(1, DT_INT64), lit_t(2, DT_INT64)),
		 "T.int64(1) + T.int64(2)"},
		{ir_undef(&arena, DT_INT32, nosp), "T.undef(dtype=\"int32\")"},
		{bin(OP_ADD, x, ir_undef(&arena, DT_FLOAT32, nosp)),
		 "y + T.undef()"},
		{bin(OP_ADD, ir_undef(&arena, DT_INT64, nosp), lit_t(1, DT_INT64)),
		 "T.undef() + T.int64(1)"},
	};
	check_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}
END_TEST

/* Every printed expression above also parses back to itself. */
START_TEST(expr_round_trips_through_the_parser)
{
	static const char *const texts[] = {
		"(a + b) * c", "a - (b - c)", "a - b - c", "a // (b * c)",
		"(a + 2) % 8", "(a < b) == (b < c)", "0 <= a and a < 16",
		"not (a < b and b < c)", "-(a + b)", "- -a", "-(5)", "-(-5)",
		"a - -5", "-1 * a", "-a * b", "T.min(a + b, c)",
		"T.if_then_else(a < b, a, -b)", "T.cast(a, \"float32\") / 3.0",
		"T.cast(a, \"float32\") * -0.0", "T.cast(a, \"float64\") + 0.1",
		"T.float32(\"-inf\")", "-T.float32(\"inf\")", "T.float64(1e-300)",
		"T.int64(5) + T.int64(2)", "T.cast(a, \"int64\") + 3",
		"T.if_then_else(a < 0, T.undef(), 2.5)",
		"T.undef(dtype=\"float32\") * 2.0", "a % 3 == b // 3",
		"not a == b or not b == c", "1e20 + 1e-7",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		char *src = NULL;
		StrBuf b = {0};
		sb_printf(&b,
			  "@T.prim_func\n"
			  "def f(a: T.int32, b: T.int32, c: T.int32):\n"
			  "    T.evaluate(%s)\n",
			  texts[i]);
		src = sb_take(&b);
		assert_round_trip(texts[i], src, true);
		free(src);
	}
}
END_TEST

/* ---------- statements: golden files ---------- */

/* The function of tests/data/print/kitchen_sink.tir, built by hand. */
static Func *kitchen_sink(void)
{
	Var *n = var("n"), *a = var_t("a", DT_HANDLE);
	Buffer *A = buffer("A", DT_INT32, 1, ref(n));
	Buffer *B = buffer("B", DT_INT32, 2, lit(4), lit(4));
	Buffer *C = buffer("C", DT_FLOAT32, 1, lit(14));
	Var *i = var("i"), *j = var("j"), *k = var("k");
	Stmt *grid = loop(i, lit(4), FOR_SERIAL,
			  loop(j, lit(4), FOR_SERIAL,
			       store2(B, ref(i), ref(j), lit(0))));
	Expr *ak = load1(A, ref(k));
	Stmt *branches = ir_if(
		&arena, bin(OP_LT, ak, lit(0)), store1(A, ref(k), neg(ak)),
		ir_if(&arena, bin(OP_EQ, ak, lit(0)), ir_eval(&arena, lit(0), nosp),
		      store1(A, ref(k), ir_undef(&arena, DT_INT32, nosp)), nosp),
		nosp);
	Stmt *offset = ir_for(&arena, k, lit(2), bin(OP_SUB, ref(n), lit(2)),
			      FOR_SERIAL, branches, nosp);
	Var *i2 = var("i"), *j2 = var("j");
	Expr *bij = load2(B, ref(i2), ref(j2));
	Stmt *par = loop(i2, lit(4), FOR_PARALLEL,
			 loop(j2, lit(4), FOR_VECTORIZED,
			      store2(B, ref(i2), ref(j2),
				     bin(OP_ADD, bin(OP_MUL, bij, lit(2)), lit(1)))));
	Var *x = var("x"), *u = var("u");
	Buffer *L = buffer("L", DT_FLOAT32, 1, lit(4));
	L->scope = SCOPE_LOCAL;
	Stmt *fill = loop(u, lit(4), FOR_UNROLLED,
			  store1(L, ref(u), flt(-INFINITY)));
	Stmt *alloc = ir_alloc(
		&arena, L,
		seq(2, fill,
		    store1(C, lit(0), bin(OP_MAX, load1(L, lit(0)), flt(1.5)))),
		nosp);
	Stmt *let = ir_letstmt(
		&arena, x,
		bin(OP_ADD, bin(OP_FLOORDIV, ref(n), lit(4)),
		    bin(OP_FLOORMOD, ref(n), lit(4))),
		seq(2,
		    ir_assume(&arena,
			      bin(OP_AND, bin(OP_LE, lit(0), ref(x)),
				  bin(OP_LT, ref(x), lit(16))),
			      nosp),
		    alloc),
		nosp);
	Stmt *block = ir_block(&arena, "compute", let, nosp);
	Var *f = var("f");
	Expr *fdiv = bin(OP_DIV, ir_cast(&arena, DT_FLOAT32, ref(f), nosp),
			 flt(3.0));
	Stmt *sel = loop(f, lit(14), FOR_SERIAL,
			 store1(C, ref(f),
				ir_select(&arena, bin(OP_LT, ref(f), lit(2)), fdiv,
					  ir_undef(&arena, DT_FLOAT32, nosp),
					  nosp)));
	Stmt *body = seq(6, grid, offset, par, block, sel, ir_pass(&arena, nosp));
	Param params[] = {{PARAM_HANDLE, a, A}, pbuf(B), pscalar(n), pbuf(C)};
	return ir_func(&arena, "kitchen_sink", 4, params, body, nosp);
}

START_TEST(func_prints_every_statement_kind)
{
	Func *f = kitchen_sink();
	char *text = print_func(f);
	assert_golden("tests/data/print/kitchen_sink.tir", text);
	/* the golden text parses back to the hand-built function */
	char *errors;
	Module *m = parse_text("kitchen_sink.tir", text, &errors);
	ck_assert_msg(m != NULL, "%s", errors);
	free(errors);
	ck_assert(ir_func_equal(f, m->funcs[0]));
	free(text);
}
END_TEST

START_TEST(module_prints_class_with_blank_line_between_functions)
{
	Buffer *A = buffer("A", DT_INT32, 1, lit(14));
	Buffer *B = buffer("B", DT_INT32, 2, lit(4), lit(4));
	Var *io = var("io"), *ii = var("ii");
	Expr *flat = bin(OP_ADD, bin(OP_MUL, lit(4), ref(io)), ref(ii));
	Stmt *s1 = loop(io, lit(4), FOR_SERIAL,
			loop(ii, lit(4), FOR_SERIAL,
			     ir_if(&arena, bin(OP_LT, flat, lit(14)),
				   store2(B, ref(io), ref(ii), load1(A, flat)),
				   NULL, nosp)));
	Param p1[] = {pbuf(A), pbuf(B)};
	Func *f1 = ir_func(&arena, "transform_A", 2, p1, s1, nosp);
	Buffer *B2 = buffer("B", DT_INT32, 2, lit(4), lit(4));
	Buffer *C = buffer("C", DT_INT32, 1, lit(1));
	Var *jo = var("io"), *ji = var("ii");
	Stmt *s2 = seq(2, store1(C, lit(0), lit(0)),
		       loop(jo, lit(4), FOR_SERIAL,
			    loop(ji, lit(4), FOR_SERIAL,
				 store1(C, lit(0),
					bin(OP_ADD, load1(C, lit(0)),
					    load2(B2, ref(jo), ref(ji)))))));
	Param p2[] = {pbuf(B2), pbuf(C)};
	Func *f2 = ir_func(&arena, "compute_C", 2, p2, s2, nosp);
	Func *fs[] = {f1, f2};
	Module *m = ir_module(&arena, "split_module", 2, fs, nosp);
	char *text = print_module(m);
	assert_golden("tests/data/print/module.tir", text);
	char *errors;
	Module *back = parse_text("module.tir", text, &errors);
	ck_assert_msg(back != NULL, "%s", errors);
	free(errors);
	ck_assert(ir_module_equal(m, back));
	free(text);

	/* a single function without a class name prints bare */
	Module *one = ir_module(&arena, NULL, 1, fs, nosp);
	char *t1 = print_module(one);
	char *t2 = print_func(f1);
	ck_assert_str_eq(t1, t2);
	ck_assert(strncmp(t1, "@T.prim_func\ndef transform_A(", 29) == 0);
	free(t1);
	free(t2);
}
END_TEST

START_TEST(stmt_forms_print_as_documented)
{
	Var *i = var("i"), *j = var("j"), *n = var_t("n", DT_INT64);
	Buffer *A = buffer("A", DT_INT32, 1, lit(16));
	Stmt *body = store1(A, ref(i), lit(1));
	struct {
		Stmt *s;
		const char *want;
	} cases[] = {
		{loop(i, lit(14), FOR_SERIAL, body),
		 "for i in T.serial(14):\n    A[i] = 1\n"},
		{ir_for(&arena, i, lit(2), lit(12), FOR_SERIAL, body, nosp),
		 "for i in T.serial(2, 14):\n    A[i] = 1\n"},
		{ir_for(&arena, i, ref(j), bin(OP_SUB, lit(16), ref(j)),
			FOR_PARALLEL, body, nosp),
		 "for i in T.parallel(j, 16):\n    A[i] = 1\n"},
		/* not hi - lo: re-reads as (j + 4) - j, the same range */
		{ir_for(&arena, i, ref(j), lit(4), FOR_VECTORIZED, body, nosp),
		 "for i in T.vectorized(j, j + 4):\n    A[i] = 1\n"},
		/* an end past int32 would re-read as an int64 literal */
		{ir_for(&arena, i, lit(2147483640), lit(20), FOR_SERIAL, body,
			nosp),
		 "for i in T.serial(2147483640, 2147483640 + 20):\n    A[i] = 1\n"},
		{loop(i, ref(n), FOR_UNROLLED, ir_pass(&arena, nosp)),
		 "for i in T.unroll(n):\n    pass\n"},
		{loop(i, lit(4), FOR_SERIAL, seq(0)),
		 "for i in T.serial(4):\n    pass\n"},
		/* an extent that uses the outer variable cannot join a grid */
		{loop(i, lit(4), FOR_SERIAL,
		      loop(j, ref(i), FOR_SERIAL, store1(A, ref(j), lit(0)))),
		 "for i in T.serial(4):\n    for j in T.serial(i):\n"
		 "        A[j] = 0\n"},
		{ir_if(&arena, bin(OP_LT, ref(i), lit(3)), body,
		       seq(1, ir_if(&arena, ir_bool(&arena, true), body, NULL,
				    nosp)),
		       nosp),
		 "if i < 3:\n    A[i] = 1\nelse:\n    if True:\n        A[i] = 1\n"},
		{store1(A, lit(0), ir_undef(&arena, DT_INT32, nosp)),
		 "A[0] = T.undef()\n"},
		{store1(A, lit(0), ir_undef(&arena, DT_FLOAT32, nosp)),
		 "A[0] = T.undef(dtype=\"float32\")\n"},
		{ir_assume(&arena, bin(OP_OR, ir_bool(&arena, false),
				       bin(OP_EQ, load1(A, lit(0)), lit(0))),
			   nosp),
		 "T.assume(False or A[0] == 0)\n"},
		{ir_block(&arena, "a \"q\"", ir_pass(&arena, nosp), nosp),
		 "with T.block(\"a \\\"q\\\"\"):\n    pass\n"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *got = print_stmt(cases[k].s, 0);
		ck_assert_msg(strcmp(got, cases[k].want) == 0,
			      "case %zu: got\n%s\nwant\n%s", k, got,
			      cases[k].want);
		free(got);
	}
	char *indented = print_stmt(body, 2);
	ck_assert_str_eq(indented, "        A[i] = 1\n");
	free(indented);
}
END_TEST

START_TEST(params_print_buffers_scalars_and_handles)
{
	Var *n = var_t("n", DT_INT64), *h = var_t("h", DT_HANDLE);
	Buffer *X = buffer("X", DT_FLOAT64, 2, ref(n), lit_t(4, DT_INT64));
	Buffer *S = buffer("S", DT_UINT8, 0);
	Buffer *H = buffer("H", DT_BOOL, 1, lit(3));
	H->scope = SCOPE_SHARED;
	Param ps[] = {pscalar(n), pbuf(X), pbuf(S), {PARAM_HANDLE, h, H}};
	Func *f = ir_func(&arena, "params", 4, ps, seq(0), nosp);
	char *text = print_func(f);
	ck_assert_str_eq(text,
			 "@T.prim_func\n"
			 "def params(n: T.int64, X: T.Buffer[(n, T.int64(4)), "
			 "\"float64\"], S: T.Buffer[(), \"uint8\"], h: T.handle):\n"
			 "    H = T.match_buffer(h, (3,), \"bool\", "
			 "scope=\"shared\")\n");
	free(text);
	/* a physical layout's axis separators, TVMScript's spelling */
	static int seps[] = {1};
	Buffer *P = buffer("P", DT_INT32, 3, lit(2), lit(4), lit(4));
	P->naxis_separators = 1;
	P->axis_separators = seps;
	Param pp[] = {pbuf(P)};
	Func *g = ir_func(&arena, "phys", 1, pp, ir_pass(&arena, nosp), nosp);
	text = print_func(g);
	ck_assert_str_eq(text, "@T.prim_func\n"
			       "def phys(P: T.Buffer((2, 4, 4), \"int32\", "
			       "axis_separators=[1])):\n"
			       "    pass\n");
	free(text);
}
END_TEST

/* ---------- names ---------- */

START_TEST(shadowing_names_are_renamed_so_nothing_is_captured)
{
	Var *outer = var("i"), *inner = var("i"), *x = var("x"), *x2 = var("x");
	Buffer *A = buffer("A", DT_INT32, 2, lit(4), lit(4));
	/* for i: for i': A[i, i'] = i ; a let x over a let x' */
	Stmt *s = loop(outer, lit(4), FOR_SERIAL,
		       ir_for(&arena, inner, lit(1), lit(3), FOR_SERIAL,
			      ir_letstmt(&arena, x, ref(outer),
					 ir_letstmt(&arena, x2,
						    bin(OP_ADD, ref(x), lit(1)),
						    store2(A, ref(outer), ref(inner),
							   bin(OP_ADD, ref(x), ref(x2))),
						    nosp),
					 nosp),
			      nosp));
	char *got = print_stmt(s, 0);
	ck_assert_str_eq(got, "for i in T.serial(4):\n"
			      "    for i_1 in T.serial(1, 4):\n"
			      "        x = i\n"
			      "        x_1 = x + 1\n"
			      "        A[i, i_1] = x + x_1\n");
	free(got);
	/* a loop variable named like a parameter or a keyword */
	Var *n = var("n"), *kw = var("lambda");
	Buffer *B = buffer("B", DT_INT32, 1, ref(n));
	Var *shadow = var("n");
	Stmt *body = seq(2,
			 loop(shadow, ref(n), FOR_SERIAL,
			      store1(B, ref(shadow), ref(n))),
			 loop(kw, lit(2), FOR_SERIAL, store1(B, ref(kw), lit(0))));
	Param ps[] = {pscalar(n), pbuf(B)};
	Func *f = ir_func(&arena, "names", 2, ps, body, nosp);
	char *text = print_func(f);
	ck_assert_str_eq(text, "@T.prim_func\n"
			       "def names(n: T.int32, B: T.Buffer[(n,), \"int32\"]):\n"
			       "    for n_1 in T.serial(n):\n"
			       "        B[n_1] = n\n"
			       "    for lambda_ in T.serial(2):\n"
			       "        B[lambda_] = 0\n");
	char *errors;
	Module *m = parse_text("names", text, &errors);
	ck_assert_msg(m != NULL, "%s", errors);
	free(errors);
	ck_assert(ir_func_equal(f, m->funcs[0]));
	free(text);
}
END_TEST

/* Parameters compare by name: a handle and its buffer may share one. */
START_TEST(parameters_keep_their_names)
{
	assert_round_trip("handle_named_like_buffer",
			  tu_fixture("print/handle_named_like_buffer.tir"), true);
	char *errors;
	Module *m = parse_text("t", tu_fixture("print/handle_bound_to_its_own_name.tir"), &errors);
	ck_assert_msg(m != NULL, "%s", errors);
	free(errors);
	char *text = print_module(m);
	ck_assert_str_eq(text, "@T.prim_func\n"
			       "def f(A: T.handle):\n"
			       "    A = T.match_buffer(A, (4,), \"int32\")\n"
			       "    B = T.alloc_buffer([4], \"int32\", scope=\"local\")\n"
			       "    A[0] = 0\n");
	free(text);
}
END_TEST

START_TEST(sibling_loops_keep_their_names)
{
	Var *i1 = var("i"), *i2 = var("i");
	Buffer *A = buffer("A", DT_INT32, 1, lit(4));
	Stmt *s = seq(2, loop(i1, lit(4), FOR_SERIAL, store1(A, ref(i1), lit(0))),
		      loop(i2, lit(4), FOR_SERIAL, store1(A, ref(i2), lit(1))));
	char *got = print_stmt(s, 1);
	ck_assert_str_eq(got, "    for i in T.serial(4):\n        A[i] = 0\n"
			      "    for i in T.serial(4):\n        A[i] = 1\n");
	free(got);
}
END_TEST

/* ---------- round trips over the shared cases ---------- */

static const char *shared_dir(void)
{
	const char *s = getenv("VS_SHARED");
	return s && *s ? s : "../shared";
}

static int round_trip_file(const char *path, bool must_parse)
{
	char *text = tu_read_file(path);
	if (!text)
		return 0;
	assert_round_trip(path, text, must_parse);
	free(text);
	return 1;
}

START_TEST(conformance_kernels_round_trip)
{
	char base[1024];
	snprintf(base, sizeof base, "%s/conformance", shared_dir());
	char **cases;
	int n = tu_list_dir(base, &cases);
	if (n == 0) {
		fprintf(stderr, "print: %s not found, round trip skipped\n", base);
		return;
	}
	int files = 0;
	for (int i = 0; i < n; i++) {
		static const char *const names[] = {"before.tir", "after.tir"};
		for (int k = 0; k < 2; k++) {
			char path[2048];
			snprintf(path, sizeof path, "%s/%s/%s", base, cases[i],
				 names[k]);
			files += round_trip_file(path, true);
		}
	}
	tu_free_list(cases, n);
	ck_assert_int_gt(files, 0);
}
END_TEST

START_TEST(golden_files_round_trip)
{
	char **names;
	int n = tu_list_dir("tests/data/print", &names);
	ck_assert_int_gt(n, 0);
	for (int i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "tests/data/print/%s", names[i]);
		round_trip_file(path, true);
	}
	tu_free_list(names, n);
}
END_TEST

/* Inputs the fuzzer once crashed or broke the round trip with: they must
 * parse or be rejected cleanly, and round-trip when they parse. */
START_TEST(fuzz_regressions_do_not_crash)
{
	char **names;
	int n = tu_list_dir("tests/data/fuzz-regressions", &names);
	ck_assert_int_gt(n, 0);
	for (int i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "tests/data/fuzz-regressions/%s",
			 names[i]);
		round_trip_file(path, false);
	}
	tu_free_list(names, n);
}
END_TEST

/* ---------- math calls ---------- */

static Expr *call(MathFn f, Expr *x, Expr *y, Expr *z)
{
	Expr *args[3] = {x, y, z};
	return ir_call(&arena, f, args, nosp);
}

START_TEST(math_calls_print_as_tvmscript)
{
	Expr *x = ref(var_t("x", DT_FLOAT32)), *d = ref(var_t("d", DT_FLOAT64));
	Expr *n = ref(var("n"));
	ExprCase cases[] = {
		{call(MF_EXP, x, NULL, NULL), "T.exp(x)"},
		{call(MF_SIGMOID, bin(OP_ADD, x, flt(1.0)), NULL, NULL), "T.sigmoid(x + 1.0)"},
		{call(MF_POW, x, flt(2.0), NULL), "T.pow(x, 2.0)"},
		{call(MF_FMA, x, x, flt(-0.5)), "T.fma(x, x, -0.5)"},
		{bin(OP_MUL, call(MF_ABS, n, NULL, NULL), lit(2)), "T.abs(n) * 2"},
		{neg(call(MF_TANH, d, NULL, NULL)), "-T.tanh(d)"},
		/* literal operands spell their dtype when no operand fixes it */
		{call(MF_SQRT, ir_float(&arena, 2.0, DT_FLOAT64, nosp), NULL, NULL),
		 "T.sqrt(T.float64(2.0))"},
		{call(MF_POW, ir_float(&arena, 2.0, DT_FLOAT64, nosp), d, NULL), "T.pow(2.0, d)"},
		{call(MF_ROUND, ir_undef(&arena, DT_FLOAT32, nosp), NULL, NULL),
		 "T.round(T.undef(dtype=\"float32\"))"},
	};
	check_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}
END_TEST

START_TEST(math_calls_round_trip_through_the_parser)
{
	static const char *const texts[] = {
		"T.exp(x) + T.log(x) * T.sqrt(x)", "T.pow(x, 2) - T.pow(2.5, x)",
		"T.fma(x, 0.5, -1)", "T.abs(a - b) // 2 + T.abs(-3)", "T.abs(x) < 1.0",
		"T.sigmoid(-x) + T.tanh(T.exp2(x))", "T.floor(x) + T.ceil(x) + T.round(x) + T.trunc(x)",
		"T.truncate(x)", "T.rsqrt(x) + T.erf(x) + T.sin(x) + T.cos(x)",
		"T.log2(d) + T.log10(d)", "T.exp(T.float64(1))", "T.exp(1)",
		"T.pow(d, T.undef())", "T.Cast(\"float32\", a) + T.exp(x)",
		"T.if_then_else(T.likely(a < b), 1, 2, dtype=\"float64\") + d",
		"T.shift_left(a, b) + T.shift_right(a - 1, 3)", "(a << 2) >> b < a + 1 << 3",
		"T.shift_left(T.int64(1), T.int64(40))", "T.shift_left(16, -a, dtype=\"int32\")",
		"T.let(y, a + 1, y * y) + T.let(y, x, T.let(z, y * 2.0, z + y))",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		StrBuf b = {0};
		sb_printf(&b,
			  "@T.prim_func\n"
			  "def f(a: T.int32, b: T.int32, x: T.float32, d: T.float64):\n"
			  "    T.evaluate(%s)\n",
			  texts[i]);
		char *src = sb_take(&b);
		assert_round_trip(texts[i], src, true);
		free(src);
	}
	assert_round_trip("print/math_calls.tir", tu_fixture("print/math_calls.tir"), true);
}
END_TEST

/* T.allocate_const prints as the allocation and its initialising stores,
 * which read back to the same kernel. */
START_TEST(allocate_const_round_trips_as_initialised_allocation)
{
	Module *m = assert_round_trip("interp/allocate_const.tir",
				      tu_fixture("interp/allocate_const.tir"), true);
	ck_assert_ptr_nonnull(m);
}
END_TEST

/* ---------- float16 ---------- */

/* A float16 literal prints through its constructor unless the parser
 * adapts it (beside a float16 operand), always with the value it was
 * written with (0.1, not the half 0.0999755859375: rounding belongs to
 * evaluation); float16 kernels, the TVM ones and the backend's, print
 * and parse back to the same module. */
START_TEST(float16_literals_print_and_kernels_round_trip)
{
	Expr *h = ref(var_t("h", DT_FLOAT16));
	const ExprCase cases[] = {
		{ir_float(&arena, 0.1, DT_FLOAT16, nosp), "T.float16(0.1)"},
		{ir_float(&arena, 65520.0, DT_FLOAT16, nosp), "T.float16(6.552e4)"},
		{ir_float(&arena, INFINITY, DT_FLOAT16, nosp), "T.float16(\"inf\")"},
		{ir_float(&arena, -0.0, DT_FLOAT16, nosp), "T.float16(-0.0)"},
		{bin(OP_MUL, h, ir_float(&arena, 0.1, DT_FLOAT16, nosp)), "h * 0.1"},
		{ir_cast(&arena, DT_FLOAT16, ref(var_t("x", DT_FLOAT32)), nosp),
		 "T.cast(x, \"float16\")"},
	};
	check_cases(cases, (int)(sizeof cases / sizeof cases[0]));
	assert_round_trip("h", "@T.prim_func\n"
			       "def f(A: T.Buffer[(2,), \"float16\"], h: T.float16):\n"
			       "    A[0] = h * 0.1 + T.float16(65520.0) - T.float16(\"-inf\")\n"
			       "    A[1] = T.exp(A[0] * 0.5, dtype=\"float16\") + T.float16(-0.0)\n",
			  true);
	assert_round_trip("set_dtype", tu_fixture("parse/float16_tvm_set_dtype.tir"), true);
	assert_round_trip("mixed_dtype", tu_fixture("parse/float16_tvm_mixed_dtype.tir"), true);
	assert_round_trip("backend", tu_fixture("backend/float16.tir"), true);
}
END_TEST

Suite *suite_print(void)
{
	Suite *s = suite_create("print");
	TCase *tc = tcase_create("expressions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, expr_parentheses_follow_python_precedence);
	tcase_add_test(tc, expr_literals_read_back_exactly);
	tcase_add_test(tc, expr_round_trips_through_the_parser);
	suite_add_tcase(s, tc);
	tc = tcase_create("statements");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, func_prints_every_statement_kind);
	tcase_add_test(tc, module_prints_class_with_blank_line_between_functions);
	tcase_add_test(tc, stmt_forms_print_as_documented);
	tcase_add_test(tc, params_print_buffers_scalars_and_handles);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, shadowing_names_are_renamed_so_nothing_is_captured);
	tcase_add_test(tc, parameters_keep_their_names);
	tcase_add_test(tc, sibling_loops_keep_their_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, math_calls_print_as_tvmscript);
	tcase_add_test(tc, math_calls_round_trip_through_the_parser);
	suite_add_tcase(s, tc);
	tc = tcase_create("allocate_const");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, allocate_const_round_trips_as_initialised_allocation);
	suite_add_tcase(s, tc);
	tc = tcase_create("float16");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, float16_literals_print_and_kernels_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("round_trip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, conformance_kernels_round_trip);
	tcase_add_test(tc, golden_files_round_trip);
	tcase_add_test(tc, fuzz_regressions_do_not_crash);
	suite_add_tcase(s, tc);
	return s;
}
