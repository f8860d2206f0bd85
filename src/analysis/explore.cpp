// explore: query resolution, labelled top-k, the random baseline and the verdict.
#include "embedscope/analysis/explore.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "embedscope/core/error.h"
#include "embedscope/search/searcher.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

namespace {

const char* const kMarkers[] = {" ", "\xC4\xA0", "\xE2\x96\x81"};  // space, "Ġ", "▁"

std::string flip_first_case(std::string w) {
  if (!w.empty()) {
    char& c = w[0];
    if (c >= 'a' && c <= 'z')
      c = char(c - 'a' + 'A');
    else if (c >= 'A' && c <= 'Z')
      c = char(c - 'A' + 'a');
  }
  return w;
}

std::string fmt2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// "none is a synonym", "1 is a synonym", "3 are synonyms".
std::string count_phrase(size_t n, const char* one, const char* many) {
  return (n == 0 ? std::string("none") : std::to_string(n)) + " " + (n <= 1 ? one : many);
}

}  // namespace

std::string readable_token(std::string_view raw) {
  std::string out;
  for (unsigned char c : raw) {
    if (c == ' ')
      out += "\xE2\x90\xA3";  // ␣
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "<0x%02X>", c);
      out += b;
    } else
      out += char(c);
  }
  return out;
}

void LabelCounts::add(const LabelResult& r) {
  ++by_label[size_t(r.label)];
  if (r.label == Label::kNoise) ++noise_kinds[std::string(noise_kind_name(r.noise))];
}

void LabelCounts::add(const LabelCounts& o) {
  for (size_t i = 0; i < 4; ++i) by_label[i] += o.by_label[i];
  for (auto& [k, v] : o.noise_kinds) noise_kinds[k] += v;
}

Explorer::Explorer(const Model& model, const Tokenizer* tokenizer, const Labeller& labeller,
                   ExploreOptions options)
    : model_(model), tok_(tokenizer), lab_(labeller), opt_(std::move(options)) {
  const auto& table = model_.emb.table;
  const auto& vocab = model_.emb.vocab;
  if (opt_.k == 0) throw Error(ErrorCode::kInvalidArgument, "explore: k must be at least 1");
  if (vocab.empty() && !tok_)
    throw Error(ErrorCode::kInvalidArgument,
                model_.path + ": the table has no vocabulary, so words cannot be looked up");
  init_ = parse_init_hint(opt_.init.empty() ? model_.init_hint : opt_.init);
  size_t n = table.n_rows();
  size_t limit = model_.n_search_rows ? std::min(model_.n_search_rows, n) : n;
  // By value: a Tokenizer's token_bytes() is computed, not stored.
  auto token_of = [&](size_t i) -> std::string {
    if (i < vocab.size()) return std::string(vocab.token(TokenId(i)));
    if (tok_ && i < tok_->vocab_size()) return tok_->token_bytes(TokenId(i));
    return {};
  };
  // A vocabulary "marks word starts" when a sizeable share of its tokens begin with a marker.
  size_t n_marked = 0, n_seen = std::min<size_t>(limit, 60000);
  for (size_t i = 0; i < n_seen; ++i) {
    const std::string t = token_of(i);
    for (const char* m : kMarkers)
      if (t.starts_with(m) && t.size() > std::strlen(m)) {
        ++n_marked;
        break;
      }
  }
  marks_ = n_seen > 0 && n_marked * 10 > n_seen;
  allow_.assign(n, 0);
  for (size_t i = 0; i < limit; ++i) {
    const std::string t = token_of(i);
    if (opt_.all_tokens) {
      allow_[i] = 1;
      continue;
    }
    if (tok_ && i < tok_->vocab_size() && tok_->is_special(TokenId(i))) continue;
    TokenForm f = normalize_token(t);
    allow_[i] = !f.special && f.is_wordlike && !f.continuation && (!marks_ || f.word_start);
  }
  SearcherOptions sopt;
  sopt.n_threads = opt_.n_threads;
  searcher_ = std::make_unique<Searcher>(table, sopt);
}

