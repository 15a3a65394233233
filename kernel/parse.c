/* kernel/parse.c — the kernel-language parser's entry point (parse.h): a
 * .tir file holding one @T.prim_func or one @I.ir_module class; its
 * functions, parameters and buffer declarations (T.Buffer, T.match_buffer,
 * T.alloc_buffer); reading a source. Recursive descent over kernel/lex.c
 * tokens that stops at the first error and returns NULL; the grammar's other
 * parts are parse_*.c, sharing kernel/parse_int.h. */
#include "kernel/parse_int.h"
#include "kernel/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_scope_name(Parser *p, Val *v, BufferScope *out)
{
	const char *s;
	if (!ps_val_string(p, v, "the scope", &s))
		return false;
	if (strcmp(s, "global") == 0 || strcmp(s, "") == 0) /* TVM: "" is global */
		*out = SCOPE_GLOBAL;
	else if (strcmp(s, "local") == 0)
		*out = SCOPE_LOCAL;
	else if (strcmp(s, "shared") == 0)
		*out = SCOPE_SHARED;
	else if (strncmp(s, "global.", 7) == 0) /* a tagged global (TVM's allocator tests) */
		*out = SCOPE_GLOBAL;
	else if (strcmp(s, "shared.dyn") == 0 || strcmp(s, "warp") == 0 ||
		 strncmp(s, "wmma.", 5) == 0) {
		ps_error_at(p, v->span, "scope '%s' is not supported on CPU (GPU memory)", s);
		return false;
	} else {
		ps_error_at(p, v->span, "unknown scope '%s' (expected \"global\", "
			    "\"local\" or \"shared\")", s);
		return false;
	}
	return true;
}

/* The buffer `name` declared by the shape, dtype, scope and
 * axis_separators arguments of T.Buffer, T.alloc_buffer or T.match_buffer
 * (positional from index `off`); a missing shape is reported at `missing`. */
static Buffer *buffer_from_args(Parser *p, const Args *args, int off,
				const Token *name, Span missing)
{
	Val *sv = ps_arg(args, off, "shape"), *dv = ps_arg(args, off + 1, "dtype"),
	    *cv = ps_arg(args, off + 2, "scope");
	if (!sv) {
		ps_error_at(p, missing, "%s needs a shape", args->callee);
		return NULL;
	}
	int ndim;
	Expr **shape;
	DType t = DT_FLOAT32;
	BufferScope scope = SCOPE_GLOBAL;
	if (!ps_val_shape(p, sv, &ndim, &shape) || (dv && !ps_val_dtype(p, dv, &t)) ||
	    (cv && !parse_scope_name(p, cv, &scope)))
		return NULL;
	Buffer *b = ir_buffer(p->a, name->text, t, ndim, shape, name->span);
	b->scope = scope;
	Val *av = ps_arg(args, -1, "axis_separators");
	if (av && !ps_val_axis_separators(p, av, b))
		return NULL;
	return b;
}

Buffer *ps_view_target(const Parser *p, const Buffer *b)
{
	for (int i = 0; i < p->nviews; i++)
		if (p->view[i] == b)
			return p->view_of[i];
	return NULL;
}

Expr **ps_view_indices(Parser *p, const Buffer *x, Expr *k, Span sp)
{
	Expr **idx = arena_alloc(p->a, sizeof(Expr *) * (size_t)(x->ndim + 1));
	Expr *stride = NULL; /* product of the extents after dimension d */
	for (int d = x->ndim - 1; d >= 0; d--) {
		Expr *q = stride ? ps_make_bin(p, OP_FLOORDIV, k, stride, sp) : k;
		idx[d] = d > 0 && q ? ps_make_bin(p, OP_FLOORMOD, q, x->shape[d], sp) : q;
		stride = stride ? ps_make_bin(p, OP_MUL, x->shape[d], stride, sp) : x->shape[d];
	}
	return idx;
}

/* The factors of a product: constants multiplied into *c, the others
 * listed (at most 16; false past that or on overflow). */
