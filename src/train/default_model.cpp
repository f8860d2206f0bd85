// Placeholder until the trainer lands: reports that the default model is not available yet.
#include "embedscope/train/default_model.h"

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"

namespace embedscope {

std::string default_model_dir() { return embedscope_home() + "/default"; }

std::string ensure_default_model(const ProgressFn&) {
  std::string p = default_model_dir() + "/model.safetensors";
  if (file_exists(p)) return p;
  throw Error(ErrorCode::kNotFound, "no default model at " + p + " (pass --model FILE)");
}

}  // namespace embedscope
