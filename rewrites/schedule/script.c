/* rewrites/schedule/script.c — the schedule-script reader: `.sched` text (one
 * `sch.method(args)` call per line, `;` between calls, `#` comments, calls
 * continued inside parentheses, optional `a, b = ` left-hand side) to a
 * Script of calls whose arguments are classified (numbers, strings, names,
 * None, booleans, T.undef(), lambdas, other expressions by text range). */
#include "rewrites/schedule/script.h"

#include <string.h>

#include "kernel/lex.h"

typedef struct Reader {
	Arena *a;
	const Source *src;
	DiagList *d;
	Token *toks;
	int n, pos;
	bool failed;
	/* calls nested as arguments (`sch.get_loops(sch.get_block("C"))`),
	 * run before the call that holds them, their result named */
	ScriptCall *hoisted;
	int nhoisted, caphoisted, ntemps;
} Reader;

static bool parse_call_rest(Reader *r, ScriptCall *c, Token *first);


static Token *peek(Reader *r) { return &r->toks[r->pos]; }

static Token *peek_at(Reader *r, int k)
{
	int i = r->pos + k;
	return &r->toks[i < r->n ? i : r->n - 1];
}

static Token *next(Reader *r)
{
	Token *t = &r->toks[r->pos];
	if (r->pos < r->n - 1)
		r->pos++;
	return t;
}

