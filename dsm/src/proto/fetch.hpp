// Bringing pages up to date: each page's missing changes asked of their writers (requests
// of up to max_request_items per writer), and applied in application order as the replies
// land, each page as soon as it has all its changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dsm::proto {

// The balancer moves pages in bulk (one request per writer), so what a page costs it is a
// bulk fetch's time per page. A fetch of a few pages is mostly round-trip latency, and
// under load mostly the wait for a descheduled peer: sampled per page, a boundary page
// fetched from such a peer would price every move out for good. Only fetches of at least
// this many pages are sampled.
constexpr std::size_t bulk_fetch_pages = 64;
// Largest run a fault fetches ahead on a sequential read: 4 MiB, four requests of
// max_request_items pages in flight, so that a walk through memory another rank wrote moves
// as fast as a prefetch of it (at one request per run, each fault waited for a whole round
// trip before the next was asked: 0.8x a prefetch's speed). A walk that stops overfetches
// at most this much.
constexpr std::uint32_t max_fetch_ahead = 1024;

// Brings the pages up to date. `flags` (dispatch.hpp): at_collection, garbage collection,
// where every rank knows every change, so a writer whose copy is valid sends it whole
// instead of its diffs; rereads, the pages' writers push their next changes.
// `to_open` (sorted): pages the caller opens for writing right after (open_for_write), left
// closed here rather than made read-only on the way: one protection change instead of two.
// A page is fetched whole; of the pages of dsm::ReadsWithin promises the request names the
// bytes read, which their writers push alone from then on.
void make_valid(std::vector<std::uint32_t> pages, std::uint32_t flags = 0, std::span<const std::uint32_t> to_open = {});

}  // namespace dsm::proto
