#include "embedscope/api/text_output.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace embedscope::api {
namespace {

[[gnu::format(printf, 2, 3)]] void appendf(std::string& s, const char* fmt, ...) {
  va_list a, b;
  va_start(a, fmt);
  va_copy(b, a);
  int n = std::vsnprintf(nullptr, 0, fmt, a);
  va_end(a);
  if (n > 0) {
    size_t at = s.size();
    s.resize(at + size_t(n) + 1);
    std::vsnprintf(s.data() + at, size_t(n) + 1, fmt, b);
    s.resize(at + size_t(n));
  }
  va_end(b);
}

std::string p(const std::string& s) { return printable(s); }

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

// Pads by code points, not bytes: readable tokens contain multi-byte marks such as "␣".
std::string pad(std::string s, size_t width) {
  size_t cps = 0;
  for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
  if (cps < width) s.append(width - cps, ' ');
  return s;
}

std::string recall_line(const json& j, size_t k) {
  std::string s;
  appendf(s, "recall@%zu vs exact: %.3f", k, j["recall"].get<double>());
  for (const auto& m : j["missed"]) appendf(s, "  missed %s", p(m["token"]).c_str());
  return s + "\n";
}

// The heading and resolution lines of a single query's document, then its neighbours.
std::string single_text(const ModelHandle& h, const json& j, const std::vector<Neighbor>& nn,
                        Metric metric) {
  std::string s;
  std::string what = j["query"].is_string() ? j["query"].get<std::string>() : j["query"].dump();
  appendf(s, "neighbors of '%s' (%s, %s, %.2f ms):\n", p(what).c_str(),
          std::string(metric_name(metric)).c_str(), j["mode"].get<std::string>().c_str(),
          j["elapsed_ms"].get<double>());
  const json* r = j.contains("resolved") && j["resolved"].is_object() ? &j["resolved"] : nullptr;
  if (r && (*r)["how"] == "pieces") {
    s += "  (not one token: mean of";
    for (const auto& piece : (*r)["pieces"]) s += " " + p(piece.get<std::string>());
    s += ")\n";
  }
  if (r && (*r)["how"] == "case-variant")
    appendf(s, "  (not a token as typed; using %s)\n",
            p((*r)["pieces"][0].get<std::string>()).c_str());
  return s + neighbor_lines(h, nn, metric);
}

}  // namespace

std::string neighbor_lines(const ModelHandle& h, const std::vector<Neighbor>& nn, Metric metric) {
  std::string s;
  for (size_t r = 0; r < nn.size(); ++r) {
    float v = metric == Metric::kL2 ? -nn[r].score : nn[r].score;
    appendf(s, "%4zu  %-24s %9.4f  #%d\n", r + 1, p(h.words().display(nn[r].id)).c_str(), double(v),
            nn[r].id);
  }
  return s;
}

std::string to_text(const ModelHandle& h, const NeighborsResult& r) {
  return single_text(h, to_json(h, r), r.answers.at(0).neighbors, r.metric);
}

std::string to_text(const ModelHandle& h, const HnswResult& r) {
  json j = to_json(h, r);
  std::string s = single_text(h, j, r.neighbors, Metric::kCosine);
  return j.contains("recall") ? s + recall_line(j, r.request.k) : s;
}

std::string index_query_text(const ModelHandle& h, const HnswResult& r) {
  std::string s;
  std::string q =
      r.resolved.query.is_string() ? r.resolved.query.get<std::string>() : r.resolved.query.dump();
  appendf(s, "neighbors of '%s' (hnsw, ef %zu, %.3f ms):\n", p(q).c_str(), r.request.ef,
          r.elapsed_ms);
  s += neighbor_lines(h, r.neighbors, Metric::kCosine);
  return r.request.check_recall ? s + recall_line(to_json(h, r), r.request.k) : s;
}

std::string batch_summary(const NeighborsResult& r, bool as_json) {
  size_t n_ok = 0;
  for (const auto& a : r.answers) n_ok += a.error.empty();
  std::string s;
  appendf(s, "batch: %zu queries in %.3f ms (%s, %zu threads, %s)\n", n_ok, r.elapsed_ms,
          std::string(search_mode_name(r.mode)).c_str(), r.threads, as_json ? "json" : "text");
  return s;
}

