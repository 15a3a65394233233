/* tests/test_parse.c — the kernel-language front end (kernel/lex.c,
 * kernel/parse.c) and structural equality (kernel/equal.c): every
 * conformance kernel parses, each language feature builds the IR it
 * should, malformed inputs give the right message at the right line and
 * column, standalone expressions and lambdas resolve against a function. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/parse.h"
#include "tests/testutil.h"

static Arena arena;
static DiagList diags;

static void setup(void)
{
	arena_init(&arena);
	diag_init(&diags, &arena);
}

static void teardown(void) { arena_free(&arena); }

static Module *parse_text(const char *text)
{
	diag_init(&diags, &arena);
	Source *src = source_from_string(&arena, "k.tir", text);
	return parse_module(&arena, src, &diags);
}

/* Parse or fail the test with the rendered diagnostics. */
static Module *parse_ok(const char *text)
{
	Module *m = parse_text(text);
	if (!m) {
		char *r = diag_render(&diags);
		ck_abort_msg("parse failed:\n%s\nfor:\n%s", r, text);
	}
	ck_assert_int_eq(diags.nerrors, 0);
	return m;
}

static Func *func_ok(const char *text) { return parse_ok(text)->funcs[0]; }

#define HDR                                                                    \
	"@T.prim_func\n"                                                       \
	"def f(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(4, 4), \"float32\"], " \
	"C: T.Buffer[(2,), \"float64\"], n: T.int32):\n"

/* The body of f for HDR + lines. */
static Stmt *body_ok(const char *lines)
{
	char *text = arena_printf(&arena, "%s%s", HDR, lines);
	return func_ok(text)->body;
}

/* The value stored by a body that is one store statement. */
static Expr *stored_value(const char *lines)
{
	Stmt *s = body_ok(lines);
	ck_assert_int_eq(s->kind, ST_STORE);
	return s->u.store.value;
}

static const char *shared_dir(void)
{
	const char *env = getenv("VS_SHARED");
	return env && *env ? env : "../shared";
}

/* ---------- conformance ---------- */

/* Calls fn(path) for every conformance case file `name`; returns count. */
static int for_each_case_file(const char *name, void (*fn)(const char *path))
{
	char *dir = arena_printf(&arena, "%s/conformance", shared_dir());
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s (set VS_SHARED)", dir);
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = arena_printf(&arena, "%s/%s/%s", dir, e->d_name, name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		fclose(f);
		fn(path);
		count++;
	}
	closedir(d);
	return count;
}

static void parse_file_ok(const char *path)
{
	diag_init(&diags, &arena);
	Source *src = source_read_file(&arena, path, &diags);
	ck_assert_ptr_nonnull(src);
	Module *m = parse_module(&arena, src, &diags);
	if (!m) {
		char *r = diag_render(&diags);
		ck_abort_msg("%s", r);
	}
	ck_assert_int_ge(m->nfuncs, 1);
}

START_TEST(every_conformance_before_tir_parses)
{
	ck_assert_int_ge(for_each_case_file("before.tir", parse_file_ok), 20);
}
END_TEST

START_TEST(every_conformance_after_tir_parses)
{
	ck_assert_int_ge(for_each_case_file("after.tir", parse_file_ok), 5);
}
END_TEST

START_TEST(source_read_file_reports_missing_file)
{
	Source *s = source_read_file(&arena, "/nonexistent/x.tir", &diags);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(diags.nerrors, 1);
	ck_assert_ptr_nonnull(strstr(diags.first->message, "cannot open"));
}
END_TEST

/* ---------- parameters ---------- */

START_TEST(buffer_param_forms)
{
	Func *f = func_ok(tu_fixture("parse/buffer_param_forms.tir"));
	ck_assert_int_eq(f->nparams, 6);
	static const int ndims[] = {2, 2, 1, 1, 1, 1};
	static const DType dts[] = {DT_INT32, DT_INT8, DT_INT32, DT_UINT8,
				    DT_FLOAT64, DT_BOOL};
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(f->params[i].kind, PARAM_BUFFER);
		ck_assert_int_eq(f->params[i].buf->ndim, ndims[i]);
		ck_assert_int_eq(f->params[i].buf->dtype, dts[i]);
		ck_assert_ptr_null(f->params[i].var);
	}
	ck_assert_str_eq(f->params[1].buf->name, "B");
	ck_assert_int_eq(f->params[1].buf->shape[1]->u.ival, 5);
	ck_assert_int_eq(f->params[3].buf->shape[0]->kind, EX_INT);
	ck_assert_int_eq(f->params[3].buf->shape[0]->u.ival, 14);
}
END_TEST

START_TEST(scalar_params_and_return_annotation)
{
	Func *f = func_ok(tu_fixture("parse/scalar_params_and_return_annotation.tir"));
	ck_assert_str_eq(f->name, "g");
	ck_assert_int_eq(f->nparams, 3);
	ck_assert_int_eq(f->params[0].kind, PARAM_SCALAR);
	ck_assert_int_eq(f->params[0].var->dtype, DT_INT32);
	ck_assert_int_eq(f->params[1].var->dtype, DT_INT64);
	ck_assert_int_eq(f->params[2].var->dtype, DT_FLOAT32);
	ck_assert_str_eq(f->params[2].var->name, "x");
	ck_assert_int_eq(f->body->kind, ST_PASS);
}
END_TEST

