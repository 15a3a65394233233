/* rewrites/attach.c — attach sites for compute_at and reverse_compute_at
 * (attach.h): finding the block and the attach loop in sibling statements,
 * the attach path, and the statement instances that run before the start
 * or after the end of one iteration of the attach loop's body, grouped
 * with fresh path variables and their order constraint. */
#include "rewrites/attach.h"

#include <stdlib.h>
#include <string.h>

/* ---------- finding a block ---------- */

typedef struct BlockFinder {
	const char *name;
	int seen;
	StmtCtx hit;
} BlockFinder;

static void bf_visit(void *ud, Stmt *s, const StmtCtx *c)
{
	BlockFinder *f = ud;
	if (s->kind != ST_BLOCK)
		return;
	if (strcmp(s->u.block.name, f->name) == 0 && !f->seen++)
		f->hit = *c;
}

RwStatus attach_find_block(RwCtx *c, const char *name, StmtCtx *out)
{
	BlockFinder f;
	memset(&f, 0, sizeof f);
	f.name = name;
	an_walk(c->arena, c->func, bf_visit, &f);
	RwStatus st = RW_OK;
	if (!f.seen)
		st = rw_fail(c, RW_BAD_INPUT, c->call_span, "no block \"%s\" in function '%s'%s",
			     name, c->func->name, rw_block_hint(c->arena, c->func, name));
	else if (f.seen > 1)
		st = rw_fail(c, RW_BAD_INPUT, c->call_span,
			     "block name \"%s\" is ambiguous in function '%s': %d blocks have it",
			     name, c->func->name, f.seen);
	else
		*out = f.hit;
	return st;
}

Stmt *attach_stmt_at(Stmt *root, const int *path, int depth)
{
	Stmt *s = root;
	for (int k = 0; k < depth; k++) {
		switch (s->kind) {
		case ST_SEQ: s = s->u.seq.items[path[k]]; break;
		case ST_FOR: s = s->u.loop.body; break;
		case ST_IF: s = path[k] == 0 ? s->u.cond.then_s : s->u.cond.else_s; break;
		case ST_ALLOC: s = s->u.alloc.body; break;
		case ST_BLOCK: s = s->u.block.body; break;
		case ST_LET: s = s->u.let.body; break;
		case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
			abort();
		}
	}
	return s;
}

void attach_ctx_at(RwCtx *c, const StmtCtx *deep, int depth, StmtCtx *out)
{
	memset(out, 0, sizeof *out);
	Stmt *n = c->func->body;
	for (int d = 0; d < depth; d++) {
		switch (n->kind) {
		case ST_FOR:
			out->loops[out->nloops++] = n;
			break;
		case ST_IF:
			out->conds[out->nconds++] = deep->path[d] == 0
							    ? n->u.cond.cond
							    : ir_not(c->arena, n->u.cond.cond, n->u.cond.cond->span);
			break;
		case ST_LET:
			out->lets[out->nlets++] = n;
			break;
		case ST_SEQ: case ST_ALLOC: case ST_BLOCK: case ST_STORE: case ST_ASSUME:
		case ST_EVAL: case ST_PASS: case ST_COUNT:
			break;
		}
		out->path[out->depth++] = deep->path[d];
		n = attach_stmt_at(n, deep->path + d, 1);
	}
	out->stmt = n;
}

