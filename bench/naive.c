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

/* 3 x 3 conv2d, stride 1, padding 1, in NCHW16c (batch 1): I and O are
 * [cb][hw][hw][16], W is [cb][cb][3][3][16 in][16 out]; the padding is
 * the bounds test */
void naive_conv2d(const float *I, const float *W, float *O, int cb, int hw)
{
	for (int ob = 0; ob < cb; ob++)
		for (int h = 0; h < hw; h++)
			for (int w = 0; w < hw; w++)
				for (int oc = 0; oc < 16; oc++) {
					float s = 0.0f;
					for (int ib = 0; ib < cb; ib++)
						for (int kh = 0; kh < 3; kh++)
							for (int kw = 0; kw < 3; kw++) {
								int y = h + kh - 1, x = w + kw - 1;
								if (y < 0 || y >= hw || x < 0 || x >= hw)
									continue;
								for (int ic = 0; ic < 16; ic++)
									s += I[((ib * hw + y) * hw + x) * 16 + ic] *
									     W[(((ob * cb + ib) * 3 + kh) * 3 + kw) * 256 + ic * 16 + oc];
							}
					O[((ob * hw + h) * hw + w) * 16 + oc] = s;
				}
}