START_TEST(handle_with_positional_match_buffer)
{
	Func *f = func_ok(tu_fixture("parse/handle_with_positional_match_buffer.tir"));
	ck_assert_int_eq(f->params[0].kind, PARAM_HANDLE);
	ck_assert_str_eq(f->params[0].var->name, "a");
	ck_assert_int_eq(f->params[0].var->dtype, DT_HANDLE);
	Buffer *A = f->params[0].buf;
	ck_assert_str_eq(A->name, "A");
	ck_assert_int_eq(A->dtype, DT_FLOAT32);
	ck_assert_int_eq(A->ndim, 2);
	ck_assert_int_eq(A->shape[1]->kind, EX_VAR);
	ck_assert_ptr_eq(A->shape[1]->u.var, f->params[1].var);
	ck_assert_int_eq(f->body->kind, ST_STORE);
	ck_assert_ptr_eq(f->body->u.store.buf, A);
}
END_TEST

START_TEST(handle_with_keyword_match_buffer_binds_in_order)
{
	Func *f = func_ok(tu_fixture("parse/handle_with_keyword_match_buffer_binds_in_order.tir"));
	ck_assert_str_eq(f->params[0].buf->name, "A");
	ck_assert_str_eq(f->params[1].buf->name, "B");
	ck_assert_int_eq(f->params[0].buf->ndim, 2);
	ck_assert_int_eq(f->body->kind, ST_FOR);
}
END_TEST

START_TEST(shape_may_name_a_later_scalar_param)
{
	Func *f = func_ok(tu_fixture("parse/shape_may_name_a_later_scalar_param.tir"));
	ck_assert_int_eq(f->params[0].buf->shape[0]->kind, EX_VAR);
	ck_assert_ptr_eq(f->params[0].buf->shape[0]->u.var, f->params[1].var);
}
END_TEST

START_TEST(params_may_span_lines_with_trailing_comma)
{
	Func *f = func_ok(tu_fixture("parse/params_may_span_lines_with_trailing_comma.tir"));
	ck_assert_int_eq(f->nparams, 3);
	ck_assert_str_eq(f->params[2].buf->name, "B");
}
END_TEST

/* ---------- statements ---------- */

START_TEST(store_and_augmented_store)
{
	Stmt *s = body_ok("    A[3] = 1\n    A[n] += 2\n");
	ck_assert_int_eq(s->kind, ST_SEQ);
	ck_assert_int_eq(s->u.seq.n, 2);
	Stmt *aug = s->u.seq.items[1];
	ck_assert_int_eq(aug->kind, ST_STORE);
	ck_assert_int_eq(aug->u.store.idx[0]->kind, EX_VAR);
	Expr *v = aug->u.store.value;
	ck_assert_int_eq(v->kind, EX_BIN);
	ck_assert_int_eq(v->u.bin.op, OP_ADD);
	ck_assert_int_eq(v->u.bin.a->kind, EX_LOAD);
	ck_assert_str_eq(v->u.bin.a->u.load.buf->name, "A");
	ck_assert_int_eq(v->u.bin.b->u.ival, 2);
	ck_assert_int_eq(aug->span.line, 4);
	ck_assert_int_eq(aug->span.col, 5);
}
END_TEST

START_TEST(for_serial_range_and_bounds)
{
	Stmt *s = body_ok("    for i in T.serial(n):\n        A[i] = i\n"
			  "    for j in T.serial(2, 10):\n        A[j] = j\n"
			  "    for k in range(3):\n        A[k] = k\n"
			  "    for l in range(1, n):\n        A[l] = l\n");
	ck_assert_int_eq(s->u.seq.n, 4);
	Stmt *l0 = s->u.seq.items[0], *l1 = s->u.seq.items[1],
	     *l2 = s->u.seq.items[2], *l3 = s->u.seq.items[3];
	ck_assert_int_eq(l0->kind, ST_FOR);
	ck_assert_int_eq(l0->u.loop.kind, FOR_SERIAL);
	ck_assert_int_eq(l0->u.loop.min->u.ival, 0);
	ck_assert_int_eq(l0->u.loop.extent->kind, EX_VAR);
	ck_assert_str_eq(l0->u.loop.var->name, "i");
	ck_assert_int_eq(l1->u.loop.min->u.ival, 2);
	ck_assert_int_eq(l1->u.loop.extent->u.ival, 8);
	ck_assert_int_eq(l2->u.loop.min->u.ival, 0);
	ck_assert_int_eq(l2->u.loop.extent->u.ival, 3);
	ck_assert_int_eq(l3->u.loop.min->u.ival, 1);
	Expr *ext = l3->u.loop.extent;
	ck_assert_int_eq(ext->kind, EX_BIN);
	ck_assert_int_eq(ext->u.bin.op, OP_SUB);
	/* the body's i is the loop's variable */
	Stmt *store = l0->u.loop.body;
	ck_assert_ptr_eq(store->u.store.idx[0]->u.var, l0->u.loop.var);
}
END_TEST

START_TEST(loop_kinds)
{
	Stmt *s = body_ok("    for i in T.parallel(4):\n        A[i] = 0\n"
			  "    for i in T.vectorized(4):\n        A[i] = 0\n"
			  "    for i in T.unroll(4):\n        A[i] = 0\n");
	ck_assert_int_eq(s->u.seq.items[0]->u.loop.kind, FOR_PARALLEL);
	ck_assert_int_eq(s->u.seq.items[1]->u.loop.kind, FOR_VECTORIZED);
	ck_assert_int_eq(s->u.seq.items[2]->u.loop.kind, FOR_UNROLLED);
}
END_TEST

