/* bench/bench.c — `make bench`: for each kernel, the median run time of
 * the vsched-compiled scheduled kernel, of the unscheduled kernel (also
 * compiled by vsched), of naive C (clang -O3 -march=native) and, for
 * matmul, of single-threaded OpenBLAS sgemm; the time to verify each
 * schedule; ratios side by side. Every compiled result is checked
 * against naive C on the benchmark's own data. A client of vsched.h only.
 * Usage: bench [RESULTS_FILE] */
#include <cblas.h>
#include <dnnl.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vsched.h"
#include "bench.h"

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

void naive_rowsum(const int32_t *A, int32_t *B, int rows, int cols);
void naive_conv1d(const float *A, const float *F, float *B, int n);
void naive_elementwise(const float *A, float *B, int n);
void naive_matmul(const float *A, const float *B, float *C, int n);
void naive_conv2d(const float *X, const float *W, float *O, int cb, int hw);
void omp_set_num_threads(int n); /* oneDNN's threads (its OpenMP runtime) */

double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* A closure over one way of running a kernel. */
typedef struct Run {
	void (*call)(struct Run *r);
	void *fn;
	void *a, *b, *c;
	int n, m;
} Run;

static double median_seconds(Run *r, int reps)
{
	double t[64];
	if (reps > 64)
		reps = 64;
	r->call(r); /* warm up: page faults, JIT materialisation */
	for (int i = 0; i < reps; i++) {
		double t0 = now();
		r->call(r);
		t[i] = now() - t0;
	}
	qsort(t, (size_t)reps, sizeof *t, cmp_double);
	return t[reps / 2];
}

typedef int32_t (*Kernel2)(void *, void *);
typedef int32_t (*Kernel3)(void *, void *, void *);

static void call2(Run *r) { ((Kernel2)r->fn)(r->a, r->b); }
static void call3(Run *r) { ((Kernel3)r->fn)(r->a, r->b, r->c); }

/* ---------- compiling through the API ---------- */

typedef struct Compiled {
	vs_schedule *s;
	vs_program *p;
	void *fn;
	double verify_seconds; /* running the schedule: every obligation */
	int steps, obligations;
	double compile_seconds;
} Compiled;

vs_context *ctx;

/* The CPU vsched compiles for: NULL, the host's; x86-64-v3 (AVX2, FMA,
 * no AVX-512) in the AVX2 section's process (bench_avx2). */
static const char *bench_cpu;

/* clang -O3 fuses a * b + c in the naive C (-ffp-contract=on): the same
 * for vsched's code, which is off by default */
static vs_build_options bench_build_options(void)
{
	vs_build_options bo = {0};
	bo.contract_fma = true;
	bo.cpu = bench_cpu;
	return bo;
}

void die(const char *what)
{
	fprintf(stderr, "bench: %s\n%s", what, vs_last_error(ctx));
	exit(1);
}

static void compile(const char *tir, const char *sched, const char *func, Compiled *out)
{
	memset(out, 0, sizeof *out);
	vs_module *m = vs_parse_file(ctx, tir);
	if (!m)
		die(tir);
	out->s = vs_schedule_new(ctx, m, NULL);
	if (!out->s)
		die(tir);
	double t0 = now();
	if (sched && vs_run_script_file(out->s, sched) != VS_OK)
		die(sched);
	out->verify_seconds = now() - t0;
	out->steps = vs_num_reports(out->s);
	for (int i = 0; i < out->steps; i++)
		out->obligations += vs_report_num_obligations(vs_report_at(out->s, i));
	t0 = now();
	vs_build_options bo = bench_build_options();
	out->p = vs_build(out->s, &bo);
	if (!out->p)
		die(tir);
	out->fn = vs_program_lookup(out->p, func);
	if (!out->fn)
		die(func);
	out->compile_seconds = now() - t0;
}

static void release(Compiled *c)
{
	vs_program_free(c->p);
	vs_schedule_free(c->s);
}

/* ---------- the table ---------- */

static FILE *results;

void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (results) {
		va_start(ap, fmt);
		vfprintf(results, fmt, ap);
		va_end(ap);
	}
	fflush(stdout);
}

static void header(void)
{
	out("%-22s %11s %11s %11s %11s %8s %8s %8s %s\n", "kernel", "vsched ms", "unsched ms",
	    "naive ms", "openblas ms", "x naive", "x unsch", "x blas", "verify (steps, obligations)");
}

static void row(const char *name, double sched, double unsched, double naive, double blas,
		const Compiled *c, const char *note)
{
	char blas_ms[32] = "-", vs_blas[32] = "-";
	if (blas > 0) {
		snprintf(blas_ms, sizeof blas_ms, "%.3f", blas * 1e3);
		snprintf(vs_blas, sizeof vs_blas, "%.2f", blas / sched);
	}
	out("%-22s %11.3f %11.3f %11.3f %11s %8.2f %8.2f %8s %.3f s (%d, %d)%s\n", name, sched * 1e3,
	    unsched * 1e3, naive * 1e3, blas_ms, naive / sched, unsched / sched, vs_blas,
	    c->verify_seconds, c->steps, c->obligations, note);
}

static uint32_t hash(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static float small_float(uint32_t i) { return (float)((int)(hash(i) % 2001) - 1000) / 1000.0f; }

static bool close_enough(float x, float y, float tol)
{
	return fabsf(x - y) <= tol * fmaxf(1.0f, fmaxf(fabsf(x), fabsf(y)));
}

/* ---------- read bandwidth (issue 14: the row sum against the memory) ---------- */

/* bench/readbw.c (clang -O3 -march=native): int32 sums that read a
 * buffer once and write nothing; the fastest of them is the bandwidth */
int32_t read_sum_c(const int32_t *a, size_t n);
int32_t read_sum_vec4(const int32_t *a, size_t n);
int32_t read_sum_vec8(const int32_t *a, size_t n);
const char *read_sum_isa(void);

typedef int32_t (*ReadSum)(const int32_t *, size_t);
static const struct {
	const char *name;
	ReadSum fn;
} read_sums[] = {
	{"the C loop", read_sum_c},
	{"4 vector accumulators", read_sum_vec4},
	{"8 vector accumulators", read_sum_vec8},
};
enum { NREAD = sizeof read_sums / sizeof read_sums[0] };

static volatile int32_t read_sink;

static void call_read_sum(Run *r) { read_sink = ((ReadSum)r->fn)(r->a, (size_t)r->n); }

/* Median times of runs taken in rounds: a round times each run in turn,
 * one warm-up call then a block of reps calls (so each run finds its
 * data as warm as it leaves it, as a run timed alone does), and a burst
 * of load from other processes falls on every run. A run's time is the
 * median over the rounds of its block medians. */
enum { MAX_ROUNDS = 9, MAX_RUNS = 8 };
static void in_rounds(Run *runs, int n, int rounds, int reps, double *out)
{
	double med[MAX_RUNS][MAX_ROUNDS], t[64];
	if (reps > 64)
		reps = 64;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < n && k < MAX_RUNS; k++) {
			runs[k].call(&runs[k]);
			for (int i = 0; i < reps; i++) {
				double t0 = now();
				runs[k].call(&runs[k]);
				t[i] = now() - t0;
			}
			qsort(t, (size_t)reps, sizeof *t, cmp_double);
			med[k][r] = t[reps / 2];
		}
	for (int k = 0; k < n && k < MAX_RUNS; k++) {
		qsort(med[k], (size_t)rounds, sizeof med[k][0], cmp_double);
		out[k] = med[k][rounds / 2];
	}
}

/* ---------- row summation ---------- */

enum { RS_COLS = 1022, RS_PAD = 1024 };

/* n zeroed bytes at a 64-byte boundary, as TVM allocates its arrays:
 * calloc's 16-byte offset splits every 64-byte vector load across two
 * cache lines (the row sum's read loops ran 10 to 40% slower on it) */
static void *zalloc64(size_t n)
{
	n = (n + 63) / 64 * 64;
	void *p = aligned_alloc(64, n ? n : 64);
	if (!p)
		die("memory");
	memset(p, 0, n);
	return p;
}

static void call_naive_rowsum(Run *r) { naive_rowsum(r->a, r->b, r->n, r->m); }

/* rows x 1022 int32 (rows: the kernel's, bench/rowsum*.tir): the
 * scheduled row sum and the naive C against the read bandwidth over the
 * same bytes (the padded input the scheduled kernel reads), all timed in
 * rounds (in_rounds) */
