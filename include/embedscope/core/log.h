// Library logging goes through a callback (the library never prints).
//
// Apps install a sink (the CLI prints warnings to stderr); the default sink drops messages.
// Used for warnings such as "3 duplicate words kept first".
#pragma once

#include <functional>
#include <string>

namespace embedscope {

enum class LogLevel { kDebug, kInfo, kWarning };
using LogSink = std::function<void(LogLevel, const std::string&)>;

// Installs the process-wide sink (call once at start-up, before other threads run).
void set_log_sink(LogSink sink);
void log_message(LogLevel level, const std::string& message);
inline void log_warning(const std::string& m) { log_message(LogLevel::kWarning, m); }
inline void log_info(const std::string& m) { log_message(LogLevel::kInfo, m); }

}  // namespace embedscope
