#include "proto/whole_runs.hpp"

#include <algorithm>
#include <iterator>

namespace dsm::proto {

void WholeRuns::split_at(Runs& runs, std::uint32_t page) {
  auto it = runs.upper_bound(page);
  if (it == runs.begin()) return;
  --it;
  if (it->first < page && it->second.end > page) {
    runs.emplace(page, it->second);
    it->second.end = page;
  }
}

void WholeRuns::join(Runs& runs, std::uint32_t first, std::uint32_t end) {
  auto it = runs.lower_bound(first);
  if (it != runs.begin()) --it;
  while (it != runs.end()) {
    auto next = std::next(it);
    if (next == runs.end() || next->first > end) return;
    if (it->second.end == next->first && it->second.idx == next->second.idx) {
      it->second.end = next->second.end;
      runs.erase(next);
    } else {
      it = next;
    }
  }
}

void WholeRuns::renew(std::uint32_t proc, std::uint32_t first, std::uint32_t end, std::uint32_t idx,
                      const std::function<void(std::uint32_t, std::uint32_t)>& other) {
  auto& runs = per_[proc];
  std::vector<std::pair<std::uint32_t, std::uint32_t>> unlisted;
  std::uint32_t at = first;
  if (!runs.empty()) {
    split_at(runs, first);
    split_at(runs, end);
    for (auto it = runs.lower_bound(first); it != runs.end() && it->first < end; ++it) {
      if (it->first > at) unlisted.emplace_back(at, it->first);
      it->second.idx = idx;
      at = it->second.end;
    }
    join(runs, first, end);
  }
  if (at < end) unlisted.emplace_back(at, end);
  // After the walk: `other` may list pages of its own.
  for (auto [a, b] : unlisted) other(a, b);
}

void WholeRuns::add(std::uint32_t proc, std::uint32_t first, std::uint32_t end, std::uint32_t idx) {
  if (first >= end) return;
  auto& runs = per_[proc];
  runs.emplace(first, Run{end, idx});
  join(runs, first, end);
}

void WholeRuns::take(std::uint32_t first, std::uint32_t end,
                     const std::function<void(std::uint32_t, std::uint32_t, std::uint32_t)>& listed) {
  for (std::uint32_t proc = 0; proc < per_.size(); ++proc) {
    auto& runs = per_[proc];
    if (runs.empty()) continue;
    split_at(runs, first);
    split_at(runs, end);
    auto it = runs.lower_bound(first);
    while (it != runs.end() && it->first < end) {
      for (std::uint32_t page = it->first; page < it->second.end; ++page) listed(page, proc, it->second.idx);
      it = runs.erase(it);
    }
  }
}

bool WholeRuns::empty() const {
  return std::all_of(per_.begin(), per_.end(), [](const Runs& r) { return r.empty(); });
}

std::size_t WholeRuns::run_count() const {
  std::size_t n = 0;
  for (const auto& r : per_) n += r.size();
  return n;
}

}  // namespace dsm::proto
