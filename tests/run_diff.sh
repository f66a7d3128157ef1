#!/bin/sh
# tests/run_diff.sh BUILD_DIR - command-line tests of tcc-diff (the
# Makefile's diff-check), on real plans and the small plans of tests/diff/:
#  - --help, --version; usage errors exit 2 with one line on stderr;
#  - a bad plan (either side), a missing file and a plan that does not
#    compile: the frontend's or the compiler's one-line diagnostic, exit 2,
#    nothing on stdout;
#  - plans/baseline.yaml against a copy with one knob changed: exactly that
#    knob, with its plan lines; the code difference is that knob's (WAITTs:
#    sync instructions only); the metric rows; --all lists every changed
#    task; --json parses and carries the same; --json is UTF-8 for plan
#    file names that are not;
#  - plans/best.yaml against tests/diff/best_explicit.yaml (the same plan
#    written another way, defaults spelled out): no knob, no code
#    difference, every delta zero;
#  - a side over the area budget (24 SMs: tasks move to other WGs): the
#    report, then exit 1;
#  - the same run twice gives the same bytes; --seed reaches the runs.
# Prints [PASS]/[FAIL] per test and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
diff=$build/tcc-diff

# ---------------------------------------------------------------- usage

"$diff" --help >"$tmp/out" 2>&1 && grep -q "A.yaml B.yaml" "$tmp/out" && grep -q -- "--problem" "$tmp/out" &&
  ok "--help" || ko "--help"
"$diff" --version >"$tmp/out" 2>&1 && grep -q "^tcc-diff 0.1.0$" "$tmp/out" &&
  grep -q "^simulator: tcc-sim .*spec v3" "$tmp/out" && ok "--version" || ko "--version"
"$diff" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no argument -> 2" 2 "tcc-diff: error: expected two plan files (see --help)"
"$diff" tests/diff/small.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "one plan -> 2" 2 "tcc-diff: error: expected two plan files (see --help)"
"$diff" --bogus tests/diff/small.yaml tests/diff/small.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "unknown option -> 2" 2 "tcc-diff: error: Unknown option --bogus"
"$diff" tests/diff/small.yaml tests/diff/small.yaml --problem x1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--problem x1 -> 2" 2 "tcc-diff: error: --problem must be p1 or d1, got 'x1'"
for s in -1 +5 abc 9223372036854775808 ""; do
  "$diff" tests/diff/small.yaml tests/diff/small.yaml --seed="$s" >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "--seed '$s' -> 2" 2 "tcc-diff: error: --seed must be an integer 0..9223372036854775807, got '$s'"
done

# ---------------------------------------------------------------- bad input

"$diff" tests/diff/small.yaml tests/diff/bad_typo.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "bad plan b -> 2" 2 "tests/diff/bad_typo.yaml:5:3: error: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"
"$diff" tests/diff/bad_typo.yaml plans/baseline.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "bad plan a -> 2" 2 "tests/diff/bad_typo.yaml:5:3: error: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"
"$diff" tests/diff/small.yaml tests/diff/none.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "missing plan -> 2" 2 "tests/diff/none.yaml:1:1: error: cannot read plan: No such file or directory"
# a plan the compiler refuses (tcc-gen's diagnostic), on either side;
# --strict: without it the plan falls back to streaming and compiles
"$diff" --strict tests/diff/small.yaml tests/golden/bad_p1_resident_fit.yaml --problem p1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "plan b does not compile -> 2" 2 "$(cat tests/golden/bad_p1_resident_fit.err)"
"$diff" --strict tests/golden/bad_p1_resident_fit.yaml tests/diff/small.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "plan a does not compile -> 2" 2 "$(cat tests/golden/bad_p1_resident_fit.err)"
# d1 asked of plans without a d1 section: the compiler's "no d1 section"
printf 'version: 1\np1:\n  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}\n' >"$tmp/p1.yaml"
"$diff" "$tmp/p1.yaml" "$tmp/p1.yaml" --problem d1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--problem d1 without a d1 section -> 2" 2 "$tmp/p1.yaml:1:1: error: the plan has no d1 section"

