#include "settings.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace dsm::launcher {

namespace {

// Every DSM_* variable that something reads: the runtime and the job (dsm/src), the balancer
// (balancer/model.cpp), dsmc++, and the test scripts. Any other DSM_* name is most likely a
// misspelling, which would otherwise be ignored in silence.
constexpr std::string_view known_variables[] = {
    "DSM_RANK", "DSM_SIZE", "DSM_RENDEZVOUS", "DSM_TOKEN", "DSM_PROVIDER", "DSM_HOST_RANKS",
    "DSM_HOST_CPUS", "DSM_POLL_US", "DSM_WRITE_AHEAD", "DSM_GC_BOUND", "DSM_BARRIER_FANOUT", "DSM_BARRIER_EXCHANGE", "DSM_DIRECT_PUSH", "DSM_REGION_SIZE",
    "DSM_REGION_BASE", "DSM_POPULATE", "DSM_HEAP_STEP", "DSM_DIFF_KERNEL", "DSM_LB", "DSM_LB_WARMUP",
    "DSM_LB_THRESHOLD", "DSM_LB_EVIDENCE", "DSM_LB_MIN_MOVE", "DSM_LB_LEAVE", "DSM_LB_LEAVE_SHARE", "DSM_LB_HEADROOM", "DSM_LB_FILTER",
    "DSM_LB_COST_BENEFIT", "DSM_LB_CHANGE_COST", "DSM_LB_PREFETCH", "DSM_LB_BULK_WRITE",
    "DSM_LB_EXCLUSIVE", "DSM_LB_SOLO", "DSM_LB_TAKE", "DSM_LB_SHARES", "DSM_LB_TRACE", "DSM_LB_TRACE_CSV", "DSM_PIPE_GRAIN", "DSM_CXX", "DSM_SANITIZE_BUILD_TYPE", "DSM_TEST_TIME_SCALE",
    "DSM_EXPECT_MARKER", "DSM_TEST_HOST", "DSM_LIVENESS", "DSM_HOST"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

Environment rank_environment(const Options& opt, const JobContact& job, const RankPlace& place) {
  Environment env = {{"DSM_RANK", std::to_string(place.rank)}, {"DSM_SIZE", std::to_string(opt.n)},
                     {"DSM_RENDEZVOUS", job.rendezvous}, {"DSM_TOKEN", job.token}, {"DSM_PROVIDER", job.provider}};
  env.emplace_back("DSM_HOST_RANKS", std::to_string(place.host_ranks));
  if (place.host_cpus) env.emplace_back("DSM_HOST_CPUS", std::to_string(*place.host_cpus));
  if (!place.host.empty()) env.emplace_back("DSM_HOST", place.host);  // names it in messages
  if (!opt.lb.empty()) env.emplace_back("DSM_LB", opt.lb);
  if (!opt.lb_trace.empty()) env.emplace_back("DSM_LB_TRACE_CSV", opt.lb_trace);
  if (opt.liveness) env.emplace_back("DSM_LIVENESS", std::to_string(*opt.liveness));
  for (const auto& kv : opt.env) {
    const auto eq = kv.find('=');
    env.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

bool set_for_each_rank(std::string_view name) {
  for (const std::string_view own : {"DSM_RANK", "DSM_SIZE", "DSM_TOKEN", "DSM_RENDEZVOUS", "DSM_HOST_RANKS", "DSM_HOST"})
    if (name == own) return true;
  return false;
}

std::string_view closest_setting(std::string_view name) {
  std::string_view closest;
  std::size_t best = 3;  // more edits than this is another name, not a misspelling
  for (const auto known : known_variables)
    if (const std::size_t d = edit_distance(name, known); d < best) best = d, closest = known;
  return closest;
}

void warn_unknown_variables(const std::vector<std::string>& extra_env) {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) names.emplace_back(*e, std::strcspn(*e, "="));
  for (const auto& kv : extra_env) names.push_back(kv.substr(0, kv.find('=')));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& name : names) {
    if (name.rfind("DSM_", 0) != 0 ||
        std::find(std::begin(known_variables), std::end(known_variables), name) != std::end(known_variables))
      continue;
    const std::string_view closest = closest_setting(name);
    std::fprintf(stderr,
                 "dsmrun: warning: nothing reads %s%s%.*s%s (the settings are listed in docs/usage.md, "
                 "section Settings)\n",
                 name.c_str(), closest.empty() ? "" : "; did you mean ", int(closest.size()), closest.data(),
                 closest.empty() ? "" : "?");
  }
}

}  // namespace dsm::launcher
