/* backend/cg_stmt.c — LLVM IR for statements and kernels: counted loops
 * (the loop variable wraps like the interpreter's unless its range is
 * proven to fit), `parallel` loops outlined into a body function run by
 * the pthread pool of runtime.c, `vectorize` as forced loop
 * vectorization metadata, `unroll` by replicating the body (metadata past
 * UNROLL_LIMIT iterations), a vectorized integer reduction's partial
 * results kept in vector registers across the serial loops around it,
 * local buffers on the stack or the heap, the kernel function and its JIT
 * entry wrapper. */
#include "backend/cg.h"
#include "kernel/analysis/expr_query.h"

#include <llvm-c/DebugInfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNROLL_LIMIT 64           /* explicit replication up to this extent */
#define UNROLL_FULL_LIMIT 1024    /* LLVM's full unroll up to this one */
#define UNROLL_PARTIAL 8          /* beyond: unrolled by this count */
#define STACK_BUFFER_BYTES 65536  /* larger or symbolic local buffers: malloc */

static void stmt(Cg *cg, const Stmt *s);

static LLVMBasicBlockRef new_block(Cg *cg, const char *name)
{
	return LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, name);
}

static LLVMTypeRef i8p(Cg *cg) { return LLVMPointerType(LLVMInt8TypeInContext(cg->ctx), 0); }
static LLVMTypeRef i32t(Cg *cg) { return LLVMInt32TypeInContext(cg->ctx); }
static LLVMTypeRef i64t(Cg *cg) { return LLVMInt64TypeInContext(cg->ctx); }

/* An alloca in the function's entry block (so it is not repeated in loops). */
static LLVMValueRef entry_alloca(Cg *cg, LLVMTypeRef ty, LLVMValueRef count, unsigned align)
{
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(cg->ctx);
	LLVMPositionBuilderAtEnd(eb, cg->entry);
	LLVMValueRef a = count ? LLVMBuildArrayAlloca(eb, ty, count, "") : LLVMBuildAlloca(eb, ty, "");
	if (align)
		LLVMSetAlignment(a, align);
	LLVMDisposeBuilder(eb);
	return a;
}

/* Return `status` from the current function when it is nonzero. */
static void return_if_failed(Cg *cg, LLVMValueRef status)
{
	LLVMValueRef bad = LLVMBuildICmp(cg->b, LLVMIntNE, status, LLVMConstNull(i32t(cg)), "");
	LLVMBasicBlockRef fail = new_block(cg, "failed"), ok = new_block(cg, "ok");
	LLVMBuildCondBr(cg->b, bad, fail, ok);
	LLVMPositionBuilderAtEnd(cg->b, fail);
	LLVMBuildRet(cg->b, status);
	LLVMPositionBuilderAtEnd(cg->b, ok);
}

/* ---------- loop metadata ---------- */

static LLVMMetadataRef md_prop(Cg *cg, const char *name, bool with_true)
{
	LLVMMetadataRef ops[2];
	ops[0] = LLVMMDStringInContext2(cg->ctx, name, strlen(name));
	if (!with_true)
		return LLVMMDNodeInContext2(cg->ctx, ops, 1);
	ops[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0));
	return LLVMMDNodeInContext2(cg->ctx, ops, 2);
}

/* !llvm.loop !{self, props...} on the latch branch. The self reference
 * goes through a temporary node replaced once the node exists. */
static void set_loop_metadata(Cg *cg, LLVMValueRef latch_br, int nprops, LLVMMetadataRef *props)
{
	LLVMMetadataRef ops[5];
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->ctx, NULL, 0);
	ops[0] = tmp;
	for (int i = 0; i < nprops && i < 4; i++)
		ops[i + 1] = props[i];
	LLVMMetadataRef node = LLVMMDNodeInContext2(cg->ctx, ops, (size_t)nprops + 1);
	LLVMMetadataReplaceAllUsesWith(tmp, node);
	LLVMSetMetadata(latch_br, cg->md_loop, LLVMMetadataAsValue(cg->ctx, node));
}

/* ---------- counted loops ---------- */

/* How the loop variable is computed from the counter. `exact`: lo + ext
 * fits the variable's dtype (range analysis), so it never wraps. */
typedef struct LoopBounds {
	const Var *var;
	DType t;
	CgVal lo, ext;           /* in the variable's dtype (exact) */
	LLVMValueRef lo64, ext64; /* sign-extended, for the general form */
	bool exact;
	Interval var_range;
} LoopBounds;

static LoopBounds loop_bounds(Cg *cg, const Stmt *s)
{
	LoopBounds lb = {.var = s->u.loop.var, .t = s->u.loop.var->dtype};
	CgVal lo = cg_expr(cg, s->u.loop.min), ext = cg_expr(cg, s->u.loop.extent);
	lb.lo64 = cg_convert(cg, lo, s->u.loop.min->dtype, DT_INT64).v;
	lb.ext64 = cg_convert(cg, ext, s->u.loop.extent->dtype, DT_INT64).v;
	lb.var_range = iv_dtype(lb.t);
	if (s->u.loop.min->dtype == lb.t && s->u.loop.extent->dtype == lb.t &&
	    iv_is_bounded(lo.r) && iv_is_bounded(ext.r)) {
		/* every value of lo + k for 0 <= k < ext, and lo + ext itself */
		Interval steps = iv_make(ext.r.lo < 0 ? ext.r.lo : 0, ext.r.hi > 0 ? ext.r.hi : 0);
		Interval reach = iv_add(lo.r, steps);
		lb.exact = iv_fits(reach, lb.t) && dtype_is_signed(lb.t);
		if (lb.exact && ext.r.hi >= 1)
			lb.var_range = iv_make(lo.r.lo, reach.hi - 1);
	}
	lb.lo = lo;
	lb.ext = ext;
	return lb;
}

/* The loop variable's value at counter k (i64): lo + k in its dtype. */
static LLVMValueRef var_at(Cg *cg, const LoopBounds *lb, LLVMValueRef k)
{
	LLVMValueRef x = lb->exact ? LLVMBuildNSWAdd(cg->b, lb->lo64, k, "")
				   : LLVMBuildAdd(cg->b, lb->lo64, k, "");
	return cg_convert(cg, (CgVal){x, iv_unbounded()}, DT_INT64, lb->t).v;
}

