/* kernel/parse_block.c — TensorIR blocks as TVM writes them: `with
 * T.block("name"):` whose header declares iter vars (`T.axis.remap`,
 * `T.axis.spatial` ...), `T.where`, `T.reads` / `T.writes` regions and a
 * `with T.init():` body. The block is built in its desugared form (ir.h,
 * "TensorIR blocks"): the iter vars are lets over their bindings, the where
 * and the init are ifs. */
#include "kernel/parse_int.h"

#include <string.h>

#define MAX_ITERS 64

/* ---------- iter var declarations ---------- */

static bool iter_type_of(const char *s, IterType *t)
{
	static const struct { const char *name; IterType t; } names[] = {
		{"spatial", ITER_SPATIAL}, {"S", ITER_SPATIAL}, {"reduce", ITER_REDUCE},
		{"R", ITER_REDUCE}, {"scan", ITER_SCAN}, {"opaque", ITER_OPAQUE},
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(names[i].name, s) == 0) {
			*t = names[i].t;
			return true;
		}
	return false;
}

/* `names = T.axis.` at peek (names: one or more, comma-separated). */
bool ps_at_iter_decl(Parser *p)
{
	int k = 0;
	while (peek_at(p, k)->kind == TK_NAME && tok_is(peek_at(p, k + 1), ","))
		k += 2;
	if (peek_at(p, k)->kind != TK_NAME || !tok_is(peek_at(p, k + 1), "="))
		return false;
	return tok_is(peek_at(p, k + 2), "T") && tok_is(peek_at(p, k + 3), ".") &&
	       tok_is(peek_at(p, k + 4), "axis") && tok_is(peek_at(p, k + 5), ".");
}

static const LoopScope *loop_of(Parser *p, const Expr *e)
{
	if (e->kind != EX_VAR)
		return NULL;
	for (int i = p->nloops - 1; i >= 0; i--)
		if (p->loops[i].var == e->u.var)
			return &p->loops[i];
	return NULL;
}

/* The domain argument of T.axis.spatial & co: an extent, or (lo, hi). */
static bool iter_domain(Parser *p, Val *v, Expr **min, Expr **extent)
{
	if (v->kind == VAL_LIST) {
		if (v->n != 2) {
			ps_error_at(p, v->span, "an iter var domain is an extent or a "
				    "pair (begin, end), found %d values", v->n);
			return false;
		}
		Expr *lo = v->items[0], *hi = v->items[1];
		if (!ps_check_int_expr(p, lo, "a domain bound") ||
		    !ps_check_int_expr(p, hi, "a domain bound") || !ps_unify(p, &lo, &hi))
			return false;
		*min = lo;
		int64_t ext;
		if (lo->kind == EX_INT && hi->kind == EX_INT &&
		    !__builtin_sub_overflow(hi->u.ival, lo->u.ival, &ext) && ps_int_fits(ext, lo->dtype))
			*extent = ir_int(p->a, ext, lo->dtype, hi->span);
		else if (hi->kind == EX_BIN && hi->u.bin.op == OP_ADD &&
			 ir_expr_equal(hi->u.bin.a, lo)) /* (x, x + n): what the printer writes */
			*extent = hi->u.bin.b;
		else
			*extent = ps_make_bin(p, OP_SUB, hi, lo, hi->span);
		return *extent != NULL;
	}
	Expr *ext = ps_finish_expr(ps_val_expr(p, v, "an iter var domain"));
	if (!ps_check_int_expr(p, ext, "an iter var domain"))
		return false;
	*min = ir_int(p->a, 0, ext->dtype, ext->span);
	*extent = ext;
	return true;
}

