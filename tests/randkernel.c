/* tests/randkernel.c — random kernels and random loop-primitive steps for
 * the property tests (see randkernel.h): the soundness suite and the
 * backend suite (JIT against the interpreter) draw the same ones. */
#include "tests/randkernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewrites/merge.h"

uint64_t rng_state;

/* A seed as a generator state: splitmix64's finaliser is a bijection, so
 * distinct seeds give distinct sweeps (`seed | 1` made 2k and 2k + 1 one
 * sweep); the xorshift state must not be 0. */
uint64_t rng_seed_state(uint64_t s)
{
	s += 0x9E3779B97F4A7C15ull;
	s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ull;
	s = (s ^ (s >> 27)) * 0x94D049BB133111EBull;
	s ^= s >> 31;
	return s ? s : 0x2545F4914F6CDD1Dull;
}


unsigned rnd(unsigned n)
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
	char vars[8][16]; /* loop variables of the current nest */
	int nread;	 /* buffers statements may read: A B C, and X when allocated */
} Gen;

static void indent(Gen *g, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_puts(&g->b, "    ");
}

/* v1 + v2 + off, each index below 24 by construction (extents <= 8);
 * sometimes in a form simplify can tidy ((v + off) % 24, (4 * v + 3) // 4) */
static void index_expr(Gen *g, int nv)
{
	if (nv > 0 && rnd(24) == 0) {
		/* an index read from data (C may be written by the nest) */
		sb_printf(&g->b, "C[%s] %% 24", g->vars[rnd((unsigned)nv)]);
		return;
	}
	if (nv > 0 && rnd(8) == 0) {
		const char *v = g->vars[rnd((unsigned)nv)];
		if (rnd(2))
			sb_printf(&g->b, "(%s + %u) %% 24", v, rnd(3));
		else
			sb_printf(&g->b, "(4 * %s + 3) // 4", v);
		return;
	}
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
	if (strcmp(buf, "C") != 0 && strcmp(buf, "X") != 0) {
		sb_puts(&g->b, ", ");
		index_expr(g, nv);
	}
	sb_puts(&g->b, "]");
}

static const char *const bufs[] = {"A", "B", "C", "X"};

/* A buffer a statement reads: X (a scratch buffer its producer filled
 * at the top) only when the kernel has one. */
static const char *read_buf(Gen *g) { return bufs[rnd((unsigned)g->nread)]; }

static void statement(Gen *g, int nv, int depth)
{
	bool guard = rnd(10) < 4;
	if (guard) {
		indent(g, depth);
		if (rnd(5) == 0) {
			/* a guard that reads data (which the nest may write) */
			sb_printf(&g->b, "if %s + %s < %u and C[%s] %% 3 != 0:\n", g->vars[rnd((unsigned)nv)],
				  g->vars[rnd((unsigned)nv)], 3 + rnd(8), g->vars[rnd((unsigned)nv)]);
		} else {
			/* sometimes a guard that always holds on the loop ranges */
			sb_printf(&g->b, "if %s + %s < %u:\n", g->vars[rnd((unsigned)nv)],
				  g->vars[rnd((unsigned)nv)], rnd(5) == 0 ? 20 : 3 + rnd(8));
		}
		depth++;
	}
	indent(g, depth);
	const char *target = bufs[rnd(3)];
	if (rnd(6) == 0) {
		/* a no-op update X[e] = X[e] + 0 * Y[f]: overcompute can keep it */
		StrBuf keep = g->b;
		memset(&g->b, 0, sizeof g->b);
		access(g, nv, target);
		char *lhs = sb_take(&g->b);
		g->b = keep;
		sb_printf(&g->b, "%s = %s + 0 * ", lhs, lhs);
		free(lhs);
		access(g, nv, read_buf(g));
		sb_puts(&g->b, "\n");
		return;
	}
	if (rnd(3) == 0) {
		/* a reduction: X[e] = X[e] + Y[f] */
		StrBuf keep = g->b;
		memset(&g->b, 0, sizeof g->b);
		access(g, nv, target);
		char *lhs = sb_take(&g->b);
		g->b = keep;
		sb_printf(&g->b, "%s = %s + ", lhs, lhs);
		free(lhs);
		access(g, nv, read_buf(g));
		sb_puts(&g->b, "\n");
		return;
	}
	access(g, nv, target);
	sb_puts(&g->b, " = ");
	if (rnd(5) == 0) {
		/* reads in arms of T.if_then_else: each an access only where
		 * its arm is picked */
		sb_printf(&g->b, "T.if_then_else(%s < %u, ", g->vars[rnd((unsigned)nv)], 1 + rnd(6));
		access(g, nv, read_buf(g));
		sb_puts(&g->b, ", ");
		access(g, nv, read_buf(g));
		sb_puts(&g->b, ")");
	} else if (rnd(6) == 0) {
		/* a math call: an unknown function in proofs, so a rewrite may
		 * move it but never depend on its value */
		sb_puts(&g->b, "T.abs(");
		access(g, nv, read_buf(g));
		sb_puts(&g->b, ")");
	} else if (rnd(6) == 0) {
		sb_puts(&g->b, "T.max(");
		access(g, nv, read_buf(g));
		sb_printf(&g->b, ", %s)", g->vars[rnd((unsigned)nv)]);
	} else {
		access(g, nv, read_buf(g));
	}
	sb_printf(&g->b, " * %u + ", 1 + rnd(3));
	if (rnd(2))
		access(g, nv, read_buf(g));
	else
		sb_printf(&g->b, "%s", g->vars[rnd((unsigned)nv)]);
	sb_puts(&g->b, "\n");
}

