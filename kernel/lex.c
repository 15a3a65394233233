/* kernel/lex.c — tokenizer for the kernel language and schedule scripts:
 * Python layout rules (INDENT/DEDENT from leading whitespace, NEWLINE at
 * the end of a logical line, brackets and backslashes join lines, blank
 * and comment lines ignored), numbers, quoted and triple-quoted strings.
 * Stops at the first malformed token with one diagnostic. */
#include "kernel/lex.h"

#include <stdlib.h>
#include <string.h>

#define LEX_MAX_INDENT 100  /* nesting levels of indentation */
#define LEX_MAX_BRACKETS 100 /* nesting levels of ( [ { */

typedef struct Lexer {
	Arena *a;
	const Source *src;
	DiagList *d;
	LexMode mode;
	const char *s;
	int pos, end;
	int line, col;
	bool at_line_start;
	int indents[LEX_MAX_INDENT + 1];
	int alt_indents[LEX_MAX_INDENT + 1]; /* the same, a tab counted as one column */
	int nindents;
	char brackets[LEX_MAX_BRACKETS];
	Span bracket_spans[LEX_MAX_BRACKETS];
	int depth;
	Token *toks;
	int n, cap;
	bool failed;
} Lexer;

static const char *const keywords[] = {
	"and",	  "or",	  "not",   "if",     "elif",  "else",  "for",
	"in",	  "with", "def",   "class",  "pass",  "lambda", "True",
	"False",  "None", "return", "import", "from", "as",    "while",
	"break",  "continue", "is", "yield", "global", "del", NULL,
};

bool lex_is_keyword(const char *name)
{
	for (int i = 0; keywords[i]; i++)
		if (strcmp(keywords[i], name) == 0)
			return true;
	return false;
}

bool tok_is(const Token *t, const char *s)
{
	return (t->kind == TK_OP || t->kind == TK_NAME) && t->text &&
	       strcmp(t->text, s) == 0;
}

const char *tok_describe(Arena *a, const Token *t)
{
	switch (t->kind) {
	case TK_EOF: return "end of file";
	case TK_NEWLINE: return "end of line";
	case TK_INDENT: return "indent";
	case TK_DEDENT: return "dedent";
	case TK_NAME: return arena_printf(a, "'%s'", t->text);
	case TK_INT:
	case TK_FLOAT: return arena_printf(a, "number '%s'", t->text);
	case TK_STRING: return "string";
	case TK_OP: return arena_printf(a, "'%s'", t->text);
	}
	return "token";
}

static Span here(const Lexer *lx, int len)
{
	Span sp = {lx->src, lx->line, lx->col, len};
	return sp;
}