printf 'version: 1\n' >"$tmp/empty.yaml"
"$diff" "$tmp/empty.yaml" "$tmp/empty.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no section in either plan -> 2" 2 "$tmp/empty.yaml:1:1: error: neither plan has a p1 or d1 section"

# ---------------------------------------------------------------- one knob

# the baseline with d1's store_spacing 0 -> 32 (one line of the file)
line=$(awk '/^d1:/ { d = 1 } d && /^  store_spacing: 0/ { print NR; exit }' plans/baseline.yaml)
sed "${line}s/store_spacing: 0/store_spacing: 32/" plans/baseline.yaml >"$tmp/spacing.yaml"
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && ok "one knob: exit 0" || { ko "one knob: exit 0 (exit $code)"; cat "$tmp/err"; }
sed -n '/^knobs/,/^$/p' "$tmp/out" >"$tmp/knobs"
printf '%s\n' "knobs (hardware, d1; effective values): 1 differs" \
  "  d1.store_spacing: 0 (line $line) -> 32 (line $line)" "" >"$tmp/want"
diff -u "$tmp/want" "$tmp/knobs" >"$tmp/diff" && ok "one knob: exactly that knob, with its lines" ||
  { ko "one knob: exactly that knob, with its lines"; cat "$tmp/diff"; }
# 640 tasks of 21 to 30 instructions, each with one WAITT more; every WG
# with its 10 tasks' WAITTs; nothing but sync instructions changed
grep -q '^d1 code: 640 of 640 tasks changed, 64 of 64 WGs changed; instructions 14400 -> 15040 (+640 -0)$' "$tmp/out" &&
  grep -q '^  t0.l0.qkv.p0  *0  *21  *22  *+1  *-0  *\.  *\.  *\.  *\.  *\.  *\.  *+1$' "$tmp/out" &&
  grep -q '^  610 more  *13664  *14274  *+610  *-0  *\.  *\.  *\.  *\.  *\.  *\.  *+610$' "$tmp/out" &&
  grep -q '^  wg0  *225  *235  *+10  *-0  *+0  *-0  *\.  *\.  *\.  *\.  *\.  *\.  *+10$' "$tmp/out" &&
  grep -q '^  34 more  *7650  *7990  *+340 ' "$tmp/out" &&
  grep -q '^  total  *14400  *15040  *+640  *-0  *+0  *-0  *\.  *\.  *\.  *\.  *\.  *\.  *+640$' "$tmp/out" &&
  ok "one knob: the code difference per task and WG" || { ko "one knob: the code difference per task and WG"; cat "$tmp/out"; }
[ "$(grep -c '^  t[0-9]' "$tmp/out")" -eq 30 ] && ok "one knob: 30 task rows, the rest summed" ||
  ko "one knob: 30 task rows, the rest summed"
# the metrics: cycles grow (the stores wait), the instructions run by 640
grep -q '^d1 metrics (seed 7) ' "$tmp/out" &&
  grep -q '^  cycles  *124192  *[0-9]*  *+[1-9][0-9]*  *1\.[0-9]*$' "$tmp/out" &&
  grep -q '^  instructions run  *14400  *15040  *+640  *1\.0444$' "$tmp/out" &&
  grep -q '^  MMA blocks  *3712  *3712  *+0  *1\.0000$' "$tmp/out" &&
  grep -q '^  busy MMA %  ' "$tmp/out" && grep -q '^  HBM lines ' "$tmp/out" && grep -q '^  peak W ' "$tmp/out" &&
  grep -q '^  hottest window  *\[[0-9]*, [0-9]*)  *\[[0-9]*, [0-9]*) ' "$tmp/out" &&
  grep -q '^  verdict  *PASS  *PASS$' "$tmp/out" && ok "one knob: the metric rows" ||
  { ko "one knob: the metric rows"; sed -n '/metrics/,$p' "$tmp/out"; }
! grep -q ' p1 \|^p1 ' "$tmp/out" && ok "--problem d1: no p1 section" || ko "--problem d1: no p1 section"
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 --all >"$tmp/all" 2>"$tmp/err"
[ "$(grep -c '^  t[0-9]' "$tmp/all")" -eq 640 ] && ! grep -q ' more ' "$tmp/all" && ok "--all: every changed task" ||
  ko "--all: every changed task"
