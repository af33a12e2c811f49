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

// More runs than this for one section and range are not worth listing: its hull stands.
constexpr std::int64_t max_listed_runs = 1 << 16;

// What a section touches over one range, as byte runs: its hull, unless its blocks (a
// column: a few bytes of each row) or its iterations (a row of every other page) leave at
// least a quarter of the pages of the hull untouched; then a run per block or per iteration, each
// over all the range's iterations or blocks. Runs that would leave out a page here and there
// stay a hull: opened or fetched around holes, a mapping takes an mprotect per run and loses
// its huge pages. `spare`: too many runs to list, the hull stands for them and most of its
// pages may be untouched.
struct Touched {
  std::vector<Bytes> runs;
  bool spare = false;
};
Touched touched(const Section& s, const Range& r) {
  const Bytes h = hull(s, r);
  if (h.last <= h.first) return {};
  const auto elem = static_cast<std::int64_t>(s.elem_size);
  const long n = iteration_count(r.lb, r.ub, r.step);
  const long i1 = iteration_at(r.lb, r.ub, r.step, n - 1);
  const std::int64_t spread = std::abs(s.coef * (i1 - r.lb));  // of coef*i over the range
  const std::int64_t first = std::min(s.coef * r.lb, s.coef * i1) + s.lo;
  const std::int64_t width = s.blocks > 1 && s.stride > 0 ? s.hi - s.lo + 1 - (s.blocks - 1) * s.stride : 0;
  const bool by_block = width > 0 && spread + width < s.stride;
  const std::int64_t each = s.hi - s.lo + 1;  // one iteration's hull
  const bool by_iteration = !by_block && n > 1 && each < std::abs(s.coef * r.step);
  if (!by_block && !by_iteration) return {{h}, false};
  if ((by_block ? s.blocks : n) > max_listed_runs) return {{h}, true};
  Touched t;
  if (by_block) {
    for (long b = 0; b < s.blocks; ++b) {
      const std::int64_t at = address(s.base) + (first + b * s.stride) * elem;
      t.runs.push_back({at, at + (spread + width) * elem});
    }
  } else {
    for (long k = 0; k < n; ++k) {
      const std::int64_t at = address(s.base) + (s.coef * iteration_at(r.lb, r.ub, r.step, k) + s.lo) * elem;
      t.runs.push_back({at, at + each * elem});
    }
    if (s.coef < 0) std::reverse(t.runs.begin(), t.runs.end());
  }
  std::int64_t pages = 0, last_page = -1;
  for (const Bytes& b : t.runs) {
    const std::int64_t from = std::max(b.first / page_bytes, last_page + 1), to = (b.last - 1) / page_bytes;
    pages += std::max<std::int64_t>(to - from + 1, 0);
    last_page = std::max(last_page, to);
  }
  if (4 * pages > 3 * ((h.last - 1) / page_bytes - h.first / page_bytes + 1)) return {{h}, false};
  return t;
}

}  // namespace

// Runs per rank (of a section and range each, or of a block or iteration of a strided
// write, merged where they meet); none when a write has no descriptor (anything may be
// written).
std::optional<std::vector<Run>> written_runs(std::span<const Section> accesses, const Assignment& a, long lb, long ub,
                                             long step) {
  std::vector<Run> runs;
  for (const Section& s : accesses) {
    if (!writes(s)) continue;
    if (s.whole) return std::nullopt;
    for (std::size_t r = 0; r < a.size(); ++r)
      for (const Range& range : to_ranges(a[r], lb, ub, step))
        for (const Bytes& b : touched(s, range).runs)
          runs.push_back({static_cast<long>(b.first / page_bytes), static_cast<long>((b.last - 1) / page_bytes),
                          static_cast<int>(r)});
  }
  // Each rank's runs merged where they meet: the first elements of rows (p[i][0], one page
  // each) inside the rows' own write are no runs of their own, and claims and records go by
  // run.
  std::sort(runs.begin(), runs.end(), [](const Run& x, const Run& y) { return std::pair(x.rank, x.first) < std::pair(y.rank, y.first); });
  std::vector<Run> merged;
  for (const Run& run : runs)
    if (!merged.empty() && merged.back().rank == run.rank && run.first <= merged.back().last + 1)
      merged.back().last = std::max(merged.back().last, run.last);
    else
      merged.push_back(run);
  return merged;
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
    // The contested runs are sorted and apart: start at the first that ends in this run (a
    // strided write has a run per row, and as many contested pages).
    auto c = std::lower_bound(contested.begin(), contested.end(), from,
                              [](const std::pair<long, long>& p, long page) { return p.second < page; });
    for (; c != contested.end() && c->first <= run.last; ++c) {
      if (c->first > from) out.push_back({from, c->first - 1, run.rank});
      from = c->second + 1;
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
// runs are merged per mode first, so each page is walked once and not once per section,
// and all of them are fetched at once (one request per writer).
void prefetch_sections(std::span<const Section> accesses, const std::vector<Range>& mine, const Options& o) {
  std::vector<Bytes> reads, writes_;
  for (const Section& s : accesses) {
    if (!(writes(s) ? o.bulk_write : o.prefetch)) continue;
    // A subscript the pass could not follow (an indirect a[b[k]]) may touch a few pages of
    // the array or all of them: faults fetch what it touches, ahead in growing runs where
    // it walks through memory.
    if (s.whole) continue;
    auto& into = s.access == Access::read ? reads : writes_;
    for (const Range& r : mine) {
      // A reference sparser than can be listed would fetch far more than it touches.
      const Touched t = touched(s, r);
      if (!t.spare) into.insert(into.end(), t.runs.begin(), t.runs.end());
    }
  }
  // Reads first: a page both read and written is fetched once, then opened.
  for (auto* runs : {&reads, &writes_}) {
    std::sort(runs->begin(), runs->end(), [](const Bytes& a, const Bytes& b) { return a.first < b.first; });
    std::vector<detail::ByteRun> merged;
    for (std::size_t i = 0; i < runs->size();) {
      Bytes w = (*runs)[i];
      for (++i; i < runs->size() && (*runs)[i].first <= w.last; ++i) w.last = std::max(w.last, (*runs)[i].last);
      merged.push_back({reinterpret_cast<const void*>(w.first), static_cast<std::size_t>(w.last - w.first)});
    }
    if (!merged.empty()) detail::prefetch_runs(merged, runs == &writes_);
  }
}

}  // namespace dsm::lb::runtime
