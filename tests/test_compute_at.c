/* tests/test_compute_at.c — compute_at and reverse_compute_at: seed 002's
 * InferBound examples (Ex. 1 to Ex. 6, attach paths, regions) written as
 * blocks over T.alloc_buffer, bound inference on its own, rejections with
 * counterexamples (a consumer reading the producer before the attach
 * point, clobbered producer inputs, a consumer moved before its input is
 * final), unsupported shapes, conditional reads (in an arm of
 * T.if_then_else or under an `if`, an access only where it runs), the
 * script syntax and the public API. Every accepted step is checked
 * against the original with the interpreter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrites/attach.h"
#include "kernel/print.h"
#include "smt/smt.h"
#include "tests/testsched.h"
#include "vsched.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* ---------- kernels (seed 002, te-style stages as blocks) ---------- */

/* Ex. 1-3, Ex. 5: C = 5, D = C * 2 over (5, 16) */
static const char ex1[] = "compute_at/ex1.tir";

/* Ex. 4: D is (4, 5, 16) and reads C[dj, dk] */
static const char ex4[] = "compute_at/ex4.tir";

/* the attach-path example: C at D, D at E */
static const char chain[] = "compute_at/chain.tir";

/* Ex. 6: B = A + 2, C = B * 3 over (4, 4) */
static const char ex6[] = "compute_at/ex6.tir";

/* What TVM's InferBound makes of Ex. 6 (the seed's first listing): all 16
 * elements of B in every outer iteration. */
static const char ex6_tvm[] = "compute_at/ex6_tvm.tir";

/* ---------- helpers ---------- */

/* Over the shared checks (testsched.h): six interpreter trials. */
static Schedule *accept_text(const char *kernel, const char *script)
{
	return ts_accept(&arena, kernel, script, 6).s;
}

/* Rejected with `why` in the reason; the previous IR is kept. */
static StepReport *reject(const char *kernel, const char *script, const char *why)
{
	return ts_rejected(&arena, kernel, script, why);
}

static const Buffer *alloc_named(const Stmt *s, const char *name)
{
	switch (s->kind) {
	case ST_ALLOC:
		if (strcmp(s->u.alloc.buf->name, name) == 0)
			return s->u.alloc.buf;
		return alloc_named(s->u.alloc.body, name);
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			const Buffer *b = alloc_named(s->u.seq.items[i], name);
			if (b)
				return b;
		}
		return NULL;
	case ST_FOR: return alloc_named(s->u.loop.body, name);
	case ST_BLOCK: return alloc_named(s->u.block.body, name);
	case ST_LET: return alloc_named(s->u.let.body, name);
	case ST_IF:
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

/* "[1, 4]" */
static char *shape_of(const Func *f, const char *buf)
{
	const Buffer *b = alloc_named(f->body, buf);
	ck_assert_ptr_nonnull(b);
	StrBuf sb = {0};
	sb_puts(&sb, "[");
	for (int d = 0; d < b->ndim; d++) {
		int64_t v = -1;
		an_const_int(b->shape[d], &v);
		sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)v);
	}
	sb_puts(&sb, "]");
	char *t = sb_take(&sb);
	char *r = arena_strdup(&arena, t);
	free(t);
	return r;
}

/* stores executed by one run on a random admissible input */
static uint64_t stores_of(const Func *f)
{
	DiagList d;
	diag_init(&d, &arena);
	State *in = interp_gen_input(&arena, f, 3, &d);
	ck_assert_ptr_nonnull(in);
	InterpResult r;
	ck_assert_int_eq(interp_run(f, in, 0, &r), RUN_OK);
	return r.counts.stores;
}

static void assert_all_proven(const StepReport *r)
{
	ck_assert_int_gt(r->nobs, 0);
	for (int i = 0; i < r->nobs; i++)
		ck_assert_int_eq(r->results[i].verdict, VERDICT_PROVEN);
}

/* ---------- bound inference on its own ---------- */

/* Ex. 1: nothing attached, D reads all (5, 16) elements of C. */
START_TEST(ex1_unattached_consumer_reads_whole_5x16)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(ex1));
	const Func *f = m->funcs[0];
	const Buffer *c = alloc_named(f->body, "C");
	const Stmt *seq = f->body->u.alloc.body;
	ck_assert_int_eq(seq->kind, ST_SEQ);
	RgEnv env;
	rg_env_init(&env, &arena);
	RgBox box;
	rg_access_box(&env, seq->u.seq.items[1], c, false, &box);
	ck_assert_int_eq(box.naccesses, 1);
	int64_t v;
	ck_assert(an_const_int(box.lo[0], &v) && v == 0);
	ck_assert(an_const_int(box.hi[0], &v) && v == 4);
	ck_assert(an_const_int(box.lo[1], &v) && v == 0);
	ck_assert(an_const_int(box.hi[1], &v) && v == 15);
	ck_assert_str_eq(shape_of(f, "C"), "[5, 16]");
	ck_assert_int_eq(stores_of(f), 160);
}
END_TEST

/* The floor-division and modulo rules: with xo fixed and xi in [0, 4),
 * (4*xo + xi) // 4 is the point xo and (4*xo + xi) % 4 spans [0, 3]. */
START_TEST(fused_split_index_bounds_are_one_row)
{
	Var *xo = ir_var(&arena, "xo", DT_INT32, (Span){0});
	Var *xi = ir_var(&arena, "xi", DT_INT32, (Span){0});
	RgEnv env;
	rg_env_init(&env, &arena);
	rg_push_loop(&env, xo, ir_int32(&arena, 0), ir_int32(&arena, 4), false);
	rg_push_loop(&env, xi, ir_int32(&arena, 0), ir_int32(&arena, 4), true);
	Expr *f = ir_add(&arena, ir_mul(&arena, ir_varref(&arena, xo, (Span){0}), ir_int32(&arena, 4)),
			 ir_varref(&arena, xi, (Span){0}));
	Expr *row = ir_bin(&arena, OP_FLOORDIV, f, ir_int32(&arena, 4), (Span){0});
	Expr *col = ir_bin(&arena, OP_FLOORMOD, f, ir_int32(&arena, 4), (Span){0});
	Expr *lo, *hi;
	ck_assert(rg_sym_bounds(&env, row, &lo, &hi));
	ck_assert(rg_same(lo, ir_varref(&arena, xo, (Span){0})));
	ck_assert(rg_same(hi, ir_varref(&arena, xo, (Span){0})));
	ck_assert(rg_sym_bounds(&env, col, &lo, &hi));
	int64_t v;
	ck_assert(an_const_int(lo, &v) && v == 0);
	ck_assert(an_const_int(hi, &v) && v == 3);
	/* the simplifier uses the ranges: (4*xo + xi) % 4 == xi */
	ck_assert(rg_same(rg_simplify(&env, col), ir_varref(&arena, xi, (Span){0})));
}
END_TEST

