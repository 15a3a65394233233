/* rewrites/specialize.c — specialize(var, value) (TVM's
 * PrimFunc.specialize on one size): the function restricted to the
 * inputs where the integer scalar parameter `var` (`n: T.int32`, or a
 * free size `n = T.int32()`) equals `value`. The value replaces the
 * variable in buffer shapes, loop bounds, conditions, block domains and
 * every expression, with the integer arithmetic it leaves folded; the
 * parameter stays (the calling convention does not change) and a fact
 * `T.assume(n == value)` heads the body: the interpreter refuses any other
 * n, and the compiled kernel checks it at entry and returns an error
 * (backend/cg_stmt.c). On inputs with n == value the two functions run
 * the same statements on the same values, so the substitution itself
 * needs no proof. What is proven (proofs/specialize.md):
 *   specialize.facts — the top-level T.assume facts over scalar
 *     parameters that mention n hold at n = value for every value of the
 *     other parameters their own facts admit: the restriction is not
 *     empty (a fact that contradicts the value is refuted), and it drops
 *     no input at n = value; these facts then go (the new one implies
 *     them);
 *   specialize.shape — an extent of a buffer shape that mentions n and
 *     another parameter is not negative at n = value (a constant one is
 *     checked directly).
 * Checked directly: the value is in the range of n's dtype, n is an
 * integer scalar parameter, no transformed layout mentions n. */
#include "rewrites/rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/expr_query.h"
#include "kernel/analysis/stmt_ctx.h"
#include "kernel/print.h"

typedef struct Spec {
	Arena *a;
	const Func *f;
	Var *n;
	int64_t value;
	int nbufs, cap, cap_to;
	const Buffer **from;
	Buffer **to;
	int nsubst;  /* uses of n replaced */
	int ndropped; /* facts dropped (proven by specialize.facts) */
} Spec;

static Buffer *mapped(const Spec *s, Buffer *b)
{
	for (int i = 0; i < s->nbufs; i++)
		if (s->from[i] == b)
			return s->to[i];
	return b;
}

static Expr *sp_expr(Spec *s, Expr *e);

static Expr *sp_child(void *ud, Expr *x)
{
	return sp_expr(ud, x);
}

static Expr **sp_list(Spec *s, int n, Expr **xs, bool *changed)
{
	Expr **out = arena_alloc(s->a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		out[i] = sp_expr(s, xs[i]);
		*changed = *changed || out[i] != xs[i];
	}
	return out;
}

/* e with n replaced by the value, the changed integer arithmetic folded */
static Expr *sp_expr(Spec *s, Expr *e)
{
	if (!e)
		return NULL;
	if (e->kind == EX_VAR && e->u.var == s->n) {
		s->nsubst++;
		return ir_int(s->a, s->value, e->dtype, e->span);
	}
	if (e->kind == EX_LOAD) {
		bool ch = false;
		Expr **idx = sp_list(s, e->u.load.nidx, e->u.load.idx, &ch);
		Buffer *b = mapped(s, e->u.load.buf);
		if (!ch && b == e->u.load.buf)
			return e;
		Expr *r = ir_load(s->a, b, e->u.load.nidx, idx, e->span);
		r->dtype = e->dtype;
		return r;
	}
	Expr *r = expr_map_children(s->a, e, sp_child, s);
	return r != e && r->kind == EX_BIN ? an_fold(s->a, r) : r;
}

static bool mentions_n(const Spec *s, const Expr *e)
{
	return e && ir_expr_uses_var(e, s->n);
}

/* A top-level fact over scalar parameters that names n: proven by
 * specialize.facts, so dropped. */
static bool dropped_fact(const Spec *s, const Stmt *st, bool top)
{
	return top && st->kind == ST_ASSUME && an_scalar_only(s->f, st->u.expr) && mentions_n(s, st->u.expr);
}

static Buffer *sp_buffer(Spec *s, Buffer *b);
static Stmt *sp_stmt(Spec *s, Stmt *st, bool top);

