/* kernel/print.c — the printer: IR back to kernel-language text that
 * parse_module() reads to a structurally equal module. Expressions get the
 * fewest parentheses Python precedence allows; bound names that would be
 * captured by an enclosing binding of the same name are renamed (`i_1`);
 * floats print as the shortest text that reads back to the same double. */
#include "kernel/print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- name scopes ---------- */

/* One visible name: a Var or a Buffer (key) printed as `name`. */
typedef struct Binding {
	const void *key;
	char *name; /* malloc'ed */
} Binding;

typedef struct Printer {
	StrBuf *out;
	Binding *binds;
	int nbinds, cap;
	const Stmt **loops; /* enclosing loops, innermost last */
	int nloops, caploops;
	Arena *arena; /* scratch for reading blocks back; made on first use */
} Printer;

static const char *const reserved_words[] = {
	"False", "None",  "True",     "and",    "as",	"assert", "async",
	"await", "break", "class",    "continue", "def",	"del",	  "elif",
	"else",	 "except", "finally", "for",	"from",	"global", "if",
	"import", "in",	   "is",       "lambda", "nonlocal", "not",	  "or",
	"pass",	 "raise", "return",   "try",	"while", "with",   "yield",
	"T",	 "I",	  "range",    "tvm",	"script",
};

static bool is_reserved(const char *s)
{
	for (size_t i = 0; i < sizeof reserved_words / sizeof *reserved_words;
	     i++)
		if (strcmp(reserved_words[i], s) == 0)
			return true;
	return false;
}

static bool is_ident_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* A valid identifier derived from `name`: bad characters become `_`,
 * keywords and the `T` / `I` namespaces get a trailing `_`. */
static char *sanitize_name(const char *name)
{
	StrBuf b = {0};
	if (!name || !*name)
		sb_puts(&b, "_");
	for (const char *p = name; p && *p; p++) {
		char c = is_ident_char(*p, p == name) ? *p : '_';
		sb_put(&b, &c, 1);
	}
	char *s = sb_take(&b);
	if (!is_reserved(s))
		return s;
	StrBuf r = {0};
	sb_printf(&r, "%s_", s);
	free(s);
	return sb_take(&r);
}

static bool name_visible(const Printer *p, const char *name)
{
	for (int i = 0; i < p->nbinds; i++)
		if (strcmp(p->binds[i].name, name) == 0)
			return true;
	return false;
}

static void push_binding(Printer *p, const void *key, char *name)
{
	if (p->nbinds == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->binds = realloc(p->binds, sizeof(Binding) * (size_t)p->cap);
	}
	p->binds[p->nbinds].key = key;
	p->binds[p->nbinds].name = name;
	p->nbinds++;
}

static bool name_taken(const Printer *p, const char *name, char *const *taken,
		       int ntaken)
{
	for (int i = 0; i < ntaken; i++)
		if (strcmp(taken[i], name) == 0)
			return true;
	return name_visible(p, name);
}

/* The name for a new loop, let or alloc binding (malloc'ed): its own name
 * made an identifier, or `name_k` with the smallest k that no visible
 * binding (nor taken[0, ntaken)) uses, so no reference is captured.
 * Bound names compare up to renaming, so this keeps equality. */
static char *fresh_name(const Printer *p, const char *name, char *const *taken,
			int ntaken)
{
	char *base = sanitize_name(name);
	char *s = strdup(base);
	for (int k = 1; name_taken(p, s, taken, ntaken); k++) {
		StrBuf b = {0};
		sb_printf(&b, "%s_%d", base, k);
		free(s);
		s = sb_take(&b);
	}
	free(base);
	return s;
}

/* Parameters compare by name: they keep theirs, whatever it is. */
static void bind_param(Printer *p, const void *key, const char *name)
{
	push_binding(p, key, strdup(name));
}

static void unbind_to(Printer *p, int mark)
{
	while (p->nbinds > mark)
		free(p->binds[--p->nbinds].name);
}

static void printer_free(Printer *p)
{
	unbind_to(p, 0);
	free(p->binds);
	free(p->loops);
	if (p->arena) {
		arena_free(p->arena);
		free(p->arena);
	}
}

static Arena *scratch(Printer *p)
{
	if (!p->arena) {
		p->arena = malloc(sizeof *p->arena);
		if (!p->arena)
			abort();
		arena_init(p->arena);
	}
	return p->arena;
}

/* The printed name of a Var or Buffer; unbound ones print as named. */
static const char *lookup_name(const Printer *p, const void *key,
			       const char *name)
{
	for (int i = p->nbinds - 1; i >= 0; i--)
		if (p->binds[i].key == key)
			return p->binds[i].name;
	return name;
}

static const char *var_name(const Printer *p, const Var *v)
{
	return lookup_name(p, v, v->name);
}

static const char *buf_name(const Printer *p, const Buffer *b)
{
	return lookup_name(p, b, b->name);
}

/* ---------- literals ---------- */

