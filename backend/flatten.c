/* backend/flatten.c — FlattenBuffer (seed 001, semantics.md 7): each
 * buffer's physical axes are combined row-major within each group between
 * axis_separators, giving a 1-d buffer (no separator) or an N-d one, and
 * every access is rewritten with Horner's rule. Obligations: the flat
 * extent of each group fits the index type (int32, else widened to int64,
 * else the build is rejected), and a buffer of several groups is
 * addressable with int64. See proofs/lowering.md. */
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/analysis/interval.h"
#include "kernel/print.h"

/* ---------- small integer expressions ---------- */

static bool int_fits_dtype(int64_t v, DType t)
{
	switch (t) {
	case DT_INT8: return v >= INT8_MIN && v <= INT8_MAX;
	case DT_INT16: return v >= INT16_MIN && v <= INT16_MAX;
	case DT_INT32: return v >= INT32_MIN && v <= INT32_MAX;
	case DT_UINT8: return v >= 0 && v <= 255;
	case DT_BOOL: return v == 0 || v == 1;
	case DT_INT64: return true;
	case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_HANDLE: case DT_VOID: case DT_COUNT:
		return false;
	}
	return false;
}

/* x as an expression of dtype t (a literal is retyped, anything else is
 * cast; the cast is exact for in-bounds indices, which fit any index
 * type whose obligation was proven). */
static Expr *as_dtype(Arena *a, Expr *x, DType t)
{
	if (x->dtype == t)
		return x;
	if (x->kind == EX_INT && int_fits_dtype(x->u.ival, t))
		return ir_int(a, x->u.ival, t, x->span);
	return ir_cast(a, t, x, x->span);
}

/* x op y, folded when both are literals and the result fits. */
static Expr *fold_bin(Arena *a, BinOp op, Expr *x, Expr *y)
{
	if (x->kind == EX_INT && y->kind == EX_INT && x->dtype == y->dtype) {
		int64_t r;
		bool overflow = op == OP_MUL ? __builtin_mul_overflow(x->u.ival, y->u.ival, &r)
					     : __builtin_add_overflow(x->u.ival, y->u.ival, &r);
		if (!overflow && int_fits_dtype(r, x->dtype))
			return ir_int(a, r, x->dtype, x->span);
	}
	if (op == OP_MUL && x->kind == EX_INT && x->u.ival == 1)
		return y;
	if (op == OP_MUL && y->kind == EX_INT && y->u.ival == 1)
		return x;
	if (op == OP_ADD && x->kind == EX_INT && x->u.ival == 0)
		return y;
	if (op == OP_ADD && y->kind == EX_INT && y->u.ival == 0)
		return x;
	return ir_bin(a, op, x, y, (Span){0});
}

static Expr *int64_lit(Arena *a, int64_t v) { return ir_int(a, v, DT_INT64, (Span){0}); }

/* lo <= e <= hi, with e's value taken as a mathematical integer. */
static Expr *in_range(Arena *a, Expr *e, int64_t lo, int64_t hi)
{
	Expr *x = as_dtype(a, e, DT_INT64);
	return ir_and(a, ir_bin(a, OP_LE, int64_lit(a, lo), x, (Span){0}),
		      ir_bin(a, OP_LE, x, int64_lit(a, hi), (Span){0}));
}

/* ---------- the context of a buffer: what holds where it is made ---------- */

/* Hypotheses and variables of the obligations about one buffer: the
 * dtype ranges of scalar parameters and the entry facts that mention only
 * them; for an allocation also the ranges of the loops and the values of
 * the lets around it. */
typedef struct Context {
	int nvars, capvars;
	Var **vars;
	int nhyps, caphyps;
	Expr **hyps;
} Context;

static void ctx_add_var(Arena *a, Context *c, Var *v)
{
	for (int i = 0; i < c->nvars; i++)
		if (c->vars[i] == v)
			return;
	VEC_PUSH(a, c->vars, c->nvars, c->capvars, v);
}