RwStatus attach_site(RwCtx *c, const char *block, const char *loop, bool loop_after,
		     AttachSite *out)
{
	memset(out, 0, sizeof *out);
	RwStatus st = attach_find_block(c, block, &out->block);
	if (st == RW_OK)
		st = rw_find_loop(c, loop, &out->loop);
	if (st != RW_OK)
		return st;
	const StmtCtx *b = &out->block, *l = &out->loop;
	const char *where = loop_after ? "after" : "before";
	int sd = b->depth - 1;
	Stmt *parent = sd >= 0 ? attach_stmt_at(c->func->body, b->path, sd) : NULL;
	bool siblings = parent && parent->kind == ST_SEQ && l->depth > sd + 0;
	for (int k = 0; siblings && k < sd; k++)
		siblings = b->path[k] == l->path[k];
	if (siblings)
		siblings = loop_after ? l->path[sd] > b->path[sd] : l->path[sd] < b->path[sd];
	if (!siblings)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "loop '%s' must lie in a statement that comes %s block \"%s\" in the same sequence",
			       loop, where, block);
	out->seq = parent;
	out->seq_depth = sd;
	out->block_index = b->path[sd];
	out->other_index = l->path[sd];
	if (l->nlets > b->nlets)
		return rw_fail(c, RW_UNSUPPORTED, l->stmt->span,
			       "a let binding lies between block \"%s\" and loop '%s'", block, loop);
	for (int k = b->nloops; k < l->nloops; k++)
		out->path[out->npath++] = l->loops[k];
	out->path[out->npath++] = l->stmt;
	for (int k = 0; k < out->npath; k++) {
		ForKind kind = out->path[k]->u.loop.kind;
		if (kind == FOR_PARALLEL || kind == FOR_VECTORIZED)
			return rw_fail(c, RW_UNSUPPORTED, out->path[k]->span,
				       "loop '%s' on the attach path is %s; its iterations would share the moved stage",
				       out->path[k]->u.loop.var->name, for_kind_name(kind));
		/* each run of a path loop reads its range in its own state;
		 * the order obligations compare iterations of different runs
		 * as if they read one state */
		if (an_range_reads_written(c->arena, out->path[k], c->func->body))
			return rw_fail(c, RW_UNSUPPORTED, out->path[k]->span,
				       "the range of loop '%s' on the attach path reads a buffer the function writes",
				       out->path[k]->u.loop.var->name);
	}
	return RW_OK;
}

