/* kernel/parse_args.c — call arguments of T.* calls and loop headers:
 * `(a, [b, c], kw="s")` read as Vals (expression, string, list, dict),
 * checked against a callee's positional count and keywords, and read back
 * as an expression, string, dtype, shape or axis separators. */
#include "kernel/parse_int.h"

#include <string.h>

/* `[e, e, ...]` or `(e, e, ...)` with an optional trailing comma. */
bool parse_expr_list(Parser *p, const char *close, int *n, Expr ***items)
{
	int cap = 4, cnt = 0;
	Expr **xs = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap);
	while (!p->failed && !tok_is(peek(p), close)) {
		xs = grow(p->a, xs, cnt, &cap, 4, sizeof(Expr *));
		Expr *e = ps_finish_expr(parse_expr(p));
		if (!e)
			return false;
		xs[cnt++] = e;
		if (!accept(p, ","))
			break;
	}
	if (!ps_expect(p, close, "to close the list"))
		return false;
	*n = cnt;
	*items = xs;
	return true;
}

static Buffer *is_buffer_name(Parser *p, const char *name)
{
	Var *v;
	Buffer *b;
	return ps_lookup(p, name, &v, &b) ? b : NULL;
}

static bool ends_value(Parser *p, int at)
{
	return tok_is(peek_at(p, at), ",") || tok_is(peek_at(p, at), ")");
}

static bool parse_value(Parser *p, Val *v)
{
	Token *t = peek(p);
	v->tok = t;
	if (t->kind == TK_STRING &&
	    (tok_is(peek_at(p, 1), ",") || tok_is(peek_at(p, 1), ")") ||
	     tok_is(peek_at(p, 1), "]"))) {
		next(p);
		v->kind = VAL_STR;
		v->str = t->str;
	} else if (tok_is(t, "[") || (tok_is(t, "(") && ps_paren_is_tuple(p))) {
		next(p);
		v->kind = VAL_LIST;
		if (!parse_expr_list(p, tok_is(t, "[") ? "]" : ")", &v->n, &v->items))
			return false;
	} else if (t->kind == TK_NAME && ends_value(p, 1) && is_buffer_name(p, t->text)) {
		/* a whole buffer (data=X, T.reads(B)): named, not an expression */
		next(p);
		v->kind = VAL_EXPR;
		v->e = NULL;
		v->buf = ps_subview_source(p, is_buffer_name(p, t->text));
	} else if (t->kind == TK_NAME && tok_is(peek_at(p, 1), ".") &&
		   tok_is(peek_at(p, 2), "data") && ends_value(p, 3) && is_buffer_name(p, t->text)) {
		/* `B.data`: the buffer's memory, as opaque calls and data= take it */
		v->buf = ps_subview_source(p, is_buffer_name(p, t->text));
		p->pos += 3;
		v->kind = VAL_EXPR;
		v->e = NULL;
		v->buf_data = true;
	} else if (tok_is(t, "{")) {
		if (!ps_skip_bracketed(p))
			return false;
		v->kind = VAL_DICT;
	} else {
		v->kind = VAL_EXPR;
		v->e = parse_expr(p);
		if (!v->e)
			return false;
	}
	v->span = ps_span_from(p, t);
	return true;
}

/* Arguments after the opening bracket, through `close`. */
bool parse_args(Parser *p, const char *callee, const char *close,
		Args *out)
{
	memset(out, 0, sizeof *out);
	out->open = prev(p);
	out->callee = callee;
	int cap = 4;
	out->v = arena_alloc(p->a, sizeof(Val) * (size_t)cap);
	while (!p->failed && !tok_is(peek(p), close)) {
		out->v = grow(p->a, out->v, out->n, &cap, 4, sizeof(Val));
		Val *v = &out->v[out->n];
		memset(v, 0, sizeof *v);
		if (peek(p)->kind == TK_NAME && tok_is(peek_at(p, 1), "=")) {
			v->kw = next(p)->text;
			next(p);
		} else if (out->n > 0 && out->v[out->n - 1].kw) {
			ps_error_at(p, peek(p)->span, "positional argument after "
				    "keyword argument in %s", callee);
			return false;
		}
		for (int i = 0; v->kw && i < out->n; i++)
			if (out->v[i].kw && strcmp(out->v[i].kw, v->kw) == 0) {
				ps_error_at(p, prev(p)->span, "argument '%s' given twice "
					    "to %s", v->kw, callee);
				return false;
			}
		if (!parse_value(p, v))
			return false;
		out->n++;
		if (!accept(p, ","))
			break;
	}
	if (p->failed)
		return false;
	if (!tok_is(peek(p), close)) {
		ps_error_at(p, peek(p)->span, "expected ',' or '%s' in arguments of "
			    "%s, found %s", close, callee, found(p));
		return false;
	}
	next(p);
	return true;
}