static void bench_rowsum(int rows, const char *tir, const char *bw_what)
{
	size_t cells = (size_t)rows * RS_COLS, pcells = (size_t)rows * RS_PAD;
	int32_t *A = zalloc64(cells * 4), *Ap = zalloc64(pcells * 4);
	int32_t *Bn = zalloc64((size_t)rows * 4), *Bs = zalloc64((size_t)rows * 4), *Bu = zalloc64((size_t)rows * 4);
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < RS_COLS; j++)
			Ap[(size_t)i * RS_PAD + j] = A[(size_t)i * RS_COLS + j] =
				(int32_t)(hash((uint32_t)((size_t)i * RS_COLS + j)) % 201) - 100;
	Compiled s, u;
	if (rows == 2048)
		out("rowsum: schedule bench/rowsum.sched on every CPU (pads rows to 512, no vector width\n"
		    "  in it: LLVM vectorizes for the host; bandwidth-bound, against a read of the same bytes)\n");
	if (rows == 2048) { /* once: both schedules at 16 rows against the interpreter */
		const char *scheds[] = {"bench/rowsum.sched", "bench/rowsum_branchy.sched"};
		for (int k = 0; k < 2; k++) {
			compile("bench/rowsum_small.tir", scheds[k], "rowsum", &s);
			char *rep = NULL;
			if (vs_program_check(s.p, "rowsum", 2, 7, &rep) != VS_OK) {
				fprintf(stderr, "bench: %s at 16 rows differs from the interpreter\n%s\n", scheds[k],
					rep ? rep : vs_last_error(ctx));
				exit(1);
			}
			free(rep);
			release(&s);
		}
	}
	compile(tir, "bench/rowsum.sched", "rowsum", &s);
	compile(tir, "bench/rowsum_branchy.sched", "rowsum", &u);
	bool big = rows > 4096;
	Run ru = {.call = call2, .fn = u.fn, .a = Ap, .b = Bu};
	double tu = median_seconds(&ru, big ? 5 : 15);
	Run runs[2 + NREAD] = {
		{.call = call2, .fn = s.fn, .a = Ap, .b = Bs},
		{.call = call_naive_rowsum, .a = A, .b = Bn, .n = rows, .m = RS_COLS},
	};
	for (int k = 0; k < NREAD; k++)
		runs[2 + k] = (Run){.call = call_read_sum, .fn = (void *)read_sums[k].fn, .a = Ap, .n = (int)pcells};
	double t[2 + NREAD];
	in_rounds(runs, 2 + NREAD, big ? 7 : 5, big ? 5 : 15, t);
	int best = 0;
	for (int k = 1; k < NREAD; k++)
		if (t[2 + k] < t[2 + best])
			best = k;
	double ts = t[0], tn = t[1], tb = t[2 + best];
	for (int i = 0; i < rows; i++)
		if (Bs[i] != Bn[i] || Bu[i] != Bn[i]) {
			fprintf(stderr, "bench: rowsum differs at row %d: %d %d vs %d\n", i, Bs[i], Bu[i], Bn[i]);
			exit(1);
		}
	double gbs = (double)pcells * 4 / ts * 1e-9, bw = (double)pcells * 4 / tb * 1e-9;
	char name[64], note[256];
	snprintf(name, sizeof name, "rowsum %dx%d i32", rows, RS_COLS);
	snprintf(note, sizeof note,
		 "  overcomputed vs branchy; %.1f GB/s = %.2fx the read bandwidth %s, %.1f GB/s"
		 " (fastest of %d read loops: %s, %s)",
		 gbs, gbs / bw, bw_what, bw, (int)NREAD, read_sums[best].name, read_sum_isa());
	row(name, ts, tu, tn, 0, &s, note);
	release(&s);
	release(&u);
	free(A), free(Ap), free(Bn), free(Bs), free(Bu);
}

/* ---------- conv1d with padding ---------- */

enum { CV_ROWS = 65536, CV_N = 8 * CV_ROWS - 4 };

static void bench_conv1d(void)
{
	float *A = calloc(CV_N, 4), *Ap = calloc((CV_ROWS + 1) * 8, 4), F[3] = {0.25f, -0.5f, 0.75f};
	float *Bn = calloc(CV_N + 2, 4), *Bs = calloc(CV_ROWS * 8, 4), *Bu = calloc(CV_ROWS * 8, 4);
	for (int i = 0; i < CV_N; i++)
		Ap[i + 2] = A[i] = small_float((uint32_t)i);
	Compiled s, u;
	out("conv1d: no schedule on any CPU (both forms written as .tir; LLVM vectorizes for the host)\n");
	compile("bench/conv1d_overcompute.tir", NULL, "conv1d", &s);
	compile("bench/conv1d_branchy.tir", NULL, "conv1d", &u);
	Run rs = {.call = call3, .fn = s.fn, .a = Ap, .b = F, .c = Bs}, ru = {.call = call3, .fn = u.fn, .a = Ap, .b = F, .c = Bu};
	double ts = median_seconds(&rs, 31), tu = median_seconds(&ru, 31), tn[31];
	for (int r = 0; r < 31; r++) {
		double t0 = now();
		naive_conv1d(A, F, Bn, CV_N);
		tn[r] = now() - t0;
	}
	qsort(tn, 31, sizeof *tn, cmp_double);
	for (int b = 0; b < CV_N + 2; b++)
		if (!close_enough(Bs[b + 2], Bn[b], 1e-5f) || !close_enough(Bu[b + 2], Bn[b], 1e-5f)) {
			fprintf(stderr, "bench: conv1d differs at %d: %g %g vs %g\n", b, Bs[b + 2], Bu[b + 2], Bn[b]);
			exit(1);
		}
	row("conv1d 524284 f32", ts, tu, tn[15], 0, &s, "  overcomputed vs branchy");
	release(&s);
	release(&u);
	free(A), free(Ap), free(Bn), free(Bs), free(Bu);
}

/* ---------- element-wise with T.undef() padding ---------- */

enum { EW_ROWS = 1048576, EW_N = 4 * EW_ROWS - 2 };

static void bench_elementwise(void)
{
	float *A = malloc((size_t)EW_ROWS * 4 * 4), *Bn = malloc((size_t)EW_N * 4);
	float *Bs = malloc((size_t)EW_ROWS * 4 * 4), *Bu = malloc((size_t)EW_ROWS * 4 * 4);
	for (int i = 0; i < EW_ROWS * 4; i++)
		A[i] = i < EW_N ? small_float((uint32_t)i) : 12345.0f; /* padding: anything */
	Compiled s, u;
	out("elementwise: schedule bench/elementwise.sched on every CPU (rows of 4 vectorized: 4 lanes\n"
	    "  whatever the vector width; bandwidth-bound)\n");
	compile("bench/elementwise.tir", "bench/elementwise.sched", "elementwise", &s);
	compile("bench/elementwise.tir", "bench/elementwise_branchy.sched", "elementwise", &u);
	Run rs = {.call = call2, .fn = s.fn, .a = A, .b = Bs}, ru = {.call = call2, .fn = u.fn, .a = A, .b = Bu};
	double ts = median_seconds(&rs, 21), tu = median_seconds(&ru, 21), tn[21];
	for (int r = 0; r < 21; r++) {
		double t0 = now();
		naive_elementwise(A, Bn, EW_N);
		tn[r] = now() - t0;
	}
	qsort(tn, 21, sizeof *tn, cmp_double);
	for (int i = 0; i < EW_N; i++)
		if (Bs[i] != Bn[i] || Bu[i] != Bn[i]) {
			fprintf(stderr, "bench: elementwise differs at %d\n", i);
			exit(1);
		}
	row("elementwise 4M f32", ts, tu, tn[10], 0, &s, "  overcomputed vs branchy");
	release(&s);
	release(&u);
	free(A), free(Bn), free(Bs), free(Bu);
}

/* ---------- matmul ---------- */

static void call_blas(Run *r)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r->n, r->n, r->n, 1.0f, r->a, r->n,
		    r->b, r->n, 0.0f, r->c, r->n);
}

static void call_naive_matmul(Run *r) { naive_matmul(r->a, r->b, r->c, r->n); }

/* The schedule file for this CPU: env (a variable naming a file) if set,
 * else the AVX-512 one where the CPU has AVX-512, else the other; *why
 * says which and why, for the results. */
static const char *schedule_for_host(const char *env, const char *avx512, const char *why_avx512,
				     const char *other, const char *why_other, const char **why)
{
	const char *file = env ? getenv(env) : NULL;
	if (file && *file) {
		*why = env;
		return file;
	}
	__builtin_cpu_init();
	bool wide = __builtin_cpu_supports("avx512f");
	*why = wide ? why_avx512 : why_other;
	return wide ? avx512 : other;
}

/* The matmul schedule for this CPU (issue 14: schedules for the host): the
 * register tile follows the vector register file, 32 AVX-512 registers of
 * 16 floats or 16 AVX2 registers of 8; VS_BENCH_MATMUL_SCHEDULE=FILE
 * overrides. *why says which and why, for the results. */
