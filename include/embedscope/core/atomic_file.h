// Crash-safe file writing: write to a temp file in the same folder, fsync it, rename it over
// the destination, fsync the folder.
//
// After a crash at any moment the destination holds either its old complete content or the
// new complete content, never a mix (docs/reliability.md C4-C6, C9, C12). The temp file lives in
// the destination's folder so rename() never crosses filesystems (EXDEV). On any failure (ENOSPC,
// read-only folder) the temp file is removed, the destination is untouched, and Error(kIo) names
// the path and the system error. Never opens the destination with O_TRUNC, so a reader that has
// the old file mmapped keeps a valid view.
//
//   AtomicFile f("out.safetensors");      // creates out.safetensors.tmp-XXXXXX
//   f.write(header.data(), header.size());
//   f.commit();                            // fsync, rename, fsync folder
//   // destructor without commit(): temp file removed
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace embedscope {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws Error(kIo) if the temp file can't be made
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);  // throws Error(kIo) (ENOSPC, EFBIG, ...)
  void write(std::string_view s) { write(s.data(), s.size()); }
  size_t bytes_written() const { return written_; }
  void commit();  // throws Error(kIo); after it the object is inert

 private:
  void flush_buffer();
  std::string path_, tmp_path_;
  int fd_ = -1;
  size_t written_ = 0;
  std::string buf_;
};

// Convenience: atomically replace `path` with `content`.
void write_file_atomic(const std::string& path, std::string_view content);

// fsync a folder (after a rename inside it). Throws Error(kIo).
void fsync_dir(const std::string& dir);

}  // namespace embedscope
