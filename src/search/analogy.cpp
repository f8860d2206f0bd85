#include "embedscope/search/analogy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "embedscope/core/error.h"
#include "search/top_k.h"

namespace embedscope {

namespace {

std::vector<double> term_vector(const Searcher& s, const Term& t) {
  if (t.ids.empty()) throw Error(ErrorCode::kInvalidArgument, "a term has no rows");
  std::vector<double> v(s.dim(), 0.0);
  for (TokenId id : t.ids) {
    std::vector<float> r = s.row(id);
    for (size_t j = 0; j < v.size(); ++j) v[j] += r[j];
  }
  for (double& x : v) x /= double(t.ids.size());
  return v;
}

std::vector<double> unit(std::vector<double> v, TokenId first_id) {
  double n = 0;
  for (double x : v) n += x * x;
  n = std::sqrt(n);
  if (!(n > 0) || !std::isfinite(n))
    throw Error(ErrorCode::kInvalidArgument, "row " + std::to_string(first_id) +
                                                 " has a zero or non-finite norm; it has no "
                                                 "direction to compare");
  for (double& x : v) x /= n;
  return v;
}

std::vector<float> to_f32(const std::vector<double>& v) { return {v.begin(), v.end()}; }

std::vector<TokenId> all_ids(std::span<const Term> terms, const std::vector<TokenId>& extra) {
  std::vector<TokenId> ids = extra;
  for (const Term& t : terms) ids.insert(ids.end(), t.ids.begin(), t.ids.end());
  return ids;
}

}  // namespace

std::vector<ExpressionTerm> parse_expression(std::string_view e) {
  std::vector<ExpressionTerm> out;
  size_t i = 0;
  auto skip = [&] {
    while (i < e.size() && std::isspace(static_cast<unsigned char>(e[i]))) ++i;
  };
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::kInvalidArgument,
                "expression \"" + std::string(e) + "\": " + what + " at byte " + std::to_string(i));
  };
  bool first = true;
  while (true) {
    skip();
    if (i >= e.size()) fail("empty expression");
    float sign = 1.0f;
    if (e[i] == '+' || e[i] == '-') {
      sign = e[i] == '-' ? -1.0f : 1.0f;
      ++i;
      skip();
    } else if (!first) {
      fail("expected '+' or '-'");
    }
    // Optional "NUMBER *" weight.
    float weight = 1.0f;
    size_t save = i;
    std::string num;
    while (i < e.size() && (std::isdigit(static_cast<unsigned char>(e[i])) || e[i] == '.'))
      num += e[i++];
    skip();
    if (!num.empty() && i < e.size() && e[i] == '*') {
      char* end = nullptr;
      weight = std::strtof(num.c_str(), &end);
      if (end != num.c_str() + num.size() || !std::isfinite(weight))
        fail("bad weight '" + num + "'");
      ++i;
      skip();
    } else {
      i = save;
    }
    std::string word;
    while (i < e.size() && !std::isspace(static_cast<unsigned char>(e[i])) && e[i] != '+' &&
           e[i] != '*' && !(e[i] == '-' && word.empty()))
      word += e[i++];
    if (word.empty()) fail("expected a word");
    out.push_back({word, sign * weight});
    first = false;
    skip();
    if (i >= e.size()) break;
  }
  return out;
}

std::vector<float> compose_terms(const Searcher& s, std::span<const Term> terms) {
  if (terms.empty()) throw Error(ErrorCode::kInvalidArgument, "no terms to compose");
  std::vector<double> acc(s.dim(), 0.0);
  for (const Term& t : terms) {
    std::vector<double> u = unit(term_vector(s, t), t.ids.empty() ? -1 : t.ids[0]);
    for (size_t j = 0; j < acc.size(); ++j) acc[j] += double(t.weight) * u[j];
  }
  for (double& x : acc) x /= double(terms.size());
  return to_f32(acc);
}

std::string_view analogy_method_name(AnalogyMethod m) {
  return m == AnalogyMethod::kAdd ? "3cosadd" : "3cosmul";
}

AnalogyMethod parse_analogy_method(std::string_view s) {
  if (s == "3cosadd" || s == "add") return AnalogyMethod::kAdd;
  if (s == "3cosmul" || s == "mul") return AnalogyMethod::kMul;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown analogy method '" + std::string(s) + "' (expected 3cosadd or 3cosmul)");
}

