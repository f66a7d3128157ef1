#!/bin/sh
# tests/run_tune.sh [BUILD] - tcc-tune end to end on tests/sweep/tiny.yaml
# (a plan whose compile and simulation take milliseconds):
#  - from d1.store_spacing 16 the search finds fewer cycles (stores spaced
#    less), writes best.yaml and tune.csv, and tcc-grade's D1 cycles of
#    best.yaml are the log's;
#  - the same options give the same files with --jobs 1 and 2; another
#    seed draws other points;
#  - every point is measured once; a space smaller than the rounds is
#    exhausted early;
#  - --problem both: P1 x D1, the score in the log;
#  - a knob the template does not write starts at its default;
#  - no passing point (over the area) -> exit 1; the files written after
#    every round (an interrupted search keeps them); a log that cannot be
#    written stops the search; a progress line on a terminal only;
#  - bad input: options, --knob syntax, a knob the template sets (or leaves
#    at its default) outside the knob's values, a path that is no key of a
#    plan, a template that is not a plan, a start that does not compile.
. "$(dirname "$0")/lib.sh"
tune=$build/tcc-tune
tiny=tests/sweep/tiny.yaml
sed 's/^  store_spacing: 0$/  store_spacing: 16/' "$tiny" >"$tmp/s16.yaml"
grep -q '^  store_spacing: 16$' "$tmp/s16.yaml" || { ko "tests/sweep/tiny.yaml has no d1 store_spacing: 0"; exit 1; }
knob="--knob d1.store_spacing=0..32"

# ---- a search that finds better
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 4 --candidates 3 --jobs 2 -o "$tmp/a" >"$tmp/out" 2>"$tmp/err"
code=$?
csv=$tmp/a/tune.csv
# columns: round, candidate, the knob, status, p1_status, p1_cycles,
# p1_peak_w, d1_status, d1_cycles (9), d1_peak_w, area_mm2, score, error,
# best (14), repairs
start=$(awk -F, 'NR == 2 { print $9 }' "$csv")
bestc=$(awk -F, 'NR > 1 && $14 == 1 { c = $9 } END { print c }' "$csv")
bestv=$(awk -F, 'NR > 1 && $14 == 1 { v = $3 } END { print v }' "$csv")
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] &&
  [ "$(sed -n 1p "$csv")" = "round,candidate,d1.store_spacing,status,p1_status,p1_cycles,p1_peak_w,d1_status,d1_cycles,d1_peak_w,area_mm2,score,error,best,repairs" ] &&
  [ "$(sed -n 2p "$csv" | cut -d, -f1-8)" = "0,0,16,pass,,,,pass" ] && [ "$bestc" -lt "$start" ] && [ "$bestv" -lt 16 ]; then
  ok "from store_spacing 16: best $bestc cycles at $bestv (start $start)"
else
  ko "a search from store_spacing 16 (exit $code)"
  cat "$tmp/out" "$tmp/err" "$csv"
fi
n=$(($(wc -l <"$csv") - 1))
if sed -n 1p "$tmp/out" | grep -q "^tcc-tune: d1 of $tmp/s16.yaml: $n points in 4 rounds (seed 1)\$" &&
  sed -n 2p "$tmp/out" | grep -q "^start: $start cycles, [0-9.]* W, [0-9.]* mm2 (pass)\$" &&
  sed -n 3p "$tmp/out" | grep -q "^best:  $bestc cycles, [0-9.]* W, [0-9.]* mm2 (pass), round [1-4] point [1-3]: d1.store_spacing=$bestv\$" &&
  sed -n 4p "$tmp/out" | grep -q "^wrote $tmp/a/best.yaml and $tmp/a/tune.csv; grade it (numerics too): tcc-grade '$tmp/a/best.yaml'\$"; then
  ok "the summary: points, start, best and its knobs, the files"
else
  ko "the summary"
  cat "$tmp/out"
fi
# best.yaml: the header, the template with the best value, and a plan that
# tcc-grade passes with the logged cycles (timing-only = the grade's timing)
"$build/tcc-grade" "$tmp/a/best.yaml" >"$tmp/grade" 2>&1
code=$?
if [ $code -eq 0 ] && head -n 1 "$tmp/a/best.yaml" | grep -q "^# tcc-tune: the best of $n points for d1 from $tmp/s16.yaml (seed 1): d1.store_spacing=$bestv\$" &&
  grep -q "^  store_spacing: $bestv\$" "$tmp/a/best.yaml" && awk -v c="$bestc" '$1 == "d1" && $2 == c { f = 1 } END { exit !f }' "$tmp/grade"; then
  ok "best.yaml grades PASS with the logged $bestc cycles"
else
  ko "best.yaml (tcc-grade exit $code)"
  cat "$tmp/grade" "$tmp/a/best.yaml"
fi
# every point once
[ "$(cut -d, -f3 "$csv" | sort | uniq -d | wc -l)" -eq 0 ] && ok "no point measured twice" ||
  { ko "a point measured twice"; cat "$csv"; }