/* for k in [begin, end) (i64): body with the variable bound. */
static LLVMValueRef counted_loop(Cg *cg, const LoopBounds *lb, LLVMValueRef begin,
				 LLVMValueRef end, const Stmt *body)
{
	LLVMBuilderRef b = cg->b;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = new_block(cg, "loop"), exit = new_block(cg, "loop.end");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, begin, end, ""), head, exit);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef k = LLVMBuildPhi(b, i64t(cg), lb->var->name);
	int mark = cg->nvars;
	cg_bind(cg, lb->var, var_at(cg, lb, k), lb->var_range);
	stmt(cg, body);
	cg_unbind(cg, mark);
	LLVMValueRef next = LLVMBuildNSWAdd(b, k, LLVMConstInt(i64t(cg), 1, 0), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, end, ""), head, exit);
	LLVMValueRef vals[2] = {begin, next};
	LLVMBasicBlockRef blocks[2] = {pre, latch};
	LLVMAddIncoming(k, vals, blocks, 2);
	LLVMPositionBuilderAtEnd(b, exit);
	return br;
}

/* The loop in the variable's own dtype when it cannot wrap: what clang
 * emits for `for (int i = lo; i < lo + n; i++)`, easiest for LLVM. */
static LLVMValueRef exact_loop(Cg *cg, const LoopBounds *lb, const Stmt *body)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef end = LLVMBuildNSWAdd(b, lb->lo.v, lb->ext.v, "");
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = new_block(cg, "loop"), exit = new_block(cg, "loop.end");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lb->lo.v, end, ""), head, exit);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef i = LLVMBuildPhi(b, cg_type(cg, lb->t), lb->var->name);
	int mark = cg->nvars;
	cg_bind(cg, lb->var, i, lb->var_range);
	stmt(cg, body);
	cg_unbind(cg, mark);
	LLVMValueRef next = LLVMBuildNSWAdd(b, i, LLVMConstInt(cg_type(cg, lb->t), 1, 0), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, end, ""), head, exit);
	LLVMValueRef vals[2] = {lb->lo.v, next};
	LLVMBasicBlockRef blocks[2] = {pre, latch};
	LLVMAddIncoming(i, vals, blocks, 2);
	LLVMPositionBuilderAtEnd(b, exit);
	return br;
}

static LLVMValueRef serial_loop(Cg *cg, const LoopBounds *lb, const Stmt *body)
{
	if (lb->exact)
		return exact_loop(cg, lb, body);
	return counted_loop(cg, lb, LLVMConstInt(i64t(cg), 0, 0), lb->ext64, body);
}

/* unroll: the body once per iteration with the variable a constant. */
static bool unroll_explicitly(Cg *cg, const LoopBounds *lb, const Stmt *body)
{
	if (!LLVMIsAConstantInt(lb->lo64) || !LLVMIsAConstantInt(lb->ext64))
		return false;
	int64_t lo = LLVMConstIntGetSExtValue(lb->lo64), n = LLVMConstIntGetSExtValue(lb->ext64);
	if (n > UNROLL_LIMIT)
		return false;
	for (int64_t k = 0; k < n; k++) {
		LLVMValueRef x = cg_convert(cg, (CgVal){cg_int64(cg, (int64_t)((uint64_t)lo + (uint64_t)k)),
							iv_unbounded()}, DT_INT64, lb->t).v;
		int mark = cg->nvars;
		Interval r = iv_dtype(lb->t);
		if (LLVMIsAConstantInt(x))
			r = iv_point(lb->t == DT_UINT8 || lb->t == DT_BOOL ? (int64_t)LLVMConstIntGetZExtValue(x)
									  : LLVMConstIntGetSExtValue(x));
		cg_bind(cg, lb->var, x, r);
		stmt(cg, body);
		cg_unbind(cg, mark);
	}
	return true;
}

/* ---------- parallel loops ---------- */

static void add_param_attr(Cg *cg, LLVMValueRef fn, unsigned idx, const char *name);

static LLVMTypeRef body_fn_type(Cg *cg)
{
	LLVMTypeRef params[3] = {i8p(cg), i64t(cg), i64t(cg)};
	return LLVMFunctionType(i32t(cg), params, 3, 0);
}

static LLVMValueRef runtime_parallel_for(Cg *cg)
{
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, "vs_rt_parallel_for");
	if (fn)
		return fn;
	LLVMTypeRef params[3] = {LLVMPointerType(body_fn_type(cg), 0), i8p(cg), i64t(cg)};
	fn = LLVMAddFunction(cg->mod, "vs_rt_parallel_for", LLVMFunctionType(i32t(cg), params, 3, 0));
	return fn;
}

/* Everything the body may use travels in one struct: the values of the
 * variables in scope, the buffers' pointers and extents, and lo. */
typedef struct Capture {
	int n;
	LLVMValueRef *vals;
	LLVMTypeRef *types;
	LLVMTypeRef st;
} Capture;

static Capture capture_env(Cg *cg, LLVMValueRef lo64)
{
	Capture c = {0};
	int cap = cg->nvars + 1;
	for (int i = 0; i < cg->nbufs; i++)
		cap += 1 + cg->bufs[i].ngroups;
	c.vals = calloc((size_t)cap, sizeof *c.vals);
	c.types = calloc((size_t)cap, sizeof *c.types);
	if (!c.vals || !c.types) {
		cg_fail(cg, (Span){0}, "out of memory");
		return c;
	}
	for (int i = 0; i < cg->nvars; i++)
		c.vals[c.n++] = cg->vars[i].v;
	for (int i = 0; i < cg->nbufs; i++) {
		c.vals[c.n++] = cg->bufs[i].ptr;
		for (int g = 0; g < cg->bufs[i].ngroups; g++)
			c.vals[c.n++] = cg->bufs[i].ext[g];
	}
	c.vals[c.n++] = lo64;
	for (int i = 0; i < c.n; i++)
		c.types[i] = LLVMTypeOf(c.vals[i]);
	c.st = LLVMStructTypeInContext(cg->ctx, c.types, (unsigned)c.n, 0);
	return c;
}

static void capture_free(Capture *c)
{
	free(c->vals);
	free(c->types);
}

/* The saved state of the function being generated while a body function
 * is made. */
