/* rewrites/reindex.h — TVM's reindex, reindex_cache_read and
 * reindex_cache_write: stage the one buffer access of a block through a
 * new buffer indexed by the block's iter vars (proofs/reindex.md). */
#ifndef VS_REWRITES_REINDEX_H
#define VS_REWRITES_REINDEX_H

#include "kernel/parse.h"
#include "rewrites/rewrite.h"

typedef struct ReindexArgs {
	const char *block;  /* a block with iter vars */
	const char *buffer; /* the buffer it reads (write: writes) */
	bool write;
	/* reindex_cache_*: the storage scope and the index map (a lambda of
	 * the block's iter vars, text range in src). NULL scope: reindex (the
	 * new buffer is indexed by the iter vars the access uses). */
	const char *scope;
	const Source *src;
	int map_start, map_end;
} ReindexArgs;

RwStatus rw_reindex(RwCtx *c, const ReindexArgs *args);

#endif
