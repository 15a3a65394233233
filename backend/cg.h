/* backend/cg.h — private to the code generator (cg_expr.c, cg_stmt.c,
 * program.c): the LLVM-C state of one module under construction, the
 * environment of variables and buffers, and integer ranges. The ranges
 * are an interval analysis (kernel/analysis/interval.h) over loop bounds
 * and literals: an operation whose result range fits its dtype gets
 * `nsw`, so LLVM can widen and vectorize index arithmetic; everything
 * else wraps exactly like the reference interpreter (two's complement,
 * no flags). A value without a range (floats) has an unbounded one. */
#ifndef VS_BACKEND_CG_H
#define VS_BACKEND_CG_H

#include <llvm-c/Core.h>

#include "backend/backend.h"
#include "kernel/analysis/interval.h"
#include "kernel/ptrmap.h"

typedef struct CgVal {
	LLVMValueRef v;
	Interval r; /* integer and bool values; unbounded otherwise */
} CgVal;

typedef struct CgVar {
	const Var *var;
	LLVMValueRef v;
	Interval r;
} CgVar;

typedef struct CgBuf {
	const Buffer *buf;   /* the flat buffer of the lowered IR */
	LLVMValueRef ptr;    /* element pointer */
	int ngroups;
	LLVMValueRef *ext;   /* i64 extent of each flat axis (axes >= 1 used) */
	bool freeze;         /* loads may read a cell whose T.undef() store was removed */
} CgBuf;

typedef struct Cg {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMValueRef fn;          /* function being generated */
	LLVMBasicBlockRef entry;  /* its allocas; branches to the body at the end */
	FloatMode fm;
	bool contract_fma; /* real mode, asked for: x * y + z may be fused */
	const LoweredFunc *lf;
	const char *cpu, *features, *vector_width;
	CgVar *vars;
	int nvars, capvars;
	CgBuf *bufs;
	int nbufs, capbufs;
	int nparallel;            /* outlined bodies made for the function */
	unsigned md_loop;         /* kind id of !llvm.loop */
	BackendStats *stats;
	DiagList *d;
	bool failed;
	PtrMap access_map; /* node -> const FlatAccess * */
	/* a vectorized reduction kept in a vector accumulator across the
	 * serial loops around it (cg_stmt.c, register_reduction): while its
	 * nest is generated, the update's load and store address lane
	 * (lane - lane_lo) of acc instead of the reduced cell */
	struct {
		const void *load, *store;
		LLVMValueRef acc; /* W elements on the stack */
		const Var *lane;  /* the vectorized loop's variable */
		int64_t lane_lo;
		const void *vloop; /* the vectorized loop */
		int64_t lanes, elem_bytes;
	} red;
} Cg;

/* ---- types ---- */
LLVMTypeRef cg_type(Cg *cg, DType t);     /* a value: bool is i1 */
LLVMTypeRef cg_mem_type(Cg *cg, DType t); /* in memory: bool is i8 */

/* ---- environment ---- */
void cg_bind(Cg *cg, const Var *v, LLVMValueRef x, Interval r);
void cg_unbind(Cg *cg, int mark); /* pop to nvars == mark */
CgVar *cg_lookup(Cg *cg, const Var *v);
CgBuf *cg_push_buffer(Cg *cg, const Buffer *b, LLVMValueRef ptr);
CgBuf *cg_find_buffer(Cg *cg, const Buffer *b);
bool cg_fail(Cg *cg, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- expressions (cg_expr.c) ---- */
CgVal cg_expr(Cg *cg, const Expr *e);
/* e converted to dtype t (interpreter `convert` semantics). */
CgVal cg_expr_as(Cg *cg, const Expr *e, DType t);
CgVal cg_convert(Cg *cg, CgVal x, DType from, DType to);
LLVMValueRef cg_truth(Cg *cg, CgVal x, DType t);
/* The element pointer of an access to a flat buffer; node is the access
 * (EX_LOAD or ST_STORE) of the lowered IR, for its physical indices. */
LLVMValueRef cg_address(Cg *cg, const Buffer *b, int nidx, Expr *const *idx, Span sp,
			const void *node);
/* A call of the LLVM intrinsic `name` overloaded on one type. */
LLVMValueRef cg_call_intrinsic(Cg *cg, const char *name, LLVMTypeRef overload,
			       LLVMValueRef *args, unsigned nargs);

/* Index the lowered function's accesses by node (cg->access_map). */
void cg_map_accesses(Cg *cg, const LoweredFunc *lf);
/* Whether evaluating e can have no undefined behaviour whatever its
 * inputs (no loads, no division by a possibly zero value), so that it may
 * be evaluated where the interpreter would not (select, and/or). */
bool cg_speculatable(const Expr *e);
LLVMValueRef cg_int64(Cg *cg, int64_t v);

/* ---- statements and functions (cg_stmt.c) ---- */
/* Define the kernel of lf in cg->mod: `i32 name(params...)`, returning 0,
 * VS_KERNEL_ALLOC_FAILED when a local buffer could not be allocated, or
 * VS_KERNEL_ASSUME_FAILED when a fact on the scalar parameters does not
 * hold (checked at entry). */
LLVMValueRef cg_define_kernel(Cg *cg, const LoweredFunc *lf);
/* `i32 __vsched_call_<name>(i8** args)`: args[i] is the data pointer of
 * buffer parameter i, or a pointer to the value of scalar parameter i. */
LLVMValueRef cg_define_entry(Cg *cg, const LoweredFunc *lf, LLVMValueRef kernel);
/* Attributes every generated function carries (target CPU, features). */
void cg_function_attributes(Cg *cg, LLVMValueRef fn);

#endif