Explorer::~Explorer() = default;

size_t Explorer::n_candidates() const {
  return size_t(std::count(allow_.begin(), allow_.end(), uint8_t(1)));
}

std::vector<LabelledNeighbor> Explorer::top_k(const std::vector<float>& scores,
                                              const std::vector<TokenId>& exclude,
                                              const PreparedQuery& q, ScoreSummary* sum,
                                              size_t k) const {
  std::vector<Neighbor> cand;
  cand.reserve(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!allow_[i] || !std::isfinite(scores[i])) continue;
    if (std::find(exclude.begin(), exclude.end(), TokenId(i)) != exclude.end()) continue;
    cand.push_back({TokenId(i), scores[i]});
  }
  if (sum) {
    *sum = {};
    sum->n = cand.size();
    if (!cand.empty()) {
      double s = 0, s2 = 0;
      std::vector<float> v;
      v.reserve(cand.size());
      for (auto& c : cand) {
        s += c.score;
        s2 += double(c.score) * c.score;
        v.push_back(c.score);
      }
      double nn = double(cand.size());
      sum->mean = s / nn;
      sum->sd = std::sqrt(std::max(0.0, s2 / nn - sum->mean * sum->mean));
      auto q_at = [&](double p) {
        size_t idx = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
        std::nth_element(v.begin(), v.begin() + long(idx), v.end());
        return double(v[idx]);
      };
      sum->p50 = q_at(0.5);
      sum->p99 = q_at(0.99);
      sum->max = *std::max_element(v.begin(), v.end());
    }
  }
  k = std::min(k, cand.size());
  std::partial_sort(cand.begin(), cand.begin() + long(k), cand.end(), neighbor_before);
  std::vector<LabelledNeighbor> out;
  const auto& vocab = model_.emb.vocab;
  for (size_t i = 0; i < k; ++i) {
    LabelledNeighbor ln;
    ln.id = cand[i].id;
    ln.score = cand[i].score;
    if (size_t(ln.id) < vocab.size())
      ln.token = vocab.token(ln.id);
    else if (tok_)
      ln.token = tok_->token_bytes(ln.id);
    ln.display = readable_token(ln.token);
    TokenInfo info;
    info.text = ln.token;
    info.vocab_marks_word_starts = marks_;
    if (tok_ && size_t(ln.id) < tok_->vocab_size()) info.special = tok_->is_special(ln.id);
    if (vocab.has_counts() && size_t(ln.id) < vocab.counts().size())
      info.count = vocab.counts()[size_t(ln.id)];
    ln.label = lab_.label(q, info);
    out.push_back(std::move(ln));
  }
  return out;
}

BaselineView Explorer::baseline(const std::vector<TokenId>& exclude, const PreparedQuery& q,
                                uint64_t seed, size_t k, const InitDistribution& init) const {
  BaselineView b;
  b.init = init.describe();
  b.seed = seed;
  const auto& table = model_.emb.table;
  std::vector<float> cos = random_cosines(init, table.n_rows(), table.dim(), seed);
  b.neighbors = top_k(cos, exclude, q, &b.scores, k);
  for (auto& n : b.neighbors) {
    b.labels.add(n.label);
    b.top_scores.push_back(n.score);
  }
  b.expected_top_scores = expected_top_cosines(b.scores.n, table.dim(), k);
  return b;
}

ExploreResult Explorer::explore(std::string_view word_in) const {
  return explore(word_in, opt_.k, opt_.seed);
}

