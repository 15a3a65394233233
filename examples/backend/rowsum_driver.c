/* examples/backend/rowsum_driver.c — a C program that calls a kernel
 * compiled by vsched into an object file:
 *
 *   vsched build rowsum.tir --schedule rowsum.sched --emit obj -o rowsum.o
 *   vsched build rowsum.tir --schedule rowsum.sched --emit header -o rowsum.h
 *   cc -I. rowsum_driver.c rowsum.o build/libvsched_rt.a -lpthread -o rowsum
 *
 * It fills A, runs the kernel, checks every row sum against plain C, and
 * prints "rowsum: ok". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rowsum.h"

int main(void)
{
	enum { ROWS = 256, COLS = 1000 };
	int32_t *A = malloc(sizeof *A * ROWS * COLS), *B = malloc(sizeof *B * ROWS);
	if (!A || !B)
		return 2;
	for (int i = 0; i < ROWS * COLS; i++)
		A[i] = (i * 7919) % 201 - 100;
	if (rowsum(A, B) != 0) {
		fprintf(stderr, "rowsum: the kernel failed\n");
		return 1;
	}
	for (int i = 0; i < ROWS; i++) {
		int32_t want = 0;
		for (int j = 0; j < COLS; j++)
			want += A[i * COLS + j];
		if (B[i] != want) {
			fprintf(stderr, "rowsum: B[%d] = %d, want %d\n", i, B[i], want);
			return 1;
		}
	}
	printf("rowsum: ok (%d rows, B[0] = %d)\n", ROWS, B[0]);
	free(A);
	free(B);
	return 0;
}
