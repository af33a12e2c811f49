// The shared-memory source of cg: the OpenMP loops on `#pragma dsm parallel for`, the dot
// products as reductions. Rank 0 builds the matrix, as a program ported from OpenMP would.
// Through dsm-pass (cg_pass) the reads of p through the column indices are whole-array
// sections, served by the faults they take; compiled without it (cg_plain) every rank runs
// every loop, the sequential reference at one rank. The loops are kernel.hpp's, written out
// so that the pass sees them.
#include <dsm/dsm.hpp>

#include "shared.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "cg (marked source)", cg::defaults, cg::problems);
  const long n = cg::rows_of(o);
  const cg::Shared m = cg::shared_problem(o);
  long *sh_start = m.start, *sh_col = m.col;
  double *sh_val = m.val, *sh_x = m.x, *sh_r = m.r, *sh_p = m.p, *sh_q = m.q;
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) {
    sh_x[i] = 0;
    sh_r[i] = 1;
    sh_p[i] = 1;
  }
  dsm::barrier();
  double rr = static_cast<double>(n);
  for (long it = 0; it < o.iters; ++it) {
    double pq = 0;
#pragma dsm parallel for reduction(+: pq)
    for (long i = 0; i < n; ++i) {
      double s = 0;
      for (long k = sh_start[i]; k < sh_start[i + 1]; ++k) s += sh_val[k] * sh_p[sh_col[k]];
      sh_q[i] = s;
      pq += sh_p[i] * s;
    }
    const double alpha = rr / pq;
    double next = 0;
#pragma dsm parallel for reduction(+: next)
    for (long i = 0; i < n; ++i) {
      sh_x[i] += alpha * sh_p[i];
      sh_r[i] -= alpha * sh_q[i];
      next += sh_r[i] * sh_r[i];
    }
    const double beta = next / rr;
#pragma dsm parallel for
    for (long i = 0; i < n; ++i) sh_p[i] = sh_r[i] + beta * sh_p[i];
    dsm::barrier();
    rr = next;
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;
  return cg::finish(o, sh_x, rr, t);
}
