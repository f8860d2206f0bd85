// Query files for api::neighbors: a vector as text, a batch of word queries (api/neighbors.h).
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "embedscope/api/neighbors.h"
#include "embedscope/core/error.h"

namespace embedscope::api {

std::vector<float> read_query_vector(const std::string& path, size_t dim) {
  std::string text;
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::kNotFound, path + ": cannot open vector file");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (char& c : text)
    if (c == ',' || c == '[' || c == ']') c = ' ';
  std::istringstream ss(text);
  std::vector<float> v;
  std::string tok;
  while (ss >> tok) {
    char* end = nullptr;
    float x = std::strtof(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || !std::isfinite(x))
      throw Error(ErrorCode::kInvalidArgument, path + ": value " + std::to_string(v.size()) + " '" +
                                                   tok + "' is not a finite number");
    v.push_back(x);
  }
  if (v.size() != dim)
    throw Error(ErrorCode::kInvalidArgument, path + ": " + std::to_string(v.size()) +
                                                 " values, the model's dim is " +
                                                 std::to_string(dim));
  return v;
}

std::vector<NeighborQuery> read_batch_queries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kNotFound, path + ": cannot open batch file");
  std::vector<NeighborQuery> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.push_back(NeighborQuery::word(line));
  }
  if (out.empty()) throw Error(ErrorCode::kInvalidArgument, path + ": no query lines");
  return out;
}

}  // namespace embedscope::api