/* The overflow goal of generated bounds is not vacuous although proofs
 * wrap like the program: x + 1 overflows at x = INT32_MAX. */
static Verdict overflow_verdict(int64_t xmax)
{
	Var *x = ir_var(&arena, "x", DT_INT32, (Span){0});
	Expr *xr = ir_varref(&arena, x, (Span){0});
	Expr *goal = attach_no_overflow(&arena, ir_add(&arena, xr, ir_int32(&arena, 1)));
	ck_assert_ptr_nonnull(goal);
	Expr *hyp = ir_and(&arena, ir_bin(&arena, OP_LE, ir_int32(&arena, 0), xr, (Span){0}),
			   ir_bin(&arena, OP_LE, xr, ir_int32(&arena, xmax), (Span){0}));
	Obligation *o = obligation_new(&arena, "compute_at.no_overflow", "x + 1 fits", 1, &x, 1,
				       &hyp, goal, (Span){0});
	SmtOptions opt = {0};
	Solver *sv = smt_solver_new(&opt);
	ObligationResult r;
	smt_discharge(sv, &arena, o, FLOAT_REAL, &r);
	smt_solver_free(sv);
	return r.verdict;
}

START_TEST(overflow_goal_catches_wrapping_bounds)
{
	ck_assert_int_eq(overflow_verdict(100), VERDICT_PROVEN);
	ck_assert_int_eq(overflow_verdict(2147483647), VERDICT_REFUTED);
	/* int64 arithmetic has no wider type to check in */
	Var *y = ir_var(&arena, "y", DT_INT64, (Span){0});
	ck_assert_ptr_null(attach_no_overflow(&arena, ir_add(&arena, ir_varref(&arena, y, (Span){0}),
							   ir_int(&arena, 1, DT_INT64, (Span){0}))));
}
END_TEST

/* ---------- seed 002, Ex. 2 to Ex. 5 ---------- */

START_TEST(ex2_attach_at_inner_axis_computes_one_element)
{
	Schedule *s = accept_text(tu_fixture(ex1), "sch.compute_at(block=\"C\", loop=\"dj\")");
	StepReport *r = tu_last(s);
	assert_all_proven(r);
	ts_has(r->note, "attach path: dj, di;");
	ts_has(r->note, "region of C per iteration: [di:di + 1, dj:dj + 1]");
	ts_has(r->note, "the cells read are exactly this box");
	ck_assert_str_eq(shape_of(sched_func(s), "C"), "[1, 1]");
	ck_assert_int_eq(stores_of(sched_func(s)), 160);
	sched_free(s);
}
END_TEST

START_TEST(ex3_attach_at_outer_axis_computes_a_row_of_16)
{
	Schedule *s = accept_text(tu_fixture(ex1), "sch.compute_at(\"C\", \"di\")");
	StepReport *r = tu_last(s);
	assert_all_proven(r);
	ts_has(r->note, "attach path: di;");
	ts_has(r->note, "[di:di + 1, 0:16]");
	ck_assert_str_eq(shape_of(sched_func(s), "C"), "[1, 16]");
	sched_free(s);
}
END_TEST

START_TEST(ex4_attach_path_includes_unused_outer_loop)
{
	Schedule *s = accept_text(tu_fixture(ex4), "sch.compute_at(block=\"C\", loop=\"dk\")");
	StepReport *r = tu_last(s);
	ts_has(r->note, "attach path: dk, dj, di;");
	ts_has(r->note, "[dj:dj + 1, dk:dk + 1]");
	ck_assert_str_eq(shape_of(sched_func(s), "C"), "[1, 1]");
	/* C is recomputed for every di: 4 * 5 * 16 stores of C and of D */
	ck_assert_int_eq(stores_of(sched_func(s)), 640);
	sched_free(s);
}
END_TEST

START_TEST(ex5_attach_after_split_is_one_element)
{
	Schedule *s = accept_text(tu_fixture(ex1),
				  "dj_outer, dj_inner = sch.split(\"dj\", factor=8)\n"
				       "sch.compute_at(block=\"C\", loop=\"dj_inner\")\n");
	StepReport *r = tu_last(s);
	ts_has(r->note, "attach path: dj_inner, dj_outer, di;");
	ck_assert_str_eq(shape_of(sched_func(s), "C"), "[1, 1]");
	sched_free(s);
}
END_TEST

START_TEST(chained_attach_paths_reach_the_outermost_stage)
{
	/* D at E first, then C at D's loop (now inside E's loops): the order
	 * in which vsched can move them (a producer must be a plain nest) */
	Schedule *s = accept_text(tu_fixture(chain), "sch.compute_at(block=\"D\", loop=\"ej\")\n"
					 "sch.compute_at(block=\"C\", loop=\"dj\")\n");
	ts_has(s->steps[0]->note, "attach path: ej, ei;");
	ts_has(s->steps[1]->note, "attach path: dj, di, ej, ei;");
	ck_assert_str_eq(shape_of(sched_func(s), "C"), "[1, 1]");
	ck_assert_str_eq(shape_of(sched_func(s), "D"), "[1, 1]");
	sched_free(s);
}
END_TEST

/* ---------- seed 002, Ex. 6 ---------- */

START_TEST(ex6_fuse_then_split_by_4_computes_4_elements_not_16)
{
	Schedule *s = accept_text(tu_fixture(ex6), "f = sch.fuse(\"ci\", \"cj\")\n"
				       "xo, xi = sch.split(f, factor=4)\n"
				       "sch.compute_at(block=\"B\", loop=\"xo\")\n");
	StepReport *r = tu_last(s);
	assert_all_proven(r);
	ts_has(r->note, "region of B per iteration: [xo:xo + 1, 0:4]");
	ts_has(r->note, "B shrunk from [4, 4] to [1, 4] (4 cells)");
	ts_has(r->note, "the cells read are exactly this box");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1, 4]");
	/* 4 iterations x 4 elements of B, plus the 16 of C; TVM: 4 x 16 + 16 */
	ck_assert_int_eq(stores_of(sched_func(s)), 32);
	Module *tvm = tu_parse(&arena, "tvm.tir", tu_fixture(ex6_tvm));
	tu_assert_equiv(tvm->funcs[0], sched_func(s), 4);
	ck_assert_int_eq(stores_of(tvm->funcs[0]), 80);
	sched_free(s);
}
END_TEST

