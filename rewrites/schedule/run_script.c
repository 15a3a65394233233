/* rewrites/schedule/run_script.c — executing a `.sched` script on a schedule: each
 * `sch.NAME(...)` call is checked for its arguments, dispatched to its
 * primitive, and committed or rejected through sched_finish. Primitives
 * named in interfaces.md that are not implemented yet reject with "not
 * supported"; they never accept. */
#include "rewrites/schedule/schedule.h"
#include "rewrites/schedule/steps.h"

#include "rewrites/layout.h"
/* merge_adjacent_loops, fission, cache_read/write */
#include "rewrites/cache.h"
#include "rewrites/merge.h"

#include <stdlib.h>
#include <string.h>

typedef struct Call {
	Schedule *s;
	const Script *sc;
	const ScriptCall *call;
	DiagList *d;
} Call;

static StepStatus bad(Call *k, const ScriptArg *arg, const char *fmt, const char *x)
{
	diag_add(k->d, DIAG_ERROR, arg ? arg->span : k->call->span, fmt, x);
	return STEP_BAD_INPUT;
}

/* A loop or buffer name: "i", "i#2", or a name bound by an earlier
 * left-hand side (io). */
static const char *arg_name(Call *k, int pos, const char *kw)
{
	const ScriptArg *a = script_arg(k->call, pos, kw);
	if (!a || (a->kind != ARG_STRING && a->kind != ARG_NAME))
		return NULL;
	return a->str;
}

static const char *lhs(const Call *k, int i)
{
	return i < k->call->nlhs ? k->call->lhs[i] : NULL;
}