static const char *matmul_schedule(const char **why)
{
	__builtin_cpu_init();
	return schedule_for_host("VS_BENCH_MATMUL_SCHEDULE", "bench/matmul_avx512.sched",
				 "the CPU has AVX-512: 32 vector registers, 8 x 32 tiles",
				 "bench/matmul_6x16_avx2.sched",
				 __builtin_cpu_supports("avx2")
					 ? "the CPU has AVX2, no AVX-512: 16 vector registers, 6 x 16 tiles, B packed"
					 : "no AVX2: the AVX2 schedule's 6 x 16 tiles (narrower vectors split)",
				 why);
}

static void bench_matmul(int n, const char *tir)
{
	size_t nn = (size_t)n * (size_t)n;
	float *A = malloc(nn * 4), *B = malloc(nn * 4);
	float *Cs = malloc(nn * 4), *Cu = malloc(nn * 4), *Cn = malloc(nn * 4), *Cb = malloc(nn * 4);
	for (size_t i = 0; i < nn; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + nn));
	}
	Compiled s, u;
	const char *why, *sched = matmul_schedule(&why);
	out("matmul %d: schedule %s (%s)\n", n, sched, why);
	compile(tir, sched, "matmul", &s);
	compile(tir, NULL, "matmul", &u);
	int slow = n >= 1024 ? 3 : 5, fast = n >= 1024 ? 11 : 21;
	Run rs = {.call = call3, .fn = s.fn, .a = A, .b = B, .c = Cs}, ru = {.call = call3, .fn = u.fn, .a = A, .b = B, .c = Cu};
	Run rn = {.call = call_naive_matmul, .fn = NULL, .a = A, .b = B, .c = Cn, .n = n, .m = 0}, rb = {.call = call_blas, .fn = NULL, .a = A, .b = B, .c = Cb, .n = n, .m = 0};
	double ts = median_seconds(&rs, fast), tb = median_seconds(&rb, fast);
	/* VS_BENCH_FAST=1: one run of the slow baselines (while tuning) */
	if (getenv("VS_BENCH_FAST"))
		slow = 1;
	double tu = median_seconds(&ru, slow), tn = median_seconds(&rn, slow);
	for (size_t i = 0; i < nn; i++)
		if (!close_enough(Cs[i], Cb[i], 1e-3f) || !close_enough(Cu[i], Cb[i], 1e-3f) ||
		    !close_enough(Cn[i], Cb[i], 1e-3f)) {
			fprintf(stderr, "bench: matmul %d differs at %zu: %g %g %g vs %g\n", n, i, Cs[i], Cu[i],
				Cn[i], Cb[i]);
			exit(1);
		}
	char name[64], note[96];
	snprintf(name, sizeof name, "matmul %dx%d f32", n, n);
	snprintf(note, sizeof note, "  %.1f GFLOP/s vs OpenBLAS %.1f", 2.0 * n * n * n / ts * 1e-9,
		 2.0 * n * n * n / tb * 1e-9);
	row(name, ts, tu, tn, tb, &s, note);
	release(&s);
	release(&u);
	free(A), free(B), free(Cs), free(Cu), free(Cn), free(Cb);
}

/* ---------- matmul with B packed (issue 14 item 3) ---------- */

/* The host's matmul tiling with and without B packed per block of k
 * (cache_read + transform_layout + compute_at, bench/matmul_packed_*.sched),
 * both compiled from the logical kernel with every step proven here,
 * timed in alternation in one run, checked against OpenBLAS on the
 * bench's data and, at 128^3, against the reference interpreter. */
static void bench_matmul_packed(void)
{
	const int n = 1024;
	const char *tir = "bench/matmul1024.tir";
	size_t nn = (size_t)n * (size_t)n;
	float *A = malloc(nn * 4), *B = malloc(nn * 4);
	float *Cp = malloc(nn * 4), *Cu = malloc(nn * 4), *Cb = malloc(nn * 4);
	for (size_t i = 0; i < nn; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + nn));
	}
	__builtin_cpu_init();
	bool avx512 = __builtin_cpu_supports("avx512f");
	const char *packed = avx512 ? "bench/matmul_packed_avx512.sched" : "bench/matmul_packed_avx2.sched";
	const char *plain = avx512 ? "bench/matmul_avx512.sched" : "bench/matmul_avx2.sched";
	out("matmul %d B packed: %s against %s (%s)\n", n, packed, plain,
	    avx512 ? "AVX-512: 8 x 32 tiles" : "no AVX-512: 4 x 16 tiles");
	Compiled p, u;
	compile(tir, packed, "matmul", &p);
	compile(tir, plain, "matmul", &u);
	/* the packed schedule at 128^3 against the interpreter */
	FILE *f = fopen(tir, "r");
	char raw[4096], text[4096];
	size_t len = f ? fread(raw, 1, sizeof raw - 1, f) : 0, o = 0;
	if (f)
		fclose(f);
	raw[len] = 0;
	for (size_t i = 0; i < len && o < sizeof text - 4;) /* the same kernel at 128 */
		if (strncmp(raw + i, "1024", 4) == 0)
			memcpy(text + o, "128", 3), o += 3, i += 4;
		else
			text[o++] = raw[i++];
	text[o] = 0;
	vs_module *sm = vs_parse_string(ctx, "matmul128.tir", text);
	vs_schedule *ss = sm ? vs_schedule_new(ctx, sm, NULL) : NULL;
	if (!ss || vs_run_script_file(ss, packed) != VS_OK)
		die("matmul 128 packed");
	vs_build_options bo = bench_build_options();
	vs_program *sp = vs_build(ss, &bo);
	char *report = NULL;
	if (!sp || vs_program_check(sp, "matmul", 2, 1, &report) != VS_OK) {
		fprintf(stderr, "bench: matmul 128 packed disagrees with the interpreter\n%s", report ? report : "");
		exit(1);
	}
	free(report);
	vs_program_free(sp);
	vs_schedule_free(ss);
	Run rp = {.call = call3, .fn = p.fn, .a = A, .b = B, .c = Cp}, ru = {.call = call3, .fn = u.fn, .a = A, .b = B, .c = Cu};
	Run rb = {.call = call_blas, .fn = NULL, .a = A, .b = B, .c = Cb, .n = n, .m = 0};
	/* in alternation, three rounds of medians: the load moves both alike */
	double tp = 1e9, tu = 1e9, tb = 1e9;
	for (int round = 0; round < 3; round++) {
		double x = median_seconds(&rp, 7), y = median_seconds(&ru, 7), z = median_seconds(&rb, 7);
		tp = x < tp ? x : tp, tu = y < tu ? y : tu, tb = z < tb ? z : tb;
	}
	for (size_t i = 0; i < nn; i++)
		if (!close_enough(Cp[i], Cb[i], 1e-3f) || !close_enough(Cu[i], Cb[i], 1e-3f)) {
			fprintf(stderr, "bench: matmul %d packed differs at %zu: %g %g vs %g\n", n, i, Cp[i], Cu[i], Cb[i]);
			exit(1);
		}
	out("%-22s %11.3f %11s %11s %11.3f %8s %8s %8.2f %.3f s (%d, %d)  unpacked tiles %.3f ms: packed %.2fx; "
	    "128^3 agrees with the interpreter\n",
	    "matmul 1024 B packed", tp * 1e3, "-", "-", tb * 1e3, "-", "-", tb / tp, p.verify_seconds, p.steps,
	    p.obligations, tu * 1e3, tu / tp);
	release(&p);
	release(&u);
	free(A), free(B), free(Cp), free(Cu), free(Cb);
}

/* ---------- matmul on all cores ---------- */

/* The thread count of the parallel rows: VS_NUM_THREADS, else the online
 * CPUs; set in VS_NUM_THREADS before the first parallel loop, so vsched's
 * pool and OpenBLAS run on the same count. */
static int bench_threads;

