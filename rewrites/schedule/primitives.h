/* rewrites/schedule/primitives.h — the one table of schedule primitives:
 * each row gives a primitive's name, its arguments (kind, default, which
 * may come by position), the C API function that calls it and what it
 * proves. The script reader checks a call's arguments against its row and
 * dispatches on the row's id (a switch over PrimId, so a row without a
 * handler does not compile); the API checks its string arguments with
 * prim_check_string; `vsched help primitives` prints prim_doc_markdown(),
 * and a test checks that the README's table is that text.
 *
 * Adding a primitive: add its PrimId, its row in prim_table
 * (primitives.c), its case in run_prims.c's dispatch, and, if it has a C
 * API function, name it in the row, declare it in vsched.h, check its
 * strings with prim_check_string / api_check and call it in
 * tests/test_api.c; then paste `vsched help primitives` into the README. */
#ifndef VS_REWRITES_PRIMITIVES_H
#define VS_REWRITES_PRIMITIVES_H

#include <stdbool.h>

typedef enum {
	PRIM_SPLIT,
	PRIM_SPLIT_TVM,
	PRIM_FUSE,
	PRIM_REORDER,
	PRIM_PARALLEL,
	PRIM_VECTORIZE,
	PRIM_UNROLL,
	PRIM_TRANSFORM_LAYOUT,
	PRIM_TRANSFORM_LAYOUT_TVM,
	PRIM_TRANSFORM_BLOCK_LAYOUT,
	PRIM_SEQUENTIAL_BUFFER_ACCESS,
	PRIM_REMOVE_BRANCHING_THROUGH_OVERCOMPUTE,
	PRIM_REMOVE_OVERCOMPUTE_THROUGH_BRANCHING,
	PRIM_SIMPLIFY,
	PRIM_REMOVE_NO_OP,
	PRIM_HOIST_EXPRESSION,
	PRIM_REDUCE_LOOP_EXTENTS,
	PRIM_MERGE_ADJACENT_LOOPS,
	PRIM_FISSION,
	PRIM_MERGE_CONDITIONALS,
	PRIM_CACHE_READ,
	PRIM_CACHE_WRITE,
	PRIM_CACHE_READ_TVM,
	PRIM_CACHE_WRITE_TVM,
	PRIM_REINDEX,
	PRIM_REINDEX_CACHE_READ,
	PRIM_REINDEX_CACHE_WRITE,
	PRIM_COMPUTE_AT,
	PRIM_REVERSE_COMPUTE_AT,
	PRIM_DECOMPOSE_REDUCTION,
	PRIM_RFACTOR,
	PRIM_ADD_UNIT_LOOP,
	PRIM_LIFT_ALLOC,
	PRIM_GET_BLOCK,
	PRIM_GET_LOOPS,
	PRIM_GET_CHILD_BLOCKS,
	PRIM_GET_PRODUCERS,
	PRIM_GET_CONSUMERS,
	PRIM_WORK_ON,
	PRIM_FLOAT_MODE,
	PRIM_COUNT
} PrimId;

/* What an argument is; the names (loop .. new name) are only looked up
 * (a new name: only bound), never read as script text. */
typedef enum {
	PK_LOOP,
	PK_LOOPS, /* any number of loops, by position */
	PK_BLOCK,
	PK_BLOCKS, /* a list of blocks */
	PK_BLOCK_OR_LOOP,
	PK_BUFFER,
	PK_BUFFER_INDEX, /* TVM's: K, ("read"|"write", K), or a buffer name */
	PK_FUNC,
	PK_NAME,  /* a block's name to look up, or a name for what is made */
	PK_SCOPE, /* a storage scope: "global", "local", "shared" */
	PK_INT,
	PK_INTS,
	PK_BOOL,
	PK_WORD,  /* one of the row's words */
	PK_WORDS, /* the row's words joined with | */
	PK_MAP,	  /* a lambda (the API: its text, parsed alone) */
	PK_VALUE, /* a pad value: a number, None, T.undef(), an expression or a lambda */
} PrimArgKind;

enum {
	PA_POSITIONAL_ONLY = 1, /* no keyword form (merge_adjacent_loops' loops) */
	PA_API_ONLY = 2,	/* the script takes it from the left of '=' */
	PA_ALIAS = 4,		/* another keyword for the argument before; not documented */
};

#define PRIM_MAX_ARGS 8

typedef struct PrimArg {
	const char *name;
	PrimArgKind kind;
	const char *def; /* the default as documented; NULL: required */
	unsigned flags;
	const char *words; /* PK_WORD, PK_WORDS: "guard|perfect|cut|cut_and_guard" */
} PrimArg;

typedef struct PrimSpec {
	PrimId id;
	const char *name; /* the script's sch.NAME */
	bool tvm_form;	  /* TVM's form of a primitive vsched also writes its own way */
	int npos;	  /* the first npos arguments may come by position; -1: loops only */
	PrimArg args[PRIM_MAX_ARGS];
	/* the C API functions ("vs_split, vs_split_tail"), or NULL: scripts only */
	const char *api;
	const char *doc; /* what a committed step has proven */
} PrimSpec;

extern const PrimSpec prim_table[];
extern const int prim_count;

/* The row of sch.NAME in vsched's form (tvm_form false) or TVM's, or
 * NULL. A name with only one form has it under either. */
const PrimSpec *prim_find(const char *name, bool tvm_form);
/* The row of an id (every id has one). */
const PrimSpec *prim_spec(PrimId id);
/* The argument `name` of a row (keyword or alias), or NULL. */
const PrimArg *prim_arg(const PrimSpec *p, const char *name);

/* A string given for argument `arg` of `p`: a name must be one (no
 * spaces, quotes, brackets, commas, ';' or '='), a word one of the row's
 * words (PK_WORDS: joined with |). Maps and values are left to their
 * parsers. NULL when it is fine, else why not ("split: tail must be one
 * of guard, perfect, cut, cut_and_guard, not \"x\""), malloc'ed. */
char *prim_check_string(const PrimSpec *p, const PrimArg *arg, const char *value);

/* The README's table of primitives (markdown), malloc'ed. */
char *prim_doc_markdown(void);

#endif
