/* kernel/parse_expr.c — expressions, one function per precedence level:
 * `a if c else b`, or, and, not, comparison chains, + -, * / // %, unary
 * minus, atoms (literals, names, loads, T.* calls such as T.min, T.cast,
 * T.if_then_else, T.float32). Nesting depth and chain length are bounded. */
#include "kernel/parse_int.h"

#include <math.h>
#include <string.h>

#define MAX_EXPR_DEPTH 100  /* nested parens / unary operators */
#define MAX_CHAIN 4096      /* operands of one left-associative chain */

static Expr *parse_ternary(Parser *p);

/* One level deeper into parentheses or unary operators; false (and an
 * error at sp) past MAX_EXPR_DEPTH. The caller decrements p->depth when
 * it comes back out. */
static bool enter_nested(Parser *p, Span sp)
{
	if (++p->depth <= MAX_EXPR_DEPTH)
		return true;
	ps_error_at(p, sp, "expression nested too deeply");
	return false;
}

Expr *parse_expr(Parser *p)
{
	if (p->failed || !enter_nested(p, peek(p)->span))
		return NULL;
	Expr *e = parse_ternary(p);
	p->depth--;
	return e;
}

static Expr *int_literal(Parser *p, Token *t, bool negate, Span sp)
{
	uint64_t u = t->uval;
	if (t->int_overflow || u > (uint64_t)INT64_MAX + (negate ? 1u : 0u)) {
		ps_error_at(p, sp, "integer literal %s%s does not fit in int64",
			    negate ? "-" : "", t->text);
		return NULL;
	}
	int64_t v = negate ? (int64_t)(0 - u) : (int64_t)u;
	return ir_int(p->a, v, ps_int_fits(v, DT_INT32) ? DT_INT32 : DT_INT64, sp);
}

Expr *parse_load(Parser *p, Buffer *b, Token *name_tok)
{
	next(p); /* '[' */
	int n = 0;
	Expr **idx = NULL;
	if (tok_is(peek(p), "(") && tok_is(peek_at(p, 1), ")")) { /* 0-d: B[()] */
		p->pos += 2;
		if (!ps_expect(p, "]", "after B[()"))
			return NULL;
	} else if (!parse_expr_list(p, "]", &n, &idx)) {
		return NULL;
	}
	Span sp = ps_span_from(p, name_tok);
	if (n != b->ndim) {
		ps_error_at(p, sp, "buffer '%s' has %d dimension%s but %d ind%s given",
			    b->name, b->ndim, b->ndim == 1 ? "" : "s", n,
			    n == 1 ? "ex is" : "ices are");
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!ps_check_int_expr(p, idx[i], "an index"))
			return NULL;
	const SubView *sv = ps_subview(p, b);
	if (sv) /* a view of a region: that cell of its source */
		return ir_load(p->a, sv->src, sv->src->ndim, ps_subview_indices(p, sv, idx, sp), sp);
	Buffer *x = ps_view_target(p, b);
	if (x) /* a flat view: the same cell of the buffer it shows */
		return ir_load(p->a, x, x->ndim, ps_view_indices(p, x, idx[0], sp), sp);
	return ir_load(p->a, b, n, idx, sp);
}

static Expr *parse_name(Parser *p)
{
	Token *t = next(p);
	const char *name = t->text;
	if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0)
		return ir_int(p->a, name[0] == 'T', DT_BOOL, t->span);
	Var *v;
	Buffer *b;
	if (!ps_lookup(p, name, &v, &b)) {
		if (strcmp(name, "inf") == 0)
			return ir_float(p->a, INFINITY, DT_FLOAT32, t->span);
		if (tok_is(peek(p), "["))
			ps_error_at(p, t->span, "unknown buffer '%s'", name);
		else
			ps_error_at(p, t->span, "unknown name '%s'", name);
		return NULL;
	}
	if (b) {
		if (tok_is(peek(p), "["))
			return parse_load(p, b, t);
		if (tok_is(peek(p), "."))
			return ps_buffer_attr(p, b, t);
		ps_error_at(p, t->span, "buffer '%s' used without indices", name);
		return NULL;
	}
	if (tok_is(peek(p), "[")) {
		ps_error_at(p, t->span, "'%s' is not a buffer", name);
		return NULL;
	}
	if (v->dtype == DT_HANDLE && !p->allow_handle) {
		ps_error_at(p, t->span, "handle '%s' cannot be used in an expression "
			    "(bind it with T.match_buffer)", name);
		return NULL;
	}
	return ir_varref(p->a, v, t->span);
}

