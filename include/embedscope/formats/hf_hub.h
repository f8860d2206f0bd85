// Finding a model in the local Hugging Face hub cache. Never touches the network.
//
// Cache layout (huggingface_hub file_download.py / "Manage huggingface_hub cache-system"):
//   <cache>/models--<org>--<name>/
//     blobs/<sha>                       the file contents
//     refs/main                         the commit hash `main` pointed to when downloaded
//     snapshots/<commit>/<file>         symlinks into ../../blobs
// <cache> is $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
//
// Snapshot choice: the one refs/main names when it exists; otherwise the only snapshot; otherwise
// the most recently modified one. A snapshot counts only when it holds a weights file
// (model.safetensors[.index.json], pytorch_model.bin[.index.json] or a .gguf).
//
//   std::vector<std::string> looked;
//   std::optional<std::string> dir = find_hub_snapshot("gpt2", &looked);
//   // ~/.cache/huggingface/hub/models--openai-community--gpt2/snapshots/<commit>
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace embedscope {

// The hub cache folder and a description of where it came from ("$HF_HUB_CACHE").
struct HubCacheDir {
  std::string path;
  std::string source;
};
HubCacheDir hf_hub_cache_dir();

// True for strings shaped like a hub id: "name" or "org/name", each part of [A-Za-z0-9._-],
// not starting with '.' or '-'.
bool looks_like_hub_id(std::string_view ref);

// Repo ids to try for `ref`, in order: "gpt2" -> {"gpt2", "openai-community/gpt2"}; the
// canonical org is added for the legacy un-namespaced ids (gpt2*, distilgpt2, bert-base-*).
std::vector<std::string> hub_repo_candidates(std::string_view ref);

// Snapshot folder of the first candidate found in the cache, or std::nullopt; every folder
// examined is appended to `looked` (for the error message).
std::optional<std::string> find_hub_snapshot(std::string_view ref,
                                             std::vector<std::string>* looked);

}  // namespace embedscope
