/* rewrites/layout.c — transform_layout: every access X[x] becomes X'[f(x)]
 * (seed 000, seed 001, semantics.md section 4). Obligations over the
 * logical domain D: layout.in_bounds (0 <= f_k(x) < S_k), layout.injective
 * (f(x) == f(y) -> x == y), layout.left_inverse (g(f(x)) == x for the
 * derived or given g), layout.pad_predicate when the printed padding
 * predicate was shortened, layout.pad_value_reads for a pad value that
 * reads the buffer (and layout.pad_value_readable for an allocation: the
 * cells read are initialised). With a pad value, a stage after the last
 * write fills the padding (produced buffers) or an entry T.assume states
 * it (inputs). */
#include "rewrites/block_nest.h"
#include "rewrites/layout.h"

#include <string.h>

#include "kernel/analysis/facts.h"
#include "kernel/analysis/index_map.h"
#include "kernel/parse.h"
#include "kernel/print.h"

static Span nospan(void) { return (Span){0}; }

static Expr *varref(Arena *a, Var *v) { return ir_varref(a, v, nospan()); }

static Expr **varrefs(Arena *a, int n, Var **vs)
{
	Expr **out = arena_alloc(a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		out[i] = varref(a, vs[i]);
	return out;
}

/* ---------- finding the buffer ---------- */

Buffer *rw_find_buffer(const Func *f, const char *name, bool *is_param)
{
	for (int i = 0; i < f->nparams; i++) {
		Buffer *b = f->params[i].buf;
		if (b && strcmp(b->name, name) == 0) {
			*is_param = true;
			return b;
		}
	}
	*is_param = false;
	return stmt_find_alloc(f->body, name);
}

Stmt *rw_find_block(const Func *f, const char *name) { return stmt_find_block(f->body, name); }

bool rw_assumed(const Stmt *s, const Var *v)
{
	if (s->kind == ST_ASSUME && ir_expr_uses_var(s->u.expr, v))
		return true;
	for (int i = 0; i < stmt_nchildren(s); i++) {
		const Stmt *ch = stmt_child(s, i);
		if (ch && rw_assumed(ch, v))
			return true;
	}
	return false;
}

/* A variable of the map other than its indices that no T.assume bounds
 * (a size variable n), or NULL. */
static const Var *unbounded_size_var(const Func *f, const Expr *e, int nin, Var **in)
{
	switch (e->kind) {
	case EX_VAR: {
		for (int i = 0; i < nin; i++)
			if (in[i] == e->u.var)
				return NULL;
		return rw_assumed(f->body, e->u.var) ? NULL : e->u.var;
	}
	case EX_INT: case EX_FLOAT: case EX_NOT: case EX_NEG: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_BIN: case EX_COUNT:
		break;
	}
	for (int i = 0; i < expr_nchildren(e); i++) {
		const Expr *ch = expr_child(e, i);
		const Var *v = ch ? unbounded_size_var(f, ch, nin, in) : NULL;
		if (v)
			return v;
	}
	return NULL;
}

/* ---------- reads and writes of a buffer ---------- */

bool rw_stmt_accesses(const Stmt *s, const Buffer *b, bool writes_only)
{
	return an_first_store(s, b) || (!writes_only && an_stmt_reads(s, b));
}

/* ---------- placing the padding stage ---------- */

/* x; y as one flat sequence */
static Stmt *seq2(Arena *a, Stmt *x, Stmt *y)
{
	int nx = x->kind == ST_SEQ ? x->u.seq.n : 1, ny = y->kind == ST_SEQ ? y->u.seq.n : 1;
	Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(nx + ny));
	if (x->kind == ST_SEQ)
		memcpy(items, x->u.seq.items, sizeof(Stmt *) * (size_t)nx);
	else
		items[0] = x;
	if (y->kind == ST_SEQ)
		memcpy(items + nx, y->u.seq.items, sizeof(Stmt *) * (size_t)ny);
	else
		items[nx] = y;
	return ir_seq(a, nx + ny, items, x->span);
}

/* s with `stage` placed right after the statement that last writes b, at
 * the outermost level of the binder spine (let / allocate bodies, and the
 * block, loop or branch that allocates b: the stage must stay in b's
 * scope, once per allocation), and inside a loop or block that holds the
 * writer block together with other statements (semantics.md: after the
 * block that last writes b). */
/* A block that writes b with no block inside it that does. */
static bool leaf_writer(const Stmt *s, void *ud)
{
	const Buffer *b = ud;
	if (s->kind != ST_BLOCK || !rw_stmt_accesses(s->u.block.body, b, true))
		return false;
	for (int i = 0; i < stmt_nchildren(s); i++)
		if (stmt_find(stmt_child(s, i), leaf_writer, ud))
			return false;
	return true;
}

/* A leaf writer block, or a perfect nest of loops around one (TVM puts
 * its blocks inside their loops): the stage follows it as a whole. */
