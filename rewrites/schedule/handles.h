/* rewrites/schedule/handles.h — the names a schedule script binds on the
 * left of '=' (TVM's BlockRV and LoopRV): a loop handle names one loop by
 * its variable (the Var the rewrites keep while the loop stays: reorder,
 * parallel, compute_at of another block ...), a block handle names a block
 * by its name (unique in a function), a list holds handles (get_loops,
 * split). A handle whose loop or block a committed call removed is kept
 * with the reason, so that a later use is a clear error. Internal to
 * rewrites/schedule/. */
#ifndef VS_REWRITES_SCHEDULE_HANDLES_H
#define VS_REWRITES_SCHEDULE_HANDLES_H

#include "kernel/ir.h"

typedef enum { VAL_LOOP, VAL_BLOCK, VAL_LIST } ValKind;

typedef struct Value {
	ValKind kind;
	const char *func;  /* the function the loop or block is in */
	Var *loop;	   /* VAL_LOOP */
	const char *block; /* VAL_BLOCK */
	int n;		   /* VAL_LIST */
	struct Value **items;
	const char *gone; /* "it was split at line 3"; NULL while it exists */
} Value;

typedef struct HandleBinding {
	const char *name;
	Value *v;
} HandleBinding;

typedef struct HandleEnv {
	Arena *arena;
	int nbinds, capbinds;
	HandleBinding *binds;
	int nvals, capvals;
	Value **vals; /* every loop and block handle made */
} HandleEnv;

Value *hv_loop(HandleEnv *e, const char *func, Var *v);
Value *hv_block(HandleEnv *e, const char *func, const char *name);
Value *hv_list(HandleEnv *e, int n, Value **items);
/* The value bound to `name` (the latest binding), or NULL. */
Value *hv_lookup(const HandleEnv *e, const char *name);
void hv_bind(HandleEnv *e, const char *name, Value *v);

/* The loop name ("i", or "i#2" when several loops share it) that
 * rw_find_loop resolves to the loop of variable v in f; NULL with *why
 * when no loop or more than one has that variable. */
const char *hv_loop_ref(Arena *a, const Func *f, const Var *v, const char **why);

/* After a committed call changed module `before` into `after`: every
 * live handle of a changed function whose loop or block is gone gets
 * `gone` as its reason. */
void hv_update(HandleEnv *e, const Module *before, const Module *after, const char *gone);

/* TVM's get_loops: the loops around block `blk` in f, outermost first, up
 * to the enclosing block or the function body; for a plain block (vsched's
 * block around its nest) followed by the chain of loops it holds. */
int hv_block_loops(Arena *a, const Func *f, const Stmt *blk, Var ***out);
/* The blocks inside s (s excluded) that no other block inside s holds,
 * in program order. */
int hv_child_blocks(Arena *a, const Stmt *s, Stmt ***out);
/* The loop statement of variable v in f, or NULL. */
Stmt *hv_find_loop(Arena *a, const Func *f, const Var *v);
/* Loops (variables) and blocks of `after` that `before` does not have, in
 * program order. */
int hv_new_loops(Arena *a, const Func *before, const Func *after, Var ***out);
int hv_new_blocks(Arena *a, const Func *before, const Func *after, Stmt ***out);
/* The buffers block `blk` reads (write: stores into), in order of first
 * access (evaluation order). */
int hv_block_buffers(Arena *a, const Stmt *blk, bool write, Buffer ***out);
/* The other blocks of f (neither inside blk nor around it) that write a
 * buffer blk reads (producers) or read a buffer blk writes (consumers). */
int hv_neighbours(Arena *a, const Func *f, const Stmt *blk, bool producers, Stmt ***out);

#endif
