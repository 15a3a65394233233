/* kernel/parse_int.h — private to the kernel-language parser (kernel/parse*.c):
 * the Parser state, the one-line token cursor (static inline), call
 * arguments, and the helpers the parser's files share. Shared helpers carry
 * the ps_ prefix; grammar productions keep their parse_ names. What the rest
 * of the project sees is kernel/parse.h. */
#ifndef VS_KERNEL_PARSE_INT_H
#define VS_KERNEL_PARSE_INT_H

#include <string.h>

#include "kernel/lex.h"
#include "kernel/parse.h"

typedef enum { BIND_VAR, BIND_BUF } BindKind;

typedef struct Binding {
	const char *name;
	BindKind kind;
	Var *var;
	Buffer *buf;
} Binding;

/* A loop around the statement being parsed: T.axis.remap takes its
 * domain from it. */
typedef struct LoopScope {
	Var *var;
	Expr *min, *extent;
} LoopScope;

/* The header of the block whose top-level statements are being parsed
 * (parse_block.c): iter vars, T.where, T.init, T.reads / T.writes. */
typedef struct BlockCtx {
	BlockIter *iters;
	int niters, capiters;
	Expr *where;
	Stmt *init;
	bool has_reads, has_writes;
	BufRegion *reads, *writes;
	int nreads, nwrites, capreads, capwrites;
	bool body_started; /* a statement of the block's own was parsed */
	Span first_stmt;   /* where it was */
} BlockCtx;

typedef struct Parser {
	Arena *a;
	const Source *src;
	DiagList *d;
	Token *toks;
	int ntoks, pos;
	bool failed;
	int depth;
	Binding *binds;
	int nbinds, capbinds;
	const ParseScope *scope; /* standalone expressions: the outer names */
	bool allow_handle;       /* parsing T.match_buffer's arguments */
	/* the function being parsed */
	Param *params;
	int nparams;
	bool in_func_top; /* statements directly in the function body */
	LoopScope *loops; /* enclosing loops, innermost last */
	int nloops, caploops;
	BlockCtx *blk;      /* the block whose top level is being parsed */
	BlockCtx *blk_next; /* handed to the next suite parse_suite opens */
	bool in_iter_decl;  /* pushing the lets of a block iter declaration */
	int nguards;        /* enclosing `if` suites */
	/* flat views `V = T.Buffer(n, data=X.data)` (parse.c): an access
	 * V[k] is X at k in row-major order */
	int nviews, capviews;
	Buffer **view, **view_of;
	/* `x = T.float32()` in a body: variables for a T.Let to bind */
	Var **letdecl;
	int nletdecl, capletdecl;
	/* views of a region `A0 = T.match_buffer(A[...], ...)` in a block
	 * (parse_subregion.c) */
	struct SubView *subviews;
	int nsubviews, capsubviews;
} Parser;

/* The buffer that view b shows, or NULL when b is no view. */
Buffer *ps_view_target(const Parser *p, const Buffer *b);
/* The indices of X (= ps_view_target(b)) for the flat index k. */
Expr **ps_view_indices(Parser *p, const Buffer *x, Expr *k, Span sp);

/* ---------- the token cursor ---------- */

static inline Token *peek(Parser *p) { return &p->toks[p->pos]; }