static BufRegion *sp_regions(Spec *s, int n, const BufRegion *rs)
{
	BufRegion *out = arena_alloc(s->a, sizeof(BufRegion) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		bool ch = false;
		out[i] = rs[i];
		out[i].buf = mapped(s, rs[i].buf);
		out[i].lo = sp_list(s, rs[i].ndim, rs[i].lo, &ch);
		out[i].hi = arena_alloc(s->a, sizeof(Expr *) * (size_t)(rs[i].ndim + 1));
		for (int k = 0; k < rs[i].ndim; k++)
			out[i].hi[k] = sp_expr(s, rs[i].hi[k]);
	}
	return out;
}

static Stmt *sp_block(Spec *s, Stmt *st, bool top)
{
	const BlockInfo *info = st->u.block.info;
	/* a plain block (the root block) is crossed like a sequence: the
	 * facts in it are top-level facts (rw_add_context_hyps takes them);
	 * so is a block without iter vars */
	Stmt *body = sp_stmt(s, st->u.block.body, top && (!info || info->niters == 0));
	if (!info)
		return ir_block_with(s->a, st, body);
	BlockInfo *ni = arena_alloc(s->a, sizeof *ni);
	*ni = *info;
	ni->iters = arena_alloc(s->a, sizeof(BlockIter) * (size_t)(info->niters + 1));
	for (int k = 0; k < info->niters; k++) {
		ni->iters[k] = info->iters[k];
		ni->iters[k].dom_min = sp_expr(s, info->iters[k].dom_min);
		ni->iters[k].dom_extent = sp_expr(s, info->iters[k].dom_extent);
	}
	ni->reads = sp_regions(s, info->nreads, info->reads);
	ni->writes = sp_regions(s, info->nwrites, info->writes);
	Stmt *nb = ir_block_info(s->a, st->u.block.name, ni, body, st->span);
	/* the declared regions went through the same substitution: they stay
	 * the ones checked while the statements are the substituted ones */
	BlockView ov, nv;
	ni->decl_inner = NULL;
	if (info->decl_inner && block_view(s->a, st, &ov) && ov.inner == info->decl_inner &&
	    block_view(s->a, nb, &nv))
		ni->decl_inner = nv.inner;
	return nb;
}

static Stmt *sp_stmt(Spec *s, Stmt *st, bool top)
{
	Arena *a = s->a;
	bool ch = false;
	switch (st->kind) {
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(st->u.seq.n + 1));
		int n = 0;
		for (int i = 0; i < st->u.seq.n; i++) {
			if (dropped_fact(s, st->u.seq.items[i], top)) {
				s->ndropped++;
				continue;
			}
			items[n++] = sp_stmt(s, st->u.seq.items[i], top);
		}
		return ir_seq(a, n, items, st->span);
	}
	case ST_FOR:
		return ir_for(a, st->u.loop.var, sp_expr(s, st->u.loop.min), sp_expr(s, st->u.loop.extent),
			      st->u.loop.kind, sp_stmt(s, st->u.loop.body, false), st->span);
	case ST_IF:
		return ir_if(a, sp_expr(s, st->u.cond.cond), sp_stmt(s, st->u.cond.then_s, false),
			     st->u.cond.else_s ? sp_stmt(s, st->u.cond.else_s, false) : NULL, st->span);
	case ST_STORE: {
		Expr **idx = sp_list(s, st->u.store.nidx, st->u.store.idx, &ch);
		return ir_store(a, mapped(s, st->u.store.buf), st->u.store.nidx, idx,
				sp_expr(s, st->u.store.value), st->span);
	}
	case ST_ASSUME:
		if (dropped_fact(s, st, top)) {
			s->ndropped++;
			return ir_seq(a, 0, NULL, st->span);
		}
		return ir_assume(a, sp_expr(s, st->u.expr), st->span);
	case ST_EVAL:
		return ir_eval(a, sp_expr(s, st->u.expr), st->span);
	case ST_ALLOC: {
		Buffer *nb = sp_buffer(s, st->u.alloc.buf);
		Stmt *body = st->u.alloc.body ? sp_stmt(s, st->u.alloc.body, top) : NULL;
		return ir_alloc(a, nb, body, st->span);
	}
	case ST_BLOCK:
		return sp_block(s, st, top);
	case ST_LET:
		return ir_letstmt(a, st->u.let.var, sp_expr(s, st->u.let.value), sp_stmt(s, st->u.let.body, top),
				  st->span);
	case ST_PASS:
		return st;
	case ST_COUNT:
		break;
	}
	abort();
}

