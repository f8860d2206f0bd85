// Bounded top-k heap used by every search path, and the deterministic merge of per-thread heaps.
//
// Order is neighbor_before (score descending, then smaller id), a total order on (score, id),
// so the k best of a set are unique and the merged result never depends on how rows were
// split between threads. NaN scores are rejected by would_accept().
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "embedscope/search/knn.h"

namespace embedscope {

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, 1 << 16)); }
  // Cheap pre-check before the (rarer) eligibility test; false for NaN.
  bool would_accept(float s) const {
    if (!(s == s) || std::isinf(s)) return false;
    return heap_.size() < k_ || s >= heap_.front().score;
  }
  void push(TokenId id, float s) {
    Neighbor n{id, s};
    if (heap_.size() < k_) {
      heap_.push_back(n);
      std::push_heap(heap_.begin(), heap_.end(), neighbor_before);  // front = worst
      return;
    }
    if (!neighbor_before(n, heap_.front())) return;
    std::pop_heap(heap_.begin(), heap_.end(), neighbor_before);
    heap_.back() = n;
    std::push_heap(heap_.begin(), heap_.end(), neighbor_before);
  }
  std::vector<Neighbor>& items() { return heap_; }

 private:
  size_t k_;
  std::vector<Neighbor> heap_;
};

inline std::vector<Neighbor> merge_top_k(std::vector<TopK>& heaps, size_t k) {
  std::vector<Neighbor> all;
  for (TopK& h : heaps) all.insert(all.end(), h.items().begin(), h.items().end());
  std::sort(all.begin(), all.end(), neighbor_before);
  if (all.size() > k) all.resize(k);
  return all;
}

}  // namespace embedscope
