/* smt/log.c — proof logs (semantics.md section 8): DIR/index.jsonl, one
 * JSON object per rewrite and per obligation, and DIR/ob-NNNN.smt2, each
 * query with a comment header. `log show` summarises a log; `log check`
 * re-runs every logged query with the z3 or cvc5 binary and compares its
 * sat/unsat with the logged verdict. */
#include "smt/smt.h"
#include "smt/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { SOLVER_KILL_MS = 60000 };

static const Span no_span;

/* The DiagList given to proof_log_open serves the open only (callers
 * pass short-lived ones): later write failures are kept here, the first
 * one readable through proof_log_error. */
struct ProofLog {
	char *dir;
	FILE *index;
	int nobligations;
	int nrewrites;
	char *error;
	/* proof_log_capture: nothing is written; the index lines and the
	 * query files (NULL for an obligation without one) are kept here */
	bool capture;
	int nlines;
	char **lines;
	char **queries; /* nobligations entries */
	/* what meta.json says (proof_log_set_meta, proof_log_add_schedule) */
	bool has_meta;
	char *vsched_version, *kernel_name, kernel_sha[65];
	FloatMode float_mode;
	unsigned timeout_ms, rlimit;
	int nschedules;
	char **schedule_names;
	char (*schedule_sha)[65];
	int api_steps;
	int nbuilds;
	int *build_after;
	bool *build_int64;
};

/* The copies of the kernel and the schedules, by position: a log's
 * meta.json names them, but only these names are ever read. */
static void schedule_file_name(int k, char *out, size_t n)
{
	if (k == 0)
		snprintf(out, n, "schedule.sched");
	else
		snprintf(out, n, "schedule-%d.sched", k + 1);
}

/* ---------- writing ---------- */

static void json_string(StrBuf *b, const char *s)
{
	if (!s) {
		sb_puts(b, "null");
		return;
	}
	sb_puts(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_puts(b, "\\\""); break;
		case '\\': sb_puts(b, "\\\\"); break;
		case '\n': sb_puts(b, "\\n"); break;
		case '\r': sb_puts(b, "\\r"); break;
		case '\t': sb_puts(b, "\\t"); break;
		case '\b': sb_puts(b, "\\b"); break;
		case '\f': sb_puts(b, "\\f"); break;
		default:
			if (*p < 0x20)
				sb_printf(b, "\\u%04x", *p);
			else
				sb_put(b, (const char *)p, 1);
		}
	}
	sb_puts(b, "\"");
}

static void json_key(StrBuf *b, const char *key)
{
	sb_puts(b, ",");
	json_string(b, key);
	sb_puts(b, ":");
}

static bool make_dirs(const char *dir)
{
	char *path = strdup(dir);
	if (!path)
		return false;
	bool ok = true;
	for (char *p = path + 1; ok; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST)
			ok = false;
		*p = saved;
		if (saved == '\0')
			break;
	}
	struct stat st;
	ok = ok && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return ok;
}

static char *path_in(const char *dir, const char *file)
{
	char *out = NULL;
	if (asprintf(&out, "%s/%s", dir, file) < 0)
		return NULL;
	return out;
}

/* ob-<digits>.smt2: a query file of a log */
static bool is_query_name(const char *n)
{
	size_t len = strlen(n);
	if (strncmp(n, "ob-", 3) != 0 || len < 9 || strcmp(n + len - 5, ".smt2") != 0)
		return false;
	for (size_t i = 3; i < len - 5; i++)
		if (n[i] < '0' || n[i] > '9')
			return false;
	return true;
}

/* An older log's query files in dir go: the new index lists only its
 * own, and `log check` calls a query file without an entry malformed. */
static bool remove_old_queries(const char *dir, DiagList *d)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		if (d)
			diag_add(d, DIAG_ERROR, no_span, "proof log: cannot list %s: %s",
				 dir, strerror(errno));
		return false;
	}
	bool ok = true;
	for (struct dirent *de; (de = readdir(dp));) {
		/* the older log's meta.json goes too: a log without meta
		 * (written through proof_log_open alone) must not inherit it.
		 * Copies of kernels and schedules stay: meta.json names the
		 * current ones, and the folder may hold the user's own. */
		const char *n = de->d_name;
		if (!is_query_name(n) && strcmp(n, "meta.json") != 0)
			continue;
		char *p = path_in(dir, de->d_name);
		struct stat st;
		if (p && lstat(p, &st) == 0 && S_ISREG(st.st_mode) && unlink(p) != 0) {
			if (d)
				diag_add(d, DIAG_ERROR, no_span,
					 "proof log: cannot remove the older log's %s: %s",
					 p, strerror(errno));
			ok = false;
		}
		free(p);
		if (!ok)
			break;
	}
	closedir(dp);
	return ok;
}

ProofLog *proof_log_open(const char *dir, DiagList *d)
{
	if (!dir || !*dir) {
		if (d)
			diag_add(d, DIAG_ERROR, no_span,
				 "proof log: no directory given");
		return NULL;
	}
	if (!make_dirs(dir)) {
		if (d)
			diag_add(d, DIAG_ERROR, no_span,
				 "proof log: cannot create directory %s: %s",
				 dir, strerror(errno));
		return NULL;
	}
	if (!remove_old_queries(dir, d))
		return NULL;
	ProofLog *l = calloc(1, sizeof *l);
	char *index = path_in(dir, "index.jsonl");
	if (l)
		l->dir = strdup(dir);
	if (l && l->dir && index)
		l->index = fopen(index, "w");
	if (!l || !l->index) {
		if (d)
			diag_add(d, DIAG_ERROR, no_span,
				 "proof log: cannot write %s: %s",
				 index ? index : dir, strerror(errno));
		if (l)
			free(l->dir);
		free(l);
		free(index);
		return NULL;
	}
	free(index);
	return l;
}

static void write_failed(ProofLog *l, const char *what)
{
	if (l->error)
		return;
	if (asprintf(&l->error, "proof log: cannot write %s in %s: %s", what,
		     l->dir, strerror(errno)) < 0)
		l->error = NULL;
	if (!l->error)
		l->error = strdup("proof log: write failed");
}

const char *proof_log_error(const ProofLog *l)
{
	return l ? l->error : NULL;
}

static void *grow_array(void *p, int n, size_t elem)
{
	void *q = realloc(p, elem * (size_t)(n + 1));
	if (!q)
		abort();
	return q;
}

static void write_line(ProofLog *l, StrBuf *b)
{
	sb_puts(b, "}\n");
	char *line = sb_take(b);
	if (l->capture) {
		l->lines = grow_array(l->lines, l->nlines, sizeof *l->lines);
		l->lines[l->nlines++] = line;
		return;
	}
	if (fputs(line, l->index) == EOF || fflush(l->index) != 0)
		write_failed(l, "index.jsonl");
	free(line);
}

void proof_log_rewrite(ProofLog *l, const char *primitive, const char *args,
		       const char *result, const char *reason)
{
	if (!l)
		return;
	StrBuf b = {0};
	sb_puts(&b, "{\"type\":\"rewrite\"");
	json_key(&b, "index");
	sb_printf(&b, "%d", ++l->nrewrites);
	json_key(&b, "primitive");
	json_string(&b, primitive);
	json_key(&b, "args");
	json_string(&b, args);
	json_key(&b, "result");
	json_string(&b, result);
	json_key(&b, "reason");
	json_string(&b, reason);
	write_line(l, &b);
}

static void origin_text(StrBuf *b, Span sp)
{
	if (!sp.src) {
		sb_puts(b, "null");
		return;
	}
	char *s = NULL;
	if (asprintf(&s, "%s:%d:%d", sp.src->name ? sp.src->name : "?",
		     sp.line, sp.col) < 0)
		s = NULL;
	json_string(b, s ? s : "?");
	free(s);
}

/* "n = 3, A[5, 0] = -0.0" */
static void model_text(StrBuf *b, const Model *m)
{
	const char *sep = "";
	for (int i = 0; i < m->nvars; i++) {
		sb_printf(b, "%s%s = %s", sep, m->vars[i].var->name,
			  m->vars[i].val.text);
		sep = ", ";
	}
	for (int i = 0; i < m->ncells; i++) {
		const ModelCell *c = &m->cells[i];
		sb_printf(b, "%s%s[", sep, c->buf->name);
		for (int k = 0; k < c->nidx; k++)
			sb_printf(b, "%s%lld", k ? ", " : "",
				  (long long)c->idx[k]);
		sb_printf(b, "] = %s", c->val.text);
		sep = ", ";
	}
}

