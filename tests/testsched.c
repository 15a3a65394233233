/* tests/testsched.c — helpers for suites that run schedule scripts on
 * whole modules (see testsched.h). */
#include "tests/testsched.h"

#include "backend/backend.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run every line but the last, remember the module, run the last one. */
static TsRun run_split(Arena *a, const char *kernel, const char *script)
{
	TsRun t;
	memset(&t, 0, sizeof t);
	t.before = tu_parse(a, "k.tir", kernel);
	t.s = tu_schedule(a, t.before);
	const char *last = script + strlen(script);
	while (last > script && last[-1] == '\n')
		last--;
	const char *nl = last;
	while (nl > script && nl[-1] != '\n')
		nl--;
	if (nl > script) {
		char *head = arena_strndup(a, script, (size_t)(nl - script));
		StepStatus st = tu_run(t.s, head);
		if (st != STEP_COMMITTED) {
			char *txt = sched_report_text(tu_last(t.s));
			ck_abort_msg("an earlier step of\n%s\nwas not committed:\n%s", script, txt);
		}
	}
	t.prev = t.s->mod;
	t.last = tu_run(t.s, arena_strndup(a, nl, (size_t)(last - nl)));
	t.r = tu_last(t.s);
	return t;
}

static void equiv_all(const Module *before, const Module *after, int trials)
{
	for (int i = 0; i < after->nfuncs; i++) {
		const Func *g = after->funcs[i];
		const Func *f = module_find_func(before, g->name);
		ck_assert_msg(f != NULL, "function %s is new", g->name);
		if (f != g)
			tu_assert_equiv(f, g, trials);
	}
}

TsRun ts_accept(Arena *a, const char *kernel, const char *script, int trials)
{
	TsRun t = run_split(a, kernel, script);
	/* the last call's own status: a call the script reader refused
	 * leaves the previous step's report as the last one */
	if (t.last != STEP_COMMITTED || t.r->status != STEP_COMMITTED) {
		char *txt = sched_report_text(t.r);
		ck_abort_msg("expected the commit of\n%s\n%s", script, txt);
	}
	equiv_all(t.before, t.s->mod, trials);
	return t;
}

TsRun ts_accept_opaque(Arena *a, const char *kernel, const char *script)
{
	TsRun t = run_split(a, kernel, script);
	if (t.last != STEP_COMMITTED || t.r->status != STEP_COMMITTED) {
		char *txt = sched_report_text(t.r);
		ck_abort_msg("expected the commit of\n%s\n%s", script, txt);
	}
	for (int i = 0; i < t.s->mod->nfuncs; i++)
		ts_assert_reparses(a, t.s->mod->funcs[i]);
	return t;
}

TsRun ts_reject(Arena *a, const char *kernel, const char *script, const char *why)
{
	TsRun t = run_split(a, kernel, script);
	char *txt = sched_report_text(t.r);
	ck_assert_msg(t.r->status == STEP_REJECTED, "expected the rejection of\n%s\n%s", script, txt);
	ck_assert_msg(t.r->reason && strstr(t.r->reason, why), "reason lacks '%s':\n%s", why, txt);
	ck_assert_msg(t.s->mod == t.prev, "a rejected step changed the module:\n%s", txt);
	free(txt);
	return t;
}

StepReport *ts_rejected(Arena *a, const char *kernel, const char *script, const char *why)
{
	TsRun t = ts_reject(a, kernel, script, why);
	sched_free(t.s);
	return t.r;
}

StepReport *ts_refuted(Arena *a, const char *kernel, const char *script, const char *kind)
{
	TsRun t = ts_reject(a, kernel, script, kind);
	ts_assert_refuted_confirmed(t.r, kind);
	sched_free(t.s);
	return t.r;
}