static void put_string_literal(StrBuf *b, const char *s)
{
	sb_puts(b, "\"");
	for (; s && *s; s++) {
		switch (*s) {
		case '"': sb_puts(b, "\\\""); break;
		case '\\': sb_puts(b, "\\\\"); break;
		case '\n': sb_puts(b, "\\n"); break;
		case '\t': sb_puts(b, "\\t"); break;
		case '\r': sb_puts(b, "\\r"); break;
		default: sb_put(b, s, 1); break;
		}
	}
	sb_puts(b, "\"");
}

/* Shortest %g text that strtod reads back to v; always contains `.` or
 * `e` so it lexes as a float. The exponent loses its `+` and leading
 * zeros (1e+20 -> 1e20). -0.0 keeps its sign. */
static void put_finite_double(StrBuf *b, double v)
{
	char text[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(text, sizeof text, "%.*g", prec, v);
		if (strtod(text, NULL) == v)
			break;
	}
	char *e = strchr(text, 'e');
	if (!e) {
		sb_puts(b, text);
		if (!strchr(text, '.'))
			sb_puts(b, ".0");
		return;
	}
	sb_put(b, text, (size_t)(e - text + 1));
	const char *q = e + 1;
	if (*q == '-')
		sb_put(b, q++, 1);
	else if (*q == '+')
		q++;
	while (*q == '0' && q[1])
		q++;
	sb_puts(b, q);
}

/* float32 finite literals print bare (`1.5`, `-0.0`); others through the
 * dtype constructor: `T.float64(1.5)`, `T.float32("inf")`. A bare literal
 * is also right where the parser adapts it to the dtype it has (`bare`). */
static void put_float(StrBuf *b, const Expr *e, bool bare)
{
	double v = e->u.fval;
	if (isfinite(v) && (bare || e->dtype == DT_FLOAT32)) {
		put_finite_double(b, v);
		return;
	}
	/* the parser folds `-` into a float literal: -nan keeps its sign */
	sb_printf(b, "%sT.%s(", isnan(v) && signbit(v) ? "-" : "",
		  dtype_name(e->dtype));
	if (isnan(v))
		sb_puts(b, "\"nan\"");
	else if (isinf(v))
		sb_puts(b, v < 0 ? "\"-inf\"" : "\"inf\"");
	else
		put_finite_double(b, v);
	sb_puts(b, ")");
}

/* Bare decimals read as int32 (int64 when too wide), so other integer
 * literals print as `T.int64(5)` unless the parser adapts them. */
static void put_int(StrBuf *b, const Expr *e, bool bare)
{
	if (e->dtype == DT_BOOL) {
		sb_puts(b, e->u.ival ? "True" : "False");
		return;
	}
	if (bare || e->dtype == DT_INT32) {
		sb_printf(b, "%lld", (long long)e->u.ival);
		return;
	}
	sb_printf(b, "T.%s(%lld)", dtype_name(e->dtype), (long long)e->u.ival);
}

/* ---------- expressions ---------- */

/* Python binding strength, weakest first. */
enum {
	PREC_OR = 1,
	PREC_AND,
	PREC_NOT,
	PREC_CMP,
	PREC_ADD,
	PREC_MUL,
	PREC_UNARY,
	PREC_ATOM,
};

static int binop_prec(BinOp op)
{
	switch (op) {
	case OP_OR: return PREC_OR;
	case OP_AND: return PREC_AND;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT:
	case OP_GE: return PREC_CMP;
	case OP_ADD:
	case OP_SUB: return PREC_ADD;
	case OP_MUL:
	case OP_DIV:
	case OP_FLOORDIV:
	case OP_FLOORMOD: return PREC_MUL;
	case OP_MIN:
	case OP_MAX: /* T.min(a, b) */
	case OP_SHL: /* T.shift_left(a, b) */
	case OP_SHR: return PREC_ATOM;
	case OP_COUNT: break;
	}
	return PREC_ATOM;
}

/* A negative literal reads as a unary minus applied to a number. */
static int expr_prec(const Expr *e)
{
	switch (e->kind) {
	case EX_INT:
		return e->dtype != DT_BOOL && e->u.ival < 0 ? PREC_UNARY
							    : PREC_ATOM;
	case EX_FLOAT: return signbit(e->u.fval) ? PREC_UNARY : PREC_ATOM;
	case EX_BIN: return binop_prec(e->u.bin.op);
	case EX_NOT: return PREC_NOT;
	case EX_NEG: return PREC_UNARY;
	case EX_VAR: case EX_SELECT: case EX_CAST: case EX_LOAD: case EX_UNDEF:
	case EX_LET: case EX_CALL: case EX_OPAQUE: return PREC_ATOM;
	case EX_COUNT: break;
	}
	return PREC_ATOM;
}

static bool is_literal(const Expr *e)
{
	return (e->kind == EX_INT && e->dtype != DT_BOOL) ||
	       e->kind == EX_FLOAT;
}

/* The dtype the parser gives `child` from its sibling operand (of a
 * binary operator, T.min/T.max, the branches of T.if_then_else): a bare
 * literal adapts to a non-literal sibling, a bare T.undef() takes the
 * dtype of any sibling that is not itself a bare T.undef(). DT_VOID when
 * the child must spell its dtype. */
