#!/bin/sh
# tests/run_plot.sh BUILD_DIR - tcc-sim --plot from the command line
# (docs/tools.md "Power plot"):
#  - --help names it; an SVG and a PNG of a small program in one run, the
#    report unchanged by them, the SVG's header, the PNG's signature and
#    size (BUILD_DIR/tests/png-stats), the same bytes from a second run;
#  - its diagnostics: no name, a name that is neither .svg nor .png, a
#    directory that does not exist; a faulty program leaves no plot;
#  - the plot module: tcc-sim needs no cairo, tcc-sim-plot.so does; a
#    tcc-sim without its module runs, and refuses --plot in one line;
#  - headless Chromium opens the SVG and its screenshot is not blank (ink
#    and colours counted by png-stats), while the screenshot of a blank SVG
#    is judged blank; skipped, with a message, when chromium is absent
#    (tools/deps.sh installs it).  Chromium runs under `timeout`, so it
#    cannot hang the suite.
# Prints [PASS]/[FAIL]/[SKIP] per test and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
sim=$build/tcc-sim
stats=$build/tests/png-stats

"$sim" --help | grep -q -- "--plot=FILE" && ok "--help: --plot" || ko "--help: --plot"

prog=tests/asm/tiny_p1.asm
"$sim" $prog --profile >"$tmp/plain" 2>&1
"$sim" $prog --profile --plot="$tmp/p.svg" --plot="$tmp/p.png" >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/plain" "$tmp/out"; then
  ok "--plot: exit 0, the report unchanged"
else
  ko "--plot: exit 0, the report unchanged (exit $code)"
  cat "$tmp/err"
fi
[ "$(head -c 38 "$tmp/p.svg")" = '<?xml version="1.0" encoding="UTF-8"?>' ] &&
  sed -n 2p "$tmp/p.svg" | grep -q '^<svg .*width="1200px" height="600px"' && tail -1 "$tmp/p.svg" | grep -q '</svg>' &&
  ok "--plot=FILE.svg: an SVG document, 1200x600" || ko "--plot=FILE.svg: an SVG document, 1200x600"
[ "$(od -An -tx1 -N8 "$tmp/p.png" | tr -d ' \n')" = 89504e470d0a1a0a ] &&
  set -- $("$stats" "$tmp/p.png") && [ "$1 $2" = "1200 600" ] && [ "$3" -gt 72000 ] && [ "$4" -ge 8 ] &&
  ok "--plot=FILE.png: a PNG, 1200x600, inked ($3 pixels, $4 colours)" ||
  ko "--plot=FILE.png: a PNG, 1200x600, inked"
"$sim" $prog --timing-only --plot="$tmp/q.png" --plot="$tmp/q.svg" >/dev/null 2>&1
cmp -s "$tmp/p.svg" "$tmp/q.svg" && cmp -s "$tmp/p.png" "$tmp/q.png" &&
  ok "--plot: same program, same bytes (whatever the order of the files)" ||
  ko "--plot: same program, same bytes (whatever the order of the files)"

"$sim" $prog --plot= >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plot= -> 2" 2 "tcc-sim: error: --plot needs a file name"
"$sim" $prog --plot="$tmp/p.pdf" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plot=FILE.pdf -> 2" 2 "$tmp/p.pdf: error: a plot file name ends in .svg or .png"
[ ! -e "$tmp/p.pdf" ] && ok "--plot=FILE.pdf: no file" || ko "--plot=FILE.pdf: no file"
"$sim" $prog --plot="$tmp/no/such/dir/p.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plot into a missing directory -> 2" 2 "$tmp/no/such/dir/p.svg:1:1: error: cannot write: No such file or directory"
"$sim" tests/bad/run_deadlock.asm --plot="$tmp/dead.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ ! -e "$tmp/dead.svg" ] && [ -s "$tmp/err" ] &&
  ok "--plot on a faulty program -> 2, no file" || ko "--plot on a faulty program -> 2, no file (exit $code)"

# the plot file is written as every output file is (docs/tools.md, "Output
# files"): a failing run leaves the file that was there and no temporary
# file; a program named like a plot is not overwritten by its own plot
mkdir "$tmp/keep"
printf 'an earlier plot\n' >"$tmp/keep/old.svg"
"$sim" tests/bad/run_deadlock.asm --plot="$tmp/keep/old.svg" --plot="$tmp/keep/old.png" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ "$(cat "$tmp/keep/old.svg")" = "an earlier plot" ] && [ "$(ls -A "$tmp/keep")" = old.svg ] &&
  ok "--plot on a faulty program: the earlier file kept, no other" ||
  ko "--plot on a faulty program: the earlier file kept, no other (exit $code: $(ls -A "$tmp/keep" | tr '\n' ' '))"