/* "split(\"i\", factor=4)": the call as the user wrote it */
static const char *describe(Call *k)
{
	const ScriptCall *c = k->call;
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

static StepStatus finish(Call *k, RwCtx *c, RwStatus st)
{
	StepReport *r = sched_finish(k->s, c, st);
	return r->status;
}

static StepStatus do_split(Call *k, RwCtx *c)
{
	const char *loop = arg_name(k, 0, "loop");
	if (!loop)
		return bad(k, NULL, "%s: expected the loop to split, e.g. sch.split(\"i\", factor=4)", "split");
	const ScriptArg *f = script_arg(k->call, 1, "factor");
	if (!f || f->kind != ARG_INT)
		return bad(k, f, "%s: factor must be an integer literal", "split");
	SplitTail tail = TAIL_GUARD;
	const ScriptArg *t = script_arg(k->call, 2, "tail");
	if (t && (t->kind != ARG_STRING || !split_tail_from_name(t->str, &tail)))
		return bad(k, t, "%s: tail must be \"guard\", \"perfect\", \"cut\" or \"cut_and_guard\"", "split");
	if (k->call->nlhs != 0 && k->call->nlhs != 2)
		return bad(k, NULL, "%s: split makes two loops: write `io, ii = sch.split(...)`", "split");
	return finish(k, c, rw_split(c, loop, f->ival, tail, lhs(k, 0), lhs(k, 1)));
}

static StepStatus do_fuse(Call *k, RwCtx *c)
{
	const char *outer = arg_name(k, 0, NULL), *inner = arg_name(k, 1, NULL);
	if (!outer || !inner || k->call->nargs != 2)
		return bad(k, NULL, "%s: expected two loops, outer first: k = sch.fuse(\"i\", \"j\")", "fuse");
	if (k->call->nlhs > 1)
		return bad(k, NULL, "%s: fuse makes one loop", "fuse");
	return finish(k, c, rw_fuse(c, outer, inner, lhs(k, 0)));
}

static StepStatus do_reorder(Call *k, RwCtx *c)
{
	int n = k->call->nargs;
	const char **names = arena_alloc(k->s->arena, sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		names[i] = arg_name(k, i, NULL);
		if (!names[i])
			return bad(k, &k->call->args[i], "%s: every argument must be a loop name", "reorder");
	}
	return finish(k, c, rw_reorder(c, n, names));
}

static StepStatus do_annotate(Call *k, RwCtx *c, RwStatus (*fn)(RwCtx *, const char *))
{
	const char *loop = arg_name(k, 0, "loop");
	if (!loop)
		return bad(k, NULL, "%s: expected a loop name", k->call->method);
	return finish(k, c, fn(c, loop));
}

static const char *kw_name(Call *k, const char *kw)
{
	const ScriptArg *a = script_arg(k->call, -1, kw);
	return a && (a->kind == ARG_STRING || a->kind == ARG_NAME) ? a->str : NULL;
}

static StepStatus do_transform_layout(Call *k, RwCtx *c)
{
	const char *what = "transform_layout";
	LayoutArgs args;
	memset(&args, 0, sizeof args);
	args.src = k->sc->src;
	args.buffer = arg_name(k, 0, "buffer");
	if (!args.buffer)
		return bad(k, NULL, "%s: expected buffer=\"NAME\"", what);
	args.block = kw_name(k, "block");
	args.func = kw_name(k, "func");
	const ScriptArg *map = script_arg(k->call, 1, "index_map");
	if (!map || map->kind != ARG_LAMBDA)
		return bad(k, map, "%s: expected index_map=lambda ...: [...]", what);
	args.map_start = map->start;
	args.map_end = map->end;
	const ScriptArg *inv = script_arg(k->call, -1, "inverse");
	if (inv && inv->kind != ARG_LAMBDA)
		return bad(k, inv, "%s: inverse must be a lambda of the physical indices", what);
	if (inv) {
		args.inv_start = inv->start;
		args.inv_end = inv->end;
	}
	const ScriptArg *pad = script_arg(k->call, 2, "pad_value");
	args.pad_kind = LAYOUT_PAD_NONE;
	if (pad) {
		args.pad_span = pad->span;
		args.pad_start = pad->start;
		args.pad_end = pad->end;
		switch (pad->kind) {
		case ARG_INT: args.pad_kind = LAYOUT_PAD_INT; args.pad_int = pad->ival; break;
		case ARG_FLOAT: args.pad_kind = LAYOUT_PAD_FLOAT; args.pad_float = pad->fval; break;
		case ARG_NONE: args.pad_kind = LAYOUT_PAD_NONE; break;
		case ARG_UNDEF: args.pad_kind = LAYOUT_PAD_UNDEF; break;
		case ARG_LAMBDA: args.pad_kind = LAYOUT_PAD_LAMBDA; break;
		case ARG_EXPR: args.pad_kind = LAYOUT_PAD_EXPR; break;
		case ARG_STRING: case ARG_BOOL: case ARG_NAME:
			return bad(k, pad, "%s: pad_value must be a number, None, T.undef() or a lambda", what);
		}
	}
	if (k->call->nlhs > 0)
		return bad(k, NULL, "%s: transform_layout returns nothing", what);
	return finish(k, c, rw_transform_layout(c, &args));
}

static StepStatus do_overcompute(Call *k, bool add_branches)
{
	OcArgs args = {0};
	args.block = kw_name(k, "block");
	args.loop = kw_name(k, "loop");
	args.add_branches = add_branches;
	const ScriptArg *strict = script_arg(k->call, -1, "strict");
	if (strict && strict->kind != ARG_BOOL)
		return bad(k, strict, "%s: strict must be True or False", k->call->method);
	args.strict = strict && strict->ival;
	if (add_branches && args.loop)
		return bad(k, script_arg(k->call, -1, "loop"), "%s: loop= is not supported; use block=",
			   k->call->method);
	for (int i = 0; i < k->call->nargs; i++) {
		const char *kw = k->call->args[i].keyword;
		if (!kw || (strcmp(kw, "block") && strcmp(kw, "loop") && strcmp(kw, "strict")))
			return bad(k, &k->call->args[i], "%s: expected block=, loop= and strict= only",
				   k->call->method);
	}
	return (StepStatus)sched_overcompute(k->s, describe(k), k->call->span, k->d, &args);
}

static StepStatus do_work_on(Call *k)
{
	const char *name = arg_name(k, 0, "func");
	if (!name)
		return bad(k, NULL, "%s: expected a function name", "work_on");
	Module *m = k->s->mod;
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, name) == 0) {
			k->s->func_index = i;
			return STEP_COMMITTED;
		}
	return bad(k, script_arg(k->call, 0, "func"), "work_on: no function '%s' in the module", name);
}

