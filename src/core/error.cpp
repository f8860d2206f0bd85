#include "embedscope/core/error.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>

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

int exit_code(ErrorCode code) {
  // Indexed by ErrorCode, in its declaration order.
  static constexpr int kByCode[] = {kExitUsage,   kExitNotFound,    kExitOutOfRange,
                                    kExitCorrupt, kExitUnsupported, kExitIo};
  static_assert(std::size(kByCode) == size_t(ErrorCode::kIo) + 1);
  return size_t(code) < std::size(kByCode) ? kByCode[size_t(code)] : kExitInternal;
}

int exit_code(const std::exception& e) {
  const auto* err = dynamic_cast<const Error*>(&e);
  return err ? exit_code(err->code()) : kExitInternal;
}

void check_failed(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "embedscope: internal check failed at %s:%d: %s %s\n", file, line, expr,
               msg);
  std::abort();
}

}  // namespace embedscope
