/* smt/replay.c — counterexample reports and their replay: the model's
 * variable and cell values, the source lines involved, and a run of the
 * reference interpreter before and after the rewrite on inputs built from
 * the model (then on a few more seeds) that shows the first differing
 * output or the undefined behaviour the rewrite introduces. */
#include "smt/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/interp.h"

const char *replay_status_name(ReplayStatus s)
{
	switch (s) {
	case REPLAY_NONE: return "none";
	case REPLAY_CONFIRMED: return "confirmed";
	case REPLAY_UNCONFIRMED: return "unconfirmed";
	case REPLAY_IMPOSSIBLE: return "impossible";
	}
	return "none";
}

static void value_text(StrBuf *b, const ModelValue *v)
{
	if (!v->is_float) {
		sb_printf(b, "%lld", (long long)v->ival);
		return;
	}
	if (v->fval == 0 && signbit(v->fval))
		sb_puts(b, "-0.0");
	else
		sb_printf(b, "%.9g", v->fval);
}

/* The line of a span, as "file:line: text". */
static void source_line(StrBuf *b, Span sp)
{
	if (!sp.src || sp.line <= 0 || !sp.src->text)
		return;
	const char *p = sp.src->text;
	for (int l = 1; l < sp.line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return;
	const char *e = strchr(p, '\n');
	int n = e ? (int)(e - p) : (int)strlen(p);
	sb_printf(b, "    %s:%d:%d: %.*s\n", sp.src->name ? sp.src->name : "<input>", sp.line,
		  sp.col, n, p);
}

static void note_call(const Expr *e, void *seen)
{
	if (e->kind == EX_CALL && (unsigned)e->u.call.fn < MF_COUNT)
		((bool *)seen)[e->u.call.fn] = true;
}

/* The math functions of the obligation: unknown functions in proofs, so a
 * model may give them values libm never computes (semantics.md 9). */
static void explain_math_calls(StrBuf *b, const Obligation *o)
{
	bool seen[MF_COUNT] = {false};
	for (int i = 0; i < o->nhyps; i++)
		expr_each_post(o->hyps[i], note_call, seen);
	if (o->goal)
		expr_each_post(o->goal, note_call, seen);
	int n = 0;
	for (int f = 0; f < MF_COUNT; f++)
		if (seen[f])
			sb_printf(b, "%sT.%s", n++ ? ", " : "    math calls: ", mathfn_name((MathFn)f));
	if (n)
		sb_puts(b, n == 1 ? " is an unknown function in proofs: the counterexample may "
				    "give it values libm never computes\n"
				  : " are unknown functions in proofs: the counterexample may "
				    "give them values libm never computes\n");
}

static void explain_model(StrBuf *b, const Obligation *o, const Model *m)
{
	sb_printf(b, "  counterexample (%s): %s\n", o->kind, o->statement);
	explain_math_calls(b, o);
	if (m && m->nvars) {
		sb_puts(b, "    values:");
		for (int i = 0; i < m->nvars; i++) {
			sb_printf(b, "%s %s = ", i ? "," : "", m->vars[i].var->name);
			value_text(b, &m->vars[i].val);
		}
		sb_puts(b, "\n");
	}
	if (m && m->ncells) {
		sb_puts(b, "    cells:");
		for (int i = 0; i < m->ncells; i++) {
			const ModelCell *c = &m->cells[i];
			sb_printf(b, "%s %s[", i ? "," : "", c->buf->name);
			for (int k = 0; k < c->nidx; k++)
				sb_printf(b, "%s%lld", k ? ", " : "", (long long)c->idx[k]);
			sb_puts(b, "] = ");
			value_text(b, &c->val);
		}
		sb_puts(b, "\n");
	}
	sb_puts(b, "  source:\n");
	int seen[16] = {0}, nseen = 0;
	Span spans[17];
	int nspans = 0;
	spans[nspans++] = o->origin;
	for (int i = 0; i < o->nrelated && nspans < 17; i++)
		spans[nspans++] = o->related[i];
	for (int i = 0; i < nspans; i++) {
		bool dup = false;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == spans[i].line;
		if (dup || spans[i].line <= 0)
			continue;
		if (nseen < 16)
			seen[nseen++] = spans[i].line;
		source_line(b, spans[i]);
	}
}

static bool has_kind(const char *kind, const char *suffix)
{
	size_t n = strlen(kind), m = strlen(suffix);
	return n >= m && strcmp(kind + n - m, suffix) == 0;
}

/* Scalar parameter values from the model, in parameter order; missing
 * ones get 16 (a small extent). */
static int64_t *model_scalars(Arena *a, const Func *f, const Model *m)
{
	int n = 0;
	for (int i = 0; i < f->nparams; i++)
		n += f->params[i].kind == PARAM_SCALAR;
	int64_t *vals = arena_alloc(a, sizeof(int64_t) * (size_t)(n + 1));
	int k = 0;
	for (int i = 0; i < f->nparams; i++) {
		if (f->params[i].kind != PARAM_SCALAR)
			continue;
		vals[k] = 16;
		for (int j = 0; m && j < m->nvars; j++)
			if (m->vars[j].var == f->params[i].var)
				vals[k] = m->vars[j].val.ival;
		k++;
	}
	return vals;
}

static BufState *state_buf_of(State *s, const Buffer *b)
{
	for (int i = 0; i < s->nbufs; i++)
		if (s->bufs[i].buf == b)
			return &s->bufs[i];
	return state_buffer(s, b->name);
}

static void apply_model_cells(State *s, const Model *m)
{
	for (int i = 0; m && i < m->ncells; i++) {
		const ModelCell *c = &m->cells[i];
		BufState *bs = state_buf_of(s, c->buf);
		if (!bs || bs->ndim != c->nidx)
			continue;
		int64_t off = bufstate_offset(bs, c->idx);
		if (off < 0)
			continue;
		if (dtype_is_float(bs->buf->dtype))
			bs->data[off].f = c->val.is_float ? c->val.fval : (double)c->val.ival;
		else
			bs->data[off].i = c->val.ival;
		bs->cell[off] = CELL_INIT;
	}
}

/* Float inputs with a wide range of magnitudes: sums then depend on the
 * order of accumulation under IEEE rounding. */
static void widen_floats(State *s, uint64_t seed)
{
	static const double pool[] = {1e8, -1e8, 1.0, 3.0, 0.1, -0.0, 1e-8, 16777217.0, -2.5};
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (int i = 0; i < s->nbufs; i++) {
		BufState *b = &s->bufs[i];
		if (!dtype_is_float(b->buf->dtype))
			continue;
		for (int64_t k = 0; k < b->size; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (b->cell[k] == CELL_INIT)
				b->data[k].f = pool[x % (sizeof pool / sizeof *pool)];
		}
	}
}

typedef enum { TRY_SKIP, TRY_SAME, TRY_DIFF } TryResult;

static TryResult try_input(Arena *a, const Func *before, const Func *after, State *in,
			   bool ieee, StrBuf *why)
{
	DiagList d;
	diag_init(&d, a);
	State *sb = state_clone(a, in);
	InterpResult rb;
	if (interp_run(before, sb, 0, &rb) != RUN_OK)
		return TRY_SKIP; /* not admissible, or P itself has UB here */
	State *sa = state_transfer(a, in, after, &d);
	/* a layout that maps input cells outside the new shape: run the
	 * rewritten program on the cells that fit, its access outside the
	 * shape shows (layout.in_bounds) */
	if (!sa)
		sa = state_transfer_partial(a, in, after, &d);
	if (!sa)
		return TRY_SKIP;
	InterpResult ra;
	RunStatus st = interp_run(after, sa, 0, &ra);
	if (st == RUN_UB || st == RUN_ASSUME_FAILED) {
		sb_printf(why, "    after the rewrite: %s", ra.message ? ra.message : "undefined behaviour");
		if (ra.span.line > 0)
			sb_printf(why, " (line %d)", ra.span.line);
		sb_puts(why, "; before: runs without undefined behaviour\n");
		return TRY_DIFF;
	}
	if (st != RUN_OK)
		return TRY_SKIP;
	char *diff = NULL;
	if (state_equal(sb, sa, ieee, 0, &diff)) {
		free(diff);
		return TRY_SAME;
	}
	sb_printf(why, "    first difference (before vs after): %s\n", diff ? diff : "?");
	free(diff);
	return TRY_DIFF;
}

static void scalars_text(StrBuf *b, const State *s)
{
	if (!s->nscalars)
		return;
	sb_puts(b, "    input scalars:");
	for (int i = 0; i < s->nscalars; i++)
		sb_printf(b, "%s %s = %lld", i ? "," : "", s->scalar_vars[i]->name,
			  (long long)s->scalars[i].i);
	sb_puts(b, "\n");
}

static bool stmt_writes(const Stmt *s, const Buffer *b)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (stmt_writes(s->u.seq.items[i], b))
				return true;
		return false;
	case ST_FOR: return stmt_writes(s->u.loop.body, b);
	case ST_IF:
		return stmt_writes(s->u.cond.then_s, b) ||
		       (s->u.cond.else_s && stmt_writes(s->u.cond.else_s, b));
	case ST_STORE: return s->u.store.buf == b;
	case ST_ALLOC: return stmt_writes(s->u.alloc.body, b);
	case ST_BLOCK: return stmt_writes(s->u.block.body, b);
	case ST_LET: return stmt_writes(s->u.let.body, b);
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return false;
	}
	return false;
}

