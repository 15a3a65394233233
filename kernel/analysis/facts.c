/* kernel/analysis/facts.c — facts usable at a program point (semantics.md 3):
 * T.assume statements and producer stores that come before it, kept only
 * while nothing between them and it (the loops around it and the
 * statement itself included) writes a buffer they mention; their
 * instantiation at the loads of an obligation; readable cells. */
#include "kernel/analysis/facts.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/index_map.h"
#include "kernel/analysis/region.h"
#include "kernel/ptrmap.h"

#define MAX_FACT_VARS 16

static Span nospan(void) { return (Span){0}; }

static const Fact *arena_dup_fact(Arena *a, const Fact *f)
{
	Fact *copy = arena_alloc(a, sizeof *copy);
	*copy = *f;
	return copy;
}

static void push_fact(Arena *a, FactSet *fs, const Fact *f)
{
	VEC_PUSH(a, fs->items, fs->n, fs->cap, f);
}

bool an_is_param(const Func *f, const Buffer *buf)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf == buf)
			return true;
	return false;
}

/* ---------- buffers read and written ---------- */

typedef struct BufList {
	int n;
	Buffer *items[64];
	bool overflow;
} BufList;

static void bl_add(BufList *l, Buffer *b)
{
	for (int i = 0; i < l->n; i++)
		if (l->items[i] == b)
			return;
	if (l->n < 64)
		l->items[l->n++] = b;
	else
		l->overflow = true;
}

static bool bl_has(const BufList *l, const Buffer *b)
{
	if (l->overflow)
		return true; /* unknown: assume written */
	for (int i = 0; i < l->n; i++)
		if (l->items[i] == b)
			return true;
	return false;
}

static bool add_read(const Expr *e, void *l)
{
	if (e->kind == EX_LOAD)
		bl_add(l, e->u.load.buf);
	for (int i = 0; e->kind == EX_OPAQUE && i < e->u.opq.nitems; i++)
		if (e->u.opq.items[i].buf)
			bl_add(l, e->u.opq.items[i].buf); /* may read it */
	return false; /* visit every node */
}

static void reads_of(const Expr *e, BufList *l)
{
	expr_any(e, add_read, l);
}

/* Buffers written in s, except by the statement `skip` (a fact's own
 * store). */
typedef struct Writes {
	const Stmt *skip;
	BufList *l;
} Writes;

static void add_opaque_write(Buffer *b, void *l)
{
	bl_add(l, b);
}

static bool add_write(const Stmt *s, void *ud)
{
	Writes *w = ud;
	if (s->kind == ST_STORE && s != w->skip)
		bl_add(w->l, s->u.store.buf);
	/* an opaque call may write every buffer it names */
	ir_stmt_opaque_buffers(s, add_opaque_write, w->l);
	return false; /* visit every statement */
}

static void writes_of(const Stmt *s, const Stmt *skip, BufList *l)
{
	Writes w = {skip, l};
	stmt_find(s, add_write, &w);
}

/* Buffers written in s except by the one statement at `path` (depth
 * steps from s, as in StmtCtx). The position counts, not the pointer:
 * the IR shares identical subtrees (a case split puts one body in every
 * case), and a shared copy elsewhere still writes. */
static void writes_except_at(const Stmt *s, const int *path, int depth, BufList *l)
{
	if (depth == 0)
		return;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++) {
			if (i == path[0])
				writes_except_at(s->u.seq.items[i], path + 1, depth - 1, l);
			else
				writes_of(s->u.seq.items[i], NULL, l);
		}
		return;
	case ST_FOR: writes_except_at(s->u.loop.body, path + 1, depth - 1, l); return;
	case ST_IF:
		if (path[0] == 0)
			writes_except_at(s->u.cond.then_s, path + 1, depth - 1, l);
		else
			writes_of(s->u.cond.then_s, NULL, l);
		if (s->u.cond.else_s) {
			if (path[0] == 1)
				writes_except_at(s->u.cond.else_s, path + 1, depth - 1, l);
			else
				writes_of(s->u.cond.else_s, NULL, l);
		}
		return;
	case ST_ALLOC: writes_except_at(s->u.alloc.body, path + 1, depth - 1, l); return;
	case ST_BLOCK: writes_except_at(s->u.block.body, path + 1, depth - 1, l); return;
	case ST_LET: writes_except_at(s->u.let.body, path + 1, depth - 1, l); return;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		writes_of(s, NULL, l);
		return;
	}
}

static int count_stores_to(const Stmt *s, const Buffer *b)
{
	switch (s->kind) {
	case ST_SEQ: {
		int n = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			n += count_stores_to(s->u.seq.items[i], b);
		return n;
	}
	case ST_FOR: return count_stores_to(s->u.loop.body, b);
	case ST_IF:
		return count_stores_to(s->u.cond.then_s, b) +
		       (s->u.cond.else_s ? count_stores_to(s->u.cond.else_s, b) : 0);
	case ST_STORE: return (s->u.store.buf == b) + ir_stmt_opaque_names(s, b);
	case ST_ALLOC: return count_stores_to(s->u.alloc.body, b);
	case ST_BLOCK: return count_stores_to(s->u.block.body, b);
	case ST_LET: return ir_stmt_opaque_names(s, b) + count_stores_to(s->u.let.body, b);
	case ST_ASSUME: case ST_EVAL: /* an opaque call naming b may write it */
		return ir_stmt_opaque_names(s, b);
	case ST_PASS: case ST_COUNT:
		return 0;
	}
	return 0;
}

/* ---------- collecting facts in one statement ---------- */

typedef struct Walk {
	Arena *a;
	const Stmt *item; /* the top statement being searched */
	int nvars;
	Var *vars[MAX_FACT_VARS];
	const Stmt *loop[MAX_FACT_VARS]; /* the ST_FOR of a loop variable */
	bool is_let[MAX_FACT_VARS]; /* bound by a let, not a loop */
	Expr *let_val[MAX_FACT_VARS];
	int nguards;
	Expr *guards[64];
	bool is_let_guard[64]; /* the `v == value` of a let */
	bool too_deep;
	FactSet found;
} Walk;

