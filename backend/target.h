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
} Target;

/* The host's triple; its CPU and features unless host_cpu is false
 * (then generic x86-64). */
bool target_init(Target *t, bool host_cpu, DiagList *d);
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
