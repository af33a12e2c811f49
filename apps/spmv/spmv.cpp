// The shared-memory source of spmv: the OpenMP loops on `#pragma dsm parallel for`. Rank 0
// builds the matrix, as a program ported from OpenMP would. Through dsm-pass (spmv_pass)
// the reads through the column indices are whole-array sections, served by the faults they
// take; compiled without it (spmv_plain) every rank runs every loop, the sequential
// reference at one rank. The product is kernel.hpp's, written out so that the pass sees it.
#include <dsm/dsm.hpp>

#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "spmv (marked source)", spmv::defaults);
  const long g = o.n, n = g * g;
  long* sh_p = dsm::alloc<long>(n + 1);
  long* sh_col = dsm::alloc<long>(spmv::nonzeros_at_most(g));
  double* sh_v = dsm::alloc<double>(spmv::nonzeros_at_most(g));
  double* sh_x = dsm::alloc<double>(n);
  double* sh_y = dsm::alloc<double>(n);
  if (dsm::rank() == 0) spmv::build(g, sh_p, sh_col, sh_v, sh_x);
  dsm::barrier();
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
#pragma dsm parallel for
    for (long r = 0; r < n; ++r) {
      double s = 0;
      for (long k = sh_p[r]; k < sh_p[r + 1]; ++k) s += sh_v[k] * sh_x[sh_col[k]];
      sh_y[r] = s;
    }
    dsm::barrier();
#pragma dsm parallel for
    for (long r = 0; r < n; ++r) sh_x[r] = sh_y[r] / 8;
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;
  return app::finish(o, t, [&] { return spmv::sum(sh_x, g); }, spmv::reference);
}