/* e with the let variables in scope replaced by their values (innermost
 * first: a let's value may name an outer let). */
static Expr *inline_lets(Walk *w, Expr *e)
{
	for (int v = w->nvars - 1; v >= 0; v--)
		if (w->is_let[v])
			e = ir_subst_expr(w->a, e, 1, &w->vars[v], &w->let_val[v]);
	return e;
}

static Expr *guard_now(Walk *w)
{
	Expr *g = NULL;
	for (int i = 0; i < w->nguards; i++)
		g = ir_and(w->a, g, w->guards[i]);
	return g;
}

static Var **vars_now(Walk *w)
{
	Var **vs = arena_alloc(w->a, sizeof(Var *) * (size_t)(w->nvars + 1));
	memcpy(vs, w->vars, sizeof(Var *) * (size_t)w->nvars);
	return vs;
}

/* `c or X[idx] == v` (or just X[idx] == v): the readable cells it names. */
static void assume_shape(Arena *a, Expr *body, Fact *f)
{
	Expr *unless = NULL, *eq = body;
	if (body->kind == EX_BIN && body->u.bin.op == OP_OR) {
		eq = body->u.bin.b;
		unless = body->u.bin.a;
	}
	if (eq->kind != EX_BIN || eq->u.bin.op != OP_EQ)
		return;
	Expr *load = eq->u.bin.a->kind == EX_LOAD ? eq->u.bin.a
		     : eq->u.bin.b->kind == EX_LOAD ? eq->u.bin.b : NULL;
	if (!load)
		return;
	f->buf = load->u.load.buf;
	f->nidx = load->u.load.nidx;
	f->idx = load->u.load.idx;
	f->unless = unless;
	(void)a;
}

/* Whether a store's value, indices or guards read the buffer it writes:
 * X[X[0]] = 1 moves X[0] itself, so afterwards X[X[0]] names another
 * cell; such a store makes no fact at all. */
static bool store_reads_own(Walk *w, const Stmt *s)
{
	BufList r = {0};
	reads_of(s->u.store.value, &r);
	for (int k = 0; k < s->u.store.nidx; k++)
		reads_of(s->u.store.idx[k], &r);
	for (int i = 0; i < w->nguards; i++)
		reads_of(w->guards[i], &r);
	return bl_has(&r, s->u.store.buf);
}

/* The whole-index rule: a store is a fact X[idx] == v when it is the only
 * store to X in the item and every loop variable around it (inside the
 * item) is one whole index: distinct iterations write distinct cells, so
 * each cell keeps the one value written there. */
static bool store_whole_index(Walk *w, const Stmt *s, Expr *const *idx)
{
	if (count_stores_to(w->item, s->u.store.buf) != 1)
		return false;
	for (int v = 0; v < w->nvars; v++) {
		int uses = 0;
		bool whole = false;
		for (int k = 0; k < s->u.store.nidx; k++) {
			const Expr *e = idx[k];
			if (e->kind == EX_VAR && e->u.var == w->vars[v]) {
				whole = true;
				uses++;
			} else if (ir_expr_uses_var(e, w->vars[v])) {
				uses++;
			}
		}
		/* let variables may appear anywhere; loop variables must index */
		if (!w->is_let[v] && !(whole && uses == 1))
			return false;
	}
	return true;
}

/* ---------- affine store indices (mixed radix) ---------- */

/* The affine rule, for stores the whole-index rule does not take. Each
 * index k is linearised over the item's loop variables:
 *     idx_k = sum_q c_kq * v_q + rest_k   (rest_k free of them).
 * A loop variable v is determined by index k when the variables of k,
 * with u_q = v_q - min_q in [0, ext_q), satisfy the mixed-radix
 * condition: all coefficients positive, the ranges of all but the one of
 * largest coefficient constant and free of the item's loops, and each
 * coefficient larger than the span sum c_r * (ext_r - 1) of the smaller
 * ones, the whole span below 2^31 so that no two values meet by the wrap
 * (a lone variable with coefficient +-1 needs nothing). Then
 *     u_top = (idx_k - rest_k - sum c_q * min_q) // c_top
 * and so on down with the remainder: distinct instances of the variables
 * of k write distinct values of index k. When every loop variable is
 * determined, the store is injective: with one store to X in the item it
 * is a value fact. Otherwise, and for a buffer stored more than once,
 * the fact is readable-only (value T.undef()): every instance writes its
 * cell, which is initialised afterwards wherever its guard held; a
 * variable no index determines is taken at its loop minimum (an instance
 * of the guard, so still sound, only incomplete). The inverses are
 * candidates: uses check idx(inv) == cell and the guard. */
typedef struct AffineInv {
	bool injective;
	Var **cell;
	Expr **inv; /* per loop variable of the walk, in order of f->vars */
} AffineInv;

#define RADIX_SPAN_LIMIT ((int64_t)1 << 31)

static bool free_of_item_loops(const Walk *w, const Expr *e)
{
	for (int v = 0; v < w->nvars; v++)
		if (!w->is_let[v] && ir_expr_uses_var(e, w->vars[v]))
			return false;
	return !an_expr_has_load(e);
}