static bool write_nest(const Stmt *s, const Buffer *b)
{
	while (s->kind == ST_FOR)
		s = s->u.loop.body;
	return leaf_writer(s, (void *)b);
}

/* A loop or block around the writer block and other statements (after
 * compute_at: `for xo: block B (writes); reads of B`): the stage goes
 * inside, right after the writer, not after the whole statement, where
 * the reads in each iteration would see the padding unfilled. */
static bool holds_writer(const Stmt *s, const Buffer *b)
{
	if ((s->kind != ST_FOR && s->kind != ST_BLOCK) || write_nest(s, b))
		return false;
	for (int i = 0; i < stmt_nchildren(s); i++)
		if (stmt_find(stmt_child(s, i), leaf_writer, (void *)b))
			return true;
	return false;
}

Stmt *rw_insert_after_last_write(Arena *a, Stmt *s, const Buffer *b, Stmt *stage)
{
	switch (s->kind) {
	case ST_SEQ: {
		int k = -1;
		for (int i = 0; i < s->u.seq.n; i++)
			if (rw_stmt_accesses(s->u.seq.items[i], b, true))
				k = i;
		if (k < 0)
			return s;
		Stmt *x = s->u.seq.items[k];
		Stmt *nx = rw_insert_after_last_write(a, x, b, stage);
		int n = s->u.seq.n;
		Stmt **items = arena_alloc(a, sizeof(Stmt *) * (size_t)(n + 2));
		memcpy(items, s->u.seq.items, sizeof(Stmt *) * (size_t)n);
		if (nx != x && (x->kind == ST_ALLOC || x->kind == ST_LET || an_allocates(x, b) ||
				holds_writer(x, b))) {
			items[k] = nx;
			return ir_seq(a, n, items, s->span);
		}
		memmove(items + k + 2, items + k + 1, sizeof(Stmt *) * (size_t)(n - k - 1));
		items[k + 1] = stage;
		return ir_seq(a, n + 1, items, s->span);
	}
	case ST_ALLOC:
		return ir_alloc(a, s->u.alloc.buf,
				rw_insert_after_last_write(a, s->u.alloc.body, b, stage), s->span);
	case ST_LET:
		return ir_letstmt(a, s->u.let.var, s->u.let.value,
				  rw_insert_after_last_write(a, s->u.let.body, b, stage), s->span);
	case ST_BLOCK:
		if (an_allocates(s, b) || holds_writer(s, b))
			return ir_block_with(a, s, rw_insert_after_last_write(a, s->u.block.body,
									      b, stage));
		return seq2(a, s, stage);
	case ST_FOR:
		if (an_allocates(s, b) || holds_writer(s, b))
			return ir_for(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind,
				      rw_insert_after_last_write(a, s->u.loop.body, b, stage), s->span);
		return seq2(a, s, stage);
	case ST_IF:
		if (an_allocates(s->u.cond.then_s, b))
			return ir_if(a, s->u.cond.cond,
				     rw_insert_after_last_write(a, s->u.cond.then_s, b, stage),
				     s->u.cond.else_s, s->span);
		if (s->u.cond.else_s && an_allocates(s->u.cond.else_s, b))
			return ir_if(a, s->u.cond.cond, s->u.cond.then_s,
				     rw_insert_after_last_write(a, s->u.cond.else_s, b, stage), s->span);
		return seq2(a, s, stage);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return seq2(a, s, stage);
	}
	return s;
}

/* for t in grid(shape): body(t), outermost first */
static Stmt *grid(Arena *a, int n, Var **vars, Expr **extent, Stmt *body, Span sp)
{
	for (int k = n - 1; k >= 0; k--)
		body = ir_for(a, vars[k], ir_int(a, 0, vars[k]->dtype, nospan()), extent[k],
			      FOR_SERIAL, body, sp);
	return body;
}

static const char *unique_block_name(Arena *a, const Func *f, const char *base)
{
	const char *name = base;
	for (int k = 1; stmt_find_block(f->body, name); k++)
		name = arena_printf(a, "%s_%d", base, k);
	return name;
}

/* ---------- the pad value ---------- */

typedef struct PadSpec {
	PadKind kind;
	Expr *value; /* PAD_VALUE: over the physical variables */
} PadSpec;

static bool loads_only(const Expr *e, const Buffer *b)
{
	switch (e->kind) {
	case EX_OPAQUE:
		return false;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_UNDEF:
		return true;
	case EX_LOAD:
		if (e->u.load.buf != b)
			return false;
		for (int i = 0; i < e->u.load.nidx; i++)
			if (!loads_only(e->u.load.idx[i], b))
				return false;
		return true;
	case EX_BIN: return loads_only(e->u.bin.a, b) && loads_only(e->u.bin.b, b);
	case EX_NOT: case EX_NEG: case EX_CAST: return loads_only(e->u.un.a, b);
	case EX_SELECT:
		return loads_only(e->u.sel.cond, b) && loads_only(e->u.sel.a, b) &&
		       loads_only(e->u.sel.b, b);
	case EX_LET: return loads_only(e->u.let.value, b) && loads_only(e->u.let.body, b);
	case EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!loads_only(e->u.call.args[i], b))
				return false;
		return true;
	case EX_COUNT: break;
	}
	return false;
}

