// embedscope::Error and the invariant checks.
//
// Three channels, chosen by who can cause the failure (see STYLE.md):
//  1. Anything a file, a flag or a request can cause throws embedscope::Error with a code. The
//     message names the file, the field / tensor / line / byte offset, the value found and the
//     limit or value expected.
//  2. Normal absence (an out-of-vocabulary word) is std::optional, not an error.
//  3. Broken invariants (our bugs) -> ES_CHECK aborts with file:line in every build;
//     ES_DCHECK only in debug and sanitizer builds. Never used for input validation.
//
// Usage:
//   if (n > remain) throw Error(ErrorCode::kCorrupt, path + ": header length " + ...);
//   ES_CHECK(rows.size() == n);
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace embedscope {

enum class ErrorCode {
  kInvalidArgument,  // a flag or argument is wrong (k = 0, unknown option value)
  kNotFound,         // file, tensor, word or model missing
  kOutOfRange,       // an id or index beyond the table
  kCorrupt,          // a file violates its format
  kUnsupported,      // a valid file using a feature we do not implement (dtype, version)
  kIo,               // the operating system refused (open, read, write, fsync, rename)
};

// Stable lower-case name of a code ("corrupt"), used in JSON and messages.
std::string_view error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// The exit status of an embedscope process (the CLI; an mpirun job a rank ends on its
// failure), documented in `embedscope --help`: one per ErrorCode, 1 for anything else.
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,        // kInvalidArgument, and bad flags
  kExitNotFound = 3,     // kNotFound
  kExitCorrupt = 4,      // kCorrupt
  kExitUnsupported = 5,  // kUnsupported
  kExitIo = 6,           // kIo
  kExitOutOfRange = 7,   // kOutOfRange
};
int exit_code(ErrorCode code);
int exit_code(const std::exception& e);  // an Error's code, else kExitInternal

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const char* msg);

}  // namespace embedscope

#define ES_CHECK(cond)                                                      \
  do {                                                                      \
    if (!(cond)) ::embedscope::check_failed(#cond, __FILE__, __LINE__, ""); \
  } while (0)
#define ES_CHECK_MSG(cond, msg)                                              \
  do {                                                                       \
    if (!(cond)) ::embedscope::check_failed(#cond, __FILE__, __LINE__, msg); \
  } while (0)
#ifdef NDEBUG
#define ES_DCHECK(cond) \
  do {                  \
  } while (0)
#else
#define ES_DCHECK(cond) ES_CHECK(cond)
#endif
