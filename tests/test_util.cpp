#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace embedscope::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/es-test-XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  if (!p) std::abort();
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

CommandResult run(const std::string& cmd) {
  TempDir d;
  std::string full = "( " + cmd + " ) >" + d.file("out") + " 2>" + d.file("err") + " </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(d.file("out"));
  r.err = read_file(d.file("err"));
  return r;
}

CommandResult run_python(const std::string& script, const std::vector<std::string>& args) {
  TempDir d;
  write_file(d.file("script.py"), script);
  std::string cmd = "/usr/bin/python3 " + d.file("script.py");
  for (auto& a : args) cmd += " " + shell_quote(a);
  CommandResult r = run(cmd);
  if (r.rc != 0) ADD_FAILURE() << "python failed (rc " << r.rc << "):\n" << r.err;
  return r;
}

std::string cli_path() {
#ifdef ES_CLI
  return ES_CLI;
#else
  return std::string(ES_BINARY_DIR) + "/bin/embedscope";
#endif
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace embedscope::test
