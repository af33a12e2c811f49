// spmv_seq / spmv_omp: the products over all rows, split by OpenMP's static schedule.
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "spmv: sparse matrix-vector products (CSR)", spmv::defaults);
  const long g = o.n, n = g * g;
  std::vector<long> p(n + 1), col(spmv::nonzeros_at_most(g));
  std::vector<double> v(spmv::nonzeros_at_most(g)), x(n), y(n);
  spmv::build(g, p.data(), col.data(), v.data(), x.data());
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  for (long it = 0; it < o.iters; ++it) {
    APP_OMP_FOR
    for (long r = 0; r < n; ++r) spmv::product(p.data(), col.data(), v.data(), x.data(), y.data(), r, r + 1);
    APP_OMP_FOR
    for (long r = 0; r < n; ++r) x[r] = y[r] / 8;
    trace.iteration(it);
  }
  const double t = app::now() - t0;
  return app::conclude(o, spmv::sum(x.data(), g), t, spmv::reference);
}
