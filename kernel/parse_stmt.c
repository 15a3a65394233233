/* kernel/parse_stmt.c — statements: suites (an indented block, or simple
 * statements on the header's line), for loops (range, T.serial, T.grid ...),
 * if/elif/else, `with T.block`, buffer stores, lets, T.assume and
 * T.evaluate; a let or allocation takes the rest of its list as its body. */
#include "kernel/parse_int.h"

#include <string.h>

#define MAX_BINDERS 10000   /* lets/allocs in one list: each nests the rest */

/* A let or alloc statement whose body (the rest of its list) is filled in
 * when the list is complete. */
static bool is_pending_binder(const Stmt *s)
{
	return (s->kind == ST_LET && !s->u.let.body) ||
	       (s->kind == ST_ALLOC && !s->u.alloc.body);
}

typedef struct StmtList {
	int n, cap;
	Stmt **items;
} StmtList;

static void list_push(Parser *p, StmtList *l, Stmt *s)
{
	if (p->blk && !p->in_iter_decl && !p->blk->body_started) {
		p->blk->body_started = true;
		p->blk->first_stmt = s->span;
	}
	l->items = grow(p->a, l->items, l->n, &l->cap, 8, sizeof(Stmt *));
	l->items[l->n++] = s;
}

/* items[0, n) followed by `carry` (if any) as one statement: a single
 * statement stands alone, several make a ST_SEQ, none an empty ST_SEQ. */
static Stmt *seq_of(Parser *p, Stmt **items, int n, Stmt *carry, Span sp)
{
	int total = n + (carry ? 1 : 0);
	if (total == 0) /* e.g. a block of docstrings only: same as `pass` */
		return ir_pass(p->a, sp);
	if (total == 1)
		return carry ? carry : items[0];
	Stmt **all = arena_alloc(p->a, sizeof(Stmt *) * (size_t)(total + 1));
	for (int i = 0; i < n; i++)
		all[i] = items[i];
	if (carry)
		all[n] = carry;
	return ir_seq(p->a, total, all, total ? all[0]->span : sp);
}

/* Close a statement list: each let/alloc takes the rest as its body. */
static Stmt *build_list(Parser *p, StmtList *l, Span sp)
{
	Stmt *carry = NULL;
	int hi = l->n, nbinders = 0;
	for (int i = 0; i < l->n; i++)
		if (is_pending_binder(l->items[i]) && ++nbinders > MAX_BINDERS) {
			ps_error_at(p, l->items[i]->span, "too many let bindings and "
				    "allocations in one block (at most %d)", MAX_BINDERS);
			return NULL;
		}
	for (int i = l->n - 1; i >= 0; i--) {
		Stmt *s = l->items[i];
		if (!is_pending_binder(s))
			continue;
		Stmt *body = seq_of(p, l->items + i + 1, hi - i - 1, carry, s->span);
		if (s->kind == ST_LET)
			s->u.let.body = body;
		else
			s->u.alloc.body = body;
		carry = s;
		hi = i;
	}
	return seq_of(p, l->items, hi, carry, sp);
}

static bool parse_statement(Parser *p, StmtList *out);

/* Statements up to the DEDENT that closes the block (or EOF at top). */
static Stmt *parse_stmt_list(Parser *p, Span sp)
{
	StmtList l = {0};
	int mark = p->nbinds;
	while (!p->failed && !at_kind(p, TK_DEDENT) && !at_kind(p, TK_EOF))
		parse_statement(p, &l);
	p->nbinds = mark;
	if (p->failed)
		return NULL;
	return build_list(p, &l, sp);
}

/* After a header's ':' : an indented block, or simple statements on the
 * same line. */
