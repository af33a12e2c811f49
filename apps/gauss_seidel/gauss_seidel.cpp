// The shared-memory source of Gauss-Seidel: the OpenMP nest's doacross spelling on
// `#pragma dsm parallel for ordered(2)`. Through dsm-pass (gauss_seidel_pass) the nest runs
// as a pipeline; compiled without it (gauss_seidel_plain) every rank runs it whole, the
// sequential reference at one rank. The point is kernel.hpp's, written out so that the pass
// sees the grid's subscripts; the reduction of the largest change ends each sweep (a
// barrier), as a dsm::barrier() would.
#include <dsm/dsm.hpp>

#include <algorithm>
#include <cmath>

#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "gauss_seidel (marked source)", gauss_seidel::defaults);
  const long n = o.n;
  double* sh_a = dsm::alloc<double>(n * n);
  if (dsm::rank() == 0) gauss_seidel::init(sh_a, n);
  dsm::barrier();
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
    double change = 0;
#pragma dsm parallel for ordered(2) reduction(max: change)
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) {
#pragma dsm ordered depend(sink: i - 1, j + 1) depend(sink: i, j - 1)
        const double v = (sh_a[(i - 1) * n + j - 1] + sh_a[(i - 1) * n + j] + sh_a[(i - 1) * n + j + 1] +
                          sh_a[i * n + j - 1] + sh_a[i * n + j] + sh_a[i * n + j + 1] + sh_a[(i + 1) * n + j - 1] +
                          sh_a[(i + 1) * n + j] + sh_a[(i + 1) * n + j + 1]) / 9.0;
        change = std::max(change, std::fabs(v - sh_a[i * n + j]));
        sh_a[i * n + j] = v;
#pragma dsm ordered depend(source)
      }
    trace.iteration(it);
    if (change <= gauss_seidel::tolerance) break;
  }
  const double t = dsm::wtime() - t0;
  return app::finish(o, t, [&] { return gauss_seidel::sum(sh_a, n); }, gauss_seidel::reference);
}
