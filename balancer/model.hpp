// Pure decision model of the load balancer: plain data shared by the policies, the runtime
// glue, the unit tests and the simulator. No clocks, no runtime, no globals.
//
// Iterations are numbered by index k = 0..n-1 (iteration i = lb + k*step), so the policies
// never see the step; to_ranges() turns index spans back into loop ranges.
#pragma once

#include <dsm/balancer.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dsm::lb {

// Iteration indices [begin, end).
struct Span {
  long begin;
  long end;
  long size() const { return end - begin; }
  bool operator==(const Span&) const = default;
};
// Spans of every rank, indexed by rank; each rank's spans sorted and disjoint, and no
// iteration in two ranks' spans.
using Assignment = std::vector<std::vector<Span>>;

// What one rank measured in one execution: per span (same order as its spans), the time
// it took (wall time, or for a rank sharing its core, its CPU time at the share of the core
// it gets) and the thread CPU time spent inside it.
struct RankFigures {
  std::vector<double> wall;
  std::vector<double> cpu;
  // Wall seconds from the start of the rank's execution before the measured one to the start
  // of the measured one (0: unknown): all that execution cost, the loops after it and the
  // barriers included, which is where the page traffic of a change shows.
  double period = 0;
  // The rank's core is also another program's (it counts on a share of it): its slowness has
  // a known cause, not one of the machine's short swings.
  bool core_shared = false;
  // CPU seconds the rank spent inside the ranges of every loop over the same period (0:
  // unknown): all the work it did there, against which the period shows what the split's
  // pages and waits added.
  double step_cpu = 0;
  // The spans the rank ran where work was taken inside the execution (its own and those it
  // took, normalized; wall and cpu are per span of them); empty: the spans it was given.
  std::vector<Span> ran{};
  // The share of its core the rank's thread got over about the last half second of its
  // running: CPU time over CPU time plus waiting for the core (1: all of it, or not
  // measured). Beside one other busy program it is about a half, beside three a quarter,
  // where the speeds measured at that share cannot tell them apart.
  double share = 1;
};

struct Options {
  Policy policy = Policy::automatic;
  int warmup = 10;          // executions observed before the first change (paper: 10)
  double threshold = 0.10;  // change only if slowest > (1 + threshold) * fastest (paper: 10 %)
  int settle = 3;           // consecutive out-of-balance executions needed for a change (the
                            // first execution after a change is discarded)
  // ... lasting at least this long (seconds of the site's executions): a machine's cores
  // swing in speed for tens to hundreds of milliseconds (other virtual machines on the host),
  // which a loop of 1-4 ms executions otherwise took for a load, moving pages for nothing.
  double evidence = 0.5;
  bool filter = true;       // asymmetric rate filter (Siegell's thesis, table 5.1)
  bool cost_benefit = true; // page transfer cost against time saved
  bool learn_change_cost = true;  // time the executions after a change to learn what changes cost and save
  double min_move = 0.02;   // smallest change worth making, as a fraction of a mean share
  // A rank whose core another program shares and whose speed falls below this fraction of
  // the fastest rank's leaves the computation (no iterations) until its core is its own
  // again; 0: never.
  double leave = 0.2;
  // ... and whose thread gets at most this share of its core (RankFigures::share): beside
  // one other busy program a rank keeps about half of its core and holds a barrier up by a
  // time slice whether it runs its share or nothing (leaving made Jacobi's executions slower
  // there, and in some hours it left in most runs); beside more, less. Jacobi's loaded rank
  // got 0.37-0.68 (median 0.54-0.58) beside one busy loop, 0.28-0.53 (0.44) beside two,
  // 0.23-0.52 (0.39-0.42) beside three: a reading this low says more than one. 1: the speed
  // alone decides.
  double leave_share = 0.35;
  // Try a loop on one rank alone where its periods cost far more than all the ranks' work in
  // them, and keep it there if that runs faster (decide.cpp, "solo").
  bool solo = true;
  // Runtime glue only: access descriptors used to cut protocol cost (docs/design.md, "What the
  // hardware costs").
  bool prefetch = true;    // fetch the read sections of this rank's ranges in bulk
  bool bulk_write = true;  // open the write sections in bulk before the loop
  bool exclusive = true;   // claim pages that only one rank writes (no twins, no diffs)
  // Ranks of one host take chunks from the tail of a lagging rank's block inside an
  // execution (balancer/runtime/take.cpp); what each ran becomes the next split. Where it
  // pays: where the pages that may change hands cost little beside an execution.
  enum class Take { never, where_it_pays, always } take = Take::where_it_pays;
  int horizon = 10;         // fewest executions over which a saving is counted (t_stable)
  // Fraction of its share of a core that other programs also use which a rank's short ranges
  // (a few milliseconds to the next barrier) can count on: the share is a long-run average,
  // and the other program keeps the core for a whole time slice at a time. Ranges of 10 ms
  // and more count on all of it.
  double headroom = 0.6;
  int trace = 0;  // runtime glue: 1 prints every change of a loop's ranges, 2 every execution
  // A fixed split: rank r's share of every loop's work, summing to 1, cut where the policy
  // cuts and never changed (the yardstick the balancer is judged by, in the same program).
  // Empty: none.
  std::vector<double> shares;
};

