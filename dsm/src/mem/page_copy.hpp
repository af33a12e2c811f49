// Copies of whole pages that bypass the cache. A bulk fetch writes megabytes of pages that
// the loop reads long after (or never before they leave the cache): an ordinary copy first
// reads every destination line into the cache to own it, a third of its memory traffic.
// Non-temporal stores skip that (about 1.7x faster per page here; docs/results.md, "Bulk
// pages"). They are weakly ordered: stream_fence() before the pages are published (made
// valid, opened to the application, their buffer released).
#pragma once

#include <cstddef>

namespace dsm::mem {

// Copies page_size bytes (a multiple of 64) from src to dst; dst 16-byte aligned.
void copy_page_streaming(std::byte* dst, const std::byte* src, std::size_t page_size);
// Orders the streaming copies made so far by this thread before its later stores.
void stream_fence();

}  // namespace dsm::mem
