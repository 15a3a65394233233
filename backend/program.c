/* backend/program.c — the backend's entry point and the compiled program:
 * backend_build takes a schedule's ProvenModule (only committed, proven
 * steps; annotations proven), lowers every function, generates and optimises one LLVM
 * module; the program then emits it or runs it through ORC LLJIT, and
 * compares JIT runs with the reference interpreter. */
#include "backend/cg.h"
#include "backend/target.h"

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm/Config/llvm-config.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/runtime.h"
#include "kernel/half.h"

struct Program {
	ProvenModule proven;
	Arena arena; /* lowered IR, messages */
	int nfuncs;
	LoweredFunc *funcs;
	BackendStats stats;
	FloatMode fm;
	bool contract_fma;
	Target target;
	LLVMOrcThreadSafeContextRef tsctx;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMOrcLLJITRef jit;
	char *warnings; /* malloc'ed: the build's warnings, one rendered diagnostic
			   each, and the first LLVM warning (a missed vectorization) */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool emit_kind_from_name(const char *name, EmitKind *out)
{
	static const char *const names[] = {"llvm", "asm", "obj", "header"};
	for (int i = 0; i < 4; i++)
		if (name && strcmp(name, names[i]) == 0) {
			*out = (EmitKind)i;
			return true;
		}
	return false;
}

const BackendStats *backend_stats(const Program *p) { return &p->stats; }
int backend_num_funcs(const Program *p) { return p->nfuncs; }

const LoweredFunc *backend_lowered(const Program *p, int i)
{
	return i >= 0 && i < p->nfuncs ? &p->funcs[i] : NULL;
}

const LoweredFunc *backend_find(const Program *p, const char *func)
{
	for (int i = 0; i < p->nfuncs; i++)
		if (!func || strcmp(p->funcs[i].func->name, func) == 0)
			return &p->funcs[i];
	return NULL;
}

void backend_free(Program *p)
{
	if (!p)
		return;
	if (p->jit) {
		LLVMErrorRef err = LLVMOrcDisposeLLJIT(p->jit);
		if (err)
			LLVMConsumeError(err);
	}
	if (p->mod)
		LLVMDisposeModule(p->mod);
	if (p->tsctx)
		LLVMOrcDisposeThreadSafeContext(p->tsctx);
	target_dispose(&p->target);
	arena_free(&p->arena);
	free(p->warnings);
	free(p);
}

/* ---------- building ---------- */

static bool lower_all(Program *p, const BackendOptions *opt, DiagList *d)
{
	const ProvenModule *s = &p->proven;
	const Module *m = s->mod;
	double t0 = now_seconds();
	p->nfuncs = m->nfuncs;
	p->funcs = arena_alloc(&p->arena, sizeof *p->funcs * (size_t)(m->nfuncs ? m->nfuncs : 1));
	FlattenOptions fo = opt->flatten;
	if (fo.prefer != DT_INT64)
		fo.prefer = DT_INT32;
	/* the annotation proofs count with lowering's; a loop compiled
	 * serially is reported like LLVM's warnings */
	LowerStats *ls = &p->stats.lower;
	ls->nobligations += s->annotations.nobligations;
	ls->nproven += s->annotations.nproven;
	ls->nserialized += s->annotations.nserialized;
	ls->solver_seconds += s->annotations.solver_seconds;
	StrBuf all = {0};
	for (const Diag *w = s->warnings.first; w; w = w->next) {
		char *one = diag_render_one(w);
		size_t n = strlen(one);
		while (n && one[n - 1] == '\n')
			one[--n] = 0;
		sb_printf(&all, "%s%s", all.n ? "\n" : "", one);
		free(one);
		diag_add(d, w->level, w->span, "%s", w->message);
	}
	if (all.n)
		p->warnings = sb_take(&all);
	for (int i = 0; i < m->nfuncs; i++) {
		if (!lower_func(&p->arena, s->solver, s->float_mode, s->log, &fo, m->funcs[i], &p->funcs[i],
				&p->stats.lower, d))
			return false;
	}
	p->stats.lower_seconds = now_seconds() - t0;
	return true;
}

/* LLVM reports through the context, never to stderr (library code does
 * not print): errors and warnings are counted and the first warning kept
 * (a `vectorize` LLVM could not carry out is one); remarks are dropped. */
static void on_llvm_diagnostic(LLVMDiagnosticInfoRef di, void *arg)
{
	Program *p = arg;
	LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
	if (sev != LLVMDSError && sev != LLVMDSWarning)
		return;
	p->stats.nllvm_warnings++;
	if (p->stats.nllvm_warnings == 1) {
		char *msg = LLVMGetDiagInfoDescription(di);
		StrBuf b = {0};
		sb_printf(&b, "%s%sLLVM: %s", p->warnings ? p->warnings : "",
			  p->warnings ? "\n" : "", msg ? msg : "?");
		free(p->warnings);
		p->warnings = sb_take(&b);
		LLVMDisposeMessage(msg);
	}
}

const char *backend_warnings(const Program *p) { return p->warnings; }

static bool generate(Program *p, DiagList *d)
{
	double t0 = now_seconds();
	p->tsctx = LLVMOrcCreateNewThreadSafeContext();
	p->ctx = LLVMOrcThreadSafeContextGetContext(p->tsctx);
	LLVMContextSetDiagnosticHandler(p->ctx, on_llvm_diagnostic, p);
	const Module *m = p->proven.mod;
	const char *name = m->name ? m->name : m->funcs[0]->name;
	p->mod = LLVMModuleCreateWithNameInContext(name, p->ctx);
	target_configure_module(&p->target, p->mod);
	Cg cg = {.ctx = p->ctx, .mod = p->mod, .fm = p->fm, .contract_fma = p->contract_fma, .cpu = p->target.cpu,
		 .features = p->target.features, .stats = &p->stats, .d = d};
	cg.md_loop = LLVMGetMDKindIDInContext(p->ctx, "llvm.loop", 9);
	for (int i = 0; i < p->nfuncs && !cg.failed; i++)
		cg_define_kernel(&cg, &p->funcs[i]);
	free(cg.vars);
	free(cg.bufs);
	ptrmap_free(&cg.access_map);
	p->stats.nfuncs = p->nfuncs;
	p->stats.codegen_seconds = now_seconds() - t0;
	return !cg.failed && target_verify(p->mod, d);
}

Program *backend_build(const ProvenModule *s, const BackendOptions *opt, DiagList *d)
{
	BackendOptions o = {0};
	if (opt)
		o = *opt;
	if (!opt)
		o.flatten.allow_int64 = true;
	Program *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	arena_init(&p->arena);
	p->proven = *s;
	p->fm = s->float_mode;
	p->contract_fma = o.contract_fma && s->float_mode == FLOAT_REAL;
	if (!s->mod || s->mod->nfuncs == 0) {
		diag_add(d, DIAG_ERROR, (Span){0}, "nothing to compile: the module has no function");
		backend_free(p);
		return NULL;
	}
	if (!lower_all(p, &o, d) || !target_init(&p->target, &o, d) || !generate(p, d)) {
		backend_free(p);
		return NULL;
	}
	double t0 = now_seconds();
	int level = o.opt_level < 0 ? 0 : o.opt_level ? o.opt_level : 3;
	if (!target_optimize(&p->target, p->mod, level, d)) {
		backend_free(p);
		return NULL;
	}
	p->stats.optimize_seconds = now_seconds() - t0;
	return p;
}

/* ---------- emission ---------- */

char *backend_emit_string(Program *p, EmitKind kind, DiagList *d)
{
	size_t len = 0;
	switch (kind) {
	case EMIT_LLVM: {
		char *s = LLVMPrintModuleToString(p->mod);
		char *r = strdup(s);
		LLVMDisposeMessage(s);
		return r;
	}
	case EMIT_ASM:
		return target_emit(&p->target, p->mod, true, &len, d);
	case EMIT_HEADER:
		return backend_header_text(p, NULL);
	case EMIT_OBJ:
		diag_add(d, DIAG_ERROR, (Span){0}, "an object file is not text: emit it to a file");
		return NULL;
	}
	return NULL;
}

bool backend_emit(Program *p, EmitKind kind, const char *path, DiagList *d)
{
	size_t len = 0;
	char *data = kind == EMIT_OBJ ? target_emit(&p->target, p->mod, false, &len, d)
				      : backend_emit_string(p, kind, d);
	if (!data)
		return false;
	if (kind != EMIT_OBJ)
		len = strlen(data);
	errno = 0;
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, len, f) == len;
	int err = errno;
	if (f && fclose(f) != 0) {
		if (ok)
			err = errno;
		ok = false;
	}
	if (!ok)
		diag_add(d, DIAG_ERROR, (Span){0}, "cannot write %s: %s", path,
			 err ? strerror(err) : "short write");
	free(data);
	return ok;
}

