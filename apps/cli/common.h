// Helpers shared by the subcommands: the flags every command declares the same way, model
// loading from --model / FILE, printing, progress lines, exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/core/progress.h"
#include "embedscope/formats/model.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope::cli {

using json = nlohmann::json;

// The repeated flags, one help text each.
CLI::Option* add_model_flag(CLI::App& app, std::string& ref);  // --model,-m
CLI::Option* add_threads_flag(CLI::App& app, size_t& n);       // --threads,-t (0: all cores)
CLI::Option* add_json_flag(CLI::App& app, bool& on, const std::string& help = "");

// Prints JSON to stdout; invalid UTF-8 in strings is replaced (U+FFFD), never thrown.
void print_json(const json& j, bool pretty = true);
// Prints text as is to stdout (the api's to_text lines).
void print_text(const std::string& s);
// Loads `ref` (or the embedded default model when ref is empty).
Model load_model_ref(const std::string& ref, const ModelOptions& options = {});
// Opens a handle on `ref` ("" = the default model, with a progress line while it trains on
// first use) with HandleOptions::tokenizer; sets the process's thread count first when
// threads > 0.
ModelHandlePtr open_handle(const std::string& ref, const std::string& tokenizer = "auto",
                           size_t threads = 0);
double now_ms();
// Long work's progress on stderr: one updating line on a terminal, JSON lines otherwise
// ({event, stage, done, total, unit, rate, eta_seconds, extra}); null when quiet.
ProgressFn progress_printer(bool quiet);
// Ends a progress line that progress_printer drew on a terminal.
void end_progress(bool quiet);
std::string printable(const std::string& s);

// The process exit code for an error of this code, or of any exception (the table in
// `embedscope --help`).
int exit_code_for(ErrorCode c);
int exit_code_for(const std::exception& e);

}  // namespace embedscope::cli
