#!/bin/sh
# tests/run_html.sh BUILD_DIR - tcc-grade --html FILE, the one-page report
# (docs/tools.md "HTML report"), and the plan text of experiment records
# (--log DIR --plan N):
#  - --help names --html and --plan; the page of plans/best.yaml: the
#    report on stdout unchanged, each section (verdicts and score, bounds,
#    two inline SVG plots, stages, energy by unit against the minimum,
#    knobs with their sources, hashes, trace commands), nothing fetched,
#    the same bytes again and on one thread;
#  - a small plan with knobs the loader took back or chose (fallback,
#    auto): their sources and warnings; its hashes are tcc-sim's of
#    tcc-gen's programs;
#  - a plan whose file name is markup: escaped everywhere;
#  - the output file: never the plan (by name or a hard link), a missing
#    directory, a directory, no name; a temporary file renamed (no file
#    left beside it), an old page kept when the run fails; /dev/null and a
#    FIFO written directly; --problem d1; a failing plan (exit 1, a page);
#  - records: the plan text back byte for byte and graded again to the
#    same report; an old line without it; bad --plan values;
#  - headless Chromium opens the page: the DOM has the verdict table and
#    the plots, the screenshot is not blank, the console is silent; and
#    the checks can fail (a blank page is judged blank, a console error is
#    caught); skipped, with a message, when chromium is absent
#    (tools/deps.sh installs it).  Chromium runs under `timeout`.
# Prints [PASS]/[FAIL]/[SKIP] per test and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
grade=$build/tcc-grade
gen=$build/tcc-gen
sim=$build/tcc-sim
stats=$build/tests/png-stats

"$grade" --help >"$tmp/help" 2>&1
grep -q -- "--html=FILE" "$tmp/help" && grep -q -- "--plan=N" "$tmp/help" &&
  ok "--help: --html and --plan" || ko "--help: --html and --plan"

# ---- the page of the best plan
"$grade" plans/best.yaml >"$tmp/best.txt" 2>&1
"$grade" plans/best.yaml --html "$tmp/best.html" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/best.txt" "$tmp/out" && [ -s "$tmp/best.html" ]; then
  ok "--html: exit 0, the report unchanged, a page ($(wc -c <"$tmp/best.html") bytes)"
else
  ko "--html: exit 0, the report unchanged, a page (exit $code)"
  cat "$tmp/err"
fi
page=$tmp/best.html
# has PATTERN...: every extended regular expression occurs in $page
has() {
  for p in "$@"; do
    grep -Eq -- "$p" "$page" || { echo "no $p"; return 1; }
  done
}
has '^<!DOCTYPE html>$' '<meta charset="utf-8">' '<style>' '</html>$' &&
  ok "page: one HTML document with its CSS" || ko "page: one HTML document with its CSS"
has '<table class="verdicts">' \
  '<a href="#p1">p1</a></td><td class="pass">PASS</td><td>[^<]*</td><td class="n">118716</td><td class="n">19.9947</td><td>\[100813, 101813\)</td><td class="n">23.8712</td>' \
  '<a href="#d1">d1</a></td><td class="pass">PASS</td><td>[^<]*</td><td class="n">24290</td><td class="n">19.8006</td><td>\[9, 1009\)</td>' \
  'score <b>5879.07</b>' &&
  ok "page: the verdicts (cycles, peak W and window, area) and the score" ||
  ko "page: the verdicts (cycles, peak W and window, area) and the score"
has '<table class="bounds">' '<tr><td>p1</td><td class="n">118716</td><td class="n">57001</td><td>power</td><td class="n">2.08</td>' \
  '<tr><td>d1</td><td class="n">24290</td><td class="n">8300</td><td>chain</td><td class="n">2.93</td>' &&
  ok "page: each problem's bound, what binds, cycles / bound" || ko "page: each problem's bound, what binds, cycles / bound"
