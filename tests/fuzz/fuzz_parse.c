/* tests/fuzz/fuzz_parse.c — libFuzzer target for the kernel-language front
 * end: any input must parse or fail with diagnostics (never crash), and a
 * module that parses must print, re-parse to a structurally equal module,
 * and print again to the same text. A broken round trip aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ir.h"
#include "kernel/parse.h"
#include "kernel/print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *printed, const DiagList *d)
{
	fprintf(stderr, "fuzz_parse: %s\n--- printed ---\n%s--- end ---\n",
		what, printed);
	if (d) {
		char *r = diag_render(d);
		fprintf(stderr, "%s", r);
		free(r);
	}
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	arena_init(&a);
	/* the language is text: an embedded NUL ends the file */
	char *text = arena_strndup(&a, (const char *)data, size);
	Source *src = source_from_string(&a, "fuzz.tir", text);
	DiagList d;
	diag_init(&d, &a);
	Module *m = parse_module(&a, src, &d);
	char *rendered = diag_render(&d);
	free(rendered);
	if (m) {
		char *printed = print_module(m);
		Source *src2 = source_from_string(&a, "printed.tir", printed);
		DiagList d2;
		diag_init(&d2, &a);
		Module *m2 = parse_module(&a, src2, &d2);
		if (!m2)
			fail("printed module does not parse", printed, &d2);
		if (!ir_module_equal(m, m2))
			fail("re-parsed module is not equal", printed, NULL);
		char *again = print_module(m2);
		if (strcmp(printed, again) != 0)
			fail("printing is not idempotent", again, NULL);
		free(again);
		free(printed);
	}
	arena_free(&a);
	return 0;
}
