/* tests/test_layout.c — transform_layout (seed 000, semantics.md 4): index
 * maps with offsets, axis splits and separators, the physical shape and the
 * padding it introduces, pad_value none / constant / T.undef() / lambda,
 * derived and given inverses, refuted maps with their replays, symbolic
 * shapes, shared module parameters, composed layouts and allocations.
 * Every accepted step is compared with the original by the interpreter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static const char double14[] = "layout/double14.tir";

static const char double16[] = "layout/double16.tir";

static TsRun accept(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6);
}

static Buffer *param(const Func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && strcmp(f->params[i].buf->name, name) == 0)
			return f->params[i].buf;
	ck_abort_msg("no parameter %s", name);
	return NULL;
}

/* The constant physical shape of a parameter, "(2, 8)". */
static char *shape_of(const Func *f, const char *name)
{
	Buffer *b = param(f, name);
	StrBuf s = {0};
	sb_puts(&s, "(");
	for (int k = 0; k < b->ndim; k++) {
		int64_t v;
		ck_assert_msg(an_const_int(b->shape[k], &v), "shape of %s is not constant", name);
		sb_printf(&s, "%s%lld", k ? ", " : "", (long long)v);
	}
	sb_puts(&s, ")");
	char *t = sb_take(&s);
	char *r = arena_strdup(&arena, t);
	free(t);
	return r;
}

/* Transform B of `kernel` with `map` and T.undef() padding; the padding
 * cells are those the pad stage leaves undefined. */
static char *padding_of(const char *kernel, const char *map)
{
	char *script = arena_printf(&arena, "sch.transform_layout(buffer=\"B\", index_map=%s, pad_value=T.undef())",
				    map);
	TsRun t = accept(kernel, script);
	char *cells = ts_cells_in_state(&arena, ts_func(&t, NULL), "B", CELL_UNDEF, 3);
	sched_free(t.s);
	return cells;
}

/* ---------- index maps, shapes and padding (seed 000 "Padded Transformations") ---------- */

START_TEST(map_without_padding_has_no_padding_cells)
{
	ck_assert_str_eq(padding_of(tu_fixture(double16), "lambda i: [i // 8, i % 8]"), "");
	TsRun t = accept(tu_fixture(double16),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 8, i % 8])");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(2, 8)");
	sched_free(t.s);
}
END_TEST

START_TEST(map_of_14_into_2x8_pads_the_end)
{
	ck_assert_str_eq(padding_of(tu_fixture(double14),
				    "lambda i: [i // 8, i % 8]"), "[1, 6] [1, 7]");
}
END_TEST

START_TEST(offset_map_of_14_pads_the_beginning)
{
	ck_assert_str_eq(padding_of(tu_fixture(double14),
				    "lambda i: [(i + 2) // 8, (i + 2) % 8]"), "[0, 0] [0, 1]");
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(2, 8)");
	sched_free(t.s);
}
END_TEST

START_TEST(offset_map_of_16_adds_a_row_and_pads_both_ends)
{
	ck_assert_str_eq(padding_of(tu_fixture(double16), "lambda i: [(i + 2) // 8, (i + 2) % 8]"),
			 "[0, 0] [0, 1] [2, 2] [2, 3] [2, 4] [2, 5] [2, 6] [2, 7]");
	TsRun t = accept(tu_fixture(double16),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 2) // 8, (i + 2) % 8])");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(3, 8)");
	sched_free(t.s);
}
END_TEST

