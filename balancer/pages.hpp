// Written-page geometry of a loop, from its affine write descriptors: which pages each
// iteration writes, where a cut between iterations shares no page, and which pages change
// hands between two assignments. Pure arithmetic on addresses; the runtime supplies the
// last writer of each page (`holders`).
#pragma once

#include "model.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace dsm::lb {

inline constexpr long page_bytes = 4096;

// One affine write section in index space: iteration k writes bytes
// [base + (coef*(lb + k*step) + lo)*elem, base + (coef*(lb + k*step) + hi + 1)*elem).
struct WriteSection {
  std::int64_t base = 0;
  std::int64_t elem = 1;
  long coef = 0;
  long lo = 0;
  long hi = 0;
  // Last writer of page holder_origin + j is holders[j] (-1: none; outside: unknown).
  long holder_origin = 0;
  std::vector<int> holders;
  bool operator==(const WriteSection&) const = default;
};

struct PageRange {
  long first;
  long last;  // inclusive; first > last when empty
};

struct Geometry {
  long lb = 0;
  long step = 1;
  std::vector<WriteSection> sections;
  bool known() const { return !sections.empty(); }
  bool operator==(const Geometry&) const = default;

  // Pages section s writes at iteration index k.
  PageRange pages(std::size_t s, long k) const;
  // Pages section s touches over the whole index range [0, n) (hull).
  PageRange hull(std::size_t s, long n) const;
  // Pages written both by some iteration < k and some iteration >= k (0 = page-aligned cut).
  long shared_at(long k, long n) const;
  // Last writer of the pages written at index k when all agree, -1 otherwise.
  int holder(long k) const;
  // Pages (counted once) each iteration writes that an earlier iteration did not.
  std::vector<long> new_pages(long n) const;
};

// Which rank wrote which pages in earlier executions of every site, as runs of pages. The
// balancer keeps it from the assignments themselves, so it is the same on every rank.
struct WriterRuns {
  std::map<long, std::pair<long, int>> runs;  // first page -> (last page, writer)
};
void record_writer(WriterRuns& w, long first, long last, int writer);
// Writer of each page of [first, last] (-1: none recorded).
std::vector<int> writers_of(const WriterRuns& w, long first, long last);

// Owner of each iteration index under an assignment.
std::vector<int> owners(const Assignment& a, long n);

// What the page counts below ask of a geometry at each iteration of [0, n), found in one
// walk of its sections: the balancer weighs several candidate assignments against the same
// geometry in one execution, and each count is then a walk of n entries.
struct IterationPages {
  IterationPages(const Geometry& g, long n);
  long n = 0;
  bool known = false;        // g.known()
  std::vector<long> fresh;   // g.new_pages(n)
  std::vector<int> holder;   // g.holder(k)
  std::vector<long> shared;  // g.shared_at(k, n), for k in [0, n]
};

// Written pages that change owner from `from` to `to` (estimated per iteration).
long pages_moved(const IterationPages& t, const Assignment& from, const Assignment& to);
// Written pages whose last writer (holders) is another rank than their owner under `a`.
long conflicts(const IterationPages& t, const Assignment& a);
// Pages written by more than one rank under `a`.
long shared_pages(const IterationPages& t, const Assignment& a);

// The same counts per rank, each page counted for both ranks it passes between (the one
// that fetches it and the one that serves it, or both writers of a shared page). Ranks move
// pages concurrently, so what a change or an execution costs in page traffic is the busiest
// rank's count, not the sum over ranks (which grows with the number of ranks).
std::vector<long> pages_moved_by_rank(const IterationPages& t, const Assignment& from, const Assignment& to);
// Per execution: shared pages, and with `recurring` the conflicts too.
std::vector<long> page_traffic_by_rank(const IterationPages& t, const Assignment& a, bool recurring);

}  // namespace dsm::lb
