/* rewrites/reverse_compute_at.c — reverse_compute_at(block, loop): the
 * consumer block moves to the end of the body of a loop of an earlier
 * statement (its producer) and, per iteration, runs the instances whose
 * key read the iteration wrote (bound inference on the producer's stores).
 * Each consumer instance c is assigned the iteration phi(c) derived from
 * the write box; obligations (proofs/compute_at.md): reverse_compute_at.
 * within, .once, .all, .commute. The intermediate buffer keeps its shape. */
#include "rewrites/attach.h"
#include "rewrites/block_nest.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/print.h"

/* `with T.block(name): for c1..cm: S` with a key read B[c_s(d) + k_d]. */
typedef struct Consumer {
	Stmt *block;
	int nloops;
	Stmt *loops[AN_MAX_DEPTH];
	Stmt *body;
	Buffer *buf;
	const Expr *key;
	int loop_of_dim[AN_MAX_DEPTH];
	int dim_of_loop[AN_MAX_DEPTH];
	Expr *offset[AN_MAX_DEPTH];
	bool general; /* the key read is indexed by expressions of the nest
			 loops (general_index), not one loop per dimension */
} Consumer;

typedef struct RevPlan {
	Expr *lo[AN_MAX_DEPTH], *ext[AN_MAX_DEPTH], *end[AN_MAX_DEPTH]; /* per nest loop */
	Expr *phi[AN_MAX_DEPTH];  /* per path loop, over the nest variables */
	bool last[AN_MAX_DEPTH];  /* path loop not in the write box: last iteration */
	Expr *guard;		  /* path loops at their last iteration, or NULL */
} RevPlan;

static Stmt *skip_single_seq(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

/* Every variable of e is bound outside the consumer block (scalar
 * parameters, loops and lets around the block). */
static bool fixed_expr(const Func *f, const StmtCtx *ctx, const Expr *e)
{
	switch (e->kind) {
	case EX_INT:
		return true;
	case EX_VAR:
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i].var == e->u.var)
				return true;
		for (int i = 0; i < ctx->nloops; i++)
			if (ctx->loops[i]->u.loop.var == e->u.var)
				return true;
		for (int i = 0; i < ctx->nlets; i++)
			if (ctx->lets[i]->u.let.var == e->u.var)
				return true;
		return false;
	case EX_BIN:
		return fixed_expr(f, ctx, e->u.bin.a) && fixed_expr(f, ctx, e->u.bin.b);
	case EX_NEG:
		return fixed_expr(f, ctx, e->u.un.a);
	case EX_FLOAT: case EX_NOT: case EX_CAST: case EX_SELECT: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE:
		return false;
	case EX_COUNT:
		break;
	}
	abort();
}

typedef struct FixedAt {
	const Func *f;
	const StmtCtx *ctx;
} FixedAt;

static bool fixed_offset(const Expr *y, void *ud)
{
	const FixedAt *at = ud;
	return fixed_expr(at->f, at->ctx, y);
}

/* idx = c + offset with offset fixed */
static bool match_key_index(RwCtx *c, const StmtCtx *ctx, const Consumer *k, Expr *idx, int *loop,
			    Expr **offset)
{
	FixedAt at = {c->func, ctx};
	return attach_match_index(c->arena, k->loops, k->nloops, idx, fixed_offset, &at, loop, offset);
}

typedef struct KeySearch {
	RwCtx *c;
	const StmtCtx *ctx;
	Consumer *k;
	const Stmt *producer_body;
	bool found;
	int64_t best[AN_MAX_DEPTH];
	bool best_const;
	const Expr *general; /* the first read with general indices */
} KeySearch;

/* An index the plan can invert (attach_invert_index): the nest loops and fixed
 * expressions under +, -, * by a positive constant, // and % by one. */
