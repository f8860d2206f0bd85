// Helpers shared by the subcommands: JSON printing, model loading from --model / FILE,
// thread-count flags, word parsing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "embedscope/core/error.h"
#include "embedscope/formats/model.h"
#include "embedscope/handle/model_handle.h"

namespace embedscope::cli {

using json = nlohmann::json;

// Prints JSON to stdout; invalid UTF-8 in strings is replaced (U+FFFD), never thrown.
void print_json(const json& j, bool pretty = true);
// JSON number that is null when not finite (JSON has no NaN).
json finite_or_null(double v);
// Loads `ref` (or the embedded default model when ref is empty).
Model load_model_ref(const std::string& ref, const ModelOptions& options = {});
// Opens a handle on `ref` ("" = the default model, with a progress line while it trains on
// first use).
ModelHandlePtr open_handle(const std::string& ref, HandleOptions options);
ModelHandlePtr open_handle(const std::string& ref);
double now_ms();
// Escapes a token for one-line display (no control bytes, no newlines).
std::string printable(const std::string& s);

// The process exit code for an error of this code (the table in `embedscope --help`).
int exit_code_for(ErrorCode c);

}  // namespace embedscope::cli
