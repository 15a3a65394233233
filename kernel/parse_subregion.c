/* kernel/parse_subregion.c — `A0 = T.match_buffer(A[vi * 4 : vi * 4 + 4, j], (4,))`
 * inside a block: A0 is a view (an alias) of that region of A. As TVM's own
 * LowerMatchBuffer pass does, the view is desugared where it is read: an
 * access A0[i] is the access A[vi * 4 + i, j], `A0.data` is A's memory
 * (TVM's view shares A's data pointer), `A0.elem_offset` is the region's
 * row-major offset in A and `A0.strides[k]` A's stride. Every analysis and
 * proof then sees accesses of A only; the printer writes the desugared
 * form, which reads back as the same IR. The view's shape must fit the
 * region as TVM requires: its dimensions are the region's last ones with
 * the same extents, the region's leading extents are 1. An access of the
 * view outside its shape is UB in TVM; the desugared access is defined
 * where it stays inside A: a refinement, never the other way round. */
#include "kernel/parse_int.h"
#include "kernel/print.h"

#include <stdlib.h>
#include <string.h>

static Expr *lit(Parser *p, int64_t v, Span sp)
{
	return ir_int(p->a, v, DT_INT32, sp);
}

static bool is_lit(const Expr *e, int64_t *v)
{
	if (!e || e->kind != EX_INT || e->dtype == DT_BOOL)
		return false;
	*v = e->u.ival;
	return true;
}

/* x + y and x * y, folding literals so the printed indices stay as TVM
 * writes them (vi * 16 + 0 is vi * 16). */
static Expr *add(Parser *p, Expr *x, Expr *y, Span sp)
{
	int64_t a, b;
	if (is_lit(x, &a) && a == 0)
		return y;
	if (is_lit(y, &b) && b == 0)
		return x;
	if (is_lit(x, &a) && is_lit(y, &b) && !__builtin_add_overflow(a, b, &a) &&
	    ps_int_fits(a, x->dtype) && x->dtype == y->dtype)
		return ir_int(p->a, a, x->dtype, sp);
	return ps_make_bin(p, OP_ADD, x, y, sp);
}

static Expr *mul(Parser *p, Expr *x, Expr *y, Span sp)
{
	int64_t a, b;
	if (is_lit(x, &a) && a == 1)
		return y;
	if (is_lit(y, &b) && b == 1)
		return x;
	if (is_lit(x, &a) && is_lit(y, &b) && !__builtin_mul_overflow(a, b, &a) &&
	    ps_int_fits(a, x->dtype) && x->dtype == y->dtype)
		return ir_int(p->a, a, x->dtype, sp);
	return ps_make_bin(p, OP_MUL, x, y, sp);
}

const SubView *ps_subview(const Parser *p, const Buffer *b)
{
	for (int i = 0; i < p->nsubviews; i++)
		if (p->subviews[i].view == b)
			return &p->subviews[i];
	return NULL;
}

Buffer *ps_subview_source(const Parser *p, Buffer *b)
{
	const SubView *s = ps_subview(p, b);
	return s ? s->src : b;
}

Expr **ps_subview_indices(Parser *p, const SubView *s, Expr **idx, Span sp)
{
	int r = s->src->ndim, lead = r - s->view->ndim;
	Expr **out = arena_alloc(p->a, sizeof(Expr *) * (size_t)(r + 1));
	for (int k = 0; k < r; k++)
		out[k] = k < lead ? s->lo[k] : add(p, s->lo[k], idx[k - lead], sp);
	return out;
}

/* A region of view s, as the same region of its source. */
void ps_subview_region(Parser *p, const SubView *s, BufRegion *r)
{
	int n = s->src->ndim, lead = n - s->view->ndim;
	Expr **lo = arena_alloc(p->a, sizeof(Expr *) * (size_t)(n + 1));
	Expr **hi = arena_alloc(p->a, sizeof(Expr *) * (size_t)(n + 1));
	for (int k = 0; k < n; k++) {
		lo[k] = k < lead ? s->lo[k] : add(p, s->lo[k], r->lo[k - lead], r->span);
		hi[k] = k < lead || !r->hi[k - lead] ? NULL
						     : add(p, s->lo[k], r->hi[k - lead], r->span);
	}
	r->buf = s->src;
	r->ndim = n;
	r->lo = lo;
	r->hi = hi;
}