# ---- determinism: --jobs does not change the points; --seed does
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 4 --candidates 3 --jobs 1 -o "$tmp/b" >/dev/null 2>&1
cmp -s "$tmp/a/tune.csv" "$tmp/b/tune.csv" && cmp -s "$tmp/a/best.yaml" "$tmp/b/best.yaml" &&
  ok "--jobs 1 and 2: the same tune.csv and best.yaml" || { ko "--jobs 1 and 2 differ"; diff "$tmp/a/tune.csv" "$tmp/b/tune.csv"; }
# tcc-sweep --collect on a tune directory: its points, as CSV and as JSON
# with the counters as numbers
"$build/tcc-sweep" --collect "$tmp/a" >"$tmp/col.csv" 2>"$tmp/err" && cmp -s "$tmp/col.csv" "$tmp/a/tune.csv" &&
  grep -q "^tcc-sweep: a tcc-tune directory: $(($(wc -l <"$tmp/a/tune.csv") - 1)) points, [0-9]* passing\$" "$tmp/err" &&
  "$build/tcc-sweep" --collect "$tmp/a" --format json >"$tmp/col.json" 2>/dev/null &&
  grep -q '^  "tool" : "tcc-tune",$' "$tmp/col.json" && grep -q '^      "d1_cycles" : [0-9][0-9]*,$' "$tmp/col.json" &&
  grep -q '^      "d1.store_spacing" : [0-9][0-9]*,$' "$tmp/col.json" && grep -q '^      "p1_cycles" : null,$' "$tmp/col.json" &&
  grep -q '^      "status" : "pass",$' "$tmp/col.json" &&
  ok "tcc-sweep --collect on a tune directory: its points as CSV and JSON" ||
  { ko "tcc-sweep --collect on a tune directory"; cat "$tmp/err"; head -20 "$tmp/col.json"; }
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 4 --candidates 3 --seed 2 -o "$tmp/c" >/dev/null 2>&1
cmp -s "$tmp/a/tune.csv" "$tmp/c/tune.csv" && ko "--seed 2 draws the same points as seed 1" ||
  ok "--seed 2 draws other points"

# ---- a space smaller than the rounds: exhausted, every point once
"$tune" "$tmp/s16.yaml" --problem d1 --knob d1.store_spacing=15..17 --rounds 50 --candidates 4 -o "$tmp/d" >"$tmp/out" 2>&1
code=$?
if [ $code -eq 0 ] && [ "$(($(wc -l <"$tmp/d/tune.csv") - 1))" -eq 3 ] &&
  [ "$(cut -d, -f3 "$tmp/d/tune.csv" | sed 1d | sort -n | tr '\n' ' ')" = "15 16 17 " ] &&
  sed -n 1p "$tmp/out" | grep -q ': 3 points in [12] rounds\? (seed 1)$' &&
  grep -q '^best:  .*d1.store_spacing=15$' "$tmp/out"; then
  ok "3 values: 3 points, the search stops, best 15"
else
  ko "an exhausted space (exit $code)"
  cat "$tmp/out" "$tmp/d/tune.csv"
fi

# ---- both problems: P1 x D1 (the score); d1.store_spacing moves D1 only
"$tune" "$tmp/s16.yaml" --problem both $knob --rounds 3 --candidates 3 -o "$tmp/g" >"$tmp/out" 2>&1
code=$?
csv=$tmp/g/tune.csv
if [ $code -eq 0 ] && [ "$(sed -n 1p "$csv")" = "round,candidate,d1.store_spacing,status,p1_status,p1_cycles,p1_peak_w,d1_status,d1_cycles,d1_peak_w,area_mm2,score,error,best,repairs" ] &&
  [ "$(cut -d, -f6 "$csv" | sed 1d | sort -u | wc -l)" -eq 1 ] &&
  awk -F, 'NR == 2 { d = $9; s = $12 } NR > 2 && $14 == 1 { b = $9; bs = $12 } END { exit !(b < d && bs > s) }' "$csv" &&
  grep -q '^start: p1 [0-9]*, d1 [0-9]* cycles (score [0-9.]*), [0-9.]* W, [0-9.]* mm2 (pass)$' "$tmp/out" &&
  head -n 1 "$tmp/g/best.yaml" | grep -q ' for p1 and d1 from '; then
  ok "--problem both: P1's cycles unchanged, D1's fewer, the score up"
else
  ko "--problem both (exit $code)"
  cat "$tmp/out" "$csv"
fi

# ---- a knob the template does not write starts from its default (panels.w1: 32)
"$tune" "$tmp/s16.yaml" --problem d1 --knob d1.panels.w1=16,32 --rounds 1 -o "$tmp/f" >"$tmp/out" 2>&1
code=$?
if [ $code -eq 0 ] && [ "$(cut -d, -f1-3 "$tmp/f/tune.csv" | tr '\n' ' ')" = "round,candidate,d1.panels.w1 0,0,32 1,1,16 " ] &&
  grep -q '^  panels: {w1: 16}$\|^  panels:$' "$tmp/f/best.yaml" && "$build/tcc-gen" "$tmp/f/best.yaml" --problem d1 -o /dev/null; then
  ok "an unwritten knob starts at its default (d1.panels.w1 32), the key added to best.yaml"
else
  ko "an unwritten knob (exit $code)"
  cat "$tmp/out" "$tmp/f/tune.csv" "$tmp/f/best.yaml"
