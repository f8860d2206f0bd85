// embedscope explore WORD: labelled neighbours, a random baseline and a verdict.
#include <cstdio>
#include <memory>
#include <optional>

#include "command.h"
#include "common.h"
#include "embedscope/analysis/explore.h"
#include "embedscope/core/error.h"
#include "embedscope/tokenizer/bpe.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string word, model, tokenizer = "auto", init;
  size_t k = 10, sample = 0, threads = 1;
  uint64_t seed = 42;
  bool json = false, all_tokens = false, timings = false;
};

json neighbor_json(const LabelledNeighbor& n) {
  json j = {{"token", n.display}, {"id", n.id}, {"score", finite_or_null(n.score)},
            {"label", label_name(n.label.label)}, {"evidence", n.label.evidence}};
  if (n.label.label == Label::kNoise) j["noise_kind"] = noise_kind_name(n.label.noise);
  return j;
}

json labels_json(const LabelCounts& c) {
  json j = json::object();
  for (Label l : kAllLabels) j[std::string(label_name(l))] = c[l];
  return j;
}

json scores_json(const ScoreSummary& s) {
  return {{"n", s.n}, {"mean", finite_or_null(s.mean)}, {"sd", finite_or_null(s.sd)},
          {"p50", finite_or_null(s.p50)}, {"p99", finite_or_null(s.p99)}, {"max", finite_or_null(s.max)}};
}

std::string label_line(const LabelCounts& c) {
  std::string s;
  for (Label l : kAllLabels) s += (s.empty() ? "" : ", ") + std::string(label_name(l)) + " " + std::to_string(c[l]);
  if (!c.noise_kinds.empty()) {
    std::string kinds;
    for (auto& [k, v] : c.noise_kinds) kinds += (kinds.empty() ? "" : ", ") + k + " " + std::to_string(v);
    s += " (" + kinds + ")";
  }
  return s;
}

// The tokenizer that goes with the model: files beside it, GPT-2's for the default model.
// auto skips loading it (a few hundred ms for GPT-2's 50k merges) when the vocabulary already
// holds the word as one token, or for --sample, which explores rows directly.
std::optional<BpeTokenizer> tokenizer_for(const Model& m, const std::string& choice, bool is_default,
                                          const std::string& word) {
  if (choice == "none") return std::nullopt;
  if (choice == "gpt2") return BpeTokenizer::gpt2_default();
  if (choice != "auto")
    throw Error(ErrorCode::kInvalidArgument, "--tokenizer '" + choice + "': expected auto, gpt2 or none");
  const auto& v = m.emb.vocab;
  if (!v.empty() && (word.empty() || v.find(" " + word) || v.find("\xC4\xA0" + word) ||
                     v.find("\xE2\x96\x81" + word) || v.find(word)))
    return std::nullopt;
  if (!m.dir.empty())
    if (auto t = BpeTokenizer::find_in_dir(m.dir)) return t;
  if (is_default) return BpeTokenizer::gpt2_default();
  return std::nullopt;
}