std::string batch_text(const ModelHandle& h, const NeighborsResult& r) {
  std::string s;
  for (const NeighborsAnswer& a : r.answers) {
    std::string q = p(a.query.get<std::string>());
    if (!a.error.empty()) {
      appendf(s, "%s: error: %s\n", q.c_str(), a.error.c_str());
      continue;
    }
    s += q + ":";
    for (const Neighbor& n : a.neighbors)
      appendf(s, " %s(%.4f)", p(h.words().display(n.id)).c_str(), double(n.score));
    s += "\n";
  }
  return s;
}

std::string to_text(const ModelHandle& h, const AnalogyResult& r) {
  std::string s;
  appendf(s, "%s : %s :: %s : ?   (%s, %.2f ms)\n", p(r.request.a).c_str(), p(r.request.b).c_str(),
          p(r.request.c).c_str(), std::string(analogy_method_name(r.method)).c_str(), r.elapsed_ms);
  return s + neighbor_lines(h, r.neighbors, Metric::kCosine);
}

std::string to_text(const ModelHandle&, const PairResult& r) {
  std::string s;
  if (r.request.rank)
    appendf(s, "rank of '%s' among the neighbours of '%s': %zu (cosine %.4f)\n",
            p(r.request.b).c_str(), p(r.request.a).c_str(), r.rank, double(r.similarity));
  else
    appendf(s, "%.6f\n", double(r.similarity));
  return s;
}

std::string to_text(const ModelHandle&, const DoesntMatchResult& r) {
  return p(r.request.words.at(r.odd)) + "\n";
}

std::string to_text(const ModelHandle& h, const ExploreResult& r) {
  const EmbeddingTable& t = h.table();
  std::string s;
  appendf(s, "explore '%s' in %s (%zu x %zu; %zu whole-word candidates)\n", p(r.query).c_str(),
          h.model().ref.c_str(), t.n_rows(), t.dim(), r.n_candidates);
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
  appendf(s, "rows: %s%s\n", rows.c_str(),
          r.composed ? "  (* = query; several tokens: their mean)" : "  (* = query)");
  appendf(s, "%3s  %s %7s  %s %s\n", "#", pad("neighbour", 18).c_str(), "cosine",
          pad("label", 16).c_str(), "evidence");
  for (size_t i = 0; i < r.neighbors.size(); ++i) {
    const auto& n = r.neighbors[i];
    std::string tag(label_name(n.label.label));
    if (n.label.label == Label::kNoise) tag += "/" + std::string(noise_kind_name(n.label.noise));
    appendf(s, "%3zu  %s %7.3f  %s %s\n", i + 1, pad(p(n.display), 18).c_str(), n.score,
            pad(tag, 16).c_str(), p(n.label.evidence).c_str());
  }
  appendf(s, "labels: %s\n", label_line(r.labels).c_str());
  std::string bn;
  for (auto& n : r.baseline.neighbors) bn += (bn.empty() ? "" : " ") + p(n.display);
  const auto& ex = r.baseline.expected_top_scores;
  double e0 = ex.empty() ? 0 : ex.front(), ek = ex.empty() ? 0 : ex.back();
  appendf(s, "random baseline (%s, seed %llu): %s\n", r.baseline.init.c_str(),
          static_cast<unsigned long long>(r.baseline.seed), label_line(r.baseline.labels).c_str());
  appendf(s, "  neighbours: %s\n", bn.c_str());
  if (!r.baseline.top_scores.empty())
    appendf(s, "  top cosines %.3f .. %.3f (expected for random vectors: %.3f .. %.3f)\n",
            r.baseline.top_scores.front(), r.baseline.top_scores.back(), e0, ek);
  appendf(s, "top-%zu mean cosine %.3f vs %.3f by chance (%+.3f)\n", r.neighbors.size(), r.mean_top,
          r.baseline_mean_top, r.mean_top - r.baseline_mean_top);
  appendf(s, "verdict: %s\n", r.verdict.c_str());
  return s;
}

