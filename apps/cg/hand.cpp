// cg_hand: parallelized by hand with the DSM API. Each rank owns a page-aware block of rows
// of the four vectors (dsm::own, in the epoch that writes each). Before the first product
// it reads its rows' column indices once and lists the pages of p outside its block that
// they name (an inspector, written by hand); before every product it prefetches those
// pages, a request per writer instead of a fault per page. The dot products are
// dsm::lb::Reduction's.
#include <dsm/balancer.hpp>
#include <dsm/dsm.hpp>

#include <algorithm>
#include <vector>

#include "../common/split.hpp"
#include "shared.hpp"

namespace {

// Runs of consecutive pages of a vector (in entries) that rows [lo, hi) read through `col`,
// outside the block [mine.lo, mine.hi) of the vector that this rank writes.
struct Run {
  long first, count;
};
std::vector<Run> pages_read(const long* start, const long* col, app::Rows mine, long n) {
  constexpr long per_page = app::page_bytes / sizeof(double);
  std::vector<long> pages;
  for (long k = start[mine.lo]; k < start[mine.hi]; ++k)
    if (col[k] < mine.lo || col[k] >= mine.hi) pages.push_back(col[k] / per_page);
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  std::vector<Run> runs;
  for (long page : pages) {
    if (!runs.empty() && runs.back().first + runs.back().count == page * per_page)
      runs.back().count += per_page;
    else
      runs.push_back({page * per_page, per_page});
  }
  if (!runs.empty()) runs.back().count = std::min(runs.back().count, n - runs.back().first);
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "cg (hand-parallelized DSM)", cg::defaults, cg::problems);
  const long n = cg::rows_of(o);
  const cg::Shared m = cg::shared_problem(o);
  long *sh_start = m.start, *sh_col = m.col;
  double *sh_val = m.val, *sh_x = m.x, *sh_r = m.r, *sh_p = m.p, *sh_q = m.q;

  std::vector<app::Rows> rows;  // every rank's block: dsm::own is collective
  for (int k = 0; k < dsm::nprocs(); ++k) rows.push_back(app::page_aware_rows(0, n, sizeof(double), k, dsm::nprocs()));
  const app::Rows mine = rows[dsm::rank()];
  auto own_blocks = [&](double* sh) {
    for (int k = 0; k < dsm::nprocs(); ++k) dsm::own(k, sh + rows[k].lo, (rows[k].hi - rows[k].lo) * sizeof(double));
  };
  const double t0 = dsm::wtime();
  app::Tracer trace(o.trace && dsm::rank() == 0);
  // This rank's rows of the matrix, in bulk (rank 0 wrote them), then the pages of p they read.
  dsm::prefetch(sh_start + mine.lo, (mine.hi - mine.lo + 1) * sizeof(long), dsm::Mode::read);
  const long nz_lo = sh_start[mine.lo], nz_hi = sh_start[mine.hi];
  dsm::prefetch(sh_col + nz_lo, (nz_hi - nz_lo) * sizeof(long), dsm::Mode::read);
  dsm::prefetch(sh_val + nz_lo, (nz_hi - nz_lo) * sizeof(double), dsm::Mode::read);
  const std::vector<Run> halo = pages_read(sh_start, sh_col, mine, n);

  own_blocks(sh_x);
  own_blocks(sh_r);
  own_blocks(sh_p);
  cg::start_vectors(sh_x, sh_r, sh_p, mine.lo, mine.hi);
  dsm::barrier();
  double rr = static_cast<double>(n);
  for (long it = 0; it < o.iters; ++it) {
    for (const Run& run : halo) dsm::prefetch(sh_p + run.first, run.count * sizeof(double), dsm::Mode::read);
    double pq = 0;
    dsm::lb::Reduction pq_sum{dsm::lb::reduced<dsm::lb::Op::plus>(pq)};
    own_blocks(sh_q);
    pq = cg::product(sh_start, sh_col, sh_val, sh_p, sh_q, mine.lo, mine.hi);
    pq_sum.finish();
    const double alpha = rr / pq;
    double next = 0;
    dsm::lb::Reduction rr_sum{dsm::lb::reduced<dsm::lb::Op::plus>(next)};
    own_blocks(sh_x);
    own_blocks(sh_r);
    next = cg::update(alpha, sh_p, sh_q, sh_x, sh_r, mine.lo, mine.hi);
    rr_sum.finish();
    own_blocks(sh_p);
    cg::direction(next / rr, sh_r, sh_p, mine.lo, mine.hi);
    dsm::barrier();
    rr = next;
    trace.iteration(it);
  }
  const double t = dsm::wtime() - t0;
  return cg::finish(o, sh_x, rr, t);
}
