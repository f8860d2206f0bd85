#include "embedscope/core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace embedscope {
namespace {
std::string human(double v) {
  char b[32];
  if (v >= 1e9)
    std::snprintf(b, sizeof b, "%.2fG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(b, sizeof b, "%.2fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(b, sizeof b, "%.1fk", v / 1e3);
  else
    std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}
}  // namespace

std::string format_progress(const ProgressInfo& p) {
  std::string s = p.what;
  char b[64];
  if (p.total > 0) {
    std::snprintf(b, sizeof b, " %5.1f%%", 100.0 * p.done / p.total);
    s += b;
    s += " " + human(p.done) + "/" + human(p.total) + " " + p.unit;
  } else {
    s += " " + human(p.done) + " " + p.unit;
  }
  s += " " + human(p.rate) + " " + p.unit + "/s";
  if (p.total > 0 && std::isfinite(p.eta_seconds)) {
    long t = long(p.eta_seconds + 0.5);
    std::snprintf(b, sizeof b, " ETA %ld:%02ld", t / 60, t % 60);
    s += b;
  }
  if (!p.extra.empty()) s += " " + p.extra;
  return s;
}

ProgressFn stderr_progress() {
  return [tty = ::isatty(2) != 0](const ProgressInfo& p) {
    if (tty) return (void)std::fprintf(stderr, "\r%s\033[K", format_progress(p).c_str());
    nlohmann::json j = {{"event", "progress"}, {"stage", p.what},
                        {"done", p.done},      {"total", p.total},
                        {"unit", p.unit},      {"rate", p.rate},
                        {"extra", p.extra},    {"eta_seconds", p.eta_seconds}};
    std::fprintf(stderr, "%s\n", j.dump().c_str());
  };
}

void end_stderr_progress(bool clear) {
  if (::isatty(2)) std::fprintf(stderr, clear ? "\r\033[K" : "\n");
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace embedscope
