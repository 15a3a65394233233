/* smt/qhash.c — the cache key of a query: a 128-bit structural hash of
 * its Z3 terms, computed by one memoised walk over the DAG (Z3 terms are
 * hash-consed, so a shared subterm is hashed once), instead of printing
 * the query as SMT-LIB text.
 *
 * Every node is serialised injectively (a tag, fixed-width integers,
 * length-prefixed strings, the 16-byte digests of its children) and the
 * bytes are hashed with SipHash-2-4 in its 128-bit mode under a fixed key.
 * Two queries get the same key only if they are the same query (same
 * declarations in the same order, same assertions term for term, same
 * count of range facts) or if SipHash-128 collides; for n distinct queries the
 * chance of any collision is about n^2 / 2^129 (1e-20 for a billion
 * queries), far below the chance of a hardware fault, so the key alone
 * stands for the query, in memory and on disk. Nothing here trusts the
 * key against an adversary who writes the cache: that is what the row
 * checksums and `vsched log check` (which re-solves the logged text) are
 * for (smt/pcache.c). */
#include "smt/qhash.h"

#include <stdlib.h>
#include <string.h>

#include "smt/encode.h"

/* ---------- SipHash-2-4, 128-bit output ---------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                         \
	do {                                                                             \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);              \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                 \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                 \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);              \
	} while (0)

static uint64_t load64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void vs_siphash128(const void *data, size_t len, uint64_t k0, uint64_t k1, QKey *out)
{
	const uint8_t *in = data;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	v1 ^= 0xee;
	size_t whole = len - len % 8;
	for (size_t i = 0; i < whole; i += 8) {
		uint64_t m = load64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	uint64_t b = (uint64_t)len << 56;
	for (size_t i = 0; i < len % 8; i++)
		b |= (uint64_t)in[whole + i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xee;
	SIPROUND; SIPROUND; SIPROUND; SIPROUND;
	out->w[0] = v0 ^ v1 ^ v2 ^ v3;
	v1 ^= 0xdd;
	SIPROUND; SIPROUND; SIPROUND; SIPROUND;
	out->w[1] = v0 ^ v1 ^ v2 ^ v3;
}

/* ---------- node records ---------- */

static const uint64_t K0 = 0x7673636865642d71ULL, K1 = 0x75657279206b6579ULL; /* "vsched-query key" */

typedef struct Rec {
	uint8_t *b;
	size_t n, cap;
	bool oom;
} Rec;

static void rec_bytes(Rec *r, const void *p, size_t n)
{
	if (r->oom)
		return;
	if (r->n + n > r->cap) {
		size_t cap = r->cap ? r->cap : 128;
		while (cap < r->n + n)
			cap *= 2;
		uint8_t *b = realloc(r->b, cap);
		if (!b) {
			r->oom = true;
			return;
		}
		r->b = b;
		r->cap = cap;
	}
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void rec_u64(Rec *r, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	rec_bytes(r, b, 8);
}

static void rec_str(Rec *r, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	rec_u64(r, n);
	rec_bytes(r, s ? s : "", n);
}

static void rec_key(Rec *r, const QKey *k)
{
	rec_u64(r, k->w[0]);
	rec_u64(r, k->w[1]);
}

/* Memo: Z3 ast id -> digest. Z3 numbers terms and declarations (sorts
 * and function declarations) from two separate counters, hence two memos;
 * an id is unique among the live objects of its kind, and the encoding
 * keeps its terms alive during the walk. */
typedef struct Memo {
	unsigned *ids; /* id + 1; 0 = empty */
	QKey *keys;
	size_t cap, n;
} Memo;

typedef struct Walk {
	Z3_context c;
	Memo terms, decls;
	bool failed;
} Walk;

static size_t slot_of(unsigned id, size_t cap) { return ((size_t)id * 0x9E3779B97F4A7C15ULL) & (cap - 1); }

static bool memo_get(Memo *m, unsigned id, QKey *out)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->ids[i] == 0)
			return false;
		if (m->ids[i] == id + 1) {
			*out = m->keys[i];
			return true;
		}
	}
}

static bool memo_put(Memo *m, unsigned id, const QKey *k)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		unsigned *ids = calloc(cap, sizeof *ids);
		QKey *keys = malloc(cap * sizeof *keys);
		if (!ids || !keys) {
			free(ids);
			free(keys);
			return false;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->ids[i])
				continue;
			size_t j = slot_of(m->ids[i] - 1, cap);
			while (ids[j])
				j = (j + 1) & (cap - 1);
			ids[j] = m->ids[i];
			keys[j] = m->keys[i];
		}
		free(m->ids);
		free(m->keys);
		m->ids = ids;
		m->keys = keys;
		m->cap = cap;
	}
	size_t i = slot_of(id, m->cap);
	while (m->ids[i])
		i = (i + 1) & (m->cap - 1);
	m->ids[i] = id + 1;
	m->keys[i] = *k;
	m->n++;
	return true;
}

