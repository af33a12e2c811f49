// Flattened 2-D indexing with a run-time row length: Jacobi's sweep.
#include <dsm/dsm.hpp>

void sweep(float* sh_a, float* sh_b, long n) {
#pragma dsm parallel for
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 1; ++j)
      sh_b[i * n + j] = 0.25f * (sh_a[(i - 1) * n + j] + sh_a[(i + 1) * n + j] +
                                 sh_a[i * n + j - 1] + sh_a[i * n + j + 1]);
}
