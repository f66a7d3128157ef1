#!/bin/sh
# tests/run_grade.sh BUILD_DIR - the format of tcc-grade's report:
#  - --version: "tcc-grade X.Y.Z", then "simulator: " and tcc-sim --version;
#  - a real report (a tiny plan, and the baseline plan whose two hottest
#    windows differ in width): the first line is "tcc-grade X.Y.Z  PLAN", the
#    second "simulator: " and tcc-sim --version, then the table, then the
#    score line, then the lower bound of each problem and the ratio to it;
#  - tcc-grade against four full tcc-sim runs per problem (the tiny plan);
#  - experiment records: --record DIR [--note] on a good, a failing, a
#    slower and a broken plan (the lines' fields and classes), --log DIR's
#    table, bad lines skipped with a warning (malformed, a NUL byte), a plan
#    name that is not UTF-8 (records, --explain --json, --json), usage errors;
#  - the table code alone (BUILD_DIR/tests/grade-table, built from
#    src/driver/tcc_grade.c with -DTCC_GRADE_TABLE_TEST) on extreme cells:
#    9-digit cycles and windows, hundreds of mm^2 and thousands of W, inf
#    and nan errors, long FAIL verdicts.
# A table lines up when, split into cells at runs of two or more spaces
# (no cell holds two spaces in a row), the header has 9 cells and every row
# 10, and across the header and the rows the right-aligned columns (cycles,
# area, power, the four errors) end at the same offset and the left-aligned
# ones (the hottest window, the verdict) start at the same offset, with at
# least two spaces between cells.
# Prints [PASS]/[FAIL] per test and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
grade=$build/tcc-grade
sim=$build/tcc-sim
table=$build/tests/grade-table

simver=$("$sim" --version)
gradever=$("$grade" --version 2>/dev/null | sed -n 1p)

# aligned FILE FIRST: lines FIRST.. of FILE are a header and rows (up to the
# first line that is neither); prints what is wrong, exits 1 if anything.
aligned() {
  awk -v first="$2" '
    # cells of a line: S[i], E[i] = 1-based start and end offsets
    function cells(line,   pos, n) {
      n = 0; pos = 1
      while (match(substr(line, pos), /[^ ]+( [^ ]+)*/)) {
        n++; S[n] = pos + RSTART - 1; E[n] = S[n] + RLENGTH - 1; pos = E[n] + 1
      }
      return n
    }
    NR < first { next }
    NR == first {
      if ((n = cells($0)) != 9) { print "header: " n " cells, want 9: " $0; bad = 1; exit }
      for (i = 1; i <= 9; i++) { hs[i + 1] = S[i]; he[i + 1] = E[i] }
      next
    }
    !/^(p1|d1) / { exit }
    {
      rows++
      n = cells($0)
      if (n != 10) { print "row " rows ": " n " cells, want 10: " $0; bad = 1; next }
      for (c = 2; c <= 10; c++) {
        left = c == 5 || c == 10
        if (left && S[c] != hs[c]) { print "row " rows " column " c " starts at " S[c] ", header at " hs[c]; bad = 1 }
        if (!left && E[c] != he[c]) { print "row " rows " column " c " ends at " E[c] ", header at " he[c]; bad = 1 }
        if (S[c] < E[c - 1] + 3) { print "row " rows " column " c ": less than two spaces before it"; bad = 1 }
      }
    }
    END { if (!rows) { print "no rows"; bad = 1 } exit bad }
  ' "$1"
}

# report NAME FILE PLAN ROWS: FILE is a report of PLAN (or "table-test") with
# ROWS table rows, lined up.
report() {
  good=1
  [ "$(sed -n 1p "$2")" = "$gradever  $3" ] || { good=0; echo "first line: $(sed -n 1p "$2")"; }
  [ "$(sed -n 2p "$2")" = "simulator: $simver" ] || { good=0; echo "second line: $(sed -n 2p "$2")"; }
  [ "$(grep -c '^[pd]1 ' "$2")" -eq "$4" ] || { good=0; echo "want $4 rows"; }
  aligned "$2" 3 || good=0
  if [ $good -eq 1 ]; then ok "$1"; else ko "$1"; cat "$2"; fi
}

