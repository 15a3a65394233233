/* kernel/interp.c — the reference interpreter (semantics.md 1 and 3): a
 * tree walk over the IR's statements that reports UB with its span, checks
 * T.assume, checks and repairs the entry facts that input generation builds
 * on, and applies layout chains. Expressions and values are evaluated in
 * kernel/interp_eval.c; states, input generation and comparison live in
 * kernel/inputs.c. */
#include "kernel/interp_int.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/print.h"

#define MAX_CELLS INTERP_MAX_CELLS /* per buffer */
#define REPAIR_PASSES 3

/* ---------- setup and failure ---------- */

static bool exec(Interp *in, const Stmt *s);

static void interp_init(Interp *in, Arena *a, uint64_t limit)
{
	memset(in, 0, sizeof *in);
	in->arena = a;
	in->limit = limit ? limit : INTERP_DEFAULT_STEP_LIMIT;
	in->rng = 0x2545F4914F6CDD1Dull;
	in->status = RUN_OK;
}

static void interp_destroy(Interp *in)
{
	free(in->env);
	free(in->overflow);
	free(in->binds);
	free(in->loops);
}

bool in_fail(Interp *in, RunStatus st, Span sp, const char *fmt, ...)
{
	if (in->failed)
		return false;
	va_list ap;
	va_start(ap, fmt);
	in->message = arena_vprintf(in->arena, fmt, ap);
	va_end(ap);
	in->failed = true;
	in->status = st;
	in->span = sp;
	return false;
}

static void clear_failure(Interp *in)
{
	in->failed = false;
	in->status = RUN_OK;
	in->message = NULL;
}

static bool out_of_memory(Interp *in, Span sp)
{
	return in_fail(in, RUN_LIMIT, sp, "out of memory");
}

/* ---------- environment ---------- */

static bool env_reserve(Interp *in, int id)
{
	if (id < in->nenv)
		return true;
	int n = in->nenv ? in->nenv : 64;
	while (n <= id)
		n *= 2;
	Slot *env = realloc(in->env, sizeof(Slot) * (size_t)n);
	if (!env)
		return false;
	memset(env + in->nenv, 0, sizeof(Slot) * (size_t)(n - in->nenv));
	in->env = env;
	in->nenv = n;
	return true;
}

/* v's binding, or NULL when v is not bound. */
Slot *in_var_slot(Interp *in, const Var *v)
{
	if (v->id >= 0 && v->id < in->nenv && in->env[v->id].var == v)
		return &in->env[v->id];
	for (int i = in->noverflow - 1; i >= 0; i--)
		if (in->overflow[i].var == v)
			return &in->overflow[i];
	return NULL;
}

static Value *var_value(Interp *in, const Var *v)
{
	Slot *slot = in_var_slot(in, v);
	return slot ? &slot->v : NULL;
}

static bool push_overflow(Interp *in, const Var *v, Value x)
{
	if (in->noverflow == in->capoverflow) {
		int n = in->capoverflow ? 2 * in->capoverflow : 8;
		Slot *p = realloc(in->overflow, sizeof(Slot) * (size_t)n);
		if (!p)
			return false;
		in->overflow = p;
		in->capoverflow = n;
	}
	in->overflow[in->noverflow++] = (Slot){v, x, false};
	return true;
}

/* Bind v to x; *old receives what in_unbind_var needs to restore. */
bool in_bind_var(Interp *in, const Var *v, Value x, SavedVar *old)
{
	if (v->id < 0 || !env_reserve(in, v->id))
		return out_of_memory(in, v->span);
	Slot *slot = &in->env[v->id];
	old->overflow = slot->var && slot->var != v;
	if (old->overflow)
		return push_overflow(in, v, x) || out_of_memory(in, v->span);
	old->old = *slot;
	*slot = (Slot){v, x, false};
	return true;
}

void in_unbind_var(Interp *in, const Var *v, const SavedVar *old)
{
	if (!old->overflow) {
		in->env[v->id] = old->old;
		return;
	}
	for (int i = in->noverflow - 1; i >= 0; i--)
		if (in->overflow[i].var == v) {
			memmove(&in->overflow[i], &in->overflow[i + 1],
				sizeof(Slot) * (size_t)(in->noverflow - i - 1));
			in->noverflow--;
			return;
		}
}

