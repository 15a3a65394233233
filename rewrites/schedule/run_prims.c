/* rewrites/schedule/run_prims.c — the handler of each schedule primitive a
 * script calls: reads the call's arguments (strings, TVM-style lists and
 * lambdas, handles already resolved to names), calls the rw_* rewrite or the
 * compound step, and binds what it created. Primitives named in
 * interfaces.md that are not implemented yet reject with "not supported";
 * they never accept. The dispatch on a row's id is at the end. */
#include "rewrites/schedule/run_script_int.h"

#include "rewrites/layout.h"
/* merge_adjacent_loops, fission, cache_read/write */
#include "rewrites/cache.h"
#include "rewrites/reindex.h"
#include "rewrites/merge.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static StepStatus do_split(Call *k, RwCtx *c)
{
	const char *loop = rs_arg_name(k, 0, "loop");
	if (!loop)
		return rs_bad(k, NULL, "%s: expected the loop to split, e.g. sch.split(\"i\", factor=4)", "split");
	const ScriptArg *f = script_arg(k->call, 1, "factor");
	if (!f || f->kind != ARG_INT)
		return rs_bad(k, f, "%s: factor must be an integer literal", "split");
	SplitTail tail = TAIL_GUARD;
	const ScriptArg *t = script_arg(k->call, 2, "tail");
	if (t && (t->kind != ARG_STRING || !split_tail_from_name(t->str, &tail)))
		return rs_bad(k, t, "%s: tail must be \"guard\", \"perfect\", \"cut\" or \"cut_and_guard\"", "split");
	/* io, ii, it = sch.split(..., tail="cut"): the third name is the
	 * tail loop's (issue 14: tails that can be scheduled on their own) */
	int want = 2;
	if (k->call->nlhs == 3 && k->call->lhs_star < 0) {
		StmtCtx sc;
		RwStatus st = rw_find_loop(c, loop, &sc);
		if (st != RW_OK)
			return rs_finish(k, c, st);
		const char *no_tail = rw_split_no_tail(k->s->arena, sc.stmt, f->ival, tail);
		if (no_tail)
			return rs_bad(k, t && tail != TAIL_CUT && tail != TAIL_CUT_AND_GUARD ? t : f,
				      "%s; write `io, ii = sch.split(...)`", no_tail);
		want = 3;
	} else if (!rs_unpack_ok(k, 2)) {
		return rs_bad(k, NULL, "%s: split makes two loops, three with a cut tail: write `io, ii = sch.split(...)` or `io, ii, it = sch.split(..., tail=\"cut\")`", "split");
	}
	return rs_finish_loops(k, c, rw_split_tail(c, loop, f->ival, tail, rs_lhs(k, 0), rs_lhs(k, 1), rs_lhs(k, 2)), want);
}

static StepStatus do_fuse(Call *k, RwCtx *c)
{
	const char *outer = rs_arg_name(k, 0, NULL), *inner = rs_arg_name(k, 1, NULL);
	const ScriptArg *unit = script_arg(k->call, -1, "preserve_unit_iters");
	if (unit && unit->kind != ARG_BOOL)
		return rs_bad(k, unit, "%s: preserve_unit_iters must be True or False", "fuse");
	if (!outer || !inner || script_arg(k->call, 2, NULL))
		return rs_bad(k, NULL, "%s: expected two loops, outer first: k = sch.fuse(\"i\", \"j\")", "fuse");
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: fuse makes one loop", "fuse");
	return rs_finish_loops(k, c, rw_fuse(c, outer, inner, rs_lhs(k, 0)), 1);
}

static StepStatus do_reorder(Call *k, RwCtx *c)
{
	int n = k->call->nargs;
	const char **names = arena_alloc(k->s->arena, sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		names[i] = rs_arg_name(k, i, NULL);
		if (!names[i])
			return rs_bad(k, &k->call->args[i], "%s: every argument must be a loop name", "reorder");
	}
	return rs_finish(k, c, rw_reorder(c, n, names));
}

static StepStatus do_annotate(Call *k, RwCtx *c, RwStatus (*fn)(RwCtx *, const char *))
{
	const char *loop = rs_arg_name(k, 0, "loop");
	if (!loop)
		return rs_bad(k, NULL, "%s: expected a loop name", k->call->method);
	return rs_finish(k, c, fn(c, loop));
}

static const char *kw_name(Call *k, const char *kw)
{
	const ScriptArg *a = script_arg(k->call, -1, kw);
	return a && (a->kind == ARG_STRING || a->kind == ARG_NAME) ? a->str : NULL;
}

/* index_map= (the lambda at positional index map_pos) and inverse= of
 * transform_layout, in both the string and TVM forms; false after rs_bad(). */
static bool read_maps(Call *k, int map_pos, LayoutArgs *args, const char *what)
{
	const ScriptArg *map = script_arg(k->call, map_pos, "index_map");
	if (!map || map->kind != ARG_LAMBDA) {
		rs_bad(k, map, "%s: expected index_map=lambda ...: [...]", what);
		return false;
	}
	args->map_start = map->start;
	args->map_end = map->end;
	const ScriptArg *inv = script_arg(k->call, -1, "inverse");
	if (inv && inv->kind != ARG_LAMBDA) {
		rs_bad(k, inv, "%s: inverse must be a lambda of the physical indices", what);
		return false;
	}
	if (inv) {
		args->inv_start = inv->start;
		args->inv_end = inv->end;
	}
	return true;
}

static StepStatus do_transform_layout(Call *k, RwCtx *c)
{
	const char *what = "transform_layout";
	LayoutArgs args;
	memset(&args, 0, sizeof args);
	args.src = k->sc->src;
	args.buffer = rs_arg_name(k, 0, "buffer");
	if (!args.buffer)
		return rs_bad(k, NULL, "%s: expected buffer=\"NAME\"", what);
	args.block = kw_name(k, "block");
	args.func = kw_name(k, "func");
	if (!read_maps(k, 1, &args, what))
		return STEP_BAD_INPUT;
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
		case ARG_STRING: case ARG_BOOL: case ARG_NAME: case ARG_LIST: case ARG_INDEX: case ARG_STAR:
			return rs_bad(k, pad, "%s: pad_value must be a number, None, T.undef() or a lambda", what);
		}
	}
	if (k->call->nlhs > 0)
		return rs_bad(k, NULL, "%s: transform_layout returns nothing", what);
	return rs_finish(k, c, rw_transform_layout(c, &args));
}

static StepStatus do_overcompute(Call *k, bool add_branches)
{
	OcArgs args = {0};
	args.block = kw_name(k, "block");
	args.loop = kw_name(k, "loop");
	args.add_branches = add_branches;
	const ScriptArg *strict = script_arg(k->call, -1, "strict");
	if (strict && strict->kind != ARG_BOOL)
		return rs_bad(k, strict, "%s: strict must be True or False", k->call->method);
	args.strict = strict && strict->ival;
	if (add_branches && args.loop)
		return rs_bad(k, script_arg(k->call, -1, "loop"), "%s: loop= is not supported; use block=",
			   k->call->method);
	for (int i = 0; i < k->call->nargs; i++) {
		const char *kw = k->call->args[i].keyword;
		if (!kw || (strcmp(kw, "block") && strcmp(kw, "loop") && strcmp(kw, "strict")))
			return rs_bad(k, &k->call->args[i], "%s: expected block=, loop= and strict= only",
				   k->call->method);
	}
	return (StepStatus)sched_overcompute(k->s, rs_describe(k), k->call->span, k->d, &args);
}