# the same run twice: the same bytes
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 >"$tmp/again" 2>&1
cmp -s "$tmp/out" "$tmp/again" && ok "one knob: the same bytes twice" || ko "one knob: the same bytes twice"
# the code itself: a unified diff per WG, every added line a WAITT citing
# the knob's line, nothing removed; --stat the summary alone; -U 0
grep -q '^d1 code diff (unified, by WG): 64 WGs differ$' "$tmp/out" &&
  [ "$(grep -c '^--- plans/baseline.yaml d1 wg [0-9]*$' "$tmp/out")" -eq 64 ] &&
  [ "$(grep -c "^+WAITT     32  *; d1.store_spacing:$line " "$tmp/out")" -eq 640 ] &&
  [ "$(grep '^+' "$tmp/out" | grep -vc '^+++ ')" -eq 640 ] &&
  [ "$(grep '^-' "$tmp/out" | grep -vc '^--- ')" -eq 0 ] &&
  grep -q '^@@ -[0-9]*,[0-9]* +[0-9]*,[0-9]* @@ t0.l0.qkv.p0$' "$tmp/out" &&
  ok "one knob: the unified code diff, WG by WG, the added lines citing the knob" ||
  { ko "one knob: the unified code diff"; sed -n '/code diff/,+12p' "$tmp/out"; }
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 --stat >"$tmp/stat" 2>"$tmp/err"
! grep -q 'code diff' "$tmp/stat" && ! grep -q '^+' "$tmp/stat" && grep -q '^d1 code: 640 of 640 tasks changed' "$tmp/stat" &&
  ok "--stat: the summary, no code" || ko "--stat: the summary, no code"
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 -U 0 >"$tmp/u0" 2>"$tmp/err"
[ "$(sed -n '/code diff/,$p' "$tmp/u0" | grep -c '^ ')" -eq 0 ] && grep -q '^@@ -[0-9]*,0 +[0-9]*,1 @@ ' "$tmp/u0" &&
  ok "-U 0: hunks without context" || ko "-U 0: hunks without context"
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" -U -1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "-U -1 -> 2" 2 "tcc-diff: error: --unified must be 0..1000, got -1"

# --json: parses, and has the fields
"$diff" plans/baseline.yaml "$tmp/spacing.yaml" --problem d1 --json >"$tmp/json" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ]; then ok "--json: exit 0"; else ko "--json: exit 0 (exit $code)"; fi
if command -v jq >/dev/null 2>&1; then
  got=$(jq -r '[.tool, .seed, (.knobs | length), .knobs[0].path, .knobs[0].a, .knobs[0].b, .knobs[0].a_line,
      (.problems | length), .problems[0].problem, .problems[0].code.lines.added, .problems[0].code.lines.removed,
      (.problems[0].code.tasks.changed | length), .problems[0].code.tasks.changed[0].task,
      .problems[0].code.tasks.changed[0].counts.sync.delta, .problems[0].code.wgs.total,
      .problems[0].metrics.cycles.a, .problems[0].metrics.insns.delta, .problems[0].metrics.mma_blocks.ratio,
      (.problems[0].metrics.busy_pct | length), (.problems[0].metrics.window.a | length),
      .problems[0].metrics.status.b] | map(tostring) | join(" ")' "$tmp/json")
  want="tcc-diff 0.1.0 7 1 d1.store_spacing 0 32 $line 1 d1 640 0 640 t0.l0.qkv.p0 1 64 124192 640 1 9 2 pass"
  [ "$got" = "$want" ] && ok "--json: the fields (jq)" || { ko "--json: the fields (jq)"; echo " got  $got"; echo " want $want"; }
else
  echo "[SKIP] --json: the fields (jq is absent; the unit test test_diff_json parses the JSON)"
