/* kernel/inputs.c — interpreter states: copying and transferring them,
 * random admissible inputs (scalars that satisfy the entry facts, small
 * exact values in every cell, cells repaired for `c or X[t] == v` facts),
 * comparing final states (T.undef() cells excepted), rendering them, and
 * the differential check interp_equiv built from these. */
#include "kernel/interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_ATTEMPTS 32       /* full inputs tried before giving up */
#define SCALAR_TRIES 2000     /* scalar tuples tried per input */
#define SMALL_INPUT_CELLS 64  /* inputs this small are shown in reports */

/* ---------- states ---------- */

int64_t bufstate_offset(const BufState *b, const int64_t *idx)
{
	int64_t off = 0;
	for (int k = 0; k < b->ndim; k++) {
		if (idx[k] < 0 || idx[k] >= b->shape[k])
			return -1;
		off = off * b->shape[k] + idx[k];
	}
	return off;
}

State *state_clone(Arena *a, const State *s)
{
	State *c = arena_alloc(a, sizeof *c);
	*c = *s;
	c->arena = a;
	c->scalar_vars = arena_alloc(a, sizeof(Var *) * (size_t)(s->nscalars + 1));
	c->scalars = arena_alloc(a, sizeof(Value) * (size_t)(s->nscalars + 1));
	if (s->nscalars) {
		memcpy(c->scalar_vars, s->scalar_vars, sizeof(Var *) * (size_t)s->nscalars);
		memcpy(c->scalars, s->scalars, sizeof(Value) * (size_t)s->nscalars);
	}
	c->bufs = arena_alloc(a, sizeof(BufState) * (size_t)(s->nbufs + 1));
	for (int i = 0; i < s->nbufs; i++) {
		const BufState *from = &s->bufs[i];
		BufState *to = &c->bufs[i];
		*to = *from;
		to->shape = arena_alloc(a, sizeof(int64_t) * (size_t)(from->ndim + 1));
		to->data = arena_alloc(a, sizeof(Value) * (size_t)(from->size + 1));
		to->cell = arena_alloc(a, (size_t)(from->size + 1));
		if (from->ndim)
			memcpy(to->shape, from->shape, sizeof(int64_t) * (size_t)from->ndim);
		if (from->size) {
			memcpy(to->data, from->data, sizeof(Value) * (size_t)from->size);
			memcpy(to->cell, from->cell, (size_t)from->size);
		}
	}
	return c;
}

static const BufState *find_buffer(const State *s, const char *name)
{
	for (int i = 0; i < s->nbufs; i++)
		if (strcmp(s->bufs[i].buf->name, name) == 0)
			return &s->bufs[i];
	return NULL;
}

BufState *state_buffer(State *s, const char *name)
{
	return (BufState *)find_buffer(s, name);
}

/* ---------- rendering values ---------- */

/* The shortest text that reads back to x, with ".0" on whole numbers so a
 * float looks like one; -0.0 keeps its sign. */
static void put_float(StrBuf *b, double x)
{
	if (isnan(x)) {
		sb_puts(b, "nan");
		return;
	}
	if (isinf(x)) {
		sb_puts(b, x < 0 ? "-inf" : "inf");
		return;
	}
	char text[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(text, sizeof text, "%.*g", prec, x);
		if (strtod(text, NULL) == x)
			break;
	}
	sb_puts(b, text);
	if (!strpbrk(text, ".en"))
		sb_puts(b, ".0");
}

static void put_value(StrBuf *b, Value v, DType t)
{
	if (dtype_is_float(t))
		put_float(b, v.f);
	else
		sb_printf(b, "%lld", (long long)v.i);
}

static void put_cell(StrBuf *b, const BufState *bs, int64_t off)
{
	switch ((CellState)bs->cell[off]) {
	case CELL_UNINIT:
		sb_puts(b, "?");
		return;
	case CELL_UNDEF:
		sb_puts(b, "undef");
		return;
	case CELL_INIT:
		put_value(b, bs->data[off], bs->buf->dtype);
		return;
	}
	sb_puts(b, "?");
}

static void put_index(StrBuf *b, const char *name, int n, const int64_t *ix)
{
	sb_printf(b, "%s[", name);
	for (int k = 0; k < n; k++)
		sb_printf(b, "%s%lld", k ? ", " : "", (long long)ix[k]);
	sb_puts(b, "]");
}

static void put_shape(StrBuf *b, const BufState *bs)
{
	sb_puts(b, "(");
	for (int k = 0; k < bs->ndim; k++)
		sb_printf(b, "%s%lld", k ? ", " : "", (long long)bs->shape[k]);
	sb_puts(b, bs->ndim == 1 ? ",)" : ")");
}

