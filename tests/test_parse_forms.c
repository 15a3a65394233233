/* tests/test_parse_forms.c — the parse suite's later cases (suite_parse in
 * test_parse.c adds them): malformed inputs give the right message at the
 * right line and column, standalone expressions and lambdas resolve against
 * a function, and the later language forms (math calls, TVM's expression
 * forms, shifts, allocate_const, let expressions, float16) build the IR
 * they should. */
#include "tests/test_parse_int.h"

/* ---------- malformed input ---------- */

typedef struct ErrorCase {
	const char *text;
	const char *message; /* substring of the first diagnostic */
	int line, col;
} ErrorCase;

#define F1 "@T.prim_func\ndef f(A: T.Buffer[(4,), \"int32\"]):\n"
#define F2 "@T.prim_func\ndef f(A: T.Buffer[(4, 4), \"int32\"]):\n"

static const ErrorCase error_cases[] = {
	{F1 "    for i in T.serial(4)\n        A[i] = 0\n",
	 "expected ':' after for header", 3, 25},
	{F1 "    for i in T.serial(4):\n        Q[i] = 0\n", "unknown buffer 'Q'", 4, 9},
	{F1 "    A[0] = 1\n        A[1] = 2\n", "unexpected indent", 4, 9},
	{F1 "    if True:\n        A[0] = 1\n  A[1] = 2\n", "inconsistent dedent", 5, 3},
	{F1 "    T.evaluate(\"abc)\n", "unterminated string", 3, 16},
	{F1 "    A[0] = x + 1\n", "unknown name 'x'", 3, 12},
	{F1 "    for i in T.serial(4):\n        i[0] = 1\n", "not a buffer", 4, 9},
	{F2 "    A[0] = 1\n", "has 2 dimensions but 1 index", 3, 5},
	{"@T.prim_func\ndef f(A: T.Buffer[(4,), \"int33\"]):\n    pass\n",
	 "unknown dtype 'int33'", 2, 25},
	{F1 "    A[T.undef()] = 1\n", "T.undef() cannot be used in an index", 3, 7},
	{F1 "    A[0] = 7 / 2\n", "integer '/' is ambiguous: use '//'", 3, 12},
	{F1 "    A[0] = (1 + 2\n", "'(' was never closed", 3, 12},
	{F1 "    A[0] = 1 +\n", "expected an expression", 3, 15},
	{F1 "    for i, j in T.grid(4):\n        A[i] = j\n",
	 "T.grid has 1 extent but 2 loop variables", 3, 5},
	{F1 "    for i in T.foo(4):\n        A[i] = 0\n", "unknown loop kind 'T.foo'", 3, 14},
	{F1 "    if A[0]:\n        A[0] = 1\n", "must be a boolean expression", 3, 8},
	{F1 "    else:\n        A[0] = 1\n", "'else' without a matching 'if'", 3, 5},
	{F1 "    with T.block(\"b\"):\n    A[0] = 1\n", "expected an indented block", 4, 5},
	{F1 "    B = T.alloc_buffer([4], \"int32\", scope=\"texture\")\n",
	 "unknown scope 'texture'", 3, 44},
	{F1 "    B = T.alloc_buffer([4], \"int32\", scope=\"shared.dyn\")\n",
	 "scope 'shared.dyn' is not supported on CPU (GPU memory)", 3, 44},
	{F1 "    B = T.alloc_buffer([4], \"int32\", scope=\"wmma.accumulator\")\n",
	 "scope 'wmma.accumulator' is not supported on CPU", 3, 44},
	{F1 "    B = T.alloc_buffer([4], \"int32\", scope=\"warp\")\n",
	 "scope 'warp' is not supported on CPU", 3, 44},
	{F1 "    A[0] = T.frobnicate(1)\n", "unknown function 'T.frobnicate'", 3, 14},
	{"@T.prim_func\ndef f(a: T.handle):\n    pass\n",
	 "never bound by T.match_buffer", 2, 7},
	{"def f(A: T.Buffer[(4,), \"int32\"]):\n    pass\n",
	 "expected @T.prim_func or @I.ir_module", 1, 1},
	{"@T.prim_func\ndef f(A):\n    pass\n", "expected ':' after parameter name", 2, 8},
	{F1 "    A[0] = 1 $ 2\n", "unexpected character '$'", 3, 14},
	{F1 "    A[0] = 99999999999999999999\n", "does not fit in int64", 3, 12},
	{F1 "    A[0] = 1\n@T.prim_func\ndef g():\n    pass\n", "expected end of file", 4, 1},
	{"@T.prim_func\ndef f(A: T.Buffer[(4,), \"int32\"], A: T.int32):\n    pass\n",
	 "duplicate parameter 'A'", 2, 35},
	{F1 "    A[0] = A\n", "buffer 'A' used without indices", 3, 12},
	{F1 "    A[0] = 1]\n", "unmatched ']'", 3, 13},
	{F1 "    for i in T.serial(4):\n        A[i] = i\n    A[i] = 0\n", "unknown name 'i'", 5, 7},
	{F1 "    A[0] = T.cast(1, \"bfloat16\")\n", "unknown dtype 'bfloat16'", 3, 22},
	{F1 "    A[0] = 1.5 * 2.0\n", "cannot store a float32 value into int32", 3, 12},
	{"@I.ir_module\nclass M:\n    @T.prim_func\n    def f():\n        pass\n"
	 "    @T.prim_func\n    def f():\n        pass\n", "duplicate function 'f'", 7, 5},
	{F1 "    A[0] = 1 and 2\n", "operand of 'and' must be a boolean", 3, 12},
	{"", "found an empty file", 1, 1},
	{F1 "    x = 1\n    x += 1\n", "'+=' cannot update a variable", 4, 7},
	{F1 "    with T.block(\"b\")\n        pass\n", "expected ':' after with header", 3, 22},
	{F1 "    if A[0] > 0\n        pass\n", "expected ':' after if condition", 3, 16},
	{F1 "    A[0] = T.min(1, 2, 3)\n", "too many arguments to T.min", 3, 24},
	{F1 "    A[0] = 1\n    A[0] = 2 2\n", "expected end of line after statement", 4, 14},
	{"@T.prim_func\ndef f(a: T.handle):\n    A = T.match_buffer(a, (4,), \"int32\")\n"
	 "    B = T.match_buffer(a, (4,), \"int32\")\n", "already bound by T.match_buffer", 4, 5},
	/* found by the fuzzer: the printed T.match_buffer(A, ...) named the buffer */
	{"@T.prim_func\ndef f(a: T.handle, A: T.handle):\n    A = T.match_buffer(a, (4,), \"int32\")\n"
	 "    B = T.match_buffer(A, (4,), \"int32\")\n",
	 "buffer 'A' takes the name of another handle parameter, 'A'", 3, 5},
	{F1 "    for i in T.serial(4):\n        B = T.match_buffer(shape=(4,))\n",
	 "only allowed at the top level", 4, 9},
	{F1 "    A[0] = 0x\n", "invalid number literal", 3, 12},
	{F1 "    for i in T.serial(4):\n    A[0] = 0\n", "expected an indented block after for header", 4, 5},
	{"@T.prim_func\ndef f(A: T.Buffer[(4,), \"int32\"]):\n  A[0] = 1\n    A[1] = 1\n",
	 "unexpected indent", 4, 5},
	{F1 "    A[0] = T.undef(dtype=\"int3\")\n", "unknown dtype 'int3'", 3, 26},
	{F1 "    for i in T.serial(4.0):\n        pass\n", "a loop bound must be an integer", 3, 23},
	{F1 "    A[0] = (1 + 2))\n", "unmatched ')'", 3, 19},
	{F1 "    A[0] = (1 + 2]\n", "']' does not match '('", 3, 18},
	{"@T.prim_func\ndef f(A: T.Buffer[(4,), \"int8\"]):\n    A[0] = 300\n",
	 "300 does not fit in int8 buffer 'A'", 3, 12},
	{F1 "    A[0] = 1\n    B[0] = 2\n", "unknown buffer 'B'", 4, 5},
	{F1 "    A[0] = T.if_then_else(1, 2, 3)\n", "the condition must be a boolean", 3, 27},
	{F1 "    for i in T.serial(4):\n        A[i] = 1\n      A[0] = 2\n", "inconsistent dedent", 5, 7},
	/* found by a red-team audit: a tab after space-indented lines was
	 * read as 8 columns (inside the loop) where an editor may show 4 */
	{F1 "    for i in T.serial(4):\n        A[i] = 1\n\tA[0] = 2\n",
	 "inconsistent use of tabs and spaces in indentation", 5, 2},
	{F1 "    with T.block(\"b\\0c\"):\n        pass\n", "unknown escape sequence", 3, 20},
	{F1 "    with T.block(\"b\\ic\"):\n        pass\n", "unknown escape sequence", 3, 20},
	{"@T.prim_func\ndef f(A: T.Buffer[(-4,), \"int32\"]):\n    pass\n",
	 "a buffer extent cannot be negative", 2, 20},
	{F1 "    B = T.alloc_buffer([4, -1], \"int32\")\n", "a buffer extent cannot be negative", 3, 28},
};