START_TEST(map_of_14_into_4x4_pads_two_cells)
{
	ck_assert_str_eq(padding_of(tu_fixture(double14),
				    "lambda i: [i // 4, i % 4]"), "[3, 2] [3, 3]");
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4])");
	Func *f = ts_func(&t, NULL);
	ck_assert_str_eq(shape_of(f, "A"), "(4, 4)");
	char *text = ts_print(&arena, f);
	ts_has(text, "B[i] = 2 * A[i // 4, i % 4]");
	ts_lacks(text, "T.assume"); /* no pad value: no fact */
	ck_assert_int_eq(ts_count_obligations(t.r, "layout.in_bounds"), 2);
	ck_assert(ts_has_obligation(t.r, "layout.injective", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(nhwc_to_nchwc_records_the_axis_separator)
{
	const char *k = tu_fixture("layout/nhwc_to_nchwc_records_the_axis_separator.tir");
	TsRun t = accept(k, "sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda n, h, w, c: "
			    "[n, c // 4, h, T.axis_separator, w, c % 4])");
	Func *f = ts_func(&t, NULL);
	ck_assert_str_eq(shape_of(f, "B"), "(1, 2, 4, 4, 4)");
	Buffer *b = param(f, "B");
	ck_assert_int_eq(b->naxis_separators, 1);
	ck_assert_int_eq(b->axis_separators[0], 3);
	char *text = ts_print(&arena, f);
	ts_has(text, "axis_separators=[3]");
	ts_has(text, "B[n, c // 4, h, w, c % 4] = A[n, h, w, c] * 2.0");
	/* the printed function parses back to the same function */
	Func *again = ts_parse_func(&arena, text);
	ck_assert(ir_func_equal(f, again));
	sched_free(t.s);
}
END_TEST

START_TEST(map_with_a_constant_output_and_a_reordering_is_accepted)
{
	const char *k = tu_fixture("layout/map_with_a_constant_output_and_a_reordering_is_accepted.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [0, j, i])");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(1, 5, 3)");
	sched_free(t.s);
}
END_TEST

START_TEST(square_transposition_is_compared_through_the_map)
{
	/* the shape stays (5, 5): the interpreter must still compare B[i, j]
	 * with B'[j, i], not cell by cell */
	const char *k = tu_fixture("layout/square_transposition_is_compared_through_the_map.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [j, i])\n"
			    "sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [j, i])");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(5, 5)");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "B[j, i] = A[j, i] + i");
	/* the same program without the layout link is not equivalent */
	Func *plain = ts_parse_func(&arena, ts_print(&arena, ts_func(&t, NULL)));
	char *report = NULL;
	ck_assert(!tu_equiv(t.before->funcs[0], plain, 4, &report));
	free(report);
	sched_free(t.s);
}
END_TEST

/* ---------- pad_value forms (seed 000 "Defining Padded Values") ---------- */

START_TEST(pad_none_adds_no_stage_and_forbids_the_padding)
{
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=None)");
	Func *f = ts_func(&t, NULL);
	char *text = ts_print(&arena, f);
	ts_lacks(text, "B_pad");
	Buffer *b = param(f, "B");
	ck_assert_ptr_nonnull(b->layout);
	ck_assert_int_eq(b->layout->pad_kind, PAD_NONE_GIVEN);
	/* padding cells stay untouched (uninitialised) in the result */
	ck_assert_str_eq(ts_cells_in_state(&arena, f, "B", CELL_UNINIT, 5), "[3, 2] [3, 3]");
	sched_free(t.s);
}
END_TEST

START_TEST(pad_constant_on_input_becomes_an_entry_assumption)
{
	const char *k = tu_fixture("layout/pad_constant_on_input_becomes_an_entry_assumption.tir");
	TsRun t = accept(k, "sch.transform_layout(block=\"compute\", buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=-1)\n"
			    "sch.transform_layout(block=\"compute\", buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=-2)");
	Func *f = ts_func(&t, NULL);
	char *text = ts_print(&arena, f);
	ts_has(text, "T.assume(4 * io + ii < 14 or A[io, ii] == -1.0)");
	ts_has(text, "with T.block(\"B_pad\")");
	ts_has(text, "B[io, ii] = -2.0");
	/* the stage comes after the compute block */
	ck_assert(strstr(text, "T.block(\"compute\")") < strstr(text, "T.block(\"B_pad\")"));
	/* the padding holds the values at the end */
	char *in = ts_cells_in_state(&arena, f, "B", CELL_INIT, 2);
	ts_has(in, "[3, 2] [3, 3]");
	sched_free(t.s);
}
END_TEST

START_TEST(pad_undef_on_input_and_output)
{
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())\n"
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())");
	ts_has(text, "B[io, ii] = T.undef()");
	sched_free(t.s);
}
END_TEST

START_TEST(pad_lambda_of_the_physical_indices)
{
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], "
				   "pad_value=lambda io, ii: io * 10 + ii)");
	Func *f = ts_func(&t, NULL);
	ts_has(ts_print(&arena, f), "B[io, ii] = io * 10 + ii");
	sched_free(t.s);
	/* the same on an input: the fact names the values */
	t = accept(tu_fixture(double14),
		   "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], "
			     "pad_value=lambda io, ii: io - ii)");
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "A[io, ii] == io - ii");
	sched_free(t.s);
}
END_TEST

START_TEST(pad_lambda_reading_the_buffer_reads_logical_cells)
{
	/* the padding at the front copies logical cells (a wrap-around) */
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i + 2], "
				   "pad_value=lambda t: B[t + 14])");
	Func *f = ts_func(&t, NULL);
	ts_has(ts_print(&arena, f), "B[i] = B[i + 14]");
	ck_assert(ts_has_obligation(t.r, "layout.pad_value_reads", VERDICT_PROVEN));
	sched_free(t.s);
	/* reading the padding itself (or outside the shape) is refuted */
	t = ts_reject(&arena, tu_fixture(double14),
		      "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i + 2], pad_value=lambda t: B[1 - t])",
		      "layout.pad_value_reads");
	ts_assert_refuted_confirmed(t.r, "layout.pad_value_reads");
	ts_has(t.r->replay_text, "read of uninitialised B[");
	sched_free(t.s);
}
END_TEST

