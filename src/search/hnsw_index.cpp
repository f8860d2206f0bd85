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
#include "embedscope/core/bytes.h"
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

// hnswlib 0.6.2 trusts every field of its file (HierarchicalNSW::loadIndex), so the blob is
// checked here, field by field, before hnswlib sees it. Layout written by saveIndex():
//   0   u64 offsetLevel0_ (0)          8  u64 max_elements_        16 u64 cur_element_count
//   24  u64 size_data_per_element_     32 u64 label_offset_        40 u64 offsetData_
//   48  i32 maxlevel_                  52 u32 enterpoint_node_     56 u64 maxM_
//   64  u64 maxM0_                     72 u64 M_                   80 f64 mult_
//   88  u64 ef_construction_
//   96  cur_element_count records of size_data_per_element_ bytes: u32 level-0 link count
//       (low 16 bits; byte 2 = deleted mark) + maxM0_ u32 ids, dim f32, u64 label
//   then per element: u32 linkListSize + linkListSize bytes = level x (u32 count + maxM_ ids)
// Everything hnswlib's search dereferences is checked: every id < cur_element_count, a link at
// level l points to an element that has level l, the entry point has the top level, counts
// within maxM, labels < rows, vectors finite, and the records exactly fill the blob.
constexpr size_t kBlobHeader = 96;
constexpr uint64_t kMaxDegree = 65535;  // link counts are read as u16
constexpr int kMaxLevel = 64;

