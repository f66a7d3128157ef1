#!/bin/sh
# tests/run_cli.sh TCC_SIM - command-line tests of tcc-sim, and of tcc-gen and
# tcc-grade (found beside TCC_SIM):
#  - every tests/bad/NAME.asm must exit 2 with exactly tests/bad/NAME.err on
#    stderr (one line) and nothing on stdout; or, when there is a
#    tests/bad/NAME.out, exit 1 (a constraint fails) with exactly that report
#    on stdout and nothing on stderr (programs that must fail fast: pinned
#    reports, never timed);
#  - the hand-written tiny programs pass on the four seeds (exit 0);
#  - usage errors exit 2, --help and --version exit 0;
#  - the lower bounds in the report, --json and --profile; --profile's
#    hottest window by knob, stage and task (jq on --json); --trace=FILE:
#    the timeline file, the report unchanged by it, its diagnostics, its
#    time unit and the --trace-max-* limits (values, diagnostics);
#  - tcc-gen: options, one-line diagnostics, exit codes (the compiler's
#    output itself is pinned by tests/run_golden.sh);
#  - tcc-grade: a tiny two-section plan passes with a score; plans over the
#    area or the power budget exit 1.
# Prints [PASS]/[FAIL] per test and a summary; exits 1 on any failure.  A
# known gap is an [XFAIL] (reported, not counted as a failure); when it starts
# to pass it shows as [XPASS] so the mark can be removed.
sim=${1:-build/tcc-sim}
bin=$(dirname "$sim")
gen=$bin/tcc-gen
grade=$bin/tcc-grade
pass=0
fail=0
xfail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); echo "[PASS] $1"; }
ko() { fail=$((fail + 1)); echo "[FAIL] $1"; }
xf() { xfail=$((xfail + 1)); echo "[XFAIL] $1"; }
xp() { pass=$((pass + 1)); echo "[XPASS] $1 (a known gap is fixed: drop its XFAIL mark)"; }

# expect NAME CODE EXPECTED_STDERR: the last command's exit status ($code) is
# CODE, stdout ($tmp/out) is empty and stderr ($tmp/err) is exactly the one
# line EXPECTED_STDERR.
expect() {
  printf '%s\n' "$3" >"$tmp/want"
  if [ "$code" -eq "$2" ] && [ ! -s "$tmp/out" ] && diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then
    ok "$1"
  else
    ko "$1 (exit $code, want $2)"
    cat "$tmp/diff" "$tmp/out"
  fi
}

