// Reads confined to a range (dsm::ReadsWithin). A halo row rarely starts and ends at page
// boundaries: the pages at its two ends hold rows its reader never reads, and a whole page
// pushed to it moves those rows too (three pages for a row of 8 KiB). While the promise
// lasts, the writer pushes the bytes read alone; the page stays invalid, those bytes up to
// date, and open for reading from one barrier to the next without a protection change (on
// a host whose page tables are virtualized in software, each change costs the loop after
// it ~50 µs). Where the bytes are not up to date (a change that came without its push) the
// page closes, and the next access fetches it whole. Application thread only, but for
// known_within and take_part (under mu).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "proto/intervals.hpp"

namespace dsm::proto {

// Bytes [lo, hi) of a page.
struct ByteRange {
  std::uint32_t page;
  std::uint16_t lo, hi;
  bool operator==(const ByteRange&) const = default;
};

// A promise begins or ends: the pages its range covers in part, with the bytes read.
void add_within(std::span<const ByteRange> edges);
void remove_within(std::span<const ByteRange> edges);

// The bytes this rank reads of a page while promises last (the hull of theirs), if any.
std::optional<ByteRange> within_range(std::uint32_t page);

// Whether an invalid page lacks nothing in [lo, hi): the one change it misses is a whole
// page whose bytes there a push brought. Under mu.
bool known_within(std::uint32_t page, std::uint16_t lo, std::uint16_t hi);

// Takes in a push of part of a whole page (Push::part) where that change is all the page
// lacks (need); otherwise leaves the page to a fetch. Under mu.
void take_part(const Push& p, std::span<const Notice> need);

// At the end of a merge (under mu): the promised pages whose bytes read are up to date stay
// or become open for reading, and leave `invalidated`; the others are closed (to_close).
void settle_within(std::vector<std::uint32_t>& invalidated, std::vector<std::uint32_t>& to_open,
                   std::vector<std::uint32_t>& to_close);

}  // namespace dsm::proto
