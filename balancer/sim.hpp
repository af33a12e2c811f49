// Simulator: drives the same decision code (next_execution) with modelled ranks, to compare
// policies at scales these machines cannot host. Ranks have a share of their core (1 when
// free, load_share while a competing load runs), every execution costs the slowest rank's
// time, and pages that change owner or are shared across a cut cost page_seconds each.
#pragma once

#include "model.hpp"

#include <string>

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
  Options options;                 // policy is set per run
};

struct SimResult {
  double efficiency;  // ideal time / simulated time, summed over executions
  long redistributions;
  long iterations_moved;
  long pages_moved;
};

SimResult simulate(const SimConfig& config, Policy policy);

}  // namespace dsm::lb