static void model_json(StrBuf *b, const Model *m)
{
	if (!m) {
		sb_puts(b, "null");
		return;
	}
	sb_puts(b, "{\"vars\":[");
	for (int i = 0; i < m->nvars; i++) {
		sb_puts(b, i ? ",{\"name\":" : "{\"name\":");
		json_string(b, m->vars[i].var->name);
		json_key(b, "value");
		json_string(b, m->vars[i].val.text);
		sb_puts(b, "}");
	}
	sb_puts(b, "],\"cells\":[");
	for (int i = 0; i < m->ncells; i++) {
		const ModelCell *c = &m->cells[i];
		sb_puts(b, i ? ",{\"buffer\":" : "{\"buffer\":");
		json_string(b, c->buf->name);
		json_key(b, "index");
		sb_puts(b, "[");
		for (int k = 0; k < c->nidx; k++)
			sb_printf(b, "%s%lld", k ? "," : "", (long long)c->idx[k]);
		sb_puts(b, "]");
		json_key(b, "value");
		json_string(b, c->val.text);
		sb_puts(b, "}");
	}
	sb_puts(b, "]}");
}

/* A comment line of the .smt2 header: newlines would end the comment. */
static void comment_line(StrBuf *b, const char *key, const char *value)
{
	sb_printf(b, "; %s: ", key);
	for (const char *p = value ? value : "-"; *p; p++)
		sb_put(b, *p == '\n' || *p == '\r' ? " " : p, 1);
	sb_puts(b, "\n");
}

static void write_query_file(ProofLog *l, const char *file,
			     const Obligation *o, const ObligationResult *r,
			     FloatMode fm, const char *smt2)
{
	StrBuf b = {0};
	sb_printf(&b, "; vsched proof obligation %.*s\n",
		  (int)(strlen(file) - 5), file);
	comment_line(&b, "kind", o->kind);
	comment_line(&b, "statement", o->statement);
	comment_line(&b, "rewrite", o->rewrite);
	if (o->origin.src) {
		char *s = NULL;
		if (asprintf(&s, "%s:%d:%d", o->origin.src->name,
			     o->origin.line, o->origin.col) >= 0) {
			comment_line(&b, "origin", s);
			free(s);
		}
	}
	comment_line(&b, "solver", smt_solver_version());
	comment_line(&b, "float mode", float_mode_name(fm));
	comment_line(&b, "verdict", verdict_name(r->verdict));
	if (r->reason)
		comment_line(&b, "reason", r->reason);
	sb_printf(&b, "; seconds: %.6f%s\n", r->seconds,
		  r->cached ? " (cached)" : "");
	if (r->model) {
		StrBuf m = {0};
		model_text(&m, r->model);
		char *mt = sb_take(&m);
		comment_line(&b, "model", mt);
		free(mt);
	}
	/* the expected answer for the solver that re-checks; a refuted
	 * query also prints its model (produce-models goes before set-logic) */
	switch (r->verdict) {
	case VERDICT_PROVEN: sb_puts(&b, "(set-info :status unsat)\n"); break;
	case VERDICT_REFUTED:
		sb_puts(&b, "(set-option :produce-models true)\n(set-info :status sat)\n");
		break;
	case VERDICT_UNKNOWN: sb_puts(&b, "(set-info :status unknown)\n"); break;
	}
	sb_puts(&b, smt2);
	if (r->verdict == VERDICT_REFUTED)
		sb_puts(&b, "(get-model)\n");
	char *text = sb_take(&b);
	if (l->capture) {
		l->queries[l->nobligations - 1] = text;
		return;
	}
	char *path = path_in(l->dir, file);
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f || fputs(text, f) == EOF)
		write_failed(l, file);
	if (f && fclose(f) != 0)
		write_failed(l, file);
	free(path);
	free(text);
}

void proof_log_obligation(ProofLog *l, const Obligation *o,
			  const ObligationResult *r, FloatMode fm)
{
	if (!l || !o || !r)
		return;
	int id = ++l->nobligations;
	if (l->capture) {
		l->queries = grow_array(l->queries, id - 1, sizeof *l->queries);
		l->queries[id - 1] = NULL;
	}
	char file[32];
	snprintf(file, sizeof file, "ob-%04d.smt2", id);
	/* the solver prints the query only when asked: print it here (the
	 * same encoding, so the same text; NULL if it cannot be encoded) */
	char *own = r->smt2 ? NULL : smt_query_text_dup(o, fm, NULL);
	const char *smt2 = r->smt2 ? r->smt2 : own;
	if (smt2)
		write_query_file(l, file, o, r, fm, smt2);
	const char *version = smt_solver_version();
	const char *space = strchr(version, ' ');
	StrBuf b = {0};
	sb_puts(&b, "{\"type\":\"obligation\"");
	json_key(&b, "id");
	sb_printf(&b, "%d", id);
	json_key(&b, "kind");
	json_string(&b, o->kind);
	json_key(&b, "statement");
	json_string(&b, o->statement);
	json_key(&b, "rewrite");
	json_string(&b, o->rewrite);
	json_key(&b, "origin");
	origin_text(&b, o->origin);
	json_key(&b, "related");
	sb_puts(&b, "[");
	for (int i = 0; i < o->nrelated; i++) {
		if (i)
			sb_puts(&b, ",");
		origin_text(&b, o->related[i]);
	}
	sb_puts(&b, "]");
	json_key(&b, "solver");
	json_string(&b, "z3");
	json_key(&b, "solver_version");
	json_string(&b, space ? space + 1 : version);
	json_key(&b, "float_mode");
	json_string(&b, float_mode_name(fm));
	json_key(&b, "verdict");
	json_string(&b, verdict_name(r->verdict));
	json_key(&b, "reason");
	json_string(&b, r->reason);
	json_key(&b, "seconds");
	sb_printf(&b, "%.6f", r->seconds);
	json_key(&b, "cached");
	sb_puts(&b, r->cached ? "true" : "false");
	json_key(&b, "model");
	model_json(&b, r->verdict == VERDICT_REFUTED ? r->model : NULL);
	json_key(&b, "smt2");
	json_string(&b, smt2 ? file : NULL);
	write_line(l, &b);
	free(own);
}

void proof_log_close(ProofLog *l)
{
	if (!l)
		return;
	if (l->index)
		fclose(l->index);
	for (int i = 0; i < l->nlines; i++)
		free(l->lines[i]);
	free(l->lines);
	for (int i = 0; l->queries && i < l->nobligations; i++)
		free(l->queries[i]);
	free(l->queries);
	for (int i = 0; i < l->nschedules; i++)
		free(l->schedule_names[i]);
	free(l->schedule_names);
	free(l->schedule_sha);
	free(l->build_after);
	free(l->build_int64);
	free(l->vsched_version);
	free(l->kernel_name);
	free(l->error);
	free(l->dir);
	free(l);
}

ProofLog *proof_log_capture(void)
{
	ProofLog *l = calloc(1, sizeof *l);
	if (l)
		l->capture = true;
	return l;
}

/* ---------- where the log came from: meta.json and the copies ---------- */

static void write_file(ProofLog *l, const char *file, const char *text)
{
	if (l->capture)
		return;
	char *path = path_in(l->dir, file);
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f || fputs(text, f) == EOF)
		write_failed(l, file);
	if (f && fclose(f) != 0)
		write_failed(l, file);
	free(path);
}

static void write_meta(ProofLog *l)
{
	const char *version = smt_solver_version();
	const char *space = strchr(version, ' ');
	StrBuf b = {0};
	sb_puts(&b, "{\"type\":\"meta\"");
	json_key(&b, "vsched");
	json_string(&b, l->vsched_version);
	json_key(&b, "z3");
	json_string(&b, space ? space + 1 : version);
	json_key(&b, "float_mode");
	json_string(&b, float_mode_name(l->float_mode));
	json_key(&b, "timeout_ms");
	sb_printf(&b, "%u", l->timeout_ms);
	json_key(&b, "rlimit");
	sb_printf(&b, "%u", l->rlimit);
	json_key(&b, "hash");
	json_string(&b, "sha256");
	json_key(&b, "kernel");
	sb_puts(&b, "{\"name\":");
	json_string(&b, l->kernel_name);
	json_key(&b, "file");
	json_string(&b, "kernel.tir");
	json_key(&b, "sha256");
	json_string(&b, l->kernel_sha);
	sb_puts(&b, "}");
	json_key(&b, "schedules");
	sb_puts(&b, "[");
	for (int i = 0; i < l->nschedules; i++) {
		char file[40];
		schedule_file_name(i, file, sizeof file);
		sb_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		json_string(&b, l->schedule_names[i]);
		json_key(&b, "file");
		json_string(&b, file);
		json_key(&b, "sha256");
		json_string(&b, l->schedule_sha[i]);
		sb_puts(&b, "}");
	}
	sb_puts(&b, "]");
	json_key(&b, "builds");
	sb_puts(&b, "[");
	for (int i = 0; i < l->nbuilds; i++)
		sb_printf(&b, "%s{\"after_schedules\":%d,\"int64_widening\":%s}", i ? "," : "",
			  l->build_after[i], l->build_int64[i] ? "true" : "false");
	sb_puts(&b, "]");
	json_key(&b, "api_steps");
	sb_printf(&b, "%d", l->api_steps);
	sb_puts(&b, "}\n");
	char *text = sb_take(&b);
	write_file(l, "meta.json", text);
	free(text);
}

