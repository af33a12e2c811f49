// shallow as a scientist writes it for the DSM (see ../matmul/matmul.cpp for the three ways
// it is built). Every loop is marked, the periodic row copies included: split naively they
// make all ranks write rows 0 and N (false sharing); the locality-conscious balancer keeps
// each of them with the rank that holds the row. The order of phases and every expression
// are those of kernel.hpp, so the results are bit-identical to shallow_seq.
#include <dsm/dsm.hpp>

#include "kernel.hpp"
#include "../common/dsm_finish.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "shallow (shared-memory source for dsm-pass)", shallow::defaults);
  const long n = o.n, M = n - 1, N = n - 1;
  double* sh_u = dsm::alloc<double>(n * n);
  double* sh_v = dsm::alloc<double>(n * n);
  double* sh_p = dsm::alloc<double>(n * n);
  double* sh_unew = dsm::alloc<double>(n * n);
  double* sh_vnew = dsm::alloc<double>(n * n);
  double* sh_pnew = dsm::alloc<double>(n * n);
  double* sh_uold = dsm::alloc<double>(n * n);
  double* sh_vold = dsm::alloc<double>(n * n);
  double* sh_pold = dsm::alloc<double>(n * n);
  double* sh_cu = dsm::alloc<double>(n * n);
  double* sh_cv = dsm::alloc<double>(n * n);
  double* sh_z = dsm::alloc<double>(n * n);
  double* sh_h = dsm::alloc<double>(n * n);
  const shallow::Grid g{n, sh_u, sh_v, sh_p, sh_unew, sh_vnew, sh_pnew, sh_uold, sh_vold, sh_pold, sh_cu, sh_cv, sh_z, sh_h};
  if (dsm::rank() == 0) shallow::init(g);
  dsm::barrier();

  const double alpha = shallow::alpha;
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long cycle = 0; cycle < o.iters; ++cycle) {
    const shallow::Step s(cycle);
    const double fsdx = s.fsdx, fsdy = s.fsdy, tdts8 = s.tdts8, tdtsdx = s.tdtsdx, tdtsdy = s.tdtsdy;

    // calc1
#pragma dsm parallel for
    for (long j = 0; j < N; ++j)
      for (long i = 0; i < M; ++i) {
        sh_cu[j * n + i + 1] = 0.5 * (sh_p[j * n + i + 1] + sh_p[j * n + i]) * sh_u[j * n + i + 1];
        sh_cv[(j + 1) * n + i] = 0.5 * (sh_p[(j + 1) * n + i] + sh_p[j * n + i]) * sh_v[(j + 1) * n + i];
        sh_z[(j + 1) * n + i + 1] = (fsdx * (sh_v[(j + 1) * n + i + 1] - sh_v[(j + 1) * n + i]) -
                                     fsdy * (sh_u[(j + 1) * n + i + 1] - sh_u[j * n + i + 1])) /
                                    (sh_p[j * n + i] + sh_p[j * n + i + 1] + sh_p[(j + 1) * n + i + 1] + sh_p[(j + 1) * n + i]);
        sh_h[j * n + i] = sh_p[j * n + i] + 0.25 * (sh_u[j * n + i + 1] * sh_u[j * n + i + 1] + sh_u[j * n + i] * sh_u[j * n + i] +
                                                    sh_v[(j + 1) * n + i] * sh_v[(j + 1) * n + i] + sh_v[j * n + i] * sh_v[j * n + i]);
      }
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 0; i < M; ++i) {
      sh_cv[i] = sh_cv[N * n + i];
      sh_z[i + 1] = sh_z[N * n + i + 1];
    }
#pragma dsm parallel for
    for (long i = 0; i < M; ++i) {
      sh_cu[N * n + i + 1] = sh_cu[i + 1];
      sh_h[N * n + i] = sh_h[i];
    }
    dsm::barrier();
#pragma dsm parallel for
    for (long j = 0; j < N + 1; ++j) {
      sh_cu[j * n] = sh_cu[j * n + M];
      sh_cv[j * n + M] = sh_cv[j * n];
      sh_z[j * n] = sh_z[j * n + M];
      sh_h[j * n + M] = sh_h[j * n];
    }
    dsm::barrier();

    // calc2
