/* rewrites/context.c — what the primitives share around a statement:
 * loop lookup by name ("i#2") with its diagnostics, the hypotheses that
 * hold at a statement (enclosing loop ranges, path conditions, lets, entry
 * facts over scalar parameters), the loop.no_wrap obligations every step
 * carries, and the nesting limit of the walks. */
#include "rewrites/rewrite.h"
#include "kernel/print.h"

#include <stdlib.h>
#include <string.h>

/* A failure of a schedule call is reported at the call (the line the
 * user has to change); a span in the kernel (the loop or statement the
 * reason is about) follows as a note. A span in the script itself (an
 * argument of the call) is the more precise place and stays first. */
RwStatus rw_fail(RwCtx *c, RwStatus st, Span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bool in_kernel = sp.src && c->call_span.src && sp.src != c->call_span.src;
	diag_vadd(c->diag, DIAG_ERROR, in_kernel || !sp.src ? c->call_span : sp, fmt, ap);
	va_end(ap);
	if (in_kernel)
		diag_add(c->diag, DIAG_NOTE, sp, "the code this is about");
	return st;
}

/* Edit distance of a and b (insertions, deletions, substitutions), or a
 * number past `cap` when it is larger: names are short. */
static int edit_distance(const char *a, const char *b, int cap)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 63 || lb > 63 || abs(la - lb) > cap)
		return cap + 1;
	int row[64];
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The name of `names` (", "-separated) closest to `name`, within an edit
 * distance of 2 and less than name's length (a one-letter name is never
 * "close" to another), or NULL. */
static const char *closest_name(Arena *a, const char *name, const char *names)
{
	int len = (int)strlen(name);
	int cap = len - 1 < 2 ? len - 1 : 2, best = cap + 1;
	if (cap < 1)
		return NULL;
	const char *hit = NULL;
	for (const char *c = names; *c;) {
		const char *end = strstr(c, ", ");
		size_t n = end ? (size_t)(end - c) : strlen(c);
		char *cand = arena_strndup(a, c, n);
		int d = edit_distance(name, cand, cap);
		if (d < best && d > 0) {
			best = d;
			hit = cand;
		}
		c += n + (end ? 2 : 0);
	}
	return hit;
}

/* ---------- "did you mean" for blocks and buffers ---------- */

typedef struct NameList {
	StrBuf b;
	int n;
	StmtKind kind;
} NameList;

static bool collect_name(const Stmt *s, void *ud)
{
	NameList *l = ud;
	if (s->kind == l->kind && l->n < 200) {
		const char *name = s->kind == ST_BLOCK ? s->u.block.name : s->u.alloc.buf->name;
		if (name && *name)
			sb_printf(&l->b, "%s%s", l->n++ ? ", " : "", name);
	}
	return false;
}

/* " (blocks: a, b)" or "; did you mean 'x'? (blocks: ...)". */
static const char *names_hint(Arena *a, const char *name, const char *what, const char *names)
{
	const char *near = name ? closest_name(a, name, names) : NULL;
	return arena_printf(a, "%s%s%s (%s: %s)", near ? "; did you mean '" : "", near ? near : "",
			    near ? "'?" : "", what, *names ? names : "none");
}

const char *rw_block_hint(Arena *a, const Func *f, const char *name)
{
	NameList l = {{0}, 0, ST_BLOCK};
	stmt_find(f->body, collect_name, &l);
	char *names = sb_take(&l.b);
	const char *r = names_hint(a, name, "blocks", names ? names : "");
	free(names);
	return r;
}

const char *rw_buffer_hint(Arena *a, const Func *f, const char *name)
{
	NameList l = {{0}, 0, ST_ALLOC};
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].buf)
			sb_printf(&l.b, "%s%s", l.n++ ? ", " : "", f->params[i].buf->name);
	stmt_find(f->body, collect_name, &l);
	char *names = sb_take(&l.b);
	const char *r = names_hint(a, name, "buffers", names ? names : "");
	free(names);
	return r;
}

/* "i" or "i#k": the lookup itself (and the fact-loop rule) is
 * an_lookup_loop's; this adds the diagnostics. */