/* The row-major stride of dimension k of b (b's cells are compact). */
static Expr *stride(Parser *p, const Buffer *b, int k, Span sp)
{
	Expr *s = lit(p, 1, sp);
	for (int d = b->ndim - 1; d > k; d--)
		s = mul(p, s, b->shape[d], sp);
	return s;
}

/* The row-major offset of cell lo of b. */
static Expr *offset(Parser *p, const Buffer *b, Expr **lo, Span sp)
{
	Expr *off = lit(p, 0, sp);
	for (int k = 0; k < b->ndim; k++)
		off = add(p, off, mul(p, lo[k], stride(p, b, k, sp), sp), sp);
	return off;
}

/* `B.access_ptr("r", offset=o, extent=n)`, after `B.access_ptr`: what TVM's
 * Buffer.access_ptr builds, T.tvm_access_ptr(T.type_annotation(dtype),
 * B.data, elem_offset + o, n, mask), an opaque call (semantics.md 9)
 * that names B; it prints in that form, which reads back the same. */
static Expr *access_ptr(Parser *p, Buffer *b, Token *name)
{
	static const char *const kws[] = {"access_mask", "ptr_type", "content_lanes", "offset",
					  "extent", NULL};
	if (!ps_expect(p, "(", "after .access_ptr"))
		return NULL;
	Args args;
	if (!parse_args(p, "access_ptr", ")", &args) || !ps_check_args(p, &args, 1, 2, kws))
		return NULL;
	Span sp = ps_span_from(p, name);
	const char *mask;
	Val *mv = ps_arg(&args, 0, "access_mask");
	if (!mv || !ps_val_string(p, mv, "the access mask", &mask))
		return mv ? NULL : (ps_error_at(p, sp, "access_ptr needs an access mask such as \"r\""), NULL);
	int m = 0;
	for (const char *c = mask; *c; c++)
		m |= *c == 'r' ? 1 : *c == 'w' ? 2 : 4;
	if (m == 0 || m > 3) {
		ps_error_at(p, mv->span, "expected an access mask \"r\", \"w\" or \"rw\"");
		return NULL;
	}
	Val *lv = ps_arg(&args, 2, "content_lanes");
	int64_t lanes;
	if (lv && !(lv->kind == VAL_EXPR && lv->e && is_lit(lv->e, &lanes) && lanes == 1)) {
		ps_error_at(p, lv->span, "not supported: content_lanes other than 1");
		return NULL;
	}
	Val *pv = ps_arg(&args, 1, "ptr_type");
	const char *pt;
	if (pv && (!ps_val_string(p, pv, "the pointer type", &pt) || strcmp(pt, "handle") != 0)) {
		if (!p->failed)
			ps_error_at(p, pv->span, "not supported: ptr_type other than \"handle\"");
		return NULL;
	}
	Expr *off = NULL, *ext = NULL;
	Val *ov = ps_arg(&args, -1, "offset"), *ev = ps_arg(&args, -1, "extent");
	if (ov && !(off = ps_finish_expr(ps_val_expr(p, ov, "the offset"))))
		return NULL;
	if (ev && !(ext = ps_finish_expr(ps_val_expr(p, ev, "the extent"))))
		return NULL;
	if ((off && !ps_check_int_expr(p, off, "the offset")) ||
	    (ext && !ps_check_int_expr(p, ext, "the extent")))
		return NULL;
	const SubView *s = ps_subview(p, b);
	Buffer *x = s ? s->src : b;
	Expr *base = s ? offset(p, x, s->lo, sp) : lit(p, 0, sp);
	if (!ext) { /* TVM: the buffer's cells after the offset */
		ext = lit(p, 1, sp);
		for (int d = 0; d < b->ndim; d++)
			ext = mul(p, ext, b->shape[d], sp);
		if (off)
			ext = ps_make_bin(p, OP_SUB, ext, off, sp);
	}
	Expr **xs = arena_alloc(p->a, sizeof(Expr *) * 4);
	xs[0] = ir_opaque(p->a, "type_annotation", b->dtype, 0, NULL, 0, NULL, sp);
	xs[1] = off ? add(p, base, off, sp) : base;
	xs[2] = ext;
	xs[3] = lit(p, m, sp);
	if (!xs[1] || !xs[2])
		return NULL;
	OpqItem *items = arena_alloc(p->a, sizeof(OpqItem) * 5);
	memset(items, 0, sizeof(OpqItem) * 5);
	items[0].kind = OPQ_EXPR;
	items[0].expr = 0;
	items[1].kind = OPQ_BUFFER_DATA;
	items[1].buf = x;
	for (int i = 2; i < 5; i++) {
		items[i].kind = OPQ_EXPR;
		items[i].expr = i - 1;
	}
	return ir_opaque(p->a, "tvm_access_ptr", DT_HANDLE, 5, items, 4, xs, sp);
}