Stmt *parse_suite(Parser *p, const char *what, bool func_top)
{
	Token *colon = prev(p);
	bool top = p->in_func_top;
	p->in_func_top = func_top;
	BlockCtx *outer_blk = p->blk;
	p->blk = p->blk_next; /* the header of the block this suite is the body of */
	p->blk_next = NULL;
	Stmt *s = NULL;
	if (at_kind(p, TK_NEWLINE)) {
		next(p);
		if (!at_kind(p, TK_INDENT)) {
			ps_error_at(p, peek(p)->span, "expected an indented block after %s",
				    what);
		} else {
			next(p);
			s = parse_stmt_list(p, colon->span);
			if (s && !at_kind(p, TK_DEDENT))
				ps_error_at(p, peek(p)->span, "expected dedent, found %s",
					    found(p));
			if (!p->failed)
				next(p);
		}
	} else {
		StmtList l = {0};
		int mark = p->nbinds;
		Token *t = peek(p);
		if (tok_is(t, "for") || tok_is(t, "if") || tok_is(t, "with"))
			ps_error_at(p, t->span, "expected an indented block after %s",
				    what);
		else
			parse_statement(p, &l);
		p->nbinds = mark;
		if (!p->failed)
			s = build_list(p, &l, colon->span);
	}
	p->in_func_top = top;
	p->blk = outer_blk;
	return p->failed ? NULL : s;
}

static bool parse_for_names(Parser *p, Token **names, int *n, int max)
{
	*n = 0;
	bool paren = accept(p, "(");
	do {
		if (*n == max) {
			ps_error_at(p, peek(p)->span, "too many loop variables");
			return false;
		}
		Token *t = peek(p);
		if (!ps_expect_name(p, "a loop variable name"))
			return false;
		names[(*n)++] = t;
	} while (accept(p, ",") && !(paren && tok_is(peek(p), ")")));
	if (paren && !ps_expect(p, ")", "after loop variables"))
		return false;
	return true;
}

#define MAX_GRID 32

/* What one `for` header says: T.grid makes several loops. */
typedef struct LoopHeader {
	Token *names[MAX_GRID];
	int n;
	ForKind kind;
	bool grid;
	const char *callee; /* "range", "T.serial", ... for messages */
	Expr *mins[MAX_GRID], *exts[MAX_GRID];
	Span span;
} LoopHeader;

/* After `in`: range, or T.serial / T.grid / T.parallel / T.vectorized /
 * T.unroll. */
static bool parse_loop_kind(Parser *p, LoopHeader *h)
{
	static const struct { const char *name; ForKind kind; bool grid; } kinds[] = {
		{"serial", FOR_SERIAL, false}, {"parallel", FOR_PARALLEL, false},
		{"vectorized", FOR_VECTORIZED, false}, {"unroll", FOR_UNROLLED, false},
		{"grid", FOR_SERIAL, true},
	};
	Token *it = peek(p);
	h->kind = FOR_SERIAL;
	h->grid = false;
	if (tok_is(it, "range")) {
		next(p);
		h->callee = "range";
		return true;
	}
	if (!ps_at_t_name(p, NULL)) {
		ps_error_at(p, it->span, "expected T.serial(...), T.grid(...) or "
			    "range(...) after 'in', found %s", found(p));
		return false;
	}
	next(p);
	next(p);
	const char *fn = next(p)->text;
	h->callee = arena_printf(p->a, "T.%s", fn);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(fn, kinds[i].name) == 0) {
			h->kind = kinds[i].kind;
			h->grid = kinds[i].grid;
			return true;
		}
	if (strcmp(fn, "thread_binding") == 0) {
		ps_error_at(p, ps_span_from(p, it), "T.thread_binding is not supported on "
			    "CPU (GPU thread binding; use T.parallel)");
		return false;
	}
	ps_error_at(p, ps_span_from(p, it), "unknown loop kind '%s' (expected "
		    "T.serial, T.grid, T.parallel, T.vectorized, T.unroll "
		    "or range)", h->callee);
	return false;
}

/* T.grid(e1, ..., en): one loop from 0 per extent. */
static bool grid_loops(Parser *p, Args *args, LoopHeader *h)
{
	static const char *const kws[] = {"annotations", NULL};
	if (!ps_check_args(p, args, 1, MAX_GRID, kws))
		return false;
	args->n -= ps_arg(args, -1, "annotations") != NULL; /* last: keywords follow */
	if (args->n != h->n) {
		ps_error_at(p, h->span, "T.grid has %d extent%s but %d loop "
			    "variable%s", args->n, args->n == 1 ? "" : "s", h->n,
			    h->n == 1 ? "" : "s");
		return false;
	}
	for (int k = 0; k < h->n; k++) {
		h->exts[k] = ps_finish_expr(ps_val_expr(p, &args->v[k], "a loop extent"));
		if (!ps_check_int_expr(p, h->exts[k], "a loop extent"))
			return false;
		h->mins[k] = ir_int(p->a, 0, h->exts[k]->dtype, h->exts[k]->span);
	}
	return true;
}

