/* rewrites/cache.h — cache_read and cache_write: stage a buffer through a
 * new allocated buffer of the same shape around one block (or the whole
 * function), semantics.md section 4. */
#ifndef VS_REWRITES_CACHE_H
#define VS_REWRITES_CACHE_H

#include "rewrites/rewrite.h"

typedef struct CacheArgs {
	const char *buffer; /* the buffer to stage */
	const char *block;  /* NULL: the function body after its entry facts */
	const char *scope;  /* "global" | "local" | "shared"; NULL: the buffer's */
	const char *name;   /* the new buffer (left-hand side); NULL: BUF_SCOPE */
	bool write;	    /* cache_write (else cache_read) */
	/* TVM's consumer_blocks=: the blocks that read the cache (0: every
	 * access of `block`). cache_read stages around the first of them
	 * and `block` only names the buffer; cache_write stages around
	 * `block` and the others read the cache after its copy-out. */
	int nconsumers;
	const char **consumers;
} CacheArgs;

RwStatus rw_cache(RwCtx *c, const CacheArgs *args);

/* ---------- shared with reindex (rewrites/reindex.c) ---------- */

/* base, or base_1, base_2, ...: a name no block of f has. */
const char *rw_unique_block_name(Arena *a, const Func *f, const char *base);
/* "global" | "local" | "shared" and back. */
bool rw_scope_from_name(const char *s, BufferScope *out);
const char *rw_scope_name(BufferScope s);
/* The body `root` with the statement at sc replaced by `staged` (an
 * allocation); the statements after it in its sequence move into the
 * allocation's body, so the printed text parses back the same. */
Stmt *rw_place_staged(Arena *a, Stmt *root, const StmtCtx *sc, Stmt *staged);
/* parallel.no_race / vectorize.no_race again for every labelled loop
 * around sc, as it stands in `out` (the copies a stage adds run in it). */
void rw_race_rechecks(RwCtx *c, const StmtCtx *sc, const Func *out);

#endif
