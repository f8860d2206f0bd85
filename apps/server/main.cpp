// embedscope-serve: the HTTP JSON API (`embedscope serve` execs this binary, so that the CLI's
// start-up does not pay for loading cpp-httplib's shared library and its OpenSSL/zlib/brotli
// dependencies: ~3.4 ms measured with hyperfine, against info's 20 ms budget).
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "api_server.h"
#include "embedscope/api/common.h"
#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/thread_pool.h"

using namespace embedscope;

int main(int argc, char** argv) {
  // SIGINT/SIGTERM are taken by sigwait() below; every thread started later inherits the mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  server::ServerOptions o;
  std::string model;
  std::vector<std::string> models;   // name=REF
  std::vector<std::string> indexes;  // [name=]FILE
  size_t threads = 0;
  bool no_auth = false, quiet = false;
  CLI::App app{
      "embedscope serve: an HTTP JSON API over one or more models (docs/http_api.md).\n\n"
      "Examples:\n"
      "  embedscope serve                                # default model on http://127.0.0.1:8080\n"
      "  embedscope serve --model gpt2 --port 0          # ephemeral port, printed on stderr\n"
      "  embedscope serve --models small=vectors.bin,gpt2=gpt2   # requests pick one by \"model\"\n"
      "  embedscope serve --model vectors.bin --index vectors.hnsw   # enables mode \"hnsw\"\n"
      "  embedscope serve --host 0.0.0.0 --api-key S3CRET\n"
      "  curl -s localhost:8080/v1/neighbors -H 'Content-Type: application/json' -d "
      "'{\"query\":\"king\",\"k\":5}'",
      "embedscope serve"};
  auto* one =
      app.add_option("--model,-m", model, "model reference (default: the embedded default model)");
  app.add_option("--models", models,
                 "several models as name=REF (comma-separated or repeated); the first answers "
                 "requests that name no model")
      ->delimiter(',')
      ->excludes(one);
  app.add_option("--index", indexes,
                 "an HNSW index (embedscope index build) for POST /v1/neighbors mode \"hnsw\": "
                 "FILE for the first model, NAME=FILE for a --models name; repeatable");
  app.add_option("--host", o.host,
                 "address to bind (default 127.0.0.1; others need --api-key or --no-auth)");
  app.add_option("--port,-p", o.port, "port (0 = ephemeral; the bound URL is printed on stderr)");
  app.add_option("--threads,-t", threads, "threads per search call (default: all cores)");
  app.add_option("--http-threads", o.front.workers, "connections served at once (default 128)");
  app.add_option("--keep-alive", o.front.keep_alive_timeout_s,
                 "seconds an idle keep-alive connection is kept (default 5; closed at once while "
                 "other connections wait for a worker)")
      ->check(CLI::Range(1, 3600));
  app.add_option("--max-queued", o.front.max_queued,
                 "accepted connections waiting for a worker before 503 (default 1024)");
  app.add_option("--api-key", o.api_key,
                 "require Authorization: Bearer KEY on every route but /health");
  app.add_flag("--no-auth", no_auth, "allow a non-loopback --host without an API key");
  app.add_option("--batch-wait-us", o.micro_batch_wait_us,
                 "micro-batching: longest wait for requests being parsed (default 1000)");
  app.add_option("--max-batch", o.micro_batch_max,
                 "micro-batching: most queries in one search call (default 256)");
  app.add_flag("--quiet,-q", quiet, "no access log");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  o.access_log = !quiet;
  if (o.port < 0 || o.port > 65535) {
    std::fprintf(stderr, "error: --port %d: expected 0..65535\n", o.port);
    return 2;
  }
  if (!server::is_loopback_host(o.host) && o.api_key.empty() && !no_auth) {
    std::fprintf(stderr, "error: --host %s is not loopback: give --api-key KEY or --no-auth\n",
                 o.host.c_str());
    return 2;
  }
  if (o.front.workers == 0) o.front.workers = 1;
  set_log_sink([](LogLevel level, const std::string& m) {
    if (level == LogLevel::kWarning) std::fprintf(stderr, "warning: %s\n", m.c_str());
  });
  try {
    if (threads) set_process_threads(threads);
    std::vector<server::NamedModel> named;
    if (models.empty()) models.push_back("=" + model);
    for (const std::string& spec : models) {
      size_t eq = spec.find('=');
      if (eq == std::string::npos || (eq == 0 && models.size() > 1))
        throw Error(ErrorCode::kInvalidArgument,
                    "--models: '" + spec + "' is not name=REF (e.g. small=vectors.bin)");
      ModelHandlePtr h = ModelHandle::open(spec.substr(eq + 1));
      // Build what the first requests would otherwise wait for.
      h->words();
      api::shared_searcher(*h);
      named.push_back({spec.substr(0, eq), h});
    }
    for (const std::string& spec : indexes) {
      size_t eq = spec.find('=');
      std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
      std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
      server::NamedModel* target = name.empty() ? &named[0] : nullptr;
      for (server::NamedModel& m : named)
        if (!name.empty() && m.name == name) target = &m;
      if (!target)
        throw Error(ErrorCode::kInvalidArgument,
                    "--index " + spec + ": no model named '" + name + "' (see --models)");
      target->index = std::make_shared<HnswIndex>(
          HnswIndex::load(file, table_content_hash(target->handle->table())));
    }
    server::ApiServer srv(named, o);
    int port = srv.start();
    std::string host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
    for (const server::NamedModel& m : named)
      std::fprintf(stderr, "embedscope serve: %s (%zu x %zu), %zu search threads\n",
                   (m.name.empty() ? m.handle->name() : m.name).c_str(), m.handle->table().n_rows(),
                   m.handle->table().dim(), process_threads());
    std::fprintf(stderr, "listening on http://%s:%d\n", host.c_str(), port);
    std::fflush(stderr);
    int sig = 0;
    sigwait(&sigs, &sig);
    std::fprintf(stderr, "embedscope serve: %s, stopping (in-flight requests finish)\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM");
    srv.stop();
    std::fprintf(stderr, "embedscope serve: stopped\n");
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.code() == ErrorCode::kNotFound ? 3 : e.code() == ErrorCode::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
