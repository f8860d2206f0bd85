// SentencePiece `.model` files (sentencepiece_model.proto's ModelProto), read by our own small
// protobuf reader and run by the tokenizer.json pipeline (tokenizer.h): the file's pieces,
// scores and types become a Unigram model (model_type UNIGRAM) or SentencePiece's BPE
// (model_type BPE: merge the adjacent pair whose concatenation is the highest-scoring piece,
// leftmost on ties, over the whole text, as sentencepiece's bpe_model.cc; an internal model of
// the pipeline shared with GGUF "llama" vocabularies, gguf_vocab.h). The normalizer spec becomes
// SentencePiece's own normalizer (normalizer.cc; src/tokenizer/precompiled_charsmap.h): the
// precompiled_charsmap (longest match) when present, then remove_extra_whitespaces,
// add_dummy_prefix (or a suffix with TrainerSpec.treat_whitespace_as_suffix) and "▁" for spaces.
// Unigram text is then cut before each "▁" (Metaspace split); the decoder is Metaspace, or with
// byte fallback the Replace / ByteFallback / Fuse / Strip decoder, as Hugging Face's converter
// (convert_slow_tokenizer.py) writes them for these settings.
//
// Why our own reader and not Debian's libsentencepiece: the format is three small messages
// (ModelProto.pieces {piece, score, type}, TrainerSpec.{model_type, byte_fallback},
// NormalizerSpec.{name, precompiled_charsmap, add_dummy_prefix, remove_extra_whitespaces,
// escape_whitespaces}) that a bounds-checked wire-format reader covers in ~150 lines; going through
// the pipeline gives one implementation of Unigram, BPE, byte fallback, offsets, decode and display
// for .model files, tokenizer.json and GGUF vocabularies, which hold the same pieces without the
// protobuf. Linking libsentencepiece would add protobuf-lite at start-up (the CLI's `info` has a 20
// ms budget), a second tokenizer implementation to keep in step, and a parser we cannot fuzz on our
// terms. python3-sentencepiece stays the reference in the tests.
//
// Supported: model_type UNIGRAM and BPE, identity or a precompiled_charsmap (nmt_nfkc, nfkc_cf,
// custom rules: T5, ALBERT, XLM-R), any whitespace flags. Error(kUnsupported) naming the field
// and the value: other model types (WORD, CHAR), escape_whitespaces false, a rule name other than
// identity with no charsmap. Malformed bytes are Error(kCorrupt) naming the byte offset: a
// truncated varint or field, a length beyond the message, a wire type the schema does not use,
// no pieces, an empty or repeated piece, no UNKNOWN piece, a BYTE piece that is not <0xXX>; a
// bad charsmap names normalizer_spec.precompiled_charsmap (docs/reliability.md T44-T50).
//
// Ids are the pieces' positions. CONTROL and UNKNOWN pieces are special added tokens (matched
// in text unless split_special_tokens), USER_DEFINED pieces are added tokens.
//
//   auto tok = load_sentencepiece_model("spiece.model");
//   tok->encode_ids("Hello world");   // the ids python3-sentencepiece's encode() gives
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

// Error(kNotFound / kIo) for an unreadable file; kCorrupt / kUnsupported as above.
std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::string& path);
// The same on bytes in memory (fuzz targets); `name` appears in messages.
std::unique_ptr<Tokenizer> load_sentencepiece_model_bytes(std::string_view bytes,
                                                          const std::string& name);

}  // namespace embedscope