void proof_log_set_meta(ProofLog *l, const ProofLogMeta *m)
{
	if (!l || !m)
		return;
	free(l->vsched_version);
	free(l->kernel_name);
	l->vsched_version = strdup(m->vsched_version ? m->vsched_version : "?");
	l->kernel_name = strdup(m->kernel_name ? m->kernel_name : "?");
	const char *text = m->kernel_text ? m->kernel_text : "";
	sha256_hex(text, strlen(text), l->kernel_sha);
	l->float_mode = m->float_mode;
	l->timeout_ms = m->timeout_ms;
	l->rlimit = m->rlimit;
	l->has_meta = true;
	write_file(l, "kernel.tir", text);
	write_meta(l);
}

void proof_log_add_schedule(ProofLog *l, const char *name, const char *text)
{
	if (!l || !l->has_meta)
		return;
	int k = l->nschedules;
	l->schedule_names = grow_array(l->schedule_names, k, sizeof *l->schedule_names);
	l->schedule_sha = grow_array(l->schedule_sha, k, sizeof *l->schedule_sha);
	l->schedule_names[k] = strdup(name ? name : "?");
	sha256_hex(text ? text : "", text ? strlen(text) : 0, l->schedule_sha[k]);
	l->nschedules++;
	char file[40];
	schedule_file_name(k, file, sizeof file);
	write_file(l, file, text ? text : "");
	write_meta(l);
}

void proof_log_add_build(ProofLog *l, bool int64_widening)
{
	if (!l || !l->has_meta)
		return;
	l->build_after = grow_array(l->build_after, l->nbuilds, sizeof *l->build_after);
	l->build_int64 = grow_array(l->build_int64, l->nbuilds, sizeof *l->build_int64);
	l->build_after[l->nbuilds] = l->nschedules;
	l->build_int64[l->nbuilds++] = int64_widening;
	write_meta(l);
}

void proof_log_note_api_steps(ProofLog *l, int n)
{
	if (!l || !l->has_meta || n <= 0)
		return;
	l->api_steps += n;
	write_meta(l);
}

/* ---------- reading: a small JSON parser for our own lines ---------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JKind;

typedef struct JVal {
	JKind kind;
	bool b;
	double num;
	char *str;	    /* J_STR */
	int n;		    /* J_ARR, J_OBJ */
	char **keys;	    /* J_OBJ */
	struct JVal *items; /* J_ARR, J_OBJ */
} JVal;

static void jfree(JVal *v)
{
	free(v->str);
	for (int i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		jfree(&v->items[i]);
	}
	free(v->keys);
	free(v->items);
	memset(v, 0, sizeof *v);
}

static void jskip(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n')
		(*p)++;
}

static void put_utf8(StrBuf *b, unsigned cp)
{
	char u[4];
	int n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	sb_put(b, u, (size_t)n);
}

static bool hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return false;
		v = v * 16 + (unsigned)d;
	}
	*out = v;
	return true;
}

static bool jstring(const char **p, char **out)
{
	StrBuf b = {0};
	const char *s = *p + 1; /* past the quote */
	for (;;) {
		char c = *s++;
		if (c == '"')
			break;
		if (c == '\0' || (unsigned char)c < 0x20)
			goto bad;
		if (c != '\\') {
			sb_put(&b, &c, 1);
			continue;
		}
		char e = *s++;
		unsigned cp;
		switch (e) {
		case '"': sb_puts(&b, "\""); break;
		case '\\': sb_puts(&b, "\\"); break;
		case '/': sb_puts(&b, "/"); break;
		case 'n': sb_puts(&b, "\n"); break;
		case 'r': sb_puts(&b, "\r"); break;
		case 't': sb_puts(&b, "\t"); break;
		case 'b': sb_puts(&b, "\b"); break;
		case 'f': sb_puts(&b, "\f"); break;
		case 'u': {
			if (!hex4(s, &cp))
				goto bad;
			s += 4;
			unsigned lo;
			if (cp >= 0xd800 && cp < 0xdc00 && s[0] == '\\' &&
			    s[1] == 'u' && hex4(s + 2, &lo) && lo >= 0xdc00 &&
			    lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			put_utf8(&b, cp);
			break;
		}
		default: goto bad;
		}
	}
	*p = s;
	*out = sb_take(&b);
	return true;
bad:
	free(sb_take(&b));
	return false;
}

static bool jparse(const char **p, JVal *v, int depth);

static bool jcontainer(const char **p, JVal *v, int depth, bool object)
{
	char close = object ? '}' : ']';
	int cap = 0;
	v->kind = object ? J_OBJ : J_ARR;
	(*p)++;
	jskip(p);
	if (**p == close) {
		(*p)++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			JVal *items = realloc(v->items, sizeof *items * (size_t)cap);
			char **keys = object ? realloc(v->keys, sizeof *keys *
									(size_t)cap)
					     : NULL;
			if (items)
				v->items = items;
			if (keys)
				v->keys = keys;
			if (!items || (object && !keys))
				return false;
		}
		char *key = NULL;
		if (object) {
			jskip(p);
			if (**p != '"' || !jstring(p, &key))
				return false;
			jskip(p);
			if (**p != ':') {
				free(key);
				return false;
			}
			(*p)++;
			v->keys[v->n] = key;
		}
		memset(&v->items[v->n], 0, sizeof v->items[v->n]);
		v->n++;
		if (!jparse(p, &v->items[v->n - 1], depth + 1))
			return false;
		jskip(p);
		if (**p == close) {
			(*p)++;
			return true;
		}
		if (**p != ',')
			return false;
		(*p)++;
	}
}

static bool jparse(const char **p, JVal *v, int depth)
{
	memset(v, 0, sizeof *v);
	if (depth > 64)
		return false;
	jskip(p);
	const char *s = *p;
	switch (*s) {
	case '{': return jcontainer(p, v, depth, true);
	case '[': return jcontainer(p, v, depth, false);
	case '"': v->kind = J_STR; return jstring(p, &v->str);
	case 't':
	case 'f':
	case 'n': {
		/* compare before advancing: never step over the NUL */
		const char *word = *s == 't' ? "true" : *s == 'f' ? "false" : "null";
		size_t len = strlen(word);
		if (strncmp(s, word, len) != 0)
			return false;
		*p += len;
		v->kind = *s == 'n' ? J_NULL : J_BOOL;
		v->b = *s == 't';
		return true;
	}
	default: {
		char *end;
		v->kind = J_NUM;
		v->num = strtod(s, &end);
		*p = end;
		return end != s;
	}
	}
}

static const JVal *jget(const JVal *obj, const char *key)
{
	if (!obj || obj->kind != J_OBJ)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return &obj->items[i];
	return NULL;
}

static const char *jstr(const JVal *obj, const char *key)
{
	const JVal *v = jget(obj, key);
	return v && v->kind == J_STR ? v->str : NULL;
}

static double jnum(const JVal *obj, const char *key)
{
	const JVal *v = jget(obj, key);
	return v && v->kind == J_NUM ? v->num : 0;
}

/* The lines of DIR/index.jsonl, parsed. */
typedef struct LogEntries {
	char *text;
	int n;
	JVal *items;
} LogEntries;

static void entries_free(LogEntries *e)
{
	for (int i = 0; i < e->n; i++)
		jfree(&e->items[i]);
	free(e->items);
	free(e->text);
}

/* A log file larger than this is not one vsched wrote. */
#define LOG_FILE_MAX (256L << 20)

