// What the runtime offers the balancer (balancer/) inside libdsm. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dsm::detail {

// Bytes this rank attaches to its next barrier arrival (replacing any earlier blob). The
// barrier carries them to every rank, so the balancer needs no messages of its own.
void set_barrier_blob(std::vector<std::byte> blob);
// Every rank's blob from the most recent completed barrier, indexed by rank (empty vectors
// before the first barrier, or for ranks that attached nothing).
const std::vector<std::vector<std::byte>>& barrier_blobs();
// Number of barriers completed so far.
std::uint64_t barrier_count();

// The caller promises that until the next barrier no other rank writes any byte of the
// pages in [addr, addr+bytes): this rank may write them without twins and send whole
// pages instead of diffs. Every rank must compute such claims from the same inputs.
void claim_exclusive_write(const void* addr, std::size_t bytes);

// Which rank last wrote each page of [addr, addr+bytes) as far as this rank knows
// (-1: never written). One entry per page overlapping the range.
std::vector<int> page_writers(const void* addr, std::size_t bytes);

// Measured cost of moving one page between ranks, in seconds (0 before any measurement).
double page_transfer_seconds();

// Extent of the allocation holding addr: {start, bytes}; {nullptr, 0} outside the region.
struct Extent {
  void* start;
  std::size_t bytes;
};
Extent allocation_of(const void* addr);

constexpr std::size_t page_size = 4096;

}  // namespace dsm::detail