RwStatus rw_find_loop(RwCtx *c, const char *name, StmtCtx *out)
{
	const char *hash = strchr(name, '#');
	const char *base = name;
	int want = 0;
	if (hash) {
		char *end;
		long k = strtol(hash + 1, &end, 10);
		if (*end || k < 1 || k > INT32_MAX)
			return rw_fail(c, RW_BAD_INPUT, c->call_span,
				       "bad loop name '%s': expected NAME or NAME#K with K >= 1",
				       name);
		base = arena_strndup(c->arena, name, (size_t)(hash - name));
		want = (int)k;
	}
	LoopLookup l;
	an_lookup_loop(c->arena, c->func, base, want, &l);
	RwStatus st = RW_OK;
	if (!l.found) {
		const char *near = closest_name(c->arena, base, l.names);
		st = rw_fail(c, RW_BAD_INPUT, c->call_span,
			     "no loop '%s' in function '%s'%s%s%s (loops: %s)", name,
			     c->func->name, near ? "; did you mean '" : "", near ? near : "",
			     near ? "'?" : "", *l.names ? l.names : "none");
	} else if (!hash && l.seen > 1) {
		st = rw_fail(c, RW_BAD_INPUT, c->call_span,
			     "loop name '%s' is ambiguous in function '%s': %d loops have it; write '%s#1' ... '%s#%d'",
			     name, c->func->name, l.seen, name, name, l.seen);
	} else {
		*out = l.hit;
	}
	free(l.names);
	return st;
}

/* T.assume facts over scalar parameters that every execution reaches
 * (not under a loop or a branch). Scalars never change, so a fact that
 * must hold where it stands holds everywhere; an input that breaks it
 * gives P undefined behaviour, and such inputs are outside the claim. */
static void add_scalar_facts(RwCtx *c, Obligation *o, const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			add_scalar_facts(c, o, s->u.seq.items[i]);
		return;
	case ST_ASSUME:
		if (an_scalar_only(c->func, s->u.expr))
			obligation_add_hyp(c->arena, o, s->u.expr);
		return;
	case ST_ALLOC:
		add_scalar_facts(c, o, s->u.alloc.body);
		return;
	case ST_BLOCK:
		add_scalar_facts(c, o, s->u.block.body);
		return;
	case ST_LET:
		add_scalar_facts(c, o, s->u.let.body);
		return;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_PASS:
		return;
	case ST_COUNT:
		break;
	}
	abort();
}

static void add_param_ranges(RwCtx *c, Obligation *o)
{
	Arena *a = c->arena;
	for (int i = 0; i < c->func->nparams; i++) {
		const Param *p = &c->func->params[i];
		if (p->kind != PARAM_SCALAR || !dtype_is_int(p->var->dtype))
			continue;
		/* -MAX - 1, not -(1 << 63): that shift is undefined for int64 */
		int64_t hi = an_dtype_max(p->var->dtype);
		int64_t lo = dtype_is_signed(p->var->dtype) ? -hi - 1 : 0;
		Expr *v = ir_varref(a, p->var, (Span){0});
		Expr *r = ir_and(a, ir_bin(a, OP_LE, ir_int(a, lo, DT_INT64, (Span){0}), v, (Span){0}),
				 ir_bin(a, OP_LE, v, ir_int(a, hi, DT_INT64, (Span){0}), (Span){0}));
		obligation_add_hyp(a, o, r);
		obligation_add_var(a, o, p->var);
	}
}

/* `min <= v < min + extent` of an enclosing loop. Its bounds were read
 * when that loop started; a bound that reads a buffer may have changed
 * since (the loop body may write it before the statement at hand), and
 * loads in an obligation read the state *at* that statement, so such a
 * bound is left out (weaker hypotheses: sound). */
static void add_loop_range(RwCtx *c, Obligation *o, const Stmt *l)
{
	Arena *a = c->arena;
	Expr *v = ir_varref(a, l->u.loop.var, (Span){0});
	bool min_ok = !an_expr_has_load(l->u.loop.min);
	bool ext_ok = !an_expr_has_load(l->u.loop.extent);
	if (min_ok && ext_ok) {
		obligation_add_hyp(a, o, an_loop_range(a, l, v));
		return;
	}
	if (min_ok)
		obligation_add_hyp(a, o, ir_bin(a, OP_LE, l->u.loop.min, v, (Span){0}));
}

/* The path condition e (negated when `negated`) as hypotheses: each
 * conjunct it implies on its own (`a and b`; `not (a or b)` is `not a`
 * and `not b`), except those that read a buffer: they would need the state
 * at that point, and leaving one out only weakens the hypotheses (sound).
 * So `i < 16 and A[i] > 0` still gives `i < 16`. */
