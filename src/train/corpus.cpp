#include "train/corpus.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

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

void for_each_line(const std::vector<std::string>& files,
                   const std::function<void(std::string_view)>& fn) {
  std::vector<char> buf(2 * kMaxLineBytes);
  for (const auto& path : files) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw Error(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                  "corpus file " + path + ": " + std::strerror(errno));
    size_t have = 0;
    bool eof = false;
    for (;;) {
      while (!eof && have < buf.size()) {
        ssize_t r = ::read(fd, buf.data() + have, buf.size() - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          int e = errno;
          ::close(fd);
          throw Error(ErrorCode::kIo, "reading corpus file " + path + ": " + std::strerror(e));
        }
        if (r == 0) eof = true;
        have += size_t(r);
      }
      size_t start = 0;
      for (;;) {
        const void* nl = std::memchr(buf.data() + start, '\n', have - start);
        if (!nl) break;
        size_t end = size_t(static_cast<const char*>(nl) - buf.data());
        fn(std::string_view(buf.data() + start, end - start));
        start = end + 1;
      }
      size_t rest = have - start;
      if (eof) {
        if (rest > 0) fn(std::string_view(buf.data() + start, rest));  // no final newline
        break;
      }
      if (rest >= kMaxLineBytes) {
        // A line longer than kMaxLineBytes: deliver a piece cut at its last whitespace.
        size_t cut = rest;
        while (cut > 0 && buf[start + cut - 1] != ' ' && buf[start + cut - 1] != '\t') --cut;
        if (cut == 0) cut = rest;
        fn(std::string_view(buf.data() + start, cut));
        start += cut;
      }
      std::memmove(buf.data(), buf.data() + start, have - start);
      have -= start;
    }
    ::close(fd);
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
