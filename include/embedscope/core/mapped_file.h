// MappedFile: a read-only, private memory map of a whole file.
//
// The size is taken from fstat() at open time and never re-read. If another process truncates
// the file while it is mapped, touching the lost pages raises SIGBUS: that is the documented
// cost of zero-copy loading (docs/reliability.md W17). Writers in this project never truncate in
// place (they write a temp file and rename), so our own outputs cannot cause it.
//
// Empty files map to a null pointer with size 0.
//
//   auto f = MappedFile::open("model.safetensors");   // throws Error(kIo / kNotFound)
//   std::span<const std::byte> bytes = f->bytes();
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace embedscope {

class MappedFile {
 public:
  // Throws Error(kNotFound) when the file does not exist, Error(kIo) for other failures
  // (including a directory).
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  // The first min(n, size) bytes of the file, read without mapping it (how a format is
  // recognised before its reader maps the file once). The same errors as open().
  static std::string read_head(const std::string& path, size_t n);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // Drops the whole pages inside [p, p+n) from this process's resident set when the range lies
  // inside one live MappedFile (the page cache keeps them; a later read faults them back). Lets a
  // single streaming pass over a large table keep RSS flat. Any other range (owned memory) is
  // left alone. Returns the bytes dropped.
  static size_t drop_resident(const std::byte* p, size_t n);
  // Maps the pages holding [p, p + n) of a live mapping into the process now (MADV_POPULATE_READ,
  // Linux 5.14+); best effort: false when the kernel refused or p is not in a live mapping.
  static bool populate(const std::byte* p, size_t n);

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace embedscope
