/* smt/solve.c — discharging obligations (hyps AND NOT goal) with Z3: one
 * reference-counted context and two solvers per thread, reused between
 * queries and between Solvers of the process (push/pop, or reset for
 * floats and nonlinear terms); every query under a time and a resource
 * limit; a cache of verdicts in memory, and optionally on disk
 * (pcache.c), keyed by the query's structural hash (qhash.c), not its
 * text; models decoded into values (IEEE bits exactly). */
#include "smt/smt.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smt/encode.h"
#include "smt/pcache.h"
#include "smt/qhash.h"
#include "smt/raw.h"
#include "kernel/half.h"

enum { DEFAULT_TIMEOUT_MS = 10000 };

void raw_free(RawResult *r)
{
	free(r->reason);
	for (int i = 0; i < r->nvals; i++)
		free(r->vals[i].text);
	for (int i = 0; i < r->ncells; i++) {
		free(r->cells[i].idx);
		free(r->cells[i].val.text);
	}
	free(r->val_sym);
	free(r->vals);
	free(r->cells);
	memset(r, 0, sizeof *r);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void raw_copy(RawResult *dst, const RawResult *src)
{
	*dst = *src;
	dst->reason = dup_or_null(src->reason);
	dst->val_sym = malloc(sizeof(int) * (size_t)(src->nvals + 1));
	dst->vals = malloc(sizeof(RawValue) * (size_t)(src->nvals + 1));
	dst->cells = malloc(sizeof(RawCell) * (size_t)(src->ncells + 1));
	if (!dst->val_sym || !dst->vals || !dst->cells) {
		free(dst->val_sym);
		free(dst->vals);
		free(dst->cells);
		free(dst->reason);
		memset(dst, 0, sizeof *dst);
		dst->verdict = VERDICT_UNKNOWN;
		dst->reason = strdup("internal: out of memory");
		return;
	}
	for (int i = 0; i < src->nvals; i++) {
		dst->val_sym[i] = src->val_sym[i];
		dst->vals[i] = src->vals[i];
		dst->vals[i].text = dup_or_null(src->vals[i].text);
	}
	for (int i = 0; i < src->ncells; i++) {
		const RawCell *c = &src->cells[i];
		RawCell *d = &dst->cells[i];
		*d = *c;
		d->idx = malloc(sizeof(int64_t) * (size_t)(c->nidx + 1));
		if (d->idx)
			memcpy(d->idx, c->idx, sizeof(int64_t) * (size_t)c->nidx);
		else
			d->nidx = 0;
		d->val.text = dup_or_null(c->val.text);
	}
}

static void raw_unknown(RawResult *r, const char *reason)
{
	r->verdict = VERDICT_UNKNOWN;
	free(r->reason);
	r->reason = strdup(reason);
}

/* ---------- solver object ---------- */

/* The time limit of a worker's queries. Z3 4.8.12's own `timeout` uses a
 * thread-pool scoped_timer that can deadlock once it has expired (Z3
 * pull request 5371: a later timer in the same thread waits forever), so
 * Z3 gets no timeout: this thread calls Z3_interrupt when a check passes
 * its deadline, and again every 20 ms until the check returns. A late
 * interrupt, after the check returned, does not affect the next one. */
typedef struct Watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, quit, armed;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	Z3_context ctx;
} Watchdog;

/* One thread's Z3 state. `inc` answers linear, float-free queries inside
 * push/pop (about 1 ms each); `fresh` is reset after every query, so Z3
 * runs it in non-incremental mode and picks a tactic for its logic (the
 * FP bit-blaster, the nonlinear solvers: what the incremental core
 * lacks, and what the z3 binary applies to the logged file); resetting
 * costs some 25 ms, hence the split. */
typedef struct Worker {
	Z3_context ctx;
	Z3_solver inc, fresh;
	unsigned rlimit; /* the solvers' resource limit */
	Watchdog dog;
	struct Runner *run; /* the check's thread, NULL until the first check */
	struct Worker *next; /* in the process pool while idle */
} Worker;

static void runner_stop(struct Runner *r);

typedef struct CacheEntry {
	QKey key;
	RawResult res;
	struct CacheEntry *next;
} CacheEntry;

struct Solver {
	SmtOptions opt;
	PCache *pcache; /* NULL without opt.cache_dir */
	atomic_int nsolved, nmemory, ndisk;
	pthread_mutex_t cache_lock;
	size_t nbuckets, nentries;
	CacheEntry **buckets;
};

Solver *smt_solver_new(const SmtOptions *opt)
{
	Solver *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (opt)
		s->opt = *opt;
	if (s->opt.timeout_ms == 0)
		s->opt.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (s->opt.threads < 1)
		s->opt.threads = 1;
	pthread_mutex_init(&s->cache_lock, NULL);
	atomic_init(&s->nsolved, 0);
	atomic_init(&s->nmemory, 0);
	atomic_init(&s->ndisk, 0);
	if (s->opt.cache_dir && *s->opt.cache_dir)
		s->pcache = pcache_open(s->opt.cache_dir);
	s->opt.cache_dir = NULL; /* the caller's string; not needed again */
	return s;
}

