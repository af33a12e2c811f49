// The DSM_* environment of the ranks: what dsmrun tells each rank, and the names of every
// setting something reads, against which the user's are checked for misspellings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "options.hpp"

namespace dsm::launcher {

using Environment = std::vector<std::pair<std::string, std::string>>;

// What every rank of a job is told alike: where to join, with which token, over which
// libfabric provider.
struct JobContact {
  std::string rendezvous;  // host:port
  std::string token;
  std::string provider;
};

// What a rank is told of its own host.
struct RankPlace {
  int rank = 0;
  long host_ranks = 1;                    // the job's ranks on its host
  std::optional<std::size_t> host_cpus;   // the CPUs dsmrun may use, for ranks on its host
  std::string host;                       // as --hosts names it (empty: dsmrun's own host)
};

// The variables dsmrun sets for a rank, in order: its own DSM_* ones, then --lb's DSM_LB and
// the --env assignments, which a later one overrides.
Environment rank_environment(const Options& opt, const JobContact& job, const RankPlace& place);

// dsmrun sets `name` for each rank itself: --env may not override it.
bool set_for_each_rank(std::string_view name);

// The known setting `name` most likely misspells (a few edits away), or none.
std::string_view closest_setting(std::string_view name);

// Warns on stderr of every DSM_* variable in the environment or in `extra_env` (K=V) that
// nothing reads. A warning, not an error: the ranks still run, with the setting's default.
void warn_unknown_variables(const std::vector<std::string>& extra_env);

}  // namespace dsm::launcher
