// GGUF vocabularies (tokenizer.ggml.*) as tokenizers: one table of llama.cpp's pre-tokenizer
// names and their split regexes, and for each tokenizer.ggml.model the tokenizer.json-shaped
// pipeline that the Hugging Face engine (hf_*.cpp) runs.
#include "embedscope/tokenizer/gguf_vocab.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "tokenizer/gguf_impl.h"
#include "tokenizer/hf_impl.h"

namespace embedscope {

namespace {

using nlohmann::json;

// llama.cpp's pre-tokenizer names (src/llama-vocab.cpp, llama_vocab::impl::load) and the
// regexes its llm_tokenizer_bpe splits with, applied in order, each splitting the pieces the
// previous ones left (Hugging Face's Split with behaviour Isolated). Where llama.cpp rewrote a
// tokenizer.json regex for std::regex (case-insensitive groups spelled out, possessive
// quantifiers dropped), the row holds the tokenizer.json original, which PCRE2 runs as Hugging
// Face does. Code points that Unicode normalization would change (Greek oxia letters, the Ohm
// and Kelvin signs) are written as \x{...} so that no editor or tool can alter the ranges.
// ignore_merges and add_bos are llama.cpp's defaults for the name (add_bos is overridden by
// tokenizer.ggml.add_bos_token). `text` is what the BPE runs on: llama.cpp's byte_encode (GPT-2's
// byte-to-character map, ByteLevel) or raw UTF-8 (byte_encode false), where llama.cpp also
// writes spaces as "▁" for the names that set escape_whitespaces.
enum class BpeText { kByteLevel, kRaw, kRawEscaped };
struct PreRow {
  std::vector<std::string_view> names;
  std::vector<std::string_view> regexes;
  bool ignore_merges = false;
  bool add_bos = false;
  BpeText text = BpeText::kByteLevel;
  bool whole_newline_runs = false;  // gemma4: a piece of '\n's that is a token is taken whole
};

constexpr std::string_view kGpt2Re =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Re =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Re =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt4oRe =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kStarcoderRe =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kDeepseek3Re =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kPoroRe = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
// kimi-k2: llama.cpp splits with hand-written code (unicode_regex_split_custom_kimi_k2), not
// with Moonshot's tiktoken pattern; this regex does what that code does: a run of Han (the
// code's unicode_cpt_is_han code point ranges, not Script=Han); an optional leading character
// that is not \r, \n, a letter or a digit, then letters that are not Han, of any case (the code
// does not tell upper from lower case, so "getUserName" stays one piece where Moonshot's Lu / Ll
// classes cut it, and counts no \p{M} as a letter), then an optional ASCII contraction ('s 't
// 'm 'd 're 've 'll, either case); 1-3 digits; the punctuation run, whose class leaves out
// unassigned code points (the code's flags test), which then stand alone; the whitespace runs.
constexpr std::string_view kKimiK2Re =
    R"([\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{F900}-\x{FAFF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{2F800}-\x{2FA1F}]+|[^\r\n\p{L}\p{N}]?[^\P{L}\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{F900}-\x{FAFF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2EBEF}\x{2F800}-\x{2FA1F}]+(?:'[sStTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}\p{Cn}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|\p{Cn})";
// afmoe's first step, llama.cpp's unicode_regex_split_custom_afmoe, as a regex: each digit run
// is cut into a leading 1-2 digits (its length modulo 3) and then threes, and the code emits
// every piece from the end of the previous one, so the text before a run stays joined to the
// run's first group (the later regexes split it again; where a run of spaces precedes a digit
// this decides which spaces go together). The anchor keeps each attempt at the start or just
// after a digit, so the search stays linear.
constexpr std::string_view kAfmoeDigitsRe =
    R"((?:\A|(?<=\p{N}))\P{N}*\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N})))";
// afmoe's CJK and South-East Asian runs (llama.cpp's literal ranges; U+F900, which NFC would
// turn into U+8C48, is written as an escape).
constexpr std::string_view kAfmoeCjkRe =
    R"([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{F900}-\x{FAFF}\x{3040}-\x{309F}\x{30A0}-\x{30FF}\x{FF65}-\x{FF9F}\x{2F00}-\x{2FDF}\x{0E40}-\x{0E7F}\x{0E80}-\x{0EFF}\x{1780}-\x{17FF}\x{1000}-\x{109F}\x{AA60}-\x{AA7F}\x{A9E0}-\x{A9FF}\x{AC00}-\x{D7AF}\x{1100}-\x{11FF}]+)";

const std::vector<PreRow>& pre_table() {
  static const std::vector<PreRow> rows = {
      {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kStarcoderRe, R"(\p{N}+)", R"([0-9][0-9][0-9])"}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt",
        "olmo", "jais", "trillion", "granite-docling"},
       {kGpt2Re}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {kLlama3Re},
       true,
       true},
      {{"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"}, {kLlama3Re}},
      {{"jais-2"},
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})"}},
      {{"deepseek-llm"},
       {R"([\r\n])",
        R"(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\x{1F7D}ᾀ-ᾴᾶ-ᾼ\x{1FBE}ῂ-ῄῆ-ῌῐ-\x{1FD3}ῖ-\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\x{2126}ℨ\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)",
        R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)", R"(\s+$)", R"([一-龥ࠀ-一가-퟿]+)",
        R"(\p{N}+)"}},
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
       {R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)", kDeepseek3Re}},
      {{"spark2_5"},
       {R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)",
        R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)",
        R"(\p{N})"}},
      {{"youtu"},
       {R"([가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+)",
        R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true},
      {{"deepseek-coder"},
       {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N})"}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kStarcoderRe, R"([0-9][0-9][0-9])"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
        "mellum2"},
       {R"(\p{N})", kStarcoderRe}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan",
        "solar-open"},
       {kQwen2Re}},
      {{"qwen35"},
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {kPoroRe}},
      {{"viking"}, {kPoroRe, R"(\p{N})"}},
      {{"tekken"},
       {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true,
       true},
      {{"chameleon"},
       {R"(<sentinel:[0-9]+>)", R"((IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z)", R"(([\t\n]|    |  ))",
        R"(\p{N})", R"([\p{P}!-/:-@\[-`{-~])", kStarcoderRe},
       false,
       true},
      {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {kGpt4oRe}},
      {{"granite-embed-multi-97m"},
       {R"([^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true},
      {{"tiny_aya", "cohere2moe"}, {R"(\d{1,3}(?=(?:\d{3})*\b))", kGpt4oRe}},
      {{"superbpe"}, {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"}},
      {{"bailingmoe", "bailingmoe2", "llada-moe"},
       {R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {{"seed-coder"},
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"ufakzeka"},
       {R"([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"grok-2"}, {kQwen2Re}},
      {{"laguna"}, {R"([^\n]+|[\n]+)", kQwen2Re}},
      {{"exaone-moe"},
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {{"minicpm5"},
       {R"(\p{N}{1,3})",
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true},
      {{"kimi-k2"}, {kKimiK2Re}},
      {{"afmoe"}, {kAfmoeDigitsRe, kAfmoeCjkRe, kDeepseek3Re}},
      // SentencePiece-style BPE on raw UTF-8: spaces as "▁", split only into lines and runs of
      // newlines, then merges over each (llama.cpp's LLAMA_VOCAB_PRE_TYPE_GEMMA4 / SARVAM_MOE).
      {{"gemma4", "granite-embed-multi-311m"},
       {R"([^\n]+|[\n]+)"},
       false,
       false,
       BpeText::kRawEscaped,
       true},
      {{"sarvam-moe"}, {R"([^\n]+|[\n]+)"}, false, false, BpeText::kRawEscaped},
      // jina-embeddings-v2-base-zh: runs of non-space and (kept, unlike Hugging Face's
      // WhitespaceSplit) runs of space, BPE on raw UTF-8; a space with no token is dropped.
      {{"whitespace"}, {R"(\S+)"}, false, false, BpeText::kRaw},
  };
  return rows;
}

const PreRow& find_pre(const std::string& file, const std::string& name) {
  for (const PreRow& r : pre_table())
    for (std::string_view n : r.names)
      if (n == name) return r;
  std::string known;
  for (const std::string& n : gguf_pre_tokenizer_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::kUnsupported,
              file + ": tokenizer.ggml.pre \"" + name +
                  "\" is not a pre-tokenizer llama.cpp defines (known: " + known + ")");
}

// The pre-tokenizer name a file declares; GPT-2's when the key is absent (files converted before
// llama.cpp wrote it were GPT-2-style byte-level BPE).
std::string pre_name(const GgufFile& g) {
  return g.get_string("tokenizer.ggml.pre").value_or("gpt-2");
}

// A string quoted for a message (JSON escapes; bytes that are not UTF-8 as U+FFFD, since a
// malformed file may hold any bytes).
std::string quote(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// llama.cpp's token types (llama_token_type): what each id is.
enum TokenType : int64_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<int64_t> types;  // one per token (kNormal when the file has none)
  std::vector<double> scores;  // one per token (0 when the file has none)
};

Vocab read_vocab(const GgufFile& g) {
  const std::string& path = g.path();
  Vocab v;
  v.tokens = g.string_array("tokenizer.ggml.tokens");
  if (v.tokens.empty()) throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.tokens is empty");
  const size_t n = v.tokens.size();
  // open() has checked that tokens, scores and token_type have equal lengths; checked again
  // here because this function is the one that indexes them.
  v.types.assign(n, kNormal);
  if (g.find_kv("tokenizer.ggml.token_type")) {
    v.types = g.int_array("tokenizer.ggml.token_type");
    if (v.types.size() != n)
      throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.token_type has " +
                                           std::to_string(v.types.size()) + " entries, tokens " +
                                           std::to_string(n));
    for (size_t i = 0; i < n; ++i)
      if (v.types[i] < kUndefined || v.types[i] > kByte)
        throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.token_type[" + std::to_string(i) +
                                             "] = " + std::to_string(v.types[i]) +
                                             " is not a token type (0..6)");
  }
  v.scores.assign(n, 0.0);
  if (g.find_kv("tokenizer.ggml.scores")) {
    v.scores = g.float_array("tokenizer.ggml.scores");
    if (v.scores.size() != n)
      throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.scores has " +
                                           std::to_string(v.scores.size()) + " entries, tokens " +
                                           std::to_string(n));
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(v.scores[i]))
        throw Error(ErrorCode::kCorrupt,
                    path + ": tokenizer.ggml.scores[" + std::to_string(i) + "] is not finite");
  }
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (v.tokens[i].empty())
      throw Error(ErrorCode::kCorrupt,
                  path + ": tokenizer.ggml.tokens[" + std::to_string(i) + "] is empty");
    if (utf8_replace_invalid(v.tokens[i]) != v.tokens[i])
      throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.tokens[" + std::to_string(i) +
                                           "] " + quote(v.tokens[i]) + " is not valid UTF-8");
    auto [it, fresh] = seen.emplace(v.tokens[i], i);
    if (!fresh)
      throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.tokens[" + std::to_string(i) +
                                           "] " + quote(v.tokens[i]) + " repeats tokens[" +
                                           std::to_string(it->second) + "]");
  }
  return v;
}

// An optional id key (tokenizer.ggml.bos_token_id, ...) checked against the vocabulary.
std::optional<TokenId> id_key(const GgufFile& g, const char* key, size_t n) {
  std::optional<uint64_t> id = g.get_uint(key);
  if (!id) return std::nullopt;
  if (*id >= n)
    throw Error(ErrorCode::kCorrupt, g.path() + ": " + key + " = " + std::to_string(*id) +
                                         " is not a token id (vocabulary of " + std::to_string(n) +
                                         ")");
  return TokenId(*id);
}

json added_token(TokenId id, const std::string& content, bool special) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

// Control / unknown tokens are special added tokens (matched in text, skipped by
// decode(skip_special)); user-defined ones are added tokens.
json added_tokens(const Vocab& v) {
  json a = json::array();
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    const int64_t t = v.types[i];
    if (t == kControl || t == kUnknown || t == kUserDefined)
      a.push_back(added_token(TokenId(i), v.tokens[i], t != kUserDefined));
  }
  return a;
}

// TemplateProcessing [bos] $A [eos] when either is added; null otherwise.
json post_processor(const Vocab& v, std::optional<TokenId> bos, std::optional<TokenId> eos) {
  if (!bos && !eos) return nullptr;
  json single = json::array(), pair = json::array(), specials = json::object();
  auto special = [&](TokenId id, int type_id) {
    const std::string& s = v.tokens[size_t(id)];
    specials[s] = {{"id", s}, {"ids", {id}}, {"tokens", {s}}};
    return json{{"SpecialToken", {{"id", s}, {"type_id", type_id}}}};
  };
  auto seq = [](const char* id, int type_id) {
    return json{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
  };
  if (bos) single.push_back(special(*bos, 0));
  single.push_back(seq("A", 0));
  if (eos) single.push_back(special(*eos, 0));
  pair = single;
  if (bos) pair.push_back(special(*bos, 1));
  pair.push_back(seq("B", 1));
  if (eos) pair.push_back(special(*eos, 1));
  return {{"type", "TemplateProcessing"},
          {"single", single},
          {"pair", pair},
          {"special_tokens", specials}};
}

json base(const Vocab& v) {
  return {{"version", "1.0"},          {"truncation", nullptr},
          {"padding", nullptr},        {"added_tokens", added_tokens(v)},
          {"normalizer", nullptr},     {"pre_tokenizer", nullptr},
          {"post_processor", nullptr}, {"decoder", nullptr}};
}

// The id to add when `what` (tokenizer.ggml.add_bos_token, ...) is true, or when it is absent and
// llama.cpp's default for the model is true and the file names the id.
std::optional<TokenId> bos_if(const GgufFile& g, bool dflt, std::optional<TokenId> bos,
                              const char* what) {
  std::optional<bool> set = g.get_bool(what);
  if (!set.value_or(dflt) || (!set && !bos)) return std::nullopt;
  if (!bos)
    throw Error(ErrorCode::kCorrupt,
                g.path() + ": " + what + " is true but the file names no such token id");
  return bos;
}

// "gpt2": BPE with the merges after the table's regexes. Byte-level names end the split with
// ByteLevel; the raw-UTF-8 ones (llama.cpp's byte_encode false) merge characters as they are,
// spaces first written "▁" where the name says so, and fall back to <0xXX> tokens byte by byte
// for a symbol that is no token, dropping a byte without one (llama.cpp emits no unknown token).
// A GGUF of kimi-k2 may hold no merges (llama.cpp then merges nothing).
std::unique_ptr<Tokenizer> gpt2(const GgufFile& g, const PreRow& row) {
  Vocab v = read_vocab(g);
  const size_t n = v.tokens.size();
  const bool raw = row.text != BpeText::kByteLevel;
  auto bos = bos_if(g, row.add_bos, id_key(g, "tokenizer.ggml.bos_token_id", n),
                    "tokenizer.ggml.add_bos_token");
  auto eos =
      bos_if(g, false, id_key(g, "tokenizer.ggml.eos_token_id", n), "tokenizer.ggml.add_eos_token");
  json vocab = json::object();
  for (size_t i = 0; i < n; ++i) vocab[v.tokens[i]] = i;
  json merges = json::array();
  const char* key = "tokenizer.ggml.merges";
  const bool none = pre_name(g) == "kimi-k2" && !g.find_kv(key);
  std::vector<std::string> lines = none ? std::vector<std::string>{} : g.string_array(key);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!raw) {
      merges.push_back(std::move(lines[i]));
      continue;
    }
    // llama.cpp cuts at the first space after the first byte (a raw token may hold spaces).
    const size_t cut = lines[i].find(' ', 1);
    if (cut == std::string::npos)
      throw Error(ErrorCode::kCorrupt, g.path() + ": " + key + "[" + std::to_string(i) + "] " +
                                           quote(lines[i]) + " has no space between two tokens");
    merges.push_back({lines[i].substr(0, cut), lines[i].substr(cut + 1)});
  }
  json seq = json::array();
  for (std::string_view r : row.regexes)
    seq.push_back({{"type", "Split"},
                   {"pattern", {{"Regex", std::string(r)}}},
                   {"behavior", "Isolated"},
                   {"invert", false}});
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", false},
                           {"use_regex", false}};
  const std::string ws = "\xE2\x96\x81";
  json j = base(v);
  if (!raw) {
    seq.push_back(byte_level);
    j["decoder"] = byte_level;
  } else {
    json dec = json::array();
    if (row.text == BpeText::kRawEscaped) {
      j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", ws}};
      dec.push_back({{"type", "Replace"}, {"pattern", {{"String", ws}}}, {"content", " "}});
    }
    dec.push_back(json::object({{"type", "ByteFallback"}}));
    dec.push_back(json::object({{"type", "Fuse"}}));
    j["decoder"] = {{"type", "Sequence"}, {"decoders", dec}};
  }
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", seq}};
  j["post_processor"] = post_processor(v, bos, eos);
  j["model"] = {{"type", "BPE"},
                {"vocab", std::move(vocab)},
                {"merges", std::move(merges)},
                {"ignore_merges", row.ignore_merges},
                {"byte_fallback", raw},
                {"byte_fallback_each_byte", raw},
                {"whole_newline_runs", row.whole_newline_runs}};
  return hf::load_internal(j, g.path(), "GGUF gpt2");
}

// "llama": SentencePiece BPE by scores with <0xXX> byte fallback; add_space_prefix prepends
// "▁" and spaces become "▁" (llama.cpp's llm_tokenizer_spm and Hugging Face's Llama files).
std::unique_ptr<Tokenizer> llama(const GgufFile& g) {
  Vocab v = read_vocab(g);
  const size_t n = v.tokens.size();
  const std::string& path = g.path();
  auto unk = id_key(g, "tokenizer.ggml.unknown_token_id", n);
  if (!unk) {
    for (size_t i = 0; i < n && !unk; ++i)
      if (v.types[i] == kUnknown) unk = TokenId(i);
    if (!unk) unk = 0;  // llama.cpp's default
  }
  std::optional<TokenId> bos_id = id_key(g, "tokenizer.ggml.bos_token_id", n);
  std::optional<TokenId> eos_id = id_key(g, "tokenizer.ggml.eos_token_id", n);
  if (!bos_id && n > 1) bos_id = 1;  // llama.cpp's defaults
  if (!eos_id && n > 2) eos_id = 2;
  auto bos = bos_if(g, true, bos_id, "tokenizer.ggml.add_bos_token");
  auto eos = bos_if(g, false, eos_id, "tokenizer.ggml.add_eos_token");
  const bool prefix = g.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  if (g.get_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false))
    throw Error(ErrorCode::kUnsupported,
                path + ": tokenizer.ggml.remove_extra_whitespaces true is not supported (false)");
  json vocab = json::array(), types = json::array();
  for (size_t i = 0; i < n; ++i) {
    if (v.types[i] == kByte) {
      const std::string& t = v.tokens[i];
      bool ok = t.size() == 6 && t.starts_with("<0x") && t[5] == '>';
      for (size_t k = 3; ok && k < 5; ++k)
        ok = (t[k] >= '0' && t[k] <= '9') || (t[k] >= 'A' && t[k] <= 'F');
      if (!ok)
        throw Error(ErrorCode::kCorrupt, path + ": tokenizer.ggml.tokens[" + std::to_string(i) +
                                             "] " + quote(t) +
                                             " has token type BYTE (6) but is not <0xXX>");
    }
    vocab.push_back(json::array({v.tokens[i], v.scores[i]}));
    // UNDEFINED (0) pieces take part in merges as NORMAL ones do in llama.cpp.
    types.push_back(v.types[i] == kUndefined ? kNormal : v.types[i]);
  }
  const std::string ws = "\xE2\x96\x81";
  json j = base(v);
  json replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", ws}};
  j["normalizer"] = prefix
                        ? json{{"type", "Sequence"},
                               {"normalizers", {{{"type", "Prepend"}, {"prepend", ws}}, replace}}}
                        : replace;
  json dec = {{{"type", "Replace"}, {"pattern", {{"String", ws}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}}};
  if (prefix) dec.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1u}, {"stop", 0u}});
  j["decoder"] = {{"type", "Sequence"}, {"decoders", dec}};
  j["post_processor"] = post_processor(v, bos, eos);
  j["model"] = {{"type", "SentencePieceBPE"},
                {"vocab", std::move(vocab)},
                {"types", std::move(types)},
                {"unk_id", *unk},
                {"byte_fallback", true}};
  return hf::load_internal(j, path, "GGUF llama");
}