START_TEST(pad_lambda_of_seed_000_reads_the_physical_buffer)
{
	/* seed 000: pad_value=lambda io, ii: B[0, (io - 14) % 4] -- inside
	 * the pad value B is the transformed buffer, indexed physically */
	TsRun t = accept(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], "
				   "pad_value=lambda io, ii: B[0, (io-14)%4])");
	Func *f = ts_func(&t, NULL);
	ts_has(ts_print(&arena, f), "B[io, ii] = B[0, (io - 14) % 4]");
	ck_assert(ts_has_obligation(t.r, "layout.pad_value_reads", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

START_TEST(pad_lambda_reading_an_allocation_reads_only_written_cells)
{
	/* X[10..13] are never written: a pad stage reading them would read
	 * uninitialised cells where the original reads none */
	const char *k = tu_fixture("layout/pad_lambda_reading_an_allocation_reads_only_written_cells.tir");
	TsRun t = ts_reject(&arena, k, "sch.transform_layout(buffer=\"X\", index_map=lambda i: [i + 2], "
				       "pad_value=lambda t: X[t + 12])",
			    "layout.pad_value_readable");
	ts_assert_refuted_confirmed(t.r, "layout.pad_value_readable");
	ts_has(t.r->replay_text, "uninitialised");
	sched_free(t.s);
	/* X[t + 2] reads written cells: the producer's store X[i + 2] is a
	 * fact by the affine rule (kernel/analysis/facts.c), so it is proven */
	t = ts_accept(&arena, k, "sch.transform_layout(buffer=\"X\", index_map=lambda i: [i + 2], "
				 "pad_value=lambda t: X[t + 2])", 4);
	ck_assert(ts_has_obligation(t.r, "layout.pad_value_readable", VERDICT_PROVEN));
	sched_free(t.s);
}
END_TEST

/* ---------- inverses ---------- */

START_TEST(given_inverse_is_proven_and_used_for_the_padding)
{
	/* a flat map whose inverse cannot be derived: i * 4 + j on j < 4 */
	const char *k = tu_fixture("layout/given_inverse_is_proven_and_used_for_the_padding.tir");
	TsRun t = ts_reject(&arena, k, "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [i * 4 + j])",
			    "not supported: transform_layout: no left inverse");
	/* rejected as unsupported only once injectivity and bounds are proven */
	ck_assert(ts_has_obligation(t.r, "layout.injective", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "layout.in_bounds", VERDICT_PROVEN));
	ck_assert_int_eq(t.r->failed, -1);
	sched_free(t.s);
	t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [i * 4 + j], "
		      "inverse=lambda t: [t // 4, t % 4])");
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(12)");
	sched_free(t.s);
}
END_TEST

START_TEST(inverse_off_by_one_is_refuted_with_confirmed_replay)
{
	ts_refuted(&arena, tu_fixture(double14),
		   "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], "
		   "inverse=lambda io, ii: [4 * io + ii + 1])",
		   "layout.left_inverse");
}
END_TEST

START_TEST(inverse_of_reversed_and_moved_digits_is_derived)
{
	/* rows in reverse order: i = 4 * (3 - io) + ii, no padding */
	TsRun t = accept(tu_fixture(double16),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [3 - i // 4, i % 4])");
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(4, 4)");
	ck_assert_str_eq(ts_cells_in_state(&arena, ts_func(&t, NULL), "B", CELL_UNDEF, 3), "");
	sched_free(t.s);
	/* reversed and moved by one: 14 cells in 5 rows of 4, the first row
	 * and the last two cells of the second padding */
	ck_assert_str_eq(padding_of(tu_fixture(double14), "lambda i: [4 - i // 4, i % 4]"),
			 "[0, 0] [0, 1] [0, 2] [0, 3] [1, 2] [1, 3]");
	/* an inner digit moved by one does not cover its row exactly: the
	 * full padding predicate is kept, column 0 is padding */
	t = accept(tu_fixture(double16),
		   "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, 1 + i % 4], pad_value=0)");
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(4, 5)");
	sched_free(t.s);
	ck_assert_str_eq(padding_of(tu_fixture(double16),
				    "lambda i: [i // 4, 1 + i % 4]"), "[0, 0] [1, 0] [2, 0] [3, 0]");
	/* a digit negated with no offset leaves the shape: refuted */
	ts_rejected(&arena, tu_fixture(double16),
		  "sch.transform_layout(buffer=\"B\", index_map=lambda i: [-(i // 4), i % 4])",
		  "layout.in_bounds");
}
END_TEST

/* A swizzle: the column wraps, so the inverse of (i, (i + j) % 8) is
 * (t0, (t1 - t0) % 8), derived without inverse= and proven. */
START_TEST(inverse_of_a_swizzle_is_derived)
{
	TsRun t = accept(tu_fixture("layout/swizzle4x8.tir"),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [i, (i + j) % 8])");
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	ck_assert_str_eq(shape_of(ts_func(&t, NULL), "B"), "(4, 8)");
	ck_assert_str_eq(ts_cells_in_state(&arena, ts_func(&t, NULL), "B", CELL_UNDEF, 3), "");
	sched_free(t.s);
	/* a wrapped digit over a range wider than its modulus is not
	 * injective: refuted, not derived into something wrong */
	ts_refuted(&arena, tu_fixture("layout/swizzle4x8.tir"),
		   "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [i, (i + j) % 4])",
		   "layout.injective");
}
END_TEST

START_TEST(non_derivable_non_injective_map_is_refuted_not_unsupported)
{
	const char *k = tu_fixture("layout/non_derivable_non_injective_map_is_refuted_not_unsupported.tir");
	ts_refuted(&arena, k, "sch.transform_layout(buffer=\"B\", index_map=lambda i, j: [i + j])",
		   "layout.injective");
}
END_TEST

/* ---------- maps that are refuted ---------- */

START_TEST(non_injective_map_is_refuted_with_confirmed_replay)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(double14),
				   "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 2])",
				   "layout.injective");
	/* two indices the map sends to one cell (which two is the solver's
	 * choice: a reused context may pick others) */
	const char *at = strstr(r->counterexample, "i = ");
	long x = -1, y = -1;
	ck_assert_msg(at && sscanf(at, "i = %ld, i_2 = %ld", &x, &y) == 2, "%s", r->counterexample);
	ck_assert_msg(x != y && x / 2 == y / 2 && x >= 0 && y >= 0 && x < 14 && y < 14, "%s",
		      r->counterexample);
}
END_TEST

START_TEST(map_outside_the_shape_is_refuted_with_confirmed_replay)
{
	StepReport *r = ts_refuted(&arena, tu_fixture(double14),
				   "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i - 2])",
				   "layout.in_bounds");
	ts_has(r->replay_text, "out of bounds");
}
END_TEST

START_TEST(unsupported_map_shapes_reject)
{
	TsRun t = ts_reject(&arena, tu_fixture(double14),
			    "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i * i])",
			    "not supported");
	ck_assert_int_eq(t.r->nobs, 0);
	sched_free(t.s);
	t = ts_reject(&arena, tu_fixture(double14),
		      "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 0])",
		      "not supported");
	sched_free(t.s);
	/* a size variable nothing bounds in a divisor (m may be 0) or a
	 * product (n * 32 may wrap): the reason names it (TVM's
	 * TestTransformLayoutWithVar, test_transform_layout_with_symbolic_bound) */
	t = ts_reject(&arena, tu_fixture("layout/divide_by_m.tir"),
		      "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // m, i % m], pad_value=0)",
		      "nothing bounds m");
	sched_free(t.s);
	t = ts_reject(&arena, tu_fixture("layout/divide_by_m.tir"),
		      "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i * m])", "nothing bounds m");
	sched_free(t.s);
	/* with a bound it is still not computed, without that reason */
	t = ts_reject(&arena, tu_fixture("layout/scale_n.tir"),
		      "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // n, i % n])",
		      "divides by something other than a positive constant");
	ts_lacks(t.r->reason, "nothing bounds");
	sched_free(t.s);
}
END_TEST

/* ---------- symbolic shapes ---------- */

static const char scale_n[] = "layout/scale_n.tir";

START_TEST(symbolic_shape_gets_a_symbolic_physical_shape)
{
	TsRun t = accept(tu_fixture(scale_n),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
				  "sch.transform_layout(buffer=\"B\", index_map=lambda i: [(i + 3) // 8, (i + 3) % 8], pad_value=T.undef())");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "A = T.match_buffer(a, ((n - 1) // 4 + 1, 4), \"int32\")");
	ts_has(text, "T.assume(4 * io + ii < n or A[io, ii] == 0)");
	ts_has(text, "B = T.match_buffer(b, ((n - 1 + 3) // 8 + 1, 8), \"int32\")");
	sched_free(t.s);
}
END_TEST