START_TEST(malformed_input_reports_message_line_and_column)
{
	int n = (int)(sizeof error_cases / sizeof error_cases[0]);
	ck_assert_int_ge(n, 20);
	for (int i = 0; i < n; i++) {
		const ErrorCase *c = &error_cases[i];
		Module *m = parse_text(c->text);
		ck_assert_msg(m == NULL, "case %d parsed but should fail", i);
		ck_assert_msg(diags.first != NULL, "case %d: no diagnostic", i);
		const Diag *g = diags.first;
		ck_assert_msg(g->level == DIAG_ERROR, "case %d: not an error", i);
		ck_assert_msg(strstr(g->message, c->message) != NULL,
			      "case %d: message \"%s\" lacks \"%s\"", i, g->message,
			      c->message);
		ck_assert_msg(g->span.line == c->line && g->span.col == c->col,
			      "case %d (%s): at %d:%d, expected %d:%d", i, g->message,
			      g->span.line, g->span.col, c->line, c->col);
		ck_assert_ptr_nonnull(g->span.src);
	}
}
END_TEST

START_TEST(errors_render_with_file_line_and_caret)
{
	ck_assert_ptr_null(parse_text(F1 "    A[0] = x\n"));
	char *r = diag_render(&diags);
	ck_assert_str_eq(r, "k.tir:3:12: error: unknown name 'x'\n"
			    "        A[0] = x\n"
			    "               ^\n");
	free(r);
}
END_TEST

