#!/usr/bin/env bash
# Builds and runs every test: the release build, then the dev build (Debug + ASan + UBSan).
# Tests generate their fixtures at test time with the real tools (numpy, torch, gensim, fasttext,
# node reference tokenizers) that scripts/setup.sh installs.
#   ES_SANITIZE=0 scripts/test.sh   # release only
set -euo pipefail
# CI may run without $HOME; the cache folder must be the same one the binaries use.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
cd "$(dirname "$0")/.."
jobs="${ES_JOBS:-$(nproc)}"
scripts/build.sh
ctest --preset release -j "$jobs"
if [[ "${ES_SANITIZE:-1}" == 1 ]]; then
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs"
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset dev -j "$jobs"
fi