static void finish(Walk *w, Memo *m, Rec *r, unsigned id, QKey *out)
{
	if (r->oom) {
		w->failed = true;
		memset(out, 0, sizeof *out);
	} else {
		vs_siphash128(r->b, r->n, K0, K1, out);
		if (!memo_put(m, id, out))
			w->failed = true;
	}
	free(r->b);
}

static void rec_symbol(Walk *w, Rec *r, Z3_symbol s)
{
	if (Z3_get_symbol_kind(w->c, s) == Z3_INT_SYMBOL) {
		rec_u64(r, 'i');
		rec_u64(r, (uint64_t)(int64_t)Z3_get_symbol_int(w->c, s));
	} else {
		rec_u64(r, 's');
		rec_str(r, Z3_get_symbol_string(w->c, s));
	}
}

static QKey hash_ast(Walk *w, Z3_ast a);
static QKey hash_decl(Walk *w, Z3_func_decl d);

static QKey hash_sort(Walk *w, Z3_sort s)
{
	QKey k;
	unsigned id = Z3_get_sort_id(w->c, s);
	if (memo_get(&w->decls, id, &k))
		return k;
	Rec r = {0};
	Z3_sort_kind kind = Z3_get_sort_kind(w->c, s);
	rec_u64(&r, 'S');
	rec_u64(&r, (uint64_t)kind);
	rec_symbol(w, &r, Z3_get_sort_name(w->c, s));
	switch (kind) {
	case Z3_BV_SORT: rec_u64(&r, Z3_get_bv_sort_size(w->c, s)); break;
	case Z3_FLOATING_POINT_SORT:
		rec_u64(&r, Z3_fpa_get_ebits(w->c, s));
		rec_u64(&r, Z3_fpa_get_sbits(w->c, s));
		break;
	case Z3_ARRAY_SORT: {
		QKey d = hash_sort(w, Z3_get_array_sort_domain(w->c, s));
		QKey g = hash_sort(w, Z3_get_array_sort_range(w->c, s));
		rec_key(&r, &d);
		rec_key(&r, &g);
		break;
	}
	case Z3_BOOL_SORT: case Z3_INT_SORT: case Z3_REAL_SORT:
	case Z3_ROUNDING_MODE_SORT: case Z3_UNINTERPRETED_SORT: break;
	case Z3_DATATYPE_SORT: case Z3_RELATION_SORT: case Z3_FINITE_DOMAIN_SORT:
	case Z3_SEQ_SORT: case Z3_RE_SORT: case Z3_UNKNOWN_SORT:
		w->failed = true; /* the encoder makes none of these */
		break;
	}
	finish(w, &w->decls, &r, id, &k);
	return k;
}

static void rec_params(Walk *w, Rec *r, Z3_func_decl d)
{
	unsigned n = Z3_get_decl_num_parameters(w->c, d);
	rec_u64(r, n);
	for (unsigned i = 0; i < n; i++) {
		Z3_parameter_kind pk = Z3_get_decl_parameter_kind(w->c, d, i);
		rec_u64(r, (uint64_t)pk);
		switch (pk) {
		case Z3_PARAMETER_INT: rec_u64(r, (uint64_t)(int64_t)Z3_get_decl_int_parameter(w->c, d, i)); break;
		case Z3_PARAMETER_DOUBLE: {
			double v = Z3_get_decl_double_parameter(w->c, d, i);
			uint64_t bits;
			memcpy(&bits, &v, sizeof bits);
			rec_u64(r, bits);
			break;
		}
		case Z3_PARAMETER_RATIONAL: rec_str(r, Z3_get_decl_rational_parameter(w->c, d, i)); break;
		case Z3_PARAMETER_SYMBOL: rec_symbol(w, r, Z3_get_decl_symbol_parameter(w->c, d, i)); break;
		case Z3_PARAMETER_SORT: {
			QKey k = hash_sort(w, Z3_get_decl_sort_parameter(w->c, d, i));
			rec_key(r, &k);
			break;
		}
		case Z3_PARAMETER_AST: {
			QKey k = hash_ast(w, Z3_get_decl_ast_parameter(w->c, d, i));
			rec_key(r, &k);
			break;
		}
		case Z3_PARAMETER_FUNC_DECL: {
			/* also what Z3 calls an "external" parameter (the value
			 * of an IEEE numeral), which has no declaration: such
			 * nodes are hashed as their text (hash_ast) */
			Z3_func_decl f = Z3_get_decl_func_decl_parameter(w->c, d, i);
			if (!f) {
				w->failed = true;
				break;
			}
			QKey k = hash_decl(w, f);
			rec_key(r, &k);
			break;
		}
		}
	}
}