/* A constant of the buffer's dtype. */
static Expr *convert_const(Arena *a, Expr *e, DType t)
{
	if (e->kind == EX_INT && dtype_is_float(t))
		return ir_float(a, (double)e->u.ival, t, e->span);
	if (e->kind == EX_FLOAT && dtype_is_float(t))
		return ir_float(a, e->u.fval, t, e->span);
	if (e->dtype == t)
		return e;
	return ir_cast(a, t, e, e->span);
}

/* The pad value for function f (whose logical buffer is `logical`, new
 * buffer `phys`, physical variables `pv`). */
static RwStatus pad_spec(RwCtx *c, const LayoutArgs *args, const Func *f, Buffer *logical,
			 Buffer *phys, int npv, Var **pv, PadSpec *out)
{
	Arena *a = c->arena;
	out->value = NULL;
	switch (args->pad_kind) {
	case LAYOUT_PAD_NONE:
		out->kind = PAD_NONE_GIVEN;
		return RW_OK;
	case LAYOUT_PAD_UNDEF:
		out->kind = PAD_UNDEF;
		return RW_OK;
	case LAYOUT_PAD_INT:
		out->kind = PAD_VALUE;
		out->value = convert_const(a, ir_int(a, args->pad_int, DT_INT64, args->pad_span), phys->dtype);
		if (!dtype_is_float(phys->dtype))
			out->value = ir_int(a, args->pad_int, phys->dtype, args->pad_span);
		return RW_OK;
	case LAYOUT_PAD_FLOAT:
		if (!dtype_is_float(phys->dtype))
			return rw_fail(c, RW_BAD_INPUT, args->pad_span,
				       "transform_layout: pad_value %g is a float but buffer %s is %s",
				       args->pad_float, phys->name, dtype_name(phys->dtype));
		out->kind = PAD_VALUE;
		out->value = ir_float(a, args->pad_float, phys->dtype, args->pad_span);
		return RW_OK;
	case LAYOUT_PAD_EXPR:
	case LAYOUT_PAD_LAMBDA:
		break;
	}
	DiagList d;
	diag_init(&d, a);
	/* the buffer named in the pad value is the transformed one, read at
	 * physical indices (seed 000: lambda io, ii: B[0, (io - 14) % 4]) */
	Buffer *shadow[1] = {phys};
	ParseScope scope = {.func = f, .nbufs = 1, .bufs = shadow};
	const Source *pad_src = args->pad_src ? args->pad_src : args->src;
	Expr *body;
	if (args->pad_kind == LAYOUT_PAD_LAMBDA) {
		Lambda *l = parse_lambda_range(a, pad_src, args->pad_start, args->pad_end, &scope, &d);
		if (!l || l->nbody != 1 || l->bracketed || l->nparams != npv) {
			if (l)
				return rw_fail(c, RW_BAD_INPUT, args->pad_span,
					       "transform_layout: pad_value must be a lambda of the %d physical indices returning one value",
					       npv);
			for (Diag *g = d.first; g; g = g->next)
				diag_add(c->diag, g->level, g->span, "%s", g->message);
			return RW_BAD_INPUT;
		}
		Expr **refs = varrefs(a, npv, pv);
		body = ir_subst_expr(a, l->body[0], npv, l->params, refs);
	} else {
		body = parse_expr_range(a, pad_src, args->pad_start, args->pad_end, &scope, &d);
		if (!body) {
			for (Diag *g = d.first; g; g = g->next)
				diag_add(c->diag, g->level, g->span, "%s", g->message);
			return RW_BAD_INPUT;
		}
	}
	if (body->kind == EX_UNDEF) {
		out->kind = PAD_UNDEF;
		return RW_OK;
	}
	if (!loads_only(body, phys))
		return rw_fail(c, RW_BAD_INPUT, args->pad_span,
			       "transform_layout: a pad value may read only the buffer %s itself (seed 000)",
			       logical->name);
	/* a typed value (T.int8(0)) is of its own dtype, as in TVM: one of
	 * another dtype than the buffer's is refused, never converted; only
	 * a plain number or a lambda's arithmetic takes the buffer's dtype */
	if (args->pad_kind == LAYOUT_PAD_EXPR && body->dtype != phys->dtype) {
		char *txt = print_expr(body);
		RwStatus st = rw_fail(c, RW_BAD_INPUT, args->pad_span,
				      "transform_layout: pad_value %s is %s but buffer %s is %s", txt,
				      dtype_name(body->dtype), phys->name, dtype_name(phys->dtype));
		free(txt);
		return st;
	}
	out->kind = PAD_VALUE;
	out->value = body->kind == EX_INT || body->kind == EX_FLOAT ? convert_const(a, body, phys->dtype)
								    : body;
	if (out->value->dtype != phys->dtype)
		out->value = ir_cast(a, phys->dtype, out->value, args->pad_span);
	return RW_OK;
}

