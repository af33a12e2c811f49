// Integration check of dsm::lb::Pipeline through dsmrun: a 5-point Gauss-Seidel (lookahead
// 0: strips, not parallelograms) over a grid of longs, repeated so that the blocks can follow
// the ranks' speeds. Rank 0 checks the grid against a sequential run and prints each rank's
// rows in the last sweep. With --slow R, rank R also sleeps `slow_ns` per point of each of
// its tiles, and the program fails unless rank R ends with at most 3/4 of the other ranks'
// mean rows. The blocks follow wall-clock time in the tiles, which other programs on a core
// stretch: extra computation on rank R (8 times the points) was undone in a parallel test
// run that held rank 0's core. A sleep only grows, and is some 40 times a point's work here:
// the decision turns only if another rank's points took as long, sanitizers and all. With
// --equal, it fails unless every rank keeps its equal share (as under --lb static).
#include <dsm/dsm.hpp>
#include <dsm/pipeline.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {
constexpr long slow_ns = 200;
constexpr long n = 600, sweeps = 16;

long point(const long* a, long i, long j) {
  return (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1] + 3 * a[i * n + j]) % 1000003;
}

void sleep_for_points(long points) {
  const long ns = points * slow_ns;
  timespec ts{ns / 1000000000, ns % 1000000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
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
  for (long s = 0; s < sweeps; ++s) {
    auto sweep = pipe.sweep();
    // Each rank's blocks are its own (no twins, no diffs): the time in the tiles is the points'.
    for (int r = 0; r < dsm::nprocs(); ++r)
      for (const dsm::lb::Range& b : pipe.rows_of(r)) dsm::own(r, sh_a + b.lb * n, (b.ub - b.lb) * n * sizeof(long));
    for (const dsm::lb::Tile& tile : sweep) {
      long points = 0;
      for (long i = tile.rows().lb; i < tile.rows().ub; ++i)
        for (long j = tile.cols(i).lb; j < tile.cols(i).ub; ++j, ++points) sh_a[i * n + j] = point(sh_a, i, j);
      if (dsm::rank() == slow) sleep_for_points(points);
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
