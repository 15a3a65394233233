#!/bin/sh
# scripts/fuzz.sh [SECONDS] — build the libFuzzer targets in build-fuzz/
# (clang, ASan + UBSan; only kernel/*.c and rewrites/schedule/script.c, no z3 or
# LLVM), seed corpora from the conformance cases and tests/data, and run
# each target for SECONDS (default 20). Exits non-zero on a crash and
# prints the crashing input's path.
set -u
cd "$(dirname "$0")/.." || exit 2

DURATION=${1:-20}
CC=${FUZZ_CC:-clang}
OUT=build-fuzz
SHARED=${VS_SHARED:-../shared}
FLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -I. -Iinclude"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz: $CC not found (libFuzzer needs clang)" >&2
	exit 2
fi
mkdir -p "$OUT/obj" || exit 2

# Library objects: one archive, so a target pulls in only what it uses.
rm -f "$OUT/libfuzzlib.a"
objs=""
for src in kernel/*.c; do
	[ -f "$src" ] || continue
	obj="$OUT/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')"
	# a file being written elsewhere may not compile: the link says
	# whether a target needed it
	if $CC $FLAGS $SAN -fsanitize=fuzzer-no-link -c "$src" -o "$obj"; then
		objs="$objs $obj"
	else
		echo "fuzz: $src does not compile; left out" >&2
	fi
done
# the schedule-script reader: a target of its own (a move of the file
# must not turn the target off quietly)
SCRIPT_SRC=rewrites/schedule/script.c
obj="$OUT/obj/rewrites_script.o"
if ! $CC $FLAGS $SAN -fsanitize=fuzzer-no-link -c "$SCRIPT_SRC" -o "$obj"; then
	echo "fuzz: $SCRIPT_SRC does not compile" >&2
	exit 2
fi
objs="$objs $obj"
ar rcs "$OUT/libfuzzlib.a" $objs || exit 2

# A dictionary of the language's words helps the mutator reach the parser.
cat > "$OUT/tir.dict" <<'DICT'
"@T.prim_func"
"@I.ir_module"
"class "
"def "
"T.Buffer"
"T.handle"
"T.match_buffer"
"T.alloc_buffer"
"scope=\"local\""
"dtype="
"\"int32\""
"\"float32\""
"\"int64\""
"\"bool\""
"T.int32"
"T.int64"
"T.float32"
"T.float64"
"for "
" in "
"T.serial("
"T.grid("
"T.parallel("
"T.vectorized("
"T.unroll("
"range("
"if "
"elif "
"else:"
"with T.block("
"T.assume("
"T.evaluate("
"T.undef()"
"T.min("
"T.max("
"T.floordiv("
"T.floormod("
"T.if_then_else("
"T.cast("
"pass"
" and "
" or "
"not "
"//"
"%"
"<="
">="
"=="
"!="
"+="
"\"inf\""
"\"-inf\""
"1e-3"
"-0.0"
"    "
"\x0a"
"sch."
"lambda "
"T.axis_separator"
"pad_value="
"index_map="
"buffer="
"block="
"factor="
"T.int8("
"T.uint8("
"T.bool"
"9223372036854775807"
"-9223372036854775808"
"2147483648"
"\"nan\""
"x: T.int64 = "
"True"
"False"
" if "
" else "
";"
"\\"
"\"\"\""
DICT

# Seeds: every .tir / .sched under the conformance cases and tests/data.
SEEDS="$OUT/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS/parse" "$SEEDS/script" "$OUT/corpus/parse" "$OUT/corpus/script"
n=0
# (open regressions, first line `# open: ...`, are known failures: they
# would stop the run at once, so they are not seeds.)
for f in "$SHARED"/conformance/*/*.tir tests/data/*.tir tests/data/*/*.tir; do
	[ -f "$f" ] || continue
	head -n 1 "$f" | grep -q '^# open:' && continue
	n=$((n + 1))
	cp "$f" "$SEEDS/parse/seed$n.tir"
done
for f in "$SHARED"/conformance/*/*.sched tests/data/*.sched tests/data/*/*.sched; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	cp "$f" "$SEEDS/script/seed$n.sched"
done

# Each run writes its crashes into a fresh folder, so the ones listed
# are exactly this run's.
RUN_DIR="$OUT/crashes/$(date +%Y%m%d-%H%M%S)-$$"
status=0
run_target() { # name seconds
	name=$1
	secs=$2
	bin="$OUT/fuzz_$name"
	mkdir -p "$RUN_DIR"
	echo "fuzz: running $bin for ${secs}s"
	ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	"$bin" -max_len=4096 -max_total_time="$secs" -timeout=10 \
		-dict="$OUT/tir.dict" -print_final_stats=1 \
		-artifact_prefix="$RUN_DIR/$name-" \
		"$OUT/corpus/$name" "$SEEDS/$name"
	rc=$?
	if [ $rc -ne 0 ]; then
		status=1
		echo "fuzz: $name FAILED (exit $rc); crashing input(s):" >&2
		found=0
		for c in "$RUN_DIR"/"$name"-*; do
			[ -f "$c" ] || continue
			echo "  $c" >&2
			found=1
		done
		[ $found -eq 1 ] || echo "  (none written; see the log above)" >&2
	fi
}

targets=""
if $CC $FLAGS $SAN -fsanitize=fuzzer tests/fuzz/fuzz_parse.c \
	"$OUT/libfuzzlib.a" -lm -o "$OUT/fuzz_parse"; then
	targets="parse"
else
	echo "fuzz: fuzz_parse does not build" >&2
	exit 2
fi
if $CC $FLAGS $SAN -fsanitize=fuzzer tests/fuzz/fuzz_script.c \
	"$OUT/libfuzzlib.a" -lm -o "$OUT/fuzz_script"; then
	targets="$targets script"
else
	echo "fuzz: fuzz_script does not build" >&2
	exit 2
fi

count=$(echo $targets | wc -w)
each=$(( DURATION / count ))
[ "$each" -ge 1 ] || each=1
for t in $targets; do
	run_target "$t" "$each"
done
rmdir "$RUN_DIR" 2>/dev/null
exit $status
