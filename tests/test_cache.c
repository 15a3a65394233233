/* tests/test_cache.c — cache_read and cache_write through the schedule and
 * the C API: the staged program is compared with the original by the
 * interpreter, the copy stages are where semantics.md and seed 000 put
 * them (cache_read's copy before the block, a later transform_layout's pad
 * stage right after that copy), the staged region holds only the reads
 * that run (an arm of T.if_then_else not picked is no access), and the
 * rejections name their reason with a confirmed replay where the solver
 * refuted an obligation. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrites/layout.h"
#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* The suite's checks over the shared ones (testsched.h): eight trials,
 * and every accepted result must print and parse back. */
static Schedule *accept(const char *kernel, const char *script)
{
	TsRun t = ts_accept(&arena, kernel, script, 8);
	ts_assert_reparses(&arena, sched_func(t.s));
	return t.s;
}

static StepReport *reject(const char *kernel, const char *script, const char *why)
{
	return ts_rejected(&arena, kernel, script, why);
}

static StepReport *refuted(const char *kernel, const char *script, const char *kind)
{
	return ts_refuted(&arena, kernel, script, kind);
}

/* Bad input (exit 2): the diagnostics mention `why`. */
static void bad_input(const char *kernel, const char *script, const char *why)
{
	ts_bad_input(&arena, kernel, script, why);
}

/* The statements of the body of the allocation of `name`, or NULL. */
static const Stmt *alloc_body(const Stmt *s, const char *name)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			const Stmt *r = alloc_body(s->u.seq.items[i], name);
			if (r)
				return r;
		}
		return NULL;
	case ST_ALLOC:
		if (strcmp(s->u.alloc.buf->name, name) == 0)
			return s->u.alloc.body;
		return alloc_body(s->u.alloc.body, name);
	case ST_FOR: return alloc_body(s->u.loop.body, name);
	case ST_BLOCK: return alloc_body(s->u.block.body, name);
	case ST_LET: return alloc_body(s->u.let.body, name);
	case ST_IF: {
		const Stmt *r = alloc_body(s->u.cond.then_s, name);
		return r || !s->u.cond.else_s ? r : alloc_body(s->u.cond.else_s, name);
	}
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

/* The names of the blocks directly in a sequence, comma separated. */
static char *block_order(const Stmt *s)
{
	StrBuf b = {0};
	int n = s->kind == ST_SEQ ? s->u.seq.n : 1;
	for (int i = 0; i < n; i++) {
		const Stmt *x = s->kind == ST_SEQ ? s->u.seq.items[i] : s;
		sb_printf(&b, "%s%s", b.n ? "," : "", x->kind == ST_BLOCK ? x->u.block.name : "-");
	}
	return sb_take(&b);
}

/* Seed 000, "Allocate internal buffer containing transformation padding". */
static const char row_sum[] = "cache/row_sum.tir";

/* ---------- cache_read ---------- */

START_TEST(cache_read_stages_the_input_before_the_block)
{
	Schedule *s = accept(tu_fixture(row_sum),
			     "A_local = sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"local\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "A_local");
	ck_assert_ptr_nonnull(body);
	char *order = block_order(body);
	ck_assert_str_eq(order, "A_local,compute");
	free(order);
	/* the block reads the cache, nothing else reads A any more */
	const Stmt *copy = body->u.seq.items[0]->u.block.body;
	ck_assert_int_eq(copy->kind, ST_FOR);
	ck_assert_int_eq(copy->u.loop.extent->u.ival, 14);
	ck_assert_int_eq(rw_stmt_accesses(body->u.seq.items[1], sched_func(s)->params[0].buf, false), 0);
	ck_assert_int_eq(tu_last(s)->nobs, 1);
	ck_assert_str_eq(tu_last(s)->obs[0]->kind, "cache.covers");
	sched_free(s);
}
END_TEST

