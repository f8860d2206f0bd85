// Snowball English stemmer (Porter2) through libstemmer (Debian libstemmer-dev).
//
// Used by the labeller to call two tokens variants when they share a stem ("computing",
// "computer" -> "comput"). Input is lower-cased ASCII-wise before stemming.
//
// Thread-safety: stem() may be called concurrently (libstemmer's state is guarded by a mutex).
//
//   Stemmer s;
//   s.stem("running");   // "run"
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

struct sb_stemmer;  // libstemmer's handle (global namespace)

namespace embedscope {

class Stemmer {
 public:
  Stemmer();  // Error(kUnsupported) if libstemmer lacks the English algorithm
  ~Stemmer();
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  std::string stem(std::string_view word) const;

 private:
  ::sb_stemmer* st_ = nullptr;
  mutable std::mutex mu_;
};

}  // namespace embedscope