static StepStatus do_float_mode(Call *k)
{
	const char *mode = arg_name(k, 0, "mode");
	if (mode && strcmp(mode, "real") == 0)
		k->s->float_mode = FLOAT_REAL;
	else if (mode && strcmp(mode, "ieee") == 0)
		k->s->float_mode = FLOAT_IEEE;
	else
		return bad(k, NULL, "%s: expected \"real\" or \"ieee\"", "float_mode");
	return STEP_COMMITTED;
}

/* ---------- merge_adjacent_loops, fission, merge_conditionals,
 * cache_read, cache_write ---------- */

/* Only the keywords in `allowed` (NULL-terminated). */
static StepStatus check_keywords(Call *k, const char *const *allowed)
{
	for (int i = 0; i < k->call->nargs; i++) {
		const char *kw = k->call->args[i].keyword;
		if (!kw)
			continue;
		bool ok = false;
		for (int j = 0; allowed[j] && !ok; j++)
			ok = strcmp(kw, allowed[j]) == 0;
		if (!ok)
			return bad(k, &k->call->args[i], "%s: unexpected keyword argument", k->call->method);
	}
	return STEP_COMMITTED;
}

static StepStatus do_merge_adjacent_loops(Call *k)
{
	const char *m = k->call->method;
	static const char *const none[] = {NULL};
	if (check_keywords(k, none) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	if (k->call->nlhs)
		return bad(k, NULL, "%s: merge_adjacent_loops returns nothing", m);
	if (k->call->nargs == 0)
		return (StepStatus)sched_merge_all_loops(k->s, describe(k), k->call->span, k->d);
	const char *l1 = arg_name(k, 0, NULL), *l2 = arg_name(k, 1, NULL);
	if (!l1 || !l2 || k->call->nargs != 2)
		return bad(k, NULL, "%s: expected two adjacent loops, e.g. sch.merge_adjacent_loops(\"i#1\", \"i#2\"), or none to merge every adjacent pair", m);
	RwCtx c;
	DiagList local;
	diag_init(&local, k->s->arena);
	sched_begin(k->s, &c, describe(k), k->call->span, &local);
	StepStatus st = finish(k, &c, rw_merge_adjacent_loops(&c, l1, l2));
	for (Diag *g = local.first; g; g = g->next)
		diag_add(k->d, g->level, g->span, "%s", g->message);
	return st;
}

static StepStatus do_fission(Call *k, RwCtx *c)
{
	static const char *const kws[] = {"loop", "after", NULL};
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	const char *loop = arg_name(k, 0, "loop");
	const ScriptArg *after = script_arg(k->call, 1, "after");
	if (!loop || !after || after->kind != ARG_INT)
		return bad(k, after, "%s: expected a loop and after=K (the index of the last statement kept in it), e.g. sch.fission(\"i\", after=0)", "fission");
	if (k->call->nlhs)
		return bad(k, NULL, "%s: fission returns nothing", "fission");
	return finish(k, c, rw_fission(c, loop, after->ival));
}

static StepStatus do_merge_conditionals(Call *k)
{
	static const char *const kws[] = {"block", "strict", NULL};
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	for (int i = 0; i < k->call->nargs; i++)
		if (!k->call->args[i].keyword)
			return bad(k, &k->call->args[i], "%s: expected block= and strict= only",
				   k->call->method);
	const ScriptArg *strict = script_arg(k->call, -1, "strict");
	if (strict && strict->kind != ARG_BOOL)
		return bad(k, strict, "%s: strict must be True or False", k->call->method);
	if (k->call->nlhs)
		return bad(k, NULL, "%s: merge_conditionals returns nothing", k->call->method);
	return (StepStatus)sched_merge_conditionals(k->s, describe(k), k->call->span, k->d,
						     kw_name(k, "block"), strict && strict->ival);
}

static StepStatus do_cache(Call *k, RwCtx *c, bool write)
{
	static const char *const kws[] = {"block", "buffer", "scope", NULL};
	const char *m = k->call->method;
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	CacheArgs args = {0};
	args.write = write;
	args.buffer = arg_name(k, 0, "buffer");
	if (!args.buffer)
		return bad(k, NULL, "%s: expected buffer=\"NAME\"", m);
	args.block = kw_name(k, "block");
	const ScriptArg *scope = script_arg(k->call, 1, "scope");
	if (scope && scope->kind != ARG_STRING)
		return bad(k, scope, "%s: scope must be a string: \"global\", \"local\" or \"shared\"", m);
	args.scope = scope ? scope->str : NULL;
	if (k->call->nlhs > 1)
		return bad(k, NULL, "%s: makes one buffer: write `A_local = sch.%s(...)`", m);
	args.name = lhs(k, 0);
	return finish(k, c, rw_cache(c, &args));
}

/* ---------- compute_at / reverse_compute_at ----------
 * sch.compute_at(block="B", loop="xo") or sch.compute_at("B", "xo"). */
static StepStatus do_attach(Call *k, RwCtx *c,
			    RwStatus (*fn)(RwCtx *, const char *, const char *))
{
	const char *m = k->call->method;
	const char *block = arg_name(k, 0, "block"), *loop = arg_name(k, 1, "loop");
	if (!block || !loop || k->call->nargs != 2)
		return bad(k, NULL, "%s: expected a block and a loop, e.g. (block=\"B\", loop=\"xo\")", m);
	if (k->call->nlhs != 0)
		return bad(k, NULL, "%s: creates nothing to name", m);
	return finish(k, c, fn(c, block, loop));
}

/* ---------- the arguments each primitive takes ----------
 * The first `npos` names may be given by position (npos < 0: any number
 * of positional loop names, no keywords); every name may be given as a
 * keyword. A misspelt keyword (tial=), an extra argument or a parameter
 * given twice is bad input: silently ignoring it would run another
 * schedule than the one written. */
typedef struct Signature {
	const char *method;
	int npos;
	const char *names[7];
} Signature;

static const Signature signatures[] = {
	{"split", 3, {"loop", "factor", "tail"}},
	{"fuse", 2, {NULL}},
	{"reorder", -1, {NULL}},
	{"parallel", 1, {"loop"}},
	{"vectorize", 1, {"loop"}},
	{"unroll", 1, {"loop"}},
	{"compute_at", 2, {"block", "loop"}},
	{"reverse_compute_at", 2, {"block", "loop"}},
	{"transform_layout", 3, {"buffer", "index_map", "pad_value", "block", "func", "inverse"}},
	{"fission", 2, {"loop", "after"}},
	{"cache_read", 2, {"buffer", "scope", "block"}},
	{"cache_write", 2, {"buffer", "scope", "block"}},
	{"merge_adjacent_loops", 2, {NULL}},
	{"merge_conditionals", 0, {"block", "strict"}},
	{"remove_branching_through_overcompute", 0, {"block", "loop", "strict"}},
	{"remove_overcompute_through_branching", 0, {"block", "loop", "strict"}},
	{"remove_no_op", 0, {"block"}},
	{"simplify", 0, {NULL}},
	{"reduce_loop_extents", 0, {"block"}},
	{"hoist_expression", 1, {"conditionals", "block", "loop", "let_bindings"}},
	{"sequential_buffer_access", 1, {"buffer", "block"}},
	{"work_on", 1, {"func"}},
	{"float_mode", 1, {"mode"}},
};

/* The position of argument j among the positional ones. */
static int positional_index(const ScriptCall *call, int j)
{
	int n = 0;
	for (int i = 0; i < j; i++)
		n += call->args[i].keyword == NULL;
	return n;
}

static StepStatus check_signature(Call *k)
{
	const ScriptCall *call = k->call;
	const Signature *sig = NULL;
	for (size_t i = 0; i < sizeof signatures / sizeof signatures[0] && !sig; i++)
		if (strcmp(signatures[i].method, call->method) == 0)
			sig = &signatures[i];
	if (!sig)
		return STEP_COMMITTED; /* unknown primitives are reported later */
	int npos = 0;
	for (int i = 0; i < call->nargs; i++) {
		const ScriptArg *a = &call->args[i];
		if (!a->keyword) {
			if (sig->npos >= 0 && npos >= sig->npos)
				return bad(k, a, "%s",
					   arena_printf(k->s->arena, "sch.%s: too many arguments (it takes %d by position)",
							call->method, sig->npos));
			npos++;
			continue;
		}
		int at = -1;
		for (int j = 0; j < 7 && sig->names[j] && at < 0; j++)
			if (strcmp(sig->names[j], a->keyword) == 0)
				at = j;
		if (at < 0) {
			StrBuf b = {0};
			for (int j = 0; j < 7 && sig->names[j]; j++)
				sb_printf(&b, "%s%s=", j ? ", " : "", sig->names[j]);
			char *list = sb_take(&b);
			bool any = list && *list;
			const char *msg = arena_printf(k->s->arena, "sch.%s: unexpected keyword argument '%s' (%s%s)",
						       call->method, a->keyword,
						       any ? "it takes " : "it takes no keyword arguments",
						       any ? list : "");
			free(list);
			return bad(k, a, "%s", msg);
		}
		for (int j = 0; j < i; j++) {
			const ScriptArg *b = &call->args[j];
			if (b->keyword ? strcmp(b->keyword, a->keyword) == 0 : at < sig->npos && at == positional_index(call, j))
				return bad(k, a, "%s", arena_printf(k->s->arena, "sch.%s: argument '%s' given twice",
								     call->method, a->keyword));
		}
	}
	return STEP_COMMITTED;
}

static StepStatus run_call(Call *k)
{
	const char *m = k->call->method;
	if (check_signature(k) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	if (strcmp(m, "work_on") == 0)
		return do_work_on(k);
	if (strcmp(m, "float_mode") == 0)
		return do_float_mode(k);
	if (strcmp(m, "sequential_buffer_access") == 0) {
		const char *buffer = arg_name(k, 0, "buffer");
		if (!buffer)
			return bad(k, NULL, "%s: expected buffer=\"NAME\"", m);
		return (StepStatus)sched_sequential_buffer_access(k->s, describe(k), k->call->span, k->d,
								  kw_name(k, "block"), buffer);
	}
	if (strcmp(m, "hoist_expression") == 0) {
		HoistArgs args = {0};
		args.block = kw_name(k, "block");
		args.loop = kw_name(k, "loop");
		const char *conds = arg_name(k, 0, "conditionals");
		const char *lets = kw_name(k, "let_bindings");
		if (lets && strcmp(lets, "none") != 0)
			return bad(k, script_arg(k->call, -1, "let_bindings"),
				   "%s: only let_bindings=\"none\" is supported", m);
		if (!conds)
			conds = "if_else_stmt|boolean_expression";
		for (const char *p = conds; *p;) {
			const char *bar = strchr(p, '|');
			size_t n = bar ? (size_t)(bar - p) : strlen(p);
			if (n == 12 && !strncmp(p, "if_else_stmt", n))
				args.if_else_stmt = true;
			else if (n == 18 && !strncmp(p, "boolean_expression", n))
				args.boolean_expression = true;
			else if (!(n == 4 && !strncmp(p, "none", n)))
				return bad(k, NULL, "%s: conditionals must be \"none\", \"if_else_stmt\" or \"boolean_expression\" (joined with |)", m);
			p += n + (bar != NULL);
		}
		return (StepStatus)sched_hoist_expression(k->s, describe(k), k->call->span, k->d, &args);
	}
	if (strcmp(m, "reduce_loop_extents") == 0)
		return (StepStatus)sched_reduce_loop_extents(k->s, describe(k), k->call->span, k->d,
							     kw_name(k, "block"));
	if (strcmp(m, "simplify") == 0) {
		if (k->call->nargs)
			return bad(k, &k->call->args[0], "%s: takes no arguments", m);
		return (StepStatus)sched_simplify(k->s, describe(k), k->call->span, k->d, true, true);
	}
	if (strcmp(m, "remove_branching_through_overcompute") == 0)
		return do_overcompute(k, false);
	if (strcmp(m, "remove_overcompute_through_branching") == 0)
		return do_overcompute(k, true);
	if (strcmp(m, "remove_no_op") == 0) {
		OcArgs args = {0};
		args.block = kw_name(k, "block");
		args.remove_stores = true;
		for (int i = 0; i < k->call->nargs; i++)
			if (!k->call->args[i].keyword || strcmp(k->call->args[i].keyword, "block"))
				return bad(k, &k->call->args[i], "%s: expected block= only", m);
		return (StepStatus)sched_overcompute(k->s, describe(k), k->call->span, k->d, &args);
	}
	if (strcmp(m, "merge_adjacent_loops") == 0)
		return do_merge_adjacent_loops(k);
	if (strcmp(m, "merge_conditionals") == 0)
		return do_merge_conditionals(k);
	RwCtx c;
	DiagList local;
	diag_init(&local, k->s->arena);
	sched_begin(k->s, &c, describe(k), k->call->span, &local);
	StepStatus st;
	if (strcmp(m, "split") == 0)
		st = do_split(k, &c);
	else if (strcmp(m, "fuse") == 0)
		st = do_fuse(k, &c);
	else if (strcmp(m, "reorder") == 0)
		st = do_reorder(k, &c);
	else if (strcmp(m, "parallel") == 0)
		st = do_annotate(k, &c, rw_parallel);
	else if (strcmp(m, "vectorize") == 0)
		st = do_annotate(k, &c, rw_vectorize);
	else if (strcmp(m, "unroll") == 0)
		st = do_annotate(k, &c, rw_unroll);
	else if (strcmp(m, "compute_at") == 0)
		st = do_attach(k, &c, rw_compute_at);
	else if (strcmp(m, "reverse_compute_at") == 0)
		st = do_attach(k, &c, rw_reverse_compute_at);
	else if (strcmp(m, "transform_layout") == 0)
		st = do_transform_layout(k, &c);
	else if (strcmp(m, "fission") == 0)
		st = do_fission(k, &c);
	else if (strcmp(m, "cache_read") == 0)
		st = do_cache(k, &c, false);
	else if (strcmp(m, "cache_write") == 0)
		st = do_cache(k, &c, true);
	else
		return bad(k, NULL, "unknown schedule primitive 'sch.%s'", m);
	/* rewrite diagnostics (bad names, preconditions) go to the caller */
	for (Diag *g = local.first; g; g = g->next)
		diag_add(k->d, g->level, g->span, "%s", g->message);
	return st;
}

StepStatus sched_run_script(Schedule *s, const Script *sc, DiagList *d)
{
	for (int i = 0; i < sc->ncalls; i++) {
		Call k = {s, sc, &sc->calls[i], d};
		StepStatus st = run_call(&k);
		if (st != STEP_COMMITTED)
			return st;
	}
	return STEP_COMMITTED;
}