static void ctx_add_hyp(Arena *a, Context *c, Expr *h)
{
	VEC_PUSH(a, c->hyps, c->nhyps, c->caphyps, h);
}

static Context ctx_copy(Arena *a, const Context *c)
{
	Context r = {0};
	for (int i = 0; i < c->nvars; i++)
		ctx_add_var(a, &r, c->vars[i]);
	for (int i = 0; i < c->nhyps; i++)
		ctx_add_hyp(a, &r, c->hyps[i]);
	return r;
}

/* The entry facts: T.assume statements at the top of the body (before
 * anything else but other assumes, blocks and sequences) about scalar
 * parameters only. They hold for every admissible input. */
static bool entry_facts(Arena *a, const Func *f, const Stmt *s, Context *c)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (!entry_facts(a, f, s->u.seq.items[i], c))
				return false;
		return true;
	case ST_BLOCK:
		return entry_facts(a, f, s->u.block.body, c);
	case ST_ASSUME:
		if (an_scalar_only(f, s->u.expr))
			ctx_add_hyp(a, c, s->u.expr);
		return true;
	case ST_PASS:
	case ST_EVAL:
		return true;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_ALLOC: case ST_LET: case ST_COUNT:
		return false;
	}
	return false;
}

static void param_context(Arena *a, const Func *source, Context *c)
{
	for (int i = 0; i < source->nparams; i++) {
		const Param *p = &source->params[i];
		if (p->kind != PARAM_SCALAR || !dtype_is_int(p->var->dtype))
			continue;
		ctx_add_var(a, c, p->var);
		Expr *v = ir_varref(a, p->var, (Span){0});
		Interval d = iv_dtype(p->var->dtype);
		ctx_add_hyp(a, c, in_range(a, v, (int64_t)d.lo, (int64_t)d.hi));
	}
	entry_facts(a, source, source->body, c);
}

/* ---------- the obligations ---------- */

typedef struct Flattener {
	Arena *a;
	Solver *solver;
	FloatMode fm;
	ProofLog *log;
	FlattenOptions opt;
	LowerStats *stats;
	DiagList *d;
	int nbufs, capbufs;
	FlatBuffer *bufs;
	int naccesses, capaccesses;
	FlatAccess *accesses;
	bool failed;
} Flattener;

/* "(16, 4, 4)" */
static char *shape_text(const Buffer *b, int first, int last)
{
	StrBuf s = {0};
	sb_puts(&s, "(");
	for (int k = first; k <= last; k++) {
		char *e = print_expr(b->shape[k]);
		sb_printf(&s, "%s%s", k > first ? ", " : "", e);
		free(e);
	}
	sb_puts(&s, last == first ? ",)" : ")");
	return sb_take(&s);
}


/* Facts about the extents of b: a buffer exists, so its extents (the
 * values the program computes for them, wrapped to their dtype as every
 * integer in a proof is) are not negative. */
static void extent_hyps(Arena *a, const Buffer *b, Obligation *o)
{
	for (int k = 0; k < b->ndim; k++) {
		Expr *x = as_dtype(a, b->shape[k], DT_INT64);
		obligation_add_hyp(a, o, ir_bin(a, OP_GE, x, int64_lit(a, 0), (Span){0}));
	}
}

/* "the product of the extents first..last is at most max", stated so that
 * nothing in it can wrap (integers in proofs wrap like the program, so
 * `x1 * x2 <= max` in int64 would hold vacuously when the product wraps):
 * some extent is 0, or each partial product p_j satisfies
 * p_j <= max // x_(j+1); the first partial product that would exceed max
 * makes its conjunct false while the ones before keep p_j exact. */
