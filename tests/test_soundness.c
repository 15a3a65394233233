/* tests/test_soundness.c — property test: random small int32 kernels
 * (several nests, affine reads at offsets, guards, reductions, no-op
 * updates) and random sequences of primitives — the loop primitives, and
 * transform_layout with padding (0, T.undef(), none), overcompute removal
 * both ways, simplify and sequential_buffer_access; every committed step
 * is compared with the original kernel by the interpreter on random
 * admissible inputs. Also shows the comparison can fail: deliberately
 * wrong variants of split, reorder, transform_layout, overcompute removal,
 * simplify and sequential_buffer_access (no obligations discharged) are
 * caught, and the real primitives reject the same cases. merge_adjacent_loops
 * with a following loop and fission of a body of several statements are
 * drawn too; a second property test mixes compute_at and reverse_compute_at
 * into random producer/consumer kernels.
 * A third mixes TVM's block primitives (rfactor, reduction vectorize,
 * split tails, reindex*, transform_block_layout, decompose_reduction,
 * module-level layouts) into TensorIR kernels.
 * VS_SOUNDNESS_STEPS overrides the step count, VS_SOUNDNESS_SEED the
 * generator's seed; VS_SOUNDNESS_WHY prints each rejection of the block
 * sweep with its reason. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/randkernel.h"
#include "tests/testutil.h"
#include "rewrites/cache.h"
#include "rewrites/layout.h"
#include "rewrites/overcompute.h"
#include "rewrites/schedule/steps.h"

static const char *const prims[] = {"transform_layout", "sequential_buffer_access",
				    "remove_branching_through_overcompute",
				    "remove_overcompute_through_branching", "simplify"};
#define NPRIM 5

static int prim_of(const char *call)
{
	for (int i = 0; i < NPRIM; i++)
		if (strncmp(call + 4, prims[i], strlen(prims[i])) == 0)
			return i;
	return 0;
}

typedef struct Tally {
	int steps, committed, rejected, disagreements;
	int merge[2], fission[2]; /* committed, rejected */
	int new_steps, new_committed; /* layout, overcompute, simplify, seq_access */
	/* per primitive of those: calls, commits that changed the function */
	int calls[NPRIM], changed[NPRIM];
	char first_failure[8192];
} Tally;

/* ---------- random steps of the layout and overcompute primitives ---------- */

/* An index map for a buffer of `ndim` dimensions: one dimension split
 * into digits (with an offset sometimes), or two dimensions swapped; with
 * `broken`, one dimension loses its % digit (not injective) or is shifted
 * below zero (outside the shape), which must never be committed. */
static void random_map(StrBuf *b, const Buffer *buf, bool broken)
{
	int ndim = buf->ndim;
	if (broken) {
		int d = (int)rnd((unsigned)ndim);
		int64_t extent = 0;
		/* x // c merges cells only where the dimension has two */
		bool drop = rnd(2) && an_const_int(buf->shape[d], &extent) && extent >= 2;
		sb_puts(b, "lambda ");
		for (int k = 0; k < ndim; k++)
			sb_printf(b, "%sx%d", k ? ", " : "", k);
		sb_puts(b, ": [");
		for (int k = 0; k < ndim; k++) {
			sb_puts(b, k ? ", " : "");
			if (k != d)
				sb_printf(b, "x%d", k);
			else if (drop)
				sb_printf(b, "x%d // 2", k);
			else
				sb_printf(b, "x%d - 1", k);
		}
		sb_puts(b, "]");
		return;
	}
	sb_puts(b, "lambda ");
	for (int k = 0; k < ndim; k++)
		sb_printf(b, "%sx%d", k ? ", " : "", k);
	sb_puts(b, ": [");
	int d = (int)rnd((unsigned)ndim);
	int swap = ndim >= 2 && rnd(6) == 0 ? (d + 1) % ndim : -1;
	static const unsigned factors[] = {3, 4, 5, 8};
	unsigned c = factors[rnd(4)], o = rnd(2) ? 0 : 1 + rnd(3);
	for (int k = 0; k < ndim; k++) {
		sb_puts(b, k ? ", " : "");
		if (swap >= 0) {
			sb_printf(b, "x%d", k == d ? swap : k == swap ? d : k);
			continue;
		}
		if (k != d) {
			sb_printf(b, "x%d", k);
			continue;
		}
		if (o)
			sb_printf(b, "(x%d + %u) // %u, (x%d + %u) %% %u", k, o, c, k, o, c);
		else
			sb_printf(b, "x%d // %u, x%d %% %u", k, c, k, c);
	}
	sb_puts(b, "]");
}

/* One call of transform_layout, an overcompute removal, simplify or
 * sequential_buffer_access, as a script line (malloc'ed). */
/* The buffer allocated at the top level of f (the scratch buffer X). */
static const Buffer *top_alloc(const Stmt *s)
{
	for (;;) {
		switch (s->kind) {
		case ST_ALLOC: return s->u.alloc.buf;
		case ST_SEQ:
			for (int i = 0; i < s->u.seq.n; i++)
				if (s->u.seq.items[i]->kind == ST_ALLOC)
					return s->u.seq.items[i]->u.alloc.buf;
			return NULL;
		case ST_BLOCK: s = s->u.block.body; break;
		case ST_FOR: case ST_IF: case ST_STORE: case ST_ASSUME: case ST_EVAL:
		case ST_LET: case ST_PASS: case ST_COUNT:
			return NULL;
		}
	}
}

static char *random_call(const Func *f, const LoopRef *loops, int n, bool *must_reject)
{
	StrBuf b = {0};
	const Buffer *buf = f->params[rnd((unsigned)f->nparams)].buf;
	const Buffer *x = top_alloc(f->body);
	if (x && rnd(4) == 0)
		buf = x;
	*must_reject = false;
	switch (rnd(8)) {
	case 0:
	case 1:
	case 2:
		if (buf->ndim < 5) {
			static const char *const pads[] = {"0", "T.undef()", "None"};
			*must_reject = rnd(8) == 0;
			sb_printf(&b, "sch.transform_layout(buffer=\"%s\", index_map=", buf->name);
			random_map(&b, buf, *must_reject);
			sb_printf(&b, ", pad_value=%s)", pads[rnd(3)]);
			break;
		}
		/* fall through */
	case 3:
		sb_printf(&b, "sch.sequential_buffer_access(buffer=\"%s\")", buf->name);
		break;
	case 4:
		if (n && rnd(2)) {
			sb_printf(&b, "sch.remove_branching_through_overcompute(loop=\"%s\"%s)",
				  loops[rnd((unsigned)n)].name, rnd(2) ? ", strict=True" : "");
			break;
		}
		/* fall through */
	case 5:
		sb_printf(&b, "sch.remove_branching_through_overcompute(%s)", rnd(2) ? "strict=True" : "");
		break;
	case 6:
		sb_printf(&b, "sch.remove_overcompute_through_branching(%s)", rnd(2) ? "strict=True" : "");
		break;
	default:
		sb_puts(&b, "sch.simplify()");
		break;
	}
	return sb_take(&b);
}

