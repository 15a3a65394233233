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

/* The var-args parameter of an index map (TVM's `lambda *indices, k:`):
 * its name and the variables it stands for, spliced by `*indices` in the
 * body. */
typedef struct StarParam {
	const char *name;
	int first, n; /* l->params[first .. first + n) */
} StarParam;

/* The body of a bracketed lambda: expressions and T.axis_separator. */
static bool parse_lambda_list(Parser *p, Lambda *l, const char *close, const StarParam *star)
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
		} else if (tok_is(peek(p), "*")) {
			Token *st = next(p);
			Token *t = peek(p);
			if (!star->name || !tok_is(t, star->name)) {
				ps_error_at(p, st->span, "only the lambda's *parameter can be spliced here");
				return false;
			}
			next(p);
			for (int j = 0; j < star->n; j++) {
				l->body = grow(p->a, l->body, l->nbody, &cap, 4, sizeof(Expr *));
				l->body[l->nbody++] = ir_varref(p->a, l->params[star->first + j], t->span);
			}
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
 * param_dtypes), bound for the body. One `*name` takes the indices the
 * others leave, when the scope gives the arity (nparam_dtypes). */
static bool parse_lambda_params(Parser *p, Lambda *l, StarParam *star)
{
	const ParseScope *sc = p->scope;
	Token *names[64];
	int nn = 0, at_star = -1;
	while (!p->failed && !tok_is(peek(p), ":")) {
		Token *st = NULL;
		if (tok_is(peek(p), "*")) {
			st = next(p);
			if (at_star >= 0) {
				ps_error_at(p, st->span, "a lambda takes at most one *parameter");
				return false;
			}
		}
		Token *t = peek(p);
		if (!ps_expect_name(p, "a lambda parameter name"))
			return false;
		if (nn == 64) {
			ps_error_at(p, t->span, "more than 64 lambda parameters");
			return false;
		}
		for (int i = 0; i < nn; i++)
			if (strcmp(names[i]->text, t->text) == 0) {
				ps_error_at(p, t->span, "duplicate lambda parameter '%s'", t->text);
				return false;
			}
		if (st) {
			if (!sc || sc->nparam_dtypes == 0) {
				ps_error_at(p, st->span, "*%s needs the buffer's dimensions (an index map)", t->text);
				return false;
			}
			at_star = nn;
		}
		names[nn++] = t;
		if (!accept(p, ","))
			break;
	}
	int nstar = 0;
	if (at_star >= 0) {
		nstar = sc->nparam_dtypes - (nn - 1);
		if (nstar < 0) {
			ps_error_at(p, names[at_star]->span, "the index map names %d indices but the buffer has %d", nn - 1,
				    sc->nparam_dtypes);
			return false;
		}
	}
	int total = nn - (at_star >= 0) + nstar;
	l->params = arena_alloc(p->a, sizeof(Var *) * (size_t)(total + 1));
	for (int i = 0; i < nn; i++) {
		int count = i == at_star ? nstar : 1;
		if (i == at_star) {
			star->name = names[i]->text;
			star->first = l->nparams;
			star->n = nstar;
		}
		for (int j = 0; j < count; j++) {
			int pos = l->nparams;
			DType dt = sc && pos < sc->nparam_dtypes ? sc->param_dtypes[pos] : DT_INT32;
			const char *name = i == at_star ? arena_printf(p->a, "%s_%d", names[i]->text, j) : names[i]->text;
			Var *v = ir_var(p->a, name, dt, names[i]->span);
			l->params[l->nparams++] = v;
			if (i != at_star)
				ps_bind(p, v->name, v, NULL);
		}
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
	StarParam star = {0};
	if (!parse_lambda_params(&p, l, &star))
		return NULL;
	if (tok_is(peek(&p), "[") || (tok_is(peek(&p), "(") && ps_paren_is_tuple(&p))) {
		const char *close = tok_is(next(&p), "[") ? "]" : ")";
		l->bracketed = true;
		if (!parse_lambda_list(&p, l, close, &star))
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
