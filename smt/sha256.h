/* smt/sha256.h — SHA-256 (FIPS 180-4), for the proof log's hashes of the
 * kernel and schedule copies it keeps (smt/log.c). Self-contained: no
 * library linked here offers one. */
#ifndef VS_SMT_SHA256_H
#define VS_SMT_SHA256_H

#include <stddef.h>

/* The digest of data[0 .. n) as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char out[65]);

#endif
