// One rank alone: a loop whose split costs far more than its work is tried on one rank and
// kept there only where that measured faster. Synthetic executions: iterations of fixed CPU
// cost, and a period that adds what the split (or one rank alone) costs besides the work.
#include <catch2/catch.hpp>

#include "decide.hpp"

#include <algorithm>

using namespace dsm::lb;

namespace {

constexpr double per_iteration = 1e-6;  // CPU seconds

struct SoloRun {
  SiteModel m;
  std::vector<RankFigures> figs;
  bool first = true;
  double period = 0;         // of the execution before the last (the figures carry it)
  std::vector<double> work;  // each rank's CPU over that period
  std::vector<char> shared;  // per rank: another program shares its core
  Geometry g;                // what the iterations write (none known: pages cost nothing)
  double page_s = 0;         // what a page costs to move (0: the balancer's default)
};

bool alone(const Assignment& a) {
  return std::count_if(a.begin(), a.end(), [](const std::vector<Span>& s) { return !s.empty(); }) == 1;
}

// One execution of n iterations on `ranks` ranks: a split's period is its slowest rank's work
// plus `split_extra` seconds, one rank alone's its work plus `alone_extra`, and its ranges
// take `alone_wall` times their CPU time (pages fetched inside them). As in the runtime, the
// figures of an execution carry the period (and work) of the one before it.
const Assignment& execute(SoloRun& run, long n, int ranks, double split_extra, double alone_extra, double alone_wall = 1) {
  const Assignment& a = next_execution(run.m, n, ranks, run.first ? nullptr : &run.figs, run.g, run.page_s);
  run.first = false;
  std::vector<double> cpu(static_cast<std::size_t>(ranks), 0.0);
  std::vector<RankFigures> figs(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < a.size(); ++r) {
    for (const Span& s : a[r]) {
      const double t = static_cast<double>(s.end - s.begin) * per_iteration;
      figs[r].cpu.push_back(t);
      figs[r].wall.push_back(alone(a) ? t * alone_wall : t);
      cpu[r] += t;
    }
    figs[r].period = run.period;
    figs[r].step_cpu = r < run.work.size() ? run.work[r] : 0;
    figs[r].core_shared = r < run.shared.size() && run.shared[r];
  }
  run.figs = std::move(figs);
  run.period = *std::max_element(cpu.begin(), cpu.end()) + (alone(a) ? alone_extra : split_extra);
  run.work = cpu;
  return a;
}

}  // namespace

TEST_CASE("a loop whose split costs more than one rank's work runs on one rank alone") {
  SoloRun run;
  const long n = 1000;  // 1 ms of work
  bool tried = false;
  for (int e = 0; e < 100; ++e) tried = alone(execute(run, n, 2, 4e-3, 0.2e-3)) || tried;
  REQUIRE(tried);
  CHECK(run.m.verdict == Verdict::alone);
  for (int e = 0; e < 200; ++e) REQUIRE(alone(execute(run, n, 2, 4e-3, 0.2e-3)));
  CHECK(run.m.assign[0] == std::vector<Span>{{0, n}});  // equal blocks: the lowest rank keeps its pages
  SECTION("new bounds stay on that rank") {
    for (long k = 0; k < 50; ++k) {
      const Assignment& a = execute(run, n - k, 2, 4e-3, 0.2e-3);
      REQUIRE(a[0] == std::vector<Span>{{0, n - k}});
      REQUIRE(a[1].empty());
    }
  }
  SECTION("another program on its core brings the split back") {
    run.shared = {1, 0};
    execute(run, n, 2, 4e-3, 0.2e-3);
    const Assignment& a = execute(run, n, 2, 4e-3, 0.2e-3);
    CHECK_FALSE(alone(a));
  }
}

TEST_CASE("a loop goes alone on the rank other loops run alone on, not on its own busiest") {
  // Gramschmidt's two loops: one writes the column the other reads. Alone on two ranks, that
  // column moved between them at every step.
  for (const int other : {1, 2}) {
    CAPTURE(other);
    SoloRun run;
    run.m.solo.prefer = other;
    const long n = 1000;
    int first_trial = -1;
    for (int e = 0; e < 100 && first_trial < 0; ++e)
      if (alone(execute(run, n, 3, 4e-3, 0.2e-3))) first_trial = e;
    REQUIRE(first_trial >= 0);
    CHECK(run.m.solo.rank == other);
    CHECK(run.m.assign[static_cast<std::size_t>(other)] == std::vector<Span>{{0, n}});
  }
}