START_TEST(grid_makes_nested_loops)
{
	Stmt *s = body_ok("    for i, j, k in T.grid(2, 3, n):\n"
			  "        A[i + j + k] = 0\n");
	const char *names[] = {"i", "j", "k"};
	for (int d = 0; d < 3; d++) {
		ck_assert_int_eq(s->kind, ST_FOR);
		ck_assert_str_eq(s->u.loop.var->name, names[d]);
		ck_assert_int_eq(s->u.loop.min->u.ival, 0);
		ck_assert_int_eq(s->u.loop.kind, FOR_SERIAL);
		s = s->u.loop.body;
	}
	ck_assert_int_eq(s->kind, ST_STORE);
}
END_TEST

START_TEST(if_elif_else_chain)
{
	Stmt *s = body_ok("    for i in T.serial(16):\n"
			  "        if i < 4:\n"
			  "            A[i] = 1\n"
			  "        elif i < 8:\n"
			  "            A[i] = 2\n"
			  "        else:\n"
			  "            A[i] = 3\n"
			  "            A[0] = 4\n");
	Stmt *c = s->u.loop.body;
	ck_assert_int_eq(c->kind, ST_IF);
	ck_assert_int_eq(c->u.cond.cond->u.bin.op, OP_LT);
	Stmt *e = c->u.cond.else_s;
	ck_assert_int_eq(e->kind, ST_IF);
	ck_assert_int_eq(e->u.cond.then_s->kind, ST_STORE);
	ck_assert_int_eq(e->u.cond.else_s->kind, ST_SEQ);
	ck_assert_int_eq(e->u.cond.else_s->u.seq.n, 2);
	Stmt *plain = body_ok("    if n > 0:\n        A[0] = 1\n");
	ck_assert_ptr_null(plain->u.cond.else_s);
}
END_TEST

START_TEST(block_statement)
{
	Stmt *s = body_ok("    with T.block(\"compute\"):\n"
			  "        for i in T.serial(16):\n"
			  "            A[i] = 2 * A[i]\n"
			  "    with T.block('other'):\n"
			  "        pass\n");
	ck_assert_int_eq(s->u.seq.items[0]->kind, ST_BLOCK);
	ck_assert_str_eq(s->u.seq.items[0]->u.block.name, "compute");
	ck_assert_int_eq(s->u.seq.items[0]->u.block.body->kind, ST_FOR);
	ck_assert_str_eq(s->u.seq.items[1]->u.block.name, "other");
}
END_TEST

START_TEST(let_takes_the_rest_of_the_list)
{
	Stmt *s = body_ok("    A[0] = 1\n"
			  "    x = n + 2\n"
			  "    A[x] = 2\n"
			  "    A[1] = x\n");
	ck_assert_int_eq(s->kind, ST_SEQ);
	ck_assert_int_eq(s->u.seq.n, 2);
	Stmt *let = s->u.seq.items[1];
	ck_assert_int_eq(let->kind, ST_LET);
	ck_assert_str_eq(let->u.let.var->name, "x");
	ck_assert_int_eq(let->u.let.var->dtype, DT_INT32);
	ck_assert_int_eq(let->u.let.body->kind, ST_SEQ);
	ck_assert_int_eq(let->u.let.body->u.seq.n, 2);
	Stmt *use = let->u.let.body->u.seq.items[0];
	ck_assert_ptr_eq(use->u.store.idx[0]->u.var, let->u.let.var);
	/* a let ending its list has an empty body: `pass` */
	Stmt *last = body_ok("    y = 3\n");
	ck_assert_int_eq(last->kind, ST_LET);
	ck_assert_int_eq(last->u.let.body->kind, ST_PASS);
	/* annotated let */
	Stmt *ann = body_ok("    z: T.int64 = 5\n    A[0] = 1\n");
	ck_assert_int_eq(ann->u.let.var->dtype, DT_INT64);
	ck_assert_int_eq(ann->u.let.value->dtype, DT_INT64);
}
END_TEST

START_TEST(let_inside_loop_scopes_to_loop_body)
{
	Stmt *s = body_ok("    for Bi in T.serial(18):\n"
			  "        A[0] = 0\n"
			  "        for fi in T.serial(3):\n"
			  "            Ai = Bi - fi + 2\n"
			  "            if 0 <= Ai < 16:\n"
			  "                A[0] = A[0] + A[Ai]\n"
			  "        A[1] = 1\n");
	Stmt *inner = s->u.loop.body->u.seq.items[1];
	ck_assert_int_eq(inner->kind, ST_FOR);
	Stmt *let = inner->u.loop.body;
	ck_assert_int_eq(let->kind, ST_LET);
	ck_assert_int_eq(let->u.let.body->kind, ST_IF);
	ck_assert_int_eq(s->u.loop.body->u.seq.n, 3);
}
END_TEST