/* T.float32(x) and friends: a literal becomes a literal of that dtype,
 * "inf"/"-inf"/"nan" strings are float constants, anything else a cast. */
static Expr *build_constructor(Parser *p, DType t, Args *args, Span sp)
{
	if (!ps_check_args(p, args, 1, 1, NULL))
		return NULL;
	Val *v = ps_arg(args, 0, NULL);
	if (v->kind == VAL_STR) {
		double f;
		if (strcmp(v->str, "inf") == 0 || strcmp(v->str, "+inf") == 0)
			f = INFINITY;
		else if (strcmp(v->str, "-inf") == 0)
			f = -INFINITY;
		else if (strcmp(v->str, "nan") == 0)
			f = NAN;
		else {
			ps_error_at(p, v->span, "expected \"inf\", \"-inf\" or \"nan\"");
			return NULL;
		}
		if (!dtype_is_float(t)) {
			ps_error_at(p, v->span, "%s cannot hold \"%s\"", dtype_name(t), v->str);
			return NULL;
		}
		return ir_float(p->a, f, t, sp);
	}
	Expr *e = ps_val_expr(p, v, args->callee);
	if (!e || ps_is_handle(p, e))
		return NULL;
	if (e->dtype == DT_VOID) {
		ps_retype_void(e, t);
		return e;
	}
	if (ps_is_literal(e)) {
		Expr *l = ps_literal_as(p, e, t);
		if (l) {
			Expr *c = arena_alloc(p->a, sizeof *c);
			*c = *l;
			c->span = sp;
			return c;
		}
	}
	if (e->dtype == t)
		return e;
	return ir_cast(p->a, t, e, sp);
}

static Expr *build_undef(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 0, 1, kws))
		return NULL;
	Val *v = ps_arg(args, 0, "dtype");
	DType t = DT_VOID;
	if (v && !ps_val_dtype(p, v, &t))
		return NULL;
	return ir_undef(p->a, t, sp);
}

/* `T.cast(x, "float32")` (also `dtype=`), and TVM's `T.Cast("float32", x)`
 * with the dtype first. */
static Expr *build_cast(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 1, 2, kws))
		return NULL;
	Val *v = ps_arg(args, 0, NULL), *dv = ps_arg(args, 1, "dtype");
	if (v && dv && v->kind == VAL_STR && !dv->kw) {
		Val *t = v;
		v = dv;
		dv = t;
	}
	if (!v || !dv) {
		ps_error_at(p, sp, "%s expects a value and a dtype", args->callee);
		return NULL;
	}
	DType t;
	Expr *e = ps_val_expr(p, v, args->callee);
	if (!e || !ps_val_dtype(p, dv, &t) || ps_is_handle(p, e))
		return NULL;
	if (e->dtype == DT_VOID) {
		ps_retype_void(e, t);
		return e;
	}
	return ir_cast(p->a, t, e, sp);
}

/* `T.if_then_else(c, a, b)`, optionally with TVM's `dtype=`: the values
 * are converted to it. */
static Expr *build_select(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 3, 3, kws))
		return NULL;
	Val *dv = ps_arg(args, -1, "dtype");
	DType t = DT_VOID;
	if (dv && !ps_val_dtype(p, dv, &t))
		return NULL;
	Expr *c = ps_val_expr(p, ps_arg(args, 0, NULL), "the condition");
	Expr *x = c ? ps_val_expr(p, ps_arg(args, 1, NULL), "the true value") : NULL;
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 2, NULL), "the false value") : NULL;
	if (!y || !ps_check_bool_expr(p, c, "the condition"))
		return NULL;
	if (t != DT_VOID) {
		if (ps_is_handle(p, x) || ps_is_handle(p, y))
			return NULL;
		if (x->dtype == DT_VOID)
			ps_retype_void(x, t);
		if (y->dtype == DT_VOID)
			ps_retype_void(y, t);
		x = ps_convert(p, x, t);
		y = ps_convert(p, y, t);
	}
	if (!ps_unify(p, &x, &y))
		return NULL;
	return ir_select(p->a, c, x, y, sp);
}