static bool factors(const Expr *e, int64_t *c, const Expr **out, int *n)
{
	if (e->kind == EX_BIN && e->u.bin.op == OP_MUL)
		return factors(e->u.bin.a, c, out, n) && factors(e->u.bin.b, c, out, n);
	if (e->kind == EX_INT && e->dtype != DT_BOOL)
		return !__builtin_mul_overflow(*c, e->u.ival, c);
	if (*n == 16)
		return false;
	out[(*n)++] = e;
	return true;
}

/* n is the number of cells of x: the product of its extents, as the
 * same multiset of factors (n * n * 32 for (32, n, n)). */
static bool is_cell_count(const Expr *n, const Buffer *x)
{
	const Expr *fa[16], *fb[16];
	int na = 0, nb = 0;
	int64_t ca = 1, cb = 1;
	if (!factors(n, &ca, fa, &na))
		return false;
	for (int d = 0; d < x->ndim; d++)
		if (!factors(x->shape[d], &cb, fb, &nb))
			return false;
	if (ca != cb || na != nb)
		return false;
	bool used[16] = {false};
	for (int i = 0; i < na; i++) {
		int j = 0;
		while (j < nb && (used[j] || !ir_expr_equal(fa[i], fb[j])))
			j++;
		if (j == nb)
			return false;
		used[j] = true;
	}
	return true;
}

/* `V = T.Buffer(n, dtype, data=X.data)` with n the number of cells of X
 * and X's dtype (TVM's flattened buffers): V[k] is the cell of X at k in
 * row-major order, X[k // (s1 * s2), k // s2 % s1, k % s2], bound as a
 * view; no new memory. For k outside [0, n) the first index leaves
 * [0, s0), so an access out of V's bounds stays out of X's. True when
 * bound (or on error); false when b is no such view. */
static bool flat_view(Parser *p, const Args *args, Buffer *b, Buffer *x)
{
	static const char *const placement[] = {"strides", "elem_offset", "axis_separators", NULL};
	for (int i = 0; placement[i]; i++)
		if (ps_arg(args, -1, placement[i]))
			return false;
	if (b->ndim != 1 || b->dtype != x->dtype || x->ndim < 1)
		return false;
	if (!is_cell_count(b->shape[0], x))
		return false;
	p->view = grow(p->a, p->view, p->nviews, &p->capviews, 4, sizeof(Buffer *));
	Buffer **of = arena_alloc(p->a, sizeof(Buffer *) * (size_t)p->capviews);
	if (p->nviews)
		memcpy(of, p->view_of, sizeof(Buffer *) * (size_t)p->nviews);
	p->view_of = of;
	p->view[p->nviews] = b;
	p->view_of[p->nviews++] = x;
	ps_bind(p, b->name, NULL, b);
	return true;
}

/* `name = T.alloc_buffer(shape, dtype, scope=...)`, and T.decl_buffer
 * (without data=, an allocation; with data= naming what T.allocate made,
 * that allocation under a second name). strides / elem_offset / align /
 * offset_factor place an internal buffer in memory and do not change what
 * its cells hold: they are read and left to lowering's own layout. */
Stmt *parse_alloc(Parser *p, Token *first, const char *callee)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators", "strides",
					  "elem_offset", "align", "offset_factor", "data",
					  "buffer_type", NULL};
	Args args;
	if (!parse_args(p, callee, ")", &args) || !ps_check_args(p, &args, 0, 3, kws))
		return NULL;
	Val *data = ps_arg(&args, -1, "data");
	if (data && strcmp(callee, "T.alloc_buffer") == 0) {
		ps_error_at(p, data->span, "T.alloc_buffer takes no data= (use T.decl_buffer)");
		return NULL;
	}
	Buffer *b = buffer_from_args(p, &args, 0, first, ps_span_from(p, first));
	if (!b)
		return NULL;
	if (data) {
		Var *v;
		Buffer *mem = NULL;
		const char *dn = data->tok->text;
		if (data->kind != VAL_EXPR || data->e || !ps_lookup(p, dn, &v, &mem) || !mem) {
			ps_error_at(p, data->span, "data= names the result of a T.allocate");
			return NULL;
		}
		if (ps_view_target(p, mem))
			mem = ps_view_target(p, mem);
		bool same = mem->dtype == b->dtype && mem->ndim == b->ndim;
		for (int k = 0; same && k < b->ndim; k++)
			same = ir_expr_equal(mem->shape[k], b->shape[k]);
		if (!same && flat_view(p, &args, b, mem))
			return NULL;
		if (!same) {
			ps_error_at(p, ps_span_from(p, first), "not supported: '%s' views the "
				    "memory of '%s' with another shape or dtype", b->name, dn);
			return NULL;
		}
		ps_bind(p, b->name, NULL, mem);
		return NULL;
	}
	ps_bind(p, b->name, NULL, b);
	return ir_alloc(p->a, b, NULL, ps_span_from(p, first));
}

