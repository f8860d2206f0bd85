// load_model: resolve a reference (file, folder, hub id) to files, discover the embedding tensor
// from config.json and the names present, load only that tensor, and attach the vocabulary.
#include "embedscope/formats/model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/core/paths.h"
#include "embedscope/formats/gguf.h"
#include "embedscope/formats/hf_hub.h"
#include "embedscope/formats/pytorch.h"
#include "embedscope/formats/safetensors.h"
#include "model_vocab.h"

namespace embedscope {

namespace fs = std::filesystem;

namespace {

using json = nlohmann::json;

// Naming families, in the order a config-less search tries them.
struct Family {
  const char* label;
  std::vector<std::string> model_types;
  std::vector<std::string> names;  // exact names, preferred first
  std::string suffix;              // or any name ending with this (shortest wins)
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"GPT-2", {"gpt2"}, {"transformer.wte.weight", "wte.weight"}, ""},
      {"GPT-Neo/GPT-J",
       {"gpt_neo", "gptj", "codegen"},
       {"transformer.wte.weight", "wte.weight"},
       ""},
      {"Llama-style",
       {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "gemma", "gemma2",
        "gemma3_text", "phi3", "olmo", "stablelm", "starcoder2"},
       {"model.embed_tokens.weight", "embed_tokens.weight"},
       ""},
      {"OPT", {"opt"}, {"model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight"}, ""},
      {"T5", {"t5", "mt5", "umt5"}, {"shared.weight", "encoder.embed_tokens.weight"}, ""},
      {"BERT-style",
       {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "camembert", "deberta",
        "deberta-v2", "albert", "mpnet"},
       {},
       "embeddings.word_embeddings.weight"},
      {"GPT-NeoX", {"gpt_neox"}, {"gpt_neox.embed_in.weight", "embed_in.weight"}, ""},
      {"GGUF", {}, {"token_embd.weight"}, ""},
  };
  return f;
}

const std::vector<std::string>& output_names() {
  static const std::vector<std::string> n = {"lm_head.weight", "output.weight",
                                             "cls.predictions.decoder.weight", "embed_out.weight"};
  return n;
}

std::optional<std::string> match_family(const Family& fam, const std::set<std::string>& names) {
  for (const std::string& n : fam.names)
    if (names.count(n)) return n;
  if (!fam.suffix.empty()) {
    std::optional<std::string> best;
    for (const std::string& n : names)
      if (n.size() >= fam.suffix.size() &&
          n.compare(n.size() - fam.suffix.size(), std::string::npos, fam.suffix) == 0 &&
          (!best || n.size() < best->size()))
        best = n;
    return best;
  }
  return std::nullopt;
}

// Model types whose config class defaults tie_word_embeddings to false (transformers
// configuration_<type>.py); everything else inherits PretrainedConfig's true.
bool ties_by_default(const std::string& model_type) {
  static const std::set<std::string> untied = {"llama",     "mistral", "mixtral", "qwen2",
                                               "qwen2_moe", "phi3",    "olmo",    "stablelm",
                                               "gpt_neox",  "gptj"};
  return !untied.count(model_type);
}

// The tensors of a model: one file or the shards of an index.
class WeightSet {
 public:
  FileFormat format = FileFormat::kUnknown;
  std::vector<std::string> order;
  std::map<std::string, std::string> file_of;  // tensor name -> file
  std::set<std::string> names;

  void add(const std::string& name, const std::string& file) {
    if (names.insert(name).second) order.push_back(name);
    file_of[name] = file;
  }

  static WeightSet of_file(const std::string& path, FileFormat f) {
    WeightSet w;
    w.format = f;
    if (f == FileFormat::kSafetensors) {
      auto st = w.safetensors(path);
      for (const auto& t : st->tensors()) w.add(t.name, path);
    } else if (f == FileFormat::kPytorch) {
      auto pt = w.pytorch(path);
      for (const auto& t : pt->tensors()) w.add(t.name, path);
    }
    return w;
  }

