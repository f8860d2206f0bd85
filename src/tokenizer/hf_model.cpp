// tokenizer.json models: BPE (tokenizers/src/models/bpe/{model,word}.rs) and WordPiece
// (models/wordpiece/mod.rs), 0.22.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "embedscope/core/error.h"
#include "tokenizer/bpe_impl.h"
#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

void FlatTokenMap::reserve(size_t n, size_t bytes) {
  arena_.reserve(bytes);
  size_t want = 16;
  while (want < 2 * n) want *= 2;  // load factor at most 1/2
  if (want > slots_.size()) rehash(want);
}

void FlatTokenMap::rehash(size_t n_slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(n_slots, Slot{});
  mask_ = n_slots - 1;
  for (const Slot& e : old) {
    if (e.hash == 0) continue;
    size_t i = e.hash & mask_;
    while (slots_[i].hash != 0) i = (i + 1) & mask_;
    slots_[i] = e;
  }
}

bool FlatTokenMap::insert(std::string_view s, TokenId id, bool replace) {
  if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
  if (s.size() > std::numeric_limits<uint32_t>::max()) throw std::length_error("token too long");
  const uint64_t h = hash(s);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    Slot& e = slots_[i];
    if (e.hash == 0) {
      e = Slot{h, arena_.size(), uint32_t(s.size()), id};
      arena_.append(s);
      ++size_;
      return true;
    }
    if (e.hash == h && e.len == s.size() &&
        (s.empty() || std::memcmp(arena_.data() + e.off, s.data(), s.size()) == 0)) {
      if (replace) e.id = id;
      return false;
    }
  }
}

namespace {

// Largest merge list we accept (the largest real ones are ~520k; kMaxVocab in hf_impl.h).
constexpr size_t kMaxMerges = size_t(1) << 24;
constexpr size_t kIdSlack = 65536;

std::optional<TokenId> find(const FlatTokenMap& m, std::string_view s) {
  TokenId id = m.find(s);
  if (id < 0) return std::nullopt;
  return id;
}

// model.vocab (an object token -> id) into the model's map and the shared vocabulary (tokens,
// present, ids). From
// `lists` (file order) when the fast reader has it, else from the DOM (key order).
FlatTokenMap read_vocab(const Ctx& c, const json& model, Vocab& vocab, const ModelLists* lists) {
  const bool fast = lists && lists->has_vocab;
  const json& v = c.get(model, "model", "vocab");
  if (!v.is_object())
    c.corrupt("model.vocab", "is " + std::string(v.type_name()) + ", expected an object");
  const size_t n = fast ? lists->vocab.size() : v.size();
  if (n > kMaxVocab)
    c.corrupt("model.vocab", "has " + std::to_string(n) + " entries, more than the limit " +
                                 std::to_string(kMaxVocab));
  // Ids may leave holes (GPT-4o's vocabulary does), but not many: an id beyond the entries
  // plus this slack is taken for a corrupt or hostile file rather than allocated.
  const size_t limit = std::min(kMaxVocab, n + kIdSlack);
  FlatTokenMap m;
  auto add = [&](std::string_view key, const json* value, int64_t id) {
    auto where = [&] { return "model.vocab[" + json(std::string(key)).dump() + "]"; };
    if (value && !value->is_number_integer())
      c.corrupt(where(), "is " + std::string(value->type_name()) + ", expected an integer id");
    if (id < 0 || uint64_t(id) >= limit)
      c.corrupt(where(), "id " + std::to_string(id) + " is out of range [0, " +
                             std::to_string(limit) + ") (entries + " + std::to_string(kIdSlack) +
                             ")");
    size_t k = size_t(id);
    if (k >= vocab.tokens.size()) {
      vocab.tokens.resize(k + 1);
      vocab.present.resize(k + 1, 0);
    }
    if (vocab.present[k])
      c.corrupt(where(),
                "id " + std::to_string(id) + " is also the id of " + json(vocab.tokens[k]).dump());
    vocab.present[k] = 1;
    vocab.tokens[k] = key;
    // The DOM has no repeated keys (the last one wins there); in file order a repeat is an
    // error here, and the caller's reference path (the DOM) then decides.
    if (!m.insert(key, TokenId(id))) c.corrupt(where(), "repeats a key");
  };
  if (fast) {
    m.reserve(n, lists->vocab_bytes);
    vocab.tokens.reserve(n);
    vocab.present.reserve(n);
    const auto& entries = lists->vocab;
    for (size_t r = 0; r < n; ++r) {
      // The table is bigger than the cache: fetch a later entry's slot while this one goes in.
      if (r + 8 < n) m.prefetch(FlatTokenMap::hash(entries[r + 8].first));
      add(entries[r].first, nullptr, entries[r].second);
    }
  } else {
    m.reserve(n, 0);
    for (auto it = v.begin(); it != v.end(); ++it)
      add(it.key(), &*it, it->is_number_integer() ? it->get<int64_t>() : 0);
  }
  vocab.ids = m;  // the added tokens join it later (a copy costs less than a rebuild)
  return m;
}

std::optional<std::string> opt_str(const Ctx& c, const json& j, const std::string& path,
                                   const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string())
    c.corrupt(path + "." + key, "is " + std::string(it->type_name()) + ", expected a string");
  return it->get<std::string>();
}