static bool push_buffer(Interp *in, const Buffer *b, BufState *bs)
{
	if (in->nbinds == in->capbinds) {
		int n = in->capbinds ? 2 * in->capbinds : 16;
		Binding *p = realloc(in->binds, sizeof(Binding) * (size_t)n);
		if (!p)
			return out_of_memory(in, b->span);
		in->binds = p;
		in->capbinds = n;
	}
	in->binds[in->nbinds++] = (Binding){b, bs};
	return true;
}

/* The state of buffer b, by identity: a reference to a Buffer that is
 * neither a parameter nor allocated around it is a broken IR, not a
 * buffer to be guessed by name or id. */
BufState *in_lookup_buffer(Interp *in, const Buffer *b)
{
	for (int i = in->nbinds - 1; i >= 0; i--)
		if (in->binds[i].buf == b)
			return in->binds[i].bs;
	return NULL;
}

bool in_push_loop(Interp *in, const Var *v)
{
	if (in->nloops == in->caploops) {
		int n = in->caploops ? 2 * in->caploops : 16;
		const Var **p = realloc(in->loops, sizeof(Var *) * (size_t)n);
		if (!p)
			return out_of_memory(in, v->span);
		in->loops = p;
		in->caploops = n;
	}
	in->loops[in->nloops++] = v;
	return true;
}

/* b's text as an arena string (b is emptied). */
static const char *take_text(Interp *in, StrBuf *b)
{
	char *s = sb_take(b);
	char *r = arena_strdup(in->arena, s);
	free(s);
	return r;
}

/* " at io=3, ii=2" for the loops around the current point, or "". */
static const char *loop_context(Interp *in)
{
	if (!in->nloops)
		return "";
	StrBuf b = {0};
	sb_puts(&b, " at ");
	for (int i = 0; i < in->nloops; i++) {
		const Var *v = in->loops[i];
		Value *x = var_value(in, v);
		sb_printf(&b, "%s%s=%lld", i ? ", " : "", v->name,
			  x ? (long long)x->i : 0LL);
	}
	return take_text(in, &b);
}

/* ---------- messages ---------- */

static void put_tuple(StrBuf *b, int n, const int64_t *xs, bool shape)
{
	for (int i = 0; i < n; i++)
		sb_printf(b, "%s%lld", i ? ", " : "", (long long)xs[i]);
	if (shape && n == 1)
		sb_puts(b, ",");
}

/* "A[3, 4]" */
const char *in_cell_name(Interp *in, const Buffer *b, int n,
			 const int64_t *ix)
{
	StrBuf sb = {0};
	sb_printf(&sb, "%s[", b->name);
	put_tuple(&sb, n, ix, false);
	sb_puts(&sb, "]");
	return take_text(in, &sb);
}

const char *in_shape_text(Interp *in, const BufState *bs)
{
	StrBuf sb = {0};
	sb_puts(&sb, "(");
	put_tuple(&sb, bs->ndim, bs->shape, true);
	sb_puts(&sb, ")");
	return take_text(in, &sb);
}

/* The text of a span, or NULL when it has none. */
static const char *span_text(Interp *in, Span sp)
{
	if (!sp.src || !sp.src->text || sp.line <= 0 || sp.col <= 0 || sp.len <= 0)
		return NULL;
	const char *p = sp.src->text;
	for (int l = 1; l < sp.line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || (size_t)(sp.col - 1) > strlen(p))
		return NULL;
	p += sp.col - 1;
	return arena_strndup(in->arena, p, strnlen(p, (size_t)sp.len));
}

/* A fact as the user wrote it: the statement's source text, or the
 * printed expression. */
static const char *fact_text(Interp *in, const Stmt *s)
{
	const char *t = span_text(in, s->span);
	if (t && strncmp(t, "T.assume(", 9) == 0)
		return t;
	char *e = print_expr(s->u.expr);
	const char *r = arena_printf(in->arena, "T.assume(%s)", e);
	free(e);
	return r;
}

/* ---------- local buffers ---------- */