/* Nested lists from dimension `dim` on, starting at offset `off`. */
static void put_nested(StrBuf *b, const BufState *bs, int dim, int64_t off)
{
	if (dim == bs->ndim) {
		put_cell(b, bs, off);
		return;
	}
	int64_t stride = 1;
	for (int k = dim + 1; k < bs->ndim; k++)
		stride *= bs->shape[k];
	sb_puts(b, "[");
	for (int64_t i = 0; i < bs->shape[dim]; i++) {
		if (i)
			sb_puts(b, ", ");
		put_nested(b, bs, dim + 1, off + i * stride);
	}
	sb_puts(b, "]");
}

static void put_scalars(StrBuf *b, const State *s, const char *sep)
{
	for (int i = 0; i < s->nscalars; i++) {
		sb_printf(b, "%s%s = ", i ? sep : "", s->scalar_vars[i]->name);
		put_value(b, s->scalars[i], s->scalar_vars[i]->dtype);
	}
}

char *state_format(const State *s)
{
	StrBuf b = {0};
	for (int i = 0; i < s->nscalars; i++) {
		sb_printf(&b, "%s = ", s->scalar_vars[i]->name);
		put_value(&b, s->scalars[i], s->scalar_vars[i]->dtype);
		sb_puts(&b, "\n");
	}
	for (int i = 0; i < s->nbufs; i++) {
		const BufState *bs = &s->bufs[i];
		sb_printf(&b, "%s = ", bs->buf->name);
		put_nested(&b, bs, 0, 0);
		sb_puts(&b, "\n");
	}
	return sb_take(&b);
}

/* ---------- random inputs ---------- */

typedef struct Rng {
	uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) /* splitmix64 */
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int64_t rng_range(Rng *r, int64_t lo, int64_t hi) /* inclusive */
{
	return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* A scalar: small (0..64), biased to edges and multiples of 8 and 16,
 * where tails and divisibility facts live; `wide` adds negative values
 * and values up to 4096. */
static int64_t pick_scalar(Rng *r, DType t, bool wide)
{
	static const int64_t edges[] = {0,  1,  2,  3,  4,  7,	8,  9,	14, 15,
					16, 17, 24, 31, 32, 33, 48, 63, 64};
	if (t == DT_BOOL)
		return rng_range(r, 0, 1);
	if (wide) /* after many misses: negative and larger values too */
		switch (rng_range(r, 0, 3)) {
		case 0: return rng_range(r, -64, 64);
		case 1: return rng_range(r, 0, 1024);
		case 2: return (int64_t)1 << rng_range(r, 0, 12);
		default: break;
		}
	switch (rng_range(r, 0, 9)) {
	case 0: case 1: case 2: case 3:
		return edges[rng_range(r, 0, (int64_t)(sizeof edges / sizeof *edges) - 1)];
	case 4: case 5:
		return 8 * rng_range(r, 0, 8);
	case 6:
		return 16 * rng_range(r, 0, 4);
	default:
		return rng_range(r, 0, 64);
	}
}

/* Small values: ints in -8..8, floats k/4 with |k| <= 32 (sums of a few
 * thousand of them are exact in float32, in any order). */
static Value pick_cell(Rng *r, DType t)
{
	Value v;
	if (dtype_is_float(t))
		v.f = (double)rng_range(r, -32, 32) / 4.0;
	else if (t == DT_BOOL)
		v.i = rng_range(r, 0, 1);
	else if (t == DT_UINT8)
		v.i = rng_range(r, 0, 16);
	else
		v.i = rng_range(r, -8, 8);
	return v;
}

static void fill_random(Rng *r, State *st)
{
	for (int i = 0; i < st->nbufs; i++) {
		BufState *bs = &st->bufs[i];
		for (int64_t k = 0; k < bs->size; k++) {
			bs->data[k] = pick_cell(r, bs->buf->dtype);
			bs->cell[k] = CELL_INIT;
		}
	}
}

/* The last reason an attempt failed, kept across scratch arenas. */
typedef struct Failure {
	char *message; /* malloc'ed */
	Span span;
} Failure;

static void note_failure(Failure *f, const char *msg, Span sp)
{
	free(f->message);
	f->message = strdup(msg ? msg : "unknown reason");
	f->span = sp;
}

/* The position of v among f's scalar parameters, or -1. */
static int scalar_index(const Func *f, const Var *v)
{
	for (int i = 0, k = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR) {
			if (f->params[i].var == v)
				return k;
			k++;
		}
	return -1;
}

/* `n == 128` (either side) and conjunctions of such, in a fact. */
static void pins_of_fact(const Func *f, const Expr *e, int64_t *val, bool *has)
{
	if (e->kind != EX_BIN)
		return;
	if (e->u.bin.op == OP_AND) {
		pins_of_fact(f, e->u.bin.a, val, has);
		pins_of_fact(f, e->u.bin.b, val, has);
		return;
	}
	const Expr *x = e->u.bin.a, *c = e->u.bin.b;
	if (x->kind == EX_INT)
		x = e->u.bin.b, c = e->u.bin.a;
	if (e->u.bin.op != OP_EQ || x->kind != EX_VAR || c->kind != EX_INT)
		return;
	int k = scalar_index(f, x->u.var);
	if (k >= 0 && dtype_is_int(x->dtype) && dtype_wrap_int(c->u.ival, x->dtype) == c->u.ival) {
		val[k] = c->u.ival;
		has[k] = true;
	}
}

/* Scalar parameters the top-level entry facts pin to one value (`T.assume(n
 * == 128)`, as specialize states): every admissible input has it, so it
 * is taken instead of searched for among small values. */
static void entry_pins(const Func *f, const Stmt *s, int64_t *val, bool *has)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			entry_pins(f, s->u.seq.items[i], val, has);
		return;
	case ST_ASSUME: pins_of_fact(f, s->u.expr, val, has); return;
	case ST_ALLOC:
		if (s->u.alloc.body)
			entry_pins(f, s->u.alloc.body, val, has);
		return;
	case ST_BLOCK: entry_pins(f, s->u.block.body, val, has); return;
	case ST_LET: entry_pins(f, s->u.let.body, val, has); return;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_PASS: case ST_COUNT: return;
	}
}

