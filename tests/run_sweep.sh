#!/bin/sh
# tests/run_sweep.sh [BUILD] - tcc-sweep end to end on tests/sweep/tiny.yaml
# (a plan whose grade takes a fraction of a second):
#  - 4 variants (d1.store_spacing x hardware.sms) written as job plans
#    through the YAML document API, run by real GNU parallel from the
#    printed command line (--joblog, --resume), then by the local thread
#    pool in another directory: --collect gives the same table from both;
#  - a re-run skips every finished job (and parallel --resume runs none);
#    a progress bar on a terminal only;
#    a deleted result is graded again, alone;
#  - GNU parallel --sshlogin 2/: (this machine named as an sshlogin; no ssh);
#  - the Slurm array script runs the job line of its task;
#  - a failing variant (over the area), a variant that does not compile
#    (status error, the grader's message), --collect --format json;
#  - bad input: --set syntax, a mistyped key (the plan loader's
#    did-you-mean, against the job plan), a path through a value, usage.
# GNU parallel (Debian's parallel; tools/deps.sh installs it) is required.
. "$(dirname "$0")/lib.sh"
sweep=$build/tcc-sweep
tiny=tests/sweep/tiny.yaml
sets="--set d1.store_spacing=0,16 --set hardware.sms=8,16"

if ! command -v parallel >/dev/null 2>&1; then
  ko "GNU parallel is missing (apt-get install parallel; tools/deps.sh does it)"
  echo "sweep: $pass passed, $fail failed"
  exit 1
fi

# ---- expansion, GNU parallel
par=$tmp/par
"$sweep" "$tiny" $sets -o "$par" --emit-parallel >"$tmp/out" 2>"$tmp/err"
code=$?
cmd=$(grep '^parallel ' "$tmp/out")
if [ $code -eq 0 ] && [ ! -s "$tmp/err" ] &&
  [ "$cmd" = "parallel --will-cite --joblog '$par/joblog' --resume -a '$par/jobs.txt'" ] &&
  [ "$(wc -l <"$par/jobs.txt")" -eq 4 ] && [ "$(ls "$par/jobs" | wc -l)" -eq 4 ] &&
  [ "$(ls "$par/results" | wc -l)" -eq 0 ]; then
  ok "--emit-parallel: 4 job plans, jobs.txt, the parallel command"
else
  ko "--emit-parallel (exit $code)"
  cat "$tmp/out" "$tmp/err"
fi
# the job plans: readable stable names, the keys set, the rest kept
j=$(ls "$par/jobs" | grep '^store_spacing-16_sms-8-[0-9a-f]\{8\}\.yaml$')
if [ -n "$j" ] && grep -q '^  store_spacing: 16$' "$par/jobs/$j" && grep -q '^  sms: 8$' "$par/jobs/$j" &&
  grep -q '^  problem: {d_model: 32, heads: 1, d_ff: 64, layers: 1, history: 32, steps: 2}$' "$par/jobs/$j" &&
  head -n 1 "$par/jobs/$j" | grep -q "^# tcc-sweep job: $tiny with d1.store_spacing=16, hardware.sms=8$"; then
  ok "job plan $j: the keys set, flow mappings kept"
else
  ko "job plan store_spacing-16_sms-8"
  ls "$par/jobs"
fi
eval "$cmd" </dev/null >"$tmp/plog" 2>&1
code=$?
if [ $code -eq 0 ] && [ "$(ls "$par/results" | wc -l)" -eq 4 ] && [ "$(grep -c 'run-job' "$par/joblog")" -eq 4 ] &&
  [ "$(awk 'NR > 1 && $7 != 0' "$par/joblog" | wc -l)" -eq 0 ]; then
  ok "GNU parallel ran the 4 jobs (joblog: 4 lines, exit 0)"
else
  ko "GNU parallel (exit $code)"
  cat "$tmp/plog" "$par/joblog"