/* ---------- obligations ---------- */

static Obligation *new_ob(RwCtx *c, const char *kind, const char *stmt, Expr *goal)
{
	Obligation *o = obligation_new(c->arena, kind, stmt, 0, NULL, 0, NULL, goal, c->call_span);
	o->rewrite = c->desc;
	StmtCtx none;
	memset(&none, 0, sizeof none);
	rw_add_context_hyps(c, o, &none);
	return o;
}

static void add_vars(Arena *a, Obligation *o, int n, Var **vs)
{
	for (int i = 0; i < n; i++)
		obligation_add_var(a, o, vs[i]);
}

static void map_obligations(RwCtx *c, const IndexMap *m, const Buffer *logical)
{
	Arena *a = c->arena;
	Expr **x = varrefs(a, m->nin, m->in);
	Expr *in_d = imap_in_box(a, m->nin, x, m->in_extent);
	/* layout.in_bounds: 0 <= f_k(x) < S_k on D */
	for (int k = 0; k < m->nout; k++) {
		Expr *goal = imap_in_box(a, 1, &m->out[k], &m->shape[k]);
		Obligation *o = new_ob(c, "layout.in_bounds",
				       arena_printf(a, "output %d of the index map of %s stays inside the physical shape",
						    k, logical->name),
				       goal);
		add_vars(a, o, m->nin, m->in);
		if (in_d)
			obligation_add_hyp(a, o, in_d);
		obligation_add_related(a, o, logical->span);
		oblist_push(a, &c->obs, o);
	}
	/* layout.injective: f(x) == f(y) -> x == y on D */
	Var **y = arena_alloc(a, sizeof(Var *) * (size_t)(m->nin + 1));
	for (int i = 0; i < m->nin; i++)
		y[i] = an_fresh_var(a, m->in[i], "_2");
	Expr **yr = varrefs(a, m->nin, y);
	Expr *same_out = NULL, *same_in = NULL;
	for (int k = 0; k < m->nout; k++) {
		Expr *fy = ir_subst_expr(a, m->out[k], m->nin, m->in, yr);
		same_out = ir_and(a, same_out, ir_bin(a, OP_EQ, m->out[k], fy, nospan()));
	}
	for (int i = 0; i < m->nin; i++)
		same_in = ir_and(a, same_in, ir_bin(a, OP_EQ, x[i], yr[i], nospan()));
	Obligation *o = new_ob(c, "layout.injective",
			       arena_printf(a, "the index map sends different indices of %s to different cells",
					    logical->name),
			       same_in ? same_in : ir_bool(a, true));
	add_vars(a, o, m->nin, m->in);
	add_vars(a, o, m->nin, y);
	if (in_d)
		obligation_add_hyp(a, o, in_d);
	Expr *in_d2 = imap_in_box(a, m->nin, yr, m->in_extent);
	if (in_d2)
		obligation_add_hyp(a, o, in_d2);
	if (same_out)
		obligation_add_hyp(a, o, same_out);
	obligation_add_related(a, o, logical->span);
	oblist_push(a, &c->obs, o);
	if (!m->inverse)
		return;
	/* layout.left_inverse: g(f(x)) == x on D */
	Expr *goal = NULL;
	for (int j = 0; j < m->nin; j++) {
		Expr *gf = ir_subst_expr(a, m->inverse[j], m->nout, m->phys, m->out);
		goal = ir_and(a, goal, ir_bin(a, OP_EQ, gf, x[j], nospan()));
	}
	o = new_ob(c, "layout.left_inverse",
		   arena_printf(a, "the inverse map recovers every index of %s", logical->name),
		   goal ? goal : ir_bool(a, true));
	add_vars(a, o, m->nin, m->in);
	if (in_d)
		obligation_add_hyp(a, o, in_d);
	oblist_push(a, &c->obs, o);
}

static void pad_predicate_obligation(RwCtx *c, const IndexMap *m, Expr *pad, Expr *full,
				     const Buffer *logical)
{
	Arena *a = c->arena;
	Expr **t = varrefs(a, m->nout, m->phys);
	Obligation *o = new_ob(c, "layout.pad_predicate",
			       arena_printf(a, "the shortened padding predicate of %s is exact on the physical shape",
					    logical->name),
			       ir_bin(a, OP_EQ, pad, full, nospan()));
	add_vars(a, o, m->nout, m->phys);
	Expr *box = imap_in_box(a, m->nout, t, m->shape);
	if (box)
		obligation_add_hyp(a, o, box);
	oblist_push(a, &c->obs, o);
}

