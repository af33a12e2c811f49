// Integration check of redistribute() through dsmrun: a matrix product over rows of longs,
// split by hand-written redistribute() calls, repeated so the balancer can act. Rank 0
// checks the result against a sequential product and prints each rank's final iteration
// count; with --slow R, rank R computes each of its rows `slow_factor` times (the same
// result), and the program fails unless rank R ends with fewer iterations than the others.
// The slowdown is in the rank's own CPU time, which the balancer measures whatever else runs
// on the machine: the decision would turn only if the other rank got less than
// 1/slow_factor of the slow rank's share of a core.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
constexpr int slow_factor = 4;
// Every extra computation of a row's elements is stored here, so none can be left out.
volatile long sink;
}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const long n = 256;
  int reps = 40, slow = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--slow")) slow = std::atoi(argv[i + 1]);
  }
  long* sh_a = dsm::alloc<long>(n * n);
  long* sh_b = dsm::alloc<long>(n * n);
  long* sh_c = dsm::alloc<long>(n * n);
  long* sh_count = dsm::alloc<long>(dsm::nprocs());
  if (dsm::rank() == 0)
    for (long i = 0; i < n * n; ++i) sh_a[i] = i % 7 - 3, sh_b[i] = i % 5 + 1;
  dsm::barrier();
  static dsm::lb::Site site("lb_rows.cpp:rows");
  long mine = 0;
  const int rounds = dsm::rank() == slow ? slow_factor : 1;
  for (int rep = 0; rep < reps; ++rep) {
    const dsm::lb::Section acc[] = {dsm::lb::section(sh_c, dsm::lb::Access::write, n, 0, n - 1),
                                    dsm::lb::section(sh_a, dsm::lb::Access::read, n, 0, n - 1),
                                    dsm::lb::whole_array(sh_b, dsm::lb::Access::read)};
    mine = 0;
    for (const dsm::lb::Range& r : dsm::lb::redistribute(site, 0, n, 1, acc))
      for (long i = r.lb; i < r.ub; i += r.step, ++mine)
        for (int round = 0; round < rounds; ++round)
          for (long j = 0; j < n; ++j) {
            long s = rep;
            for (long k = 0; k < n; ++k) s += sh_a[i * n + k] * sh_b[k * n + j];
            sh_c[i * n + j] = s;
            sink = s;
          }
    dsm::barrier();
  }
  sh_count[dsm::rank()] = mine;
  dsm::barrier();
  int status = 0;
  if (dsm::rank() == 0) {
    std::vector<long> a(sh_a, sh_a + n * n), b(sh_b, sh_b + n * n);
    long wrong = 0;
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        long s = reps - 1;
        for (long k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
        wrong += s != sh_c[i * n + j];
      }
    std::printf("lb_rows: %ld wrong elements; iterations per rank:", wrong);
    long fewest_other = n;
    for (int r = 0; r < dsm::nprocs(); ++r) {
      std::printf(" %ld", sh_count[r]);
      if (r != slow) fewest_other = std::min(fewest_other, sh_count[r]);
    }
    std::printf("\n");
    if (wrong) status = 1;
    if (slow >= 0 && slow < dsm::nprocs() && sh_count[slow] >= fewest_other) {
      std::printf("lb_rows: slow rank %d did not end with fewer iterations\n", slow);
      status = 1;
    }
  }
  dsm::finalize();
  return status;
}
