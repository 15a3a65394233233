/* An out-of-tree program against an installed libvsched: built with
 * `pkg-config --cflags --libs vsched` only (the api suite's install test).
 * Prints the library version, and the proven split's IR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched.h>

int main(void)
{
	if (strcmp(vs_version(), VS_VERSION_STRING) != 0) {
		fprintf(stderr, "header %s, library %s\n", VS_VERSION_STRING, vs_version());
		return 1;
	}
	vs_context *ctx = vs_context_new();
	vs_module *m = vs_parse_string(ctx, "k.tir",
				       "@T.prim_func\n"
				       "def k(A: T.Buffer((16,), \"int32\")):\n"
				       "    for i in T.serial(16):\n"
				       "        A[i] = A[i] + 1\n");
	vs_schedule *s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
	if (!s || vs_split(s, "i", 4, "perfect", "io", "ii") != VS_OK) {
		fprintf(stderr, "%s", vs_last_error(ctx));
		return 1;
	}
	char *ir = vs_module_print(vs_schedule_result(s));
	printf("vsched %s\n%s", vs_version(), ir);
	free(ir);
	vs_context_free(ctx);
	return 0;
}
