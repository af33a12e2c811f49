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

std::vector<long> Geometry::new_pages(long n) const {
  std::vector<long> fresh(static_cast<std::size_t>(std::max(0L, n)), 0);
  for (std::size_t s = 0; s < sections.size(); ++s) {
    // Iterations move monotonically through memory, so "new" means beyond the frontier.
    bool seen = false;
    long lo_seen = 0, hi_seen = 0;
    for (long k = 0; k < n; ++k) {
      const PageRange r = pages(s, k);
      if (r.first > r.last) continue;
      long count = r.last - r.first + 1;
      if (seen) {
        const long overlap = std::min(r.last, hi_seen) - std::max(r.first, lo_seen) + 1;
        count -= std::max(0L, overlap);
        lo_seen = std::min(lo_seen, r.first);
        hi_seen = std::max(hi_seen, r.last);
      } else {
        seen = true;
        lo_seen = r.first;
        hi_seen = r.last;
      }
      fresh[k] += std::max(0L, count);
    }
  }
  return fresh;
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

IterationPages::IterationPages(const Geometry& g, long n)
    : n(std::max(0L, n)), known(g.known()), fresh(g.new_pages(this->n)), holder(this->n), shared(this->n + 1) {
  for (long k = 0; k < this->n; ++k) {
    holder[k] = g.holder(k);
    shared[k] = g.shared_at(k, this->n);
  }
}

namespace {

// Calls f(pages, a, b) for each iteration whose written pages pass between ranks a and b:
// pages that change owner (from, to), whose last writer is not their owner (holder, owner),
// or that both sides of a cut write (left, right). One walk serves the totals and the
// per-rank counts.
template <class F>
void each_moved(const IterationPages& t, const Assignment& from, const Assignment& to, F f) {
  if (!t.known) return;
  const std::vector<int> a = owners(from, t.n), b = owners(to, t.n);
  for (long k = 0; k < t.n; ++k)
    if (a[k] != b[k]) f(t.fresh[k], a[k], b[k]);
}

template <class F>
void each_conflict(const IterationPages& t, const Assignment& a, F f) {
  if (!t.known) return;
  const std::vector<int> own = owners(a, t.n);
  for (long k = 0; k < t.n; ++k)
    if (const int h = t.holder[k]; h >= 0 && h != own[k]) f(t.fresh[k], h, own[k]);
}

template <class F>
void each_shared(const IterationPages& t, const Assignment& a, F f) {
  if (!t.known) return;
  const std::vector<int> own = owners(a, t.n);
  for (long k = 1; k < t.n; ++k)
    if (own[k] != own[k - 1]) f(t.shared[k], own[k - 1], own[k]);
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