/* ---------- JIT ---------- */

static bool jit_fail(Program *p, LLVMErrorRef err, const char *what, DiagList *d)
{
	diag_add(d, DIAG_ERROR, (Span){0}, "JIT: %s: %s", what, target_error_text(&p->arena, err));
	return false;
}

/* float16 <-> float32 for code compiled without F16C (no_host_cpu, or a
 * host without it): LLVM 14 lowers fpext half / fptrunc to half to calls
 * of __gnu_h2f_ieee and __gnu_f2h_ieee, with the binary16 bits in an
 * integer register; the JIT maps those names to these. (An object
 * emitted for such a CPU needs the two symbols at link time, from
 * compiler-rt's builtins.) Exact, ties to even (kernel/half.h). */
static float jit_f16_to_f32(uint16_t h) { return (float)vs_f16_to_double(h); }
static uint16_t jit_f32_to_f16(float x) { return vs_f16_from_double((double)x); }

/* The run-time functions the kernels call: the pool, malloc, free and the
 * half conversions (LLVM 14) as
 * absolute addresses (they are linked into this process, not
 * necessarily exported), and the rest of the process (memset, memcpy,
 * libm) through a search generator. */
static bool define_runtime(Program *p, LLVMOrcJITDylibRef jd, DiagList *d)
{
	struct {
		const char *name;
		void *addr;
	} syms[] = {
		{"vs_rt_parallel_for", (void *)vs_rt_parallel_for},
		{"malloc", (void *)malloc},
		{"free", (void *)free},
#if LLVM_VERSION_MAJOR < 15
		/* half conversions without F16C (runtime.h); LLVM 15 and later
		 * call __extendhfsf2 / __truncsfhf2 with `half` in xmm registers,
		 * found in the process (libgcc_s of GCC >= 12, compiler-rt) */
		{"__gnu_h2f_ieee", (void *)jit_f16_to_f32},
		{"__gnu_f2h_ieee", (void *)jit_f32_to_f16},
#endif
	};
	enum { NSYMS = sizeof syms / sizeof syms[0] };
	LLVMJITCSymbolMapPair pairs[NSYMS];
	for (int i = 0; i < NSYMS; i++) {
		pairs[i].Name = LLVMOrcLLJITMangleAndIntern(p->jit, syms[i].name);
		pairs[i].Sym.Address = (uint64_t)(uintptr_t)syms[i].addr;
		pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported |
						  LLVMJITSymbolGenericFlagsCallable;
		pairs[i].Sym.Flags.TargetFlags = 0;
	}
	LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, NSYMS));
	if (err)
		return jit_fail(p, err, "cannot define the runtime symbols", d);
	LLVMOrcDefinitionGeneratorRef gen = NULL;
	err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
		&gen, LLVMOrcLLJITGetGlobalPrefix(p->jit), NULL, NULL);
	if (err)
		return jit_fail(p, err, "cannot search the process for symbols", d);
	LLVMOrcJITDylibAddGenerator(jd, gen);
	return true;
}

