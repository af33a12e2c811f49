// Intervals and write notices of lazy release consistency, and their wire encoding.
//
// Rank p's execution is cut into intervals at every release and acquire. Interval k of
// rank p is stamped with a vector time whose entry q counts the intervals of rank q that
// p knew when k closed (entry p is k + 1, so it counts k itself). Interval A happened
// before interval B exactly when A's stamp is <= B's stamp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "mem/region.hpp"
#include "proto/codec.hpp"
#include "proto/vclock.hpp"

namespace dsm::proto {

// Pages [first, first+count) written in one interval. whole: the writer claimed them
// exclusively and keeps no twin; a reader fetches the writer's whole page, not a diff.
struct PageRun {
  std::uint32_t first;
  std::uint32_t count;
  std::uint8_t whole;
};

// The first of `runs` (in page order, disjoint) that ends after `page`: the one holding it,
// if any holds it.
std::vector<PageRun>::const_iterator run_ending_after(const std::vector<PageRun>& runs, std::uint32_t page);

struct Interval {
  std::uint32_t proc = 0;
  std::uint32_t idx = 0;
  VectorTime vt;
  std::vector<PageRun> runs;
};

// Write notice: "page changed in interval idx of rank proc".
struct Notice {
  std::uint32_t proc;
  std::uint32_t idx;
  bool whole;
};

// A page's change in interval `idx` of rank `proc`, pushed with a barrier to `reader`: the
// whole page at that interval's end, or that interval's diff of it. A whole page may travel
// in part: the bytes at `offset` that the reader confines its reads to (dsm::ReadsWithin).
struct Push {
  std::uint32_t reader, proc, idx, page;
  bool whole;
  std::span<const std::byte> data;
  std::uint16_t offset = 0;
  bool part() const { return whole && data.size() < mem::page_size; }
};

// Sorted distinct pages, each with its whole flag, into maximal runs.
std::vector<PageRun> to_runs(std::span<const std::uint32_t> pages, std::span<const std::uint8_t> whole);

// Two run lists, each sorted with no page in both, as one sorted list of maximal runs.
std::vector<PageRun> merge_runs(std::span<const PageRun> a, std::span<const PageRun> b);

// `runs` without `pages` (sorted, distinct; pages no run holds are ignored).
std::vector<PageRun> remove_pages(std::span<const PageRun> runs, std::span<const std::uint32_t> pages);

// A list of intervals on the wire, each stamp as its changes from the one before where that
// is shorter. Decoding validates against the job size and the number of allocated pages
// (DecodeError).
void encode_list(codec::Writer& w, std::span<const Interval* const> list);
std::vector<Interval> decode_list(codec::Reader& r, std::uint32_t nprocs, std::uint32_t npages);

// Every interval a rank knows, by creator. Rank p's intervals are known as a contiguous
// sequence; after garbage collection the oldest are dropped (base).
class IntervalLog {
 public:
  explicit IntervalLog(std::uint32_t nprocs) : per_(nprocs), base_(nprocs, 0) {}
  // Number of rank p's intervals known (the vector-time entry).
  std::uint32_t known(std::uint32_t p) const { return base_[p] + std::uint32_t(per_[p].size()); }
  // Index of rank p's oldest interval still kept (earlier ones went with garbage collection).
  std::uint32_t first(std::uint32_t p) const { return base_[p]; }
  VectorTime vector_time() const;
  const Interval& get(std::uint32_t p, std::uint32_t idx) const { return per_[p][idx - base_[p]]; }
  // Adds `in` if it is the next of its creator; returns false if already known. A gap
  // (an interval whose predecessors are unknown) is a protocol violation: DecodeError.
  bool add(Interval in);
  // The intervals a rank with vector time `vt` lacks, oldest first per creator.
  std::vector<const Interval*> missing_for(const VectorTime& vt) const;
  // Intervals of rank p from index `from` on.
  std::vector<const Interval*> since(std::uint32_t p, std::uint32_t from) const;
  // Drops every interval (after garbage collection), keeping the counts.
  void clear();
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<std::vector<Interval>> per_;
  std::vector<std::uint32_t> base_;
  std::size_t bytes_ = 0;
};

// How `in` announces `page`: true as a whole page (written without a twin), false as a
// diff, none when it does not list the page.
std::optional<bool> written(const Interval& in, std::uint32_t page);

// True when notice a's interval happened before notice b's.
bool happened_before(const IntervalLog& log, const Notice& a, const Notice& b);

// The order in which to apply the changes of `notices` to one page: a linear extension of
// happened-before in which, among concurrent intervals, whole pages come before diffs (a
// whole page carries stale copies of the bytes a concurrent writer changed; that writer's
// diff, applied after, restores them). Deterministic.
std::vector<Notice> application_order(const IntervalLog& log, std::vector<Notice> notices);

}  // namespace dsm::proto
