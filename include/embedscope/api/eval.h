// api::eval: gensim-compatible analogy and word-pair evaluation (analysis/evaluate.h) on a
// ModelHandle, with the handle's tokenizer (a model trained on token ids is evaluated through
// its recorded tokenizer, multi-token words composed), and the JSON documents of
// `embedscope eval ... --json`.
//
// A word-level evaluation (no tokenizer) that finds more than kOovWarnPercent of its words out
// of vocabulary returns a warning (EvalWarning) suggesting --tokenizer; front ends show it.
//
//   auto h = ModelHandle::open("vectors.bin");
//   PairsResult r = api::eval_pairs(*h, "wordsim353.tsv", {});
#pragma once

#include <string>

#include "embedscope/analysis/evaluate.h"
#include "embedscope/api/common.h"

namespace embedscope::api {

inline constexpr double kOovWarnPercent = 20.0;

embedscope::AnalogyResult eval_analogies(const ModelHandle& h, const std::string& path,
                                         const EvalOptions& o);
PairsResult eval_pairs(const ModelHandle& h, const std::string& path, const EvalOptions& o);

// "" or a one-line warning when the out-of-vocabulary share exceeds kOovWarnPercent and the
// model has no tokenizer.
std::string oov_warning(const ModelHandle& h, double oov_percent);

json to_json(const ModelHandle& h, const std::string& path, const embedscope::AnalogyResult& r);
json to_json(const ModelHandle& h, const std::string& path, const PairsResult& r);

}  // namespace embedscope::api
