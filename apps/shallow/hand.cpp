// shallow_hand: parallelized by hand with the DSM API and optimized against false sharing,
// as in the paper: each rank owns a page-aware block of rows of every array, and the
// periodic row copies are done by the rank that owns the row (rank 0 for row 0, the last
// rank for row N) instead of being split across ranks.
#include <dsm/dsm.hpp>

#include <algorithm>
#include <vector>

#include "../common/split.hpp"
#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

namespace {
struct Hand {
  long n;
  int rank, nprocs;
  std::vector<double> shares;  // --shares, or empty: equal blocks
  // Rank r's rows: a page-aware block of [0, N); the last rank also owns row N.
  app::Rows owned(int r) const {
    app::Rows b = app::page_aware_rows(0, n - 1, n * sizeof(double), r, nprocs, shares);
    if (r == nprocs - 1) b.hi = n;
    return b;
  }
  // A loop over rows [lo, hi) runs the rows of it this rank owns. Every rank names every
  // block's owner (dsm::own is collective).
  void rows(long lo, long hi, shallow::Written written, auto f) {
    for (int r = 0; r < nprocs; ++r) {
      const app::Rows own = owned(r);
      const app::Rows b{std::max(lo, own.lo), std::min(hi, own.hi)};
      if (b.lo >= b.hi) continue;
      for (double* a : written) dsm::own(r, a + b.lo * n, (b.hi - b.lo) * n * sizeof(double));
      if (r == rank) f(b.lo, b.hi);
    }
  }
  void edge(long row, long lo, long hi, shallow::Written written, auto f) {
    const int owner = row == 0 ? 0 : nprocs - 1;
    for (double* a : written) dsm::own(owner, a + row * n, n * sizeof(double));
    if (rank == owner) f(lo, hi);
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

  Hand ex{o.n, dsm::rank(), dsm::nprocs(), app::shares_for(o, dsm::nprocs())};
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long c = 0; c < o.iters; ++c) {
    shallow::timestep(g, c, ex);
    trace.iteration(c);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return shallow::sum(g); }, shallow::reference);
}