[ "$(grep -c '<svg ' "$page")" -eq 2 ] && [ "$(grep -c '</svg>' "$page")" -eq 2 ] && ! grep -q '<?xml' "$page" &&
  has '<section class="problem" id="p1">' '<section class="problem" id="d1">' 'id="p1-glyph' 'id="d1-glyph' &&
  ! grep -Eq 'id="(glyph|surface)|href="#glyph' "$page" &&
  ok "page: two inline SVG power plots, their ids apart" || ko "page: two inline SVG power plots, their ids apart"
has '<table class="stages">' '<td class="mono">l0.ln1</td>' '<td class="mono">l0.qkv</td>' &&
  ok "page: time and energy per stage" || ko "page: time and energy per stage"
has '<table class="units">' '<tr><td>MMA</td><td class="n">[0-9.]+</td><td class="n">[0-9.]+</td>' \
  '<tr><td>HBM</td><td class="n">[0-9.]+</td><td class="n">[0-9.]+</td>' '<tr><td>NoC</td>' '<tr><td>RF</td>' \
  '<tr><td>VEC</td><td class="n">[0-9.]+</td><td class="n">[0-9.]+</td>' '<tr><td>SFU</td>' 'the power bound' &&
  ok "page: energy by unit against the unavoidable minimum" || ko "page: energy by unit against the unavoidable minimum"
has '<table class="knobs">' '<td class="mono">p1.weights</td><td class="mono">resident</td><td class="mono"></td><td class="src-plan">plan line [0-9]+:[0-9]+</td>' \
  '<td class="src-default">default</td>' 'knobs at their defaults' &&
  ok "page: the effective knobs and their sources" || ko "page: the effective knobs and their sources"
has 'program_sha256</th><td class="mono">[0-9a-f]{64}<' 'hardware_sha256</th><td class="mono">[0-9a-f]{64}<' \
  'tcc-gen plans/best.yaml --problem p1 -o p1.asm' 'tcc-sim p1.asm --trace=p1.json' 'tcc-sim d1.asm --trace=d1.json' &&
  ok "page: the hashes and the commands that rebuild and trace each program" ||
  ko "page: the hashes and the commands that rebuild and trace each program"
# self-contained: no reference out of the page (the SVG namespaces aside)
if ! grep -Eq '<(script|link|img|iframe|object|embed)[ >]|src=|@import|url\((http|//)' "$page" &&
  [ "$(grep -o 'https\?://[^"]*' "$page" | grep -cv '^http://www.w3.org/')" -eq 0 ]; then
  ok "page: self-contained (no script, no external resource)"
else
  ko "page: self-contained (no script, no external resource)"
fi
"$grade" plans/best.yaml --html "$tmp/best2.html" >/dev/null 2>&1
TCC_GRADE_THREADS=1 "$grade" plans/best.yaml --html "$tmp/best3.html" >/dev/null 2>&1
cmp -s "$page" "$tmp/best2.html" && cmp -s "$page" "$tmp/best3.html" &&
  ok "page: the same bytes again, and on one thread" || ko "page: the same bytes again, and on one thread"

# ---- knobs the loader took back (fallback) or chose (auto); the hashes
small_p1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, seqs: 1, rows: 64}'
small_d1='  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, history: 32, steps: 2}'
printf 'version: 1\np1:\n%s\n  k_chunk: {qkv: 64, w1: auto}\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/fb.yaml"
"$grade" "$tmp/fb.yaml" --html "$tmp/fb.html" >/dev/null 2>&1
page=$tmp/fb.html
has '<td class="mono">p1.k_chunk.qkv</td><td class="mono">32</td><td class="mono"></td><td class="src-fallback">fallback \(written at line 4:13\)</td>' \
  '<td class="mono">p1.k_chunk.w1</td><td class="mono">32</td><td class="mono"></td><td class="src-auto">auto \(line 4:22\)</td>' \
  'k_chunk.qkv=64 does not divide d_model=32; using 32' 'score <b>-</b> <span class="muted">\(problem dims differ' &&
  ok "page: fallback and auto knobs, the loader's warning" || ko "page: fallback and auto knobs, the loader's warning"
