#include "embedscope/api/explore.h"

#include <optional>

#include "embedscope/core/error.h"

namespace embedscope::api {

namespace {

struct SharedExplorer {
  std::mutex mu;  // an Explorer owns a Searcher: one query at a time
  std::unique_ptr<Explorer> ex;
};

bool vocab_holds(const Vocabulary& v, const std::string& w) {
  return !v.empty() && (w.empty() || v.find(" " + w) || v.find("\xC4\xA0" + w) ||
                        v.find("\xE2\x96\x81" + w) || v.find(w));
}

std::shared_ptr<SharedExplorer> explorer_for(const ModelHandle& h, const ExploreRequest& r) {
  const Tokenizer* tok = nullptr;
  bool skip =
      r.lazy_tokenizer && !h.tokenizer_loaded() && vocab_holds(h.vocab(), r.sample ? "" : r.word);
  if (!skip) tok = h.tokenizer();
  // The init override is given per call, not part of the key: a client cannot make the
  // handle keep one explorer per distinct init string.
  std::string key = "explorer:" + std::to_string(r.all_tokens) + ":" + (tok ? "t" : "-");
  const Labeller& lab = shared_labeller();
  return h.resource<SharedExplorer>(key, [&] {
    auto s = std::make_shared<SharedExplorer>();
    s->ex = std::make_unique<Explorer>(
        h.model(), tok, lab,
        ExploreOptions{
            .k = r.k ? r.k : 1, .seed = r.seed, .all_tokens = r.all_tokens, .n_threads = 0});
    return s;
  });
}

json scores_json(const ScoreSummary& s) {
  return {{"n", s.n},
          {"mean", finite_or_null(s.mean)},
          {"sd", finite_or_null(s.sd)},
          {"p50", finite_or_null(s.p50)},
          {"p99", finite_or_null(s.p99)},
          {"max", finite_or_null(s.max)}};
}

}  // namespace

ExploreResult explore(const ModelHandle& h, const ExploreRequest& r) {
  if (r.k == 0) throw Error(ErrorCode::kInvalidArgument, "explore: k must be at least 1");
  if (r.word.empty()) throw Error(ErrorCode::kInvalidArgument, "explore: give a word");
  std::optional<InitDistribution> init;
  if (!r.init.empty()) init = parse_init_hint(r.init);
  auto s = explorer_for(h, r);
  std::lock_guard<std::mutex> lock(s->mu);
  return s->ex->explore(r.word, r.k, r.seed, init ? &*init : nullptr);
}

SampleResult explore_sample(const ModelHandle& h, const ExploreRequest& r) {
  if (r.k == 0) throw Error(ErrorCode::kInvalidArgument, "explore: k must be at least 1");
  // sample() takes k and seed from the Explorer's options: a private explorer.
  const Tokenizer* tok = r.lazy_tokenizer && !h.tokenizer_loaded() ? nullptr : h.tokenizer();
  Explorer ex(
      h.model(), tok, shared_labeller(),
      {.k = r.k, .seed = r.seed, .all_tokens = r.all_tokens, .init = r.init, .n_threads = 0});
  return ex.sample(r.sample);
}

json to_json(const LabelledNeighbor& n) {
  json j = {{"token", n.display},
            {"id", n.id},
            {"score", finite_or_null(n.score)},
            {"label", label_name(n.label.label)},
            {"evidence", n.label.evidence}};
  if (n.label.label == Label::kNoise) j["noise_kind"] = noise_kind_name(n.label.noise);
  return j;
}

json to_json(const LabelCounts& c) {
  json j = json::object();
  for (Label l : kAllLabels) j[std::string(label_name(l))] = c[l];
  return j;
}

json to_json(const ModelHandle& h, const SampleResult& s) {
  return {{"model", h.name()},
          {"sample", s.words.size()},
          {"k", s.k},
          {"words", s.words},
          {"labels", to_json(s.labels)},
          {"noise_kinds", s.labels.noise_kinds},
          {"baseline",
           {{"labels", to_json(s.baseline_labels)},
            {"noise_kinds", s.baseline_labels.noise_kinds},
            {"mean_top", finite_or_null(s.baseline_mean_top)}}},
          {"mean_top", finite_or_null(s.mean_top)},
          {"verdict", s.verdict}};
}

json to_json(const ModelHandle& h, const ExploreResult& r) {
  const auto& t = h.table();
  json rows = json::array();
  for (size_t i = 0; i < r.rows.size(); ++i)
    rows.push_back({{"text", r.rows[i].text},
                    {"ids", r.rows[i].ids},
                    {"tokens", r.rows[i].display},
                    {"used", i == r.query_variant}});
  json nb = json::array(), bnb = json::array();
  for (auto& n : r.neighbors) nb.push_back(to_json(n));
  for (auto& n : r.baseline.neighbors) bnb.push_back(to_json(n));
  json top = json::array(), etop = json::array();
  for (float x : r.baseline.top_scores) top.push_back(finite_or_null(x));
  for (double x : r.baseline.expected_top_scores) etop.push_back(finite_or_null(x));
  return {{"query", r.query},
          {"model", h.name()},
          {"shape", {t.n_rows(), t.dim()}},
          {"rows", rows},
          {"composed", r.composed},
          {"candidates", r.n_candidates},
          {"neighbors", nb},
          {"labels", to_json(r.labels)},
          {"noise_kinds", r.labels.noise_kinds},
          {"scores", scores_json(r.scores)},
          {"baseline",
           {{"init", r.baseline.init},
            {"seed", r.baseline.seed},
            {"labels", to_json(r.baseline.labels)},
            {"noise_kinds", r.baseline.labels.noise_kinds},
            {"top_scores", top},
            {"expected_top_scores", etop},
            {"neighbors", bnb},
            {"scores", scores_json(r.baseline.scores)}}},
          {"mean_top", finite_or_null(r.mean_top)},
          {"baseline_mean_top", finite_or_null(r.baseline_mean_top)},
          {"above_baseline", finite_or_null(r.mean_top - r.baseline_mean_top)},
          {"verdict", r.verdict}};
}

}  // namespace embedscope::api
