/* rewrites/schedule/run_script.c — executing a `.sched` script on a schedule: each
 * `sch.NAME(...)` call is checked for its arguments against its row of the
 * primitive table, dispatched to its handler (rewrites/schedule/run_prims.c),
 * and committed or rejected through sched_finish. Names bound on the left
 * of '=' are handles (rewrites/schedule/handles.h): an argument naming one is
 * replaced by the loop or block name the primitives take before the call
 * runs, and the loops and blocks a call creates are bound after it. This
 * file also holds the argument helpers the handlers share (run_script_int.h). */
#include "rewrites/schedule/run_script_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

StepStatus rs_bad(Call *k, const ScriptArg *arg, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(k->d, DIAG_ERROR, arg ? arg->span : k->call->span, fmt, ap);
	va_end(ap);
	return STEP_BAD_INPUT;
}

/* A loop or buffer name: "i", "i#2", or a name bound by an earlier
 * left-hand side (io). */
const char *rs_arg_name(Call *k, int pos, const char *kw)
{
	const ScriptArg *a = script_arg(k->call, pos, kw);
	if (!a || (a->kind != ARG_STRING && a->kind != ARG_NAME))
		return NULL;
	return a->str;
}

/* The i-th name on the left, to name what the call creates: NULL for `_`,
 * past the end, or when a starred name makes positions uncertain. */
const char *rs_lhs(const Call *k, int i)
{
	const ScriptCall *c = k->call;
	if (i >= c->nlhs || c->lhs_star >= 0 || strcmp(c->lhs[i], "_") == 0)
		return NULL;
	return c->lhs[i];
}

/* The handle argument `a` of the resolved call named, or NULL. */
Value *rs_arg_value(const Call *k, const ScriptArg *a)
{
	if (!a || a < k->call->args || a >= k->call->args + k->call->nargs)
		return NULL;
	return k->argv[a - k->call->args];
}

/* "split(\"i\", factor=4)": the call as the user wrote it */
const char *rs_describe(Call *k)
{
	const ScriptCall *c = k->orig;
	StrBuf b = {0};
	sb_printf(&b, "%s(", c->method);
	for (int i = 0; i < c->nargs; i++) {
		const ScriptArg *a = &c->args[i];
		if (i)
			sb_puts(&b, ", ");
		if (a->keyword)
			sb_printf(&b, "%s=", a->keyword);
		if (a->end > a->start)
			sb_put(&b, k->sc->src->text + a->start, (size_t)(a->end - a->start));
	}
	sb_puts(&b, ")");
	char *s = sb_take(&b);
	char *r = arena_strdup(k->s->arena, s);
	free(s);
	return r;
}

StepStatus rs_finish(Call *k, RwCtx *c, RwStatus st)
{
	StepReport *r = sched_finish(k->s, c, st);
	return r->status;
}

/* Whether the names on the left can take a call's `count` results: none,
 * one name (the whole list), exactly count, or a starred name. */
bool rs_unpack_ok(const Call *k, int count)
{
	int n = k->call->nlhs;
	if (k->call->lhs_star >= 0)
		return count >= n - 1;
	return n <= 1 || n == count;
}

/* The loops of the current function that `before` did not have, as the
 * call's result: the first one (want == 1) or a list of the first want. */
static void set_new_loops(Call *k, const Func *before, int want)
{
	Var **nv;
	Func *f = sched_func(k->s);
	int n = hv_new_loops(k->s->arena, before, f, &nv);
	if (want == 1) {
		k->result = n ? hv_loop(k->env, f->name, nv[0]) : NULL;
		return;
	}
	Value **items = arena_alloc(k->s->arena, sizeof(Value *) * (size_t)(want + 1));
	int m = n < want ? n : want;
	for (int i = 0; i < m; i++)
		items[i] = hv_loop(k->env, f->name, nv[i]);
	k->result = hv_list(k->env, m, items);
}

/* The block the call created: the first new one (last: the last). */
static void set_new_block(Call *k, const Func *before, bool last)
{
	Stmt **nb;
	Func *f = sched_func(k->s);
	int n = hv_new_blocks(k->s->arena, before, f, &nb);
	k->result = n ? hv_block(k->env, f->name, nb[last ? n - 1 : 0]->u.block.name) : NULL;
}

