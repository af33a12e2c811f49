// cg_seq / cg_omp: the loops over all rows, split by OpenMP's static schedule, the dot
// products as OpenMP reductions.
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

#ifdef _OPENMP
#define CG_PRAGMA(text) _Pragma(#text)
#define CG_OMP_FOR_SUM(var) CG_PRAGMA(omp parallel for schedule(static) reduction(+ : var))
#else
#define CG_OMP_FOR_SUM(var)
#endif

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "cg: conjugate gradient (CSR)", cg::defaults, cg::problems);
  const long n = cg::rows_of(o);
  std::vector<long> start(n + 1), col(cg::nonzeros_at_most(o));
  std::vector<double> val(cg::nonzeros_at_most(o)), x(n), r(n), p(n), q(n);
  cg::build(o, start.data(), col.data(), val.data());
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  APP_OMP_FOR
  for (long i = 0; i < n; ++i) cg::start_vectors(x.data(), r.data(), p.data(), i, i + 1);
  double rr = static_cast<double>(n);
  for (long it = 0; it < o.iters; ++it) {
    double pq = 0;
    CG_OMP_FOR_SUM(pq)
    for (long i = 0; i < n; ++i) pq += cg::product(start.data(), col.data(), val.data(), p.data(), q.data(), i, i + 1);
    const double alpha = rr / pq;
    double next = 0;
    CG_OMP_FOR_SUM(next)
    for (long i = 0; i < n; ++i) next += cg::update(alpha, p.data(), q.data(), x.data(), r.data(), i, i + 1);
    const double beta = next / rr;
    APP_OMP_FOR
    for (long i = 0; i < n; ++i) cg::direction(beta, r.data(), p.data(), i, i + 1);
    rr = next;
    trace.iteration(it);
  }
  const double t = app::now() - t0;
  return cg::conclude(o, x.data(), rr, t);
}
