// word2vec training checkpoints: one file, written atomically (AtomicFile: temp file in the same
// folder, fsync, rename, fsync folder), verified by a checksum when loaded. Private to src/train.
//
// Layout (little-endian):
//   "ESW2VCK1"                8 bytes magic
//   u64 header_len            then header_len bytes of JSON: {"fingerprint": {...}, "state": {...}}
//   f32 syn0    [n_rows x dim]
//   f32 syn1neg [n_rows x dim]      when negative > 0
//   f32 syn1    [n_inner x dim]     when hs
//   u64 updates [n_rows]            when row statistics are on
//   u64 checksum                    FNV-1a (64-bit words) of every byte before it
//   "ESW2VEND"                8 bytes footer
// The corpus id stream is not stored: resume re-scans the corpus and the fingerprint (options,
// vocabulary hash, stream length) must match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "embedscope/core/vocabulary.h"
#include "embedscope/train/word2vec.h"

namespace embedscope {

struct CheckpointFingerprint {
  std::string json;  // canonical JSON of everything a resumed run must share
};

struct CheckpointState {
  uint64_t epoch = 0, next_chunk = 0, words_done = 0;
  double epoch_loss = 0;
  uint64_t epoch_loss_n = 0;
  double last_epoch_loss = 0;
};

struct CheckpointArrays {
  size_t dim, stride, n_rows;
  float* syn0;
  float* syn1neg;   // may be null
  size_t n_inner;   // rows of syn1
  float* syn1;      // may be null
  uint64_t* updates;  // may be null
};

CheckpointFingerprint make_fingerprint(const Word2VecOptions& o, float lr, const Vocabulary& vocab,
                                       uint64_t stream_len);
// Error(kIo) naming the path (the previous checkpoint stays intact).
void save_checkpoint(const std::string& path, const CheckpointFingerprint& fp,
                     const CheckpointState& st, const CheckpointArrays& a);
// Fills the arrays; Error(kCorrupt) for a damaged file (naming the offset / field),
// Error(kInvalidArgument) when it belongs to another corpus or other settings.
CheckpointState load_checkpoint(const std::string& path, const CheckpointFingerprint& fp,
                                 const CheckpointArrays& a);

}  // namespace embedscope