START_TEST(ex6_split_by_3_gives_tightest_provable_box)
{
	Schedule *s = accept_text(tu_fixture(ex6), "f = sch.fuse(\"ci\", \"cj\")\n"
				       "xo, xi = sch.split(f, factor=3)\n"
				       "sch.compute_at(block=\"B\", loop=\"xo\")\n");
	StepReport *r = tu_last(s);
	assert_all_proven(r);
	ts_has(r->note, "the cells read are not a box: this is the tightest box around them (xo=1: the box holds 8 cells, 3 are read)");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[2, 4]");
	/* the new bounds compute xo * 3 + 2 and friends in int32 */
	ck_assert_int_gt(ts_count_obligations(r, "compute_at.no_overflow"), 0);
	ck_assert_int_gt(ts_count_obligations(r, "compute_at.fit"), 0);
	/* per iteration 3, 8, 8, 3, 3, 1 elements of B (the minimal boxes of
	 * the seed's last figure), plus the 16 of C; TVM: 6 x 16 + 16 */
	ck_assert_int_eq(stores_of(sched_func(s)), 26 + 16);
	sched_free(s);
}
END_TEST

START_TEST(ex6_without_fuse_attach_at_row_is_4_elements)
{
	Schedule *s = accept_text(tu_fixture(ex6), "sch.compute_at(block=\"B\", loop=\"ci\")");
	ts_has(tu_last(s)->note, "[ci:ci + 1, 0:4]");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1, 4]");
	sched_free(s);
}
END_TEST

/* ---------- more shapes that are accepted ---------- */

static const char stencil[] = "compute_at/stencil.tir";

START_TEST(stencil_reads_union_into_three_cells)
{
	Schedule *s = accept_text(tu_fixture(stencil), "sch.compute_at(block=\"B\", loop=\"j\")");
	ts_has(tu_last(s)->note, "[j:j + 3]");
	ts_has(tu_last(s)->note, "union of reads");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[3]");
	sched_free(s);
}
END_TEST

static const char guarded_tail[] = "compute_at/guarded_tail.tir";

START_TEST(split_tail_guard_clamps_the_region)
{
	Schedule *s = accept_text(tu_fixture(guarded_tail), "jo, ji = sch.split(\"j\", factor=4)\n"
						"sch.compute_at(block=\"B\", loop=\"jo\")\n");
	ts_has(tu_last(s)->note, "the cells read are exactly this box");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[4]");
	ck_assert_int_eq(stores_of(sched_func(s)), 28);
	sched_free(s);
}
END_TEST

START_TEST(guarded_producer_covers_only_what_it_writes)
{
	const char *k = tu_fixture("compute_at/guarded_producer_covers_only_what_it_writes.tir");
	sched_free(accept_text(k, "sch.compute_at(block=\"B\", loop=\"j\")"));
	/* reading a cell the producer skips is refuted (the original already
	 * reads it uninitialised, so the replay finds no admissible input) */
	const char *bad = tu_fixture("compute_at/guarded_producer_covers_only_what_it_writes-bad.tir");
	StepReport *r = reject(bad, "sch.compute_at(block=\"B\", loop=\"j\")",
			       "compute_at.cover refuted");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "j = 7"));
}
END_TEST

START_TEST(symbolic_extent_is_proven_without_enumeration)
{
	const char *k = tu_fixture("compute_at/symbolic_extent_is_proven_without_enumeration.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"j\")");
	assert_all_proven(tu_last(s));
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1]");
	ts_has(tu_last(s)->note, "exactness not checked");
	sched_free(s);
}
END_TEST

/* Ex. 6 with rows of 4096 and a symbolic row count, so the region cannot
 * be enumerated: fuse-then-split by 4 still gives 4 cells of B per
 * iteration, from (4*xo + ii) // 4096 == (4*xo) // 4096 for ii < 4 and
 * (4*xo) % 4096 <= 4092. */
START_TEST(ex6_at_scale_shrinks_without_enumeration)
{
	const char *k = tu_fixture("compute_at/ex6_at_scale_shrinks_without_enumeration.tir");
	Schedule *s = accept_text(k, "f = sch.fuse(\"ci\", \"cj\")\n"
				     "xo, xi = sch.split(f, factor=4)\n"
				     "sch.compute_at(block=\"B\", loop=\"xo\")\n");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "[xo * 4 // 4096:T.min(xo * 4 // 4096 + 1, n), xo * 4 % 4096:xo * 4 % 4096 + 4]");
	ts_has(tu_last(s)->note, "B shrunk from [n, 4096] to [1, 4] (4 cells)");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1, 4]");
	sched_free(s);
}
END_TEST

