#!/bin/sh
# tests/run_corners.sh BUILD_DIR - the documented shape ranges (docs/plan.md
# §3.1, docs/workloads.md §1) either compile or are refused with a one-line
# diagnostic at the dim that is too large.
#
# 1. Corners: every problem dim at its minimum and its maximum (the others at
#    their defaults), all dims at their minimum, all at their maximum.  A plan
#    that compiles must assemble: tcc-sim --timing-only with a small
#    --max-cycles runs it to the end or to the cycle limit, never stops at an
#    assembler error.  A refused plan exits 2 with exactly the expected
#    diagnostic.
# 2. Small shapes whose tiles are not a whole number of RF partitions (row
#    tiles of 96, 160, ...; RFs of 16..256 KiB): each compiles and passes
#    tcc-sim on seed 7 (numerics, area, power), or is refused by rf_alloc (a
#    tile too large for that RF), never miscompiled.
. "$(dirname "$0")/lib.sh"
gen=$build/tcc-gen
sim=$build/tcc-sim

# compiles NAME 'YAML' - tcc-gen exits 0 and the program assembles.  The
# corners test the lowering's ranges and size limit, so their sections say
# power.fit: off (the fitting of such programs, up to ~40 M cycles each
# timed again and again, is shapes-check's, on the shapes of bench/).
compiles() {
  printf 'version: 1\n%s\n' "$2" | sed 's/^\([pd]1\): {}$/\1: {power: {fit: off}}/; t; s/^\([pd]1\): {\(.\)/\1: {power: {fit: off}, \2/' >"$tmp/$1.yaml"
  if ! "$gen" "$tmp/$1.yaml" -o "$tmp/$1.asm" 2>"$tmp/err"; then
    ko "$1: tcc-gen: $(cat "$tmp/err")"
    return
  fi
  "$sim" "$tmp/$1.asm" --timing-only --max-cycles 20000 >/dev/null 2>"$tmp/err"
  code=$?
  if [ $code -eq 0 ] || grep -q "error: wg[0-9]*: cycle limit of 20000 cycles exceeded" "$tmp/err"; then
    ok "$1"
  else
    ko "$1: tcc-sim exit $code: $(cat "$tmp/err")"
  fi
  rm -f "$tmp/$1.asm"
}

# refused NAME 'YAML' 'DIAGNOSTIC' - tcc-gen exits 2 with exactly this line
# (FILE stands for the plan's path) and writes nothing
refused() {
  printf 'version: 1\n%s\n' "$2" >"$tmp/$1.yaml"
  "$gen" "$tmp/$1.yaml" -o "$tmp/$1.asm" 2>"$tmp/err"
  code=$?
  want=$(printf '%s' "$3" | sed "s|FILE|$tmp/$1.yaml|")
  if [ $code -eq 2 ] && [ "$(cat "$tmp/err")" = "$want" ] && [ ! -e "$tmp/$1.asm" ]; then
    ok "$1 (refused)"
  else
    ko "$1: exit $code: $(cat "$tmp/err") (want: $want)"
  fi
}

for tool in "$gen" "$sim"; do
  [ -x "$tool" ] || { echo "run_corners.sh: $tool not built"; exit 2; }
done

# D1: d_model 32..1024 (heads = d_model/32), d_ff 32..4096, layers 1..8,
# history 0..1024, steps 1..64
compiles d1_min 'd1: {problem: {d_model: 32, heads: 1, d_ff: 32, layers: 1, history: 0, steps: 1}}'
compiles d1_d_model_max 'd1: {problem: {d_model: 1024, heads: 32}}'
compiles d1_d_ff_min 'd1: {problem: {d_ff: 32}}'
compiles d1_d_ff_max 'd1: {problem: {d_ff: 4096}}'
compiles d1_layers_max 'd1: {problem: {layers: 8}}'
compiles d1_history_min 'd1: {problem: {history: 0}}'
compiles d1_history_max 'd1: {problem: {history: 1024}}'
compiles d1_steps_max 'd1: {problem: {steps: 64}}'
compiles d1_rf_min 'hardware: {rf_kib: 16}
d1: {}'
compiles d1_history_max_slices 'd1: {problem: {history: 1024}, attention: {slices: 8}}'
compiles d1_history_min_slices 'd1: {problem: {history: 32, steps: 64}, attention: {slices: 2, slice_map: blocked}}'
refused d1_max 'd1: {problem: {d_model: 1024, heads: 32, d_ff: 4096, layers: 8, history: 1024, steps: 64}}' \
  "FILE:2:80: error: steps=64 makes a program of about 8519680 instructions (133120 per step), more than tcc-gen's limit of 4194304; at most about 31 fit"

