#!/usr/bin/env bash
# info / model loading benchmark: `embedscope info --model DIR` on a GPT-2-sized folder
# (50257 x 768 F32 wte + 12 transformer layers, ~500 MB) as safetensors and as pytorch_model.bin,
# and `embedscope info` on the 50257 x 768 matrix alone, timed from process start to exit with
# hyperfine (files in page cache after the warmup runs), next to Python's numpy.load and
# torch.load of the same matrix in the same run. Peak RSS: the largest of the command's
# processes (rss() below).
# Targets (issue 3 / 2): < 30 ms safetensors folder, < 60 ms .bin, < 20 ms plain safetensors file.
#
#   bench/bench_info.sh [BUILD_DIR [DATA_DIR]]   # default build-release; prints a RESULTS.md block
# DATA_DIR keeps the generated ~1 GB of files between runs (default: a temporary folder).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-release}"
cli="$build/bin/embedscope"
[ -x "$cli" ] || { echo "build the CLI first: ninja -C $build embedscope_cli" >&2; exit 1; }
if [ -n "${2:-}" ]; then
  work="$2"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
[ -f "$work/wte.pt" ] || /usr/bin/python3 "$root/bench/gen_info_bench.py" "$work"
py=/usr/bin/python3
echo "## info / model loading"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Command: bench/bench_info.sh $build  ($(date -u +%Y-%m-%d)); folder sizes: safetensors $(du -sh "$work/st" | cut -f1), bin $(du -sh "$work/bin" | cut -f1)"
echo
# Page cache emptied for these files, then warmed by one sequential read of each (as a download
# or copy leaves it): on the development VM, pages first brought in by mmap faults were scanned
# 2-4x slower afterwards than pages brought in by read() (bench/RESULTS.md, info section).
files=$(find "$work" -type f \( -name '*.safetensors' -o -name '*.bin' -o -name '*.npy' -o -name '*.pt' \))
/usr/bin/python3 -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' $files
cat $files >/dev/null
hyperfine -N --warmup 3 --runs 20 --export-json "$work/h.json" \
  -n "embedscope info --model <safetensors folder>" "$cli info --model $work/st" \
  -n "embedscope info --model <pytorch_model.bin folder>" "$cli info --model $work/bin" \
  -n "embedscope info wte.safetensors" "$cli info $work/wte.safetensors" \
  -n "python3 numpy.load(wte.npy)" "$py -c \"import numpy; numpy.load('$work/wte.npy')\"" \
  -n "python3 torch.load(wte.pt)" "$py -c \"import torch; torch.load('$work/wte.pt')\"" \
  -n "python3 import torch (no load)" "$py -c 'import torch'" >/dev/null
# Peak RSS of the command and every process it starts, in MiB. The CLI answers from a forked
# child that outlives its parent (core/detach.h), so /usr/bin/time, which waits for the parent
# alone, would report the parent's few MiB: this harness becomes a child subreaper (the orphaned
# child is re-parented to it) and takes the largest ru_maxrss of all it reaps.
rss() {
  $py - "$@" <<'PY'
import ctypes, os, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while True:
    try:
        _, _, ru = os.wait4(-1, 0)
    except ChildProcessError:
        break
    peak = max(peak, ru.ru_maxrss)
print(f"{peak / 1024:.0f}", end="")
PY
}
declare -A peak
peak["embedscope info --model <safetensors folder>"]=$(rss "$cli" info --model "$work/st")
peak["embedscope info --model <pytorch_model.bin folder>"]=$(rss "$cli" info --model "$work/bin")
peak["embedscope info wte.safetensors"]=$(rss "$cli" info "$work/wte.safetensors")
peak["python3 numpy.load(wte.npy)"]=$(rss $py -c "import numpy; numpy.load('$work/wte.npy')")
peak["python3 torch.load(wte.pt)"]=$(rss $py -c "import torch; torch.load('$work/wte.pt')")
peak["python3 import torch (no load)"]=$(rss $py -c "import torch")
echo "| command | median ms | min ms | peak RSS MiB |"
echo "|---|---|---|---|"
$py - "$work/h.json" <<'PY' | while IFS=$'\t' read -r name med mn; do echo "| $name | $med | $mn | ${peak[$name]} |"; done
import json, sys
for r in json.load(open(sys.argv[1]))['results']:
    print('%s\t%.1f\t%.1f' % (r['command'], r['median'] * 1000, r['min'] * 1000))
PY
echo
echo "Load phase as reported by info (load_ms, median of 5):"
for d in st bin; do
  for i in 1 2 3 4 5; do "$cli" info --model "$work/$d" --json | $py -c 'import json,sys; print(json.load(sys.stdin)["load_ms"])'; done |
    sort -n | sed -n 3p | xargs printf "  %s: %.1f ms\n" "$d"
done
