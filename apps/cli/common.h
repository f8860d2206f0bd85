// Helpers shared by the subcommands: the binder of the library's option descriptors, the flags
// that are the CLI's own (--model, --threads, --json, a search's positionals), model loading,
// printing, progress lines, exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "command.h"
#include "embedscope/api/command_docs.h"
#include "embedscope/api/options.h"
#include "embedscope/api/stats.h"
#include "embedscope/api/text_output.h"
#include "embedscope/core/error.h"
#include "embedscope/core/progress.h"
#include "embedscope/formats/model.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope::cli {

using json = nlohmann::json;

// The visitor of api::describe(): one CLI11 option per descriptor, on `app`.
struct Bind {
  CLI::App& app;
  template <class T>
  CLI::Option* operator()(std::string_view names, T& m, std::string_view help,
                          api::OptionSpec s = {}) {
    std::string n(names), h(help);
    if constexpr (std::is_same_v<T, bool>)
      return s.negate ? app.add_flag_callback(
                            n, [&m] { m = false; }, h)
                      : app.add_flag(n, m, h);
    else
      return checked(app.add_option(n, m, h), s, std::is_integral_v<T>);
  }
  // Stored as text, parsed by `set` after the command line (apply_text_options()), so that
  // its Error reaches main's handler.
  CLI::Option* text(std::string_view names, std::string_view help,
                    std::function<void(const std::string&)> set);
  static CLI::Option* checked(CLI::Option* o, const api::OptionSpec& s, bool integral);
};
// Runs the parsers of the text options that were given (main, before the command).
void apply_text_options();
// Adds the (sub)command `name` of `parent` with its summary and footer from api/command_docs.h.
CLI::App* add_command(CLI::App& parent, const std::string& name);

// The repeated flags, one help text each.
CLI::Option* add_model_flag(CLI::App& app, std::string& ref);  // --model,-m
CLI::Option* add_threads_flag(CLI::App& app, size_t& n);       // --threads,-t (0: all cores)
CLI::Option* add_json_flag(CLI::App& app, bool& on, const std::string& help = "");
CLI::Option* add_tokenizer_flag(CLI::App& app, std::string& ref);  // tokenize / decode --model

// Prints JSON to stdout; invalid UTF-8 in strings is replaced (U+FFFD), never thrown.
void print_json(const json& j, bool pretty = true);
// Prints text as is to stdout (the api's to_text lines).
void print_text(const std::string& s);
// Prints r's document (--json) or its text.
template <class R>
int print(bool as_json, const R& r, auto&&... ctx) {
  as_json ? print_json(api::to_json(ctx..., r)) : print_text(api::to_text(ctx..., r));
  return 0;
}
// Opens a handle on `ref` ("" = the default model, with a progress line while it trains on
// first use) with HandleOptions::tokenizer; sets the process's thread count first when
// threads > 0.
ModelHandlePtr open_handle(const std::string& ref, const std::string& tokenizer = "auto",
                           size_t threads = 0);

// A search command's own flags (neighbors, analogy, similarity, rank, doesnt-match, index):
// the positionals "[FILE] words...", --model, --threads, --json.
struct SearchFlags {
  std::vector<std::string> args;
  std::string model, metric = "cosine";
  size_t threads = 0;  // 0: all cores
  bool json = false;
};
CLI::Option* add_search_flags(CLI::App& app, SearchFlags& f, const std::string& args_help);
// Splits positionals into the model reference and the words: with --model every positional is
// a word; otherwise the first is the model when there are more than n_words of them (or, when
// n_words < 0, when it names an existing path). No model at all -> the default model.
std::string take_model_ref(SearchFlags& f, int n_words);
// take_model_ref(f, n_words), then Error(kInvalidArgument) "WHAT needs NEED, got N" unless
// exactly n_words words remain; opens the model with --threads applied.
ModelHandlePtr open_search(SearchFlags& f, int n_words, const std::string& what = "",
                           const std::string& need = "");
// Error(kInvalidArgument) "WHAT by cosine; drop --metric M" unless --metric is cosine.
void require_cosine(const std::string& metric, const std::string& what);
}  // namespace embedscope::cli
