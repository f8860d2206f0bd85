// PyTorch zip checkpoints: zip directory -> restricted unpickle of data.pkl -> tensor records
// checked against their storage entries. Loading a matrix is a view into the mapped archive
// (torch aligns entries to 64 bytes), or a strided copy.
#include "embedscope/formats/pytorch.h"

#include <cstring>

#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"
#include "embedscope/formats/pickle.h"

namespace embedscope {

namespace {

constexpr unsigned char kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                          0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

size_t elem_size(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16") return 2;
  return 1;
}

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + "]";
}

}  // namespace

bool is_legacy_torch_file(std::span<const std::byte> b) {
  return b.size() >= sizeof kLegacyMagic &&
         std::memcmp(b.data(), kLegacyMagic, sizeof kLegacyMagic) == 0;
}

TorchCheckpoint TorchCheckpoint::open(const std::string& path) {
  auto mf = MappedFile::open(path);
  auto bytes = mf->bytes();
  return from_bytes(mf, bytes, path);
}

TorchCheckpoint TorchCheckpoint::from_bytes(std::shared_ptr<const void> owner,
                                            std::span<const std::byte> bytes,
                                            const std::string& name) {
  if (is_legacy_torch_file(bytes))
    throw Error(ErrorCode::kUnsupported,
                name +
                    ": legacy (pre-1.6, non-zip) PyTorch format. Convert it with PyTorch: "
                    "python3 -c \"import torch; torch.save(torch.load('" +
                    name +
                    "', map_location='cpu'), 'converted.bin')\" (only for files you trust: "
                    "torch.load runs the pickle)");
  if (!looks_like_zip(bytes))
    throw Error(ErrorCode::kCorrupt,
                name + ": not a PyTorch zip checkpoint (no \"PK\\3\\4\" at byte 0)");
  TorchCheckpoint c;
  c.owner_ = std::move(owner);
  c.bytes_ = bytes;
  c.path_ = name;
  c.zip_ = ZipArchive::open(bytes, name);
  const ZipEntry* pkl = nullptr;
  for (const ZipEntry& e : c.zip_.entries()) {
    size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      pkl = &e;
      c.prefix_ = e.name.substr(0, slash + 1);
      break;
    }
  }
  if (!pkl)
    throw Error(
        ErrorCode::kCorrupt,
        name + ": zip archive has no <archive>/data.pkl entry (not a torch.save checkpoint)");
  if (const ZipEntry* bo = c.zip_.find(c.prefix_ + "byteorder")) {
    auto d = c.zip_.data(*bo);
    std::string order(reinterpret_cast<const char*>(d.data()), d.size());
    if (order != "little")
      throw Error(ErrorCode::kUnsupported, name + ": byteorder is '" + order.substr(0, 16) +
                                               "' (only little-endian checkpoints are supported)");
  }
  PickleRef root = unpickle_torch(c.zip_.data_checked(*pkl), name + ":" + pkl->name);
  if (root->kind != PickleKind::kDict)
    throw Error(ErrorCode::kCorrupt, name + ": data.pkl holds no dict (not a state dict)");

  // Flatten nested dicts ({"model": state_dict, ...}) into dotted names; depth is bounded by
  // the unpickler's nesting cap.
  struct Item {
    std::string prefix;
    const PickleObject* dict;
  };
  std::vector<Item> todo{{"", root.get()}};
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    for (const auto& [k, v] : it.dict->dict) {
      if (k->kind != PickleKind::kString) continue;
      std::string key = it.prefix + k->s;
      if (v->kind == PickleKind::kDict) {
        todo.push_back({key + ".", v.get()});
        continue;
      }
      if (v->kind != PickleKind::kTensor) continue;
      TorchTensorInfo t;
      t.name = key;
      t.dtype = v->storage->s;
      t.shape = v->shape;
      t.stride = v->stride;
      t.storage_offset = v->storage_offset;
      t.storage_key = v->storage->storage_key;
      t.storage_numel = v->storage->storage_numel;
      std::string where = name + ": tensor '" + key + "'";
      const ZipEntry* e = c.zip_.find(c.prefix_ + "data/" + t.storage_key);
      if (!e)
        throw Error(ErrorCode::kCorrupt, where + " uses storage key '" + t.storage_key +
                                             "' but the archive has no entry '" + c.prefix_ +
                                             "data/" + t.storage_key + "'");
      size_t es = elem_size(t.dtype);
      auto need = checked_mul(t.storage_numel, es);
      if (!need || *need > e->size)
        throw Error(ErrorCode::kCorrupt,
                    where + ": storage '" + t.storage_key + "' has " +
                        std::to_string(t.storage_numel) + " x " + std::to_string(es) +
                        "-byte elements but its entry holds " + std::to_string(e->size) + " bytes");
      c.zip_.data(*e);  // throws for a compressed entry
      // Furthest element: offset + sum((shape_i - 1) * stride_i); empty tensors reach nothing.
      bool empty = false;
      uint64_t last = t.storage_offset;
      bool ok = true;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] == 0)
          empty = true;
        else {
          auto m = checked_mul(t.shape[d] - 1, t.stride[d]);
          auto s = m ? checked_add(last, *m) : std::nullopt;
          if (!s)
            ok = false;
          else
            last = *s;
        }
      }
      if (!ok || (empty ? t.storage_offset > t.storage_numel : last >= t.storage_numel))
        throw Error(ErrorCode::kCorrupt, where + " (offset " + std::to_string(t.storage_offset) +
                                             ", shape " + shape_str(t.shape) + ", stride " +
                                             shape_str(t.stride) +
                                             ") reaches beyond its storage of " +
                                             std::to_string(t.storage_numel) + " elements");
      uint64_t expect = 1;
      for (size_t d = t.shape.size(); d-- > 0;) {
        if (t.shape[d] != 1 && t.stride[d] != expect) t.contiguous = false;
        expect *= t.shape[d];  // bounded: the tensor fits its storage
      }
      c.tensors_.push_back(std::move(t));
    }
  }
  return c;
}