static void run_kernel(Arena *a, Tally *t, int nsteps, unsigned seed)
{
	char *text = gen_kernel();
	Module *m = tu_parse(a, "random.tir", text);
	Schedule *s = tu_schedule(a, m);
	StrBuf script = {0}; /* the committed steps, replayable with vsched run */
	for (int k = 0; k < nsteps; k++) {
		LoopRef loops[64];
		int n = 0;
		collect_loops(sched_func(s)->body, loops, &n, 64);
		if (n == 0)
			break;
		char desc[512];
		StepReport *r;
		bool is_new = rnd(2);
		Module *prev = s->mod;
		if (is_new) {
			bool must_reject;
			char *call = random_call(sched_func(s), loops, n, &must_reject);
			snprintf(desc, sizeof desc, "%s", call);
			free(call);
			tu_run(s, desc);
			r = tu_last(s);
			t->new_steps++;
			t->calls[prim_of(desc)]++;
			if (must_reject && r->status == STEP_COMMITTED && !t->disagreements++)
				snprintf(t->first_failure, sizeof t->first_failure,
					 "a broken map was committed: %s\nkernel:\n%s", desc, text);
		} else {
			RwCtx c;
			DiagList d;
			diag_init(&d, a);
			sched_begin(s, &c, "random", (Span){0}, &d);
			RwStatus st = random_step(&c, loops, n, desc, sizeof desc);
			c.desc = arena_strdup(a, desc);
			r = sched_finish(s, &c, st);
		}
		t->steps++;
		int *kind = strncmp(desc, "merge", 5) == 0 ? t->merge : strncmp(desc, "fission", 7) == 0 ? t->fission : NULL;
		if (kind)
			kind[r->status != STEP_COMMITTED]++;
		if (r->status != STEP_COMMITTED) {
			t->rejected++;
			continue;
		}
		t->committed++;
		t->new_committed += is_new;
		if (is_new && s->mod != prev && !ir_module_equal(s->mod, prev))
			t->changed[prim_of(desc)]++;
		sb_printf(&script, "%s\n", desc);
		char *report = NULL;
		if (interp_equiv(m->funcs[0], sched_func(s), 2, seed + (unsigned)k, &report) != 0) {
			if (!t->disagreements++) {
				char *after = print_func(sched_func(s));
				snprintf(t->first_failure, sizeof t->first_failure,
					 "step %s\n%s\nkernel:\n%s\nschedule (committed steps):\n%s\nafter:\n%s",
					 desc, report ? report : "", text, script.s ? script.s : "", after);
				free(after);
			}
		}
		free(report);
	}
	free(sb_take(&script));
	sched_free(s);
	free(text);
}

START_TEST(random_schedules_agree_with_interpreter)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) : 2000;
	Tally t;
	memset(&t, 0, sizeof t);
	const char *seed = getenv("VS_SOUNDNESS_SEED");
	rng_state = seed && *seed ? rng_seed_state(strtoull(seed, NULL, 0)) : 0x2545F4914F6CDD1Dull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_kernel(&a, &t, 8, kernel * 131u + 1);
		arena_free(&a);
	}
	fprintf(stderr, "soundness: %d steps, %d committed, %d rejected, %d disagreements "
			"(layout/overcompute/simplify/seq_access: %d steps, %d committed)\n",
		t.steps, t.committed, t.rejected, t.disagreements, t.new_steps, t.new_committed);
	fprintf(stderr, "  merge %d/%d, fission %d/%d (committed/rejected)\n", t.merge[0], t.merge[1],
		t.fission[0], t.fission[1]);
	for (int i = 0; i < NPRIM; i++)
		fprintf(stderr, "  %-38s %4d calls, %4d changed the function\n", prims[i], t.calls[i],
			t.changed[i]);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* both outcomes must be exercised, or the test proves nothing */
	ck_assert_int_gt(t.committed, t.steps / 5);
	ck_assert_int_gt(t.rejected, t.steps / 20);
	ck_assert_int_gt(t.new_committed, t.new_steps / 5);
	for (int i = 0; i < NPRIM; i++) /* each one does something */
		ck_assert_msg(t.changed[i] > 0 || target < 500, "%s never changed a kernel", prims[i]);
	ck_assert(t.merge[0] > 0 && t.merge[1] > 0 && t.fission[0] > 0 && t.fission[1] > 0);
}
END_TEST

/* ---------- producer / consumer kernels with compute_at ----------
 * A producer block writes an intermediate B over its whole shape from A;
 * an optional statement in between; a consumer block reads B at random
 * offsets (sometimes under a guard, sometimes also overwriting A, which
 * makes moving the producer wrong; sometimes in an arm of T.if_then_else,
 * producer and consumer, which is an access only where it is picked).
 * Half the kernels place the blocks as TVM does (inside their nests, iter
 * vars, T.where, a reduction with T.init). Random loop steps are mixed
 * with compute_at and reverse_compute_at at random loops, cache_read /
 * cache_write of B, and decompose_reduction of a reduction C. */

/* The consumer "C" as TVM places blocks (inside the loop nest, iter vars
 * bound by T.axis.remap, T.where for a guard), sometimes a reduction over
 * a third loop with T.init. B covers every read either way. */
static void gen_tvm_consumer(StrBuf *b, unsigned e0, unsigned e1, unsigned o0, unsigned o1,
			     unsigned p0, unsigned p1, bool *reduction)
{
	*reduction = rnd(3) == 0;
	if (*reduction) {
		sb_printf(b, "    for i, j, k in T.grid(%u, %u, 3):\n", e0, e1);
		sb_puts(b, "        with T.block(\"C\"):\n"
			   "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n");
		if (rnd(4) == 0)
			sb_printf(b, "            T.where(i + j < %u)\n", 2 + rnd(6));
		sb_printf(b, "            with T.init():\n                C[vi, vj] = %u\n", rnd(3));
		sb_printf(b, "            C[vi, vj] = C[vi, vj] + B[vi + vk, vj + %u]\n", o1);
		return;
	}
	sb_printf(b, "    for i, j in T.grid(%u, %u):\n", e0, e1);
	sb_puts(b, "        with T.block(\"C\"):\n"
		   "            vi, vj = T.axis.remap(\"SS\", [i, j])\n");
	if (rnd(4) == 0)
		sb_printf(b, "            T.where(i + j < %u)\n", 2 + rnd(6));
	sb_printf(b, "            C[vi, vj] = B[vi + %u, vj + %u]", o0, o1);
	if (rnd(2))
		sb_printf(b, " + B[vi + %u, vj + %u]", p0, p1);
	if (rnd(3) == 0)
		sb_printf(b, " + T.if_then_else(1 <= vi and vj < %u, B[vi - 1, vj + %u], %u)",
			  e1 - rnd(2), p1, rnd(5));
	sb_puts(b, "\n");
	if (rnd(4) == 0)
		sb_printf(b, "            A[vi + %u, vj + %u] = C[vi, vj] + 1\n", rnd(3), rnd(3));
}

