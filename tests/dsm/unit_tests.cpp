// Unit tests of interval bookkeeping: runs, the log, ordering, and the wire decoders.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <random>

#include "intervals.hpp"

using namespace dsm::proto;

namespace {

Interval make(std::uint32_t proc, std::uint32_t idx, dsm::mem::VectorTime vt, std::vector<PageRun> runs = {{0, 1, 0}}) {
  return Interval{proc, idx, std::move(vt), std::move(runs)};
}

}  // namespace

TEST_CASE("pages become maximal runs split by the whole flag") {
  std::vector<std::uint32_t> pages{1, 2, 3, 7, 8, 9};
  std::vector<std::uint8_t> whole{0, 0, 1, 1, 1, 0};
  auto runs = to_runs(pages, whole);
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].first == 1);
  CHECK(runs[0].count == 2);
  CHECK(runs[1].first == 3);
  CHECK(runs[1].whole == 1);
  CHECK(runs[2].first == 7);
  CHECK(runs[2].count == 2);
  CHECK(runs[3].first == 9);
}

TEST_CASE("the log accepts intervals in order, ignores repeats and rejects gaps") {
  IntervalLog log(2);
  CHECK(log.add(make(1, 0, {0, 1})));
  CHECK_FALSE(log.add(make(1, 0, {0, 1})));
  CHECK_THROWS_AS(log.add(make(1, 2, {0, 3})), dsm::codec::DecodeError);
  CHECK(log.add(make(1, 1, {0, 2})));
  CHECK(log.vector_time() == dsm::mem::VectorTime{0, 2});
  CHECK(log.missing_for({0, 1}).size() == 1);
  CHECK(log.missing_for({0, 0}).size() == 2);
  log.clear();
  CHECK(log.known(1) == 2);
  CHECK(log.missing_for({0, 0}).empty());
}

TEST_CASE("application order extends happened-before and puts concurrent whole pages first") {
  IntervalLog log(3);
  log.add(make(0, 0, {1, 0, 0}));        // a
  log.add(make(1, 0, {1, 1, 0}));        // b: after a
  log.add(make(2, 0, {0, 0, 1}));        // c: concurrent with a and b
  log.add(make(2, 1, {1, 1, 2}));        // d: after everything
  std::vector<Notice> notices{{2, 1, false}, {1, 0, false}, {2, 0, true}, {0, 0, false}};
  auto order = application_order(log, notices);
  REQUIRE(order.size() == 4);
  CHECK((order[0].proc == 2 && order[0].idx == 0));  // the concurrent whole page comes first
  CHECK((order[1].proc == 0 && order[1].idx == 0));
  CHECK((order[2].proc == 1 && order[2].idx == 0));
  CHECK((order[3].proc == 2 && order[3].idx == 1));
}

TEST_CASE("application order is a linear extension for random histories") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint32_t P = 4;
    IntervalLog log(P);
    std::vector<dsm::mem::VectorTime> know(P, dsm::mem::VectorTime(P, 0));
    std::vector<Notice> all;
    for (int step = 0; step < 30; ++step) {
      std::uint32_t p = rng() % P;
      if (rng() % 3 == 0) {  // p learns everything q knew (an acquire)
        std::uint32_t q = rng() % P;
        dsm::mem::merge(know[p], know[q]);
        continue;
      }
      auto vt = know[p];
      std::uint32_t idx = vt[p];
      vt[p] = idx + 1;
      know[p] = vt;
      log.add(make(p, idx, vt));
      all.push_back({p, idx, rng() % 4 == 0});
    }
    auto order = application_order(log, all);
    REQUIRE(order.size() == all.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      for (std::size_t j = i + 1; j < order.size(); ++j) CHECK_FALSE(happened_before(log, order[j], order[i]));
  }
}

TEST_CASE("interval decoding rejects malformed input") {
  Interval in = make(1, 4, {2, 5}, {{10, 3, 1}});
  dsm::codec::Writer w;
  encode(w, in);
  auto good = w.take();
  {
    dsm::codec::Reader r(good);
    auto back = decode_interval(r, 2, 100);
    CHECK(back.proc == 1);
    CHECK(back.idx == 4);
    CHECK(back.runs.size() == 1);
    r.expect_end();
  }
  SECTION("truncated") {
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      dsm::codec::Reader r(std::span<const std::byte>(good).first(cut));
      CHECK_THROWS_AS(decode_interval(r, 2, 100), dsm::codec::DecodeError);
    }
  }
  SECTION("a page outside the heap") {
    dsm::codec::Reader r(good);
    CHECK_THROWS_AS(decode_interval(r, 2, 12), dsm::codec::DecodeError);
  }
  SECTION("an unknown rank") {
    dsm::codec::Reader r(good);
    CHECK_THROWS_AS(decode_interval(r, 1, 100), dsm::codec::DecodeError);
  }
  SECTION("a forged count cannot allocate") {
    dsm::codec::Writer f;
    f.put<std::uint32_t>(0xFFFFFFFFu);
    auto bad = f.take();
    dsm::codec::Reader r(bad);
    CHECK_THROWS_AS(decode_list(r, 2, 100), dsm::codec::DecodeError);
  }
}
