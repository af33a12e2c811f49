// Pass-compiled kernels whose result must equal the sequential (plain-compiled) run:
// flattened stencil, 2-D rows, negative coefficient, step 3, triangular inner loop,
// whole-array (non-affine) reads. Integer data, so results are exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

constexpr long M = 96;

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 96;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long (*sh_g)[M] = dsm::alloc<long[M]>(n);
  long* sh_v = dsm::alloc<long>(n);
  if (dsm::rank() == 0)
    for (long k = 0; k < n * n; ++k) sh_a[k] = (k * 7919) % 1009;
  dsm::barrier();

  for (int it = 0; it < 3; ++it) {
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j)
        sh_b[i * n + j] = sh_a[(i - 1) * n + j] + sh_a[(i + 1) * n + j] - sh_a[i * n + j - 1] + 2 * sh_a[i * n + j + 1];
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i)
      for (long j = 1; j < n - 1; ++j) sh_a[i * n + j] = sh_b[i * n + j] % 100003;
    dsm::barrier();
  }
#pragma dsm parallel for
  for (int i = 0; i < n; i++)
    for (long j = 0; j <= i; ++j) sh_g[i][j] = sh_a[(n - 1 - i) * n + j] + i;  // negative coef, triangular
  dsm::barrier();
#pragma dsm parallel for
  for (long i = 0; i < n; i += 3) sh_v[i] = sh_g[i][i / 2] + sh_a[(i * i) % (n * n)];  // step 3, non-affine
  dsm::barrier();

  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    auto mix = [&](long x) { h = (h ^ static_cast<unsigned long>(x)) * 1099511628211ul; };
    for (long k = 0; k < n * n; ++k) mix(sh_a[k]);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < M; ++j) mix(sh_g[i][j]);
    for (long i = 0; i < n; ++i) mix(sh_v[i]);
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
  return 0;
}
