#include "proto/fault_path.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include "proto/diffs.hpp"
#include "proto/fetch.hpp"
#include "proto/holds.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

void open_for_write(std::span<const std::uint32_t> pages, bool whole, std::size_t guessed_from) {
  auto& s = state();
  std::vector<std::uint32_t> opened;
  std::uint64_t twins = 0;
  {
    std::lock_guard lk(s.mu);
    std::uint32_t open_idx = s.intervals.log.known(std::uint32_t(s.me));
    for (std::size_t i = 0; i < pages.size(); ++i) {
      const std::uint32_t page = pages[i];
      auto& pg = s.heap.pages[page];
      const bool was_zero = pg.zero;
      pg.zero = false;
      const bool claimed = s.holds.claims.owner(page, s.sync.epoch) == s.me;
      // A kept page now written whole needs its twin no more: the whole page carries every
      // write of the open interval.
      const bool kept_to_whole = pg.kept && (whole || claimed);
      if (pg.dirty && !kept_to_whole) continue;
      if (pg.held) {  // already writable, and announced whole at every interval end
        s.holds.claims.renew(page, s.sync.epoch);
        continue;
      }
      if (kept_to_whole) {
        pg.twin.reset();
        pg.kept = false;
      } else if (pg.twin) {
        encode_twin(page);  // the twin of a closed interval becomes its diff
      }
      pg.dirty_whole = whole || claimed;
      if (claimed && s.holds.claims.holder(page) == s.me) {
        pg.held = true;
        pg.held_from = s.sync.epoch;
        s.holds.claims.renew(page, s.sync.epoch);
        s.holds.pages.push_back(page);
        s.holds.changed = true;
      }
      if (kept_to_whole) continue;  // writable and listed as dirty already
      // Until every rank knows this interval, the whole page of the last one is the page as
      // it is now, before this interval's first write (twinned or written whole alike).
      if (pg.shown_whole && !was_zero) keep_image(page, open_idx, alias_page(page));
      if (!pg.dirty_whole) {
        if (was_zero) pg.twin.set_zero();
        else pg.twin.copy_of(alias_page(page));
        pg.twin_idx = open_idx;
        ++twins;
      }
      pg.dirty = true;
      pg.ahead = i >= guessed_from;
      s.intervals.dirty.push_back(page);
      opened.push_back(page);
    }
  }
  stats::counters().twins.fetch_add(twins, std::memory_order_relaxed);
  protect(opened, mem::Prot::read_write);
}

void on_fault(void* addr, bool is_write) {
  auto& s = state();
  auto& ahead = s.ahead;
  auto page = std::uint32_t(s.region->page_of(addr));
  if (page >= s.heap.allocated) {
    std::fprintf(stderr, "dsm: rank %d: access to unallocated shared memory at %p\n", s.me, addr);
    std::signal(SIGSEGV, SIG_DFL);  // the access faults again and ends the rank normally
    return;
  }
  auto& c = stats::counters();
  (is_write ? c.write_faults : c.read_faults).fetch_add(1, std::memory_order_relaxed);
  stats::Timer timer(c.protocol_ns);
  if (!s.heap.pages[page].valid) {
    // A fault on the page right after a run a fetching fault brought continues a walk
    // through memory others wrote (a result gathered after a loop): fetch ahead, in runs
    // that double up to max_fetch_ahead pages, fetched as a prefetch of them would be rather
    // than a fault per page. Any other fault fetches its page alone and starts a walk in
    // place of the one continued longest ago.
    Ahead::Walk* walk = std::find_if(ahead.walks.begin(), ahead.walks.end(), [&](const Ahead::Walk& w) { return w.next == page; });
    if (walk != ahead.walks.end()) {
      walk->window = std::min(2 * walk->window, max_fetch_ahead);
    } else {
      walk = std::min_element(ahead.walks.begin(), ahead.walks.end(), [](const Ahead::Walk& a, const Ahead::Walk& b) { return a.used < b.used; });
      walk->window = 1;
    }
    walk->used = ++ahead.faults;
    walk->next = std::min(page + walk->window, s.heap.allocated.load());
    std::vector<std::uint32_t> run;
    for (std::uint32_t p = page; p < walk->next; ++p) run.push_back(p);
    make_valid(std::move(run));
  }
  if (!is_write) return;
  // Likewise a write fault right after the run the last one opened is a sequential first
  // write (a block written without dsm::own, an array initialized): the next pages of a
  // run that doubles up to Ahead::max_write are opened with it, those that are valid and
  // neither open nor this rank's claim (a claim is opened without a twin, announced whole).
  ahead.write_window = page == ahead.next_write ? std::min(2 * ahead.write_window, ahead.max_write) : 1;
  ahead.next_write = std::min(page + ahead.write_window, s.heap.allocated.load());
  std::vector<std::uint32_t> run{page};
  for (std::uint32_t p = page + 1; p < ahead.next_write; ++p) {
    const Page& pg = s.heap.pages[p];
    if (pg.valid && !pg.dirty && !pg.held && s.holds.claims.owner(p, s.sync.epoch) != s.me) run.push_back(p);
  }
  open_for_write(run, false, 1);
}

}  // namespace dsm::proto
