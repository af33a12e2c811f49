// Page-sized buffers for copies of pages (twins, the images a holder keeps for late readers),
// kept for reuse: a page's worth from malloc costs more than its copy, and a split loop
// copies thousands of pages a barrier. Either thread may take and give.
#pragma once

#include <cstddef>
#include <memory>

namespace dsm::proto {

// A buffer of mem::page_size bytes, uninitialized.
std::unique_ptr<std::byte[]> take_page_buffer();
// Back for the next copy (up to 16 MiB are kept; the rest are freed).
void give_page_buffer(std::unique_ptr<std::byte[]> buffer);

}  // namespace dsm::proto
