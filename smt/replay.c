/* smt/replay.c — counterexample reports and their replay: the model's
 * variable and cell values, the source lines involved, and a run of the
 * reference interpreter before and after the rewrite on inputs built from
 * the model (then on a few more seeds) that shows the first differing
 * output or the undefined behaviour the rewrite introduces. */
#include "smt/replay.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/analysis/interval.h"
#include "kernel/half.h"
#include "kernel/interp.h"

const char *replay_status_name(ReplayStatus s)
{
	switch (s) {
	case REPLAY_NONE: return "none";
	case REPLAY_CONFIRMED: return "confirmed";
	case REPLAY_UNCONFIRMED: return "unconfirmed";
	case REPLAY_IMPOSSIBLE: return "impossible";
	case REPLAY_SKIPPED: return "skipped";
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

/* The value of an integer index expression under the model: literals,
 * the model's variables and + - * // % min max, exactly (false on
 * anything else, a missing variable or an overflow). Reports only. */
static bool model_int(const Model *m, const Expr *e, int depth, int64_t *out)
{
	if (!e || depth > 64)
		return false;
	int64_t x, y;
	switch (e->kind) {
	case EX_INT:
		*out = e->u.ival;
		return true;
	case EX_VAR:
		for (int i = 0; m && i < m->nvars; i++)
			if (m->vars[i].var == e->u.var && !m->vars[i].val.is_float) {
				*out = m->vars[i].val.ival;
				return true;
			}
		return false;
	case EX_NEG:
		return model_int(m, e->u.un.a, depth + 1, &x) && !__builtin_sub_overflow(0, x, out);
	case EX_CAST:
		return !dtype_is_float(e->dtype) && model_int(m, e->u.un.a, depth + 1, out);
	case EX_BIN:
		if (!model_int(m, e->u.bin.a, depth + 1, &x) || !model_int(m, e->u.bin.b, depth + 1, &y))
			return false;
		switch (e->u.bin.op) {
		case OP_ADD: return !__builtin_add_overflow(x, y, out);
		case OP_SUB: return !__builtin_sub_overflow(x, y, out);
		case OP_MUL: return !__builtin_mul_overflow(x, y, out);
		case OP_FLOORDIV:
		case OP_FLOORMOD: {
			if (y == 0 || (x == INT64_MIN && y == -1))
				return false;
			int64_t q = x / y, r = x % y;
			if (r != 0 && ((r < 0) != (y < 0)))
				q--, r += y;
			*out = e->u.bin.op == OP_FLOORDIV ? q : r;
			return true;
		}
		case OP_MIN: *out = x < y ? x : y; return true;
		case OP_MAX: *out = x > y ? x : y; return true;
		case OP_SHL: case OP_SHR: case OP_DIV: case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		case OP_AND: case OP_OR: case OP_COUNT:
			return false;
		}
		return false;
	case EX_FLOAT: case EX_NOT: case EX_SELECT: case EX_LOAD: case EX_UNDEF: case EX_LET:
	case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	return false;
}

/* "B[0, 3]" for the cell an access reaches under the model, or NULL. */
static char *clash_cell(const Model *m, const ObligationClash *cl, Expr **idx)
{
	StrBuf b = {0};
	sb_printf(&b, "%s[", cl->buf->name);
	for (int k = 0; k < cl->nidx; k++) {
		int64_t v;
		if (!model_int(m, idx[k], 0, &v)) {
			free(sb_take(&b));
			return NULL;
		}
		sb_printf(&b, "%s%lld", k ? ", " : "", (long long)v);
	}
	sb_puts(&b, "]");
	return sb_take(&b);
}

/* The violation said plainly, where the obligation says which two
 * accesses must not meet: "the write of C at 5:13 (first instance) and
 * the read of C at 5:27 (second instance) both touch C[1]". */
static void explain_clash(StrBuf *b, const Obligation *o, const Model *m)
{
	const ObligationClash *cl = o->clash;
	if (!cl || !m)
		return;
	char *c1 = clash_cell(m, cl, cl->first), *c2 = clash_cell(m, cl, cl->second);
	const char *w1 = cl->first_write ? "write" : "read", *w2 = cl->second_write ? "write" : "read";
	if (c1 && c2 && strcmp(c1, c2) == 0)
		sb_printf(b, "    violation: the %s of %s at %d:%d (first instance) and the %s at %d:%d "
			  "(second instance) both touch %s\n",
			  w1, cl->buf->name, cl->first_span.line, cl->first_span.col, w2,
			  cl->second_span.line, cl->second_span.col, c1);
	else
		sb_printf(b, "    violation: the %s of %s at %d:%d (first instance) and the %s at %d:%d "
			  "(second instance) touch the same cell of %s\n",
			  w1, cl->buf->name, cl->first_span.line, cl->first_span.col, w2,
			  cl->second_span.line, cl->second_span.col, cl->buf->name);
	free(c1);
	free(c2);
}

/* ---- a no-op goal said plainly: what the store would write, into which
 * cell, over which value, and the padding it reads ---- */

typedef struct MVal {
	bool is_float;
	int64_t i;
	double f;
} MVal;

/* Bindings of variables the model does not hold (a layout's physical
 * index variables). */
typedef struct MBind {
	int n;
	Var *const *vars;
	const int64_t *vals;
} MBind;

static const ModelCell *model_cell(const Model *m, const Buffer *buf, int n, const int64_t *idx)
{
	for (int i = 0; m && i < m->ncells; i++) {
		const ModelCell *c = &m->cells[i];
		if (c->buf != buf || c->nidx != n)
			continue;
		bool same = true;
		for (int k = 0; k < n && same; k++)
			same = c->idx[k] == idx[k];
		if (same)
			return c;
	}
	return NULL;
}

static MVal mval_of(const ModelValue *v)
{
	return v->is_float ? (MVal){true, 0, v->fval} : (MVal){false, v->ival, 0};
}

static double as_double(MVal v) { return v.is_float ? v.f : (double)v.i; }

/* e under the model (loads read its cells) and the bindings; false when
 * the model does not decide it or the expression is beyond this small
 * evaluator (reports only: the sentence is then left out). */
static bool model_eval(const Model *m, const MBind *bd, const Expr *e, int depth, MVal *out)
{
	MVal x, y;
	if (depth > 32)
		return false;
	switch (e->kind) {
	case EX_INT: *out = (MVal){false, e->u.ival, 0}; return true;
	case EX_FLOAT: *out = (MVal){true, 0, e->u.fval}; return true;
	case EX_VAR:
		for (int i = 0; bd && i < bd->n; i++)
			if (bd->vars[i] == e->u.var) {
				*out = (MVal){false, bd->vals[i], 0};
				return true;
			}
		for (int i = 0; m && i < m->nvars; i++)
			if (m->vars[i].var == e->u.var) {
				*out = mval_of(&m->vars[i].val);
				return true;
			}
		return false;
	case EX_LOAD: {
		int64_t idx[16];
		int n = e->u.load.nidx;
		if (n > 16)
			return false;
		for (int k = 0; k < n; k++) {
			if (!model_eval(m, bd, e->u.load.idx[k], depth + 1, &x) || x.is_float)
				return false;
			idx[k] = x.i;
		}
		const ModelCell *c = model_cell(m, e->u.load.buf, n, idx);
		if (!c)
			return false;
		*out = mval_of(&c->val);
		return true;
	}
	case EX_NEG:
		if (!model_eval(m, bd, e->u.un.a, depth + 1, &x))
			return false;
		*out = x.is_float ? (MVal){true, 0, -x.f} : (MVal){false, -x.i, 0};
		return !( !x.is_float && x.i == INT64_MIN);
	case EX_NOT:
		if (!model_eval(m, bd, e->u.un.a, depth + 1, &x) || x.is_float)
			return false;
		*out = (MVal){false, !x.i, 0};
		return true;
	case EX_CAST:
		if (!model_eval(m, bd, e->u.un.a, depth + 1, &x))
			return false;
		if (dtype_is_float(e->dtype))
			*out = (MVal){true, 0, as_double(x)};
		else if (!x.is_float)
			*out = x;
		else
			return false;
		return true;
	case EX_BIN: {
		if (!model_eval(m, bd, e->u.bin.a, depth + 1, &x) || !model_eval(m, bd, e->u.bin.b, depth + 1, &y))
			return false;
		bool fl = x.is_float || y.is_float;
		double a = as_double(x), c = as_double(y);
		int64_t r = 0;
		switch (e->u.bin.op) {
		case OP_ADD:
			if (fl) { *out = (MVal){true, 0, a + c}; return true; }
			if (__builtin_add_overflow(x.i, y.i, &r)) return false;
			break;
		case OP_SUB:
			if (fl) { *out = (MVal){true, 0, a - c}; return true; }
			if (__builtin_sub_overflow(x.i, y.i, &r)) return false;
			break;
		case OP_MUL:
			if (fl) { *out = (MVal){true, 0, a * c}; return true; }
			if (__builtin_mul_overflow(x.i, y.i, &r)) return false;
			break;
		case OP_MIN: if (fl) { *out = (MVal){true, 0, a < c ? a : c}; return true; } r = x.i < y.i ? x.i : y.i; break;
		case OP_MAX: if (fl) { *out = (MVal){true, 0, a > c ? a : c}; return true; } r = x.i > y.i ? x.i : y.i; break;
		case OP_FLOORDIV:
		case OP_FLOORMOD: {
			if (fl || y.i == 0 || (x.i == INT64_MIN && y.i == -1))
				return false;
			int64_t q = x.i / y.i, rem = x.i % y.i;
			if (rem != 0 && ((rem < 0) != (y.i < 0)))
				q--, rem += y.i;
			r = e->u.bin.op == OP_FLOORDIV ? q : rem;
			break;
		}
		case OP_EQ: r = fl ? a == c : x.i == y.i; break;
		case OP_NE: r = fl ? a != c : x.i != y.i; break;
		case OP_LT: r = fl ? a < c : x.i < y.i; break;
		case OP_LE: r = fl ? a <= c : x.i <= y.i; break;
		case OP_GT: r = fl ? a > c : x.i > y.i; break;
		case OP_GE: r = fl ? a >= c : x.i >= y.i; break;
		case OP_AND: if (fl) return false; r = x.i && y.i; break;
		case OP_OR: if (fl) return false; r = x.i || y.i; break;
		case OP_DIV: case OP_SHL: case OP_SHR: case OP_COUNT:
			return false;
		}
		/* the program's integers wrap at their width; comparisons are 0 / 1 */
		*out = (MVal){false, dtype_is_float(e->dtype) ? r : dtype_wrap_int(r, e->dtype), 0};
		return true;
	}
	case EX_SELECT: case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	return false;
}

static void mval_text(StrBuf *b, MVal v)
{
	value_text(b, &(ModelValue){v.is_float, v.i, v.f, NULL});
}

/* "A[0, 3, 2]" for a load under the model into idx, or false. */
static bool load_cell(const Model *m, const Expr *e, int64_t *idx)
{
	MVal x;
	for (int k = 0; k < e->u.load.nidx && k < 16; k++) {
		if (!model_eval(m, NULL, e->u.load.idx[k], 0, &x) || x.is_float)
			return false;
		idx[k] = x.i;
	}
	return e->u.load.nidx <= 16;
}

static void cell_text(StrBuf *b, const Buffer *buf, int n, const int64_t *idx)
{
	sb_printf(b, "%s[", buf->name);
	for (int k = 0; k < n; k++)
		sb_printf(b, "%s%lld", k ? ", " : "", (long long)idx[k]);
	sb_puts(b, "]");
}

/* The padding cells the stored value reads: "; A[0, 3, 2] is padding
 * of A, T.undef() (any value)". */
static void explain_padding_reads(StrBuf *b, const Model *m, const Expr *e, int depth)
{
	if (depth > 32)
		return;
	switch (e->kind) {
	case EX_LOAD: {
		const Layout *lay = e->u.load.buf->layout;
		int64_t idx[16];
		const Expr *pad = lay ? (lay->all_padding ? lay->all_padding : lay->pad_predicate) : NULL;
		MVal in;
		if (!pad || !lay->inv_vars || !load_cell(m, e, idx))
			return;
		MBind bd = {e->u.load.nidx, lay->inv_vars, idx};
		if (!model_eval(m, &bd, pad, 0, &in) || in.is_float || !in.i)
			return;
		sb_puts(b, "; ");
		cell_text(b, e->u.load.buf, e->u.load.nidx, idx);
		sb_printf(b, " is padding of %s", e->u.load.buf->name);
		switch (lay->pad_kind) {
		case PAD_UNDEF: sb_puts(b, ", whose pad value is T.undef() (any value)"); break;
		case PAD_VALUE: {
			MVal pv;
			sb_puts(b, ", holding its pad value");
			if (lay->pad_value && model_eval(m, &bd, lay->pad_value, 0, &pv)) {
				sb_puts(b, " ");
				mval_text(b, pv);
			}
			break;
		}
		case PAD_NONE_GIVEN: sb_puts(b, ", which has no pad value"); break;
		}
		return;
	}
	case EX_BIN:
		explain_padding_reads(b, m, e->u.bin.a, depth + 1);
		explain_padding_reads(b, m, e->u.bin.b, depth + 1);
		return;
	case EX_NEG: case EX_NOT: case EX_CAST:
		explain_padding_reads(b, m, e->u.un.a, depth + 1);
		return;
	case EX_INT: case EX_FLOAT: case EX_VAR: case EX_SELECT: case EX_UNDEF: case EX_LET:
	case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return;
	}
}

/* "violation: the store at 9:13 writes 2 into B[0], which holds 0: not
 * a no-op; A[0, 3, 2] is padding of A, ..." (at the values printed next) */
static void explain_store(StrBuf *b, const Obligation *o, const Model *m)
{
	const ObligationStore *st = o->store;
	int64_t idx[16];
	MVal x, now;
	if (!st || !m || st->nidx > 16)
		return;
	for (int k = 0; k < st->nidx; k++) {
		if (!model_eval(m, NULL, st->idx[k], 0, &x) || x.is_float)
			return;
		idx[k] = x.i;
	}
	const ModelCell *old = model_cell(m, st->buf, st->nidx, idx);
	if (!old || !model_eval(m, NULL, st->value, 0, &now))
		return;
	/* the values follow on the next line, once */
	sb_printf(b, "    violation: the store at %d:%d writes ", st->span.line, st->span.col);
	mval_text(b, now);
	sb_puts(b, " into ");
	cell_text(b, st->buf, st->nidx, idx);
	sb_puts(b, ", which holds ");
	value_text(b, &old->val);
	sb_puts(b, ": not a no-op");
	explain_padding_reads(b, m, st->value, 0);
	sb_puts(b, "\n");
}

static void explain_model(StrBuf *b, const Obligation *o, const Model *m)
{
	sb_printf(b, "  counterexample (%s):\n", o->kind);
	explain_clash(b, o, m);
	explain_store(b, o, m);
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

/* ---------- the replay budget: how long a run would be ----------
 * Loop iterations of a function under given scalar values, from the
 * intervals of loop bounds (a loop variable ranges over its loop, a let
 * over its value's interval); a bound that depends on buffer contents
 * counts as its dtype's whole range. Sums and products saturate at
 * WORK_CAP, so no estimate overflows. */

#define WORK_CAP ((Wide)1 << 62)
enum { EST_MAX_VARS = 512, EST_MAX_DEPTH = 400 };

typedef struct Estimate {
	int n;
	const Var *vars[EST_MAX_VARS];
	Interval iv[EST_MAX_VARS];
} Estimate;

static bool est_push(Estimate *e, const Var *v, Interval iv)
{
	if (e->n == EST_MAX_VARS)
		return false; /* the var reads as its dtype's range */
	e->vars[e->n] = v;
	e->iv[e->n++] = iv;
	return true;
}

static Interval est_var(const Estimate *e, const Var *v)
{
	for (int i = e->n - 1; i >= 0; i--)
		if (e->vars[i] == v)
			return e->iv[i];
	return iv_dtype(v->dtype);
}

static Interval est_expr(Estimate *e, const Expr *x, int depth)
{
	if (depth > EST_MAX_DEPTH)
		return iv_dtype(x->dtype);
	switch (x->kind) {
	case EX_INT: return iv_point(x->u.ival);
	case EX_VAR: return est_var(e, x->u.var);
	case EX_BIN: {
		BinOp op = x->u.bin.op;
		if (op >= OP_EQ)
			return iv_make(0, 1); /* comparisons, and, or */
		Interval a = est_expr(e, x->u.bin.a, depth + 1);
		Interval b = est_expr(e, x->u.bin.b, depth + 1);
		return iv_wrap(iv_arith(op, a, b), x->dtype);
	}
	case EX_NOT: return iv_make(0, 1);
	case EX_NEG: return iv_wrap(iv_neg(est_expr(e, x->u.un.a, depth + 1)), x->dtype);
	case EX_SELECT:
		return iv_union(est_expr(e, x->u.sel.a, depth + 1),
				est_expr(e, x->u.sel.b, depth + 1));
	case EX_CAST:
		return iv_convert(est_expr(e, x->u.un.a, depth + 1), x->u.un.a->dtype,
				  x->dtype);
	case EX_LET: {
		int n = e->n;
		est_push(e, x->u.let.var, est_expr(e, x->u.let.value, depth + 1));
		Interval r = est_expr(e, x->u.let.body, depth + 1);
		e->n = n;
		return r;
	}
	case EX_FLOAT: case EX_LOAD: case EX_UNDEF: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return iv_dtype(x->dtype);
	}
	return iv_dtype(x->dtype);
}

static Wide sat_add(Wide a, Wide b) { return a + b > WORK_CAP ? WORK_CAP : a + b; }
static Wide sat_mul(Wide a, Wide b)
{
	if (a == 0 || b == 0)
		return 0;
	return a > WORK_CAP / b ? WORK_CAP : a * b;
}

/* Loop iterations of s, the iterations of nested loops included. */
static Wide est_stmt(Estimate *e, const Stmt *s, int depth)
{
	if (depth > EST_MAX_DEPTH)
		return 0; /* too deep to estimate: the step limit stops it */
	switch (s->kind) {
	case ST_SEQ: {
		Wide w = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			w = sat_add(w, est_stmt(e, s->u.seq.items[i], depth + 1));
		return w;
	}
	case ST_FOR: {
		Interval lo = est_expr(e, s->u.loop.min, 0);
		Interval ext = est_expr(e, s->u.loop.extent, 0);
		if (iv_is_empty(ext) || (iv_has_hi(ext) && ext.hi <= 0))
			return 0;
		Wide count = iv_has_hi(ext) && ext.hi < WORK_CAP ? ext.hi : WORK_CAP;
		Interval range = iv_has_lo(lo) && iv_has_hi(lo) && count < WORK_CAP
					 ? iv_make(lo.lo, lo.hi + count - 1)
					 : iv_unbounded();
		int n = e->n;
		est_push(e, s->u.loop.var, iv_wrap(range, s->u.loop.var->dtype));
		Wide body = est_stmt(e, s->u.loop.body, depth + 1);
		e->n = n;
		return sat_mul(count, sat_add(1, body));
	}
	case ST_IF: {
		Wide t = est_stmt(e, s->u.cond.then_s, depth + 1);
		Wide f = s->u.cond.else_s ? est_stmt(e, s->u.cond.else_s, depth + 1) : 0;
		return t > f ? t : f;
	}
	case ST_ALLOC:
		return s->u.alloc.body ? est_stmt(e, s->u.alloc.body, depth + 1) : 0;
	case ST_BLOCK: return est_stmt(e, s->u.block.body, depth + 1);
	case ST_LET: {
		int n = e->n;
		est_push(e, s->u.let.var, est_expr(e, s->u.let.value, 0));
		Wide w = est_stmt(e, s->u.let.body, depth + 1);
		e->n = n;
		return w;
	}
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return 0;
	}
	return 0;
}

/* The iterations of f with its scalar parameters at `scalars` (in
 * parameter order, as the replay's inputs hold them); *cells (may be
 * NULL) gets the cells of its largest buffer parameter. */
static Wide func_work(const Func *f, const int64_t *scalars, Wide *cells)
{
	Estimate *e = calloc(1, sizeof *e);
	if (!e) {
		if (cells)
			*cells = WORK_CAP;
		return WORK_CAP;
	}
	int k = 0;
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_SCALAR) {
			DType t = f->params[i].var->dtype;
			est_push(e, f->params[i].var, iv_point(iv_wrap_value(scalars[k++], t)));
		}
	if (cells)
		*cells = 0;
	for (int i = 0; cells && i < f->nparams; i++) {
		const Buffer *b = f->params[i].buf; /* a buffer or a matched handle */
		if (!b)
			continue;
		Wide n = 1;
		for (int d = 0; d < b->ndim; d++) {
			Interval ext = est_expr(e, b->shape[d], 0);
			Wide hi = !iv_has_hi(ext) || ext.hi > WORK_CAP ? WORK_CAP : ext.hi;
			n = sat_mul(n, hi < 0 ? 0 : hi);
		}
		if (n > *cells)
			*cells = n;
	}
	Wide w = est_stmt(e, f->body, 0);
	free(e);
	return w;
}

static Wide replay_work(const Func *before, const Func *after, const int64_t *scalars)
{
	return sat_add(func_work(before, scalars, NULL), after ? func_work(after, scalars, NULL) : 0);
}

/* Whether the model's sizes make a buffer larger than the interpreter
 * holds: no input can be built from them. */
static bool too_wide(const Func *before, const int64_t *scalars)
{
	Wide cells = 0;
	func_work(before, scalars, &cells);
	return cells > INTERP_MAX_CELLS;
}

/* n in words a person reads at a glance: "4.3 billion", "65 thousand". */
static void about(StrBuf *b, Wide n)
{
	static const struct { double unit; const char *name; } units[] = {
		{1e18, "quintillion"}, {1e15, "quadrillion"}, {1e12, "trillion"},
		{1e9, "billion"},      {1e6, "million"},      {1e3, "thousand"},
	};
	if (n >= WORK_CAP) {
		sb_puts(b, "more than 4 quintillion");
		return;
	}
	if (n < 10000) {
		sb_printf(b, "%lld", (long long)n);
		return;
	}
	for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
		double v = (double)n / units[i].unit;
		if (v >= 1) {
			sb_printf(b, v < 10 ? "%.1f %s" : "%.0f %s", v, units[i].name);
			return;
		}
	}
	sb_printf(b, "%lld", (long long)n);
}

/* The scalar parameters of f that a loop bound, a let or a buffer shape
 * reads: the sizes a smaller model may shrink. */
typedef struct SizeVars {
	const Func *f;
	int n;
	Var **vars;
} SizeVars;

static void note_size_var(const Expr *x, void *ud)
{
	SizeVars *sv = ud;
	if (x->kind != EX_VAR)
		return;
	for (int i = 0; i < sv->n; i++)
		if (sv->vars[i] == x->u.var)
			return;
	for (int i = 0; i < sv->f->nparams; i++)
		if (sv->f->params[i].kind == PARAM_SCALAR && sv->f->params[i].var == x->u.var)
			sv->vars[sv->n++] = x->u.var;
}

static void size_vars_of_stmt(SizeVars *sv, const Stmt *s)
{
	switch (s->kind) {
	case ST_FOR:
		expr_each_post(s->u.loop.min, note_size_var, sv);
		expr_each_post(s->u.loop.extent, note_size_var, sv);
		break;
	case ST_LET: expr_each_post(s->u.let.value, note_size_var, sv); break;
	case ST_ALLOC:
		for (int k = 0; k < s->u.alloc.buf->ndim; k++)
			expr_each_post(s->u.alloc.buf->shape[k], note_size_var, sv);
		break;
	case ST_SEQ: case ST_IF: case ST_STORE: case ST_ASSUME: case ST_EVAL:
	case ST_BLOCK: case ST_PASS: case ST_COUNT:
		break;
	}
	for (int i = 0; i < stmt_nchildren(s); i++)
		size_vars_of_stmt(sv, stmt_child(s, i));
}

static void size_vars_of(SizeVars *sv, const Func *g)
{
	for (int i = 0; i < g->nparams; i++)
		if (g->params[i].buf)
			for (int k = 0; k < g->params[i].buf->ndim; k++)
				expr_each_post(g->params[i].buf->shape[k], note_size_var, sv);
	size_vars_of_stmt(sv, g->body);
}

static double replay_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A model of the same query whose size parameters lie within the first
 * cap that has one, when it fits the budget; NULL otherwise. A few
 * checks of at most SMALLER_CHECK_MS each, SMALLER_TOTAL_MS in all. */
enum { SMALLER_CHECK_MS = 100, SMALLER_TOTAL_MS = 300 };

static const Model *smaller_model(Arena *a, Solver *solver, const Obligation *o,
				  FloatMode fm, const Func *before, const Func *after,
				  int64_t **scalars_out, bool *tried)
{
	*tried = false;
	int np = before->nparams;
	SizeVars sv = {before, 0, arena_alloc(a, sizeof(Var *) * (size_t)(np + 1))};
	size_vars_of(&sv, before);
	if (after && after->nparams == np)
		size_vars_of(&sv, after);
	if (!sv.n || !solver)
		return NULL;
	*tried = true;
	static const int64_t caps[] = {16, 256, 4096, 65536};
	double t0 = replay_now();
	for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
		if ((replay_now() - t0) * 1000.0 > SMALLER_TOTAL_MS)
			break;
		Model *m = smt_model_within(solver, a, o, fm, sv.n, sv.vars, caps[i],
					    SMALLER_CHECK_MS);
		if (!m)
			continue;
		int64_t *sc = model_scalars(a, before, m);
		if (replay_work(before, after, sc) > REPLAY_MAX_ITERATIONS ||
		    too_wide(before, sc))
			continue;
		*scalars_out = sc;
		return m;
	}
	return NULL;
}

static BufState *state_buf_of(State *s, const Buffer *b)
{
	for (int i = 0; i < s->nbufs; i++)
		if (s->bufs[i].buf == b)
			return &s->bufs[i];
	return state_buffer(s, b->name);
}

/* v as a cell of dtype t holds it: a float16 or float32 cell holds a
 * value of its dtype (a real-mode model may give any rational). */
static double round_to_dtype(double v, DType t)
{
	return t == DT_FLOAT16 ? vs_f16_round(v) : t == DT_FLOAT32 ? (double)(float)v : v;
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
			bs->data[off].f = round_to_dtype(c->val.is_float ? c->val.fval
									 : (double)c->val.ival,
							 bs->buf->dtype);
		else
			bs->data[off].i = c->val.ival;
		bs->cell[off] = CELL_INIT;
	}
}

/* Float inputs with a wide range of magnitudes: sums then depend on the
 * order of accumulation under IEEE rounding. float16 gets magnitudes of
 * its own (1e8 would be inf there, and inf - inf is NaN in either order);
 * every value is rounded to the buffer's dtype, as a cell holds it. */
static void widen_floats(State *s, uint64_t seed)
{
	static const double pool[] = {1e8, -1e8, 1.0, 3.0, 0.1, -0.0, 1e-8, 16777217.0, -2.5};
	static const double pool16[] = {4096.0, -4096.0, 1.0, 3.0, 0.1, -0.0, 1e-3, 2049.0, -2.5};
	enum { NPOOL = sizeof pool / sizeof *pool };
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (int i = 0; i < s->nbufs; i++) {
		BufState *b = &s->bufs[i];
		DType t = b->buf->dtype;
		if (!dtype_is_float(t))
			continue;
		for (int64_t k = 0; k < b->size; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (b->cell[k] != CELL_INIT)
				continue;
			double v = t == DT_FLOAT16 ? pool16[x % NPOOL] : pool[x % NPOOL];
			b->data[k].f = round_to_dtype(v, t);
		}
	}
}

typedef enum { TRY_SKIP, TRY_SAME, TRY_DIFF, TRY_LIMIT } TryResult;

/* The steps left of the replay's budget, and the steps spent. */
typedef struct Budget {
	uint64_t left, spent;
} Budget;

/* Run f on st within the budget; RUN_LIMIT with *out_of_budget when the
 * budget ran out (a RUN_LIMIT of its own, e.g. a local buffer too large,
 * leaves it false). */
static RunStatus budget_run(const Func *f, State *st, Budget *bu, InterpResult *r,
			    bool *out_of_budget)
{
	*out_of_budget = false;
	if (!bu->left) {
		*out_of_budget = true;
		return RUN_LIMIT;
	}
	RunStatus rs = interp_run(f, st, bu->left, r);
	uint64_t used = r->steps < bu->left ? r->steps : bu->left;
	bu->left -= used;
	bu->spent += used;
	if (rs == RUN_LIMIT && r->steps > used)
		*out_of_budget = true;
	return rs;
}

/* lift_alloc.no_carry: before the rewrite the read finds an uninitialised
 * cell of its iteration's own allocation; after it, where the allocation
 * outlives the iteration, the same input runs without undefined
 * behaviour, the read taking what an earlier iteration left. */
static TryResult try_carried(Arena *a, const InterpResult *rb, const Func *after, State *in,
			     Budget *bu, StrBuf *why)
{
	DiagList d;
	diag_init(&d, a);
	State *sa = state_transfer(a, in, after, &d);
	if (!sa)
		return TRY_SKIP;
	InterpResult ra;
	bool over;
	RunStatus st = budget_run(after, sa, bu, &ra, &over);
	if (over)
		return TRY_LIMIT;
	if (st != RUN_OK)
		return TRY_SKIP;
	sb_printf(why, "    before the rewrite: %s", rb->message);
	if (rb->span.line > 0)
		sb_printf(why, " (line %d)", rb->span.line);
	sb_puts(why, ": the iteration reads a cell it has not written; after: the allocation outlives the iteration and the read takes the value an earlier iteration left there\n");
	return TRY_DIFF;
}

static TryResult try_input(Arena *a, const Func *before, const Func *after, State *in,
			   bool ieee, bool carried, Budget *bu, StrBuf *why)
{
	DiagList d;
	diag_init(&d, a);
	State *sb = state_clone(a, in);
	InterpResult rb;
	bool over;
	RunStatus sbs = budget_run(before, sb, bu, &rb, &over);
	if (sbs == RUN_UB && !over && carried && rb.message && strstr(rb.message, "read of uninitialised"))
		return try_carried(a, &rb, after, in, bu, why);
	if (sbs != RUN_OK)
		return over ? TRY_LIMIT : TRY_SKIP; /* not admissible, or P itself has UB here */
	State *sa = state_transfer(a, in, after, &d);
	/* a layout that maps input cells outside the new shape: run the
	 * rewritten program on the cells that fit, its access outside the
	 * shape shows (layout.in_bounds) */
	if (!sa)
		sa = state_transfer_partial(a, in, after, &d);
	if (!sa)
		return TRY_SKIP;
	InterpResult ra;
	RunStatus st = budget_run(after, sa, bu, &ra, &over);
	if (over)
		return TRY_LIMIT;
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

/* The cells of a state's buffers: input generation, cloning and
 * comparison touch each, so they count against the budget too. */
static uint64_t state_cells(const State *s)
{
	uint64_t n = 0;
	for (int i = 0; i < s->nbufs; i++)
		n += (uint64_t)s->bufs[i].size;
	return n;
}

static void charge(Budget *bu, uint64_t n)
{
	n = n < bu->left ? n : bu->left;
	bu->left -= n;
	bu->spent += n;
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

/* The text of a replay that ran out of budget, with what it tried. */
static void stopped(Arena *a, const Budget *bu, int tried, ReplayOutcome *out)
{
	StrBuf t = {0};
	sb_puts(&t, "stopped after ");
	about(&t, (Wide)bu->spent);
	sb_printf(&t, " steps (the replay budget), %d input%s tried without a difference (the obligation is still refuted: the rewrite is not proven safe)",
		  tried, tried == 1 ? "" : "s");
	char *text = sb_take(&t);
	out->status = REPLAY_SKIPPED;
	out->text = arena_strdup(a, text);
	free(text);
}

/* One attempt: an input from the model's scalars (and cells, when
 * `cells` is given), tried on before and after. */
static TryResult attempt(Arena *a, const Func *before, const Func *after, const int64_t *scalars,
			 const Model *cells, unsigned sd, bool fallback, bool wide,
			 bool ieee, bool carried, Budget *bu, StrBuf *why)
{
	DiagList d;
	diag_init(&d, a);
	State *in = interp_gen_input_scalars(a, before, sd, scalars, &d);
	if (!in && fallback) /* other scalars too */
		in = interp_gen_input(a, before, sd, &d);
	if (!in)
		return TRY_SKIP;
	/* generation, the clone and the comparison visit every cell */
	charge(bu, 3 * state_cells(in));
	if (!bu->left)
		return TRY_LIMIT;
	if (wide)
		widen_floats(in, sd);
	apply_model_cells(in, cells);
	TryResult r = try_input(a, before, after, in, ieee, carried, bu, why);
	if (r == TRY_DIFF)
		scalars_text(why, in);
	return r;
}

static void replay(Arena *a, Solver *solver, const Obligation *o, const Model *m,
		   const Func *before, const Func *after, FloatMode fm, unsigned seed,
		   ReplayOutcome *out)
{
	StrBuf why = {0};
	if (has_kind(o->kind, ".no_race")) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "the interpreter runs parallel and vector loops one iteration at a time, so a race cannot show; the two iterations above touch the same cell at once");
		return;
	}
	if (has_kind(o->kind, "vectorize.reassociate")) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "the interpreter runs a vectorized loop one iteration at a time, in order, so the reassociation cannot show; the compiled code keeps one partial result per lane and combines them at the end, in another order, where the values above round differently");
		return;
	}
	if (strncmp(o->kind, "specialize.", 11) == 0) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "specialize runs the same statements on every input that has the value (the substitution needs no proof); what is refuted is about which inputs exist there (a fact false at the value, or a negative shape), which running the two functions cannot show");
		return;
	}
	if (!after) {
		out->status = REPLAY_IMPOSSIBLE;
		out->text = arena_strdup(a, "the rewrite produced no program to compare");
		return;
	}
	int64_t *scalars = model_scalars(a, before, m);
	Wide work = replay_work(before, after, scalars);
	const char *note = ""; /* which smaller model the replay ran on */
	bool wide = too_wide(before, scalars);
	int64_t *sc = NULL;
	const Model *small = NULL;
	if (work > REPLAY_MAX_ITERATIONS || wide) {
		bool tried = false;
		small = smaller_model(a, solver, o, fm, before, after, &sc, &tried);
		if (!small && work > REPLAY_MAX_ITERATIONS) {
			StrBuf t = {0};
			sb_puts(&t, "skipped (about ");
			about(&t, work);
			sb_puts(&t, " iterations, over the replay budget of ");
			about(&t, REPLAY_MAX_ITERATIONS);
			sb_puts(&t, tried ? "; no smaller counterexample of the query fits it)"
					  : "; its sizes are constants)");
			char *text = sb_take(&t);
			out->status = REPLAY_SKIPPED;
			out->text = arena_strdup(a, text);
			free(text);
			return;
		}
	}
	/* the report's values stay the solver's; the replay says which
	 * smaller ones of the same query it ran on. Without one, buffers too
	 * large for the model's inputs leave the attempts below to inputs of
	 * other sizes. */
	if (small) {
		StrBuf t = {0};
		sb_puts(&t, "    on a smaller counterexample of the same query (the solver's first ");
		if (work > REPLAY_MAX_ITERATIONS) {
			sb_puts(&t, "runs about ");
			about(&t, work);
			sb_puts(&t, " iterations):");
		} else {
			sb_puts(&t, "has buffers too large to run):");
		}
		for (int i = 0; i < small->nvars; i++) {
			sb_printf(&t, "%s %s = ", i ? "," : "", small->vars[i].var->name);
			value_text(&t, &small->vars[i].val);
		}
		sb_puts(&t, "\n");
		char *text = sb_take(&t);
		note = arena_strdup(a, text);
		free(text);
		m = small;
		scalars = sc;
	}
	Budget bu = {REPLAY_MAX_STEPS, 0};
	bool ieee = fm == FLOAT_IEEE;
	const int attempts = 24;
	int tried = 0;
	/* First the model's scalars and cells, then other seeds; odd
	 * attempts use wide float values. Then a third as many plain
	 * admissible inputs: the model's cells may describe the state where
	 * the rewrite acts rather than an input (a cell the program writes
	 * first), and forcing them into the input can break its entry facts,
	 * so that every attempt of the first kind was skipped. */
	for (int k = 0; k < attempts + attempts / 3; k++) {
		bool plain = k >= attempts;
		int t = plain ? k - attempts : k;
		unsigned sd = seed + (plain ? 1000u : 0u) + (unsigned)t;
		TryResult r = attempt(a, before, after, scalars, plain ? NULL : m, sd,
				      plain || t >= attempts / 2, t % 2 == 1, ieee,
				      has_kind(o->kind, "lift_alloc.no_carry"), &bu, &why);
		tried += r != TRY_SKIP;
		if (r == TRY_LIMIT) {
			free(sb_take(&why));
			stopped(a, &bu, tried - 1, out);
			return;
		}
		if (r == TRY_DIFF) {
			char *s = sb_take(&why);
			out->status = REPLAY_CONFIRMED;
			out->text = arena_printf(a, "%s%s", note, s);
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
	out->text = arena_printf(a, "%s    no difference on %d inputs built from the model and from random seeds (the obligation is still refuted: the rewrite is not proven safe)\n", note, attempts + attempts / 3);
}

char *replay_explain(Arena *a, Solver *solver, const Obligation *o,
		     const ObligationResult *r, const Func *before, const Func *after,
		     FloatMode fm, unsigned seed, ReplayOutcome *out)
{
	StrBuf b = {0};
	explain_model(&b, o, r->model);
	char *tmp = sb_take(&b);
	char *text = arena_strdup(a, tmp);
	free(tmp);
	replay(a, solver, o, r->model, before, after, fm, seed, out);
	return text;
}
