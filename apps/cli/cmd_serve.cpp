// embedscope serve: runs the HTTP JSON API. The server is its own binary, embedscope-serve,
// installed beside this one: linking cpp-httplib (and through it OpenSSL, zlib and brotli)
// into the CLI would cost every command ~3.4 ms of start-up. This command only execs it with
// the same arguments (same process id, so signals reach the server directly).
#include <unistd.h>

#include <climits>
#include <cstring>

#include "command.h"
#include "embedscope/core/error.h"

namespace embedscope::cli {
namespace {

std::string server_path() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "embedscope-serve";
  std::string self(buf, size_t(n));
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) +
         "/embedscope-serve";
}

Command reg("serve", [](CLI::App& app) -> Runner {
  app.prefix_command();
  app.set_help_flag();  // --help goes to the server binary
  CLI::App* sub = &app;
  return [sub] {
    std::string path = server_path();
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