START_TEST(alloc_buffer_takes_the_rest_of_the_list)
{
	Stmt *s = body_ok("    L = T.alloc_buffer([4, 4], \"int32\", scope=\"local\")\n"
			  "    L[0, 0] = 1\n"
			  "    S = T.alloc_buffer((2,), dtype=\"float64\", scope=\"shared\")\n"
			  "    G = T.alloc_buffer(14, \"float32\")\n"
			  "    S[0] = 1.0\n");
	ck_assert_int_eq(s->kind, ST_ALLOC);
	Buffer *L = s->u.alloc.buf;
	ck_assert_str_eq(L->name, "L");
	ck_assert_int_eq(L->scope, SCOPE_LOCAL);
	ck_assert_int_eq(L->ndim, 2);
	ck_assert_int_eq(L->dtype, DT_INT32);
	/* a tagged global scope ("global.<tag>") is CPU global memory */
	Stmt *g = body_ok("    G = T.alloc_buffer(4, \"int32\", scope=\"global.test_with_head_address\")\n"
			  "    G[0] = 1\n");
	ck_assert_int_eq(g->u.alloc.buf->scope, SCOPE_GLOBAL);
	Stmt *rest = s->u.alloc.body;
	ck_assert_int_eq(rest->kind, ST_SEQ);
	ck_assert_int_eq(rest->u.seq.n, 2);
	ck_assert_ptr_eq(rest->u.seq.items[0]->u.store.buf, L);
	Stmt *sa = rest->u.seq.items[1];
	ck_assert_int_eq(sa->kind, ST_ALLOC);
	ck_assert_int_eq(sa->u.alloc.buf->scope, SCOPE_SHARED);
	ck_assert_int_eq(sa->u.alloc.buf->dtype, DT_FLOAT64);
	Stmt *ga = sa->u.alloc.body;
	ck_assert_int_eq(ga->kind, ST_ALLOC);
	ck_assert_int_eq(ga->u.alloc.buf->scope, SCOPE_GLOBAL);
	ck_assert_int_eq(ga->u.alloc.buf->ndim, 1);
	ck_assert_int_eq(ga->u.alloc.body->kind, ST_STORE);
	/* the float64 literal adapted to S's dtype */
	ck_assert_int_eq(ga->u.alloc.body->u.store.value->dtype, DT_FLOAT64);
}
END_TEST

START_TEST(assume_evaluate_pass_and_ignored_annotations)
{
	Stmt *s = body_ok("    \"\"\"A docstring\n    over two lines.\"\"\"\n"
			  "    T.func_attr({\"global_symbol\": \"f\", \"tir.noalias\": True})\n"
			  "    T.assume(n % 8 == 0 and n >= 0)\n"
			  "    T.evaluate(n + 1)\n"
			  "    pass\n");
	ck_assert_int_eq(s->kind, ST_SEQ);
	ck_assert_int_eq(s->u.seq.n, 3);
	ck_assert_int_eq(s->u.seq.items[0]->kind, ST_ASSUME);
	ck_assert_int_eq(s->u.seq.items[0]->u.expr->u.bin.op, OP_AND);
	ck_assert_int_eq(s->u.seq.items[1]->kind, ST_EVAL);
	ck_assert_int_eq(s->u.seq.items[2]->kind, ST_PASS);
}
END_TEST

START_TEST(comments_blank_lines_and_joined_lines)
{
	Stmt *s = body_ok("    # a comment\n"
			  "\n"
			  "        # an indented comment does not open a block\n"
			  "    A[0] = (1 +\n"
			  "  2)  # joined by parentheses\n"
			  "    A[1] = 1 + \\\n"
			  "        2\n"
			  "    T.assume(\n"
			  "        (n == 0)\n"
			  "        or n > 1\n"
			  "    )\n"
			  "    A[2] = 3; A[3] = 4\n");
	ck_assert_int_eq(s->u.seq.n, 5);
	ck_assert_int_eq(s->u.seq.items[0]->span.line, 6);
	ck_assert_int_eq(s->u.seq.items[4]->u.store.idx[0]->u.ival, 3);
}
END_TEST

START_TEST(crlf_line_endings)
{
	Func *f = func_ok(tu_fixture("parse/crlf_line_endings.tir"));
	ck_assert_int_eq(f->body->kind, ST_FOR);
}
END_TEST

/* ---------- expressions ---------- */

START_TEST(precedence_and_parentheses)
{
	Expr *e = stored_value("    A[0] = 1 + 2 * 3 - 4 // 2 % 3\n");
	/* ((1 + (2 * 3)) - ((4 // 2) % 3)) */
	ck_assert_int_eq(e->u.bin.op, OP_SUB);
	ck_assert_int_eq(e->u.bin.a->u.bin.op, OP_ADD);
	ck_assert_int_eq(e->u.bin.a->u.bin.b->u.bin.op, OP_MUL);
	ck_assert_int_eq(e->u.bin.b->u.bin.op, OP_FLOORMOD);
	ck_assert_int_eq(e->u.bin.b->u.bin.a->u.bin.op, OP_FLOORDIV);
	Expr *p = stored_value("    A[0] = (1 + 2) * 3\n");
	ck_assert_int_eq(p->u.bin.op, OP_MUL);
	ck_assert_int_eq(p->u.bin.a->u.bin.op, OP_ADD);
	Expr *b = body_ok("    T.assume(not n > 1 or n < 0 and n == 2)\n")->u.expr;
	ck_assert_int_eq(b->u.bin.op, OP_OR);
	ck_assert_int_eq(b->u.bin.a->kind, EX_NOT);
	ck_assert_int_eq(b->u.bin.b->u.bin.op, OP_AND);
}
END_TEST