/* What the pad-value obligations of one stage share. */
typedef struct PadCheck {
	RwCtx *c;
	const IndexMap *m;
	Buffer *phys;
	const Layout *lay;  /* pad_reads */
	const Func *out;    /* pad_readable: the function with the stage */
	const Stmt *stage;  /* pad_readable */
	const FactSet *fs;  /* pad_readable */
	Expr *pad;
} PadCheck;

/* An obligation about the load e of the pad value: over the physical
 * indices inside their shape where the padding predicate holds. */
static void pad_obligation(const PadCheck *p, const char *kind, const char *stmt, Expr *goal,
			   const Expr *e)
{
	Arena *a = p->c->arena;
	const IndexMap *m = p->m;
	Obligation *o = new_ob(p->c, kind, stmt, goal);
	add_vars(a, o, m->nout, m->phys);
	Expr **t = varrefs(a, m->nout, m->phys);
	Expr *box = imap_in_box(a, m->nout, t, m->shape);
	if (box)
		obligation_add_hyp(a, o, box);
	obligation_add_hyp(a, o, p->pad);
	obligation_add_related(a, o, e->span);
	if (p->stage)
		obligation_add_related(a, o, p->stage->span);
	oblist_push(a, &p->c->obs, o);
}

/* Loads of the buffer in a pad value read inside the shape and outside
 * the padding (the padding is being filled in some order). */
static void pad_read_at(const Expr *e, void *ud)
{
	const PadCheck *p = ud;
	if (e->kind != EX_LOAD)
		return;
	Arena *a = p->c->arena;
	const Layout *lay = p->lay;
	Expr *inside = imap_in_box(a, p->phys->ndim, e->u.load.idx, p->phys->shape);
	Expr *all = lay->all_padding ? lay->all_padding : lay->pad_predicate;
	Expr *is_pad = ir_subst_expr(a, all, p->m->nout, p->m->phys, e->u.load.idx);
	Expr *goal = ir_and(a, inside, ir_not(a, is_pad, nospan()));
	pad_obligation(p, "layout.pad_value_reads",
		       arena_printf(a, "the pad value reads %s inside its shape and outside its padding",
				    p->phys->name),
		       goal, e);
}

static void pad_reads(RwCtx *c, const IndexMap *m, const Expr *e, Buffer *phys,
		      const Layout *lay, Expr *pad)
{
	PadCheck p = {.c = c, .m = m, .phys = phys, .lay = lay, .pad = pad};
	expr_each_post(e, pad_read_at, &p);
}

/* layout.pad_value_readable: the pad stage of an allocation reads only
 * cells that are initialised there (an allocation holds nothing until
 * written; a parameter's logical cells are inputs, checked by
 * pad_value_reads). The facts are those at the stage in `out`. */
static void pad_readable_at(const Expr *e, void *ud)
{
	const PadCheck *p = ud;
	if (e->kind != EX_LOAD || e->u.load.buf != p->phys)
		return;
	Arena *a = p->c->arena;
	Expr *ok = an_readable(a, p->out, p->fs, p->phys, e->u.load.nidx, e->u.load.idx);
	pad_obligation(p, "layout.pad_value_readable",
		       arena_printf(a, "the pad value reads only cells of %s its producer initialised",
				    p->phys->name),
		       ok, e);
}

static void pad_readable(RwCtx *c, const IndexMap *m, const Func *out, const Stmt *stage,
			 const Expr *e, Buffer *phys, Expr *pad, const FactSet *fs)
{
	PadCheck p = {.c = c, .m = m, .phys = phys, .out = out, .stage = stage, .fs = fs, .pad = pad};
	expr_each_post(e, pad_readable_at, &p);
}

/* ---------- one function ---------- */

/* The layout of the previous step's predicates at g(t). */
static Expr *prev_at(Arena *a, const Layout *prev, const Expr *pred, const IndexMap *m)
{
	return ir_subst_expr(a, (Expr *)pred, prev->nvars ? m->nin : 0, prev->inv_vars, m->inverse);
}

static Layout *make_layout(Arena *a, Buffer *logical, const IndexMap *m, Expr *pad,
			   const PadSpec *ps)
{
	Layout *l = arena_alloc(a, sizeof *l);
	l->logical = logical;
	l->nvars = m->nin;
	l->vars = m->in;
	l->map = m->out;
	l->inv_vars = m->phys;
	l->inverse = m->inverse;
	l->pad_predicate = pad;
	l->pad_kind = ps->kind;
	l->pad_value = ps->value;
	const Layout *prev = logical->layout;
	Expr *own_forbidden = ps->kind == PAD_NONE_GIVEN ? pad : NULL;
	if (!prev) {
		l->all_padding = pad;
		l->forbidden = own_forbidden;
		return l;
	}
	/* earlier steps' padding, seen through this step's inverse */
	Expr *prev_all = prev->all_padding ? prev->all_padding : prev->pad_predicate;
	Expr *prev_forb = prev->forbidden ? prev->forbidden
			  : prev->pad_kind == PAD_NONE_GIVEN ? prev->pad_predicate : NULL;
	Expr *not_pad = imap_negate(a, pad);
	l->all_padding = prev_all ? ir_or(a, pad, ir_and(a, not_pad, prev_at(a, prev, prev_all, m)))
				  : pad;
	Expr *forb = prev_forb ? ir_and(a, not_pad, prev_at(a, prev, prev_forb, m)) : NULL;
	l->forbidden = own_forbidden && forb ? ir_or(a, own_forbidden, forb)
		       : own_forbidden	    ? own_forbidden
					    : forb;
	return l;
}