StepStatus rs_finish_loops(Call *k, RwCtx *c, RwStatus st, int want)
{
	const Func *before = c->func;
	StepStatus r = rs_finish(k, c, st);
	if (r == STEP_COMMITTED)
		set_new_loops(k, before, want);
	return r;
}

StepStatus rs_finish_block(Call *k, RwCtx *c, RwStatus st, bool last)
{
	const Func *before = c->func;
	StepStatus r = rs_finish(k, c, st);
	if (r == STEP_COMMITTED)
		set_new_block(k, before, last);
	return r;
}

/* ---------- the arguments each primitive takes ----------
 * From the primitive's row (primitives.h): the first `npos` arguments may
 * be given by position (npos < 0: any number of positional loop names),
 * every argument but a positional-only one as a keyword. A misspelt
 * keyword (tial=), an extra argument or a parameter given twice is bad
 * input: silently ignoring it would run another schedule than the one
 * written. A word argument given as a string must be one of the row's
 * words, a name argument given as a string a name. */
static bool has_keyword(const ScriptCall *c, const char *kw)
{
	for (int i = 0; i < c->nargs; i++)
		if (c->args[i].keyword && strcmp(c->args[i].keyword, kw) == 0)
			return true;
	return false;
}

/* Whether the call is written in TVM's form of the primitive (which
 * differs from vsched's string form in its arguments): split with
 * factors=[...]; cache_read/cache_write on a block with a buffer index
 * and a scope; transform_layout on a block with ("read", K). */
static bool tvm_form(const Call *k)
{
	const ScriptCall *c = k->call;
	const char *m = c->method;
	const ScriptArg *p0 = script_arg(c, 0, NULL), *p1 = script_arg(c, 1, NULL),
			*p2 = script_arg(c, 2, NULL);
	const Value *v0 = rs_arg_value(k, p0);
	bool block0 = v0 && v0->kind == VAL_BLOCK;
	if (strcmp(m, "split") == 0)
		return has_keyword(c, "factors") || has_keyword(c, "preserve_unit_iters") ||
		       has_keyword(c, "disable_predication") || (p1 && p1->kind == ARG_LIST);
	if (strcmp(m, "cache_read") == 0 || strcmp(m, "cache_write") == 0)
		return block0 || p2 || (p1 && p1->kind == ARG_INT) || has_keyword(c, "read_buffer_index") ||
		       has_keyword(c, "write_buffer_index") || has_keyword(c, "storage_scope") ||
		       has_keyword(c, "consumer_blocks");
	if (strcmp(m, "transform_layout") == 0) {
		const ScriptArg *buf = script_arg(c, -1, "buffer");
		return block0 || (p1 && p1->kind == ARG_LIST) || (buf && buf->kind == ARG_LIST) ||
		       (p2 && p1->kind != ARG_LAMBDA) || has_keyword(c, "assume_injective_transform");
	}
	return false;
}

/* The position of argument j among the positional ones. */
static int positional_index(const ScriptCall *call, int j)
{
	int n = 0;
	for (int i = 0; i < j; i++)
		n += call->args[i].keyword == NULL;
	return n;
}

/* "loop=, factor=, tail=": the keywords a row takes */
static char *keyword_list(const PrimSpec *sig)
{
	StrBuf b = {0};
	bool first = true;
	for (int j = 0; j < PRIM_MAX_ARGS && sig->args[j].name; j++) {
		const PrimArg *pa = &sig->args[j];
		if (pa->flags & (PA_API_ONLY | PA_POSITIONAL_ONLY) || pa->kind == PK_LOOPS)
			continue;
		sb_printf(&b, "%s%s=", first ? "" : ", ", pa->name);
		first = false;
	}
	return sb_take(&b);
}

/* The row's argument a keyword names (a script keyword, not an API-only
 * or positional-only one), or -1. */
static int keyword_index(const PrimSpec *sig, const char *kw)
{
	for (int j = 0; j < PRIM_MAX_ARGS && sig->args[j].name; j++) {
		const PrimArg *pa = &sig->args[j];
		if (!(pa->flags & (PA_API_ONLY | PA_POSITIONAL_ONLY)) && pa->kind != PK_LOOPS &&
		    strcmp(pa->name, kw) == 0)
			return j;
	}
	return -1;
}

