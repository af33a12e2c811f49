// Code outside marked loops that every rank runs, writing pages that a loop's rank holds
// (its block, written in every execution): the update must happen once, as in the
// sequential run, whichever rank holds the page and however the ranks interleave. Integer
// data, so results are exact. Rank 0 prints.
#include <dsm/dsm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 1024, rows = 64, cols = 512;
  long* sh_a = dsm::alloc<long>(n);
  long* sh_g = dsm::alloc<long>(rows * cols);

  // A loop fills the array; then every rank doubles its last element, which the last
  // rank's block holds.
#pragma dsm parallel for
  for (long i = 0; i < n; ++i) sh_a[i] = 1;
  dsm::barrier();
  sh_a[n - 1] = sh_a[n - 1] * 2;
  sh_a[n / 2] += sh_a[n - 1];
  dsm::barrier();

  // A chain of steps as an elimination runs them: the loop updates the rows below the
  // pivot, then every rank updates the pivot row's diagonal, which the next loop reads.
  for (long k = 0; k < rows - 1; ++k) {
#pragma dsm parallel for
    for (long i = k + 1; i < rows; ++i)
      for (long j = 0; j < cols; ++j) sh_g[i * cols + j] = (sh_g[i * cols + j] * 3 + sh_g[k * cols + j % rows] + i + j) % 1000003;
    dsm::barrier();
    sh_g[(k + 1) * cols + k + 1] = (sh_g[(k + 1) * cols + k + 1] * 7 + k) % 1000003;
    ++sh_g[(rows - 1) * cols];
    dsm::barrier();
  }

  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long i = 0; i < n; ++i) h = (h ^ static_cast<unsigned long>(sh_a[i])) * 1099511628211ul;
    for (long i = 0; i < rows * cols; ++i) h = (h ^ static_cast<unsigned long>(sh_g[i])) * 1099511628211ul;
    std::printf("a[n-1] %ld a[n/2] %ld corner %ld checksum %016lx\n", sh_a[n - 1], sh_a[n / 2], sh_g[(rows - 1) * cols], h);
  }
  dsm::finalize();
}