typedef struct FuncResult {
	Func *func;
	bool changed;
} FuncResult;

/* The inverse= lambda, or a derived left inverse; without either the
 * step rejects after its obligations (reject_after). */
static RwStatus read_inverse(RwCtx *c, const LayoutArgs *args, ParseScope *scope, DiagList *d,
			     IndexMap *m)
{
	Arena *a = c->arena;
	const char *why = NULL;
	if (args->inv_start < args->inv_end) {
		Lambda *inv = parse_lambda_range(a, args->src, args->inv_start, args->inv_end, scope, d);
		if (!inv || inv->nparams != m->nout || inv->nbody != m->nin) {
			if (!inv)
				for (Diag *g = d->first; g; g = g->next)
					diag_add(c->diag, g->level, g->span, "%s", g->message);
			return inv ? rw_fail(c, RW_BAD_INPUT, inv->span,
					     "transform_layout: inverse must take the %d physical indices and return the %d logical ones",
					     m->nout, m->nin)
				   : RW_BAD_INPUT;
		}
		m->phys = inv->params;
		m->inverse = inv->body;
	} else if (!imap_derive_inverse(a, m, &why)) {
		c->reject_after = arena_printf(a, "transform_layout: no left inverse of the index map could be derived (%s); give one with inverse=lambda ...: [...]",
					       why);
	}
	return RW_OK;
}

/* The index map of the script's lambda, parsed in f, with its physical
 * shape, physical index names and inverse. */
static RwStatus read_index_map(RwCtx *c, const LayoutArgs *args, const Func *f,
			       const Buffer *logical, IndexMap *m, Lambda **lambda)
{
	Arena *a = c->arena;
	DiagList d;
	diag_init(&d, a);
	/* the map's indices have the dtypes of the buffer's extents (TVM's
	 * index map dtype legalization: int64 extents, int64 indices) */
	DType *pdt = arena_alloc(a, sizeof(DType) * (size_t)(logical->ndim + 1));
	for (int i = 0; i < logical->ndim; i++)
		pdt[i] = logical->shape[i] && dtype_is_int(logical->shape[i]->dtype) ? logical->shape[i]->dtype
										       : DT_INT32;
	ParseScope scope = {.func = f, .nvars = 0, .vars = NULL, .nparam_dtypes = logical->ndim,
			    .param_dtypes = pdt};
	Lambda *l = parse_lambda_range(a, args->src, args->map_start, args->map_end, &scope, &d);
	if (!l) {
		for (Diag *g = d.first; g; g = g->next)
			diag_add(c->diag, g->level, g->span, "%s", g->message);
		return RW_BAD_INPUT;
	}
	if (l->nbody < 1)
		return rw_fail(c, RW_BAD_INPUT, l->span,
			       "transform_layout: the index map returns no index; it must give at least one");
	if (l->nparams != logical->ndim)
		return rw_fail(c, RW_BAD_INPUT, l->span,
			       "transform_layout: the index map takes %d indices but %s has %d dimensions",
			       l->nparams, logical->name, logical->ndim);
	memset(m, 0, sizeof *m);
	m->nin = l->nparams;
	m->in = l->params;
	m->in_extent = logical->shape;
	m->nout = l->nbody;
	m->out = l->body;
	const char *why = NULL;
	if (!imap_shape(a, m, &why)) {
		/* a size variable in a product or a divisor: without a bound
		 * the shape may wrap (n * 32) or divide by 0 (i // n) */
		const Var *v = NULL;
		for (int k = 0; k < m->nout && !v; k++)
			v = unbounded_size_var(f, m->out[k], m->nin, m->in);
		if (v)
			return rw_fail(c, RW_UNSUPPORTED, l->span,
				       "transform_layout: cannot compute the physical shape: %s, and nothing bounds %s (it may be 0, negative or large enough to wrap)",
				       why, v->name);
		return rw_fail(c, RW_UNSUPPORTED, l->span,
			       "transform_layout: cannot compute the physical shape: %s", why);
	}
	imap_name_phys(a, m);
	*lambda = l;
	return read_inverse(c, args, &scope, &d, m);
}

/* f with the logical buffer remapped to phys and a bare layout (the map
 * only): the step rejects after its obligations (reject_after), but the
 * remapped program is still built so a refutation can be replayed. */
