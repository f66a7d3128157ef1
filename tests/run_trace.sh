#!/bin/sh
# tests/run_trace.sh BUILD_DIR - tcc-sim --trace=FILE opened the way a user
# opens it (docs/tools.md "Trace"), on a small program with arrows
# (tests/asm/tiny_p1.asm):
#  - the file is JSON (jq) in the form the viewers read: displayTimeUnit
#    "ns", every ts and dur a number of microseconds that is whole cycles
#    (ns), every arrow an "s" and an "f" ("bp":"e") with one id, name and
#    category, the "f" not before the "s";
#  - speedscope, a trace viewer that runs offline (its npm package ships
#    the web app in dist/; tools/deps.sh installs it into NODE_DIR, default
#    BUILD_DIR/node), loads the file in headless Chromium: the page's title
#    names the file, its profile list names our first track and counts
#    every track with slices, and a screenshot is inked in many colours (the
#    slices drawn); the file without the WG slices gives no such list, so
#    the check can fail.  Skipped, with a message, only when chromium or npm is absent
#    (tools/deps.sh installs both); Chromium runs under `timeout`.
# Prints [PASS]/[FAIL]/[SKIP] per test and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
sim=$build/tcc-sim
stats=$build/tests/png-stats
node_dir=${NODE_DIR:-$build/node}
case $node_dir in /*) ;; *) node_dir=$PWD/$node_dir ;; esac

prog=tests/asm/tiny_p1.asm
trace=$tmp/tiny_p1.trace.json
"$sim" $prog --trace="$trace" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && ok "--trace: $prog traced" || { ko "--trace: $prog traced (exit $code)"; cat "$tmp/err"; }

# the JSON, read back by jq
if jq -e '.traceEvents | length > 0' "$trace" >/dev/null 2>&1; then
  ok "jq reads the trace"
else
  ko "jq reads the trace"
fi
got=$(jq -r '[.displayTimeUnit,
  ([.traceEvents[] | (.ts, (.dur // 0)) | type == "number" and . >= 0 and ((. * 1000 | round) - . * 1000 | fabs) < 1e-6]
   | all),
  (.otherData.cycles >= ([.traceEvents[] | select(.ph == "X") | (.ts + .dur) * 1000 | round] | max))] |
  map(tostring) | join(" ")' "$trace" 2>&1)
[ "$got" = "ns true true" ] && ok "trace: displayTimeUnit ns; ts and dur in us, whole cycles; within the run" ||
  ko "trace: displayTimeUnit ns; ts and dur in us, whole cycles; within the run (got '$got')"
# a slice's ts + dur, added as the viewers add them (doubles), never passes
# the next slice's ts on its track: the slices of a track do not nest
got=$(jq '[.traceEvents[] | select(.ph == "X")] | group_by("\(.pid)/\(.tid)") |
  map(sort_by(.ts) | . as $a | [range(1; length) | select($a[. - 1].ts + $a[. - 1].dur > $a[.].ts)] | length) | add' \
  "$trace" 2>&1)
[ "$got" = 0 ] && ok "trace: no slice overlaps the next of its track, in doubles" ||
  ko "trace: no slice overlaps the next of its track, in doubles ($got do)"
got=$(jq -r '[.traceEvents[] | select(.ph == "s" or .ph == "f")] | group_by(.id) |
  [length, (map(length == 2 and .[0].ph == "s" and .[1].ph == "f" and .[1].bp == "e" and .[0].name == .[1].name and
    .[0].cat == .[1].cat and .[0].ts <= .[1].ts) | all)] | map(tostring) | join(" ")' "$trace" 2>&1)
[ "$got" = "2 true" ] && ok "trace: 2 arrows, each an s and an f of one id, name and category" ||
  ko "trace: 2 arrows, each an s and an f of one id, name and category (got '$got')"

# speedscope in headless Chromium
if ! command -v chromium >/dev/null 2>&1; then
  echo "[SKIP] chromium not found: the trace is not opened in a viewer (tools/deps.sh installs Debian's chromium)"
elif ! command -v npm >/dev/null 2>&1; then
  echo "[SKIP] npm not found: speedscope cannot be installed, the trace is not opened in a viewer (tools/deps.sh installs Debian's npm)"
elif ! NODE_DIR=$node_dir sh tools/deps.sh speedscope >"$tmp/npm.log" 2>&1; then
  ko "speedscope installed into $node_dir"
  tail -5 "$tmp/npm.log"
else
  app=$node_dir/node_modules/speedscope/dist/release/index.html
  # load FILE the way the speedscope command does: a script that hands the
  # file to the app, named by #localProfilePath (no server, no network)
  page() {
    printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$(basename "$1")" "$(base64 -w0 "$1")" >"$1.js"
    echo "file://$app#localProfilePath=$1.js"
  }
  # chromium OUTPUT_OPTION URL (--no-sandbox: root in a container has no
  # user namespace for the sandbox; swiftshader: speedscope draws with WebGL)
  view() {
    timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader --hide-scrollbars \
      --no-first-run --user-data-dir="$tmp/chromium" --window-size=1200,800 --virtual-time-budget=5000 "$1" "$2" \
      2>"$tmp/chromium.log"
  }
  tracks=$(jq '[.traceEvents[] | select(.ph == "X") | "\(.pid)/\(.tid)"] | unique | length' "$trace")
  view --dump-dom "$(page "$trace")" >"$tmp/dom.html"
  if grep -q '<title>tiny_p1.trace.json - speedscope</title>' "$tmp/dom.html" &&
    grep -q "WGs (pid 1), wg0 (tid 0) <span[^>]*>(1/$tracks)</span>" "$tmp/dom.html"; then
    ok "speedscope loads the trace: its title, track wg0 of WGs, $tracks tracks"
  else
    ko "speedscope loads the trace: its title, track wg0 of WGs, $tracks tracks"
    grep -o '<title>[^<]*</title>' "$tmp/dom.html"
    tail -5 "$tmp/chromium.log"
  fi
  if view --screenshot="$tmp/shot.png" "$(page "$trace")" && set -- $("$stats" "$tmp/shot.png") &&
    [ "$1 $2" = "1200 800" ] && [ "$3" -gt 48000 ] && [ "$4" -ge 16 ]; then
    ok "speedscope draws the slices: $3 inked pixels, $4 colours"
  else
    ko "speedscope draws the slices ($*)"
    tail -5 "$tmp/chromium.log"
  fi
  # the check can fail: the trace without the WG and unit slices (the
  # hottest window's alone left) loads, and shows neither
  jq -c '.traceEvents |= map(select(.ph != "X" or .pid == 6))' "$trace" >"$tmp/power.trace.json"
  view --dump-dom "$(page "$tmp/power.trace.json")" >"$tmp/dom.html"
  if grep -q '<title>power.trace.json - speedscope</title>' "$tmp/dom.html" && ! grep -q "WGs (pid 1)" "$tmp/dom.html"; then
    ok "speedscope: a trace without the WG slices loads without their track"
  else
    ko "speedscope: a trace without the WG slices loads without their track"
  fi
fi

echo "trace: $pass passed, $fail failed"
[ $fail -eq 0 ]