fi
# --json on plans whose file names are not UTF-8 (a byte 0xff): valid UTF-8
# JSON all the same (U+FFFD for the byte; docs/tools.md "Results")
ff=$(printf '\377')
cp tests/diff/small.yaml "$tmp/a$ff.yaml"
cp tests/diff/small.yaml "$tmp/b$ff.yaml"
"$diff" "$tmp/a$ff.yaml" "$tmp/b$ff.yaml" --problem d1 --json >"$tmp/json" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && iconv -f UTF-8 -t UTF-8 "$tmp/json" >/dev/null 2>&1 &&
  { ! command -v jq >/dev/null 2>&1 || jq -e '.a | endswith("a\ufffd.yaml")' "$tmp/json" >/dev/null; }; then
  ok "--json on plans named with byte 0xff: valid UTF-8"
else
  ko "--json on plans named with byte 0xff: valid UTF-8 (exit $code)"
  cat "$tmp/err"
fi

# ---------------------------------------------------------------- no change

"$diff" plans/best.yaml tests/diff/best_explicit.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
good=1
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] || good=0
grep -q '^knobs (hardware, p1, d1; effective values): 0 differ$' "$tmp/out" || good=0
grep -q '^p1 code: 0 of [0-9]* tasks changed, 0 of 64 WGs changed; instructions \([0-9]*\) -> \1 (+0 -0)$' "$tmp/out" || good=0
grep -q '^d1 code: 0 of [0-9]* tasks changed, 0 of 64 WGs changed; instructions \([0-9]*\) -> \1 (+0 -0)$' "$tmp/out" || good=0
# every metric row: a = b, delta zero, ratio 1 (or - when a is 0)
rows=$(sed -n '/ metrics /,/^  max abs/p' "$tmp/out" | grep -v ' metrics \|max abs\|hottest window')
[ "$(printf '%s\n' "$rows" | wc -l)" -eq 32 ] || good=0
bad=$(printf '%s\n' "$rows" | awk '{ n = NF; if ($(n-3) != $(n-2) || $(n-1) !~ /^[+]0(\.0*)?$/ || ($n != "1.0000" && $n != "-")) print }')
[ -z "$bad" ] || { good=0; echo "$bad"; }
[ "$(grep -c '^  hottest window .* +0$' "$tmp/out")" -eq 2 ] || good=0
[ "$(grep -c '^  verdict  *PASS  *PASS$' "$tmp/out")" -eq 2 ] || good=0
if [ $good -eq 1 ]; then ok "best.yaml written another way: no knob, no code, zero deltas"; else
  ko "best.yaml written another way: no knob, no code, zero deltas (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# ---------------------------------------------------------------- exit 1, --seed

"$diff" tests/diff/small.yaml tests/diff/small_area.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 1 ] && [ ! -s "$tmp/err" ] && [ "$(grep -c '^  verdict  *PASS  *FAIL: area$' "$tmp/out")" -eq 2 ] &&
  grep -q '^  hardware.sms: 16 (default) -> 24 (line 4)$' "$tmp/out" &&
  grep -q '^  d1.sms_used: 16 (default) -> 24 (default)$' "$tmp/out" &&
  grep -q '^  l0.w1.r1.p0  *1>64  *17  *17  *+0  *-0  *\.  *\.  *\.  *\.  *\.  *\.  *\.$' "$tmp/out" &&
  grep -q '^  wg64  *0  *18  *+18  *-0  *+5  *-0 ' "$tmp/out"; then
  ok "b over the area budget: the report, exit 1"
else
  ko "b over the area budget: the report, exit 1 (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi
"$diff" tests/diff/small.yaml tests/diff/small.yaml --problem p1 --seed 13 >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && grep -q '^p1 metrics (seed 13) ' "$tmp/out" && ! grep -q '^d1 ' "$tmp/out" &&
  grep -q '^knobs (hardware, p1; effective values): 0 differ$' "$tmp/out" && ok "--seed 13 --problem p1" ||
  { ko "--seed 13 --problem p1 (exit $code)"; cat "$tmp/out" "$tmp/err"; }

# standard output on a full device: an error, not a lost report
expect_full "the report on /dev/full -> 2, one line" tcc-diff "$diff" tests/diff/small.yaml tests/diff/small.yaml --problem d1

echo "diff: $pass passed, $fail failed"
[ $fail -eq 0 ]