/* Evaluate b's shape in the current environment into bs->shape (which
 * has room for b->ndim extents) and set bs's size. */
static bool eval_shape(Interp *in, const Buffer *b, BufState *bs)
{
	int64_t size = 1;
	if (b->ndim > MAX_DIMS)
		return in_fail(in, RUN_UB, b->span, "buffer %s has %d dimensions (at most %d)",
			       b->name, b->ndim, MAX_DIMS);
	for (int k = 0; k < b->ndim; k++) {
		if (!in_eval_int(in, b->shape[k], &bs->shape[k], "a shape"))
			return false;
		if (bs->shape[k] < 0)
			return in_fail(in, RUN_UB, b->span, "buffer %s has negative extent %lld",
				       b->name, (long long)bs->shape[k]);
		if (bs->shape[k] > MAX_CELLS || size * bs->shape[k] > MAX_CELLS)
			return in_fail(in, RUN_LIMIT, b->span,
				       "buffer %s is too large (more than %lld cells)",
				       b->name, (long long)MAX_CELLS);
		size *= bs->shape[k];
	}
	bs->buf = b;
	bs->ndim = b->ndim;
	bs->size = size;
	return true;
}

/* Allocate the local buffer of an ST_ALLOC (every cell uninitialised)
 * and bring it into scope; in_close_local undoes it. bs->shape must have
 * room for MAX_DIMS extents. */
bool in_open_local(Interp *in, const Stmt *s, BufState *bs)
{
	if (!eval_shape(in, s->u.alloc.buf, bs))
		return false;
	size_t n = (size_t)(bs->size ? bs->size : 1);
	bs->data = calloc(n, sizeof(Value));
	bs->cell = calloc(n, 1); /* CELL_UNINIT */
	if (bs->data && bs->cell && push_buffer(in, s->u.alloc.buf, bs))
		return true;
	free(bs->data);
	free(bs->cell);
	return out_of_memory(in, s->span);
}

void in_close_local(Interp *in, BufState *bs)
{
	in->nbinds--;
	free(bs->data);
	free(bs->cell);
}

static bool exec_alloc(Interp *in, const Stmt *s)
{
	int64_t shape[MAX_DIMS];
	BufState bs = {.shape = shape};
	if (!in_open_local(in, s, &bs))
		return false;
	bool ok = exec(in, s->u.alloc.body);
	in_close_local(in, &bs);
	return ok;
}

/* ---------- statements ---------- */

bool in_step_limit(Interp *in, Span sp)
{
	return in_fail(in, RUN_LIMIT, sp, "step limit of %llu reached",
		       (unsigned long long)in->limit);
}

static bool step(Interp *in, Span sp)
{
	return in_step(in, sp);
}

static bool exec_for(Interp *in, const Stmt *s)
{
	int64_t lo, ext;
	const Var *v = s->u.loop.var;
	if (!in_eval_int(in, s->u.loop.min, &lo, "a loop bound") ||
	    !in_eval_int(in, s->u.loop.extent, &ext, "a loop extent"))
		return false;
	SavedVar old;
	if (!in_bind_var(in, v, (Value){.i = 0}, &old))
		return false;
	if (!in_push_loop(in, v)) {
		in_unbind_var(in, v, &old);
		return false;
	}
	bool ok = true;
	/* parallel, vectorized and unrolled loops run serially: their
	 * obligations say the order does not matter */
	for (int64_t k = 0; k < ext && ok; k++) {
		/* looked up each time: the body may grow the environment */
		var_value(in, v)->i = wrap_int((int64_t)((uint64_t)lo + (uint64_t)k), v->dtype);
		in->counts.iterations++;
		ok = step(in, s->span) && exec(in, s->u.loop.body);
	}
	in->nloops--;
	in_unbind_var(in, v, &old);
	return ok;
}

static bool exec_store(Interp *in, const Stmt *s)
{
	int64_t ix[MAX_DIMS], off;
	const Buffer *b = s->u.store.buf;
	BufState *bs = in_access_cell(in, b, s->u.store.nidx, s->u.store.idx,
				      "store", s->span, ix, &off);
	if (!bs)
		return false;
	TVal x;
	return in_eval(in, s->u.store.value, &x) && in_store_value(in, s, bs, off, x);
}

