/* rewrites/schedule/step_hoist.c — `sch.hoist_expression` and
 * `sch.reduce_loop_extents` as compound calls: the loops in scope are
 * visited until nothing changes, each hoist, case split or narrowing
 * (the rw_hoist_* / rw_reduce_loop_extent rewrites) a sub-rewrite proven
 * on its own. */
#include "rewrites/schedule/steps.h"

#include <stdint.h>
#include <stdlib.h>

#include "kernel/print.h"
#include "kernel/ptrmap.h"
#include "rewrites/hoist.h"

/* Budgets. A case split puts a copy of the loop body in every case, and
 * nested or repeated splits multiply the copies: the function as printed
 * (shared subtrees counted at every place) may grow to HOIST_GROWTH times
 * the input plus HOIST_SLACK statements. Each sub-rewrite walks, proves
 * and verifies the whole function: their sizes summed may reach
 * HOIST_WORK. Past either the call is rejected as too large before the
 * result is committed or printed. */
#define HOIST_GROWTH 16
#define HOIST_SLACK 1024
#define HOIST_WORK (INT64_C(1) << 22)
#define HOIST_SIZE_CAP (INT64_C(1) << 40)

/* statements of s as printed, saturating at HOIST_SIZE_CAP; memo by node
 * (a shared subtree is counted once per node, however often printed) */
static int64_t printed_size(const Stmt *s, PtrMap *memo)
{
	uintptr_t v;
	if (ptrmap_get(memo, s, &v))
		return (int64_t)v;
	int64_t n = 1;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			n += printed_size(s->u.seq.items[i], memo);
		break;
	case ST_FOR: n += printed_size(s->u.loop.body, memo); break;
	case ST_IF:
		n += printed_size(s->u.cond.then_s, memo);
		if (s->u.cond.else_s)
			n += printed_size(s->u.cond.else_s, memo);
		break;
	case ST_ALLOC: n += printed_size(s->u.alloc.body, memo); break;
	case ST_BLOCK: n += printed_size(s->u.block.body, memo); break;
	case ST_LET: n += printed_size(s->u.let.body, memo); break;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		break;
	}
	if (n > HOIST_SIZE_CAP)
		n = HOIST_SIZE_CAP;
	if (!ptrmap_put(memo, s, (uintptr_t)n))
		abort();
	return n;
}

static int64_t func_size(const Func *f)
{
	PtrMap memo = {0};
	int64_t n = printed_size(f->body, &memo);
	ptrmap_free(&memo);
	return n;
}

typedef struct HoistBudget {
	int64_t input, limit, work;
	int nsub;
} HoistBudget;

/* The reason a sub-rewrite's result `out` is refused, or NULL. */
static const char *over_budget(Arena *a, HoistBudget *b, const Func *out)
{
	int64_t n = func_size(out);
	b->nsub++;
	b->work += n;
	if (n > b->limit)
		return arena_printf(a, "hoist_expression: result too large: %lld statements as printed after %d sub-rewrites (limit %lld: %d x the input's %lld + %d); each case split copies the loop body into every case",
				    (long long)n, b->nsub, (long long)b->limit, HOIST_GROWTH,
				    (long long)b->input, HOIST_SLACK);
	if (b->work > HOIST_WORK)
		return arena_printf(a, "hoist_expression: too large: %d sub-rewrites over %lld statements in all (work limit %lld)",
				    b->nsub, (long long)b->work, (long long)HOIST_WORK);
	return NULL;
}

static bool in_list(const Stmt *const *l, int n, const Stmt *s)
{
	for (int i = 0; i < n; i++)
		if (l[i] == s)
			return true;
	return false;
}

