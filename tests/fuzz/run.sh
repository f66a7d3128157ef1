#!/bin/sh
# tests/fuzz/run.sh BUILD SECONDS TARGET... - `make fuzz`: runs each libFuzzer
# target BUILD/fuzz/fuzz-TARGET for SECONDS seconds (-max_total_time), one
# after the other, on its seed corpus (docs/testing.md):
#   plan, gen: every .yaml under tests/ and plans/;
#   asm, sim: every .asm under tests/ (hand-written, bad inputs, and the
#   compiler's output for the golden plans);
#   knobs: a few byte patterns (its input is a stream of choices);
# plus the reproducers of tests/fuzz/repro/TARGET/ and a dictionary made
# from the sources (plan keys and enum names; mnemonics, directives and
# keys of the assembler).  New inputs accumulate in BUILD/fuzz/corpus-TARGET
# (kept between runs); a crash, a timeout (-timeout=FUZZ_TIMEOUT s, default
# 10) or a memory blowup (-rss_limit_mb=FUZZ_RSS_MB, default 2048) is saved
# in BUILD/fuzz/artifacts-TARGET/ and fails the run.  The log of each target
# is BUILD/fuzz/TARGET.log; its final lines (cov:, ft:, corp:, the number of
# executions) are printed.  FUZZ_FLAGS adds libFuzzer options (the long runs
# of docs/testing.md use "-fork=1 -ignore_crashes=1 -ignore_timeouts=1
# -ignore_ooms=1" to go on after a finding).  Exit 0 when no target found
# anything, else 1.
LC_ALL=C
export LC_ALL
[ $# -ge 3 ] || { echo "usage: tests/fuzz/run.sh BUILD SECONDS TARGET..." >&2; exit 2; }
build=$1
secs=$2
shift 2
cd "$(dirname "$0")/../.." || exit 2
timeout=${FUZZ_TIMEOUT:-10}
rss=${FUZZ_RSS_MB:-2048}
status=0

# dict FILE SOURCE...: the identifier-like string literals of SOURCE (and
# the parts of dotted ones), one "word" per line, sorted.
dict() {
  out=$1
  shift
  grep -oh '"[A-Za-z_.][A-Za-z0-9_.]*"' "$@" | tr -d '"' |
    awk '{ print; n = split($0, a, "."); if (n > 1) for (i = 1; i <= n; i++) if (a[i] != "") print a[i] }' |
    awk 'length($0) <= 32' | sort -u | sed 's/.*/"&"/' >"$out"
}

for t in "$@"; do
  bin=$build/fuzz/fuzz-$t
  [ -x "$bin" ] || { echo "fuzz: $bin: not built" >&2; exit 2; }
  seeds=$build/fuzz/seed-$t
  corpus=$build/fuzz/corpus-$t
  art=$build/fuzz/artifacts-$t
  extra=
  rm -rf "$seeds" "$art"
  mkdir -p "$seeds" "$corpus" "$art"
  case $t in
    plan | gen)
      find tests plans -name '*.yaml' -exec cp {} "$seeds/" \;
      dict "$build/fuzz/$t.dict" src/frontend/plan_schema.c src/frontend/plan_load.c
      printf '"true"\n"false"\n": "\n"\\x0a  "\n' >>"$build/fuzz/$t.dict"
      maxlen=16384
      ;;
    asm | sim)
      # each file under its directory's name: tests/bad/x.asm and tests/golden/x.asm may clash
      for f in $(find tests -name '*.asm' | sort); do
        cp "$f" "$seeds/$(echo "$f" | tr / _)"
      done
      dict "$build/fuzz/$t.dict" src/spec/ops.def src/sim/asm_lexer.re src/sim/asm_parser.c \
        src/sim/machine.c src/sim/workload.c
      printf '".wg "\n".rf "\n"hbm["\n"sh["\n"ev."\n"stride "\n"\\x0a    "\n", "\n"[0:32, :]"\n' >>"$build/fuzz/$t.dict"
      maxlen=65536
      ;;
    knobs)
      # the input is a stream of choices (fuzz_knobs.c), not text: a few
      # byte patterns to start from, and the bytes that pick each choice
      printf '\000' >"$seeds/zeros"
      printf '\001\001\001\001\001\001\001\001\001\001\001\001' >"$seeds/ones"
      printf '\377\003\002\001\000\377\003\002\001\000\377\003\002\001\000' >"$seeds/mixed"
      printf '"\\x00"\n"\\x01"\n"\\x02"\n"\\x03"\n"\\x04"\n' >"$build/fuzz/$t.dict"
      maxlen=1024
      # its first 15 bytes draw the machine and the dims: long inputs at once
      extra=-len_control=0
      ;;
    *) echo "fuzz: unknown target $t" >&2; exit 2 ;;
  esac
  [ -d "tests/fuzz/repro/$t" ] && find "tests/fuzz/repro/$t" -type f ! -name '*.out' -exec cp {} "$seeds/" \;
  echo "fuzz: $t for ${secs}s ($(ls "$seeds" | wc -l) seeds, corpus $corpus)"
  # shellcheck disable=SC2086 # FUZZ_FLAGS and extra are lists of options
  "$bin" $FUZZ_FLAGS $extra -max_total_time="$secs" -print_final_stats=1 -timeout="$timeout" -rss_limit_mb="$rss" \
    -max_len="$maxlen" -dict="$build/fuzz/$t.dict" -artifact_prefix="$art/" \
    "$corpus" "$seeds" >"$build/fuzz/$t.log" 2>&1
  code=$?
  grep -E '^#[0-9]+.*(DONE|pulse|cov:)|^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' \
    "$build/fuzz/$t.log" | tail -4
  if [ $code -ne 0 ] || [ -n "$(ls "$art")" ]; then
    echo "fuzz: $t: FOUND (exit $code): $(ls "$art" | tr '\n' ' ')"
    grep -E 'ERROR|SUMMARY|fuzz: |timeout|out-of-memory' "$build/fuzz/$t.log" | head -5
    status=1
  else
    echo "fuzz: $t: nothing found"
  fi
done
exit $status