StepReport *ts_bad_input(Arena *a, const char *kernel, const char *script, const char *why)
{
	Module *m = tu_parse(a, "k.tir", kernel);
	Schedule *s = tu_schedule(a, m);
	DiagList d;
	diag_init(&d, a);
	/* not tu_run: the diagnostics are what the user sees */
	Script *sc = script_parse(a, source_from_string(a, "t.sched", script), &d);
	ck_assert_msg(sc != NULL, "script does not parse: %s", script);
	StepStatus st = sched_run_script(s, sc, &d);
	char *text = diag_render(&d);
	ck_assert_msg(st == STEP_BAD_INPUT, "expected bad input for %s, got %d:\n%s", script, st, text);
	ck_assert_msg(strstr(text, why), "diagnostics lack '%s':\n%s", why, text);
	free(text);
	/* run_script's argument checks stop before any report; a rewrite's own
	 * checks leave one as the last step */
	StepReport *r = s->nsteps ? s->steps[s->nsteps - 1] : NULL;
	if (r && r->status != STEP_BAD_INPUT)
		r = NULL;
	if (r)
		ck_assert_msg(r->reason && strstr(r->reason, why), "reason '%s' lacks '%s'",
			      r->reason ? r->reason : "(none)", why);
	ck_assert_msg(s->mod == m, "bad input changed the module: %s", script);
	sched_free(s);
	return r;
}

void ts_assert_reparses(Arena *a, const Func *f)
{
	char *text = print_func(f);
	Module *m = tu_parse(a, "printed.tir", text);
	ck_assert_msg(ir_func_equal(m->funcs[0], f), "printed form does not parse back:\n%s", text);
	free(text);
}

void ts_assert_refuted_confirmed(const StepReport *r, const char *kind)
{
	char *txt = sched_report_text(r);
	ck_assert_msg(r->failed >= 0 && r->failed < r->nobs, "no failing obligation:\n%s", txt);
	ck_assert_msg(strcmp(r->obs[r->failed]->kind, kind) == 0, "failed on %s, not %s:\n%s",
		      r->obs[r->failed]->kind, kind, txt);
	ck_assert_msg(r->results[r->failed].verdict == VERDICT_REFUTED, "not refuted:\n%s", txt);
	ck_assert_msg(r->counterexample != NULL, "no counterexample:\n%s", txt);
	ck_assert_msg(r->replay == REPLAY_CONFIRMED, "replay not confirmed:\n%s", txt);
	free(txt);
}

bool ts_has_obligation(const StepReport *r, const char *kind, Verdict v)
{
	for (int i = 0; i < r->nobs; i++)
		if (strcmp(r->obs[i]->kind, kind) == 0 && r->results[i].verdict == v)
			return true;
	return false;
}

int ts_count_obligations(const StepReport *r, const char *kind)
{
	int n = 0;
	for (int i = 0; i < r->nobs; i++)
		n += strcmp(r->obs[i]->kind, kind) == 0;
	return n;
}

Func *ts_func(const TsRun *t, const char *name)
{
	if (!name)
		return sched_func(t->s);
	Func *f = module_find_func(t->s->mod, name);
	ck_assert_msg(f != NULL, "no function %s", name);
	return f;
}

char *ts_print(Arena *a, const Func *f)
{
	char *s = print_func(f);
	char *r = arena_strdup(a, s);
	free(s);
	return r;
}

char *ts_report(Arena *a, const StepReport *r)
{
	char *s = sched_report_text(r);
	char *x = arena_strdup(a, s);
	free(s);
	return x;
}

void ts_has(const char *text, const char *needle)
{
	ck_assert_msg(text && strstr(text, needle) != NULL, "'%s' not found in:\n%s", needle,
		      text ? text : "(null)");
}

void ts_lacks(const char *text, const char *needle)
{
	ck_assert_msg(!text || strstr(text, needle) == NULL, "'%s' found in:\n%s", needle, text);
}

int ts_count_kind(const Stmt *s, StmtKind k)
{
	int n = s->kind == k;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			n += ts_count_kind(s->u.seq.items[i], k);
		return n;
	case ST_FOR: return n + ts_count_kind(s->u.loop.body, k);
	case ST_IF:
		return n + ts_count_kind(s->u.cond.then_s, k) +
		       (s->u.cond.else_s ? ts_count_kind(s->u.cond.else_s, k) : 0);
	case ST_ALLOC: return n + ts_count_kind(s->u.alloc.body, k);
	case ST_BLOCK: return n + ts_count_kind(s->u.block.body, k);
	case ST_LET: return n + ts_count_kind(s->u.let.body, k);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return n;
	}
	return n;
}

static bool has_store(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			if (has_store(s->u.seq.items[i]))
				return true;
		return false;
	case ST_FOR: return has_store(s->u.loop.body);
	case ST_IF:
		return has_store(s->u.cond.then_s) || (s->u.cond.else_s && has_store(s->u.cond.else_s));
	case ST_STORE: return true;
	case ST_ALLOC: return has_store(s->u.alloc.body);
	case ST_BLOCK: return has_store(s->u.block.body);
	case ST_LET: return has_store(s->u.let.body);
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return false;
	}
	return false;
}

