// word2vec training checkpoints: what `train --checkpoint-every N` writes and `--resume` reads.
// A checkpoint is ONE file (no manifest: the weights, the training state and the identity of the
// run travel together), written atomically (AtomicFile: temp file in the same folder, fsync,
// rename, fsync the folder), so a reader sees either the previous checkpoint or the new one.
//
// Layout (little-endian):
//   "ESW2VCK2"                8 bytes magic
//   u64 header_len            at most kMaxCheckpointHeader; then header_len bytes of JSON:
//                             {"fingerprint": {...}, "state": {...}, "arrays": {...}}
//       fingerprint  options, vocabulary hash and id-stream length a resumed run must share
//                    (arch, dim, window, negative, hs, sample, min_count, max_vocab, epochs, lr,
//                    seed, tokenizer, n_rows, stream_len, vocab_hash, row_stats)
//       state        epoch, next_chunk, words_done, epoch_loss, epoch_loss_n, last_epoch_loss
//       arrays       dim and the row count of each array below (0 = absent):
//                    syn0, syn1neg, syn1, updates
//   f32 syn0    [syn0 x dim]
//   f32 syn1neg [syn1neg x dim]     (negative sampling)
//   f32 syn1    [syn1 x dim]        (hierarchical softmax)
//   u64 updates [updates]           (row statistics)
//   u64 checksum                    word2vec_checkpoint_checksum of every byte before it
//   "ESW2VEND"                8 bytes footer
// The corpus id stream is not stored: a resumed run re-scans the corpus and the fingerprint
// (which includes the vocabulary hash and the stream length) must match.
//
// Untrusted input: every field is checked against the bytes that remain before anything is
// allocated or copied; a damaged file gives Error(kCorrupt) naming the file, the field or
// offset, the value found and the limit. inspect_word2vec_checkpoint allocates nothing beyond
// the parsed header (at most kMaxCheckpointHeader bytes of JSON, nesting depth <= 4).
//
//   auto f = MappedFile::open("out.safetensors.ckpt");
//   Word2VecCheckpointInfo info = inspect_word2vec_checkpoint(f->bytes(), f->path());
//   // info.epoch, info.words_done: where --resume would continue
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace embedscope {

inline constexpr size_t kMaxCheckpointHeader = size_t(16) << 10;  // real headers: ~500 bytes

struct Word2VecCheckpointInfo {
  std::string fingerprint_json;  // the "fingerprint" object, as stored
  size_t dim = 0;
  uint64_t syn0_rows = 0, syn1neg_rows = 0, syn1_rows = 0, update_rows = 0;
  uint64_t epoch = 0, next_chunk = 0, words_done = 0;
  double epoch_loss = 0, last_epoch_loss = 0;
  uint64_t epoch_loss_n = 0;
  uint64_t arrays_offset = 0;  // byte offset of syn0 in the file
};

// Validates a whole checkpoint (magic, header length, checksum, footer, header JSON and its
// field types, arrays that exactly fill the file) and returns what it describes.
// `name` (the path) is used in error messages. Throws Error(kCorrupt).
Word2VecCheckpointInfo inspect_word2vec_checkpoint(std::span<const std::byte> bytes,
                                                   const std::string& name);

// The checksum stored before the footer: FNV-1a over little-endian 64-bit words of `bytes`
// (a shorter tail is packed into one word and mixed with its length).
uint64_t word2vec_checkpoint_checksum(std::span<const std::byte> bytes);

}  // namespace embedscope