START_TEST(transform_layout_of_the_cache_pads_right_after_the_copy)
{
	Schedule *s = accept(tu_fixture(row_sum),
			     "A_local = sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"local\")\n"
			     "sch.transform_layout(buffer=\"A_local\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	const Stmt *body = alloc_body(sched_func(s)->body, "A_local");
	char *order = block_order(body);
	ck_assert_str_eq(order, "A_local,A_local_pad,compute");
	free(order);
	sched_free(s);
	/* the conformance case up to the step the lead owns */
	const char *dir = tu_shared_dir();
	if (!dir)
		return;
	char path[4096], after[4096];
	snprintf(path, sizeof path, "%s/conformance/internal_cache_zero_padding/before.tir", dir);
	snprintf(after, sizeof after, "%s/conformance/internal_cache_zero_padding/after.tir", dir);
	char *before_text = tu_read_file(path), *after_text = tu_read_file(after);
	if (!before_text || !after_text) {
		free(before_text);
		free(after_text);
		return;
	}
	s = accept(before_text, "A_local = sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"local\")\n"
				"sch.transform_layout(buffer=\"A_local\", index_map=lambda i: [i // 4, i % 4], pad_value=0)");
	Module *want = tu_parse(&arena, "after.tir", after_text);
	tu_assert_equiv(want->funcs[0], sched_func(s), 8);
	sched_free(s);
	free(before_text);
	free(after_text);
}
END_TEST

START_TEST(cache_read_copies_only_the_region_read)
{
	const char *k = tu_fixture("cache/cache_read_copies_only_the_region_read.tir");
	Schedule *s = accept(k, "A_s = sch.cache_read(block=\"b\", buffer=\"A\", scope=\"shared\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "A_s");
	const Stmt *copy = body->u.seq.items[0]->u.block.body;
	ck_assert_int_eq(copy->u.loop.min->u.ival, 2);
	ck_assert_int_eq(copy->u.loop.extent->u.ival, 9);
	ck_assert_int_eq(tu_last(s)->nobs, 2);
	sched_free(s);
	/* a guarded read past the end: the region is clipped to the shape */
	const char *guarded = tu_fixture("cache/cache_read_copies_only_the_region_read-guarded.tir");
	sched_free(accept(guarded, "sch.cache_read(block=\"b\", buffer=\"A\", scope=\"local\")"));
}
END_TEST

START_TEST(cache_read_without_block_stages_the_whole_function)
{
	const char *k = tu_fixture("cache/cache_read_without_block_stages_the_whole_function.tir");
	Schedule *s = accept(k, "A_l = sch.cache_read(buffer=\"A\", scope=\"local\")");
	const Stmt *top = sched_func(s)->body;
	ck_assert_int_eq(top->kind, ST_SEQ);
	ck_assert_int_eq(top->u.seq.items[0]->kind, ST_ASSUME); /* the entry fact stays first */
	ck_assert_int_eq(top->u.seq.items[1]->kind, ST_ALLOC);
	sched_free(s);
}
END_TEST

/* The copy reads every cell of the region, even ones the block's own
 * guard would skip: uninitialised cells of an allocated buffer reject. */
START_TEST(cache_read_of_uninitialised_cells_is_rejected)
{
	const char *k = tu_fixture("cache/cache_read_of_uninitialised_cells_is_rejected.tir");
	/* the bounds of i come from the guard: C[1 .. 12], all produced */
	sched_free(accept(k, "sch.cache_read(block=\"use\", buffer=\"C\", scope=\"local\")"));
	const char *bad = tu_fixture("cache/cache_read_of_uninitialised_cells_is_rejected-bad.tir");
	/* here the region proposal is the whole of C: C[0] is never written */
	StepReport *r = refuted(bad, "sch.cache_read(block=\"use\", buffer=\"C\", scope=\"local\")",
				"cache.readable");
	ck_assert_ptr_nonnull(strstr(r->replay_text, "uninitialised C["));
}
END_TEST

START_TEST(cache_read_rejects_blocks_that_write_the_buffer_and_bad_names)
{
	const char *writes = tu_fixture("cache/cache_read_rejects_blocks_that_write_the_buffer_and_bad_names-writes.tir");
	reject(writes, "sch.cache_read(block=\"b\", buffer=\"A\", scope=\"local\")", "use cache_write");
	bad_input(tu_fixture(row_sum),
		  "sch.cache_read(block=\"compute\", buffer=\"Q\", scope=\"local\")", "no buffer 'Q'");
	bad_input(tu_fixture(row_sum),
		  "sch.cache_read(block=\"nope\", buffer=\"A\", scope=\"local\")", "no block 'nope'");
	bad_input(tu_fixture(row_sum),
		  "B = sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"local\")",
		  "already has a buffer 'B'");
	bad_input(tu_fixture(row_sum),
		  "sch.cache_read(block=\"compute\", buffer=\"A\", scope=\"texture\")", "scope must be");
	bad_input(tu_fixture(row_sum),
		  "sch.cache_read(block=\"compute\", buffer=\"A\", colour=\"red\")",
		  "unexpected keyword");
	bad_input(tu_fixture(row_sum), "sch.cache_read(block=\"compute\")", "expected buffer=");
	const char *other = tu_fixture("cache/cache_read_rejects_blocks_that_write_the_buffer_and_bad_names-other.tir");
	bad_input(other, "sch.cache_read(block=\"b\", buffer=\"A\", scope=\"local\")", "does not access");
	const char *inner = tu_fixture("cache/cache_read_rejects_blocks_that_write_the_buffer_and_bad_names-inner.tir");
	bad_input(inner, "sch.cache_read(buffer=\"C\", scope=\"local\")", "name the block");
}
END_TEST

/* Each parallel iteration now copies the whole region: iterations read
 * cells the others write, a race the original did not have. */
START_TEST(cache_read_inside_a_parallel_loop_checks_races_again)
{
	const char *ok = tu_fixture("cache/cache_read_inside_a_parallel_loop_checks_races_again-ok.tir");
	sched_free(accept(ok, "sch.cache_read(block=\"b\", buffer=\"A\", scope=\"local\")"));
	const char *racy = tu_fixture("cache/cache_read_inside_a_parallel_loop_checks_races_again-racy.tir");
	StepReport *r = reject(racy, "sch.cache_read(block=\"b\", buffer=\"A\", scope=\"local\")",
			       "parallel.no_race");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
}
END_TEST

/* ---------- cache_write ---------- */

static const char doubler[] = "cache/doubler.tir";

/* Seed 000's B_cache: the block writes every cell, so no copy-in. */
START_TEST(cache_write_of_a_full_write_needs_no_copy_in)
{
	Schedule *s = accept(tu_fixture(doubler),
			     "B_local = sch.cache_write(block=\"compute\", buffer=\"B\", scope=\"local\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "B_local");
	char *order = block_order(body);
	ck_assert_str_eq(order, "compute,B_local_out");
	free(order);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->note, "no copy-in"));
	sched_free(s);
	/* an intermediate buffer, written over an offset range */
	const char *inter = tu_fixture("cache/cache_write_of_a_full_write_needs_no_copy_in-inter.tir");
	s = accept(inter, "C_l = sch.cache_write(block=\"compute\", buffer=\"C\", scope=\"local\")");
	ck_assert_ptr_nonnull(tu_last(s)->note);
	sched_free(s);
	/* two dimensions, loops swapped */
	const char *twod = tu_fixture("cache/cache_write_of_a_full_write_needs_no_copy_in-twod.tir");
	s = accept(twod, "sch.cache_write(block=\"t\", buffer=\"B\", scope=\"local\")");
	ck_assert_ptr_nonnull(tu_last(s)->note);
	sched_free(s);
}
END_TEST

START_TEST(cache_write_of_a_read_modify_write_copies_in)
{
	const char *k = tu_fixture("cache/cache_write_of_a_read_modify_write_copies_in.tir");
	Schedule *s = accept(k, "B_local = sch.cache_write(block=\"compute\", buffer=\"B\", scope=\"local\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "B_local");
	char *order = block_order(body);
	ck_assert_str_eq(order, "B_local_in,compute,B_local_out");
	free(order);
	sched_free(s);
	/* a reduction into one cell */
	sched_free(accept(tu_fixture(row_sum),
			  "sch.cache_write(block=\"compute\", buffer=\"B\", scope=\"local\")"));
}
END_TEST

/* Without block=: the function body after its entry facts, with the
 * copy-in after them and the copy-out at the end. */
START_TEST(cache_write_without_block_stages_the_whole_function)
{
	const char *k = tu_fixture("cache/cache_write_without_block_stages_the_whole_function.tir");
	Schedule *s = accept(k, "sch.cache_write(buffer=\"B\", scope=\"local\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "B_local");
	char *order = block_order(body);
	ck_assert_str_eq(order, "B_local_in,-,-,B_local_out");
	free(order);
	sched_free(s);
}
END_TEST

/* A partial write of an allocated buffer: the copy-in would read cells
 * nothing initialised. */
START_TEST(cache_write_of_cells_the_block_leaves_unwritten_is_refuted)
{
	const char *k = tu_fixture("cache/cache_write_of_cells_the_block_leaves_unwritten_is_refuted.tir");
	/* the block writes the even cells only (a guard no box follows):
	 * no copy-in is chosen, and cache.written is refuted at an odd cell,
	 * with a confirmed replay (the copy-out reads an unwritten cell) */
	StepReport *r = refuted(k, "sch.cache_write(block=\"compute\", buffer=\"C\", scope=\"local\")",
				"cache.written");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "ax0 = "));
	ts_assert_refuted_confirmed(r, "cache.written");
	reject(tu_fixture(row_sum),
	       "sch.cache_write(block=\"compute\", buffer=\"A\", scope=\"local\")", "use cache_read");
}
END_TEST

/* ---------- the C API ---------- */

START_TEST(api_cache_read_and_write)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "k.tir", tu_fixture(row_sum));
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_cache_read(s, "compute", "A", "local", "A_local"), VS_OK);
	ck_assert_int_eq(vs_cache_write(s, "compute", "B", NULL, NULL), VS_OK);
	char *text = vs_module_print(vs_schedule_result(s));
	ck_assert_ptr_nonnull(strstr(text, "A_local = T.alloc_buffer([14], \"int32\", scope=\"local\")"));
	ck_assert_ptr_nonnull(strstr(text, "B_global = T.alloc_buffer"));
	free(text);
	char *report = NULL;
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 8, 3, &report), VS_OK);
	free(report);
	ck_assert_int_eq(vs_cache_read(s, "compute", NULL, "local", NULL), VS_BAD_INPUT);
	ck_assert_int_eq(vs_cache_read(s, "compute", "A", "local", "A_local"), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "already has a buffer"));
	ck_assert_int_eq(vs_cache_write(s, "compute", "A_local", "local", NULL), VS_REJECTED);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "does not write"));
	vs_schedule_free(s);
	vs_context_free(ctx);
}
END_TEST