std::string to_text(const ModelHandle& h, const SampleResult& r) {
  const EmbeddingTable& t = h.table();
  std::string s, words;
  appendf(s, "explore --sample %zu in %s (%zu x %zu), k = %zu\n", r.words.size(),
          h.model().ref.c_str(), t.n_rows(), t.dim(), r.k);
  for (auto& w : r.words) words += (words.empty() ? "" : " ") + w;
  appendf(s, "words: %s\n", p(words).c_str());
  appendf(s, "labels:   %s\n", label_line(r.labels).c_str());
  appendf(s, "baseline: %s\n", label_line(r.baseline_labels).c_str());
  appendf(s, "verdict: %s\n", r.verdict.c_str());
  return s;
}

std::string to_text(const ModelInfo& i) {
  const Model& m = *i.model;
  const EmbeddingTable& t = m.emb.table;
  const NormStats& ns = i.norms;
  const size_t padded = t.n_rows() - m.n_search_rows;
  const std::string dtype(dtype_name(t.dtype()));
  const std::string source = m.emb.source_dtype.empty() ? dtype : m.emb.source_dtype;
  std::string s;
  auto line = [&s](const char* k, const std::string& v) { appendf(s, "%-13s %s\n", k, v.c_str()); };
  line("model", m.ref.empty() ? m.path : m.ref);
  line("file", m.path);
  line("format", std::string(format_name(m.emb.format)));
  if (!m.model_type.empty()) line("model type", m.model_type);
  line("tensor", m.tensor.empty() ? "-" : m.tensor);
  if (!m.tensor_reason.empty()) line("  chosen by", m.tensor_reason);
  line("shape", std::to_string(t.n_rows()) + " x " + std::to_string(t.dim()));
  line("dtype", source == dtype ? dtype : dtype + " (on disk " + source + ")");
  line("vocabulary", m.emb.vocab.empty() ? "none" : std::to_string(m.emb.vocab.size()) + " tokens");
  line("search rows", std::to_string(m.n_search_rows) +
                          (padded ? " (" + std::to_string(padded) + " padded rows excluded)" : ""));
  line("zero copy", t.zero_copy() ? "yes (mapped)" : "no (copied / converted)");
  line("tied", m.tied ? (*m.tied ? "yes" : "no") : "unknown");
  const TokenizerPlan& tp = i.tokenizer;
  line("tokenizer", tp.source == "none"       ? "none found"
                    : tp.source == "metadata" ? tp.name + " (named in the model's metadata)"
                    : tp.source == "folder"   ? tp.name
                    : tp.source == "gguf"     ? "the GGUF file's vocabulary (tokenizer.ggml.*)"
                                              : "gpt2 (GPT-2-shaped matrix)");
  std::string b;
  appendf(b, "min %.4g  mean %.4g  max %.4g  (non-finite values: %llu)", ns.min, ns.mean, ns.max,
          static_cast<unsigned long long>(ns.nonfinite));
  line("row norms", b);
  if (ns.sampled)
    line("", "  over " + std::to_string(ns.rows) + " of " + std::to_string(t.n_rows()) +
                 " rows (64 evenly spaced runs); --full-stats reads every row");
  if (!m.init_hint.empty()) line("init hint", m.init_hint);
  for (const auto& [k, v] : m.emb.metadata)
    if (k.rfind("embedscope.", 0) != 0) line("metadata", k + " = " + p(v.substr(0, 120)));
  b.clear();
  appendf(b, "%.1f ms", i.request.load_ms);
  line("load time", b);
  for (const std::string& w : m.emb.warnings) line("warning", w);
  return s;
}

std::string to_text(const ModelHandle& h, const TableStats& s) {
  const Vocabulary& v = h.model().emb.vocab;
  auto name = [&](TokenId id) {
    return size_t(id) < v.size() ? p(v.token(id)) : "#" + std::to_string(id);
  };
  std::string o;
  appendf(o, "%s: %zu rows x %zu dims\n", h.model().ref.c_str(), s.n_rows, s.dim);
  appendf(o,
          "norms: mean %.4g sd %.4g  min %.4g p50 %.4g p99 %.4g max %.4g  (%zu zero, %zu "
          "non-finite)\n",
          s.norms.mean, s.norms.sd, s.norms.min, s.norms.p50, s.norms.p99, s.norms.max, s.n_zero,
          s.n_nonfinite);
  appendf(o,
          "anisotropy: mean cosine to the mean row %.3f; random pairs %.3f +- %.3f (random "
          "vectors: 0 +- %.3f)\n",
          s.mean_cos_to_mean, s.pair_cos.mean, s.pair_cos.sd, 1.0 / std::sqrt(double(s.dim)));
  appendf(o,
          "hubness (k=%zu, %zu queries): k-occurrence skew %.2f, %.1f%% of rows never a "
          "neighbour\n",
          s.hub_k, s.n_queries, s.k_occurrence_skew, 100 * s.antihub_share);
  std::string hubs;
  for (auto& [id, c] : s.top_hubs)
    hubs += (hubs.empty() ? "" : ", ") + name(id) + " " + std::to_string(c);
  appendf(o, "  top hubs: %s\n", hubs.c_str());
  std::string pca;
  double cum = 0;
  for (double x : s.pca_explained) {
    cum += x;
    appendf(pca, "%s%.1f%%", pca.empty() ? "" : " ", 100 * x);
  }
  appendf(o, "PCA: top %zu components explain %s (together %.1f%%)\n", s.pca_explained.size(),
          pca.c_str(), 100 * cum);
  return o;
}

