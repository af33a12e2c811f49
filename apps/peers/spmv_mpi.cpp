// spmv_mpi: the peer version in MPI. Each rank keeps its block of rows of the matrix (row
// starts, column indices, values) and a window of x: its own entries plus the grid row on
// either side that its rows' columns reach; before every product it swaps those edge rows of
// x with its neighbours (the halo list an MPI programmer writes for this matrix by hand).
#include <algorithm>
#include <vector>

#include "../spmv/kernel.hpp"
#include "mpi_common.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "spmv (MPI peer: row blocks, halo exchange)", spmv::defaults);
  const peers::World w = peers::init(&argc, &argv);
  const long g = o.n, n = g * g;
  // Each block must hold a whole grid row, so that its halos are its neighbours' entries.
  peers::need_rows(w, g, "spmv_mpi");
  const long lo = peers::block_start(0, n, w.rank, w.size), hi = peers::block_start(0, n, w.rank + 1, w.size);
  const long rows = hi - lo;
  // Local x entry k is global entry lo - g + k: [0, g) the upper halo, [g, g + rows) this
  // rank's, then the lower halo.
  const long base = lo - g;
  std::vector<long> p, col, whole_p;
  std::vector<double> v, x(rows + 2 * g, 0.0), y(rows), whole_x, whole_v;
  std::vector<long> whole_col;
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
  // Distribution: every rank receives its rows (row starts, then their nonzeros) and its
  // entries of x from rank 0.
  long first = 0, count = 0;  // this rank's nonzeros
  if (w.rank == 0) {
    for (int r = 1; r < w.size; ++r) {
      const long rlo = peers::block_start(0, n, r, w.size), rhi = peers::block_start(0, n, r + 1, w.size);
      const long nz[2] = {whole_p[rlo], whole_p[rhi] - whole_p[rlo]};
      peers::check(MPI_Send(whole_p.data() + rlo, static_cast<int>(rhi - rlo + 1), MPI_LONG, r, 0, MPI_COMM_WORLD), "MPI_Send (rows)");
      peers::check(MPI_Send(whole_col.data() + nz[0], static_cast<int>(nz[1]), MPI_LONG, r, 1, MPI_COMM_WORLD), "MPI_Send (columns)");
      peers::check(MPI_Send(whole_v.data() + nz[0], static_cast<int>(nz[1]), MPI_DOUBLE, r, 2, MPI_COMM_WORLD), "MPI_Send (values)");
      peers::check(MPI_Send(whole_x.data() + rlo, static_cast<int>(rhi - rlo), MPI_DOUBLE, r, 3, MPI_COMM_WORLD), "MPI_Send (x)");
    }
    p.assign(whole_p.begin() + lo, whole_p.begin() + hi + 1);
    first = p.front();
    count = p.back() - first;
    col.assign(whole_col.begin() + first, whole_col.begin() + first + count);
    v.assign(whole_v.begin() + first, whole_v.begin() + first + count);
    std::copy(whole_x.begin() + lo, whole_x.begin() + hi, x.begin() + g);
  } else {
    p.resize(rows + 1);
    peers::check(MPI_Recv(p.data(), static_cast<int>(rows + 1), MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (rows)");
    first = p.front();
    count = p.back() - first;
    col.resize(count);
    v.resize(count);
    peers::check(MPI_Recv(col.data(), static_cast<int>(count), MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (columns)");
    peers::check(MPI_Recv(v.data(), static_cast<int>(count), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (values)");
    peers::check(MPI_Recv(x.data() + g, static_cast<int>(rows), MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv (x)");
  }
  // Local indices: row starts from 0, columns into the window of x.
  for (long& k : p) k -= first;
  for (long& c : col) c -= base;
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
    spmv::product(p.data(), col.data(), v.data(), x.data(), y.data(), 0, rows);
    for (long r = 0; r < rows; ++r) x[g + r] = y[r] / 8;
    trace.iteration(it);
  }
  peers::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t = MPI_Wtime() - t0;

  std::vector<int> counts(w.size), displs(w.size);
  for (int r = 0; r < w.size; ++r) {
    const long rlo = peers::block_start(0, n, r, w.size), rhi = peers::block_start(0, n, r + 1, w.size);
    counts[r] = static_cast<int>(rhi - rlo);
    displs[r] = static_cast<int>(rlo);
  }
  peers::check(MPI_Gatherv(x.data() + g, counts[w.rank], MPI_DOUBLE, w.rank == 0 ? whole_x.data() : nullptr,
                           counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD),
               "MPI_Gatherv");
  const int rc = w.rank == 0 ? app::conclude(o, spmv::sum(whole_x.data(), g), t, spmv::reference) : 0;
  MPI_Finalize();
  return rc;
}
