// CLI plumbing: each subcommand lives in its own cmd_*.cpp and registers itself here. Its
// summary and examples come from api/command_docs.h (main() applies them and lists commands in
// that order); its setup binds flags (mostly the library's option descriptors, common.h's
// bind()) and returns the runner, which calls one library function and prints.
//
//   Cmd<Opts> reg("stats", [](CLI::App& app, Opts& o) { bind(app, o.s); }, run);
//
// main() prints an embedscope::Error as one line `error: <message>` (+ a hint) and exits with
// its exit_code() (core/error.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "embedscope/core/error.h"

namespace embedscope::cli {

using Runner = std::function<int()>;
using Setup = std::function<Runner(CLI::App&)>;

struct CommandSpec {
  std::string name;
  Setup setup;
};

std::vector<CommandSpec>& registry();

struct Command {
  Command(std::string name, Setup setup) {
    registry().push_back({std::move(name), std::move(setup)});
  }
};

// A command whose flags bind to an O made at start-up and whose runner is run(O&).
template <class O>
struct Cmd : Command {
  Cmd(std::string name, void (*bind)(CLI::App&, O&), int (*run)(O&))
      : Command(std::move(name), [bind, run](CLI::App& app) -> Runner {
          auto o = std::make_shared<O>();
          bind(app, *o);
          return [o, run] { return run(*o); };
        }) {}
};

}  // namespace embedscope::cli
