/* kernel/interp_int.h — private to the reference interpreter (interp.c,
 * interp_eval.c): the interpreter's state, tainted values, the
 * environment's slots and the helpers the two files share (in_ prefix).
 * What the rest of the project sees is kernel/interp.h. */
#ifndef VS_KERNEL_INTERP_INT_H
#define VS_KERNEL_INTERP_INT_H

#include <math.h>

#include "kernel/half.h"
#include "kernel/interp.h"

#define MAX_DIMS 16

/* A value with its T.undef() taint: computed from an undefined value, so
 * arbitrary (semantics.md 3). A store of a tainted value marks the cell
 * CELL_UNDEF; `0 * undef` is an untainted 0. */
typedef struct TVal {
	Value v;
	bool undef;
} TVal;

typedef struct Binding {
	const Buffer *buf;
	BufState *bs;
} Binding;

/* A variable's binding. The environment is indexed by Var.id; ids are
 * unique only within one arena, so a second Var with a taken id (IR built
 * in two arenas) goes to a short overflow stack instead. */
typedef struct Slot {
	const Var *var; /* NULL: unbound */
	Value v;
	bool undef; /* bound to a value computed from T.undef() */
} Slot;

typedef struct SavedVar {
	Slot old;
	bool overflow; /* the binding was pushed on the overflow stack */
} SavedVar;

typedef enum {
	FACTS_CHECK,  /* a false T.assume stops the run */
	FACTS_REPAIR, /* a false T.assume is made true by writing cells */
} FactMode;

typedef struct Interp {
	Arena *arena; /* messages */
	Slot *env; /* by Var.id */
	int nenv;
	Slot *overflow; /* bindings whose id slot another Var holds */
	int noverflow, capoverflow;
	Binding *binds; /* buffers in scope, innermost last */
	int nbinds, capbinds;
	const Var **loops; /* enclosing loop variables, for messages */
	int nloops, caploops;
	uint64_t steps, limit;
	InterpCounts counts;
	bool failed;
	RunStatus status;
	const char *message;
	Span span;
	uint64_t rng;   /* values of T.undef() */
	int in_assume;  /* > 0 while evaluating a T.assume fact */
	bool probe;     /* scalar-only probing: loads and unbound vars fail */
	bool not_scalar; /* set when a probe met a load or unbound var */
	FactMode fact_mode;
	/* the compiled form's variables and local buffers, by the slot its
	 * compilation gave their binding statement (kernel/interp_compile.c) */
	Value *frame;
	bool *frame_undef;
	BufState **bufslot;
} Interp;

/* ---------- values (inline: the tree walk and the compiled form share
 * them, kernel/interp_compile.c) ---------- */

static inline bool in_is_float(DType t)
{
	return t == DT_FLOAT16 || t == DT_FLOAT32 || t == DT_FLOAT64;
}

/* the interpreter's name for dtype_wrap_int (ir.h, inline) */
static inline int64_t wrap_int(int64_t v, DType t) { return dtype_wrap_int(v, t); }

/* x rounded to the float dtype t, once (kernel/half.h says why one
 * rounding of a double result is exactly the IEEE operation in t). */
static inline double round_float(double x, DType t)
{
	return t == DT_FLOAT32   ? (double)(float)x
	       : t == DT_FLOAT16 ? vs_f16_round(x)
				 : x;
}

static inline bool truth(Value x, DType t)
{
	return in_is_float(t) ? x.f != 0 : x.i != 0;
}

/* Whether the truncated float x fits integer dtype t. */
static inline bool float_fits(double x, DType t)
{
	if (isnan(x))
		return false;
	switch (t) {
	case DT_INT8: return x >= -128.0 && x <= 127.0;
	case DT_INT16: return x >= -32768.0 && x <= 32767.0;
	case DT_INT32: return x >= -2147483648.0 && x <= 2147483647.0;
	case DT_UINT8: return x >= 0.0 && x <= 255.0;
	case DT_INT64:
	case DT_HANDLE:
		return x >= -9223372036854775808.0 && x < 9223372036854775808.0;
	case DT_BOOL: case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_VOID: case DT_COUNT:
		return true;
	}
	return true;
}

/* Convert x of dtype `from` to `to`; false when a float does not fit the
 * integer type (UB for the caller to report). */
static inline __attribute__((always_inline)) bool in_convert(Value x, DType from, DType to,
								 Value *out)
{
	if (in_is_float(to)) {
		if (in_is_float(from))
			out->f = round_float(x.f, to);
		else if (to == DT_FLOAT32)
			out->f = (double)(float)x.i; /* one rounding */
		else if (to == DT_FLOAT16) /* |i| > 2^53 rounds in double, but to inf in half anyway */
			out->f = vs_f16_round((double)x.i);
		else
			out->f = (double)x.i;
		return true;
	}
	if (to == DT_VOID) {
		*out = x;
		return true;
	}
	if (!in_is_float(from)) {
		out->i = wrap_int(x.i, to);
		return true;
	}
	if (to == DT_BOOL) {
		out->i = x.f != 0;
		return true;
	}
	double t = trunc(x.f); /* toward zero */
	if (!float_fits(t, to))
		return false;
	out->i = wrap_int((int64_t)t, to);
	return true;
}

/* Floor division and modulo (Python semantics); b != 0. The one
 * overflowing case INT64_MIN // -1 wraps. */
