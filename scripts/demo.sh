#!/usr/bin/env bash
# make demo: seed 000's row summation (examples/demo/row_sum.tir, 1024 x
# 1022 int32): schedule it with every step proven, write the proof log and
# re-check it with cvc5, show a rejected variant, then compile the proven
# branchy and overcomputed forms through LLVM, run both with the JIT
# against the reference interpreter, and print a summary. DEMO_KERNEL,
# DEMO_SCHEDULE, DEMO_BRANCHY and DEMO_WRONG choose other files.
set -u
cd "$(dirname "$0")/.." || exit 2
bin=./vsched; log=$(mktemp -d /tmp/vsched-demo-XXXXXX); trap 'rm -rf "$log"' EXIT
kernel=${DEMO_KERNEL:-examples/demo/row_sum.tir}
schedule=${DEMO_SCHEDULE:-examples/demo/row_sum.sched}
branchy=${DEMO_BRANCHY:-examples/demo/row_sum_branchy.sched}
wrong=${DEMO_WRONG:-examples/demo/row_sum_undef.sched}
echo "== kernel $kernel, schedule $schedule"
"$bin" run "$kernel" --schedule "$schedule" --log "$log/schedule" || exit 1
echo; echo "== proof log"
"$bin" log show "$log/schedule" | tail -1 || exit 1
echo; echo "== independent re-check with cvc5"
"$bin" log check "$log/schedule" --solver cvc5 | tail -1 || exit 1
echo; echo "== a variant that is refused ($wrong): the padding may hold anything"
"$bin" run "$kernel" --schedule "$wrong" -o /dev/null 2>&1 | sed -n '/REJECTED/,/replay:/p' | grep -v "^  obligation"
echo; echo "== compile (lowering proofs join the log), JIT vs interpreter, run time"
out_b=$("$bin" jit "$kernel" --schedule "$branchy" --trials 1 --repeat 101) || { echo "$out_b"; exit 1; }
out_o=$("$bin" jit "$kernel" --schedule "$schedule" --log "$log/jit" --trials 2 --repeat 101) || { echo "$out_o"; exit 1; }
echo "$out_o" | grep -v "^  step"
"$bin" log check "$log/jit" --solver cvc5 >/dev/null || { echo "demo: the lowering proofs do not re-check"; exit 1; }
t_b=$(echo "$out_b" | sed -n 's/.*run time \([0-9.]*\) ms scheduled.*/\1/p')
t_o=$(echo "$out_o" | sed -n 's/.*run time \([0-9.]*\) ms scheduled.*/\1/p')
echo; echo "== summary"
echo "$out_o" | grep "^schedule:"
echo "branchy (guard j < 1022 kept):  $t_b ms"
echo "overcomputed (branch-free):      $t_o ms"
echo "demo: ok"
