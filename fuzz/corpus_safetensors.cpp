// Writes the safetensors seed corpus: every handcrafted case of tests/formats/safetensors_cases.h
// (bad and good) plus files our writer produces.  Usage: corpus_safetensors OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "embedscope/formats/safetensors.h"
#include "formats/safetensors_cases.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_safetensors OUT_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::remove_all(dir);
  fs::create_directories(dir);
  size_t n = 0;
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / (name + ".safetensors"), std::ios::binary) << bytes;
    ++n;
  };
  for (const auto& c : embedscope::test::safetensors_bad_files()) put("bad-" + c.id, c.bytes);
  for (const auto& c : embedscope::test::safetensors_good_files()) put("good-" + c.id, c.bytes);
  using namespace embedscope;
  auto t = EmbeddingTable::from_f32(3, 2, {1, 2, 3, 4, 5, 6});
  Vocabulary v;
  for (const char* w : {"the", "of", "and"}) v.add(w);
  v.set_counts({5, 3, 1});
  SaveOptions o;
  o.metadata["source"] = "corpus";
  save_safetensors_embeddings((dir / "good-writer-vocab.safetensors").string(), t, &v, o);
  save_safetensors_embeddings((dir / "good-writer-bf16.safetensors").string(),
                              EmbeddingTable::from_u16(2, 2, DType::kBF16, {1, 2, 3, 4}), nullptr,
                              {});
  std::printf("wrote %zu seed files to %s\n", n + 2, dir.c_str());
  return 0;
}
