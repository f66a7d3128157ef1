#!/bin/sh
# tests/fuzz/run_replay.sh BUILD TARGET... - `make fuzz-check` (part of make
# check): every reproducer tests/fuzz/repro/TARGET/NAME (a crash or a wrong
# outcome the fuzzers found, fixed since) through BUILD/tests/replay-TARGET,
# the target's entry point without libFuzzer: it must not crash (the ASan
# build of make check catches memory errors) and its outcome must be exactly
# tests/fuzz/repro/TARGET/NAME.out (one line: "ok", the diagnostic, "exit N").
. "$(dirname "$0")/../lib.sh"
cd .. || exit 2 # lib.sh went to this script's parent, tests/: the top is one up
shift
for t in "$@"; do
  n=0
  for f in tests/fuzz/repro/"$t"/*; do
    case $f in *.out | *'*') continue ;; esac
    n=$((n + 1))
    "$build/tests/replay-$t" "$f" >"$tmp/out" 2>"$tmp/err"
    code=$?
    sed "s|^$f: ||" "$tmp/out" >"$tmp/got"
    if [ $code -eq 0 ] && [ -e "$f.out" ] && diff -u "$f.out" "$tmp/got" >"$tmp/diff"; then
      ok "replay-$t $f"
    else
      ko "replay-$t $f (exit $code)"
      [ -e "$f.out" ] || echo "missing $f.out"
      cat "$tmp/diff" "$tmp/err" 2>/dev/null | head -20
    fi
  done
  [ $n -gt 0 ] || { ko "replay-$t: no reproducer in tests/fuzz/repro/$t"; }
done
echo "fuzz replay: $pass passed, $fail failed"
[ $fail -eq 0 ]
