/* tests/randkernel.c — random kernels and random schedule steps for the
 * property tests (see randkernel.h). */
#include "randkernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_state;

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

char *gen_kernel(void)
{
	Gen g;
	memset(&g, 0, sizeof g);
	sb_puts(&g.b, "@T.prim_func\n"
		      "def k(A: T.Buffer[(24, 24), \"int32\"], B: T.Buffer[(24, 24), \"int32\"],"
		      " C: T.Buffer[(24,), \"int32\"]):\n");
	int nests = 1 + (int)rnd(2);
	static const unsigned extents[] = {3, 4, 5, 6, 8};
	for (int n = 0; n < nests; n++) {
		int depth = 1 + (int)rnd(3);
		for (int d = 0; d < depth; d++) {
			snprintf(g.vars[d], sizeof g.vars[d], "%c%d", "ijk"[d], n);
			indent(&g, d + 1);
			unsigned e = extents[rnd(5)];
			if (rnd(6) == 0)
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

static const char *child_name(const LoopRef *loops, int n, const Stmt *child)
{
	for (int i = 0; i < n; i++)
		if (loops[i].loop == child)
			return loops[i].name;
	return NULL;
}

RwStatus random_step(RwCtx *c, const LoopRef *loops, int n, char *desc, size_t dn)
{
	const LoopRef *l = &loops[rnd((unsigned)n)];
	const Stmt *body = l->loop->u.loop.body;
	const char *child = body->kind == ST_FOR ? child_name(loops, n, body) : NULL;
	switch (rnd(6)) {
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