START_TEST(deep_nesting_is_an_error_not_a_crash)
{
	StrBuf b = {0};
	sb_puts(&b, F1 "    A[0] = ");
	for (int i = 0; i < 5000; i++)
		sb_puts(&b, "(");
	sb_puts(&b, "1");
	for (int i = 0; i < 5000; i++)
		sb_puts(&b, ")");
	sb_puts(&b, "\n");
	char *text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "nested too deeply"));
	free(text);

	sb_puts(&b, F1 "    T.assume(");
	for (int i = 0; i < 5000; i++)
		sb_puts(&b, "not ");
	sb_puts(&b, "True)\n");
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "nested too deeply"));
	free(text);

	sb_puts(&b, F1 "    A[0] = ");
	for (int i = 0; i < 5000; i++)
		sb_puts(&b, "- ");
	sb_puts(&b, "A[1]\n");
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	free(text);

	/* a long elif chain does not recurse in the parser; each elif
	 * nests the rest, so past IR_MAX_STMT_DEPTH it is refused (every
	 * later stage walks it recursively) */
	sb_puts(&b, F1 "    if A[0] == 0:\n        A[0] = 0\n");
	for (int i = 1; i < 50000; i++)
		sb_printf(&b, "    elif A[0] == %d:\n        A[0] = %d\n", i, i);
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "statements nested more than 1000 levels deep"));
	free(text);
	sb_puts(&b, F1 "    if A[0] == 0:\n        A[0] = 0\n");
	for (int i = 1; i < 900; i++)
		sb_printf(&b, "    elif A[0] == %d:\n        A[0] = %d\n", i, i);
	text = sb_take(&b);
	Module *m = parse_text(text);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->funcs[0]->body->kind, ST_IF);
	Module *m2 = parse_text(text);
	ck_assert(ir_module_equal(m, m2));
	ck_assert_uint_eq(ir_stmt_hash(m->funcs[0]->body),
			  ir_stmt_hash(m2->funcs[0]->body));
	free(text);

	/* each let nests the rest of its list: their number is bounded */
	sb_puts(&b, F1);
	for (int i = 0; i < 10001; i++)
		sb_puts(&b, "    x = 1\n");
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "too many let bindings"));
	ck_assert_int_eq(diags.first->span.line, 10003);
	free(text);

	/* one chain of 4000 operators is 4000 levels deep: refused at the
	 * expression, where simplify and the backend crashed */
	sb_puts(&b, F1 "    A[0] = A[1]");
	for (int i = 0; i < 3999; i++)
		sb_puts(&b, " + A[1]");
	sb_puts(&b, "\n");
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "an expression nested more than 1000 levels deep"));
	ck_assert_int_eq(diags.first->span.line, 3);
	free(text);
	/* 1500 lets nest 1500 statements */
	sb_puts(&b, F1);
	for (int i = 0; i < 1500; i++)
		sb_puts(&b, "    x = 1\n");
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "statements nested more than 1000 levels deep"));
	free(text);

	/* 200 nested loops exceed the indentation limit */
	sb_puts(&b, F1);
	for (int i = 0; i < 200; i++) {
		for (int k = 0; k <= i; k++)
			sb_puts(&b, " ");
		sb_puts(&b, "for i in T.serial(2):\n");
	}
	text = sb_take(&b);
	ck_assert_ptr_null(parse_text(text));
	free(text);
}
END_TEST

/* Every prefix of a conformance kernel, and single-byte corruptions of
 * it, parse or fail cleanly (run under ASan to catch bad reads). */
static void mutate_file(const char *path)
{
	char *text = tu_read_file(path);
	ck_assert_ptr_nonnull(text);
	size_t n = strlen(text);
	char *buf = malloc(n + 1);
	static const char junk[] = "([{:)]}\n\t #\"'\\-.0e@";
	for (size_t cut = 0; cut <= n; cut += 3) {
		memcpy(buf, text, cut);
		buf[cut] = 0;
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		Module *m = parse_module(&a, source_from_string(&a, "m.tir", buf), &d);
		ck_assert(m != NULL || d.nerrors > 0);
		arena_free(&a);
	}
	for (size_t pos = 0; pos < n; pos += 7) {
		memcpy(buf, text, n + 1);
		buf[pos] = junk[pos % (sizeof junk - 1)];
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		Module *m = parse_module(&a, source_from_string(&a, "m.tir", buf), &d);
		ck_assert(m != NULL || d.nerrors > 0);
		arena_free(&a);
	}
	free(buf);
	free(text);
}

START_TEST(truncated_and_corrupted_inputs_fail_cleanly)
{
	ck_assert_int_ge(for_each_case_file("before.tir", mutate_file), 20);
}
END_TEST

/* ---------- standalone expressions and lambdas ---------- */

static const char *scope_func_text = "parse/scope_func_text.tir";

START_TEST(parse_expr_range_resolves_function_buffers)
{
	Func *f = func_ok(tu_fixture(scope_func_text));
	ParseScope sc = {.func = f, .nvars = 0, .vars = NULL};
	const char *text = "pad = A[3] + n * L[0] # tail";
	Source *src = source_from_string(&arena, "s.sched", text);
	int start = 6, end = 21; /* "A[3] + n * L[0]" */
	diag_init(&diags, &arena);
	Expr *e = parse_expr_range(&arena, src, start, end, &sc, &diags);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->u.bin.op, OP_ADD);
	ck_assert_int_eq(e->u.bin.a->kind, EX_LOAD);
	ck_assert_ptr_eq(e->u.bin.a->u.load.buf, f->params[0].buf);
	Expr *mul = e->u.bin.b;
	ck_assert_ptr_eq(mul->u.bin.a->u.var, f->params[1].var);
	ck_assert_str_eq(mul->u.bin.b->u.load.buf->name, "L");
	ck_assert_int_eq(mul->u.bin.b->u.load.buf->scope, SCOPE_LOCAL);
	/* spans stay relative to the whole source */
	ck_assert_int_eq(e->span.line, 1);
	ck_assert_int_eq(e->span.col, 7);
	/* a match_buffer'ed buffer is visible too */
	const char *t2 = "H[1, 2]";
	Expr *h = parse_expr_range(&arena, source_from_string(&arena, "x", t2), 0,
				   7, &sc, &diags);
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_eq(h->u.load.buf, f->params[2].buf);
	ck_assert_int_eq(h->dtype, DT_FLOAT32);
}
END_TEST