int sched_hoist_expression(Schedule *s, const char *desc, Span span, DiagList *d,
			   const HoistArgs *args)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	int done = 0, ntried = 0;
	const Stmt *tried[256];
	HoistBudget budget = {0};
	budget.input = func_size(sched_compound_func(&k));
	budget.limit = HOIST_GROWTH * budget.input + HOIST_SLACK;
	const Var *named = NULL; /* the variable of the loop `loop=` names */
	for (int round = 0; round < 64 && ntried < 256; round++) {
		RwCtx c;
		sched_sub_begin(&k, &c, desc);
		HoistLoops ls;
		RwStatus st = RW_OK;
		if (named)
			rw_hoist_loops_of_var(&c, named, &ls);
		else
			st = rw_hoist_scope_loops(&c, args->block, args->loop, &ls);
		if (st == RW_OK && args->loop && !named && ls.n)
			named = ls.items[0]->u.loop.var;
		if (st != RW_OK) {
			bool proven;
			sched_sub_finish(&k, &c, st, &proven);
			return sched_compound_end(&k, st == RW_BAD_INPUT ? STEP_BAD_INPUT : STEP_REJECTED,
						  NULL)->status;
		}
		/* TVM's hoisting first: one invariant condition out of its loops */
		HoistFlags fl = {args->if_else_stmt, args->if_else_expr, args->boolean_expression,
				 args->let_stmt, args->let_required};
		Stmt *dest, *let;
		const Expr *cond;
		if (rw_hoist_find(&c, args->loop || args->block ? &ls : NULL, fl, &dest, &cond, &let)) {
			bool proven;
			st = cond ? rw_hoist_condition(&c, dest, cond) : rw_hoist_let(&c, dest, let);
			const char *big = st == RW_OK ? over_budget(c.arena, &budget, c.out) : NULL;
			if (big) {
				k.fail = -1;
				return sched_compound_end(&k, STEP_REJECTED,
							  arena_printf(c.arena, "not supported: %s", big))->status;
			}
			sched_sub_finish(&k, &c, st, &proven);
			if (st != RW_OK || !proven)
				return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
			char *what = print_expr(cond ? cond : let->u.let.value);
			if (cond)
				sched_compound_note(&k, "condition %s hoisted out of loop %s", what,
						    dest->u.loop.var->name);
			else
				sched_compound_note(&k, "let %s = %s hoisted out of loop %s", let->u.let.var->name,
						    what, dest->u.loop.var->name);
			free(what);
			done++;
			continue;
		}
		/* then seed 000's case split of the loop loop= names */
		bool progress = false;
		for (int i = 0; i < ls.n && !progress && ntried < 256 && args->loop; i++) {
			Stmt *l = ls.items[i];
			if (in_list(tried, ntried, l))
				continue;
			tried[ntried++] = l;
			if (!args->boolean_expression)
				continue;
			bool changed;
			Stmt *made = NULL;
			st = rw_hoist_case_split(&c, l, &changed, &made);
			if (st == RW_OK && changed) {
				const char *big = over_budget(c.arena, &budget, c.out);
				if (big) {
					k.fail = -1;
					return sched_compound_end(&k, STEP_REJECTED,
								  arena_printf(c.arena, "not supported: %s", big))->status;
				}
				sched_compound_set(&k, c.out);
				sched_compound_note(&k, "%s", c.note);
				if (ntried < 256)
					tried[ntried++] = made; /* split each loop once */
				done++;
				progress = true;
			}
		}
		if (!progress)
			break;
	}
	if (!done)
		sched_compound_note(&k, "nothing to hoist");
	k.fail = -1;
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}

/* ---------- reduce_loop_extents ---------- */

int sched_reduce_loop_extents(Schedule *s, const char *desc, Span span, DiagList *d,
			      const char *block)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	int done = 0;
	const Stmt *tried[256];
	int ntried = 0;
	for (int round = 0; round < 256; round++) {
		RwCtx c;
		sched_sub_begin(&k, &c, desc);
		HoistLoops ls;
		RwStatus st = rw_hoist_scope_loops(&c, block, NULL, &ls);
		if (st != RW_OK) {
			bool proven;
			sched_sub_finish(&k, &c, st, &proven);
			return sched_compound_end(&k, STEP_BAD_INPUT, NULL)->status;
		}
		Stmt *next = NULL;
		for (int i = 0; i < ls.n && !next; i++) {
			bool seen = false;
			for (int j = 0; j < ntried; j++)
				seen |= tried[j] == ls.items[i];
			if (!seen)
				next = ls.items[i];
		}
		if (!next || ntried == 256)
			break;
		tried[ntried++] = next;
		bool changed;
		Stmt *made = NULL;
		st = rw_reduce_loop_extent(&c, next, &changed, &made);
		if (st != RW_OK || !changed)
			continue;
		bool proven;
		sched_sub_finish(&k, &c, st, &proven);
		if (!proven)
			return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
		if (ntried < 256)
			tried[ntried++] = made; /* narrowed once */
		done++;
	}
	sched_compound_note(&k, "%d loop%s narrowed", done, done == 1 ? "" : "s");
	k.fail = -1;
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
