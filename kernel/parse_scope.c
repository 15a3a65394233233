/* kernel/parse_scope.c — name resolution for the parser: the innermost
 * binding wins among the parser's scopes (loop variables, lets, parameters,
 * buffers), then, for a standalone expression, its ParseScope and the names
 * of the function it is parsed against. */
#include "kernel/parse_int.h"

#include <string.h>

void ps_bind(Parser *p, const char *name, Var *v, Buffer *b)
{
	p->binds = grow(p->a, p->binds, p->nbinds, &p->capbinds, 32,
			sizeof(Binding));
	Binding *x = &p->binds[p->nbinds++];
	x->name = name;
	x->kind = v ? BIND_VAR : BIND_BUF;
	x->var = v;
	x->buf = b;
}

/* The innermost binding of name: parser scopes, then the ParseScope of a
 * standalone expression (its vars, then the function's names). */
bool ps_lookup(Parser *p, const char *name, Var **v, Buffer **b)
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
	*b = stmt_find_alloc(f->body, name);
	return *b != NULL;
}
