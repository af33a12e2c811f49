// Bringing pages up to date: each page's missing changes asked of their writers (requests
// of up to max_request_items per writer), and applied in application order as the replies
// land, each page as soon as it has all its changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dsm::proto {

// The balancer moves pages in bulk (one request per writer), so what a page costs it is a
// bulk fetch's time per page. A fetch of a few pages is mostly round-trip latency, and
// under load mostly the wait for a descheduled peer: sampled per page, a boundary page
// fetched from such a peer would price every move out for good. Only fetches of at least
// this many pages are sampled.
constexpr std::size_t bulk_fetch_pages = 64;
// Largest run a fault fetches ahead on a sequential read: a MiB, as many pages as a
// prefetch asks in one request, so a walk through memory another rank wrote moves as fast
// as a prefetch of it.
constexpr std::uint32_t max_fetch_ahead = 256;

// Brings the pages up to date. `collecting`: garbage collection, where every rank knows
// every change, so a writer whose copy is valid sends it whole instead of its diffs.
void make_valid(std::vector<std::uint32_t> pages, bool collecting = false);

}  // namespace dsm::proto