START_TEST(statements_between_producer_and_consumer_are_checked)
{
	static const char k[] =
		"@T.prim_func\n"
		"def m(A: T.Buffer[(8,), \"int32\"], C: T.Buffer[(8,), \"int32\"], D: T.Buffer[(8,), \"int32\"]):\n"
		"    B = T.alloc_buffer([8], \"int32\")\n"
		"    with T.block(\"B\"):\n"
		"        for i in T.serial(8):\n"
		"            B[i] = A[i] + 1\n"
		"    for k in T.serial(8):\n"
		"        D[k] = %s\n"
		"    with T.block(\"C\"):\n"
		"        for j in T.serial(8):\n"
		"            C[j] = B[j] * 2\n";
	char text[2048];
	snprintf(text, sizeof text, k, "A[k] * 5");
	sched_free(accept_text(text, "sch.compute_at(block=\"B\", loop=\"j\")"));
	/* a statement between that overwrites the producer's input */
	const char *k2 = tu_fixture("compute_at/statements_between_producer_and_consumer_are_checked.tir");
	StepReport *r = reject(k2, "sch.compute_at(block=\"B\", loop=\"j\")",
			       "compute_at.inputs_unchanged refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* A reversed store index (TVM's rev_iter, Y[9 - vi, 9 - vj]): the box
 * of Y read in iteration i is column i, which the producer loop j writes
 * at j = 9 - i; Y shrinks to one column. Red team: the consumer also
 * overwrites column 8 - i of X, which the moved producer reads one
 * iteration later (at j = 9 - (i + 1)): refuted, and the replay shows it. */
START_TEST(reversed_store_index_maps_the_box_back)
{
	const char *k = tu_fixture("compute_at/reversed_store.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"b0\", loop=\"i#2\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "region of Y per iteration: [0:10, i:i + 1]; Y shrunk from [10, 10] to [10, 1]");
	sched_free(s);
	const char *bad = tu_fixture("compute_at/reversed_store-bad.tir");
	StepReport *r = reject(bad, "sch.compute_at(block=\"b0\", loop=\"i#2\")",
			       "compute_at.inputs_unchanged refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* A reduction producer (T.init, TVM's reduction_block): the spatial loop
 * is restricted, the reduction loop kept; cells j - 1 and j are both
 * recomputed from scratch in iteration j (init_first), B shrinks to 2.
 * Red team: the consumer overwrites A[j + 1, 3], which the moved
 * reduction reads one iteration later: refuted, replay confirmed. An init
 * that is not at the first reduction iteration is refuted by init_first
 * (no defined run shows it: the original reads B before writing it). */
START_TEST(reduction_producer_recomputes_each_cell_from_its_init)
{
	const char *k = tu_fixture("compute_at/reduction_producer.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"j\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "B shrunk from [8] to [2]");
	sched_free(s);
	StepReport *r = reject(tu_fixture("compute_at/reduction_producer-bad.tir"),
			       "sch.compute_at(block=\"B\", loop=\"j\")",
			       "compute_at.inputs_unchanged refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	reject(tu_fixture("compute_at/reduction_producer-late_init.tir"),
	       "sch.compute_at(block=\"B\", loop=\"j\")", "compute_at.init_first refuted");
}
END_TEST

/* A tiled producer (TVM's blockized_2: B[po * 4 + pi]): each loop keeps
 * the values whose store can land in the box (inner ranges use the outer
 * loop), cover names the writer of each cell read in mixed radix, and B
 * shrinks to the 2 cells of one iteration. Overlapping tiles (B[po * 2 +
 * pi]) are refuted by compute_at.injective: cover names one writer, the
 * cell's value is its last one's. Red team: the consumer overwrites A[2j +
 * 3], which the moved producer reads one iteration later: refuted, replay
 * confirmed. */
START_TEST(tiled_producer_moves_whole_tiles_of_its_writes)
{
	const char *k = tu_fixture("compute_at/tiled_producer.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"j\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "B shrunk from [16] to [2]");
	sched_free(s);
	reject(tu_fixture("compute_at/tiled_producer-overlap.tir"),
	       "sch.compute_at(block=\"B\", loop=\"j\")", "compute_at.injective refuted");
	StepReport *r = reject(tu_fixture("compute_at/tiled_producer-bad.tir"),
			       "sch.compute_at(block=\"B\", loop=\"j\")",
			       "compute_at.inputs_unchanged refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* ---------- packing: a cache in a transformed layout (issue 14) ---------- */

/* B staged through Bp (cache_read), Bp packed as [j // 8][k][j % 8]
 * (transform_layout), then computed per k block (compute_at under ko):
 * the store Bp[ax1 // 8, ax0, ax1 % 8] reads as one logical dimension
 * ax1 = 8 * x0 + x2, so cover names the writer of each cell read and Bp
 * shrinks to the 8 rows of one k block, in the packed order; both orders
 * of transform_layout and compute_at give a packed panel. A padded layout
 * (j // 6: 18 columns for 16) is not supported: its padding predicate is
 * over the physical shape the shrink would change. */
static const char pack_steps[] =
	"io, ii = sch.split(\"i#2\", factor=4, tail=\"perfect\")\n"
	"jo, ji = sch.split(\"j#2\", factor=8, tail=\"perfect\")\n"
	"ko, ki = sch.split(\"k\", factor=8, tail=\"perfect\")\n"
	"sch.reorder(\"ko\", \"io\", \"jo\", \"ki\", \"ii\", \"ji\")\n"
	"Bp = sch.cache_read(buffer=\"B\", scope=\"global\")\n";

START_TEST(packed_cache_is_computed_per_k_block)
{
	const char *k = tu_fixture("compute_at/packed_panel.tir");
	char *script = arena_printf(&arena, "%s%s", pack_steps,
				    "sch.transform_layout(buffer=\"Bp\", index_map=lambda k, j: [j // 8, k, j % 8])\n"
				    "sch.compute_at(block=\"Bp\", loop=\"ko\")\n"
				    "sch.simplify()\n");
	Schedule *s = accept_text(k, script);
	StepReport *r = s->steps[s->nsteps - 2];
	assert_all_proven(r);
	ts_has(r->note, "Bp shrunk from [2, 16, 8] to [2, 8, 8]");
	ts_has(r->note, "region of Bp per iteration: [0:2, ko * 8:ko * 8 + 8, 0:8]");
	char *ir = print_func(sched_func(s));
	ts_has(ir, "Bp = T.alloc_buffer([2, 8, 8]");
	ts_has(ir, "Bp[jo, ki, ji]");
	free(ir);
	sched_free(s);
	/* the other order: compute_at, then the packed layout of the panel */
	script = arena_printf(&arena, "%s%s", pack_steps,
			      "sch.compute_at(block=\"Bp\", loop=\"ko\")\n"
			      "sch.transform_layout(buffer=\"Bp\", index_map=lambda k, j: [j // 8, k, j % 8])\n");
	s = accept_text(k, script);
	ir = print_func(sched_func(s));
	ts_has(ir, "Bp = T.alloc_buffer([2, 8, 8]");
	free(ir);
	sched_free(s);
	script = arena_printf(&arena, "%s%s", pack_steps,
			      "sch.transform_layout(buffer=\"Bp\", index_map=lambda k, j: [j // 6, k, j % 6], pad_value=0.0)\n"
			      "sch.compute_at(block=\"Bp\", loop=\"ko\")\n");
	reject(k, script, "not supported: Bp has a padded transformed layout");
}
END_TEST

/* ---------- red team (issue 14) ---------- */

/* compute_at over a packed layout: a split pair `j // 8`, `j % 8` is one
 * logical dimension, but cover still asks that the guessed writer stores
 * exactly the cell read, so no reading of the pair can make it accept a
 * wrong move. Probes: the consumer reads the other k block (accepted: the
 * box follows the read, checked with the interpreter), then the consumer
 * loop split and reordered; a pair `j // 4`, `j % 8` (not a pair: not
 * supported); a producer that writes 12 of the 16 columns a consumer
 * reads (cover refuted); a second consumer outside ko (not supported); a
 * layout that needs padding, with or without pad_value (not supported). */
static const char *pair_fn(const char *fn, const char *more)
{
	return arena_printf(&arena, "sch.work_on(\"%s\")\nsch.compute_at(block=\"Bp\", loop=\"ko\")\n%s", fn, more);
}

START_TEST(red_team_packed_pairs_never_accept_a_wrong_move)
{
	const char *k = tu_fixture("compute_at/packed_pairs.tir");
	sched_free(accept_text(k, pair_fn("same_block", "")));
	Schedule *s = accept_text(k, pair_fn("other_block", ""));
	ts_has(tu_last(s)->note, "region of Bp per iteration: [0:2, (ko * 8 + 8) % 16:(ko * 8 + 8) % 16 + 8, 0:8]");
	sched_free(s);
	sched_free(accept_text(k, pair_fn("same_block", "jo, ji = sch.split(\"j#2\", factor=8)\nsch.reorder(\"jo\", \"ki\")\n")));
	reject(k, pair_fn("mismatched_pair", ""), "not supported: the store of block \"Bp\" must index Bp");
	StepReport *r = reject(k, pair_fn("partial_rows", ""), "compute_at.cover refuted");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	reject(k, pair_fn("second_consumer", ""), "not supported: the read of Bp at line 51 is not under loop 'ko'");
	/* u = j + 3 (accepted); u = 15 - j and a pair with its % first are
	 * not read as pairs (not supported); the k axis packed, the consumer
	 * reading the next row's cell across the block edge (accepted) */
	sched_free(accept_text(k, pair_fn("offset", "")));
	reject(k, pair_fn("reversed", ""), "not supported: the store of block \"Bp\" must index Bp");
	reject(k, pair_fn("pair_last", ""), "not supported: the store of block \"Bp\" must index Bp");
	sched_free(accept_text(k, pair_fn("k_packed_shifted", "")));
	const char *nd = tu_fixture("compute_at/packed_not_divisible.tir");
	reject(nd, "sch.transform_layout(buffer=\"Bp\", index_map=lambda k, j: [j // 8, k, j % 8])\n"
		   "sch.compute_at(block=\"Bp\", loop=\"ko\")",
	       "not supported: Bp has a padded transformed layout");
	reject(nd, "sch.transform_layout(buffer=\"Bp\", index_map=lambda k, j: [j // 8, k, j % 8], pad_value=0.0)\n"
		   "sch.compute_at(block=\"Bp\", loop=\"ko\")",
	       "not supported: Bp has a padded transformed layout");
}
END_TEST

/* Unsound accept before the fix: the producer's new range comes from the
 * consumer's index ko * 4 // m, read only under `if m != 0`, but the
 * moved producer runs in every iteration: at m = 0 it divided by zero
 * (`vsched equiv` found it). compute_at.range_safe is refuted, the
 * replay shows the fault. */
START_TEST(red_team_range_from_a_guarded_read_must_not_fault)
{
	StepReport *r = ts_refuted(&arena, tu_fixture("compute_at/range_from_a_guarded_read.tir"),
				   "sch.compute_at(block=\"Bp\", loop=\"ko\")", "compute_at.range_safe");
	ts_has(r->replay_text, "integer division by zero");
	ts_has(r->replay_text, "before: runs without undefined behaviour");
}
END_TEST

/* ---------- rejections with counterexamples ---------- */

static const char read_before_written[] = "compute_at/read_before_written.tir";

START_TEST(producer_read_before_written_is_rejected_with_replay)
{
	StepReport *r = reject(tu_fixture(read_before_written),
			       "sch.compute_at(block=\"B\", loop=\"j\")",
			       "compute_at.cover refuted");
	ck_assert_int_eq(r->results[r->failed].verdict, VERDICT_REFUTED);
	ck_assert_ptr_nonnull(strstr(r->counterexample, "C[k] = B[k] + 1"));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	ck_assert_ptr_nonnull(strstr(r->replay_text, "uninitialised B["));
}
END_TEST

START_TEST(producer_inputs_overwritten_earlier_is_rejected_with_replay)
{
	const char *k = tu_fixture("compute_at/producer_inputs_overwritten_earlier_is_rejected_with_replay.tir");
	StepReport *r = reject(k, "sch.compute_at(block=\"B\", loop=\"c\")",
			       "compute_at.inputs_unchanged refuted");
	ck_assert_ptr_nonnull(strstr(r->counterexample, "c_prev"));
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	ck_assert_ptr_nonnull(strstr(r->replay_text, "A["));
	/* writing the input only after reading it is fine: same iteration */
	const char *ok = tu_fixture("compute_at/producer_inputs_overwritten_earlier_is_rejected_with_replay-ok.tir");
	sched_free(accept_text(ok, "sch.compute_at(block=\"B\", loop=\"c\")"));
}
END_TEST

/* TVM's fail_all_consumers_under_loop: D reads B after C's loop, under
 * no condition. Each read is served only in the iteration that computes
 * it, so a later consumer is "not supported" (TVM's rule: every consumer
 * under the loop); before, its cover obligation was refuted with a replay
 * that found no difference (the loop computes all of B before D). */
START_TEST(later_consumer_outside_the_loop_is_not_supported)
{
	const char *k = tu_fixture("compute_at/later_consumer_outside_the_loop.tir");
	StepReport *r = reject(k, "sch.compute_at(block=\"B\", loop=\"j\")",
			       "not supported: the read of B at line 12 is not under loop 'j'");
	ts_has(r->reason, "every consumer of block \"B\" under the attach loop");
	/* at D's loop, C's earlier read is the one no longer served: refuted */
	r = reject(k, "sch.compute_at(block=\"B\", loop=\"k\")", "compute_at.cover refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* ---------- conditional reads ---------- */

/* The iteration value `name = N` in a counterexample. */
static long cex_value(const StepReport *r, const char *name)
{
	char needle[64];
	snprintf(needle, sizeof needle, "%s = ", name);
	const char *p = r->counterexample ? strstr(r->counterexample, needle) : NULL;
	ck_assert_msg(p != NULL, "no %s in the counterexample", name);
	return strtol(p + strlen(needle), NULL, 10);
}

/* concat (TVM's concat-like compute_at test): C[i] = T.if_then_else(i <
 * 64, A[i], B[i - 64]). A read in the arm that is not picked is no access
 * (the interpreter evaluates only the picked arm), so each producer moves
 * under i with the one cell its arm reads; before, the cover of B[i - 64]
 * was refuted at i = 63 with a counterexample no run shows. */
START_TEST(concat_computes_each_input_only_in_its_arm)
{
	const char *k = tu_fixture("compute_at/conditional_reads_concat.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"i\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "region of B per iteration: [T.max(i - 64, 0):i - 63]");
	ts_has(tu_last(s)->note, "the cells read are exactly this box");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1]");
	sched_free(s);
	s = accept_text(k, "sch.compute_at(block=\"A\", loop=\"i\")\n"
			   "sch.compute_at(block=\"B\", loop=\"i\")\n");
	ck_assert_str_eq(shape_of(sched_func(s), "A"), "[1]");
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[1]");
	/* each cell of A and B is still computed once */
	ck_assert_int_eq(stores_of(sched_func(s)), 64 + 64 + 128);
	sched_free(s);
}
END_TEST

/* Tiled pooling over a padded input: the reads of P[i - 1] and P[i + 1]
 * at the edges are in untaken arms, so the producer computes the 6 cells
 * a tile of 4 reads (5 at the edges), never P[-1] or P[16]. */
START_TEST(padded_pooling_covers_only_the_reads_that_run)
{
	const char *pool = tu_fixture("compute_at/conditional_reads_tiled_pooling.tir");
	Schedule *s = accept_text(pool, "io, ii = sch.split(\"i\", factor=4)\n"
					"sch.compute_at(block=\"P\", loop=\"io\")\n");
	assert_all_proven(tu_last(s));
	ck_assert_str_eq(shape_of(sched_func(s), "P"), "[6]");
	ts_has(tu_last(s)->note, "the cells read are exactly this box");
	/* 5 + 6 + 6 + 5 cells of P, 16 of Y */
	ck_assert_int_eq(stores_of(sched_func(s)), 22 + 16);
	sched_free(s);
	/* out[i] = T.if_then_else(1 <= i and i < 17, pad_in[i - 1], 0.0) */
	const char *pad = tu_fixture("compute_at/conditional_reads_padded_input.tir");
	s = accept_text(pad, "io, ii = sch.split(\"i\", factor=6)\n"
			     "sch.compute_at(block=\"pad_in\", loop=\"io\")\n");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "region of pad_in per iteration: [T.max(io * 6, 1) - 1:T.min(io * 6 + 5, 16)]");
	ck_assert_str_eq(shape_of(sched_func(s), "pad_in"), "[6]");
	/* 5 + 6 + 5 cells of pad_in (each once), 18 of out */
	ck_assert_int_eq(stores_of(sched_func(s)), 16 + 18);
	sched_free(s);
}
END_TEST

/* The producer reads Z only where ib >= 32: a statement between that
 * overwrites Z[0:32] leaves its inputs unchanged (before: refuted at
 * ib = 0, unconfirmed); one that overwrites Z[0:48] does not, and the
 * counterexample (ib in [32, 48)) replays to a difference. */
START_TEST(producer_inputs_in_an_untaken_arm_may_change)
{
	const char *k = tu_fixture("compute_at/conditional_reads_producer_inputs.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"i\")");
	assert_all_proven(tu_last(s));
	sched_free(s);
	const char *bad = tu_fixture("compute_at/conditional_reads_producer_inputs-bad.tir");
	StepReport *r = ts_refuted(&arena, bad, "sch.compute_at(block=\"B\", loop=\"i\")",
				   "compute_at.inputs_unchanged");
	long ib = cex_value(r, "ib");
	ck_assert_msg(ib >= 32 && ib < 48, "ib = %ld", ib);
	ts_has(r->replay_text, "first difference");
}
END_TEST

/* TVM's kernels, blocks inside their nests. concat_two_elemwise: both
 * producers move under the concat loop (TVM's test does the same) and
 * each computes only the cell its arm reads, one store per cell as
 * before. read_out_of_bound: B[v + 1] is read only where v < 15, so B
 * moves under j with 2 cells (before: cover refuted, B[16] "read"). */
START_TEST(tvm_kernels_attach_under_conditional_reads)
{
	const char *k = tu_fixture("compute_at/conditional_reads_tvm_concat.tir");
	Schedule *s = accept_text(k, "sch.compute_at(block=\"T_add_1\", loop=\"i#3\")\n"
				     "sch.compute_at(block=\"T_add_2\", loop=\"i#2\")\n");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "region of T_add_2 per iteration: [T.max(i, 16) - 16:i - 15]");
	ck_assert_str_eq(shape_of(sched_func(s), "T_add_1"), "[1]");
	ck_assert_str_eq(shape_of(sched_func(s), "T_add_2"), "[1]");
	ck_assert_int_eq(stores_of(sched_func(s)), 16 + 8 + 24);
	sched_free(s);
	k = tu_fixture("compute_at/conditional_reads_tvm_read_out_of_bound.tir");
	s = accept_text(k, "sch.compute_at(block=\"B\", loop=\"j\")");
	assert_all_proven(tu_last(s));
	ck_assert_str_eq(shape_of(sched_func(s), "B"), "[2]");
	ts_has(tu_last(s)->note, "the cells read are exactly this box");
	sched_free(s);
}
END_TEST

/* Under `if M[i] > 0 and 1 <= i:` the conjunct that reads M is dropped
 * (its state is not named) but `1 <= i` still bounds the reads and is a
 * hypothesis of their cover: P[i - 1] is never P[-1] (before, the whole
 * condition was dropped and the cover refuted at io = 0, ii = 0). */
START_TEST(buffer_conjuncts_leave_the_others_in_force)
{
	const char *k = tu_fixture("compute_at/conditional_reads_if_with_buffer_conjunct.tir");
	Schedule *s = accept_text(k, "io, ii = sch.split(\"i\", factor=4)\n"
				     "sch.compute_at(block=\"P\", loop=\"io\")\n");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "region of P per iteration: [T.max(io * 4, 1) - 1:io * 4 + 4]");
	ck_assert_str_eq(shape_of(sched_func(s), "P"), "[5]");
	sched_free(s);
}
END_TEST

/* The overflow goal of a select asks each arm where it is picked:
 * T.if_then_else(x < 100, x + 1, 0) fits for every int32 x, the same
 * with the arms swapped does not (x + 1 at x = 2147483647). */
static Verdict select_overflow_verdict(bool sum_first)
{
	Var *x = ir_var(&arena, "x", DT_INT32, (Span){0});
	Expr *xr = ir_varref(&arena, x, (Span){0});
	Expr *sum = ir_add(&arena, xr, ir_int32(&arena, 1)), *zero = ir_int32(&arena, 0);
	Expr *sel = ir_select(&arena, ir_bin(&arena, OP_LT, xr, ir_int32(&arena, 100), (Span){0}),
			      sum_first ? sum : zero, sum_first ? zero : sum, (Span){0});
	Expr *goal = attach_no_overflow(&arena, sel);
	ck_assert_ptr_nonnull(goal);
	Obligation *o = obligation_new(&arena, "compute_at.no_overflow", "the select fits", 1, &x,
				       0, NULL, goal, (Span){0});
	SmtOptions opt = {0};
	Solver *sv = smt_solver_new(&opt);
	ObligationResult r;
	smt_discharge(sv, &arena, o, FLOAT_REAL, &r);
	smt_solver_free(sv);
	return r.verdict;
}

START_TEST(overflow_goal_of_a_select_asks_the_picked_arm)
{
	ck_assert_int_eq(select_overflow_verdict(true), VERDICT_PROVEN);
	ck_assert_int_eq(select_overflow_verdict(false), VERDICT_REFUTED);
}
END_TEST

/* A read before the attach loop in an arm that is taken (k >= 8) is
 * still a read the moved producer no longer serves: refuted, and the
 * replay shows the uninitialised read. */
START_TEST(taken_arm_reads_outside_the_loop_still_reject)
{
	const char *k = tu_fixture("compute_at/conditional_reads_read_before_the_loop.tir");
	StepReport *r = ts_refuted(&arena, k, "sch.compute_at(block=\"B\", loop=\"j\")",
				   "compute_at.cover");
	ck_assert_int_ge(cex_value(r, "k"), 8);
	ts_has(r->replay_text, "uninitialised B[");
}
END_TEST

/* A condition that reads a buffer is not used for the region nor as a
 * hypothesis (its state is not named): the read of B[i - 64] counts as
 * made in every iteration, and the cover is refuted (sound, not precise). */
START_TEST(buffer_conditions_are_not_trusted)
{
	const char *k = tu_fixture("compute_at/conditional_reads_buffer_condition.tir");
	StepReport *r = reject(k, "sch.compute_at(block=\"B\", loop=\"i\")", "compute_at.cover refuted");
	ck_assert_int_lt(cex_value(r, "i"), 64);
}
END_TEST

/* ---------- not supported, preconditions, bad input ---------- */

START_TEST(unsupported_shapes_reject_not_supported)
{
	const char *reduction = tu_fixture("compute_at/unsupported_shapes_reject_not_supported-reduction.tir");
	reject(reduction, "sch.compute_at(block=\"B\", loop=\"j\")", "not supported");
	const char *param = tu_fixture("compute_at/unsupported_shapes_reject_not_supported-param.tir");
	reject(param, "sch.compute_at(block=\"B\", loop=\"j\")", "not supported");
	/* a parallel loop on the attach path would share the moved stage */
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(ex1));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.parallel(\"di\")"), STEP_COMMITTED);
	Func *before = sched_func(s);
	ck_assert_int_eq(tu_run(s, "sch.compute_at(block=\"C\", loop=\"dj\")"), STEP_REJECTED);
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "not supported"));
	ck_assert_ptr_nonnull(strstr(tu_last(s)->reason, "parallel"));
	ck_assert_ptr_eq(sched_func(s), before);
	sched_free(s);
	/* Found by a red-team audit: the attach loop's range reads A[0],
	 * which the outer loop rewrites, so each run of i reads another
	 * range; the order obligations compared iterations of different
	 * runs as if both read one state, and the moved producer read X
	 * after an earlier iteration had overwritten it */
	const char *moving_range = tu_fixture("compute_at/unsupported_shapes_reject_not_supported-moving_range.tir");
	reject(moving_range, "sch.compute_at(block=\"B\", loop=\"i\")",
	       "not supported: the range of loop 'i' on the attach path reads a buffer the function writes");
	/* an inner loop whose range reads memory (a crash once) */
	const char *inner_range = tu_fixture("compute_at/unsupported_shapes_reject_not_supported-inner_range.tir");
	reject(inner_range, "sch.compute_at(block=\"B\", loop=\"i\")", "compute_at.cover refuted");
}
END_TEST

START_TEST(misplaced_loop_is_a_precondition_and_names_are_bad_input)
{
	reject(tu_fixture(ex1), "sch.compute_at(block=\"C\", loop=\"j\")", "precondition");
	reject(tu_fixture(ex1), "sch.reverse_compute_at(block=\"C\", loop=\"dj\")", "precondition");
	/* compute_at's own name checks: a report that says why */
	ck_assert_ptr_nonnull(ts_bad_input(&arena, tu_fixture(ex1),
					   "sch.compute_at(block=\"X\", loop=\"dj\")",
					   "no block \"X\""));
	ck_assert_ptr_nonnull(ts_bad_input(&arena, tu_fixture(ex1),
					   "sch.compute_at(block=\"C\", loop=\"q\")",
					   "no loop 'q'"));
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(ex1));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.compute_at(block=\"C\")"), STEP_BAD_INPUT);
	sched_free(s);
}
END_TEST

