// Reads promised inside a ReadsInLoops region: the runs a region's loops read, kept as
// dsm::ReadsWithin promises from one loop to the next. A promise lives across barriers on
// purpose (design.md, "Reads within a range"): one made and ended per execution costs two
// protection changes a page, more than the bytes it saves.
#include "glue.hpp"

#include <algorithm>

namespace dsm::lb {

using namespace runtime;

ReadsInLoops::ReadsInLoops() { ++glue().promises.depth; }

ReadsInLoops::~ReadsInLoops() {
  ReadPromises& p = glue().promises;
  if (--p.depth > 0) return;
  p.runs.clear();
  p.blind = false;
}

namespace runtime {
namespace {

// Promised runs beyond this many become their hull: every promised run is two pages
// searched at every fetch and merge, and a factorization's steps each read another row.
constexpr std::size_t max_promised_runs = 16;

// Widens the promises to cover `run`: the promised runs it overlaps or meets and it become
// one (a page inside a run is read whole, so no other run may end on it).
void cover(ReadPromises& p, Bytes run) {
  auto first = std::lower_bound(p.runs.begin(), p.runs.end(), run.first,
                                [](const auto& promised, std::int64_t at) { return promised.first.last < at; });
  auto last = first;
  Bytes joined = run;
  for (; last != p.runs.end() && last->first.first <= run.last; ++last) {
    joined.first = std::min(joined.first, last->first.first);
    joined.last = std::max(joined.last, last->first.last);
  }
  if (last - first == 1 && joined.first == first->first.first && joined.last == first->first.last) return;
  // The old promises end first: their pages close, and the wider one opens what it knows.
  const auto at = p.runs.erase(first, last);
  auto promise = std::make_unique<ReadsWithin>(reinterpret_cast<const void*>(joined.first),
                                               static_cast<std::size_t>(joined.last - joined.first));
  p.runs.emplace(at, joined, std::move(promise));
}

}  // namespace

void promise_reads(std::span<const Section> accesses, std::span<const Range> ranges) {
  ReadPromises& p = glue().promises;
  if (p.depth == 0 || p.blind) return;
  std::vector<Bytes> runs;
  for (const Section& s : accesses) {
    if (s.access == Access::write) continue;
    if (s.whole) return forget_reads();  // an indirect or unknown subscript: any byte
    for (const Range& r : ranges)
      if (const Bytes b = hull(s, r); b.last > b.first) runs.push_back(b);
  }
  runs = merged(std::move(runs));
  if (runs.size() > max_promised_runs) runs = {{runs.front().first, runs.back().last}};
  for (const Bytes& b : runs) cover(p, b);
  if (p.runs.size() > max_promised_runs) cover(p, {p.runs.front().first.first, p.runs.back().first.last});
}

void forget_reads() {
  ReadPromises& p = glue().promises;
  if (p.depth == 0) return;
  p.runs.clear();
  p.blind = true;
}

}  // namespace runtime
}  // namespace dsm::lb
