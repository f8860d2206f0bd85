// Hugging Face hub cache lookup (see hf_hub.h). Read-only; no network.
#include "embedscope/formats/hf_hub.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "embedscope/core/paths.h"

namespace embedscope {

namespace fs = std::filesystem;

HubCacheDir hf_hub_cache_dir() {
  if (const char* c = std::getenv("HF_HUB_CACHE"); c && *c) return {c, "$HF_HUB_CACHE"};
  if (const char* h = std::getenv("HF_HOME"); h && *h)
    return {std::string(h) + "/hub", "$HF_HOME/hub"};
  const char* home = std::getenv("HOME");
  return {std::string(home ? home : "") + "/.cache/huggingface/hub", "~/.cache/huggingface/hub"};
}

bool looks_like_hub_id(std::string_view ref) {
  if (ref.empty() || ref.size() > 200) return false;
  size_t slash = ref.find('/');
  if (slash != std::string_view::npos && ref.find('/', slash + 1) != std::string_view::npos)
    return false;
  auto part_ok = [](std::string_view p) {
    if (p.empty() || p[0] == '.' || p[0] == '-') return false;
    for (char c : p)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
        return false;
    return p != "." && p != "..";
  };
  if (slash == std::string_view::npos) return part_ok(ref);
  return part_ok(ref.substr(0, slash)) && part_ok(ref.substr(slash + 1));
}

std::vector<std::string> hub_repo_candidates(std::string_view ref) {
  std::vector<std::string> out{std::string(ref)};
  if (ref.find('/') != std::string_view::npos) return out;
  // Legacy ids the hub redirects to an organisation since 2024.
  if (ref == "gpt2" || ref == "gpt2-medium" || ref == "gpt2-large" || ref == "gpt2-xl")
    out.push_back("openai-community/" + std::string(ref));
  else if (ref == "distilgpt2")
    out.push_back("distilbert/distilgpt2");
  else if (ref.rfind("bert-base-", 0) == 0 || ref.rfind("bert-large-", 0) == 0)
    out.push_back("google-bert/" + std::string(ref));
  else if (ref.rfind("roberta-", 0) == 0)
    out.push_back("FacebookAI/" + std::string(ref));
  else if (ref.rfind("t5-", 0) == 0)
    out.push_back("google-t5/" + std::string(ref));
  return out;
}

namespace {

bool has_weights(const fs::path& dir) {
  static const char* kNames[] = {"model.safetensors", "model.safetensors.index.json",
                                 "pytorch_model.bin", "pytorch_model.bin.index.json"};
  for (const char* n : kNames)
    if (file_exists((dir / n).string())) return true;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".gguf") return true;
  return false;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::optional<std::string> find_hub_snapshot(std::string_view ref,
                                             std::vector<std::string>* looked) {
  HubCacheDir cache = hf_hub_cache_dir();
  for (const std::string& repo : hub_repo_candidates(ref)) {
    std::string folder = "models--";
    for (char c : repo) folder += c == '/' ? std::string("--") : std::string(1, c);
    fs::path root = fs::path(cache.path) / folder;
    if (looked) looked->push_back(root.string());
    if (!dir_exists(root.string())) continue;
    fs::path snaps = root / "snapshots";
    if (file_exists((root / "refs" / "main").string())) {
      std::string commit;
      try {
        commit = trim(read_small_file((root / "refs" / "main").string(), 256));
      } catch (...) {
        commit.clear();  // an unreadable ref falls back to scanning the snapshots
      }
      if (!commit.empty() && commit.find('/') == std::string::npos && has_weights(snaps / commit))
        return (snaps / commit).string();
    }
    std::error_code ec;
    std::optional<fs::path> best;
    fs::file_time_type best_time{};
    for (const auto& e : fs::directory_iterator(snaps, ec)) {
      if (!e.is_directory(ec) || !has_weights(e.path())) continue;
      auto t = fs::last_write_time(e.path(), ec);
      if (!best || t > best_time) best = e.path(), best_time = t;
    }
    if (best) return best->string();
  }
  return std::nullopt;
}

}  // namespace embedscope
