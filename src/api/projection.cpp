#include "embedscope/api/projection.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <list>
#include <optional>

#include "embedscope/core/dtype.h"
#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/paths.h"
#include "embedscope/formats/npy.h"
#include "embedscope/train/default_model.h"

namespace embedscope::api {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<size_t> g_running{0};

std::string fmt_g(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// The parameters that change the output, as a file-name-safe string.
std::string request_key(const ProjectionRequest& r) {
  std::string k = r.method + "-" + std::to_string(r.dims) + "d";
  if (r.method == "umap")
    k += "-n" + std::to_string(r.n_neighbors) + "-md" + fmt_g(r.min_dist) + "-s" +
         std::to_string(r.seed) + (r.exact_knn ? "-exact" : "");
  return k;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Stage weights of the overall progress fraction.
double stage_start(const std::string& stage) {
  if (stage == "fuzzy") return 0.4;
  if (stage == "layout") return 0.5;
  return 0.0;
}
double stage_weight(const std::string& stage) {
  if (stage == "knn") return 0.4;
  if (stage == "fuzzy") return 0.1;
  if (stage == "layout") return 0.5;
  return 1.0;  // pca
}

std::optional<Projection> read_cache(const std::string& path, size_t rows, size_t dims) {
  if (path.empty() || !file_exists(path)) return std::nullopt;
  try {
    LoadedEmbeddings e = load_npy(path);
    const EmbeddingTable& t = e.table;
    if (t.dtype() != DType::kF32 || t.n_rows() != rows || t.dim() != dims) {
      log_warning("projection cache " + path + " holds " + std::to_string(t.n_rows()) + " x " +
                  std::to_string(t.dim()) + " " + std::string(dtype_name(t.dtype())) +
                  ", expected " + std::to_string(rows) + " x " + std::to_string(dims) +
                  " F32: computing afresh");
      return std::nullopt;
    }
    Projection p;
    p.n_rows = rows;
    p.dims = dims;
    p.coords.assign(t.f32(), t.f32() + rows * dims);
    return p;
  } catch (const Error& err) {
    log_warning(std::string("projection cache unreadable, computing afresh: ") + err.what());
    return std::nullopt;
  }
}

void write_cache(const std::string& path, const Projection& p) {
  if (path.empty()) return;
  try {
    make_dirs(path.substr(0, path.rfind('/')));
    save_npy(path, EmbeddingTable::from_f32(p.n_rows, p.dims, p.coords));
  } catch (const Error& err) {
    log_warning(std::string("projection not cached on disk: ") + err.what());
  }
}

}  // namespace

void check_request(const ModelHandle& h, const ProjectionRequest& r) {
  auto bad = [](const std::string& field, const std::string& want, const std::string& got) {
    throw Error(ErrorCode::kInvalidArgument,
                "projection: " + field + " must be " + want + ", got " + got);
  };
  if (r.method != "pca" && r.method != "umap") bad("method", "\"pca\" or \"umap\"", r.method);
  if (r.dims != 2 && r.dims != 3) bad("dims", "2 or 3", std::to_string(r.dims));
  if (r.dims > h.table().dim())
    bad("dims", "at most the table's width " + std::to_string(h.table().dim()),
        std::to_string(r.dims));
  if (r.method == "umap") {
    if (r.n_neighbors < 2 || r.n_neighbors > 200)
      bad("n_neighbors", "from 2 to 200", std::to_string(r.n_neighbors));
    if (r.n_neighbors >= h.table().n_rows())
      bad("n_neighbors", "below the table's row count " + std::to_string(h.table().n_rows()),
          std::to_string(r.n_neighbors));
    if (!(r.min_dist >= 0 && r.min_dist <= 1)) bad("min_dist", "from 0 to 1", fmt_g(r.min_dist));
  }
}

std::string projection_cache_path(const ModelHandle& h, const ProjectionRequest& r) {
  const std::string& file = h.model().path;
  struct stat st;
  if (file.empty() || ::stat(file.c_str(), &st) != 0) return "";
  const EmbeddingTable& t = h.table();
  std::string identity = file + "|" + std::to_string(st.st_size) + "|" +
                         std::to_string(int64_t(st.st_mtim.tv_sec)) + "." +
                         std::to_string(int64_t(st.st_mtim.tv_nsec)) + "|" + h.model().tensor +
                         "|" + std::to_string(t.n_rows()) + "x" + std::to_string(t.dim()) + "|" +
                         std::string(dtype_name(t.dtype()));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a(identity));
  std::string dir = (h.is_default() ? default_model_dir() : embedscope_home()) + "/projections";
  return dir + "/" + hash + "-v" + std::to_string(kProjectionCacheVersion) + "-" + request_key(r) +
         ".npy";
}

ProjectionResult project(const ModelHandle& h, const ProjectionRequest& r,
                         const ProgressFn& progress, bool use_disk_cache) {
  check_request(h, r);
  auto t0 = Clock::now();
  ProjectionResult out;
  out.model = h.name();
  out.method = r.method;
  std::string path = use_disk_cache ? projection_cache_path(h, r) : "";
  if (auto cached = read_cache(path, h.table().n_rows(), r.dims)) {
    out.projection = std::move(*cached);
    out.from_cache = true;
    out.cache_path = path;
  } else if (r.method == "pca") {
    PcaOptions o;
    o.dims = r.dims;
    o.progress = progress;
    out.projection = pca(h.table(), o);
  } else {
    UmapOptions o;
    o.dims = r.dims;
    o.n_neighbors = r.n_neighbors;
    o.min_dist = r.min_dist;
    o.seed = r.seed;
    if (r.exact_knn) o.knn = UmapOptions::Knn::kExact;
    o.progress = progress;
    out.projection = umap(h.table(), o);
  }
  if (!out.from_cache && !path.empty()) {
    write_cache(path, out.projection);
    if (file_exists(path)) out.cache_path = path;
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

json to_json(const ProjectionResult& r) {
  const Projection& p = r.projection;
  json coords = json::array();
  for (size_t i = 0; i < p.n_rows; ++i) {
    json row = json::array();
    for (size_t c = 0; c < p.dims; ++c) row.push_back(p.coords[i * p.dims + c]);
    coords.push_back(std::move(row));
  }
  return json{{"model", r.model},
              {"method", r.method},
              {"dims", p.dims},
              {"rows", p.n_rows},
              {"coords", std::move(coords)}};
}

json to_json(const ProjectionStatus& s) {
  return json{
      {"state", s.state}, {"progress", s.progress}, {"stage", s.stage}, {"message", s.message}};
}

ProjectionJob::ProjectionJob(const ModelHandle& h, ProjectionRequest r)
    : h_(h), r_(std::move(r)), cache_path_(projection_cache_path(h, r_)) {
  check_request(h_, r_);
}

ProjectionJob::~ProjectionJob() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
}

ProjectionStatus ProjectionJob::ensure() {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.state == "computing" || status_.state == "ready") return status_;
  if (thread_.joinable()) thread_.join();  // a finished (failed) run
  if (status_.state == "failed") {
    std::exception_ptr e = error_;
    status_ = ProjectionStatus{};
    error_ = nullptr;
    std::rethrow_exception(e);
  }
  if (auto cached = read_cache(cache_path_, h_.table().n_rows(), r_.dims)) {
    auto res = std::make_shared<ProjectionResult>();
    res->model = h_.name();
    res->method = r_.method;
    res->projection = std::move(*cached);
    res->from_cache = true;
    res->cache_path = cache_path_;
    result_ = std::move(res);
    status_ = ProjectionStatus{"ready", 1.0, "", ""};
    return status_;
  }
  status_ = ProjectionStatus{"computing", 0.0, r_.method == "pca" ? "pca" : "knn", ""};
  ++g_running;  // counted from here, so a burst of requests sees it at once
  thread_ = std::thread([this] {
    run();
    --g_running;
  });
  return status_;
}

void ProjectionJob::run() {
  auto on_progress = [this](const ProgressInfo& p) {
    if (cancel_) throw Error(ErrorCode::kIo, "projection: cancelled");
    double f = p.total > 0 ? std::min(1.0, p.done / p.total) : 0.0;
    std::lock_guard<std::mutex> lock(mu_);
    status_.stage = p.what;
    status_.progress = std::min(1.0, stage_start(p.what) + stage_weight(p.what) * f);
  };
  try {
    auto res = std::make_shared<ProjectionResult>(project(h_, r_, on_progress, true));
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(res);
    status_ = ProjectionStatus{"ready", 1.0, "", ""};
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::current_exception();
    status_ = ProjectionStatus{"failed", status_.progress, status_.stage, e.what()};
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::current_exception();
    status_ = ProjectionStatus{"failed", status_.progress, status_.stage, "unknown error"};
  }
}

ProjectionStatus ProjectionJob::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.state == "idle" && !cache_path_.empty() && file_exists(cache_path_))
    return ProjectionStatus{"ready", 1.0, "", ""};
  return status_;
}