"$grade" --version >"$tmp/out" 2>&1
if [ $? -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] && sed -n 1p "$tmp/out" | grep -q '^tcc-grade [0-9][0-9.]*$' &&
  [ "$(sed -n 2p "$tmp/out")" = "simulator: $simver" ]; then
  ok "tcc-grade --version: tcc-grade, then the simulator"
else
  ko "tcc-grade --version: tcc-grade, then the simulator"
  cat "$tmp/out"
fi

# real reports: a tiny plan (no score), the baseline (score 1000.00)
small_d1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, history: 32, steps: 2}'
small_p1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}'
printf 'version: 1\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/two.yaml"
"$grade" "$tmp/two.yaml" >"$tmp/tiny" 2>&1
report "tcc-grade tiny plan: first lines, table aligned" "$tmp/tiny" "$tmp/two.yaml" 2
"$grade" plans/baseline.yaml >"$tmp/base" 2>&1
report "tcc-grade baseline: first lines, table aligned" "$tmp/base" plans/baseline.yaml 2
[ "$(sed -n 6p "$tmp/base")" = "score 1000.00  = 1000 * sqrt(802528 * 124192 / (802528 * 124192))" ] &&
  [ "$(wc -l <"$tmp/base")" -eq 8 ] && ok "tcc-grade baseline: the score line, then the bounds" ||
  { ko "tcc-grade baseline: the score line, then the bounds"; cat "$tmp/base"; }
# the lower bounds (docs/bounds.md): named, and below the programs' cycles
[ "$(sed -n 7p "$tmp/base")" = "bound p1  56001 cycles (power); cycles / bound = 14.33" ] &&
  [ "$(sed -n 8p "$tmp/base")" = "bound d1  8300 cycles (chain); cycles / bound = 14.96" ] &&
  ok "tcc-grade baseline: the bound of each problem and the ratio" ||
  { ko "tcc-grade baseline: the bound of each problem and the ratio"; cat "$tmp/base"; }
# the best plan passes everywhere and beats the baseline (README quotes it)
if "$grade" plans/best.yaml >"$tmp/best" 2>&1 &&
  sed -n 6p "$tmp/best" | grep -q "^score 5879.07  = 1000 \* sqrt(802528 \* 124192 / (118716 \* 24290))$" &&
  sed -n 7p "$tmp/best" | grep -q "^bound p1  57001 cycles (power); cycles / bound = 2.08$" &&
  sed -n 8p "$tmp/best" | grep -q "^bound d1  8300 cycles (chain); cycles / bound = 2.93$"; then
  ok "tcc-grade best: passes, score 5879.07"
else
  ko "tcc-grade best: passes, score 5879.07"
  cat "$tmp/best"
fi
# the same report whatever the number of threads (TCC_GRADE_THREADS,
# docs/tools.md): one task at a time, or more threads than tasks; and a
# count out of range is refused
if TCC_GRADE_THREADS=1 "$grade" plans/best.yaml >"$tmp/best.t1" 2>&1 && cmp -s "$tmp/best" "$tmp/best.t1" &&
  TCC_GRADE_THREADS=12 "$grade" plans/best.yaml >"$tmp/best.t12" 2>&1 && cmp -s "$tmp/best" "$tmp/best.t12" &&
  TCC_GRADE_THREADS=1 "$grade" --json "$tmp/two.yaml" >"$tmp/two.t1.json" 2>&1 &&
  TCC_GRADE_THREADS=3 "$grade" --json "$tmp/two.yaml" >"$tmp/two.t3.json" 2>&1 &&
  cmp -s "$tmp/two.t1.json" "$tmp/two.t3.json"; then
  ok "tcc-grade: the same report on 1, 3, 12 threads and the default"
else
  ko "tcc-grade: the same report on 1, 3, 12 threads and the default"
  diff "$tmp/best" "$tmp/best.t1"; diff "$tmp/best" "$tmp/best.t12"; diff "$tmp/two.t1.json" "$tmp/two.t3.json"
