#include "pipeline_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dsm::lb {

namespace {

bool measured(double s) { return s > 0 && std::isfinite(s); }
bool out_of(std::span<const char> left, std::size_t r) { return r < left.size() && left[r]; }

// Shares of the ranks in (not `left`) by their speeds, a rank not measured at the mean of
// those measured; 0 for the others. Every rank in when all left.
std::vector<double> shares_of(std::span<const double> speeds, std::span<const char> left = {}) {
  std::size_t in = 0, known = 0;
  double sum = 0;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    if (out_of(left, r)) continue;
    ++in;
    if (measured(speeds[r])) sum += speeds[r], ++known;
  }
  if (in == 0) return shares_of(speeds);
  std::vector<double> out(speeds.size(), 0.0);
  for (std::size_t r = 0; r < speeds.size(); ++r)
    if (!out_of(left, r)) out[r] = known == 0 ? 1.0 : measured(speeds[r]) ? speeds[r] : sum / double(known);
  const double total = std::accumulate(out.begin(), out.end(), 0.0);
  for (double& v : out) v /= total;
  return out;
}

}  // namespace

BlockLayout deal_blocks(long row_lb, long rows, std::span<const double> speeds, long per_rank,
                        std::span<const char> left) {
  BlockLayout layout;
  layout.starts.push_back(row_lb);
  const std::size_t ranks = speeds.size();
  if (rows <= 0 || ranks == 0) return layout;
  per_rank = std::max(1L, per_rank);
  if (std::all_of(left.begin(), left.end(), [](char l) { return l; })) left = {};
  const std::vector<double> share = shares_of(speeds, left);
  // Rows per rank: the shares rounded down, the rows left to the largest remainders.
  std::vector<long> mine(ranks);
  std::vector<std::size_t> order(ranks);
  long dealt = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    mine[r] = long(std::floor(share[r] * double(rows)));
    dealt += mine[r];
    order[r] = r;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return share[a] * double(rows) - double(mine[a]) > share[b] * double(rows) - double(mine[b]);
  });
  for (std::size_t i = 0; dealt < rows; i = (i + 1) % ranks, ++dealt) ++mine[order[i]];
  // A rank that stays slow keeps a row, so that its speed is still measured; one that left
  // is not measured (its core's occupancy brings it back).
  if (rows >= long(ranks))
    for (std::size_t r = 0; r < ranks; ++r)
      if (mine[r] == 0 && !out_of(left, r)) {
        --*std::max_element(mine.begin(), mine.end());
        mine[r] = 1;
      }
  // Each rank's rows in per_rank pieces, dealt in turns.
  for (long t = 0; t < per_rank; ++t)
    for (std::size_t r = 0; r < ranks; ++r) {
      const long piece = mine[r] * (t + 1) / per_rank - mine[r] * t / per_rank;
      if (piece == 0) continue;
      layout.starts.push_back(layout.starts.back() + piece);
      layout.owners.push_back(int(r));
    }
  return layout;
}

bool shares_differ(std::span<const double> current, std::span<const double> speeds, double threshold,
                   std::span<const char> left) {
  const std::vector<double> a = shares_of(current, left), b = shares_of(speeds, left);
  double moved = 0;
  for (std::size_t r = 0; r < a.size() && r < b.size(); ++r) moved += std::max(0.0, b[r] - a[r]);
  return moved > threshold;
}

}  // namespace dsm::lb
