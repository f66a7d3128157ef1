#!/bin/sh
# tests/run_census.sh [BUILD] - command-line tests of tcc-census:
#  - plans/census-seeds.yaml: the seeds' 7,776 points, of which our area model
#    keeps 1,786 (docs/tools.md says why the seeds counted 2,480); the CSV
#    (one line per area-legal point, sorted by bound) and the JSON carry the
#    same counts; two runs give the same bytes;
#  - the summary on stdout with -o, on stderr otherwise; no progress bar
#    when stderr is not a terminal, one under a pseudo-terminal (script(1));
#  - bad input: one line FILE:LINE:COL: error: ... and exit 2; usage errors
#    exit 2; --help and --version exit 0.
. "$(dirname "$0")/lib.sh"
census=$build/tcc-census
seeds=plans/census-seeds.yaml
summary="$seeds: 7776 points, 0 invalid, 1786 area-legal (<= 24 mm^2)"

# the seeds' space, CSV to a file: the summary on stdout, nothing on stderr
"$census" "$seeds" -o "$tmp/a.csv" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ "$(cat "$tmp/out")" = "$summary" ] && [ ! -s "$tmp/err" ]; then
  ok "census-seeds: $summary"
else
  ko "census-seeds summary (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi
[ "$(wc -l <"$tmp/a.csv")" -eq 1787 ] && ok "census-seeds CSV: header + 1786 rows" ||
  ko "census-seeds CSV has $(wc -l <"$tmp/a.csv") lines"
# every row within 24 mm^2 and sorted by the product of the bounds, then index
if awk -F, 'NR == 1 { next }
  { if ($14 > 24) bad = "area " $14; key = $20 * $22
    if (NR > 2 && (key < prev || (key == prev && $25 <= pidx))) bad = "order at line " NR
    prev = key; pidx = $25 }
  END { if (bad) { print bad; exit 1 } }' "$tmp/a.csv"; then
  ok "census-seeds rows: area-legal, sorted by bound"
else
  ko "census-seeds rows"
fi
# the best-ranked row: a small machine, whose static power leaves P1's power
# bound a window lower than the larger machines' (VL 8: 52,001; VL 16: 53,001),
# and whose RFs and SHs (8 x (128 + 128) KiB = 2 MiB) keep D1's 1,849,344 B of
# weight matrices and K/V rows between steps: the smaller ones load some again
# every step (docs/bounds.md section 4): with 8 x 64 KiB of RF alone about
# 20,500 lines a step
sed -n 2p "$tmp/a.csv" | grep -q '^8,1,128,16,3,16,128,4,2,8,512,false,2,16.644000,2.496600,1572864,655360,false,917504,53001,power,8300,chain,20974.0,194$' &&
  ok "census-seeds first row" || { ko "census-seeds first row"; sed -n 2p "$tmp/a.csv"; }

# the table on stdout: the summary on stderr, and no progress bar (not a TTY)
"$census" "$seeds" >"$tmp/b.csv" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && cmp -s "$tmp/a.csv" "$tmp/b.csv" && [ "$(cat "$tmp/err")" = "$summary" ]; then
  ok "stdout: same bytes, summary alone on stderr (no progress bar when piped)"
else
  ko "stdout run (exit $code)"
  cat "$tmp/err"
fi
"$census" "$seeds" --progress -o "$tmp/c.csv" >"$tmp/out" 2>"$tmp/err"
grep -q 'tcc-census \[########################################\] 7776/7776' "$tmp/err" &&
  cmp -s "$tmp/a.csv" "$tmp/c.csv" && ok "--progress draws the bar on stderr" || ko "--progress"
# under a pseudo-terminal the bar is drawn without being asked
if command -v script >/dev/null 2>&1; then
  script -qec "$census $seeds -o $tmp/d.csv" /dev/null >"$tmp/tty" 2>&1 </dev/null
  grep -q 'tcc-census \[' "$tmp/tty" && cmp -s "$tmp/a.csv" "$tmp/d.csv" && ok "a TTY gets the progress bar" ||
    { ko "a TTY gets the progress bar"; cat "$tmp/tty"; }
