/* kernel/parse.c — the kernel-language parser (interfaces.md): a .tir file
 * holding one @T.prim_func or one @I.ir_module class, plus standalone
 * expressions and lambdas parsed against a function's scope. Recursive
 * descent over kernel/lex.c tokens; names resolve to the innermost binding;
 * operands are unified to one dtype (literals adapt, otherwise the narrower
 * side is cast); stops at the first error and returns NULL. */
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"

#define MAX_EXPR_DEPTH 100  /* nested parens / unary operators */
#define MAX_CHAIN 4096      /* operands of one left-associative chain */
#define MAX_BINDERS 10000   /* lets/allocs in one list: each nests the rest */

typedef enum { BIND_VAR, BIND_BUF } BindKind;

typedef struct Binding {
	const char *name;
	BindKind kind;
	Var *var;
	Buffer *buf;
} Binding;

typedef struct Parser {
	Arena *a;
	const Source *src;
	DiagList *d;
	Token *toks;
	int ntoks, pos;
	bool failed;
	int depth;
	Binding *binds;
	int nbinds, capbinds;
	const ParseScope *scope; /* standalone expressions: the outer names */
	bool allow_handle;       /* parsing T.match_buffer's arguments */
	/* the function being parsed */
	Param *params;
	int nparams;
	bool in_func_top; /* statements directly in the function body */
} Parser;

/* ---------- tokens and errors ---------- */

static Token *peek(Parser *p) { return &p->toks[p->pos]; }

