#include "embedscope/api/eval.h"

#include <cstdio>

namespace embedscope::api {

embedscope::AnalogyResult eval_analogies(const ModelHandle& h, const std::string& path,
                                         const EvalOptions& o) {
  return evaluate_analogies(h.model().emb, h.tokenizer(), path, o);
}

PairsResult eval_pairs(const ModelHandle& h, const std::string& path, const EvalOptions& o) {
  return evaluate_word_pairs(h.model().emb, h.tokenizer(), path, o);
}

std::string oov_warning(const ModelHandle& h, double oov_percent) {
  if (oov_percent <= kOovWarnPercent || h.tokenizer()) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.1f%%", oov_percent);
  return std::string(b) + " of the evaluation's words are not in the vocabulary of " +
         h.model().path +
         " and it has no tokenizer; if its rows are tokens, pass --tokenizer gpt2 (or the model's "
         "tokenizer file)";
}

json to_json(const ModelHandle& h, const std::string& path, const embedscope::AnalogyResult& r) {
  json secs = json::array();
  for (auto& s : r.sections)
    secs.push_back({{"section", s.name},
                    {"correct", s.correct},
                    {"incorrect", s.incorrect},
                    {"accuracy", s.correct + s.incorrect
                                     ? json(double(s.correct) / double(s.correct + s.incorrect))
                                     : json(nullptr)}});
  return {{"model", h.name()},          {"file", path},    {"score", r.score},
          {"questions", r.n_questions}, {"oov", r.n_oov},  {"oov_ratio", r.oov_ratio},
          {"composed", r.n_composed},   {"sections", secs}};
}

json to_json(const ModelHandle& h, const std::string& path, const PairsResult& r) {
  return {{"model", h.name()},
          {"file", path},
          {"pearson", finite_or_null(r.pearson)},
          {"spearman", finite_or_null(r.spearman)},
          {"pairs", r.n_pairs},
          {"oov", r.n_oov},
          {"oov_ratio", r.oov_ratio},
          {"composed", r.n_composed}};
}

}  // namespace embedscope::api
