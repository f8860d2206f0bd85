#!/usr/bin/env bash
# embedscope serve under load, side by side with the batch CLI over the same queries:
#   wrk (loopback, 64 connections, 30 s by default) POSTing single-word /v1/neighbors queries to
#   `embedscope serve` on a 50257 x 768 float32 table, vs `embedscope neighbors --batch` over the
#   same query file, same k and search threads. Reports requests/s, p50/p90/p99, non-2xx, socket
#   errors, the ratio server/batch, and the server's RSS after each of RUNS runs (a leak shows
#   as growth). The table is written with numpy (GPT-2-shaped, so queries may be GPT-2 words).
#
#   bench/server_bench.sh [BUILD_DIR]      env: DURATION=30 CONNS=64 WRK_THREADS=4 THREADS=(cores)
#                                               K=10 N_QUERIES=2000 RUNS=3
set -euo pipefail
BUILD=${1:-build}
CLI=$BUILD/bin/embedscope
DURATION=${DURATION:-30}; CONNS=${CONNS:-64}; WRK_THREADS=${WRK_THREADS:-4}
THREADS=${THREADS:-$(nproc)}; K=${K:-10}; N_QUERIES=${N_QUERIES:-2000}; RUNS=${RUNS:-3}
WORK=${WORK:-${TMPDIR:-/tmp}/es_server_bench}
mkdir -p "$WORK"
command -v wrk >/dev/null || { echo "wrk not found: scripts/setup.sh installs it" >&2; exit 1; }

TABLE=$WORK/gpt2_768.safetensors
if [ ! -f "$TABLE" ]; then
  /usr/bin/python3 - "$TABLE" "$WORK/queries.txt" "$N_QUERIES" <<'PY'
import json, struct, sys, numpy as np
out, qfile, n_q = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(0)
W = (rng.standard_normal((50257, 768)) * 0.02).astype(np.float32)
raw = W.tobytes()
hdr = json.dumps({"wte.weight": {"dtype": "F32", "shape": list(W.shape), "data_offsets": [0, len(raw)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr)
    f.write(raw)
# queries: row ids ("#id"), so both sides resolve them identically without a tokenizer.
ids = rng.choice(50257, size=n_q, replace=False)
open(qfile, "w").write("".join(f"#{i}\n" for i in ids))
PY
fi
QUERIES=$WORK/queries.txt
echo "table: $TABLE (50257 x 768 f32), queries: $(wc -l <"$QUERIES"), k=$K, search threads=$THREADS, cores=$(nproc)"

# The batch CLI: one sgemm over all queries. Its stderr reports the search time; the whole
# process (load, resolve, JSON out) is timed too. Measured before every wrk run, because a
# shared machine's speed drifts: each ratio compares neighbouring measurements.
NQ=$(wc -l <"$QUERIES")
measure_batch() {
  local wall0 wall1 err ms
  wall0=$(date +%s.%N)
  err=$("$CLI" neighbors --model "$TABLE" --batch "$QUERIES" -k "$K" --threads "$THREADS" --json 2>&1 >/dev/null | grep '^batch:')
  wall1=$(date +%s.%N)
  ms=$(echo "$err" | sed -E 's/.* in ([0-9.]+) ms.*/\1/')
  BATCH_QPS=$(awk -v n="$NQ" -v ms="$ms" 'BEGIN { printf "%.1f", n / (ms / 1000) }')
  BATCH_WALL_QPS=$(awk -v n="$NQ" -v a="$wall0" -v b="$wall1" 'BEGIN { printf "%.1f", n / (b - a) }')
  echo "cli --batch: $err -> $BATCH_QPS queries/s (search only), $BATCH_WALL_QPS queries/s (whole process)"
}

# 2. The server.
LOG=$WORK/serve.log
"$CLI" serve --model "$TABLE" --port 0 --threads "$THREADS" --quiet 2>"$LOG" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do grep -q '^listening on' "$LOG" && break; sleep 0.1; done
URL=$(grep -o 'http://[^ ]*' "$LOG")
echo "server: $URL (pid $PID), RSS after start: $(awk '/VmRSS/ {print $2 " kB"}' /proc/$PID/status)"
# One connection: latency of a lone request vs the search time the server reports for it.
ONE=$(ES_QUERIES=$QUERIES ES_K=$K wrk -t1 -c1 -d5s --latency -s "$(dirname "$0")/server_post.lua" "$URL" | grep '^RESULT')
SEARCH_MS=$(for q in $(head -50 "$QUERIES"); do
  curl -s "$URL/v1/neighbors" -H 'Content-Type: application/json' -d "{\"query\": \"$q\", \"k\": $K}"; echo; done |
  /usr/bin/python3 -c 'import sys, json; v = [json.loads(l)["elapsed_ms"] for l in sys.stdin if l.strip()]; v.sort(); print("%.3f" % v[len(v) // 2])')
echo "one connection: $ONE; median in-process search ${SEARCH_MS} ms (HTTP + resolve + JSON = p50 - search)"
HEALTH=$(wrk -t1 -c1 -d3s --latency "$URL/health" | awk '/^ +50%/ {print $2}')
echo "one connection, GET /health (HTTP round trip alone): p50 $HEALTH"
for run in $(seq "$RUNS"); do
  measure_batch
  OUT=$(ES_QUERIES=$QUERIES ES_K=$K wrk -t"$WRK_THREADS" -c"$CONNS" -d"${DURATION}s" --latency -s "$(dirname "$0")/server_post.lua" "$URL")
  R=$(echo "$OUT" | grep '^RESULT')
  RPS=$(echo "$OUT" | awk '/^Requests\/sec/ {print $2}')
  RATIO=$(awk -v a="$RPS" -v b="$BATCH_QPS" 'BEGIN { printf "%.2f", a / b }')
  echo "run $run: wrk -t$WRK_THREADS -c$CONNS -d${DURATION}s: $RPS requests/s ($R) server/batch=$RATIO RSS=$(awk '/VmRSS/ {print $2 " kB"}' /proc/$PID/status)"
done
curl -s "$URL/metrics" | grep -E '^embedscope_neighbors_(batches|batched_queries)_total'
kill -TERM $PID
wait $PID && echo "server exited 0 on SIGTERM"
trap - EXIT
