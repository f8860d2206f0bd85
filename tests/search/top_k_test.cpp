// TopK's copies: `std::vector<TopK>(T, TopK(k))` builds one heap per thread in the caller, and
// a pool worker must then never allocate inside a scan (search/top_k.h).
#include "search/top_k.h"

#include <gtest/gtest.h>

#include <vector>

using namespace embedscope;

TEST(TopK, CopiesKeepTheReservationAndTheContents) {
  std::vector<TopK> heaps(3, TopK(10));
  for (TopK& h : heaps) EXPECT_GE(h.items().capacity(), 10u);
  TopK a(4);
  for (int i = 0; i < 9; ++i) a.push(i, float(i % 5));
  TopK b(a);
  EXPECT_GE(b.items().capacity(), 4u);
  EXPECT_EQ(b.threshold(), a.threshold());
  std::vector<TopK> one{b}, other{a};
  EXPECT_EQ(merge_top_k(one, 4), merge_top_k(other, 4));
  const auto best = merge_top_k(one, 4);
  ASSERT_EQ(best.size(), 4u);  // ids 0-8 scored i % 5: 4 (4), 3 (3, 8), then 2 (2 before 7)
  EXPECT_EQ(best[0].id, 4);
  EXPECT_EQ(best[0].score, 4.0f);
  EXPECT_EQ(best[1].id, 3);
  EXPECT_EQ(best[2].id, 8);
  EXPECT_EQ(best[3].id, 2);
}