fi

# `KNOB.default`, the mapping form's spelling, starts at KNOB's value
sed 's/^  store_spacing: 0$/  store_spacing: {w1: 1}/' "$tiny" >"$tmp/map.yaml"
"$tune" "$tmp/map.yaml" --problem d1 --knob d1.store_spacing.default=0..4 --rounds 0 -o "$tmp/f2" >"$tmp/out" 2>&1
code=$?
if [ $code -eq 0 ] && [ "$(sed -n 2p "$tmp/f2/tune.csv" | cut -d, -f1-4)" = "0,0,0,pass" ] &&
  grep -q '^  store_spacing: {w1: 1}$' "$tmp/f2/best.yaml"; then
  ok "d1.store_spacing.default unwritten: starts at store_spacing's 0; the best is the start, so best.yaml writes nothing more"
else
  ko "KNOB.default (exit $code)"
  cat "$tmp/out" "$tmp/f2/tune.csv" "$tmp/f2/best.yaml"
fi

# ---- no passing point: over the area everywhere -> 1
sed 's/^  sms: 16$/  sms: 24/' "$tiny" >"$tmp/a24.yaml"
"$tune" "$tmp/a24.yaml" --problem p1 --knob hardware.sms=24,28 -o "$tmp/e" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 1 ] && [ "$(cut -d, -f4 "$tmp/e/tune.csv" | sed 1d | sort -u)" = "area" ] &&
  grep -q '^best:  [0-9]* cycles, .* mm2 (area), round 0 point 0: hardware.sms=24$' "$tmp/out"; then
  ok "every point over the area -> exit 1, status area"
else
  ko "no passing point (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# ---- the files after every round: an interrupted search leaves what it measured
# (plans/best.yaml's P1: a point takes a fraction of a second, the search far longer)
"$tune" plans/best.yaml --problem p1 --knob p1.store_spacing.wo=0..100000 --knob p1.store_spacing.w1=0..100000 \
  --knob p1.store_spacing.qkv=0..100000 --rounds 10000 --candidates 1 --jobs 1 -o "$tmp/h" >"$tmp/out" 2>&1 &
pid=$!
i=0
while [ $i -lt 600 ] && [ "$(cat "$tmp/h/tune.csv" 2>/dev/null | wc -l)" -lt 4 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid 2>/dev/null
{ wait $pid; } 2>/dev/null
code=$?
n=$(wc -l <"$tmp/h/tune.csv")
if [ $code -ne 0 ] && [ "$n" -ge 4 ] && [ "$(sed -n 2p "$tmp/h/tune.csv" | cut -d, -f1,2,6)" = "0,0,pass" ] &&
  head -n 1 "$tmp/h/best.yaml" | grep -q "^# tcc-tune: the best of [0-9]* points for p1 " &&
  "$build/tcc-gen" "$tmp/h/best.yaml" --problem p1 -o /dev/null; then
  ok "killed after $((n - 2)) rounds: their tune.csv and best.yaml"
else
  ko "an interrupted search (exit $code, $n lines)"
  cat "$tmp/out" "$tmp/h/tune.csv"
fi
# a log that cannot be written stops the search: 2, one line
mkdir -p "$tmp/w/tune.csv"
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 50 -o "$tmp/w" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
  grep -q "^tcc-tune: error: cannot write '$tmp/w/tune.csv': " "$tmp/err"; then
  ok "tune.csv not writable -> 2, one line, the search stopped"
else
  ko "tune.csv not writable (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# ---- the progress line: on a terminal (script(1)), not when piped
script -qec "$tune $tmp/s16.yaml --problem d1 $knob --rounds 2 -o $tmp/tty" /dev/null >"$tmp/tty.out" 2>&1 </dev/null
grep -q 'tcc-tune [0-9]*:[0-9][0-9], round 2/2, ETA [0-9]*:[0-9][0-9]: [0-9]* points, best [0-9]* cycles' "$tmp/tty.out" &&
  ! grep -q 'tcc-tune [0-9:]*, round' "$tmp/out" &&
  ok "a progress line on a TTY, none when piped" || { ko "the progress line"; cat "$tmp/tty.out"; }

# ---- no --knob: the space is the plan schema's; technique moves bring in
# what a knob needs, so no point is refused for a knob without effect; an
# evaluation budget ends it, the same on any number of jobs; the best
# point's numerics are checked; best.yaml writes only the knobs it moved
"$tune" "$tiny" --problem d1 --evals 30 --seed 3 --jobs 2 -o "$tmp/sp" >"$tmp/out" 2>"$tmp/err"
code=$?
"$tune" "$tiny" --problem d1 --evals 30 --seed 3 --jobs 1 -o "$tmp/sp1" >/dev/null 2>&1
hdr=$(sed -n 1p "$tmp/sp/tune.csv")
moved=$(sed -n 1p "$tmp/sp/best.yaml" | sed 's/.*moved from the template: //' | tr ',' '\n' | grep -c =)
written=$(diff "$tiny" "$tmp/sp/best.yaml" | grep -c '^>  .*: [^ ]')
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(($(wc -l <"$tmp/sp/tune.csv") - 1))" -eq 30 ] &&
  echo "$hdr" | grep -q ',d1.weights,' && echo "$hdr" | grep -q ',d1.sms_used,' &&
  [ "$(echo "$hdr" | tr ',' '\n' | grep -c '^d1\.')" -gt 20 ] &&
  grep -q '^stopped: its evaluation budget$' "$tmp/out" &&
  grep -q '^checked: the best point.s numerics pass on the grade seeds 7, 13, 11, 23$' "$tmp/out" &&
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "repairs") r = i } NR > 1 && $r > 0 { n++ } END { exit !(n > 0) }' "$tmp/sp/tune.csv" &&
  ! grep -q 'has no effect unless' "$tmp/sp/tune.csv" &&
  cmp -s "$tmp/sp/tune.csv" "$tmp/sp1/tune.csv" && cmp -s "$tmp/sp/best.yaml" "$tmp/sp1/best.yaml" &&
  sed -n 1p "$tmp/sp/best.yaml" | grep -q 'knobs of the plan schema searched; moved from the template: ' &&
  [ "$written" -eq "$moved" ] && "$build/tcc-grade" "$tmp/sp/best.yaml" >/dev/null 2>&1; then
  ok "no --knob: the schema's space, technique moves (no knob without effect), --evals, the same on 1 or 2 jobs, checked, $moved knobs moved"
