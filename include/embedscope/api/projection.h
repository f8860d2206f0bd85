// Projections of every row of a model (PCA, UMAP) as an operation: validated request, computed
// once, cached in memory (on the handle) and on disk, with a background job whose progress can be
// read while it runs (what GET /v1/projection and `embedscope project` use).
//
// Disk cache: a float32 .npy of n_rows x dims per (model, method, dims, parameters), written
// atomically. Its folder is next to the model's cache entry: <default model folder>/projections
// for the default model (train/default_model.h), else embedscope_home()/projections (a model in
// the Hugging Face cache or in a user folder is never written beside). The file name carries a
// hash of the model's identity (path, size, modification time, tensor, shape, dtype) and a
// format version, so a changed model or algorithm is computed afresh; a cache file of the wrong
// shape or type is ignored and replaced. Failing to write the cache is a logged warning, not an
// error. Models without a file (ModelHandle::from_model) are cached in memory only.
//
// Documents (the HTTP route's and `project --json`'s):
//   to_json(result): {"model", "method", "dims", "rows", "coords": [[x, y(, z)], ...]}
//   to_json(status): {"state": "idle|computing|ready|failed", "progress": 0..1,
//                     "stage": "pca|knn|fuzzy|layout|", "message": ""}
//
// Thread-safety: project() may run concurrently; a ProjectionJob may be used from many threads.
//
//   api::ProjectionRequest r;              // PCA, 2 dims
//   api::ProjectionResult p = api::project(*h, r);
//   p.projection.coords;                   // n_rows x 2
//   auto job = api::projection_job(*h, r); // the server's path
//   job->ensure();                         // starts it (or loads the disk cache)
//   job->status().progress;                // 0..1 while computing
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "embedscope/analysis/projection.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope::api {

using json = nlohmann::json;

// Format version of the disk cache (in every file name): bump when an algorithm's output changes.
// 2: UMAP by NN-descent above 4096 rows.
inline constexpr int kProjectionCacheVersion = 2;

struct ProjectionRequest {
  std::string method = "pca";  // "pca" or "umap"
  size_t dims = 2;             // 2 or 3
  // UMAP only (ignored by PCA, and not part of PCA's cache key).
  size_t n_neighbors = 15;  // 2..200
  double min_dist = 0.1;    // 0..1 (and <= spread = 1)
  uint64_t seed = 42;
  bool exact_knn =
      false;  // true: the exact kNN graph at any size (else NN-descent above 4096 rows)
};

// Throws Error(kInvalidArgument) naming the field ("method", "dims", "n_neighbors", "min_dist")
// and the value, or when n_neighbors is not below the model's row count.
void check_request(const ModelHandle& h, const ProjectionRequest& r);

struct ProjectionResult {
  std::string model;   // the handle's name
  std::string method;  // "pca" / "umap"
  Projection projection;
  bool from_cache = false;  // read from the disk cache
  double seconds = 0;       // computing (or reading) time
  std::string cache_path;   // "" when not cached on disk
};

// The disk cache file of this request ("" for a model without a file).
std::string projection_cache_path(const ModelHandle& h, const ProjectionRequest& r);

// Computes the projection (or reads it from the disk cache when use_disk_cache, writing it there
// after computing). Progress: what = "pca", or "knn" / "fuzzy" / "layout" for UMAP.
ProjectionResult project(const ModelHandle& h, const ProjectionRequest& r,
                         const ProgressFn& progress = {}, bool use_disk_cache = true);

json to_json(const ProjectionResult& r);

struct ProjectionStatus {
  std::string state = "idle";  // idle, computing, ready, failed
  double progress = 0;         // overall fraction, 0..1
  std::string stage;           // the running stage ("pca", "knn", "fuzzy", "layout")
  std::string message;         // the error of a failed run
};

json to_json(const ProjectionStatus& s);

// One (model, request) computed once in a background thread.
class ProjectionJob {
 public:
  ProjectionJob(const ModelHandle& h, ProjectionRequest r);
  // Cancels a running computation (at its next progress report) and waits for it.
  ~ProjectionJob();
  ProjectionJob(const ProjectionJob&) = delete;
  ProjectionJob& operator=(const ProjectionJob&) = delete;

  // Idle: loads the disk cache when it holds the projection (ready on return), else starts the
  // computation in a background thread (computing on return). Computing / ready: nothing.
  // Failed: rethrows the run's exception and returns to idle, so the next call starts afresh.
  ProjectionStatus ensure();
  // The state without starting anything; an idle job whose disk cache file exists says "ready".
  ProjectionStatus status() const;
  // The result once ready, else nullptr.
  std::shared_ptr<const ProjectionResult> result() const;

 private:
  void run();
  const ModelHandle& h_;
  const ProjectionRequest r_;
  const std::string cache_path_;
  mutable std::mutex mu_;
  ProjectionStatus status_;
  std::shared_ptr<const ProjectionResult> result_;
  std::exception_ptr error_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

// Projection jobs (and so results) a handle keeps in memory: the most recently requested ones.
// An older one is dropped (its disk cache stays, so asking again reads it back) unless it is
// computing or a caller still holds it.
inline constexpr size_t kProjectionsInMemory = 4;

// The handle's job for this request (one per method, dims and parameters; the
// kProjectionsInMemory most recently requested are kept, see above).
std::shared_ptr<ProjectionJob> projection_job(const ModelHandle& h, const ProjectionRequest& r);
// The jobs the handle holds now (at most kProjectionsInMemory but for running or held ones).
size_t projection_jobs_in_memory(const ModelHandle& h);

// Jobs of this process computing right now (the server refuses to start more than a few: each
// takes every core and, for UMAP, a float32 copy of the table).
size_t projections_running();

}  // namespace embedscope::api
