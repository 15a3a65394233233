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

static const char conv1d[] = "seq_access/conv1d.tir";

START_TEST(conv_output_walks_the_output_buffer)
{
	TsRun t = accept(tu_fixture(conv1d),
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
	TsRun t = accept(tu_fixture(conv1d),
			 "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4])\n"
			 "sch.sequential_buffer_access(block=\"compute\", buffer=\"A\")");
	ck_assert(ts_has_obligation(t.r, "fission.no_conflict", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "skew.cover", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(cumsum_is_rejected_by_the_fission_with_confirmed_replay)
{
	const char *k = tu_fixture("seq_access/cumsum_is_rejected_by_the_fission_with_confirmed_replay.tir");
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
	const char *k = tu_fixture("seq_access/offset_map_tiles_the_loop_with_a_shifted_guard.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8], pad_value=T.undef())\n"
			    "sch.sequential_buffer_access(buffer=\"B\")");
	ck_assert(ts_has_obligation(t.r, "tile.cover", VERDICT_PROVEN));
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "for io, ii in T.grid(2, 8):\n"
		     "        if 0 <= 8 * io + ii - 2:\n"
		     "            B[io, ii] = A[8 * io + ii - 2] + 1");
	sched_free(t.s);
	/* 16 elements: three tiles, guarded at both ends */
	const char *k16 = tu_fixture("seq_access/offset_map_tiles_the_loop_with_a_shifted_guard-16.tir");
	t = accept(k16, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])\n"
			"sch.sequential_buffer_access(buffer=\"B\")");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "for io, ii in T.grid(3, 8):");
	sched_free(t.s);
}
END_TEST

START_TEST(offset_that_fits_the_tiles_drops_the_guard)
{
	/* i in [6, 22) with (i + 2) // 8: exactly tiles 1 and 2 */
	const char *k = tu_fixture("seq_access/offset_that_fits_the_tiles_drops_the_guard.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])\n"
			    "sch.sequential_buffer_access(buffer=\"A\")");
	ck_assert(ts_has_obligation(t.r, "tile.exact", VERDICT_PROVEN));
	ck_assert_int_eq(ts_store_ifs(ts_func(&t, NULL)->body), 0);
	sched_free(t.s);
}
END_TEST

START_TEST(symbolic_extent_is_split_when_divisibility_is_assumed)
{
	const char *k = tu_fixture("seq_access/symbolic_extent_is_split_when_divisibility_is_assumed.tir");
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
	const char *k = tu_fixture("seq_access/transposed_access_reorders_the_nest.tir");
	TsRun t = accept(k, "sch.sequential_buffer_access(buffer=\"B\")");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "for j, i in T.grid(4, 8):");
	ck_assert(ts_has_obligation(t.r, "reorder.no_conflict", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(reorder_against_a_dependence_is_rejected)
{
	const char *k = tu_fixture("seq_access/reorder_against_a_dependence_is_rejected.tir");
	ts_refuted(&arena, k, "sch.sequential_buffer_access(buffer=\"A\")", "reorder.no_conflict");
}
END_TEST

/* ---------- nothing to do, and what is not supported ---------- */

START_TEST(already_sequential_nest_is_left_alone)
{
	const char *k = tu_fixture("seq_access/already_sequential_nest_is_left_alone.tir");
	TsRun t = accept(k, "sch.sequential_buffer_access(buffer=\"A\")");
	ck_assert(ir_func_equal(ts_func(&t, NULL), t.before->funcs[0]));
	sched_free(t.s);
}
END_TEST

START_TEST(division_without_its_modulo_is_not_supported)
{
	const char *k = tu_fixture("seq_access/division_without_its_modulo_is_not_supported.tir");
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
	TsRun t = accept(tu_fixture("seq_access/a_let_of_undef_is_not_inlined.tir"),
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