/* tvm: blocks as TVM places them; *reduction: C is a reduction block */
static char *gen_pc_kernel(bool *tvm, bool *reduction)
{
	StrBuf b = {0};
	unsigned e0 = 2 + rnd(5), e1 = 2 + rnd(6); /* consumer extents */
	unsigned o0 = rnd(3), o1 = rnd(3), p0 = rnd(3), p1 = rnd(3);
	unsigned r0 = e0 + 2, r1 = e1 + 2;         /* B covers every read */
	*tvm = rnd(2) == 0;
	*reduction = false;
	sb_puts(&b, "@T.prim_func\n"
		    "def pc(A: T.Buffer[(24, 24), \"int32\"], C: T.Buffer[(24, 24), \"int32\"],"
		    " D: T.Buffer[(24,), \"int32\"]):\n");
	sb_printf(&b, "    B = T.alloc_buffer([%u, %u], \"int32\")\n", r0, r1);
	const char *ind = "                ";
	const char *u0 = "b0", *u1 = "b1";
	if (*tvm) {
		sb_printf(&b, "    for b0, b1 in T.grid(%u, %u):\n", r0, r1);
		sb_puts(&b, "        with T.block(\"B\"):\n"
			    "            v0, v1 = T.axis.remap(\"SS\", [b0, b1])\n");
		ind = "            ";
		u0 = "v0";
		u1 = "v1";
	} else {
		sb_puts(&b, "    with T.block(\"B\"):\n");
		sb_printf(&b, "        for b0 in T.serial(%u):\n", r0);
		sb_printf(&b, "            for b1 in T.serial(%u):\n", r1);
	}
	if (rnd(4) == 0)
		/* inputs read in one arm only: rows 12.. (never written between)
		 * where b0 < K, the rows the write between may hit elsewhere */
		sb_printf(&b, "%sB[%s, %s] = T.if_then_else(%s < %u, A[%s + 12, %s], A[%s + %u, %s]) + %s\n",
			  ind, u0, u1, u0, 2 + rnd(7), u0, u1, u0, rnd(3), u1, u1);
	else
		sb_printf(&b, "%sB[%s, %s] = A[%s + %u, %s] * %u + %s\n", ind, u0, u1, u0, rnd(3), u1,
			  1 + rnd(3), u1);
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
	if (*tvm) {
		gen_tvm_consumer(&b, e0, e1, o0, o1, p0, p1, reduction);
		return sb_take(&b);
	}
	sb_puts(&b, "    with T.block(\"C\"):\n");
	sb_printf(&b, "        for i in T.serial(%u):\n", e0);
	sb_printf(&b, "            for j in T.serial(%u):\n", e1);
	ind = "                ";
	if (rnd(4) == 0) {
		sb_printf(&b, "                if i + j < %u:\n", 2 + rnd(6));
		ind = "                    ";
	}
	sb_printf(&b, "%sC[i, j] = B[i + %u, j + %u]", ind, o0, o1);
	if (rnd(2))
		sb_printf(&b, " + B[i + %u, j + %u]", p0, p1);
	if (rnd(3) == 0) {
		/* a padded read: the arm not taken would leave B (i = 0 reads
		 * B[-1, ...]) and is no access */
		sb_printf(&b, " + T.if_then_else(1 <= i and j < %u, B[i - 1, j + %u], %u)",
			  e1 - rnd(2), p1, rnd(5));
	}
	sb_puts(&b, "\n");
	if (rnd(4) == 0)
		sb_printf(&b, "%sA[i + %u, j + %u] = C[i, j] + 1\n", ind, rnd(3), rnd(3));
	return sb_take(&b);
}

typedef struct AttachTally {
	int compute_at, compute_at_committed, reverse, reverse_committed;
	int tvm_kernels; /* kernels with blocks as TVM places them */
	int tvm_attached; /* compute_at / reverse_compute_at committed on them */
	int cache, cache_committed, decompose, decompose_committed;
} AttachTally;

static RwStatus random_pc_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn,
			       AttachTally *at, int *kind, bool reduction)
{
	const LoopRef *l = &loops[rnd((unsigned)n)];
	unsigned r = rnd(12);
	*kind = 0;
	if (r == 10) {
		/* stage B for its consumer, or the producer's writes of B */
		*kind = 3;
		at->cache++;
		CacheArgs args = {.buffer = "B", .write = rnd(2) == 0};
		args.block = args.write ? "B" : "C";
		snprintf(desc, dn, "%s(%s, B)", args.write ? "cache_write" : "cache_read", args.block);
		return rw_cache(c, &args);
	}
	if (r == 11 && reduction) {
		*kind = 4;
		at->decompose++;
		snprintf(desc, dn, "decompose_reduction(C, %s)", l->name);
		return rw_decompose_reduction(c, "C", l->name);
	}
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
	bool tvm, reduction;
	char *text = gen_pc_kernel(&tvm, &reduction);
	at->tvm_kernels += tvm;
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
		RwStatus st = random_pc_step(&c, loops, n, desc, sizeof desc, at, &kind, reduction);
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
		at->cache_committed += kind == 3;
		at->decompose_committed += kind == 4;
		at->tvm_attached += tvm && (kind == 1 || kind == 2);
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
	const char *seed = getenv("VS_SOUNDNESS_SEED");
	rng_state = seed && *seed ? rng_seed_state(strtoull(seed, NULL, 0) ^ 0x5bd1e995u) : 0x9E3779B97F4A7C15ull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_pc_kernel(&a, &t, &at, 6, kernel * 977u + 5);
		arena_free(&a);
	}
	fprintf(stderr,
		"soundness (compute_at): %d steps, %d committed, %d rejected, %d disagreements; "
		"compute_at %d/%d committed, reverse_compute_at %d/%d committed, "
		"cache_read/write %d/%d, decompose_reduction %d/%d; %d kernels with TVM-placed blocks "
		"(compute_at or reverse_compute_at committed on them %d times)\n",
		t.steps, t.committed, t.rejected, t.disagreements, at.compute_at_committed,
		at.compute_at, at.reverse_committed, at.reverse, at.cache_committed, at.cache,
		at.decompose_committed, at.decompose, at.tvm_kernels, at.tvm_attached);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* both primitives must commit and reject, or the test proves nothing */
	ck_assert_int_gt(at.compute_at_committed, at.compute_at / 10);
	ck_assert_int_lt(at.compute_at_committed, at.compute_at);
	ck_assert_int_gt(at.reverse_committed, at.reverse / 20);
	ck_assert_int_lt(at.reverse_committed, at.reverse);
	ck_assert_int_gt(at.cache_committed, 0);
	ck_assert_int_gt(at.decompose_committed, 0);
	ck_assert_int_gt(at.tvm_attached, 0);
}
END_TEST

/* ---------- TVM's block primitives on TensorIR kernels ----------
 * Kernels as TVM writes them: a row reduction, a matmul-like reduction
 * or an elementwise block, each in its own nest with iter vars; the
 * update's operator is drawn from + * max min and from updates that are
 * not associative (C * 2 + v, v - C), its init is the identity or not,
 * the block sometimes also reads the accumulator of another row or
 * writes a second buffer; int32, or float32 in ieee mode (where no
 * reassociation may commit). Steps: rfactor, vectorize (of reduction
 * loops too), split with every tail (cut and cut_and_guard included),
 * reindex, reindex_cache_read/write, transform_block_layout (bijections
 * and broken maps), decompose_reduction, transform_layout of a parameter
 * shared by a module's two functions (module-level layouts; each function
 * is compared with its original), and the loop primitives. */
enum {
	BP_RFACTOR, BP_VECTORIZE, BP_SPLIT_CUT, BP_SPLIT_CUT_GUARD, BP_SPLIT_OTHER, BP_REINDEX,
	BP_REINDEX_CACHE_READ, BP_REINDEX_CACHE_WRITE, BP_BLOCK_LAYOUT, BP_DECOMPOSE,
	BP_MODULE_LAYOUT, BP_LOOP, BP_COUNT
};
static const char *const bp_names[BP_COUNT] = {
	"rfactor", "vectorize", "split tail=cut", "split tail=cut_and_guard", "split (guard/perfect)",
	"reindex", "reindex_cache_read", "reindex_cache_write", "transform_block_layout",
	"decompose_reduction", "transform_layout (module)", "loop primitives"};

typedef struct BlockTally {
	int calls[BP_COUNT], committed[BP_COUNT], disagree[BP_COUNT];
	int ieee_reassoc_commits; /* rfactor committed on an ieee float kernel */
	int not_compared;	  /* inputs could not be made (return 2) */
} BlockTally;

typedef struct BlockKernel {
	char *text;
	bool ieee;   /* float32, float_mode("ieee") */
	bool module; /* two functions sharing A */
	bool reduction;
} BlockKernel;