else
  ko "a search of the schema's space (exit $code)"
  cat "$tmp/out" "$tmp/err"; head -3 "$tmp/sp/tune.csv"
fi

# the screening round: round 1 switches each technique on alone from the
# start (one knob moved, before its technique moves), in knob order
awk -F, 'NR > 1 && $1 == 1 { c++ } END { exit !(c > 8) }' "$tmp/sp/tune.csv" &&
  ok "no --knob: round 1 screens the techniques" || ko "the screening round"
"$tune" "$tiny" --problem d1 --evals 12 --seed 3 --no-screen -o "$tmp/ns" >/dev/null 2>&1
"$tune" "$tiny" --problem d1 --evals 12 --seed 3 -o "$tmp/ys" >/dev/null 2>&1
n1=$(awk -F, '$1 == 1' "$tmp/ns/tune.csv" | wc -l)
y1=$(awk -F, '$1 == 1' "$tmp/ys/tune.csv" | wc -l)
[ "$n1" -le 8 ] && [ "$y1" -eq 11 ] && ! cmp -s "$tmp/ns/tune.csv" "$tmp/ys/tune.csv" &&
  ok "--no-screen: round 1 is a draw of 8 ($n1), not the screening ($y1 until the budget)" ||
  ko "--no-screen ($n1 / $y1 points in round 1)"

# technique bundles: P1's screen begins with residency and its companions
# (multicast A chunks, W2's K shards with their last-shard sums), no point
# refused for a knob without effect; round 2 adds a screen winner's moves to
# its best (one point, moving at least 2 knobs from the start); the same on
# 1 and 2 jobs
"$tune" "$tiny" --problem p1 --evals 90 --jobs 1 -o "$tmp/bu" >"$tmp/out" 2>"$tmp/err"
code=$?
"$tune" "$tiny" --problem p1 --evals 90 --jobs 2 -o "$tmp/bu2" >/dev/null 2>&1
col() { sed -n 1p "$tmp/bu/tune.csv" | tr ',' '\n' | grep -n "^$1\$" | cut -d: -f1; }
w=$(col p1.weights) mc=$(col p1.multicast.qkv) kl=$(col p1.k_split_last.w2) rp=$(col repairs) st=$(col status)
first=$(sed -n 3p "$tmp/bu/tune.csv")
r2=$(awk -F, -v st="$st" 'NR == 2 { for (i = 3; i < st; i++) s[i] = $i } NR > 2 && $1 == 2 { d = 0; for (i = 3; i < st; i++) d += $i != s[i]; n++; if (d >= 2) m++ } END { print n + 0, m + 0 }' "$tmp/bu/tune.csv")
if [ $code -eq 0 ] && [ "$(echo "$first" | cut -d, -f1,2)" = "1,1" ] && [ "$(echo "$first" | cut -d, -f"$w")" = resident ] &&
  [ "$(echo "$first" | cut -d, -f"$mc")" = true ] && [ "$(echo "$first" | cut -d, -f"$kl")" = true ] &&
  [ "$(echo "$first" | cut -d, -f"$rp")" -ge 5 ] && ! grep -q 'has no effect unless' "$tmp/bu/tune.csv" &&
  [ "${r2% *}" -eq 1 ] && [ "${r2% *}" = "${r2#* }" ] &&
  cmp -s "$tmp/bu/tune.csv" "$tmp/bu2/tune.csv"; then
  ok "technique bundles: residency with its companions first, round 2 adds a winner to the best, 1 and 2 jobs alike"
else
  ko "technique bundles (exit $code, round 2: $r2)"
  cat "$tmp/out" "$tmp/err"; sed -n 1,3p "$tmp/bu/tune.csv"
fi