/* `T.likely(c)` is c; TVM may spell `dtype="bool"`. */
static Expr *build_likely(Parser *p, Args *args)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 1, 1, kws))
		return NULL;
	Val *dv = ps_arg(args, -1, "dtype");
	DType t;
	if (dv && !ps_val_dtype(p, dv, &t))
		return NULL;
	if (dv && t != DT_BOOL) {
		ps_error_at(p, dv->span, "T.likely is a boolean, not %s", dtype_name(t));
		return NULL;
	}
	Expr *c = ps_val_expr(p, ps_arg(args, 0, NULL), args->callee);
	return ps_check_bool_expr(p, c, "the operand of T.likely") ? c : NULL;
}

/* `T.exp(x)`, `T.pow(x, y)`, `T.fma(x, y, z)` ...: the operands take one
 * dtype, TVM's `dtype=` if given, else that of the first operand that is
 * not a literal (a literal adapts to it); all literals: the first float
 * literal's, or float32. A bare T.undef() takes it too. Operands are
 * floats; T.abs also takes an integer. */
static Expr *build_math(Parser *p, MathFn f, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	int n = mathfn_arity(f);
	if (!ps_check_args(p, args, n, n, kws))
		return NULL;
	Val *dv = ps_arg(args, -1, "dtype");
	Expr *x[MATH_MAX_ARGS];
	DType t = DT_VOID, lit = DT_VOID;
	if (dv && !ps_val_dtype(p, dv, &t))
		return NULL;
	for (int i = 0; i < n; i++) {
		x[i] = ps_val_expr(p, ps_arg(args, i, NULL), args->callee);
		if (!x[i] || ps_is_handle(p, x[i]))
			return NULL;
		if (x[i]->dtype == DT_VOID)
			continue;
		if (!ps_is_literal(x[i])) {
			if (t == DT_VOID)
				t = x[i]->dtype;
		} else if (lit == DT_VOID || (!dtype_is_float(lit) && dtype_is_float(x[i]->dtype))) {
			lit = x[i]->dtype;
		}
	}
	if (t == DT_VOID)
		t = lit != DT_VOID && (dtype_is_float(lit) || f == MF_ABS) ? lit : DT_FLOAT32;
	if (!dtype_is_float(t) && !(f == MF_ABS && dtype_is_int(t))) {
		ps_error_at(p, sp, "%s expects a float%s operand, not %s", args->callee,
			    f == MF_ABS ? " or integer" : "", dtype_name(t));
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (x[i]->dtype == DT_VOID)
			ps_retype_void(x[i], t);
		if (x[i]->dtype == t)
			continue;
		Expr *l = ps_is_literal(x[i]) ? ps_literal_as(p, x[i], t) : NULL;
		if (!l) {
			ps_error_at(p, x[i]->span, "operand of %s is %s, expected %s",
				    args->callee, dtype_name(x[i]->dtype), dtype_name(t));
			return NULL;
		}
		x[i] = l;
	}
	return ir_call(p->a, f, x, sp);
}

static Expr *build_binary_call(Parser *p, BinOp op, Args *args, Span sp)
{
	if (!ps_check_args(p, args, 2, 2, NULL))
		return NULL;
	Expr *x = ps_val_expr(p, ps_arg(args, 0, NULL), args->callee);
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 1, NULL), args->callee) : NULL;
	return y ? ps_make_bin(p, op, x, y, sp) : NULL;
}

/* T.shift_left(x, n) / T.shift_right(x, n), optionally with TVM's
 * `dtype=` (the operands are converted to it): integers only. */
static Expr *build_shift(Parser *p, BinOp op, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 2, 3, kws))
		return NULL;
	Val *dv = ps_arg(args, 2, "dtype");
	DType t = DT_VOID;
	if (dv && !ps_val_dtype(p, dv, &t))
		return NULL;
	Expr *x = ps_val_expr(p, ps_arg(args, 0, NULL), args->callee);
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 1, NULL), args->callee) : NULL;
	if (!y)
		return NULL;
	if (t != DT_VOID) {
		if (!dtype_is_int(t)) {
			ps_error_at(p, dv->span, "%s is an integer operation, not %s",
				    args->callee, dtype_name(t));
			return NULL;
		}
		if (ps_is_handle(p, x) || ps_is_handle(p, y))
			return NULL;
		if (x->dtype == DT_VOID)
			ps_retype_void(x, t);
		if (y->dtype == DT_VOID)
			ps_retype_void(y, t);
		x = ps_convert(p, x, t);
		y = ps_convert(p, y, t);
	}
	return ps_make_bin(p, op, x, y, sp);
}