/* range(ext), range(lo, hi), T.serial(...) and the others: one loop; the
 * extent of [lo, hi) folds when both are literals and it fits. */
static bool range_loop(Parser *p, Args *args, LoopHeader *h)
{
	if (h->n != 1) {
		ps_error_at(p, h->names[1]->span, "%s binds one loop variable; use "
			    "T.grid for several", h->callee);
		return false;
	}
	/* loop annotations are hints to TVM's lowering; read and dropped */
	static const char *const kws[] = {"annotations", NULL};
	if (!ps_check_args(p, args, 1, 2, kws))
		return false;
	args->n -= ps_arg(args, -1, "annotations") != NULL;
	Expr *lo = ps_finish_expr(ps_val_expr(p, &args->v[0], "a loop bound"));
	if (!ps_check_int_expr(p, lo, "a loop bound"))
		return false;
	if (args->n == 1) {
		h->mins[0] = ir_int(p->a, 0, lo->dtype, lo->span);
		h->exts[0] = lo;
		return true;
	}
	Expr *hi = ps_finish_expr(ps_val_expr(p, &args->v[1], "a loop bound"));
	if (!ps_check_int_expr(p, hi, "a loop bound") || !ps_unify(p, &lo, &hi))
		return false;
	h->mins[0] = lo;
	int64_t ext;
	if (lo->kind == EX_INT && hi->kind == EX_INT &&
	    !__builtin_sub_overflow(hi->u.ival, lo->u.ival, &ext) &&
	    ps_int_fits(ext, lo->dtype))
		h->exts[0] = ir_int(p->a, ext, lo->dtype, hi->span);
	else if (hi->kind == EX_BIN && hi->u.bin.op == OP_ADD &&
		 ir_expr_equal(hi->u.bin.a, lo)) /* range(x, x + n): what the printer writes */
		h->exts[0] = hi->u.bin.b;
	else
		h->exts[0] = ps_make_bin(p, OP_SUB, hi, lo, hi->span);
	return true;
}

/* The loop variables in scope for the suite, then the nest of loops
 * around it, innermost last. */
static Stmt *loop_nest(Parser *p, const LoopHeader *h)
{
	int mark = p->nbinds, lmark = p->nloops;
	Var *vars[MAX_GRID];
	for (int k = 0; k < h->n; k++) {
		vars[k] = ir_var(p->a, h->names[k]->text, h->exts[k]->dtype,
				 h->names[k]->span);
		ps_bind(p, vars[k]->name, vars[k], NULL);
		p->loops = grow(p->a, p->loops, p->nloops, &p->caploops, 8,
				sizeof(LoopScope));
		p->loops[p->nloops++] = (LoopScope){vars[k], h->mins[k], h->exts[k]};
	}
	Stmt *body = parse_suite(p, "for header", false);
	p->nbinds = mark;
	p->nloops = lmark;
	if (!body)
		return NULL;
	for (int k = h->n - 1; k >= 0; k--)
		body = ir_for(p->a, vars[k], h->mins[k], h->exts[k], h->kind, body,
			      h->span);
	return body;
}

static Stmt *parse_for(Parser *p)
{
	Token *first = next(p); /* for */
	LoopHeader h;
	if (!parse_for_names(p, h.names, &h.n, MAX_GRID) ||
	    !ps_expect(p, "in", "after loop variables") || !parse_loop_kind(p, &h))
		return NULL;
	if (!ps_expect(p, "(", arena_printf(p->a, "after %s", h.callee)))
		return NULL;
	Args args;
	if (!parse_args(p, h.callee, ")", &args) ||
	    !ps_expect(p, ":", "after for header"))
		return NULL;
	h.span = ps_span_from(p, first);
	bool ok = h.grid ? grid_loops(p, &args, &h) : range_loop(p, &args, &h);
	return ok ? loop_nest(p, &h) : NULL;
}

/* One `if` or `elif` header and its suite. */
typedef struct IfBranch {
	Expr *cond;
	Stmt *then_s;
	Span header;
} IfBranch;

