/* kernel/analysis/stmt_map.h — rebuilding a statement tree bottom-up:
 * every leaf statement (store, assume, eval, pass) is offered to a
 * callback, every loop's kind may be changed; unchanged subtrees are
 * shared. The lowering passes and the annotation proofs use it. */
#ifndef VS_ANALYSIS_STMT_MAP_H
#define VS_ANALYSIS_STMT_MAP_H

#include "kernel/ir.h"

typedef struct StmtMap {
	Arena *a;
	/* the replacement of a store, assume, eval or pass (the statement
	 * itself to keep it); NULL keeps every leaf */
	Stmt *(*leaf)(struct StmtMap *m, Stmt *s);
	/* the kind a loop gets; NULL keeps every kind */
	ForKind (*loop_kind)(struct StmtMap *m, const Stmt *loop);
	void *ud; /* for the callbacks */
} StmtMap;

Stmt *an_map_stmt(StmtMap *m, Stmt *s);

#endif
