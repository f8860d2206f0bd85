// BpeTokenizer::Impl and its lookup tables (internal to the tokenizer module).
#pragma once

#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "embedscope/tokenizer/bpe.h"

namespace embedscope {

// Fast non-cryptographic hash of short byte strings (token lookup on the hot path).
inline uint64_t hash_bytes(const char* p, size_t n) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = 0x243F6A8885A308D3ull ^ (n * kMul);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8, n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * kMul;
  h ^= h >> 32;
  return h * kMul;
}

// Allocator for the load-time tables (token index, pair index, token list; a few MB that are
// all written once at load). Blocks of 1 MB and more come from their own 2 MB-aligned mapping
// advised MADV_HUGEPAGE, so filling them costs a few huge-page faults instead of ~1,700 4 KB
// faults at ~5 us each on virtual machines (that was a third of the GPT-2 load time). Where
// transparent huge pages are off the advice is ignored and this is a plain mapping. Smaller
// blocks use operator new.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;
  static constexpr size_t kMin = size_t(1) << 20;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  static size_t rounded(size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }
  T* allocate(size_t n) {
    if (n > (std::numeric_limits<size_t>::max() - 2 * kHuge) / sizeof(T)) throw std::bad_alloc();
    size_t bytes = n * sizeof(T);
    if (bytes < kMin) return static_cast<T*>(::operator new(bytes));
    size_t size = rounded(bytes);
    // Over-map by one huge page and trim, so the block starts on a 2 MB boundary.
    void* raw =
        ::mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    uintptr_t lo = reinterpret_cast<uintptr_t>(raw);
    uintptr_t aligned = (lo + kHuge - 1) & ~uintptr_t(kHuge - 1);
    if (aligned > lo) ::munmap(raw, aligned - lo);
    if (aligned + size < lo + size + kHuge)
      ::munmap(reinterpret_cast<void*>(aligned + size), lo + size + kHuge - aligned - size);
    ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint
    return reinterpret_cast<T*>(aligned);
  }
  void deallocate(T* p, size_t n) noexcept {
    size_t bytes = n * sizeof(T);
    if (bytes < kMin)
      ::operator delete(p);
    else
      ::munmap(p, rounded(bytes));
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// Raw token bytes by id.
using TokenVec = std::vector<std::string, HugePageAllocator<std::string>>;

// Open-addressing map from token bytes to id; the bytes live in Impl::tokens. A slot keeps the
// full hash, the length and the first 8 bytes, so tokens of up to 8 bytes (most of them) are
// matched without touching Impl::tokens (one cache miss per lookup instead of two).
class TokenIndex {
 public:
  // Returns -1, or the id of an earlier token with the same bytes as tokens[*dup] (then *dup is
  // the later id and nothing more is inserted).
  TokenId build(const TokenVec& tokens, size_t* dup);
  // -1 when absent.
  TokenId find(const TokenVec& tokens, const char* p, size_t n) const {
    if (slots_.empty()) return -1;
    return find_hashed(tokens, p, n, hash_of(p, n));
  }
  // The same in two steps, so that bulk loaders can prefetch a batch of slots before probing
  // (loading is bound by cache misses on the tables, not by work).
  static uint64_t hash_of(const char* p, size_t n) { return hash_bytes(p, n) | 1u; }
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }
  TokenId find_hashed(const TokenVec& tokens, const char* p, size_t n, uint64_t h) const {
    uint64_t head = 0;
    std::memcpy(&head, p, n < 8 ? n : 8);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return -1;
      if (s.hash == h && s.len == n && s.head == head) {
        if (n <= 8) return s.id;
        const std::string& t = tokens[size_t(s.id)];
        if (std::memcmp(t.data(), p, n) == 0) return s.id;
      }
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0 = empty (stored hashes have bit 0 set)
    uint64_t head = 0;  // first 8 bytes, zero padded
    TokenId id = -1;
    uint32_t len = 0;
  };
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  size_t mask_ = 0;
};

