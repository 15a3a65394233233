/* rewrites/decompose_reduction.c — decompose_reduction(block, loop), as
 * TVM defines it: the T.init of reduction block X leaves the block and
 * becomes block X_init right before `loop`, inside copies of the loops
 * between `loop` and X that its spatial bindings use; X (renamed
 * X_update, as TVM names it) keeps only the update. Obligations
 * (semantics.md sections 4 and 9; the iter types are not trusted):
 * decompose.init_instances, decompose.init_reached (the new nest runs
 * exactly the original init instances, once each) and decompose.commute
 * (each moved init commutes with every update it now precedes). */
#include "rewrites/rewrite.h"

#include <string.h>

static Span nospan(void) { return (Span){0}; }

/* ---------- finding the block and the nest between loop and block ---------- */

typedef struct BlockFind {
	const char *name;
	Stmt *hit;
	StmtCtx ctx;
	int seen;
} BlockFind;

static void find_block_visit(void *ud, Stmt *s, const StmtCtx *c)
{
	BlockFind *f = ud;
	if (s->kind != ST_BLOCK || strcmp(s->u.block.name, f->name) != 0)
		return;
	if (!f->seen++) {
		f->hit = s;
		f->ctx = *c;
	}
}

static int count_blocks_named(Arena *a, const Func *fn, const char *name)
{
	BlockFind f = {.name = name};
	an_walk(a, fn, find_block_visit, &f);
	return f.seen;
}

static Stmt *skip_single(Stmt *s)
{
	while (s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

/* What the rewrite works on. The chain is the loops from `loop` down to
 * the block, with nothing else between them but guards (`if g:` without
 * else, as split's tail guard); a chain loop is kept (copied around the
 * init block) when a spatial binding uses its variable, else discarded. */
typedef struct Decomp {
	Stmt *block;
	const BlockInfo *info;
	BlockView view;
	StmtCtx bctx, lctx; /* of the block, of `loop` */
	int top;	    /* index of `loop` in bctx.loops */
	int nchain;
	Stmt **chain;
	Var **cvars;
	bool *kept;
	Var **copy; /* kept chain loops: the copy's variable (else NULL) */
	Expr *guards; /* the guards' conjunction (NULL: none) */
	const char *init_name, *update_name;
} Decomp;

static bool uses_any(const Expr *e, int n, Var *const *vars, const bool *only)
{
	for (int i = 0; i < n; i++)
		if ((!only || only[i]) && ir_expr_uses_var(e, vars[i]))
			return true;
	return false;
}

static RwStatus find_parts(RwCtx *c, const char *block, const char *loop, Decomp *d)
{
	Arena *a = c->arena;
	BlockFind f = {.name = block};
	an_walk(a, c->func, find_block_visit, &f);
	if (f.seen == 0)
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "decompose_reduction: no block '%s' in function '%s'%s",
			       block, c->func->name, rw_block_hint(c->arena, c->func, block));
	if (f.seen > 1)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "decompose_reduction: %d blocks are named '%s' in function '%s'", f.seen, block,
			       c->func->name);
	RwStatus st = rw_find_loop(c, loop, &d->lctx);
	if (st != RW_OK)
		return st;
	d->block = f.hit;
	d->bctx = f.ctx;
	d->info = f.hit->u.block.info;
	if (!d->info || !d->info->has_init)
		return rw_fail(c, RW_PRECONDITION, f.hit->span,
			       "decompose_reduction: block '%s' has no T.init() to decompose", block);
	if (!block_view(a, f.hit, &d->view) || !d->view.init)
		return rw_fail(c, RW_UNSUPPORTED, f.hit->span,
			       "decompose_reduction: block '%s' no longer has the shape of its declaration "
			       "(iter vars, T.where, T.init)", block);
	d->top = -1;
	for (int i = 0; i < d->bctx.nloops; i++)
		if (d->bctx.loops[i] == d->lctx.stmt)
			d->top = i;
	if (d->top < 0)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "decompose_reduction: loop '%s' is not an ancestor of block '%s'", loop, block);
	d->nchain = d->bctx.nloops - d->top;
	d->chain = d->bctx.loops + d->top;
	/* only loops and guards between `loop` and the block: every instance
	 * under `loop` is then an instance of the block, and the commutation
	 * obligation below covers everything the init moves across */
	int next = 1;
	for (Stmt *s = skip_single(d->lctx.stmt->u.loop.body); s != f.hit;) {
		if (next < d->nchain && s == d->chain[next]) {
			s = skip_single(s->u.loop.body);
			next++;
			continue;
		}
		if (s->kind == ST_IF && !s->u.cond.else_s && !an_expr_has_load(s->u.cond.cond)) {
			d->guards = ir_and(a, d->guards, s->u.cond.cond);
			s = skip_single(s->u.cond.then_s);
			continue;
		}
		return rw_fail(c, RW_UNSUPPORTED, s->span,
			       "decompose_reduction: loop '%s' holds more than the loop nest of block '%s' "
			       "(only loops and guards that read no memory, from loop '%s' down to the block)",
			       loop, block, loop);
	}
	d->init_name = arena_printf(a, "%s_init", block);
	d->update_name = arena_printf(a, "%s_update", block);
	const char *names[2] = {d->init_name, d->update_name};
	for (int k = 0; k < 2; k++)
		if (count_blocks_named(a, c->func, names[k]))
			return rw_fail(c, RW_PRECONDITION, f.hit->span,
				       "decompose_reduction: function '%s' already has a block named '%s'",
				       c->func->name, names[k]);
	return RW_OK;
}

