#!/bin/sh
# Side by side in one run: load_tokenizer() (tokenizer.json) vs Hugging Face tokenizers 0.22.2
# (Rust, npm @anush008/tokenizers under node), single thread, for Llama-3 (byte-level BPE),
# Llama-2 (the @lenml package's Mistral-7B SentencePiece-style BPE with byte fallback) and BERT
# (uncased WordPiece, tokenizer.json written by tests/tokenizer/hf_reference.js): Brown plain
# text line by line, load time, and 1 MB of "a" in one call. Times are CPU time (user + system),
# since the shared box's wall time is mostly its neighbours'. bench/RESULTS.md "## tokenizer.json".
#
#   sh bench/compare_hf_tokenizers.sh [BUILD_DIR] [RUNS]   (needs bin/hf_tokenizer_bench and
#                                                           bin/tokenizer_bench for the text)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
runs=${2:-3}
nm=${EMBEDSCOPE_HOME:-$HOME/.cache/embedscope}/npm/node_modules
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/tokenizer_bench" --dump-brown "$tmp/brown.txt" >/dev/null
/usr/bin/node "$here/../tests/tokenizer/hf_reference.js" bert-json "$tmp/bert.json"
echo "text: $(wc -c <"$tmp/brown.txt") bytes; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-8s %10s %10s %12s %10s\n' model who load_ms MB/s 1MB_a_ms tokens
for m in llama3 llama2 bert; do
  f=$nm/@lenml/tokenizer-$m/models/tokenizer.json
  [ "$m" = bert ] && f=$tmp/bert.json
  ours=$("$build/bin/hf_tokenizer_bench" "$f" "$tmp/brown.txt" "$runs")
  peer=$(TOKENIZERS_PARALLELISM=false /usr/bin/node "$here/compare_hf_tokenizers.js" "$f" \
    "$tmp/brown.txt" "$runs")
  for who in ours peer; do
    eval "j=\$$who"
    echo "$j" | /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print('%-8s %-8s %10.0f %10.2f %12.0f %10d' % ('$m', '$who', j['load_ms'], j['mb_per_s'], j['repeat_1mb_ms'], j['tokens']))"
  done
done
