// libFuzzer target for the word2vec text / GloVe / fastText .vec reader (load_word2vec_text).
#include "w2v_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return embedscope::fuzz::run_w2v_input("fuzz_w2v_text", &embedscope::load_word2vec_text, data,
                                         size);
}