/* T.min_value("float32") / T.max_value(dtype): the dtype's lowest or
 * highest finite value. */
static Expr *build_limit(Parser *p, bool max, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	DType t;
	Val *dv = ps_arg(args, 0, "dtype");
	if (!ps_check_args(p, args, 0, 1, kws) || !dv || !ps_val_dtype(p, dv, &t))
		return dv ? NULL : (ps_error_at(p, sp, "%s needs a dtype", args->callee), NULL);
	if (t == DT_FLOAT32)
		return ir_float(p->a, max ? 3.4028234663852886e38 : -3.4028234663852886e38, t, sp);
	if (t == DT_FLOAT64)
		return ir_float(p->a, max ? 1.7976931348623157e308 : -1.7976931348623157e308, t, sp);
	if (dtype_is_int(t) || t == DT_BOOL) {
		int bits = dtype_bits(t);
		int64_t hi = t == DT_BOOL ? 1 : dtype_is_signed(t) ? (int64_t)((1ULL << (bits - 1)) - 1)
								: (int64_t)((1ULL << bits) - 1);
		if (bits == 64)
			hi = INT64_MAX;
		int64_t lo = dtype_is_signed(t) && t != DT_BOOL ? -hi - 1 : 0;
		return ir_int(p->a, max ? hi : lo, t, sp);
	}
	ps_error_at(p, dv->span, "%s: no limits for dtype %s", args->callee, dtype_name(t));
	return NULL;
}

/* T.ceildiv(a, b) = (a + b - 1) // b for b > 0: written as -((-a) // b),
 * which is ceil(a / b) for every nonzero b. */
static Expr *build_ceildiv(Parser *p, Args *args, Span sp)
{
	if (!ps_check_args(p, args, 2, 2, NULL))
		return NULL;
	Expr *x = ps_val_expr(p, ps_arg(args, 0, NULL), args->callee);
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 1, NULL), args->callee) : NULL;
	if (!y || !ps_check_int_expr(p, x, "an argument of T.ceildiv") ||
	    !ps_check_int_expr(p, y, "an argument of T.ceildiv"))
		return NULL;
	Expr *q = ps_make_bin(p, OP_FLOORDIV, ir_neg(p->a, x, sp), y, sp);
	return q ? ir_neg(p->a, q, sp) : NULL;
}

/* vsched's printed let expression `T.let(x, value, body)`: x is bound to
 * value over body only; `(` is consumed. */
static Expr *parse_let_expr(Parser *p, Token *first)
{
	Token *nt = peek(p);
	if (nt->kind != TK_NAME || lex_is_keyword(nt->text)) {
		ps_error_at(p, nt->span, "expected a name after 'T.let(', found %s", found(p));
		return NULL;
	}
	next(p);
	if (!ps_expect(p, ",", "after the name of T.let"))
		return NULL;
	Expr *value = parse_expr(p);
	if (!value || ps_is_handle(p, value) || !ps_expect(p, ",", "after the value of T.let"))
		return NULL;
	if (value->dtype == DT_VOID) {
		ps_error_at(p, value->span, "the value of T.let needs a dtype");
		return NULL;
	}
	Var *v = ir_var(p->a, nt->text, value->dtype, nt->span);
	int mark = p->nbinds;
	ps_bind(p, v->name, v, NULL);
	Expr *body = parse_expr(p);
	p->nbinds = mark;
	if (!body || !ps_expect(p, ")", "to close T.let"))
		return NULL;
	return ir_let(p->a, v, value, body, ps_span_from(p, first));
}

/* TVM's `T.Let(body, where={x: value})`, x declared before by
 * `x = T.float32()`: x is value over body. The dict was skipped by
 * parse_args; it is read here from its tokens. */
