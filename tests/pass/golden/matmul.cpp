// Matrix multiply: an inner variable (k) with a symbolic coefficient (n) in one subscript.
#include <dsm/dsm.hpp>

void matmul(long* sh_c, const long* sh_a, const long* sh_b, long n) {
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      long sum = 0;
      for (long k = 0; k < n; ++k) sum += sh_a[i * n + k] * sh_b[k * n + j];
      sh_c[i * n + j] = sum;
    }
}
