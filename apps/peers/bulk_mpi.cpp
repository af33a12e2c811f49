// bulk_mpi: the reference for dsm-bench-bulk. Rank 0 sends one MPI message of the same size
// to rank 1, which receives it into a buffer it has touched before (as the DSM's pages are
// mapped before they are fetched); rank 1 prints its best round as
//   bulk mpi <bytes> <seconds> <GB/s>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cli.hpp"
#include "mpi_common.hpp"

int main(int argc, char** argv) {
  std::size_t mib = 256;
  int rounds = 3;
  CLI::App cli{"bulk_mpi: one message from rank 0 to rank 1"};
  cli.add_option("--mib", mib, "message size in MiB")->capture_default_str()->check(CLI::Range(std::size_t(1), std::size_t(1) << 16));
  cli.add_option("--rounds", rounds, "rounds (the best is printed)")->capture_default_str()->check(CLI::Range(1, 1000));
  dsm::cli::parse_or_exit(cli, argc, argv);
  const peers::World w = peers::init(&argc, &argv);
  if (w.size < 2) {
    std::fprintf(stderr, "bulk_mpi: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::size_t bytes = mib << 20;
  std::vector<std::uint8_t> buf(bytes, std::uint8_t(w.rank));
  double best = 1e300;
  for (int round = 0; round < rounds; ++round) {
    peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    // Counts above INT_MAX bytes go as 8-byte words: MPI counts are int.
    const int count = static_cast<int>(bytes / 8);
    if (w.rank == 0) peers::check(MPI_Send(buf.data(), count, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD), "MPI_Send");
    if (w.rank == 1) {
      peers::check(MPI_Recv(buf.data(), count, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      best = std::min(best, MPI_Wtime() - t0);
    }
  }
  if (w.rank == 1) {
    if (buf.front() != 0 || buf.back() != 0) {
      std::fprintf(stderr, "bulk_mpi: the message did not arrive whole\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::printf("bulk mpi %zu %.6f %.3f\n", bytes, best, double(bytes) / best * 1e-9);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