fi
TCC_GRADE_THREADS=0 "$grade" plans/best.yaml >"$tmp/t0.out" 2>"$tmp/t0.err"
if [ $? -eq 2 ] && [ ! -s "$tmp/t0.out" ] &&
  [ "$(cat "$tmp/t0.err")" = "tcc-grade: error: TCC_GRADE_THREADS='0': expected a thread count from 1 to 64" ]; then
  ok "tcc-grade: TCC_GRADE_THREADS=0 refused (exit 2, one line)"
else
  ko "tcc-grade: TCC_GRADE_THREADS=0 refused (exit 2, one line)"
  cat "$tmp/t0.err"
fi
# the best P1 (with best.yaml's D1) passes everywhere (README quotes it)
if "$grade" plans/best-p1.yaml >"$tmp/bestp1" 2>&1 &&
  sed -n 6p "$tmp/bestp1" | grep -q "^score 2961.96  = 1000 \* sqrt(802528 \* 124192 / (185014 \* 61403))$"; then
  ok "tcc-grade best-p1: passes, score 2961.96"
else
  ko "tcc-grade best-p1: passes, score 2961.96"
  cat "$tmp/bestp1"
fi
# the multicast pass on best.yaml's P1 (plans/best-mcpass.yaml): race-free,
# correct on every seed, within budgets, at the score docs/techniques.md quotes
if "$grade" plans/best-mcpass.yaml >"$tmp/mcpass" 2>&1 &&
  sed -n 6p "$tmp/mcpass" | grep -q "^score 4450.58  = 1000 \* sqrt(802528 \* 124192 / (171032 \* 29420))$"; then
  ok "tcc-grade best-mcpass: passes, score 4450.58"
else
  ko "tcc-grade best-mcpass: passes, score 4450.58"
  cat "$tmp/mcpass"
fi

# tcc-grade times each problem once and checks the numerics per seed: its
# table is the one that four full tcc-sim runs per problem give (the same
# cycles, area and power on every seed; each seed's own error)
same=1
for prob in p1 d1; do
  "$build/tcc-gen" "$tmp/two.yaml" --problem $prob -o "$tmp/$prob.asm" || same=0
  row=$prob
  for s in 7 13 11 23; do
    "$sim" --json --seed $s "$tmp/$prob.asm" >"$tmp/$prob.$s.json"
    # fields of a tcc-sim --json report (the error as the table prints it)
    timing=$(jq -r '[.cycles, .area_mm2, .peak_w, .window[0]] | map(tostring) | join(" ")' "$tmp/$prob.$s.json")
    [ $s -eq 7 ] && { first=$timing; row="$row $timing"; }
    [ "$timing" = "$first" ] || { same=0; echo "$prob seed $s: $timing, seed 7: $first"; }
    row="$row $(jq -r '.max_abs_err' "$tmp/$prob.$s.json")"
  done
  rows="$rows|$row"