for f in tests/bad/*.asm; do
  [ -e "$f" ] || continue
  "$sim" "$f" >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ -e "${f%.asm}.out" ]; then # a program whose numerics fail: its exact report
    if [ $code -eq 1 ] && [ ! -s "$tmp/err" ] && diff -u "${f%.asm}.out" "$tmp/out" >"$tmp/diff"; then
      ok "$f"
    else
      ko "$f (exit $code)"
      cat "$tmp/diff" "$tmp/err"
    fi
  elif [ $code -eq 2 ] && [ ! -s "$tmp/out" ] && diff -u "${f%.asm}.err" "$tmp/err" >"$tmp/diff"; then
    ok "$f"
  else
    ko "$f (exit $code)"
    cat "$tmp/diff"
  fi
done

for p in tests/asm/tiny_d1.asm tests/asm/tiny_p1.asm; do
  for seed in 7 13 11 23; do
    if "$sim" "$p" --seed $seed >"$tmp/out" 2>&1; then ok "$p --seed $seed"; else ko "$p --seed $seed"; cat "$tmp/out"; fi
  done
done

"$sim" --help >/dev/null 2>&1 && ok "--help" || ko "--help"
"$sim" --version | grep -q "spec v3" && ok "--version" || ko "--version"
"$sim" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && ok "no argument -> 2" || ko "no argument -> 2"
"$sim" --bogus x.asm >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && ok "unknown option -> 2" || ko "unknown option -> 2"
"$sim" tests/asm/does-not-exist.asm >"$tmp/out" 2>"$tmp/err"
code=$?
expect "missing file -> 2" 2 "tests/asm/does-not-exist.asm:1:1: error: cannot read: No such file or directory"

# a file that cannot be read points at its start, as tcc-gen does: FILE:1:1: error: cannot read: REASON
# (docs/machine.md, "Diagnostics and exit codes")
"$sim" tests >"$tmp/out" 2>"$tmp/err"
code=$?
expect "directory -> 2" 2 "tests:1:1: error: cannot read: Is a directory"
printf '.machine\n.problem p1\n' >"$tmp/noperm.asm"
chmod 000 "$tmp/noperm.asm"
if [ "$(id -u)" -ne 0 ]; then
  "$sim" "$tmp/noperm.asm" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "unreadable file -> 2" 2 "$tmp/noperm.asm:1:1: error: cannot read: Permission denied"
elif command -v setpriv >/dev/null 2>&1; then # root reads anything: test as nobody
  chmod 755 "$tmp"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$sim" "$tmp/noperm.asm" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "unreadable file (as nobody) -> 2" 2 "$tmp/noperm.asm:1:1: error: cannot read: Permission denied"
fi
if [ -e /proc/self/mem ]; then # open succeeds, read fails (EIO)
  "$sim" /proc/self/mem >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "read error -> 2" 2 "/proc/self/mem:1:1: error: cannot read: Input/output error"
fi
# a program over the 1 GiB limit: refused by its size, unread (a sparse file)
if truncate -s 1073741825 "$tmp/big.asm" 2>/dev/null; then
  timeout 60 "$sim" "$tmp/big.asm" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "a program over the 1 GiB limit -> 2, unread" 2 "$tmp/big.asm:1:1: error: program is larger than the limit of 1073741824 bytes"
  rm -f "$tmp/big.asm"
fi
# through a pipe: read to its end (and no further than the limit)
cat tests/asm/tiny_d1.asm | "$sim" --timing-only /dev/stdin >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && ok "a program through a pipe (/dev/stdin) -> 0" ||
  { ko "a program through a pipe (exit $code)"; cat "$tmp/err"; }
"$sim" /dev/null >"$tmp/out" 2>"$tmp/err"
code=$?
expect "empty file -> 2" 2 "/dev/null:1:1: error: expected .machine as the first directive, got end of file"

# --seed: the whole uint64 range (docs/workloads.md: seeds modulo 2^64)
"$sim" tests/asm/tiny_p1.asm --seed 18446744073709551615 >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q '^seed      18446744073709551615$' "$tmp/out" &&
  ok "--seed 2^64-1 -> 0" || { ko "--seed 2^64-1 -> 0 (exit $code)"; cat "$tmp/err"; }
"$sim" tests/asm/tiny_p1.asm --seed 9223372036854775808 --json >"$tmp/out" 2>"$tmp/err"
code=$?
# above 2^63 - 1 (where a JSON reader's double would round it) the seed is
# its decimal digits
[ $code -eq 0 ] && [ "$(jq -r '.seed | tostring' "$tmp/out")" = 9223372036854775808 ] && ok "--seed 2^63 --json -> 0" ||
  ko "--seed 2^63 --json -> 0 (exit $code)"
"$sim" tests/asm/tiny_p1.asm --seed 9223372036854775807 --json >"$tmp/out" 2>"$tmp/err"
[ "$(jq -r '.seed | type' "$tmp/out")" = number ] && grep -q '^  "seed" : 9223372036854775807,$' "$tmp/out" &&
  ok "--seed 2^63-1 --json: a number" || ko "--seed 2^63-1 --json: a number"
for bad in 18446744073709551616 99999999999999999999999 -1 -0 +7 abc 7x '' ' 7'; do
  "$sim" tests/asm/tiny_p1.asm --seed "$bad" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "--seed '$bad' -> 2" 2 "tcc-sim: error: --seed must be an integer 0..18446744073709551615, got '$bad'"
done
"$sim" tests/asm/tiny_p1.asm --seed=-5 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--seed=-5 -> 2" 2 "tcc-sim: error: --seed must be an integer 0..18446744073709551615, got '-5'"
for bad in 0 -1 1000000000000000001 x; do
  "$sim" tests/asm/tiny_p1.asm --max-cycles "$bad" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "--max-cycles '$bad' -> 2" 2 "tcc-sim: error: --max-cycles must be an integer 1..1000000000000000000, got '$bad'"
done
"$sim" tests/asm/tiny_p1.asm --max-cycles 1000000000000000000 >"$tmp/out" 2>&1 && ok "--max-cycles 10^18 -> 0" ||
  { ko "--max-cycles 10^18 -> 0"; cat "$tmp/out"; }

# the lower bound in every report (docs/bounds.md): the binding one and the ratio
"$sim" tests/asm/tiny_p1.asm >"$tmp/out" 2>"$tmp/err"
grep -q '^bound     259 cycles (sfu); cycles / bound = 19.08$' "$tmp/out" &&
  grep -q '^bounds    mma 20, hbm 212, power 1, sfu 259$' "$tmp/out" && ok "report: the bound, named, and the ratio" ||
  { ko "report: the bound, named, and the ratio"; cat "$tmp/out"; }
"$sim" tests/asm/tiny_d1.asm --json >"$tmp/out" 2>"$tmp/err"
got=$(jq -r '[.bound.cycles, .bound.binding, (.bound.ratio * 100 | floor), .bound.chain.cycles, .bound.sfu.cycles,
  .bound.sfu.elements, .bound.sfu.lanes] | join(" ")' "$tmp/out")
[ "$got" = "1092 chain 273 1092 240 199 128" ] && ok "--json: the bound, with the D1 chain and the SFU's" ||
  { ko "--json: the bound, with the D1 chain ($got)"; cat "$tmp/out"; }
# the result schema (docs/tools.md, "Results"): its version, the problem and
# hardware as objects, the status, figures rounded as the text report's
got=$(jq -r '[.schema_version, .tool, .problem.kind, .problem.d_model, .hardware.sms, .status, (.failures | length),
  .numerics_checked, (.window | length), .peak_w, .area_mm2] | map(tostring) | join(" ")' "$tmp/out")
w=$("$sim" tests/asm/tiny_d1.asm | awk '$1 == "power" { print $2 }')
case "$got" in
"1 tcc-sim "*" (spec v"*") d1 32 "*" pass 0 true 2 $w "*) ok "--json: the result schema's fields" ;;
*) ko "--json: the result schema's fields ($got; peak $w)" ;;
esac
if grep -qE '[0-9]\.[0-9]{7,},?$' "$tmp/out"; then ko "--json: numbers spelled shortest"; grep -E '[0-9]\.[0-9]{7,},?$' "$tmp/out"; else ok "--json: numbers spelled shortest"; fi
"$sim" tests/asm/tiny_d1.asm --profile --timing-only >"$tmp/out" 2>"$tmp/err"
grep -q '^lower bounds (docs/bounds.md)$' "$tmp/out" && grep -q '^  chain        1092  step 0 ends' "$tmp/out" &&
  grep -q '^  sfu           240  LD 119 + 199 elements / 128 lanes + ST 119$' "$tmp/out" &&
  ok "--profile: the arithmetic of the bounds" || { ko "--profile: the arithmetic of the bounds"; cat "$tmp/out"; }

# --profile by knob, stage and task (docs/tools.md "Which knob to turn"): a
# program whose hottest instructions are wg0's 16 MMAs, whose comments name
# knob p1.multicast.w1:39 and task l0.w1.k0.p0; the JSON parsed back by jq
{
  echo ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0"
  echo ".problem p1"
  echo ".wg 0"
  echo ".rf a p0 32x32"
  echo ".rf b p1 32x32"
  echo ".rf c p2 32x32"
  echo "    LD a, hbm[x_in] ; p1.k_chunk.w1:12 l0.w1.k0.p0"
  echo "    LD b, hbm[x_in + 4096] ; p1.k_chunk.w1:12 l0.w1.k0.p0"
  echo "    VEC.fill c, 0.0 ; p1.panels.w1:11 l0.w1.k0.p0"
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do echo "    MMA c, a, b ; p1.multicast.w1:39 l0.w1.k0.p0"; done
  echo "    END"
  echo ".wg 4"
  echo ".rf x p0 32x32"
  echo ".rf y p1 32x32"
  echo "    LD x, hbm[x_in + 8192] ; l0.ln1.r0"
  for i in 1 2 3 4; do echo "    VEC.add y, x, x ; p1.row_tile l0.ln1.r0"; done
  echo "    END"
} >"$tmp/hot.asm"
"$sim" "$tmp/hot.asm" --timing-only --profile >"$tmp/out" 2>"$tmp/err"
grep -q "^  by knob:$" "$tmp/out" && sed -n '/^  by knob:$/{n;p;}' "$tmp/out" | grep -q '%  p1.multicast.w1:39 .* 16 instructions$' &&
  sed -n '/^  by stage:$/{n;p;}' "$tmp/out" | grep -q '%  l0.w1  .* 19 instructions$' &&
  ok "--profile: the hottest window by knob and stage" || { ko "--profile: the hottest window by knob and stage"; cat "$tmp/out" "$tmp/err"; }
if command -v jq >/dev/null 2>&1; then
  "$sim" "$tmp/hot.asm" --timing-only --profile --json >"$tmp/out" 2>"$tmp/err"
  got=$(jq -r '[.hot_groups.knob.groups, .hot_groups.knob.top[0].name, .hot_groups.knob.top[0].insns,
               .hot_groups.stage.top[0].name, .hot_groups.task.top[0].name, .hot_groups.task.groups,
               (.hot_groups.knob.top | map(.name) | index("(none)") != null),
               ((.hot_groups.knob.top[0].share - .hot_groups.knob.top[0].energy_uj / .hot_groups.window_energy_uj) | fabs < 1e-5),
               ((.hot_groups.knob.top | map(.energy_uj) | add) + .hot_groups.static_uj - .hot_groups.window_energy_uj | fabs < 1e-3)]
              | map(tostring) | join(" ")' "$tmp/out")
  want="5 p1.multicast.w1:39 16 l0.w1 l0.w1.k0.p0 2 true true true"
  [ "$got" = "$want" ] && ok "--profile --json: hot_groups (jq)" || { ko "--profile --json: hot_groups (jq)"; echo " got  $got"; echo " want $want"; }
fi

# --profile's stages (docs/tools.md "Per-stage cycles"), worked out by hand:
# wg0: VEC.fill a (issue 0, 1024 / vl 16 = 64 cycles), VEC.add b, a, a (waits
# for a: issue 64, stall 63, done 128); WAITT 100 (issue 65), SIG (165: pace
# 99 charged to the WAITT's stage), MMA (166, one block: done 198), END (167).
# wg4: WAIT (the SIG at 165 + T_SIG_LATENCY 4 = 169: wait 169 from cycle -1),
# VEC.fill (170, done 234), END.  ENDs count with the instruction before.
# wg8: one LD of 4 KiB contiguous: 64 HBM lines (its end is the simulator's).
{
  echo ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0"
  echo ".problem p1"
  echo ".wg 0"
  echo ".rf a p0 32x32"
  echo ".rf b p1 32x32"
  echo ".rf c p2 32x32"
  echo "    VEC.fill a, 0.0 ; p1.k1:1 l0.x.p0"
  echo "    VEC.add b, a, a ; p1.k1:1 l0.x.p0"
  echo "    WAITT 100 ; p1.k2:2 l0.y.p0"
  echo "    SIG ev.e, 1 ; p1.k2:2 l0.y.p0"
  echo "    MMA c, a, b ; p1.k2:2 l0.y.p0"
  echo "    END"
  echo ".wg 4"
  echo ".rf d p0 32x32"
  echo "    WAIT ev.e, 1 ; p1.k3:3 l0.z.p0"
  echo "    VEC.fill d, 1.0 ; p1.k3:3 l0.z.p1"
  echo "    END"
  echo ".wg 8"
  echo ".rf e p0 32x32"
  echo "    LD e, hbm[x_in] ; p1.k4:4 l0.q.p0"
  echo "    END"
} >"$tmp/stages.asm"
"$sim" "$tmp/stages.asm" --timing-only --profile >"$tmp/out" 2>"$tmp/err"
got=$(sed -n '/^stages, by first issue/,/^$/{/^$/!p}' "$tmp/out" | awk 'NR > 2 { $NF = ""; $(NF-1) = ""; if ($1 == "l0.q" && $3 > 64 && $4 == $3) { $3 = "END"; $4 = "SPAN" } print }' | tr -s ' ' | sed 's/ *$//')
want="$(printf '%s\n' 'l0.q 0 END SPAN 1 2 0 64 0 0 0' 'l0.x 0 128 128 1 2 0 0 0 0 63' 'l0.y 65 198 133 1 4 1 0 0 99 0' 'l0.z 169 234 65 1 3 0 0 169 0 0')"
[ "$got" = "$want" ] && ok "--profile: stages (spans, WGs, MMA blocks, wait / pace / stall)" ||
  { ko "--profile: stages (spans, WGs, MMA blocks, wait / pace / stall)"; echo " got:"; echo "$got"; echo " want:"; echo "$want"; }
if command -v jq >/dev/null 2>&1; then
  "$sim" "$tmp/stages.asm" --timing-only --profile --json >"$tmp/out" 2>"$tmp/err"
  got=$(jq -r '[(.stages | length), (.stages[1:][] | [.name, .start, .end, .wgs, .insns, .mma_blocks, .hbm_lines, .wait, .pace, .stall] | map(tostring) | join(",")),
               (.stages[0] | [.name, .hbm_lines] | map(tostring) | join(",")), ((.stages | map(.hbm_lines) | add) == .hbm_lines),
               ((.stages | map(.energy_uj) | add) - (.units | to_entries | map(.value.energy_uj) | add) | fabs < 1e-6)]
              | map(tostring) | join(" ")' "$tmp/out")
  want="4 l0.x,0,128,1,2,0,0,0,0,63 l0.y,65,198,1,4,1,0,0,99,0 l0.z,169,234,1,3,0,0,169,0,0 l0.q,64 true true"
  [ "$got" = "$want" ] && ok "--profile --json: stages (jq), their energy the units' sum" ||
    { ko "--profile --json: stages (jq), their energy the units' sum"; echo " got  $got"; echo " want $want"; }
fi

# --profile's waits by stage and event family (docs/tools.md "What each stage
# waits for"), worked out by hand.  wg0: VEC.fill (0, done 64); SIG full0
# (issue 1, fires when the fill completes: 64 + T_SIG_LATENCY 4 = 68);
# WAITT 100 (2); SIG full1 (102, fires 106); WAITT 50 (103); SIG done (153,
# fires 157).  wg4 (l0.y): WAIT full0 issues 68 (wait 68 from cycle -1),
# WAIT full1 106 (37), WAIT done 157 (50).  wg8 (l0.y): WAIT full1 106 (106),
# WAIT full0 107 (0, already passed).  wg12 (l0.z): WAIT done 157 (157).
# Families: l0.y ev.l0_a_k1_full* 68+37+106+0 = 211 over 4 WAITs of 2 WGs,
# max 106, mean 52.75; l0.z ev.done 157; l0.y ev.done 50 (the digits inside
# a name stay: only the trailing ones go).  Stage shares: 211 / (211 + 50).
{
  echo ".machine sms=16 wgs_per_sm=4 rf_kib=64 vl=16 mma_arrays=1 sfu=8 sh_kib=0 dma=2x1 hbm=8 noc=512 multicast=1 reduce=0"
  echo ".problem p1"
  echo ".wg 0"
  echo ".rf a p0 32x32"
  echo "    VEC.fill a, 0.0 ; p1.k1:1 l0.x.p0"
  echo "    SIG ev.l0_a_k1_full0, 1 ; p1.k1:1 l0.x.p0"
  echo "    WAITT 100 ; p1.k1:1 l0.x.p0"
  echo "    SIG ev.l0_a_k1_full1, 1 ; p1.k1:1 l0.x.p0"
  echo "    WAITT 50 ; p1.k1:1 l0.x.p0"
  echo "    SIG ev.done, 1 ; p1.k1:1 l0.x.p0"
  echo "    END"
  echo ".wg 4"
  echo "    WAIT ev.l0_a_k1_full0, 1 ; p1.k2:2 l0.y.p0"
  echo "    WAIT ev.l0_a_k1_full1, 1 ; p1.k2:2 l0.y.p0"
  echo "    WAIT ev.done, 1 ; p1.k2:2 l0.y.p1"
  echo "    END"
  echo ".wg 8"
  echo "    WAIT ev.l0_a_k1_full1, 1 ; p1.k2:2 l0.y.p2"
  echo "    WAIT ev.l0_a_k1_full0, 1 ; p1.k2:2 l0.y.p2"
  echo "    END"
  echo ".wg 12"
  echo "    WAIT ev.done, 1 ; p1.k3:3 l0.z.p0"
  echo "    END"
} >"$tmp/waits.asm"
"$sim" "$tmp/waits.asm" --timing-only --profile >"$tmp/out" 2>"$tmp/err"
got=$(sed -n '/^waits by stage and event family/,$p' "$tmp/out" | tr -s ' ' | sed 's/ *$//')
want="$(printf '%s\n' 'waits by stage and event family (WG-cycles before each WAIT'"'"'s issue; 418 in all), largest first:' \
  ' stage event family wait stage% WAITs WGs mean max' ' l0.y ev.l0_a_k1_full* 211 80.8% 4 2 52.8 106' \
  ' l0.z ev.done 157 100.0% 1 1 157.0 157' ' l0.y ev.done 50 19.2% 1 1 50.0 50')"
[ "$got" = "$want" ] && ok "--profile: waits by stage and event family" ||
  { ko "--profile: waits by stage and event family"; echo " got:"; echo "$got"; echo " want:"; echo "$want"; }
if command -v jq >/dev/null 2>&1; then
  # the groups again, and the arithmetic: each stage's groups add up to the
  # stage table's wait, and all of them to the total (a tcc-gen program too)
  "$sim" "$tmp/waits.asm" --timing-only --profile --json >"$tmp/out" 2>"$tmp/err"
  "$sim" tests/asm/tiny_p1.asm --timing-only --profile --json >"$tmp/out2" 2>"$tmp/err"
  sums='([.stages[] | select(.wait > 0) | [.name, .wait]] | sort) as $s
        | ([.waits.groups | group_by(.stage)[] | [.[0].stage, (map(.wait) | add)]] | sort) as $g
        | ($s == $g) and (.waits.wait == (.stages | map(.wait) | add)) and (.waits.groups | length > 0)'
  got=$(jq -r '[.waits.wait, (.waits.groups | length), (.waits.groups[] | [.stage, .event, .wait, .waits, .wgs, .max] | map(tostring) | join(",")),
               ((.waits.groups[0].stage_share - 211 / 261) | fabs < 1e-6)] | map(tostring) | join(" ")' "$tmp/out")
  want="418 3 l0.y,ev.l0_a_k1_full*,211,4,2,106 l0.z,ev.done,157,1,1,157 l0.y,ev.done,50,1,1,50 true"
  [ "$got" = "$want" ] && [ "$(jq -r "$sums" "$tmp/out")" = true ] && [ "$(jq -r "$sums" "$tmp/out2")" = true ] &&
    ok "--profile --json: waits (jq), each stage's groups its wait" ||
    { ko "--profile --json: waits (jq), each stage's groups its wait"; echo " got  $got"; echo " want $want"; jq -r "$sums" "$tmp/out" "$tmp/out2"; }
fi

# --trace=FILE (docs/tools.md "Trace"): Chrome trace-event JSON; the report is
# the same bytes with and without it; the same run gives the same file
"$sim" --help | grep -q -- "--trace=FILE" && ok "--help: --trace" || ko "--help: --trace"
"$sim" tests/asm/tiny_p1.asm --profile >"$tmp/plain" 2>&1
cp "$tmp/plain" "$tmp/plain0"
"$sim" tests/asm/tiny_p1.asm --profile --trace="$tmp/t1.json" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/plain" "$tmp/out" &&
  head -c 14 "$tmp/t1.json" | grep -q '^{"otherData": ' && grep -q '^"traceEvents": \[$' "$tmp/t1.json" &&
  grep -q '"name":"hottest window ' "$tmp/t1.json" && ok "--trace: a trace, the report unchanged" ||
  { ko "--trace: a trace, the report unchanged (exit $code)"; cat "$tmp/err"; diff "$tmp/plain" "$tmp/out"; }
"$sim" tests/asm/tiny_p1.asm --json --trace "$tmp/t2.json" >"$tmp/out" 2>"$tmp/err"
"$sim" tests/asm/tiny_p1.asm --json >"$tmp/plain" 2>&1
cmp -s "$tmp/t1.json" "$tmp/t2.json" && cmp -s "$tmp/plain" "$tmp/out" &&
  ok "--trace: same input, same bytes; --json unchanged" || ko "--trace: same input, same bytes; --json unchanged"
"$sim" tests/asm/tiny_p1.asm --trace= >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace= -> 2" 2 "tcc-sim: error: --trace needs a file name"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/no/such/dir/t.json" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace into a missing directory -> 2" 2 "$tmp/no/such/dir/t.json:1:1: error: cannot write: No such file or directory"
# a name with a newline: still one line, the newline escaped as \n
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/no/such/a
b.json" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace with a newline in its name: one line" 2 "$tmp/no/such/a\\nb.json:1:1: error: cannot write: No such file or directory"
"$sim" tests/asm/tiny_p1.asm --plot="$tmp/a
b.txt" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plot with a newline in its name: one line" 2 "$tmp/a\\nb.txt: error: a plot file name ends in .svg or .png"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace onto a directory -> 2" 2 "$tmp:1:1: error: cannot write: Is a directory"
if [ -w /dev/full ]; then
  "$sim" tests/asm/tiny_p1.asm --trace=/dev/full >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "--trace onto a full device -> 2" 2 "/dev/full:1:1: error: cannot write: No space left on device"
fi
# the trace is printed by the JSON module (tcc-json.so, jdoc.h): a tcc-sim
# without it runs, and --trace fails before the run, with no file
mkdir "$tmp/lonesim"
cp "$sim" "$tmp/lonesim/tcc-sim"
"$tmp/lonesim/tcc-sim" tests/asm/tiny_p1.asm --profile >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/plain0" "$tmp/out" &&
  ok "no JSON module: tcc-sim runs, the same report" || ko "no JSON module: tcc-sim runs, the same report (exit $code)"
"$tmp/lonesim/tcc-sim" tests/asm/tiny_p1.asm --trace="$tmp/lone.json" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no JSON module: --trace -> 2" 2 "tcc-sim: error: --trace: cannot load the JSON module: $tmp/lonesim/../lib/tcc/tcc-json.so: cannot open shared object file: No such file or directory"
"$tmp/lonesim/tcc-sim" tests/asm/tiny_p1.asm --json >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no JSON module: --json -> 2" 2 "tcc-sim: error: --json: cannot load the JSON module: $tmp/lonesim/../lib/tcc/tcc-json.so: cannot open shared object file: No such file or directory"
[ ! -e "$tmp/lone.json" ] && ok "no JSON module: no trace file" || ko "no JSON module: no trace file"
# a faulty program: exit 2 with its diagnostic, and no trace left behind
"$sim" tests/bad/run_deadlock.asm --trace="$tmp/dead.json" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ ! -e "$tmp/dead.json" ] && diff -q tests/bad/run_deadlock.err "$tmp/err" >/dev/null &&
  ok "--trace on a faulty program -> 2, no file" || ko "--trace on a faulty program -> 2, no file (exit $code)"
# the trace file is written as every output file is (docs/tools.md, "Output
# files"): whole once the run is done, or not at all; a failing run leaves
# what was there, a device stays a device, a link stays a link, the program
# itself is refused
mkdir "$tmp/keep"
printf 'an earlier trace\n' >"$tmp/keep/t.json"
"$sim" tests/bad/run_deadlock.asm --trace="$tmp/keep/t.json" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ "$(cat "$tmp/keep/t.json")" = "an earlier trace" ] && [ "$(ls -A "$tmp/keep")" = t.json ] &&
  ok "--trace on a faulty program: the earlier file kept, no temporary file" ||
  ko "--trace on a faulty program: the earlier file kept, no temporary file (exit $code: $(ls -A "$tmp/keep" | tr '\n' ' '))"
"$sim" tests/bad/run_deadlock.asm --trace=/dev/null >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ -c /dev/null ] && ok "--trace=/dev/null on a faulty program: /dev/null stays a device" ||
  ko "--trace=/dev/null on a faulty program: /dev/null stays a device (exit $code)"
"$sim" tests/asm/tiny_p1.asm --trace=/dev/null >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ -c /dev/null ] && ok "--trace=/dev/null: written through" ||
  ko "--trace=/dev/null: written through (exit $code)"
printf 'the target\n' >"$tmp/keep/real.json"
ln -s real.json "$tmp/keep/link.json"
"$sim" tests/bad/run_deadlock.asm --trace="$tmp/keep/link.json" >"$tmp/out" 2>"$tmp/err"
[ "$(cat "$tmp/keep/real.json")" = "the target" ] && ok "--trace=LINK on a faulty program: its target kept" ||
  ko "--trace=LINK on a faulty program: its target kept ($(wc -c <"$tmp/keep/real.json") bytes)"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/keep/link.json" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ -L "$tmp/keep/link.json" ] && [ "$(readlink "$tmp/keep/link.json")" = real.json ] &&
  cmp -s "$tmp/keep/real.json" "$tmp/t1.json" && ok "--trace=LINK: the file it points to replaced, the link kept" ||
  ko "--trace=LINK: the file it points to replaced, the link kept (exit $code)"
cp tests/asm/tiny_p1.asm "$tmp/keep/p.asm"
"$sim" "$tmp/keep/p.asm" --trace="$tmp/keep/p.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace=PROGRAM -> 2" 2 "tcc-sim: error: --trace $tmp/keep/p.asm is the program itself"
ln "$tmp/keep/p.asm" "$tmp/keep/hard.json"
"$sim" "$tmp/keep/p.asm" --trace="$tmp/keep/hard.json" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace=a hard link to the program -> 2" 2 "tcc-sim: error: --trace $tmp/keep/hard.json is the program itself"
cmp -s "$tmp/keep/p.asm" tests/asm/tiny_p1.asm && ok "--trace=PROGRAM: the program untouched" ||
  ko "--trace=PROGRAM: the program untouched"
printf 'old\n' >"$tmp/keep/mode.json"
chmod 640 "$tmp/keep/mode.json"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/keep/mode.json" >"$tmp/out" 2>"$tmp/err"
[ "$(stat -c %a "$tmp/keep/mode.json")" = 640 ] && cmp -s "$tmp/keep/mode.json" "$tmp/t1.json" &&
  ok "--trace over a file: replaced whole, its permissions kept" ||
  ko "--trace over a file: replaced whole, its permissions kept ($(stat -c %a "$tmp/keep/mode.json"))"
mkfifo "$tmp/keep/fifo"
timeout 60 cat "$tmp/keep/fifo" >"$tmp/fifo.out" &
reader=$!
timeout 60 "$sim" tests/asm/tiny_p1.asm --trace="$tmp/keep/fifo" >"$tmp/out" 2>"$tmp/err"
code=$?
wait $reader
[ $code -eq 0 ] && [ -p "$tmp/keep/fifo" ] && cmp -s "$tmp/fifo.out" "$tmp/t1.json" &&
  ok "--trace=FIFO: the trace through it, the FIFO kept" || ko "--trace=FIFO: the trace through it, the FIFO kept (exit $code)"
# the trace's limits: --trace-max-slices, --trace-max-unit-slices,
# --trace-max-flows; a bad value is one line and exit 2, before the run
for o in slices unit-slices flows; do
  "$sim" --help | grep -q -- "--trace-max-$o=N" && ok "--help: --trace-max-$o" || ko "--help: --trace-max-$o"
done
for v in abc 0 -5 1.5 10000001 99999999999999999999 ""; do
  "$sim" tests/asm/tiny_p1.asm --trace="$tmp/lim.json" --trace-max-slices="$v" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "--trace-max-slices='$v' -> 2" 2 "tcc-sim: error: --trace-max-slices must be an integer 1..10000000, got '$v'"
done
[ ! -e "$tmp/lim.json" ] && ok "--trace-max-slices: a bad value leaves no file" || ko "--trace-max-slices: a bad value leaves no file"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/lim.json" --trace-max-unit-slices=0 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace-max-unit-slices=0 -> 2" 2 "tcc-sim: error: --trace-max-unit-slices must be an integer 1..10000000, got '0'"
"$sim" tests/asm/tiny_p1.asm --trace="$tmp/lim.json" --trace-max-flows=-1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace-max-flows=-1 -> 2" 2 "tcc-sim: error: --trace-max-flows must be an integer 0..10000000, got '-1'"
"$sim" tests/asm/tiny_p1.asm --trace-max-slices=10 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--trace-max-slices without --trace -> 2" 2 "tcc-sim: error: --trace-max-slices has no effect without --trace"
# within the limits: tiny_p1's 108 instructions in at most 10 slices, its
# 24 unit operations in at most 8, one of its 2 arrows; the note says so,
# the report is unchanged
"$sim" tests/asm/tiny_p1.asm --profile --trace="$tmp/lim.json" --trace-max-slices=10 --trace-max-unit-slices=8 \
  --trace-max-flows=1 >"$tmp/out" 2>"$tmp/err"
code=$?
got=$(jq -r '[([.traceEvents[] | select(.ph == "X" and .pid == 1)] | length <= 10),
  ([.traceEvents[] | select(.ph == "X" and (.pid == 2 or .pid == 3))] | length <= 8),
  ([.traceEvents[] | select(.ph == "s")] | length), .otherData.max_insn_slices, .otherData.max_unit_slices,
  .otherData.max_flows] | map(tostring) | join(" ")' "$tmp/lim.json" 2>&1)
[ $code -eq 0 ] && cmp -s "$tmp/plain0" "$tmp/out" && [ "$got" = "true true 1 10 8 1" ] &&
  grep -q "^tcc-sim: note: $tmp/lim.json: 108 instructions aggregated into .* (limit 10); .*(limit 8); 1 arrow from a SIG or RED to the WAIT it released (of 2 such WAITs; 1 of the shortest WAITs past the limit of 1)\$" "$tmp/err" &&
  ok "--trace-max-*: within the limits, said on stderr, the report unchanged" ||
  { ko "--trace-max-*: within the limits, said on stderr, the report unchanged (exit $code: $got)"; cat "$tmp/err"; }
# the time unit: displayTimeUnit ns, ts in microseconds = cycles / 1000 (the
# hottest window starts where the report says, lasts 1000 cycles = 1 us)
got=$(jq -r '[.displayTimeUnit, (.traceEvents[] | select(.ph == "X" and (.name | startswith("hottest window"))) |
  (.ts * 1000 | round | tostring), (.dur | tostring))] | join(" ")' "$tmp/t1.json" 2>&1)
want="ns $(sed -n 's/^power .* peak in \[\([0-9]*\), .*/\1/p' "$tmp/plain0") 1"
[ "$got" = "$want" ] && ok "--trace: displayTimeUnit ns, ts = cycles / 1000 us" ||
  ko "--trace: displayTimeUnit ns, ts = cycles / 1000 us (got '$got', want '$want')"