static Expr *product_at_most(Arena *a, const Buffer *b, int first, int last, int64_t max)
{
	Expr *zero = NULL, *all = NULL, *p = NULL;
	for (int k = first; k <= last; k++) {
		Expr *x = as_dtype(a, b->shape[k], DT_INT64);
		zero = zero ? ir_or(a, zero, ir_bin(a, OP_EQ, x, int64_lit(a, 0), (Span){0}))
			    : ir_bin(a, OP_EQ, x, int64_lit(a, 0), (Span){0});
		Expr *bound = ir_bin(a, OP_FLOORDIV, int64_lit(a, max), x, (Span){0});
		Expr *ok = p ? ir_bin(a, OP_LE, p, bound, (Span){0})
			     : ir_bin(a, OP_LE, x, int64_lit(a, max), (Span){0});
		all = ir_and(a, all, ok);
		p = p ? ir_mul(a, p, x) : x;
	}
	if (!all)
		return ir_bool(a, true);
	return ir_or(a, zero, all);
}

static Obligation *make_obligation(Flattener *fl, const Context *ctx, const Buffer *b,
				   const char *kind, const char *statement, Expr *goal)
{
	Obligation *o = obligation_new(fl->a, kind, statement, ctx->nvars, ctx->vars,
				       ctx->nhyps, ctx->hyps, goal, b->span);
	o->rewrite = arena_printf(fl->a, "flatten(%s)", b->name);
	extent_hyps(fl->a, b, o);
	return o;
}

static Verdict discharge(Flattener *fl, const Obligation *o, ObligationResult *r)
{
	smt_discharge(fl->solver, fl->a, o, fl->fm, r);
	fl->stats->nobligations++;
	fl->stats->solver_seconds += r->seconds;
	if (r->verdict == VERDICT_PROVEN)
		fl->stats->nproven++;
	if (fl->log)
		proof_log_obligation(fl->log, o, r, fl->fm);
	return r->verdict;
}

/* Prove that group first..last of b has a flat extent that fits t. */
static Verdict prove_group_fits(Flattener *fl, const Context *ctx, const Buffer *b, int first,
				int last, DType t, ObligationResult *r)
{
	Arena *a = fl->a;
	Expr *goal = product_at_most(a, b, first, last, (int64_t)iv_dtype(t).hi);
	char *shape = shape_text(b, first, last);
	const char *kind = t == DT_INT32 ? "flatten.index_fits_int32" : "flatten.index_fits_int64";
	const char *stmt = arena_printf(a, "every in-bounds flat index of %s over axes %s fits %s "
					"(the product of the extents is at most %lld)",
					b->name, shape, dtype_name(t), (long long)iv_dtype(t).hi);
	free(shape);
	Obligation *o = make_obligation(fl, ctx, b, kind, stmt, goal);
	return discharge(fl, o, r);
}

static Verdict prove_offset_fits(Flattener *fl, const Context *ctx, const Buffer *b,
				 ObligationResult *r)
{
	Arena *a = fl->a;
	Expr *goal = product_at_most(a, b, 0, b->ndim - 1, INT64_MAX);
	char *shape = shape_text(b, 0, b->ndim - 1);
	const char *stmt = arena_printf(a, "every in-bounds element offset of %s %s fits int64",
					b->name, shape);
	free(shape);
	Obligation *o = make_obligation(fl, ctx, b, "flatten.offset_fits_int64", stmt, goal);
	return discharge(fl, o, r);
}

static const char *why_not(Arena *a, const ObligationResult *r)
{
	if (r->verdict == VERDICT_REFUTED && r->model && r->model->nvars) {
		StrBuf s = {0};
		sb_puts(&s, "counterexample:");
		for (int i = 0; i < r->model->nvars; i++)
			sb_printf(&s, " %s=%s", r->model->vars[i].var->name,
				  r->model->vars[i].val.text ? r->model->vars[i].val.text : "?");
		char *t = sb_take(&s);
		const char *res = arena_strdup(a, t);
		free(t);
		return res;
	}
	return r->verdict == VERDICT_REFUTED ? "refuted" : r->reason ? r->reason : "not proven";
}

/* Choose the index dtype of each group: int32 when proven, else int64
 * when proven and allowed, else reject. */
