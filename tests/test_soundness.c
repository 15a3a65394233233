/* tests/test_soundness.c — property test: random small int32 kernels
 * (several nests, affine reads at offsets, guards, reductions) and random
 * sequences of primitives; every committed step is compared with the
 * original kernel by the interpreter on random admissible inputs (split,
 * fuse, reorder, parallel, vectorize, unroll, merge_adjacent_loops with a
 * following loop, fission of a body of several statements). Also
 * shows the comparison can fail: deliberately wrong variants of split and
 * reorder (no obligations discharged) are caught, and the real primitives
 * reject the same cases. A second property test mixes compute_at and
 * reverse_compute_at into random producer/consumer kernels.
 * VS_SOUNDNESS_STEPS overrides the step count. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "rewrites/merge.h"

static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* ---------- kernel generator ---------- */

typedef struct Gen {
	StrBuf b;
	int nloops;
	char vars[8][8]; /* loop variables of the current nest */
} Gen;

static void indent(Gen *g, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_puts(&g->b, "    ");
}

/* v1 + v2 + off, each index below 24 by construction (extents <= 8) */
static void index_expr(Gen *g, int nv)
{
	int terms = 0;
	for (int t = 0; t < 2; t++) {
		if (nv == 0 || rnd(3) == 0)
			continue;
		sb_printf(&g->b, "%s%s", terms ? " + " : "", g->vars[rnd((unsigned)nv)]);
		terms++;
	}
	unsigned off = rnd(3);
	if (!terms)
		sb_printf(&g->b, "%u", off);
	else if (off)
		sb_printf(&g->b, " + %u", off);
}

static void access(Gen *g, int nv, const char *buf)
{
	sb_printf(&g->b, "%s[", buf);
	index_expr(g, nv);
	if (strcmp(buf, "C") != 0) {
		sb_puts(&g->b, ", ");
		index_expr(g, nv);
	}
	sb_puts(&g->b, "]");
}

static const char *const bufs[] = {"A", "B", "C"};

static void statement(Gen *g, int nv, int depth)
{
	bool guard = rnd(10) < 3;
	if (guard) {
		indent(g, depth);
		sb_printf(&g->b, "if %s + %s < %u:\n", g->vars[rnd((unsigned)nv)],
			  g->vars[rnd((unsigned)nv)], 3 + rnd(8));
		depth++;
	}
	indent(g, depth);
	const char *target = bufs[rnd(3)];
	if (rnd(3) == 0) {
		/* a reduction: X[e] = X[e] + Y[f] */
		StrBuf keep = g->b;
		memset(&g->b, 0, sizeof g->b);
		access(g, nv, target);
		char *lhs = sb_take(&g->b);
		g->b = keep;
		sb_printf(&g->b, "%s = %s + ", lhs, lhs);
		free(lhs);
		access(g, nv, bufs[rnd(3)]);
		sb_puts(&g->b, "\n");
		return;
	}
	access(g, nv, target);
	sb_puts(&g->b, " = ");
	access(g, nv, bufs[rnd(3)]);
	sb_printf(&g->b, " * %u + ", 1 + rnd(3));
	if (rnd(2))
		access(g, nv, bufs[rnd(3)]);
	else
		sb_printf(&g->b, "%s", g->vars[rnd((unsigned)nv)]);
	sb_puts(&g->b, "\n");
}

static char *gen_kernel(void)
{
	Gen g;
	memset(&g, 0, sizeof g);
	sb_puts(&g.b, "@T.prim_func\n"
		      "def k(A: T.Buffer[(24, 24), \"int32\"], B: T.Buffer[(24, 24), \"int32\"],"
		      " C: T.Buffer[(24,), \"int32\"]):\n");
	int nests = 1 + (int)rnd(2);
	static const unsigned extents[] = {3, 4, 5, 6, 8};
	unsigned first[3] = {0, 0, 0};
	for (int n = 0; n < nests; n++) {
		int depth = 1 + (int)rnd(3);
		/* half the second nests reuse the first one's ranges, so that
		 * merge_adjacent_loops has something to merge */
		bool same = n > 0 && rnd(2);
		for (int d = 0; d < depth; d++) {
			snprintf(g.vars[d], sizeof g.vars[d], "%c%d", "ijk"[d], n);
			indent(&g, d + 1);
			unsigned e = same && first[d] ? first[d] : extents[rnd(5)];
			if (n == 0)
				first[d] = e;
			if (!same && rnd(6) == 0)
				sb_printf(&g.b, "for %s in T.serial(1, %u):\n", g.vars[d], e + 1);
			else
				sb_printf(&g.b, "for %s in T.serial(%u):\n", g.vars[d], e);
			/* sometimes a statement between loops: imperfect nest */
			if (d + 1 < depth && rnd(5) == 0)
				statement(&g, d + 1, d + 2);
		}
		int nstmts = 1 + (int)rnd(2);
		for (int s = 0; s < nstmts; s++)
			statement(&g, depth, depth + 1);
	}
	return sb_take(&g.b);
}

