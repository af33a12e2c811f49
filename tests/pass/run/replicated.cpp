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
  const long m = 256;
  long* sh_c = dsm::alloc<long>(m * m);

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

  // Every rank reads a value outside the loops that the next loop overwrites on the rank
  // holding its page (a factorization's pivot, read before the column is scaled): each
  // rank must read it as the barrier left it, however early the holder starts the loop.
#pragma dsm parallel for
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < m; ++j) sh_c[i * m + j] = (i * 31 + j * 17) % 1009 + (i == j ? 5000 : 0);
  dsm::barrier();
  long pivots = 0;
  for (long k = 0; k < m; ++k) {
    const long pivot = sh_c[k * m + k];
    pivots = (pivots * 31 + pivot) % 1000003;
#pragma dsm parallel for
    for (long i = k; i < m; ++i) sh_c[i * m + k] = i == k ? pivot % 4999 + 1 : (sh_c[i * m + k] + pivot) % 1000003;
    dsm::barrier();
#pragma dsm parallel for
    for (long i = k + 1; i < m; ++i)
      for (long j = k + 1; j <= i; ++j) sh_c[i * m + j] = (sh_c[i * m + j] + sh_c[i * m + k] * sh_c[j * m + k]) % 1000003;
    dsm::barrier();
  }

  // One checksum per array: a run that differs from the sequential one names the array.
  if (dsm::rank() == 0) {
    const auto checksum = [](const long* x, long count) {
      unsigned long h = 1469598103934665603ul;
      for (long i = 0; i < count; ++i) h = (h ^ static_cast<unsigned long>(x[i])) * 1099511628211ul;
      return h;
    };
    std::printf("a[n-1] %ld a[n/2] %ld corner %ld\n", sh_a[n - 1], sh_a[n / 2], sh_g[(rows - 1) * cols]);
    std::printf("checksums: a %016lx, g %016lx, c %016lx\n", checksum(sh_a, n), checksum(sh_g, rows * cols), checksum(sh_c, m * m));
  }
  // Rank 0 prints the others' pivots too: each must have read what rank 0 read.
  long* sh_pivots = dsm::alloc<long>(dsm::nprocs());
  sh_pivots[dsm::rank()] = pivots;
  dsm::barrier();
  if (dsm::rank() == 0) {
    int differ = 0;
    for (int r = 0; r < dsm::nprocs(); ++r) differ += sh_pivots[r] != pivots;
    std::printf("pivots %ld, %d ranks read others\n", pivots, differ);
  }
  dsm::finalize();
}