/* `x = T.allocate(extents, dtype, scope)`: an allocation bound as x, which
 * T.decl_buffer(..., data=x) then names. */
Stmt *parse_allocate(Parser *p, Token *first)
{
	static const char *const kws[] = {"extents", "dtype", "scope", "condition",
					  "annotations", NULL};
	Args args;
	if (!parse_args(p, "T.allocate", ")", &args) || !ps_check_args(p, &args, 0, 4, kws))
		return NULL;
	Val *cond = ps_arg(&args, 3, "condition");
	if (cond && !(cond->kind == VAL_EXPR && cond->e && cond->e->kind == EX_INT &&
		      cond->e->u.ival)) {
		ps_error_at(p, cond->span, "not supported: a conditional T.allocate");
		return NULL;
	}
	Buffer *b = buffer_from_args(p, &args, 0, first, ps_span_from(p, first));
	if (!b)
		return NULL;
	ps_bind(p, b->name, NULL, b);
	return ir_alloc(p->a, b, NULL, ps_span_from(p, first));
}

/* `x = T.allocate_const(data, dtype, extents)`: constant data, which is
 * initialised (reading it is no UB): an allocation whose body starts by
 * storing each value, in row-major order. The stores are returned in
 * *inits (*ninit of them) for the caller to put after the allocation. */
Stmt *parse_allocate_const(Parser *p, Token *first, Stmt ***inits, int *ninit)
{
	static const char *const kws[] = {"data", "dtype", "extents", "annotations", NULL};
	Args args;
	if (!parse_args(p, "T.allocate_const", ")", &args) || !ps_check_args(p, &args, 0, 3, kws))
		return NULL;
	Val *dv = ps_arg(&args, 0, "data"), *tv = ps_arg(&args, 1, "dtype"),
	    *ev = ps_arg(&args, 2, "extents");
	if (!dv || !tv || !ev) {
		ps_error_at(p, ps_span_from(p, first), "T.allocate_const needs data, a dtype "
			    "and extents");
		return NULL;
	}
	if (dv->kind != VAL_LIST) {
		ps_error_at(p, dv->span, "T.allocate_const expects a list of constants");
		return NULL;
	}
	DType t;
	int ndim;
	Expr **shape;
	if (!ps_val_dtype(p, tv, &t) || !ps_val_shape(p, ev, &ndim, &shape))
		return NULL;
	int64_t cells = 1;
	for (int d = 0; d < ndim; d++) {
		if (shape[d]->kind != EX_INT || shape[d]->u.ival < 0 ||
		    shape[d]->u.ival > (int64_t)1 << 24 || (cells *= shape[d]->u.ival) > (int64_t)1 << 24) {
			ps_error_at(p, ev->span, "not supported: T.allocate_const with extents "
				    "other than small integer literals");
			return NULL;
		}
	}
	if (cells != dv->n) {
		ps_error_at(p, dv->span, "T.allocate_const has %d values for %lld cells", dv->n,
			    (long long)cells);
		return NULL;
	}
	Buffer *b = ir_buffer(p->a, first->text, t, ndim, shape, first->span);
	Stmt **st = arena_alloc(p->a, sizeof(Stmt *) * (size_t)(dv->n ? dv->n : 1));
	for (int k = 0; k < dv->n; k++) {
		Expr *v = dv->items[k];
		if (v->kind != EX_INT && v->kind != EX_FLOAT) {
			ps_error_at(p, v->span, "T.allocate_const expects literal constants");
			return NULL;
		}
		if (dtype_is_float(t) && v->kind == EX_INT)
			v = ir_float(p->a, (double)v->u.ival, t, v->span);
		else if (dtype_is_int(t) && v->kind == EX_FLOAT) {
			ps_error_at(p, v->span, "a float constant in %s data", dtype_name(t));
			return NULL;
		}
		v = ps_convert(p, v, t);
		Expr **idx = arena_alloc(p->a, sizeof(Expr *) * (size_t)(ndim ? ndim : 1));
		int64_t rest = k;
		for (int d = ndim - 1; d >= 0; d--) {
			idx[d] = ir_int32(p->a, rest % shape[d]->u.ival);
			rest /= shape[d]->u.ival;
		}
		st[k] = ir_store(p->a, b, ndim, idx, v, v->span);
	}
	*inits = st;
	*ninit = dv->n;
	ps_bind(p, b->name, NULL, b);
	return ir_alloc(p->a, b, NULL, ps_span_from(p, first));
}