static inline int64_t floor_div(int64_t a, int64_t b)
{
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static inline int64_t floor_mod(int64_t a, int64_t b)
{
	if (b == -1)
		return 0;
	int64_t r = a % b;
	if (r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static inline int64_t trunc_div(int64_t a, int64_t b)
{
	return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

/* a op b in double, rounded to the float dtype t; false when op is not
 * arithmetic. */
static inline bool float_arith(BinOp op, double a, double b, DType t, double *out)
{
	double r = 0;
	switch (op) {
	case OP_ADD: r = a + b; break;
	case OP_SUB: r = a - b; break;
	case OP_MUL: r = a * b; break;
	case OP_DIV: r = a / b; break;
	case OP_FLOORDIV: r = floor(a / b); break;
	case OP_FLOORMOD: r = a - floor(a / b) * b; break;
	case OP_MIN: r = a < b ? a : b; break;
	case OP_MAX: r = a > b ? a : b; break;
	case OP_SHL: case OP_SHR:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	*out = round_float(r, t);
	return true;
}

/* ---------- interp.c: failure, environment, messages ---------- */

/* Records the first failure (status, span, message) and returns false. */
bool in_fail(Interp *in, RunStatus st, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
Slot *in_var_slot(Interp *in, const Var *v);
bool in_bind_var(Interp *in, const Var *v, Value x, SavedVar *old);
void in_unbind_var(Interp *in, const Var *v, const SavedVar *old);
BufState *in_lookup_buffer(Interp *in, const Buffer *b);
const char *in_cell_name(Interp *in, const Buffer *b, int n,
			 const int64_t *ix);
const char *in_shape_text(Interp *in, const BufState *bs);

/* v's binding as in_var_slot finds it, the common case inline. */
static inline Slot *in_slot(Interp *in, const Var *v)
{
	if (v->id >= 0 && v->id < in->nenv && in->env[v->id].var == v)
		return &in->env[v->id];
	return in_var_slot(in, v);
}

/* One step of the budget; false (RUN_LIMIT) past the limit. */
bool in_step_limit(Interp *in, Span sp);
static inline bool in_step(Interp *in, Span sp)
{
	return ++in->steps <= in->limit || in_step_limit(in, sp);
}

/* The statement machinery both forms share: a tree-walked statement,
 * loop and local-buffer scopes, the effect of a store. */
bool in_exec(Interp *in, const Stmt *s);
bool in_push_loop(Interp *in, const Var *v);
bool in_open_local(Interp *in, const Stmt *s, BufState *bs);
void in_close_local(Interp *in, BufState *bs);
bool in_store_value(Interp *in, const Stmt *s, BufState *bs, int64_t off, TVal x);
/* The failure of the T.assume statement s whose fact is false. */
bool in_assume_failed(Interp *in, const Stmt *s);

/* ---------- interp_eval.c: values and expressions ---------- */

Value in_undef_value(Interp *in, DType t);
bool in_eval(Interp *in, const Expr *e, TVal *out);
bool in_eval_int(Interp *in, const Expr *e, int64_t *out, const char *what);
/* x, the value of e, as an integer `what` (an index, a loop bound). */
bool in_int_value(Interp *in, const Expr *e, TVal x, int64_t *out, const char *what);
bool in_eval_in_assume(Interp *in, const Expr *e, TVal *x);
bool in_eval_fact(Interp *in, const Expr *e, bool *holds);
int in_bind_index_vars(Interp *in, Var *const *vars, int n,
		       const int64_t *x, SavedVar *saved);
void in_unbind_index_vars(Interp *in, Var *const *vars, int bound,
			  const SavedVar *saved);
bool in_is_padding(Interp *in, const Layout *lay, const Expr *pred, int n,
		   const int64_t *ix, bool *pad);
BufState *in_access_cell(Interp *in, const Buffer *b, int nidx,
			 Expr *const *idx, const char *what, Span sp,
			 int64_t *ix, int64_t *off);
/* The parts of in_access_cell: the buffer in scope with the right rank,
 * then the offset of evaluated indices ix (bounds, padding). */
BufState *in_access_buffer(Interp *in, const Buffer *b, int nidx,
			   const char *what, Span sp);
bool in_cell_offset(Interp *in, const Buffer *b, BufState *bs, int nidx,
		    const int64_t *ix, const char *what, Span sp, int64_t *off);
/* The rest of a load of e at a checked cell: state, conversion. */
bool in_load_cell(Interp *in, const Expr *e, BufState *bs, int64_t off,
		  const int64_t *ix, TVal *out);
/* The rest of an expression once its operands are evaluated: a binary
 * operator that is not `and`/`or` (x, y), NOT / NEG / CAST (x), a math
 * call (its converted operands v, out->undef already joined). */
bool in_bin_values(Interp *in, const Expr *e, TVal x, TVal y, TVal *out);
/* The load of `X[t] == T.undef()` (either side), read as "X[t] is
 * readable" inside T.assume; NULL for any other expression. */
const Expr *in_undef_compare_load(const Expr *e);
bool in_unary_value(Interp *in, const Expr *e, TVal x, TVal *out);
bool in_call_values(Interp *in, const Expr *e, const Value *v, TVal *out);
/* `and` / `or`: whether x (operand a) decides it (then *out is set),
 * and the result from both operands. */
bool in_logical_short(const Expr *e, TVal x, TVal *out);
void in_logical_join(const Expr *e, TVal x, TVal y, TVal *out);
bool in_bind_let(Interp *in, const Var *v, const Expr *value, TVal x,
		 Span sp, SavedVar *old);
bool in_enter_let(Interp *in, const Var *v, const Expr *value, Span sp,
		  SavedVar *old);

/* ---------- interp_compile.c: the compiled form ---------- */

/* Run f's body (parameters bound) through its compiled form: the same
 * statements in the same order, with the same steps, counts, values and
 * messages as in_exec. */
bool in_run_compiled(Interp *in, const Func *f);

#endif
