// Blocks of a pipelined nest: dealt in turn, sized by speed, covering every row once.
#include <catch2/catch.hpp>

#include "pipeline_blocks.hpp"

#include <cstdint>
#include <limits>
#include <vector>

using dsm::lb::BlockLayout;
using dsm::lb::deal_blocks;
using dsm::lb::shares_differ;

namespace {

// Rows each rank gets, and a check that the blocks tile [lb, lb + rows) in order.
std::vector<long> rows_per_rank(const BlockLayout& l, long lb, long rows, std::size_t ranks) {
  std::vector<long> per(ranks, 0);
  REQUIRE(l.starts.front() == lb);
  REQUIRE(l.starts.back() == lb + rows);
  for (long k = 0; k < l.blocks(); ++k) {
    REQUIRE(l.starts[std::size_t(k + 1)] > l.starts[std::size_t(k)]);
    per[std::size_t(l.owners[std::size_t(k)])] += l.starts[std::size_t(k + 1)] - l.starts[std::size_t(k)];
  }
  return per;
}

}  // namespace

TEST_CASE("pipeline blocks: equal speeds deal equal blocks, a few per rank") {
  const std::vector<double> speeds{1, 1};
  const BlockLayout l = deal_blocks(1, 1998, speeds, 4);
  CHECK(l.blocks() == 8);
  const auto per = rows_per_rank(l, 1, 1998, 2);
  CHECK(per[0] == 999);
  CHECK(per[1] == 999);
}

TEST_CASE("pipeline blocks: a rank at half speed gets a third of the rows") {
  const std::vector<double> speeds{1.0, 0.5};
  const auto per = rows_per_rank(deal_blocks(0, 3000, speeds, 4), 0, 3000, 2);
  CHECK(per[0] == 2000);
  CHECK(per[1] == 1000);
}

TEST_CASE("pipeline blocks: unmeasured or broken speeds give equal shares") {
  for (const std::vector<double>& speeds : {std::vector<double>{0, 1, 1}, std::vector<double>{-1, 2, 2},
                                            std::vector<double>{1e300 * 1e300, 1, 1}}) {
    const auto per = rows_per_rank(deal_blocks(0, 300, speeds, 2), 0, 300, 3);
    CHECK(per == std::vector<long>{100, 100, 100});
  }
}

TEST_CASE("pipeline blocks: more ranks than rows, and a very slow rank, keep a row each") {
  const std::vector<double> eight(8, 1.0);
  const BlockLayout few = deal_blocks(1, 7, eight, 4);
  const auto per = rows_per_rank(few, 1, 7, 8);
  CHECK(per == std::vector<long>{1, 1, 1, 1, 1, 1, 1, 0});
  const std::vector<double> slow{1.0, 1e-9};
  const auto kept = rows_per_rank(deal_blocks(0, 100, slow, 2), 0, 100, 2);
  CHECK(kept[1] >= 1);
}

TEST_CASE("pipeline blocks: a new layout only for a real change of shares") {
  const std::vector<double> now{1, 1}, noise{1.0, 0.97}, half{1.0, 0.5};
  CHECK_FALSE(shares_differ(now, noise, 0.03));
  CHECK(shares_differ(now, half, 0.03));
  CHECK_FALSE(shares_differ(half, half, 0.0));
}

using dsm::lb::LayoutPlan;
using dsm::lb::LayoutTuning;
using dsm::lb::update_layout;