/* A read in the arm of T.if_then_else that is not picked is no access:
 * C[i] = T.if_then_else(i < 64, A[i], X[i] * 2.0) stages A[0:64], the
 * cells the producer wrote (before: all of A, and cache.readable was
 * refuted at A[64], an uninitialised cell no run reads). A condition
 * that reads a buffer cannot bound the region: the whole of A is staged
 * and the copy-in of its uninitialised cells is refuted. */
START_TEST(cache_read_stages_only_the_taken_arm)
{
	const char *k = tu_fixture("cache/cache_read_stages_only_the_taken_arm.tir");
	Schedule *s = accept(k, "sch.cache_read(block=\"use\", buffer=\"A\", scope=\"local\")");
	const Stmt *body = alloc_body(sched_func(s)->body, "A_local");
	ck_assert_ptr_nonnull(body);
	const Stmt *copy = body->u.seq.items[0]->u.block.body;
	ck_assert_int_eq(copy->u.loop.min->u.ival, 0);
	ck_assert_int_eq(copy->u.loop.extent->u.ival, 64);
	ck_assert(ts_has_obligation(tu_last(s), "cache.covers", VERDICT_PROVEN));
	sched_free(s);
	const char *load = tu_fixture("cache/cache_read_stages_only_the_taken_arm-load_cond.tir");
	StepReport *r = reject(load, "sch.cache_read(block=\"use\", buffer=\"A\", scope=\"local\")",
			       "cache.readable refuted");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "ax0 = "));
}
END_TEST


