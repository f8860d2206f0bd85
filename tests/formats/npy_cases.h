// The handcrafted .npy files of docs/reliability.md 6.4, shared by the bad-input tests
// (tests/formats/npy_reader_test.cpp, one TEST per case) and the fuzz seed-corpus generator
// (fuzz/corpus_npy.cpp). Files that numpy itself writes are made by numpy in npy_numpy_test.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/safetensors_cases.h"  // BadFile, GoodFile

namespace embedscope::test {

// A .npy file: magic, version, header length (2 bytes for v1, 4 for v2/v3), header, data.
// The header text is used as given (no padding is added).
inline std::string npy_file(int major, const std::string& header, const std::string& data,
                            int minor = 0) {
  std::string s = "\x93NUMPY";
  s += char(major);
  s += char(minor);
  uint32_t n = uint32_t(header.size());
  s.append(reinterpret_cast<const char*>(&n), major >= 2 ? 4 : 2);
  return s + header + data;
}

inline std::string npy_dict(const std::string& descr, const std::string& shape,
                            const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

inline std::vector<BadFile> npy_bad_files() {
  using E = ErrorCode;
  const std::string d6 = std::string(24, '\x01');  // 6 floats
  std::string v1_huge = "\x93NUMPY\x01";
  v1_huge += '\0';
  v1_huge += le64(10001).substr(0, 2) + std::string(100, ' ');
  std::string v2_huge = "\x93NUMPY\x02";
  v2_huge += '\0';
  v2_huge += le64(4'000'000'000).substr(0, 4) + std::string(100, ' ');
  return {
      {"N1-bad-magic",
       "\x93NUMPX\x01\x00" + std::string(20, ' '),
       E::kCorrupt,
       {"not a .npy file", "magic"}},
      {"N1-zeroed", std::string(64, '\0'), E::kCorrupt, {"not a .npy file", "bytes 0-5"}},
      {"N2-version-4",
       npy_file(4, npy_dict("<f4", "(2, 3)"), d6),
       E::kUnsupported,
       {"unsupported npy version 4.0", "byte 6"}},
      {"N2-version-0",
       npy_file(0, npy_dict("<f4", "(2, 3)"), d6),
       E::kUnsupported,
       {"unsupported npy version 0.0"}},
      {"N3-v1-over-limit", v1_huge, E::kCorrupt, {"header length 10001", "limit 10000"}},
      {"N3-v2-4e9", v2_huge, E::kCorrupt, {"header length 4000000000", "limit 10000"}},
      {"N5-not-a-dict", npy_file(1, "[1, 2, 3]\n", d6), E::kCorrupt, {"must be a dict", "byte 10"}},
      {"N5-missing-descr",
       npy_file(1, "{'fortran_order': False, 'shape': (2, 3), }\n", d6),
       E::kCorrupt,
       {"no 'descr'"}},
      {"N5-missing-shape",
       npy_file(1, "{'descr': '<f4', 'fortran_order': False, }\n", d6),
       E::kCorrupt,
       {"no 'shape'"}},
      {"N5-missing-fortran",
       npy_file(1, "{'descr': '<f4', 'shape': (2, 3), }\n", d6),
       E::kCorrupt,
       {"no 'fortran_order'"}},
      {"N5-numpy-int-in-shape",
       npy_file(1, npy_dict("<f4", "(np.int64(2), 3)"), d6),
       E::kCorrupt,
       {"shape[0] is not an integer literal", "np.int64"}},
      {"N5-extra-key",
       npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}\n", d6),
       E::kCorrupt,
       {"unexpected key 'x'"}},
      {"N5-duplicate-key",
       npy_file(1, "{'descr': '<f4', 'descr': '<f2', 'fortran_order': False, 'shape': (2, 3)}\n",
                d6),
       E::kCorrupt,
       {"duplicate key 'descr'"}},
      {"N5-eval-attempt",
       npy_file(1, npy_dict("<f4", "__import__('os').system('true')"), d6),
       E::kCorrupt,
       {"'shape' must be a tuple", "__import__"}},
      {"N6-object",
       npy_file(1, npy_dict("|O", "(2, 3)"), d6),
       E::kUnsupported,
       {"descr '|O'", "pickle"}},
      {"N6-structured",
       npy_file(
           1, "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3,), }\n",
           d6),
       E::kUnsupported,
       {"structured dtype"}},
      {"N6-int32", npy_file(1, npy_dict("<i4", "(2, 3)"), d6), E::kUnsupported, {"descr '<i4'"}},
      {"N9-huge-shape",
       npy_file(1, npy_dict("<f4", "(1099511627776,)"), d6),
       E::kCorrupt,
       {"truncated", "(1099511627776,)", "needs 4398046511104 bytes", "has 24"}},
      {"N9-negative-dim",
       npy_file(1, npy_dict("<f4", "(-2, 3)"), d6),
       E::kCorrupt,
       {"shape[0] is negative", "-2, 3"}},
      {"N9-dim-2p64",
       npy_file(1, npy_dict("<f4", "(18446744073709551616, 3)"), d6),
       E::kCorrupt,
       {"shape[0] is 2**64 or more", "18446744073709551616"}},
      {"N9-product-overflow",
       npy_file(1, npy_dict("<f4", "(4294967296, 4294967296)"), d6),
       E::kCorrupt,
       {"(4294967296, 4294967296)", "overflows"}},
      {"N10-short",
       npy_file(1, npy_dict("<f4", "(2, 3)"), d6.substr(0, 22)),
       E::kCorrupt,
       {"truncated", "needs 24 bytes", "has 22"}},
      {"N10-long",
       npy_file(1, npy_dict("<f4", "(2, 3)"), d6 + "xyz"),
       E::kCorrupt,
       {"3 trailing bytes", "needs 24 bytes"}},
      {"N-rank-3",
       npy_file(1, npy_dict("<f4", "(1, 2, 3)"), d6),
       E::kUnsupported,
       {"(1, 2, 3)", "3 dimensions"}},
      {"N-scalar",
       npy_file(1, npy_dict("<f4", "()"), d6.substr(0, 4)),
       E::kUnsupported,
       {"0 dimensions"}},
  };
}

inline std::vector<GoodFile> npy_good_files() {
  std::string d6 = st_f32({1, 2, 3, 4, 5, 6});
  std::string long_header = npy_dict("<f4", "(2, 3)");
  long_header.insert(long_header.size() - 1, std::string(1000, ' '));  // N4: > 256 bytes
  return {
      {"N4-long-header", npy_file(1, long_header, d6)},
      {"v2-f4", npy_file(2, npy_dict("<f4", "(2, 3)"), d6)},
      {"v3-f4-1d", npy_file(3, npy_dict("<f4", "(6,)"), d6)},
      {"fortran", npy_file(1, npy_dict("<f4", "(2, 3)", "True"), d6)},
      {"big-endian-f8", npy_file(1, npy_dict(">f8", "(1, 3)"), d6)},
      {"legacy-long-ints", npy_file(1, npy_dict("<f2", "(3L, 4L)"), std::string(24, '\x3c'))},
  };
}

}  // namespace embedscope::test
