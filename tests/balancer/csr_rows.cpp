// Integration check of rows weighed by their nonzeros, through dsmrun: a CSR product whose
// first quarter of rows holds ten times the nonzeros of the others, split by hand-written
// redistribute() calls with a span section over the rows. Before any rank is measured (the
// executions here end inside the balancer's warm-up) the split must already share the
// nonzeros, and when rank 0 builds a matrix skewed the other way between two executions, the
// next one must share the new nonzeros. With --equal-rows (for --lb static) every rank must
// get the same rows instead. Rank 0 checks every product against a sequential one.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr long n = 65536, dense = 40, sparse = 4, executions = 4;
constexpr long nonzeros = n / 4 * dense + (n - n / 4) * sparse;

// Row r has `dense` nonzeros in the quarter of rows that `heavy` names (0: the first, 3: the
// last), `sparse` elsewhere; its columns wrap around the row.
void build(long* sh_p, long* sh_col, double* sh_v, long heavy) {
  long k = 0;
  for (long r = 0; r < n; ++r) {
    sh_p[r] = k;
    const long count = r / (n / 4) == heavy ? dense : sparse;
    for (long j = 0; j < count; ++j, ++k) {
      sh_col[k] = (r + j * 37) % n;
      sh_v[k] = static_cast<double>((r + j) % 5) - 2;
    }
  }
  sh_p[n] = k;
}

// The work the balancer counts for rows [lb, ub): their nonzeros and one for each row.
long work(const long* p, long lb, long ub) { return p[ub] - p[lb] + (ub - lb); }

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const bool equal_rows = argc > 1 && !std::strcmp(argv[1], "--equal-rows");
  const int nranks = dsm::nprocs(), me = dsm::rank();
  long* sh_p = dsm::alloc<long>(n + 1);
  long* sh_col = dsm::alloc<long>(nonzeros);
  double* sh_v = dsm::alloc<double>(nonzeros);
  double* sh_x = dsm::alloc<double>(n);
  double* sh_y = dsm::alloc<double>(n);
  long* sh_rows = dsm::alloc<long>(2 * executions * nranks);  // rows and work, per execution and rank
  if (me == 0) {
    build(sh_p, sh_col, sh_v, 0);
    for (long r = 0; r < n; ++r) sh_x[r] = static_cast<double>(r % 11);
  }
  dsm::barrier();
  static dsm::lb::Site site("csr_rows.cpp:product");
  int status = 0;
  for (long e = 0; e < 2 * executions; ++e) {
    if (e == executions) {  // a new matrix, its dense rows at the end
      if (me == 0) build(sh_p, sh_col, sh_v, 3);
      dsm::barrier();
    }
    const dsm::lb::Section acc[] = {dsm::lb::section(sh_y, dsm::lb::Access::write, 1, 0, 0),
                                    dsm::lb::span(sh_v, sh_p, 1, 0, 1, 0),
                                    dsm::lb::through(sh_x, sh_col, dsm::lb::span(sh_col, sh_p, 1, 0, 1, 0))};
    long rows = 0, mine = 0;
    for (const dsm::lb::Range& r : dsm::lb::redistribute(site, 0, n, 1, acc)) {
      rows += r.ub - r.lb;
      mine += work(sh_p, r.lb, r.ub);
      for (long i = r.lb; i < r.ub; ++i) {
        double s = 0;
        for (long k = sh_p[i]; k < sh_p[i + 1]; ++k) s += sh_v[k] * sh_x[sh_col[k]];
        sh_y[i] = s;
      }
    }
    const long slot = (e % executions) * nranks + me;
    sh_rows[2 * slot] = rows;
    sh_rows[2 * slot + 1] = mine;
    dsm::barrier();
    if (me == 0) {
      for (long i = 0; i < n && status == 0; ++i) {
        double s = 0;
        for (long k = sh_p[i]; k < sh_p[i + 1]; ++k) s += sh_v[k] * sh_x[sh_col[k]];
        if (s != sh_y[i]) {
          std::printf("execution %ld: y[%ld] = %g, sequential %g\n", e, i, sh_y[i], s);
          status = 1;
        }
      }
      long least_rows = n, most_rows = 0, least = work(sh_p, 0, n), most = 0;
      std::printf("execution %ld: rows/work", e);
      for (int r = 0; r < nranks; ++r) {
        const long rr = sh_rows[2 * ((e % executions) * nranks + r)], w = sh_rows[2 * ((e % executions) * nranks + r) + 1];
        std::printf(" %ld/%ld", rr, w);
        least_rows = std::min(least_rows, rr), most_rows = std::max(most_rows, rr);
        least = std::min(least, w), most = std::max(most, w);
      }
      std::printf("\n");
      // Equal rows differ by one at most. Shared work differs by a cell's rounding and by
      // the cut's move to a page boundary of y (256 rows at most here, 2 % of the work).
      const bool ok = equal_rows ? most_rows - least_rows <= 1 : most <= least * 11 / 10;
      if (!ok) {
        std::printf("execution %ld: %s\n", e, equal_rows ? "rows not equal" : "work not shared");
        status = 1;
      }
    }
    dsm::barrier();
  }
  dsm::finalize();
  return status;
}
