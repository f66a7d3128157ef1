#!/bin/sh
# tools/deps.sh [build|all|speedscope] - install the dependencies on Debian
# when any is missing: `build`, what the commands need to build and run
# (make, make demo); `all` (the default), also what the tests need (make
# check, make fuzz, make bench), the trace viewer of make trace-check
# included; `speedscope`, that viewer alone.  Runs as root (fresh machine,
# CI) or reports what to install otherwise; the viewer, an npm package,
# installs as any user into NODE_DIR (default build/node).
set -e
mode=${1:-all}
case $mode in build | all | speedscope) ;; *) echo "deps: usage: tools/deps.sh [build|all|speedscope]" >&2; exit 2 ;; esac
# make trace-check opens a trace in speedscope (a static web app the npm
# package ships in dist/) in headless Chromium: this version, into NODE_DIR
SPEEDSCOPE_VERSION=1.25.0
node_dir=${NODE_DIR:-build/node}
speedscope() {
  if grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$node_dir/node_modules/speedscope/package.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "deps: missing: npm, to install speedscope (run: apt-get install npm)" >&2
    exit 1
  fi
  echo "deps: installing speedscope@$SPEEDSCOPE_VERSION into $node_dir" >&2
  mkdir -p "$node_dir"
  npm install --prefix "$node_dir" --no-audit --no-fund --no-save --loglevel=error \
    "speedscope@$SPEEDSCOPE_VERSION" >&2
}
if [ "$mode" = speedscope ]; then
  speedscope
  exit 0
fi
need=""
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v re2c >/dev/null 2>&1 || need="$need re2c"
if command -v pkg-config >/dev/null 2>&1; then
  pkg-config --exists glib-2.0 || need="$need libglib2.0-dev"
  pkg-config --exists yaml-0.1 || need="$need libyaml-dev"
  pkg-config --exists json-glib-1.0 || need="$need libjson-glib-dev"
  # tcc-sim --plot draws with cairo
  pkg-config --exists cairo || need="$need libcairo2-dev"
  pkg-config --exists fontconfig || need="$need libfontconfig-dev"
else
  need="$need libglib2.0-dev libyaml-dev libjson-glib-dev libcairo2-dev libfontconfig-dev"
fi
[ -f /usr/include/glpk.h ] || need="$need libglpk-dev"
# the program hash (SHA-256) comes from OpenSSL's libcrypto
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcrypto; } || need="$need libssl-dev"
if [ "$mode" = all ]; then
# the unit tests are Check suites
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists check; } || need="$need check"
# make check also builds with clang (clang-check), so clang-only warnings fail CI
command -v "${CLANG:-clang}" >/dev/null 2>&1 || need="$need clang"
# make check opens a power plot in headless Chromium (tests/run_plot.sh),
# and a trace in speedscope there (tests/run_trace.sh), installed with npm
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v npm >/dev/null 2>&1 || need="$need npm"
# make fuzz links libFuzzer's runtime (clang -fsanitize=fuzzer)
if command -v "${CLANG:-clang}" >/dev/null 2>&1; then
  [ -f "$("${CLANG:-clang}" -print-file-name=libclang_rt.fuzzer-"$(uname -m)".a)" ] ||
    need="$need libclang-rt-14-dev"
fi
# tcc-diff's command-line tests (make diff-check) read its JSON with jq
command -v jq >/dev/null 2>&1 || need="$need jq"
# make bench measures peak RSS with GNU time
[ -x /usr/bin/time ] || need="$need time"
# make check runs a tcc-sweep through GNU parallel (tests/run_sweep.sh);
# moreutils ships another `parallel`, so ask for GNU's by its --version
parallel --version 2>/dev/null | grep -q '^GNU parallel' || need="$need parallel"
fi
if [ -n "$need" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing:$need (run: apt-get install$need)" >&2
    exit 1
  fi
  echo "deps: installing$need" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $need >/dev/null
fi
[ "$mode" = all ] && speedscope
exit 0
