// SentencePiece .model -> the tokenizer.json pipeline (see sentencepiece.h). The wire format
// (protobuf encoding): each field is a varint key (field number << 3 | wire type) then a varint
// (type 0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5). Fields:
//   ModelProto      1 pieces (message, repeated)  2 trainer_spec  3 normalizer_spec
//   SentencePiece   1 piece (string)  2 score (float, type 5)  3 type (varint: 1 NORMAL,
//                   2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE)
//   TrainerSpec     3 model_type (1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR)
//                   24 treat_whitespace_as_suffix  35 byte_fallback
//   NormalizerSpec  1 name  2 precompiled_charsmap  3 add_dummy_prefix (default true)
//                   4 remove_extra_whitespaces (default true)  5 escape_whitespaces (true)
// Every other field is skipped by its wire type.
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/sentencepiece.h"
#include "tokenizer/hf_impl.h"
#include "tokenizer/precompiled_charsmap.h"

namespace embedscope {

namespace {

using nlohmann::json;

constexpr size_t kMaxPieces = size_t(1) << 24;

class Wire {
 public:
  Wire(std::string_view bytes, size_t base, const std::string& name)
      : b_(bytes), base_(base), name_(name) {}
  bool done() const { return pos_ >= b_.size(); }
  size_t offset() const { return base_ + pos_; }

  [[noreturn]] void corrupt(const std::string& what) const {
    throw Error(ErrorCode::kCorrupt, name_ + ": byte offset " + std::to_string(offset()) + ": " +
                                         what + " (not a SentencePiece model?)");
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) corrupt("truncated varint");
      const auto c = static_cast<unsigned char>(b_[pos_++]);
      v |= uint64_t(c & 0x7F) << shift;
      if (!(c & 0x80)) return v;
    }
    corrupt("varint longer than 10 bytes");
  }
  // A length-delimited field's bytes; `base` of a sub-reader is its offset in the file.
  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > b_.size() - pos_)
      corrupt("length " + std::to_string(n) + " runs past the " + std::to_string(b_.size() - pos_) +
              " bytes left");
    std::string_view s = b_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return s;
  }
  Wire sub() {
    std::string_view s = bytes();
    return Wire(s, offset() - s.size(), name_);
  }
  float fixed32() {
    if (b_.size() - pos_ < 4) corrupt("truncated 32-bit field");
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u |= uint32_t(static_cast<unsigned char>(b_[pos_ + k])) << (8 * k);
    pos_ += 4;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  void skip(unsigned wire) {
    switch (wire) {
      case 0:
        varint();
        return;
      case 1:
        if (b_.size() - pos_ < 8) corrupt("truncated 64-bit field");
        pos_ += 8;
        return;
      case 2:
        bytes();
        return;
      case 5:
        fixed32();
        return;
      default:
        corrupt("wire type " + std::to_string(wire) + " is not used by SentencePiece models");
    }
  }
  // Next key: field number and wire type.
  std::pair<uint64_t, unsigned> key() {
    const uint64_t k = varint();
    return {k >> 3, unsigned(k & 7)};
  }
  void expect(unsigned got, unsigned want, const char* field) {
    if (got != want)
      corrupt(std::string(field) + " has wire type " + std::to_string(got) + ", expected " +
              std::to_string(want));
  }

 private:
  std::string_view b_;
  size_t pos_ = 0, base_ = 0;
  const std::string& name_;
};