static inline Token *peek_at(Parser *p, int k)
{
	int i = p->pos + k;
	return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static inline Token *next(Parser *p)
{
	Token *t = &p->toks[p->pos];
	if (p->pos < p->ntoks - 1)
		p->pos++;
	return t;
}

static inline Token *prev(Parser *p) { return &p->toks[p->pos > 0 ? p->pos - 1 : 0]; }

static inline const char *found(Parser *p) { return tok_describe(p->a, peek(p)); }

static inline bool accept(Parser *p, const char *s)
{
	if (!tok_is(peek(p), s))
		return false;
	next(p);
	return true;
}

static inline bool at_kind(Parser *p, TokKind k) { return peek(p)->kind == k; }

/* items (n in use, room for *cap) with room for one more: when full, an
 * arena copy of twice the size (first_cap when there was none). */
static inline void *grow(Arena *a, void *items, int n, int *cap, int first_cap,
			 size_t size)
{
	if (n < *cap)
		return items;
	int ncap = *cap ? *cap * 2 : first_cap;
	void *bigger = arena_alloc(a, size * (size_t)ncap);
	if (n)
		memcpy(bigger, items, size * (size_t)n);
	*cap = ncap;
	return bigger;
}

/* ---------- parse_cursor.c: expecting tokens, errors, spans ---------- */

/* Only the first error is reported; it sets p->failed. */
void ps_error_at(Parser *p, Span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool ps_expect(Parser *p, const char *s, const char *what);
const char *ps_expect_name(Parser *p, const char *what);
bool ps_expect_newline(Parser *p, const char *what);
bool ps_at_t_name(Parser *p, const char *name);
Span ps_span_from(Parser *p, const Token *first);
int ps_matching(Parser *p, int at);
bool ps_skip_bracketed(Parser *p);
bool ps_paren_is_tuple(Parser *p);

/* ---------- parse_scope.c: names ---------- */

void ps_bind(Parser *p, const char *name, Var *v, Buffer *b);
bool ps_lookup(Parser *p, const char *name, Var **v, Buffer **b);

/* ---------- parse_dtype.c: operand dtypes ---------- */

bool ps_is_literal(const Expr *e);
bool ps_int_fits(int64_t v, DType t);
void ps_retype_void(Expr *e, DType t);
Expr *ps_literal_as(Parser *p, Expr *e, DType t);
Expr *ps_convert(Parser *p, Expr *e, DType t);
bool ps_is_handle(Parser *p, const Expr *e);
bool ps_unify(Parser *p, Expr **x, Expr **y);
Expr *ps_make_bin(Parser *p, BinOp op, Expr *x, Expr *y, Span sp);
bool ps_check_int_expr(Parser *p, Expr *e, const char *what);
bool ps_check_bool_expr(Parser *p, Expr *e, const char *what);
Expr *ps_finish_expr(Expr *e);
bool ps_dtype_from_string(Parser *p, const char *s, Span sp, DType *out);

/* ---------- parse_args.c: call arguments ---------- */

typedef enum { VAL_EXPR, VAL_STR, VAL_LIST, VAL_DICT } ValKind;

typedef struct Val {
	ValKind kind;
	const char *kw; /* NULL if positional */
	Token *tok;     /* first token of the value */
	Span span;
	Expr *e;         /* VAL_EXPR */
	const char *str; /* VAL_STR */
	int n;           /* VAL_LIST */
	Expr **items;
	/* VAL_EXPR with e NULL: a whole buffer, `B` or `B.data` (buf_data) */
	Buffer *buf;
	bool buf_data;
} Val;

typedef struct Args {
	int n;
	Val *v;
	Token *open;
	const char *callee; /* for messages: "T.alloc_buffer" */
} Args;

bool parse_expr_list(Parser *p, const char *close, int *n, Expr ***items);
bool parse_args(Parser *p, const char *callee, const char *close, Args *out);
/* Opaque calls (kernel/parse_opaque.c): T.call_extern, T.tvm_access_ptr,
 * T.address_of ... by name; the call's arguments are parsed. */
bool ps_is_opaque_name(const char *name);
Expr *ps_build_opaque(Parser *p, const char *name, Args *args, Span sp);
bool ps_check_args(Parser *p, const Args *args, int min_pos, int max_pos,
		   const char *const *kws);
Val *ps_arg(const Args *args, int pos, const char *kw);
Expr *ps_val_expr(Parser *p, Val *v, const char *what);
bool ps_val_string(Parser *p, Val *v, const char *what, const char **out);
bool ps_val_dtype(Parser *p, Val *v, DType *out);
bool ps_val_shape(Parser *p, Val *v, int *n, Expr ***shape);
bool ps_val_axis_separators(Parser *p, Val *v, Buffer *b);

/* ---------- parse_expr.c: expressions ---------- */

Expr *parse_expr(Parser *p);
Expr *parse_load(Parser *p, Buffer *b, Token *name_tok);
bool ps_find_op(const Token *t, const char *const *spellings,
		const BinOp *ops, BinOp *op);

/* ---------- parse_stmt.c: statements ---------- */

Stmt *parse_suite(Parser *p, const char *what, bool func_top);

/* ---------- parse_block.c: blocks with iter vars ---------- */

/* `with T.block("name"):` (or T.block()), the `with` consumed and
 * T.block at peek. */
Stmt *ps_parse_block(Parser *p, Token *with_tok);
/* `with T.init():` inside a block header, the `with` consumed. */
bool ps_parse_init(Parser *p, Token *with_tok);
/* T.where / T.reads / T.writes / T.block_attr at peek (T.<fn>). */
bool ps_block_header_call(Parser *p, const char *fn);
bool ps_is_block_header_call(const char *fn);
/* `vi, vj = T.axis.remap(...)` / `v = T.axis.spatial(...)` at peek: true
 * if the statement is one (*is); the new lets (body NULL) go to lets. */
bool ps_at_iter_decl(Parser *p);
int ps_parse_iter_decl(Parser *p, Stmt ***lets);

/* ---------- parse.c: declarations ---------- */

Stmt *parse_alloc(Parser *p, Token *first, const char *callee);
Stmt *parse_allocate(Parser *p, Token *first);
Stmt *parse_allocate_const(Parser *p, Token *first, Stmt ***inits, int *ninit);
bool parse_free_var(Parser *p, Token *first, DType t);
bool parse_match_buffer(Parser *p, Token *first);
/* buffer_from_args: the buffer `name` of T.Buffer-style arguments. */
Buffer *ps_buffer_from_args(Parser *p, const Args *args, int off, const Token *name,
			    Span missing);
/* One region `B[lo:hi, i]` (parse_block.c), B at peek. */
bool ps_parse_region(Parser *p, BufRegion *r);

/* ---------- parse_subregion.c: T.match_buffer of a region in a block ---------- */

/* View `view` shows the region of `src` that starts at lo (src->ndim
 * entries); its dimensions are src's last view->ndim ones. */
typedef struct SubView {
	Buffer *view, *src;
	Expr **lo;
} SubView;

const SubView *ps_subview(const Parser *p, const Buffer *b);
/* The buffer whose cells b shows: b itself unless b is a view. */
Buffer *ps_subview_source(const Parser *p, Buffer *b);
/* The indices into s->src of the access s->view[idx]. */
Expr **ps_subview_indices(Parser *p, const SubView *s, Expr **idx, Span sp);
/* Region r of s->view rewritten as the same cells of s->src. */
void ps_subview_region(Parser *p, const SubView *s, BufRegion *r);
/* `B.elem_offset`, `B.strides[k]`: B at prev(p), '.' at peek. */
Expr *ps_buffer_attr(Parser *p, Buffer *b, Token *name);
/* `A0 = T.match_buffer(A[...], ...)`: A at peek. */
bool ps_match_subregion(Parser *p, Token *first);
void parser_init(Parser *p, Arena *a, const Source *src, DiagList *d,
		 TokenList *tl);

#endif
