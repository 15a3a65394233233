/* bench/naive.c — the benchmark kernels as a C programmer writes them
 * first, on logical (unpadded) arrays; scripts/bench.sh compiles this
 * file with `clang -O3 -march=native`. */
#include <stdint.h>

void naive_rowsum(const int32_t *A, int32_t *B, int rows, int cols)
{
	for (int i = 0; i < rows; i++) {
		int32_t s = 0;
		for (int j = 0; j < cols; j++)
			s += A[i * cols + j];
		B[i] = s;
	}
}

/* B[b] = sum_f F[f] * A[b - f + 2] where 0 <= b - f + 2 < n; B has n + 2 */
void naive_conv1d(const float *A, const float *F, float *B, int n)
{
	for (int b = 0; b < n + 2; b++) {
		float s = 0.0f;
		for (int f = 0; f < 3; f++) {
			int a = b - f + 2;
			if (a >= 0 && a < n)
				s += F[f] * A[a];
		}
		B[b] = s;
	}
}

void naive_elementwise(const float *A, float *B, int n)
{
	for (int i = 0; i < n; i++)
		B[i] = 2.0f * A[i];
}

void naive_matmul(const float *A, const float *B, float *C, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float s = 0.0f;
			for (int k = 0; k < n; k++)
				s += A[i * n + k] * B[k * n + j];
			C[i * n + j] = s;
		}
}

float naive_dot(const float *A, const float *B, int n)
{
	float s = 0.0f;
	for (int k = 0; k < n; k++)
		s += A[k] * B[k];
	return s;
}
