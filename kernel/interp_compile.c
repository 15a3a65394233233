/* kernel/interp_compile.c — the reference interpreter's compiled form: a
 * function body compiled once per run into a tree of closures (a function
 * pointer chosen for each node's operator and operand types), run on the
 * same Interp state as the tree walk of interp.c / interp_eval.c and
 * sharing its value, access, store and message code, so that steps,
 * counts, values, cell states and messages are the same.
 *
 * Names are resolved when compiling: a variable bound by a loop, a let or
 * a scalar parameter gets a slot of in->frame (the loop or let also keeps
 * the environment's binding, which the shared code and the messages
 * read), a buffer gets its parameter's state or the slot of its
 * allocation (in->bufslot). Hot shapes (float and integer + - *, loads
 * and stores at affine indices, the f32 update X[a] = X[a] + Y[b] * Z[c])
 * take an inline path that checks everything the shared code checks
 * (bounds, cell states, the step limit) before it changes anything, and
 * otherwise runs the general closures, whose failures go through the
 * shared code: a fast path never decides a message. T.undef(), expression
 * lets, opaque calls and the `X[t] == T.undef()` of facts are handed to
 * the tree walk itself.
 *
 * Whole loops run as one closure in three shapes, each checking what the
 * statements it stands for would check before it changes anything, and
 * otherwise handing the rest to the loops' own closures exactly where it
 * stopped (the variables bound as they would be): an update loop
 * (s_for_update_SUF); a nest of loops with constant bounds over an
 * update, perhaps inside a TensorIR block with T.where and T.init, perhaps
 * with the zeroing of the accumulator before the reduction
 * (s_nest_SUF, struct Nest: the indices are lines over the nest's box
 * checked once at its entry, or computed at each iteration); an
 * element-wise map X[a] = f(Y[b]) (s_for_map). Their step budget is
 * checked for the whole loop at its entry (a loop that might reach the
 * limit runs statement by statement, which stops at the exact step).
 * Let values that are affine are substituted into the forms that read
 * them (VarScope.sub), so a block's indices are affine in its loops. */
#include <stdlib.h>

#include "kernel/interp_int.h"

/* An integer index k + sum c[i] * frame[s[i]] over variables of its dtype
 * t, all of +, - and * by constants: computed in 64-bit unsigned
 * arithmetic and wrapped to t once, which is the step-by-step wrapped
 * value (wrapping is a ring homomorphism). The frame holds each variable
 * wrapped to its dtype. */
#define AFF_TERMS 6
typedef struct Affine {
	DType t;
	int n;
	bool lets; /* a term is a let's variable, which may be undefined */
	uint64_t k;
	uint64_t c[AFF_TERMS];
	int s[AFF_TERMS];
	/* an index (never a value) may be floor_div or floor_mod of the
	 * affine form by a constant div > 0 (0: neither): the layouts'
	 * (i + 2) // 8, (i + 2) % 8 */
	int64_t div;
	bool mod;
	int shift; /* div == 2^shift: floor_div is >> shift, floor_mod & (div - 1) */
} Affine;

/* A buffer as compiling resolved it: a parameter's state, or the slot of
 * the allocation in scope; `fast` when the cell offset may be computed
 * inline (the rank is the access's, no layout). */
typedef struct BufRef {
	BufState *bs; /* a parameter's */
	int slot;     /* an allocation's, when bs is NULL; -1: unresolved */
	bool fast;
	DType dt; /* the cells' dtype */
} BufRef;

static inline BufState *bufref(const Interp *in, const BufRef *r)
{
	return r->bs ? r->bs : in->bufslot[r->slot];
}

typedef struct CExpr CExpr;
typedef bool (*CEval)(Interp *in, const CExpr *c, TVal *out);

struct CExpr {
	CEval fn;
	const Expr *e;
	const CExpr *a, *b, *c; /* operands: bin a b; select c a b; unary a */
	const CExpr **ops;      /* load indices, call arguments */
	Value k;                /* a constant */
	const Affine *aff;      /* load: the indices, when each is affine */
	BufRef ref;             /* load: the buffer */
	int slot;               /* variable: its frame slot */
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
	BufRef ref;             /* store: the buffer */
	int slot;               /* loop, let: the variable's frame slot;
				   allocation: the buffer's slot */
	/* the f32 update X[a] = X[a] + Y[b] * Z[c] (or (Y[b] * Z[c]) + X[a]
	 * when upd_first is false): the loads of Y and Z */
	const CExpr *ly, *lz;
	bool upd_first;
	bool let_sub;           /* let: its value is a substituted form */
	const struct Map *map;  /* loop over a map store: see s_for_map */
	const struct Nest *nest; /* loop: the nest it heads, or NULL */
};

/* A nest of loops with constant bounds (the loop variables'
 * values need no wrapping), perfect but for one prologue (below), whose
 * innermost body is an update closure
 * (s_update_SUF), perhaps inside (outermost first) a block, lets that
 * are substituted (VarScope.sub), an IF without else (T.where, a
 * padding test) and `SEQ{IF cond: init; update}` (T.init), the init a
 * store of a constant; the conditions read only the loops and variables
 * bound outside the nest. */
#define NEST_MAX 6
typedef struct Nest {
	int d;                       /* loops, outermost first */
	const CStmt *loop[NEST_MAX];
	int slot[NEST_MAX];
	int64_t lo[NEST_MAX], ext[NEST_MAX];
	const CStmt *u; /* the update */
	bool plain;          /* the body is u itself */
	int pre_steps;       /* the steps of the block, the lets and the guard's IF */
	const CExpr *guard;  /* an IF (T.where) around the rest, or NULL */
	int mid_steps;       /* 2 with an init (the SEQ, the init's IF), else 0 */
	const CExpr *cond;   /* the init's condition, or NULL */
	const CStmt *init;   /* the init store */
	Value initv;         /* its value, converted to the cells' dtype */
	/* a loop (level pro, -1: none) whose body is SEQ{pstore; the next
	 * loop}, pstore the store of a constant: the zeroing of an
	 * accumulator before its reduction */
	int pro;
	const CStmt *pstore;
	Value pval;
	const struct Map *map; /* s_nest_map: u is this map's store */
} Nest;

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

/* A variable with a frame slot, of an integer type, read at that type:
 * c_var_int's value from the frame. */
