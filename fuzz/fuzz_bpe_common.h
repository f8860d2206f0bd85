// Shared by the tokenizer fuzz targets (fuzz_bpe_files, fuzz_bpe_json, fuzz_bpe_encode): the
// invariants every loaded tokenizer must keep on arbitrary text. A broken invariant aborts (a
// finding); only embedscope::Error may escape a loader.
//  - decode_bytes(encode(s)) == s for every byte string, decode(encode(s)) == s for valid UTF-8;
//  - pre-token ends strictly increase and cover the text;
//  - with check_slow_twin: encode(s) equals encoder.py's loop (bpe_reference) run on each
//    pre-token, i.e. the whole-token shortcut and the bucketed long-piece merge are exact;
//  - offsets point at each token's first byte; encode_into never writes past its buffer;
//  - with allow_special the bytes still round-trip.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/tokenizer/bpe.h"

namespace embedscope::fuzz {

inline void require(bool ok) {
  if (!ok) std::abort();
}

inline void check_tokenizer(const BpeTokenizer& tok, std::string_view text, bool check_slow_twin) {
  if (text.size() > 4096) text = text.substr(0, 4096);  // bpe_reference is O(n^2) per piece
  std::vector<TokenId> ids = tok.encode(text);
  require(tok.decode_bytes(ids) == text);
  if (utf8_replace_invalid(text) == text) require(tok.decode(ids) == text);
  std::vector<size_t> ends = pre_tokenize(tok.pre_tokenizer(), text);
  size_t begin = 0;
  std::vector<TokenId> slow;
  for (size_t e : ends) {
    require(e > begin && e <= text.size());
    if (check_slow_twin) {
      std::vector<TokenId> piece = tok.bpe_reference(text.substr(begin, e - begin));
      slow.insert(slow.end(), piece.begin(), piece.end());
    }
    begin = e;
  }
  require(begin == text.size());
  if (check_slow_twin) require(slow == ids);
  std::vector<size_t> offsets;
  require(tok.encode_with_offsets(text, &offsets) == ids);
  require(offsets.size() == ids.size());
  size_t at = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    require(offsets[i] == at);
    at += tok.token_bytes(ids[i]).size();
  }
  std::vector<TokenId> half(ids.size() / 2 + 1, -7);
  size_t n = tok.encode_into(text, std::span<TokenId>(half.data(), ids.size() / 2));
  require(n == ids.size() && half.back() == -7);
  for (size_t i = 0; i < ids.size() / 2; ++i) require(half[i] == ids[i]);
  require(tok.decode_bytes(tok.encode(text, /*allow_special=*/true)) == text);
  for (TokenId id : ids) require(!tok.display(id).empty());
}

}  // namespace embedscope::fuzz
