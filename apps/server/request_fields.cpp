#include "request_fields.h"

#include <algorithm>
#include <climits>
#include <ctime>

namespace embedscope::server {

using json = nlohmann::json;

[[noreturn]] void bad_field(const std::string& field, const std::string& expected,
                            const json& got) {
  std::string g = api::dump_json(got, -1);
  if (g.size() > 80) g = g.substr(0, 80) + "...";
  throw HttpError{400, "invalid_request_error", "invalid_field",
                  "field '" + field + "': expected " + expected + ", got " + g};
}

json error_body(const std::string& type, const std::string& code, const std::string& message) {
  return json{{"error", {{"message", message}, {"type", type}, {"code", code}}}};
}

HttpError from_library(const Error& e) {
  std::string code(error_code_name(e.code()));
  switch (e.code()) {
    case ErrorCode::kInvalidArgument:
      return {400, "invalid_request_error", code, e.what()};
    case ErrorCode::kNotFound:
    case ErrorCode::kOutOfRange:
    case ErrorCode::kUnsupported:
      return {422, "invalid_request_error", code, e.what()};
    case ErrorCode::kCorrupt:
    case ErrorCode::kIo:
      break;
  }
  return {500, "server_error", code, e.what()};
}

std::string utc_now() {
  char ts[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return ts;
}

const char* status_reason(int s) {
  switch (s) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    case 416:
      return "range not satisfiable";
    default:
      return s >= 500 ? "internal error" : "bad request";
  }
}

int64_t query_integer(const httplib::Request& req, const char* name, int64_t dflt, int64_t lo,
                      int64_t hi) {
  if (!req.has_param(name)) return dflt;
  std::string v = req.get_param_value(name);
  std::string want = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  int64_t x = 0;
  bool ok = !v.empty() && v.size() <= 18 &&
            std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (ok) x = std::stoll(v);
  if (!ok || x < lo || x > hi)
    throw HttpError{400, "invalid_request_error", "invalid_field",
                    std::string("query parameter '") + name + "': expected " + want + ", got '" +
                        v.substr(0, 80) + "'"};
  return x;
}

std::vector<int64_t> id_list(const json& v, const std::string& field) {
  if (!v.is_array()) bad_field(field, "a list of token ids", v);
  std::vector<int64_t> ids;
  ids.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer())
      bad_field(field + "[" + std::to_string(i) + "]", "an integer token id", v[i]);
    if (v[i].is_number_unsigned() && v[i].get<uint64_t>() > uint64_t(INT64_MAX))
      bad_field(field + "[" + std::to_string(i) + "]", "an integer token id", v[i]);
    ids.push_back(v[i].get<int64_t>());
  }
  return ids;
}

std::string base64(const void* data, size_t n) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string o;
  o.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    o += t[v >> 18 & 63];
    o += t[v >> 12 & 63];
    o += i + 1 < n ? t[v >> 6 & 63] : '=';
    o += i + 2 < n ? t[v & 63] : '=';
  }
  return o;
}

}  // namespace embedscope::server
