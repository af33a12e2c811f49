// private(...) and firstprivate(...) on a marked loop, as OpenMP code has them: a temporary
// and a row pointer declared before the loop, written in every iteration, are each rank's
// own; lastprivate(...) values are those of the last iteration on every rank. Integer data,
// so results are exact. Rank 0 prints.
#include <dsm/balancer.hpp>
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
  // lastprivate: the values the last iteration (i = 126 with this step) left, on every rank;
  // a loop without iterations leaves them as they were.
  long last_t = -1, untouched = 42;
  const long* last_row = nullptr;
#pragma dsm parallel for lastprivate(last_t, last_row)
  for (long i = 0; i < n; i += 3) {
    last_row = sh_a + i * n;
    last_t = sh_a[i * n + 5] * 2 + i;
  }
#pragma dsm parallel for lastprivate(untouched)
  for (long i = 0; i < 0; ++i) untouched = i;
  // Every rank has the same values: their minimum and maximum over the ranks agree.
  long lo = last_t, hi = last_t, row_lo = last_row - sh_a, row_hi = row_lo;
  dsm::lb::Reduction agree{dsm::lb::reduced<dsm::lb::Op::min>(lo), dsm::lb::reduced<dsm::lb::Op::max>(hi),
                           dsm::lb::reduced<dsm::lb::Op::min>(row_lo), dsm::lb::reduced<dsm::lb::Op::max>(row_hi)};
  lo = hi = last_t;
  row_lo = row_hi = last_row - sh_a;
  agree.finish();
  if (dsm::rank() == 0) {
    unsigned long h = 1469598103934665603ul;
    for (long i = 0; i < n * n; ++i) h = (h ^ static_cast<unsigned long>(sh_a[i])) * 1099511628211ul;
    std::printf("checksum %016lx\n", h);
    std::printf("last %ld row %ld untouched %ld same on every rank %d\n", last_t, static_cast<long>(last_row - sh_a),
                untouched, lo == hi && row_lo == row_hi);
  }
  dsm::finalize();
}