/* Write x, the value of the store s, to cell off of bs. */
bool in_store_value(Interp *in, const Stmt *s, BufState *bs, int64_t off, TVal x)
{
	Value v;
	if (!in_convert(x.v, s->u.store.value->dtype, bs->buf->dtype, &v))
		return in_fail(in, RUN_UB, s->span, "stored value out of range of %s",
			       dtype_name(bs->buf->dtype));
	bs->data[off] = v;
	bs->cell[off] = x.undef ? CELL_UNDEF : CELL_INIT;
	in->counts.stores++;
	return true;
}

/* A fact that fails only because it read an uninitialised cell is false,
 * not an error: 1 true, 0 false, -1 error. */
static int fact_truth(Interp *in, const Expr *e)
{
	bool holds = false;
	if (in_eval_fact(in, e, &holds))
		return holds;
	if (in->status != RUN_ASSUME_FAILED)
		return -1;
	clear_failure(in);
	return 0;
}

static int repair_fact(Interp *in, const Expr *e);

/* A value x with `x op v` true: v itself, or one step (1, or 0.25 for
 * floats) above or below it. */
static Value satisfying_value(BinOp op, Value v, DType t)
{
	int dir = op == OP_GT || op == OP_NE ? 1 : op == OP_LT ? -1 : 0;
	if (dtype_is_float(t))
		v.f = round_float(v.f + 0.25 * dir, t);
	else
		v.i = wrap_int((int64_t)((uint64_t)v.i + (uint64_t)(int64_t)dir), t);
	return v;
}

/* Make `X[t] op v` true by writing X[t] (op a comparison); for
 * `X[t] == T.undef()` make the cell readable. */
static int repair_cell(Interp *in, BinOp op, const Expr *load, const Expr *value)
{
	int64_t ix[MAX_DIMS], off;
	BufState *bs = in_access_cell(in, load->u.load.buf, load->u.load.nidx,
				      load->u.load.idx, "load", load->span, ix, &off);
	if (!bs)
		return -1;
	if (value->kind == EX_UNDEF) {
		if (op != OP_EQ)
			return 0;
		if (bs->cell[off] == CELL_UNINIT)
			bs->data[off] = in_undef_value(in, bs->buf->dtype);
		bs->cell[off] = CELL_INIT;
		return 1;
	}
	TVal x;
	if (!in_eval_in_assume(in, value, &x))
		return in->status == RUN_ASSUME_FAILED ? (clear_failure(in), 0) : -1;
	Value v;
	if (!in_convert(x.v, value->dtype, bs->buf->dtype, &v))
		return 0;
	bs->data[off] = satisfying_value(op, v, bs->buf->dtype);
	bs->cell[off] = CELL_INIT;
	return 1;
}

/* Make a false fact true by writing input cells: `c or X[t] == v` (any
 * nesting of `or` and `and` of such; `!=`, `<`, `<=`, `>`, `>=` too).
 * 1 true, 0 cannot, -1 error. */
static int repair_fact(Interp *in, const Expr *e)
{
	int t = fact_truth(in, e);
	if (t != 0 || e->kind != EX_BIN)
		return t;
	const Expr *a = e->u.bin.a, *b = e->u.bin.b;
	BinOp op = e->u.bin.op;
	switch (op) {
	case OP_OR:
		/* the cell equation usually comes last: `c or X[t] == v` */
		t = repair_fact(in, b);
		return t != 0 ? t : repair_fact(in, a);
	case OP_AND:
		t = repair_fact(in, a);
		if (t <= 0)
			return t;
		t = repair_fact(in, b);
		return t <= 0 ? t : fact_truth(in, e);
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		if (a->kind == EX_LOAD)
			t = repair_cell(in, op, a, b);
		else if (b->kind == EX_LOAD)
			t = repair_cell(in, binop_mirror(op), b, a);
		else
			return 0;
		return t <= 0 ? t : fact_truth(in, e);
	case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_FLOORDIV:
	case OP_FLOORMOD: case OP_MIN: case OP_MAX: case OP_COUNT:
		return 0;
	}
	return 0;
}

