// Negative-sampling tables: the alias table's probabilities against count^0.75 computed here, and
// the per-thread split's invariants (disjoint, complete, equal mass) and refusals.
#include "train/w2v_negatives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace embedscope;

namespace {

// Zipf-like counts with a few rows that are not trained and one trained row with count 0.
struct Vocab {
  std::vector<uint64_t> counts;
  std::vector<uint8_t> trained;
};
Vocab zipf(size_t n) {
  Vocab v;
  for (size_t i = 0; i < n; ++i) {
    v.counts.push_back(1000000 / (i + 1) + 3);
    v.trained.push_back(i % 97 == 5 ? 0 : 1);
  }
  v.counts[n / 2] = 0;
  return v;
}

// The probability of each row under the alias table: entry k is drawn with probability 1/n,
// then yields e.row with threshold / 2^32, else e.other.
std::map<uint32_t, double> alias_probabilities(const std::vector<W2vAlias>& t) {
  std::map<uint32_t, double> p;
  for (const W2vAlias& e : t) {
    const double keep = double(e.threshold) / 4294967296.0;
    p[e.row] += keep / double(t.size());
    p[e.other] += (1 - keep) / double(t.size());
  }
  return p;
}

}  // namespace

TEST(W2vNegatives, AliasTableGivesCountToThePower075) {
  const Vocab v = zipf(3000);
  std::vector<uint32_t> rows;
  for (uint32_t i = 0; i < 3000; i += 3) rows.push_back(i);  // any subset works
  double total = 0;
  for (uint32_t r : rows) total += std::pow(double(v.counts[r]), 0.75);
  const auto p = alias_probabilities(alias_table(v.counts, rows));
  for (uint32_t r : rows) {
    const double want = std::pow(double(v.counts[r]), 0.75) / total;
    const auto it = p.find(r);
    ASSERT_NE(it, p.end()) << "row " << r;
    EXPECT_NEAR(it->second, want, 1e-9 + want * 1e-6) << "row " << r;
  }
  for (const auto& [row, prob] : p)
    if (prob > 1e-12) EXPECT_EQ(row % 3, 0u) << "row " << row << " is not in the list";
}

TEST(W2vNegatives, SplitIsDisjointCompleteAndBalanced) {
  const Vocab v = zipf(20000);
  for (size_t parts : {2, 3, 4}) {
    const auto sets = partition_for_threads(v.counts, v.trained, parts);
    ASSERT_EQ(sets.size(), parts);
    std::set<uint32_t> seen;
    double total = 0;
    for (size_t i = 0; i < v.counts.size(); ++i)
      if (v.trained[i] && v.counts[i] > 0) total += std::pow(double(v.counts[i]), 0.75);
    for (const auto& s : sets) {
      double mass = 0;
      for (uint32_t r : s) {
        EXPECT_TRUE(seen.insert(r).second) << "row " << r << " in two sets";
        EXPECT_TRUE(v.trained[r] && v.counts[r] > 0) << "row " << r;
        mass += std::pow(double(v.counts[r]), 0.75);
      }
      EXPECT_NEAR(mass * double(parts) / total, 1.0, 0.01) << parts << " parts";
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    }
    size_t want = 0;
    for (size_t i = 0; i < v.counts.size(); ++i) want += v.trained[i] && v.counts[i] > 0;
    EXPECT_EQ(seen.size(), want);
    // Each set's own table draws its rows at count^0.75 / the set's mass.
    const auto p = alias_probabilities(alias_table(v.counts, sets[0]));
    double set_mass = 0;
    for (uint32_t r : sets[0]) set_mass += std::pow(double(v.counts[r]), 0.75);
    EXPECT_NEAR(p.at(sets[0].front()), std::pow(double(v.counts[sets[0].front()]), 0.75) / set_mass,
                1e-9);
  }
}

