#!/usr/bin/env bash
# make demo: schedule a bundled kernel with every step proven, write the
# proof log, re-check it with cvc5, then show a rejected step.
set -u
cd "$(dirname "$0")/.." || exit 2
bin=./vsched; log=$(mktemp -d /tmp/vsched-demo-XXXXXX)
echo "== kernel: examples/demo/matmul.tir, schedule: examples/demo/matmul.sched"
"$bin" run examples/demo/matmul.tir --schedule examples/demo/matmul.sched --log "$log" || exit 1
echo; echo "== proof log ($log)"
"$bin" log show "$log" || exit 1
echo; echo "== independent re-check with cvc5"
"$bin" log check "$log" --solver cvc5 || exit 1
echo; echo "== a wrong schedule (examples/demo/wrong.sched) is rejected:"
"$bin" run examples/demo/matmul.tir --schedule examples/demo/wrong.sched -o /dev/null
rc=$?
[ $rc -eq 1 ] || { echo "demo: expected the wrong schedule to be rejected (exit 1), got $rc"; exit 1; }
echo "demo: ok"
