// CLI plumbing: each subcommand lives in its own cmd_*.cpp and registers itself here.
//
//   static Command reg("info", "Show what a file or model contains", [](CLI::App& app) {
//     auto o = std::make_shared<Opts>();
//     app.add_option("FILE", o->file)->required();
//     return [o] { return run_info(*o); };     // returns the exit code
//   });
//
// Tools parse, call one library function, and format. Errors thrown as embedscope::Error are
// printed by main() as one line `error: <message>` (+ a hint) and mapped to exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace embedscope::cli {

using Runner = std::function<int()>;
using Setup = std::function<Runner(CLI::App&)>;

struct CommandSpec {
  std::string name, help;
  Setup setup;
  int order;
};

std::vector<CommandSpec>& registry();

struct Command {
  Command(std::string name, std::string help, Setup setup, int order = 100) {
    registry().push_back({std::move(name), std::move(help), std::move(setup), order});
  }
};

// Exit codes (documented in `embedscope --help`).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,     // bad flags or arguments (invalid_argument)
  kExitNotFound = 3,  // file, tensor, word or model not found
  kExitCorrupt = 4,   // a file violates its format
  kExitUnsupported = 5,
  kExitIo = 6,
  kExitOutOfRange = 7,
};

}  // namespace embedscope::cli
