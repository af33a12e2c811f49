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

// What the page counts below ask of a geometry, for the iterations [0, n) cut into pieces
// over which every section writes the same pages: a piece's first iteration may write pages
// no earlier one did, its others none, and all of them write the same pages, last written by
// the same rank. A loop of 200 000 short iterations writing 400 pages is then 400 pieces
// (more only where an iteration's pages span several), and the balancer, which weighs
// several candidate assignments against one geometry at every execution, walks pieces and
// spans instead of iterations.
class IterationPages {
 public:
  IterationPages(const Geometry& g, long n);
  long n = 0;
  bool known = false;  // g.known()

  std::size_t pieces() const { return start_.size() - 1; }
  long begin(std::size_t p) const { return start_[p]; }
  long end(std::size_t p) const { return start_[p + 1]; }
  long fresh(std::size_t p) const { return fresh_[p]; }    // pages no earlier iteration wrote
  int holder(std::size_t p) const { return holder_[p]; }   // g.holder of its iterations
  // The piece holding iteration k (0 <= k < n).
  std::size_t piece_of(long k) const;
  // Pages written both before and from iteration k, g.shared_at(k, n).
  long shared_at(long k) const;
  // The same for an iteration k of piece p, without looking the piece up.
  long shared_in(std::size_t p, long k) const { return k == start_[p] ? at_start_[p] : inside_[p]; }
  // Pages first written by the iterations [0, k).
  long fresh_before(long k) const;
  // Neighbouring pieces of one holder, merged: [begin, end) written to pages last written by
  // `holder` (-1: by nobody, or by different ranks).
  struct Held {
    long begin;
    long end;
    int holder;
  };
  const std::vector<Held>& held() const { return held_; }

 private:
  std::vector<long> start_;    // pieces' first iterations, then n
  std::vector<long> fresh_;    // per piece
  std::vector<int> holder_;    // per piece
  std::vector<long> at_start_; // per piece: shared_at(begin)
  std::vector<long> inside_;   // per piece: shared_at(k) for begin < k < end
  std::vector<long> fresh_sum_;  // fresh of the pieces before each piece, then the total
  std::vector<Held> held_;
};

// Iterations whose owner differs between `from` and `to`.
long iterations_moved(const Assignment& from, const Assignment& to, long n);
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