static Expr *build_let(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"where", NULL};
	if (!ps_check_args(p, args, 1, 2, kws))
		return NULL;
	Val *bv = ps_arg(args, 0, NULL), *wv = ps_arg(args, 1, "where");
	if (!bv || !wv || wv->kind != VAL_DICT) {
		ps_error_at(p, sp, "T.Let expects a body and where={var: value}");
		return NULL;
	}
	Expr *body = ps_val_expr(p, bv, args->callee);
	if (!body)
		return NULL;
	int save = p->pos;
	p->pos = (int)(wv->tok - p->toks) + 1; /* after `{` */
	Token *nt = peek(p);
	Var *v = NULL;
	Buffer *b = NULL;
	Expr *value = NULL;
	if (nt->kind != TK_NAME || !ps_lookup(p, nt->text, &v, &b) || !v) {
		ps_error_at(p, nt->span, "T.Let binds a variable declared by `x = T.float32()`, "
			    "found %s", found(p));
	} else {
		next(p);
		if (ps_expect(p, ":", "in where={var: value}") && (value = parse_expr(p)) &&
		    !ps_is_handle(p, value) && !tok_is(peek(p), "}")) {
			ps_error_at(p, peek(p)->span, "T.Let binds one variable: expected '}', "
				    "found %s", found(p));
			value = NULL;
		}
	}
	p->pos = save;
	if (!value || p->failed)
		return NULL;
	if (value->dtype == DT_VOID)
		ps_retype_void(value, v->dtype);
	value = ps_convert(p, value, v->dtype);
	return value ? ir_let(p->a, v, value, body, sp) : NULL;
}

/* `T.name(...)` in an expression; the name token is at prev(p). */
static Expr *parse_t_call(Parser *p, Token *first, Token *fn)
{
	const char *name = fn->text;
	const char *callee = arena_printf(p->a, "T.%s", name);
	if (strcmp(name, "let") == 0 && tok_is(peek(p), "(")) {
		next(p);
		return parse_let_expr(p, first);
	}
	if (!tok_is(peek(p), "(")) {
		if (strcmp(name, "axis_separator") == 0)
			ps_error_at(p, ps_span_from(p, first), "T.axis_separator is only "
				    "allowed in the index list of a lambda");
		else
			ps_error_at(p, peek(p)->span, "expected '(' after %s, found %s",
				    callee, found(p));
		return NULL;
	}
	next(p);
	Args args;
	if (!parse_args(p, callee, ")", &args))
		return NULL;
	Span sp = ps_span_from(p, first);
	DType t;
	if (strcmp(name, "min") == 0)
		return build_binary_call(p, OP_MIN, &args, sp);
	if (strcmp(name, "max") == 0)
		return build_binary_call(p, OP_MAX, &args, sp);
	if (strcmp(name, "floordiv") == 0)
		return build_binary_call(p, OP_FLOORDIV, &args, sp);
	if (strcmp(name, "Let") == 0)
		return build_let(p, &args, sp);
	if (strcmp(name, "shift_left") == 0)
		return build_shift(p, OP_SHL, &args, sp);
	if (strcmp(name, "shift_right") == 0)
		return build_shift(p, OP_SHR, &args, sp);
	if (strcmp(name, "floormod") == 0)
		return build_binary_call(p, OP_FLOORMOD, &args, sp);
	if (strcmp(name, "if_then_else") == 0 || strcmp(name, "Select") == 0)
		return build_select(p, &args, sp);
	if (strcmp(name, "undef") == 0)
		return build_undef(p, &args, sp);
	if (strcmp(name, "cast") == 0 || strcmp(name, "Cast") == 0)
		return build_cast(p, &args, sp);
	if (strcmp(name, "likely") == 0)
		return build_likely(p, &args);
	if (strcmp(name, "min_value") == 0 || strcmp(name, "max_value") == 0)
		return build_limit(p, name[1] == 'a', &args, sp);
	if (strcmp(name, "ceildiv") == 0)
		return build_ceildiv(p, &args, sp);
	MathFn f;
	if (mathfn_from_name(name, &f))
		return build_math(p, f, &args, sp);
	if (ps_is_opaque_name(name))
		return ps_build_opaque(p, name, &args, sp);
	if (dtype_from_name(name, &t) && t != DT_VOID && t != DT_HANDLE)
		return build_constructor(p, t, &args, sp);
	ps_error_at(p, fn->span, "unknown function '%s'", callee);
	return NULL;
}

/* An atom that starts with a name: `T.f(...)`, a bare `min(...)` or
 * `max(...)` when no variable of that name is in scope, a variable, a
 * load or True/False. NULL without an error when the name is a keyword
 * that starts no atom. */