/* The shapes this primitive handles, and TVM's "loop higher than the
 * reduction loops" precondition. */
static RwStatus check_shape(RwCtx *c, Decomp *d)
{
	Arena *a = c->arena;
	const BlockInfo *info = d->info;
	const char *bn = d->block->u.block.name;
	d->cvars = arena_alloc(a, sizeof(Var *) * (size_t)(d->nchain + 1));
	for (int i = 0; i < d->nchain; i++)
		d->cvars[i] = d->chain[i]->u.loop.var;
	/* the copied ranges are read before `loop` instead of inside it: the
	 * same values only when they read no memory and no chain variable */
	for (int i = 0; i < d->nchain; i++) {
		const Stmt *l = d->chain[i];
		if (an_expr_has_load(l->u.loop.min) || an_expr_has_load(l->u.loop.extent) ||
		    uses_any(l->u.loop.min, d->nchain, d->cvars, NULL) ||
		    uses_any(l->u.loop.extent, d->nchain, d->cvars, NULL))
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "decompose_reduction: the range of loop '%s' reads memory or another loop "
				       "of the nest", l->u.loop.var->name);
	}
	for (int k = 0; k < info->niters; k++) {
		const BlockIter *it = &info->iters[k];
		if (it->type != ITER_SPATIAL && it->type != ITER_REDUCE)
			return rw_fail(c, RW_UNSUPPORTED, it->var->span,
				       "decompose_reduction: iter var '%s' of block '%s' is of type %s (only spatial "
				       "and reduce iter vars)", it->var->name, bn, iter_type_name(it->type));
		if (an_expr_has_load(d->view.bindings[k]) || an_expr_has_load(it->dom_min))
			return rw_fail(c, RW_UNSUPPORTED, it->var->span,
				       "decompose_reduction: the binding or domain of iter var '%s' reads memory",
				       it->var->name);
		if (it->type != ITER_REDUCE)
			continue;
		for (int i = 0; i < d->top; i++)
			if (ir_expr_uses_var(d->view.bindings[k], d->bctx.loops[i]->u.loop.var))
				return rw_fail(c, RW_PRECONDITION, it->var->span,
					       "decompose_reduction: loop '%s' is not above every loop of the "
					       "reduction: iter var '%s' is bound to loop '%s' outside it",
					       d->lctx.stmt->u.loop.var->name, it->var->name,
					       d->bctx.loops[i]->u.loop.var->name);
	}
	if (d->view.where && an_expr_has_load(d->view.where))
		return rw_fail(c, RW_UNSUPPORTED, d->view.where->span,
			       "decompose_reduction: the T.where of block '%s' reads memory", bn);
	d->kept = arena_alloc(a, sizeof(bool) * (size_t)(d->nchain + 1));
	d->copy = arena_alloc(a, sizeof(Var *) * (size_t)(d->nchain + 1));
	for (int i = 0; i < d->nchain; i++)
		for (int k = 0; k < info->niters; k++)
			if (info->iters[k].type == ITER_SPATIAL &&
			    ir_expr_uses_var(d->view.bindings[k], d->cvars[i])) {
				d->kept[i] = true;
				d->copy[i] = an_fresh_var(a, d->cvars[i], "_init");
			}
	return RW_OK;
}

