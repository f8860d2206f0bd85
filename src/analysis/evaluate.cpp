// gensim-compatible analogy and word-pair evaluation (see evaluate.h for the semantics, which
// follow gensim 4.2 keyedvectors.py line by line).
#include "embedscope/analysis/evaluate.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/search/analogy.h"
#include "embedscope/search/searcher.h"
#include "embedscope/tokenizer/bpe.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope {

namespace {

// Python's str.upper(): each code point's full upper-case mapping. glibc's C.UTF-8 locale holds
// the simple mappings (é -> É); SpecialCasing.txt's unconditional one-to-many mappings that
// towupper cannot express (ß -> SS, the Latin ligatures) are spelled out here. Bytes that are not
// valid UTF-8 pass through unchanged.
locale_t utf8_locale() {
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
  return loc;
}

void put_utf8(std::string& out, char32_t c) {
  if (c < 0x80)
    out += char(c);
  else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

const char* special_upper(char32_t c) {
  switch (c) {
    case 0x00DF:
      return "SS";  // ß
    case 0x0149:
      return "\u02BCN";  // ŉ
    case 0x01F0:
      return "J\u030C";  // ǰ
    case 0x0390:
      return "\u0399\u0308\u0301";
    case 0x03B0:
      return "\u03A5\u0308\u0301";
    case 0x0587:
      return "\u0535\u0552";
    case 0x1E96:
      return "H\u0331";
    case 0x1E97:
      return "T\u0308";
    case 0x1E98:
      return "W\u030A";
    case 0x1E99:
      return "Y\u030A";
    case 0x1E9A:
      return "A\u02BE";
    case 0xFB00:
      return "FF";
    case 0xFB01:
      return "FI";
    case 0xFB02:
      return "FL";
    case 0xFB03:
      return "FFI";
    case 0xFB04:
      return "FFL";
    case 0xFB05:
      return "ST";
    case 0xFB06:
      return "ST";
    default:
      return nullptr;
  }
}

}  // namespace

std::string unicode_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  locale_t loc = utf8_locale();
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += (b >= 'a' && b <= 'z') ? char(b - 'a' + 'A') : char(b);
      ++i;
      continue;
    }
    size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    char32_t c = len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cb = static_cast<unsigned char>(s[i + k]);
      ok = (cb & 0xC0) == 0x80;
      c = (c << 6) | (cb & 0x3F);
    }
    if (!ok) {  // not UTF-8: keep the byte
      out += s[i];
      ++i;
      continue;
    }
    if (const char* sp = special_upper(c))
      out += sp;
    else
      put_utf8(out, loc ? char32_t(towupper_l(wint_t(c), loc)) : c);
    i += len;
  }
  return out;
}