/* The module the JIT gets: the optimised kernels plus an entry wrapper
 * per kernel with a uniform signature. */
void backend_symbol(const char *func, char *out, size_t n)
{
	static const char *const reserved[] = {
		"main", "auto", "break", "case", "char", "const", "continue", "default", "do",
		"double", "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int",
		"long", "register", "restrict", "return", "short", "signed", "sizeof", "static",
		"struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
		"_Bool", "_Complex", "_Imaginary"};
	for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
		if (strcmp(func, reserved[i]) == 0) {
			snprintf(out, n, "%s_kernel", func);
			return;
		}
	snprintf(out, n, "%s", func);
}

static LLVMModuleRef jit_module(Program *p)
{
	LLVMModuleRef m = LLVMCloneModule(p->mod);
	Cg cg = {.ctx = p->ctx, .mod = m, .fm = p->fm, .contract_fma = p->contract_fma, .cpu = p->target.cpu,
		 .features = p->target.features, .stats = &p->stats};
	for (int i = 0; i < p->nfuncs; i++) {
		char sym[256];
		backend_symbol(p->funcs[i].func->name, sym, sizeof sym);
		LLVMValueRef k = LLVMGetNamedFunction(m, sym);
		if (k)
			cg_define_entry(&cg, &p->funcs[i], k);
	}
	return m;
}

