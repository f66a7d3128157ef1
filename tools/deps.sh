#!/bin/sh
# tools/deps.sh [build|all] - install the dependencies on Debian when any is
# missing: `build`, what the commands need to build and run (make, make
# demo); `all` (the default), also what the tests need (make check, make
# fuzz, make bench).  Runs as root (fresh machine, CI) or reports what to
# install otherwise.
set -e
mode=${1:-all}
case $mode in build | all) ;; *) echo "deps: usage: tools/deps.sh [build|all]" >&2; exit 2 ;; esac
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
# make check opens a power plot in headless Chromium (tests/run_plot.sh)
command -v chromium >/dev/null 2>&1 || need="$need chromium"
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
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing:$need (run: apt-get install$need)" >&2
  exit 1
fi
echo "deps: installing$need" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $need >/dev/null
