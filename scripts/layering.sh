#!/usr/bin/env bash
# scripts/layering.sh [ROOT] — the "may use" column of
# ../shared/design/architecture.md as a check. Every #include "..." of a
# source file must name a header of a folder its own folder may use (a
# header named without a folder is in the file's own); only smt/ includes z3.h
# and only backend/ includes llvm-c headers (and not backend.h, which the
# API includes, nor the runtime that emitted objects link against).
# Prints each forbidden include as file:line: message; exits 1 if any.
set -u
root=${1:-.}
cd "$root" || exit 2

# tests/data holds fixtures, not sources: C programs built outside the tree
# against an installed vsched.h or an emitted header
files=$(find kernel rewrites smt backend api cli include tests -path tests/data -prune -o -name '*.[ch]' -print 2>/dev/null | sort)
[ -n "$files" ] || { echo "layering: no sources under $root"; exit 2; }

# shellcheck disable=SC2086
{
	for f in $files; do echo "FILE:$f"; done
	grep -nHE '^[[:space:]]*#[[:space:]]*include' $files
} | awk '
BEGIN {
	# folder -> the folders whose headers it may include
	may["kernel"] = "kernel"
	may["kernel/analysis"] = "kernel kernel/analysis"
	may["rewrites"] = "kernel kernel/analysis rewrites"
	may["rewrites/schedule"] = "kernel kernel/analysis rewrites rewrites/schedule smt"
	# smt/range.c bounds expressions with the one interval engine
	may["smt"] = "kernel kernel/analysis smt"
	may["backend"] = "kernel kernel/analysis smt backend"
	may["api"] = "ANY"; may["tests"] = "ANY"; may["tests/fuzz"] = "ANY"
	may["cli"] = "PUBLIC"; may["include"] = "PUBLIC"
	bad = 0
}
function dirof(p) { sub(/\/[^\/]*$/, "", p); return p }
function report(where, msg) { print where ": " msg; bad = 1 }
/^FILE:/ {
	f = substr($0, 6); d = dirof(f)
	if (!(d in may)) report(f, "folder \x27" d "/\x27 is not in the layering table (scripts/layering.sh)")
	next
}
{
	# file:line:text
	f = $0; sub(/:.*/, "", f)
	rest = substr($0, length(f) + 2)
	line = rest; sub(/:.*/, "", line)
	text = substr(rest, length(line) + 2)
	d = dirof(f); where = f ":" line
	if (!(d in may)) next
	if (text ~ /<z3/) { if (d != "smt") report(where, "only smt/ includes z3.h"); next }
	if (text ~ /llvm-c\//) {
		if (f ~ /^backend\/(backend\.h|runtime\.[ch])$/) report(where, "llvm-c in a backend file the API or the runtime uses")
		else if (d != "backend") report(where, "only backend/ includes llvm-c headers")
		next
	}
	if (text !~ /"/) next # a system header
	h = text; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
	if (may[d] == "ANY") next
	if (may[d] == "PUBLIC") {
		if (h != "vsched.h") report(where, "\x27" d "/\x27 may include only the public header vsched.h, not " h)
		next
	}
	# a header named without a folder sits beside the including file
	hd = h ~ /\// ? dirof(h) : d
	n = split(may[d], ok, " "); found = 0
	for (i = 1; i <= n; i++) if (ok[i] == hd) found = 1
	if (!found) report(where, "\x27" d "/\x27 may not use \x27" hd "/\x27 (" h "); it may use: " may[d])
}
END { exit bad }
'