good=1
for p in p1 d1; do
  "$gen" "$tmp/fb.yaml" --problem $p -o "$tmp/fb.$p.asm" 2>/dev/null
  "$sim" --timing-only "$tmp/fb.$p.asm" >"$tmp/fb.$p.txt"
  ph=$(sed -n 's/^program   sha256 //p' "$tmp/fb.$p.txt")
  hh=$(sed -n 's/^hardware  sha256 //p' "$tmp/fb.$p.txt")
  sed -n "/<section class=\"problem\" id=\"$p\">/,/<\/section>/p" "$page" >"$tmp/fb.$p.sec"
  grep -q "program_sha256</th><td class=\"mono\">$ph<" "$tmp/fb.$p.sec" &&
    grep -q "hardware_sha256</th><td class=\"mono\">$hh<" "$tmp/fb.$p.sec" || { good=0; echo "$p: not $ph / $hh"; }
done
[ $good -eq 1 ] && ok "page: program_sha256 and hardware_sha256 are tcc-sim's" ||
  ko "page: program_sha256 and hardware_sha256 are tcc-sim's"

# ---- a plan whose name is markup
evil="$tmp/<script>alert('x')<\\script>&\"q.yaml"
cp tests/sweep/tiny.yaml "$evil"
"$grade" "$evil" --html "$tmp/evil.html" >/dev/null 2>&1
code=$?
page=$tmp/evil.html
if [ $code -eq 0 ] && ! grep -qi '<script' "$page" && ! grep -q "alert('x')" "$page" &&
  has '<title>tcc-grade: [^<]*&lt;script&gt;alert\(&#39;x&#39;\)&lt;\\script&gt;&amp;&quot;q.yaml</title>' \
    "tcc-gen &#39;[^<]*&lt;script&gt;alert\(&#39;\\\\&#39;&#39;x&#39;\\\\&#39;&#39;\)"; then
  ok "page: a plan named with markup is escaped (title, heading, commands)"
else
  ko "page: a plan named with markup is escaped (exit $code)"
  grep -n 'script' "$page" | head -5
fi

# ---- the output file
tiny=$tmp/tiny.yaml
cp tests/sweep/tiny.yaml "$tiny"
"$grade" "$tiny" --html "$tiny" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html PLAN itself -> 2" 2 "tcc-grade: error: --html $tiny is the plan itself"
ln "$tiny" "$tmp/hard.html"
"$grade" "$tiny" --html "$tmp/hard.html" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html a hard link to the plan -> 2" 2 "tcc-grade: error: --html $tmp/hard.html is the plan itself"
cmp -s "$tiny" tests/sweep/tiny.yaml && ok "--html PLAN: the plan untouched" || ko "--html PLAN: the plan untouched"
"$grade" "$tiny" --html "$tmp/no/such/p.html" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html into a missing directory -> 2, before grading" 2 "$tmp/no/such/p.html: error: cannot write: No such file or directory"
"$grade" "$tiny" --html "$tmp" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html a directory -> 2" 2 "$tmp: error: cannot write: Is a directory"
"$grade" "$tiny" --html= >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html= -> 2" 2 "tcc-grade: error: --html needs a file name"
"$grade" --log "$tmp" --html "$tmp/x.html" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html with --log -> 2" 2 "tcc-grade: error: --html writes the report of a graded plan: not with --log"
mkdir "$tmp/outdir"
"$grade" "$tiny" --html "$tmp/outdir/p.html" >/dev/null 2>&1 && [ "$(ls -A "$tmp/outdir")" = p.html ] &&
  grep -q '</html>' "$tmp/outdir/p.html" && ok "--html: the page and nothing else beside it" ||
  ko "--html: the page and nothing else beside it ($(ls -A "$tmp/outdir" | tr '\n' ' '))"