static bool exec_assume(Interp *in, const Stmt *s)
{
	const Expr *e = s->u.expr;
	if (in->fact_mode == FACTS_REPAIR)
		return repair_fact(in, e) >= 0;
	bool holds = false;
	if (!in_eval_fact(in, e, &holds))
		return false;
	return holds || in_assume_failed(in, s);
}

bool in_assume_failed(Interp *in, const Stmt *s)
{
	return in_fail(in, RUN_ASSUME_FAILED, s->span, "%s does not hold%s",
		       fact_text(in, s), loop_context(in));
}

static bool exec_let(Interp *in, const Stmt *s)
{
	SavedVar old;
	const Var *v = s->u.let.var;
	if (!in_enter_let(in, v, s->u.let.value, s->span, &old))
		return false;
	bool ok = exec(in, s->u.let.body);
	in_unbind_var(in, v, &old);
	return ok;
}

bool in_exec(Interp *in, const Stmt *s)
{
	return exec(in, s);
}

static bool exec(Interp *in, const Stmt *s)
{
	TVal x;
	if (!step(in, s->span))
		return false;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (!exec(in, s->u.seq.items[i]))
				return false;
		return true;
	case ST_FOR:
		return exec_for(in, s);
	case ST_IF:
		in->counts.branches++;
		if (!in_eval(in, s->u.cond.cond, &x))
			return false;
		if (truth(x.v, s->u.cond.cond->dtype))
			return exec(in, s->u.cond.then_s);
		return !s->u.cond.else_s || exec(in, s->u.cond.else_s);
	case ST_STORE:
		return exec_store(in, s);
	case ST_ASSUME:
		return exec_assume(in, s);
	case ST_EVAL:
		return in_eval(in, s->u.expr, &x);
	case ST_ALLOC:
		return exec_alloc(in, s);
	case ST_BLOCK:
		return exec(in, s->u.block.body);
	case ST_LET:
		return exec_let(in, s);
	case ST_PASS:
		return true;
	case ST_COUNT:
		break;
	}
	return in_fail(in, RUN_UB, s->span, "internal: unknown statement kind %d",
		       (int)s->kind);
}

/* ---------- binding a function's parameters ---------- */

/* Bind f's scalar params to `scalars` (in parameter order), its handle
 * vars to 0, and its buffer params to st's buffers (in order). */
static bool bind_params(Interp *in, const Func *f, const Value *scalars,
			State *st)
{
	SavedVar old;
	int ks = 0, kb = 0;
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR) {
			if (!in_bind_var(in, p->var, scalars[ks++], &old))
				return false;
			continue;
		}
		if (p->var && !in_bind_var(in, p->var, (Value){.i = 0}, &old))
			return false;
		if (!p->buf || !st)
			continue;
		if (kb >= st->nbufs)
			return in_fail(in, RUN_UB, f->span,
				       "internal: the state has fewer buffers than %s",
				       f->name);
		BufState *bs = &st->bufs[kb++];
		if (bs->ndim != p->buf->ndim)
			return in_fail(in, RUN_UB, f->span,
				       "internal: state buffer %s does not match parameter %s",
				       bs->buf->name, p->buf->name);
		if (!push_buffer(in, p->buf, bs))
			return false;
	}
	return true;
}

static int count_params(const Func *f, ParamKind k)
{
	int n = 0;
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		n += k == PARAM_SCALAR ? p->kind == PARAM_SCALAR
				       : p->kind != PARAM_SCALAR && p->buf;
	}
	return n;
}

static void fill_result(const Interp *in, InterpResult *r)
{
	if (!r)
		return;
	r->status = in->failed ? in->status : RUN_OK;
	r->message = in->failed ? in->message : NULL;
	r->span = in->failed ? in->span : (Span){0};
	r->counts = in->counts;
	r->steps = in->steps;
}

/* The engine interp_run uses: the compiled form, or the tree walk when
 * the environment says VS_INTERP=tree (read once). */