ExploreResult Explorer::explore(std::string_view word_in, size_t k, uint64_t seed,
                                const InitDistribution* init) const {
  if (k == 0) throw Error(ErrorCode::kInvalidArgument, "explore: k must be at least 1");
  ExploreResult r;
  std::string word(word_in);
  while (!word.empty() && word.front() == ' ') word.erase(word.begin());
  r.query = word;
  if (word.empty()) throw Error(ErrorCode::kInvalidArgument, "explore: empty word");
  const auto& table = model_.emb.table;
  const auto& vocab = model_.emb.vocab;
  auto display_ids = [&](const std::vector<TokenId>& ids) {
    std::vector<std::string> d;
    for (TokenId id : ids) {
      if (size_t(id) >= table.n_rows())
        throw Error(ErrorCode::kOutOfRange, model_.path + ": token id " + std::to_string(id) +
                                                " of '" + word + "' is beyond the table's " +
                                                std::to_string(table.n_rows()) + " rows");
      d.push_back(readable_token(size_t(id) < vocab.size() ? std::string(vocab.token(id))
                                                           : tok_->token_bytes(id)));
    }
    return d;
  };
  // "#N": row N itself (the page's search by id, as neighbors' "#N"); labelled as the word its
  // token spells (word-start marker removed).
  std::string label_word = word;
  bool by_id =
      word.size() > 1 && word.size() <= 11 && word[0] == '#' &&
      std::all_of(word.begin() + 1, word.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (by_id) {
    uint64_t id = std::stoull(word.substr(1));
    if (id >= table.n_rows())
      throw Error(ErrorCode::kOutOfRange, model_.path + ": row " + word +
                                              " is beyond the table's " +
                                              std::to_string(table.n_rows()) + " rows");
    std::string raw = size_t(id) < vocab.size() ? std::string(vocab.token(TokenId(id)))
                      : tok_                    ? tok_->token_bytes(TokenId(id))
                                                : std::string();
    for (const char* m : kMarkers)
      if (raw.starts_with(m)) {
        raw.erase(0, std::string_view(m).size());
        break;
      }
    if (!raw.empty()) label_word = raw;
    r.rows.push_back({word, {TokenId(id)}, display_ids({TokenId(id)})});
    r.query_variant = 0;
  } else if (tok_) {
    auto vars = word_variants(*tok_, word);
    for (auto& v : vars) r.rows.push_back({v.text, v.ids, display_ids(v.ids)});
    r.query_variant = default_variant(vars);
  } else {
    std::string marker = marks_ ? " " : "";
    if (marks_) {  // which marker this vocabulary uses
      size_t best = 0;
      for (const char* m : kMarkers) {
        size_t c = 0;
        for (size_t i = 0; i < std::min<size_t>(vocab.size(), 5000); ++i)
          if (vocab.token(TokenId(i)).starts_with(m)) ++c;
        if (c > best) {
          best = c;
          marker = m;
        }
      }
    }
    std::vector<std::string> spellings;
    if (marks_)
      spellings = {marker + word, word, marker + flip_first_case(word), flip_first_case(word)};
    else
      spellings = {word, flip_first_case(word)};
    std::string lower = word;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower != word && lower != flip_first_case(word)) {
      if (marks_) spellings.push_back(marker + lower);
      spellings.push_back(lower);
    }
    for (auto& s : spellings) {
      auto id = vocab.find(s);
      if (id &&
          std::none_of(r.rows.begin(), r.rows.end(), [&](auto& q) { return q.ids[0] == *id; }))
        r.rows.push_back({s, {*id}, display_ids({*id})});
    }
    if (r.rows.empty())
      throw Error(ErrorCode::kNotFound,
                  "'" + word + "' is not in the vocabulary of " + model_.path + " (" +
                      std::to_string(vocab.size()) + " rows; tried " +
                      std::to_string(spellings.size()) +
                      " spellings) and the model has no tokenizer to split it");
    r.query_variant = 0;
  }
  const QueryRows& qr = r.rows[r.query_variant];
  if (qr.ids.empty()) throw Error(ErrorCode::kNotFound, "'" + word + "' encodes to no tokens");
  r.composed = qr.ids.size() > 1;
  std::vector<float> q(table.dim(), 0.0f), row(table.dim());
  for (TokenId id : qr.ids) {
    table.row_f32(size_t(id), row.data());
    for (size_t j = 0; j < row.size(); ++j) q[j] += row[j] / float(qr.ids.size());
  }
  PreparedQuery pq = lab_.prepare(label_word);
  std::vector<float> scores = searcher_->score_all(q, Metric::kCosine);
  r.neighbors = top_k(scores, qr.ids, pq, &r.scores, k);
  r.n_candidates = r.scores.n;
  for (auto& n : r.neighbors) r.labels.add(n.label);
  // The baseline's row streams depend on the query's row too, so different words get
  // different random neighbourhoods, as in one materialised random matrix.
  r.baseline = baseline(qr.ids, pq, seed ^ (0x9E3779B97F4A7C15ull * (uint64_t(qr.ids[0]) + 1)), k,
                        init ? *init : init_);
  auto mean_of = [](const auto& v) {
    double s = 0;
    for (auto x : v) s += double(x);
    return v.empty() ? 0.0 : s / double(v.size());
  };
  std::vector<float> tops;
  for (auto& n : r.neighbors) tops.push_back(n.score);
  r.mean_top = mean_of(tops);
  r.baseline_mean_top = mean_of(r.baseline.top_scores);
  r.verdict = explore_verdict(r.labels, r.baseline.labels, r.mean_top, r.baseline_mean_top,
                              r.baseline.top_scores.empty() ? 0.0 : r.baseline.top_scores[0]);
  return r;
}

