// Jacobi relaxation on an n x n grid of floats (the paper's 2050 x 2050): one iteration is a
// sweep b = average of a's four neighbours over the interior, then a copy of b back into a.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/app.hpp"

namespace jacobi {

inline const app::Options defaults{2050, 100, false, false};

// Fixed boundary values on all four edges, a pattern inside.
inline void init(float* a, long n) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j)
      a[i * n + j] = (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0f : static_cast<float>((i * 31 + j * 17) % 97) / 97.0f;
}

// Interior rows [lo, hi) of the sweep.
inline void sweep(const float* a, float* b, long n, long lo, long hi) {
  for (long i = lo; i < hi; ++i)
    for (long j = 1; j < n - 1; ++j)
      b[i * n + j] = 0.25f * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
}

// Interior rows [lo, hi) of the copy back.
inline void copy(const float* b, float* a, long n, long lo, long hi) {
  for (long i = lo; i < hi; ++i)
    for (long j = 1; j < n - 1; ++j) a[i * n + j] = b[i * n + j];
}

inline std::uint64_t sum(const float* a, long n) { return app::checksum(a, sizeof(float) * n * n); }

inline std::uint64_t reference(const app::Options& o) {
  std::vector<float> a(o.n * o.n), b(o.n * o.n);
  init(a.data(), o.n);
  for (long it = 0; it < o.iters; ++it) {
    sweep(a.data(), b.data(), o.n, 1, o.n - 1);
    copy(b.data(), a.data(), o.n, 1, o.n - 1);
  }
  return sum(a.data(), o.n);
}

}  // namespace jacobi