done
IFS='|'
# shellcheck disable=SC2086 # the rows, split at |
set -- ${rows#|}
unset IFS
"$table" "$@" | sed -n '3,$p' >"$tmp/want"
"$grade" "$tmp/two.yaml" | sed -n '3,5p' >"$tmp/got"
if [ $same -eq 1 ] && diff -u "$tmp/want" "$tmp/got" && [ "$(awk '{print $7, $8, $9, $10}' "$tmp/got" | tr ' ' '\n' | sort -u | wc -l)" -gt 2 ]; then
  ok "tcc-grade: the table of four tcc-sim runs per problem, per-seed errors"
else
  ko "tcc-grade: the table of four tcc-sim runs per problem, per-seed errors"
fi

# the table alone: NAME CYCLES AREA W WINDOW_START ERR7 ERR13 ERR11 ERR23
t() { # NAME ROW...
  name=$1
  shift
  if "$table" "$@" >"$tmp/t" 2>&1; then report "table: $name" "$tmp/t" table-test $#; else ko "table: $name"; cat "$tmp/t"; fi
}
t "baseline-like (window widths 4 and 6 digits)" \
  "p1 802528 22.7192 18.7241 8606 2.3e-06 2.6e-06 1.9e-06 1.9e-06" \
  "d1 124192 22.7192 14.8881 119757 9.2e-07 9.0e-07 8.9e-07 1.1e-06"
t "9-digit cycles and window against 3 digits" \
  "p1 999999999 23.9999 19.9999 999998999 0 0 0 0" \
  "d1 812 0.5 0.1 0 1e-9 1e-9 1e-9 1e-9"
t "3 digits against 9 digits" \
  "p1 812 0.5 0.1 0 1e-9 1e-9 1e-9 1e-9" \
  "d1 123456789 23.5 19.5 123455789 0 0 0 0"
t "FAIL verdicts: area, power, inf and nan errors" \
  "p1 987654321 123.4567 1234.5678 987653321 inf nan 1e+38 1e-300" \
  "d1 4096 24.5 20.5 3000 1e-3 0 0 0"
t "one row" "p1 1000 1 1 0 0 0 0 0"
# the verdicts name what fails
"$table" "p1 1 123.4567 1234.5678 0 inf 0 0 0" | grep -q '^p1 .*  FAIL: numerics (seed 7), area, power$' &&
  "$table" "d1 1 1 1 0 0 0 1 0" | grep -q '^d1 .*  FAIL: numerics (seed 11)$' &&
  "$table" "d1 1 1 1 0 0 0 0 0" | grep -q '^d1 .*  PASS$' &&
  ok "table: verdicts" || ko "table: verdicts"

# ---- experiment records: tcc-grade --record DIR [--note], --log DIR
# (docs/tools.md "Experiment records"): a good run, a failing one, a
# slower one and a tool error, one JSON line each with its fields and
# class; the --log table; a malformed line.
rec=$tmp/records
printf 'version: 1\nhardware: {sms: 24}\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/area.yaml"
printf 'version: 1\nhardware: {hbm_channels: 2}\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/slow.yaml"
printf 'version: 1\np1:\n%s\n' "$small_p1" >"$tmp/half.yaml"
codes=""
for p in two area slow half; do
  "$grade" "$tmp/$p.yaml" --record "$rec" --note "try $p" >"$tmp/rec.$p.out" 2>"$tmp/rec.$p.err"
  codes="$codes $?"
done
n=0
for p in two area slow half; do
  n=$((n + 1))
  case $p in two) class=pass ;; area) class=area ;; slow) class=slower ;; half) class=refused ;; esac
  grep -q "^tcc-grade: note: recorded in $rec/records.jsonl, line $n: $class\$" "$tmp/rec.$p.err" ||
    { echo "$p: $(cat "$tmp/rec.$p.err")"; codes="$codes bad-note"; }
done
[ "$codes" = " 0 1 0 2" ] && [ "$(wc -l <"$rec/records.jsonl")" -eq 4 ] && cmp -s "$tmp/tiny" "$tmp/rec.two.out" &&
  ok "--record: four runs, four lines, exits 0 1 0 2, the report unchanged, a note each" ||
  { ko "--record: four runs, four lines, exits 0 1 0 2, the report unchanged, a note each ($codes)"; cat "$rec/records.jsonl"; }
# the fields of the good run's line against the files and tcc-sim's hashes
"$build/tcc-gen" "$tmp/two.yaml" --problem p1 -o "$tmp/rec.p1.asm"
line1=$(sed -n 1p "$rec/records.jsonl")
good=1
for want in "\"plan\":\"$tmp/two.yaml\"" "\"plan_sha256\":\"$(sha256sum <"$tmp/two.yaml" | cut -c1-64)\"" \
  '"note":"try two"' "\"tool\":\"$gradever\"" "\"simulator\":\"$simver\"" '"spec":3' '"seeds":\[7,13,11,23\]' \
  '^{"schema_version":1,' '"status":"pass","failures":\[\],"score":null' \
  '"problem":{"kind":"p1","d_model":32,"heads":1,"d_ff":64,"layers":1,"seqs":1,"rows":64},' \
  "\"program_sha256\":\"$(sha256sum <"$tmp/rec.p1.asm" | cut -c1-64)\"" \
  "\"hardware_sha256\":\"$("$sim" --timing-only "$tmp/rec.p1.asm" | sed -n 's/^hardware  sha256 //p')\"" \
  "\"p1\":{\"status\":\"pass\",\"failures\":\[\],\"cycles\":$(sed -n 's/^p1 *\([0-9]*\) .*/\1/p' "$tmp/tiny")," \
  '"seeds":\[{"seed":7,"max_abs_err":[0-9.e-]*,"status":"pass"},{"seed":13,'; do
  printf '%s\n' "$line1" | grep -q "$want" || { good=0; echo "line 1 lacks $want"; }
