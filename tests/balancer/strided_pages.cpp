// Integration check through dsmrun: loops over columns of a row-major matrix (strided
// sections, dsm::lb::strided) fetch and claim the pages their columns lie in, not every page
// of their hull. Each row is eight pages. A loop over the eight pages of a row fills them,
// each rank its pages of every row; a second reads the first 16 columns of every row, which
// lie in each row's first page: a rank fetches that page of every row at most, not the pages
// of its hull, up to eight a row; a third writes one word of each page in every row, split as
// the fill is. Each rank writes no page another rank writes, so it claims its pages and twins
// none. The program fails on a wrong element (against a sequential computation), or when the
// pages fetched or twinned show the hull.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include "runtime/stats.hpp"

#include <algorithm>
#include <cstdio>

namespace {

constexpr long rows = 64, row = 4096;  // eight pages of longs a row
constexpr long columns = 16, page_longs = 512, steps = 5;

long value(long t, long i, long j) { return t * 1000003 + i * row + j; }

long fetched() { return static_cast<long>(dsm::stats::counters().pages_fetched.load()); }
long twins() { return static_cast<long>(dsm::stats::counters().twins.load()); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  long* sh_a = dsm::alloc<long>(rows * row);
  long* sh_sum = dsm::alloc<long>(columns);
  static dsm::lb::Site fill("strided_pages.cpp:fill"), read("strided_pages.cpp:read"), mark("strided_pages.cpp:mark");
  long wrong = 0, most_fetched = 0, most_twins = 0;
  for (long t = 0; t < steps; ++t) {
    long twins_before = twins();
    const dsm::lb::Section fill_acc[] = {
        dsm::lb::strided(sh_a, dsm::lb::Access::write, page_longs, 0, page_longs - 1, row, rows)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(fill, 0, row / page_longs, 1, fill_acc))
      for (long p = r.lb; p < r.ub; p += r.step)
        for (long i = 0; i < rows; ++i)
          for (long j = p * page_longs; j < (p + 1) * page_longs; ++j) sh_a[i * row + j] = value(t, i, j);
    const long fill_twins = twins() - twins_before;
    dsm::barrier();

    const long fetched_before = fetched();
    const dsm::lb::Section read_acc[] = {dsm::lb::strided(sh_a, dsm::lb::Access::read, 1, 0, 0, row, rows),
                                         dsm::lb::section(sh_sum, dsm::lb::Access::write, 1, 0, 0)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(read, 0, columns, 1, read_acc))
      for (long j = r.lb; j < r.ub; j += r.step) {
        long sum = 0;
        for (long i = 0; i < rows; ++i) sum += sh_a[i * row + j];
        sh_sum[j] = sum;
      }
    most_fetched = std::max(most_fetched, fetched() - fetched_before);
    dsm::barrier();

    twins_before = twins();
    const dsm::lb::Section mark_acc[] = {dsm::lb::strided(sh_a, dsm::lb::Access::write, page_longs, 0, 0, row, rows)};
    for (const dsm::lb::Range& r : dsm::lb::redistribute(mark, 0, row / page_longs, 1, mark_acc))
      for (long p = r.lb; p < r.ub; p += r.step)
        for (long i = 0; i < rows; ++i) sh_a[i * row + p * page_longs] = -t;
    if (t > 0) most_twins = std::max(most_twins, fill_twins + twins() - twins_before);  // the first fill: pages of nobody
    dsm::barrier();

    for (long j = 0; j < columns; ++j) {  // read before the marks: the fill's values
      long sum = 0;
      for (long i = 0; i < rows; ++i) sum += value(t, i, j);
      wrong += sh_sum[j] != sum;
    }
    for (long i = 0; i < rows; ++i)
      for (long j = 0; j < row; ++j) wrong += sh_a[i * row + j] != (j % page_longs == 0 ? -t : value(t, i, j));
    dsm::barrier();
  }
  std::printf("strided_pages: rank %d: %ld wrong elements, at most %ld pages fetched by the column read, %ld twins by the "
              "fill and the marks\n",
              dsm::rank(), wrong, most_fetched, most_twins);
  int status = wrong ? 1 : 0;
  // At most the first page of every row.
  if (most_fetched > rows) {
    std::printf("strided_pages: rank %d fetched the hull of the columns\n", dsm::rank());
    status = 1;
  }
  if (most_twins > 0) {
    std::printf("strided_pages: rank %d twinned pages it alone writes\n", dsm::rank());
    status = 1;
  }
  dsm::finalize();
  return status;
}
