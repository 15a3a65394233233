/* rewrites/schedule/step_seq_access.c — `sch.sequential_buffer_access` as
 * a compound call: for each loop nest in scope that accesses the buffer,
 * the next step rw_seq_next_step plans (fission, skew, split or tile,
 * reorder) is proven as a sub-rewrite, and the nest's indices are tidied
 * by the simplify pass, until the nest walks the buffer in order. */
#include "rewrites/schedule/steps.h"

#include <string.h>

#include "rewrites/layout.h"
#include "rewrites/seq_access.h"

static int path_of(Arena *a, const Func *f, const Stmt *s, int *path)
{
	StmtCtx sc;
	if (!an_find_stmt(a, f, s, &sc))
		return -1;
	memcpy(path, sc.path, sizeof(int) * (size_t)sc.depth);
	return sc.depth;
}

/* The nest at `path` in the current function. */
static Stmt *nest_at(Compound *k, const int *path, int depth)
{
	return an_stmt_at(sched_compound_func(k)->body, path, depth);
}

/* Run one step as a sub-rewrite; false when it did not commit (the call
 * then rejects with its failure). */
static bool step_ok(Compound *k, const char *desc, const SeqStep *st, Stmt **second_loop)
{
	RwCtx c;
	sched_sub_begin(k, &c, rw_seq_step_desc(k->s->arena, desc, st));
	bool proven;
	RwStatus r = rw_seq_apply(&c, st, second_loop);
	sched_sub_finish(k, &c, r, &proven);
	return r == RW_OK && proven;
}

/* After a skew: the integer lets it introduced, inlined (no obligation). */
static void inline_lets_at(Compound *k, const int *path, int depth)
{
	Arena *a = k->s->arena;
	Func *cur = sched_compound_func(k);
	int count = 0;
	Stmt *n2 = rw_seq_inline_lets(a, nest_at(k, path, depth), &count);
	if (!count)
		return;
	sched_compound_set(k, an_with_body(a, cur, an_replace_at(a, cur->body, path, depth, n2)));
	sched_compound_note(k, "%d integer let%s inlined", count, count == 1 ? "" : "s");
}

static bool process_nest(Compound *k, const char *desc, const Buffer *buf0, Stmt *nest0,
			 const char **why)
{
	Arena *a = k->s->arena;
	int path[AN_MAX_DEPTH];
	int depth = path_of(a, sched_compound_func(k), nest0, path);
	if (depth < 0)
		return true;
	for (int round = 0; round < 8; round++) {
		Stmt *nest = nest_at(k, path, depth), *second = NULL;
		SeqStep st;
		switch (rw_seq_next_step(a, sched_compound_func(k), nest, buf0->name, &st)) {
		case SEQ_STEP_NONE:
			return true;
		case SEQ_STEP_UNSUPPORTED:
			*why = st.why;
			return false;
		case SEQ_STEP_FISSION:
			if (!step_ok(k, desc, &st, &second))
				return false;
			/* continue with the loop that holds the access */
			if (st.follow_second && st.loop == nest)
				depth = path_of(a, sched_compound_func(k), second, path);
			if (depth < 0)
				return true;
			break;
		case SEQ_STEP_SKEW:
			if (!step_ok(k, desc, &st, NULL))
				return false;
			inline_lets_at(k, path, depth);
			sched_simplify_in(k, desc, false, false, path, depth);
			break;
		case SEQ_STEP_SPLIT:
			if (!step_ok(k, desc, &st, NULL))
				return false;
			/* (4 * io + ii) // 4 -> io before looking again */
			sched_simplify_in(k, desc, false, false, path, depth);
			break;
		case SEQ_STEP_REORDER:
		case SEQ_STEP_TIDY:
			if (st.kind == SEQ_STEP_REORDER && !step_ok(k, desc, &st, NULL))
				return false;
			/* tidy the nest's indices ((4 * io + ii) // 4 -> io) */
			sched_simplify_in(k, desc, false, false, path, depth);
			return true;
		}
	}
	*why = "too many steps";
	return false;
}

int sched_sequential_buffer_access(Schedule *s, const char *desc, Span span, DiagList *d,
				   const char *block, const char *buffer)
{
	Compound k;
	sched_compound_begin(s, &k, desc, span, d);
	Arena *a = s->arena;
	Func *f = sched_compound_func(&k);
	Buffer *buf = rw_seq_buffer(f, buffer);
	if (!buf) {
		diag_add(d, DIAG_ERROR, span, "sequential_buffer_access: no buffer '%s' in function '%s'%s",
			 buffer, f->name, rw_buffer_hint(a, f, buffer));
		return sched_compound_end(&k, STEP_BAD_INPUT,
					  arena_printf(a, "no buffer '%s' in function '%s'", buffer, f->name))
			->status;
	}
	Stmt *scope = f->body;
	if (block) {
		scope = rw_find_block(f, block);
		if (!scope) {
			diag_add(d, DIAG_ERROR, span, "sequential_buffer_access: no block '%s' in function '%s'%s",
				 block, f->name, rw_block_hint(a, f, block));
			return sched_compound_end(&k, STEP_BAD_INPUT,
						  arena_printf(a, "no block '%s'", block))->status;
		}
	}
	SeqNests nests;
	rw_seq_nests(scope, buf, &nests);
	for (int i = 0; i < nests.n; i++) {
		const char *why = NULL;
		if (!process_nest(&k, desc, buf, nests.items[i], &why)) {
			const char *reason = why ? arena_printf(a, "not supported: %s", why) : NULL;
			return sched_compound_end(&k, STEP_REJECTED, reason)->status;
		}
	}
	if (!nests.n)
		sched_compound_note(&k, "no loop nest in scope accesses %s", buffer);
	k.fail = -1;
	return sched_compound_end(&k, STEP_COMMITTED, NULL)->status;
}