static void remap_without_inverse(Arena *a, const Func *f, Buffer *logical, Buffer *phys,
				  const IndexMap *m, FuncResult *res)
{
	Layout *bare = arena_alloc(a, sizeof *bare);
	bare->logical = logical;
	bare->nvars = m->nin;
	bare->vars = m->in;
	bare->map = m->out;
	phys->layout = bare;
	res->func = an_with_body(a, f, ir_remap_buffer(a, f->body, logical, phys, m->nin, m->in,
						      m->nout, m->out));
	Param *ps = (Param *)res->func->params;
	for (int i = 0; i < f->nparams; i++)
		if (ps[i].buf == logical)
			ps[i].buf = phys;
	res->changed = true;
}

/* 1 if the first access of b in s (in program order) reads it, 0 if it
 * writes it, -1 if s does not access b. */
static int first_access_reads(const Stmt *s, const Buffer *b)
{
	int ne = stmt_nexprs(s);
	for (int i = 0; i < ne; i++) {
		const Expr *e = stmt_expr(s, i);
		if (e && an_expr_reads(e, b))
			return 1;
	}
	if (s->kind == ST_STORE && s->u.store.buf == b)
		return 0;
	int n = stmt_nchildren(s);
	for (int i = 0; i < n; i++) {
		const Stmt *c = stmt_child(s, i);
		int r = c ? first_access_reads(c, b) : -1;
		if (r >= 0)
			return r;
	}
	return -1;
}

/* body with the padding given its value: a producer of phys fills it in a
 * new stage after its last write (*stage); for an input parameter (one
 * the function reads, written in place or not) the value becomes an entry
 * fact (a precondition on callers, as in seed 000). */
static Stmt *fill_padding(RwCtx *c, const LayoutArgs *args, const Func *f, Stmt *body,
			  Buffer *phys, const IndexMap *m, Expr *pad, const PadSpec *ps,
			  bool is_param, Stmt **stage)
{
	Arena *a = c->arena;
	Expr **t = varrefs(a, m->nout, m->phys);
	Expr *value = ps->kind == PAD_UNDEF ? ir_undef(a, phys->dtype, args->pad_span) : ps->value;
	/* an input: read before the function writes it (an output that is
	 * initialised and then accumulated, conv1d's B, is not) */
	bool written = rw_stmt_accesses(body, phys, true), read = first_access_reads(body, phys) == 1;
	if (written) {
		Stmt *store = ir_store(a, phys, m->nout, t, value, c->call_span);
		Stmt *guarded = ir_if(a, pad, store, NULL, c->call_span);
		*stage = ir_block(a, unique_block_name(a, f, arena_printf(a, "%s_pad", phys->name)),
				  grid(a, m->nout, m->phys, m->shape, guarded, c->call_span),
				  c->call_span);
		body = rw_insert_after_last_write(a, body, phys, *stage);
	}
	/* a parameter the function reads before writing is an input: its
	 * callers pass the padding filled (an entry fact), also when the
	 * function then writes it in place, where the stage keeps the
	 * padding filled for the next caller (and an in-place update can
	 * overcompute) */
	if (!is_param || (written && !read))
		return body;
	Expr *eq = ir_bin(a, OP_EQ, ir_load(a, phys, m->nout, t, nospan()), value, nospan());
	Expr *fact = ir_or(a, imap_negate(a, pad), eq);
	Stmt *loop = grid(a, m->nout, m->phys, m->shape, ir_assume(a, fact, c->call_span),
			  c->call_span);
	return seq2(a, loop, body);
}