int ts_store_ifs(const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ: {
		int n = 0;
		for (int i = 0; i < s->u.seq.n; i++)
			n += ts_store_ifs(s->u.seq.items[i]);
		return n;
	}
	case ST_FOR: return ts_store_ifs(s->u.loop.body);
	case ST_IF:
		return has_store(s) + ts_store_ifs(s->u.cond.then_s) +
		       (s->u.cond.else_s ? ts_store_ifs(s->u.cond.else_s) : 0);
	case ST_ALLOC: return ts_store_ifs(s->u.alloc.body);
	case ST_BLOCK: return ts_store_ifs(s->u.block.body);
	case ST_LET: return ts_store_ifs(s->u.let.body);
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return 0;
	}
	return 0;
}

char *ts_cells_in_state(Arena *a, const Func *f, const char *buf, CellState state, uint64_t seed)
{
	DiagList d;
	diag_init(&d, a);
	State *st = interp_gen_input(a, f, seed, &d);
	if (!st) {
		char *msg = diag_render(&d);
		ck_abort_msg("no input for %s: %s", f->name, msg);
	}
	InterpResult r;
	RunStatus rs = interp_run(f, st, 0, &r);
	ck_assert_msg(rs == RUN_OK, "%s does not run: %s", f->name, r.message ? r.message : "?");
	BufState *b = state_buffer(st, buf);
	ck_assert_msg(b != NULL, "no buffer %s", buf);
	StrBuf out = {0};
	int64_t ix[16];
	ck_assert_int_le(b->ndim, 16);
	for (int64_t off = 0; off < b->size; off++) {
		if (b->cell[off] != state)
			continue;
		int64_t rest = off;
		for (int k = b->ndim - 1; k >= 0; k--) {
			ix[k] = rest % b->shape[k];
			rest /= b->shape[k];
		}
		sb_printf(&out, "%s[", out.n ? " " : "");
		for (int k = 0; k < b->ndim; k++)
			sb_printf(&out, "%s%lld", k ? ", " : "", (long long)ix[k]);
		sb_puts(&out, "]");
	}
	char *s = sb_take(&out);
	char *res = arena_strdup(a, s);
	free(s);
	return res;
}

Func *ts_parse_func(Arena *a, const char *kernel)
{
	Module *m = tu_parse(a, "k.tir", kernel);
	ck_assert_int_eq(m->nfuncs, 1);
	return m->funcs[0];
}

/* ---------- case folders ---------- */

typedef struct CaseExpect {
	bool accept, bad_input, build, build_reject, unchanged;
	char equiv[256], shape[256], reason[256], same[256], scaled[256], replay[32];
	/* ir: the result prints as this file does; ir_normalized: as this
	 * file does once the case's own schedule has run on it too */
	char ir[256], ir_normalized[256];
	int max_store_ifs; /* -1 if absent */
} CaseExpect;

/* The rest of `line` after `key` and blanks, into out (n bytes). */
static void expect_value(const char *line, const char *key, char *out, size_t n)
{
	const char *v = line + strlen(key);
	while (*v == ' ' || *v == '\t')
		v++;
	snprintf(out, n, "%s", v);
	size_t k = strlen(out);
	while (k && (out[k - 1] == ' ' || out[k - 1] == '\r'))
		out[--k] = '\0';
}