namespace {

std::string upper(std::string_view s) { return unicode_upper(s); }

std::vector<std::string> split_ws(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  auto ws = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (i < line.size()) {
    while (i < line.size() && ws(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !ws(line[j])) ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> lines_of(const std::string& text) {
  std::vector<std::string_view> out;
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    size_t end = e == std::string::npos ? text.size() : e + 1;  // keep '\n' like Python
    out.emplace_back(std::string_view(text).substr(p, end - p));
    p = end;
  }
  return out;
}

// Word -> rows: the restricted, case-folded vocabulary, or the tokenizer.
class WordRows {
 public:
  WordRows(const LoadedEmbeddings& emb, const Tokenizer* tok, const EvalOptions& o)
      : emb_(emb), tok_(tok), o_(o) {
    if (tok_) return;
    size_t n = std::min(o.restrict_vocab, emb.vocab.size());
    n = std::min(n, emb.table.n_rows());
    // gensim builds {key.upper(): index} over reversed(keys): the first row wins.
    for (size_t i = n; i-- > 0;) {
      std::string k =
          o.case_insensitive ? upper(emb.vocab.token(TokenId(i))) : emb.vocab.token(TokenId(i));
      ok_[k] = TokenId(i);
    }
  }
  // `key` already case-folded when case-insensitive.
  std::optional<std::vector<TokenId>> find(const std::string& key, size_t* n_composed) const {
    if (!tok_) {
      auto it = ok_.find(key);
      if (it == ok_.end()) return std::nullopt;
      return std::vector<TokenId>{it->second};
    }
    std::string w = key;
    if (o_.case_insensitive)
      for (char& c : w) c = char(std::tolower(static_cast<unsigned char>(c)));
    auto vars = word_variants(*tok_, w);
    auto ids = vars[default_variant(vars)].ids;
    for (TokenId id : ids)
      if (size_t(id) >= emb_.table.n_rows()) return std::nullopt;
    if (ids.empty()) return std::nullopt;
    if (ids.size() > 1) ++*n_composed;
    return ids;
  }
  std::string key_of_row(TokenId id) const {
    std::string t = size_t(id) < emb_.vocab.size() ? emb_.vocab.token(id) : tok_->token_bytes(id);
    if (tok_) {
      while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    }
    return o_.case_insensitive ? upper(t) : t;
  }

 private:
  const LoadedEmbeddings& emb_;
  const Tokenizer* tok_;
  EvalOptions o_;
  std::unordered_map<std::string, TokenId> ok_;
};

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double avg = (double(i) + double(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double pearson_r(const std::vector<double>& x, const std::vector<double>& y) {
  size_t n = std::min(x.size(), y.size());
  if (n < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= double(n);
  my /= double(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

double spearman_rho(const std::vector<double>& x, const std::vector<double>& y) {
  return pearson_r(average_ranks(x), average_ranks(y));
}

AnalogyResult evaluate_analogies(const LoadedEmbeddings& emb, const Tokenizer* tok,
                                 const std::string& path, const EvalOptions& o) {
  std::string text = read_small_file(path, size_t(256) << 20);
  WordRows rows(emb, tok, o);
  SearcherOptions sopt;
  sopt.n_threads = o.n_threads;
  Searcher s(emb.table, sopt);
  AnalogyResult res;
  std::optional<AnalogySection> section;
  size_t line_no = 0;
  for (std::string_view line : lines_of(text)) {
    ++line_no;
    if (line.starts_with(": ")) {
      if (section) res.sections.push_back(*section);
      std::string name(line);
      while (!name.empty() && (name.front() == ':' || name.front() == ' '))
        name.erase(name.begin());  // lstrip(': ')
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.pop_back();
      section = AnalogySection{name, 0, 0, {}, {}};
      continue;
    }
    if (!section)
      throw Error(ErrorCode::kCorrupt, path + ": line " + std::to_string(line_no) +
                                           ": a question before the first ': section' line");
    auto w = split_ws(line);
    if (w.size() != 4) continue;  // gensim skips invalid lines (not counted)
    if (o.case_insensitive)
      for (auto& x : w) x = upper(x);
    ++res.n_questions;
    auto a = rows.find(w[0], &res.n_composed), b = rows.find(w[1], &res.n_composed),
         c = rows.find(w[2], &res.n_composed), e = rows.find(w[3], &res.n_composed);
    if (!a || !b || !c || !e) {
      ++res.n_oov;
      if (o.dummy4unknown) {
        ++section->incorrect;
        section->incorrect_questions.push_back({w[0], w[1], w[2], w[3]});
      }
      continue;
    }
    std::vector<Term> terms = {{*b, 1.0f}, {*c, 1.0f}, {*a, -1.0f}};
    SearchOptions so;
    so.k = 5;
    if (!tok) so.n_rows_limit = std::min(o.restrict_vocab, emb.table.n_rows());
    auto sims = analogy(s, terms, AnalogyMethod::kAdd, so);
    std::string predicted;
    bool have = false;
    for (const auto& n : sims) {
      predicted = rows.key_of_row(n.id);
      have = true;
      if (predicted != w[0] && predicted != w[1] && predicted != w[2]) break;
    }
    if (have && predicted == w[3]) {
      ++section->correct;
      section->correct_questions.push_back({w[0], w[1], w[2], w[3]});
    } else {
      ++section->incorrect;
      section->incorrect_questions.push_back({w[0], w[1], w[2], w[3]});
    }
  }
  if (section) res.sections.push_back(*section);
  if (res.n_questions == 0)
    throw Error(ErrorCode::kInvalidArgument,
                path + ": no analogy question found (" + std::to_string(line_no) +
                    " lines read; expected ': section' headers and lines of 4 words 'a b c d')");
  if (res.n_oov == res.n_questions && !o.dummy4unknown)
    throw Error(ErrorCode::kInvalidArgument,
                path + ": every question (" + std::to_string(res.n_questions) +
                    ") has a word out of the model's vocabulary; nothing was evaluated");
  AnalogySection total{"Total accuracy", 0, 0, {}, {}};
  for (auto& sec : res.sections) {
    total.correct += sec.correct;
    total.incorrect += sec.incorrect;
    total.correct_questions.insert(total.correct_questions.end(), sec.correct_questions.begin(),
                                   sec.correct_questions.end());
    total.incorrect_questions.insert(total.incorrect_questions.end(),
                                     sec.incorrect_questions.begin(),
                                     sec.incorrect_questions.end());
  }
  res.sections.push_back(total);
  res.score = total.correct + total.incorrect
                  ? double(total.correct) / double(total.correct + total.incorrect)
                  : 0.0;
  res.oov_ratio = res.n_questions ? 100.0 * double(res.n_oov) / double(res.n_questions) : 0.0;
  return res;
}

PairsResult evaluate_word_pairs(const LoadedEmbeddings& emb, const Tokenizer* tok,
                                const std::string& path, const EvalOptions& o) {
  std::string text = read_small_file(path, size_t(256) << 20);
  WordRows rows(emb, tok, o);
  std::vector<double> gold, model;
  PairsResult res;
  size_t dim = emb.table.dim();
  auto mean_row = [&](const std::vector<TokenId>& ids) {
    std::vector<double> v(dim, 0.0);
    std::vector<float> r(dim);
    for (TokenId id : ids) {
      emb.table.row_f32(size_t(id), r.data());
      double n = 0;
      for (float x : r) n += double(x) * x;
      n = std::sqrt(n);
      for (size_t j = 0; j < dim; ++j) v[j] += n > 0 ? r[j] / n : 0.0;  // gensim: unit rows
    }
    return v;
  };
  size_t n_lines = 0, n_pair_lines = 0;
  for (std::string_view line : lines_of(text)) {
    ++n_lines;
    if (line.empty() || line.starts_with("#")) continue;
    std::vector<std::string> f;
    size_t p = 0;
    for (;;) {
      size_t t = line.find('\t', p);
      f.emplace_back(line.substr(p, t == std::string_view::npos ? std::string_view::npos : t - p));
      if (t == std::string_view::npos) break;
      p = t + 1;
    }
    if (f.size() != 3) continue;
    std::string num = f[2];
    while (!num.empty() && std::isspace(static_cast<unsigned char>(num.back()))) num.pop_back();
    while (!num.empty() && std::isspace(static_cast<unsigned char>(num.front())))
      num.erase(num.begin());
    char* end = nullptr;
    double sim = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size()) continue;
    ++n_pair_lines;
    if (o.case_insensitive) {
      f[0] = upper(f[0]);
      f[1] = upper(f[1]);
    }
    auto a = rows.find(f[0], &res.n_composed), b = rows.find(f[1], &res.n_composed);
    if (!a || !b) {
      ++res.n_oov;
      if (o.dummy4unknown) {
        gold.push_back(sim);
        model.push_back(0.0);
      }
      continue;
    }
    auto va = mean_row(*a), vb = mean_row(*b);
    double dot = 0, na = 0, nb = 0;
    for (size_t j = 0; j < dim; ++j) {
      dot += va[j] * vb[j];
      na += va[j] * va[j];
      nb += vb[j] * vb[j];
    }
    gold.push_back(sim);
    model.push_back(na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0);
  }
  if (n_pair_lines == 0)
    throw Error(ErrorCode::kInvalidArgument,
                path + ": no line in the expected format WORD<TAB>WORD<TAB>SCORE (" +
                    std::to_string(n_lines) + " lines read; '#' lines are comments)");
  if (gold.empty())
    throw Error(ErrorCode::kInvalidArgument,
                path + ": no word pair has both words in the vocabulary (" +
                    std::to_string(res.n_oov) + " pairs out of vocabulary)");
  res.n_pairs = gold.size();
  res.pearson = pearson_r(gold, model);
  res.spearman = spearman_rho(gold, model);
  res.oov_ratio = o.dummy4unknown ? 100.0 * double(res.n_oov) / double(gold.size())
                                  : 100.0 * double(res.n_oov) / double(gold.size() + res.n_oov);
  return res;
}

}  // namespace embedscope