/* ---------- random steps ---------- */

typedef struct LoopRef {
	const Stmt *loop;
	char name[64]; /* "i0" or "i0#2" */
} LoopRef;

static void collect_loops(const Stmt *s, LoopRef *out, int *n, int cap)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			collect_loops(s->u.seq.items[i], out, n, cap);
		return;
	case ST_FOR:
		if (*n < cap) {
			int k = 1;
			for (int i = 0; i < *n; i++)
				k += strcmp(out[i].loop->u.loop.var->name, s->u.loop.var->name) == 0;
			out[*n].loop = s;
			snprintf(out[*n].name, sizeof out[*n].name, "%s#%d", s->u.loop.var->name, k);
			(*n)++;
		}
		collect_loops(s->u.loop.body, out, n, cap);
		return;
	case ST_IF:
		collect_loops(s->u.cond.then_s, out, n, cap);
		if (s->u.cond.else_s)
			collect_loops(s->u.cond.else_s, out, n, cap);
		return;
	case ST_ALLOC: collect_loops(s->u.alloc.body, out, n, cap); return;
	case ST_BLOCK: collect_loops(s->u.block.body, out, n, cap); return;
	case ST_LET: collect_loops(s->u.let.body, out, n, cap); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

static const char *child_name(const LoopRef *loops, int n, const Stmt *child)
{
	for (int i = 0; i < n; i++)
		if (loops[i].loop == child)
			return loops[i].name;
	return NULL;
}

typedef struct Tally {
	int steps, committed, rejected, disagreements;
	int merge[2], fission[2]; /* committed, rejected */
	char first_failure[4096];
} Tally;

/* The statement right after `loop` in its sequence, or NULL. */
static const Stmt *next_sibling(const Stmt *s, const Stmt *loop)
{
	const Stmt *r = NULL;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n && !r; i++) {
			if (s->u.seq.items[i] == loop)
				return i + 1 < s->u.seq.n ? s->u.seq.items[i + 1] : NULL;
			r = next_sibling(s->u.seq.items[i], loop);
		}
		return r;
	case ST_FOR: return next_sibling(s->u.loop.body, loop);
	case ST_IF:
		r = next_sibling(s->u.cond.then_s, loop);
		return r || !s->u.cond.else_s ? r : next_sibling(s->u.cond.else_s, loop);
	case ST_ALLOC: return next_sibling(s->u.alloc.body, loop);
	case ST_BLOCK: return next_sibling(s->u.block.body, loop);
	case ST_LET: return next_sibling(s->u.let.body, loop);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return NULL;
	}
	return NULL;
}

/* merge_adjacent_loops with the next loop, or fission of a body with
 * several statements; false when neither applies to l. */
static bool merge_or_fission(RwCtx *c, const LoopRef *loops, int n, const LoopRef *l, char *desc,
			     size_t dn, RwStatus *st)
{
	const Stmt *next = next_sibling(c->func->body, l->loop);
	const char *sib = next && next->kind == ST_FOR ? child_name(loops, n, next) : NULL;
	const Stmt *body = l->loop->u.loop.body;
	if (sib && rnd(3)) {
		snprintf(desc, dn, "merge_adjacent_loops(%s, %s)", l->name, sib);
		*st = rw_merge_adjacent_loops(c, l->name, sib);
		return true;
	}
	if (body->kind == ST_SEQ && body->u.seq.n >= 2) {
		int64_t after = rnd((unsigned)body->u.seq.n - 1);
		snprintf(desc, dn, "fission(%s, after=%lld)", l->name, (long long)after);
		*st = rw_fission(c, l->name, after);
		return true;
	}
	return false;
}