/* A use of a variable declared by `x = T.float32()` outside every T.Let
 * that binds it (bound: the number of enclosing lets binding it). */
static bool let_use_outside(Parser *p, const Expr *e, const Var *x, int bound)
{
	if (e->kind == EX_VAR && e->u.var == x && !bound) {
		ps_error_at(p, e->span, "'%s' is declared by `%s = T.%s()` for a T.Let, and "
			    "used outside one that binds it", x->name, x->name, dtype_name(x->dtype));
		return true;
	}
	if (e->kind == EX_LET)
		return let_use_outside(p, e->u.let.value, x, bound) ||
		       let_use_outside(p, e->u.let.body, x, bound + (e->u.let.var == x));
	int n = expr_nchildren(e);
	for (int i = 0; i < n; i++)
		if (let_use_outside(p, expr_child(e, i), x, bound))
			return true;
	return false;
}

static bool let_decl_stmt(Parser *p, const Stmt *s, const Var *x)
{
	if (!s)
		return false;
	int n = stmt_nexprs(s);
	for (int i = 0; i < n; i++)
		if (stmt_expr(s, i) && let_use_outside(p, stmt_expr(s, i), x, 0))
			return true;
	n = stmt_nchildren(s);
	for (int i = 0; i < n; i++)
		if (let_decl_stmt(p, stmt_child(s, i), x))
			return true;
	return false;
}

static bool let_decl_misused(Parser *p, const Stmt *body)
{
	for (int k = 0; k < p->nletdecl; k++)
		if (let_decl_stmt(p, body, p->letdecl[k]))
			return true;
	return false;
}

/* `n = T.int32()`: a free size variable, given by the caller like a
 * scalar parameter (it becomes one). Only at the function's top. */
bool parse_free_var(Parser *p, Token *first, DType t)
{
	Span sp = ps_span_from(p, first);
	if (!p->in_func_top) {
		ps_error_at(p, sp, "a free variable `%s = T.%s()` is declared at the top "
			    "of the function body", first->text, dtype_name(t));
		return false;
	}
	Param *np = arena_alloc(p->a, sizeof(Param) * (size_t)(p->nparams + 1));
	memcpy(np, p->params, sizeof(Param) * (size_t)p->nparams);
	Var *v = ir_var(p->a, first->text, t, first->span);
	np[p->nparams] = (Param){.kind = PARAM_SCALAR, .var = v};
	p->params = np;
	p->nparams++;
	ps_bind(p, v->name, v, NULL);
	return true;
}

/* The handle argument of T.match_buffer: the first positional argument
 * (then *off = 1) or `param=` when it names a handle; *h = NULL when the
 * call names none. */
static bool match_handle_arg(Parser *p, const Args *args, Val **h, int *off)
{
	*off = 0;
	*h = ps_arg(args, 0, "param");
	if (*h && (*h)->kind == VAL_EXPR && (*h)->e && (*h)->e->kind == EX_VAR &&
	    (*h)->e->dtype == DT_HANDLE) {
		*off = (*h)->kw ? 0 : 1;
		return true;
	}
	if (*h && (*h)->kw) {
		ps_error_at(p, (*h)->span, "expected a handle parameter");
		return false;
	}
	*h = NULL;
	return true;
}

/* The handle parameter that T.match_buffer binds: the one h names, or
 * else the first unbound one; it must not be bound already. */
