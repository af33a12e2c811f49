#include "pipeline_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dsm::lb {

namespace {

std::vector<double> shares_of(std::span<const double> speeds) {
  const bool usable = !speeds.empty() && std::all_of(speeds.begin(), speeds.end(), [](double s) {
    return s > 0 && std::isfinite(s);
  });
  std::vector<double> out(speeds.size(), speeds.empty() ? 0.0 : 1.0 / double(speeds.size()));
  if (!usable) return out;
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  for (std::size_t r = 0; r < speeds.size(); ++r) out[r] = speeds[r] / total;
  return out;
}

}  // namespace

BlockLayout deal_blocks(long row_lb, long rows, std::span<const double> speeds, long per_rank) {
  BlockLayout layout;
  layout.starts.push_back(row_lb);
  const std::size_t ranks = speeds.size();
  if (rows <= 0 || ranks == 0) return layout;
  per_rank = std::max(1L, per_rank);
  const std::vector<double> share = shares_of(speeds);
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
  // A rank that stays slow keeps a row, so that its speed is still measured.
  if (rows >= long(ranks))
    for (std::size_t r = 0; r < ranks; ++r)
      if (mine[r] == 0) {
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

bool shares_differ(std::span<const double> current, std::span<const double> speeds, double threshold) {
  const std::vector<double> a = shares_of(current), b = shares_of(speeds);
  double moved = 0;
  for (std::size_t r = 0; r < a.size() && r < b.size(); ++r) moved += std::max(0.0, b[r] - a[r]);
  return moved > threshold;
}

}  // namespace dsm::lb