// Reads the options from environment-style values (nullptr = unset): DSM_LB, DSM_LB_WARMUP,
// DSM_LB_THRESHOLD, DSM_LB_FILTER, DSM_LB_COST_BENEFIT, DSM_LB_CHANGE_COST, DSM_LB_EVIDENCE, DSM_LB_MIN_MOVE, DSM_LB_LEAVE, DSM_LB_LEAVE_SHARE, DSM_LB_HEADROOM,
// DSM_LB_PREFETCH, DSM_LB_BULK_WRITE, DSM_LB_EXCLUSIVE, DSM_LB_SOLO (the 0/1 switches default to 1), DSM_LB_TAKE (0, 1 or always), DSM_LB_TRACE,
// DSM_LB_SHARES (positive weights, one per rank, comma-separated). Throws std::invalid_argument
// naming the variable on a bad value.
Options options_from(const std::function<const char*(const char*)>& getenv_fn);

// Ranks out of the computation (A-MPI, seed 001, chapter 4): a rank in whose core another
// program shares (`shared`), whose speed is below `fraction` of the fastest rank in and whose
// share of its core (`got`, RankFigures::share; missing entries: unknown, no bar) is at
// most `below` leaves; a rank out comes back when its core is its own again. Updates `left` (one
// entry per speed); the same figures give the same turns on every rank.
struct Turns {
  int departures = 0, returns = 0;
};
Turns update_left(std::vector<char>& left, const std::vector<double>& speed, const std::vector<char>& shared,
                  double fraction, const std::vector<double>& got = {}, double below = 1);

// Equal blocks of n iterations over p ranks (what a naive compiler produces).
Assignment equal_blocks(long n, int p);
// Loop ranges of one rank's spans for the loop lb, lb+step, ... < ub.
std::vector<Range> to_ranges(const std::vector<Span>& spans, long lb, long ub, long step);
// Number of iterations of lb, lb+step, ... below ub (0 if empty); throws on step <= 0 and on
// more iterations than a long counts.
long iteration_count(long lb, long ub, long step);
// Iteration k of lb, lb+step, ... below ub (lb < ub), or ub where it would pass ub. Exact
// where `k * step` does not fit in a long (lb < 0), as in a loop from LONG_MIN.
long iteration_at(long lb, long ub, long step, long k);
// Sorts, drops empty spans and merges touching ones.
void normalize(std::vector<Span>& spans);
// The spans of a loop lb, lb+step, ... (n iterations) that runs each iteration value v on the
// rank that runs value v in a leader loop (leader_lb, leader_step, leader_n iterations,
// spread by `leader`, which covers them); values outside the leader's go with its first or
// last iteration. Costs O(spans x log n): runtime glue calls it at every execution.
Assignment follow_spans(const Assignment& leader, long leader_lb, long leader_step, long leader_n, long lb,
                        long step, long n);

}  // namespace dsm::lb