/* `B.elem_offset` / `B.strides[k]` with B at prev(p) and the '.' at peek:
 * a view's offset in its source, or 0 for a buffer vsched reads as a
 * compact array of its own (a parameter or a view-free allocation). */
Expr *ps_buffer_attr(Parser *p, Buffer *b, Token *name)
{
	const char *attr = peek_at(p, 1)->text;
	if (peek_at(p, 1)->kind == TK_NAME && strcmp(attr, "access_ptr") == 0) {
		p->pos += 2;
		return access_ptr(p, b, name);
	}
	if (peek_at(p, 1)->kind != TK_NAME ||
	    (strcmp(attr, "elem_offset") != 0 && strcmp(attr, "strides") != 0)) {
		ps_error_at(p, name->span, "buffer '%s' used without indices", name->text);
		return NULL;
	}
	p->pos += 2;
	Span sp = ps_span_from(p, name);
	const SubView *s = ps_subview(p, b);
	const Buffer *x = s ? s->src : b;
	if (strcmp(attr, "elem_offset") == 0) {
		return s ? offset(p, x, s->lo, sp) : lit(p, 0, sp);
	}
	if (!ps_expect(p, "[", "after .strides"))
		return NULL;
	Token *kt = peek(p);
	int64_t k;
	Expr *ke = ps_finish_expr(parse_expr(p));
	if (!ke)
		return NULL;
	if (!is_lit(ke, &k) || k < 0 || k >= b->ndim) {
		ps_error_at(p, kt->span, "buffer '%s' has %d dimension%s: .strides[] takes a "
			    "literal in [0, %d)", b->name, b->ndim, b->ndim == 1 ? "" : "s", b->ndim);
		return NULL;
	}
	if (!ps_expect(p, "]", "to close .strides["))
		return NULL;
	return stride(p, x, (int)k + (s ? x->ndim - b->ndim : 0), ps_span_from(p, name));
}

/* The extent hi - lo of one region dimension when it is evident (a point,
 * literals, `x : x + c`, `0 : e`); NULL otherwise. */
static Expr *extent(Parser *p, Expr *lo, Expr *hi, Span sp)
{
	int64_t a, b;
	if (!hi)
		return lit(p, 1, sp);
	if (is_lit(lo, &a) && is_lit(hi, &b) && !__builtin_sub_overflow(b, a, &b))
		return ir_int(p->a, b, hi->dtype, sp);
	if (is_lit(lo, &a) && a == 0)
		return hi;
	if (hi->kind == EX_BIN && hi->u.bin.op == OP_ADD) {
		if (ir_expr_equal(hi->u.bin.a, lo))
			return hi->u.bin.b;
		if (ir_expr_equal(hi->u.bin.b, lo))
			return hi->u.bin.a;
	}
	return NULL;
}

static bool same_extent(const Expr *x, const Expr *y)
{
	int64_t a, b;
	if (is_lit(x, &a) && is_lit(y, &b))
		return a == b;
	return ir_expr_equal(x, y);
}

static bool is_one(const Expr *e)
{
	int64_t v;
	return is_lit(e, &v) && v == 1;
}

/* The view's placement keywords: strides= must be the source's own
 * row-major strides (the desugaring reads the view through them);
 * elem_offset= is a variable TVM binds to the offset, which vsched does not
 * bind (not supported); offset_factor=, align=, scope=, axis_separators=
 * and buffer_type= say where lowering may place it and leave the cells. */
