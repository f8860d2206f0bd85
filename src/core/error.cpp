#include "embedscope/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace embedscope {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kOutOfRange:
      return "out_of_range";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kIo:
      return "io";
  }
  return "unknown";
}

void check_failed(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "embedscope: internal check failed at %s:%d: %s %s\n", file, line, expr,
               msg);
  std::abort();
}

}  // namespace embedscope