static DType sibling_dtype(const Expr *child, const Expr *sibling)
{
	DType t = sibling->dtype;
	if (t == DT_VOID || t == DT_HANDLE || sibling->kind == EX_UNDEF)
		return DT_VOID;
	if (child->kind == EX_UNDEF)
		return t;
	if (is_literal(child) && !is_literal(sibling) && t != DT_BOOL)
		return t;
	return DT_VOID;
}

static void pexpr_in(Printer *p, const Expr *e, int min_prec, DType adapt);

static void pexpr(Printer *p, const Expr *e, int min_prec)
{
	pexpr_in(p, e, min_prec, DT_VOID);
}

static void pexpr_list(Printer *p, int n, Expr *const *xs);

/* The indices of a load or store: `()` for a 0-d buffer. */
static void pindices(Printer *p, int n, Expr *const *xs)
{
	if (n == 0)
		sb_puts(p->out, "()");
	pexpr_list(p, n, xs);
}

static void pexpr_list(Printer *p, int n, Expr *const *xs)
{
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(p->out, ", ");
		pexpr(p, xs[i], PREC_OR);
	}
}

static void pexpr_bin(Printer *p, const Expr *e)
{
	BinOp op = e->u.bin.op;
	const Expr *x = e->u.bin.a, *y = e->u.bin.b;
	/* and / or make a bare T.undef() boolean */
	DType tx = binop_is_logical(op) ? DT_BOOL : sibling_dtype(x, y);
	DType ty = binop_is_logical(op) ? DT_BOOL : sibling_dtype(y, x);
	if (op == OP_MIN || op == OP_MAX || op == OP_SHL || op == OP_SHR) {
		sb_puts(p->out, op == OP_MIN ? "T.min(" : op == OP_MAX ? "T.max("
				: op == OP_SHL ? "T.shift_left(" : "T.shift_right(");
		pexpr_in(p, x, PREC_OR, tx);
		sb_puts(p->out, ", ");
		pexpr_in(p, y, PREC_OR, ty);
		sb_puts(p->out, ")");
		return;
	}
	int prec = binop_prec(op);
	/* Left-associative: a left operand of the same strength needs no
	 * parentheses, a right one does. Comparisons never chain: an
	 * operand that is a comparison is always parenthesised. */
	int left = binop_is_compare(op) ? PREC_CMP + 1 : prec;
	pexpr_in(p, x, left, tx);
	sb_printf(p->out, " %s ", binop_symbol(op));
	pexpr_in(p, y, prec + 1, ty);
}

static void pexpr_undef(Printer *p, const Expr *e, DType adapt)
{
	if (e->dtype == adapt)
		sb_puts(p->out, "T.undef()");
	else
		sb_printf(p->out, "T.undef(dtype=\"%s\")", dtype_name(e->dtype));
}

static void pexpr_let(Printer *p, const Expr *e)
{
	/* The kernel language has no let expression yet: this is TVMScript's
	 * spelling, with the variable bound over the body only. */
	int mark = p->nbinds;
	char *name = fresh_name(p, e->u.let.var->name, NULL, 0);
	sb_printf(p->out, "T.let(%s, ", name);
	pexpr(p, e->u.let.value, PREC_OR);
	sb_puts(p->out, ", ");
	push_binding(p, e->u.let.var, name);
	pexpr(p, e->u.let.body, PREC_OR);
	unbind_to(p, mark);
	sb_puts(p->out, ")");
}

/* `-` before a number would fold into a negative literal: parentheses.
 * A negation of a negation is `- -x`, not `-(-x)`: parentheses would nest
 * the printed text twice as deep as the chain of minus signs it came from,
 * past the parser's depth limit (found by fuzzing). */
static void pexpr_neg(Printer *p, const Expr *e)
{
	const Expr *x = e->u.un.a;
	sb_puts(p->out, "-");
	if (x->kind == EX_NEG) {
		sb_puts(p->out, " ");
		pexpr(p, x, PREC_UNARY);
		return;
	}
	if (x->kind == EX_INT || x->kind == EX_FLOAT || expr_prec(x) < PREC_UNARY) {
		sb_puts(p->out, "(");
		pexpr(p, x, PREC_OR);
		sb_puts(p->out, ")");
		return;
	}
	pexpr(p, x, PREC_UNARY);
}

static void pexpr_select(Printer *p, const Expr *e)
{
	const Expr *x = e->u.sel.a, *y = e->u.sel.b;
	sb_puts(p->out, "T.if_then_else(");
	pexpr(p, e->u.sel.cond, PREC_OR);
	sb_puts(p->out, ", ");
	pexpr_in(p, x, PREC_OR, sibling_dtype(x, y));
	sb_puts(p->out, ", ");
	pexpr_in(p, y, PREC_OR, sibling_dtype(y, x));
	sb_puts(p->out, ")");
}

/* `T.exp(x)`: a literal or bare T.undef() operand adapts to the dtype of
 * the call when another operand fixes it (as the parser reads it). */
