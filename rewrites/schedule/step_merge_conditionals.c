/* rewrites/schedule/step_merge_conditionals.c — `sch.merge_conditionals`:
 * every adjacent pair of ifs in scope (rw_merge_cond_find_pair),
 * repeatedly, each pair merged (rw_merge_cond_pair) in the orientations
 * that may hold and proven on its own as a sub-rewrite of one compound
 * call; strict rejects on the first pair kept apart. */
#include "rewrites/schedule/steps.h"

#include <stdlib.h>
#include <string.h>

#include "rewrites/layout.h"
#include "rewrites/merge_conditionals.h"

/* Try one pair; true when merged (the compound's function is updated). */
static bool try_pair(Compound *k, const char *desc, const StmtCtx *seq, int at)
{
	const Stmt *if1 = seq->stmt->u.seq.items[at];
	const Stmt *if2 = seq->stmt->u.seq.items[at + 1];
	MergeCondKind kinds[2];
	int nk = rw_merge_cond_orientations(if1->u.cond.cond, if2->u.cond.cond, kinds);
	/* the first failure is reported when no orientation is proven */
	int fail = -1;
	const Func *fail_before = NULL, *fail_after = NULL;
	const char *fail_reason = NULL;
	for (int i = 0; i < nk; i++) {
		RwCtx c;
		sched_sub_begin(k, &c, desc);
		RwStatus st = rw_merge_cond_pair(&c, seq, at, kinds[i]);
		bool proven = false;
		sched_sub_finish(k, &c, st, &proven);
		if (proven)
			return true;
		if (i == 0) {
			fail = k->fail;
			fail_before = k->fail_before;
			fail_after = k->fail_after;
			fail_reason = k->fail_reason;
		}
		if (st != RW_OK)
			break; /* not supported: the other orientation fails the same way */
	}
	k->fail = fail;
	k->fail_before = fail_before;
	k->fail_after = fail_after;
	k->fail_reason = fail_reason;
	return false;
}

int sched_merge_conditionals(Schedule *s, const char *desc, Span span, DiagList *d,
			     const char *block, bool strict)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	Arena *a = s->arena;
	int cap = 32, done = 0, kept = 0;
	MergeCondPair *tried = arena_alloc(a, sizeof(MergeCondPair) * (size_t)cap);
	int ntried = 0;
	for (;;) {
		const Func *f = sched_compound_func(&k);
		StmtCtx scope;
		if (block) {
			Stmt *blk = rw_find_block(f, block);
			if (!blk || !an_find_stmt(a, f, blk, &scope)) {
				diag_add(d, DIAG_ERROR, span, "merge_conditionals: no block '%s' in function '%s'%s",
					 block, f->name, blk ? "" : rw_block_hint(a, f, block));
				k.fail = -1;
				return sched_compound_end(&k, STEP_BAD_INPUT,
							  arena_printf(a, "no block '%s' in function '%s'", block,
								       f->name))->status;
			}
		}
		StmtCtx seq;
		int at;
		if (!rw_merge_cond_find_pair(a, f, block ? &scope : NULL, tried, ntried, &seq, &at))
			break;
		VEC_RESERVE(a, tried, ntried, cap);
		const Stmt *if1 = seq.stmt->u.seq.items[at];
		tried[ntried].first = if1;
		tried[ntried++].second = seq.stmt->u.seq.items[at + 1];
		if (try_pair(&k, desc, &seq, at)) {
			done++;
			continue;
		}
		if (strict)
			return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
		kept++;
		sched_compound_note(&k, "if statements at lines %d and %d kept apart: %s", if1->span.line,
				    seq.stmt->u.seq.items[at + 1]->span.line,
				    k.fail_reason ? k.fail_reason : "not proven");
	}
	if (!done && kept) {
		/* one failure: the reason says it all */
		if (kept == 1)
			free(sb_take(&k.notes));
		return sched_compound_end(&k, STEP_REJECTED, NULL)->status;
	}
	if (!done)
		sched_compound_note(&k, "no adjacent if statements in scope");
	else
		sched_compound_note(&k, "%d pair%s of if statements merged", done, done == 1 ? "" : "s");
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