static QKey hash_decl(Walk *w, Z3_func_decl d)
{
	QKey k;
	unsigned id = Z3_get_func_decl_id(w->c, d);
	if (memo_get(&w->decls, id, &k))
		return k;
	Rec r = {0};
	rec_u64(&r, 'D');
	rec_u64(&r, (uint64_t)Z3_get_decl_kind(w->c, d));
	rec_symbol(w, &r, Z3_get_decl_name(w->c, d));
	unsigned n = Z3_get_domain_size(w->c, d);
	rec_u64(&r, n);
	for (unsigned i = 0; i < n; i++) {
		QKey s = hash_sort(w, Z3_get_domain(w->c, d, i));
		rec_key(&r, &s);
	}
	QKey rs = hash_sort(w, Z3_get_range(w->c, d));
	rec_key(&r, &rs);
	rec_params(w, &r, d);
	finish(w, &w->decls, &r, id, &k);
	return k;
}

static QKey hash_ast(Walk *w, Z3_ast a)
{
	QKey k;
	unsigned id = Z3_get_ast_id(w->c, a);
	if (memo_get(&w->terms, id, &k))
		return k;
	Rec r = {0};
	Z3_ast_kind kind = Z3_get_ast_kind(w->c, a);
	/* IEEE and rounding-mode constants are applications whose value is
	 * an opaque parameter: they count as numerals here */
	if (kind == Z3_APP_AST && Z3_is_numeral_ast(w->c, a))
		kind = Z3_NUMERAL_AST;
	rec_u64(&r, 'A');
	rec_u64(&r, (uint64_t)kind);
	switch (kind) {
	case Z3_NUMERAL_AST: {
		Z3_sort s = Z3_get_sort(w->c, a);
		Z3_sort_kind sk = Z3_get_sort_kind(w->c, s);
		QKey sh = hash_sort(w, s);
		rec_key(&r, &sh);
		/* integers, rationals and bit-vectors print exactly as
		 * numerals; anything else (an IEEE constant) as its term,
		 * which is exact in SMT-LIB2 (a leaf: cheap) */
		if (sk == Z3_INT_SORT || sk == Z3_REAL_SORT || sk == Z3_BV_SORT)
			rec_str(&r, Z3_get_numeral_string(w->c, a));
		else
			rec_str(&r, Z3_ast_to_string(w->c, a));
		break;
	}
	case Z3_APP_AST: {
		Z3_app app = Z3_to_app(w->c, a);
		QKey dk = hash_decl(w, Z3_get_app_decl(w->c, app));
		QKey sh = hash_sort(w, Z3_get_sort(w->c, a));
		rec_key(&r, &dk);
		rec_key(&r, &sh);
		unsigned n = Z3_get_app_num_args(w->c, app);
		rec_u64(&r, n);
		for (unsigned i = 0; i < n; i++) {
			QKey ck = hash_ast(w, Z3_get_app_arg(w->c, app, i));
			rec_key(&r, &ck);
		}
		break;
	}
	case Z3_VAR_AST: case Z3_QUANTIFIER_AST: case Z3_SORT_AST:
	case Z3_FUNC_DECL_AST: case Z3_UNKNOWN_AST:
		w->failed = true; /* the encoder makes no binders */
		break;
	}
	finish(w, &w->terms, &r, id, &k);
	return k;
}

bool smt_encoding_key(const SmtEncoding *e, QKey *out)
{
	Walk w = {.c = e->ctx};
	Rec r = {0};
	/* not the float mode: it shapes the terms, which are hashed; two
	 * queries with the same terms are the same query in either mode */
	rec_str(&r, "vsched query v1");
	rec_u64(&r, (uint64_t)e->nsyms);
	for (int i = 0; i < e->nsyms && !w.failed; i++) {
		QKey d = hash_decl(&w, e->syms[i].decl);
		rec_u64(&r, (uint64_t)e->syms[i].kind);
		rec_key(&r, &d);
	}
	rec_u64(&r, (uint64_t)e->nasserts);
	rec_u64(&r, (uint64_t)e->nranges);
	for (int i = 0; i < e->nasserts && !w.failed; i++) {
		QKey k = hash_ast(&w, e->asserts[i]);
		rec_key(&r, &k);
	}
	bool ok = !w.failed && !r.oom && !smt_z3_error(NULL);
	if (ok)
		vs_siphash128(r.b, r.n, K0, K1, out);
	free(r.b);
	free(w.terms.ids);
	free(w.terms.keys);
	free(w.decls.ids);
	free(w.decls.keys);
	return ok;
}