# --problem both: the hardware's keys too; store_spacing, which tiny.yaml's
# P1 does not write and its stages refine, searched as its mapping's default
"$tune" "$tiny" --problem both --evals 20 --seed 2 -o "$tmp/spb" >"$tmp/out" 2>"$tmp/err"
code=$?
hdr=$(sed -n 1p "$tmp/spb/tune.csv")
if [ $code -eq 0 ] && echo "$hdr" | grep -q ',hardware.sms,' && echo "$hdr" | grep -q ',p1.store_spacing.default,' &&
  echo "$hdr" | grep -q ',p1.store_spacing.wo,' && [ "$(($(wc -l <"$tmp/spb/tune.csv") - 1))" -eq 20 ]; then
  ok "no --knob, both problems: the hardware's keys, store_spacing as its mapping's default"
else
  ko "a search of both problems' schema space (exit $code)"; cat "$tmp/out" "$tmp/err"
fi

# with both, the screen takes the hardware's keys too (the machine's
# choices): some round-1 point moves hardware.noc_bits alone from the start
"$tune" "$tiny" --problem both --evals 80 -o "$tmp/hwsc" >/dev/null 2>&1
nb=$(sed -n 1p "$tmp/hwsc/tune.csv" | tr ',' '\n' | grep -n '^hardware.noc_bits$' | cut -d: -f1)
n=$(awk -F, -v c="$nb" 'NR == 2 { s = $c } NR > 2 && $1 == 1 && $c != s && $NF == 0 { n++ } END { print n + 0 }' "$tmp/hwsc/tune.csv")
[ -n "$nb" ] && [ "$n" -ge 1 ] && ok "both: the screen moves the hardware's keys ($n noc_bits points)" ||
  ko "both: no screened hardware.noc_bits point ($n)"

# a value the template writes that the shape does not take (k_chunk.w2 128
# on d_ff 64, which the loader takes as 64) is where the search starts
sed 's/^  store_spacing: 0$/  store_spacing: 0\n  k_chunk: {w2: 128}/' "$tiny" >"$tmp/kc.yaml"
"$tune" "$tmp/kc.yaml" --problem d1 --evals 6 -o "$tmp/kc" >"$tmp/out" 2>"$tmp/err"
code=$?
col=$(sed -n 1p "$tmp/kc/tune.csv" | tr ',' '\n' | grep -n '^d1.k_chunk.w2$' | cut -d: -f1)
if [ $code -eq 0 ] && [ -n "$col" ] && [ "$(sed -n 2p "$tmp/kc/tune.csv" | cut -d, -f"$col")" = 128 ]; then
  ok "no --knob: a written value the shape does not take is the start's"
else
  ko "no --knob, a value the shape does not take (exit $code)"; cat "$tmp/out" "$tmp/err"
fi

# ---- --resume: a search of 20 points resumed to 40 gives the files of a
# search of 40 that never stopped; the first 20 are not measured again
"$tune" "$tiny" --problem d1 --evals 20 --seed 4 -o "$tmp/r1" >/dev/null 2>&1
"$tune" "$tiny" --problem d1 --evals 40 --seed 4 --resume "$tmp/r1" >"$tmp/out" 2>"$tmp/err"
code=$?
"$tune" "$tiny" --problem d1 --evals 40 --seed 4 -o "$tmp/r2" >/dev/null 2>&1
if [ $code -eq 0 ] && cmp -s "$tmp/r1/tune.csv" "$tmp/r2/tune.csv" && cmp -s "$tmp/r1/best.yaml" "$tmp/r2/best.yaml" &&
  grep -q "^resumed: 20 of the points from $tmp/r1/tune.csv\$" "$tmp/out"; then
  ok "--resume: 20 points resumed to 40 = 40 at once, the 20 not measured again"
else
  ko "--resume (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi
# a log of another search, or none
run_r() { "$tune" "$@" >"$tmp/out" 2>"$tmp/err"; code=$?; }
run_r "$tiny" --problem d1 $knob --resume "$tmp/r1"
if [ $code -eq 2 ] && [ ! -s "$tmp/out" ] &&
  grep -q "^$tmp/r1/tune.csv:1:1: error: not the log of this search: its columns are not this search's knobs" "$tmp/err"; then
  ok "--resume with other knobs -> 2, placed"
else
  ko "--resume with other knobs (exit $code)"; cat "$tmp/err"
fi
printf '2,1,0\n' >>"$tmp/r1/tune.csv"
run_r "$tiny" --problem d1 --evals 40 --seed 4 --resume "$tmp/r1"
[ $code -eq 2 ] && grep -q "^$tmp/r1/tune.csv:42:1: error: a row of 3 fields, not " "$tmp/err" &&
  ok "--resume: a malformed row -> 2, at its line" || { ko "--resume: a malformed row (exit $code)"; cat "$tmp/err"; }
run_r "$tiny" --problem d1 --resume "$tmp/none"
[ $code -eq 2 ] && grep -q "^tcc-tune: error: --resume: cannot read '$tmp/none/tune.csv': " "$tmp/err" &&
  ok "--resume: no log -> 2" || { ko "--resume: no log (exit $code)"; cat "$tmp/err"; }
# a log that is an endless device: read up to the 256 MiB limit, not whole
mkdir -p "$tmp/zero" && ln -s /dev/zero "$tmp/zero/tune.csv"
timeout 120 "$tune" "$tiny" --problem d1 --resume "$tmp/zero" -o "$tmp/rz" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--resume: an endless tune.csv -> 2 at the 256 MiB limit" 2 "tcc-tune: error: --resume: cannot read '$tmp/zero/tune.csv': larger than the limit of 268435456 bytes"

