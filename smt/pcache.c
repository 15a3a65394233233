/* smt/pcache.c — the persistent proof cache (pcache.h).
 *
 * One table, proofs(qkey, solver, verdict, nsyms, reason, model,
 * checksum), primary key (qkey, solver): qkey is the 16-byte structural
 * key of the query (qhash.c), solver "z3 4.8.12". Only proven and refuted
 * verdicts are stored: they are facts about the query, whatever the time
 * and resource limits; an unknown is not (it depends on the limits, the
 * load of the machine), so it is never stored and the limits need not be
 * part of the key.
 *
 * Never trusted blindly:
 * - each row carries a SipHash-128 checksum of its whole content (key,
 *   solver, verdict, symbol count, reason, model) under a key of its own:
 *   a row changed on disk (a flipped byte, a hand edit that does not
 *   recompute it) fails it, is ignored and deleted, and the query is
 *   solved again; a model that names a symbol past the query's table, or
 *   that cannot be decoded, is treated the same way;
 * - a file that SQLite does not accept as a database (overwritten with
 *   garbage, a corrupted page) is moved aside to proofs.sqlite3.corrupt
 *   and made anew, with a warning;
 * - a refuted verdict from the cache still goes through the rewrite's
 *   counterexample replay on the reference interpreter, which confirms or
 *   does not confirm it concretely;
 * - the proof log records every obligation, cached ones with their text,
 *   and `vsched log check` re-solves every logged query with the solver
 *   binary, so a run with a warm cache is as checkable as a cold one.
 * What a checksum cannot catch is a writer who recomputes it: the cache
 * directory is as trusted as the binary that writes it, and `log check`
 * is the independent check.
 *
 * Several processes: WAL journal (readers never block the writer), a
 * busy timeout of 5 s, every write one transaction (INSERT OR REPLACE of
 * one row: two processes that solve the same query write the same
 * verdict). A write that still finds the database busy is dropped. */
#include "smt/pcache.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smt/smt.h"

static const uint64_t C0 = 0x7673636865642d63ULL, C1 = 0x6865636b73756d21ULL; /* "vsched-checksum!" */

struct PCache {
	pthread_mutex_t mu;
	char *dir, *path;
	sqlite3 *db;
	sqlite3_stmt *get, *put, *del;
	bool recovered; /* set aside once this run; a second failure disables */
	int nbad_rows;
	char *events; /* file-level warnings, one line each */
	char *warnings;
};

/* ---------- byte buffers: the model blob and the checksum input ---------- */

typedef struct Buf {
	uint8_t *b;
	size_t n, cap;
	bool oom;
} Buf;