static Param *match_handle_param(Parser *p, const Val *h, Span sp)
{
	Param *hp = NULL;
	for (int i = 0; i < p->nparams && !hp; i++) {
		Param *pr = &p->params[i];
		if (pr->kind != PARAM_HANDLE)
			continue;
		if (h ? pr->var == h->e->u.var : !pr->buf)
			hp = pr;
	}
	if (!hp) {
		ps_error_at(p, sp, h ? "T.match_buffer: not a handle parameter"
				  : "T.match_buffer: no unmatched T.handle "
				    "parameter left");
		return NULL;
	}
	if (hp->buf) {
		ps_error_at(p, sp, "handle '%s' is already bound by T.match_buffer",
			    hp->var->name);
		return NULL;
	}
	return hp;
}

/* `A = T.match_buffer(a, shape, dtype)`: binds the handle parameter. */
bool parse_match_buffer(Parser *p, Token *first)
{
	static const char *const kws[] = {"param", "shape", "dtype", "scope", "axis_separators",
					  "align", "offset_factor", "strides", "elem_offset",
					  "buffer_type", NULL};
	Args args;
	Var *hv;
	Buffer *hb;
	if (peek(p)->kind == TK_NAME && tok_is(peek_at(p, 1), "[") &&
	    ps_lookup(p, peek(p)->text, &hv, &hb) && hb)
		return ps_match_subregion(p, first);
	p->allow_handle = true;
	bool ok = parse_args(p, "T.match_buffer", ")", &args);
	p->allow_handle = false;
	if (!ok)
		return false;
	Span sp = ps_span_from(p, first);
	if (!p->in_func_top) {
		ps_error_at(p, sp, "T.match_buffer is only allowed at the top level "
			    "of the function body");
		return false;
	}
	Val *h;
	int off;
	if (!match_handle_arg(p, &args, &h, &off) ||
	    !ps_check_args(p, &args, 0, 3 + off, kws))
		return false;
	static const char *const placed[] = {"strides", "elem_offset"};
	for (int k = 0; k < 2; k++) {
		Val *v = ps_arg(&args, -1, placed[k]);
		bool zero = v && k == 1 && v->kind == VAL_EXPR && v->e && v->e->kind == EX_INT &&
			    v->e->u.ival == 0; /* elem_offset=0: the compact default */
		if (v && !zero) {
			ps_error_at(p, v->span, "not supported: %s= on a parameter buffer "
				    "(vsched reads parameters as compact row-major arrays)",
				    placed[k]);
			return false;
		}
	}
	Param *hp = match_handle_param(p, h, sp);
	if (!hp)
		return false;
	Buffer *b = buffer_from_args(p, &args, off, first, sp);
	if (!b)
		return false;
	/* `A = T.match_buffer(a, ...)` beside a handle parameter named A that
	 * another T.match_buffer binds: the printed `T.match_buffer(A, ...)`
	 * would then name the buffer, not the handle */
	for (int i = 0; i < p->nparams; i++) {
		const Param *o = &p->params[i];
		if (o != hp && o->kind == PARAM_HANDLE && strcmp(o->var->name, b->name) == 0) {
			ps_error_at(p, first->span,
				    "buffer '%s' takes the name of another handle parameter, '%s': "
				    "rename one of them", b->name, o->var->name);
			return false;
		}
	}
	hp->buf = b;
	ps_bind(p, hp->buf->name, NULL, hp->buf);
	return true;
}

Buffer *ps_buffer_from_args(Parser *p, const Args *args, int off, const Token *name,
			    Span missing)
{
	return buffer_from_args(p, args, off, name, missing);
}

/* Skip `@name.name(...)`; returns the last name of the decorator. */
static const char *parse_decorator(Parser *p)
{
	if (!ps_expect(p, "@", "(a decorator such as @T.prim_func)"))
		return NULL;
	const char *last = ps_expect_name(p, "a decorator name");
	while (last && accept(p, "."))
		last = ps_expect_name(p, "a decorator name");
	if (!last)
		return NULL;
	if (tok_is(peek(p), "(") && !ps_skip_bracketed(p))
		return NULL;
	return ps_expect_newline(p, "decorator") ? last : NULL;
}

