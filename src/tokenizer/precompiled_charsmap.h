// SentencePiece's compiled normalizer (NormalizerSpec.precompiled_charsmap; T5, ALBERT, mT5,
// XLM-R): the reader and the two ways of applying it (internal to the tokenizer module).
//
// Byte layout (sentencepiece normalizer.cc DecodePrecompiledCharsMap, spm_precompiled):
//   uint32 LE trie_size                     bytes of the trie that follows
//   uint32 LE units[trie_size / 4]          darts-clone double array: bit 31 marks a value unit
//                                           (value = bits 0..30); otherwise label = bits 0..7,
//                                           has_leaf = bit 8, offset = (u >> 10) << ((u >> 6) & 8)
//   char      strings[]                     NUL-terminated replacements; a key's value is the
//                                           byte offset of its replacement here
// A key is a run of input bytes; the walk starts at base = units[0].offset, steps to
// child = base ^ byte, requires label(units[child]) == byte, then base = child ^ offset(child);
// when the child has_leaf, units[base] holds the value of the key read so far.
//
// Invariants once read (each violation is Error(kCorrupt) naming the field, the unit or offset,
// the value and the limit; docs/reliability.md T44-T50): trie_size a multiple of 4, at least one
// unit and less than the blob; every node reachable from the root lies in the array together with
// its 256 child slots; the walk has no cycle; every reachable key ends on a UTF-8 character
// boundary; every reachable value is an offset into strings whose replacement ends with a NUL
// before the end of the blob and is valid UTF-8. Edges that valid UTF-8 can never follow are
// not walked (nor checked). So matching needs no bounds checks and keeps the text valid UTF-8.
//
// Hand-written: no Debian library exposes this format (libsentencepiece-dev has it inside its
// Normalizer, which takes a whole ModelProto and gives no per-key access; the project does not
// link libsentencepiece, whose protobuf dependency the .model reader avoids); the walk is the
// 20 lines of darts-clone's commonPrefixSearch.
//
// Thread-safety: immutable after read(); share it freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

class CharsMap {
 public:
  // Reads and checks `blob`; `what` starts every error message ("<file>: <field>").
  static std::shared_ptr<const CharsMap> read(std::string_view blob, const std::string& what);

  // The longest key that prefixes s (SentencePiece's NormalizePrefix): its length (0 when none)
  // and, in *out, its replacement.
  size_t longest(std::string_view s, std::string_view* out) const;
  // The shortest key that prefixes s (spm_precompiled's transform, which Hugging Face's
  // Precompiled normalizer uses). Both stop at a NUL byte: darts-clone keys cannot hold one.
  size_t shortest(std::string_view s, std::string_view* out) const;

 private:
  template <bool kLongest>
  size_t match(std::string_view s, std::string_view* out) const;
  std::vector<uint32_t> units_;
  std::string strings_;
};

// SentencePiece's Normalizer::Normalize over a whole segment: the character map (longest match;
// none = identity), then the NormalizerSpec flags (normalizer.cc): remove_extra_whitespaces drops
// leading and trailing spaces and squeezes runs, add_dummy_prefix puts one space first (last
// with treat_whitespace_as_suffix), escape_whitespaces writes each space as U+2581.
struct SpmNormalizerSpec {
  std::shared_ptr<const CharsMap> map;  // null: identity
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true,
       treat_whitespace_as_suffix = false;
};
std::unique_ptr<Normalizer> make_spm_normalizer(SpmNormalizerSpec spec);

// Hugging Face's "Precompiled" normalizer (tokenizers normalizers/precompiled.rs): for each
// extended grapheme cluster shorter than 6 bytes, the replacement of its shortest matching key
// replaces the whole cluster; otherwise each character is replaced by its own match or kept.
std::unique_ptr<Normalizer> make_hf_precompiled(std::shared_ptr<const CharsMap> map);

// Standard base64 (RFC 4648, '=' padding) as tokenizer.json stores the charsmap; Error(kCorrupt)
// naming `what` and the offending position.
std::string base64_decode(std::string_view text, const std::string& what);

}  // namespace embedscope::hf
