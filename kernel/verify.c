/* kernel/verify.c — the IR verifier (verify.h): one walk over a function
 * that keeps the variables and buffers in scope in a pointer map, and
 * checks scopes, dtypes and shapes exactly as ir.h's constructors and the
 * parser build them (nothing the parser accepts is flagged). Every switch
 * names every kind; an unknown kind is an error, never quietly accepted.
 * Binders in tail position (loop, let, allocation and block bodies, the
 * last item of a sequence, an else branch) are followed by iteration, so
 * long let chains and elif chains do not deepen the C stack. */
#include "kernel/verify.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ptrmap.h"

#define MAX_ERRORS 8 /* per function: the first is the one that matters */

enum { NOT_BOUND = 0, BOUND_VAR = 1, BOUND_BUF = 2 };

typedef struct Verifier {
	const Func *f;
	DiagList *d;
	int nerrors;
	Span where;	    /* innermost enclosing node with a source span */
	const char *index;  /* inside an index, extent or shape: its name */
	bool any_buffer;    /* in a layout: buffers are not scope-checked */
	PtrMap bound;	    /* Var / Buffer -> BOUND_VAR / BOUND_BUF / NOT_BOUND */
	const void **stack; /* what is bound, innermost last */
	int n, cap;
} Verifier;

static const char *const expr_kind_names[EX_COUNT] = {
#define X(k) [k] = #k,
	VS_EXPR_KINDS(X)
#undef X
};

