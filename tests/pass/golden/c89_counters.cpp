// Loop counters declared before the loops (C89 style): the marked loop and its inner loops
// are canonical, and the inner counters are private (no error for writing them); the
// sections are those of counters declared in the headers.
#include <dsm/dsm.hpp>

#include <cstdio>

#define N 120

static void smooth(long n, long* sh_a, long* sh_b) {
  long i, j, k;
#pragma dsm parallel for
  for (i = 1; i < n - 1; i++)
    for (j = 1; j < n - 1; j += 1) {
      long s = 0;
      for (k = 0; k < 3; ++k) s += sh_a[(i - 1 + k) * n + j];
      sh_b[i * n + j] = s % 1000003;
    }
  dsm::barrier();
}

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  long* sh_a = dsm::alloc<long>(N * N);
  long* sh_b = dsm::alloc<long>(N * N);
  long i;
  if (dsm::rank() == 0)
    for (i = 0; i < N * N; i++) sh_a[i] = (i * 7919) % 1009;
  dsm::barrier();
  smooth(N, sh_a, sh_b);
  smooth(N, sh_b, sh_a);
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (i = 0; i < N * N; i++) h = (h ^ static_cast<unsigned long>(sh_a[i])) * 1099511628211ul;
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
}
