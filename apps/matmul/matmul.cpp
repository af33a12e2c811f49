// matmul as a scientist writes it for the DSM: plain shared-memory code, shared arrays with
// the sh_ prefix, the parallel loop marked. dsm-pass turns the marked loop into balanced
// ranges (matmul_pass); compiled plainly, every rank runs the whole loop (matmul_plain, the
// sequential reference at 1 rank).
#include <dsm/dsm.hpp>

#include "kernel.hpp"
#include "../common/dsm_finish.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "matmul (shared-memory source for dsm-pass)", matmul::defaults);
  const long n = o.n;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long* sh_c = dsm::alloc<long>(n * n);
  if (dsm::rank() == 0) matmul::init(sh_a, sh_b, n);
  dsm::barrier();

  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
#pragma dsm parallel for
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        long s = 0;
        for (long k = 0; k < n; ++k) s += sh_a[i * n + k] * sh_b[k * n + j];
        sh_c[i * n + j] = s;
      }
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return matmul::sum(sh_c, n); }, matmul::reference);
}
