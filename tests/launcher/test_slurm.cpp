// Unit tests of dsmrun's reading of a Slurm allocation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "slurm.hpp"

TEST_CASE("Slurm task counts expand, and ranks fill the nodes in block order up to the allocation") {
  using dsm::slurm::expand_counts;
  using dsm::slurm::place_ranks;
  CHECK(expand_counts("2") == std::vector<int>{2});
  CHECK(expand_counts("2(x3),1") == std::vector<int>{2, 2, 2, 1});
  CHECK(expand_counts("1,4(x2)") == std::vector<int>{1, 4, 4});
  for (const char* bad : {"", "x", "2(x)", "2(x0)", "2(x3", "-1", "2,,1", "2(y3)", "1,"})
    CHECK_THROWS_WITH(expand_counts(bad), Catch::Contains("malformed Slurm task counts"));

  const std::vector<std::string> nodes = {"a", "b", "c"};
  CHECK(place_ranks(5, nodes, {2, 2, 1}) == std::vector<std::string>{"a", "a", "b", "b", "c"});
  CHECK(place_ranks(3, nodes, {2, 2, 1}) == std::vector<std::string>{"a", "a", "b"});
  CHECK_THROWS_WITH(place_ranks(6, nodes, {2, 2, 1}),
                    Catch::Contains("-n 6 is more ranks than this Slurm allocation allows (5 tasks on 3 node(s))"));
  CHECK_THROWS_WITH(place_ranks(1, nodes, {2}), Catch::Contains("names 3 nodes but gives task counts for 1"));
}
