// Sparse matrix-vector products in CSR form: the 5-point Laplacian of a g x g grid (g² rows),
// x <- A x / 8 repeated. x is read through the column indices, which the pass cannot follow:
// an irregular loop, where a rank needs only the entries of x its rows' columns name (its own
// rows' and a grid row on either side), not the whole vector.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/app.hpp"

namespace spmv {

inline const app::Options defaults{1500, 50, false, false};

inline long nonzeros_at_most(long g) { return 5 * g * g; }

// Row starts p (g² + 1), column indices col and values v (nonzeros_at_most each), and x.
inline void build(long g, long* p, long* col, double* v, double* x) {
  const long n = g * g;
  long k = 0;
  for (long r = 0; r < n; ++r) {
    p[r] = k;
    const long i = r / g, j = r % g;
    const long neighbours[4] = {i > 0 ? r - g : -1, j > 0 ? r - 1 : -1, j < g - 1 ? r + 1 : -1, i < g - 1 ? r + g : -1};
    for (int d = 0; d < 2; ++d)
      if (neighbours[d] >= 0) col[k] = neighbours[d], v[k++] = -1;
    col[k] = r, v[k++] = 4;
    for (int d = 2; d < 4; ++d)
      if (neighbours[d] >= 0) col[k] = neighbours[d], v[k++] = -1;
  }
  p[n] = k;
  for (long r = 0; r < n; ++r) x[r] = static_cast<double>((r * 7) % 13);
}

// y = A x for rows [lo, hi).
inline void product(const long* p, const long* col, const double* v, const double* x, double* y, long lo, long hi) {
  for (long r = lo; r < hi; ++r) {
    double s = 0;
    for (long k = p[r]; k < p[r + 1]; ++k) s += v[k] * x[col[k]];
    y[r] = s;
  }
}

inline std::uint64_t sum(const double* x, long g) { return app::checksum(x, sizeof(double) * g * g); }

inline std::uint64_t reference(const app::Options& o) {
  const long g = o.n, n = g * g;
  std::vector<long> p(n + 1), col(nonzeros_at_most(g));
  std::vector<double> v(nonzeros_at_most(g)), x(n), y(n);
  build(g, p.data(), col.data(), v.data(), x.data());
  for (long it = 0; it < o.iters; ++it) {
    product(p.data(), col.data(), v.data(), x.data(), y.data(), 0, n);
    for (long r = 0; r < n; ++r) x[r] = y[r] / 8;
  }
  return sum(x.data(), g);
}

}  // namespace spmv