typedef struct Frame {
	LLVMValueRef fn;
	LLVMBasicBlockRef entry;
	LLVMBuilderRef b;
	CgVar *vars;
	int nvars, capvars;
	CgBuf *bufs;
	int nbufs, capbufs;
} Frame;

static Frame frame_enter(Cg *cg, LLVMValueRef fn)
{
	Frame f = {cg->fn, cg->entry, cg->b, cg->vars, cg->nvars, cg->capvars,
		   cg->bufs, cg->nbufs, cg->capbufs};
	cg->fn = fn;
	cg->b = LLVMCreateBuilderInContext(cg->ctx);
	cg->entry = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
	cg->vars = NULL;
	cg->nvars = cg->capvars = 0;
	cg->bufs = NULL;
	cg->nbufs = cg->capbufs = 0;
	return f;
}

static void frame_leave(Cg *cg, const Frame *f)
{
	LLVMDisposeBuilder(cg->b);
	free(cg->vars);
	for (int i = 0; i < cg->nbufs; i++)
		free(cg->bufs[i].ext);
	free(cg->bufs);
	cg->fn = f->fn;
	cg->entry = f->entry;
	cg->b = f->b;
	cg->vars = f->vars;
	cg->nvars = f->nvars;
	cg->capvars = f->capvars;
	cg->bufs = f->bufs;
	cg->nbufs = f->nbufs;
	cg->capbufs = f->capbufs;
}

/* Bind the captured values in the body function: the same Vars and
 * Buffers bound to vals (in capture_env's order), with the same ranges. */
static LLVMValueRef bind_env(Cg *cg, const Frame *outer, LLVMValueRef *vals)
{
	int k = 0;
	for (int i = 0; i < outer->nvars; i++)
		cg_bind(cg, outer->vars[i].var, vals[k++], outer->vars[i].r);
	for (int i = 0; i < outer->nbufs; i++) {
		const CgBuf *ob = &outer->bufs[i];
		CgBuf *nb = cg_push_buffer(cg, ob->buf, vals[k++]);
		if (!nb)
			return NULL;
		nb->freeze = ob->freeze;
		nb->ext = calloc((size_t)ob->ngroups, sizeof *nb->ext);
		for (int g = 0; g < ob->ngroups && nb->ext; g++)
			nb->ext[g] = vals[k++];
	}
	return vals[k];
}

/* The body proper, `i32 NAME.body(captured values..., i64 begin, i64
 * end)`: the captured values are parameters, so that every buffer
 * pointer carries noalias as the kernel's own parameters do (each
 * buffer is distinct memory: a parameter, by the kernel's contract, or
 * a local allocation). Loaded from a context struct, the pointers would
 * be unknown to alias analysis, and LLVM would keep a tile of C in
 * memory instead of registers and vectorize behind run-time overlap
 * checks. */
static LLVMValueRef make_body_proper(Cg *cg, const char *name, const LoopBounds *lb,
				     const Stmt *body, const Capture *c)
{
	LLVMTypeRef *pt = calloc((size_t)c->n + 2, sizeof *pt);
	LLVMValueRef *vals = calloc((size_t)c->n + 1, sizeof *vals);
	if (!pt || !vals) {
		free(pt);
		free(vals);
		cg_fail(cg, (Span){0}, "out of memory");
		return NULL;
	}
	memcpy(pt, c->types, sizeof *pt * (size_t)c->n);
	pt[c->n] = pt[c->n + 1] = i64t(cg);
	char bname[600];
	snprintf(bname, sizeof bname, "%s.body", name);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, bname,
					  LLVMFunctionType(i32t(cg), pt, (unsigned)c->n + 2, 0));
	free(pt);
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	cg_function_attributes(cg, fn);
	int k = cg->nvars;
	for (int i = 0; i < cg->nbufs; i++) {
		add_param_attr(cg, fn, (unsigned)k + 1, "noalias");
		add_param_attr(cg, fn, (unsigned)k + 1, "nocapture");
		k += 1 + cg->bufs[i].ngroups;
	}
	for (int i = 0; i < c->n; i++)
		vals[i] = LLVMGetParam(fn, (unsigned)i);
	Frame outer = frame_enter(cg, fn);
	LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(cg->ctx, fn, "body");
	LLVMPositionBuilderAtEnd(cg->b, start);
	LoopBounds inner = *lb;
	inner.lo64 = bind_env(cg, &outer, vals);
	free(vals);
	if (inner.lo64)
		counted_loop(cg, &inner, LLVMGetParam(fn, (unsigned)c->n),
			     LLVMGetParam(fn, (unsigned)c->n + 1), body);
	LLVMBuildRet(cg->b, LLVMConstNull(i32t(cg)));
	LLVMPositionBuilderAtEnd(cg->b, cg->entry);
	LLVMBuildBr(cg->b, start);
	frame_leave(cg, &outer);
	return fn;
}

/* `i32 NAME(i8* ctx, i64 begin, i64 end)`, what the pool calls: unpacks
 * the capture and calls the body proper (which LLVM may inline; the
 * noalias parameters then become alias scopes). */