static void pexpr_call(Printer *p, const Expr *e)
{
	DType adapt = DT_VOID;
	for (int i = 0; i < e->u.call.nargs; i++) {
		const Expr *x = e->u.call.args[i];
		if (!is_literal(x) && x->kind != EX_UNDEF)
			adapt = e->dtype;
	}
	sb_printf(p->out, "T.%s(", mathfn_name(e->u.call.fn));
	for (int i = 0; i < e->u.call.nargs; i++) {
		if (i)
			sb_puts(p->out, ", ");
		pexpr_in(p, e->u.call.args[i], PREC_OR, adapt);
	}
	sb_puts(p->out, ")");
}

/* `T.call_extern("f", B.data, i, dtype="int32")`: the items as written,
 * then the dtype ("" for none, as TVM spells it). */
static void pexpr_opaque(Printer *p, const Expr *e)
{
	sb_printf(p->out, "T.%s(", e->u.opq.name);
	for (int i = 0; i < e->u.opq.nitems; i++) {
		const OpqItem *it = &e->u.opq.items[i];
		if (i)
			sb_puts(p->out, ", ");
		switch (it->kind) {
		case OPQ_EXPR: pexpr_in(p, e->u.opq.args[it->expr], PREC_OR, DT_VOID); break;
		case OPQ_BUFFER: sb_puts(p->out, buf_name(p, it->buf)); break;
		case OPQ_BUFFER_DATA: sb_printf(p->out, "%s.data", buf_name(p, it->buf)); break;
		case OPQ_STRING: sb_printf(p->out, "\"%s\"", it->str); break;
		}
	}
	sb_printf(p->out, "%sdtype=\"%s\")", e->u.opq.nitems ? ", " : "",
		  e->dtype == DT_VOID ? "" : dtype_name(e->dtype));
}

static void pexpr_atom(Printer *p, const Expr *e, DType adapt)
{
	StrBuf *b = p->out;
	switch (e->kind) {
	case EX_INT: put_int(b, e, adapt == e->dtype); return;
	case EX_FLOAT: put_float(b, e, adapt == e->dtype); return;
	case EX_VAR: sb_puts(b, var_name(p, e->u.var)); return;
	case EX_BIN: pexpr_bin(p, e); return;
	case EX_NOT:
		sb_puts(b, "not ");
		pexpr(p, e->u.un.a, PREC_NOT);
		return;
	case EX_NEG: pexpr_neg(p, e); return;
	case EX_SELECT: pexpr_select(p, e); return;
	case EX_CAST:
		sb_puts(b, "T.cast(");
		pexpr(p, e->u.un.a, PREC_OR);
		sb_printf(b, ", \"%s\")", dtype_name(e->dtype));
		return;
	case EX_LOAD:
		sb_printf(b, "%s[", buf_name(p, e->u.load.buf));
		pindices(p, e->u.load.nidx, e->u.load.idx);
		sb_puts(b, "]");
		return;
	case EX_UNDEF: pexpr_undef(p, e, adapt); return;
	case EX_LET: pexpr_let(p, e); return;
	case EX_CALL: pexpr_call(p, e); return;
	case EX_OPAQUE: pexpr_opaque(p, e); return;
	case EX_COUNT: break;
	}
	sb_puts(b, "T.undef()");
}

/* e, parenthesised if it binds weaker than min_prec; `adapt` is the
 * dtype the parser will give a bare literal or T.undef() here. */
static void pexpr_in(Printer *p, const Expr *e, int min_prec, DType adapt)
{
	if (expr_prec(e) >= min_prec) {
		pexpr_atom(p, e, adapt);
		return;
	}
	sb_puts(p->out, "(");
	pexpr_atom(p, e, adapt);
	sb_puts(p->out, ")");
}

/* ---------- statements ---------- */

static void indent_to(StrBuf *b, int indent)
{
	for (int i = 0; i < indent; i++)
		sb_puts(b, "    ");
}

static void pstmt(Printer *p, const Stmt *s, int indent);

/* The statements of s in order, into the current block: a sequence's
 * items, a let's or an allocation's body (they run to the block end). */
static void pitems(Printer *p, const Stmt *s, int indent)
{
	if (s->kind != ST_SEQ) {
		pstmt(p, s, indent);
		return;
	}
	for (int i = 0; i < s->u.seq.n; i++)
		pitems(p, s->u.seq.items[i], indent);
}

static bool stmt_is_empty(const Stmt *s)
{
	if (s->kind != ST_SEQ)
		return false;
	for (int i = 0; i < s->u.seq.n; i++)
		if (!stmt_is_empty(s->u.seq.items[i]))
			return false;
	return true;
}

/* An indented block: its own scope for names bound inside it. */
static void pblock(Printer *p, const Stmt *s, int indent)
{
	int mark = p->nbinds;
	if (stmt_is_empty(s)) {
		indent_to(p->out, indent);
		sb_puts(p->out, "pass\n");
	} else {
		pitems(p, s, indent);
	}
	unbind_to(p, mark);
}