static void error_at(Reader *r, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void error_at(Reader *r, Span sp, const char *fmt, ...)
{
	if (r->failed)
		return;
	r->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(r->d, DIAG_ERROR, sp, fmt, ap);
	va_end(ap);
}

static const char *found(Reader *r) { return tok_describe(r->a, peek(r)); }

static bool expect(Reader *r, const char *s, const char *what)
{
	if (tok_is(peek(r), s)) {
		next(r);
		return true;
	}
	error_at(r, peek(r)->span, "expected '%s' %s, found %s", s, what,
		 found(r));
	return false;
}

/* The span covering tokens [first, last] (clipped to first's line). */
static Span span_cover(const Token *first, const Token *last)
{
	Span sp = first->span;
	if (last->span.line == sp.line && last->start + last->len > first->start)
		sp.len = last->start + last->len - first->start;
	return sp;
}

static bool is_open(const Token *t)
{
	return tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{");
}

static bool is_close(const Token *t)
{
	return tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}");
}

/* The end (exclusive token index) of the argument value starting at
 * r->pos: up to ',' or ')' at bracket depth 0; a lambda's parameter list
 * (up to its ':') is skipped first since it holds commas. */
static int value_end(Reader *r)
{
	int i = r->pos, depth = 0;
	if (tok_is(&r->toks[i], "lambda"))
		while (i < r->n - 1 && !tok_is(&r->toks[i], ":"))
			i++;
	for (; i < r->n - 1; i++) {
		Token *t = &r->toks[i];
		if (t->kind == TK_NEWLINE)
			break;
		if (is_open(t))
			depth++;
		else if (is_close(t) && depth-- == 0)
			break;
		else if (depth == 0 && tok_is(t, ","))
			break;
	}
	return i;
}

static bool is_undef_call(const Token *t, int n)
{
	return n >= 5 && tok_is(&t[0], "T") && tok_is(&t[1], ".") &&
	       tok_is(&t[2], "undef") && tok_is(&t[3], "(") &&
	       tok_is(&t[n - 1], ")");
}

static bool number_arg(Reader *r, ScriptArg *arg, const Token *t, bool neg)
{
	if (t->kind == TK_FLOAT) {
		arg->kind = ARG_FLOAT;
		arg->fval = neg ? -t->fval : t->fval;
		return true;
	}
	uint64_t limit = (uint64_t)INT64_MAX + (neg ? 1u : 0u);
	if (t->int_overflow || t->uval > limit) {
		error_at(r, arg->span, "integer %s%s does not fit in int64",
			 neg ? "-" : "", t->text);
		return false;
	}
	arg->kind = ARG_INT;
	arg->ival = neg ? (int64_t)(0 - t->uval) : (int64_t)t->uval;
	return true;
}

static bool classify(Reader *r, ScriptArg *arg, const Token *t, int n);

/* The index of the bracket closing the one at t[0], or -1. */
static int closing(const Token *t, int n)
{
	int depth = 0;
	for (int i = 0; i < n; i++) {
		if (is_open(&t[i]))
			depth++;
		else if (is_close(&t[i]) && --depth == 0)
			return i;
	}
	return -1;
}

/* `[a, b]` or `(a, b)` (a parenthesised value without a comma at its top
 * level is an expression, not a tuple): the items, each classified. */
static bool list_items(Reader *r, ScriptArg *arg, const Token *t, int n)
{
	int cap = 4;
	arg->items = arena_alloc(r->a, sizeof(ScriptArg) * (size_t)cap);
	for (int i = 1; i < n - 1;) {
		int j = i, depth = 0;
		if (tok_is(&t[j], "lambda"))
			while (j < n - 1 && !tok_is(&t[j], ":"))
				j++;
		for (; j < n - 1; j++) {
			if (is_open(&t[j]))
				depth++;
			else if (is_close(&t[j]))
				depth--;
			else if (depth == 0 && tok_is(&t[j], ","))
				break;
		}
		if (j == i) {
			error_at(r, t[i].span, "expected a list item, found %s",
				 tok_describe(r->a, &t[i]));
			return false;
		}
		VEC_RESERVE(r->a, arg->items, arg->nitems, cap);
		ScriptArg *it = &arg->items[arg->nitems++];
		memset(it, 0, sizeof *it);
		it->start = t[i].start;
		it->end = t[j - 1].start + t[j - 1].len;
		it->span = span_cover(&t[i], &t[j - 1]);
		if (!classify(r, it, &t[i], j - i))
			return false;
		i = j + 1;
	}
	arg->kind = ARG_LIST;
	return true;
}

static bool is_tuple(const Token *t, int n)
{
	if (!tok_is(&t[0], "(") || closing(t, n) != n - 1)
		return false;
	int depth = 0;
	for (int i = 1; i < n - 1; i++) {
		if (is_open(&t[i]))
			depth++;
		else if (is_close(&t[i]))
			depth--;
		else if (depth == 0 && tok_is(&t[i], ","))
			return true;
	}
	return false;
}

/* Classify the value in tokens t[0, n). */
static bool classify(Reader *r, ScriptArg *arg, const Token *t, int n)
{
	if (n == 1 && (t->kind == TK_INT || t->kind == TK_FLOAT))
		return number_arg(r, arg, t, false);
	if (n == 2 && (tok_is(&t[0], "-") || tok_is(&t[0], "+")) &&
	    (t[1].kind == TK_INT || t[1].kind == TK_FLOAT))
		return number_arg(r, arg, &t[1], tok_is(&t[0], "-"));
	if (n == 1 && t->kind == TK_STRING) {
		arg->kind = ARG_STRING;
		arg->str = t->str;
		return true;
	}
	if (n == 1 && t->kind == TK_NAME) {
		if (strcmp(t->text, "None") == 0)
			arg->kind = ARG_NONE;
		else if (strcmp(t->text, "True") == 0 ||
			 strcmp(t->text, "False") == 0) {
			arg->kind = ARG_BOOL;
			arg->ival = t->text[0] == 'T';
		} else if (!lex_is_keyword(t->text)) {
			arg->kind = ARG_NAME;
			arg->str = t->text;
		} else {
			error_at(r, t->span, "expected an argument value, found '%s'",
				 t->text);
			return false;
		}
		return true;
	}
	if ((tok_is(&t[0], "[") && closing(t, n) == n - 1) || is_tuple(t, n))
		return list_items(r, arg, t, n);
	if (n == 2 && tok_is(&t[0], "*") && t[1].kind == TK_NAME && !lex_is_keyword(t[1].text)) {
		arg->kind = ARG_STAR;
		arg->str = t[1].text;
		return true;
	}
	bool neg = n == 5 && tok_is(&t[2], "-");
	if ((n == 4 || neg) && t[0].kind == TK_NAME && !lex_is_keyword(t[0].text) &&
	    tok_is(&t[1], "[") && t[n - 2].kind == TK_INT && tok_is(&t[n - 1], "]")) {
		if (t[n - 2].int_overflow || t[n - 2].uval > INT32_MAX) {
			error_at(r, t[n - 2].span, "index %s is too large", t[n - 2].text);
			return false;
		}
		arg->kind = ARG_INDEX;
		arg->str = t[0].text;
		arg->ival = neg ? -(int64_t)t[n - 2].uval : (int64_t)t[n - 2].uval;
		return true;
	}
	int call_end = n >= 5 && tok_is(&t[0], "sch") && tok_is(&t[1], ".") &&
			       t[2].kind == TK_NAME && tok_is(&t[3], "(") ? closing(t + 3, n - 3) + 3 : -1;
	bool indexed = call_end > 0 && call_end < n - 1 && tok_is(&t[call_end + 1], "[") &&
		       tok_is(&t[n - 1], "]");
	if (call_end == n - 1 || indexed) {
		/* a nested call: hoisted before this one, its result a name */
		int save = r->pos;
		r->pos = (int)(t - r->toks);
		ScriptCall inner;
		memset(&inner, 0, sizeof inner);
		inner.lhs_star = -1;
		const char *tmp = arena_printf(r->a, "_sch_%s_%d", t[2].text, ++r->ntemps);
		inner.nlhs = 1;
		inner.lhs = arena_alloc(r->a, sizeof(char *));
		inner.lhs[0] = tmp;
		bool ok = parse_call_rest(r, &inner, (Token *)t);
		r->pos = save;
		if (!ok)
			return false;
		VEC_PUSH(r->a, r->hoisted, r->nhoisted, r->caphoisted, inner);
		arg->kind = ARG_NAME;
		arg->str = tmp;
		return true;
	}
	if (tok_is(&t[0], "lambda"))
		arg->kind = ARG_LAMBDA;
	else if (is_undef_call(t, n))
		arg->kind = ARG_UNDEF;
	else
		arg->kind = ARG_EXPR;
	return true;
}

static bool parse_arg(Reader *r, ScriptArg *arg)
{
	memset(arg, 0, sizeof *arg);
	if (peek(r)->kind == TK_NAME && tok_is(peek_at(r, 1), "=")) {
		if (lex_is_keyword(peek(r)->text)) {
			error_at(r, peek(r)->span, "expected an argument name, found '%s'",
				 peek(r)->text);
			return false;
		}
		arg->keyword = next(r)->text;
		next(r);
	}
	int first = r->pos, end = value_end(r);
	if (end == first) {
		error_at(r, peek(r)->span, "expected an argument value, found %s",
			 found(r));
		return false;
	}
	const Token *t = &r->toks[first], *last = &r->toks[end - 1];
	arg->start = t->start;
	arg->end = last->start + last->len;
	arg->span = span_cover(t, last);
	r->pos = end;
	return classify(r, arg, t, end - first);
}

static bool parse_args(Reader *r, ScriptCall *c)
{
	int cap = 4;
	c->args = arena_alloc(r->a, sizeof(ScriptArg) * (size_t)cap);
	while (!r->failed && !tok_is(peek(r), ")")) {
		VEC_RESERVE(r->a, c->args, c->nargs, cap);
		ScriptArg *arg = &c->args[c->nargs];
		Span arg_start = peek(r)->span;
		if (!parse_arg(r, arg))
			return false;
		if (!arg->keyword && c->nargs > 0 && c->args[c->nargs - 1].keyword) {
			error_at(r, arg->span, "positional argument after keyword "
				 "argument");
			return false;
		}
		for (int i = 0; arg->keyword && i < c->nargs; i++)
			if (c->args[i].keyword &&
			    strcmp(c->args[i].keyword, arg->keyword) == 0) {
				error_at(r, arg_start, "argument '%s' given twice",
					 arg->keyword);
				return false;
			}
		c->nargs++;
		if (tok_is(peek(r), ","))
			next(r);
		else
			break;
	}
	return expect(r, ")", "to close the argument list");
}

/* `a, b =` before the call, if present; `_` may repeat and one name may
 * be starred (`i, *rest = ...`). */
static bool parse_lhs_names(Reader *r, ScriptCall *c, const char *close);

static bool parse_lhs(Reader *r, ScriptCall *c)
{
	Token *t = peek(r);
	if ((tok_is(t, "(") || tok_is(t, "[")) && peek_at(r, 1)->kind == TK_NAME) {
		/* `(loop,) = ...`, `[a, b] = ...` */
		int k = 1;
		while (peek_at(r, k)->kind == TK_NAME || tok_is(peek_at(r, k), ",") ||
		       tok_is(peek_at(r, k), "*"))
			k++;
		const char *close = tok_is(t, "(") ? ")" : "]";
		if (tok_is(peek_at(r, k), close) && tok_is(peek_at(r, k + 1), "=")) {
			next(r);
			return parse_lhs_names(r, c, close);
		}
		return true;
	}
	bool star = tok_is(t, "*") && peek_at(r, 1)->kind == TK_NAME;
	if (!star && (t->kind != TK_NAME ||
		      !(tok_is(peek_at(r, 1), ",") || tok_is(peek_at(r, 1), "="))))
		return true;
	return parse_lhs_names(r, c, NULL);
}

/* The names, through `=` (and `close` before it when bracketed). */
static bool parse_lhs_names(Reader *r, ScriptCall *c, const char *close)
{
	int cap = 2;
	c->lhs = arena_alloc(r->a, sizeof(char *) * (size_t)cap);
	for (;;) {
		if (tok_is(peek(r), "*")) {
			if (c->lhs_star >= 0) {
				error_at(r, peek(r)->span, "only one name on the left of '=' may be starred");
				return false;
			}
			c->lhs_star = c->nlhs;
			next(r);
		}
		Token *n = peek(r);
		if (n->kind != TK_NAME || lex_is_keyword(n->text)) {
			error_at(r, n->span, "expected a name on the left of '=', "
				 "found %s", found(r));
			return false;
		}
		VEC_RESERVE(r->a, c->lhs, c->nlhs, cap);
		for (int i = 0; i < c->nlhs && strcmp(n->text, "_") != 0; i++)
			if (strcmp(c->lhs[i], n->text) == 0) {
				error_at(r, n->span, "'%s' is named twice on the left of '='", n->text);
				return false;
			}
		c->lhs[c->nlhs++] = next(r)->text;
		if (!tok_is(peek(r), ","))
			break;
		next(r);
		c->unpack = true;
		if ((close && tok_is(peek(r), close)) || tok_is(peek(r), "="))
			break;
	}
	if (close)
		c->unpack = true;
	if (close && !expect(r, close, "to close the names on the left"))
		return false;
	return expect(r, "=", "after the names on the left");
}

/* `x = sch.get_loops(b)[k]`: the k-th result (k < 0 from the end) is x,
 * read as the unpacking `_, ..., x, *_ = ...` (`*_, x, _, ... = ...`). */
static bool select_result(Reader *r, ScriptCall *c)
{
	Token *open = next(r);
	bool neg = tok_is(peek(r), "-");
	if (neg)
		next(r);
	Token *k = peek(r);
	if (k->kind != TK_INT || k->int_overflow || k->uval > 64) {
		error_at(r, k->span, "expected a small index after '[', found %s", found(r));
		return false;
	}
	next(r);
	if (!expect(r, "]", "to close the index"))
		return false;
	if (c->nlhs != 1 || c->lhs_star >= 0) {
		error_at(r, open->span, "an indexed call result binds one name on the left");
		return false;
	}
	int idx = (int)k->uval;
	if (neg && idx == 0) {
		error_at(r, k->span, "index -0 names no result");
		return false;
	}
	const char *name = c->lhs[0];
	int n = neg ? idx + 1 : idx + 2;
	const char **lhs = arena_alloc(r->a, sizeof(char *) * (size_t)n);
	for (int i = 0; i < n; i++)
		lhs[i] = "_";
	if (neg) {
		c->lhs_star = 0;          /* *_, x, _, ... */
		lhs[1] = name;
	} else {
		lhs[idx] = name;          /* _, ..., x, *_ */
		c->lhs_star = idx + 1;
	}
	c->lhs = lhs;
	c->nlhs = n;
	return true;
}

static bool parse_call(Reader *r, ScriptCall *c)
{
	memset(c, 0, sizeof *c);
	c->lhs_star = -1;
	Token *first = peek(r);
	if (!parse_lhs(r, c))
		return false;
	return parse_call_rest(r, c, first);
}

/* `sch.method(args)` at peek; the call's span starts at first. */
static bool parse_call_rest(Reader *r, ScriptCall *c, Token *first)
{
	Token *s = peek(r);
	if (!tok_is(s, "sch") || !tok_is(peek_at(r, 1), ".")) {
		error_at(r, s->span, "expected 'sch.' call, found %s", found(r));
		return false;
	}
	next(r);
	next(r);
	Token *m = peek(r);
	if (m->kind != TK_NAME || lex_is_keyword(m->text)) {
		error_at(r, m->span, "expected a method name after 'sch.', found %s",
			 found(r));
		return false;
	}
	c->method = next(r)->text;
	if (!expect(r, "(", "after the method name") || !parse_args(r, c))
		return false;
	if (tok_is(peek(r), "[") && !select_result(r, c))
		return false;
	c->span = span_cover(first, &r->toks[r->pos - 1]);
	return true;
}

Script *script_parse(Arena *a, const Source *src, DiagList *d)
{
	TokenList tl;
	if (!lex_range(a, src, 0, (int)strlen(src->text), LEX_LINES, d, &tl))
		return NULL;
	Reader r = {a, src, d, tl.toks, tl.n, 0, false, NULL, 0, 0, 0};
	Script *sc = arena_alloc(a, sizeof *sc);
	sc->src = src;
	int cap = 8;
	sc->calls = arena_alloc(a, sizeof(ScriptCall) * (size_t)cap);
	while (!r.failed && peek(&r)->kind != TK_EOF) {
		if (peek(&r)->kind == TK_NEWLINE || tok_is(peek(&r), ";")) {
			next(&r);
			continue;
		}
		ScriptCall call;
		r.nhoisted = 0;
		if (!parse_call(&r, &call))
			break;
		for (int i = 0; i < r.nhoisted; i++)
			VEC_PUSH(a, sc->calls, sc->ncalls, cap, r.hoisted[i]);
		VEC_PUSH(a, sc->calls, sc->ncalls, cap, call);
		Token *t = peek(&r);
		if (t->kind != TK_NEWLINE && t->kind != TK_EOF && !tok_is(t, ";"))
			error_at(&r, t->span, "expected end of line or ';' after the "
				 "call, found %s", found(&r));
	}
	return r.failed ? NULL : sc;
}

const ScriptArg *script_arg(const ScriptCall *c, int position,
			    const char *keyword)
{
	int k = 0;
	for (int i = 0; i < c->nargs; i++) {
		const ScriptArg *arg = &c->args[i];
		if (arg->keyword) {
			if (keyword && strcmp(arg->keyword, keyword) == 0)
				return arg;
		} else if (position >= 0 && k++ == position) {
			return arg;
		}
	}
	return NULL;
}
