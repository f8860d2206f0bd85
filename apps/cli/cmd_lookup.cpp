// embedscope lookup: rows of a table as vectors (ids -> vectors), the nn.Embedding forward.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "common.h"
#include "embedscope/api/lookup.h"
#include "embedscope/core/error.h"
#include "embedscope/formats/embeddings_file.h"

namespace embedscope::cli {
namespace {

struct LookupOpts {
  std::string file, model, word, ids, npy;
  bool json = false;
};

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
  const EmbeddingTable& t = h->table();
  api::LookupResult r = api::lookup(
      *h, {.word = o.ids.empty() ? o.word : "",
           .ids = o.ids.empty() ? std::vector<TokenId>{} : api::parse_id_list(o.ids, "--ids")});
  if (!o.npy.empty()) {
    std::vector<float> data;
    for (const auto& v : r.vectors) data.insert(data.end(), v.begin(), v.end());
    SaveOptions so;
    so.format = FileFormat::kNpy;
    save_embeddings(o.npy, EmbeddingTable::from_f32(r.ids.size(), t.dim(), std::move(data)),
                    nullptr, so);
    return 0;
  }
  if (o.json) {
    print_json(api::to_json(*h, r));
    return 0;
  }
  for (size_t i = 0; i < r.ids.size(); ++i) {
    std::printf("%d\t%s\t", r.ids[i], printable(h->words().raw_token(r.ids[i])).c_str());
    const std::vector<float>& v = r.vectors[i];
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