START_TEST(symbolic_shape_without_facts_is_still_exact)
{
	const char *k = tu_fixture("layout/symbolic_shape_without_facts_is_still_exact.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	sched_free(t.s);
	/* an offset that depends on n moves the padding with it; the inverse
	 * is derived with n as a symbolic offset, or can be given. n needs a
	 * bound here: i + n wraps for n near the int32 maximum */
	const char *kb = tu_fixture("layout/symbolic_shape_without_facts_is_still_exact-bounded.tir");
	t = ts_reject(&arena, k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + n) // 4, (i + n) % 4])",
		      "layout.in_bounds refuted");
	sched_free(t.s);
	t = accept(kb, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + n) // 4, (i + n) % 4], pad_value=0)");
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	ts_has(ts_print(&arena, ts_func(&t, NULL)), "4 * io + ii - n");
	sched_free(t.s);
	t = accept(kb, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [(i + n) // 4, (i + n) % 4], "
		      "inverse=lambda io, ii: [4 * io + ii - n], pad_value=0)");
	sched_free(t.s);
}
END_TEST

/* ---------- producers, inputs and allocations ---------- */

START_TEST(allocated_caches_get_pad_stages_after_their_producers)
{
	const char *k = tu_fixture("layout/allocated_caches_get_pad_stages_after_their_producers.tir");
	TsRun t = accept(k, "sch.transform_layout(block=\"compute\", buffer=\"A_cache\", index_map=lambda i: [i // 4, i % 4], pad_value=-1)\n"
			    "sch.transform_layout(block=\"compute\", buffer=\"B_cache\", index_map=lambda i: [i // 4, i % 4], pad_value=-2)");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "A_cache = T.alloc_buffer([4, 4]");
	ts_has(text, "A_cache[i // 4, i % 4] = A[i]");
	/* each stage right after its producer, before the consumer */
	const char *a_pad = strstr(text, "A_cache_pad"), *compute = strstr(text, "\"compute\"");
	const char *b_pad = strstr(text, "B_cache_pad"), *copy = strstr(text, "T.block(\"B_cache\")");
	ck_assert(a_pad && compute && b_pad && copy);
	ck_assert((const char *)(a_pad) < (const char *)(compute));
	ck_assert((const char *)(compute) < (const char *)(b_pad));
	ck_assert((const char *)(b_pad) < (const char *)(copy));
	ts_lacks(text, "T.assume"); /* allocations get no entry fact */
	sched_free(t.s);
}
END_TEST

