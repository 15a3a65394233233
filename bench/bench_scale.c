/* bench/bench_scale.c — the "verification at scale" rows of make bench:
 * single steps on straight-line kernels of n statements, compound steps
 * run as vsched processes of their own (CPU time and peak memory), Exo's
 * schedules ported to vsched, and the proof cache and rejection timings.
 * Split from bench.c (style.md: files past 1,500 lines). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "vsched.h"
#include "bench.h"

/* ---------- verification at scale ---------- */

/* Steps that ask for the facts at every statement (simplify, remove_no_op)
 * on straight-line kernels of n stores and on n small loops: the time and
 * the peak memory growth should stay near linear in n. */
/* n stores B[k, 0] = A[k, 0] + k % 7 (loops: each in its own loop over
 * the row; noops: each followed by B[k, 0] = B[k, 0], which is removed) */
static char *scale_kernel(int n, bool loops, bool noops)
{
	size_t cap = (size_t)n * 128 + 256, len = 0;
	char *t = malloc(cap);
	if (!t)
		die("memory");
	len += (size_t)snprintf(t + len, cap - len,
				"@T.prim_func\ndef big(A: T.Buffer[(%d, 8), \"int32\"], B: T.Buffer[(%d, 8), \"int32\"]):\n",
				n, n);
	for (int k = 0; k < n; k++) {
		len += (size_t)(loops ? snprintf(t + len, cap - len,
						  "    for i in T.serial(8):\n        B[%d, i] = A[%d, i] + %d\n", k, k, k % 7)
				      : snprintf(t + len, cap - len, "    B[%d, 0] = A[%d, 0] + %d\n", k, k, k % 7));
		if (noops)
			len += (size_t)snprintf(t + len, cap - len, "    B[%d, 0] = B[%d, 0]\n", k, k);
	}
	return t;
}

void bench_verify_scale(void)
{
	out("\nverification at scale (seconds of the step; every obligation proven)\n");
	out("%-34s %8s %8s %8s\n", "kernel", "n=250", "n=1000", "n=4000");
	const char *steps[] = {"sch.simplify()", "sch.remove_no_op()"};
	for (int loops = 0; loops < 2; loops++)
		for (int k = 0; k < 2; k++) {
			char name[64];
			snprintf(name, sizeof name, "%s, %s", loops ? "n loops" : "n stores", steps[k]);
			out("%-34s", name);
			for (int n = 250; n <= 4000; n *= 4) {
				char *text = scale_kernel(n, loops, false);
				vs_module *m = vs_parse_string(ctx, "big.tir", text);
				free(text);
				vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
				if (!s)
					die("big.tir");
				double t0 = now();
				if (vs_run_script_string(s, "scale.sched", steps[k]) != VS_OK)
					die(steps[k]);
				out(" %8.2f", now() - t0);
				vs_schedule_free(s);
			}
			out("\n");
		}
}

/* ---------- verification at scale: linear compound steps ---------- */

/* `bench --rusage PROG ARGS...`: run PROG in a child and print its CPU
 * seconds (user + system, all its threads) and peak resident KB. The
 * measuring process is a fresh image, so the child forked from it starts
 * small: Linux carries a parent's peak into its child's maxrss at exec. */
int rusage_main(char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("%f %ld\n",
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6,
	       ru.ru_maxrss);
	return 0;
}

/* One `vsched run` of a generated kernel and schedule, measured by
 * rusage_main in a child of its own. */
static bool run_child(const char *kernel_text, const char *sched_text, double *cpu, double *mb)
{
	char kpath[] = "/tmp/vsbench-kXXXXXX.tir", spath[] = "/tmp/vsbench-sXXXXXX.sched";
	int kfd = mkstemps(kpath, 4), sfd = mkstemps(spath, 6);
	if (kfd < 0 || sfd < 0)
		die("mkstemps");
	FILE *kf = fdopen(kfd, "w"), *sf = fdopen(sfd, "w");
	if (!kf || !sf)
		die("fdopen");
	fputs(kernel_text, kf);
	fputs(sched_text, sf);
	fclose(kf);
	fclose(sf);
	const char *bin = getenv("VS_BIN");
	if (!bin)
		bin = access("vsched", X_OK) == 0 ? "vsched" : "build/vsched";
	char cmd[512];
	snprintf(cmd, sizeof cmd, "/proc/%d/exe --rusage %s run %s --schedule %s -o /dev/null",
		 (int)getpid(), bin, kpath, spath);
	FILE *p = popen(cmd, "r");
	long kb = 0;
	bool ok = p && fscanf(p, "%lf %ld", cpu, &kb) == 2;
	if (p)
		ok = pclose(p) == 0 && ok;
	unlink(kpath);
	unlink(spath);
	*mb = (double)kb / 1024.0;
	return ok;
}

