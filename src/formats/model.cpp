// Minimal model resolution: plain embedding files only. The model-checkpoint work (Hugging Face
// folders, hub cache, PyTorch, GGUF) extends this file.
#include "embedscope/formats/model.h"

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"

namespace embedscope {

Model load_model(const std::string& ref, const ModelOptions& options) {
  if (!file_exists(ref)) throw Error(ErrorCode::kNotFound, ref + ": no such file");
  Model m;
  m.ref = ref;
  m.path = ref;
  LoadOptions lo;
  lo.tensor = options.tensor;
  lo.strict_utf8 = options.strict_utf8;
  m.emb = load_embeddings(ref, lo);
  m.tensor = m.emb.tensor;
  m.n_search_rows = m.emb.table.n_rows();
  return m;
}

}  // namespace embedscope