/* ---------- the instance conditions over the chain ---------- */

/* e with every iter var replaced by its binding: over loop variables. */
static Expr *flatten_iters(Arena *a, const Decomp *d, Expr *e)
{
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(d->info->niters + 1));
	for (int k = 0; k < d->info->niters; k++)
		from[k] = d->info->iters[k].var;
	return ir_subst_expr(a, e, d->info->niters, from, d->view.bindings);
}

/* The block instance at a chain point runs when the guards and its
 * T.where hold (NULL: always). */
static Expr *instance_cond(Arena *a, const Decomp *d)
{
	return d->view.where ? ir_and(a, d->guards, flatten_iters(a, d, d->view.where)) : d->guards;
}

/* The init runs in the instance that runs with every reduction iter var
 * at its domain minimum (block_init_cond). */
static Expr *original_init_cond(Arena *a, const Decomp *d)
{
	return ir_and(a, instance_cond(a, d), flatten_iters(a, d, block_init_cond(a, d->info)));
}

/* TVM's predicate for the init block: the conjuncts of the guards and
 * the T.where that use no discarded loop (NULL: none). */
static Expr *kept_where(Arena *a, const Decomp *d, Expr *w)
{
	if (w->kind == EX_BIN && w->u.bin.op == OP_AND) {
		Expr *x = kept_where(a, d, w->u.bin.a), *y = kept_where(a, d, w->u.bin.b);
		return x && y ? ir_and(a, x, y) : x ? x : y;
	}
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i] && ir_expr_uses_var(w, d->cvars[i]))
			return NULL;
	return w;
}

/* every discarded loop at its minimum */
static Expr *discarded_at_min(Arena *a, const Decomp *d)
{
	Expr *c = NULL;
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i])
			c = ir_and(a, c, ir_bin(a, OP_EQ, ir_varref(a, d->cvars[i], nospan()),
						d->chain[i]->u.loop.min, nospan()));
	return c ? c : ir_bool(a, true);
}

static Expr *subst_discarded_min(Arena *a, const Decomp *d, Expr *e)
{
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(d->nchain + 1));
	Expr **to = arena_alloc(a, sizeof(Expr *) * (size_t)(d->nchain + 1));
	int n = 0;
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i]) {
			from[n] = d->cvars[i];
			to[n++] = d->chain[i]->u.loop.min;
		}
	return ir_subst_expr(a, e, n, from, to);
}

static const char *discarded_names(Arena *a, const Decomp *d)
{
	const char *s = NULL;
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i])
			s = s ? arena_printf(a, "%s, %s", s, d->cvars[i]->name) : d->cvars[i]->name;
	return s ? s : "none";
}