/* Scalars in `out` that satisfy the scalar-only entry facts. */
static bool choose_scalars(const Func *f, Rng *r, int n, int64_t *out,
			   Failure *why)
{
	Arena scratch;
	arena_init(&scratch);
	bool found = false;
	int64_t *pin = calloc((size_t)n + 1, sizeof *pin);
	bool *pinned = calloc((size_t)n + 1, sizeof *pinned);
	if (!pin || !pinned)
		vs_out_of_memory(((size_t)n + 1) * sizeof *pin);
	entry_pins(f, f->body, pin, pinned);
	for (int t = 0; t < SCALAR_TRIES && !found; t++) {
		int k = 0;
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i].kind == PARAM_SCALAR) {
				/* drawn all the same: the random stream stays the one
				 * of a function without the pin */
				out[k] = pick_scalar(r, f->params[i].var->dtype, t >= SCALAR_TRIES / 2);
				if (pinned[k])
					out[k] = pin[k];
				k++;
			}
		InterpResult res;
		found = interp_scalar_facts_hold(f, out, &scratch, &res);
		if (!found)
			note_failure(why, res.message, res.span);
		if (!found && n == 0)
			break; /* nothing to vary */
	}
	free(pin);
	free(pinned);
	arena_free(&scratch);
	return found;
}

/* One full attempt: a state for the scalars, random cells, repaired and
 * checked; cloned into a on success. */
static State *try_input(Arena *a, const Func *f, Rng *r, const int64_t *scalars,
			Failure *why, bool *fatal)
{
	Arena scratch;
	arena_init(&scratch);
	DiagList d;
	diag_init(&d, &scratch);
	State *out = NULL;
	State *st = state_new(&scratch, f, scalars, &d);
	if (!st) {
		note_failure(why, d.first ? d.first->message : NULL,
			     d.first ? d.first->span : f->span);
		*fatal = true; /* the same scalars fail the same way */
	} else {
		fill_random(r, st);
		InterpResult res;
		if (interp_prepare_input(f, st, &res) == RUN_OK)
			out = state_clone(a, st);
		else {
			note_failure(why, res.message, res.span);
			*fatal = res.status != RUN_ASSUME_FAILED;
		}
	}
	arena_free(&scratch);
	return out;
}