/* A string given for a name or word argument, against its row. */
static StepStatus check_string_arg(Call *k, const PrimSpec *sig, const PrimArg *pa,
				   const ScriptArg *a)
{
	if (!pa || !pa->name || a->kind != ARG_STRING)
		return STEP_COMMITTED;
	char *why = prim_check_string(sig, pa, a->str);
	if (!why)
		return STEP_COMMITTED;
	const char *msg = arena_printf(k->s->arena, "sch.%s", why);
	free(why);
	return rs_bad(k, a, "%s", msg);
}

static StepStatus check_signature(Call *k, const PrimSpec *sig)
{
	const ScriptCall *call = k->call;
	int npos = 0;
	for (int i = 0; i < call->nargs; i++) {
		const ScriptArg *a = &call->args[i];
		if (!a->keyword) {
			if (sig->npos >= 0 && npos >= sig->npos)
				return rs_bad(k, a, "%s",
					   arena_printf(k->s->arena, "sch.%s: too many arguments (it takes %d by position)",
							call->method, sig->npos));
			const PrimArg *pa = sig->npos < 0 ? &sig->args[0] : &sig->args[npos];
			if (check_string_arg(k, sig, pa, a) != STEP_COMMITTED)
				return STEP_BAD_INPUT;
			npos++;
			continue;
		}
		int at = keyword_index(sig, a->keyword);
		if (at < 0) {
			char *list = keyword_list(sig);
			bool any = list && *list;
			const char *msg = arena_printf(k->s->arena, "sch.%s: unexpected keyword argument '%s' (%s%s)",
						       call->method, a->keyword,
						       any ? "it takes " : "it takes no keyword arguments",
						       any ? list : "");
			free(list);
			return rs_bad(k, a, "%s", msg);
		}
		for (int j = 0; j < i; j++) {
			const ScriptArg *b = &call->args[j];
			if (b->keyword ? strcmp(b->keyword, a->keyword) == 0 : at < sig->npos && at == positional_index(call, j))
				return rs_bad(k, a, "%s", arena_printf(k->s->arena, "sch.%s: argument '%s' given twice",
								     call->method, a->keyword));
		}
		if (check_string_arg(k, sig, &sig->args[at], a) != STEP_COMMITTED)
			return STEP_BAD_INPUT;
	}
	return STEP_COMMITTED;
}

/* One call: its row of the primitive table (primitives.h), its arguments
 * checked against the row, then its handler. */
static StepStatus run_call(Call *k)
{
	const char *m = k->call->method;
	const PrimSpec *sig = prim_find(m, tvm_form(k));
	if (!sig)
		return rs_bad(k, NULL, "unknown schedule primitive 'sch.%s'", m);
	if (check_signature(k, sig) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	StepStatus st;
	if (rs_run_other(k, sig, &st))
		return st;
	RwCtx c;
	DiagList local;
	diag_init(&local, k->s->arena);
	sched_begin(k->s, &c, rs_describe(k), k->call->span, &local);
	st = rs_run_rewrite(k, sig, &c);
	/* rewrite diagnostics (bad names, preconditions) go to the caller */
	for (Diag *g = local.first; g; g = g->next)
		diag_add(k->d, g->level, g->span, "%s", g->message);
	return st;
}

/* ---------- handles in arguments, results on the left ---------- */

static const char *handle_kind(const Value *v)
{
	switch (v->kind) {
	case VAL_LOOP: return "loop";
	case VAL_BLOCK: return "block";
	case VAL_LIST: return "list";
	}
	return "?";
}

/* The function a handle belongs to becomes the current one (TVM's
 * handles know their function); every handle of one call must agree. */
static bool enter_func(Call *k, const ScriptArg *a, const char *name, const Value *v, const char **entered)
{
	if (*entered && strcmp(*entered, v->func) != 0) {
		rs_bad(k, a, "%s", arena_printf(k->s->arena, "%s handle '%s' is in function '%s', another argument in '%s'",
					      handle_kind(v), name, v->func, *entered));
		return false;
	}
	*entered = v->func;
	Module *m = k->s->mod;
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, v->func) == 0) {
			k->s->func_index = i;
			return true;
		}
	rs_bad(k, a, "%s", arena_printf(k->s->arena, "%s handle '%s': function '%s' is gone", handle_kind(v), name,
				      v->func));
	return false;
}

