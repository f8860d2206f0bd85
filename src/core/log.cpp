#include "embedscope/core/log.h"

#include <cstdio>

namespace embedscope {
namespace {
LogSink& sink() {
  static LogSink s;  // set once at start-up by the app; the library only reads it
  return s;
}

}  // namespace

void set_log_sink(LogSink s) { sink() = std::move(s); }

void log_message(LogLevel level, const std::string& message) {
  if (sink()) sink()(level, message);
}

}  // namespace embedscope
