#include "train/corpus.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "embedscope/core/error.h"

namespace embedscope {

namespace fs = std::filesystem;

std::vector<std::string> list_corpus_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    auto st = fs::status(in, ec);
    if (ec || !fs::exists(st))
      throw Error(ErrorCode::kNotFound, "corpus input " + in + " does not exist");
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(in, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file()) found.push_back(it->path().string());
      if (ec) throw Error(ErrorCode::kIo, "corpus folder " + in + ": " + ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(in);
    }
  }
  if (files.empty())
    throw Error(ErrorCode::kInvalidArgument, "no corpus files found in the inputs given");
  return files;
}

uint64_t corpus_bytes(const std::vector<std::string>& files) {
  uint64_t total = 0;
  for (const auto& path : files) {
    std::error_code ec;
    const uintmax_t n = fs::file_size(path, ec);
    if (ec) throw Error(ErrorCode::kIo, "corpus file " + path + ": " + ec.message());
    total += uint64_t(n);
  }
  return total;
}

namespace {

// The first line start at or after `from` in an open file (0 and every byte after a '\n' are
// line starts); nullopt when none.
std::optional<uint64_t> first_line_start(int fd, const std::string& path, uint64_t from) {
  if (from == 0) return 0;
  std::vector<char> buf(1 << 16);
  uint64_t off = from - 1;  // a line starts at `from` when the byte before it is '\n'
  for (;;) {
    ssize_t r = ::pread(fd, buf.data(), buf.size(), off_t(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw Error(ErrorCode::kIo, "reading corpus file " + path + ": " + std::strerror(errno));
    if (r == 0) return std::nullopt;
    const void* nl = std::memchr(buf.data(), '\n', size_t(r));
    if (nl) return off + uint64_t(static_cast<const char*>(nl) - buf.data()) + 1;
    off += uint64_t(r);
  }
}

// Delivers the lines of one open file that start in [from, stop) (file offsets; `from` is a
// line start).
void read_lines(int fd, const std::string& path, uint64_t from, uint64_t stop,
                const std::function<void(std::string_view)>& fn, std::vector<char>& buf) {
  if (from > 0 && ::lseek(fd, off_t(from), SEEK_SET) < 0)
    throw Error(ErrorCode::kIo, "seeking in corpus file " + path + ": " + std::strerror(errno));
  uint64_t base = from;  // file offset of buf[0]
  size_t have = 0;
  bool eof = false;
  bool continued = false;  // buf[0] continues a line cut into pieces (not a line start)
  for (;;) {
    while (!eof && have < buf.size()) {
      ssize_t r = ::read(fd, buf.data() + have, buf.size() - have);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw Error(ErrorCode::kIo, "reading corpus file " + path + ": " + std::strerror(errno));
      if (r == 0) eof = true;
      have += size_t(r);
    }
    size_t start = 0;
    for (;;) {
      if (!continued && base + start >= stop) return;  // the next line belongs to the next range
      const void* nl = std::memchr(buf.data() + start, '\n', have - start);
      if (!nl) break;
      size_t end = size_t(static_cast<const char*>(nl) - buf.data());
      fn(std::string_view(buf.data() + start, end - start));
      start = end + 1;
      continued = false;
    }
    size_t rest = have - start;
    if (eof) {
      if (rest > 0) fn(std::string_view(buf.data() + start, rest));  // no final newline
      return;
    }
    if (rest >= kMaxLineBytes) {
      // A line longer than kMaxLineBytes: deliver a piece cut at its last whitespace.
      size_t cut = rest;
      while (cut > 0 && buf[start + cut - 1] != ' ' && buf[start + cut - 1] != '\t') --cut;
      if (cut == 0) cut = rest;
      fn(std::string_view(buf.data() + start, cut));
      start += cut;
      continued = true;
    }
    std::memmove(buf.data(), buf.data() + start, have - start);
    have -= start;
    base += start;
  }
}

}  // namespace

void for_each_line(const std::vector<std::string>& files,
                   const std::function<void(std::string_view)>& fn, CorpusRange range) {
  const bool whole = range.begin == 0 && range.end == std::numeric_limits<uint64_t>::max();
  std::vector<char> buf(2 * kMaxLineBytes);
  uint64_t file_begin = 0;  // offset of this file in the concatenation
  for (const auto& path : files) {
    if (!whole && file_begin >= range.end) break;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw Error(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                  "corpus file " + path + ": " + std::strerror(errno));
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    uint64_t size = std::numeric_limits<uint64_t>::max();
    if (!whole) {
      struct stat sb {};
      if (::fstat(fd, &sb) != 0)
        throw Error(ErrorCode::kIo, "corpus file " + path + ": " + std::strerror(errno));
      size = uint64_t(sb.st_size);
    }
    if (whole) {
      read_lines(fd, path, 0, std::numeric_limits<uint64_t>::max(), fn, buf);
    } else if (file_begin + size > range.begin) {
      const uint64_t local_begin = range.begin > file_begin ? range.begin - file_begin : 0;
      const uint64_t stop = range.end - file_begin;  // file_begin < range.end here
      if (auto from = first_line_start(fd, path, local_begin))
        read_lines(fd, path, *from, stop, fn, buf);
    }
    if (!whole) file_begin += size;
  }
}

IdStreamWriter::IdStreamWriter(const std::string& dir) {
  std::string tmpl = dir + "/embedscope-ids-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0)
    throw Error(ErrorCode::kIo,
                "cannot create the temporary id stream in " + dir + ": " + std::strerror(errno));
  path_ = name.data();
}

IdStreamWriter::~IdStreamWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

void IdStreamWriter::flush() {
  if (buf_.empty()) return;
  last_flushed_end_ = buf_.back() == kSentenceEnd;
  const char* p = reinterpret_cast<const char*>(buf_.data());
  size_t n = buf_.size() * sizeof(uint32_t);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::kIo,
                  "writing the temporary id stream " + path_ + ": " + std::strerror(errno));
    }
    p += w;
    n -= size_t(w);
  }
  count_ += buf_.size();
  buf_.clear();
}

std::string IdStreamWriter::finish() {
  flush();
  ::close(fd_);
  fd_ = -1;
  return path_;
}

}  // namespace embedscope