static bool read_case_expect(const char *dir, CaseExpect *e)
{
	char path[4096];
	tu_join(path, sizeof path, dir, "expect");
	char *text = tu_read_file(path);
	if (!text)
		return false;
	memset(e, 0, sizeof *e);
	e->max_store_ifs = -1;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char yes[16];
		if (strncmp(line, "verdict:", 8) == 0)
			e->accept = strstr(line, "accept") != NULL;
		else if (strncmp(line, "equiv:", 6) == 0)
			expect_value(line, "equiv:", e->equiv, sizeof e->equiv);
		else if (strncmp(line, "shape:", 6) == 0)
			expect_value(line, "shape:", e->shape, sizeof e->shape);
		else if (strncmp(line, "ir:", 3) == 0)
			expect_value(line, "ir:", e->ir, sizeof e->ir);
		else if (strncmp(line, "ir_normalized:", 14) == 0)
			expect_value(line, "ir_normalized:", e->ir_normalized, sizeof e->ir_normalized);
		else if (strncmp(line, "reason:", 7) == 0)
			expect_value(line, "reason:", e->reason, sizeof e->reason);
		else if (strncmp(line, "unchanged:", 10) == 0) {
			expect_value(line, "unchanged:", yes, sizeof yes);
			e->unchanged = strcmp(yes, "yes") == 0;
		} else if (strncmp(line, "same:", 5) == 0)
			expect_value(line, "same:", e->same, sizeof e->same);
		else if (strncmp(line, "scaled:", 7) == 0)
			expect_value(line, "scaled:", e->scaled, sizeof e->scaled);
		else if (strncmp(line, "replay:", 7) == 0)
			expect_value(line, "replay:", e->replay, sizeof e->replay);
		else if (strncmp(line, "max_store_ifs:", 14) == 0)
			e->max_store_ifs = atoi(line + 14);
		else if (strncmp(line, "bad_input:", 10) == 0) {
			expect_value(line, "bad_input:", yes, sizeof yes);
			e->bad_input = strcmp(yes, "yes") == 0;
		} else if (strncmp(line, "build:", 6) == 0) {
			expect_value(line, "build:", yes, sizeof yes);
			e->build = strcmp(yes, "yes") == 0;
			e->build_reject = strcmp(yes, "reject") == 0;
		}
	}
	free(text);
	return true;
}

static Module *case_parse(Arena *a, const char *path, StrBuf *why)
{
	DiagList d;
	diag_init(&d, a);
	Source *src = source_read_file(a, path, &d);
	Module *m = src ? parse_module(a, src, &d) : NULL;
	if (!m) {
		char *msg = diag_render(&d);
		sb_printf(why, "%s does not parse:\n%s", path, msg);
		free(msg);
	}
	return m;
}

/* The nesting of loops (F), ifs (I, E before an else) and stores (S):
 * what TVM's pass did to the structure, whatever the expressions. */
static void shape_of(const Stmt *s, StrBuf *out)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			shape_of(s->u.seq.items[i], out);
		return;
	case ST_FOR:
		sb_puts(out, "F(");
		shape_of(s->u.loop.body, out);
		sb_puts(out, ")");
		return;
	case ST_IF:
		sb_puts(out, "I(");
		shape_of(s->u.cond.then_s, out);
		if (s->u.cond.else_s) {
			sb_puts(out, ")E(");
			shape_of(s->u.cond.else_s, out);
		}
		sb_puts(out, ")");
		return;
	case ST_STORE: sb_puts(out, "S"); return;
	case ST_ALLOC:
		if (s->u.alloc.body)
			shape_of(s->u.alloc.body, out);
		return;
	case ST_BLOCK: shape_of(s->u.block.body, out); return;
	case ST_LET: shape_of(s->u.let.body, out); return;
	case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT: return;
	}
}

static const Func *same_name_or_first(const Module *m, const char *name)
{
	const Func *f = module_find_func(m, name);
	return f ? f : m->funcs[0];
}

/* The accepted result against before, after.tir, the shape, the store
 * ifs and the backend. */
/* Iterations of the statements under s, with each loop of a non-literal
 * extent counted as 16, saturating at 2^40. */
static double iterations(const Stmt *s)
{
	if (!s)
		return 0;
	double sum = 0;
	switch (s->kind) {
	case ST_STORE: case ST_ASSUME: case ST_EVAL: case ST_PASS: case ST_COUNT:
		return 1;
	case ST_FOR: {
		int64_t n;
		double ext = an_const_int(s->u.loop.extent, &n) ? (double)(n > 0 ? n : 0) : 16;
		sum = ext * iterations(s->u.loop.body);
		break;
	}
	case ST_SEQ: case ST_IF: case ST_ALLOC: case ST_BLOCK: case ST_LET:
		for (int i = 0; i < stmt_nchildren(s); i++)
			sum += iterations(stmt_child(s, i));
		break;
	}
	return sum < 0x1p40 ? sum : 0x1p40;
}

/* Random trials for comparing a TVM case under the interpreter: six, and
 * fewer for kernels of millions of iterations (a 128^3 matmul took
 * minutes for 24 runs), never none. */
static int case_trials(const Func *f)
{
	double n = iterations(f->body);
	return n > 1e6 ? 1 : n > 1e5 ? 2 : 6;
}

