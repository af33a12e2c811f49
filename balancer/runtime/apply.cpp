// What an execution's assignment means for the pages: which pages every rank writes, which
// of them it alone writes (claimed for it, and remembered for the locality policy), and the
// bulk fetches and openings of this rank's own sections.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <utility>

namespace dsm::lb::runtime {
namespace {

// Byte hull [first, last) a section touches over the iterations of one range (empty: first >= last).
struct Bytes {
  std::int64_t first, last;
};
Bytes hull(const Section& s, const Range& r) {
  if (r.ub <= r.lb || s.hi < s.lo) return {0, 0};
  const long i0 = r.lb, i1 = iteration_at(r.lb, r.ub, r.step, iteration_count(r.lb, r.ub, r.step) - 1);
  const long e0 = std::min(s.coef * i0, s.coef * i1) + s.lo, e1 = std::max(s.coef * i0, s.coef * i1) + s.hi;
  const auto elem = static_cast<std::int64_t>(s.elem_size);
  return {address(s.base) + e0 * elem, address(s.base) + (e1 + 1) * elem};
}

}  // namespace

// One run per section and range; none when a write has no descriptor (anything may be written).
std::optional<std::vector<Run>> written_runs(std::span<const Section> accesses, const Assignment& a, long lb, long ub,
                                             long step) {
  std::vector<Run> runs;
  for (const Section& s : accesses) {
    if (!writes(s)) continue;
    if (s.whole) return std::nullopt;
    for (std::size_t r = 0; r < a.size(); ++r)
      for (const Range& range : to_ranges(a[r], lb, ub, step)) {
        const Bytes b = hull(s, range);
        if (b.last > b.first)
          runs.push_back({static_cast<long>(b.first / page_bytes), static_cast<long>((b.last - 1) / page_bytes),
                          static_cast<int>(r)});
      }
  }
  return runs;
}

std::vector<Run> exclusive_runs(const std::vector<Run>& mine, const std::map<std::uint64_t, Member>& group,
                                std::uint64_t self) {
  // Pages two or more ranks write: a sweep over every rank's runs, merged per rank first.
  std::map<int, std::vector<std::pair<long, long>>> by_rank;
  auto add = [&](const std::vector<Run>& runs) {
    for (const Run& r : runs) by_rank[r.rank].push_back({r.first, r.last});
  };
  add(mine);
  for (const auto& [id, member] : group)
    if (id != self) add(member.runs);
  std::vector<std::pair<long, int>> edges;  // (page, +1 where a rank's run begins, -1 after it ends)
  for (auto& [rank, pieces] : by_rank) {
    std::sort(pieces.begin(), pieces.end());
    for (std::size_t i = 0; i < pieces.size();) {
      auto [first, last] = pieces[i];
      for (++i; i < pieces.size() && pieces[i].first <= last + 1; ++i) last = std::max(last, pieces[i].second);
      edges.push_back({first, +1});
      edges.push_back({last + 1, -1});
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<std::pair<long, long>> contested;
  int writers = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const int before = writers;
    writers += edges[i].second;
    if (before < 2 && writers >= 2) contested.push_back({edges[i].first, 0});
    if (before >= 2 && writers < 2) contested.back().second = edges[i].first - 1;
  }
  std::vector<Run> out;
  for (const Run& run : mine) {
    long from = run.first;
    for (auto [first, last] : contested) {
      if (last < from || first > run.last) continue;
      if (first > from) out.push_back({from, first - 1, run.rank});
      from = last + 1;
    }
    if (from <= run.last) out.push_back({from, run.last, run.rank});
  }
  return out;
}

// The same on every rank. A page several ranks write (false sharing in a naive split) keeps
// the writer it had: it belongs to nobody in particular, and recording whichever rank came
// last would send the loops that write it towards an arbitrary rank.
void record_writes(const std::vector<Run>& exclusive) {
  for (const Run& run : exclusive) record_writer(glue().writers, run.first, run.last, run.rank);
}

// No twins, no diffs for claimed pages. Every rank makes the same calls in the same order
// from the same assignment.
void claim_exclusive(const std::vector<Run>& exclusive) {
  for (const Run& run : exclusive)
    detail::claim_exclusive_write(run.rank, reinterpret_cast<const void*>(run.first * page_bytes),
                                  static_cast<std::size_t>(run.last - run.first + 1) * page_bytes);
}

// A stencil reads one array through several sections (rows i-1, i, i+1): their
// hulls are merged per mode first, so each page is walked once and not once per section.
void prefetch_sections(std::span<const Section> accesses, const std::vector<Range>& mine, const Options& o) {
  struct Want {
    Mode mode;
    Bytes bytes;
  };
  std::vector<Want> wants;
  for (const Section& s : accesses) {
    if (!(writes(s) ? o.bulk_write : o.prefetch)) continue;
    const Mode mode = s.access == Access::read ? Mode::read : s.access == Access::write ? Mode::write : Mode::read_write;
    // A subscript the pass could not follow (an indirect a[b[k]]) may touch a few pages of
    // the array or all of them: faults fetch what it touches, ahead in growing runs where
    // it walks through memory.
    if (s.whole) continue;
    for (const Range& r : mine) {
      const Bytes b = hull(s, r);
      if (b.last <= b.first) continue;
      // Sparse references (a column of a matrix) would fetch far more than they touch.
      const long count = iteration_count(r.lb, r.ub, r.step);
      const auto touched = static_cast<std::int64_t>(count) * (s.hi - s.lo + 1) * static_cast<std::int64_t>(s.elem_size);
      if (b.last - b.first > 4 * std::max<std::int64_t>(touched, page_bytes)) continue;
      wants.push_back({mode, b});
    }
  }
  // Reads first (Mode::read is the first mode): a page both read and written is fetched
  // once, then opened.
  std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) {
    return std::pair(static_cast<int>(a.mode), a.bytes.first) < std::pair(static_cast<int>(b.mode), b.bytes.first);
  });
  for (std::size_t i = 0; i < wants.size();) {
    Want w = wants[i];
    for (++i; i < wants.size() && wants[i].mode == w.mode && wants[i].bytes.first <= w.bytes.last; ++i)
      w.bytes.last = std::max(w.bytes.last, wants[i].bytes.last);
    prefetch(reinterpret_cast<const void*>(w.bytes.first), static_cast<std::size_t>(w.bytes.last - w.bytes.first), w.mode);
  }
}

}  // namespace dsm::lb::runtime