// "t5": SentencePiece Unigram (llama.cpp's llm_tokenizer_ugm) behind SentencePiece's normalizer
// with the file's tokenizer.ggml.precompiled_charsmap (a UINT8 / INT8 array; absent: identity).
// llama.cpp's defaults: add_space_prefix true, remove_extra_whitespaces false, EOS (id 1)
// appended, no BOS, unknown id 2. llama.cpp squeezing spaces puts "▁" before every word, the first
// included, whatever add_space_prefix says: SentencePiece's add_dummy_prefix with squeezing.
std::unique_ptr<Tokenizer> t5(const GgufFile& g) {
  Vocab v = read_vocab(g);
  const size_t n = v.tokens.size();
  const std::string& path = g.path();
  auto unk = id_key(g, "tokenizer.ggml.unknown_token_id", n);
  if (!unk && n > 2) unk = 2;
  if (!unk) throw Error(ErrorCode::kCorrupt, path + ": no tokenizer.ggml.unknown_token_id");
  std::optional<TokenId> eos_id = id_key(g, "tokenizer.ggml.eos_token_id", n);
  if (!eos_id && n > 1) eos_id = 1;
  auto bos =
      bos_if(g, false, id_key(g, "tokenizer.ggml.bos_token_id", n), "tokenizer.ggml.add_bos_token");
  auto eos = bos_if(g, true, eos_id, "tokenizer.ggml.add_eos_token");
  const bool squeeze = g.get_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
  const bool prefix = g.get_bool("tokenizer.ggml.add_space_prefix").value_or(true) || squeeze;
  const char* key = "tokenizer.ggml.precompiled_charsmap";
  json norm = {{"type", "SentencePiece"},
               {"charsmap_field", key},
               {"add_dummy_prefix", prefix},
               {"remove_extra_whitespaces", squeeze},
               {"escape_whitespaces", true}};
  if (const GgufKv* kv = g.find_kv(key)) {
    if (kv->type != GgufValueType::kArray ||
        (kv->array_type != GgufValueType::kUint8 && kv->array_type != GgufValueType::kInt8))
      throw Error(ErrorCode::kCorrupt, path + ": " + key + " is not an ARRAY of UINT8 or INT8");
    std::vector<int64_t> bytes = g.int_array(key);
    std::vector<uint8_t> blob(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) blob[i] = uint8_t(bytes[i] & 0xFF);
    if (!blob.empty()) norm["precompiled_charsmap"] = json::binary(std::move(blob));
  }
  json vocab = json::array();
  for (size_t i = 0; i < n; ++i) vocab.push_back(json::array({v.tokens[i], v.scores[i]}));
  json j = base(v);
  j["normalizer"] = std::move(norm);
  j["pre_tokenizer"] = {{"type", "Metaspace"},
                        {"replacement", "\xE2\x96\x81"},
                        {"prepend_scheme", "never"},
                        {"split", true}};
  j["decoder"] = {{"type", "Metaspace"},
                  {"replacement", "\xE2\x96\x81"},
                  {"prepend_scheme", prefix ? "always" : "never"},
                  {"split", true}};
  j["post_processor"] = post_processor(v, bos, eos);
  j["model"] = {
      {"type", "Unigram"}, {"unk_id", *unk}, {"vocab", std::move(vocab)}, {"byte_fallback", false}};
  return hf::load_internal(j, path, "GGUF t5");
}