static State *generate(Arena *a, const Func *f, uint64_t seed,
		       const int64_t *fixed, DiagList *d)
{
	Rng r = {seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull};
	int n = 0;
	for (int i = 0; i < f->nparams; i++)
		n += f->params[i].kind == PARAM_SCALAR;
	int64_t *scalars = calloc((size_t)n + 1, sizeof(int64_t));
	Failure why = {0};
	State *st = NULL;
	int attempts = 0;
	const char *what = "no admissible input";
	if (!scalars) {
		diag_add(d, DIAG_ERROR, f->span, "out of memory");
		return NULL;
	}
	while (attempts < GEN_ATTEMPTS && !st) {
		bool fatal = false;
		if (fixed) {
			memcpy(scalars, fixed, sizeof(int64_t) * (size_t)n);
			Arena scratch;
			arena_init(&scratch);
			InterpResult res;
			bool ok = interp_scalar_facts_hold(f, scalars, &scratch, &res);
			if (!ok)
				note_failure(&why, res.message, res.span);
			arena_free(&scratch);
			if (!ok) {
				what = "the given scalar values are not admissible";
				break;
			}
		} else if (!choose_scalars(f, &r, n, scalars, &why)) {
			what = "no scalar values found that are admissible";
			break;
		}
		attempts++;
		st = try_input(a, f, &r, scalars, &why, &fatal);
		if (fatal && (fixed || n == 0))
			break;
	}
	if (!st && attempts)
		diag_add(d, DIAG_ERROR, why.span, "%s for %s (%d attempts): %s", what,
			 f->name, attempts, why.message ? why.message : "unknown reason");
	else if (!st)
		diag_add(d, DIAG_ERROR, why.span, "%s for %s: %s", what, f->name,
			 why.message ? why.message : "unknown reason");
	free(why.message);
	free(scalars);
	return st;
}

State *interp_gen_input(Arena *a, const Func *f, uint64_t seed, DiagList *d)
{
	return generate(a, f, seed, NULL, d);
}

State *interp_gen_input_scalars(Arena *a, const Func *f, uint64_t seed,
				const int64_t *scalars, DiagList *d)
{
	return generate(a, f, seed, scalars, d);
}

/* ---------- transfer ---------- */


/* ---------- cells through layouts ---------- */

static void index_of(const BufState *b, int64_t off, int64_t *ix)
{
	for (int k = b->ndim - 1; k >= 0; k--) {
		ix[k] = off % b->shape[k];
		off /= b->shape[k];
	}
}

typedef enum { VIEW_NONE, VIEW_SAME, VIEW_EXTEND, VIEW_PROJECT } ViewKind;

static bool same_shape(const BufState *x, const BufState *y)
{
	bool same = x->ndim == y->ndim && x->buf->dtype == y->buf->dtype;
	for (int k = 0; same && k < x->ndim; k++)
		same = x->shape[k] == y->shape[k];
	return same;
}

/* How cells of `src` correspond to cells of `dst`: the same shape (cell by
 * cell), dst a transformed version of src (src's logical cell x is dst's
 * cell F(x)), or src a transformed version of dst. */
static ViewKind view_of(const BufState *src, const BufState *dst)
{
	/* the layout chain first: a transposition keeps the shape, and
	 * copying or comparing it cell by cell would mix up the cells */
	if (src->buf != dst->buf && src->buf->dtype == dst->buf->dtype) {
		if (layout_chain_has(dst->buf, src->buf))
			return VIEW_EXTEND;
		if (layout_chain_has(src->buf, dst->buf))
			return VIEW_PROJECT;
	}
	if (same_shape(src, dst))
		return VIEW_SAME;
	return VIEW_NONE;
}

/* For each cell x of the logical one of (a, b), call fn with the offsets of
 * x in the logical buffer and F(x) in the physical one (maps that name
 * scalar parameters take env's values). False if fn says stop, or if a
 * mapped index falls outside the physical shape (the layout is broken:
 * *outside, when given, is then set to x's logical offset), unless
 * skip_outside, which passes over such cells. */
static bool for_each_mapped(const BufState *logical, const BufState *phys, const State *env,
			    bool skip_outside, int64_t *outside,
			    bool (*fn)(void *ctx, int64_t loff, int64_t poff), void *ctx)
{
	int64_t x[64], t[64];
	if (logical->ndim > 64 || phys->ndim > 64)
		return false;
	for (int64_t off = 0; off < logical->size; off++) {
		index_of(logical, off, x);
		int64_t poff = layout_chain_apply(phys->buf, logical->buf, x, t, env)
				       ? bufstate_offset(phys, t)
				       : -1;
		if (poff < 0 && skip_outside)
			continue;
		if (poff < 0) {
			if (outside)
				*outside = off;
			return false;
		}
		if (!fn(ctx, off, poff))
			return false;
	}
	return true;
}

typedef struct CopyCtx {
	const BufState *src;
	BufState *dst;
	bool src_logical;
} CopyCtx;