TEST(W2vNegatives, SplitRefusedWhenItCannotBeBalanced) {
  const Vocab v = zipf(20000);
  EXPECT_TRUE(partition_for_threads(v.counts, v.trained, 1).empty());  // one thread: whole table
  EXPECT_TRUE(partition_for_threads(v.counts, v.trained, 0).empty());
  // One word holding most of the mass: no split gives the other set half.
  std::vector<uint64_t> heavy(100, 1);
  heavy[7] = 1000000000;
  EXPECT_TRUE(partition_for_threads(heavy, std::vector<uint8_t>(100, 1), 2).empty());
  // Fewer than kMinRowsPerSet rows a set.
  const size_t n = 2 * kMinRowsPerSet;
  EXPECT_TRUE(
      partition_for_threads(std::vector<uint64_t>(n - 1, 10), std::vector<uint8_t>(n - 1, 1), 2)
          .empty());
  EXPECT_EQ(
      partition_for_threads(std::vector<uint64_t>(n, 10), std::vector<uint8_t>(n, 1), 2).size(),
      2u);
  // Nothing trained.
  EXPECT_TRUE(partition_for_threads(v.counts, std::vector<uint8_t>(v.counts.size(), 0), 2).empty());
}

TEST(W2vNegatives, OutputSlotsPutEachSetInOneBlock) {
  const std::vector<std::vector<uint32_t>> sets{{1, 4, 6}, {0, 2}};
  const std::vector<uint32_t> slot = output_slots(sets, 8);
  // Set 0 in slots 0-2, set 1 in 3-4, then rows 3, 5, 7 (in no set) in row order.
  EXPECT_EQ(slot, (std::vector<uint32_t>{3, 0, 4, 5, 1, 6, 2, 7}));
  EXPECT_TRUE(output_slots({}, 8).empty());
}

TEST(W2vNegatives, OneTableForOneThreadOneBlockPerThreadForTwo) {
  const Vocab v = zipf(20000);
  const NegativeSampling one = negative_sampling(v.counts, v.trained, 1);
  ASSERT_EQ(one.tables.size(), 1u);
  EXPECT_TRUE(one.slot.empty());
  // One thread: every trained row at count^0.75 over all of them (untrained rows never drawn).
  double total = 0;
  for (size_t r = 0; r < v.counts.size(); ++r)
    if (v.trained[r]) total += std::pow(double(v.counts[r]), 0.75);
  const auto p1 = alias_probabilities(one.tables[0]);
  for (size_t r = 0; r < v.counts.size(); r += 7) {
    const double want = v.trained[r] ? std::pow(double(v.counts[r]), 0.75) / total : 0.0;
    const auto it = p1.find(uint32_t(r));
    EXPECT_NEAR(it == p1.end() ? 0.0 : it->second, want, 1e-9 + want * 1e-6) << "row " << r;
  }

  const NegativeSampling two = negative_sampling(v.counts, v.trained, 2);
  ASSERT_EQ(two.tables.size(), 2u);
  ASSERT_EQ(two.slot.size(), v.counts.size());
  std::vector<uint32_t> row_of(v.counts.size(), 0xFFFFFFFFu);
  for (size_t r = 0; r < two.slot.size(); ++r) {
    ASSERT_LT(two.slot[r], row_of.size());
    EXPECT_EQ(row_of[two.slot[r]], 0xFFFFFFFFu) << "slot " << two.slot[r] << " given twice";
    row_of[two.slot[r]] = uint32_t(r);
  }
  // Each table draws slots of one contiguous block only, the blocks do not overlap, and mapped
  // back to rows the two tables average to count^0.75 over all trained rows with count > 0.
  double total_pos = 0;
  for (size_t r = 0; r < v.counts.size(); ++r)
    if (v.trained[r] && v.counts[r] > 0) total_pos += std::pow(double(v.counts[r]), 0.75);
  std::map<uint32_t, double> mixed;
  uint32_t prev_hi = 0;
  for (size_t k = 0; k < 2; ++k) {
    const auto p = alias_probabilities(two.tables[k]);
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
    size_t drawn = 0;
    for (const auto& [s, prob] : p)
      if (prob > 1e-12)
        lo = std::min(lo, s), hi = std::max(hi, s), ++drawn, mixed[row_of[s]] += prob / 2;
    EXPECT_EQ(size_t(hi - lo + 1), drawn) << "table " << k << " is not one block";
    if (k == 1) EXPECT_GT(lo, prev_hi);
    prev_hi = hi;
  }
  for (size_t r = 0; r < v.counts.size(); r += 7) {
    const double want =
        v.trained[r] && v.counts[r] > 0 ? std::pow(double(v.counts[r]), 0.75) / total_pos : 0.0;
    const auto it = mixed.find(uint32_t(r));
    EXPECT_NEAR(it == mixed.end() ? 0.0 : it->second, want, 1e-9 + want * 0.011) << "row " << r;
  }
}