/* The parser gives `T.serial(n)` the min 0 in n's dtype. */
static bool loop_from_zero(const Stmt *s)
{
	const Expr *lo = s->u.loop.min;
	return lo->kind == EX_INT && lo->u.ival == 0 &&
	       lo->dtype == s->u.loop.extent->dtype;
}

/* A loop that `T.grid` may join to its parent: serial, from literal 0. */
static bool is_grid_loop(const Stmt *s)
{
	return s->kind == ST_FOR && s->u.loop.kind == FOR_SERIAL &&
	       loop_from_zero(s);
}

enum { MAX_GRID = 16 };

/* Collect the perfectly nested serial loops from 0 starting at s whose
 * extents do not use the variables of the loops around them (T.grid
 * evaluates every extent before binding any name). */
static int grid_chain(const Stmt *s, const Stmt **chain)
{
	int n = 0;
	while (n < MAX_GRID && is_grid_loop(s)) {
		for (int k = 0; k < n; k++)
			if (ir_expr_uses_var(s->u.loop.extent,
					     chain[k]->u.loop.var))
				return n;
		chain[n++] = s;
		s = s->u.loop.body;
	}
	return n;
}

/* The parser reads `T.serial(lo, hi)` as min lo and extent hi - lo
 * (folded when both are literals), so hi is printed back from those
 * shapes; any other extent prints as `lo + extent`. */
static void ploop_range(Printer *p, const Stmt *s)
{
	const Expr *lo = s->u.loop.min, *ext = s->u.loop.extent;
	if (loop_from_zero(s)) {
		pexpr(p, ext, PREC_OR);
		return;
	}
	int64_t end;
	if (lo->kind == EX_INT && ext->kind == EX_INT && lo->dtype == ext->dtype &&
	    !__builtin_add_overflow(lo->u.ival, ext->u.ival, &end) &&
	    dtype_wrap_int(end, lo->dtype) == end) {
		/* an end past the dtype's range would re-read as a wider
		 * literal: that case prints as `lo + extent` below */
		Expr hi = *lo;
		hi.u.ival = end;
		pexpr(p, lo, PREC_OR);
		sb_puts(p->out, ", ");
		pexpr(p, &hi, PREC_OR);
		return;
	}
	const Expr *hi = NULL;
	if (ext->kind == EX_BIN && ext->u.bin.op == OP_SUB &&
	    ir_expr_equal(ext->u.bin.b, lo))
		hi = ext->u.bin.a;
	if (hi) {
		pexpr_in(p, lo, PREC_OR, sibling_dtype(lo, hi));
		sb_puts(p->out, ", ");
		pexpr_in(p, hi, PREC_OR, sibling_dtype(hi, lo));
		return;
	}
	pexpr(p, lo, PREC_OR);
	sb_puts(p->out, ", ");
	pexpr_in(p, lo, PREC_ADD, sibling_dtype(lo, ext));
	sb_puts(p->out, " + ");
	pexpr_in(p, ext, PREC_ADD + 1, sibling_dtype(ext, lo));
}

/* Loop names are bound after the range (or the grid's extents) is
 * printed: those are evaluated outside the loop. */
static void pfor(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	const Stmt *chain[MAX_GRID];
	char *names[MAX_GRID];
	int n = grid_chain(s, chain);
	int mark = p->nbinds;
	indent_to(b, indent);
	if (n < 2) {
		chain[0] = s;
		n = 1;
	}
	sb_puts(b, "for ");
	for (int k = 0; k < n; k++) {
		names[k] = fresh_name(p, chain[k]->u.loop.var->name, names, k);
		sb_printf(b, "%s%s", k ? ", " : "", names[k]);
	}
	if (n == 1) {
		sb_printf(b, " in T.%s(", for_kind_name(s->u.loop.kind));
		ploop_range(p, s);
	} else {
		sb_puts(b, " in T.grid(");
		for (int k = 0; k < n; k++) {
			if (k)
				sb_puts(b, ", ");
			pexpr(p, chain[k]->u.loop.extent, PREC_OR);
		}
	}
	sb_puts(b, "):\n");
	int lmark = p->nloops;
	for (int k = 0; k < n; k++) {
		push_binding(p, chain[k]->u.loop.var, names[k]);
		if (p->nloops == p->caploops) {
			p->caploops = p->caploops ? 2 * p->caploops : 16;
			p->loops = realloc(p->loops, sizeof *p->loops * (size_t)p->caploops);
			if (!p->loops)
				abort();
		}
		p->loops[p->nloops++] = chain[k];
	}
	pblock(p, chain[n - 1]->u.loop.body, indent + 1);
	p->nloops = lmark;
	unbind_to(p, mark);
}