cp $prog "$tmp/keep/p.svg"
"$sim" "$tmp/keep/p.svg" --plot="$tmp/keep/p.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--plot=PROGRAM -> 2" 2 "tcc-sim: error: --plot $tmp/keep/p.svg is the program itself"
cmp -s "$tmp/keep/p.svg" $prog && ok "--plot=PROGRAM: the program untouched" || ko "--plot=PROGRAM: the program untouched"
ln -s old.svg "$tmp/keep/link.svg"
"$sim" $prog --plot="$tmp/keep/link.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ -L "$tmp/keep/link.svg" ] && cmp -s "$tmp/keep/old.svg" "$tmp/p.svg" &&
  ok "--plot=LINK: the file it points to replaced, the link kept" ||
  ko "--plot=LINK: the file it points to replaced, the link kept (exit $code)"
ln -s /dev/null "$tmp/keep/null.svg"
"$sim" tests/bad/run_deadlock.asm --plot="$tmp/keep/null.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ -L "$tmp/keep/null.svg" ] && [ -c /dev/null ] &&
  ok "--plot=LINK to /dev/null on a faulty program: the link and the device kept" ||
  ko "--plot=LINK to /dev/null on a faulty program: the link and the device kept (exit $code)"
# the plot module (plot.h): tcc-sim itself needs no cairo; a tcc-sim with no
# module beside it (nor in ../lib/tcc) runs without --plot and refuses
# --plot before the run, in one line, leaving no file
if command -v readelf >/dev/null 2>&1; then
  readelf -d "$sim" | grep NEEDED >"$tmp/needed"
  ! grep -q "cairo\|fontconfig" "$tmp/needed" && readelf -d "$build/tcc-sim-plot.so" | grep -q "NEEDED.*libcairo" &&
    ok "tcc-sim loads no cairo; its plot module does" || { ko "tcc-sim loads no cairo; its plot module does"; cat "$tmp/needed"; }
fi
mkdir "$tmp/lone"
cp "$sim" "$tmp/lone/tcc-sim"
"$tmp/lone/tcc-sim" $prog --timing-only >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q "^cycles" "$tmp/out" &&
  ok "no plot module: a run without --plot" || ko "no plot module: a run without --plot (exit $code)"
"$tmp/lone/tcc-sim" $prog --plot="$tmp/lone.svg" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no plot module: --plot -> 2" 2 "tcc-sim: error: --plot: cannot load the plot module: $tmp/lone/../lib/tcc/tcc-sim-plot.so: cannot open shared object file: No such file or directory"
[ ! -e "$tmp/lone.svg" ] && ok "no plot module: no file" || ko "no plot module: no file"

# shot SVG PNG: a screenshot of SVG by headless Chromium at the plot's size
# (--no-sandbox: root in a container has no user namespace for the sandbox)
shot() {
  timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/chromium" --window-size=1200,600 --screenshot="$2" "file://$1" >"$tmp/chromium.log" 2>&1
}
if command -v chromium >/dev/null 2>&1; then
  if shot "$tmp/p.svg" "$tmp/shot.png" && set -- $("$stats" "$tmp/shot.png") &&
    [ "$1 $2" = "1200 600" ] && [ "$3" -gt 72000 ] && [ "$4" -ge 8 ]; then
    ok "chromium opens the SVG: not blank ($3 inked pixels, $4 colours)"
  else
    ko "chromium opens the SVG: not blank ($*)"
    tail -5 "$tmp/chromium.log"
  fi
  # the check can fail: a blank SVG of the same size gives a blank screenshot
  printf '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="1200px" height="600px"/>\n' >"$tmp/blank.svg"
  if shot "$tmp/blank.svg" "$tmp/blank.png" && set -- $("$stats" "$tmp/blank.png") && [ "$3" -eq 0 ]; then
    ok "chromium: a blank SVG is judged blank"
  else
    ko "chromium: a blank SVG is judged blank ($*)"
  fi
else
  echo "[SKIP] chromium not found: the SVG is not opened in a browser (tools/deps.sh installs Debian's chromium)"
fi

echo "plot: $pass passed, $fail failed"
[ $fail -eq 0 ]
