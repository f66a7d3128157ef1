#!/bin/sh
# tests/run_golden.sh BUILD_DIR - golden tests of tcc-gen (style.md, "Golden
# tests").  For every plan tests/golden/NAME.yaml, in name order:
#
#   NAME.asm              tcc-gen NAME.yaml ARGS              (exit 0, no stderr)
#                         ... and tcc-sim NAME.asm passes on seeds 7 and 13 (exit 0)
#   NAME.ir               tcc-gen NAME.yaml ARGS --emit=ir
#   NAME.after-PASS.ir    tcc-gen NAME.yaml ARGS --dump-after=PASS (those present)
#   bad_NAME.err          tcc-gen bad_NAME.yaml ARGS: exit 2, nothing on stdout,
#                         exactly this on stderr
#
# ARGS come from a line "# args: ..." in the plan (e.g. "# args: --problem p1").
# Every good plan has a .asm and a .ir; a .after-PASS.ir is added by hand (an
# empty file), then filled by UPDATE=1.  Outputs are compared with diff -u.
#
# UPDATE=1 (make update-golden) rewrites the expected files from the current
# tcc-gen instead of comparing (a plan that should fail must still fail, and
# a good one must still compile); review the result with git diff.
#
# Run from anywhere; paths in the outputs are relative to the repository top
# (tests/golden/NAME.yaml), so the script works from there.  Prints [PASS] /
# [FAIL] per expected file and a summary line; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
gen=$build/tcc-gen
sim=$build/tcc-sim
update=${UPDATE:-0}

for tool in "$gen" "$sim"; do
  [ -x "$tool" ] || { echo "run_golden.sh: $tool not built"; exit 2; }
done

# compare EXPECTED ACTUAL: diff, or with UPDATE=1 rewrite EXPECTED.
compare() {
  if [ "$update" = 1 ]; then
    if cmp -s "$1" "$2"; then ok "$1 (unchanged)"; else cp "$2" "$1" && ok "$1 (updated)"; fi
  elif diff -u "$1" "$2" >"$tmp/diff"; then
    ok "$1"
  else
    ko "$1"
    cat "$tmp/diff"
  fi
}

# run_gen PLAN ARGS... : run tcc-gen; stdout in $tmp/out, stderr in $tmp/err, status in $code.
run_gen() {
  plan=$1
  shift
  # shellcheck disable=SC2046 # ARGS are split on purpose
  "$gen" "$plan" $(sed -n 's/^# args://p' "$plan") "$@" >"$tmp/out" 2>"$tmp/err"
  code=$?
}

for plan in tests/golden/*.yaml; do
  [ -e "$plan" ] || continue
  base=${plan%.yaml}
  case ${base##*/} in
  bad_*)
    run_gen "$plan"
    if [ "$code" -ne 2 ] || [ -s "$tmp/out" ]; then
      ko "$base.err (exit $code, $(wc -l <"$tmp/out") lines on stdout)"
      cat "$tmp/err"
    elif [ ! -e "$base.err" ] && [ "$update" != 1 ]; then
      ko "$base.err (missing; make update-golden creates it)"
    else
      compare "$base.err" "$tmp/err"
    fi
    continue
    ;;
  esac
  for exp in "$base.asm" "$base.ir" "$base".after-*.ir; do
    case $exp in
    *.asm) run_gen "$plan" ;;
    *.after-\*.ir) continue ;; # no dumps for this plan
    *.after-*.ir)
      pass_name=${exp##*.after-}
      run_gen "$plan" --dump-after="${pass_name%.ir}"
      ;;
    *) run_gen "$plan" --emit=ir ;;
    esac
    if [ "$code" -ne 0 ] || [ -s "$tmp/err" ]; then
      ko "$exp (tcc-gen exit $code)"
      cat "$tmp/err"
    elif [ ! -e "$exp" ] && [ "$update" != 1 ]; then
      ko "$exp (missing; make update-golden creates it)"
    else
      compare "$exp" "$tmp/out"
    fi
    # the expected assembly must run correctly and within budgets
    case $exp in
    *.asm)
      [ -e "$exp" ] || continue
      for seed in 7 13; do
        if "$sim" "$exp" --seed $seed >"$tmp/sim" 2>&1; then
          ok "$exp: tcc-sim --seed $seed"
        else
          ko "$exp: tcc-sim --seed $seed"
          cat "$tmp/sim"
        fi
      done
      ;;
    esac
  done
done

echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