static void choose_threads(void)
{
	const char *env = getenv("VS_NUM_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	bench_threads = n < 1 ? 1 : n > 64 ? 64 : (int)n;
	char text[16];
	snprintf(text, sizeof text, "%d", bench_threads);
	setenv("VS_NUM_THREADS", text, 1);
}

/* The parallel matmul schedule for this CPU: the packed one's register
 * tiles and B panels (bench/matmul_packed_*.sched) with the loop over
 * panels of rows (io, inside the reduction loop ko) made parallel.
 * VS_BENCH_MATMUL_PAR_SCHEDULE overrides. */
static const char *matmul_par_schedule(const char **why)
{
	return schedule_for_host("VS_BENCH_MATMUL_PAR_SCHEDULE", "bench/matmul_avx512_par.sched",
				 "AVX-512: 8 x 32 tiles, B packed, parallel over 8-row panels inside each k block",
				 "bench/matmul_avx2_par.sched",
				 "no AVX-512: 4 x 16 tiles, B packed, parallel over 4-row panels inside each k block",
				 why);
}

/* The cost of one fork/join of vsched's pool: the median time of a call
 * of a kernel whose only loop (64 increments) is parallel. */
static double fork_join_seconds(void)
{
	static const char text[] = "@T.prim_func\n"
				   "def forkjoin(A: T.Buffer((64,), \"int32\")):\n"
				   "    for i in T.serial(64):\n"
				   "        A[i] = A[i] + 1\n";
	vs_module *m = vs_parse_string(ctx, "forkjoin.tir", text);
	vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
	if (!s || vs_run_script_string(s, "forkjoin.sched", "sch.parallel(\"i\")") != VS_OK)
		die("forkjoin");
	vs_program *p = vs_build(s, NULL);
	void *fn = p ? vs_program_lookup(p, "forkjoin") : NULL;
	if (!fn)
		die("forkjoin");
	static int32_t A[64];
	enum { CALLS = 2001 };
	static double t[CALLS];
	for (int r = 0; r < CALLS; r++) {
		double t0 = now();
		((int32_t(*)(void *))fn)(A);
		t[r] = now() - t0;
	}
	if (A[0] != CALLS)
		die("forkjoin: wrong result");
	qsort(t, CALLS, sizeof *t, cmp_double);
	vs_program_free(p);
	vs_schedule_free(s);
	return t[CALLS / 2];
}

/* The kernel text of tir with every `from` replaced by `to`: the same
 * kernel at a size the interpreter runs in a second or two. */
static char *resized_kernel(const char *tir, const char *from, const char *to)
{
	FILE *f = fopen(tir, "r");
	if (!f)
		die(tir);
	static char text[8192];
	size_t len = fread(text, 1, sizeof text - 1, f), nf = strlen(from), nt = strlen(to);
	fclose(f);
	text[len] = 0;
	char *outp = malloc(len * (nt + 1) + 1), *o = outp;
	if (!outp)
		die("memory");
	for (const char *p = text; *p;) {
		if (strncmp(p, from, nf) == 0) {
			memcpy(o, to, nt);
			o += nt;
			p += nf;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return outp;
}

/* The schedule verified and compiled on tir resized (from -> to), its
 * result checked against the reference interpreter (vs_program_check, 1
 * input): the seconds the check took. */
static double check_small(const char *tir, const char *from, const char *to, const char *sched,
			  const char *func)
{
	char *text = resized_kernel(tir, from, to);
	vs_module *m = vs_parse_string(ctx, "small.tir", text);
	free(text);
	vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
	if (!s || vs_run_script_file(s, sched) != VS_OK)
		die(sched);
	vs_build_options bo = bench_build_options();
	vs_program *p = vs_build(s, &bo);
	if (!p)
		die(sched);
	double t0 = now();
	char *report = NULL;
	if (vs_program_check(p, func, 1, 1, &report) != VS_OK) {
		fprintf(stderr, "bench: %s on %s resized to %s differs from the interpreter\n%s\n", sched,
			tir, to, report ? report : "");
		exit(1);
	}
	free(report);
	vs_program_free(p);
	vs_schedule_free(s);
	return now() - t0;
}

static void call_blas_threads(Run *r)
{
	openblas_set_num_threads(r->m);
	call_blas(r);
}

/* f32 matmul n^3 on bench_threads threads: vsched's parallel schedule and
 * OpenBLAS on the same thread count, timed alternately (one call of each
 * per round, so a change in the machine's load hits both), medians. */
static void bench_matmul_threads(int n, const char *tir)
{
	size_t nn = (size_t)n * (size_t)n;
	float *A = malloc(nn * 4), *B = malloc(nn * 4), *Cs = malloc(nn * 4), *Cb = malloc(nn * 4);
	for (size_t i = 0; i < nn; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + nn));
	}
	const char *why, *sched = matmul_par_schedule(&why);
	out("matmul %d, %d threads: schedule %s (%s)\n", n, bench_threads, sched, why);
	double tcheck = check_small(tir, "1024", "256", sched, "matmul");
	Compiled s;
	compile(tir, sched, "matmul", &s);
	Run rs = {.call = call3, .fn = s.fn, .a = A, .b = B, .c = Cs};
	Run rb = {.call = call_blas_threads, .a = A, .b = B, .c = Cb, .n = n, .m = bench_threads};
	enum { ROUNDS = 21 };
	double ts[ROUNDS], tb[ROUNDS];
	rs.call(&rs);
	rb.call(&rb);
	/* 0.1 s of rest before each call: OpenBLAS's idle workers spin for
	 * about 2^28 cycles after a call (they took 10 ms of CPU in 50 ms after
	 * one here), which would run beside vsched's next call; after the
	 * rest both pools start from sleeping workers */
	struct timespec rest = {0, 100000000};
	for (int r = 0; r < ROUNDS; r++) {
		nanosleep(&rest, NULL);
		double t0 = now();
		rs.call(&rs);
		ts[r] = now() - t0;
		nanosleep(&rest, NULL);
		t0 = now();
		rb.call(&rb);
		tb[r] = now() - t0;
	}
	openblas_set_num_threads(1); /* the other rows: one thread */
	qsort(ts, ROUNDS, sizeof *ts, cmp_double);
	qsort(tb, ROUNDS, sizeof *tb, cmp_double);
	for (size_t i = 0; i < nn; i++)
		if (!close_enough(Cs[i], Cb[i], 1e-3f)) {
			fprintf(stderr, "bench: matmul %d on %d threads differs at %zu: %g vs %g\n", n,
				bench_threads, i, Cs[i], Cb[i]);
			exit(1);
		}
	double t = ts[ROUNDS / 2], b = tb[ROUNDS / 2], fj = fork_join_seconds();
	char name[64];
	snprintf(name, sizeof name, "matmul %d f32 %d thr", n, bench_threads);
	out("%-22s %11.3f %11s %11s %11.3f %8s %8s %8.2f %.3f s (%d, %d)  %.1f GFLOP/s vs OpenBLAS %.1f, "
	    "both on %d threads; 256^3 = interpreter (%.1f s)\n",
	    name, t * 1e3, "-", "-", b * 1e3, "-", "-", b / t, s.verify_seconds, s.steps, s.obligations,
	    2.0 * n * n * n / t * 1e-9, 2.0 * n * n * n / b * 1e-9, bench_threads, tcheck);
	out("  one fork/join of vsched's pool on %d threads: %.1f us (median of 2001 calls of a\n"
	    "  64-iteration parallel loop)\n", bench_threads, fj * 1e6);
	release(&s);
	free(A), free(B), free(Cs), free(Cb);
}

/* ---------- a reduction on all cores: dot product ---------- */

float naive_dot(const float *A, const float *B, int n);

static void call_sdot_threads(Run *r)
{
	openblas_set_num_threads(r->m);
	*(float *)r->c = cblas_sdot(r->n, r->a, 1, r->b, 1);
}

static void call_naive_dot(Run *r) { *(float *)r->c = naive_dot(r->a, r->b, r->n); }

enum { DOT_N = 4194304 };

/* The dot product scheduled with per-thread partial results (rfactor,
 * then parallel of the factored loop; bench/dot_par.sched) on
 * bench_threads threads, against OpenBLAS sdot on the same count, timed
 * alternately as the matmul; the unscheduled kernel and the naive C (one
 * thread, in order: clang -O3 keeps float + in order) for reference. */
static void bench_dot_threads(void)
{
	float *A = malloc((size_t)DOT_N * 4), *B = malloc((size_t)DOT_N * 4);
	float cs = 0, cu = 0, cb = 0, cn = 0;
	for (int i = 0; i < DOT_N; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + DOT_N));
	}
	out("dot threads: schedule bench/dot_par.sched on every CPU (four 8-lane partial sums per\n"
	    "  thread: one AVX2 register each; wider vectors streamed no faster here)\n");
	double tcheck = check_small("bench/dot.tir", "4194304", "65536", "bench/dot_par.sched", "dot");
	Compiled s, u;
	compile("bench/dot.tir", "bench/dot_par.sched", "dot", &s);
	compile("bench/dot.tir", NULL, "dot", &u);
	Run rs = {.call = call3, .fn = s.fn, .a = A, .b = B, .c = &cs};
	Run ru = {.call = call3, .fn = u.fn, .a = A, .b = B, .c = &cu};
	Run rb = {.call = call_sdot_threads, .a = A, .b = B, .c = &cb, .n = DOT_N, .m = bench_threads};
	Run rn = {.call = call_naive_dot, .a = A, .b = B, .c = &cn, .n = DOT_N};
	enum { ROUNDS = 21 };
	double ts[ROUNDS], tb[ROUNDS];
	struct timespec rest = {0, 100000000}; /* see bench_matmul_threads */
	rs.call(&rs);
	rb.call(&rb);
	for (int r = 0; r < ROUNDS; r++) {
		nanosleep(&rest, NULL);
		double t0 = now();
		rs.call(&rs);
		ts[r] = now() - t0;
		nanosleep(&rest, NULL);
		t0 = now();
		rb.call(&rb);
		tb[r] = now() - t0;
	}
	openblas_set_num_threads(1);
	qsort(ts, ROUNDS, sizeof *ts, cmp_double);
	qsort(tb, ROUNDS, sizeof *tb, cmp_double);
	double tu = median_seconds(&ru, 11), tn = median_seconds(&rn, 11);
	if (!close_enough(cs, cn, 1e-3f) || !close_enough(cu, cn, 1e-3f) || !close_enough(cb, cn, 1e-3f)) {
		fprintf(stderr, "bench: dot differs: %g %g %g vs %g\n", cs, cu, cb, cn);
		exit(1);
	}
	double t = ts[ROUNDS / 2], b = tb[ROUNDS / 2];
	char name[64];
	snprintf(name, sizeof name, "dot 4M f32 %d thr", bench_threads);
	out("%-22s %11.3f %11.3f %11.3f %11.3f %8.2f %8.2f %8.2f %.3f s (%d, %d)  %.1f GB/s vs OpenBLAS sdot "
	    "%.1f, both on %d threads; unsched, naive: 1 thread; 64K = interpreter (%.1f s)\n",
	    name, t * 1e3, tu * 1e3, tn * 1e3, b * 1e3, tn / t, tu / t, b / t, s.verify_seconds, s.steps,
	    s.obligations, 8.0 * DOT_N / t * 1e-9, 8.0 * DOT_N / b * 1e-9, bench_threads, tcheck);
	release(&s);
	release(&u);
	free(A), free(B);
}