/* decompose.init_instances:
 *     forall chain points l in range:
 *       where(l) and init_cond(l) -> (discarded loops at their minimum) and kept_where(l)
 * decompose.init_reached:
 *     forall kept points k in range:
 *       kept_where(k) -> (every discarded loop runs: extent > 0)
 *                        and where(k, dmin) and init_cond(k, dmin)
 * Together: under one iteration of the loops around `loop`, the original
 * runs the init at exactly one chain point (k, dmin) for each k the new
 * nest runs it at, and nowhere else; the init's spatial iter vars there
 * are the new block's bindings at k (they use no discarded loop) and its
 * reduction iter vars are at their minimum. dmin does not depend on k (no
 * chain range uses a chain variable), so the inits keep their relative
 * order. */
static void instance_obligations(RwCtx *c, const Decomp *d, Expr *where_kept)
{
	Arena *a = c->arena;
	const char *bn = d->block->u.block.name;
	Expr *init_at = original_init_cond(a, d);
	Expr *kw = where_kept ? where_kept : ir_bool(a, true);
	Expr *goal = ir_or(a, ir_not(a, init_at, nospan()), ir_and(a, discarded_at_min(a, d), kw));
	Obligation *o = rw_obligation_at(
		c, &c->obs, &d->lctx, "decompose.init_instances",
		arena_printf(a, "the init of block '%s' runs only where the loops its spatial bindings do not use "
				"(%s) are at their minimum%s", bn, discarded_names(a, d),
			     where_kept ? " and the kept T.where holds" : ""),
		goal);
	for (int i = 0; i < d->nchain; i++) {
		obligation_add_var(a, o, d->cvars[i]);
		obligation_add_hyp(a, o, an_loop_range(a, d->chain[i], ir_varref(a, d->cvars[i], nospan())));
	}
	obligation_add_related(a, o, d->block->span);

	Expr *runs = NULL;
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i])
			runs = ir_and(a, runs, ir_bin(a, OP_GT, d->chain[i]->u.loop.extent,
						      ir_int(a, 0, d->chain[i]->u.loop.extent->dtype, nospan()),
						      nospan()));
	Expr *reached = ir_and(a, runs, subst_discarded_min(a, d, init_at));
	goal = ir_or(a, ir_not(a, kw, nospan()), reached);
	o = rw_obligation_at(c, &c->obs, &d->lctx, "decompose.init_reached",
			     arena_printf(a, "every instance of the new block '%s' is an init instance of block '%s' "
					     "(the loops %s at their minimum)", d->init_name, bn, discarded_names(a, d)),
			     goal);
	for (int i = 0; i < d->nchain; i++)
		if (d->kept[i]) {
			obligation_add_var(a, o, d->cvars[i]);
			obligation_add_hyp(a, o, an_loop_range(a, d->chain[i], ir_varref(a, d->cvars[i], nospan())));
		}
	obligation_add_related(a, o, d->block->span);
}

/* ---------- building the init block and its nest ---------- */

/* regions over the old iter vars, rewritten; NULL when a region uses a
 * variable the new block does not have */
static BufRegion *subst_regions(Arena *a, int n, const BufRegion *rs, int nv, Var **from, Expr **to,
				const Decomp *d)
{
	BufRegion *out = arena_alloc(a, sizeof(BufRegion) * (size_t)(n + 1));
	for (int r = 0; r < n; r++) {
		out[r] = rs[r];
		out[r].lo = arena_alloc(a, sizeof(Expr *) * (size_t)(rs[r].ndim + 1));
		out[r].hi = arena_alloc(a, sizeof(Expr *) * (size_t)(rs[r].ndim + 1));
		for (int k = 0; k < rs[r].ndim; k++) {
			out[r].lo[k] = ir_subst_expr(a, rs[r].lo[k], nv, from, to);
			out[r].hi[k] = rs[r].hi[k] ? ir_subst_expr(a, rs[r].hi[k], nv, from, to) : NULL;
			if (uses_any(out[r].lo[k], d->nchain, d->cvars, NULL) ||
			    (out[r].hi[k] && uses_any(out[r].hi[k], d->nchain, d->cvars, NULL)))
				return NULL;
		}
	}
	return out;
}

