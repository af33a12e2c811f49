// The page protocol: faults, twins, diffs, write notices, fetching and applying changes.
// Work is done over sets of pages at once (one request per writer, one mprotect per run
// of pages) because per-page system calls cost more than the computation (DESIGN 3a).
#include <algorithm>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "mem/diff.hpp"
#include "mem/heap.hpp"
#include "proto/state.hpp"
#include "runtime/stats.hpp"

namespace dsm::proto {

namespace {

std::byte* alias_page(std::uint32_t page) {
  return state().region->alias() + std::size_t(page) * mem::page_size;
}

void protect(std::vector<std::uint32_t>& pages, mem::Prot prot) {
  if (pages.empty()) return;
  std::sort(pages.begin(), pages.end());
  std::vector<std::size_t> wide(pages.begin(), pages.end());
  state().region->protect_pages(wide, prot);
  for (auto p : pages) state().pages[p].prot = prot;
}

// Turns the twin of a closed interval into that interval's diff. Called with mu held.
// Appends the diff of the page against its twin to `out`; returns its size.
std::size_t encode_diff(std::uint32_t page, std::vector<std::byte>& out) {
  std::size_t n = mem::diff_encode(state().pages[page].twin.get(), alias_page(page), mem::page_size, out);
  auto& c = stats::counters();
  c.diffs_created.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_created.fetch_add(n, std::memory_order_relaxed);
  return n;
}

void encode_twin(std::uint32_t page) {
  auto& s = state();
  auto& pg = s.pages[page];
  s.diff_bytes += encode_diff(page, s.diffs[diff_key(page, pg.twin_idx)]);
  pg.twin.reset();
}

// The changes a page still needs, in application order. With a whole page among them,
// this rank's own concurrent changes must be applied again after it.
std::vector<Notice> needed_changes(std::uint32_t page) {
  auto& s = state();
  auto& pg = s.pages[page];
  std::vector<Notice> need(pg.pending.begin(), pg.pending.end());
  for (const Notice& w : pg.pending) {
    if (!w.whole) continue;
    // Two whole pages written concurrently cannot be merged: a broken exclusive promise.
    for (const Notice& o : pg.pending)
      if (o.whole && (o.proc != w.proc || o.idx != w.idx) && !happened_before(s.log, o, w) &&
          !happened_before(s.log, w, o))
        fatal("page %u written without twins by ranks %u and %u concurrently (an exclusive-write promise was broken)",
              page, w.proc, o.proc);
    std::uint32_t me = std::uint32_t(s.me);
    // Own intervals dropped by garbage collection are in every copy already.
    for (std::uint32_t k = std::max(s.log.get(w.proc, w.idx).vt[me], s.log.first(me)); k < s.log.known(me); ++k)
      for (const PageRun& run : s.log.get(me, k).runs)
        if (page >= run.first && page - run.first < run.count) {
          if (run.whole) fatal("page %u written without twins by ranks %u and %d concurrently", page, w.proc, s.me);
          need.push_back({me, k, false});
        }
  }
  try {
    return application_order(s.log, std::move(need));
  } catch (const codec::DecodeError& e) {
    fatal("write notices of page %u cannot be ordered: %s", page, e.what());
  }
}

void apply_change(std::uint32_t page, const Notice& n, std::span<const std::byte> data) {
  auto& c = stats::counters();
  if (n.whole) {
    if (data.size() != mem::page_size) fatal("whole page %u from rank %u has %zu bytes", page, n.proc, data.size());
    std::memcpy(alias_page(page), data.data(), mem::page_size);
  } else if (!mem::diff_apply(data, alias_page(page), mem::page_size)) {
    fatal("malformed diff for page %u from rank %u", page, n.proc);
  }
  c.diffs_applied.fetch_add(1, std::memory_order_relaxed);
  c.diff_bytes_applied.fetch_add(data.size(), std::memory_order_relaxed);
}

// Pushes a page for this many barriers after each fetch: a reader that stopped reading
// costs a few stale copies, one that still reads renews with its next fetch.
constexpr std::uint32_t push_barriers = 64;
// Largest diff of one page (every word changed): 4 bytes per run of 65535 words, a mask
// byte and 8 data bytes per word.
constexpr std::size_t max_page_diff = mem::page_size / 8 * 9 + 4;

// Only a request for a few pages (a halo) registers its reader: a bulk fetch (a block that
// moved to another rank) is a one-off, and pushing it back at every barrier would copy
// megabytes for nothing.
constexpr std::size_t max_halo_pages = 16;

// A held page stays writable for this many barriers after the last loop that opened it, so
// a time step with many phases (Shallow: nine barriers) does not close and reopen its
// arrays every step (two mprotects each, ~10-25 us apiece in a VM); the price is that it is
// announced whole at those barriers.
constexpr std::uint64_t hold_barriers = 16;

// No page is held any more: stale entries go.
void forget_holds() {
  auto& s = state();
  s.held.clear();
  s.held_runs.clear();
  s.held_changed = false;
}

// At most this many pages are kept open (see Page::kept): each costs a page comparison at
// every interval end, written or not.
constexpr std::size_t max_kept = 64;

void register_reader(std::uint32_t page, std::uint32_t rank) {
  auto& readers = state().pages[page].readers;
  for (auto& r : readers)
    if (r.rank == rank) {
      r.left = push_barriers;
      return;
    }
  if (readers.empty()) state().read_pages.push_back(page);
  readers.push_back({rank, push_barriers});
}

// The held pages with readers that `runs` announce whole but that have not changed since
// they were last announced (sorted); the others' contents are kept for the next barrier.
// Without this a block's boundary page would reach its readers at every barrier of a time
// step, whole and through the barrier manager, where it changed at one or two. Under mu.
std::vector<std::uint32_t> unchanged_holds(const std::vector<PageRun>& runs) {
  auto& s = state();
  std::vector<std::uint32_t> same;
  for (std::uint32_t p : s.read_pages) {
    auto& pg = s.pages[p];
    if (!pg.held) continue;
    const auto run = run_ending_after(runs, p);
    if (run == runs.end() || run->first > p || !run->whole) continue;
    if (pg.shown && std::memcmp(pg.shown.get(), alias_page(p), mem::page_size) == 0) {
      same.push_back(p);
      continue;
    }
    if (!pg.shown) pg.shown = std::make_unique_for_overwrite<std::byte[]>(mem::page_size);
    std::memcpy(pg.shown.get(), alias_page(p), mem::page_size);
  }
  std::sort(same.begin(), same.end());
  return same;
}

// Whether a hold lapses at this barrier, the one reason for a walk that falls due. If none
// does (loops renewed them all), the walk is put off to when the oldest renewal lapses: a
// word read per held page instead of the walk's work per page, which every rank holding a
// block does at the same barrier.
bool hold_lapses() {
  auto& s = state();
  std::uint64_t oldest = s.epoch;
  for (auto p : s.held) oldest = std::min(oldest, s.claims.held_epoch(p));
  if (s.epoch - oldest >= hold_barriers) return true;
  s.held_walk_due = oldest + hold_barriers;
  return false;
}

}  // namespace

void close_interval(bool at_barrier) {
  auto& s = state();
  // Held pages are walked (a page at a time, 10-30 us for thousands) only when a hold began,
  // ended or was lost since the last walk, at other interval ends than barriers, and when
  // a hold lapses; in between they are announced from the runs the last walk left.
  const bool walk = !at_barrier || s.held_changed || (s.epoch >= s.held_walk_due && hold_lapses());
  // A held page may have been written without a fault: it counts as written, whole.
  const std::size_t opened = s.dirty.size();
  if (walk)
    for (auto p : s.held) {
      auto& pg = s.pages[p];
      if (!pg.held || pg.dirty) continue;
      pg.dirty = pg.dirty_whole = true;
      s.dirty.push_back(p);
    }
  if (s.dirty.empty() && (walk || s.held_runs.empty())) {
    if (walk) forget_holds();
    return;
  }
  // The kept and opened pages of this interval, then the held ones (in page order since
  // the last barrier): two sorted parts to merge, not thousands of pages to sort.
  const auto mid = s.dirty.begin() + std::ptrdiff_t(opened);
  if (!std::is_sorted(s.dirty.begin(), mid)) std::sort(s.dirty.begin(), mid);
  if (!std::is_sorted(mid, s.dirty.end())) std::sort(mid, s.dirty.end());
  std::inplace_merge(s.dirty.begin(), mid, s.dirty.end());
  // A kept page closed by another rank's change and opened again is listed twice.
  s.dirty.erase(std::unique(s.dirty.begin(), s.dirty.end()), s.dirty.end());
  std::vector<std::uint32_t> written, read_only, still_held, kept;
  std::uint64_t oldest_hold = s.epoch;
  std::vector<std::uint8_t> whole;
  written.reserve(s.dirty.size());
  whole.reserve(s.dirty.size());
  std::uint64_t twins = 0;
  std::unique_lock lk(s.mu);
  const std::uint32_t idx = s.log.known(std::uint32_t(s.me));
  for (auto p : s.dirty) {
    auto& pg = s.pages[p];
    if (!pg.dirty) continue;  // a kept page that another rank's change closed
    if (std::exchange(pg.ahead, false) && !pg.dirty_whole &&
        std::memcmp(pg.twin.get(), alias_page(p), mem::page_size) == 0) {
      pg.twin.reset();  // opened ahead and not written
      pg.dirty = false;
      read_only.push_back(p);
      continue;
    }
    const bool rewritten = pg.written_epoch != ~0ull && s.epoch - pg.written_epoch <= 2;
    if (!pg.dirty_whole && kept.size() < max_kept && (pg.kept || (at_barrier && rewritten))) {
      if (!pg.kept) pg.idle = 0;
      const bool changed = std::memcmp(pg.twin.get(), alias_page(p), mem::page_size) != 0;
      if (changed) {
        s.diff_bytes += encode_diff(p, s.diffs[diff_key(p, idx)]);
        std::memcpy(pg.twin.get(), alias_page(p), mem::page_size);
        ++twins;
        pg.idle = 0;
        pg.last_writer = s.me;
        if (at_barrier) pg.written_epoch = s.epoch;
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
    if (!pg.dirty_whole && at_barrier) pg.written_epoch = s.epoch;
    pg.kept = pg.dirty = pg.dirty_whole = false;
    pg.last_writer = s.me;
    const std::uint64_t held_epoch = s.claims.held_epoch(p);
    if (pg.held && at_barrier && !pg.hold_ends && s.epoch - held_epoch < hold_barriers) {
      still_held.push_back(p);
      oldest_hold = std::min(oldest_hold, held_epoch);
      continue;
    }
    if (pg.held) pg.shown.reset();
    pg.held = pg.hold_ends = false;
    read_only.push_back(p);
  }
  std::vector<PageRun> runs = to_runs(written, whole);
  if (!walk) runs = merge_runs(runs, s.held_runs);
  if (at_barrier && !s.read_pages.empty()) runs = remove_pages(runs, unchanged_holds(runs));
  if (!runs.empty()) {
    Interval in;
    in.proc = std::uint32_t(s.me);
    in.idx = idx;
    in.vt = s.log.vector_time();
    in.vt[in.proc] = in.idx + 1;
    in.runs = std::move(runs);
    s.log.add(std::move(in));
  }
  for (auto p : kept) s.pages[p].twin_idx = s.log.known(std::uint32_t(s.me));  // the open interval's
  lk.unlock();
  stats::counters().twins.fetch_add(twins, std::memory_order_relaxed);
  // Written pages stay valid; the next write opens a new interval's twin.
  protect(read_only, mem::Prot::read);
  s.dirty = std::move(kept);
  if (!walk) return;
  s.held = std::move(still_held);
  s.held_runs = to_runs(s.held, std::vector<std::uint8_t>(s.held.size(), 1));
  s.held_changed = false;
  // Loops only renew holds (held_epoch grows): no hold lapses before the oldest one does.
  s.held_walk_due = oldest_hold + hold_barriers;
}

void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective) {
  auto& s = state();
  // Two owners: nobody writes the page whole this epoch, and holding ends.
  s.claims.claim(owner, first, last, collective, s.epoch, [&](std::uint32_t page, int holder) {
    if (holder == s.me) s.pages[page].hold_ends = s.held_changed = true;
  });
}

void take_whole(std::uint32_t first, std::uint32_t end) {
  auto& s = state();
  s.whole_runs.take(first, end, [&](std::uint32_t page, std::uint32_t proc, std::uint32_t idx) {
    auto& pending = s.pages[page].pending;
    if (pending.size() != 1 || pending[0].proc != proc || !pending[0].whole)
      fatal("page %u is listed as pending whole from rank %u alone but has other changes pending", page, proc);
    pending[0].idx = idx;
  });
}

void merge(std::vector<Interval> in, std::span<const Push> pushes) {
  auto& s = state();
  std::vector<std::uint32_t> invalidated, revalidated;
  std::lock_guard lk(s.mu);
  // A grant or departure brings every interval its stamps have seen that this rank lacks. A
  // stamp beyond them (forged, or a protocol error) would count a concurrent change of a
  // page as seen by a whole-page notice, which then drops it (below).
  auto known_after = s.log.vector_time();
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
    if (!s.log.add(std::move(interval))) continue;
    const auto& stamp = s.log.get(proc, idx).vt;
    const auto note = [&](std::uint32_t page, const Notice& n) {
      auto& pg = s.pages[page];
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
      if (pg.held) {
        s.held_changed = true;
        pg.shown.reset();
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
        prefetch_page(s.pages, page + prefetch_distance);
        note(page, n);
        const auto& pg = s.pages[page];
        const bool alone = whole && !pg.valid && pg.pending.size() == 1;
        if (alone && listed_from == end) listed_from = page;
        if (!alone && listed_from != end) {
          s.whole_runs.add(proc, listed_from, page, idx);
          listed_from = end;
        }
      }
      s.whole_runs.add(proc, listed_from, end, idx);
    };
    for (const PageRun& run : runs) {
      const std::uint32_t end = run.first + run.count;
      if (run.whole)
        s.whole_runs.renew(proc, run.first, end, idx, [&](std::uint32_t a, std::uint32_t b) { note_pages(a, b, true); });
      else
        note_pages(run.first, end, false);
    }
  }
  // Pushes replace the fetch only when they are all the page lacks (no change from a rank
  // that did not push; no own change to apply again after a whole page). Diffs go onto this
  // rank's own concurrent writes, whose diff `note` kept. A page several ranks write gets
  // one push from each.
  std::map<std::uint32_t, std::vector<const Push*>> by_page;
  for (const Push& p : pushes) by_page[p.page].push_back(&p);
  for (const auto& [page, pushed] : by_page) {
    auto& pg = s.pages[page];
    if (pg.valid) continue;
    take_whole(page, page + 1);
    const auto need = needed_changes(page);
    std::vector<const Push*> order;
    for (const Notice& n : need) {
      auto p = std::find_if(pushed.begin(), pushed.end(), [&](const Push* p) {
        return p->proc == n.proc && p->idx == n.idx && p->whole == n.whole;
      });
      if (p == pushed.end()) break;
      order.push_back(*p);
    }
    if (need.empty() || order.size() != need.size()) continue;
    for (std::size_t i = 0; i < need.size(); ++i) apply_change(page, need[i], order[i]->data);
    pg.pending.clear();
    pg.valid = true;
    // Closed before this merge, or writable (kept open until this merge closed it): opened
    // for reading only.
    if (pg.prot != mem::Prot::read) revalidated.push_back(page);
  }
  std::erase_if(invalidated, [&](std::uint32_t page) { return s.pages[page].valid; });
  protect(invalidated, mem::Prot::none);
  protect(revalidated, mem::Prot::read);
}

void encode_pushes(codec::Writer& w, const Interval* newest) {
  auto& s = state();
  struct Out {
    std::uint32_t reader, page;
    bool whole;
  };
  std::vector<Out> out;
  if (newest)
    for (std::uint32_t page : s.read_pages) {
      const std::optional<bool> whole = written(*newest, page);
      if (!whole) continue;
      auto& pg = s.pages[page];
      // The diff is stored now rather than at the page's next write: the push carries it.
      if (!*whole && !s.diffs.contains(diff_key(page, newest->idx))) {
        if (!pg.twin || pg.twin_idx != newest->idx) continue;
        encode_twin(page);
      }
      for (auto& r : pg.readers) out.push_back({r.rank, page, *whole});
      for (auto& r : pg.readers) --r.left;
      std::erase_if(pg.readers, [](const Page::Reader& r) { return r.left == 0; });
    }
  std::erase_if(s.read_pages, [&](std::uint32_t page) { return s.pages[page].readers.empty(); });
  w.put<std::uint32_t>(std::uint32_t(out.size()));
  for (const Out& o : out) {
    w.put(o.reader);
    w.put(o.page);
    w.put<std::uint8_t>(o.whole);
    if (o.whole) w.bytes(std::span(alias_page(o.page), mem::page_size));
    else w.bytes(s.diffs.at(diff_key(o.page, newest->idx)));
  }
  stats::counters().pages_pushed.fetch_add(out.size(), std::memory_order_relaxed);
}

// A diff request's `req` flag: sent by garbage collection (see make_valid).
constexpr std::uint32_t at_collection = 1;
// A reply item's `whole`: the server's valid copy of the page, for a request at_collection.
constexpr std::uint8_t valid_copy = 2;
// Items in one diff request. Requests are cut so that a reply is about a MiB: the writer
// encodes the next while this rank receives the last, and buffers of that size are soon
// reused, where replies of several MiB fault fresh memory in on both sides (a rank's first
// fetch of its 8 MiB block took 17-22 ms in 2 requests, 10-13 ms in 8). A server refuses
// more, since each item may ask for a whole page.
constexpr std::uint32_t max_request_items = 256;

void make_valid(std::vector<std::uint32_t> pages, bool collecting) {
  auto& s = state();
  std::erase_if(pages, [&](std::uint32_t p) {
    prefetch_page(s.pages, p + prefetch_distance);
    return s.pages[p].valid;
  });
  if (pages.empty()) return;
  stats::Timer timer(stats::counters().protocol_ns);
  // What each page needs, and from whom, asked in requests of max_request_items.
  std::map<std::uint32_t, std::vector<Notice>> plan;
  std::map<int, std::vector<std::pair<std::uint32_t, Notice>>> asks;
  std::map<std::uint64_t, std::vector<std::byte>> own;  // own diffs to re-apply
  {
    std::lock_guard lk(s.mu);
    for (std::size_t i = 0, j = 1; i < pages.size(); i = j++) {  // runs of consecutive pages
      while (j < pages.size() && pages[j] == pages[j - 1] + 1) ++j;
      take_whole(pages[i], pages[j - 1] + 1);
    }
    for (auto page : pages) {
      auto need = needed_changes(page);
      for (const Notice& n : need) {
        if (n.proc == std::uint32_t(s.me)) {
          if (s.pages[page].twin && s.pages[page].twin_idx == n.idx) encode_twin(page);
          own[diff_key(page, n.idx)] = s.diffs[diff_key(page, n.idx)];
        } else {
          asks[int(n.proc)].push_back({page, n});
        }
      }
      plan[page] = std::move(need);
    }
  }
  std::size_t sent = 0;
  std::map<int, std::size_t> unanswered;  // requests per rank
  for (auto& [proc, items] : asks)
    for (std::size_t from = 0, n = 0; from < items.size(); from += n) {
      codec::Writer w;
      w.put<std::uint32_t>(collecting ? at_collection : 0);
      n = std::min<std::size_t>(max_request_items, items.size() - from);
      // At a collection the writer answers a page once, whole, for all its items in one
      // request: a page's items are not cut across two (unless they alone fill one).
      if (collecting && from + n < items.size())
        for (std::size_t cut = n; cut > 0; --cut)
          if (items[from + cut].first != items[from + cut - 1].first) {
            n = cut;
            break;
          }
      w.put<std::uint32_t>(std::uint32_t(n));
      for (std::size_t i = from; i < from + n; ++i) {
        w.put(items[i].first);
        w.put(items[i].second.idx);
        w.put<std::uint8_t>(items[i].second.whole);
      }
      s.net->send(proc, diff_request, w.buffer());
      ++sent;
      ++unanswered[proc];
    }
  stats::counters().fetch_requests.fetch_add(sent, std::memory_order_relaxed);
  // Replies, keyed by (page, proc, idx); at a collection, whole valid copies by page.
  std::vector<Reply> replies;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::span<const std::byte>> got;
  std::map<std::uint32_t, std::pair<std::uint32_t, std::span<const std::byte>>> copies;
  {
    stats::Timer wait(stats::counters().comm_wait_ns);
    std::uint64_t t0 = stats::now_ns();
    for (std::size_t i = 0; i < sent; ++i) replies.push_back(wait_inbox(diff_reply, -1));
    if (pages.size() >= bulk_fetch_pages && sent)
      s.page_seconds.add((stats::now_ns() - t0) * 1e-9 / double(pages.size()));
  }
  for (const auto& rep : replies) {
    try {
      codec::Reader r(rep.payload);
      const auto src = std::uint32_t(rep.src);
      if (r.get<std::uint32_t>() != src) throw codec::DecodeError("signed by another rank than its sender");
      const auto left = unanswered.find(rep.src);
      if (left == unanswered.end() || left->second == 0) throw codec::DecodeError("more replies than this rank sent requests");
      --left->second;
      if (r.get<std::uint32_t>() != (collecting ? at_collection : 0)) throw codec::DecodeError("answers a request of another kind");
      auto n = r.count(13);
      for (std::uint32_t i = 0; i < n; ++i) {
        auto page = r.get<std::uint32_t>();
        auto idx = r.get<std::uint32_t>();
        const auto whole = r.get<std::uint8_t>();
        if (whole == valid_copy) {
          const auto need = plan.find(page);
          if (!collecting || need == plan.end() ||
              std::none_of(need->second.begin(), need->second.end(), [&](const Notice& n) { return n.proc == src; }))
            throw codec::DecodeError("a whole copy of a page that was not asked of that rank");
          const auto bytes = r.bytes();
          if (bytes.size() != mem::page_size) throw codec::DecodeError("a whole copy that is not a page");
          copies[page] = {src, bytes};
        } else {
          got[{page, src, idx}] = r.bytes();
        }
      }
      r.expect_end();
    } catch (const codec::DecodeError& e) {
      fatal("malformed diff reply from rank %d: %s", rep.src, e.what());
    }
  }
  std::lock_guard lk(s.mu);
  for (auto& [page, need] : plan) {
    if (const auto copy = copies.find(page); copy != copies.end()) {
      // A valid copy at a collection holds every change there is.
      apply_change(page, {copy->second.first, 0, true}, copy->second.second);
    } else {
      for (const Notice& n : need) {
        if (n.proc == std::uint32_t(s.me)) {
          apply_change(page, n, own[diff_key(page, n.idx)]);
          continue;
        }
        auto it = got.find({page, n.proc, n.idx});
        if (it == got.end()) fatal("rank %u did not send the change of page %u (interval %u)", n.proc, page, n.idx);
        apply_change(page, n, it->second);
      }
    }
    auto& pg = s.pages[page];
    pg.pending.clear();
    pg.valid = true;
  }
  stats::counters().pages_fetched.fetch_add(pages.size(), std::memory_order_relaxed);
  protect(pages, mem::Prot::read);
}

void split_held(std::uint32_t first, std::uint32_t last,
                const std::function<void(std::uint32_t, std::uint32_t, bool)>& part) {
  auto& s = state();
  // Between walks the runs are exact unless a hold began, ended or was lost (held_changed).
  if (!s.held_changed) {
    for (auto run = run_ending_after(s.held_runs, first); run != s.held_runs.end() && run->first < last && first < last;
         ++run) {
      const std::uint32_t a = std::max(first, run->first), b = std::min(last, run->first + run->count);
      if (a > first) part(first, a, false);
      part(a, b, true);
      first = b;
    }
  }
  if (first < last) part(first, last, false);
}

void renew_holds(std::uint32_t first, std::uint32_t last) {
  auto& s = state();
  s.claims.renew(first, last, s.epoch);
}

void open_for_write(std::span<const std::uint32_t> pages, bool whole, std::size_t guessed_from) {
  auto& s = state();
  std::vector<std::uint32_t> opened;
  std::uint64_t twins = 0;
  {
    std::lock_guard lk(s.mu);
    std::uint32_t open_idx = s.log.known(std::uint32_t(s.me));
    for (std::size_t i = 0; i < pages.size(); ++i) {
      const std::uint32_t page = pages[i];
      auto& pg = s.pages[page];
      const bool claimed = s.claims.owner(page, s.epoch) == s.me;
      // A kept page now written whole needs its twin no more: the whole page carries every
      // write of the open interval.
      const bool kept_to_whole = pg.kept && (whole || claimed);
      if (pg.dirty && !kept_to_whole) continue;
      if (pg.held) {  // already writable, and announced whole at every interval end
        s.claims.renew(page, s.epoch);
        continue;
      }
      if (kept_to_whole) {
        pg.twin.reset();
        pg.kept = false;
      } else if (pg.twin) {
        encode_twin(page);  // the twin of a closed interval becomes its diff
      }
      pg.dirty_whole = whole || claimed;
      if (claimed && s.claims.holder(page) == s.me) {
        pg.held = true;
        s.claims.renew(page, s.epoch);
        s.held.push_back(page);
        s.held_changed = true;
      }
      if (kept_to_whole) continue;  // writable and listed as dirty already
      if (!pg.dirty_whole) {
        pg.twin.reset(new std::byte[mem::page_size]);
        std::memcpy(pg.twin.get(), alias_page(page), mem::page_size);
        pg.twin_idx = open_idx;
        ++twins;
      }
      pg.dirty = true;
      pg.ahead = i >= guessed_from;
      s.dirty.push_back(page);
      opened.push_back(page);
    }
  }
  stats::counters().twins.fetch_add(twins, std::memory_order_relaxed);
  protect(opened, mem::Prot::read_write);
}

void on_fault(void* addr, bool is_write) {
  auto& s = state();
  auto page = std::uint32_t(s.region->page_of(addr));
  if (page >= s.heap_pages) {
    std::fprintf(stderr, "dsm: rank %d: access to unallocated shared memory at %p\n", s.me, addr);
    std::signal(SIGSEGV, SIG_DFL);  // the access faults again and ends the rank normally
    return;
  }
  auto& c = stats::counters();
  (is_write ? c.write_faults : c.read_faults).fetch_add(1, std::memory_order_relaxed);
  stats::Timer timer(c.protocol_ns);
  if (!s.pages[page].valid) {
    // A fault on the page right after the run the last fetching fault brought is a walk
    // through memory others wrote (a result gathered after a loop): fetch ahead, in runs
    // that double up to max_fetch_ahead pages, one request per writer instead of one per
    // page. Pages already valid are left out; any other fault fetches its page alone.
    s.fetch_window = page == s.next_fetch ? std::min(2 * s.fetch_window, max_fetch_ahead) : 1;
    s.next_fetch = std::min(page + s.fetch_window, s.heap_pages.load());
    std::vector<std::uint32_t> run;
    for (std::uint32_t p = page; p < s.next_fetch; ++p) run.push_back(p);
    make_valid(std::move(run));
  }
  if (!is_write) return;
  // Likewise a write fault right after the run the last one opened is a sequential first
  // write (a block written without dsm::own, an array initialized): the next pages of a
  // run that doubles up to s.max_write_ahead are opened with it, those that are valid and
  // neither open nor this rank's claim (a claim is opened without a twin, announced whole).
  s.write_window = page == s.next_write ? std::min(2 * s.write_window, s.max_write_ahead) : 1;
  s.next_write = std::min(page + s.write_window, s.heap_pages.load());
  std::vector<std::uint32_t> run{page};
  for (std::uint32_t p = page + 1; p < s.next_write; ++p) {
    const Page& pg = s.pages[p];
    if (pg.valid && !pg.dirty && !pg.held && s.claims.owner(p, s.epoch) != s.me) run.push_back(p);
  }
  open_for_write(run, false, 1);
}

void serve_diff_request(int src, codec::Reader& r) {
  auto& s = state();
  auto req = r.get<std::uint32_t>();
  auto n = r.count(9);
  if (req & ~at_collection) throw codec::DecodeError("unknown diff request flags");
  if (n > max_request_items) throw codec::DecodeError("diff request of more than " + std::to_string(max_request_items) + " items");
  struct Item {
    std::uint32_t page, idx;
    std::uint8_t whole;
    std::span<const std::byte> data;
    bool from_twin = false;  // encoded from the open twin into the reply
  };
  std::vector<Item> items(n);
  for (auto& it : items) {
    it.page = r.get<std::uint32_t>();
    it.idx = r.get<std::uint32_t>();
    it.whole = r.get<std::uint8_t>();
    if (it.page >= s.heap_pages) throw codec::DecodeError("diff request for a page outside the heap");
    if (it.whole > 1) throw codec::DecodeError("diff request item of unknown kind");
  }
  r.expect_end();
  codec::Writer w;
  std::unique_lock lk(s.mu);
  if ((req & at_collection) && s.collecting) {
    // Every rank knows every change during a collection, so a valid copy is the page's final
    // state: sent once in place of the diffs asked for, however many intervals wrote it.
    std::vector<Item> kept;
    for (const auto& it : items)
      if (!s.pages[it.page].valid) kept.push_back(it);
      else if (kept.empty() || kept.back().page != it.page || kept.back().whole != valid_copy)
        kept.push_back({it.page, it.idx, valid_copy, {}});
    items = std::move(kept);
    n = std::uint32_t(items.size());
  }
  // The reply is sized before it is written: grown step by step, a reply of megabytes
  // (a rank's first fetch of its block) would be copied and faulted in several times over.
  std::size_t size = 12;
  for (auto& it : items) {
    auto& pg = s.pages[it.page];
    if (it.whole) {  // a whole notice, or a valid copy
      it.data = std::span(alias_page(it.page), mem::page_size);
    } else if (pg.twin && pg.twin_idx == it.idx) {
      // The page still holds that interval's end (its next write or invalidation turns the
      // twin into a stored diff first): encoded straight into the reply, not stored, as a
      // rank's first fetch of a block it did not initialize would store megabytes of diffs.
      it.from_twin = true;
      size += 13 + max_page_diff;
      continue;
    } else {
      auto found = s.diffs.find(diff_key(it.page, it.idx));
      if (found == s.diffs.end())
        fatal("rank %d asked for a change of page %u (interval %u) that this rank never made", src, it.page, it.idx);
      it.data = found->second;
    }
    size += 13 + it.data.size();
  }
  // A collection brings every page up to date, wanted or not: no reader shows interest there.
  const bool halo = !(req & at_collection) && items.size() <= max_halo_pages;
  mem::reserve_populated(w.buffer(), size);
  w.put<std::uint32_t>(std::uint32_t(s.me));
  w.put(req);
  w.put(n);
  for (const auto& it : items) {
    w.put(it.page);
    w.put(it.idx);
    w.put(it.whole);
    if (halo) register_reader(it.page, std::uint32_t(src));
    if (it.from_twin) {
      auto& out = w.buffer();
      const std::size_t at = out.size();
      w.put<std::uint32_t>(0);
      const auto n = std::uint32_t(encode_diff(it.page, out));
      std::memcpy(out.data() + at, &n, sizeof n);
      continue;
    }
    w.bytes(it.data);
    if (it.whole) stats::counters().whole_pages_sent.fetch_add(1, std::memory_order_relaxed);
  }
  lk.unlock();
  s.net->send_owned(src, diff_reply, w.take());
}

std::size_t protocol_bytes() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.diff_bytes + s.log.bytes();
}