static Token *peek_at(Parser *p, int k)
{
	int i = p->pos + k;
	return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static Token *next(Parser *p)
{
	Token *t = &p->toks[p->pos];
	if (p->pos < p->ntoks - 1)
		p->pos++;
	return t;
}

static Token *prev(Parser *p) { return &p->toks[p->pos > 0 ? p->pos - 1 : 0]; }

static void ps_error_at(Parser *p, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ps_error_at(Parser *p, Span sp, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(p->d, DIAG_ERROR, sp, fmt, ap);
	va_end(ap);
}

static const char *found(Parser *p) { return tok_describe(p->a, peek(p)); }

static bool accept(Parser *p, const char *s)
{
	if (!tok_is(peek(p), s))
		return false;
	next(p);
	return true;
}

/* Consume operator s or report "expected 's' <what>, found X". */
static bool ps_expect(Parser *p, const char *s, const char *what)
{
	if (p->failed)
		return false;
	if (accept(p, s))
		return true;
	ps_error_at(p, peek(p)->span, "expected '%s'%s%s, found %s", s,
		    what[0] ? " " : "", what, found(p));
	return false;
}

static bool at_kind(Parser *p, TokKind k) { return peek(p)->kind == k; }

/* True if the next tokens are `T . name` (any name when name is NULL). */
static bool ps_at_t_name(Parser *p, const char *name)
{
	const Token *n = peek_at(p, 2);
	return tok_is(peek(p), "T") && tok_is(peek_at(p, 1), ".") &&
	       n->kind == TK_NAME && (!name || strcmp(n->text, name) == 0);
}

static const char *ps_expect_name(Parser *p, const char *what)
{
	Token *t = peek(p);
	if (t->kind != TK_NAME || lex_is_keyword(t->text)) {
		ps_error_at(p, t->span, "expected %s, found %s", what, found(p));
		return NULL;
	}
	next(p);
	return t->text;
}

static bool ps_expect_newline(Parser *p, const char *what)
{
	if (p->failed)
		return false;
	if (at_kind(p, TK_NEWLINE)) {
		next(p);
		return true;
	}
	ps_error_at(p, peek(p)->span, "expected end of line after %s, found %s",
		    what, found(p));
	return false;
}

/* The span from token `first` to the previous token (clipped to one line). */
static Span ps_span_from(Parser *p, const Token *first)
{
	Span sp = first->span;
	const Token *last = prev(p);
	if (last < first || last->kind == TK_NEWLINE || last->kind == TK_EOF)
		return sp;
	if (last->span.line == sp.line && last->start + last->len > first->start)
		sp.len = last->start + last->len - first->start;
	else if (last->span.line != sp.line) {
		const char *t = p->src->text + first->start;
		int n = 0;
		while (t[n] && t[n] != '\n')
			n++;
		sp.len = n;
	}
	return sp;
}

/* items (n in use, room for *cap) with room for one more: when full, an
 * arena copy of twice the size (first_cap when there was none). */
static void *grow(Arena *a, void *items, int n, int *cap, int first_cap,
		  size_t size)
{
	if (n < *cap)
		return items;
	int ncap = *cap ? *cap * 2 : first_cap;
	void *bigger = arena_alloc(a, size * (size_t)ncap);
	if (n)
		memcpy(bigger, items, size * (size_t)n);
	*cap = ncap;
	return bigger;
}

/* ---------- scopes ---------- */

static void ps_bind(Parser *p, const char *name, Var *v, Buffer *b)
{
	p->binds = grow(p->a, p->binds, p->nbinds, &p->capbinds, 32,
			sizeof(Binding));
	Binding *x = &p->binds[p->nbinds++];
	x->name = name;
	x->kind = v ? BIND_VAR : BIND_BUF;
	x->var = v;
	x->buf = b;
}

static Buffer *find_alloc(Stmt *s, const char *name);

static Buffer *find_alloc_list(int n, Stmt **items, const char *name)
{
	for (int i = 0; i < n; i++) {
		Buffer *b = find_alloc(items[i], name);
		if (b)
			return b;
	}
	return NULL;
}

/* An alloc'ed buffer named `name` anywhere in s (first in program order). */
static Buffer *find_alloc(Stmt *s, const char *name)
{
	if (!s)
		return NULL;
	switch (s->kind) {
	case ST_SEQ: return find_alloc_list(s->u.seq.n, s->u.seq.items, name);
	case ST_FOR: return find_alloc(s->u.loop.body, name);
	case ST_IF: {
		Buffer *b = find_alloc(s->u.cond.then_s, name);
		return b ? b : find_alloc(s->u.cond.else_s, name);
	}
	case ST_ALLOC:
		if (strcmp(s->u.alloc.buf->name, name) == 0)
			return s->u.alloc.buf;
		return find_alloc(s->u.alloc.body, name);
	case ST_BLOCK: return find_alloc(s->u.block.body, name);
	case ST_LET: return find_alloc(s->u.let.body, name);
	case ST_STORE:
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
	case ST_COUNT: return NULL;
	}
	return NULL;
}

/* The innermost binding of name: parser scopes, then the ParseScope of a
 * standalone expression (its vars, then the function's names). */
static bool ps_lookup(Parser *p, const char *name, Var **v, Buffer **b)
{
	*v = NULL;
	*b = NULL;
	for (int i = p->nbinds - 1; i >= 0; i--)
		if (strcmp(p->binds[i].name, name) == 0) {
			*v = p->binds[i].var;
			*b = p->binds[i].buf;
			return true;
		}
	const ParseScope *sc = p->scope;
	if (!sc)
		return false;
	for (int i = sc->nvars - 1; i >= 0; i--)
		if (sc->vars[i] && strcmp(sc->vars[i]->name, name) == 0) {
			*v = sc->vars[i];
			return true;
		}
	for (int i = 0; i < sc->nbufs; i++)
		if (strcmp(sc->bufs[i]->name, name) == 0) {
			*b = sc->bufs[i];
			return true;
		}
	const Func *f = sc->func;
	if (!f)
		return false;
	for (int i = 0; i < f->nparams; i++) {
		const Param *pr = &f->params[i];
		if (pr->buf && strcmp(pr->buf->name, name) == 0) {
			*b = pr->buf;
			return true;
		}
		if (pr->var && strcmp(pr->var->name, name) == 0) {
			*v = pr->var;
			return true;
		}
	}
	*b = find_alloc(f->body, name);
	return *b != NULL;
}

/* ---------- dtypes and operand unification ---------- */

static bool ps_is_literal(const Expr *e)
{
	return (e->kind == EX_INT && e->dtype != DT_BOOL) || e->kind == EX_FLOAT;
}

/* Give an expression of unresolved dtype (built from a bare T.undef())
 * the dtype t, down through the nodes that inherited the placeholder. */
static void ps_retype_void(Expr *e, DType t)
{
	while (e && e->dtype == DT_VOID) {
		e->dtype = t;
		switch (e->kind) {
		case EX_BIN:
			if (!binop_is_compare(e->u.bin.op) &&
			    !binop_is_logical(e->u.bin.op))
				ps_retype_void(e->u.bin.a, t);
			e = e->u.bin.b;
			break;
		case EX_NEG: e = e->u.un.a; break;
		case EX_SELECT:
			ps_retype_void(e->u.sel.a, t);
			e = e->u.sel.b;
			break;
		case EX_LET: e = e->u.let.body; break;
		case EX_INT:
		case EX_FLOAT:
		case EX_VAR:
		case EX_NOT:
		case EX_CAST:
		case EX_LOAD:
		case EX_UNDEF:
		case EX_COUNT: return;
		}
	}
}

static bool ps_int_fits(int64_t v, DType t)
{
	switch (t) {
	case DT_INT8: return v >= -128 && v <= 127;
	case DT_INT16: return v >= -32768 && v <= 32767;
	case DT_INT32: return v >= INT32_MIN && v <= INT32_MAX;
	case DT_UINT8: return v >= 0 && v <= 255;
	case DT_INT64: return true;
	case DT_BOOL: return v == 0 || v == 1;
	case DT_FLOAT32:
	case DT_FLOAT64:
	case DT_HANDLE:
	case DT_VOID:
	case DT_COUNT: return false;
	}
	return false;
}

/* A literal re-made with dtype t, or NULL if it cannot be (a fractional
 * float to an integer type, an out-of-range integer). */
static Expr *ps_literal_as(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (dtype_is_float(t))
		return ir_float(p->a, e->kind == EX_INT ? (double)e->u.ival : e->u.fval,
				t, e->span);
	if (!dtype_is_int(t))
		return NULL;
	if (e->kind == EX_INT)
		return ps_int_fits(e->u.ival, t) ? ir_int(p->a, e->u.ival, t, e->span) : NULL;
	double f = e->u.fval;
	if (!isfinite(f) || f != floor(f) || f < -9.2e18 || f > 9.2e18 ||
	    !ps_int_fits((int64_t)f, t))
		return NULL;
	return ir_int(p->a, (int64_t)f, t, e->span);
}

/* The common dtype of two different non-literal operands: float wins,
 * then the wider type, then the signed one. */
static DType promote(DType x, DType y)
{
	if (dtype_is_float(x) != dtype_is_float(y))
		return dtype_is_float(x) ? x : y;
	if (x == DT_BOOL)
		return y == DT_BOOL ? x : y;
	if (y == DT_BOOL)
		return x;
	if (dtype_bits(x) != dtype_bits(y))
		return dtype_bits(x) > dtype_bits(y) ? x : y;
	return dtype_is_signed(x) ? x : y;
}

static Expr *ps_convert(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (ps_is_literal(e)) {
		Expr *l = ps_literal_as(p, e, t);
		if (l)
			return l;
	}
	return ir_cast(p->a, t, e, e->span);
}

static bool ps_is_handle(Parser *p, const Expr *e)
{
	if (e->dtype != DT_HANDLE)
		return false;
	ps_error_at(p, e->span, "a handle cannot be used in an expression "
		    "(bind it with T.match_buffer)");
	return true;
}

/* Make *x and *y the same dtype (see the file comment). */
static bool ps_unify(Parser *p, Expr **x, Expr **y)
{
	if (ps_is_handle(p, *x) || ps_is_handle(p, *y))
		return false;
	DType tx = (*x)->dtype, ty = (*y)->dtype;
	if (tx == ty) {
		if (tx == DT_VOID) {
			ps_retype_void(*x, DT_INT32);
			ps_retype_void(*y, DT_INT32);
		}
		return true;
	}
	if (tx == DT_VOID) {
		ps_retype_void(*x, ty);
		return true;
	}
	if (ty == DT_VOID) {
		ps_retype_void(*y, tx);
		return true;
	}
	bool lx = ps_is_literal(*x), ly = ps_is_literal(*y);
	if (lx && !ly && ty != DT_BOOL) {
		Expr *l = ps_literal_as(p, *x, ty);
		if (l) {
			*x = l;
			return true;
		}
	}
	if (ly && !lx && tx != DT_BOOL) {
		Expr *l = ps_literal_as(p, *y, tx);
		if (l) {
			*y = l;
			return true;
		}
	}
	DType t = promote(tx, ty);
	*x = ps_convert(p, *x, t);
	*y = ps_convert(p, *y, t);
	return true;
}

static Expr *ps_make_bin(Parser *p, BinOp op, Expr *x, Expr *y, Span sp)
{
	if (!x || !y || p->failed)
		return NULL;
	if (binop_is_logical(op)) {
		if (x->dtype == DT_VOID)
			ps_retype_void(x, DT_BOOL);
		if (y->dtype == DT_VOID)
			ps_retype_void(y, DT_BOOL);
		const Expr *bad = x->dtype != DT_BOOL ? x : y->dtype != DT_BOOL ? y : NULL;
		if (bad) {
			ps_error_at(p, bad->span, "operand of '%s' must be a boolean, "
				    "not %s", binop_symbol(op), dtype_name(bad->dtype));
			return NULL;
		}
		return ir_bin(p->a, op, x, y, sp);
	}
	if (!ps_unify(p, &x, &y))
		return NULL;
	if (op == OP_DIV && !dtype_is_float(x->dtype)) {
		ps_error_at(p, sp, "integer '/' is ambiguous: use '//' (floor division)");
		return NULL;
	}
	if (!binop_is_compare(op) && x->dtype == DT_BOOL) {
		x = ir_cast(p->a, DT_INT32, x, x->span);
		y = ir_cast(p->a, DT_INT32, y, y->span);
	}
	return ir_bin(p->a, op, x, y, sp);
}

static bool contains_undef(const Expr *e, Span *where)
{
	while (e) {
		switch (e->kind) {
		case EX_UNDEF: *where = e->span; return true;
		case EX_COUNT: return false;
		case EX_INT:
		case EX_FLOAT:
		case EX_VAR: return false;
		case EX_BIN:
			if (contains_undef(e->u.bin.a, where))
				return true;
			e = e->u.bin.b;
			break;
		case EX_NOT:
		case EX_NEG:
		case EX_CAST: e = e->u.un.a; break;
		case EX_SELECT:
			if (contains_undef(e->u.sel.cond, where) ||
			    contains_undef(e->u.sel.a, where))
				return true;
			e = e->u.sel.b;
			break;
		case EX_LOAD:
			for (int i = 0; i < e->u.load.nidx; i++)
				if (contains_undef(e->u.load.idx[i], where))
					return true;
			return false;
		case EX_LET:
			if (contains_undef(e->u.let.value, where))
				return true;
			e = e->u.let.body;
			break;
		}
	}
	return false;
}

/* An integer-valued expression with no T.undef(): an index, extent,
 * loop bound or shape. */
static bool ps_check_int_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	Span where;
	if (contains_undef(e, &where)) {
		ps_error_at(p, where, "T.undef() cannot be used in %s", what);
		return false;
	}
	if (!dtype_is_int(e->dtype)) {
		ps_error_at(p, e->span, "%s must be an integer expression, not %s",
			    what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

static bool ps_check_bool_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	if (e->dtype == DT_VOID)
		ps_retype_void(e, DT_BOOL);
	if (e->dtype != DT_BOOL) {
		ps_error_at(p, e->span, "%s must be a boolean expression, not %s",
			    what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

/* A whole expression is done: a bare T.undef() left defaults to int32. */
static Expr *ps_finish_expr(Expr *e)
{
	if (e && e->dtype == DT_VOID)
		ps_retype_void(e, DT_INT32);
	return e;
}

static bool ps_dtype_from_string(Parser *p, const char *s, Span sp, DType *out)
{
	if (dtype_from_name(s, out) && *out != DT_VOID && *out != DT_HANDLE)
		return true;
	ps_error_at(p, sp, "unknown dtype '%s'", s);
	return false;
}

/* ---------- call arguments ---------- */

typedef enum { VAL_EXPR, VAL_STR, VAL_LIST, VAL_DICT } ValKind;

typedef struct Val {
	ValKind kind;
	const char *kw; /* NULL if positional */
	Token *tok;     /* first token of the value */
	Span span;
	Expr *e;         /* VAL_EXPR */
	const char *str; /* VAL_STR */
	int n;           /* VAL_LIST */
	Expr **items;
} Val;

typedef struct Args {
	int n;
	Val *v;
	Token *open;
	const char *callee; /* for messages: "T.alloc_buffer" */
} Args;

static Expr *parse_expr(Parser *p);

static bool is_open_bracket(const Token *t)
{
	return tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{");
}

static bool is_close_bracket(const Token *t)
{
	return tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}");
}

/* Index of the token matching the bracket at token index `at`, or -1. */
static int ps_matching(Parser *p, int at)
{
	int depth = 0;
	for (int i = at; i < p->ntoks; i++) {
		Token *t = &p->toks[i];
		if (is_open_bracket(t))
			depth++;
		else if (is_close_bracket(t) && --depth == 0)
			return i;
	}
	return -1;
}

/* Skip the bracketed group that opens at peek (a dict argument, a
 * decorator's arguments). */
static bool ps_skip_bracketed(Parser *p)
{
	int end = ps_matching(p, p->pos);
	if (end < 0) {
		ps_error_at(p, peek(p)->span, "'%s' was never closed", peek(p)->text);
		return false;
	}
	p->pos = end + 1;
	return true;
}

/* True if the parenthesis at p->pos opens a tuple: `()` or a top-level
 * comma inside. */
static bool ps_paren_is_tuple(Parser *p)
{
	int end = ps_matching(p, p->pos);
	if (end < 0)
		return false;
	if (end == p->pos + 1)
		return true;
	int depth = 0;
	for (int i = p->pos + 1; i < end; i++) {
		Token *t = &p->toks[i];
		if (is_open_bracket(t))
			depth++;
		else if (is_close_bracket(t))
			depth--;
		else if (depth == 0 && tok_is(t, ","))
			return true;
	}
	return false;
}

/* `[e, e, ...]` or `(e, e, ...)` with an optional trailing comma. */
static bool parse_expr_list(Parser *p, const char *close, int *n, Expr ***items)
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
static bool parse_args(Parser *p, const char *callee, const char *close,
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
static bool ps_check_args(Parser *p, const Args *args, int min_pos, int max_pos,
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
static Val *ps_arg(const Args *args, int pos, const char *kw)
{
	int k = 0;
	for (int i = 0; i < args->n; i++) {
		Val *v = &args->v[i];
		if (v->kw ? (kw && strcmp(v->kw, kw) == 0) : k++ == pos)
			return v;
	}
	return NULL;
}

static Expr *ps_val_expr(Parser *p, Val *v, const char *what)
{
	if (v->kind == VAL_EXPR)
		return v->e;
	ps_error_at(p, v->span, "expected an expression for %s", what);
	return NULL;
}

static bool ps_val_string(Parser *p, Val *v, const char *what, const char **out)
{
	if (v->kind == VAL_STR) {
		*out = v->str;
		return true;
	}
	ps_error_at(p, v->span, "expected a string for %s", what);
	return false;
}

static bool ps_val_dtype(Parser *p, Val *v, DType *out)
{
	const char *s;
	return ps_val_string(p, v, "the dtype", &s) &&
	       ps_dtype_from_string(p, s, v->span, out);
}

/* A shape: a number or expression, a tuple or a list of them. */
static bool ps_val_shape(Parser *p, Val *v, int *n, Expr ***shape)
{
	if (v->kind == VAL_LIST) {
		*n = v->n;
		*shape = v->items;
	} else if (v->kind == VAL_EXPR) {
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
static bool ps_val_axis_separators(Parser *p, Val *v, Buffer *b)
{
	int n = v->kind == VAL_LIST ? v->n : 1;
	Expr **items = v->kind == VAL_LIST ? v->items : &v->e;
	if (v->kind != VAL_LIST && v->kind != VAL_EXPR) {
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

/* ---------- expressions ---------- */

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

static Expr *parse_expr(Parser *p)
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

static Expr *parse_load(Parser *p, Buffer *b, Token *name_tok)
{
	next(p); /* '[' */
	int n;
	Expr **idx;
	if (!parse_expr_list(p, "]", &n, &idx))
		return NULL;
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

static Expr *build_cast(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!ps_check_args(p, args, 1, 2, kws))
		return NULL;
	Val *v = ps_arg(args, 0, NULL), *dv = ps_arg(args, 1, "dtype");
	if (!v || !dv) {
		ps_error_at(p, sp, "T.cast expects a value and a dtype");
		return NULL;
	}
	DType t;
	Expr *e = ps_val_expr(p, v, "T.cast");
	if (!e || !ps_val_dtype(p, dv, &t) || ps_is_handle(p, e))
		return NULL;
	if (e->dtype == DT_VOID) {
		ps_retype_void(e, t);
		return e;
	}
	return ir_cast(p->a, t, e, sp);
}

static Expr *build_select(Parser *p, Args *args, Span sp)
{
	if (!ps_check_args(p, args, 3, 3, NULL))
		return NULL;
	Expr *c = ps_val_expr(p, ps_arg(args, 0, NULL), "the condition");
	Expr *x = c ? ps_val_expr(p, ps_arg(args, 1, NULL), "the true value") : NULL;
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 2, NULL), "the false value") : NULL;
	if (!y || !ps_check_bool_expr(p, c, "the condition") || !ps_unify(p, &x, &y))
		return NULL;
	return ir_select(p->a, c, x, y, sp);
}

static Expr *build_binary_call(Parser *p, BinOp op, Args *args, Span sp)
{
	if (!ps_check_args(p, args, 2, 2, NULL))
		return NULL;
	Expr *x = ps_val_expr(p, ps_arg(args, 0, NULL), args->callee);
	Expr *y = x ? ps_val_expr(p, ps_arg(args, 1, NULL), args->callee) : NULL;
	return y ? ps_make_bin(p, op, x, y, sp) : NULL;
}

/* `T.name(...)` in an expression; the name token is at prev(p). */
static Expr *parse_t_call(Parser *p, Token *first, Token *fn)
{
	const char *name = fn->text;
	const char *callee = arena_printf(p->a, "T.%s", name);
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
	if (strcmp(name, "floormod") == 0)
		return build_binary_call(p, OP_FLOORMOD, &args, sp);
	if (strcmp(name, "if_then_else") == 0 || strcmp(name, "Select") == 0)
		return build_select(p, &args, sp);
	if (strcmp(name, "undef") == 0)
		return build_undef(p, &args, sp);
	if (strcmp(name, "cast") == 0 || strcmp(name, "Cast") == 0)
		return build_cast(p, &args, sp);
	if (strcmp(name, "likely") == 0) {
		if (!ps_check_args(p, &args, 1, 1, NULL))
			return NULL;
		return ps_val_expr(p, ps_arg(&args, 0, NULL), callee);
	}
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
	case TK_EOF:
	case TK_NEWLINE:
	case TK_INDENT:
	case TK_DEDENT:
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
static bool ps_find_op(const Token *t, const char *const *spellings,
		       const BinOp *ops, BinOp *op)
{
	for (int i = 0; spellings[i]; i++)
		if (tok_is(t, spellings[i])) {
			*op = ops[i];
			return true;
		}
	return false;
}

static bool mul_op(const Token *t, BinOp *op)
{
	static const char *const s[] = {"*", "/", "//", "%", NULL};
	static const BinOp ops[] = {OP_MUL, OP_DIV, OP_FLOORDIV, OP_FLOORMOD};
	return ps_find_op(t, s, ops, op);
}

static bool add_op(const Token *t, BinOp *op)
{
	static const char *const s[] = {"+", "-", NULL};
	static const BinOp ops[] = {OP_ADD, OP_SUB};
	return ps_find_op(t, s, ops, op);
}

static bool and_op(const Token *t, BinOp *op)
{
	static const char *const s[] = {"and", NULL};
	static const BinOp ops[] = {OP_AND};
	return ps_find_op(t, s, ops, op);
}

static bool or_op(const Token *t, BinOp *op)
{
	static const char *const s[] = {"or", NULL};
	static const BinOp ops[] = {OP_OR};
	return ps_find_op(t, s, ops, op);
}

static bool chain_too_long(Parser *p, int *count)
{
	if (++*count <= MAX_CHAIN)
		return false;
	ps_error_at(p, peek(p)->span, "expression too long");
	return true;
}

/* A left-associative chain `x op y op z` of one precedence level, each
 * link spanning from x. An `and` / `or` link has always been given the
 * span up to its operator (`a and b` spans `a and`): kept, so that
 * diagnostics stay as they were. */
static Expr *parse_chain(Parser *p, Expr *(*operand)(Parser *),
			 bool (*op_of)(const Token *, BinOp *),
			 bool span_to_operator)
{
	Token *first = peek(p);
	Expr *e = operand(p);
	BinOp op;
	int count = 0;
	while (e && op_of(peek(p), &op) && !chain_too_long(p, &count)) {
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
	return parse_chain(p, parse_unary, mul_op, false);
}

static Expr *parse_add(Parser *p)
{
	return parse_chain(p, parse_mul, add_op, false);
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
	Expr *left = parse_add(p);
	Expr *result = NULL;
	BinOp op;
	int count = 0;
	while (left && cmp_op(peek(p), &op) && !chain_too_long(p, &count)) {
		next(p);
		Token *rt = peek(p);
		Expr *right = parse_add(p);
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
	return parse_chain(p, parse_not, and_op, true);
}

static Expr *parse_or(Parser *p)
{
	return parse_chain(p, parse_and, or_op, true);
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

/* ---------- statements ---------- */

/* A let or alloc statement whose body (the rest of its list) is filled in
 * when the list is complete. */
static bool is_pending_binder(const Stmt *s)
{
	return (s->kind == ST_LET && !s->u.let.body) ||
	       (s->kind == ST_ALLOC && !s->u.alloc.body);
}

typedef struct StmtList {
	int n, cap;
	Stmt **items;
} StmtList;

static void list_push(Parser *p, StmtList *l, Stmt *s)
{
	l->items = grow(p->a, l->items, l->n, &l->cap, 8, sizeof(Stmt *));
	l->items[l->n++] = s;
}

/* items[0, n) followed by `carry` (if any) as one statement: a single
 * statement stands alone, several make a ST_SEQ, none an empty ST_SEQ. */
static Stmt *seq_of(Parser *p, Stmt **items, int n, Stmt *carry, Span sp)
{
	int total = n + (carry ? 1 : 0);
	if (total == 0) /* e.g. a block of docstrings only: same as `pass` */
		return ir_pass(p->a, sp);
	if (total == 1)
		return carry ? carry : items[0];
	Stmt **all = arena_alloc(p->a, sizeof(Stmt *) * (size_t)(total + 1));
	for (int i = 0; i < n; i++)
		all[i] = items[i];
	if (carry)
		all[n] = carry;
	return ir_seq(p->a, total, all, total ? all[0]->span : sp);
}

/* Close a statement list: each let/alloc takes the rest as its body. */
static Stmt *build_list(Parser *p, StmtList *l, Span sp)
{
	Stmt *carry = NULL;
	int hi = l->n, nbinders = 0;
	for (int i = 0; i < l->n; i++)
		if (is_pending_binder(l->items[i]) && ++nbinders > MAX_BINDERS) {
			ps_error_at(p, l->items[i]->span, "too many let bindings and "
				    "allocations in one block (at most %d)", MAX_BINDERS);
			return NULL;
		}
	for (int i = l->n - 1; i >= 0; i--) {
		Stmt *s = l->items[i];
		if (!is_pending_binder(s))
			continue;
		Stmt *body = seq_of(p, l->items + i + 1, hi - i - 1, carry, s->span);
		if (s->kind == ST_LET)
			s->u.let.body = body;
		else
			s->u.alloc.body = body;
		carry = s;
		hi = i;
	}
	return seq_of(p, l->items, hi, carry, sp);
}

static Stmt *parse_suite(Parser *p, const char *what, bool func_top);
static bool parse_statement(Parser *p, StmtList *out);

/* Statements up to the DEDENT that closes the block (or EOF at top). */
static Stmt *parse_stmt_list(Parser *p, Span sp)
{
	StmtList l = {0};
	int mark = p->nbinds;
	while (!p->failed && !at_kind(p, TK_DEDENT) && !at_kind(p, TK_EOF))
		parse_statement(p, &l);
	p->nbinds = mark;
	if (p->failed)
		return NULL;
	return build_list(p, &l, sp);
}

/* After a header's ':' : an indented block, or simple statements on the
 * same line. */
static Stmt *parse_suite(Parser *p, const char *what, bool func_top)
{
	Token *colon = prev(p);
	bool top = p->in_func_top;
	p->in_func_top = func_top;
	Stmt *s = NULL;
	if (at_kind(p, TK_NEWLINE)) {
		next(p);
		if (!at_kind(p, TK_INDENT)) {
			ps_error_at(p, peek(p)->span, "expected an indented block after %s",
				    what);
		} else {
			next(p);
			s = parse_stmt_list(p, colon->span);
			if (s && !at_kind(p, TK_DEDENT))
				ps_error_at(p, peek(p)->span, "expected dedent, found %s",
					    found(p));
			if (!p->failed)
				next(p);
		}
	} else {
		StmtList l = {0};
		int mark = p->nbinds;
		Token *t = peek(p);
		if (tok_is(t, "for") || tok_is(t, "if") || tok_is(t, "with"))
			ps_error_at(p, t->span, "expected an indented block after %s",
				    what);
		else
			parse_statement(p, &l);
		p->nbinds = mark;
		if (!p->failed)
			s = build_list(p, &l, colon->span);
	}
	p->in_func_top = top;
	return p->failed ? NULL : s;
}

static bool parse_for_names(Parser *p, Token **names, int *n, int max)
{
	*n = 0;
	bool paren = accept(p, "(");
	do {
		if (*n == max) {
			ps_error_at(p, peek(p)->span, "too many loop variables");
			return false;
		}
		Token *t = peek(p);
		if (!ps_expect_name(p, "a loop variable name"))
			return false;
		names[(*n)++] = t;
	} while (accept(p, ","));
	if (paren && !ps_expect(p, ")", "after loop variables"))
		return false;
	return true;
}

#define MAX_GRID 16

/* What one `for` header says: T.grid makes several loops. */
typedef struct LoopHeader {
	Token *names[MAX_GRID];
	int n;
	ForKind kind;
	bool grid;
	const char *callee; /* "range", "T.serial", ... for messages */
	Expr *mins[MAX_GRID], *exts[MAX_GRID];
	Span span;
} LoopHeader;

/* After `in`: range, or T.serial / T.grid / T.parallel / T.vectorized /
 * T.unroll. */
static bool parse_loop_kind(Parser *p, LoopHeader *h)
{
	static const struct { const char *name; ForKind kind; bool grid; } kinds[] = {
		{"serial", FOR_SERIAL, false}, {"parallel", FOR_PARALLEL, false},
		{"vectorized", FOR_VECTORIZED, false}, {"unroll", FOR_UNROLLED, false},
		{"grid", FOR_SERIAL, true},
	};
	Token *it = peek(p);
	h->kind = FOR_SERIAL;
	h->grid = false;
	if (tok_is(it, "range")) {
		next(p);
		h->callee = "range";
		return true;
	}
	if (!ps_at_t_name(p, NULL)) {
		ps_error_at(p, it->span, "expected T.serial(...), T.grid(...) or "
			    "range(...) after 'in', found %s", found(p));
		return false;
	}
	next(p);
	next(p);
	const char *fn = next(p)->text;
	h->callee = arena_printf(p->a, "T.%s", fn);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(fn, kinds[i].name) == 0) {
			h->kind = kinds[i].kind;
			h->grid = kinds[i].grid;
			return true;
		}
	ps_error_at(p, ps_span_from(p, it), "unknown loop kind '%s' (expected "
		    "T.serial, T.grid, T.parallel, T.vectorized, T.unroll "
		    "or range)", h->callee);
	return false;
}

/* T.grid(e1, ..., en): one loop from 0 per extent. */
static bool grid_loops(Parser *p, Args *args, LoopHeader *h)
{
	if (!ps_check_args(p, args, 1, MAX_GRID, NULL))
		return false;
	if (args->n != h->n) {
		ps_error_at(p, h->span, "T.grid has %d extent%s but %d loop "
			    "variable%s", args->n, args->n == 1 ? "" : "s", h->n,
			    h->n == 1 ? "" : "s");
		return false;
	}
	for (int k = 0; k < h->n; k++) {
		h->exts[k] = ps_finish_expr(ps_val_expr(p, &args->v[k], "a loop extent"));
		if (!ps_check_int_expr(p, h->exts[k], "a loop extent"))
			return false;
		h->mins[k] = ir_int(p->a, 0, h->exts[k]->dtype, h->exts[k]->span);
	}
	return true;
}

/* range(ext), range(lo, hi), T.serial(...) and the others: one loop; the
 * extent of [lo, hi) folds when both are literals and it fits. */
static bool range_loop(Parser *p, Args *args, LoopHeader *h)
{
	if (h->n != 1) {
		ps_error_at(p, h->names[1]->span, "%s binds one loop variable; use "
			    "T.grid for several", h->callee);
		return false;
	}
	if (!ps_check_args(p, args, 1, 2, NULL))
		return false;
	Expr *lo = ps_finish_expr(ps_val_expr(p, &args->v[0], "a loop bound"));
	if (!ps_check_int_expr(p, lo, "a loop bound"))
		return false;
	if (args->n == 1) {
		h->mins[0] = ir_int(p->a, 0, lo->dtype, lo->span);
		h->exts[0] = lo;
		return true;
	}
	Expr *hi = ps_finish_expr(ps_val_expr(p, &args->v[1], "a loop bound"));
	if (!ps_check_int_expr(p, hi, "a loop bound") || !ps_unify(p, &lo, &hi))
		return false;
	h->mins[0] = lo;
	int64_t ext;
	if (lo->kind == EX_INT && hi->kind == EX_INT &&
	    !__builtin_sub_overflow(hi->u.ival, lo->u.ival, &ext) &&
	    ps_int_fits(ext, lo->dtype))
		h->exts[0] = ir_int(p->a, ext, lo->dtype, hi->span);
	else
		h->exts[0] = ps_make_bin(p, OP_SUB, hi, lo, hi->span);
	return true;
}

/* The loop variables in scope for the suite, then the nest of loops
 * around it, innermost last. */
static Stmt *loop_nest(Parser *p, const LoopHeader *h)
{
	int mark = p->nbinds;
	Var *vars[MAX_GRID];
	for (int k = 0; k < h->n; k++) {
		vars[k] = ir_var(p->a, h->names[k]->text, h->exts[k]->dtype,
				 h->names[k]->span);
		ps_bind(p, vars[k]->name, vars[k], NULL);
	}
	Stmt *body = parse_suite(p, "for header", false);
	p->nbinds = mark;
	if (!body)
		return NULL;
	for (int k = h->n - 1; k >= 0; k--)
		body = ir_for(p->a, vars[k], h->mins[k], h->exts[k], h->kind, body,
			      h->span);
	return body;
}

static Stmt *parse_for(Parser *p)
{
	Token *first = next(p); /* for */
	LoopHeader h;
	if (!parse_for_names(p, h.names, &h.n, MAX_GRID) ||
	    !ps_expect(p, "in", "after loop variables") || !parse_loop_kind(p, &h))
		return NULL;
	if (!ps_expect(p, "(", arena_printf(p->a, "after %s", h.callee)))
		return NULL;
	Args args;
	if (!parse_args(p, h.callee, ")", &args) ||
	    !ps_expect(p, ":", "after for header"))
		return NULL;
	h.span = ps_span_from(p, first);
	bool ok = h.grid ? grid_loops(p, &args, &h) : range_loop(p, &args, &h);
	return ok ? loop_nest(p, &h) : NULL;
}

/* One `if` or `elif` header and its suite. */
typedef struct IfBranch {
	Expr *cond;
	Stmt *then_s;
	Span header;
} IfBranch;

/* One branch; the keyword is at peek. */
static bool parse_if_branch(Parser *p, IfBranch *br)
{
	Token *first = next(p);
	Expr *c = ps_finish_expr(parse_expr(p));
	if (!c || !ps_check_bool_expr(p, c, "an if condition") ||
	    !ps_expect(p, ":", "after if condition"))
		return false;
	br->header = ps_span_from(p, first);
	br->cond = c;
	br->then_s = parse_suite(p, "if", false);
	return br->then_s != NULL;
}

/* if / elif ... / else, built from the last branch backwards so that a
 * long elif chain does not recurse. */
static Stmt *parse_if(Parser *p)
{
	int n = 0, cap = 4;
	IfBranch *brs = arena_alloc(p->a, sizeof(IfBranch) * (size_t)cap);
	do {
		brs = grow(p->a, brs, n, &cap, 4, sizeof(IfBranch));
		if (!parse_if_branch(p, &brs[n]))
			return NULL;
		n++;
	} while (tok_is(peek(p), "elif"));
	Stmt *else_s = NULL;
	if (tok_is(peek(p), "else")) {
		next(p);
		if (!ps_expect(p, ":", "after else"))
			return NULL;
		else_s = parse_suite(p, "else", false);
		if (!else_s)
			return NULL;
	}
	for (int k = n - 1; k >= 0; k--)
		else_s = ir_if(p->a, brs[k].cond, brs[k].then_s, else_s, brs[k].header);
	return else_s;
}

static Stmt *parse_with(Parser *p)
{
	Token *first = next(p); /* with */
	if (!ps_at_t_name(p, "block")) {
		ps_error_at(p, peek(p)->span, "expected T.block(\"name\") after 'with', "
			    "found %s", found(p));
		return NULL;
	}
	p->pos += 3;
	if (!ps_expect(p, "(", "after T.block"))
		return NULL;
	Args args;
	const char *name;
	if (!parse_args(p, "T.block", ")", &args) ||
	    !ps_check_args(p, &args, 1, 1, NULL) ||
	    !ps_val_string(p, &args.v[0], "the block name", &name))
		return NULL;
	if (!ps_expect(p, ":", "after with header"))
		return NULL;
	Span header = ps_span_from(p, first);
	Stmt *body = parse_suite(p, "with header", false);
	return body ? ir_block(p->a, name, body, header) : NULL;
}

/* `=`, or the operator of `+=`, `-=`, `*=` (*aug set). */
static bool parse_store_op(Parser *p, BinOp *op, bool *aug)
{
	static const char *const s[] = {"+=", "-=", "*=", NULL};
	static const BinOp ops[] = {OP_ADD, OP_SUB, OP_MUL};
	*aug = ps_find_op(peek(p), s, ops, op);
	if (!*aug && !tok_is(peek(p), "=")) {
		ps_error_at(p, peek(p)->span, "expected '=' or '+=' after buffer store "
			    "target, found %s", found(p));
		return false;
	}
	next(p);
	return true;
}

/* The value stored into buffer `name` (b) made of b's dtype: a T.undef()
 * takes it, a literal must fit it, integers convert among themselves and
 * anything converts to a float buffer; the rest needs a T.cast. */
static Expr *store_value(Parser *p, Buffer *b, const char *name, Expr *value)
{
	if (value->dtype == DT_VOID)
		ps_retype_void(value, b->dtype);
	if (value->kind == EX_INT && dtype_is_int(b->dtype) &&
	    value->dtype != DT_BOOL && !ps_int_fits(value->u.ival, b->dtype)) {
		ps_error_at(p, value->span, "%lld does not fit in %s buffer '%s'",
			    (long long)value->u.ival, dtype_name(b->dtype), name);
		return NULL;
	}
	if (value->dtype == b->dtype)
		return value;
	bool literal_ok = ps_is_literal(value) && ps_literal_as(p, value, b->dtype);
	bool widening = dtype_is_float(b->dtype) || b->dtype == value->dtype ||
			(dtype_is_int(b->dtype) && dtype_is_int(value->dtype));
	if (!literal_ok && !widening) {
		ps_error_at(p, value->span, "cannot store a %s value into %s "
			    "buffer '%s' (use T.cast)", dtype_name(value->dtype),
			    dtype_name(b->dtype), name);
		return NULL;
	}
	return ps_convert(p, value, b->dtype);
}

/* `X[i, j] = e`, `X[i] += e` (and -=, *=): the target name is at peek. */
static Stmt *parse_store(Parser *p)
{
	Token *first = next(p);
	const char *name = first->text;
	Var *v;
	Buffer *b;
	if (!ps_lookup(p, name, &v, &b)) {
		ps_error_at(p, first->span, "unknown buffer '%s'", name);
		return NULL;
	}
	if (!b) {
		ps_error_at(p, first->span, "cannot store to '%s': not a buffer", name);
		return NULL;
	}
	Expr *target = parse_load(p, b, first);
	if (!target)
		return NULL;
	BinOp op;
	bool aug;
	if (!parse_store_op(p, &op, &aug))
		return NULL;
	Expr *value = parse_expr(p);
	if (!value)
		return NULL;
	if (aug)
		value = ps_make_bin(p, op, target, value, value->span);
	if (!value || ps_is_handle(p, value))
		return NULL;
	value = store_value(p, b, name, value);
	if (!value)
		return NULL;
	return ir_store(p->a, b, target->u.load.nidx, target->u.load.idx, value,
			ps_span_from(p, first));
}

static bool parse_scope_name(Parser *p, Val *v, BufferScope *out)
{
	const char *s;
	if (!ps_val_string(p, v, "the scope", &s))
		return false;
	if (strcmp(s, "global") == 0)
		*out = SCOPE_GLOBAL;
	else if (strcmp(s, "local") == 0)
		*out = SCOPE_LOCAL;
	else if (strcmp(s, "shared") == 0)
		*out = SCOPE_SHARED;
	else {
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

/* `name = T.alloc_buffer(shape, dtype, scope=...)`. */
static Stmt *parse_alloc(Parser *p, Token *first)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators", NULL};
	Args args;
	if (!parse_args(p, "T.alloc_buffer", ")", &args) ||
	    !ps_check_args(p, &args, 0, 3, kws))
		return NULL;
	Buffer *b = buffer_from_args(p, &args, 0, first, ps_span_from(p, first));
	if (!b)
		return NULL;
	ps_bind(p, b->name, NULL, b);
	return ir_alloc(p->a, b, NULL, ps_span_from(p, first));
}

/* The handle argument of T.match_buffer: the first positional argument
 * (then *off = 1) or `param=` when it names a handle; *h = NULL when the
 * call names none. */
static bool match_handle_arg(Parser *p, const Args *args, Val **h, int *off)
{
	*off = 0;
	*h = ps_arg(args, 0, "param");
	if (*h && (*h)->kind == VAL_EXPR && (*h)->e->kind == EX_VAR &&
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
static bool parse_match_buffer(Parser *p, Token *first)
{
	static const char *const kws[] = {"param", "shape", "dtype", "scope", "axis_separators", NULL};
	Args args;
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
	Param *hp = match_handle_param(p, h, sp);
	if (!hp)
		return false;
	hp->buf = buffer_from_args(p, &args, off, first, sp);
	if (!hp->buf)
		return false;
	ps_bind(p, hp->buf->name, NULL, hp->buf);
	return true;
}

/* `x = e` (a let), `x: T.int32 = e`, or an allocation / match_buffer. */
static Stmt *parse_assign(Parser *p, StmtList *out, bool *done)
{
	Token *first = next(p);
	const char *name = first->text;
	DType ann = DT_VOID;
	*done = false;
	if (accept(p, ":")) {
		Token *tt = peek(p);
		if (!ps_at_t_name(p, NULL)) {
			ps_error_at(p, tt->span, "expected a dtype such as T.int32, found %s",
				    found(p));
			return NULL;
		}
		p->pos += 3;
		if (!ps_dtype_from_string(p, prev(p)->text, ps_span_from(p, tt), &ann))
			return NULL;
	}
	if (!ps_expect(p, "=", "in assignment"))
		return NULL;
	if (ann == DT_VOID && ps_at_t_name(p, NULL) && tok_is(peek_at(p, 3), "(")) {
		const char *fn = peek_at(p, 2)->text;
		if (strcmp(fn, "alloc_buffer") == 0) {
			p->pos += 4;
			Stmt *s = parse_alloc(p, first);
			if (s)
				list_push(p, out, s);
			return s;
		}
		if (strcmp(fn, "match_buffer") == 0) {
			p->pos += 4;
			*done = parse_match_buffer(p, first);
			return NULL;
		}
	}
	Expr *value = parse_expr(p);
	if (!value || ps_is_handle(p, value))
		return NULL;
	if (ann != DT_VOID) {
		if (value->dtype == DT_VOID)
			ps_retype_void(value, ann);
		value = ps_convert(p, value, ann);
	}
	ps_finish_expr(value);
	Var *v = ir_var(p->a, name, value->dtype, first->span);
	Stmt *s = ir_letstmt(p->a, v, value, NULL, ps_span_from(p, first));
	ps_bind(p, name, v, NULL);
	list_push(p, out, s);
	return s;
}

/* Ignored annotations: T.func_attr({...}), T.reads(...), T.writes(...). */
static bool is_ignored_call(const char *fn)
{
	return strcmp(fn, "func_attr") == 0 || strcmp(fn, "reads") == 0 ||
	       strcmp(fn, "writes") == 0 || strcmp(fn, "block_attr") == 0;
}

/* `T.assume(c)`, `T.evaluate(e)`, ignored annotations. */
static Stmt *parse_t_stmt(Parser *p, bool *ignored)
{
	Token *first = peek(p);
	const char *fn = peek_at(p, 2)->text;
	*ignored = false;
	if (is_ignored_call(fn) && tok_is(peek_at(p, 3), "(")) {
		p->pos += 4;
		Args args;
		*ignored = parse_args(p, arena_printf(p->a, "T.%s", fn), ")", &args);
		return NULL;
	}
	bool assume = strcmp(fn, "assume") == 0;
	if (!assume && strcmp(fn, "evaluate") != 0) {
		ps_error_at(p, first->span, "expected a statement, found an expression "
			    "(use T.evaluate(...) to evaluate it)");
		return NULL;
	}
	p->pos += 3;
	if (!ps_expect(p, "(", arena_printf(p->a, "after T.%s", fn)))
		return NULL;
	Args args;
	if (!parse_args(p, arena_printf(p->a, "T.%s", fn), ")", &args) ||
	    !ps_check_args(p, &args, 1, 1, NULL))
		return NULL;
	Expr *e = ps_finish_expr(ps_val_expr(p, &args.v[0], "the argument"));
	if (!e)
		return NULL;
	if (assume) {
		if (!ps_check_bool_expr(p, e, "the argument of T.assume"))
			return NULL;
		return ir_assume(p->a, e, ps_span_from(p, first));
	}
	if (ps_is_handle(p, e))
		return NULL;
	return ir_eval(p->a, e, ps_span_from(p, first));
}

/* `X[i] = e`, `x = e` and the other statements that start with a name;
 * *handled is false when the name starts none of them. */
static bool parse_name_stmt(Parser *p, StmtList *out, bool *handled)
{
	Token *t = peek(p), *n1 = peek_at(p, 1);
	*handled = true;
	if (tok_is(n1, "[")) {
		Stmt *s = parse_store(p);
		if (s)
			list_push(p, out, s);
		return s != NULL;
	}
	if (tok_is(n1, "=") || tok_is(n1, ":")) {
		bool done;
		return parse_assign(p, out, &done) || done;
	}
	if (!tok_is(n1, "+=") && !tok_is(n1, "-=") && !tok_is(n1, "*=")) {
		*handled = false;
		return false;
	}
	Var *v;
	Buffer *b;
	if (ps_lookup(p, t->text, &v, &b) && b)
		ps_error_at(p, n1->span, "expected indices: '%s[...] %s'",
			    t->text, n1->text);
	else
		ps_error_at(p, n1->span, "'%s' cannot update a variable; "
			    "only buffer elements can be assigned with it",
			    n1->text);
	return false;
}

/* One simple statement (no trailing newline). */
static bool parse_simple(Parser *p, StmtList *out)
{
	Token *t = peek(p);
	if (tok_is(t, "pass")) {
		next(p);
		list_push(p, out, ir_pass(p->a, t->span));
		return true;
	}
	if (t->kind == TK_STRING) { /* a docstring */
		next(p);
		return true;
	}
	if (ps_at_t_name(p, NULL)) {
		bool ignored;
		Stmt *s = parse_t_stmt(p, &ignored);
		if (s)
			list_push(p, out, s);
		return s || ignored;
	}
	if (t->kind == TK_NAME && !lex_is_keyword(t->text)) {
		bool handled;
		bool ok = parse_name_stmt(p, out, &handled);
		if (handled)
			return ok;
	}
	if (tok_is(t, "else") || tok_is(t, "elif"))
		ps_error_at(p, t->span, "'%s' without a matching 'if'", t->text);
	else if (t->kind == TK_INDENT)
		ps_error_at(p, t->span, "unexpected indent");
	else if (tok_is(t, "def") || tok_is(t, "class") || tok_is(t, "@"))
		ps_error_at(p, t->span, "expected a statement, found %s (a function "
			    "cannot be nested in another)", found(p));
	else
		ps_error_at(p, t->span, "expected a statement, found %s", found(p));
	return false;
}

static bool parse_statement(Parser *p, StmtList *out)
{
	Token *t = peek(p);
	Stmt *s = NULL;
	if (tok_is(t, "for"))
		s = parse_for(p);
	else if (tok_is(t, "if"))
		s = parse_if(p);
	else if (tok_is(t, "with"))
		s = parse_with(p);
	else {
		do {
			if (!parse_simple(p, out))
				return false;
		} while (accept(p, ";") && !at_kind(p, TK_NEWLINE));
		return ps_expect_newline(p, "statement");
	}
	if (!s)
		return false;
	list_push(p, out, s);
	return true;
}

/* ---------- functions and modules ---------- */

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
	return ir_func(p->a, name->text, p->nparams, p->params, body, header);
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

static void parser_init(Parser *p, Arena *a, const Source *src, DiagList *d,
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
	return m;
}

/* ---------- sources ---------- */

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
	fclose(f);
	size_t total = b.n;
	char *text = sb_take(&b);
	if (bad || strlen(text) != total) {
		free(text);
		diag_add(d, DIAG_ERROR, nowhere, bad ? "cannot read '%s'"
			 : "'%s' contains a NUL byte: not a text file", path);
		return NULL;
	}
	Source *s = source_from_string(a, path, text);
	free(text);
	return s;
}

/* ---------- standalone expressions and lambdas ---------- */

static bool expect_eof(Parser *p, const char *what)
{
	if (p->failed)
		return false;
	if (at_kind(p, TK_EOF))
		return true;
	ps_error_at(p, peek(p)->span, "unexpected %s after %s", found(p), what);
	return false;
}

/* A parser over src->text[start, end) lexed as a lone expression, that
 * sees scope's names. */
static bool parser_for_range(Parser *p, Arena *a, const Source *src,
			     int start, int end, const ParseScope *scope,
			     DiagList *d)
{
	TokenList tl;
	if (!lex_range(a, src, start, end, LEX_EXPR, d, &tl))
		return false;
	parser_init(p, a, src, d, &tl);
	p->scope = scope;
	return true;
}

Expr *parse_expr_range(Arena *a, const Source *src, int start, int end,
		       const ParseScope *scope, DiagList *d)
{
	Parser p;
	if (!parser_for_range(&p, a, src, start, end, scope, d))
		return NULL;
	if (at_kind(&p, TK_EOF)) {
		ps_error_at(&p, peek(&p)->span, "expected an expression, found nothing");
		return NULL;
	}
	Expr *e = ps_finish_expr(parse_expr(&p));
	if (!e || !expect_eof(&p, "the expression") || ps_is_handle(&p, e))
		return NULL;
	return e;
}

/* The body of a bracketed lambda: expressions and T.axis_separator. */
static bool parse_lambda_list(Parser *p, Lambda *l, const char *close)
{
	int cap = 4, scap = 2;
	Token *last_sep = NULL;
	l->body = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap);
	l->seps = arena_alloc(p->a, sizeof(int) * (size_t)scap);
	while (!p->failed && !tok_is(peek(p), close)) {
		if (ps_at_t_name(p, "axis_separator") && !tok_is(peek_at(p, 3), "(")) {
			last_sep = peek(p);
			p->pos += 3;
			/* separators sit strictly between indices: positions
			 * in [1, ndim), increasing (Buffer.axis_separators) */
			if (l->nbody == 0 ||
			    (l->nseps > 0 && l->seps[l->nseps - 1] == l->nbody)) {
				ps_error_at(p, ps_span_from(p, last_sep), "T.axis_separator "
					    "must stand between two indices");
				return false;
			}
			l->seps = grow(p->a, l->seps, l->nseps, &scap, 2, sizeof(int));
			l->seps[l->nseps++] = l->nbody;
		} else {
			l->body = grow(p->a, l->body, l->nbody, &cap, 4, sizeof(Expr *));
			Expr *e = ps_finish_expr(parse_expr(p));
			if (!e)
				return false;
			l->body[l->nbody++] = e;
		}
		if (!accept(p, ","))
			break;
	}
	if (!p->failed && l->nseps > 0 && l->seps[l->nseps - 1] == l->nbody) {
		ps_error_at(p, ps_span_from(p, last_sep), "T.axis_separator must stand "
			    "between two indices");
		return false;
	}
	return ps_expect(p, close, "to close the lambda's index list");
}

/* `p1, p2` up to the ':': fresh int32 variables, bound for the body. */
static bool parse_lambda_params(Parser *p, Lambda *l)
{
	int cap = 4;
	l->params = arena_alloc(p->a, sizeof(Var *) * (size_t)cap);
	while (!p->failed && !tok_is(peek(p), ":")) {
		Token *t = peek(p);
		if (!ps_expect_name(p, "a lambda parameter name"))
			return false;
		for (int i = 0; i < l->nparams; i++)
			if (strcmp(l->params[i]->name, t->text) == 0) {
				ps_error_at(p, t->span, "duplicate lambda parameter '%s'",
					    t->text);
				return false;
			}
		l->params = grow(p->a, l->params, l->nparams, &cap, 4, sizeof(Var *));
		Var *v = ir_var(p->a, t->text, DT_INT32, t->span);
		l->params[l->nparams++] = v;
		ps_bind(p, v->name, v, NULL);
		if (!accept(p, ","))
			break;
	}
	return ps_expect(p, ":", "after lambda parameters");
}

Lambda *parse_lambda_range(Arena *a, const Source *src, int start, int end,
			   const ParseScope *scope, DiagList *d)
{
	Parser p;
	if (!parser_for_range(&p, a, src, start, end, scope, d))
		return NULL;
	Token *first = peek(&p);
	if (!ps_expect(&p, "lambda", "(an index map such as lambda i: [i // 4, i % 4])"))
		return NULL;
	Lambda *l = arena_alloc(a, sizeof *l);
	if (!parse_lambda_params(&p, l))
		return NULL;
	if (tok_is(peek(&p), "[") || (tok_is(peek(&p), "(") && ps_paren_is_tuple(&p))) {
		const char *close = tok_is(next(&p), "[") ? "]" : ")";
		l->bracketed = true;
		if (!parse_lambda_list(&p, l, close))
			return NULL;
	} else {
		l->body = arena_alloc(a, sizeof(Expr *));
		l->body[0] = ps_finish_expr(parse_expr(&p));
		if (!l->body[0])
			return NULL;
		l->nbody = 1;
	}
	if (!expect_eof(&p, "the lambda"))
		return NULL;
	for (int i = 0; i < l->nbody; i++)
		if (ps_is_handle(&p, l->body[i]))
			return NULL;
	l->span = ps_span_from(&p, first);
	return l;
}