fi
"$sweep" --collect "$par" >"$tmp/par.csv" 2>"$tmp/err"
code=$?
if [ $code -eq 0 ] && [ "$(sed -n 1p "$tmp/par.csv")" = "d1.store_spacing,hardware.sms,name,status,p1_status,p1_cycles,p1_peak_w,d1_status,d1_cycles,d1_peak_w,area_mm2,score,error" ] &&
  [ "$(grep -c '^[0-9]*,[0-9]*,[^,]*,pass,pass,[0-9]*,[0-9.]*,pass,[0-9]*,[0-9.]*,[0-9.]*,,$' "$tmp/par.csv")" -eq 4 ] &&
  [ "$(cut -d, -f1,2 "$tmp/par.csv" | tr '\n' ' ')" = "d1.store_spacing,hardware.sms 0,8 0,16 16,8 16,16 " ] &&
  [ "$(cat "$tmp/err")" = "tcc-sweep: 4 variants, 4 passing, 0 failing, in error or without a result" ]; then
  ok "--collect: one row per variant in order, the swept keys then the metrics"
else
  ko "--collect (exit $code)"
  cat "$tmp/par.csv" "$tmp/err"
fi
# store_spacing spaces D1's stores: its cycles grow with it, P1's do not move
if awk -F, 'NR > 1 { d1[$1 "," $2] = $9; p1[$1 "," $2] = $6 }
  END { exit !(d1["16,8"] > d1["0,8"] && d1["16,16"] > d1["0,16"] && p1["16,8"] == p1["0,8"]) }' "$tmp/par.csv"; then
  ok "the metrics follow the knob (d1.store_spacing 16 slows D1, not P1)"
else
  ko "the metrics follow the knob"
fi
# parallel --resume: nothing runs again
eval "$cmd" </dev/null >"$tmp/plog" 2>&1
[ $? -eq 0 ] && [ "$(grep -c 'run-job' "$par/joblog")" -eq 4 ] && [ ! -s "$tmp/plog" ] &&
  ok "parallel --resume runs no finished job" || { ko "parallel --resume"; cat "$tmp/plog"; }

# --sshlogin, as several machines would use it: ":" is this machine
ssh=$tmp/ssh
"$sweep" "$tiny" --set hardware.sms=8,16 -o "$ssh" --emit-parallel >"$tmp/out" 2>&1
cmd2=$(grep '^parallel ' "$tmp/out")
eval "$cmd2 --sshlogin 2/:" </dev/null >"$tmp/plog" 2>&1
code=$?
if [ $code -eq 0 ] && [ "$(awk 'NR > 1 && $2 == ":" && $7 == 0' "$ssh/joblog" | wc -l)" -eq 2 ] &&
  "$sweep" --collect "$ssh" >/dev/null 2>&1; then
  ok "GNU parallel --sshlogin 2/: (this machine named as an sshlogin) runs the job lines"
else
  ko "GNU parallel --sshlogin (exit $code)"
  cat "$tmp/plog" "$ssh/joblog"
fi

# ---- the local thread pool: the same table
loc=$tmp/loc
"$sweep" "$tiny" $sets -o "$loc" --jobs 2 >"$tmp/out" 2>"$tmp/err"
code=$?
grep -q '^tcc-sweep: 4 jobs in .*: 4 graded, 0 skipped (result exists); 4 passing, 0 not$' "$tmp/out" && [ $code -eq 0 ] &&
  ok "--jobs 2: 4 graded here" || { ko "--jobs 2 (exit $code)"; cat "$tmp/out" "$tmp/err"; }
"$sweep" --collect "$loc" >"$tmp/loc.csv" 2>/dev/null
cmp -s "$tmp/par.csv" "$tmp/loc.csv" && ok "local and GNU parallel: the same table" ||
  { ko "local and GNU parallel: the same table"; diff "$tmp/par.csv" "$tmp/loc.csv"; }
cmp -s "$par/jobs.txt" "$loc/jobs.txt" && ko "jobs.txt names its own directory" || ok "jobs.txt names its own directory"
ls "$loc/results" >"$tmp/names.loc"
ls "$par/results" >"$tmp/names.par"
cmp -s "$tmp/names.loc" "$tmp/names.par" && ok "the same job names from the same template and settings" ||
  ko "the same job names"
# a re-run skips what is done; a lost result is graded again, alone
cp -p "$loc/results/$(sed -n 1p "$tmp/names.loc")" "$tmp/kept.json"
"$sweep" "$tiny" $sets -o "$loc" >"$tmp/out" 2>&1
grep -q ': 0 graded, 4 skipped (result exists); 4 passing, 0 not$' "$tmp/out" &&
  cmp -s "$tmp/kept.json" "$loc/results/$(sed -n 1p "$tmp/names.loc")" &&
  ok "re-run: every job skipped, results untouched" || { ko "re-run skips"; cat "$tmp/out"; }
