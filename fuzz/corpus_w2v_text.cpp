// Writes the seed corpus of fuzz_w2v_text: the handcrafted cases of
// tests/formats/word2vec_cases.h plus a file our writer produces.  Usage: corpus_w2v_text OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "embedscope/formats/word2vec.h"
#include "formats/word2vec_cases.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_w2v_text OUT_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::remove_all(dir);
  fs::create_directories(dir);
  size_t n = 0;
  for (const auto& c : embedscope::test::w2v_text_cases()) {
    std::ofstream(dir / (c.id + ".txt"), std::ios::binary) << c.bytes;
    ++n;
  }
  using namespace embedscope;
  Vocabulary v;
  v.add("caf\xc3\xa9");
  v.add("x");
  save_word2vec_text((dir / "good-writer.txt").string(),
                     EmbeddingTable::from_f32(2, 3, {1.5f, -2, 1e-30f, 0, 3e38f, 0.1f}), v);
  std::printf("wrote %zu seed files to %s\n", n + 1, dir.c_str());
  return 0;
}
