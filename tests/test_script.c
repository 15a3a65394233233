/* tests/test_script.c — the schedule-script reader (rewrites/script.c):
 * every call form of interfaces.md, argument classification and text
 * ranges, layout (comments, `;`, calls spanning lines), lambdas handed to
 * parse_lambda_range in a function's scope, and malformed scripts. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/parse.h"
#include "rewrites/schedule/script.h"
#include "tests/testutil.h"

static Arena arena;
static DiagList diags;
static Source *last_src;

static void setup(void)
{
	arena_init(&arena);
	diag_init(&diags, &arena);
}

static void teardown(void) { arena_free(&arena); }

static Script *read_script(const char *text)
{
	diag_init(&diags, &arena);
	last_src = source_from_string(&arena, "s.sched", text);
	return script_parse(&arena, last_src, &diags);
}

static Script *read_ok(const char *text)
{
	Script *s = read_script(text);
	if (!s) {
		char *r = diag_render(&diags);
		ck_abort_msg("script failed:\n%s", r);
	}
	return s;
}

/* The text of an argument's value. */
static const char *arg_text(const ScriptArg *a)
{
	return arena_strndup(&arena, last_src->text + a->start,
			     (size_t)(a->end - a->start));
}

/* The interfaces.md example, verbatim. */
static const char *interfaces_example =
	"sch.work_on(\"consumer\")                       # module: pick the function\n"
	"io, ii = sch.split(\"i\", factor=4)             # tail=\"guard\" (default) | \"perfect\" | \"cut\" | \"cut_and_guard\"\n"
	"k = sch.fuse(\"io\", \"ii\")\n"
	"sch.reorder(\"j\", \"i\")                         # new order, outer to inner\n"
	"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
	"sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda n, h, w, c: [n, c // 4, h, T.axis_separator, w, c % 4])\n"
	"sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8], pad_value=T.undef(), inverse=lambda io, ii: [8 * io + ii - 2])\n"
	"sch.sequential_buffer_access(block=\"compute\", buffer=\"B\")\n"
	"sch.merge_adjacent_loops(\"i#1\", \"i#2\")\n"
	"sch.fission(\"i\", after=0)                    # split loop i's body after its statement 0 (0-based)\n"
	"sch.remove_branching_through_overcompute(block=\"compute\")\n"
	"sch.remove_overcompute_through_branching(block=\"compute\")\n"
	"sch.simplify()\n"
	"sch.remove_no_op()\n"
	"sch.hoist_expression(conditionals=\"boolean_expression\")\n"
	"sch.reduce_loop_extents()\n"
	"sch.merge_conditionals()\n"
	"A_local = sch.cache_read(buffer=\"A\", scope=\"local\")\n"
	"sch.compute_at(block=\"B\", loop=\"xo\")\n"
	"sch.parallel(\"io\"); sch.vectorize(\"ii\"); sch.unroll(\"f\")\n"
	"sch.float_mode(\"ieee\")                        # \"real\" is the default\n";

START_TEST(interfaces_example_reads_every_call)
{
	Script *s = read_ok(interfaces_example);
	static const char *methods[] = {
		"work_on", "split", "fuse", "reorder", "transform_layout",
		"transform_layout", "transform_layout", "sequential_buffer_access",
		"merge_adjacent_loops", "fission",
		"remove_branching_through_overcompute",
		"remove_overcompute_through_branching", "simplify", "remove_no_op",
		"hoist_expression", "reduce_loop_extents", "merge_conditionals",
		"cache_read", "compute_at", "parallel", "vectorize", "unroll",
		"float_mode"};
	int n = (int)(sizeof methods / sizeof methods[0]);
	ck_assert_int_eq(s->ncalls, n);
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(s->calls[i].method, methods[i]);
	ck_assert_int_eq(s->calls[0].span.line, 1);
	ck_assert_int_eq(s->calls[19].span.line, 20);
	ck_assert_int_eq(s->calls[21].span.line, 20);
	ck_assert_int_eq(s->calls[21].span.col, 42);
	ck_assert_int_eq(s->calls[22].span.line, 21);
	ck_assert_ptr_eq(s->src, last_src);
}
END_TEST

