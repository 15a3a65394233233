/* kernel/print.h — the printer: writes IR back as kernel-language text
 * that parse_module() reads to a structurally equal module. Output is
 * deterministic. Strings returned are malloc'ed (caller frees). */
#ifndef VS_KERNEL_PRINT_H
#define VS_KERNEL_PRINT_H

#include "kernel/ir.h"

char *print_module(const Module *m);
char *print_func(const Func *f);
char *print_stmt(const Stmt *s, int indent); /* indent in levels of 4 */
char *print_expr(const Expr *e);
void print_expr_to(StrBuf *b, const Expr *e);
void print_stmt_to(StrBuf *b, const Stmt *s, int indent);

#endif