START_TEST(allocation_inside_a_loop_gets_its_pad_stage_inside_the_loop)
{
	const char *k = tu_fixture("layout/allocation_inside_a_loop_gets_its_pad_stage_inside_the_loop.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"X\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
			    "sch.transform_layout(buffer=\"Y\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	/* each stage is in its allocation's scope, after the producer */
	ts_has(text, "            X[i // 4, i % 4] = A[i] + r\n"
		     "        with T.block(\"X_pad\"):\n");
	ts_has(text, "                Y[i // 4, i % 4] = X[i // 4, i % 4]\n"
		     "            with T.block(\"Y_pad\"):\n");
	/* the printed result is a valid kernel */
	ck_assert(ir_func_equal(ts_func(&t, NULL), ts_parse_func(&arena, text)));
	sched_free(t.s);
}
END_TEST

/* After compute_at the producer block runs inside the consumer's loop:
 * the stage follows it there, in each iteration before the reads, not
 * after the whole consumer (semantics.md: after the block that last
 * writes the buffer). */
START_TEST(pad_stage_follows_the_producer_inside_the_loop_after_compute_at)
{
	const char *k = tu_fixture("layout/pad_stage_inside_the_loop_after_compute_at.tir");
	TsRun t = accept(k, "sch.split(\"i#2\", factor=4)\n"
			    "sch.compute_at(block=\"B\", loop=\"i_o\")\n"
			    "sch.transform_layout(\"B\", lambda i: [i // 3, i % 3], pad_value=0)");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	const char *loop = strstr(text, "for i_o in"), *producer = strstr(text, "with T.block(\"B\")");
	const char *stage = strstr(text, "B_pad"), *reader = strstr(text, "for i_i in");
	ck_assert(loop && producer && stage && reader);
	ck_assert(loop < producer && producer < stage && stage < reader);
	sched_free(t.s);
}
END_TEST

START_TEST(pad_stage_follows_the_last_of_several_writes)
{
	const char *k = tu_fixture("layout/pad_stage_follows_the_last_of_several_writes.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	const char *stage = strstr(text, "B_pad"), *last = strstr(text, "B[i // 4, i % 4] + A[i] * r");
	const char *reader = strstr(text, "A[i] = B[i // 4, i % 4]");
	ck_assert(stage && last && reader);
	ck_assert((const char *)(last) < (const char *)(stage));
	ck_assert((const char *)(stage) < (const char *)(reader));
	sched_free(t.s);
}
END_TEST

/* A parameter updated in place is an input too: callers pass its padding
 * filled (the entry fact), and the stage fills it again for the next
 * caller; so the in-place update can overcompute into the padding. A
 * parameter only written gets the stage alone. */
START_TEST(input_written_in_place_gets_a_fact_and_a_stage)
{
	const char *k = tu_fixture("layout/input_written_in_place_gets_a_fact_and_a_stage.tir");
	TsRun t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "T.assume(4 * io + ii < 14 or A[io, ii] == 0)");
	ts_has(text, "A[io, ii] = 0");
	sched_free(t.s);
	t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)\n"
		      "sch.split(\"i\", factor=4)\n"
		      "sch.remove_branching_through_overcompute(loop=\"i_i\")");
	ck_assert_int_eq(ts_store_ifs(ts_func(&t, NULL)->body), 1); /* the pad stage's own */
	sched_free(t.s);
	t = accept(tu_fixture("layout/output_only_parameter_gets_no_fact.tir"),
		   "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	text = ts_print(&arena, ts_func(&t, NULL));
	ts_lacks(text, "T.assume");
	ts_has(text, "B[io, ii] = 0");
	sched_free(t.s);
}
END_TEST

/* ---------- modules: a shared parameter ---------- */

static const char producer_consumer[] = "layout/producer_consumer.tir";

START_TEST(shared_parameter_is_transformed_in_every_function)
{
	TsRun t = accept(tu_fixture(producer_consumer),
			 "sch.work_on(\"consumer\")\n"
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	char *prod = ts_print(&arena, ts_func(&t, "producer"));
	char *cons = ts_print(&arena, ts_func(&t, "consumer"));
	ts_has(prod, "A[i // 4, i % 4] = 1000 + i");
	ts_has(prod, "A[io, ii] = 0"); /* the producer writes the padding */
	ts_has(cons, "T.assume(4 * io + ii < 14 or A[io, ii] == 0)"); /* the consumer assumes it */
	ts_has(cons, "B[0] + A[i // 4, i % 4]");
	sched_free(t.s);
}
END_TEST

START_TEST(func_argument_narrows_the_transform_to_one_function)
{
	TsRun t = accept(tu_fixture(producer_consumer),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0, func=\"producer\")");
	ts_has(ts_print(&arena, ts_func(&t, "producer")), "A[i // 4, i % 4] = 1000 + i");
	ck_assert_ptr_eq(ts_func(&t, "consumer"), module_find_func(t.before, "consumer"));
	sched_free(t.s);
}
END_TEST

/* ---------- composed layouts (seed 000 "Multiple Buffer Semantics") ---------- */

static const char row_sum_14x60[] = "layout/row_sum_14x60.tir";

START_TEST(transforming_twice_composes_and_keeps_both_paddings)
{
	TsRun t = accept(tu_fixture(row_sum_14x60),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i // 4, i % 4, j], pad_value=T.undef())\n"
			 "sch.transform_layout(buffer=\"A\", index_map=lambda io, ii, j: [io, ii, j // 8, j % 8], pad_value=0)\n"
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=T.undef())");
	Func *f = ts_func(&t, NULL);
	char *text = ts_print(&arena, f);
	ck_assert_str_eq(shape_of(f, "A"), "(4, 4, 8, 8)");
	ts_has(text, "T.assume(8 * jo + ji < 60 or A[io, ii, jo, ji] == 0)");
	ts_has(text, "T.assume(4 * io + ii < 14 or A[io, ii, j // 8, j % 8] == T.undef())");
	ts_has(text, "B[i // 4, i % 4] + A[i // 4, i % 4, j // 8, j % 8]");
	/* the layout remembers the chain back to the logical buffer */
	Buffer *a = param(f, "A");
	ck_assert_ptr_nonnull(a->layout);
	ck_assert_ptr_nonnull(a->layout->logical->layout);
	ck_assert_int_eq(a->layout->logical->layout->logical->ndim, 2);
	sched_free(t.s);
}
END_TEST

START_TEST(padding_without_value_stays_forbidden_through_a_second_transform)
{
	TsRun t = accept(tu_fixture(row_sum_14x60),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i // 4, i % 4, j])\n"
			 "sch.transform_layout(buffer=\"A\", index_map=lambda io, ii, j: [io, ii, j // 8, j % 8], pad_value=0)");
	Func *f = ts_func(&t, NULL);
	const Layout *lay = param(f, "A")->layout;
	ck_assert_ptr_nonnull(lay->forbidden); /* the first step's padding */
	/* reading A[3, 3, 0, 0] (logical row 15) is forbidden: a kernel that
	 * does it has undefined behaviour in the interpreter */
	static const char reader[] =
		"sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i // 4, i % 4, j])\n"
		"sch.transform_layout(buffer=\"A\", index_map=lambda io, ii, j: [io, ii, j // 8, j % 8], pad_value=0)\n"
		"sch.remove_branching_through_overcompute(strict=True)";
	const char *k = tu_fixture("layout/padding_without_value_stays_forbidden_through_a_second_transform.tir");
	sched_free(t.s);
	t = ts_reject(&arena, k, reader, "overcompute.not_forbidden");
	ts_assert_refuted_confirmed(t.r, "overcompute.not_forbidden");
	sched_free(t.s);
}
END_TEST

/* ---------- bad input ---------- */

/* transform_layout checks its own arguments: a report says why. */
static void expect_bad_input(const char *kernel, const char *script, const char *why)
{
	ck_assert_ptr_nonnull(ts_bad_input(&arena, kernel, script, why));
}

START_TEST(bad_arguments_are_bad_input)
{
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"Z\", index_map=lambda i: [i])", "no buffer 'Z'");
	/* inside the pad value the buffer has its physical shape */
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], "
				   "pad_value=lambda io, ii: B[io])",
			 "has 2 dimensions but 1 index");
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i])",
			 "takes 2 indices but A has 1");
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=0.5)",
			 "is a float but buffer A is int32");
	/* a typed value keeps its dtype, as in TVM: T.int8(0) is not int32 */
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], pad_value=T.int8(0))",
			 "pad_value T.int8(0) is int8 but buffer A is int32");
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i // 4, i % 4], "
				   "inverse=lambda t: [t])",
			 "inverse must take the 2 physical indices");
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i + 2], "
				   "pad_value=lambda t: A[0])",
			 "may read only the buffer B itself");
	expect_bad_input(tu_fixture(double14),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i], block=\"nope\")",
			 "no block 'nope'");
	expect_bad_input(tu_fixture(producer_consumer),
			 "sch.transform_layout(buffer=\"A\", index_map=lambda i: [i], func=\"nobody\")",
			 "no function 'nobody'");
}
END_TEST

