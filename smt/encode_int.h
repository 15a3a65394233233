/* smt/encode_int.h — private to the encoder (smt/encode.c, the terms and
 * expressions; smt/encode_obligation.c, the propositions and the query):
 * the encoder state and the term helpers both use. Shared helpers carry the
 * enc_ prefix. What the rest of smt/ sees is smt/encode.h. */
#ifndef VS_SMT_ENCODE_INT_H
#define VS_SMT_ENCODE_INT_H

#include "smt/encode.h"
#include "smt/range.h"
#include "kernel/ptrmap.h"

typedef struct Binding {
	const Var *var;
	Z3_ast value;
} Binding;

struct EncodeState {
	size_t nowned, capowned;
	Z3_ast *owned; /* every Z3 object made here, inc_ref'ed once */
	PtrMap vars;   /* Var* -> sym index */
	PtrMap bufs;   /* Buffer* -> sym index */
	PtrMap memo;   /* Expr* -> Z3_ast, outside lets and undef-free */
	PtrMap loadset; /* load application -> 1 */
	int nenv, capenv;
	Binding *env; /* let bindings, innermost last */
	bool saw_undef;
	bool same_value_goal; /* encoding the goal of a same_value obligation */
	RangeInfo *ranges; /* intervals: where a wrap-around can be left out */
	RangeInfo *stated; /* the same from the bounds the query states */
	bool uses_learnt;  /* a left-out wrap needs more than `stated` */
	int capsyms, caploads;
	int fsym[MF_COUNT][DT_COUNT]; /* SYM_FUNC index + 1, 0 if none yet */
	int shsym[2][DT_COUNT]; /* the out-of-range shift functions, the same */
	int napps, capapps;
	struct { Z3_ast app; DType t; } *int_apps; /* integer calls: a range fact each */
	Z3_sort s_bool, s_int, s_real, s_f16, s_f32, s_f64;
	Z3_ast rne;
};

typedef enum { CL_BOOL, CL_INT, CL_FLOAT, CL_NONE } ValueClass;

typedef Z3_ast (*Z3Binary)(Z3_context, Z3_ast, Z3_ast);
typedef Z3_ast (*Z3Nary)(Z3_context, unsigned, Z3_ast const[]);

/* The value class of a dtype: what sort its values get. */
ValueClass enc_class_of(DType t);
/* Set e->error (the first one wins) and return NULL. */
void *enc_fail(SmtEncoding *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Make the sorts and the rounding mode the state holds. */
bool enc_make_sorts(SmtEncoding *e);
/* The symbol index of variable v, declared on first use; -1 on failure. */
int enc_var_sym(SmtEncoding *e, Var *v);

/* Owned terms; every one returns NULL (with e->error set) on failure and
 * passes a NULL operand through. */
Z3_ast enc_mk_int(SmtEncoding *e, int64_t v);
Z3_ast enc_mk_not(SmtEncoding *e, Z3_ast a);
Z3_ast enc_mk_ite(SmtEncoding *e, Z3_ast c, Z3_ast a, Z3_ast b);
Z3_ast enc_mk2(SmtEncoding *e, Z3Binary f, Z3_ast a, Z3_ast b);
Z3_ast enc_mkn(SmtEncoding *e, Z3Nary f, Z3_ast a, Z3_ast b);
/* x wrapped into integer dtype t, as kernel/interp.c's wrap_int. */
Z3_ast enc_wrap(SmtEncoding *e, Z3_ast x, DType t);

/* Encode x as a value of dtype `to`. */
Z3_ast enc_as(SmtEncoding *e, const Expr *x, DType to);
/* The dtype a comparison of x with y meets at. */
DType enc_operand_dtype(const Expr *x, const Expr *y);
/* Bind a let's variable (term and ranges) for its body; unbind after. */
bool enc_bind_let(SmtEncoding *e, const Expr *x);
void enc_unbind_let(SmtEncoding *e);

#endif
