// embedscope serve: runs the HTTP JSON API. The server is its own binary, embedscope-serve,
// installed beside this one: linking cpp-httplib (and through it OpenSSL, zlib and brotli)
// into the CLI would cost every command ~3.4 ms of start-up. This command only execs it with
// the same arguments (same process id, so signals reach the server directly).
#include <unistd.h>

#include <cstring>

#include "command.h"
#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"

namespace embedscope::cli {
namespace {

Command reg("serve", [](CLI::App& app) -> Runner {
  app.prefix_command();
  app.set_help_flag();  // --help goes to the server binary
  CLI::App* sub = &app;
  return [sub] {
    std::string path = beside_executable("embedscope-serve");
    std::vector<std::string> args = sub->remaining();
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(path.c_str()));
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    throw Error(ErrorCode::kNotFound, path + ": cannot run the server binary (" +
                                          std::strerror(errno) +
                                          "); build the embedscope_server target");
    return 0;
  };
});

}  // namespace
}  // namespace embedscope::cli
