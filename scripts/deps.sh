#!/usr/bin/env bash
# Install what vsched needs to build and test, if it is missing: as root
# through apt-get, otherwise print the exact command and fail.
set -u
need=()
have_header() { printf '#include <%s>\n' "$1" | cc -E -x c - >/dev/null 2>&1; }
have_header check.h        || need+=(check)
have_header z3.h           || need+=(libz3-dev)
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
# clang's sanitizer and libFuzzer runtimes
clang_rt=$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.asan-x86_64.a
[ -f "$clang_rt" ] || need+=("libclang-rt-$(clang --version 2>/dev/null | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)-dev")
[ ${#need[@]} -eq 0 ] && exit 0
cmd="apt-get update && apt-get install -y ${need[*]}"
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  (apt-get update -qq && apt-get install -y -qq "${need[@]}") >/dev/null || { echo "deps: failed: $cmd" >&2; exit 1; }
else
  echo "deps: missing ${need[*]}; run as root:" >&2
  echo "  $cmd" >&2
  exit 1
fi