struct Piece {
  std::string text;
  float score = 0;
  uint64_t type = 1;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_model_bytes(std::string_view bytes,
                                                          const std::string& name) {
  Wire w(bytes, 0, name);
  std::vector<Piece> pieces;
  uint64_t model_type = 1;
  bool byte_fallback = false, add_dummy_prefix = true, remove_extra_ws = true, escape_ws = true,
       ws_suffix = false;
  std::string norm_name;
  std::string_view charsmap;
  while (!w.done()) {
    auto [field, wire] = w.key();
    if (field == 1) {
      w.expect(wire, 2, "ModelProto.pieces");
      if (pieces.size() >= kMaxPieces)
        w.corrupt("more than " + std::to_string(kMaxPieces) + " pieces");
      Wire p = w.sub();
      Piece piece;
      while (!p.done()) {
        auto [f, t] = p.key();
        if (f == 1) {
          p.expect(t, 2, "SentencePiece.piece");
          piece.text = std::string(p.bytes());
        } else if (f == 2) {
          p.expect(t, 5, "SentencePiece.score");
          piece.score = p.fixed32();
        } else if (f == 3) {
          p.expect(t, 0, "SentencePiece.type");
          piece.type = p.varint();
        } else {
          p.skip(t);
        }
      }
      pieces.push_back(std::move(piece));
    } else if (field == 2) {
      w.expect(wire, 2, "ModelProto.trainer_spec");
      Wire t = w.sub();
      while (!t.done()) {
        auto [f, wt] = t.key();
        if (f == 3 && wt == 0)
          model_type = t.varint();
        else if (f == 35 && wt == 0)
          byte_fallback = t.varint() != 0;
        else if (f == 24 && wt == 0)
          ws_suffix = t.varint() != 0;
        else
          t.skip(wt);
      }
    } else if (field == 3) {
      w.expect(wire, 2, "ModelProto.normalizer_spec");
      Wire n = w.sub();
      while (!n.done()) {
        auto [f, wt] = n.key();
        if (f == 1 && wt == 2)
          norm_name = std::string(n.bytes());
        else if (f == 2 && wt == 2)
          charsmap = n.bytes();
        else if (f == 3 && wt == 0)
          add_dummy_prefix = n.varint() != 0;
        else if (f == 4 && wt == 0)
          remove_extra_ws = n.varint() != 0;
        else if (f == 5 && wt == 0)
          escape_ws = n.varint() != 0;
        else
          n.skip(wt);
      }
    } else {
      w.skip(wire);
    }
  }
  auto unsupported = [&](const std::string& what) {
    throw Error(ErrorCode::kUnsupported, name + ": " + what);
  };
  if (pieces.empty())
    throw Error(ErrorCode::kCorrupt, name + ": no pieces (not a SentencePiece model?)");
  if (model_type != 1 && model_type != 2)
    unsupported("trainer_spec.model_type " + std::to_string(model_type) +
                " is not supported (1 = UNIGRAM, 2 = BPE)");
  const bool bpe = model_type == 2;
  if (charsmap.empty() && norm_name != "identity" && !norm_name.empty())
    unsupported("normalizer_spec.name \"" + norm_name +
                "\" without a precompiled_charsmap is not supported (identity, or a map)");
  if (!escape_ws) unsupported("normalizer_spec.escape_whitespaces false is not supported (true)");
  // SentencePiece's own normalizer (precompiled_charsmap.h): the map, then the whitespace flags.
  json norm = {{"type", "SentencePiece"},
               {"charsmap_field", "normalizer_spec.precompiled_charsmap"},
               {"add_dummy_prefix", add_dummy_prefix},
               {"remove_extra_whitespaces", remove_extra_ws},
               {"escape_whitespaces", escape_ws},
               {"treat_whitespace_as_suffix", ws_suffix}};
  if (!charsmap.empty())
    norm["precompiled_charsmap"] =
        json::binary(std::vector<uint8_t>(charsmap.begin(), charsmap.end()));

  json vocab = json::array(), added = json::array(), types = json::array();
  std::unordered_map<std::string, size_t> seen;
  std::optional<size_t> unk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    const std::string where = name + ": pieces[" + std::to_string(i) + "]";
    if (p.text.empty()) throw Error(ErrorCode::kCorrupt, where + " is empty");
    if (auto d = seen.find(p.text); d != seen.end())
      throw Error(ErrorCode::kCorrupt, where + " " + json(p.text).dump() + " repeats pieces[" +
                                           std::to_string(d->second) + "]");
    if (p.type < 1 || p.type > 6)
      throw Error(ErrorCode::kCorrupt,
                  where + " type " + std::to_string(p.type) + " is not a piece type (1..6)");
    if (utf8_replace_invalid(p.text) != p.text)
      throw Error(ErrorCode::kCorrupt, where + " is not valid UTF-8");
    seen.emplace(p.text, i);
    if (p.type == 2 && !unk) unk = i;
    vocab.push_back(json::array({p.text, double(p.score)}));
    types.push_back(p.type);
    if (p.type == 2 || p.type == 3 || p.type == 4)
      added.push_back({{"id", i},
                       {"content", p.text},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", p.type == 4},
                       {"special", p.type != 4}});
  }
  if (!unk) throw Error(ErrorCode::kCorrupt, name + ": no piece of type UNKNOWN (2)");
  const std::string scheme = add_dummy_prefix ? "always" : "never";
  json decoder = {{"type", "Metaspace"},
                  {"replacement", "\xE2\x96\x81"},
                  {"prepend_scheme", scheme},
                  {"split", true}};
  if (byte_fallback) {
    decoder = {{"type", "Sequence"},
               {"decoders",
                {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                 {{"type", "ByteFallback"}},
                 {{"type", "Fuse"}}}}};
    if (add_dummy_prefix)
      decoder["decoders"].push_back(
          {{"type", "Strip"}, {"content", " "}, {"start", 1u}, {"stop", 0u}});
  }
  json j = {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", added},
            {"normalizer", norm},
            {"pre_tokenizer", nullptr},
            {"post_processor", nullptr},
            {"decoder", decoder},
            {"model",
             {{"type", "Unigram"},
              {"unk_id", *unk},
              {"vocab", vocab},
              {"byte_fallback", byte_fallback}}}};
  if (bpe) {
    j["model"] = {{"type", "SentencePieceBPE"},
                  {"unk_id", *unk},
                  {"vocab", vocab},
                  {"types", types},
                  {"byte_fallback", byte_fallback}};
    return hf::load_internal(j, name, "SentencePiece .model");
  }
  // Unigram: the text is cut before each "▁" (pieces of models trained with
  // split_by_whitespace start there), as Hugging Face's Metaspace split does; the normalizer has
  // already written the "▁"s. With treat_whitespace_as_suffix the lattice spans the whole text.
  if (!ws_suffix)
    j["pre_tokenizer"] = {{"type", "Metaspace"},
                          {"replacement", "\xE2\x96\x81"},
                          {"prepend_scheme", "never"},
                          {"split", true}};
  return hf::load_internal(j, name, "SentencePiece .model");
}

std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::string& path) {
  auto m = MappedFile::open(path);
  return load_sentencepiece_model_bytes(
      std::string_view(reinterpret_cast<const char*>(m->data()), m->size()), path);
}

}  // namespace embedscope
