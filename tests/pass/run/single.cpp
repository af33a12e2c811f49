// `#pragma dsm single` in an elimination: at each step rank 0 alone scales the pivot row
// (a statement, and a block with a loop of its own), every rank waits for it, then the
// marked loop updates the rows below with the scaled row. Integer data, so results are
// exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 96;
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_steps = dsm::alloc<long>(1);
#pragma dsm parallel for
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) sh_a[i * n + j] = (i * 31 + j * 17) % 101 + 1;
  dsm::barrier();
  for (long k = 0; k < n - 1; ++k) {
#pragma dsm single
    {
      for (long j = k; j < n; ++j) sh_a[k * n + j] = (sh_a[k * n + j] * 3 + k) % 1000003;
      sh_steps[0] += 1;
    }
#pragma dsm single
    sh_a[k * n + k] += 1;
#pragma dsm parallel for
    for (long i = k + 1; i < n; ++i)
      for (long j = k; j < n; ++j) sh_a[i * n + j] = (sh_a[i * n + j] + sh_a[k * n + j] * (i % 7)) % 1000003;
    dsm::barrier();
  }
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long i = 0; i < n * n; ++i) h = (h ^ static_cast<unsigned long>(sh_a[i])) * 1099511628211ul;
    std::printf("steps %ld checksum %016lx\n", sh_steps[0], h);
  }
  dsm::finalize();
}
