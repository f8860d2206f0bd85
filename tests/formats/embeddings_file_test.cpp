// Format names, detection by content (not extension), and load/save dispatch.
#include "embedscope/formats/embeddings_file.h"

#include <gtest/gtest.h>

#include <mutex>

#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/formats/npy.h"
#include "embedscope/formats/safetensors.h"
#include "formats/safetensors_cases.h"
#include "test_util.h"

namespace embedscope {
namespace {

using test::TempDir;

template <class F>
void expect_error(F&& f, ErrorCode code, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), error_code_name(code)) << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "lacks '" << n << "': " << e.what();
  }
}

TEST(FormatNames, RoundTripThroughParse) {
  for (FileFormat f :
       {FileFormat::kSafetensors, FileFormat::kNpy, FileFormat::kWord2VecText,
        FileFormat::kWord2VecBinary, FileFormat::kGlove, FileFormat::kPytorch, FileFormat::kGguf})
    EXPECT_EQ(parse_format_name(format_name(f)), f) << format_name(f);
  EXPECT_EQ(format_name(FileFormat::kWord2VecBinary), "word2vec-bin");
  EXPECT_EQ(parse_format_name("SafeTensors"), FileFormat::kSafetensors);
}

TEST(FormatNames, RejectsUnknownNameListingAccepted) {
  expect_error([] { parse_format_name("hdf5"); }, ErrorCode::kInvalidArgument,
               {"'hdf5'", "safetensors, npy, word2vec, word2vec-bin, glove"});
}

TEST(DetectFormat, UsesContentNotExtension) {
  TempDir d;
  // numpy writes an .npy under a misleading name; the independent tools give real bytes.
  auto r = test::run_python(R"PY(
import sys, zipfile, numpy as np
d = sys.argv[1]
with open(d + '/matrix.bin', 'wb') as f:
    np.save(f, np.arange(6, dtype='<f4').reshape(2, 3))
with zipfile.ZipFile(d + '/model.weights', 'w') as z:  # torch.save's container
    z.writestr('archive/data.pkl', b'\x80\x02}q\x00.')
open(d + '/legacy.pt.bak', 'wb').write(b'\x80\x02\x8a\x0alz\xfc\x9cF\xf9 j\xa8P\x19.')
)PY",
                            {d.path()});
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(detect_format(d.file("matrix.bin")), FileFormat::kNpy);
  EXPECT_EQ(detect_format(d.file("model.weights")), FileFormat::kPytorch);
  EXPECT_EQ(detect_format(d.file("legacy.pt.bak")), FileFormat::kPytorch);

  test::write_file(d.file("st.npy"),
                   test::st_file(R"({"m":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}})",
                                 test::st_f32({1})));
  EXPECT_EQ(detect_format(d.file("st.npy")), FileFormat::kSafetensors);
  test::write_file(d.file("padded"), test::st_file("  {}", ""));
  EXPECT_EQ(detect_format(d.file("padded")), FileFormat::kSafetensors);
  test::write_file(d.file("g.safetensors"),
                   std::string("GGUF\x03\0\0\0", 8) + std::string(16, '\0'));
  EXPECT_EQ(detect_format(d.file("g.safetensors")), FileFormat::kGguf);
  test::write_file(d.file("w.txt"), "2 3\na 0.125 -1.5 2.25\nb 4.5 5.25 6.125\n");
  EXPECT_EQ(detect_format(d.file("w.txt")), FileFormat::kWord2VecText);
  test::write_file(d.file("g.txt"), "a 1 2 3\nb 4 5 6\n");
  EXPECT_EQ(detect_format(d.file("g.txt")), FileFormat::kGlove);
  std::string bin = "2 3\na " + test::st_f32({1, 2, 3}) + "\nb " + test::st_f32({4, 5, 6}) + "\n";
  test::write_file(d.file("w.vec"), bin);
  EXPECT_EQ(detect_format(d.file("w.vec")), FileFormat::kWord2VecBinary);
  test::write_file(d.file("empty"), "");
  EXPECT_EQ(detect_format(d.file("empty")), FileFormat::kUnknown);
}

TEST(DetectFormat, FallsBackToExtensionForBrokenBinaryFiles) {
  TempDir d;
  // S3: a header length over the limit fails the content sniff; the extension still routes it
  // to the safetensors reader, whose error is precise.
  test::write_file(d.file("big.safetensors"), test::le64(100'000'001) + "{}");
  EXPECT_EQ(detect_format(d.file("big.safetensors")), FileFormat::kSafetensors);
  expect_error([&] { load_embeddings(d.file("big.safetensors")); }, ErrorCode::kCorrupt,
               {d.file("big.safetensors"), "header too large"});
}

TEST(DetectFormat, ReportsMissingFile) {
  expect_error([] { detect_format("/nonexistent/x.npy"); }, ErrorCode::kNotFound,
               {"/nonexistent/x.npy"});
}