static void put_bytes(Buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *nb = realloc(b->b, cap);
		if (!nb) {
			b->oom = true;
			return;
		}
		b->b = nb;
		b->cap = cap;
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u64(Buf *b, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	put_bytes(b, x, 8);
}

static void put_str(Buf *b, const char *s)
{
	/* 0 = NULL, else length + 1 */
	put_u64(b, s ? strlen(s) + 1 : 0);
	if (s)
		put_bytes(b, s, strlen(s));
}

static void put_value(Buf *b, const RawValue *v)
{
	uint64_t bits;
	memcpy(&bits, &v->fval, sizeof bits);
	put_u64(b, v->is_float);
	put_u64(b, (uint64_t)v->ival);
	put_u64(b, bits);
	put_str(b, v->text);
}

static void model_blob(Buf *b, const RawResult *r)
{
	put_u64(b, r->has_model);
	put_u64(b, (uint64_t)r->nvals);
	for (int i = 0; i < r->nvals; i++) {
		put_u64(b, (uint64_t)(int64_t)r->val_sym[i]);
		put_value(b, &r->vals[i]);
	}
	put_u64(b, (uint64_t)r->ncells);
	for (int i = 0; i < r->ncells; i++) {
		const RawCell *c = &r->cells[i];
		put_u64(b, (uint64_t)(int64_t)c->sym);
		put_u64(b, (uint64_t)c->nidx);
		for (int k = 0; k < c->nidx; k++)
			put_u64(b, (uint64_t)c->idx[k]);
		put_value(b, &c->val);
	}
}

typedef struct Rd {
	const uint8_t *p;
	size_t n, at;
	bool bad;
} Rd;

static uint64_t get_u64(Rd *r)
{
	if (r->bad || r->n - r->at < 8) {
		r->bad = true;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | r->p[r->at + (size_t)i];
	r->at += 8;
	return v;
}

/* a count that must fit what is left of the blob (each item >= 8 bytes) */
static int get_count(Rd *r)
{
	uint64_t v = get_u64(r);
	if (r->bad || v > (r->n - r->at) / 8) {
		r->bad = true;
		return 0;
	}
	return (int)v;
}

static char *get_str(Rd *r)
{
	uint64_t n = get_u64(r);
	if (r->bad || n == 0)
		return NULL;
	n--;
	if (n > r->n - r->at) {
		r->bad = true;
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p + r->at, n);
	s[n] = 0;
	r->at += n;
	return s;
}

static void get_value(Rd *r, RawValue *v)
{
	uint64_t bits;
	v->is_float = get_u64(r) != 0;
	v->ival = (int64_t)get_u64(r);
	bits = get_u64(r);
	memcpy(&v->fval, &bits, sizeof bits);
	v->text = get_str(r);
}

static bool read_model(const void *blob, size_t n, int nsyms, RawResult *out)
{
	Rd r = {blob, n, 0, false};
	out->has_model = get_u64(&r) != 0;
	int nv = get_count(&r);
	out->val_sym = calloc((size_t)nv + 1, sizeof *out->val_sym);
	out->vals = calloc((size_t)nv + 1, sizeof *out->vals);
	if (!out->val_sym || !out->vals)
		return false;
	for (int i = 0; i < nv && !r.bad; i++) {
		int64_t sym = (int64_t)get_u64(&r);
		if (sym < 0 || sym >= nsyms)
			r.bad = true;
		out->val_sym[i] = (int)sym;
		get_value(&r, &out->vals[i]);
		out->nvals = i + 1;
	}
	int nc = get_count(&r);
	out->cells = calloc((size_t)nc + 1, sizeof *out->cells);
	if (!out->cells)
		return false;
	for (int i = 0; i < nc && !r.bad; i++) {
		RawCell *c = &out->cells[i];
		int64_t sym = (int64_t)get_u64(&r);
		if (sym < 0 || sym >= nsyms)
			r.bad = true;
		c->sym = (int)sym;
		int nidx = get_count(&r);
		c->idx = malloc(sizeof(int64_t) * ((size_t)nidx + 1));
		if (!c->idx)
			return false;
		for (int k = 0; k < nidx; k++)
			c->idx[k] = (int64_t)get_u64(&r);
		c->nidx = nidx;
		get_value(&r, &c->val);
		out->ncells = i + 1;
	}
	return !r.bad && r.at == r.n;
}

static QKey row_checksum(const QKey *key, const char *solver, int verdict, int nsyms,
			 const char *reason, const void *model, size_t nmodel)
{
	Buf b = {0};
	put_u64(&b, key->w[0]);
	put_u64(&b, key->w[1]);
	put_str(&b, solver);
	put_u64(&b, (uint64_t)verdict);
	put_u64(&b, (uint64_t)nsyms);
	put_str(&b, reason);
	put_u64(&b, nmodel);
	put_bytes(&b, model, nmodel);
	QKey k = {{0, 0}};
	if (!b.oom)
		vs_siphash128(b.b, b.n, C0, C1, &k);
	free(b.b);
	return k;
}

/* ---------- the database ---------- */

static void add_event(PCache *p, const char *fmt, const char *detail)
{
	char *line = NULL;
	if (asprintf(&line, fmt, p->dir, detail ? detail : "") < 0)
		return;
	size_t old = p->events ? strlen(p->events) : 0;
	char *e = realloc(p->events, old + strlen(line) + 2);
	if (e) {
		strcpy(e + old, line);
		strcat(e, "\n");
		p->events = e;
	}
	free(line);
}

static void db_close(PCache *p)
{
	sqlite3_finalize(p->get);
	sqlite3_finalize(p->put);
	sqlite3_finalize(p->del);
	p->get = p->put = p->del = NULL;
	if (p->db)
		sqlite3_close(p->db);
	p->db = NULL;
}

static bool is_corruption(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* Open and prepare; the SQLite result code of the first failure. */
static int db_open(PCache *p)
{
	int rc = sqlite3_open_v2(p->path, &p->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_busy_timeout(p->db, 5000);
	/* journal_mode=WAL answers with a row; a busy answer is not fatal
	 * (another process is switching it, or it already is WAL) */
	rc = sqlite3_exec(p->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
	if (is_corruption(rc))
		return rc;
	rc = sqlite3_exec(p->db,
			  "PRAGMA synchronous=NORMAL;"
			  "CREATE TABLE IF NOT EXISTS proofs("
			  " qkey BLOB NOT NULL, solver TEXT NOT NULL,"
			  " verdict INTEGER NOT NULL, nsyms INTEGER NOT NULL,"
			  " reason TEXT, model BLOB NOT NULL, checksum BLOB NOT NULL,"
			  " PRIMARY KEY (qkey, solver)) WITHOUT ROWID",
			  NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_prepare_v2(p->db,
				"SELECT verdict, nsyms, reason, model, checksum FROM proofs"
				" WHERE qkey = ?1 AND solver = ?2",
				-1, &p->get, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(p->db,
					"INSERT OR REPLACE INTO proofs(qkey, solver, verdict, nsyms,"
					" reason, model, checksum) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
					-1, &p->put, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(p->db, "DELETE FROM proofs WHERE qkey = ?1 AND solver = ?2",
					-1, &p->del, NULL);
	return rc;
}

static void remove_side_files(const char *path)
{
	char *s = NULL;
	if (asprintf(&s, "%s-wal", path) >= 0) {
		unlink(s);
		free(s);
	}
	if (asprintf(&s, "%s-shm", path) >= 0) {
		unlink(s);
		free(s);
	}
}

/* The database is not one: move it aside and start a new one. */
static void set_aside(PCache *p, int rc)
{
	db_close(p);
	if (p->recovered) {
		add_event(p, "vsched: warning: cache %s: still unusable after rebuilding it (%s); "
			     "running without it", sqlite3_errstr(rc));
		return;
	}
	p->recovered = true;
	char *aside = NULL;
	if (asprintf(&aside, "%s.corrupt", p->path) < 0)
		aside = NULL;
	if (!aside || rename(p->path, aside) != 0)
		unlink(p->path);
	free(aside);
	remove_side_files(p->path);
	add_event(p, "vsched: warning: cache %s: proofs.sqlite3 is corrupted (%s); "
		     "moved aside to proofs.sqlite3.corrupt and rebuilt", sqlite3_errstr(rc));
	int again = db_open(p);
	if (again != SQLITE_OK) {
		add_event(p, "vsched: warning: cache %s: cannot rebuild it (%s); running without it",
			  sqlite3_errstr(again));
		db_close(p);
	}
}

PCache *pcache_open(const char *dir)
{
	PCache *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	p->dir = strdup(dir);
	if (!p->dir || asprintf(&p->path, "%s/proofs.sqlite3", dir) < 0) {
		p->path = NULL;
		pcache_close(p);
		return NULL;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		add_event(p, "vsched: warning: cache %s: cannot create the directory (%s); "
			     "running without it", strerror(errno));
		return p;
	}
	int rc = db_open(p);
	if (is_corruption(rc)) {
		set_aside(p, rc);
	} else if (rc != SQLITE_OK) {
		add_event(p, "vsched: warning: cache %s: cannot open it (%s); running without it",
			  p->db ? sqlite3_errmsg(p->db) : sqlite3_errstr(rc));
		db_close(p);
	}
	return p;
}

void pcache_close(PCache *p)
{
	if (!p)
		return;
	db_close(p);
	pthread_mutex_destroy(&p->mu);
	free(p->dir);
	free(p->path);
	free(p->events);
	free(p->warnings);
	free(p);
}

static void bind_key(sqlite3_stmt *st, const QKey *key, const char *solver)
{
	uint8_t k[16];
	for (int i = 0; i < 16; i++)
		k[i] = (uint8_t)(key->w[i / 8] >> (8 * (i % 8)));
	sqlite3_bind_blob(st, 1, k, 16, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, solver, -1, SQLITE_STATIC);
}

static void delete_row(PCache *p, const QKey *key, const char *solver)
{
	bind_key(p->del, key, solver);
	sqlite3_step(p->del);
	sqlite3_reset(p->del);
	sqlite3_clear_bindings(p->del);
}

bool pcache_get(PCache *p, const QKey *key, int nsyms, RawResult *out)
{
	if (!p)
		return false;
	const char *solver = smt_solver_version();
	bool hit = false, bad = false;
	pthread_mutex_lock(&p->mu);
	if (!p->db)
		goto done;
	bind_key(p->get, key, solver);
	int rc = sqlite3_step(p->get);
	if (rc == SQLITE_ROW) {
		int verdict = sqlite3_column_int(p->get, 0);
		int rows_nsyms = sqlite3_column_int(p->get, 1);
		const char *reason = (const char *)sqlite3_column_text(p->get, 2);
		const void *model = sqlite3_column_blob(p->get, 3);
		size_t nmodel = (size_t)sqlite3_column_bytes(p->get, 3);
		const void *sum = sqlite3_column_blob(p->get, 4);
		int nsum = sqlite3_column_bytes(p->get, 4);
		QKey want = row_checksum(key, solver, verdict, rows_nsyms, reason, model, nmodel);
		uint8_t w[16];
		for (int i = 0; i < 16; i++)
			w[i] = (uint8_t)(want.w[i / 8] >> (8 * (i % 8)));
		memset(out, 0, sizeof *out);
		bad = nsum != 16 || !sum || memcmp(sum, w, 16) != 0 || rows_nsyms != nsyms ||
		      (verdict != VERDICT_PROVEN && verdict != VERDICT_REFUTED) ||
		      !read_model(model ? model : "", nmodel, nsyms, out);
		if (!bad) {
			out->verdict = (Verdict)verdict;
			out->reason = reason ? strdup(reason) : NULL;
			hit = true;
		} else {
			raw_free(out);
		}
	}
	sqlite3_reset(p->get);
	sqlite3_clear_bindings(p->get);
	if (bad) {
		p->nbad_rows++;
		delete_row(p, key, solver);
	} else if (is_corruption(rc)) {
		set_aside(p, rc);
	}
done:
	pthread_mutex_unlock(&p->mu);
	return hit;
}

void pcache_put(PCache *p, const QKey *key, int nsyms, const RawResult *r)
{
	if (!p || (r->verdict != VERDICT_PROVEN && r->verdict != VERDICT_REFUTED))
		return;
	const char *solver = smt_solver_version();
	Buf m = {0};
	model_blob(&m, r);
	if (m.oom) {
		free(m.b);
		return;
	}
	QKey sum = row_checksum(key, solver, (int)r->verdict, nsyms, r->reason, m.b, m.n);
	uint8_t s[16];
	for (int i = 0; i < 16; i++)
		s[i] = (uint8_t)(sum.w[i / 8] >> (8 * (i % 8)));
	pthread_mutex_lock(&p->mu);
	if (p->db) {
		bind_key(p->put, key, solver);
		sqlite3_bind_int(p->put, 3, (int)r->verdict);
		sqlite3_bind_int(p->put, 4, nsyms);
		if (r->reason)
			sqlite3_bind_text(p->put, 5, r->reason, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(p->put, 5);
		sqlite3_bind_blob(p->put, 6, m.b ? (const void *)m.b : "", (int)m.n, SQLITE_TRANSIENT);
		sqlite3_bind_blob(p->put, 7, s, 16, SQLITE_TRANSIENT);
		int rc = sqlite3_step(p->put);
		sqlite3_reset(p->put);
		sqlite3_clear_bindings(p->put);
		if (is_corruption(rc))
			set_aside(p, rc);
	}
	pthread_mutex_unlock(&p->mu);
	free(m.b);
}

const char *pcache_warnings(PCache *p)
{
	if (!p)
		return NULL;
	pthread_mutex_lock(&p->mu);
	free(p->warnings);
	p->warnings = NULL;
	char *rows = NULL;
	if (p->nbad_rows &&
	    asprintf(&rows, "vsched: warning: cache %s: %d corrupted entr%s (checksum or content) "
			    "ignored, deleted and solved again\n",
		     p->dir, p->nbad_rows, p->nbad_rows == 1 ? "y" : "ies") < 0)
		rows = NULL;
	if (p->events || rows) {
		if (asprintf(&p->warnings, "%s%s", p->events ? p->events : "", rows ? rows : "") < 0)
			p->warnings = NULL;
	}
	free(rows);
	pthread_mutex_unlock(&p->mu);
	return p->warnings;
}
