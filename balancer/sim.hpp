// Simulator: drives the same decision code (next_execution) with modelled ranks, to compare
// policies at scales these machines cannot host. Ranks have a share of their core (1 when
// free, load_share while a competing load runs), every execution costs the slowest rank's
// time, and pages that change owner or are shared across a cut cost page_seconds each.
//
// With `take`, ranks also take work from each other inside an execution (affinity
// scheduling, Markatos and LeBlanc): each runs its spans in chunks of own_chunk_fraction of
// its block, cut at page boundaries of the written array; a rank with nothing left takes,
// from the tail of the rank that would finish last, as much as makes the two finish
// together, when that ends sooner than the victim would alone. A take costs take_seconds
// (claiming the chunk: a message round trip across hosts) plus the pages of the chunk the
// taker does not hold. The balancer between executions learns each rank's rate from what it
// ran of its own spans, as the runtime's figures would give it.
#pragma once

#include "model.hpp"
#include "pages.hpp"

#include <string>
#include <vector>

namespace dsm::lb {

enum class Load { none, constant, onoff, random };
Load parse_load(const std::string& name);  // none|constant|onoff|random; throws otherwise

struct SimConfig {
  int ranks = 8;
  long iterations = 16384;
  int executions = 300;
  Load load = Load::constant;
  double loaded_fraction = 0.125;  // share of ranks that carry a load (at least one)
  double load_share = 0.5;         // CPU share a loaded rank keeps (paper's load: half a core)
  int period = 40;                 // executions per on/off cycle (onoff, random)
  double noise = 0.02;             // relative timing noise, uniform +-
  double iteration_seconds = 10e-6; // cost of an iteration at full speed (mean, if triangular)
  bool triangular = false;         // iteration k costs 2k/n times the mean
  long row_bytes = 8192;           // bytes each iteration writes (pages follow from it)
  double page_seconds = 10e-6;
  unsigned seed = 1;
  bool take = false;               // take work inside an execution (see above)
  double take_seconds = 10e-6;     // cost of one take besides its pages
  Options options;                 // policy is set per run
};

struct SimResult {
  double efficiency;  // ideal time / simulated time, summed over executions
  long redistributions;
  long iterations_moved;
  long pages_moved;
  long takes = 0;             // chunks taken inside executions
  long iterations_taken = 0;
};

SimResult simulate(const SimConfig& config, Policy policy);

// A rank's own spans are run in chunks of this fraction of its block (at least a page's
// iterations): what a victim is running when a taker comes is not taken.
inline constexpr long own_chunks = 16;

// One execution of `a` on ranks with CPU shares `share`, where rank r runs its own spans at
// span_seconds[r][i] each (pages included). Returns the slowest rank's time, what each rank
// ran (its own iterations and those it took, in the order it ran them) and the takes.
struct ExecutionRun {
  double seconds = 0;
  std::vector<std::vector<Span>> ran;
  std::vector<std::vector<double>> ran_seconds;  // per chunk of `ran`
  long takes = 0, iterations_taken = 0;
};
ExecutionRun run_execution(const SimConfig& c, const Geometry& g, const Assignment& a,
                           const std::vector<double>& share, const std::vector<std::vector<double>>& span_seconds);

// The geometry simulate() uses: one array, row_bytes written per iteration, no holders yet.
Geometry sim_geometry(const SimConfig& c);

}  // namespace dsm::lb