START_TEST(parse_expr_range_reports_errors_in_place)
{
	Func *f = func_ok(tu_fixture(scope_func_text));
	ParseScope sc = {.func = f, .nvars = 0, .vars = NULL};
	Source *src = source_from_string(&arena, "s.sched",
					 "sch.x(\n  pad_value=Q[0] + 1)\n");
	Expr *e = parse_expr_range(&arena, src, 19, 27, &sc, &diags);
	ck_assert_ptr_null(e);
	ck_assert_ptr_nonnull(strstr(diags.first->message, "unknown buffer 'Q'"));
	ck_assert_int_eq(diags.first->span.line, 2);
	ck_assert_int_eq(diags.first->span.col, 13);
	diag_init(&diags, &arena);
	ck_assert_ptr_null(parse_expr_range(&arena, src, 0, 5000, &sc, &diags));
	ck_assert_int_eq(diags.nerrors, 1);
	Source *s2 = source_from_string(&arena, "x", "1 + 2 3");
	diag_init(&diags, &arena);
	ck_assert_ptr_null(parse_expr_range(&arena, s2, 0, 7, &sc, &diags));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "unexpected number '3'"));
}
END_TEST

START_TEST(parse_expr_range_uses_extra_vars_first)
{
	Var *v = ir_var(&arena, "n", DT_INT64, (Span){0});
	Func *f = func_ok(tu_fixture(scope_func_text));
	ParseScope sc = {.func = f, .nvars = 1, .vars = &v};
	Source *src = source_from_string(&arena, "x", "n + 1");
	Expr *e = parse_expr_range(&arena, src, 0, 5, &sc, &diags);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_eq(e->u.bin.a->u.var, v);
	ck_assert_int_eq(e->dtype, DT_INT64);
	/* without a function: only the vars */
	ParseScope bare = {.func = NULL, .nvars = 1, .vars = &v};
	ck_assert_ptr_nonnull(parse_expr_range(&arena, src, 0, 5, &bare, &diags));
	ck_assert_ptr_nonnull(parse_expr_range(&arena, source_from_string(&arena, "x", "2 * 3"),
					       0, 5, NULL, &diags));
}
END_TEST

START_TEST(lambda_with_axis_separator)
{
	const char *text = "index_map=lambda n, h, w, c: [n, c // 4, h, T.axis_separator, w, c % 4])";
	Source *src = source_from_string(&arena, "s.sched", text);
	int start = 10, end = (int)strlen(text) - 1;
	Lambda *l = parse_lambda_range(&arena, src, start, end, NULL, &diags);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(l->nparams, 4);
	ck_assert_str_eq(l->params[3]->name, "c");
	ck_assert_int_eq(l->params[0]->dtype, DT_INT32);
	ck_assert(l->bracketed);
	ck_assert_int_eq(l->nbody, 5);
	ck_assert_int_eq(l->nseps, 1);
	ck_assert_int_eq(l->seps[0], 3);
	ck_assert_int_eq(l->body[1]->u.bin.op, OP_FLOORDIV);
	ck_assert_ptr_eq(l->body[1]->u.bin.a->u.var, l->params[3]);
	ck_assert_int_eq(l->body[4]->u.bin.op, OP_FLOORMOD);
	ck_assert_int_eq(l->span.col, 11);
}
END_TEST

START_TEST(lambda_single_expression_and_buffer_reads)
{
	Func *f = func_ok(tu_fixture(scope_func_text));
	ParseScope sc = {.func = f, .nvars = 0, .vars = NULL};
	Source *src = source_from_string(&arena, "x", "lambda io, ii: A[4 * io + ii] + n");
	Lambda *l = parse_lambda_range(&arena, src, 0, (int)strlen(src->text), &sc,
				       &diags);
	ck_assert_ptr_nonnull(l);
	ck_assert(!l->bracketed);
	ck_assert_int_eq(l->nbody, 1);
	ck_assert_int_eq(l->nseps, 0);
	ck_assert_ptr_eq(l->body[0]->u.bin.a->u.load.buf, f->params[0].buf);
	/* lambda parameters shadow the function's names */
	Source *s2 = source_from_string(&arena, "x", "lambda n: [n // 8, n % 8]");
	Lambda *l2 = parse_lambda_range(&arena, s2, 0, (int)strlen(s2->text), &sc,
					&diags);
	ck_assert_ptr_nonnull(l2);
	ck_assert_ptr_eq(l2->body[0]->u.bin.a->u.var, l2->params[0]);
	Source *s3 = source_from_string(&arena, "x", "lambda i: [(i + 2) // 8, (i + 2) % 8,]");
	Lambda *l3 = parse_lambda_range(&arena, s3, 0, (int)strlen(s3->text), &sc,
					&diags);
	ck_assert_ptr_nonnull(l3);
	ck_assert_int_eq(l3->nbody, 2);
}
END_TEST

START_TEST(lambda_errors)
{
	static const struct { const char *text, *msg; int col; } cases[] = {
		{"lambda i [i]", "expected ':' after lambda parameters", 10},
		{"i: [i]", "expected 'lambda'", 1},
		{"lambda i, i: [i]", "duplicate lambda parameter 'i'", 11},
		{"lambda i: [i, j]", "unknown name 'j'", 15},
		{"lambda i: i + T.axis_separator", "only allowed in the index list", 15},
		{"lambda i: [T.axis_separator(1)]", "unknown function 'T.axis_separator'", 14},
		{"lambda i: [i] + 1", "unexpected '+'", 15},
		{"lambda i: [i // 4, i % 4", "'[' was never closed", 11},
		{"lambda i: [T.axis_separator, i]", "must stand between two indices", 12},
		{"lambda i: [i, T.axis_separator]", "must stand between two indices", 15},
		{"lambda i: [i // 4, T.axis_separator, T.axis_separator, i % 4]",
		 "must stand between two indices", 38},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		diag_init(&diags, &arena);
		Source *src = source_from_string(&arena, "x", cases[k].text);
		Lambda *l = parse_lambda_range(&arena, src, 0, (int)strlen(src->text),
					       NULL, &diags);
		ck_assert_msg(l == NULL, "lambda case %zu parsed", k);
		ck_assert_msg(strstr(diags.first->message, cases[k].msg) != NULL,
			      "lambda case %zu: %s", k, diags.first->message);
		ck_assert_msg(diags.first->span.col == cases[k].col,
			      "lambda case %zu: col %d", k, diags.first->span.col);
	}
}
END_TEST

