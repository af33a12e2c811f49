// Blocks of a pipelined nest: dealt in turn, sized by speed, covering every row once.
#include <catch2/catch.hpp>

#include "pipeline_blocks.hpp"

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

TEST_CASE("pipeline blocks: a rank that left gets no rows, and one back unmeasured the mean share") {
  const std::vector<double> speeds{1.0, 0.4, 1.0};
  const std::vector<char> left{0, 1, 0};
  const BlockLayout out = deal_blocks(0, 300, speeds, 4, left);
  CHECK(rows_per_rank(out, 0, 300, 3) == std::vector<long>{150, 0, 150});
  for (int owner : out.owners) CHECK(owner != 1);
  // Back, not measured yet (speed 0): the others' mean, so an equal share here.
  const std::vector<double> back{1.0, 0.0, 1.0};
  CHECK(rows_per_rank(deal_blocks(0, 300, back, 4), 0, 300, 3) == std::vector<long>{100, 100, 100});
  // Every rank out is every rank in.
  const std::vector<char> all{1, 1, 1};
  CHECK(rows_per_rank(deal_blocks(0, 300, speeds, 4, all), 0, 300, 3) == rows_per_rank(deal_blocks(0, 300, speeds, 4), 0, 300, 3));
  // A change of its speed while it is out moves no row.
  CHECK_FALSE(shares_differ(speeds, std::vector<double>{1.0, 0.1, 1.0}, 0.03, left));
  CHECK(shares_differ(speeds, std::vector<double>{1.0, 0.1, 1.0}, 0.03));
}
