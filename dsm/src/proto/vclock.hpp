// Vector timestamps of intervals (lazy release consistency): entry p counts the intervals
// of rank p that are known to precede.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dsm::proto {

using VectorTime = std::vector<std::uint32_t>;

// All operations need vectors of one length (one entry per rank): std::invalid_argument
// otherwise.
bool leq(const VectorTime& a, const VectorTime& b);              // a[i] <= b[i] for all i
bool happened_before(const VectorTime& a, const VectorTime& b);  // leq(a, b) and a != b
bool concurrent(const VectorTime& a, const VectorTime& b);       // neither leq the other
void merge(VectorTime& into, const VectorTime& other);           // elementwise max

// One interval: created by `proc`, its `interval`-th, stamped `time`.
struct IntervalStamp {
  std::uint32_t proc;
  std::uint32_t interval;
  VectorTime time;
};

// Indices of `stamps` in an order that extends happened-before (if a happened before b,
// a comes first; diffs applied in this order reproduce the writes). Deterministic: by
// sum of entries, then proc, then interval, so every rank orders the same set alike.
std::vector<std::size_t> happened_before_order(std::span<const IntervalStamp> stamps);

}  // namespace dsm::proto
