// Streaming corpus input for the trainer: file listing, line reading in bounded memory, the
// on-disk id stream. Private to src/train.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace embedscope {

// Lines longer than this are delivered in pieces cut at whitespace (so one giant line never
// needs more than ~2 x kMaxLineBytes of memory).
inline constexpr size_t kMaxLineBytes = size_t(1) << 20;
// Marks a sentence end in the id stream.
inline constexpr uint32_t kSentenceEnd = 0xFFFFFFFFu;

// Files as given; folders walked recursively (regular files, sorted by path). Error(kNotFound)
// for a missing input, Error(kInvalidArgument) when no file is found.
std::vector<std::string> list_corpus_files(const std::vector<std::string>& inputs);

// A byte range over the files concatenated in order (a distributed run's share of the corpus).
struct CorpusRange {
  uint64_t begin = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();
};

// Calls fn(line) for every line (without its '\n'; a final line without newline included) whose
// first byte lies in `range`; a line cut into pieces (kMaxLineBytes) is delivered whole or not
// at all. Throws Error(kIo) naming the file on read errors.
void for_each_line(const std::vector<std::string>& files,
                   const std::function<void(std::string_view)>& fn, CorpusRange range = {});

// Total size in bytes of the files (Error(kIo) naming one that cannot be examined).
uint64_t corpus_bytes(const std::vector<std::string>& files);

// Calls fn(word) for each ASCII-whitespace-separated word of `line`, cut to max_bytes.
template <class F>
void for_each_word(std::string_view line, size_t max_bytes, F&& fn) {
  size_t i = 0, n = line.size();
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (i < n) {
    while (i < n && space(line[i])) ++i;
    size_t b = i;
    while (i < n && !space(line[i])) ++i;
    if (i > b) fn(line.substr(b, std::min(i - b, max_bytes)));
  }
}

// Buffered writer of uint32 ids into a fresh temporary file in `dir`.
class IdStreamWriter {
 public:
  explicit IdStreamWriter(const std::string& dir);  // Error(kIo) naming dir
  ~IdStreamWriter();
  IdStreamWriter(const IdStreamWriter&) = delete;
  IdStreamWriter& operator=(const IdStreamWriter&) = delete;
  void push(uint32_t id) {
    buf_.push_back(id);
    if (buf_.size() >= (1u << 16)) flush();
  }
  void end_sentence() {
    if (count_ + buf_.size() > 0 && !last_was_end()) push(kSentenceEnd);
  }
  // Flushes and closes; returns the path (the caller removes it).
  std::string finish();
  uint64_t size() const { return count_ + buf_.size(); }

 private:
  bool last_was_end() const {
    return buf_.empty() ? last_flushed_end_ : buf_.back() == kSentenceEnd;
  }
  void flush();
  std::string path_;
  int fd_ = -1;
  std::vector<uint32_t> buf_;
  uint64_t count_ = 0;
  bool last_flushed_end_ = true;
};

}  // namespace embedscope
