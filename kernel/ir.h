/* kernel/ir.h — the vsched IR: dtypes, expressions, statements, buffers,
 * functions and modules, plus arenas, source spans and diagnostics.
 * The IR is immutable once built: rewrites make new nodes and share the
 * unchanged ones. Every node lives in an Arena and is never freed alone.
 * This is the internal header of kernel/; include/vsched.h is the public API. */
#ifndef VS_KERNEL_IR_H
#define VS_KERNEL_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* ---------- arena ---------- */

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
	ArenaChunk *head;
	size_t used_total;
	int next_var_id; /* ids for Var and Buffer: unique within the arena */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Out of memory: a message on stderr naming the size, then abort (no
 * caller can go on; issue 12 found a silent abort at 3 GB). */
_Noreturn void vs_out_of_memory(size_t size);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);
/* A copy of items (n elements of `size` bytes) in room for twice *cap
 * elements (at least 8); *cap is updated. The old block stays in the arena. */
void *arena_grow(Arena *a, const void *items, int n, int *cap, size_t size);
/* Room for one more element in an arena-grown array: `items` (T *), `n`
 * and `cap` (ints); VEC_PUSH also appends x. */
#define VEC_RESERVE(arena, items, n, cap)                                        \
	do {                                                                     \
		if ((n) == (cap))                                                \
			(items) = arena_grow((arena), (items), (n), &(cap), sizeof *(items)); \
	} while (0)
#define VEC_PUSH(arena, items, n, cap, x)                                        \
	do {                                                                     \
		VEC_RESERVE(arena, items, n, cap);                               \
		(items)[(n)++] = (x);                                            \
	} while (0)

/* ---------- sources, spans, diagnostics ---------- */

typedef struct Source {
	const char *name; /* file name as given by the user */
	const char *text; /* NUL-terminated whole text */
} Source;

/* A span is a position in a Source; line and col are 1-based. A node that
 * did not come from text has src == NULL. */
typedef struct Span {
	const Source *src;
	int line, col, len;
} Span;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
	DiagLevel level;
	Span span;
	char *message;
	struct Diag *next;
} Diag;

/* A list of diagnostics; library code appends, the CLI renders. */
typedef struct DiagList {
	Arena *arena;
	Diag *first, *last;
	int nerrors;
} DiagList;