START_TEST(comparison_chains_become_conjunctions)
{
	Expr *e = body_ok("    T.assume(0 <= n < 16)\n")->u.expr;
	ck_assert_int_eq(e->dtype, DT_BOOL);
	ck_assert_int_eq(e->u.bin.op, OP_AND);
	Expr *l = e->u.bin.a, *r = e->u.bin.b;
	ck_assert_int_eq(l->u.bin.op, OP_LE);
	ck_assert_int_eq(r->u.bin.op, OP_LT);
	ck_assert_int_eq(l->u.bin.b->kind, EX_VAR);
	ck_assert(ir_expr_equal(l->u.bin.b, r->u.bin.a));
	Expr *three = body_ok("    T.assume(0 < n <= 4 != 5)\n")->u.expr;
	ck_assert_int_eq(three->u.bin.op, OP_AND);
	ck_assert_int_eq(three->u.bin.a->u.bin.op, OP_AND);
	ck_assert_int_eq(three->u.bin.b->u.bin.op, OP_NE);
}
END_TEST

START_TEST(literals_fold_negation_and_pick_dtypes)
{
	Expr *e = stored_value("    A[0] = -1\n");
	ck_assert_int_eq(e->kind, EX_INT);
	ck_assert_int_eq(e->u.ival, -1);
	ck_assert_int_eq(e->dtype, DT_INT32);
	Expr *f = stored_value("    B[0, 0] = -1.5e-3\n");
	ck_assert_int_eq(f->kind, EX_FLOAT);
	ck_assert(f->u.fval == -1.5e-3);
	ck_assert_int_eq(f->dtype, DT_FLOAT32);
	Expr *neg = stored_value("    A[0] = -n\n");
	ck_assert_int_eq(neg->kind, EX_NEG);
	Expr *big = body_ok("    T.evaluate(3000000000)\n")->u.expr;
	ck_assert_int_eq(big->dtype, DT_INT64);
	ck_assert_int_eq(big->u.ival, 3000000000LL);
	Expr *min32 = body_ok("    T.evaluate(-2147483648)\n")->u.expr;
	ck_assert_int_eq(min32->dtype, DT_INT32);
	Expr *min64 = body_ok("    T.evaluate(-9223372036854775808)\n")->u.expr;
	ck_assert_int_eq(min64->dtype, DT_INT64);
	ck_assert(min64->u.ival == INT64_MIN);
	Expr *t = body_ok("    T.assume(True)\n")->u.expr;
	ck_assert_int_eq(t->kind, EX_INT);
	ck_assert_int_eq(t->dtype, DT_BOOL);
	ck_assert_int_eq(t->u.ival, 1);
}
END_TEST

START_TEST(float_literals_adapt_to_float64)
{
	Expr *e = stored_value("    C[0] = C[1] + 1.0\n");
	ck_assert_int_eq(e->dtype, DT_FLOAT64);
	ck_assert_int_eq(e->u.bin.b->kind, EX_FLOAT);
	ck_assert_int_eq(e->u.bin.b->dtype, DT_FLOAT64);
	Expr *s = stored_value("    C[0] = 0.5\n");
	ck_assert_int_eq(s->dtype, DT_FLOAT64);
	/* an integer literal next to a float becomes a float literal */
	Expr *m = stored_value("    B[0, 0] = 2 * B[1, 1]\n");
	ck_assert_int_eq(m->u.bin.a->kind, EX_FLOAT);
	ck_assert_int_eq(m->u.bin.a->dtype, DT_FLOAT32);
	ck_assert(m->u.bin.a->u.fval == 2.0);
	/* an integer expression stored into a float buffer is cast */
	Expr *c = stored_value("    B[0, 0] = n\n");
	ck_assert_int_eq(c->kind, EX_CAST);
	ck_assert_int_eq(c->dtype, DT_FLOAT32);
}
END_TEST

START_TEST(builtin_calls)
{
	Expr *e = stored_value("    A[0] = T.min(n, 3) + T.max(n, 4) + "
			       "T.floordiv(n, 2) + T.floormod(n, 5)\n");
	ck_assert_int_eq(e->u.bin.b->u.bin.op, OP_FLOORMOD);
	ck_assert_int_eq(e->u.bin.a->u.bin.b->u.bin.op, OP_FLOORDIV);
	ck_assert_int_eq(e->u.bin.a->u.bin.a->u.bin.b->u.bin.op, OP_MAX);
	ck_assert_int_eq(e->u.bin.a->u.bin.a->u.bin.a->u.bin.op, OP_MIN);
	Expr *s = stored_value("    A[0] = T.if_then_else(n > 0, A[1], 7)\n");
	ck_assert_int_eq(s->kind, EX_SELECT);
	ck_assert_int_eq(s->dtype, DT_INT32);
	ck_assert_int_eq(s->u.sel.cond->dtype, DT_BOOL);
	Expr *c = stored_value("    B[0, 0] = T.cast(n, \"float32\")\n");
	ck_assert_int_eq(c->kind, EX_CAST);
	ck_assert_int_eq(c->dtype, DT_FLOAT32);
	ck_assert_int_eq(c->u.un.a->kind, EX_VAR);
}
END_TEST

START_TEST(dtype_constructors_and_infinity)
{
	Expr *lit = stored_value("    B[0, 0] = T.float32(1)\n");
	ck_assert_int_eq(lit->kind, EX_FLOAT);
	ck_assert_int_eq(lit->dtype, DT_FLOAT32);
	ck_assert(lit->u.fval == 1.0);
	Expr *cast = stored_value("    B[0, 0] = T.float32(n)\n");
	ck_assert_int_eq(cast->kind, EX_CAST);
	Expr *i64 = body_ok("    T.evaluate(T.int64(5))\n")->u.expr;
	ck_assert_int_eq(i64->kind, EX_INT);
	ck_assert_int_eq(i64->dtype, DT_INT64);
	Expr *inf = stored_value("    B[0, 0] = T.float32(\"inf\")\n");
	ck_assert_int_eq(inf->kind, EX_FLOAT);
	ck_assert(isinf(inf->u.fval) && inf->u.fval > 0);
	Expr *ninf = stored_value("    B[0, 0] = T.float32(\"-inf\")\n");
	ck_assert(isinf(ninf->u.fval) && ninf->u.fval < 0);
	Expr *bare = stored_value("    B[0, 0] = -inf\n");
	ck_assert_int_eq(bare->kind, EX_FLOAT);
	ck_assert(isinf(bare->u.fval) && bare->u.fval < 0);
	Expr *d = stored_value("    C[0] = inf\n");
	ck_assert_int_eq(d->dtype, DT_FLOAT64);
}
END_TEST

