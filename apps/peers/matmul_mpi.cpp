// matmul_mpi: the peer version in MPI. Rank 0 scatters blocks of rows of A and broadcasts
// B; each rank then computes its rows of C in every repetition without communicating.
#include <vector>

#include "../matmul/kernel.hpp"
#include "mpi_common.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "matmul (MPI peer: row distribution)", matmul::defaults);
  const peers::World w = peers::init(&argc, &argv);
  const long n = o.n;
  peers::need_rows(w, n, "matmul_mpi");
  std::vector<int> counts(w.size), displs(w.size);
  for (int r = 0; r < w.size; ++r) {
    const long rlo = peers::block_start(0, n, r, w.size), rhi = peers::block_start(0, n, r + 1, w.size);
    counts[r] = static_cast<int>((rhi - rlo) * n);
    displs[r] = static_cast<int>(rlo * n);
  }
  const long rows = counts[w.rank] / n;
  // A and C hold this rank's rows only (local row 0 = global row lo); B is whole everywhere.
  std::vector<long> a(rows * n), b(n * n), c(rows * n);
  std::vector<long> whole_a, whole_c;  // rank 0 only
  if (w.rank == 0) {
    whole_a.resize(n * n);
    whole_c.resize(n * n);
    matmul::init(whole_a.data(), b.data(), n);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  const double t0 = MPI_Wtime();
  app::Tracer trace(o.trace && w.rank == 0);
  peers::check(MPI_Scatterv(w.rank == 0 ? whole_a.data() : nullptr, counts.data(), displs.data(), MPI_LONG, a.data(),
                            counts[w.rank], MPI_LONG, 0, MPI_COMM_WORLD),
               "MPI_Scatterv");
  peers::check(MPI_Bcast(b.data(), static_cast<int>(n * n), MPI_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  for (long it = 0; it < o.iters; ++it) {
    matmul::rows(a.data(), b.data(), c.data(), n, 0, rows);
    trace.iteration(it);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t = MPI_Wtime() - t0;

  peers::check(MPI_Gatherv(c.data(), counts[w.rank], MPI_LONG, w.rank == 0 ? whole_c.data() : nullptr, counts.data(),
                           displs.data(), MPI_LONG, 0, MPI_COMM_WORLD),
               "MPI_Gatherv");
  const int rc = w.rank == 0 ? app::conclude(o, matmul::sum(whole_c.data(), n), t, matmul::reference) : 0;
  MPI_Finalize();
  return rc;
}
