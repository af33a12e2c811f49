// Row blocks of a CSR matrix for the MPI peers: rank 0 builds the whole matrix, as the DSM
// versions' rank 0 does, and sends every rank its block of rows.
#pragma once

#include <vector>

#include "mpi_common.hpp"

namespace peers {

// A rank's rows [lo, hi) of a matrix: row starts from 0 (hi - lo + 1 of them), and their
// column indices (global) and values.
struct CsrRows {
  long lo = 0, hi = 0;
  std::vector<long> start, col;
  std::vector<double> val;
};

// The even row blocks of an n-row matrix, sent from rank 0, which alone passes the whole
// matrix (the others pass null pointers).
inline CsrRows scatter_rows(const World& w, long n, const long* start, const long* col, const double* val) {
  CsrRows mine{block_start(0, n, w.rank, w.size), block_start(0, n, w.rank + 1, w.size), {}, {}, {}};
  const long rows = mine.hi - mine.lo;
  if (w.rank == 0) {
    for (int r = 1; r < w.size; ++r) {
      const long lo = block_start(0, n, r, w.size), hi = block_start(0, n, r + 1, w.size);
      const long first = start[lo], count = start[hi] - start[lo];
      check(MPI_Send(start + lo, static_cast<int>(hi - lo + 1), MPI_LONG, r, 0, MPI_COMM_WORLD), "MPI_Send (rows)");
      check(MPI_Send(col + first, static_cast<int>(count), MPI_LONG, r, 1, MPI_COMM_WORLD), "MPI_Send (columns)");
      check(MPI_Send(val + first, static_cast<int>(count), MPI_DOUBLE, r, 2, MPI_COMM_WORLD), "MPI_Send (values)");
    }
    mine.start.assign(start + mine.lo, start + mine.hi + 1);
    mine.col.assign(col + mine.start.front(), col + mine.start.back());
    mine.val.assign(val + mine.start.front(), val + mine.start.back());
  } else {
    mine.start.resize(rows + 1);
    check(MPI_Recv(mine.start.data(), static_cast<int>(rows + 1), MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv (rows)");
    const long count = mine.start.back() - mine.start.front();
    mine.col.resize(count);
    mine.val.resize(count);
    check(MPI_Recv(mine.col.data(), static_cast<int>(count), MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv (columns)");
    check(MPI_Recv(mine.val.data(), static_cast<int>(count), MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv (values)");
  }
  const long first = mine.start.front();
  for (long& k : mine.start) k -= first;
  return mine;
}

// The blocks' sizes and first rows, as MPI_Gatherv and MPI_Scatterv take them.
struct Blocks {
  std::vector<int> counts, displs;
};
inline Blocks blocks(const World& w, long n) {
  Blocks b{std::vector<int>(w.size), std::vector<int>(w.size)};
  for (int r = 0; r < w.size; ++r) {
    b.displs[r] = static_cast<int>(block_start(0, n, r, w.size));
    b.counts[r] = static_cast<int>(block_start(0, n, r + 1, w.size)) - b.displs[r];
  }
  return b;
}

}  // namespace peers