static Stmt *iter_let(Parser *p, Token *name, IterType t, Expr *min, Expr *ext,
		      Expr *binding)
{
	BlockCtx *c = p->blk;
	if (c->niters == MAX_ITERS) {
		ps_error_at(p, name->span, "too many block iter vars (at most %d)",
			    MAX_ITERS);
		return NULL;
	}
	for (int i = 0; i < c->niters; i++)
		if (strcmp(c->iters[i].var->name, name->text) == 0) {
			ps_error_at(p, name->span, "block iter var '%s' declared twice",
				    name->text);
			return NULL;
		}
	if (binding->dtype != ext->dtype && ps_is_literal(ext))
		ext = ps_convert(p, ext, binding->dtype);
	if (binding->dtype != min->dtype && ps_is_literal(min))
		min = ps_convert(p, min, binding->dtype);
	if (!ext || !min)
		return NULL;
	Var *v = ir_var(p->a, name->text, binding->dtype, name->span);
	c->iters = grow(p->a, c->iters, c->niters, &c->capiters, 4, sizeof(BlockIter));
	c->iters[c->niters++] = (BlockIter){v, min, ext, t};
	ps_bind(p, v->name, v, NULL);
	return ir_letstmt(p->a, v, binding, NULL, name->span);
}

/* `vi, vj = T.axis.remap("SS", [i, j])` */
static int parse_remap(Parser *p, Token **names, int n, Stmt **lets)
{
	Token *call = peek(p);
	p->pos += 5; /* T . axis . remap */
	if (!ps_expect(p, "(", "after T.axis.remap"))
		return -1;
	Args args;
	const char *kinds;
	if (!parse_args(p, "T.axis.remap", ")", &args) ||
	    !ps_check_args(p, &args, 2, 2, NULL) ||
	    !ps_val_string(p, &args.v[0], "the iter types", &kinds))
		return -1;
	Val *lv = &args.v[1];
	if (lv->kind != VAL_LIST) {
		ps_error_at(p, lv->span, "T.axis.remap expects a list of loop "
			    "variables, such as [i, j]");
		return -1;
	}
	if ((int)strlen(kinds) != n || lv->n != n) {
		ps_error_at(p, ps_span_from(p, call), "T.axis.remap binds %d iter "
			    "var%s but has %d iter type%s and %d loop variable%s", n,
			    n == 1 ? "" : "s", (int)strlen(kinds),
			    strlen(kinds) == 1 ? "" : "s", lv->n, lv->n == 1 ? "" : "s");
		return -1;
	}
	for (int k = 0; k < n; k++) {
		IterType t;
		if (kinds[k] == 'S')
			t = ITER_SPATIAL;
		else if (kinds[k] == 'R')
			t = ITER_REDUCE;
		else {
			ps_error_at(p, args.v[0].span, "iter type '%c' in \"%s\": "
				    "T.axis.remap takes 'S' (spatial) or 'R' (reduce)",
				    kinds[k], kinds);
			return -1;
		}
		Expr *b = ps_finish_expr(lv->items[k]);
		const LoopScope *l = loop_of(p, b);
		if (!l) {
			ps_error_at(p, b->span, "T.axis.remap binds iter vars to the "
				    "variables of enclosing loops; this is not one (use "
				    "T.axis.spatial(dom, e))");
			return -1;
		}
		lets[k] = iter_let(p, names[k], t, l->min, l->extent, b);
		if (!lets[k])
			return -1;
	}
	return n;
}

/* `v = T.axis.spatial(dom, e)` and T.axis.S / reduce / R / scan / opaque */
static int parse_axis(Parser *p, Token *name, Stmt **lets)
{
	Token *call = peek(p);
	const Token *kt = peek_at(p, 4);
	const char *kind = kt->kind == TK_NAME ? kt->text : NULL;
	IterType t;
	if (!kind || !iter_type_of(kind, &t)) {
		ps_error_at(p, kt->span, "unknown iter type T.axis.%s "
			    "(expected spatial, reduce, scan, opaque, S, R or remap)",
			    kind ? kind : "?");
		return -1;
	}
	p->pos += 5;
	const char *callee = arena_printf(p->a, "T.axis.%s", kind);
	if (!ps_expect(p, "(", arena_printf(p->a, "after %s", callee)))
		return -1;
	Args args;
	static const char *const kws[] = {"dom", "binding", "dtype", NULL};
	if (!parse_args(p, callee, ")", &args) || !ps_check_args(p, &args, 0, 2, kws))
		return -1;
	Val *dv = ps_arg(&args, 0, "dom"), *bv = ps_arg(&args, 1, "binding");
	if (!dv || !bv) {
		ps_error_at(p, ps_span_from(p, call), "%s expects a domain and a "
			    "binding: %s(128, i)", callee, callee);
		return -1;
	}
	Expr *min, *ext;
	if (!iter_domain(p, dv, &min, &ext))
		return -1;
	Expr *b = ps_finish_expr(ps_val_expr(p, bv, "an iter var binding"));
	if (!ps_check_int_expr(p, b, "an iter var binding"))
		return -1;
	lets[0] = iter_let(p, name, t, min, ext, b);
	return lets[0] ? 1 : -1;
}

