/* kernel/interp_compile.c — the reference interpreter's compiled form: a
 * function body compiled once per run into a tree of closures (a function
 * pointer chosen for each node's operator and operand types), run on the
 * same Interp state as the tree walk of interp.c / interp_eval.c and
 * sharing its value, access, store and message code, so that steps,
 * counts, values, cell states and messages are the same. Hot shapes
 * (float and integer + - *, loads and stores in scope without a layout)
 * take an inline path; anything rare or failing goes through the shared
 * code, and T.undef(), expression lets, opaque calls and the
 * `X[t] == T.undef()` of facts are handed to the tree walk itself. */
#include "kernel/interp_int.h"

/* An integer index k + sum c[i] * v[i] over variables of its dtype t, all
 * of +, - and * by constants: computed in 64-bit unsigned arithmetic and
 * wrapped to t once, which is the step-by-step wrapped value (wrapping
 * is a ring homomorphism). */
#define AFF_TERMS 4
typedef struct Affine {
	DType t;
	int n;
	uint64_t k;
	uint64_t c[AFF_TERMS];
	const Var *v[AFF_TERMS];
} Affine;

typedef struct CExpr CExpr;
typedef bool (*CEval)(Interp *in, const CExpr *c, TVal *out);

struct CExpr {
	CEval fn;
	const Expr *e;
	const CExpr *a, *b, *c; /* operands: bin a b; select c a b; unary a */
	const CExpr **ops;      /* load indices, call arguments */
	Value k;                /* a constant */
	const Affine *aff;      /* load: the indices, when each is affine */
	bool undef_cmp;         /* `X[t] == T.undef()`: the tree reads it in facts */
};

typedef struct CStmt CStmt;
typedef bool (*CExec)(Interp *in, const CStmt *c);

struct CStmt {
	CExec fn;
	const Stmt *s;
	const CStmt **items; /* seq */
	const CStmt *body, *els;
	const CExpr *x, *y;     /* loop min, extent; if cond; let value; eval */
	const CExpr **idx;      /* store indices */
	const Affine *aff;      /* store: the indices, when each is affine */
};

/* ---------- expressions ---------- */

static inline bool ev(Interp *in, const CExpr *c, TVal *out)
{
	return c->fn(in, c, out);
}

/* Anything the compiled form does not specialise: the tree walk. */
static bool c_tree(Interp *in, const CExpr *c, TVal *out)
{
	return in_eval(in, c->e, out);
}

static bool c_const(Interp *in, const CExpr *c, TVal *out)
{
	(void)in;
	out->v = c->k;
	out->undef = false;
	return true;
}

/* A variable of an integer type read at its own type. */
static bool c_var_int(Interp *in, const CExpr *c, TVal *out)
{
	const Slot *sl = in_slot(in, c->e->u.var);
	if (!sl)
		return in_eval(in, c->e, out); /* the message */
	out->undef = sl->undef;
	out->v.i = wrap_int(sl->v.i, c->e->dtype);
	return true;
}

static bool c_var(Interp *in, const CExpr *c, TVal *out)
{
	const Var *v = c->e->u.var;
	const Slot *sl = in_slot(in, v);
	if (!sl || !in_convert(sl->v, v->dtype, c->e->dtype, &out->v))
		return in_eval(in, c->e, out); /* the message */
	out->undef = sl->undef;
	return true;
}

static bool c_bin(Interp *in, const CExpr *c, TVal *out)
{
	TVal x, y;
	if (in->in_assume && c->undef_cmp) /* "X[t] is readable" there */
		return in_eval(in, c->e, out);
	return ev(in, c->a, &x) && ev(in, c->b, &y) && in_bin_values(in, c->e, x, y, out);
}

static bool c_logical(Interp *in, const CExpr *c, TVal *out)
{
	TVal x, y;
	if (!ev(in, c->a, &x))
		return false;
	if (in_logical_short(c->e, x, out))
		return true;
	if (!ev(in, c->b, &y))
		return false;
	in_logical_join(c->e, x, y, out);
	return true;
}