static bool general_index(const KeySearch *ks, const Expr *e)
{
	int64_t k;
	for (int i = 0; i < ks->k->nloops; i++)
		if (e->kind == EX_VAR && e->u.var == ks->k->loops[i]->u.loop.var)
			return true;
	if (fixed_expr(ks->c->func, ks->ctx, e))
		return true;
	if (e->kind != EX_BIN || !dtype_is_int(e->dtype))
		return false;
	switch (e->u.bin.op) {
	case OP_ADD: case OP_SUB:
		return general_index(ks, e->u.bin.a) && general_index(ks, e->u.bin.b);
	case OP_MUL:
		if (an_const_int(e->u.bin.a, &k) && k > 0)
			return general_index(ks, e->u.bin.b);
		return an_const_int(e->u.bin.b, &k) && k > 0 && general_index(ks, e->u.bin.a);
	case OP_FLOORDIV: case OP_FLOORMOD:
		return an_const_int(e->u.bin.b, &k) && k > 0 && general_index(ks, e->u.bin.a);
	case OP_SHL: case OP_SHR: case OP_DIV: case OP_MIN: case OP_MAX: case OP_EQ: case OP_NE: case OP_LT:
	case OP_LE: case OP_GT: case OP_GE: case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	return false;
}

/* A candidate key read: a read of a buffer the attach loop's body writes,
 * indexed by distinct nest loops plus fixed offsets. Among several, the
 * one with the largest constant offsets: the last cell produced. */
static void consider_key(KeySearch *ks, const Expr *e)
{
	Consumer *k = ks->k;
	const Stmt *where;
	Buffer *b = e->u.load.buf;
	if (b->ndim > AN_MAX_DEPTH || !attach_stmt_writes(ks->producer_body, b, &where))
		return;
	if (ks->found && b != k->buf)
		return;
	int lod[AN_MAX_DEPTH], dol[AN_MAX_DEPTH];
	Expr *off[AN_MAX_DEPTH];
	for (int i = 0; i < k->nloops; i++)
		dol[i] = -1;
	int64_t val[AN_MAX_DEPTH];
	bool all_const = true;
	if (!ks->general) {
		bool ok = b->ndim > 0;
		for (int d = 0; d < b->ndim && ok; d++)
			ok = general_index(ks, e->u.load.idx[d]);
		if (ok)
			ks->general = e;
	}
	for (int d = 0; d < b->ndim; d++) {
		int l;
		if (!match_key_index(ks->c, ks->ctx, k, e->u.load.idx[d], &l, &off[d]) || dol[l] >= 0)
			return;
		lod[d] = l;
		dol[l] = d;
		all_const &= an_const_int(an_fold(ks->c->arena, off[d]), &val[d]);
	}
	if (ks->found) {
		if (!all_const || !ks->best_const)
			return;
		int cmp = 0;
		for (int d = 0; d < b->ndim && !cmp; d++)
			cmp = val[d] > ks->best[d] ? 1 : val[d] < ks->best[d] ? -1 : 0;
		if (cmp <= 0)
			return;
	}
	ks->found = true;
	ks->best_const = all_const;
	k->buf = b;
	k->key = e;
	for (int d = 0; d < b->ndim; d++) {
		k->loop_of_dim[d] = lod[d];
		k->offset[d] = off[d];
		ks->best[d] = all_const ? val[d] : 0;
	}
	for (int i = 0; i < k->nloops; i++)
		k->dim_of_loop[i] = dol[i];
}

static void key_expr(KeySearch *ks, const Expr *e)
{
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return;
	case EX_LOAD:
		for (int i = 0; i < e->u.load.nidx; i++)
			key_expr(ks, e->u.load.idx[i]);
		consider_key(ks, e);
		return;
	case EX_BIN:
		key_expr(ks, e->u.bin.a);
		key_expr(ks, e->u.bin.b);
		return;
	case EX_NOT: case EX_NEG: case EX_CAST:
		key_expr(ks, e->u.un.a);
		return;
	case EX_SELECT:
		key_expr(ks, e->u.sel.cond);
		key_expr(ks, e->u.sel.a);
		key_expr(ks, e->u.sel.b);
		return;
	case EX_LET:
		key_expr(ks, e->u.let.value);
		key_expr(ks, e->u.let.body);
		return;
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			key_expr(ks, e->u.call.args[i]);
		return;
	case EX_OPAQUE: /* reads unknown cells: no key; refused as a whole */
		ks->c->reject_after = arena_printf(ks->c->arena, "opaque access: T.%s at line %d "
						   "may read any cell", e->u.opq.name, e->span.line);
		return;
	case EX_COUNT:
		break;
	}
	abort();
}