cp "$tmp/outdir/p.html" "$tmp/old.html"
printf 'version: 1\np1:\n%s\n' "$small_p1" >"$tmp/half.yaml"
"$grade" "$tmp/half.yaml" --html "$tmp/outdir/p.html" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--html on a plan that fails to compile -> 2" 2 "$tmp/half.yaml:1:1: error: the plan has no d1 section"
cmp -s "$tmp/old.html" "$tmp/outdir/p.html" && [ "$(ls -A "$tmp/outdir")" = p.html ] &&
  ok "--html: a failed run keeps the old page, leaves no temporary file" ||
  ko "--html: a failed run keeps the old page, leaves no temporary file"
"$grade" "$tiny" --html /dev/null >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && [ -c /dev/null ] && ok "--html /dev/null: written through" ||
  ko "--html /dev/null: written through (exit $code)"
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
"$grade" "$tiny" --html "$tmp/fifo" >/dev/null 2>"$tmp/err"
code=$?
wait $reader
[ $code -eq 0 ] && [ -p "$tmp/fifo" ] && cmp -s "$tmp/fifo.out" "$tmp/outdir/p.html" &&
  ok "--html FIFO: the page through it, the FIFO kept" || ko "--html FIFO: the page through it, the FIFO kept (exit $code)"
"$grade" "$tiny" --problem d1 --html "$tmp/d1.html" >/dev/null 2>&1
code=$?
page=$tmp/d1.html
[ $code -eq 0 ] && [ "$(grep -c '<svg ' "$page")" -eq 1 ] && has '<section class="problem" id="d1">' \
  'score <b>-</b> <span class="muted">\(one problem graded \(--problem\)\)' && ! grep -q 'id="p1"' "$page" &&
  ok "--html --problem d1: one problem's page" || ko "--html --problem d1: one problem's page (exit $code)"
printf 'version: 1\nhardware: {sms: 24}\np1:\n%s\nd1:\n%s\n' "$small_p1" "$small_d1" >"$tmp/area.yaml"
"$grade" "$tmp/area.yaml" --html "$tmp/area.html" >/dev/null 2>&1
code=$?
page=$tmp/area.html
[ $code -eq 1 ] && has '<td class="fail">FAIL</td><td>area</td>' '<pre class="hint">hint p1  area over the limit' \
  'score <b>-</b> <span class="muted">\(a constraint fails\)' &&
  ok "--html on a failing plan: exit 1, the page says why" || ko "--html on a failing plan: exit 1, the page says why (exit $code)"

# ---- records keep the plan's text: --log DIR --plan N
rec=$tmp/records
"$grade" "$tmp/fb.yaml" --record "$rec" >/dev/null 2>&1
"$grade" "$tiny" --record "$rec" >"$tmp/tiny.txt" 2>/dev/null
"$grade" --log "$rec" --plan 2 >"$tmp/again.yaml" 2>"$tmp/err"
code=$?
"$grade" "$tmp/again.yaml" | sed -n '3,$p' >"$tmp/again.txt"
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tiny" "$tmp/again.yaml" &&
  sed -n '3,$p' "$tmp/tiny.txt" | cmp -s - "$tmp/again.txt"; then
  ok "--log DIR --plan N: the plan text byte for byte, graded again to the same report"
else
  ko "--log DIR --plan N: the plan text byte for byte (exit $code)"
  cat "$tmp/err"
fi
# a line written before plans were kept: read as before
sed '1s/"plan_text":"\([^"\\]\|\\.\)*",//' "$rec/records.jsonl" >"$tmp/r" && cp "$tmp/r" "$rec/records.jsonl"
if ! sed -n 1p "$rec/records.jsonl" | grep -q plan_text && sed -n 2p "$rec/records.jsonl" | grep -q '"plan_text":"# tests/sweep/tiny.yaml' &&
  "$grade" --log "$rec" >"$tmp/log" 2>&1 && [ "$(wc -l <"$tmp/log")" -eq 3 ]; then
  ok "records: a line without plan_text still lists"
else
  ko "records: a line without plan_text still lists"
  cat "$tmp/log"