/* The kept chain variables -> their copies. */
static int kept_subst(Arena *a, const Decomp *d, Var ***from, Expr ***to)
{
	*from = arena_alloc(a, sizeof(Var *) * (size_t)(d->nchain + 1));
	*to = arena_alloc(a, sizeof(Expr *) * (size_t)(d->nchain + 1));
	int n = 0;
	for (int i = 0; i < d->nchain; i++)
		if (d->kept[i]) {
			(*from)[n] = d->cvars[i];
			(*to)[n++] = ir_varref(a, d->copy[i], nospan());
		}
	return n;
}

/* The init block: the spatial iter vars (fresh), bound as before over the
 * copied loops; the init with its reduction iter vars at their minimum. */
static RwStatus build_init_block(RwCtx *c, const Decomp *d, Expr *where_kept, Stmt **out)
{
	Arena *a = c->arena;
	const BlockInfo *info = d->info;
	int n = info->niters;
	Var **from = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	Expr **to = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	BlockInfo *ni = arena_alloc(a, sizeof *ni);
	ni->iters = arena_alloc(a, sizeof(BlockIter) * (size_t)(n + 1));
	Expr **bindings = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	Var **kfrom;
	Expr **kto;
	int nk = kept_subst(a, d, &kfrom, &kto);
	for (int k = 0; k < n; k++) {
		const BlockIter *it = &info->iters[k];
		from[k] = it->var;
		if (it->type == ITER_REDUCE) {
			to[k] = it->dom_min;
			continue;
		}
		BlockIter *nit = &ni->iters[ni->niters];
		*nit = *it;
		nit->var = an_fresh_var(a, it->var, "");
		to[k] = ir_varref(a, nit->var, it->var->span);
		bindings[ni->niters++] = ir_subst_expr(a, d->view.bindings[k], nk, kfrom, kto);
	}
	Stmt *init = ir_subst_stmt(a, (Stmt *)d->view.init, n, from, to);
	for (int i = 0; i < d->nchain; i++)
		if (!d->kept[i] && ir_stmt_uses_var(init, d->cvars[i]))
			return rw_fail(c, RW_UNSUPPORTED, d->view.init->span,
				       "decompose_reduction: the init of block '%s' uses loop '%s' directly, which its "
				       "spatial bindings do not use", d->block->u.block.name, d->cvars[i]->name);
	init = ir_subst_stmt(a, init, nk, kfrom, kto);
	ni->has_where = where_kept != NULL;
	/* TVM's declarations: no reads, the block's writes */
	if (info->has_writes) {
		Var **rfrom = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
		Expr **rto = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
		memcpy(rfrom, from, sizeof(Var *) * (size_t)n);
		memcpy(rto, to, sizeof(Expr *) * (size_t)n);
		BufRegion *w = subst_regions(a, info->nwrites, info->writes, n, rfrom, rto, d);
		if (w) {
			ni->has_reads = ni->has_writes = true;
			ni->nwrites = info->nwrites;
			ni->writes = w;
			ni->decl_inner = init;
		}
	}
	Expr *w = where_kept ? ir_subst_expr(a, where_kept, nk, kfrom, kto) : NULL;
	/* nothing to declare: a plain block, which is what its printed form
	 * `with T.block("X_init"):` reads back as */
	if (!ni->niters && !w && !ni->has_writes) {
		*out = ir_block(a, d->init_name, init, d->block->span);
		return RW_OK;
	}
	*out = block_assemble(a, d->init_name, ni, bindings, w, NULL, init, d->block->span);
	return RW_OK;
}

/* The copies of the kept chain loops around s, outermost first. */
static Stmt *wrap_kept_loops(Arena *a, const Decomp *d, Stmt *s, Stmt **outermost_copies)
{
	for (int i = d->nchain - 1; i >= 0; i--) {
		if (!d->kept[i])
			continue;
		const Stmt *l = d->chain[i];
		s = ir_for(a, d->copy[i], l->u.loop.min, l->u.loop.extent, l->u.loop.kind, s, l->span);
		outermost_copies[i] = s;
	}
	return s;
}

