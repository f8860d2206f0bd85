// Bounded top-k heap used by every search path, and the deterministic merge of per-thread heaps.
//
// Order is neighbor_before (score descending, then smaller id), a total order on (score, id),
// so the k best of a set are unique and the merged result never depends on how rows were
// split between threads.
//
// Hot loops test `s >= threshold()` first: one compare per row, false for NaN (so rows whose
// score is undefined fall out without a branch of their own), -inf until the heap is full,
// then the worst kept score. Only the rare rows that pass go through would_accept()/push().
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "embedscope/search/knn.h"

namespace embedscope {

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, 1 << 16)); }
  // A copy keeps the reservation (a std::vector copy does not): `std::vector<TopK>(T, TopK(k))`
  // reserves every heap in the caller's thread, and a pool worker then never allocates inside a
  // scan. A worker's first malloc creates its glibc arena, an mmap that waits for the mmap lock
  // while another thread populates the table's pages.
  TopK(const TopK& o) : k_(o.k_), thr_(o.thr_) {
    heap_.reserve(o.heap_.capacity());
    heap_.assign(o.heap_.begin(), o.heap_.end());
  }
  TopK(TopK&&) noexcept = default;
  TopK& operator=(const TopK&) = default;
  TopK& operator=(TopK&&) noexcept = default;
  ~TopK() = default;
  // Rows scoring below this can never enter (NaN compares false against it too).
  float threshold() const { return thr_; }
  // Full pre-check: finite and not below the threshold.
  bool would_accept(float s) const { return std::isfinite(s) && s >= thr_; }
  void push(TokenId id, float s) {
    Neighbor n{id, s};
    if (heap_.size() < k_) {
      heap_.push_back(n);
      std::push_heap(heap_.begin(), heap_.end(), neighbor_before);  // front = worst
      if (heap_.size() == k_) thr_ = heap_.front().score;
      return;
    }
    if (!neighbor_before(n, heap_.front())) return;
    std::pop_heap(heap_.begin(), heap_.end(), neighbor_before);
    heap_.back() = n;
    std::push_heap(heap_.begin(), heap_.end(), neighbor_before);
    thr_ = heap_.front().score;
  }
  std::vector<Neighbor>& items() { return heap_; }

 private:
  size_t k_;
  float thr_ = -std::numeric_limits<float>::infinity();
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