/* ---------- reverse_compute_at ---------- */

START_TEST(reverse_moves_consumer_under_producer_row)
{
	Schedule *s = accept_text(tu_fixture(ex6),
				  "sch.reverse_compute_at(block=\"C\", loop=\"bi\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "instances of block \"C\" per iteration: [bi:bi + 1, 0:4]");
	sched_free(s);
	s = accept_text(tu_fixture(ex6), "f = sch.fuse(\"bi\", \"bj\")\n"
			     "xo, xi = sch.split(f, factor=4)\n"
			     "sch.reverse_compute_at(block=\"C\", loop=\"xo\")\n");
	ts_has(tu_last(s)->note, "[xo:xo + 1, 0:4]");
	sched_free(s);
}
END_TEST

START_TEST(reverse_stencil_waits_for_its_last_input)
{
	Schedule *s = accept_text(tu_fixture(stencil),
				  "sch.reverse_compute_at(block=\"C\", loop=\"i\")");
	ts_has(tu_last(s)->note, "placed by its read B[j + 2]");
	sched_free(s);
}
END_TEST

START_TEST(reverse_after_reduction_runs_at_last_iteration)
{
	const char *k = tu_fixture("compute_at/reverse_after_reduction_runs_at_last_iteration.tir");
	Schedule *s = accept_text(k, "sch.reverse_compute_at(block=\"C\", loop=\"k\")");
	ts_has(tu_last(s)->note, "at the last iteration");
	sched_free(s);
}
END_TEST

