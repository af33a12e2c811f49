// Runtime glue of the balancer (compiled into libdsm): Site and redistribute() on top of the
// pure decision code. Figures travel in the barrier blobs, so every rank decodes the same
// bytes and computes the same assignment without messages of its own. The steps live beside
// this file: measure.cpp (timing ranges, publishing figures), figures.cpp (what barriers
// carry), follow.cpp (loops that write the same rows), apply.cpp (pages, prefetch, claims)
// and stats.cpp (trace lines, statistics).
#include "glue.hpp"

#include <dsm/dsm.hpp>

#include "runtime/runtime_hooks.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>
#include <vector>

namespace dsm::lb {

namespace runtime {

Glue& glue() {
  static Glue g;
  return g;
}

const Options& run_options() {
  static const Options opts = [] {
    try {
      return options_from([](const char* k) -> const char* { return std::getenv(k); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dsm: %s\n", e.what());
      std::exit(2);
    }
  }();
  return opts;
}

// The rank most other sites run alone on (the lowest of equals), -1 where none does. Every
// rank holds the same sites in the same stages, so every rank finds the same.
int rank_alone_elsewhere(const Site::State& st, int nranks) {
  using Stage = SiteModel::Solo::Stage;
  std::vector<int> loops(static_cast<std::size_t>(nranks));
  for (const Site::State* other : glue().sites) {
    const SiteModel::Solo& s = other->model.solo;
    if (other != &st && (s.stage == Stage::alone || s.stage == Stage::trying) && s.rank >= 0 && s.rank < nranks)
      ++loops[static_cast<std::size_t>(s.rank)];
  }
  const auto most = std::max_element(loops.begin(), loops.end());
  return *most > 0 ? static_cast<int>(most - loops.begin()) : -1;
}

}  // namespace runtime

using namespace runtime;

Site::Site(std::string name, std::optional<Policy> policy) : state_(std::make_unique<State>()) {
  state_->id = site_id(name);
  state_->name = std::move(name);
  state_->requested = policy;
  glue().sites.push_back(state_.get());
  detail::set_stats_section_hook(stats_json);
}

Site::~Site() {
  if (state_->follows) state_->follows->group.erase(state_->id);
  for (State* other : glue().sites)
    if (other->follows == state_.get()) other->follows = nullptr;
  std::erase(glue().sites, state_.get());
  std::erase_if(glue().leaders, [&](const auto& kv) { return kv.second == state_.get(); });
}

Plan redistribute(Site& site, long lb, long ub, long step, std::span<const Section> accesses) {
  const long n = iteration_count(lb, ub, step);
  Site::State& st = site.state();
  if (!detail::joined()) {
    // Every rank would run the whole loop, on shared arrays that do not exist yet or any more.
    std::fprintf(stderr, "dsm: loop %s runs outside the job: parallel loops run between dsm::init and dsm::finalize\n",
                 st.name.c_str());
    std::exit(2);
  }
  if (const Site::State* outer = glue().running) {
    runtime::stop_rank("loop " + st.name + " starts inside an iteration of loop " + outer->name +
                       " (from a function it calls): parallel loops cannot be nested, each rank would run only its "
                       "part of the inner loop; mark only the outer one");
  }
  const int nranks = nprocs(), me = rank();
  st.lb = lb, st.ub = ub, st.step = step;
  const Options& opts = run_options();  // a bad setting is refused at one rank too
  if (!opts.shares.empty() && opts.shares.size() != static_cast<std::size_t>(nranks)) {
    std::fprintf(stderr, "dsm: DSM_LB_SHARES gives %zu weights for a job of %d ranks: give one per rank\n",
                 opts.shares.size(), nranks);
    std::exit(2);
  }
  if (nranks <= 1) {
    ++st.model.executions;
    ++st.execution;
    return Plan(site, n > 0 ? std::vector<Range>{{lb, ub, step}} : std::vector<Range>{});
  }
  if (!st.resolved) {
    bool affine = false, whole = false;
    for (const Section& s : accesses)
      if (writes(s)) (s.whole ? whole : affine) = true;
    st.model.opt = opts;
    st.model.opt.policy =
        resolve_policy(st.requested.value_or(opts.policy), affine, whole);
    st.resolved = true;
  }
  detail::set_barrier_hook([] { harvest(glue()); });
  harvest(glue());  // every barrier's figures, whichever site runs after it
  const double now = wtime();
  st.period = st.started > 0 ? now - st.started : 0;
  st.step_cpu = st.started > 0 ? glue().cpu_in_ranges - st.cpu_at_start : 0;
  st.cpu_at_start = glue().cpu_in_ranges;
  st.started = now;
  st.started_before = st.started_at;
  st.started_at = ++glue().starts;
  Site::State* leader = leader_of(st, follow_key(accesses, lb, step));
  const bool follow = takes_leaders_ranges(st, *leader, nranks);
  std::vector<RankFigures> figs;
  bool have = false;
  double page_seconds = 0, shared_seconds = 0;
  if (st.execution > 0 && !follow) have = gather_figures(st, figs, page_seconds, shared_seconds);
  // What ranks took from each other is the split measured, and the next one's start.
  const Assignment decided = have && st.took && me == 0 && trace_csv_on() ? st.model.assign : Assignment{};
  if (have && st.took && adopt_taken(st, figs)) refresh_followers(st);
  const Geometry g = decision_geometry(st, accesses, n, have && st.model.opt.policy == Policy::locality);
  if (st.follows && st.follows != leader) st.follows->group.erase(st.id);
  // A site that followed holds the leader's ranges but no figures or tables of its own: back
  // to deciding for itself, it starts as a site that never ran (next_execution starts it).
  if (st.follows && !follow) st.model.n = -1;
  st.follows = follow ? leader : nullptr;
  Site::State& head = follow ? *leader : st;
  if (follow) follow_leader(st, *leader, accesses, lb, step, n);
  if (!follow && st.model.opt.policy != Policy::static_blocks)
    set_costs(st.model, row_costs(st, accesses, lb, step, n, nranks));
  const long moves_before = st.model.redistributions;
  const bool csv = me == 0 && !follow && have && trace_csv_on();
  const Assignment ran = csv ? st.model.assign : Assignment{};
  st.model.solo.prefer = rank_alone_elsewhere(st, nranks);
  const Assignment& a = follow ? st.model.assign : next_execution(st.model, n, nranks, have ? &figs : nullptr, g, page_seconds, shared_seconds);
  const bool moved = st.model.redistributions != moves_before;
  if (moved && !follow) refresh_followers(st);
  if (trace_level() > 0 && me == 0 && !follow && have && (trace_level() > 1 || moved)) trace(st, figs, moved);
  if (csv) trace_csv(st, decided, ran, figs, moved);
  ++st.execution;
  st.took = takes_work(st, accesses, follow, nranks);
  glue().lastprivate = false;
  std::optional<std::vector<Run>> written = written_runs(accesses, a, lb, ub, step);
  std::vector<Run> exclusive = written ? exclusive_runs(*written, head.group, st.id) : std::vector<Run>{};
  head.group[st.id].runs = written ? std::move(*written) : std::vector<Run>{};
  std::unique_ptr<Plan::Taking> taking;
  std::vector<Run> tail_pages;
  if (st.took) {
    Chunks chunks = cut_chunks(a, accesses);
    tail_pages = written_runs(accesses, tails(chunks), lb, ub, step).value_or(std::vector<Run>{});
    st.took = take_pays(st.model, chunks, tail_pages);
    if (st.took) {
      exclusive = without_pages(exclusive, tail_pages);
      taking = start_taking(std::move(chunks), accesses, lb, ub, step, glue().starts, st.model);
    } else {
      tail_pages.clear();
    }
  }
  record_writes(exclusive);
  std::vector<Range> mine = to_ranges(a[me], lb, ub, step);
  if (opts.exclusive) claim_exclusive(exclusive);
  contest(tail_pages, nranks);
  promise_reads(accesses, mine);
  prefetch_sections(accesses, a, lb, ub, step, me, opts, st.reads_fetched);
  expect_moving_reads(accesses, a, lb, ub, step, me, opts, head.group[st.id].runs, st.reads_of);
  if (opts.prefetch) prefetch_sparse(st, accesses, mine);
  return taking ? Plan(site, std::move(taking)) : Plan(site, std::move(mine));
}

}  // namespace dsm::lb
