/* backend/header.c — the C header of a compiled program: one declaration
 * per kernel, parameters in order (buffers as restrict pointers to their
 * flat physical storage, scalars by value), and for every buffer its
 * logical shape, its physical shape with the layout transform and padding
 * that produced it, and the flattened shape the code indexes. */
#include "backend/backend.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/print.h"

static const char *c_type(DType t)
{
	switch (t) {
	case DT_BOOL: return "uint8_t"; /* 0 or 1 */
	case DT_INT8: return "int8_t";
	case DT_INT16: return "int16_t";
	case DT_INT32: return "int32_t";
	case DT_INT64: return "int64_t";
	case DT_UINT8: return "uint8_t";
	case DT_FLOAT16: return "uint16_t"; /* the binary16 bits (no portable C half type) */
	case DT_FLOAT32: return "float";
	case DT_FLOAT64: return "double";
	case DT_HANDLE: case DT_VOID: case DT_COUNT: break;
	}
	return "void";
}

static void put_shape(StrBuf *b, const Buffer *buf)
{
	sb_puts(b, "(");
	for (int k = 0; k < buf->ndim; k++) {
		char *e = print_expr(buf->shape[k]);
		sb_printf(b, "%s%s", k ? ", " : "", e);
		free(e);
	}
	sb_puts(b, buf->ndim == 1 ? ",)" : ")");
}

static void put_layout(StrBuf *b, const Layout *lay, int ndim)
{
	sb_puts(b, "lambda ");
	for (int i = 0; i < lay->nvars; i++)
		sb_printf(b, "%s%s", i ? ", " : "", lay->vars[i]->name);
	sb_puts(b, ": [");
	for (int k = 0; lay->map && k < ndim; k++) {
		char *e = print_expr(lay->map[k]);
		sb_printf(b, "%s%s", k ? ", " : "", e);
		free(e);
	}
	sb_puts(b, "]");
	switch (lay->pad_kind) {
	case PAD_NONE_GIVEN: sb_puts(b, ", no pad_value (padding never accessed)"); break;
	case PAD_UNDEF: sb_puts(b, ", pad_value=T.undef()"); break;
	case PAD_VALUE: {
		char *e = lay->pad_value ? print_expr(lay->pad_value) : strdup("?");
		sb_printf(b, ", pad_value=%s", e);
		free(e);
		break;
	}
	}
}

/* The buffer the user wrote, before any transform_layout. */
static const Buffer *logical_of(const Buffer *b)
{
	while (b->layout && b->layout->logical)
		b = b->layout->logical;
	return b;
}

static void put_buffer_doc(StrBuf *b, const FlatBuffer *fb)
{
	const Buffer *phys = fb->physical;
	sb_printf(b, " *   %s: %s, logical shape ", phys->name, dtype_name(phys->dtype));
	put_shape(b, logical_of(phys));
	if (phys->layout) {
		sb_puts(b, ",\n *       physical shape ");
		put_shape(b, phys);
		sb_puts(b, " by ");
		put_layout(b, phys->layout, phys->ndim);
	}
	if (phys->naxis_separators) {
		sb_puts(b, ",\n *       axis_separators [");
		for (int i = 0; i < phys->naxis_separators; i++)
			sb_printf(b, "%s%d", i ? ", " : "", phys->axis_separators[i]);
		sb_puts(b, "]");
	}
	sb_puts(b, ",\n *       stored flat as ");
	put_shape(b, fb->flat);
	sb_puts(b, " row-major, index ");
	for (int g = 0; g < fb->ngroups; g++)
		sb_printf(b, "%s%s", g ? " x " : "", dtype_name(fb->index_dtype[g]));
	sb_puts(b, "\n");
}

static const FlatBuffer *flat_of(const LoweredFunc *lf, const Buffer *flat)
{
	for (int i = 0; i < lf->nbufs; i++)
		if (lf->bufs[i].flat == flat)
			return &lf->bufs[i];
	return NULL;
}

/* The facts the kernel checks at entry (cg_stmt.c's check_entry_facts:
 * top-level T.assume over scalar parameters), one line each. */
static void put_requires(StrBuf *b, const Func *src, const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			put_requires(b, src, s->u.seq.items[i]);
		return;
	case ST_ASSUME:
		if (!an_scalar_only(src, s->u.expr))
			return;
		sb_puts(b, " *   requires: ");
		print_expr_to(b, s->u.expr);
		sb_puts(b, an_expr_may_fault(s->u.expr, true) ? " (not checked: it may fault)\n" : "\n");
		return;
	case ST_ALLOC:
		if (s->u.alloc.body)
			put_requires(b, src, s->u.alloc.body);
		return;
	case ST_BLOCK: put_requires(b, src, s->u.block.body); return;
	case ST_LET: put_requires(b, src, s->u.let.body); return;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_PASS: case ST_COUNT: return;
	}
}

static void put_kernel(StrBuf *b, const LoweredFunc *lf)
{
	const Func *f = lf->func;
	char sym[256];
	backend_symbol(f->name, sym, sizeof sym);
	sb_printf(b, "/* %s\n", f->name);
	if (strcmp(sym, f->name) != 0)
		sb_printf(b, " *   emitted as %s: C reserves the name %s\n", sym, f->name);
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR) {
			sb_printf(b, " *   %s: %s scalar\n", p->var->name, dtype_name(p->var->dtype));
			continue;
		}
		const FlatBuffer *fb = flat_of(lf, p->buf);
		if (fb)
			put_buffer_doc(b, fb);
	}
	if (lf->source)
		put_requires(b, lf->source, lf->source->body);
	sb_puts(b, " * Returns 0; 1 when a local buffer could not be allocated; 2 when a T.assume\n"
		 " * on the scalar parameters does not hold (checked first: nothing is written). */\n");
	sb_printf(b, "int32_t %s(", sym);
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR)
			sb_printf(b, "%s%s %s", i ? ", " : "", c_type(p->var->dtype), p->var->name);
		else
			sb_printf(b, "%s%s *restrict %s", i ? ", " : "", c_type(p->buf->dtype), p->buf->name);
	}
	sb_puts(b, f->nparams ? ");\n\n" : "void);\n\n");
}

char *backend_header_text(const Program *p, const char *guard_name)
{
	StrBuf b = {0}, g = {0};
	const LoweredFunc *first = backend_lowered(p, 0);
	const char *base = guard_name ? guard_name : first ? first->func->name : "kernels";
	sb_puts(&g, "VSCHED_");
	for (const char *c = base; *c; c++)
		sb_printf(&g, "%c", isalnum((unsigned char)*c) ? toupper((unsigned char)*c) : '_');
	sb_puts(&g, "_H");
	char *guard = sb_take(&g);
	sb_puts(&b, "/* Generated by vsched: kernels compiled from a schedule whose every step was\n"
		    " * proven. Buffers are passed as pointers to their flattened physical storage\n"
		    " * (row-major) and must not overlap. Kernels with parallel loops need the\n"
		    " * vsched runtime at link time (libvsched_rt.a or libvsched.a, and -lpthread). */\n");
	sb_printf(&b, "#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n", guard, guard);
	sb_puts(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	for (int i = 0; i < backend_num_funcs(p); i++)
		put_kernel(&b, backend_lowered(p, i));
	sb_printf(&b, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", guard);
	free(guard);
	return sb_take(&b);
}