static LLVMValueRef make_body_function(Cg *cg, const LoopBounds *lb, const Stmt *body,
				       const Capture *c)
{
	char name[512];
	snprintf(name, sizeof name, "%s.parallel.%d", cg->lf->func->name, cg->nparallel++);
	LLVMValueRef proper = make_body_proper(cg, name, lb, body, c);
	if (!proper)
		return NULL;
	LLVMValueRef fn = LLVMAddFunction(cg->mod, name, body_fn_type(cg));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	cg_function_attributes(cg, fn);
	LLVMValueRef *args = calloc((size_t)c->n + 2, sizeof *args);
	if (!args) {
		cg_fail(cg, (Span){0}, "out of memory");
		return NULL;
	}
	LLVMBuilderRef b = LLVMCreateBuilderInContext(cg->ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
	LLVMValueRef sp = LLVMBuildPointerCast(b, LLVMGetParam(fn, 0), LLVMPointerType(c->st, 0), "");
	for (int i = 0; i < c->n; i++)
		args[i] = LLVMBuildLoad2(b, c->types[i], LLVMBuildStructGEP2(b, c->st, sp, (unsigned)i, ""), "");
	args[c->n] = LLVMGetParam(fn, 1);
	args[c->n + 1] = LLVMGetParam(fn, 2);
	LLVMValueRef st = LLVMBuildCall2(b, LLVMGlobalGetValueType(proper), proper, args,
					 (unsigned)c->n + 2, "");
	LLVMBuildRet(b, st);
	LLVMDisposeBuilder(b);
	free(args);
	return fn;
}

/* parallel: iterations run on the pool; their obligations (no two
 * iterations conflict) make any interleaving equal to the serial run. */
static void parallel_loop(Cg *cg, const LoopBounds *lb, const Stmt *body)
{
	Capture c = capture_env(cg, lb->lo64);
	if (!c.vals)
		return;
	LLVMValueRef fn = make_body_function(cg, lb, body, &c);
	if (!fn) {
		capture_free(&c);
		return;
	}
	LLVMValueRef env = entry_alloca(cg, c.st, NULL, 0);
	for (int i = 0; i < c.n; i++)
		LLVMBuildStore(cg->b, c.vals[i], LLVMBuildStructGEP2(cg->b, c.st, env, (unsigned)i, ""));
	LLVMValueRef rt = runtime_parallel_for(cg);
	LLVMTypeRef params[3] = {LLVMPointerType(body_fn_type(cg), 0), i8p(cg), i64t(cg)};
	LLVMValueRef args[3] = {fn, LLVMBuildPointerCast(cg->b, env, i8p(cg), ""), lb->ext64};
	LLVMValueRef st = LLVMBuildCall2(cg->b, LLVMFunctionType(i32t(cg), params, 3, 0), rt, args, 3, "");
	return_if_failed(cg, st);
	capture_free(&c);
}

/* A constant power-of-two extent up to MAX_VECTOR_LANES becomes the
 * vector width: the whole loop is one vector operation (TVM's reading
 * of `vectorize`), and a tile of rows accessed at invariant addresses
 * stays simple enough for LLVM to keep in registers. */
#define MAX_VECTOR_LANES 64
static int vector_width_prop(Cg *cg, const LoopBounds *lb, LLVMMetadataRef *out)
{
	if (!LLVMIsAConstantInt(lb->ext64))
		return 0;
	int64_t n = LLVMConstIntGetSExtValue(lb->ext64);
	if (n < 2 || n > MAX_VECTOR_LANES || (n & (n - 1)) != 0)
		return 0;
	LLVMMetadataRef ops[2];
	ops[0] = LLVMMDStringInContext2(cg->ctx, "llvm.loop.vectorize.width", 25);
	ops[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)n, 0));
	*out = LLVMMDNodeInContext2(cg->ctx, ops, 2);
	return 1;
}

/* What the loops the vectorizer leaves behind carry: only "vectorized",
 * so the unroll.disable that kept the loop for the vectorizer does not
 * stop the clean-up of the remaining single-trip loop. */
static LLVMMetadataRef vectorized_followup(Cg *cg)
{
	LLVMMetadataRef ops[2], done[2];
	done[0] = LLVMMDStringInContext2(cg->ctx, "llvm.loop.isvectorized", 22);
	done[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 1, 0));
	ops[0] = LLVMMDStringInContext2(cg->ctx, "llvm.loop.vectorize.followup_all", 32);
	ops[1] = LLVMMDNodeInContext2(cg->ctx, done, 2);
	return LLVMMDNodeInContext2(cg->ctx, ops, 2);
}

/* ---------- vectorized reductions kept in registers ----------
 *
 * A nest `for serial ...: for v in vectorized(W): X[idx] = X[idx] op e`
 * whose cell X[idx] is the same in every iteration of the nest: LLVM's
 * vectorizer reduces the W lanes into X at the end of every run of the
 * vectorized loop (a horizontal reduction per 16 elements of a row). It
 * is generated instead with one accumulator of W lanes for the whole
 * nest: lane 0 starts at X[idx], the others at op's identity; the update
 * of iteration v goes to lane v - lo; after the nest, X[idx] = the
 * reduction of the lanes. That regroups the updates of the serial loops
 * too, which is exact for the wrapping integer + and *, min and max
 * (semantics.md, Reductions): integers only, so float results never
 * change. The nest's loops have literal ranges of at least one
 * iteration, so X[idx] is read and written exactly when the kernel as
 * written reads and writes it. */

static const Stmt *only_stmt(const Stmt *s)
{
	while (s && s->kind == ST_SEQ && s->u.seq.n == 1)
		s = s->u.seq.items[0];
	return s;
}

static bool literal_range(const Stmt *l, int64_t *lo, int64_t *ext)
{
	return an_const_int(l->u.loop.min, lo) && an_const_int(l->u.loop.extent, ext) && *ext >= 1;
}

static bool same_cell(const Expr *e, const Stmt *st)
{
	if (e->kind != EX_LOAD || e->u.load.buf != st->u.store.buf || e->dtype != st->u.store.buf->dtype ||
	    e->u.load.nidx != st->u.store.nidx)
		return false;
	for (int k = 0; k < e->u.load.nidx; k++)
		if (!ir_expr_equal(e->u.load.idx[k], st->u.store.idx[k]))
			return false;
	return true;
}

typedef struct RegReduction {
	const Stmt *vloop, *store;
	const Expr *load;
	BinOp op;
	int64_t lane_lo, lanes;
} RegReduction;

#define REG_REDUCTION_DEPTH 16
static bool register_reduction_match(const Stmt *l, RegReduction *r)
{
	const Var *vars[REG_REDUCTION_DEPTH + 1];
	int nv = 0;
	int64_t lo, ext;
	const Stmt *s = l;
	while (s && s->kind == ST_FOR && s->u.loop.kind == FOR_SERIAL) {
		if (nv == REG_REDUCTION_DEPTH || !literal_range(s, &lo, &ext))
			return false;
		vars[nv++] = s->u.loop.var;
		s = only_stmt(s->u.loop.body);
	}
	if (!s || s->kind != ST_FOR || s->u.loop.kind != FOR_VECTORIZED || !literal_range(s, &lo, &ext) ||
	    ext < 2 || ext > MAX_VECTOR_LANES || (ext & (ext - 1)) != 0)
		return false;
	vars[nv++] = s->u.loop.var;
	r->vloop = s;
	r->lane_lo = lo;
	r->lanes = ext;
	const Stmt *st = only_stmt(s->u.loop.body);
	if (!st || st->kind != ST_STORE)
		return false;
	const Buffer *x = st->u.store.buf;
	const Expr *v = st->u.store.value;
	if (!dtype_is_int(x->dtype) || v->kind != EX_BIN || v->dtype != x->dtype)
		return false;
	r->op = v->u.bin.op;
	switch (r->op) {
	case OP_ADD: case OP_MUL: case OP_MIN: case OP_MAX:
		break;
	case OP_SUB: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_SHL: case OP_SHR:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		return false;
	}
	const Expr *a = v->u.bin.a, *b = v->u.bin.b;
	r->load = same_cell(a, st) ? a : same_cell(b, st) ? b : NULL;
	if (!r->load || an_expr_reads(r->load == a ? b : a, x))
		return false;
	/* the cell is the same in every iteration of the nest */
	for (int k = 0; k < st->u.store.nidx; k++) {
		const Expr *ix = st->u.store.idx[k];
		if (an_expr_reads(ix, x))
			return false;
		for (int i = 0; i < nv; i++)
			if (ir_expr_uses_var(ix, vars[i]))
				return false;
	}
	r->store = st;
	return true;
}

