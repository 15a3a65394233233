/* kernel/ptrmap.h — a map from pointers to pointer-sized values (open
 * addressing, malloc'ed): memo tables keyed by IR nodes, which are
 * immutable and live as long as their arena. */
#ifndef VS_PTRMAP_H
#define VS_PTRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct PtrMap {
	size_t cap, n;
	const void **keys;
	uintptr_t *vals;
} PtrMap; /* zero-initialised: empty */

bool ptrmap_get(const PtrMap *m, const void *key, uintptr_t *val);
/* false only when memory runs out (the map is unchanged) */
bool ptrmap_put(PtrMap *m, const void *key, uintptr_t val);
void ptrmap_free(PtrMap *m);

#endif