static bool choose_index_types(Flattener *fl, const Context *ctx, FlatBuffer *fb)
{
	const Buffer *b = fb->physical;
	for (int g = 0; g < fb->ngroups; g++) {
		int first = fb->group_first[g];
		int last = g + 1 < fb->ngroups ? fb->group_first[g + 1] - 1 : b->ndim - 1;
		ObligationResult r32 = {0}, r64 = {0};
		DType prefer = fl->opt.prefer == DT_INT64 ? DT_INT64 : DT_INT32;
		if (prefer == DT_INT32 &&
		    prove_group_fits(fl, ctx, b, first, last, DT_INT32, &r32) == VERDICT_PROVEN) {
			fb->index_dtype[g] = DT_INT32;
			continue;
		}
		if ((prefer == DT_INT64 || fl->opt.allow_int64) &&
		    prove_group_fits(fl, ctx, b, first, last, DT_INT64, &r64) == VERDICT_PROVEN) {
			fb->index_dtype[g] = DT_INT64;
			fl->stats->nwidened += prefer == DT_INT32;
			continue;
		}
		char *shape = shape_text(b, first, last);
		if (prefer == DT_INT32 && !fl->opt.allow_int64)
			diag_add(fl->d, DIAG_ERROR, b->span,
				 "cannot flatten buffer %s: axes %s may have a flat index beyond int32 "
				 "(%s) and widening to int64 is disabled",
				 b->name, shape, why_not(fl->a, &r32));
		else
			diag_add(fl->d, DIAG_ERROR, b->span,
				 "cannot flatten buffer %s: axes %s may have a flat index beyond int64 (%s)",
				 b->name, shape, why_not(fl->a, &r64));
		free(shape);
		return false;
	}
	if (fb->ngroups > 1) {
		ObligationResult r = {0};
		if (prove_offset_fits(fl, ctx, b, &r) != VERDICT_PROVEN) {
			char *shape = shape_text(b, 0, b->ndim - 1);
			diag_add(fl->d, DIAG_ERROR, b->span,
				 "cannot flatten buffer %s: shape %s may have element offsets beyond "
				 "int64 (%s)", b->name, shape, why_not(fl->a, &r));
			free(shape);
			return false;
		}
	}
	return true;
}

/* ---------- building the flat buffer ---------- */

static void log_flatten(Flattener *fl, const FlatBuffer *fb, bool ok)
{
	if (!fl->log)
		return;
	StrBuf s = {0};
	char *phys = shape_text(fb->physical, 0, fb->physical->ndim - 1);
	sb_printf(&s, "%s %s ->", fb->physical->name, phys);
	free(phys);
	for (int g = 0; ok && g < fb->ngroups; g++) {
		char *e = print_expr(fb->flat->shape[g]);
		sb_printf(&s, "%s%s: %s", g ? ", " : " (", e, dtype_name(fb->index_dtype[g]));
		free(e);
	}
	sb_puts(&s, ok ? ")" : " rejected");
	char *args = sb_take(&s);
	proof_log_rewrite(fl->log, "flatten", args, ok ? "committed" : "rejected", NULL);
	free(args);
}

