// The tokenizer.json Tokenizer: loading, added tokens, and the encode / decode pipeline
// (tokenizers/src/tokenizer/{mod,added_vocabulary}.rs, 0.22).
#include <unicode/uchar.h>

#include <filesystem>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "tokenizer/hf_impl.h"
#include "tokenizer/utf8.h"

namespace embedscope {

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  return utf8_replace_invalid(decode_bytes(ids, skip_special));
}

namespace hf {
namespace {

constexpr size_t kIdSlack = 65536;  // as in hf_model.cpp: ids beyond entries + slack are corrupt

struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// Leftmost-longest matching of a set of strings (HF uses Aho-Corasick with the same match
// kind); a byte trie walked from each position: O(text x longest token).
class Matcher {
 public:
  void add(const std::string& s, size_t index) {
    if (s.empty()) return;
    uint32_t node = 0;
    for (char ch : s) {
      uint64_t k = (uint64_t(node) << 8) | static_cast<unsigned char>(ch);
      auto it = next_.find(k);
      if (it == next_.end()) {
        it = next_.emplace(k, uint32_t(term_.size())).first;
        term_.push_back(-1);
      }
      node = it->second;
    }
    term_[node] = int32_t(index);
  }
  bool empty() const { return next_.empty(); }
  // Longest match starting at s[i]: (token index, length), or index -1.
  std::pair<int32_t, size_t> longest(std::string_view s, size_t i,
                                     const std::vector<AddedToken>& toks, bool skip_special) const {
    uint32_t node = 0;
    std::pair<int32_t, size_t> best{-1, 0};
    for (size_t k = i; k < s.size(); ++k) {
      auto it = next_.find((uint64_t(node) << 8) | static_cast<unsigned char>(s[k]));
      if (it == next_.end()) break;
      node = it->second;
      int32_t t = term_[node];
      if (t >= 0 && !(skip_special && toks[size_t(t)].special)) best = {t, k + 1 - i};
    }
    return best;
  }

