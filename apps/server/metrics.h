// Metrics: the Prometheus text of GET /metrics (docs/http_api.md): requests, errors and a
// latency histogram per route (a bounded label set: unknown paths count as "other"), the
// front's queue and connection counters, and the micro-batchers' counters summed over the
// served models. Thread-safe: record() and text() take one mutex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "batcher.h"
#include "http_front.h"

namespace embedscope::server {

// Routes whose metrics are kept (anything else counts as "other": bounded label set).
inline const char* const kRoutes[] = {"/health",
                                      "/metrics",
                                      "/v1/info",
                                      "/v1/models",
                                      "/v1/neighbors",
                                      "/v1/explore",
                                      "/v1/tokenize",
                                      "/v1/decode",
                                      "/v1/embeddings",
                                      "/v1/similarity",
                                      "/v1/analogy",
                                      "/v1/stats",
                                      "/v1/compare",
                                      "/v1/projection",
                                      "/v1/projection/status",
                                      "/v1/vocab",
                                      "/",
                                      "other"};
inline constexpr double kBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                      0.1,    0.25,  0.5,    1,     2.5,  5,     10};
inline constexpr size_t kNB = sizeof(kBuckets) / sizeof(kBuckets[0]);

struct RouteMetrics {
  uint64_t requests = 0, errors = 0;
  uint64_t buckets[kNB + 1] = {};
  double sum = 0;
};

class Metrics {
 public:
  void record(const std::string& path, int status, double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    RouteMetrics& m = by_route_[route_label(path)];
    ++m.requests;
    if (status >= 400) ++m.errors;
    size_t b = 0;
    while (b < kNB && seconds > kBuckets[b]) ++b;
    ++m.buckets[b];
    m.sum += seconds;
  }
  std::string text(const HttpFront& f, const std::vector<const NeighborsBatcher*>& nbs) const {
    std::string o;
    auto line = [&](const std::string& s) { o += s + "\n"; };
    std::lock_guard<std::mutex> lock(mu_);
    line("# HELP embedscope_http_requests_total HTTP requests answered, by route.");
    line("# TYPE embedscope_http_requests_total counter");
    for (auto& [r, m] : by_route_)
      line("embedscope_http_requests_total{route=\"" + r + "\"} " + std::to_string(m.requests));
    line(
        "# HELP embedscope_http_errors_total HTTP requests answered with status >= 400, by route.");
    line("# TYPE embedscope_http_errors_total counter");
    for (auto& [r, m] : by_route_)
      line("embedscope_http_errors_total{route=\"" + r + "\"} " + std::to_string(m.errors));
    line(
        "# HELP embedscope_http_request_duration_seconds Time from the request's first byte to its "
        "answer.");
    line("# TYPE embedscope_http_request_duration_seconds histogram");
    for (auto& [r, m] : by_route_) {
      uint64_t cum = 0;
      for (size_t b = 0; b <= kNB; ++b) {
        cum += m.buckets[b];
        char le[32];
        if (b < kNB)
          std::snprintf(le, sizeof le, "%g", kBuckets[b]);
        else
          std::snprintf(le, sizeof le, "+Inf");
        line("embedscope_http_request_duration_seconds_bucket{route=\"" + r + "\",le=\"" + le +
             "\"} " + std::to_string(cum));
      }
      char sum[64];
      std::snprintf(sum, sizeof sum, "%.6f", m.sum);
      line("embedscope_http_request_duration_seconds_sum{route=\"" + r + "\"} " + sum);
      line("embedscope_http_request_duration_seconds_count{route=\"" + r + "\"} " +
           std::to_string(m.requests));
    }
    const FrontStats& s = f.front_stats();
    line("# TYPE embedscope_http_queue_depth gauge");
    line("embedscope_http_queue_depth " + std::to_string(f.queue_depth()));
    line("# TYPE embedscope_http_active_connections gauge");
    line("embedscope_http_active_connections " + std::to_string(s.active.load()));
    line("# TYPE embedscope_http_connections_accepted_total counter");
    line("embedscope_http_connections_accepted_total " + std::to_string(s.accepted.load()));
    line("# HELP embedscope_http_rejected_total Connections answered by the front itself.");
    line("# TYPE embedscope_http_rejected_total counter");
    line("embedscope_http_rejected_total{reason=\"queue_full\"} " +
         std::to_string(s.rejected_busy.load()));
    line("embedscope_http_rejected_total{reason=\"request_timeout\"} " +
         std::to_string(s.timed_out.load()));
    line("embedscope_http_rejected_total{reason=\"headers_too_large\"} " +
         std::to_string(s.head_too_large.load()));
    size_t queued = 0;
    uint64_t batches = 0, queries = 0;
    for (const NeighborsBatcher* nb : nbs) {
      queued += nb->queued();
      batches += nb->stats().batches.load();
      queries += nb->stats().queries.load();
    }
    line("# TYPE embedscope_neighbors_queue_depth gauge");
    line("embedscope_neighbors_queue_depth " + std::to_string(queued));
    line("# HELP embedscope_neighbors_batches_total Search calls made by the micro-batcher.");
    line("# TYPE embedscope_neighbors_batches_total counter");
    line("embedscope_neighbors_batches_total " + std::to_string(batches));
    line("# TYPE embedscope_neighbors_batched_queries_total counter");
    line("embedscope_neighbors_batched_queries_total " + std::to_string(queries));
    line("# TYPE embedscope_models_loaded gauge");
    line("embedscope_models_loaded " + std::to_string(nbs.size()));
    return o;
  }

 private:
  static std::string route_label(const std::string& path) {
    for (const char* r : kRoutes)
      if (path == r) return r;
    return "other";
  }
  mutable std::mutex mu_;
  std::map<std::string, RouteMetrics> by_route_;
};

}  // namespace embedscope::server
