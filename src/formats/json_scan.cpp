#include "formats/json_scan.h"

#include <cstdint>
#include <set>
#include <vector>

#include "embedscope/core/error.h"

namespace embedscope::detail {

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else
      return i;  // continuation byte, overlong lead (c0, c1) or > f4
    if (len > n - i) return i;
    for (size_t k = 1; k < len; ++k) {
      unsigned cc = p[i + k];
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong 3/4-byte forms, UTF-16 surrogates, beyond Unicode.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return kValidUtf8;
}

std::string quote_for_message(std::string_view s, size_t max_len) {
  std::string out = "'";
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "'";
}

nlohmann::json parse_json_no_duplicates(std::string_view text, const std::string& where) {
  // One key set per open object; nlohmann reports keys in document order, so the innermost
  // open object owns each key.
  std::vector<std::set<std::string>> open;
  auto cb = [&](int /*depth*/, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) {
      open.emplace_back();
    } else if (ev == E::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (ev == E::key && !open.empty()) {
      const auto& k = parsed.get_ref<const std::string&>();
      if (!open.back().insert(k).second)
        throw Error(ErrorCode::kCorrupt,
                    where + ": duplicate key " + quote_for_message(k) + " in a JSON object");
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorCode::kCorrupt,
                where + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kCorrupt, where + ": invalid JSON: " + e.what());
  }
}

}  // namespace embedscope::detail
