#!/bin/sh
# tests/run_determinism.sh BUILD... - determinism across compilers and
# optimisation levels (make determinism-check builds gcc -O0, gcc -O2 and
# clang -O2): for every golden plan tests/golden/NAME.yaml (not bad_*) and
# for plans/baseline.yaml and plans/best.yaml (P1 and D1), tcc-gen's asm and
# IR from every build are byte-identical, and so is tcc-sim --json at seed 7
# on that asm (the first build's) from every build.  The plans' own P1
# programs are compared on tcc-gen only: simulating them at -O0 takes long.
# Prints [PASS]/[FAIL] per output and a summary; exits 1 on any failure.
. "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || { echo "usage: run_determinism.sh BUILD BUILD..."; exit 2; }
builds=""
for b in "$@"; do
  case $b in /*) ;; *) b=$PWD/$b ;; esac
  for tool in tcc-gen tcc-sim; do
    [ -x "$b/$tool" ] || { echo "run_determinism.sh: $b/$tool not built"; exit 2; }
  done
  builds="$builds $b"
done

# same NAME CMD...: run CMD (with @B@ replaced by each build) per build;
# every stdout must be the same bytes, and every status 0 or 1.
same() {
  what=$1
  shift
  k=0 good=1
  for b in $builds; do
    k=$((k + 1))
    cmd=""
    for a in "$@"; do cmd="$cmd '$(printf %s "$a" | sed "s|@B@|$b|g")'"; done
    eval "$cmd" >"$tmp/out.$k" 2>"$tmp/err.$k"
    code=$?
    [ $code -le 1 ] || { good=0; echo "${b##*/}: exit $code"; cat "$tmp/err.$k"; }
    [ $k -eq 1 ] || cmp -s "$tmp/out.1" "$tmp/out.$k" || {
      good=0
      diff -u "$tmp/out.1" "$tmp/out.$k" | head -20
    }
  done
  if [ $good -eq 1 ]; then ok "$what"; else ko "$what"; fi
}

first=${builds# }
first=${first%% *}
for plan in tests/golden/*.yaml plans/baseline.yaml plans/best.yaml; do
  case ${plan##*/} in bad_*) continue ;; esac
  case $plan in
  tests/*) probs=$(sed -n 's/^# args:.*--problem \([pd]1\).*/\1/p' "$plan") ;;
  *) probs="p1 d1" ;;
  esac
  for p in ${probs:-default}; do
    args=""
    [ "$p" = default ] || args="--problem $p"
    name=${plan%.yaml}${args:+ $p}
    # shellcheck disable=SC2086 # args split on purpose
    same "$name: tcc-gen asm" @B@/tcc-gen "$plan" $args
    # shellcheck disable=SC2086
    same "$name: tcc-gen ir" @B@/tcc-gen "$plan" $args --emit=ir
    case $plan:$p in plans/*:p1) continue ;; esac
    # shellcheck disable=SC2086
    "$first/tcc-gen" "$plan" $args -o "$tmp/prog.asm"
    same "$name: tcc-sim --json --seed 7" @B@/tcc-sim --json --seed 7 "$tmp/prog.asm"
  done
done

echo "determinism: $pass passed, $fail failed"
[ $fail -eq 0 ]
