// tokenizer.json decoders (tokenizers/src/decoders/*.rs, 0.22) and post-processors
// (processors/*.rs). Decoders here produce bytes: ByteLevel and ByteFallback keep a partial
// character's bytes, so decode_bytes() is exact; the lossy step is Tokenizer::decode().
#include "embedscope/core/error.h"
#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

namespace {

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

class ByteLevelDec final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    std::string out;
    std::vector<std::string> each;
    for (const std::string& t : tokens) {
      std::string bytes;
      bool ok = true;
      for (size_t i = 0; i < t.size() && ok;) {
        uint32_t cp = 0;
        size_t n = next_char(t, i, &cp);
        int b = char_byte(cp);
        if (b < 0) ok = false;
        bytes += char(b);
        i += n;
      }
      if (!ok) bytes = t;  // a token outside the alphabet (an added token) is its own text
      if (whole)
        out += bytes;
      else
        each.push_back(std::move(bytes));
    }
    if (whole) {
      tokens.clear();
      tokens.push_back(std::move(out));
    } else {
      tokens = std::move(each);
    }
  }
};

class MetaspaceDec final : public Decoder {
 public:
  MetaspaceDec(std::string rep, bool prepend) : rep_(std::move(rep)), prepend_(prepend) {}
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string t = replace_all(std::move(tokens[i]), rep_, " ");
      if (whole && i == 0 && prepend_ && !t.empty() && t[0] == ' ') t.erase(0, 1);
      tokens[i] = std::move(t);
    }
  }

 private:
  std::string rep_;
  bool prepend_;
};

int fallback_byte(const std::string& t) {  // "<0x0A>" -> 10, else -1
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    char ch = t[size_t(k)];
    int d = (ch >= '0' && ch <= '9') ? ch - '0' : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

class ByteFallbackDec final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens, bool /*whole*/) const override {
    for (std::string& t : tokens) {
      int b = fallback_byte(t);
      if (b >= 0) t.assign(1, char(b));
    }
  }
};

class FuseDec final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    if (!whole) return;
    std::string out;
    for (const std::string& t : tokens) out += t;
    tokens.clear();
    tokens.push_back(std::move(out));
  }
};