void validate_hnswlib_blob(const std::byte* b, size_t n, uint64_t dim, uint64_t rows,
                           uint64_t header_M, const std::string& path, size_t blob_off) {
  auto bad = [&](size_t off, const std::string& what) {
    return Error(ErrorCode::kCorrupt,
                 path + ": hnswlib data at byte " + std::to_string(blob_off + off) + ": " + what);
  };
  if (n < kBlobHeader)
    throw bad(0, "index data has " + std::to_string(n) + " bytes, its header alone needs " +
                     std::to_string(kBlobHeader));
  const uint64_t off0 = load_le<uint64_t>(b), max_el = load_le<uint64_t>(b + 8),
                 cur = load_le<uint64_t>(b + 16), sz_el = load_le<uint64_t>(b + 24),
                 label_off = load_le<uint64_t>(b + 32), data_off = load_le<uint64_t>(b + 40);
  const int32_t max_level = load_le<int32_t>(b + 48);
  const uint32_t entry = load_le<uint32_t>(b + 52);
  const uint64_t maxM = load_le<uint64_t>(b + 56), maxM0 = load_le<uint64_t>(b + 64);
  const double mult = load_le<double>(b + 80);
  if (off0 != 0) throw bad(0, "offsetLevel0 " + std::to_string(off0) + ", expected 0");
  if (maxM < 1 || maxM > kMaxDegree)
    throw bad(56,
              "maxM " + std::to_string(maxM) + " outside [1, " + std::to_string(kMaxDegree) + "]");
  if (maxM != header_M)
    throw bad(56, "maxM " + std::to_string(maxM) + " differs from the header's M " +
                      std::to_string(header_M));
  if (maxM0 < 1 || maxM0 > kMaxDegree)
    throw bad(
        64, "maxM0 " + std::to_string(maxM0) + " outside [1, " + std::to_string(kMaxDegree) + "]");
  if (!std::isfinite(mult)) throw bad(80, "mult is not finite");
  const uint64_t links0 = 4 + 4 * maxM0, links = 4 + 4 * maxM;
  const uint64_t want_el = links0 + 4 * dim + 8;
  if (sz_el != want_el || data_off != links0 || label_off != links0 + 4 * dim)
    throw bad(24, "record layout (size " + std::to_string(sz_el) + ", vector at " +
                      std::to_string(data_off) + ", label at " + std::to_string(label_off) +
                      ") does not match dim " + std::to_string(dim) + " and maxM0 " +
                      std::to_string(maxM0) + " (expected " + std::to_string(want_el) + ", " +
                      std::to_string(links0) + ", " + std::to_string(links0 + 4 * dim) + ")");
  if (cur > rows)
    throw bad(16, "element count " + std::to_string(cur) + " exceeds rows " + std::to_string(rows));
  if (max_el < cur)
    throw bad(8, "max_elements " + std::to_string(max_el) + " is below the element count " +
                     std::to_string(cur));
  const size_t avail = n - kBlobHeader;
  if (cur > avail / sz_el)
    throw bad(16, "element count " + std::to_string(cur) + " x record size " +
                      std::to_string(sz_el) + " exceeds the " + std::to_string(avail) +
                      " bytes that remain");
  if (cur == 0) {
    if (max_level != -1 || entry != 0xFFFFFFFFu)
      throw bad(48, "empty index with max level " + std::to_string(max_level) + " / entry point " +
                        std::to_string(entry) + " (expected -1 / -1)");
  } else if (max_level < 0 || max_level > kMaxLevel) {
    throw bad(48, "max level " + std::to_string(max_level) + " outside [0, " +
                      std::to_string(kMaxLevel) + "]");
  } else if (entry >= cur) {
    throw bad(52, "entry point " + std::to_string(entry) + " is not an element (count " +
                      std::to_string(cur) + ")");
  }
  // Pass 1: upper-level list sizes -> levels, and the exact end of the blob.
  std::vector<uint8_t> level(cur, 0);
  std::vector<size_t> list_at(cur, 0);
  size_t pos = kBlobHeader + cur * sz_el;
  for (uint64_t i = 0; i < cur; ++i) {
    if (n - pos < 4)
      throw bad(pos, "link list size of element " + std::to_string(i) + " is cut off");
    const uint32_t ls = load_le<uint32_t>(b + pos);
    pos += 4;
    if (ls % links != 0 || ls / links > uint64_t(max_level) || ls > n - pos)
      throw bad(pos - 4, "link list size " + std::to_string(ls) + " of element " +
                             std::to_string(i) + " is not a multiple of " + std::to_string(links) +
                             " up to max level " + std::to_string(max_level) + " within the " +
                             std::to_string(n - pos) + " bytes that remain");
    level[i] = uint8_t(ls / links);
    list_at[i] = pos;
    pos += ls;
  }
  if (pos != n) throw bad(pos, std::to_string(n - pos) + " bytes follow the last element's links");
  if (cur > 0 && level[entry] != uint32_t(max_level))
    throw bad(52, "entry point " + std::to_string(entry) + " has level " +
                      std::to_string(level[entry]) + ", max level is " + std::to_string(max_level));
  // Pass 2: every link, vector and label.
  auto check_list = [&](size_t at, uint64_t cap, unsigned l, uint64_t i) {
    const uint32_t head = load_le<uint32_t>(b + at);
    const uint32_t count = head & 0xFFFFu;
    if (count > cap || (head >> 16) != 0)
      throw bad(at, "element " + std::to_string(i) + " level " + std::to_string(l) +
                        ": link header 0x" + hash_hex(head).substr(8) +
                        " (count must be <= " + std::to_string(cap) + ", no deleted mark)");
    for (uint32_t j = 0; j < count; ++j) {
      const uint32_t id = load_le<uint32_t>(b + at + 4 + 4 * size_t(j));
      if (id >= cur || level[id] < l)
        throw bad(at + 4 + 4 * size_t(j),
                  "element " + std::to_string(i) + " level " + std::to_string(l) + " links to " +
                      std::to_string(id) +
                      (id >= cur ? " (not an element)" : " (which has no such level)"));
    }
  };
  for (uint64_t i = 0; i < cur; ++i) {
    const size_t rec = kBlobHeader + i * sz_el;
    check_list(rec, maxM0, 0, i);
    for (uint64_t j = 0; j < dim; ++j)
      if (!std::isfinite(load_le<float>(b + rec + data_off + 4 * j)))
        throw bad(rec + data_off + 4 * j, "element " + std::to_string(i) + " value " +
                                              std::to_string(j) + " is not finite");
    const uint64_t label = load_le<uint64_t>(b + rec + label_off);
    if (label >= rows)
      throw bad(rec + label_off, "element " + std::to_string(i) + " label " +
                                     std::to_string(label) + " is not a row (rows " +
                                     std::to_string(rows) + ")");
    for (unsigned l = 1; l <= level[i]; ++l) check_list(list_at[i] + (l - 1) * links, maxM, l, i);
  }
}

}  // namespace