bool backend_jit(Program *p, DiagList *d)
{
	if (p->jit)
		return true;
	if (!p->target.runs_on_host) {
		diag_add(d, DIAG_ERROR, (Span){0},
			 "cannot run code compiled for CPU %s in this process: %s; emit it "
			 "(vsched build) and run it on such a machine",
			 p->target.cpu, p->target.why_not_host);
		return false;
	}
	LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
	LLVMOrcJITTargetMachineBuilderRef jtmb =
		LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(target_machine(&p->target));
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, jtmb);
	LLVMErrorRef err = LLVMOrcCreateLLJIT(&p->jit, jb);
	if (err) {
		p->jit = NULL;
		return jit_fail(p, err, "cannot create LLJIT", d);
	}
	LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(p->jit);
	if (!define_runtime(p, jd, d))
		return false;
	LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(jit_module(p), p->tsctx);
	err = LLVMOrcLLJITAddLLVMIRModule(p->jit, jd, tsm);
	if (err) {
		LLVMOrcDisposeThreadSafeModule(tsm);
		return jit_fail(p, err, "cannot add the module", d);
	}
	return true;
}

static void *lookup_symbol(Program *p, const char *name, DiagList *d)
{
	if (!backend_jit(p, d))
		return NULL;
	LLVMOrcExecutorAddress addr = 0;
	LLVMErrorRef err = LLVMOrcLLJITLookup(p->jit, &addr, name);
	if (err) {
		jit_fail(p, err, name, d);
		return NULL;
	}
	return (void *)(uintptr_t)addr;
}

void *backend_lookup(Program *p, const char *func, DiagList *d)
{
	if (!backend_find(p, func)) {
		diag_add(d, DIAG_ERROR, (Span){0}, "no kernel named %s", func ? func : "(none)");
		return NULL;
	}
	char sym[256];
	backend_symbol(func ? func : p->funcs[0].func->name, sym, sizeof sym);
	return lookup_symbol(p, sym, d);
}

/* ---------- running on interpreter states ---------- */

static size_t elem_size(DType t)
{
	return t == DT_BOOL ? 1 : (size_t)dtype_bits(t) / 8;
}

static void put_value(void *dst, DType t, Value v)
{
	switch (t) {
	case DT_BOOL: case DT_UINT8: *(uint8_t *)dst = (uint8_t)v.i; return;
	case DT_INT8: *(int8_t *)dst = (int8_t)v.i; return;
	case DT_INT16: *(int16_t *)dst = (int16_t)v.i; return;
	case DT_INT32: *(int32_t *)dst = (int32_t)v.i; return;
	case DT_INT64: case DT_HANDLE: *(int64_t *)dst = v.i; return;
	case DT_FLOAT16: { /* binary16 bits, as the generated header declares */
		uint16_t h = vs_f16_from_double(v.f);
		memcpy(dst, &h, sizeof h);
		return;
	}
	case DT_FLOAT32: *(float *)dst = (float)v.f; return;
	case DT_FLOAT64: *(double *)dst = v.f; return;
	case DT_VOID: case DT_COUNT: return;
	}
}