static void timespec_add_ms(struct timespec *t, unsigned ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void *watchdog_main(void *arg)
{
	Watchdog *d = arg;
	pthread_mutex_lock(&d->mu);
	while (!d->quit) {
		if (!d->armed) {
			pthread_cond_wait(&d->cv, &d->mu);
			continue;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		bool due = now.tv_sec > d->deadline.tv_sec ||
			   (now.tv_sec == d->deadline.tv_sec &&
			    now.tv_nsec >= d->deadline.tv_nsec);
		if (!due) {
			pthread_cond_timedwait(&d->cv, &d->mu, &d->deadline);
			continue;
		}
		Z3_interrupt(d->ctx);
		d->deadline = now;
		timespec_add_ms(&d->deadline, 20);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

static bool watchdog_start(Watchdog *d, Z3_context c)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, &attr);
	pthread_condattr_destroy(&attr);
	d->ctx = c;
	d->started = pthread_create(&d->thread, NULL, watchdog_main, d) == 0;
	if (!d->started) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
	}
	return d->started;
}

static void watchdog_stop(Watchdog *d)
{
	if (!d->started)
		return;
	pthread_mutex_lock(&d->mu);
	d->quit = true;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	d->started = false;
}

static void watchdog_arm(Watchdog *d, unsigned ms)
{
	pthread_mutex_lock(&d->mu);
	clock_gettime(CLOCK_MONOTONIC, &d->deadline);
	timespec_add_ms(&d->deadline, ms);
	d->armed = true;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

static void watchdog_disarm(Watchdog *d)
{
	pthread_mutex_lock(&d->mu);
	d->armed = false;
	pthread_mutex_unlock(&d->mu);
}

static void worker_free(Worker *w)
{
	if (w->run) {
		runner_stop(w->run);
		w->run = NULL;
	}
	if (!w->ctx)
		return;
	watchdog_stop(&w->dog);
	if (w->inc)
		Z3_solver_dec_ref(w->ctx, w->inc);
	if (w->fresh)
		Z3_solver_dec_ref(w->ctx, w->fresh);
	Z3_del_context(w->ctx);
	memset(w, 0, sizeof *w);
}

/* ---------- a check with a hard bound ----------
 * Z3 does not poll for the interrupt everywhere: a nonlinear query with a
 * 1000 ms limit returned up to 1.15 s after the watchdog's first
 * interrupt (in the nonlinear tactics' preprocessing), and a resource
 * limit would not help, since Z3 counts resources where it polls. So the
 * check runs on a thread of its own while the caller waits until the
 * hard deadline (the limit, plus a quarter of it and 250 ms for Z3 to
 * unwind after the interrupt: losing a worker costs a new context, up to
 * 0.4 s on a loaded machine, so not too eagerly). Past it the caller gives up: the query is
 * "timeout" (not proven, so it rejects), and the worker is lost: the
 * check's thread owns it, finishes alone (the watchdog keeps
 * interrupting) and frees it; the caller takes another worker. At most
 * MAX_LOST checks run on alone; with more, the caller waits as before. */
enum { MAX_LOST = 4, UNWIND_MS = 250 };

static atomic_int lost_alive;
static pthread_once_t lost_once = PTHREAD_ONCE_INIT;

/* At exit, a lost check may still run in Z3 while the library's static
 * state is torn down: wait for it (each is interrupted every 20 ms and
 * has returned within about a second), at most 5 s. */
static void wait_for_lost(void)
{
	for (int k = 0; k < 1000 && atomic_load(&lost_alive) > 0; k++)
		nanosleep(&(struct timespec){0, 5000000L}, NULL);
}

/* a forked child has none of its parent's threads */
static void lost_after_fork(void) { atomic_store(&lost_alive, 0); }

static void register_lost_wait(void)
{
	atexit(wait_for_lost);
	pthread_atfork(NULL, NULL, lost_after_fork);
}

/* The check's thread, one per worker, started on its first check. */
typedef struct Runner {
	pthread_mutex_t mu;
	pthread_cond_t go_cv, done_cv;
	pthread_t thread;
	bool go, done, lost, quit;
	Worker *w;
	Z3_solver s;
	Z3_lbool res;
	bool failed; /* a Z3 error, with its text in err */
	char err[256];
} Runner;

static void runner_destroy(Runner *r)
{
	pthread_cond_destroy(&r->go_cv);
	pthread_cond_destroy(&r->done_cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static void *runner_main(void *arg)
{
	Runner *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->go && !r->quit)
			pthread_cond_wait(&r->go_cv, &r->mu);
		if (r->quit)
			break;
		r->go = false;
		Worker *w = r->w;
		Z3_solver s = r->s;
		pthread_mutex_unlock(&r->mu);
		smt_z3_error_clear();
		Z3_lbool res = Z3_solver_check(w->ctx, s);
		/* at once: Z3_interrupt after the check leaves the context
		 * canceled, and the next push would fail ("push canceled") */
		watchdog_disarm(&w->dog);
		const char *msg = NULL;
		bool failed = smt_z3_error(&msg);
		char err[256] = "";
		if (failed)
			snprintf(err, sizeof err, "%s", msg ? msg : "");
		smt_z3_error_clear();
		pthread_mutex_lock(&r->mu);
		r->res = res;
		r->failed = failed;
		memcpy(r->err, err, sizeof err);
		r->done = true;
		pthread_cond_signal(&r->done_cv);
		if (r->lost)
			break;
	}
	bool lost = r->lost;
	pthread_mutex_unlock(&r->mu);
	if (lost) { /* the caller has gone: the worker is ours to free */
		pthread_detach(pthread_self());
		Worker *w = r->w;
		w->run = NULL;
		worker_free(w);
		free(w);
		runner_destroy(r);
		atomic_fetch_sub(&lost_alive, 1);
	}
	return NULL;
}

static Runner *runner_start(Worker *w)
{
	Runner *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->go_cv, NULL);
	pthread_cond_init(&r->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	r->w = w;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Z3 recurses on deep terms: the size of a main thread's stack */
	pthread_attr_setstacksize(&attr, (size_t)8 << 20);
	bool ok = pthread_create(&r->thread, &attr, runner_main, r) == 0;
	pthread_attr_destroy(&attr);
	if (!ok) {
		runner_destroy(r);
		return NULL;
	}
	return r;
}

/* an idle runner (not lost): its thread ends and is joined */
static void runner_stop(Runner *r)
{
	pthread_mutex_lock(&r->mu);
	r->quit = true;
	pthread_cond_signal(&r->go_cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	runner_destroy(r);
}

/* Z3_solver_check(w->ctx, s) under the watchdog's time_ms, returning by
 * the hard deadline. False when the caller gave up: *res is Z3_L_UNDEF
 * and w belongs to the check's thread (the caller must not touch w, its
 * context or anything made in it again). A Z3 error of the check is
 * copied to err (NUL-terminated, empty without one). */
static bool timed_check(Worker *w, Z3_solver s, unsigned time_ms,
			Z3_lbool *res, char err[256])
{
	err[0] = '\0';
	*res = Z3_L_UNDEF;
	bool room = atomic_load(&lost_alive) < MAX_LOST;
	if (!w->run && room)
		w->run = runner_start(w);
	Runner *r = w->run;
	if (!r || !room) { /* inline, bounded by the watchdog alone */
		watchdog_arm(&w->dog, time_ms);
		*res = Z3_solver_check(w->ctx, s);
		watchdog_disarm(&w->dog);
		const char *msg = NULL;
		if (smt_z3_error(&msg))
			snprintf(err, 256, "%s", msg ? msg : "");
		return true;
	}
	struct timespec hard;
	clock_gettime(CLOCK_MONOTONIC, &hard);
	timespec_add_ms(&hard, time_ms + time_ms / 4 + UNWIND_MS);
	pthread_mutex_lock(&r->mu);
	r->s = s;
	r->done = false;
	r->go = true;
	watchdog_arm(&w->dog, time_ms);
	pthread_cond_signal(&r->go_cv);
	while (!r->done &&
	       pthread_cond_timedwait(&r->done_cv, &r->mu, &hard) == 0)
		;
	bool done = r->done;
	if (done) {
		*res = r->res;
		if (r->failed)
			snprintf(err, 256, "%s", r->err);
	} else {
		r->lost = true;
		atomic_fetch_add(&lost_alive, 1);
		pthread_once(&lost_once, register_lost_wait);
	}
	pthread_mutex_unlock(&r->mu);
	return done;
}

void smt_solver_free(Solver *s)
{
	if (!s)
		return;
	pcache_close(s->pcache);
	for (size_t i = 0; i < s->nbuckets; i++) {
		for (CacheEntry *e = s->buckets[i], *next; e; e = next) {
			next = e->next;
			raw_free(&e->res);
			free(e);
		}
	}
	free(s->buckets);
	pthread_mutex_destroy(&s->cache_lock);
	free(s);
}

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static char version_text[48];

static void make_version(void)
{
	unsigned major, minor, build, rev;
	Z3_get_version(&major, &minor, &build, &rev);
	snprintf(version_text, sizeof version_text, "z3 %u.%u.%u", major,
		 minor, build);
}

const char *smt_solver_version(void)
{
	pthread_once(&version_once, make_version);
	return version_text;
}

/* A solver with the resource limit as a parameter; Z3 applies it to each
 * check separately (counting from the start of the check). The time
 * limit is the watchdog's. */
static Z3_solver limited_solver(Z3_context c, const SmtOptions *opt)
{
	Z3_solver s = Z3_mk_solver(c);
	if (!s)
		return NULL;
	Z3_solver_inc_ref(c, s);
	Z3_params p = Z3_mk_params(c);
	if (p) {
		Z3_params_inc_ref(c, p);
		if (opt->rlimit)
			Z3_params_set_uint(c, p,
					   Z3_mk_string_symbol(c, "rlimit"),
					   opt->rlimit);
		Z3_solver_set_params(c, s, p);
		Z3_params_dec_ref(c, p);
	}
	if (!p || smt_z3_error(NULL)) {
		Z3_solver_dec_ref(c, s);
		return NULL;
	}
	return s;
}

/* The context and solvers of a thread, made on first use. */
static const char *worker_init(Worker *w, const SmtOptions *opt)
{
	if (w->ctx && w->rlimit != opt->rlimit) {
		/* made for another Solver's limits: new solvers, same context */
		Z3_solver inc = limited_solver(w->ctx, opt);
		Z3_solver fresh = inc ? limited_solver(w->ctx, opt) : NULL;
		if (!fresh) {
			if (inc)
				Z3_solver_dec_ref(w->ctx, inc);
			smt_z3_error_clear();
			return "internal: cannot create a z3 solver with limits";
		}
		Z3_solver_dec_ref(w->ctx, w->inc);
		Z3_solver_dec_ref(w->ctx, w->fresh);
		w->inc = inc;
		w->fresh = fresh;
		w->rlimit = opt->rlimit;
	}
	if (w->ctx)
		return NULL;
	smt_z3_error_clear();
	w->ctx = smt_context_new();
	if (!w->ctx)
		return "internal: cannot create a z3 context";
	w->inc = limited_solver(w->ctx, opt);
	w->fresh = limited_solver(w->ctx, opt);
	if (!w->inc || !w->fresh) {
		worker_free(w);
		smt_z3_error_clear();
		return "internal: cannot create a z3 solver with limits";
	}
	if (!watchdog_start(&w->dog, w->ctx)) {
		worker_free(w);
		return "internal: cannot start the time-limit thread";
	}
	w->rlimit = opt->rlimit;
	return NULL;
}

/* ---------- the process's workers ----------
 * Z3 contexts outlive Solvers: a context costs 20-130 ms to make and
 * warm, and a process often makes several Solvers (one per schedule,
 * lowering's). Idle workers wait in one process-wide list; a thread
 * takes one for a discharge call (or one helper's share of it) and gives
 * it back after, so there are never more contexts than threads that
 * solved at once, and a context is used by one thread at a time. The
 * list is freed at exit (atexit: every worker is idle by then unless
 * exit() is called while another thread solves; such a worker stays
 * reachable from that thread and is not freed under it). After fork()
 * the child's copies of the parent's watchdog threads do not exist: the
 * child sets the parent's list aside (kept reachable, never used or
 * freed: its contexts may be mid-operation in the parent's other threads)
 * and makes its own. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static Worker *pool_idle, *pool_forked;
static pid_t pool_pid;
static bool pool_registered;

static void pool_release_all(void)
{
	pthread_mutex_lock(&pool_lock);
	Worker *w = pool_pid == getpid() ? pool_idle : NULL;
	if (w)
		pool_idle = NULL;
	pthread_mutex_unlock(&pool_lock);
	while (w) {
		Worker *next = w->next;
		worker_free(w);
		free(w);
		w = next;
	}
}

static Worker *worker_acquire(void)
{
	pthread_mutex_lock(&pool_lock);
	pid_t me = getpid();
	if (pool_pid != me) {
		if (pool_idle) {
			Worker *last = pool_idle;
			while (last->next)
				last = last->next;
			last->next = pool_forked;
			pool_forked = pool_idle;
		}
		pool_idle = NULL;
		pool_pid = me;
	}
	if (!pool_registered)
		pool_registered = atexit(pool_release_all) == 0;
	Worker *w = pool_idle;
	if (w)
		pool_idle = w->next;
	pthread_mutex_unlock(&pool_lock);
	if (!w)
		w = calloc(1, sizeof *w);
	if (w)
		w->next = NULL;
	return w;
}

static void worker_release(Worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&pool_lock);
	if (pool_pid == getpid()) {
		w->next = pool_idle;
		pool_idle = w;
	} else { /* taken before a fork(), given back in the child: set aside */
		w->next = pool_forked;
		pool_forked = w;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* ---------- the cache ---------- */

static size_t key_bucket(const QKey *k, size_t n) { return (size_t)(k->w[0] % n); }

static bool same_key(const QKey *x, const QKey *y)
{
	return x->w[0] == y->w[0] && x->w[1] == y->w[1];
}

static bool cache_get(Solver *s, const QKey *key, RawResult *out)
{
	bool found = false;
	pthread_mutex_lock(&s->cache_lock);
	if (s->nbuckets) {
		for (CacheEntry *e = s->buckets[key_bucket(key, s->nbuckets)]; e; e = e->next)
			if (same_key(&e->key, key)) {
				raw_copy(out, &e->res);
				found = true;
				break;
			}
	}
	pthread_mutex_unlock(&s->cache_lock);
	return found;
}

static void cache_grow(Solver *s)
{
	size_t n = s->nbuckets ? s->nbuckets * 2 : 64;
	CacheEntry **b = calloc(n, sizeof *b);
	if (!b)
		return;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (CacheEntry *e = s->buckets[i], *next; e; e = next) {
			next = e->next;
			e->next = b[key_bucket(&e->key, n)];
			b[key_bucket(&e->key, n)] = e;
		}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

static void cache_put(Solver *s, const QKey *key, const RawResult *r)
{
	pthread_mutex_lock(&s->cache_lock);
	if (s->nentries >= s->nbuckets)
		cache_grow(s);
	CacheEntry *e = NULL;
	if (s->nbuckets) {
		for (e = s->buckets[key_bucket(key, s->nbuckets)]; e; e = e->next)
			if (same_key(&e->key, key))
				break;
	}
	if (!e && s->nbuckets && (e = calloc(1, sizeof *e))) {
		size_t b = key_bucket(key, s->nbuckets);
		e->key = *key;
		raw_copy(&e->res, r);
		e->next = s->buckets[b];
		s->buckets[b] = e;
		s->nentries++;
	}
	pthread_mutex_unlock(&s->cache_lock);
}

/* ---------- model decoding ---------- */

static char *float_text(double v, int digits)
{
	char buf[48];
	if (isnan(v))
		snprintf(buf, sizeof buf, "nan");
	else if (isinf(v))
		snprintf(buf, sizeof buf, "%s", v < 0 ? "-inf" : "inf");
	else if (v == 0)
		snprintf(buf, sizeof buf, "%s", signbit(v) ? "-0.0" : "0.0");
	else
		snprintf(buf, sizeof buf, "%.*g", digits, v);
	return strdup(buf);
}

/* An IEEE numeral (binary16, 32 or 64), bit-exactly through
 * fp.to_ieee_bv (NaN has no sign or payload in SMT-LIB: it decodes to the
 * default NaN). */
static bool decode_fp(Z3_context c, Z3_ast v, Z3_sort s, RawValue *out)
{
	unsigned eb = Z3_fpa_get_ebits(c, s), sb = Z3_fpa_get_sbits(c, s);
	bool half = eb == 5 && sb == 11, single = eb == 8 && sb == 24;
	int digits = half ? 5 : single ? 9 : 17; /* enough to read back exactly */
	out->is_float = true;
	if (!half && !single && !(eb == 11 && sb == 53))
		return false;
	if (Z3_fpa_is_numeral_nan(c, v)) {
		out->fval = NAN;
		out->text = float_text(NAN, digits);
		return !smt_z3_error(NULL);
	}
	Z3_ast bv = Z3_mk_fpa_to_ieee_bv(c, v);
	if (!bv)
		return false;
	Z3_inc_ref(c, bv);
	Z3_ast num = Z3_simplify(c, bv);
	uint64_t bits = 0;
	bool ok = num != NULL;
	if (ok) {
		Z3_inc_ref(c, num);
		ok = Z3_get_numeral_uint64(c, num, &bits);
		Z3_dec_ref(c, num);
	}
	Z3_dec_ref(c, bv);
	if (!ok)
		return false;
	if (half) {
		out->fval = vs_f16_to_double((uint16_t)bits);
	} else if (single) {
		uint32_t b32 = (uint32_t)bits;
		float f;
		memcpy(&f, &b32, sizeof f);
		out->fval = f;
	} else {
		memcpy(&out->fval, &bits, sizeof out->fval);
	}
	out->text = float_text(out->fval, digits);
	return true;
}

static bool decode_value(Z3_context c, Z3_ast v, RawValue *out)
{
	Z3_sort s = Z3_get_sort(c, v);
	memset(out, 0, sizeof *out);
	switch (Z3_get_sort_kind(c, s)) {
	case Z3_BOOL_SORT: {
		Z3_lbool b = Z3_get_bool_value(c, v);
		if (b == Z3_L_UNDEF)
			return false;
		out->ival = b == Z3_L_TRUE;
		out->text = strdup(out->ival ? "true" : "false");
		return true;
	}
	case Z3_INT_SORT: {
		if (!Z3_is_numeral_ast(c, v))
			return false;
		const char *t = Z3_get_numeral_string(c, v);
		if (!t)
			return false;
		out->text = strdup(t);
		if (!Z3_get_numeral_int64(c, v, &out->ival)) /* saturate */
			out->ival = t[0] == '-' ? INT64_MIN : INT64_MAX;
		return true;
	}
	case Z3_REAL_SORT: {
		/* exact text ("p/q", or digits with a trailing '?' for an
		 * irrational algebraic number); the double approximates */
		out->is_float = true;
		bool alg = !Z3_is_numeral_ast(c, v) && Z3_is_algebraic_number(c, v);
		const char *t = alg ? Z3_get_numeral_decimal_string(c, v, 20)
				    : Z3_get_numeral_string(c, v);
		if (!t)
			return false;
		out->text = strdup(t);
		const char *d = alg ? t : Z3_get_numeral_decimal_string(c, v, 20);
		out->fval = d ? strtod(d, NULL) : NAN;
		return true;
	}
	case Z3_FLOATING_POINT_SORT: return decode_fp(c, v, s, out);
	case Z3_UNINTERPRETED_SORT: case Z3_BV_SORT: case Z3_ARRAY_SORT:
	case Z3_DATATYPE_SORT: case Z3_RELATION_SORT: case Z3_FINITE_DOMAIN_SORT:
	case Z3_ROUNDING_MODE_SORT: case Z3_SEQ_SORT: case Z3_RE_SORT:
	case Z3_UNKNOWN_SORT: break;
	}
	return false;
}

static bool model_value(Z3_context c, Z3_model m, Z3_ast t, RawValue *out)
{
	Z3_ast v = NULL;
	memset(out, 0, sizeof *out);
	if (!Z3_model_eval(c, m, t, true, &v) || !v)
		return false;
	Z3_inc_ref(c, v);
	bool ok = decode_value(c, v, out);
	Z3_dec_ref(c, v);
	if (!ok || smt_z3_error(NULL)) {
		free(out->text);
		memset(out, 0, sizeof *out);
		return false;
	}
	return true;
}

static bool same_cell(const RawCell *x, int sym, int nidx, const int64_t *idx)
{
	if (x->sym != sym || x->nidx != nidx)
		return false;
	for (int i = 0; i < nidx; i++)
		if (x->idx[i] != idx[i])
			return false;
	return true;
}

/* The cell a load reads in the model; false if its index does not
 * evaluate to machine integers. Duplicates (same tuple) are dropped. */
static bool model_cell(Z3_context c, Z3_model m, const SmtLoad *ld,
		       RawResult *r)
{
	int64_t *idx = malloc(sizeof(int64_t) * (size_t)(ld->nidx + 1));
	if (!idx)
		return false;
	for (int i = 0; i < ld->nidx; i++) {
		RawValue v;
		if (!model_value(c, m, ld->idx[i], &v) || v.is_float) {
			free(v.text);
			free(idx);
			return false;
		}
		idx[i] = v.ival;
		free(v.text);
	}
	for (int i = 0; i < r->ncells; i++)
		if (same_cell(&r->cells[i], ld->sym, ld->nidx, idx)) {
			free(idx);
			return true;
		}
	RawCell *cell = &r->cells[r->ncells];
	if (!model_value(c, m, ld->app, &cell->val)) {
		free(idx);
		return false;
	}
	cell->sym = ld->sym;
	cell->nidx = ld->nidx;
	cell->idx = idx;
	r->ncells++;
	return true;
}

static const char *extract_model(Z3_context c, Z3_solver s,
				 const SmtEncoding *enc, RawResult *r)
{
	Z3_model m = Z3_solver_get_model(c, s);
	if (!m)
		return "model unavailable";
	Z3_model_inc_ref(c, m);
	const char *why = NULL;
	r->val_sym = calloc((size_t)enc->nsyms + 1, sizeof *r->val_sym);
	r->vals = calloc((size_t)enc->nsyms + 1, sizeof *r->vals);
	r->cells = calloc((size_t)enc->nloads + 1, sizeof *r->cells);
	if (!r->val_sym || !r->vals || !r->cells) {
		why = "out of memory";
		goto out;
	}
	for (int i = 0; i < enc->nsyms; i++) {
		if (enc->syms[i].kind != SYM_VAR)
			continue;
		if (!model_value(c, m, enc->syms[i].value, &r->vals[r->nvals])) {
			why = "a variable has no value in the model";
			goto out;
		}
		r->val_sym[r->nvals++] = i;
	}
	for (int i = 0; i < enc->nloads; i++)
		if (!model_cell(c, m, &enc->loads[i], r))
			why = "a buffer cell has no concrete index in the model";
	r->has_model = true;
out:
	Z3_model_dec_ref(c, m);
	return why;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Z3's cumulative resource count of a solver ("rlimit count"). */
static double rlimit_count(Z3_context c, Z3_solver s)
{
	Z3_stats st = Z3_solver_get_statistics(c, s);
	double n = 0;
	if (!st)
		return 0;
	Z3_stats_inc_ref(c, st);
	for (unsigned i = 0; i < Z3_stats_size(c, st); i++)
		if (strcmp(Z3_stats_get_key(c, st, i), "rlimit count") == 0)
			n = Z3_stats_is_uint(c, st, i)
				    ? Z3_stats_get_uint_value(c, st, i)
				    : Z3_stats_get_double_value(c, st, i);
	Z3_stats_dec_ref(c, st);
	return n;
}

/* "timeout", "resource limit", "canceled", "incomplete: ...", or Z3's
 * own words. The watchdog's interrupt reads "canceled" in Z3 and the
 * incremental core may say just "unknown", so the elapsed time and the
 * resources spent decide first. */
static char *unknown_reason(const char *z3, bool out_of_time,
			    bool out_of_budget)
{
	if (!z3)
		z3 = "";
	if (out_of_budget)
		return strdup("resource limit");
	if (out_of_time)
		return strdup("timeout");
	if (strstr(z3, "resource"))
		return strdup("resource limit");
	if (strstr(z3, "timeout"))
		return strdup("timeout");
	if (strstr(z3, "canceled"))
		return strdup("canceled");
	char *out = NULL;
	if (asprintf(&out, "%s: %s",
		     strstr(z3, "incomplete") ? "incomplete" : "unknown",
		     *z3 ? z3 : "no reason given") < 0)
		return strdup("unknown");
	return out;
}

/* hyps AND NOT goal on one solver: unsat -> proven, sat -> refuted with
 * a model, else not proven. False when the worker was lost (timed_check):
 * the caller must drop it. */
static bool check_on(Worker *w, Z3_solver s, bool incremental,
		     unsigned time_ms, const SmtOptions *opt,
		     const SmtEncoding *enc, RawResult *r)
{
	Z3_context c = w->ctx;
	const char *msg = NULL;
	smt_z3_error_clear();
	if (incremental)
		Z3_solver_push(c, s);
	for (int i = 0; i < enc->nasserts; i++)
		Z3_solver_assert(c, s, enc->asserts[i]);
	double budget0 = opt->rlimit ? rlimit_count(c, s) : 0;
	double t0 = now_seconds();
	Z3_lbool res = Z3_L_UNDEF;
	char err[256] = "";
	if (!smt_z3_error(&msg) &&
	    !timed_check(w, s, time_ms, &res, err)) {
		/* given up at the hard deadline: w is the check's now */
		raw_unknown(r, "timeout");
		return false;
	}
	if (err[0])
		msg = err;
	double elapsed_ms = (now_seconds() - t0) * 1000.0;
	if (msg) {
		char *why = NULL;
		if (asprintf(&why, "internal: z3 error: %s", msg) < 0)
			why = NULL;
		raw_unknown(r, why ? why : "internal: z3 error");
		free(why);
		goto out;
	}
	switch (res) {
	case Z3_L_FALSE: r->verdict = VERDICT_PROVEN; break;
	case Z3_L_TRUE: {
		r->verdict = VERDICT_REFUTED;
		const char *why = extract_model(c, s, enc, r);
		if (why || smt_z3_error(NULL))
			r->reason = strdup(why ? why : "model incomplete");
		break;
	}
	case Z3_L_UNDEF: {
		bool out_of_budget =
			opt->rlimit &&
			rlimit_count(c, s) - budget0 >= (double)opt->rlimit;
		r->verdict = VERDICT_UNKNOWN;
		r->reason = unknown_reason(Z3_solver_get_reason_unknown(c, s),
					   elapsed_ms >= time_ms * 0.98,
					   out_of_budget);
		break;
	}
	}
out:
	if (incremental)
		Z3_solver_pop(c, s, 1);
	else
		Z3_solver_reset(c, s);
	smt_z3_error_clear();
	return true;
}

/* Linear float-free queries go to the incremental solver first; floats,
 * nonlinear terms, or an incremental "incomplete" go to the fresh one.
 * False when the worker was lost. */
static bool solve(Worker *w, const SmtOptions *opt, const SmtEncoding *enc,
		  RawResult *r)
{
	bool direct = enc->uses_fp || enc->nonlinear;
	unsigned time_ms = opt->timeout_ms;
	if (!direct) {
		double t0 = now_seconds();
		if (!check_on(w, w->inc, true, time_ms, opt, enc, r))
			return false;
		if (r->verdict != VERDICT_UNKNOWN || !r->reason ||
		    strncmp(r->reason, "incomplete", 10) != 0)
			return true;
		/* the fallback gets what is left of the time */
		double spent = (now_seconds() - t0) * 1000.0;
		time_ms = spent < time_ms ? time_ms - (unsigned)spent : 1;
		raw_free(r);
	}
	return check_on(w, w->fresh, false, time_ms, opt, enc, r);
}

/* ---------- jobs ---------- */

typedef struct SymRef {
	Var *var;
	Buffer *buf;
} SymRef;

typedef struct Job {
	const Obligation *o;
	char *text; /* the query, with opt.want_text; NULL when it could not be encoded */
	int nsyms;
	SymRef *syms;
	RawResult raw;
	bool cached, from_disk;
	double seconds;
} Job;

/* Encode, look the key up in memory then on disk, solve on a miss. The
 * text is printed only with opt.want_text: the key is structural
 * (qhash.c), and the proof log prints its own copy on demand. */
static void run_job(Solver *s, Worker **wp, FloatMode fm, Job *j)
{
	Worker *w = *wp;
	double t0 = now_seconds();
	bool retried = false;
again:;
	const char *why = w ? worker_init(w, &s->opt) : "internal: out of memory";
	if (why) {
		raw_unknown(&j->raw, why);
		j->seconds = now_seconds() - t0;
		return;
	}
	SmtEncoding enc;
	QKey key;
	if (!smt_encode(w->ctx, j->o, fm, &enc) ||
	    (s->opt.want_text && !(j->text = smt_encoding_text(&enc)))) {
		raw_unknown(&j->raw, enc.error ? enc.error : "unsupported");
		goto done;
	}
	j->syms = calloc((size_t)enc.nsyms + 1, sizeof *j->syms);
	if (!j->syms) {
		raw_unknown(&j->raw, "internal: out of memory");
		goto done;
	}
	j->nsyms = enc.nsyms;
	for (int i = 0; i < enc.nsyms; i++)
		j->syms[i] = (SymRef){enc.syms[i].var, enc.syms[i].buf};
	bool keyed = smt_encoding_key(&enc, &key);
	smt_z3_error_clear();
	if (keyed && cache_get(s, &key, &j->raw)) {
		j->cached = true;
		atomic_fetch_add(&s->nmemory, 1);
		goto done;
	}
	if (keyed && pcache_get(s->pcache, &key, enc.nsyms, &j->raw)) {
		j->cached = j->from_disk = true;
		atomic_fetch_add(&s->ndisk, 1);
		cache_put(s, &key, &j->raw);
		goto done;
	}
	if (!solve(w, &s->opt, &enc, &j->raw)) {
		/* the worker is lost with its context: the terms go with it */
		*wp = NULL;
		smt_encoding_disown(&enc);
		atomic_fetch_add(&s->nsolved, 1);
		goto done;
	}
	/* A watchdog interrupt that lands just after a check returned (it
	 * cannot be told from one that lands just before) leaves the context
	 * canceled: the next query on it fails with "push canceled". Such a
	 * failure says nothing about the query: the worker is replaced by a
	 * fresh one (a new context) and the query runs once more. */
	if (!retried && j->raw.reason && strncmp(j->raw.reason, "internal: z3 error", 18) == 0 &&
	    strstr(j->raw.reason, "cancel")) {
		retried = true;
		smt_encoding_free(&enc);
		raw_free(&j->raw);
		memset(&j->raw, 0, sizeof j->raw);
		free(j->syms);
		j->syms = NULL;
		j->nsyms = 0;
		free(j->text);
		j->text = NULL;
		worker_free(w);
		free(w);
		w = *wp = calloc(1, sizeof *w);
		goto again;
	}
	atomic_fetch_add(&s->nsolved, 1);
	/* Z3 failures are not facts about the query; everything else is
	 * (a timeout under the same limits included, in memory; on disk
	 * only proven and refuted) */
	if (keyed && !(j->raw.reason && strncmp(j->raw.reason, "internal", 8) == 0)) {
		cache_put(s, &key, &j->raw);
		pcache_put(s->pcache, &key, enc.nsyms, &j->raw);
	}
done:
	smt_encoding_free(&enc);
	j->seconds = now_seconds() - t0;
}

static void job_free(Job *j)
{
	free(j->text);
	free(j->syms);
	raw_free(&j->raw);
}

static ModelValue arena_value(Arena *a, const RawValue *v)
{
	return (ModelValue){v->is_float, v->ival, v->fval,
			    arena_strdup(a, v->text ? v->text : "?")};
}

static Model *arena_model(Arena *a, const Job *j)
{
	const RawResult *r = &j->raw;
	Model *m = arena_alloc(a, sizeof *m);
	m->vars = arena_alloc(a, sizeof(ModelVar) * (size_t)(r->nvals + 1));
	m->cells = arena_alloc(a, sizeof(ModelCell) * (size_t)(r->ncells + 1));
	for (int i = 0; i < r->nvals; i++) {
		int k = r->val_sym[i];
		if (k < 0 || k >= j->nsyms || !j->syms[k].var)
			continue;
		m->vars[m->nvars++] =
			(ModelVar){j->syms[k].var, arena_value(a, &r->vals[i])};
	}
	for (int i = 0; i < r->ncells; i++) {
		const RawCell *c = &r->cells[i];
		if (c->sym < 0 || c->sym >= j->nsyms || !j->syms[c->sym].buf)
			continue;
		ModelCell *mc = &m->cells[m->ncells++];
		mc->buf = j->syms[c->sym].buf;
		mc->nidx = c->nidx;
		mc->idx = arena_alloc(a, sizeof(int64_t) * (size_t)(c->nidx + 1));
		memcpy(mc->idx, c->idx, sizeof(int64_t) * (size_t)c->nidx);
		mc->val = arena_value(a, &c->val);
	}
	return m;
}

static void job_result(Arena *a, const Job *j, ObligationResult *out)
{
	memset(out, 0, sizeof *out);
	out->verdict = j->raw.verdict;
	out->reason = j->raw.reason ? arena_strdup(a, j->raw.reason) : NULL;
	out->seconds = j->seconds;
	out->smt2 = j->text ? arena_strdup(a, j->text) : NULL;
	out->cached = j->cached;
	out->from_disk = j->from_disk;
	if (out->verdict == VERDICT_REFUTED)
		out->model = arena_model(a, j);
}

void smt_discharge(Solver *s, Arena *a, const Obligation *o, FloatMode fm,
		   ObligationResult *out)
{
	if (!s) {
		memset(out, 0, sizeof *out);
		out->verdict = VERDICT_UNKNOWN;
		out->reason = "internal: no solver";
		return;
	}
	Job j = {.o = o};
	Worker *w = worker_acquire();
	run_job(s, &w, fm, &j);
	worker_release(w);
	job_result(a, &j, out);
	job_free(&j);
}

typedef struct Batch {
	Solver *s;
	FloatMode fm;
	int n;
	Job *jobs;
	atomic_int next;
} Batch;

/* One thread's share of a batch, on a worker of the process pool. */
static void *crew_main(void *arg)
{
	Batch *b = arg;
	Worker *w = NULL;
	for (int i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
		if (!w)
			w = worker_acquire();
		run_job(b->s, &w, b->fm, &b->jobs[i]);
	}
	worker_release(w);
	return NULL;
}

/* The calling thread works too (with the main context), so a failed
 * pthread_create only means fewer helpers. Results reach the arena only
 * after every helper has joined: arenas are not shared between threads. */
void smt_discharge_all(Solver *s, Arena *a, int n, Obligation *const *obs,
		       FloatMode fm, ObligationResult *outs)
{
	if (n <= 0)
		return;
	Job *jobs = s ? calloc((size_t)n, sizeof *jobs) : NULL;
	if (!jobs) {
		for (int i = 0; i < n; i++)
			smt_discharge(s, a, obs[i], fm, &outs[i]);
		return;
	}
	for (int i = 0; i < n; i++)
		jobs[i].o = obs[i];
	Batch b = {.s = s, .fm = fm, .n = n, .jobs = jobs};
	atomic_init(&b.next, 0);
	int helpers = (s->opt.threads < n ? s->opt.threads : n) - 1;
	pthread_t tid[helpers > 0 ? helpers : 1];
	bool started[helpers > 0 ? helpers : 1];
	for (int t = 0; t < helpers; t++)
		started[t] = pthread_create(&tid[t], NULL, crew_main, &b) == 0;
	crew_main(&b);
	for (int t = 0; t < helpers; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
	for (int i = 0; i < n; i++) {
		job_result(a, &jobs[i], &outs[i]);
		job_free(&jobs[i]);
	}
	free(jobs);
}

/* On a context of the process pool: no context of its own to make. */
char *smt_query_text_dup(const Obligation *o, FloatMode fm, char **why)
{
	if (why)
		*why = NULL;
	Worker *w = worker_acquire();
	const char *fail = w ? worker_init(w, &(SmtOptions){.rlimit = w->rlimit})
			     : "internal: out of memory";
	char *text = NULL;
	if (!fail) {
		SmtEncoding enc;
		smt_z3_error_clear();
		if (smt_encode(w->ctx, o, fm, &enc))
			text = smt_encoding_text(&enc);
		if (!text && why)
			*why = strdup(enc.error ? enc.error : "unsupported");
		smt_encoding_free(&enc);
		smt_z3_error_clear();
	} else if (why) {
		*why = strdup(fail);
	}
	worker_release(w);
	return text;
}

const char *smt_query_text(Arena *a, const Obligation *o, FloatMode fm,
			   const char **why)
{
	char *err = NULL;
	char *text = smt_query_text_dup(o, fm, &err);
	const char *out = text ? arena_strdup(a, text) : NULL;
	if (!text && why)
		*why = arena_strdup(a, err ? err : "unsupported");
	free(text);
	free(err);
	return out;
}

/* ---------- smaller models (for replay) ---------- */

/* -cap <= v <= cap on an Int constant, asserted on s; false when v is not
 * an Int or Z3 failed. Every term made here is released before return
 * (the solver keeps what it asserts). */
static bool assert_within(Z3_context c, Z3_solver s, Z3_ast v, int64_t cap)
{
	Z3_sort srt = Z3_get_sort(c, v);
	if (!srt || Z3_get_sort_kind(c, srt) != Z3_INT_SORT)
		return false;
	Z3_ast t[4] = {NULL, NULL, NULL, NULL};
	bool ok = true;
	for (int k = 0; k < 4 && ok; k++) {
		switch (k) {
		case 0: t[k] = Z3_mk_int64(c, -cap, srt); break;
		case 1: t[k] = Z3_mk_int64(c, cap, srt); break;
		case 2: t[k] = Z3_mk_le(c, t[0], v); break;
		case 3: t[k] = Z3_mk_le(c, v, t[1]); break;
		}
		ok = t[k] && !smt_z3_error(NULL);
		if (ok)
			Z3_inc_ref(c, t[k]);
	}
	if (ok) {
		Z3_solver_assert(c, s, t[2]);
		Z3_solver_assert(c, s, t[3]);
		ok = !smt_z3_error(NULL);
	}
	for (int k = 0; k < 4; k++)
		if (t[k])
			Z3_dec_ref(c, t[k]);
	return ok;
}

Model *smt_model_within(Solver *s, Arena *a, const Obligation *o, FloatMode fm,
			int nvars, Var *const *vars, int64_t cap, unsigned time_ms)
{
	if (!s || nvars <= 0 || cap < 0 || cap > INT64_MAX / 2)
		return NULL;
	Worker *w = worker_acquire();
	if (!w)
		return NULL;
	if (worker_init(w, &s->opt)) {
		worker_release(w);
		return NULL;
	}
	Z3_context c = w->ctx;
	Model *out = NULL;
	Job j = {.o = o};
	SmtEncoding enc;
	if (!smt_encode(c, o, fm, &enc)) {
		smt_encoding_free(&enc);
		worker_release(w);
		return NULL;
	}
	/* the same solver the query itself went to */
	bool incremental = !(enc.uses_fp || enc.nonlinear);
	Z3_solver zs = incremental ? w->inc : w->fresh;
	smt_z3_error_clear();
	if (incremental)
		Z3_solver_push(c, zs);
	for (int i = 0; i < enc.nasserts; i++)
		Z3_solver_assert(c, zs, enc.asserts[i]);
	int bounded = 0;
	for (int k = 0; k < nvars; k++)
		for (int i = 0; i < enc.nsyms; i++)
			if (enc.syms[i].kind == SYM_VAR && enc.syms[i].var == vars[k] &&
			    enc.syms[i].value)
				bounded += assert_within(c, zs, enc.syms[i].value, cap);
	if (bounded && !smt_z3_error(NULL)) {
		Z3_lbool res;
		char err[256];
		if (!timed_check(w, zs, time_ms ? time_ms : 1, &res, err)) {
			smt_encoding_disown(&enc);
			smt_encoding_free(&enc);
			return NULL; /* w is the check's now */
		}
		/* only a model of the query and the bounds: anything else
		 * (unsat, unknown, a Z3 error) keeps the caller's model */
		if (res == Z3_L_TRUE && !err[0] && !smt_z3_error(NULL) &&
		    !extract_model(c, zs, &enc, &j.raw) && j.raw.has_model) {
			j.syms = calloc((size_t)enc.nsyms + 1, sizeof *j.syms);
			if (j.syms) {
				j.nsyms = enc.nsyms;
				for (int i = 0; i < enc.nsyms; i++)
					j.syms[i] = (SymRef){enc.syms[i].var, enc.syms[i].buf};
				out = arena_model(a, &j);
			}
		}
	}
	if (incremental)
		Z3_solver_pop(c, zs, 1);
	else
		Z3_solver_reset(c, zs);
	smt_z3_error_clear();
	job_free(&j);
	smt_encoding_free(&enc);
	worker_release(w);
	return out;
}

void smt_solver_stats(Solver *s, SmtStats *out)
{
	memset(out, 0, sizeof *out);
	if (!s)
		return;
	out->solved = atomic_load(&s->nsolved);
	out->memory_hits = atomic_load(&s->nmemory);
	out->disk_hits = atomic_load(&s->ndisk);
	out->warnings = pcache_warnings(s->pcache);
}
