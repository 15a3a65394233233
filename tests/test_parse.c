/* tests/test_parse.c — the kernel-language front end (kernel/lex.c,
 * kernel/parse.c) and structural equality (kernel/equal.c): every
 * conformance kernel parses, parameters, statements, expressions and
 * modules build the IR they should, equal texts give equal modules.
 * Malformed input, standalone expressions and lambdas and the later
 * language forms are in test_parse_forms.c; the helpers both use in
 * test_parse_int.h. */
#include "tests/test_parse_int.h"

/* ---------- conformance ---------- */

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

Suite *suite_parse(void)
{
	Suite *s = suite_create("parse");
	ParseCase cases[] = {
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
	};
	parse_add_cases(s, cases, sizeof cases / sizeof cases[0]);
	parse_forms_add_cases(s);
	return s;
}
