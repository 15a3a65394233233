/* bench/interp.c — `make bench`'s interpreter line: the reference
 * interpreter's speed on loop nests (matmul as loops and as TensorIR
 * blocks, conv2d, elementwise, an int row sum, conv1d through layouts and
 * facts), each kernel run on the same random input by the tree walk and
 * by the compiled form (kernel/interp_compile.c), which must agree on
 * every cell, count and step. Prints steps per second of each and the
 * ratio, naming the CPU. Links the library's internals (kernel/).
 * Usage: interp_bench [RESULTS_FILE (appended)] */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/interp.h"
#include "kernel/parse.h"

static const char matmul_loops[] =
	"@T.prim_func\n"
	"def matmul(A: T.Buffer((256, 256), \"float32\"), B: T.Buffer((256, 256), \"float32\"),"
	" C: T.Buffer((256, 256), \"float32\")):\n"
	"    for i, j in T.grid(256, 256):\n"
	"        C[i, j] = 0.0\n"
	"    for i, j, k in T.grid(256, 256, 256):\n"
	"        C[i, j] = C[i, j] + A[i, k] * B[k, j]\n";

/* bench/matmul.sched's schedule at 256^3, as `vsched jit` checks it */
static const char matmul_tiled[] =
	"@T.prim_func\n"
	"def matmul(A: T.Buffer((256, 256), \"float32\"), B: T.Buffer((256, 256), \"float32\"),"
	" C: T.Buffer((256, 256), \"float32\")):\n"
	"    for i, j in T.grid(256, 256):\n"
	"        C[i, j] = 0.0\n"
	"    for ko, io, jo, ki in T.grid(2, 32, 8, 128):\n"
	"        for ii in T.unroll(8):\n"
	"            for ji in T.vectorized(32):\n"
	"                C[io * 8 + ii, jo * 32 + ji] = C[io * 8 + ii, jo * 32 + ji] + "
	"A[io * 8 + ii, ko * 128 + ki] * B[ko * 128 + ki, jo * 32 + ji]\n";

static const char matmul_blocks[] =
	"@T.prim_func\n"
	"def matmul(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"),"
	" C: T.Buffer((128, 128), \"float32\")):\n"
	"    for i, j, k in T.grid(128, 128, 128):\n"
	"        with T.block(\"C\"):\n"
	"            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
	"            with T.init():\n"
	"                C[vi, vj] = T.float32(0)\n"
	"            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char conv2d[] =
	"@T.prim_func\n"
	"def conv2d(I: T.Buffer((16, 34, 34), \"float32\"), W: T.Buffer((16, 16, 3, 3), \"float32\"),"
	" O: T.Buffer((16, 32, 32), \"float32\")):\n"
	"    for c, h, w in T.grid(16, 32, 32):\n"
	"        O[c, h, w] = 0.0\n"
	"        for rc, kh, kw in T.grid(16, 3, 3):\n"
	"            O[c, h, w] = O[c, h, w] + I[rc, h + kh, w + kw] * W[c, rc, kh, kw]\n";

/* conv2d as TensorIR writes it: one block, six loops, the init inside */
static const char conv2d_blocks[] =
	"@T.prim_func\n"
	"def conv2d(I: T.Buffer((16, 34, 34), \"float32\"), W: T.Buffer((16, 16, 3, 3), \"float32\"),"
	" O: T.Buffer((16, 32, 32), \"float32\")):\n"
	"    for c, h, w, rc, kh, kw in T.grid(16, 32, 32, 16, 3, 3):\n"
	"        with T.block(\"O\"):\n"
	"            vc, vh, vw, vrc, vkh, vkw = T.axis.remap(\"SSSRRR\", [c, h, w, rc, kh, kw])\n"
	"            with T.init():\n"
	"                O[vc, vh, vw] = T.float32(0)\n"
	"            O[vc, vh, vw] = O[vc, vh, vw] + I[vrc, vh + vkh, vw + vkw] * W[vc, vrc, vkh, vkw]\n";

/* short loops: a 4-wide inner loop under a long one */
static const char short_loops[] =
	"@T.prim_func\n"
	"def scale(A: T.Buffer((1048576, 4), \"float32\"), B: T.Buffer((1048576, 4), \"float32\")):\n"
	"    for i in T.serial(1048576):\n"
	"        for j in T.serial(4):\n"
	"            B[i, j] = A[i, j] * 2.0 + 1.0\n";

static const char elementwise[] =
	"@T.prim_func\n"
	"def elementwise(A: T.Buffer((4194302,), \"float32\"), B: T.Buffer((4194302,), \"float32\")):\n"
	"    for i in T.serial(4194302):\n"
	"        B[i] = T.exp(A[i]) * 2.0 + 1.0\n";

static const char rowsum[] =
	"@T.prim_func\n"
	"def rowsum(A: T.Buffer((2048, 1022), \"int32\"), B: T.Buffer((2048,), \"int32\")):\n"
	"    for i in T.serial(2048):\n"
	"        B[i] = 0\n"
	"        for j in T.serial(1022):\n"
	"            B[i] = B[i] + A[i, j]\n";