/* the update `acc OP v` for operator o (4 to 7 are not associative
 * and commutative), and an init that is the identity or not */
static void update_expr(StrBuf *b, unsigned o, const char *acc, const char *v, bool flt)
{
	switch (o) {
	case 0: sb_printf(b, "%s + %s", acc, v); break;
	case 1: sb_printf(b, "%s * %s", acc, v); break;
	case 2: sb_printf(b, "T.max(%s, %s)", acc, v); break;
	case 3: sb_printf(b, "T.min(%s, %s)", acc, v); break;
	case 4: sb_printf(b, "%s * %s + %s", acc, flt ? "T.float32(2)" : "2", v); break;
	case 5: sb_printf(b, "%s - %s", v, acc); break;
	case 6: sb_printf(b, "%s + %s * %s", acc, acc, v); break;
	default: sb_printf(b, "%s - %s", acc, v); break;
	}
}

static const char *init_of(unsigned o, bool identity, bool flt)
{
	static const char *const id_i[] = {"0", "1", "-2147483648", "2147483647", "0", "0", "0", "0"};
	static const char *const id_f[] = {"T.float32(0)", "T.float32(1)", "T.float32(-3.0e38)",
					   "T.float32(3.0e38)", "T.float32(0)", "T.float32(0)",
					   "T.float32(0)", "T.float32(0)"};
	static const char *const wrong_i[] = {"1", "2", "0", "5", "3", "1", "1", "1"};
	static const char *const wrong_f[] = {"T.float32(1)", "T.float32(2)", "T.float32(0)",
					      "T.float32(5)", "T.float32(3)", "T.float32(1)",
					      "T.float32(1)", "T.float32(1)"};
	return identity ? (flt ? id_f : id_i)[o] : (flt ? wrong_f : wrong_i)[o];
}

