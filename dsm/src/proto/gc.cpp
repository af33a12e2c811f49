#include "proto/gc.hpp"

#include <vector>

#include "proto/fetch.hpp"
#include "proto/holds.hpp"
#include "proto/state.hpp"
#include "proto/sync.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

std::size_t protocol_bytes() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.served.diff_bytes + s.intervals.log.bytes();
}

void garbage_collect() {
  auto& s = state();
  {
    std::lock_guard lk(s.mu);
    s.gc.collecting = true;
  }
  // Every rank collecting before any asks: a rank that had not merged the barrier that
  // started the collection could only send diffs, one per interval since the last one.
  barrier_with(0, true);
  std::vector<std::uint32_t> all;
  for (std::uint32_t p = 0; p < s.heap.allocated; ++p)
    if (!s.heap.pages[p].valid) all.push_back(p);
  make_valid(std::move(all), at_collection);
  barrier_with(0, true);
  std::lock_guard lk(s.mu);
  s.gc.collecting = false;
  if (!s.intervals.whole_runs.empty()) fatal("garbage collection left pages listed as pending whole");
  for (auto& pg : s.heap.pages) {
    if (!pg.pending.empty()) fatal("garbage collection left a page with changes pending");
    if (!pg.kept) pg.twin.reset();  // a kept page's twin is the open interval's start
    pg.shown_whole = false;          // nobody asks for a change from before the collection
    // Every rank has a valid copy of it now, whatever was shown before.
    pg.held_from = s.sync.epoch;
    drop_shown(pg);
    pg.fetched_through = {};
  }
  s.served.shown_pages.clear();
  s.served.diffs.clear();
  s.served.ends.clear();
  s.served.befores.clear();
  s.served.diff_bytes = 0;
  s.intervals.log.clear();
  s.intervals.last_sent = s.intervals.log.known(std::uint32_t(s.me));
  stats::counters().gcs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dsm::proto
