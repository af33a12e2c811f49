// Matrix multiply C = A * B of n x n longs (the paper's 256 x 256, repeated 100 times):
// the rows of C a version computes, the inputs, and the sequential reference.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/app.hpp"

namespace matmul {

inline const app::Options defaults{256, 100, false, false};

inline void init(long* a, long* b, long n) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      a[i * n + j] = (i * 7 + j * 3) % 11 - 5;
      b[i * n + j] = (i * 5 + j * 13) % 17 - 8;
    }
}

// Rows [lo, hi) of C.
inline void rows(const long* a, const long* b, long* c, long n, long lo, long hi) {
  for (long i = lo; i < hi; ++i)
    for (long j = 0; j < n; ++j) {
      long s = 0;
      for (long k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

inline std::uint64_t sum(const long* c, long n) { return app::checksum(c, sizeof(long) * n * n); }

inline std::uint64_t reference(const app::Options& o) {
  std::vector<long> a(o.n * o.n), b(o.n * o.n), c(o.n * o.n);
  init(a.data(), b.data(), o.n);
  for (long it = 0; it < o.iters; ++it) rows(a.data(), b.data(), c.data(), o.n, 0, o.n);
  return sum(c.data(), o.n);
}

}  // namespace matmul
