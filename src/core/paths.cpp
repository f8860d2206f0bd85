#include "embedscope/core/paths.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "embedscope/core/error.h"
#include "embedscope/core/mapped_file.h"

namespace embedscope {

std::string embedscope_home() {
  if (const char* h = std::getenv("EMBEDSCOPE_HOME"); h && *h) return h;
  const char* home = std::getenv("HOME");
  if (!home || !*home) {  // no $HOME (some CI runners): the user's home from the password file
    const passwd* pw = ::getpwuid(::getuid());
    home = pw && pw->pw_dir ? pw->pw_dir : "/tmp";
  }
  return std::string(home) + "/.cache/embedscope";
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool dir_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_dirs(const std::string& path) {
  if (path.empty() || dir_exists(path)) return;
  auto pos = path.rfind('/');
  if (pos != std::string::npos && pos > 0) make_dirs(path.substr(0, pos));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw Error(ErrorCode::kIo, path + ": cannot create folder: " + std::strerror(errno));
}

std::string read_small_file(const std::string& path, size_t max_bytes) {
  auto f = MappedFile::open(path);
  if (f->size() > max_bytes)
    throw Error(ErrorCode::kCorrupt, path + ": file is " + std::to_string(f->size()) +
                                         " bytes, limit " + std::to_string(max_bytes));
  return std::string(reinterpret_cast<const char*>(f->data()), f->size());
}

std::string executable_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 && size_t(n) < sizeof buf ? std::string(buf, size_t(n)) : std::string();
}

std::string beside_executable(const std::string& name) {
  const std::string self = executable_path();
  if (self.empty()) return name;
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + name;
}

}  // namespace embedscope
