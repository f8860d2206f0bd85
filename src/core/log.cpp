#include "embedscope/core/log.h"

#include <cmath>
#include <cstdio>

#include "embedscope/core/progress.h"

namespace embedscope {
namespace {
LogSink& sink() {
  static LogSink s;  // set once at start-up by the app; the library only reads it
  return s;
}

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

void set_log_sink(LogSink s) { sink() = std::move(s); }

void log_message(LogLevel level, const std::string& message) {
  if (sink()) sink()(level, message);
}

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

}  // namespace embedscope