static Expr *parse_name_atom(Parser *p)
{
	Token *t = peek(p);
	if (strcmp(t->text, "T") == 0 && tok_is(peek_at(p, 1), ".")) {
		next(p);
		next(p);
		Token *fn = peek(p);
		if (fn->kind != TK_NAME) {
			ps_error_at(p, fn->span, "expected a name after 'T.', found %s",
				    found(p));
			return NULL;
		}
		next(p);
		return parse_t_call(p, t, fn);
	}
	if ((strcmp(t->text, "min") == 0 || strcmp(t->text, "max") == 0) &&
	    tok_is(peek_at(p, 1), "(")) {
		Var *v;
		Buffer *b;
		if (!ps_lookup(p, t->text, &v, &b)) {
			next(p);
			return parse_t_call(p, t, t);
		}
	}
	if (lex_is_keyword(t->text) && strcmp(t->text, "True") != 0 &&
	    strcmp(t->text, "False") != 0)
		return NULL;
	return parse_name(p);
}

static Expr *parse_atom(Parser *p)
{
	Token *t = peek(p);
	switch (t->kind) {
	case TK_INT:
		next(p);
		return int_literal(p, t, false, t->span);
	case TK_FLOAT:
		next(p);
		return ir_float(p->a, t->fval, DT_FLOAT32, t->span);
	case TK_STRING:
		ps_error_at(p, t->span, "unexpected string in expression");
		return NULL;
	case TK_NAME: {
		Expr *e = parse_name_atom(p);
		if (e || p->failed)
			return e;
		break;
	}
	case TK_OP:
		if (tok_is(t, "(")) {
			next(p);
			Expr *e = parse_expr(p);
			if (!e || !ps_expect(p, ")", "to close '('"))
				return NULL;
			return e;
		}
		break;
	case TK_EOF: case TK_NEWLINE: case TK_INDENT: case TK_DEDENT:
		break;
	}
	ps_error_at(p, t->span, "expected an expression, found %s", found(p));
	return NULL;
}

static Expr *parse_unary(Parser *p)
{
	Token *t = peek(p);
	if (tok_is(t, "-") || tok_is(t, "+")) {
		bool neg = tok_is(t, "-");
		next(p);
		Token *n = peek(p);
		/* a negative literal folds into the literal */
		if (n->kind == TK_INT) {
			next(p);
			return int_literal(p, n, neg, ps_span_from(p, t));
		}
		if (n->kind == TK_FLOAT) {
			next(p);
			return ir_float(p->a, neg ? -n->fval : n->fval, DT_FLOAT32,
					ps_span_from(p, t));
		}
		if (!enter_nested(p, t->span))
			return NULL;
		Expr *e = parse_unary(p);
		p->depth--;
		if (!e || ps_is_handle(p, e))
			return NULL;
		if (!neg)
			return e;
		if (e->kind == EX_FLOAT)
			return ir_float(p->a, -e->u.fval, e->dtype, ps_span_from(p, t));
		/* fold only when the negation fits the literal's dtype:
		 * -(-2147483648) stays a negation of an int32 */
		if (e->kind == EX_INT && e->dtype != DT_BOOL && e->u.ival != INT64_MIN &&
		    ps_int_fits(-e->u.ival, e->dtype))
			return ir_int(p->a, -e->u.ival, e->dtype, ps_span_from(p, t));
		if (e->dtype == DT_BOOL) {
			ps_error_at(p, e->span, "cannot negate a boolean");
			return NULL;
		}
		return ir_neg(p->a, e, ps_span_from(p, t));
	}
	return parse_atom(p);
}

/* The operator a token spells at one precedence level, if any. */
bool ps_find_op(const Token *t, const char *const *spellings,
		const BinOp *ops, BinOp *op)
{
	for (int i = 0; spellings[i]; i++)
		if (tok_is(t, spellings[i])) {
			*op = ops[i];
			return true;
		}
	return false;
}

static bool chain_too_long(Parser *p, int *count)
{
	if (++*count <= MAX_CHAIN)
		return false;
	ps_error_at(p, peek(p)->span, "expression too long");
	return true;
}