# ---- -o DIR never replaces the template or an earlier search (docs/tools.md,
# "Output files"): going on from DIR/best.yaml into DIR itself, or a DIR
# that holds a search, is refused before anything is measured; --resume
# DIR takes its own DIR; another DIR is fine
cp "$tmp/r2/best.yaml" "$tmp/best.orig"
cp "$tmp/r2/tune.csv" "$tmp/csv.orig"
run_r "$tmp/r2/best.yaml" --problem d1 --evals 5 -o "$tmp/r2"
expect "-o DIR from DIR/best.yaml -> 2" 2 "tcc-tune: error: -o DIR: $tmp/r2/best.yaml is the template itself; give another -o DIR"
run_r "$tmp/r2/best.yaml" --problem d1 --evals 50 --seed 4 --resume "$tmp/r2"
expect "--resume DIR from DIR/best.yaml -> 2" 2 "tcc-tune: error: -o DIR: $tmp/r2/best.yaml is the template itself; give another -o DIR"
run_r "$tiny" --problem d1 --evals 5 -o "$tmp/r2"
expect "-o DIR holding a search -> 2" 2 "tcc-tune: error: -o $tmp/r2 holds the files of a search (best.yaml): --resume $tmp/r2 goes on with it; or give another -o DIR"
run_r "$tiny" --problem d1 --evals 5 --resume "$tmp/r1" -o "$tmp/r2"
expect "--resume DIR -o another DIR holding a search -> 2" 2 "tcc-tune: error: -o $tmp/r2 holds the files of a search (best.yaml): --resume $tmp/r2 goes on with it; or give another -o DIR"
cmp -s "$tmp/best.orig" "$tmp/r2/best.yaml" && cmp -s "$tmp/csv.orig" "$tmp/r2/tune.csv" &&
  ok "-o DIR refused: its best.yaml and tune.csv untouched" || ko "-o DIR refused: its best.yaml and tune.csv untouched"
mkdir "$tmp/plans"
cp "$tiny" "$tmp/plans/best.yaml"
run_r "$tiny" --problem d1 --evals 5 -o "$tmp/plans"
expect "-o DIR holding a best.yaml of its own -> 2" 2 "tcc-tune: error: -o $tmp/plans holds the files of a search (best.yaml): --resume $tmp/plans goes on with it; or give another -o DIR"
cmp -s "$tiny" "$tmp/plans/best.yaml" && ok "... that best.yaml untouched" || ko "... that best.yaml untouched"
run_r "$tmp/r2/best.yaml" --problem d1 --evals 5 -o "$tmp/r3"
[ $code -eq 0 ] && [ -s "$tmp/r3/tune.csv" ] && cmp -s "$tmp/best.orig" "$tmp/r2/best.yaml" &&
  ok "from DIR/best.yaml into another DIR: searched, DIR untouched" ||
  { ko "from DIR/best.yaml into another DIR (exit $code)"; cat "$tmp/err"; }

# ---- --restarts: where the plain search stops (converged: every point
# within steps of 1 measured), it starts again from the best with the
# first steps, and measures more points
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 40 --candidates 2 -o "$tmp/rs0" >"$tmp/out0" 2>&1
"$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 40 --candidates 2 --restarts -o "$tmp/rs1" >"$tmp/out" 2>&1
code=$?
n0=$(($(wc -l <"$tmp/rs0/tune.csv") - 1))
n1=$(($(wc -l <"$tmp/rs1/tune.csv") - 1))
if [ $code -eq 0 ] && grep -q '^stopped: every point within its steps is measured$' "$tmp/out0" &&
  grep -q '^restarts: [1-9][0-9]*$' "$tmp/out" && [ "$n1" -gt "$n0" ]; then
  ok "--restarts: $n1 points where the plain search stopped at $n0"
else
  ko "--restarts (exit $code, $n1 vs $n0 points)"; cat "$tmp/out"
fi

# ---- engines: a round's points as jobs on GNU parallel (this machine as
# an sshlogin, as run_sweep.sh does) and on a Slurm array (a stand-in
# sbatch that runs the array's tasks here): the same files as on threads
"$tune" "$tiny" --problem d1 --evals 30 --seed 3 --jobs 2 -o "$tmp/et" >/dev/null 2>&1
"$tune" "$tiny" --problem d1 --evals 30 --seed 3 --jobs 2 --engine parallel --sshlogin 2/: -o "$tmp/ep" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && cmp -s "$tmp/et/tune.csv" "$tmp/ep/tune.csv" && cmp -s "$tmp/et/best.yaml" "$tmp/ep/best.yaml" &&
  [ -s "$tmp/ep/rounds/1/jobs.txt" ] && grep -q -- "--eval-job '$tmp/ep/rounds/1/p1.yaml'" "$tmp/ep/rounds/1/jobs.txt"; then
  ok "--engine parallel --sshlogin 2/: the same log and best plan as threads"
else
  ko "--engine parallel (exit $code)"; cat "$tmp/out" "$tmp/err"