/* The whole of a regular file of at most LOG_FILE_MAX bytes; NULL with
 * *why set otherwise. A FIFO or a device (/dev/zero) in the log folder
 * must neither block nor be read without end. */
static char *read_file(const char *path, const char **why)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > LOG_FILE_MAX) {
		*why = !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 256 MB";
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	StrBuf b = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0 && b.n <= (size_t)LOG_FILE_MAX)
		sb_put(&b, buf, n);
	bool bad = ferror(f), big = b.n > (size_t)LOG_FILE_MAX;
	int err = errno;
	fclose(f);
	char *text = sb_take(&b);
	if (bad || big) {
		*why = big ? "larger than 256 MB" : strerror(err);
		free(text);
		return NULL;
	}
	return text;
}

/* 0, or 2 with *why (malloc'ed) when the index cannot be read or parsed */
static int read_entries(const char *dir, LogEntries *e, char **why)
{
	memset(e, 0, sizeof *e);
	char *path = path_in(dir, "index.jsonl");
	const char *reason = "out of memory";
	e->text = path ? read_file(path, &reason) : NULL;
	if (!e->text) {
		if (asprintf(why, "cannot read %s: %s\n", path ? path : dir,
			     reason) < 0)
			*why = NULL;
		free(path);
		return 2;
	}
	int lineno = 0, cap = 0;
	for (char *line = e->text; *line;) {
		char *nl = strchr(line, '\n');
		char *next = nl ? nl + 1 : line + strlen(line);
		lineno++;
		const char *p = line;
		jskip(&p);
		if (p >= next || *p == '\0') {
			line = next;
			continue;
		}
		if (e->n == cap) {
			cap = cap ? cap * 2 : 32;
			JVal *items = realloc(e->items, sizeof *items * (size_t)cap);
			if (!items)
				break;
			e->items = items;
		}
		JVal *v = &e->items[e->n++];
		bool ok = jparse(&p, v, 0) && v->kind == J_OBJ;
		jskip(&p);
		if (!ok || p < next - (nl ? 1 : 0)) {
			if (asprintf(why, "%s:%d: malformed log line\n", path,
				     lineno) < 0)
				*why = NULL;
			free(path);
			return 2;
		}
		line = next;
	}
	free(path);
	return 0;
}

/* ---------- log show ---------- */

static const char *or_dash(const char *s) { return s ? s : "-"; }

static void show_model(StrBuf *b, const JVal *m)
{
	const JVal *vars = jget(m, "vars"), *cells = jget(m, "cells");
	const char *sep = "";
	sb_puts(b, "      model: ");
	for (int i = 0; vars && vars->kind == J_ARR && i < vars->n; i++) {
		sb_printf(b, "%s%s = %s", sep, or_dash(jstr(&vars->items[i], "name")),
			  or_dash(jstr(&vars->items[i], "value")));
		sep = ", ";
	}
	for (int i = 0; cells && cells->kind == J_ARR && i < cells->n; i++) {
		const JVal *c = &cells->items[i], *idx = jget(c, "index");
		sb_printf(b, "%s%s[", sep, or_dash(jstr(c, "buffer")));
		for (int k = 0; idx && idx->kind == J_ARR && k < idx->n; k++)
			sb_printf(b, "%s%.0f", k ? ", " : "", idx->items[k].num);
		sb_printf(b, "] = %s", or_dash(jstr(c, "value")));
		sep = ", ";
	}
	sb_puts(b, "\n");
}

/* ---------- JSON: the records of run --json (README, "JSON output") ----------
 * log show --json and log check --json print what run --json prints: one
 * "step" record per logged rewrite (its obligations, the structured
 * counterexample of the first one not proven, the replay: none, a log
 * keeps none), obligations logged outside a step (lowering's) as a step
 * with status null, a "summary" and a "result". log check adds to each
 * obligation its re-check {solver, answer, result, detail}. */

/* One obligation's re-check (log check). */
typedef struct EntryCheck {
	bool done;
	const char *answer; /* "sat", "unsat", "unknown", "not run", or NULL */
	const char *result; /* "ok", "disagrees", "no answer", "malformed", "no query file", "skipped" */
	char detail[256];
} EntryCheck;

/* "file:3:5" into its parts; false when it is not one. */
static bool split_position(const char *pos, char *file, size_t n, int *line, int *col)
{
	const char *c2 = pos ? strrchr(pos, ':') : NULL;
	if (!c2 || c2 == pos)
		return false;
	const char *c1 = c2 - 1;
	while (c1 > pos && *c1 != ':')
		c1--;
	if (*c1 != ':' || (size_t)(c1 - pos) >= n)
		return false;
	char *end;
	long l = strtol(c1 + 1, &end, 10);
	if (end != c2)
		return false;
	long c = strtol(c2 + 1, &end, 10);
	if (*end)
		return false;
	memcpy(file, pos, (size_t)(c1 - pos));
	file[c1 - pos] = 0;
	*line = (int)l;
	*col = (int)c;
	return true;
}

static void json_position(StrBuf *b, const char *pos, bool *first)
{
	char file[512];
	int line, col;
	if (!split_position(pos, file, sizeof file, &line, &col))
		return;
	sb_puts(b, *first ? "{\"file\":" : ",{\"file\":");
	*first = false;
	json_string(b, file);
	sb_printf(b, ",\"line\":%d,\"col\":%d}", line, col);
}

/* The counterexample of an obligation entry with a model, as run's. */
static void json_counterexample(StrBuf *b, const JVal *ob)
{
	const JVal *m = ob ? jget(ob, "model") : NULL;
	if (!m || m->kind != J_OBJ) {
		sb_puts(b, "null");
		return;
	}
	const JVal *vars = jget(m, "vars"), *cells = jget(m, "cells");
	sb_puts(b, "{\"obligation\":");
	json_string(b, jstr(ob, "kind"));
	sb_puts(b, ",\"values\":[");
	for (int i = 0; vars && vars->kind == J_ARR && i < vars->n; i++) {
		sb_puts(b, i ? ",{\"name\":" : "{\"name\":");
		json_string(b, jstr(&vars->items[i], "name"));
		json_key(b, "value");
		json_string(b, jstr(&vars->items[i], "value"));
		sb_puts(b, "}");
	}
	sb_puts(b, "],\"cells\":[");
	for (int i = 0; cells && cells->kind == J_ARR && i < cells->n; i++) {
		const JVal *c = &cells->items[i], *idx = jget(c, "index");
		sb_puts(b, i ? ",{\"buffer\":" : "{\"buffer\":");
		json_string(b, jstr(c, "buffer"));
		sb_puts(b, ",\"indices\":[");
		for (int k = 0; idx && idx->kind == J_ARR && k < idx->n; k++)
			sb_printf(b, "%s%.0f", k ? "," : "", idx->items[k].num);
		sb_puts(b, "]");
		json_key(b, "value");
		json_string(b, jstr(c, "value"));
		sb_puts(b, "}");
	}
	sb_puts(b, "],\"source\":[");
	bool first = true;
	json_position(b, jstr(ob, "origin"), &first);
	const JVal *rel = jget(ob, "related");
	for (int i = 0; rel && rel->kind == J_ARR && i < rel->n; i++)
		json_position(b, rel->items[i].kind == J_STR ? rel->items[i].str : NULL, &first);
	sb_puts(b, "]");
	json_key(b, "text");
	StrBuf t = {0};
	show_model(&t, m);
	char *text = sb_take(&t);
	const char *body = text;
	while (*body == ' ')
		body++;
	json_string(b, body);
	free(text);
	sb_puts(b, "}");
}

/* One "step" record: rw the rewrite entry (NULL: obligations outside a
 * step), obs its obligation entries (indices into e), checks NULL for
 * log show. */
