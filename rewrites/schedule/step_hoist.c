/* rewrites/schedule/step_hoist.c — `sch.hoist_expression` and
 * `sch.reduce_loop_extents` as compound calls: the loops in scope are
 * visited until nothing changes, each hoist, case split or narrowing
 * (the rw_hoist_* / rw_reduce_loop_extent rewrites) a sub-rewrite proven
 * on its own. */
#include "rewrites/schedule/steps.h"

#include "rewrites/hoist.h"

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
	for (int round = 0; round < 64 && ntried < 256; round++) {
		RwCtx c;
		sched_sub_begin(&k, &c, desc);
		HoistLoops ls;
		RwStatus st = rw_hoist_scope_loops(&c, args->block, args->loop, &ls);
		if (st != RW_OK) {
			bool proven;
			sched_sub_finish(&k, &c, st, &proven);
			return sched_compound_end(&k, st == RW_BAD_INPUT ? STEP_BAD_INPUT : STEP_REJECTED,
						  NULL)->status;
		}
		bool progress = false;
		for (int i = 0; i < ls.n && !progress && ntried < 256; i++) {
			Stmt *l = ls.items[i];
			if (in_list(tried, ntried, l))
				continue;
			if (args->if_else_stmt && rw_hoist_if_applies(c.arena, l)) {
				bool proven;
				st = rw_hoist_if(&c, l);
				sched_sub_finish(&k, &c, st, &proven);
				if (st != RW_OK || !proven)
					return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
				done++;
				progress = true;
				continue;
			}
			tried[ntried++] = l;
			if (!args->boolean_expression)
				continue;
			bool changed;
			Stmt *made = NULL;
			st = rw_hoist_case_split(&c, l, &changed, &made);
			if (st == RW_OK && changed) {
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
