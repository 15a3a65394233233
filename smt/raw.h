/* smt/raw.h — internal to smt/: a verdict and its model outside any
 * arena (solve.c's worker output and in-memory cache entries, pcache.c's
 * rows). A model refers to symbols by position in the query's symbol
 * table: two queries with the same key (qhash.h) have the same layout,
 * so a cached model maps onto the Vars and Buffers of whichever
 * obligation asks. */
#ifndef VS_SMT_RAW_H
#define VS_SMT_RAW_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/obligation.h"

typedef struct RawValue {
	bool is_float;
	int64_t ival;
	double fval;
	char *text;
} RawValue;

typedef struct RawCell {
	int sym; /* the SYM_BUFFER, by position in the symbol table */
	int nidx;
	int64_t *idx;
	RawValue val;
} RawCell;

typedef struct RawResult {
	Verdict verdict;
	char *reason;
	bool has_model;
	int nvals;
	int *val_sym;
	RawValue *vals;
	int ncells;
	RawCell *cells;
} RawResult;

void raw_free(RawResult *r);

#endif