char *gen_kernel(void)
{
	Gen g;
	memset(&g, 0, sizeof g);
	sb_puts(&g.b, "@T.prim_func\n"
		      "def k(A: T.Buffer[(24, 24), \"int32\"], B: T.Buffer[(24, 24), \"int32\"],"
		      " C: T.Buffer[(24,), \"int32\"]):\n");
	g.nread = 3;
	/* sometimes an entry fact (facts for simplify and overcompute) */
	if (rnd(4) == 0)
		sb_printf(&g.b, "    for t in T.serial(24):\n        T.assume(t < %u or C[t] == 0)\n",
			  12 + rnd(12));
	/* sometimes a scratch buffer, filled first, read by the nests */
	if (rnd(3) == 0) {
		sb_puts(&g.b, "    X = T.alloc_buffer([24], \"int32\")\n"
			      "    for t in T.serial(24):\n");
		sb_printf(&g.b, "        X[t] = A[t, %u] + t\n", rnd(24));
		g.nread = 4;
	}
	int nests = 1 + (int)rnd(2);
	static const unsigned extents[] = {3, 4, 5, 6, 8};
	unsigned first[3] = {0, 0, 0};
	for (int n = 0; n < nests; n++) {
		int depth = 1 + (int)rnd(3);
		/* half the second nests reuse the first one's ranges, so that
		 * merge_adjacent_loops has something to merge */
		bool same = n > 0 && rnd(2);
		/* sometimes the names the rewrites make up themselves: an
		 * outer loop named as a split of the inner one would be
		 * (j0_o), an inner loop named as a skew's new loop (z).
		 * Variables that share a name must stay apart. */
		bool clash_outer = depth > 1 && rnd(4) == 0, clash_inner = rnd(4) == 0;
		for (int d = 0; d < depth; d++) {
			if (d == 0 && clash_outer)
				snprintf(g.vars[d], sizeof g.vars[d], "%c%d_o", "ijk"[1], n);
			else if (d == depth - 1 && d > 0 && clash_inner)
				snprintf(g.vars[d], sizeof g.vars[d], "z");
			else
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
		/* sometimes a write between nests to what guards and indices read */
		if (n + 1 < nests && rnd(4) == 0)
			sb_printf(&g.b, "    C[%u] = C[%u] + 1\n", rnd(24), rnd(24));
	}
	return sb_take(&g.b);
}

/* ---------- random steps ---------- */

void collect_loops(const Stmt *s, LoopRef *out, int *n, int cap)
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

const char *child_name(const LoopRef *loops, int n, const Stmt *child)
{
	for (int i = 0; i < n; i++)
		if (loops[i].loop == child)
			return loops[i].name;
	return NULL;
}

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

RwStatus random_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn)
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
		snprintf(desc, dn, "sch.split(\"%s\", factor=%lld, tail=\"%s\")", l->name, (long long)factor, split_tail_name(tail));
		return rw_split(c, l->name, factor, tail, NULL, NULL);
	}
	case 2:
		if (child) {
			snprintf(desc, dn, "sch.fuse(\"%s\", \"%s\")", l->name, child);
			return rw_fuse(c, l->name, child, NULL);
		}
		/* fall through */
	case 3:
		if (child) {
			const char *order[2] = {child, l->name};
			snprintf(desc, dn, "sch.reorder(\"%s\", \"%s\")", child, l->name);
			return rw_reorder(c, 2, order);
		}
		/* fall through */
	case 4:
		snprintf(desc, dn, "sch.parallel(\"%s\")", l->name);
		return rw_parallel(c, l->name);
	default:
		if (rnd(2)) {
			snprintf(desc, dn, "sch.vectorize(\"%s\")", l->name);
			return rw_vectorize(c, l->name);
		}
		snprintf(desc, dn, "sch.unroll(\"%s\")", l->name);
		return rw_unroll(c, l->name);
	}
}