/* `T.Buffer[shape, dtype]` or `T.Buffer(shape, dtype)`; T.Buffer consumed. */
static Buffer *parse_buffer_annotation(Parser *p, Token *name)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators", NULL};
	const char *close = tok_is(peek(p), "[") ? "]" : ")";
	if (!tok_is(peek(p), "[") && !tok_is(peek(p), "(")) {
		ps_error_at(p, peek(p)->span, "expected '[' or '(' after T.Buffer, "
			    "found %s", found(p));
		return NULL;
	}
	next(p);
	Args args;
	if (!parse_args(p, "T.Buffer", close, &args) ||
	    !ps_check_args(p, &args, 0, 2, kws))
		return NULL;
	return buffer_from_args(p, &args, 0, name, args.open->span);
}

/* Scalar parameters (`n: T.int32`) are bound before any parameter is
 * parsed, so that shapes may name a scalar declared later. */
static void prebind_scalars(Parser *p, int open)
{
	int close = ps_matching(p, open);
	for (int i = open + 1; i + 4 <= close; i++) {
		Token *t = &p->toks[i];
		DType dt;
		if (t->kind == TK_NAME && tok_is(&p->toks[i + 1], ":") &&
		    tok_is(&p->toks[i + 2], "T") && tok_is(&p->toks[i + 3], ".") &&
		    p->toks[i + 4].kind == TK_NAME &&
		    (tok_is(&p->toks[i - 1], "(") || tok_is(&p->toks[i - 1], ",")) &&
		    i + 5 <= close &&
		    (tok_is(&p->toks[i + 5], ",") || tok_is(&p->toks[i + 5], ")")) &&
		    dtype_from_name(p->toks[i + 4].text, &dt) && dt != DT_VOID &&
		    dt != DT_HANDLE && !lex_is_keyword(t->text))
			ps_bind(p, t->text, ir_var(p->a, t->text, dt, t->span), NULL);
	}
}

static Var *prebound(Parser *p, const char *name)
{
	for (int i = 0; i < p->nbinds; i++)
		if (p->binds[i].var && strcmp(p->binds[i].name, name) == 0)
			return p->binds[i].var;
	return NULL;
}

static bool parse_param(Parser *p, Param *out)
{
	Token *name = peek(p);
	if (!ps_expect_name(p, "a parameter name") ||
	    !ps_expect(p, ":", "after parameter name (every parameter needs a type)"))
		return false;
	for (int i = 0; i < p->nparams; i++) {
		const char *other = p->params[i].buf ? p->params[i].buf->name
						     : p->params[i].var->name;
		if (strcmp(other, name->text) == 0) {
			ps_error_at(p, name->span, "duplicate parameter '%s'", name->text);
			return false;
		}
	}
	Token *tt = peek(p);
	if (!ps_at_t_name(p, NULL)) {
		ps_error_at(p, tt->span, "expected a parameter type (T.Buffer[...], "
			    "T.handle or a dtype such as T.int32), found %s", found(p));
		return false;
	}
	p->pos += 3;
	const char *ty = prev(p)->text;
	memset(out, 0, sizeof *out);
	DType dt;
	if (strcmp(ty, "Buffer") == 0) {
		out->kind = PARAM_BUFFER;
		out->buf = parse_buffer_annotation(p, name);
		return out->buf != NULL;
	}
	if (strcmp(ty, "handle") == 0) {
		out->kind = PARAM_HANDLE;
		out->var = ir_var(p->a, name->text, DT_HANDLE, name->span);
		ps_bind(p, name->text, out->var, NULL);
		return true;
	}
	if (!ps_dtype_from_string(p, ty, ps_span_from(p, tt), &dt))
		return false;
	out->kind = PARAM_SCALAR;
	out->var = prebound(p, name->text);
	if (!out->var || out->var->dtype != dt) {
		out->var = ir_var(p->a, name->text, dt, name->span);
		ps_bind(p, name->text, out->var, NULL);
	}
	return true;
}