START_TEST(split_with_lhs_and_keywords)
{
	Script *s = read_ok("io, ii = sch.split(\"i\", factor=4, tail=\"cut\")\n");
	const ScriptCall *c = &s->calls[0];
	ck_assert_int_eq(c->nlhs, 2);
	ck_assert_str_eq(c->lhs[0], "io");
	ck_assert_str_eq(c->lhs[1], "ii");
	ck_assert_int_eq(c->nargs, 3);
	const ScriptArg *loop = script_arg(c, 0, "loop");
	ck_assert_int_eq(loop->kind, ARG_STRING);
	ck_assert_str_eq(loop->str, "i");
	ck_assert_ptr_null(loop->keyword);
	const ScriptArg *f = script_arg(c, 1, "factor");
	ck_assert_int_eq(f->kind, ARG_INT);
	ck_assert_int_eq(f->ival, 4);
	ck_assert_str_eq(f->keyword, "factor");
	ck_assert_str_eq(script_arg(c, 2, "tail")->str, "cut");
	ck_assert_ptr_null(script_arg(c, 3, "nothing"));
	ck_assert_ptr_null(script_arg(c, -1, NULL));
	ck_assert_int_eq(c->span.col, 1);
	ck_assert_int_eq(c->span.len, 45);
	ck_assert_int_eq(f->span.col, 32);
	ck_assert_str_eq(arg_text(f), "4");
}
END_TEST

START_TEST(single_lhs_and_no_lhs)
{
	Script *s = read_ok("k = sch.fuse(\"io\", \"ii\")\nsch.fuse(\"a\", \"b\")\n"
			    "A_local = sch.cache_read(buffer=\"A\", scope=\"local\")\n");
	ck_assert_int_eq(s->calls[0].nlhs, 1);
	ck_assert_str_eq(s->calls[0].lhs[0], "k");
	ck_assert_int_eq(s->calls[0].nargs, 2);
	ck_assert_int_eq(s->calls[1].nlhs, 0);
	ck_assert_str_eq(s->calls[2].lhs[0], "A_local");
	ck_assert_str_eq(script_arg(&s->calls[2], -1, "scope")->str, "local");
}
END_TEST

START_TEST(argument_kinds)
{
	Script *s = read_ok("sch.t(1, -7, 2.5, -0.5, 'sq', None, True, False, T.undef(),\n"
			    "      io, lambda i: [i // 4, i % 4], 2 * 3, -n, (1), 1e-3,\n"
			    "      T.undef(dtype=\"float32\"), [1, 2], T.float32(\"inf\"))\n");
	const ScriptCall *c = &s->calls[0];
	ck_assert_int_eq(c->nargs, 18);
	static const ScriptArgKind kinds[] = {
		ARG_INT, ARG_INT, ARG_FLOAT, ARG_FLOAT, ARG_STRING, ARG_NONE,
		ARG_BOOL, ARG_BOOL, ARG_UNDEF, ARG_NAME, ARG_LAMBDA, ARG_EXPR,
		ARG_EXPR, ARG_EXPR, ARG_FLOAT, ARG_UNDEF, ARG_LIST, ARG_EXPR};
	for (int i = 0; i < 18; i++)
		ck_assert_msg(c->args[i].kind == kinds[i], "arg %d kind %d", i,
			      c->args[i].kind);
	ck_assert_int_eq(c->args[0].ival, 1);
	ck_assert_int_eq(c->args[1].ival, -7);
	ck_assert(c->args[2].fval == 2.5);
	ck_assert(c->args[3].fval == -0.5);
	ck_assert_str_eq(c->args[4].str, "sq");
	ck_assert_int_eq(c->args[6].ival, 1);
	ck_assert_int_eq(c->args[7].ival, 0);
	ck_assert_str_eq(c->args[9].str, "io");
	ck_assert_str_eq(arg_text(&c->args[10]), "lambda i: [i // 4, i % 4]");
	ck_assert_str_eq(arg_text(&c->args[11]), "2 * 3");
	ck_assert_str_eq(arg_text(&c->args[8]), "T.undef()");
	ck_assert_int_eq(c->args[10].span.line, 2);
	ck_assert_int_eq(c->args[10].span.col, 11);
	ck_assert(c->args[14].fval == 1e-3);
	Script *m = read_ok("sch.x(a=-9223372036854775808)\n");
	ck_assert(m->calls[0].args[0].ival == INT64_MIN);
}
END_TEST

/* TVM's forms: lists and tuples of items, loops[k], *loops, `_` and a
 * starred name on the left */
