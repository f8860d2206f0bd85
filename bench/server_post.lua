-- wrk script for bench/server_bench.sh: POST /v1/neighbors, one single-word query per request,
-- cycling through the queries in $ES_QUERIES (one per line, the same file the CLI's --batch reads).
local queries = {}
local k = os.getenv("ES_K") or "10"
for line in io.lines(os.getenv("ES_QUERIES")) do
  if #line > 0 then queries[#queries + 1] = line end
end
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i % #queries + 1
  return wrk.format(nil, "/v1/neighbors", nil, '{"query": "' .. queries[i] .. '", "k": ' .. k .. '}')
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%d duration_s=%.3f non2xx=%d connect=%d read=%d write=%d timeout=%d status=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f\n",
    summary.requests, summary.duration / 1e6, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout, summary.errors.status,
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3))
end