static bool copy_cell(void *p, int64_t loff, int64_t poff)
{
	CopyCtx *c = p;
	int64_t from = c->src_logical ? loff : poff, to = c->src_logical ? poff : loff;
	c->dst->data[to] = c->src->data[from];
	c->dst->cell[to] = c->src->cell[from];
	return true;
}

static State *transfer(Arena *a, const State *from, const Func *g, DiagList *d, bool partial);

State *state_transfer(Arena *a, const State *from, const Func *g, DiagList *d)
{
	return transfer(a, from, g, d, false);
}

State *state_transfer_partial(Arena *a, const State *from, const Func *g, DiagList *d)
{
	return transfer(a, from, g, d, true);
}

static State *transfer(Arena *a, const State *from, const Func *g, DiagList *d, bool partial)
{
	int n = 0;
	for (int i = 0; i < g->nparams; i++)
		n += g->params[i].kind == PARAM_SCALAR;
	int64_t *scalars = arena_alloc(a, sizeof(int64_t) * (size_t)(n + 1));
	Value *values = arena_alloc(a, sizeof(Value) * (size_t)(n + 1));
	for (int i = 0, k = 0; i < g->nparams; i++) {
		const Var *v = g->params[i].var;
		if (g->params[i].kind != PARAM_SCALAR)
			continue;
		int j = 0;
		while (j < from->nscalars && strcmp(from->scalar_vars[j]->name, v->name))
			j++;
		if (j == from->nscalars) {
			diag_add(d, DIAG_ERROR, v->span,
				 "cannot transfer the input to %s: no scalar %s in it",
				 g->name, v->name);
			return NULL;
		}
		values[k] = from->scalars[j];
		scalars[k++] = dtype_is_float(from->scalar_vars[j]->dtype)
				       ? (int64_t)from->scalars[j].f
				       : from->scalars[j].i;
	}
	State *st = state_new(a, g, scalars, d);
	if (!st)
		return NULL;
	for (int k = 0; k < n; k++)
		if (dtype_is_float(st->scalar_vars[k]->dtype))
			st->scalars[k] = values[k];
	bool extended = false;
	for (int i = 0; i < st->nbufs; i++) {
		BufState *to = &st->bufs[i];
		const BufState *src = find_buffer(from, to->buf->name);
		ViewKind view = src ? view_of(src, to) : VIEW_NONE;
		if (view == VIEW_NONE) {
			StrBuf b = {0};
			sb_printf(&b, "cannot transfer the input to %s: buffer %s ", g->name,
				  to->buf->name);
			if (!src) {
				sb_puts(&b, "is not in it");
			} else {
				sb_printf(&b, "is %s ", dtype_name(to->buf->dtype));
				put_shape(&b, to);
				sb_printf(&b, " there but %s ", dtype_name(src->buf->dtype));
				put_shape(&b, src);
				sb_puts(&b, " in the input");
			}
			char *msg = sb_take(&b);
			diag_add(d, DIAG_ERROR, to->buf->span, "%s", msg);
			free(msg);
			return NULL;
		}
		if (view == VIEW_SAME) {
			if (to->size) {
				memcpy(to->data, src->data, sizeof(Value) * (size_t)to->size);
				memcpy(to->cell, src->cell, (size_t)to->size);
			}
			continue;
		}
		/* through the layout: logical cell x is physical cell F(x);
		 * padding cells of an extended buffer start uninitialised */
		CopyCtx cc = {src, to, view == VIEW_EXTEND};
		bool ok = view == VIEW_EXTEND
				  ? for_each_mapped(src, to, from, partial, NULL, copy_cell, &cc)
				  : for_each_mapped(to, src, from, partial, NULL, copy_cell, &cc);
		if (!ok) {
			diag_add(d, DIAG_ERROR, to->buf->span,
				 "cannot transfer buffer %s to %s: its layout maps a cell outside the shape",
				 to->buf->name, g->name);
			return NULL;
		}
		extended |= view == VIEW_EXTEND;
	}
	if (extended) {
		/* the padding of a transformed input holds what g's entry
		 * facts say (a pad value, or anything readable) */
		InterpResult r;
		if (interp_prepare_input(g, st, &r) != RUN_OK) {
			diag_add(d, DIAG_ERROR, r.span,
				 "cannot extend the input to the layout of %s: %s", g->name,
				 r.message ? r.message : "its entry facts cannot be met");
			return NULL;
		}
	}
	return st;
}

/* ---------- comparison ---------- */

