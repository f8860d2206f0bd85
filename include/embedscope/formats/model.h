// Model references: a file, a Hugging Face model folder, or a hub id in the Hugging Face cache,
// resolved to the one embedding matrix a user asks for (input embedding by default).
//
// Resolution order for `ref`:
//   1. an existing file: any format of embeddings_file.h, a PyTorch zip checkpoint or a GGUF;
//   2. an existing folder: a Hugging Face model folder (config.json, model.safetensors or its
//      sharded index, or pytorch_model.bin), or an embedscope model folder;
//   3. a hub id ("gpt2", "org/name") looked up in $HF_HUB_CACHE, else $HF_HOME/hub, else
//      ~/.cache/huggingface/hub (models--ORG--NAME/snapshots/<rev>, refs/main preferred).
//      Never touches the network: when absent, Error(kNotFound) says where it looked and which
//      files to download.
//
// Tensor discovery (docs/formats.md "Model references"): config.json model_type picks a naming
// family (GPT-2 transformer.wte.weight / wte.weight, Llama-style model.embed_tokens.weight, BERT
// *.embeddings.word_embeddings.weight, T5 shared.weight, OPT model.decoder.embed_tokens.weight,
// GGUF token_embd.weight, ...), then the names present decide, then the only 2-D tensor.
// MatrixKind::kOutput takes lm_head.weight / output.weight unless the weights are tied.
//
// Errors: Error(kNotFound) for a missing file / tensor / hub id (listing what exists or where it
// looked), and the readers' kCorrupt / kUnsupported errors for bad files.
//
//   Model m = load_model("gpt2");
//   m.emb.table.n_rows();   // 50257
//   m.tensor;               // "transformer.wte.weight"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "embedscope/formats/embeddings_file.h"

namespace embedscope {

enum class MatrixKind { kInput, kOutput };

struct ModelOptions {
  MatrixKind matrix = MatrixKind::kInput;
  std::string tensor;  // explicit tensor name (overrides discovery)
  bool strict_utf8 = false;
};

struct Model {
  LoadedEmbeddings emb;       // the chosen matrix; emb.vocab filled when known
  std::string ref;            // what the user passed
  std::string path;           // the file the matrix came from
  std::string dir;            // the model folder ("" for a bare file)
  std::string model_type;     // config.json model_type / GGUF general.architecture, or ""
  std::string tensor;         // chosen tensor name
  std::string tensor_reason;  // why that tensor ("config model_type gpt2 -> ...")
  std::optional<bool> tied;   // input and output embeddings shared: identical storage, else
                              // config tie_word_embeddings (or the model type's default),
                              // else "no lm_head tensor" means tied
  std::vector<std::string> tokenizer_files;  // tokenizer files found beside the weights
  size_t n_search_rows = 0;                  // rows eligible for search (padded rows beyond the
                             // tokenizer are excluded); == table rows when no tokenizer
  std::string init_hint;  // init distribution for a random baseline: "normal:<config
                          // initializer_range>", default "normal:0.02" (GPT-2's);
                          // word2vec-style files "uniform:<0.5/dim>" (word2vec.c's),
                          // tables embedscope trained "uniform:<1/dim>"
};

Model load_model(const std::string& ref, const ModelOptions& options = {});

}  // namespace embedscope
