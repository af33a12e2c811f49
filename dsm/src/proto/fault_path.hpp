// The fault handler's protocol side: a fault on an invalid page fetches it (and the pages
// ahead of a sequential walk), a write fault opens the page for writing (and the pages
// ahead of sequential first writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dsm::proto {

// The handler dsm::init installs for faults in the region's application view.
void on_fault(void* addr, bool is_write);
// Opens valid pages for writing (twins, or none when `whole`); pages[guessed_from..] are
// opened ahead of the writes (Page::ahead).
void open_for_write(std::span<const std::uint32_t> pages, bool whole, std::size_t guessed_from = SIZE_MAX);

}  // namespace dsm::proto