// "bert": WordPiece. llama.cpp's converter spells word-initial pieces with a leading "▁" and
// continuations bare ("##" dropped); bracketed tokens ([CLS], [unused0]) stay as they are.
std::unique_ptr<Tokenizer> bert(const GgufFile& g) {
  Vocab v = read_vocab(g);
  const size_t n = v.tokens.size();
  const std::string ws = "\xE2\x96\x81";
  json vocab = json::object();
  bool cased = false;
  std::vector<std::string> hf_tokens(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = v.tokens[i];
    std::string w;
    if (t.size() > 2 && t.front() == '[' && t.back() == ']')
      w = t;
    else if (t.starts_with(ws) && t.size() > ws.size())
      w = t.substr(ws.size());
    else
      w = "##" + t;
    if (v.types[i] != kControl && v.types[i] != kUnknown)
      for (char ch : w) cased = cased || (ch >= 'A' && ch <= 'Z');
    if (vocab.contains(w))
      throw Error(ErrorCode::kCorrupt, g.path() + ": tokenizer.ggml.tokens[" + std::to_string(i) +
                                           "] " + quote(t) + " is the WordPiece token " + quote(w) +
                                           " twice");
    vocab[w] = i;
    hf_tokens[i] = w;
  }
  auto unk = id_key(g, "tokenizer.ggml.unknown_token_id", n);
  if (!unk && n > 100) unk = 100;  // llama.cpp's defaults for BERT
  if (!unk) throw Error(ErrorCode::kCorrupt, g.path() + ": no tokenizer.ggml.unknown_token_id");
  std::optional<TokenId> cls = id_key(g, "tokenizer.ggml.cls_token_id", n);
  if (!cls) cls = id_key(g, "tokenizer.ggml.bos_token_id", n);
  std::optional<TokenId> sep = id_key(g, "tokenizer.ggml.seperator_token_id", n);
  if (!sep) sep = id_key(g, "tokenizer.ggml.separator_token_id", n);
  if (!cls && n > 101) cls = 101;
  if (!sep && n > 102) sep = 102;
  Vocab hv{hf_tokens, v.types, v.scores};
  json j = base(hv);
  // An uncased vocabulary (no capital letter outside its special tokens) lowercases and strips
  // accents, as bert-base-uncased declares; a cased one keeps the text (GGUF has no flag).
  j["normalizer"] = {{"type", "BertNormalizer"},
                     {"clean_text", true},
                     {"handle_chinese_chars", true},
                     {"strip_accents", nullptr},
                     {"lowercase", !cased}};
  j["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  j["post_processor"] = post_processor(hv, bos_if(g, true, cls, "tokenizer.ggml.add_bos_token"),
                                       bos_if(g, true, sep, "tokenizer.ggml.add_sep_token"));
  j["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  j["model"] = {{"type", "WordPiece"},
                {"unk_token", hf_tokens[size_t(*unk)]},
                {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", 100u},
                {"vocab", std::move(vocab)}};
  return hf::load_internal(j, g.path(), "GGUF bert");
}

// BpeTokenizer behind the interface with the BOS / EOS the GGUF asks for (the fast path has no
// post-processor of its own).
class WithSpecials final : public Tokenizer {
 public:
  WithSpecials(std::unique_ptr<Tokenizer> inner, std::optional<TokenId> bos,
               std::optional<TokenId> eos)
      : inner_(std::move(inner)), bos_(bos), eos_(eos) {}
  std::string describe() const override { return "GGUF gpt2 (" + inner_->describe() + ")"; }
  size_t vocab_size() const override { return inner_->vocab_size(); }
  Encoding encode(std::string_view text, const EncodeOptions& options) const override {
    Encoding e = inner_->encode(text, options);
    if (!options.add_special_tokens) return e;
    if (bos_) {
      e.ids.insert(e.ids.begin(), *bos_);
      e.offsets.insert(e.offsets.begin(), TokenSpan{});
    }
    if (eos_) {
      e.ids.push_back(*eos_);
      e.offsets.push_back(TokenSpan{});
    }
    return e;
  }
  std::string decode_bytes(std::span<const TokenId> ids, bool skip_special) const override {
    return inner_->decode_bytes(ids, skip_special);
  }
  std::optional<std::string> token(TokenId id) const override { return inner_->token(id); }
  std::optional<TokenId> token_id(std::string_view token) const override {
    return inner_->token_id(token);
  }
  std::string display(TokenId id) const override { return inner_->display(id); }
  bool is_special(TokenId id) const override { return inner_->is_special(id); }
  std::string token_bytes(TokenId id) const override { return inner_->token_bytes(id); }
  const BpeTokenizer* bpe() const override { return inner_->bpe(); }

 private:
  std::unique_ptr<Tokenizer> inner_;
  std::optional<TokenId> bos_, eos_;
};

}  // namespace