static FlatBuffer *flat_buffer(Flattener *fl, const Buffer *b, bool is_param, const Context *ctx)
{
	Arena *a = fl->a;
	VEC_RESERVE(a, fl->bufs, fl->nbufs, fl->capbufs);
	FlatBuffer *fb = &fl->bufs[fl->nbufs++];
	memset(fb, 0, sizeof *fb);
	fb->physical = b;
	fb->is_param = is_param;
	fb->ngroups = b->naxis_separators + 1;
	fb->group_first = arena_alloc(a, sizeof(int) * (size_t)fb->ngroups);
	fb->index_dtype = arena_alloc(a, sizeof(DType) * (size_t)fb->ngroups);
	for (int g = 1; g < fb->ngroups; g++)
		fb->group_first[g] = b->axis_separators[g - 1];
	if (b->ndim == 0) { /* a scalar buffer: one group of no axes, index 0 */
		fb->ngroups = 1;
		fb->index_dtype[0] = DT_INT32;
	} else if (!choose_index_types(fl, ctx, fb)) {
		log_flatten(fl, fb, false);
		fl->failed = true;
		return NULL;
	}
	Expr **shape = arena_alloc(a, sizeof(Expr *) * (size_t)fb->ngroups);
	for (int g = 0; g < fb->ngroups; g++) {
		int first = fb->group_first[g];
		int last = g + 1 < fb->ngroups ? fb->group_first[g + 1] - 1 : b->ndim - 1;
		DType t = fb->index_dtype[g];
		Expr *p = ir_int(a, 1, t, (Span){0});
		for (int k = first; k <= last; k++)
			p = fold_bin(a, OP_MUL, p, as_dtype(a, b->shape[k], t));
		shape[g] = p;
	}
	Buffer *flat = ir_buffer(a, b->name, b->dtype, fb->ngroups, shape, b->span);
	flat->scope = b->scope;
	/* A flattened N-d buffer keeps N-1 separators (seed 001): flattening
	 * it again changes nothing, and it differs from an unflattened one. */
	flat->naxis_separators = fb->ngroups - 1;
	flat->axis_separators = arena_alloc(a, sizeof(int) * (size_t)fb->ngroups);
	for (int g = 1; g < fb->ngroups; g++)
		flat->axis_separators[g - 1] = g;
	flat->layout = NULL; /* plain memory: padding facts were used by the proofs */
	fb->flat = flat;
	log_flatten(fl, fb, true);
	return fb;
}

static FlatBuffer *find_flat(Flattener *fl, const Buffer *b)
{
	for (int i = fl->nbufs - 1; i >= 0; i--)
		if (fl->bufs[i].physical == b)
			return &fl->bufs[i];
	return NULL;
}

/* The flat indices of an access: Horner's rule within each group. */
static Expr **flat_indices(Arena *a, const FlatBuffer *fb, int nidx, Expr **idx)
{
	const Buffer *b = fb->physical;
	Expr **out = arena_alloc(a, sizeof(Expr *) * (size_t)fb->ngroups);
	for (int g = 0; g < fb->ngroups; g++) {
		int first = fb->group_first[g];
		int last = g + 1 < fb->ngroups ? fb->group_first[g + 1] - 1 : nidx - 1;
		DType t = fb->index_dtype[g];
		Expr *acc = b->ndim == 0 ? ir_int(a, 0, t, (Span){0}) : as_dtype(a, idx[first], t);
		for (int k = first + 1; k <= last; k++)
			acc = fold_bin(a, OP_ADD, fold_bin(a, OP_MUL, acc, as_dtype(a, b->shape[k], t)),
				       as_dtype(a, idx[k], t));
		out[g] = acc;
	}
	return out;
}

/* ---------- rewriting accesses ---------- */

static void record_access(Flattener *fl, const void *node, const FlatBuffer *fb, Expr **axis)
{
	VEC_RESERVE(fl->a, fl->accesses, fl->naccesses, fl->capaccesses);
	fl->accesses[fl->naccesses++] = (FlatAccess){node, (int)(fb - fl->bufs), axis};
}

static Expr *flat_expr(Flattener *fl, Expr *e);

static Expr **flat_exprs(Flattener *fl, int n, Expr **xs, bool *changed)
{
	Expr **out = arena_alloc(fl->a, sizeof(Expr *) * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		out[i] = flat_expr(fl, xs[i]);
		*changed |= out[i] != xs[i];
	}
	return out;
}

static Expr *flat_load(Flattener *fl, Expr *e)
{
	bool changed = false;
	Expr **idx = flat_exprs(fl, e->u.load.nidx, e->u.load.idx, &changed);
	FlatBuffer *fb = find_flat(fl, e->u.load.buf);
	if (!fb) {
		diag_add(fl->d, DIAG_ERROR, e->span,
			 "internal: load of buffer %s, which is neither a parameter nor allocated",
			 e->u.load.buf->name);
		fl->failed = true;
		return e;
	}
	Expr **flat = flat_indices(fl->a, fb, e->u.load.nidx, idx);
	Expr *load = ir_load(fl->a, fb->flat, fb->ngroups, flat, e->span);
	record_access(fl, load, fb, idx);
	return load;
}

