#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "proto/vclock.hpp"

using namespace dsm::proto;

namespace {

// A causal history: `procs` ranks run intervals and now and then acquire from another rank
// (merging its time), as locks and barriers do.
std::vector<IntervalStamp> history(std::size_t procs, int steps, std::mt19937& rng) {
  std::vector<VectorTime> now(procs, VectorTime(procs, 0));
  std::vector<IntervalStamp> out;
  for (int s = 0; s < steps; ++s) {
    const std::size_t p = rng() % procs;
    if (rng() % 2) merge(now[p], now[rng() % procs]);
    ++now[p][p];
    out.push_back({static_cast<std::uint32_t>(p), now[p][p], now[p]});
  }
  return out;
}

}  // namespace

TEST_CASE("leq, happened_before and concurrent") {
  const VectorTime a{1, 0, 2}, b{1, 1, 2}, c{0, 3, 0};
  CHECK(leq(a, a));
  CHECK_FALSE(happened_before(a, a));
  CHECK(happened_before(a, b));
  CHECK_FALSE(happened_before(b, a));
  CHECK(concurrent(a, c));
  CHECK(concurrent(c, a));
  CHECK_FALSE(concurrent(a, b));
  CHECK_THROWS_AS(leq(a, VectorTime{1, 0}), std::invalid_argument);
}

TEST_CASE("ordering properties on random vector times") {
  std::mt19937 rng(11);
  std::vector<VectorTime> v(40, VectorTime(3));
  for (auto& t : v)
    for (auto& x : t) x = rng() % 3;
  for (const auto& a : v)
    for (const auto& b : v) {
      CHECK((leq(a, b) && leq(b, a)) == (a == b));  // antisymmetric
      CHECK(concurrent(a, b) == concurrent(b, a));
      CHECK(int(happened_before(a, b)) + int(happened_before(b, a)) + int(concurrent(a, b)) + int(a == b) == 1);
      VectorTime m = a;
      merge(m, b);
      CHECK((leq(a, m) && leq(b, m)));  // an upper bound
      for (const auto& c : v) {
        if (leq(a, b) && leq(b, c)) CHECK(leq(a, c));  // transitive
        if (leq(a, c) && leq(b, c)) CHECK(leq(m, c));  // the least one
      }
    }
}

TEST_CASE("happened_before_order is a deterministic linear extension") {
  std::mt19937 rng(12);
  for (int rep = 0; rep < 20; ++rep) {
    auto stamps = history(4, 60, rng);
    const auto order = happened_before_order(stamps);
    REQUIRE(order.size() == stamps.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      for (std::size_t j = i + 1; j < order.size(); ++j)
        CHECK_FALSE(happened_before(stamps[order[j]].time, stamps[order[i]].time));
    auto ids = [](const std::vector<IntervalStamp>& s, const std::vector<std::size_t>& o) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> r;
      for (std::size_t k : o) r.emplace_back(s[k].proc, s[k].interval);
      return r;
    };
    const auto expected = ids(stamps, order);
    std::shuffle(stamps.begin(), stamps.end(), rng);
    CHECK(ids(stamps, happened_before_order(stamps)) == expected);
  }
}