static void json_step(StrBuf *b, int index, const JVal *rw, const LogEntries *e, const int *obs,
		      int nobs, const EntryCheck *checks, const char *solver)
{
	const char *result = rw ? jstr(rw, "result") : NULL;
	bool committed = result && strcmp(result, "committed") == 0;
	sb_printf(b, "{\"type\":\"step\",\"index\":%d", index);
	json_key(b, "step");
	json_string(b, rw ? jstr(rw, "primitive") : nobs ? jstr(&e->items[obs[0]], "rewrite") : NULL);
	json_key(b, "function");
	json_string(b, rw ? jstr(rw, "args") : NULL);
	json_key(b, "status");
	json_string(b, result);
	/* the log keeps one text: a committed step's note, else its reason */
	json_key(b, "reason");
	json_string(b, rw && !committed ? jstr(rw, "reason") : NULL);
	json_key(b, "note");
	json_string(b, rw && committed ? jstr(rw, "reason") : NULL);
	sb_puts(b, ",\"obligations\":[");
	const JVal *failed = NULL;
	for (int i = 0; i < nobs; i++) {
		const JVal *o = &e->items[obs[i]];
		const char *verdict = jstr(o, "verdict");
		if (!failed && verdict && strcmp(verdict, "proven") != 0 && jget(o, "model") &&
		    jget(o, "model")->kind == J_OBJ)
			failed = o;
		sb_printf(b, "%s{\"id\":%.0f", i ? "," : "", jnum(o, "id"));
		json_key(b, "kind");
		json_string(b, jstr(o, "kind"));
		json_key(b, "statement");
		json_string(b, jstr(o, "statement"));
		json_key(b, "verdict");
		json_string(b, verdict);
		sb_printf(b, ",\"seconds\":%.6f", jnum(o, "seconds"));
		json_key(b, "smt2");
		json_string(b, jstr(o, "smt2"));
		if (checks) {
			const EntryCheck *c = &checks[obs[i]];
			sb_puts(b, ",\"recheck\":{\"solver\":");
			json_string(b, solver);
			json_key(b, "answer");
			json_string(b, c->answer);
			json_key(b, "result");
			json_string(b, c->result);
			json_key(b, "detail");
			json_string(b, c->detail[0] ? c->detail : NULL);
			sb_puts(b, "}");
		}
		sb_puts(b, "}");
	}
	sb_puts(b, "],\"counterexample\":");
	json_counterexample(b, failed);
	sb_puts(b, ",\"replay\":{\"status\":\"none\",\"text\":null}}\n");
}

/* Every step record of a log, in order. */
static void json_steps(StrBuf *b, const LogEntries *e, const EntryCheck *checks, const char *solver)
{
	int *obs = malloc(sizeof(int) * (size_t)(e->n + 1));
	if (!obs)
		abort();
	int nobs = 0, index = 0;
	for (int i = 0; i < e->n; i++) {
		const char *type = or_dash(jstr(&e->items[i], "type"));
		if (strcmp(type, "obligation") == 0) {
			obs[nobs++] = i;
		} else if (strcmp(type, "rewrite") == 0) {
			json_step(b, ++index, &e->items[i], e, obs, nobs, checks, solver);
			nobs = 0;
		}
	}
	if (nobs)
		json_step(b, ++index, NULL, e, obs, nobs, checks, solver);
	free(obs);
}

int proof_log_show(const char *dir, bool json, char **out)
{
	LogEntries e;
	char *why = NULL;
	if (read_entries(dir, &e, &why) != 0) {
		*out = why ? why : strdup("cannot read the proof log\n");
		entries_free(&e);
		return 2;
	}
	StrBuf b = {0};
	if (json) {
		json_steps(&b, &e, NULL, NULL);
		int n = 0, proven = 0, refuted = 0, cached = 0;
		for (int i = 0; i < e.n; i++) {
			const JVal *v = &e.items[i];
			if (strcmp(or_dash(jstr(v, "type")), "obligation") != 0)
				continue;
			const JVal *c = jget(v, "cached");
			n++;
			proven += strcmp(or_dash(jstr(v, "verdict")), "proven") == 0;
			refuted += strcmp(or_dash(jstr(v, "verdict")), "refuted") == 0;
			cached += c && c->kind == J_BOOL && c->b;
		}
		sb_printf(&b, "{\"type\":\"summary\",\"obligations\":%d,\"proven\":%d,\"refuted\":%d,"
			      "\"not_proven\":%d,\"cached\":%d}\n",
			  n, proven, refuted, n - proven - refuted, cached);
		sb_puts(&b, "{\"type\":\"result\",\"status\":\"ok\",\"ir\":null}\n");
		*out = sb_take(&b);
		entries_free(&e);
		return 0;
	}
	int nrw = 0, nob = 0, nproven = 0, nrefuted = 0, nunknown = 0,
	    ncached = 0;
	double total = 0;
	const char *last_rewrite = NULL;
	sb_printf(&b, "proof log %s\n", dir);
	for (int i = 0; i < e.n; i++) {
		const JVal *v = &e.items[i];
		const char *type = or_dash(jstr(v, "type"));
		if (strcmp(type, "rewrite") == 0) {
			nrw++;
			const char *args = jstr(v, "args");
			sb_printf(&b, "rewrite %s", or_dash(jstr(v, "primitive")));
			if (args && *args)
				sb_printf(&b, " [%s]", args);
			sb_printf(&b, " -> %s", or_dash(jstr(v, "result")));
			if (jstr(v, "reason"))
				sb_printf(&b, " (%s)", jstr(v, "reason"));
			sb_puts(&b, "\n");
			last_rewrite = NULL; /* the next batch gets its header */
			continue;
		}
		if (strcmp(type, "obligation") != 0)
			continue;
		nob++;
		const char *verdict = or_dash(jstr(v, "verdict"));
		const JVal *cached = jget(v, "cached");
		bool was_cached = cached && cached->kind == J_BOOL && cached->b;
		double secs = jnum(v, "seconds");
		total += secs;
		ncached += was_cached;
		if (strcmp(verdict, "proven") == 0)
			nproven++;
		else if (strcmp(verdict, "refuted") == 0)
			nrefuted++;
		else
			nunknown++;
		const char *rw = jstr(v, "rewrite");
		if (rw && (!last_rewrite || strcmp(rw, last_rewrite) != 0))
			sb_printf(&b, "  obligations of %s:\n", rw);
		last_rewrite = rw;
		sb_printf(&b, "    ob-%04.0f %-10s %s  %.3fs%s\n", jnum(v, "id"),
			  verdict, or_dash(jstr(v, "kind")), secs,
			  was_cached ? "  (cached)" : "");
		sb_printf(&b, "      %s\n", or_dash(jstr(v, "statement")));
		if (jstr(v, "origin"))
			sb_printf(&b, "      at %s\n", jstr(v, "origin"));
		if (jstr(v, "reason"))
			sb_printf(&b, "      reason: %s\n", jstr(v, "reason"));
		const JVal *m = jget(v, "model");
		if (m && m->kind == J_OBJ)
			show_model(&b, m);
	}
	sb_printf(&b,
		  "total: %d rewrite%s, %d obligation%s: %d proven, %d "
		  "refuted, %d not proven (%d cached), %.3fs\n",
		  nrw, nrw == 1 ? "" : "s", nob, nob == 1 ? "" : "s", nproven,
		  nrefuted, nunknown, ncached, total);
	*out = sb_take(&b);
	entries_free(&e);
	return 0;
}

/* ---------- log check ---------- */

typedef enum { RUN_OK, RUN_NO_SOLVER, RUN_FAILED } RunStatus;

