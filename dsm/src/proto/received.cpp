#include "proto/received.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "proto/diffs.hpp"
#include "proto/fetch.hpp"
#include "proto/state.hpp"

namespace dsm::proto {

void write_received(std::size_t offset, std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  auto& s = state();
  const auto first = std::uint32_t(offset / mem::page_size);
  const auto end = std::uint32_t((offset + bytes.size() + mem::page_size - 1) / mem::page_size);
  if (end > s.heap.allocated) fatal("received %zu bytes for shared memory beyond the heap", bytes.size());
  // The bytes around them on the same pages must be as this rank last knew them.
  std::vector<std::uint32_t> pages;
  for (std::uint32_t p = first; p < end; ++p) pages.push_back(p);
  make_valid(pages);
  std::lock_guard lk(s.mu);
  for (std::uint32_t p = first; p < end; ++p) {
    const std::size_t page_start = std::size_t(p) * mem::page_size;
    const std::size_t lo = std::max(offset, page_start), hi = std::min(offset + bytes.size(), page_start + mem::page_size);
    const std::span<const std::byte> part = bytes.subspan(lo - offset, hi - lo);
    auto& pg = s.heap.pages[p];
    // A twin of a closed interval becomes its diff before the page changes; a twin of the
    // open one takes the bytes too, so that this rank's diff leaves them out.
    if (pg.twin && !pg.dirty) encode_twin(p);
    if (pg.twin) std::memcpy(pg.twin.writable() + (lo - page_start), part.data(), part.size());
    std::memcpy(alias_page(p) + (lo - page_start), part.data(), part.size());
    pg.zero = false;
  }
}

}  // namespace dsm::proto