namespace {
std::string composed_note(size_t n) {
  return n ? ", multi-token words composed: " + std::to_string(n) : "";
}
}  // namespace

std::string to_text(const ModelHandle&, const embedscope::AnalogyResult& r) {
  std::string s;
  for (auto& sec : r.sections) {
    size_t n = sec.correct + sec.incorrect;
    appendf(s, "%-32s %6.2f%%  (%zu/%zu)\n", sec.name.c_str(),
            n ? 100.0 * double(sec.correct) / double(n) : 0.0, sec.correct, n);
  }
  appendf(s, "questions %zu, out of vocabulary %zu (%.1f%%)%s\n", r.n_questions, r.n_oov,
          r.oov_ratio, composed_note(r.n_composed).c_str());
  return s;
}

std::string to_text(const ModelHandle&, const PairsResult& r) {
  std::string s;
  appendf(s, "Spearman %.4f  Pearson %.4f  pairs %zu  out of vocabulary %zu (%.1f%%)%s\n",
          r.spearman, r.pearson, r.n_pairs, r.n_oov, r.oov_ratio,
          composed_note(r.n_composed).c_str());
  return s;
}

std::string to_text(const CompareReport& rep) {
  const CompareResult& r = rep.result;
  std::string s;
  appendf(s, "%s vs %s: %zu shared rows (matched by %s)\n", rep.a.c_str(), rep.b.c_str(),
          r.n_shared, r.matched_by.c_str());
  appendf(s, "overlap@%zu: %.3f mean over %zu words\n", rep.options.k, r.mean_overlap,
          r.overlaps.size());
  if (!r.aligned) {
    appendf(s, "dims differ (%zu vs %zu): no Procrustes alignment\n", rep.dim_a, rep.dim_b);
    return s;
  }
  appendf(s, "Procrustes-aligned drift (1 - cos): mean %.4f, median %.4f\n", r.mean_drift,
          r.median_drift);
  s += "moved most:\n";
  for (auto& w : r.moved) appendf(s, "  %-20s %.4f\n", p(w.word).c_str(), w.drift);
  return s;
}

std::string to_text(const ProjectionResult& r, const std::string& out) {
  const Projection& pr = r.projection;
  std::string s;
  std::string cached = r.from_cache ? " (from the cache " + r.cache_path + ")" : "";
  appendf(s, "%s: %s of %zu rows to %zu dims in %.2f s%s -> %s\n", r.model.c_str(),
          r.method.c_str(), pr.n_rows, pr.dims, r.seconds, cached.c_str(), out.c_str());
  if (!pr.variance.empty() && pr.total_variance > 0) {
    s += "explained variance:";
    for (double v : pr.variance) appendf(s, " %.2f%%", 100 * v / pr.total_variance);
    s += "\n";
  }
  return s;
}

std::string to_text(const ModelHandle& h, const LookupResult& r) {
  std::string s;
  for (size_t i = 0; i < r.ids.size(); ++i) {
    appendf(s, "%d\t%s\t", r.ids[i], p(h.words().raw_token(r.ids[i])).c_str());
    const std::vector<float>& v = r.vectors[i];
    for (size_t j = 0; j < v.size(); ++j) appendf(s, j ? " %.9g" : "%.9g", double(v[j]));
    s += "\n";
  }
  return s;
}

}  // namespace embedscope::api