fi
"$grade" --log "$rec" --plan 1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plan N of an old record -> 2" 2 "$rec/records.jsonl:1:1: error: the record keeps no plan text (recorded before tcc-grade kept it, or the plan was unreadable or not UTF-8)"
"$grade" --log "$rec" --plan 3 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plan past the last record -> 2" 2 "$rec/records.jsonl: error: no record 3: it holds 2"
"$grade" --log "$rec" --plan 0 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plan 0 -> 2" 2 "tcc-grade: error: --plan '0': expected a record's line number, 1 or more"
"$grade" --log "$rec" --plan x >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plan x -> 2" 2 "tcc-grade: error: --plan 'x': expected a record's line number, 1 or more"
"$grade" "$tiny" --plan 1 >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plan without --log -> 2" 2 "tcc-grade: error: --plan N needs --log DIR"

# ---- headless Chromium
# chrome FLAGS... URL: headless Chromium under timeout, its log in
# $tmp/chromium.log (--no-sandbox: root in a container has no user
# namespace for the sandbox)
chrome() {
  timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/chromium" --enable-logging=stderr --v=0 "$@" 2>"$tmp/chromium.log"
}
# console: what a page printed to its console, or its uncaught errors
console() { grep -E 'CONSOLE|Uncaught' "$tmp/chromium.log"; }
if command -v chromium >/dev/null 2>&1; then
  chrome --dump-dom "file://$tmp/best.html" >"$tmp/dom.html"
  if grep -q '<table class="verdicts">' "$tmp/dom.html" && [ "$(grep -c '<svg ' "$tmp/dom.html")" -eq 2 ] &&
    grep -q 'score <b>5879.07</b>' "$tmp/dom.html" && ! console >/dev/null; then
    ok "chromium: the DOM has the verdict table, the score and both plots; no console output"
  else
    ko "chromium: the DOM has the verdict table, the score and both plots; no console output"
    console | head -5
  fi
  if chrome --window-size=1280,2400 --screenshot="$tmp/shot.png" "file://$tmp/best.html" >/dev/null &&
    set -- $("$stats" "$tmp/shot.png") && [ "$1 $2" = "1280 2400" ] && [ "$3" -gt 150000 ] && [ "$4" -ge 16 ] &&
    ! console >/dev/null; then
    ok "chromium: the page's screenshot is not blank ($3 inked pixels, $4 colours)"
  else
    ko "chromium: the page's screenshot is not blank ($*)"
    tail -5 "$tmp/chromium.log"
  fi
  chrome --dump-dom "file://$tmp/evil.html" >"$tmp/evil.dom"
  if ! grep -qi '<script' "$tmp/evil.dom" && grep -q '&lt;script&gt;' "$tmp/evil.dom" && ! console >/dev/null; then
    ok "chromium: the page of a plan named with markup runs nothing"
  else
    ko "chromium: the page of a plan named with markup runs nothing"
  fi
  # the checks can fail: a blank page, a page with console errors
  printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>b</title></head><body></body></html>\n' >"$tmp/blank.html"
  if chrome --window-size=1280,2400 --screenshot="$tmp/blank.png" "file://$tmp/blank.html" >/dev/null &&
    set -- $("$stats" "$tmp/blank.png") && [ "$3" -eq 0 ]; then
    ok "chromium: a blank page is judged blank"
  else
    ko "chromium: a blank page is judged blank ($*)"
  fi
  printf '<!DOCTYPE html>\n<html><body><p>x</p><script>console.error("e"); nosuch();</script></body></html>\n' >"$tmp/noisy.html"
  chrome --dump-dom "file://$tmp/noisy.html" >/dev/null
  [ "$(console | wc -l)" -eq 2 ] && ok "chromium: console errors are caught" || ko "chromium: console errors are caught"
else
  echo "[SKIP] chromium not found: the page is not opened in a browser (tools/deps.sh installs Debian's chromium)"
fi

echo "html: $pass passed, $fail failed"
[ $fail -eq 0 ]
