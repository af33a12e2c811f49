// gauss_seidel_hand: the DSM version, pipelined with dsm::lb::Pipeline. Each rank runs a
// block of rows one strip of columns at a time; the rank above's last row arrives with its
// signal, by value. A barrier ends each sweep.
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "gauss_seidel (pipelined DSM)", gauss_seidel::defaults);
  const long n = o.n;
  double* sh_a = dsm::alloc<double>(n * n);
  if (dsm::rank() == 0) gauss_seidel::init(sh_a, n);
  dsm::barrier();

  dsm::lb::Pipeline pipe("gauss_seidel", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 1);
  const dsm::lb::Range rows = pipe.rows();
  // Each rank's rows are its own (the fixed boundary rows with the first and last blocks):
  // the pages inside them need no twin and no diff, and stay writable across sweeps.
  const auto own_blocks = [&] {
    for (int r = 0; r < dsm::nprocs(); ++r) {
      const long lb = 1 + (n - 2) * r / dsm::nprocs(), ub = 1 + (n - 2) * (r + 1) / dsm::nprocs();
      const long lo = r == 0 ? 0 : lb, hi = r + 1 == dsm::nprocs() ? n : ub;
      dsm::own(r, sh_a + lo * n, (hi - lo) * n * sizeof(double));
    }
  };
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
    own_blocks();
    for (const dsm::lb::Tile& tile : pipe.sweep())
      for (long i = rows.lb; i < rows.ub; ++i) gauss_seidel::block(sh_a, n, i, i + 1, tile.cols(i).lb, tile.cols(i).ub);
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;
  if (o.trace)
    std::fprintf(stderr, "rank %d: grain %ld, last sweep %ld tiles, compute %.6f s, wait %.6f s, messages %.6f s\n",
                 dsm::rank(), pipe.last().grain, pipe.last().tiles, pipe.last().compute_s, pipe.last().wait_s,
                 pipe.last().messages_s);
  return app::finish(o, t, [&] { return gauss_seidel::sum(sh_a, n); }, gauss_seidel::reference);
}
