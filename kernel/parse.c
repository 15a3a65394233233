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
#include "kernel/verify.h"

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

static void error_at(Parser *p, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void error_at(Parser *p, Span sp, const char *fmt, ...)
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
static bool expect(Parser *p, const char *s, const char *what)
{
	if (p->failed)
		return false;
	if (accept(p, s))
		return true;
	error_at(p, peek(p)->span, "expected '%s'%s%s, found %s", s,
		 what[0] ? " " : "", what, found(p));
	return false;
}

static bool at_kind(Parser *p, TokKind k) { return peek(p)->kind == k; }

static const char *expect_name(Parser *p, const char *what)
{
	Token *t = peek(p);
	if (t->kind != TK_NAME || lex_is_keyword(t->text)) {
		error_at(p, t->span, "expected %s, found %s", what, found(p));
		return NULL;
	}
	next(p);
	return t->text;
}

static bool expect_newline(Parser *p, const char *what)
{
	if (p->failed)
		return false;
	if (at_kind(p, TK_NEWLINE)) {
		next(p);
		return true;
	}
	error_at(p, peek(p)->span, "expected end of line after %s, found %s",
		 what, found(p));
	return false;
}

/* The span from token `first` to the previous token (clipped to one line). */
static Span span_from(Parser *p, const Token *first)
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

/* ---------- scopes ---------- */

static void bind(Parser *p, const char *name, Var *v, Buffer *b)
{
	if (p->nbinds == p->capbinds) {
		int cap = p->capbinds ? p->capbinds * 2 : 32;
		Binding *nb = arena_alloc(p->a, sizeof(Binding) * (size_t)cap);
		if (p->nbinds)
			memcpy(nb, p->binds, sizeof(Binding) * (size_t)p->nbinds);
		p->binds = nb;
		p->capbinds = cap;
	}
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
static bool lookup(Parser *p, const char *name, Var **v, Buffer **b)
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

static bool is_literal(const Expr *e)
{
	return (e->kind == EX_INT && e->dtype != DT_BOOL) || e->kind == EX_FLOAT;
}

/* Give an expression of unresolved dtype (built from a bare T.undef())
 * the dtype t, down through the nodes that inherited the placeholder. */
static void retype_void(Expr *e, DType t)
{
	while (e && e->dtype == DT_VOID) {
		e->dtype = t;
		switch (e->kind) {
		case EX_BIN:
			if (!binop_is_compare(e->u.bin.op) &&
			    !binop_is_logical(e->u.bin.op))
				retype_void(e->u.bin.a, t);
			e = e->u.bin.b;
			break;
		case EX_NEG: e = e->u.un.a; break;
		case EX_SELECT:
			retype_void(e->u.sel.a, t);
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

static bool int_fits(int64_t v, DType t)
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
static Expr *literal_as(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (dtype_is_float(t))
		return ir_float(p->a, e->kind == EX_INT ? (double)e->u.ival : e->u.fval,
				t, e->span);
	if (!dtype_is_int(t))
		return NULL;
	if (e->kind == EX_INT)
		return int_fits(e->u.ival, t) ? ir_int(p->a, e->u.ival, t, e->span) : NULL;
	double f = e->u.fval;
	if (!isfinite(f) || f != floor(f) || f < -9.2e18 || f > 9.2e18 ||
	    !int_fits((int64_t)f, t))
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

static Expr *convert(Parser *p, Expr *e, DType t)
{
	if (e->dtype == t)
		return e;
	if (is_literal(e)) {
		Expr *l = literal_as(p, e, t);
		if (l)
			return l;
	}
	return ir_cast(p->a, t, e, e->span);
}

static bool is_handle(Parser *p, const Expr *e)
{
	if (e->dtype != DT_HANDLE)
		return false;
	error_at(p, e->span, "a handle cannot be used in an expression "
		 "(bind it with T.match_buffer)");
	return true;
}

/* Make *x and *y the same dtype (see the file comment). */
static bool unify(Parser *p, Expr **x, Expr **y)
{
	if (is_handle(p, *x) || is_handle(p, *y))
		return false;
	DType tx = (*x)->dtype, ty = (*y)->dtype;
	if (tx == ty) {
		if (tx == DT_VOID) {
			retype_void(*x, DT_INT32);
			retype_void(*y, DT_INT32);
		}
		return true;
	}
	if (tx == DT_VOID) {
		retype_void(*x, ty);
		return true;
	}
	if (ty == DT_VOID) {
		retype_void(*y, tx);
		return true;
	}
	bool lx = is_literal(*x), ly = is_literal(*y);
	if (lx && !ly && ty != DT_BOOL) {
		Expr *l = literal_as(p, *x, ty);
		if (l) {
			*x = l;
			return true;
		}
	}
	if (ly && !lx && tx != DT_BOOL) {
		Expr *l = literal_as(p, *y, tx);
		if (l) {
			*y = l;
			return true;
		}
	}
	DType t = promote(tx, ty);
	*x = convert(p, *x, t);
	*y = convert(p, *y, t);
	return true;
}

static Expr *make_bin(Parser *p, BinOp op, Expr *x, Expr *y, Span sp)
{
	if (!x || !y || p->failed)
		return NULL;
	if (binop_is_logical(op)) {
		if (x->dtype == DT_VOID)
			retype_void(x, DT_BOOL);
		if (y->dtype == DT_VOID)
			retype_void(y, DT_BOOL);
		const Expr *bad = x->dtype != DT_BOOL ? x : y->dtype != DT_BOOL ? y : NULL;
		if (bad) {
			error_at(p, bad->span, "operand of '%s' must be a boolean, "
				 "not %s", binop_symbol(op), dtype_name(bad->dtype));
			return NULL;
		}
		return ir_bin(p->a, op, x, y, sp);
	}
	if (!unify(p, &x, &y))
		return NULL;
	if (op == OP_DIV && !dtype_is_float(x->dtype)) {
		error_at(p, sp, "integer '/' is ambiguous: use '//' (floor division)");
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
static bool check_int_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	Span where;
	if (contains_undef(e, &where)) {
		error_at(p, where, "T.undef() cannot be used in %s", what);
		return false;
	}
	if (!dtype_is_int(e->dtype)) {
		error_at(p, e->span, "%s must be an integer expression, not %s",
			 what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

static bool check_bool_expr(Parser *p, Expr *e, const char *what)
{
	if (!e)
		return false;
	if (e->dtype == DT_VOID)
		retype_void(e, DT_BOOL);
	if (e->dtype != DT_BOOL) {
		error_at(p, e->span, "%s must be a boolean expression, not %s",
			 what, dtype_name(e->dtype));
		return false;
	}
	return true;
}

/* A whole expression is done: a bare T.undef() left defaults to int32. */
static Expr *finish_expr(Expr *e)
{
	if (e && e->dtype == DT_VOID)
		retype_void(e, DT_INT32);
	return e;
}

static bool dtype_from_string(Parser *p, const char *s, Span sp, DType *out)
{
	if (dtype_from_name(s, out) && *out != DT_VOID && *out != DT_HANDLE)
		return true;
	error_at(p, sp, "unknown dtype '%s'", s);
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

/* Index of the token matching the bracket at p->pos + 0, or -1. */
static int matching(Parser *p, int at)
{
	int depth = 0;
	for (int i = at; i < p->ntoks; i++) {
		Token *t = &p->toks[i];
		if (tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{"))
			depth++;
		else if (tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}")) {
			if (--depth == 0)
				return i;
		}
	}
	return -1;
}

/* True if the parenthesis at p->pos opens a tuple: `()` or a top-level
 * comma inside. */
static bool paren_is_tuple(Parser *p)
{
	int end = matching(p, p->pos);
	if (end < 0)
		return false;
	if (end == p->pos + 1)
		return true;
	int depth = 0;
	for (int i = p->pos + 1; i < end; i++) {
		Token *t = &p->toks[i];
		if (tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{"))
			depth++;
		else if (tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}"))
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
		if (cnt == cap) {
			Expr **nx = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap * 2);
			memcpy(nx, xs, sizeof(Expr *) * (size_t)cnt);
			xs = nx;
			cap *= 2;
		}
		Expr *e = finish_expr(parse_expr(p));
		if (!e)
			return false;
		xs[cnt++] = e;
		if (!accept(p, ","))
			break;
	}
	if (!expect(p, close, "to close the list"))
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
	} else if (tok_is(t, "[") || (tok_is(t, "(") && paren_is_tuple(p))) {
		next(p);
		v->kind = VAL_LIST;
		if (!parse_expr_list(p, tok_is(t, "[") ? "]" : ")", &v->n, &v->items))
			return false;
	} else if (tok_is(t, "{")) {
		int end = matching(p, p->pos);
		if (end < 0) {
			error_at(p, t->span, "'{' was never closed");
			return false;
		}
		p->pos = end + 1;
		v->kind = VAL_DICT;
	} else {
		v->kind = VAL_EXPR;
		v->e = parse_expr(p);
		if (!v->e)
			return false;
	}
	v->span = span_from(p, t);
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
		if (out->n == cap) {
			Val *nv = arena_alloc(p->a, sizeof(Val) * (size_t)cap * 2);
			memcpy(nv, out->v, sizeof(Val) * (size_t)out->n);
			out->v = nv;
			cap *= 2;
		}
		Val *v = &out->v[out->n];
		memset(v, 0, sizeof *v);
		if (peek(p)->kind == TK_NAME && tok_is(peek_at(p, 1), "=")) {
			v->kw = next(p)->text;
			next(p);
		} else if (out->n > 0 && out->v[out->n - 1].kw) {
			error_at(p, peek(p)->span, "positional argument after "
				 "keyword argument in %s", callee);
			return false;
		}
		for (int i = 0; v->kw && i < out->n; i++)
			if (out->v[i].kw && strcmp(out->v[i].kw, v->kw) == 0) {
				error_at(p, prev(p)->span, "argument '%s' given twice "
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
		error_at(p, peek(p)->span, "expected ',' or '%s' in arguments of "
			 "%s, found %s", close, callee, found(p));
		return false;
	}
	next(p);
	return true;
}

/* Check positional count and keyword names; kws is NULL-terminated. */
static bool check_args(Parser *p, const Args *args, int min_pos, int max_pos,
		       const char *const *kws)
{
	int npos = 0;
	for (int i = 0; i < args->n; i++) {
		const Val *v = &args->v[i];
		if (!v->kw) {
			npos++;
			if (npos > max_pos) {
				error_at(p, v->span, "too many arguments to %s "
					 "(at most %d)", args->callee, max_pos);
				return false;
			}
			continue;
		}
		bool ok = false;
		for (int k = 0; kws && kws[k]; k++)
			ok = ok || strcmp(kws[k], v->kw) == 0;
		if (!ok) {
			error_at(p, v->tok->span, "unexpected argument '%s' to %s",
				 v->kw, args->callee);
			return false;
		}
	}
	if (npos < min_pos) {
		error_at(p, prev(p)->span, "%s expects %d argument%s, got %d",
			 args->callee, min_pos, min_pos == 1 ? "" : "s", npos);
		return false;
	}
	return true;
}

/* The argument at positional index `pos` or keyword `kw`. */
static Val *arg(const Args *args, int pos, const char *kw)
{
	int k = 0;
	for (int i = 0; i < args->n; i++) {
		Val *v = &args->v[i];
		if (v->kw ? (kw && strcmp(v->kw, kw) == 0) : k++ == pos)
			return v;
	}
	return NULL;
}

static Expr *val_expr(Parser *p, Val *v, const char *what)
{
	if (v->kind == VAL_EXPR)
		return v->e;
	error_at(p, v->span, "expected an expression for %s", what);
	return NULL;
}

static bool val_string(Parser *p, Val *v, const char *what, const char **out)
{
	if (v->kind == VAL_STR) {
		*out = v->str;
		return true;
	}
	error_at(p, v->span, "expected a string for %s", what);
	return false;
}

static bool val_dtype(Parser *p, Val *v, DType *out)
{
	const char *s;
	return val_string(p, v, "the dtype", &s) &&
	       dtype_from_string(p, s, v->span, out);
}

/* A shape: a number or expression, a tuple or a list of them. */
static bool val_shape(Parser *p, Val *v, int *n, Expr ***shape)
{
	if (v->kind == VAL_LIST) {
		*n = v->n;
		*shape = v->items;
	} else if (v->kind == VAL_EXPR) {
		*n = 1;
		*shape = arena_alloc(p->a, sizeof(Expr *));
		(*shape)[0] = finish_expr(v->e);
	} else {
		error_at(p, v->span, "expected a shape such as (4, 4)");
		return false;
	}
	for (int i = 0; i < *n; i++) {
		Expr *e = (*shape)[i];
		if (!check_int_expr(p, e, "a buffer shape"))
			return false;
		bool negative = (e->kind == EX_INT && e->u.ival < 0) ||
				(e->kind == EX_NEG && e->u.un.a->kind == EX_INT && e->u.un.a->u.ival > 0);
		if (negative) {
			error_at(p, e->span.line ? e->span : v->span, "a buffer extent cannot be negative");
			return false;
		}
	}
	return true;
}

/* `axis_separators=[3]` (as the printer writes a transformed buffer):
 * increasing positions in [1, ndim). */
static bool val_axis_separators(Parser *p, Val *v, Buffer *b)
{
	int n = v->kind == VAL_LIST ? v->n : 1;
	Expr **items = v->kind == VAL_LIST ? v->items : &v->e;
	if (v->kind != VAL_LIST && v->kind != VAL_EXPR) {
		error_at(p, v->span, "expected axis_separators such as [2]");
		return false;
	}
	int *seps = arena_alloc(p->a, sizeof(int) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		Expr *e = items[i];
		int64_t prev = i ? seps[i - 1] : 0;
		if (!e || e->kind != EX_INT || e->dtype == DT_BOOL || e->u.ival <= prev ||
		    e->u.ival >= b->ndim) {
			error_at(p, e ? e->span : v->span,
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

static Expr *parse_expr(Parser *p)
{
	if (p->failed)
		return NULL;
	if (++p->depth > MAX_EXPR_DEPTH) {
		error_at(p, peek(p)->span, "expression nested too deeply");
		return NULL;
	}
	Expr *e = parse_ternary(p);
	p->depth--;
	return e;
}

static Expr *int_literal(Parser *p, Token *t, bool negate, Span sp)
{
	uint64_t u = t->uval;
	if (t->int_overflow || u > (uint64_t)INT64_MAX + (negate ? 1u : 0u)) {
		error_at(p, sp, "integer literal %s%s does not fit in int64",
			 negate ? "-" : "", t->text);
		return NULL;
	}
	int64_t v = negate ? (int64_t)(0 - u) : (int64_t)u;
	return ir_int(p->a, v, int_fits(v, DT_INT32) ? DT_INT32 : DT_INT64, sp);
}

static Expr *parse_load(Parser *p, Buffer *b, Token *name_tok)
{
	next(p); /* '[' */
	int n;
	Expr **idx;
	if (!parse_expr_list(p, "]", &n, &idx))
		return NULL;
	Span sp = span_from(p, name_tok);
	if (n != b->ndim) {
		error_at(p, sp, "buffer '%s' has %d dimension%s but %d ind%s given",
			 b->name, b->ndim, b->ndim == 1 ? "" : "s", n,
			 n == 1 ? "ex is" : "ices are");
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!check_int_expr(p, idx[i], "an index"))
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
	if (!lookup(p, name, &v, &b)) {
		if (strcmp(name, "inf") == 0)
			return ir_float(p->a, INFINITY, DT_FLOAT32, t->span);
		if (tok_is(peek(p), "["))
			error_at(p, t->span, "unknown buffer '%s'", name);
		else
			error_at(p, t->span, "unknown name '%s'", name);
		return NULL;
	}
	if (b) {
		if (tok_is(peek(p), "["))
			return parse_load(p, b, t);
		error_at(p, t->span, "buffer '%s' used without indices", name);
		return NULL;
	}
	if (tok_is(peek(p), "[")) {
		error_at(p, t->span, "'%s' is not a buffer", name);
		return NULL;
	}
	if (v->dtype == DT_HANDLE && !p->allow_handle) {
		error_at(p, t->span, "handle '%s' cannot be used in an expression "
			 "(bind it with T.match_buffer)", name);
		return NULL;
	}
	return ir_varref(p->a, v, t->span);
}

/* T.float32(x) and friends: a literal becomes a literal of that dtype,
 * "inf"/"-inf"/"nan" strings are float constants, anything else a cast. */
static Expr *build_constructor(Parser *p, DType t, Args *args, Span sp)
{
	if (!check_args(p, args, 1, 1, NULL))
		return NULL;
	Val *v = arg(args, 0, NULL);
	if (v->kind == VAL_STR) {
		double f;
		if (strcmp(v->str, "inf") == 0 || strcmp(v->str, "+inf") == 0)
			f = INFINITY;
		else if (strcmp(v->str, "-inf") == 0)
			f = -INFINITY;
		else if (strcmp(v->str, "nan") == 0)
			f = NAN;
		else {
			error_at(p, v->span, "expected \"inf\", \"-inf\" or \"nan\"");
			return NULL;
		}
		if (!dtype_is_float(t)) {
			error_at(p, v->span, "%s cannot hold \"%s\"", dtype_name(t), v->str);
			return NULL;
		}
		return ir_float(p->a, f, t, sp);
	}
	Expr *e = val_expr(p, v, args->callee);
	if (!e || is_handle(p, e))
		return NULL;
	if (e->dtype == DT_VOID) {
		retype_void(e, t);
		return e;
	}
	if (is_literal(e)) {
		Expr *l = literal_as(p, e, t);
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
	if (!check_args(p, args, 0, 1, kws))
		return NULL;
	Val *v = arg(args, 0, "dtype");
	DType t = DT_VOID;
	if (v && !val_dtype(p, v, &t))
		return NULL;
	return ir_undef(p->a, t, sp);
}

static Expr *build_cast(Parser *p, Args *args, Span sp)
{
	static const char *const kws[] = {"dtype", NULL};
	if (!check_args(p, args, 1, 2, kws))
		return NULL;
	Val *v = arg(args, 0, NULL), *dv = arg(args, 1, "dtype");
	if (!v || !dv) {
		error_at(p, sp, "T.cast expects a value and a dtype");
		return NULL;
	}
	DType t;
	Expr *e = val_expr(p, v, "T.cast");
	if (!e || !val_dtype(p, dv, &t) || is_handle(p, e))
		return NULL;
	if (e->dtype == DT_VOID) {
		retype_void(e, t);
		return e;
	}
	return ir_cast(p->a, t, e, sp);
}

static Expr *build_select(Parser *p, Args *args, Span sp)
{
	if (!check_args(p, args, 3, 3, NULL))
		return NULL;
	Expr *c = val_expr(p, arg(args, 0, NULL), "the condition");
	Expr *x = c ? val_expr(p, arg(args, 1, NULL), "the true value") : NULL;
	Expr *y = x ? val_expr(p, arg(args, 2, NULL), "the false value") : NULL;
	if (!y || !check_bool_expr(p, c, "the condition") || !unify(p, &x, &y))
		return NULL;
	return ir_select(p->a, c, x, y, sp);
}

static Expr *build_binary_call(Parser *p, BinOp op, Args *args, Span sp)
{
	if (!check_args(p, args, 2, 2, NULL))
		return NULL;
	Expr *x = val_expr(p, arg(args, 0, NULL), args->callee);
	Expr *y = x ? val_expr(p, arg(args, 1, NULL), args->callee) : NULL;
	return y ? make_bin(p, op, x, y, sp) : NULL;
}

/* `T.name(...)` in an expression; the name token is at prev(p). */
static Expr *parse_t_call(Parser *p, Token *first, Token *fn)
{
	const char *name = fn->text;
	const char *callee = arena_printf(p->a, "T.%s", name);
	if (!tok_is(peek(p), "(")) {
		if (strcmp(name, "axis_separator") == 0)
			error_at(p, span_from(p, first), "T.axis_separator is only "
				 "allowed in the index list of a lambda");
		else
			error_at(p, peek(p)->span, "expected '(' after %s, found %s",
				 callee, found(p));
		return NULL;
	}
	next(p);
	Args args;
	if (!parse_args(p, callee, ")", &args))
		return NULL;
	Span sp = span_from(p, first);
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
		if (!check_args(p, &args, 1, 1, NULL))
			return NULL;
		return val_expr(p, arg(&args, 0, NULL), callee);
	}
	if (dtype_from_name(name, &t) && t != DT_VOID && t != DT_HANDLE)
		return build_constructor(p, t, &args, sp);
	error_at(p, fn->span, "unknown function '%s'", callee);
	return NULL;
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
		error_at(p, t->span, "unexpected string in expression");
		return NULL;
	case TK_NAME:
		if (strcmp(t->text, "T") == 0 && tok_is(peek_at(p, 1), ".")) {
			next(p);
			next(p);
			Token *fn = peek(p);
			if (fn->kind != TK_NAME) {
				error_at(p, fn->span, "expected a name after 'T.', found %s",
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
			if (!lookup(p, t->text, &v, &b)) {
				next(p);
				return parse_t_call(p, t, t);
			}
		}
		if (lex_is_keyword(t->text) && strcmp(t->text, "True") != 0 &&
		    strcmp(t->text, "False") != 0)
			break;
		return parse_name(p);
	case TK_OP:
		if (tok_is(t, "(")) {
			next(p);
			Expr *e = parse_expr(p);
			if (!e || !expect(p, ")", "to close '('"))
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
	error_at(p, t->span, "expected an expression, found %s", found(p));
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
			return int_literal(p, n, neg, span_from(p, t));
		}
		if (n->kind == TK_FLOAT) {
			next(p);
			return ir_float(p->a, neg ? -n->fval : n->fval, DT_FLOAT32,
					span_from(p, t));
		}
		if (++p->depth > MAX_EXPR_DEPTH) {
			error_at(p, t->span, "expression nested too deeply");
			return NULL;
		}
		Expr *e = parse_unary(p);
		p->depth--;
		if (!e || is_handle(p, e))
			return NULL;
		if (!neg)
			return e;
		if (e->kind == EX_FLOAT)
			return ir_float(p->a, -e->u.fval, e->dtype, span_from(p, t));
		/* fold only when the negation fits the literal's dtype:
		 * -(-2147483648) stays a negation of an int32 */
		if (e->kind == EX_INT && e->dtype != DT_BOOL && e->u.ival != INT64_MIN &&
		    int_fits(-e->u.ival, e->dtype))
			return ir_int(p->a, -e->u.ival, e->dtype, span_from(p, t));
		if (e->dtype == DT_BOOL) {
			error_at(p, e->span, "cannot negate a boolean");
			return NULL;
		}
		return ir_neg(p->a, e, span_from(p, t));
	}
	return parse_atom(p);
}

static int mul_op(const Token *t, BinOp *op)
{
	if (tok_is(t, "*"))
		*op = OP_MUL;
	else if (tok_is(t, "/"))
		*op = OP_DIV;
	else if (tok_is(t, "//"))
		*op = OP_FLOORDIV;
	else if (tok_is(t, "%"))
		*op = OP_FLOORMOD;
	else
		return 0;
	return 1;
}

static bool chain_too_long(Parser *p, int *count)
{
	if (++*count <= MAX_CHAIN)
		return false;
	error_at(p, peek(p)->span, "expression too long");
	return true;
}

static Expr *parse_mul(Parser *p)
{
	Token *first = peek(p);
	Expr *e = parse_unary(p);
	BinOp op;
	int count = 0;
	while (e && mul_op(peek(p), &op) && !chain_too_long(p, &count)) {
		next(p);
		Expr *r = parse_unary(p);
		e = make_bin(p, op, e, r, span_from(p, first));
	}
	return p->failed ? NULL : e;
}

static Expr *parse_add(Parser *p)
{
	Token *first = peek(p);
	Expr *e = parse_mul(p);
	int count = 0;
	while (e && (tok_is(peek(p), "+") || tok_is(peek(p), "-")) &&
	       !chain_too_long(p, &count)) {
		BinOp op = tok_is(next(p), "+") ? OP_ADD : OP_SUB;
		Expr *r = parse_mul(p);
		e = make_bin(p, op, e, r, span_from(p, first));
	}
	return p->failed ? NULL : e;
}

static bool cmp_op(const Token *t, BinOp *op)
{
	static const struct { const char *s; BinOp op; } ops[] = {
		{"==", OP_EQ}, {"!=", OP_NE}, {"<", OP_LT},
		{"<=", OP_LE}, {">", OP_GT},  {">=", OP_GE},
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (tok_is(t, ops[i].s)) {
			*op = ops[i].op;
			return true;
		}
	return false;
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
		Expr *c = make_bin(p, op, left, right, span_from(p, first));
		if (!c)
			return NULL;
		result = result ? make_bin(p, OP_AND, result, c, span_from(p, first)) : c;
		/* unify may have converted `right`; the next link compares the
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
	if (++p->depth > MAX_EXPR_DEPTH) {
		error_at(p, t->span, "expression nested too deeply");
		return NULL;
	}
	Expr *e = parse_not(p);
	p->depth--;
	if (!e || !check_bool_expr(p, e, "the operand of 'not'"))
		return NULL;
	return ir_not(p->a, e, span_from(p, t));
}

static Expr *parse_and(Parser *p)
{
	Token *first = peek(p);
	Expr *e = parse_not(p);
	int count = 0;
	while (e && tok_is(peek(p), "and") && !chain_too_long(p, &count)) {
		next(p);
		e = make_bin(p, OP_AND, e, parse_not(p), span_from(p, first));
	}
	return p->failed ? NULL : e;
}

static Expr *parse_or(Parser *p)
{
	Token *first = peek(p);
	Expr *e = parse_and(p);
	int count = 0;
	while (e && tok_is(peek(p), "or") && !chain_too_long(p, &count)) {
		next(p);
		e = make_bin(p, OP_OR, e, parse_and(p), span_from(p, first));
	}
	return p->failed ? NULL : e;
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
	if (!c || !expect(p, "else", "in conditional expression"))
		return NULL;
	Expr *y = parse_expr(p);
	if (!y || !check_bool_expr(p, c, "the condition") || !unify(p, &e, &y))
		return NULL;
	return ir_select(p->a, c, e, y, span_from(p, first));
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
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 8;
		Stmt **ni = arena_alloc(p->a, sizeof(Stmt *) * (size_t)cap);
		if (l->n)
			memcpy(ni, l->items, sizeof(Stmt *) * (size_t)l->n);
		l->items = ni;
		l->cap = cap;
	}
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
			error_at(p, l->items[i]->span, "too many let bindings and "
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
			error_at(p, peek(p)->span, "expected an indented block after %s",
				 what);
		} else {
			next(p);
			s = parse_stmt_list(p, colon->span);
			if (s && !at_kind(p, TK_DEDENT))
				error_at(p, peek(p)->span, "expected dedent, found %s",
					 found(p));
			if (!p->failed)
				next(p);
		}
	} else {
		StmtList l = {0};
		int mark = p->nbinds;
		Token *t = peek(p);
		if (tok_is(t, "for") || tok_is(t, "if") || tok_is(t, "with"))
			error_at(p, t->span, "expected an indented block after %s",
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
			error_at(p, peek(p)->span, "too many loop variables");
			return false;
		}
		Token *t = peek(p);
		if (!expect_name(p, "a loop variable name"))
			return false;
		names[(*n)++] = t;
	} while (accept(p, ","));
	if (paren && !expect(p, ")", "after loop variables"))
		return false;
	return true;
}

#define MAX_GRID 16

static Stmt *parse_for(Parser *p)
{
	Token *first = next(p); /* for */
	Token *names[MAX_GRID];
	int nnames;
	if (!parse_for_names(p, names, &nnames, MAX_GRID) ||
	    !expect(p, "in", "after loop variables"))
		return NULL;
	Token *it = peek(p);
	ForKind kind = FOR_SERIAL;
	bool grid = false;
	const char *callee;
	if (tok_is(it, "range")) {
		next(p);
		callee = "range";
	} else if (tok_is(it, "T") && tok_is(peek_at(p, 1), ".") &&
		   peek_at(p, 2)->kind == TK_NAME) {
		next(p);
		next(p);
		const char *fn = next(p)->text;
		callee = arena_printf(p->a, "T.%s", fn);
		if (strcmp(fn, "serial") == 0)
			kind = FOR_SERIAL;
		else if (strcmp(fn, "parallel") == 0)
			kind = FOR_PARALLEL;
		else if (strcmp(fn, "vectorized") == 0)
			kind = FOR_VECTORIZED;
		else if (strcmp(fn, "unroll") == 0)
			kind = FOR_UNROLLED;
		else if (strcmp(fn, "grid") == 0)
			grid = true;
		else {
			error_at(p, span_from(p, it), "unknown loop kind '%s' (expected "
				 "T.serial, T.grid, T.parallel, T.vectorized, T.unroll "
				 "or range)", callee);
			return NULL;
		}
	} else {
		error_at(p, it->span, "expected T.serial(...), T.grid(...) or "
			 "range(...) after 'in', found %s", found(p));
		return NULL;
	}
	if (!expect(p, "(", arena_printf(p->a, "after %s", callee)))
		return NULL;
	Args args;
	if (!parse_args(p, callee, ")", &args))
		return NULL;
	if (!expect(p, ":", "after for header"))
		return NULL;
	Span header = span_from(p, first);
	Expr *mins[MAX_GRID], *exts[MAX_GRID];
	int nloops = nnames;
	if (grid) {
		if (!check_args(p, &args, 1, MAX_GRID, NULL))
			return NULL;
		if (args.n != nnames) {
			error_at(p, header, "T.grid has %d extent%s but %d loop "
				 "variable%s", args.n, args.n == 1 ? "" : "s", nnames,
				 nnames == 1 ? "" : "s");
			return NULL;
		}
		for (int k = 0; k < nloops; k++) {
			exts[k] = finish_expr(val_expr(p, &args.v[k], "a loop extent"));
			if (!check_int_expr(p, exts[k], "a loop extent"))
				return NULL;
			mins[k] = ir_int(p->a, 0, exts[k]->dtype, exts[k]->span);
		}
	} else {
		if (nnames != 1) {
			error_at(p, names[1]->span, "%s binds one loop variable; use "
				 "T.grid for several", callee);
			return NULL;
		}
		if (!check_args(p, &args, 1, 2, NULL))
			return NULL;
		Expr *lo = finish_expr(val_expr(p, &args.v[0], "a loop bound"));
		if (!check_int_expr(p, lo, "a loop bound"))
			return NULL;
		if (args.n == 1) {
			mins[0] = ir_int(p->a, 0, lo->dtype, lo->span);
			exts[0] = lo;
		} else {
			Expr *hi = finish_expr(val_expr(p, &args.v[1], "a loop bound"));
			if (!check_int_expr(p, hi, "a loop bound") || !unify(p, &lo, &hi))
				return NULL;
			mins[0] = lo;
			int64_t ext;
			if (lo->kind == EX_INT && hi->kind == EX_INT &&
			    !__builtin_sub_overflow(hi->u.ival, lo->u.ival, &ext) &&
			    int_fits(ext, lo->dtype))
				exts[0] = ir_int(p->a, ext, lo->dtype, hi->span);
			else
				exts[0] = make_bin(p, OP_SUB, hi, lo, hi->span);
		}
	}
	int mark = p->nbinds;
	Var *vars[MAX_GRID];
	for (int k = 0; k < nloops; k++) {
		vars[k] = ir_var(p->a, names[k]->text, exts[k]->dtype, names[k]->span);
		bind(p, vars[k]->name, vars[k], NULL);
	}
	Stmt *body = parse_suite(p, "for header", false);
	p->nbinds = mark;
	if (!body)
		return NULL;
	for (int k = nloops - 1; k >= 0; k--)
		body = ir_for(p->a, vars[k], mins[k], exts[k], kind, body, header);
	return body;
}

/* One `if` or `elif` header and its suite; the keyword is at peek. */
static bool parse_if_branch(Parser *p, Expr **cond, Stmt **then_s, Span *header)
{
	Token *first = next(p);
	Expr *c = finish_expr(parse_expr(p));
	if (!c || !check_bool_expr(p, c, "an if condition") ||
	    !expect(p, ":", "after if condition"))
		return false;
	*header = span_from(p, first);
	*cond = c;
	*then_s = parse_suite(p, "if", false);
	return *then_s != NULL;
}

/* if / elif ... / else, built from the last branch backwards so that a
 * long elif chain does not recurse. */
static Stmt *parse_if(Parser *p)
{
	int n = 0, cap = 4;
	Expr **conds = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap);
	Stmt **thens = arena_alloc(p->a, sizeof(Stmt *) * (size_t)cap);
	Span *spans = arena_alloc(p->a, sizeof(Span) * (size_t)cap);
	do {
		if (n == cap) {
			Expr **nc = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap * 2);
			Stmt **nt = arena_alloc(p->a, sizeof(Stmt *) * (size_t)cap * 2);
			Span *ns = arena_alloc(p->a, sizeof(Span) * (size_t)cap * 2);
			memcpy(nc, conds, sizeof(Expr *) * (size_t)n);
			memcpy(nt, thens, sizeof(Stmt *) * (size_t)n);
			memcpy(ns, spans, sizeof(Span) * (size_t)n);
			conds = nc;
			thens = nt;
			spans = ns;
			cap *= 2;
		}
		if (!parse_if_branch(p, &conds[n], &thens[n], &spans[n]))
			return NULL;
		n++;
	} while (tok_is(peek(p), "elif"));
	Stmt *else_s = NULL;
	if (tok_is(peek(p), "else")) {
		next(p);
		if (!expect(p, ":", "after else"))
			return NULL;
		else_s = parse_suite(p, "else", false);
		if (!else_s)
			return NULL;
	}
	for (int k = n - 1; k >= 0; k--)
		else_s = ir_if(p->a, conds[k], thens[k], else_s, spans[k]);
	return else_s;
}

static Stmt *parse_with(Parser *p)
{
	Token *first = next(p); /* with */
	if (!(tok_is(peek(p), "T") && tok_is(peek_at(p, 1), ".") &&
	      tok_is(peek_at(p, 2), "block"))) {
		error_at(p, peek(p)->span, "expected T.block(\"name\") after 'with', "
			 "found %s", found(p));
		return NULL;
	}
	p->pos += 3;
	if (!expect(p, "(", "after T.block"))
		return NULL;
	Args args;
	const char *name;
	if (!parse_args(p, "T.block", ")", &args) ||
	    !check_args(p, &args, 1, 1, NULL) ||
	    !val_string(p, &args.v[0], "the block name", &name))
		return NULL;
	if (!expect(p, ":", "after with header"))
		return NULL;
	Span header = span_from(p, first);
	Stmt *body = parse_suite(p, "with header", false);
	return body ? ir_block(p->a, name, body, header) : NULL;
}

/* `X[i, j] = e`, `X[i] += e` (and -=, *=): the target name is at peek. */
static Stmt *parse_store(Parser *p)
{
	Token *first = next(p);
	const char *name = first->text;
	Var *v;
	Buffer *b;
	if (!lookup(p, name, &v, &b)) {
		error_at(p, first->span, "unknown buffer '%s'", name);
		return NULL;
	}
	if (!b) {
		error_at(p, first->span, "cannot store to '%s': not a buffer", name);
		return NULL;
	}
	Expr *target = parse_load(p, b, first);
	if (!target)
		return NULL;
	Token *op = peek(p);
	BinOp bop = OP_ADD;
	bool aug = true;
	if (tok_is(op, "+="))
		bop = OP_ADD;
	else if (tok_is(op, "-="))
		bop = OP_SUB;
	else if (tok_is(op, "*="))
		bop = OP_MUL;
	else if (tok_is(op, "="))
		aug = false;
	else {
		error_at(p, op->span, "expected '=' or '+=' after buffer store "
			 "target, found %s", found(p));
		return NULL;
	}
	next(p);
	Expr *value = parse_expr(p);
	if (!value)
		return NULL;
	if (aug)
		value = make_bin(p, bop, target, value, value->span);
	if (!value || is_handle(p, value))
		return NULL;
	if (value->dtype == DT_VOID)
		retype_void(value, b->dtype);
	if (value->kind == EX_INT && dtype_is_int(b->dtype) &&
	    value->dtype != DT_BOOL && !int_fits(value->u.ival, b->dtype)) {
		error_at(p, value->span, "%lld does not fit in %s buffer '%s'",
			 (long long)value->u.ival, dtype_name(b->dtype), name);
		return NULL;
	}
	if (value->dtype != b->dtype) {
		bool literal_ok = is_literal(value) && literal_as(p, value, b->dtype);
		bool widening = dtype_is_float(b->dtype) || b->dtype == value->dtype ||
				(dtype_is_int(b->dtype) && dtype_is_int(value->dtype));
		if (!literal_ok && !widening) {
			error_at(p, value->span, "cannot store a %s value into %s "
				 "buffer '%s' (use T.cast)", dtype_name(value->dtype),
				 dtype_name(b->dtype), name);
			return NULL;
		}
		value = convert(p, value, b->dtype);
	}
	return ir_store(p->a, b, target->u.load.nidx, target->u.load.idx, value,
			span_from(p, first));
}

static bool parse_scope_name(Parser *p, Val *v, BufferScope *out)
{
	const char *s;
	if (!val_string(p, v, "the scope", &s))
		return false;
	if (strcmp(s, "global") == 0)
		*out = SCOPE_GLOBAL;
	else if (strcmp(s, "local") == 0)
		*out = SCOPE_LOCAL;
	else if (strcmp(s, "shared") == 0)
		*out = SCOPE_SHARED;
	else {
		error_at(p, v->span, "unknown scope '%s' (expected \"global\", "
			 "\"local\" or \"shared\")", s);
		return false;
	}
	return true;
}

/* `name = T.alloc_buffer(shape, dtype, scope=...)`. */
static Stmt *parse_alloc(Parser *p, Token *first)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators", NULL};
	Args args;
	if (!parse_args(p, "T.alloc_buffer", ")", &args) ||
	    !check_args(p, &args, 0, 3, kws))
		return NULL;
	Val *sv = arg(&args, 0, "shape"), *dv = arg(&args, 1, "dtype"),
	    *cv = arg(&args, 2, "scope");
	if (!sv) {
		error_at(p, span_from(p, first), "T.alloc_buffer needs a shape");
		return NULL;
	}
	int ndim;
	Expr **shape;
	DType t = DT_FLOAT32;
	BufferScope scope = SCOPE_GLOBAL;
	if (!val_shape(p, sv, &ndim, &shape) || (dv && !val_dtype(p, dv, &t)) ||
	    (cv && !parse_scope_name(p, cv, &scope)))
		return NULL;
	Buffer *b = ir_buffer(p->a, first->text, t, ndim, shape, first->span);
	b->scope = scope;
	Val *av = arg(&args, -1, "axis_separators");
	if (av && !val_axis_separators(p, av, b))
		return NULL;
	bind(p, b->name, NULL, b);
	return ir_alloc(p->a, b, NULL, span_from(p, first));
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
	Span sp = span_from(p, first);
	if (!p->in_func_top) {
		error_at(p, sp, "T.match_buffer is only allowed at the top level "
			 "of the function body");
		return false;
	}
	/* the handle is the first positional argument when it names one */
	int off = 0;
	Param *hp = NULL;
	Val *h = arg(&args, 0, "param");
	if (h && h->kind == VAL_EXPR && h->e->kind == EX_VAR &&
	    h->e->dtype == DT_HANDLE)
		off = h->kw ? 0 : 1;
	else if (h && h->kw) {
		error_at(p, h->span, "expected a handle parameter");
		return false;
	} else
		h = NULL;
	if (!check_args(p, &args, 0, 3 + off, kws))
		return false;
	for (int i = 0; i < p->nparams && !hp; i++) {
		Param *pr = &p->params[i];
		if (pr->kind != PARAM_HANDLE)
			continue;
		if (h ? pr->var == h->e->u.var : !pr->buf)
			hp = pr;
	}
	if (!hp) {
		error_at(p, sp, h ? "T.match_buffer: not a handle parameter"
				  : "T.match_buffer: no unmatched T.handle "
				    "parameter left");
		return false;
	}
	if (hp->buf) {
		error_at(p, sp, "handle '%s' is already bound by T.match_buffer",
			 hp->var->name);
		return false;
	}
	Val *sv = arg(&args, off, "shape"), *dv = arg(&args, off + 1, "dtype"),
	    *cv = arg(&args, off + 2, "scope");
	if (!sv) {
		error_at(p, sp, "T.match_buffer needs a shape");
		return false;
	}
	int ndim;
	Expr **shape;
	DType t = DT_FLOAT32;
	BufferScope scope = SCOPE_GLOBAL;
	if (!val_shape(p, sv, &ndim, &shape) || (dv && !val_dtype(p, dv, &t)) ||
	    (cv && !parse_scope_name(p, cv, &scope)))
		return false;
	hp->buf = ir_buffer(p->a, first->text, t, ndim, shape, first->span);
	hp->buf->scope = scope;
	Val *av = arg(&args, -1, "axis_separators");
	if (av && !val_axis_separators(p, av, hp->buf))
		return false;
	bind(p, hp->buf->name, NULL, hp->buf);
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
		if (!(tok_is(tt, "T") && tok_is(peek_at(p, 1), ".") &&
		      peek_at(p, 2)->kind == TK_NAME)) {
			error_at(p, tt->span, "expected a dtype such as T.int32, found %s",
				 found(p));
			return NULL;
		}
		p->pos += 3;
		if (!dtype_from_string(p, prev(p)->text, span_from(p, tt), &ann))
			return NULL;
	}
	if (!expect(p, "=", "in assignment"))
		return NULL;
	Token *rhs = peek(p);
	if (ann == DT_VOID && tok_is(rhs, "T") && tok_is(peek_at(p, 1), ".") &&
	    tok_is(peek_at(p, 3), "(")) {
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
	if (!value || is_handle(p, value))
		return NULL;
	if (ann != DT_VOID) {
		if (value->dtype == DT_VOID)
			retype_void(value, ann);
		value = convert(p, value, ann);
	}
	finish_expr(value);
	Var *v = ir_var(p->a, name, value->dtype, first->span);
	Stmt *s = ir_letstmt(p->a, v, value, NULL, span_from(p, first));
	bind(p, name, v, NULL);
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
		error_at(p, first->span, "expected a statement, found an expression "
			 "(use T.evaluate(...) to evaluate it)");
		return NULL;
	}
	p->pos += 3;
	if (!expect(p, "(", arena_printf(p->a, "after T.%s", fn)))
		return NULL;
	Args args;
	if (!parse_args(p, arena_printf(p->a, "T.%s", fn), ")", &args) ||
	    !check_args(p, &args, 1, 1, NULL))
		return NULL;
	Expr *e = finish_expr(val_expr(p, &args.v[0], "the argument"));
	if (!e)
		return NULL;
	if (assume) {
		if (!check_bool_expr(p, e, "the argument of T.assume"))
			return NULL;
		return ir_assume(p->a, e, span_from(p, first));
	}
	if (is_handle(p, e))
		return NULL;
	return ir_eval(p->a, e, span_from(p, first));
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
	if (tok_is(t, "T") && tok_is(peek_at(p, 1), ".") &&
	    peek_at(p, 2)->kind == TK_NAME) {
		bool ignored;
		Stmt *s = parse_t_stmt(p, &ignored);
		if (s)
			list_push(p, out, s);
		return s || ignored;
	}
	if (t->kind == TK_NAME && !lex_is_keyword(t->text)) {
		Token *n1 = peek_at(p, 1);
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
		if (tok_is(n1, "+=") || tok_is(n1, "-=") || tok_is(n1, "*=")) {
			Var *v;
			Buffer *b;
			if (lookup(p, t->text, &v, &b) && b)
				error_at(p, n1->span, "expected indices: '%s[...] %s'",
					 t->text, n1->text);
			else
				error_at(p, n1->span, "'%s' cannot update a variable; "
					 "only buffer elements can be assigned with it",
					 n1->text);
			return false;
		}
	}
	if (tok_is(t, "else") || tok_is(t, "elif"))
		error_at(p, t->span, "'%s' without a matching 'if'", t->text);
	else if (t->kind == TK_INDENT)
		error_at(p, t->span, "unexpected indent");
	else if (tok_is(t, "def") || tok_is(t, "class") || tok_is(t, "@"))
		error_at(p, t->span, "expected a statement, found %s (a function "
			 "cannot be nested in another)", found(p));
	else
		error_at(p, t->span, "expected a statement, found %s", found(p));
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
		return expect_newline(p, "statement");
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
	if (!expect(p, "@", "(a decorator such as @T.prim_func)"))
		return NULL;
	const char *last = expect_name(p, "a decorator name");
	while (last && accept(p, "."))
		last = expect_name(p, "a decorator name");
	if (!last)
		return NULL;
	if (tok_is(peek(p), "(")) {
		int end = matching(p, p->pos);
		if (end < 0) {
			error_at(p, peek(p)->span, "'(' was never closed");
			return NULL;
		}
		p->pos = end + 1;
	}
	return expect_newline(p, "decorator") ? last : NULL;
}

/* `T.Buffer[shape, dtype]` or `T.Buffer(shape, dtype)`; T.Buffer consumed. */
static Buffer *parse_buffer_annotation(Parser *p, Token *name)
{
	static const char *const kws[] = {"shape", "dtype", "scope", "axis_separators", NULL};
	const char *close = tok_is(peek(p), "[") ? "]" : ")";
	if (!tok_is(peek(p), "[") && !tok_is(peek(p), "(")) {
		error_at(p, peek(p)->span, "expected '[' or '(' after T.Buffer, "
			 "found %s", found(p));
		return NULL;
	}
	next(p);
	Args args;
	if (!parse_args(p, "T.Buffer", close, &args) ||
	    !check_args(p, &args, 0, 2, kws))
		return NULL;
	Val *sv = arg(&args, 0, "shape"), *dv = arg(&args, 1, "dtype"),
	    *cv = arg(&args, 2, "scope");
	if (!sv) {
		error_at(p, args.open->span, "T.Buffer needs a shape");
		return NULL;
	}
	int ndim;
	Expr **shape;
	DType t = DT_FLOAT32;
	BufferScope scope = SCOPE_GLOBAL;
	if (!val_shape(p, sv, &ndim, &shape) || (dv && !val_dtype(p, dv, &t)) ||
	    (cv && !parse_scope_name(p, cv, &scope)))
		return NULL;
	Buffer *b = ir_buffer(p->a, name->text, t, ndim, shape, name->span);
	b->scope = scope;
	Val *av = arg(&args, -1, "axis_separators");
	if (av && !val_axis_separators(p, av, b))
		return NULL;
	return b;
}

/* Scalar parameters (`n: T.int32`) are bound before any parameter is
 * parsed, so that shapes may name a scalar declared later. */
static void prebind_scalars(Parser *p, int open)
{
	int close = matching(p, open);
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
			bind(p, t->text, ir_var(p->a, t->text, dt, t->span), NULL);
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
	if (!expect_name(p, "a parameter name") ||
	    !expect(p, ":", "after parameter name (every parameter needs a type)"))
		return false;
	for (int i = 0; i < p->nparams; i++) {
		const char *other = p->params[i].buf ? p->params[i].buf->name
						     : p->params[i].var->name;
		if (strcmp(other, name->text) == 0) {
			error_at(p, name->span, "duplicate parameter '%s'", name->text);
			return false;
		}
	}
	Token *tt = peek(p);
	if (!(tok_is(tt, "T") && tok_is(peek_at(p, 1), ".") &&
	      peek_at(p, 2)->kind == TK_NAME)) {
		error_at(p, tt->span, "expected a parameter type (T.Buffer[...], "
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
		bind(p, name->text, out->var, NULL);
		return true;
	}
	if (!dtype_from_string(p, ty, span_from(p, tt), &dt))
		return false;
	out->kind = PARAM_SCALAR;
	out->var = prebound(p, name->text);
	if (!out->var || out->var->dtype != dt) {
		out->var = ir_var(p->a, name->text, dt, name->span);
		bind(p, name->text, out->var, NULL);
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
		if (p->nparams == cap) {
			Param *np = arena_alloc(p->a, sizeof(Param) * (size_t)cap * 2);
			memcpy(np, p->params, sizeof(Param) * (size_t)p->nparams);
			p->params = np;
			cap *= 2;
		}
		if (!parse_param(p, &p->params[p->nparams]))
			return false;
		Param *pr = &p->params[p->nparams++];
		if (pr->kind == PARAM_BUFFER)
			bind(p, pr->buf->name, NULL, pr->buf);
		if (!accept(p, ","))
			break;
	}
	return expect(p, ")", "to close the parameter list");
}

static Func *parse_func(Parser *p)
{
	Token *first = peek(p);
	if (!expect(p, "def", "(a function definition)"))
		return NULL;
	Token *name = peek(p);
	if (!expect_name(p, "a function name") ||
	    !expect(p, "(", "after function name"))
		return NULL;
	p->nbinds = 0;
	if (!parse_params(p))
		return NULL;
	if (accept(p, "->")) {
		if (!accept(p, "None") && !finish_expr(parse_expr(p)))
			return NULL;
	}
	if (!expect(p, ":", "after function header"))
		return NULL;
	Span header = span_from(p, first);
	Stmt *body = parse_suite(p, "function header", true);
	if (!body)
		return NULL;
	for (int i = 0; i < p->nparams; i++)
		if (p->params[i].kind == PARAM_HANDLE && !p->params[i].buf) {
			error_at(p, p->params[i].var->span, "handle parameter '%s' is "
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
			expect_newline(p, "import");
		} else if (t->kind == TK_STRING && peek_at(p, 1)->kind == TK_NEWLINE) {
			p->pos += 2;
		} else {
			return;
		}
	}
}

static Module *parse_class(Parser *p, Token *first)
{
	if (!expect(p, "class", "after @ir_module"))
		return NULL;
	Token *name = peek(p);
	if (!expect_name(p, "a class name"))
		return NULL;
	if (accept(p, "(")) {
		while (!p->failed && !accept(p, ")"))
			if (!expect_name(p, "a base class name") ||
			    (!tok_is(peek(p), ")") && !expect(p, ",", "between base classes")))
				return NULL;
	}
	if (!expect(p, ":", "after class name") || !expect_newline(p, "class header"))
		return NULL;
	if (!at_kind(p, TK_INDENT)) {
		error_at(p, peek(p)->span, "expected an indented class body");
		return NULL;
	}
	next(p);
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
			error_at(p, dec->span, "expected @T.prim_func in a module class");
			return NULL;
		}
		Func *f = parse_func(p);
		if (!f)
			return NULL;
		for (int i = 0; i < n; i++)
			if (strcmp(funcs[i]->name, f->name) == 0) {
				error_at(p, f->span, "duplicate function '%s' in module",
					 f->name);
				return NULL;
			}
		if (n == cap) {
			Func **nf = arena_alloc(p->a, sizeof(Func *) * (size_t)cap * 2);
			memcpy(nf, funcs, sizeof(Func *) * (size_t)n);
			funcs = nf;
			cap *= 2;
		}
		funcs[n++] = f;
	}
	if (p->failed)
		return NULL;
	next(p); /* DEDENT */
	if (n == 0) {
		error_at(p, name->span, "module '%s' holds no @T.prim_func", name->text);
		return NULL;
	}
	return ir_module(p->a, name->text, n, funcs, span_from(p, first));
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
		error_at(&p, first->span, "expected @T.prim_func or @I.ir_module, "
			 "found an empty file");
		return NULL;
	}
	if (!tok_is(first, "@")) {
		error_at(&p, first->span, "expected @T.prim_func or @I.ir_module, "
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
		error_at(&p, dec->span, "expected @T.prim_func or @I.ir_module");
	}
	if (!m || p.failed)
		return NULL;
	if (!at_kind(&p, TK_EOF)) {
		error_at(&p, peek(&p)->span, "expected end of file, found %s (a file "
			 "holds one @T.prim_func or one @I.ir_module)", found(&p));
		return NULL;
	}
	/* style rule 14: what the parser built is well formed */
	return ir_verify_module(m, d) ? m : NULL;
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

static bool lex_sub(Arena *a, const Source *src, int start, int end,
		    DiagList *d, TokenList *tl)
{
	int len = (int)strlen(src->text);
	if (start < 0 || end > len || start > end) {
		static const Span nowhere;
		diag_add(d, DIAG_ERROR, nowhere, "invalid text range [%d, %d)",
			 start, end);
		return false;
	}
	return lex_range(a, src, start, end, LEX_EXPR, d, tl);
}

static bool expect_eof(Parser *p, const char *what)
{
	if (p->failed)
		return false;
	if (at_kind(p, TK_EOF))
		return true;
	error_at(p, peek(p)->span, "unexpected %s after %s", found(p), what);
	return false;
}

Expr *parse_expr_range(Arena *a, const Source *src, int start, int end,
		       const ParseScope *scope, DiagList *d)
{
	TokenList tl;
	if (!lex_sub(a, src, start, end, d, &tl))
		return NULL;
	Parser p;
	parser_init(&p, a, src, d, &tl);
	p.scope = scope;
	if (at_kind(&p, TK_EOF)) {
		error_at(&p, peek(&p)->span, "expected an expression, found nothing");
		return NULL;
	}
	Expr *e = finish_expr(parse_expr(&p));
	if (!e || !expect_eof(&p, "the expression") || is_handle(&p, e))
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
		if (tok_is(peek(p), "T") && tok_is(peek_at(p, 1), ".") &&
		    tok_is(peek_at(p, 2), "axis_separator") &&
		    !tok_is(peek_at(p, 3), "(")) {
			last_sep = peek(p);
			p->pos += 3;
			/* separators sit strictly between indices: positions
			 * in [1, ndim), increasing (Buffer.axis_separators) */
			if (l->nbody == 0 ||
			    (l->nseps > 0 && l->seps[l->nseps - 1] == l->nbody)) {
				error_at(p, span_from(p, last_sep), "T.axis_separator "
					 "must stand between two indices");
				return false;
			}
			if (l->nseps == scap) {
				int *ns = arena_alloc(p->a, sizeof(int) * (size_t)scap * 2);
				memcpy(ns, l->seps, sizeof(int) * (size_t)l->nseps);
				l->seps = ns;
				scap *= 2;
			}
			l->seps[l->nseps++] = l->nbody;
		} else {
			if (l->nbody == cap) {
				Expr **nb = arena_alloc(p->a, sizeof(Expr *) * (size_t)cap * 2);
				memcpy(nb, l->body, sizeof(Expr *) * (size_t)l->nbody);
				l->body = nb;
				cap *= 2;
			}
			Expr *e = finish_expr(parse_expr(p));
			if (!e)
				return false;
			l->body[l->nbody++] = e;
		}
		if (!accept(p, ","))
			break;
	}
	if (!p->failed && l->nseps > 0 && l->seps[l->nseps - 1] == l->nbody) {
		error_at(p, span_from(p, last_sep), "T.axis_separator must stand "
			 "between two indices");
		return false;
	}
	return expect(p, close, "to close the lambda's index list");
}

Lambda *parse_lambda_range(Arena *a, const Source *src, int start, int end,
			   const ParseScope *scope, DiagList *d)
{
	TokenList tl;
	if (!lex_sub(a, src, start, end, d, &tl))
		return NULL;
	Parser p;
	parser_init(&p, a, src, d, &tl);
	p.scope = scope;
	Token *first = peek(&p);
	if (!expect(&p, "lambda", "(an index map such as lambda i: [i // 4, i % 4])"))
		return NULL;
	Lambda *l = arena_alloc(a, sizeof *l);
	int cap = 4;
	l->params = arena_alloc(a, sizeof(Var *) * (size_t)cap);
	while (!p.failed && !tok_is(peek(&p), ":")) {
		Token *t = peek(&p);
		if (!expect_name(&p, "a lambda parameter name"))
			return NULL;
		for (int i = 0; i < l->nparams; i++)
			if (strcmp(l->params[i]->name, t->text) == 0) {
				error_at(&p, t->span, "duplicate lambda parameter '%s'",
					 t->text);
				return NULL;
			}
		if (l->nparams == cap) {
			Var **np = arena_alloc(a, sizeof(Var *) * (size_t)cap * 2);
			memcpy(np, l->params, sizeof(Var *) * (size_t)l->nparams);
			l->params = np;
			cap *= 2;
		}
		Var *v = ir_var(a, t->text, DT_INT32, t->span);
		l->params[l->nparams++] = v;
		bind(&p, v->name, v, NULL);
		if (!accept(&p, ","))
			break;
	}
	if (!expect(&p, ":", "after lambda parameters"))
		return NULL;
	if (tok_is(peek(&p), "[") || (tok_is(peek(&p), "(") && paren_is_tuple(&p))) {
		const char *close = tok_is(next(&p), "[") ? "]" : ")";
		l->bracketed = true;
		if (!parse_lambda_list(&p, l, close))
			return NULL;
	} else {
		l->body = arena_alloc(a, sizeof(Expr *));
		l->body[0] = finish_expr(parse_expr(&p));
		if (!l->body[0])
			return NULL;
		l->nbody = 1;
	}
	if (!expect_eof(&p, "the lambda"))
		return NULL;
	for (int i = 0; i < l->nbody; i++)
		if (is_handle(&p, l->body[i]))
			return NULL;
	l->span = span_from(&p, first);
	return l;
}
