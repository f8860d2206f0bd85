// Corpus scan + vocabulary for the word2vec trainer. Private to src/train.
#pragma once

#include <string>
#include <vector>

#include "embedscope/core/vocabulary.h"
#include "embedscope/train/word2vec.h"

namespace embedscope {

struct ScannedCorpus {
  Vocabulary vocab;              // with counts
  std::vector<uint8_t> trained;  // per row
  uint64_t corpus_words = 0;
  std::string stream_path;  // temporary uint32 id stream (caller removes it)
  uint64_t stream_len = 0;  // entries (ids + sentence ends)
};

// Errors: see word2vec.h (empty vocabulary -> kInvalidArgument naming min_count).
ScannedCorpus scan_corpus(const std::vector<std::string>& files, const Word2VecOptions& options,
                          const std::string& work_dir);

}  // namespace embedscope
