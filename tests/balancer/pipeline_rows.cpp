// Integration check of dsm::lb::Pipeline through dsmrun: a 5-point Gauss-Seidel (lookahead
// 0: strips, not parallelograms) over a grid of longs, repeated so that the blocks can follow
// the ranks' speeds. Rank 0 checks the grid against a sequential run and prints each rank's
// rows in the last sweep. With --slow R, rank R computes each of its points `slow_factor`
// times (the same result), and the program fails unless rank R ends with at most 3/4 of the
// other ranks' mean rows: 8 times slower alone, it is 3-4 times slower in wall-clock time
// with two other programs per core (a parallel test run), and such a program may slow one of
// the other ranks too, which the blocks rightly follow. With --equal, it fails unless every
// rank keeps its equal share (as under --lb static, slow rank or not).
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
constexpr int slow_factor = 8;
constexpr long n = 600, sweeps = 16;
volatile long sink;  // every extra computation is stored, so none can be left out

template <class T>
long point(T* a, long i, long j) {
  return (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1] + 3 * a[i * n + j]) % 1000003;
}

void init(long* a) {
  for (long i = 0; i < n * n; ++i) a[i] = (i * 7919) % 1009;
}
}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  int slow = -1;
  bool equal = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--slow") && i + 1 < argc) slow = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--equal")) equal = true;
  }
  long* sh_a = dsm::alloc<long>(n * n);
  if (dsm::rank() == 0) init(sh_a);
  dsm::barrier();
  dsm::lb::Pipeline pipe("pipeline_rows", 1, n - 1, 1, n - 1, dsm::lb::carried(sh_a, n), 0);
  const int rounds = dsm::rank() == slow ? slow_factor : 1;
  for (long s = 0; s < sweeps; ++s) {
    auto sweep = pipe.sweep();
    // Each rank's blocks are its own (no twins, no diffs): the time in the tiles is the points'.
    for (int r = 0; r < dsm::nprocs(); ++r)
      for (const dsm::lb::Range& b : pipe.rows_of(r)) dsm::own(r, sh_a + b.lb * n, (b.ub - b.lb) * n * sizeof(long));
    for (const dsm::lb::Tile& tile : sweep)
      for (long i = tile.rows().lb; i < tile.rows().ub; ++i)
        for (long j = tile.cols(i).lb; j < tile.cols(i).ub; ++j) {
          // Through a volatile view, so that the extra rounds cannot be folded into one.
          for (int r = 1; r < rounds; ++r) sink = point(static_cast<const volatile long*>(sh_a), i, j);
          sh_a[i * n + j] = point(sh_a, i, j);
        }
    dsm::barrier();
  }
  int rc = 0;
  if (dsm::rank() == 0) {
    std::vector<long> want(n * n);
    init(want.data());
    for (long s = 0; s < sweeps; ++s)
      for (long i = 1; i < n - 1; ++i)
        for (long j = 1; j < n - 1; ++j) want[i * n + j] = point(want.data(), i, j);
    for (long k = 0; k < n * n && rc == 0; ++k)
      if (sh_a[k] != want[k]) {
        std::printf("element %ld: %ld, sequential %ld\n", k, sh_a[k], want[k]);
        rc = 1;
      }
    std::vector<long> rows(std::size_t(dsm::nprocs()), 0);
    for (int r = 0; r < dsm::nprocs(); ++r)
      for (const dsm::lb::Range& b : pipe.rows_of(r)) rows[std::size_t(r)] += b.ub - b.lb;
    for (int r = 0; r < dsm::nprocs(); ++r) std::printf("rank %d rows %ld\n", r, rows[std::size_t(r)]);
    if (slow >= 0 && !equal) {
      const long others = (n - 2) - rows[std::size_t(slow)];
      if (4 * rows[std::size_t(slow)] * (dsm::nprocs() - 1) > 3 * others) rc = 1;
    }
    for (int r = 0; r < dsm::nprocs(); ++r)
      if (equal && std::labs(rows[std::size_t(r)] - (n - 2) / dsm::nprocs()) > 1) rc = 1;
    std::printf(rc ? "pipeline rows FAILED\n" : "pipeline rows ok\n");
  }
  dsm::finalize();
  return rc;
}