TEST_CASE("a trial on one rank that measures slower goes back to the split, and comes again later") {
  SoloRun run;
  const long n = 1000;
  int trial_executions = 0, first_trial = -1, second_trial = -1;
  for (int e = 0; e < 1600; ++e) {
    const bool one = alone(execute(run, n, 2, 4e-3, 8e-3));  // alone costs more than the split
    if (!one) continue;
    ++trial_executions;
    if (first_trial < 0) first_trial = e;
    else if (second_trial < 0 && e > first_trial + 100) second_trial = e;
  }
  REQUIRE(first_trial >= 0);
  CHECK(trial_executions < 30);  // a few per trial
  REQUIRE(second_trial > 0);
  CHECK(second_trial - first_trial >= solo_retry);
  CHECK_FALSE(alone(run.m.assign));
}

TEST_CASE("a trial that lost gives back the split it left, at the speeds measured before it") {
  // The rank alone fetches every page inside its ranges: taken for its speed, its trial
  // would send most rows to the other rank.
  SoloRun run;
  const long n = 1000;
  Assignment before;
  for (int e = 0; e < 400 && before.empty(); ++e) {
    const Assignment last = run.m.assign;
    if (alone(execute(run, n, 2, 4e-3, 8e-3, 5.0))) before = last;
  }
  REQUIRE_FALSE(before.empty());
  for (int e = 0; e < 40 && alone(run.m.assign); ++e) execute(run, n, 2, 4e-3, 8e-3, 5.0);
  REQUIRE_FALSE(alone(run.m.assign));
  CHECK(run.m.assign == before);
  const std::vector<double> power = relative_power(run.m);  // equal speeds, as before the trial
  REQUIRE(power.size() == 2);
  CHECK(power[0] == Approx(0.5).epsilon(0.05));
}

TEST_CASE("a trial is made only where the split's excess over the horizon could pay for its pages") {
  // Iteration k writes page k: the rank alone would fetch 500 pages and, losing, give them
  // back. The split's periods run 3.5 ms beyond the ranks' 1 ms of work.
  for (const double page_s : {1e-6, 1e-3}) {
    CAPTURE(page_s);
    SoloRun run;
    run.g.sections.push_back(WriteSection{0, 4, 1024, 0, 1023, 0, {}});
    run.page_s = page_s;
    int first_trial = -1;
    for (int e = 0; e < 200 && first_trial < 0; ++e)
      if (alone(execute(run, 1000, 2, 4e-3, 0.2e-3))) first_trial = e;
    if (page_s < 1e-5) CHECK((first_trial >= 0 && first_trial < 100));
    else CHECK(first_trial < 0);  // 1 s of pages against 3.5 ms an execution over ~200 executions
  }
}

TEST_CASE("another program's load leaves the split to the balancer") {
  SoloRun run;
  run.shared = {0, 1};
  for (int e = 0; e < 300; ++e) REQUIRE_FALSE(alone(execute(run, 1000, 2, 4e-3, 0.2e-3)));
}

TEST_CASE("a stall of the machine shorter than the solo window puts no loop on trial") {
  // Periods of 12 ms where the work takes 1 ms for 30 executions (the machine gave the ranks
  // no core for a while: a median of 8 periods took it for the split's cost), then the split's
  // usual 1.5 ms.
  const auto tried = [](int stalled) {
    SoloRun run;
    bool one = false;
    for (int e = 0; e < 400; ++e) {
      const bool stall = e >= 100 && e < 100 + stalled;
      one = alone(execute(run, 1000, 2, stall ? 11e-3 : 0.5e-3, 0.2e-3)) || one;
    }
    return one;
  };
  CHECK_FALSE(tried(30));
  CHECK(tried(200));  // one that lasts is the split's to weigh
}

TEST_CASE("a loop whose split costs little besides its work never leaves it") {
  for (const double extra : {0.0, 0.5e-3}) {  // periods of at most 1.5 times the ranks' work
    SoloRun run;
    for (int e = 0; e < 300; ++e) REQUIRE_FALSE(alone(execute(run, 1000, 2, extra, 0)));
  }
}

TEST_CASE("equal blocks, a fixed split and DSM_LB_SOLO=0 keep every rank in the loop") {
  for (int variant = 0; variant < 3; ++variant) {
    SoloRun run;
    run.m.opt.policy = variant == 0 ? Policy::static_blocks : Policy::locality;
    if (variant == 1) run.m.opt.shares = {0.5, 0.5};
    if (variant == 2) run.m.opt.solo = false;
    for (int e = 0; e < 300; ++e) REQUIRE_FALSE(alone(execute(run, 1000, 2, 4e-3, 0)));
  }
}
