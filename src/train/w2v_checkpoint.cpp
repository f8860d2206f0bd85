#include "train/w2v_checkpoint.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "embedscope/core/atomic_file.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"

namespace embedscope {

namespace {

using json = nlohmann::json;
constexpr char kMagic[9] = "ESW2VCK1";
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
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0x100000001b3ull;
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
  void rows(const float* base, size_t n_rows, size_t dim, size_t stride) {
    for (size_t r = 0; r < n_rows; ++r) put(base + r * stride, dim * sizeof(float));
  }
};

}  // namespace

CheckpointFingerprint make_fingerprint(const Word2VecOptions& o, float lr, const Vocabulary& vocab,
                                       uint64_t stream_len) {
  json j = {{"arch", o.arch == W2vArch::kCbow ? "cbow" : "skipgram"},
            {"dim", o.dim},
            {"window", o.window},
            {"negative", o.negative},
            {"hs", o.hs},
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
  json state = {{"epoch", st.epoch},           {"next_chunk", st.next_chunk},
                {"words_done", st.words_done}, {"epoch_loss", st.epoch_loss},
                {"epoch_loss_n", st.epoch_loss_n}, {"last_epoch_loss", st.last_epoch_loss}};
  std::string header = "{\"fingerprint\":" + fp.json + ",\"state\":" + state.dump() + "}";
  Writer w(path);
  w.put(kMagic, 8);
  uint64_t hl = header.size();
  w.put(&hl, 8);
  w.put(header.data(), header.size());
  w.rows(a.syn0, a.n_rows, a.dim, a.stride);
  if (a.syn1neg) w.rows(a.syn1neg, a.n_rows, a.dim, a.stride);
  if (a.syn1) w.rows(a.syn1, a.n_inner, a.dim, a.stride);
  if (a.updates) w.put(a.updates, a.n_rows * sizeof(uint64_t));
  uint64_t c = w.sum.final();
  w.f.write(&c, 8);
  w.f.write(kFooter, 8);
  w.f.commit();
}

CheckpointState load_checkpoint(const std::string& path, const CheckpointFingerprint& fp,
                                const CheckpointArrays& a) {
  auto file = MappedFile::open(path);
  const std::byte* p = file->data();
  const uint64_t size = file->size();
  auto corrupt = [&](const std::string& m) {
    return Error(ErrorCode::kCorrupt, "checkpoint " + path + ": " + m);
  };
  if (size < 32 || std::memcmp(p, kMagic, 8) != 0)
    throw corrupt("not an embedscope word2vec checkpoint (magic at offset 0 or size " +
                  std::to_string(size) + " < 32)");
  if (std::memcmp(p + size - 8, kFooter, 8) != 0)
    throw corrupt("footer missing at offset " + std::to_string(size - 8) +
                  " (file truncated or still being written)");
  uint64_t hl;
  std::memcpy(&hl, p + 8, 8);
  if (hl > size - 32 || hl > (uint64_t(1) << 20))
    throw corrupt("header length " + std::to_string(hl) + " at offset 8 exceeds the " +
                  std::to_string(size - 32) + " bytes available (limit 1 MiB)");
  Checksum sum;
  sum.add(p, size - 16);
  uint64_t stored;
  std::memcpy(&stored, p + size - 16, 8);
  if (stored != sum.final())
    throw corrupt("checksum mismatch at offset " + std::to_string(size - 16) +
                  " (the file is damaged)");
  json h;
  try {
    h = json::parse(std::string(reinterpret_cast<const char*>(p + 16), hl));
  } catch (const std::exception& e) {
    throw corrupt(std::string("header JSON at offset 16: ") + e.what());
  }
  json want = json::parse(fp.json);
  if (!h.contains("fingerprint") || !h.contains("state")) throw corrupt("header lacks fingerprint/state");
  for (auto& [k, v] : want.items())
    if (!h["fingerprint"].contains(k) || h["fingerprint"][k] != v)
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint " + path + " was written with " + k + " = " +
                      (h["fingerprint"].contains(k) ? h["fingerprint"][k].dump() : "(absent)") +
                      ", this run has " + v.dump() +
                      " (same corpus and settings are needed to resume)");
  uint64_t need = 16 + hl + 16;
  auto add_rows = [&](uint64_t rows) {
    auto bytes = checked_mul(rows, uint64_t(a.dim) * sizeof(float));
    auto total = bytes ? checked_add(need, *bytes) : std::nullopt;
    if (!total) throw corrupt("array size overflows");
    need = *total;
  };
  add_rows(a.n_rows);
  if (a.syn1neg) add_rows(a.n_rows);
  if (a.syn1) add_rows(a.n_inner);
  if (a.updates) need += a.n_rows * sizeof(uint64_t);
  if (need != size)
    throw corrupt("size " + std::to_string(size) + " bytes, expected " + std::to_string(need) +
                  " for the arrays the header describes");
  const std::byte* q = p + 16 + hl;
  auto read_rows = [&](float* dst, size_t rows) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(dst + r * a.stride, q, a.dim * sizeof(float));
      q += a.dim * sizeof(float);
    }
  };
  read_rows(a.syn0, a.n_rows);
  if (a.syn1neg) read_rows(a.syn1neg, a.n_rows);
  if (a.syn1) read_rows(a.syn1, a.n_inner);
  if (a.updates) std::memcpy(a.updates, q, a.n_rows * sizeof(uint64_t));
  CheckpointState st;
  try {
    const json& s = h["state"];
    st.epoch = s.at("epoch").get<uint64_t>();
    st.next_chunk = s.at("next_chunk").get<uint64_t>();
    st.words_done = s.at("words_done").get<uint64_t>();
    st.epoch_loss = s.at("epoch_loss").get<double>();
    st.epoch_loss_n = s.at("epoch_loss_n").get<uint64_t>();
    st.last_epoch_loss = s.at("last_epoch_loss").get<double>();
  } catch (const std::exception& e) {
    throw corrupt(std::string("state: ") + e.what());
  }
  return st;
}

}  // namespace embedscope