/* The reduction block without its init, named X_update. Like TVM, its
 * declared reads gain the written regions (the update reads them). */
static Stmt *build_update_block(Arena *a, const Decomp *d)
{
	const BlockInfo *info = d->info;
	BlockInfo *ui = arena_alloc(a, sizeof *ui);
	*ui = *info;
	ui->has_init = false;
	ui->decl_inner = info->decl_inner == d->view.inner ? d->view.inner : NULL;
	if (info->has_reads && info->has_writes) {
		ui->reads = arena_alloc(a, sizeof(BufRegion) * (size_t)(info->nreads + info->nwrites + 1));
		ui->nreads = 0;
		for (int w = 0; w < info->nwrites; w++) {
			bool read = false;
			for (int r = 0; r < info->nreads; r++)
				read |= info->reads[r].buf == info->writes[w].buf;
			if (!read)
				ui->reads[ui->nreads++] = info->writes[w];
		}
		for (int r = 0; r < info->nreads; r++)
			ui->reads[ui->nreads++] = info->reads[r];
	}
	return block_assemble(a, d->update_name, ui, d->view.bindings, d->view.where, NULL,
			      (Stmt *)d->view.inner, d->block->span);
}

/* ---------- commutation and labels ---------- */

/* lexicographic x < y over n coordinates */
static Expr *lex_less(Arena *a, int n, Expr **x, Expr **y)
{
	Expr *less = ir_bool(a, false), *equal = NULL;
	for (int i = 0; i < n; i++) {
		less = ir_or(a, less, ir_and(a, equal, ir_bin(a, OP_LT, x[i], y[i], nospan())));
		equal = ir_and(a, equal, ir_bin(a, OP_EQ, x[i], y[i], nospan()));
	}
	return less;
}

/* decompose.commute: the init instance at kept point k ran at chain point
 * (k, dmin); now it runs before every update. For every update instance
 * at chain point l with l <lex (k, dmin) (those it jumped over):
 *     init(k) and update(l) commute
 * (semantics.md section 4; no reduction exemption: an init is no
 * reduction update). The update is the block as it is now (iter lets,
 * T.where, its statements); a load in an index or guard of a buffer
 * either writes is an unknown value (an_collect_accesses). */