static void lex_error(Lexer *lx, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lex_error(Lexer *lx, Span sp, const char *fmt, ...)
{
	if (lx->failed)
		return;
	lx->failed = true;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(lx->d, DIAG_ERROR, sp, fmt, ap);
	va_end(ap);
}

static char peekc(const Lexer *lx, int k)
{
	return lx->pos + k < lx->end ? lx->s[lx->pos + k] : '\0';
}

static void advance(Lexer *lx)
{
	if (lx->pos >= lx->end)
		return;
	if (lx->s[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static Token *push(Lexer *lx, TokKind k, int start, Span sp)
{
	if (lx->n == lx->cap) {
		int cap = lx->cap ? lx->cap * 2 : 64;
		Token *t = arena_alloc(lx->a, sizeof(Token) * (size_t)cap);
		if (lx->n)
			memcpy(t, lx->toks, sizeof(Token) * (size_t)lx->n);
		lx->toks = t;
		lx->cap = cap;
	}
	Token *t = &lx->toks[lx->n++];
	memset(t, 0, sizeof *t);
	t->kind = k;
	t->start = start;
	t->len = sp.len;
	t->span = sp;
	return t;
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

static bool last_is_layout_break(const Lexer *lx)
{
	return lx->n == 0 || lx->toks[lx->n - 1].kind == TK_NEWLINE ||
	       lx->toks[lx->n - 1].kind == TK_INDENT ||
	       lx->toks[lx->n - 1].kind == TK_DEDENT;
}

/* Skip a blank or comment-only line starting at pos; true if it was one. */
static bool skip_blank_line(Lexer *lx)
{
	int p = lx->pos;
	while (p < lx->end && (lx->s[p] == ' ' || lx->s[p] == '\t' ||
			       lx->s[p] == '\r' || lx->s[p] == '\f'))
		p++;
	if (p < lx->end && lx->s[p] != '#' && lx->s[p] != '\n')
		return false;
	while (lx->pos < lx->end && lx->s[lx->pos] != '\n')
		advance(lx);
	advance(lx); /* the newline, if any */
	return true;
}

/* At the start of a line in LEX_FILE mode: measure the indentation and
 * emit INDENT / DEDENT tokens. */
/* Indentation as Python measures it: a tab advances to the next multiple
 * of 8. Mixing tabs and spaces so that the meaning depends on the tab
 * width (a tab read as 8 columns and as 1 disagree on the nesting) is an
 * error, as in Python 3, not a silent choice. */
static void handle_indent(Lexer *lx)
{
	int width = 0, alt = 0;
	while (lx->pos < lx->end) {
		char c = lx->s[lx->pos];
		if (c == ' ') {
			width++;
			alt++;
		} else if (c == '\t') {
			width = (width / 8 + 1) * 8;
			alt++;
		} else if (c == '\f') {
			width = alt = 0;
		} else {
			break;
		}
		advance(lx);
	}
	int top = lx->indents[lx->nindents - 1];
	Span sp = here(lx, 1);
	const char *mixed = "inconsistent use of tabs and spaces in indentation";
	if (width > top) {
		if (alt <= lx->alt_indents[lx->nindents - 1]) {
			lex_error(lx, sp, "%s", mixed);
			return;
		}
		if (lx->nindents > LEX_MAX_INDENT) {
			lex_error(lx, sp, "too many levels of indentation");
			return;
		}
		if (lx->n == 0 || lx->toks[lx->n - 1].kind != TK_NEWLINE) {
			lex_error(lx, sp, "unexpected indent");
			return;
		}
		lx->alt_indents[lx->nindents] = alt;
		lx->indents[lx->nindents++] = width;
		push(lx, TK_INDENT, lx->pos, sp);
		return;
	}
	while (width < lx->indents[lx->nindents - 1]) {
		lx->nindents--;
		push(lx, TK_DEDENT, lx->pos, sp);
	}
	if (width != lx->indents[lx->nindents - 1])
		lex_error(lx, sp,
			  "inconsistent dedent: indentation does not match "
			  "any outer level");
	else if (alt != lx->alt_indents[lx->nindents - 1])
		lex_error(lx, sp, "%s", mixed);
}

static void lex_name(Lexer *lx)
{
	int start = lx->pos;
	Span sp = here(lx, 0);
	while (lx->pos < lx->end && is_ident_char(lx->s[lx->pos]))
		advance(lx);
	sp.len = lx->pos - start;
	Token *t = push(lx, TK_NAME, start, sp);
	t->text = arena_strndup(lx->a, lx->s + start, (size_t)sp.len);
}

static void lex_number(Lexer *lx)
{
	int start = lx->pos;
	Span sp = here(lx, 0);
	bool is_float = false, hex = false;
	if (peekc(lx, 0) == '0' && (peekc(lx, 1) == 'x' || peekc(lx, 1) == 'X')) {
		hex = true;
		advance(lx);
		advance(lx);
		while (lx->pos < lx->end &&
		       (is_digit(peekc(lx, 0)) ||
			(peekc(lx, 0) >= 'a' && peekc(lx, 0) <= 'f') ||
			(peekc(lx, 0) >= 'A' && peekc(lx, 0) <= 'F')))
			advance(lx);
	} else {
		while (is_digit(peekc(lx, 0)))
			advance(lx);
		if (peekc(lx, 0) == '.' && !is_ident_start(peekc(lx, 1))) {
			is_float = true;
			advance(lx);
			while (is_digit(peekc(lx, 0)))
				advance(lx);
		}
		char e = peekc(lx, 0);
		if ((e == 'e' || e == 'E') &&
		    (is_digit(peekc(lx, 1)) ||
		     ((peekc(lx, 1) == '+' || peekc(lx, 1) == '-') &&
		      is_digit(peekc(lx, 2))))) {
			is_float = true;
			advance(lx);
			advance(lx);
			while (is_digit(peekc(lx, 0)))
				advance(lx);
		}
	}
	sp.len = lx->pos - start;
	if (is_ident_char(peekc(lx, 0)) || (hex && sp.len == 2)) {
		lex_error(lx, sp, "invalid number literal");
		return;
	}
	char *text = arena_strndup(lx->a, lx->s + start, (size_t)sp.len);
	Token *t = push(lx, is_float ? TK_FLOAT : TK_INT, start, sp);
	t->text = text;
	if (is_float) {
		t->fval = strtod(text, NULL);
		return;
	}
	uint64_t v = 0;
	int base = hex ? 16 : 10;
	for (const char *c = text + (hex ? 2 : 0); *c; c++) {
		int digit = is_digit(*c) ? *c - '0'
			    : (*c >= 'a' && *c <= 'f') ? *c - 'a' + 10
						       : *c - 'A' + 10;
		if (v > (UINT64_MAX - (uint64_t)digit) / (uint64_t)base)
			t->int_overflow = true;
		v = v * (uint64_t)base + (uint64_t)digit;
	}
	t->uval = v;
}

/* The character of an escape, or 0 for one the language does not have
 * (a NUL would cut a name short; an unknown escape is a typo). */
static char escape_char(char c)
{
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case '\\': return '\\';
	case '"': return '"';
	case '\'': return '\'';
	default: return 0;
	}
}

static void lex_string(Lexer *lx)
{
	int start = lx->pos;
	Span sp = here(lx, 1);
	char q = peekc(lx, 0);
	bool triple = peekc(lx, 1) == q && peekc(lx, 2) == q;
	int nq = triple ? 3 : 1;
	for (int i = 0; i < nq; i++)
		advance(lx);
	StrBuf b = {0};
	for (;;) {
		if (lx->pos >= lx->end || (!triple && peekc(lx, 0) == '\n')) {
			free(b.s);
			lex_error(lx, sp, "unterminated string");
			return;
		}
		char c = peekc(lx, 0);
		if (c == q && (!triple || (peekc(lx, 1) == q && peekc(lx, 2) == q))) {
			for (int i = 0; i < nq; i++)
				advance(lx);
			break;
		}
		if (c == '\\' && lx->pos + 1 < lx->end) {
			Span at = here(lx, 2);
			advance(lx);
			char e = escape_char(peekc(lx, 0));
			if (!e) {
				free(b.s);
				lex_error(lx, at, "unknown escape sequence in a string (\\n, \\t, \\r, \\\\, \\\" and \\' are known)");
				return;
			}
			sb_put(&b, &e, 1);
			advance(lx);
			continue;
		}
		if (c == '\0') {
			free(b.s);
			lex_error(lx, here(lx, 1), "a NUL character inside a string");
			return;
		}
		sb_put(&b, &c, 1);
		advance(lx);
	}
	char *s = sb_take(&b);
	if (sp.line == lx->line)
		sp.len = lx->pos - start;
	Token *t = push(lx, TK_STRING, start, sp);
	t->len = lx->pos - start;
	t->str = arena_strdup(lx->a, s);
	free(s);
}

static const char *const ops3[] = {"//=", "**=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"//", "**", "->", "+=", "-=", "*=", "/=",
				   "%=", "==", "!=", "<=", ">=", "<<", ">>",
				   ":=", NULL};
static const char ops1[] = "+-*/%<>=()[]{},:.@;~&|^";

static bool open_bracket(Lexer *lx, char c, Span sp)
{
	if (lx->depth >= LEX_MAX_BRACKETS) {
		lex_error(lx, sp, "brackets nested too deeply");
		return false;
	}
	lx->brackets[lx->depth] = c;
	lx->bracket_spans[lx->depth] = sp;
	lx->depth++;
	return true;
}

static bool close_bracket(Lexer *lx, char c, Span sp)
{
	char want = c == ')' ? '(' : c == ']' ? '[' : '{';
	if (lx->depth == 0) {
		lex_error(lx, sp, "unmatched '%c'", c);
		return false;
	}
	if (lx->brackets[lx->depth - 1] != want) {
		lex_error(lx, sp, "'%c' does not match '%c'", c,
			  lx->brackets[lx->depth - 1]);
		return false;
	}
	lx->depth--;
	return true;
}

static void lex_op(Lexer *lx)
{
	int start = lx->pos;
	int len = 0;
	for (int i = 0; ops3[i] && !len; i++)
		if (lx->pos + 3 <= lx->end && strncmp(lx->s + lx->pos, ops3[i], 3) == 0)
			len = 3;
	for (int i = 0; ops2[i] && !len; i++)
		if (lx->pos + 2 <= lx->end && strncmp(lx->s + lx->pos, ops2[i], 2) == 0)
			len = 2;
	char c = peekc(lx, 0);
	if (!len && c && strchr(ops1, c))
		len = 1;
	Span sp = here(lx, len ? len : 1);
	if (!len) {
		unsigned char uc = (unsigned char)c;
		if (uc >= 0x20 && uc < 0x7f)
			lex_error(lx, sp, "unexpected character '%c'", c);
		else
			lex_error(lx, sp, "unexpected character (byte 0x%02x)", uc);
		return;
	}
	if (len == 1 && (c == '(' || c == '[' || c == '{') && !open_bracket(lx, c, sp))
		return;
	if (len == 1 && (c == ')' || c == ']' || c == '}') && !close_bracket(lx, c, sp))
		return;
	for (int i = 0; i < len; i++)
		advance(lx);
	Token *t = push(lx, TK_OP, start, sp);
	t->text = arena_strndup(lx->a, lx->s + start, (size_t)len);
}

/* One step of the main loop: consume whitespace, a comment, a line break
 * or one token. */
static void lex_step(Lexer *lx)
{
	char c = peekc(lx, 0);
	if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
		advance(lx);
	} else if (c == '#') {
		while (lx->pos < lx->end && peekc(lx, 0) != '\n')
			advance(lx);
	} else if (c == '\\' && (peekc(lx, 1) == '\n' ||
				 (peekc(lx, 1) == '\r' && peekc(lx, 2) == '\n'))) {
		advance(lx);
		while (peekc(lx, 0) != '\n')
			advance(lx);
		advance(lx);
	} else if (c == '\n') {
		if (lx->depth == 0 && lx->mode != LEX_EXPR) {
			if (!last_is_layout_break(lx))
				push(lx, TK_NEWLINE, lx->pos, here(lx, 1));
			lx->at_line_start = true;
		}
		advance(lx);
	} else if (is_ident_start(c)) {
		/* string prefixes r"..", b"..": not part of the language */
		lex_name(lx);
	} else if (is_digit(c) || (c == '.' && is_digit(peekc(lx, 1)))) {
		lex_number(lx);
	} else if (c == '"' || c == '\'') {
		lex_string(lx);
	} else {
		lex_op(lx);
	}
}

static void lex_finish(Lexer *lx)
{
	if (lx->depth > 0) {
		lex_error(lx, lx->bracket_spans[lx->depth - 1],
			  "'%c' was never closed", lx->brackets[lx->depth - 1]);
		return;
	}
	Span sp = here(lx, 1);
	if (lx->mode != LEX_EXPR && !last_is_layout_break(lx))
		push(lx, TK_NEWLINE, lx->pos, sp);
	while (lx->nindents > 1) {
		lx->nindents--;
		push(lx, TK_DEDENT, lx->pos, sp);
	}
	push(lx, TK_EOF, lx->pos, sp);
}

/* Line and column of byte offset `off` of text. */
static void position_of(const char *text, int off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (int i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

bool lex_range(Arena *a, const Source *src, int start, int end, LexMode mode,
	       DiagList *d, TokenList *out)
{
	if (start < 0 || end > (int)strlen(src->text) || start > end) {
		static const Span nowhere;
		diag_add(d, DIAG_ERROR, nowhere, "invalid text range [%d, %d)",
			 start, end);
		return false;
	}
	Lexer lx;
	memset(&lx, 0, sizeof lx);
	lx.a = a;
	lx.src = src;
	lx.d = d;
	lx.mode = mode;
	lx.s = src->text;
	lx.pos = start;
	lx.end = end;
	lx.nindents = 1;
	lx.at_line_start = true;
	position_of(src->text, start, &lx.line, &lx.col);
	while (!lx.failed && lx.pos < lx.end) {
		if (lx.at_line_start && mode != LEX_EXPR && lx.depth == 0) {
			if (skip_blank_line(&lx))
				continue;
			lx.at_line_start = false;
			if (mode == LEX_FILE) {
				handle_indent(&lx);
				continue;
			}
		}
		lex_step(&lx);
	}
	if (!lx.failed)
		lex_finish(&lx);
	out->n = lx.n;
	out->toks = lx.toks;
	return !lx.failed;
}
