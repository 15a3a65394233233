/* smt/qhash.h — internal to smt/: the 128-bit structural key of an
 * encoded query (qhash.c; the argument for 128 bits is there) and the
 * SipHash-128 it is made with (also the row checksums of pcache.c). */
#ifndef VS_SMT_QHASH_H
#define VS_SMT_QHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct QKey {
	uint64_t w[2];
} QKey;

struct SmtEncoding;

/* SipHash-2-4 with 128-bit output under key (k0, k1). */
void vs_siphash128(const void *data, size_t len, uint64_t k0, uint64_t k1, QKey *out);

/* The key of an encoded query: its symbol table (kinds and declarations,
 * in order), its assertions, the count of range facts: equal keys
 * exactly when the SMT-LIB texts are equal (up to SipHash collisions).
 * false if the walk met a term the encoder never makes or ran out of
 * memory (the query is then solved without the caches). */
bool smt_encoding_key(const struct SmtEncoding *e, QKey *out);

#endif
