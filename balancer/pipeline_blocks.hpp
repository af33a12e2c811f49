// Blocks of a pipelined nest's rows (dsm/pipeline.hpp): dealt to the ranks in turn, each
// rank's blocks sized by its measured speed, so that the ranks finish a sweep together. Pure
// arithmetic: every rank computes the same layout from the same figures.
#pragma once

#include <span>
#include <vector>

namespace dsm::lb {

// Block k covers rows [starts[k], starts[k + 1]) and belongs to rank owners[k]; the ranks
// take turns (0, 1, ..., P - 1, 0, ...), a rank with fewer pieces sitting out early turns.
struct BlockLayout {
  std::vector<long> starts;  // blocks + 1 entries, from row_lb to row_lb + rows
  std::vector<int> owners;
  long blocks() const { return long(owners.size()); }
};

// `rows` rows from `row_lb` in up to `per_rank` blocks per rank; rank r's blocks hold a share
// of the rows proportional to speeds[r] (a speed that is not positive and finite counts as
// the mean of the others; equal shares when none is), at least one row while there are as
// many rows as ranks, but ranks that left the pipeline (left[r] true; `left` empty or as
// long as `speeds`) get none, unless every rank left.
BlockLayout deal_blocks(long row_lb, long rows, std::span<const double> speeds, long per_rank,
                        std::span<const char> left = {});

// Whether a layout for `speeds` would move more than `threshold` of the rows (a share, 0-1)
// away from the shares `current` gives, the same ranks having left: below it, a new layout
// moves pages for noise.
bool shares_differ(std::span<const double> current, std::span<const double> speeds, double threshold,
                   std::span<const char> left = {});

}  // namespace dsm::lb
