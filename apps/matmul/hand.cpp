// matmul_hand: parallelized by hand with the DSM API. Each rank computes a page-aware
// block of rows of C; A and B are read-only after initialization.
#include <dsm/dsm.hpp>

#include "../common/split.hpp"
#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "matmul (hand-parallelized DSM)", matmul::defaults);
  const long n = o.n;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long* sh_c = dsm::alloc<long>(n * n);
  if (dsm::rank() == 0) matmul::init(sh_a, sh_b, n);
  dsm::barrier();

  const app::Rows mine =
      app::page_aware_rows(0, n, n * sizeof(long), dsm::rank(), dsm::nprocs(), app::shares_for(o, dsm::nprocs()));
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  dsm::prefetch(sh_a + mine.lo * n, (mine.hi - mine.lo) * n * sizeof(long), dsm::Mode::read);
  dsm::prefetch(sh_b, n * n * sizeof(long), dsm::Mode::read);
  for (long it = 0; it < o.iters; ++it) {
    dsm::prefetch(sh_c + mine.lo * n, (mine.hi - mine.lo) * n * sizeof(long), dsm::Mode::write_exclusive);
    matmul::rows(sh_a, sh_b, sh_c, n, mine.lo, mine.hi);
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return matmul::sum(sh_c, n); }, matmul::reference);
}
