/* backend/target.c — the LLVM target side: native target initialisation
 * (once per process), a target machine for the host CPU and its features,
 * the new-pass-manager pipeline (LLVMRunPasses "default<O3>"), module
 * verification, and emission of LLVM IR, assembly and object files. */
#include "backend/target.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok;

static void init_native(void)
{
	init_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter() &&
		  !LLVMInitializeNativeAsmParser();
}

/* The message of an LLVMErrorRef, arena-owned; the error is consumed. */
const char *target_error_text(Arena *a, LLVMErrorRef err)
{
	char *msg = LLVMGetErrorMessage(err);
	const char *r = arena_strdup(a, msg ? msg : "unknown LLVM error");
	LLVMDisposeErrorMessage(msg);
	return r;
}

bool target_init(Target *t, const BackendOptions *o, DiagList *d)
{
	memset(t, 0, sizeof *t);
	if (!o->no_host_cpu && !target_check_spec(o->cpu, o->features, d))
		return false;
	pthread_once(&init_once, init_native);
	if (!init_ok) {
		diag_add(d, DIAG_ERROR, (Span){0}, "LLVM: the native target is not available");
		return false;
	}
	char *def = LLVMGetDefaultTargetTriple();
	t->triple = LLVMNormalizeTargetTriple(def);
	LLVMDisposeMessage(def);
	char *err = NULL;
	if (LLVMGetTargetFromTriple(t->triple, &t->target, &err)) {
		diag_add(d, DIAG_ERROR, (Span){0}, "LLVM: no target for %s: %s", t->triple,
			 err ? err : "?");
		LLVMDisposeMessage(err);
		target_dispose(t);
		return false;
	}
	if (o->no_host_cpu) {
		t->cpu = LLVMCreateMessage("x86-64");
		t->features = LLVMCreateMessage("");
		target_check_runs_on_host(t, "x86-64", NULL);
	} else {
		bool host = target_cpu_is_host(o->cpu);
		const char *extra = o->features ? o->features : "";
		char *base = host ? LLVMGetHostCPUFeatures() : LLVMCreateMessage("");
		size_t n = strlen(base) + strlen(extra) + 2;
		char *all = malloc(n);
		if (all)
			snprintf(all, n, "%s%s%s", base, *base && *extra ? "," : "", extra);
		LLVMDisposeMessage(base);
		if (!all) {
			diag_add(d, DIAG_ERROR, (Span){0}, "out of memory for the target's features");
			target_dispose(t);
			return false;
		}
		t->cpu = host ? LLVMGetHostCPUName() : LLVMCreateMessage(o->cpu);
		t->features = LLVMCreateMessage(all);
		free(all);
		target_check_runs_on_host(t, o->cpu, o->features);
	}
	t->tm = target_machine(t);
	if (!t->tm) {
		diag_add(d, DIAG_ERROR, (Span){0}, "LLVM: cannot create a target machine for %s (%s)",
			 t->triple, t->cpu);
		target_dispose(t);
		return false;
	}
	return true;
}

LLVMTargetMachineRef target_machine(const Target *t)
{
	/* PIC: emitted objects link into position-independent executables */
	return LLVMCreateTargetMachine(t->target, t->triple, t->cpu, t->features,
				       LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelDefault);
}

void target_dispose(Target *t)
{
	if (t->tm)
		LLVMDisposeTargetMachine(t->tm);
	if (t->triple)
		LLVMDisposeMessage(t->triple);
	if (t->cpu)
		LLVMDisposeMessage(t->cpu);
	if (t->features)
		LLVMDisposeMessage(t->features);
	memset(t, 0, sizeof *t);
}

void target_configure_module(const Target *t, LLVMModuleRef m)
{
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(t->tm);
	LLVMSetModuleDataLayout(m, td);
	LLVMDisposeTargetData(td);
	LLVMSetTarget(m, t->triple);
}

bool target_verify(LLVMModuleRef m, DiagList *d)
{
	char *msg = NULL;
	if (!LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
		LLVMDisposeMessage(msg);
		return true;
	}
	diag_add(d, DIAG_ERROR, (Span){0}, "internal: the generated LLVM IR is invalid: %s",
		 msg ? msg : "?");
	LLVMDisposeMessage(msg);
	return false;
}

bool target_optimize(const Target *t, LLVMModuleRef m, int level, DiagList *d)
{
	if (level <= 0)
		return true;
	char pipeline[32];
	snprintf(pipeline, sizeof pipeline, "default<O%d>", level > 3 ? 3 : level);
	LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
	LLVMPassBuilderOptionsSetLoopVectorization(opts, level >= 2);
	LLVMPassBuilderOptionsSetSLPVectorization(opts, level >= 2);
	LLVMPassBuilderOptionsSetLoopInterleaving(opts, level >= 2);
	LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
	LLVMErrorRef err = LLVMRunPasses(m, pipeline, t->tm, opts);
	LLVMDisposePassBuilderOptions(opts);
	if (err) {
		char *msg = LLVMGetErrorMessage(err);
		diag_add(d, DIAG_ERROR, (Span){0}, "LLVM pass pipeline %s failed: %s", pipeline, msg);
		LLVMDisposeErrorMessage(msg);
		return false;
	}
	return target_verify(m, d);
}

char *target_emit(const Target *t, LLVMModuleRef m, bool assembly, size_t *len, DiagList *d)
{
	/* code generation may rewrite the IR: work on a copy */
	LLVMModuleRef copy = LLVMCloneModule(m);
	LLVMMemoryBufferRef buf = NULL;
	char *err = NULL;
	LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(
		t->tm, copy, assembly ? LLVMAssemblyFile : LLVMObjectFile, &err, &buf);
	LLVMDisposeModule(copy);
	if (failed) {
		diag_add(d, DIAG_ERROR, (Span){0}, "LLVM: cannot emit %s: %s",
			 assembly ? "assembly" : "an object file", err ? err : "?");
		LLVMDisposeMessage(err);
		return NULL;
	}
	size_t n = LLVMGetBufferSize(buf);
	char *out = malloc(n + 1);
	if (out) {
		memcpy(out, LLVMGetBufferStart(buf), n);
		out[n] = 0;
		*len = n;
	}
	LLVMDisposeMemoryBuffer(buf);
	return out;
}