std::vector<std::string> gguf_pre_tokenizer_names() {
  std::vector<std::string> out;
  for (const PreRow& r : pre_table())
    for (std::string_view n : r.names) out.emplace_back(n);
  return out;
}

std::vector<std::string> gguf_pre_tokenizer_regexes(const std::string& name) {
  const PreRow& row = find_pre("tokenizer.ggml.pre table", name);
  return {row.regexes.begin(), row.regexes.end()};
}

GgufBpeFastPath gguf_bpe_fast_path(const GgufFile& g) {
  const PreRow& row = find_pre(g.path(), pre_name(g));
  GgufBpeFastPath f;
  f.ignore_merges = row.ignore_merges;
  if (row.regexes.size() == 1 && row.text == BpeText::kByteLevel)
    f.kind = pre_tokenizer_for_pattern(row.regexes[0]);
  return f;
}

namespace {

std::unique_ptr<Tokenizer> load_checked(const GgufFile& g) {
  const std::string& path = g.path();
  std::optional<std::string> model = g.get_string("tokenizer.ggml.model");
  if (!model) throw Error(ErrorCode::kNotFound, path + ": no tokenizer.ggml.model key");
  // llama.cpp reads "whitespace" as "gpt2" (the pre name decides), and "gemma4" as "gpt2" with
  // tokenizer.ggml.pre "gemma4" whatever the file says.
  if (*model == "gemma4") return gpt2(g, find_pre(path, "gemma4"));
  if (*model == "gpt2" || *model == "whitespace") {
    const PreRow& row = find_pre(path, pre_name(g));
    std::optional<PreTokenizerKind> kind;
    if (row.regexes.size() == 1 && row.text == BpeText::kByteLevel)
      kind = pre_tokenizer_for_pattern(row.regexes[0]);
    if (!kind) return gpt2(g, row);
    // The hand-written pre-tokenizer for the common families (same ids, several times faster).
    const size_t n = g.array_size("tokenizer.ggml.tokens");
    auto bos = bos_if(g, row.add_bos, id_key(g, "tokenizer.ggml.bos_token_id", n),
                      "tokenizer.ggml.add_bos_token");
    auto eos = bos_if(g, false, id_key(g, "tokenizer.ggml.eos_token_id", n),
                      "tokenizer.ggml.add_eos_token");
    read_vocab(g);  // the same checks as the pipeline path
    return std::make_unique<WithSpecials>(
        make_tokenizer(bpe_from_gguf(g, *kind, row.ignore_merges)), bos, eos);
  }
  if (*model == "llama") return llama(g);
  if (*model == "bert") return bert(g);
  if (*model == "t5") return t5(g);
  throw Error(ErrorCode::kUnsupported,
              path + ": tokenizer.ggml.model \"" + *model +
                  "\" is not supported (gpt2, gemma4, whitespace, llama, bert, t5)");
}

}  // namespace

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& g) {
  try {
    return load_checked(g);
  } catch (const json::exception& e) {  // every value is checked first; this is a backstop
    throw Error(ErrorCode::kCorrupt, g.path() + ": " + e.what());
  }
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path) {
  return load_gguf_tokenizer(GgufFile::open(path));
}

}  // namespace embedscope