void diag_init(DiagList *d, Arena *a);
void diag_add(DiagList *d, DiagLevel level, Span span, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_vadd(DiagList *d, DiagLevel level, Span span, const char *fmt,
	       va_list ap);
/* clang-style: "file:line:col: error: msg\n  <line>\n  ^\n" appended to
 * a malloc'ed string (caller frees). */
char *diag_render(const DiagList *d);
char *diag_render_one(const Diag *g);

/* ---------- growable strings (kernel/arena.c) ---------- */

typedef struct StrBuf {
	char *s; /* malloc'ed, NUL-terminated once anything was put */
	size_t n, cap;
} StrBuf;

void sb_put(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_printf(StrBuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *sb_take(StrBuf *b); /* the string (never NULL); b is reset */

/* ---------- dtypes ---------- */

#define VS_DTYPES(X)                                                           \
	X(DT_BOOL, "bool", 1, 0, 0)                                           \
	X(DT_INT8, "int8", 8, 1, 0)                                            \
	X(DT_INT16, "int16", 16, 1, 0)                                         \
	X(DT_INT32, "int32", 32, 1, 0)                                         \
	X(DT_INT64, "int64", 64, 1, 0)                                         \
	X(DT_UINT8, "uint8", 8, 0, 0)                                          \
	X(DT_FLOAT16, "float16", 16, 1, 1)                                     \
	X(DT_FLOAT32, "float32", 32, 1, 1)                                     \
	X(DT_FLOAT64, "float64", 64, 1, 1)                                     \
	X(DT_HANDLE, "handle", 64, 0, 0)                                       \
	X(DT_VOID, "void", 0, 0, 0)

typedef enum {
#define X(e, n, b, s, f) e,
	VS_DTYPES(X)
#undef X
		DT_COUNT
} DType;

const char *dtype_name(DType t);
/* v wrapped to an integer dtype (two's complement), as the interpreter
 * computes; bool gives 0/1; other dtypes leave v. */
/* v wrapped to the integer dtype t (two's complement; bool is v != 0);
 * other dtypes unchanged. Inline: the interpreter's hot path uses it. */
static inline int64_t dtype_wrap_int(int64_t v, DType t)
{
	switch (t) {
	case DT_BOOL: return v != 0;
	case DT_INT8: return (int8_t)v;
	case DT_INT16: return (int16_t)v;
	case DT_INT32: return (int32_t)v;
	case DT_UINT8: return (uint8_t)v;
	case DT_INT64: case DT_HANDLE: case DT_FLOAT16: case DT_FLOAT32: case DT_FLOAT64: case DT_VOID:
	case DT_COUNT:
		return v;
	}
	return v;
}
bool dtype_from_name(const char *name, DType *out);
int dtype_bits(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t); /* integer types incl. uint8, excl. bool */
bool dtype_is_signed(DType t);

/* ---------- variables and buffers ---------- */

/* A Var is one binding: a loop variable, a let variable, a scalar or handle
 * parameter, or a variable bound by an index-map lambda. Vars are compared
 * by identity; `id` is unique within the arena. */
typedef struct Var {
	const char *name;
	DType dtype;
	int id;
	Span span;
} Var;

typedef enum { SCOPE_GLOBAL, SCOPE_LOCAL, SCOPE_SHARED } BufferScope;

typedef enum {
	PAD_NONE_GIVEN, /* no pad_value: padding may not be accessed */
	PAD_VALUE,      /* pad_value is an expression (constant or of indices) */
	PAD_UNDEF,      /* pad_value = T.undef() */
} PadKind;

struct Expr;

/* Layout history of a buffer after transform_layout: the physical buffer
 * replaces the logical one in the IR; this records how to map back. A
 * buffer transformed twice has a layout whose `logical` buffer has a
 * layout too (seed 000, "Multiple Buffer Semantics"). */
typedef struct Layout {
	struct Buffer *logical;    /* the buffer before the transform */
	int nvars;                 /* = logical->ndim */
	Var **vars;                /* lambda parameters (logical indices) */
	struct Expr **map;         /* physical index k = map[k](vars), k < ndim */
	Var **inv_vars;            /* physical index variables, ndim of them */
	struct Expr **inverse;     /* logical index j = inverse[j](inv_vars) */
	struct Expr *pad_predicate; /* over inv_vars: padding of this step */
	PadKind pad_kind;
	struct Expr *pad_value;    /* PAD_VALUE: over inv_vars */
	/* Over inv_vars, for the whole chain: padding of this or an earlier
	 * step (uninitialised at entry unless a fact covers it), and padding
	 * whose step has no pad_value (access forbidden). NULL: fall back to
	 * pad_predicate (and pad_kind) of this step alone. */
	struct Expr *all_padding;
	struct Expr *forbidden;
} Layout;

typedef struct Buffer {
	const char *name;
	DType dtype;
	int ndim;
	struct Expr **shape; /* extents, int expressions of scalar params */
	BufferScope scope;
	int id;
	Span span;
	int naxis_separators;
	int *axis_separators; /* positions in [1, ndim), increasing */
	const Layout *layout; /* NULL unless transformed */
} Buffer;

/* ---------- expressions ---------- */

typedef enum {
	OP_ADD, OP_SUB, OP_MUL,
	OP_DIV,      /* true division: floats only */
	OP_FLOORDIV, /* `//`: floor division */
	OP_FLOORMOD, /* `%`: floor modulo, sign of the divisor */
	OP_MIN, OP_MAX,
	OP_SHL,      /* T.shift_left / `<<`: amount outside [0, bits) is UB */
	OP_SHR,      /* T.shift_right / `>>`: arithmetic if signed; same UB */
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_AND, OP_OR,
	OP_COUNT
} BinOp;

const char *binop_symbol(BinOp op); /* "+", "//", "min", "==", "and" ... */
bool binop_is_compare(BinOp op);
bool binop_is_logical(BinOp op);
/* The comparison with its operands swapped: `a op b` is `b mirror(op) a`
 * (< and >, <= and >=); any other operator is itself. */
BinOp binop_mirror(BinOp op);

#define VS_EXPR_KINDS(X)                                                       \
	X(EX_INT)    /* u.ival: integer or bool literal */                     \
	X(EX_FLOAT)  /* u.fval: float literal (may be inf/-inf) */             \
	X(EX_VAR)    /* u.var */                                               \
	X(EX_BIN)    /* u.bin: op, a, b */                                     \
	X(EX_NOT)    /* u.un.a: logical not */                                 \
	X(EX_NEG)    /* u.un.a: arithmetic negation */                         \
	X(EX_SELECT) /* u.sel: T.if_then_else(cond, a, b) */                   \
	X(EX_CAST)   /* u.un.a, converted to node dtype */                     \
	X(EX_LOAD)   /* u.load: buffer, nidx, idx */                           \
	X(EX_UNDEF)  /* no fields: a fresh unconstrained value */              \
	X(EX_LET)    /* u.let: var, value, body */                            \
	X(EX_CALL)   /* u.call: a math function of 1-3 operands */           \
	X(EX_OPAQUE) /* u.opq: an opaque call T.name(...), effects unknown */

/* Math calls `T.exp(x)` ... (semantics.md 9): name, operand count. The
 * operands and the result have the node's dtype (a float type; T.abs also
 * takes an integer type). */
#define VS_MATH_FNS(X)                                                         \
	X(MF_EXP, "exp", 1)                                                    \
	X(MF_EXP2, "exp2", 1)                                                  \
	X(MF_LOG, "log", 1)                                                    \
	X(MF_LOG2, "log2", 1)                                                  \
	X(MF_LOG10, "log10", 1)                                                \
	X(MF_SQRT, "sqrt", 1)                                                  \
	X(MF_RSQRT, "rsqrt", 1)   /* 1 / sqrt(x), two roundings */            \
	X(MF_ABS, "abs", 1)       /* integer abs wraps: abs(INT_MIN) = INT_MIN */ \
	X(MF_TANH, "tanh", 1)                                                  \
	X(MF_SIGMOID, "sigmoid", 1) /* 1 / (1 + exp(-x)), rounded per step */ \
	X(MF_ERF, "erf", 1)                                                    \
	X(MF_SIN, "sin", 1)                                                    \
	X(MF_COS, "cos", 1)                                                    \
	X(MF_FLOOR, "floor", 1)                                                \
	X(MF_CEIL, "ceil", 1)                                                  \
	X(MF_ROUND, "round", 1)   /* to nearest, ties to even (TVM, numpy) */ \
	X(MF_TRUNC, "trunc", 1)                                                \
	X(MF_POW, "pow", 2)                                                    \
	X(MF_FMA, "fma", 3)       /* x * y + z, one rounding */

typedef enum {
#define X(e, n, k) e,
	VS_MATH_FNS(X)
#undef X
		MF_COUNT
} MathFn;

#define MATH_MAX_ARGS 3
const char *mathfn_name(MathFn f); /* "exp" */
int mathfn_arity(MathFn f);
/* "exp" -> MF_EXP; also "truncate" -> MF_TRUNC. */
bool mathfn_from_name(const char *name, MathFn *out);

/* An opaque call `T.call_extern("f", B.data, i, dtype="int32")`,
 * `T.tvm_access_ptr(...)`, `T.address_of(B[i])` ... (semantics.md 9):
 * what it reads, writes or returns is unknown. Its printed arguments are
 * items: an expression (args[expr], the node's children), a whole buffer
 * `B.data` (or `B`), or a string. Every analysis treats a statement that
 * holds one as possibly reading and writing every buffer (the schedule
 * refuses every primitive but the order-preserving loop ones on a
 * function that holds one); the interpreter and the backend refuse it. */
typedef enum { OPQ_EXPR, OPQ_BUFFER, OPQ_BUFFER_DATA, OPQ_STRING } OpqItemKind;

typedef struct OpqItem {
	OpqItemKind kind;
	int expr;              /* OPQ_EXPR: index into args */
	struct Buffer *buf;    /* OPQ_BUFFER (`B`), OPQ_BUFFER_DATA (`B.data`) */
	const char *str;       /* OPQ_STRING */
} OpqItem;

typedef enum {
#define X(k) k,
	VS_EXPR_KINDS(X)
#undef X
		EX_COUNT
} ExprKind;

typedef struct Expr {
	ExprKind kind;
	DType dtype;
	Span span;
	union {
		int64_t ival;
		double fval;
		Var *var;
		struct { BinOp op; struct Expr *a, *b; } bin;
		struct { struct Expr *a; } un;
		struct { struct Expr *cond, *a, *b; } sel;
		struct { Buffer *buf; int nidx; struct Expr **idx; } load;
		struct { Var *var; struct Expr *value, *body; } let;
		struct { MathFn fn; int nargs; struct Expr *args[MATH_MAX_ARGS]; } call;
		struct {
			const char *name; /* "call_extern", "tvm_access_ptr" ... */
			int nitems;
			OpqItem *items;
			int nargs;
			struct Expr **args;
		} opq;
	} u;
} Expr;

/* ---------- statements ---------- */

/* TensorIR blocks as TVM writes them (semantics.md 9). A block with iter
 * vars keeps its declarations in a BlockInfo; its body is the desugared
 * form every analysis reads:
 *
 *   LET iter_0 = binding_0 in ... LET iter_{n-1} = binding_{n-1} in
 *     [IF where:] [SEQ{ IF init_cond: init ; ] inner [}]
 *
 * where init_cond says every reduction iter var equals its domain minimum
 * (block_init_cond). Rewrites that substitute into the bindings keep this
 * shape; block_view reads it back (the printer re-sugars it). Iter types
 * and declared regions are information, never trusted by a proof. */
typedef enum { ITER_SPATIAL, ITER_REDUCE, ITER_SCAN, ITER_OPAQUE } IterType;

const char *iter_type_name(IterType t); /* "spatial", "reduce", ... */

typedef struct BlockIter {
	struct Var *var;
	struct Expr *dom_min, *dom_extent;
	IterType type;
} BlockIter;

/* A declared region `B[lo0:hi0, e1]`: hi[k] NULL for a point index. */
typedef struct BufRegion {
	struct Buffer *buf;
	int ndim;
	struct Expr **lo, **hi;
	Span span;
} BufRegion;

typedef struct BlockInfo {
	int niters;
	BlockIter *iters;
	bool anonymous;  /* `T.block()`: printed without a name */
	bool has_where;  /* T.where(c): the IF right inside the iter lets */
	bool has_init;   /* T.init(): the IF on block_init_cond */
	bool has_reads, has_writes; /* T.reads / T.writes were given */
	int nreads, nwrites;
	BufRegion *reads, *writes;
	/* the inner body the declared regions were checked against: they are
	 * printed only while the inner body is this one */
	const struct Stmt *decl_inner;
} BlockInfo;

typedef enum {
	FOR_SERIAL, FOR_PARALLEL, FOR_VECTORIZED, FOR_UNROLLED
} ForKind;

const char *for_kind_name(ForKind k); /* "serial", "parallel", ... */

#define VS_STMT_KINDS(X)                                                       \
	X(ST_SEQ)    /* u.seq: n, items */                                     \
	X(ST_FOR)    /* u.loop: var, min, extent, kind, body */                \
	X(ST_IF)     /* u.cond: cond, then_s, else_s (NULL if none) */         \
	X(ST_STORE)  /* u.store: buf, nidx, idx, value */                      \
	X(ST_ASSUME) /* u.expr: the fact */                                    \
	X(ST_EVAL)   /* u.expr */                                              \
	X(ST_ALLOC)  /* u.alloc: buf, body (rest of the enclosing sequence) */ \
	X(ST_BLOCK)  /* u.block: name, body, info (NULL: plain block) */       \
	X(ST_LET)    /* u.let: var, value, body (rest of the sequence) */      \
	X(ST_PASS)   /* no fields */

typedef enum {
#define X(k) k,
	VS_STMT_KINDS(X)
#undef X
		ST_COUNT
} StmtKind;

typedef struct Stmt {
	StmtKind kind;
	Span span;
	union {
		struct { int n; struct Stmt **items; } seq;
		struct {
			Var *var;
			Expr *min, *extent;
			ForKind kind;
			struct Stmt *body;
		} loop;
		struct { Expr *cond; struct Stmt *then_s, *else_s; } cond;
		struct { Buffer *buf; int nidx; Expr **idx; Expr *value; } store;
		Expr *expr;
		struct { Buffer *buf; struct Stmt *body; } alloc;
		struct {
			const char *name;
			struct Stmt *body;
			const BlockInfo *info; /* NULL: a plain block */
		} block;
		struct { Var *var; Expr *value; struct Stmt *body; } let;
	} u;
} Stmt;

/* ---------- children (kernel/visit.c) ----------
 * The operands of an expression, and the sub-statements and the own
 * expressions of a statement, in evaluation order: a walk over every node
 * is written once with these, and a new node kind is added here. */
int expr_nchildren(const Expr *e);
Expr *expr_child(const Expr *e, int i);
/* sub-statements (an alloc's NULL body is none); inline: every walk asks */
static inline int stmt_nchildren(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ: return s->u.seq.n;
	case ST_FOR: return 1;
	case ST_IF: return s->u.cond.else_s ? 2 : 1;
	case ST_ALLOC: return s->u.alloc.body ? 1 : 0;
	case ST_BLOCK: case ST_LET: return 1;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: return 0;
	case ST_COUNT: break;
	}
	abort();
}

static inline Stmt *stmt_child(const Stmt *s, int i)
{
	switch (s->kind) {
	case ST_SEQ: return s->u.seq.items[i];
	case ST_FOR: return s->u.loop.body;
	case ST_IF: return i == 0 ? s->u.cond.then_s : s->u.cond.else_s;
	case ST_ALLOC: return s->u.alloc.body;
	case ST_BLOCK: return s->u.block.body;
	case ST_LET: return s->u.let.body;
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT: break;
	}
	abort();
}
/* loop min and extent; if condition; store indices then value; the
 * expression of an assume or eval; a let's value */
int stmt_nexprs(const Stmt *s);
Expr *stmt_expr(const Stmt *s, int i);
/* One depth limit for every stage (issue 12: a 4000-term chain crashed
 * simplify, 10,000 chained lets crashed build): the parser refuses a
 * function deeper than this, and a rewrite whose result is deeper is not
 * supported, so every recursive walk after them stays within it. */
#define IR_MAX_EXPR_DEPTH 1000 /* operators nested in one expression */
#define IR_MAX_STMT_DEPTH 1000 /* statements nested (lets included) */
#define IR_DEPTH_TEXT_(n) #n
#define IR_DEPTH_TEXT(n) IR_DEPTH_TEXT_(n)
/* True if pred holds at some node of e (pre-order, stops at the first). */
bool expr_any(const Expr *e, bool (*pred)(const Expr *e, void *ud), void *ud);
/* The first statement of s (s included, pre-order) where pred holds, or
 * NULL. */
const Stmt *stmt_find(const Stmt *s, bool (*pred)(const Stmt *s, void *ud), void *ud);
/* The first buffer allocated in s named `name`, and the first block named
 * `name` (program order), or NULL. */
Buffer *stmt_find_alloc(const Stmt *s, const char *name);
Stmt *stmt_find_block(const Stmt *s, const char *name);
/* e with each operand x replaced by fn(ud, x): e itself when none
 * changed, else a copy of the node (operator, dtype, span, buffer, let
 * variable kept) over the new operands. */
Expr *expr_map_children(Arena *a, Expr *e, Expr *(*fn)(void *ud, Expr *x), void *ud);
/* fn on every node of e, operands before the node (post-order). */
void expr_each_post(const Expr *e, void (*fn)(const Expr *e, void *ud), void *ud);
/* The same over every expression of s and the statements in it, the
 * shapes of the buffers it allocates included. */
bool stmt_any_expr(const Stmt *s, bool (*pred)(const Expr *e, void *ud), void *ud);

/* ---------- functions and modules ---------- */

typedef enum {
	PARAM_BUFFER, /* `A: T.Buffer[...]`: u.buf */
	PARAM_SCALAR, /* `n: T.int32`: var */
	PARAM_HANDLE, /* `a: T.handle`, with buf bound by T.match_buffer */
} ParamKind;

typedef struct Param {
	ParamKind kind;
	Var *var;    /* scalar or handle variable; NULL for PARAM_BUFFER */
	Buffer *buf; /* PARAM_BUFFER, PARAM_HANDLE */
} Param;

typedef struct Func {
	const char *name;
	int nparams;
	Param *params;
	Stmt *body;
	Span span;
} Func;

/* NULL, or what is too deep in f ("an expression nested more than 1000
 * levels deep") with *where its span; never recurses past the limits. */
const char *ir_func_too_deep(const Func *f, Span *where);

typedef struct Module {
	const char *name; /* class name; NULL for a single prim_func file */
	int nfuncs;
	Func **funcs;
	Span span;
} Module;

/* ---------- constructors (kernel/ir.c) ----------
 * Binary constructors compute the result dtype: comparisons and logic give
 * bool; arithmetic keeps the operand dtype (operands must agree, except an
 * integer literal adapts to the other side). They do no simplification. */

Var *ir_var(Arena *a, const char *name, DType t, Span sp);
Buffer *ir_buffer(Arena *a, const char *name, DType t, int ndim, Expr **shape,
		  Span sp);
Buffer *ir_buffer_copy(Arena *a, const Buffer *b); /* new id, same fields */

Expr *ir_int(Arena *a, int64_t v, DType t, Span sp);
Expr *ir_int32(Arena *a, int64_t v); /* int32 literal, no span */
Expr *ir_bool(Arena *a, bool v);
Expr *ir_float(Arena *a, double v, DType t, Span sp);
Expr *ir_varref(Arena *a, Var *v, Span sp);
Expr *ir_bin(Arena *a, BinOp op, Expr *x, Expr *y, Span sp);
Expr *ir_not(Arena *a, Expr *x, Span sp);
Expr *ir_neg(Arena *a, Expr *x, Span sp);
Expr *ir_select(Arena *a, Expr *c, Expr *x, Expr *y, Span sp);
Expr *ir_cast(Arena *a, DType t, Expr *x, Span sp);
Expr *ir_load(Arena *a, Buffer *b, int nidx, Expr **idx, Span sp);
Expr *ir_undef(Arena *a, DType t, Span sp);
Expr *ir_let(Arena *a, Var *v, Expr *value, Expr *body, Span sp);
/* f over args[0, mathfn_arity(f)), of the dtype of args[0] (the operands
 * must agree: the parser converts them). */
Expr *ir_call(Arena *a, MathFn f, Expr *const *args, Span sp);
/* An opaque call T.name(items) of dtype t (items and args copied). */
Expr *ir_opaque(Arena *a, const char *name, DType t, int nitems, const OpqItem *items,
		int nargs, Expr *const *args, Span sp);
/* The first opaque call in s (or e), or NULL. */
const Expr *ir_expr_find_opaque(const Expr *e);
const Expr *ir_stmt_find_opaque(const Stmt *s);
/* fn(b, ud) for each buffer an opaque call in e names (an item `B.data`
 * or `B`, or a load in its arguments: T.address_of(B[i])), once per
 * mention; and the same over the own expressions of s (not its
 * sub-statements). The buffers an opaque call may read and write. */
void ir_expr_opaque_buffers(const Expr *e, void (*fn)(Buffer *b, void *ud), void *ud);
void ir_stmt_opaque_buffers(const Stmt *s, void (*fn)(Buffer *b, void *ud), void *ud);
/* Whether an opaque call among the own expressions of s names b. */
bool ir_stmt_opaque_names(const Stmt *s, const Buffer *b);
/* shorthands without spans */
Expr *ir_add(Arena *a, Expr *x, Expr *y);
Expr *ir_sub(Arena *a, Expr *x, Expr *y);
Expr *ir_mul(Arena *a, Expr *x, Expr *y);
Expr *ir_and(Arena *a, Expr *x, Expr *y); /* NULL operand = true */
Expr *ir_or(Arena *a, Expr *x, Expr *y);

Stmt *ir_seq(Arena *a, int n, Stmt **items, Span sp); /* copies items */
Stmt *ir_for(Arena *a, Var *v, Expr *min, Expr *extent, ForKind k,
	     Stmt *body, Span sp);
Stmt *ir_if(Arena *a, Expr *c, Stmt *then_s, Stmt *else_s, Span sp);
Stmt *ir_store(Arena *a, Buffer *b, int nidx, Expr **idx, Expr *value,
	       Span sp);
Stmt *ir_assume(Arena *a, Expr *fact, Span sp);
Stmt *ir_eval(Arena *a, Expr *e, Span sp);
Stmt *ir_alloc(Arena *a, Buffer *b, Stmt *body, Span sp);
Stmt *ir_block(Arena *a, const char *name, Stmt *body, Span sp);
Stmt *ir_letstmt(Arena *a, Var *v, Expr *value, Stmt *body, Span sp);
/* A block with iter vars (info may be NULL: a plain block). */
Stmt *ir_block_info(Arena *a, const char *name, const BlockInfo *info,
		    Stmt *body, Span sp);
/* A block like `old` (name, info, span) over `body`: old itself when the
 * body is the same. Every rebuild of a block goes through it. */
Stmt *ir_block_with(Arena *a, const Stmt *old, Stmt *body);

/* ---------- blocks with iter vars (kernel/block.c) ---------- */

/* Every reduction iter var equals its domain minimum (true if none). */
Expr *block_init_cond(Arena *a, const BlockInfo *info);
/* The desugared block: iter lets over bindings[k], the where IF (where may
 * be NULL), the init IF (init may be NULL), then inner. */
Stmt *block_assemble(Arena *a, const char *name, const BlockInfo *info,
		     Expr **bindings, Expr *where, Stmt *init, Stmt *inner, Span sp);

/* The parts of a block with iter vars, read back from its body. */
typedef struct BlockView {
	int niters;
	Expr **bindings;    /* the let values, one per iter var */
	Expr *where;        /* NULL if none */
	const Stmt *init;   /* NULL if none */
	const Stmt *inner;  /* the block's own statements */
} BlockView;

/* Check a parsed block's T.reads / T.writes against its accesses
 * (kernel/block_decl.c): an access of a declared buffer shown outside
 * every declared region of it is an error (false), one that can be shown
 * neither way a warning. The outer loops give the ranges of variables the
 * block reads from around it. */
bool block_check_decls(Arena *a, const Stmt *block, int nouter, Var *const *outer_vars,
		       Expr *const *outer_min, Expr *const *outer_ext, DiagList *d);

/* A parsed block's iter var bindings stay in their domains (semantics.md
 * 9): for bindings affine in loops of literal ranges, without T.where,
 * a binding that reaches outside is an error (false). */
bool block_check_bindings(Arena *a, const Stmt *block, int nouter, Var *const *outer_vars,
			  Expr *const *outer_min, Expr *const *outer_ext, DiagList *d);

/* The accesses of a block's statements as point regions, reads and writes,
 * each cell once: what a rewritten block declares. False when an index
 * uses a variable bound inside the statements (a point cannot say it). */
bool block_access_points(Arena *a, const BlockView *v, int *nreads, BufRegion **reads,
			 int *nwrites, BufRegion **writes);

/* False when `block` has no iter vars or a rewrite changed its body so
 * that it no longer has the shape its info describes. */
bool block_view(Arena *a, const Stmt *block, BlockView *v);
Stmt *ir_pass(Arena *a, Span sp);

Func *ir_func(Arena *a, const char *name, int nparams, Param *params,
	      Stmt *body, Span sp); /* copies params */
Module *ir_module(Arena *a, const char *name, int nfuncs, Func **funcs,
		  Span sp); /* copies funcs */
Func *module_find_func(const Module *m, const char *name);

/* ---------- structural equality and hashing (kernel/equal.c) ----------
 * Bound variables (loops, lets, lambda params) are compared up to renaming;
 * free variables, buffers and params by name, dtype and shape. Spans are
 * ignored. */
bool ir_expr_equal(const Expr *x, const Expr *y);
bool ir_stmt_equal(const Stmt *x, const Stmt *y);
bool ir_func_equal(const Func *x, const Func *y);
bool ir_module_equal(const Module *x, const Module *y);
uint64_t ir_expr_hash(const Expr *e);
uint64_t ir_stmt_hash(const Stmt *s);

/* ---------- substitution and traversal helpers (kernel/ir.c) ---------- */

/* Replace variables by expressions; returns the original node when nothing
 * changed (sharing). n pairs (from[i] -> to[i]). */
Expr *ir_subst_expr(Arena *a, Expr *e, int n, Var **from, Expr **to);
Stmt *ir_subst_stmt(Arena *a, Stmt *s, int n, Var **from, Expr **to);
/* Replace every access to buffer `from` by `to` (same indices). */
Stmt *ir_replace_buffer(Arena *a, Stmt *s, const Buffer *from, Buffer *to);
/* Replace every access from[x] by to[map(x)]: the new k-th index is
 * map[k] with vars[i] := the old i-th index (nvars = from->ndim, nout =
 * to->ndim). An allocation of `from` becomes an allocation of `to`. */
Stmt *ir_remap_buffer(Arena *a, Stmt *s, const Buffer *from, Buffer *to,
		      int nvars, Var **vars, int nout, Expr **map);
Expr *ir_remap_buffer_expr(Arena *a, Expr *e, const Buffer *from, Buffer *to,
			   int nvars, Var **vars, int nout, Expr **map);
bool ir_expr_uses_var(const Expr *e, const Var *v);
bool ir_stmt_uses_var(const Stmt *s, const Var *v);

#endif