static bool c_var_frame(Interp *in, const CExpr *c, TVal *out)
{
	out->undef = in->frame_undef[c->slot];
	out->v.i = wrap_int(in->frame[c->slot].i, c->e->dtype);
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

/* The offset of a cell whose indices are the affine forms aff[0, n) of
 * frame slots, when no variable is undefined and every index is in
 * bounds (the buffer has the access's rank and no layout: BufRef.fast):
 * what access_cell computes, without evaluating index nodes. False: take
 * access_cell (indices are pure). */
static inline __attribute__((always_inline)) bool
affine_offset(const Interp *in, const BufState *bs, const Affine *aff, int n, int64_t *off)
{
	const Value *fr = in->frame;
	int64_t o = 0;
	for (int k = 0; k < n; k++) {
		const Affine *f = &aff[k];
		uint64_t x = f->k;
		for (int i = 0; i < f->n; i++)
			x += f->c[i] * (uint64_t)fr[f->s[i]].i;
		if (f->lets)
			for (int i = 0; i < f->n; i++)
				if (in->frame_undef[f->s[i]])
					return false;
		int64_t ix = wrap_int((int64_t)x, f->t);
		if (f->div && f->shift >= 0) /* two's complement: the floor */
			ix = f->mod ? ix & (f->div - 1) : ix >> f->shift;
		else if (f->div) /* no overflow: div > 0 */
			ix = f->mod ? floor_mod(ix, f->div) : floor_div(ix, f->div);
		if (ix < 0 || ix >= bs->shape[k])
			return false;
		o = o * bs->shape[k] + ix;
	}
	*off = o;
	return true;
}

/* The value of the form f (no division) from the frame. */
static inline int64_t affine_value(const Interp *in, const Affine *f)
{
	uint64_t x = f->k;
	for (int i = 0; i < f->n; i++)
		x += f->c[i] * (uint64_t)in->frame[f->s[i]].i;
	return wrap_int((int64_t)x, f->t);
}

/* An integer + - * expression that is an affine form of frame slots none
 * of which is a let's (so never undefined, and it cannot fail): its
 * value without evaluating the nodes (c_add_i32 ... c_var_frame compute
 * the same wrapped value). */
static bool c_aff(Interp *in, const CExpr *c, TVal *out)
{
	out->undef = false;
	out->v.i = affine_value(in, c->aff);
	return true;
}

/* The value of a comparison of two such forms (aff[0], aff[1]): what
 * INT_CMP computes. */
static inline bool cmp_aff_value(const Interp *in, const CExpr *c)
{
	int64_t a = affine_value(in, &c->aff[0]), b = affine_value(in, &c->aff[1]);
	switch (c->e->u.bin.op) {
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	case OP_LT: return a < b;
	case OP_LE: return a <= b;
	case OP_GT: return a > b;
	case OP_GE: return a >= b;
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD:
	case OP_MIN: case OP_MAX: case OP_SHL: case OP_SHR: case OP_AND: case OP_OR: case OP_COUNT:
		break; /* pure_affine picks comparisons only */
	}
	return false;
}

static bool c_cmp_aff(Interp *in, const CExpr *c, TVal *out)
{
	out->undef = false;
	out->v.i = cmp_aff_value(in, c);
	return true;
}

/* `and` / `or` of two such comparisons: neither is undefined, so
 * in_logical_short and in_logical_join give the plain result. */
static bool c_and_cmp_aff(Interp *in, const CExpr *c, TVal *out)
{
	out->undef = false;
	out->v.i = cmp_aff_value(in, c->a) && cmp_aff_value(in, c->b);
	return true;
}

static bool c_or_cmp_aff(Interp *in, const CExpr *c, TVal *out)
{
	out->undef = false;
	out->v.i = cmp_aff_value(in, c->a) || cmp_aff_value(in, c->b);
	return true;
}

/* A comparison of two floats (either float dtype; not `X[t] ==
 * T.undef()`): order() of interp_eval.c, whose conversions to float64 do
 * not change a float value, is C's comparison (NaN unordered). */
#define FLOAT_CMP(name, EXPR)                                                    \
	static bool name(Interp *in, const CExpr *c, TVal *out)                  \
	{                                                                        \
		TVal x, y;                                                       \
		if (!ev(in, c->a, &x) || !ev(in, c->b, &y))                      \
			return false;                                            \
		out->undef = x.undef || y.undef;                                 \
		double a = x.v.f, b = y.v.f;                                     \
		out->v.i = (EXPR);                                               \
		return true;                                                     \
	}
FLOAT_CMP(c_eq_float, a == b)
FLOAT_CMP(c_ne_float, !(a == b))
FLOAT_CMP(c_lt_float, a < b)
FLOAT_CMP(c_le_float, a <= b)
FLOAT_CMP(c_gt_float, a > b)
FLOAT_CMP(c_ge_float, a >= b)

/* The buffer of an access: its resolved state when it is fast, else the
 * scan and its message. */
static inline BufState *ref_buffer(Interp *in, const BufRef *r, const Buffer *b, int nidx,
				   const char *what, Span sp)
{
	return r->fast ? bufref(in, r) : access_buffer(in, b, nidx, what, sp);
}

static bool c_load(Interp *in, const CExpr *c, TVal *out)
{
	const Expr *e = c->e;
	if (in->probe) /* scalar probing fails on a load: the tree's message */
		return in_eval(in, e, out);
	int64_t ix[MAX_DIMS], off;
	int n = e->u.load.nidx;
	BufState *bs = ref_buffer(in, &c->ref, e->u.load.buf, n, "load", e->span);
	if (!bs)
		return false;
	if (c->aff && c->ref.fast && affine_offset(in, bs, c->aff, n, &off) &&
	    bs->cell[off] == CELL_INIT &&
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

/* c_load of a fast buffer at affine indices whose cells and value have
 * the dtype T: the conversion inline (in_convert of T to T). */
#define LOAD_T(name, T, GET)                                                     \
	static bool name(Interp *in, const CExpr *c, TVal *out)                  \
	{                                                                        \
		const BufState *bs = bufref(in, &c->ref);                        \
		int64_t off;                                                     \
		if (!in->probe && affine_offset(in, bs, c->aff, c->e->u.load.nidx, &off) && \
		    bs->cell[off] == CELL_INIT) {                                \
			const Value *d = &bs->data[off];                         \
			GET;                                                     \
			out->undef = false;                                      \
			in->counts.loads++;                                      \
			return true;                                             \
		}                                                                \
		return c_load(in, c, out);                                       \
	}
LOAD_T(c_load_f32, DT_FLOAT32, out->v.f = (double)(float)d->f)
LOAD_T(c_load_f64, DT_FLOAT64, out->v.f = d->f)
LOAD_T(c_load_i32, DT_INT32, out->v.i = wrap_int(d->i, DT_INT32))
LOAD_T(c_load_i64, DT_INT64, out->v.i = d->i)

/* ---------- compiling: names in scope ---------- */

/* What compiling knows at a point of the body: the variables with a frame
 * slot and the buffers in scope, innermost last, as the run will bind
 * them (every binding statement is compiled, none is handed to the tree
 * walk, so the scopes are the run's). */
typedef struct VarScope {
	const Var *v;
	int slot;
	bool let;
	/* a let whose value is an affine form (of the variable's dtype, not
	 * divided) that is never undefined: forms that read the variable
	 * read this form instead (wrapping is a ring homomorphism, so the
	 * value is the same), which makes a block's indices affine in its
	 * loops */
	const Affine *sub;
} VarScope;

typedef struct BufScope {
	const Buffer *b;
	BufRef r;
} BufScope;

typedef struct Comp {
	Arena *a;
	VarScope *vars;
	int nvars, capvars;
	BufScope *bufs;
	int nbufs, capbufs;
	int nframe, nbufslots;
	bool oom; /* a scope could not grow: compiling resolves nothing more */
} Comp;

static bool grow(void **p, int *cap, int n, size_t size)
{
	if (n < *cap)
		return true;
	int c = *cap ? 2 * *cap : 32;
	void *q = realloc(*p, size * (size_t)c);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

/* Bind v to a new frame slot for the scope that follows (pop_var ends
 * it); -1 when out of memory: then nothing resolves any more, and every
 * use takes the environment. */
static int push_var(Comp *cp, const Var *v, bool let)
{
	if (cp->oom || !grow((void **)&cp->vars, &cp->capvars, cp->nvars, sizeof *cp->vars)) {
		cp->oom = true;
		return -1;
	}
	cp->vars[cp->nvars++] = (VarScope){v, cp->nframe, let, NULL};
	return cp->nframe++;
}

static void pop_var(Comp *cp, int slot)
{
	if (slot >= 0)
		cp->nvars--;
}

/* v's scope entry, or NULL. */
static const VarScope *var_scope(const Comp *cp, const Var *v)
{
	if (cp->oom)
		return NULL;
	for (int i = cp->nvars - 1; i >= 0; i--)
		if (cp->vars[i].v == v)
			return &cp->vars[i];
	return NULL;
}

/* v's frame slot (and whether a let binds it), or -1. */
static int var_slot(const Comp *cp, const Var *v, bool *let)
{
	const VarScope *sc = var_scope(cp, v);
	if (sc && let)
		*let = sc->let;
	return sc ? sc->slot : -1;
}

/* Add m * the term (slot, c) to f; false when f has no room. */
static bool affine_term(Affine *f, int slot, uint64_t c)
{
	for (int i = 0; i < f->n; i++)
		if (f->s[i] == slot) {
			f->c[i] += c;
			return true;
		}
	if (f->n == AFF_TERMS)
		return false;
	f->s[f->n] = slot;
	f->c[f->n++] = c;
	return true;
}

static bool push_buf(Comp *cp, const Buffer *b, BufRef r)
{
	if (cp->oom || !grow((void **)&cp->bufs, &cp->capbufs, cp->nbufs, sizeof *cp->bufs)) {
		cp->oom = true;
		return false;
	}
	cp->bufs[cp->nbufs++] = (BufScope){b, r};
	return true;
}

/* The access of b with nidx indices, resolved; unresolved (not fast):
 * the scan at run time, with its message. */
static BufRef buf_ref(const Comp *cp, const Buffer *b, int nidx)
{
	BufRef r = {.slot = -1};
	if (cp->oom)
		return r;
	for (int i = cp->nbufs - 1; i >= 0; i--)
		if (cp->bufs[i].b == b) {
			r = cp->bufs[i].r;
			if ((r.bs ? r.bs->ndim : b->ndim) != nidx || nidx > MAX_DIMS)
				r.fast = false;
			return r;
		}
	return r;
}

/* Variables of an integer dtype are read from the frame. */
static bool is_int_var(const Var *v)
{
	return !in_is_float(v->dtype) && v->dtype != DT_VOID;
}

/* ---------- compiling expressions ---------- */

static const CExpr *cx(Comp *cp, const Expr *e);

static const CExpr **cx_list(Comp *cp, Expr *const *es, int n)
{
	const CExpr **l = arena_alloc(cp->a, sizeof *l * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		l[i] = cx(cp, es[i]);
	return l;
}

/* e as an affine form of dtype t scaled by m, added to f; false when it
 * is not one (a load, a division, a product of variables, another
 * dtype, a variable without a frame slot, too many terms). */
static bool affine_add(const Comp *cp, Affine *f, const Expr *e, uint64_t m)
{
	if (e->dtype != f->t)
		return false;
	switch (e->kind) {
	case EX_INT:
		f->k += m * (uint64_t)wrap_int(e->u.ival, f->t);
		return true;
	case EX_VAR: {
		const VarScope *sc = var_scope(cp, e->u.var);
		if (e->u.var->dtype != f->t || !sc)
			return false;
		if (sc->sub) { /* the let's value, substituted */
			f->k += m * sc->sub->k;
			for (int i = 0; i < sc->sub->n; i++)
				if (!affine_term(f, sc->sub->s[i], m * sc->sub->c[i]))
					return false;
			f->lets |= sc->sub->lets;
			return true;
		}
		f->lets |= sc->let;
		return affine_term(f, sc->slot, m);
	}
	case EX_BIN: {
		const Expr *a = e->u.bin.a, *b = e->u.bin.b;
		switch (e->u.bin.op) {
		case OP_ADD:
			return affine_add(cp, f, a, m) && affine_add(cp, f, b, m);
		case OP_SUB:
			return affine_add(cp, f, a, m) && affine_add(cp, f, b, 0 - m);
		case OP_MUL:
			if (b->kind == EX_INT && b->dtype == f->t)
				return affine_add(cp, f, a, m * (uint64_t)wrap_int(b->u.ival, f->t));
			if (a->kind == EX_INT && a->dtype == f->t)
				return affine_add(cp, f, b, m * (uint64_t)wrap_int(a->u.ival, f->t));
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
static const Affine *index_affine(const Comp *cp, Expr *const *idx, int n)
{
	if (n > MAX_DIMS)
		return NULL;
	Affine *aff = arena_alloc(cp->a, sizeof *aff * (size_t)(n + 1));
	for (int k = 0; k < n; k++) {
		const Expr *x = idx[k];
		DType t = x->dtype;
		aff[k].t = t;
		if (t != DT_INT32 && t != DT_INT64)
			return NULL;
		if (x->kind == EX_BIN &&
		    (x->u.bin.op == OP_FLOORDIV || x->u.bin.op == OP_FLOORMOD) &&
		    x->u.bin.b->kind == EX_INT && x->u.bin.b->dtype == t &&
		    wrap_int(x->u.bin.b->u.ival, t) > 0) {
			/* c_floor_int of a wrapped form by a wrapped divisor > 0 */
			aff[k].div = wrap_int(x->u.bin.b->u.ival, t);
			aff[k].mod = x->u.bin.op == OP_FLOORMOD;
			aff[k].shift = (aff[k].div & (aff[k].div - 1)) == 0
					       ? __builtin_ctzll((unsigned long long)aff[k].div) : -1;
			x = x->u.bin.a;
		}
		if (!affine_add(cp, &aff[k], x, 1))
			return NULL;
	}
	return aff;
}

/* The value of `let v = value` as an affine form that never is
 * undefined, for var_scope's substitution; NULL when it is not one. */
static const Affine *let_affine(const Comp *cp, const Var *v, const Expr *value)
{
	DType t = v->dtype;
	if ((t != DT_INT32 && t != DT_INT64) || value->dtype != t)
		return NULL;
	Affine f = {.t = t};
	if (!affine_add(cp, &f, value, 1) || f.lets)
		return NULL;
	Affine *r = arena_alloc(cp->a, sizeof *r);
	*r = f;
	return r;
}

static bool affine_equal(const Affine *x, const Affine *y, int n)
{
	for (int k = 0; k < n; k++) {
		if (x[k].t != y[k].t || x[k].n != y[k].n || x[k].k != y[k].k ||
		    x[k].div != y[k].div || x[k].mod != y[k].mod)
			return false;
		for (int i = 0; i < x[k].n; i++)
			if (x[k].s[i] != y[k].s[i] || x[k].c[i] != y[k].c[i])
				return false;
	}
	return true;
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
	if (binop_is_compare(op) && in_is_float(ta) && in_is_float(e->u.bin.b->dtype) &&
	    !in_undef_compare_load(e))
		return op == OP_EQ ? c_eq_float : op == OP_NE ? c_ne_float : op == OP_LT ? c_lt_float
		       : op == OP_LE ? c_le_float : op == OP_GT ? c_gt_float : c_ge_float;
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

/* The closure of a load: typed when the buffer is fast, the indices
 * affine and the cells of the load's dtype. */
static CEval load_fn(const CExpr *c)
{
	if (!c->ref.fast || !c->aff || c->ref.dt != c->e->dtype)
		return c_load;
	switch (c->ref.dt) {
	case DT_FLOAT32: return c_load_f32;
	case DT_FLOAT64: return c_load_f64;
	case DT_INT32: return c_load_i32;
	case DT_INT64: return c_load_i64;
	case DT_BOOL: case DT_INT8: case DT_INT16: case DT_UINT8: case DT_FLOAT16:
	case DT_HANDLE: case DT_VOID: case DT_COUNT:
		return c_load;
	}
	return c_load;
}

/* An affine form of e (of dtype t, no let that may be undefined, no
 * division) in *f. */
static bool affine_of(const Comp *cp, const Expr *e, DType t, Affine *f)
{
	*f = (Affine){.t = t};
	return (t == DT_INT32 || t == DT_INT64) && affine_add(cp, f, e, 1) && !f->lets;
}

/* c_aff for an integer + - * whose node is an affine form, c_cmp_aff for
 * an integer comparison of two. */
static void pure_affine(Comp *cp, CExpr *c)
{
	const Expr *e = c->e;
	CEval f = c->fn;
	Affine x[2];
	if ((f == c_add_i32 || f == c_sub_i32 || f == c_mul_i32 || f == c_add_i64 ||
	     f == c_sub_i64 || f == c_mul_i64) && affine_of(cp, e, e->dtype, &x[0])) {
		Affine *a = arena_alloc(cp->a, sizeof *a);
		*a = x[0];
		c->aff = a;
		c->fn = c_aff;
	} else if ((f == c_eq_int || f == c_ne_int || f == c_lt_int || f == c_le_int ||
		    f == c_gt_int || f == c_ge_int) &&
		   affine_of(cp, e->u.bin.a, e->u.bin.a->dtype, &x[0]) &&
		   affine_of(cp, e->u.bin.b, e->u.bin.b->dtype, &x[1])) {
		Affine *a = arena_alloc(cp->a, sizeof *a * 2);
		a[0] = x[0];
		a[1] = x[1];
		c->aff = a;
		c->fn = c_cmp_aff;
	} else if (f == c_logical && c->a->fn == c_cmp_aff && c->b->fn == c_cmp_aff) {
		c->fn = e->u.bin.op == OP_AND ? c_and_cmp_aff : c_or_cmp_aff;
	}
}

static const CExpr *cx(Comp *cp, const Expr *e)
{
	CExpr *c = arena_alloc(cp->a, sizeof *c);
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
		c->slot = var_slot(cp, e->u.var, NULL);
		if (c->fn == c_var_int && c->slot >= 0 && e->dtype == e->u.var->dtype)
			c->fn = c_var_frame;
		break;
	case EX_BIN:
		c->a = cx(cp, e->u.bin.a);
		c->b = cx(cp, e->u.bin.b);
		c->fn = bin_fn(e);
		c->undef_cmp = in_undef_compare_load(e) != NULL;
		pure_affine(cp, c);
		break;
	case EX_NOT:
	case EX_NEG:
	case EX_CAST:
		c->a = cx(cp, e->u.un.a);
		c->fn = c_unary;
		break;
	case EX_SELECT:
		c->c = cx(cp, e->u.sel.cond);
		c->a = cx(cp, e->u.sel.a);
		c->b = cx(cp, e->u.sel.b);
		c->fn = c_select;
		break;
	case EX_LOAD:
		c->ops = cx_list(cp, e->u.load.idx, e->u.load.nidx);
		c->aff = index_affine(cp, e->u.load.idx, e->u.load.nidx);
		c->ref = buf_ref(cp, e->u.load.buf, e->u.load.nidx);
		c->fn = load_fn(c);
		break;
	case EX_CALL:
		c->ops = cx_list(cp, e->u.call.args, e->u.call.nargs);
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

/* A loop's step and bounds, as the tree walk evaluates them. */
static inline bool loop_bounds(Interp *in, const CStmt *c, int64_t *lo, int64_t *ext)
{
	return in_step(in, c->s->span) && eval_int(in, c->x, lo, "a loop bound") &&
	       eval_int(in, c->y, ext, "a loop extent");
}

/* A loop's iterations once its bounds are known, the body run through
 * body (inlined where it is known). */
static inline __attribute__((always_inline)) bool
loop_run(Interp *in, const CStmt *c, int64_t lo, int64_t ext,
	 bool (*body)(Interp *, const CStmt *))
{
	const Stmt *s = c->s;
	const Var *v = s->u.loop.var;
	SavedVar old;
	if (!in_bind_var(in, v, (Value){.i = 0}, &old))
		return false;
	if (!in_push_loop(in, v)) {
		in_unbind_var(in, v, &old);
		return false;
	}
	bool ok = true;
	const CStmt *b = c->body;
	Value *fr = c->slot >= 0 ? &in->frame[c->slot] : NULL;
	for (int64_t k = 0; k < ext && ok; k++) {
		Value x = {.i = wrap_int((int64_t)((uint64_t)lo + (uint64_t)k), v->dtype)};
		/* looked up each time: the body may grow the environment */
		in_slot(in, v)->v = x;
		if (fr)
			*fr = x;
		in->counts.iterations++;
		ok = in_step(in, s->span) && body(in, b);
	}
	in->nloops--;
	in_unbind_var(in, v, &old);
	return ok;
}

static inline __attribute__((always_inline)) bool
for_loop(Interp *in, const CStmt *c, bool (*body)(Interp *, const CStmt *))
{
	int64_t lo, ext;
	return loop_bounds(in, c, &lo, &ext) && loop_run(in, c, lo, ext, body);
}

static bool s_for(Interp *in, const CStmt *c)
{
	return for_loop(in, c, run);
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
	BufState *bs = ref_buffer(in, &c->ref, b, n, "store", s->span);
	if (!bs || (!(c->aff && c->ref.fast && affine_offset(in, bs, c->aff, n, &off)) &&
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

/* The offsets of the access (bs, aff, n) over a loop whose variable (in
 * frame slot `slot`) runs lo + k for k in [0, ext): base + delta * k, when
 * every index of every iteration is in bounds, computed exactly (no
 * wrapping: then the wrapped index is the exact one), and no other
 * variable is undefined. False: not that shape; the iterations check
 * each access themselves. */
static bool affine_line(const Interp *in, const BufState *bs, const Affine *aff, int n,
			int slot, int64_t lo, int64_t ext, uint64_t *base, uint64_t *delta)
{
	const Value *fr = in->frame;
	int64_t o = 0, d = 0; /* within a buffer's size once the bounds hold */
	for (int k = 0; k < n; k++) {
		const Affine *f = &aff[k];
		uint64_t x = f->k;
		int64_t cv = 0;
		if (f->div)
			return false; /* not a line */
		for (int i = 0; i < f->n; i++) {
			if (f->s[i] == slot) {
				cv = wrap_int((int64_t)f->c[i], f->t);
				continue;
			}
			if (f->lets && in->frame_undef[f->s[i]])
				return false;
			x += f->c[i] * (uint64_t)fr[f->s[i]].i;
		}
		int64_t first, last, t;
		if (__builtin_mul_overflow(cv, lo, &t) ||
		    __builtin_add_overflow(wrap_int((int64_t)x, f->t), t, &first) ||
		    __builtin_mul_overflow(cv, ext - 1, &t) || __builtin_add_overflow(first, t, &last))
			return false;
		int64_t m = bs->shape[k];
		if (first < 0 || first >= m || last < 0 || last >= m)
			return false;
		o = o * m + first;
		d = d * m + (ext > 1 ? cv : 0); /* |cv| < m when there is a step */
	}
	*base = (uint64_t)o;
	*delta = (uint64_t)d;
	return true;
}

/* The level of the nest's loop whose variable has frame slot `slot`, or
 * -1. */
static inline int nest_level(const Nest *N, int slot)
{
	for (int l = 0; l < N->d; l++)
		if (N->slot[l] == slot)
			return l;
	return -1;
}

/* The offsets of the access (bs, aff, n) over the nest N: base + sum_l
 * k_l * delta[l] at iteration (k_0, ..., k_{d-1}), when every index of
 * every iteration is in bounds and no other variable is undefined. Each
 * index is wrap(x) + sum_l c_l * (lo_l + k_l) computed exactly (then in
 * bounds, it is the wrapped value): linear in k, so its least and
 * greatest values over the box are sums of the extreme terms. */
static bool affine_box(const Interp *in, const BufState *bs, const Affine *aff, int n,
		       const Nest *N, uint64_t *base, int64_t *delta)
{
	const Value *fr = in->frame;
	int64_t o = 0;
	for (int l = 0; l < N->d; l++)
		delta[l] = 0;
	for (int k = 0; k < n; k++) {
		const Affine *f = &aff[k];
		if (f->div)
			return false;
		uint64_t x = f->k;
		int64_t cv[NEST_MAX] = {0};
		for (int i = 0; i < f->n; i++) {
			int l = nest_level(N, f->s[i]);
			if (l >= 0) {
				cv[l] = wrap_int((int64_t)f->c[i], f->t);
				continue;
			}
			if (f->lets && in->frame_undef[f->s[i]])
				return false;
			x += f->c[i] * (uint64_t)fr[f->s[i]].i;
		}
		int64_t first = wrap_int((int64_t)x, f->t), t;
		for (int l = 0; l < N->d; l++)
			if (__builtin_mul_overflow(cv[l], N->lo[l], &t) ||
			    __builtin_add_overflow(first, t, &first))
				return false;
		int64_t least = first, most = first;
		for (int l = 0; l < N->d; l++)
			if (N->ext[l] > 1 &&
			    (__builtin_mul_overflow(cv[l], N->ext[l] - 1, &t) ||
			     (t < 0 ? __builtin_add_overflow(least, t, &least)
				    : __builtin_add_overflow(most, t, &most))))
				return false;
		int64_t m = bs->shape[k];
		if (least < 0 || most >= m)
			return false;
		o = o * m + first;
		for (int l = 0; l < N->d; l++) /* |c_l| < m when the loop steps */
			delta[l] = delta[l] * m + (N->ext[l] > 1 ? cv[l] : 0);
	}
	*base = (uint64_t)o;
	return true;
}

/* Whether the nest's steps, at most (every init taken), fit the step
 * limit: then no step of the nest stops the run. */
static bool nest_budget(const Interp *in, const Nest *N)
{
	unsigned __int128 p = 1, total = 0;
	for (int l = 0; l < N->d; l++) {
		total += p; /* the loop statement, once per iteration of the outer loop */
		p *= (uint64_t)N->ext[l];
		if (p > ((unsigned __int128)1 << 62))
			return false;
		total += p; /* its iterations */
		if (l == N->pro)
			total += 2 * p; /* the SEQ and the prologue's store */
	}
	total += p * (unsigned __int128)(1 + N->pre_steps + N->mid_steps + (N->init ? 1 : 0));
	return (unsigned __int128)in->steps + total <= in->limit;
}

/* The rest of the nest from iteration k of its loops [0, d) (k[d-1]
 * not begun, the outer ones under way) as the loops run it: the
 * variables bound and the loops entered as they would be, the remaining
 * iterations of each loop run by their closures, then each loop left. */
static bool nest_resume(Interp *in, const Nest *N, const int64_t *k, int d)
{
	int bound = 0;
	SavedVar old[NEST_MAX];
	for (; bound < d; bound++) {
		const Var *v = N->loop[bound]->s->u.loop.var;
		Value x = {.i = N->lo[bound] + k[bound]};
		if (!in_bind_var(in, v, x, &old[bound]))
			break;
		if (!in_push_loop(in, v)) {
			in_unbind_var(in, v, &old[bound]);
			break;
		}
		in->frame[N->slot[bound]] = x;
	}
	bool ok = bound == d;
	for (int l = bound - 1; l >= 0; l--) {
		const CStmt *c = N->loop[l];
		const Var *v = c->s->u.loop.var;
		for (int64_t j = l == d - 1 ? k[l] : k[l] + 1; ok && j < N->ext[l]; j++) {
			Value x = {.i = N->lo[l] + j};
			in_slot(in, v)->v = x;
			in->frame[N->slot[l]] = x;
			in->counts.iterations++;
			ok = in_step(in, c->s->span) && run(in, c->body);
		}
		in->nloops--;
		in_unbind_var(in, v, &old[l]);
	}
	return ok;
}

/* Enter iteration k[l] of the nest's loop l (its step not counted) and
 * the first iterations of the loops inside it, down to the innermost
 * loop's statement: their steps, and the prologue's store when loop
 * N->pro is among them. False, with nothing of loop N->pro's iteration
 * done, when the prologue's cell is not in bounds: then the loops
 * resume at that iteration (nest_resume of N->pro + 1 loops). */
static bool nest_enter(Interp *in, const Nest *N, BufState *bp, const int64_t *k, int l)
{
	for (int m = l; m < N->d - 1; m++) {
		int64_t off;
		if (m == N->pro &&
		    !affine_offset(in, bp, N->pstore->aff, N->pstore->s->u.store.nidx, &off))
			return false;
		in->steps++; /* iteration k[m] of loop m */
		in->counts.iterations++;
		if (m == N->pro) {
			in->steps += 2; /* the SEQ, the store */
			bp->data[off] = N->pval;
			bp->cell[off] = CELL_INIT;
			in->counts.stores++;
		}
		in->steps++; /* the statement of loop m + 1 */
	}
	(void)k;
	return true;
}

/* The updates X[a] = X[a] + Y[b] * Z[c] and X[a] = X[a] + Y[b] (or the
 * sum the other way round when upd_first is false) of cells and values
 * of one dtype T, all indices affine, all buffers fast. s_update_SUF:
 * when the step fits the limit, the indices are in bounds and the cells
 * are initialised, the store of s_store with the values of the typed
 * load, multiply and add closures (the same wrapping or roundings in the
 * same order: CALC, from the cells x, y, z to the stored value r), else
 * s_store. s_for_update_SUF, a loop whose body is that update: when every
 * access is a line over the loop (affine_line), the loop variable's
 * values need no wrapping and the step limit holds for the whole loop,
 * the iterations only check the cells; an iteration whose cells are not
 * all initialised binds the variable and runs s_store (the shared code,
 * its message). */
#define UPDATE(SUF, NL, CALC)                                                            \
	static inline __attribute__((always_inline)) bool s_update_##SUF(Interp *in,       \
									 const CStmt *c)   \
	{                                                                                \
		const CExpr *ly = c->ly, *lz = c->lz;                                    \
		BufState *bx = bufref(in, &c->ref), *by = bufref(in, &ly->ref);          \
		BufState *bz = NL == 2 ? bufref(in, &lz->ref) : bx;                      \
		int64_t ox, oy, oz = 0;                                                  \
		if (in->steps < in->limit &&                                             \
		    affine_offset(in, bx, c->aff, c->s->u.store.nidx, &ox) &&            \
		    affine_offset(in, by, ly->aff, ly->e->u.load.nidx, &oy) &&           \
		    (NL == 1 || affine_offset(in, bz, lz->aff, lz->e->u.load.nidx, &oz)) && \
		    bx->cell[ox] == CELL_INIT && by->cell[oy] == CELL_INIT &&            \
		    (NL == 1 || bz->cell[oz] == CELL_INIT)) {                            \
			in->steps++;                                                     \
			bool first = c->upd_first;                                       \
			const Value *x = &bx->data[ox], *y = &by->data[oy], *z = &bz->data[oz]; \
			Value r;                                                         \
			(void)z;                                                         \
			CALC;                                                            \
			bx->data[ox] = r;                                                \
			bx->cell[ox] = CELL_INIT;                                        \
			in->counts.loads += 1 + NL;                                      \
			in->counts.stores++;                                             \
			return true;                                                     \
		}                                                                        \
		return s_store(in, c);                                                   \
	}                                                                                \
	static bool s_store_update_##SUF(Interp *in, const CStmt *c)                     \
	{                                                                                \
		return s_update_##SUF(in, c);                                            \
	}                                                                                \
	static bool s_for_update_##SUF(Interp *in, const CStmt *c)                       \
	{                                                                                \
		const Stmt *s = c->s;                                                    \
		const CStmt *u = c->body;                                                \
		const Var *v = s->u.loop.var;                                            \
		int64_t lo, ext;                                                         \
		if (!loop_bounds(in, c, &lo, &ext))                                      \
			return false;                                                    \
		__int128 top = (__int128)lo + ext - 1;                                   \
		bool vt32 = v->dtype == DT_INT32;                                        \
		if (c->slot < 0 || ext <= 0 || (!vt32 && v->dtype != DT_INT64) ||        \
		    (vt32 && (lo < INT32_MIN || top > INT32_MAX)) || top > INT64_MAX ||  \
		    (unsigned __int128)in->steps + 2 * (unsigned __int128)ext > in->limit) \
			return loop_run(in, c, lo, ext, s_update_##SUF);                 \
		const CExpr *ly = u->ly, *lz = u->lz;                                    \
		BufState *bx = bufref(in, &u->ref), *by = bufref(in, &ly->ref);          \
		BufState *bz = NL == 2 ? bufref(in, &lz->ref) : bx;                      \
		uint64_t ox, oy, oz = 0, dx, dy, dz = 0;                                 \
		if (!affine_line(in, bx, u->aff, u->s->u.store.nidx, c->slot, lo, ext, &ox, &dx) || \
		    !affine_line(in, by, ly->aff, ly->e->u.load.nidx, c->slot, lo, ext, &oy, &dy) || \
		    (NL == 2 && !affine_line(in, bz, lz->aff, lz->e->u.load.nidx, c->slot, lo, ext, \
					     &oz, &dz)))                                 \
			return loop_run(in, c, lo, ext, s_update_##SUF);                 \
		SavedVar old;                                                            \
		if (!in_bind_var(in, v, (Value){.i = 0}, &old))                          \
			return false;                                                    \
		if (!in_push_loop(in, v)) {                                              \
			in_unbind_var(in, v, &old);                                      \
			return false;                                                    \
		}                                                                        \
		bool ok = true, first = u->upd_first;                                    \
		uint8_t *cx_ = bx->cell, *cy = by->cell, *cz = bz->cell;                 \
		Value *vx = bx->data, *vy = by->data, *vz = bz->data;                    \
		for (int64_t k = 0; k < ext; k++, ox += dx, oy += dy, oz += dz) {        \
			in->counts.iterations++;                                         \
			in->steps++;                                                     \
			if (cx_[ox] == CELL_INIT && cy[oy] == CELL_INIT &&               \
			    (NL == 1 || cz[oz] == CELL_INIT)) {                          \
				in->steps++;                                             \
				const Value *x = &vx[ox], *y = &vy[oy], *z = &vz[oz];    \
				Value r;                                                 \
				(void)z;                                                 \
				CALC;                                                    \
				vx[ox] = r;                                              \
				cx_[ox] = CELL_INIT;                                     \
				in->counts.loads += 1 + NL;                              \
				in->counts.stores++;                                     \
				continue;                                                \
			}                                                                \
			Value xv = {.i = lo + k};                                        \
			in_slot(in, v)->v = xv;                                          \
			in->frame[c->slot] = xv;                                         \
			if (!s_store(in, u)) {                                           \
				ok = false;                                              \
				break;                                                   \
			}                                                                \
		}                                                                        \
		in->nloops--;                                                            \
		in_unbind_var(in, v, &old);                                              \
		return ok;                                                               \
	}                                                                                \
	static bool s_nest_##SUF(Interp *in, const CStmt *c)                             \
	{                                                                                \
		const Nest *N = c->nest;                                                 \
		const CStmt *u = N->u, *is = N->init;                                    \
		const CExpr *ly = u->ly, *lz = u->lz;                                    \
		int d = N->d, L = d - 1;                                                 \
		int nx = u->s->u.store.nidx, ny = ly->e->u.load.nidx;                    \
		int nz = NL == 2 ? lz->e->u.load.nidx : 0, ni = is ? is->s->u.store.nidx : 0; \
		BufState *bx = bufref(in, &u->ref), *by = bufref(in, &ly->ref);          \
		BufState *bz = NL == 2 ? bufref(in, &lz->ref) : bx;                      \
		BufState *bi = is ? bufref(in, &is->ref) : bx;                           \
		if (!nest_budget(in, N))                                                 \
			return s_for(in, c);                                             \
		/* each access a line over the box, or computed at each iteration */    \
		uint64_t ox = 0, oy = 0, oz = 0, oi = 0;                                 \
		int64_t dx[NEST_MAX], dy[NEST_MAX], dz[NEST_MAX], di[NEST_MAX];          \
		bool px = !affine_box(in, bx, u->aff, nx, N, &ox, dx);                   \
		bool py = !affine_box(in, by, ly->aff, ny, N, &oy, dy);                  \
		bool pz = NL == 2 && !affine_box(in, bz, lz->aff, nz, N, &oz, dz);       \
		bool pi = is && !affine_box(in, bi, is->aff, ni, N, &oi, di);            \
		for (int l = 0; l < d; l++) {                                            \
			if (px)                                                          \
				dx[l] = 0;                                               \
			if (py)                                                          \
				dy[l] = 0;                                               \
			if (NL == 1 || pz)                                               \
				dz[l] = 0;                                               \
			if (!is || pi)                                                   \
				di[l] = 0;                                               \
		}                                                                        \
		Value *fr = in->frame;                                                   \
		int64_t k[NEST_MAX];                                                     \
		BufState *bp = N->pstore ? bufref(in, &N->pstore->ref) : bx;             \
		in->steps++; /* the outermost loop statement */                          \
		for (int l = 0; l < d; l++) {                                            \
			k[l] = 0;                                                        \
			fr[N->slot[l]].i = N->lo[l];                                     \
		}                                                                        \
		if (!nest_enter(in, N, bp, k, 0))                                        \
			return nest_resume(in, N, k, N->pro + 1);                        \
		bool first = u->upd_first;                                               \
		const uint64_t skip_steps = 1 + (uint64_t)N->pre_steps;                  \
		const uint64_t body_steps = skip_steps + (uint64_t)N->mid_steps + 1;     \
		const uint64_t branches = (N->guard != NULL) + (N->cond != NULL);        \
		const int64_t eL = N->ext[L];                                            \
		uint8_t *cx_ = bx->cell, *cy = by->cell, *cz = bz->cell, *ci = bi->cell; \
		Value *vx = bx->data, *vy = by->data, *vz = bz->data;                    \
		for (;;) {                                                               \
			for (; k[L] < eL; k[L]++, ox += (uint64_t)dx[L], oy += (uint64_t)dy[L], \
					  oz += (uint64_t)dz[L], oi += (uint64_t)di[L]) { \
				TVal t;                                                  \
				fr[N->slot[L]].i = N->lo[L] + k[L];                      \
				if (N->guard) { /* pure: cannot fail */                  \
					ev(in, N->guard, &t);                            \
					if (!truth(t.v, N->guard->e->dtype)) {           \
						in->counts.iterations++;                 \
						in->counts.branches++;                   \
						in->steps += skip_steps;                 \
						continue;                                \
					}                                                \
				}                                                        \
				bool init = false;                                       \
				if (N->cond) {                                           \
					ev(in, N->cond, &t);                             \
					init = truth(t.v, N->cond->e->dtype);            \
				}                                                        \
				uint64_t ax = ox, ay = oy, az = oz, ai = oi;             \
				int64_t o_;                                              \
				if (px) {                                                \
					if (!affine_offset(in, bx, u->aff, nx, &o_))     \
						return nest_resume(in, N, k, d);            \
					ax = (uint64_t)o_;                               \
				}                                                        \
				if (py) {                                                \
					if (!affine_offset(in, by, ly->aff, ny, &o_))    \
						return nest_resume(in, N, k, d);            \
					ay = (uint64_t)o_;                               \
				}                                                        \
				if (pz) {                                                \
					if (!affine_offset(in, bz, lz->aff, nz, &o_))    \
						return nest_resume(in, N, k, d);            \
					az = (uint64_t)o_;                               \
				}                                                        \
				if (init && pi) {                                        \
					if (!affine_offset(in, bi, is->aff, ni, &o_))    \
						return nest_resume(in, N, k, d);            \
					ai = (uint64_t)o_;                               \
				}                                                        \
				/* each read cell initialised, perhaps by the init */    \
				if (!((cx_[ax] == CELL_INIT || (init && bi == bx && ai == ax)) && \
				      (cy[ay] == CELL_INIT || (init && bi == by && ai == ay)) && \
				      (NL == 1 || cz[az] == CELL_INIT ||                 \
				       (init && bi == bz && ai == az))))                 \
					return nest_resume(in, N, k, d);                    \
				in->counts.iterations++;                                 \
				in->steps += body_steps + init;                          \
				in->counts.branches += branches;                         \
				if (init) {                                              \
					bi->data[ai] = N->initv;                         \
					ci[ai] = CELL_INIT;                              \
					in->counts.stores++;                             \
				}                                                        \
				const Value *x = &vx[ax], *y = &vy[ay], *z = &vz[az];    \
				Value r;                                                 \
				(void)z;                                                 \
				CALC;                                                    \
				vx[ax] = r;                                              \
				cx_[ax] = CELL_INIT;                                     \
				in->counts.loads += 1 + NL;                              \
				in->counts.stores++;                                     \
			}                                                                \
			int l = L - 1;                                                   \
			for (; l >= 0; l--) { /* the odometer: level l + 1 ended */      \
				uint64_t e1 = (uint64_t)N->ext[l + 1];                   \
				ox -= e1 * (uint64_t)dx[l + 1], oy -= e1 * (uint64_t)dy[l + 1]; \
				oz -= e1 * (uint64_t)dz[l + 1], oi -= e1 * (uint64_t)di[l + 1]; \
				k[l + 1] = 0;                                            \
				fr[N->slot[l + 1]].i = N->lo[l + 1];                     \
				k[l]++;                                                  \
				ox += (uint64_t)dx[l], oy += (uint64_t)dy[l];            \
				oz += (uint64_t)dz[l], oi += (uint64_t)di[l];            \
				if (k[l] < N->ext[l])                                    \
					break;                                           \
			}                                                                \
			if (l < 0)                                                       \
				return true;                                             \
			fr[N->slot[l]].i = N->lo[l] + k[l];                              \
			if (!nest_enter(in, N, bp, k, l))                                \
				return nest_resume(in, N, k, N->pro + 1);                \
		}                                                                        \
	}

/* f32: loads round (c_load_f32), each operation rounds once
 * (c_mul_f32, c_add_f32), the store converts f32 to f32 */
#define F32(e) ((double)(float)(e))
#define SUM_F(a, p, R) (first ? R((a) + (p)) : R((p) + (a)))
UPDATE(mul_f32, 2, double a = F32(x->f); double p = F32(F32(y->f) * F32(z->f));
       r.f = F32(SUM_F(a, p, F32)))
UPDATE(add_f32, 1, double a = F32(x->f); double p = F32(y->f); r.f = F32(SUM_F(a, p, F32)))
#define F64(e) (e)
UPDATE(mul_f64, 2, double a = x->f; double p = y->f * z->f; r.f = SUM_F(a, p, F64))
UPDATE(add_f64, 1, double a = x->f; double p = y->f; r.f = SUM_F(a, p, F64))
/* integers: 64-bit unsigned arithmetic wrapped to the dtype (c_load_i32,
 * c_mul_i32, c_add_i32; int64 wraps to itself) */
#define W32(e) wrap_int((int64_t)(e), DT_INT32)
#define SUM_I(a, p, W) (first ? W((uint64_t)(a) + (uint64_t)(p)) : W((uint64_t)(p) + (uint64_t)(a)))
UPDATE(mul_i32, 2, int64_t a = W32(x->i); int64_t p = W32((uint64_t)W32(y->i) * (uint64_t)W32(z->i));
       r.i = W32(SUM_I(a, p, W32)))
UPDATE(add_i32, 1, int64_t a = W32(x->i); int64_t p = W32(y->i); r.i = W32(SUM_I(a, p, W32)))
#define W64(e) ((int64_t)(e))
UPDATE(mul_i64, 2, int64_t a = x->i; int64_t p = (int64_t)((uint64_t)y->i * (uint64_t)z->i);
       r.i = SUM_I(a, p, W64))
UPDATE(add_i64, 1, int64_t a = x->i; int64_t p = y->i; r.i = SUM_I(a, p, W64))

/* A store X[a] = f(Y[b]) of a float dtype T whose value is one typed
 * load and a chain of operations with constants (+ - * / on either side)
 * and one-operand math calls, each in T: the element-wise map. */
#define MAP_OPS 8
typedef struct MapOp {
	const Expr *e; /* the node: a binary operator or a call */
	bool call;
	bool k_left; /* the constant is the first operand */
	double k;    /* rounded to T */
} MapOp;

typedef struct Map {
	bool const_bounds; /* the loop's bounds are integer constants */
	DType t;
	const CExpr *load;
	int nops;
	MapOp ops[MAP_OPS];
} Map;

/* The chain's value from the loaded cell's value: what the typed load,
 * FLOAT_OP (or in_bin_values for /) and c_call compute when no operand
 * is undefined, in the same order. */
static inline __attribute__((always_inline)) double map_value_t(Interp *in, const Map *m,
								  double v, DType t)
{
	v = round_float(v, t);
	for (int i = 0; i < m->nops; i++) {
		const MapOp *o = &m->ops[i];
		if (o->call) {
			Value arg[MATH_MAX_ARGS] = {{0}};
			TVal r;
			arg[0].f = round_float(v, t);
			in_call_values(in, o->e, arg, &r); /* a float call does not fail */
			v = r.v.f;
			continue;
		}
		double a = o->k_left ? o->k : round_float(v, t);
		double b = o->k_left ? round_float(v, t) : o->k;
		float_arith(o->e->u.bin.op, a, b, t, &v);
	}
	return v;
}

/* map_value_t with the dtype a constant in each branch (its roundings
 * inline), rounded to the cells' dtype as the store converts it. */
static inline __attribute__((always_inline)) double map_value(Interp *in, const Map *m, double v)
{
	return m->t == DT_FLOAT32 ? (double)(float)map_value_t(in, m, v, DT_FLOAT32)
				  : map_value_t(in, m, v, DT_FLOAT64);
}

/* s_for_map: a loop over a map store whose target is a line over the
 * loop (affine_line) and whose step budget holds for the whole loop: an
 * iteration whose loaded cell is in bounds and initialised computes
 * map_value and stores it; any other binds the variable and runs s_store
 * (the shared code, its message). As s_for_update otherwise. */
static bool s_for_map(Interp *in, const CStmt *c)
{
	const Stmt *s = c->s;
	const CStmt *u = c->body;
	const Map *m = c->map;
	const CExpr *ld = m->load;
	const Var *v = s->u.loop.var;
	int64_t lo, ext;
	if (m->const_bounds) { /* loop_bounds of two integer constants */
		if (!in_step(in, s->span))
			return false;
		lo = c->x->k.i;
		ext = c->y->k.i;
	} else if (!loop_bounds(in, c, &lo, &ext)) {
		return false;
	}
	__int128 top = (__int128)lo + ext - 1;
	bool vt32 = v->dtype == DT_INT32;
	BufState *bx = bufref(in, &u->ref), *by = bufref(in, &ld->ref);
	uint64_t ox, dx, oy = 0, dy = 0;
	if (c->slot < 0 || ext <= 0 || (!vt32 && v->dtype != DT_INT64) ||
	    (vt32 && (lo < INT32_MIN || top > INT32_MAX)) || top > INT64_MAX ||
	    (unsigned __int128)in->steps + 2 * (unsigned __int128)ext > in->limit ||
	    !affine_line(in, bx, u->aff, u->s->u.store.nidx, c->slot, lo, ext, &ox, &dx))
		return loop_run(in, c, lo, ext, s_store);
	int ny = ld->e->u.load.nidx;
	bool line = affine_line(in, by, ld->aff, ny, c->slot, lo, ext, &oy, &dy);
	/* the variable is bound and the loop entered at the first iteration
	 * that runs s_store: nothing else reads the environment */
	SavedVar old;
	bool bound = false;
	bool ok = true;
	uint8_t *cx_ = bx->cell, *cy = by->cell;
	Value *vx = bx->data, *vy = by->data;
	uint64_t nfast = 0; /* the fast iterations' counts, added in bulk */
	for (int64_t k = 0; k < ext; k++, ox += dx, oy += dy) {
		int64_t o = (int64_t)oy;
		if (!line) /* the load's offset reads the loop's value */
			in->frame[c->slot].i = lo + k;
		if ((line || affine_offset(in, by, ld->aff, ny, &o)) && cy[o] == CELL_INIT) {
			vx[ox].f = map_value(in, m, vy[o].f);
			cx_[ox] = CELL_INIT;
			nfast++;
			continue;
		}
		in->steps += 2 * nfast;
		in->counts.iterations += nfast;
		in->counts.loads += nfast;
		in->counts.stores += nfast;
		nfast = 0;
		Value xv = {.i = lo + k};
		if (!bound) {
			if (!in_bind_var(in, v, xv, &old))
				return false;
			if (!in_push_loop(in, v)) {
				in_unbind_var(in, v, &old);
				return false;
			}
			bound = true;
		}
		in->frame[c->slot] = xv;
		in_slot(in, v)->v = xv;
		in->counts.iterations++;
		in->steps++;
		if (!s_store(in, u)) {
			ok = false;
			break;
		}
	}
	in->steps += 2 * nfast;
	in->counts.iterations += nfast;
	in->counts.loads += nfast;
	in->counts.stores += nfast;
	if (bound) {
		in->nloops--;
		in_unbind_var(in, v, &old);
	}
	return ok;
}

/* A nest (struct Nest, no prologue) of loops whose innermost body is a
 * map store: the target a line over the box (else the loops run as
 * they are), the load a line or computed at each iteration; at the first
 * iteration whose loaded cell is not in bounds or not initialised the
 * loops resume there (nest_resume). */
static bool s_nest_map(Interp *in, const CStmt *c)
{
	const Nest *N = c->nest;
	const CStmt *u = N->u;
	const Map *m = N->map;
	const CExpr *ld = m->load;
	int d = N->d, L = d - 1, nx = u->s->u.store.nidx, ny = ld->e->u.load.nidx;
	BufState *bx = bufref(in, &u->ref), *by = bufref(in, &ld->ref);
	uint64_t ox, oy = 0;
	int64_t dx[NEST_MAX], dy[NEST_MAX], k[NEST_MAX];
	if (!nest_budget(in, N) || !affine_box(in, bx, u->aff, nx, N, &ox, dx))
		return s_for(in, c);
	bool py = !affine_box(in, by, ld->aff, ny, N, &oy, dy);
	Value *fr = in->frame;
	for (int l = 0; l < d; l++) {
		if (py)
			dy[l] = 0;
		k[l] = 0;
		fr[N->slot[l]].i = N->lo[l];
	}
	in->steps++; /* the outermost loop statement */
	nest_enter(in, N, bx, k, 0); /* no prologue: cannot fail */
	uint8_t *cx_ = bx->cell, *cy = by->cell;
	Value *vx = bx->data, *vy = by->data;
	const int64_t eL = N->ext[L];
	uint64_t nfast = 0; /* the innermost iterations' counts, added in bulk */
	bool done = false;
	while (!done) {
		for (; k[L] < eL; k[L]++, ox += (uint64_t)dx[L], oy += (uint64_t)dy[L]) {
			int64_t o = (int64_t)oy;
			if (py) {
				fr[N->slot[L]].i = N->lo[L] + k[L];
				if (!affine_offset(in, by, ld->aff, ny, &o))
					break;
			}
			if (cy[o] != CELL_INIT)
				break;
			vx[ox].f = map_value(in, m, vy[o].f);
			cx_[ox] = CELL_INIT;
			nfast++;
		}
		if (k[L] < eL)
			break; /* resume */
		int l = L - 1;
		for (; l >= 0; l--) { /* the odometer, as s_nest_SUF's */
			uint64_t e1 = (uint64_t)N->ext[l + 1];
			ox -= e1 * (uint64_t)dx[l + 1], oy -= e1 * (uint64_t)dy[l + 1];
			k[l + 1] = 0;
			fr[N->slot[l + 1]].i = N->lo[l + 1];
			k[l]++;
			ox += (uint64_t)dx[l], oy += (uint64_t)dy[l];
			if (k[l] < N->ext[l])
				break;
		}
		if (l < 0) {
			done = true;
		} else {
			fr[N->slot[l]].i = N->lo[l] + k[l];
			nest_enter(in, N, bx, k, l);
		}
	}
	in->steps += 2 * nfast;
	in->counts.iterations += nfast;
	in->counts.loads += nfast;
	in->counts.stores += nfast;
	return done || nest_resume(in, N, k, d);
}

/* The chain of c (of dtype m->t) into m, innermost operation first. */
static bool map_chain(const CExpr *c, Map *m)
{
	DType t = m->t;
	const Expr *e = c->e;
	if (e->dtype != t)
		return false;
	if (c->fn == (t == DT_FLOAT32 ? c_load_f32 : c_load_f64)) {
		if (m->load)
			return false;
		m->load = c;
		return true;
	}
	if (e->kind == EX_CALL && c->fn == c_call) {
		if (e->u.call.nargs != 1 || e->u.call.args[0]->dtype != t ||
		    !map_chain(c->ops[0], m) || m->nops == MAP_OPS)
			return false;
		m->ops[m->nops++] = (MapOp){.e = e, .call = true};
		return true;
	}
	if (e->kind != EX_BIN || e->u.bin.a->dtype != t || e->u.bin.b->dtype != t)
		return false;
	BinOp op = e->u.bin.op;
	if (op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV)
		return false;
	/* the closures bin_fn picks for these: FLOAT_OP, or c_bin for / */
	bool kl = c->a->fn == c_const;
	const CExpr *k = kl ? c->a : c->b, *x = kl ? c->b : c->a;
	if (k->fn != c_const || !map_chain(x, m) || m->nops == MAP_OPS)
		return false;
	m->ops[m->nops++] = (MapOp){.e = e, .k_left = kl, .k = round_float(k->k.f, t)};
	return true;
}

/* The map of the loop c's store u, or NULL. */
static const Map *make_map(Comp *cp, const CStmt *c, const CStmt *u)
{
	if (u->fn != s_store || !u->aff || !u->ref.fast)
		return NULL;
	DType t = u->ref.dt;
	if ((t != DT_FLOAT32 && t != DT_FLOAT64) || u->s->u.store.value->dtype != t)
		return NULL;
	Map m = {.t = t};
	if (!map_chain(u->x, &m) || !m.load || !m.load->ref.fast || !m.load->aff)
		return NULL;
	const Stmt *s = c->s;
	DType tm = s->u.loop.min->dtype, te = s->u.loop.extent->dtype;
	m.const_bounds = c->x->fn == c_const && c->y->fn == c_const &&
			 (tm == DT_INT32 || tm == DT_INT64) && (te == DT_INT32 || te == DT_INT64);
	Map *r = arena_alloc(cp->a, sizeof *r);
	*r = m;
	return r;
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
	if (c->slot >= 0)
		in->bufslot[c->slot] = &bs;
	bool ok = run(in, c->body);
	if (c->slot >= 0)
		in->bufslot[c->slot] = NULL;
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
	if (!ev(in, c->x, &x))
		return false;
	Value val;
	int id = v->id;
	if (c->slot >= 0 && id >= 0 && id < in->nenv &&
	    (!in->env[id].var || in->env[id].var == v) &&
	    in_convert(x.v, s->u.let.value->dtype, v->dtype, &val)) {
		/* in_bind_let without overflow, inline: the slot's old binding
		 * saved, the new one with its taint */
		Slot saved = in->env[id];
		in->env[id] = (Slot){v, val, x.undef};
		in->frame[c->slot] = val;
		in->frame_undef[c->slot] = x.undef;
		bool ok = run(in, c->body);
		in->env[id] = saved;
		return ok;
	}
	if (!in_bind_let(in, v, s->u.let.value, x, s->span, &old))
		return false;
	if (c->slot >= 0) {
		const Slot *sl = in_slot(in, v);
		in->frame[c->slot] = sl->v;
		in->frame_undef[c->slot] = sl->undef;
	}
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

/* The update closures by dtype: the typed load, add and multiply they
 * stand for, and the store and loop closures with one and two loads. */
static const struct UpdateKind {
	DType t;
	CEval load, add, mul;
	CExec store1, for1, store2, for2, nest1, nest2;
} update_kinds[] = {
	{DT_FLOAT32, c_load_f32, c_add_f32, c_mul_f32, s_store_update_add_f32,
	 s_for_update_add_f32, s_store_update_mul_f32, s_for_update_mul_f32, s_nest_add_f32,
	 s_nest_mul_f32},
	{DT_FLOAT64, c_load_f64, c_add_f64, c_mul_f64, s_store_update_add_f64,
	 s_for_update_add_f64, s_store_update_mul_f64, s_for_update_mul_f64, s_nest_add_f64,
	 s_nest_mul_f64},
	{DT_INT32, c_load_i32, c_add_i32, c_mul_i32, s_store_update_add_i32,
	 s_for_update_add_i32, s_store_update_mul_i32, s_for_update_mul_i32, s_nest_add_i32,
	 s_nest_mul_i32},
	{DT_INT64, c_load_i64, c_add_i64, c_mul_i64, s_store_update_add_i64,
	 s_for_update_add_i64, s_store_update_mul_i64, s_for_update_mul_i64, s_nest_add_i64,
	 s_nest_mul_i64},
};

/* Whether the store c is X[a] = X[a] + Y[b] * Z[c] or X[a] = X[a] + Y[b]
 * (either order of the sum) in one of those dtypes: its update closure,
 * or NULL. */
static CExec match_update(CStmt *c)
{
	const Stmt *s = c->s;
	const CExpr *v = c->x;
	if (!c->aff || !c->ref.fast || s->u.store.value->dtype != c->ref.dt)
		return NULL;
	for (size_t k = 0; k < sizeof update_kinds / sizeof *update_kinds; k++) {
		const struct UpdateKind *u = &update_kinds[k];
		if (u->t != c->ref.dt || v->fn != u->add)
			continue;
		bool first = v->a->fn == u->load && v->a->e->u.load.buf == s->u.store.buf &&
			     affine_equal(v->a->aff, c->aff, s->u.store.nidx);
		const CExpr *x = first ? v->a : v->b, *p = first ? v->b : v->a;
		if (x->fn != u->load || x->e->u.load.buf != s->u.store.buf ||
		    !affine_equal(x->aff, c->aff, s->u.store.nidx))
			return NULL;
		c->upd_first = first;
		if (p->fn == u->load) {
			c->ly = p;
			return u->store1;
		}
		if (p->fn == u->mul && p->a->fn == u->load && p->b->fn == u->load) {
			c->ly = p->a;
			c->lz = p->b;
			return u->store2;
		}
		return NULL;
	}
	return NULL;
}

/* The loop closure of a loop whose body is an update closure. */
static CExec update_loop(CExec body)
{
	for (size_t k = 0; k < sizeof update_kinds / sizeof *update_kinds; k++) {
		if (body == update_kinds[k].store1)
			return update_kinds[k].for1;
		if (body == update_kinds[k].store2)
			return update_kinds[k].for2;
	}
	return NULL;
}

/* The nest closure of the update closure u, or NULL. */
static CExec nest_closure(CExec u)
{
	for (size_t k = 0; k < sizeof update_kinds / sizeof *update_kinds; k++) {
		if (u == update_kinds[k].store1)
			return update_kinds[k].nest1;
		if (u == update_kinds[k].store2)
			return update_kinds[k].nest2;
	}
	return NULL;
}

/* Whether the forms read only the nest's loops and variables bound
 * outside it (the frame holds their values while the nest runs fast). */
static bool nest_forms(const Nest *N, const Affine *aff, int n)
{
	for (int k = 0; k < n; k++)
		for (int i = 0; i < aff[k].n; i++)
			if (aff[k].s[i] >= N->slot[0] && nest_level(N, aff[k].s[i]) < 0)
				return false;
	return true;
}

/* A condition that cannot fail and reads what nest_forms allows. */
static bool nest_pure(const Nest *N, const CExpr *c)
{
	if (c->fn == c_const)
		return true;
	if (c->fn == c_aff)
		return nest_forms(N, c->aff, 1);
	if (c->fn == c_cmp_aff)
		return nest_forms(N, c->aff, 2);
	if (c->fn == c_logical || c->fn == c_and_cmp_aff || c->fn == c_or_cmp_aff)
		return nest_pure(N, c->a) && nest_pure(N, c->b);
	return false;
}

/* b as the innermost body of a nest (Nest says which shapes). */
static bool nest_body(const CStmt *b, Nest *n)
{
	if (nest_closure(b->fn)) {
		n->u = b;
		n->plain = true;
		return true;
	}
	int steps = 0;
	const CStmt *x = b;
	if (x->fn == s_body) {
		x = x->body;
		steps++;
	}
	for (; x->fn == s_let; x = x->body, steps++)
		if (!x->let_sub)
			return false;
	if (x->fn == s_if && !x->els && (x->body->fn == s_seq || nest_closure(x->body->fn))) {
		n->guard = x->x;
		x = x->body;
		steps++;
	}
	if (x->fn == s_seq) {
		if (x->s->u.seq.n != 2)
			return false;
		const CStmt *i0 = x->items[0], *st = i0->body;
		if (i0->fn != s_if || i0->els || st->fn != s_store || st->x->fn != c_const ||
		    !st->aff || !st->ref.fast ||
		    !in_convert(st->x->k, st->s->u.store.value->dtype, st->ref.dt, &n->initv))
			return false;
		n->cond = i0->x;
		n->init = st;
		n->mid_steps = 2;
		x = x->items[1];
	}
	if (!nest_closure(x->fn))
		return false;
	n->u = x;
	n->pre_steps = steps;
	return true;
}

/* Whether the loop c can be a level of a nest: a frame slot, integer
 * constant bounds (lo, ext), at least one iteration, values that need
 * no wrapping. */
static bool nest_loop(const CStmt *c, int64_t *lo, int64_t *ext)
{
	const Stmt *s = c->s;
	const Var *v = s->u.loop.var;
	DType tm = s->u.loop.min->dtype, te = s->u.loop.extent->dtype;
	if (c->slot < 0 || c->x->fn != c_const || c->y->fn != c_const ||
	    (tm != DT_INT32 && tm != DT_INT64) || (te != DT_INT32 && te != DT_INT64) ||
	    (v->dtype != DT_INT32 && v->dtype != DT_INT64))
		return false;
	int64_t top;
	*lo = c->x->k.i;
	*ext = c->y->k.i;
	return *ext >= 1 && !__builtin_add_overflow(*lo, *ext - 1, &top) &&
	       (v->dtype != DT_INT32 || (*lo >= INT32_MIN && top <= INT32_MAX));
}

/* n with the loop c (bounds lo, ext) as its new outermost level. */
static void nest_prepend(Nest *n, const CStmt *c, int64_t lo, int64_t ext)
{
	for (int l = n->d; l > 0; l--) {
		n->loop[l] = n->loop[l - 1];
		n->slot[l] = n->slot[l - 1];
		n->lo[l] = n->lo[l - 1];
		n->ext[l] = n->ext[l - 1];
	}
	if (n->pro >= 0)
		n->pro++;
	n->loop[0] = c;
	n->slot[0] = c->slot;
	n->lo[0] = lo;
	n->ext[0] = ext;
	n->d++;
}

/* The nest the loop c heads, or NULL. */
static const Nest *make_nest(Comp *cp, const CStmt *c)
{
	int64_t lo, ext;
	if (!nest_loop(c, &lo, &ext))
		return NULL;
	Nest n = {.pro = -1};
	const CStmt *b = c->body, *ps = NULL;
	if (b->fn == s_seq && b->s->u.seq.n == 2 && b->items[0]->fn == s_store &&
	    b->items[1]->nest && !b->items[1]->nest->map && b->items[1]->nest->pro < 0) {
		ps = b->items[0];
		b = b->items[1];
		if (ps->x->fn != c_const || !ps->aff || !ps->ref.fast ||
		    !in_convert(ps->x->k, ps->s->u.store.value->dtype, ps->ref.dt, &n.pval))
			return NULL;
	}
	if (b->nest) {
		if (b->nest->d == NEST_MAX || b->nest->map)
			return NULL;
		Value pval = n.pval;
		n = *b->nest;
		for (int l = n.d; l > 0; l--) {
			n.loop[l] = n.loop[l - 1];
			n.slot[l] = n.slot[l - 1];
			n.lo[l] = n.lo[l - 1];
			n.ext[l] = n.ext[l - 1];
		}
		if (n.pro >= 0)
			n.pro++;
		if (ps) {
			n.pro = 0;
			n.pstore = ps;
			n.pval = pval;
		}
	} else if (!nest_body(b, &n)) {
		return NULL;
	}
	n.loop[0] = c;
	n.slot[0] = c->slot;
	n.lo[0] = lo;
	n.ext[0] = ext;
	n.d++;
	const CStmt *u = n.u;
	if (!nest_forms(&n, u->aff, u->s->u.store.nidx) ||
	    !nest_forms(&n, u->ly->aff, u->ly->e->u.load.nidx) ||
	    (u->lz && !nest_forms(&n, u->lz->aff, u->lz->e->u.load.nidx)) ||
	    (n.init && !nest_forms(&n, n.init->aff, n.init->s->u.store.nidx)) ||
	    (n.cond && !nest_pure(&n, n.cond)) || (n.guard && !nest_pure(&n, n.guard)) ||
	    (n.pstore && !nest_forms(&n, n.pstore->aff, n.pstore->s->u.store.nidx)))
		return NULL;
	Nest *r = arena_alloc(cp->a, sizeof *r);
	*r = n;
	return r;
}

/* The nest of maps the loop c heads (c's body a map loop or such a
 * nest), or NULL. */
static const Nest *make_map_nest(Comp *cp, const CStmt *c)
{
	int64_t lo, ext, lo1, ext1;
	const CStmt *b = c->body;
	Nest n = {.pro = -1};
	if (!nest_loop(c, &lo, &ext))
		return NULL;
	if (b->fn == s_nest_map && b->nest->d < NEST_MAX) {
		n = *b->nest;
	} else if (b->fn == s_for_map && nest_loop(b, &lo1, &ext1)) {
		n.u = b->body;
		n.map = b->map;
		n.plain = true;
		nest_prepend(&n, b, lo1, ext1);
	} else {
		return NULL;
	}
	nest_prepend(&n, c, lo, ext);
	const CExpr *ld = n.map->load;
	if (!nest_forms(&n, n.u->aff, n.u->s->u.store.nidx) ||
	    !nest_forms(&n, ld->aff, ld->e->u.load.nidx))
		return NULL;
	Nest *r = arena_alloc(cp->a, sizeof *r);
	*r = n;
	return r;
}

static const CStmt *cs(Comp *cp, const Stmt *s)
{
	CStmt *c = arena_alloc(cp->a, sizeof *c);
	c->s = s;
	c->fn = s_tree;
	c->slot = -1;
	switch (s->kind) {
	case ST_SEQ:
		c->items = arena_alloc(cp->a, sizeof *c->items * (size_t)(s->u.seq.n + 1));
		for (int i = 0; i < s->u.seq.n; i++)
			c->items[i] = cs(cp, s->u.seq.items[i]);
		c->fn = s_seq;
		break;
	case ST_FOR:
		c->x = cx(cp, s->u.loop.min);
		c->y = cx(cp, s->u.loop.extent);
		c->slot = push_var(cp, s->u.loop.var, false);
		c->body = cs(cp, s->u.loop.body);
		pop_var(cp, c->slot);
		c->fn = update_loop(c->body->fn) ? update_loop(c->body->fn) : s_for;
		/* a nest of one loop over the update keeps s_for_update (its
		 * bounds need not be constants); deeper ones and blocks run
		 * as nests */
		c->nest = make_nest(cp, c);
		if (c->nest && (c->nest->d > 1 || !c->nest->plain))
			c->fn = nest_closure(c->nest->u->fn);
		else if (c->fn == s_for && (c->map = make_map(cp, c, c->body)))
			c->fn = s_for_map;
		else if (c->fn == s_for && (c->nest = make_map_nest(cp, c)))
			c->fn = s_nest_map;
		break;
	case ST_IF:
		c->x = cx(cp, s->u.cond.cond);
		c->body = cs(cp, s->u.cond.then_s);
		c->els = s->u.cond.else_s ? cs(cp, s->u.cond.else_s) : NULL;
		c->fn = s_if;
		break;
	case ST_STORE:
		c->idx = cx_list(cp, s->u.store.idx, s->u.store.nidx);
		c->aff = index_affine(cp, s->u.store.idx, s->u.store.nidx);
		c->ref = buf_ref(cp, s->u.store.buf, s->u.store.nidx);
		c->x = cx(cp, s->u.store.value);
		c->fn = match_update(c) ? match_update(c) : s_store;
		break;
	case ST_EVAL:
		c->x = cx(cp, s->u.expr);
		c->fn = s_eval;
		break;
	case ST_ALLOC:
		if (s->u.alloc.body) { /* else the tree's behaviour */
			const Buffer *b = s->u.alloc.buf;
			c->slot = cp->nbufslots++;
			BufRef r = {.slot = c->slot, .fast = !b->layout, .dt = b->dtype};
			bool pushed = push_buf(cp, b, r);
			c->body = cs(cp, s->u.alloc.body);
			if (pushed)
				cp->nbufs--;
			c->fn = s_alloc;
		}
		break;
	case ST_BLOCK:
		c->body = cs(cp, s->u.block.body);
		c->fn = s_body;
		break;
	case ST_LET: {
		c->x = cx(cp, s->u.let.value);
		const Affine *sub = let_affine(cp, s->u.let.var, s->u.let.value);
		c->slot = is_int_var(s->u.let.var) ? push_var(cp, s->u.let.var, true) : -1;
		if (c->slot >= 0)
			cp->vars[cp->nvars - 1].sub = sub;
		c->let_sub = c->slot >= 0 && sub;
		c->body = cs(cp, s->u.let.body);
		pop_var(cp, c->slot);
		c->fn = s_let;
		break;
	}
	case ST_PASS:
		c->fn = s_pass;
		break;
	case ST_ASSUME:
		c->x = cx(cp, s->u.expr);
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
	Comp cp = {.a = &code};
	/* the parameters: scalars in frame slots, buffers by their state */
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR && is_int_var(p->var))
			push_var(&cp, p->var, false);
	}
	for (int i = 0; i < in->nbinds; i++) {
		BufState *bs = in->binds[i].bs;
		BufRef r = {.bs = bs, .slot = -1, .fast = !bs->buf->layout, .dt = bs->buf->dtype};
		push_buf(&cp, in->binds[i].buf, r);
	}
	int nscalars = cp.nvars;
	const CStmt *body = cs(&cp, f->body);
	in->frame = calloc((size_t)cp.nframe + 1, sizeof *in->frame);
	in->frame_undef = calloc((size_t)cp.nframe + 1, sizeof *in->frame_undef);
	in->bufslot = calloc((size_t)cp.nbufslots + 1, sizeof *in->bufslot);
	bool ok;
	if (!in->frame || !in->frame_undef || !in->bufslot) {
		ok = in_fail(in, RUN_LIMIT, f->span, "out of memory");
	} else {
		for (int i = 0; i < nscalars; i++) {
			const Var *v = cp.vars[i].v;
			const Slot *sl = in_slot(in, v);
			if (sl) /* bound by bind_params */
				in->frame[cp.vars[i].slot].i = wrap_int(sl->v.i, v->dtype);
		}
		ok = run(in, body);
	}
	free(in->frame);
	free(in->frame_undef);
	free(in->bufslot);
	in->frame = NULL;
	in->frame_undef = NULL;
	in->bufslot = NULL;
	free(cp.vars);
	free(cp.bufs);
	arena_free(&code);
	return ok;
}
