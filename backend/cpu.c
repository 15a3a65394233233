/* backend/cpu.c — the target CPU of a build (BackendOptions.cpu, .features):
 * the x86 CPU names LLVM knows (LLVM-C cannot list them, and an unknown
 * name only makes LLVM print a warning and fall back), feature strings
 * checked against the features LLVM detects on this host, and whether
 * code compiled for a target can run here: the JIT refuses a target that
 * may use an instruction the host lacks (SIGILL), instead of crashing. */
#include "backend/target.h"

#include <llvm/Config/llvm-config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `llc-14 -march=x86-64 -mcpu=help`; later LLVMs add names, never drop
 * these (the Xeon Phi names warn from LLVM 18 on, still accepted) */
static const char *const x86_cpus[] = {
	"alderlake", "amdfam10", "athlon", "athlon-4", "athlon-fx", "athlon-mp", "athlon-tbird",
	"athlon-xp", "athlon64", "athlon64-sse3", "atom", "barcelona", "bdver1", "bdver2", "bdver3",
	"bdver4", "bonnell", "broadwell", "btver1", "btver2", "c3", "c3-2", "cannonlake",
	"cascadelake", "cooperlake", "core-avx-i", "core-avx2", "core2", "corei7", "corei7-avx",
	"generic", "geode", "goldmont", "goldmont-plus", "haswell", "i386", "i486", "i586", "i686",
	"icelake-client", "icelake-server", "ivybridge", "k6", "k6-2", "k6-3", "k8", "k8-sse3", "knl",
	"knm", "lakemont", "nehalem", "nocona", "opteron", "opteron-sse3", "penryn", "pentium",
	"pentium-m", "pentium-mmx", "pentium2", "pentium3", "pentium3m", "pentium4", "pentium4m",
	"pentiumpro", "prescott", "rocketlake", "sandybridge", "sapphirerapids", "silvermont", "skx",
	"skylake", "skylake-avx512", "slm", "tigerlake", "tremont", "westmere", "winchip-c6",
	"winchip2", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "yonah", "znver1", "znver2",
	"znver3",
#if LLVM_VERSION_MAJOR >= 16
	"znver4", "raptorlake", "meteorlake", "graniterapids", "emeraldrapids", "sierraforest",
	"grandridge",
#endif
};

/* The features of the CPUs whose code the JIT may run (when the host has
 * all of them): the "target-features" clang 14 gives each -march, i.e.
 * LLVM's own processor definitions (X86.td). Other names: build only. */
