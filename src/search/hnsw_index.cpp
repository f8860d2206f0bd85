#include "embedscope/search/hnsw_index.h"

// hnswlib 0.6.2's prefetches in searchBaseLayer read one link past the end of a neighbour list
// (`*(datal + j + 1)` on the last j): harmless on hardware, a heap over-read to ASan. Sanitizer
// builds turn hnswlib's manual vectorisation (and with it those prefetches) off; our distance
// function is our own either way.
#if defined(__SANITIZE_ADDRESS__) && !defined(NO_MANUAL_VECTORIZATION)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/thread_pool.h"
#include "search/top_k.h"
#include "simd/dot_kernels.h"

namespace embedscope {

namespace {

constexpr char kMagic[8] = {'E', 'S', 'H', 'N', 'S', 'W', '0', '1'};
constexpr uint64_t kMaxHeader = 64 * 1024;

uint64_t mix_bytes(uint64_t h, const std::byte* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) {
    h = (h ^ uint64_t(p[i])) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

// hnswlib space over unit rows whose distance (1 - dot) runs our dispatched Highway kernel.
class CosineSpace : public hnswlib::SpaceInterface<float> {
 public:
  explicit CosineSpace(size_t dim) : dim_(dim) {}
  size_t get_data_size() override { return dim_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  static float distance(const void* a, const void* b, const void* param) {
    size_t dim = *static_cast<const size_t*>(param);
    float d;
    simd::dot_rows(static_cast<const std::byte*>(b), DType::kF32, 1, dim,
                   static_cast<const float*>(a), &d);
    return 1.0f - d;
  }
  size_t dim_;
};

// Unit-normalises v in place; false for a zero or non-finite vector.
bool normalise(std::vector<float>& v) {
  double n = 0;
  for (float x : v) n += double(x) * x;
  n = std::sqrt(n);
  if (!(n > 0) || !std::isfinite(n)) return false;
  for (float& x : v) x = float(x / n);
  return true;
}

std::string temp_path(const std::string& near) {
  std::string t = near + ".tmp-XXXXXX";
  int fd = ::mkstemp(t.data());
  if (fd < 0) {
    const char* td = std::getenv("TMPDIR");
    t = std::string(td && *td ? td : "/tmp") + "/embedscope-hnsw-XXXXXX";
    fd = ::mkstemp(t.data());
  }
  if (fd < 0)
    throw Error(ErrorCode::kIo, t + ": cannot create a temporary file: " + std::strerror(errno));
  ::close(fd);
  return t;
}

}  // namespace

uint64_t table_content_hash(const EmbeddingTable& t) {
  uint64_t shape[3] = {t.n_rows(), t.dim(), uint64_t(t.dtype())};
  uint64_t h = mix_bytes(0xcbf29ce484222325ull, reinterpret_cast<const std::byte*>(shape), sizeof shape);
  return mix_bytes(h, t.data(), t.byte_size());
}

std::string hash_hex(uint64_t h) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

struct HnswIndex::Impl {
  std::unique_ptr<CosineSpace> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  size_t n_rows = 0, dim = 0, M = 0, ef_construction = 0;
  uint64_t model_hash = 0;
};

HnswIndex::HnswIndex() : impl_(std::make_unique<Impl>()) {}
HnswIndex::~HnswIndex() = default;
HnswIndex::HnswIndex(HnswIndex&&) noexcept = default;
HnswIndex& HnswIndex::operator=(HnswIndex&&) noexcept = default;
size_t HnswIndex::n_rows() const { return impl_->n_rows; }
size_t HnswIndex::dim() const { return impl_->dim; }
size_t HnswIndex::M() const { return impl_->M; }
size_t HnswIndex::ef_construction() const { return impl_->ef_construction; }
uint64_t HnswIndex::model_hash() const { return impl_->model_hash; }

HnswIndex HnswIndex::build(const EmbeddingTable& t, const HnswBuildOptions& o) {
  if (o.M < 2) throw Error(ErrorCode::kInvalidArgument, "--M must be at least 2, got " + std::to_string(o.M));
  if (o.ef_construction < 1)
    throw Error(ErrorCode::kInvalidArgument, "--ef-construction must be at least 1");
  size_t n = o.n_rows ? std::min(o.n_rows, t.n_rows()) : t.n_rows();
  if (n == 0 || t.dim() == 0) throw Error(ErrorCode::kInvalidArgument, "cannot index an empty table");
  HnswIndex ix;
  Impl& m = *ix.impl_;
  m.n_rows = n;
  m.dim = t.dim();
  m.M = o.M;
  m.ef_construction = o.ef_construction;
  m.space = std::make_unique<CosineSpace>(t.dim());
  m.hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(m.space.get(), n, o.M,
                                                              o.ef_construction, o.seed);
  ThreadPool pool(o.n_threads);
  pool.parallel_for(n, [&](size_t b, size_t e, size_t) {
    std::vector<float> v(t.dim());
    for (size_t i = b; i < e; ++i) {
      t.row_f32(i, v.data());
      if (normalise(v)) m.hnsw->addPoint(v.data(), i);  // zero rows have no direction: skipped
    }
  });
  return ix;
}

void HnswIndex::save(const std::string& path, uint64_t model_hash) const {
  const Impl& m = *impl_;
  std::string tmp = temp_path(path);
  std::string blob;
  try {
    m.hnsw->saveIndex(tmp);
    std::ifstream in(tmp, std::ios::binary);
    blob.assign(std::istreambuf_iterator<char>(in), {});
    if (!in.good() && !in.eof()) throw Error(ErrorCode::kIo, tmp + ": cannot read back the index");
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  ::unlink(tmp.c_str());
  nlohmann::json h = {{"model_hash", hash_hex(model_hash)},
                      {"rows", m.n_rows},
                      {"dim", m.dim},
                      {"M", m.M},
                      {"ef_construction", m.ef_construction},
                      {"metric", "cosine"},
                      {"blob_bytes", blob.size()},
                      {"blob_hash", hash_hex(mix_bytes(0, reinterpret_cast<const std::byte*>(blob.data()), blob.size()))}};
  std::string hs = h.dump();
  uint64_t hl = hs.size();
  AtomicFile f(path);
  f.write(kMagic, 8);
  f.write(&hl, 8);
  f.write(hs);
  f.write(blob);
  f.commit();
}

HnswIndex HnswIndex::load(const std::string& path, uint64_t model_hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kNotFound, path + ": cannot open index file");
  std::string data((std::istreambuf_iterator<char>(in)), {});
  auto corrupt = [&](const std::string& what) {
    return Error(ErrorCode::kCorrupt, path + ": " + what);
  };
  if (data.size() < 16 || std::memcmp(data.data(), kMagic, 8) != 0)
    throw corrupt("not an embedscope HNSW index (bytes 0..7 are not \"ESHNSW01\"; file has " +
                  std::to_string(data.size()) + " bytes)");
  uint64_t hl;
  std::memcpy(&hl, data.data() + 8, 8);
  if (hl > kMaxHeader || hl > data.size() - 16)
    throw corrupt("header length " + std::to_string(hl) + " at byte 8 exceeds the limit " +
                  std::to_string(std::min<uint64_t>(kMaxHeader, data.size() - 16)));
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(data.substr(16, hl));
  } catch (const nlohmann::json::exception& e) {
    throw corrupt("header JSON at byte 16 does not parse: " + std::string(e.what()));
  }
  auto field = [&](const char* k) -> uint64_t {
    if (!h.contains(k) || !h[k].is_number_unsigned())
      throw corrupt(std::string("header field \"") + k + "\" missing or not an unsigned integer");
    return h[k].get<uint64_t>();
  };
  auto text = [&](const char* k) -> std::string {
    if (!h.contains(k) || !h[k].is_string())
      throw corrupt(std::string("header field \"") + k + "\" missing or not a string");
    return h[k].get<std::string>();
  };
  uint64_t rows = field("rows"), dim = field("dim"), blob_bytes = field("blob_bytes");
  size_t blob_off = 16 + size_t(hl);
  if (blob_bytes != data.size() - blob_off)
    throw corrupt("blob_bytes " + std::to_string(blob_bytes) + " but " +
                  std::to_string(data.size() - blob_off) + " bytes follow the header at byte " +
                  std::to_string(blob_off));
  if (rows == 0 || dim == 0 || dim > (1u << 20))
    throw corrupt("rows " + std::to_string(rows) + " / dim " + std::to_string(dim) + " out of range");
  std::string bh = hash_hex(mix_bytes(0, reinterpret_cast<const std::byte*>(data.data() + blob_off), blob_bytes));
  if (bh != text("blob_hash"))
    throw corrupt("index data hash " + bh + " does not match blob_hash " + text("blob_hash") +
                  " (truncated or modified)");
  if (text("model_hash") != hash_hex(model_hash))
    throw Error(ErrorCode::kInvalidArgument,
                path + ": index was built for a different model (model_hash " +
                    text("model_hash") + ", this model's is " + hash_hex(model_hash) +
                    "); the model changed: rebuild with `embedscope index build`");
  HnswIndex ix;
  Impl& m = *ix.impl_;
  m.n_rows = rows;
  m.dim = dim;
  m.M = field("M");
  m.ef_construction = field("ef_construction");
  m.model_hash = model_hash;
  m.space = std::make_unique<CosineSpace>(dim);
  std::string tmp = temp_path(path);
  try {
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(data.data() + blob_off, std::streamsize(blob_bytes));
      if (!out) throw Error(ErrorCode::kIo, tmp + ": cannot write temporary index data");
    }
    data.clear();
    data.shrink_to_fit();
    m.hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(m.space.get(), tmp, false, rows);
  } catch (const Error&) {
    ::unlink(tmp.c_str());
    throw;
  } catch (const std::exception& e) {
    ::unlink(tmp.c_str());
    throw corrupt(std::string("hnswlib rejected the index data: ") + e.what());
  }
  ::unlink(tmp.c_str());
  if (m.hnsw->max_elements_ < rows)
    throw corrupt("index holds room for " + std::to_string(m.hnsw->max_elements_) +
                  " rows, header says " + std::to_string(rows));
  return ix;
}

std::vector<Neighbor> HnswIndex::search(std::span<const float> query, const HnswSearchOptions& o) const {
  const Impl& m = *impl_;
  if (o.k == 0) throw Error(ErrorCode::kInvalidArgument, "k must be at least 1");
  if (query.size() != m.dim)
    throw Error(ErrorCode::kInvalidArgument, "query has " + std::to_string(query.size()) +
                                                 " values, index dim is " + std::to_string(m.dim));
  std::vector<float> q(query.begin(), query.end());
  if (!normalise(q)) return {};
  std::vector<TokenId> excl = o.exclude;
  std::sort(excl.begin(), excl.end());
  size_t want = std::max(o.ef, o.k + excl.size());
  m.hnsw->setEf(want);
  auto pq = m.hnsw->searchKnn(q.data(), std::min(want, size_t(m.hnsw->cur_element_count)));
  std::vector<TopK> heap{TopK(o.k)};
  while (!pq.empty()) {
    auto [dist, label] = pq.top();
    pq.pop();
    TokenId id = TokenId(label);
    if (std::binary_search(excl.begin(), excl.end(), id)) continue;
    if (o.allow && (size_t(id) >= o.allow->size() || !(*o.allow)[size_t(id)])) continue;
    heap[0].push(id, 1.0f - dist);
  }
  return merge_top_k(heap, o.k);
}

}  // namespace embedscope
