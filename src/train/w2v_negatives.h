// Negative sampling for the word2vec trainer: the count^0.75 tables, and with several threads one
// table per thread over its own rows, laid out in its own block of the output matrix. Private to
// src/train.
//
// alias_table: the count^0.75 distribution (word2vec.c's InitUnigramTable, gensim's cum_table)
// over a list of rows, as a Walker/Vose alias table: one entry per row, one random index plus one
// coin per draw (w2v_kernels.cpp, DrawNegative), exact to 32-bit thresholds. word2vec.c fills a
// table of 1e8 ints (400 MB), gensim bisects a cumulative table; this one is 12 bytes a row.
//
// Negatives by thread. Most output-row writes are negatives (skip-gram with fresh negatives:
// ~30 of the ~36 output rows written per center word), and with Hogwild both threads write every
// row. When the host places the two vCPUs far apart every cache line a thread takes from the
// other core is slow, and sharing the negatives' rows is what makes two threads no faster than
// one. So:
//   - partition_for_threads splits the trained rows into one set per thread, of equal count^0.75
//     mass; in epoch e chunk c (the trainer's unit of work) draws its negatives from set
//     (c + e) mod threads, renormalised within the set, and thread t trains the chunks of class t
//     (word2vec.cpp; it helps with other classes only when its own run out), so each thread
//     writes its own set. The epoch term gives every stretch of text the other set next epoch
//     (a set fixed for the whole run costs analogy accuracy);
//   - output_slots lays the output matrix out set by set: each set's rows in one contiguous
//     block (interleaved rows do not help: the cache's adjacent-line and stream prefetchers pull
//     the other set's neighbouring lines across).
// Every chunk class holds the same share of the corpus whoever trains it, so each word is still
// drawn at its count^0.75 rate over any `threads` consecutive chunks: the expected gradient is
// word2vec's, but the five negatives of one pair come from one set, and one stretch of text
// sees one set per epoch. Equal mass is what keeps the
// rates right, so the split is refused (one table for all) unless every set is within 1% of
// 1/parts of the mass. It is refused too under kMinRowsPerSet rows a set: in a tiny vocabulary
// every row is drawn hundreds of times a chunk and the alternation between sets shows, and such
// a corpus trains in moments anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/w2v_kernels.h"

namespace embedscope {

inline constexpr size_t kMinRowsPerSet = 1024;

// Alias table over `rows` (indices into counts) with weights counts[row]^0.75. Deterministic
// (double precision, fixed stack order): a seed gives the same negatives on every machine.
// rows must be non-empty.
std::vector<W2vAlias> alias_table(const std::vector<uint64_t>& counts,
                                  const std::vector<uint32_t>& rows);

// Splits the rows r with trained[r] and counts[r] > 0 into `parts` disjoint sets of equal
// count^0.75 mass (heaviest rows first, each to the lightest set; each set sorted), or returns
// an empty list when parts < 2 or the sets cannot be balanced (see above).
std::vector<std::vector<uint32_t>> partition_for_threads(const std::vector<uint64_t>& counts,
                                                         const std::vector<uint8_t>& trained,
                                                         size_t parts);

// The output matrix's layout for `sets`: slot[r] is the row of the output matrix that holds
// vocabulary row r. Set k's rows take the slots after set k-1's, in set order; rows in no set
// follow, in row order. A permutation of [0, n_rows); empty when sets is empty (slot r = r).
std::vector<uint32_t> output_slots(const std::vector<std::vector<uint32_t>>& sets, size_t n_rows);

// What the trainer draws negatives from: one table, or one per thread (chunk c of epoch e uses
// tables[(c + e) % tables.size()]). Entries name output-matrix slots (W2vShared::out_slot), not
// vocabulary rows, so a draw indexes the matrix directly.
struct NegativeSampling {
  std::vector<std::vector<W2vAlias>> tables;
  std::vector<uint32_t> slot;  // output_slots of the sets; empty with one table
};

// One table over every trained row when threads < 2 or the split is refused; else one table per
// set of partition_for_threads and its layout. counts.size() == trained.size() == n_rows.
NegativeSampling negative_sampling(const std::vector<uint64_t>& counts,
                                   const std::vector<uint8_t>& trained, size_t threads);

}  // namespace embedscope
