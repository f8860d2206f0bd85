#include "train/w2v_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/bytes.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"

namespace embedscope {

namespace {

using json = nlohmann::json;
constexpr char kMagic[9] = "ESW2VCK2";
constexpr char kOldMagic[9] = "ESW2VCK1";  // before the "arrays" header object
constexpr char kFooter[9] = "ESW2VEND";

// FNV-1a over 64-bit words (then the tail bytes): fast enough for hundreds of MB, and any
// truncation or bit flip changes it.
struct Checksum {
  uint64_t h = 0xcbf29ce484222325ull;
  uint64_t pending = 0;
  size_t n_pending = 0;
  void add(const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    while (n > 0 && n_pending != 0) push_byte(*p++), --n;
    while (n >= 8) {
      h = (h ^ load_le<uint64_t>(p)) * 0x100000001b3ull;
      p += 8;
      n -= 8;
    }
    while (n > 0) push_byte(*p++), --n;
  }
  void push_byte(unsigned char c) {
    pending |= uint64_t(c) << (8 * n_pending);
    if (++n_pending == 8) {
      h = (h ^ pending) * 0x100000001b3ull;
      pending = 0;
      n_pending = 0;
    }
  }
  uint64_t final() const { return n_pending ? (h ^ pending ^ n_pending) * 0x100000001b3ull : h; }
};

uint64_t vocab_hash(const Vocabulary& v) {
  Checksum c;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string& t = v.token(TokenId(i));
    uint64_t n = t.size();
    c.add(&n, 8);
    c.add(t.data(), t.size());
  }
  for (uint64_t x : v.counts()) c.add(&x, 8);
  return c.final();
}

struct Writer {
  AtomicFile f;
  Checksum sum;
  explicit Writer(const std::string& p) : f(p) {}
  void put(const void* d, size_t n) {
    f.write(d, n);
    sum.add(d, n);
  }
  // Row r of the file is row slot[r] in memory (slot null: r).
  void rows(const float* base, size_t n_rows, size_t dim, size_t stride,
            const uint32_t* slot = nullptr) {
    for (size_t r = 0; r < n_rows; ++r)
      put(base + size_t(slot ? slot[r] : r) * stride, dim * sizeof(float));
  }
};

}  // namespace

CheckpointFingerprint make_fingerprint(const Word2VecOptions& o, float lr, const Vocabulary& vocab,
                                       uint64_t stream_len) {
  json j = {
      {"arch", o.arch == W2vArch::kCbow ? "cbow" : "skipgram"},
      {"dim", o.dim},
      {"window", o.window},
      {"negative", o.negative},
      {"hs", o.hs},
      {"classic_skipgram", o.classic_skipgram},
      {"shared_negatives", o.shared_negatives},
      {"sample", o.sample},
      {"min_count", o.min_count},
      {"max_vocab", o.max_vocab},
      {"epochs", o.epochs},
      {"lr", lr},
      {"seed", o.seed},
      {"tokenizer", o.tokenizer ? o.tokenizer_name.empty() ? "custom" : o.tokenizer_name : ""},
      {"n_rows", vocab.size()},
      {"stream_len", stream_len},
      {"vocab_hash", vocab_hash(vocab)},
      {"row_stats", o.row_stats}};
  return {j.dump()};
}

void save_checkpoint(const std::string& path, const CheckpointFingerprint& fp,
                     const CheckpointState& st, const CheckpointArrays& a) {
  json state = {{"epoch", st.epoch},
                {"next_chunk", st.next_chunk},
                {"words_done", st.words_done},
                {"epoch_loss", st.epoch_loss},
                {"epoch_loss_n", st.epoch_loss_n},
                {"last_epoch_loss", st.last_epoch_loss}};
  json arrays = {{"dim", a.dim},
                 {"syn0", a.n_rows},
                 {"syn1neg", a.syn1neg ? a.n_rows : 0},
                 {"syn1", a.syn1 ? a.n_inner : 0},
                 {"updates", a.updates ? a.n_rows : 0}};
  std::string header = "{\"fingerprint\":" + fp.json + ",\"state\":" + state.dump() +
                       ",\"arrays\":" + arrays.dump() + "}";
  Writer w(path);
  w.put(kMagic, 8);
  uint64_t hl = header.size();
  w.put(&hl, 8);
  w.put(header.data(), header.size());
  w.rows(a.syn0, a.n_rows, a.dim, a.stride);
  if (a.syn1neg) w.rows(a.syn1neg, a.n_rows, a.dim, a.stride, a.syn1neg_slot);
  if (a.syn1) w.rows(a.syn1, a.n_inner, a.dim, a.stride);
  if (a.updates) w.put(a.updates, a.n_rows * sizeof(uint64_t));
  uint64_t c = w.sum.final();
  w.f.write(&c, 8);
  w.f.write(kFooter, 8);
  w.f.commit();
}

uint64_t word2vec_checkpoint_checksum(std::span<const std::byte> bytes) {
  Checksum c;
  c.add(bytes.data(), bytes.size());
  return c.final();
}

