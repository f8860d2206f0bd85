// Zip reader for PyTorch checkpoints (APPNOTE.TXT 6.3). Only what torch.save writes is
// supported: one disk, stored entries; zip64 records are honoured because torch writes them for
// archives over 4 GiB.
#include "embedscope/formats/zip.h"

#include <array>
#include <cstring>
#include <unordered_map>

#include "embedscope/core/bytes.h"
#include "embedscope/core/checked.h"
#include "embedscope/core/error.h"

namespace embedscope {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;

}  // namespace

bool looks_like_zip(std::span<const std::byte> b) {
  return b.size() >= 4 && load_le<uint32_t>(b.data()) == kLocalSig;
}

uint32_t crc32_ieee(std::span<const std::byte> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (std::byte b : bytes) c = table[(c ^ std::to_integer<uint8_t>(b)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

ZipArchive ZipArchive::open(std::span<const std::byte> bytes, const std::string& name) {
  ZipArchive z;
  z.bytes_ = bytes;
  z.name_ = name;
  const std::byte* p = bytes.data();
  const uint64_t n = bytes.size();
  auto fail = [&](const std::string& what, uint64_t at) -> void {
    throw Error(ErrorCode::kCorrupt,
                name + ": zip " + what + " (at byte offset " + std::to_string(at) + ")");
  };
  if (n < 22)
    fail("file too small for an end-of-central-directory record (" + std::to_string(n) +
             " bytes, need 22)",
         0);
  // The end record is the last 22 bytes plus a comment of up to 65535 bytes: scan backwards.
  uint64_t eocd = UINT64_MAX;
  for (uint64_t k = n - 22 + 1; k-- > 0;) {
    if (load_le<uint32_t>(p + k) == kEndSig && k + 22 + load_le<uint16_t>(p + k + 20) == n) {
      eocd = k;
      break;
    }
    if (n - k > 22 + 65535) break;
  }
  if (eocd == UINT64_MAX)
    fail("end-of-central-directory record not found (file truncated or not a zip archive)", n);
  uint16_t disk = load_le<uint16_t>(p + eocd + 4), cd_disk = load_le<uint16_t>(p + eocd + 6);
  uint64_t n_entries = load_le<uint16_t>(p + eocd + 10);
  uint64_t cd_size = load_le<uint32_t>(p + eocd + 12);
  uint64_t cd_offset = load_le<uint32_t>(p + eocd + 16);
  if (n_entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
    if (eocd < 20) fail("zip64 locator missing before the end record", eocd);
    uint64_t loc = eocd - 20;
    if (load_le<uint32_t>(p + loc) != kZip64LocatorSig)
      fail("zip64 locator signature missing", loc);
    uint64_t z64 = load_le<uint64_t>(p + loc + 8);
    if (!in_bounds(z64, 56, loc))
      fail("zip64 end record offset " + std::to_string(z64) + " out of bounds", loc + 8);
    if (load_le<uint32_t>(p + z64) != kZip64EndSig) fail("zip64 end record signature missing", z64);
    disk = uint16_t(load_le<uint32_t>(p + z64 + 16));
    cd_disk = uint16_t(load_le<uint32_t>(p + z64 + 20));
    n_entries = load_le<uint64_t>(p + z64 + 32);
    cd_size = load_le<uint64_t>(p + z64 + 40);
    cd_offset = load_le<uint64_t>(p + z64 + 48);
  }
  if (disk != 0 || cd_disk != 0)
    throw Error(ErrorCode::kUnsupported, name + ": multi-disk zip archives are not supported");
  if (!in_bounds(cd_offset, cd_size, eocd))
    fail("central directory [" + std::to_string(cd_offset) + ", +" + std::to_string(cd_size) +
             ") lies outside the file before the end record at " + std::to_string(eocd),
         eocd);
  if (n_entries > cd_size / 46)
    fail("central directory claims " + std::to_string(n_entries) + " entries but has only " +
             std::to_string(cd_size) + " bytes (46 per entry minimum)",
         eocd);
  std::unordered_map<std::string, size_t> seen;
  uint64_t pos = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t k = 0; k < n_entries; ++k) {
    if (cd_end - pos < 46) fail("central directory entry " + std::to_string(k) + " truncated", pos);
    if (load_le<uint32_t>(p + pos) != kCentralSig)
      fail("central directory entry " + std::to_string(k) + " has a bad signature", pos);
    ZipEntry e;
    uint16_t flags = load_le<uint16_t>(p + pos + 8);
    e.method = load_le<uint16_t>(p + pos + 10);
    e.crc32 = load_le<uint32_t>(p + pos + 16);
    e.compressed_size = load_le<uint32_t>(p + pos + 20);
    e.size = load_le<uint32_t>(p + pos + 24);
    uint64_t name_len = load_le<uint16_t>(p + pos + 28),
             extra_len = load_le<uint16_t>(p + pos + 30),
             comment_len = load_le<uint16_t>(p + pos + 32);
    e.header_offset = load_le<uint32_t>(p + pos + 42);
    uint64_t var = name_len + extra_len + comment_len;
    if (var > cd_end - pos - 46)
      fail("central directory entry " + std::to_string(k) +
               " name/extra/comment run past the directory",
           pos);
    e.name.assign(reinterpret_cast<const char*>(p + pos + 46), name_len);
    if (flags & 1) fail("entry '" + e.name + "' is encrypted", pos);
    // zip64 extra field: only the fields that overflowed are present, in this order.
    const std::byte* x = p + pos + 46 + name_len;
    for (uint64_t xo = 0; xo + 4 <= extra_len;) {
      uint16_t id = load_le<uint16_t>(x + xo), len = load_le<uint16_t>(x + xo + 2);
      if (len > extra_len - xo - 4) fail("entry '" + e.name + "' extra field overruns", pos);
      if (id == 0x0001) {
        uint64_t f = xo + 4, fend = xo + 4 + len;
        auto take = [&](uint64_t& field) {
          if (field != 0xFFFFFFFFu) return;
          if (fend - f < 8) fail("entry '" + e.name + "' zip64 extra field too short", pos);
          field = load_le<uint64_t>(x + f);
          f += 8;
        };
        take(e.size);
        take(e.compressed_size);
        take(e.header_offset);
      }
      xo += 4 + uint64_t(len);
    }
    // Local header: its own name/extra lengths decide where the data starts (torch pads the
    // extra field so data is 64-byte aligned).
    if (!in_bounds(e.header_offset, 30, cd_offset))
      fail("entry '" + e.name + "' local header offset " + std::to_string(e.header_offset) +
               " outside the data area (" + std::to_string(cd_offset) + " bytes)",
           pos);
    const std::byte* lh = p + e.header_offset;
    if (load_le<uint32_t>(lh) != kLocalSig)
      fail("entry '" + e.name + "' local header signature missing", e.header_offset);
    uint64_t lvar = uint64_t(load_le<uint16_t>(lh + 26)) + load_le<uint16_t>(lh + 28);
    e.data_offset = e.header_offset + 30 + lvar;
    if (!in_bounds(e.data_offset, e.compressed_size, cd_offset))
      fail("entry '" + e.name + "' data [" + std::to_string(e.data_offset) + ", +" +
               std::to_string(e.compressed_size) + ") runs past the data area (" +
               std::to_string(cd_offset) + " bytes): file truncated?",
           e.header_offset);
    if (e.method == 0 && e.compressed_size != e.size)
      fail("stored entry '" + e.name + "' has compressed size " +
               std::to_string(e.compressed_size) + " != size " + std::to_string(e.size),
           pos);
    auto [it, fresh] = seen.emplace(e.name, z.entries_.size());
    if (!fresh) fail("duplicate entry name '" + e.name + "'", pos);
    z.entries_.push_back(std::move(e));
    pos += 46 + var;
  }
  return z;
}

const ZipEntry* ZipArchive::find(std::string_view entry_name) const {
  for (const ZipEntry& e : entries_)
    if (e.name == entry_name) return &e;
  return nullptr;
}

std::span<const std::byte> ZipArchive::data(const ZipEntry& e) const {
  if (e.method != 0)
    throw Error(ErrorCode::kUnsupported,
                name_ + ": zip entry '" + e.name + "' is compressed (method " +
                    std::to_string(e.method) +
                    "); only stored entries can be mapped. torch.save writes stored entries: "
                    "re-save the checkpoint with torch.save instead of re-zipping it");
  return bytes_.subspan(e.data_offset, e.size);
}

std::span<const std::byte> ZipArchive::data_checked(const ZipEntry& e) const {
  auto d = data(e);
  uint32_t c = crc32_ieee(d);
  if (c != e.crc32) {
    char b[96];
    std::snprintf(b, sizeof b, "CRC-32 0x%08x, directory says 0x%08x", c, e.crc32);
    throw Error(ErrorCode::kCorrupt, name_ + ": zip entry '" + e.name + "' " + b +
                                         " (at byte offset " + std::to_string(e.data_offset) + ")");
  }
  return d;
}

}  // namespace embedscope
