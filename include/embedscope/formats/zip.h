// A minimal, validating reader for the zip archives PyTorch writes (torch.save since 1.6):
// stored (uncompressed) entries only, zip64 when the archive needs it.
//
// Byte layout (PKWARE APPNOTE.TXT 6.3, sections 4.3.7 / 4.3.12 / 4.3.14-16):
//   [local header 30 B "PK\3\4" + name + extra][data] ... per entry
//   [central directory: 46 B "PK\1\2" + name + extra + comment per entry]
//   [zip64 end record "PK\6\6" + zip64 locator "PK\6\7"]   (only when a field overflows)
//   [end of central directory 22 B "PK\5\6" + comment (<= 65535 B)]
// Sizes and offsets that do not fit 32 bits are 0xFFFFFFFF in the fixed fields and come from the
// zip64 extra field (id 0x0001) in the order: uncompressed size, compressed size, local offset.
//
// open() validates the whole directory: every entry's local header lies inside the file with
// the right signature, and its data [data_offset, data_offset + size) lies inside the file.
// Compressed entries are listed (method != 0) but data() refuses them with Error(kUnsupported)
// naming the entry and the method. Errors name the archive, the entry and the byte offset.
//
// Thread-safety: immutable after open().
//
//   ZipArchive z = ZipArchive::open(file->bytes(), path);
//   const ZipEntry* e = z.find("archive/data.pkl");
//   std::span<const std::byte> pkl = z.data(*e);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace embedscope {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 = stored; anything else is compressed
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;           // uncompressed size
  uint64_t header_offset = 0;  // local header
  uint64_t data_offset = 0;    // first data byte (file offset)
};

class ZipArchive {
 public:
  // Validates the archive in `bytes` (kept alive by the caller). Throws Error(kCorrupt) naming
  // `name`, the record and the byte offset; Error(kUnsupported) for multi-disk archives.
  static ZipArchive open(std::span<const std::byte> bytes, const std::string& name);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view entry_name) const;  // nullptr when absent
  // The stored bytes of an entry. Error(kUnsupported) when it is compressed.
  std::span<const std::byte> data(const ZipEntry& e) const;
  // Like data(), and also checks the CRC-32 (for small entries such as data.pkl);
  // Error(kCorrupt) on a mismatch.
  std::span<const std::byte> data_checked(const ZipEntry& e) const;

 private:
  std::span<const std::byte> bytes_;
  std::string name_;
  std::vector<ZipEntry> entries_;
};

// True when the bytes start like a zip archive ("PK\3\4").
bool looks_like_zip(std::span<const std::byte> bytes);
// CRC-32 (IEEE 802.3, as zip uses).
uint32_t crc32_ieee(std::span<const std::byte> bytes);

}  // namespace embedscope