namespace {

// Nesting depth of a JSON text (brackets outside strings): bounds what parsing it allocates.
size_t json_depth(std::string_view s) {
  size_t depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace

Word2VecCheckpointInfo inspect_word2vec_checkpoint(std::span<const std::byte> bytes,
                                                   const std::string& path) {
  const std::byte* p = bytes.data();
  const uint64_t size = bytes.size();
  auto corrupt = [&](const std::string& m) {
    return Error(ErrorCode::kCorrupt, "checkpoint " + path + ": " + m);
  };
  if (size >= 8 && std::memcmp(p, kOldMagic, 8) == 0)
    throw corrupt(
        "written by an older embedscope (format ESW2VCK1, expected ESW2VCK2); "
        "start the training again without --resume");
  if (size < 32 || std::memcmp(p, kMagic, 8) != 0)
    throw corrupt("not an embedscope word2vec checkpoint (magic at offset 0 or size " +
                  std::to_string(size) + " < 32)");
  if (std::memcmp(p + size - 8, kFooter, 8) != 0)
    throw corrupt("footer missing at offset " + std::to_string(size - 8) +
                  " (file truncated or still being written)");
  const auto hl = load_le<uint64_t>(p + 8);
  if (hl > size - 32 || hl > kMaxCheckpointHeader)
    throw corrupt("header length " + std::to_string(hl) + " at offset 8 exceeds the " +
                  std::to_string(size - 32) + " bytes available or the limit of " +
                  std::to_string(kMaxCheckpointHeader));
  const auto stored = load_le<uint64_t>(p + size - 16);
  if (stored != word2vec_checkpoint_checksum(bytes.first(size - 16)))
    throw corrupt("checksum mismatch at offset " + std::to_string(size - 16) +
                  " (the file is damaged)");
  const std::string_view text(reinterpret_cast<const char*>(p + 16), hl);
  if (size_t depth = json_depth(text); depth > 4)
    throw corrupt("header JSON at offset 16 nests " + std::to_string(depth) +
                  " levels deep (limit 4)");
  json h;
  try {
    h = json::parse(text);
  } catch (const std::exception& e) {
    throw corrupt(std::string("header JSON at offset 16: ") + e.what());
  }
  for (const char* k : {"fingerprint", "state", "arrays"})
    if (!h.is_object() || !h.contains(k) || !h[k].is_object())
      throw corrupt(std::string("header lacks the \"") + k + "\" object");
  auto unsigned_field = [&](const json& obj, const char* section, const char* k) -> uint64_t {
    if (!obj.contains(k) || !obj[k].is_number_unsigned())
      throw corrupt(std::string("header field ") + section + "." + k + " = " +
                    (obj.contains(k) ? obj[k].dump() : "(absent)") +
                    ", expected an unsigned integer");
    return obj[k].get<uint64_t>();
  };
  auto finite_field = [&](const json& obj, const char* section, const char* k) -> double {
    if (!obj.contains(k) || !obj[k].is_number() || !std::isfinite(obj[k].get<double>()))
      throw corrupt(std::string("header field ") + section + "." + k + " = " +
                    (obj.contains(k) ? obj[k].dump() : "(absent)") + ", expected a finite number");
    return obj[k].get<double>();
  };
  // A field for an error message; const operator[] on an absent key is undefined behaviour.
  auto unsigned_text = [](const json& obj, const char* k) {
    return obj.contains(k) ? obj.at(k).dump() : std::string("(absent)");
  };
  Word2VecCheckpointInfo info;
  const json& fp = h["fingerprint"];
  const json& ar = h["arrays"];
  const json& st = h["state"];
  info.fingerprint_json = fp.dump();
  const uint64_t dim = unsigned_field(ar, "arrays", "dim");
  if (dim == 0 || dim > kMaxTrainDim)
    throw corrupt("arrays.dim = " + std::to_string(dim) + " is out of range [1, " +
                  std::to_string(kMaxTrainDim) + "]");
  info.dim = size_t(dim);
  info.syn0_rows = unsigned_field(ar, "arrays", "syn0");
  info.syn1neg_rows = unsigned_field(ar, "arrays", "syn1neg");
  info.syn1_rows = unsigned_field(ar, "arrays", "syn1");
  info.update_rows = unsigned_field(ar, "arrays", "updates");
  if (info.syn1neg_rows != 0 && info.syn1neg_rows != info.syn0_rows)
    throw corrupt("arrays.syn1neg = " + std::to_string(info.syn1neg_rows) + ", expected 0 or " +
                  std::to_string(info.syn0_rows) + " (= arrays.syn0)");
  if (info.update_rows != 0 && info.update_rows != info.syn0_rows)
    throw corrupt("arrays.updates = " + std::to_string(info.update_rows) + ", expected 0 or " +
                  std::to_string(info.syn0_rows) + " (= arrays.syn0)");
  if (info.syn1_rows > info.syn0_rows)
    throw corrupt("arrays.syn1 = " + std::to_string(info.syn1_rows) +
                  " inner nodes, more than arrays.syn0 = " + std::to_string(info.syn0_rows));
  // The arrays must fill the bytes between the header and the checksum exactly.
  const uint64_t avail = size - 32 - hl;
  std::optional<uint64_t> need = 0;
  for (uint64_t rows : {info.syn0_rows, info.syn1neg_rows, info.syn1_rows}) {
    auto b = checked_mul(rows, dim * sizeof(float));
    need = b && need ? checked_add(*need, *b) : std::nullopt;
  }
  auto ub = checked_mul(info.update_rows, sizeof(uint64_t));
  need = ub && need ? checked_add(*need, *ub) : std::nullopt;
  if (!need || *need != avail)
    throw corrupt("the arrays the header describes (" + std::to_string(info.syn0_rows) + " + " +
                  std::to_string(info.syn1neg_rows) + " + " + std::to_string(info.syn1_rows) +
                  " rows x dim " + std::to_string(dim) + ", " + std::to_string(info.update_rows) +
                  " update counts) " + (need ? "take " + std::to_string(*need) : "overflow") +
                  " bytes; the file has " + std::to_string(avail) + " at offset " +
                  std::to_string(16 + hl));
  info.arrays_offset = 16 + hl;
  info.epoch = unsigned_field(st, "state", "epoch");
  info.next_chunk = unsigned_field(st, "state", "next_chunk");
  info.words_done = unsigned_field(st, "state", "words_done");
  info.epoch_loss_n = unsigned_field(st, "state", "epoch_loss_n");
  info.epoch_loss = finite_field(st, "state", "epoch_loss");
  info.last_epoch_loss = finite_field(st, "state", "last_epoch_loss");
  // The position must lie inside the run the fingerprint describes (a resumed run derives
  // stream offsets from it).
  const uint64_t epochs = unsigned_field(fp, "fingerprint", "epochs");
  const uint64_t stream_len = unsigned_field(fp, "fingerprint", "stream_len");
  if (info.epoch > epochs)
    throw corrupt("state.epoch = " + std::to_string(info.epoch) +
                  " is beyond fingerprint.epochs = " + std::to_string(epochs));
  if (info.next_chunk > stream_len / kCheckpointChunk + 1)
    throw corrupt("state.next_chunk = " + std::to_string(info.next_chunk) + " is beyond the " +
                  std::to_string(stream_len / kCheckpointChunk + 1) + " chunks of the id stream");
  if (unsigned_field(fp, "fingerprint", "dim") != dim ||
      unsigned_field(fp, "fingerprint", "n_rows") != info.syn0_rows)
    throw corrupt("fingerprint dim/n_rows = " + unsigned_text(fp, "dim") + "/" +
                  unsigned_text(fp, "n_rows") + " differ from arrays.dim/syn0 = " +
                  std::to_string(dim) + "/" + std::to_string(info.syn0_rows));
  return info;
}

CheckpointState load_checkpoint(const std::string& path, const CheckpointFingerprint& fp,
                                const CheckpointArrays& a) {
  auto file = MappedFile::open(path);
  const Word2VecCheckpointInfo info = inspect_word2vec_checkpoint(file->bytes(), path);
  const json have = json::parse(info.fingerprint_json);
  const json want = json::parse(fp.json);
  for (auto& [k, v] : want.items())
    if (!have.contains(k) || have[k] != v)
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint " + path + " was written with " + k + " = " +
                      (have.contains(k) ? have[k].dump() : "(absent)") + ", this run has " +
                      v.dump() + " (same corpus and settings are needed to resume)");
  // Same fingerprint, so the same options and vocabulary: the arrays must be the ones this run
  // allocated (n_inner follows from the vocabulary, but check rather than trust).
  if (info.dim != a.dim || info.syn0_rows != a.n_rows ||
      info.syn1neg_rows != (a.syn1neg ? a.n_rows : 0) ||
      info.syn1_rows != (a.syn1 ? a.n_inner : 0) || info.update_rows != (a.updates ? a.n_rows : 0))
    throw Error(ErrorCode::kCorrupt, "checkpoint " + path +
                                         ": array shapes differ from this run's (dim " +
                                         std::to_string(info.dim) + ", " +
                                         std::to_string(info.syn1_rows) + " inner nodes)");
  const std::byte* q = file->data() + info.arrays_offset;
  auto read_rows = [&](float* dst, size_t rows, const uint32_t* slot = nullptr) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(dst + size_t(slot ? slot[r] : r) * a.stride, q, a.dim * sizeof(float));
      q += a.dim * sizeof(float);
    }
  };
  read_rows(a.syn0, a.n_rows);
  if (a.syn1neg) read_rows(a.syn1neg, a.n_rows, a.syn1neg_slot);
  if (a.syn1) read_rows(a.syn1, a.n_inner);
  if (a.updates) std::memcpy(a.updates, q, a.n_rows * sizeof(uint64_t));
  CheckpointState st;
  st.epoch = info.epoch;
  st.next_chunk = info.next_chunk;
  st.words_done = info.words_done;
  st.epoch_loss = info.epoch_loss;
  st.epoch_loss_n = info.epoch_loss_n;
  st.last_epoch_loss = info.last_epoch_loss;
  return st;
}

}  // namespace embedscope