static RwStatus random_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn)
{
	const LoopRef *l = &loops[rnd((unsigned)n)];
	const Stmt *body = l->loop->u.loop.body;
	const char *child = body->kind == ST_FOR ? child_name(loops, n, body) : NULL;
	RwStatus st;
	switch (rnd(8)) {
	case 6:
	case 7:
		if (merge_or_fission(c, loops, n, l, desc, dn, &st))
			return st;
		/* fall through */
	case 0:
	case 1: {
		int64_t factor = 1 + rnd(5);
		SplitTail tail = (SplitTail)rnd(4);
		snprintf(desc, dn, "split(%s, %lld, %s)", l->name, (long long)factor, split_tail_name(tail));
		return rw_split(c, l->name, factor, tail, NULL, NULL);
	}
	case 2:
		if (child) {
			snprintf(desc, dn, "fuse(%s, %s)", l->name, child);
			return rw_fuse(c, l->name, child, NULL);
		}
		/* fall through */
	case 3:
		if (child) {
			const char *order[2] = {child, l->name};
			snprintf(desc, dn, "reorder(%s, %s)", child, l->name);
			return rw_reorder(c, 2, order);
		}
		/* fall through */
	case 4:
		snprintf(desc, dn, "parallel(%s)", l->name);
		return rw_parallel(c, l->name);
	default:
		if (rnd(2)) {
			snprintf(desc, dn, "vectorize(%s)", l->name);
			return rw_vectorize(c, l->name);
		}
		snprintf(desc, dn, "unroll(%s)", l->name);
		return rw_unroll(c, l->name);
	}
}

static void run_kernel(Arena *a, Tally *t, int nsteps, unsigned seed)
{
	char *text = gen_kernel();
	Module *m = tu_parse(a, "random.tir", text);
	Schedule *s = tu_schedule(a, m);
	for (int k = 0; k < nsteps; k++) {
		LoopRef loops[64];
		int n = 0;
		collect_loops(sched_func(s)->body, loops, &n, 64);
		if (n == 0)
			break;
		RwCtx c;
		DiagList d;
		diag_init(&d, a);
		char desc[256];
		sched_begin(s, &c, "random", (Span){0}, &d);
		RwStatus st = random_step(&c, loops, n, desc, sizeof desc);
		c.desc = arena_strdup(a, desc);
		StepReport *r = sched_finish(s, &c, st);
		t->steps++;
		int *kind = strncmp(desc, "merge", 5) == 0 ? t->merge : strncmp(desc, "fission", 7) == 0 ? t->fission : NULL;
		if (kind)
			kind[r->status != STEP_COMMITTED]++;
		if (r->status != STEP_COMMITTED) {
			t->rejected++;
			continue;
		}
		t->committed++;
		char *report = NULL;
		if (interp_equiv(m->funcs[0], sched_func(s), 2, seed + (unsigned)k, &report) != 0) {
			if (!t->disagreements++) {
				char *after = print_func(sched_func(s));
				snprintf(t->first_failure, sizeof t->first_failure,
					 "step %s\n%s\nkernel:\n%s\nafter:\n%s", desc,
					 report ? report : "", text, after);
				free(after);
			}
		}
		free(report);
	}
	sched_free(s);
	free(text);
}

START_TEST(random_schedules_agree_with_interpreter)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) : 2000;
	Tally t;
	memset(&t, 0, sizeof t);
	rng_state = 0x2545F4914F6CDD1Dull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_kernel(&a, &t, 8, kernel * 131u + 1);
		arena_free(&a);
	}
	fprintf(stderr, "soundness: %d steps, %d committed, %d rejected, %d disagreements"
		"; merge %d/%d, fission %d/%d (committed/rejected)\n",
		t.steps, t.committed, t.rejected, t.disagreements, t.merge[0], t.merge[1], t.fission[0],
		t.fission[1]);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* both outcomes must be exercised, or the test proves nothing */
	ck_assert_int_gt(t.committed, t.steps / 5);
	ck_assert_int_gt(t.rejected, t.steps / 20);
	ck_assert(t.merge[0] > 0 && t.merge[1] > 0 && t.fission[0] > 0 && t.fission[1] > 0);
}
END_TEST

