// The page-aware split of the hand-parallelized versions: blocks tile the range, and
// boundaries sit on page starts when one is near the even split point.
#include <catch2/catch.hpp>

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