static bool affine_inverse(Walk *w, int nidx, Expr **idx, AffineInv *out)
{
	Arena *a = w->a;
	int nl = 0;
	Var *lv[MAX_FACT_VARS];
	Expr *lmin[MAX_FACT_VARS], *lext[MAX_FACT_VARS]; /* lets in scope inlined */
	for (int v = 0; v < w->nvars; v++)
		if (!w->is_let[v]) {
			lv[nl] = w->vars[v];
			lmin[nl] = inline_lets(w, w->loop[v]->u.loop.min);
			lext[nl++] = inline_lets(w, w->loop[v]->u.loop.extent);
		}
	out->injective = false;
	out->cell = arena_alloc(a, sizeof(Var *) * (size_t)(nidx + 1));
	out->inv = arena_alloc(a, sizeof(Expr *) * (size_t)(nl + 1));
	for (int k = 0; k < nidx; k++)
		out->cell[k] = ir_var(a, arena_printf(a, "cell%d", k), idx[k]->dtype, nospan());
	RgEnv env;
	rg_env_init(&env, a);
	bool done[MAX_FACT_VARS] = {false};
	for (int k = 0; k < nidx; k++) {
		int64_t coef[MAX_FACT_VARS];
		Expr *rest;
		if (!dtype_is_int(idx[k]->dtype) || !rg_linear(&env, idx[k], nl, lv, coef, &rest) ||
		    an_expr_has_load(rest))
			continue;
		/* the variables of index k, by coefficient */
		int q[MAX_FACT_VARS], m = 0;
		for (int v = 0; v < nl; v++)
			if (coef[v])
				q[m++] = v;
		if (m == 0)
			continue;
		for (int i = 1; i < m; i++)
			for (int j = i; j > 0 && llabs(coef[q[j]]) < llabs(coef[q[j - 1]]); j--) {
				int t = q[j];
				q[j] = q[j - 1];
				q[j - 1] = t;
			}
		bool ok = true;
		if (m == 1) {
			int64_t ext;
			ok = llabs(coef[q[0]]) == 1 ||
			     (free_of_item_loops(w, lext[q[0]]) &&
			      (an_const_int(lext[q[0]], &ext) && ext >= 0 &&
			       (ext == 0 || llabs(coef[q[0]]) < RADIX_SPAN_LIMIT / (ext ? ext : 1))));
		} else {
			int64_t span = 0;
			for (int i = 0; i < m && ok; i++) {
				int64_t c = coef[q[i]], ext;
				ok = c > 0 && free_of_item_loops(w, lmin[q[i]]) &&
				     an_const_int(lext[q[i]], &ext) && ext >= 0 && c > span &&
				     c < RADIX_SPAN_LIMIT && ext < RADIX_SPAN_LIMIT &&
				     span + c * (ext > 0 ? ext - 1 : 0) < RADIX_SPAN_LIMIT;
				if (ok)
					span += c * (ext > 0 ? ext - 1 : 0);
			}
		}
		if (!ok)
			continue;
		DType t = idx[k]->dtype;
		Expr *r = ir_sub(a, ir_varref(a, out->cell[k], nospan()), rest);
		if (m == 1) {
			/* v = (cell - rest) // c: no range needed */
			int v = q[0];
			if (!done[v]) {
				out->inv[v] = an_fold(a, coef[v] == 1 ? r
							: ir_bin(a, OP_FLOORDIV, r, ir_int(a, coef[v], t, nospan()), nospan()));
				done[v] = true;
			}
			continue;
		}
		/* r = cell - rest - sum c_q * min_q, peeled from the top */
		for (int i = 0; i < m; i++)
			r = ir_sub(a, r, ir_mul(a, ir_int(a, coef[q[i]], t, nospan()), lmin[q[i]]));
		for (int i = m - 1; i >= 0; i--) {
			int64_t c = coef[q[i]];
			Expr *u = c == 1 ? r : ir_bin(a, OP_FLOORDIV, r, ir_int(a, c, t, nospan()), nospan());
			if (i > 0)
				r = ir_bin(a, OP_FLOORMOD, r, ir_int(a, c, t, nospan()), nospan());
			int v = q[i];
			if (!done[v]) {
				out->inv[v] = an_fold(a, ir_add(a, u, lmin[v]));
				done[v] = true;
			}
		}
	}
	out->injective = true;
	for (int v = 0; v < nl; v++) {
		if (done[v])
			continue;
		out->injective = false;
		/* not determined by an index: from a determined loop whose
		 * range starts at c * v + d (a tile copy: for ax in
		 * range(io * 16, io * 16 + 16)), v = (ax - d) // c; else its
		 * own loop minimum, if that names no other loop of the item */
		for (int u = 0; u < nl && !out->inv[v]; u++) {
			int64_t cv;
			Expr *d;
			if (u == v || !done[u] || !dtype_is_int(lmin[u]->dtype) ||
			    !rg_linear(&env, lmin[u], 1, &lv[v], &cv, &d) || cv <= 0 ||
			    !free_of_item_loops(w, d))
				continue;
			DType t = lmin[u]->dtype;
			out->inv[v] = an_fold(a, ir_bin(a, OP_FLOORDIV, ir_sub(a, out->inv[u], d),
							ir_int(a, cv, t, nospan()), nospan()));
		}
		if (out->inv[v])
			continue;
		if (!free_of_item_loops(w, lmin[v]))
			return false;
		out->inv[v] = lmin[v];
	}
	return true;
}