/* ---------- the region the block uses (TVM's stage) ---------- */

/* A block inside a tile loop stages its tile, X[i * 16 : i * 16 + 16],
 * not the whole buffer: the copy-in then reads only cells the producer
 * wrote in this iteration (its store X[i * 16 + j] is a fact by the
 * mixed-radix rule), and the moving range is proven inside X. */
START_TEST(cache_read_stages_the_tile_the_block_uses)
{
	const char *k = tu_fixture("cache/cache_read_stages_the_tile_the_block_uses.tir");
	Schedule *s = accept(k, "sch.cache_read(\"use\", 0, \"local\")");
	const StepReport *r = tu_last(s);
	ck_assert(ts_has_obligation(r, "cache.in_bounds", VERDICT_PROVEN));
	ck_assert(ts_has_obligation(r, "cache.readable", VERDICT_PROVEN));
	ts_has(ts_print(&arena, sched_func(s)), "for ax0 in T.serial(i * 16, i * 16 + 16):");
	sched_free(s);
	/* red team: the producer skips j == 7 and the block reads that cell
	 * only in an arm it does not take; the box still holds it, so the
	 * copy-in would read an unwritten cell */
	const char *gap = tu_fixture("cache/cache_read_stages_the_tile_the_block_uses-gap.tir");
	StepReport *g = refuted(gap, "sch.cache_read(\"use\", 0, \"local\")", "cache.readable");
	ts_assert_refuted_confirmed(g, "cache.readable");
	ck_assert_ptr_nonnull(strstr(g->counterexample, "ax0 = 7"));
}
END_TEST

