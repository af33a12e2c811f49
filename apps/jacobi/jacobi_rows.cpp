// jacobi as a scientist may also write it: the row updates in functions the marked loops
// call. dsm-pass reads the functions' bodies for the loops' sections, so this version runs
// like jacobi.cpp (scripts/bench dsm compares the two).
#include <dsm/dsm.hpp>

#include "kernel.hpp"
#include "../common/dsm_finish.hpp"

namespace {

void relax_row(float* out, const float* up, const float* mid, const float* down, long n) {
  for (long j = 1; j < n - 1; ++j) out[j] = 0.25f * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
}

void copy_row(float* dst, const float* src, long n) {
  for (long j = 1; j < n - 1; ++j) dst[j] = src[j];
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "jacobi, rows in functions (shared-memory source for dsm-pass)", jacobi::defaults);
  const long n = o.n;
  float* sh_a = dsm::alloc<float>(n * n);
  float* sh_b = dsm::alloc<float>(n * n);
  if (dsm::rank() == 0) jacobi::init(sh_a, n);
  dsm::barrier();

  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  for (long it = 0; it < o.iters; ++it) {
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) relax_row(&sh_b[i * n], &sh_a[(i - 1) * n], &sh_a[i * n], &sh_a[(i + 1) * n], n);
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) copy_row(&sh_a[i * n], &sh_b[i * n], n);
    dsm::barrier();
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;

  return app::finish(o, t, [&] { return jacobi::sum(sh_a, n); }, jacobi::reference);
}