static BlockKernel gen_block_kernel(void)
{
	BlockKernel k = {0};
	StrBuf b = {0};
	unsigned kind = rnd(8);
	unsigned m = 2 + rnd(5), n = 2 + rnd(4), r = 2 + rnd(7);
	if (kind == 7) { /* a module: producer and consumer share A */
		k.module = true;
		unsigned e = 6 + rnd(11);
		sb_printf(&b, "@I.ir_module\nclass Mod:\n"
			      "    @T.prim_func\n    def producer(A: T.Buffer[(%u,), \"int32\"], X: T.Buffer[(%u,), \"int32\"]):\n"
			      "        for i in T.serial(%u):\n            A[i] = X[i] * %u + i\n\n"
			      "    @T.prim_func\n    def consumer(A: T.Buffer[(%u,), \"int32\"], B: T.Buffer[(%u,), \"int32\"]):\n"
			      "        for i in T.serial(%u):\n            B[i] = A[i] + A[%u - i] * 2\n",
			  e, e, e, 1 + rnd(3), e, e, e, e - 1);
		k.text = sb_take(&b);
		return k;
	}
	k.ieee = rnd(4) == 0;
	const char *dt = k.ieee ? "float32" : "int32";
	unsigned o = k.ieee ? rnd(2) : rnd(5) < 3 ? rnd(4) : 4 + rnd(4);
	bool identity = rnd(4) != 0;
	bool extra = rnd(5) == 0; /* the block also reads the accumulator of another row */
	bool second = rnd(6) == 0; /* the block also writes D */
	bool where = rnd(8) == 0;
	sb_puts(&b, "@T.prim_func\n");
	if (kind <= 3) { /* row reduction */
		k.reduction = true;
		sb_printf(&b, "def f(A: T.Buffer[(%u, %u), \"%s\"], C: T.Buffer[(%u,), \"%s\"], D: T.Buffer[(%u,), \"%s\"]):\n",
			  m, r, dt, m, dt, m, dt);
		sb_printf(&b, "    for i, k in T.grid(%u, %u):\n        with T.block(\"C\"):\n"
			      "            vi, vk = T.axis.remap(\"SR\", [i, k])\n", m, r);
		if (where)
			sb_printf(&b, "            T.where(i + k < %u)\n", 2 + rnd(6));
		sb_printf(&b, "            with T.init():\n                C[vi] = %s\n", init_of(o, identity, k.ieee));
		sb_puts(&b, "            C[vi] = ");
		const char *v = rnd(2) ? "A[vi, vk]" : "A[vi, vk] + A[vi, 0]";
		if (extra) {
			StrBuf vv = {0};
			sb_printf(&vv, "%s + C[(vi + 1) %% %u]", v, m);
			char *t = sb_take(&vv);
			update_expr(&b, o, "C[vi]", t, k.ieee);
			free(t);
		} else {
			update_expr(&b, o, "C[vi]", v, k.ieee);
		}
		sb_puts(&b, "\n");
		if (second)
			sb_puts(&b, "            D[vi] = C[vi]\n");
	} else if (kind <= 5) { /* matmul */
		k.reduction = true;
		sb_printf(&b, "def f(A: T.Buffer[(%u, %u), \"%s\"], B: T.Buffer[(%u, %u), \"%s\"], C: T.Buffer[(%u, %u), \"%s\"]):\n",
			  m, r, dt, r, n, dt, m, n, dt);
		sb_printf(&b, "    for i, j, k in T.grid(%u, %u, %u):\n        with T.block(\"C\"):\n"
			      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n", m, n, r);
		if (where)
			sb_printf(&b, "            T.where(j + k < %u)\n", 2 + rnd(6));
		sb_printf(&b, "            with T.init():\n                C[vi, vj] = %s\n", init_of(o, identity, k.ieee));
		sb_puts(&b, "            C[vi, vj] = ");
		update_expr(&b, o, "C[vi, vj]", extra ? "A[vi, vk] * B[vk, vj] + C[vi, (vj + 1) % 2]" : "A[vi, vk] * B[vk, vj]", k.ieee);
		sb_puts(&b, "\n");
	} else { /* elementwise */
		sb_printf(&b, "def f(A: T.Buffer[(%u, %u), \"%s\"], B: T.Buffer[(%u, %u), \"%s\"]):\n", m, n, dt,
			  n, m, dt);
		sb_printf(&b, "    for i, j in T.grid(%u, %u):\n        with T.block(\"B\"):\n"
			      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n", m, n);
		if (where)
			sb_printf(&b, "            T.where(i + j < %u)\n", 2 + rnd(6));
		if (rnd(2))
			sb_printf(&b, "            B[vj, vi] = A[vi, vj] * %s\n", k.ieee ? "T.float32(3)" : "3");
		else
			sb_puts(&b, "            B[vj, vi] = A[vi, vj] + A[vi, 0]\n");
	}
	k.text = sb_take(&b);
	return k;
}

/* The blocks of f with iter vars: name and arity. */
static void collect_blocks(const Stmt *st, const char **names, int *arity, int *n, int cap)
{
	if (!st)
		return;
	if (st->kind == ST_BLOCK && st->u.block.info && st->u.block.name && *n < cap) {
		names[*n] = st->u.block.name;
		arity[(*n)++] = st->u.block.info->niters;
	}
	switch (st->kind) {
	case ST_SEQ:
		for (int i = 0; i < st->u.seq.n; i++)
			collect_blocks(st->u.seq.items[i], names, arity, n, cap);
		return;
	case ST_FOR: collect_blocks(st->u.loop.body, names, arity, n, cap); return;
	case ST_IF:
		collect_blocks(st->u.cond.then_s, names, arity, n, cap);
		collect_blocks(st->u.cond.else_s, names, arity, n, cap);
		return;
	case ST_BLOCK: collect_blocks(st->u.block.body, names, arity, n, cap); return;
	case ST_ALLOC: collect_blocks(st->u.alloc.body, names, arity, n, cap); return;
	case ST_LET: collect_blocks(st->u.let.body, names, arity, n, cap); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT: return;
	}
}

/* lambda v0, ..., v{n-1}: a permutation, a fusion of the first two (a
 * bijection onto one loop when the extents are right), or with `broken`
 * a map that is not a bijection */
static void block_map(StrBuf *b, int n, bool broken, bool tuple)
{
	sb_puts(b, "lambda ");
	for (int k = 0; k < n; k++)
		sb_printf(b, "%sv%d", k ? ", " : "", k);
	sb_puts(b, tuple ? ": (" : ": [");
	if (broken) {
		switch (rnd(3)) {
		case 0: /* two indices summed: not injective */
			for (int k = 0; k < n; k++)
				sb_printf(b, "%s%s", k ? ", " : "", k == 0 && n > 1 ? "v0 + v1" : "v0");
			break;
		case 1: /* shifted: not onto / outside */
			for (int k = 0; k < n; k++)
				sb_printf(b, "%sv%d%s", k ? ", " : "", k, k == n - 1 ? " + 1" : "");
			break;
		default: /* halved: not injective */
			for (int k = 0; k < n; k++)
				sb_printf(b, "%sv%d%s", k ? ", " : "", k, k == 0 ? " // 2" : "");
			break;
		}
	} else if (n >= 2 && rnd(3) == 0) {
		for (int k = n - 1; k >= 0; k--) /* reversed */
			sb_printf(b, "%sv%d", k != n - 1 ? ", " : "", k);
	} else if (n >= 2 && rnd(2) == 0) {
		sb_printf(b, "v1, v0");
		for (int k = 2; k < n; k++)
			sb_printf(b, ", v%d", k);
	} else {
		for (int k = 0; k < n; k++)
			sb_printf(b, "%sv%d", k ? ", " : "", k);
	}
	sb_puts(b, tuple && n == 1 ? ",)" : tuple ? ")" : "]");
}

static char *random_block_call(const Func *f, const LoopRef *loops, int nl, const BlockKernel *bk,
			       int *prim)
{
	StrBuf b = {0};
	const char *names[16];
	int arity[16], nb = 0;
	collect_blocks(f->body, names, arity, &nb, 16);
	const char *lp = loops[rnd((unsigned)nl)].name;
	int bi = nb ? (int)rnd((unsigned)nb) : -1;
	unsigned r = rnd(12);
	if (bk->module) {
		*prim = BP_MODULE_LAYOUT;
		static const char *const pads[] = {"0", "T.undef()", "None"};
		const char *which = rnd(3) == 0 ? ", func=\"producer\"" : rnd(2) ? ", func=\"consumer\"" : "";
		bool pa;
		const Buffer *buf = rw_find_buffer(f, "A", &pa);
		sb_puts(&b, "sch.transform_layout(buffer=\"A\", index_map=");
		random_map(&b, buf, rnd(6) == 0);
		sb_printf(&b, ", pad_value=%s%s)", pads[rnd(3)], which);
		return sb_take(&b);
	}
	if (bi < 0 && r >= 4 && r <= 9)
		r = 0;
	switch (r) {
	case 0:
	case 1:
		*prim = BP_RFACTOR;
		/* mostly a loop of k (the reduction's, or one split from it) */
		for (int tries = 0; tries < 8 && rnd(4) != 0 && lp[0] != 'k'; tries++)
			lp = loops[rnd((unsigned)nl)].name;
		sb_printf(&b, "sch.rfactor(\"%s\", %u)", lp, rnd(4) == 0 ? 1u : 0u);
		break;
	case 2:
		*prim = BP_VECTORIZE;
		sb_printf(&b, "sch.vectorize(\"%s\")", lp);
		break;
	case 3: {
		static const char *const tails[] = {"cut", "cut_and_guard", "guard", "perfect"};
		unsigned t = rnd(4);
		*prim = t == 0 ? BP_SPLIT_CUT : t == 1 ? BP_SPLIT_CUT_GUARD : BP_SPLIT_OTHER;
		sb_printf(&b, "sch.split(\"%s\", factor=%u, tail=\"%s\")", lp, 2 + rnd(3), tails[t]);
		break;
	}
	case 4:
		*prim = BP_REINDEX;
		switch (rnd(3)) {
		case 0: sb_printf(&b, "sch.reindex(\"%s\", (\"read\", %u))", names[bi], rnd(2)); break;
		case 1: sb_printf(&b, "sch.reindex(\"%s\", (\"write\", 0))", names[bi]); break;
		default: sb_printf(&b, "sch.reindex(\"%s\", \"%s\")", names[bi], rnd(2) ? "A" : "C"); break;
		}
		break;
	case 5:
		*prim = BP_REINDEX_CACHE_READ;
		sb_printf(&b, "sch.reindex_cache_read(\"%s\", %u, \"global\", ", names[bi], rnd(2));
		block_map(&b, arity[bi], rnd(6) == 0, true);
		sb_puts(&b, ")");
		break;
	case 6:
		*prim = BP_REINDEX_CACHE_WRITE;
		sb_printf(&b, "sch.reindex_cache_write(\"%s\", 0, \"global\", ", names[bi]);
		block_map(&b, arity[bi], rnd(6) == 0, true);
		sb_puts(&b, ")");
		break;
	case 7:
	case 8:
		*prim = BP_BLOCK_LAYOUT;
		sb_printf(&b, "sch.transform_block_layout(\"%s\", ", names[bi]);
		if (arity[bi] >= 2 && rnd(4) == 0) /* fuse two iter vars into one loop */
			sb_printf(&b, "lambda v0, v1%s: (v0 * %u + v1%s)", arity[bi] == 3 ? ", v2" : "",
				  2 + rnd(7), arity[bi] == 3 ? ", v2" : "");
		else
			block_map(&b, arity[bi], rnd(4) == 0, true);
		sb_puts(&b, ")");
		break;
	case 9:
		*prim = BP_DECOMPOSE;
		sb_printf(&b, "sch.decompose_reduction(\"%s\", \"%s\")", names[bi], lp);
		break;
	default:
		*prim = BP_LOOP;
		return NULL; /* a random loop step */
	}
	return sb_take(&b);
}

/* each function of `after` compared with the one of the same name */
static int module_equiv(const Module *before, const Module *after, int trials, unsigned seed,
			char **report)
{
	int worst = 0;
	for (int i = 0; i < after->nfuncs && worst != 1; i++) {
		const Func *g = after->funcs[i], *f = module_find_func(before, g->name);
		if (!f || f == g)
			continue;
		free(*report);
		*report = NULL;
		int rc = interp_equiv(f, g, trials, seed, report);
		if (rc > worst)
			worst = rc;
	}
	return worst;
}

static void run_block_kernel(Arena *a, Tally *t, BlockTally *bt, int nsteps, unsigned seed)
{
	BlockKernel bk = gen_block_kernel();
	Module *m = tu_parse(a, "random_block.tir", bk.text);
	Schedule *s = tu_schedule(a, m);
	StrBuf script = {0};
	if (bk.ieee) {
		ck_assert_int_eq(tu_run(s, "sch.float_mode(\"ieee\")"), STEP_COMMITTED);
		sb_puts(&script, "sch.float_mode(\"ieee\")\n");
	}
	if (bk.module && rnd(2)) {
		tu_run(s, "sch.work_on(\"consumer\")");
		sb_puts(&script, "sch.work_on(\"consumer\")\n");
	}
	for (int k = 0; k < nsteps; k++) {
		LoopRef loops[64];
		int n = 0;
		collect_loops(sched_func(s)->body, loops, &n, 64);
		if (n == 0)
			break;
		char desc[512];
		int prim;
		char *call = random_block_call(sched_func(s), loops, n, &bk, &prim);
		StepReport *r;
		if (call) {
			snprintf(desc, sizeof desc, "%s", call);
			free(call);
			int before = s->nsteps;
			tu_run(s, desc);
			/* bad input (a loop name a split removed...) makes no step */
			r = s->nsteps > before ? tu_last(s) : NULL;
		} else {
			RwCtx c;
			DiagList d;
			diag_init(&d, a);
			sched_begin(s, &c, "random", (Span){0}, &d);
			RwStatus st = random_step(&c, loops, n, desc, sizeof desc);
			c.desc = arena_strdup(a, desc);
			r = sched_finish(s, &c, st);
		}
		t->steps++;
		bt->calls[prim]++;
		if (!r || r->status != STEP_COMMITTED) {
			t->rejected++;
			if (getenv("VS_SOUNDNESS_WHY"))
				fprintf(stderr, "WHY %s :: %s\n", desc, r ? (r->reason ? r->reason : "?") : "bad input");
			continue;
		}
		t->committed++;
		bt->committed[prim]++;
		sb_printf(&script, "%s\n", desc);
		if (bk.ieee && prim == BP_RFACTOR)
			bt->ieee_reassoc_commits++;
		char *report = NULL;
		int rc = bk.module ? module_equiv(m, s->mod, 3, seed + (unsigned)k, &report)
				   : interp_equiv(m->funcs[0], sched_func(s), 3, seed + (unsigned)k, &report);
		bt->not_compared += rc == 2;
		if (rc == 1 || (bk.ieee && prim == BP_RFACTOR)) {
			bt->disagree[prim]++;
			if (!t->disagreements++) {
				char *after = print_func(sched_func(s));
				snprintf(t->first_failure, sizeof t->first_failure,
					 "step %s\n%s\nkernel:\n%s\nschedule (committed steps):\n%s\nafter:\n%s",
					 desc, report ? report : "an ieee reassociation committed", bk.text,
					 script.s ? script.s : "", after);
				free(after);
			}
		}
		free(report);
	}
	free(sb_take(&script));
	sched_free(s);
	free(bk.text);
}

START_TEST(random_block_schedules_agree_with_interpreter)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) / 2 : 1000;
	Tally t;
	BlockTally bt;
	memset(&t, 0, sizeof t);
	memset(&bt, 0, sizeof bt);
	const char *seed = getenv("VS_SOUNDNESS_SEED");
	rng_state = seed && *seed ? rng_seed_state(strtoull(seed, NULL, 0) ^ 0x27d4eb2fu) : 0xD1B54A32D192ED03ull;
	for (unsigned kernel = 0; t.steps < target; kernel++) {
		Arena a;
		arena_init(&a);
		run_block_kernel(&a, &t, &bt, 6, kernel * 613u + 3);
		arena_free(&a);
	}
	fprintf(stderr, "soundness (blocks): %d steps, %d committed, %d rejected, %d disagreements, "
			"%d not compared (no admissible input)\n",
		t.steps, t.committed, t.rejected, t.disagreements, bt.not_compared);
	for (int i = 0; i < BP_COUNT; i++)
		fprintf(stderr, "  | %-26s | %5d | %5d | %5d | %d |\n", bp_names[i], bt.calls[i],
			bt.committed[i], bt.calls[i] - bt.committed[i], bt.disagree[i]);
	ck_assert_msg(t.disagreements == 0, "interpreter disagrees:\n%s", t.first_failure);
	ck_assert_int_ge(t.steps, target);
	/* every primitive commits, and those with obligations also reject,
	 * or the sweep proves little */
	for (int i = 0; i < BP_COUNT; i++)
		ck_assert_msg(target < 500 || (bt.committed[i] > 0 &&
					       (i == BP_SPLIT_CUT || i == BP_SPLIT_CUT_GUARD ||
						bt.committed[i] < bt.calls[i])),
			      "%s: %d of %d committed", bp_names[i], bt.committed[i], bt.calls[i]);
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
			     tu_fixture("soundness/wrong_split_variant_is_caught.tir"));
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
			     tu_fixture("soundness/reorder_without_dependence_check_is_caught.tir"));
	Func *bad = unchecked(m, reorder_ji, NULL);
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.reorder(\"j\", \"i\")"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

/* ---------- wrong variants of the layout and overcompute primitives ---------- */

/* transform_layout of A in `m` from script text: map (and inverse) are
 * lambdas inside `text`, found by their prefixes. */
static RwStatus layout_args(RwCtx *c, void *arg)
{
	const char *text = arg;
	LayoutArgs args;
	memset(&args, 0, sizeof args);
	args.buffer = "A";
	args.src = source_from_string(c->arena, "wrong.sched", text);
	const char *map = strstr(text, "lambda"), *inv = strstr(text, "inverse=");
	const char *map_end = strstr(map, "]") + 1;
	args.map_start = (int)(map - text);
	args.map_end = (int)(map_end - text);
	if (inv) {
		args.inv_start = (int)(inv + 8 - text);
		args.inv_end = (int)(strstr(inv, "]") + 1 - text);
	}
	args.pad_kind = LAYOUT_PAD_NONE;
	return rw_transform_layout(c, &args);
}

static const char double14[] = "soundness/double14.tir";

START_TEST(layout_with_an_off_by_one_inverse_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(double14));
	static const char *const wrong[] = {
		/* the padding predicate built from it marks A[13] as padding */
		"lambda i: [i // 4, i % 4], inverse=lambda io, ii: [4 * io + ii + 1]",
		/* two cells in one */
		"lambda i: [i // 2, 0], inverse=lambda a, b: [2 * a]",
	};
	for (size_t w = 0; w < sizeof wrong / sizeof *wrong; w++) {
		Func *bad = unchecked(m, layout_args, (void *)wrong[w]);
		char *report = NULL;
		ck_assert_msg(!tu_equiv(m->funcs[0], bad, 4, &report), "%s not caught", wrong[w]);
		free(report);
		Schedule *s = tu_schedule(&arena, m);
		char *script = arena_printf(&arena, "sch.transform_layout(buffer=\"A\", index_map=%s)", wrong[w]);
		ck_assert_int_eq(tu_run(s, script), STEP_REJECTED);
		sched_free(s);
	}
}
END_TEST

