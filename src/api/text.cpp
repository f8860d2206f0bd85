#include "embedscope/api/text.h"

#include <exception>

#include "embedscope/api/tokenizer_ops.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::api {

namespace {

const Tokenizer& need_tokenizer(const ModelHandle& h) {
  const Tokenizer* tok = h.tokenizer();
  if (!tok)
    throw Error(ErrorCode::kUnsupported, h.model().path + " has no tokenizer (tokenizer source: " +
                                             h.tokenizer_source() + ")");
  return *tok;
}

void check_id(const ModelHandle& h, int64_t id, size_t limit) {
  if (id < 0 || uint64_t(id) >= limit)
    throw Error(ErrorCode::kOutOfRange, "token id " + std::to_string(id) + " is out of range (" +
                                            std::to_string(limit) + " rows in " + h.model().path +
                                            ")");
}

}  // namespace

TokenizeResult tokenize(const ModelHandle& h, std::string_view text, bool allow_special) {
  return tokenize(need_tokenizer(h), text, allow_special);
}

json to_json(const TokenizeResult& r) {
  return json{{"ids", r.ids}, {"pieces", r.pieces}, {"offsets", r.offsets}};
}

DecodeResult decode(const ModelHandle& h, const std::vector<int64_t>& ids) {
  const Tokenizer& tok = need_tokenizer(h);
  std::vector<TokenId> t;
  t.reserve(ids.size());
  for (int64_t id : ids) {
    check_id(h, id, tok.vocab_size());
    t.push_back(TokenId(id));
  }
  DecodeResult r;
  r.text = tok.decode(t);  // partial UTF-8 -> U+FFFD
  for (TokenId id : t) r.pieces.push_back(tok.display(id));
  return r;
}

json to_json(const DecodeResult& r) { return json{{"text", r.text}, {"pieces", r.pieces}}; }

EmbedResult embed(const ModelHandle& h, const EmbedRequest& r) {
  const EmbeddingTable& t = h.table();
  const size_t n = r.texts.empty() ? r.id_lists.size() : r.texts.size();
  EmbedResult out;
  out.vectors.resize(n);
  out.n_tokens.resize(n);
  const Tokenizer* tok = r.texts.empty() ? nullptr : h.tokenizer();
  const WordLookup* words = r.texts.empty() || tok ? nullptr : &h.words();
  auto one = [&](size_t i, std::vector<float>& row) {
    std::vector<int64_t> ids;
    if (tok) {
      // Special tokens written in the text stay plain text (the GPT-2 path's rule).
      for (TokenId id : tok->encode_ids(r.texts[i], {.split_special_tokens = true}))
        ids.push_back(id);
    } else if (words) {  // no tokenizer: words split on ASCII spaces, looked up as vocabulary
                         // entries
      const std::string& s = r.texts[i];
      for (size_t p = 0; p < s.size();) {
        size_t e = s.find(' ', p);
        if (e == std::string::npos) e = s.size();
        if (e > p) {
          std::optional<ResolvedWord> w = words->resolve(s.substr(p, e - p));
          if (!w)
            throw Error(ErrorCode::kNotFound, "input " + std::to_string(i) + ": '" +
                                                  s.substr(p, e - p) +
                                                  "' is not in the vocabulary (no tokenizer)");
          ids.insert(ids.end(), w->ids.begin(), w->ids.end());
        }
        p = e + 1;
      }
    } else {
      ids = r.id_lists[i];
    }
    if (ids.empty())
      throw Error(ErrorCode::kInvalidArgument, "input " + std::to_string(i) + " has no tokens");
    std::vector<double> acc(t.dim(), 0.0);
    for (int64_t id : ids) {
      check_id(h, id, t.n_rows());
      t.row_f32(size_t(id), row.data());
      for (size_t j = 0; j < row.size(); ++j) acc[j] += row[j];
    }
    out.vectors[i].resize(t.dim());
    for (size_t j = 0; j < acc.size(); ++j) out.vectors[i][j] = float(acc[j] / double(ids.size()));
    out.n_tokens[i] = ids.size();
  };
  // Inputs are independent: they run on the process pool. Each input's error is kept
  // and the first by index is thrown, so the error does not depend on the thread count.
  std::vector<std::exception_ptr> errors(n);
  auto range = [&](size_t b, size_t e) {
    std::vector<float> row(t.dim());
    for (size_t i = b; i < e; ++i) {
      try {
        one(i, row);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (n >= 64 && process_threads() > 1) {
    process_pool().parallel_for(n, [&](size_t b, size_t e, size_t) { range(b, e); });
  } else {
    range(0, n);
  }
  for (size_t i = 0; i < n; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    out.total_tokens += out.n_tokens[i];
  }
  return out;
}

}  // namespace embedscope::api
