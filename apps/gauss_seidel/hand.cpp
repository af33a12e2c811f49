// gauss_seidel_hand: the DSM version, pipelined with dsm::lb::Pipeline. Each rank runs its
// blocks of rows one tile of columns at a time; the last row of the block above arrives with
// its signal, by value. The largest change's reduction (a barrier) ends each sweep. Each
// rank initializes its own rows.
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include <algorithm>

#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "gauss_seidel (pipelined DSM)", gauss_seidel::defaults);
  const long n = o.n;
  double* sh_a = dsm::alloc<double>(n * n);
  dsm::lb::Pipeline pipe("gauss_seidel", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 1);
  // Each rank initializes the rows it runs, as a distributed program would, on pages it
  // owns as each sweep will claim them (dsm::own, collective), so that no twin is taken.
  for (int r = 0; r < dsm::nprocs(); ++r)
    for (const dsm::lb::Range& b : pipe.rows_of(r)) dsm::own(r, sh_a + b.lb * n, (b.ub - b.lb) * n * sizeof(double));
  for (const dsm::lb::Range& b : pipe.rows_of(dsm::rank()))
    gauss_seidel::init_rows(sh_a, n, b.lb == 1 ? 0 : b.lb, b.ub == n - 1 ? n : b.ub);
  dsm::barrier();
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
    double change = 0;
    dsm::lb::Reduction largest{dsm::lb::reduced<dsm::lb::Op::max>(change)};
    for (const dsm::lb::Tile& tile : pipe.sweep())
      for (long i = tile.rows().lb; i < tile.rows().ub; ++i)
        change = std::max(change, gauss_seidel::block(sh_a, n, i, i + 1, tile.cols(i).lb, tile.cols(i).ub));
    largest.finish();  // a barrier too
    trace.iteration(it);
    if (change <= gauss_seidel::tolerance) break;
  }
  const double t = dsm::wtime() - t0;
  // With --trace, rank 0 also reports its grain on stdout ("grain <columns>"), for scripts.
  if (o.trace && dsm::rank() == 0) std::printf("grain %ld\n", pipe.last().grain);
  if (o.trace)
    std::fprintf(stderr, "rank %d: grain %ld, %zu blocks, last sweep %ld tiles, compute %.6f s, wait %.6f s, messages %.6f s\n",
                 dsm::rank(), pipe.last().grain, pipe.rows_of(dsm::rank()).size(), pipe.last().tiles, pipe.last().compute_s, pipe.last().wait_s,
                 pipe.last().messages_s);
  return app::finish(o, t, [&] { return gauss_seidel::sum(sh_a, n); }, gauss_seidel::reference);
}