SampleResult Explorer::sample(size_t n_words) const {
  SampleResult s;
  s.k = opt_.k;
  if (n_words == 0)
    throw Error(ErrorCode::kInvalidArgument, "explore --sample: N must be at least 1");
  const auto& vocab = model_.emb.vocab;
  std::vector<TokenId> order;
  for (size_t i = 0; i < allow_.size() && i < vocab.size(); ++i)
    if (allow_[i]) order.push_back(TokenId(i));
  if (vocab.has_counts())
    std::stable_sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
      return vocab.counts()[size_t(a)] > vocab.counts()[size_t(b)];
    });
  // The 10 N most frequent rows that WordNet knows, then a seeded draw of N among them.
  std::vector<TokenId> pool;
  for (TokenId id : order) {
    if (pool.size() >= 10 * n_words) break;
    TokenForm f = normalize_token(vocab.token(id));
    if (f.lower.size() >= 3 && !lab_.wordnet().lemmas(f.lower).empty()) pool.push_back(id);
  }
  std::mt19937_64 rng(opt_.seed);
  std::shuffle(pool.begin(), pool.end(), rng);
  if (pool.size() > n_words) pool.resize(n_words);
  std::sort(pool.begin(), pool.end());
  double top = 0, btop = 0;
  for (size_t w = 0; w < pool.size(); ++w) {
    TokenId id = pool[w];
    std::string text = normalize_token(vocab.token(id)).word;
    s.words.push_back(text);
    std::vector<float> q = model_.emb.table.row(size_t(id));
    PreparedQuery pq = lab_.prepare(text);
    std::vector<TokenId> excl = {id};
    auto nn = top_k(searcher_->score_all(q, Metric::kCosine), excl, pq, nullptr, opt_.k);
    for (auto& n : nn) {
      s.labels.add(n.label);
      top += n.score;
    }
    BaselineView b =
        baseline(excl, pq, opt_.seed ^ (0x9E3779B97F4A7C15ull * (uint64_t(id) + 1)), opt_.k, init_);
    s.baseline_labels.add(b.labels);
    for (float x : b.top_scores) btop += x;
  }
  if (s.labels.total()) s.mean_top = top / double(s.labels.total());
  if (s.baseline_labels.total()) s.baseline_mean_top = btop / double(s.baseline_labels.total());
  auto pct = [](size_t a, size_t t) {
    return t ? std::to_string((a * 100 + t / 2) / t) + "%" : std::string("0%");
  };
  size_t t = s.labels.total(), bt = s.baseline_labels.total();
  s.verdict = "Over " + std::to_string(s.words.size()) + " frequent words (" + std::to_string(s.k) +
              " neighbours each): " + pct(s.labels[Label::kVariant], t) + " variants, " +
              pct(s.labels[Label::kSynonym], t) + " synonyms, " +
              pct(s.labels[Label::kRelated], t) + " related, " + pct(s.labels[Label::kNoise], t) +
              " noise. The random baseline gives " + pct(s.baseline_labels[Label::kNoise], bt) +
              " noise. Mean top-" + std::to_string(s.k) + " cosine " + fmt2(s.mean_top) + " vs " +
              fmt2(s.baseline_mean_top) + " for random vectors.";
  size_t meaning = s.labels[Label::kSynonym] + s.labels[Label::kRelated];
  if (s.labels[Label::kNoise] * 2 >= t)
    s.verdict +=
        " Most neighbours are noise: the embedding captured little that WordNet recognises.";
  else if (s.labels[Label::kVariant] > meaning)
    s.verdict += " In general this embedding groups surface forms more than meanings.";
  else
    s.verdict += " In general this embedding groups meanings more than surface forms.";
  return s;
}

