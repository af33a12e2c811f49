#include "proto/claims.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace dsm::proto {

namespace {

// Shorter stretches stay page by page: a walk over them costs about what a run's upkeep
// does, and it keeps the runs few however a balancer shifts its cuts.
constexpr std::uint32_t min_run_pages = 16;

}  // namespace

void ClaimTable::resize(std::uint32_t pages) {
  if (pages > pages_.size()) pages_.resize(pages);
}

ClaimTable::RunMap::const_iterator ClaimTable::first_ending_after(std::uint32_t page) const {
  auto it = by_first_.upper_bound(page);
  if (it != by_first_.begin() && runs_[std::prev(it)->second].last > page) --it;
  return it;
}

std::vector<std::uint32_t> ClaimTable::overlapping(std::uint32_t first, std::uint32_t last) const {
  std::vector<std::uint32_t> out;
  for (auto it = first_ending_after(first); it != by_first_.end() && it->first < last; ++it) out.push_back(it->second);
  return out;
}

void ClaimTable::detach(std::uint32_t r, std::uint32_t first, std::uint32_t last) {
  const Run& run = runs_[r];
  for (std::uint32_t p = first; p < last; ++p) {
    Entry& e = pages_[p];
    e.epoch = run.epoch;
    e.held_epoch = std::max(e.held_epoch, run.held_epoch);
    e.run = no_run;
  }
  walked_ += last - first;
}

void ClaimTable::trim(std::uint32_t r, std::uint32_t first, std::uint32_t last) {
  const Run run = runs_[r];
  const std::uint32_t lo = std::max(run.first, first), hi = std::min(run.last, last);
  // Detaching costs a step per page: the larger part outside keeps the run.
  std::uint32_t keep_first = run.first, keep_last = lo;
  if (run.last - hi > lo - run.first) keep_first = hi, keep_last = run.last;
  if (keep_last - keep_first < min_run_pages) keep_first = keep_last = run.last;
  detach(r, run.first, keep_first);
  detach(r, keep_last, run.last);
  by_first_.erase(run.first);
  if (keep_first == keep_last) {
    free_.push_back(r);
    return;
  }
  runs_[r].first = keep_first;
  runs_[r].last = keep_last;
  by_first_.emplace(keep_first, r);
}

void ClaimTable::add_run(std::uint32_t first, std::uint32_t last, int owner, std::uint64_t epoch) {
  std::uint32_t r;
  if (free_.empty()) {
    r = std::uint32_t(runs_.size());
    runs_.emplace_back();
  } else {
    r = free_.back();
    free_.pop_back();
  }
  runs_[r] = Run{first, last, owner, epoch, 0};
  for (std::uint32_t p = first; p < last; ++p) pages_[p].run = r;
  by_first_.emplace(first, r);
}

void ClaimTable::claim_pages(int owner, std::uint32_t first, std::uint32_t last, bool collective,
                             std::uint64_t epoch, const std::function<void(std::uint32_t, int)>& contested) {
  std::uint32_t stretch = first;  // where the pages this claim leaves uniform began
  for (std::uint32_t p = first; p < last; ++p) {
    Entry& c = pages_[p];
    const bool fresh = c.epoch != epoch;
    if (fresh ? c.holder >= 0 && c.holder != owner : c.owner != owner) {
      const int holder = std::exchange(c.holder, -1);
      c.epoch = epoch;
      c.owner = -2;
      contested(p, holder);
    } else if (fresh) {
      c.epoch = epoch;
      c.owner = owner;
      if (collective) c.holder = owner;
    }
    if (c.owner != owner || c.holder != owner) {
      if (p - stretch >= min_run_pages) add_run(stretch, p, owner, epoch);
      stretch = p + 1;
    }
  }
  if (last - stretch >= min_run_pages) add_run(stretch, last, owner, epoch);
  walked_ += last - first;
}

void ClaimTable::claim(int owner, std::uint32_t first, std::uint32_t last, bool collective, std::uint64_t epoch,
                       const std::function<void(std::uint32_t, int)>& contested) {
  if (first >= last) return;
  // A run of the same owner inside the claim takes it whole: its pages are neither
  // contested (their holder is the owner) nor changed beyond their epoch. One claimed for
  // that owner in this epoch already is left as it is wherever it reaches. Any other run
  // the claim touches gives up the pages in it.
  struct Kept {
    std::uint32_t run, first, last;
  };
  std::vector<Kept> kept;
  for (const std::uint32_t r : overlapping(first, last)) {
    const Run& run = runs_[r];
    if (run.owner == owner && ((run.first >= first && run.last <= last) || run.epoch == epoch))
      kept.push_back({r, std::max(run.first, first), std::min(run.last, last)});
    else
      trim(r, first, last);
  }
  std::uint32_t at = first;
  for (const Kept& k : kept) {
    claim_pages(owner, at, k.first, collective, epoch, contested);
    runs_[k.run].epoch = epoch;
    at = k.last;
  }
  claim_pages(owner, at, last, collective, epoch, contested);
}

void ClaimTable::renew(std::uint32_t first, std::uint32_t last, std::uint64_t epoch) {
  std::uint32_t at = first;
  for (auto it = first_ending_after(first); it != by_first_.end() && it->first < last; ++it) {
    Run& run = runs_[it->second];
    if (run.first < first || run.last > last) continue;  // partly outside: page by page
    for (std::uint32_t p = at; p < run.first; ++p) pages_[p].held_epoch = epoch;
    run.held_epoch = epoch;
    at = run.last;
  }
  for (std::uint32_t p = at; p < last; ++p) pages_[p].held_epoch = epoch;
}

}  // namespace dsm::proto