static StepStatus do_work_on(Call *k)
{
	const char *name = rs_arg_name(k, 0, "func");
	if (!name)
		return rs_bad(k, NULL, "%s: expected a function name", "work_on");
	Module *m = k->s->mod;
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, name) == 0) {
			k->s->func_index = i;
			return STEP_COMMITTED;
		}
	return rs_bad(k, script_arg(k->call, 0, "func"), "work_on: no function '%s' in the module", name);
}

static StepStatus do_float_mode(Call *k)
{
	const char *mode = rs_arg_name(k, 0, "mode");
	if (mode && strcmp(mode, "real") == 0)
		k->s->float_mode = FLOAT_REAL;
	else if (mode && strcmp(mode, "ieee") == 0)
		k->s->float_mode = FLOAT_IEEE;
	else
		return rs_bad(k, NULL, "%s: expected \"real\" or \"ieee\"", "float_mode");
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
			return rs_bad(k, &k->call->args[i], "%s: unexpected keyword argument", k->call->method);
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
		return rs_bad(k, NULL, "%s: merge_adjacent_loops returns nothing", m);
	if (k->call->nargs == 0)
		return (StepStatus)sched_merge_all_loops(k->s, rs_describe(k), k->call->span, k->d);
	const char *l1 = rs_arg_name(k, 0, NULL), *l2 = rs_arg_name(k, 1, NULL);
	if (!l1 || !l2 || k->call->nargs != 2)
		return rs_bad(k, NULL, "%s: expected two adjacent loops, e.g. sch.merge_adjacent_loops(\"i#1\", \"i#2\"), or none to merge every adjacent pair", m);
	RwCtx c;
	DiagList local;
	diag_init(&local, k->s->arena);
	sched_begin(k->s, &c, rs_describe(k), k->call->span, &local);
	StepStatus st = rs_finish(k, &c, rw_merge_adjacent_loops(&c, l1, l2));
	for (Diag *g = local.first; g; g = g->next)
		diag_add(k->d, g->level, g->span, "%s", g->message);
	return st;
}

/* sch.fission(outer, before=L) (step_fission.c): Exo's fission with
 * lifts; the call returns the second nest's loops. With a cut tail (`jo,
 * ji, jt = sch.split(..., tail="cut")`, then `sch.fission(i, before=jt)`)
 * the main part and the tail become separate nests that reorder, split,
 * vectorize and unroll each on its own (issue 14, Exo's edge kernels). */
static StepStatus do_fission_before(Call *k)
{
	static const char *const kws[] = {"loop", "after", "before", NULL};
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	const char *outer = rs_arg_name(k, 0, "loop"), *before = rs_arg_name(k, -1, "before");
	if (!outer || script_arg(k->call, 1, "after"))
		return rs_bad(k, NULL, "%s: expected a loop and before=L (a loop inside it), e.g. sch.fission(\"i\", before=jt), without after=", "fission");
	Var **vars = NULL;
	int n = 0;
	StepStatus st = (StepStatus)sched_fission_before(k->s, rs_describe(k), k->call->span, k->d,
							 outer, before, &vars, &n);
	if (st != STEP_COMMITTED)
		return st;
	const char *func = sched_func(k->s)->name;
	Value **items = arena_alloc(k->s->arena, sizeof(Value *) * (size_t)(n + 1));
	for (int j = 0; j < n; j++)
		items[j] = hv_loop(k->env, func, vars[j]);
	k->result = hv_list(k->env, n, items);
	return st;
}

static StepStatus do_fission(Call *k, RwCtx *c)
{
	static const char *const kws[] = {"loop", "after", "before", NULL};
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	const char *loop = rs_arg_name(k, 0, "loop");
	if (script_arg(k->call, -1, "before"))
		return rs_bad(k, script_arg(k->call, -1, "before"), "%s: before= must name a loop", "fission");
	const ScriptArg *after = script_arg(k->call, 1, "after");
	if (!loop || !after || after->kind != ARG_INT)
		return rs_bad(k, after, "%s: expected a loop and after=K (the index of the last statement kept in it), e.g. sch.fission(\"i\", after=0)", "fission");
	if (k->call->nlhs)
		return rs_bad(k, NULL, "%s: fission returns nothing", "fission");
	return rs_finish(k, c, rw_fission(c, loop, after->ival));
}

/* sch.simplify(**TVM's tir.Simplify options): with no option, all that
 * vsched proves; with any, the others take TVM's default (False). */
static StepStatus do_simplify(Call *k)
{
	static const char *const kws[] = {"transitively_prove_inequalities", "convert_boolean_to_and_of_ors",
					  "apply_constraints_to_boolean_branches",
					  "propagate_knowns_to_prove_conditional",
					  "propagate_knowns_to_simplify_expressions", NULL};
	const char *m = k->call->method;
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	bool val[5] = {true, false, true, true, true};
	for (int i = 0; i < k->call->nargs; i++) {
		const ScriptArg *arg = &k->call->args[i];
		if (!arg->keyword)
			return rs_bad(k, arg, "%s: takes TVM's tir.Simplify options as keywords only", m);
		if (arg->kind != ARG_BOOL)
			return rs_bad(k, arg, "%s: %s must be True or False", m, arg->keyword);
	}
	if (k->call->nargs)
		for (int j = 0; j < 5; j++) {
			const ScriptArg *arg = script_arg(k->call, -1, kws[j]);
			val[j] = arg && arg->ival;
		}
	SimplifyOptions o = {0};
	o.transitive = val[0];
	o.and_of_ors = val[1];
	o.branch_constraints = val[2];
	o.knowns_conditions = val[3] || val[4];
	o.knowns_expressions = val[4];
	return (StepStatus)sched_simplify_with(k->s, rs_describe(k), k->call->span, k->d, &o);
}

