// OSU-style MPI_Allreduce bandwidth loop (osu_allreduce's method): for message sizes from 4 B
// to --max bytes of float32, time `iters` in-place SUM reductions after `warmup` untimed ones,
// and print one JSON line per size from rank 0: the mean latency, the algorithm bandwidth
// (bytes / time) and the bus bandwidth (x 2 (p - 1) / p, what a ring moves per process, NCCL's
// convention), which is what a link must sustain.
//
//   mpirun -np 2 build/bin/mpi_allreduce --max 67108864
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t max_bytes = size_t(64) << 20;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--max") == 0) max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
  std::vector<float> buf(max_bytes / sizeof(float) + 1, 1.0f);
  for (size_t bytes = 4; bytes <= max_bytes; bytes *= 4) {
    const int n = int(bytes / sizeof(float));
    const int iters = bytes <= (size_t(1) << 16) ? 1000 : bytes <= (size_t(1) << 22) ? 100 : 20;
    for (int i = 0; i < 10; ++i)
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i)
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / iters, tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double alg = double(bytes) / tmax / 1e9;
      std::printf(
          "{\"bytes\": %zu, \"processes\": %d, \"latency_us\": %.2f, \"algbw_GBps\": %.3f, "
          "\"busbw_GBps\": %.3f}\n",
          bytes, size, tmax * 1e6, alg, alg * 2.0 * (size - 1) / size);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
