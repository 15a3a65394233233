#!/usr/bin/env bash
# Run the shared conformance cases through the command line with the
# shared runner (../shared/tools/run-cases.sh): the outside view of what
# suite conformance checks through the API.
# Usage: scripts/conformance.sh [VSCHED] [SHARED]
set -u
bin=${1:-./vsched}; shared=${2:-../shared}
cases="$shared/conformance"
[ -d "$cases" ] || { echo "conformance: $cases not found, skipped"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/vsched"
rc=0
"$shared/tools/run-cases.sh" "$tmp" "$cases" -v || rc=1
# the cases written as TVM writes TensorIR (interfaces.md)
if [ -d "$shared/conformance-tensorir" ]; then
	"$shared/tools/run-cases.sh" "$tmp" "$shared/conformance-tensorir" -v || rc=1
fi
exit $rc