static const struct {
	const char *cpu, *features;
} known_features[] = {
	{"x86-64", "+cx8,+fxsr,+mmx,+sse,+sse2,+x87"},
	{"x86-64-v2", "+crc32,+cx16,+cx8,+fxsr,+mmx,+popcnt,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,"
		      "+ssse3,+x87"},
	{"x86-64-v3", "+avx,+avx2,+bmi,+bmi2,+crc32,+cx16,+cx8,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,"
		      "+popcnt,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+x87,+xsave"},
	{"x86-64-v4", "+avx,+avx2,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512vl,+bmi,+bmi2,+crc32,"
		      "+cx16,+cx8,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,+popcnt,+sahf,+sse,+sse2,+sse3,"
		      "+sse4.1,+sse4.2,+ssse3,+x87,+xsave"},
	{"haswell", "+avx,+avx2,+bmi,+bmi2,+crc32,+cx16,+cx8,+f16c,+fma,+fsgsbase,+fxsr,+invpcid,"
		    "+lzcnt,+mmx,+movbe,+pclmul,+popcnt,+rdrnd,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,"
		    "+ssse3,+x87,+xsave,+xsaveopt"},
	{"skylake-avx512", "+adx,+aes,+avx,+avx2,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512vl,+bmi,"
			   "+bmi2,+clflushopt,+clwb,+crc32,+cx16,+cx8,+f16c,+fma,+fsgsbase,+fxsr,+invpcid,"
			   "+lzcnt,+mmx,+movbe,+pclmul,+pku,+popcnt,+prfchw,+rdrnd,+rdseed,+sahf,+sse,+sse2,"
			   "+sse3,+sse4.1,+sse4.2,+ssse3,+x87,+xsave,+xsavec,+xsaveopt,+xsaves"},
	{"znver2", "+adx,+aes,+avx,+avx2,+bmi,+bmi2,+clflushopt,+clwb,+clzero,+crc32,+cx16,+cx8,+f16c,"
		   "+fma,+fsgsbase,+fxsr,+lzcnt,+mmx,+movbe,+mwaitx,+pclmul,+popcnt,+prfchw,+rdpid,+rdrnd,"
		   "+rdseed,+sahf,+sha,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+sse4a,+ssse3,+wbnoinvd,+x87,"
		   "+xsave,+xsavec,+xsaveopt,+xsaves"},
	{"znver3", "+adx,+aes,+avx,+avx2,+bmi,+bmi2,+clflushopt,+clwb,+clzero,+crc32,+cx16,+cx8,+f16c,"
		   "+fma,+fsgsbase,+fxsr,+invpcid,+lzcnt,+mmx,+movbe,+mwaitx,+pclmul,+pku,+popcnt,+prfchw,"
		   "+rdpid,+rdrnd,+rdseed,+sahf,+sha,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+sse4a,+ssse3,+vaes,"
		   "+vpclmulqdq,+wbnoinvd,+x87,+xsave,+xsavec,+xsaveopt,+xsaves"},
};

#define COUNT(a) ((int)(sizeof a / sizeof *a))

bool target_cpu_is_host(const char *cpu)
{
	return !cpu || !*cpu || strcmp(cpu, "host") == 0 || strcmp(cpu, "native") == 0;
}

static bool known_cpu(const char *cpu)
{
	for (int i = 0; i < COUNT(x86_cpus); i++)
		if (strcmp(x86_cpus[i], cpu) == 0)
			return true;
	return false;
}

/* The sign LLVM's host detection gives feature `name` (of n bytes) in
 * list ("+sse2,-avx512er,..."): '+', '-', or 0 when the list does not
 * mention it. x87 and 64bit are not listed; every x86-64 CPU has them. */
static char feature_sign(const char *list, const char *name, size_t n)
{
	if ((n == 3 && strncmp(name, "x87", 3) == 0) || (n == 5 && strncmp(name, "64bit", 5) == 0))
		return '+';
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n + 1 && strncmp(p + 1, name, n) == 0)
			return p[0];
		p = end ? end + 1 : NULL;
	}
	return 0;
}

bool target_check_spec(const char *cpu, const char *features, DiagList *d)
{
	char *triple = LLVMGetDefaultTargetTriple();
	bool x86 = strncmp(triple, "x86_64", 6) == 0;
	LLVMDisposeMessage(triple);
	if (!target_cpu_is_host(cpu) && (!x86 || !known_cpu(cpu))) {
		diag_add(d, DIAG_ERROR, (Span){0},
			 x86 ? "unknown CPU '%s': expected host, an x86-64 level (x86-64, x86-64-v2, "
			       "x86-64-v3, x86-64-v4) or a CPU name LLVM knows (haswell, skylake-avx512, "
			       "znver3, ...: llc -march=x86-64 -mcpu=help lists them)"
			     : "unknown CPU '%s': CPU names are checked for x86-64 hosts only; use host",
			 cpu);
		return false;
	}
	if (!features || !*features)
		return true;
	char *host = LLVMGetHostCPUFeatures();
	bool ok = true;
	for (const char *p = features; ok && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len < 2 || (p[0] != '+' && p[0] != '-')) {
			diag_add(d, DIAG_ERROR, (Span){0},
				 "CPU features '%s': expected a comma-separated list of +feature or "
				 "-feature (e.g. -avx512f), found '%.*s'",
				 features, (int)len, p);
			ok = false;
		} else if (!feature_sign(host, p + 1, len - 1)) {
			diag_add(d, DIAG_ERROR, (Span){0},
				 "unknown CPU feature '%.*s': not one LLVM detects on x86 hosts (avx2, fma, "
				 "avx512f, ...)",
				 (int)len - 1, p + 1);
			ok = false;
		}
		p = end ? end + 1 : p + len;
	}
	LLVMDisposeMessage(host);
	return ok;
}

