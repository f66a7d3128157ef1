#!/bin/sh
# bench/run.sh BUILD - the benchmarks (make bench): simulate the synthetic
# P1-sized program with numerics and power, then timing only, and report the
# median wall time of 3 runs, instructions/s and MMA GFLOP/s; then the
# compile time of tcc-gen on plans/baseline.yaml for P1 and D1 (median of 5
# runs each, in ms; the target is 50 ms).  Run from the repository top.
set -e
B=${1:-build}
prog=$B/bench/bench.asm
$B/bench/gen_bench > "$prog"
median() { sort -n | sed -n 2p; }
run() { # $1: extra flag
  for i in 1 2 3; do
    s=$(date +%s.%N)
    $B/tcc-sim "$prog" --json $1 > "$B/bench/out.json" || [ $? -eq 1 ]
    e=$(date +%s.%N)
    awk "BEGIN{print $e - $s}"
  done | median
}
full=$(run "")
insns=$(sed -n 's/.*"insns": \([0-9]*\).*/\1/p' "$B/bench/out.json")
blocks=$(sed -n 's/.*"mma_blocks": \([0-9]*\).*/\1/p' "$B/bench/out.json")
cycles=$(sed -n 's/.*"cycles": \([0-9]*\).*/\1/p' "$B/bench/out.json")
fast=$(run --timing-only)
printf 'bench: %s instructions, %s MMA blocks, %s simulated cycles, 64 WGs\n' "$insns" "$blocks" "$cycles"
awk -v f="$full" -v t="$fast" -v n="$insns" -v b="$blocks" 'BEGIN {
  printf "full (numerics+power): %.3f s median of 3, %.2f M instr/s, %.2f MMA GFLOP/s\n", f, n / f / 1e6, b * 65536 / f / 1e9
  printf "timing only:           %.3f s median of 3, %.2f M instr/s, %.1fx faster\n", t, n / t / 1e6, f / t
}'
# compile time: tcc-gen PLAN --problem P -o FILE, median of 5 runs in ms
compile() { # $1: problem
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N)
    "$B/tcc-gen" plans/baseline.yaml --problem "$1" -o "$B/bench/$1.asm"
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
  done | sort -n | sed -n 3p
}
for p in p1 d1; do
  us=$(compile $p)
  awk -v p=$p -v us="$us" 'BEGIN { printf "tcc-gen %s: %.1f ms median of 5 (plans/baseline.yaml)\n", p, us / 1000 }'
done