rm "$loc/results/$(sed -n 2p "$tmp/names.loc")"
"$sweep" "$tiny" $sets -o "$loc" >"$tmp/out" 2>&1
grep -q ': 1 graded, 3 skipped (result exists); 4 passing, 0 not$' "$tmp/out" &&
  ok "re-run after a lost result: 1 graded, 3 skipped" || { ko "re-run after a lost result"; cat "$tmp/out"; }
"$sweep" --collect "$loc" >"$tmp/loc2.csv" 2>/dev/null
cmp -s "$tmp/par.csv" "$tmp/loc2.csv" && ok "the regraded result is the same" || ko "the regraded result is the same"

# a progress bar on a terminal (script(1) gives a pseudo-terminal), none when piped
script -qec "$sweep $tiny --set hardware.sms=8,12 -o $tmp/tty" /dev/null >"$tmp/tty.out" 2>&1 </dev/null
"$sweep" "$tiny" --set hardware.sms=8,12 -o "$tmp/pipe" >"$tmp/out" 2>"$tmp/err"
grep -q 'tcc-sweep \[#* *\] [0-9]*/[0-9]* jobs, [0-9]*:[0-9][0-9], ETA [-0-9:]*' "$tmp/tty.out" && [ ! -s "$tmp/err" ] && ! grep -q 'tcc-sweep \[' "$tmp/out" &&
  ok "a progress bar on a TTY, none when piped" || { ko "the progress bar"; cat "$tmp/tty.out" "$tmp/err"; }

# ---- Slurm: the array script runs the job line of its task
slu=$tmp/slu
"$sweep" "$tiny" $sets -o "$slu" --emit-slurm >"$tmp/out" 2>&1
grep -q "^sbatch '$slu/sweep.slurm'$" "$tmp/out" && grep -q '^#SBATCH --array=0-3$' "$slu/sweep.slurm" &&
  ok "--emit-slurm: sweep.slurm with --array=0-3" || { ko "--emit-slurm"; cat "$tmp/out"; }
SLURM_ARRAY_TASK_ID=2 sh "$slu/sweep.slurm" >"$tmp/out" 2>&1
code=$?
third=$(sed -n 3p "$slu/jobs.txt" | sed "s/.*--run-job '\([^']*\)'.*/\1/")
if [ $code -eq 0 ] && [ "$(ls "$slu/results")" = "$third.json" ] && grep -q "^$third: pass$" "$tmp/out"; then
  ok "task 2 runs job line 3 ($third)"
else
  ko "the Slurm task (exit $code)"
  cat "$tmp/out"
fi
SLURM_ARRAY_TASK_ID=4 sh "$slu/sweep.slurm" >"$tmp/out" 2>&1
[ $? -eq 2 ] && ok "a task past the last job line -> 2" || ko "a task past the last job line"
"$sweep" --collect "$slu" >"$tmp/out" 2>/dev/null
code=$?
[ $code -eq 1 ] && [ "$(grep -c ',missing,.*,no result yet$' "$tmp/out")" -eq 3 ] &&
  ok "--collect of an unfinished sweep -> 1, 3 rows missing" || { ko "--collect unfinished (exit $code)"; cat "$tmp/out"; }

