// jacobi_seq / jacobi_omp.
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "jacobi: relaxation on a grid of floats", jacobi::defaults);
  const long n = o.n;
  std::vector<float> a(n * n), b(n * n);
  jacobi::init(a.data(), n);
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  for (long it = 0; it < o.iters; ++it) {
    APP_OMP_FOR
    for (long i = 1; i < n - 1; ++i) jacobi::sweep(a.data(), b.data(), n, i, i + 1);
    APP_OMP_FOR
    for (long i = 1; i < n - 1; ++i) jacobi::copy(b.data(), a.data(), n, i, i + 1);
    trace.iteration(it);
  }
  const double t = app::now() - t0;
  const auto sum = jacobi::sum(a.data(), n);
  return app::conclude(o, sum, t, jacobi::reference);
}
