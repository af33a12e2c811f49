// Bringing pages up to date: each page's missing changes asked of their writers (one
// request per writer and max_request_items), and applied in application order.
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
// Largest run a fault fetches ahead on a sequential read (below bulk_fetch_pages: the
// balancer's page cost is sampled from its own bulk fetches).
constexpr std::uint32_t max_fetch_ahead = 32;

// Brings the pages up to date. `collecting`: garbage collection, where every rank knows
// every change, so a writer whose copy is valid sends it whole instead of its diffs.
void make_valid(std::vector<std::uint32_t> pages, bool collecting = false);

}  // namespace dsm::proto