static void key_stmt(KeySearch *ks, const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			key_stmt(ks, s->u.seq.items[i]);
		return;
	case ST_FOR:
		key_expr(ks, s->u.loop.min);
		key_expr(ks, s->u.loop.extent);
		key_stmt(ks, s->u.loop.body);
		return;
	case ST_IF:
		key_expr(ks, s->u.cond.cond);
		key_stmt(ks, s->u.cond.then_s);
		if (s->u.cond.else_s)
			key_stmt(ks, s->u.cond.else_s);
		return;
	case ST_STORE:
		for (int i = 0; i < s->u.store.nidx; i++)
			key_expr(ks, s->u.store.idx[i]);
		key_expr(ks, s->u.store.value);
		return;
	case ST_ASSUME: case ST_EVAL:
		key_expr(ks, s->u.expr);
		return;
	case ST_ALLOC: key_stmt(ks, s->u.alloc.body); return;
	case ST_BLOCK: key_stmt(ks, s->u.block.body); return;
	case ST_LET:
		key_expr(ks, s->u.let.value);
		key_stmt(ks, s->u.let.body);
		return;
	case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

static RwStatus parse_consumer(RwCtx *c, const AttachSite *s, Consumer *k)
{
	memset(k, 0, sizeof *k);
	Stmt *block = s->block.stmt;
	const char *name = block->u.block.name;
	k->block = block;
	Stmt *x = skip_single_seq(block->u.block.body);
	while (x->kind == ST_FOR && k->nloops < AN_MAX_DEPTH) {
		k->loops[k->nloops++] = x;
		x = skip_single_seq(x->u.loop.body);
	}
	k->body = x;
	if (k->nloops == 0)
		return rw_fail(c, RW_UNSUPPORTED, block->span,
			       "the consumer block \"%s\" must start with a loop nest", name);
	for (int i = 0; i < k->nloops; i++) {
		const Stmt *l = k->loops[i];
		for (int j = 0; j < k->nloops; j++)
			if (ir_expr_uses_var(l->u.loop.min, k->loops[j]->u.loop.var) ||
			    ir_expr_uses_var(l->u.loop.extent, k->loops[j]->u.loop.var))
				return rw_fail(c, RW_UNSUPPORTED, l->span,
					       "the range of loop '%s' of block \"%s\" depends on another loop of the block",
					       l->u.loop.var->name, name);
		if (an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "the range of loop '%s' of block \"%s\" reads a buffer",
				       l->u.loop.var->name, name);
	}
	KeySearch ks;
	memset(&ks, 0, sizeof ks);
	ks.c = c;
	ks.ctx = &s->block;
	ks.k = k;
	ks.producer_body = s->loop.stmt->u.loop.body;
	key_stmt(&ks, k->body);
	if (!ks.found && ks.general) {
		/* no read indexed by one loop per dimension: the first read
		 * whose indices the plan can invert */
		k->general = true;
		k->key = ks.general;
		k->buf = ks.general->u.load.buf;
		for (int d = 0; d < k->buf->ndim; d++)
			k->loop_of_dim[d] = -1;
		for (int i = 0; i < k->nloops; i++)
			k->dim_of_loop[i] = -1;
		return RW_OK;
	}
	if (!ks.found)
		return rw_fail(c, RW_UNSUPPORTED, block->span,
			       "block \"%s\" has no read of a buffer written in loop '%s' indexed by its own loop variables plus offsets, or by sums, constant multiples, // and %% of them",
			       name, s->loop.stmt->u.loop.var->name);
	return RW_OK;
}

static void push_fixed_env(const AttachSite *s, RgEnv *env)
{
	for (int k = 0; k < s->loop.nloops; k++) {
		Stmt *l = s->loop.loops[k];
		rg_push_loop(env, l->u.loop.var, l->u.loop.min, l->u.loop.extent, false);
	}
	for (int k = 0; k < s->loop.nlets; k++)
		rg_push_let(env, s->loop.lets[k]->u.let.var, s->loop.lets[k]->u.let.value, false);
	Stmt *l = s->loop.stmt;
	rg_push_loop(env, l->u.loop.var, l->u.loop.min, l->u.loop.extent, false);
}

/* ---------- the plan ---------- */

/* The new range of each nest loop: for every dimension of the key read
 * whose index uses it, the values that keep the index in the write box,
 * with the outer nest loops fixed at their new ranges (so an inner range
 * may depend on them) and the inner ones relaxed over their old ones. */
static bool plan_general_ranges(RgEnv *env, const Consumer *k, const RgBox *w, RevPlan *pl)
{
	Arena *a = env->a;
	int nv = env->nvars, ng = env->nguards;
	bool ok = true;
	for (int i = 0; i < k->nloops && ok; i++) {
		const Stmt *l = k->loops[i];
		Var *v = l->u.loop.var;
		int mark = env->nvars, gmark = env->nguards;
		for (int j = i + 1; j < k->nloops; j++)
			rg_push_loop(env, k->loops[j]->u.loop.var, k->loops[j]->u.loop.min,
				     k->loops[j]->u.loop.extent, true);
		Expr *lo = l->u.loop.min;
		Expr *end = rg_simplify(env, ir_add(a, l->u.loop.min, l->u.loop.extent));
		for (int d = 0; d < k->buf->ndim && ok; d++) {
			Expr *idx = k->key->u.load.idx[d], *vlo, *vhi;
			if (!w->lo[d] || !w->hi[d] || !ir_expr_uses_var(idx, v))
				continue;
			ok = attach_invert_index(env, idx, v, w->lo[d], w->hi[d], &vlo, &vhi);
			if (!ok || !vlo)
				continue;
			lo = rg_max(env, rg_simplify(env, vlo), lo);
			end = rg_min(env, rg_simplify(env, ir_add(a, vhi, ir_int(a, 1, vhi->dtype, (Span){0}))), end);
		}
		rg_pop(env, mark, gmark);
		pl->lo[i] = lo;
		pl->end[i] = end;
		pl->ext[i] = rg_simplify(env, ir_sub(a, end, lo));
		rg_push_loop(env, v, pl->lo[i], pl->ext[i], false);
	}
	rg_pop(env, nv, ng);
	return ok;
}

static void plan_ranges(RgEnv *env, const Consumer *k, const RgBox *w, RevPlan *pl)
{
	Arena *a = env->a;
	for (int i = 0; i < k->nloops; i++) {
		const Stmt *l = k->loops[i];
		Expr *cmin = l->u.loop.min, *cend = rg_simplify(env, ir_add(a, l->u.loop.min, l->u.loop.extent));
		Expr *lo = cmin, *end = cend;
		int d = k->dim_of_loop[i];
		if (d >= 0 && w->lo[d] && w->hi[d]) {
			lo = rg_max(env, rg_simplify(env, ir_sub(a, w->lo[d], k->offset[d])), cmin);
			end = rg_simplify(env, ir_add(a, ir_sub(a, w->hi[d], k->offset[d]),
						      ir_int(a, 1, w->hi[d]->dtype, (Span){0})));
			end = rg_min(env, end, cend);
		}
		pl->lo[i] = lo;
		pl->end[i] = end;
		pl->ext[i] = rg_simplify(env, ir_sub(a, end, lo));
	}
}

/* phi: the path iteration that writes the key cell x. From the write
 * box's lower bounds lo_d = sum a_v * v + rest_d (mixed radix, largest
 * coefficient outermost): v1 = (x_d - rest_d) // a1, then
 * vi = ((x_d - rest_d) % a(i-1)) // ai. A path loop absent from every
 * lower bound runs the consumer at its last iteration. */
static RwStatus plan_phi(RwCtx *c, RgEnv *env, const AttachSite *s, const Consumer *k,
			 const RgBox *w, RevPlan *pl)
{
	Arena *a = c->arena;
	int np = s->npath;
	Var *pv[AN_MAX_DEPTH];
	Expr *pref[AN_MAX_DEPTH];
	for (int i = 0; i < np; i++) {
		pv[i] = s->path[i]->u.loop.var;
		pref[i] = ir_varref(a, pv[i], (Span){0});
	}
	int64_t coef[AN_MAX_DEPTH][AN_MAX_DEPTH];
	Expr *rest[AN_MAX_DEPTH];
	int owner[AN_MAX_DEPTH];
	for (int i = 0; i < np; i++)
		owner[i] = -1;
	for (int d = 0; d < k->buf->ndim; d++) {
		if (!w->lo[d]) {
			rest[d] = NULL;
			continue;
		}
		if (!rg_linear(env, w->lo[d], np, pv, coef[d], &rest[d]))
			return rw_fail(c, RW_UNSUPPORTED, s->loop.stmt->span,
				       "the cells of %s written in one iteration of '%s' do not start at a linear function of the loops on the attach path",
				       k->buf->name, s->loop.stmt->u.loop.var->name);
		for (int i = 0; i < np; i++) {
			if (!coef[d][i])
				continue;
			if (owner[i] >= 0 || coef[d][i] < 0)
				return rw_fail(c, RW_UNSUPPORTED, s->path[i]->span,
					       "loop '%s' moves the cells of %s written per iteration in more than one dimension or backwards",
					       pv[i]->name, k->buf->name);
			owner[i] = d;
		}
	}
	for (int d = 0; d < k->buf->ndim; d++) {
		if (!rest[d])
			continue;
		int loop = k->loop_of_dim[d];
		Expr *x = k->general ? k->key->u.load.idx[d]
				     : ir_add(a, ir_varref(a, k->loops[loop]->u.loop.var, (Span){0}), k->offset[d]);
		Expr *t = ir_sub(a, x, rest[d]);
		int64_t prev = 0;
		/* this dimension's path loops by decreasing coefficient */
		bool used[AN_MAX_DEPTH] = {false};
		for (;;) {
			int best = -1;
			for (int i = 0; i < np; i++)
				if (owner[i] == d && !used[i] && (best < 0 || coef[d][i] > coef[d][best]))
					best = i;
			if (best < 0)
				break;
			used[best] = true;
			int64_t ai = coef[d][best];
			Expr *q = prev ? ir_bin(a, OP_FLOORMOD, t, ir_int(a, prev, t->dtype, (Span){0}), (Span){0}) : t;
			pl->phi[best] = rg_simplify(env, ir_bin(a, OP_FLOORDIV, q, ir_int(a, ai, t->dtype, (Span){0}), (Span){0}));
			prev = ai;
		}
	}
	for (int i = 0; i < np; i++) {
		if (owner[i] >= 0)
			continue;
		const Stmt *l = s->path[i];
		Expr *lastv = ir_sub(a, ir_add(a, l->u.loop.min, l->u.loop.extent),
				     ir_int(a, 1, pv[i]->dtype, (Span){0}));
		pl->last[i] = true;
		pl->guard = ir_and(a, pl->guard, ir_bin(a, OP_EQ, pref[i], an_fold(a, lastv), (Span){0}));
		pl->phi[i] = ir_subst_expr(a, an_fold(a, lastv), i, pv, pl->phi);
	}
	return RW_OK;
}

/* ---------- obligations ---------- */

static Expr *in_box(Arena *a, const Consumer *k, const RevPlan *pl)
{
	Expr *r = NULL;
	for (int i = 0; i < k->nloops; i++) {
		Expr *v = ir_varref(a, k->loops[i]->u.loop.var, (Span){0});
		r = ir_and(a, r, ir_and(a, ir_bin(a, OP_LE, pl->lo[i], v, (Span){0}),
					ir_bin(a, OP_LT, v, pl->end[i], (Span){0})));
	}
	return r;
}

static Expr *in_domain(Arena *a, const Consumer *k)
{
	Expr *r = NULL;
	for (int i = 0; i < k->nloops; i++)
		r = ir_and(a, r, an_loop_range(a, k->loops[i], ir_varref(a, k->loops[i]->u.loop.var, (Span){0})));
	return r;
}

static Obligation *in_iteration(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl,
				const char *kind, const char *stmt, Expr *goal)
{
	Arena *a = c->arena;
	Obligation *o = attach_base(c, s, kind, stmt, goal, k->block->span);
	if (pl->guard)
		obligation_add_hyp(a, o, pl->guard);
	for (int i = 0; i < k->nloops; i++)
		obligation_add_var(a, o, k->loops[i]->u.loop.var);
	obligation_add_hyp(a, o, in_box(a, k, pl));
	obligation_add_related(a, o, k->key->span);
	return o;
}

/* all: every consumer instance c of the original is assigned a path
 * iteration phi(c) that runs (ranges and path conditions) and whose box
 * holds c. */
static RwStatus all_obligation(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl)
{
	Arena *a = c->arena;
	int np = s->npath;
	Var *pv[AN_MAX_DEPTH];
	for (int i = 0; i < np; i++)
		pv[i] = s->path[i]->u.loop.var;
	Expr *goal = NULL;
	for (int i = 0; i < np; i++) {
		const Stmt *l = s->path[i];
		Expr *lo = ir_subst_expr(a, l->u.loop.min, np, pv, (Expr **)pl->phi);
		Expr *ext = ir_subst_expr(a, l->u.loop.extent, np, pv, (Expr **)pl->phi);
		goal = ir_and(a, goal, ir_and(a, ir_bin(a, OP_LE, lo, pl->phi[i], (Span){0}),
					      ir_bin(a, OP_LT, pl->phi[i], ir_add(a, lo, ext), (Span){0})));
	}
	for (int i = s->block.nconds; i < s->loop.nconds; i++) {
		if (an_expr_has_load(s->loop.conds[i]))
			return rw_fail(c, RW_UNSUPPORTED, s->loop.stmt->span,
				       "a condition on the attach path reads a buffer");
		goal = ir_and(a, goal, ir_subst_expr(a, s->loop.conds[i], np, pv, (Expr **)pl->phi));
	}
	goal = ir_and(a, goal, ir_subst_expr(a, in_box(a, k, pl), np, pv, (Expr **)pl->phi));
	char *stmt = arena_printf(a, "every instance of block \"%s\" runs in the iteration of %s that writes its key read",
				  k->block->u.block.name, s->loop.stmt->u.loop.var->name);
	Obligation *o = obligation_new(a, "reverse_compute_at.all", stmt, 0, NULL, 0, NULL, goal,
				       k->block->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, &s->block);
	for (int i = 0; i < k->nloops; i++)
		obligation_add_var(a, o, k->loops[i]->u.loop.var);
	obligation_add_hyp(a, o, in_domain(a, k));
	obligation_add_related(a, o, k->key->span);
	oblist_push(a, &c->obs, o);
	return RW_OK;
}

static void placement_obligations(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl)
{
	Arena *a = c->arena;
	const char *name = k->block->u.block.name, *lv = s->loop.stmt->u.loop.var->name;
	/* within: instances run per iteration are instances of the original */
	oblist_push(a, &c->obs,
		    in_iteration(c, s, k, pl, "reverse_compute_at.within",
				 arena_printf(a, "every instance of block \"%s\" run in an iteration of %s is an instance of the original block", name, lv),
				 in_domain(a, k)));
	/* once: an instance runs only in its own iteration phi(c) */
	Expr *goal = NULL;
	for (int i = 0; i < s->npath; i++)
		if (!pl->last[i])
			goal = ir_and(a, goal, ir_bin(a, OP_EQ, ir_varref(a, s->path[i]->u.loop.var, (Span){0}),
						      pl->phi[i], (Span){0}));
	if (goal)
		oblist_push(a, &c->obs,
			    in_iteration(c, s, k, pl, "reverse_compute_at.once",
					 arena_printf(a, "each instance of block \"%s\" runs in one iteration of %s only", name, lv),
					 goal));
}

/* commute: the moved instances commute with everything they now run
 * before: the producer's later instances, the statements between, and
 * the consumer's own instances whose order changes. */
static void commute_obligations(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl,
				Stmt *moved)
{
	Arena *a = c->arena;
	const char *kind = "reverse_compute_at.commute";
	Buffer **vol;
	int nvol = attach_written_buffers(c, &vol);
	AccessList mine, between;
	memset(&mine, 0, sizeof mine);
	memset(&between, 0, sizeof between);
	an_collect_accesses(c->arena, moved, 0, NULL, NULL, nvol, vol, &mine);
	an_name_instance(a, &mine, "");
	char *what = arena_printf(a, "block \"%s\" moved into %s commutes with what now runs after it",
				  k->block->u.block.name, s->loop.stmt->u.loop.var->name);
	Obligation *base = attach_base(c, s, kind, what, ir_bool(a, true), k->block->span);
	if (pl->guard)
		obligation_add_hyp(a, base, pl->guard);
	OrderGroup *groups;
	int n = attach_order_groups(c, s, ORDER_AFTER_END, &groups);
	for (int i = 0; i < n; i++)
		rw_commute_obligations(c, kind, what, attach_with_group(c, base, &groups[i]), &mine,
				       &groups[i].acc, true);
	attach_between_accesses(c, s, &between);
	rw_commute_obligations(c, kind, what, base, &mine, &between, true);

	/* instances c < c' (nest order) with phi(c') < phi(c) swap */
	int m = k->nloops, np = s->npath;
	Var *nv[AN_MAX_DEPTH], *v1[AN_MAX_DEPTH], *v2[AN_MAX_DEPTH], *pv[AN_MAX_DEPTH];
	Expr *r1[AN_MAX_DEPTH], *r2[AN_MAX_DEPTH], *phi1[AN_MAX_DEPTH], *phi2[AN_MAX_DEPTH];
	for (int i = 0; i < np; i++)
		pv[i] = s->path[i]->u.loop.var;
	Obligation *self = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), k->block->span);
	self->rewrite = c->desc;
	rw_add_context_hyps(c, self, &s->block);
	for (int i = 0; i < m; i++) {
		nv[i] = k->loops[i]->u.loop.var;
		v1[i] = an_fresh_var(a, nv[i], "_1");
		v2[i] = an_fresh_var(a, nv[i], "_2");
		r1[i] = ir_varref(a, v1[i], (Span){0});
		r2[i] = ir_varref(a, v2[i], (Span){0});
		obligation_add_var(a, self, v1[i]);
		obligation_add_var(a, self, v2[i]);
		obligation_add_hyp(a, self, an_loop_range(a, k->loops[i], r1[i]));
		obligation_add_hyp(a, self, an_loop_range(a, k->loops[i], r2[i]));
	}
	for (int i = 0; i < np; i++) {
		phi1[i] = ir_subst_expr(a, pl->phi[i], m, nv, r1);
		phi2[i] = ir_subst_expr(a, pl->phi[i], m, nv, r2);
	}
	(void)pv;
	obligation_add_hyp(a, self, attach_lex_less(a, m, r1, r2));
	obligation_add_hyp(a, self, attach_lex_less(a, np, phi2, phi1));
	AccessList p1, p2;
	memset(&p1, 0, sizeof p1);
	memset(&p2, 0, sizeof p2);
	an_collect_accesses(c->arena, k->body, m, nv, r1, nvol, vol, &p1);
	an_collect_accesses(c->arena, k->body, m, nv, r2, nvol, vol, &p2);
	an_name_instance(a, &p1, "_1");
	an_name_instance(a, &p2, "_2");
	rw_commute_obligations(c, kind,
			       arena_printf(a, "instances of block \"%s\" whose order changes commute", k->block->u.block.name),
			       self, &p1, &p2, true);
}