/* Check positional count and keyword names; kws is NULL-terminated. */
bool ps_check_args(Parser *p, const Args *args, int min_pos, int max_pos,
		   const char *const *kws)
{
	int npos = 0;
	for (int i = 0; i < args->n; i++) {
		const Val *v = &args->v[i];
		if (!v->kw) {
			npos++;
			if (npos > max_pos) {
				ps_error_at(p, v->span, "too many arguments to %s "
					    "(at most %d)", args->callee, max_pos);
				return false;
			}
			continue;
		}
		bool ok = false;
		for (int k = 0; kws && kws[k]; k++)
			ok = ok || strcmp(kws[k], v->kw) == 0;
		if (!ok) {
			ps_error_at(p, v->tok->span, "unexpected argument '%s' to %s",
				    v->kw, args->callee);
			return false;
		}
	}
	if (npos < min_pos) {
		ps_error_at(p, prev(p)->span, "%s expects %d argument%s, got %d",
			    args->callee, min_pos, min_pos == 1 ? "" : "s", npos);
		return false;
	}
	return true;
}

/* The argument at positional index `pos` or keyword `kw`. */
Val *ps_arg(const Args *args, int pos, const char *kw)
{
	int k = 0;
	for (int i = 0; i < args->n; i++) {
		Val *v = &args->v[i];
		if (v->kw ? (kw && strcmp(v->kw, kw) == 0) : k++ == pos)
			return v;
	}
	return NULL;
}

Expr *ps_val_expr(Parser *p, Val *v, const char *what)
{
	if (v->kind == VAL_EXPR && v->e)
		return v->e;
	if (v->kind == VAL_EXPR)
		ps_error_at(p, v->span, "buffer '%s' used without indices", v->tok->text);
	else
		ps_error_at(p, v->span, "expected an expression for %s", what);
	return NULL;
}

bool ps_val_string(Parser *p, Val *v, const char *what, const char **out)
{
	if (v->kind == VAL_STR) {
		*out = v->str;
		return true;
	}
	ps_error_at(p, v->span, "expected a string for %s", what);
	return false;
}

bool ps_val_dtype(Parser *p, Val *v, DType *out)
{
	const char *s;
	return ps_val_string(p, v, "the dtype", &s) &&
	       ps_dtype_from_string(p, s, v->span, out);
}

/* A shape: a number or expression, a tuple or a list of them. */
bool ps_val_shape(Parser *p, Val *v, int *n, Expr ***shape)
{
	if (v->kind == VAL_LIST) {
		*n = v->n;
		*shape = v->items;
	} else if (v->kind == VAL_EXPR && v->e) {
		*n = 1;
		*shape = arena_alloc(p->a, sizeof(Expr *));
		(*shape)[0] = ps_finish_expr(v->e);
	} else {
		ps_error_at(p, v->span, "expected a shape such as (4, 4)");
		return false;
	}
	for (int i = 0; i < *n; i++) {
		Expr *e = (*shape)[i];
		if (!ps_check_int_expr(p, e, "a buffer shape"))
			return false;
		bool negative = (e->kind == EX_INT && e->u.ival < 0) ||
				(e->kind == EX_NEG && e->u.un.a->kind == EX_INT && e->u.un.a->u.ival > 0);
		if (negative) {
			ps_error_at(p, e->span.line ? e->span : v->span, "a buffer extent cannot be negative");
			return false;
		}
	}
	return true;
}

/* `axis_separators=[3]` (as the printer writes a transformed buffer):
 * increasing positions in [1, ndim). */
bool ps_val_axis_separators(Parser *p, Val *v, Buffer *b)
{
	int n = v->kind == VAL_LIST ? v->n : 1;
	Expr **items = v->kind == VAL_LIST ? v->items : &v->e;
	if (v->kind != VAL_LIST && !(v->kind == VAL_EXPR && v->e)) {
		ps_error_at(p, v->span, "expected axis_separators such as [2]");
		return false;
	}
	int *seps = arena_alloc(p->a, sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		Expr *e = items[i];
		int64_t prev = i ? seps[i - 1] : 0;
		if (!e || e->kind != EX_INT || e->dtype == DT_BOOL || e->u.ival <= prev ||
		    e->u.ival >= b->ndim) {
			ps_error_at(p, e ? e->span : v->span,
				    "axis_separators must be increasing integers in [1, %d)", b->ndim);
			return false;
		}
		seps[i] = (int)e->u.ival;
	}
	b->naxis_separators = n;
	b->axis_separators = seps;
	return true;
}