START_TEST(undef_takes_its_dtype_from_context)
{
	Expr *st = stored_value("    B[0, 0] = T.undef()\n");
	ck_assert_int_eq(st->kind, EX_UNDEF);
	ck_assert_int_eq(st->dtype, DT_FLOAT32);
	Expr *eq = body_ok("    T.assume(n < 0 or C[0] == T.undef())\n")->u.expr;
	Expr *u = eq->u.bin.b->u.bin.b;
	ck_assert_int_eq(u->kind, EX_UNDEF);
	ck_assert_int_eq(u->dtype, DT_FLOAT64);
	Expr *left = body_ok("    T.assume(T.undef() == C[1])\n")->u.expr;
	ck_assert_int_eq(left->u.bin.a->dtype, DT_FLOAT64);
	Expr *kw = body_ok("    T.evaluate(T.undef(dtype=\"float64\"))\n")->u.expr;
	ck_assert_int_eq(kw->dtype, DT_FLOAT64);
	Expr *dflt = body_ok("    T.evaluate(T.undef())\n")->u.expr;
	ck_assert_int_eq(dflt->dtype, DT_INT32);
	Expr *sel = stored_value("    B[0, 0] = T.if_then_else(n > 0, T.undef(), 1.0)\n");
	ck_assert_int_eq(sel->u.sel.a->dtype, DT_FLOAT32);
}
END_TEST

START_TEST(names_resolve_to_the_innermost_binding)
{
	Stmt *s = body_ok("    for i in T.serial(4):\n"
			  "        for i in T.serial(2):\n"
			  "            A[i] = 0\n"
			  "        A[i] = 1\n");
	Stmt *inner = s->u.loop.body->u.seq.items[0];
	Stmt *in_store = inner->u.loop.body;
	Stmt *out_store = s->u.loop.body->u.seq.items[1];
	ck_assert_ptr_eq(in_store->u.store.idx[0]->u.var, inner->u.loop.var);
	ck_assert_ptr_eq(out_store->u.store.idx[0]->u.var, s->u.loop.var);
	ck_assert_ptr_ne(inner->u.loop.var, s->u.loop.var);
}
END_TEST

START_TEST(spans_point_at_source)
{
	Stmt *s = body_ok("    for i in T.serial(16):\n"
			  "        A[i] = A[i] + 12\n");
	ck_assert_ptr_nonnull(s->span.src);
	ck_assert_int_eq(s->span.line, 3);
	ck_assert_int_eq(s->span.col, 5);
	Stmt *st = s->u.loop.body;
	ck_assert_int_eq(st->span.line, 4);
	ck_assert_int_eq(st->span.col, 9);
	Expr *v = st->u.store.value;
	ck_assert_int_eq(v->span.col, 16);
	ck_assert_int_eq(v->span.len, 9);
	ck_assert_int_eq(v->u.bin.b->span.col, 23);
	ck_assert_int_eq(v->u.bin.b->span.len, 2);
}
END_TEST

static void assert_expr_spans(const Expr *e)
{
	ck_assert_msg(e->span.src != NULL && e->span.line > 0,
		      "expression of kind %d has no span", e->kind);
	switch (e->kind) {
	case EX_INT:
	case EX_FLOAT:
	case EX_VAR:
	case EX_UNDEF:
	case EX_COUNT: return;
	case EX_BIN:
		assert_expr_spans(e->u.bin.a);
		assert_expr_spans(e->u.bin.b);
		return;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST: assert_expr_spans(e->u.un.a); return;
	case EX_SELECT:
		assert_expr_spans(e->u.sel.cond);
		assert_expr_spans(e->u.sel.a);
		assert_expr_spans(e->u.sel.b);
		return;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			assert_expr_spans(e->u.load.idx[i]);
		return;
	case EX_LET:
		assert_expr_spans(e->u.let.value);
		assert_expr_spans(e->u.let.body);
		return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			assert_expr_spans(e->u.call.args[i]);
		return;
	case EX_OPAQUE:
		for (int i = 0; i < e->u.opq.nargs; i++)
			assert_expr_spans(e->u.opq.args[i]);
		return;
	}
}