/* ---------- math calls and TVM's expression forms ---------- */

START_TEST(math_calls_build_typed_call_nodes)
{
	Expr *e = stored_value("    B[0, 0] = T.exp(B[1, 1])\n");
	ck_assert_int_eq(e->kind, EX_CALL);
	ck_assert_int_eq(e->u.call.fn, MF_EXP);
	ck_assert_int_eq(e->u.call.nargs, 1);
	ck_assert_int_eq(e->dtype, DT_FLOAT32);
	ck_assert_int_eq(e->u.call.args[0]->kind, EX_LOAD);
	/* every name, with its operand count */
	static const struct { const char *call; MathFn fn; int n; } names[] = {
		{"T.exp(x)", MF_EXP, 1}, {"T.exp2(x)", MF_EXP2, 1}, {"T.log(x)", MF_LOG, 1},
		{"T.log2(x)", MF_LOG2, 1}, {"T.log10(x)", MF_LOG10, 1}, {"T.sqrt(x)", MF_SQRT, 1},
		{"T.rsqrt(x)", MF_RSQRT, 1}, {"T.abs(x)", MF_ABS, 1}, {"T.tanh(x)", MF_TANH, 1},
		{"T.sigmoid(x)", MF_SIGMOID, 1}, {"T.erf(x)", MF_ERF, 1}, {"T.sin(x)", MF_SIN, 1},
		{"T.cos(x)", MF_COS, 1}, {"T.floor(x)", MF_FLOOR, 1}, {"T.ceil(x)", MF_CEIL, 1},
		{"T.round(x)", MF_ROUND, 1}, {"T.trunc(x)", MF_TRUNC, 1},
		{"T.truncate(x)", MF_TRUNC, 1}, {"T.pow(x, x)", MF_POW, 2},
		{"T.fma(x, x, x)", MF_FMA, 3},
	};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		char *lines = arena_printf(&arena, "    x = C[1]\n    C[0] = %s\n", names[k].call);
		Stmt *let = body_ok(lines);
		ck_assert_int_eq(let->kind, ST_LET);
		Expr *c = let->u.let.body->u.store.value;
		ck_assert_msg(c->kind == EX_CALL && c->u.call.fn == names[k].fn &&
			      c->u.call.nargs == names[k].n && c->dtype == DT_FLOAT64,
			      "%s", names[k].call);
	}
}
END_TEST

START_TEST(math_call_operands_take_one_dtype)
{
	/* an integer literal operand of a float function converts */
	Expr *p = stored_value("    B[0, 0] = T.pow(B[1, 1], 2)\n");
	ck_assert_int_eq(p->u.call.args[1]->kind, EX_FLOAT);
	ck_assert_int_eq(p->u.call.args[1]->dtype, DT_FLOAT32);
	ck_assert(p->u.call.args[1]->u.fval == 2.0);
	/* the first non-literal operand decides, wherever it stands */
	Expr *f = stored_value("    C[0] = T.fma(2, 0.5, C[1])\n");
	ck_assert_int_eq(f->dtype, DT_FLOAT64);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(f->u.call.args[i]->dtype, DT_FLOAT64);
	/* all literals: float32, or the dtype a literal spells */
	Expr *l = stored_value("    B[0, 0] = T.exp(1)\n");
	ck_assert_int_eq(l->dtype, DT_FLOAT32);
	ck_assert_int_eq(l->u.call.args[0]->kind, EX_FLOAT);
	Expr *l64 = stored_value("    C[0] = T.sqrt(T.float64(2))\n");
	ck_assert_int_eq(l64->dtype, DT_FLOAT64);
	/* TVM's dtype= names the dtype the operands have */
	Expr *tv = stored_value("    B[0, 0] = T.sqrt(B[1, 1], dtype=\"float32\")\n");
	ck_assert_int_eq(tv->kind, EX_CALL);
	ck_assert_int_eq(tv->dtype, DT_FLOAT32);
	Expr *tl = stored_value("    C[0] = T.exp(1, dtype=\"float64\")\n");
	ck_assert_int_eq(tl->dtype, DT_FLOAT64);
	ck_assert_int_eq(tl->u.call.args[0]->dtype, DT_FLOAT64);
	/* T.abs on integers stays integer */
	Expr *a = stored_value("    A[0] = T.abs(A[1] - n)\n");
	ck_assert_int_eq(a->kind, EX_CALL);
	ck_assert_int_eq(a->dtype, DT_INT32);
	Expr *a8 = stored_value("    A[0] = T.abs(-3)\n");
	ck_assert_int_eq(a8->dtype, DT_INT32);
	/* a bare T.undef() takes the call's dtype */
	Expr *u = stored_value("    C[0] = T.pow(C[1], T.undef())\n");
	ck_assert_int_eq(u->u.call.args[1]->kind, EX_UNDEF);
	ck_assert_int_eq(u->u.call.args[1]->dtype, DT_FLOAT64);
}
END_TEST

