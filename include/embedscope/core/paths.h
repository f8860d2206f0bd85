// Where embedscope keeps its data: the embedscope home.
//
// $EMBEDSCOPE_HOME if set, else $HOME/.cache/embedscope. scripts/setup.sh fetches data packages
// (GPT-2 vocabulary, corpora) into it and the default model is cached there.
#pragma once

#include <string>

namespace embedscope {

std::string embedscope_home();
bool file_exists(const std::string& path);
bool dir_exists(const std::string& path);
// Creates the folder and its parents; throws Error(kIo).
void make_dirs(const std::string& path);
// Reads a whole (small) file; throws Error(kNotFound / kIo). Refuses files over max_bytes
// with Error(kCorrupt) naming the size and the limit.
std::string read_small_file(const std::string& path, size_t max_bytes = size_t(1) << 30);
// This process's executable (/proc/self/exe); "" when that cannot be read.
std::string executable_path();
// `name` in the folder of this process's executable; `name` alone when that cannot be read.
// How the CLI finds embedscope-serve installed beside it.
std::string beside_executable(const std::string& name);

}  // namespace embedscope
