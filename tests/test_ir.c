/* tests/test_ir.c — arena, diagnostics rendering, constructors,
 * substitution with sharing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ir.h"

static Arena arena;
static void setup(void) { arena_init(&arena); }
static void teardown(void) { arena_free(&arena); }

START_TEST(arena_allocations_are_zeroed_and_aligned)
{
	for (int i = 1; i < 5000; i += 37) {
		unsigned char *p = arena_alloc(&arena, (size_t)i);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		for (int k = 0; k < i; k++)
			ck_assert_uint_eq(p[k], 0);
		memset(p, 0xab, (size_t)i);
	}
	char *big = arena_alloc(&arena, 1 << 20);
	ck_assert_ptr_nonnull(big);
	ck_assert_str_eq(arena_printf(&arena, "%s-%d", "x", 42), "x-42");
}
END_TEST

START_TEST(diag_render_quotes_line_with_caret)
{
	Source src = {"k.tir", "line one\n  bad here\nthree\n"};
	DiagList d;
	diag_init(&d, &arena);
	Span sp = {&src, 2, 3, 3};
	diag_add(&d, DIAG_ERROR, sp, "expected %s", "expression");
	char *out = diag_render(&d);
	ck_assert_str_eq(out, "k.tir:2:3: error: expected expression\n"
			      "      bad here\n"
			      "      ^~~\n");
	ck_assert_int_eq(d.nerrors, 1);
	free(out);
}
END_TEST

START_TEST(subst_shares_unchanged_nodes)
{
	Var *i = ir_var(&arena, "i", DT_INT32, (Span){0});
	Var *j = ir_var(&arena, "j", DT_INT32, (Span){0});
	Expr *ei = ir_varref(&arena, i, (Span){0});
	Expr *ej = ir_varref(&arena, j, (Span){0});
	Expr *sum = ir_add(&arena, ei, ir_int32(&arena, 1));
	Expr *prod = ir_mul(&arena, ej, ir_int32(&arena, 2));
	Expr *e = ir_add(&arena, sum, prod);
	Expr *to = ir_int32(&arena, 7);
	Expr *r = ir_subst_expr(&arena, e, 1, &i, &to);
	ck_assert_ptr_ne(r, e);
	ck_assert_ptr_eq(r->u.bin.b, prod); /* untouched subtree shared */
	ck_assert_ptr_eq(r->u.bin.a->u.bin.a, to);
	ck_assert(ir_expr_uses_var(e, i));
	ck_assert(!ir_expr_uses_var(r, i));
	ck_assert_ptr_eq(ir_subst_expr(&arena, prod, 1, &i, &to), prod);
}
END_TEST

START_TEST(dtype_names_round_trip)
{
	for (int t = 0; t < DT_COUNT; t++) {
		DType back;
		ck_assert(dtype_from_name(dtype_name((DType)t), &back));
		ck_assert_int_eq(back, t);
	}
	DType x;
	ck_assert(!dtype_from_name("int33", &x));
}
END_TEST

Suite *suite_ir(void)
{
	Suite *s = suite_create("ir");
	TCase *tc = tcase_create("arena");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, arena_allocations_are_zeroed_and_aligned);
	suite_add_tcase(s, tc);
	tc = tcase_create("diagnostics");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, diag_render_quotes_line_with_caret);
	suite_add_tcase(s, tc);
	tc = tcase_create("constructors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, subst_shares_unchanged_nodes);
	tcase_add_test(tc, dtype_names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}