#pragma dsm parallel for
    for (long j = 0; j < N; ++j)
      for (long i = 0; i < M; ++i) {
        sh_unew[j * n + i + 1] = sh_uold[j * n + i + 1] +
                                 tdts8 * (sh_z[(j + 1) * n + i + 1] + sh_z[j * n + i + 1]) *
                                     (sh_cv[(j + 1) * n + i + 1] + sh_cv[(j + 1) * n + i] + sh_cv[j * n + i] + sh_cv[j * n + i + 1]) -
                                 tdtsdx * (sh_h[j * n + i + 1] - sh_h[j * n + i]);
        sh_vnew[(j + 1) * n + i] = sh_vold[(j + 1) * n + i] -
                                   tdts8 * (sh_z[(j + 1) * n + i + 1] + sh_z[(j + 1) * n + i]) *
                                       (sh_cu[(j + 1) * n + i + 1] + sh_cu[(j + 1) * n + i] + sh_cu[j * n + i] + sh_cu[j * n + i + 1]) -
                                   tdtsdy * (sh_h[(j + 1) * n + i] - sh_h[j * n + i]);
        sh_pnew[j * n + i] = sh_pold[j * n + i] - tdtsdx * (sh_cu[j * n + i + 1] - sh_cu[j * n + i]) -
                             tdtsdy * (sh_cv[(j + 1) * n + i] - sh_cv[j * n + i]);
      }
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 0; i < M; ++i) sh_vnew[i] = sh_vnew[N * n + i];
#pragma dsm parallel for
    for (long i = 0; i < M; ++i) {
      sh_unew[N * n + i + 1] = sh_unew[i + 1];
      sh_pnew[N * n + i] = sh_pnew[i];
    }
    dsm::barrier();
#pragma dsm parallel for
    for (long j = 0; j < N + 1; ++j) {
      sh_unew[j * n] = sh_unew[j * n + M];
      sh_vnew[j * n + M] = sh_vnew[j * n];
      sh_pnew[j * n + M] = sh_pnew[j * n];
    }
    dsm::barrier();

    if (cycle == 0) {
#pragma dsm parallel for
      for (long j = 0; j < N + 1; ++j)
        for (long i = 0; i < n; ++i) {
          sh_uold[j * n + i] = sh_u[j * n + i];
          sh_vold[j * n + i] = sh_v[j * n + i];
          sh_pold[j * n + i] = sh_p[j * n + i];
          sh_u[j * n + i] = sh_unew[j * n + i];
          sh_v[j * n + i] = sh_vnew[j * n + i];
          sh_p[j * n + i] = sh_pnew[j * n + i];
        }
      dsm::barrier();
    } else {
      // calc3
#pragma dsm parallel for
      for (long j = 0; j < N; ++j)
        for (long i = 0; i < M; ++i) {
          sh_uold[j * n + i] = sh_u[j * n + i] + alpha * (sh_unew[j * n + i] - 2.0 * sh_u[j * n + i] + sh_uold[j * n + i]);
          sh_vold[j * n + i] = sh_v[j * n + i] + alpha * (sh_vnew[j * n + i] - 2.0 * sh_v[j * n + i] + sh_vold[j * n + i]);
          sh_pold[j * n + i] = sh_p[j * n + i] + alpha * (sh_pnew[j * n + i] - 2.0 * sh_p[j * n + i] + sh_pold[j * n + i]);
          sh_u[j * n + i] = sh_unew[j * n + i];
          sh_v[j * n + i] = sh_vnew[j * n + i];
          sh_p[j * n + i] = sh_pnew[j * n + i];
        }
      dsm::barrier();
#pragma dsm parallel for
      for (long i = 0; i < M; ++i) {
        sh_uold[N * n + i] = sh_uold[i];
        sh_vold[N * n + i] = sh_vold[i];
        sh_pold[N * n + i] = sh_pold[i];
        sh_u[N * n + i] = sh_u[i];
        sh_v[N * n + i] = sh_v[i];
        sh_p[N * n + i] = sh_p[i];
      }
      dsm::barrier();
#pragma dsm parallel for
      for (long j = 0; j < N + 1; ++j) {
        sh_uold[j * n + M] = sh_uold[j * n];
        sh_vold[j * n + M] = sh_vold[j * n];
        sh_pold[j * n + M] = sh_pold[j * n];
        sh_u[j * n + M] = sh_u[j * n];
        sh_v[j * n + M] = sh_v[j * n];
        sh_p[j * n + M] = sh_p[j * n];
      }
      dsm::barrier();
    }
    trace.iteration(cycle);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return shallow::sum(g); }, shallow::reference);
}
