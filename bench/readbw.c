/* bench/readbw.c — the read bandwidth make bench holds the row sum
 * against (issue 14): int32 sums of a buffer that read it once and write
 * nothing, compiled like naive.c (clang -O3 -march=native). The bench
 * takes the fastest of them, so the figure is what this machine's
 * memory (or cache) delivers to a good read loop, not to one kernel. */
#include <stddef.h>
#include <stdint.h>

#include <immintrin.h>

/* the plain loop; clang vectorizes and interleaves it */
int32_t read_sum_c(const int32_t *a, size_t n)
{
	int32_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i];
	return s;
}

#if defined(__AVX512F__)
#define RB_ISA "AVX-512"
typedef __m512i vec;
#define RB_LANES 16
#define RB_ZERO() _mm512_setzero_si512()
#define RB_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define RB_ADD(x, y) _mm512_add_epi32(x, y)
#elif defined(__AVX2__)
#define RB_ISA "AVX2"
typedef __m256i vec;
#define RB_LANES 8
#define RB_ZERO() _mm256_setzero_si256()
#define RB_LOAD(p) _mm256_loadu_si256((const void *)(p))
#define RB_ADD(x, y) _mm256_add_epi32(x, y)
#else
#define RB_ISA "SSE2"
typedef __m128i vec;
#define RB_LANES 4
#define RB_ZERO() _mm_setzero_si128()
#define RB_LOAD(p) _mm_loadu_si128((const void *)(p))
#define RB_ADD(x, y) _mm_add_epi32(x, y)
#endif

const char *read_sum_isa(void) { return RB_ISA; }

static int32_t lanes_sum(vec v)
{
	int32_t t[RB_LANES], s = 0;
	__builtin_memcpy(t, &v, sizeof t);
	for (int k = 0; k < RB_LANES; k++)
		s += t[k];
	return s;
}

/* K independent vector accumulators, the widest vectors the CPU has */
#define READ_SUM(name, K)                                                                          \
	int32_t name(const int32_t *a, size_t n)                                                   \
	{                                                                                          \
		vec s[K];                                                                          \
		for (int k = 0; k < K; k++)                                                        \
			s[k] = RB_ZERO();                                                          \
		size_t i = 0;                                                                      \
		for (; i + K * RB_LANES <= n; i += K * RB_LANES)                                   \
			for (int k = 0; k < K; k++)                                                \
				s[k] = RB_ADD(s[k], RB_LOAD(a + i + k * RB_LANES));               \
		for (int k = 1; k < K; k++)                                                        \
			s[0] = RB_ADD(s[0], s[k]);                                                 \
		int32_t r = lanes_sum(s[0]);                                                       \
		for (; i < n; i++)                                                                 \
			r += a[i];                                                                 \
		return r;                                                                          \
	}
READ_SUM(read_sum_vec4, 4)
READ_SUM(read_sum_vec8, 8)