START_TEST(math_call_errors_are_positioned)
{
	static const struct { const char *line, *msg; int col; } cases[] = {
		{"    B[0, 0] = T.exp(n)\n", "T.exp expects a float operand, not int32", 15},
		{"    B[0, 0] = T.sqrt(A[0] > 1)\n", "T.sqrt expects a float operand, not bool", 15},
		{"    A[0] = T.abs(A[0] > 1)\n", "T.abs expects a float or integer operand, not bool", 12},
		{"    B[0, 0] = T.pow(B[0, 0])\n", "T.pow expects 2 arguments, got 1", 28},
		{"    B[0, 0] = T.exp(B[0, 0], B[0, 1])\n", "too many arguments to T.exp", 30},
		{"    B[0, 0] = T.fma(B[0, 0], C[0], B[0, 1])\n",
		 "operand of T.fma is float64, expected float32", 30},
		{"    B[0, 0] = T.pow(B[0, 0], n)\n", "operand of T.pow is int32, expected float32", 30},
		{"    B[0, 0] = T.expm1(B[0, 0])\n", "unknown function 'T.expm1'", 17},
		{"    B[0, 0] = T.exp(B[0, 0], base=2)\n", "unexpected argument 'base'", 35},
		{"    B[0, 0] = T.exp(B[0, 0], dtype=\"float64\")\n",
		 "operand of T.exp is float32, expected float64", 21},
		{"    B[0, 0] = T.exp(n, dtype=\"int32\")\n", "T.exp expects a float operand, not int32", 15},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *text = arena_printf(&arena, "%s%s", HDR, cases[k].line);
		ck_assert_msg(parse_text(text) == NULL, "case %zu parsed", k);
		const Diag *g = diags.first;
		ck_assert_msg(strstr(g->message, cases[k].msg) != NULL, "case %zu: %s", k,
			      g->message);
		ck_assert_msg(g->span.line == 3 && g->span.col == cases[k].col,
			      "case %zu (%s): at %d:%d", k, g->message, g->span.line, g->span.col);
	}
}
END_TEST

START_TEST(tvm_cast_select_dtype_and_likely)
{
	/* T.Cast with TVM's order: dtype first */
	Stmt *casts = body_ok("    B[0, 0] = T.Cast(\"float32\", n)\n"
			      "    B[0, 0] = T.Cast(n, \"float32\")\n"
			      "    B[0, 0] = T.cast(n, dtype=\"float32\")\n");
	Expr *c = casts->u.seq.items[0]->u.store.value;
	ck_assert_int_eq(c->kind, EX_CAST);
	ck_assert_int_eq(c->dtype, DT_FLOAT32);
	ck_assert_int_eq(c->u.un.a->kind, EX_VAR);
	ck_assert(ir_expr_equal(c, casts->u.seq.items[1]->u.store.value));
	ck_assert(ir_expr_equal(c, casts->u.seq.items[2]->u.store.value));
	/* dtype= on T.if_then_else converts both values */
	Expr *s = stored_value("    C[0] = T.if_then_else(n > 0, 1, 2, dtype=\"float64\")\n");
	ck_assert_int_eq(s->kind, EX_SELECT);
	ck_assert_int_eq(s->dtype, DT_FLOAT64);
	ck_assert_int_eq(s->u.sel.a->kind, EX_FLOAT);
	ck_assert_int_eq(s->u.sel.a->dtype, DT_FLOAT64);
	ck_assert_int_eq(s->u.sel.b->dtype, DT_FLOAT64);
	Expr *si = stored_value("    C[0] = T.if_then_else(n > 0, n, A[0], dtype=\"float64\")\n");
	ck_assert_int_eq(si->u.sel.a->kind, EX_CAST);
	ck_assert_int_eq(si->u.sel.a->dtype, DT_FLOAT64);
	/* T.likely(c) is c */
	Stmt *st = body_ok("    if T.likely(n > 0):\n        A[0] = 1\n");
	ck_assert_int_eq(st->kind, ST_IF);
	ck_assert_int_eq(st->u.cond.cond->kind, EX_BIN);
	ck_assert_int_eq(st->u.cond.cond->u.bin.op, OP_GT);
	Stmt *st2 = body_ok("    if T.likely(n > 0, dtype=\"bool\"):\n        A[0] = 1\n");
	ck_assert_int_eq(st2->u.cond.cond->kind, EX_BIN);
	ck_assert_int_eq(st2->u.cond.cond->u.bin.op, OP_GT);
	static const struct { const char *line, *msg; int col; } bad[] = {
		{"    if T.likely(n):\n        A[0] = 1\n",
		 "the operand of T.likely must be a boolean expression, not int32", 17},
		{"    if T.likely(n > 0, dtype=\"int32\"):\n        A[0] = 1\n",
		 "T.likely is a boolean, not int32", 30},
		{"    C[0] = T.if_then_else(n > 0, 1, 2, dtype=\"float\")\n", "unknown dtype 'float'", 46},
		{"    B[0, 0] = T.Cast(\"float32\")\n", "T.Cast expects a value and a dtype", 15},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		char *text = arena_printf(&arena, "%s%s", HDR, bad[k].line);
		ck_assert_msg(parse_text(text) == NULL, "case %zu parsed", k);
		const Diag *g = diags.first;
		ck_assert_msg(strstr(g->message, bad[k].msg) != NULL, "case %zu: %s", k, g->message);
		ck_assert_msg(g->span.line == 3 && g->span.col == bad[k].col,
			      "case %zu (%s): at %d:%d", k, g->message, g->span.line, g->span.col);
	}
}
END_TEST

/* ---------- float16 ---------- */

#define HDR16                                                                  \
	"@T.prim_func\n"                                                       \
	"def f(A: T.Buffer[(4,), \"float16\"], x: T.float16, C: T.Buffer[(2,), \"float64\"]):\n"

/* "float16" names a dtype everywhere a dtype goes: buffers, scalar
 * parameters, T.float16(...) constructors, casts; a bare literal beside a
 * float16 operand adapts to float16 (keeping its exact text value: it is
 * rounded where it is evaluated). */
