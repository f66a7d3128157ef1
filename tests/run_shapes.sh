#!/bin/sh
# tests/run_shapes.sh BUILD_DIR - tcc-shapes (docs/tools.md, "tcc-shapes"):
# the quick subset of bench/shapes.yaml on baseline.yaml and best.yaml, in
# which every program tcc-gen writes must pass numerics, area and power
# (the power fitting's shapes among them: they are over 20 W as written);
# the table's rows and counts; and the suite file's diagnostics.
. "$(dirname "$0")/lib.sh"
shapes=$build/tcc-shapes
[ -x "$shapes" ] || { echo "run_shapes.sh: $shapes not built"; exit 2; }

"$shapes" --quick --refusals-ok bench/shapes.yaml plans/baseline.yaml plans/best.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
rows=$(grep -c '^plans/' "$tmp/out")
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] && ! grep -q ' FAIL ' "$tmp/out" &&
  grep -q '^plans/best.yaml: [1-9][0-9]* PASS, 0 FAIL, 0 refused' "$tmp/out" &&
  grep -q '^plans/baseline.yaml: [1-9][0-9]* PASS, 0 FAIL, 0 refused' "$tmp/out" &&
  grep -q '^plans/best.yaml  *p1  *d_model=256 heads=8 d_ff=1024 layers=2 seqs=2 rows=128  *PASS .*\*$' "$tmp/out" &&
  grep -q '^plans/best.yaml  *d1  *d_model=128 heads=4 d_ff=512 layers=2 history=64 steps=8  *PASS .*\*$' "$tmp/out" &&
  grep -q '^plans/best.yaml  *p1  *d_model=64 heads=2 d_ff=128 layers=1 seqs=1 rows=64  *PASS .*r$' "$tmp/out"; then
  ok "the quick subset: every shape compiles (values and techniques fall back) and no program fails; best.yaml's shapes over 20 W as written are fitted and PASS, its 64-wide P1 relaxed ($rows rows)"
else
  ko "the quick subset (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi

# without --refusals-ok a refused plan fails the run (TCC_STRICT: the shapes
# baseline.yaml's k_chunk of 128 does not divide are refused, not fallen back)
TCC_STRICT=1 "$shapes" --quick bench/shapes.yaml plans/baseline.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
if [ $code -eq 1 ] && grep -q ' refused ' "$tmp/out"; then ok "a refusal -> 1"; else ko "a refusal -> 1 (exit $code)"; fi

# the suite's diagnostics: one line, exit 2
bad() {
  printf '%s\n' "$2" >"$tmp/suite.yaml"
  "$shapes" "$tmp/suite.yaml" plans/baseline.yaml >"$tmp/out" 2>"$tmp/err"
  code=$?
  expect "$1" 2 "$3"
}
bad "suite: a mistyped dim" 'version: 1
p1:
  - {rowz: 64}' "$tmp/suite.yaml:3:6: error: unknown key 'rowz' in a p1 shape; did you mean 'rows'?"
bad "suite: a dim of the other problem" 'version: 1
d1:
  - {rows: 64}' "$tmp/suite.yaml:3:6: error: unknown key 'rows' in a d1 shape"
bad "suite: out of range" 'version: 1
d1:
  - {history: 2048}' "$tmp/suite.yaml:3:15: error: history=2048 out of range 0..1024"
bad "suite: not an integer" 'version: 1
p1:
  - {seqs: two}' "$tmp/suite.yaml:3:12: error: 'seqs' must be a decimal integer, got 'two'"
bad "suite: no shapes" 'version: 1' "$tmp/suite.yaml:1:1: error: the suite lists no shape (p1: or d1:)"
bad "suite: a number far out of range" 'version: 1
p1: [{d_model: 99999999999}]' "$tmp/suite.yaml:2:16: error: d_model=99999999999 is out of range"
bad "suite: wrong version" 'version: 2
p1: [{}]' "$tmp/suite.yaml:1:10: error: unsupported shape suite version '2' (this tool reads version 1)"
"$shapes" "$tmp/none.yaml" plans/baseline.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "suite: missing file" 2 "$tmp/none.yaml:1:1: error: cannot read shape suite: No such file or directory"
timeout 60 "$shapes" /dev/zero plans/baseline.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "suite: /dev/zero -> 2 at the 1 MiB limit, not read whole" 2 "/dev/zero:1:1: error: shape suite is larger than the limit of 1048576 bytes"
"$shapes" bench/shapes.yaml "$tmp/none.yaml" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "plan: missing file" 2 "$tmp/none.yaml:1:1: error: cannot read plan: No such file or directory"
"$shapes" bench/shapes.yaml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no plan" 2 "tcc-shapes: error: expected a shape suite and at least one plan (see --help)"

expect_full "--version on /dev/full -> 2, one line" tcc-shapes "$shapes" --version

echo "shapes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