/* Features of system instructions (control registers, random numbers,
 * TSC aux, memory protection keys, cache-line write-back, monitor/wait,
 * register-state saving) that LLVM emits only for the intrinsics or
 * builtins of their name, which vsched's code generator never calls (it
 * emits no llvm.x86.* call and no prefetch); hypervisors often hide them
 * (this AMD EPYC VM reports -invpcid, -rdpid, -pku), so they do not stop
 * the JIT from running code for a CPU that has them. */
static const char *const system_features[] = {
	"fsgsbase", "invpcid", "rdrnd", "rdseed", "rdpid", "pku", "clzero", "mwaitx", "wbnoinvd",
	"clflushopt", "clwb", "xsave", "xsavec", "xsaveopt", "xsaves",
};

static bool system_feature(const char *name, size_t n)
{
	for (int i = 0; i < COUNT(system_features); i++)
		if (strlen(system_features[i]) == n && strncmp(system_features[i], name, n) == 0)
			return true;
	return false;
}

/* Whether every feature in `want` ("+a,+b,-c", the later entry of a name
 * winning) is on in `host`; the first one missing is written to why. */
static bool features_on_host(const char *want, const char *host, char *why, size_t n)
{
	for (const char *p = want; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		/* a later "-name" switches this one off */
		bool later_off = false;
		for (const char *q = end ? end + 1 : NULL; q && *q;) {
			const char *qe = strchr(q, ',');
			size_t ql = qe ? (size_t)(qe - q) : strlen(q);
			if (ql == len && strncmp(q + 1, p + 1, len - 1) == 0)
				later_off = q[0] == '-';
			q = qe ? qe + 1 : NULL;
		}
		if (len > 1 && p[0] == '+' && !later_off && !system_feature(p + 1, len - 1) &&
		    feature_sign(host, p + 1, len - 1) != '+') {
			snprintf(why, n, "the host does not have %.*s", (int)len - 1, p + 1);
			return false;
		}
		p = end ? end + 1 : NULL;
	}
	return true;
}

void target_check_runs_on_host(Target *t, const char *cpu, const char *user_features)
{
	t->runs_on_host = false;
	char *host = LLVMGetHostCPUFeatures();
	const char *base = NULL;
	if (target_cpu_is_host(cpu))
		base = "";
	for (int i = 0; !base && i < COUNT(known_features); i++)
		if (strcmp(known_features[i].cpu, cpu) == 0)
			base = known_features[i].features;
	if (!base) {
		snprintf(t->why_not_host, sizeof t->why_not_host,
			 "vsched does not know which instructions CPU '%s' has (the JIT runs code for "
			 "host, x86-64, x86-64-v2..v4, haswell, skylake-avx512, znver2, znver3)",
			 cpu);
		LLVMDisposeMessage(host);
		return;
	}
	size_t n = strlen(base) + (user_features ? strlen(user_features) : 0) + 2;
	char *all = malloc(n);
	snprintf(t->why_not_host, sizeof t->why_not_host, "out of memory");
	if (all) {
		snprintf(all, n, "%s%s%s", base, *base && user_features && *user_features ? "," : "",
			 user_features ? user_features : "");
		t->runs_on_host = features_on_host(all, host, t->why_not_host, sizeof t->why_not_host);
		free(all);
	}
	LLVMDisposeMessage(host);
}