/* A model cell of a buffer the program writes: the counterexample's state
 * is one the program computes, which inputs cannot set directly. */
static const ModelCell *computed_cell(const Model *m, const Func *before)
{
	for (int i = 0; m && i < m->ncells; i++)
		if (stmt_writes(before->body, m->cells[i].buf))
			return &m->cells[i];
	return NULL;
}

static void replay(Arena *a, const Obligation *o, const Model *m, const Func *before,
		   const Func *after, FloatMode fm, unsigned seed, ReplayOutcome *out)
{
	StrBuf why = {0};
	if (has_kind(o->kind, ".no_race")) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "the interpreter runs parallel and vector loops one iteration at a time, so a race cannot show; the two iterations above touch the same cell at once");
		return;
	}
	if (!after) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "the rewrite produced no program to compare");
		return;
	}
	int64_t *scalars = model_scalars(a, before, m);
	const int attempts = 24;
	for (int t = 0; t < attempts; t++) {
		DiagList d;
		diag_init(&d, a);
		/* first the model's scalars and cells, then other seeds; odd
		 * attempts use wide float values */
		State *in = interp_gen_input_scalars(a, before, seed + (unsigned)t, scalars, &d);
		if (!in && t >= attempts / 2)
			in = interp_gen_input(a, before, seed + (unsigned)t, &d);
		if (!in)
			continue;
		if (t % 2 == 1)
			widen_floats(in, seed + (unsigned)t);
		apply_model_cells(in, m);
		TryResult r = try_input(a, before, after, in, fm == FLOAT_IEEE, &why);
		if (r == TRY_DIFF) {
			scalars_text(&why, in);
			char *s = sb_take(&why);
			out->status = REPLAY_CONFIRMED;
			out->text = arena_strdup(a, s);
			free(s);
			return;
		}
	}
	/* The model's cells may describe the state where the rewrite acts
	 * rather than an input (a cell the program writes first), and forcing
	 * them into the input can break its entry facts: then every attempt
	 * above was skipped. Plain admissible inputs may still show it. */
	for (int t = 0; t < attempts / 3; t++) {
		DiagList d;
		diag_init(&d, a);
		unsigned sd = seed + 1000u + (unsigned)t;
		State *in = interp_gen_input_scalars(a, before, sd, scalars, &d);
		if (!in)
			in = interp_gen_input(a, before, sd, &d);
		if (!in)
			continue;
		if (t % 2 == 1)
			widen_floats(in, sd);
		if (try_input(a, before, after, in, fm == FLOAT_IEEE, &why) == TRY_DIFF) {
			scalars_text(&why, in);
			char *s = sb_take(&why);
			out->status = REPLAY_CONFIRMED;
			out->text = arena_strdup(a, s);
			free(s);
			return;
		}
	}
	free(sb_take(&why));
	const ModelCell *cell = computed_cell(m, before);
	if (cell) {
		StrBuf t = {0};
		sb_printf(&t, "the counterexample needs %s[", cell->buf->name);
		for (int k = 0; k < cell->nidx; k++)
			sb_printf(&t, "%s%lld", k ? ", " : "", (long long)cell->idx[k]);
		sb_puts(&t, "] = ");
		value_text(&t, &cell->val);
		sb_printf(&t, " where the rewrite acts, a value the program computes rather than reads from its inputs, and no difference showed on %d inputs; the obligation fails in that state, so the rewrite is not proven safe",
			  attempts + attempts / 3);
		char *text = sb_take(&t);
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, text);
		free(text);
		return;
	}
	out->status = REPLAY_UNCONFIRMED;
	out->text = arena_printf(a, "    no difference on %d inputs built from the model and from random seeds (the obligation is still refuted: the rewrite is not proven safe)\n", attempts + attempts / 3);
}

char *replay_explain(Arena *a, const Obligation *o, const ObligationResult *r,
		     const Func *before, const Func *after, FloatMode fm, unsigned seed,
		     ReplayOutcome *out)
{
	StrBuf b = {0};
	explain_model(&b, o, r->model);
	char *tmp = sb_take(&b);
	char *text = arena_strdup(a, tmp);
	free(tmp);
	replay(a, o, r->model, before, after, fm, seed, out);
	return text;
}