/* op's identity on the dtype: 0, 1, the largest or the smallest value */
static LLVMValueRef reduction_identity(LLVMTypeRef et, BinOp op, DType t)
{
	unsigned bits = LLVMGetIntTypeWidth(et);
	unsigned long long top = 1ull << (bits - 1);
	bool sgn = dtype_is_signed(t);
	switch (op) {
	case OP_MUL: return LLVMConstInt(et, 1, 0);
	case OP_MIN: return sgn ? LLVMConstInt(et, top - 1, 0) : LLVMConstAllOnes(et);
	case OP_MAX: return sgn ? LLVMConstInt(et, top, 0) : LLVMConstNull(et);
	case OP_ADD: case OP_SUB: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_SHL: case OP_SHR:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return LLVMConstNull(et);
}

static const char *reduction_intrinsic(BinOp op, DType t)
{
	bool sgn = dtype_is_signed(t);
	switch (op) {
	case OP_MUL: return "llvm.vector.reduce.mul";
	case OP_MIN: return sgn ? "llvm.vector.reduce.smin" : "llvm.vector.reduce.umin";
	case OP_MAX: return sgn ? "llvm.vector.reduce.smax" : "llvm.vector.reduce.umax";
	case OP_ADD: case OP_SUB: case OP_DIV: case OP_FLOORDIV: case OP_FLOORMOD: case OP_SHL: case OP_SHR:
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
	case OP_AND: case OP_OR: case OP_COUNT:
		break;
	}
	return "llvm.vector.reduce.add";
}

/* The serial loops of a register reduction's nest stay loops: fully
 * unrolled, a row of make bench's row sum became 64 loads in an order
 * LLVM's scheduler picks, not by address, and ran 1.2x (8 MB) to 1.6x
 * (256 MB) slower than the loop, which reads each row in order (AMD
 * EPYC, AVX-512, side by side in one run, load average 10). The loop
 * right around the vectorized one is unrolled so that an iteration reads
 * at least 256 bytes (a 4-lane int32 sum kept as a loop of one vector
 * add ran 1.2x to 1.5x slower than fully unrolled); the others not. */
static void keep_loop(Cg *cg, LLVMValueRef latch_br, const Stmt *l)
{
	LLVMMetadataRef p;
	int64_t bytes = cg->red.lanes * cg->red.elem_bytes;
	if (only_stmt(l->u.loop.body) == cg->red.vloop && bytes < 256) {
		LLVMMetadataRef ops[2];
		ops[0] = LLVMMDStringInContext2(cg->ctx, "llvm.loop.unroll.count", 22);
		ops[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx),
							  (unsigned long long)(256 / bytes), 0));
		p = LLVMMDNodeInContext2(cg->ctx, ops, 2);
	} else {
		p = md_prop(cg, "llvm.loop.unroll.disable", false);
	}
	set_loop_metadata(cg, latch_br, 1, &p);
}

/* The serial loop l as a nest with a register reduction, if it is one. */
static bool register_reduction(Cg *cg, const Stmt *l, const LoopBounds *lb)
{
	RegReduction r;
	if (cg->red.acc || !register_reduction_match(l, &r))
		return false;
	const Stmt *st = r.store;
	const Buffer *x = st->u.store.buf;
	LLVMValueRef p = cg_address(cg, x, st->u.store.nidx, st->u.store.idx, st->span, st);
	if (!p)
		return true;
	LLVMTypeRef et = cg_mem_type(cg, x->dtype), vt = LLVMVectorType(et, (unsigned)r.lanes);
	unsigned ealign = LLVMGetIntTypeWidth(et) / 8;
	LLVMValueRef x0 = LLVMBuildLoad2(cg->b, et, p, "");
	CgBuf *cb = cg_find_buffer(cg, x);
	if (cb && cb->freeze) /* as load() reads it */
		x0 = LLVMBuildFreeze(cg->b, x0, "");
	LLVMValueRef acc = entry_alloca(cg, et, cg_int64(cg, r.lanes), 64);
	LLVMValueRef vp = LLVMBuildPointerCast(cg->b, acc, LLVMPointerType(vt, 0), "");
	LLVMValueRef id = reduction_identity(et, r.op, x->dtype);
	LLVMValueRef *ids = calloc((size_t)r.lanes, sizeof *ids);
	if (!ids) {
		cg_fail(cg, st->span, "out of memory");
		return true;
	}
	for (int64_t k = 0; k < r.lanes; k++)
		ids[k] = id;
	LLVMValueRef init = LLVMConstVector(ids, (unsigned)r.lanes);
	free(ids);
	init = LLVMBuildInsertElement(cg->b, init, x0, LLVMConstNull(i32t(cg)), "");
	/* alive from here to the reduction (again in each run of an
	 * enclosing loop): LLVM need not store the registers back */
	LLVMValueRef life[2] = {cg_int64(cg, r.lanes * (int64_t)ealign),
				LLVMBuildPointerCast(cg->b, acc, i8p(cg), "")};
	cg_call_intrinsic(cg, "llvm.lifetime.start", i8p(cg), life, 2);
	LLVMSetAlignment(LLVMBuildStore(cg->b, init, vp), ealign);
	cg->red.load = r.load;
	cg->red.store = st;
	cg->red.acc = acc;
	cg->red.lane = r.vloop->u.loop.var;
	cg->red.lane_lo = r.lane_lo;
	cg->red.vloop = r.vloop;
	cg->red.lanes = r.lanes;
	cg->red.elem_bytes = ealign;
	cg->stats->nregister_reductions++;
	keep_loop(cg, serial_loop(cg, lb, l->u.loop.body), l);
	memset(&cg->red, 0, sizeof cg->red);
	LLVMValueRef all = LLVMBuildLoad2(cg->b, vt, vp, "");
	LLVMSetAlignment(all, ealign);
	life[1] = LLVMBuildPointerCast(cg->b, acc, i8p(cg), "");
	cg_call_intrinsic(cg, "llvm.lifetime.end", i8p(cg), life, 2);
	LLVMValueRef sum = cg_call_intrinsic(cg, reduction_intrinsic(r.op, x->dtype), vt, &all, 1);
	LLVMBuildStore(cg->b, sum, p);
	return true;
}