char *attach_path_text(Arena *a, const AttachSite *s)
{
	StrBuf b = {0};
	sb_puts(&b, s->loop.stmt->u.loop.var->name);
	for (int k = s->loop.nloops - 1; k >= 0; k--)
		sb_printf(&b, ", %s", s->loop.loops[k]->u.loop.var->name);
	char *t = sb_take(&b);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

/* ---------- order groups ---------- */

Expr *attach_lex_less(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *result = NULL;
	for (int k = n - 1; k >= 0; k--) {
		Expr *lt = ir_bin(a, OP_LT, x[k], y[k], (Span){0});
		if (!result) {
			result = lt;
			continue;
		}
		Expr *eq = ir_bin(a, OP_EQ, x[k], y[k], (Span){0});
		result = ir_or(a, lt, ir_and(a, eq, result));
	}
	return result ? result : ir_bool(a, false);
}

static Expr *lex_equal(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *r = NULL;
	for (int k = 0; k < n; k++)
		r = ir_and(a, r, ir_bin(a, OP_EQ, x[k], y[k], (Span){0}));
	return r ? r : ir_bool(a, true);
}

typedef enum { REL_BEFORE_SIB, REL_AFTER_SIB, REL_OTHER_BRANCH, REL_BODY } Relation;

typedef enum { C_SKIP, C_NONE, C_LT, C_LE, C_GT, C_GE } Constraint;

typedef struct GroupWalk {
	RwCtx *c;
	OrderSide side;
	int nloops;
	Stmt *loops[AN_MAX_DEPTH];
	OrderGroup *groups;
	int n, cap;
	int nvol;
	Buffer **vol;
} GroupWalk;

/* Which instances of a statement at `level` path loops run on the side. */
static Constraint constraint_of(OrderSide side, Relation rel, int level)
{
	switch (rel) {
	case REL_BEFORE_SIB:
		if (side == ORDER_BEFORE_START)
			return level ? C_LE : C_NONE;
		return level ? C_GT : C_SKIP;
	case REL_AFTER_SIB:
		if (side == ORDER_BEFORE_START)
			return level ? C_LT : C_SKIP;
		return level ? C_GE : C_NONE;
	case REL_OTHER_BRANCH: /* never runs in the current prefix iteration */
		if (!level)
			return C_SKIP;
		return side == ORDER_BEFORE_START ? C_LT : C_GT;
	case REL_BODY:
		return side == ORDER_BEFORE_START ? C_LT : C_GT;
	}
	return C_SKIP;
}

static void add_group(GroupWalk *w, const Stmt *s, Relation rel)
{
	Arena *a = w->c->arena;
	int j = w->nloops;
	Constraint k = constraint_of(w->side, rel, j);
	if (k == C_SKIP)
		return;
	VEC_RESERVE(a, w->groups, w->n, w->cap);
	OrderGroup *g = &w->groups[w->n++];
	memset(g, 0, sizeof *g);
	Var *orig[AN_MAX_DEPTH];
	Expr *cur[AN_MAX_DEPTH], *fresh[AN_MAX_DEPTH];
	g->vars = arena_alloc(a, sizeof(Var *) * (size_t)(j + 1));
	g->hyps = arena_alloc(a, sizeof(Expr *) * (size_t)(j + 2));
	const char *suffix = w->side == ORDER_BEFORE_START ? "_prev" : "_next";
	for (int d = 0; d < j; d++) {
		const Stmt *l = w->loops[d];
		orig[d] = l->u.loop.var;
		cur[d] = ir_varref(a, orig[d], (Span){0});
		g->vars[d] = an_fresh_var(a, orig[d], suffix);
		fresh[d] = ir_varref(a, g->vars[d], (Span){0});
		/* a range may use outer path variables: this copy's */
		Expr *lo = ir_subst_expr(a, l->u.loop.min, d, orig, fresh);
		Expr *ext = ir_subst_expr(a, l->u.loop.extent, d, orig, fresh);
		g->hyps[g->nhyps++] = ir_and(a, ir_bin(a, OP_LE, lo, fresh[d], (Span){0}),
					     ir_bin(a, OP_LT, fresh[d], ir_add(a, lo, ext), (Span){0}));
	}
	g->nvars = j;
	switch (k) {
	case C_SKIP:
	case C_NONE:
		break;
	case C_LT: g->hyps[g->nhyps++] = attach_lex_less(a, j, fresh, cur); break;
	case C_GT: g->hyps[g->nhyps++] = attach_lex_less(a, j, cur, fresh); break;
	case C_LE:
		g->hyps[g->nhyps++] = ir_or(a, attach_lex_less(a, j, fresh, cur),
					    lex_equal(a, j, fresh, cur));
		break;
	case C_GE:
		g->hyps[g->nhyps++] = ir_or(a, attach_lex_less(a, j, cur, fresh),
					    lex_equal(a, j, fresh, cur));
		break;
	}
	an_collect_accesses(w->c->arena, s, j, orig, fresh, w->nvol, w->vol, &g->acc);
	an_name_instance(a, &g->acc, suffix);
}

static void group_walk(GroupWalk *w, const Stmt *s, const int *path, int depth)
{
	if (depth == 0) { /* s is the attach loop */
		w->loops[w->nloops++] = (Stmt *)s;
		add_group(w, s->u.loop.body, REL_BODY);
		return;
	}
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (i != path[0])
				add_group(w, s->u.seq.items[i], i < path[0] ? REL_BEFORE_SIB : REL_AFTER_SIB);
		group_walk(w, s->u.seq.items[path[0]], path + 1, depth - 1);
		return;
	case ST_FOR:
		w->loops[w->nloops++] = (Stmt *)s;
		group_walk(w, s->u.loop.body, path + 1, depth - 1);
		return;
	case ST_IF: {
		const Stmt *other = path[0] == 0 ? s->u.cond.else_s : s->u.cond.then_s;
		if (other)
			add_group(w, other, REL_OTHER_BRANCH);
		group_walk(w, path[0] == 0 ? s->u.cond.then_s : s->u.cond.else_s, path + 1, depth - 1);
		return;
	}
	case ST_ALLOC:
		group_walk(w, s->u.alloc.body, path + 1, depth - 1);
		return;
	case ST_BLOCK:
		group_walk(w, s->u.block.body, path + 1, depth - 1);
		return;
	case ST_LET: /* attach_site rejects lets on the path */
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		break;
	}
	abort();
}

int attach_written_buffers(RwCtx *c, Buffer ***out)
{
	return an_written_buffers(c->arena, c->func->body, out);
}

int attach_order_groups(RwCtx *c, const AttachSite *s, OrderSide side, OrderGroup **out)
{
	GroupWalk w;
	memset(&w, 0, sizeof w);
	w.c = c;
	w.side = side;
	w.nvol = attach_written_buffers(c, &w.vol);
	int d = s->seq_depth + 1;
	Stmt *item = s->seq->u.seq.items[s->other_index];
	group_walk(&w, item, s->loop.path + d, s->loop.depth - d);
	*out = w.groups;
	return w.n;
}

void attach_between_accesses(RwCtx *c, const AttachSite *s, AccessList *out)
{
	Buffer **vol;
	int nvol = attach_written_buffers(c, &vol);
	int lo = s->block_index < s->other_index ? s->block_index : s->other_index;
	int hi = s->block_index < s->other_index ? s->other_index : s->block_index;
	for (int i = lo + 1; i < hi; i++)
		an_collect_accesses(c->arena, s->seq->u.seq.items[i], 0, NULL, NULL, nvol, vol, out);
	an_name_instance(c->arena, out, "_between");
}