/* ---------- producers under a guard (issue 12 item 8) ---------- */

/* T.where(i * 8 + j < 120) around X[i * 8 + j]: a cell is initialised
 * where the guard held for the instance that writes it, so the copy-in
 * of X[0:120] is proven. */
START_TEST(cache_read_after_a_guarded_producer)
{
	const char *k = tu_fixture("cache/cache_read_after_a_guarded_producer.tir");
	Schedule *s = accept(k, "sch.cache_read(\"use\", 0, \"local\")");
	ck_assert(ts_has_obligation(tu_last(s), "cache.readable", VERDICT_PROVEN));
	sched_free(s);
	/* red team: the guarded producer skips X[100], which the block never
	 * reads but the box holds: refuted at 100, confirmed by replay */
	const char *shortk = tu_fixture("cache/cache_read_after_a_guarded_producer-short.tir");
	StepReport *r = refuted(shortk, "sch.cache_read(\"use\", 0, \"local\")", "cache.readable");
	ts_assert_refuted_confirmed(r, "cache.readable");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "ax0 = 100"));
}
END_TEST

/* Two stores to X (if / else) each make their cells readable. */
START_TEST(cache_read_after_two_stores_to_one_buffer)
{
	const char *k = tu_fixture("cache/cache_read_after_two_stores_to_one_buffer.tir");
	Schedule *s = accept(k, "sch.cache_read(\"use\", 0, \"local\")");
	ck_assert(ts_has_obligation(tu_last(s), "cache.readable", VERDICT_PROVEN));
	sched_free(s);
	/* red team: the two stores write k % 4 == 0 and 1 only */
	const char *odd = tu_fixture("cache/cache_read_after_two_stores_to_one_buffer-odd.tir");
	StepReport *r = refuted(odd, "sch.cache_read(\"use\", 0, \"local\")", "cache.readable");
	ts_assert_refuted_confirmed(r, "cache.readable");
}
END_TEST

/* ---------- consumer_blocks= ---------- */

/* cache_write(..., consumer_blocks=[use]): the producer writes the cache,
 * `use` reads it after the copy-out, `late` still reads X; cache_read
 * with consumer_blocks=[late] stages for `late` alone (the block given
 * only names the buffer). */
