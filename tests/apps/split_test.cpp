// The page-aware split of the hand-parallelized versions: blocks tile the range, and
// boundaries sit on page starts when one is near the even split point.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

#include "../../apps/common/split.hpp"

TEST_CASE("page-aware blocks tile the rows in order") {
  for (int p = 1; p <= 7; ++p)
    for (long rows : {1L, 5L, 100L, 2048L}) {
      long next = 3;
      for (int r = 0; r < p; ++r) {
        app::Rows b = app::page_aware_rows(3, 3 + rows, 520, r, p);
        REQUIRE(b.lo == next);
        REQUIRE(b.hi >= b.lo);
        next = b.hi;
      }
      REQUIRE(next == 3 + rows);
    }
}

TEST_CASE("jacobi 2050 floats: the split at 2 and 4 ranks is page-aligned") {
  const std::size_t row = 2050 * sizeof(float);  // 512 rows are exactly 1025 pages
  CHECK(app::page_aware_rows(1, 2049, row, 0, 2).hi == 1024);
  CHECK(app::page_aware_rows(1, 2049, row, 1, 4).lo == 512);
  CHECK(app::page_aware_rows(1, 2049, row, 3, 4).lo == 1536);
}

TEST_CASE("no page start nearby: the even split stays") {
  // 3 ranks over 2048 rows of 8200 bytes: the nearest page-aligned rows (512, 1024) are far.
  CHECK(app::page_aware_rows(1, 2049, 2050 * sizeof(float), 1, 3).lo == 1 + 2048 / 3);
}

TEST_CASE("a fixed split by weights: rank r's rows in proportion to its weight") {
  // 1000 rows of 24 bytes at weights 3 and 1: the boundary at 750, or a page start within
  // 1/64 of a block of it.
  const std::vector<double> w{3, 1};
  const app::Rows first = app::page_aware_rows(0, 1000, 24, 0, 2, w), second = app::page_aware_rows(0, 1000, 24, 1, 2, w);
  CHECK(first.lo == 0);
  CHECK(first.hi == second.lo);
  CHECK(second.hi == 1000);
  CHECK(std::abs(first.hi - 750) <= 1000 / 2 / 64);
  // Equal weights are the even split.
  CHECK(app::page_aware_rows(1, 2049, 2050 * sizeof(float), 0, 2, {1, 1}).hi == 1024);
  // Blocks still tile the rows at any weights.
  for (const std::vector<double>& ws : {std::vector<double>{1, 2, 3}, std::vector<double>{0.1, 5, 0.1}}) {
    long next = 0;
    for (int r = 0; r < 3; ++r) {
      const app::Rows b = app::page_aware_rows(0, 777, 520, r, 3, ws);
      REQUIRE(b.lo == next);
      REQUIRE(b.hi >= b.lo);
      next = b.hi;
    }
    CHECK(next == 777);
  }
}
