#include "common.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "embedscope/api/common.h"
#include "embedscope/core/thread_pool.h"
#include "embedscope/train/default_model.h"

namespace embedscope::cli {

CLI::Option* add_model_flag(CLI::App& app, std::string& ref) {
  return app.add_option(
      "--model,-m", ref,
      "model: file, Hugging Face folder or hub id (default: the embedded default model)");
}

CLI::Option* add_threads_flag(CLI::App& app, size_t& n) {
  return app.add_option("--threads,-t", n, "threads (default: all cores)");
}

CLI::Option* add_json_flag(CLI::App& app, bool& on, const std::string& help) {
  return app.add_flag("--json", on, help.empty() ? "machine-readable output" : help);
}

void print_json(const json& j, bool pretty) {
  std::cout << j.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace) << "\n";
}

void print_text(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

namespace {
void progress_line(const ProgressInfo& p) {
  if (::isatty(2))
    std::fprintf(stderr, "\r%s\033[K", format_progress(p).c_str());
  else
    std::fprintf(stderr, "%s\n", format_progress(p).c_str());
}
}  // namespace

ProgressFn progress_printer(bool quiet) {
  if (quiet) return nullptr;
  return [tty = ::isatty(2) != 0](const ProgressInfo& p) {
    if (tty) return (void)std::fprintf(stderr, "\r%s\033[K", format_progress(p).c_str());
    json j = {{"event", "progress"}, {"stage", p.what},
              {"done", p.done},      {"total", p.total},
              {"unit", p.unit},      {"rate", p.rate},
              {"extra", p.extra},    {"eta_seconds", p.eta_seconds}};
    std::fprintf(stderr, "%s\n", j.dump().c_str());
  };
}

void end_progress(bool quiet) {
  if (!quiet && ::isatty(2)) std::fprintf(stderr, "\n");
}

ModelHandlePtr open_handle(const std::string& ref, const std::string& tokenizer, size_t threads) {
  if (threads) set_process_threads(threads);
  HandleOptions options;
  options.tokenizer = tokenizer;
  options.progress = progress_line;
  ModelHandlePtr h = ModelHandle::open(ref, options);
  if (ref.empty() && ::isatty(2)) std::fprintf(stderr, "\r\033[K");
  return h;
}

Model load_model_ref(const std::string& ref, const ModelOptions& options) {
  if (!ref.empty()) return load_model(ref, options);
  bool tty = ::isatty(2);
  std::string path = ensure_default_model(progress_line);
  if (tty) std::fprintf(stderr, "\r\033[K");
  Model m = load_model(path, options);
  m.ref = "default";
  return m;
}

std::string printable(const std::string& s) { return api::printable(s); }

int exit_code_for(const std::exception& e) {
  const auto* err = dynamic_cast<const Error*>(&e);
  return err ? exit_code_for(err->code()) : 1;
}

}  // namespace embedscope::cli
