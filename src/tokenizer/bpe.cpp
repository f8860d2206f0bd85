// BpeTokenizer: validation, indexing, encode / decode.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <new>

#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "tokenizer/bpe_impl.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace embedscope {

// ---------------------------------------------------------------------------------------------
// Tables

TokenId TokenIndex::build(const TokenVec& tokens, size_t* dup) {
  size_t cap = 16;
  while (cap < tokens.size() * 2) cap <<= 1;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  // One probe sequence per token finds both an earlier equal token and the free slot. Hashes
  // are computed a batch ahead and their slots prefetched (the table is larger than L2).
  constexpr size_t kBatch = 16;
  uint64_t hashes[kBatch];
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (id % kBatch == 0) {
      for (size_t k = 0; k < kBatch && id + k < tokens.size(); ++k) {
        const std::string& u = tokens[id + k];
        hashes[k] = hash_of(u.data(), u.size());
        prefetch(hashes[k]);
      }
    }
    const std::string& t = tokens[id];
    uint64_t h = hashes[id % kBatch];
    uint64_t head = 0;
    std::memcpy(&head, t.data(), t.size() < 8 ? t.size() : 8);
    size_t i = h & mask_;
    for (; slots_[i].hash != 0; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == h && s.len == t.size() && s.head == head &&
          (t.size() <= 8 || tokens[size_t(s.id)] == t)) {
        *dup = id;
        return s.id;
      }
    }
    slots_[i] = Slot{h, head, TokenId(id), uint32_t(t.size())};
  }
  return -1;
}

void PairIndex::reserve(size_t n) {
  size_t cap = 16;
  int bits = 4;
  while (cap < n * 2) cap <<= 1, ++bits;
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  shift_ = 64 - bits;
}

bool PairIndex::insert(TokenId a, TokenId b, Value v) {
  uint64_t key = (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) return false;
    if (s.key == kEmpty) {
      s.key = key;
      s.value = v;
      return true;
    }
  }
}

const std::array<uint32_t, 256>& byte_to_unicode() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

const std::array<int16_t, 512>& byte_level_inverse() {
  static const std::array<int16_t, 512> inverse = [] {
    std::array<int16_t, 512> inv;
    inv.fill(-1);
    const auto& fwd = byte_to_unicode();
    for (int b = 0; b < 256; ++b) inv[fwd[size_t(b)]] = int16_t(b);
    return inv;
  }();
  return inverse;
}

