// Gauss-Seidel relaxation on an n x n grid of doubles, 9-point: each point becomes the mean
// of itself and its eight neighbours, in place, row after row, so the upper row and the left
// neighbour are already this sweep's. A pipelined (DOACROSS) nest: row i can start column j
// once row i - 1 has done column j + 1. Each sweep also finds the largest change of a point
// (a max-reduction); the sweeps stop once it is at most `tolerance`, or after --iters.
#pragma once

#include <algorithm>
#include <cmath>
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

inline constexpr double tolerance = 1e-6;

// Returns how much the point changed.
inline double point(double* a, long n, long i, long j) {
  const double* up = a + (i - 1) * n + j;
  const double* row = a + i * n + j;
  const double* down = a + (i + 1) * n + j;
  const double v = (up[-1] + up[0] + up[1] + row[-1] + row[0] + row[1] + down[-1] + down[0] + down[1]) / 9.0;
  const double change = std::fabs(v - row[0]);
  a[i * n + j] = v;
  return change;
}

// Rows [rlo, rhi) x columns [clo, chi), in the sequential order; the largest change.
inline double block(double* a, long n, long rlo, long rhi, long clo, long chi) {
  double change = 0;
  for (long i = rlo; i < rhi; ++i)
    for (long j = clo; j < chi; ++j) change = std::max(change, point(a, n, i, j));
  return change;
}

inline std::uint64_t sum(const double* a, long n) { return app::checksum(a, sizeof(double) * n * n); }

inline std::uint64_t reference(const app::Options& o) {
  std::vector<double> a(o.n * o.n);
  init(a.data(), o.n);
  for (long it = 0; it < o.iters; ++it)
    if (block(a.data(), o.n, 1, o.n - 1, 1, o.n - 1) <= tolerance) break;
  return sum(a.data(), o.n);
}

}  // namespace gauss_seidel
