// Negative-sampling tables; see w2v_negatives.h.
#include "train/w2v_negatives.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace embedscope {

std::vector<W2vAlias> alias_table(const std::vector<uint64_t>& counts,
                                  const std::vector<uint32_t>& rows) {
  const size_t n = rows.size();
  std::vector<double> p(n);
  double total = 0;
  for (size_t k = 0; k < n; ++k) total += p[k] = std::pow(double(counts[rows[k]]), 0.75);
  std::vector<W2vAlias> t(n);
  std::vector<uint32_t> small, large;
  for (size_t k = 0; k < n; ++k) {
    p[k] = total > 0 ? p[k] * double(n) / total : 1.0;
    (p[k] < 1.0 ? small : large).push_back(uint32_t(k));
  }
  for (size_t k = 0; k < n; ++k) t[k] = {uint32_t(0xFFFFFFFFu), rows[k], rows[k]};
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back(), l = large.back();
    small.pop_back();
    t[s].threshold = uint32_t(std::min(p[s] * 4294967296.0, 4294967295.0));
    t[s].other = rows[l];
    p[l] -= 1.0 - p[s];
    if (p[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Entries left on either stack have probability 1 up to rounding: they keep their own row.
  return t;
}

std::vector<std::vector<uint32_t>> partition_for_threads(const std::vector<uint64_t>& counts,
                                                         const std::vector<uint8_t>& trained,
                                                         size_t parts) {
  std::vector<std::pair<double, uint32_t>> w;
  double total = 0;
  for (size_t i = 0; i < counts.size(); ++i)
    if (trained[i] && counts[i] > 0) {
      w.emplace_back(std::pow(double(counts[i]), 0.75), uint32_t(i));
      total += w.back().first;
    }
  if (parts < 2 || w.size() < parts * kMinRowsPerSet || !(total > 0)) return {};
  std::sort(w.begin(), w.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::vector<uint32_t>> sets(parts);
  std::vector<double> mass(parts, 0);
  for (const auto& [m, row] : w) {
    const size_t k = size_t(std::min_element(mass.begin(), mass.end()) - mass.begin());
    sets[k].push_back(row);
    mass[k] += m;
  }
  for (double m : mass)
    if (std::abs(m * double(parts) / total - 1.0) > 0.01) return {};
  for (auto& s : sets) std::sort(s.begin(), s.end());
  return sets;
}

std::vector<uint32_t> output_slots(const std::vector<std::vector<uint32_t>>& sets, size_t n_rows) {
  if (sets.empty()) return {};
  constexpr uint32_t kUnset = 0xFFFFFFFFu;
  std::vector<uint32_t> slot(n_rows, kUnset);
  uint32_t next = 0;
  for (const auto& set : sets)
    for (uint32_t r : set) slot[r] = next++;
  for (uint32_t& s : slot)
    if (s == kUnset) s = next++;
  return slot;
}

NegativeSampling negative_sampling(const std::vector<uint64_t>& counts,
                                   const std::vector<uint8_t>& trained, size_t threads) {
  NegativeSampling ns;
  const auto sets = partition_for_threads(counts, trained, threads);
  if (sets.empty()) {
    std::vector<uint32_t> rows;
    for (size_t i = 0; i < counts.size(); ++i)
      if (trained[i]) rows.push_back(uint32_t(i));
    ns.tables.push_back(alias_table(counts, rows));
    return ns;
  }
  ns.slot = output_slots(sets, counts.size());
  for (const auto& set : sets) {
    ns.tables.push_back(alias_table(counts, set));
    for (W2vAlias& e : ns.tables.back()) e.row = ns.slot[e.row], e.other = ns.slot[e.other];
  }
  return ns;
}

}  // namespace embedscope