fi
mkdir -p "$tmp/bin"
cat >"$tmp/bin/sbatch" <<'SBATCH'
#!/bin/sh
# a stand-in for Slurm's sbatch --wait: every task of the script's array, here
for a; do script=$a; done
last=$(sed -n 's/^#SBATCH --array=0-\([0-9]*\)$/\1/p' "$script")
i=0
while [ "$i" -le "$last" ]; do SLURM_ARRAY_TASK_ID=$i sh "$script" || exit 1; i=$((i + 1)); done
SBATCH
chmod +x "$tmp/bin/sbatch"
PATH="$tmp/bin:$PATH" "$tune" "$tiny" --problem d1 --evals 30 --seed 3 --engine slurm -o "$tmp/es" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && cmp -s "$tmp/et/tune.csv" "$tmp/es/tune.csv" && [ -s "$tmp/es/rounds/1/tune.slurm" ]; then
  ok "--engine slurm (a stand-in sbatch): the same log as threads"
else
  ko "--engine slurm (exit $code)"; cat "$tmp/out" "$tmp/err"
fi
PATH="$tmp/nobin:/usr/bin:/bin" "$tune" "$tiny" --problem d1 --evals 3 --engine slurm -o "$tmp/es2" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && grep -q "^tcc-tune: error: round 0's jobs (.*): cannot run sbatch: " "$tmp/err" &&
  ok "--engine slurm without sbatch -> 2, one line" || { ko "--engine slurm without sbatch (exit $code)"; cat "$tmp/err"; }

# ---- bad input
run() { "$tune" "$@" >"$tmp/out" 2>"$tmp/err"; code=$?; }
run "$tmp/s16.yaml" $knob -o "$tmp/x"
expect "no --problem" 2 "tcc-tune: error: --problem p1|d1|both is required: what to lower"
run "$tmp/s16.yaml" --problem p2 $knob -o "$tmp/x"
expect "--problem p2" 2 "tcc-tune: error: --problem must be p1, d1 or both, got 'p2'"
run "$tmp/s16.yaml" --problem d1 --engine mpi -o "$tmp/x"
expect "--engine mpi" 2 "tcc-tune: error: --engine must be threads, parallel or slurm, got 'mpi'"
run "$tmp/s16.yaml" --problem d1 --sshlogin 2/: -o "$tmp/x"
expect "--sshlogin without parallel" 2 "tcc-tune: error: --sshlogin needs --engine parallel"
run "$tmp/s16.yaml" --problem d1 --engine parallel -o "$tmp/x
y"
expect "--engine with a line break in -o" 2 "tcc-tune: error: --engine: -o '$tmp/x\\ny': a name with a control character cannot go on a job line (rename it)"
run "$tmp/s16.yaml" --problem d1 --engine slurm -o "$tmp/x\\y"
expect "--engine slurm with a backslash in -o" 2 "tcc-tune: error: --engine: -o '$tmp/x\\y': a Slurm log path cannot hold a backslash (Slurm would leave %A and %a unreplaced; rename it)"
# a template named with a line break and YAML after it: best.yaml's header
# comment escapes it, so the answer holds no key of the name
grep -v '^hardware:\|^  sms:' "$tmp/s16.yaml" >"$tmp/nohw.yaml"
nl_tpl="$tmp/t
hardware: {sms: 8}
#.yaml"
cp "$tmp/nohw.yaml" "$nl_tpl"
run "$nl_tpl" --problem d1 $knob --rounds 1 --candidates 1 --jobs 1 -o "$tmp/nltpl"
[ $code -eq 0 ] && [ "$(sed -n 1p "$tmp/nltpl/best.yaml" | cut -d: -f1-2)" = "# tcc-tune: the best of 2 points for d1 from $tmp/t\\nhardware" ] &&
  ! grep -q '^hardware' "$tmp/nltpl/best.yaml" && ok "a template name with a line break: escaped in best.yaml's header, no key added" ||
  { ko "a template name with a line break (exit $code)"; cat "$tmp/err"; head -n 3 "$tmp/nltpl/best.yaml"; }
run "$tmp/s16.yaml" --problem d1 --evals 0 -o "$tmp/x"
expect "--evals 0" 2 "tcc-tune: error: --evals must be 1..10000000, got '0'"
run "$tmp/s16.yaml" --problem d1 --time 0 -o "$tmp/x"
expect "--time 0" 2 "tcc-tune: error: --time must be in (0, 31536000], got '0'"
run "$tmp/s16.yaml" --problem d1 $knob
expect "no -o" 2 "tcc-tune: error: -o DIR is required: where best.yaml and tune.csv go"
run --problem d1 $knob -o "$tmp/x"
expect "no template" 2 "tcc-tune: error: expected one template plan (see --help)"
run "$tmp/s16.yaml" --problem d1 $knob --rounds 10001 -o "$tmp/x"
expect "--rounds 10001" 2 "tcc-tune: error: --rounds must be 0..10000, got '10001'"
run "$tmp/s16.yaml" --problem d1 $knob --candidates 0 -o "$tmp/x"
expect "--candidates 0" 2 "tcc-tune: error: --candidates must be 1..1000, got '0'"
run "$tmp/s16.yaml" --problem d1 $knob --seed 4294967296 -o "$tmp/x"
expect "--seed 2^32" 2 "tcc-tune: error: --seed must be 0..4294967295, got '4294967296'"
run "$tmp/s16.yaml" --problem d1 $knob --step 0 -o "$tmp/x"
expect "--step 0" 2 "tcc-tune: error: --step must be in (0, 1], got '0'"
run "$tmp/s16.yaml" --problem d1 $knob --jobs 0 -o "$tmp/x"
expect "--jobs 0" 2 "tcc-tune: error: --jobs must be 1..256, got '0'"
# -1 was the mark of an option not given: taken as the default, silently
for o in rounds:0..10000 candidates:1..1000 seed:0..4294967295 "step:in (0, 1]" jobs:1..256 evals:1..10000000 \
  "time:in (0, 31536000]"; do
  run "$tmp/s16.yaml" --problem d1 $knob "--${o%%:*}=-1" -o "$tmp/x"
  expect "--${o%%:*} -1" 2 "tcc-tune: error: --${o%%:*} must be ${o#*:}, got '-1'"
