#!/bin/sh
# tests/run_cli.sh TCC_SIM - command-line tests of tcc-sim:
#  - every tests/bad/NAME.asm must exit 2 with exactly tests/bad/NAME.err on
#    stderr (one line) and nothing on stdout;
#  - the hand-written tiny programs pass on the four seeds (exit 0);
#  - usage errors exit 2, --help and --version exit 0.
# Prints [PASS]/[FAIL] per test and a summary; exits 1 on any failure.
sim=${1:-build/tcc-sim}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); echo "[PASS] $1"; }
ko() { fail=$((fail + 1)); echo "[FAIL] $1"; }

for f in tests/bad/*.asm; do
  [ -e "$f" ] || continue
  exp=${f%.asm}.err
  "$sim" "$f" >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ $code -eq 2 ] && [ ! -s "$tmp/out" ] && diff -u "$exp" "$tmp/err" >"$tmp/diff"; then
    ok "$f"
  else
    ko "$f (exit $code)"
    cat "$tmp/diff"
  fi
done

for p in tests/asm/tiny_d1.asm tests/asm/tiny_p1.asm; do
  for seed in 7 13 11 23; do
    if "$sim" "$p" --seed $seed >"$tmp/out" 2>&1; then ok "$p --seed $seed"; else ko "$p --seed $seed"; cat "$tmp/out"; fi
  done
done

"$sim" --help >/dev/null 2>&1 && ok "--help" || ko "--help"
"$sim" --version | grep -q "spec v1" && ok "--version" || ko "--version"
"$sim" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && ok "no argument -> 2" || ko "no argument -> 2"
"$sim" --bogus x.asm >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] && ok "unknown option -> 2" || ko "unknown option -> 2"
"$sim" tests/asm/does-not-exist.asm >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "does-not-exist.asm" "$tmp/err" && ok "missing file -> 2" || ko "missing file -> 2"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