int ps_parse_iter_decl(Parser *p, Stmt ***lets)
{
	Token *names[MAX_ITERS];
	int n = 0;
	Token *first = peek(p);
	if (!p->blk) {
		ps_error_at(p, first->span, "block iter vars are declared only at the "
			    "top of a `with T.block(...)` body");
		return -1;
	}
	if (p->blk->body_started) {
		ps_error_at(p, first->span, "block iter vars must be declared before "
			    "the block's statements (the first is at line %d)",
			    p->blk->first_stmt.line);
		return -1;
	}
	do {
		if (n == MAX_ITERS) {
			ps_error_at(p, peek(p)->span, "too many block iter vars");
			return -1;
		}
		names[n++] = next(p);
	} while (accept(p, ","));
	next(p); /* = */
	*lets = arena_alloc(p->a, sizeof(Stmt *) * (size_t)n);
	/* T . axis . NAME: a token without text (a number, the end of the
	 * line) is no name, and parse_axis reports it */
	const Token *kt = peek_at(p, 4);
	const char *kind = kt->kind == TK_NAME ? kt->text : NULL;
	if (kind && strcmp(kind, "remap") == 0)
		return parse_remap(p, names, n, *lets);
	if (n != 1) {
		ps_error_at(p, names[1]->span, "T.axis.%s declares one iter var; use "
			    "T.axis.remap for several", kind ? kind : "?");
		return -1;
	}
	return parse_axis(p, names[0], *lets);
}

/* ---------- T.where, T.reads, T.writes ---------- */

bool ps_is_block_header_call(const char *fn)
{
	return strcmp(fn, "where") == 0 || strcmp(fn, "reads") == 0 ||
	       strcmp(fn, "writes") == 0 || strcmp(fn, "block_attr") == 0;
}

