# tests/lib.sh - what the tests/run_*.sh scripts share, sourced first thing
# (`. "$(dirname "$0")/lib.sh"`): the C locale, the build directory ($1,
# default build) made absolute in $build, the repository top as the working
# directory, a temporary directory $tmp removed at exit, ok/ko counting
# passes and failures in $pass/$fail, and expect for a one-line diagnostic.
LC_ALL=C
export LC_ALL
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
cd "$(dirname "$0")/.." || exit 2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); echo "[PASS] $1"; }
ko() { fail=$((fail + 1)); echo "[FAIL] $1"; }
# expect NAME CODE EXPECTED_STDERR: the last command's exit status ($code) is
# CODE, its stdout ($tmp/out) is empty and its stderr ($tmp/err) is exactly
# the one line EXPECTED_STDERR.
expect() {
  printf '%s\n' "$3" >"$tmp/want"
  if [ "$code" -eq "$2" ] && [ ! -s "$tmp/out" ] && diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then
    ok "$1"
  else
    ko "$1 (exit $code, want $2)"
    cat "$tmp/diff" "$tmp/out"
  fi
}
# expect_full NAME TOOL COMMAND...: COMMAND, its standard output on
# /dev/full, exits 2 with exactly the one line "TOOL: error: cannot write to
# standard output: No space left on device" on stderr (a report that was
# not written is an error, docs/tools.md); skipped, with a message, where
# there is no /dev/full.
expect_full() {
  _name=$1 _tool=$2
  shift 2
  if [ ! -c /dev/full ]; then
    echo "[SKIP] $_name: no /dev/full here"
    return
  fi
  "$@" >/dev/full 2>"$tmp/err"
  code=$?
  : >"$tmp/out"
  expect "$_name" 2 "$_tool: error: cannot write to standard output: No space left on device"
}