static Expr *flat_expr(Flattener *fl, Expr *e);

static Expr *flat_child(void *fl, Expr *e) { return flat_expr(fl, e); }

static Expr *flat_expr(Flattener *fl, Expr *e)
{
	Arena *a = fl->a;
	Expr *x, *y, *z;
	switch (e->kind) {
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return e;
	case EX_OPAQUE: /* lower_func refuses it before flattening */
		return e;
	case EX_BIN:
		x = flat_expr(fl, e->u.bin.a);
		y = flat_expr(fl, e->u.bin.b);
		if (x == e->u.bin.a && y == e->u.bin.b)
			return e;
		z = ir_bin(a, e->u.bin.op, x, y, e->span);
		z->dtype = e->dtype;
		return z;
	case EX_NOT: case EX_NEG: case EX_CAST:
		x = flat_expr(fl, e->u.un.a);
		if (x == e->u.un.a)
			return e;
		z = arena_alloc(a, sizeof *z);
		*z = *e;
		z->u.un.a = x;
		return z;
	case EX_SELECT: {
		Expr *c = flat_expr(fl, e->u.sel.cond);
		x = flat_expr(fl, e->u.sel.a);
		y = flat_expr(fl, e->u.sel.b);
		if (c == e->u.sel.cond && x == e->u.sel.a && y == e->u.sel.b)
			return e;
		z = arena_alloc(a, sizeof *z);
		*z = *e;
		z->u.sel.cond = c;
		z->u.sel.a = x;
		z->u.sel.b = y;
		return z;
	}
	case EX_LOAD:
		return flat_load(fl, e);
	case EX_LET:
		x = flat_expr(fl, e->u.let.value);
		y = flat_expr(fl, e->u.let.body);
		if (x == e->u.let.value && y == e->u.let.body)
			return e;
		return ir_let(a, e->u.let.var, x, y, e->span);
	case EX_CALL:
		return expr_map_children(a, e, flat_child, fl);
	case EX_COUNT:
		break;
	}
	return e;
}

static Stmt *flat_stmt(Flattener *fl, Stmt *s, Context *ctx);

static Stmt *flat_store(Flattener *fl, Stmt *s)
{
	bool changed = false;
	Expr **idx = flat_exprs(fl, s->u.store.nidx, s->u.store.idx, &changed);
	Expr *value = flat_expr(fl, s->u.store.value);
	FlatBuffer *fb = find_flat(fl, s->u.store.buf);
	if (!fb) {
		diag_add(fl->d, DIAG_ERROR, s->span,
			 "internal: store to buffer %s, which is neither a parameter nor allocated",
			 s->u.store.buf->name);
		fl->failed = true;
		return s;
	}
	Expr **flat = flat_indices(fl->a, fb, s->u.store.nidx, idx);
	Stmt *store = ir_store(fl->a, fb->flat, fb->ngroups, flat, value, s->span);
	record_access(fl, store, fb, idx);
	return store;
}

/* An allocation's extents may mention the loops and lets around it. */
static Stmt *flat_alloc(Flattener *fl, Stmt *s, Context *ctx)
{
	if (!flat_buffer(fl, s->u.alloc.buf, false, ctx))
		return s;
	Buffer *flat = fl->bufs[fl->nbufs - 1].flat; /* bufs may move below */
	Stmt *body = s->u.alloc.body ? flat_stmt(fl, s->u.alloc.body, ctx) : NULL;
	return ir_alloc(fl->a, flat, body, s->span);
}

static Stmt *flat_for(Flattener *fl, Stmt *s, Context *ctx)
{
	Arena *a = fl->a;
	Context inner = ctx_copy(a, ctx);
	Var *v = s->u.loop.var;
	ctx_add_var(a, &inner, v);
	Expr *x = as_dtype(a, ir_varref(a, v, (Span){0}), DT_INT64);
	Expr *lo = as_dtype(a, s->u.loop.min, DT_INT64);
	ctx_add_hyp(a, &inner, ir_bin(a, OP_LE, lo, x, (Span){0}));
	ctx_add_hyp(a, &inner, ir_bin(a, OP_LT, x, ir_add(a, lo, as_dtype(a, s->u.loop.extent, DT_INT64)),
				      (Span){0}));
	Expr *min = flat_expr(fl, s->u.loop.min), *ext = flat_expr(fl, s->u.loop.extent);
	Stmt *body = flat_stmt(fl, s->u.loop.body, &inner);
	return ir_for(a, v, min, ext, s->u.loop.kind, body, s->span);
}

