/* smt/log.c — writing proof logs (semantics.md section 8): DIR/index.jsonl,
 * one JSON object per rewrite and per obligation, DIR/ob-NNNN.smt2, each
 * query with a comment header, and meta.json with the kernel's and the
 * schedules' copies. Reading them back (`log show`, `log check`,
 * `log check --rebuild`) is smt/log_read.c. */
#include "smt/log_int.h"
#include "smt/sha256.h"

#include <errno.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const Span no_span;

/* The copies of the kernel and the schedules, by position: a log's
 * meta.json names them, but only these names are ever read. */
void log_schedule_file_name(int k, char *out, size_t n)
{
	if (k == 0)
		snprintf(out, n, "schedule.sched");
	else
		snprintf(out, n, "schedule-%d.sched", k + 1);
}

/* ---------- writing ---------- */

void log_json_string(StrBuf *b, const char *s)
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

void log_json_key(StrBuf *b, const char *key)
{
	sb_puts(b, ",");
	log_json_string(b, key);
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

char *log_path_in(const char *dir, const char *file)
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
		char *p = log_path_in(dir, de->d_name);
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
	char *index = log_path_in(dir, "index.jsonl");
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
	log_json_key(&b, "index");
	sb_printf(&b, "%d", ++l->nrewrites);
	log_json_key(&b, "primitive");
	log_json_string(&b, primitive);
	log_json_key(&b, "args");
	log_json_string(&b, args);
	log_json_key(&b, "result");
	log_json_string(&b, result);
	log_json_key(&b, "reason");
	log_json_string(&b, reason);
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
	log_json_string(b, s ? s : "?");
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
		log_json_string(b, m->vars[i].var->name);
		log_json_key(b, "value");
		log_json_string(b, m->vars[i].val.text);
		sb_puts(b, "}");
	}
	sb_puts(b, "],\"cells\":[");
	for (int i = 0; i < m->ncells; i++) {
		const ModelCell *c = &m->cells[i];
		sb_puts(b, i ? ",{\"buffer\":" : "{\"buffer\":");
		log_json_string(b, c->buf->name);
		log_json_key(b, "index");
		sb_puts(b, "[");
		for (int k = 0; k < c->nidx; k++)
			sb_printf(b, "%s%lld", k ? "," : "", (long long)c->idx[k]);
		sb_puts(b, "]");
		log_json_key(b, "value");
		log_json_string(b, c->val.text);
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
	char *path = log_path_in(l->dir, file);
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
	log_json_key(&b, "id");
	sb_printf(&b, "%d", id);
	log_json_key(&b, "kind");
	log_json_string(&b, o->kind);
	log_json_key(&b, "statement");
	log_json_string(&b, o->statement);
	log_json_key(&b, "rewrite");
	log_json_string(&b, o->rewrite);
	log_json_key(&b, "origin");
	origin_text(&b, o->origin);
	log_json_key(&b, "related");
	sb_puts(&b, "[");
	for (int i = 0; i < o->nrelated; i++) {
		if (i)
			sb_puts(&b, ",");
		origin_text(&b, o->related[i]);
	}
	sb_puts(&b, "]");
	log_json_key(&b, "solver");
	log_json_string(&b, "z3");
	log_json_key(&b, "solver_version");
	log_json_string(&b, space ? space + 1 : version);
	log_json_key(&b, "float_mode");
	log_json_string(&b, float_mode_name(fm));
	log_json_key(&b, "verdict");
	log_json_string(&b, verdict_name(r->verdict));
	log_json_key(&b, "reason");
	log_json_string(&b, r->reason);
	log_json_key(&b, "seconds");
	sb_printf(&b, "%.6f", r->seconds);
	log_json_key(&b, "cached");
	sb_puts(&b, r->cached ? "true" : "false");
	log_json_key(&b, "model");
	model_json(&b, r->verdict == VERDICT_REFUTED ? r->model : NULL);
	log_json_key(&b, "smt2");
	log_json_string(&b, smt2 ? file : NULL);
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
	char *path = log_path_in(l->dir, file);
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
	log_json_key(&b, "vsched");
	log_json_string(&b, l->vsched_version);
	log_json_key(&b, "z3");
	log_json_string(&b, space ? space + 1 : version);
	log_json_key(&b, "float_mode");
	log_json_string(&b, float_mode_name(l->float_mode));
	log_json_key(&b, "timeout_ms");
	sb_printf(&b, "%u", l->timeout_ms);
	log_json_key(&b, "rlimit");
	sb_printf(&b, "%u", l->rlimit);
	log_json_key(&b, "hash");
	log_json_string(&b, "sha256");
	log_json_key(&b, "kernel");
	sb_puts(&b, "{\"name\":");
	log_json_string(&b, l->kernel_name);
	log_json_key(&b, "file");
	log_json_string(&b, "kernel.tir");
	log_json_key(&b, "sha256");
	log_json_string(&b, l->kernel_sha);
	sb_puts(&b, "}");
	log_json_key(&b, "schedules");
	sb_puts(&b, "[");
	for (int i = 0; i < l->nschedules; i++) {
		char file[40];
		log_schedule_file_name(i, file, sizeof file);
		sb_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		log_json_string(&b, l->schedule_names[i]);
		log_json_key(&b, "file");
		log_json_string(&b, file);
		log_json_key(&b, "sha256");
		log_json_string(&b, l->schedule_sha[i]);
		sb_puts(&b, "}");
	}
	sb_puts(&b, "]");
	log_json_key(&b, "builds");
	sb_puts(&b, "[");
	for (int i = 0; i < l->nbuilds; i++)
		sb_printf(&b, "%s{\"after_schedules\":%d,\"int64_widening\":%s}", i ? "," : "",
			  l->build_after[i], l->build_int64[i] ? "true" : "false");
	sb_puts(&b, "]");
	log_json_key(&b, "api_steps");
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
	log_schedule_file_name(k, file, sizeof file);
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