const TorchTensorInfo* TorchCheckpoint::find(std::string_view name) const {
  for (const TorchTensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

bool TorchCheckpoint::same_storage(const TorchTensorInfo& a, const TorchTensorInfo& b) const {
  return a.storage_key == b.storage_key && a.storage_offset == b.storage_offset &&
         a.shape == b.shape && a.stride == b.stride && a.dtype == b.dtype;
}

std::vector<std::string> TorchCheckpoint::matrix_candidates() const {
  std::vector<std::string> out;
  for (const TorchTensorInfo& t : tensors_)
    if (t.shape.size() == 2 &&
        (t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64"))
      out.push_back(t.name);
  return out;
}

LoadedEmbeddings TorchCheckpoint::load_matrix(const std::string& name) const {
  const TorchTensorInfo* t = find(name);
  if (!t) {
    std::string have;
    auto cands = matrix_candidates();
    for (size_t k = 0; k < cands.size() && k < 10; ++k) have += (k ? ", " : "") + cands[k];
    throw Error(ErrorCode::kNotFound, path_ + ": no tensor '" + name +
                                          "' (2-D tensors: " + (have.empty() ? "none" : have) +
                                          (cands.size() > 10 ? ", ..." : "") + ")");
  }
  if (t->shape.size() != 2)
    throw Error(ErrorCode::kInvalidArgument, path_ + ": tensor '" + name + "' has shape " +
                                                 shape_str(t->shape) + " (expected 2-D)");
  bool is_float = t->dtype == "F32" || t->dtype == "F16" || t->dtype == "BF16" || t->dtype == "F64";
  if (!is_float)
    throw Error(ErrorCode::kUnsupported, path_ + ": tensor '" + name + "' has dtype " + t->dtype +
                                             " (embedding matrices must be F32, F16, BF16 or F64)");
  const ZipEntry* e = zip_.find(prefix_ + "data/" + t->storage_key);
  const std::byte* base = zip_.data(*e).data();
  size_t es = elem_size(t->dtype);
  check_table_shape(path_ + ": tensor '" + name + "'", t->shape[0], t->shape[1]);
  size_t rows = t->shape[0], dim = t->shape[1];
  LoadedEmbeddings out;
  out.format = FileFormat::kPytorch;
  out.path = path_;
  out.tensor = name;
  out.source_dtype = t->dtype;
  DType dt = t->dtype == "F16" ? DType::kF16 : t->dtype == "BF16" ? DType::kBF16 : DType::kF32;
  const std::byte* first = base + t->storage_offset * es;
  if (t->contiguous && t->dtype != "F64") {
    if (reinterpret_cast<uintptr_t>(first) % es == 0 && owner_)
      out.table = EmbeddingTable::view(owner_, first, rows, dim, dt, true);
    else
      out.table = EmbeddingTable::copy_of(first, rows, dim, dt);
    return out;
  }
  // Strided (a transposed view was saved) or F64: gather element by element. A stride-0
  // (broadcast) view could name more elements than its storage holds: refuse to expand it.
  auto n_el = checked_mul(rows, dim);
  if (!n_el || *n_el > t->storage_numel)
    throw Error(ErrorCode::kUnsupported,
                path_ + ": tensor '" + name + "' shape " + shape_str(t->shape) +
                    " has more elements than its storage (" + std::to_string(t->storage_numel) +
                    "): broadcast views are not loaded");
  auto at = [&](size_t r, size_t c) { return first + (r * t->stride[0] + c * t->stride[1]) * es; };
  if (t->dtype == "F32" || t->dtype == "F64") {
    std::vector<float> v(rows * dim);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c2 = 0; c2 < dim; ++c2) {
        if (t->dtype == "F32") {
          std::memcpy(&v[r * dim + c2], at(r, c2), 4);
        } else {
          double d;
          std::memcpy(&d, at(r, c2), 8);
          v[r * dim + c2] = float(d);
        }
      }
    out.table = EmbeddingTable::from_f32(rows, dim, std::move(v));
  } else {
    std::vector<uint16_t> v(rows * dim);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c2 = 0; c2 < dim; ++c2) std::memcpy(&v[r * dim + c2], at(r, c2), 2);
    out.table = EmbeddingTable::from_u16(rows, dim, dt, std::move(v));
  }
  return out;
}

}  // namespace embedscope
