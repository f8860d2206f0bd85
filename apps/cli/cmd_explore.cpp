// embedscope explore WORD: labelled neighbours, a random baseline and a verdict.
#include <cstdio>
#include <memory>
#include <optional>

#include "command.h"
#include "common.h"
#include "embedscope/api/explore.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string word, model, tokenizer = "auto", init;
  size_t k = 10, sample = 0, threads = 0;
  uint64_t seed = 42;
  bool json = false, all_tokens = false, timings = false;
};

std::string label_line(const LabelCounts& c) {
  std::string s;
  for (Label l : kAllLabels)
    s += (s.empty() ? "" : ", ") + std::string(label_name(l)) + " " + std::to_string(c[l]);
  if (!c.noise_kinds.empty()) {
    std::string kinds;
    for (auto& [k, v] : c.noise_kinds)
      kinds += (kinds.empty() ? "" : ", ") + k + " " + std::to_string(v);
    s += " (" + kinds + ")";
  }
  return s;
}

int run(const Opts& o) {
  if (o.threads) set_process_threads(o.threads);
  if (o.tokenizer != "auto" && o.tokenizer != "gpt2" && o.tokenizer != "none")
    throw Error(ErrorCode::kInvalidArgument,
                "--tokenizer '" + o.tokenizer + "': expected auto, gpt2 or none");
  double t0 = now_ms();
  HandleOptions ho;
  ho.tokenizer = o.tokenizer;
  ModelHandlePtr h = open_handle(o.model, ho);
  double t1 = now_ms();
  api::ExploreRequest req{.word = o.word,
                          .k = o.k,
                          .seed = o.seed,
                          .all_tokens = o.all_tokens,
                          .init = o.init,
                          .sample = o.sample,
                          .lazy_tokenizer = true};
  const Model& m = h->model();
  // --timings: phase costs on stderr (bench/explore_bench.sh reads them).
  auto report = [&](double t2) {
    if (o.timings)
      std::fprintf(stderr, "timings_ms: load_model %.1f explore %.1f\n", t1 - t0, t2 - t1);
  };
  const auto& t = m.emb.table;
  if (o.sample > 0) {
    SampleResult s = api::explore_sample(*h, req);
    report(now_ms());
    if (o.json) {
      print_json(api::to_json(*h, s));
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
  ExploreResult r = api::explore(*h, req);
  report(now_ms());
  if (o.json) {
    print_json(api::to_json(*h, r));
    return kExitOk;
  }
  std::printf("explore '%s' in %s (%zu x %zu; %zu whole-word candidates)\n",
              printable(r.query).c_str(), m.ref.c_str(), t.n_rows(), t.dim(), r.n_candidates);
  std::string rows;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    std::string toks, ids;
    for (size_t j = 0; j < r.rows[i].ids.size(); ++j) {
      toks += (j ? " " : "") + r.rows[i].display[j];
      ids += (j ? "," : "") + std::to_string(r.rows[i].ids[j]);
    }
    rows +=
        (rows.empty() ? "" : ", ") + toks + " [" + ids + "]" + (i == r.query_variant ? "*" : "");
  }
  std::printf("rows: %s%s\n", rows.c_str(),
              r.composed ? "  (* = query; several tokens: their mean)" : "  (* = query)");
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
              static_cast<unsigned long long>(r.baseline.seed),
              label_line(r.baseline.labels).c_str());
  std::printf("  neighbours: %s\n", bn.c_str());
  if (!r.baseline.top_scores.empty())
    std::printf("  top cosines %.3f .. %.3f (expected for random vectors: %.3f .. %.3f)\n",
                r.baseline.top_scores.front(), r.baseline.top_scores.back(), e0, ek);
  std::printf("top-%zu mean cosine %.3f vs %.3f by chance (%+.3f)\n", r.neighbors.size(),
              r.mean_top, r.baseline_mean_top, r.mean_top - r.baseline_mean_top);
  std::printf("verdict: %s\n", r.verdict.c_str());
  return kExitOk;
}

Command reg(
    "explore", "Labelled nearest neighbours of a word, against a random baseline",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("WORD", o->word, "the word to explore (omit with --sample)");
      app.add_option("--model,-m", o->model,
                     "model: file, folder or hub id (default: the embedded default model)");
      app.add_option("-k", o->k, "number of neighbours")->capture_default_str();
      app.add_flag("--json", o->json, "machine-readable output");
      app.add_option("--sample", o->sample,
                     "explore N frequent words (seeded) and report the label mix");
      app.add_option("--seed", o->seed, "seed of the random baseline and of --sample")
          ->capture_default_str();
      app.add_option("--init", o->init,
                     "baseline init distribution (normal:STD or uniform:A; default: the model's)");
      app.add_option("--tokenizer", o->tokenizer,
                     "auto (files beside the model; GPT-2 for the default model), gpt2 or none")
          ->capture_default_str();
      app.add_flag("--all-tokens", o->all_tokens, "consider every row, not only whole-word tokens");
      app.add_option("--threads", o->threads, "threads (default: all cores)");
      app.add_flag("--timings", o->timings, "print phase timings (ms) to stderr");
      app.footer(
          "Labels: variant (same word up to case/space/markers, same WordNet lemma or Snowball "
          "stem,\n"
          "WordNet derivation), synonym (shared synset), related (WordNet path of <= 2 hops or a "
          "shared\n"
          "hypernym <= 2 levels up), noise (special, number/punct, subword, rare, unrelated). See "
          "docs/explore.md.\n\n"
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