/* ---------- producer / consumer kernels with compute_at ----------
 * A producer block writes an intermediate B over its whole shape from A;
 * an optional statement in between; a consumer block reads B at random
 * offsets (sometimes under a guard, sometimes also overwriting A, which
 * makes moving the producer wrong). Random loop steps are mixed with
 * compute_at and reverse_compute_at at random loops. */

static char *gen_pc_kernel(void)
{
	StrBuf b = {0};
	unsigned e0 = 2 + rnd(5), e1 = 2 + rnd(6); /* consumer extents */
	unsigned o0 = rnd(3), o1 = rnd(3), p0 = rnd(3), p1 = rnd(3);
	unsigned r0 = e0 + 2, r1 = e1 + 2;         /* B covers every read */
	sb_puts(&b, "@T.prim_func\n"
		    "def pc(A: T.Buffer[(24, 24), \"int32\"], C: T.Buffer[(24, 24), \"int32\"],"
		    " D: T.Buffer[(24,), \"int32\"]):\n");
	sb_printf(&b, "    B = T.alloc_buffer([%u, %u], \"int32\")\n", r0, r1);
	sb_puts(&b, "    with T.block(\"B\"):\n");
	sb_printf(&b, "        for b0 in T.serial(%u):\n", r0);
	sb_printf(&b, "            for b1 in T.serial(%u):\n", r1);
	sb_printf(&b, "                B[b0, b1] = A[b0 + %u, b1] * %u + b1\n", rnd(3), 1 + rnd(3));
	switch (rnd(4)) {
	case 0:
		sb_puts(&b, "    for k in T.serial(8):\n        D[k] = A[k, 0] + 1\n");
		break;
	case 1:
		sb_printf(&b, "    for k in T.serial(8):\n        A[k + %u, 1] = D[k]\n", rnd(3));
		break;
	default:
		break;
	}
	sb_puts(&b, "    with T.block(\"C\"):\n");
	sb_printf(&b, "        for i in T.serial(%u):\n", e0);
	sb_printf(&b, "            for j in T.serial(%u):\n", e1);
	const char *ind = "                ";
	if (rnd(4) == 0) {
		sb_printf(&b, "                if i + j < %u:\n", 2 + rnd(6));
		ind = "                    ";
	}
	sb_printf(&b, "%sC[i, j] = B[i + %u, j + %u]", ind, o0, o1);
	if (rnd(2))
		sb_printf(&b, " + B[i + %u, j + %u]", p0, p1);
	sb_puts(&b, "\n");
	if (rnd(4) == 0)
		sb_printf(&b, "%sA[i + %u, j + %u] = C[i, j] + 1\n", ind, rnd(3), rnd(3));
	return sb_take(&b);
}

typedef struct AttachTally {
	int compute_at, compute_at_committed, reverse, reverse_committed;
} AttachTally;

static RwStatus random_pc_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn,
			       AttachTally *at, int *kind)
{
	const LoopRef *l = &loops[rnd((unsigned)n)];
	unsigned r = rnd(10);
	*kind = 0;
	if (r < 4) {
		*kind = 1;
		at->compute_at++;
		snprintf(desc, dn, "compute_at(B, %s)", l->name);
		return rw_compute_at(c, "B", l->name);
	}
	if (r < 6) {
		*kind = 2;
		at->reverse++;
		snprintf(desc, dn, "reverse_compute_at(C, %s)", l->name);
		return rw_reverse_compute_at(c, "C", l->name);
	}
	return random_step(c, loops, n, desc, dn);
}

static void run_pc_kernel(Arena *a, Tally *t, AttachTally *at, int nsteps, unsigned seed)
{
	char *text = gen_pc_kernel();
	Module *m = tu_parse(a, "random_pc.tir", text);
	Schedule *s = tu_schedule(a, m);
	for (int k = 0; k < nsteps; k++) {
		LoopRef loops[64];
		int n = 0;
		collect_loops(sched_func(s)->body, loops, &n, 64);
		if (n == 0)
			break;
		RwCtx c;
		DiagList d;
		diag_init(&d, a);
		char desc[256];
		int kind;
		sched_begin(s, &c, "random", (Span){0}, &d);
		RwStatus st = random_pc_step(&c, loops, n, desc, sizeof desc, at, &kind);
		c.desc = arena_strdup(a, desc);
		StepReport *r = sched_finish(s, &c, st);
		t->steps++;
		if (r->status != STEP_COMMITTED) {
			t->rejected++;
			continue;
		}
		t->committed++;
		at->compute_at_committed += kind == 1;
		at->reverse_committed += kind == 2;
		char *report = NULL;
		if (interp_equiv(m->funcs[0], sched_func(s), 3, seed + (unsigned)k, &report) != 0) {
			if (!t->disagreements++) {
				char *after = print_func(sched_func(s));
				snprintf(t->first_failure, sizeof t->first_failure,
					 "step %s\n%s\nkernel:\n%s\nafter:\n%s", desc,
					 report ? report : "", text, after);
				free(after);
			}
		}
		free(report);
	}
	sched_free(s);
	free(text);
}