/* ---------- scaled copies (expect `scaled:`) ----------
 * A TVM kernel too large for the interpreter (128^4 cells) is checked on a
 * copy in the case folder that differs from before.tir only in integer
 * literals (128 -> 8): the schedule must commit on both, the scaled result
 * is run against the scaled kernel, and the full-size result, printed,
 * must be the scaled result printed with the literals mapped back the
 * same way. Comment lines are not compared. */

#define MAX_LITERAL_PAIRS 64

typedef struct LiteralMap {
	int n;
	long long big[MAX_LITERAL_PAIRS], small[MAX_LITERAL_PAIRS];
} LiteralMap;

/* The next token of *p (skipping blanks and # comment lines) into tok (n
 * bytes); *is_int when it is an integer literal. False at the end. */
static bool next_token(const char **p, char *tok, size_t n, bool *is_int)
{
	const char *s = *p;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
			s++;
		if (*s != '#')
			break;
		while (*s && *s != '\n')
			s++;
	}
	if (!*s)
		return false;
	const char *b = s;
	*is_int = false;
	if ((*s >= '0' && *s <= '9')) {
		while (*s >= '0' && *s <= '9')
			s++;
		*is_int = *s != '.' && *s != 'e' && *s != 'E';
		while ((*s >= '0' && *s <= '9') || *s == '.' || *s == 'e' || *s == 'E' ||
		       ((*s == '-' || *s == '+') && (s[-1] == 'e' || s[-1] == 'E')))
			s++;
	} else if (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
		while (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		       (*s >= '0' && *s <= '9'))
			s++;
	} else {
		s++;
	}
	snprintf(tok, n, "%.*s", (int)(s - b), b);
	*p = s;
	return true;
}

/* Whether `big` and `small` differ only in integer literals. learn: the
 * differing pairs are recorded in map (one small value per big one);
 * otherwise every differing pair must already be in map. */
static bool literals_only_differ(const char *big, const char *small, LiteralMap *map, bool learn,
				 StrBuf *why)
{
	char tb[256], ts[256];
	bool ib, is;
	for (;;) {
		bool mb = next_token(&big, tb, sizeof tb, &ib), ms = next_token(&small, ts, sizeof ts, &is);
		if (!mb || !ms) {
			if (mb != ms)
				sb_printf(why, "one text ends before the other");
			return mb == ms;
		}
		if (strcmp(tb, ts) == 0)
			continue;
		if (!ib || !is) {
			sb_printf(why, "'%s' against '%s'", tb, ts);
			return false;
		}
		long long vb = atoll(tb), vs = atoll(ts);
		int k = 0;
		while (k < map->n && map->big[k] != vb)
			k++;
		if (k < map->n && map->small[k] != vs) {
			sb_printf(why, "%lld is %lld here and %lld elsewhere", vb, vs, map->small[k]);
			return false;
		}
		if (k == map->n) {
			if (!learn || map->n == MAX_LITERAL_PAIRS) {
				sb_printf(why, "%lld against %lld, which the scaled kernel does not map", vb, vs);
				return false;
			}
			map->big[map->n] = vb;
			map->small[map->n++] = vs;
		}
	}
}

static Script *case_script(Arena *a, const char *dir, StrBuf *why)
{
	char path[4096];
	DiagList d;
	diag_init(&d, a);
	tu_join(path, sizeof path, dir, "schedule.sched");
	Source *src = source_read_file(a, path, &d);
	Script *sc = src ? script_parse(a, src, &d) : NULL;
	if (!sc) {
		char *msg = diag_render(&d);
		sb_printf(why, "the schedule does not parse:\n%s", msg);
		free(msg);
	}
	return sc;
}