/* One branch; the keyword is at peek. */
static bool parse_if_branch(Parser *p, IfBranch *br)
{
	Token *first = next(p);
	Expr *c = ps_finish_expr(parse_expr(p));
	if (!c || !ps_check_bool_expr(p, c, "an if condition") ||
	    !ps_expect(p, ":", "after if condition"))
		return false;
	br->header = ps_span_from(p, first);
	br->cond = c;
	p->nguards++;
	br->then_s = parse_suite(p, "if", false);
	p->nguards--;
	return br->then_s != NULL;
}

/* if / elif ... / else, built from the last branch backwards so that a
 * long elif chain does not recurse. */
static Stmt *parse_if(Parser *p)
{
	int n = 0, cap = 4;
	IfBranch *brs = arena_alloc(p->a, sizeof(IfBranch) * (size_t)cap);
	do {
		brs = grow(p->a, brs, n, &cap, 4, sizeof(IfBranch));
		if (!parse_if_branch(p, &brs[n]))
			return NULL;
		n++;
	} while (tok_is(peek(p), "elif"));
	Stmt *else_s = NULL;
	if (tok_is(peek(p), "else")) {
		next(p);
		if (!ps_expect(p, ":", "after else"))
			return NULL;
		p->nguards++;
		else_s = parse_suite(p, "else", false);
		p->nguards--;
		if (!else_s)
			return NULL;
	}
	for (int k = n - 1; k >= 0; k--)
		else_s = ir_if(p->a, brs[k].cond, brs[k].then_s, else_s, brs[k].header);
	return else_s;
}

/* `with T.block(...)`, `with T.init()`; *none when the statement made
 * nothing (an init goes to the block's header). */
static Stmt *parse_with(Parser *p, bool *none)
{
	Token *first = next(p); /* with */
	*none = false;
	if (ps_at_t_name(p, "block"))
		return ps_parse_block(p, first);
	if (ps_at_t_name(p, "init")) {
		*none = true;
		return NULL;
	}
	if (ps_at_t_name(p, "launch_thread") || ps_at_t_name(p, "attr")) {
		ps_error_at(p, ps_span_from(p, first), "T.%s is not supported on CPU "
			    "(GPU thread binding)", peek_at(p, 2)->text);
		return NULL;
	}
	ps_error_at(p, peek(p)->span, "expected T.block(\"name\") or T.init() after "
		    "'with', found %s", found(p));
	return NULL;
}

/* `=`, or the operator of `+=`, `-=`, `*=` (*aug set). */
static bool parse_store_op(Parser *p, BinOp *op, bool *aug)
{
	static const char *const s[] = {"+=", "-=", "*=", NULL};
	static const BinOp ops[] = {OP_ADD, OP_SUB, OP_MUL};
	*aug = ps_find_op(peek(p), s, ops, op);
	if (!*aug && !tok_is(peek(p), "=")) {
		ps_error_at(p, peek(p)->span, "expected '=' or '+=' after buffer store "
			    "target, found %s", found(p));
		return false;
	}
	next(p);
	return true;
}

/* The value stored into buffer `name` (b) made of b's dtype: a T.undef()
 * takes it, a literal must fit it, integers convert among themselves and
 * anything converts to a float buffer; the rest needs a T.cast. */
static Expr *store_value(Parser *p, Buffer *b, const char *name, Expr *value)
{
	if (value->dtype == DT_VOID)
		ps_retype_void(value, b->dtype);
	if (value->kind == EX_INT && dtype_is_int(b->dtype) &&
	    value->dtype != DT_BOOL && !ps_int_fits(value->u.ival, b->dtype)) {
		ps_error_at(p, value->span, "%lld does not fit in %s buffer '%s'",
			    (long long)value->u.ival, dtype_name(b->dtype), name);
		return NULL;
	}
	if (value->dtype == b->dtype)
		return value;
	bool literal_ok = ps_is_literal(value) && ps_literal_as(p, value, b->dtype);
	bool widening = dtype_is_float(b->dtype) || b->dtype == value->dtype ||
			(dtype_is_int(b->dtype) && dtype_is_int(value->dtype));
	if (!literal_ok && !widening) {
		ps_error_at(p, value->span, "cannot store a %s value into %s "
			    "buffer '%s' (use T.cast)", dtype_name(value->dtype),
			    dtype_name(b->dtype), name);
		return NULL;
	}
	return ps_convert(p, value, b->dtype);
}