static void assert_stmt_spans(const Stmt *s)
{
	ck_assert_msg(s->span.src != NULL && s->span.line > 0,
		      "statement of kind %d has no span", s->kind);
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			assert_stmt_spans(s->u.seq.items[i]);
		return;
	case ST_FOR:
		assert_expr_spans(s->u.loop.min);
		assert_expr_spans(s->u.loop.extent);
		ck_assert_ptr_nonnull(s->u.loop.var->span.src);
		assert_stmt_spans(s->u.loop.body);
		return;
	case ST_IF:
		assert_expr_spans(s->u.cond.cond);
		assert_stmt_spans(s->u.cond.then_s);
		if (s->u.cond.else_s)
			assert_stmt_spans(s->u.cond.else_s);
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			assert_expr_spans(s->u.store.idx[i]);
		assert_expr_spans(s->u.store.value);
		return;
	case ST_ASSUME:
	case ST_EVAL: assert_expr_spans(s->u.expr); return;
	case ST_ALLOC:
		ck_assert_ptr_nonnull(s->u.alloc.buf->span.src);
		assert_stmt_spans(s->u.alloc.body);
		return;
	case ST_BLOCK: assert_stmt_spans(s->u.block.body); return;
	case ST_LET:
		assert_expr_spans(s->u.let.value);
		assert_stmt_spans(s->u.let.body);
		return;
	case ST_PASS:
	case ST_COUNT: return;
	}
}

static void file_spans(const char *path)
{
	char *text = tu_read_file(path);
	Module *m = parse_ok(text);
	free(text);
	for (int i = 0; i < m->nfuncs; i++) {
		ck_assert_ptr_nonnull(m->funcs[i]->span.src);
		assert_stmt_spans(m->funcs[i]->body);
	}
}

START_TEST(every_node_has_a_span)
{
	ck_assert_int_ge(for_each_case_file("before.tir", file_spans), 20);
	ck_assert_int_ge(for_each_case_file("after.tir", file_spans), 5);
	Func *f = func_ok(HDR "    x = T.min(n, 3) + 1\n"
			  "    L = T.alloc_buffer([4], \"float64\")\n"
			  "    for i in T.serial(2, n):\n"
			  "        L[i] = T.if_then_else(i > x, C[0] * 2, -inf)\n"
			  "        B[0, 0] = T.float32(i) + T.cast(L[0], \"float32\")\n"
			  "    T.assume(0 <= n < 16 and not n == 3)\n"
			  "    T.evaluate(T.undef())\n");
	assert_stmt_spans(f->body);
}
END_TEST

/* ---------- modules ---------- */

static const char *module_text(const char *decorator)
{
	return arena_printf(&arena,
			    "from tvm.script import tir as T\n"
			    "%s\n"
			    "class MyModule:\n"
			    "    \"\"\"Producer and consumer.\"\"\"\n"
			    "    @T.prim_func\n"
			    "    def producer(A: T.Buffer[(14,), \"int32\"]):\n"
			    "        for i in T.serial(14):\n"
			    "            A[i] = 1000 + i\n"
			    "\n"
			    "    @T.prim_func\n"
			    "    def consumer(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(1,), \"int32\"]):\n"
			    "        B[0] = 0\n"
			    "        for i in T.serial(14):\n"
			    "            B[0] = B[0] + A[i]\n",
			    decorator);
}

START_TEST(ir_module_decorator_spellings)
{
	static const char *decs[] = {"@I.ir_module", "@tvm.script.ir_module",
				     "@script.ir_module", "@ir_module"};
	for (int i = 0; i < 4; i++) {
		Module *m = parse_ok(module_text(decs[i]));
		ck_assert_str_eq(m->name, "MyModule");
		ck_assert_int_eq(m->nfuncs, 2);
		ck_assert_ptr_nonnull(module_find_func(m, "consumer"));
		ck_assert_str_eq(m->funcs[0]->name, "producer");
	}
}
END_TEST

START_TEST(single_prim_func_gives_unnamed_module)
{
	Module *m = parse_ok(HDR "    pass\n");
	ck_assert_ptr_null(m->name);
	ck_assert_int_eq(m->nfuncs, 1);
	ck_assert_str_eq(m->funcs[0]->name, "f");
}
END_TEST

/* ---------- structural equality ---------- */

static void parse_twice_equal(const char *path)
{
	char *text = tu_read_file(path);
	ck_assert_ptr_nonnull(text);
	Module *a = parse_ok(text);
	Module *b = parse_ok(text);
	free(text);
	ck_assert(ir_module_equal(a, b));
	for (int i = 0; i < a->nfuncs; i++) {
		ck_assert(ir_func_equal(a->funcs[i], b->funcs[i]));
		ck_assert_uint_eq(ir_stmt_hash(a->funcs[i]->body),
				  ir_stmt_hash(b->funcs[i]->body));
	}
}

START_TEST(same_text_parses_to_equal_modules)
{
	ck_assert_int_ge(for_each_case_file("before.tir", parse_twice_equal), 20);
}
END_TEST

START_TEST(one_constant_differs_not_equal)
{
	Func *a = func_ok(HDR "    for i in T.serial(16):\n        A[i] = 2 * A[i]\n");
	Func *b = func_ok(HDR "    for i in T.serial(16):\n        A[i] = 3 * A[i]\n");
	ck_assert(!ir_func_equal(a, b));
	ck_assert(!ir_stmt_equal(a->body, b->body));
	ck_assert_uint_ne(ir_stmt_hash(a->body), ir_stmt_hash(b->body));
	Func *c = func_ok(HDR "    for i in T.serial(15):\n        A[i] = 2 * A[i]\n");
	ck_assert(!ir_func_equal(a, c));
}
END_TEST

