/* rewrites/seq_access.h — sequential_buffer_access: loop nests rewritten
 * to walk a buffer in physical order through proven split / tile /
 * fission / skew / reorder / simplify steps. The planning of the next step
 * on a nest and the step's rewrite are here; rewrites/schedule/
 * step_seq_access.c proves them one by one. */
#ifndef VS_REWRITES_SEQ_ACCESS_H
#define VS_REWRITES_SEQ_ACCESS_H

#include "rewrites/rewrite.h"

#define SEQ_MAX_DIMS 16

/* The buffer named `name` in f: a parameter, else an allocation; NULL if
 * none. */
Buffer *rw_seq_buffer(const Func *f, const char *name);

/* The outermost loops (fact loops left out) in scope that access b. */
typedef struct SeqNests {
	int n;
	Stmt *items[64];
} SeqNests;
void rw_seq_nests(Stmt *scope, const Buffer *b, SeqNests *out);

typedef enum {
	SEQ_STEP_NONE,	      /* no access to walk in the nest: it is done */
	SEQ_STEP_UNSUPPORTED, /* `why` says what is not supported */
	SEQ_STEP_FISSION,     /* loop: statements 0..after stay in it */
	SEQ_STEP_SKEW,	      /* loop and the one loop of its body -> (name, inner) */
	SEQ_STEP_SPLIT,	      /* loop split (loop_ref set) or tiled by factor */
	SEQ_STEP_REORDER,     /* the loops `order` into the buffer's order */
	SEQ_STEP_TIDY,	      /* already in order: tidy the indices, then done */
} SeqStepKind;

typedef struct SeqStep {
	SeqStepKind kind;
	Stmt *loop;
	int after;	    /* FISSION */
	bool follow_second; /* FISSION: the second loop holds the access */
	/* SKEW: the index is coef[0]*x + coef[1]*y + off (inside // or %);
	 * SPLIT: (x + off) // factor */
	int64_t coef[2], off, factor;
	const char *name, *inner_name; /* SKEW: z; SPLIT: outer, inner */
	const char *loop_ref;	       /* SPLIT without offset: "x#k"; NULL: tile */
	int norder;		       /* REORDER */
	const char *order[SEQ_MAX_DIMS];
	const char *why; /* UNSUPPORTED */
} SeqStep;

/* What to do next on `nest` (a statement of f; NULL: gone) so it walks
 * `buffer` in physical order: an index of two loop variables first
 * (fission, then skew), then a (x + b) // c digit (split or tile), then
 * the loop order. */
SeqStepKind rw_seq_next_step(Arena *a, const Func *f, Stmt *nest, const char *buffer,
			     SeqStep *out);
/* The description of the step's sub-rewrite under the call's `desc`. */
const char *rw_seq_step_desc(Arena *a, const char *desc, const SeqStep *st);
/* The step's rewrite on c->func (the f it was planned on): c->out and its
 * obligations; a fission's second loop in *second_loop. */
RwStatus rw_seq_apply(RwCtx *c, const SeqStep *st, Stmt **second_loop);

/* `x = e; S` -> S[x := e] for integer e without loads (no obligation:
 * e has no effect and reads no state); *count gets how many. */
Stmt *rw_seq_inline_lets(Arena *a, Stmt *s, int *count);

#endif
