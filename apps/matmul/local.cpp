// matmul_seq / matmul_omp.
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "matmul: C = A * B, repeated", matmul::defaults);
  const long n = o.n;
  std::vector<long> a(n * n), b(n * n), c(n * n);
  matmul::init(a.data(), b.data(), n);
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  for (long it = 0; it < o.iters; ++it) {
    APP_OMP_FOR
    for (long i = 0; i < n; ++i) matmul::rows(a.data(), b.data(), c.data(), n, i, i + 1);
    trace.iteration(it);
  }
  const double t = app::now() - t0;
  const auto sum = matmul::sum(c.data(), n);
  return app::conclude(o, sum, t, matmul::reference);
}
