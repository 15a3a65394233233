/* kernel/ptrmap.c — see ptrmap.h. Keys are never NULL. */
#include "kernel/ptrmap.h"

#include <stdlib.h>
#include <string.h>

static size_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

bool ptrmap_get(const PtrMap *m, const void *k, uintptr_t *v)
{
	if (!m->cap || !k)
		return false;
	for (size_t i = ptr_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return false;
		if (m->keys[i] == k) {
			*v = m->vals[i];
			return true;
		}
	}
}

static bool grow(PtrMap *m)
{
	PtrMap big = {m->cap ? m->cap * 2 : 64, 0, NULL, NULL};
	big.keys = calloc(big.cap, sizeof *big.keys);
	big.vals = calloc(big.cap, sizeof *big.vals);
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			ptrmap_put(&big, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = big;
	return true;
}

bool ptrmap_put(PtrMap *m, const void *k, uintptr_t v)
{
	if (!k)
		return false;
	if ((m->n + 1) * 2 > m->cap && !grow(m))
		return false;
	size_t i = ptr_hash(k) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = k;
	m->vals[i] = v;
	return true;
}

void ptrmap_free(PtrMap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}
