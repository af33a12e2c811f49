#include "proto/holds.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "proto/fetch.hpp"
#include "proto/page_buffers.hpp"
#include "proto/state.hpp"

namespace dsm::proto {

void forget_holds() {
  auto& s = state();
  s.holds.pages.clear();
  s.holds.runs.clear();
  s.holds.changed = false;
}

bool hold_lapses() {
  auto& s = state();
  std::uint64_t oldest = s.sync.epoch;
  for (auto p : s.holds.pages) oldest = std::min(oldest, s.holds.claims.held_epoch(p));
  if (s.sync.epoch >= lapse_epoch(oldest)) return true;
  s.holds.walk_due = lapse_epoch(oldest);
  return false;
}

void walked_holds(std::vector<std::uint32_t> still, std::uint64_t oldest) {
  auto& holds = state().holds;
  holds.pages = std::move(still);
  holds.runs = to_runs(holds.pages, std::vector<std::uint8_t>(holds.pages.size(), 1));
  holds.changed = false;
  // Loops only renew holds (held epochs grow): no hold lapses before the oldest one does.
  holds.walk_due = lapse_epoch(oldest);
}

namespace {

bool still_shown(const Page& pg, std::uint32_t page) {
  return pg.held && pg.shown && !pg.shown_stale && std::memcmp(pg.shown.get(), alias_page(page), mem::page_size) == 0;
}

}  // namespace

void drop_shown(Page& pg) {
  give_page_buffer(std::move(pg.shown));
  pg.shown_stale = false;
}

std::vector<std::uint32_t> unchanged_holds() {
  auto& s = state();
  std::vector<std::uint32_t> same;
  // Pushed to their readers: what a barrier announces of them, each reader holds after it.
  for (std::uint32_t p : s.served.read_pages) {
    auto& pg = s.heap.pages[p];
    if (!pg.held) continue;
    if (still_shown(pg, p)) {
      same.push_back(p);
      continue;
    }
    if (!pg.shown) pg.shown = take_page_buffer();
    std::memcpy(pg.shown.get(), alias_page(p), mem::page_size);
    pg.shown_stale = false;
  }
  // Served whole: a changed one is announced, and its copies invalidated, as before.
  std::erase_if(s.served.shown_pages, [&](std::uint32_t p) {
    auto& pg = s.heap.pages[p];
    if (!pg.readers.empty()) return true;  // decided above
    if (still_shown(pg, p)) {
      same.push_back(p);
      return false;
    }
    drop_shown(pg);
    return true;
  });
  std::sort(same.begin(), same.end());
  same.erase(std::unique(same.begin(), same.end()), same.end());
  return same;
}

std::span<const std::byte> show_held(std::uint32_t page) {
  auto& s = state();
  Page& pg = s.heap.pages[page];
  const std::byte* live = alias_page(page);
  if (pg.shown) {
    if (std::memcmp(pg.shown.get(), live, mem::page_size) == 0) return {pg.shown.get(), mem::page_size};
    pg.shown_stale = true;
    return {live, mem::page_size};
  }
  // Before the barrier that announces the hold has closed this rank's interval, another
  // rank may hold an older valid copy, which an unannounced page would leave valid. From
  // that close on, every copy is this one or is invalidated by the announcement.
  if (pg.held_from >= s.sync.epoch && !s.sync.pages_as_closed) return {live, mem::page_size};
  pg.shown = take_page_buffer();
  std::memcpy(pg.shown.get(), live, mem::page_size);
  s.served.shown_pages.push_back(page);
  return {pg.shown.get(), mem::page_size};
}

void keep_before_change(std::uint32_t first, std::uint32_t last) {
  auto& s = state();
  auto& holds = s.holds;
  for (std::uint32_t p = first; p < last; ++p) {
    if (p == holds.noted_page && holds.closes == holds.noted_closes) continue;
    holds.noted_page = p;
    holds.noted_closes = holds.closes;
    const Page& pg = s.heap.pages[p];
    if (!pg.held && !pg.kept) continue;
    if (!pg.valid) make_valid({p});  // the write's own read (++, +=) comes after
    std::lock_guard lk(s.mu);
    keep_image(p, s.intervals.log.known(std::uint32_t(s.me)), alias_page(p));
  }
}

void keep_image(std::uint32_t page, std::uint32_t idx, const std::byte* bytes) {
  Served& served = state().served;
  auto& list = served.befores[page];
  if (!list.empty() && list.back().idx == idx) return;
  std::unique_ptr<std::byte[]> copy = take_page_buffer();
  std::memcpy(copy.get(), bytes, mem::page_size);
  list.push_back({idx, std::move(copy)});
}

const std::byte* image_before(std::uint32_t page, std::uint32_t idx) {
  const auto& befores = state().served.befores;
  const auto it = befores.find(page);
  if (it == befores.end()) return nullptr;
  for (const auto& b : it->second)
    if (b.idx > idx) return b.bytes.get();
  return nullptr;
}

void drop_befores(std::uint32_t closing) {
  Served& served = state().served;
  for (auto it = served.befores.begin(); it != served.befores.end();) {
    std::vector<Served::Before>& list = it->second;
    const auto kept = std::find_if(list.begin(), list.end(), [&](const Served::Before& b) { return b.idx >= closing; });
    for (auto b = list.begin(); b != kept; ++b) give_page_buffer(std::move(b->bytes));
    list.erase(list.begin(), kept);
    it = list.empty() ? served.befores.erase(it) : std::next(it);
  }
}

void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective) {
  auto& s = state();
  // Two owners: nobody writes the page whole this epoch, and holding ends.
  s.holds.claims.claim(owner, first, last, collective, s.sync.epoch, [&](std::uint32_t page, int holder) {
    if (holder == s.me) s.heap.pages[page].hold_ends = s.holds.changed = true;
  });
}

void split_held(std::uint32_t first, std::uint32_t last,
                const std::function<void(std::uint32_t, std::uint32_t, bool)>& part) {
  const auto& holds = state().holds;
  // Between walks the runs are exact unless a hold began, ended or was lost (Holds::changed).
  if (!holds.changed) {
    for (auto run = run_ending_after(holds.runs, first); run != holds.runs.end() && run->first < last && first < last;
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
  s.holds.claims.renew(first, last, s.sync.epoch);
}

}  // namespace dsm::proto