START_TEST(random_compute_at_schedules_agree_with_interpreter)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) / 2 : 1000;
	Tally t;
	AttachTally at;
	memset(&t, 0, sizeof t);
	memset(&at, 0, sizeof at);
	rng_state = 0x9E3779B97F4A7C15ull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_pc_kernel(&a, &t, &at, 6, kernel * 977u + 5);
		arena_free(&a);
	}
	fprintf(stderr,
		"soundness (compute_at): %d steps, %d committed, %d rejected, %d disagreements; "
		"compute_at %d/%d committed, reverse_compute_at %d/%d committed\n",
		t.steps, t.committed, t.rejected, t.disagreements, at.compute_at_committed,
		at.compute_at, at.reverse_committed, at.reverse);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* both primitives must commit and reject, or the test proves nothing */
	ck_assert_int_gt(at.compute_at_committed, at.compute_at / 10);
	ck_assert_int_lt(at.compute_at_committed, at.compute_at);
	ck_assert_int_gt(at.reverse_committed, at.reverse / 20);
	ck_assert_int_lt(at.reverse_committed, at.reverse);
}
END_TEST

/* ---------- the check can fail ---------- */

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

/* A primitive's output taken without its obligations (a buggy variant
 * that trusts instead of proving). */
static Func *unchecked(Module *m, RwStatus (*apply)(RwCtx *, void *), void *arg)
{
	Schedule *s = tu_schedule(&arena, m);
	RwCtx c;
	DiagList d;
	diag_init(&d, &arena);
	sched_begin(s, &c, "unchecked", (Span){0}, &d);
	ck_assert_int_eq(apply(&c, arg), RW_OK);
	ck_assert_int_gt(c.obs.n, 0); /* the real primitive has something to prove */
	sched_free(s);
	return c.out;
}

static RwStatus split_perfect_4(RwCtx *c, void *arg)
{
	return rw_split(c, (const char *)arg, 4, TAIL_PERFECT, NULL, NULL);
}

static RwStatus reorder_ji(RwCtx *c, void *arg)
{
	(void)arg;
	const char *order[2] = {"j", "i"};
	return rw_reorder(c, 2, order);
}

START_TEST(wrong_split_variant_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir",
			     "@T.prim_func\n"
			     "def f(A: T.Buffer[(14,), \"int32\"], B: T.Buffer[(14,), \"int32\"]):\n"
			     "    for i in T.serial(14):\n"
			     "        B[i] = A[i] + 1\n");
	/* off by one tile: 14 // 4 tiles drop the last two elements */
	Func *bad = unchecked(m, split_perfect_4, "i");
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	ck_assert_ptr_nonnull(report);
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.split(\"i\", factor=4, tail=\"perfect\")"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

START_TEST(reorder_without_dependence_check_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir",
			     "@T.prim_func\n"
			     "def w(A: T.Buffer[(8, 9), \"int32\"]):\n"
			     "    for i, j in T.grid(7, 8):\n"
			     "        A[i + 1, j] = A[i, j + 1] + 1\n");
	Func *bad = unchecked(m, reorder_ji, NULL);
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

Suite *suite_soundness(void)
{
	Suite *s = suite_create("soundness");
	TCase *tc = tcase_create("random_schedules");
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, random_schedules_agree_with_interpreter);
	suite_add_tcase(s, tc);
	tc = tcase_create("random_compute_at_schedules");
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, random_compute_at_schedules_agree_with_interpreter);
	suite_add_tcase(s, tc);
	tc = tcase_create("checks_can_fail");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wrong_split_variant_is_caught);
	tcase_add_test(tc, reorder_without_dependence_check_is_caught);
	suite_add_tcase(s, tc);
	return s;
}