/* `X[i, j] = e`, `X[i] += e` (and -=, *=): the target name is at peek. */
static Stmt *parse_store(Parser *p)
{
	Token *first = next(p);
	const char *name = first->text;
	Var *v;
	Buffer *b;
	if (!ps_lookup(p, name, &v, &b)) {
		ps_error_at(p, first->span, "unknown buffer '%s'", name);
		return NULL;
	}
	if (!b) {
		ps_error_at(p, first->span, "cannot store to '%s': not a buffer", name);
		return NULL;
	}
	Expr *target = parse_load(p, b, first);
	if (!target)
		return NULL;
	BinOp op;
	bool aug;
	if (!parse_store_op(p, &op, &aug))
		return NULL;
	Expr *value = parse_expr(p);
	if (!value)
		return NULL;
	if (aug)
		value = ps_make_bin(p, op, target, value, value->span);
	if (!value || ps_is_handle(p, value))
		return NULL;
	value = store_value(p, b, name, value);
	if (!value)
		return NULL;
	return ir_store(p->a, target->u.load.buf, target->u.load.nidx, target->u.load.idx, value,
			ps_span_from(p, first));
}

/* `x = e` (a let), `x: T.int32 = e`, or an allocation / match_buffer. */
static Stmt *parse_assign(Parser *p, StmtList *out, bool *done)
{
	Token *first = next(p);
	const char *name = first->text;
	DType ann = DT_VOID;
	*done = false;
	if (accept(p, ":")) {
		Token *tt = peek(p);
		if (!ps_at_t_name(p, NULL)) {
			ps_error_at(p, tt->span, "expected a dtype such as T.int32, found %s",
				    found(p));
			return NULL;
		}
		p->pos += 3;
		if (!ps_dtype_from_string(p, prev(p)->text, ps_span_from(p, tt), &ann))
			return NULL;
	}
	if (!ps_expect(p, "=", "in assignment"))
		return NULL;
	if (ann == DT_VOID && ps_at_t_name(p, NULL) && tok_is(peek_at(p, 3), "(")) {
		const char *fn = peek_at(p, 2)->text;
		if (strcmp(fn, "alloc_buffer") == 0 || strcmp(fn, "decl_buffer") == 0 ||
		    strcmp(fn, "Buffer") == 0 || strcmp(fn, "allocate") == 0) {
			p->pos += 4;
			Stmt *s = strcmp(fn, "allocate") == 0
					  ? parse_allocate(p, first)
					  : parse_alloc(p, first, arena_printf(p->a, "T.%s", fn));
			if (s)
				list_push(p, out, s);
			*done = !p->failed;
			return s;
		}
		if (strcmp(fn, "allocate_const") == 0) {
			p->pos += 4;
			Stmt **inits;
			int ninit = 0;
			Stmt *s = parse_allocate_const(p, first, &inits, &ninit);
			if (s) {
				list_push(p, out, s);
				for (int k = 0; k < ninit; k++)
					list_push(p, out, inits[k]);
			}
			*done = !p->failed;
			return s;
		}
		if (strcmp(fn, "launch_thread") == 0 || strcmp(fn, "env_thread") == 0) {
			ps_error_at(p, peek(p)->span, "T.%s is not supported on CPU (GPU "
				    "thread binding)", fn);
			return NULL;
		}
		DType ft;
		if ((strcmp(fn, "int32") == 0 || strcmp(fn, "int64") == 0) &&
		    tok_is(peek_at(p, 4), ")") && dtype_from_name(fn, &ft) && p->in_func_top) {
			p->pos += 5;
			*done = parse_free_var(p, first, ft);
			return NULL;
		}
		if (tok_is(peek_at(p, 4), ")") && dtype_from_name(fn, &ft) && ft != DT_VOID &&
		    ft != DT_HANDLE) { /* (at the top, int32 / int64 are free size vars) */
			/* `x = T.float32()` in a body: x is declared for a T.Let
			 * that binds it (the verifier rejects any other use) */
			p->pos += 5;
			Var *v = ir_var(p->a, first->text, ft, first->span);
			ps_bind(p, v->name, v, NULL);
			p->letdecl = grow(p->a, p->letdecl, p->nletdecl, &p->capletdecl, 4,
					  sizeof(Var *));
			p->letdecl[p->nletdecl++] = v;
			*done = true;
			return NULL;
		}
		if (strcmp(fn, "match_buffer") == 0) {
			p->pos += 4;
			*done = parse_match_buffer(p, first);
			return NULL;
		}
	}
	Expr *value = parse_expr(p);
	if (!value || ps_is_handle(p, value))
		return NULL;
	if (ann != DT_VOID) {
		if (value->dtype == DT_VOID)
			ps_retype_void(value, ann);
		value = ps_convert(p, value, ann);
	}
	ps_finish_expr(value);
	Var *v = ir_var(p->a, name, value->dtype, first->span);
	Stmt *s = ir_letstmt(p->a, v, value, NULL, ps_span_from(p, first));
	ps_bind(p, name, v, NULL);
	list_push(p, out, s);
	return s;
}