/* ---------- matmul at a size no tile divides (issue 14, tails) ----------
 * 1000^3 with the 1024^3 row's register tiles on the main part and a cut
 * tail of 8 columns lifted into a nest of its own (sch.fission(io,
 * before=jt)), both nests reordered, unrolled and vectorized, every step
 * proven. Timed alternating with the 1024^3 schedule of this CPU (pairs
 * of calls, medians), so the two GFLOP/s figures see the same load; the
 * same schedule is compiled on a 16 x 40 x 250 matmul (the same 8-column
 * tail) and checked against the reference interpreter. */
static void bench_matmul_tails(void)
{
	const char *why, *s1024 = matmul_schedule(&why);
	const char *s1000 = getenv("VS_BENCH_MATMUL1000_SCHEDULE");
	if (!s1000 || !*s1000)
		s1000 = strstr(s1024, "avx512") ? "bench/matmul1000_avx512.sched" : "bench/matmul1000_avx2.sched";
	out("matmul 1000 (cut tail): schedule %s, against %s (%s)\n", s1000, s1024, why);
	Compiled chk, t, w;
	compile("bench/matmul_tail_check.tir", s1000, "matmul", &chk);
	char *report = NULL;
	if (vs_program_check(chk.p, "matmul", 3, 1, &report) != VS_OK) {
		fprintf(stderr, "bench: matmul 1000's schedule on 16x40x250 differs from the interpreter:\n%s\n",
			report ? report : vs_last_error(ctx));
		exit(1);
	}
	free(report);
	release(&chk);
	compile("bench/matmul1000.tir", s1000, "matmul", &t);
	compile("bench/matmul1024.tir", s1024, "matmul", &w);
	int n = 1000, m = 1024;
	size_t nn = (size_t)n * n, mm = (size_t)m * m;
	float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4), *Cb = malloc(nn * 4);
	float *A2 = malloc(mm * 4), *B2 = malloc(mm * 4), *C2 = malloc(mm * 4);
	for (size_t i = 0; i < nn; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + nn));
	}
	for (size_t i = 0; i < mm; i++) {
		A2[i] = small_float((uint32_t)i);
		B2[i] = small_float((uint32_t)(i + mm));
	}
	Run r1000 = {.call = call3, .fn = t.fn, .a = A, .b = B, .c = C};
	Run r1024 = {.call = call3, .fn = w.fn, .a = A2, .b = B2, .c = C2};
	Run rb = {.call = call_blas, .fn = NULL, .a = A, .b = B, .c = Cb, .n = n, .m = 0};
	enum { REPS = 21 };
	double t1000[REPS], t1024[REPS];
	r1000.call(&r1000);
	r1024.call(&r1024);
	for (int r = 0; r < REPS; r++) {
		double t0 = now();
		r1000.call(&r1000);
		t1000[r] = now() - t0;
		t0 = now();
		r1024.call(&r1024);
		t1024[r] = now() - t0;
	}
	qsort(t1000, REPS, sizeof *t1000, cmp_double);
	qsort(t1024, REPS, sizeof *t1024, cmp_double);
	double tb = median_seconds(&rb, REPS);
	for (size_t i = 0; i < nn; i++)
		if (!close_enough(C[i], Cb[i], 1e-3f)) {
			fprintf(stderr, "bench: matmul 1000 differs at %zu: %g vs %g\n", i, C[i], Cb[i]);
			exit(1);
		}
	double g1000 = 2.0 * n * n * n / t1000[REPS / 2] * 1e-9, g1024 = 2.0 * m * m * m / t1024[REPS / 2] * 1e-9;
	double gb = 2.0 * n * n * n / tb * 1e-9;
	out("%-22s %11.3f %11s %11s %11.3f %8s %8s %8.2f %.3f s (%d, %d)  %.1f GFLOP/s vs 1024^3 %.1f "
	    "(alternating): %.2fx (target >= 0.9); OpenBLAS %.1f; interpreter check 16x40x250 ok\n",
	    "matmul 1000x1000 f32", t1000[REPS / 2] * 1e3, "-", "-", tb * 1e3, "-", "-", tb / t1000[REPS / 2],
	    t.verify_seconds, t.steps, t.obligations, g1000, g1024, g1000 / g1024, gb);
	release(&t);
	release(&w);
	free(A), free(B), free(C), free(Cb), free(A2), free(B2), free(C2);
}

/* ---------- conv2d against oneDNN (issue 14: a conv2d anchor) ---------- */

/* 3 x 3, stride 1, padding 1, batch 1, 64 -> 64 channels, 56 x 56, in
 * NCHW16c (oneDNN's nChw16c, weights OIhw16i16o). vsched's kernel reads
 * the input with its padding written in (58 x 58, zero border: made once,
 * outside the timing); oneDNN and the naive C take the 56 x 56 input and
 * pad in their loops. */
enum { C2_CB = 4, C2_HW = 56, C2_P = C2_HW + 2 };

static const char *conv2d_schedule(const char **why)
{
	return schedule_for_host(NULL, "bench/conv2d_avx512.sched", "AVX-512: 32 vector registers, 28 pixels x 16 channels",
				 "bench/conv2d_avx2.sched",
				 "no AVX-512: 16 vector registers, 6 pixels x 16 channels, a 2-pixel tail", why);
}

/* The schedule (and extra steps, or NULL) applied to bench/conv2d_small.tir,
 * compiled and checked against the reference interpreter. */
static void conv2d_check_small(const char *sched, const char *extra)
{
	Compiled c;
	compile("bench/conv2d_small.tir", sched, "conv2d", &c);
	if (extra) {
		vs_program_free(c.p);
		if (vs_run_script_string(c.s, "bench.sched", extra) != VS_OK)
			die(extra);
		vs_build_options bo = bench_build_options();
		if (!(c.p = vs_build(c.s, &bo)))
			die("conv2d_small");
	}
	char *rep = NULL;
	if (vs_program_check(c.p, "conv2d", 1, 7, &rep) != VS_OK) {
		fprintf(stderr, "bench: conv2d at the small size differs from the interpreter\n%s\n",
			rep ? rep : vs_last_error(ctx));
		exit(1);
	}
	free(rep);
	release(&c);
}

typedef struct OneDnn {
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t prim;
	dnnl_memory_t src, wei, dst;
	const char *impl;
} OneDnn;

static void dnnl_ok(dnnl_status_t st, const char *what)
{
	if (st != dnnl_success) {
		fprintf(stderr, "bench: oneDNN: %s failed (status %d)\n", what, (int)st);
		exit(1);
	}
}

static void onednn_init_tags(OneDnn *d, float *X, float *W, float *O, dnnl_format_tag_t act,
			     dnnl_format_tag_t wei);

static void onednn_init(OneDnn *d, float *X, float *W, float *O)
{
	onednn_init_tags(d, X, W, O, dnnl_nChw16c, dnnl_OIhw16i16o);
}

/* act: the layout of the input and output, wei: of the weights (oneDNN's
 * AVX2 kernels block channels by 8: nChw8c, OIhw8i8o) */
