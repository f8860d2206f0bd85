// Whether this process was started as one of several by an MPI launcher. Header-only and free
// of MPI, so every build can tell a user who runs `mpirun embedscope ...` on a build without MPI
// how to enable it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <string_view>

namespace embedscope::dist {

// The job's process count as the launcher announced it in the environment: OpenMPI's mpirun
// (OMPI_COMM_WORLD_SIZE), a PMI launcher such as Slurm's srun --mpi=pmi2 or MPICH's hydra
// (PMI_SIZE), or PMIx (PMIX_SIZE... Slurm srun --mpi=pmix sets SLURM_NTASKS next to PMIX_RANK).
// 1 when none is set (a plain start, or a launcher with one process).
inline size_t launched_process_count() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v && *v)
      return std::max<size_t>(1, std::strtoull(v, nullptr, 10));
  if (std::getenv("PMIX_RANK"))
    if (const char* v = std::getenv("SLURM_NTASKS"); v && *v)
      return std::max<size_t>(1, std::strtoull(v, nullptr, 10));
  return 1;
}

// The processes of the job on this host (OMPI_COMM_WORLD_LOCAL_SIZE; 1 when not announced):
// they share its cores.
inline size_t local_process_count() {
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); v && *v)
    return std::max<size_t>(1, std::strtoull(v, nullptr, 10));
  return 1;
}

// Whether the CLI may answer from a detached child (core/detach.h): not under an MPI launcher,
// which tracks this pid, and not for the long-running commands (serve, train, or an argument
// spelled like one), whose signals must reach the process doing the work.
inline bool may_detach(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "serve" || std::string_view(argv[i]) == "train") return false;
  return launched_process_count() == 1;
}

// What a build without MPI says when it is launched as several processes.
inline std::string mpi_missing_message() {
  return "started as one of " + std::to_string(launched_process_count()) +
         " MPI processes, but this embedscope was built without MPI: install OpenMPI "
         "(apt install openmpi-bin libopenmpi-dev, or scripts/setup.sh) and reconfigure and "
         "rebuild (cmake --preset release && cmake --build --preset release)";
}

}  // namespace embedscope::dist