static const char row_sum_undef[] = "soundness/row_sum_undef.tir";

static const char row_sum_prefix[] =
	"sch.transform_layout(buffer=\"A\", index_map=lambda i, j: [i, j // 4, j % 4], pad_value=T.undef())\n"
	"jo, ji = sch.split(\"j\", factor=4)\n"
	"sch.simplify()\n";

/* The first candidate's output of overcompute removal, taken without
 * proving the no-op / dead stores. */
static Func *overcompute_unchecked(Schedule *s)
{
	RwCtx c;
	DiagList d;
	diag_init(&d, &arena);
	sched_begin(s, &c, "unchecked", (Span){0}, &d);
	OcCandidates cs;
	RwStatus st = rw_overcompute_candidates(&c, NULL, NULL, &cs);
	ck_assert_int_eq(st, RW_OK);
	ck_assert_int_gt(cs.n, 0);
	OcPlan plan;
	const Stmt *target = cs.items[0];
	st = rw_overcompute_plan(&c, target, &plan, true);
	ck_assert_int_eq(st, RW_OK);
	ck_assert_int_gt(plan.nstores, 0); /* the real call has stores to prove */
	return plan.out;
}

START_TEST(overcompute_removal_without_the_no_op_proof_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(row_sum_undef));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, row_sum_prefix), STEP_COMMITTED);
	Func *bad = overcompute_unchecked(s);
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad, 4, &report));
	free(report);
	ck_assert_int_eq(tu_run(s, "sch.remove_branching_through_overcompute(strict=True)"), STEP_REJECTED);
	sched_free(s);
}
END_TEST

