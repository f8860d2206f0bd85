// Vocabularies from Hugging Face tokenizer files (see model_vocab.h). vocab.json is scanned by
// hand: it is a flat {"token": id} object and GPT-2's is 1 MB, which a DOM parser reads several
// times slower than `embedscope info` may take in total.
#include "model_vocab.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"

namespace embedscope::detail {

namespace {

constexpr uint64_t kMaxTokenId = 1u << 24;

void put_utf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += char(cp);
  } else if (cp < 0x800) {
    *out += char(0xC0 | (cp >> 6));
    *out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += char(0xE0 | (cp >> 12));
    *out += char(0x80 | ((cp >> 6) & 0x3F));
    *out += char(0x80 | (cp & 0x3F));
  } else {
    *out += char(0xF0 | (cp >> 18));
    *out += char(0x80 | ((cp >> 12) & 0x3F));
    *out += char(0x80 | ((cp >> 6) & 0x3F));
    *out += char(0x80 | (cp & 0x3F));
  }
}

// Byte-level alphabet inverse: code point -> byte, -1 when not in the alphabet.
const std::array<int, 512>& byte_level_inverse() {
  static const std::array<int, 512> inv = [] {
    std::array<int, 512> a;
    a.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      if (printable)
        a[b] = b;
      else
        a[256 + n++] = b;
    }
    return a;
  }();
  return inv;
}

// Minimal scanner for a flat JSON object of string -> non-negative integer.
class FlatJson {
 public:
  FlatJson(std::string_view s, const std::string& path) : s_(s), path_(path) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::kCorrupt, path_ + ": " + what + " at byte " + std::to_string(pos_));
  }
  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  uint32_t hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= uint32_t(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }
  std::string str() {
    if (!eat('"')) fail("expected a string");
    std::string out;
    while (true) {
      // Copy the run up to the next quote, backslash or control byte in one append.
      size_t run = pos_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' &&
             static_cast<unsigned char>(s_[run]) >= 0x20)
        ++run;
      out.append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (s_.size() - pos_ < 6 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
              fail("lone surrogate");
            pos_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("lone low surrogate");
          }
          put_utf8(cp, &out);
          break;
        }
        default:
          fail(std::string("bad escape \\") + e);
      }
    }
  }
  uint64_t uint() {
    ws();
    uint64_t v = 0;
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + uint64_t(s_[pos_++] - '0');
      if (v > kMaxTokenId) fail("token id above " + std::to_string(kMaxTokenId));
    }
    if (pos_ == start) fail("expected a non-negative integer token id");
    return v;
  }
  bool at_end() {
    ws();
    return pos_ == s_.size();
  }

 private:
  std::string_view s_;
  const std::string& path_;
  size_t pos_ = 0;
};

void place(HfVocab* v, uint64_t id, std::string tok, const std::string& path, size_t n_entries) {
  // Ids may have gaps, but not so many that a small file allocates a huge table.
  if (id > 16 * uint64_t(n_entries) + 1024)
    throw Error(ErrorCode::kCorrupt, path + ": token id " + std::to_string(id) +
                                         " is far beyond the " + std::to_string(n_entries) +
                                         " entries of the file");
  if (id >= v->tokens.size()) v->tokens.resize(id + 1);
  if (v->tokens[id].empty()) ++v->n_named;
  v->tokens[id] = std::move(tok);
}

void read_vocab_json(const std::string& path, HfVocab* v) {
  std::string text = read_small_file(path, size_t(256) << 20);
  size_t approx = 0;
  for (char c : text) approx += c == ':';
  // Ids are usually dense, so one reservation avoids moving every token as the table grows;
  // capped so that a file of colons cannot reserve more than ~32 MB up front.
  v->tokens.reserve(std::min<size_t>(approx, size_t(1) << 20));
  FlatJson j(text, path);
  if (!j.eat('{')) j.fail("expected '{'");
  if (!j.eat('}')) {
    do {
      std::string tok = j.str();
      if (!j.eat(':')) j.fail("expected ':'");
      uint64_t id = j.uint();
      std::string raw;
      if (decode_byte_level(tok, &raw)) tok = std::move(raw);
      place(v, id, std::move(tok), path, approx);
    } while (j.eat(','));
    if (!j.eat('}')) j.fail("expected ',' or '}'");
  }
  if (!j.at_end()) j.fail("trailing data after the object");
  v->source = "vocab.json";
}

void read_vocab_txt(const std::string& path, HfVocab* v) {
  std::string text = read_small_file(path, size_t(256) << 20);
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string tok = text.substr(start, nl - start);
    if (!tok.empty() && tok.back() == '\r') tok.pop_back();
    v->tokens.push_back(std::move(tok));
    ++v->n_named;
    start = nl + 1;
  }
  v->source = "vocab.txt";
}