static InterpEngine default_engine(void)
{
	static int engine = -1;
	if (engine < 0) {
		const char *e = getenv("VS_INTERP");
		engine = e && strcmp(e, "tree") == 0 ? INTERP_TREE : INTERP_COMPILED;
	}
	return (InterpEngine)engine;
}

RunStatus interp_run(const Func *f, State *st, uint64_t step_limit,
		     InterpResult *r)
{
	return interp_run_engine(f, st, step_limit, default_engine(), r);
}

RunStatus interp_run_engine(const Func *f, State *st, uint64_t step_limit,
			    InterpEngine engine, InterpResult *r)
{
	Interp in;
	interp_init(&in, st->arena, step_limit);
	if (count_params(f, PARAM_SCALAR) != st->nscalars ||
	    count_params(f, PARAM_BUFFER) != st->nbufs)
		in_fail(&in, RUN_UB, f->span,
			"internal: the state does not match the parameters of %s",
			f->name);
	else if (bind_params(&in, f, st->scalars, st)) {
		switch (engine) {
		case INTERP_COMPILED:
			in_run_compiled(&in, f);
			break;
		case INTERP_TREE:
			exec(&in, f->body);
			break;
		}
	}
	fill_result(&in, r);
	RunStatus s = in.failed ? in.status : RUN_OK;
	interp_destroy(&in);
	return s;
}

/* ---------- states ---------- */

/* f's scalar arguments (int64, in parameter order; 0 when scalars is
 * NULL) as values of their parameters' dtypes; vars (may be NULL) gets
 * the parameters' Vars. */
static void scalar_values(const Func *f, const int64_t *scalars, Value *out,
			  Var **vars)
{
	int k = 0;
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind != PARAM_SCALAR)
			continue;
		if (vars)
			vars[k] = p->var;
		in_convert((Value){.i = scalars ? scalars[k] : 0}, DT_INT64,
			p->var->dtype, &out[k]);
		k++;
	}
}

State *state_new(Arena *a, const Func *f, const int64_t *scalars, DiagList *d)
{
	State *st = arena_alloc(a, sizeof *st);
	st->func = f;
	st->arena = a;
	st->nscalars = count_params(f, PARAM_SCALAR);
	st->nbufs = count_params(f, PARAM_BUFFER);
	st->scalar_vars = arena_alloc(a, sizeof(Var *) * (size_t)(st->nscalars + 1));
	st->scalars = arena_alloc(a, sizeof(Value) * (size_t)(st->nscalars + 1));
	st->bufs = arena_alloc(a, sizeof(BufState) * (size_t)(st->nbufs + 1));
	scalar_values(f, scalars, st->scalars, st->scalar_vars);
	Interp in;
	interp_init(&in, a, 0);
	bool ok = bind_params(&in, f, st->scalars, NULL);
	int kb = 0;
	for (int i = 0; ok && i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR || !p->buf)
			continue;
		BufState *bs = &st->bufs[kb++];
		bs->shape = arena_alloc(a, sizeof(int64_t) * (size_t)(p->buf->ndim + 1));
		if (!(ok = eval_shape(&in, p->buf, bs)))
			break;
		bs->data = arena_alloc(a, sizeof(Value) * (size_t)(bs->size + 1));
		bs->cell = arena_alloc(a, (size_t)(bs->size + 1));
	}
	if (!ok)
		diag_add(d, DIAG_ERROR, in.span, "cannot make a state for %s: %s",
			 f->name, in.message);
	interp_destroy(&in);
	return ok ? st : NULL;
}

/* ---------- entry facts ---------- */

static bool stmt_has_store(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (stmt_has_store(s->u.seq.items[i]))
				return true;
		return false;
	case ST_FOR:
		return stmt_has_store(s->u.loop.body);
	case ST_IF:
		return stmt_has_store(s->u.cond.then_s) ||
		       (s->u.cond.else_s && stmt_has_store(s->u.cond.else_s));
	case ST_STORE:
		return true;
	case ST_ALLOC:
		return stmt_has_store(s->u.alloc.body);
	case ST_BLOCK:
		return stmt_has_store(s->u.block.body);
	case ST_LET:
		return stmt_has_store(s->u.let.body);
	case ST_ASSUME:
	case ST_EVAL:
	case ST_PASS:
		return false;
	case ST_COUNT:
		break;
	}
	return true;
}