static bool floats_equal(double x, double y, bool ieee, double rel_tol)
{
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y);
	if (x == y)
		return !ieee || signbit(x) == signbit(y); /* -0.0 vs 0.0 */
	if (rel_tol > 0 && isfinite(x) && isfinite(y))
		return fabs(x - y) <= rel_tol * fmax(fabs(x), fabs(y));
	return false;
}

typedef struct CmpCtx {
	const BufState *b, *a; /* before, after */
	bool before_logical;
	bool ieee;
	double tol;
	int64_t boff, aoff; /* the first difference */
} CmpCtx;

static bool cells_equal2(const BufState *b, int64_t boff, const BufState *a, int64_t aoff,
			 bool ieee, double rel_tol)
{
	if (b->cell[boff] != CELL_INIT)
		return true; /* undef: anything; uninit: never read as output */
	if (a->cell[aoff] != CELL_INIT)
		return false;
	if (dtype_is_float(b->buf->dtype))
		return floats_equal(b->data[boff].f, a->data[aoff].f, ieee, rel_tol);
	return b->data[boff].i == a->data[aoff].i;
}

static bool compare_cell(void *p, int64_t loff, int64_t poff)
{
	CmpCtx *c = p;
	c->boff = c->before_logical ? loff : poff;
	c->aoff = c->before_logical ? poff : loff;
	return cells_equal2(c->b, c->boff, c->a, c->aoff, c->ieee, c->tol);
}

static char *cell_diff2(const BufState *b, int64_t boff, const BufState *a, int64_t aoff)
{
	int64_t ix[64] = {0};
	if (b->ndim > 64)
		return strdup("?");
	index_of(b, boff, ix);
	StrBuf s = {0};
	put_index(&s, b->buf->name, b->ndim, ix);
	if (a->ndim <= 64 && !same_shape(a, b)) {
		int64_t jx[64];
		index_of(a, aoff, jx);
		sb_puts(&s, " (");
		put_index(&s, a->buf->name, a->ndim, jx);
		sb_puts(&s, " after)");
	}
	sb_puts(&s, ": ");
	put_cell(&s, b, boff);
	sb_puts(&s, " vs ");
	put_cell(&s, a, aoff);
	return sb_take(&s);
}

/* "A[0]: the layout of A maps it outside the shape (4, 4)" */
static char *outside_diff(const BufState *logical, int64_t off, const BufState *phys)
{
	int64_t ix[64] = {0};
	if (logical->ndim > 64)
		return strdup("?");
	index_of(logical, off, ix);
	StrBuf s = {0};
	put_index(&s, logical->buf->name, logical->ndim, ix);
	sb_printf(&s, ": the layout of %s maps it outside the shape ", phys->buf->name);
	put_shape(&s, phys);
	return sb_take(&s);
}

bool state_equal(const State *before, const State *after, bool ieee,
		 double rel_tol, char **diff)
{
	if (diff)
		*diff = NULL;
	for (int i = 0; i < before->nbufs; i++) {
		const BufState *b = &before->bufs[i];
		const BufState *a = find_buffer(after, b->buf->name);
		ViewKind view = a ? view_of(b, a) : VIEW_NONE;
		if (view == VIEW_NONE) {
			StrBuf s = {0};
			sb_printf(&s, "%s: ", b->buf->name);
			put_shape(&s, b);
			sb_puts(&s, " vs ");
			if (a)
				put_shape(&s, a);
			else
				sb_puts(&s, "missing");
			char *msg = sb_take(&s);
			if (diff)
				*diff = msg;
			else
				free(msg);
			return false;
		}
		CmpCtx c = {b, a, view != VIEW_PROJECT, ieee, rel_tol, 0, 0};
		bool same;
		int64_t outside = -1;
		if (view == VIEW_SAME) {
			same = true;
			for (int64_t off = 0; off < b->size && same; off++) {
				c.boff = c.aoff = off;
				same = cells_equal2(b, off, a, off, ieee, rel_tol);
			}
		} else if (view == VIEW_EXTEND) {
			same = for_each_mapped(b, a, before, false, &outside, compare_cell, &c);
		} else {
			same = for_each_mapped(a, b, before, false, &outside, compare_cell, &c);
		}
		if (same)
			continue;
		if (diff && outside >= 0)
			*diff = outside_diff(view == VIEW_EXTEND ? b : a, outside,
					     view == VIEW_EXTEND ? a : b);
		else if (diff)
			*diff = cell_diff2(b, c.boff, a, c.aoff);
		return false;
	}
	return true;
}

/* Whether b changed the layout of one of a's buffers (same name, b's
 * buffer transformed from a's). */
