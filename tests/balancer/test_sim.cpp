// The simulator's model of work taken inside an execution (sim.hpp), and the decision
// module's adoption of what ran.
#include <catch2/catch.hpp>

#include "decide.hpp"
#include "sim.hpp"

#include <algorithm>
#include <numeric>

using namespace dsm::lb;

namespace {

SimConfig small_config(bool take) {
  SimConfig c;
  c.ranks = 4;
  c.iterations = 4096;
  c.row_bytes = 1024;  // four iterations a page: cuts fall on multiples of 4
  c.take = take;
  return c;
}

// Span seconds of every rank's spans at its share (no pages held yet).
std::vector<std::vector<double>> seconds_at(const SimConfig& c, const Assignment& a, const std::vector<double>& share) {
  std::vector<std::vector<double>> s(a.size());
  for (std::size_t r = 0; r < a.size(); ++r)
    for (const Span& sp : a[r]) s[r].push_back(c.iteration_seconds * static_cast<double>(sp.size()) / share[r]);
  return s;
}

long ran_iterations(const ExecutionRun& run, std::size_t r) {
  long n = 0;
  for (const Span& s : run.ran[r]) n += s.size();
  return n;
}

// Every iteration of [0, n) ran exactly once, by some rank.
void check_each_once(const ExecutionRun& run, long n) {
  std::vector<Span> all;
  for (const auto& spans : run.ran) all.insert(all.end(), spans.begin(), spans.end());
  std::sort(all.begin(), all.end(), [](const Span& x, const Span& y) { return x.begin < y.begin; });
  long next = 0;
  for (const Span& s : all) {
    REQUIRE(s.begin == next);
    REQUIRE(s.end > s.begin);
    next = s.end;
  }
  REQUIRE(next == n);
}

}  // namespace

TEST_CASE("sim: a rank that ran out takes the tail of a slow rank's block, each iteration once", "[sim]") {
  const std::vector<double> share{1, 1, 1, 0.25};
  SimConfig off = small_config(false), on = small_config(true);
  const Geometry g = sim_geometry(on);
  const Assignment a = equal_blocks(on.iterations, on.ranks);
  const ExecutionRun alone = run_execution(off, g, a, share, seconds_at(off, a, share));
  const ExecutionRun taking = run_execution(on, g, a, share, seconds_at(on, a, share));
  check_each_once(alone, on.iterations);
  check_each_once(taking, on.iterations);
  CHECK(alone.takes == 0);
  CHECK(ran_iterations(alone, 3) == 1024);
  CHECK(taking.takes > 0);
  CHECK(ran_iterations(taking, 3) < 1024);
  CHECK(taking.iterations_taken >= 1024 - ran_iterations(taking, 3));
  CHECK(taking.seconds < 0.6 * alone.seconds);
  // Taken chunks are cut at page boundaries of the written array (4 iterations here).
  for (std::size_t r = 0; r < 3; ++r)
    for (const Span& s : taking.ran[r])
      if (s.begin >= 3072) CHECK(s.begin % 4 == 0);
}

TEST_CASE("sim: a take that would end later than the victim alone is not made", "[sim]") {
  const std::vector<double> share{1, 1, 1, 0.5};
  SimConfig c = small_config(true);
  c.take_seconds = 1;  // far longer than the whole execution
  const Geometry g = sim_geometry(c);
  const Assignment a = equal_blocks(c.iterations, c.ranks);
  const ExecutionRun run = run_execution(c, g, a, share, seconds_at(c, a, share));
  CHECK(run.takes == 0);
  CHECK(ran_iterations(run, 3) == 1024);
  CHECK(run.seconds == Approx(1024 * c.iteration_seconds / 0.5));
}

TEST_CASE("sim: a victim that hardly runs keeps no more than the chunk it started", "[sim]") {
  const std::vector<double> share{1, 1, 1, 0.001};
  const SimConfig c = small_config(true);
  const Geometry g = sim_geometry(c);
  const Assignment a = equal_blocks(c.iterations, c.ranks);
  const ExecutionRun run = run_execution(c, g, a, share, seconds_at(c, a, share));
  check_each_once(run, c.iterations);
  CHECK(ran_iterations(run, 3) <= 1024 / own_chunks);
}

TEST_CASE("sim: taking follows loads that turn at scale, where changes between executions cannot", "[sim]") {
  SimConfig c;
  c.ranks = 64;
  c.iterations = 65536;
  c.load = Load::onoff;
  c.executions = 200;
  const SimResult between = simulate(c, Policy::automatic);
  c.take = true;
  const SimResult inside = simulate(c, Policy::automatic);
  CHECK(inside.takes > 0);
  CHECK(inside.efficiency > between.efficiency + 0.2);
  CHECK(inside.efficiency >= 0.85);
  // Takes cost more than they save when they take longer than an execution: none pays.
  c.take_seconds = 1;
  const SimResult dear = simulate(c, Policy::automatic);
  CHECK(dear.takes == 0);
}

TEST_CASE("sim: under a constant load what ran becomes the split, and little is taken after", "[sim]") {
  SimConfig c;
  c.ranks = 8;
  c.iterations = 65536;
  c.load = Load::constant;
  c.take = true;
  c.executions = 20;
  const SimResult early = simulate(c, Policy::static_blocks);
  c.executions = 300;
  const SimResult whole = simulate(c, Policy::static_blocks);
  // Once what ran is the split, an execution takes a fraction of what the first 20 took
  // (the rest follows the timing noise).
  const long later = whole.iterations_taken - early.iterations_taken;
  CHECK(static_cast<double>(later) / 280 < 0.5 * static_cast<double>(early.iterations_taken) / 20);
  CHECK(static_cast<double>(later) / 280 < 0.01 * static_cast<double>(c.iterations));
  CHECK(whole.efficiency > 0.9);
}

TEST_CASE("decide: spans that ran become the site's, and their figures are taken in", "[sim]") {
  SiteModel m;
  m.opt.policy = Policy::static_blocks;
  const Geometry g;
  next_execution(m, 100, 2, nullptr, g, 0);
  REQUIRE(m.assign == Assignment{{{0, 50}}, {{50, 100}}});
  adopt_ran(m, {{{0, 30}, {30, 50}, {80, 100}}, {{50, 80}}});
  CHECK(m.assign == Assignment{{{0, 50}, {80, 100}}, {{50, 80}}});
  std::vector<RankFigures> figs(2);
  figs[0].wall = {0.5, 0.2};
  figs[0].cpu = {0.5, 0.2};
  figs[1].wall = {0.3};
  figs[1].cpu = {0.3};
  // Figures that do not describe the site's spans are dropped; these are taken in (the
  // site's clock counts the slowest rank's time in its ranges).
  const double before = m.clock;
  next_execution(m, 100, 2, &figs, g, 0);
  CHECK(m.clock == Approx(before + 0.7));
  // Another rank count is not a run of this site: nothing changes.
  adopt_ran(m, {{{0, 100}}});
  CHECK(m.assign == Assignment{{{0, 50}, {80, 100}}, {{50, 80}}});
}
