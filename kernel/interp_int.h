/* kernel/interp_int.h — private to the reference interpreter (interp.c,
 * interp_eval.c): the interpreter's state, tainted values, the
 * environment's slots and the helpers the two files share (in_ prefix).
 * What the rest of the project sees is kernel/interp.h. */
#ifndef VS_KERNEL_INTERP_INT_H
#define VS_KERNEL_INTERP_INT_H

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
} Interp;

/* ---------- values ---------- */

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
	return dtype_is_float(t) ? x.f != 0 : x.i != 0;
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

/* ---------- interp_eval.c: values and expressions ---------- */

bool in_convert(Value x, DType from, DType to, Value *out);
Value in_undef_value(Interp *in, DType t);
bool in_eval(Interp *in, const Expr *e, TVal *out);
bool in_eval_int(Interp *in, const Expr *e, int64_t *out, const char *what);
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
bool in_bind_let(Interp *in, const Var *v, const Expr *value, TVal x,
		 Span sp, SavedVar *old);
bool in_enter_let(Interp *in, const Var *v, const Expr *value, Span sp,
		  SavedVar *old);

#endif
