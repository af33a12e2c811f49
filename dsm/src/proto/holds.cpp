#include "proto/holds.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "proto/state.hpp"

namespace dsm::proto {

void forget_holds() {
  auto& s = state();
  s.held.clear();
  s.held_runs.clear();
  s.held_changed = false;
}

bool hold_lapses() {
  auto& s = state();
  std::uint64_t oldest = s.epoch;
  for (auto p : s.held) oldest = std::min(oldest, s.claims.held_epoch(p));
  if (s.epoch - oldest >= hold_barriers) return true;
  s.held_walk_due = oldest + hold_barriers;
  return false;
}

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

void claim(int owner, std::uint32_t first, std::uint32_t last, bool collective) {
  auto& s = state();
  // Two owners: nobody writes the page whole this epoch, and holding ends.
  s.claims.claim(owner, first, last, collective, s.epoch, [&](std::uint32_t page, int holder) {
    if (holder == s.me) s.pages[page].hold_ends = s.held_changed = true;
  });
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

}  // namespace dsm::proto