/* a op b with both operands and the result of float dtype T: what
 * in_bin_values computes, its conversions and rounding inline. */
#define FLOAT_OP(name, T, OP)                                                    \
	static bool name(Interp *in, const CExpr *c, TVal *out)                  \
	{                                                                        \
		TVal x, y;                                                       \
		if (!ev(in, c->a, &x) || !ev(in, c->b, &y))                      \
			return false;                                            \
		out->undef = x.undef || y.undef;                                 \
		if (OP == OP_MUL && ((!x.undef && !(x.v.f != 0)) ||              \
				     (!y.undef && !(y.v.f != 0))))               \
			out->undef = false; /* 0 * undef is 0 */                 \
		double a = round_float(x.v.f, T), b = round_float(y.v.f, T);     \
		return float_arith(OP, a, b, T, &out->v.f);                      \
	}
FLOAT_OP(c_add_f32, DT_FLOAT32, OP_ADD)
FLOAT_OP(c_sub_f32, DT_FLOAT32, OP_SUB)
FLOAT_OP(c_mul_f32, DT_FLOAT32, OP_MUL)
FLOAT_OP(c_add_f64, DT_FLOAT64, OP_ADD)
FLOAT_OP(c_sub_f64, DT_FLOAT64, OP_SUB)
FLOAT_OP(c_mul_f64, DT_FLOAT64, OP_MUL)

/* The same for an integer dtype T: 64-bit unsigned arithmetic wrapped
 * to T (int_arith in interp_eval.c). */
#define INT_OP(name, T, OP, EXPR)                                                \
	static bool name(Interp *in, const CExpr *c, TVal *out)                  \
	{                                                                        \
		TVal x, y;                                                       \
		if (!ev(in, c->a, &x) || !ev(in, c->b, &y))                      \
			return false;                                            \
		out->undef = x.undef || y.undef;                                 \
		if (OP == OP_MUL && ((!x.undef && x.v.i == 0) ||                 \
				     (!y.undef && y.v.i == 0)))                  \
			out->undef = false; /* 0 * undef is 0 */                 \
		uint64_t ua = (uint64_t)wrap_int(x.v.i, T);                      \
		uint64_t ub = (uint64_t)wrap_int(y.v.i, T);                      \
		out->v.i = wrap_int((int64_t)(EXPR), T);                         \
		return true;                                                     \
	}
INT_OP(c_add_i32, DT_INT32, OP_ADD, ua + ub)
INT_OP(c_sub_i32, DT_INT32, OP_SUB, ua - ub)
INT_OP(c_mul_i32, DT_INT32, OP_MUL, ua * ub)
INT_OP(c_add_i64, DT_INT64, OP_ADD, ua + ub)
INT_OP(c_sub_i64, DT_INT64, OP_SUB, ua - ub)
INT_OP(c_mul_i64, DT_INT64, OP_MUL, ua * ub)

/* A comparison of two integer operands of one dtype: order of the raw
 * values, as in_bin_values computes it. */
#define INT_CMP(name, EXPR)                                                      \
	static bool name(Interp *in, const CExpr *c, TVal *out)                  \
	{                                                                        \
		TVal x, y;                                                       \
		if (!ev(in, c->a, &x) || !ev(in, c->b, &y))                      \
			return false;                                            \
		out->undef = x.undef || y.undef;                                 \
		int64_t a = x.v.i, b = y.v.i;                                    \
		out->v.i = (EXPR);                                               \
		return true;                                                     \
	}
INT_CMP(c_eq_int, a == b)
INT_CMP(c_ne_int, a != b)
INT_CMP(c_lt_int, a < b)
INT_CMP(c_le_int, a <= b)
INT_CMP(c_gt_int, a > b)
INT_CMP(c_ge_int, a >= b)

/* Floor division and modulo of integers of dtype t by a divisor that is
 * not zero (zero: in_bin_values' message). */
