// shallow_seq / shallow_omp.
#include <vector>

#include "../common/local_main.hpp"
#include "kernel.hpp"

namespace {
// OpenMP splits the row loops; the edge loops are short and stay serial.
struct Local : shallow::Serial {
  void rows(long lo, long hi, shallow::Written, auto f) {
    APP_OMP_FOR
    for (long j = lo; j < hi; ++j) f(j, j + 1);
  }
};
}  // namespace

int main(int argc, char** argv) {
  const app::Options o = app::parse(argc, argv, "shallow: the SWM shallow-water model", shallow::defaults);
  std::vector<std::vector<double>> store;
  const shallow::Grid g = shallow::make_grid(o.n, [&](long count) { return store.emplace_back(count).data(); });
  shallow::init(g);
  Local ex;
  const double t0 = app::now();
  app::Tracer trace(o.trace);
  for (long c = 0; c < o.iters; ++c) {
    shallow::timestep(g, c, ex);
    trace.iteration(c);
  }
  const double t = app::now() - t0;
  const auto sum = shallow::sum(g);
  return app::conclude(o, sum, t, shallow::reference);
}
