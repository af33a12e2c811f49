// Pass-compiled loops whose work is in functions they call (row kernels of a flattened
// stencil, a 2-D row copy, a call two deep, a lambda): the descriptors come from the callees'
// bodies, and the result must equal the sequential (plain-compiled) run. Integer data, so
// results are exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

constexpr long M = 80;

void relax_row(long* out, const long* up, const long* mid, const long* down, long n) {
  for (long j = 1; j < n - 1; ++j) out[j] = (up[j] + down[j] + mid[j - 1] + 3 * mid[j + 1]) % 100003;
}
void fill(long* row, long first, long count, long v) {
  for (long k = 0; k < count; ++k) row[first + k] = v + k;
}
void edges(long* row, long n, long v) {
  fill(row, 0, 1, v);
  fill(row, n - 1, 1, -v);
}
void copy_row(long* dst, const long* src, long shift) {
  for (long j = 0; j < M; ++j) dst[j] = src[(j + shift) % M];
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 80;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long (*sh_g)[M] = dsm::alloc<long[M]>(n);
  if (dsm::rank() == 0)
    for (long k = 0; k < n * n; ++k) sh_a[k] = (k * 7919) % 1009;
  dsm::barrier();

  for (int it = 0; it < 4; ++it) {
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) {
      relax_row(&sh_b[i * n], &sh_a[(i - 1) * n], sh_a + i * n, &sh_a[(i + 1) * n], n);
      edges(sh_b + i * n, n, i + it);
    }
    dsm::barrier();
#pragma dsm parallel for
    for (long i = 1; i < n - 1; ++i) {
      auto take = [](long* dst, const long* src, long count) {
        for (long j = 0; j < count; ++j) dst[j] = src[j];
      };
      take(sh_a + i * n, &sh_b[i * n], n);
    }
    dsm::barrier();
  }
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) copy_row(sh_g[i], sh_a + i * n, i);
  dsm::barrier();

  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    auto mix = [&](long x) { h = (h ^ static_cast<unsigned long>(x)) * 1099511628211ul; };
    for (long k = 0; k < n * n; ++k) mix(sh_a[k]);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < M; ++j) mix(sh_g[i][j]);
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
  return 0;
}