TEST(LoadEmbeddings, DispatchesByContent) {
  TempDir d;
  save_npy(d.file("a.npy"), EmbeddingTable::from_f32(2, 2, {1, 2, 3, 4}));
  std::rename(d.file("a.npy").c_str(), d.file("a.data").c_str());
  auto e = load_embeddings(d.file("a.data"));
  EXPECT_EQ(e.format, FileFormat::kNpy);
  EXPECT_EQ(e.table.row(1), (std::vector<float>{3, 4}));

  save_embeddings(d.file("b.safetensors"), EmbeddingTable::from_f32(1, 2, {5, 6}), nullptr);
  std::rename(d.file("b.safetensors").c_str(), d.file("b.data").c_str());
  auto s = load_embeddings(d.file("b.data"));
  EXPECT_EQ(s.format, FileFormat::kSafetensors);
  EXPECT_EQ(s.tensor, "embeddings");
  EXPECT_EQ(s.table.row(0), (std::vector<float>{5, 6}));
}

TEST(LoadEmbeddings, ForcedFormatUsesThatReader) {
  TempDir d;
  save_embeddings(d.file("b.safetensors"), EmbeddingTable::from_f32(1, 2, {5, 6}), nullptr);
  LoadOptions o;
  o.format = FileFormat::kNpy;
  expect_error([&] { load_embeddings(d.file("b.safetensors"), o); }, ErrorCode::kCorrupt,
               {"not a .npy file"});
}

TEST(LoadEmbeddings, SendsCheckpointsToLoadModel) {
  TempDir d;
  test::write_file(d.file("m.gguf"), std::string("GGUF\x03\0\0\0", 8) + std::string(16, '\0'));
  expect_error([&] { load_embeddings(d.file("m.gguf")); }, ErrorCode::kUnsupported,
               {d.file("m.gguf"), "gguf", "load_model"});
}

TEST(LoadEmbeddings, RejectsUnknownContent) {
  TempDir d;
  test::write_file(d.file("x.dat"), std::string("\x01\x02\x03 hello", 9));
  expect_error([&] { load_embeddings(d.file("x.dat")); }, ErrorCode::kUnsupported,
               {d.file("x.dat"), "unrecognised"});
}

TEST(LoadEmbeddings, ForwardsWarningsToTheLogSink) {
  TempDir d;
  test::write_file(
      d.file("w.safetensors"),
      test::st_file(R"({"m":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4],"x":1}})",
                    test::st_f32({1})));
  std::vector<std::string> got;
  std::mutex mu;
  set_log_sink([&](LogLevel level, const std::string& m) {
    std::lock_guard<std::mutex> lock(mu);
    if (level == LogLevel::kWarning) got.push_back(m);
  });
  auto e = load_embeddings(d.file("w.safetensors"));
  set_log_sink(nullptr);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("unknown keys"), std::string::npos) << got[0];
  EXPECT_EQ(e.warnings, got);
}

TEST(SaveEmbeddings, ChoosesFormatByExtension) {
  TempDir d;
  auto t = EmbeddingTable::from_f32(2, 2, {0.1f, 0.2f, 0.3f, 0.4f});
  Vocabulary v;
  v.add("x");
  v.add("y");
  save_embeddings(d.file("o.safetensors"), t, &v);
  save_embeddings(d.file("o.npy"), t, &v);
  save_embeddings(d.file("o.bin"), t, &v);
  save_embeddings(d.file("o.txt"), t, &v);
  EXPECT_EQ(detect_format(d.file("o.safetensors")), FileFormat::kSafetensors);
  EXPECT_EQ(detect_format(d.file("o.npy")), FileFormat::kNpy);
  EXPECT_EQ(detect_format(d.file("o.bin")), FileFormat::kWord2VecBinary);
  EXPECT_EQ(detect_format(d.file("o.txt")), FileFormat::kWord2VecText);
  for (const char* name : {"o.safetensors", "o.bin", "o.txt"}) {
    auto e = load_embeddings(d.file(name));
    EXPECT_EQ(e.vocab.tokens(), v.tokens()) << name;
    EXPECT_EQ(e.table.row(1), (std::vector<float>{0.3f, 0.4f})) << name;
  }
  EXPECT_TRUE(load_embeddings(d.file("o.npy")).vocab.empty());
}

TEST(SaveEmbeddings, Word2VecNeedsOneWordPerRow) {
  TempDir d;
  auto t = EmbeddingTable::from_f32(2, 1, {1, 2});
  expect_error([&] { save_embeddings(d.file("o.bin"), t, nullptr); }, ErrorCode::kInvalidArgument,
               {d.file("o.bin"), "2 rows", "0 words"});
  SaveOptions o;
  o.format = FileFormat::kGguf;
  expect_error([&] { save_embeddings(d.file("o.gguf"), t, nullptr, o); }, ErrorCode::kUnsupported,
               {"gguf"});
}

}  // namespace
}  // namespace embedscope