static const Stmt *first_store_to(const Stmt *st, const char *buf)
{
	switch (st->kind) {
	case ST_STORE: return strcmp(st->u.store.buf->name, buf) == 0 ? st : NULL;
	case ST_SEQ:
		for (int i = 0; i < st->u.seq.n; i++) {
			const Stmt *r = first_store_to(st->u.seq.items[i], buf);
			if (r)
				return r;
		}
		return NULL;
	case ST_FOR: return first_store_to(st->u.loop.body, buf);
	case ST_IF: return first_store_to(st->u.cond.then_s, buf);
	case ST_BLOCK: return first_store_to(st->u.block.body, buf);
	case ST_ALLOC: return first_store_to(st->u.alloc.body, buf);
	default: return NULL;
	}
}

START_TEST(branching_back_without_the_dead_store_proof_is_caught)
{
	Module *m = tu_parse(&arena, "k.tir", tu_fixture(double14));
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.transform_layout(buffer=\"B\", index_map=lambda i: [i // 4, i % 4], pad_value=5)"),
			 STEP_COMMITTED);
	/* guarding the pad stage's store by "not padding" drops the 5s; the
	 * call leaves that store out of its candidates, and the plan, forced
	 * onto it, carries the obligation that is refuted */
	const Stmt *pad = NULL;
	for (const Stmt *st = sched_func(s)->body; st && !pad;)
		if (st->kind == ST_SEQ) {
			pad = first_store_to(st->u.seq.items[st->u.seq.n - 1], "B");
			break;
		} else {
			st = st->kind == ST_BLOCK ? st->u.block.body : NULL;
		}
	ck_assert_ptr_nonnull(pad);
	Compound k;
	DiagList d;
	diag_init(&d, &arena);
	sched_compound_begin(s, &k, "unchecked", (Span){0}, &d);
	RwCtx c;
	sched_sub_begin(&k, &c, "unchecked");
	OcCandidates cs;
	ck_assert_int_eq(rw_padded_store_candidates(&c, NULL, &cs), RW_OK);
	for (int i = 0; i < cs.n; i++)
		ck_assert_ptr_ne(cs.items[i], pad);
	OcPlan plan;
	ck_assert_int_eq(rw_branch_plan(&c, pad, &plan), RW_OK);
	ck_assert_int_eq(plan.nstores, 1);
	char *report = NULL;
	ck_assert(!tu_equiv(sched_func(s), plan.out, 4, &report));
	free(report);
	const OcStorePlan *sp = &plan.stores[0];
	for (int j = 0; j < sp->ndead; j++)
		ck_assert(!sched_prove(&k, &sp->dead[j], c.func, plan.out));
	ck_assert(!sched_prove(&k, &sp->noop, c.func, plan.out));
	sched_compound_end(&k, STEP_REJECTED, NULL);
	/* the real call guards nothing and keeps the 5s */
	ck_assert_int_eq(tu_run(s, "sch.remove_overcompute_through_branching(strict=True)"), STEP_COMMITTED);
	ck_assert(tu_equiv(m->funcs[0], sched_func(s), 4, &report));
	free(report);
	sched_free(s);
}
END_TEST

START_TEST(simplification_without_its_proof_is_caught)
{
	const char *k = tu_fixture("soundness/simplification_without_its_proof_is_caught.tir");
	Module *m = tu_parse(&arena, "k.tir", k);
	Func *f = m->funcs[0];
	Stmt *store = f->body->u.loop.body;
	/* a simplifier that drops the offset: (i + 1) // 4 -> i // 4 */
	Var *i = f->body->u.loop.var;
	Expr *idx = ir_bin(&arena, OP_FLOORDIV, ir_varref(&arena, i, (Span){0}), ir_int32(&arena, 4), (Span){0});
	Expr *load = ir_load(&arena, store->u.store.value->u.load.buf, 1, &idx, (Span){0});
	Stmt *wrong = ir_store(&arena, store->u.store.buf, 1, store->u.store.idx, load, store->span);
	Func *bad = an_with_body(&arena, f, ir_for(&arena, i, f->body->u.loop.min, f->body->u.loop.extent,
						   FOR_SERIAL, wrong, f->body->span));
	char *report = NULL;
	ck_assert(!tu_equiv(f, bad, 4, &report));
	free(report);
	/* simplify's own check refuses the same replacement */
	Schedule *s = tu_schedule(&arena, m);
	DiagList d;
	diag_init(&d, &arena);
	Compound c;
	sched_compound_begin(s, &c, "simplify(wrong)", (Span){0}, &d);
	StmtCtx ctx;
	ck_assert(an_find_stmt(&arena, f, store, &ctx));
	ck_assert(!sched_simplify_replace(&c, "simplify(wrong)", &ctx, 1, store->u.store.value, load, NULL));
	sched_compound_end(&c, STEP_COMMITTED, NULL);
	ck_assert_ptr_eq(sched_func(s), f);
	sched_free(s);
}
END_TEST

START_TEST(sequential_access_without_the_fission_check_is_caught)
{
	/* seed 000's conv1d_cumsum and the loop fission that walking A would
	 * need: the init reads the previous result of the computation */
	const char *cumsum = tu_fixture("soundness/sequential_access_without_the_fission_check_is_caught-cumsum.tir");
	const char *fissioned = tu_fixture("soundness/sequential_access_without_the_fission_check_is_caught-fissioned.tir");
	Module *m = tu_parse(&arena, "k.tir", cumsum);
	Module *bad = tu_parse(&arena, "bad.tir", fissioned);
	char *report = NULL;
	ck_assert(!tu_equiv(m->funcs[0], bad->funcs[0], 4, &report));
	free(report);
	Schedule *s = tu_schedule(&arena, m);
	ck_assert_int_eq(tu_run(s, "sch.sequential_buffer_access(buffer=\"A\")"), STEP_REJECTED);
	ck_assert(strstr(tu_last(s)->reason, "fission.no_conflict refuted"));
	sched_free(s);
}
END_TEST

/* ---------- moved ranges and shapes (red team, issue 14) ----------
 * reorder, fuse and lift_alloc move a loop range or an allocation shape
 * to where it is evaluated on runs where the kernel as written never
 * evaluated it (an outer loop of no iteration, an `if` not taken), and
 * compute_at gives the moved producer a range from a read that may run
 * under an `if` (a quarter of the kernels). A
 * range or shape that divides by m - b or reads N[m - c] faults there
 * for some m; each committed step must agree with the original for
 * every m in -3..12 (enumerated, not drawn: the fault sits at one value),
 * with no undefined behaviour the original does not have. */