# ---------------------------------------------------------------- tcc-gen

small_d1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, history: 32, steps: 2}'
small_p1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}'
printf 'version: 1\nd1:\n%s\n' "$small_d1" >"$tmp/d1.yaml"
printf 'version: 1\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/two.yaml"
printf 'version: 1\nd1:\n%s\n  store_spacng: 16\n' "$small_d1" >"$tmp/typo.yaml"

"$gen" --help >"$tmp/out" 2>&1 && grep -q "dump-after" "$tmp/out" && ok "tcc-gen --help" || ko "tcc-gen --help"
"$gen" --version >"$tmp/out" 2>&1 && grep -q "^tcc-gen .*spec v3" "$tmp/out" && ok "tcc-gen --version" ||
  ko "tcc-gen --version"

"$gen" "$tmp/typo.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: mistyped knob -> 2, did you mean" 2 \
  "$tmp/typo.yaml:4:3: error: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"

"$gen" "$tmp/two.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: two sections, no --problem -> 2" 2 \
  "$tmp/two.yaml:4:1: error: the plan has both p1 and d1 sections; choose one with --problem p1|d1 (or an output named for it: -o d1.asm)"

# the card's command: an output named for one problem picks it (d1.asm,
# P1.s, model-d1.asm, run_p1_v2.asm), the same program as --problem gives;
# a name with both (p1-d1.asm) or neither (dp1.asm) is the ambiguity above
for p in p1 d1; do
  for o in $p.asm "model-$(echo $p | tr pd PD).s" "run_${p}_v2.asm"; do
    "$gen" plans/baseline.yaml -o "$tmp/$o" 2>"$tmp/err" &&
      "$gen" plans/baseline.yaml --problem $p -o "$tmp/want.asm" 2>/dev/null &&
      cmp -s "$tmp/$o" "$tmp/want.asm" && [ ! -s "$tmp/err" ] &&
      ok "tcc-gen plans/baseline.yaml -o $o: problem $p" || ko "tcc-gen plans/baseline.yaml -o $o"
  done