static void onednn_init_tags(OneDnn *d, float *X, float *W, float *O, dnnl_format_tag_t act,
			     dnnl_format_tag_t wei)
{
	dnnl_memory_desc_t smd, wmd, dmd;
	dnnl_dims_t sdims = {1, C2_CB * 16, C2_HW, C2_HW}, wdims = {C2_CB * 16, C2_CB * 16, 3, 3};
	dnnl_dims_t strides = {1, 1}, pad = {1, 1};
	dnnl_ok(dnnl_engine_create(&d->engine, dnnl_cpu, 0), "engine");
	dnnl_ok(dnnl_stream_create(&d->stream, d->engine, dnnl_stream_default_flags), "stream");
	dnnl_ok(dnnl_memory_desc_init_by_tag(&smd, 4, sdims, dnnl_f32, act), "src desc");
	dnnl_ok(dnnl_memory_desc_init_by_tag(&wmd, 4, wdims, dnnl_f32, wei), "weights desc");
	dnnl_ok(dnnl_memory_desc_init_by_tag(&dmd, 4, sdims, dnnl_f32, act), "dst desc");
	dnnl_convolution_desc_t cd;
	dnnl_ok(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &smd,
						    &wmd, NULL, &dmd, strides, pad, pad),
		"convolution desc");
	dnnl_ok(dnnl_primitive_desc_create(&d->pd, &cd, NULL, d->engine, NULL), "primitive desc");
	dnnl_ok(dnnl_primitive_create(&d->prim, d->pd), "primitive");
	d->impl = "?";
	dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str, 0, &d->impl);
	dnnl_ok(dnnl_memory_create(&d->src, &smd, d->engine, X), "src");
	dnnl_ok(dnnl_memory_create(&d->wei, &wmd, d->engine, W), "weights");
	dnnl_ok(dnnl_memory_create(&d->dst, &dmd, d->engine, O), "dst");
}

static void onednn_free(OneDnn *d)
{
	dnnl_memory_destroy(d->src);
	dnnl_memory_destroy(d->wei);
	dnnl_memory_destroy(d->dst);
	dnnl_primitive_destroy(d->prim);
	dnnl_primitive_desc_destroy(d->pd);
	dnnl_stream_destroy(d->stream);
	dnnl_engine_destroy(d->engine);
}

static void call_onednn(Run *r)
{
	OneDnn *d = r->fn;
	dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->wei}, {DNNL_ARG_DST, d->dst}};
	dnnl_ok(dnnl_primitive_execute(d->prim, d->stream, 3, args), "execute");
	dnnl_ok(dnnl_stream_wait(d->stream), "wait");
}

static void call_naive_conv2d(Run *r) { naive_conv2d(r->a, r->b, r->c, C2_CB, C2_HW); }

static void conv2d_compare(const float *x, const float *ref, const char *what)
{
	for (int i = 0; i < C2_CB * C2_HW * C2_HW * 16; i++)
		if (!close_enough(x[i], ref[i], 1e-4f)) {
			fprintf(stderr, "bench: conv2d (%s) differs from oneDNN at %d: %g vs %g\n", what, i, x[i],
				ref[i]);
			exit(1);
		}
}

static void bench_conv2d(void)
{
	size_t nio = (size_t)C2_CB * C2_HW * C2_HW * 16, npad = (size_t)C2_CB * C2_P * C2_P * 16,
	       nw = (size_t)C2_CB * C2_CB * 9 * 256;
	float *X = malloc(nio * 4), *Xp = calloc(npad, 4), *W = malloc(nw * 4);
	float *Os = malloc(nio * 4), *Op = malloc(nio * 4), *Ou = malloc(nio * 4), *On = malloc(nio * 4),
	      *Od = malloc(nio * 4);
	for (int b = 0; b < C2_CB; b++)
		for (int h = 0; h < C2_HW; h++)
			for (int w = 0; w < C2_HW; w++)
				for (int c = 0; c < 16; c++) {
					size_t k = (((size_t)b * C2_HW + h) * C2_HW + w) * 16 + c;
					X[k] = Xp[(((size_t)b * C2_P + h + 1) * C2_P + w + 1) * 16 + c] = small_float((uint32_t)k);
				}
	for (size_t i = 0; i < nw; i++)
		W[i] = small_float((uint32_t)(i + nio));
	const char *why, *sched = conv2d_schedule(&why);
	const char *par = "sch.parallel(\"ob#2\")\nsch.parallel(\"ob#1\")\n";
	out("conv2d: schedule %s (%s); + %s for all cores\n", sched, why, "parallel(ob) on both nests");
	conv2d_check_small(sched, NULL);
	conv2d_check_small(sched, par);
	Compiled s, p, u;
	compile("bench/conv2d.tir", sched, "conv2d", &s);
	compile("bench/conv2d.tir", sched, "conv2d", &p);
	vs_program_free(p.p);
	double t0 = now();
	if (vs_run_script_string(p.s, "bench.sched", par) != VS_OK)
		die(par);
	p.verify_seconds += now() - t0;
	p.steps = vs_num_reports(p.s);
	p.obligations = 0;
	for (int i = 0; i < p.steps; i++)
		p.obligations += vs_report_num_obligations(vs_report_at(p.s, i));
	vs_build_options bo = bench_build_options();
	if (!(p.p = vs_build(p.s, &bo)) || !(p.fn = vs_program_lookup(p.p, "conv2d")))
		die("conv2d parallel");
	compile("bench/conv2d.tir", NULL, "conv2d", &u);
	/* oneDNN fixes its thread count when the primitive is made (the
	 * OpenMP maximum then): one primitive per thread count */
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	OneDnn d, dp;
	omp_set_num_threads((int)cores);
	onednn_init(&dp, X, W, Od);
	omp_set_num_threads(1);
	onednn_init(&d, X, W, Od);
	out("conv2d: oneDNN %d.%d.%d, implementation %s\n", dnnl_version()->major, dnnl_version()->minor,
	    dnnl_version()->patch, d.impl);
	Run rs = {.call = call3, .fn = s.fn, .a = Xp, .b = W, .c = Os};
	Run rp = {.call = call3, .fn = p.fn, .a = Xp, .b = W, .c = Op};
	Run ru = {.call = call3, .fn = u.fn, .a = Xp, .b = W, .c = Ou};
	Run rd = {.call = call_onednn, .fn = &d}, rdp = {.call = call_onednn, .fn = &dp};
	Run rn = {.call = call_naive_conv2d, .a = X, .b = W, .c = On};
	int reps = 21, slow = getenv("VS_BENCH_FAST") ? 1 : 3;
	/* alternate the two in turns, so a burst of load hits both */
	double ts = 1e9, td = 1e9;
	for (int k = 0; k < 3; k++) {
		double a = median_seconds(&rs, reps), b = median_seconds(&rd, reps);
		ts = a < ts ? a : ts;
		td = b < td ? b : td;
	}
	double tu = median_seconds(&ru, slow), tn = median_seconds(&rn, slow);
	conv2d_compare(Os, Od, "scheduled");
	conv2d_compare(Ou, Od, "unscheduled");
	conv2d_compare(On, Od, "naive C");
	double flop = 2.0 * C2_HW * C2_HW * (C2_CB * 16) * (C2_CB * 16) * 9;
	char note[128];
	snprintf(note, sizeof note, "  vs oneDNN (blas column): %.1f GFLOP/s vs %.1f", flop / ts * 1e-9,
		 flop / td * 1e-9);
	row("conv2d 3x3 64c 56^2 f32", ts, tu, tn, td, &s, note);
	double tp = 1e9, tdp = 1e9;
	for (int k = 0; k < 3; k++) {
		double a = median_seconds(&rp, reps), b = median_seconds(&rdp, reps);
		tp = a < tp ? a : tp;
		tdp = b < tdp ? b : tdp;
	}
	conv2d_compare(Op, Od, "parallel");
	char name[64];
	snprintf(name, sizeof name, "conv2d, %ld threads", cores);
	snprintf(note, sizeof note, "  vs oneDNN on %ld threads: %.1f GFLOP/s vs %.1f", cores, flop / tp * 1e-9,
		 flop / tdp * 1e-9);
	row(name, tp, tu, tn, tdp, &p, note);
	onednn_free(&d);
	onednn_free(&dp);
	release(&s);
	release(&p);
	release(&u);
	free(X), free(Xp), free(W), free(Os), free(Op), free(Ou), free(On), free(Od);
}

/* ---------- AVX2 code on an AVX-512 machine (issue 14 item 5) ---------- */

/* The AVX2 schedules (bench/NAME_avx2.sched) are what the bench picks on an
 * AVX2 machine. On an AVX-512 host they are measured here too, compiled
 * for x86-64-v3 (AVX2 + FMA, no AVX-512 instruction: the emitted assembly
 * is checked for zmm and mask registers), against OpenBLAS's Haswell (AVX2)
 * kernels and oneDNN limited to AVX2. oneDNN reads its ISA limit once, at
 * its first use, and OpenBLAS its core type when it loads: so the section
 * runs in a child process (`bench --avx2`) started with
 * ONEDNN_MAX_CPU_ISA=AVX2 and OPENBLAS_CORETYPE=Haswell, whose rows the
 * parent copies into the table. The same ISA as an AVX2 machine, not the
 * same microarchitecture (this CPU's caches, ports and clock): a proxy. */