static void pif(Printer *p, const Stmt *s, int indent, bool is_elif)
{
	StrBuf *b = p->out;
	indent_to(b, indent);
	sb_puts(b, is_elif ? "elif " : "if ");
	pexpr(p, s->u.cond.cond, PREC_OR);
	sb_puts(b, ":\n");
	pblock(p, s->u.cond.then_s, indent + 1);
	const Stmt *e = s->u.cond.else_s;
	if (!e)
		return;
	if (e->kind == ST_IF) {
		pif(p, e, indent, true);
		return;
	}
	indent_to(b, indent);
	sb_puts(b, "else:\n");
	pblock(p, e, indent + 1);
}

static void pshape(Printer *p, const Buffer *buf, const char *open,
		   const char *close)
{
	sb_puts(p->out, open);
	pexpr_list(p, buf->ndim, buf->shape);
	if (buf->ndim == 1 && open[0] == '(')
		sb_puts(p->out, ",");
	sb_puts(p->out, close);
}

static const char *scope_name(BufferScope sc)
{
	switch (sc) {
	case SCOPE_GLOBAL: return "global";
	case SCOPE_LOCAL: return "local";
	case SCOPE_SHARED: return "shared";
	}
	return "global";
}

static void paxis_separators(StrBuf *b, const Buffer *buf)
{
	if (buf->naxis_separators == 0)
		return;
	sb_puts(b, ", axis_separators=[");
	for (int i = 0; i < buf->naxis_separators; i++)
		sb_printf(b, "%s%d", i ? ", " : "", buf->axis_separators[i]);
	sb_puts(b, "]");
}

/* An allocation or a let binds its name after its right-hand side, for
 * the rest of the block (its body). */
static void palloc(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	const Buffer *buf = s->u.alloc.buf;
	char *name = fresh_name(p, buf->name, NULL, 0);
	indent_to(b, indent);
	sb_printf(b, "%s = T.alloc_buffer(", name);
	pshape(p, buf, "[", "]");
	sb_printf(b, ", \"%s\", scope=\"%s\"", dtype_name(buf->dtype),
		  scope_name(buf->scope));
	paxis_separators(b, buf);
	sb_puts(b, ")\n");
	push_binding(p, buf, name);
	pitems(p, s->u.alloc.body, indent);
}

static void plet(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	const Var *v = s->u.let.var;
	char *name = fresh_name(p, v->name, NULL, 0);
	indent_to(b, indent);
	sb_printf(b, "%s = ", name);
	pexpr(p, s->u.let.value, PREC_OR);
	sb_puts(b, "\n");
	push_binding(p, v, name);
	pitems(p, s->u.let.body, indent);
}

static void pstore(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	indent_to(b, indent);
	sb_printf(b, "%s[", buf_name(p, s->u.store.buf));
	pindices(p, s->u.store.nidx, s->u.store.idx);
	sb_puts(b, "] = ");
	/* the parser converts the value to the buffer's dtype */
	pexpr_in(p, s->u.store.value, PREC_OR, s->u.store.buf->dtype);
	sb_puts(b, "\n");
}

static void pcall_stmt(Printer *p, const char *fn, const Expr *e, int indent)
{
	indent_to(p->out, indent);
	sb_printf(p->out, "%s(", fn);
	pexpr(p, e, PREC_OR);
	sb_puts(p->out, ")\n");
}

/* ---------- blocks ---------- */

/* Binding k is an enclosing loop's variable over the iter var's domain
 * (and a remap type): T.axis.remap can say it. */
static bool remappable(const Printer *p, const BlockIter *it, const Expr *bind)
{
	if ((it->type != ITER_SPATIAL && it->type != ITER_REDUCE) ||
	    bind->kind != EX_VAR)
		return false;
	for (int i = p->nloops - 1; i >= 0; i--) {
		const Stmt *l = p->loops[i];
		if (l->u.loop.var == bind->u.var)
			return ir_expr_equal(l->u.loop.min, it->dom_min) &&
			       ir_expr_equal(l->u.loop.extent, it->dom_extent) &&
			       l->u.loop.var->dtype == it->var->dtype;
	}
	return false;
}