static void walk(Walk *w, const Stmt *s)
{
	Arena *a = w->a;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			walk(w, s->u.seq.items[i]);
		return;
	case ST_FOR: {
		if (w->nvars >= MAX_FACT_VARS || w->nguards >= 63) {
			w->too_deep = true;
			return;
		}
		Var *v = s->u.loop.var;
		w->is_let[w->nvars] = false;
		w->loop[w->nvars] = s;
		w->vars[w->nvars++] = v;
		w->is_let_guard[w->nguards] = false;
		w->guards[w->nguards++] = an_loop_range(a, s, ir_varref(a, v, nospan()));
		walk(w, s->u.loop.body);
		w->nvars--;
		w->nguards--;
		return;
	}
	case ST_IF:
		if (w->nguards >= 63) {
			w->too_deep = true;
			return;
		}
		w->is_let_guard[w->nguards] = false;
		w->guards[w->nguards++] = s->u.cond.cond;
		walk(w, s->u.cond.then_s);
		if (s->u.cond.else_s) {
			w->guards[w->nguards - 1] = ir_not(a, s->u.cond.cond, nospan());
			walk(w, s->u.cond.else_s);
		}
		w->nguards--;
		return;
	case ST_LET: {
		if (w->nvars >= MAX_FACT_VARS || w->nguards >= 63) {
			w->too_deep = true;
			return;
		}
		Var *v = s->u.let.var;
		Expr *eq = ir_bin(a, OP_EQ, ir_varref(a, v, nospan()), s->u.let.value, nospan());
		w->is_let[w->nvars] = true;
		w->loop[w->nvars] = NULL;
		w->let_val[w->nvars] = s->u.let.value;
		w->vars[w->nvars++] = v;
		w->is_let_guard[w->nguards] = true;
		w->guards[w->nguards++] = eq;
		walk(w, s->u.let.body);
		w->nvars--;
		w->nguards--;
		return;
	}
	case ST_ALLOC: walk(w, s->u.alloc.body); return;
	case ST_BLOCK: walk(w, s->u.block.body); return;
	case ST_ASSUME: {
		Fact f;
		memset(&f, 0, sizeof f);
		f.stmt = s;
		f.nvars = w->nvars;
		f.vars = vars_now(w);
		f.guard = guard_now(w);
		f.body = s->u.expr;
		assume_shape(a, s->u.expr, &f);
		push_fact(a, &w->found, arena_dup_fact(a, &f));
		return;
	}
	case ST_STORE: {
		/* over the loop variables only: the lets (a block's iter vars)
		 * are replaced by their values */
		int n = s->u.store.nidx;
		Expr **idx = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		for (int k = 0; k < n; k++)
			idx[k] = inline_lets(w, s->u.store.idx[k]);
		if (store_reads_own(w, s))
			return;
		AffineInv ai = {0};
		bool whole = store_whole_index(w, s, idx);
		if (!whole && !affine_inverse(w, n, idx, &ai))
			return;
		bool value = whole || (ai.injective && count_stores_to(w->item, s->u.store.buf) == 1);
		Fact f;
		memset(&f, 0, sizeof f);
		f.stmt = s;
		f.from_store = true;
		f.vars = arena_alloc(a, sizeof(Var *) * (size_t)(w->nvars + 1));
		for (int v = 0; v < w->nvars; v++)
			if (!w->is_let[v])
				f.vars[f.nvars++] = w->vars[v];
		if (!whole) {
			f.cell = ai.cell;
			f.inv = ai.inv;
		}
		Expr *g = NULL;
		for (int i = 0; i < w->nguards; i++)
			if (!w->is_let_guard[i])
				g = ir_and(a, g, inline_lets(w, w->guards[i]));
		f.guard = g;
		Expr *cell = ir_load(a, s->u.store.buf, n, idx, s->span);
		Expr *val = value ? inline_lets(w, s->u.store.value)
				  : ir_undef(a, s->u.store.value->dtype, nospan());
		f.body = ir_bin(a, OP_EQ, cell, val, nospan());
		f.buf = s->u.store.buf;
		f.nidx = n;
		f.idx = idx;
		push_fact(a, &w->found, arena_dup_fact(a, &f));
		return;
	}
	case ST_EVAL: case ST_PASS: case ST_COUNT:
		return;
	}
}

/* ---------- facts at a point ---------- */

/* The buffers a fact's meaning depends on: for its values, everything it
 * reads; for readability only where it holds and which cells it names
 * (the guard, the exception `unless`, the indices), since the cells stay
 * initialised whatever is written to them later, but a guard evaluated
 * in a later state would name other cells. */
static void mentioned(const Fact *f, bool for_values, BufList *l)
{
	if (for_values)
		reads_of(f->body, l);
	if (f->guard)
		reads_of(f->guard, l);
	if (f->unless)
		reads_of(f->unless, l);
	for (int k = 0; k < f->nidx; k++)
		reads_of(f->idx[k], l);
}

static void bl_union(BufList *into, const BufList *from)
{
	if (from->overflow)
		into->overflow = true;
	for (int i = 0; i < from->n; i++)
		bl_add(into, from->items[i]);
}

static bool bl_meets(const BufList *x, const BufList *y)
{
	if (x->overflow)
		return true;
	for (int i = 0; i < x->n; i++)
		if (bl_has(y, x->items[i]))
			return true;
	return false;
}

/* What one statement of a sequence contributes, computed once per
 * statement (a FactCache keeps it for the statements of a whole step). */
typedef struct ItemFacts {
	bool too_deep;
	int n;
	const Fact **facts; /* in the arena */
	BufList writes; /* every buffer the item writes */
	BufList *own;	/* per fact: the item's writes other than the fact's own store */
	BufList *ment[2]; /* per fact: mentioned(f, false / true) */
	BufList *uses;	/* per fact: its cell's buffer and what it reads */
} ItemFacts;

struct FactCache {
	Arena *a;
	PtrMap items; /* const Stmt * -> ItemFacts * */
	PtrMap seqs[2]; /* const Stmt * (an ST_SEQ) -> SeqIndex *, per for_values */
	/* the sequence of the index built last, per for_values: a commit
	 * that changed one item of it is patched from it */
	const Stmt *last_seq[2];
};

/* The facts of a sequence's items, indexed by how far they reach: fact
 * i of item j stays usable up to the first later item that writes a
 * buffer it mentions (`limit`); the item holding the point is looked at
 * by the caller (only part of it runs before the point). Built once per
 * sequence and cache, so the facts at each of n points of a sequence
 * cost no walk of the items before them. */
typedef struct SeqFact {
	int item;  /* j */
	int limit; /* first item after j writing a buffer the fact mentions; n if none */
	bool dead; /* mentions an overflowing buffer list, or its item's own other writes */
	const Fact *fact;
	const BufList *ment, *uses;
} SeqFact;

