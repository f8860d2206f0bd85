#!/usr/bin/env bash
# Builds and runs every test: the release build (after scripts/lint.sh: clang-format and
# clang-tidy), then the dev build (Debug + ASan + UBSan).
# Tests generate their fixtures at test time with the real tools (numpy, torch, gensim, fasttext,
# node reference tokenizers) that scripts/setup.sh installs.
# Then ThreadSanitizer over the concurrency tests: the model handle, the api operations, the
# thread pool, search and the HTTP server (its binary built with TSan, under load and SIGTERM).
# The trainer's Hogwild updates are deliberate races and are not run under TSan (see
# train/word2vec.h).
#   ES_SANITIZE=0 scripts/test.sh   # release only
#   ES_TSAN=0 scripts/test.sh       # skip the TSan pass
set -euo pipefail
# CI may run without $HOME; the cache folder must be the same one the binaries use.
export HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
cd "$(dirname "$0")/.."
jobs="${ES_JOBS:-$(nproc)}"
scripts/build.sh
# Format (.clang-format) and the .clang-tidy checks, before the tests: cheap, and a failure here
# names the file and line.
scripts/lint.sh --tidy
ctest --preset release -j "$jobs"
if [[ "${ES_SANITIZE:-1}" == 1 ]]; then
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs"
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset dev -j "$jobs"
fi
if [[ "${ES_TSAN:-1}" == 1 ]]; then
  cmake --preset tsan >/dev/null
  tsan_targets=(core_test handle_test api_test search_test server_test embedscope_cli embedscope_server)
  cmake --build --preset tsan -j "$jobs" --target "${tsan_targets[@]}"
  # tests/tsan.supp: the third-party reports that were read and judged (hnswlib, cpp-httplib).
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
    ctest --preset tsan -j "$jobs" -R '^(ThreadPool|ModelHandle|Api|Searcher|Hnsw|Serve)'
fi
