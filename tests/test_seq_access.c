/* tests/test_seq_access.c — sequential_buffer_access (seed 000 "Reorder
 * Loops According to Buffer"): loop nests rewritten to walk a buffer in
 * physical order through proven split / tile / fission / reorder /
 * simplify steps. The seed's exact, padded and conv1d-output examples, an
 * offset map (i + 2) // 8, symbolic extents, a reorder, and the rejected
 * cases (conv1d_cumsum with its confirmed replay, skews that are not
 * implemented, dependences). Accepted steps are compared by the
 * interpreter; a rejected call leaves the module as it was. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static TsRun accept(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6);
}

static const char fill_fmt[] =
	"@T.prim_func\n"
	"def func(A: T.Buffer[(%d,), \"int32\"]):\n"
	"    with T.block(\"compute\"):\n"
	"        for i in T.serial(%d):\n"
	"            A[i] = i\n";

static const char *fill(int n) { return arena_printf(&arena, fill_fmt, n, n); }

/* ---------- the seed's examples ---------- */

START_TEST(exact_layout_gives_a_branch_free_nest)
{
	TsRun t = accept(fill(16), "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
				   "sch.sequential_buffer_access(block=\"compute\", buffer=\"A\")");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "for io, ii in T.grid(4, 4):\n"
		     "            A[io, ii] = io * 4 + ii");
	ck_assert_int_eq(ts_store_ifs(ts_func(&t, NULL)->body), 0);
	ck_assert(ts_has_obligation(t.r, "split.divisible", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(padded_layout_keeps_a_guard)
{
	TsRun t = accept(fill(14), "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
				   "sch.sequential_buffer_access(block=\"compute\", buffer=\"A\")");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "if io * 4 + ii < 14:\n"
		     "                A[io, ii] = io * 4 + ii");
	ck_assert_int_eq(ts_store_ifs(ts_func(&t, NULL)->body), 1);
	sched_free(t.s);
}
END_TEST

static const char conv1d[] =
	"@T.prim_func\n"
	"def func(A: T.Buffer[(16,), \"int32\"], F: T.Buffer[(3,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
	"    with T.block(\"compute\"):\n"
	"        for i in T.serial(14):\n"
	"            B[i] = 0\n"
	"            for f in T.serial(3):\n"
	"                B[i] = B[i] + F[f] * A[i + f]\n";

START_TEST(conv_output_walks_the_output_buffer)
{
	TsRun t = accept(conv1d,
			 "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
			 "sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda i: [i // 4, i % 4])\n"
			 "sch.sequential_buffer_access(block=\"compute\", buffer=\"B\")");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]");
	sched_free(t.s);
}
END_TEST