// Everything a rank fetches after this call is served from pages, not from the log: every
// rank first brings all its pages up to date (collectively, between two barriers), then
// drops diffs, twins and intervals.
void garbage_collect() {
  auto& s = state();
  {
    std::lock_guard lk(s.mu);
    s.collecting = true;
  }
  // Every rank collecting before any asks: a rank that had not merged the barrier that
  // started the collection could only send diffs, one per interval since the last one.
  barrier_with(0, true);
  std::vector<std::uint32_t> all;
  for (std::uint32_t p = 0; p < s.heap_pages; ++p)
    if (!s.pages[p].valid) all.push_back(p);
  make_valid(std::move(all), true);
  barrier_with(0, true);
  std::lock_guard lk(s.mu);
  s.collecting = false;
  if (!s.whole_runs.empty()) fatal("garbage collection left pages listed as pending whole");
  for (auto& pg : s.pages) {
    if (!pg.pending.empty()) fatal("garbage collection left a page with changes pending");
    if (!pg.kept) pg.twin.reset();  // a kept page's twin is the open interval's start
  }
  s.diffs.clear();
  s.diff_bytes = 0;
  s.log.clear();
  s.last_sent_interval = s.log.known(std::uint32_t(s.me));
  stats::counters().gcs.fetch_add(1, std::memory_order_relaxed);
}