static void commute_obligations(RwCtx *c, const Decomp *d, Stmt *init_block, Stmt *update_block)
{
	Arena *a = c->arena;
	int n = d->nchain;
	Obligation *base = obligation_new(a, "decompose.commute", "", 0, NULL, 0, NULL, ir_bool(a, true),
					  d->lctx.stmt->span);
	rw_add_context_hyps(c, base, &d->lctx);
	Expr **kpoint = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	Expr **lpoint = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	Var **lvars = arena_alloc(a, sizeof(Var *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		const Stmt *l = d->chain[i];
		if (d->kept[i]) {
			kpoint[i] = ir_varref(a, d->copy[i], nospan());
			obligation_add_var(a, base, d->copy[i]);
			obligation_add_hyp(a, base, an_loop_range(a, l, kpoint[i]));
		} else {
			kpoint[i] = l->u.loop.min;
		}
		lvars[i] = an_fresh_var(a, d->cvars[i], "_u");
		lpoint[i] = ir_varref(a, lvars[i], nospan());
		obligation_add_var(a, base, lvars[i]);
		obligation_add_hyp(a, base, an_loop_range(a, l, lpoint[i]));
	}
	obligation_add_hyp(a, base, lex_less(a, n, lpoint, kpoint));
	/* an update behind a false guard does not run */
	if (d->guards)
		obligation_add_hyp(a, base, ir_subst_expr(a, d->guards, n, d->cvars, lpoint));
	Stmt *both[2] = {init_block, d->lctx.stmt};
	Buffer **vol;
	int nvol = an_written_buffers(a, ir_seq(a, 2, both, nospan()), &vol);
	AccessList p, q;
	memset(&p, 0, sizeof p);
	memset(&q, 0, sizeof q);
	an_collect_accesses(a, init_block, 0, NULL, NULL, nvol, vol, &p);
	an_collect_accesses(a, update_block, n, d->cvars, lpoint, nvol, vol, &q);
	an_name_instance(a, &p, "_i");
	an_name_instance(a, &q, "_u");
	rw_commute_obligations(c, "decompose.commute",
			       arena_printf(a, "the init of block '%s' moved before an update of it that ran first",
					    d->block->u.block.name),
			       base, &p, &q, false);
}

/* A parallel or vectorized loop among the copies is proven race free as
 * it stands (semantics.md section 4), with the copies around it. */
static void copy_race_obligations(RwCtx *c, const Decomp *d, Stmt **copies)
{
	Arena *a = c->arena;
	for (int i = 0; i < d->nchain; i++) {
		if (!d->kept[i])
			continue;
		ForKind k = copies[i]->u.loop.kind;
		if (k != FOR_PARALLEL && k != FOR_VECTORIZED)
			continue;
		const char *kind = k == FOR_PARALLEL ? "parallel.no_race" : "vectorize.no_race";
		Obligation *base = obligation_new(a, kind, "", 0, NULL, 0, NULL, ir_bool(a, true), copies[i]->span);
		rw_add_context_hyps(c, base, &d->lctx);
		for (int j = 0; j < i; j++)
			if (d->kept[j]) {
				obligation_add_var(a, base, d->copy[j]);
				obligation_add_hyp(a, base, an_loop_range(a, copies[j],
									  ir_varref(a, d->copy[j], nospan())));
			}
		rw_race_obligations(c, kind, base, copies[i]);
	}
}

/* ---------- the primitive ---------- */

RwStatus rw_decompose_reduction(RwCtx *c, const char *block, const char *loop)
{
	Arena *a = c->arena;
	Decomp d;
	memset(&d, 0, sizeof d);
	RwStatus st = find_parts(c, block, loop, &d);
	if (st == RW_OK)
		st = check_shape(c, &d);
	if (st != RW_OK)
		return st;
	Expr *runs = instance_cond(a, &d);
	Expr *where_kept = runs ? kept_where(a, &d, runs) : NULL;
	Stmt *init_block = NULL;
	st = build_init_block(c, &d, where_kept, &init_block);
	if (st != RW_OK)
		return st;
	Stmt **copies = arena_alloc(a, sizeof(Stmt *) * (size_t)(d.nchain + 1));
	Stmt *init_nest = wrap_kept_loops(a, &d, init_block, copies);
	Stmt *update_block = build_update_block(a, &d);

	instance_obligations(c, &d, where_kept);
	commute_obligations(c, &d, init_block, update_block);
	copy_race_obligations(c, &d, copies);

	/* the same nest, around the update block */
	Stmt *nest = an_replace_at(a, d.lctx.stmt, d.bctx.path + d.lctx.depth, d.bctx.depth - d.lctx.depth,
				   update_block);
	Stmt *pair[2] = {init_nest, nest};
	c->out = an_with_body(a, c->func, an_replace_at(a, c->func->body, d.lctx.path, d.lctx.depth,
							 ir_seq(a, 2, pair, d.lctx.stmt->span)));
	int ncopies = 0;
	for (int i = 0; i < d.nchain; i++)
		ncopies += d.kept[i];
	c->note = arena_printf(a, "block '%s' placed before loop '%s' in %d copied loop%s; block '%s' is now '%s'",
			       d.init_name, loop, ncopies, ncopies == 1 ? "" : "s", block, d.update_name);
	return RW_OK;
}
