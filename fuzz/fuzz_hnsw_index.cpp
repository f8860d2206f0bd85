// libFuzzer target for the HNSW index file reader (HnswIndex::load_bytes): the ESHNSW01 header
// (JSON with the model hash) and hnswlib's payload, which hnswlib itself trusts. Invariants:
// only embedscope::Error escapes; an accepted index answers a query with labels that are rows.
//
// The blob carries a hash, so almost every mutation of the payload would stop at the hash
// check. Each input is therefore loaded twice: as it is (header checks), and "repaired" with
// blob_bytes / blob_hash recomputed, so mutations reach the structural checks of the payload
// (a hostile file can always carry a matching hash).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "embedscope/core/error.h"
#include "embedscope/search/hnsw_index.h"

namespace {

using embedscope::HnswIndex;

// The model hash the header claims (so the "model changed" check passes), 0 when unreadable.
uint64_t claimed_model_hash(const nlohmann::json& h) {
  if (!h.is_object() || !h.contains("model_hash") || !h["model_hash"].is_string()) return 0;
  return std::strtoull(h["model_hash"].get<std::string>().c_str(), nullptr, 16);
}

std::optional<nlohmann::json> header_of(std::span<const uint8_t> in, uint64_t* hl) {
  if (in.size() < 16 || std::memcmp(in.data(), "ESHNSW01", 8) != 0) return std::nullopt;
  std::memcpy(hl, in.data() + 8, 8);
  if (*hl > in.size() - 16) return std::nullopt;
  nlohmann::json h =
      nlohmann::json::parse(in.begin() + 16, in.begin() + 16 + long(*hl), nullptr, false);
  if (h.is_discarded() || !h.is_object()) return std::nullopt;
  return h;
}

void try_load(std::span<const std::byte> file, uint64_t model_hash) {
  try {
    HnswIndex ix = HnswIndex::load_bytes(file, model_hash, "fuzz.hnsw");
    if (ix.dim() > 4096) return;  // a valid but huge query vector is not what is tested here
    std::vector<float> q(ix.dim(), 1.0f);
    q[0] = -0.5f;
    embedscope::HnswSearchOptions o;
    o.k = 5;
    o.ef = 16;
    for (const auto& n : ix.search(q, o))
      if (n.id < 0 || size_t(n.id) >= ix.n_rows()) std::abort();
  } catch (const embedscope::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  uint64_t hl = 0;
  std::optional<nlohmann::json> h = header_of(in, &hl);
  const uint64_t mh = h ? claimed_model_hash(*h) : 0;
  try_load(std::as_bytes(in), mh);
  if (!h) return 0;
  std::span<const uint8_t> blob = in.subspan(16 + hl);
  (*h)["blob_bytes"] = blob.size();
  (*h)["blob_hash"] = embedscope::hash_hex(embedscope::bytes_hash(std::as_bytes(blob)));
  std::string hs = h->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  uint64_t nl = hs.size();
  std::vector<uint8_t> fixed(16 + hs.size() + blob.size());
  std::memcpy(fixed.data(), "ESHNSW01", 8);
  std::memcpy(fixed.data() + 8, &nl, 8);
  std::memcpy(fixed.data() + 16, hs.data(), hs.size());
  if (!blob.empty()) std::memcpy(fixed.data() + 16 + hs.size(), blob.data(), blob.size());
  try_load(std::as_bytes(std::span<const uint8_t>(fixed)), mh);
  return 0;
}
