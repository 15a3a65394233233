/* smt/pcache.h — internal to smt/: the persistent proof cache (pcache.c),
 * an SQLite database DIR/proofs.sqlite3 of proven and refuted verdicts
 * keyed by the query's structural key and the solver's name and version.
 * Safe for several processes at once; never fatal: a cache that cannot be
 * used is reported in the warnings and the run goes on without it. */
#ifndef VS_SMT_PCACHE_H
#define VS_SMT_PCACHE_H

#include "smt/qhash.h"
#include "smt/raw.h"

typedef struct PCache PCache;

/* Open (creating DIR and the database if needed); NULL only when out of
 * memory. A database that is not one (garbage, a corrupted header) is
 * moved aside to proofs.sqlite3.corrupt and made anew, with a warning. */
PCache *pcache_open(const char *dir);
void pcache_close(PCache *p);

/* The verdict stored for key, if its row is intact: true and *out
 * filled. A row whose checksum fails, or whose model names a symbol past
 * nsyms, is deleted, counted in the warnings and missed. Thread-safe. */
bool pcache_get(PCache *p, const QKey *key, int nsyms, RawResult *out);

/* Store a proven or refuted verdict (anything else is ignored: an unknown
 * depends on the limits and the machine). Thread-safe; a busy or failed
 * write only means the entry is not stored. */
void pcache_put(PCache *p, const QKey *key, int nsyms, const RawResult *r);

/* What went wrong so far, one line each ("vsched: warning: cache DIR:
 * ..."), or NULL. Owned by p. */
const char *pcache_warnings(PCache *p);

#endif
