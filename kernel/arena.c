/* kernel/arena.c — bump allocation for the IR and everything built from it,
 * plus diagnostics (lists of messages with source spans) and their
 * clang-style rendering. Memory is released only with the whole arena. */
#include "kernel/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaChunk {
	ArenaChunk *next;
	size_t cap, used;
	_Alignas(16) unsigned char data[];
};

void arena_init(Arena *a)
{
	memset(a, 0, sizeof *a);
	a->next_var_id = 1;
}

void arena_free(Arena *a)
{
	ArenaChunk *c = a->head;
	while (c) {
		ArenaChunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = NULL;
	a->used_total = 0;
}

void vs_out_of_memory(size_t size)
{
	/* no allocation here: stdio on an unbuffered stream */
	fprintf(stderr, "vsched: out of memory (allocating %zu bytes); the work was too large "
			"for the memory available\n", size);
	abort();
}

void *arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	ArenaChunk *c = a->head;
	if (!c || c->cap - c->used < size) {
		size_t cap = 64 * 1024;
		if (size > cap / 4)
			cap = size; /* big requests get a chunk of their own */
		c = malloc(sizeof *c + cap);
		if (!c)
			vs_out_of_memory(sizeof *c + cap); /* nothing sensible to return */
		c->cap = cap;
		c->used = 0;
		if (size == cap && a->head) {
			/* keep the current chunk on top for small requests */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += size;
	a->used_total += size;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_vprintf(Arena *a, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

/* ---------- diagnostics ---------- */

void diag_init(DiagList *d, Arena *a)
{
	memset(d, 0, sizeof *d);
	d->arena = a;
}

void diag_vadd(DiagList *d, DiagLevel level, Span span, const char *fmt,
	       va_list ap)
{
	Diag *g = arena_alloc(d->arena, sizeof *g);
	g->level = level;
	g->span = span;
	g->message = arena_vprintf(d->arena, fmt, ap);
	if (d->last)
		d->last->next = g;
	else
		d->first = g;
	d->last = g;
	if (level == DIAG_ERROR)
		d->nerrors++;
}

void diag_add(DiagList *d, DiagLevel level, Span span, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(d, level, span, fmt, ap);
	va_end(ap);
}

void sb_put(StrBuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p)
			vs_out_of_memory(cap);
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_printf(StrBuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < (int)sizeof small) {
		sb_put(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big)
		vs_out_of_memory((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_put(b, big, (size_t)n);
	free(big);
}

char *sb_take(StrBuf *b)
{
	if (!b->s)
		sb_put(b, "", 0);
	char *s = b->s;
	b->s = NULL;
	b->n = b->cap = 0;
	return s;
}

static const char *level_name(DiagLevel l)
{
	switch (l) {
	case DIAG_ERROR: return "error";
	case DIAG_WARNING: return "warning";
	case DIAG_NOTE: return "note";
	}
	return "error";
}

/* The source line `line` (1-based) of text, as [start, end). */
static bool find_line(const char *text, int line, const char **start,
		      const char **end)
{
	const char *p = text;
	for (int l = 1; l < line; l++) {
		p = strchr(p, '\n');
		if (!p)
			return false;
		p++;
	}
	*start = p;
	const char *e = strchr(p, '\n');
	*end = e ? e : p + strlen(p);
	return true;
}

static void render_one(StrBuf *b, const Diag *g)
{
	char head[64];
	const Span *sp = &g->span;
	if (sp->src && sp->line > 0) {
		sb_puts(b, sp->src->name ? sp->src->name : "<input>");
		snprintf(head, sizeof head, ":%d:%d: ", sp->line, sp->col);
		sb_puts(b, head);
	}
	sb_puts(b, level_name(g->level));
	sb_puts(b, ": ");
	sb_puts(b, g->message);
	sb_puts(b, "\n");
	const char *ls, *le;
	if (!sp->src || !sp->src->text || sp->line <= 0 ||
	    !find_line(sp->src->text, sp->line, &ls, &le))
		return;
	sb_puts(b, "    ");
	sb_put(b, ls, (size_t)(le - ls));
	sb_puts(b, "\n    ");
	for (int i = 1; i < sp->col && ls + i - 1 < le; i++)
		sb_puts(b, ls[i - 1] == '\t' ? "\t" : " ");
	sb_puts(b, "^");
	for (int i = 1; i < sp->len && i < 200; i++)
		sb_puts(b, "~");
	sb_puts(b, "\n");
}

char *diag_render_one(const Diag *g)
{
	StrBuf b = {0};
	render_one(&b, g);
	return sb_take(&b);
}

char *diag_render(const DiagList *d)
{
	StrBuf b = {0};
	for (const Diag *g = d->first; g; g = g->next)
		render_one(&b, g);
	return sb_take(&b);
}

void *arena_grow(Arena *a, const void *items, int n, int *cap, size_t size)
{
	int grown = *cap > 0 ? 2 * *cap : 8;
	void *copy = arena_alloc(a, size * (size_t)grown);
	if (n > 0)
		memcpy(copy, items, size * (size_t)n);
	*cap = grown;
	return copy;
}