/* transform_one with c->func set to f. */
static RwStatus transform_in(RwCtx *c, const LayoutArgs *args, const Func *f, Buffer *logical,
			     bool is_param, FuncResult *res)
{
	Arena *a = c->arena;
	IndexMap m;
	Lambda *l = NULL;
	RwStatus st = read_index_map(c, args, f, logical, &m, &l);
	if (st != RW_OK)
		return st;
	map_obligations(c, &m, logical);
	Buffer *phys = ir_buffer(a, logical->name, logical->dtype, m.nout, m.shape, logical->span);
	phys->scope = logical->scope;
	if (l->nseps) {
		phys->naxis_separators = l->nseps;
		phys->axis_separators = l->seps;
	}
	if (!m.inverse) {
		remap_without_inverse(a, f, logical, phys, &m, res);
		return RW_OK;
	}
	Expr *full = NULL;
	bool simplified = false;
	Expr *pad = imap_pad_predicate(a, &m, &full, &simplified);
	if (simplified)
		pad_predicate_obligation(c, &m, pad, full, logical);

	PadSpec ps = {PAD_NONE_GIVEN, NULL};
	st = pad_spec(c, args, f, logical, phys, m.nout, m.phys, &ps);
	if (st != RW_OK)
		return st;
	Layout *lay = make_layout(a, logical, &m, pad, &ps);
	phys->layout = lay;
	if (ps.kind == PAD_VALUE)
		pad_reads(c, &m, ps.value, phys, lay, pad);

	Stmt *body = ir_remap_buffer(a, f->body, logical, phys, m.nin, m.in, m.nout, m.out);
	Stmt *stage = NULL;
	if (ps.kind != PAD_NONE_GIVEN)
		body = fill_padding(c, args, f, body, phys, &m, pad, &ps, is_param, &stage);
	Param *params = arena_alloc(a, sizeof(Param) * (size_t)(f->nparams + 1));
	memcpy(params, f->params, sizeof(Param) * (size_t)f->nparams);
	for (int i = 0; i < f->nparams; i++)
		if (params[i].buf == logical)
			params[i].buf = phys;
	res->func = ir_func(a, f->name, f->nparams, params, body, f->span);
	res->changed = true;
	if (stage && ps.kind == PAD_VALUE && !is_param && an_expr_has_load(ps.value)) {
		StmtCtx sc;
		FactSet fs;
		memset(&fs, 0, sizeof fs);
		if (an_find_stmt(a, res->func, stage, &sc))
			an_facts_at(a, res->func, &sc, false, NULL, &fs);
		pad_readable(c, &m, res->func, stage, ps.value, phys, pad, &fs);
	}
	return RW_OK;
}

static RwStatus transform_one(RwCtx *c, const LayoutArgs *args, const Func *f, FuncResult *res)
{
	res->func = (Func *)f;
	res->changed = false;
	bool is_param;
	Buffer *logical = rw_find_buffer(f, args->buffer, &is_param);
	if (!logical)
		return RW_OK; /* not in this function */
	const Func *saved = c->func;
	c->func = f; /* context hypotheses of this function */
	RwStatus st = transform_in(c, args, f, logical, is_param, res);
	c->func = saved;
	return st;
}

static RwStatus layout_main(RwCtx *c, const LayoutArgs *args);

RwStatus rw_transform_layout(RwCtx *c, const LayoutArgs *args)
{
	NestWrap w;
	rw_nest_wrap(c, args->block, &w);
	RwStatus st = layout_main(c, args);
	rw_nest_unwrap(c, &w);
	return st;
}

static RwStatus layout_main(RwCtx *c, const LayoutArgs *args)
{
	Arena *a = c->arena;
	const Module *mod = c->module;
	bool is_param;
	Buffer *b = rw_find_buffer(c->func, args->buffer, &is_param);
	if (!b)
		return rw_fail(c, RW_BAD_INPUT, c->call_span,
			       "transform_layout: no buffer '%s' in function '%s'%s", args->buffer,
			       c->func->name, rw_buffer_hint(c->arena, c->func, args->buffer));
	if (args->block) {
		Stmt *blk = stmt_find_block(c->func->body, args->block);
		if (!blk)
			return rw_fail(c, RW_BAD_INPUT, c->call_span,
				       "transform_layout: no block '%s' in function '%s'%s", args->block,
				       c->func->name, rw_block_hint(c->arena, c->func, args->block));
		if (!rw_stmt_accesses(blk, b, false))
			return rw_fail(c, RW_BAD_INPUT, c->call_span,
				       "transform_layout: block '%s' does not access buffer '%s'",
				       args->block, args->buffer);
	}
	if (args->func && (!mod || !module_find_func(mod, args->func)))
		return rw_fail(c, RW_BAD_INPUT, c->call_span, "transform_layout: no function '%s'",
			       args->func);
	int nf = mod ? mod->nfuncs : 1;
	Func **funcs = arena_alloc(a, sizeof(Func *) * (size_t)(nf + 1));
	for (int i = 0; i < nf; i++) {
		const Func *f = mod ? mod->funcs[i] : c->func;
		/* the current function as this call sees it: with block=, its
		 * nest wrapped (rw_nest_wrap), not the module's copy, whose
		 * result the unwrap would throw away */
		if (mod && strcmp(f->name, c->func->name) == 0)
			f = c->func;
		funcs[i] = (Func *)f;
		/* a parameter is shared by the module's functions that have
		 * it; an allocation belongs to the current function */
		bool target = args->func ? strcmp(f->name, args->func) == 0
			      : is_param ? true
					 : f == c->func;
		if (!target)
			continue;
		bool p;
		Buffer *fb = rw_find_buffer(f, args->buffer, &p);
		if (!fb || (f != c->func && !p))
			continue;
		FuncResult res;
		RwStatus st = transform_one(c, args, f, &res);
		if (st != RW_OK)
			return st;
		funcs[i] = res.func;
		if (f == c->func)
			c->out = res.func;
	}
	if (!c->out)
		c->out = (Func *)c->func;
	if (mod)
		c->out_module = ir_module(a, mod->name, mod->nfuncs, funcs, mod->span);
	return RW_OK;
}
