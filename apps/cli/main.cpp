// embedscope: the command-line front end. Every subcommand is a thin file cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "command.h"
#include "common.h"
#include "embedscope/core/detach.h"
#include "embedscope/core/error.h"
#include "embedscope/core/log.h"
#include "embedscope/dist/job.h"
#include "embedscope/dist/launch.h"

namespace embedscope::cli {

std::vector<CommandSpec>& registry() {
  static std::vector<CommandSpec> r;
  return r;
}

int main_impl(int argc, char** argv) {
  set_log_sink([](LogLevel level, const std::string& m) {
    if (level == LogLevel::kWarning) std::fprintf(stderr, "warning: %s\n", m.c_str());
  });
  // Static: the parser, its bound options and the runners are freed at exit, after a detached
  // child has handed its answer to the caller (core/detach.h), not before.
  static CLI::App app{std::string(api::command_doc("embedscope")->summary), "embedscope"};
  static std::vector<std::pair<CLI::App*, Runner>> runners;
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", dist::built_with_mpi() ? "embedscope 0.1.0 (MPI build)" : "embedscope 0.1.0");
  // `embedscope CMD ...` sets up CMD's flags alone (every command's options together are
  // hundreds, each built and freed); anything else (--help, a misspelt command) gets them all.
  const std::string_view named = argc > 1 ? argv[1] : "";
  const bool one = std::any_of(registry().begin(), registry().end(),
                               [&](const CommandSpec& c) { return c.name == named; });
  for (const api::CommandDoc& doc : api::kCommandDocs)  // in the docs' order
    for (auto& spec : registry())
      if (spec.name == doc.name && (!one || spec.name == named)) {
        CLI::App* sub = add_command(app, spec.name);
        runners.emplace_back(sub, spec.setup(*sub));
      }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  try {
    apply_text_options();
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    if (auto h = api::error_hint(e.code()); !h.empty())
      std::fprintf(stderr, "hint: %.*s\n", int(h.size()), h.data());
    return exit_code(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: internal: %s\n", e.what());
    return kExitInternal;
  }
  return kExitUsage;
}

}  // namespace embedscope::cli

int main(int argc, char** argv) {
  embedscope::dist::exec_mpi_build(argv);  // one of several MPI processes: become embedscope-mpi
  return embedscope::run_detached([&] { return embedscope::cli::main_impl(argc, argv); },
                                  embedscope::dist::may_detach(argc, argv));
}