/* TVM v0.21 TestHoistMultiIfElseDifferentBranches: 4 x 4 x 4, three
 * levels of if */
static const char hoist_three_deep[] =
	"@T.prim_func\n"
	"def before(A: T.Buffer((4, 4), \"float32\")):\n"
	"    for i in T.serial(4):\n"
	"        for j in T.serial(4):\n"
	"            for k in T.serial(4):\n"
	"                if j < 3:\n"
	"                    if i < 2:\n"
	"                        A[i, j] = 0.0\n"
	"                    else:\n"
	"                        A[i, j] = 1.0\n"
	"                else:\n"
	"                    if i < 1:\n"
	"                        A[i, j] = 2.0\n"
	"                    else:\n"
	"                        A[i, j] = 3.0\n";

void bench_linear_steps(void)
{
	out("\nverification at scale: compound steps (a vsched run each: CPU s incl. solver threads, peak MB of the process)\n");
	struct {
		const char *name, *sched;
		int n;
		bool loops, noops;
		const char *target;
	} rows[] = {
		{"remove_no_op 4000 stores", "sch.remove_no_op()\n", 4000, false, false, "target < 2 s, < 200 MB"},
		{"simplify 4000 stores", "sch.simplify()\n", 4000, false, false, "target < 2 s, < 200 MB"},
		{"remove_no_op 4000 small loops", "sch.remove_no_op()\n", 4000, true, false, "target < 2 s, < 200 MB"},
		{"simplify 4000 small loops", "sch.simplify()\n", 4000, true, false, "target < 2 s, < 200 MB"},
		{"remove_no_op 4000 stores + 4000 no-ops", "sch.remove_no_op()\n", 4000, false, true,
		 "no target: 4000 removals, each a commit"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *k = scale_kernel(rows[i].n, rows[i].loops, rows[i].noops);
		double cpu, mb;
		if (!run_child(k, rows[i].sched, &cpu, &mb))
			die(rows[i].name);
		free(k);
		out("verification at scale: %s: %.2f s, %.0f MB (%s)\n", rows[i].name, cpu, mb, rows[i].target);
	}
	double cpu, mb;
	if (!run_child(hoist_three_deep, "sch.hoist_expression()\n", &cpu, &mb))
		die("hoist_expression");
	out("verification at scale: hoist_expression() on TVM's 3-deep if nest: %.2f s, %.0f MB (target < 1 s)\n",
	    cpu, mb);
}

/* ---------- verification at scale: Exo's schedules ---------- */

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* every thread (Z3's too) */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The seconds of each obligation of every step of s, appended to t (cap
 * entries); returns the new count. */
static int obligation_seconds(const vs_schedule *s, double *t, int n, int cap)
{
	for (int i = 0; i < vs_num_reports(s); i++) {
		const vs_report *r = vs_report_at(s, i);
		for (int j = 0; j < vs_report_num_obligations(r) && n < cap; j++)
			vs_report_obligation(r, j, NULL, NULL, NULL, &t[n++]);
	}
	return n;
}

static double quantile(double *t, int n, double q)
{
	if (n == 0)
		return 0;
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	int k = (int)(q * (n - 1) + 0.5);
	return t[k];
}

/* Exo's AVX-512 SGEMM and x86 conv schedules, ported step by step
 * (the .sched files in bench/scale/ say how): the CPU time of running each schedule
 * through the library (parsing and building excluded), in a fresh
 * schedule, against the targets of issue 11. Every step must commit. */
void bench_exo_ports(void)
{
	static const struct {
		const char *name, *tir, *sched;
	} ports[] = {
		{"Exo SGEMM (AVX-512)", "bench/scale/sgemm.tir", "bench/scale/sgemm.sched"},
		{"Exo conv (x86)", "bench/scale/conv.tir", "bench/scale/conv.sched"},
	};
	enum { MAX_OBS = 4096 };
	static double all[MAX_OBS];
	int nall = 0;
	out("\nverification at scale: Exo's schedules ported to vsched (bench/scale/), CPU time of\n"
	    "running the schedule through the library in a fresh schedule (all threads; parse and\n"
	    "build excluded)\n");
	out("%-50s | %-68s | %s\n", "case", "measured", "target");
	for (size_t k = 0; k < sizeof ports / sizeof ports[0]; k++) {
		vs_module *m = vs_parse_file(ctx, ports[k].tir);
		vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
		if (!s)
			die(ports[k].tir);
		double w0 = now(), c0 = cpu_now();
		if (vs_run_script_file(s, ports[k].sched) != VS_OK)
			die(ports[k].sched);
		double cpu = cpu_now() - c0, wall = now() - w0;
		int steps = vs_num_reports(s);
		for (int i = 0; i < steps; i++)
			if (vs_report_status(vs_report_at(s, i)) != VS_OK)
				die(vs_report_step(vs_report_at(s, i)));
		static double mine[MAX_OBS];
		int n = obligation_seconds(s, mine, 0, MAX_OBS);
		memcpy(all + nall, mine, sizeof *mine * (size_t)(n < MAX_OBS - nall ? n : MAX_OBS - nall));
		nall += n < MAX_OBS - nall ? n : MAX_OBS - nall;
		char name[96], measured[128];
		snprintf(name, sizeof name, "%s, %d steps, whole verification", ports[k].name, steps);
		snprintf(measured, sizeof measured,
			 "%.3f s CPU (wall %.3f s; %d obligations, p50 %.2f ms, p99 %.2f ms)", cpu, wall,
			 n, quantile(mine, n, 0.5) * 1e3, quantile(mine, n, 0.99) * 1e3);
		out("%-50s | %-68s | %s\n", name, measured, "< 0.3 s CPU");
		vs_schedule_free(s);
	}
	char measured[96];
	snprintf(measured, sizeof measured, "%.2f ms (p50 %.2f ms, %d obligations)",
		 quantile(all, nall, 0.99) * 1e3, quantile(all, nall, 0.5) * 1e3, nall);
	out("%-50s | %-68s | %s\n", "p99 obligation, both schedules", measured, "<= 10 ms");
}

/* A run of tir + sched in a child process of its own (fork, so the Z3
 * context and every cache start cold, as in a new `vsched run`): its CPU
 * time (user + sys, all threads) and its solved / persistent-cache-hit
 * counts. The child exits 3 if a step was not committed. */
static double child_run(const char *tir, const char *sched, const char *cache_dir, int *solved,
			int *disk_hits)
{
	int fd[2];
	if (pipe(fd) != 0)
		die("pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(fd[0]);
		vs_context *c = vs_context_new();
		vs_module *m = vs_parse_file(c, tir);
		vs_options opt = {0};
		opt.cache_dir = cache_dir;
		vs_schedule *s = m ? vs_schedule_new(c, m, &opt) : NULL;
		if (!s || vs_run_script_file(s, sched) != VS_OK)
			_exit(3);
		int counts[2] = {0, 0};
		vs_schedule_cache_stats(s, &counts[0], NULL, &counts[1], NULL);
		if (write(fd[1], counts, sizeof counts) != (ssize_t)sizeof counts)
			_exit(4);
		_exit(0);
	}
	close(fd[1]);
	int counts[2] = {-1, -1};
	if (read(fd[0], counts, sizeof counts) != (ssize_t)sizeof counts)
		counts[0] = counts[1] = -1;
	close(fd[0]);
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die(sched);
	*solved = counts[0];
	*disk_hits = counts[1];
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

/* The persistent proof cache: the SGEMM port run twice in new processes
 * on one cache folder; and rejections whose counterexample runs billions
 * of iterations: the time from the call to its report (replay budget). */
void bench_cache_and_rejections(void)
{
	char dir[] = "/tmp/vsched-bench-cache-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	int solved0, hits0, solved1, hits1;
	double cold = child_run("bench/scale/sgemm.tir", "bench/scale/sgemm.sched", dir, &solved0, &hits0);
	double warm = child_run("bench/scale/sgemm.tir", "bench/scale/sgemm.sched", dir, &solved1, &hits1);
	char measured[160];
	snprintf(measured, sizeof measured,
		 "%.3f s CPU, %d solved, %d from the cache (cold: %.3f s, %d solved)", warm, solved1,
		 hits1, cold, solved0);
	out("%-50s | %-68s | %s\n", "SGEMM port, second process on a warm --cache", measured,
	    "< 0.1 s");
	char cmd[sizeof dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
	static const struct {
		const char *name, *tir, *script;
	} rej[] = {
		{"reject fuse of a 65536 x 32768 nest (overflow)", "tests/data/report/fuse_2_31.tir",
		 "sch.fuse(\"i\", \"j\")"},
		{"reject split(3) of T.serial(n), n unbounded", "tests/data/report/count_n.tir",
		 "sch.split(\"i\", factor=3)"},
	};
	for (size_t k = 0; k < sizeof rej / sizeof rej[0]; k++) {
		vs_module *m = vs_parse_file(ctx, rej[k].tir);
		vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
		if (!s)
			die(rej[k].tir);
		double w0 = now();
		vs_status st = vs_run_script_string(s, "bench.sched", rej[k].script);
		double wall = now() - w0;
		if (st == VS_OK)
			die(rej[k].script);
		snprintf(measured, sizeof measured, "%.3f s wall from the call to the report", wall);
		out("%-50s | %-68s | %s\n", rej[k].name, measured, "within 1 s of the verdict");
		vs_schedule_free(s);
	}
}

