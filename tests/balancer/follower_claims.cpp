// Integration check through dsmrun: a loop that ran once, early, over the rows another loop
// keeps writing (a first time step's copy, which follows the other loop's ranges) must not
// keep those rows from being claimed once the balancer has moved them. Rank 1 computes each
// of its rows four times, so the balancer moves rows to rank 0; over the last steps, rank 0
// writes its rows without twins (a page at the cut excepted). The program fails if the rows
// did not move, or if any element differs from a sequential computation. (The group's record
// of the early loop had kept the pages of the equal split, so rank 0 twinned and diffed every
// row it took over at every step: Shallow's first-step copy, 60 times the twins.)
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "runtime/stats.hpp"

#include <cstdio>

namespace {

constexpr long rows = 64, row = 1024;  // two pages of longs a row
constexpr int steps = 60, measured = 10, slow_factor = 4;

long work(long t, long i, long j) {
  auto u = static_cast<unsigned long>(t * 1000003 + i * row + j);
  for (int k = 0; k < 40; ++k) u = u * 6364136223846793005UL + 1442695040888963407UL;
  return static_cast<long>(u >> 20);
}

long twins() { return static_cast<long>(dsm::stats::counters().twins.load()); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  long* sh_a = dsm::alloc<long>(rows * row);
  static dsm::lb::Site lead("follower_claims.cpp:lead"), once("follower_claims.cpp:once");
  const int rounds = dsm::rank() == 1 ? slow_factor : 1;
  long late_twins = 0, mine = 0;
  for (int t = 0; t < steps; ++t) {
    const dsm::lb::Section acc[] = {dsm::lb::section(sh_a, dsm::lb::Access::write, row, 0, row - 1)};
    const long before = twins();
    mine = 0;
    for (const dsm::lb::Range& r : dsm::lb::redistribute(lead, 0, rows, 1, acc))
      for (long i = r.lb; i < r.ub; i += r.step, ++mine)
        for (int round = 0; round < rounds; ++round)
          for (long j = 0; j < row; ++j) sh_a[i * row + j] = work(t, i, j);
    dsm::barrier();
    if (t >= steps - measured) late_twins += twins() - before;
    if (t == 0) {
      for (const dsm::lb::Range& r : dsm::lb::redistribute(once, 0, rows, 1, acc))
        for (long i = r.lb; i < r.ub; i += r.step)
          for (long j = 0; j < row; ++j) sh_a[i * row + j] += 1;
      dsm::barrier();
    }
  }
  long wrong = 0;
  if (dsm::rank() == 0)
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < row; ++j) wrong += sh_a[i * row + j] != work(steps - 1, i, j);
  int status = 0;
  if (dsm::rank() == 0) {
    std::printf("follower_claims: %ld wrong elements, rank 0 ran %ld of %ld rows, %ld twins in the last %d steps\n",
                wrong, mine, rows, late_twins, measured);
    if (wrong) status = 1;
    if (mine <= rows / 2 + 2) {
      std::printf("follower_claims: the rows did not move to rank 0\n");
      status = 1;
    }
    if (late_twins > 3 * measured) {
      std::printf("follower_claims: rank 0 twinned the rows it took over\n");
      status = 1;
    }
  }
  dsm::finalize();
  return status;
}
