// jacobi_mpi: the peer version in MPI. Each rank keeps its block of interior rows plus one
// halo row above and below; before every sweep it swaps its edge rows with its neighbours
// (the hand-written halo exchange); the copy back is local.
#include <algorithm>
#include <vector>

#include "../jacobi/kernel.hpp"
#include "mpi_common.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "jacobi (MPI peer: row blocks, halo exchange)", jacobi::defaults);
  const peers::World w = peers::init(&argc, &argv);
  const long n = o.n;
  peers::need_rows(w, n - 2, "jacobi_mpi");
  const long lo = peers::block_start(1, n - 1, w.rank, w.size);
  const long hi = peers::block_start(1, n - 1, w.rank + 1, w.size);
  const long rows = hi - lo;
  // Local row 0 is global row lo - 1 (halo or fixed boundary), local rows 1..rows are
  // global rows lo..hi-1, local row rows + 1 is global row hi; the kernels then run on
  // local rows [1, rows + 1) unchanged.
  std::vector<float> a((rows + 2) * n), b((rows + 2) * n);
  std::vector<float> whole;  // the full grid, on rank 0 only
  if (w.rank == 0) {
    whole.resize(n * n);
    jacobi::init(whole.data(), n);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  const double t0 = MPI_Wtime();
  app::Tracer trace(o.trace && w.rank == 0);
  // Distribution: every rank receives its rows with both halos from rank 0.
  if (w.rank == 0) {
    for (int r = 1; r < w.size; ++r) {
      const long rlo = peers::block_start(1, n - 1, r, w.size), rhi = peers::block_start(1, n - 1, r + 1, w.size);
      peers::check(MPI_Send(whole.data() + (rlo - 1) * n, static_cast<int>((rhi - rlo + 2) * n), MPI_FLOAT, r, 0,
                            MPI_COMM_WORLD),
                   "MPI_Send (distribution)");
    }
    std::copy(whole.begin() + (lo - 1) * n, whole.begin() + (hi + 1) * n, a.begin());
  } else {
    peers::check(MPI_Recv(a.data(), static_cast<int>((rows + 2) * n), MPI_FLOAT, 0, 0, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
                 "MPI_Recv (distribution)");
  }
  const int up = w.rank > 0 ? w.rank - 1 : MPI_PROC_NULL;
  const int down = w.rank + 1 < w.size ? w.rank + 1 : MPI_PROC_NULL;
  const int len = static_cast<int>(n);
  for (long it = 0; it < o.iters; ++it) {
    // Halo exchange: first row up / lower halo from below, last row down / upper halo from
    // above. The first iteration's halos are already right; exchanging anyway keeps the loop
    // what an MPI programmer writes.
    peers::check(MPI_Sendrecv(a.data() + n, len, MPI_FLOAT, up, 1, a.data() + (rows + 1) * n, len, MPI_FLOAT, down, 1,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv (halo up)");
    peers::check(MPI_Sendrecv(a.data() + rows * n, len, MPI_FLOAT, down, 2, a.data(), len, MPI_FLOAT, up, 2,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv (halo down)");
    jacobi::sweep(a.data(), b.data(), n, 1, rows + 1);
    jacobi::copy(b.data(), a.data(), n, 1, rows + 1);
    trace.iteration(it);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t = MPI_Wtime() - t0;

  // Collect the interior rows on rank 0 (its boundary rows 0 and n - 1 are still init's).
  std::vector<int> counts(w.size), displs(w.size);
  for (int r = 0; r < w.size; ++r) {
    const long rlo = peers::block_start(1, n - 1, r, w.size), rhi = peers::block_start(1, n - 1, r + 1, w.size);
    counts[r] = static_cast<int>((rhi - rlo) * n);
    displs[r] = static_cast<int>(rlo * n);
  }
  peers::check(MPI_Gatherv(a.data() + n, counts[w.rank], MPI_FLOAT, w.rank == 0 ? whole.data() : nullptr,
                           counts.data(), displs.data(), MPI_FLOAT, 0, MPI_COMM_WORLD),
               "MPI_Gatherv");
  const int rc = w.rank == 0 ? app::conclude(o, jacobi::sum(whole.data(), n), t, jacobi::reference) : 0;
  MPI_Finalize();
  return rc;
}