std::shared_ptr<const ProjectionResult> ProjectionJob::result() const {
  std::lock_guard<std::mutex> lock(mu_);
  return result_;
}

size_t projections_running() { return g_running.load(); }

namespace {

// A handle's projection jobs, most recently requested first, at most kProjectionsInMemory of
// them (a job that computes, or that a caller still holds, is kept beyond the bound).
class ProjectionJobs {
 public:
  std::shared_ptr<ProjectionJob> get(const ModelHandle& h, const ProjectionRequest& r) {
    const std::string key = request_key(r);
    std::lock_guard<std::mutex> lock(mu_);
    auto it =
        std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& e) { return e.first == key; });
    if (it != jobs_.end()) {
      jobs_.splice(jobs_.begin(), jobs_, it);  // most recent first
    } else {
      jobs_.emplace_front(key, std::make_shared<ProjectionJob>(h, r));
    }
    std::shared_ptr<ProjectionJob> out = jobs_.front().second;
    // Evict from the least recently requested end. use_count() == 1 under the lock: no request
    // holds it (copies are only made here), so none is about to start it; a computing job's
    // thread holds no reference, hence the state check.
    for (auto e = jobs_.end(); jobs_.size() > kProjectionsInMemory && e != jobs_.begin();) {
      --e;
      if (e->second.use_count() == 1 && e->second->status().state != "computing")
        e = jobs_.erase(e);
    }
    return out;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size();
  }

 private:
  mutable std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<ProjectionJob>>> jobs_;
};

std::shared_ptr<ProjectionJobs> jobs_of(const ModelHandle& h) {
  return h.resource<ProjectionJobs>("api.projection.jobs",
                                    [] { return std::make_shared<ProjectionJobs>(); });
}

}  // namespace

std::shared_ptr<ProjectionJob> projection_job(const ModelHandle& h, const ProjectionRequest& r) {
  check_request(h, r);
  return jobs_of(h)->get(h, r);
}

size_t projection_jobs_in_memory(const ModelHandle& h) { return jobs_of(h)->size(); }

}  // namespace embedscope::api
