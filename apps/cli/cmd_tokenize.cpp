// embedscope tokenize: ids, readable pieces and byte offsets of a text under a BPE vocabulary.
#include <cstdio>
#include <memory>

#include "command.h"
#include "common.h"
#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/tokenizer/bpe.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string text, file, model;
  bool json = false, allow_special = false;
};

// --model: a folder (tokenizer.json, or vocab.json + merges.txt), a tokenizer.json, or a .gguf.
BpeTokenizer load_tokenizer(const std::string& ref) {
  if (ref.empty()) return BpeTokenizer::gpt2_default();
  if (dir_exists(ref)) {
    std::optional<BpeTokenizer> tok = BpeTokenizer::find_in_dir(ref);
    if (!tok)
      throw Error(ErrorCode::kNotFound, ref + ": no tokenizer files (tokenizer.json, or vocab.json + "
                                              "merges.txt, or encoder.json + vocab.bpe)");
    return std::move(*tok);
  }
  if (ref.size() > 5 && ref.ends_with(".gguf")) return BpeTokenizer::from_gguf(ref);
  if (!file_exists(ref)) throw Error(ErrorCode::kNotFound, ref + ": no such file or folder");
  return BpeTokenizer::from_tokenizer_json(ref);
}

int run(const Opts& o) {
  if (o.text.empty() == o.file.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either TEXT or --file F (exactly one)");
  std::string text = o.file.empty() ? o.text : read_small_file(o.file);
  BpeTokenizer tok = load_tokenizer(o.model);
  std::vector<size_t> offsets;
  std::vector<TokenId> ids = tok.encode_with_offsets(text, &offsets, o.allow_special);
  if (o.json) {
    json pieces = json::array();
    for (TokenId id : ids) pieces.push_back(tok.display(id));
    print_json({{"ids", ids}, {"pieces", pieces}, {"offsets", offsets}}, false);
    return kExitOk;
  }
  std::printf("%zu tokens, %zu bytes\n", ids.size(), text.size());
  std::printf("%8s %8s  %s\n", "offset", "id", "piece");
  for (size_t i = 0; i < ids.size(); ++i)
    std::printf("%8zu %8d  %s%s\n", offsets[i], ids[i], tok.display(ids[i]).c_str(),
                tok.is_special(ids[i]) ? "  (special)" : "");
  return kExitOk;
}

Command reg(
    "tokenize", "Token ids, readable pieces and byte offsets of a text (GPT-2 BPE by default)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("TEXT", o->text, "text to tokenize");
      app.add_option("--file", o->file, "read the text from a file instead");
      app.add_option("--model", o->model,
                     "tokenizer: model folder, tokenizer.json or .gguf (default: GPT-2 from setup)");
      app.add_flag("--allow-special", o->allow_special,
                   "match special tokens such as <|endoftext|> (default: plain text)");
      app.add_flag("--json", o->json, "print {\"ids\": [...], \"pieces\": [...], \"offsets\": [...]}");
      app.footer(
          "Pieces are shown readably: a space as ␣, control bytes as <0x0A>, partial UTF-8 as hex "
          "bytes.\n"
          "Examples:\n"
          "  embedscope tokenize \" computer\"            # 1 token: 3644 ␣computer\n"
          "  embedscope tokenize --file notes.txt --json\n"
          "  embedscope tokenize --model ./my-model \"Hello world\"");
      return [o] { return run(*o); };
    },
    30);

}  // namespace
}  // namespace embedscope::cli
