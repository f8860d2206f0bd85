#include "common.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "embedscope/api/common.h"
#include "embedscope/core/progress.h"
#include "embedscope/train/default_model.h"

namespace embedscope::cli {

void print_json(const json& j, bool pretty) {
  std::cout << j.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace) << "\n";
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

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

ModelHandlePtr open_handle(const std::string& ref) { return open_handle(ref, HandleOptions()); }

ModelHandlePtr open_handle(const std::string& ref, HandleOptions options) {
  if (!options.progress) options.progress = progress_line;
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

}  // namespace embedscope::cli
