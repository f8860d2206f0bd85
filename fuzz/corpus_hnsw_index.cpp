// Writes the HNSW index seed corpus: small real indexes written by HnswIndex::save (several
// shapes, degrees and level structures, one built over an allow mask) plus a few broken
// copies.  Usage: corpus_hnsw_index OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "embedscope/search/hnsw_index.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_hnsw_index OUT_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  using namespace embedscope;
  const fs::path dir = argv[1];
  fs::remove_all(dir);
  fs::create_directories(dir);
  size_t n_files = 0;
  auto table = [](size_t n, size_t dim, uint32_t seed) {
    std::mt19937 g(seed);
    std::normal_distribution<float> nd;
    std::vector<float> v(n * dim);
    for (float& x : v) x = nd(g);
    return EmbeddingTable::from_f32(n, dim, std::move(v));
  };
  struct Case {
    const char* name;
    size_t n, dim, M, efc;
    bool half;
  };
  // M 2 on 60 rows gives several levels (mult = 1/ln 2), so upper-level link lists are seeded.
  const Case cases[] = {{"one-row", 1, 4, 2, 4, false},
                        {"tiny", 8, 3, 2, 8, false},
                        {"levels", 60, 4, 2, 16, false},
                        {"m4", 40, 8, 4, 20, false},
                        {"allow-half", 30, 5, 3, 10, true}};
  std::vector<uint8_t> allow;
  for (const Case& c : cases) {
    EmbeddingTable t = table(c.n, c.dim, uint32_t(c.n * 31 + c.dim));
    allow.assign(c.n, 0);
    for (size_t i = 0; i < c.n; i += 2) allow[i] = 1;
    HnswIndex ix = HnswIndex::build(
        t,
        {.M = c.M, .ef_construction = c.efc, .n_threads = 1, .allow = c.half ? &allow : nullptr});
    const fs::path p = dir / (std::string("good-") + c.name + ".hnsw");
    ix.save(p.string(), table_content_hash(t));
    ++n_files;
    std::ifstream in(p, std::ios::binary);
    std::string b((std::istreambuf_iterator<char>(in)), {});
    if (std::string(c.name) != "levels") continue;
    std::ofstream(dir / "bad-truncated.hnsw", std::ios::binary) << b.substr(0, b.size() / 2);
    std::string flipped = b;
    flipped[flipped.size() - 9] ^= 0x40;
    std::ofstream(dir / "bad-flipped.hnsw", std::ios::binary) << flipped;
    std::ofstream(dir / "bad-header-only.hnsw", std::ios::binary) << b.substr(0, 16 + 40);
    n_files += 3;
  }
  std::printf("wrote %zu seed files to %s\n", n_files, dir.c_str());
  return 0;
}