uint64_t bytes_hash(std::span<const std::byte> bytes) {
  return mix_bytes(0, bytes.data(), bytes.size());
}

uint64_t table_content_hash(const EmbeddingTable& t) {
  uint64_t shape[3] = {t.n_rows(), t.dim(), uint64_t(t.dtype())};
  uint64_t h =
      mix_bytes(0xcbf29ce484222325ull, reinterpret_cast<const std::byte*>(shape), sizeof shape);
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
size_t HnswIndex::n_indexed() const { return impl_->hnsw->cur_element_count; }

HnswIndex HnswIndex::build(const EmbeddingTable& t, const HnswBuildOptions& o) {
  if (o.M < 2)
    throw Error(ErrorCode::kInvalidArgument, "--M must be at least 2, got " + std::to_string(o.M));
  if (o.ef_construction < 1)
    throw Error(ErrorCode::kInvalidArgument, "--ef-construction must be at least 1");
  size_t n = o.n_rows ? std::min(o.n_rows, t.n_rows()) : t.n_rows();
  if (n == 0 || t.dim() == 0)
    throw Error(ErrorCode::kInvalidArgument, "cannot index an empty table");
  auto wanted = [&](size_t i) { return !o.allow || (i < o.allow->size() && (*o.allow)[i]); };
  size_t n_wanted = 0;
  for (size_t i = 0; i < n; ++i) n_wanted += wanted(i);
  if (n_wanted == 0)
    throw Error(ErrorCode::kInvalidArgument,
                "no row of the " + std::to_string(n) + " is selected for the index");
  HnswIndex ix;
  Impl& m = *ix.impl_;
  m.n_rows = n;
  m.dim = t.dim();
  m.M = o.M;
  m.ef_construction = o.ef_construction;
  m.space = std::make_unique<CosineSpace>(t.dim());
  m.hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(m.space.get(), n_wanted, o.M,
                                                             o.ef_construction, o.seed);
  process_pool().parallel_for(
      n,
      [&](size_t b, size_t e, size_t) {
        std::vector<float> v(t.dim());
        for (size_t i = b; i < e; ++i) {
          if (!wanted(i)) continue;
          t.row_f32(i, v.data());
          if (normalise(v)) m.hnsw->addPoint(v.data(), i);  // zero rows have no direction: skipped
        }
      },
      o.n_threads);
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
  nlohmann::json h = {
      {"model_hash", hash_hex(model_hash)},
      {"rows", m.n_rows},
      {"dim", m.dim},
      {"M", m.M},
      {"ef_construction", m.ef_construction},
      {"metric", "cosine"},
      {"blob_bytes", blob.size()},
      {"blob_hash", hash_hex(bytes_hash(std::as_bytes(std::span<const char>(blob))))}};
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
  if (in.bad()) throw Error(ErrorCode::kIo, path + ": read error");
  return load_bytes(std::as_bytes(std::span<const char>(data)), model_hash, path);
}

HnswIndex HnswIndex::load_bytes(std::span<const std::byte> data, uint64_t model_hash,
                                const std::string& path) {
  auto corrupt = [&](const std::string& what) {
    return Error(ErrorCode::kCorrupt, path + ": " + what);
  };
  if (data.size() < 16 || std::memcmp(data.data(), kMagic, 8) != 0)
    throw corrupt("not an embedscope HNSW index (bytes 0..7 are not \"ESHNSW01\"; file has " +
                  std::to_string(data.size()) + " bytes)");
  const uint64_t hl = load_le<uint64_t>(data.data() + 8);
  if (hl > kMaxHeader || hl > data.size() - 16)
    throw corrupt("header length " + std::to_string(hl) + " at byte 8 exceeds the limit " +
                  std::to_string(std::min<uint64_t>(kMaxHeader, data.size() - 16)));
  nlohmann::json h;
  try {
    const char* hp = reinterpret_cast<const char*>(data.data()) + 16;
    h = nlohmann::json::parse(hp, hp + hl);
  } catch (const nlohmann::json::exception& e) {
    throw corrupt("header JSON at byte 16 does not parse: " + std::string(e.what()));
  }
  if (!h.is_object()) throw corrupt("header JSON at byte 16 is not an object");
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
  const uint64_t rows = field("rows"), dim = field("dim"), blob_bytes = field("blob_bytes");
  const uint64_t M = field("M"), ef_construction = field("ef_construction");
  const size_t blob_off = 16 + size_t(hl);
  if (blob_bytes != data.size() - blob_off)
    throw corrupt("blob_bytes " + std::to_string(blob_bytes) + " but " +
                  std::to_string(data.size() - blob_off) + " bytes follow the header at byte " +
                  std::to_string(blob_off));
  if (rows == 0 || rows > (uint64_t(1) << 31) || dim == 0 || dim > (1u << 20))
    throw corrupt("rows " + std::to_string(rows) + " / dim " + std::to_string(dim) +
                  " out of range (rows 1..2^31, dim 1..2^20)");
  if (text("metric") != "cosine")
    throw corrupt("metric \"" + text("metric") + "\", only \"cosine\" is supported");
  const std::span<const std::byte> blob = data.subspan(blob_off);
  const std::string bh = hash_hex(bytes_hash(blob));
  if (bh != text("blob_hash"))
    throw corrupt("index data hash " + bh + " does not match blob_hash " + text("blob_hash") +
                  " (truncated or modified)");
  if (text("model_hash") != hash_hex(model_hash))
    throw Error(ErrorCode::kInvalidArgument,
                path + ": index was built for a different model (model_hash " + text("model_hash") +
                    ", this model's is " + hash_hex(model_hash) +
                    "); the model changed: rebuild with `embedscope index build`");
  // The hash only catches accidents; anyone can write a matching one. The structure is
  // checked as if it were hostile.
  validate_hnswlib_blob(blob.data(), blob.size(), dim, rows, M, path, blob_off);
  const uint64_t cur = load_le<uint64_t>(blob.data() + 16);
  HnswIndex ix;
  Impl& m = *ix.impl_;
  m.n_rows = rows;
  m.dim = dim;
  m.M = M;
  m.ef_construction = ef_construction;
  m.model_hash = model_hash;
  m.space = std::make_unique<CosineSpace>(dim);
  std::string tmp = temp_path(path);
  try {
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size()));
      if (!out) throw Error(ErrorCode::kIo, tmp + ": cannot write temporary index data");
    }
    // max_elements = the element count: nothing is added after loading, and the header's
    // max_elements_ must not size an allocation.
    m.hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(m.space.get(), tmp, false, cur);
  } catch (const Error&) {
    ::unlink(tmp.c_str());
    throw;
  } catch (const std::exception& e) {
    ::unlink(tmp.c_str());
    throw corrupt(std::string("hnswlib rejected the index data: ") + e.what());
  }
  ::unlink(tmp.c_str());
  return ix;
}

std::vector<Neighbor> HnswIndex::search(std::span<const float> query,
                                        const HnswSearchOptions& o) const {
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
