#!/usr/bin/env bash
# make demo: schedule a bundled kernel with every step proven, write the
# proof log, re-check it with cvc5, show a rejected step, then compile the
# proven result through the backend (LLVM), run it with the JIT against
# the reference interpreter and time it. Kernel-agnostic: DEMO_KERNEL,
# DEMO_SCHEDULE and DEMO_WRONG choose the files.
set -u
cd "$(dirname "$0")/.." || exit 2
bin=./vsched; log=$(mktemp -d /tmp/vsched-demo-XXXXXX)
kernel=${DEMO_KERNEL:-examples/demo/matmul.tir}
schedule=${DEMO_SCHEDULE:-examples/demo/matmul.sched}
wrong=${DEMO_WRONG:-examples/demo/wrong.sched}
echo "== kernel: $kernel, schedule: $schedule"
"$bin" run "$kernel" --schedule "$schedule" --log "$log" || exit 1
echo; echo "== proof log ($log)"
"$bin" log show "$log" || exit 1
echo; echo "== independent re-check with cvc5"
"$bin" log check "$log" --solver cvc5 || exit 1
echo; echo "== a wrong schedule ($wrong) is rejected:"
"$bin" run "$kernel" --schedule "$wrong" -o /dev/null
rc=$?
[ $rc -eq 1 ] || { echo "demo: expected the wrong schedule to be rejected (exit 1), got $rc"; exit 1; }
echo; echo "== compile the proven result (lowering proofs join the log), JIT vs interpreter, run time"
jitlog=$(mktemp -d /tmp/vsched-demo-jit-XXXXXX)
"$bin" jit "$kernel" --schedule "$schedule" --log "$jitlog" --trials 5 --repeat 21 || exit 1
"$bin" log check "$jitlog" --solver cvc5 >/dev/null || { echo "demo: the lowering proofs do not re-check"; exit 1; }
echo; echo "== the C header of the compiled kernel"
"$bin" build "$kernel" --schedule "$schedule" --emit header || exit 1
rm -rf "$jitlog"
echo "demo: ok"