/* A left-associative chain `x op y op z` of one precedence level (the
 * operators spelled spellings[i] make ops[i]), each link spanning from x.
 * An `and` / `or` link has always been given the span up to its operator
 * (`a and b` spans `a and`): kept, so that diagnostics stay as they were. */
static Expr *parse_chain(Parser *p, Expr *(*operand)(Parser *),
			 const char *const *spellings, const BinOp *ops,
			 bool span_to_operator)
{
	Token *first = peek(p);
	Expr *e = operand(p);
	BinOp op;
	int count = 0;
	while (e && ps_find_op(peek(p), spellings, ops, &op) &&
	       !chain_too_long(p, &count)) {
		next(p);
		Span to_operator = ps_span_from(p, first);
		Expr *r = operand(p);
		e = ps_make_bin(p, op, e, r,
				span_to_operator ? to_operator : ps_span_from(p, first));
	}
	return p->failed ? NULL : e;
}

static Expr *parse_mul(Parser *p)
{
	static const char *const s[] = {"*", "/", "//", "%", NULL};
	static const BinOp ops[] = {OP_MUL, OP_DIV, OP_FLOORDIV, OP_FLOORMOD};
	return parse_chain(p, parse_unary, s, ops, false);
}

static Expr *parse_add(Parser *p)
{
	static const char *const s[] = {"+", "-", NULL};
	static const BinOp ops[] = {OP_ADD, OP_SUB};
	return parse_chain(p, parse_mul, s, ops, false);
}

/* Python's `<<` / `>>` bind looser than `+` and tighter than comparisons */
static Expr *parse_shift(Parser *p)
{
	static const char *const s[] = {"<<", ">>", NULL};
	static const BinOp ops[] = {OP_SHL, OP_SHR};
	return parse_chain(p, parse_add, s, ops, false);
}

static bool cmp_op(const Token *t, BinOp *op)
{
	static const char *const s[] = {"==", "!=", "<", "<=", ">", ">=", NULL};
	static const BinOp ops[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
	return ps_find_op(t, s, ops, op);
}

/* `a < b <= c` is `a < b and b <= c`. */
static Expr *parse_compare(Parser *p)
{
	Token *first = peek(p);
	Expr *left = parse_shift(p);
	Expr *result = NULL;
	BinOp op;
	int count = 0;
	while (left && cmp_op(peek(p), &op) && !chain_too_long(p, &count)) {
		next(p);
		Token *rt = peek(p);
		Expr *right = parse_shift(p);
		if (!right)
			return NULL;
		Expr *c = ps_make_bin(p, op, left, right, ps_span_from(p, first));
		if (!c)
			return NULL;
		result = result ? ps_make_bin(p, OP_AND, result, c, ps_span_from(p, first)) : c;
		/* ps_unify may have converted `right`; the next link compares the
		 * converted middle operand */
		left = c->u.bin.b;
		first = rt;
	}
	if (p->failed)
		return NULL;
	return result ? result : left;
}

static Expr *parse_not(Parser *p)
{
	Token *t = peek(p);
	if (!tok_is(t, "not"))
		return parse_compare(p);
	next(p);
	if (!enter_nested(p, t->span))
		return NULL;
	Expr *e = parse_not(p);
	p->depth--;
	if (!e || !ps_check_bool_expr(p, e, "the operand of 'not'"))
		return NULL;
	return ir_not(p->a, e, ps_span_from(p, t));
}

static Expr *parse_and(Parser *p)
{
	static const char *const s[] = {"and", NULL};
	static const BinOp ops[] = {OP_AND};
	return parse_chain(p, parse_not, s, ops, true);
}

static Expr *parse_or(Parser *p)
{
	static const char *const s[] = {"or", NULL};
	static const BinOp ops[] = {OP_OR};
	return parse_chain(p, parse_and, s, ops, true);
}

/* Python's `a if c else b`. */
static Expr *parse_ternary(Parser *p)
{
	Token *first = peek(p);
	Expr *e = parse_or(p);
	if (!e || !tok_is(peek(p), "if"))
		return e;
	next(p);
	Expr *c = parse_or(p);
	if (!c || !ps_expect(p, "else", "in conditional expression"))
		return NULL;
	Expr *y = parse_expr(p);
	if (!y || !ps_check_bool_expr(p, c, "the condition") || !ps_unify(p, &e, &y))
		return NULL;
	return ir_select(p->a, c, e, y, ps_span_from(p, first));
}