START_TEST(reverse_reading_a_later_cell_is_rejected_with_replay)
{
	const char *k = tu_fixture("compute_at/reverse_reading_a_later_cell_is_rejected_with_replay.tir");
	StepReport *r = reject(k, "sch.reverse_compute_at(block=\"C\", loop=\"i\")",
			       "reverse_compute_at.commute refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* A key read indexed by // and % of a nest loop (TVM's
 * floordiv_and_floormod_indices): k // 16 in [i, i] gives k in
 * [16 i, 16 i + 16), and k % 16 over its whole period bounds nothing. */
START_TEST(reverse_inverts_floordiv_and_floormod_reads)
{
	const char *k = tu_fixture("compute_at/reverse_floordiv_floormod.tir");
	Schedule *s = accept_text(k, "sch.reverse_compute_at(block=\"B\", loop=\"i\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "instances of block \"B\" per iteration: [i * 16:i * 16 + 16]");
	sched_free(s);
	/* red team: a second read of the next row, produced by a later
	 * iteration: the same plan is refuted, and the replay shows it */
	const char *bad = tu_fixture("compute_at/reverse_floordiv_floormod-bad.tir");
	StepReport *r = reject(bad, "sch.reverse_compute_at(block=\"B\", loop=\"i\")",
			       "reverse_compute_at.commute refuted");
	ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
}
END_TEST

/* A key read with a constant dimension and two nest loops in one index
 * (TVM's tiled_trivial_binding, blockized_2): the inner loop's new range
 * depends on the outer one, and its overflow goal assumes only the outer
 * loop's new range. */
START_TEST(reverse_retiles_a_consumer_with_nested_ranges)
{
	const char *k = tu_fixture("compute_at/reverse_retiled.tir");
	Schedule *s = accept_text(k, "sch.reverse_compute_at(block=\"C\", loop=\"po\")");
	assert_all_proven(tu_last(s));
	ts_has(tu_last(s)->note, "placed by its read B[0, co * 4 + ci]");
	ts_has(tu_last(s)->note, "T.max(po * 2 - co * 4, 0):T.min(po * 2 - co * 4 + 2, 4)");
	sched_free(s);
}
END_TEST

/* index= (TVM's to_index, with_unit_loop): the consumer goes before item
 * `index` of the loop body. At the end (index 2) it commits; before the
 * second store of B (index 1) or the first (index 0) it would read B[i]
 * before its last write in the iteration: refuted, replay confirmed. */
START_TEST(reverse_index_inserts_before_a_body_statement)
{
	const char *k = tu_fixture("compute_at/reverse_index.tir");
	Schedule *s = accept_text(k, "sch.reverse_compute_at(block=\"C\", loop=\"i\", index=2)");
	assert_all_proven(tu_last(s));
	sched_free(s);
	for (int ix = 0; ix < 2; ix++) {
		char script[128];
		snprintf(script, sizeof script, "sch.reverse_compute_at(block=\"C\", loop=\"i\", index=%d)", ix);
		StepReport *r = reject(k, script, "reverse_compute_at.commute refuted");
		ts_has(r->reason, "commutes with the statements after it in the same iteration");
		ck_assert_int_eq(r->replay, REPLAY_CONFIRMED);
	}
	reject(k, "sch.reverse_compute_at(block=\"C\", loop=\"i\", index=3)",
	       "precondition: index=3: the body of loop 'i' has 2 statements");
	reject(k, "sch.compute_at(block=\"B\", loop=\"j\", index=0)", "not supported: compute_at: index=0");
}
END_TEST

/* ---------- the public API ---------- */

START_TEST(api_compute_at_reports_region_note)
{
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "ex6.tir", tu_fixture(ex6));
	ck_assert_ptr_nonnull(m);
	vs_schedule *s = vs_schedule_new(ctx, m, NULL);
	ck_assert_int_eq(vs_fuse(s, "ci", "cj", "f"), VS_OK);
	ck_assert_int_eq(vs_split(s, "f", 4, "perfect", "xo", "xi"), VS_OK);
	ck_assert_int_eq(vs_compute_at(s, "B", "xo"), VS_OK);
	const vs_report *r = vs_last_report(s);
	ck_assert_ptr_nonnull(strstr(vs_report_note(r), "[xo:xo + 1, 0:4]"));
	ck_assert_str_eq(vs_report_step(r), "compute_at(block=\"B\", loop=\"xo\")");
	char *report = NULL;
	ck_assert_int_eq(vs_equiv(ctx, m, vs_schedule_result(s), NULL, 5, 1, &report), VS_OK);
	free(report);
	ck_assert_int_eq(vs_reverse_compute_at(s, "B", "xo"), VS_REJECTED);
	ck_assert_int_eq(vs_compute_at(s, "nope", "xo"), VS_BAD_INPUT);
	ck_assert_ptr_nonnull(strstr(vs_last_error(ctx), "no block"));
	vs_context_free(ctx);
}
END_TEST

