/* backend/runtime.c — the pthread pool behind `parallel` loops: workers
 * created once, on the first parallel loop, each running one contiguous
 * chunk of the iteration space per job; the calling thread runs chunk 0.
 * Static chunks keep runs deterministic in which thread does what; the
 * obligations of `parallel` (no two iterations conflict) make the result
 * independent of timing. */
#include "runtime.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct Pool {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a new job (generation changed) */
	pthread_cond_t done;  /* a worker finished its chunk */
	pthread_mutex_t submit; /* held by the thread whose job runs */
	int nworkers;         /* started workers (threads - 1) */
	unsigned long generation;
	int pending;          /* chunks not yet finished */
	int active;           /* workers taking part in the current job */
	vs_rt_body body;
	void *ctx;
	int64_t n;
	int nchunks;
	int32_t status;
} Pool;

static Pool pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
	.submit = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int requested_threads; /* 0: not chosen yet */
static _Thread_local bool inside_body;

static int default_threads(void)
{
	const char *env = getenv("VS_NUM_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

int vs_rt_num_threads(void)
{
	if (!requested_threads)
		requested_threads = default_threads();
	return requested_threads;
}

void vs_rt_set_num_threads(int n)
{
	requested_threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

static void chunk_bounds(int64_t n, int nchunks, int k, int64_t *begin, int64_t *end)
{
	*begin = (int64_t)((__int128)n * k / nchunks);
	*end = (int64_t)((__int128)n * (k + 1) / nchunks);
}

static void record_status(int32_t st)
{
	if (st != 0 && pool.status == 0)
		pool.status = st;
}

static void *worker_main(void *arg)
{
	int id = (int)(intptr_t)arg; /* 1 .. nworkers */
	unsigned long seen = 0;
	inside_body = true; /* a worker never submits jobs itself */
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		while (pool.generation == seen)
			pthread_cond_wait(&pool.work, &pool.lock);
		seen = pool.generation;
		if (id >= pool.nchunks)
			continue;
		vs_rt_body body = pool.body;
		void *ctx = pool.ctx;
		int64_t begin, end;
		chunk_bounds(pool.n, pool.nchunks, id, &begin, &end);
		pthread_mutex_unlock(&pool.lock);
		int32_t st = body(ctx, begin, end);
		pthread_mutex_lock(&pool.lock);
		record_status(st);
		if (--pool.pending == 0)
			pthread_cond_signal(&pool.done);
	}
	return NULL;
}

static void start_workers(void)
{
	int want = vs_rt_num_threads() - 1;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* kernels keep small local buffers on the stack */
	pthread_attr_setstacksize(&attr, (size_t)8 << 20);
	for (int i = 1; i <= want; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)i) != 0)
			break;
		pool.nworkers = i;
	}
	pthread_attr_destroy(&attr);
}

static int32_t run_serial(vs_rt_body body, void *ctx, int64_t n)
{
	return n > 0 ? body(ctx, 0, n) : 0;
}

int32_t vs_rt_parallel_for(vs_rt_body body, void *ctx, int64_t n)
{
	if (n <= 0)
		return 0;
	if (inside_body || n == 1)
		return run_serial(body, ctx, n);
	pthread_once(&pool_once, start_workers);
	int threads = vs_rt_num_threads();
	if (threads > pool.nworkers + 1)
		threads = pool.nworkers + 1;
	if (threads <= 1 || pthread_mutex_trylock(&pool.submit) != 0)
		return run_serial(body, ctx, n);
	int nchunks = n < threads ? (int)n : threads;
	pthread_mutex_lock(&pool.lock);
	pool.body = body;
	pool.ctx = ctx;
	pool.n = n;
	pool.nchunks = nchunks;
	pool.pending = nchunks - 1;
	pool.status = 0;
	pool.generation++;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);

	int64_t begin, end;
	chunk_bounds(n, nchunks, 0, &begin, &end);
	inside_body = true;
	int32_t st = body(ctx, begin, end);
	inside_body = false;

	pthread_mutex_lock(&pool.lock);
	record_status(st);
	while (pool.pending > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	st = pool.status;
	pthread_mutex_unlock(&pool.lock);
	pthread_mutex_unlock(&pool.submit);
	return st;
}