static Value get_value(const void *src, DType t)
{
	Value v = {0};
	switch (t) {
	case DT_BOOL: v.i = *(const uint8_t *)src != 0; break;
	case DT_UINT8: v.i = *(const uint8_t *)src; break;
	case DT_INT8: v.i = *(const int8_t *)src; break;
	case DT_INT16: v.i = *(const int16_t *)src; break;
	case DT_INT32: v.i = *(const int32_t *)src; break;
	case DT_INT64: case DT_HANDLE: v.i = *(const int64_t *)src; break;
	case DT_FLOAT16: {
		uint16_t h;
		memcpy(&h, src, sizeof h);
		v.f = vs_f16_to_double(h);
		break;
	}
	case DT_FLOAT32: v.f = *(const float *)src; break;
	case DT_FLOAT64: v.f = *(const double *)src; break;
	case DT_VOID: case DT_COUNT: break;
	}
	return v;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

typedef int32_t (*EntryFn)(void **args);

/* Typed copies of the state's buffers and scalars, in parameter order. */
typedef struct Marshal {
	int n;
	void **args;
	void **pristine; /* buffers' input bytes, to restore between runs */
	size_t *bytes;
	int64_t *scalar_slots;
} Marshal;

static void marshal_free(Marshal *m)
{
	for (int i = 0; i < m->n; i++) {
		if (m->bytes && m->bytes[i])
			free(m->args[i]);
		if (m->pristine)
			free(m->pristine[i]);
	}
	free(m->args);
	free(m->pristine);
	free(m->bytes);
	free(m->scalar_slots);
}

static bool marshal(const Func *f, const State *st, Marshal *m)
{
	memset(m, 0, sizeof *m);
	m->n = f->nparams;
	m->args = calloc((size_t)m->n + 1, sizeof *m->args);
	m->pristine = calloc((size_t)m->n + 1, sizeof *m->pristine);
	m->bytes = calloc((size_t)m->n + 1, sizeof *m->bytes);
	m->scalar_slots = calloc((size_t)m->n + 1, sizeof *m->scalar_slots);
	if (!m->args || !m->pristine || !m->bytes || !m->scalar_slots)
		return false;
	int ks = 0, kb = 0;
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		if (p->kind == PARAM_SCALAR) {
			put_value(&m->scalar_slots[i], p->var->dtype, st->scalars[ks++]);
			m->args[i] = &m->scalar_slots[i];
			continue;
		}
		const BufState *bs = &st->bufs[kb++];
		size_t es = elem_size(bs->buf->dtype), n = (size_t)(bs->size ? bs->size : 1);
		m->bytes[i] = n * es;
		m->args[i] = aligned_alloc(64, (m->bytes[i] + 63) / 64 * 64);
		m->pristine[i] = malloc(m->bytes[i]);
		if (!m->args[i] || !m->pristine[i])
			return false;
		memset(m->args[i], 0, m->bytes[i]);
		for (int64_t k = 0; k < bs->size; k++)
			put_value((char *)m->args[i] + (size_t)k * es, bs->buf->dtype, bs->data[k]);
		memcpy(m->pristine[i], m->args[i], m->bytes[i]);
	}
	return true;
}

static void unmarshal(const Func *f, State *st, const Marshal *m)
{
	int kb = 0;
	for (int i = 0; i < f->nparams; i++) {
		if (f->params[i].kind == PARAM_SCALAR)
			continue;
		BufState *bs = &st->bufs[kb++];
		size_t es = elem_size(bs->buf->dtype);
		for (int64_t k = 0; k < bs->size; k++) {
			bs->data[k] = get_value((char *)m->args[i] + (size_t)k * es, bs->buf->dtype);
			bs->cell[k] = CELL_INIT;
		}
	}
}

bool backend_run(Program *p, const char *func, State *st, int repeat, double *seconds,
		 DiagList *d)
{
	const LoweredFunc *lf = backend_find(p, func);
	if (!lf) {
		diag_add(d, DIAG_ERROR, (Span){0}, "no kernel named %s", func ? func : "(none)");
		return false;
	}
	char name[512];
	snprintf(name, sizeof name, "__vsched_call_%s", lf->func->name);
	EntryFn entry = (EntryFn)lookup_symbol(p, name, d);
	if (!entry)
		return false;
	Marshal m;
	if (!marshal(lf->func, st, &m)) {
		marshal_free(&m);
		diag_add(d, DIAG_ERROR, (Span){0}, "out of memory for the kernel's buffers");
		return false;
	}
	if (repeat < 1)
		repeat = 1;
	double *times = calloc((size_t)repeat, sizeof *times);
	int32_t status = 0;
	for (int r = 0; r < repeat && times; r++) {
		if (r > 0) { /* the first run's result is the one kept */
			for (int i = 0; i < m.n; i++)
				if (m.bytes[i])
					memcpy(m.args[i], m.pristine[i], m.bytes[i]);
		}
		double t0 = now_seconds();
		int32_t s = entry(m.args);
		times[r] = now_seconds() - t0;
		if (r == 0) {
			status = s;
			unmarshal(lf->func, st, &m);
		}
	}
	if (times && seconds) {
		qsort(times, (size_t)repeat, sizeof *times, cmp_double);
		*seconds = times[repeat / 2];
	}
	free(times);
	marshal_free(&m);
	if (status != 0) {
		diag_add(d, DIAG_ERROR, (Span){0}, "kernel %s returned %d: a local buffer could not be allocated",
			 lf->func->name, status);
		return false;
	}
	return true;
}

/* ---------- JIT against the interpreter ---------- */

static bool has_floats(const Func *f)
{
	for (int i = 0; i < f->nparams; i++) {
		const Param *p = &f->params[i];
		DType t = p->kind == PARAM_SCALAR ? p->var->dtype : p->buf ? p->buf->dtype : DT_INT32;
		if (dtype_is_float(t))
			return true;
	}
	return false;
}