done
run "$tmp/s16.yaml" --problem d1 $knob --rounds 2x -o "$tmp/x"
expect "--rounds 2x" 2 "tcc-tune: error: --rounds must be 0..10000, got '2x'"
run "$tmp/s16.yaml" --problem d1 $knob --step nan -o "$tmp/x"
expect "--step nan" 2 "tcc-tune: error: --step must be in (0, 1], got 'nan'"
run "$tmp/s16.yaml" --problem d1 $knob --rounds "1
2" -o "$tmp/x"
expect "--rounds with a newline: one line" 2 "tcc-tune: error: --rounds must be 0..10000, got '1\\n2'"
run "$tmp/s16.yaml" --problem d1 --knob "d1.store_spacing=" -o "$tmp/x"
expect "--knob KEY= (no values)" 2 "tcc-tune: error: --knob d1.store_spacing=: no values after '=' (expected V1,V2,...)"
run "$tmp/s16.yaml" --problem d1 --knob d1.store_spacing=8..4 -o "$tmp/x"
expect "a range LO > HI" 2 "tcc-tune: error: --knob d1.store_spacing=8..4: a range needs LO < HI and at most 1000000 values"
run "$tmp/s16.yaml" --problem d1 --knob d1.store_spacing -o "$tmp/x"
expect "--knob without values" 2 "tcc-tune: error: --knob d1.store_spacing: expected KEY.PATH=LO..HI or KEY.PATH=V1,V2,..."
run "$tmp/s16.yaml" --problem d1 $knob --knob d1.store_spacing=1,2 -o "$tmp/x"
expect "a knob twice" 2 "tcc-tune: error: --knob d1.store_spacing: the knob is given twice"
run "$tmp/s16.yaml" --problem d1 --knob d1.store_spacing=0..8 -o "$tmp/x"
expect "the template's value outside the knob's" 2 "tcc-tune: error: --knob d1.store_spacing: the template sets it to '16'; the search starts from the template's value, one of the knob's (0..8)"
run "$tmp/s16.yaml" --problem d1 --knob d1.panels.w1=8,16 -o "$tmp/x"
expect "a knob left at a default not among its values" 2 "tcc-tune: error: --knob d1.panels.w1: the template leaves it at its default, '32'; the search starts from the template's value, one of the knob's (8, ..., 16)"
run "$tmp/s16.yaml" --problem d1 --knob d1.store_spacng=0..8 -o "$tmp/x"
expect "a path that is no key of a plan" 2 "tcc-tune: error: --knob d1.store_spacng: not a key of a plan (docs/plan.md lists the knobs, hardware keys under hardware.)"
run "$tmp/s16.yaml" --problem d1 --knob d1.problem=1,2 -o "$tmp/x"
expect "a knob on a mapping" 2 "tcc-tune: error: --knob d1.problem: the template has a mapping there, not a value (set its keys)"
printf 'version: 1\nd1: {store_spacng: 16}\n' >"$tmp/typo.yaml"
run "$tmp/typo.yaml" --problem d1 $knob -o "$tmp/x"
expect "a template that is not a plan" 2 "$tmp/typo.yaml:2:6: error: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"
sed 's/^  store_spacing: 16$/  store_spacing: 16\n  weights: resident\n  rf_temp_kib: 60/' "$tmp/s16.yaml" >"$tmp/nofit.yaml"
# TCC_STRICT: refused, not fallen back to streaming
export TCC_STRICT=1
run "$tmp/nofit.yaml" --problem d1 $knob -o "$tmp/nofit"
unset TCC_STRICT
if [ $code -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
  grep -q "^$tmp/nofit.yaml:[0-9]*:[0-9]*: error: weights: resident: " "$tmp/err" && [ ! -e "$tmp/nofit/best.yaml" ]; then
  ok "a start that does not compile -> 2, the compiler's line, no files"
else
  ko "a start that does not compile (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# standard output on a full device: an error, not a lost summary
expect_full "the summary on /dev/full -> 2, one line" tcc-tune "$tune" "$tmp/s16.yaml" --problem d1 $knob --rounds 0 -o "$tmp/full"

echo "tune: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
