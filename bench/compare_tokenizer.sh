#!/bin/sh
# Side by side in one run: embedscope's GPT-2 tokenizer (1 and 2 threads) vs @dqbd/tiktoken
# (WASM) and gpt-3-encoder under node, on the Brown corpus plain text; plus load time and
# 1 MB of one repeated character. Prints a table with ratios (bench/RESULTS.md "## tokenizer").
#
#   sh bench/compare_tokenizer.sh [BUILD_DIR]      (default: build; needs bin/tokenizer_bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
bin=$build/bin/tokenizer_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --dump-brown "$tmp/brown.txt"
echo "threads available: $(nproc); text: $(wc -c <"$tmp/brown.txt") bytes"
/usr/bin/node "$here/compare_tokenizer.js" "$tmp/brown.txt" 2 >"$tmp/node.json"
"$bin" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json >"$tmp/ours.json" 2>/dev/null
/usr/bin/python3 - "$tmp/ours.json" "$tmp/node.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))
peers = json.load(open(sys.argv[2]))
best = {}
for b in ours["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    best[b["run_name"]] = b
def mbs(name):
    return best[name]["bytes_per_second"] / 1e6
t = peers["tiktoken_wasm"]["mb_per_s"]
g = peers["gpt3_encoder"]["mb_per_s"]
print("%-38s %10s %10s %10s" % ("Brown plain text", "MB/s", "x tiktoken", "x gpt3enc"))
for name, label in [("BM_EncodeBrownLines/real_time", "embedscope, line by line, 1 thread"),
                    ("BM_EncodeBrown/1/real_time", "embedscope, one call, 1 thread"),
                    ("BM_EncodeBrown/2/real_time", "embedscope, one call, 2 threads")]:
    print("%-38s %10.1f %10.1f %10.1f" % (label, mbs(name), mbs(name) / t, mbs(name) / g))
print("%-38s %10.1f %10.1f %10.1f" % ("tiktoken (WASM, node), line by line", t, 1.0, t / g))
print("%-38s %10.1f %10.1f %10.1f" % ("gpt-3-encoder (node), line by line", g, g / t, 1.0))
print("tokens: embedscope %d, tiktoken %d, gpt-3-encoder %d" % (
    best["BM_EncodeBrown/1/real_time"]["tokens"], peers["tiktoken_wasm"]["tokens"],
    peers["gpt3_encoder"]["tokens"]))
load = best["BM_LoadGpt2"]
print("load GPT-2 vocabulary: embedscope %.1f ms (encoder.json + vocab.bpe); node require: "
      "tiktoken %.0f ms, gpt-3-encoder %.0f ms" % (load["real_time"], peers["tiktoken_wasm"]["load_ms"],
                                                   peers["gpt3_encoder"]["load_ms"]))
for arg, label in [("0", "'a'"), ("1", "spaces"), ("2", "digits")]:
    b = best["BM_Encode1MB/" + arg]
    print("1 MB of %-7s %8.1f ms" % (label, b["real_time"]))
PY