Obligation *attach_base(RwCtx *c, const AttachSite *s, const char *kind, const char *statement,
			Expr *goal, Span origin)
{
	Arena *a = c->arena;
	Obligation *o = obligation_new(a, kind, statement, 0, NULL, 0, NULL, goal, origin);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, &s->loop);
	const Stmt *l = s->loop.stmt;
	obligation_add_var(a, o, l->u.loop.var);
	obligation_add_hyp(a, o, an_loop_range(a, l, ir_varref(a, l->u.loop.var, (Span){0})));
	return o;
}

Obligation *attach_with_group(RwCtx *c, const Obligation *base, const OrderGroup *g)
{
	Obligation *o = obligation_new(c->arena, base->kind, base->statement, base->nvars,
				       base->vars, base->nhyps, base->hyps, base->goal, base->origin);
	o->rewrite = base->rewrite;
	for (int i = 0; i < g->nvars; i++)
		obligation_add_var(c->arena, o, g->vars[i]);
	for (int i = 0; i < g->nhyps; i++)
		obligation_add_hyp(c->arena, o, g->hyps[i]);
	return o;
}

void attach_filter(Arena *a, const AccessList *in, bool want_writes, AccessList *out)
{
	memset(out, 0, sizeof *out);
	out->items = arena_alloc(a, sizeof(Access) * (size_t)(in->n + 1));
	for (int i = 0; i < in->n; i++)
		if (in->items[i].is_write == want_writes)
			out->items[out->n++] = in->items[i];
	out->cap = in->n + 1;
	out->nvars = in->nvars;
	out->vars = in->vars;
	out->nhyps = in->nhyps;
	out->hyps = in->hyps;
}

/* ---------- small walkers ---------- */

int attach_loop_index(Stmt *const *loops, int nloops, const Expr *e)
{
	if (e->kind != EX_VAR)
		return -1;
	for (int k = 0; k < nloops; k++)
		if (loops[k]->u.loop.var == e->u.var)
			return k;
	return -1;
}

bool attach_match_index(Arena *a, Stmt *const *loops, int nloops, Expr *idx,
			bool (*offset_ok)(const Expr *offset, void *ud), void *ud, int *k,
			Expr **offset)
{
	if ((*k = attach_loop_index(loops, nloops, idx)) >= 0) {
		*offset = ir_int(a, 0, idx->dtype, (Span){0});
		return true;
	}
	if (idx->kind != EX_BIN || (idx->u.bin.op != OP_ADD && idx->u.bin.op != OP_SUB))
		return false;
	Expr *x = idx->u.bin.a, *y = idx->u.bin.b;
	if (idx->u.bin.op == OP_ADD && attach_loop_index(loops, nloops, x) < 0) {
		x = idx->u.bin.b;
		y = idx->u.bin.a;
	}
	if ((*k = attach_loop_index(loops, nloops, x)) < 0 || !offset_ok(y, ud))
		return false;
	*offset = idx->u.bin.op == OP_ADD ? y : ir_neg(a, y, (Span){0});
	return true;
}

bool attach_stmt_writes(const Stmt *s, const Buffer *buf, const Stmt **where)
{
	const Stmt *store = an_first_store(s, buf);
	if (store)
		*where = store;
	return store != NULL;
}

/* ---------- overflow of generated arithmetic ---------- */

/* Integers in proofs wrap like the program, so "e fits its dtype" must
 * be asked of the exact result: the node recomputed in int64 from its
 * (wrapped) operands, compared with the dtype's range. int64 nodes cannot
 * be widened and are not checked (their values would need 2^63 cells). */
static Expr *fits(Arena *a, const Expr *e)
{
	if (!dtype_is_int(e->dtype) || dtype_bits(e->dtype) >= 64)
		return NULL;
	Expr *exact;
	if (e->kind == EX_NEG) {
		exact = ir_neg(a, ir_cast(a, DT_INT64, e->u.un.a, (Span){0}), (Span){0});
	} else {
		exact = ir_bin(a, e->u.bin.op, ir_cast(a, DT_INT64, e->u.bin.a, (Span){0}),
			       ir_cast(a, DT_INT64, e->u.bin.b, (Span){0}), (Span){0});
		exact->dtype = DT_INT64;
	}
	int64_t hi = an_dtype_max(e->dtype);
	int64_t lo = dtype_is_signed(e->dtype) ? -hi - 1 : 0;
	return ir_and(a, ir_bin(a, OP_LE, ir_int(a, lo, DT_INT64, (Span){0}), exact, (Span){0}),
		      ir_bin(a, OP_LE, exact, ir_int(a, hi, DT_INT64, (Span){0}), (Span){0}));
}