static void for_loop(Cg *cg, const Stmt *s)
{
	LoopBounds lb = loop_bounds(cg, s);
	const Stmt *body = s->u.loop.body;
	LLVMMetadataRef props[4];
	LLVMValueRef br;
	switch (s->u.loop.kind) {
	case FOR_SERIAL:
		if (register_reduction(cg, s, &lb))
			return;
		br = serial_loop(cg, &lb, body);
		if (cg->red.acc) /* inside a register reduction's nest */
			keep_loop(cg, br, s);
		return;
	case FOR_PARALLEL:
		cg->stats->nparallel_loops++;
		parallel_loop(cg, &lb, body);
		return;
	case FOR_VECTORIZED:
		/* the loop's iterations commute (proven), so forcing the
		 * vectorizer, which still checks legality, is safe */
		cg->stats->nvectorized_loops++;
		br = serial_loop(cg, &lb, body);
		props[0] = md_prop(cg, "llvm.loop.vectorize.enable", true);
		/* the early full unroll would take a short loop away from the
		 * vectorizer; it stays a loop until vectorized */
		props[1] = md_prop(cg, "llvm.loop.unroll.disable", false);
		props[2] = vectorized_followup(cg);
		set_loop_metadata(cg, br, 3 + vector_width_prop(cg, &lb, &props[3]), props);
		return;
	case FOR_UNROLLED:
		cg->stats->nunrolled_loops++;
		if (unroll_explicitly(cg, &lb, body))
			return;
		br = serial_loop(cg, &lb, body);
		if (LLVMIsAConstantInt(lb.ext64) && LLVMConstIntGetSExtValue(lb.ext64) <= UNROLL_FULL_LIMIT) {
			props[0] = md_prop(cg, "llvm.loop.unroll.full", false);
		} else {
			/* a full unroll of thousands of iterations takes LLVM
			 * minutes and the code no faster: unroll by a few */
			LLVMMetadataRef ops[2];
			ops[0] = LLVMMDStringInContext2(cg->ctx, "llvm.loop.unroll.count", 22);
			ops[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), UNROLL_PARTIAL, 0));
			props[0] = LLVMMDNodeInContext2(cg->ctx, ops, 2);
		}
		set_loop_metadata(cg, br, 1, props);
		return;
	}
}

/* ---------- local buffers ---------- */

static LLVMValueRef runtime_fn(Cg *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef arg)
{
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	return fn ? fn : LLVMAddFunction(cg->mod, name, LLVMFunctionType(ret, &arg, 1, 0));
}

/* The extents of a flat buffer, in i64, evaluated where it comes into scope. */
static void buffer_extents(Cg *cg, CgBuf *cb)
{
	const Buffer *b = cb->buf;
	cb->ext = calloc((size_t)cb->ngroups, sizeof *cb->ext);
	if (!cb->ext) {
		cg_fail(cg, b->span, "out of memory");
		return;
	}
	for (int g = 0; g < cb->ngroups; g++)
		cb->ext[g] = b->ndim ? cg_expr_as(cg, b->shape[g], DT_INT64).v : cg_int64(cg, 1);
}

static void alloc_stmt(Cg *cg, const Stmt *s)
{
	const Buffer *b = s->u.alloc.buf;
	CgBuf probe = {.buf = b, .ngroups = b->ndim ? b->ndim : 1};
	buffer_extents(cg, &probe);
	if (!probe.ext)
		return;
	/* cells * element size, in unsigned 64 bits with every overflow and
	 * every negative extent caught: such an allocation fails (status 1,
	 * as when malloc fails) instead of wrapping to a small block */
	int64_t esize = dtype_bits(b->dtype) < 8 ? 1 : dtype_bits(b->dtype) / 8;
	int64_t bytes = esize;
	bool known = true;
	for (int g = 0; g < probe.ngroups; g++) {
		int64_t e;
		if (!LLVMIsAConstantInt(probe.ext[g])) {
			known = false;
			continue;
		}
		e = LLVMConstIntGetSExtValue(probe.ext[g]);
		if (known && (e < 0 || __builtin_mul_overflow(bytes, e, &bytes)))
			bytes = -1;
		if (bytes < 0)
			known = false;
	}
	LLVMTypeRef et = cg_mem_type(cg, b->dtype);
	LLVMValueRef ptr, heap = NULL;
	if (known && bytes <= STACK_BUFFER_BYTES) {
		ptr = entry_alloca(cg, et, cg_int64(cg, bytes / esize), 64);
	} else {
		LLVMTypeRef i64 = i64t(cg), i1 = LLVMInt1TypeInContext(cg->ctx);
		LLVMValueRef size = cg_int64(cg, esize), bad = LLVMConstInt(i1, 0, 0);
		for (int g = 0; g < probe.ngroups; g++) {
			LLVMValueRef e = probe.ext[g];
			bad = LLVMBuildOr(cg->b, bad, LLVMBuildICmp(cg->b, LLVMIntSLT, e, cg_int64(cg, 0), ""), "");
			LLVMValueRef args[2] = {size, e};
			LLVMValueRef r = cg_call_intrinsic(cg, "llvm.umul.with.overflow", i64, args, 2);
			size = LLVMBuildExtractValue(cg->b, r, 0, "");
			bad = LLVMBuildOr(cg->b, bad, LLVMBuildExtractValue(cg->b, r, 1, ""), "");
		}
		/* past half the address space no malloc can succeed */
		bad = LLVMBuildOr(cg->b, bad, LLVMBuildICmp(cg->b, LLVMIntUGT, size, cg_int64(cg, INT64_MAX / 2), ""), "");
		return_if_failed(cg, LLVMBuildZExt(cg->b, bad, i32t(cg), ""));
		size = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, size, cg_int64(cg, 0), ""),
				       cg_int64(cg, 1), size, "");
		LLVMValueRef mallocf = runtime_fn(cg, "malloc", i8p(cg), i64);
		LLVMTypeRef mt = LLVMFunctionType(i8p(cg), (LLVMTypeRef[]){i64}, 1, 0);
		heap = LLVMBuildCall2(cg->b, mt, mallocf, &size, 1, "");
		LLVMValueRef null = LLVMBuildIsNull(cg->b, heap, "");
		return_if_failed(cg, LLVMBuildZExt(cg->b, null, i32t(cg), ""));
		ptr = LLVMBuildPointerCast(cg->b, heap, LLVMPointerType(et, 0), "");
	}
	CgBuf *cb = cg_push_buffer(cg, b, ptr);
	if (!cb) {
		free(probe.ext);
		return;
	}
	cb->ext = probe.ext;
	if (s->u.alloc.body)
		stmt(cg, s->u.alloc.body);
	free(cg->bufs[cg->nbufs - 1].ext);
	cg->nbufs--;
	if (heap) {
		LLVMValueRef freef = runtime_fn(cg, "free", LLVMVoidTypeInContext(cg->ctx), i8p(cg));
		LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), (LLVMTypeRef[]){i8p(cg)}, 1, 0);
		LLVMBuildCall2(cg->b, ft, freef, &heap, 1, "");
	}
}

