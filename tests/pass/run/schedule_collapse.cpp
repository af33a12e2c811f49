// OpenMP loops as written for OpenMP: schedule(...) kinds, nowait, and collapse(2) over a
// rectangular nest, with a reduction over the collapsed nest. Integer data, so results are
// exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 200, m = 70;
  long* sh_a = dsm::alloc<long>(n * m);
  long* sh_b = dsm::alloc<long>(n * m);
  long i, j;
#pragma dsm parallel for collapse(2) schedule(dynamic, 4)
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) sh_a[i * m + j] = (i * 31 + j * 17) % 97;
  dsm::barrier();
#pragma dsm parallel for schedule(static), nowait
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) sh_b[i * m + j] = sh_a[i * m + j] * 2 + (j > 0 ? sh_a[i * m + j - 1] : 0);
  dsm::barrier();
  long total = 0, peak = 0;
#pragma dsm parallel for collapse(2) schedule(guided) reduction(+: total) reduction(max: peak)
  for (i = 0; i < n; i++) {
    for (j = 0; j < m; j++) {
      total += sh_b[i * m + j];
      peak = sh_b[i * m + j] > peak ? sh_b[i * m + j] : peak;
    }
  }
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long k = 0; k < n * m; ++k) h = (h ^ static_cast<unsigned long>(sh_b[k])) * 1099511628211ul;
    std::printf("checksum %016lx total %ld peak %ld\n", h, total, peak);
  }
  dsm::finalize();
}