int backend_check(Program *p, const char *func, int trials, uint64_t seed, double rel_tol,
		  char **report)
{
	return backend_check_budget(p, func, trials, seed, rel_tol, BACKEND_CHECK_STEPS, report);
}

int backend_check_budget(Program *p, const char *func, int trials, uint64_t seed,
			 double rel_tol, uint64_t budget_steps, char **report)
{
	const LoweredFunc *lf = backend_find(p, func);
	StrBuf rep = {0};
	int rc = 0, usable = 0;
	if (!lf) {
		sb_printf(&rep, "no kernel named %s\n", func ? func : "(none)");
		*report = sb_take(&rep);
		return 2;
	}
	const Func *f = lf->source;
	if (rel_tol < 0)
		rel_tol = p->fm == FLOAT_IEEE ? 0.0 : BACKEND_REAL_TOLERANCE;
	uint64_t budget = budget_steps, most_steps = 0;
	bool out_of_budget = false;
	int ntrials = trials < 1 ? 1 : trials;
	for (int t = 0; t < ntrials && rc == 0 && !out_of_budget; t++) {
		Arena a;
		arena_init(&a);
		DiagList d;
		diag_init(&d, &a);
		InterpResult r;
		State *in = interp_gen_input(&a, f, seed + (uint64_t)t, &d);
		State *ref = in ? state_clone(&a, in) : NULL;
		if (in && most_steps > budget) {
			/* the trials so far say this one would run past the budget */
			out_of_budget = true;
			sb_printf(&rep, "trial %d not run: the trials so far took up to %llu interpreter "
				  "steps, more than the %llu left of the check's step budget "
				  "(BACKEND_CHECK_STEPS, %llu steps for all trials); a smaller size of "
				  "the kernel can be checked on more inputs\n", t,
				  (unsigned long long)most_steps, (unsigned long long)budget,
				  (unsigned long long)budget_steps);
		} else if (!in) {
			char *msg = diag_render(&d);
			sb_printf(&rep, "cannot generate an input for %s:\n%s", f->name, msg);
			free(msg);
			rc = 2;
		} else if (interp_run(f, ref, budget ? budget : 1, &r) == RUN_LIMIT) {
			out_of_budget = true;
			sb_printf(&rep, "trial %d: the interpreter stopped at the check's step budget "
				  "(BACKEND_CHECK_STEPS, %llu steps for all trials, %llu left for this one), "
				  "so the compiled kernel is not checked on this input; a smaller size of "
				  "the kernel can be checked in full\n", t,
				  (unsigned long long)budget_steps, (unsigned long long)budget);
		} else if (r.status == RUN_OK) {
			budget -= r.steps;
			if (r.steps > most_steps)
				most_steps = r.steps;
			State *jit = state_clone(&a, in);
			char *diff = NULL;
			if (!backend_run(p, f->name, jit, 1, NULL, &d)) {
				char *msg = diag_render(&d);
				sb_printf(&rep, "trial %d: the compiled kernel failed:\n%s", t, msg);
				free(msg);
				rc = 2;
			} else if (!state_equal(ref, jit, p->fm == FLOAT_IEEE, rel_tol, &diff)) {
				char *text = state_format(in);
				sb_printf(&rep, "trial %d (seed %llu): compiled %s differs from the interpreter at %s "
					  "(interpreter vs compiled)\ninput:\n%s", t,
					  (unsigned long long)(seed + (uint64_t)t), f->name, diff ? diff : "?", text);
				free(text);
				rc = 1;
			} else {
				usable++;
			}
			free(diff);
		}
		arena_free(&a);
	}
	if (rc == 0 && usable == 0) {
		if (out_of_budget)
			sb_printf(&rep, "no trial finished within the interpreter's step budget: "
				  "%s is not checked\n", f->name);
		else
			sb_printf(&rep, "no usable trial: %s does not run on any generated input\n",
				  f->name);
		rc = 2;
	} else if (rc == 0) {
		if (rel_tol > 0 && has_floats(f))
			sb_printf(&rep, "%d trials: compiled %s agrees with the interpreter (integers exactly, "
				  "floats within %g relative)\n", usable, f->name, rel_tol);
		else
			sb_printf(&rep, "%d trials: compiled %s agrees with the interpreter exactly\n",
				  usable, f->name);
	}
	*report = sb_take(&rep);
	return rc;
}
