#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/search/knn.h"

namespace embedscope {

std::vector<Neighbor> knn_reference(const EmbeddingTable& table, std::span<const float> query,
                                    const KnnOptions& o) {
  if (o.k == 0) throw Error(ErrorCode::kInvalidArgument, "k must be at least 1");
  if (query.size() != table.dim())
    throw Error(ErrorCode::kInvalidArgument, "query has " + std::to_string(query.size()) +
                                                 " values, table dim is " +
                                                 std::to_string(table.dim()));
  size_t n = table.n_rows();
  if (o.n_rows_limit > 0) n = std::min(n, o.n_rows_limit);
  std::vector<uint8_t> excluded(n, 0);
  for (TokenId id : o.exclude)
    if (id >= 0 && size_t(id) < n) excluded[size_t(id)] = 1;
  double qn = 0;
  for (float v : query) qn += double(v) * v;
  qn = std::sqrt(qn);
  std::vector<Neighbor> all;
  std::vector<float> row(table.dim());
  for (size_t i = 0; i < n; ++i) {
    if (excluded[i]) continue;
    if (o.allow && (i >= o.allow->size() || !(*o.allow)[i])) continue;
    table.row_f32(i, row.data());
    double dot = 0, rn = 0, l2 = 0;
    for (size_t j = 0; j < row.size(); ++j) {
      dot += double(query[j]) * row[j];
      rn += double(row[j]) * row[j];
      double d = double(query[j]) - row[j];
      l2 += d * d;
    }
    double s = std::numeric_limits<double>::quiet_NaN();  // an unknown metric matches nothing
    switch (o.metric) {
      case Metric::kCosine:
        if (rn == 0 || qn == 0) continue;
        s = dot / (qn * std::sqrt(rn));
        break;
      case Metric::kDot:
        s = dot;
        break;
      case Metric::kL2:
        s = -std::sqrt(l2);
        break;
    }
    if (!std::isfinite(s)) continue;
    all.push_back({TokenId(i), float(s)});
  }
  size_t k = std::min(o.k, all.size());
  std::partial_sort(all.begin(), all.begin() + k, all.end(), neighbor_before);
  all.resize(k);
  return all;
}

}  // namespace embedscope