START_TEST(conv_input_is_walked_by_fission_skew_and_tile)
{
	/* the init moves to its own loop, the (i, f) nest is skewed to follow
	 * A's index i + f, then tiled: each step proven */
	TsRun t = accept(conv1d,
			 "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
			 "sch.sequential_buffer_access(block=\"compute\", buffer=\"A\")");
	ck_assert(ts_has_obligation(t.r, "fission.no_conflict", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "skew.cover", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(cumsum_is_rejected_by_the_fission_with_confirmed_replay)
{
	static const char k[] =
		"@T.prim_func\n"
		"def conv1d_cumsum(A: T.Buffer[(16,), \"int32\"], F: T.Buffer[(3,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
		"    with T.block(\"compute\"):\n"
		"        for i in T.serial(14):\n"
		"            if i == 0:\n"
		"                B[i] = 0\n"
		"            else:\n"
		"                B[i] = B[i - 1]\n"
		"            for f in T.serial(3):\n"
		"                B[i] = B[i] + F[f] * A[i + f]\n";
	TsRun t = ts_reject(&arena, k,
			    "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
			    "sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda i: [i // 4, i % 4])\n"
			    "sch.sequential_buffer_access(block=\"compute\", buffer=\"A\")",
			    "fission.no_conflict refuted");
	ts_assert_refuted_confirmed(t.r, "fission.no_conflict");
	ts_has(t.r->counterexample, "i_1 = 1, i_2 = 0");
	sched_free(t.s);
}
END_TEST

/* ---------- offsets and symbolic extents ---------- */

START_TEST(offset_map_tiles_the_loop_with_a_shifted_guard)
{
	static const char k[] =
		"@T.prim_func\n"
		"def func(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
		"    for i in T.serial(14):\n"
		"        B[i] = A[i] + 1\n";
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8], pad_value=T.undef())\n"
			    "sch.sequential_buffer_access(buffer=\"B\")");
	ck_assert(ts_has_obligation(t.r, "tile.cover", VERDICT_PROVEN));
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "for io, ii in T.grid(2, 8):\n"
		     "        if 0 <= 8 * io + ii - 2:\n"
		     "            B[io, ii] = A[8 * io + ii - 2] + 1");
	sched_free(t.s);
	/* 16 elements: three tiles, guarded at both ends */
	static const char k16[] =
		"@T.prim_func\n"
		"def func(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(16,), \"int32\"]):\n"
		"    for i in T.serial(16):\n"
		"        B[i] = A[i] + 1\n";
	t = accept(k16, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])\n"
			"sch.sequential_buffer_access(buffer=\"B\")");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "for io, ii in T.grid(3, 8):");
	sched_free(t.s);
}
END_TEST

START_TEST(offset_that_fits_the_tiles_drops_the_guard)
{
	/* i in [6, 22) with (i + 2) // 8: exactly tiles 1 and 2 */
	static const char k[] =
		"@T.prim_func\n"
		"def func(A: T.Buffer[(22,), \"int32\"]):\n"
		"    for i in T.serial(6, 22):\n"
		"        A[i] = i\n";
	TsRun t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])\n"
			    "sch.sequential_buffer_access(buffer=\"A\")");
	ck_assert(ts_has_obligation(t.r, "tile.exact", VERDICT_PROVEN));
	ck_assert_int_eq(ts_store_ifs(ts_func(&t, NULL)->body), 0);
	sched_free(t.s);
}
END_TEST

START_TEST(symbolic_extent_is_split_when_divisibility_is_assumed)
{
	static const char k[] =
		"@T.prim_func\n"
		"def scale(a: T.handle, b: T.handle, n: T.int32):\n"
		"    A = T.match_buffer(a, (n,), \"int32\")\n"
		"    B = T.match_buffer(b, (n,), \"int32\")\n"
		"    T.assume(0 < n and n <= 64 and n % 4 == 0)\n"
		"    for i in T.serial(n):\n"
		"        B[i] = 2 * A[i]\n";
	/* (without n % 4 == 0 the split's guarded fallback would be needed,
	 * which sequential_buffer_access does not take: it rejects) */
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
			    "sch.sequential_buffer_access(buffer=\"B\")");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "B[io, ii] = 2 * A[io * 4 + ii]");
	sched_free(t.s);
}
END_TEST

/* ---------- reorder ---------- */

