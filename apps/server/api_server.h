// ApiServer: the routes of `embedscope serve` over one or more shared ModelHandles (see
// docs/http_api.md): GET /health, /metrics, /v1/info, /v1/models, /v1/stats, /v1/vocab,
// /v1/projection (and /v1/projection/status, projection_route.h); POST /v1/neighbors,
// /v1/explore, /v1/analogy, /v1/tokenize, /v1/decode, /v1/embeddings, /v1/similarity,
// /v1/compare; the web page at / (web_routes.h). A request picks a model by name (`model` in
// the body, `?model=` on GET routes); the first model answers requests that name none.
//
// Every route parses its JSON body (after checking Content-Type and nesting depth by a byte
// scan, before nlohmann parses it), calls one library function (api/), and answers the
// library's document, dumped with invalid UTF-8 replaced. Errors are
// {"error": {"message", "type", "code"}}: 400 bad JSON / field (the message names the field and
// the value), 401 missing or wrong API key, 404 unknown route or model, 413 body too large,
// 422 a word not in the vocabulary or an id out of range, 431/414/408 from the front
// (http_front.h), 503 queue full, 500 for anything unexpected (the server keeps serving).
//
// No route reads a file named by the request; CORS headers are never sent.
//
// Thread-safety: the routes run on the front's worker threads; the handle, the batcher and the
// metrics are safe to share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "batcher.h"
#include "embedscope/search/hnsw_index.h"
#include "http_front.h"

namespace embedscope::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;     // non-empty: every route but /health needs Bearer KEY
  bool access_log = true;  // one line per request on stderr
  FrontLimits front;
  size_t payload_max = 1 << 20;  // request body bytes (413 beyond)
  size_t max_json_depth = 64;
  size_t max_k = 1000;             // also <= the table's rows
  size_t max_batch = 1024;         // queries / inputs in one request
  size_t max_query_bytes = 4096;   // a query word or expression
  size_t micro_batch_max = 256;    // queries merged into one search call
  int micro_batch_wait_us = 1000;  // bounded wait for requests being parsed
};

// A model and the name requests use for it ("" = the handle's own name).
struct NamedModel {
  std::string name;
  ModelHandlePtr handle;
  std::shared_ptr<const HnswIndex> index = nullptr;  // enables mode "hnsw" for this model
};

class ApiServer {
 public:
  ApiServer(ModelHandlePtr h, ServerOptions o);
  // Several models; the first answers requests that name none. Error(kInvalidArgument) for an
  // empty list or two models with one name.
  ApiServer(std::vector<NamedModel> models, ServerOptions o);
  ~ApiServer();
  // Binds (port 0 = ephemeral) and starts serving; returns the bound port.
  int start();
  // Graceful stop: see HttpFront::stop_gracefully().
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Constant-time comparison of two secrets (time depends only on the lengths).
bool secure_equal(const std::string& a, const std::string& b);
// Whether `host` is a loopback address ("127.x.x.x", "::1", "localhost").
bool is_loopback_host(const std::string& host);
// Depth of the deepest [ / { nesting in `text` (strings skipped), stopping once above `limit`.
size_t json_depth(std::string_view text, size_t limit);

}  // namespace embedscope::server
