// libFuzzer target for the word2vec binary reader (load_word2vec_binary).
#include "w2v_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return embedscope::fuzz::run_w2v_input("fuzz_w2v_bin", &embedscope::load_word2vec_binary, data,
                                         size);
}