bool is_byte_level(const nlohmann::json& node) {
  if (!node.is_object()) return false;
  if (node.value("type", "") == "ByteLevel") return true;
  for (const char* k : {"pretokenizers", "decoders"})
    if (node.contains(k) && node[k].is_array())
      for (const auto& c : node[k])
        if (is_byte_level(c)) return true;
  return false;
}

void read_tokenizer_json(const std::string& path, HfVocab* v) {
  std::string text = read_small_file(path, size_t(512) << 20);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("model") || !j["model"].is_object())
    throw Error(ErrorCode::kCorrupt, path + ": not a tokenizers JSON file (no \"model\" object)");
  bool byte_level = (j.contains("decoder") && is_byte_level(j["decoder"])) ||
                    (j.contains("pre_tokenizer") && is_byte_level(j["pre_tokenizer"]));
  const auto& vocab = j["model"]["vocab"];
  size_t n = vocab.size() + (j.contains("added_tokens") ? j["added_tokens"].size() : 0);
  auto add = [&](std::string tok, const nlohmann::json& id) {
    if (!id.is_number_unsigned())
      throw Error(ErrorCode::kCorrupt,
                  path + ": token '" + tok.substr(0, 40) + "' has a non-integer id");
    std::string raw;
    if (byte_level && decode_byte_level(tok, &raw)) tok = std::move(raw);
    place(v, id.get<uint64_t>(), std::move(tok), path, n);
  };
  if (vocab.is_object()) {
    for (auto it = vocab.begin(); it != vocab.end(); ++it) add(it.key(), it.value());
  } else if (vocab.is_array()) {  // Unigram: [[piece, score], ...], id = position
    uint64_t id = 0;
    for (const auto& e : vocab) {
      if (!e.is_array() || e.empty() || !e[0].is_string())
        throw Error(ErrorCode::kCorrupt, path + ": Unigram vocab entry " + std::to_string(id) +
                                             " is not [piece, score]");
      place(v, id++, e[0].get<std::string>(), path, n);
    }
  } else {
    throw Error(ErrorCode::kCorrupt, path + ": model.vocab is neither an object nor an array");
  }
  if (j.contains("added_tokens") && j["added_tokens"].is_array())
    for (const auto& a : j["added_tokens"])
      if (a.is_object() && a.contains("id") && a.contains("content") && a["content"].is_string())
        place(v, a["id"].is_number_unsigned() ? a["id"].get<uint64_t>() : kMaxTokenId + 1,
              a["content"].get<std::string>(), path, n);
  v->source = "tokenizer.json";
}

}  // namespace

bool decode_byte_level(std::string_view t, std::string* out) {
  const auto& inv = byte_level_inverse();
  std::string r;
  r.reserve(t.size());
  for (size_t k = 0; k < t.size();) {
    unsigned char c = static_cast<unsigned char>(t[k]);
    uint32_t cp;
    if (c < 0x80) {
      cp = c;
      k += 1;
    } else if ((c & 0xE0) == 0xC0 && k + 1 < t.size()) {
      cp = (uint32_t(c & 0x1F) << 6) | (static_cast<unsigned char>(t[k + 1]) & 0x3F);
      k += 2;
    } else {
      return false;  // three-byte and longer sequences are above U+0800: not in the alphabet
    }
    if (cp >= inv.size() || inv[cp] < 0) return false;
    r += char(inv[cp]);
  }
  *out = std::move(r);
  return true;
}

std::vector<std::string> find_tokenizer_files(const std::string& dir) {
  static const char* kNames[] = {"tokenizer.json",
                                 "vocab.json",
                                 "merges.txt",
                                 "vocab.txt",
                                 "tokenizer.model",
                                 "spiece.model",
                                 "sentencepiece.bpe.model",
                                 "tokenizer_config.json",
                                 "special_tokens_map.json",
                                 "added_tokens.json"};
  std::vector<std::string> out;
  for (const char* n : kNames)
    if (file_exists(dir + "/" + n)) out.push_back(n);
  return out;
}

bool read_hf_vocab(const std::string& dir, HfVocab* out) {
  HfVocab v;
  if (file_exists(dir + "/vocab.json"))
    read_vocab_json(dir + "/vocab.json", &v);
  else if (file_exists(dir + "/vocab.txt"))
    read_vocab_txt(dir + "/vocab.txt", &v);
  else if (file_exists(dir + "/tokenizer.json"))
    read_tokenizer_json(dir + "/tokenizer.json", &v);
  else
    return false;
  *out = std::move(v);
  return true;
}

}  // namespace embedscope::detail
