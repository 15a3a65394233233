/* rewrites/schedule/step_merge.c — `sch.merge_adjacent_loops()` without
 * loop names: every adjacent pair of loops of the same kind and range
 * (rw_merge_find_pair), repeatedly, each merge (rw_merge_loops_at) proven
 * on its own as a sub-rewrite of one compound call. */
#include "rewrites/schedule/steps.h"

#include <stdlib.h>
#include <string.h>

#include "rewrites/merge.h"

int sched_merge_all_loops(Schedule *s, const char *desc, Span span, DiagList *d)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	Arena *a = s->arena;
	int cap = 64, ntried = 0, done = 0, kept = 0;
	const Stmt **tried = arena_alloc(a, sizeof(Stmt *) * (size_t)cap);
	StmtCtx first, second;
	while (rw_merge_find_pair(a, sched_compound_func(&k), tried, ntried, &first, &second)) {
		VEC_RESERVE(a, tried, ntried, cap);
		tried[ntried++] = first.stmt;
		RwCtx c;
		sched_sub_begin(&k, &c, desc);
		int line = first.stmt->span.line;
		bool proven = false;
		RwStatus st = sched_sub_finish(&k, &c, rw_merge_loops_at(&c, &first, &second), &proven);
		if (st == RW_BAD_INPUT)
			return sched_compound_end(&k, STEP_BAD_INPUT, NULL)->status;
		if (proven) {
			done++;
			continue;
		}
		kept++;
		sched_compound_note(&k, "loops at line %d not merged: %s", line,
				    k.fail_reason ? k.fail_reason : "not proven");
	}
	if (!done && kept) {
		/* one failure: the reason says it all */
		if (kept == 1)
			free(sb_take(&k.notes));
		return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
	}
	if (!done && !kept)
		sched_compound_note(&k, "no adjacent loops of the same kind and range");
	else
		sched_compound_note(&k, "%d pair%s of loops merged", done, done == 1 ? "" : "s");
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