static void piters(Printer *p, const BlockInfo *info, const BlockView *v,
		   int indent)
{
	StrBuf *b = p->out;
	int n = info->niters;
	if (n == 0)
		return;
	char **names = malloc(sizeof(char *) * (size_t)n);
	if (!names)
		abort();
	for (int k = 0; k < n; k++)
		names[k] = fresh_name(p, info->iters[k].var->name, names, k);
	bool remap = true;
	for (int k = 0; k < n; k++)
		remap = remap && remappable(p, &info->iters[k], v->bindings[k]);
	if (remap) {
		indent_to(b, indent);
		for (int k = 0; k < n; k++)
			sb_printf(b, "%s%s", k ? ", " : "", names[k]);
		sb_puts(b, " = T.axis.remap(\"");
		for (int k = 0; k < n; k++)
			sb_puts(b, info->iters[k].type == ITER_REDUCE ? "R" : "S");
		sb_puts(b, "\", [");
		pexpr_list(p, n, v->bindings);
		sb_puts(b, "])\n");
	} else {
		for (int k = 0; k < n; k++) {
			const BlockIter *it = &info->iters[k];
			indent_to(b, indent);
			sb_printf(b, "%s = T.axis.%s(", names[k], iter_type_name(it->type));
			bool from0 = it->dom_min->kind == EX_INT && it->dom_min->u.ival == 0 &&
				     it->dom_min->dtype == it->dom_extent->dtype;
			if (from0) {
				pexpr(p, it->dom_extent, PREC_OR);
			} else {
				sb_puts(b, "(");
				pexpr(p, it->dom_min, PREC_OR);
				sb_puts(b, ", ");
				const Expr *lo = it->dom_min, *ext = it->dom_extent;
				int64_t hi;
				if (lo->kind == EX_INT && ext->kind == EX_INT && lo->dtype == DT_INT32 &&
				    ext->dtype == DT_INT32 &&
				    !__builtin_add_overflow(lo->u.ival, ext->u.ival, &hi) &&
				    hi == dtype_wrap_int(hi, DT_INT32)) {
					/* (5, 10), not (5, 5 + 5) */
					sb_printf(b, "%lld", (long long)hi);
				} else {
					pexpr(p, lo, PREC_ADD);
					sb_puts(b, " + ");
					pexpr(p, ext, PREC_MUL);
				}
				sb_puts(b, ")");
			}
			sb_puts(b, ", ");
			pexpr(p, v->bindings[k], PREC_OR);
			sb_puts(b, ")\n");
		}
	}
	for (int k = 0; k < n; k++)
		push_binding(p, info->iters[k].var, names[k]);
	free(names);
}

static void pregions(Printer *p, const char *fn, int n, const BufRegion *rs,
		     int indent)
{
	StrBuf *b = p->out;
	indent_to(b, indent);
	sb_printf(b, "T.%s(", fn);
	if (n == 0)
		sb_puts(b, "[]");
	for (int i = 0; i < n; i++) {
		const BufRegion *r = &rs[i];
		sb_printf(b, "%s%s[", i ? ", " : "", buf_name(p, r->buf));
		if (r->ndim == 0)
			sb_puts(b, "()");
		for (int k = 0; k < r->ndim; k++) {
			if (k)
				sb_puts(b, ", ");
			pexpr(p, r->lo[k], PREC_OR);
			if (r->hi[k]) {
				sb_puts(b, ":");
				pexpr(p, r->hi[k], PREC_OR);
			}
		}
		sb_puts(b, "]");
	}
	sb_puts(b, ")\n");
}

/* A block with iter vars in TVM's style when its body still has the shape
 * its info describes; otherwise (a rewrite reshaped it) the plain block
 * over the desugared body, which means the same. */
static void pblock_stmt(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	const BlockInfo *info = s->u.block.info;
	BlockView v;
	bool sugar = info && block_view(scratch(p), s, &v);
	indent_to(b, indent);
	if (sugar && info->anonymous) {
		sb_puts(b, "with T.block():\n");
	} else {
		sb_puts(b, "with T.block(");
		put_string_literal(b, s->u.block.name);
		sb_puts(b, "):\n");
	}
	if (!sugar) {
		pblock(p, s->u.block.body, indent + 1);
		return;
	}
	int mark = p->nbinds;
	piters(p, info, &v, indent + 1);
	if (v.where)
		pcall_stmt(p, "T.where", v.where, indent + 1);
	/* the declarations as written while the statements are the ones they
	 * were checked against; after a rewrite, the accesses themselves */
	bool decls = v.inner == info->decl_inner;
	int nr = info->nreads, nw = info->nwrites;
	const BufRegion *rs = info->reads, *ws = info->writes;
	if (!decls && (info->has_reads || info->has_writes)) {
		BufRegion *r2, *w2;
		decls = block_access_points(scratch(p), &v, &nr, &r2, &nw, &w2);
		rs = r2;
		ws = w2;
	}
	if (decls && info->has_reads)
		pregions(p, "reads", nr, rs, indent + 1);
	if (decls && info->has_writes)
		pregions(p, "writes", nw, ws, indent + 1);
	if (v.init) {
		indent_to(b, indent + 1);
		sb_puts(b, "with T.init():\n");
		pblock(p, v.init, indent + 2);
	}
	bool header = info->niters || v.where || (decls && (info->has_reads ||
							      info->has_writes)) || v.init;
	if (!header || !stmt_is_empty(v.inner))
		pitems(p, v.inner, indent + 1);
	unbind_to(p, mark);
}

static void pstmt(Printer *p, const Stmt *s, int indent)
{
	StrBuf *b = p->out;
	switch (s->kind) {
	case ST_SEQ: pitems(p, s, indent); return;
	case ST_FOR: pfor(p, s, indent); return;
	case ST_IF: pif(p, s, indent, false); return;
	case ST_STORE: pstore(p, s, indent); return;
	case ST_ASSUME: pcall_stmt(p, "T.assume", s->u.expr, indent); return;
	case ST_EVAL: pcall_stmt(p, "T.evaluate", s->u.expr, indent); return;
	case ST_ALLOC: palloc(p, s, indent); return;
	case ST_BLOCK: pblock_stmt(p, s, indent); return;
	case ST_LET: plet(p, s, indent); return;
	case ST_PASS:
		indent_to(b, indent);
		sb_puts(b, "pass\n");
		return;
	case ST_COUNT: break;
	}
	indent_to(b, indent);
	sb_puts(b, "pass  # unknown statement\n");
}

