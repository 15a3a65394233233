/* backend/target.h — private to backend/: the host target machine, the
 * O-level pipeline and file emission (target.c). Includes llvm-c. */
#ifndef VS_BACKEND_TARGET_H
#define VS_BACKEND_TARGET_H

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include "backend/backend.h"

typedef struct Target {
	char *triple, *cpu, *features; /* LLVM messages */
	LLVMTargetRef target;
	LLVMTargetMachineRef tm;
	/* whether this process may run the code (backend_jit): every feature
	 * of the target CPU is on in the host's; why_not_host says which is not */
	bool runs_on_host;
	char why_not_host[256];
} Target;

/* The host's triple. The CPU and features: generic x86-64 with
 * o->no_host_cpu; else o->cpu (NULL or "host": the host's CPU and its
 * features) with o->features appended ("+f,-g"; later entries win).
 * false + diagnostic for a name target_check_spec refuses. */
bool target_init(Target *t, const BackendOptions *o, DiagList *d);
/* cpu.c: sets t->runs_on_host and t->why_not_host for cpu + features */
void target_check_runs_on_host(Target *t, const char *cpu, const char *features);
void target_dispose(Target *t);
/* A new target machine like t->tm (the caller owns it). */
LLVMTargetMachineRef target_machine(const Target *t);
void target_configure_module(const Target *t, LLVMModuleRef m);
bool target_verify(LLVMModuleRef m, DiagList *d);
/* LLVMRunPasses with "default<O{level}>"; level 0 does nothing. */
bool target_optimize(const Target *t, LLVMModuleRef m, int level, DiagList *d);
/* Assembly text or object bytes of m (malloc'ed, *len bytes). */
char *target_emit(const Target *t, LLVMModuleRef m, bool assembly, size_t *len, DiagList *d);
const char *target_error_text(Arena *a, LLVMErrorRef err);

#endif