START_TEST(lists_indices_and_unpacking)
{
	Script *s = read_ok("_, *rest, _ = sch.t([None, 8], (\"read\", 0), loops[-1], *loops, [], (1,), (2))\n");
	const ScriptCall *c = &s->calls[0];
	ck_assert_int_eq(c->nlhs, 3);
	ck_assert_int_eq(c->lhs_star, 1);
	ck_assert_str_eq(c->lhs[1], "rest");
	ck_assert_int_eq(c->nargs, 7);
	ck_assert_int_eq(c->args[0].kind, ARG_LIST);
	ck_assert_int_eq(c->args[0].nitems, 2);
	ck_assert_int_eq(c->args[0].items[0].kind, ARG_NONE);
	ck_assert_int_eq(c->args[0].items[1].ival, 8);
	ck_assert_int_eq(c->args[0].items[1].span.col, 28);
	ck_assert_int_eq(c->args[1].kind, ARG_LIST);
	ck_assert_str_eq(c->args[1].items[0].str, "read");
	ck_assert_int_eq(c->args[2].kind, ARG_INDEX);
	ck_assert_str_eq(c->args[2].str, "loops");
	ck_assert_int_eq(c->args[2].ival, -1);
	ck_assert_int_eq(c->args[3].kind, ARG_STAR);
	ck_assert_str_eq(c->args[3].str, "loops");
	ck_assert_int_eq(c->args[4].kind, ARG_LIST);
	ck_assert_int_eq(c->args[4].nitems, 0);
	ck_assert_int_eq(c->args[5].kind, ARG_LIST);
	ck_assert_int_eq(c->args[5].nitems, 1);
	ck_assert_int_eq(c->args[6].kind, ARG_EXPR);
	ck_assert_int_eq(read_ok("a = sch.t()\n")->calls[0].lhs_star, -1);
	ck_assert_ptr_null(read_script("*a, *b = sch.t()\n"));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "only one name on the left of '=' may be starred"));
	ck_assert_ptr_null(read_script("a, a = sch.t()\n"));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "'a' is named twice"));
}
END_TEST

START_TEST(pad_value_forms)
{
	Script *s = read_ok(
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0.0)\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=None)\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=-1)\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=lambda io, ii: A[io, ii] * 0)\n");
	static const ScriptArgKind kinds[] = {ARG_INT, ARG_FLOAT, ARG_NONE,
					      ARG_UNDEF, ARG_INT, ARG_LAMBDA};
	for (int i = 0; i < 6; i++) {
		const ScriptArg *p = script_arg(&s->calls[i], -1, "pad_value");
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(p->kind, kinds[i]);
		const ScriptArg *m = script_arg(&s->calls[i], 1, "index_map");
		ck_assert_int_eq(m->kind, ARG_LAMBDA);
	}
	ck_assert_int_eq(script_arg(&s->calls[4], -1, "pad_value")->ival, -1);
	ck_assert_str_eq(arg_text(script_arg(&s->calls[5], -1, "pad_value")),
			 "lambda io, ii: A[io, ii] * 0");
}
END_TEST

START_TEST(layout_comments_semicolons_and_continuations)
{
	Script *s = read_ok("# a schedule\n"
			    "\n"
			    "   sch.simplify()   # leading spaces are fine\n"
			    "sch.parallel(\"io\"); sch.vectorize(\"ii\");\n"
			    "io, ii = sch.split(\n"
			    "    \"i\",          # the loop\n"
			    "    factor=4,\n"
			    ")\n"
			    "sch.remove_no_op()");
	ck_assert_int_eq(s->ncalls, 5);
	ck_assert_str_eq(s->calls[0].method, "simplify");
	ck_assert_int_eq(s->calls[0].nargs, 0);
	ck_assert_int_eq(s->calls[0].span.col, 4);
	ck_assert_str_eq(s->calls[2].method, "vectorize");
	ck_assert_int_eq(s->calls[3].nargs, 2);
	ck_assert_int_eq(script_arg(&s->calls[3], 1, "factor")->span.line, 7);
	ck_assert_str_eq(s->calls[4].method, "remove_no_op");
	Script *empty = read_ok("# nothing\n\n");
	ck_assert_int_eq(empty->ncalls, 0);
}
END_TEST