static void check_scaled(Arena *a, const char *dir, const CaseExpect *e, Schedule *s, StrBuf *why)
{
	char path[4096], *report = NULL;
	if (e->equiv[0]) {
		sb_printf(why, "expect: scaled: goes with same:, not equiv: (the full-size result is not run)");
		return;
	}
	tu_join(path, sizeof path, dir, "before.tir");
	char *big = tu_read_file(path);
	tu_join(path, sizeof path, dir, e->scaled);
	char *small = tu_read_file(path);
	LiteralMap map = {0};
	StrBuf d = {0};
	if (!big || !small)
		sb_printf(why, "cannot read before.tir or %s", e->scaled);
	else if (!literals_only_differ(big, small, &map, true, &d) || map.n == 0)
		sb_printf(why, "%s is not before.tir with other integer literals: %s", e->scaled,
			  map.n ? d.s : "no literal differs");
	free(big);
	free(small);
	free(d.s);
	if (why->n)
		return;
	Module *sm = case_parse(a, path, why);
	Script *sc = sm ? case_script(a, dir, why) : NULL;
	if (!sc)
		return;
	SmtOptions opt = {0};
	opt.timeout_ms = 20000;
	Schedule *s2 = sched_new(a, sm, &opt);
	DiagList dl;
	diag_init(&dl, a);
	StepStatus st = sched_run_script(s2, sc, &dl);
	if (st != STEP_COMMITTED) {
		StepReport *last = s2->nsteps ? s2->steps[s2->nsteps - 1] : NULL;
		char *txt = last ? sched_report_text(last) : diag_render(&dl);
		sb_printf(why, "the schedule does not commit on %s:\n%s", e->scaled, txt);
		free(txt);
		sched_free(s2);
		return;
	}
	for (int i = 0; i < s2->mod->nfuncs && !why->n; i++) {
		const Func *out = s2->mod->funcs[i], *orig = module_find_func(sm, out->name);
		if (orig && orig != out && !tu_equiv(orig, out, case_trials(orig), &report))
			sb_printf(why, "%s (%s) differs from its scaled kernel: %s", out->name, e->scaled,
				  report ? report : "?");
		free(report);
		report = NULL;
	}
	if (!why->n && s2->mod->nfuncs != s->mod->nfuncs)
		sb_printf(why, "the scaled run made %d functions, the full-size one %d", s2->mod->nfuncs,
			  s->mod->nfuncs);
	for (int i = 0; i < s->mod->nfuncs && !why->n; i++) {
		char *pb = print_func(s->mod->funcs[i]), *ps = print_func(s2->mod->funcs[i]);
		StrBuf dd = {0};
		if (!literals_only_differ(pb, ps, &map, false, &dd))
			sb_printf(why, "the full-size result is not the scaled result scaled back (%s):\n%s\nscaled:\n%s",
				  dd.s ? dd.s : "?", pb, ps);
		free(dd.s);
		free(pb);
		free(ps);
	}
	sched_free(s2);
}

/* The body as vsched prints it: what a pass did to the statements and
 * the expressions alike (the function's name and parameters aside; the
 * TVM tests name before and expected differently). */
static char *body_text(const Func *f)
{
	char *t = print_stmt(f->body, 1);
	/* TVM writes the statement that does nothing as T.evaluate(0),
	 * vsched as pass */
	for (char *p = strstr(t, "T.evaluate(0)\n"); p; p = strstr(p, "T.evaluate(0)\n")) {
		memcpy(p, "pass", 4);
		memmove(p + 4, p + 13, strlen(p + 13) + 1);
	}
	return t;
}

/* ir / ir_normalized: the result's printed body against the file's. With
 * normalize, the file goes through the case's schedule first, so that a
 * form TVM prints and vsched would simplify further (a proven equal
 * rewrite) compares equal; never used where TVM's expected result is the
 * input itself, where it would compare a pass's output with itself. */
static void check_ir(Arena *a, const char *dir, const char *file, bool normalize, const Func *out,
		     StrBuf *why)
{
	char path[4096];
	tu_join(path, sizeof path, dir, file);
	Module *want = case_parse(a, path, why);
	if (!want)
		return;
	const Func *wf = same_name_or_first(want, out->name);
	Schedule *ws = NULL;
	if (normalize) {
		Script *sc = case_script(a, dir, why);
		if (!sc)
			return;
		SmtOptions opt = {0};
		opt.timeout_ms = 20000;
		ws = sched_new(a, want, &opt);
		DiagList d;
		diag_init(&d, a);
		if (sched_run_script(ws, sc, &d) != STEP_COMMITTED) {
			sb_printf(why, "%s does not go through the schedule", file);
			sched_free(ws);
			return;
		}
		wf = same_name_or_first(ws->mod, out->name);
	}
	char *g = body_text(out), *x = body_text(wf);
	if (strcmp(g, x) != 0)
		sb_printf(why, "the result prints as\n%s\n%s%s prints as\n%s", g, file,
			  normalize ? " (normalized)" : "", x);
	free(g);
	free(x);
	if (ws)
		sched_free(ws);
}

