#include "proto/vclock.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace dsm::proto {
namespace {

void check_same_length(const VectorTime& a, const VectorTime& b) {
  if (a.size() != b.size()) throw std::invalid_argument("dsm: vector times of different lengths");
}

}  // namespace

bool leq(const VectorTime& a, const VectorTime& b) {
  check_same_length(a, b);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] > b[i]) return false;
  return true;
}

bool happened_before(const VectorTime& a, const VectorTime& b) { return leq(a, b) && a != b; }

bool concurrent(const VectorTime& a, const VectorTime& b) { return !leq(a, b) && !leq(b, a); }

void merge(VectorTime& into, const VectorTime& other) {
  check_same_length(into, other);
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

std::vector<std::size_t> happened_before_order(std::span<const IntervalStamp> stamps) {
  // a happened before b implies sum(a) < sum(b): sorting by the sum extends the order.
  std::vector<std::uint64_t> sums(stamps.size());
  for (std::size_t i = 0; i < stamps.size(); ++i)
    sums[i] = std::accumulate(stamps[i].time.begin(), stamps[i].time.end(), std::uint64_t{0});
  std::vector<std::size_t> order(stamps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::tie(sums[x], stamps[x].proc, stamps[x].interval) <
           std::tie(sums[y], stamps[y].proc, stamps[y].interval);
  });
  return order;
}

}  // namespace dsm::proto