START_TEST(every_conformance_schedule_reads)
{
	const char *env = getenv("VS_SHARED");
	char *dir = arena_printf(&arena, "%s/conformance",
				 env && *env ? env : "../shared");
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = arena_printf(&arena, "%s/%s/schedule.sched", dir, e->d_name);
		diag_init(&diags, &arena);
		Source *src = source_read_file(&arena, path, &diags);
		if (!src)
			continue;
		Script *s = script_parse(&arena, src, &diags);
		if (!s) {
			char *r = diag_render(&diags);
			ck_abort_msg("%s", r);
		}
		ck_assert_int_ge(s->ncalls, 1);
		for (int i = 0; i < s->ncalls; i++)
			for (int k = 0; k < s->calls[i].nargs; k++) {
				const ScriptArg *a = &s->calls[i].args[k];
				ck_assert_int_le(a->start, a->end);
				ck_assert_int_le(a->end, (int)strlen(src->text));
			}
		count++;
	}
	closedir(d);
	ck_assert_int_ge(count, 20);
}
END_TEST

/* ---------- lambdas in a function's scope ---------- */

static Func *kernel(const char *text)
{
	diag_init(&diags, &arena);
	Source *src = source_from_string(&arena, "k.tir", text);
	Module *m = parse_module(&arena, src, &diags);
	if (!m) {
		char *r = diag_render(&diags);
		ck_abort_msg("%s", r);
	}
	return m->funcs[0];
}

START_TEST(lambda_argument_parses_with_axis_separator)
{
	Func *f = kernel(tu_fixture("script/lambda_argument_parses_with_axis_separator.tir"));
	Script *s = read_ok("sch.transform_layout(block=\"compute\", buffer=\"B\", "
			    "index_map=lambda n, h, w, c: [n, c // 4, h, T.axis_separator, w, c % 4])\n");
	const ScriptArg *m = script_arg(&s->calls[0], -1, "index_map");
	ck_assert_int_eq(m->kind, ARG_LAMBDA);
	ParseScope sc = {.func = f, .nvars = 0, .vars = NULL};
	Lambda *l = parse_lambda_range(&arena, s->src, m->start, m->end, &sc, &diags);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(l->nparams, 4);
	ck_assert_int_eq(l->nbody, 5);
	ck_assert_int_eq(l->nseps, 1);
	ck_assert_int_eq(l->seps[0], 3);
	ck_assert_int_eq(l->span.line, 1);
	ck_assert_int_eq(l->span.col, m->span.col);
}
END_TEST

START_TEST(pad_value_lambda_reads_the_buffer_and_expr_resolves)
{
	Func *f = kernel(tu_fixture("script/pad_value_lambda_reads_the_buffer_and_expr_resolves.tir"));
	Script *s = read_ok("sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4],\n"
			    "    pad_value=lambda io, ii: A[4 * io + ii - 2] + n, factor=n * 2)\n");
	ParseScope sc = {.func = f, .nvars = 0, .vars = NULL};
	const ScriptArg *p = script_arg(&s->calls[0], -1, "pad_value");
	Lambda *l = parse_lambda_range(&arena, s->src, p->start, p->end, &sc, &diags);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(l->nbody, 1);
	ck_assert_ptr_eq(l->body[0]->u.bin.a->u.load.buf, f->params[0].buf);
	const ScriptArg *x = script_arg(&s->calls[0], -1, "factor");
	ck_assert_int_eq(x->kind, ARG_EXPR);
	Expr *e = parse_expr_range(&arena, s->src, x->start, x->end, &sc, &diags);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_eq(e->u.bin.a->u.var, f->params[1].var);
	/* an unknown name points into the script */
	Script *bad = read_ok("sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, q])\n");
	const ScriptArg *bm = script_arg(&bad->calls[0], -1, "index_map");
	diag_init(&diags, &arena);
	ck_assert_ptr_null(parse_lambda_range(&arena, bad->src, bm->start, bm->end,
					      &sc, &diags));
	ck_assert_ptr_nonnull(strstr(diags.first->message, "unknown name 'q'"));
	ck_assert_int_eq(diags.first->span.col, 63);
}
END_TEST

/* ---------- malformed scripts ---------- */