/* ---------- rewrite ---------- */

static Stmt *moved_consumer(RwCtx *c, const Consumer *k, const RevPlan *pl)
{
	Arena *a = c->arena;
	Stmt *body = k->body;
	for (int i = k->nloops - 1; i >= 0; i--) {
		const Stmt *l = k->loops[i];
		ForKind kind = l->u.loop.kind == FOR_PARALLEL ? FOR_PARALLEL : FOR_SERIAL;
		body = ir_for(a, l->u.loop.var, pl->lo[i], pl->ext[i], kind, body, l->span);
	}
	Stmt *b = ir_block_with(a, k->block, body);
	return pl->guard ? ir_if(a, pl->guard, b, NULL, k->block->span) : b;
}

static char *rev_note(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl)
{
	Arena *a = c->arena;
	StrBuf b = {0};
	sb_printf(&b, "attach path: %s; instances of block \"%s\" per iteration: [", attach_path_text(a, s),
		  k->block->u.block.name);
	for (int i = 0; i < k->nloops; i++) {
		char *x = print_expr(pl->lo[i]), *y = print_expr(pl->end[i]);
		sb_printf(&b, "%s%s:%s", i ? ", " : "", x, y);
		free(x);
		free(y);
	}
	char *key = print_expr(k->key);
	sb_printf(&b, "], placed by its read %s", key);
	free(key);
	if (pl->guard)
		sb_puts(&b, " at the last iteration of the loops that do not move the written cells");
	sb_printf(&b, "; %s keeps its shape", k->buf->name);
	char *t = sb_take(&b);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

static RwStatus reverse_compute_at(RwCtx *c, const char *block, const char *loop, int index);

static char *key_text(Arena *a, const Expr *e)
{
	char *t = print_expr(e);
	char *r = arena_strdup(a, t);
	free(t);
	return r;
}

RwStatus rw_reverse_compute_at_index(RwCtx *c, const char *block, const char *loop, int index)
{
	NestWrap w;
	rw_nest_wrap(c, block, &w);
	RwStatus st = reverse_compute_at(c, block, loop, index);
	rw_nest_unwrap(c, &w);
	return st;
}

RwStatus rw_reverse_compute_at(RwCtx *c, const char *block, const char *loop)
{
	return rw_reverse_compute_at_index(c, block, loop, -1);
}

/* commute with the items of the attach loop's body from `from` on, in the
 * same iteration: they ran before the consumer and now run after it. */
static void tail_obligations(RwCtx *c, const AttachSite *s, const Consumer *k, const RevPlan *pl,
			     Stmt *moved, int from)
{
	Arena *a = c->arena;
	Stmt *body = s->loop.stmt->u.loop.body;
	int nb = body->kind == ST_SEQ ? body->u.seq.n : 1;
	if (from >= nb)
		return;
	Stmt *tail = body->kind == ST_SEQ ? ir_seq(a, nb - from, body->u.seq.items + from, body->span) : body;
	const char *kind = "reverse_compute_at.commute";
	Buffer **vol;
	int nvol = attach_written_buffers(c, &vol);
	AccessList mine, rest;
	memset(&mine, 0, sizeof mine);
	memset(&rest, 0, sizeof rest);
	an_collect_accesses(a, moved, 0, NULL, NULL, nvol, vol, &mine);
	an_name_instance(a, &mine, "");
	an_collect_accesses(a, tail, 0, NULL, NULL, nvol, vol, &rest);
	an_name_instance(a, &rest, "_next");
	char *what = arena_printf(a, "block \"%s\" inserted at index %d of loop %s commutes with the statements after it in the same iteration",
				  k->block->u.block.name, from, s->loop.stmt->u.loop.var->name);
	Obligation *base = attach_base(c, s, kind, what, ir_bool(a, true), k->block->span);
	if (pl->guard)
		obligation_add_hyp(a, base, pl->guard);
	rw_commute_obligations(c, kind, what, base, &mine, &rest, true);
}

static RwStatus reverse_compute_at(RwCtx *c, const char *block, const char *loop, int index)
{
	Arena *a = c->arena;
	AttachSite s;
	RwStatus st = attach_site(c, block, loop, false, &s);
	if (st != RW_OK)
		return st;
	Consumer k;
	if ((st = parse_consumer(c, &s, &k)) != RW_OK)
		return st;
	Stmt *l = s.loop.stmt;
	RgEnv env;
	rg_env_init(&env, a);
	push_fixed_env(&s, &env);
	RgBox w;
	rg_access_box(&env, l->u.loop.body, k.buf, true, &w);
	RevPlan pl;
	memset(&pl, 0, sizeof pl);
	if (!k.general)
		plan_ranges(&env, &k, &w, &pl);
	else if (!plan_general_ranges(&env, &k, &w, &pl))
		return rw_fail(c, RW_UNSUPPORTED, k.key->span,
			       "the instances of block \"%s\" that read the cells of %s written in one iteration of '%s' cannot be bounded from its read %s",
			       block, k.buf->name, loop, key_text(a, k.key));
	if ((st = plan_phi(c, &env, &s, &k, &w, &pl)) != RW_OK)
		return st;
	Stmt *moved = moved_consumer(c, &k, &pl);
	placement_obligations(c, &s, &k, &pl);
	if (!k.general)
		attach_bounds_overflow(c, &s, k.nloops, k.loops, pl.lo, pl.ext, block,
				       "reverse_compute_at.no_overflow", k.block->span);
	else
		attach_nested_bounds_overflow(c, &s, k.nloops, k.loops, pl.lo, pl.ext, pl.guard, block,
					      "reverse_compute_at.no_overflow", k.block->span);
	if ((st = all_obligation(c, &s, &k, &pl)) != RW_OK)
		return st;
	commute_obligations(c, &s, &k, &pl, moved);
	/* the consumer last in the loop body (or before item `index`), in a
	 * flat sequence */
	Stmt *body = l->u.loop.body;
	int nb = body->kind == ST_SEQ ? body->u.seq.n : 1;
	int at = index < 0 ? nb : index;
	if (at > nb)
		return rw_fail(c, RW_PRECONDITION, l->span,
			       "index=%d: the body of loop '%s' has %d statement%s (insertion points 0 to %d)",
			       index, loop, nb, nb == 1 ? "" : "s", nb);
	tail_obligations(c, &s, &k, &pl, moved, at);
	c->note = rev_note(c, &s, &k, &pl);
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(nb + 1));
	Stmt **src = body->kind == ST_SEQ ? body->u.seq.items : &body;
	memcpy(items, src, sizeof(Stmt *) * (size_t)at);
	items[at] = moved;
	memcpy(items + at + 1, src + at, sizeof(Stmt *) * (size_t)(nb - at));
	Stmt *new_loop = ir_for(a, l->u.loop.var, l->u.loop.min, l->u.loop.extent, l->u.loop.kind,
				ir_seq(a, nb + 1, items, l->span), l->span);
	Stmt *fbody = an_replace_at(a, c->func->body, s.loop.path, s.loop.depth, new_loop);
	fbody = an_replace_at(a, fbody, s.block.path, s.block.depth, ir_seq(a, 0, NULL, s.block.stmt->span));
	c->out = an_with_body(a, c->func, fbody);
	return RW_OK;
}