std::vector<Neighbor> analogy(const Searcher& s, std::span<const Term> terms, AnalogyMethod m,
                              const SearchOptions& options) {
  if (options.k == 0) throw Error(ErrorCode::kInvalidArgument, "k must be at least 1");
  SearchOptions o = options;
  o.metric = Metric::kCosine;
  o.exclude = all_ids(terms, options.exclude);
  if (m == AnalogyMethod::kAdd) return s.search(compose_terms(s, terms), o);

  // 3CosMul: every row's cosine to every term is needed, so score all rows per term.
  if (terms.empty()) throw Error(ErrorCode::kInvalidArgument, "no terms for 3CosMul");
  const size_t n = s.n_rows();
  std::vector<double> pos(n, 1.0), neg(n, 1.0);
  for (const Term& t : terms) {
    std::vector<float> u = to_f32(unit(term_vector(s, t), t.ids.empty() ? -1 : t.ids[0]));
    std::vector<float> c = s.score_all(u, Metric::kCosine);
    std::vector<double>& acc = t.weight < 0 ? neg : pos;
    for (size_t i = 0; i < n; ++i) acc[i] *= (1.0 + double(c[i])) / 2.0;
  }
  std::sort(o.exclude.begin(), o.exclude.end());
  size_t lim = o.n_rows_limit > 0 ? std::min(n, o.n_rows_limit) : n;
  std::vector<TopK> heap{TopK(o.k)};
  for (size_t i = 0; i < lim; ++i) {
    float v = float(pos[i] / (neg[i] + 1e-6));
    if (!heap[0].would_accept(v)) continue;
    if (o.allow && (i >= o.allow->size() || !(*o.allow)[i])) continue;
    if (std::binary_search(o.exclude.begin(), o.exclude.end(), TokenId(i))) continue;
    heap[0].push(TokenId(i), v);
  }
  return merge_top_k(heap, o.k);
}

float term_similarity(const Searcher& s, const Term& a, const Term& b) {
  std::vector<double> u = unit(term_vector(s, a), a.ids.empty() ? -1 : a.ids[0]);
  std::vector<double> v = unit(term_vector(s, b), b.ids.empty() ? -1 : b.ids[0]);
  double d = 0;
  for (size_t j = 0; j < u.size(); ++j) d += u[j] * v[j];
  return float(d);
}

size_t term_rank(const Searcher& s, const Term& a, const Term& b) {
  std::vector<float> u = to_f32(unit(term_vector(s, a), a.ids.empty() ? -1 : a.ids[0]));
  std::vector<float> c = s.score_all(u, Metric::kCosine);
  // b's own score comes from the same scan when b is one row, so b never outranks itself.
  float sb = b.ids.size() == 1 ? c[size_t(b.ids[0])] : term_similarity(s, a, b);
  std::vector<TokenId> own = a.ids;
  std::sort(own.begin(), own.end());
  size_t closer = 0;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] > sb && !std::binary_search(own.begin(), own.end(), TokenId(i))) ++closer;
  return closer + 1;
}

DoesntMatch doesnt_match(const Searcher& s, std::span<const Term> terms) {
  if (terms.size() < 2)
    throw Error(ErrorCode::kInvalidArgument,
                "doesnt-match needs at least 2 words, got " + std::to_string(terms.size()));
  std::vector<std::vector<double>> us;
  std::vector<double> mean(s.dim(), 0.0);
  for (const Term& t : terms) {
    us.push_back(unit(term_vector(s, t), t.ids.empty() ? -1 : t.ids[0]));
    for (size_t j = 0; j < mean.size(); ++j) mean[j] += us.back()[j];
  }
  for (double& x : mean) x /= double(terms.size());
  mean = unit(mean, terms[0].ids[0]);
  DoesntMatch r{0, {}};
  for (size_t t = 0; t < us.size(); ++t) {
    double d = 0;
    for (size_t j = 0; j < mean.size(); ++j) d += us[t][j] * mean[j];
    r.scores.push_back(float(d));
    if (r.scores[t] < r.scores[r.index]) r.index = t;
  }
  return r;
}

}  // namespace embedscope