/* Ignored annotations: T.func_attr({...}). */
static bool is_ignored_call(const char *fn)
{
	return strcmp(fn, "func_attr") == 0;
}

/* `T.assume(c)`, `T.evaluate(e)`, ignored annotations. */
static Stmt *parse_t_stmt(Parser *p, bool *ignored)
{
	Token *first = peek(p);
	const char *fn = peek_at(p, 2)->text;
	*ignored = false;
	if (ps_is_block_header_call(fn) && tok_is(peek_at(p, 3), "(")) {
		*ignored = ps_block_header_call(p, fn);
		return NULL;
	}
	if (is_ignored_call(fn) && tok_is(peek_at(p, 3), "(")) {
		p->pos += 4;
		Args args;
		*ignored = parse_args(p, arena_printf(p->a, "T.%s", fn), ")", &args);
		return NULL;
	}
	bool assume = strcmp(fn, "assume") == 0;
	if (strcmp(fn, "launch_thread") == 0 || strcmp(fn, "env_thread") == 0) {
		ps_error_at(p, ps_span_from(p, first), "T.%s is not supported on CPU "
			    "(GPU thread binding)", fn);
		return NULL;
	}
	if (!assume && strcmp(fn, "evaluate") != 0 && ps_is_opaque_name(fn)) {
		/* TVM evaluates a call written as a statement: T.evaluate(call) */
		Expr *e = ps_finish_expr(parse_expr(p));
		return e ? ir_eval(p->a, e, ps_span_from(p, first)) : NULL;
	}
	if (!assume && strcmp(fn, "evaluate") != 0) {
		ps_error_at(p, first->span, "expected a statement, found an expression "
			    "(use T.evaluate(...) to evaluate it)");
		return NULL;
	}
	p->pos += 3;
	if (!ps_expect(p, "(", arena_printf(p->a, "after T.%s", fn)))
		return NULL;
	if (!assume && ps_at_t_name(p, "assume")) { /* T.evaluate(T.assume(c)) */
		Stmt *s = parse_t_stmt(p, ignored);
		return s && ps_expect(p, ")", "after T.evaluate(T.assume(...)") ? s : NULL;
	}
	Args args;
	if (!parse_args(p, arena_printf(p->a, "T.%s", fn), ")", &args) ||
	    !ps_check_args(p, &args, 1, 1, NULL))
		return NULL;
	Expr *e = ps_finish_expr(ps_val_expr(p, &args.v[0], "the argument"));
	if (!e)
		return NULL;
	if (assume) {
		if (!ps_check_bool_expr(p, e, "the argument of T.assume"))
			return NULL;
		return ir_assume(p->a, e, ps_span_from(p, first));
	}
	if (e->kind != EX_OPAQUE && ps_is_handle(p, e)) /* an opaque call may be evaluated for its effect */
		return NULL;
	return ir_eval(p->a, e, ps_span_from(p, first));
}

/* `a, b = T.int32(), T.int32()`: as many names as free-variable calls. */
static bool at_free_var_tuple(Parser *p)
{
	int k = 0, n = 0;
	while (peek_at(p, k)->kind == TK_NAME && tok_is(peek_at(p, k + 1), ",")) {
		k += 2;
		n++;
	}
	if (n == 0 || peek_at(p, k)->kind != TK_NAME || !tok_is(peek_at(p, k + 1), "="))
		return false;
	n++;
	k += 2;
	for (int i = 0; i < n; i++, k += 6) {
		const Token *fn = peek_at(p, k + 2);
		if (!tok_is(peek_at(p, k), "T") || !tok_is(peek_at(p, k + 1), ".") ||
		    !(tok_is(fn, "int32") || tok_is(fn, "int64")) ||
		    !tok_is(peek_at(p, k + 3), "(") || !tok_is(peek_at(p, k + 4), ")") ||
		    (i + 1 < n && !tok_is(peek_at(p, k + 5), ",")))
			return false;
	}
	return true;
}