START_TEST(float16_is_a_dtype_with_constructors_and_adapting_literals)
{
	Func *f = func_ok(HDR16 "    A[0] = A[1] * 0.1 + x\n"
			  "    A[1] = T.float16(1)\n"
			  "    A[2] = T.float16(\"-inf\")\n"
			  "    A[3] = T.cast(C[0], \"float16\") + T.float16(C[1])\n"
			  "    C[0] = T.cast(A[0], \"float64\") + A[1]\n");
	ck_assert_int_eq(f->params[0].buf->dtype, DT_FLOAT16);
	ck_assert_int_eq(f->params[1].var->dtype, DT_FLOAT16);
	Stmt *s = f->body;
	ck_assert_int_eq(s->kind, ST_SEQ);
	Expr *sum = s->u.seq.items[0]->u.store.value;
	ck_assert_int_eq(sum->dtype, DT_FLOAT16);
	Expr *tenth = sum->u.bin.a->u.bin.b;
	ck_assert_int_eq(tenth->kind, EX_FLOAT);
	ck_assert_int_eq(tenth->dtype, DT_FLOAT16);
	ck_assert(tenth->u.fval == 0.1);
	Expr *one = s->u.seq.items[1]->u.store.value;
	ck_assert_int_eq(one->kind, EX_FLOAT);
	ck_assert_int_eq(one->dtype, DT_FLOAT16);
	Expr *ninf = s->u.seq.items[2]->u.store.value;
	ck_assert(ninf->dtype == DT_FLOAT16 && isinf(ninf->u.fval) && ninf->u.fval < 0);
	Expr *casts = s->u.seq.items[3]->u.store.value;
	ck_assert_int_eq(casts->u.bin.a->kind, EX_CAST);
	ck_assert_int_eq(casts->u.bin.b->kind, EX_CAST);
	ck_assert_int_eq(casts->u.bin.b->dtype, DT_FLOAT16);
	/* float16 beside float64 widens to float64 */
	Expr *wide = s->u.seq.items[4]->u.store.value;
	ck_assert_int_eq(wide->dtype, DT_FLOAT64);
	ck_assert_int_eq(wide->u.bin.b->kind, EX_CAST);
	/* a string other than inf/nan is a positioned error */
	ck_assert_ptr_null(parse_text(HDR16 "    A[0] = T.float16(\"big\")\n"));
	ck_assert_int_eq(diags.first->span.line, 3);
	ck_assert_int_eq(diags.first->span.col, 22);
	ck_assert_ptr_nonnull(strstr(diags.first->message, "expected \"inf\""));
}
END_TEST

/* TVM's float16 test kernels, pasted: tir-schedule's set_dtype (a float16
 * intermediate buffer between float32 ones) and reindex's mixed_dtype (a
 * float16 matmul with T.float16(0) as its init). */
START_TEST(float16_tvm_kernels_parse)
{
	Func *f = func_ok(tu_fixture("parse/float16_tvm_set_dtype.tir"));
	ck_assert_str_eq(f->name, "element_wise_set_dtype");
	Func *g = func_ok(tu_fixture("parse/float16_tvm_mixed_dtype.tir"));
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(g->params[i].buf->dtype, DT_FLOAT16);
}
END_TEST

/* T.shift_left / T.shift_right (TVM's dtype= converts the operands) and
 * Python's << / >>, which bind looser than + and tighter than <. */
START_TEST(shifts_parse_as_shift_operators)
{
	Expr *e = stored_value("    A[0] = T.shift_left(A[1], n, dtype=\"int32\")\n");
	ck_assert(e->kind == EX_BIN && e->u.bin.op == OP_SHL && e->dtype == DT_INT32);
	e = stored_value("    A[0] = T.shift_right(A[1], 2)\n");
	ck_assert(e->kind == EX_BIN && e->u.bin.op == OP_SHR);
	/* 1 + 2 << n + 1 is (1 + 2) << (n + 1) */
	e = stored_value("    A[0] = 1 + 2 << n + 1\n");
	ck_assert(e->kind == EX_BIN && e->u.bin.op == OP_SHL);
	ck_assert_int_eq(e->u.bin.a->u.bin.op, OP_ADD);
	ck_assert_int_eq(e->u.bin.b->u.bin.op, OP_ADD);
	/* a < b >> 1 compares with the shift */
	Stmt *s = body_ok("    if A[0] < A[1] >> 1:\n        A[0] = 0\n");
	ck_assert_int_eq(s->u.cond.cond->u.bin.op, OP_LT);
	ck_assert_int_eq(s->u.cond.cond->u.bin.b->u.bin.op, OP_SHR);
}
END_TEST

START_TEST(shift_errors_are_positioned)
{
	static const struct { const char *line, *msg; int col; } cases[] = {
		{"    B[0, 0] = T.shift_left(B[0, 1], 2)\n", "'<<' shifts integers, not float32", 15},
		{"    B[0, 0] = B[0, 1] >> 2\n", "'>>' shifts integers, not float32", 15},
		{"    A[0] = T.shift_left(A[1])\n", "T.shift_left expects 2 arguments, got 1", 29},
		{"    A[0] = T.shift_right(A[1], 1, dtype=\"float32\")\n",
		 "T.shift_right is an integer operation, not float32", 41},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *text = arena_printf(&arena, "%s%s", HDR, cases[k].line);
		ck_assert_msg(parse_text(text) == NULL, "case %zu parsed", k);
		const Diag *g = diags.first;
		ck_assert_msg(strstr(g->message, cases[k].msg) != NULL, "case %zu: %s", k,
			      g->message);
		ck_assert_msg(g->span.line == 3 && g->span.col == cases[k].col,
			      "case %zu (%s): at %d:%d", k, g->message, g->span.line, g->span.col);
	}
}
END_TEST

/* `x = T.allocate_const(data, dtype, extents)`: an allocation whose body
 * starts with one store per constant, row-major; T.decl_buffer(data=x)
 * names it. */