static bool refines_layout(const Func *a, const Func *b)
{
	for (int i = 0; i < b->nparams; i++) {
		const Buffer *pb = b->params[i].buf;
		if (!pb || !pb->layout)
			continue;
		for (int j = 0; j < a->nparams; j++) {
			const Buffer *pa = a->params[j].buf;
			if (pa && pa != pb && strcmp(pa->name, pb->name) == 0 &&
			    layout_chain_has(pb, pa))
				return true;
		}
	}
	return false;
}

/* True if b's entry facts pin a scalar parameter to one value that a's
 * leave free (b is a's specialization, rewrites/specialize.c): b agrees
 * with a only on b's inputs, so the trials take them from b. */
static bool restricts(const Func *a, const Func *b)
{
	int na = 0, nb = 0;
	for (int i = 0; i < a->nparams; i++)
		na += a->params[i].kind == PARAM_SCALAR;
	for (int i = 0; i < b->nparams; i++)
		nb += b->params[i].kind == PARAM_SCALAR;
	int64_t *va = calloc((size_t)na + 1, sizeof *va), *vb = calloc((size_t)nb + 1, sizeof *vb);
	bool *ha = calloc((size_t)na + 1, sizeof *ha), *hb = calloc((size_t)nb + 1, sizeof *hb);
	if (!va || !vb || !ha || !hb)
		vs_out_of_memory(((size_t)na + (size_t)nb + 2) * sizeof *va);
	entry_pins(a, a->body, va, ha);
	entry_pins(b, b->body, vb, hb);
	bool more = false;
	for (int i = 0, k = 0; i < b->nparams && !more; i++) {
		if (b->params[i].kind != PARAM_SCALAR)
			continue;
		if (hb[k]) {
			/* the same name pinned in a? */
			bool in_a = false;
			for (int j = 0, q = 0; j < a->nparams; j++) {
				if (a->params[j].kind != PARAM_SCALAR)
					continue;
				if (ha[q] && strcmp(a->params[j].var->name, b->params[i].var->name) == 0)
					in_a = true;
				q++;
			}
			more = !in_a;
		}
		k++;
	}
	free(va);
	free(vb);
	free(ha);
	free(hb);
	return more;
}

/* ---------- differential check ---------- */

static int64_t total_cells(const State *s)
{
	int64_t n = 0;
	for (int i = 0; i < s->nbufs; i++)
		n += s->bufs[i].size;
	return n;
}

static void put_input(StrBuf *b, const State *in)
{
	if (in->nscalars) {
		sb_puts(b, "  input scalars: ");
		put_scalars(b, in, ", ");
		sb_puts(b, "\n");
	}
	if (total_cells(in) > SMALL_INPUT_CELLS)
		return;
	char *text = state_format(in);
	sb_printf(b, "  input:\n%s", text);
	free(text);
}

static void put_where(StrBuf *b, Span sp)
{
	if (sp.line > 0)
		sb_printf(b, " (%s:%d:%d)", sp.src && sp.src->name ? sp.src->name : "<input>",
			  sp.line, sp.col);
}

static const char *status_text(RunStatus s)
{
	switch (s) {
	case RUN_OK: return "runs";
	case RUN_UB: return "has undefined behaviour";
	case RUN_ASSUME_FAILED: return "fails a T.assume";
	case RUN_LIMIT: return "stops at the step limit";
	case RUN_UNSUPPORTED: return "cannot be run by the interpreter";
	}
	return "stops";
}

typedef enum { TRIAL_SAME, TRIAL_SKIP, TRIAL_DIFF, TRIAL_ERROR } Trial;