/* b with n replaced in its shape (a new buffer, mapped from b, when the
 * shape names n) */
static Buffer *sp_buffer(Spec *s, Buffer *b)
{
	bool uses = false;
	for (int d = 0; d < b->ndim; d++)
		uses = uses || mentions_n(s, b->shape[d]);
	if (!uses)
		return b;
	Buffer *nb = ir_buffer_copy(s->a, b);
	bool ch = false;
	nb->shape = sp_list(s, b->ndim, b->shape, &ch);
	int k = s->nbufs;
	VEC_PUSH(s->a, s->from, s->nbufs, s->cap, b);
	VEC_PUSH(s->a, s->to, k, s->cap_to, nb);
	return nb;
}

/* ---------- what is checked before the rewrite ---------- */

static bool layout_mentions(const Spec *s, const Layout *lay)
{
	for (; lay; lay = lay->logical ? lay->logical->layout : NULL) {
		const Buffer *lb = lay->logical;
		for (int d = 0; lb && d < lb->ndim; d++)
			if (mentions_n(s, lb->shape[d]))
				return true;
		for (int k = 0; lb && k < lb->ndim; k++)
			if (lay->inverse && mentions_n(s, lay->inverse[k]))
				return true;
		if (mentions_n(s, lay->pad_predicate) || mentions_n(s, lay->pad_value) ||
		    mentions_n(s, lay->all_padding) || mentions_n(s, lay->forbidden))
			return true;
		if (!lb)
			break;
	}
	return false;
}

typedef struct LayoutFind {
	const Spec *s;
	const Buffer *hit;
} LayoutFind;

static void find_layout_alloc(void *ud, Stmt *st, const StmtCtx *ctx)
{
	(void)ctx;
	LayoutFind *lf = ud;
	if (!lf->hit && st->kind == ST_ALLOC && layout_mentions(lf->s, st->u.alloc.buf->layout))
		lf->hit = st->u.alloc.buf;
}

/* The top-level facts over scalar parameters (those every execution
 * reaches: rw_add_context_hyps takes the same), split by whether they
 * name n. */
static void scalar_facts(const Spec *s, const Stmt *st, int *n, Expr ***with, int *m, Expr ***without,
			 int *cap1, int *cap2)
{
	switch (st->kind) {
	case ST_SEQ:
		for (int i = 0; i < st->u.seq.n; i++)
			scalar_facts(s, st->u.seq.items[i], n, with, m, without, cap1, cap2);
		return;
	case ST_ASSUME:
		if (!an_scalar_only(s->f, st->u.expr))
			return;
		if (mentions_n(s, st->u.expr))
			VEC_PUSH(s->a, *with, *n, *cap1, st->u.expr);
		else
			VEC_PUSH(s->a, *without, *m, *cap2, st->u.expr);
		return;
	case ST_ALLOC:
		if (st->u.alloc.body)
			scalar_facts(s, st->u.alloc.body, n, with, m, without, cap1, cap2);
		return;
	case ST_BLOCK:
		scalar_facts(s, st->u.block.body, n, with, m, without, cap1, cap2);
		return;
	case ST_LET:
		scalar_facts(s, st->u.let.body, n, with, m, without, cap1, cap2);
		return;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

/* An obligation over the other scalar parameters: their dtype ranges and
 * their own facts as hypotheses. */
static Obligation *spec_obligation(RwCtx *c, const Spec *s, const char *kind, const char *statement,
				   Expr *goal, int nother, Expr **other, Span origin)
{
	Arena *a = c->arena;
	Obligation *o = obligation_new(a, kind, statement, 0, NULL, 0, NULL, goal, origin);
	for (int i = 0; i < c->func->nparams; i++) {
		const Param *p = &c->func->params[i];
		if (p->kind != PARAM_SCALAR || p->var == s->n)
			continue;
		obligation_add_var(a, o, p->var);
		if (!dtype_is_int(p->var->dtype))
			continue;
		int64_t hi = an_dtype_max(p->var->dtype);
		int64_t lo = dtype_is_signed(p->var->dtype) ? -hi - 1 : 0;
		Expr *v = ir_varref(a, p->var, (Span){0});
		obligation_add_named_hyp(
			a, o,
			ir_and(a, ir_bin(a, OP_LE, ir_int(a, lo, DT_INT64, (Span){0}), v, (Span){0}),
			       ir_bin(a, OP_LE, v, ir_int(a, hi, DT_INT64, (Span){0}), (Span){0})),
			arena_printf(a, "hyp_param_%s", p->var->name));
	}
	for (int i = 0; i < nother; i++)
		obligation_add_named_hyp(a, o, other[i],
					 other[i]->span.src ? arena_printf(a, "hyp_assume_%d_%d", other[i]->span.line,
									   other[i]->span.col)
							    : arena_printf(a, "hyp_assume_%d", i));
	oblist_push(a, &c->obs, o);
	return o;
}

static const char *scalar_names(Arena *a, const Func *f)
{
	const char *names = "";
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR)
			names = arena_printf(a, "%s%s%s", names, *names ? ", " : "", f->params[i].var->name);
	return names;
}

/* Why `name` is no size parameter of f, or NULL when no such name is
 * there at all. */
static const char *not_a_size(Arena *a, const Func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR && strcmp(p->var->name, name) == 0)
			return arena_printf(a, "'%s' is a %s parameter, not a size (an integer scalar parameter)",
					    name, dtype_name(p->var->dtype));
		if (p->kind == PARAM_HANDLE && p->var && strcmp(p->var->name, name) == 0)
			return arena_printf(a, "'%s' is a handle parameter, not a size", name);
		if (p->buf && strcmp(p->buf->name, name) == 0)
			return arena_printf(a, "'%s' is a buffer, not a size", name);
	}
	if (an_has_loop_named(f->body, name))
		return arena_printf(a, "'%s' is a loop variable, not a parameter: only a size the caller gives "
				       "can be specialized",
				    name);
	if (stmt_find_alloc(f->body, name))
		return arena_printf(a, "'%s' is a buffer, not a size", name);
	return NULL;
}

