// spmv_mpi: the peer version in MPI. Each rank keeps its block of rows of the matrix (row
// starts, column indices, values) and a window of x: its own entries plus the grid row on
// either side that its rows' columns reach; before every product it swaps those edge rows of
// x with its neighbours (the halo list an MPI programmer writes for this matrix by hand).
#include <vector>

#include "../spmv/kernel.hpp"
#include "csr_rows.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "spmv (MPI peer: row blocks, halo exchange)", spmv::defaults);
  const peers::World w = peers::init(&argc, &argv);
  const long g = o.n, n = g * g;
  // Each block must hold a whole grid row, so that its halos are its neighbours' entries.
  peers::need_rows(w, g, "spmv_mpi");
  std::vector<long> whole_p, whole_col;
  std::vector<double> whole_v, whole_x;
  if (w.rank == 0) {
    whole_p.resize(n + 1);
    whole_col.resize(spmv::nonzeros_at_most(g));
    whole_v.resize(spmv::nonzeros_at_most(g));
    whole_x.resize(n);
    spmv::build(g, whole_p.data(), whole_col.data(), whole_v.data(), whole_x.data());
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

  const double t0 = MPI_Wtime();
  app::Tracer trace(o.trace && w.rank == 0);
  // Distribution: every rank receives its rows and its entries of x from rank 0.
  peers::CsrRows m = peers::scatter_rows(w, n, whole_p.data(), whole_col.data(), whole_v.data());
  // Local x entry k is global entry lo - g + k: [0, g) the upper halo, [g, g + rows) this
  // rank's, then the lower halo.
  const long rows = m.hi - m.lo, base = m.lo - g;
  const peers::Blocks blocks = peers::blocks(w, n);
  std::vector<double> x(rows + 2 * g, 0.0), y(rows);
  peers::check(MPI_Scatterv(whole_x.data(), blocks.counts.data(), blocks.displs.data(), MPI_DOUBLE, x.data() + g,
                            static_cast<int>(rows), MPI_DOUBLE, 0, MPI_COMM_WORLD),
               "MPI_Scatterv (x)");
  // Columns into the window of x.
  for (long& c : m.col) c -= base;
  const int up = w.rank > 0 ? w.rank - 1 : MPI_PROC_NULL;
  const int down = w.rank + 1 < w.size ? w.rank + 1 : MPI_PROC_NULL;
  const int len = static_cast<int>(g);
  for (long it = 0; it < o.iters; ++it) {
    peers::check(MPI_Sendrecv(x.data() + g, len, MPI_DOUBLE, up, 4, x.data() + g + rows, len, MPI_DOUBLE, down, 4,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv (halo up)");
    peers::check(MPI_Sendrecv(x.data() + rows, len, MPI_DOUBLE, down, 5, x.data(), len, MPI_DOUBLE, up, 5,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv (halo down)");
    spmv::product(m.start.data(), m.col.data(), m.val.data(), x.data(), y.data(), 0, rows);
    for (long r = 0; r < rows; ++r) x[g + r] = y[r] / 8;
    trace.iteration(it);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t = MPI_Wtime() - t0;

  peers::check(MPI_Gatherv(x.data() + g, static_cast<int>(rows), MPI_DOUBLE, whole_x.data(), blocks.counts.data(),
                           blocks.displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD),
               "MPI_Gatherv");
  const int rc = w.rank == 0 ? app::conclude(o, spmv::sum(whole_x.data(), g), t, spmv::reference) : 0;
  MPI_Finalize();
  return rc;
}
