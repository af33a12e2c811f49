// A page's changes as values: this rank's own, made from twins and stored, and those of
// others, ordered and applied. Called with mu held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mem/region.hpp"
#include "proto/intervals.hpp"

namespace dsm::proto {

// Largest diff of one page (every word changed): 4 bytes per run of 65535 words, a mask
// byte and 8 data bytes per word.
constexpr std::size_t max_page_diff = mem::page_size / 8 * 9 + 4;

// Appends the diff of the page against its twin to `out`; returns its size.
std::size_t encode_diff(std::uint32_t page, std::vector<std::byte>& out);
// Turns the twin of a closed interval into that interval's diff.
void encode_twin(std::uint32_t page);

// The changes a page still needs, in application order. With a whole page among them,
// this rank's own concurrent changes must be applied again after it.
std::vector<Notice> needed_changes(std::uint32_t page);
void apply_change(std::uint32_t page, const Notice& n, std::span<const std::byte> data);

}  // namespace dsm::proto
