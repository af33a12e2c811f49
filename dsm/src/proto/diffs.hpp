// A page's changes as values: this rank's own, made from twins and stored, and those of
// others, ordered and applied. Called with mu held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mem/region.hpp"
#include "proto/codec.hpp"
#include "proto/intervals.hpp"
#include "proto/twin.hpp"

namespace dsm::proto {

// Largest diff of one page (every word changed): 4 bytes per run of 65535 words, a mask
// byte and 8 data bytes per word.
constexpr std::size_t max_page_diff = mem::page_size / 8 * 9 + 4;


// Appends the diff of `page` (a page's bytes) against `twin` to `out`; returns its size.
std::size_t encode_diff(const std::byte* twin, const std::byte* page, std::vector<std::byte>& out);
// The same into w, as a byte string (codec::Writer::bytes).
void put_diff(codec::Writer& w, const std::byte* twin, const std::byte* page);
// Turns the twin of a closed interval into that interval's stored change: its diff, or,
// for a page whose twin is all zero and whose diff would be larger than the page, the page
// itself in the twin's buffer (Served::ends).
void encode_twin(std::uint32_t page);

// A change this rank stored: a diff, or the page as the interval left it (Served::ends),
// whose diff is the one against zero_page. Neither when this rank stored no such change.
struct OwnChange {
  const std::vector<std::byte>* diff = nullptr;
  const std::byte* end = nullptr;
  bool stored() const { return diff || end; }
};
OwnChange own_change(std::uint32_t page, std::uint32_t idx);
// Appends a stored change to w as its diff, a byte string.
void put_change(codec::Writer& w, OwnChange c);

// The changes a page still needs, in application order. With a whole page among them,
// this rank's own concurrent changes must be applied again after it.
std::vector<Notice> needed_changes(std::uint32_t page);
// Applies one change to the page in the runtime's view. `streaming`: a whole page is copied
// past the cache (mem/page_copy.hpp; the caller fences before publishing the page).
void apply_change(std::uint32_t page, const Notice& n, std::span<const std::byte> data, bool streaming = false);

}  // namespace dsm::proto