#define SEQ_INDEX_KEEP 64

typedef struct SeqIndex {
	int n;
	SeqFact *facts; /* in program order */
} SeqIndex;

FactCache *an_fact_cache_new(Arena *a)
{
	FactCache *fc = calloc(1, sizeof *fc);
	if (!fc)
		abort();
	fc->a = a;
	return fc;
}

static void item_facts_free(ItemFacts *it)
{
	free(it->own);
	free(it->ment[0]);
	free(it->ment[1]);
	free(it->uses);
	free(it);
}

static void seq_indexes_free(PtrMap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] && m->vals[i]) {
			SeqIndex *ix = (SeqIndex *)m->vals[i];
			free(ix->facts);
			free(ix);
		}
	ptrmap_free(m);
	memset(m, 0, sizeof *m);
}

void an_fact_cache_free(FactCache *fc)
{
	if (!fc)
		return;
	for (int v = 0; v < 2; v++)
		seq_indexes_free(&fc->seqs[v]);
	for (size_t i = 0; i < fc->items.cap; i++)
		if (fc->items.keys[i])
			item_facts_free((ItemFacts *)fc->items.vals[i]);
	ptrmap_free(&fc->items);
	free(fc);
}

static ItemFacts *item_facts_new(Arena *a, const Stmt *item)
{
	ItemFacts *it = calloc(1, sizeof *it);
	if (!it)
		abort();
	Walk w;
	memset(&w, 0, sizeof w);
	w.a = a;
	w.item = item;
	walk(&w, item);
	writes_of(item, NULL, &it->writes);
	it->too_deep = w.too_deep;
	if (w.too_deep)
		return it;
	it->n = w.found.n;
	it->facts = w.found.items;
	size_t n = (size_t)(it->n ? it->n : 1);
	it->own = calloc(n, sizeof *it->own);
	it->ment[0] = calloc(n, sizeof *it->ment[0]);
	it->ment[1] = calloc(n, sizeof *it->ment[1]);
	it->uses = calloc(n, sizeof *it->uses);
	if (!it->own || !it->ment[0] || !it->ment[1] || !it->uses)
		abort();
	for (int i = 0; i < it->n; i++) {
		const Fact *f = it->facts[i];
		if (f->from_store)
			writes_of(item, f->stmt, &it->own[i]);
		else
			it->own[i] = it->writes;
		mentioned(f, false, &it->ment[0][i]);
		mentioned(f, true, &it->ment[1][i]);
		if (f->buf)
			bl_add(&it->uses[i], f->buf);
		reads_of(f->body, &it->uses[i]);
		if (f->guard)
			reads_of(f->guard, &it->uses[i]);
		if (f->unless)
			reads_of(f->unless, &it->uses[i]);
	}
	return it;
}

/* The item's facts, computed once per cache (statements are immutable
 * and live as long as their arena). */
static ItemFacts *item_facts(FactCache *fc, const Stmt *item)
{
	uintptr_t v;
	if (ptrmap_get(&fc->items, item, &v))
		return (ItemFacts *)v;
	ItemFacts *it = item_facts_new(fc->a, item);
	if (!ptrmap_put(&fc->items, item, (uintptr_t)it))
		abort();
	return it;
}

/* The first item from `from` on whose writes meet the fact's mentioned
 * buffers (n if none). */
static int first_writer(FactCache *fc, const Stmt *seq, int from, const BufList *ment)
{
	for (int j = from; j < seq->u.seq.n; j++)
		if (bl_meets(ment, &item_facts(fc, seq->u.seq.items[j])->writes) ||
		    item_facts(fc, seq->u.seq.items[j])->writes.overflow)
			return j;
	return seq->u.seq.n;
}

/* Facts of an index whose reach must be found again by a walk forward:
 * past this many, the index is built anew. */
#define SEQ_PATCH_RESCANS 16

/* seq's index from the last one built, when seq is that sequence with one
 * item replaced (a compound step's commit): the facts of the replaced
 * item swapped, the reach of the facts before it corrected, in place (the
 * old sequence, a version the step has left, loses its index and would
 * get a new one if asked again). NULL when it does not apply. */
static SeqIndex *seq_index_patched(FactCache *fc, const Stmt *seq, bool for_values)
{
	const Stmt *old = fc->last_seq[for_values];
	uintptr_t v;
	if (!old || old->u.seq.n != seq->u.seq.n || !ptrmap_get(&fc->seqs[for_values], old, &v) ||
	    !v)
		return NULL;
	const SeqIndex *ox = (const SeqIndex *)v;
	int n = seq->u.seq.n, j0 = -1;
	for (int j = 0; j < n; j++)
		if (old->u.seq.items[j] != seq->u.seq.items[j]) {
			if (j0 >= 0)
				return NULL;
			j0 = j;
		}
	if (j0 < 0)
		return NULL;
	ItemFacts *it = item_facts(fc, seq->u.seq.items[j0]);
	if (it->too_deep)
		return NULL;
	int rescans = it->n;
	for (int i = 0; i < ox->n && ox->facts[i].item < j0; i++)
		rescans += ox->facts[i].limit == j0;
	if (rescans > SEQ_PATCH_RESCANS)
		return NULL;
	/* in place: the old sequence's entry is dropped from the map */
	SeqIndex *ix = (SeqIndex *)ox;
	if (!ptrmap_put(&fc->seqs[for_values], old, 0))
		abort();
	int lo = 0, hi;
	for (; lo < ix->n && ix->facts[lo].item < j0; lo++) {
		SeqFact *sf = &ix->facts[lo];
		if (sf->limit == j0)
			sf->limit = first_writer(fc, seq, j0, sf->ment);
		else if (sf->limit > j0 && (bl_meets(sf->ment, &it->writes) || it->writes.overflow))
			sf->limit = j0;
	}
	for (hi = lo; hi < ix->n && ix->facts[hi].item == j0; hi++)
		;
	int total = ix->n - (hi - lo) + it->n;
	if (it->n > hi - lo) {
		ix->facts = realloc(ix->facts, sizeof *ix->facts * (size_t)total);
		if (!ix->facts)
			abort();
	}
	memmove(&ix->facts[lo + it->n], &ix->facts[hi], sizeof *ix->facts * (size_t)(ix->n - hi));
	for (int f = 0; f < it->n; f++) {
		SeqFact *sf = &ix->facts[lo + f];
		const BufList *m = &it->ment[for_values][f];
		sf->item = j0;
		sf->fact = it->facts[f];
		sf->ment = m;
		sf->uses = &it->uses[f];
		sf->dead = m->overflow;
		for (int k = 0; k < m->n; k++)
			if (bl_has(&it->own[f], m->items[k]))
				sf->dead = true;
		sf->limit = first_writer(fc, seq, j0 + 1, m);
	}
	ix->n = total;
	return ix;
}

