// Blocks of a pipelined nest's rows (dsm/pipeline.hpp): dealt to the ranks in turn, each
// rank's blocks sized by its measured speed, so that the ranks finish a sweep together. Pure
// arithmetic: every rank computes the same layout from the same figures.
#pragma once

#include <cstdint>
#include <optional>
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
// of the rows proportional to speeds[r] (equal shares when a speed is not positive and
// finite), at least one row while there are as many rows as ranks.
BlockLayout deal_blocks(long row_lb, long rows, std::span<const double> speeds, long per_rank);

// Whether a layout for `speeds` would move more than `threshold` of the rows (a share, 0-1)
// away from the shares `current` gives: below it, a new layout moves pages for noise.
bool shares_differ(std::span<const double> current, std::span<const double> speeds, double threshold);

// Which speeds a pipeline's blocks follow, and which rank sits out, sweep after sweep: the
// blocks follow measured speeds when the rows would move by more than `rebalance` (a share);
// a rank slower than `probe_below` times the fastest is left out for a trial (the ranks below
// its blocks wait whenever it waits for its core), judged by the time of the trial layout's
// second iteration (the first moves pages) against the steady one before it; once left
// out, a trial with every rank again follows every `probe_every` sweeps (the load may have
// gone), and so does another trial after one that failed.
struct LayoutPlan {
  std::vector<double> basis;  // every rank's speed (empty: equal shares)
  int left_out = -1;          // a rank without rows, or -1
  struct Probe {
    int left_out;     // before the trial
    double before_s;  // the iteration time it is judged against
  };
  std::optional<Probe> probe;
  std::uint64_t laid_out_at = 0, next_probe = 0;  // sweeps

  // The speeds of the ranks with rows, in rank order.
  std::vector<double> shares_basis(int ranks) const;
  // Rank of the pipeline -> rank of the job.
  int job_rank(int pipeline_rank) const { return left_out >= 0 && pipeline_rank >= left_out ? pipeline_rank + 1 : pipeline_rank; }
};
struct LayoutTuning {
  double rebalance = 0.03, probe_below = 0.75;
  std::uint64_t probe_every = 16;
};
// At sweep `sweep`, from every rank's measured speed (a left-out rank's is ignored) and the
// last iteration's time: updates `plan`, and returns whether the blocks must be dealt
// again (then plan.laid_out_at = sweep).
bool update_layout(LayoutPlan& plan, std::vector<double> speeds, double took_s, std::uint64_t sweep, const LayoutTuning& tune);

}  // namespace dsm::lb
