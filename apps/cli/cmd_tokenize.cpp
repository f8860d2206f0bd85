// embedscope tokenize: ids, readable pieces and byte offsets of a text under a model's tokenizer.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "command.h"
#include "common.h"
#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/handle/model_handle.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string text, file, model;
  bool json = false, allow_special = false;
};

int run(const Opts& o) {
  if (o.text.empty() == o.file.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either TEXT or --file F (exactly one)");
  std::string text = o.file.empty() ? o.text : read_small_file(o.file);
  // --model: a folder (tokenizer.json, or vocab.json + merges.txt), a tokenizer.json, a .gguf.
  std::shared_ptr<const Tokenizer> t = open_tokenizer(o.model);
  const Tokenizer& tok = *t;
  Encoding e = tok.encode(text, {.split_special_tokens = !o.allow_special});
  const std::vector<TokenId>& ids = e.ids;
  std::vector<size_t> offsets;
  for (const TokenSpan& s : e.offsets) offsets.push_back(s.begin);
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

// decode: ids -> text. The ids come as one comma- or space-separated list ("464,3290" or
// "464 3290"); --bytes writes the exact bytes (a token may end inside a UTF-8 character).
struct DecodeOpts {
  std::vector<std::string> ids;
  std::string model;
  bool json = false, bytes = false;
};

std::vector<TokenId> parse_decode_ids(const std::vector<std::string>& args, size_t vocab_size) {
  std::vector<TokenId> ids;
  for (const std::string& a : args) {
    size_t pos = 0;
    while (pos < a.size()) {
      size_t end = a.find_first_of(", ", pos);
      if (end == std::string::npos) end = a.size();
      std::string part = a.substr(pos, end - pos);
      pos = end + 1;
      if (part.empty()) continue;
      char* stop = nullptr;
      errno = 0;
      long long v = std::strtoll(part.c_str(), &stop, 10);
      if (stop != part.c_str() + part.size() || errno != 0)
        throw Error(ErrorCode::kInvalidArgument,
                    "decode: '" + part + "' is not a token id (an integer)");
      if (v < 0 || size_t(v) >= vocab_size)
        throw Error(ErrorCode::kOutOfRange, "decode: token id " + part + " is out of range [0, " +
                                                std::to_string(vocab_size) + ")");
      ids.push_back(TokenId(v));
    }
  }
  if (ids.empty()) throw Error(ErrorCode::kInvalidArgument, "decode: give at least one token id");
  return ids;
}

int run_decode(const DecodeOpts& o) {
  std::shared_ptr<const Tokenizer> t = open_tokenizer(o.model);
  const Tokenizer& tok = *t;
  std::vector<TokenId> ids = parse_decode_ids(o.ids, tok.vocab_size());
  if (o.json) {
    json pieces = json::array();
    for (TokenId id : ids) pieces.push_back(tok.display(id));
    std::string raw = tok.decode_bytes(ids);
    json bytes = json::array();
    for (unsigned char c : raw) bytes.push_back(int(c));
    print_json({{"ids", ids}, {"text", tok.decode(ids)}, {"pieces", pieces}, {"bytes", bytes}},
               false);
    return kExitOk;
  }
  std::string out = o.bytes ? tok.decode_bytes(ids) : tok.decode(ids);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!o.bytes) std::fputc('\n', stdout);
  return kExitOk;
}

Command reg_decode(
    "decode", "Token ids -> text (the inverse of tokenize)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<DecodeOpts>();
      app.add_option("IDS", o->ids, "token ids, comma- or space-separated")->required();
      app.add_option(
          "--model", o->model,
          "tokenizer: model folder, tokenizer.json or .gguf (default: GPT-2 from setup)");
      app.add_flag("--bytes", o->bytes,
                   "write the exact bytes (no U+FFFD for partial characters, no newline)");
      app.add_flag("--json", o->json, "print {\"ids\", \"text\", \"pieces\", \"bytes\"}");
      app.footer(
          "Text shows a partial UTF-8 character as U+FFFD; --bytes writes what the ids stand for "
          "exactly.\n"
          "Examples:\n"
          "  embedscope decode 464,3290          # \"The dog\"\n"
          "  embedscope decode 3644 --json\n"
          "  embedscope decode 447 --bytes | xxd");
      return [o] { return run_decode(*o); };
    },
    31);

Command reg(
    "tokenize", "Token ids, readable pieces and byte offsets of a text (GPT-2 BPE by default)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<Opts>();
      app.add_option("TEXT", o->text, "text to tokenize");
      app.add_option("--file", o->file, "read the text from a file instead");
      app.add_option(
          "--model", o->model,
          "tokenizer: model folder, tokenizer.json or .gguf (default: GPT-2 from setup)");
      app.add_flag("--allow-special", o->allow_special,
                   "match special tokens such as <|endoftext|> (default: plain text)");
      app.add_flag("--json", o->json,
                   "print {\"ids\": [...], \"pieces\": [...], \"offsets\": [...]}");
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
