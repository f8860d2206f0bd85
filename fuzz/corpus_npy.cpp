// Writes the .npy seed corpus: every handcrafted case of tests/formats/npy_cases.h (bad and
// good) plus files our writer produces.  Usage: corpus_npy OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "embedscope/formats/npy.h"
#include "formats/npy_cases.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_npy OUT_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::remove_all(dir);
  fs::create_directories(dir);
  size_t n = 0;
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / (name + ".npy"), std::ios::binary) << bytes;
    ++n;
  };
  for (const auto& c : embedscope::test::npy_bad_files()) put("bad-" + c.id, c.bytes);
  for (const auto& c : embedscope::test::npy_good_files()) put("good-" + c.id, c.bytes);
  using namespace embedscope;
  save_npy((dir / "good-writer-f4.npy").string(),
           EmbeddingTable::from_f32(2, 3, {1, 2, 3, 4, 5, 6}));
  save_npy((dir / "good-writer-f2.npy").string(),
           EmbeddingTable::from_u16(2, 2, DType::kF16, {0x3c00, 0, 0x8000, 0x7bff}));
  std::printf("wrote %zu seed files to %s\n", n + 2, dir.c_str());
  return 0;
}