done
for o in p1-d1.asm dp1.asm; do
  "$gen" "$tmp/two.yaml" -o "$tmp/$o" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "tcc-gen: -o $o names no one problem -> 2" 2 \
    "$tmp/two.yaml:4:1: error: the plan has both p1 and d1 sections; choose one with --problem p1|d1 (or an output named for it: -o d1.asm)"
done

"$gen" "$tmp/d1.yaml" --problem p1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --problem p1 without a p1 section -> 2" 2 "$tmp/d1.yaml:1:1: error: the plan has no p1 section"

"$gen" "$tmp/two.yaml" --problem x1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --problem x1 -> 2" 2 "tcc-gen: error: --problem must be p1 or d1, got 'x1'"

# a plan whose name holds a newline (and what looks like a directive after
# it): the header comment escapes it, so the program still assembles
nl_plan="$tmp/a
.wg 0.yaml"
cp tests/sweep/tiny.yaml "$nl_plan"
if "$gen" "$nl_plan" --problem d1 -o "$tmp/nl.asm" 2>"$tmp/err" && "$sim" --timing-only "$tmp/nl.asm" >/dev/null 2>&1 &&
  [ "$(sed -n 1p "$tmp/nl.asm")" = "; generated by tcc-gen from $tmp/a\n.wg 0.yaml (problem d1); do not edit" ]; then
  ok "tcc-gen: a plan name with a newline is escaped in the header; tcc-sim runs the program"