else
  echo "[SKIP] a TTY gets the progress bar: script(1) is missing"
fi

# -o onto a FIFO (or /dev/null) writes through it and leaves it a FIFO
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fromfifo" &
"$census" "$seeds" -o "$tmp/fifo" >/dev/null 2>&1
code=$?
wait
[ $code -eq 0 ] && [ -p "$tmp/fifo" ] && cmp -s "$tmp/a.csv" "$tmp/fromfifo" &&
  ok "-o FIFO: written through, not replaced" || ko "-o FIFO (exit $code)"

# JSON: the same counts and rows
"$census" "$seeds" --format json -o "$tmp/a.json" >/dev/null 2>&1
if grep -q '"points" : 7776,' "$tmp/a.json" && grep -q '"area_legal" : 1786,' "$tmp/a.json" &&
  [ "$(grep -c '"index" :' "$tmp/a.json")" -eq 1786 ]; then
  ok "--format json: counts and 1786 rows"
else
  ko "--format json"
fi
"$census" "$seeds" --format json -o "$tmp/b.json" >/dev/null 2>&1
cmp -s "$tmp/a.json" "$tmp/b.json" && ok "JSON: same bytes twice" || ko "JSON: same bytes twice"

# bad spaces: one line, file:line:col, exit 2
printf 'version: 1\nhardware:\n  sms: [8, 16]\n  mma_array: [1, 2]\n' >"$tmp/typo.yaml"
"$census" "$tmp/typo.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "unknown key -> did you mean" 2 "$tmp/typo.yaml:4:3: error: unknown key 'mma_array' in hardware; did you mean 'mma_arrays'?"
printf 'version: 1\nhardware:\n  vl: {from: 4, to: 64, factor: 2}\n' >"$tmp/range.yaml"
"$census" "$tmp/range.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "value out of range" 2 "$tmp/range.yaml:3:14: error: hardware.vl: vl=64 out of range 4..32 (vector lanes per WG (RF partitions))"
printf 'version: 1\nhardware:\n  sms: [8\n' >"$tmp/syntax.yaml"
"$census" "$tmp/syntax.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "YAML syntax" 2 "$tmp/syntax.yaml:4:1: error: did not find expected ',' or ']' (while parsing a flow sequence at line 3)"
"$census" "$tmp/missing.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "missing file" 2 "$tmp/missing.yaml:1:1: error: cannot read census space: No such file or directory"
# an endless device or a pipe: read up to the 1 MiB limit, not whole (the
# timeout ends a reader that reads on)
timeout 60 "$census" /dev/zero >"$tmp/out" 2>"$tmp/err"
code=$?
expect "/dev/zero -> 2 at the limit, not read whole" 2 "/dev/zero:1:1: error: census space is larger than the limit of 1048576 bytes"
head -c 3000000 /dev/zero | timeout 60 "$census" /dev/stdin >"$tmp/out" 2>"$tmp/err"
code=$?
expect "3 MB through a pipe -> 2 at the limit" 2 "/dev/stdin:1:1: error: census space is larger than the limit of 1048576 bytes"
"$census" "$seeds" --format xml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--format xml" 2 "tcc-census: error: --format must be csv or json, got 'xml'"
"$census" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no argument" 2 "tcc-census: error: expected one space file (see --help)"
"$census" "$seeds" -o "$tmp/no/such/dir.csv" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "unwritable -o -> 2, the user's path named (not its temporary file)" 2 "tcc-census: error: cannot write '$tmp/no/such/dir.csv': No such file or directory"
if [ -w /dev/full ]; then
  "$census" "$seeds" -o /dev/full >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "-o /dev/full -> 2" 2 "tcc-census: error: cannot write '/dev/full': No space left on device"