TEST_CASE("pipeline layout: a slow rank is tried without, and left out when that took less time") {
  const LayoutTuning tune{};
  LayoutPlan plan;
  // Sweep 3: the first speeds, rank 1 at 0.4 of rank 0: dealt again.
  CHECK(update_layout(plan, {10, 4}, 1.0, 3, tune));
  CHECK(plan.laid_out_at == 3);
  CHECK(plan.left_out == -1);
  // Sweep 4: that layout's first iteration, not steady yet.
  CHECK_FALSE(update_layout(plan, {10, 4}, 0.9, 4, tune));
  // Sweep 5: steady; the trial without rank 1 starts, judged against 0.8 s.
  CHECK(update_layout(plan, {10, 4}, 0.8, 5, tune));
  CHECK(plan.left_out == 1);
  REQUIRE(plan.probe);
  CHECK(plan.probe->before_s == 0.8);
  CHECK(plan.shares_basis(2) == std::vector<double>{10});
  CHECK(plan.job_rank(0) == 0);
  // Sweep 6: the trial's first iteration (pages move); sweep 7: its second took 0.6 s.
  CHECK_FALSE(update_layout(plan, {10, 0}, 1.5, 6, tune));
  CHECK_FALSE(update_layout(plan, {10, 0}, 0.6, 7, tune));
  CHECK(plan.left_out == 1);
  CHECK_FALSE(plan.probe);
  CHECK(plan.next_probe == 7 + tune.probe_every);
  // Rank 1 measures nothing while left out: its speed stays 4.
  CHECK_FALSE(update_layout(plan, {10, 0}, 0.6, 8, tune));
  CHECK(plan.basis == std::vector<double>{10, 4});
  // Every probe_every sweeps, a trial with every rank again.
  CHECK(update_layout(plan, {10, 0}, 0.6, 7 + tune.probe_every, tune));
  CHECK(plan.left_out == -1);
  REQUIRE(plan.probe);
  CHECK(plan.probe->left_out == 1);
}

TEST_CASE("pipeline layout: a trial that took longer is undone") {
  const LayoutTuning tune{};
  LayoutPlan plan;
  update_layout(plan, {10, 4}, 1.0, 3, tune);
  update_layout(plan, {10, 4}, 0.8, 4, tune);
  REQUIRE(update_layout(plan, {10, 4}, 0.8, 5, tune));
  REQUIRE(plan.left_out == 1);
  CHECK_FALSE(update_layout(plan, {10, 0}, 0.5, 6, tune));  // the move itself is not judged
  CHECK(update_layout(plan, {10, 0}, 0.9, 7, tune));
  CHECK(plan.left_out == -1);
  CHECK(plan.laid_out_at == 7);
  CHECK_FALSE(plan.probe);
  // No new trial before probe_every sweeps.
  for (std::uint64_t s = 8; s < 7 + tune.probe_every; ++s) CHECK_FALSE(update_layout(plan, {10, 4}, 0.8, s, tune));
  CHECK(update_layout(plan, {10, 4}, 0.8, 7 + tune.probe_every, tune));
  CHECK(plan.left_out == 1);
}

TEST_CASE("pipeline layout: ranks within probe_below of the fastest are all kept; broken figures count as nothing") {
  const LayoutTuning tune{};
  LayoutPlan plan;
  update_layout(plan, {10, 8, 9}, 1.0, 3, tune);
  for (std::uint64_t s = 4; s < 40; ++s) CHECK_FALSE(update_layout(plan, {10, 8, 9}, 1.0, s, tune));
  CHECK(plan.left_out == -1);
  CHECK_FALSE(plan.probe);
  // Three ranks, the middle one left out: the others keep their ranks.
  LayoutPlan three;
  update_layout(three, {10, 2, 9}, 1.0, 3, tune);
  update_layout(three, {10, 2, 9}, 1.0, 4, tune);
  REQUIRE(update_layout(three, {10, 2, 9}, 1.0, 5, tune));
  CHECK(three.left_out == 1);
  CHECK(three.shares_basis(3) == std::vector<double>{10, 9});
  CHECK(three.job_rank(0) == 0);
  CHECK(three.job_rank(1) == 2);
  LayoutPlan broken;
  update_layout(broken, {std::numeric_limits<double>::quiet_NaN(), -1}, 1.0, 3, tune);
  CHECK(broken.basis == std::vector<double>{0, 0});
}
