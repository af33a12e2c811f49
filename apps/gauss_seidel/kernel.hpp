// Gauss-Seidel relaxation on an n x n grid of doubles, 9-point: each point becomes the mean
// of itself and its eight neighbours, in place, row after row, so the upper row and the left
// neighbour are already this sweep's. A pipelined (DOACROSS) nest: row i can start column j
// once row i - 1 has done column j + 1.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/app.hpp"

namespace gauss_seidel {

inline const app::Options defaults{2000, 10, false, false};

// Fixed boundary values on all four edges, a pattern inside: rows [lo, hi).
inline void init_rows(double* a, long n, long lo, long hi) {
  for (long i = lo; i < hi; ++i)
    for (long j = 0; j < n; ++j)
      a[i * n + j] = (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0 : static_cast<double>((i * 31 + j * 17) % 97) / 97.0;
}
inline void init(double* a, long n) { init_rows(a, n, 0, n); }

inline void point(double* a, long n, long i, long j) {
  const double* up = a + (i - 1) * n + j;
  const double* row = a + i * n + j;
  const double* down = a + (i + 1) * n + j;
  a[i * n + j] = (up[-1] + up[0] + up[1] + row[-1] + row[0] + row[1] + down[-1] + down[0] + down[1]) / 9.0;
}

// Rows [rlo, rhi) x columns [clo, chi), in the sequential order.
inline void block(double* a, long n, long rlo, long rhi, long clo, long chi) {
  for (long i = rlo; i < rhi; ++i)
    for (long j = clo; j < chi; ++j) point(a, n, i, j);
}

inline std::uint64_t sum(const double* a, long n) { return app::checksum(a, sizeof(double) * n * n); }

inline std::uint64_t reference(const app::Options& o) {
  std::vector<double> a(o.n * o.n);
  init(a.data(), o.n);
  for (long it = 0; it < o.iters; ++it) block(a.data(), o.n, 1, o.n - 1, 1, o.n - 1);
  return sum(a.data(), o.n);
}

}  // namespace gauss_seidel
