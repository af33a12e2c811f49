// jacobi_hand: parallelized by hand with the DSM API. Each rank owns a page-aware block of
// rows of both arrays (dsm::own; the first and last blocks with the fixed boundary rows);
// it reads one row of each neighbour per sweep.
#include <dsm/dsm.hpp>

#include <vector>

#include "../common/split.hpp"
#include "../common/dsm_finish.hpp"
#include "kernel.hpp"

int main(int argc, char** argv) {
  dsm::init(argc, argv);
  const app::Options o = app::parse(argc, argv, "jacobi (hand-parallelized DSM)", jacobi::defaults);
  const long n = o.n;
  float* sh_a = dsm::alloc<float>(n * n);
  float* sh_b = dsm::alloc<float>(n * n);
  if (dsm::rank() == 0) jacobi::init(sh_a, n);
  dsm::barrier();

  const std::size_t row = n * sizeof(float);
  std::vector<app::Rows> rows;  // every rank's block: dsm::own is collective
  const std::vector<double> shares = app::shares_for(o, dsm::nprocs());
  for (int r = 0; r < dsm::nprocs(); ++r) rows.push_back(app::page_aware_rows(1, n - 1, row, r, dsm::nprocs(), shares));
  const app::Rows mine = rows[dsm::rank()];
  const std::size_t block = (mine.hi - mine.lo) * row;
  // The fixed boundary rows, which no rank writes, go with the first and last blocks: then
  // every page a rank writes lies inside its claim and is held, none needs a twin and a diff.
  auto own_blocks = [&](float* sh) {
    for (int r = 0; r < dsm::nprocs(); ++r) {
      const long lo = r == 0 ? 0 : rows[r].lo, hi = r + 1 == dsm::nprocs() ? n : rows[r].hi;
      dsm::own(r, sh + lo * n, (hi - lo) * row);
    }
  };
  double t = 0;
  {
    // Rows lo-1 and hi start and end inside pages shared with rows this rank never reads:
    // their writers push those rows' bytes alone. Ended before the checksum reads them all.
    dsm::ReadsWithin halo(sh_a + (mine.lo - 1) * n, block + 2 * row);
    const double t0 = dsm::wtime();
    app::Tracer trace(o.trace && dsm::rank() == 0);
    for (long it = 0; it < o.iters; ++it) {
      dsm::prefetch(sh_a + (mine.lo - 1) * n, block + 2 * row, dsm::Mode::read);
      own_blocks(sh_b);
      jacobi::sweep(sh_a, sh_b, n, mine.lo, mine.hi);
      dsm::barrier();
      own_blocks(sh_a);
      jacobi::copy(sh_b, sh_a, n, mine.lo, mine.hi);
      dsm::barrier();
      trace.iteration(it);
    }
    t = dsm::wtime() - t0;
  }

  return app::finish(o, t, [&] { return jacobi::sum(sh_a, n); }, jacobi::reference);
}
