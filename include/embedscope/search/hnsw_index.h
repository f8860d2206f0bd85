// HNSW approximate nearest-neighbour index (hnswlib, Debian libhnswlib-dev) over unit-normalised
// rows, for cosine search on large vocabularies, saved with the content hash of the table it
// was built from.
//
// File layout (little-endian):
//   bytes 0..7    magic "ESHNSW01"
//   bytes 8..15   u64 header_len (at most 64 KiB and at most the bytes that remain)
//   header_len    JSON: {"model_hash": "<16 hex>", "rows", "dim", "M", "ef_construction",
//                 "metric": "cosine", "blob_bytes", "blob_hash": "<16 hex>"}
//   blob_bytes    hnswlib's own serialisation (HierarchicalNSW::saveIndex)
// The blob must exactly fill the rest of the file and match blob_hash, and since hnswlib trusts
// its input, every field of the blob is then validated as untrusted before hnswlib sees it
// (layout and checks in src/search/hnsw_index.cpp): a corrupt or hostile file is an
// Error(kCorrupt) naming the byte offset, never a crash (fuzz/fuzz_hnsw_index.cpp). Files are
// written atomically (AtomicFile).
//
// Rows indexed: all non-zero rows, or those an allow mask selects. Trained tables with per-row
// counts should index only the rows training touched (trained_rows() in filters.h: count >=
// min_count; `embedscope index build` does): the others keep their random initial vectors,
// noise that only costs graph quality.
//
// Defaults: M 16, ef_construction 200, search ef 64. On a real trained table (skip-gram over
// GPT-2 ids, 768-dim, its 25,357 trained rows; bench/RESULTS.md "## search" has the curve) they
// give recall@10 >= 0.98 from ef 32 at many times the speed of exact search. Random Gaussian
// data (no neighbourhood structure) needs a far larger ef for the same recall.
//
// Scores are cosines (1 - hnswlib's inner-product distance over unit rows). Distances use the
// Highway kernels of src/simd through our own hnswlib space (hnswlib's InnerProductSpace picks
// SIMD through static function pointers, a data race across threads).
//
// Thread-safety: one search() at a time per index (it sets hnswlib's ef); build is multi-threaded
// (then not bit-reproducible: insertion order varies; n_threads = 1 is).
//
//   HnswIndex ix = HnswIndex::build(table, {.M = 16, .ef_construction = 200, .n_threads = 2});
//   ix.save("gpt2.hnsw", table_content_hash(table));
//   HnswIndex ix2 = HnswIndex::load("gpt2.hnsw", table_content_hash(table));
//   auto nn = ix2.search(q, {.k = 10, .ef = 64});
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "embedscope/core/embedding_table.h"
#include "embedscope/search/knn.h"

namespace embedscope {

// 64-bit hash of a table's shape, dtype and bytes (not cryptographic: detects a changed model).
uint64_t table_content_hash(const EmbeddingTable& table);
std::string hash_hex(uint64_t h);  // 16 lower-case hex digits

// 64-bit hash of a byte string (the index file's blob_hash; mix_bytes of table_content_hash).
uint64_t bytes_hash(std::span<const std::byte> bytes);

struct HnswBuildOptions {
  size_t M = 16;
  size_t ef_construction = 200;
  size_t n_threads = 1;  // tasks on process_pool() (0 = its size); 1 = bit-reproducible
  size_t n_rows = 0;     // 0: all rows; else rows [0, n_rows)
  const std::vector<uint8_t>* allow = nullptr;  // if set: index row i iff (*allow)[i] != 0
  uint64_t seed = 100;
};

struct HnswSearchOptions {
  size_t k = 10;
  size_t ef = 64;  // raised to k when smaller
  std::vector<TokenId> exclude;
  const std::vector<uint8_t>* allow = nullptr;  // applied to the ef best candidates
};

class HnswIndex {
 public:
  // Error(kInvalidArgument) for M < 2, ef_construction < 1, an empty table or an empty
  // selection.
  static HnswIndex build(const EmbeddingTable& table, const HnswBuildOptions& options);
  // Error(kIo) on write failure; the destination is untouched then.
  void save(const std::string& path, uint64_t model_hash) const;
  // Error(kNotFound) missing file, Error(kCorrupt) naming the field / offset for a bad file,
  // Error(kInvalidArgument) when model_hash differs from the one stored ("model changed").
  static HnswIndex load(const std::string& path, uint64_t model_hash);
  // The same from a whole file's bytes; `path` only names it in errors.
  static HnswIndex load_bytes(std::span<const std::byte> file, uint64_t model_hash,
                              const std::string& path);

  // Sorted by score descending, ties by id; fewer than k when exclusions/filters remove
  // candidates from the ef best. Error(kInvalidArgument) for a wrong query size or k == 0.
  std::vector<Neighbor> search(std::span<const float> query, const HnswSearchOptions& o) const;

  size_t n_rows() const;     // rows of the table it was built for
  size_t n_indexed() const;  // rows in the graph (allowed, non-zero)
  size_t dim() const;
  size_t M() const;
  size_t ef_construction() const;
  uint64_t model_hash() const;  // as loaded (0 for a freshly built index)

  HnswIndex(HnswIndex&&) noexcept;
  HnswIndex& operator=(HnswIndex&&) noexcept;
  ~HnswIndex();

 private:
  HnswIndex();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace embedscope