/* out: the argument `a` with loop or block handle v (named `name`) as the
 * name the primitives take. */
static bool handle_arg(Call *k, const ScriptArg *a, const char *name, Value *v, const char **entered,
		       ScriptArg *out)
{
	Arena *ar = k->s->arena;
	*out = *a;
	if (v->kind == VAL_LIST) {
		rs_bad(k, a, "%s", arena_printf(ar, "'%s' is a list of %d handles: write %s[K] or *%s", name, v->n, name,
					      name));
		return false;
	}
	if (v->gone) {
		rs_bad(k, a, "%s", arena_printf(ar, "%s handle '%s' no longer exists: %s", handle_kind(v), name, v->gone));
		return false;
	}
	if (!enter_func(k, a, name, v, entered))
		return false;
	const char *why = NULL;
	const char *ref = v->kind == VAL_LOOP ? hv_loop_ref(ar, sched_func(k->s), v->loop, &why) : v->block;
	if (!ref) {
		rs_bad(k, a, "%s", arena_printf(ar, "loop handle '%s': %s", name, why));
		return false;
	}
	out->kind = ARG_STRING;
	out->str = ref;
	return true;
}

static bool list_item(Call *k, const ScriptArg *a, Value **v)
{
	Value *l = hv_lookup(k->env, a->str);
	if (!l || l->kind != VAL_LIST) {
		rs_bad(k, a, "%s", arena_printf(k->s->arena, "'%s' is not a list of handles", a->str));
		return false;
	}
	int64_t i = a->ival < 0 ? a->ival + l->n : a->ival;
	if (i < 0 || i >= l->n) {
		rs_bad(k, a, "%s", arena_printf(k->s->arena, "index %lld is out of range: '%s' holds %d handle%s",
					      (long long)a->ival, a->str, l->n, l->n == 1 ? "" : "s"));
		return false;
	}
	*v = l->items[i];
	return true;
}

/* k->call: k->orig with handles replaced by names and *lists unpacked;
 * k->argv the handle behind each argument. */
static bool resolve_call(Call *k)
{
	Arena *a = k->s->arena;
	const ScriptCall *o = k->orig;
	int cap = o->nargs + 1;
	for (int i = 0; i < o->nargs; i++) {
		Value *l = o->args[i].kind == ARG_STAR ? hv_lookup(k->env, o->args[i].str) : NULL;
		cap += l && l->kind == VAL_LIST ? l->n : 0;
	}
	ScriptCall *c = arena_alloc(a, sizeof *c);
	*c = *o;
	c->args = arena_alloc(a, sizeof(ScriptArg) * (size_t)cap);
	c->nargs = 0;
	k->argv = arena_alloc(a, sizeof(Value *) * (size_t)cap);
	k->call = c;
	const char *entered = NULL;
	for (int i = 0; i < o->nargs; i++) {
		const ScriptArg *x = &o->args[i];
		Value *v = NULL;
		switch (x->kind) {
		case ARG_STAR: {
			Value *l = hv_lookup(k->env, x->str);
			if (!l || l->kind != VAL_LIST) {
				rs_bad(k, x, "%s", arena_printf(a, "'%s' is not a list of handles", x->str));
				return false;
			}
			for (int j = 0; j < l->n; j++) {
				if (!handle_arg(k, x, arena_printf(a, "%s[%d]", x->str, j), l->items[j], &entered,
						&c->args[c->nargs]))
					return false;
				k->argv[c->nargs++] = l->items[j];
			}
			continue;
		}
		case ARG_INDEX:
			if (!list_item(k, x, &v) ||
			    !handle_arg(k, x, arena_printf(a, "%s[%lld]", x->str, (long long)x->ival), v, &entered,
					&c->args[c->nargs]))
				return false;
			break;
		case ARG_NAME:
			v = hv_lookup(k->env, x->str);
			if (!v) {
				c->args[c->nargs] = *x; /* a loop or buffer named without quotes */
				break;
			}
			if (!handle_arg(k, x, x->str, v, &entered, &c->args[c->nargs]))
				return false;
			break;
		case ARG_LIST: {
			ScriptArg *y = &c->args[c->nargs];
			*y = *x;
			y->items = arena_alloc(a, sizeof(ScriptArg) * (size_t)(x->nitems + 1));
			for (int j = 0; j < x->nitems; j++) {
				const ScriptArg *it = &x->items[j];
				Value *iv = it->kind == ARG_NAME ? hv_lookup(k->env, it->str) : NULL;
				if (it->kind == ARG_INDEX && !list_item(k, it, &iv))
					return false;
				if (!iv)
					y->items[j] = *it;
				else if (!handle_arg(k, it, it->str, iv, &entered, &y->items[j]))
					return false;
			}
			break;
		}
		case ARG_INT: case ARG_FLOAT: case ARG_STRING: case ARG_NONE: case ARG_BOOL: case ARG_UNDEF:
		case ARG_LAMBDA: case ARG_EXPR:
			c->args[c->nargs] = *x;
			break;
		}
		k->argv[c->nargs++] = v;
	}
	return true;
}

