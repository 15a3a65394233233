/* bench/bench.h — what bench.c and bench_scale.c share: the timer, the
 * output (stdout and build/bench-results.txt), the library context, and
 * the scale rows bench.c's main runs. */
#ifndef VS_BENCH_H
#define VS_BENCH_H

#include "vsched.h"

extern vs_context *ctx;
double now(void);
int cmp_double(const void *x, const void *y);
void die(const char *what) __attribute__((noreturn));
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int rusage_main(char **argv);
void bench_verify_scale(void);
void bench_linear_steps(void);
void bench_exo_ports(void);
void bench_cache_and_rejections(void);

#endif
