// Integration check through dsmrun: a loop that reads, at every time step, the same pages the
// other ranks wrote (adi: a column sweep writes every row in part, a row sweep reads whole
// rows) has them pushed with the barrier after its second step, instead of fetching them in
// bulk at every step. Each rank counts the fetch requests it sends over the last steps; the
// program fails if they are not far fewer than one per step and writer, or if an element
// differs from a sequential computation.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "runtime/stats.hpp"

#include <cstdio>

namespace {

constexpr long rows = 64, cols = 1024;  // two pages of doubles a row: 128 pages
constexpr int steps = 12, measured = 6;

double column_value(int t, long i, long j) { return static_cast<double>(t * 7 + i * 3 + j) * 0.5; }

long fetch_requests() { return static_cast<long>(dsm::stats::counters().fetch_requests.load()); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  double* sh_v = dsm::alloc<double>(rows * cols);
  double* sh_sum = dsm::alloc<double>(rows * 512);  // a page a row: rows written by their rank alone
  static dsm::lb::Site columns("reread_push.cpp:columns"), sums("reread_push.cpp:sums");
  long late_requests = 0;
  for (int t = 0; t < steps; ++t) {
    const dsm::lb::Section col_acc[] = {dsm::lb::section(sh_v, dsm::lb::Access::write, 1, 0, (rows - 1) * cols)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(columns, 0, cols, 1, col_acc))
      for (long j = r.lb; j < r.ub; j += r.step)
        for (long i = 0; i < rows; ++i) sh_v[i * cols + j] = column_value(t, i, j);
    dsm::barrier();
    const long before = fetch_requests();
    const dsm::lb::Section row_acc[] = {dsm::lb::section(sh_sum, dsm::lb::Access::write, 512, 0, 0),
                                        dsm::lb::section(sh_v, dsm::lb::Access::read, cols, 0, cols - 1)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(sums, 0, rows, 1, row_acc))
      for (long i = r.lb; i < r.ub; i += r.step) {
        double s = 0;
        for (long j = 0; j < cols; ++j) s += sh_v[i * cols + j];
        sh_sum[i * 512] = s;
      }
    if (t >= steps - measured) late_requests += fetch_requests() - before;
    dsm::barrier();
  }
  long wrong = 0;
  if (dsm::rank() == 0)
    for (long i = 0; i < rows; ++i) {
      double s = 0;
      for (long j = 0; j < cols; ++j) s += column_value(steps - 1, i, j);
      wrong += sh_sum[i * 512] != s;
    }
  const long writers = dsm::nprocs() - 1;
  const bool pushed = late_requests * 4 <= measured * writers;
  std::printf("reread_push: rank %d sent %ld fetch requests in the last %d steps%s\n", dsm::rank(), late_requests,
              measured, pushed ? "" : ", the rows were not pushed");
  if (dsm::rank() == 0) std::printf("reread_push: %ld wrong sums\n", wrong);
  const int status = wrong != 0 || !pushed;
  dsm::finalize();
  return status;
}
