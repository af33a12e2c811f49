#include "proto/notices.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "proto/diffs.hpp"
#include "proto/holds.hpp"
#include "proto/state.hpp"
#include "proto/within.hpp"

namespace dsm::proto {

void take_whole(std::uint32_t first, std::uint32_t end) {
  auto& s = state();
  s.intervals.whole_runs.take(first, end, [&](std::uint32_t page, std::uint32_t proc, std::uint32_t idx) {
    auto& pending = s.heap.pages[page].pending;
    if (pending.size() != 1 || pending[0].proc != proc || !pending[0].whole)
      fatal("page %u is listed as pending whole from rank %u alone but has other changes pending", page, proc);
    pending[0].idx = idx;
  });
}

void merge(std::vector<Interval> in, std::span<const Push> pushes, bool ends_barrier) {
  auto& s = state();
  auto& log = s.intervals.log;
  auto& whole_runs = s.intervals.whole_runs;
  auto& pages = s.heap.pages;
  std::vector<std::uint32_t> invalidated, revalidated;
  std::lock_guard lk(s.mu);
  s.sync.pages_as_closed = false;
  // A grant or departure brings every interval its stamps have seen that this rank lacks. A
  // stamp beyond them (forged, or a protocol error) would count a concurrent change of a
  // page as seen by a whole-page notice, which then drops it (below).
  auto known_after = log.vector_time();
  for (const auto& interval : in) {
    if (interval.proc == std::uint32_t(s.me)) {  // skipped below, but its stamp counts
      if (interval.idx >= known_after[interval.proc])
        throw codec::DecodeError("interval " + std::to_string(interval.idx) + " of this rank, which it never made");
      continue;
    }
    known_after[interval.proc] = std::max(known_after[interval.proc], interval.idx + 1);
  }
  for (const auto& interval : in)
    for (std::size_t q = 0; q < known_after.size(); ++q)
      if (interval.vt[q] > known_after[q])
        throw codec::DecodeError("interval " + std::to_string(interval.idx) + " of rank " + std::to_string(interval.proc) +
                                 " has seen interval " + std::to_string(interval.vt[q] - 1) + " of rank " +
                                 std::to_string(q) + ", which this rank was not sent");
  for (auto& interval : in) {
    std::uint32_t proc = interval.proc, idx = interval.idx;
    if (proc == std::uint32_t(s.me)) continue;
    auto runs = interval.runs;
    if (!log.add(std::move(interval))) continue;
    const auto& stamp = log.get(proc, idx).vt;
    const auto note = [&](std::uint32_t page, const Notice& n) {
      auto& pg = pages[page];
      if (n.whole && pg.valid && pg.fetched_through.proc == proc && n.idx <= pg.fetched_through.idx) {
        pg.last_writer = std::int32_t(proc);
        return;
      }
      if (pg.kept) {  // its open interval has no writes yet: the twin goes, the page closes
        pg.twin.reset();
        pg.kept = pg.dirty = false;
      } else if (pg.twin) {
        encode_twin(page);  // our own changes must survive as a diff
      }
      if (n.whole)  // the whole page already holds every change that happened before it
        pg.pending.erase(std::remove_if(pg.pending.begin(), pg.pending.end(),
                                        [&](const Notice& o) { return o.proc == proc ? o.idx < idx : stamp[o.proc] > o.idx; }),
                         pg.pending.end());
      pg.pending.push_back(n);
      pg.last_writer = std::int32_t(proc);
      pg.noticed_epoch = s.sync.epoch;
      if (pg.held) {
        s.holds.changed = true;
        drop_shown(pg);
      }
      pg.held = false;
      if (pg.valid) {
        pg.valid = false;
        invalidated.push_back(page);
      }
    };
    // Pages [first, end) not listed in whole_runs for proc, a page at a time. The pages a
    // whole run leaves pending from proc alone are listed, so its next renewal skips them.
    const auto note_pages = [&](std::uint32_t first, std::uint32_t end, bool whole) {
      take_whole(first, end);
      const Notice n{proc, idx, whole};
      std::uint32_t listed_from = end;
      for (std::uint32_t page = first; page < end; ++page) {
        prefetch_page(pages, page + prefetch_distance);
        note(page, n);
        const auto& pg = pages[page];
        const bool alone = whole && !pg.valid && pg.pending.size() == 1;
        if (alone && listed_from == end) listed_from = page;
        if (!alone && listed_from != end) {
          whole_runs.add(proc, listed_from, page, idx);
          listed_from = end;
        }
      }
      whole_runs.add(proc, listed_from, end, idx);
    };
    for (const PageRun& run : runs) {
      const std::uint32_t end = run.first + run.count;
      if (run.whole)
        whole_runs.renew(proc, run.first, end, idx, [&](std::uint32_t a, std::uint32_t b) { note_pages(a, b, true); });
      else
        note_pages(run.first, end, false);
    }
  }
  // Pushes replace the fetch only when they are all the page lacks (no change from a rank
  // that did not push; no own change to apply again after a whole page). Diffs go onto this
  // rank's own concurrent writes, whose diff `note` kept. A page several ranks write gets
  // one push from each. By page, in one sorted list: a barrier may push thousands of pages
  // (adi), and a map of lists took three allocations a page.
  std::vector<const Push*> by_page(pushes.size());
  for (std::size_t i = 0; i < pushes.size(); ++i) by_page[i] = &pushes[i];
  std::stable_sort(by_page.begin(), by_page.end(), [](const Push* a, const Push* b) { return a->page < b->page; });
  std::vector<const Push*> order;
  for (auto from = by_page.begin(); from != by_page.end();) {
    const std::uint32_t page = (*from)->page;
    const auto to = std::find_if(from, by_page.end(), [&](const Push* p) { return p->page != page; });
    const std::span<const Push* const> pushed(from, to);
    from = to;
    auto& pg = pages[page];
    if (pg.valid) continue;
    take_whole(page, page + 1);
    const auto need = needed_changes(page);
    order.clear();
    for (const Notice& n : need) {
      auto p = std::find_if(pushed.begin(), pushed.end(), [&](const Push* p) {
        return p->proc == n.proc && p->idx == n.idx && p->whole == n.whole;
      });
      if (p == pushed.end()) break;
      order.push_back(*p);
    }
    if (need.empty() || order.size() != need.size()) continue;
    // Part of a page leaves it invalid, those bytes known (within.hpp).
    if (std::any_of(order.begin(), order.end(), [](const Push* p) { return p->part(); })) {
      if (order.size() == 1) take_part(*order[0], need);
      continue;
    }
    for (std::size_t i = 0; i < need.size(); ++i) apply_change(page, need[i], order[i]->data);
    pg.pending.clear();
    pg.valid = true;
    // Closed before this merge, or writable (kept open until this merge closed it): opened
    // for reading only.
    if (pg.prot != mem::Prot::read) revalidated.push_back(page);
  }
  std::erase_if(invalidated, [&](std::uint32_t page) { return pages[page].valid; });
  std::vector<std::uint32_t> closed;
  settle_within(invalidated, revalidated, closed);
  protect(invalidated, mem::Prot::none);
  protect(closed, mem::Prot::none);
  protect(revalidated, mem::Prot::read);
  if (ends_barrier) {
    s.sync.in_barrier = false;
    ++s.sync.epoch;
  }
}

}  // namespace dsm::proto