// Open-addressing map from a pair of ids to (rank, merged id).
class PairIndex {
 public:
  struct Value {
    uint32_t rank;
    TokenId id;
  };
  void reserve(size_t n);
  // False if the pair was already present (value left unchanged).
  bool insert(TokenId a, TokenId b, Value v);
  // Inserts, or replaces the value of a pair already present (a repeated tokenizer.json merge
  // takes its last rank, as Hugging Face's map insertion does).
  void assign(TokenId a, TokenId b, Value v) {
    if (!insert(a, b, v)) *const_cast<Value*>(find(a, b)) = v;
  }
  void prefetch(TokenId a, TokenId b) const {
    __builtin_prefetch(&slots_[slot_of((uint64_t(uint32_t(a)) << 32) | uint32_t(b))]);
  }
  const Value* find(TokenId a, TokenId b) const {
    uint64_t key = (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == kEmpty) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  struct Slot {
    uint64_t key = kEmpty;
    Value value{};
  };
  size_t slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  size_t mask_ = 0;
  int shift_ = 63;
};

struct BpeTokenizer::Impl {
  std::string source;
  TokenVec tokens;  // raw bytes by id
  TokenIndex index;
  PairIndex merges;
  size_t n_merges = 0;
  std::array<TokenId, 256> byte_token{};
  std::vector<uint8_t> special;      // 1 for special ids
  std::vector<TokenId> special_ids;  // longest content first (leftmost-longest matching)
  PreTokenizerKind pre_tokenizer = PreTokenizerKind::kGpt2;
  // tokenizer.json model.ignore_merges (Llama-3): a pre-token that is a token is taken whole.
  bool ignore_merges = false;
  // Per token: does BPE of its own bytes give exactly this token? 0 unknown, 1 yes, 2 no.
  // Filled lazily (benign races: every writer stores the same value), so that the whole-piece
  // shortcut stays exact even for vocabularies with tokens that merges cannot reach.
  mutable std::unique_ptr<std::atomic<uint8_t>[]> whole_ok;

  // Validates tokens (non-empty, unique, all 256 single bytes; Error(kCorrupt) naming src) and
  // indexes them. Merges are added next (merges.reserve + insert, n_merges), then finish().
  static std::unique_ptr<Impl> with_tokens(std::string src, TokenVec tokens, PreTokenizerKind kind);
  // Marks special tokens (multi-byte tokens no merge produces, plus extra_special) and resets
  // the whole-token flags. produced: 1 per id that some merge yields.
  void finish(const std::vector<uint8_t>& produced, const std::vector<TokenId>& extra_special);
  std::unique_ptr<Impl> clone() const;
  // BPE of one pre-token (bytes), appended to out.
  void bpe(const char* p, size_t n, std::vector<TokenId>* out) const;
  void bpe_small(const char* p, size_t n,
                 std::vector<TokenId>* out) const;                          // O(n^2), the reference
  void bpe_heap(const char* p, size_t n, std::vector<TokenId>* out) const;  // O(n log n)
  // Encodes text (no special handling), appending ids and (if offsets) byte offsets + base.
  void encode_plain(std::string_view text, size_t base, std::vector<TokenId>* ids,
                    std::vector<size_t>* offsets) const;
  void encode(std::string_view text, bool allow_special, std::vector<TokenId>* ids,
              std::vector<size_t>* offsets) const;
};

// GPT-2's bytes_to_unicode(): the printable stand-in code point of each byte.
const std::array<uint32_t, 256>& byte_to_unicode();
// Decodes a byte-level string (e.g. "Ġcomputer") to raw bytes; nullopt-like false when a
// character is outside the alphabet (*bad_pos = its byte offset).
bool byte_level_decode(std::string_view s, std::string* out, size_t* bad_pos);
// Inverse of byte_to_unicode(): code point (< 512) -> byte, or -1 outside the alphabet.
const std::array<int16_t, 512>& byte_level_inverse();

}  // namespace embedscope