/* ---------- statements ---------- */

static void if_stmt(Cg *cg, const Stmt *s)
{
	const Expr *c = s->u.cond.cond;
	LLVMValueRef cond = cg_truth(cg, cg_expr(cg, c), c->dtype);
	LLVMBasicBlockRef then_b = new_block(cg, "then"), done = new_block(cg, "endif");
	LLVMBasicBlockRef else_b = s->u.cond.else_s ? new_block(cg, "else") : done;
	LLVMBuildCondBr(cg->b, cond, then_b, else_b);
	LLVMPositionBuilderAtEnd(cg->b, then_b);
	stmt(cg, s->u.cond.then_s);
	LLVMBuildBr(cg->b, done);
	if (s->u.cond.else_s) {
		LLVMPositionBuilderAtEnd(cg->b, else_b);
		stmt(cg, s->u.cond.else_s);
		LLVMBuildBr(cg->b, done);
	}
	LLVMPositionBuilderAtEnd(cg->b, done);
}

static void store_stmt(Cg *cg, const Stmt *s)
{
	const Buffer *b = s->u.store.buf;
	LLVMValueRef p = cg_address(cg, b, s->u.store.nidx, s->u.store.idx, s->span, s);
	CgVal v = cg_expr_as(cg, s->u.store.value, b->dtype);
	if (!p)
		return;
	LLVMValueRef x = v.v;
	if (b->dtype == DT_BOOL)
		x = LLVMBuildZExt(cg->b, x, cg_mem_type(cg, DT_BOOL), "");
	LLVMBuildStore(cg->b, x, p);
}

static void let_stmt(Cg *cg, const Stmt *s)
{
	CgVal x = cg_expr_as(cg, s->u.let.value, s->u.let.var->dtype);
	int mark = cg->nvars;
	cg_bind(cg, s->u.let.var, x.v, x.r);
	stmt(cg, s->u.let.body);
	cg_unbind(cg, mark);
}

static void stmt(Cg *cg, const Stmt *s)
{
	if (cg->failed)
		return;
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			stmt(cg, s->u.seq.items[i]);
		return;
	case ST_FOR:
		for_loop(cg, s);
		return;
	case ST_IF:
		if_stmt(cg, s);
		return;
	case ST_STORE:
		store_stmt(cg, s);
		return;
	case ST_ASSUME: /* hypotheses, never checked (lowering removed them) */
	case ST_EVAL:   /* expressions are pure */
	case ST_PASS:
		return;
	case ST_ALLOC:
		alloc_stmt(cg, s);
		return;
	case ST_BLOCK:
		stmt(cg, s->u.block.body);
		return;
	case ST_LET:
		let_stmt(cg, s);
		return;
	case ST_COUNT:
		break;
	}
	cg_fail(cg, s->span, "internal: unknown statement kind %d", (int)s->kind);
}

/* ---------- kernels ---------- */

void cg_function_attributes(Cg *cg, LLVMValueRef fn)
{
	if (cg->cpu && *cg->cpu)
		LLVMAddTargetDependentFunctionAttr(fn, "target-cpu", cg->cpu);
	if (cg->features && *cg->features)
		LLVMAddTargetDependentFunctionAttr(fn, "target-features", cg->features);
	if (cg->vector_width)
		LLVMAddTargetDependentFunctionAttr(fn, "prefer-vector-width", cg->vector_width);
	unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(cg->ctx, nounwind, 0));
}

/* A scalar parameter's type in the C calling convention: bool travels
 * as uint8_t, float16 as its binary16 bits in a uint16_t (the x86-64
 * convention for `half` arguments changed in LLVM 15; an integer has one
 * convention everywhere). */
static LLVMTypeRef abi_type(Cg *cg, const Param *p)
{
	if (p->kind == PARAM_SCALAR && p->var->dtype == DT_FLOAT16)
		return LLVMInt16TypeInContext(cg->ctx);
	if (p->kind == PARAM_SCALAR)
		return cg_mem_type(cg, p->var->dtype);
	return LLVMPointerType(cg_mem_type(cg, p->buf->dtype), 0);
}

static LLVMTypeRef kernel_type(Cg *cg, const Func *f)
{
	LLVMTypeRef *params = calloc((size_t)f->nparams + 1, sizeof *params);
	for (int i = 0; params && i < f->nparams; i++)
		params[i] = abi_type(cg, &f->params[i]);
	LLVMTypeRef t = LLVMFunctionType(i32t(cg), params, (unsigned)f->nparams, 0);
	free(params);
	return t;
}

static void add_param_attr(Cg *cg, LLVMValueRef fn, unsigned idx, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(cg->ctx, kind, 0));
}

