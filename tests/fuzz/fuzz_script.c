/* tests/fuzz/fuzz_script.c — libFuzzer target for the schedule-script
 * reader: any input must read or fail with diagnostics (never crash); every
 * argument's text range must lie inside the source, and lambda and
 * expression arguments are parsed (and printed) in a fixed kernel's scope. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ir.h"
#include "kernel/parse.h"
#include "kernel/print.h"
#include "rewrites/schedule/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char kernel_text[] =
	"@T.prim_func\n"
	"def k(A: T.Buffer[(16,), \"int32\"], B: T.Buffer[(4, 4), \"float32\"],"
	" n: T.int32):\n"
	"    for i in T.serial(16):\n"
	"        B[i // 4, i % 4] = T.cast(A[i], \"float32\")\n";

static Arena kernel_arena;
static const Func *kernel;

static const Func *scope_func(void)
{
	if (kernel)
		return kernel;
	arena_init(&kernel_arena);
	DiagList d;
	diag_init(&d, &kernel_arena);
	Source *src = source_from_string(&kernel_arena, "k.tir", kernel_text);
	Module *m = parse_module(&kernel_arena, src, &d);
	if (!m) {
		char *r = diag_render(&d);
		fprintf(stderr, "fuzz_script: the scope kernel does not parse:\n%s", r);
		free(r);
		abort();
	}
	kernel = m->funcs[0];
	return kernel;
}

static void check_arg(Arena *a, const Source *src, const ScriptArg *arg)
{
	int len = (int)strlen(src->text);
	if (arg->start < 0 || arg->end > len || arg->start > arg->end) {
		fprintf(stderr, "fuzz_script: argument range [%d, %d) outside "
			"[0, %d)\n", arg->start, arg->end, len);
		abort();
	}
	ParseScope scope = {.func = scope_func(), .nvars = 0, .vars = NULL};
	DiagList d;
	diag_init(&d, a);
	if (arg->kind == ARG_LAMBDA) {
		Lambda *l = parse_lambda_range(a, src, arg->start, arg->end,
					       &scope, &d);
		for (int k = 0; l && k < l->nseps; k++)
			if (l->seps[k] < 0 || l->seps[k] > l->nbody ||
			    (k && l->seps[k] < l->seps[k - 1]))
				abort();
		for (int k = 0; l && k < l->nbody; k++)
			free(print_expr(l->body[k]));
	} else if (arg->kind == ARG_EXPR) {
		Expr *e = parse_expr_range(a, src, arg->start, arg->end, &scope,
					   &d);
		if (e)
			free(print_expr(e));
	}
	free(diag_render(&d));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	arena_init(&a);
	char *text = arena_strndup(&a, (const char *)data, size);
	Source *src = source_from_string(&a, "fuzz.sched", text);
	DiagList d;
	diag_init(&d, &a);
	Script *sc = script_parse(&a, src, &d);
	free(diag_render(&d));
	for (int i = 0; sc && i < sc->ncalls; i++) {
		const ScriptCall *c = &sc->calls[i];
		for (int k = 0; k < c->nargs; k++)
			check_arg(&a, src, &c->args[k]);
	}
	arena_free(&a);
	return 0;
}