static bool c_floor_int(Interp *in, const CExpr *c, TVal *out)
{
	TVal x, y;
	if (!ev(in, c->a, &x) || !ev(in, c->b, &y))
		return false;
	DType t = c->e->dtype;
	int64_t a = wrap_int(x.v.i, t), b = wrap_int(y.v.i, t);
	if (b == 0)
		return in_bin_values(in, c->e, x, y, out);
	out->undef = x.undef || y.undef;
	out->v.i = wrap_int(c->e->u.bin.op == OP_FLOORDIV ? floor_div(a, b) : floor_mod(a, b), t);
	return true;
}

static bool c_unary(Interp *in, const CExpr *c, TVal *out)
{
	TVal x;
	return ev(in, c->a, &x) && in_unary_value(in, c->e, x, out);
}

static bool c_select(Interp *in, const CExpr *c, TVal *out)
{
	const Expr *e = c->e;
	TVal x, y;
	if (!ev(in, c->c, &x))
		return false;
	bool first = truth(x.v, e->u.sel.cond->dtype);
	const Expr *chosen = first ? e->u.sel.a : e->u.sel.b;
	if (!ev(in, first ? c->a : c->b, &y))
		return false;
	out->undef = x.undef || y.undef;
	return in_convert(y.v, chosen->dtype, e->dtype, &out->v) ||
	       in_fail(in, RUN_UB, e->span, "value out of range of %s", dtype_name(e->dtype));
}

static bool c_call(Interp *in, const CExpr *c, TVal *out)
{
	const Expr *e = c->e;
	Value v[MATH_MAX_ARGS] = {{0}};
	out->undef = false;
	for (int i = 0; i < e->u.call.nargs; i++) {
		TVal x;
		const Expr *a = e->u.call.args[i];
		if (!ev(in, c->ops[i], &x))
			return false;
		out->undef |= x.undef;
		if (!in_convert(x.v, a->dtype, e->dtype, &v[i]))
			return in_fail(in, RUN_UB, e->span, "operand out of range of %s",
				       dtype_name(e->dtype));
	}
	return in_call_values(in, e, v, out);
}

/* ---------- buffer accesses ---------- */

/* The buffer of an access with nidx indices, in scope and of that rank
 * (the scan of in_lookup_buffer inline); otherwise in_access_buffer's
 * message. */
static inline BufState *access_buffer(Interp *in, const Buffer *b, int nidx,
				      const char *what, Span sp)
{
	for (int i = in->nbinds - 1; i >= 0; i--)
		if (in->binds[i].buf == b) {
			BufState *bs = in->binds[i].bs;
			if (bs->ndim == nidx && nidx <= MAX_DIMS)
				return bs;
			break;
		}
	return in_access_buffer(in, b, nidx, what, sp);
}

/* Evaluate the indices and find the cell, as in_access_cell does: the
 * row-major offset inline when every index is in bounds and the buffer
 * has no layout, in_cell_offset (padding, messages) otherwise. */
static inline bool access_cell(Interp *in, const Buffer *b, BufState *bs, int nidx,
			       const CExpr *const *idx, const char *what, Span sp,
			       int64_t *ix, int64_t *off)
{
	for (int k = 0; k < nidx; k++) {
		TVal x;
		const CExpr *c = idx[k];
		if (c->fn == c_var_int) { /* c_var_int inline: the common index */
			const Slot *sl = in_slot(in, c->e->u.var);
			if (sl && !sl->undef) {
				ix[k] = wrap_int(sl->v.i, c->e->dtype);
				continue;
			}
		}
		if (!ev(in, c, &x))
			return false;
		if (!x.undef && !in_is_float(c->e->dtype))
			ix[k] = x.v.i;
		else if (!in_int_value(in, c->e, x, &ix[k], "an index"))
			return false;
	}
	if (!bs->buf->layout) {
		int64_t o = 0;
		int k = 0;
		for (; k < nidx; k++) {
			if (ix[k] < 0 || ix[k] >= bs->shape[k])
				break;
			o = o * bs->shape[k] + ix[k];
		}
		if (k == nidx) {
			*off = o;
			return true;
		}
	}
	return in_cell_offset(in, b, bs, nidx, ix, what, sp, off);
}