static Stmt *flat_stmt(Flattener *fl, Stmt *s, Context *ctx)
{
	Arena *a = fl->a;
	switch (s->kind) {
	case ST_SEQ: {
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
		for (int i = 0; i < s->u.seq.n; i++)
			items[i] = flat_stmt(fl, s->u.seq.items[i], ctx);
		return ir_seq(a, s->u.seq.n, items, s->span);
	}
	case ST_FOR:
		return flat_for(fl, s, ctx);
	case ST_IF:
		return ir_if(a, flat_expr(fl, s->u.cond.cond), flat_stmt(fl, s->u.cond.then_s, ctx),
			     s->u.cond.else_s ? flat_stmt(fl, s->u.cond.else_s, ctx) : NULL, s->span);
	case ST_STORE:
		return flat_store(fl, s);
	case ST_ASSUME:
		return ir_assume(a, flat_expr(fl, s->u.expr), s->span);
	case ST_EVAL:
		return ir_eval(a, flat_expr(fl, s->u.expr), s->span);
	case ST_ALLOC:
		return flat_alloc(fl, s, ctx);
	case ST_BLOCK:
		return ir_block_with(a, s, flat_stmt(fl, s->u.block.body, ctx));
	case ST_LET: {
		Context inner = ctx_copy(a, ctx);
		Var *v = s->u.let.var;
		ctx_add_var(a, &inner, v);
		if (dtype_is_int(v->dtype) && dtype_is_int(s->u.let.value->dtype) &&
		    dtype_bits(s->u.let.value->dtype) <= dtype_bits(v->dtype))
			ctx_add_hyp(a, &inner, ir_bin(a, OP_EQ, ir_varref(a, v, (Span){0}),
						      s->u.let.value, (Span){0}));
		return ir_letstmt(a, v, flat_expr(fl, s->u.let.value),
				  flat_stmt(fl, s->u.let.body, &inner), s->span);
	}
	case ST_PASS:
		return s;
	case ST_COUNT:
		break;
	}
	return s;
}

bool lower_flatten(Arena *a, Solver *solver, FloatMode fm, ProofLog *log,
		   const FlattenOptions *opt, const Func *source, const Func *f,
		   LoweredFunc *out, LowerStats *stats, DiagList *d)
{
	LowerStats scratch = {0};
	Flattener fl = {.a = a, .solver = solver, .fm = fm, .log = log, .d = d,
			.stats = stats ? stats : &scratch};
	if (opt)
		fl.opt = *opt;
	else
		fl.opt.allow_int64 = true;
	memset(out, 0, sizeof *out);
	Context params = {0};
	param_context(a, source ? source : f, &params);
	Param *ps = arena_alloc(a, sizeof(Param) * (size_t)(f->nparams ? f->nparams : 1));
	for (int i = 0; i < f->nparams; i++) {
		ps[i] = f->params[i];
		if (!ps[i].buf || ps[i].kind == PARAM_SCALAR)
			continue;
		FlatBuffer *fb = flat_buffer(&fl, ps[i].buf, true, &params);
		if (fb)
			ps[i].buf = fb->flat;
	}
	if (fl.failed)
		return false;
	Stmt *body = flat_stmt(&fl, f->body, &params);
	if (fl.failed)
		return false;
	out->func = ir_func(a, f->name, f->nparams, ps, body, f->span);
	out->source = source ? source : f;
	out->nbufs = fl.nbufs;
	out->bufs = fl.bufs;
	out->naccesses = fl.naccesses;
	out->accesses = fl.accesses;
	return true;
}