bool byte_level_decode(std::string_view s, std::string* out, size_t* bad_pos) {
  const std::array<int16_t, 512>& inverse = byte_level_inverse();
  out->clear();
  auto* p = reinterpret_cast<const uint8_t*>(s.data());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t len = utf8::decode(p + i, s.size() - i, &cp);
    if (cp == utf8::kInvalid || cp >= 512 || inverse[cp] < 0) {
      *bad_pos = i;
      return false;
    }
    out->push_back(char(inverse[cp]));
    i += len;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Building

namespace {

std::string quoted(std::string_view raw) { return "'" + display_token(raw) + "'"; }

}  // namespace

std::unique_ptr<BpeTokenizer::Impl> BpeTokenizer::Impl::with_tokens(std::string src, TokenVec toks,
                                                                    PreTokenizerKind kind) {
  auto impl = std::make_unique<Impl>();
  if (toks.empty()) throw Error(ErrorCode::kCorrupt, src + ": the vocabulary is empty");
  if (toks.size() > size_t(std::numeric_limits<TokenId>::max()))
    throw Error(ErrorCode::kCorrupt, src + ": " + std::to_string(toks.size()) + " tokens, limit " +
                                         std::to_string(std::numeric_limits<TokenId>::max()));
  for (size_t id = 0; id < toks.size(); ++id)
    if (toks[id].empty())
      throw Error(ErrorCode::kCorrupt, src + ": token id " + std::to_string(id) + " is empty");
  impl->source = std::move(src);
  impl->tokens = std::move(toks);
  impl->pre_tokenizer = kind;
  const auto& tokens = impl->tokens;
  const std::string& source = impl->source;
  size_t dup = 0;
  if (TokenId found = impl->index.build(tokens, &dup); found >= 0)
    throw Error(ErrorCode::kCorrupt, source + ": token id " + std::to_string(dup) + " " +
                                         quoted(tokens[dup]) + " duplicates token id " +
                                         std::to_string(found));
  for (int b = 0; b < 256; ++b) {
    char c = char(b);
    TokenId id = impl->index.find(tokens, &c, 1);
    if (id < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      throw Error(ErrorCode::kCorrupt,
                  source + ": no token for byte " + hex +
                      " (a byte-level BPE vocabulary has all 256 single bytes)");
    }
    impl->byte_token[size_t(b)] = id;
  }
  return impl;
}

void BpeTokenizer::Impl::finish(const std::vector<uint8_t>& produced,
                                const std::vector<TokenId>& extra_special) {
  special.assign(tokens.size(), 0);
  for (size_t id = 0; id < tokens.size(); ++id)
    if (tokens[id].size() > 1 && !produced[id]) special[id] = 1;
  for (TokenId id : extra_special) {
    if (id < 0 || size_t(id) >= tokens.size())
      throw Error(ErrorCode::kCorrupt, source + ": special token id " + std::to_string(id) +
                                           " is outside the vocabulary (size " +
                                           std::to_string(tokens.size()) + ")");
    if (tokens[size_t(id)].size() > 1) special[size_t(id)] = 1;
  }
  special_ids.clear();
  for (size_t id = 0; id < tokens.size(); ++id)
    if (special[id]) special_ids.push_back(TokenId(id));
  std::stable_sort(special_ids.begin(), special_ids.end(), [&](TokenId x, TokenId y) {
    return tokens[size_t(x)].size() > tokens[size_t(y)].size();
  });
  whole_ok.reset(new std::atomic<uint8_t>[tokens.size()]);
  for (size_t i = 0; i < tokens.size(); ++i) whole_ok[i].store(0, std::memory_order_relaxed);
}

BpeTokenizer BpeTokenizer::from_parts(BpeParts parts) {
  const std::string src = parts.source;
  auto impl = Impl::with_tokens(src,
                                TokenVec(std::make_move_iterator(parts.tokens.begin()),
                                         std::make_move_iterator(parts.tokens.end())),
                                parts.pre_tokenizer);
  impl->ignore_merges = parts.ignore_merges;
  const auto& tokens = impl->tokens;
  if (parts.merges.empty())
    throw Error(ErrorCode::kCorrupt, src + ": no merges loaded (a BPE needs at least one)");
  if (parts.merges.size() > std::numeric_limits<uint32_t>::max() / 2)
    throw Error(ErrorCode::kCorrupt, src + ": too many merges");
  std::vector<uint8_t> produced(tokens.size(), 0);
  impl->merges.reserve(parts.merges.size());
  std::string joined;
  for (size_t r = 0; r < parts.merges.size(); ++r) {
    const auto& m = parts.merges[r];
    auto where = [&] { return src + ": " + parts.merges_where + " " + std::to_string(m.line); };
    TokenId a = impl->index.find(tokens, m.left.data(), m.left.size());
    if (a < 0)
      throw Error(ErrorCode::kCorrupt,
                  where() + ": " + quoted(m.left) + " is not in the vocabulary");
    TokenId b = impl->index.find(tokens, m.right.data(), m.right.size());
    if (b < 0)
      throw Error(ErrorCode::kCorrupt,
                  where() + ": " + quoted(m.right) + " is not in the vocabulary");
    joined = m.left + m.right;
    TokenId c = impl->index.find(tokens, joined.data(), joined.size());
    if (c < 0)
      throw Error(ErrorCode::kCorrupt,
                  where() + ": the merged token " + quoted(joined) + " is not in the vocabulary");
    if (!impl->merges.insert(a, b, {uint32_t(r), c}))
      throw Error(ErrorCode::kCorrupt,
                  where() + ": duplicate merge " + quoted(m.left) + " " + quoted(m.right));
    produced[size_t(c)] = 1;
  }
  impl->n_merges = parts.merges.size();
  impl->finish(produced, parts.special);
  return BpeTokenizer(std::move(impl));
}

std::unique_ptr<BpeTokenizer::Impl> BpeTokenizer::Impl::clone() const {
  auto c = std::make_unique<Impl>();
  c->source = source;
  c->tokens = tokens;
  c->index = index;
  c->merges = merges;
  c->n_merges = n_merges;
  c->byte_token = byte_token;
  c->special = special;
  c->special_ids = special_ids;
  c->pre_tokenizer = pre_tokenizer;
  c->ignore_merges = ignore_merges;
  c->whole_ok.reset(new std::atomic<uint8_t>[tokens.size()]);
  for (size_t i = 0; i < tokens.size(); ++i)
    c->whole_ok[i].store(whole_ok[i].load(std::memory_order_relaxed), std::memory_order_relaxed);
  return c;
}

// ---------------------------------------------------------------------------------------------
// BPE

namespace {

// Uninitialised uint32_t scratch; blocks of 2 MB and more are huge-page aligned and advised, so a
// 1 MB piece costs a handful of page faults instead of thousands (a fault costs microseconds on
// virtual machines, more than the merging itself).
class ScratchU32 {
 public:
  explicit ScratchU32(size_t n) {
    constexpr size_t kHuge = size_t(2) << 20;
    size_t bytes = std::max<size_t>(n, 1) * sizeof(uint32_t);
    if (bytes >= kHuge) {
      size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p_ = static_cast<uint32_t*>(std::aligned_alloc(kHuge, rounded));
      if (!p_) throw std::bad_alloc();
      ::madvise(p_, rounded, MADV_HUGEPAGE);  // a hint; ignored where THP is off
    } else {
      p_ = static_cast<uint32_t*>(std::malloc(bytes));
      if (!p_) throw std::bad_alloc();
    }
  }
  ~ScratchU32() { std::free(p_); }
  ScratchU32(const ScratchU32&) = delete;
  ScratchU32& operator=(const ScratchU32&) = delete;
  uint32_t* data() { return p_; }

 private:
  uint32_t* p_;
};

}  // namespace

// The reference loop of GPT-2's encoder.py: repeatedly take the adjacent pair with the lowest
// merge rank and merge all its occurrences left to right. O(n^2) lookups; used for short pieces.
void BpeTokenizer::Impl::bpe_small(const char* p, size_t n, std::vector<TokenId>* out) const {
  TokenId stack_buf[64];
  std::vector<TokenId> heap_buf;
  TokenId* s = stack_buf;
  if (n > 64) {
    heap_buf.resize(n);
    s = heap_buf.data();
  }
  size_t m = n;
  for (size_t i = 0; i < n; ++i) s[i] = byte_token[uint8_t(p[i])];
  while (m > 1) {
    uint32_t best = std::numeric_limits<uint32_t>::max();
    size_t best_i = 0;
    TokenId merged = -1;
    for (size_t i = 0; i + 1 < m; ++i) {
      const PairIndex::Value* v = merges.find(s[i], s[i + 1]);
      if (v && v->rank < best) best = v->rank, best_i = i, merged = v->id;
    }
    if (merged < 0) break;
    TokenId a = s[best_i], b = s[best_i + 1];
    size_t w = best_i;
    for (size_t i = best_i; i < m;) {
      if (i + 1 < m && s[i] == a && s[i + 1] == b) {
        s[w++] = merged;
        i += 2;
      } else {
        s[w++] = s[i++];
      }
    }
    m = w;
  }
  out->insert(out->end(), s, s + m);
}

// Same result as bpe_small, in time linear in n plus sorting: a linked list of symbols and one
// bucket of candidate positions per merge rank, with a min-heap over the ranks that have a
// bucket (a few, not one entry per candidate: 1 MB of 'a' has ~10 ranks but ~3M candidates).
// A pass takes the lowest rank's bucket and merges its still-valid pairs left to right, which is
// encoder.py's "merge every occurrence of the best pair, left to right". Pairs created during a
// pass go to other buckets (a merged token differs from both its parts, so a new pair never has
// the pass's own rank) and run in a later pass even when their rank is lower, as in encoder.py.
// Stale candidates (a side merged since) are skipped by re-checking the pair's rank.
void BpeTokenizer::Impl::bpe_heap(const char* p, size_t n, std::vector<TokenId>* out) const {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  // Symbols are keyed by their first byte's offset; a live symbol's end is its offset plus its
  // token's length, so only id and prev are stored (8 bytes per input byte, in one block that
  // gets huge pages when large: page faults, not merging, dominated 1 MB pieces).
  ScratchU32 scratch(2 * n);
  auto* id = reinterpret_cast<TokenId*>(scratch.data());  // -1: absorbed by its left neighbour
  uint32_t* prev = scratch.data() + n;
  for (size_t i = 0; i < n; ++i) {
    id[i] = byte_token[uint8_t(p[i])];
    prev[i] = i == 0 ? kNone : uint32_t(i - 1);
  }
  auto next_of = [&](uint32_t l) -> uint32_t {
    size_t e = l + tokens[size_t(id[l])].size();
    return e < n ? uint32_t(e) : kNone;
  };
  // rank -> bucket: open addressing without deletion (an emptied bucket is reused when its rank
  // comes back). Distinct ranks <= min(candidates, merges), candidates <= 3n.
  size_t cap = 16;
  while (cap < 2 * std::min(3 * n, n_merges)) cap <<= 1;
  std::vector<uint32_t> slot_rank(cap, kNone), slot_bucket(cap);
  auto slot_of = [&](uint32_t rank) {
    size_t s = size_t((uint64_t(rank) * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (slot_rank[s] != rank && slot_rank[s] != kNone) s = (s + 1) & (cap - 1);
    return s;
  };
  struct Bucket {
    std::vector<uint32_t> pos;
    bool sorted = true;
  };
  std::vector<Bucket> buckets;
  std::vector<uint32_t> rank_heap;  // ranks whose bucket is non-empty (min-heap)
  auto add = [&](uint32_t l) {
    if (l == kNone) return;
    uint32_t r = next_of(l);
    if (r == kNone) return;
    const PairIndex::Value* v = merges.find(id[l], id[r]);
    if (!v) return;
    size_t s = slot_of(v->rank);
    if (slot_rank[s] == kNone) {
      slot_rank[s] = v->rank;
      slot_bucket[s] = uint32_t(buckets.size());
      buckets.emplace_back();
    }
    Bucket& b = buckets[slot_bucket[s]];
    if (b.pos.empty()) {
      rank_heap.push_back(v->rank);
      std::push_heap(rank_heap.begin(), rank_heap.end(), std::greater<>());
    } else if (b.pos.back() > l) {
      b.sorted = false;
    }
    b.pos.push_back(l);
  };
  for (size_t i = 0; i + 1 < n; ++i) add(uint32_t(i));
  std::vector<uint32_t> pass;
  while (!rank_heap.empty()) {
    std::pop_heap(rank_heap.begin(), rank_heap.end(), std::greater<>());
    uint32_t rank = rank_heap.back();
    rank_heap.pop_back();
    Bucket& b = buckets[slot_bucket[slot_of(rank)]];
    pass.swap(b.pos);  // b is empty again; adds during the pass fill other buckets
    b.pos.clear();
    if (!b.sorted) std::sort(pass.begin(), pass.end());
    b.sorted = true;
    for (uint32_t l : pass) {
      if (id[l] < 0) continue;
      uint32_t r = next_of(l);
      if (r == kNone) continue;
      const PairIndex::Value* v = merges.find(id[l], id[r]);
      if (!v || v->rank != rank) continue;
      uint32_t after = next_of(r);
      id[l] = v->id;
      id[r] = -1;
      if (after != kNone) prev[after] = l;
      add(prev[l]);
      add(l);
    }
    pass.clear();
  }
  for (uint32_t i = 0; i != kNone; i = next_of(i)) out->push_back(id[i]);
}

void BpeTokenizer::Impl::bpe(const char* p, size_t n, std::vector<TokenId>* out) const {
  if (n == 1) {
    out->push_back(byte_token[uint8_t(*p)]);
    return;
  }
  TokenId whole = index.find(tokens, p, n);
  if (whole >= 0 && ignore_merges) {
    out->push_back(whole);
    return;
  }
  if (whole >= 0) {
    std::atomic<uint8_t>& state = whole_ok[size_t(whole)];
    uint8_t st = state.load(std::memory_order_relaxed);
    if (st == 1) {
      out->push_back(whole);
      return;
    }
    if (st == 0) {
      size_t before = out->size();
      if (n <= 64)
        bpe_small(p, n, out);
      else
        bpe_heap(p, n, out);
      bool ok = out->size() == before + 1 && (*out)[before] == whole;
      state.store(ok ? 1 : 2, std::memory_order_relaxed);
      return;
    }
  }
  if (n <= 64)
    bpe_small(p, n, out);
  else
    bpe_heap(p, n, out);
}

void BpeTokenizer::Impl::encode_plain(std::string_view text, size_t base, std::vector<TokenId>* ids,
                                      std::vector<size_t>* offsets) const {
  auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t n = text.size();
  for (size_t pos = 0; pos < n;) {
    size_t end = pretok::next_piece(pre_tokenizer, s, n, pos);
    size_t before = ids->size();
    bpe(text.data() + pos, end - pos, ids);
    if (offsets) {
      size_t off = base + pos;
      for (size_t i = before; i < ids->size(); ++i) {
        offsets->push_back(off);
        off += tokens[size_t((*ids)[i])].size();
      }
    }
    pos = end;
  }
}

void BpeTokenizer::Impl::encode(std::string_view text, bool allow_special,
                                std::vector<TokenId>* ids, std::vector<size_t>* offsets) const {
  if (!allow_special || special_ids.empty()) {
    encode_plain(text, 0, ids, offsets);
    return;
  }
  // Leftmost occurrence of any special token; the longest one at that position.
  size_t seg = 0;
  for (size_t pos = 0; pos < text.size();) {
    TokenId hit = -1;
    for (TokenId sid : special_ids) {
      const std::string& t = tokens[size_t(sid)];
      if (text.size() - pos >= t.size() && t[0] == text[pos] &&
          text.compare(pos, t.size(), t) == 0) {
        hit = sid;
        break;
      }
    }
    if (hit < 0) {
      ++pos;
      continue;
    }
    encode_plain(text.substr(seg, pos - seg), seg, ids, offsets);
    ids->push_back(hit);
    if (offsets) offsets->push_back(pos);
    pos += tokens[size_t(hit)].size();
    seg = pos;
  }
  encode_plain(text.substr(seg), seg, ids, offsets);
}

// ---------------------------------------------------------------------------------------------
// Public API

BpeTokenizer::BpeTokenizer() = default;
BpeTokenizer::BpeTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpeTokenizer::~BpeTokenizer() = default;
BpeTokenizer::BpeTokenizer(BpeTokenizer&&) noexcept = default;
BpeTokenizer& BpeTokenizer::operator=(BpeTokenizer&&) noexcept = default;
BpeTokenizer::BpeTokenizer(const BpeTokenizer& o) : impl_(o.impl_ ? o.impl_->clone() : nullptr) {}
BpeTokenizer& BpeTokenizer::operator=(const BpeTokenizer& o) {
  if (this != &o) impl_ = o.impl_ ? o.impl_->clone() : nullptr;
  return *this;
}

namespace {
const BpeTokenizer::Impl& need(const std::unique_ptr<BpeTokenizer::Impl>& p) {
  if (!p) throw Error(ErrorCode::kInvalidArgument, "BpeTokenizer: no vocabulary loaded");
  return *p;
}
}  // namespace

size_t BpeTokenizer::vocab_size() const { return impl_ ? impl_->tokens.size() : 0; }
PreTokenizerKind BpeTokenizer::pre_tokenizer() const { return need(impl_).pre_tokenizer; }

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool allow_special) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 4 + 1);
  need(impl_).encode(text, allow_special, &ids, nullptr);
  return ids;
}