int run(const Opts& o) {
  double t0 = now_ms();
  Model m = load_model_ref(o.model);
  double t1 = now_ms();
  std::optional<BpeTokenizer> tok = tokenizer_for(m, o.tokenizer, o.model.empty(), o.sample ? std::string() : o.word);
  double t2 = now_ms();
  WordNet wn = WordNet::open();
  Labeller lab(wn);
  double t3 = now_ms();
  Explorer ex(m, tok ? &*tok : nullptr, lab,
              {.k = o.k, .seed = o.seed, .all_tokens = o.all_tokens, .init = o.init, .n_threads = o.threads});
  double t4 = now_ms();
  // --timings: phase costs on stderr (bench/explore_bench.sh reads them).
  auto report = [&](double t5) {
    if (o.timings)
      std::fprintf(stderr, "timings_ms: load_model %.1f tokenizer %.1f wordnet_open %.1f candidates %.1f explore %.1f\n",
                   t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  };
  const auto& t = m.emb.table;
  if (o.sample > 0) {
    SampleResult s = ex.sample(o.sample);
    report(now_ms());
    if (o.json) {
      print_json({{"model", m.ref}, {"sample", s.words.size()}, {"k", s.k}, {"words", s.words},
                  {"labels", labels_json(s.labels)}, {"noise_kinds", s.labels.noise_kinds},
                  {"baseline", {{"labels", labels_json(s.baseline_labels)},
                                {"noise_kinds", s.baseline_labels.noise_kinds},
                                {"mean_top", finite_or_null(s.baseline_mean_top)}}},
                  {"mean_top", finite_or_null(s.mean_top)}, {"verdict", s.verdict}});
      return kExitOk;
    }
    std::printf("explore --sample %zu in %s (%zu x %zu), k = %zu\n", s.words.size(), m.ref.c_str(),
                t.n_rows(), t.dim(), s.k);
    std::string words;
    for (auto& w : s.words) words += (words.empty() ? "" : " ") + w;
    std::printf("words: %s\n", printable(words).c_str());
    std::printf("labels:   %s\n", label_line(s.labels).c_str());
    std::printf("baseline: %s\n", label_line(s.baseline_labels).c_str());
    std::printf("verdict: %s\n", s.verdict.c_str());
    return kExitOk;
  }
  ExploreResult r = ex.explore(o.word);
  report(now_ms());
  if (o.json) {
    json rows = json::array();
    for (size_t i = 0; i < r.rows.size(); ++i)
      rows.push_back({{"text", r.rows[i].text}, {"ids", r.rows[i].ids}, {"tokens", r.rows[i].display},
                      {"used", i == r.query_variant}});
    json nb = json::array(), bnb = json::array();
    for (auto& n : r.neighbors) nb.push_back(neighbor_json(n));
    for (auto& n : r.baseline.neighbors) bnb.push_back(neighbor_json(n));
    json top = json::array(), etop = json::array();
    for (float x : r.baseline.top_scores) top.push_back(finite_or_null(x));
    for (double x : r.baseline.expected_top_scores) etop.push_back(finite_or_null(x));
    print_json({{"query", r.query}, {"model", m.ref}, {"shape", {t.n_rows(), t.dim()}},
                {"rows", rows}, {"composed", r.composed}, {"candidates", r.n_candidates},
                {"neighbors", nb}, {"labels", labels_json(r.labels)}, {"noise_kinds", r.labels.noise_kinds},
                {"scores", scores_json(r.scores)},
                {"baseline", {{"init", r.baseline.init}, {"seed", r.baseline.seed},
                              {"labels", labels_json(r.baseline.labels)},
                              {"noise_kinds", r.baseline.labels.noise_kinds},
                              {"top_scores", top}, {"expected_top_scores", etop},
                              {"neighbors", bnb}, {"scores", scores_json(r.baseline.scores)}}},
                {"mean_top", finite_or_null(r.mean_top)},
                {"baseline_mean_top", finite_or_null(r.baseline_mean_top)},
                {"above_baseline", finite_or_null(r.mean_top - r.baseline_mean_top)},
                {"verdict", r.verdict}});
    return kExitOk;
  }
  std::printf("explore '%s' in %s (%zu x %zu; %zu whole-word candidates)\n", printable(r.query).c_str(),
              m.ref.c_str(), t.n_rows(), t.dim(), r.n_candidates);
  std::string rows;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    std::string toks, ids;
    for (size_t j = 0; j < r.rows[i].ids.size(); ++j) {
      toks += (j ? " " : "") + r.rows[i].display[j];
      ids += (j ? "," : "") + std::to_string(r.rows[i].ids[j]);
    }
    rows += (rows.empty() ? "" : ", ") + toks + " [" + ids + "]" + (i == r.query_variant ? "*" : "");
  }
  std::printf("rows: %s%s\n", rows.c_str(), r.composed ? "  (* = query; several tokens: their mean)" : "  (* = query)");
  // Pad by code points, not bytes: readable tokens contain multi-byte marks such as "␣".
  auto pad = [](std::string s, size_t width) {
    size_t cps = 0;
    for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
    if (cps < width) s.append(width - cps, ' ');
    return s;
  };
  std::printf("%3s  %s %7s  %s %s\n", "#", pad("neighbour", 18).c_str(), "cosine",
              pad("label", 16).c_str(), "evidence");
  for (size_t i = 0; i < r.neighbors.size(); ++i) {
    const auto& n = r.neighbors[i];
    std::string tag(label_name(n.label.label));
    if (n.label.label == Label::kNoise) tag += "/" + std::string(noise_kind_name(n.label.noise));
    std::printf("%3zu  %s %7.3f  %s %s\n", i + 1, pad(printable(n.display), 18).c_str(), n.score,
                pad(tag, 16).c_str(), printable(n.label.evidence).c_str());
  }
  std::printf("labels: %s\n", label_line(r.labels).c_str());
  std::string bn;
  for (auto& n : r.baseline.neighbors) bn += (bn.empty() ? "" : " ") + printable(n.display);
  double e0 = r.baseline.expected_top_scores.empty() ? 0 : r.baseline.expected_top_scores.front();
  double ek = r.baseline.expected_top_scores.empty() ? 0 : r.baseline.expected_top_scores.back();
  std::printf("random baseline (%s, seed %llu): %s\n", r.baseline.init.c_str(),
              static_cast<unsigned long long>(r.baseline.seed), label_line(r.baseline.labels).c_str());
  std::printf("  neighbours: %s\n", bn.c_str());
  if (!r.baseline.top_scores.empty())
    std::printf("  top cosines %.3f .. %.3f (expected for random vectors: %.3f .. %.3f)\n",
                r.baseline.top_scores.front(), r.baseline.top_scores.back(), e0, ek);
  std::printf("top-%zu mean cosine %.3f vs %.3f by chance (%+.3f)\n", r.neighbors.size(), r.mean_top,
              r.baseline_mean_top, r.mean_top - r.baseline_mean_top);
  std::printf("verdict: %s\n", r.verdict.c_str());
  return kExitOk;
}

