/* A C driver with its own main() calling the kernel TVM named main,
 * through the header vsched emitted for it. */
#include <stdio.h>

#include "main_kernel.h"

int main(void)
{
	int32_t a[16];
	for (int i = 0; i < 16; i++)
		a[i] = i;
	if (main_kernel(a) != 0)
		return 1;
	for (int i = 0; i < 16; i++)
		if (a[i] != 2 * i + 1)
			return 1;
	puts("main_kernel: ok");
	return 0;
}