static char cpu_model[128] = "this CPU";

static void read_cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			const char *v = strchr(line, ':') + 1;
			while (*v == ' ')
				v++;
			snprintf(cpu_model, sizeof cpu_model, "%.*s", (int)strcspn(v, "\n"), v);
			break;
		}
	if (f)
		fclose(f);
}

/* Whether the program's assembly has an AVX-512 register (zmm, or a mask
 * register k1..k7 as an operand); exits when the assembly cannot be had. */
static bool asm_uses_avx512(vs_program *p)
{
	char path[] = "/tmp/vsched-bench-avx2-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		die("a temporary file for the assembly");
	close(fd);
	if (vs_program_emit(p, "asm", path) != VS_OK)
		die("emit asm");
	FILE *f = fopen(path, "r");
	char line[512];
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, "zmm") || strstr(line, "{%k") || strstr(line, "%k1") ||
			strstr(line, "%k2");
	if (f)
		fclose(f);
	unlink(path);
	return found;
}

/* Compile for AVX2 and check the assembly: an AVX-512 register in it
 * would make the section a lie, so the bench stops. */
static void compile_avx2(const char *tir, const char *sched, const char *func, Compiled *c)
{
	compile(tir, sched, func, c);
	if (asm_uses_avx512(c->p)) {
		fprintf(stderr, "bench: %s compiled for %s uses AVX-512 registers\n", sched, bench_cpu);
		exit(1);
	}
}

/* Three rounds of reps calls of a and b in turns (a, b, a, b, ...): the
 * best of the rounds' median times of each; the median over all rounds of
 * the ratios b / a of two calls made side by side (returned: the "x blas"
 * figure), and per round the median of its ratios in `rounds` ("0.91
 * 0.93 0.92"). On a loaded machine a pair sees about the same load; the
 * medians of a whole round less so. */
static double alternate_rounds(Run *a, Run *b, int reps, double *ta, double *tb, char *rounds, size_t n)
{
	double x[64], y[64], q[64], all[3 * 64], xmin = 1e9, ymin = 1e9;
	int nall = 0;
	reps = reps > 64 ? 64 : reps;
	*ta = *tb = 1e9;
	rounds[0] = 0;
	a->call(a);
	b->call(b);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < reps; i++) {
			double t0 = now();
			a->call(a);
			double t1 = now();
			b->call(b);
			x[i] = t1 - t0;
			y[i] = now() - t1;
			q[i] = all[nall++] = y[i] / x[i];
			xmin = x[i] < xmin ? x[i] : xmin;
			ymin = y[i] < ymin ? y[i] : ymin;
		}
		qsort(x, (size_t)reps, sizeof *x, cmp_double);
		qsort(y, (size_t)reps, sizeof *y, cmp_double);
		qsort(q, (size_t)reps, sizeof *q, cmp_double);
		*ta = x[reps / 2] < *ta ? x[reps / 2] : *ta;
		*tb = y[reps / 2] < *tb ? y[reps / 2] : *tb;
		snprintf(rounds + strlen(rounds), n - strlen(rounds), "%s%.2f", r ? " " : "", q[reps / 2]);
	}
	qsort(all, (size_t)nall, sizeof *all, cmp_double);
	snprintf(rounds + strlen(rounds), n - strlen(rounds), "; fastest calls %.3f vs %.3f ms: %.2fx",
		 xmin * 1e3, ymin * 1e3, ymin / xmin);
	return all[nall / 2];
}

/* An AVX2 matmul row: the schedule on the n^3 kernel, its result against
 * OpenBLAS's, and (check_tir, or tir resized to 128) the compiled schedule
 * against the reference interpreter. */
static void avx2_matmul_row(const char *name, int n, const char *tir, const char *sched,
			    const char *check_tir)
{
	/* while tuning: VS_BENCH_AVX2_MATMUL_SCHEDULE replaces the schedule
	 * of the 1024^3 rows, VS_BENCH_AVX2_MATMUL1000_SCHEDULE of 1000^3 */
	const char *env = getenv(n == 1000 ? "VS_BENCH_AVX2_MATMUL1000_SCHEDULE" : "VS_BENCH_AVX2_MATMUL_SCHEDULE");
	if (env && *env)
		sched = env;
	double tcheck = 0;
	if (check_tir) {
		Compiled chk;
		compile_avx2(check_tir, sched, "matmul", &chk);
		double t0 = now();
		char *report = NULL;
		if (vs_program_check(chk.p, "matmul", 2, 1, &report) != VS_OK) {
			fprintf(stderr, "bench: %s on %s differs from the interpreter:\n%s\n", sched, check_tir,
				report ? report : vs_last_error(ctx));
			exit(1);
		}
		tcheck = now() - t0;
		free(report);
		release(&chk);
	} else {
		tcheck = check_small(tir, "1024", "128", sched, "matmul");
	}
	Compiled s;
	compile_avx2(tir, sched, "matmul", &s);
	size_t nn = (size_t)n * n;
	float *A = malloc(nn * 4), *B = malloc(nn * 4), *Cs = malloc(nn * 4), *Cb = malloc(nn * 4);
	for (size_t i = 0; i < nn; i++) {
		A[i] = small_float((uint32_t)i);
		B[i] = small_float((uint32_t)(i + nn));
	}
	Run rs = {.call = call3, .fn = s.fn, .a = A, .b = B, .c = Cs};
	Run rb = {.call = call_blas, .a = A, .b = B, .c = Cb, .n = n};
	double ts, tb;
	char rounds[128];
	double ratio = alternate_rounds(&rs, &rb, 11, &ts, &tb, rounds, sizeof rounds);
	for (size_t i = 0; i < nn; i++)
		if (!close_enough(Cs[i], Cb[i], 1e-3f)) {
			fprintf(stderr, "bench: %s differs from OpenBLAS at %zu: %g vs %g\n", name, i, Cs[i], Cb[i]);
			exit(1);
		}
	out("%-22s %11.3f %11s %11s %11.3f %8s %8s %8.2f %.3f s (%d, %d)  %.1f GFLOP/s vs OpenBLAS %.1f "
	    "(%s; pairs, per round: %s); %s = interpreter (%.1f s)\n",
	    name, ts * 1e3, "-", "-", tb * 1e3, "-", "-", ratio, s.verify_seconds, s.steps, s.obligations,
	    2.0 * n * n * n / ts * 1e-9, 2.0 * n * n * n / tb * 1e-9, sched, rounds,
	    check_tir ? "16x40x250" : "128^3", tcheck);
	release(&s);
	free(A), free(B), free(Cs), free(Cb);
}

/* The AVX2 conv2d row: bench/conv2d_avx2.sched against oneDNN limited to
 * AVX2, one thread each, alternating; checked at the small size against
 * the interpreter and at the full size against oneDNN. */
