// Garbage collection: once the protocol's memory (stored diffs and the interval log) passes
// its bound at some rank, every rank brings all its pages up to date and drops diffs, twins
// and intervals.
#pragma once

#include <cstddef>

namespace dsm::proto {

// Everything a rank fetches after this call is served from pages, not from the log: every
// rank first brings all its pages up to date (collectively, between two barriers), then
// drops diffs, twins and intervals.
void garbage_collect();
// The protocol's memory on this rank: stored diffs and the interval log.
std::size_t protocol_bytes();

}  // namespace dsm::proto
