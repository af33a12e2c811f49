// The figures every rank publishes with its barrier arrivals: kept per site until the site
// runs again, after checking that every rank ran the same loops with the same bounds.
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace dsm::lb::runtime {
namespace {

std::string rank_list(const std::vector<std::size_t>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Ranks that ran different loops, or a loop with different bounds, between two barriers
// would split different iteration spaces: part of a loop would run twice and part never,
// silently. Each rank's figures list the loops it ran since the barrier before (a loop run
// several times there, its last execution), so the barrier after the loop tells; every rank
// sees the same figures, so all stop. A rank names a loop it never ran by its id.
void check_same_loops(const std::vector<std::optional<Published>>& published) {
  std::map<std::uint64_t, std::vector<const SiteFigures*>> by_site;
  for (std::size_t r = 0; r < published.size(); ++r)
    for (const SiteFigures& f : published[r]->sites) {
      auto& per_rank = by_site[f.site];
      per_rank.resize(published.size());
      per_rank[r] = &f;
    }
  for (const auto& [id, per_rank] : by_site) {
    std::vector<std::size_t> ran, skipped;
    for (std::size_t r = 0; r < per_rank.size(); ++r) (per_rank[r] ? ran : skipped).push_back(r);
    const SiteFigures& a = *per_rank[ran.front()];
    std::string why;
    if (!skipped.empty()) {
      why = "ran on " + rank_list(ran) + " but not on " + rank_list(skipped) +
            " between two barriers: a parallel loop must run on every rank (one inside `if (dsm::rank() == "
            "...)` runs only those ranks' parts of it)";
    } else {
      for (std::size_t r : ran) {
        const SiteFigures& b = *per_rank[r];
        char buf[320];
        if (b.execution != a.execution) {
          std::snprintf(buf, sizeof buf,
                        "ran a different number of times on different ranks (rank %zu: %llu times so far, rank %zu: "
                        "%llu): every rank must run a parallel loop as often",
                        ran.front(), static_cast<unsigned long long>(a.execution), r,
                        static_cast<unsigned long long>(b.execution));
        } else if (a.lb != b.lb || a.ub != b.ub || a.step != b.step) {
          std::snprintf(buf, sizeof buf,
                        "ran with different bounds on different ranks (execution %llu: rank %zu [%lld, %lld) step "
                        "%lld, rank %zu [%lld, %lld) step %lld): a parallel loop's bounds must be the same on every "
                        "rank",
                        static_cast<unsigned long long>(a.execution), ran.front(), static_cast<long long>(a.lb),
                        static_cast<long long>(a.ub), static_cast<long long>(a.step), r, static_cast<long long>(b.lb),
                        static_cast<long long>(b.ub), static_cast<long long>(b.step));
        } else {
          continue;
        }
        why = buf;
        break;
      }
    }
    if (why.empty()) continue;
    std::string name;
    for (const Site::State* st : glue().sites)
      if (st->id == id) name = st->name;
    if (name.empty()) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "#%016llx", static_cast<unsigned long long>(id));
      name = hex;
    }
    stop_rank("loop " + name + " " + why);
  }
}

}  // namespace

void stop_rank(const std::string& why) {
  const std::string line = "dsm: rank " + std::to_string(rank()) + ": " + why + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::exit(1);
}

// The runtime keeps only the last barrier's blobs: called after every barrier (the barrier
// hook) once this rank has run a loop.
void harvest(Glue& g) {
  const std::uint64_t now = detail::barrier_count();
  if (now == g.harvested_barrier) return;
  g.harvested_barrier = now;
  const auto& blobs = detail::barrier_blobs();
  std::vector<std::optional<Published>> published(blobs.size());
  bool complete = true;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (!blobs[r].empty()) published[r] = decode_figures(blobs[r]);
    else published[r] = Published{};
    complete &= published[r].has_value();
  }
  // A malformed blob (that rank's figures stay old: no site sees a full set) leaves nothing
  // to compare.
  if (complete) check_same_loops(published);
  std::vector<double> page_seconds, shared_seconds;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    if (!published[r]) continue;
    if (published[r]->page_seconds > 0) page_seconds.push_back(published[r]->page_seconds);
    if (published[r]->shared_seconds > 0) shared_seconds.push_back(published[r]->shared_seconds);
    for (const SiteFigures& f : published[r]->sites) {
      auto& per_rank = g.received[f.site];
      per_rank.resize(blobs.size());
      per_rank[r] = f;
    }
  }
  // The median rank's: a rank on a crowded core waits longer for every page, but the cost
  // that decides whether moving work pays is the typical one.
  const auto median_into = [](std::vector<double>& v, double& into) {
    if (v.empty()) return;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    into = v[v.size() / 2];
  };
  median_into(page_seconds, g.page_seconds);
  median_into(shared_seconds, g.shared_seconds);
}

bool gather_figures(const Site::State& st, std::vector<RankFigures>& out, double& page_seconds, double& shared_seconds) {
  Glue& g = glue();
  const auto it = g.received.find(st.id);
  if (it == g.received.end()) return false;
  const auto& per_rank = it->second;
  if (per_rank.size() != static_cast<std::size_t>(nprocs())) return false;
  out.clear();
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const SiteFigures& b = per_rank[r];
    if (b.site != st.id || b.execution != st.execution) return false;
    out.push_back(b.figures);
  }
  page_seconds = g.page_seconds;
  shared_seconds = g.shared_seconds;
  return !out.empty();
}

}  // namespace dsm::lb::runtime