fi
# -o as every output file (docs/tools.md, "Output files"): the space file
# itself refused and untouched; a link's file replaced, the link kept;
# /dev/null written through
cp "$seeds" "$tmp/space.yaml"
"$census" "$tmp/space.yaml" -o "$tmp/space.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "-o SPACE -> 2" 2 "tcc-census: error: -o $tmp/space.yaml is the space file itself"
cmp -s "$tmp/space.yaml" "$seeds" && ok "-o SPACE: the space file untouched" || ko "-o SPACE: the space file untouched"
"$census" "$seeds" -o "$tmp/want.csv" >/dev/null 2>&1
printf 'old\n' >"$tmp/real.csv"
ln -s real.csv "$tmp/link.csv"
"$census" "$seeds" -o "$tmp/link.csv" >/dev/null 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ -L "$tmp/link.csv" ] && cmp -s "$tmp/real.csv" "$tmp/want.csv" &&
  ok "-o LINK: its file replaced, the link kept" || ko "-o LINK: its file replaced, the link kept (exit $code)"
"$census" "$seeds" -o /dev/null >/dev/null 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ -c /dev/null ] && ok "-o /dev/null: written through, still a device" ||
  ko "-o /dev/null: written through, still a device (exit $code)"
"$census" --bogus "$seeds" >/dev/null 2>&1
[ $? -eq 2 ] && ok "unknown option -> 2" || ko "unknown option -> 2"
"$census" --help | grep -q 'SPACE.yaml' && ok "--help" || ko "--help"
"$census" --version | grep -q '^tcc-census ' && ok "--version" || ko "--version"

# standard output on a full device: an error, and no summary of a table
# that was lost; with -o FILE, the summary line is the standard output
expect_full "the table on /dev/full -> 2, one line" tcc-census "$census" "$seeds"
expect_full "-o FILE, the summary on /dev/full -> 2, one line" tcc-census "$census" "$seeds" -o "$tmp/full.csv"

# the table is streamed row by row, the kept points held as 16 bytes each:
# 7,111 JSON rows (about 7 MB of text) take a few MB, not the text and a
# JSON tree (80 MB); the same bytes as the one-string table (census_json)
# are test_census.c's.  Measured with GNU time's maximum RSS, where there
# is one and the build is not a sanitizer's (its shadow memory counts).
sed 's/^  dma: {engines: 4, depth: 2}$/  dma: {engines: 4, depth: [1, 2]}/; s/^  multicast: false$/  multicast: [false, true]/' \
  "$seeds" >"$tmp/mid.yaml"
if [ -x /usr/bin/time ] && ! ldd "$census" 2>/dev/null | grep -q 'libasan'; then
  /usr/bin/time -f '%M' -o "$tmp/rss" "$census" "$tmp/mid.yaml" --format json -o "$tmp/mid.json" >"$tmp/out" 2>"$tmp/err"
  code=$?
  rss=$(tail -n 1 "$tmp/rss")
  if [ $code -eq 0 ] && grep -q ': 31104 points, 0 invalid, 7111 area-legal' "$tmp/out" && [ "$rss" -lt 30000 ] &&
    [ "$(grep -c '"index" :' "$tmp/mid.json")" -eq 7111 ]; then
    ok "31,104 points, 7,111 JSON rows in $rss KB (streamed)"
  else
    ko "7,111 JSON rows: exit $code, $rss KB (want under 30000)"
  fi
else
  echo "[SKIP] the census's memory: no GNU time here, or a sanitizer's build"
fi

# the speed (a figure, not a test: make bench measures it against 250 ms)
s=$(date +%s.%N)
"$census" "$seeds" -o "$tmp/t.csv" >/dev/null
e=$(date +%s.%N)
echo "tcc-census $seeds: $(awk "BEGIN { printf \"%.0f\", ($e - $s) * 1000 }") ms"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