/* Bind the names on the left to what the call returned. */
static bool bind_results(Call *k)
{
	const ScriptCall *c = k->call;
	Value *r = k->result;
	if (c->nlhs == 0 || !r)
		return true;
	if (c->nlhs == 1 && c->lhs_star < 0 && !c->unpack) {
		if (strcmp(c->lhs[0], "_") != 0)
			hv_bind(k->env, c->lhs[0], r);
		return true;
	}
	int n = r->kind == VAL_LIST ? r->n : 1;
	Value **items = r->kind == VAL_LIST ? r->items : &r;
	int fixed = c->nlhs - (c->lhs_star >= 0);
	if (c->lhs_star >= 0 ? n < fixed : n != c->nlhs) {
		rs_bad(k, NULL, "%s", arena_printf(k->s->arena, "sch.%s returned %d handle%s; %d name%s on the left of '='",
						  c->method, n, n == 1 ? "" : "s", c->nlhs, c->nlhs == 1 ? " is" : "s are"));
		return false;
	}
	int at = 0;
	for (int i = 0; i < c->nlhs; i++) {
		Value *v;
		if (i == c->lhs_star) {
			int m = n - fixed;
			v = hv_list(k->env, m, items + at);
			at += m;
		} else {
			v = items[at++];
		}
		if (strcmp(c->lhs[i], "_") != 0)
			hv_bind(k->env, c->lhs[i], v);
	}
	return true;
}

/* "it was split at line 3" */
static const char *gone_reason(const Call *k)
{
	const char *m = k->orig->method;
	int line = k->orig->span.line;
	Arena *a = k->s->arena;
	if (strcmp(m, "split") == 0)
		return arena_printf(a, "it was split at line %d", line);
	if (strcmp(m, "fuse") == 0)
		return arena_printf(a, "it was fused at line %d", line);
	return arena_printf(a, "sch.%s at line %d removed it", m, line);
}

StepStatus sched_run_script(Schedule *s, const Script *sc, DiagList *d)
{
	if (!s->handles) {
		s->handles = arena_alloc(s->arena, sizeof *s->handles);
		s->handles->arena = s->arena;
	}
	HandleEnv *env = s->handles;
	for (int i = 0; i < sc->ncalls; i++) {
		Call k = {s, sc, &sc->calls[i], &sc->calls[i], NULL, env, NULL, d};
		if (!resolve_call(&k))
			return STEP_BAD_INPUT;
		Module *before = s->mod;
		if (s->progress)
			s->progress(s->progress_ud, k.call->span.line, rs_describe(&k), 0);
		StepStatus st = run_call(&k);
		if (s->progress)
			s->progress(s->progress_ud, k.call->span.line, NULL, 1);
		if (st != STEP_COMMITTED)
			return st;
		if (s->mod != before)
			hv_update(env, before, s->mod, gone_reason(&k));
		if (!bind_results(&k))
			return STEP_BAD_INPUT;
	}
	return STEP_COMMITTED;
}
