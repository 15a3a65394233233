/* tests/test_verify.c — the IR verifier (kernel/verify.c): everything the
 * parser and the scheduler produce passes; malformed IR, hand-built with
 * the kernel/ir.h constructors (the parser would refuse it), is flagged
 * with the right message; a malformed commit becomes a rejection. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/verify.h"
#include "tests/testutil.h"

static Arena arena;
static const Span S0;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* ---------- helpers ---------- */

static Var *var(const char *name, DType t) { return ir_var(&arena, name, t, S0); }
static Expr *ref(Var *v) { return ir_varref(&arena, v, S0); }
static Expr *lit(int64_t v) { return ir_int32(&arena, v); }

static Buffer *buffer1(const char *name, DType t, int64_t n)
{
	Expr *shape = lit(n);
	return ir_buffer(&arena, name, t, 1, &shape, S0);
}

static Stmt *store1(Buffer *b, Expr *index, Expr *value)
{
	return ir_store(&arena, b, 1, &index, value, S0);
}

static Expr *load1(Buffer *b, Expr *index) { return ir_load(&arena, b, 1, &index, S0); }

static Stmt *loop(Var *v, int64_t extent, Stmt *body)
{
	return ir_for(&arena, v, ir_int(&arena, 0, v->dtype, S0), ir_int(&arena, extent, v->dtype, S0),
		      FOR_SERIAL, body, S0);
}

static Stmt *seq2(Stmt *a, Stmt *b)
{
	Stmt *items[] = {a, b};
	return ir_seq(&arena, 2, items, S0);
}

/* f(A: T.Buffer[(n,), dtype of b], plus one scalar if given) { body } */
static Func *func_of(Buffer *b, Var *scalar, Stmt *body)
{
	Param ps[2] = {{.kind = PARAM_BUFFER, .buf = b}, {.kind = PARAM_SCALAR, .var = scalar}};
	return ir_func(&arena, "f", scalar ? 2 : 1, ps, body, S0);
}

static void assert_ok(const Func *f)
{
	DiagList d;
	diag_init(&d, &arena);
	bool ok = ir_verify_func(f, &d);
	ck_assert_msg(ok && !d.first, "unexpected: %s", d.first ? d.first->message : "?");
}

/* The first message of a failing verification; it names the function. */
static const char *first_error(const Func *f)
{
	DiagList d;
	diag_init(&d, &arena);
	ck_assert(!ir_verify_func(f, &d));
	ck_assert_ptr_nonnull(d.first);
	ck_assert_int_ge(d.nerrors, 1);
	const char *prefix = "internal error: IR verifier: function 'f': ";
	ck_assert_msg(strncmp(d.first->message, prefix, strlen(prefix)) == 0, "%s",
		      d.first->message);
	return d.first->message;
}

#define assert_flags(f, text)                                                          \
	do {                                                                           \
		const char *msg_ = first_error(f);                                     \
		ck_assert_msg(strstr(msg_, text) != NULL, "expected '%s' in: %s", text, msg_); \
	} while (0)

/* Parse a file (which runs the verifier) and verify it again explicitly;
 * returns 1 if the file exists. */
static int verify_file(const char *path)
{
	char *text = tu_read_file(path);
	if (!text)
		return 0;
	Module *m = tu_parse(&arena, path, text);
	free(text);
	DiagList d;
	diag_init(&d, &arena);
	bool ok = ir_verify_module(m, &d);
	ck_assert_msg(ok && !d.first, "%s: %s", path, d.first ? d.first->message : "?");
	return 1;
}

/* ---------- well-formed IR passes ---------- */

START_TEST(print_fixtures_are_well_formed)
{
	char **names;
	int n = tu_list_dir("tests/data/print", &names);
	ck_assert_int_gt(n, 0);
	int files = 0;
	for (int i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof path, "tests/data/print/%s", names[i]);
		files += verify_file(path);
	}
	tu_free_list(names, n);
	ck_assert_int_eq(files, n);
}
END_TEST