START_TEST(consumer_blocks_read_the_cache)
{
	const char *k = tu_fixture("cache/consumer_blocks.tir");
	Schedule *s = accept(k, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=[\"use\"])");
	char *text = ts_print(&arena, sched_func(s));
	ts_has(text, "B[vi] = X_local[vi] + 1.0");
	ts_has(text, "C[vk] = X[vk] * 3.0");
	ck_assert_int_eq(ts_count_obligations(tu_last(s), "cache.covers"), 2);
	sched_free(s);
	s = accept(k, "sch.cache_read(\"use\", 0, \"local\", consumer_blocks=[\"late\"])");
	text = ts_print(&arena, sched_func(s));
	ts_has(text, "B[vi] = X[vi] + 1.0");
	ts_has(text, "C[vk] = X_local[vk] * 3.0");
	sched_free(s);
	s = accept(k, "b = sch.get_block(\"produce\")\nu = sch.get_block(\"use\")\n"
		      "sch.cache_write(b, 0, \"local\", consumer_blocks=[b, u])");
	ts_has(ts_print(&arena, sched_func(s)), "B[vi] = X_local[vi] + 1.0");
	sched_free(s);
	/* `late` runs after the tile loop that holds the stage: the cache
	 * lives for the whole function and every cell `late` reads was
	 * staged (X is written only by the copy-out) */
	s = accept(k, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=[\"use\", \"late\"])");
	text = ts_print(&arena, sched_func(s));
	ts_has(text, "C[vk] = X_local[vk] * 3.0");
	ts_has(text, "B[vi] = X_local[vi] + 1.0");
	ck_assert(ts_has_obligation(tu_last(s), "cache.consumer_readable", VERDICT_PROVEN));
	sched_free(s);
	/* red team: the stage writes half of each tile of a parameter and
	 * `late` reads all of it: cells it finds unwritten in the cache are
	 * refuted, confirmed by replay */
	const char *param = tu_fixture("cache/consumer_blocks-param.tir");
	StepReport *r = refuted(param, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=[\"late\"])",
				"cache.consumer_readable");
	ts_assert_refuted_confirmed(r, "cache.consumer_readable");
}
END_TEST

START_TEST(consumer_blocks_that_cannot_see_the_cache_reject)
{
	const char *k = tu_fixture("cache/consumer_blocks.tir");
	/* cache_read serves only blocks after its stage in its sequence */
	reject(k, "sch.cache_read(\"use\", 0, \"local\", consumer_blocks=[\"use\", \"late\"])",
	       "not supported: cache_read: consumer_blocks: block 'late' is outside the loops that hold the stage");
	/* `bump` writes X between the copy-out and `use` */
	const char *over = tu_fixture("cache/consumer_blocks-overwrite.tir");
	reject(over, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=[\"use\"])",
	       "a statement before block 'use' writes X");
	bad_input(k, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=[\"nope\"])",
		  "consumer_blocks: no block 'nope'");
	bad_input(k, "sch.cache_write(\"produce\", 0, \"local\", consumer_blocks=3)",
		  "consumer_blocks must be a list of blocks");
}
END_TEST

/* cache_write of a block that writes X and then reads it back, X
 * allocated right around it: every read of a run without undefined
 * behaviour reads a cell the block wrote first, so no copy-in is needed;
 * cache.written proves the copy-out reads only written cells. */
START_TEST(cache_write_of_a_fresh_buffer_read_back_needs_no_copy_in)
{
	const char *k = tu_fixture("cache/cache_write_of_a_fresh_buffer_read_back_needs_no_copy_in.tir");
	Schedule *s = accept(k, "sch.cache_write(\"both\", 0, \"local\")");
	ck_assert(ts_has_obligation(tu_last(s), "cache.written", VERDICT_PROVEN));
	ck_assert_int_eq(ts_count_obligations(tu_last(s), "cache.readable"), 0);
	sched_free(s);
	/* red team: X lives across the loop, so the second run reads what the
	 * first wrote: not fresh, a copy-in is needed, and at the first run
	 * it reads unwritten cells (confirmed by replay) */
	const char *kept = tu_fixture("cache/cache_write_of_a_fresh_buffer_read_back_needs_no_copy_in-kept.tir");
	StepReport *r = refuted(kept, "sch.cache_write(\"both\", 0, \"local\")", "cache.readable");
	ts_assert_refuted_confirmed(r, "cache.readable");
}
END_TEST

Suite *suite_cache(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache_read");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cache_read_stages_the_input_before_the_block);
	tcase_add_test(tc, transform_layout_of_the_cache_pads_right_after_the_copy);
	tcase_add_test(tc, cache_read_copies_only_the_region_read);
	tcase_add_test(tc, cache_read_without_block_stages_the_whole_function);
	tcase_add_test(tc, cache_read_of_uninitialised_cells_is_rejected);
	tcase_add_test(tc, cache_read_rejects_blocks_that_write_the_buffer_and_bad_names);
	tcase_add_test(tc, cache_read_inside_a_parallel_loop_checks_races_again);
	suite_add_tcase(s, tc);
	tc = tcase_create("cache_write");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cache_write_of_a_full_write_needs_no_copy_in);
	tcase_add_test(tc, cache_write_of_a_read_modify_write_copies_in);
	tcase_add_test(tc, cache_write_without_block_stages_the_whole_function);
	tcase_add_test(tc, cache_write_of_cells_the_block_leaves_unwritten_is_refuted);
	suite_add_tcase(s, tc);
	tc = tcase_create("conditional_reads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cache_read_stages_only_the_taken_arm);
	suite_add_tcase(s, tc);
	tc = tcase_create("stage_region");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cache_read_stages_the_tile_the_block_uses);
	suite_add_tcase(s, tc);
	tc = tcase_create("guarded_producers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cache_read_after_a_guarded_producer);
	tcase_add_test(tc, cache_read_after_two_stores_to_one_buffer);
	tcase_add_test(tc, cache_write_of_a_fresh_buffer_read_back_needs_no_copy_in);
	suite_add_tcase(s, tc);
	tc = tcase_create("consumer_blocks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, consumer_blocks_read_the_cache);
	tcase_add_test(tc, consumer_blocks_that_cannot_see_the_cache_reject);
	suite_add_tcase(s, tc);
	tc = tcase_create("api");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, api_cache_read_and_write);
	suite_add_tcase(s, tc);
	return s;
}