/* One region: `B`, `B[i, j]`, `B[lo:hi, j]`, `B[()]`. */
static bool parse_region(Parser *p, BufRegion *r)
{
	Token *t = peek(p);
	if (t->kind != TK_NAME) {
		ps_error_at(p, t->span, "expected a buffer region such as A[vi, 0:4], "
			    "found %s", found(p));
		return false;
	}
	next(p);
	Var *v;
	Buffer *b;
	if (!ps_lookup(p, t->text, &v, &b) || !b) {
		ps_error_at(p, t->span, "unknown buffer '%s'", t->text);
		return false;
	}
	r->buf = b;
	r->ndim = b->ndim;
	r->lo = arena_alloc(p->a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	r->hi = arena_alloc(p->a, sizeof(Expr *) * (size_t)(b->ndim + 1));
	if (!accept(p, "[")) { /* the whole buffer */
		for (int k = 0; k < b->ndim; k++) {
			r->lo[k] = ir_int(p->a, 0, b->shape[k]->dtype, t->span);
			r->hi[k] = b->shape[k];
		}
		r->span = t->span;
		return true;
	}
	int n = 0;
	if (tok_is(peek(p), "(") && tok_is(peek_at(p, 1), ")"))
		p->pos += 2;
	else
		while (!p->failed && !tok_is(peek(p), "]")) {
			if (n == b->ndim) {
				ps_error_at(p, peek(p)->span, "buffer '%s' has %d "
					    "dimension%s", b->name, b->ndim,
					    b->ndim == 1 ? "" : "s");
				return false;
			}
			/* `[:hi]` starts at 0 and `[lo:]` ends at the extent, as in Python */
			Expr *lo = tok_is(peek(p), ":") ? ir_int(p->a, 0, b->shape[n]->dtype, peek(p)->span)
							: ps_finish_expr(parse_expr(p));
			if (!ps_check_int_expr(p, lo, "a region bound"))
				return false;
			Expr *hi = NULL;
			if (accept(p, ":")) {
				hi = tok_is(peek(p), ",") || tok_is(peek(p), "]") ? b->shape[n]
										 : ps_finish_expr(parse_expr(p));
				if (!ps_check_int_expr(p, hi, "a region bound") ||
				    !ps_unify(p, &lo, &hi))
					return false;
			}
			r->lo[n] = lo;
			r->hi[n] = hi;
			n++;
			if (!accept(p, ","))
				break;
		}
	if (!ps_expect(p, "]", "to close the region"))
		return false;
	r->span = ps_span_from(p, t);
	if (n != b->ndim) {
		ps_error_at(p, r->span, "buffer '%s' has %d dimension%s but the region "
			    "gives %d", b->name, b->ndim, b->ndim == 1 ? "" : "s", n);
		return false;
	}
	return true;
}

bool ps_parse_region(Parser *p, BufRegion *r)
{
	if (!parse_region(p, r))
		return false;
	const SubView *s = ps_subview(p, r->buf);
	if (s) /* a region of a view: those cells of its source */
		ps_subview_region(p, s, r);
	return true;
}

/* The arguments of T.reads / T.writes: regions, or lists of them. */
static bool parse_regions(Parser *p, BufRegion **out, int *n, int *cap)
{
	int depth = 0;
	while (!p->failed) {
		if (accept(p, "[")) {
			depth++;
			continue;
		}
		if (depth && accept(p, "]")) {
			depth--;
			accept(p, ",");
			continue;
		}
		if (tok_is(peek(p), ")"))
			break;
		*out = grow(p->a, *out, *n, cap, 4, sizeof(BufRegion));
		BufRegion *r = &(*out)[*n];
		memset(r, 0, sizeof *r);
		if (!ps_parse_region(p, r))
			return false;
		(*n)++;
		if (!accept(p, ",") && !tok_is(peek(p), "]"))
			break;
	}
	if (depth) {
		ps_error_at(p, peek(p)->span, "expected ']' to close the region list, "
			    "found %s", found(p));
		return false;
	}
	return ps_expect(p, ")", "to close the regions");
}

bool ps_block_header_call(Parser *p, const char *fn)
{
	Token *first = peek(p);
	BlockCtx *c = p->blk;
	if (!c) {
		ps_error_at(p, first->span, "T.%s belongs at the top of a `with "
			    "T.block(...)` body", fn);
		return false;
	}
	p->pos += 3;
	if (!ps_expect(p, "(", arena_printf(p->a, "after T.%s", fn)))
		return false;
	if (strcmp(fn, "block_attr") == 0) { /* annotations: read and dropped */
		Args args;
		return parse_args(p, "T.block_attr", ")", &args);
	}
	if (strcmp(fn, "where") == 0) {
		Args args;
		if (!parse_args(p, "T.where", ")", &args) ||
		    !ps_check_args(p, &args, 1, 1, NULL))
			return false;
		Expr *e = ps_finish_expr(ps_val_expr(p, &args.v[0], "the condition"));
		if (!e || !ps_check_bool_expr(p, e, "the condition of T.where"))
			return false;
		if (c->where) {
			ps_error_at(p, first->span, "a block has one T.where");
			return false;
		}
		c->where = e;
		return true;
	}
	bool reads = strcmp(fn, "reads") == 0;
	if (reads ? c->has_reads : c->has_writes) {
		ps_error_at(p, first->span, "T.%s given twice in one block", fn);
		return false;
	}
	if (reads) {
		c->has_reads = true;
		return parse_regions(p, &c->reads, &c->nreads, &c->capreads);
	}
	c->has_writes = true;
	return parse_regions(p, &c->writes, &c->nwrites, &c->capwrites);
}

/* ---------- with T.init(), with T.block() ---------- */

bool ps_parse_init(Parser *p, Token *with_tok)
{
	Token *t = peek(p);
	BlockCtx *c = p->blk;
	p->pos += 3; /* T . init */
	if (!ps_expect(p, "(", "after T.init") || !ps_expect(p, ")", "after T.init(") ||
	    !ps_expect(p, ":", "after with T.init()"))
		return false;
	if (!c) {
		ps_error_at(p, t->span, "T.init() belongs at the top of a `with "
			    "T.block(...)` body");
		return false;
	}
	if (c->init) {
		ps_error_at(p, t->span, "a block has one T.init()");
		return false;
	}
	Stmt *body = parse_suite(p, "with T.init()", false);
	if (!body)
		return false;
	/* without reduction iter vars the init runs in every instance, as in
	 * TVM (the condition "every reduction var at its minimum" holds) */
	c->init = body;
	return true;
}

static BlockInfo *info_of(Parser *p, const BlockCtx *c, bool anonymous)
{
	BlockInfo *info = arena_alloc(p->a, sizeof *info);
	info->niters = c->niters;
	info->iters = c->iters;
	info->anonymous = anonymous;
	info->has_where = c->where != NULL;
	info->has_init = c->init != NULL;
	info->has_reads = c->has_reads;
	info->has_writes = c->has_writes;
	info->nreads = c->nreads;
	info->nwrites = c->nwrites;
	info->reads = c->reads;
	info->writes = c->writes;
	return info;
}

Stmt *ps_parse_block(Parser *p, Token *with_tok)
{
	p->pos += 3; /* T . block */
	if (!ps_expect(p, "(", "after T.block"))
		return NULL;
	Args args;
	const char *name = "";
	static const char *const kws[] = {"name_hint", "no_realize", NULL};
	if (!parse_args(p, "T.block", ")", &args) || !ps_check_args(p, &args, 0, 1, kws))
		return NULL;
	Val *nv = ps_arg(&args, 0, "name_hint");
	bool anonymous = nv == NULL;
	if (nv && !ps_val_string(p, nv, "the block name", &name))
		return NULL;
	if (!ps_expect(p, ":", "after with header"))
		return NULL;
	Span header = ps_span_from(p, with_tok);
	BlockCtx ctx;
	memset(&ctx, 0, sizeof ctx);
	p->blk_next = &ctx;
	Stmt *body = parse_suite(p, "with header", false);
	if (!body)
		return NULL;
	bool plain = ctx.niters == 0 && !ctx.where && !ctx.init && !ctx.has_reads &&
		     !ctx.has_writes;
	if (plain && !anonymous)
		return ir_block(p->a, name, body, header);
	/* the iter lets lead the body: take them off, assemble the rest */
	Expr **bindings = arena_alloc(p->a, sizeof(Expr *) * (size_t)(ctx.niters + 1));
	Stmt *s = body;
	for (int k = 0; k < ctx.niters; k++) {
		if (s->kind != ST_LET || s->u.let.var != ctx.iters[k].var) {
			ps_error_at(p, ctx.iters[k].var->span, "block iter vars must be "
				    "declared before the block's statements");
			return NULL;
		}
		bindings[k] = s->u.let.value;
		s = s->u.let.body;
	}
	BlockInfo *info = info_of(p, &ctx, anonymous);
	info->decl_inner = s;
	Stmt *blk = block_assemble(p->a, name, info, bindings, ctx.where, ctx.init, s, header);
	int n = p->nloops;
	Var **vs = arena_alloc(p->a, sizeof(Var *) * (size_t)(n + 1));
	Expr **mins = arena_alloc(p->a, sizeof(Expr *) * (size_t)(n + 1));
	Expr **exts = arena_alloc(p->a, sizeof(Expr *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++) {
		vs[i] = p->loops[i].var;
		mins[i] = p->loops[i].min;
		exts[i] = p->loops[i].extent;
	}
	/* under an `if` a binding may leave its domain where the if is false */
	if ((p->nguards == 0 && !block_check_bindings(p->a, blk, n, vs, mins, exts, p->d)) ||
	    !block_check_decls(p->a, blk, n, vs, mins, exts, p->d)) {
		p->failed = true;
		return NULL;
	}
	return blk;
}