# P1: d_model 32..1024, d_ff 32..4096, layers 1..8, seqs 1..8, rows 32..1024
compiles p1_min 'p1: {problem: {d_model: 32, heads: 1, d_ff: 32, layers: 1, seqs: 1, rows: 32}}'
# a 32 KiB RF: the default chunks leave no room for a result; tcc-gen
# repairs each projection's k_chunk (room_repair, src/fit/fit.c)
compiles p1_rf_32 'hardware: {rf_kib: 32}
p1: {}'
compiles p1_d_model_max 'p1: {problem: {d_model: 1024, heads: 32}}'
compiles p1_d_ff_min 'p1: {problem: {d_ff: 32}}'
compiles p1_d_ff_max 'p1: {problem: {d_ff: 4096}}'
compiles p1_layers_max 'p1: {problem: {layers: 8}}'
compiles p1_seqs_max 'p1: {problem: {seqs: 8}}'
compiles p1_rows_min 'p1: {problem: {rows: 32}}'
compiles p1_rows_max 'p1: {problem: {rows: 1024}}'
refused p1_max 'p1: {problem: {d_model: 1024, heads: 32, d_ff: 4096, layers: 8, seqs: 8, rows: 1024}}' \
  "FILE:2:65: error: seqs=8 makes one layer's program alone more than tcc-gen's limit of 4194304 instructions (at least 5510656: projections 256 row tiles x (qkv 96 panels x 29 + wo 32 panels x 31 + w1 128 panels x 38 + w2 32 panels x 103) = 3055616, attention 8 seqs x 32 heads x (32 row tiles x 49 + 496 key blocks x 16) = 2433024, layer norms 512 tasks x 43); at most 6 fit"
# ... refused from the arithmetic, before the program is built: a few MB,
# not the 1.4 GB of building it up to the limit (GNU time's maximum RSS,
# where there is one and the build is not a sanitizer's)
if [ -x /usr/bin/time ] && ! ldd "$gen" 2>/dev/null | grep -q 'libasan'; then
  /usr/bin/time -f '%M' -o "$tmp/rss" "$gen" "$tmp/p1_max.yaml" -o "$tmp/p1_max.asm" 2>/dev/null
  rss=$(tail -n 1 "$tmp/rss")
  [ "$rss" -lt 100000 ] && ok "p1_max refused in $rss KB (from the arithmetic)" ||
    ko "p1_max refused in $rss KB (want under 100000)"
fi
refused p1_layers_too_many 'p1: {problem: {d_model: 256, heads: 8, d_ff: 1024, seqs: 8, rows: 1024, layers: 8}}' \
  "FILE:2:73: error: layers=8 makes a program of at least 7491584 instructions (at least 936448 per layer: projections 256 row tiles x (qkv 24 panels x 11 + wo 8 panels x 13 + w1 32 panels x 20 + w2 8 panels x 31) = 321536, attention 8 seqs x 8 heads x (32 row tiles x 49 + 496 key blocks x 16) = 608256, layer norms 512 tasks x 13), more than tcc-gen's limit of 4194304; at most 4 fit"

# Tiles that pad to whole partitions, on RFs of every size the row tile allows.
for rows in 96 160 192; do
  for tile in 32 64 96 160 192; do
    [ $tile -le $rows ] && [ $((rows % tile)) -eq 0 ] || continue
    for rf in 16 32 64 128 256; do
      name=p1_r${rows}_t${tile}_rf${rf}
      printf 'version: 1\nhardware: {rf_kib: %s, sms: 2}\np1:\n  problem: {d_model: 64, heads: 2, d_ff: 128, layers: 1, seqs: 1, rows: %s}\n  row_tile: %s\n  k_chunk: {qkv: 32, wo: 32, w1: 32, w2: 32}\n' \
        "$rf" "$rows" "$tile" >"$tmp/$name.yaml"
      if ! "$gen" "$tmp/$name.yaml" -o "$tmp/$name.asm" 2>"$tmp/err"; then
        # a tile too large for this RF: refused by rf_alloc at the knob that
        # shaped the task (row_tile, line 5) or, for a task shaped by a knob
        # at its default, at the p1 section (line 3)
        if grep -Eq "^$tmp/$name.yaml:(5:3|3:1): error: rf_alloc: " "$tmp/err"; then
          ok "$name (refused by rf_alloc)"
        else
          ko "$name: $(cat "$tmp/err")"
        fi
        continue
      fi
      if "$sim" "$tmp/$name.asm" --seed 7 >"$tmp/out" 2>&1; then
        ok "$name"
      else
        ko "$name: $(grep -E 'error|verdict' "$tmp/out" | head -3)"
      fi
    done
  done
done

echo "corners: $pass passed, $fail failed"
[ $fail -eq 0 ]
