// Internal glue between the GGUF vocabulary reader (gguf_vocab.cpp) and BpeTokenizer's loader.
#pragma once

#include <optional>

#include "embedscope/formats/gguf.h"
#include "embedscope/tokenizer/bpe.h"

namespace embedscope {

// What tokenizer.ggml.pre maps to when BpeTokenizer's hand-written pre-tokenizer implements its
// split regexes (one regex that pre_tokenizer_for_pattern() knows); kind is nullopt for the
// other known names. Error(kUnsupported) for a name the table does not hold.
struct GgufBpeFastPath {
  std::optional<PreTokenizerKind> kind;
  bool ignore_merges = false;
};
GgufBpeFastPath gguf_bpe_fast_path(const GgufFile& g);

// tokenizer.ggml.tokens / merges of a "gpt2" GGUF as a BpeTokenizer.
BpeTokenizer bpe_from_gguf(const GgufFile& g, PreTokenizerKind kind, bool ignore_merges);

}  // namespace embedscope