Expr *attach_no_overflow(Arena *a, const Expr *e)
{
	Expr *r = NULL;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF: case EX_LOAD:
		return NULL;
	case EX_BIN:
		r = ir_and(a, attach_no_overflow(a, e->u.bin.a), attach_no_overflow(a, e->u.bin.b));
		if (e->u.bin.op == OP_ADD || e->u.bin.op == OP_SUB || e->u.bin.op == OP_MUL)
			r = ir_and(a, r, fits(a, e));
		return r;
	case EX_NEG:
		return ir_and(a, attach_no_overflow(a, e->u.un.a), fits(a, e));
	case EX_NOT:
	case EX_CAST:
		return attach_no_overflow(a, e->u.un.a);
	case EX_SELECT: {
		/* only the picked arm is evaluated: each arm must fit where the
		 * condition picks it */
		Expr *x = attach_no_overflow(a, e->u.sel.a), *y = attach_no_overflow(a, e->u.sel.b);
		if (x || y) {
			r = ir_select(a, e->u.sel.cond, x ? x : ir_bool(a, true), y ? y : ir_bool(a, true),
				      (Span){0});
			r->dtype = DT_BOOL;
		}
		return ir_and(a, attach_no_overflow(a, e->u.sel.cond), r);
	}
	case EX_LET:
		return ir_and(a, attach_no_overflow(a, e->u.let.value), attach_no_overflow(a, e->u.let.body));
	case EX_OPAQUE: /* its arguments; its own value is unknown, never wrapped */
		for (int i = 0; i < e->u.opq.nargs; i++)
			r = ir_and(a, r, attach_no_overflow(a, e->u.opq.args[i]));
		return r;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			r = ir_and(a, r, attach_no_overflow(a, e->u.call.args[i]));
		/* integer abs overflows (wraps) only at the dtype's minimum */
		if (e->u.call.fn == MF_ABS && dtype_is_int(e->dtype) && dtype_is_signed(e->dtype)) {
			int64_t lo = -an_dtype_max(e->dtype) - 1;
			r = ir_and(a, r, ir_bin(a, OP_NE, e->u.call.args[0],
						ir_int(a, lo, e->dtype, (Span){0}), (Span){0}));
		}
		return r;
	case EX_COUNT:
		break;
	}
	abort();
}

/* no_overflow: the new loop bounds, computed in the loop variable's
 * dtype, do not overflow: every sum, difference and product in lo_k and
 * ext_k, and lo_k + ext_k (the loop runs its variable up to it), fits. */
void attach_bounds_overflow(RwCtx *c, const AttachSite *s, int n, Stmt *const *loops,
			    Expr *const *lo, Expr *const *ext, const char *what,
			    const char *kind, Span origin)
{
	Arena *a = c->arena;
	Expr *goal = NULL;
	for (int k = 0; k < n; k++) {
		goal = ir_and(a, goal, attach_no_overflow(a, lo[k]));
		goal = ir_and(a, goal, attach_no_overflow(a, ext[k]));
		Expr *end = ir_add(a, lo[k], ext[k]);
		end->dtype = loops[k]->u.loop.var->dtype;
		goal = ir_and(a, goal, attach_no_overflow(a, end));
	}
	if (!goal)
		return;
	char *stmt = arena_printf(a, "the loop bounds of block \"%s\" in an iteration of %s stay within their dtype",
				  what, s->loop.stmt->u.loop.var->name);
	oblist_push(a, &c->obs, attach_base(c, s, kind, stmt, goal, origin));
}

/* ---------- inverting an index over a box ---------- */

/* Bounds of v for which e (an index) lies in [L, H]:
 * *vlo, *vhi (inclusive), both NULL when e constrains v nowhere (a
 * modulo whose whole period is in range). The other variables of e range
 * over env (outer nest loops fixed, inner ones relaxed). Over-approximate
 * at worst: the obligations decide. false when e has no rule. */