  static WeightSet of_index(const std::string& dir, const std::string& index, FileFormat f) {
    std::string path = dir + "/" + index;
    json j = json::parse(read_small_file(path, size_t(64) << 20), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") ||
        !j["weight_map"].is_object())
      throw Error(ErrorCode::kCorrupt,
                  path + ": not a sharded-checkpoint index (no \"weight_map\" object)");
    WeightSet w;
    w.format = f;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it.value().is_string())
        throw Error(ErrorCode::kCorrupt,
                    path + ": weight_map entry '" + it.key() + "' is not a file name");
      std::string shard = it.value().get<std::string>();
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
        throw Error(ErrorCode::kCorrupt, path + ": weight_map entry '" + it.key() + "' names '" +
                                             shard + "' (expected a file name in the same folder)");
      w.add(it.key(), dir + "/" + shard);
    }
    return w;
  }

  std::shared_ptr<SafetensorsFile> safetensors(const std::string& file) {
    auto& p = st_[file];
    if (!p) p = std::make_shared<SafetensorsFile>(SafetensorsFile::open(file));
    return p;
  }
  std::shared_ptr<TorchCheckpoint> pytorch(const std::string& file) {
    auto& p = pt_[file];
    if (!p) p = std::make_shared<TorchCheckpoint>(TorchCheckpoint::open(file));
    return p;
  }

  LoadedEmbeddings load(const std::string& name) {
    const std::string& file = file_of.at(name);
    if (format == FileFormat::kSafetensors) {
      auto st = safetensors(file);
      if (!st->find(name))
        throw Error(ErrorCode::kCorrupt, file + ": the index lists tensor '" + name +
                                             "' in this shard but it is not there");
      return st->load_matrix(name);
    }
    auto pt = pytorch(file);
    if (!pt->find(name))
      throw Error(ErrorCode::kCorrupt, file + ": the index lists tensor '" + name +
                                           "' in this shard but it is not there");
    return pt->load_matrix(name);
  }

  // Whether two tensors share storage; nullopt when the format cannot tell.
  std::optional<bool> same_storage(const std::string& a, const std::string& b) {
    if (format != FileFormat::kPytorch || file_of.at(a) != file_of.at(b)) return std::nullopt;
    auto pt = pytorch(file_of.at(a));
    const TorchTensorInfo *ta = pt->find(a), *tb = pt->find(b);
    if (!ta || !tb) return std::nullopt;
    return pt->same_storage(*ta, *tb);
  }

  std::vector<std::string> matrix_candidates() {
    std::vector<std::string> out;
    for (const std::string& n : order) {
      const std::string& f = file_of[n];
      if (format == FileFormat::kSafetensors) {
        if (st_.count(f)) {
          const auto* t = st_[f]->find(n);
          if (!t || t->shape.size() != 2) continue;
        }
      } else if (pt_.count(f)) {
        const auto* t = pt_[f]->find(n);
        if (!t || t->shape.size() != 2) continue;
      }
      out.push_back(n);
    }
    return out;
  }

 private:
  std::map<std::string, std::shared_ptr<SafetensorsFile>> st_;
  std::map<std::string, std::shared_ptr<TorchCheckpoint>> pt_;
};

struct Config {
  bool present = false;
  std::string model_type;
  std::vector<std::string> architectures;
  std::optional<bool> tie_word_embeddings;
  std::optional<double> initializer_range;
  std::optional<uint64_t> vocab_size;
};