static void add_cond_parts(Arena *a, Obligation *o, Expr *e, bool negated)
{
	if (e->kind == EX_NOT && e->u.un.a->dtype == DT_BOOL) {
		add_cond_parts(a, o, e->u.un.a, !negated);
		return;
	}
	if (e->kind == EX_BIN && e->u.bin.op == (negated ? OP_OR : OP_AND) &&
	    e->u.bin.a->dtype == DT_BOOL && e->u.bin.b->dtype == DT_BOOL) {
		add_cond_parts(a, o, e->u.bin.a, negated);
		add_cond_parts(a, o, e->u.bin.b, negated);
		return;
	}
	if (an_expr_has_load(e))
		return;
	obligation_add_hyp(a, o, negated ? ir_not(a, e, (Span){0}) : e);
}

void rw_add_context_hyps(RwCtx *c, Obligation *o, const StmtCtx *sc)
{
	Arena *a = c->arena;
	add_param_ranges(c, o);
	add_scalar_facts(c, o, c->func->body);
	for (int i = 0; i < sc->nloops; i++) {
		const Stmt *l = sc->loops[i];
		obligation_add_var(a, o, l->u.loop.var);
		add_loop_range(c, o, l);
	}
	for (int i = 0; i < sc->nconds; i++)
		add_cond_parts(a, o, sc->conds[i], false);
	for (int i = 0; i < sc->nlets; i++) {
		const Stmt *l = sc->lets[i];
		obligation_add_var(a, o, l->u.let.var);
		if (!an_expr_has_load(l->u.let.value) &&
		    (dtype_is_int(l->u.let.var->dtype) || l->u.let.var->dtype == DT_BOOL))
			obligation_add_hyp(a, o, ir_bin(a, OP_EQ, ir_varref(a, l->u.let.var, (Span){0}),
							l->u.let.value, (Span){0}));
	}
}

/* ---------- loops whose range wraps ---------- */

/* The interpreter runs `extent` iterations with the variable min + k
 * wrapped to its dtype, so when min + extent passes the dtype's largest
 * value the variable wraps to negative values and the hypothesis
 * `min <= v < min + extent` (an_loop_range, and the ranges the primitives
 * build themselves) describes none of those iterations: every obligation
 * about them would be proven vacuously. Rather than a wrapped range in
 * every hypothesis, every step proves that no loop of its input or output
 * wraps (kind loop.no_wrap); then those hypotheses describe every
 * iteration exactly. A loop from 0, or with constant bounds that fit,
 * needs no proof. */
static bool range_cannot_wrap(const Stmt *l)
{
	int64_t lo, ext;
	DType t = l->u.loop.var->dtype;
	if (l->u.loop.min->dtype != t || l->u.loop.extent->dtype != t)
		return false;
	if (!an_const_int(l->u.loop.min, &lo))
		return false;
	if (lo == 0)
		return true; /* 0 + extent never passes the largest value */
	if (!an_const_int(l->u.loop.extent, &ext))
		return false;
	return ext <= 0 || lo <= an_dtype_max(t) - ext;
}

typedef struct WrapWalk {
	RwCtx *c;
	ObligationList *list;
	const Func *func;
	/* loops of the input already given an obligation, with the innermost
	 * loop around each (NULL at top) */
	int n, cap;
	struct WrapDone {
		const Stmt *loop, *outer;
	} *done;
} WrapWalk;

static bool wrap_done(const WrapWalk *w, const Stmt *l, const StmtCtx *sc)
{
	const Stmt *outer = sc->nloops ? sc->loops[sc->nloops - 1] : NULL;
	for (int i = 0; i < w->n; i++)
		if (w->done[i].loop == l && w->done[i].outer == outer)
			return true;
	return false;
}

