// Private: vocabularies of Hugging Face tokenizer files, for load_model(). The tokenizer module
// owns tokenization; formats only needs id -> token bytes, and may not depend on tokenizer/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace embedscope::detail {

struct HfVocab {
  std::vector<std::string> tokens;  // by id; ids the files do not name are ""
  size_t n_named = 0;               // ids the files name
  std::string source;               // the file read ("vocab.json")
};

// Tokenizer files present in `dir`, in a fixed order (tokenizer.json, vocab.json, merges.txt,
// vocab.txt, tokenizer.model, ...): file names only.
std::vector<std::string> find_tokenizer_files(const std::string& dir);

// Reads vocab.json (GPT-2 byte-level alphabet decoded to raw bytes), else vocab.txt (one token
// per line, id = line number), else tokenizer.json (model.vocab + added_tokens). Returns false
// when none exists. Throws Error(kCorrupt) naming the file and byte offset / line for malformed
// files, and for ids above `max_id` (a cap that keeps allocation proportional to the file).
bool read_hf_vocab(const std::string& dir, HfVocab* out);

// GPT-2 byte-level alphabet (bytes_to_unicode in openai/gpt-2 encoder.py) decoded: every code
// point of `token` (UTF-8) mapped back to its byte. Returns false (out untouched) when a code
// point is not in the alphabet.
bool decode_byte_level(std::string_view token, std::string* out);

}  // namespace embedscope::detail