else
  ko "tcc-gen: a plan name with a newline"; sed -n 1,3p "$tmp/nl.asm"; cat "$tmp/err"
fi
# ... and in the IR's header comment (--emit=ir), which starts the same way
if "$gen" "$nl_plan" --problem d1 --emit=ir >"$tmp/nl.ir" 2>"$tmp/err" &&
  [ "$(sed -n 1p "$tmp/nl.ir")" = "; tcc-gen IR of $tmp/a\n.wg 0.yaml" ] && [ "$(sed -n 2p "$tmp/nl.ir" | cut -c1-9)" = ".machine " ]; then
  ok "tcc-gen --emit=ir: a plan name with a newline is escaped in the header"
else
  ko "tcc-gen --emit=ir: a plan name with a newline"; sed -n 1,3p "$tmp/nl.ir"; cat "$tmp/err"
fi
# a plan or program whose name holds a newline, in a diagnostic: one line,
# the newline escaped as \n (the loader's, the compiler's, the assembler's)
printf 'version: 1\np1:\n  bogus: 1\n' >"$tmp/b
ad.yaml"
"$gen" "$tmp/b
ad.yaml" -o "$tmp/x.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: a bad plan named with a newline: one line" 2 "$tmp/b\nad.yaml:3:3: error: unknown key 'bogus' in p1"
"$sim" "$tmp/b
ad.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-sim: a plan named with a newline: one line" 2 \
  "$tmp/b\nad.yaml:1:1: error: this is a plan (YAML), not assembly: compile it with tcc-gen first (tcc-gen PLAN.yaml -o prog.asm)"
printf '.wg 0\n' >"$tmp/b
ad.asm"
"$sim" "$tmp/b
ad.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-sim: a bad program named with a newline: one line" 2 \
  "$tmp/b\nad.asm:1:1: error: expected .machine as the first directive, got '.wg'"
"$sim" "$tmp/no
such.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-sim: a missing program named with a newline: one line" 2 "$tmp/no\nsuch.asm:1:1: error: cannot read: No such file or directory"
cp tests/golden/bad_rf_full.yaml "$tmp/rf
full.yaml" # refused by rf_alloc, a pass (ir_error)
"$gen" "$tmp/rf
full.yaml" --strict -o "$tmp/x.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "$tmp/rf\nfull.yaml:8:12: error: rf_alloc: " "$tmp/err"; then
  ok "tcc-gen: a pass's diagnostic for a plan named with a newline: one line"
else
  ko "tcc-gen: a pass's diagnostic for a plan named with a newline (exit $code)"; cat "$tmp/err"
fi
# --explain says what the power fitting measured, also when it changed nothing
"$gen" plans/best.yaml --problem d1 --explain >"$tmp/out" 2>"$tmp/err"
grep -q '^power.fit: 1 run; hottest window 19.80 W as written, under the 20 W limit less 0.001 W: the program as written (relax: too near the limit, the spacings kept)$' "$tmp/out" &&
  [ "$("$gen" plans/best.yaml --problem d1 --explain --json | jq -r .power_fit | cut -c1-22)" = "power.fit: 1 run; hott" ] &&
  ok "--explain: the power fitting's runs and watts of an unchanged program" ||
  { ko "--explain: the power fitting's runs and watts of an unchanged program"; grep power.fit "$tmp/out"; }
# --explain: the capacity report, text or JSON, also for a plan that does not fit
"$gen" "$tmp/d1.yaml" --json >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --json without --explain -> 2" 2 "tcc-gen: error: --json goes with --explain"
"$gen" "$tmp/d1.yaml" --explain --emit=ir >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --explain with --emit -> 2" 2 \
  "tcc-gen: error: --explain writes the capacity report: not with --emit or --dump-after"
if "$gen" "$tmp/d1.yaml" --explain >"$tmp/out" 2>"$tmp/err" && grep -q "^capacity report: d1 of" "$tmp/out" &&
  grep -q "^allocation (rf_alloc" "$tmp/out" && [ ! -s "$tmp/err" ]; then
  ok "tcc-gen --explain"
else
  ko "tcc-gen --explain"
fi
if "$gen" tests/golden/bad_rf_alloc.yaml --strict --explain --json -o "$tmp/x.json" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
  grep -q '"allocation" : null' "$tmp/x.json" && grep -q '"failure" : "tests/golden/bad_rf_alloc.yaml:8:12: error: rf_alloc' "$tmp/x.json"; then
  ok "tcc-gen --explain --json on a plan that does not fit -> 0, the error in the report"
else
  ko "tcc-gen --explain --json on a plan that does not fit"
fi
# the JSON is drawn by the JSON module (tcc-json.so, jdoc.h): a tcc-gen
# without it compiles, and --explain --json says what is missing
mkdir "$tmp/lonegen"
cp "$gen" "$tmp/lonegen/tcc-gen"
if "$tmp/lonegen/tcc-gen" "$tmp/d1.yaml" -o "$tmp/lone.asm" 2>"$tmp/err" && [ ! -s "$tmp/err" ] && [ -s "$tmp/lone.asm" ]; then
  ok "no JSON module: tcc-gen compiles"
else
  ko "no JSON module: tcc-gen compiles"
fi
"$tmp/lonegen/tcc-gen" "$tmp/d1.yaml" --explain --json >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no JSON module: --explain --json -> 2" 2 "tcc-gen: error: --json: cannot load the JSON module: $tmp/lonegen/../lib/tcc/tcc-json.so: cannot open shared object file: No such file or directory"