START_TEST(allocate_const_is_an_initialised_allocation)
{
	Stmt *s = body_ok("    K = T.allocate_const([1, 2, 3, 4], \"int32\", [2, 2])\n"
			  "    K_buf = T.decl_buffer((2, 2), \"int32\", data=K)\n"
			  "    A[0] = K_buf[1, 0]\n");
	ck_assert_int_eq(s->kind, ST_ALLOC);
	Buffer *K = s->u.alloc.buf;
	ck_assert_int_eq(K->ndim, 2);
	Stmt *body = s->u.alloc.body;
	ck_assert_int_eq(body->kind, ST_SEQ);
	ck_assert_int_eq(body->u.seq.n, 5);
	Stmt *third = body->u.seq.items[2];
	ck_assert(third->kind == ST_STORE && third->u.store.buf == K);
	ck_assert_int_eq(third->u.store.idx[0]->u.ival, 1);
	ck_assert_int_eq(third->u.store.idx[1]->u.ival, 0);
	ck_assert_int_eq(third->u.store.value->u.ival, 3);
	ck_assert(body->u.seq.items[4]->u.store.value->u.load.buf == K);
	static const struct { const char *line, *msg; int col; } cases[] = {
		{"    K = T.allocate_const([1, 2, 3], \"int32\", [2, 2])\n",
		 "T.allocate_const has 3 values for 4 cells", 26},
		{"    K = T.allocate_const([1, 2], \"int32\", [n])\n",
		 "not supported: T.allocate_const with extents other than small integer literals", 43},
		{"    K = T.allocate_const([1, n], \"int32\", [2])\n",
		 "T.allocate_const expects literal constants", 30},
		{"    K = T.allocate_const([1, 2.5], \"int32\", [2])\n",
		 "a float constant in int32 data", 30},
		{"    K = T.allocate_const(1, \"int32\", [1])\n",
		 "T.allocate_const expects a list of constants", 26},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *text = arena_printf(&arena, "%s%s", HDR, cases[k].line);
		ck_assert_msg(parse_text(text) == NULL, "case %zu parsed", k);
		const Diag *g = diags.first;
		ck_assert_msg(strstr(g->message, cases[k].msg) != NULL, "case %zu: %s", k,
			      g->message);
		ck_assert_msg(g->span.line == 3 && g->span.col == cases[k].col,
			      "case %zu (%s): at %d:%d", k, g->message, g->span.line, g->span.col);
	}
}
END_TEST

/* TVM's `x = T.float32()` then `T.Let(body, where={x: value})`, and the
 * printer's `T.let(x, value, body)`: both a let expression binding x over
 * the body only. */
START_TEST(let_expressions_bind_over_their_body)
{
	Stmt *s = body_ok("    for i in range(4):\n"
			  "        x = T.float32()\n"
			  "        B[0, 0] = T.Let(5.0 * x + 1.0, where={x: T.cast(i + 1, \"float32\")})\n");
	ck_assert_int_eq(s->kind, ST_FOR);
	Expr *e = s->u.loop.body->u.store.value;
	ck_assert_int_eq(e->kind, EX_LET);
	ck_assert_str_eq(e->u.let.var->name, "x");
	ck_assert_int_eq(e->u.let.var->dtype, DT_FLOAT32);
	ck_assert_int_eq(e->u.let.value->kind, EX_CAST);
	ck_assert_int_eq(e->u.let.body->u.bin.a->u.bin.b->u.var == e->u.let.var, 1);
	e = stored_value("    A[0] = T.let(y, A[1] + 1, y * y)\n");
	ck_assert_int_eq(e->kind, EX_LET);
	ck_assert_int_eq(e->u.let.var->dtype, DT_INT32);
	ck_assert(e->u.let.body->u.bin.a->u.var == e->u.let.var);
	static const struct { const char *line, *msg; int col; } cases[] = {
		{"    x = T.float32()\n    B[0, 0] = x\n",
		 "'x' is declared by `x = T.float32()` for a T.Let, and used outside one that binds it", 15},
		{"    x = T.float32()\n    B[0, 0] = T.Let(x, where={y: 1.0})\n",
		 "T.Let binds a variable declared by `x = T.float32()`, found 'y'", 31},
		{"    x = T.float32()\n    B[0, 0] = T.Let(x)\n",
		 "T.Let expects a body and where={var: value}", 15},
		{"    A[0] = T.let(1, 2, 3)\n", "expected a name after 'T.let(', found number '1'", 18},
		{"    A[0] = T.let(y, 2, y, 4)\n", "to close T.let", 25},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *text = arena_printf(&arena, "%s%s", HDR, cases[k].line);
		ck_assert_msg(parse_text(text) == NULL, "case %zu parsed", k);
		const Diag *g = diags.first;
		ck_assert_msg(strstr(g->message, cases[k].msg) != NULL, "case %zu: %s", k,
			      g->message);
		ck_assert_msg(g->span.col == cases[k].col,
			      "case %zu (%s): at %d:%d", k, g->message, g->span.line, g->span.col);
	}
}
END_TEST

void parse_forms_add_cases(Suite *s)
{
	ParseCase cases[] = {
		{"errors",
		 {malformed_input_reports_message_line_and_column,
		  errors_render_with_file_line_and_caret,
		  deep_nesting_is_an_error_not_a_crash,
		  truncated_and_corrupted_inputs_fail_cleanly}},
		{"standalone",
		 {parse_expr_range_resolves_function_buffers,
		  parse_expr_range_reports_errors_in_place,
		  parse_expr_range_uses_extra_vars_first, lambda_with_axis_separator,
		  lambda_single_expression_and_buffer_reads, lambda_errors}},
		{"math_calls",
		 {math_calls_build_typed_call_nodes, math_call_operands_take_one_dtype,
		  math_call_errors_are_positioned}},
		{"tvm_expression_forms", {tvm_cast_select_dtype_and_likely}},
		{"shifts", {shifts_parse_as_shift_operators, shift_errors_are_positioned}},
		{"allocate_const", {allocate_const_is_an_initialised_allocation}},
		{"let_expressions", {let_expressions_bind_over_their_body}},
		{"float16",
		 {float16_is_a_dtype_with_constructors_and_adapting_literals, float16_tvm_kernels_parse}},
	};
	parse_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
