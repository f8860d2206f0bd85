// What a request to the HTTP API may contain, checked field by field, and the errors the API
// answers (docs/http_api.md): every rejection names the field or parameter and the value it
// refused, as an HttpError that api_server.cpp turns into an OpenAI-style error body.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "embedscope/api/text.h"
#include "embedscope/core/error.h"

namespace embedscope::server {

// An error answered to the client.
struct HttpError {
  int status;
  std::string type, code, message;
};

// A 400 invalid_field naming `field`, what it expected and (the first 80 bytes of) what it got.
[[noreturn]] void bad_field(const std::string& field, const std::string& expected,
                            const nlohmann::json& got);
// {"error": {"message", "type", "code"}}.
nlohmann::json error_body(const std::string& type, const std::string& code,
                          const std::string& message);
// A library Error as the API answers it: 400 for invalid arguments, 422 for missing, out of
// range or unsupported things, 500 for the rest.
HttpError from_library(const Error& e);
// Now as 2026-12-03T06:10:21Z (the access log's timestamps).
std::string utc_now();
// A short reason for an error status the HTTP front answers itself.
const char* status_reason(int status);

// Typed field access: each names the field and the value it rejects.
struct Body {
  const nlohmann::json& j;
  bool has(const char* f) const { return j.contains(f) && !j.at(f).is_null(); }
  const nlohmann::json& at(const char* f) const {
    if (!has(f))
      throw HttpError{400, "invalid_request_error", "missing_field",
                      std::string("field '") + f + "' is required"};
    return j.at(f);
  }
  int64_t integer(const char* f, int64_t dflt, int64_t lo, int64_t hi) const {
    if (!has(f)) return dflt;
    const nlohmann::json& v = j.at(f);
    std::string want = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (!v.is_number_integer()) bad_field(f, want, v);
    if (v.is_number_unsigned()
            ? (v.get<uint64_t>() > uint64_t(hi) || int64_t(v.get<uint64_t>()) < lo)
            : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
      bad_field(f, want, v);
    return v.get<int64_t>();
  }
  bool boolean(const char* f, bool dflt) const {
    if (!has(f)) return dflt;
    if (!j.at(f).is_boolean()) bad_field(f, "true or false", j.at(f));
    return j.at(f).get<bool>();
  }
  std::string choice(const char* f, std::initializer_list<const char*> allowed,
                     const char* dflt) const {
    if (!has(f)) return dflt;
    const nlohmann::json& v = j.at(f);
    std::string want = "one of";
    for (const char* a : allowed) want += std::string(" \"") + a + "\"";
    if (!v.is_string()) bad_field(f, want, v);
    for (const char* a : allowed)
      if (v.get<std::string>() == a) return a;
    bad_field(f, want, v);
  }
  std::string string(const char* f, size_t max_bytes) const {
    const nlohmann::json& v = at(f);
    if (!v.is_string()) bad_field(f, "a string", v);
    if (v.get_ref<const std::string&>().size() > max_bytes)
      bad_field(
          f, "a string of at most " + std::to_string(max_bytes) + " bytes",
          nlohmann::json("(" + std::to_string(v.get_ref<const std::string&>().size()) + " bytes)"));
    return v.get<std::string>();
  }
};

// An integer query parameter (?name=N), its default when absent; 400 naming it otherwise.
int64_t query_integer(const httplib::Request& req, const char* name, int64_t dflt, int64_t lo,
                      int64_t hi);

// A list of integer token ids; bad_field names the first element that is not one.
std::vector<int64_t> id_list(const nlohmann::json& v, const std::string& field);
// Standard base64 with padding (RFC 4648).
std::string base64(const void* data, size_t n);

}  // namespace embedscope::server