/* Run argv with stdout and stderr into *output; stdin is /dev/null. */
static RunStatus run_capture(char *const argv[], char **output)
{
	int fd[2];
	*output = NULL;
	if (pipe(fd) != 0)
		return RUN_FAILED;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		return rc == ENOENT ? RUN_NO_SOLVER : RUN_FAILED;
	}
	/* the solvers get -T:30 / --tlimit=30000; a solver that hangs anyway
	 * (z3 4.8.12's timers can deadlock) is killed after a minute */
	StrBuf b = {0};
	char buf[4096];
	int waited_ms = 0;
	for (;;) {
		struct pollfd pfd = {fd[0], POLLIN, 0};
		int ready = poll(&pfd, 1, 1000);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0) {
			waited_ms += 1000;
			if (waited_ms >= SOLVER_KILL_MS) {
				kill(pid, SIGKILL);
				sb_puts(&b, "\nkilled after 60 s\n");
				break;
			}
			continue;
		}
		ssize_t n = read(fd[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sb_put(&b, buf, (size_t)n);
	}
	close(fd[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*output = sb_take(&b);
	/* a shell's "command not found" when spawnp went through sh */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return RUN_NO_SOLVER;
	return RUN_OK;
}

/* The solver's one answer: exactly one output line is an answer and none
 * is an error; otherwise "no answer". (The query itself holds one
 * check-sat and nothing that prints, see query_problem.) */
static const char *solver_answer(const char *output)
{
	static const char *const answers[] = {"unsat", "sat", "unknown",
					      "timeout"};
	const char *found = NULL;
	for (const char *line = output; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		/* an answer against the query's (set-info :status ...): z3
		 * prints the answer, then this error; cvc5 stops with
		 * "Expected result sat but got unsat" (and a "Fatal failure"
		 * line) instead of printing the answer */
		const char *got = "Expected result ";
		bool fatal = len >= 14 && strncmp(line, "Fatal failure ", 14) == 0;
		if (len >= 6 && strncmp(line, "(error", 6) == 0 &&
		    !strstr(line, "check annotation that says"))
			return "no answer";
		if (len > strlen(got) && strncmp(line, got, strlen(got)) == 0) {
			const char *but = strstr(line, " but got ");
			if (!but || but - line > (ptrdiff_t)len)
				return "no answer";
			line = but + strlen(" but got ");
			len = end ? (size_t)(end - line) : strlen(line);
			while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
				len--;
		} else if (fatal) {
			line = end ? end + 1 : NULL;
			continue;
		}
		for (size_t i = 0; i < sizeof answers / sizeof *answers; i++)
			if (len == strlen(answers[i]) &&
			    strncmp(line, answers[i], len) == 0) {
				if (found)
					return "no answer";
				found = answers[i];
			}
		line = end ? end + 1 : NULL;
	}
	return found ? found : "no answer";
}

/* What is wrong with a logged query, or NULL: only declarations,
 * definitions, options and assertions, then exactly one check-sat, last
 * but for one get-model right after it (a refuted query's model: it
 * prints after the answer).
 * Anything that prints (echo, get-*), changes the assertion stack (push,
 * pop, reset) or stops early (exit) would let a tampered file answer
 * something other than its assertions. */
static const char *query_problem(const char *text)
{
	static const char *const allowed[] = {
		"set-logic", "set-option", "set-info", "declare-fun", "declare-const",
		"declare-sort", "define-fun", "define-sort", "assert", "check-sat"};
	int checks = 0;
	bool after_check = false, after_model = false;
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ';') {
			if (*p == ';')
				while (*p && *p != '\n')
					p++;
			else
				p++;
		}
		if (!*p)
			break;
		if (*p != '(')
			return "text outside a command";
		p++;
		const char *head = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '(' &&
		       *p != ')')
			p++;
		size_t hlen = (size_t)(p - head);
		bool ok = false;
		for (size_t i = 0; i < sizeof allowed / sizeof *allowed && !ok; i++)
			ok = hlen == strlen(allowed[i]) && strncmp(head, allowed[i], hlen) == 0;
		bool model = hlen == 9 && strncmp(head, "get-model", 9) == 0;
		if (model && after_check && !after_model) {
			after_model = true;
			ok = true;
		} else if (!ok) {
			return "a command other than declarations, assertions and one check-sat";
		} else if (after_check) {
			return "a command after check-sat";
		}
		if (hlen == 9 && strncmp(head, "check-sat", 9) == 0) {
			checks++;
			after_check = true;
		}
		/* the rest of the command, balanced */
		int depth = 1;
		while (depth > 0) {
			if (!*p)
				return "an unbalanced command";
			if (*p == '"') {
				for (p++; *p && !(*p == '"' && p[1] != '"'); p += *p == '"' ? 2 : 1)
					;
				if (!*p)
					return "an unterminated string";
			} else if (*p == '|') {
				for (p++; *p && *p != '|'; p++)
					;
				if (!*p)
					return "an unterminated symbol";
			} else if (*p == ';') {
				while (*p && *p != '\n')
					p++;
				continue;
			} else if (*p == '(') {
				depth++;
			} else if (*p == ')') {
				depth--;
			}
			p++;
		}
	}
	return checks == 1 ? NULL : "no check-sat, or more than one";
}

/* The value of the header comment `; key: value` (up to the line's end),
 * or NULL; the header is the comment block at the top of the file. */