Suite *suite_compute_at(void)
{
	Suite *s = suite_create("compute_at");
	struct {
		const char *name;
		const TTest *tests[8];
	} cases[] = {
		{"bound_inference", {ex1_unattached_consumer_reads_whole_5x16,
				     fused_split_index_bounds_are_one_row,
				     overflow_goal_catches_wrapping_bounds}},
		{"seed002_ex2_to_ex5", {ex2_attach_at_inner_axis_computes_one_element,
					ex3_attach_at_outer_axis_computes_a_row_of_16,
					ex4_attach_path_includes_unused_outer_loop,
					ex5_attach_after_split_is_one_element,
					chained_attach_paths_reach_the_outermost_stage}},
		{"seed002_ex6", {ex6_fuse_then_split_by_4_computes_4_elements_not_16,
				 ex6_split_by_3_gives_tightest_provable_box,
				 ex6_without_fuse_attach_at_row_is_4_elements}},
		{"accepted_shapes", {stencil_reads_union_into_three_cells,
				     split_tail_guard_clamps_the_region,
				     guarded_producer_covers_only_what_it_writes,
				     symbolic_extent_is_proven_without_enumeration,
				     ex6_at_scale_shrinks_without_enumeration,
				     statements_between_producer_and_consumer_are_checked,
				     reversed_store_index_maps_the_box_back,
				     reduction_producer_recomputes_each_cell_from_its_init}},
		{"tiled_producers", {tiled_producer_moves_whole_tiles_of_its_writes}},
		{"packed_layouts", {packed_cache_is_computed_per_k_block}},
		{"rejections", {producer_read_before_written_is_rejected_with_replay,
				producer_inputs_overwritten_earlier_is_rejected_with_replay,
				later_consumer_outside_the_loop_is_not_supported,
				unsupported_shapes_reject_not_supported,
				misplaced_loop_is_a_precondition_and_names_are_bad_input}},
		{"conditional_reads", {concat_computes_each_input_only_in_its_arm,
				       tvm_kernels_attach_under_conditional_reads,
				       padded_pooling_covers_only_the_reads_that_run,
				       producer_inputs_in_an_untaken_arm_may_change,
				       taken_arm_reads_outside_the_loop_still_reject,
				       buffer_conditions_are_not_trusted,
				       buffer_conjuncts_leave_the_others_in_force,
				       overflow_goal_of_a_select_asks_the_picked_arm}},
		{"reverse_compute_at", {reverse_moves_consumer_under_producer_row,
					reverse_stencil_waits_for_its_last_input,
					reverse_after_reduction_runs_at_last_iteration,
					reverse_reading_a_later_cell_is_rejected_with_replay,
					reverse_inverts_floordiv_and_floormod_reads,
					reverse_retiles_a_consumer_with_nested_ranges,
					reverse_index_inserts_before_a_body_statement}},
		{"api", {api_compute_at_reports_region_note}},
		{"red_team", {red_team_packed_pairs_never_accept_a_wrong_move,
			      red_team_range_from_a_guarded_read_must_not_fault}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		TCase *tc = tcase_create(cases[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		for (int k = 0; k < 8 && cases[i].tests[k]; k++)
			tcase_add_test(tc, cases[i].tests[k]);
		suite_add_tcase(s, tc);
	}
	return s;
}
