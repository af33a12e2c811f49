#include "proto/interval_end.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "proto/diffs.hpp"
#include "proto/holds.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

// At most this many pages are kept open (see Page::kept): each costs a page comparison at
// every interval end, written or not.
constexpr std::size_t max_kept = 64;

void closed_for_barrier() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  s.sync.pages_as_closed = true;
}

}  // namespace

void close_interval(bool at_barrier) {
  auto& s = state();
  auto& dirty = s.intervals.dirty;
  auto& log = s.intervals.log;
  auto& pages = s.heap.pages;
  const std::uint64_t epoch = s.sync.epoch;
  // Held pages are walked (a page at a time, a miss to memory each) only when a hold began,
  // ended or was lost since the last walk, at other interval ends than barriers, and when
  // a hold lapses; in between they are announced from the runs the last walk left.
  const bool walk = !at_barrier || s.holds.changed || (epoch >= s.holds.walk_due && hold_lapses());
  // A held page may have been written without a fault: it counts as written, whole.
  const std::size_t opened = dirty.size();
  ++s.holds.closes;
  if (walk)
    for (auto p : s.holds.pages) {
      auto& pg = pages[p];
      if (!pg.held || pg.dirty) continue;
      pg.dirty = pg.dirty_whole = true;
      dirty.push_back(p);
    }
  if (at_barrier && !s.served.befores.empty()) {
    std::lock_guard lk(s.mu);
    drop_befores(log.known(std::uint32_t(s.me)));
  }
  if (dirty.empty() && (walk || s.holds.runs.empty())) {
    if (walk) forget_holds();
    if (at_barrier) closed_for_barrier();
    return;
  }
  // The kept and opened pages of this interval, then the held ones (in page order since
  // the last barrier): two sorted parts to merge, not thousands of pages to sort.
  const auto mid = dirty.begin() + std::ptrdiff_t(opened);
  if (!std::is_sorted(dirty.begin(), mid)) std::sort(dirty.begin(), mid);
  if (!std::is_sorted(mid, dirty.end())) std::sort(mid, dirty.end());
  std::inplace_merge(dirty.begin(), mid, dirty.end());
  // A kept page closed by another rank's change and opened again is listed twice.
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  std::vector<std::uint32_t> written, read_only, still_held, kept;
  std::uint64_t oldest_hold = epoch;
  std::vector<std::uint8_t> whole;
  written.reserve(dirty.size());
  whole.reserve(dirty.size());
  std::uint64_t twins = 0;
  std::unique_lock lk(s.mu);
  // Before the walk below ends holds and drops their shown copies.
  const std::vector<std::uint32_t> same =
      at_barrier && (!s.served.read_pages.empty() || !s.served.shown_pages.empty()) ? unchanged_holds() : std::vector<std::uint32_t>{};
  const std::uint32_t idx = log.known(std::uint32_t(s.me));
  for (auto p : dirty) {
    auto& pg = pages[p];
    if (!pg.dirty) continue;  // a kept page that another rank's change closed
    if (std::exchange(pg.ahead, false) && !pg.dirty_whole &&
        std::memcmp(pg.twin.get(), alias_page(p), mem::page_size) == 0) {
      pg.twin.reset();  // opened ahead and not written
      pg.dirty = false;
      read_only.push_back(p);
      continue;
    }
    const bool rewritten = pg.written_epoch != ~0ull && epoch - pg.written_epoch <= 2;
    if (!pg.dirty_whole && kept.size() < max_kept && (pg.kept || (at_barrier && rewritten))) {
      if (!pg.kept) pg.idle = 0;
      const bool changed = std::memcmp(pg.twin.get(), alias_page(p), mem::page_size) != 0;
      if (changed) {
        s.served.diff_bytes += encode_diff(pg.twin.get(), alias_page(p), s.served.diffs[diff_key(p, idx)]);
        pg.twin.copy_of(alias_page(p));
        ++twins;
        pg.idle = 0;
        pg.last_writer = s.me;
        if (at_barrier) pg.written_epoch = epoch;
        written.push_back(p);
        whole.push_back(0);
      } else {
        ++pg.idle;
      }
      if (pg.idle < hold_barriers) {
        pg.kept = true;
        kept.push_back(p);
        continue;
      }
      pg.twin.reset();  // unchanged for long: closed, its next write faults
      pg.kept = pg.dirty = false;
      read_only.push_back(p);
      continue;
    }
    written.push_back(p);
    whole.push_back(pg.dirty_whole);
    pg.shown_whole = pg.shown_whole || pg.dirty_whole;
    if (!pg.dirty_whole && at_barrier) pg.written_epoch = epoch;
    pg.kept = pg.dirty = pg.dirty_whole = false;
    pg.last_writer = s.me;
    const std::uint64_t held_epoch = s.holds.claims.held_epoch(p);
    if (pg.held && at_barrier && !pg.hold_ends && epoch < lapse_epoch(held_epoch)) {
      still_held.push_back(p);
      oldest_hold = std::min(oldest_hold, held_epoch);
      continue;
    }
    if (pg.held) drop_shown(pg);
    pg.held = pg.hold_ends = false;
    read_only.push_back(p);
  }
  std::vector<PageRun> runs = to_runs(written, whole);
  if (!walk) runs = merge_runs(runs, s.holds.runs);
  if (!same.empty()) runs = remove_pages(runs, same);
  if (!runs.empty()) {
    Interval in;
    in.proc = std::uint32_t(s.me);
    in.idx = idx;
    in.vt = log.vector_time();
    in.vt[in.proc] = in.idx + 1;
    in.runs = std::move(runs);
    log.add(std::move(in));
  }
  for (auto p : kept) pages[p].twin_idx = log.known(std::uint32_t(s.me));  // the open interval's
  // Before the pages whose holds ended are closed: a rank fetching them meanwhile gets them
  // marked as this interval left them.
  if (at_barrier) s.sync.pages_as_closed = true;
  lk.unlock();
  stats::counters().twins.fetch_add(twins, std::memory_order_relaxed);
  // Written pages stay valid; the next write opens a new interval's twin.
  protect(read_only, mem::Prot::read);
  dirty = std::move(kept);
  if (walk) walked_holds(std::move(still_held), oldest_hold);
}

}  // namespace dsm::proto