static char *header_value(const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line == ';';) {
		const char *end = strchr(line, '\n');
		if (strncmp(line, "; ", 2) == 0 && strncmp(line + 2, key, klen) == 0 &&
		    line[2 + klen] == ':' && line[3 + klen] == ' ') {
			const char *v = line + 4 + klen;
			size_t n = end ? (size_t)(end - v) : strlen(v);
			return strndup(v, n);
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

/* The file belongs to this entry: its header names the same obligation,
 * kind and verdict. NULL if so, else what differs. */
static const char *header_problem(const char *text, const JVal *v)
{
	char want[64];
	snprintf(want, sizeof want, "; vsched proof obligation ob-%04.0f\n", jnum(v, "id"));
	if (strncmp(text, want, strlen(want)) != 0)
		return "its header names another obligation";
	const char *keys[] = {"kind", "verdict"};
	for (int i = 0; i < 2; i++) {
		char *got = header_value(text, keys[i]);
		bool same = got && strcmp(got, or_dash(jstr(v, keys[i]))) == 0;
		free(got);
		if (!same)
			return i == 0 ? "its header names another kind" : "its header names another verdict";
	}
	/* the expected status, when stated, is the verdict's */
	const char *status = strstr(text, "(set-info :status ");
	if (status) {
		const char *verdict = or_dash(jstr(v, "verdict"));
		const char *status_of = strcmp(verdict, "proven") == 0 ? "unsat)"
				   : strcmp(verdict, "refuted") == 0 ? "sat)"
								     : "unknown)";
		if (strncmp(status + strlen("(set-info :status "), status_of, strlen(status_of)) != 0)
			return "its (set-info :status ...) names another verdict";
	}
	return NULL;
}

typedef struct CheckTally {
	int agree, disagree, unanswered, skipped, malformed;
	bool no_solver;
	int nfiles;
	char **files; /* query files already checked: each belongs to one entry */
	int last_id;
} CheckTally;

static void check_entry(const char *dir, const char *solver, const JVal *v,
			StrBuf *b, CheckTally *t, EntryCheck *ec)
{
	ec->done = true;
	const char *verdict = or_dash(jstr(v, "verdict"));
	const char *file = jstr(v, "smt2");
	bool proven = strcmp(verdict, "proven") == 0;
	bool refuted = strcmp(verdict, "refuted") == 0;
	sb_printf(b, "ob-%04.0f  %-28s %-11s ", jnum(v, "id"),
		  or_dash(jstr(v, "kind")), verdict);
	if (!proven && !refuted) {
		sb_puts(b, "-        skipped\n");
		ec->result = "skipped";
		t->skipped++;
		return;
	}
	/* a logged file name is a plain name inside the log directory */
	if (!file || strchr(file, '/') || strcmp(file, "..") == 0) {
		sb_puts(b, "-        NO QUERY FILE\n");
		ec->result = "no query file";
		t->unanswered++;
		return;
	}
	for (int i = 0; i < t->nfiles; i++)
		if (strcmp(t->files[i], file) == 0) {
			sb_printf(b, "-        MALFORMED (%s is the query of an earlier entry)\n", file);
			ec->result = "malformed";
			snprintf(ec->detail, sizeof ec->detail, "%s is the query of an earlier entry", file);
			t->malformed++;
			return;
		}
	char **grown = realloc(t->files, sizeof *grown * (size_t)(t->nfiles + 1));
	if (!grown)
		abort();
	t->files = grown;
	t->files[t->nfiles++] = strdup(file);
	char *path = path_in(dir, file), *output = NULL;
	const char *reason = "out of memory";
	char *text = path ? read_file(path, &reason) : NULL;
	char unread[128];
	snprintf(unread, sizeof unread, "cannot be read: %s", reason);
	const char *bad = !text ? unread : header_problem(text, v);
	if (!bad)
		bad = query_problem(text);
	free(text);
	if (bad) {
		sb_printf(b, "-        MALFORMED (%s: %s)\n", file, bad);
		ec->result = "malformed";
		snprintf(ec->detail, sizeof ec->detail, "%s: %s", file, bad);
		t->malformed++;
		free(path);
		return;
	}
	char *z3_argv[] = {"z3", "-T:30", path, NULL};
	char *cvc5_argv[] = {"cvc5", "--tlimit=30000", path, NULL};
	RunStatus rs = path ? run_capture(strcmp(solver, "cvc5") == 0
						  ? cvc5_argv
						  : z3_argv,
					  &output)
			    : RUN_FAILED;
	const char *answer = rs == RUN_OK ? solver_answer(output) : "not run";
	const char *want = proven ? "unsat" : "sat";
	sb_printf(b, "%-8s ", answer);
	ec->answer = answer;
	if (strcmp(answer, want) == 0) {
		sb_puts(b, "ok\n");
		ec->result = "ok";
		t->agree++;
	} else if (strcmp(answer, "sat") == 0 || strcmp(answer, "unsat") == 0) {
		sb_printf(b, "DISAGREES (logged %s, expected %s)\n", verdict, want);
		ec->result = "disagrees";
		snprintf(ec->detail, sizeof ec->detail, "logged %s, expected %s", verdict, want);
		t->disagree++;
	} else {
		sb_printf(b, "NO ANSWER (expected %s)\n", want);
		ec->result = "no answer";
		snprintf(ec->detail, sizeof ec->detail, "expected %s", want);
		t->unanswered++;
	}
	t->no_solver |= rs == RUN_NO_SOLVER;
	free(output);
	free(path);
}

int proof_log_check_json(const char *dir, const char *solver, bool json, char **out)
{
	if (!solver || !*solver)
		solver = "z3";
	if (strcmp(solver, "z3") != 0 && strcmp(solver, "cvc5") != 0) {
		if (asprintf(out, "unknown solver '%s' (z3 or cvc5)\n",
			     solver) < 0)
			*out = NULL;
		return 2;
	}
	LogEntries e;
	char *why = NULL;
	if (read_entries(dir, &e, &why) != 0) {
		*out = why ? why : strdup("cannot read the proof log\n");
		entries_free(&e);
		return 2;
	}
	StrBuf b = {0};
	CheckTally t = {0};
	EntryCheck *checks = calloc((size_t)e.n + 1, sizeof *checks);
	if (!checks)
		abort();
	/* problems of the log as a whole (JSON: the summary's "problems") */
	StrBuf problems = {0};
	int nproblems = 0;
	sb_printf(&b, "re-checking %s with %s\n", dir, solver);
	sb_printf(&b, "%-8s %-28s %-11s %-8s %s\n", "id", "kind", "logged",
		  solver, "result");
	for (int i = 0; i < e.n; i++) {
		if (strcmp(or_dash(jstr(&e.items[i], "type")), "obligation") != 0)
			continue;
		/* obligations are numbered 1, 2, ... in the order they are logged */
		double id = jnum(&e.items[i], "id");
		if (id != t.last_id + 1) {
			sb_printf(&b, "entry %d: MALFORMED (obligation id %.0f, expected %d: an entry was removed or moved)\n",
				  i + 1, id, t.last_id + 1);
			char msg[160];
			snprintf(msg, sizeof msg, "entry %d: obligation id %.0f, expected %d: an entry was removed or moved",
				 i + 1, id, t.last_id + 1);
			sb_puts(&problems, nproblems++ ? "," : "");
			json_string(&problems, msg);
			t.malformed++;
		}
		t.last_id = id > t.last_id ? (int)id : t.last_id;
		check_entry(dir, solver, &e.items[i], &b, &t, &checks[i]);
	}
	/* every query file of the folder has its entry */
	DIR *dp = opendir(dir);
	for (struct dirent *de; dp && (de = readdir(dp));) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		if (strncmp(n, "ob-", 3) != 0 || len < 8 || strcmp(n + len - 5, ".smt2") != 0)
			continue;
		bool listed = false;
		for (int i = 0; i < e.n && !listed; i++) {
			const char *f = jstr(&e.items[i], "smt2");
			listed = f && strcmp(f, n) == 0;
		}
		if (!listed) {
			sb_printf(&b, "%s: MALFORMED (no entry of index.jsonl names this query)\n", n);
			char msg[320];
			snprintf(msg, sizeof msg, "%.200s: no entry of index.jsonl names this query", n);
			sb_puts(&problems, nproblems++ ? "," : "");
			json_string(&problems, msg);
			t.malformed++;
		}
	}
	if (dp)
		closedir(dp);
	sb_printf(&b,
		  "summary: %d agree, %d disagree, %d without an answer, %d "
		  "malformed, %d skipped (not proven)\n",
		  t.agree, t.disagree, t.unanswered, t.malformed, t.skipped);
	for (int i = 0; i < t.nfiles; i++)
		free(t.files[i]);
	free(t.files);
	if (t.no_solver)
		sb_printf(&b, "cannot run '%s': is it installed and on PATH?\n",
			  solver);
	if (json) {
		/* the records of run --json; the text above is dropped */
		free(sb_take(&b));
		json_steps(&b, &e, checks, solver);
		if (t.no_solver) {
			char msg[128];
			snprintf(msg, sizeof msg, "cannot run '%s': is it installed and on PATH?", solver);
			sb_puts(&problems, nproblems++ ? "," : "");
			json_string(&problems, msg);
		}
		char *plist = sb_take(&problems);
		int nobs = 0;
		for (int i = 0; i < e.n; i++)
			nobs += strcmp(or_dash(jstr(&e.items[i], "type")), "obligation") == 0;
		sb_printf(&b, "{\"type\":\"summary\",\"solver\":");
		json_string(&b, solver);
		sb_printf(&b, ",\"obligations\":%d,\"agree\":%d,\"disagree\":%d,\"unanswered\":%d,"
			      "\"malformed\":%d,\"skipped\":%d,\"problems\":[%s]}\n",
			  nobs, t.agree, t.disagree, t.unanswered, t.malformed, t.skipped, plist);
		free(plist);
		int rc = t.no_solver ? 2 : t.disagree || t.unanswered || t.malformed ? 1 : 0;
		sb_printf(&b, "{\"type\":\"result\",\"status\":\"%s\",\"ir\":null}\n",
			  rc == 0 ? "ok" : rc == 1 ? "rejected" : "bad input");
	}
	free(sb_take(&problems));
	free(checks);
	*out = sb_take(&b);
	entries_free(&e);
	if (t.no_solver)
		return 2;
	return t.disagree || t.unanswered || t.malformed ? 1 : 0;
}

int proof_log_check(const char *dir, const char *solver, char **out)
{
	return proof_log_check_json(dir, solver, false, out);
}

/* ---------- log check --rebuild: the log's sources and the comparison ---------- */

void proof_log_source_free(ProofLogSource *s)
{
	free(s->vsched_version);
	free(s->z3_version);
	free(s->kernel_name);
	free(s->kernel_text);
	for (int i = 0; i < s->nschedules; i++) {
		free(s->schedule_names[i]);
		free(s->schedule_texts[i]);
	}
	free(s->schedule_names);
	free(s->schedule_texts);
	free(s->build_after);
	free(s->build_int64);
	memset(s, 0, sizeof *s);
}

/* The copy `file` of the log, checked against the hash meta.json gives:
 * NULL and *why when it cannot be read or does not match. */
static char *read_copy(const char *dir, const char *file, const char *sha, char **why)
{
	char *path = path_in(dir, file);
	const char *reason = "out of memory";
	char *text = path ? read_file(path, &reason) : NULL;
	free(path);
	if (!text) {
		if (asprintf(why, "cannot read %s/%s: %s\n", dir, file, reason) < 0)
			*why = NULL;
		return NULL;
	}
	char got[65];
	sha256_hex(text, strlen(text), got);
	if (!sha || strcmp(got, sha) != 0) {
		if (asprintf(why, "%s/%s: MALFORMED (its sha256 is %s; meta.json says %s)\n", dir,
			     file, got, sha ? sha : "none") < 0)
			*why = NULL;
		free(text);
		return NULL;
	}
	return text;
}

int proof_log_read_source(const char *dir, ProofLogSource *s, char **why)
{
	memset(s, 0, sizeof *s);
	*why = NULL;
	char *path = path_in(dir, "meta.json");
	const char *reason = "out of memory";
	char *text = path ? read_file(path, &reason) : NULL;
	if (!text) {
		if (asprintf(why, "cannot read %s: %s (--rebuild needs the sources a log records; "
				  "logs from before they were recorded have none)\n",
			     path ? path : dir, reason) < 0)
			*why = NULL;
		free(path);
		return 2;
	}
	JVal v;
	const char *p = text;
	bool ok = jparse(&p, &v, 0) && v.kind == J_OBJ;
	free(text);
	const JVal *kernel = ok ? jget(&v, "kernel") : NULL;
	const JVal *scheds = ok ? jget(&v, "schedules") : NULL;
	if (!ok || !kernel || kernel->kind != J_OBJ || !jstr(kernel, "name") ||
	    !scheds || scheds->kind != J_ARR || !jstr(&v, "float_mode")) {
		if (asprintf(why, "%s: malformed meta.json\n", path) < 0)
			*why = NULL;
		free(path);
		jfree(&v);
		return 2;
	}
	free(path);
	s->vsched_version = strdup(or_dash(jstr(&v, "vsched")));
	s->z3_version = strdup(or_dash(jstr(&v, "z3")));
	s->float_mode = strcmp(jstr(&v, "float_mode"), "ieee") == 0 ? FLOAT_IEEE : FLOAT_REAL;
	double t = jnum(&v, "timeout_ms"), r = jnum(&v, "rlimit");
	s->timeout_ms = t > 0 && t < 4e9 ? (unsigned)t : 0;
	s->rlimit = r > 0 && r < 4e9 ? (unsigned)r : 0;
	double api = jnum(&v, "api_steps");
	s->api_steps = api > 0 && api < 1e9 ? (int)api : 0;
	s->kernel_name = strdup(jstr(kernel, "name"));
	int rc = 0;
	s->kernel_text = read_copy(dir, "kernel.tir", jstr(kernel, "sha256"), why);
	if (!s->kernel_text)
		rc = 1;
	s->schedule_names = calloc((size_t)scheds->n + 1, sizeof *s->schedule_names);
	s->schedule_texts = calloc((size_t)scheds->n + 1, sizeof *s->schedule_texts);
	if (!s->schedule_names || !s->schedule_texts)
		abort();
	for (int i = 0; rc == 0 && i < scheds->n; i++) {
		const JVal *e = &scheds->items[i];
		char file[40];
		schedule_file_name(i, file, sizeof file);
		s->schedule_names[i] = strdup(or_dash(jstr(e, "name")));
		s->nschedules = i + 1;
		s->schedule_texts[i] = read_copy(dir, file, jstr(e, "sha256"), why);
		if (!s->schedule_texts[i])
			rc = 1;
	}
	const JVal *builds = jget(&v, "builds");
	int nb = builds && builds->kind == J_ARR ? builds->n : 0;
	s->build_after = calloc((size_t)nb + 1, sizeof *s->build_after);
	s->build_int64 = calloc((size_t)nb + 1, sizeof *s->build_int64);
	if (!s->build_after || !s->build_int64)
		abort();
	for (int i = 0; i < nb; i++) {
		const JVal *e = &builds->items[i], *w = jget(e, "int64_widening");
		double after = jnum(e, "after_schedules");
		s->build_after[i] = after > 0 && after <= s->nschedules ? (int)after : 0;
		s->build_int64[i] = !w || w->kind != J_BOOL || w->b;
	}
	s->nbuilds = nb;
	jfree(&v);
	if (rc == 1 && !*why)
		*why = strdup("cannot read the log's copies\n");
	return rc;
}

static bool jequal(const JVal *a, const JVal *b)
{
	if (a->kind != b->kind || a->n != b->n)
		return false;
	switch (a->kind) {
	case J_NULL: return true;
	case J_BOOL: return a->b == b->b;
	case J_NUM: return a->num == b->num;
	case J_STR: return strcmp(a->str, b->str) == 0;
	case J_ARR:
		for (int i = 0; i < a->n; i++)
			if (!jequal(&a->items[i], &b->items[i]))
				return false;
		return true;
	case J_OBJ:
		for (int i = 0; i < a->n; i++) {
			const JVal *other = jget(b, a->keys[i]);
			if (!other || !jequal(&a->items[i], other))
				return false;
		}
		return true;
	}
	return false;
}

/* The first field in which two index entries differ, or NULL; aside are
 * what legitimately varies between runs: times ("seconds", and "cached":
 * which of two identical queries was solved first) and a refuted query's
 * model (the solver's choice among counterexamples depends on the state
 * of its context; `log check` re-solves the query itself). */
static const char *entry_difference(const JVal *a, const JVal *b)
{
	for (int pass = 0; pass < 2; pass++) {
		const JVal *x = pass ? b : a, *y = pass ? a : b;
		for (int i = 0; i < x->n; i++) {
			const char *k = x->keys[i];
			if (strcmp(k, "seconds") == 0 || strcmp(k, "cached") == 0 ||
			    strcmp(k, "model") == 0)
				continue;
			const JVal *other = jget(y, k);
			if (!other || !jequal(&x->items[i], other))
				return k;
		}
	}
	return NULL;
}

/* A header line that legitimately varies between runs (see
 * entry_difference): `; seconds: ` and `; model: `. */
static bool varying_line(const char *s)
{
	return strncmp(s, "; seconds: ", 11) == 0 || strncmp(s, "; model: ", 9) == 0;
}

/* The line number (1-based, in a) of the first difference of two query
 * files, the varying header lines aside; 0 when they are the same. */
static int query_difference(const char *a, const char *b)
{
	int line = 0;
	for (;;) {
		while (varying_line(a)) {
			const char *e = strchr(a, '\n');
			a = e ? e + 1 : a + strlen(a);
			line++;
		}
		while (varying_line(b)) {
			const char *e = strchr(b, '\n');
			b = e ? e + 1 : b + strlen(b);
		}
		line++;
		if (!*a && !*b)
			return 0;
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a + 1) : strlen(a);
		size_t lb = eb ? (size_t)(eb - b + 1) : strlen(b);
		if (la != lb || memcmp(a, b, la) != 0)
			return line;
		a += la;
		b += lb;
	}
}

