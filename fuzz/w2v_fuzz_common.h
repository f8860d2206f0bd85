// Shared body of the word2vec fuzz targets (text and binary readers differ only in the loader).
// The readers take a path (they mmap the file), so each input is written to an anonymous
// memfd and opened through /proc/self/fd. Invariants (docs/reliability.md 6.0): only
// embedscope::Error escapes; an accepted file gives a table whose rows, words and norms are
// all readable, with one word per row and only finite values.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/formats/word2vec.h"

namespace embedscope::fuzz {

using W2vLoader = LoadedEmbeddings (*)(const std::string&, const LoadOptions&);

inline int run_w2v_input(const char* name, W2vLoader load, const uint8_t* data, size_t size) {
  int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (size_t off = 0; off < size;) {
    ssize_t n = ::write(fd, data + off, size - off);
    if (n <= 0) std::abort();
    off += size_t(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  for (bool strict : {false, true}) {
    LoadOptions options;
    options.strict_utf8 = strict;
    try {
      LoadedEmbeddings e = load(path, options);
      if (e.vocab.size() != e.table.n_rows() || e.table.n_rows() == 0 || e.table.dim() == 0)
        std::abort();
      volatile float sink = 0;
      for (float n : e.table.norms()) sink = sink + n;
      if (e.table.n_nonfinite() != 0) std::abort();  // NaN / Inf are rejected by policy
    } catch (const Error&) {
    }
  }
  ::close(fd);
  return 0;
}

}  // namespace embedscope::fuzz