static void check_accepted(Arena *a, const char *dir, const CaseExpect *e, Schedule *s, const Module *m,
			   StrBuf *why)
{
	char path[4096], *report = NULL;
	/* a commit that changed nothing passes every comparison with
	 * before.tir: only a case that says so (TVM's result is its input)
	 * may do that */
	bool unchanged = !e->build && s->mod->nfuncs == m->nfuncs;
	for (int i = 0; unchanged && i < m->nfuncs; i++)
		unchanged = ir_func_equal(s->mod->funcs[i], m->funcs[i]);
	if (unchanged != e->unchanged) {
		sb_printf(why, unchanged ? "the schedule committed without changing the kernel"
				    : "expect says unchanged: yes, but the kernel changed");
		return;
	}
	/* with scaled:, check_scaled ran the result's scaled twin instead */
	for (int i = 0; i < s->mod->nfuncs && !why->n && !e->scaled[0]; i++) {
		const Func *out = s->mod->funcs[i], *orig = module_find_func(m, out->name);
		/* the interpreter cannot run an opaque call (T.call_extern ...):
		 * such a result is compared with TVM's structurally, below */
		if (orig && ir_stmt_find_opaque(orig->body))
			continue;
		if (orig && orig != out && !tu_equiv(orig, out, case_trials(orig), &report))
			sb_printf(why, "%s differs from before.tir: %s", out->name, report ? report : "?");
		free(report);
		report = NULL;
	}
	Func *out = sched_func(s);
	if (!why->n && e->equiv[0]) {
		tu_join(path, sizeof path, dir, e->equiv);
		Module *want = case_parse(a, path, why);
		const Func *wf = want ? same_name_or_first(want, out->name) : NULL;
		if (wf && ir_stmt_find_opaque(out->body)) {
			Func same = *wf; /* TVM names its expected function apart */
			same.name = out->name;
			if (!ir_func_equal(out, &same)) {
				char *got = print_func(out);
				sb_printf(why, "the result (with an opaque call, compared structurally) "
					  "differs from %s:\n%s", e->equiv, got);
				free(got);
			}
		} else if (wf && !tu_equiv(out, wf, case_trials(out), &report))
			sb_printf(why, "the result differs from %s: %s", e->equiv, report ? report : "?");
		free(report);
	}
	if (!why->n && e->same[0]) {
		tu_join(path, sizeof path, dir, e->same);
		Module *want = case_parse(a, path, why);
		if (want) {
			/* the same function up to bound names, under the result's name */
			Func w = *same_name_or_first(want, out->name);
			w.name = out->name;
			if (!ir_func_equal(out, &w)) {
				char *p = print_func(out);
				sb_printf(why, "the result is not %s up to names:\n%s", e->same, p);
				free(p);
			}
		}
	}
	if (!why->n && e->shape[0]) {
		tu_join(path, sizeof path, dir, e->shape);
		Module *want = case_parse(a, path, why);
		if (want) {
			StrBuf got = {0}, exp = {0};
			shape_of(out->body, &got);
			shape_of(same_name_or_first(want, out->name)->body, &exp);
			char *g = sb_take(&got), *x = sb_take(&exp);
			if (strcmp(g, x) != 0)
				sb_printf(why, "the result nests as %s, %s as %s", g, e->shape, x);
			free(g);
			free(x);
		}
	}
	if (!why->n && e->ir[0])
		check_ir(a, dir, e->ir, false, out, why);
	if (!why->n && e->ir_normalized[0])
		check_ir(a, dir, e->ir_normalized, true, out, why);
	if (!why->n && e->max_store_ifs >= 0 && ts_store_ifs(out->body) > e->max_store_ifs)
		sb_printf(why, "%d store-guarding ifs, want at most %d", ts_store_ifs(out->body), e->max_store_ifs);
	if (!why->n && e->build) {
		ProvenModule pm;
		sched_proven_module(s, &pm);
		DiagList d;
		diag_init(&d, a);
		Program *p = backend_build(&pm, NULL, &d);
		if (!p) {
			char *msg = diag_render(&d);
			sb_printf(why, "build failed:\n%s", msg);
			free(msg);
			return;
		}
		for (int i = 0; i < backend_num_funcs(p) && !why->n; i++) {
			const char *fn = backend_lowered(p, i)->func->name;
			if (backend_check(p, fn, 3, 11, 0, &report) != 0)
				sb_printf(why, "the compiled %s disagrees with the interpreter:\n%s", fn,
					  report ? report : "?");
			free(report);
			report = NULL;
		}
		backend_free(p);
	}
}

