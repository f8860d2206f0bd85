// Test helpers: temporary folders, running commands (the CLI, /usr/bin/python3 with the Debian
// numpy / torch / gensim, the fasttext CLI), and writing files.
#pragma once

#include <string>
#include <vector>

namespace embedscope::test {

// A fresh folder under $TMPDIR, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int rc = -1;
  std::string out, err;
};

// Runs `cmd` through /bin/sh with stdout and stderr captured.
CommandResult run(const std::string& cmd);
// Runs a Python script with the Debian interpreter (/usr/bin/python3); ADD_FAILURE()s with
// its stderr when it exits non-zero. argv are appended quoted.
CommandResult run_python(const std::string& script, const std::vector<std::string>& args = {});
// Path of the CLI binary under test.
std::string cli_path();
std::string shell_quote(const std::string& s);
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

}  // namespace embedscope::test
