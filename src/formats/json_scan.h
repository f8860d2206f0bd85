// Private helpers shared by the format readers: UTF-8 validation with a byte offset, and a JSON
// parse that rejects duplicate keys (nlohmann::json silently keeps one of them, which is how a
// parser differential smuggles a second tensor entry past another reader: safetensors#401,
// TOB-SFTN-7).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace embedscope::detail {

inline constexpr size_t kValidUtf8 = std::string_view::npos;

// Offset of the first byte that does not start or continue a valid UTF-8 sequence (overlongs,
// surrogates and code points above U+10FFFF are invalid), or kValidUtf8.
size_t find_invalid_utf8(std::string_view s);

// Parses `text` as one JSON value. Integers stay integers (non-negative ones are uint64, never
// routed through double). Throws Error(kCorrupt) "<where>: invalid JSON at byte B: ..." or
// "<where>: duplicate key 'k' in JSON object" (the key printed escaped).
nlohmann::json parse_json_no_duplicates(std::string_view text, const std::string& where);

// A printable, quoted rendering of arbitrary bytes for messages: non-printable bytes as \xNN,
// truncated to `max_len` characters.
std::string quote_for_message(std::string_view s, size_t max_len = 80);

}  // namespace embedscope::detail