Config read_config(const std::string& dir) {
  Config c;
  std::string path = dir + "/config.json";
  if (!file_exists(path)) return c;
  json j = json::parse(read_small_file(path, size_t(16) << 20), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(ErrorCode::kCorrupt, path + ": not a JSON object");
  c.present = true;
  if (j.contains("model_type") && j["model_type"].is_string())
    c.model_type = j["model_type"].get<std::string>();
  if (j.contains("architectures") && j["architectures"].is_array())
    for (const auto& a : j["architectures"])
      if (a.is_string()) c.architectures.push_back(a.get<std::string>());
  if (j.contains("tie_word_embeddings") && j["tie_word_embeddings"].is_boolean())
    c.tie_word_embeddings = j["tie_word_embeddings"].get<bool>();
  if (j.contains("initializer_range") && j["initializer_range"].is_number())
    c.initializer_range = j["initializer_range"].get<double>();
  if (j.contains("vocab_size") && j["vocab_size"].is_number_unsigned())
    c.vocab_size = j["vocab_size"].get<uint64_t>();
  return c;
}

std::string fmt_double(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

struct Choice {
  std::string name, reason;
};

Choice choose_input(WeightSet& w, const Config& cfg, const std::string& where) {
  if (!cfg.model_type.empty()) {
    for (const Family& fam : families())
      if (std::find(fam.model_types.begin(), fam.model_types.end(), cfg.model_type) !=
          fam.model_types.end())
        if (auto n = match_family(fam, w.names))
          return {*n, "config model_type '" + cfg.model_type + "' (" + fam.label + ") -> " + *n};
  }
  for (const Family& fam : families())
    if (auto n = match_family(fam, w.names))
      return {*n, std::string(fam.label) + " tensor name " + *n};
  auto cands = w.matrix_candidates();
  if (cands.size() == 1) return {cands[0], "the only 2-D tensor"};
  std::string list;
  for (size_t k = 0; k < cands.size() && k < 12; ++k) list += (k ? ", " : "") + cands[k];
  throw Error(
      ErrorCode::kNotFound,
      where + ": cannot tell which tensor is the input embedding" +
          (cfg.model_type.empty() ? std::string() : " (model_type '" + cfg.model_type + "')") +
          "; pass --tensor NAME. Candidates: " + (list.empty() ? "none" : list) +
          (cands.size() > 12 ? ", ..." : ""));
}

std::optional<std::string> find_output(const WeightSet& w, const std::string& input) {
  for (const std::string& n : output_names())
    if (n != input && w.names.count(n)) return n;
  return std::nullopt;
}

void attach_vocab(Model& m, const std::string& dir) {
  m.n_search_rows = m.emb.table.n_rows();
  if (dir.empty()) return;
  m.tokenizer_files = detail::find_tokenizer_files(dir);
  if (!m.emb.vocab.empty()) return;  // the weights file carried its own vocabulary
  detail::HfVocab hv;
  if (!detail::read_hf_vocab(dir, &hv)) return;
  size_t rows = m.emb.table.n_rows();
  size_t n_tok = hv.tokens.size();
  if (n_tok > rows) {
    m.emb.warnings.push_back(dir + "/" + hv.source + " has " + std::to_string(n_tok) +
                             " tokens but the matrix has " + std::to_string(rows) +
                             " rows; tokens beyond the matrix are dropped");
    log_warning(m.emb.warnings.back());
    hv.tokens.resize(rows);
  } else if (n_tok < rows) {
    m.n_search_rows = n_tok;  // padded vocabulary: rows beyond the tokenizer are never tokens
  }
  Vocabulary v;
  v.reserve(rows);
  for (size_t k = 0; k < rows; ++k) {
    if (k < hv.tokens.size() && !hv.tokens[k].empty())
      v.add(std::move(hv.tokens[k]));
    else
      v.add("<unused_row_" + std::to_string(k) + ">");
  }
  m.emb.vocab = std::move(v);
}

// Loads from a set of weights (one file or shards), with an optional config beside them.
Model load_weights(WeightSet& w, const Config& cfg, const std::string& where,
                   const ModelOptions& opt) {
  Model m;
  m.model_type = cfg.model_type;
  Choice in;
  if (!opt.tensor.empty()) {
    if (!w.names.count(opt.tensor)) {
      std::string list;
      for (size_t k = 0; k < w.order.size() && k < 12; ++k) list += (k ? ", " : "") + w.order[k];
      throw Error(ErrorCode::kNotFound, where + ": no tensor '" + opt.tensor + "' (tensors: " +
                                            list + (w.order.size() > 12 ? ", ..." : "") + ")");
    }
    in = {opt.tensor, "--tensor " + opt.tensor};
  } else {
    in = choose_input(w, cfg, where);
  }
  std::optional<std::string> out = find_output(w, in.name);
  // Tied: identical storage is proof; otherwise config decides, as transformers does when it
  // ties the weights at load time; without a config, a missing lm_head means tied.
  std::string tie_reason;
  if (out) {
    if (auto same = w.same_storage(in.name, *out); same && *same) {
      m.tied = true;
      tie_reason = *out + " shares storage with " + in.name;
    }
  }
  if (!m.tied) {
    if (cfg.tie_word_embeddings) {
      m.tied = *cfg.tie_word_embeddings;
      tie_reason = std::string("config tie_word_embeddings = ") + (*m.tied ? "true" : "false");
    } else if (cfg.present && !cfg.model_type.empty()) {
      m.tied = ties_by_default(cfg.model_type);
      tie_reason = "default tie_word_embeddings for model_type '" + cfg.model_type + "'";
    } else if (!out && w.order.size() > 1) {
      m.tied = true;
      tie_reason = "no output embedding tensor (lm_head.weight): the output reuses the input";
    } else if (!out) {
      // One matrix and no config: an embedding file, not a model; tying is not a fact of it.
      tie_reason = "a single matrix without a model config";
    } else {
      m.tied = false;
      tie_reason = "separate " + *out;
    }
  }
  std::string chosen = in.name, reason = in.reason;
  if (opt.matrix == MatrixKind::kOutput && opt.tensor.empty()) {
    if (m.tied.value_or(!out)) {
      reason = "output embedding tied to the input (" + tie_reason + "): " + in.name;
    } else if (out) {
      chosen = *out;
      reason = "output embedding " + *out + " (" + tie_reason + ")";
    } else {
      throw Error(ErrorCode::kNotFound,
                  where + ": --matrix output: the model's embeddings are not tied (" + tie_reason +
                      ") and it has no lm_head.weight / output.weight");
    }
  }
  m.emb = w.load(chosen);
  m.path = w.file_of.at(chosen);
  m.tensor = chosen;
  m.tensor_reason = reason;
  m.init_hint = "normal:" + fmt_double(cfg.initializer_range.value_or(0.02));
  // Tables our trainer wrote start uniform in +-1 / dim (gensim's and fastText's range). Only the
  // shape of the distribution matters to a cosine baseline, not its width.
  if (!cfg.present && m.emb.metadata.count("embedscope.train.arch") && m.emb.table.dim())
    m.init_hint = "uniform:" + fmt_double(1.0 / double(m.emb.table.dim()));
  return m;
}

Model load_gguf(const std::string& path, const ModelOptions& opt) {
  GgufFile g = GgufFile::open(path);
  Model m;
  m.path = path;
  m.model_type = g.get_string("general.architecture").value_or("");
  bool has_out = g.find_tensor("output.weight") != nullptr;
  m.tied = !has_out;
  std::string name = "token_embd.weight", reason = "GGUF input embedding token_embd.weight";
  if (!opt.tensor.empty()) {
    name = opt.tensor;
    reason = "--tensor " + name;
  } else if (opt.matrix == MatrixKind::kOutput) {
    if (has_out)
      name = "output.weight", reason = "GGUF output embedding output.weight";
    else
      reason = "output embedding tied to the input (no output.weight): token_embd.weight";
  }
  m.emb = g.load_matrix(name);
  m.tensor = name;
  m.tensor_reason = reason;
  m.n_search_rows = m.emb.table.n_rows();
  if (!m.emb.vocab.empty()) {
    m.tokenizer_files.push_back("tokenizer.ggml.tokens (in the GGUF)");
    // GPT-2-style GGUF vocabularies keep vocab.json's byte-level spelling: store raw bytes.
    if (g.get_string("tokenizer.ggml.model").value_or("") == "gpt2") {
      Vocabulary v;
      for (const std::string& t : m.emb.vocab.tokens()) {
        std::string raw;
        v.add(detail::decode_byte_level(t, &raw) ? raw : t);
      }
      m.emb.vocab = std::move(v);
    }
  }
  m.init_hint = "normal:0.02";
  return m;
}

Model load_file(const std::string& path, const ModelOptions& opt) {
  FileFormat f = detect_format(path);
  std::string dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (f == FileFormat::kGguf) return load_gguf(path, opt);
  if (f == FileFormat::kSafetensors || f == FileFormat::kPytorch) {
    WeightSet w = WeightSet::of_file(path, f);
    // A config.json beside the file (a Hugging Face folder) informs discovery.
    // Tokenizer files beside it count only in a model folder (config.json, or the standard
    // weights file name), not beside any file that happens to share a folder.
    Config cfg = read_config(dir);
    std::string base = fs::path(path).filename().string();
    bool model_dir = cfg.present || base == "model.safetensors" || base == "pytorch_model.bin";
    Model m = load_weights(w, cfg, path, opt);
    attach_vocab(m, model_dir ? dir : std::string());
    return m;
  }
  LoadOptions lo;
  lo.tensor = opt.tensor;
  lo.strict_utf8 = opt.strict_utf8;
  Model m;
  m.emb = load_embeddings(path, lo);
  m.path = path;
  m.tensor = m.emb.tensor;
  m.tensor_reason = "the file's matrix (" + std::string(format_name(m.emb.format)) + ")";
  m.n_search_rows = m.emb.table.n_rows();
  // word2vec's own initialisation: uniform in +-0.5 / dim.
  m.init_hint =
      m.emb.table.dim() ? "uniform:" + fmt_double(0.5 / double(m.emb.table.dim())) : "normal:0.02";
  return m;
}

Model load_folder(const std::string& dir, const ModelOptions& opt) {
  Config cfg = read_config(dir);
  auto has = [&](const char* n) { return file_exists(dir + "/" + n); };
  std::optional<WeightSet> w;
  if (has("model.safetensors"))
    w = WeightSet::of_file(dir + "/model.safetensors", FileFormat::kSafetensors);
  else if (has("model.safetensors.index.json"))
    w = WeightSet::of_index(dir, "model.safetensors.index.json", FileFormat::kSafetensors);
  else if (has("pytorch_model.bin"))
    w = WeightSet::of_file(dir + "/pytorch_model.bin", FileFormat::kPytorch);
  else if (has("pytorch_model.bin.index.json"))
    w = WeightSet::of_index(dir, "pytorch_model.bin.index.json", FileFormat::kPytorch);
  if (!w) {
    // A folder with exactly one weights / embeddings file (GGUF, .npy, .vec, ...).
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file(ec) &&
          (ext == ".gguf" || ext == ".safetensors" || ext == ".npy" || ext == ".vec" ||
           ext == ".bin" || ext == ".pt" || ext == ".pth"))
        files.push_back(e.path().string());
    }
    if (files.size() == 1) {
      Model m = load_file(files[0], opt);
      m.dir = dir;
      if (m.emb.vocab.empty())
        attach_vocab(m, dir);
      else
        m.tokenizer_files = detail::find_tokenizer_files(dir);
      return m;
    }
    throw Error(
        ErrorCode::kNotFound,
        dir +
            ": no model weights found (expected model.safetensors, "
            "model.safetensors.index.json, pytorch_model.bin, pytorch_model.bin.index.json, "
            "or exactly one .gguf / .safetensors / .npy / .vec / .bin file; found " +
            std::to_string(files.size()) + " candidate files)");
  }
  Model m = load_weights(*w, cfg, dir, opt);
  m.dir = dir;
  attach_vocab(m, dir);
  return m;
}

}  // namespace

