// Reads confined to part of a page (Mode::read_within). A halo row rarely starts and ends
// at page boundaries: the pages at its two ends hold rows its reader never reads, and a
// whole page pushed to it moves those rows too (three pages for a row of 8 KiB). Under the
// promise, the writer pushes the bytes read alone; the page stays invalid, with those bytes
// up to date, and is opened for reading without a fetch until the reader's next release or
// acquire. Outside the promise the page is invalid as any other, and a fault fetches it whole.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "proto/intervals.hpp"

namespace dsm::proto {

// Bytes [lo, hi) of a page.
struct ByteRange {
  std::uint32_t page;
  std::uint16_t lo, hi;
};

// Whether an invalid page lacks nothing in [lo, hi): the one change it misses is a whole
// page whose bytes there a push brought. Under mu.
bool known_within(std::uint32_t page, std::uint16_t lo, std::uint16_t hi);

// Takes in a push of part of a whole page (Push::part) where that change is all the page
// lacks; false where it is not (the page then waits for a fetch). Under mu.
bool take_part(const Push& p, std::span<const Notice> need);

// Opens `pages` (invalid, known_within the caller's reads) for reading until close_within.
void open_within(std::vector<std::uint32_t> pages);

// Closes the pages open_within opened that are still invalid: at every interval end, where
// the promise ends.
void close_within();

}  // namespace dsm::proto