/* The index of seq's facts (see SeqIndex). */
static SeqIndex *seq_index(FactCache *fc, const Stmt *seq, bool for_values)
{
	uintptr_t v;
	if (ptrmap_get(&fc->seqs[for_values], seq, &v) && v)
		return (SeqIndex *)v;
	/* each commit of a compound step makes new sequences on the path to
	 * its change: the indexes of old versions are dropped now and then,
	 * so memory stays bounded (at worst an index is built again) */
	if (fc->seqs[for_values].n >= SEQ_INDEX_KEEP) {
		/* the last one stays: the next commit is patched from it */
		const Stmt *last = fc->last_seq[for_values];
		uintptr_t keep = 0;
		if (last && ptrmap_get(&fc->seqs[for_values], last, &keep) && keep &&
		    !ptrmap_put(&fc->seqs[for_values], last, 0))
			abort();
		seq_indexes_free(&fc->seqs[for_values]);
		if (keep && !ptrmap_put(&fc->seqs[for_values], last, keep))
			abort();
	}
	SeqIndex *ix = seq_index_patched(fc, seq, for_values);
	if (ix) {
		if (!ptrmap_put(&fc->seqs[for_values], seq, (uintptr_t)ix))
			abort();
		fc->last_seq[for_values] = seq;
		return ix;
	}
	int n = seq->u.seq.n, total = 0;
	for (int j = 0; j < n; j++) {
		ItemFacts *it = item_facts(fc, seq->u.seq.items[j]);
		total += it->too_deep ? 0 : it->n;
	}
	ix = calloc(1, sizeof *ix);
	if (!ix)
		abort();
	ix->facts = calloc((size_t)(total ? total : 1), sizeof *ix->facts);
	if (!ix->facts)
		abort();
	/* from the last item back: next[b] is the first item after j that
	 * writes b, next_all the first whose write list overflowed */
	PtrMap next = {0};
	int next_all = n, at = total;
	for (int j = n - 1; j >= 0; j--) {
		ItemFacts *it = item_facts(fc, seq->u.seq.items[j]);
		for (int i = it->too_deep ? -1 : it->n - 1; i >= 0; i--) {
			SeqFact *sf = &ix->facts[--at];
			const BufList *m = &it->ment[for_values][i];
			sf->item = j;
			sf->fact = it->facts[i];
			sf->ment = m;
			sf->uses = &it->uses[i];
			sf->limit = next_all;
			sf->dead = m->overflow;
			for (int k = 0; k < m->n; k++) {
				if (bl_has(&it->own[i], m->items[k]))
					sf->dead = true;
				if (ptrmap_get(&next, m->items[k], &v) && (int)v < sf->limit)
					sf->limit = (int)v;
			}
		}
		if (it->writes.overflow)
			next_all = j;
		for (int k = 0; k < it->writes.n; k++)
			if (!ptrmap_put(&next, it->writes.items[k], (uintptr_t)j))
				abort();
	}
	ptrmap_free(&next);
	ix->n = total;
	if (!ptrmap_put(&fc->seqs[for_values], seq, (uintptr_t)ix))
		abort();
	fc->last_seq[for_values] = seq;
	return ix;
}

/* Usable facts, by pointer, before the relevance filter. */
typedef struct FactPtrs {
	int n, cap;
	const Fact **items;
} FactPtrs;

static void fp_push(FactPtrs *l, const Fact *f)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->items = realloc(l->items, sizeof *l->items * (size_t)l->cap);
		if (!l->items)
			abort();
	}
	l->items[l->n++] = f;
}

static void loads_of_stmt_exprs(const Stmt *s, BufList *l)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			loads_of_stmt_exprs(s->u.seq.items[i], l);
		return;
	case ST_FOR:
		reads_of(s->u.loop.min, l);
		reads_of(s->u.loop.extent, l);
		loads_of_stmt_exprs(s->u.loop.body, l);
		return;
	case ST_IF:
		reads_of(s->u.cond.cond, l);
		loads_of_stmt_exprs(s->u.cond.then_s, l);
		if (s->u.cond.else_s)
			loads_of_stmt_exprs(s->u.cond.else_s, l);
		return;
	case ST_STORE:
		for (int k = 0; k < s->u.store.nidx; k++)
			reads_of(s->u.store.idx[k], l);
		reads_of(s->u.store.value, l);
		return;
	case ST_ALLOC: loads_of_stmt_exprs(s->u.alloc.body, l); return;
	case ST_BLOCK: loads_of_stmt_exprs(s->u.block.body, l); return;
	case ST_LET:
		reads_of(s->u.let.value, l);
		loads_of_stmt_exprs(s->u.let.body, l);
		return;
	case ST_ASSUME: case ST_EVAL:
		reads_of(s->u.expr, l);
		return;
	case ST_PASS: case ST_COUNT:
		return;
	}
}