static char *gen_moved(int *prim, int *nlift)
{
	static const char *const outers[] = {"T.max(T.min(m - %u, 6), 0)", "4", "T.max(T.min(N[0], 6), 0)"};
	static const char *const inners[] = {"T.max(T.min(100 // (m - %u), 6), 0)", "T.max(T.min(N[m - %u], 6), 0)",
					     "T.max(T.min(N[0], 6), 0)", "3"};
	static const char *const shapes[] = {"1", "T.max(100 // (m - %u), 1)", "T.max(N[m - %u], 1)",
					     "T.max(N[0], 1)"};
	StrBuf b = {0};
	bool guard = rnd(3) == 0;
	sb_puts(&b, "@T.prim_func\ndef moved(A: T.Buffer((6, 6), \"int32\"), N: T.Buffer((4,), \"int32\"), m: T.int32, "
		    "B: T.Buffer((6, 6), \"int32\")):\n");
	sb_puts(&b, "    for i in T.serial(");
	sb_printf(&b, outers[rnd(3)], rnd(4));
	sb_puts(&b, "):\n        for j in T.serial(");
	sb_printf(&b, inners[rnd(4)], rnd(4));
	sb_puts(&b, "):\n");
	const char *ind = "            ";
	if (guard) {
		sb_printf(&b, "            if m > %u:\n", rnd(4));
		ind = "                ";
	}
	sb_printf(&b, "%stmp = T.alloc_buffer([", ind);
	sb_printf(&b, shapes[rnd(4)], rnd(4));
	sb_printf(&b, "], \"int32\")\n%stmp[0] = A[i, j]\n%sB[i, j] = tmp[0] + 1\n", ind, ind);
	*prim = (int)rnd(3);
	*nlift = 1 + (int)rnd(guard ? 3 : 2);
	return sb_take(&b);
}

/* compute_at of a producer whose region comes from a read that divides
 * by m - b or reads N[m - c], under `if m > d` or not */
static char *gen_moved_attach(void)
{
	static const char *const idxs[] = {"ko * 4 // (m - %u)", "ko * 4 + T.min(N[m - %u], 0)", "ko * 4 + %u",
					   "ko * 4 + T.min(N[0], %u)"};
	StrBuf b = {0};
	sb_puts(&b, "@T.prim_func\ndef moved(A: T.Buffer((16,), \"int32\"), N: T.Buffer((4,), \"int32\"), m: T.int32, "
		    "C: T.Buffer((4,), \"int32\")):\n"
		    "    Bp = T.alloc_buffer([16], \"int32\")\n"
		    "    with T.block(\"Bp\"):\n"
		    "        for k in T.serial(16):\n"
		    "            Bp[k] = A[k] * 2\n"
		    "    for ko in T.serial(4):\n");
	const char *ind = "        ";
	if (rnd(3)) {
		sb_printf(&b, "        if m > %u:\n", rnd(4));
		ind = "            ";
	}
	sb_printf(&b, "%sC[ko] = Bp[T.max(T.min(", ind);
	sb_printf(&b, idxs[rnd(4)], rnd(4));
	sb_puts(&b, ", 15), 0)]\n");
	return sb_take(&b);
}

/* 0: agree; 1: disagree (report in *why) */
static int moved_agree(Arena *a, const Func *before, const Func *after, char **why)
{
	for (int64_t m = -3; m <= 12; m++) {
		DiagList d;
		diag_init(&d, a);
		State *in = interp_gen_input_scalars(a, before, 7, &m, &d);
		if (!in)
			continue;
		State *s1 = state_clone(a, in);
		InterpResult r1, r2;
		if (interp_run(before, s1, 0, &r1) != RUN_OK)
			continue; /* the original's own UB: anything goes */
		State *s2 = state_transfer(a, in, after, &d);
		if (!s2) {
			*why = strdup("input not transferable");
			return 1;
		}
		if (interp_run(after, s2, 0, &r2) != RUN_OK) {
			char buf[512];
			snprintf(buf, sizeof buf, "m = %lld: after: %s", (long long)m, r2.message ? r2.message : "not ok");
			*why = strdup(buf);
			return 1;
		}
		char *diff = NULL;
		if (!state_equal(s1, s2, false, 0, &diff)) {
			char buf[512];
			snprintf(buf, sizeof buf, "m = %lld: %s", (long long)m, diff ? diff : "differ");
			free(diff);
			*why = strdup(buf);
			return 1;
		}
	}
	return 0;
}

START_TEST(random_moved_ranges_and_shapes_agree_for_every_m)
{
	const char *env = getenv("VS_SOUNDNESS_STEPS");
	int target = env ? atoi(env) / 10 : 150;
	if (target < 60)
		target = 60;
	const char *seed = getenv("VS_SOUNDNESS_SEED");
	rng_state = seed && *seed ? rng_seed_state(strtoull(seed, NULL, 0) + 77) : 0x9E3779B97F4A7C15ull;
	static const char *const names[] = {"reorder", "fuse", "lift_alloc", "compute_at"};
	int calls[4] = {0}, committed[4] = {0}, disagreements = 0;
	char first[4096] = "";
	for (int k = 0; k < target; k++) {
		Arena a;
		arena_init(&a);
		int prim, nlift;
		char *text = gen_moved(&prim, &nlift);
		if (rnd(4) == 0) {
			free(text);
			text = gen_moved_attach();
			prim = 3;
		}
		Module *mod = tu_parse(&a, "moved.tir", text);
		ck_assert_msg(mod != NULL, "generated kernel does not parse:\n%s", text);
		Schedule *s = tu_schedule(&a, mod);
		char script[128];
		if (prim == 0)
			snprintf(script, sizeof script, "sch.reorder(\"j\", \"i\")");
		else if (prim == 1)
			snprintf(script, sizeof script, "sch.fuse(\"i\", \"j\")");
		else if (prim == 2)
			snprintf(script, sizeof script, "sch.lift_alloc(\"tmp\", n_lifts=%d)", nlift);
		else
			snprintf(script, sizeof script, "sch.compute_at(block=\"Bp\", loop=\"ko\")");
		calls[prim]++;
		if (tu_run(s, script) == STEP_COMMITTED) {
			committed[prim]++;
			char *why = NULL;
			if (moved_agree(&a, mod->funcs[0], sched_func(s), &why)) {
				if (!disagreements++)
					snprintf(first, sizeof first, "%s\n%s\n%s", text, script, why);
			}
			free(why);
		}
		sched_free(s);
		free(text);
		arena_free(&a);
	}
	fprintf(stderr, "soundness (moved ranges and shapes): %d kernels, %d disagreements;", target, disagreements);
	for (int i = 0; i < 4; i++)
		fprintf(stderr, " %s %d/%d committed", names[i], committed[i], calls[i]);
	fprintf(stderr, "\n");
	ck_assert_msg(disagreements == 0, "disagreement:\n%s", first);
	for (int i = 0; i < 4; i++) /* both outcomes for each */
		ck_assert_msg(committed[i] > 0 && committed[i] < calls[i], "%s: %d/%d committed", names[i],
			      committed[i], calls[i]);
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
	tc = tcase_create("random_block_schedules");
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, random_block_schedules_agree_with_interpreter);
	suite_add_tcase(s, tc);
	tc = tcase_create("random_moved_ranges");
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, random_moved_ranges_and_shapes_agree_for_every_m);
	suite_add_tcase(s, tc);
	tc = tcase_create("checks_can_fail");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wrong_split_variant_is_caught);
	tcase_add_test(tc, reorder_without_dependence_check_is_caught);
	tcase_add_test(tc, layout_with_an_off_by_one_inverse_is_caught);
	tcase_add_test(tc, overcompute_removal_without_the_no_op_proof_is_caught);
	tcase_add_test(tc, branching_back_without_the_dead_store_proof_is_caught);
	tcase_add_test(tc, simplification_without_its_proof_is_caught);
	tcase_add_test(tc, sequential_access_without_the_fission_check_is_caught);
	suite_add_tcase(s, tc);
	return s;
}