"$gen" "$tmp/d1.yaml" --emit=bogus >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --emit=bogus -> 2" 2 "tcc-gen: error: --emit must be asm or ir, got 'bogus'"

"$gen" "$tmp/d1.yaml" --dump-after=bogus >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --dump-after=bogus -> 2" 2 \
  "tcc-gen: error: --dump-after: unknown pass 'bogus' (passes: lower, kv_writeback, defer, waves, preload_window, forward, sync, pacer, place, multicast, pace, rf_alloc, or all)"
"$gen" "$tmp/d1.yaml" --dump-after=sync --dump-after=sync >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: --dump-after twice the same pass -> 2" 2 "tcc-gen: error: --dump-after: 'sync' is given twice"
# several dumps, each after a header naming its pass, in pipeline order;
# all of them; --print-changed: the passes that change nothing as a header
"$gen" "$tmp/d1.yaml" --dump-after=place --dump-after=sync >"$tmp/out" 2>"$tmp/err" &&
  [ "$(grep '^; \*\*\*' "$tmp/out" | tr '\n' '|')" = "; *** IR after sync ***|; *** IR after place ***|" ] &&
  ok "tcc-gen: --dump-after twice: two dumps with their headers, in pipeline order" ||
  { ko "tcc-gen: --dump-after twice"; grep '^; \*\*\*' "$tmp/out"; }
"$gen" "$tmp/d1.yaml" --dump-after=all >"$tmp/out" 2>"$tmp/err" &&
  [ "$(grep -c '^; \*\*\* IR after [a-z_]* \*\*\*$' "$tmp/out")" -eq 12 ] &&
  ok "tcc-gen: --dump-after=all: every pass's IR" || ko "tcc-gen: --dump-after=all"
"$gen" "$tmp/d1.yaml" --print-changed >"$tmp/out" 2>"$tmp/err" &&
  grep -q '^; \*\*\* IR after lower \*\*\*$' "$tmp/out" && grep -q '^; \*\*\* IR after sync \*\*\*$' "$tmp/out" &&
  grep -q '^; \*\*\* IR after pacer: unchanged \*\*\*$' "$tmp/out" &&
  [ "$(grep -c '^; tcc-gen IR of ' "$tmp/out")" -lt 12 ] &&
  ok "tcc-gen: --print-changed: the passes that changed nothing as a header only" ||
  { ko "tcc-gen: --print-changed"; grep '^; \*\*\*' "$tmp/out"; }

"$gen" --bogus "$tmp/d1.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: unknown option -> 2" 2 "tcc-gen: error: Unknown option --bogus"

"$gen" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: no argument -> 2" 2 "tcc-gen: error: expected one plan file (see --help)"

"$gen" "$tmp/d1.yaml" "$tmp/d1.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: two plans -> 2" 2 "tcc-gen: error: expected one plan file (see --help)"

"$gen" "$tmp/missing.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: missing plan -> 2" 2 "$tmp/missing.yaml:1:1: error: cannot read plan: No such file or directory"

# -o into a directory that does not exist: exit 2, one line naming it, nothing written
"$gen" "$tmp/d1.yaml" -o "$tmp/no/such/dir/d1.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
  [ "$(cat "$tmp/err")" = "tcc-gen: error: cannot write '$tmp/no/such/dir/d1.asm': No such file or directory" ] &&
  [ ! -e "$tmp/no" ]; then
  ok "tcc-gen: -o into a missing directory -> 2"
else
  ko "tcc-gen: -o into a missing directory -> 2 (exit $code)"
  cat "$tmp/err"
fi

# -o FILE writes what stdout would get; - is stdout; --emit=ir and
# --dump-after=rf_alloc are the same text
"$gen" "$tmp/d1.yaml" >"$tmp/stdout.asm" 2>"$tmp/err" && "$gen" "$tmp/d1.yaml" -o "$tmp/o.asm" 2>>"$tmp/err" &&
  "$gen" "$tmp/d1.yaml" -o - >"$tmp/dash.asm" 2>>"$tmp/err" && [ ! -s "$tmp/err" ] &&
  cmp -s "$tmp/stdout.asm" "$tmp/o.asm" && cmp -s "$tmp/stdout.asm" "$tmp/dash.asm" &&
  head -1 "$tmp/o.asm" | grep -q "^; generated by tcc-gen from $tmp/d1.yaml (problem d1)" &&
  ok "tcc-gen: -o FILE and -o - write the assembly" || ko "tcc-gen: -o FILE and -o - write the assembly"
# -o over an existing file: the new text replaces it (a temporary file
# beside it, swapped in once complete: docs/tools.md, "Output files"), and
# no temporary file is left beside it
mkdir -p "$tmp/repl" && printf 'old text\n' >"$tmp/repl/o.asm" &&
  "$gen" "$tmp/d1.yaml" -o "$tmp/repl/o.asm" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
  cmp -s "$tmp/stdout.asm" "$tmp/repl/o.asm" && [ "$(ls "$tmp/repl")" = "o.asm" ] &&
  ok "tcc-gen: -o replaces an existing file, nothing left beside it" ||
  ko "tcc-gen: -o replaces an existing file, nothing left beside it"
# -o naming the plan (or a hard link to it): refused, exit 2, the plan
# untouched; also with --explain --json, which writes a report even for a
# plan that does not fit
cp "$tmp/d1.yaml" "$tmp/repl/plan.yaml"
"$gen" "$tmp/repl/plan.yaml" -o "$tmp/repl/plan.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: -o PLAN -> 2" 2 "tcc-gen: error: -o $tmp/repl/plan.yaml is the plan itself"
"$gen" "$tmp/repl/plan.yaml" --explain --json -o "$tmp/repl/plan.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen --explain --json: -o PLAN -> 2" 2 "tcc-gen: error: -o $tmp/repl/plan.yaml is the plan itself"
ln "$tmp/repl/plan.yaml" "$tmp/repl/hard.asm"
"$gen" "$tmp/repl/plan.yaml" -o "$tmp/repl/hard.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: -o a hard link to the plan -> 2" 2 "tcc-gen: error: -o $tmp/repl/hard.asm is the plan itself"
cmp -s "$tmp/repl/plan.yaml" "$tmp/d1.yaml" && ok "tcc-gen: -o PLAN: the plan untouched" || ko "tcc-gen: -o PLAN: the plan untouched"
rm -f "$tmp/repl/plan.yaml" "$tmp/repl/hard.asm"
# -o a link: the file it points to replaced, the link kept; -o /dev/null
# and a FIFO written through, kept
ln -s o.asm "$tmp/repl/link.asm"
"$gen" "$tmp/d1.yaml" -o "$tmp/repl/link.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ -L "$tmp/repl/link.asm" ] && cmp -s "$tmp/stdout.asm" "$tmp/repl/o.asm" &&
  [ "$(ls "$tmp/repl" | tr '\n' ' ')" = "link.asm o.asm " ] &&
  ok "tcc-gen: -o LINK: its file replaced, the link kept" || ko "tcc-gen: -o LINK: its file replaced, the link kept (exit $code)"
"$gen" "$tmp/d1.yaml" -o /dev/null >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ -c /dev/null ] && ok "tcc-gen: -o /dev/null: written through, still a device" ||
  ko "tcc-gen: -o /dev/null: written through, still a device (exit $code)"
mkfifo "$tmp/repl/fifo"
timeout 60 cat "$tmp/repl/fifo" >"$tmp/fifo.asm" &
reader=$!
timeout 60 "$gen" "$tmp/d1.yaml" -o "$tmp/repl/fifo" >"$tmp/out" 2>"$tmp/err"
code=$?
wait $reader
[ $code -eq 0 ] && [ -p "$tmp/repl/fifo" ] && cmp -s "$tmp/fifo.asm" "$tmp/stdout.asm" &&
  ok "tcc-gen: -o FIFO: the program through it, the FIFO kept" || ko "tcc-gen: -o FIFO: the program through it, the FIFO kept (exit $code)"
rm -f "$tmp/repl/fifo" "$tmp/repl/link.asm"
"$gen" "$tmp/d1.yaml" -o /dev/stdout >"$tmp/repl/own.asm" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && cmp -s "$tmp/repl/own.asm" "$tmp/stdout.asm" && [ "$(ls "$tmp/repl" | tr '\n' ' ')" = "o.asm own.asm " ] &&
  ok "tcc-gen: -o /dev/stdout into a file: the program there" ||
  ko "tcc-gen: -o /dev/stdout into a file: the program there (exit $code)"
rm -f "$tmp/repl/own.asm"
# a write that fails (a full device, written through): exit 2, one line
if [ -w /dev/full ]; then
  "$gen" "$tmp/d1.yaml" -o /dev/full >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "tcc-gen: -o onto a full device -> 2" 2 "tcc-gen: error: cannot write '/dev/full': No space left on device"
