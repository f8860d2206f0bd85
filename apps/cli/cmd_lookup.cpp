// embedscope lookup: rows of a table as vectors (ids -> vectors), the nn.Embedding forward.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "common.h"
#include "embedscope/core/error.h"
#include "embedscope/formats/embeddings_file.h"

namespace embedscope::cli {
namespace {

struct LookupOpts {
  std::string file, model, word, ids, npy;
  bool json = false;
};

std::vector<TokenId> parse_ids(const std::string& s, size_t n_rows) {
  std::vector<TokenId> ids;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    std::string_view part(s.data() + pos, comma - pos);
    long long v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size())
      throw Error(ErrorCode::kInvalidArgument,
                  "--ids: '" + std::string(part) + "' is not an integer");
    if (v < 0 || size_t(v) >= n_rows)
      throw Error(ErrorCode::kOutOfRange, "--ids: id " + std::to_string(v) + " out of range [0, " +
                                              std::to_string(n_rows) + ")");
    ids.push_back(TokenId(v));
    pos = comma + 1;
  }
  return ids;
}

int run_lookup(const LookupOpts& oin) {
  LookupOpts o = oin;
  // With --model every positional is the word: `lookup --model FILE war`.
  if (!o.model.empty() && !o.file.empty()) {
    if (!o.word.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "give the model once: either FILE or --model, then WORD");
    o.word = o.file;
    o.file.clear();
  }
  // One positional that is no path and no --ids: the word, on the default model
  // (`lookup computer`).
  if (o.model.empty() && !o.file.empty() && o.word.empty() && o.ids.empty() &&
      !std::filesystem::exists(o.file)) {
    o.word = o.file;
    o.file.clear();
  }
  std::string ref = !o.model.empty() ? o.model : o.file;
  ModelHandlePtr h = open_handle(ref);
  const Model& m = h->model();
  const auto& t = m.emb.table;
  std::vector<TokenId> ids;
  if (!o.ids.empty()) {
    ids = parse_ids(o.ids, t.n_rows());
  } else {
    if (o.word.empty()) throw Error(ErrorCode::kInvalidArgument, "give a WORD or --ids");
    // The one word -> rows lookup (handle/word_lookup.h): a word of several tokens gives the
    // rows of its pieces.
    std::optional<ResolvedWord> r = h->words().resolve(o.word);
    if (!r)
      throw Error(ErrorCode::kNotFound, "'" + o.word + "' is not in the vocabulary of " + m.path +
                                            " (" + std::to_string(m.emb.vocab.size()) + " entries" +
                                            (h->words().has_tokenizer() ? "" : ", no tokenizer") +
                                            ")");
    ids = r->ids;
  }
  if (!o.npy.empty()) {
    std::vector<float> data(ids.size() * t.dim());
    for (size_t i = 0; i < ids.size(); ++i) t.row_f32(size_t(ids[i]), data.data() + i * t.dim());
    SaveOptions so;
    so.format = FileFormat::kNpy;
    save_embeddings(o.npy, EmbeddingTable::from_f32(ids.size(), t.dim(), std::move(data)), nullptr,
                    so);
    return 0;
  }
  auto token_of = [&](TokenId id) { return h->words().raw_token(id); };
  if (o.json) {
    json rows = json::array();
    for (TokenId id : ids) {
      json v = json::array();
      for (float x : t.row(size_t(id))) v.push_back(finite_or_null(x));
      rows.push_back({{"id", id}, {"token", token_of(id)}, {"vector", v}});
    }
    print_json({{"dim", t.dim()}, {"rows", rows}});
    return 0;
  }
  for (TokenId id : ids) {
    std::printf("%d\t%s\t", id, printable(token_of(id)).c_str());
    auto v = t.row(size_t(id));
    for (size_t j = 0; j < v.size(); ++j) std::printf(j ? " %.9g" : "%.9g", double(v[j]));
    std::printf("\n");
  }
  return 0;
}

Command reg(
    "lookup", "Look rows up: a word or ids -> vectors (like nn.Embedding's forward)",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<LookupOpts>();
      app.add_option("FILE", o->file, "embedding file or model (default: --model)");
      app.add_option("WORD", o->word, "word to look up");
      app.add_option("--model,-m", o->model, "model reference (file, folder, hub id)");
      app.add_option("--ids", o->ids, "comma-separated row ids, e.g. 1,2,3");
      app.add_flag("--json", o->json, "print JSON {dim, rows:[{id, token, vector}]}");
      app.add_option("--npy", o->npy, "write the rows as a float32 .npy file instead");
      app.footer(
          "Examples:\n  embedscope lookup vectors.bin king\n"
          "  embedscope lookup computer            # the default model's row(s)\n"
          "  embedscope lookup model.safetensors --ids 1,2,3 --npy rows.npy");
      return [o] { return run_lookup(*o); };
    },
    30);

struct ConvertOpts {
  std::string in, out, to, tensor;
};

int run_convert(const ConvertOpts& o) {
  ModelOptions mo;
  mo.tensor = o.tensor;
  Model m = load_model(o.in, mo);
  SaveOptions so;
  if (!o.to.empty()) so.format = parse_format_name(o.to);
  const Vocabulary* vocab = m.emb.vocab.empty() ? nullptr : &m.emb.vocab;
  save_embeddings(o.out, m.emb.table, vocab, so);
  std::fprintf(stderr, "wrote %s: %zu x %zu\n", o.out.c_str(), m.emb.table.n_rows(),
               m.emb.table.dim());
  return 0;
}

Command reg_convert(
    "convert", "Convert an embedding matrix between formats",
    [](CLI::App& app) -> Runner {
      auto o = std::make_shared<ConvertOpts>();
      app.add_option("IN", o->in, "input file or model")->required();
      app.add_option("OUT", o->out, "output file (written atomically)")->required();
      app.add_option("--to", o->to,
                     "safetensors | npy | word2vec | word2vec-bin (default: from OUT's extension)");
      app.add_option("--tensor", o->tensor, "tensor to take from IN");
      app.footer(
          "Example:\n  embedscope convert vectors.bin vectors.safetensors\n"
          "  embedscope convert model.safetensors out.txt --to word2vec");
      return [o] { return run_convert(*o); };
    },
    40);

}  // namespace
}  // namespace embedscope::cli
