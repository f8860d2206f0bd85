// Format names, content sniffing and load/save dispatch (formats/embeddings_file.h).
#include "embedscope/formats/embeddings_file.h"

#include <cstring>
#include <filesystem>

#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/formats/npy.h"
#include "embedscope/formats/safetensors.h"
#include "embedscope/formats/word2vec.h"

namespace embedscope {

namespace {

struct NamedFormat {
  FileFormat format;
  std::string_view name;
};
constexpr NamedFormat kNames[] = {
    {FileFormat::kSafetensors, "safetensors"},
    {FileFormat::kNpy, "npy"},
    {FileFormat::kWord2VecText, "word2vec"},
    {FileFormat::kWord2VecBinary, "word2vec-bin"},
    {FileFormat::kGlove, "glove"},
    {FileFormat::kPytorch, "pytorch"},
    {FileFormat::kGguf, "gguf"},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

// safetensors: 8-byte little-endian header length whose high half is zero (text formats have
// no NUL bytes there), then '{' or JSON whitespace.
bool looks_like_safetensors(std::span<const std::byte> b) {
  if (b.size() < 9) return false;
  uint64_t n;
  std::memcpy(&n, b.data(), 8);
  if (n < 2 || n > kSafetensorsMaxHeaderSize) return false;
  char c = char(b[8]);
  return c == '{' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// word2vec text whose first line is exactly two integers ("N DIM") rather than GloVe's rows.
bool first_line_is_header(std::span<const std::byte> b) {
  std::string_view s(reinterpret_cast<const char*>(b.data()), b.size());
  if (s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  int fields = 0;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i == s.size()) break;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start || (i < s.size() && s[i] != ' ')) return false;
    ++fields;
  }
  return fields == 2;
}

FileFormat format_from_extension(const std::string& path) {
  std::string p = lower(path);
  if (ends_with(p, ".safetensors")) return FileFormat::kSafetensors;
  if (ends_with(p, ".npy")) return FileFormat::kNpy;
  if (ends_with(p, ".gguf")) return FileFormat::kGguf;
  if (ends_with(p, ".pt") || ends_with(p, ".pth")) return FileFormat::kPytorch;
  return FileFormat::kUnknown;
}

}  // namespace

std::string_view format_name(FileFormat f) {
  for (const auto& n : kNames)
    if (n.format == f) return n.name;
  return "unknown";
}

FileFormat parse_format_name(std::string_view name) {
  std::string l = lower(name);
  for (const auto& n : kNames)
    if (n.name == l) return n.format;
  if (l == "word2vec-text" || l == "vec" || l == "fasttext") return FileFormat::kWord2VecText;
  if (l == "word2vec-binary" || l == "bin") return FileFormat::kWord2VecBinary;
  std::string accepted;
  for (const auto& n : kNames) accepted += (accepted.empty() ? "" : ", ") + std::string(n.name);
  throw Error(ErrorCode::kInvalidArgument,
              "unknown format '" + std::string(name) + "'; accepted: " + accepted);
}

namespace {

// fastText's binary model (.bin) starts with int32 magic 793712314 (0x2F4F16BA) and a version.
// Its word vectors are sums over subword buckets, not rows of one matrix, so we say what the
// file is and how to get the .vec that fastText writes, rather than "unrecognised".
void fasttext_bin_check(const std::string& path) {
  const std::string head = MappedFile::read_head(path, 8);
  auto b = std::as_bytes(std::span(head));
  if (b.size() < 8) return;
  uint32_t magic = 0, version = 0;
  std::memcpy(&magic, b.data(), 4);
  std::memcpy(&version, b.data() + 4, 4);
  if (magic != 793712314u) return;
  throw Error(ErrorCode::kUnsupported,
              path + ": a fastText binary model (magic 0x2F4F16BA at byte 0, version " +
                  std::to_string(version) +
                  "), whose word vectors are sums of subword buckets; embedscope reads fastText's "
                  ".vec text vectors: use the .vec that `fasttext skipgram|cbow` writes beside the "
                  ".bin, or `fasttext print-word-vectors MODEL.bin < words.txt`");
}

}  // namespace

FileFormat detect_format(const std::string& path) {
  const std::string head = MappedFile::read_head(path, 4096);
  auto b = std::as_bytes(std::span(head));
  auto starts = [&](const char* magic, size_t n) {
    return b.size() >= n && std::memcmp(b.data(), magic, n) == 0;
  };
  if (starts("\x93NUMPY", 6)) return FileFormat::kNpy;
  if (starts("GGUF", 4)) return FileFormat::kGguf;
  if (starts("PK\x03\x04", 4)) return FileFormat::kPytorch;  // torch.save zip archive
  if (looks_like_safetensors(b)) return FileFormat::kSafetensors;
  // Legacy (pre-1.6) torch.save: a pickle stream, protocol 2+ ("\x80\x02").
  if (b.size() >= 2 && b[0] == std::byte{0x80} && int(b[1]) >= 2 && int(b[1]) <= 5)
    return FileFormat::kPytorch;
  if (looks_like_word2vec_binary(b)) return FileFormat::kWord2VecBinary;
  if (looks_like_word2vec_text(b))
    return first_line_is_header(b) ? FileFormat::kWord2VecText : FileFormat::kGlove;
  // A broken file of a binary format still deserves that format's precise error.
  return format_from_extension(path);
}

FileFormat output_format_for_path(const std::string& path) {
  std::string p = lower(path);
  if (ends_with(p, ".safetensors")) return FileFormat::kSafetensors;
  if (ends_with(p, ".npy")) return FileFormat::kNpy;
  if (ends_with(p, ".bin")) return FileFormat::kWord2VecBinary;
  if (ends_with(p, ".txt") || ends_with(p, ".vec")) return FileFormat::kWord2VecText;
  throw Error(ErrorCode::kInvalidArgument,
              path +
                  ": cannot tell the output format from the file name (use .safetensors, .npy, "
                  ".bin for word2vec binary, .txt or .vec for word2vec text, or name the format)");
}

LoadedEmbeddings load_embeddings(const std::string& path, const LoadOptions& options) {
  {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (!ec && size == 0) throw Error(ErrorCode::kCorrupt, path + ": the file is empty (0 bytes)");
  }
  FileFormat f = options.format != FileFormat::kUnknown ? options.format : detect_format(path);
  LoadedEmbeddings e;
  switch (f) {
    case FileFormat::kSafetensors:
      e = load_safetensors_embeddings(path, options);
      break;
    case FileFormat::kNpy:
      e = load_npy(path, options);
      break;
    case FileFormat::kWord2VecText:
    case FileFormat::kGlove: {
      LoadOptions o = options;
      o.format = options.format;  // kUnknown lets the reader detect the header
      e = load_word2vec_text(path, o);
      break;
    }
    case FileFormat::kWord2VecBinary:
      e = load_word2vec_binary(path, options);
      break;
    case FileFormat::kPytorch:
    case FileFormat::kGguf:
      throw Error(ErrorCode::kUnsupported,
                  path + ": " + std::string(format_name(f)) +
                      " checkpoints hold many tensors; load them with load_model (CLI: pass the "
                      "file as a model reference)");
    case FileFormat::kUnknown:
      fasttext_bin_check(path);
      throw Error(ErrorCode::kUnsupported,
                  path +
                      ": unrecognised embedding file format (expected safetensors, npy, "
                      "word2vec text/binary, GloVe or fastText .vec; `embedscope info` shows "
                      "what each reader expects)");
  }
  // The word2vec readers log their own warnings; ours leave it to this entry point so that
  // SafetensorsFile / load_npy_bytes stay silent for callers that handle warnings themselves.
  if (f == FileFormat::kSafetensors || f == FileFormat::kNpy)
    for (const auto& w : e.warnings) log_warning(w);
  return e;
}

void save_embeddings(const std::string& path, const EmbeddingTable& table, const Vocabulary* vocab,
                     const SaveOptions& options) {
  FileFormat f = options.format;
  if (f == FileFormat::kUnknown) f = output_format_for_path(path);
  auto need_vocab = [&]() -> const Vocabulary& {
    if (!vocab || vocab->size() != table.n_rows())
      throw Error(ErrorCode::kInvalidArgument,
                  path + ": " + std::string(format_name(f)) +
                      " needs one word per row: the table has " + std::to_string(table.n_rows()) +
                      " rows, the vocabulary " + std::to_string(vocab ? vocab->size() : 0) +
                      " words");
    return *vocab;
  };
  switch (f) {
    case FileFormat::kSafetensors:
      save_safetensors_embeddings(path, table, vocab, options);
      return;
    case FileFormat::kNpy:
      save_npy(path, table);
      return;
    case FileFormat::kWord2VecText:
      save_word2vec_text(path, table, need_vocab());
      return;
    case FileFormat::kWord2VecBinary:
      save_word2vec_binary(path, table, need_vocab());
      return;
    default:
      throw Error(ErrorCode::kUnsupported,
                  path + ": saving as " + std::string(format_name(f)) +
                      " is not supported (use safetensors, npy, word2vec or word2vec-bin)");
  }
}

}  // namespace embedscope
