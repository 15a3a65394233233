#!/usr/bin/env bash
# Install what vsched needs to build and test, if it is missing: as root
# through apt-get, otherwise print the exact command and fail.
set -u
need=()
have_header() { printf '#include <%s>\n' "$1" | cc -E -x c - >/dev/null 2>&1; }
have_header check.h        || need+=(check)
have_header z3.h           || need+=(libz3-dev)
have_header sqlite3.h      || need+=(libsqlite3-dev)
command -v z3    >/dev/null || need+=(z3)
command -v cvc5  >/dev/null || need+=(cvc5)
command -v clang >/dev/null || need+=(clang)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v python3 >/dev/null || need+=(python3)
if ! command -v llvm-config >/dev/null && ! command -v llvm-config-14 >/dev/null; then
  need+=(llvm-dev)
fi
# make bench: single-threaded OpenBLAS as the matmul reference
pkg-config --exists openblas 2>/dev/null || need+=(libopenblas-dev)
# `deps.sh bench` (make bench only, not make test): oneDNN, the conv2d reference
if [ "${1:-}" = bench ]; then
  have_header oneapi/dnnl/dnnl.h || need+=(libdnnl-dev)
fi
install() {
  [ $# -eq 0 ] && return 0
  local cmd="apt-get update && apt-get install -y $*"
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing $*"
    export DEBIAN_FRONTEND=noninteractive
    (apt-get update -qq && apt-get install -y -qq "$@") >/dev/null || { echo "deps: failed: $cmd" >&2; exit 1; }
  else
    echo "deps: missing $*; run as root:" >&2
    echo "  $cmd" >&2
    exit 1
  fi
}
install "${need[@]}"
# clang's sanitizer and libFuzzer runtimes: their package is named after
# clang's major version, known only once clang is there
clang_rt=$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.asan-x86_64.a
if [ ! -f "$clang_rt" ]; then
  v=$(clang --version 2>/dev/null | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)
  [ -n "$v" ] || { echo "deps: clang has no version number; cannot name its runtime package" >&2; exit 1; }
  install "libclang-rt-$v-dev"
fi
exit 0