/* Run the entry region of a body: the statements before the first store
 * (descending into sequences, blocks, allocations and lets). *stopped is
 * set at the first statement that contains a store. */
static bool run_entry(Interp *in, const Stmt *s, bool *stopped)
{
	if (!stmt_has_store(s))
		return exec(in, s);
	SavedVar old;
	bool ok;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n && !*stopped; i++)
			if (!run_entry(in, s->u.seq.items[i], stopped))
				return false;
		return true;
	case ST_BLOCK:
		return run_entry(in, s->u.block.body, stopped);
	case ST_LET:
		if (!in_enter_let(in, s->u.let.var, s->u.let.value, s->span, &old))
			return false;
		ok = run_entry(in, s->u.let.body, stopped);
		in_unbind_var(in, s->u.let.var, &old);
		return ok;
	case ST_ALLOC: {
		int64_t shape[MAX_DIMS];
		BufState bs = {.shape = shape};
		if (!in_open_local(in, s, &bs))
			return false;
		ok = run_entry(in, s->u.alloc.body, stopped);
		in_close_local(in, &bs);
		return ok;
	}
	case ST_FOR: case ST_IF: case ST_STORE: case ST_ASSUME: case ST_EVAL:
	case ST_PASS:
		*stopped = true;
		return true;
	case ST_COUNT:
		break;
	}
	*stopped = true;
	return true;
}

/* Padding cells of a transformed parameter buffer hold no input value
 * (semantics.md 1): they stay uninitialised unless a fact covers them. */
static bool clear_padding(Interp *in, BufState *bs)
{
	const Layout *lay = bs->buf->layout;
	const Expr *pred = lay ? (lay->all_padding ? lay->all_padding : lay->pad_predicate) : NULL;
	if (!pred || !lay->inv_vars || bs->ndim > MAX_DIMS)
		return true;
	int64_t ix[MAX_DIMS] = {0};
	for (int64_t off = 0; off < bs->size; off++) {
		int64_t rest = off;
		for (int k = bs->ndim - 1; k >= 0; k--) {
			ix[k] = rest % bs->shape[k];
			rest /= bs->shape[k];
		}
		bool pad;
		if (!in_is_padding(in, lay, pred, bs->ndim, ix, &pad))
			return false;
		if (pad)
			bs->cell[off] = CELL_UNINIT;
	}
	return true;
}

RunStatus interp_prepare_input(const Func *f, State *st, InterpResult *r)
{
	Interp in;
	interp_init(&in, st->arena, 0);
	bool ok = bind_params(&in, f, st->scalars, st);
	for (int i = 0; ok && i < st->nbufs; i++)
		ok = clear_padding(&in, &st->bufs[i]);
	/* repairing one fact may break an earlier one: a few passes */
	in.fact_mode = FACTS_REPAIR;
	for (int pass = 0; ok && pass < REPAIR_PASSES; pass++) {
		bool stopped = false;
		ok = run_entry(&in, f->body, &stopped);
	}
	if (ok) {
		bool stopped = false;
		in.fact_mode = FACTS_CHECK;
		run_entry(&in, f->body, &stopped);
	}
	fill_result(&in, r);
	RunStatus s = in.failed ? in.status : RUN_OK;
	interp_destroy(&in);
	return s;
}

/* Check the entry facts that mention only scalar params, top level only
 * (not under loops or conditions). */