static bool parse_params(Parser *p)
{
	int cap = 4;
	p->params = arena_alloc(p->a, sizeof(Param) * (size_t)cap);
	p->nparams = 0;
	prebind_scalars(p, p->pos - 1);
	while (!p->failed && !tok_is(peek(p), ")")) {
		p->params = grow(p->a, p->params, p->nparams, &cap, 4, sizeof(Param));
		if (!parse_param(p, &p->params[p->nparams]))
			return false;
		Param *pr = &p->params[p->nparams++];
		if (pr->kind == PARAM_BUFFER)
			ps_bind(p, pr->buf->name, NULL, pr->buf);
		if (!accept(p, ","))
			break;
	}
	return ps_expect(p, ")", "to close the parameter list");
}

static Func *parse_func(Parser *p)
{
	Token *first = peek(p);
	if (!ps_expect(p, "def", "(a function definition)"))
		return NULL;
	Token *name = peek(p);
	if (!ps_expect_name(p, "a function name") ||
	    !ps_expect(p, "(", "after function name"))
		return NULL;
	p->nbinds = 0;
	p->nletdecl = 0;
	if (!parse_params(p))
		return NULL;
	if (accept(p, "->")) {
		if (!accept(p, "None") && !ps_finish_expr(parse_expr(p)))
			return NULL;
	}
	if (!ps_expect(p, ":", "after function header"))
		return NULL;
	Span header = ps_span_from(p, first);
	Stmt *body = parse_suite(p, "function header", true);
	if (!body)
		return NULL;
	for (int i = 0; i < p->nparams; i++)
		if (p->params[i].kind == PARAM_HANDLE && !p->params[i].buf) {
			ps_error_at(p, p->params[i].var->span, "handle parameter '%s' is "
				    "never bound by T.match_buffer", p->params[i].var->name);
			return NULL;
		}
	if (p->nletdecl && let_decl_misused(p, body))
		return NULL;
	Func *f = ir_func(p->a, name->text, p->nparams, p->params, body, header);
	Span deep;
	const char *why = ir_func_too_deep(f, &deep);
	if (why) {
		ps_error_at(p, deep.src ? deep : header, "%s: not supported", why);
		return NULL;
	}
	return f;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_prim_func_decorator(const char *last)
{
	return strcmp(last, "prim_func") == 0;
}

/* Skip `import x` / `from x import y` lines and docstrings at top level. */
static void skip_preamble(Parser *p)
{
	while (!p->failed) {
		Token *t = peek(p);
		if (tok_is(t, "import") || tok_is(t, "from")) {
			while (!at_kind(p, TK_NEWLINE) && !at_kind(p, TK_EOF))
				next(p);
			ps_expect_newline(p, "import");
		} else if (t->kind == TK_STRING && peek_at(p, 1)->kind == TK_NEWLINE) {
			p->pos += 2;
		} else {
			return;
		}
	}
}

/* The @T.prim_func functions of a module class body, through its DEDENT;
 * docstrings are skipped. */
static Func **parse_class_funcs(Parser *p, int *nfuncs)
{
	int cap = 4, n = 0;
	Func **funcs = arena_alloc(p->a, sizeof(Func *) * (size_t)cap);
	while (!p->failed && !at_kind(p, TK_DEDENT) && !at_kind(p, TK_EOF)) {
		if (peek(p)->kind == TK_STRING && peek_at(p, 1)->kind == TK_NEWLINE) {
			p->pos += 2;
			continue;
		}
		Token *dec = peek_at(p, 1);
		const char *last = parse_decorator(p);
		if (!last)
			return NULL;
		if (!is_prim_func_decorator(last)) {
			ps_error_at(p, dec->span, "expected @T.prim_func in a module class");
			return NULL;
		}
		Func *f = parse_func(p);
		if (!f)
			return NULL;
		for (int i = 0; i < n; i++)
			if (strcmp(funcs[i]->name, f->name) == 0) {
				ps_error_at(p, f->span, "duplicate function '%s' in module",
					    f->name);
				return NULL;
			}
		funcs = grow(p->a, funcs, n, &cap, 4, sizeof(Func *));
		funcs[n++] = f;
	}
	if (p->failed)
		return NULL;
	next(p); /* DEDENT */
	*nfuncs = n;
	return funcs;
}

static Module *parse_class(Parser *p, Token *first)
{
	if (!ps_expect(p, "class", "after @ir_module"))
		return NULL;
	Token *name = peek(p);
	if (!ps_expect_name(p, "a class name"))
		return NULL;
	if (accept(p, "(")) {
		while (!p->failed && !accept(p, ")"))
			if (!ps_expect_name(p, "a base class name") ||
			    (!tok_is(peek(p), ")") && !ps_expect(p, ",", "between base classes")))
				return NULL;
	}
	if (!ps_expect(p, ":", "after class name") || !ps_expect_newline(p, "class header"))
		return NULL;
	if (!at_kind(p, TK_INDENT)) {
		ps_error_at(p, peek(p)->span, "expected an indented class body");
		return NULL;
	}
	next(p);
	int n = 0;
	Func **funcs = parse_class_funcs(p, &n);
	if (!funcs)
		return NULL;
	if (n == 0) {
		ps_error_at(p, name->span, "module '%s' holds no @T.prim_func", name->text);
		return NULL;
	}
	return ir_module(p->a, name->text, n, funcs, ps_span_from(p, first));
}

void parser_init(Parser *p, Arena *a, const Source *src, DiagList *d,
		 TokenList *tl)
{
	memset(p, 0, sizeof *p);
	p->a = a;
	p->src = src;
	p->d = d;
	p->toks = tl->toks;
	p->ntoks = tl->n;
}

Module *parse_module(Arena *a, const Source *src, DiagList *d)
{
	TokenList tl;
	int len = (int)strlen(src->text);
	if (!lex_range(a, src, 0, len, LEX_FILE, d, &tl))
		return NULL;
	Parser p;
	parser_init(&p, a, src, d, &tl);
	skip_preamble(&p);
	if (p.failed)
		return NULL;
	Token *first = peek(&p);
	if (at_kind(&p, TK_EOF)) {
		ps_error_at(&p, first->span, "expected @T.prim_func or @I.ir_module, "
			    "found an empty file");
		return NULL;
	}
	if (!tok_is(first, "@")) {
		ps_error_at(&p, first->span, "expected @T.prim_func or @I.ir_module, "
			    "found %s", found(&p));
		return NULL;
	}
	Token *dec = peek_at(&p, 1);
	const char *last = parse_decorator(&p);
	if (!last)
		return NULL;
	Module *m = NULL;
	if (is_prim_func_decorator(last)) {
		Func *f = parse_func(&p);
		if (f)
			m = ir_module(a, NULL, 1, &f, f->span);
	} else if (ends_with(last, "ir_module")) {
		m = parse_class(&p, first);
	} else {
		ps_error_at(&p, dec->span, "expected @T.prim_func or @I.ir_module");
	}
	if (!m || p.failed)
		return NULL;
	if (!at_kind(&p, TK_EOF)) {
		ps_error_at(&p, peek(&p)->span, "expected end of file, found %s (a file "
			    "holds one @T.prim_func or one @I.ir_module)", found(&p));
		return NULL;
	}
	/* style rule 14: what the parser built is well formed */
	return ir_verify_module(m, d) ? m : NULL;
}

Source *source_from_string(Arena *a, const char *name, const char *text)
{
	Source *s = arena_alloc(a, sizeof *s);
	s->name = arena_strdup(a, name ? name : "<string>");
	s->text = arena_strdup(a, text ? text : "");
	return s;
}

Source *source_read_file(Arena *a, const char *path, DiagList *d)
{
	static const Span nowhere;
	FILE *f = fopen(path, "rb");
	if (!f) {
		diag_add(d, DIAG_ERROR, nowhere, "cannot open '%s': %s", path,
			 strerror(errno));
		return NULL;
	}
	StrBuf b = {0};
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		sb_put(&b, chunk, n);
	bool bad = ferror(f);
	int err = errno;
	fclose(f);
	size_t total = b.n;
	char *text = sb_take(&b);
	if (bad || strlen(text) != total) {
		free(text);
		if (bad)
			diag_add(d, DIAG_ERROR, nowhere, "cannot read '%s': %s", path,
				 strerror(err));
		else
			diag_add(d, DIAG_ERROR, nowhere,
				 "'%s' contains a NUL byte: not a text file", path);
		return NULL;
	}
	Source *s = source_from_string(a, path, text);
	free(text);
	return s;
}