static bool check_placement(Parser *p, const Args *args, const Buffer *view,
			    const Buffer *src, Expr **lo, int lead)
{
	Val *sv = ps_arg(args, -1, "strides");
	if (sv) {
		int n;
		Expr **st;
		if (!ps_val_shape(p, sv, &n, &st))
			return false;
		bool ok = n == view->ndim;
		for (int k = 0; ok && k < n; k++)
			ok = same_extent(st[k], stride(p, src, lead + k, sv->span));
		if (!ok) {
			ps_error_at(p, sv->span, "not supported: strides= other than the row-major "
				    "strides of '%s'", src->name);
			return false;
		}
	}
	Val *ev = ps_arg(args, -1, "elem_offset");
	if (!ev)
		return true;
	/* TVM binds elem_offset= to the region's offset: a literal must be it */
	int64_t want, got;
	Expr *off = offset(p, src, lo, ev->span);
	if (!(ev->kind == VAL_EXPR && ev->e && is_lit(ev->e, &want))) {
		ps_error_at(p, ev->span, "not supported: an elem_offset= variable on a view "
			    "(vsched desugars the view into accesses of '%s')", src->name);
		return false;
	}
	if (!is_lit(off, &got) || got != want) {
		char *at = print_expr(off);
		ps_error_at(p, ev->span, "elem_offset=%lld, but the region starts at "
			    "offset %s of '%s'", (long long)want, at ? at : "?", src->name);
		free(at);
		return false;
	}
	return true;
}

/* `A0 = T.match_buffer(A[...], shape, ...)`, first = A0, the '(' consumed
 * and the region at peek. */
bool ps_match_subregion(Parser *p, Token *first)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators",
					  "align", "offset_factor", "strides", "elem_offset",
					  "buffer_type", NULL};
	Token *rt = peek(p);
	BufRegion r;
	if (!ps_parse_region(p, &r))
		return false;
	if (!p->blk) {
		ps_error_at(p, ps_span_from(p, first), "a T.match_buffer of a buffer region "
			    "belongs at the top of a `with T.block(...)` body");
		return false;
	}
	Args args;
	if (!tok_is(peek(p), ",")) {
		ps_error_at(p, peek(p)->span, "T.match_buffer needs a shape after the region");
		return false;
	}
	next(p);
	if (!parse_args(p, "T.match_buffer", ")", &args) || !ps_check_args(p, &args, 0, 3, kws))
		return false;
	Span sp = ps_span_from(p, first);
	/* axis_separators= places the view's cells in memory, which the
	 * desugared accesses do not use: read and dropped */
	for (int i = 0; i < args.n; i++)
		if (args.v[i].kw && strcmp(args.v[i].kw, "axis_separators") == 0)
			args.v[i].kw = "(dropped)";
	Buffer *v = ps_buffer_from_args(p, &args, 0, first, sp);
	if (!v)
		return false;
	Buffer *src = r.buf;
	if (!ps_arg(&args, 1, "dtype") && v->dtype != src->dtype)
		v->dtype = src->dtype; /* TVMScript's default is float32; a view keeps its source's */
	if (v->dtype != src->dtype) {
		ps_error_at(p, sp, "not supported: view '%s' is %s but '%s' is %s", v->name,
			    dtype_name(v->dtype), src->name, dtype_name(src->dtype));
		return false;
	}
	int lead = r.ndim - v->ndim;
	if (lead < 0) {
		ps_error_at(p, sp, "view '%s' has %d dimensions but the region of '%s' only %d",
			    v->name, v->ndim, src->name, r.ndim);
		return false;
	}
	for (int k = 0; k < r.ndim; k++) {
		Expr *e = extent(p, r.lo[k], r.hi[k], r.span);
		bool fits = e && (k < lead ? is_one(e) : same_extent(e, v->shape[k - lead]));
		if (!fits) {
			if (k < lead)
				ps_error_at(p, rt->span, "the region of '%s' has %d dimensions and view "
					    "'%s' %d: dimension %d of the region must have extent 1",
					    src->name, r.ndim, v->name, v->ndim, k);
			else
				ps_error_at(p, rt->span, "dimension %d of the region of '%s' does not "
					    "have the extent of view '%s' (its dimension %d)%s", k,
					    src->name, v->name, k - lead,
					    e ? "" : " as far as vsched can tell (write it lo : lo + n)");
			return false;
		}
	}
	if (!check_placement(p, &args, v, src, r.lo, lead))
		return false;
	p->subviews = grow(p->a, p->subviews, p->nsubviews, &p->capsubviews, 4, sizeof(SubView));
	SubView *s = &p->subviews[p->nsubviews++];
	s->view = v;
	s->src = src;
	s->lo = r.lo;
	ps_bind(p, v->name, NULL, v);
	return true;
}
