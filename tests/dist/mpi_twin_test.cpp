// The CLI is built twice (CMakeLists.txt): `embedscope` without MPI's libraries, whose start-up
// every command pays, and `embedscope-mpi` with them. A process started by an MPI launcher as
// one of several replaces itself with the twin (dist::exec_mpi_build); the mpirun tests beside
// this file run the whole path, these check each part of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_util.h"

using namespace embedscope::test;

namespace {

std::string twin_path() { return cli_path() + "-mpi"; }

// The shared libraries the dynamic loader maps for `exe`, one per line.
std::string loaded_libraries(const std::string& exe) {
  auto r = run("ldd " + shell_quote(exe));
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

}  // namespace

TEST(MpiTwin, OnlyTheTwinLoadsMpi) {
  ASSERT_TRUE(std::filesystem::exists(twin_path())) << twin_path();
  const std::string plain = loaded_libraries(cli_path()), twin = loaded_libraries(twin_path());
  EXPECT_EQ(plain.find("libmpi"), std::string::npos) << plain;
  EXPECT_NE(twin.find("libmpi"), std::string::npos) << twin;
}

// The CLI's start-up: ICU, PCRE2 and Snowball come from their static archives (es_dep), so the
// loader maps none of them; the server keeps the shared ones.
TEST(MpiTwin, CliLoadsNoIcuPcre2OrStemmerLibrary) {
  for (const std::string& exe : {cli_path(), twin_path()}) {
    const std::string libs = loaded_libraries(exe);
    for (const char* lib : {"libicuuc", "libicudata", "libpcre2-8", "libstemmer"})
      EXPECT_EQ(libs.find(lib), std::string::npos) << exe << " loads " << lib << ":\n" << libs;
  }
}

TEST(MpiTwin, VersionNamesTheBuild) {
  auto plain = run(shell_quote(cli_path()) + " --version");
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(plain.out, "embedscope 0.1.0\n");
  auto twin = run(shell_quote(twin_path()) + " --version");
  ASSERT_EQ(twin.rc, 0) << twin.err;
  EXPECT_EQ(twin.out, "embedscope 0.1.0 (MPI build)\n");
}

// What OpenMPI's launcher sets for each process: the plain CLI hands over to the twin at once.
TEST(MpiTwin, LaunchedAsOneOfSeveralRunsTheTwin) {
  auto r = run("OMPI_COMM_WORLD_SIZE=2 " + shell_quote(cli_path()) + " --version");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "embedscope 0.1.0 (MPI build)\n");
  // Alone (size 1, or no launcher) it stays itself.
  auto alone = run("OMPI_COMM_WORLD_SIZE=1 " + shell_quote(cli_path()) + " --version");
  ASSERT_EQ(alone.rc, 0) << alone.err;
  EXPECT_EQ(alone.out, "embedscope 0.1.0\n");
}

// A copy of the CLI without its twin beside it cannot run an MPI job: the command says which
// file is missing instead of running every rank's job as a whole job of its own.
TEST(MpiTwin, MissingTwinIsNamed) {
  TempDir d;
  const std::string copy = d.file("embedscope");
  std::filesystem::copy_file(cli_path(), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
  auto py = run_python(R"PY(
import sys, numpy as np
np.save(sys.argv[1], np.random.default_rng(3).standard_normal((50, 8), dtype=np.float32))
open(sys.argv[2], "w").write("#1\n")
)PY",
                       {d.file("t.npy"), d.file("q.txt")});
  ASSERT_EQ(py.rc, 0) << py.err;
  auto r = run("OMPI_COMM_WORLD_SIZE=2 " + shell_quote(copy) + " neighbors " +
               shell_quote(d.file("t.npy")) + " --batch " + shell_quote(d.file("q.txt")));
  EXPECT_NE(r.rc, 0);
  const std::string named = std::filesystem::canonical(copy).string();
  EXPECT_NE(r.err.find("started as one of 2 MPI processes, but " + named +
                       "-mpi (the MPI build of this program, which runs its MPI jobs) is missing"),
            std::string::npos)
      << r.err;
}
