// gauss_seidel_seq / gauss_seidel_omp. With OpenMP, the nest is a doacross loop (OpenMP
// 4.5's ordered(2) with depend clauses): each point waits for its upper-right neighbour and
// its left one, which is how GCC runs such a loop, a synchronization per point; the
// largest change is a max-reduction.
#include <algorithm>
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "gauss_seidel: 9-point relaxation in place", gauss_seidel::defaults);
  const long n = o.n;
  std::vector<double> grid(n * n);
  double* a = grid.data();
  gauss_seidel::init(a, n);
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  for (long it = 0; it < o.iters; ++it) {
    double change = 0;
#ifdef _OPENMP
#pragma omp parallel for ordered(2) reduction(max : change)
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) {
#pragma omp ordered depend(sink : i - 1, j + 1) depend(sink : i, j - 1)
        change = std::max(change, gauss_seidel::point(a, n, i, j));
#pragma omp ordered depend(source)
      }
#else
    change = gauss_seidel::block(a, n, 1, n - 1, 1, n - 1);
#endif
    trace.iteration(it);
    if (change <= gauss_seidel::tolerance) break;
  }
  const double t = app::now() - t0;
  return app::conclude(o, gauss_seidel::sum(a, n), t, gauss_seidel::reference);
}