fi
"$gen" "$tmp/two.yaml" --problem d1 --emit=ir >"$tmp/a.ir" 2>"$tmp/err" &&
  "$gen" "$tmp/two.yaml" --problem d1 --dump-after=rf_alloc >"$tmp/b.ir" 2>>"$tmp/err" &&
  [ ! -s "$tmp/err" ] && [ "$(head -1 "$tmp/b.ir")" = "; *** IR after rf_alloc ***" ] &&
  tail -n +2 "$tmp/b.ir" | cmp -s "$tmp/a.ir" - && grep -q "^task t0.l0.qkv.p0 wg 0 " "$tmp/a.ir" &&
  ok "tcc-gen: --emit=ir = --dump-after=rf_alloc" || ko "tcc-gen: --emit=ir = --dump-after=rf_alloc"
"$sim" "$tmp/o.asm" >"$tmp/out" 2>&1 && ok "tcc-gen output runs in tcc-sim" || { ko "tcc-gen output runs in tcc-sim"; cat "$tmp/out"; }

# ---------------------------------------------------------------- tcc-grade

# tcc-grade --problem d1: D1's row and bound alone, no score, its cycles
# those of the full grade
"$grade" plans/best.yaml --problem d1 >"$tmp/g1" 2>"$tmp/err"
code=$?
"$grade" plans/best.yaml >"$tmp/g2" 2>/dev/null
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && ! grep -q '^p1 ' "$tmp/g1" && grep -q '^bound d1 ' "$tmp/g1" &&
  ! grep -q '^bound p1 ' "$tmp/g1" && grep -q '^score -  (one problem graded: --problem d1)$' "$tmp/g1" &&
  [ "$(awk '$1 == "d1" { print $2 }' "$tmp/g1")" = "$(awk '$1 == "d1" { print $2 }' "$tmp/g2")" ]; then
  ok "tcc-grade --problem d1: one row, its bound, no score, the same cycles"
else
  ko "tcc-grade --problem d1 (exit $code)"; cat "$tmp/g1" "$tmp/err"
fi
"$grade" plans/best.yaml --problem p1 --json >"$tmp/g3" 2>/dev/null
grep -q '"score_note" : "one problem graded (--problem)"' "$tmp/g3" && grep -q '"p1" : {' "$tmp/g3" &&
  ! grep -q '"d1" : {' "$tmp/g3" && ok "tcc-grade --problem p1 --json: p1 alone" || ko "tcc-grade --problem p1 --json"
"$grade" plans/best.yaml --problem x1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-grade --problem x1 -> 2" 2 "tcc-grade: error: --problem must be p1 or d1, got 'x1'"
"$grade" plans/best.yaml --problem d1 --record "$tmp/rec" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-grade --problem with --record -> 2" 2 "tcc-grade: error: --record keeps graded runs of both problems: not with --problem"

"$grade" --help >"$tmp/out" 2>&1 && grep -q "PLAN.yaml" "$tmp/out" && ok "tcc-grade --help" || ko "tcc-grade --help"
"$grade" --version >"$tmp/out" 2>&1 && grep -q "spec v3" "$tmp/out" && ok "tcc-grade --version" || ko "tcc-grade --version"

"$grade" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-grade: no argument -> 2" 2 "tcc-grade: error: expected one plan file (see --help)"
"$grade" "$tmp/typo.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-grade: mistyped knob -> 2" 2 \
  "$tmp/typo.yaml:4:3: error: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"
"$grade" "$tmp/d1.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-grade: one section -> 2" 2 "$tmp/d1.yaml:1:1: error: the plan has no p1 section"

# a tiny two-section plan: both rows PASS on the four seeds; not the graded
# dims, so no score
"$grade" "$tmp/two.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(grep -c ' PASS$' "$tmp/out")" -eq 2 ] &&
  grep -q '^p1 .* PASS$' "$tmp/out" && grep -q '^d1 .* PASS$' "$tmp/out" &&
  grep -q '^score -  (problem dims differ from the graded defaults: no score)$' "$tmp/out"; then
  ok "tcc-grade: tiny plan -> 0, two PASS rows and a score"
else
  ko "tcc-grade: tiny plan -> 0, two PASS rows and a score (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# grade_fail NAME PLAN CONSTRAINT ROWS: exit 1, no score, the FAIL rows ROWS
# (e.g. "p1 d1") naming the failing CONSTRAINT.
grade_fail() {
  "$grade" "$2" >"$tmp/out" 2>"$tmp/err"
  code=$?
  good=1
  [ $code -eq 1 ] && [ ! -s "$tmp/err" ] && grep -q '^score -  (a constraint fails)$' "$tmp/out" || good=0
  for p in p1 d1; do
    case " $4 " in *" $p "*) want=" FAIL: .*$3" ;; *) want=" PASS\$" ;; esac
    grep -q "^$p .*$want" "$tmp/out" || good=0
    # a FAIL's hint says where to look; a PASS has none
    case " $4 " in
    *" $p "*) grep -q "^hint $p  $3 over the limit: " "$tmp/out" || good=0 ;;
    *) ! grep -q "^hint $p " "$tmp/out" || good=0 ;;
    esac
  done
  if [ $good -eq 1 ]; then ok "$1 -> 1, '$3' named"; else ko "$1 -> 1 (exit $code)"; cat "$tmp/out" "$tmp/err"; fi
}

# 24 SMs: 32.95 mm^2, over the 24 mm^2 area budget on both problems
printf 'version: 1\nhardware: {sms: 24}\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/area.yaml"
grade_fail "tcc-grade: over the area budget" "$tmp/area.yaml" area "p1 d1"

# 22.1 mm^2, but 16 HBM channels and wide NoC links let 14 SMs stream a P1
# of 256 rows at ~30 W in its hottest window (D1 stays far below 20 W):
# with power.fit: off the program stays over the limit
printf 'version: 1\nhardware: {sms: 14, hbm_channels: 16, noc_bits: 1024}\np1:\n%s\n  power: {fit: off}\nd1:\n%s\n' \
  '  problem: {d_model: 64, heads: 2, d_ff: 256, layers: 1, seqs: 1, rows: 256}' "$small_d1" >"$tmp/power.yaml"
grade_fail "tcc-grade: over the power budget" "$tmp/power.yaml" power "p1"
grep -q '^hint p1  power over the limit: [0-9.]*% of the hottest window.s energy is from p1\.[a-z_.]*' "$tmp/out" &&
  ok "tcc-grade: the power FAIL's hint names the window's top knob" ||
  { ko "tcc-grade: the power FAIL's hint"; grep '^hint' "$tmp/out"; }
# tcc-sim --timing-only (a run for speed): no second run, the hint points to --profile
"$gen" "$tmp/power.yaml" --problem p1 -o "$tmp/power.asm" 2>/dev/null
"$sim" "$tmp/power.asm" --timing-only >"$tmp/out" 2>"$tmp/err"
grep -q '^hint      power over the limit: tcc-sim --profile names the knobs of the hottest window$' "$tmp/out" &&
  ok "tcc-sim --timing-only: the power FAIL's hint points to --profile" ||
  { ko "tcc-sim --timing-only: the power FAIL's hint"; cat "$tmp/out"; }
# and tcc-sim's own hint for an area FAIL
"$gen" "$tmp/area.yaml" --problem p1 -o "$tmp/area.asm" 2>/dev/null
"$sim" "$tmp/area.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 1 ] && grep -q '^hint      area over the limit: the largest part is ' "$tmp/out" &&
  ! grep -q '^hint      power' "$tmp/out" &&
  ok "tcc-sim: an area FAIL's hint names the largest part and its keys" ||
  { ko "tcc-sim: an area FAIL's hint (exit $code)"; cat "$tmp/out" "$tmp/err"; }

# the same plan fitted (power.fit on, the default): tcc-grade passes, and
# tcc-gen's program says what the fitting did
printf 'version: 1\nhardware: {sms: 14, hbm_channels: 16, noc_bits: 1024}\np1:\n%s\nd1:\n%s\n' \
  '  problem: {d_model: 64, heads: 2, d_ff: 256, layers: 1, seqs: 1, rows: 256}' "$small_d1" >"$tmp/fitted.yaml"
"$grade" "$tmp/fitted.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
"$gen" "$tmp/fitted.yaml" --problem p1 -o "$tmp/fitted.asm" 2>"$tmp/gerr"
if [ $code -eq 0 ] && grep -q '^p1 .* PASS$' "$tmp/out" && [ ! -s "$tmp/gerr" ] &&
  sed -n 2p "$tmp/fitted.asm" | grep -q '^; power.fit: [0-9]* runs; hottest window 30.36 W -> ' &&
  grep -Eq '(; |: )p1\.power\.fit' "$tmp/fitted.asm"; then
  ok "power.fit: the plan over the budget is fitted: tcc-grade -> 0, the program cites power.fit"
else
  ko "power.fit: the plan over the budget is fitted (exit $code)"
  cat "$tmp/out" "$tmp/err" "$tmp/gerr"