/* build: reject — lowering must refuse the proven result, for the reason
 * expect names. */
static void check_build_refused(Arena *a, const CaseExpect *e, Schedule *s, StrBuf *why)
{
	ProvenModule pm;
	sched_proven_module(s, &pm);
	DiagList d;
	diag_init(&d, a);
	Program *p = backend_build(&pm, NULL, &d);
	if (p) {
		backend_free(p);
		sb_printf(why, "expected the build to be refused, it succeeded");
		return;
	}
	char *msg = diag_render(&d);
	if (e->reason[0] && !strstr(msg, e->reason))
		sb_printf(why, "build refused with '%s', want a reason with '%s'", msg, e->reason);
	free(msg);
}

char *ts_case_check(const char *dir, const char *name, const char *logdir)
{
	StrBuf why = {0};
	CaseExpect e;
	if (!read_case_expect(dir, &e)) {
		sb_printf(&why, "%s: no expect file", name);
		return sb_take(&why);
	}
	Arena a;
	arena_init(&a);
	char path[4096];
	tu_join(path, sizeof path, dir, "before.tir");
	Module *m = case_parse(&a, path, &why);
	Schedule *s = NULL;
	if (!m)
		goto out;
	SmtOptions opt = {0};
	opt.timeout_ms = 20000;
	s = sched_new(&a, m, &opt);
	DiagList d;
	diag_init(&d, &a);
	if (logdir) {
		tu_join(path, sizeof path, logdir, name);
		s->log = proof_log_open(path, &d);
		if (!s->log) {
			sb_printf(&why, "cannot open log %s", path);
			goto out;
		}
	}
	tu_join(path, sizeof path, dir, "schedule.sched");
	Source *src = source_read_file(&a, path, &d);
	Script *sc = src ? script_parse(&a, src, &d) : NULL;
	if (!sc) {
		char *msg = diag_render(&d);
		sb_printf(&why, "the schedule does not parse:\n%s", msg);
		free(msg);
		goto out;
	}
	StepStatus st = sched_run_script(s, sc, &d);
	StepReport *last = s->nsteps ? s->steps[s->nsteps - 1] : NULL;
	if (e.bad_input) {
		if (st != STEP_BAD_INPUT)
			sb_printf(&why, "expected bad input, got %s", st == STEP_COMMITTED ? "a commit" : "a rejection");
	} else if (st == STEP_BAD_INPUT) {
		char *msg = diag_render(&d);
		sb_printf(&why, "bad input:\n%s", msg);
		free(msg);
	} else if (e.build_reject) {
		if (st != STEP_COMMITTED)
			sb_printf(&why, "expected the schedule to commit and the build to be refused");
		else
			check_build_refused(&a, &e, s, &why);
	} else if (!e.accept) {
		if (st != STEP_REJECTED || !last)
			sb_printf(&why, "expected reject, got commit");
		else if (!last->reason || !*last->reason)
			sb_printf(&why, "rejection without reason");
		else if (e.reason[0] && !strstr(last->reason, e.reason))
			sb_printf(&why, "rejected for '%s', want a reason with '%s'", last->reason, e.reason);
		else if (last->failed >= 0 && last->results[last->failed].verdict == VERDICT_REFUTED &&
			 last->replay != REPLAY_CONFIRMED && last->replay != REPLAY_IMPOSSIBLE &&
			 !(last->replay == REPLAY_SKIPPED && strcmp(e.replay, "skipped") == 0)) {
			char *txt = sched_report_text(last);
			sb_printf(&why, "replay %d not confirmed:\n%s", last->replay, txt);
			free(txt);
		}
	} else if (st != STEP_COMMITTED) {
		char *txt = last ? sched_report_text(last) : NULL;
		sb_printf(&why, "expected accept:\n%s", txt ? txt : "no step");
		free(txt);
	} else {
		if (e.scaled[0])
			check_scaled(&a, dir, &e, s, &why);
		if (!why.n)
			check_accepted(&a, dir, &e, s, m, &why);
	}
out:
	if (s)
		sched_free(s);
	arena_free(&a);
	if (!why.n)
		return NULL;
	return sb_take(&why);
}
