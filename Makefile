# vsched — plain GNU make. `make` builds libvsched.a and ./vsched;
# `make test` installs missing system packages (scripts/deps.sh) and runs
# every check suite plus the conformance cases; `make asan` does the same
# under AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/.

CC      ?= cc
BUILD   ?= build
LLVM_CONFIG ?= $(shell command -v llvm-config 2>/dev/null || command -v llvm-config-14 2>/dev/null || echo llvm-config)

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
# OPT may be overridden (make asan does); the rest always applies, even
# when CFLAGS is given on the command line.
OPT     ?= -O2 -g
# -fPIC: the same objects make libvsched.a and libvsched.so
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC $(WARN) -MMD -MP -Iinclude -I. $(OPT) $(CFLAGS)
SANFLAGS :=
LLVM_CFLAGS = $(shell $(LLVM_CONFIG) --cflags 2>/dev/null | sed 's/-std=[^ ]*//')
LLVM_LIBS   = $(shell $(LLVM_CONFIG) --ldflags --libs core orcjit native passes target analysis 2>/dev/null) $(shell $(LLVM_CONFIG) --system-libs 2>/dev/null)
CHECK_LIBS  = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
LIBS    = -lz3 -lsqlite3 -lpthread -lm

KERNEL_SRC   := $(sort $(wildcard kernel/*.c kernel/analysis/*.c))
REWRITES_SRC := $(sort $(wildcard rewrites/*.c rewrites/schedule/*.c))
SMT_SRC      := $(sort $(wildcard smt/*.c))
BACKEND_SRC  := $(sort $(wildcard backend/*.c))
API_SRC      := $(sort $(wildcard api/*.c))
CLI_SRC      := $(sort $(wildcard cli/*.c))
TEST_SRC     := $(sort $(wildcard tests/*.c))

ifneq ($(BACKEND_SRC),)
LIBS += $(LLVM_LIBS)
endif

LIB_SRC := $(KERNEL_SRC) $(REWRITES_SRC) $(SMT_SRC) $(BACKEND_SRC) $(API_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

LIBVS   := $(BUILD)/libvsched.a
VSCHED  := vsched
ifneq ($(BUILD),build)
VSCHED  := $(BUILD)/vsched
endif
TESTBIN := $(BUILD)/run_tests

.PHONY: all test asan check-deps conformance fuzz clean demo bench soundness install uninstall
all: $(LIBVS) $(VSCHED)

# Objects are rebuilt when the compiler flags change (a flags file that is
# rewritten only when they differ).
FLAGS_STAMP := $(BUILD)/.flags
.PHONY: FORCE
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(CC) $(ALL_CFLAGS) $(SANFLAGS)' | cmp -s - $@ || echo '$(CC) $(ALL_CFLAGS) $(SANFLAGS)' > $@
$(LIB_OBJ) $(CLI_OBJ) $(TEST_OBJ): $(FLAGS_STAMP)

# The library and the CLI switch on every enumerator (style.md 3: no
# default that quietly accepts a new node kind); tests may use default.
$(LIB_OBJ) $(CLI_OBJ): LIB_WARN := -Wswitch-enum

$(BUILD)/backend/%.o: backend/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_WARN) $(SANFLAGS) $(LLVM_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_WARN) $(SANFLAGS) -c $< -o $@

$(LIBVS): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(VSCHED): $(CLI_OBJ) $(LIBVS)
	$(CC) $(SANFLAGS) -o $@ $(CLI_OBJ) $(LIBVS) $(LIBS)

$(TESTBIN): $(TEST_OBJ) $(LIBVS)
	$(CC) $(SANFLAGS) -Wl,--wrap=tcase_create -o $@ $(TEST_OBJ) $(LIBVS) $(CHECK_LIBS) $(LIBS)

# ---- backend runtime: the pthread pool that emitted objects with
# parallel loops link against (libvsched.a holds it too) ----
LIBRT := $(BUILD)/libvsched_rt.a
all: $(LIBRT)
$(LIBRT): $(BUILD)/backend/runtime.o
	@rm -f $@
	ar rcs $@ $^

# ---- the shared library: soname libvsched.so.MAJOR, only vs_* symbols
# exported (scripts/libvsched.map), linked against everything it needs so
# that -lvsched alone links a program ----
VERSION   := $(shell sed -n 's/^\#define VS_VERSION_STRING "\(.*\)"/\1/p' include/vsched.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
LIBSO     := $(BUILD)/libvsched.so.$(VERSION)
ifeq ($(SANFLAGS),)
all: $(LIBSO)
endif
$(LIBSO): $(LIB_OBJ) scripts/libvsched.map
	$(CC) -shared -Wl,-soname,libvsched.so.$(SOVERSION) -Wl,--version-script=scripts/libvsched.map \
	  -Wl,--no-undefined -o $@ $(LIB_OBJ) $(LIBS)

# ---- make install PREFIX=/usr/local DESTDIR=: the CLI, both libraries,
# the runtime library of emitted objects, the header and vsched.pc ----
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 755 $(VSCHED) $(DESTDIR)$(BINDIR)/vsched
	install -m 644 $(LIBVS) $(LIBRT) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libvsched.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libvsched.so.$(SOVERSION)
	ln -sf libvsched.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libvsched.so
	install -m 644 include/vsched.h $(DESTDIR)$(INCLUDEDIR)/vsched.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(strip $(LIBS))|' \
	  scripts/vsched.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/vsched.pc
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/vsched $(DESTDIR)$(INCLUDEDIR)/vsched.h \
	  $(DESTDIR)$(LIBDIR)/libvsched.a $(DESTDIR)$(LIBDIR)/libvsched_rt.a \
	  $(DESTDIR)$(LIBDIR)/libvsched.so $(DESTDIR)$(LIBDIR)/libvsched.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libvsched.so.$(VERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/vsched.pc

check-deps:
	@scripts/deps.sh
	@scripts/suites.sh

# The check suites run from the top so fixtures resolve as tests/data/...;
# VS_SHARED points at the shared conformance cases (../shared by default).
# The suites run in TEST_JOBS worker processes (default: one per core).
# A test case without a time limit of its own gets 60 s, not check's 4 s:
# on a loaded machine a trivial test missed 4 s.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)

test: check-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) all $(TESTBIN)
	CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} VS_TEST_JOBS=$(TEST_JOBS) VS_BIN=$(abspath $(VSCHED)) $(TESTBIN)
	@$(MAKE) --no-print-directory conformance

conformance: all
	@scripts/conformance.sh ./$(VSCHED) ../shared

asan: check-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) BUILD=build-asan CC=clang \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  OPT="-O1 -g" build-asan/vsched build-asan/run_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_FORK=no \
	  VS_TEST_JOBS=$(TEST_JOBS) VS_BIN=$(abspath build-asan/vsched) build-asan/run_tests

# Long random soundness sweeps outside make test: every seed of SEEDS runs
# the soundness suite with STEPS steps per sweep (each sweep prints its
# committed/rejected/disagreement tally per primitive), TEST_JOBS at once.
SEEDS ?= 1 2 3 4
STEPS ?= 20000
soundness: check-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) all $(TESTBIN)
	@mkdir -p $(BUILD)/soundness
	@echo $(SEEDS) | tr ' ' '\n' | xargs -P $(TEST_JOBS) -I{} sh -c \
	  'VS_SOUNDNESS_SEED={} VS_SOUNDNESS_STEPS=$(STEPS) CK_TIMEOUT_MULTIPLIER=1000 \
	   CK_RUN_SUITE=soundness VS_BIN=$(abspath $(VSCHED)) $(TESTBIN) \
	   > $(BUILD)/soundness/seed-{}.log 2>&1; rc=$$?; \
	   echo "== seed {} (exit $$rc)"; grep -E "^soundness|^  |disagree|:[EF]:" $(BUILD)/soundness/seed-{}.log; exit $$rc'

demo: check-deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

fuzz: check-deps
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz vsched

# ---- examples: C programs over the public header only (include/vsched.h,
# no internal headers on the include path). `make examples` builds them
# into $(BUILD)/examples/; the test binary depends on them, and the `api`
# check suite runs them (make test and make asan alike).
EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BIN := $(EXAMPLE_SRC:%.c=$(BUILD)/%)
.PHONY: examples
examples: $(EXAMPLE_BIN)
$(BUILD)/examples/%: examples/%.c $(LIBVS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Iinclude $(OPT) $(CFLAGS) $(SANFLAGS) $< -o $@ $(LIBVS) $(LIBS)
$(TESTBIN): $(EXAMPLE_BIN)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# ---- make bench: vsched-compiled kernels against naive C (clang -O3
# -march=native) and single-threaded OpenBLAS; results also in
# $(BUILD)/bench-results.txt ----
BENCH := $(BUILD)/bench/bench
$(BUILD)/bench/naive.o: bench/naive.c
	@mkdir -p $(dir $@)
	clang -O3 -march=native -c $< -o $@
# the read kernels behind the row sum's bandwidth figure, compiled alike
$(BUILD)/bench/readbw.o: bench/readbw.c
	@mkdir -p $(dir $@)
	clang -O3 -march=native -c $< -o $@
$(BENCH): bench/bench.c bench/bench_scale.c bench/bench.h $(BUILD)/bench/naive.o $(BUILD)/bench/readbw.o $(LIBVS)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags openblas) -o $@ bench/bench.c bench/bench_scale.c \
	  $(BUILD)/bench/naive.o $(BUILD)/bench/readbw.o $(LIBVS) $(LIBS) $(shell pkg-config --libs openblas) -ldnnl -lgomp
# the interpreter's speed, tree walk vs compiled form (appended to the
# results; `make bench-interp` runs it alone)
INTERP_BENCH := $(BUILD)/bench/interp_bench
$(INTERP_BENCH): bench/interp.c $(LIBVS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ bench/interp.c $(LIBVS) $(LIBS)
.PHONY: bench-interp
bench-interp: $(INTERP_BENCH)
	$(INTERP_BENCH)
# OpenBLAS 0.3.21 does not recognise some recent CPUs and falls back to
# its generic (Prescott) kernels: unless OPENBLAS_CORETYPE is set, pick
# its best kernel for the host's vector ISA, so the comparison is fair.
bench: check-deps
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory all $(BENCH) $(INTERP_BENCH)
	@ct=$${OPENBLAS_CORETYPE:-$$(grep -qw avx512f /proc/cpuinfo && echo SkylakeX || \
	  (grep -qw avx2 /proc/cpuinfo && echo Haswell))}; \
	if [ -n "$$ct" ]; then export OPENBLAS_CORETYPE=$$ct; fi; \
	$(BENCH) $(BUILD)/bench-results.txt
	$(INTERP_BENCH) $(BUILD)/bench-results.txt