/* `X[i] = e`, `x = e` and the other statements that start with a name;
 * *handled is false when the name starts none of them. */
static bool parse_name_stmt(Parser *p, StmtList *out, bool *handled)
{
	Token *t = peek(p), *n1 = peek_at(p, 1);
	*handled = true;
	if (at_free_var_tuple(p)) {
		/* `n, m = T.int64(), T.int64()` */
		Token *names[16];
		int n = 0;
		do
			names[n++] = next(p);
		while (n < 16 && accept(p, ","));
		next(p); /* = */
		for (int k = 0; k < n; k++) {
			DType ft;
			dtype_from_name(peek_at(p, 2)->text, &ft);
			p->pos += 5;
			if (!parse_free_var(p, names[k], ft))
				return false;
			if (k + 1 < n && !ps_expect(p, ",", "between the free variables"))
				return false;
		}
		return true;
	}
	if (ps_at_iter_decl(p)) {
		Stmt **lets;
		int n = ps_parse_iter_decl(p, &lets);
		p->in_iter_decl = true;
		for (int k = 0; k < n; k++)
			list_push(p, out, lets[k]);
		p->in_iter_decl = false;
		return n > 0;
	}
	if (tok_is(n1, "[")) {
		Stmt *s = parse_store(p);
		if (s)
			list_push(p, out, s);
		return s != NULL;
	}
	if (tok_is(n1, "=") || tok_is(n1, ":")) {
		bool done;
		return parse_assign(p, out, &done) || done;
	}
	if (!tok_is(n1, "+=") && !tok_is(n1, "-=") && !tok_is(n1, "*=")) {
		*handled = false;
		return false;
	}
	Var *v;
	Buffer *b;
	if (ps_lookup(p, t->text, &v, &b) && b)
		ps_error_at(p, n1->span, "expected indices: '%s[...] %s'",
			    t->text, n1->text);
	else
		ps_error_at(p, n1->span, "'%s' cannot update a variable; "
			    "only buffer elements can be assigned with it",
			    n1->text);
	return false;
}

/* One simple statement (no trailing newline). */
static bool parse_simple(Parser *p, StmtList *out)
{
	Token *t = peek(p);
	if (tok_is(t, "pass")) {
		next(p);
		list_push(p, out, ir_pass(p->a, t->span));
		return true;
	}
	if (t->kind == TK_STRING) { /* a docstring */
		next(p);
		return true;
	}
	if (ps_at_t_name(p, NULL)) {
		bool ignored;
		Stmt *s = parse_t_stmt(p, &ignored);
		if (s)
			list_push(p, out, s);
		return s || ignored;
	}
	if (t->kind == TK_NAME && !lex_is_keyword(t->text)) {
		bool handled;
		bool ok = parse_name_stmt(p, out, &handled);
		if (handled)
			return ok;
	}
	if (tok_is(t, "else") || tok_is(t, "elif"))
		ps_error_at(p, t->span, "'%s' without a matching 'if'", t->text);
	else if (t->kind == TK_INDENT)
		ps_error_at(p, t->span, "unexpected indent");
	else if (tok_is(t, "def") || tok_is(t, "class") || tok_is(t, "@"))
		ps_error_at(p, t->span, "expected a statement, found %s (a function "
			    "cannot be nested in another)", found(p));
	else
		ps_error_at(p, t->span, "expected a statement, found %s", found(p));
	return false;
}

static bool parse_statement(Parser *p, StmtList *out)
{
	Token *t = peek(p);
	Stmt *s = NULL;
	if (tok_is(t, "for"))
		s = parse_for(p);
	else if (tok_is(t, "if"))
		s = parse_if(p);
	else if (tok_is(t, "with")) {
		bool none;
		s = parse_with(p, &none);
		if (none)
			return ps_parse_init(p, t) && !p->failed;
	}
	else {
		do {
			if (!parse_simple(p, out))
				return false;
		} while (accept(p, ";") && !at_kind(p, TK_NEWLINE));
		return ps_expect_newline(p, "statement");
	}
	if (!s)
		return false;
	list_push(p, out, s);
	return true;
}
