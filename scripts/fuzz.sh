#!/usr/bin/env bash
# Runs libFuzzer sessions over every parser (fuzz/fuzz_<name>.cpp), one target after another.
# Builds the `fuzz` preset (clang, ASan + UBSan + libFuzzer; scripts/setup.sh installs clang and
# its runtime). Each target starts from the seeds in fuzz/corpus/fuzz_<name>/ plus, when the
# release build's tests have run, the generated corpus in build/fuzz_corpus/fuzz_<name>/; what a
# session learns is kept in build-fuzz/corpus/<name>/ for the next run. A crashing input is
# written to build-fuzz/artifacts/<name>/ and the script exits 1 at the end: fix the bug, then
# keep the input as fuzz/corpus/fuzz_<name>/regress-<what> so ctest replays it from then on.
#
#   scripts/fuzz.sh                   # every target, 60 s each
#   scripts/fuzz.sh 600 gguf pytorch  # two targets, 10 minutes each
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]  (e.g. scripts/fuzz.sh 600 gguf)" >&2
  exit 2
fi
if (($# > 0)); then
  targets=("$@")
else
  targets=()
  for f in fuzz/fuzz_*.cpp; do
    n=${f#fuzz/fuzz_}
    targets+=("${n%.cpp}")
  done
fi
for t in "${targets[@]}"; do
  [[ -f fuzz/fuzz_$t.cpp ]] || { echo "fuzz.sh: no target '$t' (fuzz/fuzz_$t.cpp)" >&2; exit 2; }
done

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "${ES_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

crashed=()
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t
  art=build-fuzz/artifacts/$t
  mkdir -p "$work" "$art"
  seeds=()
  for d in fuzz/corpus/fuzz_$t build/fuzz_corpus/fuzz_$t; do
    [[ -d $d ]] && seeds+=("$d")
  done
  if ((${#seeds[@]} == 0)); then
    # This target's seeds are generated (fuzz/corpus_<name>.cpp) by the release build's tests.
    echo "fuzz.sh: $t has no seeds yet (run scripts/test.sh once to generate build/fuzz_corpus/);" \
      "starting from what build-fuzz/corpus/$t holds" >&2
  fi
  log=build-fuzz/fuzz_$t.log
  echo "fuzz.sh: $t for ${seconds}s (log: $log)" >&2
  if build-fuzz/bin/fuzz_$t -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$art/" "$work" ${seeds[@]+"${seeds[@]}"} >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$log" | tr '\n' ' ' >&2
    echo >&2
  else
    crashed+=("$t")
    echo "fuzz.sh: $t FAILED; input(s) in $art/, report at the end of $log" >&2
  fi
done
if ((${#crashed[@]} > 0)); then
  echo "fuzz.sh: crashes in: ${crashed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s), ${seconds}s each, no crash" >&2
