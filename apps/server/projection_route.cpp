#include "projection_route.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "embedscope/api/common.h"
#include "embedscope/api/projection.h"
#include "embedscope/core/error.h"

namespace embedscope::server {

namespace {

// Projections computing at once, server-wide; a request that would start one more is answered
// 503 (each takes every core, and UMAP a float32 copy of the table).
constexpr size_t kMaxRunning = 2;

static_assert(std::endian::native == std::endian::little,
              "the f32 body is the in-memory floats: little-endian hosts only");

[[noreturn]] void bad_param(const std::string& name, const std::string& want,
                            const std::string& got) {
  std::string g = got.size() > 80 ? got.substr(0, 80) + "..." : got;
  throw Error(ErrorCode::kInvalidArgument,
              "parameter '" + name + "': expected " + want + ", got '" + g + "'");
}

// The one value of a query parameter, or "" when absent; a repeated parameter is refused.
std::string param(const httplib::Request& req, const char* name) {
  size_t n = req.get_param_value_count(name);
  if (n > 1) bad_param(name, "one value", std::to_string(n) + " values");
  return n ? req.get_param_value(name) : "";
}

uint64_t integer(const std::string& name, const std::string& v, uint64_t lo, uint64_t hi) {
  std::string want = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos)
    bad_param(name, want, v);
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
  if (errno != 0 || x < lo || x > hi) bad_param(name, want, v);
  return x;
}

api::ProjectionRequest parse(const httplib::Request& req, std::string& format) {
  static const char* const kKnown[] = {"model",       "method",   "dims", "format",
                                       "n_neighbors", "min_dist", "seed"};
  for (const auto& [k, v] : req.params) {
    bool known = false;
    for (const char* n : kKnown) known = known || k == n;
    if (!known)
      bad_param(k, "no such parameter (model, method, dims, format, n_neighbors, min_dist, seed)",
                v);
  }
  api::ProjectionRequest r;
  std::string method = param(req, "method");
  if (!method.empty()) {
    if (method != "pca" && method != "umap") bad_param("method", "pca or umap", method);
    r.method = method;
  }
  if (std::string d = param(req, "dims"); !d.empty()) r.dims = integer("dims", d, 2, 3);
  format = param(req, "format");
  if (format.empty()) format = "f32";
  if (format != "f32" && format != "json") bad_param("format", "f32 or json", format);
  if (std::string n = param(req, "n_neighbors"); !n.empty())
    r.n_neighbors = integer("n_neighbors", n, 2, 200);
  if (std::string s = param(req, "seed"); !s.empty())
    r.seed = integer("seed", s, 0, uint64_t(INT64_MAX));
  if (std::string m = param(req, "min_dist"); !m.empty()) {
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(m.c_str(), &end);
    if (errno != 0 || end != m.c_str() + m.size() || !std::isfinite(x) || x < 0 || x > 1)
      bad_param("min_dist", "a number from 0 to 1", m);
    r.min_dist = x;
  }
  return r;
}

}  // namespace

void answer_projection(const ModelHandle& h, const httplib::Request& req, httplib::Response& res,
                       bool status_only) {
  std::string format;
  api::ProjectionRequest r = parse(req, format);
  std::shared_ptr<api::ProjectionJob> job = api::projection_job(h, r);
  if (status_only) {
    res.status = 200;
    res.set_content(api::dump_json(api::to_json(job->status()), -1), "application/json");
    return;
  }
  if (job->status().state == "idle" && api::projections_running() >= kMaxRunning) {
    res.status = 503;
    res.set_header("Retry-After", "5");
    res.set_content(
        api::dump_json({{"error",
                         {{"message", std::to_string(kMaxRunning) +
                                          " projections are computing; retry when one is done"},
                          {"type", "overloaded"},
                          {"code", "busy"}}}},
                       -1),
        "application/json");
    return;
  }
  api::ProjectionStatus st = job->ensure();  // rethrows a failed run's error
  std::shared_ptr<const api::ProjectionResult> out = job->result();
  if (st.state != "ready" || !out) {
    res.status = 202;
    res.set_content(api::dump_json(api::to_json(st), -1), "application/json");
    return;
  }
  res.status = 200;
  if (format == "json") {
    res.set_content(api::dump_json(api::to_json(*out), -1), "application/json");
    return;
  }
  const Projection& p = out->projection;
  res.set_header("X-Rows", std::to_string(p.n_rows));
  res.set_header("X-Dims", std::to_string(p.dims));
  res.set_content(reinterpret_cast<const char*>(p.coords.data()), p.coords.size() * sizeof(float),
                  "application/octet-stream");
}

}  // namespace embedscope::server
