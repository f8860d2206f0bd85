// embedscope tokenize: ids, readable pieces and byte offsets of a text under a BPE vocabulary;
// embedscope decode: ids -> text (api/tokenizer_ops.h).
#include "common.h"
#include "embedscope/api/tokenizer_ops.h"
#include "embedscope/core/paths.h"
#include "embedscope/handle/model_handle.h"
#include "embedscope/tokenizer/tokenizer.h"

namespace embedscope::cli {
namespace {

struct Opts {
  std::string text, file, model;
  bool json = false, allow_special = false;
};

int run(Opts& o) {
  if (o.text.empty() == o.file.empty())
    throw Error(ErrorCode::kInvalidArgument, "give either TEXT or --file F (exactly one)");
  std::string text = o.file.empty() ? o.text : read_small_file(o.file);
  std::shared_ptr<const Tokenizer> tok = open_tokenizer(o.model);
  api::TokenizeResult r = api::tokenize(*tok, text, o.allow_special);
  o.json ? print_json(api::to_json(r), false) : print_text(api::to_text(*tok, r, text.size()));
  return kExitOk;
}

// The ids come as one comma- or space-separated list ("464,3290" or "464 3290"); --bytes
// writes the exact bytes (a token may end inside a UTF-8 character).
struct DecodeOpts {
  std::vector<std::string> ids;
  std::string model;
  bool json = false, bytes = false;
};

int run_decode(DecodeOpts& o) {
  std::shared_ptr<const Tokenizer> tok = open_tokenizer(o.model);
  std::vector<TokenId> ids = api::parse_token_ids(o.ids, tok->vocab_size());
  if (o.json) {
    print_json(api::decode_json(*tok, ids), false);
    return kExitOk;
  }
  print_text(o.bytes ? tok->decode_bytes(ids) : tok->decode(ids) + "\n");
  return kExitOk;
}

void run_decode_flags(CLI::App& app, DecodeOpts& o) {
  app.add_option("IDS", o.ids, "token ids, comma- or space-separated")->required();
  add_tokenizer_flag(app, o.model);
  app.add_flag("--bytes", o.bytes,
               "write the exact bytes (no U+FFFD for partial characters, no newline)");
  add_json_flag(app, o.json, "print {\"ids\", \"text\", \"pieces\", \"bytes\"}");
}

Cmd<DecodeOpts> reg_decode("decode", run_decode_flags, run_decode);

void flags(CLI::App& app, Opts& o) {
  app.add_option("TEXT", o.text, "text to tokenize");
  app.add_option("--file", o.file, "read the text from a file instead");
  add_tokenizer_flag(app, o.model);
  app.add_flag("--allow-special", o.allow_special,
               "match special tokens such as <|endoftext|> (default: plain text)");
  app.add_flag("--json", o.json, "print {\"ids\": [...], \"pieces\": [...], \"offsets\": [...]}");
}

Cmd<Opts> reg("tokenize", flags, run);

}  // namespace
}  // namespace embedscope::cli