static void avx2_conv2d_row(void)
{
	const char *sched = getenv("VS_BENCH_AVX2_CONV2D_SCHEDULE"); /* while tuning */
	sched = sched && *sched ? sched : "bench/conv2d_avx2.sched";
	conv2d_check_small(sched, NULL);
	size_t nio = (size_t)C2_CB * C2_HW * C2_HW * 16, npad = (size_t)C2_CB * C2_P * C2_P * 16,
	       nw = (size_t)C2_CB * C2_CB * 9 * 256;
	float *X = malloc(nio * 4), *Xp = calloc(npad, 4), *W = malloc(nw * 4);
	float *Os = malloc(nio * 4), *Od = malloc(nio * 4);
	for (int b = 0; b < C2_CB; b++)
		for (int h = 0; h < C2_HW; h++)
			for (int w = 0; w < C2_HW; w++)
				for (int c = 0; c < 16; c++) {
					size_t k = (((size_t)b * C2_HW + h) * C2_HW + w) * 16 + c;
					X[k] = Xp[(((size_t)b * C2_P + h + 1) * C2_P + w + 1) * 16 + c] =
						small_float((uint32_t)k);
				}
	for (size_t i = 0; i < nw; i++)
		W[i] = small_float((uint32_t)(i + nio));
	/* oneDNN's AVX2 convolution takes channels in blocks of 8 (with
	 * blocks of 16 it falls back to its reference code): the same data
	 * in nChw8c and OIhw8i8o, made outside the timing */
	float *X8 = malloc(nio * 4), *W8 = malloc(nw * 4), *O8 = malloc(nio * 4);
	int C = C2_CB * 16;
	for (int c = 0; c < C; c++)
		for (int hw = 0; hw < C2_HW * C2_HW; hw++)
			X8[((size_t)(c / 8) * C2_HW * C2_HW + hw) * 8 + c % 8] =
				X[((size_t)(c / 16) * C2_HW * C2_HW + hw) * 16 + c % 16];
	for (int o = 0; o < C; o++)
		for (int i = 0; i < C; i++)
			for (int k = 0; k < 9; k++)
				W8[(((size_t)(o / 8) * (C / 8) + i / 8) * 9 + k) * 64 + (i % 8) * 8 + o % 8] =
					W[(((size_t)(o / 16) * C2_CB + i / 16) * 9 + k) * 256 + (i % 16) * 16 + o % 16];
	Compiled s;
	compile_avx2("bench/conv2d.tir", sched, "conv2d", &s);
	omp_set_num_threads(1);
	OneDnn d;
	onednn_init_tags(&d, X8, W8, O8, dnnl_nChw8c, dnnl_OIhw8i8o);
	if (strstr(d.impl, "avx512") || strncmp(d.impl, "ref", 3) == 0) {
		fprintf(stderr, "bench: oneDNN limited to AVX2 chose %s, not its AVX2 kernel\n", d.impl);
		exit(1);
	}
	Run rs = {.call = call3, .fn = s.fn, .a = Xp, .b = W, .c = Os}, rd = {.call = call_onednn, .fn = &d};
	double ts, td;
	char rounds[128];
	double ratio = alternate_rounds(&rs, &rd, 21, &ts, &td, rounds, sizeof rounds);
	for (int c = 0; c < C; c++)
		for (int hw = 0; hw < C2_HW * C2_HW; hw++)
			Od[((size_t)(c / 16) * C2_HW * C2_HW + hw) * 16 + c % 16] =
				O8[((size_t)(c / 8) * C2_HW * C2_HW + hw) * 8 + c % 8];
	conv2d_compare(Os, Od, "AVX2 scheduled");
	double flop = 2.0 * C2_HW * C2_HW * (C2_CB * 16) * (C2_CB * 16) * 9;
	out("%-22s %11.3f %11s %11s %11.3f %8s %8s %8.2f %.3f s (%d, %d)  %.1f GFLOP/s vs oneDNN %.1f "
	    "(%s, nChw8c; pairs, per round: %s); small size = interpreter\n",
	    "AVX2 conv2d 3x3 64c", ts * 1e3, "-", "-", td * 1e3, "-", "-", ratio, s.verify_seconds, s.steps,
	    s.obligations, flop / ts * 1e-9, flop / td * 1e-9, d.impl, rounds);
	onednn_free(&d);
	release(&s);
	free(X), free(Xp), free(W), free(Os), free(Od), free(X8), free(W8), free(O8);
}

/* The child: `bench --avx2`, its rows on stdout (the parent copies them). */
static int avx2_main(void)
{
	bench_cpu = "x86-64-v3";
	ctx = vs_context_new();
	openblas_set_num_threads(1);
	dnnl_status_t st = dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2);
	const char *only = getenv("VS_BENCH_ONLY");
#define WANT(name) (!only || strstr(name, only))
	read_cpu_model();
	out("\nAVX2 code on %s: vsched compiled for x86-64-v3 (AVX2 + FMA; the assembly is\n"
	    "checked: no zmm or mask register), OpenBLAS core %s, oneDNN limited to AVX2\n"
	    "(%s). The same ISA as an AVX2 machine, not its microarchitecture\n"
	    "(this CPU's caches, ports and clock): a proxy.\n"
	    "Schedules: bench/NAME_avx2.sched (16 vector registers), each verified in this run. x blas:\n"
	    "the median ratio of calls made side by side (3 rounds); the fastest call of each is the\n"
	    "steadier figure for a call of a few ms on a loaded machine.\n",
	    cpu_model, openblas_get_corename(),
	    st == dnnl_success ? "dnnl_set_max_cpu_isa(avx2)" : "ONEDNN_MAX_CPU_ISA=AVX2");
	/* the schedule an AVX2 host picks (matmul_schedule), and the 4 x 16
	 * tiles without packing it picked before */
	if (WANT("AVX2 matmul 1024 f32"))
		avx2_matmul_row("AVX2 matmul 1024 f32", 1024, "bench/matmul1024.tir",
				"bench/matmul_6x16_avx2.sched", NULL);
	if (WANT("AVX2 matmul 1024 4x16"))
		avx2_matmul_row("AVX2 matmul 1024 4x16", 1024, "bench/matmul1024.tir", "bench/matmul_avx2.sched",
				NULL);
	if (WANT("AVX2 matmul 1000 f32"))
		avx2_matmul_row("AVX2 matmul 1000 f32", 1000, "bench/matmul1000.tir",
				"bench/matmul1000_avx2.sched", "bench/matmul_tail_check.tir");
	if (WANT("AVX2 conv2d 3x3 64c"))
		avx2_conv2d_row();
#undef WANT
	vs_context_free(ctx);
	return 0;
}

/* The AVX2 section, on an AVX-512 host: the child's rows into the table. */
static void bench_avx2(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx2") ||
	    !__builtin_cpu_supports("fma")) {
		out("AVX2 section: not run (the host has no AVX-512: the rows above are the AVX2 code)\n");
		return;
	}
	int fds[2];
	if (pipe(fds) != 0)
		die("pipe");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
		setenv("OPENBLAS_CORETYPE", "Haswell", 1);
		execl("/proc/self/exe", "bench", "--avx2", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f))
		out("%s", line);
	if (f)
		fclose(f);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: the AVX2 section failed (status %d)\n", status);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--rusage") == 0)
		return rusage_main(argv + 2);
	if (argc == 2 && strcmp(argv[1], "--avx2") == 0)
		return avx2_main();
	const char *path = argc > 1 ? argv[1] : "build/bench-results.txt";
	results = fopen(path, "w");
	if (!results)
		fprintf(stderr, "bench: cannot write %s; printing only\n", path);
	openblas_set_num_threads(1);
	choose_threads();
	ctx = vs_context_new();
	double t0 = now();
	out("vsched bench: median wall times of the kernel call, one thread (rows 'N thr': N threads,\n"
	    "vsched's pool and OpenBLAS on the same count); ratios are times\n"
	    "relative to the vsched-compiled scheduled kernel (> 1: vsched is faster).\n"
	    "rowsum / conv1d / elementwise: scheduled = overcomputed form, unscheduled = branchy\n"
	    "form; rowsum and elementwise are scheduled from the logical kernel (every step\n"
	    "proven), conv1d is written in both forms as .tir.\n"
	    "vsched builds with contract_fma (fused multiply-add, as clang -O3 does for the\n"
	    "naive C). OpenBLAS: cblas_sgemm on 1 thread, core %s.\n\n", openblas_get_corename());
	header();
	/* VS_BENCH_ONLY=matmul (a substring of the row names) runs a subset */
	const char *only = getenv("VS_BENCH_ONLY");
#define WANT(name) (!only || strstr(name, only))
	/* the row sum over 8 MB, which may stay in the caches, and over
	 * 256 MB, larger than the caches: each against the fastest of a few
	 * read loops over the same bytes */
	if (WANT("rowsum"))
		bench_rowsum(2048, "bench/rowsum.tir", "over 8 MB (cache)");
	if (WANT("rowsum"))
		bench_rowsum(65536, "bench/rowsum_big.tir", "over 256 MB (memory)");
	if (WANT("conv1d"))
		bench_conv1d();
	if (WANT("elementwise"))
		bench_elementwise();
	if (WANT("matmul 512"))
		bench_matmul(512, "bench/matmul512.tir");
	if (WANT("matmul 1024"))
		bench_matmul(1024, "bench/matmul1024.tir");
	if (WANT("matmul 1024 B packed"))
		bench_matmul_packed();
	if (WANT("matmul 1024 f32 threads"))
		bench_matmul_threads(1024, "bench/matmul1024.tir");
	if (WANT("dot threads"))
		bench_dot_threads();
	if (WANT("matmul 1000"))
		bench_matmul_tails();
	if (WANT("conv2d"))
		bench_conv2d();
	if (WANT("AVX2 matmul 1024 f32") || WANT("AVX2 matmul 1024 4x16") || WANT("AVX2 matmul 1000 f32") ||
	    WANT("AVX2 conv2d 3x3 64c"))
		bench_avx2();
	if (WANT("scale"))
		bench_verify_scale();
	if (WANT("scale"))
		bench_linear_steps();
	if (WANT("exo"))
		bench_exo_ports();
	if (WANT("exo"))
		bench_cache_and_rejections();
#undef WANT
	out("\ntotal bench time %.1f s\n", now() - t0);
	vs_context_free(ctx);
	if (results) {
		fclose(results);
		printf("results written to %s\n", path);
	}
	return 0;
}