/* The offset of a cell whose indices are the affine forms aff[0, n),
 * when every variable is bound and defined, every index in bounds and bs
 * has no layout: what access_cell computes, without evaluating index
 * nodes. False: take access_cell (indices are pure). */
static inline bool affine_offset(Interp *in, const BufState *bs, const Affine *aff, int n,
				 int64_t *off)
{
	if (bs->buf->layout)
		return false;
	int64_t o = 0;
	for (int k = 0; k < n; k++) {
		const Affine *f = &aff[k];
		uint64_t x = f->k;
		for (int i = 0; i < f->n; i++) {
			const Var *v = f->v[i];
			if (v->id < 0 || v->id >= in->nenv)
				return false;
			const Slot *sl = &in->env[v->id];
			if (sl->var != v || sl->undef)
				return false;
			x += f->c[i] * (uint64_t)wrap_int(sl->v.i, f->t);
		}
		int64_t ix = wrap_int((int64_t)x, f->t);
		if (ix < 0 || ix >= bs->shape[k])
			return false;
		o = o * bs->shape[k] + ix;
	}
	*off = o;
	return true;
}

static bool c_load(Interp *in, const CExpr *c, TVal *out)
{
	const Expr *e = c->e;
	if (in->probe) /* scalar probing fails on a load: the tree's message */
		return in_eval(in, e, out);
	int64_t ix[MAX_DIMS], off;
	int n = e->u.load.nidx;
	BufState *bs = access_buffer(in, e->u.load.buf, n, "load", e->span);
	if (!bs)
		return false;
	if (c->aff && affine_offset(in, bs, c->aff, n, &off) && bs->cell[off] == CELL_INIT &&
	    in_convert(bs->data[off], bs->buf->dtype, e->dtype, &out->v)) {
		in->counts.loads++;
		out->undef = false;
		return true;
	}
	if (!access_cell(in, e->u.load.buf, bs, n, c->ops, "load", e->span, ix, &off))
		return false;
	if (bs->cell[off] == CELL_INIT &&
	    in_convert(bs->data[off], bs->buf->dtype, e->dtype, &out->v)) {
		in->counts.loads++;
		out->undef = false;
		return true;
	}
	return in_load_cell(in, e, bs, off, ix, out);
}

/* ---------- compiling expressions ---------- */

static const CExpr *cx(Arena *a, const Expr *e);