fi

# tcc-grade --json (what tcc-sweep reads): the tiny plan passes without a
# score and says why; the area plan exits 1 naming the constraint; the
# cycles are the text report's
"$grade" --json "$tmp/two.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
"$grade" "$tmp/two.yaml" >"$tmp/text" 2>&1
cyc=$(awk '$1 == "d1" { print $2 }' "$tmp/text")
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q '^  "status" : "pass",$' "$tmp/out" &&
  grep -q '^  "schema_version" : 1,$' "$tmp/out" &&
  grep -q '^  "score" : null,$' "$tmp/out" &&
  grep -q '^  "score_note" : "problem dims differ from the graded defaults",$' "$tmp/out" &&
  grep -q "^      \"cycles\" : $cyc,\$" "$tmp/out"; then
  ok "tcc-grade --json: tiny plan -> 0, no score and why, the report's cycles"
else
  ko "tcc-grade --json: tiny plan (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi
"$grade" --json "$tmp/area.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 1 ] && [ ! -s "$tmp/err" ] && grep -q '^  "status" : "area",$' "$tmp/out" &&
  [ "$(jq -r '[.problems[] | .status, .failures[]] | join(" ")' "$tmp/out")" = "area area area area" ] &&
  grep -q '^  "score_note" : "a constraint fails",$' "$tmp/out" &&
  ok "tcc-grade --json: over the area budget -> 1, 'area' named" ||
  { ko "tcc-grade --json: over the area budget (exit $code)"; cat "$tmp/out" "$tmp/err"; }
"$grade" --json "$tmp/d1.yaml" >"$tmp/json" 2>"$tmp/err"
code=$?
: >"$tmp/out"
expect "tcc-grade --json: bad input -> 2, the error on stderr" 2 "$tmp/d1.yaml:1:1: error: the plan has no p1 section"
# and as a result on stdout: refused, with the diagnostic
[ "$(jq -r '[.status, .error] | join(" | ")' "$tmp/json")" = "refused | $tmp/d1.yaml:1:1: error: the plan has no p1 section" ] &&
  ok "tcc-grade --json: a refused plan's result" || { ko "tcc-grade --json: a refused plan's result"; cat "$tmp/json"; }

# shape-relative knobs: a written value the shape does not take falls back
# to the nearest legal one, with a warning on stderr; --strict refuses it
printf 'version: 1\np1:\n  problem: {d_model: 96, heads: 3, d_ff: 384, layers: 1, seqs: 1, rows: 64}\n  k_chunk: {qkv: 128}\n' >"$tmp/shape.yaml"
"$gen" "$tmp/shape.yaml" -o "$tmp/shape.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ "$(cat "$tmp/err")" = "$tmp/shape.yaml:4:18: warning: k_chunk.qkv=128 does not divide d_model=96; using 96, the nearest value that fits (--strict refuses)" ] &&
  "$gen" "$tmp/shape.yaml" --emit=ir 2>/dev/null | grep -q '^  p1.k_chunk.qkv = 96  ; fallback line 4:13$'; then
  ok "tcc-gen: a value the shape does not take -> 0, one warning, the record says fallback"
else
  ko "tcc-gen: a value the shape does not take (exit $code)"
  cat "$tmp/err"
fi
"$gen" "$tmp/shape.yaml" --strict -o "$tmp/shape.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen --strict: the shape's refusal -> 2" 2 "$tmp/shape.yaml:4:18: error: k_chunk.qkv=128 does not divide d_model=96"

# capacity fallback: resident weights over the RF of 2 SMs go back to streaming
printf 'version: 1\nhardware: {sms: 2}\nd1:\n  weights: resident\n  handoff: rf\n' >"$tmp/cap.yaml"
"$gen" "$tmp/cap.yaml" -o "$tmp/cap.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && grep -q "^$tmp/cap.yaml:3:1: warning: weights: resident: a w2 panel .*; falling back to weights: resident -> streamed (--strict refuses)\$" "$tmp/err" &&
  "$sim" "$tmp/cap.asm" >/dev/null 2>&1; then
  ok "capacity fallback: weights over the RF -> streamed, warned, the program passes"
else
  ko "capacity fallback (exit $code)"
  cat "$tmp/err"
fi

# capacity repair: on 8 SMs a W2 panel of 64 KiB does not fit a WG; more K
# shards and less temp room keep the weights resident (the record marks the
# knobs the plan did not write `; fallback`); --strict refuses
printf 'version: 1\nhardware: {sms: 8}\nd1:\n  weights: resident\n  handoff: rf\n  panels: {w2: 32}\n' >"$tmp/rep.yaml"
"$gen" "$tmp/rep.yaml" -o "$tmp/rep.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && grep -q "^$tmp/rep.yaml:6:12: warning: weights: resident: a w2 panel .*; repaired with k_split.w2: 1 -> 2, rf_temp_kib: 16 -> 12 (--strict refuses)\$" "$tmp/err" &&
  "$gen" "$tmp/rep.yaml" --emit=ir 2>/dev/null | grep -q '^  d1.rf_temp_kib = 12  ; fallback$' &&
  "$sim" "$tmp/rep.asm" >"$tmp/out" 2>&1 && grep -q "^verdict   numerics PASS, area PASS, power PASS" "$tmp/out" &&
  grep -q '; d1.weights:4 ' "$tmp/rep.asm"; then
  ok "capacity repair: a W2 panel over a WG -> K shards and temp room, weights kept, the program passes"
else
  ko "capacity repair (exit $code)"
  cat "$tmp/err"
fi
"$gen" "$tmp/rep.yaml" --strict -o "$tmp/rep.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "capacity repair with --strict: the refusal -> 2" 2 "$tmp/rep.yaml:6:12: error: weights: resident: a w2 panel is 512 x 32 = 64 KiB, 16 partitions, but a WG keeps 12 of its 16 partitions after rf_temp_kib (and one for biases): narrow the panel (see tcc-gen --explain)"

# the wrong kind of file: a plan given to tcc-sim, a program given to
# tcc-gen, and a tab in a plan's indentation get one line saying so
printf 'version: 1\np1:\n\tsms_used: 4\n' >"$tmp/tab.yaml"
"$gen" "$tmp/tab.yaml" -o "$tmp/tab.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: a tab in the indentation -> 2, said as a tab" 2 "$tmp/tab.yaml:3:1: error: a tab character: YAML indents with spaces, and a tab may not start a token"
printf '# a plan\nversion: 1\np1:\n  sms_used: 4\n' >"$tmp/plan.yaml"
"$sim" "$tmp/plan.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-sim: a plan -> 2, said as a plan" 2 "$tmp/plan.yaml:2:1: error: this is a plan (YAML), not assembly: compile it with tcc-gen first (tcc-gen PLAN.yaml -o prog.asm)"
printf '; a program\n.wg 0\n    NOP\n' >"$tmp/prog.asm"
"$gen" "$tmp/prog.asm" -o "$tmp/out.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: a program -> 2, said as assembly" 2 "$tmp/prog.asm:2:1: error: this is assembly (a .wg line), not a plan: run it with tcc-sim"

# resident weights with no RF left after rf_temp_kib: said at rf_temp_kib,
# not as a panel to narrow
printf 'version: 1\nhardware: {rf_kib: 16}\nd1:\n  weights: resident\n' >"$tmp/rf.yaml"
"$gen" "$tmp/rf.yaml" --strict -o "$tmp/rf.asm" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "tcc-gen: rf_temp_kib takes the whole RF -> 2, said at rf_temp_kib" 2 "$tmp/rf.yaml:3:1: error: weights: resident: rf_temp_kib=16 leaves 0 of a WG's 16 KiB RF (hardware.rf_kib) for weights, less than a partition and the biases' one: lower rf_temp_kib"

# standard output on a full device: an error (exit 2, one line on stderr),
# not a lost report: tcc-sim's report, tcc-gen's assembly (written by its
# own thread, around stdio) and its IR text
full() { # NAME TOOL COMMAND...
  name=$1 tool=$2
  shift 2
  if [ ! -c /dev/full ]; then
    echo "[SKIP] $name: no /dev/full here"
    return
  fi
  "$@" >/dev/full 2>"$tmp/err"
  code=$?
  : >"$tmp/out"
  expect "$name" 2 "$tool: error: cannot write to standard output: No space left on device"
}
full "tcc-sim: the report on /dev/full -> 2, one line" tcc-sim "$sim" tests/asm/tiny_d1.asm
full "tcc-gen: the assembly on /dev/full -> 2, one line" tcc-gen "$gen" "$tmp/two.yaml" --problem d1
full "tcc-gen: --emit ir on /dev/full -> 2, one line" tcc-gen "$gen" "$tmp/two.yaml" --problem d1 --emit ir
full "tcc-gen: --version on /dev/full -> 2, one line" tcc-gen "$gen" --version

echo "cli: $pass passed, $fail failed, $xfail known gaps"
[ $fail -eq 0 ]