// Candidate merges (rank, position) popped lowest rank first, then leftmost: a binary heap of
// rank << 32 | position (one integer comparison per step), for short words.
class HeapQueue {
 public:
  void clear(size_t n) {
    heap_.clear();
    heap_.reserve(n);
  }
  void push(uint32_t rank, uint32_t pos) {
    heap_.push_back(uint64_t(rank) << 32 | pos);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  bool pop(uint32_t* rank, uint32_t* pos) {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    *rank = uint32_t(heap_.back() >> 32);
    *pos = uint32_t(heap_.back());
    heap_.pop_back();
    return true;
  }

 private:
  std::vector<uint64_t> heap_;
};

// The same order for long words in O(1) amortized per candidate: one bucket of positions per
// rank and a binary heap of the few ranks that have candidates (1 MB of 'a' has ~10 ranks but
// millions of candidates, where a heap of candidates costs ~20 cache-missing levels per pop).
// A bucket keeps the positions pushed in increasing order as a sorted run read from its head
// (initial candidates, and most later ones: merging sweeps left to right); an out-of-order
// position goes to the bucket's own small heap, and pop takes the smaller of the two fronts.
class RankQueue {
 public:
  explicit RankQueue(size_t n_merges) : n_merges_(n_merges) {}
  void clear(size_t n) {
    // Distinct ranks <= min(merges, candidates), candidates <= 3n.
    size_t cap = 16;
    while (cap < 2 * std::min(3 * n, n_merges_)) cap <<= 1;
    slot_rank_.assign(cap, kNone);
    slot_bucket_.resize(cap);
    buckets_.clear();
    ranks_.clear();
  }
  void push(uint32_t rank, uint32_t pos) {
    Bucket& b = bucket(rank);
    if (b.head == b.run.size() && b.late.empty()) {
      b.run.clear();
      b.head = 0;
      ranks_.push_back(rank);
      std::push_heap(ranks_.begin(), ranks_.end(), std::greater<>());
    }
    if (b.head == b.run.size() || pos >= b.run.back()) {
      b.run.push_back(pos);
    } else {
      b.late.push_back(pos);
      std::push_heap(b.late.begin(), b.late.end(), std::greater<>());
    }
  }
  bool pop(uint32_t* rank, uint32_t* pos) {
    if (ranks_.empty()) return false;
    *rank = ranks_.front();
    Bucket& b = bucket(*rank);
    if (b.head < b.run.size() && (b.late.empty() || b.run[b.head] <= b.late.front())) {
      *pos = b.run[b.head++];
    } else {
      std::pop_heap(b.late.begin(), b.late.end(), std::greater<>());
      *pos = b.late.back();
      b.late.pop_back();
    }
    if (b.head == b.run.size() && b.late.empty()) {
      std::pop_heap(ranks_.begin(), ranks_.end(), std::greater<>());
      ranks_.pop_back();
    }
    return true;
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  struct Bucket {
    std::vector<uint32_t> run;  // sorted from head
    size_t head = 0;
    std::vector<uint32_t> late;  // min-heap
  };
  Bucket& bucket(uint32_t rank) {
    const size_t mask = slot_rank_.size() - 1;
    size_t s = size_t((uint64_t(rank) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    while (slot_rank_[s] != rank && slot_rank_[s] != kNone) s = (s + 1) & mask;
    if (slot_rank_[s] == kNone) {
      slot_rank_[s] = rank;
      slot_bucket_[s] = uint32_t(buckets_.size());
      buckets_.emplace_back();
    }
    return buckets_[slot_bucket_[s]];
  }
  size_t n_merges_;
  std::vector<uint32_t> slot_rank_, slot_bucket_;  // rank -> bucket (open addressing)
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> ranks_;  // min-heap of the ranks whose bucket is not empty
};

class Bpe final : public Model {
 public:
  Bpe(const Ctx& c, const json& j, Vocab& vocab, const ModelLists* lists) {
    vocab_ = read_vocab(c, j, vocab, lists);
    unk_ = opt_str(c, j, "model", "unk_token");
    prefix_ = opt_str(c, j, "model", "continuing_subword_prefix");
    suffix_ = opt_str(c, j, "model", "end_of_word_suffix");
    fuse_unk_ = c.flag(j, "model", "fuse_unk", false);
    byte_fallback_ = c.flag(j, "model", "byte_fallback", false);
    ignore_merges_ = c.flag(j, "model", "ignore_merges", false);
    // llama.cpp's raw-UTF-8 BPE (GGUF only; no tokenizer.json names these): each byte of an
    // unknown character is its <0xXX> token or is dropped alone, and (gemma4) a piece of
    // newlines that is a token is taken whole without merging.
    if (c.internal) {
      bytes_each_ = c.flag(j, "model", "byte_fallback_each_byte", false);
      whole_newlines_ = c.flag(j, "model", "whole_newline_runs", false);
    }
    auto d = j.find("dropout");
    if (d != j.end() && !d->is_null() && !(d->is_number() && d->get<double>() == 0.0))
      c.unsupported("model.dropout", *d, "null (dropout is for training)");
    if (unk_) {
      auto id = find(vocab_, *unk_);
      if (!id) c.corrupt("model.unk_token", json(*unk_).dump() + " is not in model.vocab");
      unk_id_ = *id;
    }
    const json& merges = c.get(j, "model", "merges");
    if (!merges.is_array()) c.corrupt("model.merges", "is not an array");
    const bool fast = lists && lists->has_merges;
    const size_t n_merges = fast ? lists->merges.size() : merges.size();
    if (n_merges > kMaxMerges)
      c.corrupt("model.merges", "has " + std::to_string(n_merges) +
                                    " entries, more than the limit " + std::to_string(kMaxMerges));
    struct Merged {
      TokenId a, b, id;
    };
    std::vector<Merged> ranked;  // by rank
    ranked.reserve(n_merges);
    const size_t prefix_len = prefix_ ? prefix_->size() : 0;
    bool meta_crossing = false;  // some merge joins a token ending in non-'▁' to one starting '▁'
    // Merges are split and looked up a batch at a time: the batch's table slots are prefetched
    // before probing, since loading is bound by cache misses on the vocabulary table. Errors
    // are still raised in file order (a bad shape is only noted when the batch is split).
    struct Item {
      std::string_view a, b;
      const json* dom;  // the entry, for messages (DOM path only)
      std::string_view joined;
      int shape;  // 0 ok, 1 "a b" without exactly one space, 2 neither form
      size_t moff;
      uint64_t ha, hb, hm;
    };
    constexpr size_t kBatch = 32;
    std::array<Item, kBatch> batch{};
    std::string merged;  // the batch's merged tokens back to back
    auto split = [](Item& it, std::string_view s) {
      it.joined = s;
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        it.shape = 1;
      else
        it.a = s.substr(0, sp), it.b = s.substr(sp + 1);
    };
    for (size_t first = 0; first < n_merges; first += kBatch) {
      const size_t n_batch = std::min(kBatch, n_merges - first);
      merged.clear();
      for (size_t k = 0; k < n_batch; ++k) {
        Item& it = batch[k];
        it = Item{};
        if (fast) {
          const ModelLists::Merge& m = lists->merges[first + k];
          if (m.joined)
            split(it, m.a);
          else
            it.a = m.a, it.b = m.b;
        } else {
          const json& m = merges[first + k];
          it.dom = &m;
          if (m.is_string())
            split(it, m.get_ref<const std::string&>());
          else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
            it.a = m[0].get_ref<const std::string&>(), it.b = m[1].get_ref<const std::string&>();
          else
            it.shape = 2;
        }
        it.moff = merged.size();
        if (it.shape == 0 && it.b.size() >= prefix_len) {
          merged.append(it.a);
          merged.append(it.b.substr(prefix_len));
        }
      }
      for (size_t k = 0; k < n_batch; ++k) {
        Item& it = batch[k];
        size_t mend = k + 1 < n_batch ? batch[k + 1].moff : merged.size();
        it.ha = FlatTokenMap::hash(it.a);
        it.hb = FlatTokenMap::hash(it.b);
        it.hm = FlatTokenMap::hash(std::string_view(merged).substr(it.moff, mend - it.moff));
        vocab_.prefetch(it.ha);
        vocab_.prefetch(it.hb);
        vocab_.prefetch(it.hm);
      }
      for (size_t k = 0; k < n_batch; ++k) {
        const Item& it = batch[k];
        const size_t i = first + k;
        auto where = [&] { return "model.merges[" + std::to_string(i) + "]"; };
        if (it.shape == 1)
          c.corrupt(where(), json(std::string(it.joined)).dump() +
                                 " is not two tokens separated by one space");
        if (it.shape == 2)
          c.corrupt(where(),
                    it.dom->dump().substr(0, 100) + " is neither \"a b\" nor [\"a\", \"b\"]");
        TokenId ia = vocab_.find_hashed(it.a, it.ha), ib = vocab_.find_hashed(it.b, it.hb);
        if (ia < 0)
          c.corrupt(where(),
                    "left part " + json(std::string(it.a)).dump() + " is not in model.vocab");
        if (ib < 0)
          c.corrupt(where(),
                    "right part " + json(std::string(it.b)).dump() + " is not in model.vocab");
        if (it.b.size() < prefix_len)
          c.corrupt(where(), "right part " + json(std::string(it.b)).dump() +
                                 " is shorter than the continuing prefix");
        size_t mend = k + 1 < n_batch ? batch[k + 1].moff : merged.size();
        std::string_view m = std::string_view(merged).substr(it.moff, mend - it.moff);
        TokenId in = vocab_.find_hashed(m, it.hm);
        if (in < 0)
          c.corrupt(where(), "result " + json(std::string(m)).dump() + " is not in model.vocab");
        ranked.push_back({ia, ib, in});
        if (it.b.starts_with(kMeta) && !it.a.ends_with(kMeta)) meta_crossing = true;
      }
    }
    // A repeated pair takes its last rank, as HF's map insertion does: inserting from the last
    // rank down, the first insertion (kept by PairIndex) is that one.
    pairs_.reserve(ranked.size());
    rank_ids_.resize(ranked.size());
    for (size_t r = 0; r < ranked.size(); ++r) rank_ids_[r] = ranked[r].id;
    constexpr size_t kAhead = 16;
    for (size_t r = ranked.size(); r-- > 0;) {
      if (r >= kAhead) pairs_.prefetch(ranked[r - kAhead].a, ranked[r - kAhead].b);
      pairs_.insert(ranked[r].a, ranked[r].b, {uint32_t(r), ranked[r].id});
    }
    // See split_at_meta_ below.
    split_at_meta_ = !meta_crossing && !prefix_ && !suffix_ && find(vocab_, kMeta) &&
                     !(unk_ && unk_->ends_with(kMeta));
    ascii_ids_.fill(-1);
    if (!prefix_ && !suffix_)
      for (int ch = 0; ch < 128; ++ch)
        if (auto id = find(vocab_, std::string(1, char(ch)))) ascii_ids_[size_t(ch)] = *id;
    if (byte_fallback_) {
      for (int byte = 0; byte < 256; ++byte) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", byte);
        auto id = find(vocab_, name);
        byte_ids_[size_t(byte)] = id ? *id : -1;
      }
    }
  }

  std::string name() const override { return "BPE"; }

  void tokenize(const Piece& p, std::vector<TokenId>& ids,
                std::vector<TokenSpan>& offsets) const override {
    if (p.empty()) return;
    if (ignore_merges_ || (whole_newlines_ && p.s.find_first_not_of('\n') == std::string::npos)) {
      if (auto id = find(vocab_, p.s)) {
        ids.push_back(*id);
        offsets.push_back({p.a.front(), p.b.back()});
        return;
      }
    }
    std::vector<Sym> syms;
    HeapQueue heap;
    std::optional<RankQueue> buckets;  // for long words
    auto run = [&](size_t begin, size_t end) {
      syms.clear();
      syms.reserve(end - begin);  // at most one symbol per byte; no regrowth on long words
      initial_symbols(std::string_view(p.s).substr(begin, end - begin), uint32_t(begin), syms);
      if (syms.size() <= kShortWord) {
        merge(syms, heap);
      } else {
        if (!buckets) buckets.emplace(n_merges());
        merge(syms, *buckets);
      }
      for (const Sym& s : syms) {
        if (s.len == 0) continue;
        // Fallback bytes of a prefixed character may count past the piece: clamp.
        size_t last = std::min<size_t>(size_t(s.start) + s.len, p.s.size()) - 1;
        ids.push_back(s.id);
        offsets.push_back({p.a[s.start], p.b[last]});
      }
    };
    if (!split_at_meta_) {
      run(0, p.s.size());
      return;
    }
    // Words: cut before each '▁' that follows another character than '▁'.
    const std::string_view s(p.s);
    size_t begin = 0;
    for (size_t at = s.find(kMeta, 1); at != std::string_view::npos; at = s.find(kMeta, at + 3)) {
      if (at >= 3 && s.compare(at - 3, 3, kMeta) == 0) continue;
      run(begin, at);
      begin = at;
    }
    run(begin, s.size());
  }

 private:
  // U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's word-start mark (Metaspace's replacement).
  static constexpr std::string_view kMeta = "\xE2\x96\x81";
  struct Sym {
    TokenId id;
    uint32_t start, len;  // bytes of the piece; len 0 = merged away
    int32_t prev, next;
  };

  // The symbols of w, whose first byte is byte `base` of the piece.
  void initial_symbols(std::string_view w, uint32_t base, std::vector<Sym>& syms) const {
    // A pending run of unknown characters: [unk_start, unk_start + unk_len).
    bool unk = false;
    uint32_t unk_start = 0, unk_len = 0;
    auto add = [&](TokenId id, uint32_t start, uint32_t len) {
      syms.push_back({id, base + start, len, int32_t(syms.size()) - 1, int32_t(syms.size()) + 1});
    };
    auto flush_unk = [&] {
      if (unk) add(unk_id_, unk_start, unk_len);
      unk = false;
    };
    std::string buf;
    for (size_t i = 0; i < w.size();) {
      const auto byte = static_cast<unsigned char>(w[i]);
      if (byte < 0x80 && ascii_ids_[byte] >= 0) {  // no prefix / suffix: the character's token
        flush_unk();
        add(ascii_ids_[byte], uint32_t(i), 1);
        ++i;
        continue;
      }
      uint32_t cp = 0;
      size_t n = next_char(w, i, &cp);
      bool first = i == 0, last = i + n == w.size();
      std::string_view s(w.data() + i, n);
      if ((prefix_ && !first) || (suffix_ && last)) {
        buf.clear();
        if (prefix_ && !first) buf += *prefix_;
        buf += s;
        if (suffix_ && last) buf += *suffix_;
        s = buf;
      }
      if (auto id = find(vocab_, s)) {
        flush_unk();
        add(*id, uint32_t(i), uint32_t(n));
      } else {
        bool done = false;
        if (byte_fallback_) {
          bool all = true;
          for (char ch : s) all = all && byte_ids_[static_cast<unsigned char>(ch)] >= 0;
          if (all || bytes_each_) {
            flush_unk();
            // Each fallback byte token covers the character (HF gives them length 1 each).
            for (size_t k = 0; k < s.size(); ++k)
              if (TokenId b = byte_ids_[static_cast<unsigned char>(s[k])]; b >= 0)
                add(b, uint32_t(i + std::min(k, n - 1)), 1);
            done = true;
          }
        }
        if (!done && unk_) {
          if (unk && fuse_unk_) {
            unk_len += uint32_t(n);
          } else {
            flush_unk();
            unk = true, unk_start = uint32_t(i), unk_len = uint32_t(n);
          }
        }
        // Neither known, nor bytes, nor an unk token: the character is dropped (as HF does).
      }
      i += n;
    }
    flush_unk();
    if (!syms.empty()) syms.back().next = -1;
  }

  // HF's Word::merge_all: repeatedly the lowest-ranked pair, leftmost first.
  // HF's Word::merge_all on syms: repeatedly the candidate merge with the lowest (rank, left
  // position); a candidate is stale unless the pair there now merges into the same token (HF's
  // test, which accepts another pair with the same result).
  template <class Queue>
  void merge(std::vector<Sym>& syms, Queue& queue) const {
    queue.clear(syms.size());
    auto push = [&](int32_t pos) {
      int32_t nx = syms[size_t(pos)].next;
      if (nx < 0) return;
      if (const PairIndex::Value* v = pairs_.find(syms[size_t(pos)].id, syms[size_t(nx)].id))
        queue.push(v->rank, uint32_t(pos));
    };
    for (size_t i = 0; i + 1 < syms.size(); ++i) push(int32_t(i));
    uint32_t rank = 0, upos = 0;
    while (queue.pop(&rank, &upos)) {
      const auto pos = int32_t(upos);
      Sym& s = syms[size_t(pos)];
      if (s.len == 0 || s.next < 0) continue;
      Sym& r = syms[size_t(s.next)];
      const TokenId new_id = rank_ids_[rank];
      const PairIndex::Value* v = pairs_.find(s.id, r.id);
      if (!v || v->id != new_id) continue;
      s.id = new_id;
      s.len += r.len;
      r.len = 0;
      s.next = r.next;
      if (s.next >= 0) syms[size_t(s.next)].prev = pos;
      if (s.prev >= 0) push(s.prev);
      push(pos);
    }
  }

  // Words of more symbols than this merge through RankQueue, shorter ones through HeapQueue.
  static constexpr size_t kShortWord = 256;
  size_t n_merges() const { return rank_ids_.size(); }

  FlatTokenMap vocab_;
  PairIndex pairs_;                // (left id, right id) -> (rank, merged id)
  std::vector<TokenId> rank_ids_;  // rank -> merged id
  // Cut pieces into words before each '▁' that follows a character other than '▁', and merge
  // each word alone (Llama-2's tokenizer.json has no pre-tokenizer: a whole line is one piece,
  // and merging it in one heap costs a log factor and cache misses). Set at load only when it
  // gives the same ids, which holds when (i) no continuing prefix / end-of-word suffix, (ii)
  // '▁' is a token, (iii) the unk token does not end with '▁', and (iv) no merge (a, b) has b
  // starting with '▁' and a not ending with '▁'. Proof: a merged token's string is its parts'
  // concatenation (checked at load), so a symbol's string is that of its initial symbols in
  // order. At a cut the character on the right is '▁', a token by (ii), so the symbol starting
  // there begins with '▁'; the symbol ending there ends with the token of the character before
  // (not '▁'), a <0xXX> byte token (ends with '>') or the unk token ((iii); a fused unk run
  // stops at the known '▁'). By (iv) no merge joins the two, so no symbol ever spans a cut,
  // the candidates of different words never interact, and each word's merges run in the same
  // (rank, position) order as in the whole piece.
  bool split_at_meta_ = false;
  std::array<TokenId, 128> ascii_ids_{};  // ASCII character -> its token, -1 (or a prefix/suffix)
  std::optional<std::string> unk_, prefix_, suffix_;
  TokenId unk_id_ = -1;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  bool bytes_each_ = false, whole_newlines_ = false;
  std::array<TokenId, 256> byte_ids_{};
};

class WordPiece final : public Model {
 public:
  WordPiece(const Ctx& c, const json& j, Vocab& vocab, const ModelLists* lists) {
    vocab_ = read_vocab(c, j, vocab, lists);
    std::string unk = c.str(j, "model", "unk_token");
    auto id = find(vocab_, unk);
    if (!id) c.corrupt("model.unk_token", json(unk).dump() + " is not in model.vocab");
    unk_id_ = *id;
    prefix_ = opt_str(c, j, "model", "continuing_subword_prefix").value_or("##");
    auto m = j.find("max_input_chars_per_word");
    if (m != j.end() && !m->is_null()) {
      if (!m->is_number_unsigned())
        c.corrupt("model.max_input_chars_per_word", m->dump() + " is not a non-negative integer");
      max_chars_ = m->get<uint64_t>();
    }
  }

  std::string name() const override { return "WordPiece"; }

  void tokenize(const Piece& p, std::vector<TokenId>& ids,
                std::vector<TokenSpan>& offsets) const override {
    if (p.empty()) return;
    size_t n_chars = 0;
    for (char ch : p.s) n_chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    size_t first = ids.size();
    if (n_chars <= max_chars_) {
      std::string buf;
      size_t start = 0;
      while (start < p.s.size()) {
        size_t end = p.s.size();
        std::optional<TokenId> cur;
        while (start < end) {
          std::string_view sub(p.s.data() + start, end - start);
          if (start > 0) {
            buf.assign(prefix_);
            buf.append(sub);
            sub = buf;
          }
          cur = find(vocab_, sub);
          if (cur) break;
          --end;
          while (end > start && (static_cast<unsigned char>(p.s[end]) & 0xC0) == 0x80) --end;
        }
        if (!cur) break;
        ids.push_back(*cur);
        offsets.push_back({p.a[start], p.b[end - 1]});
        start = end;
      }
      if (start == p.s.size()) return;
    }
    ids.resize(first);
    offsets.resize(first);
    ids.push_back(unk_id_);
    offsets.push_back({p.a.front(), p.b.back()});
  }

 private:
  FlatTokenMap vocab_;
  TokenId unk_id_ = 0;
  std::string prefix_;
  uint64_t max_chars_ = 100;
};

}  // namespace

std::unique_ptr<Model> make_model(const Ctx& c, const json& j, Vocab& vocab,
                                  const ModelLists* lists) {
  if (!j.is_object())
    c.corrupt("model", "is " + std::string(j.type_name()) + ", expected an object");
  std::string type;
  auto t = j.find("type");
  if (t != j.end() && t->is_string()) {
    type = t->get<std::string>();
  } else if (t == j.end() && j.contains("merges")) {
    type = "BPE";  // old files omit the type of a BPE model
  } else if (t == j.end() && j.contains("max_input_chars_per_word")) {
    type = "WordPiece";
  }
  if (type == "BPE") return std::make_unique<Bpe>(c, j, vocab, lists);
  if (type == "WordPiece") return std::make_unique<WordPiece>(c, j, vocab, lists);
  if (type == "Unigram") return make_unigram(c, j, vocab);
  if (type == "SentencePieceBPE" && c.internal) return make_spm_bpe(c, j, vocab);
  c.unsupported("model.type", t != j.end() ? *t : json(nullptr), "BPE, WordPiece, Unigram");
}

}  // namespace embedscope::hf
