// What the embedscope CLI and each of its commands are for and how they are used: the summary
// (or longer description) and the examples and notes --help ends with; the program's entry
// first, then one per command in the order `embedscope --help` lists them. The options
// themselves are described beside their structs (api/options.h).
#pragma once

#include <string_view>

#include "embedscope/core/error.h"

namespace embedscope::api {

struct CommandDoc {
  std::string_view name;     // "index build" for a subcommand
  std::string_view summary;  // shown in the command list and above the usage
  std::string_view footer;   // examples and notes after the options
};

// clang-format off
inline constexpr CommandDoc kCommandDocs[] = {
    {"embedscope",  // the program itself (`embedscope --help`)
     "embedscope: load, tokenize, train and probe token embedding matrices.\n"
     "\n"
     "Example:\n"
     "  embedscope explore computer            # neighbours of 'computer', labelled\n"
     "  embedscope neighbors vectors.bin king -k 5 --json\n"
     "\n"
     "Exit codes: 0 ok, 1 internal error, 2 bad arguments, 3 not found, 4 corrupt file,\n"
     "5 unsupported feature, 6 I/O error, 7 id out of range.",
     ""},
    {"explore",
     "Labelled nearest neighbours of a word, against a random baseline",
     "Labels: variant (same word up to case/space/markers, same WordNet lemma or Snowball stem,\n"
     "WordNet derivation), synonym (shared synset), related (WordNet path of <= 2 hops or a "
     "shared\n"
     "hypernym <= 2 levels up), noise (special, number/punct, subword, rare, unrelated). See "
     "docs/explore.md.\n"
     "\n"
     "Examples:\n"
     "  embedscope explore computer\n"
     "  embedscope explore king --model vectors.bin -k 5 --json\n"
     "  embedscope explore --sample 50 --model gpt2"},
    {"info",
     "Show what a file, model folder or hub id contains: the embedding tensor chosen and why, "
     "shape, dtype or quantisation, vocabulary, tied input/output embeddings, tokenizer "
     "files, row-norm statistics and load time.\n"
     "\n"
     "Accepted references: .safetensors, .bin/.pt (PyTorch zip), .gguf, .npy, word2vec / "
     "GloVe / fastText .vec files; a Hugging Face model folder; a hub id (gpt2, org/name) "
     "found in the local Hugging Face cache (never downloaded).",
     "Examples:\n"
     "  embedscope info model.safetensors\n"
     "  embedscope info --model gpt2 --json\n"
     "  embedscope info --model ./llama-folder --matrix output\n"
     "  embedscope info model.gguf --tensor output.weight"},
    {"neighbors",
     "Nearest rows of a word, row id, vector or expression",
     "Examples:\n"
     "  embedscope neighbors vectors.bin king -k 5\n"
     "  embedscope neighbors --model gpt2 computer --class word --json\n"
     "  embedscope neighbors vectors.bin --expr \"king - man + woman\" --mode fast\n"
     "  embedscope neighbors vectors.bin --batch words.txt --json --threads 2\n"
     "  mpirun -np 4 embedscope neighbors big.npy --batch words.txt --json  (row shards)\n"
     "JSON: {\"query\", \"neighbors\": [{\"id\", \"token\", \"score\"}...], \"mode\", \"elapsed_ms\"},\n"
     "sorted by score descending, ties by id (L2: score = -distance)."},
    {"analogy",
     "A is to B as C is to ? (3CosAdd / 3CosMul, gensim semantics)",
     "Example:\n"
     "  embedscope analogy vectors.bin man king woman -k 5 --json     # queen ...\n"
     "Inputs are unit-normalised and excluded from the answer (--include-query keeps them).\n"
     "JSON: {\"a\",\"b\",\"c\",\"method\",\"mode\",\"neighbors\":[{\"id\",\"token\",\"score\"}...],\"elapsed_ms\"}"},
    {"similarity",
     "Cosine similarity of two words",
     "Example:\n"
     "  embedscope similarity vectors.bin king queen --json\n"
     "JSON: {\"a\", \"b\", \"similarity\"} (words split into pieces use the mean of their rows)"},
    {"rank",
     "Rank of B among the nearest neighbours of A (gensim rank)",
     "Example:\n"
     "  embedscope rank vectors.bin king queen --json\n"
     "rank = 1 + the number of rows (not A's own) more similar to A than B is.\n"
     "JSON: {\"a\", \"b\", \"rank\", \"similarity\"}"},
    {"doesnt-match",
     "Which word does not belong with the others (gensim doesnt_match)",
     "Example:\n"
     "  embedscope doesnt-match vectors.bin breakfast lunch dinner car --json\n"
     "JSON: {\"words\", \"odd_one_out\", \"scores\": [{\"word\", \"score\"}...]}"},
    {"index",
     "Build or query an HNSW index (approximate cosine neighbours)",
     "Examples:\n"
     "  embedscope index build --model vectors.bin -o v.hnsw\n"
     "  embedscope index query --model vectors.bin --index v.hnsw king --check-recall"},
    {"index build",
     "Build an index for a model and write it atomically",
     "Example:\n"
     "  embedscope index build --model vectors.bin -o vectors.hnsw --threads 2\n"
     "The file stores the model's content hash; queries refuse it when the model changed."},
    {"index query",
     "Nearest neighbours from an index",
     "Example:\n"
     "  embedscope index query --model vectors.bin --index vectors.hnsw king --ef 100 "
     "--check-recall --json\n"
     "JSON: {\"query\", \"neighbors\", \"mode\": \"hnsw\", \"elapsed_ms\", \"recall\", \"missed\"}"},
    {"lookup",
     "Look rows up: a word or ids -> vectors (like nn.Embedding's forward)",
     "Examples:\n"
     "  embedscope lookup vectors.bin king\n"
     "  embedscope lookup computer            # the default model's row(s)\n"
     "  embedscope lookup model.safetensors --ids 1,2,3 --npy rows.npy"},
    {"tokenize",
     "Token ids, readable pieces and byte offsets of a text (GPT-2 BPE by default)",
     "Pieces are shown readably: a space as ␣, control bytes as <0x0A>, partial UTF-8 as hex "
     "bytes.\n"
     "Examples:\n"
     "  embedscope tokenize \" computer\"            # 1 token: 3644 ␣computer\n"
     "  embedscope tokenize --file notes.txt --json\n"
     "  embedscope tokenize --model ./my-model \"Hello world\""},
    {"decode",
     "Token ids -> text (the inverse of tokenize)",
     "Text shows a partial UTF-8 character as U+FFFD; --bytes writes what the ids stand for "
     "exactly.\n"
     "Examples:\n"
     "  embedscope decode 464,3290          # \"The dog\"\n"
     "  embedscope decode 3644 --json\n"
     "  embedscope decode 447 --bytes | xxd"},
    {"convert",
     "Convert an embedding matrix between formats",
     "Example:\n"
     "  embedscope convert vectors.bin vectors.safetensors\n"
     "  embedscope convert model.safetensors out.txt --to word2vec"},
    {"stats",
     "Norms, anisotropy, hubness and PCA spectrum of an embedding table",
     "Examples:\n"
     "  embedscope stats vectors.bin\n"
     "  embedscope stats gpt2 --json"},
    {"train",
     "Train word2vec embeddings (skip-gram / CBOW) over words or token ids",
     "Examples:\n"
     "  embedscope train corpus.txt -o vectors.safetensors --dim 100 --epochs 5\n"
     "  embedscope train books/ -o gpt2-sg.safetensors --tokenizer gpt2 --threads 2\n"
     "  embedscope train corpus.txt -o v.bin --checkpoint-every 1000000 --resume\n"
     "  mpirun -np 4 embedscope train corpus.txt -o v.safetensors --threads 1\n"
     "\n"
     "Under mpirun (or srun) the processes train one model: each reads its share of the\n"
     "corpus, rows are synchronised by MPI_Allreduce, rank 0 writes the output and the\n"
     "checkpoints (at epoch ends; resume on any number of processes). --threads defaults\n"
     "to the host's cores divided by its ranks. docs/distributed.md has the details.\n"
     "\n"
     "Progress goes to stderr: one updating line on a terminal, JSON lines otherwise\n"
     "(--quiet for none). Safetensors output stores the vocabulary and per-row counts."},
    {"compare",
     "Neighbour overlap@k and Procrustes-aligned drift between two tables",
     "Examples:\n"
     "  embedscope compare before.bin after.bin -k 10\n"
     "  embedscope compare a.vec b.vec --json"},
    {"eval",
     "Analogy / word-similarity evaluation with gensim's semantics",
     "Examples:\n"
     "  embedscope eval analogy questions-words.txt --model vectors.bin\n"
     "  embedscope eval similarity wordsim353.tsv --model vectors.bin --json"},
    {"project",
     "PCA or UMAP coordinates of every row (for plotting), as .npy",
     "Examples:\n"
     "  embedscope project --method pca -o pca.npy\n"
     "  embedscope project gpt2 --method umap --dims 2 -o umap.npy\n"
     "  python3 -c \"import numpy; print(numpy.load('umap.npy').shape)\"   # (50257, 2)"},
    {"serve",
     "HTTP JSON API over one model (embedscope serve --help)",
     "Options: see `embedscope serve --help` (handled by embedscope-serve)."},
};
// clang-format on

// The line a front end adds under an error of this code ("" for none): where to look next.
constexpr std::string_view error_hint(ErrorCode c) {
  if (c == ErrorCode::kCorrupt)
    return "the file is damaged or not in the format it appears to be; `embedscope info FILE` "
           "shows what was detected";
  if (c == ErrorCode::kUnsupported) return "see docs/formats.md for what each reader supports";
  return "";
}

// The entry named `name`, or nullptr.
constexpr const CommandDoc* command_doc(std::string_view name) {
  for (const CommandDoc& d : kCommandDocs)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace embedscope::api