class StripDec final : public Decoder {
 public:
  StripDec(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    if (!whole) return;
    for (std::string& t : tokens) {
      size_t b = 0, e = t.size();
      for (size_t k = 0;
           k < start_ && t.compare(b, content_.size(), content_) == 0 && b + content_.size() <= e;
           ++k)
        b += content_.size();
      for (size_t k = 0; k < stop_ && e >= b + content_.size() &&
                         t.compare(e - content_.size(), content_.size(), content_) == 0;
           ++k)
        e -= content_.size();
      t = t.substr(b, e - b);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDec final : public Decoder {
 public:
  ReplaceDec(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void apply(std::vector<std::string>& tokens, bool /*whole*/) const override {
    for (std::string& t : tokens) t = replace_all(std::move(t), from_, to_);
  }

 private:
  std::string from_, to_;
};

class WordPieceDec final : public Decoder {
 public:
  WordPieceDec(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    if (!whole) return;
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0)
          t.erase(0, prefix_.size());
        else
          t.insert(0, " ");
      }
      if (cleanup_) t = cleanup(std::move(t));
    }
  }

 private:
  // tokenizers' decoders::wordpiece::cleanup (BERT's clean_up_tokenization).
  static std::string cleanup(std::string s) {
    static const std::pair<const char*, const char*> kRules[] = {
        {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
        {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
        {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (auto [from, to] : kRules) s = replace_all(std::move(s), from, to);
    return s;
  }
  std::string prefix_;
  bool cleanup_;
};

class SequenceDec final : public Decoder {
 public:
  explicit SequenceDec(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  void apply(std::vector<std::string>& tokens, bool whole) const override {
    for (const auto& d : parts_) d->apply(tokens, whole);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

size_t count(const Ctx& c, const json& j, const std::string& path, const char* key) {
  const json& v = c.get(j, path, key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > 1'000'000)
    c.corrupt(path + "." + key, v.dump() + " is not an integer in [0, 1000000]");
  return size_t(v.get<uint64_t>());
}

}  // namespace

std::unique_ptr<Decoder> make_decoder(const Ctx& c, const json& j, const std::string& path) {
  const std::string type = c.str(j, path, "type");
  if (type == "ByteLevel") return std::make_unique<ByteLevelDec>();
  if (type == "Metaspace") {
    bool prepend = c.flag(j, path, "add_prefix_space", true);
    auto it = j.find("prepend_scheme");
    if (it != j.end() && it->is_string()) prepend = it->get<std::string>() != "never";
    return std::make_unique<MetaspaceDec>(c.str(j, path, "replacement"), prepend);
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDec>();
  if (type == "Fuse") return std::make_unique<FuseDec>();
  if (type == "Strip")
    return std::make_unique<StripDec>(c.str(j, path, "content"), count(c, j, path, "start"),
                                      count(c, j, path, "stop"));
  if (type == "Replace") {
    const json& pat = c.get(j, path, "pattern");
    if (pat.is_object() && pat.contains("String") && pat["String"].is_string())
      return std::make_unique<ReplaceDec>(pat["String"].get<std::string>(),
                                          c.str(j, path, "content"));
    c.unsupported(path + ".pattern", pat, "{\"String\": ...}");
  }
  if (type == "WordPiece") {
    std::string prefix = j.contains("prefix") ? c.str(j, path, "prefix") : "##";
    return std::make_unique<WordPieceDec>(prefix, c.flag(j, path, "cleanup", true));
  }
  if (type == "Sequence") {
    const json& list = c.get(j, path, "decoders");
    if (!list.is_array()) c.corrupt(path + ".decoders", "is not an array");
    std::vector<std::unique_ptr<Decoder>> parts;
    for (size_t i = 0; i < list.size(); ++i)
      parts.push_back(make_decoder(c, list[i], path + ".decoders[" + std::to_string(i) + "]"));
    return std::make_unique<SequenceDec>(std::move(parts));
  }
  c.unsupported(path + ".type", j["type"],
                "ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, Sequence");
}

namespace {

// One item of a template: a fixed list of ids, or the sequence itself (ids empty).
struct Item {
  std::vector<TokenId> ids;
  bool sequence = false;
};

class Template final : public PostProcessor {
 public:
  explicit Template(std::vector<Item> items) : items_(std::move(items)) {}
  void apply(Encoding& e) const override {
    Encoding out;
    for (const Item& it : items_) {
      if (it.sequence) {
        out.ids.insert(out.ids.end(), e.ids.begin(), e.ids.end());
        out.offsets.insert(out.offsets.end(), e.offsets.begin(), e.offsets.end());
      } else {
        out.ids.insert(out.ids.end(), it.ids.begin(), it.ids.end());
        out.offsets.insert(out.offsets.end(), it.ids.size(), TokenSpan{});
      }
    }
    e = std::move(out);
  }

 private:
  std::vector<Item> items_;
};

class SequencePost final : public PostProcessor {
 public:
  explicit SequencePost(std::vector<std::unique_ptr<PostProcessor>> parts)
      : parts_(std::move(parts)) {}
  void apply(Encoding& e) const override {
    for (const auto& p : parts_) p->apply(e);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

class NoPost final : public PostProcessor {  // ByteLevel: offsets only (not trimmed here)
 public:
  void apply(Encoding& /*e*/) const override {}
};

TokenId checked_id(const Ctx& c, const json& v, const std::string& path, const Vocab& vocab) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
      uint64_t(v.get<int64_t>()) >= vocab.tokens.size())
    c.corrupt(path, v.dump() + " is not an id in [0, " + std::to_string(vocab.tokens.size()) + ")");
  return TokenId(v.get<int64_t>());
}

// ["[CLS]", 101] of BertProcessing / RobertaProcessing.
TokenId pair_id(const Ctx& c, const json& j, const std::string& path, const char* key,
                const Vocab& vocab) {
  const json& v = c.get(j, path, key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_string())
    c.corrupt(path + "." + key, v.dump() + " is not [token, id]");
  return checked_id(c, v[1], path + "." + key + "[1]", vocab);
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const Ctx& c, const json& j,
                                                   const std::string& path, const Vocab& vocab) {
  const std::string type = c.str(j, path, "type");
  if (type == "ByteLevel") return std::make_unique<NoPost>();
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    std::vector<Item> items(3);
    items[0].ids = {pair_id(c, j, path, "cls", vocab)};
    items[1].sequence = true;
    items[2].ids = {pair_id(c, j, path, "sep", vocab)};
    return std::make_unique<Template>(std::move(items));
  }
  if (type == "TemplateProcessing") {
    const json& single = c.get(j, path, "single");
    const json& specials = c.get(j, path, "special_tokens");
    if (!single.is_array()) c.corrupt(path + ".single", "is not an array");
    if (!specials.is_object()) c.corrupt(path + ".special_tokens", "is not an object");
    std::vector<Item> items;
    for (size_t i = 0; i < single.size(); ++i) {
      const std::string ip = path + ".single[" + std::to_string(i) + "]";
      const json& it = single[i];
      Item item;
      if (it.is_object() && it.contains("Sequence")) {
        const json& seq = it["Sequence"];
        std::string id = c.str(seq, ip + ".Sequence", "id");
        if (id != "A") c.unsupported(ip + ".Sequence.id", seq["id"], "A (single sequences)");
        item.sequence = true;
      } else if (it.is_object() && it.contains("SpecialToken")) {
        std::string name = c.str(it["SpecialToken"], ip + ".SpecialToken", "id");
        auto sp = specials.find(name);
        if (sp == specials.end())
          c.corrupt(ip + ".SpecialToken.id",
                    json(name).dump() + " is not in " + path + ".special_tokens");
        const std::string sp_path = path + ".special_tokens[" + json(name).dump() + "]";
        const json& ids = c.get(*sp, sp_path, "ids");
        if (!ids.is_array()) c.corrupt(sp_path + ".ids", "is not an array");
        for (size_t k = 0; k < ids.size(); ++k)
          item.ids.push_back(
              checked_id(c, ids[k], sp_path + ".ids[" + std::to_string(k) + "]", vocab));
      } else {
        c.unsupported(ip, it, "{\"Sequence\": ...}, {\"SpecialToken\": ...}");
      }
      items.push_back(std::move(item));
    }
    return std::make_unique<Template>(std::move(items));
  }
  if (type == "Sequence") {
    const json& list = c.get(j, path, "processors");
    if (!list.is_array()) c.corrupt(path + ".processors", "is not an array");
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (size_t i = 0; i < list.size(); ++i)
      parts.push_back(
          make_post_processor(c, list[i], path + ".processors[" + std::to_string(i) + "]", vocab));
    return std::make_unique<SequencePost>(std::move(parts));
  }
  c.unsupported(path + ".type", j["type"],
                "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence");
}

}  // namespace embedscope::hf
