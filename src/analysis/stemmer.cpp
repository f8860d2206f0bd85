// libstemmer wrapper; sb_stemmer keeps a per-object buffer, hence the mutex.
#include "embedscope/analysis/stemmer.h"

#include <libstemmer.h>

#include "embedscope/core/error.h"

namespace embedscope {

Stemmer::Stemmer() {
  st_ = sb_stemmer_new("english", "UTF_8");
  if (!st_) throw Error(ErrorCode::kUnsupported, "libstemmer: no 'english' UTF_8 stemmer");
}

Stemmer::~Stemmer() { sb_stemmer_delete(st_); }

std::string Stemmer::stem(std::string_view word) const {
  std::string w(word);
  for (char& c : w)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  std::lock_guard<std::mutex> lock(mu_);
  const sb_symbol* r =
      sb_stemmer_stem(st_, reinterpret_cast<const sb_symbol*>(w.data()), int(w.size()));
  if (!r) throw std::bad_alloc();
  return std::string(reinterpret_cast<const char*>(r), size_t(sb_stemmer_length(st_)));
}

}  // namespace embedscope
