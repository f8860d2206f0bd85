// api::convert and the lookup's .npy output (api/lookup.h).
#include "embedscope/api/lookup.h"
#include "embedscope/formats/embeddings_file.h"
#include "embedscope/formats/model.h"

namespace embedscope::api {

void save_rows_npy(const std::string& path, const LookupResult& r, size_t dim) {
  std::vector<float> data;
  data.reserve(r.ids.size() * dim);
  for (const auto& v : r.vectors) data.insert(data.end(), v.begin(), v.end());
  SaveOptions so;
  so.format = FileFormat::kNpy;
  save_embeddings(path, EmbeddingTable::from_f32(r.ids.size(), dim, std::move(data)), nullptr, so);
}

ConvertResult convert(const ConvertRequest& r) {
  ModelOptions mo;
  mo.tensor = r.tensor;
  Model m = load_model(r.in, mo);
  SaveOptions so;
  if (!r.to.empty()) so.format = parse_format_name(r.to);
  save_embeddings(r.out, m.emb.table, m.emb.vocab.empty() ? nullptr : &m.emb.vocab, so);
  return {m.emb.table.n_rows(), m.emb.table.dim()};
}

}  // namespace embedscope::api