int proof_log_rebuild_compare(const char *dir, const ProofLog *built, char **out)
{
	LogEntries e;
	char *why = NULL;
	if (read_entries(dir, &e, &why) != 0) {
		*out = why ? why : strdup("cannot read the proof log\n");
		entries_free(&e);
		return 2;
	}
	int nbuilt = built->nlines;
	JVal *b = calloc((size_t)nbuilt + 1, sizeof *b);
	if (!b)
		abort();
	for (int i = 0; i < nbuilt; i++) {
		const char *p = built->lines[i];
		if (!jparse(&p, &b[i], 0))
			abort(); /* our own line */
	}
	StrBuf o = {0};
	int same = 0, differ = 0;
	int n = e.n > nbuilt ? e.n : nbuilt;
	for (int i = 0; i < n; i++) {
		const JVal *logged = i < e.n ? &e.items[i] : NULL, *now = i < nbuilt ? &b[i] : NULL;
		const JVal *any = logged ? logged : now;
		bool ob = strcmp(or_dash(jstr(any, "type")), "obligation") == 0;
		char label[64];
		if (ob)
			snprintf(label, sizeof label, "ob-%04.0f  %-28s", jnum(any, "id"),
				 or_dash(jstr(any, "kind")));
		else
			snprintf(label, sizeof label, "entry %d (%s)", i + 1, or_dash(jstr(any, "type")));
		if (!now) {
			sb_printf(&o, "%s NOT REBUILT (re-running the schedule builds no such %s)\n", label,
				  ob ? "obligation: a build's, or one added to the log" : "entry");
			differ++;
			continue;
		}
		if (!logged) {
			sb_printf(&o, "%s MISSING (vsched builds it; the log lacks it)\n", label);
			differ++;
			continue;
		}
		const char *field = entry_difference(logged, now);
		if (field) {
			sb_printf(&o, "%s DIFFERS (index.jsonl: its \"%s\" is not the one vsched builds)\n",
				  label, field);
			differ++;
			continue;
		}
		if (!ob)
			continue;
		const char *file = jstr(logged, "smt2");
		int id = (int)jnum(now, "id");
		const char *want = id >= 1 && id <= built->nobligations ? built->queries[id - 1] : NULL;
		if (!file || !want) {
			/* both without a query (same "smt2" field: null) */
			sb_printf(&o, "%s same (no query)\n", label);
			same++;
			continue;
		}
		if (strchr(file, '/') || strcmp(file, "..") == 0) {
			sb_printf(&o, "%s DIFFERS (the query file is not a name in the log)\n", label);
			differ++;
			continue;
		}
		char *path = path_in(dir, file);
		const char *reason = "out of memory";
		char *text = path ? read_file(path, &reason) : NULL;
		free(path);
		int line = text ? query_difference(text, want) : -1;
		if (line < 0)
			sb_printf(&o, "%s DIFFERS (%s cannot be read: %s)\n", label, file, reason);
		else if (line > 0)
			sb_printf(&o, "%s DIFFERS (%s line %d is not the query vsched builds)\n", label,
				  file, line);
		else
			sb_printf(&o, "%s same\n", label);
		if (line == 0)
			same++;
		else
			differ++;
		free(text);
	}
	sb_printf(&o, "rebuild: %d obligation%s identical to the ones vsched builds, %d difference%s\n",
		  same, same == 1 ? "" : "s", differ, differ == 1 ? "" : "s");
	for (int i = 0; i < nbuilt; i++)
		jfree(&b[i]);
	free(b);
	entries_free(&e);
	*out = sb_take(&o);
	return differ ? 1 : 0;
}