 private:
  std::unordered_map<uint64_t, uint32_t> next_;
  std::vector<int32_t> term_{-1};  // node -> token index
};

bool is_word_char(uint32_t cp) { return u_isalnum(UChar32(cp)) || cp == '_'; }

// Pieces of p between added-token matches; matches go straight to ids. Calls on_text for each
// stretch of plain text (a Piece it may keep) and on_token for each match, in order. p is
// taken by value so that text without matches moves through without a copy (9 bytes per byte).
template <class OnText, class OnToken>
void split_added(Piece p, const Matcher& m, const std::vector<AddedToken>& toks, bool skip_special,
                 OnText on_text, OnToken on_token) {
  if (m.empty()) {
    on_text(std::move(p));
    return;
  }
  size_t text_start = 0;
  for (size_t i = 0; i < p.s.size();) {
    auto [t, len] = m.longest(p.s, i, toks, skip_special);
    uint32_t cp = 0;
    size_t n = next_char(p.s, i, &cp);
    if (t < 0) {
      i += n;
      continue;
    }
    const AddedToken& tok = toks[size_t(t)];
    size_t b = i, e = i + len;
    if (tok.single_word) {
      bool ok = true;
      if (b > 0) {
        size_t q = b - 1;
        while (q > 0 && (static_cast<unsigned char>(p.s[q]) & 0xC0) == 0x80) --q;
        uint32_t pc = 0;
        next_char(p.s, q, &pc);
        ok = !is_word_char(pc);
      }
      if (ok && e < p.s.size()) {
        uint32_t nc = 0;
        next_char(p.s, e, &nc);
        ok = !is_word_char(nc);
      }
      if (!ok) {
        i += n;
        continue;
      }
    }
    if (tok.lstrip) {
      while (b > text_start) {
        size_t q = b - 1;
        while (q > text_start && (static_cast<unsigned char>(p.s[q]) & 0xC0) == 0x80) --q;
        uint32_t pc = 0;
        next_char(p.s, q, &pc);
        if (!is_white_space(pc)) break;
        b = q;
      }
    }
    if (tok.rstrip) {
      while (e < p.s.size()) {
        uint32_t nc = 0;
        size_t k = next_char(p.s, e, &nc);
        if (!is_white_space(nc)) break;
        e += k;
      }
    }
    if (b > text_start) on_text(p.sub(text_start, b));
    on_token(tok, TokenSpan{p.a[b], p.b[e - 1]});
    text_start = i = e;
  }
  if (text_start < p.s.size()) on_text(p.sub(text_start, p.s.size()));
}

// The caller's bytes as a Piece of valid UTF-8: each maximal invalid subpart becomes U+FFFD
// aligned to those bytes.
Piece piece_of_input(std::string_view text) {
  Piece p;
  p.s.reserve(text.size());
  p.a.reserve(text.size());
  p.b.reserve(text.size());
  const auto* u = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t n = utf8::decode(u + i, text.size() - i, &cp);
    if (cp == utf8::kInvalid)
      p.push("\xEF\xBF\xBD", uint32_t(i), uint32_t(i + n));
    else
      p.push(text.substr(i, n), uint32_t(i), uint32_t(i + n));
    i += n;
  }
  return p;
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(std::string_view text, const std::string& name) {
    json j;
    try {
      j = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {  // parse_error, and out_of_range for huge numbers
      throw Error(ErrorCode::kCorrupt, name + ": not valid JSON: " + e.what());
    }
    init(j, name);
  }
  HfTokenizer(const json& j, const std::string& name, std::string kind) : kind_(std::move(kind)) {
    ctx_.internal = true;
    init(j, name);
  }
  // From parse_fast's document.
  HfTokenizer(const json& j, const ModelLists& lists, const std::string& name) {
    init(j, name, &lists);
  }

  void init(const json& j, const std::string& name, const ModelLists* lists = nullptr) {
    ctx_.file = name;
    if (!j.is_object()) ctx_.corrupt("(root)", "is not an object");
    for (const char* key : {"truncation", "padding"}) {
      auto it = j.find(key);
      if (it != j.end() && !it->is_null())
        ctx_.unsupported(key, *it, "null (set truncation / padding per call instead)");
    }
    model_ = make_model(ctx_, ctx_.get(j, "(root)", "model"), vocab_, lists);
    read_added(j);
    vocab_.special.assign(vocab_.tokens.size(), 0);
    for (const AddedToken& t : added_)
      if (t.special) vocab_.special[size_t(t.id)] = 1;
    if (auto it = j.find("normalizer"); it != j.end() && !it->is_null())
      normalizer_ = make_normalizer(ctx_, *it, "normalizer");
    if (auto it = j.find("pre_tokenizer"); it != j.end() && !it->is_null())
      pre_ = make_pre_tokenizer(ctx_, *it, "pre_tokenizer");
    if (auto it = j.find("post_processor"); it != j.end() && !it->is_null())
      post_ = make_post_processor(ctx_, *it, "post_processor", vocab_);
    if (auto it = j.find("decoder"); it != j.end() && !it->is_null())
      decoder_ = make_decoder(ctx_, *it, "decoder");
    for (size_t i = 0; i < added_.size(); ++i) {
      if (added_[i].normalized) {
        Piece p = piece_from(added_[i].content, 0);
        if (normalizer_) normalizer_->apply(p);
        norm_matcher_.add(p.s, i);
      } else {
        raw_matcher_.add(added_[i].content, i);
      }
    }
  }

  std::string describe() const override { return kind_ + " (" + model_->name() + ")"; }
  size_t vocab_size() const override { return vocab_.tokens.size(); }

  Encoding encode(std::string_view text, const EncodeOptions& options) const override {
    Encoding e;
    const bool skip = options.split_special_tokens;
    auto on_token = [&](const AddedToken& t, TokenSpan span) {
      e.ids.push_back(t.id);
      e.offsets.push_back(span);
    };
    std::vector<Piece> pieces;
    auto on_normalized = [&](Piece p) {
      pieces.clear();
      pieces.push_back(std::move(p));
      if (pre_) pre_->apply(pieces);
      for (const Piece& q : pieces) model_->tokenize(q, e.ids, e.offsets);
    };
    auto on_text = [&](Piece p) {
      if (normalizer_) normalizer_->apply(p);
      split_added(std::move(p), norm_matcher_, added_, skip, on_normalized, on_token);
    };
    split_added(piece_of_input(text), raw_matcher_, added_, skip, on_text, on_token);
    if (options.add_special_tokens && post_) post_->apply(e);
    return e;
  }

  std::string decode_bytes(std::span<const TokenId> ids, bool skip_special) const override {
    std::vector<std::string> toks;
    toks.reserve(ids.size());
    for (TokenId id : ids) {
      check_id(id);
      if (skip_special && vocab_.special[size_t(id)]) continue;
      toks.push_back(vocab_.tokens[size_t(id)]);
    }
    if (!decoder_) {
      std::string out;
      for (size_t i = 0; i < toks.size(); ++i) out += (i ? " " : "") + toks[i];
      return out;
    }
    decoder_->apply(toks, true);
    std::string out;
    for (const std::string& t : toks) out += t;
    return out;
  }

  std::optional<std::string> token(TokenId id) const override {
    if (id < 0 || size_t(id) >= vocab_.tokens.size() || !vocab_.present[size_t(id)])
      return std::nullopt;
    return vocab_.tokens[size_t(id)];
  }
  std::optional<TokenId> token_id(std::string_view token) const override {
    TokenId id = vocab_.ids.find(token);
    if (id < 0) return std::nullopt;
    return id;
  }
  std::string display(TokenId id) const override { return display_token(token_bytes(id)); }
  std::string token_bytes(TokenId id) const override {
    check_id(id);
    std::vector<std::string> toks{vocab_.tokens[size_t(id)]};
    if (decoder_ && !vocab_.special[size_t(id)]) decoder_->apply(toks, false);
    std::string out;
    for (const std::string& t : toks) out += t;
    return out;
  }
  bool is_special(TokenId id) const override {
    return id >= 0 && size_t(id) < vocab_.special.size() && vocab_.special[size_t(id)];
  }

 private:
  void check_id(TokenId id) const {
    if (id >= 0 && size_t(id) < vocab_.tokens.size() && !vocab_.present[size_t(id)])
      throw Error(ErrorCode::kOutOfRange,
                  ctx_.file + ": token id " + std::to_string(id) + " has no token (a hole)");
    if (id < 0 || size_t(id) >= vocab_.tokens.size())
      throw Error(ErrorCode::kOutOfRange, ctx_.file + ": token id " + std::to_string(id) +
                                              " is out of range [0, " +
                                              std::to_string(vocab_.tokens.size()) + ")");
  }

  // added_tokens: each {id, content, single_word, lstrip, rstrip, normalized, special}. An id
  // may repeat a model token with the same content; new ids must extend the vocabulary densely.
  void read_added(const json& j) {
    const size_t n_model = vocab_.tokens.size();
    auto it = j.find("added_tokens");
    // BPE and WordPiece fill vocab_.ids already; the other models leave it to this.
    if (vocab_.ids.size() == 0) {
      size_t n_bytes = 0;
      for (const std::string& t : vocab_.tokens) n_bytes += t.size();
      vocab_.ids.reserve(n_model, n_bytes);
      for (size_t i = 0; i < n_model; ++i)
        if (vocab_.present[i]) vocab_.ids.insert(vocab_.tokens[i], TokenId(i));
    }
    if (it == j.end() || it->is_null()) return;
    if (!it->is_array()) ctx_.corrupt("added_tokens", "is not an array");
    const size_t limit = n_model + it->size() + kIdSlack;
    std::unordered_map<std::string, size_t> seen;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& a = (*it)[i];
      const std::string path = "added_tokens[" + std::to_string(i) + "]";
      AddedToken t;
      t.content = ctx_.str(a, path, "content");
      const json& id = ctx_.get(a, path, "id");
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || uint64_t(id.get<int64_t>()) >= limit)
        ctx_.corrupt(path + ".id", id.dump() + " is out of range [0, " + std::to_string(limit) +
                                       ") (model ids + added tokens + " + std::to_string(kIdSlack) +
                                       ")");
      t.id = TokenId(id.get<int64_t>());
      if (t.content.empty()) ctx_.corrupt(path + ".content", "is empty");
      if (auto d = seen.find(t.content); d != seen.end())
        ctx_.corrupt(path + ".content", json(t.content).dump() + " repeats added_tokens[" +
                                            std::to_string(d->second) + "]");
      seen.emplace(t.content, i);
      t.single_word = ctx_.flag(a, path, "single_word", false);
      t.lstrip = ctx_.flag(a, path, "lstrip", false);
      t.rstrip = ctx_.flag(a, path, "rstrip", false);
      t.normalized = ctx_.flag(a, path, "normalized", false);
      t.special = ctx_.flag(a, path, "special", false);
      size_t k = size_t(t.id);
      if (k >= vocab_.tokens.size()) {
        vocab_.tokens.resize(k + 1);
        vocab_.present.resize(k + 1, 0);
      }
      if (vocab_.present[k]) {
        if (vocab_.tokens[k] != t.content)
          ctx_.corrupt(path, "id " + std::to_string(k) + " (" + json(t.content).dump() +
                                 ") is already the id of " + json(vocab_.tokens[k]).dump());
      } else {
        vocab_.present[k] = 1;
        vocab_.tokens[k] = t.content;
      }
      // The added vocabulary wins lookups by content, as in HF.
      vocab_.ids.insert(t.content, t.id, /*replace=*/true);
      added_.push_back(std::move(t));
    }
  }