void an_facts_at(Arena *a, const Func *f, const StmtCtx *sc, bool for_values,
		 const Stmt *exclude, FactSet *out)
{
	an_facts_for(a, f, sc, for_values, exclude, NULL, NULL, out);
}

void an_facts_for(Arena *a, const Func *f, const StmtCtx *sc, bool for_values,
		  const Stmt *exclude, FactCache *cache, const Stmt *loads_of, FactSet *out)
{
	memset(out, 0, sizeof *out);
	/* only the target itself can be left out (by its position) */
	if (exclude && exclude != sc->stmt)
		exclude = NULL;
	FactCache *mine = NULL;
	if (!cache || cache->a != a)
		cache = mine = an_fact_cache_new(a);
	FactPtrs found = {0};
	const BufList **uses = NULL;
	int nuses = 0, capuses = 0;
	const Stmt *cur = f->body;
	for (int level = 0; level < sc->depth && cur; level++) {
		int k = sc->path[level];
		if (cur->kind != ST_SEQ) {
			cur = an_stmt_at(cur, &sc->path[level], 1);
			continue;
		}
		{
			/* the facts of items before k that no item up to k
			 * writes over (SeqIndex); item k holds the target, the
			 * loops around it and the target: its writes count
			 * (except the excluded target's own), in program order */
			BufList acc = {0};
			if (exclude)
				writes_except_at(cur->u.seq.items[k], sc->path + level + 1,
						 sc->depth - level - 1, &acc);
			else
				acc = item_facts(cache, cur->u.seq.items[k])->writes;
			SeqIndex *ix = seq_index(cache, cur, for_values);
			for (int i = 0; i < ix->n && ix->facts[i].item < k; i++) {
				const SeqFact *sf = &ix->facts[i];
				if (sf->dead || sf->limit < k || (sf->limit == k && bl_meets(sf->ment, &acc)))
					continue;
				if (nuses == capuses) {
					capuses = capuses ? capuses * 2 : 16;
					uses = realloc(uses, sizeof *uses * (size_t)capuses);
					if (!uses)
						abort();
				}
				uses[nuses++] = sf->uses;
				fp_push(&found, sf->fact);
			}
			cur = cur->u.seq.items[k];
		}
	}
	/* Relevance: a fact can matter for the loads of `loads_of` if it
	 * names or reads one of their buffers, or one of the buffers that
	 * such a fact reads (instantiation goes one round deeper). Leaving
	 * the others out only weakens the hypotheses. */
	bool *keep = calloc((size_t)(found.n ? found.n : 1), sizeof *keep);
	if (!keep)
		abort();
	if (loads_of) {
		BufList rel = {0};
		loads_of_stmt_exprs(loads_of, &rel);
		BufList rel2 = rel;
		for (int i = 0; i < found.n; i++)
			if (bl_meets(uses[i], &rel))
				bl_union(&rel2, uses[i]);
		for (int i = 0; i < found.n; i++)
			keep[i] = bl_meets(uses[i], &rel2);
	} else {
		for (int i = 0; i < found.n; i++)
			keep[i] = true;
	}
	for (int i = 0; i < found.n; i++)
		if (keep[i])
			push_fact(a, out, found.items[i]);
	free(keep);
	free(found.items);
	free(uses);
	an_fact_cache_free(mine);
}

/* ---------- instantiation ---------- */

/* The fact's variables solved from a load of the fact's cell:
 * t0 with idx(t0) == at, or NULL if the index does not determine them. */
static Expr **solve(Arena *a, const Fact *f, int nidx, Expr **fidx, Expr **at)
{
	if (f->nvars == 0)
		return arena_alloc(a, sizeof(Expr *));
	if (f->inv) {
		/* the inverse is of the fact's own cell */
		for (int k = 0; k < nidx; k++)
			if (nidx != f->nidx || !ir_expr_equal(fidx[k], f->idx[k]))
				return NULL;
		Expr **t0 = arena_alloc(a, sizeof(Expr *) * (size_t)(f->nvars + 1));
		for (int j = 0; j < f->nvars; j++)
			t0[j] = ir_subst_expr(a, f->inv[j], nidx, f->cell, at);
		return t0;
	}
	IndexMap m;
	memset(&m, 0, sizeof m);
	m.nin = f->nvars;
	m.in = f->vars;
	m.nout = nidx;
	m.out = fidx;
	m.phys = arena_alloc(a, sizeof(Var *) * (size_t)(nidx + 1));
	for (int k = 0; k < nidx; k++)
		m.phys[k] = ir_var(a, "t", DT_INT32, nospan());
	const char *why;
	/* a variable that is a let of the others is determined by them */
	if (!imap_derive_inverse(a, &m, &why))
		return NULL;
	Expr **t0 = arena_alloc(a, sizeof(Expr *) * (size_t)(f->nvars + 1));
	for (int j = 0; j < f->nvars; j++)
		t0[j] = ir_subst_expr(a, m.inverse[j], nidx, m.phys, at);
	return t0;
}

typedef struct LoadRef {
	Buffer *buf;
	int nidx;
	Expr **idx;
} LoadRef;

static void loads_in(const Expr *e, LoadRef *out, int *n, int cap)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD:
		if (*n < cap)
			out[(*n)++] = (LoadRef){e->u.load.buf, e->u.load.nidx, e->u.load.idx};
		for (int i = 0; i < e->u.load.nidx; i++)
			loads_in(e->u.load.idx[i], out, n, cap);
		return;
	case EX_BIN: loads_in(e->u.bin.a, out, n, cap); loads_in(e->u.bin.b, out, n, cap); return;
	case EX_NOT: case EX_NEG: case EX_CAST: loads_in(e->u.un.a, out, n, cap); return;
	case EX_SELECT:
		loads_in(e->u.sel.cond, out, n, cap);
		loads_in(e->u.sel.a, out, n, cap);
		loads_in(e->u.sel.b, out, n, cap);
		return;
	case EX_LET: loads_in(e->u.let.value, out, n, cap); loads_in(e->u.let.body, out, n, cap); return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			loads_in(e->u.call.args[i], out, n, cap);
		return;
	case EX_OPAQUE:
		for (int i = 0; i < e->u.opq.nargs; i++)
			loads_in(e->u.opq.args[i], out, n, cap);
		return;
	case EX_COUNT: return;
	}
}