Reply wait_inbox(Msg type, int from) {
  auto& s = state();
  const std::uint64_t poll_until = stats::now_ns() + s.poll_ns;
  bool polling = s.poll_ns > 0;
  // A polling rank raises its waiting flag (lazy messages that came while it was busy are
  // found by its first poll below); one that never polls keeps it raised (dsm::init).
  const bool lazy = polling;
  bool slept = false;
  if (polling) {
    s.net->set_polling(true);
    s.net->set_waiting(true);
  }
  for (std::uint64_t seen = ~0ull;;) {
    // The mutex only when something arrived: a poller holding it would make the service
    // thread that posts the reply sleep on it.
    if (s.arrived.value() != seen) {
      seen = s.arrived.value();  // post_inbox notifies after it queued under mu
      std::optional<Reply> m;
      {
        std::lock_guard lk(s.mu);
        if (!s.inbox.empty()) {
          m = std::move(s.inbox.front());
          s.inbox.pop_front();
        }
      }
      if (m) {
        if (lazy) s.net->set_waiting(false);
        if (polling) s.net->set_polling(false);  // may run handlers: not under mu
        if (m->type != type || (from >= 0 && m->src != from))
          fatal("a %s from rank %d where a %s from %s was due", msg_name(m->type), m->src, msg_name(type),
                from >= 0 ? ("rank " + std::to_string(from)).c_str() : "any rank");
        return std::move(*m);
      }
    }
    // Poll for a short while (the reply usually comes within microseconds), then sleep.
    if (polling) {
      if (stats::now_ns() >= poll_until) {
        s.net->set_polling(false);
        polling = false;
      }
      s.net->poll();
      continue;
    }
    if (!slept) {
      stats::counters().sleeps.fetch_add(1, std::memory_order_relaxed);
      if (!lazy && s.configured_poll_ns > 0)
        stats::counters().shared_core_waits.fetch_add(1, std::memory_order_relaxed);
    }
    slept = true;
    s.arrived.wait_until(seen + 1);
  }
}

void post_inbox(int src, Msg type, std::span<const std::byte> payload) {
  auto& s = state();
  Reply reply{src, type, {}};
  mem::reserve_populated(reply.payload, payload.size());
  reply.payload.assign(payload.begin(), payload.end());
  {
    std::lock_guard lk(s.mu);
    s.inbox.push_back(std::move(reply));
  }
  s.arrived.notify();
}

void fatal(const char* fmt, ...) {
  // One write: the ranks share dsmrun's stderr, and a message in pieces gets interleaved
  // with another rank's.
  char line[1024];
  int n = std::snprintf(line, sizeof line, "dsm: rank %d: ", state().me);
  va_list ap;
  va_start(ap, fmt);
  n += std::vsnprintf(line + n, sizeof line - std::size_t(n) - 1, fmt, ap);
  va_end(ap);
  n = std::min(n, int(sizeof line) - 2);
  line[n] = '\n';
  std::fwrite(line, 1, std::size_t(n) + 1, stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace dsm::proto