bool attach_invert_index(RgEnv *env, Expr *e, const Var *v, Expr *L, Expr *H, Expr **vlo,
			 Expr **vhi)
{
	Arena *a = env->a;
	if (e->kind == EX_VAR && e->u.var == v) {
		*vlo = L;
		*vhi = H;
		return true;
	}
	if (e->kind != EX_BIN)
		return false;
	Expr *x = e->u.bin.a, *y = e->u.bin.b, *lo, *hi;
	bool in_x = ir_expr_uses_var(x, v), in_y = ir_expr_uses_var(y, v);
	if (in_x == in_y)
		return false;
	int64_t kc;
	switch (e->u.bin.op) {
	case OP_ADD:
		if (!rg_sym_bounds(env, in_x ? y : x, &lo, &hi))
			return false;
		return attach_invert_index(env, in_x ? x : y, v, ir_sub(a, L, hi), ir_sub(a, H, lo), vlo, vhi);
	case OP_SUB:
		if (!rg_sym_bounds(env, in_x ? y : x, &lo, &hi))
			return false;
		if (in_x)
			return attach_invert_index(env, x, v, ir_add(a, L, lo), ir_add(a, H, hi), vlo, vhi);
		return attach_invert_index(env, y, v, ir_sub(a, lo, H), ir_sub(a, hi, L), vlo, vhi);
	case OP_MUL: {
		if (!an_const_int(in_x ? y : x, &kc) || kc <= 0)
			return false;
		Expr *kk = ir_int(a, kc, e->dtype, (Span){0});
		Expr *up = ir_add(a, L, ir_int(a, kc - 1, e->dtype, (Span){0}));
		return attach_invert_index(env, in_x ? x : y, v, ir_bin(a, OP_FLOORDIV, up, kk, (Span){0}),
				    ir_bin(a, OP_FLOORDIV, H, kk, (Span){0}), vlo, vhi);
	}
	case OP_FLOORDIV: {
		if (!in_x || !an_const_int(y, &kc) || kc <= 0)
			return false;
		Expr *kk = ir_int(a, kc, e->dtype, (Span){0});
		return attach_invert_index(env, x, v, ir_mul(a, L, kk),
				    ir_add(a, ir_mul(a, H, kk), ir_int(a, kc - 1, e->dtype, (Span){0})),
				    vlo, vhi);
	}
	case OP_FLOORMOD:
		if (!in_x || !an_const_int(y, &kc) || kc <= 0 ||
		    !rg_equal(env, L, ir_int(a, 0, e->dtype, (Span){0})) ||
		    !rg_equal(env, H, ir_int(a, kc - 1, e->dtype, (Span){0})))
			return false;
		*vlo = *vhi = NULL;
		return true;
	case OP_DIV: case OP_MIN: case OP_MAX: case OP_EQ: case OP_NE: case OP_LT:
	case OP_LE: case OP_GT: case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	return false;
}

/* attach_bounds_overflow for loops whose ranges may use the outer ones
 * among them: the bounds of loop i are computed only inside an iteration
 * of loops 0..i-1, so those loops' new ranges are its hypotheses (and no
 * others: a hypothesis on loop i itself would assume it runs); `guard`
 * (or NULL) holds where the loops run. One obligation per loop. */
void attach_nested_bounds_overflow(RwCtx *c, const AttachSite *s, int n, Stmt *const *loops,
				   Expr *const *lo, Expr *const *ext, Expr *guard,
				   const char *block, const char *kind, Span origin)
{
	Arena *a = c->arena;
	for (int i = 0; i < n; i++) {
		Expr *end = ir_add(a, lo[i], ext[i]);
		end->dtype = loops[i]->u.loop.var->dtype;
		Expr *goal = ir_and(a, attach_no_overflow(a, lo[i]),
				    ir_and(a, attach_no_overflow(a, ext[i]), attach_no_overflow(a, end)));
		if (!goal)
			continue;
		char *stmt = arena_printf(a, "the bounds of loop '%s' of block \"%s\" in an iteration of %s stay within their dtype",
					  loops[i]->u.loop.var->name, block, s->loop.stmt->u.loop.var->name);
		Obligation *o = attach_base(c, s, kind, stmt, goal, origin);
		if (guard)
			obligation_add_hyp(a, o, guard);
		for (int j = 0; j < i; j++) {
			Expr *r = ir_varref(a, loops[j]->u.loop.var, (Span){0});
			obligation_add_var(a, o, loops[j]->u.loop.var);
			obligation_add_hyp(a, o, ir_and(a, ir_bin(a, OP_LE, lo[j], r, (Span){0}),
							ir_bin(a, OP_LT, r, ir_add(a, lo[j], ext[j]), (Span){0})));
		}
		oblist_push(a, &c->obs, o);
	}
}