# ---- hostile names: the job lines and the Slurm script, run as the engines
# run them, execute nothing but the jobs
# run_jobs DIR: whatever job list and Slurm script DIR holds, run as GNU
# parallel (-a, no command), sh -c line by line and a Slurm task (bash) do
run_jobs() {
  [ -f "$1/jobs.txt" ] || return 0
  parallel --will-cite -a "$1/jobs.txt" </dev/null >/dev/null 2>&1
  while IFS= read -r line; do sh -c "$line" </dev/null >/dev/null 2>&1; done <"$1/jobs.txt"
  [ -f "$1/sweep.slurm" ] && SLURM_ARRAY_TASK_ID=0 bash "$1/sweep.slurm" </dev/null >/dev/null 2>&1
  return 0
}
# a name with a line break cannot go on a job line: refused, nothing made
nl_dir="$tmp/nl
touch $tmp/PWNED-dir #"
"$sweep" "$tiny" --set hardware.sms=8,16 -o "$nl_dir" --emit-parallel --emit-slurm >"$tmp/out" 2>"$tmp/err"
code=$?
expect "-o DIR with a newline -> 2, one line" 2 "tcc-sweep: error: -o '$tmp/nl\\ntouch $tmp/PWNED-dir #': a name with a control character cannot go on a job line (rename it)"
[ ! -e "$nl_dir" ] && [ ! -e "$tmp/nl" ] && ok "-o DIR with a newline: no directory made" || ko "-o DIR with a newline made a directory"
run_jobs "$nl_dir"
"$sweep" "$tiny" --set hardware.sms=8,16 -o "$tmp/nlg" --grade "$build/tcc-grade
touch $tmp/PWNED-grade" --emit-parallel --emit-slurm >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--grade with a newline -> 2, one line" 2 "tcc-sweep: error: --grade '$build/tcc-grade\\ntouch $tmp/PWNED-grade': a name with a control character cannot go on a job line (rename it)"
run_jobs "$tmp/nlg"
"$sweep" "$tiny" --set hardware.sms=8,16 -o "$tmp/back\\slash" --emit-slurm >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--emit-slurm into a DIR with a backslash -> 2, one line" 2 "tcc-sweep: error: -o '$tmp/back\\slash': a Slurm log path cannot hold a backslash (Slurm would leave %A and %a unreplaced; rename it)"
# shell and Slurm metacharacters without a line break: quoted, the jobs run
odd="$tmp/o d'd \$(touch $tmp/PWNED-a) \`touch $tmp/PWNED-b\` ;touch $tmp/PWNED-c #%A\"x"
"$sweep" "$tiny" --set hardware.sms=8,16 -o "$odd" --grade "$build/tcc-grade" --emit-parallel --emit-slurm >"$tmp/out" 2>"$tmp/err"
code=$?
cmd=$(grep '^parallel ' "$tmp/out")
[ $code -eq 0 ] && [ "$(wc -l <"$odd/jobs.txt")" -eq 2 ] &&
  [ "$(grep -c '^#SBATCH' "$odd/sweep.slurm")" -eq 3 ] &&
  grep -qF "#SBATCH --output=\"$tmp/o d\\'d \$(touch $tmp/PWNED-a) \`touch $tmp/PWNED-b\` ;touch $tmp/PWNED-c \\#%%A\\\"x/slurm/%A_%a.out\"" "$odd/sweep.slurm" &&
  ok "a DIR of shell and Slurm metacharacters: 2 job lines, the #SBATCH path quoted for sbatch" ||
  { ko "a DIR of metacharacters (exit $code)"; cat "$tmp/err" "$odd/jobs.txt" "$odd/sweep.slurm"; }
eval "$cmd" </dev/null >"$tmp/plog" 2>&1
code=$?
[ $code -eq 0 ] && [ "$(ls "$odd/results" | wc -l)" -eq 2 ] && ok "GNU parallel ran the 2 quoted job lines" ||
  { ko "GNU parallel on the quoted job lines (exit $code)"; cat "$tmp/plog"; }
