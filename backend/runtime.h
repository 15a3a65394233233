/* backend/runtime.h — the run-time support that compiled kernels call:
 * a small fixed pool of pthreads for `parallel` loops. It has no LLVM or
 * Z3 dependency, so an emitted object links against it alone
 * (build/libvsched_rt.a, or libvsched.a which contains it). */
#ifndef VS_BACKEND_RUNTIME_H
#define VS_BACKEND_RUNTIME_H

#include <stdint.h>

/* The body of a parallel loop, outlined by the code generator: runs the
 * iterations [begin, end) and returns 0, or nonzero when a local buffer
 * could not be allocated. */
typedef int32_t (*vs_rt_body)(void *ctx, int64_t begin, int64_t end);

/* Run body over [0, n) split into contiguous chunks, one per thread, and
 * wait for all of them. Nested calls (from inside a body) and calls while
 * another thread uses the pool run serially on the calling thread.
 * Returns the first nonzero status of a chunk, or 0. */
int32_t vs_rt_parallel_for(vs_rt_body body, void *ctx, int64_t n);

/* Threads used by parallel loops: VS_NUM_THREADS, else the online CPUs
 * (at most 64). Setting it before the first parallel loop takes effect;
 * later it only lowers the count (the pool never grows). */
int vs_rt_num_threads(void);
void vs_rt_set_num_threads(int n);

#endif