START_TEST(conformance_kernels_are_well_formed)
{
	const char *shared = tu_shared_dir();
	char base[1024];
	snprintf(base, sizeof base, "%s/conformance", shared ? shared : "../shared");
	char **cases;
	int n = tu_list_dir(base, &cases);
	int files = 0;
	for (int i = 0; i < n; i++) {
		static const char *const names[] = {"before.tir", "after.tir"};
		for (int k = 0; k < 2; k++) {
			char path[2048];
			snprintf(path, sizeof path, "%s/%s/%s", base, cases[i], names[k]);
			files += verify_file(path);
		}
	}
	tu_free_list(cases, n);
	if (n == 0)
		fprintf(stderr, "verify: %s not found, conformance kernels skipped\n", base);
	else
		ck_assert_int_gt(files, 0);
}
END_TEST

/* Forms the parser accepts that a naive verifier might not: names
 * shadowed by inner bindings, a shape over a top-level let, an allocation
 * whose shape names a loop variable, long let and elif chains. */
static const char *const hand_written[] = {
	"@T.prim_func\n"
	"def f(A: T.Buffer[(8, 8), \"int32\"]):\n"
	"    for i in range(8):\n"
	"        for i in range(8):\n"
	"            A[i, i] = i\n"
	"    for i in range(8):\n"
	"        i = i + 1\n"
	"        A[0, 0] = i\n",

	"@T.prim_func\n"
	"def g(a: T.handle, n: T.int32):\n"
	"    m = n + 1\n"
	"    A = T.match_buffer(a, (m,), \"float32\")\n"
	"    for i in range(m):\n"
	"        A[i] = T.float32(0)\n",

	"@T.prim_func\n"
	"def h(A: T.Buffer[(16,), \"int64\"], n: T.int64):\n"
	"    for i in T.serial(1, 4):\n"
	"        L = T.alloc_buffer((i,), \"int64\", scope=\"local\")\n"
	"        for j in range(i):\n"
	"            L[j] = A[j] + n\n"
	"        A[i] = L[0] if i > 0 else T.int64(0)\n"
	"    x = 1\n"
	"    y = x + 1\n"
	"    z = y * 2\n"
	"    if z < 0:\n"
	"        A[0] = 1\n"
	"    elif z < 1:\n"
	"        A[0] = 2\n"
	"    elif z < 2:\n"
	"        A[0] = T.undef()\n"
	"    else:\n"
	"        T.assume(A[1] == 3)\n",

	"@T.prim_func\n"
	"def k(A: T.Buffer[(4,), \"float32\"], B: T.Buffer[(4,), \"uint8\"]):\n"
	"    for i in T.vectorized(4):\n"
	"        A[i] = A[i] * 2 + B[i]\n"
	"        B[i] = T.uint8(1) if A[i] < 0.5 and not B[i] == 0 else B[i]\n"
	"        T.evaluate(T.min(i, 3) // 2 % 2)\n",
};

START_TEST(hand_written_kernels_are_well_formed)
{
	for (size_t i = 0; i < sizeof hand_written / sizeof *hand_written; i++) {
		Module *m = tu_parse(&arena, "hand.tir", hand_written[i]);
		DiagList d;
		diag_init(&d, &arena);
		ck_assert_msg(ir_verify_module(m, &d), "kernel %zu: %s", i,
			      d.first ? d.first->message : "?");
	}
}
END_TEST

START_TEST(committed_schedule_results_are_well_formed)
{
	Module *m = tu_parse(&arena, "s.tir",
			     "@T.prim_func\n"
			     "def s(A: T.Buffer[(16, 16), \"float32\"], B: T.Buffer[(16, 16), \"float32\"]):\n"
			     "    for i, j in T.grid(16, 16):\n"
			     "        B[i, j] = A[i, j] * 2.0\n");
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "io, ii = sch.split(\"i\", factor=4)\n"
				   "sch.reorder(\"ii\", \"j\")\n"
				   "sch.parallel(\"io\")"),
			 STEP_COMMITTED);
	DiagList d;
	diag_init(&d, &arena);
	ck_assert(ir_verify_module(s->mod, &d));
	sched_free(s);
}
END_TEST

/* Layouts (kernel/verify.c checks their maps too): chained on a
 * parameter, and on an allocated cache with padding. */