START_TEST(printed_axis_separators_parse_back_and_bad_ones_are_errors)
{
	const char *ok = tu_fixture("layout/printed_axis_separators_parse_back_and_bad_ones_are_errors.tir");
	Func *f = ts_parse_func(&arena, ok);
	ck_assert_int_eq(f->params[1].buf->naxis_separators, 2);
	char *text = ts_print(&arena, f);
	ts_has(text, "axis_separators=[1, 2]");
	ts_has(text, "A = T.match_buffer(a, (2, 3), \"int32\", axis_separators=[1])");
	ts_has(text, "C = T.alloc_buffer([4, 4], \"int32\", scope=\"local\", axis_separators=[1])");
	ck_assert(ir_func_equal(f, ts_parse_func(&arena, text)));
	static const char *const bad[] = {"[0]", "[3]", "[2, 1]", "[1, 1]", "[x]"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *k = arena_printf(&arena,
				       "@T.prim_func\n"
				       "def f(B: T.Buffer((2, 3, 4), \"int32\", axis_separators=%s)):\n"
				       "    B[0, 0, 0] = 1\n",
				       bad[i]);
		DiagList d;
		diag_init(&d, &arena);
		ck_assert_msg(parse_module(&arena, source_from_string(&arena, "k.tir", k), &d) == NULL,
			      "axis_separators=%s parsed", bad[i]);
		ck_assert_int_gt(d.nerrors, 0);
		ck_assert_int_gt(d.first->span.line, 0);
	}
}
END_TEST

/* ---------- TVM's placement: blocks inside their loops (issue 15) ---------- */

/* transform_layout with block= on TVM's two_elementwise: the allocated B
 * and the parameter A are remapped, not left as they were (the block's
 * nest is wrapped for the call and its result must be kept) */
START_TEST(block_argument_remaps_allocations_and_parameters)
{
	const char *k = tu_fixture("layout/tvm_blocks.tir");
	TsRun t = accept(k, "block = sch.get_block(\"B\")\n"
			    "sch.transform_layout(block, (\"write\", 0), lambda m, n: (m // 4, n // 4, m % 4, n % 4))");
	char *p = ts_print(&arena, sched_func(t.s));
	ts_has(p, "B = T.alloc_buffer([4, 4, 4, 4]");
	ts_has(p, "B[vi // 4, vj // 4, vi % 4, vj % 4] = A[vi, vj] * 2.0");
	sched_free(t.s);
	t = accept(k, "sch.transform_layout(block=\"B\", buffer=\"A\", index_map=lambda m, n: (n, m))");
	ck_assert_str_eq(shape_of(sched_func(t.s), "A"), "(16, 16)");
	ts_has(ts_print(&arena, sched_func(t.s)), "= A[vj, vi] * 2.0");
	sched_free(t.s);
}
END_TEST

/* TVM's index map dtype legalization: a buffer of int64 extents takes
 * int64 indices, and the physical shape and padding loops are int64 too */