done
printf '%s\n' "$line1" | grep -Eq '"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",' || { good=0; echo "line 1: time"; }
sed -n 2p "$rec/records.jsonl" | jq -e '.status == "area" and .failures == ["area"] and .score == null and
  ([.problems[] | .status] == ["area", "area"]) and .problems.d1.failures == ["area"]' >/dev/null ||
  { good=0; echo "line 2: the area failure"; }
sed -n 3p "$rec/records.jsonl" | grep -q "\"status\":\"slower\".*\"best_before\":{\"time\":\"[^\"]*\",\"plan\":\"$tmp/two.yaml\"" ||
  { good=0; echo "line 3: slower than line 1"; }
sed -n 4p "$rec/records.jsonl" | grep -q "\"status\":\"refused\",\"failures\":\[\],\"score\":null,\"error\":\"$tmp/half.yaml:1:1: error: the plan has no d1 section\"}\$" ||
  { good=0; echo "line 4: the refusal"; }
if [ $good -eq 1 ]; then ok "--record: the lines' fields and classes"; else ko "--record: the lines' fields and classes"; cat "$rec/records.jsonl"; fi
# --log: a header and a row per record, oldest first, columns aligned
"$grade" --log "$rec" >"$tmp/log" 2>"$tmp/err"
code=$?
p1c=$(sed -n 's/^p1 *\([0-9]*\) .*/\1/p' "$tmp/tiny")
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(wc -l <"$tmp/log")" -eq 5 ] &&
  sed -n 1p "$tmp/log" | grep -Eq '^time +plan +note +P1 +D1 +P1 W +D1 W +score +status$' &&
  [ "$(awk '{print $NF}' "$tmp/log" | tr '\n' ' ')" = "status pass area slower refused " ] &&
  sed -n 2p "$tmp/log" | grep -q "  $tmp/two.yaml  *try two  *$p1c  " &&
  sed -n 5p "$tmp/log" | grep -q "  try half  *-  *-  *-  *-  *-  refused\$" &&
  [ "$(awk '{ print length($0) - length($NF) }' "$tmp/log" | sort -u | wc -l)" -eq 1 ] &&
  [ "$(awk '{ print index($0, "  " $2 "  ") }' "$tmp/log" | sort -u)" = 21 ]; then
  ok "--log: the table, oldest first, aligned"
else
  ko "--log: the table, oldest first, aligned (exit $code)"
  cat "$tmp/log" "$tmp/err"
fi
# a plan given through a FIFO (read once: parsed, hashed and kept from the
# same bytes), graded and recorded with its text and hash
mkdir "$tmp/fiforec"
mkfifo "$tmp/fiforec/plan.yaml"
timeout 60 cp "$tmp/two.yaml" "$tmp/fiforec/plan.yaml" &
timeout 120 "$grade" "$tmp/fiforec/plan.yaml" --record "$tmp/fiforec/rec" >"$tmp/out" 2>"$tmp/err"
code=$?
wait
sha=$(sha256sum <"$tmp/two.yaml" | cut -d' ' -f1)
if [ $code -eq 0 ] && grep -q "\"plan_sha256\":\"$sha\"" "$tmp/fiforec/rec/records.jsonl" &&
  "$grade" --log "$tmp/fiforec/rec" --plan 1 >"$tmp/fifo.plan" 2>/dev/null && cmp -s "$tmp/two.yaml" "$tmp/fifo.plan"; then
  ok "--record of a plan read from a FIFO: graded, its hash and text recorded"
