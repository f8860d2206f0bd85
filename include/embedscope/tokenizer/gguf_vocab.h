// GGUF vocabularies (llama.cpp's tokenizer.ggml.* keys) as a Tokenizer, with the ids llama.cpp
// and Hugging Face give. The pipeline is assembled from the tokenizer.json engine's parts
// (tokenizer.h), as convert_hf_to_gguf.py's inverse:
//
//   tokenizer.ggml.model  what loads
//   "gpt2"     BPE (tokens, merges). tokenizer.ggml.pre picks the split regexes from one table
//              holding every name llama.cpp's llama-vocab.cpp defines
//              (gguf_pre_tokenizer_names()); the regexes split in order (Split, Isolated), then
//              ByteLevel. kimi-k2 and afmoe, split by code in llama.cpp, are regexes doing what
//              that code does (not what the models' own tokenizer.json files do where they
//              differ). gemma4, granite-embed-multi-311m, sarvam-moe and whitespace run BPE on
//              raw UTF-8 as llama.cpp does: spaces as "▁" (not for whitespace), no ByteLevel,
//              <0xXX> fallback byte by byte for a symbol that is no token (a byte without one
//              dropped), and for gemma4 a newline run that is a token taken whole. The GPT-2,
//              Llama-3 and Qwen2 families take BpeTokenizer's hand-written pre-tokenizers (same
//              ids, faster). No key: GPT-2's regex. "whitespace" loads as "gpt2"; "gemma4" as
//              "gpt2" with pre "gemma4", whatever the file's pre (llama.cpp's reading).
//   "llama"    SentencePiece BPE: merges by highest piece score (leftmost on ties), <0xXX>
//              byte fallback, add_space_prefix (default true: "▁" prepended, spaces -> "▁").
//   "bert"     WordPiece; the converter's "▁word" / "piece" spellings read back as "word" /
//              "##piece"; BertNormalizer lowercasing when the vocabulary has no capital letter
//              outside special tokens (GGUF records no do_lower_case); [CLS] A [SEP].
//   "t5"       SentencePiece Unigram (llama.cpp's UGM): SentencePiece's normalizer with
//              tokenizer.ggml.precompiled_charsmap (UINT8 / INT8 array: the compiled character
//              map, longest match; absent: identity), add_space_prefix (default true) and
//              remove_extra_whitespaces (default false; when true "▁" also starts the first
//              word, as llama.cpp does); unknown id 2, EOS id 1 appended (add_eos_token default
//              true), no BOS, as llama.cpp's defaults.
//
// Token types (tokenizer.ggml.token_type, 0..6): CONTROL (3) and UNKNOWN (2) tokens are special
// added tokens (matched in text unless split_special_tokens; skipped by decode(skip_special)),
// USER_DEFINED (4) ones are added tokens. EncodeOptions::add_special_tokens adds BOS / EOS as
// tokenizer.ggml.add_bos_token / add_eos_token say, with llama.cpp's defaults when absent (BOS
// for "llama" and for the Llama-3 / tekken / chameleon names; [CLS] ... [SEP] for "bert").
//
// Errors, each naming the file, the key, the index and the value (docs/reliability.md T34-T41):
// unknown tokenizer.ggml.model or tokenizer.ggml.pre (the message lists the known names) ->
// kUnsupported; a raw-UTF-8 name's merge with no space after its first byte, token_type
// outside 0..6, a BYTE token that is not <0xXX>, an empty or repeated token, a non-finite score,
// an id key beyond the vocabulary, add_bos_token without a BOS id, a precompiled_charsmap that is
// not a byte array or fails its checks (T44-T50) -> kCorrupt; tokens / scores / token_type of
// different lengths are rejected by GgufFile::open() (kCorrupt).
//
//   auto tok = load_gguf_tokenizer("llama-2-7b.Q4_K_M.gguf");
//   tok->encode_ids("Hello world");   // {15043, 3186}
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "embedscope/formats/gguf.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path);
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file);

// Every tokenizer.ggml.pre name the table maps to split regexes, in table order.
std::vector<std::string> gguf_pre_tokenizer_names();
// The split regexes of a name, in the order they apply; Error(kUnsupported) for a name the
// table does not hold (as load_gguf_tokenizer reports it).
std::vector<std::string> gguf_pre_tokenizer_regexes(const std::string& name);

}  // namespace embedscope