/* ---------- functions and modules ---------- */

static void pbuffer_type(Printer *p, const Buffer *buf)
{
	bool extras = buf->scope != SCOPE_GLOBAL || buf->naxis_separators;
	sb_puts(p->out, extras ? "T.Buffer(" : "T.Buffer[");
	pshape(p, buf, "(", ")");
	sb_printf(p->out, ", \"%s\"", dtype_name(buf->dtype));
	if (buf->scope != SCOPE_GLOBAL)
		sb_printf(p->out, ", scope=\"%s\"", scope_name(buf->scope));
	paxis_separators(p->out, buf);
	sb_puts(p->out, extras ? ")" : "]");
}

static void pparam(Printer *p, const Param *prm)
{
	StrBuf *b = p->out;
	switch (prm->kind) {
	case PARAM_BUFFER:
		sb_printf(b, "%s: ", buf_name(p, prm->buf));
		pbuffer_type(p, prm->buf);
		return;
	case PARAM_SCALAR:
		sb_printf(b, "%s: T.%s", var_name(p, prm->var),
			  dtype_name(prm->var->dtype));
		return;
	case PARAM_HANDLE:
		sb_printf(b, "%s: T.handle", var_name(p, prm->var));
		return;
	}
}

static void pmatch_buffer(Printer *p, const Param *prm, int indent)
{
	const Buffer *buf = prm->buf;
	indent_to(p->out, indent);
	sb_printf(p->out, "%s = T.match_buffer(%s, ", buf_name(p, buf),
		  var_name(p, prm->var));
	pshape(p, buf, "(", ")");
	sb_printf(p->out, ", \"%s\"", dtype_name(buf->dtype));
	if (buf->scope != SCOPE_GLOBAL)
		sb_printf(p->out, ", scope=\"%s\"", scope_name(buf->scope));
	paxis_separators(p->out, buf);
	sb_puts(p->out, ")\n");
}

/* Parameters are bound first, so body names that clash with them get
 * renamed rather than shadowing them. */
static void pfunc(Printer *p, const Func *f, int indent)
{
	StrBuf *b = p->out;
	int mark = p->nbinds;
	for (int i = 0; i < f->nparams; i++) {
		const Param *prm = &f->params[i];
		if (prm->var)
			bind_param(p, prm->var, prm->var->name);
		if (prm->buf)
			bind_param(p, prm->buf, prm->buf->name);
	}
	indent_to(b, indent);
	sb_puts(b, "@T.prim_func\n");
	indent_to(b, indent);
	sb_printf(b, "def %s(", f->name);
	for (int i = 0; i < f->nparams; i++) {
		if (i)
			sb_puts(b, ", ");
		pparam(p, &f->params[i]);
	}
	sb_puts(b, "):\n");
	bool any_match = false;
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == PARAM_HANDLE && f->params[i].buf) {
			pmatch_buffer(p, &f->params[i], indent + 1);
			any_match = true;
		}
	/* the match_buffer lines may be the whole body */
	if (f->body && !(any_match && stmt_is_empty(f->body))) {
		pblock(p, f->body, indent + 1);
	} else if (!any_match) {
		indent_to(b, indent + 1);
		sb_puts(b, "pass\n");
	}
	unbind_to(p, mark);
}

/* ---------- entry points ---------- */

void print_expr_to(StrBuf *b, const Expr *e)
{
	Printer p = {.out = b};
	pexpr(&p, e, PREC_OR);
	printer_free(&p);
}

void print_stmt_to(StrBuf *b, const Stmt *s, int indent)
{
	Printer p = {.out = b};
	pblock(&p, s, indent);
	printer_free(&p);
}

char *print_expr(const Expr *e)
{
	StrBuf b = {0};
	print_expr_to(&b, e);
	return sb_take(&b);
}

char *print_stmt(const Stmt *s, int indent)
{
	StrBuf b = {0};
	print_stmt_to(&b, s, indent);
	return sb_take(&b);
}

char *print_func(const Func *f)
{
	StrBuf b = {0};
	Printer p = {.out = &b};
	pfunc(&p, f, 0);
	printer_free(&p);
	return sb_take(&b);
}

char *print_module(const Module *m)
{
	StrBuf b = {0};
	Printer p = {.out = &b};
	if (!m->name && m->nfuncs == 1) {
		pfunc(&p, m->funcs[0], 0);
	} else {
		sb_printf(&b, "@I.ir_module\nclass %s:\n",
			  m->name ? m->name : "Module");
		for (int i = 0; i < m->nfuncs; i++) {
			if (i)
				sb_puts(&b, "\n");
			pfunc(&p, m->funcs[i], 1);
		}
		if (m->nfuncs == 0)
			sb_puts(&b, "    pass\n");
	}
	printer_free(&p);
	return sb_take(&b);
}
