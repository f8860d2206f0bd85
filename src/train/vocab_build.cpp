// Corpus scan and vocabulary for the word2vec trainer: counts words (or token ids), chooses the
// trained rows, and writes the id stream that training reads.
#include "train/vocab_build.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <span>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "embedscope/tokenizer/bpe.h"
#include "train/corpus.h"

namespace embedscope {

namespace {

// word2vec.c's ReduceVocab: when the number of distinct words passes this, words seen at most
// `reduce` times are dropped and `reduce` grows, so counting never exhausts memory (C2).
constexpr size_t kMaxDistinctWords = size_t(20) << 20;

struct StrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using WordCounts = std::unordered_map<std::string, uint64_t, StrHash, std::equal_to<>>;

std::string empty_vocab_message(uint64_t corpus_words, size_t distinct, uint64_t min_count) {
  if (corpus_words == 0) return "empty vocabulary: the corpus contains no words";
  return "empty vocabulary: none of the " + std::to_string(distinct) +
         " distinct words in the corpus (" + std::to_string(corpus_words) +
         " words) occurs at least min_count = " + std::to_string(min_count) +
         " times; lower min_count (--min-count)";
}

}  // namespace

ScannedCorpus scan_corpus(const std::vector<std::string>& files, const Word2VecOptions& o,
                          const std::string& work_dir) {
  ScannedCorpus c;
  W2vCollective* const coll = o.collective;
  const CorpusRange range{o.corpus_range_begin, o.corpus_range_end};
  auto lines = [&](const std::function<void(std::string_view)>& fn) {
    for_each_line(files, fn, range);
  };
  // A distributed run's corpus size: the sum over processes (each read its own range).
  auto global_words = [&] {
    if (!coll) return;
    uint64_t w = c.corpus_words;
    coll->sum(std::span<uint64_t>(&w, 1));
    c.corpus_words = w;
  };
  if (o.tokenizer) {
    // Token mode: one pass; ids are final, rows under min_count are filtered during training.
    const BpeTokenizer& tok = *o.tokenizer;
    const size_t n = tok.vocab_size();
    std::vector<uint64_t> counts(n, 0);
    IdStreamWriter w(work_dir);
    lines([&](std::string_view line) {
      // Sentences are cut every kMaxSentence ids of a line (counted per line, as in word mode,
      // so that the stream does not depend on where a process's range began).
      uint64_t in_line = 0;
      for (TokenId id : tok.encode(line)) {
        if (id < 0 || size_t(id) >= n) continue;  // ES_CHECK-worthy, but never trust a loader
        ++counts[size_t(id)];
        ++c.corpus_words;
        w.push(uint32_t(id));
        if (++in_line % kMaxSentence == 0) w.end_sentence();
      }
      w.end_sentence();
    });
    if (coll) coll->sum(std::span<uint64_t>(counts));
    global_words();
    for (size_t i = 0; i < n; ++i) c.vocab.add(tok.token_bytes(TokenId(i)));
    c.trained.assign(n, 0);
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return counts[a] > counts[b]; });
    size_t kept = 0;
    for (size_t i : order) {
      if (counts[i] < std::max<uint64_t>(o.min_count, 1)) break;
      if (o.max_vocab && kept >= o.max_vocab) break;
      c.trained[i] = 1;
      ++kept;
    }
    size_t distinct =
        size_t(std::count_if(counts.begin(), counts.end(), [](uint64_t x) { return x > 0; }));
    if (kept == 0)
      throw Error(ErrorCode::kInvalidArgument,
                  empty_vocab_message(c.corpus_words, distinct, o.min_count));
    c.vocab.set_counts(std::move(counts));
    c.stream_len = w.size();
    c.stream_path = w.finish();
    return c;
  }

  // Word mode, pass 1: count.
  WordCounts counts;
  uint64_t reduce = 1;
  lines([&](std::string_view line) {
    for_each_word(line, kMaxWordBytes, [&](std::string_view word) {
      ++c.corpus_words;
      auto it = counts.find(word);
      if (it != counts.end())
        ++it->second;
      else
        counts.emplace(std::string(word), 1);
    });
    if (counts.size() > kMaxDistinctWords) {
      for (auto it = counts.begin(); it != counts.end();)
        it = it->second <= reduce ? counts.erase(it) : std::next(it);
      ++reduce;
    }
  });
  if (coll) {
    // Each process counted its range; the vocabulary is cut from the sum.
    std::vector<std::pair<std::string, uint64_t>> list;
    list.reserve(counts.size());
    for (auto& [w, n] : counts) list.emplace_back(w, n);
    counts.clear();
    coll->merge_word_counts(list);
    for (auto& [w, n] : list) counts.emplace(std::move(w), n);
    global_words();
  }
  std::vector<std::pair<std::string_view, uint64_t>> kept;
  for (auto& [w, n] : counts)
    if (n >= std::max<uint64_t>(o.min_count, 1)) kept.emplace_back(w, n);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (o.max_vocab && kept.size() > o.max_vocab) kept.resize(o.max_vocab);
  if (kept.empty())
    throw Error(ErrorCode::kInvalidArgument,
                empty_vocab_message(c.corpus_words, counts.size(), o.min_count));
  std::vector<uint64_t> vc;
  WordCounts index;  // word -> row
  for (auto& [w, n] : kept) {
    index.emplace(std::string(w), c.vocab.size());
    c.vocab.add(std::string(w));
    vc.push_back(n);
  }
  counts.clear();
  c.vocab.set_counts(std::move(vc));
  c.trained.assign(c.vocab.size(), 1);

  // Pass 2: the id stream.
  IdStreamWriter w(work_dir);
  uint64_t in_sentence = 0;
  lines([&](std::string_view line) {
    for_each_word(line, kMaxWordBytes, [&](std::string_view word) {
      auto it = index.find(word);
      if (it == index.end()) return;
      w.push(uint32_t(it->second));
      if (++in_sentence % kMaxSentence == 0) w.end_sentence();
    });
    w.end_sentence();
    in_sentence = 0;
  });
  c.stream_len = w.size();
  c.stream_path = w.finish();
  return c;
}

}  // namespace embedscope