START_TEST(transposed_access_reorders_the_nest)
{
	static const char k[] =
		"@T.prim_func\n"
		"def t(A: T.Buffer[(8, 4), \"int32\"], B: T.Buffer[(4, 8), \"int32\"]):\n"
		"    for i, j in T.grid(8, 4):\n"
		"        B[j, i] = A[i, j]\n";
	TsRun t = accept(k, "sch.sequential_buffer_access(buffer=\"B\")");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "for j, i in T.grid(4, 8):");
	ck_assert(ts_has_obligation(t.r, "reorder.no_conflict", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(reorder_against_a_dependence_is_rejected)
{
	static const char k[] =
		"@T.prim_func\n"
		"def w(A: T.Buffer[(8, 8), \"int32\"]):\n"
		"    for i in T.serial(7):\n"
		"        for j in T.serial(1, 8):\n"
		"            A[j, i] = A[j - 1, i + 1] + 1\n";
	TsRun t = ts_reject(&arena, k, "sch.sequential_buffer_access(buffer=\"A\")", "reorder.no_conflict");
	ts_assert_refuted_confirmed(t.r, "reorder.no_conflict");
	sched_free(t.s);
}
END_TEST

/* ---------- nothing to do, and what is not supported ---------- */

START_TEST(already_sequential_nest_is_left_alone)
{
	static const char k[] =
		"@T.prim_func\n"
		"def t(A: T.Buffer[(4, 8), \"int32\"]):\n"
		"    for i, j in T.grid(4, 8):\n"
		"        A[i, j] = i + j\n";
	TsRun t = accept(k, "sch.sequential_buffer_access(buffer=\"A\")");
	ck_assert(ir_func_equal(ts_func(&t, NULL), t.before->funcs[0]));
	sched_free(t.s);
}
END_TEST

START_TEST(division_without_its_modulo_is_not_supported)
{
	static const char k[] =
		"@T.prim_func\n"
		"def t(A: T.Buffer[(4, 4), \"int32\"]):\n"
		"    for i in T.serial(16):\n"
		"        A[i // 4, 0] = i\n";
	TsRun t = ts_reject(&arena, k, "sch.sequential_buffer_access(buffer=\"A\")",
			    "not supported: index 0 of A divides loop i without the matching % digit");
	sched_free(t.s);
}
END_TEST

START_TEST(unknown_names_are_bad_input)
{
	Module *m = tu_parse(&arena, "k.tir", fill(16));
	static const char *const scripts[] = {
		"sch.sequential_buffer_access(buffer=\"Z\")",
		"sch.sequential_buffer_access(block=\"nope\", buffer=\"A\")",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
		Schedule *s = tu_schedule(&arena, m);
		ck_assert_msg(tu_run(s, scripts[i]) == STEP_BAD_INPUT, "%s", scripts[i]);
		ck_assert_ptr_eq(s->mod, m);
		sched_free(s);
	}
}
END_TEST

/* A let bound to T.undef() is not inlined: every use would be its own
 * undefined value. */
START_TEST(a_let_of_undef_is_not_inlined)
{
	TsRun t = accept("@T.prim_func\n"
			 "def f(A: T.Buffer[(8,), \"int32\"], B: T.Buffer[(4, 4), \"int32\"], C: T.Buffer[(4, 4), \"int32\"]):\n"
			 "    for i in T.serial(4):\n"
			 "        for j in T.serial(4):\n"
			 "            u: T.int32 = T.undef()\n"
			 "            A[i + j] = A[i + j] + C[i, j]\n"
			 "            if u == u:\n"
			 "                B[i, j] = 1\n"
			 "            else:\n"
			 "                B[i, j] = 2\n",
			 "sch.sequential_buffer_access(buffer=\"A\")");
	ts_lacks(ts_print(&arena, sched_func(t.s)), "T.undef(dtype=\"int32\") == T.undef(");
	sched_free(t.s);
}
END_TEST

Suite *suite_seq_access(void)
{
	Suite *s = suite_create("seq_access");
	struct {
		const char *name;
		const TTest *tests[8];
	} cases[] = {
		{"seed_examples",
		 {exact_layout_gives_a_branch_free_nest, padded_layout_keeps_a_guard,
		  conv_output_walks_the_output_buffer, conv_input_is_walked_by_fission_skew_and_tile,
		  cumsum_is_rejected_by_the_fission_with_confirmed_replay}},
		{"offsets_and_symbolic",
		 {offset_map_tiles_the_loop_with_a_shifted_guard, offset_that_fits_the_tiles_drops_the_guard,
		  symbolic_extent_is_split_when_divisibility_is_assumed}},
		{"reorder",
		 {transposed_access_reorders_the_nest, reorder_against_a_dependence_is_rejected}},
		{"limits",
		 {already_sequential_nest_is_left_alone, division_without_its_modulo_is_not_supported,
		  unknown_names_are_bad_input, a_let_of_undef_is_not_inlined}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 8 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