static StepStatus do_merge_conditionals(Call *k)
{
	static const char *const kws[] = {"block", "strict", NULL};
	if (check_keywords(k, kws) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	for (int i = 0; i < k->call->nargs; i++)
		if (!k->call->args[i].keyword)
			return rs_bad(k, &k->call->args[i], "%s: expected block= and strict= only",
				   k->call->method);
	const ScriptArg *strict = script_arg(k->call, -1, "strict");
	if (strict && strict->kind != ARG_BOOL)
		return rs_bad(k, strict, "%s: strict must be True or False", k->call->method);
	if (k->call->nlhs)
		return rs_bad(k, NULL, "%s: merge_conditionals returns nothing", k->call->method);
	return (StepStatus)sched_merge_conditionals(k->s, rs_describe(k), k->call->span, k->d,
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
	args.buffer = rs_arg_name(k, 0, "buffer");
	if (!args.buffer)
		return rs_bad(k, NULL, "%s: expected buffer=\"NAME\"", m);
	args.block = kw_name(k, "block");
	const ScriptArg *scope = script_arg(k->call, 1, "scope");
	if (scope && scope->kind != ARG_STRING)
		return rs_bad(k, scope, "%s: scope must be a string: \"global\", \"local\" or \"shared\"", m);
	args.scope = scope ? scope->str : NULL;
	if (k->call->nlhs > 1)
		return rs_bad(k, NULL, "%s: makes one buffer: write `A_local = sch.%s(...)`", m, m);
	args.name = rs_lhs(k, 0);
	return rs_finish_block(k, c, rw_cache(c, &args), write);
}

/* ---------- compute_at / reverse_compute_at ----------
 * sch.compute_at(block="B", loop="xo") or sch.compute_at("B", "xo"). */
static StepStatus do_attach(Call *k, RwCtx *c,
			    RwStatus (*fn)(RwCtx *, const char *, const char *))
{
	const char *m = k->call->method;
	const char *block = rs_arg_name(k, 0, "block"), *loop = rs_arg_name(k, 1, "loop");
	if (!block || !loop)
		return rs_bad(k, NULL, "%s: expected a block and a loop, e.g. (block=\"B\", loop=\"xo\")", m);
	if (k->call->nlhs != 0)
		return rs_bad(k, NULL, "%s: creates nothing to name", m);
	/* preserve_unit_loops only decides whether TVM keeps loops of extent
	 * 1 around the moved block: the same computation either way */
	const ScriptArg *unit = script_arg(k->call, 2, "preserve_unit_loops");
	if (unit && unit->kind != ARG_BOOL)
		return rs_bad(k, unit, "%s: preserve_unit_loops must be True or False", m);
	/* the block goes to the start of the loop's body (compute_at) or its
	 * end (reverse_compute_at): TVM's -1 and -2 where the body holds only
	 * the other block; another insertion point is not supported */
	const ScriptArg *index = script_arg(k->call, 3, "index");
	if (index && index->kind != ARG_INT)
		return rs_bad(k, index, "%s: index must be an integer", m);
	if (index && index->ival >= 0 && index->ival <= INT_MAX && fn == rw_reverse_compute_at)
		return rs_finish(k, c, rw_reverse_compute_at_index(c, block, loop, (int)index->ival));
	if (index && index->ival != -1 && index->ival != -2)
		return rs_finish(k, c, rw_fail(c, RW_UNSUPPORTED, index->span,
					    "%s: index=%lld: only -1 and -2 (the first or last possible insertion point)%s",
					    m, (long long)index->ival,
					    fn == rw_reverse_compute_at ? ", or a statement of the loop's body" : ""));
	return rs_finish(k, c, fn(c, block, loop));
}

/* sch.add_unit_loop(block_or_loop): a handle, or a name (a block's
 * first); returns the new loop. */
static StepStatus do_add_unit_loop(Call *k, RwCtx *c)
{
	const ScriptArg *arg = script_arg(k->call, 0, "block_or_loop");
	const char *name = rs_arg_name(k, 0, "block_or_loop");
	if (!name)
		return rs_bad(k, arg, "%s: expected a block or a loop", "add_unit_loop");
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: add_unit_loop makes one loop", "add_unit_loop");
	const Value *v = rs_arg_value(k, arg);
	bool is_block = v ? v->kind == VAL_BLOCK : rw_find_block(c->func, name) != NULL;
	return rs_finish_loops(k, c, rw_add_unit_loop(c, name, is_block, rs_lhs(k, 0)), 1);
}

/* sch.lift_alloc(buffer="X", n_lifts=1) (Exo's lift_alloc) */
static StepStatus do_lift_alloc(Call *k, RwCtx *c)
{
	const char *m = "lift_alloc";
	const char *buffer = rs_arg_name(k, 0, "buffer");
	if (!buffer)
		return rs_bad(k, NULL, "%s: expected a buffer, e.g. (buffer=\"tmp\", n_lifts=2)", m);
	const ScriptArg *n = script_arg(k->call, 1, "n_lifts");
	if (n && (n->kind != ARG_INT || n->ival < 1 || n->ival > AN_MAX_DEPTH))
		return rs_bad(k, n, "%s: n_lifts must be an integer from 1 to %d", m, AN_MAX_DEPTH);
	if (k->call->nlhs != 0)
		return rs_bad(k, NULL, "%s: creates nothing to name", m);
	return rs_finish(k, c, rw_lift_alloc(c, buffer, n ? (int)n->ival : 1));
}

/* ---------- TVM-style split and fuse ---------- */

static bool mul_fits(int64_t x, int64_t y, int64_t *out)
{
	return !__builtin_mul_overflow(x, y, out);
}

static int64_t ceil_div(int64_t x, int64_t y) { return x <= 0 ? 0 : x / y + (x % y != 0); }

/* sch.split(loop, factors=[...]) with two or more factors, at most one
 * None (inferred). The loop becomes nested loops of the factors' extents
 * by a sequence of two-way splits: the first splits off the outermost
 * factor (the product of the others is its inner extent; with tail=guard
 * when that does not divide the extent), each next one splits its inner
 * loop exactly. The factors must cover the extent: checked here for a
 * constant extent, proven (split.factors_cover) for a symbolic one. */
static StepStatus do_split_factors(Call *k, RwCtx *c)
{
	Arena *a = k->s->arena;
	const char *loop = rs_arg_name(k, 0, "loop");
	if (!loop)
		return rs_bad(k, NULL, "%s: expected the loop to split, e.g. io, ii = sch.split(i, factors=[None, 8])", "split");
	const ScriptArg *fa = script_arg(k->call, 1, "factors");
	if (!fa || fa->kind != ARG_LIST || fa->nitems < 2)
		return rs_bad(k, fa, "%s: factors must be a list of two or more integers, at most one of them None, e.g. factors=[None, 8]", "split");
	int n = fa->nitems, none = -1;
	int64_t *f = arena_alloc(a, sizeof(int64_t) * (size_t)n);
	for (int i = 0; i < n; i++) {
		const ScriptArg *it = &fa->items[i];
		if (it->kind == ARG_NONE && none >= 0)
			return rs_bad(k, it, "%s: at most one factor may be None", "split");
		if (it->kind == ARG_NONE)
			none = i;
		else if (it->kind == ARG_INT && it->ival >= 1)
			f[i] = it->ival;
		else
			return rs_bad(k, it, "%s: a factor must be a positive integer literal or None", "split");
	}
	for (int i = 2; i < 4; i++) {
		static const char *const flags[] = {"", "", "preserve_unit_iters", "disable_predication"};
		const ScriptArg *x = script_arg(k->call, i, flags[i]);
		if (x && x->kind != ARG_BOOL)
			return rs_bad(k, x, "split: %s must be True or False", flags[i]);
	}
	const ScriptArg *nopred = script_arg(k->call, 3, "disable_predication");
	SplitTail tail = nopred && nopred->ival ? TAIL_PERFECT : TAIL_GUARD;
	const ScriptArg *t = script_arg(k->call, -1, "tail");
	if (t && (t->kind != ARG_STRING || !split_tail_from_name(t->str, &tail)))
		return rs_bad(k, t, "%s: tail must be \"guard\", \"perfect\", \"cut\" or \"cut_and_guard\"", "split");
	if (t && nopred && nopred->ival && tail != TAIL_PERFECT)
		return rs_bad(k, t, "%s: disable_predication=True asks for tail=\"perfect\"", "split");
	if (!rs_unpack_ok(k, n))
		return rs_bad(k, NULL, "%s", arena_printf(a, "split: makes %d loops, but %d names are on the left",
						       n, k->call->nlhs));
	StmtCtx sc;
	RwStatus st = rw_find_loop(c, loop, &sc);
	if (st != RW_OK)
		return rs_finish(k, c, st);
	Var *lv = sc.stmt->u.loop.var;
	Expr *extent = sc.stmt->u.loop.extent;
	DType dt = lv->dtype;
	int64_t ev;
	bool nconst = an_const_int(extent, &ev);
	const char *text = arena_strndup(a, k->sc->src->text + fa->start, (size_t)(fa->end - fa->start));
	int64_t given = 1;
	for (int i = 0; i < n; i++)
		if (i != none && !mul_fits(given, f[i], &given))
			return rs_bad(k, fa, "%s: the product of the factors does not fit in int64", "split");
	if (none > 0) {
		/* [f, None] on a symbolic extent: f tiles of a symbolic size */
		if (!nconst && n == 2 && tail != TAIL_GUARD)
			return rs_finish(k, c, rw_fail(c, RW_UNSUPPORTED, fa->items[none].span,
						    "split: factors=[%lld, None] on the symbolic extent of loop '%s' keeps its guard (tail \"guard\" only)",
						    (long long)f[0], lv->name));
		if (!nconst && n == 2)
			return rs_finish_loops(k, c, rw_split_outer(c, loop, f[0], rs_lhs(k, 0), rs_lhs(k, 1)), 2);
		if (!nconst)
			return rs_finish(k, c, rw_fail(c, RW_UNSUPPORTED, fa->items[none].span,
						    "split: a None factor after the first of three or more needs a constant extent; loop '%s' has a symbolic one (write None first)",
						    lv->name));
		f[none] = ev <= given ? 1 : ceil_div(ev, given);
	}
	/* q[j]: the inner extent of the j-th two-way split */
	int64_t *q = arena_alloc(a, sizeof(int64_t) * (size_t)n);
	q[n - 2] = f[n - 1];
	for (int j = n - 3; j >= 0; j--)
		if (!mul_fits(q[j + 1], f[j + 1], &q[j]))
			return rs_bad(k, fa, "%s: the product of the factors does not fit in int64", "split");
	Expr *cover = NULL;
	const char *note = NULL;
	int64_t total = 0;
	bool total_fits = none == 0 || mul_fits(q[0], f[0], &total);
	if (none != 0 && nconst) {
		if (total_fits && total < ev)
			return rs_finish(k, c, rw_fail(c, RW_PRECONDITION, fa->span,
						    "split: the factors %s cover %lld iterations, fewer than the extent %lld of loop '%s'",
						    text, (long long)total, (long long)ev, lv->name));
		if (ceil_div(ev, q[0]) < f[0])
			note = arena_printf(a, "the outer loop runs %lld times (the extent %lld over %lld, rounded up), not %lld: the iterations past the extent would do nothing",
					    (long long)ceil_div(ev, q[0]), (long long)ev, (long long)q[0], (long long)f[0]);
	} else if (none != 0 && total_fits && total <= an_dtype_max(dt)) {
		cover = ir_bin(a, OP_LE, extent, ir_int(a, total, dt, (Span){0}), (Span){0});
	}
	const char *cover_text = arena_printf(a, "the factors %s cover the extent of loop %s (at most %lld)",
					      text, lv->name, (long long)total);
	if (n == 2) {
		st = rw_split(c, loop, q[0], tail, rs_lhs(k, 0), rs_lhs(k, 1));
		if (st == RW_OK && cover) {
			rw_obligation_at(c, &c->obs, &sc, "split.factors_cover", cover_text, cover);
			if (c->fallback)
				rw_obligation_at(c, &c->fallback_obs, &sc, "split.factors_cover", cover_text, cover);
		}
		if (st == RW_OK && note && !c->note)
			c->note = note;
		return rs_finish_loops(k, c, st, 2);
	}
	Compound cp;
	sched_compound_begin(k->s, &cp, rs_describe(k), k->call->span, c->diag);
	cp.opaque_ok = true; /* splits only */
	const char *fname = sched_func(k->s)->name;
	Value **items = arena_alloc(a, sizeof(Value *) * (size_t)(n + 1));
	const char *cur = loop;
	for (int j = 0; j + 1 < n; j++) {
		RwCtx sub;
		sched_sub_begin(&cp, &sub, arena_printf(a, "split(\"%s\", factor=%lld)", cur, (long long)q[j]));
		const char *on = rs_lhs(k, j) ? rs_lhs(k, j) : arena_printf(a, "%s_%d", lv->name, j);
		const char *in = rs_lhs(k, j + 1) ? rs_lhs(k, j + 1) : arena_printf(a, "%s_%d", lv->name, j + 1);
		const Func *before = sched_compound_func(&cp);
		st = rw_split(&sub, cur, q[j], j == 0 ? tail : TAIL_PERFECT, on, in);
		if (st == RW_OK && j == 0 && cover) {
			rw_obligation_at(&sub, &sub.obs, &sc, "split.factors_cover", cover_text, cover);
			if (sub.fallback)
				rw_obligation_at(&sub, &sub.fallback_obs, &sc, "split.factors_cover", cover_text, cover);
		}
		bool proven;
		sched_sub_finish(&cp, &sub, st, &proven);
		if (st != RW_OK || !proven)
			return sched_compound_end(&cp, st == RW_BAD_INPUT ? STEP_BAD_INPUT : STEP_REJECTED, NULL)->status;
		Var **nv;
		int nn = hv_new_loops(a, before, sched_compound_func(&cp), &nv);
		const char *why = "the split made no inner loop";
		const char *next = nn >= 2 ? hv_loop_ref(a, sched_compound_func(&cp), nv[1], &why) : NULL;
		if (!next)
			return sched_compound_end(&cp, STEP_REJECTED, arena_printf(a, "not supported: %s", why))->status;
		items[j] = hv_loop(k->env, fname, nv[0]);
		items[j + 1] = hv_loop(k->env, fname, nv[1]);
		cur = next;
	}
	if (note)
		sched_compound_note(&cp, "%s", note);
	StepStatus r = sched_compound_end(&cp, STEP_COMMITTED, NULL)->status;
	if (r == STEP_COMMITTED)
		k->result = hv_list(k->env, n, items);
	return r;
}

/* sch.fuse(a, b, c, ...): two-way fuses from the outside in. */
static StepStatus do_fuse_many(Call *k, RwCtx *c)
{
	Arena *a = k->s->arena;
	int n = 0;
	while (script_arg(k->call, n, NULL))
		n++;
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: fuse makes one loop", "fuse");
	Var **vars = arena_alloc(a, sizeof(Var *) * (size_t)n);
	for (int i = 0; i < n; i++) {
		const char *name = rs_arg_name(k, i, NULL);
		StmtCtx sc;
		if (!name)
			return rs_bad(k, script_arg(k->call, i, NULL), "%s: every argument must be a loop", "fuse");
		RwStatus st = rw_find_loop(c, name, &sc);
		if (st != RW_OK)
			return rs_finish(k, c, st);
		vars[i] = sc.stmt->u.loop.var;
	}
	Compound cp;
	sched_compound_begin(k->s, &cp, rs_describe(k), k->call->span, c->diag);
	cp.opaque_ok = true; /* fuses only */
	Var *cur = vars[0];
	for (int j = 1; j < n; j++) {
		const Func *before = sched_compound_func(&cp);
		const char *why = NULL;
		const char *outer = hv_loop_ref(a, before, cur, &why);
		const char *inner = outer ? hv_loop_ref(a, before, vars[j], &why) : NULL;
		if (!inner)
			return sched_compound_end(&cp, STEP_REJECTED, arena_printf(a, "not supported: %s", why))->status;
		RwCtx sub;
		sched_sub_begin(&cp, &sub, arena_printf(a, "fuse(\"%s\", \"%s\")", outer, inner));
		RwStatus st = rw_fuse(&sub, outer, inner, j + 1 == n ? rs_lhs(k, 0) : NULL);
		bool proven;
		sched_sub_finish(&cp, &sub, st, &proven);
		if (st != RW_OK || !proven)
			return sched_compound_end(&cp, st == RW_BAD_INPUT ? STEP_BAD_INPUT : STEP_REJECTED, NULL)->status;
		Var **nv;
		if (hv_new_loops(a, before, sched_compound_func(&cp), &nv) < 1)
			return sched_compound_end(&cp, STEP_REJECTED, "not supported: the fuse made no loop")->status;
		cur = nv[0];
	}
	StepStatus r = sched_compound_end(&cp, STEP_COMMITTED, NULL)->status;
	if (r == STEP_COMMITTED)
		k->result = hv_loop(k->env, sched_func(k->s)->name, cur);
	return r;
}

/* ---------- TVM-style cache_read / cache_write / transform_layout ---------- */

/* The block named by argument (pos, kw), with a diagnostic if absent. */
static Stmt *block_arg(Call *k, int pos, const char *kw, const char **name)
{
	*name = rs_arg_name(k, pos, kw);
	if (!*name) {
		rs_bad(k, script_arg(k->call, pos, kw), "%s: expected a block (a handle from sch.get_block, or its name)",
		    k->call->method);
		return NULL;
	}
	Func *f = sched_func(k->s);
	Stmt *b = rw_find_block(f, *name);
	if (!b)
		rs_bad(k, script_arg(k->call, pos, kw), "%s",
		    arena_printf(k->s->arena, "%s: no block '%s' in function '%s'%s", k->call->method,
				 *name, f->name, rw_block_hint(k->s->arena, f, *name)));
	return b;
}

/* The k-th buffer block b reads (write: writes), in order of first
 * access. TVM counts in the order of the block's T.reads / T.writes,
 * which are first-access order when TVM infers them. */
static const char *buffer_by_index(Call *k, const ScriptArg *arg, const Stmt *b, bool write)
{
	Arena *a = k->s->arena;
	Buffer **bufs;
	int n = hv_block_buffers(a, b, write, &bufs);
	if (arg->ival >= 0 && arg->ival < n)
		return bufs[arg->ival]->name;
	StrBuf sb = {0};
	for (int i = 0; i < n; i++)
		sb_printf(&sb, "%s%s", i ? ", " : "", bufs[i]->name);
	char *list = sb_take(&sb);
	rs_bad(k, arg, "%s", arena_printf(a, "%s: block '%s' %s %d buffer%s (%s): index %lld is out of range",
				      k->call->method, b->u.block.name, write ? "writes" : "reads", n,
				      n == 1 ? "" : "s", n ? list : "none", (long long)arg->ival));
	free(list);
	return NULL;
}

/* The buffer argument of the TVM-style cache calls (cache_read/write,
 * reindex_cache_read/write): its position among block b's reads (write:
 * writes), or its name; then the storage scope, a string. STEP_COMMITTED,
 * or bad input with its diagnostic. */
static StepStatus cache_buffer_and_scope(Call *k, const Stmt *b, bool write, const ScriptArg *idx,
					 const ScriptArg *scope, const char **buffer, const char **scope_name)
{
	const char *m = k->call->method;
	if (idx && idx->kind == ARG_INT)
		*buffer = buffer_by_index(k, idx, b, write);
	else if (idx && idx->kind == ARG_STRING)
		*buffer = idx->str;
	else
		return rs_bad(k, idx, "%s: expected the index of the buffer among the block's %s, or its name", m,
			   write ? "writes" : "reads");
	if (!*buffer)
		return STEP_BAD_INPUT;
	if (!scope || scope->kind != ARG_STRING)
		return rs_bad(k, scope, "%s: storage_scope must be a string: \"global\", \"local\" or \"shared\"", m);
	*scope_name = scope->str;
	return STEP_COMMITTED;
}

static StepStatus do_cache_tvm(Call *k, RwCtx *c, bool write)
{
	const char *m = k->call->method;
	const char *idx_kw = write ? "write_buffer_index" : "read_buffer_index";
	CacheArgs args = {0};
	args.write = write;
	Stmt *b = block_arg(k, 0, "block", &args.block);
	if (!b)
		return STEP_BAD_INPUT;
	if (cache_buffer_and_scope(k, b, write, script_arg(k->call, 1, idx_kw),
				   script_arg(k->call, 2, "storage_scope"), &args.buffer,
				   &args.scope) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	const ScriptArg *consumers = script_arg(k->call, 3, "consumer_blocks");
	if (consumers && consumers->kind != ARG_NONE) {
		if (consumers->kind != ARG_LIST)
			return rs_bad(k, consumers, "%s: consumer_blocks must be a list of blocks", m);
		args.consumers = arena_alloc(k->s->arena, sizeof(char *) * (size_t)(consumers->nitems + 1));
		for (int i = 0; i < consumers->nitems; i++) {
			const ScriptArg *it = &consumers->items[i];
			if (it->kind != ARG_STRING && it->kind != ARG_NAME)
				return rs_bad(k, it, "%s: consumer_blocks: expected a block (a handle from sch.get_block, or its name)", m);
			if (!rw_find_block(sched_func(k->s), it->str))
				return rs_bad(k, it, "%s", arena_printf(k->s->arena, "%s: consumer_blocks: no block '%s' in function '%s'",
								      m, it->str, sched_func(k->s)->name));
			args.consumers[args.nconsumers++] = it->str;
		}
	}
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: makes one block: write `A_local = sch.%s(...)`", m, m);
	return rs_finish_block(k, c, rw_cache(c, &args), write);
}

/* ---------- reindex, reindex_cache_read, reindex_cache_write ---------- */

/* sch.reindex(block, ("read", K) | ("write", K) | "A"): a buffer named
 * by its name is the block's write when the block writes it. */
static StepStatus do_reindex(Call *k, RwCtx *c)
{
	const char *m = k->call->method;
	ReindexArgs args;
	memset(&args, 0, sizeof args);
	Stmt *b = block_arg(k, 0, "block", &args.block);
	if (!b)
		return STEP_BAD_INPUT;
	const ScriptArg *buf = script_arg(k->call, 1, "buffer");
	if (buf && buf->kind == ARG_STRING) {
		args.buffer = buf->str;
		bool is_param;
		Buffer *x = rw_find_buffer(sched_func(k->s), buf->str, &is_param);
		args.write = x && rw_stmt_accesses(b, x, true);
	} else if (buf && buf->kind == ARG_LIST && buf->nitems == 2 && buf->items[0].kind == ARG_STRING &&
		   buf->items[1].kind == ARG_INT &&
		   (!strcmp(buf->items[0].str, "read") || !strcmp(buf->items[0].str, "write"))) {
		args.write = buf->items[0].str[0] == 'w';
		args.buffer = buffer_by_index(k, &buf->items[1], b, args.write);
		if (!args.buffer)
			return STEP_BAD_INPUT;
	} else {
		return rs_bad(k, buf, "%s: buffer must be (\"read\", K), (\"write\", K) or a buffer name", m);
	}
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: makes one block: write `A_reindex = sch.%s(...)`", m, m);
	return rs_finish_block(k, c, rw_reindex(c, &args), true);
}

/* sch.reindex_cache_read(block, read_buffer_index, storage_scope, index_map)
 * and sch.reindex_cache_write(block, write_buffer_index, ...): the index is
 * the buffer's position among the block's reads (writes), or its name.
 * The string form takes buffer= and scope= as cache_read's does. */
static StepStatus do_reindex_cache(Call *k, RwCtx *c, bool write)
{
	const char *m = k->call->method;
	const char *idx_kw = write ? "write_buffer_index" : "read_buffer_index";
	ReindexArgs args;
	memset(&args, 0, sizeof args);
	args.write = write;
	Stmt *b = block_arg(k, 0, "block", &args.block);
	if (!b)
		return STEP_BAD_INPUT;
	/* vsched's string form, as cache_read's: buffer="A", scope="local" */
	const ScriptArg *idx = script_arg(k->call, 1, idx_kw);
	if (!idx)
		idx = script_arg(k->call, -1, "buffer");
	const ScriptArg *scope = script_arg(k->call, 2, "storage_scope");
	if (!scope)
		scope = script_arg(k->call, -1, "scope");
	if (cache_buffer_and_scope(k, b, write, idx, scope, &args.buffer, &args.scope) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	const ScriptArg *map = script_arg(k->call, 3, "index_map");
	if (!map || map->kind != ARG_LAMBDA)
		return rs_bad(k, map, "%s: expected index_map=lambda ...: (...), a lambda of the block's iter vars", m);
	args.src = k->sc->src;
	args.map_start = map->start;
	args.map_end = map->end;
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: makes one block: write `A_shared = sch.%s(...)`", m, m);
	return rs_finish_block(k, c, rw_reindex(c, &args), true);
}

/* pad_value (pad may be NULL) into args */
static StepStatus layout_pad(Call *k, LayoutArgs *args, const ScriptArg *pad)
{
	args->pad_kind = LAYOUT_PAD_NONE;
	if (!pad)
		return STEP_COMMITTED;
	args->pad_span = pad->span;
	args->pad_start = pad->start;
	args->pad_end = pad->end;
	switch (pad->kind) {
	case ARG_INT: args->pad_kind = LAYOUT_PAD_INT; args->pad_int = pad->ival; break;
	case ARG_FLOAT: args->pad_kind = LAYOUT_PAD_FLOAT; args->pad_float = pad->fval; break;
	case ARG_NONE: args->pad_kind = LAYOUT_PAD_NONE; break;
	case ARG_UNDEF: args->pad_kind = LAYOUT_PAD_UNDEF; break;
	case ARG_LAMBDA: args->pad_kind = LAYOUT_PAD_LAMBDA; break;
	case ARG_EXPR: args->pad_kind = LAYOUT_PAD_EXPR; break;
	case ARG_STRING: case ARG_BOOL: case ARG_NAME: case ARG_LIST: case ARG_INDEX: case ARG_STAR:
		return rs_bad(k, pad, "%s: pad_value must be a number, None, T.undef() or a lambda", "transform_layout");
	}
	return STEP_COMMITTED;
}

/* sch.transform_layout(block, ("read", 0) or "A", index_map, pad_value=...) */
static StepStatus do_transform_layout_tvm(Call *k, RwCtx *c)
{
	const char *what = "transform_layout";
	LayoutArgs args;
	memset(&args, 0, sizeof args);
	args.src = k->sc->src;
	Stmt *b = block_arg(k, 0, "block", &args.block);
	if (!b)
		return STEP_BAD_INPUT;
	const ScriptArg *buf = script_arg(k->call, 1, "buffer");
	if (buf && buf->kind == ARG_STRING) {
		args.buffer = buf->str;
	} else if (buf && buf->kind == ARG_LIST && buf->nitems == 2 && buf->items[0].kind == ARG_STRING &&
		   buf->items[1].kind == ARG_INT &&
		   (!strcmp(buf->items[0].str, "read") || !strcmp(buf->items[0].str, "write"))) {
		args.buffer = buffer_by_index(k, &buf->items[1], b, buf->items[0].str[0] == 'w');
		if (!args.buffer)
			return STEP_BAD_INPUT;
	} else {
		return rs_bad(k, buf, "%s: buffer must be (\"read\", K), (\"write\", K) or a buffer name", what);
	}
	args.func = kw_name(k, "func");
	if (!read_maps(k, 2, &args, what))
		return STEP_BAD_INPUT;
	/* injectivity is proven whatever the script assumes */
	const ScriptArg *inj = script_arg(k->call, -1, "assume_injective_transform");
	if (inj && inj->kind != ARG_BOOL)
		return rs_bad(k, inj, "%s: assume_injective_transform must be True or False", what);
	if (layout_pad(k, &args, script_arg(k->call, 3, "pad_value")) != STEP_COMMITTED)
		return STEP_BAD_INPUT;
	if (k->call->nlhs > 0)
		return rs_bad(k, NULL, "%s: transform_layout returns nothing", what);
	return rs_finish(k, c, rw_transform_layout(c, &args));
}

/* sch.transform_block_layout(block, index_map) */
static StepStatus do_transform_block_layout(Call *k, RwCtx *c)
{
	const char *what = "transform_block_layout";
	const char *block;
	if (!block_arg(k, 0, "block", &block))
		return STEP_BAD_INPUT;
	const ScriptArg *map = script_arg(k->call, 1, "index_map");
	if (!map || map->kind != ARG_LAMBDA)
		return rs_bad(k, map, "%s: expected index_map=lambda ...: (...)", what);
	if (k->call->nlhs > 0)
		return rs_bad(k, NULL, "%s: transform_block_layout returns nothing", what);
	return rs_finish(k, c, rw_transform_block_layout(c, block, k->sc->src, map->start, map->end));
}

/* ---------- handles: get_block, get_loops, get_child_blocks,
 * get_producers, get_consumers ---------- */

static StepStatus do_get_block(Call *k)
{
	Arena *a = k->s->arena;
	const char *name = rs_arg_name(k, 0, "name");
	if (!name)
		return rs_bad(k, NULL, "%s: expected a block name, e.g. sch.get_block(\"update\")", "get_block");
	const char *fn = kw_name(k, "func_name");
	if (!fn && script_arg(k->call, 1, "func_name"))
		fn = rs_arg_name(k, 1, "func_name");
	Func *f = fn ? module_find_func(k->s->mod, fn) : sched_func(k->s);
	if (!f)
		return rs_bad(k, script_arg(k->call, 1, "func_name"), "get_block: no function '%s' in the module", fn);
	if (!rw_find_block(f, name))
		return rs_bad(k, script_arg(k->call, 0, "name"), "%s",
			   arena_printf(a, "get_block: no block '%s' in function '%s'%s", name, f->name,
					rw_block_hint(a, f, name)));
	k->result = hv_block(k->env, f->name, name);
	return STEP_COMMITTED;
}

static Value *blocks_value(Call *k, int n, Stmt **blocks)
{
	Value **items = arena_alloc(k->s->arena, sizeof(Value *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		items[i] = hv_block(k->env, sched_func(k->s)->name, blocks[i]->u.block.name);
	return hv_list(k->env, n, items);
}

static StepStatus do_get_loops(Call *k)
{
	const char *name;
	Stmt *b = block_arg(k, 0, "block", &name);
	if (!b)
		return STEP_BAD_INPUT;
	Func *f = sched_func(k->s);
	Var **vars;
	int n = hv_block_loops(k->s->arena, f, b, &vars);
	Value **items = arena_alloc(k->s->arena, sizeof(Value *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		items[i] = hv_loop(k->env, f->name, vars[i]);
	k->result = hv_list(k->env, n, items);
	return STEP_COMMITTED;
}

static StepStatus do_get_child_blocks(Call *k)
{
	const ScriptArg *arg = script_arg(k->call, 0, "block_or_loop");
	const Value *v = rs_arg_value(k, arg);
	Stmt *s;
	if (v && v->kind == VAL_LOOP) {
		s = hv_find_loop(k->s->arena, sched_func(k->s), v->loop);
		if (!s)
			return rs_bad(k, arg, "%s: the loop is not in the current function", "get_child_blocks");
	} else {
		const char *name;
		s = block_arg(k, 0, "block_or_loop", &name);
		if (!s)
			return STEP_BAD_INPUT;
	}
	Stmt **blocks;
	int n = hv_child_blocks(k->s->arena, s, &blocks);
	k->result = blocks_value(k, n, blocks);
	return STEP_COMMITTED;
}

static StepStatus do_neighbours(Call *k, bool producers)
{
	const char *name;
	Stmt *b = block_arg(k, 0, "block", &name);
	if (!b)
		return STEP_BAD_INPUT;
	Stmt **blocks;
	int n = hv_neighbours(k->s->arena, sched_func(k->s), b, producers, &blocks);
	k->result = blocks_value(k, n, blocks);
	return STEP_COMMITTED;
}

/* sch.decompose_reduction(block, loop): the init block it makes. */
static StepStatus do_decompose_reduction(Call *k, RwCtx *c)
{
	const char *block = rs_arg_name(k, 0, "block"), *loop = rs_arg_name(k, 1, "loop");
	if (!block || !loop)
		return rs_bad(k, NULL, "%s: expected a block and a loop, e.g. sch.decompose_reduction(b, ko)",
			   "decompose_reduction");
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: makes one block", "decompose_reduction");
	StepStatus r = rs_finish_block(k, c, rw_decompose_reduction(c, block, loop), false);
	if (r != STEP_COMMITTED)
		return r;
	/* as in TVM, a handle of the reduction block follows it under its new
	 * name X_update (the rewrite's naming) */
	const char *fname = sched_func(k->s)->name;
	const char *update = arena_printf(k->s->arena, "%s_update", block);
	for (int i = 0; i < k->env->nvals; i++) {
		Value *v = k->env->vals[i];
		if (v->kind == VAL_BLOCK && !v->gone && !strcmp(v->func, fname) && !strcmp(v->block, block))
			v->block = update;
	}
	return r;
}

/* sch.rfactor(loop, factor_axis): the rfactor block it makes; a handle
 * of the reduction block names the write-back block (TVM's). */
static StepStatus do_rfactor(Call *k, RwCtx *c)
{
	const char *loop = rs_arg_name(k, 0, "loop");
	if (!loop)
		return rs_bad(k, NULL, "%s: expected a loop and a factor axis, e.g. sch.rfactor(ki, 0)", "rfactor");
	const ScriptArg *f = script_arg(k->call, 1, "factor_axis");
	if (!f || f->kind != ARG_INT)
		return rs_bad(k, f, "%s: factor_axis must be an integer literal", "rfactor");
	if (k->call->nlhs > 1 || k->call->lhs_star >= 0)
		return rs_bad(k, NULL, "%s: makes one block", "rfactor");
	return rs_finish_block(k, c, rw_rfactor(c, loop, f->ival), false);
}

static StepStatus do_hoist_expression(Call *k)
{
	const char *m = k->call->method;
	HoistArgs args = {0};
	args.block = kw_name(k, "block");
	args.loop = kw_name(k, "loop");
	const char *conds = rs_arg_name(k, 0, "conditionals");
	const char *lets = kw_name(k, "let_bindings");
	for (const char *p = lets ? lets : "all"; *p;) {
		/* TVM's HoistedLetBindings; let_expr (T.Let inside an
		 * expression) is accepted and hoists nothing */
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == 3 && !strncmp(p, "all", n))
			args.let_stmt = true;
		else if (n == 8 && !strncmp(p, "let_stmt", n))
			args.let_stmt = true;
		else if (n == 21 && !strncmp(p, "required_by_condition", n))
			args.let_required = true;
		else if (!(n == 4 && !strncmp(p, "none", n)) && !(n == 8 && !strncmp(p, "let_expr", n)))
			return rs_bad(k, script_arg(k->call, -1, "let_bindings"),
				   "%s: let_bindings must be \"none\", \"required_by_condition\", \"let_stmt\", \"let_expr\" or \"all\" (joined with |)",
				   m);
		p += n + (bar != NULL);
	}
	if (!conds)
		conds = "if_else_stmt|if_else_expr|boolean_expression";
	for (const char *p = conds; *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == 12 && !strncmp(p, "if_else_stmt", n))
			args.if_else_stmt = true;
		else if (n == 12 && !strncmp(p, "if_else_expr", n))
			args.if_else_expr = true;
		else if (n == 18 && !strncmp(p, "boolean_expression", n))
			args.boolean_expression = true;
		else if (!(n == 4 && !strncmp(p, "none", n)))
			return rs_bad(k, NULL, "%s: conditionals must be \"none\", \"if_else_stmt\", \"if_else_expr\" or \"boolean_expression\" (joined with |)", m);
		p += n + (bar != NULL);
	}
	return (StepStatus)sched_hoist_expression(k->s, rs_describe(k), k->call->span, k->d, &args);
}

static StepStatus do_remove_no_op(Call *k)
{
	const char *m = k->call->method;
	OcArgs args = {0};
	args.block = kw_name(k, "block");
	args.remove_stores = true;
	for (int i = 0; i < k->call->nargs; i++)
		if (!k->call->args[i].keyword || (strcmp(k->call->args[i].keyword, "block") &&
						  strcmp(k->call->args[i].keyword, "use_dataflow_analysis")))
			return rs_bad(k, &k->call->args[i], "%s: expected block= and use_dataflow_analysis= only", m);
	const ScriptArg *df = script_arg(k->call, -1, "use_dataflow_analysis");
	if (df && df->kind != ARG_BOOL)
		return rs_bad(k, df, "%s: use_dataflow_analysis must be True or False", m);
	args.no_dataflow = df && !df->ival;
	return (StepStatus)sched_overcompute(k->s, rs_describe(k), k->call->span, k->d, &args);
}

static StepStatus do_sequential_buffer_access(Call *k)
{
	const char *buffer = rs_arg_name(k, 0, "buffer");
	if (!buffer)
		return rs_bad(k, NULL, "%s: expected buffer=\"NAME\"", k->call->method);
	return (StepStatus)sched_sequential_buffer_access(k->s, rs_describe(k), k->call->span, k->d,
							  kw_name(k, "block"), buffer);
}

/* The primitives that are one rewrite each (sched_begin .. sched_finish),
 * on the row's id (run_other takes the others). */
StepStatus rs_run_rewrite(Call *k, const PrimSpec *sig, RwCtx *c)
{
	switch (sig->id) {
	case PRIM_SPLIT: return do_split(k, c);
	case PRIM_SPLIT_TVM: return do_split_factors(k, c);
	case PRIM_FUSE: return script_arg(k->call, 2, NULL) ? do_fuse_many(k, c) : do_fuse(k, c);
	case PRIM_REORDER: return do_reorder(k, c);
	case PRIM_PARALLEL: return do_annotate(k, c, rw_parallel);
	case PRIM_VECTORIZE: return do_annotate(k, c, rw_vectorize);
	case PRIM_UNROLL: return do_annotate(k, c, rw_unroll);
	case PRIM_COMPUTE_AT: return do_attach(k, c, rw_compute_at);
	case PRIM_REVERSE_COMPUTE_AT: return do_attach(k, c, rw_reverse_compute_at);
	case PRIM_TRANSFORM_LAYOUT: return do_transform_layout(k, c);
	case PRIM_TRANSFORM_LAYOUT_TVM: return do_transform_layout_tvm(k, c);
	case PRIM_TRANSFORM_BLOCK_LAYOUT: return do_transform_block_layout(k, c);
	case PRIM_DECOMPOSE_REDUCTION: return do_decompose_reduction(k, c);
	case PRIM_RFACTOR: return do_rfactor(k, c);
	case PRIM_ADD_UNIT_LOOP: return do_add_unit_loop(k, c);
	case PRIM_LIFT_ALLOC: return do_lift_alloc(k, c);
	case PRIM_FISSION: return do_fission(k, c);
	case PRIM_CACHE_READ: return do_cache(k, c, false);
	case PRIM_CACHE_WRITE: return do_cache(k, c, true);
	case PRIM_CACHE_READ_TVM: return do_cache_tvm(k, c, false);
	case PRIM_CACHE_WRITE_TVM: return do_cache_tvm(k, c, true);
	case PRIM_REINDEX: return do_reindex(k, c);
	case PRIM_REINDEX_CACHE_READ: return do_reindex_cache(k, c, false);
	case PRIM_REINDEX_CACHE_WRITE: return do_reindex_cache(k, c, true);
	case PRIM_SEQUENTIAL_BUFFER_ACCESS: case PRIM_REMOVE_BRANCHING_THROUGH_OVERCOMPUTE:
	case PRIM_REMOVE_OVERCOMPUTE_THROUGH_BRANCHING: case PRIM_SIMPLIFY: case PRIM_REMOVE_NO_OP:
	case PRIM_HOIST_EXPRESSION: case PRIM_REDUCE_LOOP_EXTENTS: case PRIM_MERGE_ADJACENT_LOOPS:
	case PRIM_MERGE_CONDITIONALS: case PRIM_GET_BLOCK: case PRIM_GET_LOOPS:
	case PRIM_GET_CHILD_BLOCKS: case PRIM_GET_PRODUCERS: case PRIM_GET_CONSUMERS:
	case PRIM_WORK_ON: case PRIM_FLOAT_MODE: case PRIM_COUNT:
		break;
	}
	return rs_bad(k, NULL, "sch.%s: not a single rewrite", k->call->method);
}

/* Handle queries, settings and compound calls (their own steps), on the
 * row's id, into *st; false for a single rewrite. */
bool rs_run_other(Call *k, const PrimSpec *sig, StepStatus *st)
{
	switch (sig->id) {
	case PRIM_WORK_ON: *st = do_work_on(k); return true;
	case PRIM_FLOAT_MODE: *st = do_float_mode(k); return true;
	case PRIM_GET_BLOCK: *st = do_get_block(k); return true;
	case PRIM_GET_LOOPS: *st = do_get_loops(k); return true;
	case PRIM_GET_CHILD_BLOCKS: *st = do_get_child_blocks(k); return true;
	case PRIM_GET_PRODUCERS: *st = do_neighbours(k, true); return true;
	case PRIM_GET_CONSUMERS: *st = do_neighbours(k, false); return true;
	case PRIM_SEQUENTIAL_BUFFER_ACCESS: *st = do_sequential_buffer_access(k); return true;
	case PRIM_HOIST_EXPRESSION: *st = do_hoist_expression(k); return true;
	case PRIM_REDUCE_LOOP_EXTENTS:
		*st = (StepStatus)sched_reduce_loop_extents(k->s, rs_describe(k), k->call->span, k->d,
							      kw_name(k, "block"));
		return true;
	case PRIM_REMOVE_BRANCHING_THROUGH_OVERCOMPUTE: *st = do_overcompute(k, false); return true;
	case PRIM_REMOVE_OVERCOMPUTE_THROUGH_BRANCHING: *st = do_overcompute(k, true); return true;
	case PRIM_SIMPLIFY: *st = do_simplify(k); return true;
	case PRIM_REMOVE_NO_OP: *st = do_remove_no_op(k); return true;
	case PRIM_MERGE_ADJACENT_LOOPS: *st = do_merge_adjacent_loops(k); return true;
	case PRIM_MERGE_CONDITIONALS: *st = do_merge_conditionals(k); return true;
	case PRIM_FISSION:
		/* with before=L, a compound call; otherwise one rewrite */
		if (!rs_arg_name(k, -1, "before"))
			return false;
		*st = do_fission_before(k);
		return true;
	case PRIM_SPLIT: case PRIM_SPLIT_TVM: case PRIM_FUSE: case PRIM_REORDER: case PRIM_PARALLEL:
	case PRIM_VECTORIZE: case PRIM_UNROLL: case PRIM_TRANSFORM_LAYOUT: case PRIM_TRANSFORM_LAYOUT_TVM:
	case PRIM_TRANSFORM_BLOCK_LAYOUT: case PRIM_CACHE_READ: case PRIM_CACHE_WRITE:
	case PRIM_CACHE_READ_TVM: case PRIM_CACHE_WRITE_TVM: case PRIM_REINDEX:
	case PRIM_REINDEX_CACHE_READ: case PRIM_REINDEX_CACHE_WRITE: case PRIM_COMPUTE_AT:
	case PRIM_REVERSE_COMPUTE_AT: case PRIM_DECOMPOSE_REDUCTION: case PRIM_RFACTOR:
	case PRIM_ADD_UNIT_LOOP: case PRIM_LIFT_ALLOC: case PRIM_COUNT:
		break;
	}
	return false;
}