  std::string kind_ = "tokenizer.json";
  Ctx ctx_;
  Vocab vocab_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<PostProcessor> post_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_;
  Matcher raw_matcher_, norm_matcher_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_internal(const json& j, const std::string& name,
                                         const std::string& kind) {
  try {
    return std::make_unique<HfTokenizer>(j, name, kind);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kCorrupt, name + ": " + e.what());
  }
}

}  // namespace hf

std::unique_ptr<Tokenizer> load_tokenizer_json_text(std::string_view json,
                                                    const std::string& name) {
  // The fast path (simdjson, model.vocab / merges as views) gives the same tokenizer; on any
  // error the reference path below (nlohmann's DOM) runs again, so messages and the acceptance
  // of odd-but-valid files (repeated keys, key order) are exactly the reference's.
  try {
    hf::json root;
    hf::ModelLists lists;
    if (hf::parse_fast(json, &root, &lists))
      return std::make_unique<hf::HfTokenizer>(root, lists, name);
  } catch (const Error&) {
  } catch (const nlohmann::json::exception&) {
  }
  try {
    return std::make_unique<hf::HfTokenizer>(json, name);
  } catch (const nlohmann::json::exception& e) {  // every access is checked; this is a backstop
    throw Error(ErrorCode::kCorrupt, name + ": " + e.what());
  }
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = path;
  if (path.ends_with(".model") && !fs::is_directory(path, ec))
    return load_sentencepiece_model(path);
  if (fs::is_directory(path, ec)) {
    file = (fs::path(path) / "tokenizer.json").string();
    if (!fs::exists(file, ec)) {
      // A GPT-2-style folder (vocab.json + merges.txt) goes to the fast path.
      if (auto bpe = BpeTokenizer::find_in_dir(path)) return make_tokenizer(std::move(*bpe));
      for (const char* spm : {"tokenizer.model", "spiece.model"})
        if (fs::exists(fs::path(path) / spm, ec))
          return load_sentencepiece_model((fs::path(path) / spm).string());
      throw Error(ErrorCode::kNotFound,
                  path + ": no tokenizer.json or vocab.json + merges.txt in this folder");
    }
  }
  auto m = MappedFile::open(file);
  std::string_view text(reinterpret_cast<const char*>(m->data()), m->size());
  return load_tokenizer_json_text(text, file);
}

}  // namespace embedscope
