/* kernel/parse_cursor.c — the parser's walk over the token list: expecting
 * a token or "expected X, found Y" (the first error wins and stops the
 * parse), the span of what was parsed, and bracket matching for lookahead.
 * The one-line moves (peek, next, accept) are inline in parse_int.h. */
#include "kernel/parse_int.h"

#include <string.h>

void ps_error_at(Parser *p, Span sp, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(p->d, DIAG_ERROR, sp, fmt, ap);
	va_end(ap);
}

/* Consume operator s or report "expected 's' <what>, found X". */
bool ps_expect(Parser *p, const char *s, const char *what)
{
	if (p->failed)
		return false;
	if (accept(p, s))
		return true;
	ps_error_at(p, peek(p)->span, "expected '%s'%s%s, found %s", s,
		    what[0] ? " " : "", what, found(p));
	return false;
}

/* True if the next tokens are `T . name` (any name when name is NULL). */
bool ps_at_t_name(Parser *p, const char *name)
{
	const Token *n = peek_at(p, 2);
	return tok_is(peek(p), "T") && tok_is(peek_at(p, 1), ".") &&
	       n->kind == TK_NAME && (!name || strcmp(n->text, name) == 0);
}

const char *ps_expect_name(Parser *p, const char *what)
{
	Token *t = peek(p);
	if (t->kind != TK_NAME || lex_is_keyword(t->text)) {
		ps_error_at(p, t->span, "expected %s, found %s", what, found(p));
		return NULL;
	}
	next(p);
	return t->text;
}

bool ps_expect_newline(Parser *p, const char *what)
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
Span ps_span_from(Parser *p, const Token *first)
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

static bool is_open_bracket(const Token *t)
{
	return tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{");
}

static bool is_close_bracket(const Token *t)
{
	return tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}");
}

/* Index of the token matching the bracket at token index `at`, or -1. */
int ps_matching(Parser *p, int at)
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
bool ps_skip_bracketed(Parser *p)
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
bool ps_paren_is_tuple(Parser *p)
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
