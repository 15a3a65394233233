/* tests/test_reindex.c — reindex, reindex_cache_read and reindex_cache_write
 * (rewrites/reindex.c, proofs/reindex.md): every accepted stage is run
 * against the original by the interpreter, the copy sits where TVM puts it
 * (before the block's nest for a read, after it for a write, inside the
 * loops the block shares with other users of the buffer), and every
 * rejection names its reason: the TVM preconditions (not a single point,
 * an index map that does not match the iter vars) as such, the obligations
 * reindex.readable and reindex.injective refuted with a confirmed replay. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/print.h"
#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

static Schedule *accept(const char *kernel, const char *script)
{
	TsRun t = ts_accept(&arena, kernel, script, 8);
	ts_assert_reparses(&arena, sched_func(t.s));
	return t.s;
}

/* The names of the statements of s that are blocks or loops, one level:
 * a block by its name, a loop by "for", anything else "-". */
static char *order(const Stmt *s)
{
	StrBuf b = {0};
	while (s->kind == ST_ALLOC)
		s = s->u.alloc.body;
	int n = s->kind == ST_SEQ ? s->u.seq.n : 1;
	for (int i = 0; i < n; i++) {
		const Stmt *x = s->kind == ST_SEQ ? s->u.seq.items[i] : s;
		while (x->kind == ST_FOR)
			x = x->u.loop.body;
		sb_printf(&b, "%s%s", b.n ? "," : "", x->kind == ST_BLOCK ? x->u.block.name : "-");
	}
	return sb_take(&b);
}

/* The result printed contains `needle`. */
static void prints(Schedule *s, const char *needle)
{
	char *text = print_func(sched_func(s));
	ck_assert_msg(strstr(text, needle) != NULL, "no '%s' in:\n%s", needle, text);
	free(text);
}

static bool has_obligation(Schedule *s, const char *kind)
{
	return ts_has_obligation(tu_last(s), kind, VERDICT_PROVEN);
}

/* ---------- reindex ---------- */

START_TEST(reindex_read_copies_before_the_block)
{
	const char *k = tu_fixture("reindex/transpose.tir");
	/* a handle and ("read", 0), as TVM's test writes it */
	Schedule *s = accept(k, "b = sch.get_block(\"B\")\nr = sch.reindex(b, (\"read\", 0))");
	char *o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "A_reindex,B");
	free(o);
	ck_assert(has_obligation(s, "reindex.in_bounds"));
	prints(s, "A_reindex[vi, vj] = A[vj, vi]");
	sched_free(s);
	/* the block and the buffer by name */
	s = accept(k, "sch.reindex(\"B\", \"A\")");
	o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "A_reindex,B");
	free(o);
	sched_free(s);
}
END_TEST

START_TEST(reindex_write_of_a_reduction_copies_out_after_it)
{
	const char *k = tu_fixture("reindex/matmul.tir");
	/* the update reads C after T.init wrote it: no copy-in */
	Schedule *s = accept(k, "sch.reindex(\"C\", (\"write\", 0))");
	char *o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "C,C_reindex");
	free(o);
	ck_assert(has_obligation(s, "reindex.injective"));
	sched_free(s);
	/* a plain write, by name: the block writes it, so the write side */
	s = accept(tu_fixture("reindex/transpose.tir"), "sch.reindex(\"B\", \"B\")");
	o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "B,B_reindex");
	free(o);
	sched_free(s);
}
END_TEST

START_TEST(reindex_inside_a_shared_loop_stays_in_it)
{
	/* B and C share the parallel loop i: the copy goes inside it, right
	 * before C's own loop, and the race check of i is made again */
	Schedule *s = accept(tu_fixture("reindex/rows.tir"), "sch.reindex(\"C\", \"B\")");
	const Stmt *top = sched_func(s)->body;
	while (top->kind == ST_ALLOC)
		top = top->u.alloc.body;
	ck_assert_int_eq(top->kind, ST_FOR);
	char *o = order(top->u.loop.body);
	ck_assert_str_eq(o, "B,B_reindex,C");
	free(o);
	ck_assert(has_obligation(s, "parallel.no_race"));
	sched_free(s);
}
END_TEST

START_TEST(reindex_rejects_what_tvm_rejects)
{
	/* two reads at different indices: TVM's non-unique access */
	ts_rejected(&arena, tu_fixture("reindex/two_reads.tir"), "sch.reindex(\"B\", \"A\")",
		    "not a single point");
	/* a read of a buffer the block also writes goes stale */
	ts_rejected(&arena, tu_fixture("reindex/accumulate.tir"), "sch.reindex(\"C\", (\"read\", 0))",
		    "goes stale");
	/* a write whose first access of a cell may be a read (no T.init) */
	ts_rejected(&arena, tu_fixture("reindex/accumulate.tir"), "sch.reindex(\"C\", \"C\")",
		    "would need a copy-in");
	/* a write under T.where: the copy-out would read skipped cells */
	ts_rejected(&arena, tu_fixture("reindex/where_write.tir"), "sch.reindex(\"C\", \"C\")", "T.where");
}
END_TEST