else
  ko "--record of a plan read from a FIFO (exit $code)"; cat "$tmp/err"
fi
# the records file is never the plan (docs/tools.md, "Output files"): a
# plan named DIR/records.jsonl graded with --record DIR is refused, untouched
mkdir "$tmp/recplan"
cp "$tmp/two.yaml" "$tmp/recplan/records.jsonl"
"$grade" "$tmp/recplan/records.jsonl" --record "$tmp/recplan" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--record DIR whose records.jsonl is the plan -> 2" 2 "tcc-grade: error: --record: $tmp/recplan/records.jsonl is the plan itself"
cmp -s "$tmp/two.yaml" "$tmp/recplan/records.jsonl" && ok "... the plan untouched" || ko "... the plan untouched"
# a malformed line: FILE:LINE:1: warning: ..., skipped; --log lists the
# other records and exits 0, --record still grades and appends after it
echo '{"time": "t", "plan":' >>"$rec/records.jsonl"
"$grade" --log "$rec" >"$tmp/out" 2>"$tmp/err"
code=$?
"$grade" "$tmp/two.yaml" --record "$rec" >"$tmp/out2" 2>"$tmp/err2"
code2=$?
if [ $code -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 5 ] && grep -q "^$rec/records.jsonl:5:1: warning: malformed JSON: .*; line skipped\$" "$tmp/err" &&
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ $code2 -eq 0 ] && cmp -s "$tmp/tiny" "$tmp/out2" &&
  [ "$(sed -n 1p "$tmp/err2")" = "$(cat "$tmp/err")" ] &&
  grep -q "^tcc-grade: note: recorded in $rec/records.jsonl, line 6: pass\$" "$tmp/err2" &&
  [ "$(wc -l <"$rec/records.jsonl")" -eq 6 ]; then
  ok "--log / --record on a malformed line: FILE:5:1: warning: ..., skipped, exit 0, the run appended at line 6"
else
  ko "--log / --record on a malformed line: FILE:5:1: warning: ..., skipped (exits $code $code2)"
  cat "$tmp/out" "$tmp/err" "$tmp/err2"