static bool scalar_facts(Interp *in, const Stmt *s, bool *stopped)
{
	SavedVar old;
	TVal x;
	bool holds, ok;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n && !*stopped; i++)
			if (!scalar_facts(in, s->u.seq.items[i], stopped))
				return false;
		return true;
	case ST_BLOCK:
		return scalar_facts(in, s->u.block.body, stopped);
	case ST_ALLOC:
		return scalar_facts(in, s->u.alloc.body, stopped);
	case ST_LET:
		in->not_scalar = false;
		if (!in_eval(in, s->u.let.value, &x)) {
			if (!in->not_scalar)
				return false;
			clear_failure(in); /* its uses are not scalar-only */
			return scalar_facts(in, s->u.let.body, stopped);
		}
		if (!in_bind_let(in, s->u.let.var, s->u.let.value, x, s->span, &old))
			return false;
		ok = scalar_facts(in, s->u.let.body, stopped);
		in_unbind_var(in, s->u.let.var, &old);
		return ok;
	case ST_ASSUME:
		in->not_scalar = false;
		if (!in_eval_fact(in, s->u.expr, &holds)) {
			if (!in->not_scalar)
				return false;
			clear_failure(in);
			return true;
		}
		return holds || in_fail(in, RUN_ASSUME_FAILED, s->span,
					"%s does not hold", fact_text(in, s));
	case ST_FOR:
	case ST_IF:
	case ST_STORE:
		*stopped = stmt_has_store(s);
		return true;
	case ST_EVAL:
	case ST_PASS:
		return true;
	case ST_COUNT:
		break;
	}
	return true;
}

bool interp_scalar_facts_hold(const Func *f, const int64_t *scalars, Arena *a,
			      InterpResult *r)
{
	Interp in;
	interp_init(&in, a, 0);
	in.probe = true;
	int n = count_params(f, PARAM_SCALAR);
	Value *vals = calloc((size_t)n + 1, sizeof(Value));
	bool ok = vals != NULL;
	if (ok)
		scalar_values(f, scalars, vals, NULL);
	bool stopped = false;
	if (ok && bind_params(&in, f, vals, NULL))
		scalar_facts(&in, f->body, &stopped);
	free(vals);
	fill_result(&in, r);
	ok = ok && !in.failed;
	interp_destroy(&in);
	return ok;
}

/* ---------- layouts ---------- */

/* One step: t = lay->map(x), nout physical indices. */
static bool apply_step(Interp *in, const Layout *lay, int nout, const int64_t *x,
		       int64_t *t)
{
	SavedVar saved[MAX_DIMS];
	bool ok = lay->nvars <= MAX_DIMS;
	int bound = ok ? in_bind_index_vars(in, lay->vars, lay->nvars, x, saved) : 0;
	ok = ok && bound == lay->nvars;
	for (int k = 0; ok && k < nout; k++) {
		TVal v;
		ok = in_eval(in, lay->map[k], &v) && !v.undef;
		if (ok)
			t[k] = v.v.i;
	}
	in_unbind_index_vars(in, lay->vars, bound, saved);
	return ok;
}

bool layout_chain_apply(const Buffer *phys, const Buffer *logical, const int64_t *x,
			int64_t *t, const State *env)
{
	const Layout *chain[MAX_DIMS];
	int n = 0;
	const Buffer *b = phys;
	while (b != logical && b->layout && n < MAX_DIMS) {
		chain[n++] = b->layout;
		b = b->layout->logical;
	}
	if (b != logical)
		return false;
	Arena scratch;
	arena_init(&scratch);
	Interp in;
	interp_init(&in, &scratch, 0);
	int64_t cur[MAX_DIMS], next[MAX_DIMS];
	bool ok = logical->ndim <= MAX_DIMS;
	/* a map may name scalar parameters ((i + n) // 4): bind env's */
	for (int k = 0; ok && env && k < env->nscalars; k++) {
		SavedVar old;
		ok = in_bind_var(&in, env->scalar_vars[k], env->scalars[k], &old);
	}
	for (int k = 0; ok && k < logical->ndim; k++)
		cur[k] = x[k];
	for (int i = n - 1; ok && i >= 0; i--) {
		const Buffer *out = i ? chain[i - 1]->logical : phys;
		ok = out->ndim <= MAX_DIMS && apply_step(&in, chain[i], out->ndim, cur, next);
		for (int k = 0; ok && k < out->ndim; k++)
			cur[k] = next[k];
	}
	for (int k = 0; ok && k < phys->ndim; k++)
		t[k] = cur[k];
	interp_destroy(&in);
	arena_free(&scratch);
	return ok;
}

bool layout_chain_has(const Buffer *phys, const Buffer *logical)
{
	for (const Buffer *b = phys; b; b = b->layout ? b->layout->logical : NULL)
		if (b == logical)
			return true;
	return false;
}
