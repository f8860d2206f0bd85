// The embedded default model: a skip-gram table over GPT-2 token ids trained on the corpus
// that scripts/setup.sh fetches, cached under the embedscope home.
//
// Any command without --model uses it. The first call trains it (a few minutes, progress
// reported through `progress`) and writes it atomically; later calls return the cached path.
//
//   std::string path = ensure_default_model(progress_fn);   // .../default/model.safetensors
#pragma once

#include <string>

#include "embedscope/core/progress.h"

namespace embedscope {

// Folder of the default model (under embedscope_home()).
std::string default_model_dir();
// Path of the trained default model, training it first when absent. Throws Error(kNotFound)
// naming scripts/setup.sh when the corpus or the GPT-2 vocabulary has not been fetched.
std::string ensure_default_model(const ProgressFn& progress);

}  // namespace embedscope