/* Bind scalar parameters first: buffer extents may use them. */
static void bind_params(Cg *cg, const Func *f, LLVMValueRef fn)
{
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		LLVMValueRef x = LLVMGetParam(fn, (unsigned)i);
		if (p->kind == PARAM_SCALAR) {
			DType t = p->var->dtype;
			if (t == DT_BOOL)
				x = LLVMBuildICmp(cg->b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
			else if (t == DT_FLOAT16)
				x = LLVMBuildBitCast(cg->b, x, cg_type(cg, t), "");
			cg_bind(cg, p->var, x, iv_dtype(t));
		} else if (p->var) { /* a handle's own value is 0 in the interpreter */
			cg_bind(cg, p->var, cg_int64(cg, 0), iv_point(0));
		}
	}
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR || !p->buf)
			continue;
		CgBuf *cb = cg_push_buffer(cg, p->buf, LLVMGetParam(fn, (unsigned)i));
		if (cb)
			buffer_extents(cg, cb);
	}
}

/* The facts over scalar parameters every proof took as hypotheses
 * (T.assume at the top level, not under a loop or an if; the lowering's
 * index widths too) are checked once at entry: a call that breaks one
 * returns VS_KERNEL_ASSUME_FAILED before touching memory (specialize's
 * `n == 128`, a divisibility fact). Scalars never change, so the check
 * can come first. A fact whose evaluation may fault (a division by a
 * parameter) is not checked: it stays the caller's contract. */
static void check_entry_facts(Cg *cg, const Func *src, const Stmt *s)
{
	switch (s->kind) {
	case ST_SEQ:
		for (int i = 0; i < s->u.seq.n; i++)
			check_entry_facts(cg, src, s->u.seq.items[i]);
		return;
	case ST_ASSUME: {
		if (!an_scalar_only(src, s->u.expr) || an_expr_may_fault(s->u.expr, true))
			return;
		LLVMValueRef ok = cg_truth(cg, cg_expr(cg, s->u.expr), s->u.expr->dtype);
		LLVMBasicBlockRef fail = new_block(cg, "assume_failed"), next = new_block(cg, "assume_ok");
		LLVMBuildCondBr(cg->b, ok, next, fail);
		LLVMPositionBuilderAtEnd(cg->b, fail);
		LLVMBuildRet(cg->b, LLVMConstInt(i32t(cg), VS_KERNEL_ASSUME_FAILED, 0));
		LLVMPositionBuilderAtEnd(cg->b, next);
		return;
	}
	case ST_ALLOC:
		if (s->u.alloc.body)
			check_entry_facts(cg, src, s->u.alloc.body);
		return;
	case ST_BLOCK: check_entry_facts(cg, src, s->u.block.body); return;
	case ST_LET: check_entry_facts(cg, src, s->u.let.body); return;
	case ST_FOR: case ST_IF: case ST_STORE: case ST_EVAL: case ST_PASS: case ST_COUNT: return;
	}
}

LLVMValueRef cg_define_kernel(Cg *cg, const LoweredFunc *lf)
{
	const Func *f = lf->func;
	cg->lf = lf;
	cg->nparallel = 0;
	cg_map_accesses(cg, lf);
	char sym[256];
	backend_symbol(f->name, sym, sizeof sym);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, sym, kernel_type(cg, f));
	cg_function_attributes(cg, fn);
	for (int i = 0; i < f->nparams; i++) {
		LLVMSetValueName2(LLVMGetParam(fn, (unsigned)i),
				  f->params[i].kind == PARAM_SCALAR ? f->params[i].var->name
								    : f->params[i].buf->name,
				  strlen(f->params[i].kind == PARAM_SCALAR ? f->params[i].var->name
									   : f->params[i].buf->name));
		if (f->params[i].kind == PARAM_SCALAR)
			continue;
		/* buffers are distinct memory (the header says so) */
		add_param_attr(cg, fn, (unsigned)i + 1, "noalias");
		add_param_attr(cg, fn, (unsigned)i + 1, "nocapture");
	}
	cg->fn = fn;
	cg->b = LLVMCreateBuilderInContext(cg->ctx);
	cg->entry = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
	LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(cg->ctx, fn, "body");
	LLVMPositionBuilderAtEnd(cg->b, start);
	bind_params(cg, f, fn);
	if (lf->source)
		check_entry_facts(cg, lf->source, lf->source->body);
	stmt(cg, f->body);
	LLVMBuildRet(cg->b, LLVMConstNull(i32t(cg)));
	LLVMPositionBuilderAtEnd(cg->b, cg->entry);
	LLVMBuildBr(cg->b, start);
	LLVMDisposeBuilder(cg->b);
	cg->b = NULL;
	for (int i = 0; i < cg->nbufs; i++)
		free(cg->bufs[i].ext);
	cg->nbufs = 0;
	cg->nvars = 0;
	return fn;
}

LLVMValueRef cg_define_entry(Cg *cg, const LoweredFunc *lf, LLVMValueRef kernel)
{
	const Func *f = lf->func;
	char name[512];
	snprintf(name, sizeof name, "__vsched_call_%s", f->name);
	LLVMTypeRef argv = LLVMPointerType(i8p(cg), 0);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(i32t(cg), &argv, 1, 0));
	cg_function_attributes(cg, fn);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(cg->ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
	LLVMValueRef *args = calloc((size_t)f->nparams + 1, sizeof *args);
	for (int i = 0; args && i < f->nparams; i++) {
		LLVMValueRef idx = cg_int64(cg, i);
		LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, i8p(cg), LLVMGetParam(fn, 0), &idx, 1, "");
		LLVMValueRef p = LLVMBuildLoad2(b, i8p(cg), slot, "");
		LLVMTypeRef t = abi_type(cg, &f->params[i]);
		if (f->params[i].kind == PARAM_SCALAR)
			args[i] = LLVMBuildLoad2(b, t, LLVMBuildPointerCast(b, p, LLVMPointerType(t, 0), ""), "");
		else
			args[i] = LLVMBuildPointerCast(b, p, t, "");
	}
	LLVMValueRef r = LLVMBuildCall2(b, kernel_type(cg, f), kernel, args, (unsigned)f->nparams, "");
	LLVMBuildRet(b, r);
	free(args);
	LLVMDisposeBuilder(b);
	return fn;
}