rm -f "$odd"/results/*
SLURM_ARRAY_TASK_ID=1 bash "$odd/sweep.slurm" >"$tmp/out" 2>&1
code=$?
[ $code -eq 0 ] && [ "$(ls "$odd/results" | wc -l)" -eq 1 ] && ok "the Slurm task (bash) ran its quoted job line" ||
  { ko "the Slurm task on the quoted job lines (exit $code)"; cat "$tmp/out"; }
rm -f "$odd"/results/*
run_jobs "$odd"
ls "$tmp"/PWNED* >/dev/null 2>&1 && { ko "an injected command ran"; ls "$tmp"/PWNED*; } ||
  ok "no injected command ran (parallel, sh -c, the Slurm task)"
# a template named with a line break and YAML after it: the job plans'
# header comment escapes it, so the plans hold no key of the name
grep -v '^hardware:\|^  sms:' "$tiny" >"$tmp/nohw.yaml"
nl_tpl="$tmp/t
hardware: {sms: 8}
#.yaml"
cp "$tmp/nohw.yaml" "$nl_tpl"
"$sweep" "$nl_tpl" --set d1.store_spacing=0,16 -o "$tmp/tpl" --emit-parallel >"$tmp/out" 2>"$tmp/err"
code=$?
j=$(ls "$tmp/tpl/jobs" | head -n 1)
[ $code -eq 0 ] && [ "$(sed -n 1p "$tmp/tpl/jobs/$j")" = "# tcc-sweep job: $tmp/t\\nhardware: {sms: 8}\\n#.yaml with d1.store_spacing=0" ] &&
  ! grep -q '^hardware' "$tmp/tpl/jobs/$j" &&
  ok "a template name with a line break: escaped in the job plans' header, no key added" ||
  { ko "a template name with a line break (exit $code)"; cat "$tmp/err"; head -n 4 "$tmp/tpl/jobs/$j"; }
u2028=$(printf '\342\200\250')
u_tpl="$tmp/u${u2028}hardware: {sms: 8}${u2028}#.yaml"
cp "$tmp/nohw.yaml" "$u_tpl"
"$sweep" "$u_tpl" --set d1.store_spacing=0,16 -o "$tmp/tplu" --emit-parallel >"$tmp/out" 2>"$tmp/err"
code=$?
j=$(ls "$tmp/tplu/jobs" | head -n 1)
[ $code -eq 0 ] && [ "$(sed -n 1p "$tmp/tplu/jobs/$j")" = "# tcc-sweep job: $tmp/u\\u2028hardware: {sms: 8}\\u2028#.yaml with d1.store_spacing=0" ] &&
  ok "a template name with U+2028 (a YAML line break): escaped" ||
  { ko "a template name with U+2028 (exit $code)"; cat "$tmp/err"; head -n 2 "$tmp/tplu/jobs/$j"; }

# ---- failing and broken variants; JSON
bad=$tmp/bad
# TCC_STRICT=1: the tcc-grade jobs refuse what they would fall back from
# (resident weights with 4 KiB of RF left on one SM)
TCC_STRICT=1 "$sweep" "$tiny" --set hardware.sms=16,24 --set d1.rf_temp_kib=16,60 --set d1.weights=resident \
  --set d1.sms_used=1 -o "$bad" --jobs 2 >"$tmp/out" 2>&1
code=$?
"$sweep" --collect "$bad" >"$tmp/bad.csv" 2>/dev/null
if [ $code -eq 1 ] && grep -q '^16,16,resident,1,[^,]*,pass,' "$tmp/bad.csv" &&
  grep -q '^24,16,resident,1,[^,]*,area,area,[0-9]*,[0-9.]*,area,[0-9]*,[0-9.]*,[0-9.]*,,$' "$tmp/bad.csv" &&
  grep -q '^16,60,resident,1,[^,]*,refused,,,,,,,,,"jobs/[^"]*: error: weights: resident: .*"$' "$tmp/bad.csv"; then
  ok "over the area -> area; does not compile -> refused with the grader's message; exit 1"
else
  ko "failing and broken variants (exit $code)"
  cat "$tmp/out" "$tmp/bad.csv"
fi
"$sweep" --collect "$bad" --format json >"$tmp/bad.json" 2>/dev/null
[ $? -eq 1 ] && [ "$(grep -c '"status" : "pass"' "$tmp/bad.json")" -eq 1 ] &&
  [ "$(grep -c '"status" : "area"' "$tmp/bad.json")" -eq 1 ] &&
  [ "$(grep -c '"status" : "refused"' "$tmp/bad.json")" -eq 2 ] && grep -q '"hardware.sms" : 24,' "$tmp/bad.json" &&
  grep -q '"schema_version" : 1,' "$tmp/bad.json" && grep -q '"area_mm2" : [0-9.]*,' "$tmp/bad.json" &&
  grep -q '"p1_cycles" : [0-9]*,' "$tmp/bad.json" && grep -q '"score" : null,' "$tmp/bad.json" &&
  ok "--collect --format json: typed rows" || { ko "--collect --format json"; cat "$tmp/bad.json"; }
# a template given through a FIFO: read once (its text is what the variants edit)
mkfifo "$tmp/fifo.yaml"
timeout 60 cp "$tiny" "$tmp/fifo.yaml" &
timeout 120 "$sweep" "$tmp/fifo.yaml" --set d1.store_spacing=0,4 -o "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
code=$?
wait
[ $code -eq 0 ] && [ "$(ls "$tmp/fifo/results" | wc -l)" -eq 2 ] && grep -q "store_spacing: 4" "$tmp"/fifo/jobs/*.yaml &&
  ok "a template read from a FIFO: expanded and graded" || { ko "a template read from a FIFO (exit $code)"; cat "$tmp/err"; }
# a template whose name is not UTF-8: sweep.json and --collect's JSON stay
# valid UTF-8 (the name escaped as diagnostics echo it, \xFF)
nu="$tmp/$(printf 'bad\377.yaml')"
cp "$tiny" "$nu"
"$sweep" "$nu" --set d1.store_spacing=0,4 -o "$tmp/nu" >/dev/null 2>&1 &&
  "$sweep" --collect "$tmp/nu" --format json >"$tmp/nu.json" 2>/dev/null &&
  iconv -f UTF-8 -t UTF-8 "$tmp/nu/sweep.json" >/dev/null 2>&1 && iconv -f UTF-8 -t UTF-8 "$tmp/nu.json" >/dev/null 2>&1 &&
  grep -qF '"template" : "'"$tmp"'/bad\\xff.yaml",' "$tmp/nu/sweep.json" &&
  ok "a template named with a byte that is not UTF-8: sweep.json and --collect's JSON are UTF-8" ||
  { ko "a template named with a byte that is not UTF-8"; grep template "$tmp/nu/sweep.json"; }

# ---- bad input
"$sweep" "$tiny" --set d1.store_spacing -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--set without values" 2 "tcc-sweep: error: --set d1.store_spacing: expected KEY.PATH=V1,V2,..."
"$sweep" "$tiny" --set d1.store_spacing= -o "$tmp/none" --emit-slurm >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--set KEY= (no values): not a sweep of 0 variants" 2 "tcc-sweep: error: --set d1.store_spacing=: no values after '=' (expected V1,V2,...)"
[ ! -e "$tmp/none" ] && ok "--set KEY=: no sweep directory, no Slurm array of 0 jobs" ||
  { ko "--set KEY= left $tmp/none"; cat "$tmp/none/sweep.slurm"; }
"$sweep" "$tiny" --set 'd1.store_spacing=0,1
2' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a value with a newline: one line, the newline escaped" 2 "tcc-sweep: error: --set d1.store_spacing=0,1\\n2: value 2 ('1\\n2') is not a plain YAML scalar"
"$sweep" "$tiny" --set 'd1.store_spacing=0,0' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a value twice" 2 "tcc-sweep: error: --set d1.store_spacing=0,0: value '0' is given twice"
"$sweep" "$tiny" --set 'd1.store_spacing=0' --set 'd1.store_spacing=16' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a key twice" 2 "tcc-sweep: error: --set d1.store_spacing: the key is set twice"
"$sweep" "$tiny" --set 'd1.store_spacing.x=1' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a path through a value" 2 "tcc-sweep: error: --set d1.store_spacing.x: 'd1.store_spacing' is not a mapping in the template"
"$sweep" "$tiny" --set 'd1.problem=1' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a value over a mapping" 2 "tcc-sweep: error: --set d1.problem: the template has a mapping there, not a value (set its keys)"
"$sweep" "$tiny" --set 'd1.store_spacng=0,16' -o "$tmp/typo" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a mistyped key: the plan loader's did-you-mean, said as the --set" 2 "tcc-sweep: error: --set d1.store_spacng=0: unknown key 'store_spacng' in d1; did you mean 'store_spacing'?"
[ ! -e "$tmp/typo" ] && ok "a mistyped key leaves no sweep directory" || ko "a mistyped key left $tmp/typo"
"$sweep" "$tiny" --set 'hardware.sms=0' -o "$tmp/range" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a value out of range -> 2, said as the --set" 2 "tcc-sweep: error: --set hardware.sms=0: hardware.sms: sms=0 out of range 1..64 (streaming multiprocessors)"
"$sweep" "$tmp/missing.yaml" --set 'hardware.sms=8' -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a missing template" 2 "$tmp/missing.yaml:1:1: error: cannot read plan: No such file or directory"
"$sweep" "$tiny" --set 'hardware.sms=8' >"$tmp/out" 2>"$tmp/err"
code=$?
expect "no -o" 2 "tcc-sweep: error: -o DIR is required: where the jobs and results go"
"$sweep" --collect "$tmp/nowhere" >"$tmp/out" 2>"$tmp/err"
code=$?
[ $code -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "^$tmp/nowhere/sweep.json: error: .*(not a tcc-sweep directory?)\$" "$tmp/err" &&
  ok "--collect of no sweep -> 2, file: error:" || { ko "--collect of no sweep (exit $code)"; cat "$tmp/err"; }
# a manifest that is an endless device: read up to the 256 MiB limit, not whole
mkdir -p "$tmp/zero" && ln -s /dev/zero "$tmp/zero/sweep.json"
timeout 120 "$sweep" --collect "$tmp/zero" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--collect: an endless sweep.json -> 2 at the 256 MiB limit" 2 "$tmp/zero/sweep.json: error: larger than the limit of 268435456 bytes (not a tcc-sweep directory?)"
"$sweep" --run-job nosuch "$par" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--run-job of an unknown job" 2 "tcc-sweep: error: $par: no job 'nosuch' in this sweep"
"$sweep" --collect "$par" --format xml >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--format xml" 2 "tcc-sweep: error: --format must be csv or json, got 'xml'"
"$sweep" "$tiny" --set hardware.sms=8 -o "$tmp/x" --jobs 2 --emit-parallel >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--jobs with --emit-parallel" 2 "tcc-sweep: error: --jobs runs the sweep here: not with --emit-*"
# a job plan of a sweep used as the template of a sweep into the same DIR
# that would write that very job: refused before anything is written, the
# plan untouched (docs/tools.md, "Output files")
j=$(ls "$par/jobs" | grep '^store_spacing-16_sms-8-[0-9a-f]\{8\}\.yaml$')
cp "$par/jobs/$j" "$tmp/job.orig"
cp "$par/jobs.txt" "$tmp/jobs.orig"
"$sweep" "$par/jobs/$j" --set d1.store_spacing=16 --set hardware.sms=8 -o "$par" --emit-parallel >"$tmp/out" 2>"$tmp/err"
code=$?
expect "a job plan as the template of the sweep that writes it -> 2" 2 \
  "tcc-sweep: error: -o DIR: $par/jobs/$j is the template itself; give another -o DIR"
cmp -s "$tmp/job.orig" "$par/jobs/$j" && cmp -s "$tmp/jobs.orig" "$par/jobs.txt" &&
  ok "... the template and the sweep's job list untouched" || ko "... the template and the sweep's job list untouched"
# --problem d1: each job grades D1 alone (the manifest keeps it), P1's
# columns stay empty
"$sweep" "$tiny" --set d1.store_spacing=0,8 --problem d1 -o "$tmp/pd1" --jobs 2 --no-progress >"$tmp/out" 2>"$tmp/err"
code=$?
"$sweep" --collect "$tmp/pd1" >"$tmp/col" 2>/dev/null
if [ $code -eq 0 ] && grep -q '"problem" : "d1"' "$tmp/pd1/sweep.json" &&
  [ "$(grep -c '^[08],store_spacing-[08]-[0-9a-f]*,pass,,,,pass,[0-9]*,[0-9.]*,[0-9.]*,,$' "$tmp/col")" -eq 2 ]; then
  ok "--problem d1: D1 graded alone, P1's columns empty"
else
  ko "--problem d1 (exit $code)"; cat "$tmp/err" "$tmp/col"
fi
"$sweep" "$tiny" --set d1.store_spacing=0,8 --problem x1 -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
code=$?
expect "--problem x1" 2 "tcc-sweep: error: --problem must be p1 or d1, got 'x1'"
"$sweep" --help | grep -q -- '--emit-parallel' && ok "--help" || ko "--help"
"$sweep" --version | grep -q '^tcc-sweep ' && ok "--version" || ko "--version"

# standard output on a full device: an error, not a lost table (and no
# summary of it on stderr), nor lost job commands
expect_full "--collect on /dev/full -> 2, one line" tcc-sweep "$sweep" --collect "$par"
expect_full "--emit-parallel on /dev/full -> 2, one line" tcc-sweep "$sweep" "$tiny" --set d1.store_spacing=0,8 --emit-parallel -o "$tmp/full"

echo "sweep: $pass passed, $fail failed"
[ $fail -eq 0 ]
