#include "pages.hpp"

#include <algorithm>
#include <functional>

namespace dsm::lb {
namespace {

long floor_div(std::int64_t a, std::int64_t b) { return static_cast<long>(a >= 0 ? a / b : -((-a + b - 1) / b)); }

}  // namespace

PageRange Geometry::pages(std::size_t s, long k) const {
  const WriteSection& w = sections[s];
  const long i = lb + k * step;
  const std::int64_t e0 = static_cast<std::int64_t>(w.coef) * i + w.lo;
  const std::int64_t e1 = static_cast<std::int64_t>(w.coef) * i + w.hi;
  if (e1 < e0) return {1, 0};
  return {floor_div(w.base + e0 * w.elem, page_bytes), floor_div(w.base + (e1 + 1) * w.elem - 1, page_bytes)};
}

PageRange Geometry::hull(std::size_t s, long n) const {
  if (n <= 0) return {1, 0};
  const PageRange a = pages(s, 0), b = pages(s, n - 1);
  if (a.first > a.last) return b;
  if (b.first > b.last) return a;
  return {std::min(a.first, b.first), std::max(a.last, b.last)};
}

long Geometry::shared_at(long k, long n) const {
  if (k <= 0 || k >= n) return 0;
  long shared = 0;
  for (std::size_t s = 0; s < sections.size(); ++s) {
    const PageRange left = pages(s, k - 1), right = pages(s, k);
    if (left.first > left.last || right.first > right.last) continue;
    const long forward = sections[s].coef * step;
    if (forward > 0)
      shared += std::max(0L, left.last - right.first + 1);
    else if (forward < 0)
      shared += std::max(0L, right.last - left.first + 1);
    else
      shared += right.last - right.first + 1;
  }
  return shared;
}

int Geometry::holder(long k) const {
  int who = -1;
  for (std::size_t s = 0; s < sections.size(); ++s) {
    const WriteSection& w = sections[s];
    const PageRange r = pages(s, k);
    for (long p = r.first; p <= r.last; ++p) {
      const long j = p - w.holder_origin;
      const int h = j >= 0 && j < static_cast<long>(w.holders.size()) ? w.holders[j] : -1;
      if (h < 0 || (who >= 0 && h != who)) return -1;
      who = h;
    }
  }
  return who;
}

void record_writer(WriterRuns& w, long first, long last, int writer) {
  if (first > last) return;
  auto& runs = w.runs;
  // Trim the runs overlapping [first, last], keeping their parts outside it.
  auto it = runs.upper_bound(first);
  if (it != runs.begin()) --it;
  while (it != runs.end() && it->first <= last) {
    const long f = it->first, l = it->second.first;
    const int who = it->second.second;
    if (l < first) {
      ++it;
      continue;
    }
    it = runs.erase(it);
    if (f < first) runs.emplace(f, std::make_pair(first - 1, who));
    if (l > last) runs.emplace(last + 1, std::make_pair(l, who));
  }
  runs.emplace(first, std::make_pair(last, writer));
}

std::vector<int> writers_of(const WriterRuns& w, long first, long last) {
  std::vector<int> out(static_cast<std::size_t>(std::max(0L, last - first + 1)), -1);
  auto it = w.runs.upper_bound(first);
  if (it != w.runs.begin()) --it;
  for (; it != w.runs.end() && it->first <= last; ++it)
    for (long p = std::max(first, it->first); p <= std::min(last, it->second.first); ++p)
      out[p - first] = it->second.second;
  return out;
}

std::vector<int> owners(const Assignment& a, long n) {
  std::vector<int> own(static_cast<std::size_t>(std::max(0L, n)), -1);
  for (std::size_t r = 0; r < a.size(); ++r)
    for (const Span& s : a[r])
      for (long k = std::max(0L, s.begin); k < std::min(n, s.end); ++k) own[k] = static_cast<int>(r);
  return own;
}

namespace {

// First index after k, up to n, at which section s writes other pages than at k (n: none).
// A section's pages move one way as k grows, so once they differ they stay different.
long next_change(const Geometry& g, std::size_t s, long k, long n) {
  const PageRange here = g.pages(s, k);
  const auto differs = [&](long j) {
    const PageRange r = g.pages(s, j);
    return r.first != here.first || r.last != here.last;
  };
  if (k + 1 >= n || differs(k + 1)) return std::min(k + 1, n);  // a section that moves a page or more per iteration
  long lo = k + 2, hi = n;
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (differs(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace

IterationPages::IterationPages(const Geometry& g, long n) : n(std::max(0L, n)), known(g.known()) {
  start_.push_back(0);
  for (std::size_t s = 0; s < g.sections.size(); ++s)
    for (long k = 0; (k = next_change(g, s, k, this->n)) < this->n;) start_.push_back(k);
  std::sort(start_.begin(), start_.end());
  start_.erase(std::unique(start_.begin(), start_.end()), start_.end());
  if (this->n == 0) start_.clear();
  start_.push_back(this->n);
  // Iterations move monotonically through memory, so a piece's new pages are those beyond
  // the frontier of every section's earlier pages.
  std::vector<PageRange> seen(g.sections.size(), PageRange{1, 0});
  fresh_sum_.push_back(0);
  for (std::size_t p = 0; p < pieces(); ++p) {
    const long k = start_[p];
    long fresh = 0;
    for (std::size_t s = 0; s < g.sections.size(); ++s) {
      const PageRange r = g.pages(s, k);
      if (r.first > r.last) continue;
      PageRange& f = seen[s];
      long count = r.last - r.first + 1;
      if (f.first <= f.last) {
        count -= std::max(0L, std::min(r.last, f.last) - std::max(r.first, f.first) + 1);
        f = {std::min(f.first, r.first), std::max(f.last, r.last)};
      } else {
        f = r;
      }
      fresh += std::max(0L, count);
    }
    fresh_.push_back(fresh);
    fresh_sum_.push_back(fresh_sum_.back() + fresh);
    holder_.push_back(g.holder(k));
    if (held_.empty() || held_.back().holder != holder_.back()) held_.push_back({k, end(p), holder_.back()});
    else held_.back().end = end(p);
    at_start_.push_back(g.shared_at(k, this->n));
    inside_.push_back(end(p) - k > 1 ? g.shared_at(k + 1, this->n) : 0);
  }
}

std::size_t IterationPages::piece_of(long k) const {
  return static_cast<std::size_t>(std::upper_bound(start_.begin(), start_.end() - 1, k) - start_.begin()) - 1;
}

long IterationPages::shared_at(long k) const {
  if (k <= 0 || k >= n) return 0;
  return shared_in(piece_of(k), k);
}

long IterationPages::fresh_before(long k) const {
  if (k <= 0) return 0;
  return fresh_sum_[static_cast<std::size_t>(std::lower_bound(start_.begin(), start_.end() - 1, k) - start_.begin())];
}

namespace {

// An assignment as runs of one owner that cover [0, n) in order (-1: no rank's iterations),
// neighbouring runs of one owner merged: O(spans) where owners() is O(n).
struct OwnerRun {
  long begin;
  long end;
  int owner;
};

std::vector<OwnerRun> owner_runs(const Assignment& a, long n) {
  std::vector<OwnerRun> spans;
  for (std::size_t r = 0; r < a.size(); ++r)
    for (const Span& s : a[r])
      if (std::max(0L, s.begin) < std::min(n, s.end))
        spans.push_back({std::max(0L, s.begin), std::min(n, s.end), static_cast<int>(r)});
  std::sort(spans.begin(), spans.end(), [](const OwnerRun& x, const OwnerRun& y) { return x.begin < y.begin; });
  std::vector<OwnerRun> runs;
  const auto add = [&](long begin, long end, int owner) {
    if (begin >= end) return;
    if (!runs.empty() && runs.back().owner == owner) runs.back().end = end;
    else runs.push_back({begin, end, owner});
  };
  long at = 0;
  for (const OwnerRun& s : spans) {
    add(at, s.begin, -1);
    add(std::max(at, s.begin), s.end, s.owner);
    at = std::max(at, s.end);
  }
  add(at, n, -1);
  return runs;
}

// Calls f(begin, end, owner under a, owner under b) for the stretches of [0, n) over which
// both keep one owner.
template <class F>
void each_stretch(const Assignment& a, const Assignment& b, long n, F f) {
  const std::vector<OwnerRun> x = owner_runs(a, n), y = owner_runs(b, n);
  for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    const long begin = std::max(x[i].begin, y[j].begin), end = std::min(x[i].end, y[j].end);
    f(begin, end, x[i].owner, y[j].owner);
    if (x[i].end == end) ++i;
    if (y[j].end == end) ++j;
  }
}

// Calls f(pages, a, b) for the written pages that pass between ranks a and b: pages that
// change owner (from, to), whose last writer is not their owner (holder, owner), or that
// both sides of a cut write (left, right). One walk serves the totals and the per-rank
// counts.
template <class F>
void each_moved(const IterationPages& t, const Assignment& from, const Assignment& to, F f) {
  if (!t.known) return;
  each_stretch(from, to, t.n, [&](long begin, long end, int a, int b) {
    if (a != b) f(t.fresh_before(end) - t.fresh_before(begin), a, b);
  });
}

template <class F>
void each_conflict(const IterationPages& t, const Assignment& a, F f) {
  if (!t.known) return;
  const std::vector<OwnerRun> runs = owner_runs(a, t.n);
  std::size_t r = 0;
  for (const IterationPages::Held& h : t.held()) {
    if (h.holder < 0) continue;
    while (runs[r].end <= h.begin) ++r;
    // A piece's new pages go with its first iteration, and so with that iteration's owner.
    for (std::size_t q = r; q < runs.size() && runs[q].begin < h.end; ++q)
      if (runs[q].owner != h.holder) {
        const long begin = std::max(h.begin, runs[q].begin), end = std::min(h.end, runs[q].end);
        if (const long pages = t.fresh_before(end) - t.fresh_before(begin); pages > 0) f(pages, h.holder, runs[q].owner);
      }
  }
}

template <class F>
void each_shared(const IterationPages& t, const Assignment& a, F f) {
  if (!t.known) return;
  const std::vector<OwnerRun> runs = owner_runs(a, t.n);
  for (std::size_t r = 1; r < runs.size(); ++r) f(t.shared_at(runs[r].begin), runs[r - 1].owner, runs[r].owner);
}

struct Total {
  long sum = 0;
  void operator()(long pages, int, int) { sum += pages; }
};

// Adds each count to both ranks (a rank outside the assignment, -1, is nobody's).
struct PerRank {
  std::vector<long> count;
  void operator()(long pages, int a, int b) {
    for (int r : {a, b})
      if (r >= 0 && r < static_cast<int>(count.size())) count[r] += pages;
  }
};

}  // namespace

long iterations_moved(const Assignment& from, const Assignment& to, long n) {
  long moved = 0;
  each_stretch(from, to, n, [&](long begin, long end, int a, int b) { moved += a != b ? end - begin : 0; });
  return moved;
}

long pages_moved(const IterationPages& t, const Assignment& from, const Assignment& to) {
  Total c;
  each_moved(t, from, to, std::ref(c));
  return c.sum;
}

long conflicts(const IterationPages& t, const Assignment& a) {
  Total c;
  each_conflict(t, a, std::ref(c));
  return c.sum;
}

long shared_pages(const IterationPages& t, const Assignment& a) {
  Total c;
  each_shared(t, a, std::ref(c));
  return c.sum;
}

std::vector<long> pages_moved_by_rank(const IterationPages& t, const Assignment& from, const Assignment& to) {
  PerRank c{std::vector<long>(std::max(from.size(), to.size()), 0)};
  each_moved(t, from, to, std::ref(c));
  return c.count;
}

std::vector<long> page_traffic_by_rank(const IterationPages& t, const Assignment& a, bool recurring) {
  PerRank c{std::vector<long>(a.size(), 0)};
  each_shared(t, a, std::ref(c));
  if (recurring) each_conflict(t, a, std::ref(c));
  return c.count;
}

}  // namespace dsm::lb