std::string explore_verdict(const LabelCounts& m, const LabelCounts& b, double mean_top,
                            double baseline_mean_top, double baseline_max) {
  size_t k = m.total();
  if (k == 0) return "No neighbours: the vocabulary has no other whole-word rows.";
  size_t v = m[Label::kVariant], s = m[Label::kSynonym], r = m[Label::kRelated],
         n = m[Label::kNoise];
  std::string out =
      std::to_string(v) + " of " + std::to_string(k) + " neighbours " +
      (v == 1 ? "is a spelling or inflection variant" : "are spelling or inflection variants") +
      " of the query; " + count_phrase(r, "is a related concept", "are related concepts") + "; " +
      count_phrase(s, "is a synonym", "are synonyms") + "; " +
      count_phrase(n, "is noise", "are noise");
  if (n > 0 && !m.noise_kinds.empty()) {
    auto top = std::max_element(m.noise_kinds.begin(), m.noise_kinds.end(),
                                [](auto& a, auto& c) { return a.second < c.second; });
    std::string kind = top->first == "number_or_punct" ? "numbers or punctuation"
                       : top->first == "subword"       ? "subword fragments"
                       : top->first == "special"       ? "special or byte tokens"
                       : top->first == "rare"          ? "rare rows"
                                                       : "unrelated words";
    out += " (" + std::string(top->second * 2 > n ? "mostly " : "largest group: ") + kind + ")";
  }
  out += ". ";
  size_t meaning = s + r;
  if (n * 2 > k)
    out +=
        "Most neighbours are noise: this embedding does not place the word near words WordNet "
        "relates to it.";
  else if (v > meaning)
    out += "This embedding groups surface forms more than meanings.";
  else if (meaning > v)
    out += "This embedding groups meanings more than surface forms.";
  else
    out += "This embedding groups surface forms and meanings about equally.";
  size_t bn = b[Label::kNoise], bk = b.total();
  out += " A random matrix of the same shape gives " + std::to_string(bn) + " noise neighbour" +
         (bn == 1 ? "" : "s") + (bn < bk ? " of " + std::to_string(bk) : std::string()) +
         " with cosine under " + fmt2(std::ceil(baseline_max * 100) / 100) + "; the model's top-" +
         std::to_string(k) + " cosines average " + fmt2(mean_top) + " against " +
         fmt2(baseline_mean_top) + " by chance";
  if (mean_top <= baseline_max)
    out += ", no higher than chance, so these neighbours carry little signal.";
  else
    out += ".";
  return out;
}

}  // namespace embedscope