static FILE *results;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
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

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* the machine may be shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void cpu_name(char *buf, size_t n)
{
	snprintf(buf, n, "unknown CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			const char *p = strchr(line, ':');
			if (p) {
				snprintf(buf, n, "%s", p + 2);
				buf[strcspn(buf, "\n")] = 0;
			}
			break;
		}
	if (f)
		fclose(f);
}

/* One run of f on a copy of input by engine; seconds, result in *r and
 * the final state in *final. */
static double run_once(const Func *f, const State *input, InterpEngine engine, Arena *a,
		       InterpResult *r, State **final)
{
	State *st = state_clone(a, input);
	double t0 = now();
	interp_run_engine(f, st, 1ull << 40, engine, r);
	double t = now() - t0;
	*final = st;
	return t;
}

static bool bench_one(const char *name, const char *text, const char *path)
{
	const char *only = getenv("VS_INTERP_BENCH_ONLY"); /* a substring of the names */
	if (only && !strstr(name, only))
		return true;
	Arena a;
	arena_init(&a);
	DiagList d;
	diag_init(&d, &a);
	Source *src = path ? source_read_file(&a, path, &d) : source_from_string(&a, name, text);
	Module *m = src ? parse_module(&a, src, &d) : NULL;
	State *in = m && m->nfuncs ? interp_gen_input(&a, m->funcs[0], 1, &d) : NULL;
	if (!in) {
		char *msg = diag_render(&d);
		out("%-26s cannot run: %s\n", name, msg);
		free(msg);
		arena_free(&a);
		return false;
	}
	const Func *f = m->funcs[0];
	InterpResult rt, rc;
	State *st, *sc;
	/* VS_INTERP_BENCH=compiled skips the tree walk (for profiling) */
	const char *engines = getenv("VS_INTERP_BENCH");
	bool tree = !engines || strcmp(engines, "compiled") != 0;
	double tt = tree ? run_once(f, in, INTERP_TREE, &a, &rt, &st) : 1;
	double tc = run_once(f, in, INTERP_COMPILED, &a, &rc, &sc);
	char *diff = NULL;
	if (!tree) {
		rt = rc;
		st = sc;
	}
	bool same = rt.status == rc.status && rt.steps == rc.steps &&
		    memcmp(&rt.counts, &rc.counts, sizeof rt.counts) == 0 &&
		    state_equal(st, sc, true, 0, &diff);
	out("%-26s %12llu %10.3f %10.3f %9.1f %9.1f %7.1fx %s%s\n", name,
	    (unsigned long long)rc.steps, tt, tc, (double)rt.steps / tt * 1e-6,
	    (double)rc.steps / tc * 1e-6, tt / tc,
	    rc.status == RUN_OK ? "" : rc.message ? rc.message : "stopped",
	    same ? "" : " DIFFERENT RESULTS");
	free(diff);
	arena_free(&a);
	return same;
}

/* The 1-minute load average (the machine may be shared), or -1. */
static double load_average(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f && fscanf(f, "%lf", &l) != 1)
		l = -1;
	if (f)
		fclose(f);
	return l;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		results = fopen(argv[1], "a");
	char cpu[256];
	cpu_name(cpu, sizeof cpu);
	out("\nreference interpreter, one thread on %s (%ld cores, load average %.2f): CPU time\n"
	    "of one run, tree walk (the reference text) vs compiled form (what interp_run uses),\n"
	    "side by side on one input, millions of steps/s, speedup = tree s / compiled s\n", cpu,
	    sysconf(_SC_NPROCESSORS_ONLN), load_average());
	out("%-26s %12s %10s %10s %9s %9s %8s\n", "kernel", "steps", "tree s", "compiled s",
	    "tree M/s", "comp M/s", "speedup");
	bool ok = true;
	ok &= bench_one("matmul 256^3 loops", matmul_loops, NULL);
	ok &= bench_one("matmul 256^3 tiled", matmul_tiled, NULL);
	ok &= bench_one("matmul 128^3 blocks", matmul_blocks, NULL);
	ok &= bench_one("conv2d 16x32x32, 16x3x3", conv2d, NULL);
	ok &= bench_one("conv2d as one block", conv2d_blocks, NULL);
	ok &= bench_one("short loops 1M x 4", short_loops, NULL);
	ok &= bench_one("elementwise exp 4M", elementwise, NULL);
	ok &= bench_one("elementwise 2*A 4M (bench)", NULL, "bench/elementwise.tir");
	ok &= bench_one("rowsum int32 2048x1022", rowsum, NULL);
	ok &= bench_one("conv1d (layouts, facts)", NULL, "bench/conv1d_branchy.tir");
	out("load average at the end %.2f\n", load_average());
	if (results)
		fclose(results);
	return ok ? 0 : 1;
}