START_TEST(int64_extents_give_an_int64_map_and_shape)
{
	TsRun t = accept(tu_fixture("layout/int64_extent.tir"),
			 "sch.transform_layout(block=\"block\", buffer=\"A\", index_map=lambda h: [h // 8, h % 8], pad_value=0)");
	char *p = ts_print(&arena, sched_func(t.s));
	ts_has(p, "A: T.Buffer[(T.int64(8), T.int64(8)), \"int32\"]");
	ts_has(p, "for ho, hi in T.grid(T.int64(8), T.int64(8)):");
	sched_free(t.s);
	/* a constant output (TVM's tir.const(0, i.dtype)) gets the same dtype */
	t = accept(tu_fixture("layout/int64_extent.tir"),
		   "sch.transform_layout(block=\"block\", buffer=\"A\", index_map=lambda i: [0, (i + 1) // 8, (i + 1) % 8], pad_value=0)");
	ts_has(ts_print(&arena, sched_func(t.s)), "A: T.Buffer[(T.int64(1), T.int64(8), T.int64(8)), \"int32\"]");
	sched_free(t.s);
}
END_TEST

/* TVM's var-args index map: *indices stands for the indices the named
 * parameters leave, and *indices in the result splices them */
START_TEST(var_args_index_map_splices_the_leading_indices)
{
	const char *k = tu_fixture("layout/sum3d.tir");
	TsRun t = accept(k, "sch.transform_layout(index_map=lambda *indices, k: [*indices, k // 4, k % 4], block=\"compute\", buffer=\"A\")");
	ck_assert_str_eq(shape_of(sched_func(t.s), "A"), "(4, 4, 8, 4)");
	ts_has(ts_print(&arena, sched_func(t.s)), "B[0] + A[vi, vj, vk // 4, vk % 4]");
	sched_free(t.s);
	t = accept(k, "sch.transform_layout(buffer=\"A\", index_map=lambda i, *rest: [*rest, i])");
	ck_assert_str_eq(shape_of(sched_func(t.s), "A"), "(4, 32, 4)");
	sched_free(t.s);
	expect_bad_input(k, "sch.transform_layout(buffer=\"A\", index_map=lambda *a, *b: [*a])",
			 "a lambda takes at most one *parameter");
	expect_bad_input(k, "sch.transform_layout(buffer=\"A\", index_map=lambda *a, i, j, k, l: [i])",
			 "the index map names 4 indices but the buffer has 3");
	expect_bad_input(k, "sch.transform_layout(buffer=\"A\", index_map=lambda *a: [*b])",
			 "only the lambda's *parameter can be spliced here");
}
END_TEST

/* after cache_write, ("write", 0) of the block is the stage it now
 * writes, not the buffer its stale T.writes declared */
START_TEST(buffer_index_follows_the_block_after_cache_write)
{
	TsRun t = accept(tu_fixture("layout/cache_write_then_layout.tir"),
			 "b = sch.get_block(\"T_add\")\n"
			 "sch.cache_write(b, 0, \"global\")\n"
			 "sch.transform_layout(b, (\"write\", 0), lambda x, y: [x // 32, y, T.axis_separator, x % 32], pad_value=0.0)");
	char *p = ts_print(&arena, sched_func(t.s));
	ts_has(p, "T_add_global = T.alloc_buffer([2, 8, 32], \"float32\", scope=\"global\", axis_separators=[2])");
	ts_has(p, "T_add_global[v_ax0 // 32, v_ax1, v_ax0 % 32] = p0[v_ax0, v_ax1] + p1[v_ax0, v_ax1]");
	sched_free(t.s);
}
END_TEST

/* ---------- transform_block_layout (TVM's block iteration remap) ---------- */

static const char tbl_ew[] = "layout/tbl_elementwise.tir";

/* The printed result of an accepted transform_block_layout, after the
 * interpreter compared it with the original (ts_accept). */
