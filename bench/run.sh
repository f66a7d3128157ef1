#!/bin/sh
# bench/run.sh BUILD - the benchmarks (make bench), each run BENCH_RUNS
# times (default 5) and reported as its median and spread (min .. max),
# against its target where it has one (issue 11):
#   - tcc-grade plans/baseline.yaml, wall time      <= 1.0 s
#   - tcc-grade plans/best.yaml, wall time          <= 0.5 s
#   - peak RSS of tcc-grade plans/baseline.yaml     <= 256 MiB (its P1 is the
#     larger problem; /usr/bin/time, from Debian's `time`)
#   - tcc-sim --timing-only on the synthetic P1-sized bench program
#     (bench/gen_bench.c): instructions per second  >= 10 M/s
#   - plans/best.yaml: D1 <= 30,000 cycles, P1 <= 120,000, score >= 5,000,
#     each problem's ratio to its lower bound (issues 8 and 9), and tcc-gen on
#     it for P1 and D1 <= 50 ms
#   - tcc-census plans/census-seeds.yaml (7,776 points)   <= 250 ms
#   - a tcc-tune evaluation of plans/baseline.yaml's and best.yaml's P1
#     (tcc-tune --eval-job) <= 2x tcc-gen + tcc-sim --timing-only of it
# and, without targets, the CPU time (user + system) of the grades and the
# timing-only rate per CPU second, the same program with numerics and power (s,
# instructions/s, MMA GFLOP/s) and tcc-gen on plans/baseline.yaml for P1 and
# D1 (ms), and a process that does nothing, timed alike (the harness's own
# cost, which every wall time includes).  bench/bench_json prints the table
# (with the previous run's medians) and writes BUILD/bench/bench.json (the
# previous one is kept as bench.prev.json).  Wall times depend on the
# machine and its load: a benchmark, never a test.  Run from the repository
# top.
set -e
B=${1:-build}
N=${BENCH_RUNS:-5}
out=$B/bench
prog=$out/bench.asm
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench: $TIME missing (tools/deps.sh installs Debian's time)"; exit 2; }
"$B/bench/gen_bench" >"$prog"
fig=$out/figures.tsv
: >"$fig"

# runs CMD...: CMD N times; prints one "WALL_S MAXRSS_KB CPU_S" line per
# run (CPU = user + system, of every thread: steadier than the wall time on
# a shared machine).
# Exit status 1 (a constraint fails) is a result, not an error.
runs() {
  i=0
  while [ $i -lt "$N" ]; do
    i=$((i + 1))
    s=$(date +%s.%N)
    "$TIME" -f '%M %U %S' -o "$out/rss" "$@" >"$out/stdout" 2>"$out/stderr" || [ $? -eq 1 ] ||
      { cat "$out/stderr"; exit 2; }
    e=$(date +%s.%N)
    echo "$(awk "BEGIN { print $e - $s }") $(tail -n 1 "$out/rss" | awk '{ print $1, $2 + $3 }')"
  done
}
# figure NAME WHAT UNIT BETTER TARGET < values (one per line): a line of $fig
figure() {
  vals=$(tr '\n' '\t' | sed 's/\t$//')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(printf '%s\n' "$vals" | tr '\t' '\n' | wc -l)" "$vals" >>"$fig"
}

for plan in baseline best; do
  runs "$B/tcc-grade" plans/$plan.yaml >"$out/grade-$plan"
done
target() { [ "$1" = baseline ] && echo 1.0 || echo 0.5; }
for plan in baseline best; do
  awk '{ print $1 }' "$out/grade-$plan" | figure "grade_${plan}_wall" "tcc-grade plans/$plan.yaml" s lower "$(target $plan)"
done
awk '{ print $2 / 1024 }' "$out/grade-baseline" | figure grade_baseline_rss "tcc-grade plans/baseline.yaml, peak RSS" MiB lower 256
for plan in baseline best; do
  awk '{ print $3 }' "$out/grade-$plan" | figure "grade_${plan}_cpu" "tcc-grade plans/$plan.yaml, CPU" s lower -
done

# the plan figures of issues 8 and 9: plans/best.yaml's cycles against the
# targets (D1 <= 30,000, P1 <= 120,000, score >= 5,000), and each problem's
# ratio to its lower bound (docs/bounds.md); the same on every run
"$B/tcc-grade" plans/best.yaml >"$out/best-grade" || [ $? -eq 1 ]
awk '$1 == "d1" { print $2 }' "$out/best-grade" | figure best_d1_cycles "plans/best.yaml D1" cycles lower 30000
awk '$1 == "bound" && $2 == "d1" { print $NF }' "$out/best-grade" | figure best_d1_bound "plans/best.yaml D1 / lower bound" x lower -
awk '$1 == "p1" { print $2 }' "$out/best-grade" | figure best_p1_cycles "plans/best.yaml P1" cycles lower 120000
awk '$1 == "bound" && $2 == "p1" { print $NF }' "$out/best-grade" | figure best_p1_bound "plans/best.yaml P1 / lower bound" x lower -
awk '$1 == "score" { print $2 }' "$out/best-grade" | figure best_score "plans/best.yaml score" points higher 5000

# the synthetic program: timing only (instructions/s), then everything
"$B/tcc-sim" --json "$prog" >"$out/out.json" || [ $? -eq 1 ]
insns=$(sed -n 's/^  "insns" : \([0-9]*\),*$/\1/p' "$out/out.json")
blocks=$(sed -n 's/^  "mma_blocks" : \([0-9]*\),*$/\1/p' "$out/out.json")
# a report these figures cannot read is the bench's failure, not a figure of 0
[ -n "$insns" ] && [ -n "$blocks" ] || { echo "bench: cannot read insns and mma_blocks of $out/out.json" >&2; exit 2; }
runs "$B/tcc-sim" --timing-only "$prog" >"$out/timing"
awk -v n="$insns" '{ print n / $1 / 1e6 }' "$out/timing" |
  figure sim_timing_minstr "tcc-sim --timing-only bench ($insns insns)" Minstr/s higher 10
awk -v n="$insns" '{ print n / $3 / 1e6 }' "$out/timing" |
  figure sim_timing_minstr_cpu "tcc-sim --timing-only bench, per CPU second" Minstr/s higher -
runs "$B/tcc-sim" "$prog" >"$out/full"
awk '{ print $1 }' "$out/full" | figure sim_full_wall "tcc-sim bench, numerics and power" s lower -
awk -v n="$insns" '{ print n / $1 / 1e6 }' "$out/full" | figure sim_full_minstr "tcc-sim bench, numerics and power" Minstr/s higher -
awk -v b="$blocks" '{ print b * 65536 / $1 / 1e9 }' "$out/full" | figure sim_full_gflops "tcc-sim bench, MMA" GFLOP/s higher -

# compile time: tcc-gen PLAN --problem P, the power fitting's measuring run
# included (plans/best.yaml's target: 1 s; the compile alone was 50 ms)
for plan in baseline best; do
  for p in p1 d1; do
    runs "$B/tcc-gen" plans/$plan.yaml --problem $p -o "$out/$p.asm" >"$out/gen-$p"
    t=-
    [ $plan = best ] && t=1000
    awk '{ print $1 * 1000 }' "$out/gen-$p" | figure "gen_${plan}_${p}_ms" "tcc-gen plans/$plan.yaml --problem $p" ms lower $t
  done
done

# a tcc-tune evaluation (compile, fit, timing: tcc-tune --eval-job, what each
# point of a search costs) against tcc-gen + tcc-sim --timing-only of the
# same plan (target: at most 2x; the fitting's measuring run is the timing)
for plan in baseline best; do
  cp plans/$plan.yaml "$out/eval-$plan.yaml"
  runs "$B/tcc-tune" --eval-job "$out/eval-$plan.yaml" --problem p1 >"$out/tune-eval-$plan"
  runs sh -c "'$B/tcc-gen' plans/$plan.yaml --problem p1 -o '$out/eval.asm' && '$B/tcc-sim' --timing-only '$out/eval.asm' >/dev/null" \
    >"$out/gen-sim-$plan"
  awk '{ print $1 * 1000 }' "$out/tune-eval-$plan" | figure "tune_eval_${plan}_ms" "tcc-tune --eval-job plans/$plan.yaml (p1)" ms lower -
  paste "$out/tune-eval-$plan" "$out/gen-sim-$plan" | awk '{ print $1 / $4 }' |
    figure "tune_eval_${plan}_ratio" "  / (tcc-gen + tcc-sim --timing-only), wall" x lower 2
done

# the harness itself: a process that does nothing, timed as the others are
# (fork, exec, /usr/bin/time).  Every wall time above includes it; on this
# VM it moves with the host's load (5.7 ms on a quiet day, 11 to 18 on others)
runs /bin/true >"$out/true"
awk '{ print $1 * 1000 }' "$out/true" | figure harness_true_ms "/bin/true, timed alike (the harness)" ms lower -

# tcc-census on the seeds' space, 7,776 points (issue 10: well under a second)
runs "$B/tcc-census" plans/census-seeds.yaml -o "$out/census.csv" >"$out/census"
awk '{ print $1 * 1000 }' "$out/census" | figure census_seeds_ms "tcc-census plans/census-seeds.yaml" ms lower 250

[ -e "$out/bench.json" ] && mv "$out/bench.json" "$out/bench.prev.json"
echo "bench: median [min .. max] of $N runs ($(nproc) processors; load $(cut -d' ' -f1-3 /proc/loadavg))"
"$B/bench/bench_json" "$out/bench.json" "$out/bench.prev.json" <"$fig"