START_TEST(transformed_buffers_are_well_formed)
{
	Module *m = tu_parse(&arena, "l.tir",
			     "@T.prim_func\n"
			     "def l(A: T.Buffer[(14, 60), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
			     "    with T.block(\"compute\"):\n"
			     "        for i in T.serial(14):\n"
			     "            B[i] = 0\n"
			     "            for j in T.serial(60):\n"
			     "                B[i] = B[i] + A[i, j]\n");
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i, j: "
				   "[i // 4, i % 4, j], pad_value=T.undef())\n"
				   "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda io, ii, j: "
				   "[io, ii, j // 8, j % 8], pad_value=0)"),
			 STEP_COMMITTED);
	const Buffer *a = sched_func(s)->params[0].buf;
	ck_assert_ptr_nonnull(a->layout);
	ck_assert_ptr_nonnull(a->layout->logical->layout);
	DiagList d;
	diag_init(&d, &arena);
	ck_assert_msg(ir_verify_module(s->mod, &d), "%s", d.first ? d.first->message : "?");
	sched_free(s);

	m = tu_parse(&arena, "c.tir",
		     "@T.prim_func\n"
		     "def c(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(1,), \"int32\"]):\n"
		     "    B[0] = 0\n"
		     "    with T.block(\"compute\"):\n"
		     "        for i in T.serial(14):\n"
		     "            B[0] = B[0] + A[i]\n");
	s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "A_local = sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"local\")\n"
				   "sch.transform_layout(buffer=\"A_local\", index_map=lambda i: [i // 4, i % 4], "
				   "pad_value=0)"),
			 STEP_COMMITTED);
	ck_assert_msg(ir_verify_module(s->mod, &d), "%s", d.first ? d.first->message : "?");
	sched_free(s);
}
END_TEST

START_TEST(constructor_rules_are_accepted)
{
	/* an integer literal adapts to the other operand (ir.h), loop
	 * bounds included; a sibling loop may reuse a loop's Var */
	Var *i = var("i", DT_INT64), *n = var("n", DT_INT64);
	Buffer *a = buffer1("A", DT_INT64, 8);
	Expr *shape = ref(n);
	Buffer *b = ir_buffer(&arena, "B", DT_INT64, 1, &shape, S0);
	Stmt *first = ir_for(&arena, i, lit(0), lit(8), FOR_SERIAL,
			     store1(a, ref(i), ir_add(&arena, ref(i), lit(1))), S0);
	Stmt *second = ir_for(&arena, i, lit(0), ref(n), FOR_SERIAL,
			      store1(b, ir_sub(&arena, ref(n), ref(i)), ref(i)), S0);
	Param ps[3] = {{.kind = PARAM_BUFFER, .buf = a},
		       {.kind = PARAM_BUFFER, .buf = b},
		       {.kind = PARAM_SCALAR, .var = n}};
	assert_ok(ir_func(&arena, "f", 3, ps, seq2(first, second), S0));
}
END_TEST

/* ---------- scopes ---------- */

START_TEST(out_of_scope_variable_is_flagged)
{
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	assert_flags(func_of(a, NULL, store1(a, ref(i), lit(0))),
		     "variable 'i' (id");
	assert_flags(func_of(a, NULL, store1(a, ref(i), lit(0))), "is used outside its scope");
}
END_TEST

START_TEST(loop_variable_used_after_its_loop_is_flagged)
{
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *body = seq2(loop(i, 8, store1(a, ref(i), lit(0))), store1(a, lit(0), ref(i)));
	assert_flags(func_of(a, NULL, body), "variable 'i'");
}
END_TEST

START_TEST(shadowed_loop_variable_is_flagged)
{
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *inner = loop(i, 8, store1(a, ref(i), lit(0)));
	assert_flags(func_of(a, NULL, loop(i, 8, inner)),
		     "loop variable 'i' is bound again inside its own scope");
}
END_TEST

START_TEST(let_rebinding_a_loop_variable_is_flagged)
{
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *let = ir_letstmt(&arena, i, lit(3), store1(a, ref(i), lit(0)), S0);
	assert_flags(func_of(a, NULL, loop(i, 8, let)),
		     "let variable 'i' is bound again inside its own scope");
	/* and a loop over a scalar parameter */
	Var *n = var("n", DT_INT32);
	assert_flags(func_of(a, n, loop(n, 8, store1(a, ref(n), lit(0)))),
		     "loop variable 'n' is bound again");
}
END_TEST

