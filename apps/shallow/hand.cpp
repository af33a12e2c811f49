// shallow_hand: parallelized by hand with the DSM API and optimized against false sharing,
// as in the paper: each rank owns a page-aware block of rows of every array, and the
// periodic row copies are done by the rank that owns the row (rank 0 for row 0, the last
// rank for row N) instead of being split across ranks.
#include <dsm/dsm.hpp>

#include <algorithm>

#include "../common/split.hpp"
#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

namespace {
struct Hand {
  long n;
  int rank, nprocs;
  // This rank's rows: a page-aware block of [0, N); the last rank also owns row N.
  app::Rows owned() const {
    app::Rows b = app::page_aware_rows(0, n - 1, n * sizeof(double), rank, nprocs);
    if (rank == nprocs - 1) b.hi = n;
    return b;
  }
  // A loop over rows [lo, hi) runs the rows of it this rank owns.
  void rows(long lo, long hi, shallow::Written written, auto f) {
    const app::Rows own = owned();
    const app::Rows b{std::max(lo, own.lo), std::min(hi, own.hi)};
    if (b.lo >= b.hi) return;
    for (double* a : written) dsm::prefetch(a + b.lo * n, (b.hi - b.lo) * n * sizeof(double), dsm::Mode::write_exclusive);
    f(b.lo, b.hi);
  }
  void edge(long row, long lo, long hi, shallow::Written written, auto f) {
    if (row == 0 ? rank != 0 : rank != nprocs - 1) return;
    for (double* a : written) dsm::prefetch(a + row * n, n * sizeof(double), dsm::Mode::write_exclusive);
    f(lo, hi);
  }
  void sync() { dsm::barrier(); }
};
}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "shallow (hand-parallelized DSM)", shallow::defaults);
  const shallow::Grid g = shallow::make_grid(o.n, [](long count) { return dsm::alloc<double>(count); });
  if (dsm::rank() == 0) shallow::init(g);
  dsm::barrier();

  Hand ex{o.n, dsm::rank(), dsm::nprocs()};
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0, t0);
  for (long c = 0; c < o.iters; ++c) {
    shallow::timestep(g, c, ex);
    trace.iteration(c);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return shallow::sum(g); }, shallow::reference);
}
