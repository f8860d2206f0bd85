// The server's small pure helpers: the JSON nesting scan (checked before parsing), the API-key
// comparison and the loopback test that decides whether --api-key is required.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api_server.h"

namespace embedscope::server {
namespace {

TEST(JsonDepth, CountsNestingOutsideStringsOnly) {
  EXPECT_EQ(json_depth("{}", 64), 1u);
  EXPECT_EQ(json_depth(R"({"a": [[1], {"b": [2]}]})", 64), 4u);
  EXPECT_EQ(json_depth(R"({"a": "[[[[{{{{"})", 64), 1u);
  EXPECT_EQ(json_depth(R"({"a": "\"[[[[", "b": [1]})", 64),
            2u);  // escaped quote stays in the string
  EXPECT_EQ(json_depth(R"("just a string")", 64), 0u);
}

TEST(JsonDepth, AgreesWithNlohmannOnValidDocuments) {
  // The depth nlohmann sees, measured by walking the parsed value.
  std::function<size_t(const nlohmann::json&)> depth = [&](const nlohmann::json& j) -> size_t {
    if (!j.is_structured()) return 0;
    size_t d = 0;
    for (const auto& x : j) d = std::max(d, depth(x));
    return d + 1;
  };
  for (const char* doc :
       {R"([[], [[[]]], {"x": {"y": [1, "]]]"]}}])", R"({"k": 1})", R"([1, [2, [3, [4]]]])"}) {
    EXPECT_EQ(json_depth(doc, 64), depth(nlohmann::json::parse(doc))) << doc;
  }
}

TEST(JsonDepth, StopsEarlyAboveTheLimit) {
  std::string deep(1000000, '[');
  EXPECT_EQ(json_depth(deep, 64), 65u);
}

TEST(SecureEqual, ComparesWholeSecrets) {
  EXPECT_TRUE(secure_equal("Bearer abc", "Bearer abc"));
  EXPECT_FALSE(secure_equal("Bearer abc", "Bearer abd"));
  EXPECT_FALSE(secure_equal("Bearer ab", "Bearer abc"));
  EXPECT_FALSE(secure_equal("Bearer abc", "Bearer ab"));
  EXPECT_FALSE(secure_equal("", "x"));
  EXPECT_FALSE(secure_equal(std::string("a\0b", 3), "a"));
  EXPECT_TRUE(secure_equal("", ""));
}

TEST(IsLoopbackHost, OnlyLoopbackAddresses) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "localhost"})
    EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "1270.0.0.1",
                        "127.evil.example"})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

}  // namespace
}  // namespace embedscope::server