START_TEST(reindex_of_uninitialised_cells_is_refuted)
{
	/* the consumer's T.where reads only the produced half; the copy runs
	 * every instance and would read the other half */
	StepReport *r = ts_refuted(&arena, tu_fixture("reindex/half.tir"), "sch.reindex(\"C\", \"B\")",
				   "reindex.readable");
	ts_assert_refuted_confirmed(r, "reindex.readable");
	/* a parameter's cells are initialised, but the copy would read past
	 * the end of A where the consumer's T.where stops */
	r = ts_refuted(&arena, tu_fixture("reindex/past_the_end.tir"), "sch.reindex(\"C\", \"A\")",
		       "reindex.readable");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "i = 8"));
	ts_assert_refuted_confirmed(r, "reindex.readable");
}
END_TEST

/* ---------- reindex_cache_read / reindex_cache_write ---------- */

START_TEST(reindex_cache_stages_through_the_index_map)
{
	const char *k = tu_fixture("reindex/transpose.tir");
	Schedule *s = accept(k, "sch.reindex_cache_read(\"B\", 0, \"local\", lambda i, j: (j // 4, j % 4, i))");
	char *o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "A_local,B");
	free(o);
	prints(s, "T.alloc_buffer([4, 4, 8], \"float32\", scope=\"local\")");
	ck_assert(has_obligation(s, "reindex.injective"));
	sched_free(s);
	/* keywords, and a flattening map on the write side of a reduction */
	s = accept(tu_fixture("reindex/matmul.tir"),
		   "sch.reindex_cache_write(block=\"C\", write_buffer_index=0, storage_scope=\"shared\", "
		   "index_map=lambda i, j, k: (i * 8 + j,))");
	o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "C,C_shared");
	free(o);
	sched_free(s);
	/* vsched's string form, as cache_read's */
	s = accept(k, "sch.reindex_cache_read(block=\"B\", buffer=\"A\", scope=\"shared\", index_map=lambda i, j: (j, i))");
	o = order(sched_func(s)->body);
	ck_assert_str_eq(o, "A_shared,B");
	free(o);
	sched_free(s);
}
END_TEST

START_TEST(reindex_cache_rejects_maps_that_lose_cells)
{
	/* the map drops an iter var the access uses: TVM's precondition */
	ts_rejected(&arena, tu_fixture("reindex/transpose.tir"),
		    "sch.reindex_cache_read(\"B\", 0, \"local\", lambda i, j: (i,))",
		    "does not match the block iter vars");
	/* vi and vi + 1 share A_local[vi // 2, vj] but read different cells */
	StepReport *r = ts_refuted(&arena, tu_fixture("reindex/transpose.tir"),
				   "sch.reindex_cache_read(\"B\", 0, \"local\", lambda i, j: (i // 2, j))",
				   "reindex.injective");
	ts_assert_refuted_confirmed(r, "reindex.injective");
	/* on the write side two cells of C would share one of C_local */
	r = ts_refuted(&arena, tu_fixture("reindex/matmul.tir"),
		       "sch.reindex_cache_write(\"C\", 0, \"local\", lambda i, j, k: (i % 4, j))", "reindex.injective");
	ts_assert_refuted_confirmed(r, "reindex.injective");
}
END_TEST

START_TEST(reindex_cache_bad_arguments)
{
	const char *k = tu_fixture("reindex/transpose.tir");
	ts_bad_input(&arena, k, "sch.reindex_cache_read(\"B\", 0, \"texture\", lambda i, j: (i, j))",
		     "storage_scope must be");
	ts_bad_input(&arena, k, "sch.reindex_cache_read(\"B\", 0, \"local\", lambda i: (i,))",
		     "the index map takes 1 indices but block 'B' has 2 iter vars");
	ts_bad_input(&arena, k, "sch.reindex_cache_read(\"B\", 0, \"local\")", "expected index_map=lambda");
	ts_bad_input(&arena, k, "sch.reindex(\"B\", (\"read\", 3))", "index 3 is out of range");
}
END_TEST

/* ---------- red team (issue 12) ----------
 * Deliberate attempts to make reindex accept a wrong stage: a block that
 * reads the buffer it writes at another cell (the copy-out would come too
 * late for the read), one that writes the buffer it reads (the copy-in
 * would be stale), index maps that send two cells to one. Each names its
 * reason; where there is a counterexample, its replay confirms it. */
static const char red_team[] = "reindex/red_team.tir";

static const char *on(const char *fn, const char *call)
{
	return arena_printf(&arena, "sch.work_on(\"%s\")\n%s", fn, call);
}