START_TEST(let_expression_scopes_its_body_only)
{
	Var *t = var("t", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Expr *let = ir_let(&arena, t, lit(2), ir_mul(&arena, ref(t), ref(t)), S0);
	assert_ok(func_of(a, NULL, store1(a, lit(0), let)));
	/* the let's own value cannot see it */
	Expr *self = ir_let(&arena, t, ref(t), ref(t), S0);
	assert_flags(func_of(a, NULL, store1(a, lit(0), self)), "variable 't'");
}
END_TEST

START_TEST(buffer_outside_its_allocation_is_flagged)
{
	Buffer *a = buffer1("A", DT_INT32, 8), *l = buffer1("L", DT_INT32, 8);
	Stmt *alloc = ir_alloc(&arena, l, store1(l, lit(0), lit(1)), S0);
	Stmt *after = store1(a, lit(0), load1(l, lit(0)));
	assert_flags(func_of(a, NULL, seq2(alloc, after)),
		     "buffer 'L' is used outside its scope");
	/* and a buffer that is neither a parameter nor allocated */
	assert_flags(func_of(a, NULL, store1(l, lit(0), lit(1))), "buffer 'L'");
}
END_TEST

START_TEST(allocation_shape_is_checked_in_the_enclosing_scope)
{
	Var *i = var("i", DT_INT32), *j = var("j", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Expr *shape = ref(j);
	Buffer *l = ir_buffer(&arena, "L", DT_INT32, 1, &shape, S0);
	Stmt *alloc = ir_alloc(&arena, l, store1(l, lit(0), lit(1)), S0);
	assert_flags(func_of(a, NULL, loop(i, 8, alloc)), "variable 'j'");
}
END_TEST

/* ---------- dtypes ---------- */

START_TEST(binary_operand_dtype_mismatch_is_flagged)
{
	Var *i = var("i", DT_INT32), *n = var("n", DT_INT64);
	Buffer *a = buffer1("A", DT_INT64, 8);
	Expr *sum = ir_add(&arena, ref(i), ref(n)); /* ir_bin widens: int64 */
	assert_flags(func_of(a, n, loop(i, 8, store1(a, lit(0), sum))),
		     "'+' of int32 and int64 has dtype int64");
	Expr *cmp = ir_bin(&arena, OP_LT, ref(i), ref(n), S0);
	Stmt *guarded = ir_if(&arena, cmp, store1(a, lit(0), ref(n)), NULL, S0);
	assert_flags(func_of(a, n, loop(i, 8, guarded)), "comparison '<' of int32 and int64");
	Expr *div = ir_bin(&arena, OP_DIV, ref(n), ref(n), S0);
	assert_flags(func_of(a, n, store1(a, lit(0), div)), "true division is for floats only");
}
END_TEST

START_TEST(conditions_must_be_bool)
{
	Var *n = var("n", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	assert_flags(func_of(a, n, ir_if(&arena, ref(n), store1(a, lit(0), lit(1)), NULL, S0)),
		     "an if condition has dtype int32, not bool");
	assert_flags(func_of(a, n, ir_assume(&arena, ref(n), S0)), "an assumption has dtype int32");
	Expr *sel = ir_select(&arena, ref(n), lit(1), lit(2), S0);
	assert_flags(func_of(a, n, store1(a, lit(0), sel)), "a select condition has dtype int32");
	Expr *and = ir_bin(&arena, OP_AND, ref(n), ir_bool(&arena, true), S0);
	assert_flags(func_of(a, n, ir_assume(&arena, and, S0)), "logic is on bools");
}
END_TEST

START_TEST(indices_must_be_integers_without_undef)
{
	Var *x = var("x", DT_FLOAT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Param ps[2] = {{.kind = PARAM_BUFFER, .buf = a}, {.kind = PARAM_SCALAR, .var = x}};
	Func *f = ir_func(&arena, "f", 2, ps, store1(a, ref(x), lit(0)), S0);
	assert_flags(f, "an index has dtype float32, not an integer dtype");
	Stmt *undef_index = store1(a, ir_undef(&arena, DT_INT32, S0), lit(0));
	assert_flags(func_of(a, NULL, undef_index), "T.undef() in an index");
	/* T.undef() as a stored value is fine */
	assert_ok(func_of(a, NULL, store1(a, lit(0), ir_undef(&arena, DT_INT32, S0))));
}
END_TEST

START_TEST(store_value_must_have_the_buffer_dtype)
{
	Buffer *a = buffer1("A", DT_FLOAT32, 8);
	assert_flags(func_of(a, NULL, store1(a, lit(0), lit(1))),
		     "store of a int32 value into float32 buffer 'A'");
	Expr *bad_load = load1(a, lit(0));
	bad_load->dtype = DT_INT32;
	Buffer *b = buffer1("B", DT_INT32, 8);
	Param ps[2] = {{.kind = PARAM_BUFFER, .buf = a}, {.kind = PARAM_BUFFER, .buf = b}};
	assert_flags(ir_func(&arena, "f", 2, ps, store1(b, lit(0), bad_load), S0),
		     "load of float32 buffer 'A' has dtype int32");
}
END_TEST

START_TEST(loop_variable_dtype_must_match_its_bounds)
{
	Var *i = var("i", DT_INT32), *n = var("n", DT_INT64);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *l = ir_for(&arena, i, lit(0), ref(n), FOR_SERIAL, store1(a, ref(i), lit(0)), S0);
	assert_flags(func_of(a, n, l), "loop variable 'i' is int32 but its bounds are int32 and int64");
	Var *f = var("f", DT_FLOAT32);
	Stmt *fl = ir_for(&arena, f, ir_float(&arena, 0, DT_FLOAT32, S0),
			  ir_float(&arena, 4, DT_FLOAT32, S0), FOR_SERIAL, ir_pass(&arena, S0), S0);
	assert_flags(func_of(a, NULL, fl), "a loop bound has dtype float32");
}
END_TEST

START_TEST(variable_references_and_lets_keep_their_dtype)
{
	Var *n = var("n", DT_INT32), *t = var("t", DT_INT64);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Expr *r = ref(n);
	r->dtype = DT_INT64;
	assert_flags(func_of(a, n, ir_eval(&arena, r, S0)),
		     "reference to 'n' has dtype int64 but the variable is int32");
	Stmt *let = ir_letstmt(&arena, t, ref(n), ir_pass(&arena, S0), S0);
	assert_flags(func_of(a, n, let), "let variable 't' is int64 but its value is int32");
	Expr *big = ir_int(&arena, 300, DT_INT8, S0);
	assert_flags(func_of(a, NULL, ir_eval(&arena, big, S0)), "literal 300 does not fit in int8");
	Expr *handle = ir_undef(&arena, DT_VOID, S0);
	assert_flags(func_of(a, NULL, store1(a, lit(0), handle)), "EX_UNDEF of dtype void");
}
END_TEST

/* ---------- shapes ---------- */

START_TEST(wrong_index_count_is_flagged)
{
	Expr *shape[2] = {lit(4), lit(4)};
	Buffer *a = ir_buffer(&arena, "A", DT_INT32, 2, shape, S0);
	assert_flags(func_of(a, NULL, store1(a, lit(0), lit(0))),
		     "store of buffer 'A' has 1 index but the buffer has 2 dimensions");
	Expr *idx[3] = {lit(0), lit(0), lit(0)};
	Expr *l = ir_load(&arena, a, 3, idx, S0);
	Stmt *st = ir_store(&arena, a, 2, idx, l, S0);
	assert_flags(func_of(a, NULL, st), "load of buffer 'A' has 3 indices");
}
END_TEST

START_TEST(buffer_declarations_are_checked)
{
	Var *n = var("n", DT_INT32), *i = var("i", DT_INT32);
	Expr *shape = ref(i); /* a parameter's shape over a body variable */
	Buffer *a = ir_buffer(&arena, "A", DT_INT32, 1, &shape, S0);
	assert_flags(func_of(a, n, loop(i, 4, ir_pass(&arena, S0))), "variable 'i'");
	Expr *fshape = ir_float(&arena, 4, DT_FLOAT32, S0);
	Buffer *b = ir_buffer(&arena, "B", DT_INT32, 1, &fshape, S0);
	assert_flags(func_of(b, NULL, ir_pass(&arena, S0)), "a buffer shape has dtype float32");
	Expr *two[2] = {lit(4), lit(4)};
	Buffer *c = ir_buffer(&arena, "C", DT_INT32, 2, two, S0);
	int seps[1] = {2};
	c->naxis_separators = 1;
	c->axis_separators = seps;
	assert_flags(func_of(c, NULL, ir_pass(&arena, S0)), "axis separators must be increasing");
}
END_TEST

START_TEST(layout_maps_are_checked)
{
	Buffer *logical = buffer1("A", DT_INT32, 8);
	Var *x = var("x", DT_INT32), *stray = var("y", DT_INT32);
	Expr *shape[2] = {lit(2), lit(4)};
	Buffer *phys = ir_buffer(&arena, "A", DT_INT32, 2, shape, S0);
	Expr *map[2] = {ir_bin(&arena, OP_FLOORDIV, ref(x), lit(4), S0), ref(stray)};
	Var *xs[1] = {x};
	Layout *l = arena_alloc(&arena, sizeof *l);
	l->logical = logical;
	l->nvars = 1;
	l->vars = xs;
	l->map = map;
	phys->layout = l;
	Expr *idx[2] = {lit(0), lit(0)};
	Func *f = func_of(phys, NULL, ir_store(&arena, phys, 2, idx, lit(0), S0));
	assert_flags(f, "variable 'y'");
	map[1] = ir_bin(&arena, OP_FLOORMOD, ref(x), lit(4), S0);
	assert_ok(f);
	l->nvars = 2;
	assert_flags(f, "layout of buffer 'A' does not match its logical buffer");
}
END_TEST

/* ---------- structure ---------- */

START_TEST(missing_children_are_flagged)
{
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	assert_flags(func_of(a, NULL, loop(i, 8, NULL)), "missing statement");
	assert_flags(func_of(a, NULL, store1(a, lit(0), NULL)), "missing expression (a stored value)");
	assert_flags(func_of(a, NULL, NULL), "missing statement");
	Stmt *items[2] = {ir_pass(&arena, S0), NULL};
	assert_flags(func_of(a, NULL, ir_seq(&arena, 2, items, S0)), "missing statement");
	assert_flags(func_of(a, NULL, ir_alloc(&arena, NULL, ir_pass(&arena, S0), S0)),
		     "allocation without a buffer");
}
END_TEST

START_TEST(invalid_kinds_are_flagged)
{
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *s = ir_pass(&arena, S0);
	s->kind = ST_COUNT;
	assert_flags(func_of(a, NULL, s), "invalid statement kind");
	Expr *e = lit(1);
	e->kind = (ExprKind)42;
	assert_flags(func_of(a, NULL, ir_eval(&arena, e, S0)), "invalid expression kind 42");
	Expr *b = ir_add(&arena, lit(1), lit(2));
	b->u.bin.op = OP_COUNT;
	assert_flags(func_of(a, NULL, ir_eval(&arena, b, S0)), "invalid binary operator");
	Expr *d = lit(1);
	d->dtype = (DType)99;
	assert_flags(func_of(a, NULL, ir_eval(&arena, d, S0)), "<invalid dtype>");
}
END_TEST

START_TEST(messages_point_at_the_source)
{
	Source src = {"k.tir", "def f():\n    A[i] = 0\n"};
	Span at = {&src, 2, 7, 1};
	Var *i = var("i", DT_INT32);
	Buffer *a = buffer1("A", DT_INT32, 8);
	Stmt *st = store1(a, ir_varref(&arena, i, at), lit(0));
	DiagList d;
	diag_init(&d, &arena);
	ck_assert(!ir_verify_func(func_of(a, NULL, st), &d));
	char *text = diag_render(&d);
	ck_assert_msg(strncmp(text, "k.tir:2:7: error: internal error: IR verifier: ", 47) == 0 &&
			      strstr(text, "function 'f': variable 'i'") != NULL, "%s", text);
	free(text);
	/* a node without a span: the innermost enclosing one with a span */
	Stmt *st2 = store1(a, ref(i), lit(0));
	st2->span = (Span){&src, 2, 5, 8};
	diag_init(&d, &arena);
	ck_assert(!ir_verify_func(func_of(a, NULL, st2), &d));
	ck_assert_int_eq(d.first->span.line, 2);
	ck_assert_int_eq(d.first->span.col, 5);
}
END_TEST

START_TEST(module_checks_every_function_once)
{
	Buffer *a = buffer1("A", DT_INT32, 8);
	Func *good = func_of(a, NULL, store1(a, lit(0), lit(1)));
	Func *twice[2] = {good, good};
	Module *m = ir_module(&arena, "M", 2, twice, S0);
	DiagList d;
	diag_init(&d, &arena);
	ck_assert(!ir_verify_module(m, &d));
	ck_assert_ptr_nonnull(strstr(d.first->message, "function 'f' is defined twice"));
	/* ir_verify_changed skips what the module before held */
	Func *bad = func_of(a, NULL, store1(a, lit(0), NULL));
	Module *before = ir_module(&arena, NULL, 1, &bad, S0);
	ck_assert_ptr_null(ir_verify_changed(&arena, before, before));
	Module *after = ir_module(&arena, NULL, 1, &good, S0);
	ck_assert_ptr_null(ir_verify_changed(&arena, after, before));
	const char *msg = ir_verify_changed(&arena, before, after);
	ck_assert_ptr_nonnull(msg);
	ck_assert_ptr_nonnull(strstr(msg, "missing expression"));
}
END_TEST

/* ---------- the schedule: a malformed commit is a rejection ---------- */

static const char *const small_kernel =
	"@T.prim_func\n"
	"def f(A: T.Buffer[(8,), \"int32\"]):\n"
	"    for i in range(8):\n"
	"        A[i] = i\n";

/* f with its store's value an out-of-scope variable (no other walker
 * minds: loops and accesses are as before). */
static Func *malformed_copy(const Func *f)
{
	const Stmt *l = f->body;
	ck_assert_int_eq(l->kind, ST_FOR);
	const Stmt *st = l->u.loop.body;
	Stmt *bad = ir_store(&arena, st->u.store.buf, st->u.store.nidx, st->u.store.idx,
			     ref(var("ghost", DT_INT32)), st->span);
	Stmt *nl = ir_for(&arena, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
			  bad, l->span);
	return ir_func(&arena, f->name, f->nparams, f->params, nl, f->span);
}

START_TEST(malformed_step_result_is_rejected)
{
	Schedule *s = tu_schedule(&arena, tu_parse(&arena, "f.tir", small_kernel));
	Module *before = s->mod;
	DiagList d;
	diag_init(&d, &arena);
	RwCtx c;
	sched_begin(s, &c, "fake()", S0, &d);
	c.out = malformed_copy(c.func);
	StepReport *r = sched_finish(s, &c, RW_OK);
	ck_assert_int_eq(r->status, STEP_REJECTED);
	ck_assert_msg(strncmp(r->reason, "internal error: IR verifier: ", 29) == 0 &&
			      strstr(r->reason, "function 'f': variable 'ghost'") != NULL, "%s", r->reason);
	ck_assert_ptr_eq(s->mod, before);
	ck_assert_ptr_eq(r->result, sched_func(s));
	char *text = sched_report_text(r);
	ck_assert_ptr_nonnull(strstr(text, "REJECTED"));
	free(text);
	sched_free(s);
}
END_TEST

START_TEST(malformed_compound_result_is_rejected)
{
	Schedule *s = tu_schedule(&arena, tu_parse(&arena, "f.tir", small_kernel));
	Module *before = s->mod;
	DiagList d;
	diag_init(&d, &arena);
	/* a sub-rewrite: its failure, and the module stays */
	Compound k;
	sched_compound_begin(s, &k, "fake_compound()", S0, &d);
	RwCtx c;
	sched_sub_begin(&k, &c, "fake_sub()");
	c.out = malformed_copy(c.func);
	bool proven = true;
	ck_assert_int_eq(sched_sub_finish(&k, &c, RW_OK, &proven), RW_OK);
	ck_assert(!proven);
	ck_assert_ptr_eq(s->mod, before);
	/* a state set without a proof: the end of the call rejects it */
	sched_compound_set(&k, malformed_copy(sched_func(s)));
	StepReport *r = sched_compound_end(&k, STEP_COMMITTED, NULL);
	ck_assert_int_eq(r->status, STEP_REJECTED);
	ck_assert_ptr_nonnull(strstr(r->reason, "internal error: IR verifier: function 'f'"));
	ck_assert_ptr_eq(s->mod, before);
	sched_free(s);
}
END_TEST

/* ---------- math calls ---------- */

START_TEST(math_calls_are_checked)
{
	Var *x = var("x", DT_FLOAT32), *n = var("n", DT_INT32);
	Buffer *f = buffer1("F", DT_FLOAT32, 8), *a = buffer1("A", DT_INT32, 8);
	Expr *ok[3] = {ref(x), ref(x), ref(x)};
	assert_ok(func_of(f, x, store1(f, lit(0), ir_call(&arena, MF_FMA, ok, S0))));
	Expr *iabs[1] = {ref(n)};
	assert_ok(func_of(a, n, store1(a, lit(0), ir_call(&arena, MF_ABS, iabs, S0))));
	/* an integer operand of a float function */
	assert_flags(func_of(a, n, store1(a, lit(0), ir_call(&arena, MF_EXP, iabs, S0))),
		     "T.exp of dtype int32: math calls are on floats");
	/* operands of another dtype than the call */
	Expr *mixed[2] = {ref(x), ir_float(&arena, 2.0, DT_FLOAT64, S0)};
	assert_flags(func_of(f, x, store1(f, lit(0), ir_call(&arena, MF_POW, mixed, S0))),
		     "T.pow of dtype float32 has an operand of dtype float64");
	/* a wrong operand count */
	Expr *c = ir_call(&arena, MF_SQRT, ok, S0);
	c->u.call.nargs = 2;
	assert_flags(func_of(f, x, store1(f, lit(0), c)), "T.sqrt with 2 operands, it takes 1");
}
END_TEST

Suite *suite_verify(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("well_formed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, print_fixtures_are_well_formed);
	tcase_add_test(tc, conformance_kernels_are_well_formed);
	tcase_add_test(tc, hand_written_kernels_are_well_formed);
	tcase_add_test(tc, committed_schedule_results_are_well_formed);
	tcase_add_test(tc, transformed_buffers_are_well_formed);
	tcase_add_test(tc, constructor_rules_are_accepted);
	suite_add_tcase(s, tc);

	tc = tcase_create("scopes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, out_of_scope_variable_is_flagged);
	tcase_add_test(tc, loop_variable_used_after_its_loop_is_flagged);
	tcase_add_test(tc, shadowed_loop_variable_is_flagged);
	tcase_add_test(tc, let_rebinding_a_loop_variable_is_flagged);
	tcase_add_test(tc, let_expression_scopes_its_body_only);
	tcase_add_test(tc, buffer_outside_its_allocation_is_flagged);
	tcase_add_test(tc, allocation_shape_is_checked_in_the_enclosing_scope);
	suite_add_tcase(s, tc);

	tc = tcase_create("dtypes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, binary_operand_dtype_mismatch_is_flagged);
	tcase_add_test(tc, conditions_must_be_bool);
	tcase_add_test(tc, indices_must_be_integers_without_undef);
	tcase_add_test(tc, store_value_must_have_the_buffer_dtype);
	tcase_add_test(tc, loop_variable_dtype_must_match_its_bounds);
	tcase_add_test(tc, variable_references_and_lets_keep_their_dtype);
	suite_add_tcase(s, tc);

	tc = tcase_create("math_calls");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, math_calls_are_checked);
	suite_add_tcase(s, tc);

	tc = tcase_create("shapes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, wrong_index_count_is_flagged);
	tcase_add_test(tc, buffer_declarations_are_checked);
	tcase_add_test(tc, layout_maps_are_checked);
	suite_add_tcase(s, tc);

	tc = tcase_create("structure");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, missing_children_are_flagged);
	tcase_add_test(tc, invalid_kinds_are_flagged);
	tcase_add_test(tc, messages_point_at_the_source);
	tcase_add_test(tc, module_checks_every_function_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("schedule");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, malformed_step_result_is_rejected);
	tcase_add_test(tc, malformed_compound_result_is_rejected);
	suite_add_tcase(s, tc);
	return s;
}