Command reg(
    "explore", "Labelled nearest neighbours of a word, against a random baseline",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("WORD", o->word, "the word to explore (omit with --sample)");
      app.add_option("--model,-m", o->model, "model: file, folder or hub id (default: the embedded default model)");
      app.add_option("-k", o->k, "number of neighbours")->capture_default_str();
      app.add_flag("--json", o->json, "machine-readable output");
      app.add_option("--sample", o->sample, "explore N frequent words (seeded) and report the label mix");
      app.add_option("--seed", o->seed, "seed of the random baseline and of --sample")->capture_default_str();
      app.add_option("--init", o->init, "baseline init distribution (normal:STD or uniform:A; default: the model's)");
      app.add_option("--tokenizer", o->tokenizer, "auto (files beside the model; GPT-2 for the default model), gpt2 or none")
          ->capture_default_str();
      app.add_flag("--all-tokens", o->all_tokens, "consider every row, not only whole-word tokens");
      app.add_option("--threads", o->threads, "search threads")->capture_default_str();
      app.add_flag("--timings", o->timings, "print phase timings (ms) to stderr");
      app.footer(
          "Labels: variant (same word up to case/space/markers, same WordNet lemma or Snowball stem,\n"
          "WordNet derivation), synonym (shared synset), related (WordNet path of <= 2 hops or a shared\n"
          "hypernym <= 2 levels up), noise (special, number/punct, subword, rare, unrelated). See docs/explore.md.\n\n"
          "Examples:\n"
          "  embedscope explore computer\n"
          "  embedscope explore king --model vectors.bin -k 5 --json\n"
          "  embedscope explore --sample 50 --model gpt2");
      return [o] {
        if (o->sample == 0 && o->word.empty())
          throw Error(ErrorCode::kInvalidArgument, "explore: give a WORD or --sample N");
        return run(*o);
      };
    },
    20);

}  // namespace
}  // namespace embedscope::cli
