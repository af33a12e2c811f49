// Integration check through dsmrun: an elimination's step k reads row k, which the rank
// holding it wrote at step k-1, on every rank. The read moves by a row at every step; the
// writer predicts it and pushes the row with the barrier, so the other ranks read it without
// a fetch. The loop runs over every row (rows up to k unchanged), so that under equal blocks
// no row changes hands and row k is all a rank lacks. Each rank counts the fetch requests it
// sends over the middle steps; the program fails if they are not far fewer than one per
// step, or if an element differs from a sequential computation.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "runtime/stats.hpp"

#include <cstdio>
#include <vector>

namespace {

constexpr long rows = 96, cols = 1024;  // two pages of doubles a row
constexpr long measured_from = 16, measured_to = 64;

double initial(long i, long j) { return static_cast<double>((i * 31 + j * 7) % 97) * 0.25; }

// Step k of the elimination on one row: a[i][j] += a[k][j] / 2 for j > k.
void update(double* row, const double* pivot, long k) {
  for (long j = k + 1; j < cols; ++j) row[j] += pivot[j] * 0.5;
}

long fetch_requests() { return static_cast<long>(dsm::stats::counters().fetch_requests.load()); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_a = dsm::alloc<double>(rows * cols);
  static dsm::lb::Site fill("moving_push.cpp:fill"), eliminate("moving_push.cpp:eliminate");
  const dsm::lb::Section fill_acc[] = {dsm::lb::section(sh_a, dsm::lb::Access::write, cols, 0, cols - 1)};
  for (const dsm::lb::Range& r : dsm::lb::redistribute(fill, 0, rows, 1, fill_acc))
    for (long i = r.lb; i < r.ub; i += r.step)
      for (long j = 0; j < cols; ++j) sh_a[i * cols + j] = initial(i, j);
  dsm::barrier();
  long late_requests = 0;
  for (long k = 0; k + 1 < rows; ++k) {
    const long before = fetch_requests();
    const dsm::lb::Section acc[] = {dsm::lb::section(sh_a, dsm::lb::Access::read_write, cols, k + 1, cols - 1),
                                    dsm::lb::section(sh_a + k * cols, dsm::lb::Access::read, 0, k + 1, cols - 1)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(eliminate, 0, rows, 1, acc))
      for (long i = r.lb; i < r.ub; i += r.step)
        if (i > k) update(sh_a + i * cols, sh_a + k * cols, k);
    if (k >= measured_from && k < measured_to) late_requests += fetch_requests() - before;
    dsm::barrier();
  }
  long wrong = 0;
  if (dsm::rank() == 0) {
    std::vector<double> a(rows * cols);
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < cols; ++j) a[i * cols + j] = initial(i, j);
    for (long k = 0; k + 1 < rows; ++k)
      for (long i = k + 1; i < rows; ++i) update(&a[i * cols], &a[k * cols], k);
    for (long i = 0; i < rows * cols; ++i) wrong += sh_a[i] != a[i];
  }
  const long steps = measured_to - measured_from;
  const bool pushed = late_requests * 4 <= steps;
  std::printf("moving_push: rank %d sent %ld fetch requests in %ld steps%s\n", dsm::rank(), late_requests, steps,
              pushed ? "" : ", the rows were not pushed");
  if (dsm::rank() == 0) std::printf("moving_push: %ld wrong elements\n", wrong);
  const int status = wrong != 0 || !pushed;
  dsm::finalize();
  return status;
}