static void wrap_visit(void *ud, Stmt *s, const StmtCtx *sc)
{
	WrapWalk *w = ud;
	if (s->kind != ST_FOR || range_cannot_wrap(s) || wrap_done(w, s, sc))
		return;
	Arena *a = w->c->arena;
	const Stmt *outer = sc->nloops ? sc->loops[sc->nloops - 1] : NULL;
	VEC_PUSH(a, w->done, w->n, w->cap, ((struct WrapDone){s, outer}));
	Expr *lo = s->u.loop.min, *ext = s->u.loop.extent;
	DType t = s->u.loop.var->dtype;
	Expr *goal;
	const char *what;
	if (lo->dtype != t || ext->dtype != t) {
		/* bounds of another dtype than the variable: not handled */
		goal = ir_bool(a, false);
		what = "has bounds of another dtype than its variable (not supported)";
	} else {
		/* extent > 0 and min + extent wrapped below min: it wrapped */
		goal = ir_or(a, ir_bin(a, OP_LE, ext, ir_int(a, 0, t, (Span){0}), (Span){0}),
			     ir_bin(a, OP_LE, lo, ir_add(a, lo, ext), (Span){0}));
		what = arena_printf(a, "runs without its variable wrapping past the %s maximum",
				    dtype_name(t));
	}
	char *lo_s = print_expr(lo), *ext_s = print_expr(ext);
	const char *stmt = arena_printf(a, "loop %s (from %s, %s iterations) %s",
					s->u.loop.var->name, lo_s, ext_s, what);
	free(lo_s);
	free(ext_s);
	RwCtx fc = *w->c;
	fc.func = w->func;
	rw_obligation_at(&fc, w->list, sc, "loop.no_wrap", stmt, goal);
}

void rw_loop_wrap_obligations(RwCtx *c)
{
	if (!c->out)
		return;
	WrapWalk w = {.c = c, .list = &c->obs, .func = c->func};
	an_walk(c->arena, c->func, wrap_visit, &w);
	if (c->out != c->func) { /* the same function: its loops are listed */
		w.func = c->out;
		an_walk(c->arena, c->out, wrap_visit, &w);
	}
	if (c->out_module)
		for (int i = 0; i < c->out_module->nfuncs; i++) {
			const Func *g = c->out_module->funcs[i];
			const Func *g0 = c->module ? module_find_func(c->module, g->name) : NULL;
			if (g == c->out || g == g0 || strcmp(g->name, c->func->name) == 0)
				continue;
			if (g0) {
				w.func = g0;
				an_walk(c->arena, g0, wrap_visit, &w);
			}
			w.func = g;
			an_walk(c->arena, g, wrap_visit, &w);
		}
	if (c->fallback) {
		/* the fallback is committed on its own obligations: the input's
		 * loops and its own */
		WrapWalk f = {.c = c, .list = &c->fallback_obs, .func = c->func};
		an_walk(c->arena, c->func, wrap_visit, &f);
		f.func = c->fallback;
		an_walk(c->arena, c->fallback, wrap_visit, &f);
	}
}

/* the walks stop at AN_MAX_DEPTH levels; keep a margin for the levels a
 * walk counts around the body */
#define NESTING_LIMIT (AN_MAX_DEPTH - 4)

static const char *too_deep(Arena *a, const Func *f, const char *what)
{
	if (!f)
		return NULL;
	/* the shared limits first: an_nesting recurses as deep as the body */
	Span where;
	const char *why = ir_func_too_deep(f, &where);
	if (why)
		return arena_printf(a, "%s '%s' has %s", what, f->name, why);
	if (an_nesting(f->body) <= NESTING_LIMIT)
		return NULL;
	return arena_printf(a, "%s '%s' nests statements more than %d levels deep; deeper nests are not supported",
			    what, f->name, NESTING_LIMIT);
}

const char *rw_nesting_too_deep(const RwCtx *c)
{
	const char *why = too_deep(c->arena, c->func, "function");
	if (!why && c->out != c->func)
		why = too_deep(c->arena, c->out, "the result of");
	if (!why)
		why = too_deep(c->arena, c->fallback, "the result of");
	for (int i = 0; !why && c->out_module && i < c->out_module->nfuncs; i++)
		why = too_deep(c->arena, c->out_module->funcs[i], "the result of");
	return why;
}

Obligation *rw_obligation_at(RwCtx *c, ObligationList *list, const StmtCtx *sc,
			     const char *kind, const char *statement, Expr *goal)
{
	Obligation *o = obligation_new(c->arena, kind, statement, 0, NULL, 0, NULL, goal,
				       sc->stmt->span);
	o->rewrite = c->desc;
	rw_add_context_hyps(c, o, sc);
	oblist_push(c->arena, list, o);
	return o;
}