fi
# records.jsonl an endless device: read up to the 256 MiB limit, not whole
# (which never ends; the timeout ends a reader that reads on)
mkdir -p "$tmp/zero" && ln -s /dev/zero "$tmp/zero/records.jsonl"
timeout 120 "$grade" --log "$tmp/zero" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--log on an endless records.jsonl -> 2 at the 256 MiB limit" 2 "$tmp/zero/records.jsonl: error: cannot read: larger than the limit of 268435456 bytes"
# a bad line 2 of 3 (a NUL byte in it; garbage): --log lists records 1 and 3
# and names line 2 (a NUL byte used to end the file there, hiding line 3,
# with exit 0)
for kind in nul garbage; do
  d=$tmp/bad-$kind
  mkdir -p "$d"
  sed -n 1p "$rec/records.jsonl" >"$d/records.jsonl"
  # the NUL byte after a whole record: the line is still bad, not that record
  if [ $kind = nul ]; then { sed -n 2p "$rec/records.jsonl" | tr -d '\n'; printf '\000junk\n'; } >>"$d/records.jsonl"
  else echo 'garbage' >>"$d/records.jsonl"; fi
  sed -n 3p "$rec/records.jsonl" >>"$d/records.jsonl"
  "$grade" --log "$d" >"$tmp/out" 2>"$tmp/err"
  code=$?
  case $kind in nul) why="a NUL byte in the line" ;; *) why="malformed JSON: .*" ;; esac
  if [ $code -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q "^$d/records.jsonl:2:1: warning: $why; line skipped\$" "$tmp/err" &&
    [ "$(sed -n 2p "$tmp/out" | awk '{print $NF}')" = pass ] && [ "$(sed -n 3p "$tmp/out" | awk '{print $NF}')" = slower ]; then
    ok "--log: a bad line 2 of 3 ($kind): records 1 and 3 listed, line 2 named, exit 0"
  else
    ko "--log: a bad line 2 of 3 ($kind): records 1 and 3 listed, line 2 named, exit 0 (exit $code)"
    cat "$tmp/out" "$tmp/err"
  fi
done
# a plan file name with a byte 0xff (not UTF-8), recorded twice: the lines
# are UTF-8 (U+FFFD for the byte) and read back, --log lists both
ff=$(printf '\377')
cp "$tmp/two.yaml" "$tmp/p$ff.yaml"
d=$tmp/rec-ff
"$grade" "$tmp/p$ff.yaml" --record "$d" >/dev/null 2>"$tmp/err1"
code1=$?
"$grade" "$tmp/p$ff.yaml" --record "$d" >/dev/null 2>"$tmp/err2"
code2=$?
"$grade" --log "$d" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code1 -eq 0 ] && [ $code2 -eq 0 ] && [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(wc -l <"$tmp/out")" -eq 3 ] &&
  iconv -f UTF-8 -t UTF-8 "$d/records.jsonl" >/dev/null 2>&1 && grep -q "line 2: pass" "$tmp/err2"; then
  ok "--record a plan named with byte 0xff, twice: UTF-8 lines, --log lists both"
else
  ko "--record a plan named with byte 0xff, twice: UTF-8 lines, --log lists both (exits $code1 $code2 $code)"
  cat "$tmp/err1" "$tmp/err2" "$tmp/out" "$tmp/err"
fi
# and tcc-gen --explain --json, tcc-grade --json on it: valid UTF-8 JSON
"$build/tcc-gen" "$tmp/p$ff.yaml" --problem p1 --explain --json >"$tmp/ex.json" 2>"$tmp/err"
code=$?
"$grade" "$tmp/p$ff.yaml" --json >"$tmp/gr.json" 2>/dev/null
code2=$?
if [ $code -eq 0 ] && [ $code2 -eq 0 ] && iconv -f UTF-8 -t UTF-8 "$tmp/ex.json" >/dev/null 2>&1 &&
  iconv -f UTF-8 -t UTF-8 "$tmp/gr.json" >/dev/null 2>&1; then
  ok "tcc-gen --explain --json, tcc-grade --json on a plan named with byte 0xff: valid UTF-8"
else
  ko "tcc-gen --explain --json, tcc-grade --json on a plan named with byte 0xff: valid UTF-8 (exits $code $code2)"
  cat "$tmp/err"
fi
# usage: --note without --record, --log with a plan, a directory that is a file
"$grade" "$tmp/two.yaml" --note x >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ "$(cat "$tmp/err")" = "tcc-grade: error: --note needs --record DIR" ] && [ ! -s "$tmp/out" ] &&
  "$grade" --log "$rec" "$tmp/two.yaml" >/dev/null 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ "$(cat "$tmp/err")" = "tcc-grade: error: --log DIR takes no plan, --record or --note" ] &&
  "$grade" "$tmp/two.yaml" --record "$tmp/two.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ "$(cat "$tmp/err")" = "$tmp/two.yaml: error: cannot create: Not a directory" ] && [ ! -s "$tmp/out" ] &&
  ok "--record / --log / --note: usage errors -> 2" || ko "--record / --log / --note: usage errors -> 2"

# standard output on a full device: an error, not a lost report (the
# report of a graded plan, --log DIR's table and --plan N's text)
expect_full "the report on /dev/full -> 2, one line" tcc-grade "$grade" "$tmp/two.yaml"
"$grade" "$tmp/two.yaml" --record "$tmp/fullrec" >/dev/null 2>&1
expect_full "--log DIR on /dev/full -> 2, one line" tcc-grade "$grade" --log "$tmp/fullrec"
expect_full "--log DIR --plan 1 on /dev/full -> 2, one line" tcc-grade "$grade" --log "$tmp/fullrec" --plan 1

echo "grade: $pass passed, $fail failed"
[ $fail -eq 0 ]