std::vector<TokenId> BpeTokenizer::encode_with_offsets(std::string_view text,
                                                       std::vector<size_t>* offsets,
                                                       bool allow_special) const {
  std::vector<TokenId> ids;
  std::vector<size_t> tmp;
  need(impl_).encode(text, allow_special, &ids, offsets ? offsets : &tmp);
  return ids;
}

size_t BpeTokenizer::encode_into(std::string_view text, std::span<TokenId> out,
                                 bool allow_special) const {
  std::vector<TokenId> ids = encode(text, allow_special);
  std::copy_n(ids.begin(), std::min(ids.size(), out.size()), out.begin());
  return ids.size();
}

std::vector<TokenId> BpeTokenizer::encode_parallel(std::string_view text, ThreadPool& pool,
                                                   bool allow_special) const {
  const Impl& im = need(impl_);
  size_t n_chunks = pool.size() * 8;
  if (text.size() < (size_t(1) << 16) || n_chunks <= 1) return encode(text, allow_special);
  // Cut points: a '\n' preceded by a byte that is ASCII and not whitespace. Every pattern ends a
  // pre-token there (the '\n' cannot join the preceding letter / digit / symbol run, and with a
  // non-space before it no whitespace lookahead spans the cut), and scanning is left to right, so
  // encoding the pieces separately gives the same ids. With allow_special a special token could
  // span the cut only if it contained such a "\n"; those are not split because we cut only
  // where no special token can start before and end after (checked below).
  std::vector<size_t> cuts{0};
  size_t step = text.size() / n_chunks;
  for (size_t k = 1; k < n_chunks; ++k) {
    size_t p = std::max(cuts.back() + 1, k * step);
    while (p < text.size()) {
      char b = text[p - 1];
      bool ascii_non_space = uint8_t(b) < 0x80 && b != ' ' && !(b >= 9 && b <= 13);
      if (text[p] == '\n' && ascii_non_space) break;
      ++p;
    }
    if (p >= text.size()) break;
    if (allow_special) {
      bool spans = false;
      for (TokenId sid : im.special_ids)
        if (im.tokens[size_t(sid)].find('\n') != std::string::npos) spans = true;
      if (spans) break;
    }
    cuts.push_back(p);
  }
  cuts.push_back(text.size());
  std::vector<std::vector<TokenId>> parts(cuts.size() - 1);
  pool.parallel_for(parts.size(), [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i)
      im.encode(text.substr(cuts[i], cuts[i + 1] - cuts[i]), allow_special, &parts[i], nullptr);
  });
  std::vector<TokenId> ids;
  size_t total = 0;
  for (auto& p : parts) total += p.size();
  ids.reserve(total);
  for (auto& p : parts) ids.insert(ids.end(), p.begin(), p.end());
  return ids;
}

