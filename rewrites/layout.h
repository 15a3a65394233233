/* rewrites/layout.h — transform_layout's arguments and the helpers other
 * primitives share with it: finding blocks, whether a statement reads or
 * writes a buffer, and placing a stage after a buffer's last write. */
#ifndef VS_REWRITES_LAYOUT_H
#define VS_REWRITES_LAYOUT_H

#include "rewrites/rewrite.h"

typedef enum {
	LAYOUT_PAD_NONE,   /* no pad_value (or None): padding may not be touched */
	LAYOUT_PAD_INT,	   /* pad_int */
	LAYOUT_PAD_FLOAT,  /* pad_float */
	LAYOUT_PAD_UNDEF,  /* T.undef() */
	LAYOUT_PAD_LAMBDA, /* text range: lambda of the physical indices */
	LAYOUT_PAD_EXPR,   /* text range: another constant expression */
} LayoutPadArg;

typedef struct LayoutArgs {
	const char *buffer;
	const char *block; /* NULL, or a block that must access the buffer */
	const char *func;  /* NULL: every function that has the parameter */
	const Source *src; /* the script: lambdas are parsed per function */
	int map_start, map_end;
	int inv_start, inv_end; /* inverse=; empty range: derive it */
	LayoutPadArg pad_kind;
	int64_t pad_int;
	double pad_float;
	int pad_start, pad_end;
	Span pad_span;
	/* the pad value's own text (the C API passes it as a separate
	 * string, so its errors are positioned in that string); NULL: src */
	const Source *pad_src;
} LayoutArgs;

RwStatus rw_transform_layout(RwCtx *c, const LayoutArgs *args);

/* TVM's transform_block_layout(block, index_map) (rewrites/block_layout.c):
 * the block's iteration space remapped by the lambda in
 * src->text[map_start, map_end) onto new loops; obligations layout.*,
 * block_layout.init, block_layout.order. */
RwStatus rw_transform_block_layout(RwCtx *c, const char *block, const Source *src, int map_start,
				   int map_end);

/* Whether some T.assume in s mentions v (a size variable nothing else
 * bounds). */
bool rw_assumed(const Stmt *s, const Var *v);
/* The block named `name` in f, or NULL. */
Stmt *rw_find_block(const Func *f, const char *name);
/* The buffer named `name` in f: a parameter (*is_param) or the first
 * allocation of that name; NULL if none. */
Buffer *rw_find_buffer(const Func *f, const char *name, bool *is_param);
/* Whether s writes b (writes_only) or accesses it at all. */
bool rw_stmt_accesses(const Stmt *s, const Buffer *b, bool writes_only);
/* s with `stage` right after the statement that last writes b. */
Stmt *rw_insert_after_last_write(Arena *a, Stmt *s, const Buffer *b, Stmt *stage);

#endif