static Trial run_trial(const Func *fa, const Func *fb, int t, uint64_t seed,
		       StrBuf *rep, Failure *skip)
{
	Arena ar;
	arena_init(&ar);
	DiagList d;
	diag_init(&d, &ar);
	Trial res = TRIAL_SAME;
	char *text = NULL;
	InterpResult r1, r2;
	/* After a layout change, even trials take inputs from the transformed
	 * function (its padding facts decide the padding) and give a their
	 * logical view; odd trials take a's inputs and extend them into b's
	 * layout (padding repaired to b's facts). Only the second direction
	 * sees a layout that cannot hold every input of a (two cells in one):
	 * the first only makes inputs on which a agrees with it. */
	bool from_b = (refines_layout(fa, fb) && t % 2 == 0) || restricts(fa, fb);
	State *gen = interp_gen_input(&ar, from_b ? fb : fa, seed, &d);
	State *in = gen && from_b ? state_transfer(&ar, gen, fa, &d) : gen;
	State *sa = in ? state_clone(&ar, in) : NULL;
	State *sb = NULL;
	if (!in) {
		text = diag_render(&d);
		sb_printf(rep, "cannot generate an input for %s:\n%s", fa->name, text);
		res = TRIAL_ERROR;
	} else if (interp_run(fa, sa, 0, &r1) == RUN_LIMIT) {
		/* no verdict either way: the kernel runs longer than the
		 * interpreter runs anything */
		sb_printf(rep, "trial %d (seed %llu): no verdict: %s reached the interpreter's step limit of %llu steps",
			  t, (unsigned long long)seed, fa->name,
			  (unsigned long long)INTERP_DEFAULT_STEP_LIMIT);
		put_where(rep, r1.span);
		sb_puts(rep, "\n");
		res = TRIAL_ERROR;
	} else if (r1.status == RUN_UNSUPPORTED) {
		/* no verdict either way (never a skipped trial: that would
		 * let anything pass) */
		sb_printf(rep, "trial %d (seed %llu): no verdict: %s: %s", t,
			  (unsigned long long)seed, fa->name, r1.message ? r1.message : "?");
		put_where(rep, r1.span);
		sb_puts(rep, "\n");
		res = TRIAL_ERROR;
	} else if (r1.status != RUN_OK) {
		note_failure(skip, r1.message, r1.span);
		res = TRIAL_SKIP; /* not admissible, or a itself has UB here */
	} else if (!(sb = from_b ? state_clone(&ar, gen) : state_transfer(&ar, in, fb, &d))) {
		text = diag_render(&d);
		sb_printf(rep, "%s", text);
		res = TRIAL_ERROR;
	} else if (interp_run(fb, sb, 0, &r2) == RUN_LIMIT) {
		sb_printf(rep, "trial %d (seed %llu): no verdict: %s reached the interpreter's step limit of %llu steps, where %s ran in %llu",
			  t, (unsigned long long)seed, fb->name,
			  (unsigned long long)INTERP_DEFAULT_STEP_LIMIT, fa->name,
			  (unsigned long long)r1.steps);
		put_where(rep, r2.span);
		sb_puts(rep, "\n");
		res = TRIAL_ERROR;
	} else if (r2.status != RUN_OK) {
		sb_printf(rep, "trial %d (seed %llu): %s %s where %s runs without: %s",
			  t, (unsigned long long)seed, fb->name, status_text(r2.status),
			  fa->name, r2.message ? r2.message : "?");
		put_where(rep, r2.span);
		sb_puts(rep, "\n");
		put_input(rep, in);
		res = TRIAL_DIFF;
	} else if (!state_equal(sa, sb, false, 0, &text)) {
		sb_printf(rep, "trial %d (seed %llu): outputs differ (%s vs %s) at %s\n",
			  t, (unsigned long long)seed, fa->name, fb->name, text);
		put_input(rep, in);
		res = TRIAL_DIFF;
	}
	free(text);
	arena_free(&ar);
	return res;
}

int interp_equiv(const Func *a, const Func *b, int trials, uint64_t seed,
		 char **report)
{
	StrBuf rep = {0};
	Failure skip = {0};
	int usable = 0, skipped = 0, rc = 0;
	if (trials < 1)
		trials = 1;
	for (int t = 0; t < trials && rc == 0; t++) {
		switch (run_trial(a, b, t, seed + (uint64_t)t, &rep, &skip)) {
		case TRIAL_SAME: usable++; break;
		case TRIAL_SKIP: skipped++; break;
		case TRIAL_DIFF: rc = 1; break;
		case TRIAL_ERROR: rc = 2; break;
		}
	}
	if (rc == 0 && usable == 0) {
		sb_printf(&rep, "no usable trial: %s does not run on any of %d generated inputs (last: %s)",
			  a->name, trials, skip.message ? skip.message : "?");
		put_where(&rep, skip.span);
		sb_puts(&rep, "\n");
		rc = 2;
	} else if (rc == 0) {
		sb_printf(&rep, "%d trials agree", usable);
		if (restricts(a, b))
			sb_puts(&rep, " (inputs drawn from the second function: its entry facts fix a size "
				      "the first leaves free)");
		if (skipped)
			sb_printf(&rep, " (%d inputs skipped: %s does not run on them)",
				  skipped, a->name);
		sb_puts(&rep, "\n");
	}
	free(skip.message);
	char *text = sb_take(&rep);
	if (report)
		*report = text;
	else
		free(text);
	return rc;
}
