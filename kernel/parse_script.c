/* kernel/parse_script.c — kernel language inside schedule scripts
 * (rewrites/script.c, rewrites/layout.c): a lone expression, or a lambda
 * index map such as `lambda i, j: [i // 4, T.axis_separator, j]`, parsed
 * from a range of the script's text against a function's names. */
#include "kernel/parse_int.h"

#include <string.h>

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

/* `p1, p2` up to the ':': fresh variables (int32, or the scope's
 * param_dtypes), bound for the body. */
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
		const ParseScope *sc = p->scope;
		DType dt = sc && l->nparams < sc->nparam_dtypes ? sc->param_dtypes[l->nparams] : DT_INT32;
		Var *v = ir_var(p->a, t->text, dt, t->span);
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