std::vector<std::vector<TokenId>> BpeTokenizer::encode_batch(
    std::span<const std::string_view> texts, ThreadPool& pool, bool allow_special) const {
  const Impl& im = need(impl_);
  std::vector<std::vector<TokenId>> out(texts.size());
  pool.parallel_for(texts.size(), [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i) im.encode(texts[i], allow_special, &out[i], nullptr);
  });
  return out;
}

std::string BpeTokenizer::decode_bytes(std::span<const TokenId> ids) const {
  const Impl& im = need(impl_);
  std::string out;
  for (TokenId id : ids) out += token_bytes(id);
  (void)im;
  return out;
}

std::string BpeTokenizer::decode(std::span<const TokenId> ids) const {
  return utf8_replace_invalid(decode_bytes(ids));
}

const std::string& BpeTokenizer::token_bytes(TokenId id) const {
  const Impl& im = need(impl_);
  if (id < 0 || size_t(id) >= im.tokens.size())
    throw Error(ErrorCode::kOutOfRange, "token id " + std::to_string(id) +
                                            " is out of range (vocabulary size " +
                                            std::to_string(im.tokens.size()) + ")");
  return im.tokens[size_t(id)];
}

std::optional<TokenId> BpeTokenizer::token_id(std::string_view raw_bytes) const {
  const Impl& im = need(impl_);
  TokenId id = im.index.find(im.tokens, raw_bytes.data(), raw_bytes.size());
  if (id < 0) return std::nullopt;
  return id;
}

std::string BpeTokenizer::display(TokenId id) const { return display_token(token_bytes(id)); }

bool BpeTokenizer::is_special(TokenId id) const {
  const Impl& im = need(impl_);
  return id >= 0 && size_t(id) < im.tokens.size() && im.special[size_t(id)];
}

std::vector<TokenId> BpeTokenizer::bpe_reference(std::string_view piece) const {
  std::vector<TokenId> out;
  if (!piece.empty()) need(impl_).bpe_small(piece.data(), piece.size(), &out);
  return out;
}

}  // namespace embedscope