static bool has_undef(const Expr *e)
{
	switch (e->kind) {
	case EX_UNDEF: return true;
	case EX_INT: case EX_FLOAT: case EX_VAR: return false;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			if (has_undef(e->u.load.idx[i]))
				return true;
		return false;
	case EX_BIN: return has_undef(e->u.bin.a) || has_undef(e->u.bin.b);
	case EX_NOT: case EX_NEG: case EX_CAST: return has_undef(e->u.un.a);
	case EX_SELECT: return has_undef(e->u.sel.cond) || has_undef(e->u.sel.a) || has_undef(e->u.sel.b);
	case EX_LET: return has_undef(e->u.let.value) || has_undef(e->u.let.body);
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (has_undef(e->u.call.args[i]))
				return true;
		return false;
	case EX_OPAQUE: return true; /* its value is unknown, as T.undef()'s */
	case EX_COUNT: return false;
	}
	return false;
}

static bool hyp_present(const Obligation *o, const Expr *h)
{
	for (int i = 0; i < o->nhyps; i++)
		if (ir_expr_equal(o->hyps[i], h))
			return true;
	return false;
}

/* guard(t0) -> body(t0) */
static Expr *instance(Arena *a, const Fact *f, Expr **t0)
{
	Expr *body = ir_subst_expr(a, f->body, f->nvars, f->vars, t0);
	if (!f->guard)
		return body;
	Expr *g = ir_subst_expr(a, f->guard, f->nvars, f->vars, t0);
	return ir_or(a, ir_not(a, g, nospan()), body);
}

static void instantiate_round(Arena *a, const FactSet *fs, const Expr *e, Obligation *o,
			      int depth)
{
	LoadRef loads[64];
	int n = 0;
	loads_in(e, loads, &n, 64);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < fs->n; j++) {
			const Fact *f = fs->items[j];
			if (has_undef(f->body))
				continue; /* readable, but no value */
			LoadRef fl[16];
			int nf = 0;
			loads_in(f->body, fl, &nf, 16);
			for (int k = 0; k < nf; k++) {
				if (fl[k].buf != loads[i].buf || fl[k].nidx != loads[i].nidx)
					continue;
				Expr **t0 = solve(a, f, fl[k].nidx, fl[k].idx, loads[i].idx);
				if (!t0)
					continue;
				Expr *h = instance(a, f, t0);
				if (hyp_present(o, h))
					continue;
				obligation_add_hyp(a, o, h);
				if (depth > 0)
					instantiate_round(a, fs, h, o, depth - 1);
			}
		}
	}
}

void an_facts_instantiate(Arena *a, const FactSet *fs, const Expr *e, Obligation *o)
{
	instantiate_round(a, fs, e, o, 1);
}

/* ---------- readable cells ---------- */

void an_store_facts(Arena *a, const Stmt *s, FactSet *out)
{
	memset(out, 0, sizeof *out);
	Walk w;
	memset(&w, 0, sizeof w);
	w.a = a;
	w.item = s;
	walk(&w, s);
	if (w.too_deep)
		return;
	for (int i = 0; i < w.found.n; i++) {
		const Fact *x = w.found.items[i];
		bool loads = x->guard && an_expr_has_load(x->guard);
		for (int k = 0; k < x->nidx && !loads; k++)
			loads = an_expr_has_load(x->idx[k]);
		if (x->from_store && !loads)
			push_fact(a, out, x);
	}
}

static Expr *covered(Arena *a, const Func *f, const FactSet *fs, Buffer *buf, int nidx,
		     Expr **idx, bool params);

Expr *an_written(Arena *a, const FactSet *fs, Buffer *buf, int nidx, Expr **idx)
{
	return covered(a, NULL, fs, buf, nidx, idx, false);
}

Expr *an_readable(Arena *a, const Func *f, const FactSet *fs, Buffer *buf, int nidx,
		  Expr **idx)
{
	return covered(a, f, fs, buf, nidx, idx, true);
}

static Expr *covered(Arena *a, const Func *f, const FactSet *fs, Buffer *buf, int nidx,
		     Expr **idx, bool params)
{
	Expr *any = NULL;
	if (params && an_is_param(f, buf)) {
		const Layout *lay = buf->layout;
		Expr *pad = lay ? (lay->all_padding ? lay->all_padding : lay->pad_predicate) : NULL;
		if (!pad)
			return ir_bool(a, true);
		any = ir_not(a, ir_subst_expr(a, pad, nidx, lay->inv_vars, idx), nospan());
	}
	for (int j = 0; j < fs->n; j++) {
		const Fact *x = fs->items[j];
		if (x->buf != buf || x->nidx != nidx)
			continue;
		Expr **t0 = solve(a, x, x->nidx, x->idx, idx);
		if (!t0)
			continue;
		Expr *cond = x->guard ? ir_subst_expr(a, x->guard, x->nvars, x->vars, t0) : NULL;
		if (x->unless)
			cond = ir_and(a, cond, ir_not(a, ir_subst_expr(a, x->unless, x->nvars, x->vars, t0),
						      nospan()));
		for (int k = 0; k < nidx; k++) {
			Expr *at = ir_subst_expr(a, x->idx[k], x->nvars, x->vars, t0);
			cond = ir_and(a, cond, ir_bin(a, OP_EQ, at, idx[k], nospan()));
		}
		any = any ? ir_or(a, any, cond ? cond : ir_bool(a, true)) : (cond ? cond : ir_bool(a, true));
	}
	return any ? any : ir_bool(a, false);
}
