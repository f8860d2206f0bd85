#include "embedscope/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "embedscope/core/detach.h"
#include "embedscope/core/error.h"

namespace embedscope {

namespace {

// Live read-only file mappings, start -> size, so drop_resident() can prove that a range is one
// of them (madvise(MADV_DONTNEED) on anonymous or heap memory would zero it).
// Both are never destroyed: a MappedFile held by another static object (the shared WordNet
// of api::shared_labeller()) is released during exit, after a function-local static map
// would already be gone.
std::mutex& maps_mu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<uintptr_t, size_t>& live_maps() {
  static auto* m = new std::map<uintptr_t, size_t>;
  return *m;
}

}  // namespace

namespace {

// An open descriptor of a regular file, and its size; throws open()'s errors.
int open_regular(const std::string& path, size_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    throw Error(e == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                path + ": cannot open: " + std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(ErrorCode::kIo, path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorCode::kIo, path + ": not a regular file");
  }
  *size = size_t(st.st_size);
  return fd;
}

}  // namespace

std::string MappedFile::read_head(const std::string& path, size_t n) {
  size_t size = 0;
  const int fd = open_regular(path, &size);
  std::string head(std::min(n, size), '\0');
  size_t got = 0;
  while (got < head.size()) {
    const ssize_t r = ::pread(fd, head.data() + got, head.size() - got, off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = r < 0 ? errno : 0;
      ::close(fd);
      throw Error(ErrorCode::kIo, path + ": cannot read its first " + std::to_string(head.size()) +
                                      " bytes: " + (e ? std::strerror(e) : "the file shrank"));
    }
    got += size_t(r);
  }
  ::close(fd);
  return head;
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  size_t size = 0;
  const int fd = open_regular(path, &size);
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = size;
  if (f->size_ > 0) {
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw Error(ErrorCode::kIo, path + ": cannot mmap " + std::to_string(f->size_) +
                                      " bytes: " + std::strerror(e));
    }
    f->data_ = static_cast<const std::byte*>(p);
    std::lock_guard<std::mutex> lock(maps_mu());
    live_maps()[reinterpret_cast<uintptr_t>(p)] = f->size_;
  }
  ::close(fd);
  return f;
}

MappedFile::~MappedFile() {
  if (!data_) return;
  {
    std::lock_guard<std::mutex> lock(maps_mu());
    live_maps().erase(reinterpret_cast<uintptr_t>(data_));
  }
  if (!in_detached_child()) ::munmap(const_cast<std::byte*>(data_), size_);
}

size_t MappedFile::drop_resident(const std::byte* p, size_t n) {
  if (n == 0) return 0;
  const uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + n;
  {
    std::lock_guard<std::mutex> lock(maps_mu());
    auto& m = live_maps();
    auto it = m.upper_bound(b);
    if (it == m.begin()) return 0;
    --it;
    if (e < b || e > it->first + it->second) return 0;  // not inside one live mapping
  }
  static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (b + page - 1) / page * page, hi = e / page * page;  // whole pages only
  if (hi <= lo) return 0;
  // Clean pages of a read-only file mapping: the process forgets them, the page cache keeps them,
  // and the next read faults them back in. Failure only means they stay resident.
  if (::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) return 0;
  return hi - lo;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14 uapi; older C libraries lack the name
#endif

bool MappedFile::populate(const std::byte* p, size_t n) {
  if (n == 0) return true;
  const auto b = reinterpret_cast<uintptr_t>(p), e = b + n;
  {
    std::lock_guard<std::mutex> lock(maps_mu());
    auto& m = live_maps();
    auto it = m.upper_bound(b);
    if (it == m.begin()) return false;
    --it;
    if (e < b || e > it->first + it->second) return false;  // not inside one live mapping
  }
  static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  // Outward to whole pages: the mapping starts on a page and its last page is mapped whole.
  const uintptr_t lo = b / page * page, hi = (e + page - 1) / page * page;
  return ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_READ) == 0;
}

}  // namespace embedscope
