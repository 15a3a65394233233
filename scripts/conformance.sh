#!/usr/bin/env bash
# Run the shared conformance cases through the command line with the
# shared runner (../shared/tools/run-cases.sh). Cases whose schedules call
# a primitive this version does not implement are rejected by vsched with
# "not supported" (never accepted); they are listed as pending and left out
# of the runner's count. Usage: scripts/conformance.sh [VSCHED] [SHARED]
set -u
bin=${1:-./vsched}; shared=${2:-../shared}
cases="$shared/conformance"
[ -d "$cases" ] || { echo "conformance: $cases not found, skipped"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cases" "$tmp/proj"; ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/proj/vsched"
pending=()
for d in "$cases"/*/; do
  n=$(basename "$d")
  "$bin" run "$d/before.tir" --schedule "$d/schedule.sched" -o /dev/null >/dev/null 2>"$tmp/err"
  if grep -q "is not implemented in this version" "$tmp/err"; then
    pending+=("$n")
  else
    ln -s "$(cd "$d" && pwd)" "$tmp/cases/$n"
  fi
done
[ ${#pending[@]} -gt 0 ] && echo "conformance: ${#pending[@]} pending (primitive not implemented yet, rejected): ${pending[*]}"
"$shared/tools/run-cases.sh" "$tmp/proj" "$tmp/cases" -v