static void fail(Verifier *v, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(Verifier *v, Span sp, const char *fmt, ...)
{
	if (v->nerrors++ >= MAX_ERRORS)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = arena_vprintf(v->d->arena, fmt, ap);
	va_end(ap);
	const char *fname = v->f && v->f->name ? v->f->name : "?";
	diag_add(v->d, DIAG_ERROR, sp.src ? sp : v->where,
		 "internal error: IR verifier: function '%s': %s", fname, msg);
}

static bool stopped(const Verifier *v) { return v->nerrors >= MAX_ERRORS; }

/* ---------- dtypes ---------- */

static bool dtype_valid(DType t) { return (unsigned)t < DT_COUNT; }

static const char *dt(DType t) { return dtype_valid(t) ? dtype_name(t) : "<invalid dtype>"; }

/* A dtype a value can have: not void, not a handle. */
static bool is_value_dtype(DType t) { return dtype_valid(t) && t != DT_VOID && t != DT_HANDLE; }

static bool is_numeric(DType t) { return dtype_valid(t) && (dtype_is_int(t) || dtype_is_float(t)); }

static bool is_int_literal(const Expr *e) { return e->kind == EX_INT && e->dtype != DT_BOOL; }

/* ir.h: an operand has the dtype of the result, except that an integer
 * literal adapts to the other side (ir_bin, ir_select, loop bounds). */
static bool operand_fits(const Expr *x, DType t)
{
	return x->dtype == t || (is_int_literal(x) && is_numeric(t));
}

static bool literal_fits(int64_t val, DType t)
{
	return t == DT_BOOL ? (val == 0 || val == 1) : dtype_wrap_int(val, t) == val;
}

/* ---------- scopes ---------- */

static uintptr_t bound_as(const Verifier *v, const void *key)
{
	uintptr_t kind = NOT_BOUND;
	return ptrmap_get(&v->bound, key, &kind) ? kind : NOT_BOUND;
}

/* Bring key into scope until unbind_to; a key already in scope is an
 * error (and stays bound by its outer binder). */
static void bind(Verifier *v, const void *key, uintptr_t kind, Span sp, const char *what,
		 const char *name)
{
	if (bound_as(v, key) != NOT_BOUND) {
		fail(v, sp, "%s '%s' is bound again inside its own scope", what, name ? name : "?");
		return;
	}
	if (v->n == v->cap) {
		int cap = v->cap ? v->cap * 2 : 64;
		const void **st = realloc(v->stack, sizeof *st * (size_t)cap);
		if (!st) {
			fail(v, sp, "out of memory");
			return;
		}
		v->stack = st;
		v->cap = cap;
	}
	if (!ptrmap_put(&v->bound, key, kind)) {
		fail(v, sp, "out of memory");
		return;
	}
	v->stack[v->n++] = key;
}

static void unbind_to(Verifier *v, int mark)
{
	while (v->n > mark)
		if (!ptrmap_put(&v->bound, v->stack[--v->n], NOT_BOUND))
			fail(v, v->where, "out of memory");
}

static void bind_var(Verifier *v, const Var *var, Span sp, const char *what)
{
	if (!var) {
		fail(v, sp, "%s without a variable", what);
		return;
	}
	if (!is_value_dtype(var->dtype) && var->dtype != DT_HANDLE)
		fail(v, sp, "%s '%s' has dtype %s", what, var->name ? var->name : "?",
		     dt(var->dtype));
	bind(v, var, BOUND_VAR, sp, what, var->name);
}

/* ---------- expressions ---------- */

static void check_expr(Verifier *v, const Expr *e, const char *what);

/* An index, loop bound, extent or shape: integer, no T.undef(). */
static void check_index(Verifier *v, const Expr *e, const char *what)
{
	const char *outer = v->index;
	v->index = what;
	check_expr(v, e, what);
	v->index = outer;
	if (e && dtype_valid(e->dtype) && !dtype_is_int(e->dtype))
		fail(v, e->span, "%s has dtype %s, not an integer dtype", what, dt(e->dtype));
}

static void check_cond(Verifier *v, const Expr *e, const char *what)
{
	check_expr(v, e, what);
	if (e && e->dtype != DT_BOOL)
		fail(v, e->span, "%s has dtype %s, not bool", what, dt(e->dtype));
}

/* A load or store of buf with nidx indices. */
static void check_access(Verifier *v, Span sp, const Buffer *buf, int nidx, Expr *const *idx,
			 const char *what)
{
	if (!buf) {
		fail(v, sp, "%s without a buffer", what);
		return;
	}
	const char *name = buf->name ? buf->name : "?";
	if (!v->any_buffer && bound_as(v, buf) != BOUND_BUF)
		fail(v, sp, "buffer '%s' is used outside its scope (not a parameter "
		     "or an enclosing allocation)", name);
	if (nidx != buf->ndim)
		fail(v, sp, "%s of buffer '%s' has %d ind%s but the buffer has %d "
		     "dimension%s", what, name, nidx, nidx == 1 ? "ex" : "ices",
		     buf->ndim, buf->ndim == 1 ? "" : "s");
	if (nidx > 0 && !idx) {
		fail(v, sp, "%s of buffer '%s' has no index list", what, name);
		return;
	}
	for (int i = 0; i < nidx && !stopped(v); i++)
		check_index(v, idx[i], "an index");
}

static void check_binary(Verifier *v, const Expr *e)
{
	BinOp op = e->u.bin.op;
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	if ((unsigned)op >= OP_COUNT) {
		fail(v, e->span, "invalid binary operator %d", (int)op);
		return;
	}
	check_expr(v, x, "an operand");
	check_expr(v, y, "an operand");
	if (!x || !y)
		return;
	const char *sym = binop_symbol(op);
	if (binop_is_logical(op)) {
		if (e->dtype != DT_BOOL || x->dtype != DT_BOOL || y->dtype != DT_BOOL)
			fail(v, e->span, "'%s' of %s and %s has dtype %s; logic is on bools",
			     sym, dt(x->dtype), dt(y->dtype), dt(e->dtype));
		return;
	}
	if (binop_is_compare(op)) {
		bool agree = x->dtype == y->dtype || (is_int_literal(x) && is_numeric(y->dtype)) ||
			     (is_int_literal(y) && is_numeric(x->dtype));
		if (e->dtype != DT_BOOL || !agree)
			fail(v, e->span, "comparison '%s' of %s and %s has dtype %s; operands "
			     "must agree and the result is bool", sym, dt(x->dtype),
			     dt(y->dtype), dt(e->dtype));
		return;
	}
	if (!is_numeric(e->dtype) || !operand_fits(x, e->dtype) || !operand_fits(y, e->dtype)) {
		fail(v, e->span, "'%s' of %s and %s has dtype %s; operands must have "
		     "the result's numeric dtype", sym, dt(x->dtype), dt(y->dtype),
		     dt(e->dtype));
		return;
	}
	if (op == OP_DIV && !dtype_is_float(e->dtype))
		fail(v, e->span, "'/' on %s: true division is for floats only", dt(e->dtype));
}

static void check_var_use(Verifier *v, const Expr *e)
{
	const Var *var = e->u.var;
	if (!var) {
		fail(v, e->span, "variable reference without a variable");
		return;
	}
	const char *name = var->name ? var->name : "?";
	if (bound_as(v, var) != BOUND_VAR)
		fail(v, e->span, "variable '%s' (id %d) is used outside its scope", name,
		     var->id);
	else if (e->dtype != var->dtype)
		fail(v, e->span, "reference to '%s' has dtype %s but the variable is %s",
		     name, dt(e->dtype), dt(var->dtype));
}

static void check_let_expr(Verifier *v, const Expr *e)
{
	const Var *var = e->u.let.var;
	const Expr *value = e->u.let.value, *body = e->u.let.body;
	check_expr(v, value, "a let value");
	if (var && value && var->dtype != value->dtype)
		fail(v, e->span, "let variable '%s' is %s but its value is %s",
		     var->name ? var->name : "?", dt(var->dtype), dt(value->dtype));
	int mark = v->n;
	bind_var(v, var, e->span, "let variable");
	check_expr(v, body, "a let body");
	unbind_to(v, mark);
	if (body && e->dtype != body->dtype)
		fail(v, e->span, "let expression is %s but its body is %s", dt(e->dtype),
		     dt(body->dtype));
}

static void check_call(Verifier *v, const Expr *e)
{
	if ((unsigned)e->u.call.fn >= MF_COUNT) {
		fail(v, e->span, "invalid math function %d", (int)e->u.call.fn);
		return;
	}
	const char *name = mathfn_name(e->u.call.fn);
	int arity = mathfn_arity(e->u.call.fn);
	if (e->u.call.nargs != arity) {
		fail(v, e->span, "T.%s with %d operands, it takes %d", name,
		     e->u.call.nargs, arity);
		return;
	}
	for (int i = 0; i < arity; i++) {
		const Expr *x = e->u.call.args[i];
		check_expr(v, x, "an operand of a math call");
		if (x && x->dtype != e->dtype)
			fail(v, e->span, "T.%s of dtype %s has an operand of dtype %s",
			     name, dt(e->dtype), dt(x->dtype));
	}
	if (!dtype_is_float(e->dtype) &&
	    !(e->u.call.fn == MF_ABS && dtype_is_int(e->dtype)))
		fail(v, e->span, "T.%s of dtype %s: math calls are on floats (T.abs also "
		     "on integers)", name, dt(e->dtype));
}

static void check_expr(Verifier *v, const Expr *e, const char *what);

/* An opaque call: any dtype (void and handle too); its expression items
 * index its arguments; the buffers it names are in scope. */
static void check_opaque(Verifier *v, const Expr *e)
{
	if (!e->u.opq.name || (e->u.opq.nitems && !e->u.opq.items) ||
	    (e->u.opq.nargs && !e->u.opq.args)) {
		fail(v, e->span, "malformed opaque call");
		return;
	}
	for (int i = 0; i < e->u.opq.nitems && !stopped(v); i++) {
		const OpqItem *it = &e->u.opq.items[i];
		switch (it->kind) {
		case OPQ_EXPR:
			if (it->expr < 0 || it->expr >= e->u.opq.nargs)
				fail(v, e->span, "opaque call T.%s: item %d names no argument",
				     e->u.opq.name, i);
			break;
		case OPQ_BUFFER: case OPQ_BUFFER_DATA:
			if (!it->buf)
				fail(v, e->span, "opaque call T.%s without a buffer", e->u.opq.name);
			else if (!v->any_buffer && bound_as(v, it->buf) != BOUND_BUF)
				fail(v, e->span, "buffer '%s' is used outside its scope (not a "
				     "parameter or an enclosing allocation)",
				     it->buf->name ? it->buf->name : "?");
			break;
		case OPQ_STRING:
			if (!it->str)
				fail(v, e->span, "opaque call T.%s: string item without text",
				     e->u.opq.name);
			break;
		}
	}
	for (int i = 0; i < e->u.opq.nargs && !stopped(v); i++) {
		const Expr *x = e->u.opq.args[i];
		if (x && x->kind == EX_OPAQUE)
			check_opaque(v, x);
		else
			check_expr(v, x, "an argument of an opaque call");
	}
}

static void check_expr(Verifier *v, const Expr *e, const char *what)
{
	if (stopped(v))
		return;
	if (!e) {
		fail(v, v->where, "missing expression (%s)", what);
		return;
	}
	if ((unsigned)e->kind >= EX_COUNT) {
		fail(v, e->span, "invalid expression kind %d", (int)e->kind);
		return;
	}
	if (e->kind == EX_OPAQUE) {
		if (v->index)
			fail(v, e->span, "the opaque call T.%s in %s", e->u.opq.name ? e->u.opq.name : "?",
			     v->index);
		check_opaque(v, e);
		return;
	}
	if (!is_value_dtype(e->dtype)) {
		fail(v, e->span, "%s of dtype %s", expr_kind_names[e->kind], dt(e->dtype));
		return;
	}
	switch (e->kind) {
	case EX_INT:
		if (!dtype_is_int(e->dtype) && e->dtype != DT_BOOL)
			fail(v, e->span, "integer literal of dtype %s", dt(e->dtype));
		else if (!literal_fits(e->u.ival, e->dtype))
			fail(v, e->span, "literal %lld does not fit in %s", (long long)e->u.ival,
			     dt(e->dtype));
		return;
	case EX_FLOAT:
		if (!dtype_is_float(e->dtype))
			fail(v, e->span, "float literal of dtype %s", dt(e->dtype));
		return;
	case EX_VAR:
		check_var_use(v, e);
		return;
	case EX_BIN:
		check_binary(v, e);
		return;
	case EX_NOT:
		check_cond(v, e->u.un.a, "the operand of 'not'");
		if (e->dtype != DT_BOOL)
			fail(v, e->span, "'not' has dtype %s, not bool", dt(e->dtype));
		return;
	case EX_NEG:
		check_expr(v, e->u.un.a, "the operand of '-'");
		if (!is_numeric(e->dtype) || (e->u.un.a && e->u.un.a->dtype != e->dtype))
			fail(v, e->span, "negation of %s has dtype %s",
			     e->u.un.a ? dt(e->u.un.a->dtype) : "?", dt(e->dtype));
		return;
	case EX_SELECT:
		check_cond(v, e->u.sel.cond, "a select condition");
		check_expr(v, e->u.sel.a, "a select value");
		check_expr(v, e->u.sel.b, "a select value");
		if (e->u.sel.a && e->u.sel.b &&
		    (!operand_fits(e->u.sel.a, e->dtype) || !operand_fits(e->u.sel.b, e->dtype)))
			fail(v, e->span, "select of %s and %s has dtype %s", dt(e->u.sel.a->dtype),
			     dt(e->u.sel.b->dtype), dt(e->dtype));
		return;
	case EX_CAST:
		check_expr(v, e->u.un.a, "the operand of a cast");
		return;
	case EX_LOAD:
		check_access(v, e->span, e->u.load.buf, e->u.load.nidx, e->u.load.idx, "load");
		if (e->u.load.buf && e->dtype != e->u.load.buf->dtype)
			fail(v, e->span, "load of %s buffer '%s' has dtype %s",
			     dt(e->u.load.buf->dtype),
			     e->u.load.buf->name ? e->u.load.buf->name : "?", dt(e->dtype));
		return;
	case EX_UNDEF:
		if (v->index)
			fail(v, e->span, "T.undef() in %s", v->index);
		return;
	case EX_LET:
		check_let_expr(v, e);
		return;
	case EX_CALL:
		check_call(v, e);
		return;
	case EX_OPAQUE: /* above */
	case EX_COUNT:
		break;
	}
	fail(v, e->span, "invalid expression kind %d", (int)e->kind);
}

/* ---------- buffers ---------- */

static void check_buffer_decl(Verifier *v, const Buffer *b, Span sp);

static void bind_vars(Verifier *v, int n, Var *const *vars, Span sp, const char *what)
{
	for (int i = 0; i < n && !stopped(v); i++)
		bind_var(v, vars[i], sp, what);
}

static void check_list(Verifier *v, int n, Expr *const *xs, const char *what)
{
	for (int i = 0; i < n && !stopped(v); i++)
		check_index(v, xs[i], what);
}

/* The layout of a transformed buffer: the map over the logical indices
 * (the lambda's variables), the inverse and the padding predicates over
 * the physical ones. The maps were read against the function's names,
 * so their variables are scope-checked; a buffer they might read is not
 * (the lambda parser sees every allocation of the function). */
static void check_layout(Verifier *v, const Buffer *b, Span sp)
{
	const Layout *l = b->layout;
	const char *name = b->name ? b->name : "?";
	const Buffer *lb = l->logical;
	if (!lb || l->nvars != lb->ndim || (l->nvars > 0 && !l->vars) ||
	    (b->ndim > 0 && !l->map) || (l->inverse && b->ndim > 0 && !l->inv_vars)) {
		fail(v, sp, "layout of buffer '%s' does not match its logical buffer", name);
		return;
	}
	bool outer = v->any_buffer;
	v->any_buffer = true;
	int mark = v->n;
	bind_vars(v, l->nvars, l->vars, sp, "layout variable");
	check_list(v, b->ndim, l->map, "a layout index");
	unbind_to(v, mark);
	if (l->inverse) {
		bind_vars(v, b->ndim, l->inv_vars, sp, "layout variable");
		check_list(v, l->nvars, l->inverse, "a layout inverse index");
		const Expr *preds[] = {l->pad_predicate, l->all_padding, l->forbidden};
		for (size_t i = 0; i < sizeof preds / sizeof *preds; i++)
			if (preds[i])
				check_cond(v, preds[i], "a padding predicate");
		if (l->pad_kind == PAD_VALUE)
			check_expr(v, l->pad_value, "a pad value");
		unbind_to(v, mark);
	}
	v->any_buffer = outer;
	check_buffer_decl(v, lb, sp);
}

/* A buffer's declaration (parameter or allocation), in the scope where its
 * shape is evaluated. */
static void check_buffer_decl(Verifier *v, const Buffer *b, Span sp)
{
	const char *name = b->name ? b->name : "?";
	if (b->span.src)
		sp = b->span;
	if (!is_value_dtype(b->dtype))
		fail(v, sp, "buffer '%s' has dtype %s", name, dt(b->dtype));
	if (b->ndim < 0 || (b->ndim > 0 && !b->shape)) {
		fail(v, sp, "buffer '%s' has %d dimensions and %s shape", name, b->ndim,
		     b->shape ? "a" : "no");
		return;
	}
	for (int i = 0; i < b->ndim && !stopped(v); i++)
		check_index(v, b->shape[i], "a buffer shape");
	if (b->naxis_separators < 0 || (b->naxis_separators > 0 && !b->axis_separators)) {
		fail(v, sp, "buffer '%s' has a bad axis separator list", name);
		return;
	}
	for (int i = 0; i < b->naxis_separators; i++) {
		int at = b->axis_separators[i], prev = i ? b->axis_separators[i - 1] : 0;
		if (at <= prev || at >= b->ndim)
			fail(v, sp, "buffer '%s': axis separators must be increasing "
			     "positions in [1, %d)", name, b->ndim);
	}
	if ((unsigned)b->scope > SCOPE_SHARED)
		fail(v, sp, "buffer '%s' has an invalid scope %d", name, (int)b->scope);
	if (b->layout)
		check_layout(v, b, sp);
}

/* ---------- statements ---------- */

static void check_stmt(Verifier *v, const Stmt *s);

static void check_for(Verifier *v, const Stmt *s)
{
	const Var *var = s->u.loop.var;
	const Expr *min = s->u.loop.min, *ext = s->u.loop.extent;
	check_index(v, min, "a loop bound");
	check_index(v, ext, "a loop extent");
	if ((unsigned)s->u.loop.kind > FOR_UNROLLED)
		fail(v, s->span, "invalid loop kind %d", (int)s->u.loop.kind);
	if (!var) {
		bind_var(v, var, s->span, "loop variable");
		return;
	}
	const char *name = var->name ? var->name : "?";
	if (!dtype_is_int(var->dtype))
		fail(v, s->span, "loop variable '%s' has dtype %s, not an integer dtype", name,
		     dt(var->dtype));
	else if ((min && !operand_fits(min, var->dtype)) || (ext && !operand_fits(ext, var->dtype)))
		fail(v, s->span, "loop variable '%s' is %s but its bounds are %s and %s", name,
		     dt(var->dtype), min ? dt(min->dtype) : "?", ext ? dt(ext->dtype) : "?");
	bind_var(v, var, s->span, "loop variable");
}

static void check_store(Verifier *v, const Stmt *s)
{
	const Buffer *b = s->u.store.buf;
	const Expr *value = s->u.store.value;
	check_access(v, s->span, b, s->u.store.nidx, s->u.store.idx, "store");
	check_expr(v, value, "a stored value");
	if (b && value && value->dtype != b->dtype)
		fail(v, s->span, "store of a %s value into %s buffer '%s'", dt(value->dtype),
		     dt(b->dtype), b->name ? b->name : "?");
}

static void check_let_stmt(Verifier *v, const Stmt *s)
{
	const Var *var = s->u.let.var;
	const Expr *value = s->u.let.value;
	check_expr(v, value, "a let value");
	if (var && value && var->dtype != value->dtype)
		fail(v, s->span, "let variable '%s' is %s but its value is %s",
		     var->name ? var->name : "?", dt(var->dtype), dt(value->dtype));
	bind_var(v, var, s->span, "let variable");
}

static void check_alloc(Verifier *v, const Stmt *s)
{
	const Buffer *b = s->u.alloc.buf;
	if (!b) {
		fail(v, s->span, "allocation without a buffer");
		return;
	}
	check_buffer_decl(v, b, s->span);
	bind(v, b, BOUND_BUF, s->span, "buffer", b->name);
}

/* The items of a sequence but the last (each in its own scope); the last
 * is the caller's tail: true when there is one. */
static bool check_seq(Verifier *v, const Stmt *s, const Stmt **tail)
{
	int n = s->u.seq.n;
	if (n < 0 || (n > 0 && !s->u.seq.items)) {
		fail(v, s->span, "sequence of %d statements without items", n);
		return false;
	}
	for (int i = 0; i + 1 < n && !stopped(v); i++)
		check_stmt(v, s->u.seq.items[i]);
	if (n == 0)
		return false;
	*tail = s->u.seq.items[n - 1];
	return true;
}

/* One statement kind; returns whether to go on with *tail, the statement
 * that stays in the scope of what s binds. */
static bool check_one(Verifier *v, const Stmt *s, const Stmt **tail)
{
	switch (s->kind) {
	case ST_SEQ:
		return check_seq(v, s, tail);
	case ST_FOR:
		check_for(v, s);
		*tail = s->u.loop.body;
		return true;
	case ST_IF:
		check_cond(v, s->u.cond.cond, "an if condition");
		check_stmt(v, s->u.cond.then_s);
		*tail = s->u.cond.else_s;
		return *tail != NULL;
	case ST_STORE:
		check_store(v, s);
		return false;
	case ST_ASSUME:
		check_cond(v, s->u.expr, "an assumption");
		return false;
	case ST_EVAL:
		check_expr(v, s->u.expr, "an evaluated expression");
		return false;
	case ST_ALLOC:
		check_alloc(v, s);
		*tail = s->u.alloc.body;
		return true;
	case ST_BLOCK:
		if (!s->u.block.name)
			fail(v, s->span, "block without a name");
		*tail = s->u.block.body;
		return true;
	case ST_LET:
		check_let_stmt(v, s);
		*tail = s->u.let.body;
		return true;
	case ST_PASS:
		return false;
	case ST_COUNT:
		break;
	}
	fail(v, s->span, "invalid statement kind %d", (int)s->kind);
	return false;
}

static void check_stmt(Verifier *v, const Stmt *s)
{
	int mark = v->n;
	Span outer = v->where;
	while (!stopped(v)) {
		if (!s) {
			fail(v, v->where, "missing statement");
			break;
		}
		if ((unsigned)s->kind >= ST_COUNT) {
			fail(v, s->span, "invalid statement kind %d", (int)s->kind);
			break;
		}
		if (s->span.src)
			v->where = s->span;
		const Stmt *tail = NULL;
		if (!check_one(v, s, &tail))
			break;
		s = tail;
	}
	unbind_to(v, mark);
	v->where = outer;
}

/* ---------- functions and modules ---------- */

/* The let variables on the top-level spine of a body: a T.match_buffer
 * shape may name one (the parser binds it at the function's top level). */
static void bind_top_lets(Verifier *v, const Stmt *s)
{
	while (s && (unsigned)s->kind < ST_COUNT) {
		if (s->kind == ST_LET) {
			if (s->u.let.var && bound_as(v, s->u.let.var) == NOT_BOUND)
				bind(v, s->u.let.var, BOUND_VAR, s->span, "let variable",
				     s->u.let.var->name);
			s = s->u.let.body;
		} else if (s->kind == ST_ALLOC) {
			s = s->u.alloc.body;
		} else if (s->kind == ST_SEQ && s->u.seq.n > 0 && s->u.seq.items) {
			s = s->u.seq.items[s->u.seq.n - 1];
		} else {
			return;
		}
	}
}

static void bind_param(Verifier *v, const Param *p)
{
	switch (p->kind) {
	case PARAM_BUFFER:
		if (!p->buf)
			fail(v, v->where, "buffer parameter without a buffer");
		else
			bind(v, p->buf, BOUND_BUF, p->buf->span, "buffer", p->buf->name);
		return;
	case PARAM_SCALAR:
		bind_var(v, p->var, v->where, "scalar parameter");
		if (p->var && !is_value_dtype(p->var->dtype))
			fail(v, p->var->span, "scalar parameter '%s' has dtype %s",
			     p->var->name ? p->var->name : "?", dt(p->var->dtype));
		return;
	case PARAM_HANDLE:
		bind_var(v, p->var, v->where, "handle parameter");
		if (p->var && p->var->dtype != DT_HANDLE)
			fail(v, p->var->span, "handle parameter '%s' has dtype %s",
			     p->var->name ? p->var->name : "?", dt(p->var->dtype));
		if (!p->buf)
			fail(v, v->where, "handle parameter without a matched buffer");
		else
			bind(v, p->buf, BOUND_BUF, p->buf->span, "buffer", p->buf->name);
		return;
	}
	fail(v, v->where, "invalid parameter kind %d", (int)p->kind);
}

/* Parameter buffer shapes are evaluated over the parameters; a matched
 * handle's shape also over the top-level lets. */
static void check_param_buffers(Verifier *v)
{
	const Func *f = v->f;
	for (int i = 0; i < f->nparams && !stopped(v); i++) {
		const Param *p = &f->params[i];
		if (!p->buf || (unsigned)p->kind > PARAM_HANDLE)
			continue;
		int mark = v->n;
		if (p->kind == PARAM_HANDLE)
			bind_top_lets(v, f->body);
		check_buffer_decl(v, p->buf, f->span);
		unbind_to(v, mark);
	}
}

bool ir_verify_func(const Func *f, DiagList *d)
{
	Verifier v = {.f = f, .d = d};
	if (!f) {
		fail(&v, v.where, "missing function");
		return false;
	}
	v.where = f->span;
	if (f->nparams < 0 || (f->nparams > 0 && !f->params))
		fail(&v, f->span, "%d parameters without a list", f->nparams);
	else
		for (int i = 0; i < f->nparams; i++)
			bind_param(&v, &f->params[i]);
	if (!stopped(&v) && f->params)
		check_param_buffers(&v);
	check_stmt(&v, f->body);
	unbind_to(&v, 0);
	ptrmap_free(&v.bound);
	free(v.stack);
	return v.nerrors == 0;
}

bool ir_verify_module(const Module *m, DiagList *d)
{
	static const Span nowhere;
	if (!m || m->nfuncs < 0 || (m->nfuncs > 0 && !m->funcs)) {
		diag_add(d, DIAG_ERROR, m ? m->span : nowhere,
			 "internal error: IR verifier: module without a function list");
		return false;
	}
	bool ok = true;
	for (int i = 0; i < m->nfuncs; i++) {
		const Func *f = m->funcs[i];
		ok = ir_verify_func(f, d) && ok;
		for (int j = 0; f && f->name && j < i; j++)
			if (m->funcs[j] && m->funcs[j]->name &&
			    strcmp(m->funcs[j]->name, f->name) == 0) {
				diag_add(d, DIAG_ERROR, f->span, "internal error: IR verifier: "
					 "function '%s' is defined twice in the module", f->name);
				ok = false;
			}
	}
	return ok;
}

static bool module_holds(const Module *m, const Func *f)
{
	for (int i = 0; m && i < m->nfuncs; i++)
		if (m->funcs[i] == f)
			return true;
	return false;
}

const char *ir_verify_changed(Arena *a, const Module *after, const Module *before)
{
	DiagList d;
	diag_init(&d, a);
	if (!after || after->nfuncs < 0 || (after->nfuncs > 0 && !after->funcs))
		return "internal error: IR verifier: module without a function list";
	for (int i = 0; i < after->nfuncs && !d.first; i++)
		if (!module_holds(before, after->funcs[i]))
			ir_verify_func(after->funcs[i], &d);
	return d.first ? d.first->message : NULL;
}
