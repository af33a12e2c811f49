// Page-aware static block split of loop rows, as a programmer parallelizing by hand does it:
// equal blocks, except that each boundary moves to a nearby row whose first element starts
// a page, so neighbouring ranks do not write the same page (no false sharing).
#pragma once

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace app {

struct Rows {
  long lo;  // first row of this rank
  long hi;  // one past the last row
};

constexpr std::size_t page_bytes = 4096;

// Boundary k of nprocs over rows [first, last): the even split point (or, with `shares`, one
// weight per rank, the point that gives rank r its share), or the closest row within 1/64 of
// a block whose start (row * row_bytes from a page-aligned base) is page-aligned; moving
// further would cost more in imbalance than one shared page does.
inline long page_aware_boundary(long first, long last, std::size_t row_bytes, int k, int nprocs,
                                const std::vector<double>& shares = {}) {
  long span = last - first;
  long even = first + span * k / nprocs;
  if (!shares.empty()) {
    double before = 0, after = 0;
    for (int r = 0; r < nprocs; ++r) (r < k ? before : after) += shares[static_cast<std::size_t>(r)];
    even = first + std::lround(static_cast<double>(span) * before / (before + after));
  }
  if (k == 0 || k == nprocs) return even;
  long window = span / nprocs / 64;
  for (long d = 0; d <= window; ++d)
    for (long r : {even - d, even + d})
      if (r > first && r < last && (static_cast<std::size_t>(r) * row_bytes) % page_bytes == 0) return r;
  return even;
}

inline Rows page_aware_rows(long first, long last, std::size_t row_bytes, int rank, int nprocs,
                            const std::vector<double>& shares = {}) {
  return {page_aware_boundary(first, last, row_bytes, rank, nprocs, shares),
          page_aware_boundary(first, last, row_bytes, rank + 1, nprocs, shares)};
}

}  // namespace app