START_TEST(red_team_reindex_of_a_buffer_read_and_written_is_refused)
{
	const char *k = tu_fixture(red_team);
	static const char *const own_output[] = {
		"sch.reindex(\"B\", (\"write\", 0))",
		"sch.reindex(\"B\", (\"read\", 1))",
		"sch.reindex_cache_write(\"B\", 0, \"global\", lambda i, j: (j, i))",
	};
	for (size_t i = 0; i < sizeof own_output / sizeof *own_output; i++)
		ts_rejected(&arena, k, on("reads_own_output", own_output[i]),
			    "the access of B in block 'B' is not a single point of its iter vars");
	static const char *const own_input[] = {
		"sch.reindex(\"B\", (\"read\", 0))",
		"sch.reindex(\"B\", (\"write\", 0))",
		"sch.reindex_cache_read(\"B\", 0, \"global\", lambda i, j: (i, j))",
	};
	for (size_t i = 0; i < sizeof own_input / sizeof *own_input; i++)
		ts_rejected(&arena, k, on("writes_its_input", own_input[i]),
			    "the access of A in block 'B' is not a single point of its iter vars");
}
END_TEST

START_TEST(red_team_reindex_cache_maps_that_merge_cells_are_refuted)
{
	const char *k = tu_fixture(red_team);
	ts_refuted(&arena, k, on("two_cells_one", "sch.reindex_cache_write(\"B\", 0, \"global\", lambda i, j: (i + j,))"),
		   "reindex.injective");
	ts_refuted(&arena, k, on("two_cells_one", "sch.reindex_cache_read(\"B\", 0, \"global\", lambda i, j: (i // 2, j))"),
		   "reindex.injective");
	/* a transposed stage is a bijection: committed, the same results */
	TsRun t = ts_accept(&arena, k, on("two_cells_one", "sch.reindex_cache_write(\"B\", 0, \"global\", lambda i, j: (j, i))"), 8);
	sched_free(t.s);
	/* a write of one cell by several instances (the last one wins): the
	 * stage keeps the order, and the copy-out writes what the last wrote */
	t = ts_accept(&arena, k, on("same_cell_twice", "sch.reindex(\"B\", (\"write\", 0))"), 8);
	sched_free(t.s);
	ts_rejected(&arena, k, on("same_cell_twice", "sch.reindex_cache_write(\"B\", 0, \"global\", lambda i, j: (i, j))"),
		    "the index map does not match the block iter vars");
}
END_TEST

/* Unsound accepts before the fix: the reindex buffer is allocated for the
 * whole function with the iter domains as its shape. A domain T.min(m -
 * 5, 16) is negative for m < 5, where the block's loop runs nothing: the
 * allocation failed at m = 4 (`vsched equiv` found it); a domain that
 * divides by m under `if m != 0` divided by zero at m = 0. Now
 * reindex.shape is refuted with a replay, the copy of a range that may
 * fault is not supported, and a domain the entry facts bound still
 * reindexes. */
START_TEST(red_team_reindex_buffer_shape_is_safe_at_entry)
{
	const char *k = tu_fixture("reindex/shapes_at_entry.tir");
	for (int w = 0; w < 2; w++) {
		const char *side = w ? "write" : "read";
		StepReport *r = ts_refuted(&arena, k,
					   arena_printf(&arena, "sch.work_on(\"negative_domain\")\nsch.reindex(\"B\", (\"%s\", 0))", side),
					   "reindex.shape");
		ts_has(r->replay_text, "has negative extent");
		ts_rejected(&arena, k,
			    arena_printf(&arena, "sch.work_on(\"guarded_div\")\nsch.reindex(\"B\", (\"%s\", 0))", side),
			    "not supported: reindex: the range of loop j may fault");
		TsRun t = ts_accept(&arena, k,
				    arena_printf(&arena, "sch.work_on(\"assumed\")\nsch.reindex(\"B\", (\"%s\", 0))", side), 6);
		ck_assert(ts_has_obligation(t.r, "reindex.shape", VERDICT_PROVEN));
		sched_free(t.s);
	}
}
END_TEST

Suite *suite_reindex(void)
{
	Suite *s = suite_create("reindex");
	TCase *tc = tcase_create("reindex");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, reindex_read_copies_before_the_block);
	tcase_add_test(tc, reindex_write_of_a_reduction_copies_out_after_it);
	tcase_add_test(tc, reindex_inside_a_shared_loop_stays_in_it);
	tcase_add_test(tc, reindex_rejects_what_tvm_rejects);
	tcase_add_test(tc, reindex_of_uninitialised_cells_is_refuted);
	suite_add_tcase(s, tc);
	tc = tcase_create("reindex_cache");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, reindex_cache_stages_through_the_index_map);
	tcase_add_test(tc, reindex_cache_rejects_maps_that_lose_cells);
	tcase_add_test(tc, reindex_cache_bad_arguments);
	suite_add_tcase(s, tc);
	tc = tcase_create("red_team");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, red_team_reindex_of_a_buffer_read_and_written_is_refused);
	tcase_add_test(tc, red_team_reindex_cache_maps_that_merge_cells_are_refuted);
	tcase_add_test(tc, red_team_reindex_buffer_shape_is_safe_at_entry);
	suite_add_tcase(s, tc);
	return s;
}