Model load_model(const std::string& ref, const ModelOptions& options) {
  Model m;
  if (file_exists(ref)) {
    m = load_file(ref, options);
  } else if (dir_exists(ref)) {
    m = load_folder(ref, options);
  } else if (looks_like_hub_id(ref)) {
    std::vector<std::string> looked;
    std::optional<std::string> snap = find_hub_snapshot(ref, &looked);
    if (!snap) {
      HubCacheDir cache = hf_hub_cache_dir();
      std::string where;
      for (size_t k = 0; k < looked.size(); ++k) where += (k ? ", " : "") + looked[k];
      std::string repo = hub_repo_candidates(ref).back();
      throw Error(
          ErrorCode::kNotFound,
          "model '" + ref +
              "' is neither a file nor a folder, and is not in the Hugging Face cache (" +
              cache.source + " = " + cache.path + "; looked in " + where +
              "). embedscope never downloads: fetch it with `huggingface-cli download " + repo +
              " config.json model.safetensors vocab.json merges.txt tokenizer.json` "
              "(or pytorch_model.bin instead of model.safetensors), or pass a file or folder path");
    }
    m = load_folder(*snap, options);
  } else {
    throw Error(ErrorCode::kNotFound,
                ref +
                    ": no such file or folder (and not a Hugging Face hub id); run `embedscope "
                    "info --help` for accepted model references");
  }
  m.ref = ref;
  return m;
}

}  // namespace embedscope
