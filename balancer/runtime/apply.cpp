// What an execution's assignment means for the pages: which pages every rank writes, which
// of them it alone writes (claimed for it, and remembered for the locality policy), and the
// bulk fetches and openings of this rank's own sections.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <utility>

namespace dsm::lb::runtime {

Bytes hull(const Section& s, const Range& r) {
  if (r.ub <= r.lb || s.hi < s.lo) return {0, 0};
  const long i0 = r.lb, i1 = iteration_at(r.lb, r.ub, r.step, iteration_count(r.lb, r.ub, r.step) - 1);
  const long e0 = std::min(s.coef * i0, s.coef * i1) + s.lo, e1 = std::max(s.coef * i0, s.coef * i1) + s.hi;
  const auto elem = static_cast<std::int64_t>(s.elem_size);
  return {address(s.base) + e0 * elem, address(s.base) + (e1 + 1) * elem};
}

std::vector<Bytes> merged(std::vector<Bytes> runs) {
  std::sort(runs.begin(), runs.end(), [](const Bytes& a, const Bytes& b) { return a.first < b.first; });
  std::vector<Bytes> out;
  for (const Bytes& b : runs)
    if (!out.empty() && b.first <= out.back().last) out.back().last = std::max(out.back().last, b.last);
    else out.push_back(b);
  return out;
}

namespace {

// More runs than this for one section and range are not worth listing: its hull stands.
constexpr std::int64_t max_listed_runs = 1 << 16;

// What a section touches over one range, as byte runs: its hull, unless its blocks (a
// column: a few bytes of each row) or its iterations (a row of every other page) cover at
// most the share `most` of the hull's pages; then a run per block or per iteration, each
// over all the range's iterations or blocks. Pages fetched or opened apart take an
// mprotect each, where the hull takes one, and split the mapping, which makes every later
// mprotect and fault in it dearer: a hull with a page left out here and there is worth its
// extra pages, and over shared memory even one with three pages in four left out (see
// `prefetch_sections`). `spare`: too many runs to list, the hull stands for them and most
// of its pages may be untouched.
struct Touched {
  std::vector<Bytes> runs;
  bool spare = false;
};
Touched touched(const Section& s, const Range& r, double most) {
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
  if (most <= 0 || (!by_block && !by_iteration)) return {{h}, false};
  // Gaps between the runs shorter than a page leave no page of the hull out (a row's
  // section of a row-major matrix): the hull, without listing a run per row.
  const std::int64_t gap = by_block ? s.stride - spread - width : std::abs(s.coef * r.step) - each;
  if (gap * elem < page_bytes && most < 1) return {{h}, false};
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
  if (double(pages) > most * double((h.last - 1) / page_bytes - h.first / page_bytes + 1)) return {{h}, false};
  return t;
}

// The byte runs of `runs` (merged) as the runtime's prefetch takes them.
std::vector<detail::ByteRun> merged_runs(std::vector<Bytes> runs) {
  std::vector<detail::ByteRun> out;
  for (const Bytes& b : merged(std::move(runs)))
    out.push_back({reinterpret_cast<const void*>(b.first), static_cast<std::size_t>(b.last - b.first)});
  return out;
}

Run pages_of(const Bytes& b, std::size_t rank) {
  return Run{static_cast<long>(b.first / page_bytes), static_cast<long>((b.last - 1) / page_bytes), static_cast<int>(rank)};
}

// A write is listed block by block where the ranks' hulls of it overlap (a column split of a
// row-major matrix), so that the pages one rank alone writes are claimed for it and opened
// alone, and only there: its hulls give the same claims otherwise, in a run each. The same
// on every rank.
constexpr double most_written = 0.75;
bool list_write(const Section& s, const Assignment& a, long lb, long ub, long step) {
  std::vector<Run> hulls;
  for (std::size_t r = 0; r < a.size(); ++r)
    for (const Range& range : to_ranges(a[r], lb, ub, step))
      if (const Bytes b = hull(s, range); b.last > b.first) hulls.push_back(pages_of(b, r));
  std::sort(hulls.begin(), hulls.end(), [](const Run& x, const Run& y) { return x.first < y.first; });
  // A hull that begins before the furthest end of another rank's.
  Run far{0, -1, -1}, other{0, -1, -1};  // the furthest end, and the furthest of another rank
  for (const Run& h : hulls) {
    if (h.first <= (h.rank != far.rank ? far.last : other.last)) return true;
    if (h.last > far.last) {
      if (h.rank != far.rank) other = far;
      far = h;
    } else if (h.rank != far.rank && h.last > other.last) {
      other = h;
    }
  }
  return false;
}

// The byte runs the sections of `accesses` read and write over `ranges`, as far as the
// options fetch and open them in bulk; `write_most(s)` is the share of its hull's pages
// below which a write is listed (touched).
template <class WriteMost>
void section_runs(std::span<const Section> accesses, std::span<const Range> ranges, const Options& o,
                  WriteMost write_most, std::vector<Bytes>& reads, std::vector<Bytes>& writes_) {
  const double most_read = detail::pages_cross_network() ? 0.75 : 0.25;
  for (const Section& s : accesses) {
    if (!(writes(s) ? o.bulk_write : o.prefetch)) continue;
    // A subscript the pass could not follow (an indirect a[b[k]]) may touch a few pages of
    // the array or all of them: faults fetch what it touches, ahead in growing runs where
    // it walks through memory.
    if (s.whole) continue;
    auto& into = s.access == Access::read ? reads : writes_;
    const double most = !writes(s) ? most_read : write_most(s);
    for (const Range& r : ranges) {
      // A reference sparser than can be listed would fetch far more than it touches.
      const Touched t = touched(s, r, most);
      if (!t.spare) into.insert(into.end(), t.runs.begin(), t.runs.end());
    }
  }
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
    const double most = list_write(s, a, lb, ub, step) ? most_written : 0;
    for (std::size_t r = 0; r < a.size(); ++r)
      for (const Range& range : to_ranges(a[r], lb, ub, step))
        for (const Bytes& b : touched(s, range, most).runs) runs.push_back(pages_of(b, r));
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

std::vector<Run> without_pages(const std::vector<Run>& runs, std::vector<Run> out_pages) {
  std::sort(out_pages.begin(), out_pages.end(), [](const Run& x, const Run& y) { return x.first < y.first; });
  std::vector<Run> out;
  for (const Run& run : runs) {
    long from = run.first;
    for (const Run& o : out_pages) {
      if (o.last < from || o.first > run.last) continue;
      if (o.first > from) out.push_back({from, o.first - 1, run.rank});
      from = std::max(from, o.last + 1);
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
//
// Over shared memory a page moves at the speed of a copy, and a listing pays only where it
// leaves three pages in four out: Cholesky's column read, one page in four of each row, ran
// 1.2 times longer listed than as its hull (four times the pages, a seventh of the
// mprotects). Over tcp the same listing ran 1.8 times faster than the hull
// (`docs/results.md`).
void prefetch_sections(std::span<const Section> accesses, const Assignment& a, long lb, long ub, long step, int me,
                       const Options& o, std::vector<detail::ByteRun>& last_reads) {
  const std::vector<Range> mine = to_ranges(a[static_cast<std::size_t>(me)], lb, ub, step);
  std::vector<Bytes> reads, writes_;
  // Writes opened as they are claimed (written_runs).
  section_runs(accesses, mine, o, [&](const Section& s) { return list_write(s, a, lb, ub, step) ? most_written : 0; },
               reads, writes_);
  // One fetch for both: a page both read and written is fetched once, and opened for
  // writing from invalid in one protection change.
  std::vector<detail::ByteRun> r = merged_runs(std::move(reads));
  const std::vector<detail::ByteRun> w = merged_runs(std::move(writes_));
  // The same reads as at the last execution: a time step's sweep over the same ranges, which
  // will read them again after the next barriers (a shrinking loop's reads move, and a loop
  // run once has no last reads).
  const bool rereads = !r.empty() && std::equal(r.begin(), r.end(), last_reads.begin(), last_reads.end(),
                                                [](const detail::ByteRun& x, const detail::ByteRun& y) {
                                                  return x.addr == y.addr && x.bytes == y.bytes;
                                                });
  if (!r.empty() || !w.empty()) detail::prefetch_runs(r, w, rereads);
  last_reads = std::move(r);
}

// Reads that move by the same bytes at every execution, as row k of an elimination at step k
// that every rank reads: every rank computes every rank's reads from the descriptors, so the
// writer of the next execution's run registers its reader, and the run comes pushed with the
// barrier before that execution instead of fetched after it (a round trip a step). The next
// run extends both ends of the last two (an elimination's row also shortens by an element).
void expect_moving_reads(std::span<const Section> accesses, const Assignment& a, long lb, long ub, long step, int me,
                         const Options& o, std::span<const Run> written,
                         std::vector<std::vector<Bytes>>& last_reads) {
  if (a.size() > max_predicting_ranks) return;
  last_reads.resize(a.size());
  std::vector<Bytes> mine;
  for (const Run& w : written)
    if (w.rank == me) mine.push_back({w.first * page_bytes, (w.last + 1) * page_bytes});
  for (std::size_t r = 0; r < a.size(); ++r) {
    if (static_cast<int>(r) == me) continue;
    std::vector<Bytes> reads, writes_;
    section_runs(accesses, to_ranges(a[r], lb, ub, step), o, [](const Section&) { return 0.0; }, reads, writes_);
    std::vector<Bytes> now = merged(std::move(reads));
    const std::vector<Bytes>& last = last_reads[r];
    if (now.size() == last.size())
      for (std::size_t i = 0; i < now.size(); ++i) {
        if (now[i].first == last[i].first && now[i].last == last[i].last) continue;
        const Bytes next{2 * now[i].first - last[i].first, 2 * now[i].last - last[i].last};
        for (const Bytes& w : mine) {
          const std::int64_t first = std::max(next.first, w.first), end = std::min(next.last, w.last);
          if (first < end)
            detail::expect_reader(reinterpret_cast<const void*>(first), static_cast<std::size_t>(end - first), static_cast<int>(r));
        }
      }
    last_reads[r] = std::move(now);
  }
}

bool writes_unheld(std::span<const Section> accesses, const Range& r) {
  for (const Section& s : accesses)
    if (writes(s))
      if (const Bytes b = hull(s, r); b.last > b.first && !detail::unheld(reinterpret_cast<const void*>(b.first), static_cast<std::size_t>(b.last - b.first)))
        return false;
  return true;
}

void prefetch_taken(std::span<const Section> accesses, const Range& r, const Options& o) {
  std::vector<Bytes> reads, writes_;
  section_runs(accesses, std::span(&r, 1), o, [](const Section&) { return 0.0; }, reads, writes_);
  const std::vector<detail::ByteRun> rr = merged_runs(std::move(reads)), w = merged_runs(std::move(writes_));
  if (!rr.empty() || !w.empty()) detail::prefetch_runs(rr, w);
}

}  // namespace dsm::lb::runtime