RwStatus rw_specialize(RwCtx *c, const char *var, int64_t value)
{
	Arena *a = c->arena;
	const Func *f = c->func;
	Var *n = NULL;
	for (int i = 0; i < f->nparams && !n; i++)
		if (f->params[i].kind == PARAM_SCALAR && strcmp(f->params[i].var->name, var) == 0)
			n = f->params[i].var;
	if (!n || !dtype_is_int(n->dtype)) {
		const char *why = not_a_size(a, f, var);
		if (why)
			return rw_fail(c, RW_PRECONDITION, c->call_span, "specialize: %s", why);
		const char *names = scalar_names(a, f);
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "specialize: no scalar parameter '%s' in function '%s' (%s%s)", var, f->name,
			       *names ? "scalar parameters: " : "it has no scalar parameter", names);
	}
	int64_t hi = an_dtype_max(n->dtype);
	int64_t lo = dtype_is_signed(n->dtype) ? -hi - 1 : 0;
	if (value < lo || value > hi)
		return rw_fail(c, RW_PRECONDITION, c->call_span,
			       "specialize: %lld is outside the range of %s's dtype %s [%lld, %lld]", (long long)value,
			       var, dtype_name(n->dtype), (long long)lo, (long long)hi);
	if (ir_stmt_find_opaque(f->body))
		return rw_fail(c, RW_UNSUPPORTED, c->call_span,
			       "specialize: not supported on a function with an opaque call");
	Spec s = {.a = a, .f = f, .n = n, .value = value};
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf && layout_mentions(&s, f->params[i].buf->layout))
			return rw_fail(c, RW_UNSUPPORTED, f->params[i].buf->span,
				       "specialize: not supported: the layout of %s (transform_layout) mentions %s; "
				       "specialize before transforming the layout",
				       f->params[i].buf->name, var);
	LayoutFind lf = {.s = &s};
	an_walk(a, f, find_layout_alloc, &lf);
	if (lf.hit)
		return rw_fail(c, RW_UNSUPPORTED, lf.hit->span,
			       "specialize: not supported: the layout of %s (transform_layout) mentions %s; "
			       "specialize before transforming the layout",
			       lf.hit->name, var);

	/* the rewrite: parameters' shapes first, then the body */
	Param *params = arena_alloc(a, sizeof(Param) * (size_t)(f->nparams + 1));
	for (int i = 0; i < f->nparams; i++) {
		params[i] = f->params[i];
		if (params[i].buf)
			params[i].buf = sp_buffer(&s, params[i].buf);
	}
	Stmt *body = sp_stmt(&s, f->body, true);
	Expr *pin = ir_bin(a, OP_EQ, ir_varref(a, n, (Span){0}), ir_int(a, value, n->dtype, (Span){0}), (Span){0});
	Stmt *fact = ir_assume(a, pin, c->call_span);
	Stmt **items;
	int nitems;
	if (body->kind == ST_SEQ) {
		nitems = body->u.seq.n + 1;
		items = arena_alloc(a, sizeof(Stmt *) * (size_t)(nitems + 1));
		items[0] = fact;
		memcpy(items + 1, body->u.seq.items, sizeof(Stmt *) * (size_t)body->u.seq.n);
	} else {
		nitems = 2;
		items = arena_alloc(a, sizeof(Stmt *) * 3);
		items[0] = fact;
		items[1] = body;
	}
	c->out = ir_func(a, f->name, f->nparams, params, ir_seq(a, nitems, items, body->span), f->span);

	/* specialize.facts */
	int nwith = 0, nwithout = 0, cap1 = 0, cap2 = 0;
	Expr **with = NULL, **without = NULL;
	scalar_facts(&s, f->body, &nwith, &with, &nwithout, &without, &cap1, &cap2);
	if (nwith) {
		Spec g = s;
		Expr *goal = NULL;
		const char *lines = "";
		for (int i = 0; i < nwith; i++) {
			goal = ir_and(a, goal, sp_expr(&g, with[i]));
			StrBuf t = {0};
			print_expr_to(&t, with[i]);
			char *txt = sb_take(&t);
			/* a fact an earlier specialize stated has no line of the kernel */
			if (with[i]->span.src && with[i]->span.src == f->span.src)
				lines = arena_printf(a, "%s%sline %d: %s", lines, i ? "; " : "", with[i]->span.line, txt);
			else
				lines = arena_printf(a, "%s%s%s", lines, i ? "; " : "", txt);
			free(txt);
		}
		Obligation *o = spec_obligation(
			c, &s, "specialize.facts",
			arena_printf(a, "the T.assume fact%s on %s (%s) hold%s at %s = %lld for every admissible value of the other parameters",
				     nwith == 1 ? "" : "s", var, lines, nwith == 1 ? "s" : "",
				     var, (long long)value),
			goal, nwithout, without, with[0]->span);
		for (int i = 0; i < nwith; i++)
			obligation_add_related(a, o, with[i]->span);
	}
	/* specialize.shape: constant extents here, the others proven */
	for (int i = 0; i < s.nbufs; i++) {
		const Buffer *ob = s.from[i], *nb = s.to[i];
		for (int d = 0; d < nb->ndim; d++) {
			int64_t ext;
			if (an_const_int(nb->shape[d], &ext)) {
				if (ext < 0)
					return rw_fail(c, RW_PRECONDITION, ob->span,
						       "specialize: at %s = %lld, extent %d of %s's shape is %lld: a shape is not negative",
						       var, (long long)value, d, ob->name, (long long)ext);
				continue;
			}
			/* at n = value the shape is what the original's was: only
			 * a shape of the parameters alone is asked about (one that
			 * names a loop variable is the kernel's own business) */
			if (!mentions_n(&s, ob->shape[d]) || !an_scalar_only(f, ob->shape[d]))
				continue;
			Expr *goal = ir_bin(a, OP_LE, ir_int(a, 0, nb->shape[d]->dtype, (Span){0}), nb->shape[d],
					    (Span){0});
			spec_obligation(c, &s, "specialize.shape",
					arena_printf(a, "extent %d of %s's shape is not negative at %s = %lld", d,
						     ob->name, var, (long long)value),
					goal, nwithout, without, ob->span);
		}
	}
	c->note = arena_printf(a, "%s = %lld: %d use%s replaced, %d buffer shape%s, %d fact%s on %s dropped "
				  "(proven); callers pass %s = %lld (T.assume at entry: the interpreter refuses "
				  "another value, the compiled kernel returns an error)",
			       var, (long long)value, s.nsubst, s.nsubst == 1 ? "" : "s", s.nbufs,
			       s.nbufs == 1 ? "" : "s", s.ndropped, s.ndropped == 1 ? "" : "s", var, var,
			       (long long)value);
	return RW_OK;
}