START_TEST(bound_names_compare_up_to_renaming)
{
	Func *a = func_ok(HDR "    for i, j in T.grid(4, 4):\n"
			  "        x = i + j\n"
			  "        L = T.alloc_buffer([4], \"int32\")\n"
			  "        L[j] = x\n"
			  "        B[i, j] = T.cast(L[j], \"float32\")\n");
	Func *b = func_ok(HDR "    for p, q in T.grid(4, 4):\n"
			  "        y = p + q\n"
			  "        M = T.alloc_buffer([4], \"int32\")\n"
			  "        M[q] = y\n"
			  "        B[p, q] = T.cast(M[q], \"float32\")\n");
	ck_assert(ir_func_equal(a, b));
	ck_assert_uint_eq(ir_stmt_hash(a->body), ir_stmt_hash(b->body));
	/* swapping which bound variable is used is not a renaming */
	Func *c = func_ok(HDR "    for i, j in T.grid(4, 4):\n        A[i] = j\n");
	Func *d = func_ok(HDR "    for i, j in T.grid(4, 4):\n        A[j] = i\n");
	ck_assert(!ir_func_equal(c, d));
	ck_assert_uint_ne(ir_stmt_hash(c->body), ir_stmt_hash(d->body));
}
END_TEST

START_TEST(free_names_compare_by_name_dtype_and_shape)
{
	Func *a = func_ok(tu_fixture("parse/free_names_compare_by_name_dtype_and_shape-a.tir"));
	Func *b = func_ok(tu_fixture("parse/free_names_compare_by_name_dtype_and_shape-b_other_name.tir"));
	Func *c = func_ok(tu_fixture("parse/free_names_compare_by_name_dtype_and_shape-c_other_shape.tir"));
	Func *d = func_ok(tu_fixture("parse/free_names_compare_by_name_dtype_and_shape-d_same_as_a.tir"));
	ck_assert(!ir_func_equal(a, b));
	ck_assert(!ir_func_equal(a, c));
	ck_assert(ir_func_equal(a, d));
	ck_assert(!ir_stmt_equal(a->body, c->body));
	/* inside one program a free variable is only itself: d's n is
	 * another variable that happens to share a's name (found by an
	 * audit: rewrites took a split's new i_o for an outer loop i_o) */
	ck_assert(!ir_stmt_equal(a->body, d->body));
	ck_assert(ir_stmt_equal(a->body, a->body));
	ck_assert_uint_eq(ir_stmt_hash(a->body), ir_stmt_hash(d->body));
}
END_TEST

START_TEST(float_literals_compare_bitwise)
{
	Expr *pz = ir_float(&arena, 0.0, DT_FLOAT32, (Span){0});
	Expr *nz = ir_float(&arena, -0.0, DT_FLOAT32, (Span){0});
	Expr *pz2 = ir_float(&arena, 0.0, DT_FLOAT32, (Span){0});
	Expr *pz64 = ir_float(&arena, 0.0, DT_FLOAT64, (Span){0});
	ck_assert(!ir_expr_equal(pz, nz));
	ck_assert(ir_expr_equal(pz, pz2));
	ck_assert(!ir_expr_equal(pz, pz64));
	ck_assert_uint_eq(ir_expr_hash(pz), ir_expr_hash(pz2));
	Expr *n1 = ir_float(&arena, NAN, DT_FLOAT32, (Span){0});
	Expr *n2 = ir_float(&arena, NAN, DT_FLOAT32, (Span){0});
	ck_assert(ir_expr_equal(n1, n2));
}
END_TEST

START_TEST(modules_compare_function_by_function)
{
	Module *a = parse_ok(module_text(tu_fixture("parse/modules_compare_function_by_function.tir")));
	Module *b = parse_ok(module_text("@ir_module"));
	ck_assert(ir_module_equal(a, b));
	Module *c = parse_ok(HDR "    pass\n");
	ck_assert(!ir_module_equal(a, c));
}
END_TEST

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

Suite *suite_parse(void)
{
	Suite *s = suite_create("parse");
	struct {
		const char *name;
		const TTest *tests[12];
	} cases[] = {
		{"conformance",
		 {every_conformance_before_tir_parses, every_conformance_after_tir_parses,
		  source_read_file_reports_missing_file}},
		{"params",
		 {buffer_param_forms, scalar_params_and_return_annotation,
		  handle_with_positional_match_buffer,
		  handle_with_keyword_match_buffer_binds_in_order,
		  shape_may_name_a_later_scalar_param,
		  params_may_span_lines_with_trailing_comma}},
		{"statements",
		 {store_and_augmented_store, for_serial_range_and_bounds, loop_kinds,
		  grid_makes_nested_loops, if_elif_else_chain, block_statement,
		  let_takes_the_rest_of_the_list, let_inside_loop_scopes_to_loop_body,
		  alloc_buffer_takes_the_rest_of_the_list,
		  assume_evaluate_pass_and_ignored_annotations}},
		{"layout",
		 {comments_blank_lines_and_joined_lines, crlf_line_endings}},
		{"expressions",
		 {precedence_and_parentheses, comparison_chains_become_conjunctions,
		  literals_fold_negation_and_pick_dtypes, float_literals_adapt_to_float64,
		  builtin_calls, dtype_constructors_and_infinity,
		  undef_takes_its_dtype_from_context,
		  names_resolve_to_the_innermost_binding, spans_point_at_source,
		  every_node_has_a_span}},
		{"modules",
		 {ir_module_decorator_spellings, single_prim_func_gives_unnamed_module}},
		{"equality",
		 {same_text_parses_to_equal_modules, one_constant_differs_not_equal,
		  bound_names_compare_up_to_renaming,
		  free_names_compare_by_name_dtype_and_shape,
		  float_literals_compare_bitwise, modules_compare_function_by_function}},
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
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 60);
		for (int k = 0; k < 12 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
