// jacobi as a scientist writes it for the DSM (see matmul.cpp for the three ways it is built).
#include <dsm/dsm.hpp>

#include "kernel.hpp"
#include "../common/dsm_finish.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "jacobi (shared-memory source for dsm-pass)", jacobi::defaults);
  const long n = o.n;
  float* sh_a = dsm::alloc<float>(n * n);
  float* sh_b = dsm::alloc<float>(n * n);
  if (dsm::rank() == 0) jacobi::init(sh_a, n);
  dsm::barrier();

  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j)
        sh_b[i * n + j] = 0.25f * (sh_a[(i - 1) * n + j] + sh_a[(i + 1) * n + j] + sh_a[i * n + j - 1] + sh_a[i * n + j + 1]);
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) sh_a[i * n + j] = sh_b[i * n + j];
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return jacobi::sum(sh_a, n); }, jacobi::reference);
}
