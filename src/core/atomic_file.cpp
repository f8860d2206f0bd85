#include "embedscope/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "embedscope/core/error.h"

namespace embedscope {
namespace {
constexpr size_t kBufferSize = 1 << 20;

std::string dir_of(const std::string& path) {
  auto pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

[[noreturn]] void io_error(const std::string& what, const std::string& path, int e) {
  throw Error(ErrorCode::kIo, path + ": " + what + ": " + std::strerror(e));
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::vector<char> tmpl(path_.begin(), path_.end());
  const char suffix[] = ".tmp-XXXXXX";
  tmpl.insert(tmpl.end(), suffix, suffix + sizeof(suffix));
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) io_error("cannot create temporary file in " + dir_of(path_), path_, errno);
  ::fchmod(fd, 0644);
  fd_ = fd;
  tmp_path_ = tmpl.data();
  buf_.reserve(kBufferSize);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void AtomicFile::flush_buffer() {
  const char* p = buf_.data();
  size_t n = buf_.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      io_error("write failed", tmp_path_, errno);
    }
    p += w;
    n -= size_t(w);
  }
  buf_.clear();
}

void AtomicFile::write(const void* data, size_t n) {
  ES_CHECK(fd_ >= 0);
  written_ += n;
  if (buf_.size() + n > kBufferSize) flush_buffer();
  if (n >= kBufferSize) {
    buf_.assign(static_cast<const char*>(data), n);
    flush_buffer();
    return;
  }
  buf_.append(static_cast<const char*>(data), n);
}

void AtomicFile::commit() {
  ES_CHECK(fd_ >= 0);
  flush_buffer();
  if (::fsync(fd_) != 0) io_error("fsync failed", tmp_path_, errno);
  if (::close(fd_) != 0) {
    fd_ = -1;
    int e = errno;
    ::unlink(tmp_path_.c_str());
    io_error("close failed", tmp_path_, e);
  }
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp_path_.c_str());
    io_error("cannot rename " + tmp_path_ + " into place", path_, e);
  }
  fsync_dir(dir_of(path_));
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_error("cannot open folder for fsync", dir, errno);
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) io_error("fsync of folder failed", dir, e);
}

}  // namespace embedscope