static char *tbl_accept(const char *kernel, const char *map)
{
	TsRun t = accept(tu_fixture(kernel), arena_printf(&arena, "sch.transform_block_layout(\"B\", %s)", map));
	ck_assert(ts_has_obligation(t.r, "layout.onto", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(t.r, "layout.left_inverse", VERDICT_PROVEN));
	ts_assert_reparses(&arena, ts_func(&t, NULL));
	char *r = ts_print(&arena, ts_func(&t, NULL));
	sched_free(t.s);
	return r;
}

START_TEST(block_layout_fuse_permute_and_split)
{
	/* a fuse: one loop of 128, the iter vars through // and % */
	char *text = tbl_accept(tbl_ew, "lambda i, j: (i * 8 + j,)");
	ts_has(text, "for ax0 in T.serial(128):");
	ts_has(text, "B[v0 // 8, v0 % 8] = A[v0 // 8, v0 % 8] * 2.0");
	/* a permutation: the instances run column by column */
	text = tbl_accept(tbl_ew, "lambda i, j: (j, i)");
	ts_has(text, "for ax0, ax1 in T.grid(8, 16):");
	ts_has(text, "B[v1, v0] = A[v1, v0] * 2.0");
	/* a split of i (the inverse derived from the digits) */
	text = tbl_accept(tbl_ew, "lambda i, j: (i // 4, i % 4, j)");
	ts_has(text, "T.grid(4, 4, 8)");
}
END_TEST

START_TEST(block_layout_keeps_the_init_of_a_reduction)
{
	/* the reduction loop moves outside: its init runs at k == 0 as before */
	TsRun t = accept(tu_fixture("layout/tbl_row_sum.tir"),
			 "sch.transform_block_layout(\"B\", lambda i, k: (k, i))");
	ck_assert(ts_has_obligation(t.r, "block_layout.init", VERDICT_PROVEN));
	char *text = ts_print(&arena, ts_func(&t, NULL));
	ts_has(text, "v0, v1 = T.axis.remap(\"RS\", [ax0, ax1])");
	ts_has(text, "with T.init():");
	sched_free(t.s);
}
END_TEST

START_TEST(block_layout_refutes_a_reordering_that_does_not_commute)
{
	/* B[0] = B[0] * 3 + A[i, j]: column order gives another result */
	ts_refuted(&arena, tu_fixture("layout/tbl_carry.tir"),
		   "sch.transform_block_layout(\"B\", lambda i, j: (j, i))", "block_layout.order");
}
END_TEST

START_TEST(block_layout_refutes_a_map_that_is_not_onto)
{
	/* (i, j + 1) leaves column 0 of the new space without an instance:
	 * the new nest would run j = -1 */
	StepReport *r = ts_refuted(&arena, tu_fixture(tbl_ew),
				   "sch.transform_block_layout(\"B\", lambda i, j: (i, j + 1))", "layout.onto");
	ts_has(r->replay_text, "out of bounds");
}
END_TEST

START_TEST(block_layout_rejects_what_tvm_rejects)
{
	/* not bijective (TVM: "not bijective affine") */
	TsRun t = ts_reject(&arena, tu_fixture(tbl_ew), "sch.transform_block_layout(\"B\", lambda i, j: (i + j,))",
			    "not bijective affine");
	ck_assert_int_eq(t.r->nobs, 0);
	sched_free(t.s);
	/* an output mixing a spatial and a reduction iter var */
	t = ts_reject(&arena, tu_fixture("layout/tbl_row_sum.tir"),
		      "sch.transform_block_layout(\"B\", lambda i, k: (i * 6 + k,))", "mixes spatial and reduce");
	sched_free(t.s);
	/* the block shares its loop with another block */
	t = ts_reject(&arena, tu_fixture("layout/tbl_shared_loop.tir"),
		      "sch.transform_block_layout(\"B\", lambda i, j: (j, i))", "not the only statement");
	sched_free(t.s);
	/* a symbolic new extent n * 4 may wrap: nothing bounds n */
	t = ts_reject(&arena, tu_fixture("layout/tbl_symbolic.tir"),
		      "sch.transform_block_layout(\"B\", lambda i, j: (i * n + j,))", "nothing bounds n");
	sched_free(t.s);
	/* the map must take one index per iter var */
	ts_bad_input(&arena, tu_fixture(tbl_ew), "sch.transform_block_layout(\"B\", lambda i: (i,))",
		     "takes 1 indices but block 'B' has 2 iter vars");
	ts_bad_input(&arena, tu_fixture(tbl_ew), "sch.transform_block_layout(\"X\", lambda i, j: (j, i))",
		     "no block 'X'");
}
END_TEST

Suite *suite_layout(void)
{
	Suite *s = suite_create("layout");
	struct {
		const char *name;
		const TTest *tests[12];
	} cases[] = {
		{"index_maps",
		 {map_without_padding_has_no_padding_cells, map_of_14_into_2x8_pads_the_end,
		  offset_map_of_14_pads_the_beginning, offset_map_of_16_adds_a_row_and_pads_both_ends,
		  map_of_14_into_4x4_pads_two_cells, nhwc_to_nchwc_records_the_axis_separator,
		  map_with_a_constant_output_and_a_reordering_is_accepted,
		  square_transposition_is_compared_through_the_map}},
		{"pad_values",
		 {pad_none_adds_no_stage_and_forbids_the_padding,
		  pad_constant_on_input_becomes_an_entry_assumption,
		  pad_undef_on_input_and_output, pad_lambda_of_the_physical_indices,
		  pad_lambda_reading_the_buffer_reads_logical_cells,
		  pad_lambda_of_seed_000_reads_the_physical_buffer,
		  pad_lambda_reading_an_allocation_reads_only_written_cells}},
		{"inverses",
		 {given_inverse_is_proven_and_used_for_the_padding,
		  inverse_of_reversed_and_moved_digits_is_derived, inverse_of_a_swizzle_is_derived,
		  inverse_off_by_one_is_refuted_with_confirmed_replay,
		  non_derivable_non_injective_map_is_refuted_not_unsupported}},
		{"refuted_maps",
		 {non_injective_map_is_refuted_with_confirmed_replay,
		  map_outside_the_shape_is_refuted_with_confirmed_replay, unsupported_map_shapes_reject}},
		{"symbolic_shapes",
		 {symbolic_shape_gets_a_symbolic_physical_shape, symbolic_shape_without_facts_is_still_exact}},
		{"producers_inputs_allocations",
		 {allocated_caches_get_pad_stages_after_their_producers,
		  allocation_inside_a_loop_gets_its_pad_stage_inside_the_loop,
		  pad_stage_follows_the_last_of_several_writes,
		  pad_stage_follows_the_producer_inside_the_loop_after_compute_at,
		  input_written_in_place_gets_a_fact_and_a_stage}},
		{"modules",
		 {shared_parameter_is_transformed_in_every_function,
		  func_argument_narrows_the_transform_to_one_function}},
		{"composition",
		 {transforming_twice_composes_and_keeps_both_paddings,
		  padding_without_value_stays_forbidden_through_a_second_transform}},
		{"bad_input",
		 {bad_arguments_are_bad_input, printed_axis_separators_parse_back_and_bad_ones_are_errors}},
		{"tvm_blocks",
		 {block_argument_remaps_allocations_and_parameters, int64_extents_give_an_int64_map_and_shape,
		  buffer_index_follows_the_block_after_cache_write, var_args_index_map_splices_the_leading_indices}},
		{"block_layout",
		 {block_layout_fuse_permute_and_split, block_layout_keeps_the_init_of_a_reduction,
		  block_layout_refutes_a_reordering_that_does_not_commute,
		  block_layout_refutes_a_map_that_is_not_onto, block_layout_rejects_what_tvm_rejects}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 12 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
