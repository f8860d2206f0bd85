// word2vec training checkpoints: writing, and loading into a run's arrays. The file layout and
// its validation are documented in the public header embedscope/train/w2v_checkpoint.h.
// Private to src/train.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "embedscope/core/vocabulary.h"
#include "embedscope/train/w2v_checkpoint.h"
#include "embedscope/train/word2vec.h"

namespace embedscope {

// Stream positions per work item; a checkpoint's next_chunk counts these.
inline constexpr uint64_t kCheckpointChunk = 1024;

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
  float* syn1neg;     // may be null
  size_t n_inner;     // rows of syn1
  float* syn1;        // may be null
  uint64_t* updates;  // may be null
  // syn1neg's layout in memory (W2vShared::out_slot; null: row r at r). The file always holds
  // syn1neg in vocabulary order, so a run may resume on another number of threads.
  const uint32_t* syn1neg_slot = nullptr;
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
