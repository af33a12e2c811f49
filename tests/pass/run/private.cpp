// private(...) and firstprivate(...) on a marked loop, as OpenMP code has them: a temporary
// and a row pointer declared before the loop, written in every iteration, are each rank's
// own. Integer data, so results are exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 128;
  long* sh_a = dsm::alloc<long>(n * n);
  long t = 0, scale = 3;
  const long* row = nullptr;
#pragma dsm parallel for private(t, row) firstprivate(scale)
  for (long i = 0; i < n; ++i) {
    row = sh_a + i * n;
    for (long j = 0; j < n; ++j) {
      t = (i * 131 + j * 7) % 1009;
      sh_a[i * n + j] = t * scale + (row == sh_a + i * n);
    }
  }
  dsm::barrier();
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long i = 0; i < n * n; ++i) h = (h ^ static_cast<unsigned long>(sh_a[i])) * 1099511628211ul;
    std::printf("checksum %016lx\n", h);
  }
  dsm::finalize();
}
