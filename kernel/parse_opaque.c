/* kernel/parse_opaque.c — opaque calls as TVM writes them (semantics.md 9):
 * `T.call_extern("f", B.data, i, dtype="int32")` (or the dtype first:
 * `T.call_extern("float32", "f", ...)`), `T.call_packed("f", A, B)`,
 * `T.tvm_access_ptr(T.type_annotation("float32"), B.data, off, n, 1)`,
 * `T.address_of(B[i])`, `T.tvm_fill_fragment(...)` and TVM's other tensor
 * core and profiling intrinsics. They become one EX_OPAQUE node: what it
 * reads, writes and returns is unknown. */
#include "kernel/parse_int.h"

#include <string.h>

/* The ones that take their dtype as the first positional argument when
 * no dtype= is given (TVM's `call_extern(dtype, func_name, *args)`). */
static const char *const dtype_first[] = {
	"call_extern", "call_pure_extern", "call_llvm_intrin", "call_llvm_pure_intrin", NULL,
};

/* dtype when none is given: TVM's own for the intrinsic. */
static const struct {
	const char *name;
	DType dtype;
} opaque_fns[] = {
	{"call_extern", DT_VOID},	   {"call_pure_extern", DT_VOID},
	{"call_llvm_intrin", DT_VOID},	   {"call_llvm_pure_intrin", DT_VOID},
	{"call_packed", DT_INT32},	   {"call_cpacked", DT_INT32},
	{"tvm_access_ptr", DT_HANDLE},	   {"address_of", DT_HANDLE},
	{"type_annotation", DT_VOID},	   {"tvm_fill_fragment", DT_HANDLE},
	{"tvm_load_matrix_sync", DT_HANDLE}, {"tvm_store_matrix_sync", DT_HANDLE},
	{"tvm_mma_sync", DT_HANDLE},	   {"tvm_bmma_sync", DT_HANDLE},
	{"start_profile_intrinsic", DT_VOID}, {"end_profile_intrinsic", DT_VOID},
};

static int opaque_index(const char *name)
{
	for (int i = 0; i < (int)(sizeof opaque_fns / sizeof opaque_fns[0]); i++)
		if (strcmp(opaque_fns[i].name, name) == 0)
			return i;
	return -1;
}

bool ps_is_opaque_name(const char *name)
{
	return opaque_index(name) >= 0;
}

/* "" is TVM's void; "handle" a pointer; else a scalar dtype. */
static bool opaque_dtype(Parser *p, const Val *v, DType *out)
{
	if (v->kind != VAL_STR) {
		ps_error_at(p, v->span, "expected a string for the dtype");
		return false;
	}
	if (v->str[0] == 0 || strcmp(v->str, "void") == 0) {
		*out = DT_VOID;
		return true;
	}
	if (dtype_from_name(v->str, out))
		return true;
	ps_error_at(p, v->span, "unknown dtype '%s'", v->str);
	return false;
}

static bool is_dtype_first(const char *name)
{
	for (int i = 0; dtype_first[i]; i++)
		if (strcmp(dtype_first[i], name) == 0)
			return true;
	return false;
}

Expr *ps_build_opaque(Parser *p, const char *name, Args *args, Span sp)
{
	DType t = opaque_fns[opaque_index(name)].dtype;
	const Val *dv = NULL;
	int skip = -1; /* a positional argument taken as the dtype */
	for (int i = 0; i < args->n; i++) {
		const Val *v = &args->v[i];
		if (!v->kw)
			continue;
		if (strcmp(v->kw, "dtype") != 0) {
			ps_error_at(p, v->tok->span, "unexpected argument '%s' to T.%s", v->kw, name);
			return NULL;
		}
		dv = v;
	}
	if (!dv && args->n > 0 && !args->v[0].kw && args->v[0].kind == VAL_STR &&
	    (is_dtype_first(name) || strcmp(name, "type_annotation") == 0)) {
		dv = &args->v[0];
		skip = 0;
	}
	if (dv && !opaque_dtype(p, dv, &t))
		return NULL;
	if (strcmp(name, "type_annotation") == 0 && (!dv || args->n != 1)) {
		ps_error_at(p, sp, "T.type_annotation takes one dtype, e.g. T.type_annotation(\"float32\")");
		return NULL;
	}
	if (is_dtype_first(name)) {
		/* the function name follows: a string */
		int k = skip + 1;
		if (k >= args->n || args->v[k].kw || args->v[k].kind != VAL_STR) {
			ps_error_at(p, k < args->n ? args->v[k].span : sp,
				    "T.%s needs the function's name as a string", name);
			return NULL;
		}
	}
	int n = args->n;
	OpqItem *items = arena_alloc(p->a, sizeof(OpqItem) * (size_t)(n + 1));
	Expr **xs = arena_alloc(p->a, sizeof(Expr *) * (size_t)(n + 1));
	int nitems = 0, nargs = 0;
	for (int i = 0; i < n; i++) {
		const Val *v = &args->v[i];
		if (v->kw || i == skip)
			continue;
		OpqItem it = {0};
		switch (v->kind) {
		case VAL_STR:
			it.kind = OPQ_STRING;
			it.str = v->str;
			break;
		case VAL_EXPR:
			if (v->e) {
				it.kind = OPQ_EXPR;
				it.expr = nargs;
				xs[nargs++] = ps_finish_expr(v->e);
			} else if (v->buf) {
				it.kind = v->buf_data ? OPQ_BUFFER_DATA : OPQ_BUFFER;
				it.buf = v->buf;
			} else {
				ps_error_at(p, v->span, "expected an argument of T.%s", name);
				return NULL;
			}
			break;
		case VAL_LIST: case VAL_DICT:
			ps_error_at(p, v->span, "not supported: a list or dict argument to T.%s", name);
			return NULL;
		}
		items[nitems++] = it;
	}
	return ir_opaque(p->a, arena_strdup(p->a, name), t, nitems, items, nargs, xs, sp);
}
