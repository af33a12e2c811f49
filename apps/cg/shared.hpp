// What the DSM versions of cg share: the matrix and the vectors in shared memory, the matrix
// built by rank 0 (as a program ported from OpenMP builds it), and the end of a run.
#pragma once

#include <dsm/dsm.hpp>

#include "kernel.hpp"

namespace cg {

struct Shared {
  long* start;
  long* col;
  double* val;
  double *x, *r, *p, *q;
};

// Collective: allocates, and after a barrier every rank sees rank 0's matrix.
inline Shared shared_problem(const app::Options& o) {
  const long n = rows_of(o);
  const Shared s{dsm::alloc<long>(n + 1),   dsm::alloc<long>(nonzeros_at_most(o)), dsm::alloc<double>(nonzeros_at_most(o)),
                 dsm::alloc<double>(n), dsm::alloc<double>(n),                 dsm::alloc<double>(n),
                 dsm::alloc<double>(n)};
  if (dsm::rank() == 0) build(o, s.start, s.col, s.val);
  dsm::barrier();
  return s;
}

// Rank 0 reports (conclude); every rank leaves the job. Returns the exit code.
inline int finish(const app::Options& o, const double* x, double rr, double seconds) {
  const int rc = dsm::rank() == 0 ? conclude(o, x, rr, seconds) : 0;
  dsm::finalize();
  return rc;
}

}  // namespace cg