static const CExpr **cx_list(Arena *a, Expr *const *es, int n)
{
	const CExpr **l = arena_alloc(a, sizeof *l * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		l[i] = cx(a, es[i]);
	return l;
}

/* e as an affine form of dtype t scaled by m, added to f; false when it
 * is not one (a load, a division, a product of variables, another
 * dtype, too many terms). */
static bool affine_add(Affine *f, const Expr *e, uint64_t m)
{
	if (e->dtype != f->t)
		return false;
	switch (e->kind) {
	case EX_INT:
		f->k += m * (uint64_t)wrap_int(e->u.ival, f->t);
		return true;
	case EX_VAR:
		if (e->u.var->dtype != f->t)
			return false;
		for (int i = 0; i < f->n; i++)
			if (f->v[i] == e->u.var) {
				f->c[i] += m;
				return true;
			}
		if (f->n == AFF_TERMS)
			return false;
		f->v[f->n] = e->u.var;
		f->c[f->n++] = m;
		return true;
	case EX_BIN: {
		const Expr *a = e->u.bin.a, *b = e->u.bin.b;
		switch (e->u.bin.op) {
		case OP_ADD:
			return affine_add(f, a, m) && affine_add(f, b, m);
		case OP_SUB:
			return affine_add(f, a, m) && affine_add(f, b, 0 - m);
		case OP_MUL:
			if (b->kind == EX_INT && b->dtype == f->t)
				return affine_add(f, a, m * (uint64_t)wrap_int(b->u.ival, f->t));
			if (a->kind == EX_INT && a->dtype == f->t)
				return affine_add(f, b, m * (uint64_t)wrap_int(a->u.ival, f->t));
			return false;
		case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_MIN: case OP_MAX:
		case OP_SHL: case OP_SHR:
		case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		case OP_AND: case OP_OR: case OP_COUNT:
			return false;
		}
		return false;
	}
	case EX_FLOAT: case EX_NOT: case EX_NEG: case EX_SELECT: case EX_CAST: case EX_LOAD:
	case EX_UNDEF: case EX_LET: case EX_CALL: case EX_OPAQUE: case EX_COUNT:
		return false;
	}
	return false;
}

/* The indices as affine forms (the shape affine_offset takes), or NULL. */
static const Affine *index_affine(Arena *a, Expr *const *idx, int n)
{
	if (n > MAX_DIMS)
		return NULL;
	Affine *aff = arena_alloc(a, sizeof *aff * (size_t)(n + 1));
	for (int k = 0; k < n; k++) {
		DType t = idx[k]->dtype;
		aff[k].t = t;
		if ((t != DT_INT32 && t != DT_INT64) || !affine_add(&aff[k], idx[k], 1))
			return NULL;
	}
	return aff;
}

static CEval bin_fn(const Expr *e)
{
	BinOp op = e->u.bin.op;
	DType t = e->dtype;
	if (binop_is_logical(op))
		return c_logical;
	DType ta = e->u.bin.a->dtype;
	if (binop_is_compare(op) && ta == e->u.bin.b->dtype && !in_is_float(ta) &&
	    !in_undef_compare_load(e))
		return op == OP_EQ ? c_eq_int : op == OP_NE ? c_ne_int : op == OP_LT ? c_lt_int
		       : op == OP_LE ? c_le_int : op == OP_GT ? c_gt_int : c_ge_int;
	if ((op == OP_FLOORDIV || op == OP_FLOORMOD) && ta == t && e->u.bin.b->dtype == t &&
	    (t == DT_INT32 || t == DT_INT64))
		return c_floor_int;
	if (e->u.bin.a->dtype != t || e->u.bin.b->dtype != t)
		return c_bin;
	switch (t) {
	case DT_FLOAT32:
		return op == OP_ADD ? c_add_f32 : op == OP_SUB ? c_sub_f32
		       : op == OP_MUL ? c_mul_f32 : c_bin;
	case DT_FLOAT64:
		return op == OP_ADD ? c_add_f64 : op == OP_SUB ? c_sub_f64
		       : op == OP_MUL ? c_mul_f64 : c_bin;
	case DT_INT32:
		return op == OP_ADD ? c_add_i32 : op == OP_SUB ? c_sub_i32
		       : op == OP_MUL ? c_mul_i32 : c_bin;
	case DT_INT64:
		return op == OP_ADD ? c_add_i64 : op == OP_SUB ? c_sub_i64
		       : op == OP_MUL ? c_mul_i64 : c_bin;
	case DT_BOOL: case DT_INT8: case DT_INT16: case DT_UINT8: case DT_FLOAT16:
	case DT_HANDLE: case DT_VOID: case DT_COUNT:
		return c_bin;
	}
	return c_bin;
}

static const CExpr *cx(Arena *a, const Expr *e)
{
	CExpr *c = arena_alloc(a, sizeof *c);
	c->e = e;
	c->fn = c_tree;
	switch (e->kind) {
	case EX_INT:
		c->fn = c_const;
		if (in_is_float(e->dtype))
			c->k.f = round_float((double)e->u.ival, e->dtype);
		else
			c->k.i = wrap_int(e->u.ival, e->dtype);
		break;
	case EX_FLOAT:
		if (in_convert((Value){.f = e->u.fval}, DT_FLOAT64, e->dtype, &c->k))
			c->fn = c_const; /* else the tree's message */
		break;
	case EX_VAR:
		c->fn = !in_is_float(e->dtype) && e->dtype != DT_VOID &&
				!in_is_float(e->u.var->dtype)
			? c_var_int : c_var;
		break;
	case EX_BIN:
		c->a = cx(a, e->u.bin.a);
		c->b = cx(a, e->u.bin.b);
		c->fn = bin_fn(e);
		c->undef_cmp = in_undef_compare_load(e) != NULL;
		break;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		c->a = cx(a, e->u.un.a);
		c->fn = c_unary;
		break;
	case EX_SELECT:
		c->c = cx(a, e->u.sel.cond);
		c->a = cx(a, e->u.sel.a);
		c->b = cx(a, e->u.sel.b);
		c->fn = c_select;
		break;
	case EX_LOAD:
		c->ops = cx_list(a, e->u.load.idx, e->u.load.nidx);
		c->aff = index_affine(a, e->u.load.idx, e->u.load.nidx);
		c->fn = c_load;
		break;
	case EX_CALL:
		c->ops = cx_list(a, e->u.call.args, e->u.call.nargs);
		c->fn = c_call;
		break;
	case EX_UNDEF:  /* the tree's generator of undefined values */
	case EX_LET:    /* rare in expressions */
	case EX_OPAQUE: /* refused, with the tree's message */
	case EX_COUNT:
		break;
	}
	return c;
}

/* ---------- statements ---------- */

static inline bool run(Interp *in, const CStmt *c)
{
	return c->fn(in, c);
}

/* A statement the compiled form hands to the tree walk (which counts its
 * step). */
static bool s_tree(Interp *in, const CStmt *c)
{
	return in_exec(in, c->s);
}

static bool s_seq(Interp *in, const CStmt *c)
{
	if (!in_step(in, c->s->span))
		return false;
	for (int i = 0; i < c->s->u.seq.n; i++)
		if (!run(in, c->items[i]))
			return false;
	return true;
}

static bool eval_int(Interp *in, const CExpr *c, int64_t *out, const char *what)
{
	TVal x;
	return ev(in, c, &x) && in_int_value(in, c->e, x, out, what);
}

static bool s_for(Interp *in, const CStmt *c)
{
	const Stmt *s = c->s;
	if (!in_step(in, s->span))
		return false;
	int64_t lo, ext;
	const Var *v = s->u.loop.var;
	if (!eval_int(in, c->x, &lo, "a loop bound") ||
	    !eval_int(in, c->y, &ext, "a loop extent"))
		return false;
	SavedVar old;
	if (!in_bind_var(in, v, (Value){.i = 0}, &old))
		return false;
	if (!in_push_loop(in, v)) {
		in_unbind_var(in, v, &old);
		return false;
	}
	bool ok = true;
	const CStmt *body = c->body;
	for (int64_t k = 0; k < ext && ok; k++) {
		/* looked up each time: the body may grow the environment */
		in_slot(in, v)->v.i = wrap_int((int64_t)((uint64_t)lo + (uint64_t)k), v->dtype);
		in->counts.iterations++;
		ok = in_step(in, s->span) && run(in, body);
	}
	in->nloops--;
	in_unbind_var(in, v, &old);
	return ok;
}

static bool s_if(Interp *in, const CStmt *c)
{
	const Stmt *s = c->s;
	TVal x;
	if (!in_step(in, s->span))
		return false;
	in->counts.branches++;
	if (!ev(in, c->x, &x))
		return false;
	if (truth(x.v, s->u.cond.cond->dtype))
		return run(in, c->body);
	return !c->els || run(in, c->els);
}

static bool s_store(Interp *in, const CStmt *c)
{
	const Stmt *s = c->s;
	if (!in_step(in, s->span))
		return false;
	int64_t ix[MAX_DIMS], off;
	const Buffer *b = s->u.store.buf;
	int n = s->u.store.nidx;
	BufState *bs = access_buffer(in, b, n, "store", s->span);
	if (!bs || (!(c->aff && affine_offset(in, bs, c->aff, n, &off)) &&
		    !access_cell(in, b, bs, n, c->idx, "store", s->span, ix, &off)))
		return false;
	TVal x;
	if (!ev(in, c->x, &x))
		return false;
	Value v;
	if (!in_convert(x.v, s->u.store.value->dtype, bs->buf->dtype, &v))
		return in_store_value(in, s, bs, off, x); /* the message */
	bs->data[off] = v;
	bs->cell[off] = x.undef ? CELL_UNDEF : CELL_INIT;
	in->counts.stores++;
	return true;
}

static bool s_eval(Interp *in, const CStmt *c)
{
	TVal x;
	return in_step(in, c->s->span) && ev(in, c->x, &x);
}

static bool s_alloc(Interp *in, const CStmt *c)
{
	if (!in_step(in, c->s->span))
		return false;
	int64_t shape[MAX_DIMS];
	BufState bs = {.shape = shape};
	if (!in_open_local(in, c->s, &bs))
		return false;
	bool ok = run(in, c->body);
	in_close_local(in, &bs);
	return ok;
}

static bool s_body(Interp *in, const CStmt *c)
{
	return in_step(in, c->s->span) && run(in, c->body);
}

static bool s_let(Interp *in, const CStmt *c)
{
	const Stmt *s = c->s;
	if (!in_step(in, s->span))
		return false;
	SavedVar old;
	const Var *v = s->u.let.var;
	TVal x;
	if (!ev(in, c->x, &x) || !in_bind_let(in, v, s->u.let.value, x, s->span, &old))
		return false;
	bool ok = run(in, c->body);
	in_unbind_var(in, v, &old);
	return ok;
}

/* T.assume in a run (facts checked, never repaired: repair is the tree
 * walk's, interp_prepare_input). */
static bool s_assume(Interp *in, const CStmt *c)
{
	if (in->fact_mode == FACTS_REPAIR)
		return in_exec(in, c->s);
	if (!in_step(in, c->s->span))
		return false;
	TVal x;
	in->in_assume++;
	bool ok = ev(in, c->x, &x);
	in->in_assume--;
	if (!ok)
		return false;
	return truth(x.v, c->s->u.expr->dtype) || in_assume_failed(in, c->s);
}

static bool s_pass(Interp *in, const CStmt *c)
{
	return in_step(in, c->s->span);
}

static const CStmt *cs(Arena *a, const Stmt *s)
{
	CStmt *c = arena_alloc(a, sizeof *c);
	c->s = s;
	c->fn = s_tree;
	switch (s->kind) {
	case ST_SEQ:
		c->items = arena_alloc(a, sizeof *c->items * (size_t)(s->u.seq.n + 1));
		for (int i = 0; i < s->u.seq.n; i++)
			c->items[i] = cs(a, s->u.seq.items[i]);
		c->fn = s_seq;
		break;
	case ST_FOR:
		c->x = cx(a, s->u.loop.min);
		c->y = cx(a, s->u.loop.extent);
		c->body = cs(a, s->u.loop.body);
		c->fn = s_for;
		break;
	case ST_IF:
		c->x = cx(a, s->u.cond.cond);
		c->body = cs(a, s->u.cond.then_s);
		c->els = s->u.cond.else_s ? cs(a, s->u.cond.else_s) : NULL;
		c->fn = s_if;
		break;
	case ST_STORE:
		c->idx = cx_list(a, s->u.store.idx, s->u.store.nidx);
		c->aff = index_affine(a, s->u.store.idx, s->u.store.nidx);
		c->x = cx(a, s->u.store.value);
		c->fn = s_store;
		break;
	case ST_EVAL:
		c->x = cx(a, s->u.expr);
		c->fn = s_eval;
		break;
	case ST_ALLOC:
		if (s->u.alloc.body) { /* else the tree's behaviour */
			c->body = cs(a, s->u.alloc.body);
			c->fn = s_alloc;
		}
		break;
	case ST_BLOCK:
		c->body = cs(a, s->u.block.body);
		c->fn = s_body;
		break;
	case ST_LET:
		c->x = cx(a, s->u.let.value);
		c->body = cs(a, s->u.let.body);
		c->fn = s_let;
		break;
	case ST_PASS:
		c->fn = s_pass;
		break;
	case ST_ASSUME:
		c->x = cx(a, s->u.expr);
		c->fn = s_assume;
		break;
	case ST_COUNT:
		break;
	}
	return c;
}

bool in_run_compiled(Interp *in, const Func *f)
{
	Arena code;
	arena_init(&code);
	bool ok = run(in, cs(&code, f->body));
	arena_free(&code);
	return ok;
}