static const struct {
	const char *text, *message;
	int line, col;
} script_errors[] = {
	{"split(\"i\", factor=4)\n", "expected 'sch.' call", 1, 1},
	{"sch.simplify()\nschedule.split(\"i\")\n", "expected 'sch.' call", 2, 1},
	{"sch.split(\"i\", factor=4\n", "'(' was never closed", 1, 10},
	{"sch.split(\"i\") sch.simplify()\n", "expected end of line or ';'", 1, 16},
	{"sch.split(factor=4, \"i\")\n", "positional argument after keyword", 1, 21},
	{"sch.split(\"i, factor=4)\n", "unterminated string", 1, 11},
	{"sch.split(\"i\",, factor=4)\n", "expected an argument value", 1, 15},
	{"sch.split(\"i\", factor=4, factor=2)\n", "argument 'factor' given twice", 1, 26},
	{"io, , ii = sch.split(\"i\")\n", "expected a name on the left", 1, 5},
	{"i, i = sch.split(\"i\", factor=4)\n", "'i' is named twice on the left of '='", 1, 4},
	{"io ii = sch.split(\"i\")\n", "expected 'sch.' call", 1, 1},
	{"sch.(\"i\")\n", "expected a method name after 'sch.'", 1, 5},
	{"sch.split\n", "expected '(' after the method name", 1, 10},
	{"sch.split(\"i\", factor=99999999999999999999)\n", "does not fit in int64", 1, 23},
	{"sch.split(\"i\", factor=4 $)\n", "unexpected character '$'", 1, 25},
	{"sch.split(\"i\"]\n", "']' does not match '('", 1, 14},
};

START_TEST(malformed_scripts_report_message_line_and_column)
{
	int n = (int)(sizeof script_errors / sizeof script_errors[0]);
	for (int i = 0; i < n; i++) {
		Script *s = read_script(script_errors[i].text);
		ck_assert_msg(s == NULL, "script case %d read", i);
		const Diag *g = diags.first;
		ck_assert_msg(g && strstr(g->message, script_errors[i].message),
			      "script case %d: %s", i, g ? g->message : "(none)");
		ck_assert_msg(g->span.line == script_errors[i].line &&
				      g->span.col == script_errors[i].col,
			      "script case %d (%s): at %d:%d, expected %d:%d", i,
			      g->message, g->span.line, g->span.col,
			      script_errors[i].line, script_errors[i].col);
	}
}
END_TEST

START_TEST(truncated_scripts_fail_cleanly)
{
	size_t n = strlen(interfaces_example);
	char *buf = malloc(n + 1);
	for (size_t cut = 0; cut <= n; cut++) {
		memcpy(buf, interfaces_example, cut);
		buf[cut] = 0;
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		Script *s = script_parse(&a, source_from_string(&a, "t", buf), &d);
		ck_assert(s != NULL || d.nerrors > 0);
		arena_free(&a);
	}
	free(buf);
}
END_TEST

Suite *suite_script(void)
{
	Suite *s = suite_create("script");
	TCase *calls = tcase_create("calls");
	tcase_add_checked_fixture(calls, setup, teardown);
	tcase_add_test(calls, interfaces_example_reads_every_call);
	tcase_add_test(calls, split_with_lhs_and_keywords);
	tcase_add_test(calls, single_lhs_and_no_lhs);
	tcase_add_test(calls, every_conformance_schedule_reads);
	suite_add_tcase(s, calls);

	TCase *args = tcase_create("arguments");
	tcase_add_checked_fixture(args, setup, teardown);
	tcase_add_test(args, argument_kinds);
	tcase_add_test(args, pad_value_forms);
	suite_add_tcase(s, args);

	tcase_add_test(args, lists_indices_and_unpacking);
	TCase *layout = tcase_create("layout");
	tcase_add_checked_fixture(layout, setup, teardown);
	tcase_add_test(layout, layout_comments_semicolons_and_continuations);
	suite_add_tcase(s, layout);

	TCase *lambdas = tcase_create("lambdas");
	tcase_add_checked_fixture(lambdas, setup, teardown);
	tcase_add_test(lambdas, lambda_argument_parses_with_axis_separator);
	tcase_add_test(lambdas, pad_value_lambda_reads_the_buffer_and_expr_resolves);
	suite_add_tcase(s, lambdas);

	TCase *errors = tcase_create("errors");
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(errors, malformed_scripts_report_message_line_and_column);
	tcase_add_test(errors, truncated_scripts_fail_cleanly);
	suite_add_tcase(s, errors);
	return s;
}
